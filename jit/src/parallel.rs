//! Cranelift compilation of a module's lowered functions on several
//! threads, while the calling thread lowers the next ones.
//!
//! Lowering to Cranelift IR needs the JIT module (it declares the callees
//! and data each function refers to), so it runs on the calling thread,
//! one function after the other. Compiling a lowered function (legalising,
//! optimising, register allocation, emission) needs only the immutable
//! target ISA, and it is most of the time from source text to native code:
//! [`compile_pipelined`] hands each function to the process's compile
//! threads as soon as it is lowered, and the calling thread takes the
//! functions no thread has taken yet when it has lowered the last. The
//! caller lowers the largest function first, so that its compilation (an
//! adjoint's reverse sweep) overlaps the lowering and compilation of the
//! others. The machine code of each function is the same as on one thread
//! (compiling one function does not depend on the others); the caller
//! then hands the bytes and relocations to the JIT module in procedure
//! order.
//!
//! The compile threads are started once per process, at the first
//! compilation that uses them, and then wait for work: starting a thread
//! per compilation cost about as much as lowering a small function, on
//! the path from source text to a callable procedure.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::Context;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The most threads one module's compilation uses (the calling thread
/// included).
pub const MAX_THREADS: usize = 4;

/// Below this many IR instructions in all, a module compiles on the
/// calling thread only: handing work to another thread would cost more
/// than it saves.
pub const PARALLEL_MIN_INSTS: usize = 100;

/// One lowered function and what compiling it gave.
pub struct Job {
    /// Which function this is (the caller's numbering).
    pub index: usize,
    /// The function, compiled in place (`Context::compiled_code`).
    pub ctx: Context,
    /// Cranelift's reason when it could not compile the function.
    pub error: Option<String>,
}

impl Job {
    /// A lowered, not yet compiled function.
    pub fn new(index: usize, ctx: Context) -> Self {
        Job {
            index,
            ctx,
            error: None,
        }
    }
}

/// How many threads should compile a module of `insts` IR instructions in
/// `functions` functions: as many as the machine has cores or the
/// environment variable `ADJIT_COMPILE_THREADS` says, at most
/// [`MAX_THREADS`] and at most one per function; one for a small module.
pub fn threads_for(insts: usize, functions: usize) -> usize {
    if insts < PARALLEL_MIN_INSTS {
        return 1;
    }
    let cores = std::env::var("ADJIT_COMPILE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(cores);
    cores.clamp(1, MAX_THREADS).min(functions.max(1))
}

/// The machine's cores, asked once (the question reads the process's
/// control-group files).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `lower`, which hands each function it lowers to the callback it
/// is given, and compiles those functions for `isa` on `threads` threads
/// (the calling thread among them, once `lower` returns). Returns the
/// compiled jobs sorted by [`Job::index`], a compilation failure (or a
/// panic of Cranelift) recorded in its job; or the error of `lower`
/// (after the functions already handed over have compiled).
pub fn compile_pipelined<E>(
    isa: &OwnedTargetIsa,
    threads: usize,
    lower: impl FnOnce(&mut dyn FnMut(Job)) -> Result<(), E>,
) -> Result<Vec<Job>, E> {
    if threads <= 1 {
        let mut done = Vec::new();
        lower(&mut |mut job| {
            compile_one(&**isa, &mut job);
            done.push(job);
        })?;
        return Ok(done);
    }
    let pool = pool(threads - 1);
    let batch = Arc::new(Batch {
        isa: isa.clone(),
        state: Mutex::new(BatchState::default()),
        all_done: Condvar::new(),
    });
    let lowered = lower(&mut |job| {
        batch.lock().queued.push_back(job);
        // A send fails only if every compile thread is gone; the calling
        // thread then compiles the job below.
        let _ = pool.send(batch.clone());
    });
    batch.work();
    let mut state = batch.lock();
    while state.compiling > 0 {
        state = batch
            .all_done
            .wait(state)
            .unwrap_or_else(|e| e.into_inner());
    }
    lowered?;
    let mut done = std::mem::take(&mut state.finished);
    done.sort_by_key(|job| job.index);
    Ok(done)
}

/// One compilation's functions, shared by its calling thread and the
/// compile threads that take up its work.
struct Batch {
    isa: OwnedTargetIsa,
    state: Mutex<BatchState>,
    /// Signalled when the last function being compiled is done.
    all_done: Condvar,
}

#[derive(Default)]
struct BatchState {
    /// Lowered functions no thread has taken yet.
    queued: VecDeque<Job>,
    /// Functions being compiled.
    compiling: usize,
    finished: Vec<Job>,
}

impl Batch {
    fn lock(&self) -> MutexGuard<'_, BatchState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Compiles queued functions until none is left.
    fn work(&self) {
        loop {
            let mut job = {
                let mut state = self.lock();
                let Some(job) = state.queued.pop_front() else {
                    return;
                };
                state.compiling += 1;
                job
            };
            compile_one(&*self.isa, &mut job);
            let mut state = self.lock();
            state.finished.push(job);
            state.compiling -= 1;
            if state.compiling == 0 {
                self.all_done.notify_all();
            }
        }
    }
}

/// Where a compilation tells the compile threads it has work.
type Wake = mpsc::Sender<Arc<Batch>>;

/// The compile threads' end of the queue: the batches with work.
type Work = Mutex<mpsc::Receiver<Arc<Batch>>>;

/// The queue of the process's compile threads, with at least `threads`
/// of them started (up to [`MAX_THREADS`] - 1; a thread the system
/// refuses leaves its share to the calling threads).
fn pool(threads: usize) -> &'static Wake {
    static POOL: OnceLock<(Wake, Work)> = OnceLock::new();
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    let (send, receive) = POOL.get_or_init(|| {
        let (send, receive) = mpsc::channel();
        (send, Mutex::new(receive))
    });
    let wanted = threads.min(MAX_THREADS - 1);
    while STARTED.load(Ordering::Acquire) < wanted {
        if STARTED.fetch_add(1, Ordering::AcqRel) >= wanted {
            STARTED.fetch_sub(1, Ordering::AcqRel);
            break;
        }
        let started = std::thread::Builder::new()
            .name("adjit-compile".into())
            .spawn(move || loop {
                // The lock is held while waiting: the other threads wait on
                // it instead of on the channel, and each batch's wake-up
                // goes to one thread.
                let next = receive.lock().unwrap_or_else(|e| e.into_inner()).recv();
                let Ok(batch) = next else { break };
                batch.work();
            });
        if started.is_err() {
            break;
        }
    }
    send
}

/// Compiles one job, recording a failure, or a panic of Cranelift, in it.
fn compile_one(isa: &dyn TargetIsa, job: &mut Job) {
    let ctx = &mut job.ctx;
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ctx.compile(isa, &mut ControlPlane::default())
            .map(|_| ())
            .map_err(|e| format!("{:?}", e.inner))
    }));
    job.error = match compiled {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some("internal: the code generator panicked".into()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::settings;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// The host's target ISA with default settings.
    fn host_isa() -> OwnedTargetIsa {
        cranelift_native::builder()
            .expect("host supported")
            .finish(settings::Flags::new(settings::builder()))
            .expect("isa")
    }

    /// A function returning `k` through a chain of `k` additions.
    fn lowered(isa: &dyn TargetIsa, k: usize) -> Context {
        let mut sig = Signature::new(isa.default_call_conv());
        sig.returns.push(AbiParam::new(types::I64));
        let mut func = Function::with_name_signature(UserFuncName::user(0, k as u32), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let entry = b.create_block();
        b.switch_to_block(entry);
        let mut x = b.ins().iconst(types::I64, 0);
        for _ in 0..k {
            x = b.ins().iadd_imm_s(x, 1);
        }
        b.ins().return_(&[x]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
        Context::for_function(func)
    }

    fn code(isa: &OwnedTargetIsa, threads: usize, sizes: &[usize]) -> Vec<(usize, Vec<u8>)> {
        let jobs = compile_pipelined::<()>(isa, threads, |hand_over| {
            for (i, &k) in sizes.iter().enumerate() {
                hand_over(Job::new(i, lowered(&**isa, k)));
            }
            Ok(())
        })
        .expect("lowering succeeds");
        jobs.iter()
            .map(|job| {
                assert!(job.error.is_none());
                let code = job.ctx.compiled_code().expect("compiled");
                (job.index, code.code_buffer().to_vec())
            })
            .collect()
    }

    #[test]
    fn several_threads_give_the_same_code_in_the_callers_order() {
        let isa = host_isa();
        let sizes = [3, 200, 1, 50, 7, 120];
        let one = code(&isa, 1, &sizes);
        let many = code(&isa, 3, &sizes);
        assert_eq!(one.len(), sizes.len());
        assert_eq!(
            one.iter().map(|j| j.0).collect::<Vec<_>>(),
            (0..sizes.len()).collect::<Vec<_>>()
        );
        assert_eq!(one, many);
    }

    #[test]
    fn a_lowering_error_is_returned_after_the_handed_over_functions_compile() {
        let isa = host_isa();
        for threads in [1, 2] {
            let got = compile_pipelined(&isa, threads, |hand_over| {
                hand_over(Job::new(0, lowered(&*isa, 4)));
                Err("cannot lower")
            });
            assert_eq!(got.err(), Some("cannot lower"));
        }
    }

    #[test]
    fn compilations_on_several_threads_at_once_share_the_compile_threads() {
        let isa = host_isa();
        let sizes = [90, 3, 40, 200, 1];
        let alone = code(&isa, 1, &sizes);
        std::thread::scope(|s| {
            let runs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..5).map(|_| code(&isa, 3, &sizes)).collect::<Vec<_>>()))
                .collect();
            for run in runs {
                for got in run.join().expect("no panic") {
                    assert_eq!(got, alone);
                }
            }
        });
    }
}
