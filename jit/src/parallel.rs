//! Cranelift compilation of a module's lowered functions on several
//! threads, while the calling thread lowers the next ones.
//!
//! Lowering to Cranelift IR needs the JIT module (it declares the callees
//! and data each function refers to), so it runs on the calling thread,
//! one function after the other. Compiling a lowered function (legalising,
//! optimising, register allocation, emission) needs only the immutable
//! target ISA, and it is most of the time from source text to native code:
//! [`compile_pipelined`] hands each function to a pool of up to
//! [`MAX_THREADS`] threads as soon as it is lowered, and the calling thread
//! joins the pool when it has lowered the last. The caller lowers the
//! largest function first, so that its compilation (an adjoint's reverse
//! sweep) overlaps the lowering and compilation of the others. The machine
//! code of each function is the same as on one thread (compiling one
//! function does not depend on the others); the caller then hands the
//! bytes and relocations to the JIT module in procedure order.

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;
use std::sync::mpsc;
use std::sync::Mutex;

/// The most threads one module's compilation uses (the calling thread
/// included).
pub const MAX_THREADS: usize = 4;

/// Below this many IR instructions in all, a module compiles on the
/// calling thread only: starting a thread would cost more than it saves.
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
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cores.clamp(1, MAX_THREADS).min(functions.max(1))
}

/// Runs `lower`, which hands each function it lowers to the callback it
/// is given, and compiles those functions for `isa` on `threads` threads
/// (the calling thread among them, once `lower` returns). Returns the
/// compiled jobs sorted by [`Job::index`], a compilation failure recorded
/// in its job; or the error of `lower` (after the functions already handed
/// over have compiled).
pub fn compile_pipelined<E>(
    isa: &dyn TargetIsa,
    threads: usize,
    lower: impl FnOnce(&mut dyn FnMut(Job)) -> Result<(), E>,
) -> Result<Vec<Job>, E> {
    let mut done = Vec::new();
    if threads <= 1 {
        lower(&mut |mut job| {
            compile_one(isa, &mut job);
            done.push(job);
        })?;
        return Ok(done);
    }
    let (send, receive) = mpsc::channel::<Job>();
    let receive = Mutex::new(receive);
    let finished = Mutex::new(Vec::new());
    let work = || loop {
        // The lock is held while waiting: the other threads wait on it
        // instead of on the channel, and each job goes to one thread.
        let next = receive.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(mut job) = next else { break };
        compile_one(isa, &mut job);
        finished.lock().unwrap_or_else(|e| e.into_inner()).push(job);
    };
    let lowered = std::thread::scope(|s| {
        for _ in 1..threads {
            // A thread the system refuses leaves its share to the others.
            let _ = std::thread::Builder::new()
                .name("adjit-compile".into())
                .spawn_scoped(s, work);
        }
        let lowered = lower(&mut |job| {
            // The receiver lives until the scope ends: sending cannot fail.
            let _ = send.send(job);
        });
        drop(send);
        work();
        lowered
    });
    lowered?;
    done = finished.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|job| job.index);
    Ok(done)
}

/// Compiles one job, recording a failure in it.
fn compile_one(isa: &dyn TargetIsa, job: &mut Job) {
    if let Err(e) = job.ctx.compile(isa, &mut ControlPlane::default()) {
        job.error = Some(format!("{:?}", e.inner));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::settings;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

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

    fn code(isa: &dyn TargetIsa, threads: usize, sizes: &[usize]) -> Vec<(usize, Vec<u8>)> {
        let jobs = compile_pipelined::<()>(isa, threads, |hand_over| {
            for (i, &k) in sizes.iter().enumerate() {
                hand_over(Job::new(i, lowered(isa, k)));
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
        let isa = cranelift_native::builder()
            .expect("host supported")
            .finish(settings::Flags::new(settings::builder()))
            .expect("isa");
        let sizes = [3, 200, 1, 50, 7, 120];
        let one = code(&*isa, 1, &sizes);
        let many = code(&*isa, 3, &sizes);
        assert_eq!(one.len(), sizes.len());
        assert_eq!(
            one.iter().map(|j| j.0).collect::<Vec<_>>(),
            (0..sizes.len()).collect::<Vec<_>>()
        );
        assert_eq!(one, many);
    }

    #[test]
    fn a_lowering_error_is_returned_after_the_handed_over_functions_compile() {
        let isa = cranelift_native::builder()
            .expect("host supported")
            .finish(settings::Flags::new(settings::builder()))
            .expect("isa");
        for threads in [1, 2] {
            let got = compile_pipelined(&*isa, threads, |hand_over| {
                hand_over(Job::new(0, lowered(&*isa, 4)));
                Err("cannot lower")
            });
            assert_eq!(got.err(), Some("cannot lower"));
        }
    }
}
