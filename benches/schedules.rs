//! Time and memory of the reversal schedules (`cargo bench --bench
//! schedules`): the gradient of the explicit heat equation (100 points,
//! 10^4 time steps, the step a call) and of a Bratu objective (10^4 points,
//! each row a call), by the split adjoint (the default), the joint adjoint
//! (every call recorded only in the reverse sweep), the binomially
//! checkpointed adjoint (30 snapshots of the marked loop) and the automatic
//! mode with a tape budget of 1 MiB (the heat loop's tape exceeds it and is
//! checkpointed; Bratu's fits and is recorded). Prints per case
//! the median gradient time, the tape recorded by the forward sweep, the
//! peak of the stacks (sum of each stack's peak, snapshots included; the
//! runtime samples it at stack segment switches and the end of each sweep),
//! the stack memory mapped, the snapshot peak and the recomputed trips.

use adjit::ad::adjoint::{AdjointOptions, Reversal, ReversalSchedule};
use adjit::engine::{Args, Engine, Options, Selection, Tiering};
use adjit::timing::Sampler;

/// The corpus program with the explicit heat equation (`heat`, the step a
/// call of `heat_step`).
const HEAT: &str = include_str!("../tests/corpus/binomial_ckp.f90");

const BRATU: &str = "
subroutine row(i, dim, x, prm, h, f)
  integer :: i, dim
  double precision :: x(dim), prm(2), h, f(dim), e
  e = h*h*prm(1)*exp(x(i)/(1.0d0+prm(2)*x(i)))
  f(i-1) = f(i-1) + x(i) + e/12.0d0
  f(i) = f(i) - 2*x(i) + e/1.2d0
  f(i+1) = x(i) + e/12.0d0
end subroutine row
subroutine bratu(dim, x, prm, obj)
  integer :: dim, i
  double precision :: x(dim), prm(2), obj, f(dim), h
  h = 2.0d0/(dim+1)
  f = 0.0d0
  f(1) = -2*x(1)
  !$AD BINOMIAL-CKP dim-2 30 2
  do i = 2, dim - 1
    call row(i, dim, x, prm, h, f)
  end do
  obj = 0.0d0
  do i = 1, dim
    obj = obj + f(i)**2
  end do
end subroutine bratu
";

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn heat_args(engine: &Engine) -> Args {
    let n = 100;
    let mut args = engine.procedure(Some("heat")).unwrap().args();
    args.set_scalar("n", n as f64).unwrap();
    args.set_scalar("nsteps", 10_000.0).unwrap();
    let u: Vec<f64> = (0..n)
        .map(|i| (std::f64::consts::PI * i as f64 / (n - 1) as f64).sin())
        .collect();
    args.set_array("u", &u).unwrap();
    args.set_scalar("r", 0.2).unwrap();
    args
}

fn bratu_args(engine: &Engine) -> Args {
    let dim = 10_000;
    let mut args = engine.procedure(Some("bratu")).unwrap().args();
    args.set_scalar("dim", dim as f64).unwrap();
    let x: Vec<f64> = (0..dim).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    args
}

/// A benchmark problem: entry, source, output, inputs, arguments.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    fn(&Engine) -> Args,
);

fn main() {
    let cases: [Case; 2] = [
        ("heat", HEAT, "cost", "u,r", heat_args),
        ("bratu", BRATU, "obj", "x,prm", bratu_args),
    ];
    println!(
        "{:<6} {:<13} {:>10} {:>12} {:>12} {:>12} {:>12} {:>11}",
        "case", "schedule", "time ms", "tape B", "peak B", "mapped B", "snapshots B", "recomputed"
    );
    for (name, source, of, wrt, make_args) in cases {
        let engine = Engine::from_sources(
            &[(format!("{name}.f90"), source.to_string())],
            // The schedules are timed in optimized code from the first call.
            Options {
                tiering: Tiering::Optimized,
                ..Options::default()
            },
        )
        .expect("compiles");
        let args = make_args(&engine);
        let plain = AdjointOptions {
            checkpoint: false,
            ..AdjointOptions::default()
        };
        let schedules = [
            ("split", plain, Reversal::Split),
            ("joint", plain, Reversal::Joint),
            (
                "checkpointed",
                AdjointOptions {
                    snapshots: Some(30),
                    ..AdjointOptions::default()
                },
                Reversal::Split,
            ),
            (
                "automatic",
                AdjointOptions {
                    tape_budget: Some(1 << 20),
                    ..AdjointOptions::default()
                },
                Reversal::Split,
            ),
        ];
        for (label, options, reversal) in schedules {
            let options = AdjointOptions {
                reversal,
                ..options
            };
            let schedule = ReversalSchedule::uniform(reversal);
            // A fresh adjoint per schedule: its runtime's peaks and mapped
            // memory are this schedule's alone.
            let adjoint = engine
                .adjoint_scheduled(Some(name), &sel(of), &sel(wrt), &options, &schedule)
                .expect("adjoint");
            let jac = adjoint.jacobian(&args).expect("runs");
            let s = jac.tape.expect("stats");
            let time = Sampler::BENCHMARK.median_of(|| {
                adjoint.gradient(&args).expect("runs");
            });
            println!(
                "{:<6} {:<13} {:>10.2} {:>12} {:>12} {:>12} {:>12} {:>11}",
                name,
                label,
                time * 1e3,
                s.bytes(),
                s.tape_peak_bytes,
                s.tape_mapped_bytes,
                s.snapshots_peak_bytes,
                s.forward_steps_recomputed
            );
        }
    }
}
