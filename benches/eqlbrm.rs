//! Listing 1 of seed 002 (`examples/eqlbrm.f`: equilibria of a
//! continuous-strategy game by Newton's method over nested ARGMAX / ROOT
//! with ADF blocks three deep), timed including compilation, against the
//! times the paper publishes for N = 1000 iterations at each level on a
//! 2.93 GHz i7 870: STALINGRAD 5.83 s, FARFALLEN with TAPENADE 6.97 s,
//! with ADIFOR 8.92 s. `cargo bench --bench eqlbrm` (N = 1000, the
//! paper's, about N³ = 10⁹ innermost evaluations); `ADJIT_EQLBRM_N=100`
//! for a shorter run. The work grows as N³, so the time for N = 1000 is
//! also extrapolated from the shorter run when one is asked for. Runs with
//! N <= 300 (or with `ADJIT_EQLBRM_COMPARE` set) are repeated without
//! skipping repeated loop trips (`Options::fixed_point_exits`) and without
//! the JIT's inliner (`Options::inline`), for comparison; only those run
//! every trip the program asks for, so only they are extrapolated as N³.

use adjit::engine::{Engine, Options, Tiering};
use std::time::Instant;

/// Calls EQLBRM as the listing's PROGRAM does, with the guesses and N as
/// arguments instead of READ.
const DRIVER: &str = "
      SUBROUTINE DRIVER(ASTAR, BSTAR, N)
      EXTERNAL GMBIGA, GMBIGB
      CALL EQLBRM(GMBIGA, GMBIGB, ASTAR, BSTAR, N)
      END
";

/// One timed run: compile (source to callable), run, and the results.
struct Timing {
    compile: f64,
    run: f64,
    astar: f64,
    bstar: f64,
}

/// Compiles the listing with the driver and runs it for `n`, with the
/// JIT's inliner and the skipping of repeated trips on or off.
fn time(sources: &[(String, String)], n: i64, inline: bool, skip: bool) -> Timing {
    let options = Options {
        inline,
        fixed_point_exits: skip,
        // One long call, timed with its compilation, as the paper's runs:
        // it runs where it starts, so compile the optimized code for it.
        tiering: Tiering::Optimized,
        ..Options::default()
    };
    let start = Instant::now();
    let engine = Engine::from_sources(sources, options).expect("compile");
    let p = engine.procedure(Some("driver")).expect("driver");
    let compile = start.elapsed().as_secs_f64();
    let mut args = p.args();
    args.set_scalar("astar", 1.0).expect("astar");
    args.set_scalar("bstar", 1.0).expect("bstar");
    args.set_scalar("n", n as f64).expect("n");
    let run = Instant::now();
    p.call(&mut args).expect("run");
    Timing {
        compile,
        run: run.elapsed().as_secs_f64(),
        astar: args.scalar("astar").unwrap(),
        bstar: args.scalar("bstar").unwrap(),
    }
}

fn main() {
    let n: i64 = std::env::var("ADJIT_EQLBRM_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let listing =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/eqlbrm.f"))
            .expect("examples/eqlbrm.f");
    let sources = [
        ("eqlbrm.f".to_string(), listing),
        ("driver.f".to_string(), DRIVER.to_string()),
    ];
    // Without inlining N = 1000 takes minutes: compare only on request or
    // for short runs.
    let compare = n <= 300 || std::env::var_os("ADJIT_EQLBRM_COMPARE").is_some();
    let all: &[(bool, bool, &str)] = &[
        (true, true, "inlined, repeated trips skipped"),
        (true, false, "inlined, every trip"),
        (false, false, "no inlining, every trip"),
    ];
    let variants = if compare { all } else { &all[..1] };
    for &(inline, skip, label) in variants {
        let t = time(&sources, n, inline, skip);
        println!(
            "eqlbrm N = {n} ({label}): a* = {}, b* = {} (by hand: 50, 50)",
            t.astar, t.bstar
        );
        println!(
            "  compile {:.3} s, run {:.3} s, total {:.3} s",
            t.compile,
            t.run,
            t.compile + t.run
        );
        if n != 1000 && !skip {
            let scale = (1000.0 / n as f64).powi(3);
            println!(
                "  N = 1000 extrapolated (N³): {:.1} s",
                t.compile + t.run * scale
            );
        }
    }
    println!("  published (N = 1000, 2.93 GHz i7 870): STALINGRAD 5.83 s, TAPENADE 6.97 s, ADIFOR 8.92 s");
}
