//! A fixed-work driver for instruction counting
//! (`valgrind --tool=callgrind target/release/deps/probe-* CASE MODE REPS`):
//! builds the bundled example `CASE` (`griewank`, `product`, `bratu`) at
//! n = 1000 (or `ADJIT_PROBE_N`) and runs `MODE` (`primal`, `adjoint`, `tangent`, or `compile`:
//! source text to a callable optimized adjoint; `compile0`: to a callable
//! baseline-tier adjoint, what a caller of the default tiered engine waits
//! for) `REPS` times. Instructions per call
//! are the difference of two runs with different `REPS` divided by the
//! difference of `REPS`, so that setup cancels. `--fma` compiles with
//! FMA contraction (`Options::fma_contraction`); `--zeroing` makes the
//! adjoint with `AdjointOptions::in_place_zeroing`; `--gradient` runs the
//! adjoint through `Adjoint::gradient_into` (what the peers benchmark
//! times) instead of `Adjoint::vjp_into`. It times nothing. It
//! prints on stderr the minor page faults of the `REPS` calls (the first
//! call lays out the workspace and maps the tape; later calls reuse both,
//! so the count does not grow with `REPS`).

mod common;

use adjit::ad::adjoint::AdjointOptions;
use common::{case, sel};

fn main() {
    let fma = std::env::args().any(|a| a == "--fma");
    let zeroing = std::env::args().any(|a| a == "--zeroing");
    let gradient = std::env::args().any(|a| a == "--gradient");
    let argv: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let [name, mode, reps] = &argv[..] else {
        eprintln!("usage: probe CASE MODE REPS");
        return;
    };
    let reps: usize = reps.parse().expect("REPS is a count");
    let (file, of, wrt, size) = case(name);
    if mode == "compile" || mode == "compile0" {
        let text = common::read(file);
        let tiering = if mode == "compile" {
            adjit::engine::Tiering::Optimized
        } else {
            adjit::engine::Tiering::Baseline
        };
        for _ in 0..reps {
            drop(common::compile_adjoint_with(name, &text, tiering));
        }
        return;
    }
    let options = adjit::engine::Options {
        fma_contraction: fma,
        ..Default::default()
    };
    let engine = common::engine_with(file, options);
    let primal = engine.procedure(None).unwrap();
    let options = AdjointOptions {
        in_place_zeroing: zeroing,
        ..AdjointOptions::default()
    };
    let adjoint = engine.adjoint(None, &sel(of), &sel(wrt), &options).unwrap();
    let tangent = engine.tangent(None, &sel(of), &sel(wrt), 1).unwrap();
    let n: usize = std::env::var("ADJIT_PROBE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut args = if name == "bratu" {
        common::bratu_args(&engine, n)
    } else {
        let mut args = primal.args();
        args.set_scalar(size, n as f64).unwrap();
        // The inputs of the peers benchmark: the product stays finite.
        let x: Vec<f64> = if name == "product" {
            (0..n).map(|i| 1.0 + 1e-7 * (i % 13) as f64).collect()
        } else {
            (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect()
        };
        args.set_array(wrt, &x).unwrap();
        args
    };
    let nwrt = n + if name == "bratu" { 2 } else { 0 };
    let mut grad = vec![0.0; nwrt];
    let mut ws = adjoint.workspace();
    let direction = vec![1.0; nwrt];
    let mut tws = tangent.workspace();
    let mut dout = [0.0];
    let faults = minor_faults();
    for _ in 0..reps {
        match mode.as_str() {
            "primal" => primal.call(&mut args).unwrap(),
            "adjoint" if gradient && name != "bratu" => {
                adjoint
                    .gradient_into(&mut ws, &mut args, &mut grad)
                    .unwrap();
            }
            "adjoint" => adjoint
                .vjp_into(&mut ws, &mut args, &[1.0], &mut grad)
                .unwrap(),
            "tangent" => tangent
                .directional_into(&mut tws, &mut args, &direction, &mut dout)
                .unwrap(),
            other => panic!("unknown mode {other}: primal, adjoint, tangent or compile"),
        }
    }
    eprintln!(
        "minor page faults in {reps} calls: {}",
        minor_faults() - faults
    );
    println!("{:e} {:e}", grad.iter().sum::<f64>(), dout[0]);
}

/// Minor page faults of the process so far (`getrusage`).
fn minor_faults() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` writes a `rusage` into the valid pointer it is
    // given; the zeroed value is a valid `rusage` even if it did not.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    usage.ru_minflt
}
