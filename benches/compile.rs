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
        let common::Latency { wall, cpu, all } = common::compile_latency(name, &text, wait, runs);
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
