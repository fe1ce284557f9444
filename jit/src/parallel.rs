//! Cranelift compilation of a module's lowered functions on several
//! threads.
//!
//! Lowering to Cranelift IR needs the JIT module (it declares the callees
//! and data each function refers to), so it runs on the calling thread,
//! one function after the other. Compiling a lowered function (legalising,
//! optimising, register allocation, emission) needs only the immutable
//! target ISA, and it is most of the time from source text to native code:
//! [`compile_functions`] runs it on up to [`MAX_THREADS`] threads, each
//! taking the largest function left, so that one adjoint's forward and
//! reverse sweeps compile side by side. The machine code of each function
//! is the same as on one thread (compilation of one function does not
//! depend on the others); the caller then hands the bytes and relocations
//! to the JIT module in procedure order.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most threads one module's compilation uses (the calling thread
/// included).
pub const MAX_THREADS: usize = 4;

/// Below this many Cranelift instructions in all, a module compiles on
/// the calling thread only: starting a thread would cost more than it
/// saves.
const PARALLEL_MIN_INSTS: usize = 1500;

/// One lowered function and what compiling it gave.
pub struct Job {
    /// The function, compiled in place (`Context::compiled_code`).
    pub ctx: Context,
    /// Cranelift's reason when it could not compile the function.
    pub error: Option<String>,
}

/// Compiles every function of `jobs` for `isa` in place, on as many
/// threads as the machine has cores or the environment variable
/// `ADJIT_COMPILE_THREADS` says (at most [`MAX_THREADS`], at most one per
/// function, one when the module is small). A failure is recorded in
/// its job; the others still compile.
pub fn compile_functions(isa: &dyn TargetIsa, jobs: &mut [Job]) {
    let sizes: Vec<usize> = jobs.iter().map(|j| j.ctx.func.dfg.num_insts()).collect();
    let total: usize = sizes.iter().sum();
    let cores = std::env::var("ADJIT_COMPILE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = if total < PARALLEL_MIN_INSTS {
        1
    } else {
        cores.min(MAX_THREADS).min(jobs.len())
    };
    if threads <= 1 {
        jobs.iter_mut().for_each(|job| compile_one(isa, job));
        return;
    }
    // Largest first: the longest compilation starts at once and the small
    // ones fill in around it.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let slots: Vec<Mutex<&mut Job>> = jobs.iter_mut().map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Each slot is taken by exactly one thread: the lock never waits.
            let mut job = slots[i].lock().unwrap_or_else(|e| e.into_inner());
            compile_one(isa, &mut job);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
}

/// Compiles one job, recording a failure in it.
fn compile_one(isa: &dyn TargetIsa, job: &mut Job) {
    if let Err(e) = job.ctx.compile(isa, &mut ControlPlane::default()) {
        job.error = Some(format!("{:?}", e.inner));
    }
}
