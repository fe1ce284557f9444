//! Derived types in generated programs
//! ([`GenOptions::derived_types`](super::GenOptions)).
//!
//! The module defines `type pt` (a real `a`, a real array `v(4)` and an
//! integer `k`, with default values) and a module variable `gp` (reset by `top` with a
//! structure constructor; `gp%a` is one more module scalar). Procedures
//! with `n` may hold two structures `p1`, `p2` and an array of structures
//! `q(2)`, set by constructors with active values, and then:
//! whole-structure assignment (`p2 = p1`, `q(2) = p1`), constructors,
//! calls of `stsub(n, din, dio)` (intent(in) and intent(inout) structure
//! dummies, component-wise updates) and of `stfun(n, d)`, and `%`
//! references anywhere an expression reads a scalar or an array
//! (`p1%a`, `q(2)%v(i)`, sections `p2%v(1:n)`, `sum(q%a)`).
//!
//! Invariant: every real component holds a value of magnitude at most
//! [`BOUND`](super::BOUND) and `k` is 0, 1 or 2.

use super::sections::bounded;
use super::{lit, Gen, PickStr, ProcSrc, Scope, Stmt};

/// The structures local to a procedure.
const LOCALS: [&str; 2] = ["p1", "p2"];

impl Gen<'_> {
    /// The type definition and module variable (added to `decls`), its
    /// reset (to `resets`), and the procedures taking structures.
    pub(super) fn derived_module(
        &mut self,
        decls: &mut Vec<String>,
        resets: &mut Vec<Stmt>,
    ) -> Vec<ProcSrc> {
        // Component defaults: `gp` starts as the reset leaves it.
        let (a, v) = (
            lit(super::constant(&mut self.rng)),
            lit(super::constant(&mut self.rng)),
        );
        decls.extend([
            "type pt".into(),
            format!("  double precision :: a = {a}"),
            format!("  double precision :: v(4) = {v}"),
            "  integer :: k = 1".into(),
            "end type pt".into(),
            "type(pt) :: gp".into(),
        ]);
        resets.push(Stmt::Line(format!("gp = pt({a}, [{v}, {v}, {v}, {v}], 1)")));
        self.globals.push("gp%a".into());
        let (c1, c2) = (
            lit(self.rng.range(1, 4) as f64 / 4.0),
            lit(self.rng.range(1, 4) as f64 / 8.0),
        );
        vec![
            ProcSrc {
                head: [
                    "subroutine stsub(n, din, dio)",
                    "  integer, intent(in) :: n",
                    "  type(pt), intent(in) :: din",
                    "  type(pt), intent(inout) :: dio",
                ]
                .map(String::from)
                .to_vec(),
                init: Vec::new(),
                body: Vec::new(),
                finish: vec![
                    Stmt::Line(format!(
                        "dio%a = 0.5d0*dio%a + 0.5d0*tanh(din%a*dio%v(1) + {c1})"
                    )),
                    Stmt::Line(
                        "dio%v(1:n) = 0.5d0*dio%v(1:n) + 0.5d0*sin(din%v(n:1:-1)*din%a)".into(),
                    ),
                    Stmt::Line("dio%k = mod(din%k + 1, 3)".into()),
                ],
                end: "end subroutine stsub".into(),
            },
            ProcSrc {
                head: [
                    "double precision function stfun(n, d)",
                    "  integer, intent(in) :: n",
                    "  type(pt), intent(in) :: d",
                ]
                .map(String::from)
                .to_vec(),
                init: Vec::new(),
                body: Vec::new(),
                finish: vec![Stmt::Line(format!(
                    "stfun = 4d0*tanh({c2}*(d%a*d%v(n) + sum(d%v(1:n)) + dble(d%k)))"
                ))],
                end: "end function stfun".into(),
            },
        ]
    }

    /// A structure constructor of `pt` with active values from `reads`.
    fn constructor(&mut self, reads: &Scope) -> String {
        let items: Vec<String> = (0..5).map(|_| bounded(&self.expr(reads, 1).0)).collect();
        let k = self.rng.below(3);
        format!("pt({}, [{}], {k})", items[0], items[1..].join(", "))
    }

    /// Maybe declares the structures `p1`, `p2` and `q(2)` of a procedure
    /// with `n`, set from `reads`, and adds their components to `scope`.
    pub(super) fn derived_locals(
        &mut self,
        scope: &mut Scope,
        reads: &Scope,
        head: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) {
        if !self.opt.derived_types || !scope.has_n || !self.rng.chance(50) {
            return;
        }
        let mut reads = reads.clone();
        reads.indices.retain(|i| i == "1" || i == "n");
        head.push("  type(pt) :: p1, p2, q(2)".into());
        for p in LOCALS {
            let c = self.constructor(&reads);
            init.push(Stmt::Keep(format!("{p} = {c}")));
        }
        init.push(Stmt::Keep("q(1) = p2".into()));
        let c = self.constructor(&reads);
        init.push(Stmt::Keep(format!("q(2) = {c}")));
        for p in ["p1", "p2", "q(1)", "q(2)"] {
            scope.reals.push(format!("{p}%a"));
            scope.writable.push(format!("{p}%a"));
            scope.arrays.push(format!("{p}%v"));
            scope.writable_arrays.push(format!("{p}%v"));
        }
        scope.structs = true;
    }

    /// A statement on the structures of `scope` (none when it has none).
    pub(super) fn derived_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.structs {
            return Vec::new();
        }
        let names = ["p1", "p2", "q(1)", "q(2)"].map(String::from);
        let a = self.rng.pick_str(&names);
        let mut b = self.rng.pick_str(&names);
        if a == b {
            b = if a == "p1" { "p2".into() } else { "p1".into() };
        }
        // The structures' own components are no actual arguments of
        // stsub.
        let mut reads = scope.clone();
        reads
            .reals
            .retain(|r| !r.contains('%') || r.starts_with("gp"));
        reads.arrays.retain(|r| !r.contains('%'));
        let not_both_elements = !(a.starts_with('q') && b.starts_with('q'));
        if self.rng.chance(15) {
            return self.struct_array_value_stmt(&reads);
        }
        match self.rng.below(5) {
            0 => vec![Stmt::Line(format!("{b} = {a}"))],
            1 => {
                let c = self.constructor(&reads);
                vec![Stmt::Line(format!("{b} = {c}"))]
            }
            2 if !scope.in_function && not_both_elements => {
                vec![Stmt::Line(format!("call stsub(n, {a}, {b})"))]
            }
            3 if !scope.writable.is_empty() => {
                let t = self.rng.pick_str(&scope.writable);
                if t.starts_with(&a) {
                    return Vec::new();
                }
                vec![Stmt::Line(format!(
                    "{t} = {}",
                    bounded(&format!("stfun(n, {a}) + 0.5d0*sum(q%a) + {b}%v(n)*{b}%a"))
                ))]
            }
            _ => vec![Stmt::Line(format!(
                "{b}%v(1:n) = 0.5d0*{a}%v(n:1:-1) + 0.5d0*tanh({a}%a*{b}%v(1:n))"
            ))],
        }
    }

    /// An array constructor of structures assigned to the array of
    /// structures `q` or to a section of it (`q = [p2, pt(...)]`,
    /// `q(2:1:-1) = [p1, p2]`), its items the local structures and
    /// constructors reading `reads`.
    fn struct_array_value_stmt(&mut self, reads: &Scope) -> Vec<Stmt> {
        let mut items = Vec::new();
        for _ in 0..2 {
            items.push(match self.rng.below(3) {
                0 => self.constructor(reads),
                _ => self.rng.pick_str(&LOCALS.map(String::from)),
            });
        }
        let target = if self.rng.chance(50) {
            "q"
        } else {
            "q(2:1:-1)"
        };
        vec![Stmt::Line(format!("{target} = [{}]", items.join(", ")))]
    }
}
