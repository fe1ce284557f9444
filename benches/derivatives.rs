//! Derivative costs, measured in one run (`cargo bench --bench derivatives`):
//! tangent / primal and adjoint / primal time ratios, a vector-mode Jacobian
//! against K scalar tangent sweeps and against reverse sweeps over one tape
//! (Bratu, dim = 1000), and the tape each adjoint records with and without
//! TBR and activity analysis.

mod common;

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::timing::Sampler;
use common::{bratu_args, engine, sel};

/// Median of repeated runs of `f`.
fn median(f: impl FnMut()) -> f64 {
    Sampler::BENCHMARK.median_of(f)
}

fn main() {
    let policies = [
        ("TBR + activity", RecordPolicy::Tbr, true),
        ("conservative", RecordPolicy::Conservative, false),
    ];

    // Tangent / primal and adjoint / primal on Griewank and Bratu.
    println!(
        "{:<36} {:>12} {:>12} {:>8}",
        "case", "time [s]", "primal [s]", "ratio"
    );
    let griewank = engine("examples/griewank.f90");
    let primal = griewank.procedure(None).unwrap();
    for n in [1_000usize, 1_000_000] {
        let mut args = primal.args();
        args.set_scalar("s", n as f64).unwrap();
        let a: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
        args.set_array("a", &a).unwrap();
        let tp = median(|| primal.call(&mut args.clone()).unwrap());
        let tangent = griewank.tangent(None, &sel("c"), &sel("a"), 1).unwrap();
        let seed = vec![1.0; n];
        let tt = median(|| {
            tangent.directional(&args, &seed).unwrap();
        });
        println!(
            "{:<36} {tt:>12.4e} {tp:>12.4e} {:>8.2}",
            format!("griewank tangent n={n}"),
            tt / tp
        );
        let adjoint = griewank
            .adjoint(None, &sel("c"), &sel("a"), &AdjointOptions::default())
            .unwrap();
        let ta = median(|| {
            adjoint.gradient(&args).unwrap();
        });
        println!(
            "{:<36} {ta:>12.4e} {tp:>12.4e} {:>8.2}",
            format!("griewank adjoint n={n}"),
            ta / tp
        );
    }

    let bratu = engine("examples/bratu.f");
    let primal = bratu.procedure(None).unwrap();
    for dim in [1_000usize, 1_000_000] {
        let args = bratu_args(&bratu, dim);
        let tp = median(|| primal.call(&mut args.clone()).unwrap());
        let tangent = bratu.tangent(None, &sel("f"), &sel("x,prm"), 1).unwrap();
        let seed = vec![1.0; dim + 2];
        let tt = median(|| {
            tangent.directional(&args, &seed).unwrap();
        });
        println!(
            "{:<36} {tt:>12.4e} {tp:>12.4e} {:>8.2}",
            format!("bratu tangent dim={dim}"),
            tt / tp
        );
        let adjoint = bratu
            .adjoint(
                None,
                &sel("f(2)"),
                &sel("x,prm"),
                &AdjointOptions::default(),
            )
            .unwrap();
        let ta = median(|| {
            adjoint.gradient(&args).unwrap();
        });
        println!(
            "{:<36} {ta:>12.4e} {tp:>12.4e} {:>8.2}",
            format!("bratu adjoint dim={dim}"),
            ta / tp
        );
    }

    // The full Jacobian of Bratu, dim = 1000: vector tangent vs scalar
    // sweeps vs reverse sweeps over one tape.
    println!();
    println!("{:<36} {:>12}", "bratu Jacobian, dim=1000", "time [s]");
    let args = bratu_args(&bratu, 1000);
    let (of, wrt) = (sel("f"), sel("x,prm"));
    let scalar = bratu.tangent(None, &of, &wrt, 1).unwrap();
    let t1 = median(|| {
        scalar.jacobian(&args).unwrap();
    });
    println!("{:<36} {t1:>12.4e}", "tangent, K=1 (1002 sweeps)");
    for k in [4usize, 8, 16] {
        let vector = bratu.tangent(None, &of, &wrt, k).unwrap();
        let tk = median(|| {
            vector.jacobian(&args).unwrap();
        });
        println!(
            "{:<36} {tk:>12.4e}  ({:.2}x faster than K=1)",
            format!("tangent, K={k} ({} sweeps)", 1002usize.div_ceil(k)),
            t1 / tk
        );
    }
    let adjoint = bratu
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let tr = median(|| {
        adjoint.jacobian(&args).unwrap();
    });
    println!(
        "{:<36} {tr:>12.4e}",
        "adjoint, 1 tape + 1000 reverse sweeps"
    );

    // Tape sizes.
    println!();
    println!(
        "{:<28} {:<16} {:>10} {:>10} {:>10} {:>12} {:>10}",
        "case", "recording", "values", "integers", "control", "bytes", "bytes/n"
    );
    for dim in [1_000usize, 10_000] {
        let args = bratu_args(&bratu, dim);
        for (label, record, activity) in policies {
            let adjoint = bratu
                .adjoint(
                    None,
                    &sel("f(2)"),
                    &sel("x,prm"),
                    &AdjointOptions {
                        record,
                        activity,
                        ..AdjointOptions::default()
                    },
                )
                .unwrap();
            let tape = adjoint.record(&args).unwrap();
            let s = tape.stats();
            println!(
                "{:<28} {label:<16} {:>10} {:>10} {:>10} {:>12} {:>10.1}",
                format!("bratu dim={dim}"),
                s.values,
                s.integers,
                s.control,
                s.bytes(),
                s.bytes() as f64 / dim as f64
            );
        }
    }
    let primal = griewank.procedure(None).unwrap();
    let mut args = primal.args();
    args.set_scalar("s", 10_000.0).unwrap();
    args.set_array("a", &vec![1.0; 10_000]).unwrap();
    for (label, record, activity) in policies {
        let adjoint = griewank
            .adjoint(
                None,
                &sel("c"),
                &sel("a"),
                &AdjointOptions {
                    record,
                    activity,
                    ..AdjointOptions::default()
                },
            )
            .unwrap();
        let s = adjoint.record(&args).unwrap().stats();
        println!(
            "{:<28} {label:<16} {:>10} {:>10} {:>10} {:>12} {:>10.1}",
            "griewank n=10000",
            s.values,
            s.integers,
            s.control,
            s.bytes(),
            s.bytes() as f64 / 10_000.0
        );
    }
}
