//! Minimizes MINPACK-2's minimal surface area, written in Fortran
//! (`examples/msa.f`), by argmin's L-BFGS with adjit's adjoint as the
//! gradient, and compares the result with Enneper's surface, the exact
//! minimal surface for this boundary data.
//!
//! `cargo run --release --features argmin --example minimal_surface [N]`

mod enneper;

use argmin::core::{Executor, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(16), |s| s.parse())?;
    let problem = enneper::problem(n)?;
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7).with_tolerance_grad(1e-10)?;
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(vec![0.0; n * n]).max_iters(500))
        .run()?;
    let state = result.state();
    let x = state.get_best_param().expect("a best parameter");
    let error = x
        .iter()
        .zip(enneper::exact(n, n))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!(
        "{n} x {n} grid: area {:.12} after {} iterations ({:?}); max |x - Enneper| = {error:.2e}",
        state.get_best_cost(),
        state.get_iter(),
        state.get_termination_status()
    );
    Ok(())
}
