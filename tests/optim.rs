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

/// A trust-region Newton method (Steihaug's CG) with the Hessian from
/// tangent over adjoint: the extended
/// Rosenbrock function (Moré, Garbow and Hillstrom's problem 21: n/2
/// independent pairs, one minimizer), from the classical start
/// (-1.2, 1, ...), reaches the minimizer (1, ..., 1) to 1e-8 within 40
/// steps, and the Hessian there is the analytic one.
#[test]
fn trust_region_newton_with_the_hessian_finds_rosenbrocks_minimum() {
    use argmin::solver::trustregion::{Steihaug, TrustRegion};
    let engine = Engine::from_source(
        "rosen.f90",
        "subroutine rosen(n, x, f)
  integer n, i
  double precision x(n), f
  f = 0d0
  do i = 1, n - 1, 2
    f = f + 100d0*(x(i+1) - x(i)**2)**2 + (1d0 - x(i))**2
  end do
end subroutine",
    )
    .unwrap();
    let n = 6;
    let mut args = engine.procedure(None).unwrap().args();
    args.set_scalar("n", n as f64).unwrap();
    let problem = Problem::new(&engine, None, "f", "x", args)
        .unwrap()
        .with_hessian(&engine, None)
        .unwrap();
    let start: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let solver = TrustRegion::new(Steihaug::new().with_max_iters(2 * n as u64));
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(start).max_iters(40))
        .run()
        .expect("runs");
    let x = result
        .state()
        .get_best_param()
        .expect("a minimizer")
        .clone();
    let iterations = result.state().get_iter();
    let problem = result.problem.problem.expect("the problem is handed back");
    for (i, xi) in x.iter().enumerate() {
        assert!(
            (xi - 1.0).abs() < 1e-8,
            "x({}) = {xi} after {iterations} iterations",
            i + 1
        );
    }
    // At the minimizer: 2x2 blocks [[802, -400], [-400, 200]].
    let h = problem.hessian_at(&x).unwrap();
    let hx = problem.hessian_at(&vec![1.0; n]).unwrap();
    for r in 0..n {
        for c in 0..n {
            let exact = match (r / 2 == c / 2, r % 2, c % 2) {
                (false, _, _) => 0.0,
                (true, 0, 0) => 802.0,
                (true, 1, 1) => 200.0,
                _ => -400.0,
            };
            assert!(
                (hx[r][c] - exact).abs() <= 1e-12 * exact.abs().max(1.0),
                "H({r},{c}) = {} vs {exact}",
                hx[r][c]
            );
            assert!((h[r][c] - exact).abs() <= 1e-4 * exact.abs().max(1.0));
        }
    }
}

/// Asking a problem built without its Hessian for one is an error, not a
/// panic.
#[test]
fn a_problem_without_its_hessian_says_so() {
    let problem = problem(4);
    let err = problem.hessian_at(&[0.0; 16]).unwrap_err();
    assert!(err.to_string().contains("with_hessian"), "{err}");
}
