//! The Rust side of the Python overhead benchmark
//! (`python/benchmarks/overhead.py`): the median time of one gradient of
//! Griewank's function through the Rust API, arrays in and out, as a
//! Python call makes it (a fresh argument list, the size and the point
//! set, one reverse sweep, the gradient returned).
//!
//! `cargo run --release -p adjit-python --example overhead -- N` prints
//! `{"n": N, "seconds": median}`.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Engine, Selection};
use adjit::timing::Sampler;
use std::time::Duration;

fn main() -> Result<(), adjit::engine::Error> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/griewank.f90");
    let engine = Engine::from_files(&[path], Default::default())?;
    let primal = engine.procedure(Some("griewank"))?;
    let (of, wrt) = (Selection::parse_list("c")?, Selection::parse_list("a")?);
    let adjoint = engine.adjoint(None, &of, &wrt, &AdjointOptions::default())?;
    let x: Vec<f64> = (0..n).map(|i| -3.0 + 6.0 * i as f64 / n as f64).collect();
    let sampler = Sampler {
        min_runs: 200,
        max_runs: 20_000,
        budget: Duration::from_secs(2),
    };
    let mut sink = 0.0;
    let seconds = sampler.median(|| -> Result<(), adjit::engine::Error> {
        let mut args = primal.args();
        args.set_scalar("s", n as f64)?;
        args.set_array("a", &x)?;
        let (value, gradient) = adjoint.gradient(&args)?;
        sink += value + gradient[n / 2];
        Ok(())
    })?;
    assert!(sink.is_finite());
    println!("{{\"n\": {n}, \"seconds\": {seconds:e}}}");
    Ok(())
}
