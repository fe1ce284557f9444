//! Peers benchmark: adjit against gfortran -O2, measured in one run.
//!
//! Builds the bundled examples and the hand-written derivatives of
//! `benches/peers/` into a shared library with `gfortran -O2`, loads it, and
//! prints one table: for Griewank, the product and Bratu at n = 10^3 and
//! 10^6, the median times of the gfortran primal, the adjit primal, the
//! hand-written gfortran adjoint, the adjit adjoint (one reverse sweep: the
//! gradient, or for Bratu's vector output the vector-Jacobian product of
//! `f(2)`), the adjit scalar tangent (one direction; also compiled with FMA
//! contraction, opt-in as its results may differ by a rounding), the tape bytes per
//! element, and the ratios. Below it, the compile latency from source text
//! to a callable adjoint. Run with `cargo bench --bench peers` (or
//! `scripts/peers.sh`); needs gfortran. `ADJIT_PEERS_CASE=product` (or
//! `griewank`, `bratu`) measures one function only; `ADJIT_PEERS_CLOCK=cpu`
//! times the thread's CPU time instead of the wall clock (the calls; the
//! compile latency is always wall clock, since compilation runs on several
//! threads).

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Args, Engine, Options};
use adjit::timing::Sampler;
use common::{sel, thread_cpu_seconds};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Shortest time one sample of [`median`] lasts: calls shorter than this
/// are timed in batches, so that a microsecond call measures the call and
/// not the clock.
const BATCH_SECONDS: f64 = 200e-6;

/// Median time of one run of `f`: wall time, or with
/// `ADJIT_PEERS_CLOCK=cpu` the CPU time of the calling thread (on a loaded
/// machine a call of a few milliseconds is often descheduled, and its wall
/// time then counts other processes' time slices). Each sample times a
/// batch of runs lasting about [`BATCH_SECONDS`].
fn median(f: impl FnMut()) -> f64 {
    median_on(
        std::env::var("ADJIT_PEERS_CLOCK").as_deref() == Ok("cpu"),
        f,
    )
}

/// [`median`] on the calling thread's CPU time when `cpu`, else on the
/// wall clock.
fn median_on(cpu: bool, mut f: impl FnMut()) -> f64 {
    let origin = std::time::Instant::now();
    let now = || {
        if cpu {
            thread_cpu_seconds()
        } else {
            origin.elapsed().as_secs_f64()
        }
    };
    let t = now();
    f();
    let once = (now() - t).max(1e-9);
    let reps = (BATCH_SECONDS / once).clamp(1.0, 1e5) as usize;
    let s = Sampler::BENCHMARK;
    let mut samples = Vec::new();
    while samples.len() < s.max_runs && (samples.len() < s.min_runs || origin.elapsed() < s.budget)
    {
        let t = now();
        for _ in 0..reps {
            f();
        }
        samples.push((now() - t) / reps as f64);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

/// The gfortran-compiled peers, loaded with dlopen.
struct Peers {
    handle: *mut libc::c_void,
}

type ScalarFn = unsafe extern "C" fn(*const i32, *const f64, *mut f64);
type ScalarGrad = unsafe extern "C" fn(*const i32, *const f64, *mut f64, *mut f64);
type Bratu = unsafe extern "C" fn(*const i32, *const i32, *const f64, *const f64, *mut f64);
type BratuVjp = unsafe extern "C" fn(
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *mut f64,
    *const f64,
    *mut f64,
    *mut f64,
);

impl Peers {
    fn build(root: &Path) -> Option<Peers> {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("libadjit_peers.so");
        let status = Command::new("gfortran")
            .args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(root.join("examples/griewank.f90"))
            .arg(root.join("examples/product.f90"))
            .arg(root.join("examples/bratu.f"))
            .arg(root.join("benches/peers/griewank_grad.f90"))
            .arg(root.join("benches/peers/product_grad.f90"))
            .arg(root.join("benches/peers/bratu_vjp.f"))
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
        let path = CString::new(out.to_str()?).ok()?;
        // SAFETY: dlopen is given a valid NUL-terminated path; the library
        // only contains the Fortran routines compiled above.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        (!handle.is_null()).then_some(Peers { handle })
    }

    fn symbol<T: Copy>(&self, name: &str) -> T {
        let c = CString::new(name).expect("symbol names have no NUL");
        // SAFETY: the handle is a live library; the symbol is looked up by
        // its gfortran name and cast to the signature of that subroutine
        // (all arguments by reference).
        unsafe {
            let p = libc::dlsym(self.handle, c.as_ptr());
            assert!(!p.is_null(), "symbol {name} missing from the peers library");
            std::mem::transmute_copy::<*mut libc::c_void, T>(&p)
        }
    }
}

/// One benchmarked function: its source, selections and argument setup.
struct Case {
    label: &'static str,
    file: &'static str,
    of: &'static str,
    wrt: &'static str,
    /// Sets the arguments for size `n`; returns the input array.
    setup: fn(&mut Args, usize) -> Vec<f64>,
}

/// Times of one row of the table.
struct Row {
    case: String,
    gfortran: f64,
    primal: f64,
    hand: f64,
    adjoint: f64,
    tangent: f64,
    /// The tangent compiled with FMA contraction (`Options::fma_contraction`).
    tangent_fma: f64,
    tape_bytes: f64,
}

fn griewank_setup(args: &mut Args, n: usize) -> Vec<f64> {
    args.set_scalar("s", n as f64).unwrap();
    let a: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
    args.set_array("a", &a).unwrap();
    a
}

fn product_setup(args: &mut Args, n: usize) -> Vec<f64> {
    args.set_scalar("n", n as f64).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 1.0 + 1e-7 * (i % 13) as f64).collect();
    args.set_array("x", &x).unwrap();
    x
}

fn bratu_setup(args: &mut Args, n: usize) -> Vec<f64> {
    args.set_scalar("dim", n as f64).unwrap();
    args.set_scalar("parmax", 2.0).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    x
}

const CASES: [Case; 3] = [
    Case {
        label: "griewank",
        file: "examples/griewank.f90",
        of: "c",
        wrt: "a",
        setup: griewank_setup,
    },
    Case {
        label: "product",
        file: "examples/product.f90",
        of: "y",
        wrt: "x",
        setup: product_setup,
    },
    Case {
        label: "bratu",
        file: "examples/bratu.f",
        of: "f(2)",
        wrt: "x,prm",
        setup: bratu_setup,
    },
];

/// Runs of [`latency`] per case and tier.
const LATENCY_RUNS: usize = 31;

/// Source text to a callable adjoint: parse, lower, differentiate, compile
/// under the default tiering (its baseline code), and to its optimized
/// code installed (waiting for the background compilation). The median
/// wall time of [`LATENCY_RUNS`] runs, each timed alone (always the wall
/// clock: compilation runs on several threads, one per core and the
/// optimized tier's, which one thread's CPU time misses).
fn latency(root: &Path, case: &Case) -> (f64, f64) {
    let text = std::fs::read_to_string(root.join(case.file)).expect("bundled example");
    let median =
        |wait| common::compile_latency(case.label, &text, wait, LATENCY_RUNS).median_wall();
    (median(false), median(true))
}

/// Largest difference between two gradients relative to the largest entry.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

fn measure(peers: &Peers, case: &Case, n: usize) -> Row {
    let engine = common::engine(case.file);
    let primal = engine.procedure(None).unwrap();
    let (of, wrt) = (sel(case.of), sel(case.wrt));
    // An optimizer's loop of gradients: the copy of the adjoint that
    // zeroes the gradient itself pays its compile back.
    let options = AdjointOptions {
        in_place_zeroing: true,
        ..AdjointOptions::default()
    };
    let adjoint = engine.adjoint(None, &of, &wrt, &options).unwrap();
    let mut args = primal.args();
    let input = (case.setup)(&mut args, n);

    let t_primal = median(|| primal.call(&mut args).unwrap());
    // Evaluations into caller-owned buffers with reusable workspaces, as
    // an optimizer's inner loop makes them.
    let nwrt = input.len() + if case.label == "bratu" { 2 } else { 0 };
    let mut grad = vec![0.0; nwrt];
    let mut ws = adjoint.workspace();
    let t_adjoint = median(|| {
        adjoint
            .vjp_into(&mut ws, &mut args, &[1.0], &mut grad)
            .unwrap()
    });
    let direction = vec![1.0; nwrt];
    let mut dout = [0.0];
    let mut time_tangent = |engine: &Engine| {
        let tangent = engine.tangent(None, &of, &wrt, 1).unwrap();
        let mut tws = tangent.workspace();
        median(|| {
            tangent
                .directional_into(&mut tws, &mut args, &direction, &mut dout)
                .unwrap()
        })
    };
    let t_tangent = time_tangent(&engine);
    // The same tangent with FMA contraction (opt-in: results may differ by
    // a rounding), for the latency floor of product chains.
    let fma_options = Options {
        fma_contraction: true,
        ..Options::default()
    };
    let t_tangent_fma = time_tangent(&common::engine_with(case.file, fma_options));
    let tape = adjoint.record(&args).unwrap().stats().bytes() as f64 / n as f64;

    let ni = n as i32;
    let (gfortran, hand, reference) = match case.label {
        "bratu" => {
            let f_primal: Bratu = peers.symbol("bratu_");
            let f_vjp: BratuVjp = peers.symbol("bratu_vjp_");
            let prm = [1.3, 0.245828];
            let mut f = vec![0.0; n];
            let p = 2i32;
            // SAFETY: bratu(dim, parmax, x, prm, F) with x(dim), prm(2), F(dim).
            let gf = median(|| unsafe {
                f_primal(&ni, &p, input.as_ptr(), prm.as_ptr(), f.as_mut_ptr())
            });
            let mut fb = vec![0.0; n];
            fb[1] = 1.0;
            let (mut xb, mut prmb) = (vec![0.0; n], [0.0; 2]);
            let hand = median(|| {
                xb.iter_mut().for_each(|x| *x = 0.0);
                prmb = [0.0; 2];
                // SAFETY: bratu_vjp(dim, parmax, x, prm, F, fb, xb, prmb)
                // with x, F, fb, xb of dim elements and prm, prmb of 2.
                unsafe {
                    f_vjp(
                        &ni,
                        &p,
                        input.as_ptr(),
                        prm.as_ptr(),
                        f.as_mut_ptr(),
                        fb.as_ptr(),
                        xb.as_mut_ptr(),
                        prmb.as_mut_ptr(),
                    )
                }
            });
            xb.extend_from_slice(&prmb);
            (gf, hand, xb)
        }
        _ => {
            let f_primal: ScalarFn = peers.symbol(&format!("{}_", case.label));
            let f_grad: ScalarGrad = peers.symbol(&format!("{}_grad_", case.label));
            let mut y = 0.0;
            // SAFETY: f(n, x, y) with x(n) and a scalar y.
            let gf = median(|| unsafe { f_primal(&ni, input.as_ptr(), &mut y) });
            let mut g = vec![0.0; n];
            // SAFETY: f_grad(n, x, y, g) with x(n), g(n).
            let hand = median(|| unsafe { f_grad(&ni, input.as_ptr(), &mut y, g.as_mut_ptr()) });
            (gf, hand, g)
        }
    };
    let diff = rel_diff(&grad, &reference);
    assert!(
        diff < 1e-8,
        "{} n={n}: adjit's adjoint and the hand-written one differ by {diff:e}",
        case.label
    );
    Row {
        case: format!("{} n=1e{}", case.label, (n as f64).log10().round()),
        gfortran,
        primal: t_primal,
        hand,
        adjoint: t_adjoint,
        tangent: t_tangent,
        tangent_fma: t_tangent_fma,
        tape_bytes: tape,
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(peers) = Peers::build(&root) else {
        eprintln!("peers: gfortran is not available; nothing measured");
        return;
    };
    // `ADJIT_PEERS_CASE=product` (a label) measures one function only.
    let only = std::env::var("ADJIT_PEERS_CASE").ok();
    let cases: Vec<&Case> = CASES
        .iter()
        .filter(|c| only.as_deref().is_none_or(|o| o == c.label))
        .collect();
    let mut rows = Vec::new();
    for case in &cases {
        for n in [1_000usize, 1_000_000] {
            rows.push(measure(&peers, case, n));
        }
    }
    println!(
        "| case | gfortran primal | adjit primal | hand adjoint | adjit adjoint | adjit tangent | adjit tangent (fma) | tape B/elem | primal/gfortran | adjoint/primal | adjoint/hand | tangent/primal | fma tangent/primal |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let t = |s: f64| {
        if s < 1e-3 {
            format!("{:.1} µs", s * 1e6)
        } else {
            format!("{:.2} ms", s * 1e3)
        }
    };
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            r.case,
            t(r.gfortran),
            t(r.primal),
            t(r.hand),
            t(r.adjoint),
            t(r.tangent),
            t(r.tangent_fma),
            r.tape_bytes,
            r.primal / r.gfortran,
            r.adjoint / r.primal,
            r.adjoint / r.hand,
            r.tangent / r.primal,
            r.tangent_fma / r.primal,
        );
    }
    for case in &cases {
        let (callable, optimized) = latency(&root, case);
        println!(
            "compile latency, {} source -> callable adjoint: {:.2} ms (optimized code installed: {:.2} ms)",
            case.label,
            callable,
            optimized
        );
    }
}
