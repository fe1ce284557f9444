//! A `dim=` argument that is not a constant (`s = sum(a, dim=k)`,
//! `cshift(x, 1, k)`): the array intrinsics are lowered for a constant
//! dimension (the shape of their result depends on it), so the statement
//! is lowered once per possible dimension, behind a branch on the value of
//! `dim` evaluated once before it; a value outside the array's dimensions
//! is a runtime error (`index out of bounds`). A block IF's condition, a
//! DO WHILE condition (the loop becomes `do; if (.not. c) exit; ...`) and
//! a SELECT CASE selector holding one are first assigned to a temporary,
//! and that assignment is dispatched.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Stmt, StmtKind};
use super::lowerer::{Lowerer, R};
use adjit_ir::{CmpOp, Inst, RuntimeErrorKind, Terminator, Type};

/// The 0-based position of the `dim` argument of the array intrinsics that
/// take one, and how many dimensions `dim` may name beyond the array's
/// rank (SPREAD adds one).
fn dim_position(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "sum" | "product" | "maxval" | "minval" | "norm2" | "any" | "all" | "count" | "maxloc"
        | "minloc" | "iall" | "iany" | "iparity" | "parity" => (1, 0),
        "findloc" | "cshift" => (2, 0),
        "eoshift" => (3, 0),
        "spread" => (1, 1),
        _ => return None,
    })
}

/// The position in `args` of the argument given by keyword `kw` or else
/// at `pos`.
fn arg_at(args: &[Arg], kw: &str, pos: usize) -> Option<usize> {
    match args
        .iter()
        .position(|a| a.keyword.as_ref().is_some_and(|k| k.text == kw))
    {
        Some(p) => Some(p),
        None => {
            let a = args.get(pos)?;
            if a.keyword.is_some() || args[..pos].iter().any(|a| a.keyword.is_some()) {
                return None;
            }
            Some(pos)
        }
    }
}

/// The sub-expression `i` of `e` in the order [`Lowerer::runtime_dim`]
/// numbers them (operands, constructor items, argument expressions).
fn child_mut(e: &mut Expr, i: usize) -> Option<&mut Expr> {
    match &mut e.kind {
        ExprKind::Unary(_, a) | ExprKind::Paren(a) => Some(a),
        ExprKind::Binary(_, a, b) => Some(if i == 0 { a } else { b }),
        ExprKind::ArrayConstructor(items) => items.get_mut(i),
        ExprKind::Apply { args, .. } => match &mut args.get_mut(i)?.value {
            ArgValue::Expr(x) => Some(x),
            ArgValue::Range { .. } => None,
        },
        _ => None,
    }
}

/// Where [`Lowerer::runtime_dim`] found a `dim`: the sub-expression taken
/// at each step down from the expression searched (see [`child_mut`]),
/// innermost first.
type DimPath = Vec<usize>;

/// The `dim` expression at `path` in `e`.
fn dim_at<'e>(e: &'e mut Expr, path: &[usize]) -> Option<&'e mut Expr> {
    path.iter().rev().try_fold(e, |e, &i| child_mut(e, i))
}

impl Lowerer<'_, '_> {
    /// The first reference (innermost first) in `e` to an array intrinsic
    /// whose `dim` is not a constant: where its `dim` expression is, its
    /// array argument, and the extra dimensions `dim` may name. Reads `e`
    /// only (probing a copy of each operand cost a statement's lowering
    /// a copy per level of its expression tree).
    fn runtime_dim(&self, e: &Expr) -> Option<(DimPath, Expr, usize)> {
        let below = |i: usize, x: &Expr| {
            self.runtime_dim(x).map(|(mut path, array, extra)| {
                path.push(i);
                (path, array, extra)
            })
        };
        let (name, args) = match &e.kind {
            ExprKind::Apply { name, args } => (name, args),
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => return below(0, a),
            ExprKind::Binary(_, a, b) => return below(0, a).or_else(|| below(1, b)),
            ExprKind::ArrayConstructor(items) => {
                return items.iter().enumerate().find_map(|(i, x)| below(i, x))
            }
            _ => return None,
        };
        let inner = args.iter().enumerate().find_map(|(i, a)| match &a.value {
            ArgValue::Expr(x) => below(i, x),
            ArgValue::Range { .. } => None,
        });
        if inner.is_some() {
            return inner;
        }
        let (pos, extra) = dim_position(&name.text)?;
        if !self.names_intrinsic(name) {
            return None;
        }
        let array = match args.first().map(|a| &a.value) {
            Some(ArgValue::Expr(x)) => x.clone(),
            _ => return None,
        };
        let at = arg_at(args, "dim", pos)?;
        let ArgValue::Expr(d) = &args[at].value else {
            return None;
        };
        if self.fold_quiet(d).is_ok() {
            return None;
        }
        Some((vec![at], array, extra))
    }

    /// True when a block IF's condition `c` is assigned to a temporary
    /// before the IF (`lift_condition`): it references an array-valued
    /// function, or an array intrinsic whose `dim` is not a constant (the
    /// assignment is then dispatched on it).
    pub(super) fn condition_lifted(&self, c: &Expr) -> bool {
        self.has_array_function(c) || self.runtime_dim(c).is_some()
    }

    /// The expressions of a statement a `dim` may be dispatched in.
    fn dispatch_exprs(s: &mut Stmt) -> Vec<&mut Expr> {
        match &mut s.kind {
            StmtKind::Assign { target, value } => vec![target, value],
            StmtKind::Call { args, .. } => args
                .iter_mut()
                .filter_map(|a| match &mut a.value {
                    ArgValue::Expr(x) => Some(x),
                    ArgValue::Range { .. } => None,
                })
                .collect(),
            StmtKind::Write { items, .. } => items.iter_mut().collect(),
            StmtKind::LogicalIf { cond, .. } => vec![cond],
            _ => Vec::new(),
        }
    }

    /// Lowers a statement with an array intrinsic whose `dim` is not a
    /// constant (see the module documentation); `Ok(false)` when it has
    /// none.
    pub(super) fn dispatch_dim(&mut self, s: &Stmt) -> R<bool> {
        // Reads the statement first (its own expressions include those
        // dispatched on): it is copied only when it holds such a `dim`.
        if !s
            .kind
            .own_exprs()
            .into_iter()
            .any(|e| self.runtime_dim(e).is_some())
        {
            return Ok(false);
        }
        let mut probe = s.clone();
        let found = Self::dispatch_exprs(&mut probe)
            .into_iter()
            .enumerate()
            .find_map(|(k, e)| {
                let (path, array, extra) = self.runtime_dim(e)?;
                let dim = dim_at(e, &path)?.clone();
                Some((k, path, dim, array, extra))
            });
        let Some((at, path, dim, array, extra)) = found else {
            return Ok(false);
        };
        let (ty, _) = self.type_and_rank(&dim)?;
        if !ty.is_int() {
            return Ok(false); // a MASK in DIM's place
        }
        let (_, rank) = self.type_and_rank(&array)?;
        let (k, t) = self.integer(&dim)?;
        let k = self.convert(k, t, Type::I64);
        // Values live in one block: the dimension is kept in a variable.
        let kept = self.temp("dim", Type::I64);
        self.emit(Inst::Store(kept, k), None);
        let end = self.block();
        for d in 1..=(rank + extra) as i64 {
            let mut copy = s.clone();
            copy.label = None;
            let slot = Self::dispatch_exprs(&mut copy)
                .into_iter()
                .nth(at)
                .and_then(|e| dim_at(e, &path));
            let Some(slot) = slot else {
                unreachable!("the copy has the reference found")
            };
            slot.kind = ExprKind::Int {
                value: d,
                kind: None,
            };
            let k = self.val(Inst::Load(kept), Type::I64);
            let c = self.int(d, Type::I64);
            let is = self.val(Inst::Cmp(CmpOp::Eq, k, c), Type::Bool);
            let (then_b, next) = (self.block(), self.block());
            self.terminate(Terminator::Branch {
                cond: is,
                then_dest: then_b,
                else_dest: next,
            });
            self.switch_to(then_b);
            let copy = std::rc::Rc::new(copy);
            self.lifted.push(copy.clone());
            self.stmts(std::slice::from_ref(&*copy));
            self.jump(end);
            self.switch_to(next);
        }
        self.span = dim.span;
        self.terminate(Terminator::Fail(RuntimeErrorKind::IndexOutOfBounds));
        self.switch_to(end);
        Ok(true)
    }
}
