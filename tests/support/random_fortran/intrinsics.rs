//! Array intrinsics on active data in generated programs
//! ([`GenOptions::array_intrinsics`](super::GenOptions)).
//!
//! A subroutine (or `top`) with `n` holds a square local matrix `sq(n, n)`,
//! set at entry from active values, and the integer scratch arrays
//! `il(n)` and `im(n, n)`. Its statements may then
//!
//! * store in a scalar a reduction: SUM, PRODUCT, MAXVAL, MINVAL (with
//!   DIM=, MASK= or both, of rank-1 and rank-2 arrays), DOT_PRODUCT,
//!   NORM2, COUNT, an element picked by MAXLOC / MINLOC, MATMUL products;
//! * assign a section of `n` elements of a writable array from SUM /
//!   PRODUCT / MAXVAL / MINVAL / NORM2 / COUNT / MAXLOC with DIM=, MATMUL
//!   (matrix-vector, vector-matrix), CSHIFT / EOSHIFT, PACK (`vector=`),
//!   UNPACK, MERGE with an array mask, RESHAPE and SPREAD;
//! * assign `sq` from MATMUL (matrix-matrix), TRANSPOSE, SPREAD, CSHIFT /
//!   EOSHIFT with DIM=, RESHAPE (`order=`) and MERGE;
//! * branch on ANY / ALL of active comparisons.
//!
//! Operands are rank-1 expressions of `n` elements (sections of readable
//! arrays, forward, reversed or strided by one; a row or column of `sq`)
//! and `n`-by-`n` expressions (`sq`, its transpose, its rows reversed,
//! SPREAD of a rank-1 operand), combined element-wise.
//!
//! Derivatives must be defined where finite differences look: every
//! decision an intrinsic takes (each element of a mask, the location of
//! each extreme of MAXVAL / MINVAL / MAXLOC / MINLOC, with DIM= one per
//! column or row) is folded into `trace` before the statement, through
//! `il` and `im`, so that a tie or a mask switch within the step is a
//! branch switch the tester sees. NORM2 and PRODUCT only see values bounded
//! away from zero (`exp(0.25 e)`, `1 + 0.25 tanh(e)`). Every stored value
//! goes through a bounded function, so the invariant of
//! [`BOUND`](super::BOUND) holds.

use super::sections::{base, bounded};
use super::{lit, Gen, PickStr, Scope, Stmt};

/// The square local matrix.
const SQ: &str = "sq";

impl Gen<'_> {
    /// Maybe declares `sq(n, n)`, `il(n)` and `im(n, n)` in a procedure
    /// with `n` that records decisions, `sq` set from `reads` (the values
    /// `init` may read).
    pub(super) fn intrinsic_locals(
        &mut self,
        scope: &mut Scope,
        reads: &Scope,
        head: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) {
        if !self.opt.array_intrinsics || !scope.has_n || !scope.may_trace || !self.rng.chance(70) {
            return;
        }
        head.push(format!("  double precision :: {SQ}(n, n)"));
        head.push("  integer :: il(n), im(n, n)".into());
        // Loop indices of earlier initialisations are past their ranges.
        let mut reads = reads.clone();
        reads.indices.retain(|i| i == "1" || i == "n");
        let a = self.vector_leaf(&reads);
        let b = self.vector_leaf(&reads);
        let (e, _) = self.expr(&reads, 1);
        init.push(Stmt::Keep(format!(
            "{SQ} = {}",
            bounded(&format!(
                "spread({a}, 1, n) - 0.5d0*spread({b}, 2, n) + 0.25d0*sin({e})"
            ))
        )));
        scope.intrinsics = true;
    }

    /// A rank-1 operand of `n` elements.
    fn vector_leaf(&mut self, scope: &Scope) -> String {
        if scope.intrinsics && self.rng.chance(20) {
            return self.rng.pick_str(
                &["sq(:, 1)", "sq(:, n)", "sq(1, :)", "sq(n, n:1:-1)"].map(String::from),
            );
        }
        match self.section(&scope.arrays, &[], 0) {
            Some(s) => s,
            None => {
                let (e, _) = self.expr(scope, 1);
                format!("spread({e}, 1, n)")
            }
        }
    }

    /// An element-wise rank-1 expression of `n` elements, with its bound.
    pub(super) fn vector(&mut self, scope: &Scope, depth: usize) -> (String, f64) {
        if depth == 0 || self.rng.chance(30) {
            return (self.vector_leaf(scope), 4.0);
        }
        match self.rng.below(6) {
            0 => (format!("sin({})", self.vector(scope, depth - 1).0), 1.0),
            1 => (format!("tanh({})", self.vector(scope, depth - 1).0), 1.0),
            2 | 3 => {
                let (a, ba) = self.vector(scope, depth - 1);
                let (b, bb) = self.vector(scope, depth - 1);
                let op = if self.rng.chance(50) { "+" } else { "-" };
                (format!("({a} {op} {b})"), ba + bb)
            }
            4 => {
                let (a, ba) = self.vector(scope, depth - 1);
                let (e, be) = self.expr(scope, 1);
                (format!("({a})*({e})"), ba * be)
            }
            _ => {
                let (a, ba) = self.vector(scope, depth - 1);
                let (e, be) = self.expr(scope, 1);
                (format!("({a} + {e})"), ba + be)
            }
        }
    }

    /// An `n`-by-`n` operand.
    fn matrix_leaf(&mut self, scope: &Scope) -> String {
        match self.rng.below(6) {
            0 | 1 => SQ.into(),
            2 => format!("transpose({SQ})"),
            3 => format!("{SQ}(n:1:-1, :)"),
            4 => format!("spread({}, 1, n)", self.vector_leaf(scope)),
            _ => format!("spread({}, 2, n)", self.vector_leaf(scope)),
        }
    }

    /// An element-wise `n`-by-`n` expression, with its bound.
    fn matrix(&mut self, scope: &Scope, depth: usize) -> (String, f64) {
        if depth == 0 || self.rng.chance(30) {
            return (self.matrix_leaf(scope), 4.0);
        }
        match self.rng.below(5) {
            0 => (format!("sin({})", self.matrix(scope, depth - 1).0), 1.0),
            1 | 2 => {
                let (a, ba) = self.matrix(scope, depth - 1);
                let (b, bb) = self.matrix(scope, depth - 1);
                let op = if self.rng.chance(50) { "+" } else { "-" };
                (format!("({a} {op} {b})"), ba + bb)
            }
            3 => {
                let (a, ba) = self.matrix(scope, depth - 1);
                let (b, bb) = self.matrix(scope, depth - 1);
                (format!("({a})*({b})"), ba * bb)
            }
            _ => {
                let (a, _) = self.matrix(scope, depth - 1);
                (format!("tanh({a})"), 1.0)
            }
        }
    }

    /// A comparison of two operands (a rank-1 mask when `rank` is 1, else
    /// an `n`-by-`n` one).
    fn array_mask(&mut self, scope: &Scope, rank: usize) -> String {
        let op = self.rng.pick_str(&[">", "<", ">=", "<="].map(String::from));
        let (a, b) = if rank == 1 {
            let a = self.vector(scope, 1).0;
            let b = if self.rng.chance(50) {
                self.vector(scope, 1).0
            } else {
                self.expr(scope, 1).0
            };
            (a, b)
        } else {
            let a = self.matrix(scope, 1).0;
            let b = if self.rng.chance(50) {
                self.matrix(scope, 1).0
            } else {
                self.expr(scope, 1).0
            };
            (a, b)
        };
        format!("{a} {op} {b}")
    }

    /// Folds the `n` values of `il` into `trace` (one term per element:
    /// the sum identifies the values for every `n` from 1 to 4 when they
    /// are at most 4).
    fn trace_il(&mut self, value: &str) -> Vec<Stmt> {
        vec![
            Stmt::Line(format!("il = {value}")),
            self.trace("il(1) + 5*il(min(2, n)) + 25*il(min(3, n)) + 125*il(n)"),
        ]
    }

    /// Folds an `n`-by-`n` integer array of zeros and ones into `trace`.
    fn trace_im(&mut self, value: &str) -> Vec<Stmt> {
        let mut out = vec![Stmt::Line(format!("im = {value}"))];
        for j in ["1", "min(2, n)", "min(3, n)", "n"] {
            out.push(self.trace(&format!(
                "im(1, {j}) + 2*im(min(2, n), {j}) + 4*im(min(3, n), {j}) + 8*im(n, {j})"
            )));
        }
        out
    }

    /// Records a rank-1 mask.
    fn trace_mask(&mut self, mask: &str) -> Vec<Stmt> {
        self.trace_il(&format!("merge(1, 0, {mask})"))
    }

    /// Records an `n`-by-`n` mask.
    fn trace_mask2(&mut self, mask: &str) -> Vec<Stmt> {
        self.trace_im(&format!("merge(1, 0, {mask})"))
    }

    /// Records where the extremes of MAXVAL / MINVAL (`ext`) of the
    /// `n`-by-`n` `m` along `dim` lie.
    fn trace_extremes(&mut self, ext: &str, m: &str, dim: &str) -> Vec<Stmt> {
        let loc = if ext == "maxval" { "maxloc" } else { "minloc" };
        self.trace_il(&format!("{loc}({m}, dim={dim})"))
    }

    /// A DIM= argument: 1 or 2, as a constant or (a third of the time) as
    /// an expression adjit cannot fold (see `src/front/sema/dim_dispatch.rs`).
    fn dim_arg(&mut self) -> String {
        let dim = self.rng.range(1, 2) as usize;
        self.dim_of(dim)
    }

    /// `dim` as a constant or (a third of the time) as an expression of
    /// `n` of that value.
    fn dim_of(&mut self, dim: usize) -> String {
        match self.rng.below(6) {
            0 => format!("{dim} + mod(n, 1)"),
            1 => format!("{dim} - mod(n, 1)"),
            _ => dim.to_string(),
        }
    }

    /// A statement using array intrinsics (none when `scope` lacks `sq`).
    pub(super) fn intrinsic_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.intrinsics {
            return Vec::new();
        }
        match self.rng.below(10) {
            0..=3 => self.reduction_stmt(scope),
            4..=6 => self.vector_stmt(scope),
            7 | 8 => self.matrix_stmt(scope),
            _ => self.any_all_branch(scope),
        }
    }

    /// `t = bounded(reduction + e)` for a writable scalar `t`.
    fn reduction_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if scope.writable.is_empty() {
            return Vec::new();
        }
        let t = self.rng.pick_str(&scope.writable);
        let mut out = Vec::new();
        let (v, _) = self.vector(scope, 2);
        let (m, _) = self.matrix(scope, 2);
        let ext = self.rng.pick_str(&["maxval", "minval"].map(String::from));
        let loc = if ext == "maxval" { "maxloc" } else { "minloc" };
        let r = match self.rng.below(16) {
            0 => format!("sum({v})"),
            1 => format!("0.25d0*sum({m})"),
            2 => {
                let l = self.array_mask(scope, 1);
                out.extend(self.trace_mask(&l));
                format!("sum({v}, mask={l})")
            }
            3 => {
                let l = self.array_mask(scope, 2);
                out.extend(self.trace_mask2(&l));
                format!("0.25d0*sum({m}, {l})")
            }
            4 => {
                if self.rng.chance(50) {
                    format!("product(1d0 + 0.25d0*tanh({v}))")
                } else {
                    let l = self.array_mask(scope, 1);
                    out.extend(self.trace_mask(&l));
                    format!("product(1d0 + 0.25d0*tanh({v}), mask={l})")
                }
            }
            5 => {
                out.push(self.trace(&format!("{loc}({v}, 1)")));
                format!("{ext}({v})")
            }
            6 => {
                // An empty mask gives -HUGE: MERGE picks 0 then.
                let l = self.array_mask(scope, 1);
                out.extend(self.trace_mask(&l));
                out.push(self.trace(&format!("{loc}({v}, 1, mask={l})")));
                format!("merge({ext}({v}, mask={l}), 0d0, any({l}))")
            }
            7 => {
                let dim = self.dim_arg();
                out.extend(self.trace_extremes(&ext, &m, &dim));
                if self.rng.chance(50) {
                    format!("{ext}({m})")
                } else {
                    format!("0.25d0*sum({ext}({m}, {dim}))")
                }
            }
            8 => {
                let (w, _) = self.vector(scope, 2);
                format!("0.25d0*dot_product({v}, {w})")
            }
            9 => {
                if self.rng.chance(50) {
                    format!("norm2(exp(0.25d0*({v})))")
                } else {
                    format!("0.25d0*norm2(exp(0.25d0*({m})))")
                }
            }
            10 => {
                let rank = 1 + self.rng.below(2);
                let l = self.array_mask(scope, rank);
                format!("0.5d0*dble(count({l}))")
            }
            11 => {
                // The element at an extreme of another operand.
                let b = self.rng.pick_str(&scope.arrays);
                out.push(self.trace(&format!("{loc}({v}, dim=1)")));
                format!("{b}({loc}({v}, dim=1))")
            }
            12 => {
                let (w, _) = self.vector(scope, 1);
                format!("0.0625d0*dot_product({w}, matmul({m}, {v}))")
            }
            13 => {
                let (w, _) = self.vector(scope, 1);
                format!("0.0625d0*sum(matmul({v}, {m})*{w})")
            }
            _ => match self.whole_allocatable_reduction(scope, &ext, &mut out) {
                Some(r) => r,
                None => format!("sum({v})"),
            },
        };
        let (e, _) = self.expr(scope, 1);
        out.push(self.overwrite(scope, &t, &bounded(&format!("{r} + {e}"))));
        out
    }

    /// A reduction of a whole ALLOCATABLE array of `scope` (of any bounds
    /// covering `1..n`: `h(0:n + 1)`, `ma(-1:n + 2)`), its decisions
    /// recorded in `out` (None when there is no such array).
    fn whole_allocatable_reduction(
        &mut self,
        scope: &Scope,
        ext: &str,
        out: &mut Vec<Stmt>,
    ) -> Option<String> {
        let cands: Vec<String> = scope
            .allocs
            .iter()
            .chain(&scope.alloc_dummies)
            .chain(
                scope
                    .arrays
                    .iter()
                    .filter(|a| *a == super::module_alloc::NAME),
            )
            .cloned()
            .collect();
        if cands.is_empty() {
            return None;
        }
        let h = self.rng.pick_str(&cands);
        let loc = if ext == "maxval" { "maxloc" } else { "minloc" };
        Some(match self.rng.below(5) {
            0 => {
                out.push(self.trace(&format!("{loc}({h}, 1)")));
                format!("{ext}({h})")
            }
            1 => {
                // The element at the extreme: MAXLOC counts from 1 whatever
                // the lower bound.
                out.push(self.trace(&format!("{loc}({h}, 1)")));
                format!("{h}(lbound({h}, 1) - 1 + {loc}({h}, 1))")
            }
            2 => {
                let (c, _) = self.expr(scope, 1);
                let l = format!("{h} > {c}");
                out.push(self.trace(&format!("count({l})")));
                out.push(self.trace(&format!("maxloc(merge(1, 0, {l}), 1)")));
                format!("0.5d0*sum({h}, mask={l})")
            }
            3 => format!("norm2(exp(0.25d0*{h})) + product(1d0 + 0.25d0*tanh({h}))"),
            _ => format!("0.0625d0*dot_product({h}, {h}(ubound({h}, 1):lbound({h}, 1):-1))"),
        })
    }

    /// A section of `n` elements of a writable array assigned an array
    /// intrinsic's result.
    fn vector_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        let Some(target) = self.section(&scope.writable_arrays, &[], 0) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let (v, _) = self.vector(scope, 2);
        let (m, _) = self.matrix(scope, 2);
        let dim = self.dim_arg();
        let shift = self
            .rng
            .pick_str(&["1", "-1", "2", "n - 1", "-2"].map(String::from));
        let rhs = match self.rng.below(15) {
            0 => format!("0.25d0*sum({m}, dim={dim})"),
            1 => format!("product(1d0 + 0.25d0*tanh({m}), dim={dim})"),
            2 => {
                let ext = self.rng.pick_str(&["maxval", "minval"].map(String::from));
                out.extend(self.trace_extremes(&ext, &m, &dim));
                format!("{ext}({m}, dim={dim})")
            }
            3 => {
                let l = self.array_mask(scope, 2);
                out.extend(self.trace_mask2(&l));
                format!("0.25d0*sum({m}, dim={dim}, mask={l})")
            }
            4 => format!("0.0625d0*matmul({m}, {v})"),
            5 => format!("0.0625d0*matmul({v}, {m})"),
            6 => format!("cshift({v}, {shift})"),
            7 => {
                let (c, _) = self.expr(scope, 1);
                format!("eoshift({v}, {shift}, boundary={c})")
            }
            8 => {
                let l = self.array_mask(scope, 1);
                out.extend(self.trace_mask(&l));
                let (w, _) = self.vector(scope, 1);
                format!("pack({v}, {l}, vector={w})")
            }
            9 => {
                let l = self.array_mask(scope, 1);
                out.extend(self.trace_mask(&l));
                let (w, _) = self.vector(scope, 1);
                format!("unpack({v}, {l}, {w})")
            }
            10 => {
                let l = self.array_mask(scope, 1);
                out.extend(self.trace_mask(&l));
                let (w, _) = self.vector(scope, 1);
                format!("merge({v}, {w}, {l})")
            }
            11 => format!("0.25d0*norm2(exp(0.25d0*({m})), dim={dim})"),
            12 => {
                let l = self.array_mask(scope, 2);
                let loc = self.rng.pick_str(&["maxloc", "minloc"].map(String::from));
                out.extend(self.trace_il(&format!("{loc}({m}, dim={dim})")));
                format!("0.25d0*dble(count({l}, dim={dim})) + 0.5d0*dble({loc}({m}, dim={dim}))")
            }
            13 if self.rng.below(2) == 0 => {
                format!("0.5d0*sum(reshape(spread({v}, 1, 2), [n, 2], order=[2, 1]), dim=2)")
            }
            13 => {
                // A constructor of arrays as an operand (not one of a
                // single array, `2*[w]`, on which gfortran 12 fails).
                let (w, _) = self.vector(scope, 1);
                format!("0.5d0*sum(reshape([{v}, {w}], [n, 2]), dim=2)")
            }
            _ => format!("0.25d0*sum(spread({v}, 2, 3), dim=2) + 0.5d0*cshift({v}, {shift})"),
        };
        out.push(self.overwrite(scope, &target, &bounded(&rhs)));
        out
    }

    /// `sq` assigned an `n`-by-`n` array intrinsic's result.
    fn matrix_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        let mut out = Vec::new();
        let (m, _) = self.matrix(scope, 2);
        let dim = self.rng.range(1, 2) as usize;
        let vdim = self.dim_of(dim);
        let shift = self.rng.pick_str(&["1", "-1", "n - 1"].map(String::from));
        let rhs = match self.rng.below(8) {
            0 => {
                let (a, _) = self.matrix(scope, 1);
                format!("0.25d0*matmul({m}, {a})")
            }
            1 => format!("transpose({m})"),
            2 => format!("cshift({m}, {shift}, dim={vdim})"),
            3 => {
                let (c, _) = self.expr(scope, 1);
                format!("eoshift({m}, {shift}, boundary={c}, dim={vdim})")
            }
            4 => format!("reshape({m}, [n, n], order=[2, 1])"),
            5 => {
                let l = self.array_mask(scope, 2);
                out.extend(self.trace_mask2(&l));
                let (a, _) = self.matrix(scope, 1);
                format!("merge({m}, {a}, {l})")
            }
            6 => format!("spread(0.25d0*sum({m}, dim={vdim}), {dim}, n)"),
            _ => {
                let (v, _) = self.vector(scope, 1);
                format!("{m} + spread({v}, {dim}, n)")
            }
        };
        // |c sq + (1 - c) b| <= BOUND.
        let c = self.rng.range(1, 7) as f64 / 8.0;
        out.push(Stmt::Line(format!(
            "{SQ} = {}*{SQ} + {}*{}",
            lit(c),
            lit(1.0 - c),
            bounded(&rhs)
        )));
        out
    }

    /// `target = rhs`, keeping half the old value of an inout dummy when
    /// passive overwrites are off.
    fn overwrite(&self, scope: &Scope, target: &str, rhs: &str) -> Stmt {
        let keep =
            !self.opt.passive_overwrite && scope.dummies_out.iter().any(|d| d == base(target));
        Stmt::Line(if keep {
            format!("{target} = 0.5d0*{target} + 0.5d0*({rhs})")
        } else {
            format!("{target} = {rhs}")
        })
    }

    /// IF on ANY / ALL of an active comparison.
    fn any_all_branch(&mut self, scope: &Scope) -> Vec<Stmt> {
        if scope.writable.is_empty() {
            return Vec::new();
        }
        let rank = 1 + self.rng.below(2);
        let l = self.array_mask(scope, rank);
        let mut out = if rank == 1 {
            self.trace_mask(&l)
        } else {
            self.trace_mask2(&l)
        };
        let f = self.rng.pick_str(&["any", "all"].map(String::from));
        let t = self.rng.pick_str(&scope.writable);
        let (e, _) = self.expr(scope, 2);
        let (g, _) = self.expr(scope, 2);
        out.push(Stmt::Block {
            head: format!("if ({f}({l})) then"),
            body: vec![self.overwrite(scope, &t, &bounded(&e))],
            else_body: Some(vec![self.overwrite(scope, &t, &bounded(&g))]),
            tail: "end if".into(),
        });
        out
    }
}
