//! Helpers shared by the benchmarks: the bundled examples as engines, and
//! their standard arguments.
#![allow(dead_code)]

use adjit::engine::{Args, Engine, Options, Selection};
use std::path::PathBuf;

/// The engine of a bundled file (path relative to the crate).
pub fn engine(file: &str) -> Engine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    Engine::from_files(&[path], Options::default()).expect("bundled example compiles")
}

/// A selection list (`f`, `x,prm`).
pub fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// The arguments of `examples/bratu.f` on a grid of `dim` points.
pub fn bratu_args(engine: &Engine, dim: usize) -> Args {
    let mut args = engine.procedure(None).unwrap().args();
    args.set_scalar("dim", dim as f64).unwrap();
    args.set_scalar("parmax", 2.0).unwrap();
    let x: Vec<f64> = (0..dim).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    args
}
