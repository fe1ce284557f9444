//! Latency from source text to a callable adjoint for the three
//! cases (`cargo bench --bench compile`): front end, adjoint generation
//! and native compilation. Prints the minimum over several runs (the run
//! least disturbed by other work on the machine) of the wall time, of the
//! calling thread's CPU time and of the CPU time of all threads (native
//! compilation runs on several), and the median wall time. `ADJIT_COMPILE_RUNS`
//! sets the number of runs (default 30).

mod common;

use std::time::Instant;

fn main() {
    let runs: usize = std::env::var("ADJIT_COMPILE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        .max(1);
    println!("source to callable adjoint, {runs} runs (ms)");
    println!(
        "{:<10} {:>10} {:>10} {:>12} {:>12}",
        "case", "min wall", "min cpu", "min cpu all", "median wall"
    );
    for name in ["griewank", "product", "bratu"] {
        let text = common::read(common::case(name).0);
        // One untimed run: code pages and caches warm.
        common::compile_adjoint(name, &text);
        let (mut wall, mut cpu, mut all) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (start, t) = (Instant::now(), common::thread_cpu_seconds());
            let p = common::process_cpu_seconds();
            common::compile_adjoint(name, &text);
            cpu.push((common::thread_cpu_seconds() - t) * 1e3);
            all.push((common::process_cpu_seconds() - p) * 1e3);
            wall.push(start.elapsed().as_secs_f64() * 1e3);
        }
        wall.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        all.sort_by(f64::total_cmp);
        println!(
            "{name:<10} {:>10.2} {:>10.2} {:>12.2} {:>12.2}",
            wall[0],
            cpu[0],
            all[0],
            wall[runs / 2]
        );
    }
}
