//! Derivative checks shared by the integration tests: deterministic random
//! directions, per-value comparison of Jacobians with a tolerance chosen by
//! the precision of the values compared, and the dot-product identity.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Args, Engine, Jacobian, Selection};
use adjit::ir::Type;

/// Agreement of tangent and adjoint when every value compared is REAL(8).
pub const AD_TOLERANCE_F64: f64 = 1e-12;
/// The same when a REAL(4) input or output takes part.
pub const AD_TOLERANCE_F32: f64 = 1e-5;

/// A deterministic xorshift generator of numbers in [-1, 1).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.bits() % n
    }

    /// The next number in [-1, 1).
    pub fn next(&mut self) -> f64 {
        (self.bits() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// `n` numbers.
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// The type of the argument an element label (`x`, `f(3)`) belongs to.
pub fn label_type(args: &Args, label: &str) -> Type {
    let name = label.split('(').next().unwrap_or(label);
    args.index_of(name).map(|i| args.ty(i)).unwrap_or(Type::F64)
}

/// The tolerance for a derivative of `of` with respect to `wrt`: REAL(4)
/// on either side loosens only the comparisons it takes part in.
pub fn tolerance(args: &Args, of: &str, wrt: &str) -> f64 {
    if label_type(args, of) == Type::F32 || label_type(args, wrt) == Type::F32 {
        AD_TOLERANCE_F32
    } else {
        AD_TOLERANCE_F64
    }
}

/// Entries of two Jacobians that differ by more than their tolerance
/// relative to `max(1, |a|, |b|)`; NaN anywhere is a difference.
pub fn mismatches(what: &str, args: &Args, a: &Jacobian, b: &Jacobian) -> Vec<String> {
    let mut out = Vec::new();
    if (a.rows(), a.cols()) != (b.rows(), b.cols()) {
        out.push(format!(
            "{what}: {}x{} vs {}x{}",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        ));
        return out;
    }
    for r in 0..a.rows() {
        for c in 0..a.cols() {
            let (x, y) = (a.get(r, c), b.get(r, c));
            let tol = tolerance(args, &a.of[r], &a.wrt[c]);
            let scale = x.abs().max(y.abs()).max(1.0);
            if !within(x, y, tol * scale) {
                out.push(format!(
                    "{what}: d{}/d{}: {x:e} vs {y:e}",
                    a.of[r], a.wrt[c]
                ));
            }
        }
    }
    out
}

/// Entries of `jac` that differ from `expected` (row-major) by more than
/// `tol` relative to `max(1, |expected|)`.
pub fn against(what: &str, jac: &Jacobian, expected: &[f64], tol: f64) -> Vec<String> {
    let mut out = Vec::new();
    assert_eq!(jac.matrix.len(), expected.len(), "{what}: shape");
    for (k, (&x, &e)) in jac.matrix.iter().zip(expected).enumerate() {
        if !within(x, e, tol * e.abs().max(1.0)) {
            let (r, c) = (k / jac.cols(), k % jac.cols());
            out.push(format!(
                "{what}: d{}/d{} = {x:e}, expected {e:e}",
                jac.of[r], jac.wrt[c]
            ));
        }
    }
    out
}

/// Entries of the Jacobian of `of` with respect to `wrt` (selection lists)
/// of `entry` at `args`, by tangent (4 directions) and by adjoint, that
/// differ from `expected` (row-major) by more than `tol`.
pub fn both_modes_against(
    engine: &Engine,
    entry: Option<&str>,
    args: &Args,
    of: &str,
    wrt: &str,
    expected: &[f64],
    tol: f64,
) -> Vec<String> {
    let (of, wrt) = (
        Selection::parse_list(of).unwrap(),
        Selection::parse_list(wrt).unwrap(),
    );
    let tangent = engine.tangent(entry, &of, &wrt, 4).unwrap();
    let adjoint = engine
        .adjoint(entry, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let mut bad = against("tangent", &tangent.jacobian(args).unwrap(), expected, tol);
    bad.extend(against(
        "adjoint",
        &adjoint.jacobian(args).unwrap(),
        expected,
        tol,
    ));
    bad
}

/// True when `|a - b| <= bound`; false when either is NaN (a NaN is
/// never close to anything).
pub fn within(a: f64, b: f64, bound: f64) -> bool {
    (a - b).abs() <= bound
}

/// `<a, b>` and `sum |a_i b_i|` (the magnitude the identity's round-off
/// scales with).
pub fn dot(a: &[f64], b: &[f64]) -> (f64, f64) {
    a.iter()
        .zip(b)
        .fold((0.0, 0.0), |(s, m), (x, y)| (s + x * y, m + (x * y).abs()))
}

/// The three-way check of one Jacobian of `entry` at `args` (`of` and
/// `wrt` are selection lists): tangent against adjoint entry by entry, the
/// dot-product identity `<J xd, yb> = <xd, J^T yb>` with random directions
/// (relative 1e-13), and the adjoint against central finite differences
/// (relative `fd_tol`). Returns the adjoint Jacobian and the problems found.
pub fn three_ways(
    engine: &Engine,
    entry: Option<&str>,
    args: &Args,
    of: &str,
    wrt: &str,
    fd_tol: f64,
) -> (Jacobian, Vec<String>) {
    let (of, wrt) = (
        Selection::parse_list(of).unwrap(),
        Selection::parse_list(wrt).unwrap(),
    );
    let procedure = engine.procedure(entry).unwrap();
    let tangent = engine.tangent(entry, &of, &wrt, 4).unwrap();
    let adjoint = engine
        .adjoint(entry, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let (jt, ja) = (
        tangent.jacobian(args).unwrap(),
        adjoint.jacobian(args).unwrap(),
    );
    let mut bad = mismatches("adjoint vs tangent", args, &ja, &jt);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let xd = rng.vec(ja.cols());
    let yb = rng.vec(ja.rows());
    let jxd = tangent.directional(args, &xd).unwrap();
    let (_, jtyb) = adjoint.vjp(args, &yb).unwrap();
    let ((lhs, lm), (rhs, rm)) = (dot(&jxd, &yb), dot(&xd, &jtyb));
    if !within(lhs, rhs, 1e-13 * lm.max(rm).max(f64::MIN_POSITIVE)) {
        bad.push(format!("dot product: {lhs:e} vs {rhs:e}"));
    }
    let fd = adjit::engine::FiniteDifferences::new(&procedure)
        .jacobian(args, &of, &wrt)
        .unwrap();
    for (k, (a, f)) in ja.matrix.iter().zip(&fd.matrix).enumerate() {
        if !within(*a, *f, fd_tol * a.abs().max(1.0)) {
            bad.push(format!(
                "entry {k}: adjoint {a:e} vs finite differences {f:e}"
            ));
        }
    }
    (ja, bad)
}
