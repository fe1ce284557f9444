//! Threaded Jacobians (`cargo bench --bench threads`): the Bratu Jacobian
//! (dim = 400, 400 x 402) by reverse sweeps over row blocks and by tangent
//! sweeps over column blocks, on 1, 2, ... threads up to the machine's
//! cores, with the speed-up over one thread, and the processor time of
//! all threads per Jacobian (equal for every thread count when the threads
//! add no work of their own; on a loaded machine it is the column to read,
//! the wall time depends on the cores the others leave).

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::timing::Sampler;
use common::{bratu_args, engine, sel};

fn main() {
    let bratu = engine("examples/bratu.f");
    let args = bratu_args(&bratu, 400);
    let (of, wrt) = (sel("f"), sel("x,prm"));
    let adjoint = bratu
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let tangent = bratu.tangent(None, &of, &wrt, 8).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts: Vec<usize> = (0..)
        .map(|k| 1usize << k)
        .take_while(|&t| t < cores)
        .collect();
    counts.push(cores);
    println!(
        "{:<30} {:>8} {:>12} {:>9} {:>12}",
        "case", "threads", "time [s]", "speed-up", "cpu [s]"
    );
    let by_rows = |t: usize| {
        adjoint.jacobian_threads(&args, t).unwrap();
    };
    let by_columns = |t: usize| {
        tangent.jacobian_threads(&args, t).unwrap();
    };
    let cases: [(&str, &dyn Fn(usize)); 2] = [
        ("bratu 400 jacobian, adjoint", &by_rows),
        ("bratu 400 jacobian, tangent", &by_columns),
    ];
    for (name, sweep) in cases {
        let mut one = 0.0;
        for &t in &counts {
            let time = Sampler::BENCHMARK.median_of(|| sweep(t));
            if t == 1 {
                one = time;
            }
            const RUNS: usize = 20;
            let before = cpu_seconds();
            for _ in 0..RUNS {
                sweep(t);
            }
            let cpu = (cpu_seconds() - before) / RUNS as f64;
            println!(
                "{name:<30} {t:>8} {time:>12.4e} {:>9.2} {cpu:>12.4e}",
                one / time
            );
        }
    }
}

/// Processor time (user and system) of the whole process so far, in
/// seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the zeroed struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(usage.ru_utime) + t(usage.ru_stime)
}
