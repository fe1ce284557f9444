//! Array constructors with array items or implied DO loops
//! (`[x, 2*x]`, `[(x(i), i = 1, n)]`) as operands of an array expression
//! (`reshape([x, 2*x], [n, 2])`, `3*[x(2:n), x(1)]`).
//!
//! An array expression is lowered element by element, and the element of
//! such a constructor at a given position is not known without streaming
//! its items. Such a constructor is therefore assigned, before its
//! statement, to an ALLOCATABLE rank-1 temporary (the assignment streams
//! the items, [`super::constructor`]), and the statement is lowered with
//! the constructor replaced by the temporary's name, like an array-valued
//! function reference ([`super::array_fn`]); the temporary is released
//! after the statement. A constructor that is the whole right-hand side
//! of an assignment is streamed into its target directly, and one given
//! to a user procedure gets its argument temporary
//! ([`super::section_arg`]): neither is lifted.
//!
//! The array a reduction runs over whose shape only constructors give
//! (`maxloc([a, b, c], dim=1)`, `findloc([2, 3, 5], k)`) has them lifted
//! the same way, even those of scalars.
//!
//! An array assigned a value whose shape only constructors give
//! (`a(:, 1) = [s, -s] / 2`: no other operand is an array) has its
//! constructors lifted too, even those of scalars, which an array
//! expression otherwise reads element by element: the temporary gives the
//! assignment its shape.

use super::super::ast::{ArgValue, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, R};
use adjit_ir::{Bound, Dim, Storage, VarId};
use smallvec::{smallvec, SmallVec};

impl Lowerer<'_, '_> {
    /// True when `e` has, below its top, a constructor to lift (see the
    /// module documentation).
    /// `all` (see [`Self::shaped_by_constructors`]): every constructor
    /// counts.
    pub(super) fn has_nested_streamed_constructor(&self, e: &Expr, all: bool) -> bool {
        self.children_of(e).into_iter().any(|x| {
            let all = all || self.reduced_constructors(e, x);
            self.lifts(x, all) || self.has_nested_streamed_constructor(x, all)
        })
    }

    /// True when `x`, an operand of `e`, is the array a reduction of `e`
    /// reduces (`maxloc([a, b, c], dim=1)`, `sum([a, b] * [1, 2])`) and
    /// only constructors give its shape: they are all lifted, which gives
    /// the reduction an array to run over.
    fn reduced_constructors(&self, e: &Expr, x: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Apply { name, .. }
            if super::intrinsics::is_reduction(&name.text) && self.names_intrinsic(name))
            && self.array_source(x).is_none()
            && (matches!(x.kind, ExprKind::ArrayConstructor(_)) || self.has_constructor(x))
    }

    /// True when `value`, assigned to the array `target`, has constructors
    /// below its top and no other array operand: only they give its shape,
    /// so all of them are lifted (see the module documentation).
    pub(super) fn shaped_by_constructors(&self, target: &Expr, value: &Expr) -> bool {
        self.rank_of(target) > 0
            && self.array_source(value).is_none()
            && self.has_constructor(value)
    }

    /// True when an operand of `e`, at any depth, is a constructor.
    fn has_constructor(&self, e: &Expr) -> bool {
        self.children_of(e)
            .into_iter()
            .any(|x| matches!(x.kind, ExprKind::ArrayConstructor(_)) || self.has_constructor(x))
    }

    /// True for a constructor lifted: one to stream, or any under `all`.
    fn lifts(&self, e: &Expr, all: bool) -> bool {
        self.is_streamed_constructor(e) || (all && matches!(e.kind, ExprKind::ArrayConstructor(_)))
    }

    /// Lifts the constructors below the top of `e` into temporaries
    /// (pushed on `temps`, to release after the statement); under `all`
    /// constructors of scalars too.
    pub(super) fn lift_nested_constructors(
        &mut self,
        e: &mut Expr,
        temps: &mut Vec<VarId>,
        all: bool,
    ) -> R<()> {
        let lifts_args = self.lifts_in_args(e);
        // Per argument: lift every constructor in it (see
        // `reduced_constructors`).
        let reduced: Vec<bool> = match &e.kind {
            ExprKind::Apply { args, .. } => args
                .iter()
                .map(|a| match &a.value {
                    ArgValue::Expr(x) => all || self.reduced_constructors(e, x),
                    ArgValue::Range { .. } => all,
                })
                .collect(),
            _ => Vec::new(),
        };
        match &mut e.kind {
            ExprKind::Apply { args, .. } if lifts_args => {
                for (a, all) in args.iter_mut().zip(reduced) {
                    if let ArgValue::Expr(x) = &mut a.value {
                        self.lift_constructor(x, temps, all)?;
                    }
                }
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.lift_constructor(a, temps, all)?,
            ExprKind::Binary(_, a, b) => {
                self.lift_constructor(a, temps, all)?;
                self.lift_constructor(b, temps, all)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// `e` itself lifted when it is a constructor to lift, else its
    /// operands.
    fn lift_constructor(&mut self, e: &mut Expr, temps: &mut Vec<VarId>, all: bool) -> R<()> {
        if !self.lifts(e, all) {
            return self.lift_nested_constructors(e, temps, all);
        }
        let Some(ty) = (match &e.kind {
            ExprKind::ArrayConstructor(items) => self.constructor_type(items)?,
            _ => None,
        }) else {
            return Err(self.err(e.span, "unsupported Fortran: empty array constructor"));
        };
        let t = self.temp("ctor", ty);
        let var = &mut self.proc.vars[t.index()];
        // An ALLOCATABLE array's dims give only its rank.
        var.dims = vec![Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(1)),
        }];
        var.storage = Storage::Allocatable;
        let text = var.name.clone();
        self.vars.insert(text.clone(), t);
        let span = e.span;
        let name = Expr {
            kind: ExprKind::Name(Name { text, span }),
            span,
        };
        let value = std::mem::replace(e, name.clone());
        // Kept for the lowerer's lifetime (expressions are keyed by
        // address).
        let assign = std::rc::Rc::new(Stmt {
            label: None,
            span,
            kind: StmtKind::Assign {
                target: name,
                value,
            },
        });
        self.lifted.push(assign.clone());
        self.stmt(&assign)?;
        temps.push(t);
        Ok(())
    }

    /// True for a constructor with an implied DO, a nested constructor or
    /// an array item.
    fn is_streamed_constructor(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::ArrayConstructor(items) if self.needs_streaming(items))
    }

    /// True when the arguments of `e` are operands of an array
    /// expression: a reference to an intrinsic, a section (whose
    /// constructor subscripts are vector subscripts) or an ELEMENTAL
    /// function (`convert(p, [(k, k = 1, 4)])` is elemental in its
    /// constructor), not another user procedure, which takes its own
    /// temporaries.
    fn lifts_in_args(&self, e: &Expr) -> bool {
        let ExprKind::Apply { name, .. } = &e.kind else {
            return false;
        };
        let elemental = || {
            self.prog
                .find_proc(self.unit, &name.text)
                .is_some_and(|u| self.prog.sigs[u].elemental && self.prog.sigs[u].result.is_some())
        };
        self.is_array_name(&name.text) || self.names_intrinsic(name) || elemental()
    }

    /// The operands of `e` searched for constructors to lift.
    fn children_of<'e>(&self, e: &'e Expr) -> SmallVec<[&'e Expr; 4]> {
        match &e.kind {
            ExprKind::Apply { args, .. } if self.lifts_in_args(e) => args
                .iter()
                .filter_map(|a| match &a.value {
                    ArgValue::Expr(x) => Some(x),
                    ArgValue::Range { .. } => None,
                })
                .collect(),
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => smallvec![&**a],
            ExprKind::Binary(_, a, b) => smallvec![&**a, &**b],
            _ => SmallVec::new(),
        }
    }
}
