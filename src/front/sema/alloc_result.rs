//! Functions whose result is an ALLOCATABLE array (`real(8), allocatable
//! :: r(:)`, any rank), sized inside the function: by ALLOCATE with
//! computed bounds, by a reallocating assignment (`r = a * x**2`) or grown
//! in a loop (`r = [r, v]`).
//!
//! The result is the function's last parameter, as for any array-valued
//! function ([`super::Sig::array_result`]), but passed by descriptor
//! ([`adjit_ir::Storage::AllocatableParam`], as an ALLOCATABLE dummy the
//! procedure allocates: [`super::alloc_param`]): the caller passes an
//! unallocated ALLOCATABLE temporary of the result's type and rank, the
//! function allocates it, and the caller reads the result's shape from the
//! temporary after the call. Every reference therefore goes through the
//! temporary ([`super::array_fn`]), the whole right-hand side of an
//! assignment included: the assignment of the temporary reallocates an
//! ALLOCATABLE target to the result's shape and checks an explicit-shape
//! one. The temporary is released after its statement.
//!
//! A function that returns without allocating its result fails with the
//! runtime error of an unallocated array ([`adjit_ir::RuntimeErrorKind::NotAllocated`])
//! located at the reference and naming it (`f()`); a
//! reference to the result inside the function before it is allocated is
//! the runtime error of any unallocated ALLOCATABLE array. Derivatives come
//! from the tangent and adjoint of descriptor arguments: the derivative
//! temporary is allocated with the primal one, and the adjoint saves the
//! storage each call allocates, so a function called twice with results of
//! different sizes in one evaluation sees the right storage in the reverse
//! sweep.

use super::super::ast::{Arg, Name};
use super::lowerer::{Lowerer, R};
use super::scope::{TypeInfo, VarDecl};
use adjit_ir::{Inst, Terminator, Type, VarId};

impl Lowerer<'_, '_> {
    /// Declares the result `v` of the function lowered, declared
    /// ALLOCATABLE (`decl`): a numeric or LOGICAL array of deferred shape,
    /// the last parameter, passed by descriptor. Anything else is a
    /// located error.
    pub(super) fn allocatable_result(
        &mut self,
        v: VarId,
        ti: &TypeInfo,
        decl: &VarDecl,
        name: &Name,
    ) -> R<()> {
        let span = decl.allocatable.unwrap_or(name.span);
        let dims = decl.dims.as_deref().unwrap_or(&[]);
        if ti.ty == Type::Char || !super::alloc_dummy::is_deferred_shape(dims) {
            return Err(self.err(
                span,
                format!(
                    "unsupported Fortran: ALLOCATABLE function result `{}` that is not a numeric or LOGICAL array of deferred shape (`{}(:)`)",
                    name.text, name.text
                ),
            ));
        }
        let pos = self.proc.var(v).storage.param_index().unwrap_or(0);
        self.descriptor_dummy(v, pos, dims.len());
        self.proc.array_result = Some(v);
        Ok(())
    }

    /// Calls the function `name` (unit `unit`), whose result is
    /// ALLOCATABLE, into a fresh unallocated ALLOCATABLE temporary of the
    /// result's type and rank, which the function allocates; a function
    /// that returns it unallocated fails with the runtime error of an
    /// unallocated array named `name()`, located at the reference.
    pub(super) fn call_into_allocatable_temp(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
        (ty, rank): (Type, usize),
    ) -> R<VarId> {
        let t = self.allocatable_temp("fres", ty, rank);
        self.call_with_result(unit, name, args, t)?;
        let allocated = self.val(Inst::Allocated(t), Type::Bool);
        let (ok, missing) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: allocated,
            then_dest: ok,
            else_dest: missing,
        });
        // The error names the reference (`f()`): an array of that name,
        // never allocated, read where the result is missing (the
        // temporary's name is how the statement refers to it).
        let reference = self.allocatable_temp("fres", ty, rank);
        self.proc.vars[reference.index()].name = format!("{}()", name.text);
        self.fail_unallocated(missing, reference, name.span);
        self.switch_to(ok);
        Ok(t)
    }
}
