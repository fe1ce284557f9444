//! The store-versus-recompute rule for intermediate values of the reverse
//! sweep: cheap arithmetic is recomputed from the restored state, results of
//! library calls (`exp`, `log`, `sin`, `cos`, ...) are stored.
//!
//! The reverse sweep of an active assignment recomputes the part of the
//! statement's code list its local partials need ([`recomputed`]). A library
//! call there costs a call in the reverse sweep besides the one in the
//! forward sweep, and every value live across a call is spilled. Instead,
//! the forward sweep pushes the call's result on the Value stack right after
//! computing it, and the reverse sweep pops it (in reverse order, after the
//! statement's recorded old value and subscripts) in place of recomputing it.
//! The popped value is the one the forward sweep computed, so results are
//! the same bit for bit.
//!
//! Statements of one block often call the library on the same arguments
//! (Bratu's loop evaluates `exp(x(i)/(1.0+prm(2)*x(i)))` in three
//! consecutive statements). A stored result that a later statement of the
//! block computes again from unchanged variables ([`shared_results`]) is
//! pushed only once, by the last of those statements: its reverse sweep,
//! which comes first, pops the value into a local of the reverse sweep, and
//! the earlier statements read that local instead of popping their own copy.
//! The expressions are the same operations on the same values, so the local
//! holds their results bit for bit.
//!
//! The partial of a stored `sin` or `cos` is another library call on the
//! same operand (`cos` or `-sin`), which the reverse sweep would otherwise
//! make ([`companion`]). The forward sweep computes it too, right after the
//! stored result, and pushes it after that result: code generation fuses
//! the two calls into one `sincos` where the C library has it, and the
//! reverse sweep pops the companion and makes no call at all (Griewank's
//! `d = d*cos(a(i)/sqrt(dble(i)))`: one more tape word per trip, one
//! library call and the spills around it less per reversed trip). The same
//! operation on the same operand bits, so the same result bit for bit.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use adjit_ir::{
    BinaryOp, CmpOp, Const, Inst, Proc, Rounding, Storage, Type, UnaryOp, Value, VarId,
};

use super::normalize::{BlockShape, Statement};
use super::record::{is_active_statement, recomputed, PlanContext};

/// True for instructions compiled to a library call (costly to recompute).
fn is_library_call(inst: &Inst) -> bool {
    use UnaryOp::*;
    matches!(
        inst,
        Inst::Unary(
            Exp | Log
                | Log10
                | Sin
                | Cos
                | Tan
                | Asin
                | Acos
                | Atan
                | Sinh
                | Cosh
                | Tanh
                | Special(_),
            _
        )
    )
}

/// The float library-call results of `stmt` its reverse sweep needs, in
/// execution order: the forward sweep pushes each right after computing it,
/// the reverse sweep pops them instead of recomputing. Empty unless `stmt` is
/// an active assignment (only those are reversed with a recomputation).
pub(crate) fn stored_results(ctx: &PlanContext<'_>, stmt: &Statement) -> Vec<Value> {
    let proc = &ctx.norm.proc;
    if !matches!(
        proc.inst(stmt.effect).kind,
        Inst::Store(..) | Inst::StoreElem(..)
    ) || !ctx.store_library_results
        || !is_active_statement(ctx, stmt)
    {
        return Vec::new();
    }
    recomputed(ctx, stmt)
        .iter()
        .copied()
        .filter(|&v| {
            let data = proc.inst(v);
            data.ty.is_some_and(|t| t.is_float()) && is_library_call(&data.kind)
        })
        .collect()
}

/// The library call that the partial of a stored result takes on the same
/// operand, with that operand: `(Cos, a)` for `sin(a)` and `(Sin, a)` for
/// `cos(a)` (see the module documentation); `None` for other results. The
/// forward sweep pushes it after every pushed result that has one.
pub(crate) fn companion(inst: &Inst) -> Option<(UnaryOp, Value)> {
    match inst {
        Inst::Unary(UnaryOp::Sin, a) => Some((UnaryOp::Cos, *a)),
        Inst::Unary(UnaryOp::Cos, a) => Some((UnaryOp::Sin, *a)),
        _ => None,
    }
}

/// The stored library results of one block that share one push (see the
/// module documentation).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// A stored result that a later statement of the block computes again
    /// unchanged, mapped to the last such result: the one pushed and popped.
    served_by: HashMap<Value, Value>,
    /// The results pushed for others ([`Shared::served_by`]'s values).
    serving: HashSet<Value>,
    /// The local of the reverse sweep holding each serving result, once its
    /// reverse sweep has popped it.
    locals: HashMap<Value, VarId>,
}

impl Shared {
    /// True when the forward sweep pushes stored result `v` (it is not served
    /// by a later equal result).
    pub(crate) fn is_pushed(&self, v: Value) -> bool {
        !self.served_by.contains_key(&v)
    }

    /// True when `v`'s popped value must be kept for earlier equal results.
    pub(crate) fn is_serving(&self, v: Value) -> bool {
        self.serving.contains(&v)
    }

    /// The local holding the value of stored result `v` when a later equal
    /// result was pushed for it and already popped into a local.
    pub(crate) fn local_for(&self, v: Value) -> Option<VarId> {
        self.served_by
            .get(&v)
            .and_then(|keeper| self.locals.get(keeper))
            .copied()
    }

    /// Records the local into which serving result `v` was popped.
    pub(crate) fn set_local(&mut self, v: Value, var: VarId) {
        self.locals.insert(v, var);
    }
}

/// A pure expression by structure: equal keys on unchanged variables give
/// the same value bit for bit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Expr {
    /// A constant (floats by bit pattern) of a type.
    Const(Option<Type>, u64, u8),
    /// A scalar load.
    Load(VarId, Option<Type>),
    /// An element load.
    Elem(VarId, Vec<Expr>, Option<Type>),
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>, Option<Type>),
    /// A binary operation.
    Binary(BinaryOp, Box<Expr>, Box<Expr>, Option<Type>),
    /// A comparison.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// A conversion.
    Convert(Box<Expr>, Rounding, Option<Type>),
}

/// The structure of `v` and the variables it reads, or `None` for an
/// instruction other than constants, loads and arithmetic.
fn expr(proc: &Proc, v: Value, reads: &mut Vec<VarId>) -> Option<Expr> {
    let data = proc.inst(v);
    let ty = data.ty;
    let sub = |w: Value, reads: &mut Vec<VarId>| expr(proc, w, reads).map(Box::new);
    Some(match &data.kind {
        Inst::Const(c) => match *c {
            Const::Float(x) => Expr::Const(ty, x.to_bits(), 0),
            Const::Int(i) => Expr::Const(ty, i as u64, 1),
            Const::Bool(b) => Expr::Const(ty, b as u64, 2),
            Const::Char(c) => Expr::Const(ty, c as u64, 3),
        },
        Inst::Load(var) => {
            reads.push(*var);
            Expr::Load(*var, ty)
        }
        Inst::LoadElem(var, idx) => {
            reads.push(*var);
            let idx = idx
                .iter()
                .map(|&i| expr(proc, i, reads))
                .collect::<Option<Vec<_>>>()?;
            Expr::Elem(*var, idx, ty)
        }
        Inst::Unary(op, a) => Expr::Unary(*op, sub(*a, reads)?, ty),
        Inst::Binary(op, a, b) => Expr::Binary(*op, sub(*a, reads)?, sub(*b, reads)?, ty),
        Inst::Cmp(op, a, b) => Expr::Cmp(*op, sub(*a, reads)?, sub(*b, reads)?),
        Inst::Convert(a, r) => Expr::Convert(sub(*a, reads)?, *r, ty),
        _ => return None,
    })
}

/// True when a store to `written` may change what a load of `read` gives:
/// the same variable, or views of the same global (COMMON, EQUIVALENCE).
pub(crate) fn may_change(proc: &Proc, written: VarId, read: VarId) -> bool {
    if written == read {
        return true;
    }
    match (&proc.var(written).storage, &proc.var(read).storage) {
        (Storage::Global(g, _), Storage::Global(h, _)) => g == h,
        _ => false,
    }
}

/// Which stored results of the statements of `shape` a later statement of
/// the block computes again from unchanged variables (see the module
/// documentation). Any effect other than a store to a variable none of the
/// expressions reads (a call, I/O, an allocation) ends every match.
pub(crate) fn shared_results(ctx: &PlanContext<'_>, shape: &BlockShape) -> Shared {
    let proc = &ctx.norm.proc;
    // Open classes: an expression, the variables it reads, its results so far.
    let mut open: HashMap<Expr, (Vec<VarId>, Vec<Value>)> = HashMap::default();
    let mut shared = Shared::default();
    let close = |members: Vec<Value>, shared: &mut Shared| {
        if let Some((&keeper, rest)) = members.split_last() {
            if !rest.is_empty() {
                shared.serving.insert(keeper);
                for &m in rest {
                    shared.served_by.insert(m, keeper);
                }
            }
        }
    };
    for stmt in &shape.statements {
        for v in stored_results(ctx, stmt) {
            let mut reads = Vec::new();
            if let Some(key) = expr(proc, v, &mut reads) {
                open.entry(key)
                    .or_insert_with(|| (reads, Vec::new()))
                    .1
                    .push(v);
            }
        }
        let written = match proc.inst(stmt.effect).kind {
            Inst::Store(var, _) | Inst::StoreElem(var, ..) => Some(var),
            _ => None,
        };
        let ended: Vec<Expr> = open
            .iter()
            .filter(|(_, (reads, _))| {
                written.is_none_or(|w| reads.iter().any(|&r| may_change(proc, w, r)))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in ended {
            if let Some((_, members)) = open.remove(&key) {
                close(members, &mut shared);
            }
        }
    }
    for (_, (_, members)) in open {
        close(members, &mut shared);
    }
    shared
}
