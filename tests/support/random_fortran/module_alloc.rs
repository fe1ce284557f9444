//! ALLOCATABLE module arrays in generated programs
//! ([`GenOptions::module_allocatables`](super::GenOptions)).
//!
//! The module holds `ma(:)`, `double precision, allocatable`. `top`
//! allocates it at entry (with computed bounds: `ma(n)`, `ma(0:n + 1)`, or
//! by reallocation on assignment) and deallocates it as its last statement,
//! so that every call starts with it unallocated, as adjit requires of a
//! module allocatable under an entry called through the API (and as
//! gfortran then computes the same thing). In between, every procedure
//! with `n` reads it (functions included: adjit passes it to them as a
//! hidden argument) and the subroutines write its elements and sections,
//! update it whole, grow and shrink it by reallocation on assignment, and
//! deallocate and allocate it again with other bounds (the statements of
//! `random_fortran/alloc.rs`), so a callee's reallocation is what the
//! caller sees next.
//!
//! Invariant (as for allocatable locals): while `top` runs past its entry,
//! `ma` is allocated, covers `1..n` and holds values of magnitude at most
//! [`BOUND`](super::BOUND). It is never an actual argument (a callee
//! reallocating it would leave the dummy dangling, and one writing it would
//! alias the dummy); ALLOCATED is never asked of it (adjit refuses that
//! under an entry called through the API).

use super::sections::bounded;
use super::{Gen, Scope, Stmt};

/// The name of the module array.
pub(super) const NAME: &str = "ma";

impl Gen<'_> {
    /// Maybe declares the module array (in `decls`).
    pub(super) fn module_alloc_decl(&mut self, decls: &mut Vec<String>) {
        if self.opt.module_allocatables && self.rng.chance(60) {
            decls.push(format!("double precision, allocatable :: {NAME}(:)"));
            self.module_arrays.push(NAME.into());
        }
    }

    /// Puts the module array in the scope of a procedure with `n` (written
    /// and reallocated only outside functions).
    pub(super) fn module_alloc_scope(&mut self, scope: &mut Scope) {
        if self.module_arrays.is_empty() || !scope.has_n {
            return;
        }
        scope.arrays.push(NAME.into());
        if !scope.in_function {
            scope.writable_arrays.push(NAME.into());
            scope.module_alloc = true;
        }
    }

    /// A bounded value of `x` and `s` for `top` to fill module storage
    /// with (no function call, since functions read that storage).
    pub(super) fn top_source_value(&mut self) -> String {
        let reads = Scope {
            has_n: true,
            reals: vec!["s".into()],
            arrays: vec!["x".into()],
            indices: vec!["1".into(), "n".into()],
            ..Scope::default()
        };
        let callees = std::mem::take(&mut self.callees);
        let (e, _) = self.expr(&reads, 2);
        self.callees = callees;
        bounded(&e)
    }

    /// `top`'s allocation of the module array, first of its statements
    /// after the reset (values from `x` and `s`; no function call, since
    /// functions read the array), and its release, run last.
    pub(super) fn module_alloc_top(&mut self, init: &mut Vec<Stmt>) {
        if self.module_arrays.is_empty() {
            return;
        }
        let e = self.top_source_value();
        init.push(Stmt::Keep(match self.rng.below(3) {
            0 => format!("allocate({NAME}(n), source={e})"),
            1 => format!("allocate({NAME}(0:n + 1), source={e})"),
            _ => format!("{NAME} = 0.5d0*x(1:n) + 0.5d0*({e})"),
        }));
        self.release.push(Stmt::Keep(format!("deallocate({NAME})")));
    }

    /// A statement reallocating or updating the module array whole (none
    /// when `scope` may not).
    pub(super) fn module_alloc_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.module_alloc {
            return Vec::new();
        }
        let mut only = scope.clone();
        only.allocs = vec![NAME.into()];
        self.allocatable_stmt(&only)
    }
}
