//! ALLOCATABLE dummy arguments (`real(8), allocatable, intent(inout) ::
//! a(:, :)`) whose allocation the procedure keeps as it finds it.
//!
//! Such a dummy is lowered as an ordinary array parameter that takes the
//! actual argument's bounds: the caller passes an allocated ALLOCATABLE
//! array (passing an unallocated one is the runtime error
//! [`adjit_ir::RuntimeErrorKind::NotAllocated`] at the call), the extents
//! of every dimension but the last as the hidden parameters of assumed-shape
//! dummies ([`super::extent_param`]) and each lower bound less one as a
//! hidden parameter [`super::lbound_param`] (0 from a host, so an entry
//! procedure's dummy has lower bounds 1). Inside, the dummy is allocated
//! throughout: `allocated(a)` is true, elements, sections, bounds and
//! whole-array assignment of a value of its shape work as for any array,
//! and derivative code treats it as any array argument.
//!
//! What would change the allocation is rejected: INTENT(OUT) (which
//! deallocates at entry), ALLOCATE, DEALLOCATE and MOVE_ALLOC of the dummy
//! are located compile-time errors, and a whole-array assignment of a value
//! of another shape (which Fortran 2003 answers by reallocating) stops
//! with a located runtime error instead of writing a wrong shape.

use super::super::ast::{DimSpec, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::{TypeInfo, VarDecl};
use adjit_ir::{
    BinaryOp, Bound, CallArg, Inst, RuntimeErrorKind, Storage, Terminator, Type, VarId,
};

/// True when declared dimensions are a deferred shape (`(:)`, `(:, :)`),
/// what an ALLOCATABLE dummy or function result must have.
pub(super) fn is_deferred_shape(dims: &[DimSpec]) -> bool {
    !dims.is_empty()
        && dims
            .iter()
            .all(|d| matches!(d, DimSpec::AssumedShape { lower: None }))
}

impl Lowerer<'_, '_> {
    /// Gives the parameter `v` of the ALLOCATABLE dummy `name` its shape:
    /// deferred extents (`a(:)`, `a(:, :)`) with the actual's lower bounds.
    pub(super) fn allocatable_dummy(
        &mut self,
        v: VarId,
        ti: &TypeInfo,
        decl: &VarDecl,
        name: &Name,
    ) -> R<()> {
        let span = decl.allocatable.unwrap_or(name.span);
        let dims = decl.dims.as_deref().unwrap_or(&[]);
        let deferred_string = super::alloc_param::is_deferred_string_decl(decl);
        if (ti.ty == Type::Char && !deferred_string) || !is_deferred_shape(dims) {
            return Err(self.err(
                span,
                format!(
                    "unsupported Fortran: ALLOCATABLE dummy argument `{}` that is not a numeric or LOGICAL array of deferred shape (`{}(:)`)",
                    name.text, name.text
                ),
            ));
        }
        if super::alloc_param::allocated_by_callee(self.prog, self.u(), &name.text) {
            let pos = self.proc.var(v).storage.param_index().unwrap_or(0);
            self.descriptor_dummy(v, pos, dims.len());
            return Ok(());
        }
        self.set_shape(v, ti, Some(dims), true)?;
        let mut shaped = self.proc.var(v).dims.clone();
        for (k, dim) in shaped.iter_mut().enumerate() {
            let Some(&lb) = self.vars.get(&super::lbound_param(&name.text, k + 1)) else {
                return Err(self.err(span, format!("`{}` has no lower bounds", name.text)));
            };
            let lower = Bound::Add(Box::new(Bound::Const(1)), Box::new(Bound::Var(lb)));
            if dim.upper.is_some() {
                // `lower + extent - 1`, the extent being a hidden parameter.
                let Some(&ext) = self.vars.get(&super::extent_param(&name.text, k + 1)) else {
                    return Err(self.err(span, format!("`{}` has no extents", name.text)));
                };
                dim.upper = Some(Bound::Sub(
                    Box::new(Bound::Add(
                        Box::new(lower.clone()),
                        Box::new(Bound::Var(ext)),
                    )),
                    Box::new(Bound::Const(1)),
                ));
            }
            dim.lower = lower;
        }
        self.proc.vars[v.index()].dims = shaped;
        Ok(())
    }

    /// True when `v` is an ALLOCATABLE dummy argument of the unit lowered.
    pub(super) fn is_allocatable_dummy(&self, v: VarId) -> bool {
        let var = self.proc.var(v);
        matches!(var.storage, Storage::Param(_))
            && super::declared_allocatable_rank(&self.u().scope, &var.name) > 0
            && self.u().ast.args.iter().any(|a| a.text == var.name)
    }

    /// The located error of an ALLOCATE, DEALLOCATE or MOVE_ALLOC (`what`)
    /// of the ALLOCATABLE dummy `name`, when it names one.
    pub(super) fn reject_dummy_allocation(&mut self, name: &Name, what: &str) -> R<()> {
        match self.resolve(name)? {
            Resolved::Var(v) if self.is_allocatable_dummy(v) => Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: {what} of the ALLOCATABLE dummy argument `{}` (a procedure may use its ALLOCATABLE dummies but not allocate or deallocate them)",
                    name.text
                ),
            )),
            _ => Ok(()),
        }
    }

    /// `allocated(a)` of an ALLOCATABLE dummy: always true (the caller
    /// passed an allocated array). None for other names.
    pub(super) fn dummy_allocated(&mut self, name: &Name) -> R<Option<adjit_ir::Value>> {
        match self.resolve(name)? {
            Resolved::Var(v) if self.is_allocatable_dummy(v) => {
                Ok(Some(self.konst(adjit_ir::Const::Bool(true), Type::Bool)))
            }
            _ => Ok(None),
        }
    }

    /// Before `a = value` for the whole ALLOCATABLE dummy `v`: a value of
    /// unknown shape (array constructor, array-valued function) is a
    /// located error, an array value of another shape than `a` stops with
    /// a located runtime error (Fortran would reallocate `a`).
    pub(super) fn check_dummy_assignment(&mut self, v: VarId, name: &Name, value: &Expr) -> R<()> {
        let unknown = matches!(value.kind, ExprKind::ArrayConstructor(_))
            || self.array_function(value).is_some();
        if unknown {
            return Err(self.err(
                value.span,
                format!(
                    "unsupported Fortran: an array constructor or array-valued function assigned to the whole ALLOCATABLE dummy argument `{}` (assign to `{}(:)`)",
                    name.text, name.text
                ),
            ));
        }
        let Some(src) = self.array_source(value) else {
            return Ok(());
        };
        let extents = self.extents(&src)?;
        let rank = self.proc.var(v).dims.len();
        if extents.len() != rank {
            return Err(self.err(
                value.span,
                format!(
                    "array of rank {} assigned to `{}`",
                    extents.len(),
                    name.text
                ),
            ));
        }
        let all = self.konst(adjit_ir::Const::Bool(true), Type::Bool);
        let same = self.same_extents(all, &extents, |this, d| {
            this.val(Inst::DimExtent(v, d as u32), Type::I64)
        });
        let (ok, bad) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: same,
            then_dest: ok,
            else_dest: bad,
        });
        self.switch_to(bad);
        self.terminate(Terminator::Fail(RuntimeErrorKind::Stop(Some(format!(
            "unsupported: assignment of another shape to the ALLOCATABLE dummy argument `{}` (reallocation)",
            name.text
        )))));
        self.switch_to(ok);
        Ok(())
    }

    /// The hidden arguments of the ALLOCATABLE dummy `dummy` (parameters
    /// `lbounds`) of `callee` for the actual argument `e`, which must name
    /// an ALLOCATABLE array of the dummy's rank: its lower bounds less one.
    pub(super) fn allocatable_actual(
        &mut self,
        e: &Expr,
        dummy: &str,
        lbounds: &[usize],
        callee: &Name,
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        let var = match &e.kind {
            ExprKind::Name(n) => match self.resolve(n)? {
                // Or the ALLOCATABLE component of a structure dummy passed
                // on (`a%values` of `a`, allocated by the caller): a
                // parameter here.
                Resolved::Var(v)
                    if self.proc.var(v).storage.is_allocatable()
                        || self.is_allocatable_dummy(v)
                        || (n.text.contains('%')
                            && self.proc.var(v).storage.param_index().is_some()) =>
                {
                    Some(v)
                }
                _ => None,
            },
            _ => None,
        };
        let Some(var) = var.filter(|&v| self.proc.var(v).dims.len() == lbounds.len()) else {
            return Err(self.err(
                e.span,
                format!(
                    "argument `{dummy}` of `{}` is ALLOCATABLE of rank {}: pass a whole ALLOCATABLE array of that rank",
                    callee.text,
                    lbounds.len()
                ),
            ));
        };
        for (d, &p) in lbounds.iter().enumerate() {
            let lower = self.val(Inst::DimLower(var, d as u32), Type::I64);
            let one = self.int(1, Type::I64);
            let shift = self.val(Inst::Binary(BinaryOp::Sub, lower, one), Type::I64);
            out[p] = Some(CallArg::Value(shift));
        }
        Ok(())
    }
}
