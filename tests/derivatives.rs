//! Derivatives of every corpus program, three ways: tangent Jacobian against
//! adjoint Jacobian (round-off), the dot-product identity
//! `<J xd, yb> = <xd, J^T yb>` with random directions, and central finite
//! differences (step-aware tolerance). Every floating-point argument is both
//! an input and an output.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{element_count, Engine, FiniteDifferences, Jacobian, Options, Selection};
use common::corpus::{case_settings, corpus_dir, programs_in};

/// Tangent and adjoint must agree to round-off.
const AD_TOLERANCE: f64 = 1e-11;
/// The dot-product identity, relative to the magnitude of its terms.
const DOT_TOLERANCE: f64 = 1e-13;

/// Programs whose finite differences are not comparable at the corpus
/// points: their outputs jump (rounding, integer conversion, MOD, branch
/// on a float) within a step of the point. Tangent/adjoint/dot-product
/// checks still apply to them.
const FD_EXEMPT: &[&str] = &[
    "intrinsics_round.f90",
    "specific_intrinsics.f",
    "intrinsics_minmax.f90",
    "mixed_mode.f90",
    "select_case.f90",
    // A perturbed tolerance goes negative and the bisection never ends.
    "do_while.f90",
    // The corpus points sit on a branch's threshold (`a(i) > thresh`,
    // `abs(r) <= delta`, pivot ties, `x > lim`, ties in a maximum), where
    // a central difference straddles the jump.
    "exit_cycle.f90",
    "if_blocks.f90",
    "lu_solve.f90",
    "return_call.f90",
    "multi_units.f",
    // One case sits on the arithmetic IF's jump at x = 0.
    "arithmetic_if.f",
    // Kahan summation: the compensation term is exactly the rounding error,
    // whose derivative finite differences cannot see.
    "real8_star.f",
];

/// Tangent/adjoint and dot-product tolerance when single-precision
/// variables take part: the two modes round differently in f32.
const SINGLE_TOLERANCE: f64 = 1e-5;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Differences of two Jacobians beyond `tol * max(1, |entries|)`.
fn jacobian_mismatches(what: &str, a: &Jacobian, b: &Jacobian, tol: f64) -> Vec<String> {
    let mut out = Vec::new();
    for r in 0..a.rows() {
        for c in 0..a.cols() {
            let (x, y) = (a.get(r, c), b.get(r, c));
            let scale = x.abs().max(y.abs()).max(1.0);
            if !((x - y).abs() <= tol * scale || (x.is_nan() && y.is_nan())) {
                out.push(format!(
                    "{what}: d{}/d{}: {x:e} vs {y:e}",
                    a.of[r], a.wrt[c]
                ));
            }
        }
    }
    out
}

#[test]
fn derivatives_of_every_corpus_program_agree() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for program in programs_in(&corpus_dir()) {
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let (entry, sets) = case_settings(case);
            let engine = Engine::from_files(&[&program.path], Options::default())
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
            let single = engine
                .module()
                .procs
                .iter()
                .any(|p| p.vars.iter().any(|v| v.ty == adjit::ir::Type::F32));
            let (ad_tol, dot_tol) = if single {
                (SINGLE_TOLERANCE, SINGLE_TOLERANCE)
            } else {
                (AD_TOLERANCE, DOT_TOLERANCE)
            };
            failures.extend(
                jacobian_mismatches("adjoint vs tangent", &adj, &tan, ad_tol)
                    .into_iter()
                    .map(|m| format!("{label}: {m}")),
            );

            // Dot-product identity with random directions.
            let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ checked as u64);
            let xd: Vec<f64> = (0..adj.cols()).map(|_| rng.next()).collect();
            let yb: Vec<f64> = (0..adj.rows()).map(|_| rng.next()).collect();
            let yd = tangent.directional(&args, &xd).unwrap();
            let (_, xb) = adjoint.vjp(&args, &yb).unwrap();
            let lhs: f64 = yd.iter().zip(&yb).map(|(a, b)| a * b).sum();
            let rhs: f64 = xd.iter().zip(&xb).map(|(a, b)| a * b).sum();
            let magnitude: f64 = yd.iter().zip(&yb).map(|(a, b)| (a * b).abs()).sum::<f64>()
                + xd.iter().zip(&xb).map(|(a, b)| (a * b).abs()).sum::<f64>();
            if (lhs - rhs).abs() > dot_tol * magnitude.max(f64::MIN_POSITIVE) {
                failures.push(format!("{label}: dot product {lhs:e} vs {rhs:e}"));
            }

            // Central finite differences.
            if !FD_EXEMPT.contains(&program.name().as_str()) {
                let single = (0..args.names().len()).any(|i| args.ty(i) == adjit::ir::Type::F32);
                let fd = FiniteDifferences::new(&primal)
                    .jacobian(&args, &sel, &sel)
                    .unwrap();
                let tol = if single { 2e-2 } else { 1e-5 };
                failures.extend(
                    jacobian_mismatches("adjoint vs finite differences", &adj, &fd, tol)
                        .into_iter()
                        .take(3)
                        .map(|m| format!("{label}: {m}")),
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 40,
        "only {checked} corpus cases were differentiated"
    );
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
