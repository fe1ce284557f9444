//! Peers benchmark: adjit against gfortran -O2, measured in one run.
//!
//! Builds the bundled examples and the hand-written gradients of
//! `benches/peers/` into a shared library with `gfortran -O2`, loads it, and
//! prints, for each case, the median times and the ratios
//! JIT primal / gfortran primal, adjoint / primal and adjit gradient /
//! hand-written gradient, plus the compile latency from source text to a
//! callable function. Run with `cargo bench --bench peers` (or
//! `scripts/peers.sh`); needs gfortran.

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::engine::{Args, Engine, Options, Selection};
use adjit::timing::Sampler;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Median of repeated runs of `f`.
fn median(f: impl FnMut()) -> f64 {
    Sampler::BENCHMARK.median_of(f)
}

/// The gfortran-compiled peers, loaded with dlopen.
struct Peers {
    handle: *mut libc::c_void,
}

type Griewank = unsafe extern "C" fn(*const i32, *const f64, *mut f64);
type GriewankGrad = unsafe extern "C" fn(*const i32, *const f64, *mut f64, *mut f64);
type Bratu = unsafe extern "C" fn(*const i32, *const i32, *const f64, *const f64, *mut f64);

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

fn engine(root: &Path, file: &str) -> (Engine, f64) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).expect("bundled example");
    let start = Instant::now();
    let engine = Engine::from_sources(&[(path.display().to_string(), text)], Options::default())
        .expect("compiles");
    let f = engine.procedure(None).expect("procedure");
    let latency = start.elapsed().as_secs_f64();
    drop(f);
    (engine, latency)
}

fn adjoint_options() -> AdjointOptions {
    AdjointOptions {
        record: RecordPolicy::Tbr,
        activity: true,
        ..AdjointOptions::default()
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(peers) = Peers::build(&root) else {
        eprintln!("peers: gfortran is not available; nothing measured");
        return;
    };
    println!(
        "{:<28} {:>12} {:>12} {:>9}",
        "case", "adjit [s]", "peer [s]", "ratio"
    );
    let row = |case: &str, ours: f64, peer: f64| {
        println!(
            "{case:<28} {ours:>12.4e} {peer:>12.4e} {:>9.3}",
            ours / peer
        );
    };

    // Griewank: primal vs gfortran, adjoint vs primal, adjoint vs hand-written.
    let (griewank, latency) = engine(&root, "examples/griewank.f90");
    println!(
        "compile latency, griewank source -> callable: {:.3} ms",
        latency * 1e3
    );
    let primal = griewank.procedure(None).unwrap();
    let sel = |s: &str| Selection::parse_list(s).unwrap();
    let adjoint = griewank
        .adjoint(None, &sel("c"), &sel("a"), &adjoint_options())
        .unwrap();
    let g_primal: Griewank = peers.symbol("griewank_");
    let g_grad: GriewankGrad = peers.symbol("griewank_grad_");
    for n in [1_000usize, 1_000_000] {
        let mut args: Args = primal.args();
        args.set_scalar("s", n as f64).unwrap();
        let a: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
        args.set_array("a", &a).unwrap();
        let ours = median(|| primal.call(&mut args).unwrap());
        let (mut c, ni) = (0.0, n as i32);
        // SAFETY: the buffers match griewank(s, a, c): s scalar, a(s), c scalar.
        let peer = median(|| unsafe { g_primal(&ni, a.as_ptr(), &mut c) });
        row(&format!("griewank primal n={n}"), ours, peer);
        let grad = median(|| {
            adjoint.gradient(&args).unwrap();
        });
        row(&format!("griewank adjoint/primal n={n}"), grad, ours);
        let mut g = vec![0.0; n];
        // SAFETY: griewank_grad(s, a, c, g) with g(s).
        let hand = median(|| unsafe { g_grad(&ni, a.as_ptr(), &mut c, g.as_mut_ptr()) });
        row(&format!("griewank adjoint/hand n={n}"), grad, hand);
    }

    // The product function: adjoint vs hand-written gradient.
    let (product, _) = engine(&root, "examples/product.f90");
    let primal = product.procedure(None).unwrap();
    let adjoint = product
        .adjoint(None, &sel("y"), &sel("x"), &adjoint_options())
        .unwrap();
    let p_grad: GriewankGrad = peers.symbol("product_grad_");
    let n = 1_000_000usize;
    let mut args = primal.args();
    args.set_scalar("n", n as f64).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 1.0 + 1e-7 * (i % 13) as f64).collect();
    args.set_array("x", &x).unwrap();
    let ours = median(|| primal.call(&mut args).unwrap());
    let grad = median(|| {
        adjoint.gradient(&args).unwrap();
    });
    row("product adjoint/primal n=1e6", grad, ours);
    let mut g = vec![0.0; n];
    let (mut y, ni) = (0.0, n as i32);
    // SAFETY: product_grad(n, x, y, g) with x(n), g(n).
    let hand = median(|| unsafe { p_grad(&ni, x.as_ptr(), &mut y, g.as_mut_ptr()) });
    row("product adjoint/hand n=1e6", grad, hand);

    // Bratu: primal vs gfortran, adjoint vs primal.
    let (bratu, latency) = engine(&root, "examples/bratu.f");
    println!(
        "compile latency, bratu source -> callable: {:.3} ms",
        latency * 1e3
    );
    let primal = bratu.procedure(None).unwrap();
    let adjoint = bratu
        .adjoint(None, &sel("f(2)"), &sel("x,prm"), &adjoint_options())
        .unwrap();
    let b_primal: Bratu = peers.symbol("bratu_");
    for dim in [10_000usize, 1_000_000] {
        let mut args = primal.args();
        args.set_scalar("dim", dim as f64).unwrap();
        args.set_scalar("parmax", 2.0).unwrap();
        let x: Vec<f64> = (0..dim).map(|i| 1.0 + (i % 5) as f64 * 0.5).collect();
        args.set_array("x", &x).unwrap();
        args.set_array("prm", &[1.3, 0.245828]).unwrap();
        let ours = median(|| primal.call(&mut args).unwrap());
        let prm = [1.3, 0.245828];
        let mut f = vec![0.0; dim];
        let (d, p) = (dim as i32, 2i32);
        // SAFETY: bratu(dim, parmax, x, prm, F) with x(dim), prm(2), F(dim).
        let peer = median(|| unsafe { b_primal(&d, &p, x.as_ptr(), prm.as_ptr(), f.as_mut_ptr()) });
        row(&format!("bratu primal dim={dim}"), ours, peer);
        let grad = median(|| {
            adjoint.gradient(&args).unwrap();
        });
        row(&format!("bratu adjoint/primal dim={dim}"), grad, ours);
    }
}
