//! Scalar-argument helpers: call an entry with named scalar inputs, central
//! differences of one output in one input, relative closeness.

use adjit::engine::{Args, Engine};

/// `a` and `b` agree to `rel`, relative to the larger magnitude (and
/// absolutely near zero).
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// Calls `entry` with the scalar inputs set; returns the argument list.
pub fn run(engine: &Engine, entry: &str, inputs: &[(&str, f64)]) -> Args {
    let p = engine.procedure(Some(entry)).expect("procedure");
    let mut args = p.args();
    for (n, v) in inputs {
        args.set_scalar(n, *v).expect("set");
    }
    p.call(&mut args).expect("call");
    args
}

/// Central difference of output `of` of `entry` in input `wrt`.
pub fn central(engine: &Engine, entry: &str, inputs: &[(&str, f64)], wrt: &str, of: &str) -> f64 {
    let h = 1e-6;
    let at = |delta: f64| {
        let shifted: Vec<(&str, f64)> = inputs
            .iter()
            .map(|&(n, v)| (n, if n == wrt { v + delta } else { v }))
            .collect();
        run(engine, entry, &shifted).scalar(of).expect("output")
    };
    (at(h) - at(-h)) / (2.0 * h)
}
