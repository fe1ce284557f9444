//! ALLOCATABLE arrays in generated programs.
//!
//! Locals ([`GenOptions::allocatable_locals`](super::GenOptions)): a procedure with
//! `n` may hold `h(:)`, allocated at entry with computed bounds (`h(n)`,
//! `h(0:n+1)` or by assignment from an array of `n` elements), then
//! updated whole, grown and shrunk by reallocation on assignment,
//! deallocated and allocated again with other bounds, passed to callees,
//! and released at return. A third of them are SAVE allocatables,
//! released by DEALLOCATE as the procedure's last statement, so that every
//! call starts with them unallocated as in Fortran (returning one
//! allocated is a runtime error under an entry called through the API).
//!
//! Invariant kept by every statement (so that any subset the reducer leaves
//! is still valid): while the procedure runs, `h` is allocated, covers the
//! indices `1..n` and every element holds a value of magnitude at most
//! [`BOUND`](super::BOUND).
//!
//! Dummies ([`GenOptions::allocatable_dummies`](super::GenOptions)): a
//! subroutine may take `c1(:)`, `allocatable, intent(inout)`, given an
//! allocatable local (or dummy) of the caller, so it covers `1..n` with
//! whatever lower bound the caller allocated; the subroutine updates its
//! elements and the whole array (same shape) and passes it on, never
//! reallocating it. In programs of odd seeds the subroutines allocate their
//! ALLOCATABLE dummies (passed by descriptor): a statement at entry names
//! ALLOCATE (`if (.not. allocated(c1)) allocate(c1(n))`, never run), and
//! the dummy is reallocated like a local (by assignment, and by DEALLOCATE
//! and ALLOCATE with other bounds), keeping the invariant of locals, so
//! the caller sees the callee's allocation.

use super::{lit, Gen, Param, PickStr, Scope, Stmt};

/// The name of the allocatable local.
const NAME: &str = "h";

impl Gen<'_> {
    /// Maybe declares the allocatable local of a procedure with `n`: adds
    /// its declaration to `head`, its allocation to `init` (values from
    /// `reads`, an expression scope of what `init` may read) and the array
    /// to `scope`.
    pub(super) fn allocatable_local(
        &mut self,
        scope: &mut Scope,
        reads: &Scope,
        head: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) {
        if !scope.has_n || !self.rng.chance(50) {
            return;
        }
        // A third of them are SAVE allocatables (kept between calls,
        // passed by descriptor from the entry): released last, so the
        // procedure computes what a local would.
        if self.rng.below(3) == 0 {
            head.push(format!(
                "  double precision, allocatable, save :: {NAME}(:)"
            ));
            self.release.push(Stmt::Keep(format!("deallocate({NAME})")));
        } else {
            head.push(format!("  double precision, allocatable :: {NAME}(:)"));
        }
        // Loop indices of earlier initialisations are past their ranges.
        let mut reads = reads.clone();
        reads.indices.retain(|i| i == "1" || i == "n");
        let (e, _) = self.expr(&reads, 2);
        let e = bounded(&e);
        let first = match self.rng.below(3) {
            0 => format!("allocate({NAME}(n), source={e})"),
            1 => format!("allocate({NAME}(0:n + 1), source={e})"),
            // Reallocation on assignment from an unallocated state.
            _ => format!("{NAME} = 0.5d0*ga(1:n) + 0.5d0*({e})"),
        };
        init.push(Stmt::Keep(first));
        scope.arrays.push(NAME.into());
        scope.writable_arrays.push(NAME.into());
        scope.allocs.push(NAME.into());
    }

    /// A statement on an allocatable local of `scope` (none when there is
    /// none): a whole-array update, growth or shrinking by reallocation on
    /// assignment, or DEALLOCATE and ALLOCATE again with other bounds and
    /// new (active) values.
    pub(super) fn allocatable_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if scope.allocs.is_empty() {
            return Vec::new();
        }
        let h = self.rng.pick_str(&scope.allocs);
        let (e, _) = self.expr(scope, 2);
        let e = bounded(&e);
        // The values of a new allocation cannot read the released array.
        let mut without = scope.clone();
        without.arrays.retain(|a| !scope.allocs.contains(a));
        let (fresh, _) = self.expr(&without, 2);
        let fresh = bounded(&fresh);
        let c = self.rng.range(1, 7) as f64 / 8.0;
        match self.rng.below(5) {
            // |c h + (1 - c) e| <= BOUND.
            0 => vec![Stmt::Line(format!(
                "{h} = {}*{h} + {}*({e})",
                lit(c),
                lit(1.0 - c)
            ))],
            1 => vec![Stmt::Line(format!("{h} = [{h}(1:n), {e}]"))],
            2 => vec![Stmt::Line(format!("{h} = {h}(1:n)"))],
            3 => vec![Stmt::Line(format!(
                "{h} = [{e}, 0.5d0*{h}(1:n) + 0.5d0*({e})]"
            ))],
            _ => {
                let bounds = match self.rng.below(3) {
                    0 => "n",
                    1 => "0:n",
                    _ => "-1:n + 2",
                };
                vec![
                    Stmt::Keep(format!("deallocate({h})")),
                    Stmt::Keep(format!("allocate({h}({bounds}), source={fresh})")),
                ]
            }
        }
    }
}

impl Gen<'_> {
    /// Maybe makes the first dummy of a subroutine an ALLOCATABLE array.
    pub(super) fn maybe_allocatable_param(&mut self, params: &mut Vec<Param>) {
        if self.opt.allocatable_dummies && self.rng.chance(30) {
            params.insert(0, Param::AllocInOut);
        }
    }

    /// Declares the ALLOCATABLE dummy `c{k}` (dummy number `k`).
    pub(super) fn allocatable_dummy(
        &mut self,
        k: usize,
        scope: &mut Scope,
        head: &mut Vec<String>,
        names: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) {
        let v = format!("c{k}");
        head.push(format!(
            "  double precision, allocatable, intent(inout) :: {v}(:)"
        ));
        scope.arrays.push(v.clone());
        scope.writable_arrays.push(v.clone());
        scope.dummies_out.push(v.clone());
        scope.alloc_dummies.push(v.clone());
        if self.callee_allocates {
            init.push(Stmt::Keep(format!(
                "if (.not. allocated({v})) allocate({v}(n))"
            )));
            scope.allocs.push(v.clone());
        }
        names.push(v);
    }

    /// An actual argument for an ALLOCATABLE dummy: an allocatable local or
    /// dummy of `scope` not in `used` (None when there is none).
    pub(super) fn allocatable_actual(&mut self, scope: &Scope, used: &[String]) -> Option<String> {
        let cands: Vec<String> = scope
            .allocs
            .iter()
            .chain(&scope.alloc_dummies)
            .filter(|a| !used.contains(a))
            .cloned()
            .collect();
        (!cands.is_empty()).then(|| self.rng.pick_str(&cands))
    }
}

/// `e` squashed into `[-BOUND, BOUND]`.
fn bounded(e: &str) -> String {
    format!("4d0*tanh(0.25d0*({e}))")
}
