//! A rank-2 ALLOCATABLE module array in generated programs
//! ([`GenOptions::module_matrix`](super::GenOptions)).
//!
//! The module holds `mb(:, :)`, `double precision, allocatable`. `top`
//! allocates it at entry (`mb(n, 2)`, `mb(0:n, 3)` or by reallocation on
//! assignment from SPREAD) and deallocates it as its last statement, as
//! for the rank-1 module array of `random_fortran/module_alloc.rs`. Every
//! procedure with `n` reads its elements, columns and rows (functions
//! included: adjit passes it to them as a hidden argument); subroutines
//! and `top` write elements and columns, update it whole, and deallocate
//! and allocate it again with other bounds, so that what a callee leaves
//! is what the caller reads next.
//!
//! Invariant: while `top` runs past its entry, `mb` is allocated, covers
//! `1..n` by `1..2` and holds values of magnitude at most
//! [`BOUND`](super::BOUND). It is never an actual argument and ALLOCATED
//! is never asked of it.

use super::sections::bounded;
use super::{lit, Gen, PickStr, Scope, Stmt};

/// The name of the module matrix.
pub(super) const NAME: &str = "mb";

impl Gen<'_> {
    /// Maybe declares the module matrix (in `decls`).
    pub(super) fn module_matrix_decl(&mut self, decls: &mut Vec<String>) {
        if self.opt.module_matrix && self.rng.chance(50) {
            decls.push(format!("double precision, allocatable :: {NAME}(:, :)"));
            self.module_matrix = true;
        }
    }

    /// Lets a procedure with `n` read the module matrix (and write it
    /// outside functions).
    pub(super) fn module_matrix_scope(&mut self, scope: &mut Scope) {
        if self.module_matrix && scope.has_n {
            scope.matrix_reads = true;
            scope.matrix_writes = !scope.in_function;
        }
    }

    /// `top`'s allocation of the module matrix (values from `x` and `s`,
    /// no function call, since functions read it), and its release.
    pub(super) fn module_matrix_top(&mut self, init: &mut Vec<Stmt>) {
        if !self.module_matrix {
            return;
        }
        let e = self.top_source_value();
        init.push(Stmt::Keep(match self.rng.below(3) {
            0 => format!("allocate({NAME}(n, 2), source={e})"),
            1 => format!("allocate({NAME}(0:n, 3), source={e})"),
            _ => format!("{NAME} = spread(0.5d0*x(1:n), 2, 2) + 0.5d0*({e})"),
        }));
        self.release.push(Stmt::Keep(format!("deallocate({NAME})")));
    }

    /// A reference to the module matrix of rank 1 with `n` elements: a
    /// column or a row section.
    fn matrix_vector(&mut self) -> String {
        match self.rng.below(4) {
            0 => format!("{NAME}(1:n, 1)"),
            1 => format!("{NAME}(1:n, 2)"),
            2 => format!("{NAME}(n:1:-1, 2)"),
            _ => format!("{NAME}(1, 1:2)"),
        }
    }

    /// A statement on the module matrix (none when `scope` may not name
    /// it): a scalar from its elements or a reduction of it, and where it
    /// may be written an element, a column or the whole updated, or a
    /// reallocation.
    pub(super) fn module_matrix_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.matrix_reads || scope.writable.is_empty() {
            return Vec::new();
        }
        let (e, _) = self.expr(scope, 2);
        let i = self.index(scope);
        let j = self.rng.range(1, 2);
        if !scope.matrix_writes || self.rng.chance(40) {
            let t = self.rng.pick_str(&scope.writable);
            let v = self.matrix_vector();
            let read = match self.rng.below(5) {
                0 => format!("{NAME}({i}, {j})*({e})"),
                1 => format!("sum({v}) + {e}"),
                2 => format!("dot_product({v}, {v})*0.25d0 + {e}"),
                3 => format!("sum({NAME}(1:n, 1:2)*{NAME}(1:n, 2:1:-1)) - ({e})"),
                _ => format!("maxval({NAME}(1:n, {j})) - ({e})"),
            };
            let keep = !self.opt.passive_overwrite && scope.dummies_out.contains(&t);
            let rhs = bounded(&read);
            return vec![Stmt::Line(if keep {
                format!("{t} = 0.5d0*{t} + 0.5d0*({rhs})")
            } else {
                format!("{t} = {rhs}")
            })];
        }
        let e = bounded(&e);
        let c = self.rng.range(1, 7) as f64 / 8.0;
        let (c, d) = (lit(c), lit(1.0 - c));
        match self.rng.below(5) {
            0 => vec![Stmt::Line(format!(
                "{NAME}({i}, {j}) = {c}*{NAME}({i}, {j}) + {d}*({e})"
            ))],
            1 => vec![Stmt::Line(format!(
                "{NAME}(1:n, {j}) = {c}*{NAME}(n:1:-1, {}) + {d}*({e})",
                3 - j
            ))],
            2 => vec![Stmt::Line(format!("{NAME} = {c}*{NAME} + {d}*({e})"))],
            // Reallocation on assignment to other bounds, keeping 1..n by
            // 1..2 covered (vector subscripts are not supported: `mb(1:n,
            // [2, 1, 2])` is an error).
            3 => vec![Stmt::Line(format!(
                "{NAME} = {c}*spread({NAME}(1:n, 2), 2, 3) + {d}*({e})"
            ))],
            _ => {
                let bounds = match self.rng.below(3) {
                    0 => "n, 2",
                    1 => "0:n, 1:3",
                    _ => "-1:n + 1, 0:2",
                };
                // The new values cannot read the released matrix.
                // (no function call either: functions read it).
                let mut without = scope.clone();
                without.matrix_reads = false;
                let callees = std::mem::take(&mut self.callees);
                let (fresh, _) = self.expr(&without, 2);
                self.callees = callees;
                let fresh = bounded(&fresh);
                vec![
                    Stmt::Keep(format!("deallocate({NAME})")),
                    Stmt::Keep(format!("allocate({NAME}({bounds}), source={fresh})")),
                ]
            }
        }
    }
}
