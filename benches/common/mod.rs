//! Helpers shared by the benchmarks: the bundled examples as engines, and
//! their standard arguments.
#![allow(dead_code)]

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Adjoint, Args, Engine, Options, Selection, Tiering};
use std::path::PathBuf;

/// The example file, outputs, inputs and size parameter of one of the
/// issue's three cases (`griewank`, `product`, `bratu`).
pub fn case(name: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    match name {
        "griewank" => ("examples/griewank.f90", "c", "a", "s"),
        "product" => ("examples/product.f90", "y", "x", "n"),
        "bratu" => ("examples/bratu.f", "f(2)", "x,prm", "dim"),
        other => panic!("unknown case {other}: griewank, product or bratu"),
    }
}

/// Source text to a callable optimized adjoint: front end, adjoint
/// generation and native compilation of case `name` (see [`case`]), from
/// a file already read into memory ([`Tiering::Optimized`]).
pub fn compile_adjoint(name: &str, text: &str) {
    drop(compile_adjoint_with(name, text, Tiering::Optimized));
}

/// [`compile_adjoint`] with `tiering`, returning the adjoint.
pub fn compile_adjoint_with(name: &str, text: &str, tiering: Tiering) -> Adjoint {
    let (file, of, wrt, _) = case(name);
    let sources = [(file.to_string(), text.to_string())];
    let options = Options {
        tiering,
        ..Options::default()
    };
    let engine = Engine::from_sources(&sources, options).expect("compiles");
    engine
        .adjoint(None, &sel(of), &sel(wrt), &AdjointOptions::default())
        .expect("adjoint")
}

/// Times of [`compile_latency`]'s runs in milliseconds, each sorted.
pub struct Latency {
    /// Wall time of each run.
    pub wall: Vec<f64>,
    /// CPU time of the calling thread.
    pub cpu: Vec<f64>,
    /// CPU time of all the process's threads (native compilation runs on
    /// several).
    pub all: Vec<f64>,
}

impl Latency {
    /// The median wall time.
    pub fn median_wall(&self) -> f64 {
        self.wall[self.wall.len() / 2]
    }
}

/// Source text to a callable adjoint of case `name` (see [`case`]) under
/// the default tiering, `runs` times after one untimed run (code pages and
/// caches warm); with `wait`, to its optimized code installed. Only the
/// compilation is timed: each adjoint's optimized tier is finished and
/// the adjoint dropped outside the timed region, so that no background
/// compilation of one run overlaps the next.
pub fn compile_latency(name: &str, text: &str, wait: bool, runs: usize) -> Latency {
    let compile = || {
        let adjoint = compile_adjoint_with(name, text, Tiering::Tiered);
        if wait {
            adjoint.wait_optimized().expect("optimized");
        }
        adjoint
    };
    drop(compile());
    let (mut wall, mut cpu, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let (start, t) = (std::time::Instant::now(), thread_cpu_seconds());
        let p = process_cpu_seconds();
        let adjoint = compile();
        cpu.push((thread_cpu_seconds() - t) * 1e3);
        all.push((process_cpu_seconds() - p) * 1e3);
        wall.push(start.elapsed().as_secs_f64() * 1e3);
        adjoint.wait_optimized().expect("optimized");
    }
    for times in [&mut wall, &mut cpu, &mut all] {
        times.sort_by(f64::total_cmp);
    }
    Latency { wall, cpu, all }
}

/// The text of a bundled file (path relative to the crate).
pub fn read(file: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file))
        .expect("bundled example")
}

/// The engine of a bundled file (path relative to the crate).
pub fn engine(file: &str) -> Engine {
    engine_with(file, Options::default())
}

/// [`engine`] with `options`, whose handles benchmarks time: their
/// optimized code is compiled before they are returned
/// ([`Tiering::Optimized`]).
pub fn engine_with(file: &str, options: Options) -> Engine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    let options = Options {
        tiering: Tiering::Optimized,
        ..options
    };
    Engine::from_files(&[path], options).expect("bundled example compiles")
}

/// A selection list (`f`, `x,prm`).
pub fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// The arguments of `examples/bratu.f` on a grid of `dim` points.
pub fn bratu_args(engine: &Engine, dim: usize) -> Args {
    let mut args = engine.procedure(None).unwrap().args();
    args.set_scalar("dim", dim as f64).unwrap();
    args.set_scalar("parmax", 2.0).unwrap();
    let x: Vec<f64> = (0..dim).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    args
}

/// CPU time of the calling thread in seconds (on a loaded machine a call of
/// a few milliseconds is often descheduled, and its wall time then counts
/// other processes' time slices).
pub fn thread_cpu_seconds() -> f64 {
    cpu_seconds(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process (all its threads) in seconds: the work
/// of a compilation that runs on several threads.
pub fn process_cpu_seconds() -> f64 {
    cpu_seconds(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The reading of the CPU-time clock `clock` in seconds.
fn cpu_seconds(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call writes.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
