//! ELEMENTAL functions of structures applied to arrays of structures and
//! their sections, directly or through operator interfaces.
//!
//! `c = a + b`, with `interface operator(+)` naming an ELEMENTAL function
//! of `type(vec)` and `a`, `b`, `c` arrays of `type(vec)`, is (after the
//! operator became a reference to its interface, `operators`) the
//! assignment of every element: here the statement becomes loops over the
//! target's positions, in array element order, each assigning
//! `c(i) = operator(+)(a(i), b(i))`. Every array operand of the value in
//! elemental position (an argument of an ELEMENTAL function, user or
//! intrinsic, an operand of an operator) is taken at the same position:
//! a whole array counted from its own lower bounds, a section
//! `cells(lo:hi:st, j)` at `cells(lo + (k - 1) st, j)`. The target is a
//! whole array or a section, of structures or of numbers (`e(1:3) =
//! energy(parts(1:6:2))` with `energy` returning a real); its extents
//! give the loops' trip counts (a section's `max(0, (hi - lo + st) /
//! st)`).
//!
//! Elements of the same position only are read, so a value reading its
//! target at the same positions (`c = t * c + a`, `cells(2:5) =
//! relax(cells(2:5))`) is safe; a value reading the target's array
//! otherwise (`cells(2:5) = relax(cells(1:4))`) would see elements already
//! assigned and is a located error, as is a scalar target.

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name, Stmt, StmtKind};
use super::intrinsics::is_elemental;
use super::lowerer::{Lowerer, Resolved, R};
use super::masked::same_args;
use adjit_ir::{Span, Type, Var};

/// An expression `name`.
pub(super) fn name_expr(text: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(Name {
            text: text.to_string(),
            span,
        }),
        span,
    }
}

/// An integer literal.
pub(super) fn int_expr(value: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Int { value, kind: None },
        span,
    }
}

/// The intrinsic reference `f(x, dim)`.
fn inquiry(f: &str, x: &str, dim: usize, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Apply {
            name: Name {
                text: f.to_string(),
                span,
            },
            args: [name_expr(x, span), int_expr(dim as i64, span)]
                .into_iter()
                .map(Arg::positional)
                .collect(),
        },
        span,
    }
}

/// `a op b`.
pub(super) fn binary(op: BinOp, a: Expr, b: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

/// The array a reference names, before any component (`cells` of
/// `cells%u`).
pub(super) fn base(name: &str) -> &str {
    name.split('%').next().unwrap_or(name)
}

/// An array taken element by element: an operand of the value in
/// elemental position, or the target.
pub(super) struct Operand {
    /// The array (a leaf component's full name for a component array).
    pub(super) name: Name,
    /// The subscripts of a section; `None` for the whole array.
    pub(super) subs: Option<Vec<Arg>>,
    /// Where the operand is written (it is found again by it).
    pub(super) span: Span,
}

impl Operand {
    /// The operand `e`, a whole array or a section of one, when it is not
    /// a component of an element (`a(i)%v`).
    pub(super) fn of(e: &Expr) -> Option<Operand> {
        let (name, subs) = match &e.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } if args.iter().all(|a| a.marked_part().is_none()) => {
                (name, Some(args.clone()))
            }
            _ => return None,
        };
        Some(Operand {
            name: name.clone(),
            subs,
            span: e.span,
        })
    }

    /// True when `other` is written as this operand is (the same array,
    /// the same subscripts).
    fn same(&self, other: &Operand) -> bool {
        self.name.text == other.name.text
            && match (&self.subs, &other.subs) {
                (None, None) => true,
                (Some(a), Some(b)) => same_args(a, b),
                _ => false,
            }
    }

    /// The `d`-th subscript's (1-based) lower end and stride of a range
    /// `range`: the written ones, else the array's lower bound and 1.
    fn start_stride(&self, range: &ArgValue, d: usize, span: Span) -> (Expr, Expr) {
        let x = &self.name.text;
        match range {
            ArgValue::Range { lo, stride, .. } => (
                lo.clone().unwrap_or_else(|| inquiry("lbound", x, d, span)),
                stride.clone().unwrap_or_else(|| int_expr(1, span)),
            ),
            ArgValue::Expr(_) => (inquiry("lbound", x, d, span), int_expr(1, span)),
        }
    }

    /// The element at the positions counted by the DO variables `k` (from
    /// 1, one per dimension of the operand).
    pub(super) fn element(&self, k: &[String], span: Span) -> Expr {
        let x = &self.name.text;
        let at = |lo: Expr, st: Expr, k: &str| {
            // lo + (k - 1) * st
            let off = binary(BinOp::Sub, name_expr(k, span), int_expr(1, span), span);
            binary(BinOp::Add, lo, binary(BinOp::Mul, off, st, span), span)
        };
        let args = match &self.subs {
            None => k
                .iter()
                .enumerate()
                .map(|(d, k)| {
                    Arg::positional(at(inquiry("lbound", x, d + 1, span), int_expr(1, span), k))
                })
                .collect(),
            Some(subs) => {
                let mut ks = k.iter();
                subs.iter()
                    .enumerate()
                    .map(|(d, a)| match &a.value {
                        ArgValue::Range { .. } => {
                            let (lo, st) = self.start_stride(&a.value, d + 1, span);
                            let k = ks.next().map_or("", String::as_str);
                            Arg::positional(at(lo, st, k))
                        }
                        ArgValue::Expr(_) => a.clone(),
                    })
                    .collect()
            }
        };
        Expr {
            kind: ExprKind::Apply {
                name: Name {
                    text: x.clone(),
                    span: self.name.span,
                },
                args,
            },
            span,
        }
    }

    /// The extent of the operand's `r`-th dimension (from 0): the array's
    /// size, or `max(0, (hi - lo + st) / st)` of the `r`-th range.
    pub(super) fn extent(&self, r: usize, span: Span) -> Expr {
        let x = &self.name.text;
        let Some(subs) = &self.subs else {
            return inquiry("size", x, r + 1, span);
        };
        let Some((d, range)) = subs
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a.value, ArgValue::Range { .. }))
            .nth(r)
        else {
            return int_expr(0, span);
        };
        let (lo, st) = self.start_stride(&range.value, d + 1, span);
        let hi = match &range.value {
            ArgValue::Range { hi: Some(hi), .. } => hi.clone(),
            _ => inquiry("ubound", x, d + 1, span),
        };
        let count = binary(
            BinOp::Div,
            binary(
                BinOp::Add,
                binary(BinOp::Sub, hi, lo, span),
                st.clone(),
                span,
            ),
            st,
            span,
        );
        Expr {
            kind: ExprKind::Apply {
                name: Name {
                    text: "max".to_string(),
                    span,
                },
                args: vec![Arg::positional(int_expr(0, span)), Arg::positional(count)],
            },
            span,
        }
    }
}

impl Lowerer<'_, '_> {
    /// The loops assigning element by element an assignment whose value
    /// applies ELEMENTAL functions to arrays of structures or their
    /// sections (see the module documentation); `None` for any other
    /// statement.
    pub(super) fn elemental_struct_assign(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        let StmtKind::Assign { target, value } = &s.kind else {
            return Ok(None);
        };
        if matches!(value.kind, ExprKind::Name(_) | ExprKind::Paren(_)) {
            return Ok(None);
        }
        let mut operands = Vec::new();
        if !self.elemental_operands(value, false, &mut operands)? {
            return Ok(None);
        }
        let unsupported = |what: &str| {
            format!(
                "unsupported Fortran: an ELEMENTAL function of structures applied to arrays of structures, assigned to {what}"
            )
        };
        let Some(t) = Operand::of(target) else {
            return Err(self.err(target.span, unsupported("a component of an element")));
        };
        let rank = match self.operand_rank(&t)? {
            Some(r) if r > 0 => r,
            _ => return Err(self.err(target.span, unsupported("a scalar"))),
        };
        for op in &operands {
            let r = self.operand_rank(op)?.unwrap_or(0);
            if r != rank {
                return Err(self.err(
                    op.span,
                    format!(
                        "`{}` (of rank {r}) does not conform with `{}` (of rank {rank})",
                        op.name.text, t.name.text
                    ),
                ));
            }
        }
        // The target's array read anywhere but at the same positions.
        let safe: Vec<Span> = operands
            .iter()
            .filter(|op| op.same(&t))
            .map(|op| op.span)
            .collect();
        if let Some(at) = reads(value, base(&t.name.text), &safe) {
            return Err(self.err(
                at,
                format!(
                    "unsupported Fortran: `{}` is read at other positions than the ELEMENTAL assignment of structures writes (assign the value to a temporary first)",
                    base(&t.name.text)
                ),
            ));
        }
        // One DO variable per dimension, counting positions from 1.
        let span = s.span;
        let counters: Vec<String> = (0..rank).map(|_| self.position_counter()).collect();
        let mut value = value.clone();
        substitute(&mut value, &operands, &counters, span);
        let mut body = vec![Stmt {
            kind: StmtKind::Assign {
                target: t.element(&counters, span),
                value,
            },
            ..s.clone()
        }];
        for (d, k) in counters.iter().enumerate() {
            body = vec![Stmt {
                kind: StmtKind::Do {
                    name: None,
                    var: Name {
                        text: k.clone(),
                        span,
                    },
                    start: int_expr(1, span),
                    end: t.extent(d, span),
                    step: None,
                    body,
                },
                ..s.clone()
            }];
        }
        Ok(body.pop())
    }

    /// A new integer temporary counting positions (a DO variable).
    pub(super) fn position_counter(&mut self) -> String {
        self.ntemps += 1;
        let n = format!("_elem{}", self.ntemps);
        let v = self.proc.add_var(Var::scalar(n.clone(), Type::I32));
        self.vars.insert(n.clone(), v);
        n
    }

    /// The rank of an operand: its array's, or its section's number of
    /// ranges; `None` when it names no array.
    pub(super) fn operand_rank(&mut self, op: &Operand) -> R<Option<usize>> {
        let rank = match self.resolve(&op.name)? {
            Resolved::Struct(st) => st.dims.as_ref().map_or(0, Vec::len),
            Resolved::Var(v) => self.proc.var(v).dims.len(),
            _ => return Ok(None),
        };
        if rank == 0 {
            return Ok(None);
        }
        Ok(Some(match &op.subs {
            None => rank,
            Some(subs) => {
                self.check_subscript_count(&op.name, rank, subs.len())?;
                subs.iter()
                    .filter(|a| matches!(a.value, ArgValue::Range { .. }))
                    .count()
            }
        }))
    }

    /// Collects the arrays and sections `e` takes in elemental position
    /// (`elemental_arg`: `e` is an argument of a user ELEMENTAL function);
    /// true when some array of structures or section of one is such an
    /// argument. The arguments of functions that are not ELEMENTAL are left
    /// alone (a located error at the call when they are arrays of
    /// structures).
    pub(super) fn elemental_operands(
        &mut self,
        e: &Expr,
        elemental_arg: bool,
        out: &mut Vec<Operand>,
    ) -> R<bool> {
        let (name, args) = match &e.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            ExprKind::Binary(..) | ExprKind::Unary(..) | ExprKind::Paren(_) => {
                let mut found = false;
                for c in e.kind.children() {
                    found |= self.elemental_operands(c, false, out)?;
                }
                return Ok(found);
            }
            _ => return Ok(false),
        };
        let whole_or_section = match &args {
            None => true,
            Some(a) => a.iter().any(|a| matches!(a.value, ArgValue::Range { .. })),
        };
        let elemental = match self.resolve(name)? {
            Resolved::Struct(st) if st.dims.is_some() => {
                if !whole_or_section {
                    return Ok(false);
                }
                return Ok(match Operand::of(e) {
                    Some(op) => {
                        out.push(op);
                        elemental_arg
                    }
                    None => false,
                });
            }
            Resolved::Var(v) => {
                if whole_or_section && !self.proc.var(v).dims.is_empty() {
                    out.extend(Operand::of(e));
                }
                return Ok(false);
            }
            Resolved::Proc(p) => self.prog.sigs[p].elemental,
            Resolved::Generic(specifics) => {
                let specifics = specifics.to_vec();
                let args = args.map_or(&[][..], Vec::as_slice);
                self.try_specific(name, &specifics, args)
                    .is_some_and(|p| self.prog.sigs[p].elemental)
            }
            _ => {
                if args.is_some() && self.names_intrinsic(name) && is_elemental(&name.text) {
                    let mut found = false;
                    for c in e.kind.children() {
                        found |= self.elemental_operands(c, false, out)?;
                    }
                    return Ok(found);
                }
                false
            }
        };
        let mut found = false;
        if elemental {
            for c in e.kind.children() {
                found |= self.elemental_operands(c, true, out)?;
            }
        }
        Ok(found)
    }
}

/// Where `e` reads the array `array` other than by the operands written at
/// `safe`.
pub(super) fn reads(e: &Expr, array: &str, safe: &[Span]) -> Option<Span> {
    if let ExprKind::Name(n) | ExprKind::Apply { name: n, .. } = &e.kind {
        if base(&n.text) == array {
            if safe.contains(&e.span) {
                return None;
            }
            return Some(e.span);
        }
    }
    e.kind
        .children()
        .into_iter()
        .find_map(|c| reads(c, array, safe))
}

/// Replaces every operand (found by where it is written) by its element
/// at the positions counted by `counters`.
pub(super) fn substitute(e: &mut Expr, operands: &[Operand], counters: &[String], span: Span) {
    if let Some(op) = operands.iter().find(|op| {
        op.span == e.span
            && matches!(&e.kind, ExprKind::Name(n) | ExprKind::Apply { name: n, .. } if n.text == op.name.text)
    }) {
        *e = op.element(counters, span);
        return;
    }
    for c in e.kind.children_mut() {
        substitute(c, operands, counters, span);
    }
}
