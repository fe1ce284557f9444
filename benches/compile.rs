//! Latency from source text to a callable adjoint for the three
//! cases (`cargo bench --bench compile`): front end, adjoint generation
//! and native compilation. Prints the minimum over several runs (the run
//! least disturbed by other work on the machine) of the wall time, of the
//! calling thread's CPU time and of the CPU time of all threads (native
//! compilation runs on several), and the median wall time. `ADJIT_COMPILE_RUNS`
//! sets the number of runs (default 30). Two lines per case: source to a
//! callable adjoint under the default tiering (its baseline code; the
//! optimized code then compiles in the background), and source to the
//! optimized code installed (waiting for it).

mod common;

use adjit::engine::Tiering;
use std::time::Instant;

fn main() {
    let runs: usize = std::env::var("ADJIT_COMPILE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        .max(1);
    println!("source to callable adjoint, {runs} runs (ms)");
    println!(
        "{:<13} {:>7} {:>10} {:>12} {:>12}",
        "case", "min wall", "min cpu", "min cpu all", "median wall"
    );
    for (name, wait) in ["griewank", "product", "bratu"]
        .into_iter()
        .flat_map(|n| [(n, false), (n, true)])
    {
        let text = common::read(common::case(name).0);
        let compile = || {
            let adjoint = common::compile_adjoint_with(name, &text, Tiering::Tiered);
            if wait {
                adjoint.wait_optimized().expect("optimized");
            }
            adjoint
        };
        // One untimed run: code pages and caches warm.
        drop(compile());
        let (mut wall, mut cpu, mut all) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (start, t) = (Instant::now(), common::thread_cpu_seconds());
            let p = common::process_cpu_seconds();
            let adjoint = compile();
            cpu.push((common::thread_cpu_seconds() - t) * 1e3);
            all.push((common::process_cpu_seconds() - p) * 1e3);
            wall.push(start.elapsed().as_secs_f64() * 1e3);
            // Untimed: the background compilation ends before the next run.
            adjoint.wait_optimized().expect("optimized");
        }
        wall.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        all.sort_by(f64::total_cmp);
        let label = format!("{name}{}", if wait { " opt" } else { "" });
        println!(
            "{label:<13} {:>7.2} {:>10.2} {:>12.2} {:>12.2}",
            wall[0],
            cpu[0],
            all[0],
            wall[runs / 2]
        );
    }
}
