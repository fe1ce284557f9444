//! argmin integration (feature `argmin`): MINPACK-2's minimal surface
//! problem, written in Fortran (`examples/msa.f`), minimized by argmin's
//! L-BFGS with adjit's adjoint gradient, converges to Enneper's surface,
//! the known minimal surface for its boundary data, at the rate of the
//! discretization (O(h^2)).

#[path = "../examples/minimal_surface/enneper.rs"]
mod enneper;

use adjit::engine::Engine;
use adjit::optim::Problem;
use argmin::core::{Executor, State, TerminationReason, TerminationStatus};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

fn problem(n: usize) -> Problem {
    enneper::problem(n).expect("the minimal surface problem compiles")
}

/// Minimizes from the flat surface; returns the minimizer and the
/// problem.
fn minimize(n: usize) -> (Vec<f64>, Problem) {
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-10)
        .unwrap();
    let result = Executor::new(problem(n), solver)
        .configure(|state| state.param(vec![0.0; n * n]).max_iters(500))
        .run()
        .expect("runs");
    let state = result.state();
    assert_eq!(
        *state.get_termination_status(),
        TerminationStatus::Terminated(TerminationReason::SolverConverged),
        "n = {n}"
    );
    let x = state.get_best_param().expect("a minimizer").clone();
    (
        x,
        result.problem.problem.expect("the problem is handed back"),
    )
}

fn max_error(x: &[f64], n: usize) -> f64 {
    x.iter()
        .zip(enneper::exact(n, n))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

#[test]
fn lbfgs_with_the_adjoint_finds_ennepers_surface() {
    let mut errors = Vec::new();
    for n in [8, 16] {
        let (x, problem) = minimize(n);
        // A stationary point: the adjoint gradient vanishes.
        let (area, gradient) = problem.value_and_gradient(&x).unwrap();
        let norm = gradient.iter().map(|g| g * g).sum::<f64>().sqrt();
        assert!(norm < 1e-8, "n = {n}: |grad| = {norm}");
        // The discrete minimum: below the area of the exact surface sampled
        // on the grid (and above the flat start's).
        let at_exact = problem.value(&enneper::exact(n, n)).unwrap();
        assert!(area <= at_exact, "n = {n}: {area} > {at_exact}");
        assert!(area < problem.value(&vec![0.0; n * n]).unwrap());
        errors.push(max_error(&x, n));
    }
    // Converges to Enneper's surface as h^2: halving h divides the error
    // by about 4 (3.3 measured from 8 to 16).
    assert!(
        errors[0] < 1e-3 && errors[1] < errors[0] / 2.5,
        "{errors:?}"
    );
}

#[test]
fn the_gradient_is_the_adjoint_and_agrees_with_finite_differences() {
    let n = 4;
    let problem = problem(n);
    let x: Vec<f64> = (0..n * n).map(|k| 0.1 * (k as f64).sin()).collect();
    let (value, gradient) = problem.value_and_gradient(&x).unwrap();
    assert_eq!(value, problem.value(&x).unwrap());
    for k in 0..n * n {
        let h = 1e-6;
        let (mut up, mut down) = (x.clone(), x.clone());
        up[k] += h;
        down[k] -= h;
        let fd = (problem.value(&up).unwrap() - problem.value(&down).unwrap()) / (2.0 * h);
        assert!(
            (fd - gradient[k]).abs() < 1e-7,
            "x({k}): {fd} vs {}",
            gradient[k]
        );
    }
}

#[test]
fn a_wrong_parameter_is_an_error_not_a_panic() {
    let source = "subroutine q(x, f)\n double precision x, f\n f = x*x\nend subroutine\n";
    let engine = Engine::from_source("q.f90", source).unwrap();
    let args = engine.procedure(None).unwrap().args();
    assert!(Problem::new(&engine, None, "f", "nope", args.clone()).is_err());
    let problem = Problem::new(&engine, None, "f", "x", args).unwrap();
    assert_eq!(problem.value(&[3.0]).unwrap(), 9.0);
    assert_eq!(
        problem.value_and_gradient(&[3.0]).unwrap(),
        (9.0, vec![6.0])
    );
    let e = problem.value(&[1.0, 2.0]).unwrap_err();
    assert!(e.to_string().contains("`x` is a scalar"), "{e}");
}
