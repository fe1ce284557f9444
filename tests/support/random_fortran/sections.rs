//! Array sections in generated programs
//! ([`GenOptions::array_sections`](super::GenOptions)).
//!
//! * Section assignments `t(sec) = e`, where `e` combines sections of the
//!   same length (of any readable array, the target included, so that
//!   overlapping `w(2:n) = w(1:n - 1)` and reversals `w(1:n) = w(n:1:-1)`
//!   appear) with scalar expressions, element-wise intrinsics and
//!   arithmetic.
//! * Reductions of sections stored in scalars: SUM, DOT_PRODUCT of two
//!   sections of one length, MAXVAL and MINVAL of non-empty sections.
//! * Sections as actual arguments: an array dummy of `n` elements may be
//!   given `a(1:n)`, `a(n:1:-1)` (strided: copy-in / copy-out), a column
//!   `m2(:, j)` of a local matrix; array dummies are declared explicit-shape
//!   `(n)`, assumed-size `(*)` or assumed-shape `(:)` at random.
//! * A local matrix `m2(n, 3)` (procedures with `n`) whose columns are
//!   sections like any other.
//!
//! Sections have one of four lengths in terms of `n` (1 to 4): `n`,
//! `n - 1` (empty when `n = 1`), `(n + 1)/2` and `n/2` (empty when
//! `n = 1`), each written several ways (forward, reversed, strided), and
//! only index `1..n` of arrays that cover it. Values stay within
//! [`BOUND`](super::BOUND): right-hand sides that may exceed it go through
//! a bounded function.

use super::{lit, Gen, PickStr, Scope, Stmt, BOUND};

/// The name of the local matrix.
const MATRIX: &str = "m2";
/// Its number of columns.
const COLUMNS: usize = 3;

/// Section subscripts of one length, by length class: `n`, `n - 1`,
/// `(n + 1)/2`, `n/2`.
pub(super) const CLASSES: [&[&str]; 4] = [
    &["1:n", "n:1:-1", "1:n:1"],
    &["1:n - 1", "2:n", "n:2:-1", "n - 1:1:-1"],
    &["1:n:2", "n:1:-2"],
    &["2:n:2", "n - 1:1:-2"],
];

/// Whether sections of class `class` have at least one element for every
/// `n >= 1` (MAXVAL and MINVAL of an empty section are ±HUGE).
fn never_empty(class: usize) -> bool {
    class == 0 || class == 2
}

/// `e` squashed into `[-BOUND, BOUND]`.
pub(super) fn bounded(e: &str) -> String {
    format!("4d0*tanh(0.25d0*({e}))")
}

/// The array an element or section reference names: without its last
/// subscript list (`w` of `w(1:n)`, `q(2)%v` of `q(2)%v(1:n)`).
pub(super) fn base(arg: &str) -> &str {
    if !arg.ends_with(')') {
        return arg;
    }
    let mut depth = 0;
    for (k, c) in arg.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return &arg[..k];
                }
            }
            _ => {}
        }
    }
    arg
}

impl Gen<'_> {
    /// A section pattern (`{}` stands for the subscript) of an array of
    /// `pool`, or a column of a matrix of `matrices`.
    fn section_base(&mut self, pool: &[String], matrices: &[String]) -> Option<String> {
        let total = pool.len() + matrices.len();
        if total == 0 {
            return None;
        }
        let k = self.rng.below(total);
        Some(if k < pool.len() {
            format!("{}({{}})", pool[k])
        } else {
            let j = self.rng.range(1, COLUMNS as i64);
            format!("{}({{}}, {j})", matrices[k - pool.len()])
        })
    }

    /// A section of length class `class` of an array of `pool` or a matrix
    /// column.
    pub(super) fn section(
        &mut self,
        pool: &[String],
        matrices: &[String],
        class: usize,
    ) -> Option<String> {
        let pattern = self.section_base(pool, matrices)?;
        let sub = CLASSES[class][self.rng.below(CLASSES[class].len())];
        Some(pattern.replace("{}", sub))
    }

    /// An element-wise array expression over sections of class `class`,
    /// with its bound on magnitude.
    pub(super) fn section_expr(
        &mut self,
        scope: &Scope,
        class: usize,
        depth: usize,
    ) -> (String, f64) {
        let leaf = |g: &mut Self| -> (String, f64) {
            if g.rng.chance(70) {
                if let Some(s) = g.section(&scope.arrays, &scope.matrices, class) {
                    return (s, BOUND);
                }
            }
            let (e, b) = g.expr(scope, 1);
            (format!("({e})"), b)
        };
        if depth == 0 || self.rng.chance(20) {
            return leaf(self);
        }
        match self.rng.below(7) {
            0 => {
                let (e, _) = self.section_expr(scope, class, depth - 1);
                (format!("sin({e})"), 1.0)
            }
            1 => {
                let (e, _) = self.section_expr(scope, class, depth - 1);
                (format!("tanh({e})"), 1.0)
            }
            2 => {
                let (e, b) = self.section_expr(scope, class, depth - 1);
                (format!("sqrt(1d0 + ({e})**2)"), (1.0 + b * b).sqrt())
            }
            3 | 4 => {
                let (a, ba) = self.section_expr(scope, class, depth - 1);
                let (b, bb) = self.section_expr(scope, class, depth - 1);
                let op = if self.rng.chance(50) { "+" } else { "-" };
                (format!("({a} {op} {b})"), ba + bb)
            }
            5 => {
                let (a, ba) = self.section_expr(scope, class, depth - 1);
                let (b, bb) = self.section_expr(scope, class, depth - 1);
                (format!("({a})*({b})"), ba * bb)
            }
            _ => {
                let (a, ba) = self.section_expr(scope, class, depth - 1);
                let (b, bb) = self.section_expr(scope, class, depth - 1);
                (format!("max({a}, {b})"), ba.max(bb))
            }
        }
    }

    /// An array expression over sections of class `class` that holds at
    /// least one section, whatever the expression generator picks (None
    /// when `scope` has no array).
    pub(super) fn section_array(&mut self, scope: &Scope, class: usize) -> Option<String> {
        let s = self.section(&scope.arrays, &scope.matrices, class)?;
        let (a, _) = self.section_expr(scope, class, 1);
        Some(format!("{s} + ({a})"))
    }

    /// A statement on array sections (none when `scope` has no `n`): a
    /// section assignment or a reduction of sections into a scalar.
    pub(super) fn section_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.has_n {
            return Vec::new();
        }
        let class = self.rng.below(CLASSES.len());
        if self.rng.chance(60) {
            let Some(target) = self.section(&scope.writable_arrays, &scope.matrices, class) else {
                return Vec::new();
            };
            let (e, b) = self.section_expr(scope, class, 3);
            let rhs = if b <= BOUND { e } else { bounded(&e) };
            let keep =
                !self.opt.passive_overwrite && scope.dummies_out.iter().any(|d| d == base(&target));
            return vec![Stmt::Line(if keep {
                format!("{target} = 0.5d0*{target} + 0.5d0*({rhs})")
            } else {
                format!("{target} = {rhs}")
            })];
        }
        if scope.writable.is_empty() {
            return Vec::new();
        }
        let t = self.rng.pick_str(&scope.writable);
        let (Some(a), Some(b)) = (
            self.section_array(scope, class),
            self.section_array(scope, class),
        ) else {
            return Vec::new();
        };
        let reduction = match self.rng.below(4) {
            0 => format!("sum({a})"),
            1 => format!("dot_product({a}, {b})"),
            2 if never_empty(class) => format!("maxval({a})"),
            3 if never_empty(class) => format!("minval({a})"),
            _ => format!("0.5d0*sum({a})"),
        };
        let (e, _) = self.expr(scope, 1);
        let rhs = bounded(&format!("{reduction} + {e}"));
        let keep = !self.opt.passive_overwrite && scope.dummies_out.contains(&t);
        vec![Stmt::Line(if keep {
            format!("{t} = 0.5d0*{t} + 0.5d0*({rhs})")
        } else {
            format!("{t} = {rhs}")
        })]
    }

    /// Maybe declares the local matrix `m2(n, 3)` of a procedure with `n`,
    /// its columns set from sections of `reads` (and the module array).
    pub(super) fn section_matrix(
        &mut self,
        scope: &mut Scope,
        reads: &Scope,
        head: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) {
        if !self.opt.array_sections || !scope.has_n || !self.rng.chance(50) {
            return;
        }
        head.push(format!("  double precision :: {MATRIX}(n, {COLUMNS})"));
        // Loop indices of earlier initialisations are past their ranges.
        let mut reads = reads.clone();
        reads.indices.retain(|i| i == "1" || i == "n");
        let reads = &reads;
        let mut pool = reads.arrays.clone();
        pool.push(self.global_array.clone());
        for j in 1..=COLUMNS {
            let src = self
                .section(&pool, &[], 0)
                .expect("the module array is a source");
            let (e, _) = self.expr(reads, 1);
            let c = lit(self.rng.range(1, 3) as f64 / 4.0);
            init.push(Stmt::Keep(format!(
                "{MATRIX}(:, {j}) = {c}*{src} + 0.25d0*sin({e})"
            )));
        }
        scope.matrices.push(MATRIX.into());
    }

    /// The declared shape of array dummy `v`: `(n)`, or with array
    /// sections on `(*)` (recorded in `scope`) or `(:)`.
    pub(super) fn dummy_shape(&mut self, scope: &mut Scope, v: &str) -> &'static str {
        if !self.opt.array_sections {
            return "(n)";
        }
        match self.rng.below(3) {
            0 => "(n)",
            1 => {
                scope.assumed_size.push(v.into());
                "(*)"
            }
            _ => "(:)",
        }
    }

    /// The actual argument for an array dummy of `n` elements given array
    /// `a` of `scope`: `a` itself or, with array sections on, a section of
    /// `n` elements of it (always for an assumed-size `a`, whose whole
    /// cannot go to an assumed-shape dummy); now and then a column of a
    /// local matrix not in `used` instead.
    pub(super) fn array_actual(&mut self, scope: &Scope, a: &str, used: &[String]) -> String {
        if !self.opt.array_sections {
            return a.into();
        }
        let free: Vec<String> = scope
            .matrices
            .iter()
            .filter(|m| !used.contains(m))
            .cloned()
            .collect();
        if !free.is_empty() && self.rng.chance(25) {
            return self.section(&[], &free, 0).expect("a matrix is free");
        }
        if scope.assumed_size.iter().any(|s| s == a) || self.rng.chance(50) {
            return self.section(&[a.to_string()], &[], 0).expect("one array");
        }
        a.into()
    }
}
