//! Listing 1 of seed 002 (`examples/eqlbrm.f`: equilibria of a
//! continuous-strategy game by Newton's method over nested ARGMAX / ROOT
//! with ADF blocks three deep), timed including compilation, against the
//! times the paper publishes for N = 1000 iterations at each level on a
//! 2.93 GHz i7 870: STALINGRAD 5.83 s, FARFALLEN with TAPENADE 6.97 s,
//! with ADIFOR 8.92 s. `cargo bench --bench eqlbrm` (N = 1000, the
//! paper's, about N³ = 10⁹ innermost evaluations); `ADJIT_EQLBRM_N=100`
//! for a shorter run. The work grows as N³, so the time for N = 1000 is
//! also extrapolated from the shorter run when one is asked for.

use adjit::engine::{Engine, Options};
use std::time::Instant;

/// Calls EQLBRM as the listing's PROGRAM does, with the guesses and N as
/// arguments instead of READ.
const DRIVER: &str = "
      SUBROUTINE DRIVER(ASTAR, BSTAR, N)
      EXTERNAL GMBIGA, GMBIGB
      CALL EQLBRM(GMBIGA, GMBIGB, ASTAR, BSTAR, N)
      END
";

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
    let start = Instant::now();
    let engine = Engine::from_sources(&sources, Options::default()).expect("compile");
    let p = engine.procedure(Some("driver")).expect("driver");
    let compiled = start.elapsed();
    let mut args = p.args();
    args.set_scalar("astar", 1.0).expect("astar");
    args.set_scalar("bstar", 1.0).expect("bstar");
    args.set_scalar("n", n as f64).expect("n");
    let run = Instant::now();
    p.call(&mut args).expect("run");
    let ran = run.elapsed();
    let total = start.elapsed().as_secs_f64();
    let (a, b) = (args.scalar("astar").unwrap(), args.scalar("bstar").unwrap());
    println!("eqlbrm N = {n}: a* = {a}, b* = {b} (by hand: 50, 50)");
    println!(
        "  compile {:.3} s, run {:.3} s, total {total:.3} s",
        compiled.as_secs_f64(),
        ran.as_secs_f64()
    );
    if n != 1000 {
        let scale = (1000.0 / n as f64).powi(3);
        println!(
            "  N = 1000 extrapolated (N³): {:.1} s",
            compiled.as_secs_f64() + ran.as_secs_f64() * scale
        );
    }
    println!("  published (N = 1000, 2.93 GHz i7 870): STALINGRAD 5.83 s, TAPENADE 6.97 s, ADIFOR 8.92 s");
}
