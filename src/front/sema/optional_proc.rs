//! OPTIONAL dummy procedures (`procedure(f_iface), optional :: jac`).
//!
//! Dummy procedures are bound per instance (see [`super::dummy`]), so an
//! OPTIONAL one not given is bound to [`Target::Absent`]: PRESENT of it is
//! a constant of the instance, and a reference to it (which Fortran does
//! not allow) stops the program with a runtime error naming it.

use super::super::ast::Name;
use super::lowerer::{Lowerer, Operand};
use super::Target;
use adjit_ir::{Const, RuntimeErrorKind, Terminator, Type};

impl Lowerer<'_, '_> {
    /// PRESENT of the dummy procedure `name`, when it is one: whether this
    /// instance binds it (a template lowered for its diagnostics binds
    /// nothing and takes it as present).
    pub(super) fn present_procedure(&mut self, name: &Name) -> Option<Operand> {
        let t = self.dummy_target(&name.text)?;
        let present = t != Target::Absent;
        Some(Operand::Num(
            self.konst(Const::Bool(present), Type::Bool),
            Type::Bool,
        ))
    }

    /// A reference to the absent OPTIONAL dummy procedure `name`: fails at
    /// run time, then goes on lowering in an unreachable block.
    pub(super) fn absent_procedure(&mut self, name: &Name) {
        self.terminate(Terminator::Fail(RuntimeErrorKind::Stop(Some(format!(
            "the OPTIONAL dummy procedure `{}` is referenced but not present",
            name.text
        )))));
        let next = self.block();
        self.switch_to(next);
    }
}
