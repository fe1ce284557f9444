//! The seeds' published cases from the bundled Fortran files: Naumann's
//! example (seed 000), the Bratu Jacobian (seed 001 / seed 003 appendix A),
//! and the gradient of the product function (seed 000) for n = 10^6.
//!
//! `cargo run --release --example seeds`

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Engine, Error, Options, Selection};
use std::time::Instant;

fn example(file: &str) -> Result<Engine, Error> {
    let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
    Engine::from_files(&[path], Options::default())
}

fn main() -> Result<(), Error> {
    let sel = Selection::parse_list;

    // Naumann & Riehme: x = -0.949, gradient (0.079, 1.577).
    let naumann = example("naumann.f90")?;
    let adjoint = naumann.adjoint(None, &sel("x")?, &sel("x,y")?, &AdjointOptions::default())?;
    let mut args = adjoint.args();
    args.apply_settings(&["x=-5", "y=-0.5"])?;
    let (x, gradient) = adjoint.gradient(&args)?;
    println!("naumann: x = {x}, gradient = {gradient:?}");

    // Bratu: the 7 x 9 Jacobian, by reverse sweeps over one tape. The
    // inputs are single-precision literals, as in the seed's driver.
    let bratu = example("bratu.f")?;
    let adjoint = bratu.adjoint(None, &sel("f")?, &sel("x,prm")?, &AdjointOptions::default())?;
    let mut args = adjoint.args();
    args.apply_settings(&["dim=7", "parmax=2"])?;
    let single = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    args.set_array("x", &single(&[1.72, 3.45, 4.16, 4.87, 4.16, 3.45, 1.72]))?;
    args.set_array("prm", &single(&[1.3, 0.245828]))?;
    let jacobian = adjoint.jacobian(&args)?;
    println!("bratu Jacobian (rows f(1..7), columns x(1..7), prm(1..2)):");
    for r in 0..jacobian.rows() {
        let row: Vec<String> = (0..jacobian.cols())
            .map(|c| format!("{:6.2}", jacobian.get(r, c)))
            .collect();
        println!("  {}", row.join(" "));
    }

    // The product of 10^6 numbers: finite differences would need 2 * 10^6
    // evaluations; the adjoint needs one sweep.
    let product = example("product.f90")?;
    let adjoint = product.adjoint(None, &sel("y")?, &sel("x")?, &AdjointOptions::default())?;
    let mut args = adjoint.args();
    let n = 1_000_000;
    args.set_scalar("n", n as f64)?;
    args.set_array(
        "x",
        &(0..n)
            .map(|i| 1.0 + 1e-7 * (i % 13) as f64)
            .collect::<Vec<_>>(),
    )?;
    let start = Instant::now();
    let (y, gradient) = adjoint.gradient(&args)?;
    println!(
        "product: y = {y}, dy/dx(1) = {}, gradient of 10^6 inputs in {:.1} ms",
        gradient[0],
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
