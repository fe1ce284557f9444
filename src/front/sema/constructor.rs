//! Array constructors whose items are not all scalars: implied DO loops
//! (`[(i*h, i = 1, n)]`, nested), nested constructors and array-valued
//! items, streamed element by element into their destination. An implied
//! DO variable is the constructor's own: its value outside is kept. As an
//! actual argument such a constructor fills an ALLOCATABLE temporary.

use super::super::ast::{Expr, ExprKind};
use super::lowerer::{Lowerer, R};
use adjit_ir::{BinaryOp, Bound, Dim, Inst, Storage, Type, Value, VarId};

impl Lowerer<'_, '_> {
    /// True when a constructor needs streaming (some item is not a
    /// scalar).
    pub(super) fn needs_streaming(&self, items: &[Expr]) -> bool {
        items.iter().any(|i| {
            matches!(
                i.kind,
                ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
            ) || self.array_source(i).is_some()
        })
    }

    /// Evaluates the items of a constructor in order, calling `store` with
    /// each value (of type `ty`) and its 0-based position (I64), counted
    /// in `counter` (an I64 temporary, 0 at the start).
    pub(super) fn stream_items(
        &mut self,
        items: &[Expr],
        ty: Type,
        counter: VarId,
        store: &mut dyn FnMut(&mut Self, Value, Value) -> R<()>,
    ) -> R<()> {
        self.walk_items(items, ty, counter, false, store)
    }

    /// A constructor with implied DO loops or array items (`[(i*h, i = 1,
    /// n)]`) as an actual argument: an ALLOCATABLE rank-1 temporary of its
    /// length counted at run time, filled before the call (and released
    /// after it with the other argument temporaries).
    pub(super) fn streamed_temp(&mut self, e: &Expr, items: &[Expr]) -> R<VarId> {
        let Some(ty) = self.constructor_type(items)? else {
            return Err(self.err(e.span, "unsupported Fortran: empty array constructor"));
        };
        let counter = self.temp("n", Type::I64);
        let zero = self.int(0, Type::I64);
        self.emit(Inst::Store(counter, zero), None);
        self.count_items(items, ty, counter)?;
        let t = self.temp("arg", ty);
        let var = &mut self.proc.vars[t.index()];
        // An ALLOCATABLE array's dims give only its rank.
        var.dims = vec![Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(1)),
        }];
        var.storage = Storage::Allocatable;
        let (one, n) = (
            self.int(1, Type::I64),
            self.val(Inst::Load(counter), Type::I64),
        );
        self.emit(Inst::Allocate(t, vec![(one, n)]), None);
        let zero = self.int(0, Type::I64);
        self.emit(Inst::Store(counter, zero), None);
        self.stream_items(items, ty, counter, &mut |this, x, pos| {
            let one = this.int(1, Type::I64);
            let i = this.val(Inst::Binary(BinaryOp::Add, pos, one), Type::I64);
            this.emit(Inst::StoreElem(t, vec![i], x), None);
            Ok(())
        })?;
        Ok(t)
    }

    /// The element type of a constructor's items (promoted as arithmetic
    /// does), `None` when it has none.
    pub(super) fn constructor_type(&mut self, items: &[Expr]) -> R<Option<Type>> {
        let mut ty: Option<Type> = None;
        for item in items {
            let t = match &item.kind {
                ExprKind::ArrayConstructor(inner) | ExprKind::ImpliedDo { items: inner, .. } => {
                    self.constructor_type(inner)?
                }
                _ => Some(self.type_and_rank(item)?.0),
            };
            if let Some(t) = t {
                ty = Some(ty.map_or(t, |u| super::consts::promote(u, t)));
            }
        }
        Ok(ty)
    }

    /// Adds the number of elements of a constructor's items to `counter`
    /// (an I64 temporary) without evaluating them: only implied DO bounds
    /// and the extents of array items are.
    pub(super) fn count_items(&mut self, items: &[Expr], ty: Type, counter: VarId) -> R<()> {
        self.walk_items(items, ty, counter, true, &mut |_, _, _| Ok(()))
    }

    /// [`Self::stream_items`], or [`Self::count_items`] when `count_only`
    /// (`store` is then never called).
    fn walk_items(
        &mut self,
        items: &[Expr],
        ty: Type,
        counter: VarId,
        count_only: bool,
        store: &mut dyn FnMut(&mut Self, Value, Value) -> R<()>,
    ) -> R<()> {
        for item in items {
            match &item.kind {
                ExprKind::ArrayConstructor(inner) => {
                    self.walk_items(inner, ty, counter, count_only, store)?
                }
                ExprKind::ImpliedDo { items: inner, .. } => {
                    self.implied_do(item, &mut |l| {
                        l.walk_items(inner, ty, counter, count_only, store)
                    })?;
                }
                _ => match (self.array_source(item), count_only) {
                    (Some(src), false) => {
                        let extents = self.extents(&src)?;
                        self.for_positions(&extents, &mut |this, pos| {
                            let x = this.at_element(&[(item, pos.to_vec())], |this, _| {
                                this.num_as(item, ty)
                            })?;
                            this.store_next(x, counter, store)
                        })?;
                    }
                    (None, false) => {
                        let x = self.num_as(item, ty)?;
                        self.store_next(x, counter, store)?;
                    }
                    (src, true) => {
                        let mut n = self.int(1, Type::I64);
                        if let Some(src) = src {
                            for e in self.extents(&src)? {
                                let e = self.val(Inst::Load(e), Type::I64);
                                n = self.val(Inst::Binary(BinaryOp::Mul, n, e), Type::I64);
                            }
                        }
                        let k = self.val(Inst::Load(counter), Type::I64);
                        let k = self.val(Inst::Binary(BinaryOp::Add, k, n), Type::I64);
                        self.emit(Inst::Store(counter, k), None);
                    }
                },
            }
        }
        Ok(())
    }

    /// Runs `body` once per iteration of the implied DO `item` (an
    /// [`ExprKind::ImpliedDo`]; nothing for another expression). Its
    /// variable is the constructor's own: its value before is restored
    /// after the loop.
    pub(super) fn implied_do(
        &mut self,
        item: &Expr,
        body: &mut dyn FnMut(&mut Self) -> R<()>,
    ) -> R<()> {
        let ExprKind::ImpliedDo {
            var,
            start,
            end,
            step,
            ..
        } = &item.kind
        else {
            return Ok(());
        };
        let v = self.var_of(var)?;
        let vt = self.proc.var(v).ty;
        let keep = self.temp("ido", vt);
        let old = self.val(Inst::Load(v), vt);
        self.emit(Inst::Store(keep, old), None);
        let mut result = Ok(());
        self.do_loop(None, var, start, end, step.as_deref(), &mut |l| {
            if let Err(e) = body(l) {
                result = Err(e);
            }
        })?;
        result?;
        let old = self.val(Inst::Load(keep), vt);
        self.emit(Inst::Store(v, old), None);
        Ok(())
    }

    /// Stores one value at the counter's position and advances it.
    fn store_next(
        &mut self,
        x: Value,
        counter: VarId,
        store: &mut dyn FnMut(&mut Self, Value, Value) -> R<()>,
    ) -> R<()> {
        let k = self.val(Inst::Load(counter), Type::I64);
        store(self, x, k)?;
        let one = self.int(1, Type::I64);
        let k1 = self.val(Inst::Binary(BinaryOp::Add, k, one), Type::I64);
        self.emit(Inst::Store(counter, k1), None);
        Ok(())
    }
}
