//! WHERE / ELSEWHERE and FORALL in generated programs
//! ([`GenOptions::masked_arrays`](super::GenOptions)).
//!
//! * `where (m1) ... elsewhere (m2) ... elsewhere ... end where` on a
//!   section of a writable array (or matrix column), the masks comparing
//!   active array expressions over sections of the target's length, the
//!   arms assigning bounded expressions of such sections (and of the
//!   target's own section at the same elements), and a nested WHERE under
//!   the first mask now and then.
//! * `forall (i = lo:hi[:st], mask(i)) t(i) = e(i)` on an array or a
//!   matrix column, `e` and the mask reading the index and active values.
//!
//! Validity: the masks and right-hand sides never read the assigned array
//! except at the element assigned (Fortran evaluates them before any
//! store; the lowering rejects the other cases), and they call no
//! generated function (FORALL needs PURE ones). Every mask decision is
//! folded into `trace` before the construct (`count` of each WHERE mask,
//! the indices where a FORALL mask holds), so finite differences see a
//! mask switch as a branch switch.

use super::sections::{base, bounded, CLASSES};
use super::{Gen, PickStr, Scope, Stmt};

impl Gen<'_> {
    /// A WHERE construct or a FORALL statement (none when `scope` has no
    /// `n` or cannot record decisions).
    pub(super) fn masked_stmt(&mut self, scope: &mut Scope) -> Vec<Stmt> {
        if !scope.has_n || !scope.may_trace || scope.writable_arrays.is_empty() {
            return Vec::new();
        }
        // No generated function calls inside (FORALL needs PURE ones).
        let callees = std::mem::take(&mut self.callees);
        let out = if self.rng.chance(55) {
            self.where_construct(scope)
        } else {
            self.forall(scope)
        };
        self.callees = callees;
        out
    }

    /// `scope` without the variable of array `t` (the target of a masked
    /// assignment; for a structure, all of its components), and, unless
    /// `components` (WHERE takes them), without structure components
    /// (FORALL is not given them).
    fn without(scope: &Scope, t: &str, components: bool) -> Scope {
        let root = |x: &str| x.split(['(', '%']).next().unwrap_or(x).to_string();
        let t = root(t);
        let mut reads = scope.clone();
        reads
            .arrays
            .retain(|a| root(a) != t && (components || !is_element_component(a)));
        reads.matrices.retain(|a| root(a) != t);
        reads.reals.retain(|r| {
            root(r) != t && (components || !r.split('%').next().unwrap_or(r).contains('('))
        });
        reads
    }

    /// A mask over sections of class `class` of `reads`.
    fn section_mask(&mut self, reads: &Scope, class: usize) -> Option<String> {
        let a = self.section_array(reads, class)?;
        let op = self.rng.pick_str(&[">", "<", ">=", "<="].map(String::from));
        let b = if self.rng.chance(50) {
            self.section_expr(reads, class, 1).0
        } else {
            self.expr(reads, 1).0
        };
        let m = format!("{a} {op} {b}");
        Some(if self.rng.chance(20) {
            let (c, _) = self.expr(reads, 1);
            format!("({m}) .and. ({c} > -1d0)")
        } else {
            m
        })
    }

    /// `target = ...` inside a WHERE: a bounded expression of sections,
    /// sometimes mixed with the target's own elements.
    fn where_assign(&mut self, target: &str, reads: &Scope, class: usize) -> Stmt {
        let (e, _) = self.section_expr(reads, class, 2);
        let rhs = bounded(&e);
        Stmt::Line(if self.rng.chance(40) {
            format!("{target} = 0.5d0*{target} + 0.5d0*({rhs})")
        } else {
            format!("{target} = {rhs}")
        })
    }

    /// A WHERE construct on a section of a writable array.
    fn where_construct(&mut self, scope: &Scope) -> Vec<Stmt> {
        let class = self.rng.below(CLASSES.len());
        let Some(target) = self.section(&scope.writable_arrays, &scope.matrices, class) else {
            return Vec::new();
        };
        let reads = Self::without(scope, base(&target), true);
        let Some(m1) = self.section_mask(&reads, class) else {
            return Vec::new();
        };
        let mut out = vec![self.trace(&format!("count({m1})"))];
        let mut body = vec![self.where_assign(&target, &reads, class)];
        if self.rng.chance(30) {
            if let Some(m3) = self.section_mask(&reads, class) {
                out.push(self.trace(&format!("count({m3})")));
                body.push(Stmt::Block {
                    head: format!("where ({m3})"),
                    body: vec![self.where_assign(&target, &reads, class)],
                    else_body: None,
                    tail: "end where".into(),
                });
            }
        }
        if self.rng.chance(60) {
            if self.rng.chance(50) {
                if let Some(m2) = self.section_mask(&reads, class) {
                    out.push(self.trace(&format!("count({m2})")));
                    body.push(Stmt::Keep(format!("elsewhere ({m2})")));
                    body.push(self.where_assign(&target, &reads, class));
                }
            }
            if self.rng.chance(60) {
                body.push(Stmt::Keep("elsewhere".into()));
                body.push(self.where_assign(&target, &reads, class));
            }
        }
        out.push(Stmt::Block {
            head: format!("where ({m1})"),
            body,
            else_body: None,
            tail: "end where".into(),
        });
        out
    }

    /// A FORALL statement with a mask over `1..n` (or part of it).
    fn forall(&mut self, scope: &mut Scope) -> Vec<Stmt> {
        let Some(i) = scope.free_loop_vars.pop() else {
            return Vec::new();
        };
        let target = if !scope.matrices.is_empty() && self.rng.chance(25) {
            let j = self.rng.range(1, 3);
            format!("{}({i}, {j})", self.rng.pick_str(&scope.matrices))
        } else {
            let arrays = element_free(scope);
            if arrays.is_empty() {
                scope.free_loop_vars.push(i);
                return Vec::new();
            }
            format!("{}({i})", self.rng.pick_str(&arrays))
        };
        let mut reads = Self::without(scope, base(&target), false);
        reads.indices.push(i.clone());
        reads.reals.push(target.clone());
        let (a, _) = self.expr(&reads, 2);
        let (b, _) = self.expr(&reads, 1);
        let mask = format!("{a} > {b}");
        let (e, _) = self.expr(&reads, 3);
        let range = self
            .rng
            .pick_str(&["1:n", "1:n:2", "2:n", "n:1:-1"].map(String::from));
        scope.free_loop_vars.push(i.clone());
        let record = self.trace(&i);
        vec![
            Stmt::Block {
                head: format!("do {i} = {}", range.replace(':', ", ")),
                body: vec![Stmt::Block {
                    head: format!("if ({mask}) then"),
                    body: vec![record],
                    else_body: None,
                    tail: "end if".into(),
                }],
                else_body: None,
                tail: "end do".into(),
            },
            Stmt::Line(format!(
                "forall ({i} = {range}, {mask}) {target} = {}",
                bounded(&e)
            )),
        ]
    }
}

/// The writable arrays of `scope` but structure components.
fn element_free(scope: &Scope) -> Vec<String> {
    scope
        .writable_arrays
        .iter()
        .filter(|a| !is_element_component(a))
        .cloned()
        .collect()
}

/// Whether array `a` is a structure component (`p1%v`, `q(1)%v`), which
/// FORALL is not given.
fn is_element_component(a: &str) -> bool {
    a.contains('%')
}
