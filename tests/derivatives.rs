//! Derivatives of every corpus program, three ways: tangent Jacobian against
//! adjoint Jacobian (round-off), the dot-product identity
//! `<J xd, yb> = <xd, J^T yb>` with random directions, and central finite
//! differences (step-aware tolerance). Every floating-point argument is both
//! an input and an output.
//!
//! Tolerances belong to each compared entry: an entry whose input and
//! output are both double precision is held to double-precision bounds,
//! whatever else the program computes in REAL(4); only an entry with a
//! REAL(4) end gets single-precision bounds. The dot product is bounded by
//! the same per-entry tolerances, weighted by the terms it sums.
//!
//! Finite differences are taken at the corpus point moved by a small
//! deterministic relative perturbation, off the ties and thresholds the
//! corpus points sit on (`a(i) > thresh` at equality, ties in a maximum,
//! pivots of equal size); the adjoint is compared there with them.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{element_count, Args, FiniteDifferences, Jacobian, Selection};
use adjit::ir::Type;
use common::check::Rng;
use common::corpus::{case_engine, case_settings, corpus_dir, programs_in};

/// Tangent and adjoint, double precision at both ends: round-off.
const AD_TOLERANCE: f64 = 1e-11;
/// Tangent and adjoint with a REAL(4) end: the two modes round
/// differently in single precision.
const AD_TOLERANCE_SINGLE: f64 = 1e-5;
/// The dot-product identity, per term it sums, double precision at both
/// ends of the term's entry (relative to the term's magnitude).
const DOT_TOLERANCE: f64 = 1e-13;
/// The same with a REAL(4) end.
const DOT_TOLERANCE_SINGLE: f64 = 1e-5;
/// Finite differences against the adjoint, double precision at both ends
/// (a central difference with relative step eps^(1/3) is good to ~1e-10 in
/// smooth regions; the bound leaves room for curvature).
const FD_TOLERANCE: f64 = 1e-5;
/// Finite differences with a REAL(4) end: the step is f32's eps^(1/3).
const FD_TOLERANCE_SINGLE: f64 = 2e-2;
/// Relative size of the perturbation of the finite-difference point.
const PERTURBATION: f64 = 1e-3;

/// Inputs that finite differences cannot vary, by program (or by one
/// case, `program [settings]`), with the reason (an empty list: every
/// input). Tangent/adjoint and
/// dot-product checks still apply to them.
const FD_EXEMPT: &[(&str, &[&str], &str)] = &[
    (
        "arithmetic_if.f [--entry piece --set x=0]",
        &["x"],
        "the case sits on the arithmetic IF's jump at x = 0 (y is 1 there, x*x to the \
         left, 3x - x**3 to the right), and a zero is not perturbed; the other two cases \
         of the program are compared",
    ),
    (
        "adaptive_simpson.f90",
        &["tol"],
        "the step on tol = 1e-9 or 1e-7 is 6e-6, so tol - h < 0: no interval ever meets \
         `abs(delta) <= 15*eps` and the refinement splits to its depth limit of 30 (2^30 \
         integrand calls); the integral depends on tol only through which intervals are \
         refined (derivative 0, as tangent and adjoint say)",
    ),
    (
        "poisson_sor.f90",
        &["tol"],
        "the SOR iteration exits once the residual is under tol: the solution depends on tol \
         only through the iteration count (derivative 0); a step of 6e-6 on tol = 1e-10 or \
         1e-8 makes it negative and runs all 500 sweeps, a different iterate",
    ),
    (
        "poisson_sor.f90 [--entry poisson_solve --set m=8 --set amp=2.5 --set edge=0.3 --set tol=1e-10 --set omega=0]",
        &["omega"],
        "omega = 0 asks for the solver's optimal factor (omega <= 0); omega + h > 0 relaxes \
         with a factor of 6e-6 instead, another iterate: the case sits on that switch",
    ),
    (
        "do_while.f90",
        &["tol", "lo", "hi"],
        "tol: the step on tol = 1e-12 is 6e-6 (steps are relative to max(|x|, 1)), so \
         tol - h < 0 and `do while (b - a > tol)` never ends; lo, hi: the bisected root \
         is piecewise affine in lo and hi with pieces ~tol = 1e-12 wide (each branch \
         decision flips), far narrower than the step: differences see the converged \
         root's slope (about 0), derivatives the slope of the piece (weights summing to 1)",
    ),
    (
        "real8_star.f",
        &[],
        "partial sums of 1e8 with an output of ~6.75: s's difference quotient carries a \
         rounding error eps * 1e8 / h ~ 2.5e-3 (the Kahan compensation c is exactly that \
         rounding error, whose derivative is 0); s4 sums in REAL(4), whose ulp at 1e8 is 8, \
         so no step changes it and its differences are 0 where the derivative is 1",
    ),
];

/// Jacobian entries with double-precision ends whose value passes through
/// REAL(4) arithmetic: they get single-precision finite-difference steps
/// and tolerances (program, output, input, how).
const SINGLE_PATHS: &[(&str, &str, &str, &str)] = &[(
    "kinds_dp.f90",
    "d",
    "x",
    "d = dble(t) - a with t a REAL(4) sum of sngl(x)",
)];

/// The argument name of a label (`x(3)` -> `x`).
fn base(label: &str) -> &str {
    label.split('(').next().unwrap()
}

/// Which entries of a Jacobian are single precision: those with a REAL(4)
/// end and those on a declared single-precision path.
struct Precision {
    single: Vec<bool>,
    cols: usize,
}

impl Precision {
    fn new(program: &str, args: &Args, jac: &Jacobian) -> Precision {
        let is_f32 = |l: &String| args.ty(args.index_of(base(l)).unwrap()) == Type::F32;
        let mut single = Vec::with_capacity(jac.matrix.len());
        for of in &jac.of {
            for wrt in &jac.wrt {
                single.push(
                    is_f32(of)
                        || is_f32(wrt)
                        || SINGLE_PATHS
                            .iter()
                            .any(|&(p, o, i, _)| p == program && o == base(of) && i == base(wrt)),
                );
            }
        }
        Precision {
            single,
            cols: jac.cols(),
        }
    }

    fn is_single(&self, r: usize, c: usize) -> bool {
        self.single[r * self.cols + c]
    }

    /// True when any entry is single precision.
    fn any_single(&self) -> bool {
        self.single.iter().any(|&s| s)
    }

    /// `double` or `single` by the entry's precision.
    fn pick(&self, r: usize, c: usize, double: f64, single: f64) -> f64 {
        if self.is_single(r, c) {
            single
        } else {
            double
        }
    }
}

/// Entries of two Jacobians differing beyond `tol(r, c) * max(1, |entries|)`.
fn jacobian_mismatches(
    what: &str,
    a: &Jacobian,
    b: &Jacobian,
    tol: impl Fn(usize, usize) -> f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in 0..a.rows() {
        for c in 0..a.cols() {
            let (x, y) = (a.get(r, c), b.get(r, c));
            let scale = x.abs().max(y.abs()).max(1.0);
            if !((x - y).abs() <= tol(r, c) * scale || (x.is_nan() && y.is_nan())) {
                out.push(format!(
                    "{what}: d{}/d{}: {x:e} vs {y:e} (tolerance {:e})",
                    a.of[r],
                    a.wrt[c],
                    tol(r, c)
                ));
            }
        }
    }
    out
}

/// The arguments with every floating-point element moved by a relative
/// `PERTURBATION` in a random direction (zeros stay: they are sizes,
/// tolerances or starting values more often than kinks).
fn perturbed(args: &Args, rng: &mut Rng) -> Args {
    let mut moved = args.clone();
    for (i, b) in moved.buffers_mut().iter_mut().enumerate() {
        if !args.ty(i).is_float() {
            continue;
        }
        for k in 0..b.len() {
            let x = b.get_f64(k);
            b.set_f64(k, x * (1.0 + PERTURBATION * rng.next()));
        }
    }
    moved
}

#[test]
fn derivatives_of_every_corpus_program_agree() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut fd_checked = 0;
    for program in programs_in(&corpus_dir()) {
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let (entry, sets) = case_settings(case);
            let (engine, sets) =
                case_engine(&program.path, entry.as_deref(), &sets, Default::default())
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
            let primal = engine.procedure(entry.as_deref()).unwrap();
            let mut args = primal.args();
            args.apply_settings(&sets).unwrap();
            if primal.call(&mut args.clone()).is_err() {
                continue; // a case that exercises STOP or a runtime error
            }
            let floats: Vec<String> = (0..args.names().len())
                .filter(|&i| args.ty(i).is_float() && !args.buffers()[i].is_empty())
                .map(|i| args.names()[i].clone())
                .collect();
            if floats.is_empty() {
                continue;
            }
            let sel = Selection::parse_list(&floats.join(",")).unwrap();
            let n = element_count(&args, &sel).unwrap();
            let entry = Some(primal.name());
            let adjoint = match engine.adjoint(entry, &sel, &sel, &AdjointOptions::default()) {
                Ok(a) => a,
                Err(e) => {
                    failures.push(format!("{label}: adjoint: {e}"));
                    continue;
                }
            };
            let tangent = match engine.tangent(entry, &sel, &sel, n.clamp(1, 8)) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{label}: tangent: {e}"));
                    continue;
                }
            };
            let (adj, tan) = match (adjoint.jacobian(&args), tangent.jacobian(&args)) {
                (Ok(a), Ok(t)) => (a, t),
                (a, t) => {
                    failures.push(format!(
                        "{label}: evaluation: {:?} / {:?}",
                        a.err(),
                        t.err()
                    ));
                    continue;
                }
            };
            let precision = Precision::new(&program.name(), &args, &adj);
            let ad_tol =
                |r: usize, c: usize| precision.pick(r, c, AD_TOLERANCE, AD_TOLERANCE_SINGLE);
            failures.extend(
                jacobian_mismatches("adjoint vs tangent", &adj, &tan, ad_tol)
                    .into_iter()
                    .map(|m| format!("{label}: {m}")),
            );

            // Dot-product identity with random directions, bounded by the
            // per-entry tolerances weighted by the terms, plus the entries'
            // own tangent/adjoint discrepancy (already held to `ad_tol`
            // above): an entry whose intermediates cancel (a variance about
            // a mean of 1e3) is only as exact as those intermediates, and the
            // identity checks the matrix-free sweeps against the matrices.
            // Seeded by the case itself, so that adding a corpus program
            // leaves every other case's directions and points unchanged.
            let seed = label.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            });
            let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ seed);
            let xd: Vec<f64> = (0..adj.cols()).map(|_| rng.next()).collect();
            let yb: Vec<f64> = (0..adj.rows()).map(|_| rng.next()).collect();
            let yd = tangent.directional(&args, &xd).unwrap();
            let (_, xb) = adjoint.vjp(&args, &yb).unwrap();
            let lhs: f64 = yd.iter().zip(&yb).map(|(a, b)| a * b).sum();
            let rhs: f64 = xd.iter().zip(&xb).map(|(a, b)| a * b).sum();
            let mut bound = 0.0;
            for (r, y) in yb.iter().enumerate() {
                for (c, x) in xd.iter().enumerate() {
                    let weight = (y * x).abs();
                    let entry = adj.get(r, c);
                    bound += weight
                        * (entry.abs() * precision.pick(r, c, DOT_TOLERANCE, DOT_TOLERANCE_SINGLE)
                            + (entry - tan.get(r, c)).abs());
                }
            }
            // The sweeps' own accumulation (each side sums its products in
            // its own order): round-off relative to the two sides' terms.
            let tol = if precision.any_single() {
                DOT_TOLERANCE_SINGLE
            } else {
                DOT_TOLERANCE
            };
            bound += tol
                * (yd.iter().zip(&yb).map(|(a, b)| (a * b).abs()).sum::<f64>()
                    + xd.iter().zip(&xb).map(|(a, b)| (a * b).abs()).sum::<f64>());
            let dot_ok = (lhs - rhs).abs() <= bound.max(f64::MIN_POSITIVE);
            if !dot_ok {
                failures.push(format!(
                    "{label}: dot product {lhs:e} vs {rhs:e} (bound {bound:e})"
                ));
            }

            // Central finite differences at a perturbed point, with respect
            // to the inputs they can vary.
            // The program's entries and the case's add up.
            let exempt: Vec<&str> = FD_EXEMPT
                .iter()
                .filter(|(p, _, _)| *p == program.name() || *p == label)
                .flat_map(|(_, inputs, _)| inputs.iter().copied())
                .collect();
            let fd_inputs: Vec<&String> = floats
                .iter()
                .filter(|f| !exempt.contains(&f.as_str()))
                .collect();
            let whole_program = FD_EXEMPT
                .iter()
                .any(|(p, inputs, _)| *p == program.name() && inputs.is_empty());
            if !whole_program && !fd_inputs.is_empty() {
                let fd_sel = Selection::parse_list(
                    &fd_inputs
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                )
                .unwrap();
                let point = perturbed(&args, &mut rng);
                let fd_adjoint = engine
                    .adjoint(entry, &sel, &fd_sel, &AdjointOptions::default())
                    .unwrap();
                // Steps by each entry's precision: the default (eps^(1/3) of
                // the input's type) for double entries, f32's for single ones.
                let fd = |step: Option<f64>| {
                    let mut fd = FiniteDifferences::new(&primal);
                    fd.step = step;
                    fd.jacobian(&point, &sel, &fd_sel)
                };
                let result = fd(None).and_then(|double| {
                    Ok((
                        double,
                        fd(Some(f64::from(f32::EPSILON).cbrt()))?,
                        fd_adjoint.jacobian(&point)?,
                    ))
                });
                match result {
                    Ok((double, single, adj)) => {
                        let precision = Precision::new(&program.name(), &point, &adj);
                        let mut fd = double;
                        for (k, x) in fd.matrix.iter_mut().enumerate() {
                            if precision.single[k] {
                                *x = single.matrix[k];
                            }
                        }
                        failures.extend(
                            jacobian_mismatches(
                                "adjoint vs finite differences",
                                &adj,
                                &fd,
                                |r, c| precision.pick(r, c, FD_TOLERANCE, FD_TOLERANCE_SINGLE),
                            )
                            .into_iter()
                            .take(3)
                            .map(|m| format!("{label}: {m}")),
                        )
                    }
                    Err(e) => failures.push(format!("{label}: at the perturbed point: {e}")),
                }
                fd_checked += 1;
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 40 && fd_checked >= 40,
        "only {checked} corpus cases were differentiated, {fd_checked} by finite differences"
    );
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
