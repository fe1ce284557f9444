//! Lowering of a code-list [`ir::Module`] to native code with Cranelift, and
//! the [`CompiledModule`] that owns the result.
//!
//! Every procedure becomes `extern "C" fn(args: *const ArgSlot, rt: *mut
//! RuntimeCtx) -> i32` (status 0 = success). Calls between procedures of one
//! module are direct native calls. Scalar locals and scalar parameters live in
//! Cranelift variables (parameters are loaded at entry and written back at
//! return and around calls); arrays are addressed column-major from bounds
//! evaluated once at entry. User errors (bounds, division by zero, STOP, pop
//! of an empty stack, argument size) branch to one cold block per procedure
//! that records the error in the runtime context and returns status 1; no
//! Cranelift trap is ever emitted for them.
//!
//! Agreement with the interpreter (`adjit_ir::interp`) is bit for bit on
//! successful calls (checked by `tests/jit_vs_interp.rs`). Documented
//! differences (none affects a successful call of conforming Fortran):
//!
//! * scalar parameters live in registers between calls, so a procedure that
//!   writes one scalar parameter and reads an aliased one (`call f(x, x)`, or
//!   `x` aliasing an element of an array parameter) sees the old value until
//!   the next call or return (Fortran forbids such aliasing);
//! * when a call fails, scalar arguments hold their values as of the last
//!   inner call (or entry) rather than the last store;
//! * with bounds checks off, out-of-range subscripts are not caught (the
//!   interpreter still checks the storage).
//!
//! A module compiles in one tier or two ([`Tiering`]): the optimized code
//! (every IR optimisation, Cranelift's optimizing settings), the baseline
//! code (only the IR passes that decide results and error reports, and
//! Cranelift's quickest settings: [`JitOptions::baseline`]), or the
//! baseline code at once and the optimized code on a background thread
//! from the first call on, which calls switch to once it is installed. Both tiers give the same
//! results and errors bit for bit.
//!
//! Local arrays of constant size up to 1 KiB per procedure live in the native
//! frame; the others come from the runtime's arena (released on return).
//! Calls nest at most [`MAX_CALL_DEPTH`] deep, checked at each call site.

use crate::globals::{global_bytes, GlobalFrame, GlobalStore, GlobalsGuard};
use crate::ir::shape;
use crate::ir::special::Special;
use crate::ir::Buffer;
use crate::ir::RuntimeError;
use crate::ir::{
    self, BinaryOp, Bound, CallArg, CharBase, CharRef, CmpOp, Const, Inst, IoOp, ProcId, Rounding,
    RuntimeErrorKind, StackKind, Storage, Terminator, Type, UnaryOp, VarId, MAX_CALL_DEPTH,
};
use crate::libm;
use crate::runtime::{
    self, char_search_code, code, layout, ArgSlot, ErrorSlot, Runtime, RuntimeCtx,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, InstBuilder, MemFlagsData, Signature, StackSlot,
    StackSlotData, StackSlotKind, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module, ModuleReloc};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Options of the Cranelift lowering.
#[derive(Clone, Debug)]
pub struct JitOptions {
    /// Check array subscripts and substrings against their bounds (default
    /// true). Argument sizes are always checked, and so is every element
    /// reference against its variable's storage: turning bounds checks off
    /// drops the per-dimension checks, never the storage check that
    /// protects the host.
    pub bounds_checks: bool,
    /// Count loop back-edges so that a call can be stopped by the time
    /// limit of its [`crate::runtime::Limits`] (default false: no code is
    /// emitted for it, and a time limit has no effect).
    pub time_checks: bool,
    /// Inline small non-recursive callees before lowering (default true;
    /// see [`crate::opt::inline`]). Off, every call stays a native call,
    /// which counts toward the call-depth limit.
    pub inline: bool,
    /// Version counted loops (default true; see [`crate::opt::licm`]):
    /// one range test before a loop replaces the bounds checks of its
    /// affine element references, and invariant element loads leave the
    /// loop. Off, every reference is checked where it is made. Results and
    /// error messages are the same either way.
    pub version_loops: bool,
    /// In a counted loop whose body is a pure function of the state it
    /// carries, skip the trips left once that state repeats bit for bit
    /// (default true; see [`crate::opt::fixpoint`]): the skipped trips
    /// would repeat earlier ones exactly, so results are the same either
    /// way, the DO variable included.
    pub fixed_point_exits: bool,
    /// How much Cranelift optimizes (default [`CompileSpeed::Optimized`]).
    pub compile_speed: CompileSpeed,
    /// Lower a strong-zero product `select(p == 0 or d == 0, +0, p * d)`
    /// as the product and a rarely taken branch to the exact select when
    /// the product is zero or NaN (default false). The same bits either
    /// way; faster where products are rarely zero (tangents along dense
    /// directions), slower and larger where they often are (adjoints
    /// seeded at one output, whose adjoints are mostly zero).
    pub branch_on_zero_products: bool,
    /// Decide the strong-zero guards of every stretch of code together, by
    /// one test that none of their products is zero or NaN, with the
    /// guarded code as the cold path (default false; see
    /// [`crate::opt::speculate`]). The same bits either way; faster where
    /// products are rarely zero, slower where they often are.
    pub speculate_guards: bool,
    /// Like [`Self::speculate_guards`] for the stretches whose guards each
    /// multiply a scalar carried from one loop trip to the next
    /// ([`crate::opt::speculate::Scope::Carried`]: a product chain's running
    /// adjoint) only (default true). The same bits either way. With
    /// [`Self::branch_on_zero_products`] (tangent code) such a stretch ends
    /// before the first reader of a guard
    /// ([`crate::opt::speculate::Scope::CarriedGuards`]), or, with
    /// [`Self::contract_fma`], after the sums fused with a guard
    /// ([`crate::opt::speculate::Scope::CarriedFused`]).
    pub speculate_carried_guards: bool,
    /// Lower float sums `a + p*d` and differences `a - p*d` whose product
    /// is used only there as one fused multiply-add (default false; see
    /// [`crate::opt::fma`]). Opt-in because it changes results: the fused
    /// operation rounds once where the product and the sum round twice, so
    /// a result may differ from the unfused one (and from the interpreter's)
    /// by a rounding of the sum. Strong-zero guards keep their meaning: a
    /// guarded product is fused only under [`Self::branch_on_zero_products`],
    /// whose exact cold path adds the guarded value unfused.
    pub contract_fma: bool,
    /// Which code is compiled when (default [`Tiering::Optimized`]: the
    /// optimized code only, before `compile` returns).
    pub tiering: Tiering,
}

impl JitOptions {
    /// The options of the baseline tier (tier 0) of these: the passes
    /// that decide results and error reports (inlining, which decides
    /// call depths and the procedure an error names; FMA contraction and,
    /// with it, the speculation that chooses which sums fuse) and none of
    /// those that only make code faster and larger (loop versioning, the
    /// skipping of repeated trips, speculation of strong-zero guards), with
    /// Cranelift's quickest settings ([`CompileSpeed::Fast`]). The same
    /// results and errors as `self`, bit for bit, from about half the
    /// compile work.
    pub fn baseline(&self) -> JitOptions {
        JitOptions {
            version_loops: false,
            fixed_point_exits: false,
            speculate_guards: self.speculate_guards && self.contract_fma,
            speculate_carried_guards: self.speculate_carried_guards && self.contract_fma,
            compile_speed: CompileSpeed::Fast,
            tiering: Tiering::Baseline,
            ..self.clone()
        }
    }
}

/// When a module's optimized code is compiled. Every choice gives the
/// same results and errors, bit for bit; only compile latency and code
/// speed differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tiering {
    /// The optimized code only, compiled before `compile` returns.
    #[default]
    Optimized,
    /// The baseline code only ([`JitOptions::baseline`]): the quickest
    /// compilation, for code run once.
    Baseline,
    /// The baseline code before `compile` returns, and the optimized code
    /// on a background thread, queued by the first call (a module never
    /// called never compiles twice) and installed for the calls that begin
    /// once it is ready (a call under way finishes in the code it began
    /// in). See [`CompiledModule::wait_optimized`], which queues it too.
    Tiered,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            bounds_checks: true,
            time_checks: false,
            inline: true,
            version_loops: true,
            fixed_point_exits: true,
            compile_speed: CompileSpeed::default(),
            branch_on_zero_products: false,
            speculate_guards: false,
            speculate_carried_guards: true,
            contract_fma: false,
            tiering: Tiering::Optimized,
        }
    }
}

/// The trade of compile time against code speed in Cranelift's settings.
/// Both levels compile the same checks and give the same results; only
/// the machine code differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompileSpeed {
    /// Optimized code (`opt_level=speed`, the backtracking register
    /// allocator): for code that runs long or often.
    #[default]
    Optimized,
    /// The quickest compilation (`opt_level=none`, the single-pass register
    /// allocator, no unwind tables): slower code with more spills, for code
    /// run once or a few times, such as a fuzzer's inputs.
    Fast,
}

/// Why a module could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// The procedure being compiled, if any.
    pub proc: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.proc {
            Some(p) => write!(f, "cannot compile `{p}`: {}", self.message),
            None => write!(f, "cannot compile module: {}", self.message),
        }
    }
}

impl std::error::Error for CompileError {}

fn err<T>(message: impl Into<String>) -> Result<T, CompileError> {
    Err(CompileError {
        proc: None,
        message: message.into(),
    })
}

/// The argument buffers of one call, one per parameter in order: a slice
/// of buffers, or storage gathered from several places (a derivative
/// workspace's companions beside the caller's primal arguments, a
/// caller's gradient slice) that the call reads and writes in place, with
/// nothing moved or copied.
pub trait ArgBuffers {
    /// Number of arguments.
    fn count(&self) -> usize;
    /// The storage of argument `i` (`i < count()`).
    fn arg(&mut self, i: usize) -> ArgRef<'_>;

    /// Writes the native slot of every argument into `slots` (`count()`
    /// entries) in one pass, and returns whether their element types are
    /// `types`, in order (a `false` makes the caller check each argument).
    /// An implementation that knows where its storage is may override it
    /// with a tighter loop; it must give the same slots and answer.
    #[inline]
    fn fill_slots(&mut self, slots: &mut [ArgSlot], types: &[ir::Type]) -> bool {
        let mut typed = types.len() == slots.len();
        for (i, slot) in slots.iter_mut().enumerate() {
            let (ty, arg) = self.arg(i).typed_slot();
            typed &= types.get(i) == Some(&ty);
            *slot = arg;
        }
        typed
    }
}

impl ArgBuffers for [Buffer] {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn arg(&mut self, i: usize) -> ArgRef<'_> {
        ArgRef::Buffer(&mut self[i])
    }
}

/// The storage of one argument as [`ArgBuffers`] hands it out: a whole
/// buffer, or a caller's `F64` slice (such as the gradient an adjoint
/// accumulates into directly, in place of a companion buffer).
pub enum ArgRef<'a> {
    /// A buffer of any type.
    Buffer(&'a mut Buffer),
    /// `REAL(8)` storage owned by the caller.
    F64(&'a mut [f64]),
}

impl ArgRef<'_> {
    /// The element type.
    #[inline]
    pub fn ty(&self) -> ir::Type {
        match self {
            ArgRef::Buffer(b) => b.ty(),
            ArgRef::F64(_) => ir::Type::F64,
        }
    }

    /// The element type and the argument slot of a native call (the
    /// storage's address and length, valid while the borrow lives), read
    /// in one match.
    #[inline]
    pub fn typed_slot(&mut self) -> (ir::Type, ArgSlot) {
        match self {
            ArgRef::F64(v) => (ir::Type::F64, ArgSlot::of(v)),
            ArgRef::Buffer(b) => buffer_slot(b),
        }
    }
}

/// The element type of `buffer` and its argument slot of a native call
/// (its storage's address and length, valid while the borrow lives).
#[inline]
pub fn buffer_slot(buffer: &mut Buffer) -> (ir::Type, ArgSlot) {
    match buffer {
        Buffer::F64(v) => (ir::Type::F64, ArgSlot::of(v)),
        Buffer::F32(v) => (ir::Type::F32, ArgSlot::of(v)),
        Buffer::I32(v) => (ir::Type::I32, ArgSlot::of(v)),
        Buffer::I64(v) => (ir::Type::I64, ArgSlot::of(v)),
        Buffer::Bool(v) => (ir::Type::Bool, ArgSlot::of(v)),
        Buffer::Char(v) => (ir::Type::Char, ArgSlot::of(v)),
    }
}

/// The native signature of every compiled procedure.
pub type RawProcFn = unsafe extern "C" fn(args: *const ArgSlot, rt: *mut RuntimeCtx) -> i32;

/// One compilation of a module (a tier): its native code and the IR it
/// was compiled from, which locates that code's errors. Freed on drop.
struct Tier {
    jit: Mutex<Option<JITModule>>,
    entries: Vec<usize>,
    module: ir::Module,
    /// Where the inlined code of `module` came from (for error reports).
    origins: crate::opt::inline::Origins,
    /// Per procedure of `module`, the element types of its parameters when
    /// the host may call it (see [`shape::host_param_types`]): a call's
    /// buffers are checked against them with one comparison each, and by
    /// the full [`shape::check_argument_buffers`] only when one differs.
    param_types: Vec<Option<Box<[ir::Type]>>>,
    _literals: Vec<Box<[u8]>>,
    /// Whether it was compiled with the optimizing options (not
    /// [`JitOptions::baseline`]).
    optimized: bool,
}

impl Drop for Tier {
    fn drop(&mut self) {
        let jit = self.jit.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(jit) = jit {
            // SAFETY: no function pointer outlives the tier: its owner
            // ([`CompiledModule`], and for the optimized tier the compiling
            // thread) drops it last, and calls borrow the owner.
            unsafe { jit.free_memory() };
        }
    }
}

// SAFETY: code and literal memory are immutable after finalization; the
// JIT module is only touched on drop (through its lock).
unsafe impl Sync for Tier {}
// SAFETY: all owned memory moves with the value; see the Sync note.
unsafe impl Send for Tier {}

/// The optimized tier of a [`Tiering::Tiered`] module, compiled on a
/// background thread and shared with it. The compilation is queued by
/// the module's first call (or [`CompiledModule::wait_optimized`]), not
/// when the module is compiled: a module never called never compiles
/// twice, and the compilation of the optimized code does not compete for
/// the cores with the baseline compilations of modules made right after.
struct Upgrade {
    /// What to compile, until the compilation is queued.
    pending: Mutex<Option<PendingTier>>,
    /// Set once the compilation is queued (or could not be).
    queued: AtomicBool,
    /// The optimized tier, once compiled: set once, never replaced.
    tier: OnceLock<Tier>,
    /// Set when the module drops: the compilation stops at the next
    /// procedure.
    cancelled: AtomicBool,
    /// How the compilation ended, once it has.
    finished: Mutex<Option<Result<(), CompileError>>>,
    /// Signalled when `finished` is set.
    done: Condvar,
}

/// The inputs of an optimized tier's compilation, kept until it is queued.
struct PendingTier {
    module: Arc<ir::Module>,
    options: JitOptions,
    globals: usize,
    wanted: Option<Vec<bool>>,
}

impl Upgrade {
    /// The upgrade of a module to `module` compiled with `options`
    /// (optimized), queued by the first [`Upgrade::queue`].
    fn new(
        module: Arc<ir::Module>,
        options: JitOptions,
        globals: usize,
        wanted: Option<Vec<bool>>,
    ) -> Arc<Upgrade> {
        Arc::new(Upgrade {
            pending: Mutex::new(Some(PendingTier {
                module,
                options,
                globals,
                wanted,
            })),
            queued: AtomicBool::new(false),
            tier: OnceLock::new(),
            cancelled: AtomicBool::new(false),
            finished: Mutex::new(None),
            done: Condvar::new(),
        })
    }

    /// Queues the compilation for the background thread
    /// ([`background_queue`]) unless it already is: one atomic load once
    /// it is.
    fn queue(self: &Arc<Self>) {
        if self.queued.load(Ordering::Acquire) {
            return;
        }
        let Some(PendingTier {
            module,
            options,
            globals,
            wanted,
        }) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        self.queued.store(true, Ordering::Release);
        let shared = self.clone();
        let work = move || {
            // A panic must still end the compilation, or its waiters would
            // wait forever.
            let tier = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compile_tier(
                    &module,
                    &options,
                    globals,
                    wanted.as_deref(),
                    Some(&shared.cancelled),
                )
            }))
            .unwrap_or_else(|_| err("internal: the optimized compilation panicked"));
            let end = tier.map(|tier| {
                let _ = shared.tier.set(tier);
            });
            shared.finish(end);
        };
        let queued = background_queue().is_some_and(|queue| queue.send(Box::new(work)).is_ok());
        if !queued {
            // The baseline code stays.
            self.finish(err("no thread for the optimized tier"));
        }
    }

    /// Records how the compilation ended and wakes the waiters.
    fn finish(&self, end: Result<(), CompileError>) {
        *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = Some(end);
        self.done.notify_all();
    }

    /// Waits for the compilation to end.
    fn wait(&self) -> Result<(), CompileError> {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(end) = finished.as_ref() {
                return end.clone();
            }
            finished = self.done.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A compilation of an optimized tier, queued for the background thread.
type BackgroundTask = Box<dyn FnOnce() + Send>;

/// The queue of the one background thread that compiles optimized tiers,
/// one after the other in the order asked for (started on first use;
/// `None` when the system refuses the thread). One thread, not one per
/// module: a program making many handles at once does not start as many
/// compilations, and a dropped module's compilation is skipped.
fn background_queue() -> Option<&'static std::sync::mpsc::Sender<BackgroundTask>> {
    static QUEUE: OnceLock<Option<std::sync::mpsc::Sender<BackgroundTask>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (send, receive) = std::sync::mpsc::channel::<BackgroundTask>();
            std::thread::Builder::new()
                .name("adjit-tier1".into())
                .spawn(move || {
                    for task in receive {
                        task();
                    }
                })
                .ok()
                .map(|_| send)
        })
        .as_ref()
}

/// A compiled module: native code for every procedure, global storage and
/// literal data. Freed on drop. Under [`Tiering::Tiered`] it holds the
/// baseline code and, once compiled, the optimized code; a call runs the
/// optimized code when it is ready when the call begins (one atomic load).
/// Both live until the module drops, since a call may still run the
/// baseline code; both reach the globals through the runtime context's
/// table, so they share them.
pub struct CompiledModule {
    /// The code compiled before `compile` returned.
    first: Tier,
    /// The optimized tier compiling in the background ([`Tiering::Tiered`]).
    upgrade: Option<Arc<Upgrade>>,
    /// The globals' storage (possibly shared with other modules of the same
    /// program) and the lock held by every call when there are globals.
    globals: GlobalStore,
}

impl Drop for CompiledModule {
    fn drop(&mut self) {
        if let Some(upgrade) = &self.upgrade {
            // The compiling thread holds the upgrade and frees it when done.
            upgrade.cancelled.store(true, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledModule")
            .field("procs", &self.first.entries.len())
            .field("globals", &self.globals.len())
            .finish()
    }
}

// SAFETY: the store's global storage is only written by generated code
// while the store's lock is held (or through a `GlobalsGuard` of the same
// lock); a call against a `GlobalFrame` writes that frame only, which its
// caller borrows mutably; code and literal memory are immutable after
// finalization.
unsafe impl Sync for CompiledModule {}
// SAFETY: all owned memory moves with the value; see the Sync note.
unsafe impl Send for CompiledModule {}

impl CompiledModule {
    /// Compiles every procedure of `module`.
    pub fn compile(
        module: &ir::Module,
        options: &JitOptions,
    ) -> Result<CompiledModule, CompileError> {
        let globals = GlobalStore::new(&module.globals).map_err(|message| CompileError {
            proc: None,
            message,
        })?;
        compile_module(ModuleRef::Borrowed(module), options, globals, None)
    }

    /// Compiles every procedure of `module` against existing global storage
    /// (`globals` must describe exactly `module.globals`, typically an
    /// extension of another module's store: see [`GlobalStore::extend`]).
    /// The module is shared, not copied, with a [`Tiering::Tiered`]
    /// module's optimized compilation.
    pub fn compile_with_globals(
        module: &Arc<ir::Module>,
        options: &JitOptions,
        globals: GlobalStore,
    ) -> Result<CompiledModule, CompileError> {
        check_globals(module, &globals)?;
        compile_module(ModuleRef::Shared(module), options, globals, None)
    }

    /// Like [`CompiledModule::compile_with_globals`], compiling only
    /// `roots` and the procedures they call, directly or through others:
    /// a derivative module needs none of its primal procedures that its
    /// sweeps do not call, and compiling them would double the compile
    /// time. A procedure left out has no native code; calling it is an
    /// error, never undefined behaviour.
    pub fn compile_reachable(
        module: &Arc<ir::Module>,
        options: &JitOptions,
        globals: GlobalStore,
        roots: &[ProcId],
    ) -> Result<CompiledModule, CompileError> {
        check_globals(module, &globals)?;
        let wanted = reachable(module, roots);
        compile_module(ModuleRef::Shared(module), options, globals, Some(&wanted))
    }

    /// Calls a procedure with its own fresh [`Runtime`].
    pub fn call(&self, proc: ProcId, args: &mut [Buffer]) -> Result<(), RuntimeError> {
        let mut rt = Runtime::new();
        self.call_with(proc, args, &mut rt)
    }

    /// Calls a procedure against a caller-provided runtime (stacks persist
    /// across calls, so a forward and a reverse sweep can share a tape).
    pub fn call_with(
        &self,
        proc: ProcId,
        args: &mut [Buffer],
        rt: &mut Runtime,
    ) -> Result<(), RuntimeError> {
        self.call_with_buffers(proc, args, rt)
    }

    /// [`CompiledModule::call_with`] on argument buffers gathered by the
    /// caller (see [`ArgBuffers`]).
    pub fn call_with_buffers<A: ArgBuffers + ?Sized>(
        &self,
        proc: ProcId,
        args: &mut A,
        rt: &mut Runtime,
    ) -> Result<(), RuntimeError> {
        if self.globals.is_empty() {
            return self.call_resolved(proc, args, rt, std::ptr::null());
        }
        // The store's own lock, held over the call.
        let _guard = self.globals.lock();
        self.call_resolved(proc, args, rt, self.globals.table())
    }

    /// Calls a procedure while the caller holds the lock of the module's
    /// globals (so that it may set globals before and read them after the
    /// call with no other call in between). The guard must lock this
    /// module's store or one sharing its lock.
    pub fn call_locked(
        &self,
        guard: &mut GlobalsGuard<'_>,
        proc: ProcId,
        args: &mut [Buffer],
        rt: &mut Runtime,
    ) -> Result<(), RuntimeError> {
        if !guard.store().shares_lock_with(&self.globals) {
            return Err(self.tier().arg_error(
                proc,
                None,
                "the globals lock held belongs to another program".into(),
            ));
        }
        self.call_resolved(proc, args, rt, self.globals.table())
    }

    /// Calls a procedure against `frame`, an evaluation's private copy of
    /// the module's globals (see [`GlobalStore`]): no lock is taken, so
    /// calls against different frames of one program run in parallel.
    pub fn call_in_frame(
        &self,
        frame: &mut GlobalFrame,
        proc: ProcId,
        args: &mut [Buffer],
        rt: &mut Runtime,
    ) -> Result<(), RuntimeError> {
        if !self.globals.fits(frame) {
            return Err(self.tier().arg_error(
                proc,
                None,
                "the global frame belongs to another program".into(),
            ));
        }
        self.call_resolved(proc, args, rt, frame.table())
    }

    /// Checks the argument buffers' types and calls against the global
    /// storage whose address table is `globals` (the compiled entry checks
    /// the sizes); the caller holds exclusive access to that storage (the
    /// store's lock, or the frame).
    fn call_resolved<A: ArgBuffers + ?Sized>(
        &self,
        proc: ProcId,
        args: &mut A,
        rt: &mut Runtime,
        globals: *const usize,
    ) -> Result<(), RuntimeError> {
        rt.set_globals(globals);
        // The tier this call runs in, to its end.
        let tier = self.tier();
        let n = args.count();
        // The slots of up to 16 arguments live in this frame (built in
        // place: a returned small vector would be copied).
        let mut inline = [ArgSlot::EMPTY; 16];
        let mut spilled = Vec::new();
        let slots: &mut [ArgSlot] = match inline.get_mut(..n) {
            Some(slots) => slots,
            None => {
                spilled.resize(n, ArgSlot::EMPTY);
                &mut spilled
            }
        };
        // One pass over the arguments: each slot, and its type compared
        // with the kept list; the full check only when one differs.
        let types = match tier.param_types.get(proc.index()) {
            Some(Some(types)) if types.len() == n => &types[..],
            _ => &[],
        };
        if !args.fill_slots(slots, types) {
            shape::check_argument_count(&tier.module, proc, n)?;
            for i in 0..n {
                shape::check_argument_type(&tier.module, proc, i, args.arg(i).ty())?;
            }
        }
        let f = tier.function(proc).ok_or_else(|| {
            let why = if proc.index() < tier.entries.len() {
                "not compiled: no entry this module was compiled for calls it"
            } else {
                "no such procedure"
            };
            tier.arg_error(proc, None, why.into())
        })?;
        let stack = match rt.limits().stack_size {
            Some(bytes) => Some(rt.call_stack(bytes).map_err(|detail| RuntimeError {
                kind: RuntimeErrorKind::TooLarge,
                proc,
                span: Default::default(),
                var: None,
                detail,
            })?),
            None => None,
        };
        let mut invoke = || {
            match stack {
                Some(stack) => rt.begin_call_below(stack.limit),
                // The stack limit is taken on the stack the code runs on.
                None => rt.begin_call(),
            }
            // SAFETY: `slots` describes live buffers of the declared element
            // types (checked above); the generated code checks sizes itself
            // (an argument from the host must hold its whole declared shape),
            // checks the native stack at every entry, and never unwinds.
            unsafe { f(slots.as_ptr(), rt.ctx_ptr()) }
        };
        let status = match stack {
            // SAFETY: `stack` is a page-aligned region of whole pages owned
            // by `rt`, above a guard page, used by nothing else while the
            // call runs; `invoke` does not unwind (the generated code never
            // unwinds, and the runtime helpers it calls are `extern "C"`,
            // which abort rather than unwind).
            Some(stack) => unsafe { psm::on_stack(stack.base, stack.size, invoke) },
            None => invoke(),
        };
        rt.end_call();
        rt.sample_peaks();
        if status == 0 {
            Ok(())
        } else {
            Err(tier.decode_error(rt.error_slot(), rt.helper_error()))
        }
    }

    /// The native entry point of a procedure (valid while `self` lives), for
    /// benchmarks. The caller must pass argument slots that satisfy the
    /// procedure's shapes (see [`crate::ir::shape::resolve_arguments`]), call
    /// [`Runtime::begin_call`] first, hold no other call of a module with
    /// globals concurrently (and have made a call of this module through
    /// the runtime, which points it at the module's globals), and decode a
    /// non-zero status itself.
    pub fn raw_function(&self, proc: ProcId) -> Option<RawProcFn> {
        self.tier().function(proc)
    }

    /// The IR the running code was compiled from (the optimized tier's
    /// once installed).
    pub fn module(&self) -> &ir::Module {
        &self.tier().module
    }

    /// The tier calls run in now: the optimized one once installed. Until
    /// then, queues the optimized compilation (the first call does).
    fn tier(&self) -> &Tier {
        match &self.upgrade {
            Some(upgrade) => upgrade.tier.get().unwrap_or_else(|| {
                upgrade.queue();
                &self.first
            }),
            None => &self.first,
        }
    }

    /// Whether calls now run optimized code: always, unless the module
    /// was compiled [`Tiering::Baseline`], or [`Tiering::Tiered`] and its
    /// optimized code is not installed yet.
    pub fn is_optimized(&self) -> bool {
        match &self.upgrade {
            Some(upgrade) => upgrade.tier.get().is_some(),
            None => self.first.optimized,
        }
    }

    /// Waits until the optimized code of a [`Tiering::Tiered`] module is
    /// installed (at once for the other tierings), queuing its compilation
    /// if no call has, for benchmarks before they time and for inspecting
    /// the optimized code. An error says why
    /// it could not be compiled; the baseline code then stays.
    pub fn wait_optimized(&self) -> Result<(), CompileError> {
        match &self.upgrade {
            Some(upgrade) => {
                upgrade.queue();
                upgrade.wait()
            }
            None => Ok(()),
        }
    }

    /// The storage of the module's globals.
    pub fn globals(&self) -> &GlobalStore {
        &self.globals
    }

    /// A copy of a global's current contents.
    pub fn global(&self, id: ir::GlobalId) -> Option<Buffer> {
        self.globals.lock().get(id)
    }

    /// Overwrites a global's contents (the buffer must match its type and
    /// size).
    pub fn set_global(&self, id: ir::GlobalId, value: &Buffer) -> Result<(), String> {
        self.globals.lock().set(id, value)
    }
}

impl Tier {
    /// The native entry of `proc`, when compiled.
    fn function(&self, proc: ProcId) -> Option<RawProcFn> {
        let addr = *self.entries.get(proc.index()).filter(|&&a| a != 0)?;
        // SAFETY: `addr` is a finalized function with the RawProcFn ABI.
        Some(unsafe { std::mem::transmute::<usize, RawProcFn>(addr) })
    }

    fn arg_error(&self, proc: ProcId, var: Option<String>, detail: String) -> RuntimeError {
        let span = self
            .module
            .procs
            .get(proc.index())
            .map(|p| p.span)
            .unwrap_or_default();
        RuntimeError {
            kind: RuntimeErrorKind::ArgumentSize,
            proc,
            span,
            var,
            detail,
        }
    }

    /// Turns the error slot filled by generated code into a RuntimeError.
    fn decode_error(&self, e: ErrorSlot, helper: Option<&str>) -> RuntimeError {
        // A call nested too deep is reported on the callee (`dim`).
        let proc_index = if e.kind == code::CALL_DEPTH {
            e.dim
        } else {
            e.proc
        };
        let proc = ProcId(proc_index.max(0) as u32);
        let p = self.module.procs.get(proc.index());
        let var_name = |v: i64| -> Option<String> {
            let p = p?;
            (v >= 0)
                .then(|| p.vars.get(v as usize).map(|v| v.name.clone()))
                .flatten()
        };
        let (span, fail_kind) = match p {
            Some(p) if e.site >= 0 => (
                p.insts
                    .get(e.site as usize)
                    .map(|i| i.span)
                    .unwrap_or_default(),
                None,
            ),
            Some(p) => {
                let b = p.blocks.get((-1 - e.site) as usize);
                let kind = b.and_then(|b| match &b.term {
                    Terminator::Fail(k) => Some(k.clone()),
                    _ => None,
                });
                (b.map(|b| b.term_span).unwrap_or_default(), kind)
            }
            None => (Default::default(), None),
        };
        let stack_name = |k: i64| {
            ["Value", "Integer", "Control"]
                .get(k as usize)
                .copied()
                .unwrap_or("?")
        };
        let (kind, detail) = match e.kind {
            code::INDEX_OUT_OF_BOUNDS if e.dim == STORAGE_DIM => (
                RuntimeErrorKind::IndexOutOfBounds,
                format!(
                    "element offset {} outside the storage of {} elements",
                    e.index, e.upper
                ),
            ),
            code::INDEX_OUT_OF_BOUNDS => (
                RuntimeErrorKind::IndexOutOfBounds,
                format!(
                    "index {} outside {}:{} in dimension {}",
                    e.index,
                    e.lower,
                    e.upper,
                    e.dim + 1
                ),
            ),
            code::DIVIDE_BY_ZERO => {
                let op = p
                    .and_then(|p| p.insts.get(e.site.max(0) as usize))
                    .and_then(|i| match i.kind {
                        Inst::Binary(op, ..) => Some(op),
                        _ => None,
                    });
                let detail = op.map_or_else(String::new, |op| format!("{op:?} by zero"));
                (RuntimeErrorKind::DivideByZero, detail)
            }
            code::CALL_DEPTH => (
                RuntimeErrorKind::CallDepthExceeded,
                format!("more than {MAX_CALL_DEPTH} nested calls"),
            ),
            code::SUBSTRING_OUT_OF_RANGE => (
                RuntimeErrorKind::SubstringOutOfRange,
                format!(
                    "substring {}:{} of a string of length {}",
                    e.index, e.lower, e.upper
                ),
            ),
            code::STACK_UNDERFLOW => (
                RuntimeErrorKind::StackUnderflow,
                format!("pop from the empty {} stack", stack_name(e.dim)),
            ),
            code::FAIL => (
                fail_kind.unwrap_or(RuntimeErrorKind::Stop(None)),
                String::new(),
            ),
            code::ARGUMENT_SIZE => {
                let name = var_name(e.var).unwrap_or_default();
                let is_char = p
                    .and_then(|p| p.vars.get(e.var.max(0) as usize))
                    .is_some_and(|v| v.ty == Type::Char);
                let unit = if is_char { "bytes" } else { "elements" };
                (
                    RuntimeErrorKind::ArgumentSize,
                    format!(
                        "`{name}` needs {} {unit}, the argument has {}",
                        e.upper, e.index
                    ),
                )
            }
            code::OUT_OF_MEMORY => (
                RuntimeErrorKind::TooLarge,
                format!(
                    "local `{}` would need {} bytes, {}",
                    var_name(e.var).unwrap_or_default(),
                    e.index,
                    helper.unwrap_or("more than can be allocated")
                ),
            ),
            code::NOT_ALLOCATED => (
                RuntimeErrorKind::NotAllocated,
                format!("`{}` is not allocated", var_name(e.var).unwrap_or_default()),
            ),
            code::ALREADY_ALLOCATED => (
                RuntimeErrorKind::AlreadyAllocated,
                format!(
                    "`{}` is already allocated",
                    var_name(e.var).unwrap_or_default()
                ),
            ),
            code::SIZE_OVERFLOW => (
                RuntimeErrorKind::TooLarge,
                format!(
                    "the element or byte count of `{}` overflows 64 bits",
                    var_name(e.var).unwrap_or_default()
                ),
            ),
            code::STACK_OVERFLOW => (
                RuntimeErrorKind::StackOverflow,
                format!(
                    "native stack exhausted entering `{}` at call depth {}",
                    p.map_or("?", |p| p.name.as_str()),
                    e.index
                ),
            ),
            code::TIMEOUT => (
                RuntimeErrorKind::Timeout,
                "the call ran past its time limit".to_string(),
            ),
            code::STACK_GROW => (
                RuntimeErrorKind::Stop(Some(format!(
                    "{} stack cannot grow: {}",
                    stack_name(e.dim),
                    helper.unwrap_or("out of memory")
                ))),
                String::new(),
            ),
            code::IO => (RuntimeErrorKind::Io, helper.unwrap_or("failed").to_string()),
            other => (
                RuntimeErrorKind::Stop(Some(format!("unknown runtime error code {other}"))),
                String::new(),
            ),
        };
        let whole_proc = [
            code::ARGUMENT_SIZE,
            code::STACK_OVERFLOW,
            code::SIZE_OVERFLOW,
            code::OUT_OF_MEMORY,
        ];
        // An ALLOCATE that fails is located at its statement (`site`); an
        // argument the host passed (call depth 1, in `lower`: see
        // `Lower::check_argument_size`) has no source location, as the
        // host's own checks report it.
        let span = if e.kind == code::ARGUMENT_SIZE && e.lower == 1 {
            Default::default()
        } else if whole_proc.contains(&e.kind) && e.site < 0 {
            p.map(|p| p.span).unwrap_or(span)
        } else if e.kind == code::CALL_DEPTH {
            // The call instruction belongs to the caller (`proc` field).
            self.module
                .procs
                .get(e.proc.max(0) as usize)
                .and_then(|c| c.insts.get(e.site.max(0) as usize))
                .map_or(span, |i| i.span)
        } else {
            span
        };
        // Code inlined from another procedure fails in its name.
        let from = if e.kind == code::CALL_DEPTH {
            None
        } else if e.site >= 0 {
            self.origins
                .inst(ProcId(e.proc.max(0) as u32), e.site as u32)
        } else if e.kind == code::FAIL {
            self.origins
                .block(ProcId(e.proc.max(0) as u32), (-1 - e.site) as u32)
        } else {
            None
        };
        RuntimeError {
            kind,
            proc: from.unwrap_or(proc),
            span,
            var: var_name(e.var),
            detail,
        }
    }
}

/// True when `v` is a float constant zero (`+0.0` only, when `positive`).
fn is_float_zero(proc: &ir::Proc, v: ir::Value, positive: bool) -> bool {
    let Some(data) = proc.insts.get(v.index()) else {
        return false;
    };
    if !data.ty.is_some_and(Type::is_float) {
        return false;
    }
    match data.kind {
        Inst::Const(Const::Float(x)) => x == 0.0 && (!positive || x.to_bits() == 0),
        Inst::Const(Const::Int(0)) => true,
        _ => false,
    }
}

/// Maps an IR scalar type to a Cranelift type.
fn cl_type(ty: Type) -> Result<types::Type, CompileError> {
    Ok(match ty {
        Type::F32 => types::F32,
        Type::F64 => types::F64,
        Type::I32 => types::I32,
        Type::I64 => types::I64,
        Type::Bool => types::I8,
        Type::Char => return err("character data is not a value"),
    })
}

/// The host ISA for `speed`, built once per process and level (it is
/// immutable and shared).
fn host_isa(speed: CompileSpeed) -> Result<cranelift_codegen::isa::OwnedTargetIsa, CompileError> {
    type Isa = std::sync::OnceLock<Result<cranelift_codegen::isa::OwnedTargetIsa, CompileError>>;
    static OPTIMIZED: Isa = std::sync::OnceLock::new();
    static FAST: Isa = std::sync::OnceLock::new();
    match speed {
        CompileSpeed::Optimized => &OPTIMIZED,
        CompileSpeed::Fast => &FAST,
    }
    .get_or_init(|| make_isa(speed))
    .clone()
}

fn make_isa(speed: CompileSpeed) -> Result<cranelift_codegen::isa::OwnedTargetIsa, CompileError> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags.set(k, v).map_err(|e| CompileError {
            proc: None,
            message: format!("flag {k}={v}: {e}"),
        })
    };
    let (opt_level, regalloc) = match speed {
        CompileSpeed::Optimized => ("speed", "backtracking"),
        CompileSpeed::Fast => ("none", "single_pass"),
    };
    set(&mut flags, "opt_level", opt_level)?;
    set(&mut flags, "regalloc_algorithm", regalloc)?;
    if speed == CompileSpeed::Fast {
        // Generated code never unwinds (errors return a status); unwind
        // tables serve only native debuggers and profilers, which look at
        // the optimized code.
        set(&mut flags, "unwind_info", "false")?;
    }
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    let isa_builder = cranelift_native::builder().map_err(|m| CompileError {
        proc: None,
        message: format!("host machine is not supported: {m}"),
    })?;
    isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| CompileError {
            proc: None,
            message: format!("cannot build the target ISA: {e}"),
        })
}

/// The shape of an array (or character) variable computed at procedure
/// entry: per dimension its lower bound, extent, upper bound and stride (in
/// elements), its element count, the units of an argument's length per
/// element (1, or the bytes of a character element), its length in those
/// units, its size in bytes and its element size.
#[derive(Clone)]
struct EntryShape {
    lowers: Vec<Value>,
    extents: Vec<Value>,
    uppers: Vec<Value>,
    strides: Vec<Value>,
    count: Value,
    unit: Value,
    units: Value,
    bytes: Value,
    elem_size: Value,
}

/// Frees a JIT module that did not make it into a CompiledModule.
struct JitGuard(Option<JITModule>);

impl Drop for JitGuard {
    fn drop(&mut self) {
        if let Some(jit) = self.0.take() {
            // SAFETY: nothing compiled in it was ever handed out.
            unsafe { jit.free_memory() };
        }
    }
}

/// Which procedures of `module` `roots` call, directly or through others
/// (the roots included), by procedure index.
fn reachable(module: &ir::Module, roots: &[ProcId]) -> Vec<bool> {
    let mut seen = vec![false; module.procs.len()];
    let mut work: Vec<ProcId> = roots.to_vec();
    while let Some(p) = work.pop() {
        match seen.get_mut(p.index()) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        for data in &module.proc(p).insts {
            if let ir::Inst::Call(callee, _) = &data.kind {
                work.push(*callee);
            }
        }
    }
    seen
}

/// Checks that `globals` describes exactly `module.globals` (the same
/// types and byte sizes, in order).
fn check_globals(module: &ir::Module, globals: &GlobalStore) -> Result<(), CompileError> {
    let same = globals.len() == module.globals.len()
        && globals
            .globals()
            .iter()
            .zip(&module.globals)
            .all(|(a, b)| a.ty == b.ty && global_bytes(a) == global_bytes(b));
    if same {
        Ok(())
    } else {
        err("the global storage does not match the module's globals")
    }
}

/// The module a compilation reads: borrowed, or shared with the caller
/// (which the optimized tier of a [`Tiering::Tiered`] module then keeps
/// instead of a copy: copying a module cost the baseline tier's caller
/// about 2% of its latency).
#[derive(Clone, Copy)]
enum ModuleRef<'a> {
    Borrowed(&'a ir::Module),
    Shared(&'a Arc<ir::Module>),
}

impl ModuleRef<'_> {
    /// The module.
    fn get(&self) -> &ir::Module {
        match self {
            ModuleRef::Borrowed(m) => m,
            ModuleRef::Shared(m) => m,
        }
    }

    /// The module to keep: the shared one, or a copy of the borrowed one.
    fn to_shared(self) -> Arc<ir::Module> {
        match self {
            ModuleRef::Borrowed(m) => Arc::new(m.clone()),
            ModuleRef::Shared(m) => m.clone(),
        }
    }
}

/// Compiles the procedures of `module` (those marked in `wanted`, or all)
/// as `options.tiering` says: the entry of one left out is 0.
fn compile_module(
    source: ModuleRef<'_>,
    options: &JitOptions,
    globals: GlobalStore,
    wanted: Option<&[bool]>,
) -> Result<CompiledModule, CompileError> {
    let module = source.get();
    crate::ir::verify::verify_module(module).map_err(|errors| CompileError {
        proc: None,
        message: errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; "),
    })?;
    let (first, upgrade) = match options.tiering {
        Tiering::Optimized => (
            compile_tier(module, options, globals.len(), wanted, None)?,
            None,
        ),
        Tiering::Baseline => (
            compile_tier(module, &options.baseline(), globals.len(), wanted, None)?,
            None,
        ),
        Tiering::Tiered => {
            let first = compile_tier(module, &options.baseline(), globals.len(), wanted, None)?;
            let optimized = JitOptions {
                tiering: Tiering::Optimized,
                ..options.clone()
            };
            let wanted = wanted.map(<[bool]>::to_vec);
            let upgrade = Upgrade::new(source.to_shared(), optimized, globals.len(), wanted);
            (first, Some(upgrade))
        }
    };
    Ok(CompiledModule {
        first,
        upgrade,
        globals,
    })
}

/// Compiles one tier of the (verified) `module` with `options`, against
/// `globals` globals. Stops with an error before the next procedure once
/// `cancel` is set.
fn compile_tier(
    module: &ir::Module,
    options: &JitOptions,
    globals: usize,
    wanted: Option<&[bool]>,
    cancel: Option<&AtomicBool>,
) -> Result<Tier, CompileError> {
    let cancelled = || {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            err("cancelled: the module was dropped")
        } else {
            Ok(())
        }
    };
    cancelled()?;
    let crate::opt::Optimized {
        module: mut optimized,
        mut origins,
        versions,
        ..
    } = crate::opt::optimize_procs_for_jit(
        module,
        options.inline,
        options.version_loops,
        options.fixed_point_exits,
        wanted,
    );
    let scope = if options.speculate_guards {
        Some(crate::opt::speculate::Scope::All)
    } else if options.speculate_carried_guards
        && options.branch_on_zero_products
        && options.contract_fma
    {
        Some(crate::opt::speculate::Scope::CarriedFused)
    } else if options.speculate_carried_guards && options.branch_on_zero_products {
        Some(crate::opt::speculate::Scope::CarriedGuards)
    } else if options.speculate_carried_guards {
        Some(crate::opt::speculate::Scope::Carried)
    } else {
        None
    };
    if let Some(scope) = scope {
        crate::opt::speculate::speculate_module_in(&mut optimized, &mut origins, scope, wanted);
    }
    let module = &optimized;
    let isa = host_isa(options.compile_speed)?;
    let compile_isa = isa.clone();
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    for f in libm::math_symbols()
        .into_iter()
        .chain(libm::runtime_symbols())
    {
        builder.symbol(f.name, f.addr);
    }
    let mut guard = JitGuard(Some(JITModule::new(builder)));
    let mut literals = Vec::new();
    let entries = {
        let jit = guard.0.as_mut().ok_or_else(|| CompileError {
            proc: None,
            message: "internal: JIT module missing".into(),
        })?;
        let ptr = jit.target_config().pointer_type();
        let mut sig = Signature::new(jit.isa().default_call_conv());
        sig.params.push(AbiParam::new(ptr));
        sig.params.push(AbiParam::new(ptr));
        sig.returns.push(AbiParam::new(types::I32));
        let mut ids = Vec::with_capacity(module.procs.len());
        for (i, _) in module.procs.iter().enumerate() {
            let id = jit
                .declare_function(&format!("adjit_proc_{i}"), Linkage::Local, &sig)
                .map_err(|e| CompileError {
                    proc: None,
                    message: e.to_string(),
                })?;
            ids.push(id);
        }
        let speed = options.compile_speed;
        let segment_switch = [
            segment_trampoline(jit, speed, "adjit_stack_grow")?,
            segment_trampoline(jit, speed, "adjit_stack_retreat")?,
            segment_trampoline(jit, speed, "adjit_stack_reserve")?,
        ];
        let mut shared = Shared {
            module,
            options,
            proc_ids: ids.clone(),
            segment_switch,
            externs: HashMap::new(),
            globals,
            literals: &mut literals,
            versions: &versions,
        };
        let mut fctx = FunctionBuilderContext::new();
        let compiled = |i: usize| wanted.is_none_or(|w| w[i]);
        let dump = std::env::var_os("ADJIT_DUMP_CLIF").is_some();
        // Largest first: its compilation overlaps the lowering and
        // compilation of the others.
        let mut order: Vec<usize> = (0..module.procs.len()).filter(|&i| compiled(i)).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(module.procs[i].insts.len()));
        let insts = order.iter().map(|&i| module.procs[i].insts.len()).sum();
        let threads = crate::parallel::threads_for(insts, order.len());
        let jobs = crate::parallel::compile_pipelined(&*compile_isa, threads, |hand_over| {
            for &i in &order {
                let proc = &module.procs[i];
                cancelled()?;
                let mut ctx = jit.make_context();
                ctx.func.signature = sig.clone();
                ctx.func.name = UserFuncName::user(0, i as u32);
                lower_proc(jit, &mut shared, &mut ctx, &mut fctx, ProcId(i as u32)).map_err(
                    |e| CompileError {
                        proc: Some(proc.name.clone()),
                        message: e.message,
                    },
                )?;
                if dump {
                    ctx.set_disasm(true);
                }
                hand_over(crate::parallel::Job::new(i, ctx));
            }
            Ok(())
        })?;
        for job in &jobs {
            let i = job.index;
            let name = &module.procs[i].name;
            let failed = |message: String| CompileError {
                proc: Some(name.clone()),
                message,
            };
            if let Some(e) = &job.error {
                return Err(failed(e.clone()));
            }
            let code = job
                .ctx
                .compiled_code()
                .ok_or_else(|| failed("internal: no compiled code".into()))?;
            let relocs: Vec<ModuleReloc> = code
                .buffer
                .relocs()
                .iter()
                .map(|r| ModuleReloc::from_mach_reloc(r, &job.ctx.func, ids[i]))
                .collect();
            jit.define_function_bytes(
                ids[i],
                u64::from(code.buffer.alignment),
                code.code_buffer(),
                &relocs,
            )
            .map_err(|e| failed(format!("{e:?}")))?;
            if dump {
                eprintln!("; proc {name}\n{}", job.ctx.func.display());
                if let Some(vcode) = code.vcode.as_ref() {
                    eprintln!("; disassembly of {name}\n{vcode}");
                }
            }
        }
        jit.finalize_definitions().map_err(|e| CompileError {
            proc: None,
            message: e.to_string(),
        })?;
        ids.iter()
            .enumerate()
            .map(|(i, &id)| {
                if compiled(i) {
                    jit.get_finalized_function(id) as usize
                } else {
                    0
                }
            })
            .collect()
    };
    Ok(Tier {
        jit: Mutex::new(guard.0.take()),
        entries,
        param_types: optimized
            .procs
            .iter()
            .map(shape::host_param_types)
            .collect(),
        module: optimized,
        origins,
        _literals: literals,
        optimized: options.tiering != Tiering::Baseline,
    })
}

/// Defines `<helper>_pa`, a function with Cranelift's `PreserveAll`
/// convention that calls the runtime's `helper(rt, kind) -> status` and
/// drops the status (a failed switch leaves the stack registers unchanged,
/// which the caller tests). Generated code calls segment switches through
/// it: a call that clobbers no register leaves the values of a loop that
/// pushes or pops in registers (a System V call in the loop, even on its
/// cold path, made the register allocator keep loop-carried floats in
/// stack slots). Its machine code is compiled once per process and
/// compile speed ([`trampoline_code`]) and copied into each module.
fn segment_trampoline(
    jit: &mut JITModule,
    speed: CompileSpeed,
    helper: &'static str,
) -> Result<FuncId, CompileError> {
    let fail = |e: String| CompileError {
        proc: None,
        message: e,
    };
    let (inner, sig) = trampoline_signatures(jit.isa());
    let inner_id = jit
        .declare_function(helper, Linkage::Import, &inner)
        .map_err(|e| fail(e.to_string()))?;
    let id = jit
        .declare_function(&format!("{helper}_pa"), Linkage::Local, &sig)
        .map_err(|e| fail(e.to_string()))?;
    let code = trampoline_code(speed)?;
    let relocs: Vec<ModuleReloc> = code
        .relocs
        .iter()
        .map(|&(offset, kind, addend)| ModuleReloc {
            offset,
            kind,
            name: cranelift_module::ModuleRelocTarget::user(0, inner_id.as_u32()),
            addend,
        })
        .collect();
    jit.define_function_bytes(id, code.alignment, &code.bytes, &relocs)
        .map_err(|e| fail(format!("{e:?}")))?;
    Ok(id)
}

/// The signatures of a segment trampoline's helper (`(rt, kind) ->
/// status`, the platform's convention) and of the trampoline itself
/// (`(rt, kind)`, `PreserveAll`).
fn trampoline_signatures(isa: &dyn cranelift_codegen::isa::TargetIsa) -> (Signature, Signature) {
    let ptr = isa.pointer_type();
    let mut inner = Signature::new(isa.default_call_conv());
    inner.params.push(AbiParam::new(ptr));
    inner.params.push(AbiParam::new(types::I64));
    inner.returns.push(AbiParam::new(types::I32));
    let mut sig = Signature::new(cranelift_codegen::isa::CallConv::PreserveAll);
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I64));
    (inner, sig)
}

/// The machine code of a segment trampoline: the same for every helper
/// and module at one compile speed, the helper's address coming from its
/// relocations.
struct TrampolineCode {
    bytes: Vec<u8>,
    alignment: u64,
    /// Offset, kind and addend of each relocation, all against the helper.
    relocs: Vec<(u32, cranelift_codegen::binemit::Reloc, i64)>,
}

/// The trampoline code for `speed`, compiled on first use.
fn trampoline_code(speed: CompileSpeed) -> Result<&'static TrampolineCode, CompileError> {
    type Code = OnceLock<Result<TrampolineCode, CompileError>>;
    static OPTIMIZED: Code = OnceLock::new();
    static FAST: Code = OnceLock::new();
    match speed {
        CompileSpeed::Optimized => &OPTIMIZED,
        CompileSpeed::Fast => &FAST,
    }
    .get_or_init(|| compile_trampoline(speed))
    .as_ref()
    .map_err(Clone::clone)
}

/// Compiles the trampoline for `speed` (see [`segment_trampoline`]), its
/// helper being the user function `0:0`.
fn compile_trampoline(speed: CompileSpeed) -> Result<TrampolineCode, CompileError> {
    let fail = |e: String| CompileError {
        proc: None,
        message: format!("segment trampoline: {e}"),
    };
    let isa = host_isa(speed)?;
    let (inner, sig) = trampoline_signatures(&*isa);
    let mut ctx = Context::new();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let signature = b.import_signature(inner);
        let name = b
            .func
            .declare_imported_user_function(cranelift_codegen::ir::UserExternalName::new(0, 0));
        let f = b.import_function(cranelift_codegen::ir::ExtFuncData {
            name: cranelift_codegen::ir::ExternalName::user(name),
            signature,
            // As an imported function of a JIT module.
            colocated: false,
            patchable: false,
        });
        b.ins().call(f, &params);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
    }
    let code = ctx
        .compile(
            &*isa,
            &mut cranelift_codegen::control::ControlPlane::default(),
        )
        .map_err(|e| fail(format!("{:?}", e.inner)))?;
    let relocs = code
        .buffer
        .relocs()
        .iter()
        .map(|r| match r.target {
            cranelift_codegen::FinalizedRelocTarget::ExternalName(
                cranelift_codegen::ir::ExternalName::User(_),
            ) => Ok((r.offset, r.kind, r.addend)),
            _ => Err(fail("unexpected relocation".into())),
        })
        .collect::<Result<_, _>>()?;
    Ok(TrampolineCode {
        bytes: code.code_buffer().to_vec(),
        alignment: u64::from(code.buffer.alignment),
        relocs,
    })
}

/// State shared by the lowering of all procedures of a module.
struct Shared<'m> {
    module: &'m ir::Module,
    options: &'m JitOptions,
    proc_ids: Vec<FuncId>,
    /// The register-preserving trampolines to `adjit_stack_grow`,
    /// `adjit_stack_retreat` and `adjit_stack_reserve` (see
    /// [`segment_trampoline`]).
    segment_switch: [FuncId; 3],
    externs: HashMap<&'static str, FuncId>,
    /// Number of globals (their addresses are read at run time from the
    /// table of [`crate::runtime::RuntimeCtx::globals`]).
    globals: usize,
    literals: &'m mut Vec<Box<[u8]>>,
    /// Versioned loops, by procedure ([`crate::opt::licm`]).
    versions: &'m crate::opt::licm::Versions,
}

/// Where a variable's storage is during lowering.
#[derive(Clone)]
enum Home {
    /// A Cranelift variable; `mem` is the memory it mirrors (parameter
    /// storage or a spill slot for locals passed by reference).
    Reg { var: Variable, mem: Option<Value> },
    /// Memory at an address.
    Mem(Value),
}

/// Lowering data of one IR variable.
#[derive(Clone)]
struct VarInfo {
    home: Home,
    ty: Type,
    lowers: Vec<Value>,
    extents: Vec<Value>,
    uppers: Vec<Value>,
    strides: Vec<Value>,
    /// Number of elements (1 for a scalar).
    count: Value,
    /// Elements of storage a numeric array parameter was given, when its
    /// caller may pass less than `count` (`shape::may_be_short`): element
    /// references are checked against it, and it is what the parameter
    /// passes on.
    storage: Option<Value>,
    /// Without bounds checks: the elements an element reference may reach
    /// (the argument's whole buffer for a parameter, as the interpreter
    /// has it; the declared count otherwise).
    limit: Option<Value>,
    /// Bytes per element (char length for characters).
    elem_size: Value,
    /// The descriptor of an ALLOCATABLE array ([`runtime::alloc_desc`]);
    /// the other fields are then read from it at the start of each IR
    /// block and after each ALLOCATE / DEALLOCATE.
    desc: Option<Value>,
}

/// The `dim` of an index error that is an element beyond the storage a
/// parameter was given (not a subscript outside its dimension).
const STORAGE_DIM: i64 = -2;

/// Extra arguments of the shared error block.
#[derive(Clone, Copy)]
struct ErrorSite {
    kind: i64,
    site: i64,
    var: i64,
    dim: i64,
}

/// The lowering of one procedure.
struct Lower<'a, 'm> {
    b: FunctionBuilder<'a>,
    jit: &'a mut JITModule,
    sh: &'a mut Shared<'m>,
    proc: &'m ir::Proc,
    pid: ProcId,
    ptr: types::Type,
    rt: Value,
    vars: Vec<Option<VarInfo>>,
    values: Vec<Option<(u32, Value)>>,
    blocks: Vec<Block>,
    current: u32,
    /// Bytes of local arrays placed in the native frame so far.
    frame_bytes: i64,
    /// The error block: its parameters are an index into `error_sites`
    /// and the failing index and bounds.
    err_block: Block,
    /// The error sites the procedure's checks jump to the error block with,
    /// as rows `[kind, site, var, dim]` of a table the error block reads:
    /// a failing check passes one constant, not four.
    error_sites: Vec<[i64; 4]>,
    exit_block: Block,
    /// The `top` register of each runtime stack the procedure uses, in a
    /// variable (see [`StackVars`]).
    stack_vars: [Option<StackVars>; 3],
    /// The segment limits of each runtime stack as SSA values of the current
    /// IR block, where they are not variables (see [`StackCache`]).
    stacks: [StackCache; 3],
    /// Element addresses (and linear indices) computed, and checked, in
    /// the current IR block, by variable and subscript values.
    addresses: HashMap<(VarId, Vec<ir::Value>), (Value, Value)>,
    /// Operands whose `f64` sine and cosine the current IR block both
    /// takes, and the pair once computed by one call (see
    /// `sincos`, [`crate::libm::FUSED_SINCOS`]).
    sincos: HashMap<ir::Value, Option<(Value, Value)>>,
    /// Per variable: the stack slot mirroring it ([`mirrored_vars`]).
    mirrors: Vec<Option<StackSlot>>,
    /// Whether a call has been emitted in the current IR block (a read
    /// of a mirrored variable then loads its slot).
    after_call: bool,
    /// The reads of mirrored variables lowered in the current IR block,
    /// reloaded after each library call ([`Lower::reload_mirrors`]).
    mirrored_loads: Vec<(ir::Value, VarId)>,
    /// The position in its IR block of the instruction being lowered.
    position: usize,
    /// Per variable: whether the procedure stores to it (a scalar
    /// parameter it never stores to is not written back to its memory,
    /// which keeps its address out of the registers live across loops).
    stored: Vec<bool>,
    /// The frame slot holding the procedure's argument array (its first
    /// parameter), stored at entry.
    args_slot: StackSlot,
    /// The sums lowered as fused multiply-adds ([`JitOptions::contract_fma`]).
    fused: crate::opt::fma::Plan,
}

/// The `top` register of one runtime stack the procedure pushes on or pops
/// from inside a loop, promoted to a variable for the whole procedure:
/// loaded from the context at entry, written back (with
/// the pushes counted since the last write-back added to `pushed`) before
/// every call and at the return, and reloaded after every call.
/// The pushes of a stack the procedure never pops from are not counted one
/// by one: they are the words `top` moved since the last write-back (or
/// segment switch), added to `pushed` there ([`PushCount::Mark`]), so a
/// loop that pushes carries no counter. A loop
/// that pushes or pops carries `top` in a register instead of storing it
/// to the context and loading it again in every iteration (a store-to-load
/// chain of several cycles per iteration). A procedure that fails leaves
/// the context's `top` where it was at entry or at its last call (the
/// pushes of a failed call are not kept).
///
/// In a procedure that calls nothing ([`calls_nothing`]), the segment
/// limits it compares `top` with are variables too (`end` when it pushes,
/// `base` when it pops): loaded with `top`, and redefined where they
/// change, at a segment switch (whose cold path reloads them). A push in a
/// loop is then a compare with a register, a store and a pointer bump,
/// with no load of the limit in every iteration. (Across a call a limit
/// would live in a spill slot: there the [`StackCache`] of one block,
/// loading the limit once per block, costs less.)
#[derive(Clone, Copy)]
struct StackVars {
    top: Variable,
    /// How the pushes since the last write-back are counted.
    pushes: PushCount,
    /// One past the last word of the segment, when the procedure pushes.
    end: Option<Variable>,
    /// First word of the segment, when the procedure pops.
    base: Option<Variable>,
}

/// How the pushes on a promoted stack ([`StackVars`]) since the last
/// write-back are counted.
#[derive(Clone, Copy)]
enum PushCount {
    /// A counter incremented by every push (a stack the procedure also pops
    /// from, where the words `top` moved are pushes minus pops).
    Counter(Variable),
    /// The `top` of the last write-back or segment switch (a stack the
    /// procedure only pushes on): the pushes since are `(top - mark) / 8`.
    Mark(Variable),
}

/// The limits of one runtime stack as SSA values, valid until the end of
/// the IR block being lowered, when they are not [`StackVars`] variables:
/// the first push (pop) of a block loads `end` (`base`) from the context,
/// later ones reuse it. The limits change only at a segment switch (whose
/// cold path reloads them) and in calls (after which they are forgotten).
#[derive(Clone, Copy, Default)]
struct StackCache {
    /// One past the last word of the segment, once a push read it.
    end: Option<Value>,
    /// First word of the segment, once a pop read it.
    base: Option<Value>,
}

/// Per variable of `proc`: whether an instruction stores to it as a whole
/// (`Store`).
fn stored_vars(proc: &ir::Proc) -> Vec<bool> {
    let mut stored = vec![false; proc.vars.len()];
    for inst in &proc.insts {
        if let Inst::Store(v, _) = &inst.kind {
            if let Some(s) = stored.get_mut(v.index()) {
                *s = true;
            }
        }
    }
    stored
}

/// Whether lowering `proc` emits no call: no procedure call, and only
/// instructions lowered inline (no library function, no runtime helper
/// but the cold segment switches of pushes and pops).
fn calls_nothing(proc: &ir::Proc) -> bool {
    proc.insts.iter().all(|d| inline_inst(&d.kind))
}

/// Whether `inst` is lowered inline, without a call (see [`calls_nothing`];
/// the load-sinking pass moves loads below the others,
/// [`crate::opt::sink`]).
pub(crate) fn inline_inst(inst: &Inst) -> bool {
    match inst {
        Inst::Const(_)
        | Inst::Load(_)
        | Inst::Store(..)
        | Inst::LoadElem(..)
        | Inst::StoreElem(..)
        | Inst::Push(..)
        | Inst::Pop(_)
        | Inst::Cmp(..)
        | Inst::Select(..)
        | Inst::Convert(..)
        | Inst::DimLower(..)
        | Inst::DimExtent(..) => true,
        Inst::Unary(op, _) => matches!(
            op,
            UnaryOp::Neg
                | UnaryOp::Abs
                | UnaryOp::Sqrt
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::Round
                | UnaryOp::Not
        ),
        Inst::Binary(op, ..) => matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Min
                | BinaryOp::Max
                | BinaryOp::Sign
                | BinaryOp::Dim
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Eqv
                | BinaryOp::Neqv
        ),
        _ => false,
    }
}

/// Per variable of `proc`: whether it is a floating-point local scalar
/// (its address never taken) that one `Store` of one block writes and
/// that blocks with a call ([`inline_inst`]) read. Such a variable (a
/// value the loop optimizations compute once before a loop, such as
/// Bratu's `h*h*prm(1)/12`) is mirrored in a stack slot its store also
/// writes, and a read after a call in the same IR block loads it from
/// there ([`Lower::load_scalar`]). Every call clobbers the floating-point
/// registers, so such a value is in memory after a call either way; read
/// from its own slot, it is loaded where it is used and no register copy
/// lives on to the loop's next trip, where the register allocator would
/// store it back to its spill slot on every trip.
fn mirrored_vars(proc: &ir::Proc, taken: &[bool]) -> Vec<bool> {
    let n = proc.vars.len();
    let mut stores = vec![0usize; n];
    let mut store_block = vec![usize::MAX; n];
    let mut read_after_call = vec![false; n];
    let mut read_in_store_block = vec![false; n];
    for (bi, block) in proc.blocks.iter().enumerate() {
        let calls = block.insts.iter().any(|&v| {
            proc.insts
                .get(v.index())
                .is_some_and(|d| !inline_inst(&d.kind))
        });
        for &v in &block.insts {
            match proc.insts.get(v.index()).map(|d| &d.kind) {
                Some(Inst::Store(x, _)) => {
                    stores[x.index()] += 1;
                    store_block[x.index()] = bi;
                }
                Some(Inst::Load(x)) if calls => read_after_call[x.index()] = true,
                _ => {}
            }
        }
    }
    for (bi, block) in proc.blocks.iter().enumerate() {
        for &v in &block.insts {
            if let Some(Inst::Load(x)) = proc.insts.get(v.index()).map(|d| &d.kind) {
                if store_block[x.index()] == bi {
                    read_in_store_block[x.index()] = true;
                }
            }
        }
    }
    (0..n)
        .map(|i| {
            let var = &proc.vars[i];
            var.ty.is_float()
                && !var.is_array()
                && matches!(var.storage, Storage::Local)
                && !taken.get(i).copied().unwrap_or(true)
                && stores[i] == 1
                && read_after_call[i]
                && !read_in_store_block[i]
        })
        .collect()
}

const FLAGS: MemFlagsData = MemFlagsData::trusted();

fn lower_proc(
    jit: &mut JITModule,
    sh: &mut Shared<'_>,
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    pid: ProcId,
) -> Result<(), CompileError> {
    let module = sh.module;
    let proc = &module.procs[pid.index()];
    let ptr = jit.target_config().pointer_type();
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let args = b.block_params(entry)[0];
    let rt = b.block_params(entry)[1];
    // The argument array's address, kept in the frame for the write-backs
    // (see `Lower::param_addr`).
    let args_slot = b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        ptr.bytes(),
        ptr.bytes().trailing_zeros() as u8,
    ));
    b.ins().stack_store(ptr, args, args_slot, 0);
    let err_block = b.create_block();
    for _ in 0..4 {
        b.append_block_param(err_block, types::I64);
    }
    b.set_cold_block(err_block);
    let exit_block = b.create_block();
    b.append_block_param(exit_block, types::I32);
    let blocks = (0..proc.blocks.len()).map(|_| b.create_block()).collect();
    let fused = if sh.options.contract_fma {
        crate::opt::fma::plan(proc, sh.options.branch_on_zero_products)
    } else {
        crate::opt::fma::Plan::default()
    };
    let mut l = Lower {
        b,
        jit,
        sh,
        proc,
        pid,
        ptr,
        rt,
        vars: vec![None; proc.vars.len()],
        values: vec![None; proc.insts.len()],
        blocks,
        current: 0,
        frame_bytes: 0,
        err_block,
        error_sites: Vec::new(),
        exit_block,
        stack_vars: [None; 3],
        stacks: [StackCache::default(); 3],
        addresses: HashMap::new(),
        sincos: HashMap::new(),
        mirrors: vec![None; proc.vars.len()],
        after_call: false,
        mirrored_loads: Vec::new(),
        position: 0,
        stored: stored_vars(proc),
        args_slot,
        fused,
    };
    let mark = l.prologue(args)?;
    l.lower_body()?;
    l.epilogue(mark)?;
    l.b.seal_all_blocks();
    let cfg = l.jit.target_config();
    l.b.finalize(cfg);
    Ok(())
}

impl<'a, 'm> Lower<'a, 'm> {
    fn iconst(&mut self, x: i64) -> Value {
        self.b.ins().iconst(types::I64, x)
    }

    /// A declared external (libm or runtime) function, imported here.
    fn external(
        &mut self,
        name: &'static str,
        params: &[types::Type],
        ret: Option<types::Type>,
    ) -> Result<cranelift_codegen::ir::FuncRef, CompileError> {
        self.external_returning(name, params, ret.as_slice())
    }

    /// [`Lower::external`] for a function with any number of results.
    fn external_returning(
        &mut self,
        name: &'static str,
        params: &[types::Type],
        rets: &[types::Type],
    ) -> Result<cranelift_codegen::ir::FuncRef, CompileError> {
        let id = match self.sh.externs.get(name) {
            Some(&id) => id,
            None => {
                let mut sig = Signature::new(self.jit.isa().default_call_conv());
                sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
                sig.returns.extend(rets.iter().map(|&t| AbiParam::new(t)));
                let id = self
                    .jit
                    .declare_function(name, Linkage::Import, &sig)
                    .map_err(|e| CompileError {
                        proc: None,
                        message: e.to_string(),
                    })?;
                self.sh.externs.insert(name, id);
                id
            }
        };
        Ok(self.jit.declare_func_in_func(id, self.b.func))
    }

    fn call_external(
        &mut self,
        name: &'static str,
        params: &[types::Type],
        ret: Option<types::Type>,
        args: &[Value],
    ) -> Result<Option<Value>, CompileError> {
        let f = self.external(name, params, ret)?;
        let call = self.b.ins().call(f, args);
        self.after_call = true;
        Ok(self.b.inst_results(call).first().copied())
    }

    /// Branches to the error block of the first of `checks` whose `fail`
    /// is true; continues in a new block when none is. One branch on the
    /// disjunction of the conditions guards the path that passes; the
    /// cold path finds the first failing check, so the error reported is
    /// the one the checks made one by one would report. Quickest compiled
    /// ([`CompileSpeed::Fast`]), the cold path is one block that selects
    /// the first failing check's error arguments (from the last check to
    /// the first) and jumps once: a branch per check took two more blocks
    /// per check, which the single-pass register allocator pays for at
    /// every block (Bratu's baseline adjoint: 281 blocks to 177, 2% of
    /// its compile work). The optimizing settings compile the branches
    /// in less work than the selects, and keep them.
    fn check_all(&mut self, checks: &[(Value, ErrorSite, Value, Value, Value)]) {
        let Some((&last, rest)) = checks.split_last() else {
            return;
        };
        if rest.is_empty() {
            let (fail, site, index, lower, upper) = last;
            return self.check(fail, site, index, lower, upper);
        }
        let any = checks
            .iter()
            .map(|c| c.0)
            .reduce(|a, b| self.b.ins().bor(a, b))
            .expect("at least two checks");
        let cont = self.b.create_block();
        let failed = self.b.create_block();
        self.b.set_cold_block(failed);
        self.b.ins().brif(any, failed, &[], cont, &[]);
        self.b.switch_to_block(failed);
        let (_, site, index, lower, upper) = last;
        if self.sh.options.compile_speed == CompileSpeed::Fast {
            let row = self.error_row(site);
            let mut args = [row, index, lower, upper];
            for &(fail, site, index, lower, upper) in rest.iter().rev() {
                let row = self.error_row(site);
                let these = [row, index, lower, upper];
                for (arg, this) in args.iter_mut().zip(these) {
                    *arg = self.b.ins().select(fail, this, *arg);
                }
            }
            self.b
                .ins()
                .jump(self.err_block, &args.map(BlockArg::Value));
        } else {
            for &(fail, site, index, lower, upper) in rest {
                self.check(fail, site, index, lower, upper);
                let here = self
                    .b
                    .current_block()
                    .expect("a check continues in a block");
                self.b.set_cold_block(here);
            }
            self.fail_at(site, index, lower, upper);
        }
        self.b.switch_to_block(cont);
    }

    /// The error block's row argument for `site` (recorded in
    /// `error_sites`).
    fn error_row(&mut self, site: ErrorSite) -> Value {
        let row = self.error_sites.len() as i64;
        self.error_sites
            .push([site.kind, site.site, site.var, site.dim]);
        self.iconst(row)
    }

    /// Jumps to the error block with the arguments of `site`.
    fn fail_at(&mut self, site: ErrorSite, index: Value, lower: Value, upper: Value) {
        let row = self.error_row(site);
        let args = [row, index, lower, upper].map(BlockArg::Value);
        self.b.ins().jump(self.err_block, &args);
    }

    /// Branches to the error block when `fail` is true; continues in a new
    /// block otherwise. The error's constants are materialised in a cold
    /// block of their own, so the path that passes the check is a compare
    /// and a branch (no argument set-up, no register pressure).
    fn check(&mut self, fail: Value, site: ErrorSite, index: Value, lower: Value, upper: Value) {
        let cont = self.b.create_block();
        let failed = self.b.create_block();
        self.b.set_cold_block(failed);
        self.b.ins().brif(fail, failed, &[], cont, &[]);
        self.b.switch_to_block(failed);
        self.fail_at(site, index, lower, upper);
        self.b.switch_to_block(cont);
    }

    /// Fails with "`var` needs `units`, the argument has `len`" (an
    /// argument-size error at the procedure's entry) when `fail` is set.
    /// The error's `lower` is the call depth at entry, `depth`, so that an
    /// argument the host passed (depth 1) is reported without a source
    /// location, as the host's own checks and the interpreter report it.
    fn check_argument_size(
        &mut self,
        fail: Value,
        var: usize,
        len: Value,
        units: Value,
        depth: Value,
    ) {
        let site = ErrorSite {
            kind: code::ARGUMENT_SIZE,
            site: -1,
            var: var as i64,
            dim: 0,
        };
        self.check(fail, site, len, depth, units);
    }

    fn check_simple(&mut self, fail: Value, kind: i64, site: i64, var: i64, dim: i64) {
        let zero = self.iconst(0);
        self.check(
            fail,
            ErrorSite {
                kind,
                site,
                var,
                dim,
            },
            zero,
            zero,
            zero,
        );
    }

    fn var_info(&self, v: VarId) -> Result<&VarInfo, CompileError> {
        match self.vars.get(v.index()) {
            Some(Some(info)) => Ok(info),
            _ => err(format!("unknown variable {v}")),
        }
    }

    fn ir_var(&self, v: VarId) -> Result<&'m ir::Var, CompileError> {
        self.proc
            .vars
            .get(v.index())
            .map_or_else(|| err(format!("unknown variable {v}")), Ok)
    }

    /// Evaluates a bound expression (I64) at entry.
    fn bound(&mut self, bound: &Bound) -> Result<Value, CompileError> {
        Ok(match bound {
            Bound::Const(c) => self.iconst(*c),
            Bound::Var(v) => {
                let var = self.ir_var(*v)?;
                if var.is_array() || !var.ty.is_int() {
                    return err(format!(
                        "bound reads `{}`, which is not a scalar integer",
                        var.name
                    ));
                }
                let x = self.load_scalar(*v)?;
                self.widen_to_i64(x, var.ty)
            }
            Bound::Neg(a) => {
                let a = self.bound(a)?;
                self.b.ins().ineg(a)
            }
            Bound::Add(a, c)
            | Bound::Sub(a, c)
            | Bound::Mul(a, c)
            | Bound::Div(a, c)
            | Bound::Max(a, c)
            | Bound::Min(a, c) => {
                let x = self.bound(a)?;
                let y = self.bound(c)?;
                match bound {
                    Bound::Add(..) => self.b.ins().iadd(x, y),
                    Bound::Sub(..) => self.b.ins().isub(x, y),
                    Bound::Mul(..) => self.b.ins().imul(x, y),
                    Bound::Div(..) => {
                        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                        let q = self.int_div_wrapping(x, y, types::I64, false);
                        let z = self.iconst(0);
                        self.b.ins().select(zero, z, q)
                    }
                    Bound::Max(..) => {
                        let c = self.b.ins().icmp(IntCC::SignedGreaterThan, y, x);
                        self.b.ins().select(c, y, x)
                    }
                    _ => {
                        let c = self.b.ins().icmp(IntCC::SignedLessThan, y, x);
                        self.b.ins().select(c, y, x)
                    }
                }
            }
        })
    }

    /// `x / y` (or `x % y` when `rem`) without Cranelift's traps: a zero
    /// divisor must have been excluded by the caller (it is replaced by 1
    /// here), and `MIN / -1` wraps.
    fn int_div_wrapping(&mut self, x: Value, y: Value, ty: types::Type, rem: bool) -> Value {
        let one = self.b.ins().iconst(ty, 1);
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        let is_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
        let bad = self.b.ins().bor(is_zero, is_m1);
        let safe = self.b.ins().select(bad, one, y);
        let r = if rem {
            self.b.ins().srem(x, safe)
        } else {
            self.b.ins().sdiv(x, safe)
        };
        let special = if rem {
            self.b.ins().iconst(ty, 0)
        } else {
            self.b.ins().ineg(x)
        };
        self.b.ins().select(is_m1, special, r)
    }

    /// `x / y` for non-negative I64 values, 0 when `y` is 0.
    fn div_or_zero(&mut self, x: Value, y: Value) -> Value {
        let zero = self.iconst(0);
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        let q = self.int_div_wrapping(x, y, types::I64, false);
        self.b.ins().select(is_zero, zero, q)
    }

    fn widen_to_i64(&mut self, x: Value, ty: Type) -> Value {
        match ty {
            Type::I64 => x,
            Type::Bool => self.b.ins().uextend(types::I64, x),
            _ => self.b.ins().sextend(types::I64, x),
        }
    }

    /// Loads a scalar variable's current value.
    fn load_scalar(&mut self, v: VarId) -> Result<Value, CompileError> {
        let ty = self.ir_var(v)?.ty;
        let info = self.var_info(v)?.clone();
        if !info.lowers.is_empty() {
            return err(format!("`{}` is an array", self.ir_var(v)?.name));
        }
        Ok(match info.home {
            Home::Reg { .. } if self.after_call && self.mirrors[v.index()].is_some() => {
                let slot = self.mirrors[v.index()].expect("a mirrored variable");
                self.mirror_load(slot, cl_type(ty)?)
            }
            Home::Reg { var, .. } => self.b.use_var(var),
            Home::Mem(addr) => {
                let t = cl_type(ty)?;
                self.b.ins().load(t, FLAGS, addr, 0)
            }
        })
    }

    fn store_scalar(&mut self, v: VarId, x: Value) -> Result<(), CompileError> {
        let info = self.var_info(v)?.clone();
        if !info.lowers.is_empty() || self.ir_var(v)?.ty == Type::Char {
            return err(format!("`{}` is not a scalar", self.ir_var(v)?.name));
        }
        match info.home {
            Home::Reg { var, .. } => {
                self.b.def_var(var, x);
                if let Some(slot) = self.mirrors[v.index()] {
                    self.b.ins().stack_store(self.ptr, x, slot, 0);
                }
            }
            Home::Mem(addr) => {
                self.b.ins().store(FLAGS, x, addr, 0);
            }
        }
        Ok(())
    }

    /// Writes register-promoted variables that mirror memory back to it
    /// (but scalar parameters the procedure never stores to: their
    /// register holds what their memory holds).
    fn flush_promoted(&mut self) {
        for i in 0..self.vars.len() {
            let unchanged =
                matches!(self.proc.vars[i].storage, Storage::Param(_)) && !self.stored[i];
            if let (
                false,
                Some(VarInfo {
                    home:
                        Home::Reg {
                            var,
                            mem: Some(addr),
                        },
                    ..
                }),
            ) = (unchanged, &self.vars[i])
            {
                let (var, addr) = (*var, *addr);
                let x = self.b.use_var(var);
                let addr = self.param_addr(i).unwrap_or(addr);
                self.b.ins().store(FLAGS, x, addr, 0);
            }
        }
    }

    /// The address of scalar parameter `i` loaded again from the argument
    /// array (`None` for other variables), whose own address is loaded
    /// again from its frame slot. A write-back at a call or the return
    /// reads them there rather than keeping the array's address, or the
    /// parameter's address loaded at entry, in a register across the whole
    /// procedure: live across a loop, such a value is spilled and reloaded
    /// inside it (the product's reverse and tangent loops each did).
    ///
    /// The slot is read with the byte order spelled out: Cranelift's
    /// redundant-load elimination never gives an access with an explicit
    /// byte order the value of one without (documented at its `MemoryLoc`),
    /// so the read is not replaced by the argument stored at entry, which
    /// would make that value live again. The byte order is the target's, so
    /// the bits read are the ones stored.
    fn param_addr(&mut self, i: usize) -> Option<Value> {
        let Storage::Param(pos) = self.proc.vars[i].storage else {
            return None;
        };
        let off = pos as i32 * layout::ARG_SLOT;
        let slot = self.b.ins().stack_addr(self.ptr, self.args_slot, 0);
        let order = if cfg!(target_endian = "little") {
            cranelift_codegen::ir::Endianness::Little
        } else {
            cranelift_codegen::ir::Endianness::Big
        };
        let args = self
            .b
            .ins()
            .load(self.ptr, FLAGS.with_endianness(order), slot, 0);
        Some(self.b.ins().load(self.ptr, FLAGS, args, off))
    }

    /// Reloads register-promoted variables from their memory.
    fn reload_promoted(&mut self) -> Result<(), CompileError> {
        for i in 0..self.vars.len() {
            if let Some(VarInfo {
                home:
                    Home::Reg {
                        var,
                        mem: Some(addr),
                    },
                ty,
                ..
            }) = self.vars[i].clone()
            {
                let x = self.b.ins().load(cl_type(ty)?, FLAGS, addr, 0);
                self.b.def_var(var, x);
            }
        }
        Ok(())
    }

    /// Variables passed by reference to calls (they need memory).
    fn address_taken(&self) -> Vec<bool> {
        let mut taken = vec![false; self.proc.vars.len()];
        for inst in &self.proc.insts {
            if let Inst::Call(_, args) = &inst.kind {
                for a in args {
                    if let CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) = a {
                        if let Some(t) = taken.get_mut(v.index()) {
                            *t = true;
                        }
                    }
                }
            }
        }
        taken
    }

    /// Entry code: arguments, variables, bounds, argument size checks, local
    /// storage. Returns the arena mark when the procedure allocates.
    fn prologue(&mut self, args: Value) -> Result<Option<Value>, CompileError> {
        let proc = self.proc;
        // What a procedure allocates for an array passed by descriptor must
        // outlive its return: it leaves its allocations to its caller's
        // arena release.
        let by_descriptor = proc
            .vars
            .iter()
            .any(|v| matches!(v.storage, Storage::AllocatableParam(_)));
        let needs_arena = proc.vars.iter().any(|v| {
            (v.storage == Storage::Local && (v.is_array() || v.ty == Type::Char))
                || v.storage == Storage::Allocatable
        }) && !by_descriptor;
        let mark = if needs_arena {
            let rt = self.rt;
            self.call_external("adjit_arena_mark", &[self.ptr], Some(types::I64), &[rt])?
        } else {
            None
        };
        let entry_depth = self.stack_guard();
        self.load_stack_vars();
        let mut arg_slots = HashMap::new();
        for (pos, &v) in proc.params.iter().enumerate() {
            let var = self.ir_var(v)?;
            if var.storage.param_index() != Some(pos as u32) {
                return err(format!(
                    "parameter {pos} `{}` has storage {:?}",
                    var.name, var.storage
                ));
            }
            let off = pos as i32 * layout::ARG_SLOT;
            let p = self.b.ins().load(self.ptr, FLAGS, args, off);
            let len = self
                .b
                .ins()
                .load(types::I64, FLAGS, args, off + layout::ARG_LEN);
            arg_slots.insert(v.index(), (p, len));
        }
        let taken = self.address_taken();
        let mirrored = mirrored_vars(proc, &taken);
        let one = self.iconst(1);
        // Scalars first: bounds may read them.
        for (i, var) in proc.vars.iter().enumerate() {
            if var.is_array() || var.ty == Type::Char {
                continue;
            }
            let t = cl_type(var.ty)?;
            let home = match var.storage {
                Storage::Global(g, at) => {
                    let addr = self.global_addr(g.index(), at, &var.name)?;
                    Home::Mem(addr)
                }
                Storage::Param(_) => {
                    let (p, len) = *arg_slots.get(&i).ok_or_else(|| CompileError {
                        proc: None,
                        message: format!("`{}` is not in the parameter list", var.name),
                    })?;
                    let short = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, len, 1);
                    self.check_argument_size(short, i, len, one, entry_depth);
                    let x = self.b.declare_var(t);
                    let val = self.b.ins().load(t, FLAGS, p, 0);
                    self.b.def_var(x, val);
                    Home::Reg {
                        var: x,
                        mem: Some(p),
                    }
                }
                Storage::Local | Storage::Allocatable | Storage::AllocatableParam(_) => {
                    let x = self.b.declare_var(t);
                    let zero = self.zero(var.ty)?;
                    self.b.def_var(x, zero);
                    if mirrored[i] {
                        // A vector's room: see `Lower::mirror_load`.
                        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                            StackSlotKind::ExplicitSlot,
                            16,
                            4,
                        ));
                        // Read before its store, the variable is zero.
                        self.b.ins().stack_store(self.ptr, zero, slot, 0);
                        self.mirrors[i] = Some(slot);
                    }
                    let mem = if taken[i] {
                        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                            StackSlotKind::ExplicitSlot,
                            8,
                            3,
                        ));
                        Some(self.b.ins().stack_addr(self.ptr, slot, 0))
                    } else {
                        None
                    };
                    Home::Reg { var: x, mem }
                }
            };
            let elem_size = self.iconst(var.ty.size() as i64);
            self.vars[i] = Some(VarInfo {
                home,
                ty: var.ty,
                lowers: vec![],
                extents: vec![],
                uppers: vec![],
                strides: vec![],
                count: one,
                storage: None,
                limit: None,
                elem_size,
                desc: None,
            });
        }
        // Arrays and character variables.
        let mut shapes: Vec<(&[ir::Dim], usize, EntryShape)> = Vec::new();
        for (i, var) in proc.vars.iter().enumerate() {
            if !(var.is_array() || var.ty == Type::Char) {
                continue;
            }
            if var.storage == Storage::Allocatable {
                self.allocatable_prologue(i, var)?;
                continue;
            }
            if let Storage::AllocatableParam(_) = var.storage {
                // The argument slot holds the caller's descriptor.
                let (desc, _) = arg_slots.get(&i).copied().ok_or_else(|| CompileError {
                    proc: None,
                    message: format!("`{}` is not in the parameter list", var.name),
                })?;
                self.descriptor_var(i, var, desc)?;
                continue;
            }
            let slot = arg_slots.get(&i).copied();
            // Arrays declared with the same explicit bounds and element size
            // have one shape: computed, and checked for overflow, once (the
            // first one's check is the one that would fail).
            let fixed = var.ty != Type::Char && var.dims.iter().all(|d| d.upper.is_some());
            let same = shapes
                .iter()
                .find(|(dims, size, _)| fixed && *dims == &var.dims[..] && *size == var.ty.size());
            let EntryShape {
                lowers,
                extents,
                uppers,
                strides,
                count,
                unit,
                units,
                bytes,
                elem_size,
            } = match same {
                Some((_, _, shape)) => shape.clone(),
                None => {
                    let shape = self.entry_shape(i, var, slot, one)?;
                    if fixed {
                        shapes.push((&var.dims[..], var.ty.size(), shape.clone()));
                    }
                    shape
                }
            };
            let mut storage = None;
            let home = match var.storage {
                Storage::Param(_) => {
                    let (p, len) = slot.ok_or_else(|| CompileError {
                        proc: None,
                        message: format!("`{}` is not in the parameter list", var.name),
                    })?;
                    let short = self.b.ins().icmp(IntCC::SignedLessThan, len, units);
                    if ir::shape::may_be_short(var) {
                        // Fortran 77: a Fortran caller's actual may be
                        // shorter than declared (for these arrays, units are
                        // elements); element references check against what
                        // was given. An argument from the host (call depth
                        // 1) must hold the whole declared shape.
                        let from_host = self.b.ins().icmp_imm_s(IntCC::Equal, entry_depth, 1);
                        let short_from_host = self.b.ins().band(short, from_host);
                        self.check_argument_size(short_from_host, i, len, units, entry_depth);
                        storage = Some(self.b.ins().select(short, len, count));
                    } else {
                        self.check_argument_size(short, i, len, units, entry_depth);
                    }
                    if proc.zeroed_params.contains(&VarId(i as u32)) {
                        // The zero fill on entry (`Proc::zeroed_params`):
                        // the declared elements, or the fewer given.
                        let n = self.b.ins().select(short, len, units);
                        let bytes = self.b.ins().imul(n, elem_size);
                        let zero = self.b.ins().iconst(types::I8, 0);
                        let cfg = self.jit.target_config();
                        self.b.call_memset(cfg, p, zero, bytes);
                        self.after_call = true;
                    }
                    Home::Mem(p)
                }
                Storage::Global(g, at) => Home::Mem(self.global_addr(g.index(), at, &var.name)?),
                Storage::Allocatable | Storage::AllocatableParam(_) => {
                    return err("allocatable handled above")
                }
                Storage::Local => {
                    let fill = if var.ty == Type::Char { b' ' } else { 0 };
                    Home::Mem(self.local_storage(bytes, fill, i)?)
                }
            };
            let limit = match (self.sh.options.bounds_checks, slot) {
                (true, _) => None,
                (false, Some((_, len))) => Some(self.div_or_zero(len, unit)),
                (false, None) => Some(count),
            };
            self.vars[i] = Some(VarInfo {
                home,
                ty: var.ty,
                lowers,
                extents,
                uppers,
                strides,
                count,
                storage,
                limit,
                elem_size,
                desc: None,
            });
        }
        let first = self.blocks.first().copied().ok_or_else(|| CompileError {
            proc: None,
            message: "procedure has no entry block".into(),
        })?;
        self.b.ins().jump(first, &[]);
        Ok(mark)
    }

    /// The bounds, strides and sizes of explicit-shape (or assumed-size)
    /// array or character variable `i` at entry, its element and byte
    /// counts checked for overflow; `slot` is its argument (address,
    /// length) when it is a parameter.
    fn entry_shape(
        &mut self,
        i: usize,
        var: &ir::Var,
        slot: Option<(Value, Value)>,
        one: Value,
    ) -> Result<EntryShape, CompileError> {
        let mut lowers = Vec::new();
        let mut extents = Vec::new();
        for (d, dim) in var.dims.iter().enumerate() {
            let lo = self.bound(&dim.lower)?;
            let ext = match &dim.upper {
                Some(u) => {
                    let up = self.bound(u)?;
                    let e = self.b.ins().isub(up, lo);
                    let e = self.b.ins().iadd_imm_s(e, 1);
                    let zero = self.iconst(0);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, e, 0);
                    self.b.ins().select(neg, zero, e)
                }
                None if d + 1 == var.dims.len() && slot.is_some() => self.iconst(-1), // fixed below
                None => {
                    return err(format!(
                        "`{}` has an assumed bound outside the last dimension of a parameter",
                        var.name
                    ))
                }
            };
            lowers.push(lo);
            extents.push(ext);
        }
        // Product of the explicit extents (the assumed one excluded).
        let assumed_last = var.dims.last().is_some_and(|d| d.upper.is_none());
        let explicit = if assumed_last {
            &extents[..extents.len() - 1]
        } else {
            &extents[..]
        };
        // Element and byte counts are products checked for overflow.
        let mut overflow = None;
        let mut known = one;
        for &e in explicit {
            known = self.size_mul(known, e, &mut overflow);
        }
        let elem_size = match (&var.char_len, var.ty, slot) {
            (_, t, _) if t != Type::Char => self.iconst(var.ty.size() as i64),
            (Some(bnd), _, _) => {
                let c = self.bound(bnd)?;
                let zero = self.iconst(0);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, c, 0);
                self.b.ins().select(neg, zero, c)
            }
            // Assumed length: the bytes available per explicit element.
            (None, _, Some((_, len))) => self.div_or_zero(len, known),
            (None, _, None) => self.iconst(1),
        };
        // Units of `len` (elements, or bytes for characters) per element.
        let unit = if var.ty == Type::Char { elem_size } else { one };
        if let (true, Some((_, len))) = (assumed_last, slot) {
            let per = self.b.ins().imul(known, unit);
            let q = self.div_or_zero(len, per);
            if let Some(last) = extents.last_mut() {
                *last = q;
            }
        }
        let mut strides = Vec::new();
        let mut count = one;
        for &e in &extents {
            strides.push(count);
            count = self.size_mul(count, e, &mut overflow);
        }
        let uppers = lowers
            .iter()
            .zip(&extents)
            .map(|(&l, &e)| {
                let u = self.b.ins().iadd(l, e);
                self.b.ins().iadd_imm_s(u, -1)
            })
            .collect();
        let units = self.size_mul(count, unit, &mut overflow);
        let bytes = self.size_mul(count, elem_size, &mut overflow);
        if let Some(flag) = overflow {
            self.check_simple(flag, code::SIZE_OVERFLOW, -1, i as i64, 0);
        }
        Ok(EntryShape {
            lowers,
            extents,
            uppers,
            strides,
            count,
            unit,
            units,
            bytes,
            elem_size,
        })
    }

    /// An ALLOCATABLE array at entry: a descriptor in the frame, unallocated
    /// (no storage, extents 0, lower bounds 1).
    fn allocatable_prologue(&mut self, i: usize, var: &ir::Var) -> Result<(), CompileError> {
        use runtime::alloc_desc;
        let rank = var.dims.len();
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            alloc_desc::size(rank),
            3,
        ));
        let desc = self.b.ins().stack_addr(self.ptr, slot, 0);
        let (zero, one) = (self.iconst(0), self.iconst(1));
        for off in [
            alloc_desc::BASE,
            alloc_desc::CAPACITY,
            alloc_desc::ALLOCATED,
        ] {
            self.b.ins().store(FLAGS, zero, desc, off);
        }
        for d in 0..rank as i32 {
            self.b
                .ins()
                .store(FLAGS, one, desc, alloc_desc::DIMS + 16 * d);
            self.b
                .ins()
                .store(FLAGS, zero, desc, alloc_desc::DIMS + 16 * d + 8);
        }
        self.descriptor_var(i, var, desc)
    }

    /// Binds the ALLOCATABLE array `i` to its descriptor at `desc` (its
    /// own, or the caller's for one passed by descriptor) and reads its
    /// shape and storage.
    fn descriptor_var(&mut self, i: usize, var: &ir::Var, desc: Value) -> Result<(), CompileError> {
        let zero = self.iconst(0);
        let elem_size = self.iconst(var.ty.size() as i64);
        self.vars[i] = Some(VarInfo {
            home: Home::Mem(zero),
            ty: var.ty,
            lowers: vec![],
            extents: vec![],
            uppers: vec![],
            strides: vec![],
            count: zero,
            storage: None,
            limit: None,
            elem_size,
            desc: Some(desc),
        });
        self.refresh_allocatable(i)
    }

    /// Reads the shape and storage of an ALLOCATABLE array from its
    /// descriptor into values of the current block.
    fn refresh_allocatable(&mut self, i: usize) -> Result<(), CompileError> {
        use runtime::alloc_desc;
        let Some(info) = self.vars.get(i).cloned().flatten() else {
            return err(format!("unknown variable {i}"));
        };
        let Some(desc) = info.desc else {
            return Ok(());
        };
        let rank = self.proc.vars[i].dims.len() as i32;
        let base = self.b.ins().load(self.ptr, FLAGS, desc, alloc_desc::BASE);
        let (mut lowers, mut extents, mut uppers, mut strides) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut count = self.iconst(1);
        for d in 0..rank {
            let lo = self
                .b
                .ins()
                .load(types::I64, FLAGS, desc, alloc_desc::DIMS + 16 * d);
            let ext = self
                .b
                .ins()
                .load(types::I64, FLAGS, desc, alloc_desc::DIMS + 16 * d + 8);
            let up = self.b.ins().iadd(lo, ext);
            uppers.push(self.b.ins().iadd_imm_s(up, -1));
            strides.push(count);
            count = self.b.ins().imul(count, ext);
            lowers.push(lo);
            extents.push(ext);
        }
        let limit = (!self.sh.options.bounds_checks).then_some(count);
        self.vars[i] = Some(VarInfo {
            home: Home::Mem(base),
            lowers,
            extents,
            uppers,
            strides,
            count,
            limit,
            ..info
        });
        self.addresses.retain(|k, _| k.0.index() != i);
        Ok(())
    }

    /// Fails with `NotAllocated` unless the ALLOCATABLE array `var` is
    /// allocated (nothing for other variables).
    fn check_allocated(&mut self, var: VarId, site: usize) -> Result<(), CompileError> {
        if let Some(desc) = self.var_info(var)?.desc {
            let flag = self
                .b
                .ins()
                .load(types::I64, FLAGS, desc, runtime::alloc_desc::ALLOCATED);
            let fail = self.b.ins().icmp_imm_s(IntCC::Equal, flag, 0);
            self.check_simple(
                fail,
                code::NOT_ALLOCATED,
                site as i64,
                var.index() as i64,
                0,
            );
        }
        Ok(())
    }

    /// Lowers [`Inst::Allocate`].
    fn allocate(
        &mut self,
        var: VarId,
        bounds: &[(ir::Value, ir::Value)],
        site: usize,
    ) -> Result<(), CompileError> {
        use runtime::alloc_desc;
        let info = self.var_info(var)?.clone();
        let Some(desc) = info.desc else {
            return err(format!("`{}` is not allocatable", self.ir_var(var)?.name));
        };
        let mut pairs = Vec::new();
        let mut overflow = None;
        let mut count = self.iconst(1);
        for &(l, u) in bounds {
            let (lt, ut) = (self.value_type(l)?, self.value_type(u)?);
            let lo = self.operand(l)?;
            let lo = self.widen_to_i64(lo, lt);
            let up = self.operand(u)?;
            let up = self.widen_to_i64(up, ut);
            let e = self.b.ins().isub(up, lo);
            let e = self.b.ins().iadd_imm_s(e, 1);
            let zero = self.iconst(0);
            let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, e, 0);
            let e = self.b.ins().select(neg, zero, e);
            count = self.size_mul(count, e, &mut overflow);
            pairs.push((lo, e));
        }
        let bytes = self.size_mul(count, info.elem_size, &mut overflow);
        let bytes = match overflow {
            Some(flag) => {
                let bad = self.iconst(-1);
                self.b.ins().select(flag, bad, bytes)
            }
            None => bytes,
        };
        let rt = self.rt;
        let status = self
            .call_external(
                "adjit_allocate",
                &[self.ptr, self.ptr, types::I64],
                Some(types::I64),
                &[rt, desc, bytes],
            )?
            .expect("allocate returns a status");
        let already = self.b.ins().icmp_imm_s(IntCC::Equal, status, 1);
        self.check_simple(
            already,
            code::ALREADY_ALLOCATED,
            site as i64,
            var.index() as i64,
            0,
        );
        let failed = self.b.ins().icmp_imm_s(IntCC::NotEqual, status, 0);
        let zero = self.iconst(0);
        self.check(
            failed,
            ErrorSite {
                kind: code::OUT_OF_MEMORY,
                site: site as i64,
                var: var.index() as i64,
                dim: 0,
            },
            bytes,
            zero,
            zero,
        );
        for (d, (lo, e)) in pairs.into_iter().enumerate() {
            let off = alloc_desc::DIMS + 16 * d as i32;
            self.b.ins().store(FLAGS, lo, desc, off);
            self.b.ins().store(FLAGS, e, desc, off + 8);
        }
        self.refresh_allocatable(var.index())
    }

    /// Lowers [`Inst::Deallocate`]: the storage stays reserved for reuse.
    fn deallocate(&mut self, var: VarId, site: usize) -> Result<(), CompileError> {
        use runtime::alloc_desc;
        self.check_allocated(var, site)?;
        let Some(desc) = self.var_info(var)?.desc else {
            return err(format!("`{}` is not allocatable", self.ir_var(var)?.name));
        };
        let (zero, one) = (self.iconst(0), self.iconst(1));
        self.b.ins().store(FLAGS, zero, desc, alloc_desc::ALLOCATED);
        for d in 0..self.ir_var(var)?.dims.len() as i32 {
            self.b
                .ins()
                .store(FLAGS, one, desc, alloc_desc::DIMS + 16 * d);
            self.b
                .ins()
                .store(FLAGS, zero, desc, alloc_desc::DIMS + 16 * d + 8);
        }
        self.refresh_allocatable(var.index())
    }

    /// `a * b` for element and byte counts (both non-negative): sets or
    /// extends `overflow` with the flag of a product past `i64::MAX`.
    fn size_mul(&mut self, a: Value, b: Value, overflow: &mut Option<Value>) -> Value {
        // Constant sizes stay constants (a local array of constant size may
        // live in the frame: see `local_storage`).
        if let (Some(x), Some(y)) = (self.const_int(a), self.const_int(b)) {
            if let Some(p) = x.checked_mul(y) {
                return self.iconst(p);
            }
        }
        let (product, of) = self.b.ins().smul_overflow(a, b);
        *overflow = Some(match *overflow {
            Some(f) => self.b.ins().bor(f, of),
            None => of,
        });
        product
    }

    /// The operands of a float sum or product with a constant first
    /// operand swapped, so that the constant becomes the instruction's
    /// memory operand (x86 folds a constant only on the right; on the
    /// left it takes a register, which in a loop Cranelift hoists and then
    /// spills and reloads on every trip). Only a constant that is not NaN
    /// moves: IEEE sums and products commute except in which NaN payload
    /// they return when both operands are NaN, so the bits are unchanged.
    fn constant_right(&self, op: BinaryOp, x: Value, y: Value) -> (Value, Value) {
        let commutes = matches!(op, BinaryOp::Add | BinaryOp::Mul);
        if commutes && self.const_float_not_nan(x) && !self.const_float_not_nan(y) {
            (y, x)
        } else {
            (x, y)
        }
    }

    /// True when `v` is a float constant that is not NaN.
    fn const_float_not_nan(&self, v: Value) -> bool {
        use cranelift_codegen::ir::InstructionData;
        let Some(inst) = self.b.func.dfg.value_def(v).inst() else {
            return false;
        };
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryIeee64 { imm, .. } => !f64::from_bits(imm.bits()).is_nan(),
            InstructionData::UnaryIeee32 { imm, .. } => !f32::from_bits(imm.bits()).is_nan(),
            _ => false,
        }
    }

    /// The value of an integer constant.
    fn const_int(&self, v: Value) -> Option<i64> {
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            cranelift_codegen::ir::InstructionData::UnaryImm { imm, .. } => Some(imm.bits()),
            _ => None,
        }
    }

    /// Fails with a stack overflow (naming this procedure and the call
    /// depth) when the native stack pointer is below the runtime's limit,
    /// before the procedure touches its frame. Returns the call depth at
    /// entry (the host's call is depth 1).
    fn stack_guard(&mut self) -> Value {
        let sp = self.b.ins().get_stack_pointer(self.ptr);
        let limit = self
            .b
            .ins()
            .load(self.ptr, FLAGS, self.rt, layout::STACK_LIMIT);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, limit);
        let depth = self.b.ins().load(types::I64, FLAGS, self.rt, layout::DEPTH);
        let zero = self.iconst(0);
        self.check(
            low,
            ErrorSite {
                kind: code::STACK_OVERFLOW,
                site: -1,
                var: -1,
                dim: 0,
            },
            depth,
            zero,
            zero,
        );
        depth
    }

    /// At the end of block `bi` when one of its successors may close a loop
    /// (a target at or before `bi`: every cycle has such an edge) and time
    /// checks are on: fails with a timeout located at the block's
    /// terminator once the runtime's timer raised the interrupt flag (a load
    /// and a branch; no call, so nothing is spilled around it).
    fn time_tick(&mut self, bi: usize, term: &Terminator) {
        let closes_loop = term.successors().iter().any(|t| t.index() <= bi);
        if !self.sh.options.time_checks || !closes_loop {
            return;
        }
        // An atomic load: a plain load of the flag would be merged with an
        // earlier one (no store in between in a loop that only computes),
        // and the loop would never see the timer's store.
        let addr = self.b.ins().iadd_imm_s(self.rt, layout::INTERRUPT as i64);
        let flag = self.b.ins().atomic_load(types::I64, FLAGS, addr);
        self.check_simple(flag, code::TIMEOUT, -1 - bi as i64, -1, 0);
    }

    fn global_addr(&mut self, g: usize, at: i64, name: &str) -> Result<Value, CompileError> {
        if g >= self.sh.globals {
            return Err(CompileError {
                proc: None,
                message: format!("`{name}` names an unknown global"),
            });
        }
        // The offset counts elements of the global's type (and length).
        let elem = self
            .sh
            .module
            .globals
            .get(g)
            .map_or(0, |gl| gl.ty.size() as i64 * gl.char_len.max(1));
        let bytes = at * elem;
        // The storage of this call's globals: the table the runtime context
        // points to (constant during the call).
        let table = self.b.ins().load(self.ptr, FLAGS, self.rt, layout::GLOBALS);
        let base = self.b.ins().load(self.ptr, FLAGS, table, (g * 8) as i32);
        Ok(self.b.ins().iadd_imm_s(base, bytes))
    }

    /// Storage for a local array or character variable: a stack slot when
    /// small and of constant size, else the runtime arena.
    fn local_storage(&mut self, bytes: Value, fill: u8, var: usize) -> Result<Value, CompileError> {
        // Fixed arrays live in the native frame only while a frame stays
        // small: 1000 nested calls must fit a 2 MiB thread stack.
        const STACK_LIMIT: i64 = 1024;
        let const_bytes = self.const_int(bytes);
        let fits = |n: i64| (0..=STACK_LIMIT - self.frame_bytes).contains(&n);
        if let Some(n) = const_bytes.filter(|&n| fits(n)) {
            self.frame_bytes += (n + 15) & !15;
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                n.max(1) as u32,
                4,
            ));
            let addr = self.b.ins().stack_addr(self.ptr, slot, 0);
            let cfg = self.jit.target_config();
            // The alignment Cranelift may assume must not exceed the size
            // (found by the fuzzer: a 1-byte CHARACTER panicked here).
            let align = if n >= 16 {
                16
            } else {
                1u8 << (n.max(1).ilog2())
            };
            if n > 0 {
                self.b
                    .emit_small_memset(cfg, addr, fill, n as u64, align, FLAGS);
            }
            return Ok(addr);
        }
        let rt = self.rt;
        let fill_v = self.iconst(fill as i64);
        let p = self
            .call_external(
                "adjit_arena_alloc",
                &[self.ptr, types::I64, types::I64],
                Some(self.ptr),
                &[rt, bytes, fill_v],
            )?
            .expect("alloc returns a pointer");
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        let zero = self.iconst(0);
        self.check(
            null,
            ErrorSite {
                kind: code::OUT_OF_MEMORY,
                site: -1,
                var: var as i64,
                dim: 0,
            },
            bytes,
            zero,
            zero,
        );
        Ok(p)
    }

    fn zero(&mut self, ty: Type) -> Result<Value, CompileError> {
        Ok(match ty {
            Type::F32 => self.b.ins().f32const(Ieee32::with_bits(0)),
            Type::F64 => self.b.ins().f64const(Ieee64::with_bits(0)),
            t => self.b.ins().iconst(cl_type(t)?, 0),
        })
    }

    /// The error block and the exit block.
    fn epilogue(&mut self, mark: Option<Value>) -> Result<(), CompileError> {
        self.b.switch_to_block(self.err_block);
        let params: Vec<Value> = self.b.block_params(self.err_block).to_vec();
        let base = layout::ERROR;
        let field = |k: usize| base + 8 * k as i32;
        // The failing check's row of the site table.
        let table: Box<[u8]> = self
            .error_sites
            .iter()
            .flatten()
            .flat_map(|x| x.to_ne_bytes())
            .collect();
        let table_addr = self.b.ins().iconst(self.ptr, table.as_ptr() as i64);
        self.sh.literals.push(table);
        let row_bytes = self.iconst(32);
        let offset = self.b.ins().imul(params[0], row_bytes);
        let row = self.b.ins().iadd(table_addr, offset);
        // The table is bytes: no alignment is assumed.
        let [kind, site, var, dim] =
            [0, 8, 16, 24].map(|at| self.b.ins().load(types::I64, MemFlagsData::new(), row, at));
        // ErrorSlot order: kind, proc, site, var, dim, index, lower, upper.
        let pid = self.iconst(self.pid.0 as i64);
        let values = [kind, pid, site, var, dim, params[1], params[2], params[3]];
        for (k, v) in values.into_iter().enumerate() {
            self.b.ins().store(FLAGS, v, self.rt, field(k));
        }
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().jump(self.exit_block, &[BlockArg::Value(one)]);

        self.b.switch_to_block(self.exit_block);
        let status = self.b.block_params(self.exit_block)[0];
        if let Some(mark) = mark {
            let rt = self.rt;
            self.call_external(
                "adjit_arena_release",
                &[self.ptr, types::I64],
                None,
                &[rt, mark],
            )?;
        }
        self.b.ins().return_(&[status]);
        Ok(())
    }

    fn operand(&self, v: ir::Value) -> Result<Value, CompileError> {
        match self.values.get(v.index()) {
            Some(Some((blk, x))) if *blk == self.current => Ok(*x),
            _ => err(format!(
                "value {v} used outside the block defining it or before its definition"
            )),
        }
    }

    fn value_type(&self, v: ir::Value) -> Result<Type, CompileError> {
        self.proc
            .insts
            .get(v.index())
            .and_then(|i| i.ty)
            .map_or_else(|| err(format!("value {v} has no type")), Ok)
    }

    fn lower_body(&mut self) -> Result<(), CompileError> {
        for (bi, block) in self.proc.blocks.iter().enumerate() {
            self.current = bi as u32;
            self.addresses.clear();
            self.sincos = sincos_operands(self.proc, block);
            self.after_call = false;
            self.mirrored_loads.clear();
            self.b.switch_to_block(self.blocks[bi]);
            for (i, var) in self.proc.vars.iter().enumerate() {
                if var.storage.is_allocatable() {
                    self.refresh_allocatable(i)?;
                }
            }
            for (position, &v) in block.insts.iter().enumerate() {
                let data = self
                    .proc
                    .insts
                    .get(v.index())
                    .map_or_else(|| err(format!("unknown instruction {v}")), Ok)?;
                self.position = position;
                let result = self.lower_inst(v, &data.kind, data.ty)?;
                if let Some(x) = result {
                    self.values[v.index()] = Some((self.current, x));
                    if let Inst::Load(var) = data.kind {
                        if self.mirrors[var.index()].is_some() {
                            self.mirrored_loads.push((v, var));
                        }
                    }
                }
            }
            self.stacks = [StackCache::default(); 3];
            self.time_tick(bi, &block.term);
            self.lower_term(bi, &block.term)?;
        }
        Ok(())
    }

    fn block(&self, b: ir::BlockId) -> Result<Block, CompileError> {
        self.blocks
            .get(b.index())
            .copied()
            .map_or_else(|| err(format!("unknown block {b}")), Ok)
    }

    fn lower_term(&mut self, bi: usize, term: &Terminator) -> Result<(), CompileError> {
        match term {
            Terminator::Jump(t) => {
                let t = self.block(*t)?;
                self.b.ins().jump(t, &[]);
            }
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                let c = self.operand(*cond)?;
                let (t, e) = (self.block(*then_dest)?, self.block(*else_dest)?);
                if self.joint_test(*cond) {
                    // The guarded copy of a speculated stretch: laid out
                    // after the hot code, which falls through.
                    self.b.set_cold_block(e);
                }
                self.b.ins().brif(c, t, &[], e, &[]);
            }
            Terminator::Switch {
                value,
                cases,
                default,
            } => {
                let ty = self.value_type(*value)?;
                if !ty.is_int() {
                    return err("switch on a non-integer value");
                }
                let x = self.operand(*value)?;
                let x = self.widen_to_i64(x, ty);
                let mut sw = Switch::new();
                let mut seen = std::collections::HashSet::new();
                for &(key, dest) in cases {
                    if seen.insert(key) {
                        sw.set_entry(key as u64 as u128, self.block(dest)?);
                    }
                }
                let d = self.block(*default)?;
                sw.emit(&mut self.b, x, d);
            }
            Terminator::Return => {
                self.flush_promoted();
                self.flush_stacks();
                let zero = self.b.ins().iconst(types::I32, 0);
                self.b.ins().jump(self.exit_block, &[BlockArg::Value(zero)]);
            }
            Terminator::Fail(_) => {
                let zero = self.iconst(0);
                let site = ErrorSite {
                    kind: code::FAIL,
                    site: -1 - bi as i64,
                    var: -1,
                    dim: 0,
                };
                self.fail_at(site, zero, zero, zero);
            }
        }
        Ok(())
    }

    /// Address of an array element and its 0-based linear index, with bounds
    /// checks when enabled: one branch per access (see
    /// [`Lower::check_all`]), and none for an element the current IR block
    /// already addressed (its address is reused).
    fn elem_addr(
        &mut self,
        var: VarId,
        index: &[ir::Value],
        site: usize,
    ) -> Result<(Value, Value), CompileError> {
        let key = (var, index.to_vec());
        if let Some(&known) = self.addresses.get(&key) {
            return Ok(known);
        }
        self.check_allocated(var, site)?;
        let info = self.var_info(var)?.clone();
        if index.len() != info.lowers.len() {
            return err(format!(
                "`{}` has {} dimensions, {} subscripts given",
                self.ir_var(var)?.name,
                info.lowers.len(),
                index.len()
            ));
        }
        // A reference a versioned loop's preheader test covered.
        let covered = self
            .sh
            .versions
            .proc(self.pid)
            .is_some_and(|p| p.unchecked.contains(&ir::Value(site as u32)));
        let checking = self.sh.options.bounds_checks && !covered;
        let mut checks = Vec::new();
        let linear = self.linear_offset(
            var,
            index,
            &info,
            site,
            checking.then_some(None),
            &mut checks,
        )?;
        // Without bounds checks an element must still lie in the storage.
        let storage = if self.sh.options.bounds_checks {
            info.storage
        } else {
            info.limit
        };
        if let Some(storage) = storage.filter(|_| !covered) {
            let fail = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, linear, storage);
            let zero = self.iconst(0);
            let site = ErrorSite {
                kind: code::INDEX_OUT_OF_BOUNDS,
                site: site as i64,
                var: var.index() as i64,
                dim: STORAGE_DIM,
            };
            checks.push((fail, site, linear, zero, storage));
        }
        self.check_all(&checks);
        let base = match info.home {
            Home::Mem(a) => a,
            Home::Reg { .. } => {
                return err(format!("`{}` is not an array", self.ir_var(var)?.name))
            }
        };
        let address = if covered {
            self.origin_relative_address(base, index, &info)?
        } else {
            let bytes = self.b.ins().imul(linear, info.elem_size);
            self.b.ins().iadd(base, bytes)
        };
        let found = (address, linear);
        self.addresses.insert(key, found);
        Ok(found)
    }

    /// The address of element `index` of the array at `base` laid out as
    /// `info` says, for a reference a versioned loop's preheader test
    /// covered: `(base - lower · strides · size) + index · strides · size`
    /// rather than `base + (index - lower) · strides · size`. The same
    /// address in 64-bit wrapping arithmetic; the first term depends on
    /// the array alone, so Cranelift computes it once before the loop, and
    /// the second folds into the addressing mode, where the subtraction of
    /// the lower bound took one instruction per element (the DO variable
    /// itself is the subscript).
    fn origin_relative_address(
        &mut self,
        base: Value,
        index: &[ir::Value],
        info: &VarInfo,
    ) -> Result<Value, CompileError> {
        let mut lower = None;
        let mut at = None;
        for (d, &iv) in index.iter().enumerate() {
            let ty = self.value_type(iv)?;
            let i = self.operand(iv)?;
            let i = self.widen_to_i64(i, ty);
            let (i, lb) = if d == 0 {
                (i, info.lowers[0])
            } else {
                (
                    self.b.ins().imul(i, info.strides[d]),
                    self.b.ins().imul(info.lowers[d], info.strides[d]),
                )
            };
            lower = Some(match lower {
                Some(sum) => self.b.ins().iadd(sum, lb),
                None => lb,
            });
            at = Some(match at {
                Some(sum) => self.b.ins().iadd(sum, i),
                None => i,
            });
        }
        let (Some(lower), Some(at)) = (lower, at) else {
            return Ok(base);
        };
        let lower_bytes = self.b.ins().imul(lower, info.elem_size);
        let origin = self.b.ins().isub(base, lower_bytes);
        let at_bytes = self.b.ins().imul(at, info.elem_size);
        Ok(self.b.ins().iadd(origin, at_bytes))
    }

    /// The column-major offset of element `index` of `var` (laid out as
    /// `info` says). With `checking` set, each subscript gets its bounds
    /// check on `checks`, failing only where the given condition holds
    /// when there is one (an empty slice checks nothing).
    fn linear_offset(
        &mut self,
        var: VarId,
        index: &[ir::Value],
        info: &VarInfo,
        site: usize,
        checking: Option<Option<Value>>,
        checks: &mut Vec<(Value, ErrorSite, Value, Value, Value)>,
    ) -> Result<Value, CompileError> {
        let mut linear = self.iconst(0);
        for (d, &iv) in index.iter().enumerate() {
            let ty = self.value_type(iv)?;
            if !ty.is_int() {
                return err("non-integer subscript");
            }
            let i = self.operand(iv)?;
            let i = self.widen_to_i64(i, ty);
            let off = self.b.ins().isub(i, info.lowers[d]);
            if let Some(when) = checking {
                let out =
                    self.b
                        .ins()
                        .icmp(IntCC::UnsignedGreaterThanOrEqual, off, info.extents[d]);
                let fail = match when {
                    Some(w) => self.b.ins().band(out, w),
                    None => out,
                };
                let site = ErrorSite {
                    kind: code::INDEX_OUT_OF_BOUNDS,
                    site: site as i64,
                    var: var.index() as i64,
                    dim: d as i64,
                };
                checks.push((fail, site, i, info.lowers[d], info.uppers[d]));
            }
            let scaled = if d == 0 {
                off
            } else {
                self.b.ins().imul(off, info.strides[d])
            };
            linear = self.b.ins().iadd(linear, scaled);
        }
        Ok(linear)
    }

    /// The address and length of a [`CallArg::Slice`]: `n` elements from
    /// element `index` of `var`. A length of 0 or less passes no storage
    /// and checks nothing; otherwise the first element's subscripts are
    /// checked as an element reference's (with bounds checks on), and the
    /// slice must fit in the storage the variable passes on (always
    /// checked: the callee trusts the length).
    fn slice_arg(
        &mut self,
        var: VarId,
        index: &[ir::Value],
        n: ir::Value,
        site: usize,
    ) -> Result<(Value, Value), CompileError> {
        self.check_allocated(var, site)?;
        let info = self.var_info(var)?.clone();
        if index.len() != info.lowers.len() {
            return err(format!(
                "slice of `{}`: {} subscripts for {} dimensions",
                self.ir_var(var)?.name,
                index.len(),
                info.lowers.len()
            ));
        }
        let nty = self.value_type(n)?;
        let len = self.operand(n)?;
        let len = self.widen_to_i64(len, nty);
        let nonempty = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, 0);
        let zero = self.iconst(0);
        let len = self.b.ins().select(nonempty, len, zero);
        let mut checks = Vec::new();
        let checking = self.sh.options.bounds_checks.then_some(Some(nonempty));
        let linear = self.linear_offset(var, index, &info, site, checking, &mut checks)?;
        // The last element of the slice lies in the storage passed on.
        let storage = info.storage.unwrap_or(info.count);
        let end = self.b.ins().iadd(linear, len);
        let past = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, storage);
        let fail = self.b.ins().band(past, nonempty);
        let last = self.b.ins().iadd_imm_s(end, -1);
        let site = ErrorSite {
            kind: code::INDEX_OUT_OF_BOUNDS,
            site: site as i64,
            var: var.index() as i64,
            dim: STORAGE_DIM,
        };
        checks.push((fail, site, last, zero, storage));
        self.check_all(&checks);
        let base = match info.home {
            Home::Mem(a) => a,
            Home::Reg { .. } => {
                return err(format!("`{}` is not an array", self.ir_var(var)?.name))
            }
        };
        let start = self.b.ins().select(nonempty, linear, zero);
        let bytes = self.b.ins().imul(start, info.elem_size);
        // A character argument's length is its byte count.
        let len = if info.ty == Type::Char {
            self.b.ins().imul(len, info.elem_size)
        } else {
            len
        };
        Ok((self.b.ins().iadd(base, bytes), len))
    }

    /// The preheader test of a versioned loop: true when every element
    /// reference of the guard, over its whole range, lies inside its
    /// variable's dimensions and inside the storage its checks (or, with
    /// bounds checks off, the storage check) would test, and every stack
    /// listed has the room its pushes or pops need ([`Lower::stack_room`]).
    fn range_guard(&mut self, guard: &crate::opt::licm::LoopGuard) -> Result<Value, CompileError> {
        let mut ok = self.b.ins().iconst(types::I8, 1);
        for room in &guard.stacks {
            let fits = self.stack_room(room)?;
            ok = self.b.ins().band(ok, fits);
        }
        for access in &guard.accesses {
            let info = self.var_info(access.var)?.clone();
            if info.desc.is_some() || access.dims.len() != info.lowers.len() {
                return err("internal: loop guard on an array without fixed bounds");
            }
            let mut linear = self.iconst(0);
            for (d, &(lo, hi)) in access.dims.iter().enumerate() {
                let (lo, hi) = (self.operand(lo)?, self.operand(hi)?);
                let above = self
                    .b
                    .ins()
                    .icmp(IntCC::SignedGreaterThanOrEqual, lo, info.lowers[d]);
                let below = self
                    .b
                    .ins()
                    .icmp(IntCC::SignedLessThanOrEqual, hi, info.uppers[d]);
                let inside = self.b.ins().band(above, below);
                ok = self.b.ins().band(ok, inside);
                let off = self.b.ins().isub(hi, info.lowers[d]);
                let scaled = self.b.ins().imul(off, info.strides[d]);
                linear = self.b.ins().iadd(linear, scaled);
            }
            let storage = if self.sh.options.bounds_checks {
                info.storage
            } else {
                info.limit
            };
            if let Some(storage) = storage {
                let fits = self.b.ins().icmp(IntCC::SignedLessThan, linear, storage);
                ok = self.b.ins().band(ok, fits);
            }
        }
        Ok(ok)
    }

    fn lower_inst(
        &mut self,
        v: ir::Value,
        inst: &Inst,
        ty: Option<Type>,
    ) -> Result<Option<Value>, CompileError> {
        let site = v.index();
        let need_ty = || ty.map_or_else(|| err(format!("{v} needs a type")), Ok);
        if let Some(guard) = self
            .sh
            .versions
            .proc(self.pid)
            .and_then(|p| p.guards.get(&v))
        {
            return self.range_guard(guard).map(Some);
        }
        Ok(Some(match inst {
            Inst::Const(c) => {
                let t = need_ty()?;
                match (t, *c) {
                    (Type::F64, Const::Float(x)) => {
                        self.b.ins().f64const(Ieee64::with_bits(x.to_bits()))
                    }
                    (Type::F32, Const::Float(x)) => self
                        .b
                        .ins()
                        .f32const(Ieee32::with_bits((x as f32).to_bits())),
                    (Type::F64, Const::Int(x)) => self
                        .b
                        .ins()
                        .f64const(Ieee64::with_bits((x as f64).to_bits())),
                    (Type::F32, Const::Int(x)) => self
                        .b
                        .ins()
                        .f32const(Ieee32::with_bits((x as f32).to_bits())),
                    (Type::I32 | Type::I64, Const::Int(x)) => self.b.ins().iconst(
                        cl_type(t)?,
                        if t == Type::I32 { x as i32 as i64 } else { x },
                    ),
                    (Type::Bool, Const::Bool(x)) => self.b.ins().iconst(types::I8, x as i64),
                    (t, c) => return err(format!("constant {c:?} of type {}", t.name())),
                }
            }
            Inst::Load(var) => self.load_scalar(*var)?,
            Inst::Store(var, x) => {
                let x = self.operand(*x)?;
                self.store_scalar(*var, x)?;
                return Ok(None);
            }
            Inst::LoadElem(var, idx) => {
                let t = cl_type(self.ir_var(*var)?.ty)?;
                let (addr, _) = self.elem_addr(*var, idx, site)?;
                self.b.ins().load(t, FLAGS, addr, 0)
            }
            Inst::StoreElem(var, idx, x) => {
                let x = self.operand(*x)?;
                let (addr, _) = self.elem_addr(*var, idx, site)?;
                self.b.ins().store(FLAGS, x, addr, 0);
                return Ok(None);
            }
            Inst::Unary(op @ (UnaryOp::Sin | UnaryOp::Cos), a) if self.sincos.contains_key(a) => {
                let pair = match self.sincos.get(a).copied().flatten() {
                    Some(pair) => pair,
                    None => {
                        let x = self.operand(*a)?;
                        let pair = self.sincos_call(x)?;
                        self.sincos.insert(*a, Some(pair));
                        pair
                    }
                };
                if *op == UnaryOp::Sin {
                    pair.0
                } else {
                    pair.1
                }
            }
            Inst::Unary(op, a) => {
                let t = self.value_type(*a)?;
                let x = self.operand(*a)?;
                self.unary(*op, t, x)?
            }
            Inst::Binary(..) if self.fused.contractions.contains_key(&v) => {
                let c = self.fused.contractions[&v];
                self.fused_multiply_add(c, need_ty()?)?
            }
            // Lowered inside the fused multiply-add that uses it.
            Inst::Select(..) if self.fused.guards.contains(&v) => return Ok(None),
            Inst::Binary(op, a, c) => {
                let t = self.value_type(*a)?;
                let (x, y) = (self.operand(*a)?, self.operand(*c)?);
                let ty_b = self.value_type(*c)?;
                self.binary(*op, t, ty_b, x, y, site, *c)?
            }
            Inst::Cmp(op, a, c) => match self.nonzero_test(*op, *a, *c) {
                Some(magnitude) => {
                    let x = self.operand(magnitude)?;
                    let zero = match self.value_type(magnitude)? {
                        Type::F64 => self.b.ins().f64const(Ieee64::with_bits(0)),
                        _ => self.b.ins().f32const(Ieee32::with_bits(0)),
                    };
                    self.b.ins().fcmp(FloatCC::OrderedNotEqual, x, zero)
                }
                None => {
                    let t = self.value_type(*a)?;
                    let (x, y) = (self.operand(*a)?, self.operand(*c)?);
                    self.compare(*op, t, x, y)
                }
            },
            Inst::Convert(a, rounding) => {
                let from = self.value_type(*a)?;
                let x = self.operand(*a)?;
                self.convert(x, from, need_ty()?, *rounding)?
            }
            Inst::Select(c, a, d) => {
                // Quickest compiled, a strong zero is the plain select of
                // the tests already lowered: bit for bit the same value as
                // the masks below, from one instruction where they take
                // about ten (Bratu's reverse sweep has 82).
                let strong = if self.sh.options.compile_speed == CompileSpeed::Fast {
                    None
                } else {
                    ty.and_then(|t| self.strong_zero_tests(*c, *a, t))
                };
                match strong {
                    Some((tests, t)) => match self.product_then_zero_test(&tests, t, *d)? {
                        Some(x) => x,
                        None => self.masked_zero_select(&tests, t, *d, false)?,
                    },
                    None => {
                        let (c, x, y) = (self.operand(*c)?, self.operand(*a)?, self.operand(*d)?);
                        self.b.ins().select(c, x, y)
                    }
                }
            }
            Inst::DimLower(var, d) | Inst::DimExtent(var, d) => {
                let info = self.var_info(*var)?;
                let list = if matches!(inst, Inst::DimLower(..)) {
                    &info.lowers
                } else {
                    &info.extents
                };
                let x = *list
                    .get(*d as usize)
                    .map_or_else(|| err(format!("dimension {d} out of range")), Ok)?;
                match need_ty()? {
                    Type::I64 => x,
                    Type::I32 => self.b.ins().ireduce(types::I32, x),
                    t => return err(format!("dimension query of type {}", t.name())),
                }
            }
            Inst::Call(callee, args) => {
                self.call(*callee, args, site)?;
                return Ok(None);
            }
            Inst::Allocate(var, bounds) => {
                self.allocate(*var, bounds, site)?;
                return Ok(None);
            }
            Inst::Deallocate(var) => {
                self.deallocate(*var, site)?;
                return Ok(None);
            }
            Inst::Allocated(var) => {
                let Some(desc) = self.var_info(*var)?.desc else {
                    return err(format!("`{}` is not allocatable", self.ir_var(*var)?.name));
                };
                let flag =
                    self.b
                        .ins()
                        .load(types::I64, FLAGS, desc, runtime::alloc_desc::ALLOCATED);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, flag, 0)
            }
            Inst::CharAssign(dst, src) => {
                let (dp, dl) = self.char_ref(dst, site)?;
                let (sp, sl) = self.char_ref(src, site)?;
                let p = self.ptr;
                self.call_external(
                    "adjit_char_assign",
                    &[p, types::I64, p, types::I64],
                    None,
                    &[dp, dl, sp, sl],
                )?;
                return Ok(None);
            }
            Inst::CharCompare(op, a, c) => {
                let (ap, al) = self.char_ref(a, site)?;
                let (cp, cl) = self.char_ref(c, site)?;
                let p = self.ptr;
                let r = self
                    .call_external(
                        "adjit_char_compare",
                        &[p, types::I64, p, types::I64],
                        Some(types::I32),
                        &[ap, al, cp, cl],
                    )?
                    .expect("compare returns a value");
                let zero = self.b.ins().iconst(types::I32, 0);
                self.b.ins().icmp(int_cc(*op), r, zero)
            }
            Inst::CharLen(a) => self.char_ref(a, site)?.1,
            Inst::CharIndex(a, c) => {
                let (ap, al) = self.char_ref(a, site)?;
                let (cp, cl) = self.char_ref(c, site)?;
                let p = self.ptr;
                self.call_external(
                    "adjit_char_index",
                    &[p, types::I64, p, types::I64],
                    Some(types::I64),
                    &[ap, al, cp, cl],
                )?
                .expect("index returns a value")
            }
            Inst::CharSearch(op, back, a, c) => {
                let (ap, al) = self.char_ref(a, site)?;
                let (cp, cl) = self.char_ref(c, site)?;
                let code = self
                    .b
                    .ins()
                    .iconst(types::I64, char_search_code(*op, *back));
                let p = self.ptr;
                self.call_external(
                    "adjit_char_search",
                    &[types::I64, p, types::I64, p, types::I64],
                    Some(types::I64),
                    &[code, ap, al, cp, cl],
                )?
                .expect("search returns a value")
            }
            Inst::Io(op) => return self.io(op, ty, site),
            Inst::Push(kind, a) => {
                let t = self.value_type(*a)?;
                let x = self.operand(*a)?;
                self.push(*kind, t, x, self.segment_checked(v))?;
                return Ok(None);
            }
            Inst::Pop(kind) => self.pop(*kind, need_ty()?, site, self.segment_checked(v))?,
        }))
    }

    /// One I/O step: a call to the runtime's I/O helpers, whose non-zero
    /// status is an I/O error at this instruction.
    fn io(
        &mut self,
        op: &IoOp,
        ty: Option<Type>,
        site: usize,
    ) -> Result<Option<Value>, CompileError> {
        let (p, i64t, rt) = (self.ptr, types::I64, self.rt);
        // The helper's kind code of a number or logical type.
        let kind_of = |t: Type| match t {
            Type::F32 => 1,
            Type::F64 => 2,
            Type::Bool => 3,
            _ => 0,
        };
        let mut result = None;
        let status = match op {
            IoOp::BeginWrite(format) => {
                let (a, l) = self.format_literal(format.as_deref());
                self.call_external(
                    "adjit_io_begin_write",
                    &[p, p, i64t],
                    Some(types::I32),
                    &[rt, a, l],
                )?
            }
            IoOp::Put(x) => {
                let t = self.value_type(*x)?;
                let v = self.operand(*x)?;
                let bits = match t {
                    Type::F32 => {
                        let d = self.b.ins().fpromote(types::F64, v);
                        self.b.ins().bitcast(i64t, MemFlagsData::new(), d)
                    }
                    Type::F64 => self.b.ins().bitcast(i64t, MemFlagsData::new(), v),
                    _ => self.widen_to_i64(v, t),
                };
                let k = self.iconst(kind_of(t));
                let size = self.iconst(t.size() as i64);
                self.call_external(
                    "adjit_io_put",
                    &[p, i64t, i64t, i64t],
                    Some(types::I32),
                    &[rt, k, bits, size],
                )?
            }
            IoOp::PutChar(r) => {
                let (a, l) = self.char_ref(r, site)?;
                self.call_external(
                    "adjit_io_put_char",
                    &[p, p, i64t],
                    Some(types::I32),
                    &[rt, a, l],
                )?
            }
            IoOp::EndWrite => {
                self.call_external("adjit_io_end_write", &[p], Some(types::I32), &[rt])?
            }
            IoOp::BeginKeep(name) | IoOp::BeginRestore(name) => {
                let data: Box<[u8]> = name.clone().into_boxed_slice();
                let addr = data.as_ptr() as i64;
                self.sh.literals.push(data);
                let (a, l) = (self.b.ins().iconst(p, addr), self.iconst(name.len() as i64));
                let restore = self.iconst(matches!(op, IoOp::BeginRestore(_)) as i64);
                self.call_external(
                    "adjit_io_begin_kept",
                    &[p, p, i64t, i64t],
                    Some(types::I32),
                    &[rt, a, l, restore],
                )?
            }
            IoOp::BeginRead | IoOp::EndRead => {
                let start = self.iconst(matches!(op, IoOp::BeginRead) as i64);
                self.call_external(
                    "adjit_io_read_bracket",
                    &[p, i64t],
                    Some(types::I32),
                    &[rt, start],
                )?
            }
            IoOp::Get => {
                let t = ty.ok_or_else(|| CompileError {
                    proc: None,
                    message: "an input value needs a type".into(),
                })?;
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    8,
                    3,
                ));
                let out = self.b.ins().stack_addr(p, slot, 0);
                let k = self.iconst(kind_of(t));
                let st = self.call_external(
                    "adjit_io_get",
                    &[p, i64t, p],
                    Some(types::I32),
                    &[rt, k, out],
                )?;
                let bits = self.b.ins().load(i64t, FLAGS, out, 0);
                result = Some(match t {
                    Type::F64 => self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits),
                    Type::F32 => {
                        let d = self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits);
                        self.b.ins().fdemote(types::F32, d)
                    }
                    other => self.convert(bits, Type::I64, other, Rounding::Trunc)?,
                });
                st
            }
            IoOp::GetChar(r) | IoOp::EndWriteTo(r) => {
                let (a, l) = self.char_ref(r, site)?;
                let helper = if matches!(op, IoOp::GetChar(_)) {
                    "adjit_io_get_char"
                } else {
                    "adjit_io_end_write_to"
                };
                self.call_external(helper, &[p, p, i64t], Some(types::I32), &[rt, a, l])?
            }
            IoOp::BeginReadFrom(r, format) => {
                let (a, l) = self.char_ref(r, site)?;
                let (fa, fl) = self.format_literal(format.as_deref());
                self.call_external(
                    "adjit_io_begin_read_from",
                    &[p, p, i64t, p, i64t],
                    Some(types::I32),
                    &[rt, a, l, fa, fl],
                )?
            }
            IoOp::CatchErrors => {
                self.call_external("adjit_io_catch_errors", &[p], Some(types::I32), &[rt])?
            }
            IoOp::JoinChars(start) => {
                let start = self.iconst(*start as i64);
                self.call_external(
                    "adjit_io_join_chars",
                    &[p, i64t],
                    Some(types::I32),
                    &[rt, start],
                )?
            }
            IoOp::Status => {
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    8,
                    3,
                ));
                let out = self.b.ins().stack_addr(p, slot, 0);
                let st =
                    self.call_external("adjit_io_status", &[p, p], Some(types::I32), &[rt, out])?;
                let status = self.b.ins().load(i64t, FLAGS, out, 0);
                result = Some(self.convert(status, Type::I64, Type::I32, Rounding::Trunc)?);
                st
            }
        }
        .expect("I/O helpers return a status");
        self.check_simple(status, code::IO, site as i64, -1, 0);
        Ok(result)
    }

    /// The address and length of a format's text, kept with the compiled
    /// code's literals (`(0, -1)`: list-directed).
    fn format_literal(&mut self, format: Option<&[u8]>) -> (Value, Value) {
        let p = self.jit.isa().pointer_type();
        let (addr, len) = match format {
            Some(f) => {
                let data: Box<[u8]> = f.to_vec().into_boxed_slice();
                let addr = data.as_ptr() as i64;
                self.sh.literals.push(data);
                (addr, f.len() as i64)
            }
            None => (0, -1),
        };
        (self.b.ins().iconst(p, addr), self.iconst(len))
    }

    /// `(sin x, cos x)` of an `f64` by one call to the C library's
    /// `sincos` (see [`crate::libm::FUSED_SINCOS`]), which writes both into
    /// a stack slot of the frame.
    fn sincos_call(&mut self, x: Value) -> Result<(Value, Value), CompileError> {
        let p = self.jit.isa().pointer_type();
        let f = self.external_returning("sincos", &[types::F64, p, p], &[])?;
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
        let s = self.b.ins().stack_addr(p, slot, 0);
        let c = self.b.ins().stack_addr(p, slot, 8);
        self.b.ins().call(f, &[x, s, c]);
        self.reload_mirrors()?;
        Ok((
            self.b.ins().load(types::F64, FLAGS, s, 0),
            self.b.ins().load(types::F64, FLAGS, c, 0),
        ))
    }

    fn float_call(
        &mut self,
        name64: &'static str,
        name32: &'static str,
        t: types::Type,
        args: &[Value],
    ) -> Result<Value, CompileError> {
        let name = if t == types::F32 { name32 } else { name64 };
        let params = vec![t; args.len()];
        let r = self
            .call_external(name, &params, Some(t), args)?
            .expect("math returns a value");
        self.reload_mirrors()?;
        Ok(r)
    }

    /// The value of float type `t` in mirror slot `slot`, read as lane 0
    /// of a vector load: Cranelift folds a standalone load of a stack slot
    /// into an address relative to the stack pointer, but a scalar load it
    /// sinks into an arithmetic operand takes the slot's address from a
    /// register, which it hoists out of the loop and keeps live across it.
    fn mirror_load(&mut self, slot: StackSlot, t: types::Type) -> Value {
        let vector = if t == types::F32 {
            types::F32X4
        } else {
            types::F64X2
        };
        let lanes = self.b.ins().stack_load(self.ptr, vector, slot, 0);
        self.b.ins().extractlane(lanes, 0)
    }

    /// After a library call lowered in line (whose block dominates the
    /// rest of the IR block): the reads of mirrored variables made before
    /// it ([`mirrored_vars`]) that an instruction reads before the block's
    /// next call read their slots again, so such a value is loaded where
    /// it is used instead of living across the call.
    fn reload_mirrors(&mut self) -> Result<(), CompileError> {
        self.after_call = true;
        let block = &self.proc.blocks[self.current as usize];
        let rest = block.insts.get(self.position + 1..).unwrap_or(&[]);
        let mut wanted: Vec<ir::Value> = Vec::new();
        for &u in rest {
            let Some(data) = self.proc.insts.get(u.index()) else {
                break;
            };
            data.kind.for_each_operand(|x| {
                if self.mirrored_loads.iter().any(|&(m, _)| m == x) && !wanted.contains(&x) {
                    wanted.push(x);
                }
            });
            if !inline_inst(&data.kind) {
                break;
            }
        }
        for (v, var) in self.mirrored_loads.clone() {
            if !wanted.contains(&v) {
                continue;
            }
            let (Some(slot), t) = (self.mirrors[var.index()], cl_type(self.ir_var(var)?.ty)?)
            else {
                continue;
            };
            let x = self.mirror_load(slot, t);
            self.values[v.index()] = Some((self.current, x));
        }
        Ok(())
    }

    /// Round to nearest, ties away from zero (Fortran ANINT / NINT).
    fn round_away(&mut self, x: Value, t: types::Type) -> Value {
        let tr = self.b.ins().trunc(x);
        let frac = self.b.ins().fsub(x, tr);
        let frac = self.b.ins().fabs(frac);
        let half = if t == types::F32 {
            self.b.ins().f32const(0.5f32)
        } else {
            self.b.ins().f64const(0.5)
        };
        let one = if t == types::F32 {
            self.b.ins().f32const(1.0f32)
        } else {
            self.b.ins().f64const(1.0)
        };
        let step = self.b.ins().fcopysign(one, x);
        let bumped = self.b.ins().fadd(tr, step);
        let up = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, frac, half);
        self.b.ins().select(up, bumped, tr)
    }

    fn unary(&mut self, op: UnaryOp, ty: Type, x: Value) -> Result<Value, CompileError> {
        let t = cl_type(ty)?;
        if ty.is_int() {
            return Ok(match op {
                UnaryOp::Neg => self.b.ins().ineg(x),
                UnaryOp::Abs => self.int_abs(x),
                _ => return err(format!("{op:?} on {}", ty.name())),
            });
        }
        if ty == Type::Bool {
            return match op {
                UnaryOp::Not => Ok(self.b.ins().bxor_imm_s(x, 1)),
                _ => err(format!("{op:?} on bool")),
            };
        }
        let m = |s64: &'static str, s32: &'static str| (s64, s32);
        let libm = match op {
            UnaryOp::Neg => return Ok(self.b.ins().fneg(x)),
            UnaryOp::Abs => return Ok(self.b.ins().fabs(x)),
            UnaryOp::Sqrt => return Ok(self.b.ins().sqrt(x)),
            UnaryOp::Floor => return Ok(self.b.ins().floor(x)),
            UnaryOp::Ceil => return Ok(self.b.ins().ceil(x)),
            UnaryOp::Trunc => return Ok(self.b.ins().trunc(x)),
            UnaryOp::Round => return Ok(self.round_away(x, t)),
            UnaryOp::Not => return err("NOT on a float"),
            UnaryOp::Exp => m("exp", "expf"),
            UnaryOp::Log => m("log", "logf"),
            UnaryOp::Log10 => m("log10", "log10f"),
            UnaryOp::Sin => m("sin", "sinf"),
            UnaryOp::Cos => m("cos", "cosf"),
            UnaryOp::Tan => m("tan", "tanf"),
            UnaryOp::Asin => m("asin", "asinf"),
            UnaryOp::Acos => m("acos", "acosf"),
            UnaryOp::Atan => m("atan", "atanf"),
            UnaryOp::Sinh => m("sinh", "sinhf"),
            UnaryOp::Cosh => m("cosh", "coshf"),
            UnaryOp::Tanh => m("tanh", "tanhf"),
            UnaryOp::Special(Special::Polygamma(n)) => {
                let (s64, s32) = libm::special_symbol(Special::Polygamma(n));
                let name = if t == types::F32 { s32 } else { s64 };
                let order = self.b.ins().iconst(types::I32, i64::from(n));
                return Ok(self
                    .call_external(name, &[types::I32, t], Some(t), &[order, x])?
                    .expect("polygamma returns a value"));
            }
            UnaryOp::Special(s) => libm::special_symbol(s),
        };
        self.float_call(libm.0, libm.1, t, &[x])
    }

    fn int_abs(&mut self, x: Value) -> Value {
        let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let n = self.b.ins().ineg(x);
        self.b.ins().select(neg, n, x)
    }

    /// `if b < a { b } else { a }` (Min) or `if b > a { b } else { a }` (Max),
    /// taking `b` when `a` is NaN.
    fn min_max(&mut self, max: bool, ty: Type, a: Value, b: Value) -> Value {
        let c = if ty.is_float() {
            let cc = if max {
                FloatCC::GreaterThan
            } else {
                FloatCC::LessThan
            };
            let lt = self.b.ins().fcmp(cc, b, a);
            let nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
            self.b.ins().bor(lt, nan)
        } else {
            let cc = if max {
                IntCC::SignedGreaterThan
            } else {
                IntCC::SignedLessThan
            };
            self.b.ins().icmp(cc, b, a)
        };
        self.b.ins().select(c, b, a)
    }

    fn divide_check(&mut self, y: Value, site: usize) {
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        self.check_simple(zero, code::DIVIDE_BY_ZERO, site as i64, -1, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        op: BinaryOp,
        ty: Type,
        ty_b: Type,
        x: Value,
        y: Value,
        site: usize,
        y_ir: ir::Value,
    ) -> Result<Value, CompileError> {
        let t = cl_type(ty)?;
        if ty == Type::Bool {
            return Ok(match op {
                BinaryOp::And => self.b.ins().band(x, y),
                BinaryOp::Or => self.b.ins().bor(x, y),
                BinaryOp::Neqv => self.b.ins().bxor(x, y),
                BinaryOp::Eqv => {
                    let d = self.b.ins().bxor(x, y);
                    self.b.ins().bxor_imm_s(d, 1)
                }
                _ => return err(format!("{op:?} on bool")),
            });
        }
        if op != BinaryOp::PowI && ty != ty_b {
            return err(format!("{op:?} on {} and {}", ty.name(), ty_b.name()));
        }
        if ty.is_int() {
            return Ok(match op {
                BinaryOp::Add => self.b.ins().iadd(x, y),
                BinaryOp::Sub => self.b.ins().isub(x, y),
                BinaryOp::Mul => self.b.ins().imul(x, y),
                BinaryOp::Div => {
                    self.divide_check(y, site);
                    self.int_div_wrapping(x, y, t, false)
                }
                BinaryOp::Mod => {
                    self.divide_check(y, site);
                    self.int_div_wrapping(x, y, t, true)
                }
                BinaryOp::Modulo => {
                    self.divide_check(y, site);
                    let r = self.int_div_wrapping(x, y, t, true);
                    let sum = self.b.ins().iadd(r, y);
                    let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                    let signs = self.b.ins().bxor(r, y);
                    let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
                    let fix = self.b.ins().band(nonzero, differ);
                    self.b.ins().select(fix, sum, r)
                }
                BinaryOp::Pow => {
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
                    let zero = self.b.ins().icmp_imm_s(IntCC::Equal, x, 0);
                    let bad = self.b.ins().band(neg, zero);
                    self.check_simple(bad, code::DIVIDE_BY_ZERO, site as i64, -1, 0);
                    let name = if t == types::I32 {
                        "adjit_ipow_i32"
                    } else {
                        "adjit_ipow_i64"
                    };
                    self.call_external(name, &[t, t], Some(t), &[x, y])?
                        .expect("ipow returns")
                }
                BinaryOp::Min => self.min_max(false, ty, x, y),
                BinaryOp::Max => self.min_max(true, ty, x, y),
                BinaryOp::Sign => {
                    let a = self.int_abs(x);
                    let na = self.b.ins().ineg(a);
                    let nonneg = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, y, 0);
                    self.b.ins().select(nonneg, a, na)
                }
                BinaryOp::Dim => {
                    let d = self.b.ins().isub(x, y);
                    let z = self.b.ins().iconst(t, 0);
                    self.min_max(true, ty, d, z)
                }
                _ => return err(format!("{op:?} on {}", ty.name())),
            });
        }
        let (x, y) = self.constant_right(op, x, y);
        Ok(match op {
            BinaryOp::Add => self.b.ins().fadd(x, y),
            BinaryOp::Sub => self.b.ins().fsub(x, y),
            BinaryOp::Mul => self.b.ins().fmul(x, y),
            BinaryOp::Div => self.b.ins().fdiv(x, y),
            BinaryOp::Pow => self.float_call("pow", "powf", t, &[x, y])?,
            BinaryOp::PowI => {
                if !ty_b.is_int() {
                    return err("PowI with a non-integer exponent");
                }
                self.powi(x, y, t, ty_b, y_ir)?
            }
            BinaryOp::Min => self.min_max(false, ty, x, y),
            BinaryOp::Max => self.min_max(true, ty, x, y),
            BinaryOp::Atan2 => self.float_call("atan2", "atan2f", t, &[x, y])?,
            BinaryOp::Sign => self.b.ins().fcopysign(x, y),
            BinaryOp::Dim => {
                let d = self.b.ins().fsub(x, y);
                let z = self.zero(ty)?;
                self.min_max(true, ty, d, z)
            }
            BinaryOp::Mod => self.float_call("fmod", "fmodf", t, &[x, y])?,
            BinaryOp::Modulo => {
                // r = fmod(a, b); if r != 0 and sign(r) != sign(b) { r + b }.
                let r = self.float_call("fmod", "fmodf", t, &[x, y])?;
                let z = self.zero(ty)?;
                let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, r, z);
                let r_neg = self.b.ins().fcmp(FloatCC::LessThan, r, z);
                let b_neg = self.b.ins().fcmp(FloatCC::LessThan, y, z);
                let differ = self.b.ins().bxor(r_neg, b_neg);
                let fix = self.b.ins().band(nonzero, differ);
                let sum = self.b.ins().fadd(r, y);
                self.b.ins().select(fix, sum, r)
            }
            _ => return err(format!("{op:?} on {}", ty.name())),
        })
    }

    /// Float to integer power by repeated squaring; unrolled for constant
    /// exponents (same multiplication sequence as the runtime helper).
    fn powi(
        &mut self,
        x: Value,
        n: Value,
        t: types::Type,
        nty: Type,
        n_ir: ir::Value,
    ) -> Result<Value, CompileError> {
        let constant = match self.proc.insts.get(n_ir.index()).map(|d| &d.kind) {
            Some(Inst::Const(Const::Int(k))) => Some(if nty == Type::I32 {
                *k as i32 as i64
            } else {
                *k
            }),
            _ => None,
        };
        if let Some(k) = constant.filter(|k| k.unsigned_abs() <= 64) {
            let (mut base, mut e, mut acc) = (x, k.unsigned_abs(), None::<Value>);
            while e > 0 {
                if e & 1 == 1 {
                    acc = Some(match acc {
                        None => base,
                        Some(a) => self.b.ins().fmul(a, base),
                    });
                }
                e >>= 1;
                if e > 0 {
                    base = self.b.ins().fmul(base, base);
                }
            }
            let one = if t == types::F32 {
                self.b.ins().f32const(1.0f32)
            } else {
                self.b.ins().f64const(1.0)
            };
            let acc = acc.unwrap_or(one);
            return Ok(if k < 0 {
                self.b.ins().fdiv(one, acc)
            } else {
                acc
            });
        }
        let n = self.widen_to_i64(n, nty);
        let name = if t == types::F32 {
            "adjit_powi_f32"
        } else {
            "adjit_powi_f64"
        };
        Ok(self
            .call_external(name, &[t, types::I64], Some(t), &[x, n])?
            .expect("powi returns"))
    }

    /// True when `cond` is the joint test `abs(x) > 0.0` of a stretch of
    /// guards ([`crate::opt::speculate`]), whose false branch is rarely
    /// taken.
    fn joint_test(&self, cond: ir::Value) -> bool {
        match self.proc.insts.get(cond.index()).map(|data| &data.kind) {
            Some(&Inst::Cmp(op, a, c)) => self.nonzero_test(op, a, c).is_some(),
            _ => false,
        }
    }

    /// Recognises `abs(x) > 0.0` (the joint test of [`crate::opt::speculate`]):
    /// returns `x`, whose ordered comparison `x != 0` is the same test (false
    /// for zeros and NaN) without the absolute value.
    fn nonzero_test(&self, op: CmpOp, a: ir::Value, c: ir::Value) -> Option<ir::Value> {
        if op != CmpOp::Gt || !is_float_zero(self.proc, c, false) {
            return None;
        }
        match self.proc.insts.get(a.index())?.kind {
            Inst::Unary(UnaryOp::Abs, x) => {
                let ty = self.value_type(x).ok()?;
                (ty.is_float() && self.value_type(a).ok()? == ty).then_some(x)
            }
            _ => None,
        }
    }

    /// Recognises a strong zero `select(a == 0 or b == 0 ..., +0.0, y)` of
    /// float type `ty` (the guarded products of derivative code): returns
    /// the values tested against zero (at most four, all of type `ty` and
    /// defined in the current block) when `cond` is a disjunction of such
    /// tests and `zero` is the constant `+0.0`.
    fn strong_zero_tests(
        &self,
        cond: ir::Value,
        zero: ir::Value,
        ty: Type,
    ) -> Option<(Vec<ir::Value>, Type)> {
        if !ty.is_float() || !is_float_zero(self.proc, zero, true) {
            return None;
        }
        let mut tests = Vec::new();
        let mut pending = vec![cond];
        while let Some(c) = pending.pop() {
            match &self.proc.insts.get(c.index())?.kind {
                Inst::Binary(BinaryOp::Or, l, r) => pending.extend([*l, *r]),
                Inst::Cmp(CmpOp::Eq, l, r) => {
                    let tested = if is_float_zero(self.proc, *r, false) {
                        *l
                    } else if is_float_zero(self.proc, *l, false) {
                        *r
                    } else {
                        return None;
                    };
                    if self.value_type(tested).ok()? != ty || self.operand(tested).is_err() {
                        return None;
                    }
                    tests.push(tested);
                }
                _ => return None,
            }
            if tests.len() + pending.len() > 4 {
                return None;
            }
        }
        Some((tests, ty))
    }

    /// Lowers `select(t1 == 0 or t2 == 0 ..., +0.0, y)` without flags or
    /// branches: each tested value is broadcast to a vector and compared
    /// lane-wise (`cmpeqpd`: an all-ones mask, false for NaN as the scalar
    /// comparison), the masks are or-ed and clear the bits of `y`, so the
    /// result is `+0.0` where a test holds and `y` bit for bit elsewhere,
    /// like the select it replaces (lane 0 is taken).
    ///
    /// `cold` is true in the cold block of a branch on the product
    /// ([`Lower::unless_zero_product`]), where `y` has been computed: there
    /// every vector is built from `y`'s value, so none is loop-invariant.
    /// The product's lanes are `y` broadcast (the same bits as the factors'
    /// lanes multiplied), the zeros the tests compare against are `y & !y`
    /// (all bits clear for every `y`), and each tested value is inserted
    /// into lane 0 of those zeros rather than broadcast. Cranelift hoists a
    /// constant vector, or the broadcast of an invariant factor, out of the
    /// loop, where it lives through every trip in a spill slot that the
    /// register allocator reloads and re-stores on the hot path around each
    /// cold block (Bratu's tangent loop: six broadcasts, about four moves
    /// per trip); made from `y`, they are computed in the cold block (or
    /// before the loop when `y` is invariant).
    fn masked_zero_select(
        &mut self,
        tests: &[ir::Value],
        ty: Type,
        y: ir::Value,
        cold: bool,
    ) -> Result<Value, CompileError> {
        let vector = match ty {
            Type::F64 => types::F64X2,
            _ => types::F32X4,
        };
        let mut splats: Vec<(ir::Value, Value)> = Vec::with_capacity(tests.len() + 1);
        let (zeros, early) = if cold {
            let product = self.operand(y)?;
            let lanes = self.b.ins().splat(vector, product);
            (self.b.ins().band_not(lanes, lanes), Some(lanes))
        } else {
            let zero = match ty {
                Type::F64 => self.b.ins().f64const(Ieee64::with_bits(0)),
                _ => self.b.ins().f32const(Ieee32::with_bits(0)),
            };
            (self.b.ins().splat(vector, zero), None)
        };
        let mut mask = None;
        for &t in tests {
            // Lane 0 is the one taken; in the cold order the other lanes
            // compare zeros with zeros.
            let lanes = if cold {
                let x = self.operand(t)?;
                self.b.ins().insertlane(zeros, x, 0)
            } else {
                self.splat_of(&mut splats, vector, t)?
            };
            let eq = self.b.ins().fcmp(FloatCC::Equal, lanes, zeros);
            mask = Some(match mask {
                Some(m) => self.b.ins().bor(m, eq),
                None => eq,
            });
        }
        let Some(mask) = mask else {
            return self.operand(y);
        };
        let little = MemFlagsData::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        let mask = self.b.ins().bitcast(vector, little, mask);
        let lanes = match early {
            Some(lanes) => lanes,
            None => self.product_lanes(&mut splats, vector, ty, y)?,
        };
        let kept = self.b.ins().band_not(lanes, mask);
        Ok(self.b.ins().extractlane(kept, 0))
    }

    /// The guarded product `y` (of float type `ty`) in the lanes of
    /// `vector`, the same bits as the scalar multiply: its factors are
    /// usually the values a guard tests, broadcast once (`splats`).
    fn product_lanes(
        &mut self,
        splats: &mut Vec<(ir::Value, Value)>,
        vector: types::Type,
        ty: Type,
        y: ir::Value,
    ) -> Result<Value, CompileError> {
        Ok(match self.proc.insts.get(y.index()).map(|d| &d.kind) {
            Some(Inst::Binary(BinaryOp::Mul, p, d))
                if self.value_type(*p).ok() == Some(ty) && self.value_type(*d).ok() == Some(ty) =>
            {
                let p = self.splat_of(splats, vector, *p)?;
                let d = self.splat_of(splats, vector, *d)?;
                self.b.ins().fmul(p, d)
            }
            _ => {
                let y = self.operand(y)?;
                self.b.ins().splat(vector, y)
            }
        })
    }

    /// Lowers the strong zero `select(p == 0 or d == 0 ..., +0.0, p * d)`
    /// whose tests are factors of the product `y` as the product itself
    /// and one rarely taken branch: a product that is neither zero nor NaN
    /// has no zero factor, so it is the select's value; only a zero or NaN
    /// product takes a cold block computing the select exactly
    /// ([`Lower::masked_zero_select`]). Bit for bit the select, the sign of
    /// zero included; the path taken costs a compare and a branch rather
    /// than the tests of both factors. `None` when the tests are not
    /// factors of a product.
    fn product_then_zero_test(
        &mut self,
        tests: &[ir::Value],
        ty: Type,
        y: ir::Value,
    ) -> Result<Option<Value>, CompileError> {
        if !self.sh.options.branch_on_zero_products {
            return Ok(None);
        }
        let Some(&Inst::Binary(BinaryOp::Mul, p, d)) =
            self.proc.insts.get(y.index()).map(|data| &data.kind)
        else {
            return Ok(None);
        };
        if tests.is_empty() || !tests.iter().all(|&t| t == p || t == d) {
            return Ok(None);
        }
        let product = self.operand(y)?;
        self.unless_zero_product(product, ty, product, |l| {
            l.masked_zero_select(tests, ty, y, true)
        })
        .map(Some)
    }

    /// `hot` when `product` (of float type `ty`) is neither zero nor NaN,
    /// else what `cold` computes in a cold block: one compare and one
    /// rarely taken branch.
    fn unless_zero_product(
        &mut self,
        product: Value,
        ty: Type,
        hot: Value,
        cold: impl FnOnce(&mut Self) -> Result<Value, CompileError>,
    ) -> Result<Value, CompileError> {
        let zero = match ty {
            Type::F64 => self.b.ins().f64const(Ieee64::with_bits(0)),
            _ => self.b.ins().f32const(Ieee32::with_bits(0)),
        };
        // Unordered or equal: NaN, +0 or -0.
        let suspect = self.b.ins().fcmp(FloatCC::UnorderedOrEqual, product, zero);
        let exact = self.b.create_block();
        let cont = self.b.create_block();
        self.b.append_block_param(cont, cl_type(ty)?);
        self.b.set_cold_block(exact);
        self.b
            .ins()
            .brif(suspect, exact, &[], cont, &[BlockArg::Value(hot)]);
        self.b.switch_to_block(exact);
        let value = cold(self)?;
        self.b.ins().jump(cont, &[BlockArg::Value(value)]);
        self.b.switch_to_block(cont);
        Ok(self.b.block_params(cont)[0])
    }

    /// Lowers the sum or difference of contraction `c` (of float type `ty`)
    /// as one fused multiply-add. A guarded product takes the fused value
    /// when the product is neither zero nor NaN (no factor is then zero, so
    /// the guard keeps the product); otherwise a cold block adds the exact
    /// guarded value, unfused (see [`crate::opt::fma`]).
    fn fused_multiply_add(
        &mut self,
        c: crate::opt::fma::Contraction,
        ty: Type,
    ) -> Result<Value, CompileError> {
        let Some(&Inst::Binary(BinaryOp::Mul, p, d)) = self
            .proc
            .insts
            .get(c.product.index())
            .map(|data| &data.kind)
        else {
            return err(format!("{} is not a product", c.product));
        };
        let (x, y, a) = (self.operand(p)?, self.operand(d)?, self.operand(c.addend)?);
        let x = if c.subtract { self.b.ins().fneg(x) } else { x };
        let fused = self.b.ins().fma(x, y, a);
        let Some(guard) = c.guard else {
            return Ok(fused);
        };
        let Some(&Inst::Select(cond, zero, _)) =
            self.proc.insts.get(guard.index()).map(|data| &data.kind)
        else {
            return err(format!("{guard} is not a guard"));
        };
        let Some((tests, _)) = self.strong_zero_tests(cond, zero, ty) else {
            return err(format!("{guard} is not a strong-zero guard"));
        };
        let product = self.operand(c.product)?;
        self.unless_zero_product(product, ty, fused, |l| {
            let value = l.masked_zero_select(&tests, ty, c.product, true)?;
            Ok(if c.subtract {
                l.b.ins().fsub(a, value)
            } else {
                l.b.ins().fadd(a, value)
            })
        })
    }

    /// The IR value `v` broadcast to `vector`, made once per entry of `splats`.
    fn splat_of(
        &mut self,
        splats: &mut Vec<(ir::Value, Value)>,
        vector: types::Type,
        v: ir::Value,
    ) -> Result<Value, CompileError> {
        if let Some(&(_, lanes)) = splats.iter().find(|(w, _)| *w == v) {
            return Ok(lanes);
        }
        let x = self.operand(v)?;
        let lanes = self.b.ins().splat(vector, x);
        splats.push((v, lanes));
        Ok(lanes)
    }

    fn compare(&mut self, op: CmpOp, ty: Type, x: Value, y: Value) -> Value {
        if ty.is_float() {
            let cc = match op {
                CmpOp::Eq => FloatCC::Equal,
                CmpOp::Ne => FloatCC::NotEqual,
                CmpOp::Lt => FloatCC::LessThan,
                CmpOp::Le => FloatCC::LessThanOrEqual,
                CmpOp::Gt => FloatCC::GreaterThan,
                CmpOp::Ge => FloatCC::GreaterThanOrEqual,
            };
            self.b.ins().fcmp(cc, x, y)
        } else {
            self.b.ins().icmp(int_cc(op), x, y)
        }
    }

    /// Numeric conversion with the IR's rules.
    fn convert(
        &mut self,
        x: Value,
        from: Type,
        to: Type,
        rounding: Rounding,
    ) -> Result<Value, CompileError> {
        let tt = cl_type(to)?;
        cl_type(from)?;
        Ok(match (from, to) {
            _ if from == to => x,
            (Type::F32, Type::F64) => self.b.ins().fpromote(types::F64, x),
            (Type::F64, Type::F32) => self.b.ins().fdemote(types::F32, x),
            (Type::I32, Type::I64) => self.b.ins().sextend(types::I64, x),
            (Type::I64, Type::I32) => self.b.ins().ireduce(types::I32, x),
            (Type::Bool, t) if t.is_int() => self.b.ins().uextend(tt, x),
            (Type::Bool, _) => {
                let w = self.b.ins().uextend(types::I32, x);
                self.b.ins().fcvt_from_uint(tt, w)
            }
            (f, Type::Bool) if f.is_int() => self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0),
            (f, Type::Bool) => {
                let z = self.zero(f)?;
                self.b.ins().fcmp(FloatCC::NotEqual, x, z)
            }
            (f, _) if f.is_int() => self.b.ins().fcvt_from_sint(tt, x),
            (f, _) => {
                let r = match rounding {
                    Rounding::Trunc => x,
                    Rounding::Nearest => self.round_away(x, cl_type(f)?),
                    Rounding::Floor => self.b.ins().floor(x),
                    Rounding::Ceil => self.b.ins().ceil(x),
                };
                self.b.ins().fcvt_to_sint_sat(tt, r)
            }
        })
    }

    /// Declares the `top` variables of the stacks the procedure pushes on
    /// or pops from inside a loop and loads them from the context (at
    /// entry). A stack pushed or popped only outside loops stays in the
    /// context: each of its pushes and pops loads and stores `top` there,
    /// so that no register carries it across the loops of the procedure.
    fn load_stack_vars(&mut self) {
        // Per stack: (pushes, pops, in a loop).
        let mut used = [(false, false, false); 3];
        for (b, block) in self.proc.blocks.iter().enumerate() {
            // Whether the block is on a cycle, found at its first push or pop.
            let mut cyclic = None;
            for &i in &block.insts {
                let (k, push) = match &self.proc.insts[i.index()].kind {
                    Inst::Push(kind, _) => (runtime::stack_index(*kind), true),
                    Inst::Pop(kind) => (runtime::stack_index(*kind), false),
                    _ => continue,
                };
                if push {
                    used[k].0 = true;
                } else {
                    used[k].1 = true;
                }
                used[k].2 |=
                    *cyclic.get_or_insert_with(|| self.proc.on_cycle(ir::BlockId(b as u32)));
            }
        }
        let in_vars = calls_nothing(self.proc);
        for (k, &(pushes_on, pops_on, looped)) in used.iter().enumerate() {
            if !looped {
                continue;
            }
            let top = self.b.declare_var(self.ptr);
            let pushes = if pops_on {
                let counter = self.b.declare_var(types::I64);
                let zero = self.iconst(0);
                self.b.def_var(counter, zero);
                PushCount::Counter(counter)
            } else {
                // Defined with `top` in `reload_stack_tops`.
                PushCount::Mark(self.b.declare_var(self.ptr))
            };
            let end = (in_vars && pushes_on).then(|| self.b.declare_var(self.ptr));
            let base = (in_vars && pops_on).then(|| self.b.declare_var(self.ptr));
            self.stack_vars[k] = Some(StackVars {
                top,
                pushes,
                end,
                base,
            });
        }
        self.reload_stack_tops();
    }

    /// Loads the `top` variables and the limit variables from the context
    /// (at entry and after a call) and forgets the block's limits.
    fn reload_stack_tops(&mut self) {
        for k in 0..3 {
            if let Some(v) = self.stack_vars[k] {
                let top = self.stack_field(k, layout::TOP);
                self.b.def_var(v.top, top);
                if let PushCount::Mark(mark) = v.pushes {
                    self.b.def_var(mark, top);
                }
                self.reload_limits(k, v);
            }
        }
        self.stacks = [StackCache::default(); 3];
    }

    /// Loads the limit variables of stack `k` from the context.
    fn reload_limits(&mut self, k: usize, v: StackVars) {
        for (var, field) in [(v.end, layout::END), (v.base, layout::BASE)] {
            if let Some(var) = var {
                let x = self.stack_field(k, field);
                self.b.def_var(var, x);
            }
        }
    }

    /// The `top` of stack `k`: its variable, or loaded from the context for
    /// a stack kept there (see [`Lower::load_stack_vars`]).
    fn stack_top(&mut self, k: usize) -> Value {
        match self.stack_vars[k] {
            Some(v) => self.b.use_var(v.top),
            None => self.stack_field(k, layout::TOP),
        }
    }

    /// Loads field `field` of the registers of stack `k`.
    fn stack_field(&mut self, k: usize, field: i32) -> Value {
        let rt = self.rt;
        self.b
            .ins()
            .load(self.ptr, FLAGS, rt, layout::stack(k) + field)
    }

    /// Writes the `top` variable of every stack back to the context and
    /// adds the pushes since the last write-back to `pushed` (before calls
    /// and at the return).
    fn flush_stacks(&mut self) {
        for k in 0..3 {
            let Some(v) = self.stack_vars[k] else {
                continue;
            };
            let rt = self.rt;
            let top = self.b.use_var(v.top);
            self.b
                .ins()
                .store(FLAGS, top, rt, layout::stack(k) + layout::TOP);
            self.count_pushes(k, top);
        }
    }

    /// Adds the pushes on promoted stack `k` since the last write-back to
    /// the context's `pushed` and starts counting again from `top` (before a
    /// call, at the return, and before a segment switch, which moves `top`
    /// to another segment).
    fn count_pushes(&mut self, k: usize, top: Value) {
        let Some(v) = self.stack_vars[k] else {
            return;
        };
        let rt = self.rt;
        let off = layout::stack(k) + layout::PUSHED;
        let n = self.b.ins().load(types::I64, FLAGS, rt, off);
        let n = match v.pushes {
            PushCount::Counter(counter) => {
                let pushes = self.b.use_var(counter);
                let zero = self.iconst(0);
                self.b.def_var(counter, zero);
                self.b.ins().iadd(n, pushes)
            }
            PushCount::Mark(mark) => {
                let from = self.b.use_var(mark);
                self.b.def_var(mark, top);
                let bytes = self.b.ins().isub(top, from);
                let words = self.b.ins().ushr_imm_u(bytes, 3);
                self.b.ins().iadd(n, words)
            }
        };
        self.b.ins().store(FLAGS, n, rt, off);
    }

    /// After a runtime call that may have moved promoted stack `k` to
    /// another segment: pushes are counted from its new `top`.
    fn restart_push_count(&mut self, k: usize, top: Value) {
        if let Some(StackVars {
            pushes: PushCount::Mark(mark),
            ..
        }) = self.stack_vars[k]
        {
            self.b.def_var(mark, top);
        }
    }

    /// Cold path of a push on a full segment or a pop on an empty one:
    /// stores `top`, calls the runtime (`adjit_stack_grow` or
    /// `adjit_stack_retreat`), fails with `code` when it cannot, and jumps
    /// to `cont` with the new `top` and `field` (END or BASE).
    #[allow(clippy::too_many_arguments)]
    fn switch_segment(
        &mut self,
        k: usize,
        top: Value,
        helper: &'static str,
        code: i64,
        site: i64,
        field: i32,
        cont: Block,
    ) -> Result<(), CompileError> {
        let rt = self.rt;
        self.b
            .ins()
            .store(FLAGS, top, rt, layout::stack(k) + layout::TOP);
        self.count_pushes(k, top);
        let kv = self.iconst(k as i64);
        let which = usize::from(helper == "adjit_stack_retreat");
        let f = self
            .jit
            .declare_func_in_func(self.sh.segment_switch[which], self.b.func);
        self.b.ins().call(f, &[rt, kv]);
        // A failed switch leaves the registers as they were: still full
        // (push) or still empty (pop).
        let top = self.stack_field(k, layout::TOP);
        let limit = self.stack_field(k, field);
        self.restart_push_count(k, top);
        let failed = self.b.ins().icmp(IntCC::Equal, top, limit);
        self.check_simple(failed, code, site, -1, k as i64);
        // The segment moved both limits.
        if let Some(v) = self.stack_vars[k] {
            self.reload_limits(k, v);
        }
        self.b
            .ins()
            .jump(cont, &[BlockArg::Value(top), BlockArg::Value(limit)]);
        Ok(())
    }

    /// Whether the push or pop `v` tests for the end of its segment: false
    /// in the fast copy of a versioned loop whose preheader test proved the
    /// segment has room for all of the loop's pushes or pops.
    fn segment_checked(&self, v: ir::Value) -> bool {
        !self
            .sh
            .versions
            .proc(self.pid)
            .is_some_and(|p| p.unchecked.contains(&v))
    }

    /// Whether the current segment of `room`'s stack has room for (holds)
    /// the words all iterations of a loop push (pop): `trips * per_trip <=
    /// words`, computed as `trips <= words / per_trip` so that nothing
    /// wraps.
    ///
    /// For pushes, a segment with too little room is first exchanged for one
    /// with enough ([`Lower::reserve_room`]), so that a tape longer than a
    /// segment still records in the fast copy of the loop.
    fn stack_room(&mut self, room: &crate::opt::licm::StackRoom) -> Result<Value, CompileError> {
        let fits = self.stack_fits(room)?;
        if room.pops {
            return Ok(fits);
        }
        self.reserve_room(room, fits)
    }

    /// Most words one reservation asks for (larger loops, or trip counts
    /// that are not yet proven sane when the test runs, ask for nothing).
    const MAX_RESERVE_WORDS: i64 = 1 << 40;

    /// Cold path of [`Lower::stack_room`] for pushes that do not fit in the
    /// current segment (`fits` false): asks the runtime
    /// (`adjit_stack_reserve`) for a segment with room for `trips *
    /// per_trip` words, reloads `top` and the limits and tests the room
    /// again. Returns `fits`, or the second test's result after the cold path.
    fn reserve_room(
        &mut self,
        room: &crate::opt::licm::StackRoom,
        fits: Value,
    ) -> Result<Value, CompileError> {
        let k = runtime::stack_index(room.kind);
        let reserve = self.b.create_block();
        let cont = self.b.create_block();
        let result = self.b.append_block_param(cont, types::I8);
        self.b.set_cold_block(reserve);
        self.b
            .ins()
            .brif(fits, cont, &[BlockArg::Value(fits)], reserve, &[]);
        self.b.switch_to_block(reserve);
        let trips = self.operand(room.trips)?;
        let per_trip = i64::from(room.per_trip);
        let sane = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, trips, 0);
        let small = self.b.ins().icmp_imm_s(
            IntCC::SignedLessThanOrEqual,
            trips,
            Self::MAX_RESERVE_WORDS / per_trip,
        );
        let sane = self.b.ins().band(sane, small);
        let words = self.b.ins().imul_imm_s(trips, per_trip);
        let zero = self.iconst(0);
        let words = self.b.ins().select(sane, words, zero);
        let request = self.b.ins().ishl_imm_u(words, 2);
        let request = self.b.ins().bor_imm_u(request, k as i64);
        let rt = self.rt;
        let top = self.stack_top(k);
        self.b
            .ins()
            .store(FLAGS, top, rt, layout::stack(k) + layout::TOP);
        self.count_pushes(k, top);
        let f = self
            .jit
            .declare_func_in_func(self.sh.segment_switch[2], self.b.func);
        self.b.ins().call(f, &[rt, request]);
        if let Some(v) = self.stack_vars[k] {
            let top = self.stack_field(k, layout::TOP);
            self.b.def_var(v.top, top);
            self.restart_push_count(k, top);
            self.reload_limits(k, v);
        }
        // The limits read before the call may have moved.
        self.stacks[k] = StackCache::default();
        let again = self.stack_fits(room)?;
        self.b.ins().jump(cont, &[BlockArg::Value(again)]);
        self.b.switch_to_block(cont);
        self.stacks[k] = StackCache::default();
        Ok(result)
    }

    /// Whether the current segment of `room`'s stack has room for (holds)
    /// the words all iterations of its loop push (pop), as in
    /// [`Lower::stack_room`].
    fn stack_fits(&mut self, room: &crate::opt::licm::StackRoom) -> Result<Value, CompileError> {
        let k = runtime::stack_index(room.kind);
        let top = self.stack_top(k);
        let bytes = if room.pops {
            let base = self.stack_field(k, layout::BASE);
            self.b.ins().isub(top, base)
        } else {
            let end = self.stack_field(k, layout::END);
            self.b.ins().isub(end, top)
        };
        let words = self.b.ins().ushr_imm_u(bytes, 3);
        let whole = match room.per_trip {
            1 => words,
            n => self.b.ins().udiv_imm_u(words, i64::from(n)),
        };
        let trips = self.operand(room.trips)?;
        Ok(self
            .b
            .ins()
            .icmp(IntCC::SignedLessThanOrEqual, trips, whole))
    }

    /// Pushes `x` (of type `ty`) on stack `kind`; `checked` is false where
    /// the segment is known to have room (see [`Lower::segment_checked`]).
    fn push(
        &mut self,
        kind: StackKind,
        ty: Type,
        x: Value,
        checked: bool,
    ) -> Result<(), CompileError> {
        let word_ty = if kind == StackKind::Value {
            Type::F64
        } else {
            Type::I64
        };
        let w = self.convert(x, ty, word_ty, Rounding::Trunc)?;
        let k = runtime::stack_index(kind);
        let v = self.stack_vars[k];
        let top = self.stack_top(k);
        if !checked {
            self.b.ins().store(FLAGS, w, top, 0);
            let next = self.b.ins().iadd_imm_s(top, 8);
            self.pushed(k, next);
            return Ok(());
        }
        let end = match (v.and_then(|v| v.end), self.stacks[k].end) {
            (Some(var), _) => self.b.use_var(var),
            (None, Some(e)) => e,
            (None, None) => self.stack_field(k, layout::END),
        };
        let full = self.b.ins().icmp(IntCC::Equal, top, end);
        let grow = self.b.create_block();
        let cont = self.b.create_block();
        let t = self.b.append_block_param(cont, self.ptr);
        let e = self.b.append_block_param(cont, self.ptr);
        self.b.set_cold_block(grow);
        self.b.ins().brif(
            full,
            grow,
            &[],
            cont,
            &[BlockArg::Value(top), BlockArg::Value(end)],
        );
        self.b.switch_to_block(grow);
        self.switch_segment(
            k,
            top,
            "adjit_stack_grow",
            code::STACK_GROW,
            -1,
            layout::END,
            cont,
        )?;
        self.b.switch_to_block(cont);
        self.b.ins().store(FLAGS, w, t, 0);
        let next = self.b.ins().iadd_imm_s(t, 8);
        self.pushed(k, next);
        match v.and_then(|v| v.end) {
            Some(var) => self.b.def_var(var, e),
            // A segment switch moved `base` too.
            None => {
                self.stacks[k] = StackCache {
                    end: Some(e),
                    base: None,
                }
            }
        }
        Ok(())
    }

    /// After a push on stack `k`: `next` becomes its `top` and the push is
    /// counted (in the variables, or in the context for a stack kept there).
    fn pushed(&mut self, k: usize, next: Value) {
        let rt = self.rt;
        let off = layout::stack(k);
        match self.stack_vars[k] {
            Some(v) => {
                self.b.def_var(v.top, next);
                if let PushCount::Counter(counter) = v.pushes {
                    let pushes = self.b.use_var(counter);
                    let pushes = self.b.ins().iadd_imm_s(pushes, 1);
                    self.b.def_var(counter, pushes);
                }
            }
            None => {
                self.b.ins().store(FLAGS, next, rt, off + layout::TOP);
                let n = self
                    .b
                    .ins()
                    .load(types::I64, FLAGS, rt, off + layout::PUSHED);
                let n = self.b.ins().iadd_imm_s(n, 1);
                self.b.ins().store(FLAGS, n, rt, off + layout::PUSHED);
            }
        }
    }

    /// Pops the top of stack `kind` as type `ty`; `checked` is false where
    /// the segment is known to hold the word (see
    /// [`Lower::segment_checked`]).
    fn pop(
        &mut self,
        kind: StackKind,
        ty: Type,
        site: usize,
        checked: bool,
    ) -> Result<Value, CompileError> {
        let word_ty = if kind == StackKind::Value {
            Type::F64
        } else {
            Type::I64
        };
        let k = runtime::stack_index(kind);
        let v = self.stack_vars[k];
        let top = self.stack_top(k);
        if !checked {
            // The load addresses `top - 8` itself and comes before the new
            // top: `top` dies at the decrement, so that a loop carries one
            // register for it (the other order keeps both live and copies
            // one into the other on the back edge).
            let w = self.b.ins().load(cl_type(word_ty)?, FLAGS, top, -8);
            let prev = self.b.ins().iadd_imm_s(top, -8);
            self.popped(k, prev);
            return self.convert(w, word_ty, ty, Rounding::Trunc);
        }
        let base = match (v.and_then(|v| v.base), self.stacks[k].base) {
            (Some(var), _) => self.b.use_var(var),
            (None, Some(b)) => b,
            (None, None) => self.stack_field(k, layout::BASE),
        };
        let empty = self.b.ins().icmp(IntCC::Equal, top, base);
        let slow = self.b.create_block();
        let cont = self.b.create_block();
        let t = self.b.append_block_param(cont, self.ptr);
        let b = self.b.append_block_param(cont, self.ptr);
        self.b.set_cold_block(slow);
        self.b.ins().brif(
            empty,
            slow,
            &[],
            cont,
            &[BlockArg::Value(top), BlockArg::Value(base)],
        );
        self.b.switch_to_block(slow);
        self.switch_segment(
            k,
            top,
            "adjit_stack_retreat",
            code::STACK_UNDERFLOW,
            site as i64,
            layout::BASE,
            cont,
        )?;
        self.b.switch_to_block(cont);
        // Load first, as in the unchecked pop above.
        let w = self.b.ins().load(cl_type(word_ty)?, FLAGS, t, -8);
        let prev = self.b.ins().iadd_imm_s(t, -8);
        self.popped(k, prev);
        match v.and_then(|v| v.base) {
            Some(var) => self.b.def_var(var, b),
            // A segment switch moved `end` too.
            None => {
                self.stacks[k] = StackCache {
                    end: None,
                    base: Some(b),
                }
            }
        }
        self.convert(w, word_ty, ty, Rounding::Trunc)
    }

    /// After a pop from stack `k`: `prev` becomes its `top`.
    fn popped(&mut self, k: usize, prev: Value) {
        match self.stack_vars[k] {
            Some(v) => self.b.def_var(v.top, prev),
            None => {
                let rt = self.rt;
                self.b
                    .ins()
                    .store(FLAGS, prev, rt, layout::stack(k) + layout::TOP);
            }
        }
    }

    /// Address and length of character data, with substring checks.
    fn char_ref(&mut self, r: &CharRef, site: usize) -> Result<(Value, Value), CompileError> {
        let (p, len, var) = match &r.base {
            CharBase::Var { var, index } => {
                if self.ir_var(*var)?.ty != Type::Char {
                    return err(format!(
                        "`{}` is not a character variable",
                        self.ir_var(*var)?.name
                    ));
                }
                let info = self.var_info(*var)?.clone();
                let addr = if index.is_empty() {
                    match info.home {
                        Home::Mem(a) => a,
                        Home::Reg { .. } => return err("character variable in a register"),
                    }
                } else {
                    self.elem_addr(*var, index, site)?.0
                };
                (addr, info.elem_size, var.index() as i64)
            }
            CharBase::Literal(bytes) => {
                let data: Box<[u8]> = bytes.clone().into_boxed_slice();
                let addr = data.as_ptr() as i64;
                self.sh.literals.push(data);
                (
                    self.b.ins().iconst(self.ptr, addr),
                    self.iconst(bytes.len() as i64),
                    -1,
                )
            }
        };
        if r.start.is_none() && r.end.is_none() {
            return Ok((p, len));
        }
        let sub =
            |l: &mut Self, v: Option<ir::Value>, default: Value| -> Result<Value, CompileError> {
                match v {
                    None => Ok(default),
                    Some(v) => {
                        let t = l.value_type(v)?;
                        let x = l.operand(v)?;
                        Ok(l.widen_to_i64(x, t))
                    }
                }
            };
        let one = self.iconst(1);
        let s = sub(self, r.start, one)?;
        let e = sub(self, r.end, len)?;
        if self.sh.options.bounds_checks {
            let nonempty = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, s, e);
            let low = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, s, 1);
            let high = self.b.ins().icmp(IntCC::SignedGreaterThan, e, len);
            let bad = self.b.ins().bor(low, high);
            let fail = self.b.ins().band(nonempty, bad);
            self.check(
                fail,
                ErrorSite {
                    kind: code::SUBSTRING_OUT_OF_RANGE,
                    site: site as i64,
                    var,
                    dim: 0,
                },
                s,
                e,
                len,
            );
        }
        let start = self.b.ins().iadd_imm_s(s, -1);
        let addr = self.b.ins().iadd(p, start);
        let n = self.b.ins().isub(e, start);
        let zero = self.iconst(0);
        let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
        Ok((addr, self.b.ins().select(neg, zero, n)))
    }

    /// A call of another procedure of the module.
    fn call(&mut self, callee: ProcId, args: &[CallArg], site: usize) -> Result<(), CompileError> {
        let target = self
            .sh
            .module
            .procs
            .get(callee.index())
            .map_or_else(|| err(format!("call of unknown {callee}")), Ok)?;
        if target.params.len() != args.len() {
            return err(format!(
                "`{}` takes {} arguments, {} given",
                target.name,
                target.params.len(),
                args.len()
            ));
        }
        let bytes = (args.len().max(1) as u32) * layout::ARG_SLOT as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            3,
        ));
        let arr = self.b.ins().stack_addr(self.ptr, slot, 0);
        let mut by_descriptor = Vec::new();
        for (pos, (a, &param)) in args.iter().zip(&target.params).enumerate() {
            let want = target.var(param).ty;
            let descriptor = matches!(target.var(param).storage, Storage::AllocatableParam(_));
            let (p, len) = match a {
                CallArg::Var(v) if descriptor => {
                    // The callee works on this array's descriptor.
                    self.check_arg_type(self.ir_var(*v)?.ty, want, &target.name, pos)?;
                    let Some(desc) = self.var_info(*v)?.desc else {
                        return err(format!(
                            "argument {} of `{}` is not ALLOCATABLE",
                            pos + 1,
                            target.name
                        ));
                    };
                    by_descriptor.push(*v);
                    (desc, self.iconst(0))
                }
                CallArg::Var(v) => {
                    self.check_arg_type(self.ir_var(*v)?.ty, want, &target.name, pos)?;
                    self.check_allocated(*v, site)?;
                    let info = self.var_info(*v)?.clone();
                    let p = match info.home {
                        Home::Mem(a) => a,
                        Home::Reg { mem: Some(a), .. } => a,
                        Home::Reg { mem: None, .. } => {
                            return err("internal: variable passed by reference has no memory")
                        }
                    };
                    let len = if info.ty == Type::Char {
                        self.b.ins().imul(info.count, info.elem_size)
                    } else {
                        info.storage.unwrap_or(info.count)
                    };
                    (p, len)
                }
                CallArg::Elem(v, idx) => {
                    self.check_arg_type(self.ir_var(*v)?.ty, want, &target.name, pos)?;
                    let info = self.var_info(*v)?.clone();
                    let (p, linear) = self.elem_addr(*v, idx, site)?;
                    let rest = self
                        .b
                        .ins()
                        .isub(info.storage.unwrap_or(info.count), linear);
                    let len = if info.ty == Type::Char {
                        self.b.ins().imul(rest, info.elem_size)
                    } else {
                        rest
                    };
                    (p, len)
                }
                CallArg::Slice(v, idx, n) => {
                    self.check_arg_type(self.ir_var(*v)?.ty, want, &target.name, pos)?;
                    self.slice_arg(*v, idx, *n, site)?
                }
                CallArg::Value(v) => {
                    let ty = self.value_type(*v)?;
                    self.check_arg_type(ty, want, &target.name, pos)?;
                    let x = self.operand(*v)?;
                    let tmp = self.b.create_sized_stack_slot(StackSlotData::new(
                        StackSlotKind::ExplicitSlot,
                        8,
                        3,
                    ));
                    let p = self.b.ins().stack_addr(self.ptr, tmp, 0);
                    self.b.ins().store(FLAGS, x, p, 0);
                    (p, self.iconst(1))
                }
            };
            let off = pos as i32 * layout::ARG_SLOT;
            self.b.ins().store(FLAGS, p, arr, off);
            self.b.ins().store(FLAGS, len, arr, off + layout::ARG_LEN);
        }
        // Call depth: the host's call is depth 1; fail before exceeding the
        // limit, and restore the depth after the call whatever its status.
        self.flush_promoted();
        self.flush_stacks();
        let rt = self.rt;
        let depth = self.b.ins().load(types::I64, FLAGS, rt, layout::DEPTH);
        let too_deep = self.b.ins().icmp_imm_s(
            IntCC::SignedGreaterThanOrEqual,
            depth,
            MAX_CALL_DEPTH as i64,
        );
        self.check_simple(
            too_deep,
            code::CALL_DEPTH,
            site as i64,
            -1,
            callee.index() as i64,
        );
        let deeper = self.b.ins().iadd_imm_s(depth, 1);
        self.b.ins().store(FLAGS, deeper, rt, layout::DEPTH);
        let id = self.sh.proc_ids[callee.index()];
        let f = self.jit.declare_func_in_func(id, self.b.func);
        let call = self.b.ins().call(f, &[arr, rt]);
        self.after_call = true;
        let status = self.b.inst_results(call)[0];
        self.b.ins().store(FLAGS, depth, rt, layout::DEPTH);
        self.reload_promoted()?;
        self.reload_stack_tops();
        let cont = self.b.create_block();
        self.b.ins().brif(
            status,
            self.exit_block,
            &[BlockArg::Value(status)],
            cont,
            &[],
        );
        self.b.switch_to_block(cont);
        for v in by_descriptor {
            self.refresh_allocatable(v.index())?;
        }
        Ok(())
    }

    fn check_arg_type(
        &self,
        got: Type,
        want: Type,
        callee: &str,
        pos: usize,
    ) -> Result<(), CompileError> {
        if got == want {
            Ok(())
        } else {
            err(format!(
                "argument {} of `{callee}` is {}, expected {}",
                pos + 1,
                got.name(),
                want.name()
            ))
        }
    }
}

fn int_cc(op: CmpOp) -> IntCC {
    match op {
        CmpOp::Eq => IntCC::Equal,
        CmpOp::Ne => IntCC::NotEqual,
        CmpOp::Lt => IntCC::SignedLessThan,
        CmpOp::Le => IntCC::SignedLessThanOrEqual,
        CmpOp::Gt => IntCC::SignedGreaterThan,
        CmpOp::Ge => IntCC::SignedGreaterThanOrEqual,
    }
}

/// The operands whose `f64` sine and cosine `block` both takes, when the
/// fused call is available: each gets one `sincos` ([`crate::libm::FUSED_SINCOS`])
/// call instead of two (tangents and adjoints of `sin` / `cos` need both).
fn sincos_operands(
    proc: &ir::Proc,
    block: &ir::Block,
) -> HashMap<ir::Value, Option<(Value, Value)>> {
    let mut found: HashMap<ir::Value, (bool, bool)> = HashMap::new();
    if !libm::FUSED_SINCOS {
        return HashMap::new();
    }
    for &v in &block.insts {
        let Some(data) = proc.insts.get(v.index()) else {
            continue;
        };
        if let (Inst::Unary(op @ (UnaryOp::Sin | UnaryOp::Cos), a), Some(Type::F64)) =
            (&data.kind, data.ty)
        {
            let e = found.entry(*a).or_default();
            if *op == UnaryOp::Sin {
                e.0 = true;
            } else {
                e.1 = true;
            }
        }
    }
    found
        .into_iter()
        .filter(|&(_, (s, c))| s && c)
        .map(|(a, _)| (a, None))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;

    /// `ArgBuffers::fill_slots` writes every slot (also when the kept
    /// types are missing or differ) and says whether the types match.
    #[test]
    fn fill_slots_writes_every_slot_and_compares_types() {
        let mut bufs = [Buffer::I32(vec![3]), Buffer::F64(vec![1.0, 2.0])];
        let want = [ir::Type::I32, ir::Type::F64];
        for (types, typed) in [(&want[..], true), (&want[..1], false), (&[], false)] {
            let mut slots = [ArgSlot::EMPTY; 2];
            assert_eq!(bufs[..].fill_slots(&mut slots, types), typed);
            let expected: Vec<_> = bufs.iter_mut().map(|b| buffer_slot(b).1).collect();
            for (s, e) in slots.iter().zip(&expected) {
                assert_eq!((s.ptr, s.len), (e.ptr, e.len));
            }
            assert_eq!(slots[1].len, 2);
        }
        let mut slots = [ArgSlot::EMPTY; 2];
        assert!(!bufs[..].fill_slots(&mut slots, &[ir::Type::F64, ir::Type::F64]));
    }

    /// A tiered module queues its optimized compilation at its first call,
    /// not when it is compiled, and the call before and after the switch
    /// give the same result.
    #[test]
    fn the_optimized_tier_is_queued_by_the_first_call() {
        let mut module = ir::Module::default();
        let mut proc = ir::Proc::new("twice");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let xv = b.load(x);
        let y = b.binary(BinaryOp::Add, xv, xv);
        b.store(x, y);
        b.ret();
        module.add_proc(proc);
        let options = JitOptions {
            tiering: Tiering::Tiered,
            ..JitOptions::default()
        };
        let compiled = CompiledModule::compile(&module, &options).expect("compiles");
        let upgrade = compiled.upgrade.clone().expect("tiered");
        assert!(!upgrade.queued.load(Ordering::Acquire));
        assert!(!compiled.is_optimized());
        let mut args = vec![Buffer::F64(vec![1.5])];
        compiled.call(ProcId(0), &mut args).expect("runs");
        assert!(upgrade.queued.load(Ordering::Acquire));
        compiled.wait_optimized().expect("optimized");
        assert!(compiled.is_optimized());
        compiled.call(ProcId(0), &mut args).expect("runs");
        assert_eq!(args, vec![Buffer::F64(vec![6.0])]);
        // A module never called never queues: dropping it is all.
        drop(CompiledModule::compile(&module, &options).expect("compiles"));
    }

    /// Only an operand whose sine *and* cosine the block takes (in `f64`)
    /// is fused.
    #[test]
    fn sincos_pairs_are_found_per_operand() {
        let mut proc = ir::Proc::new("p");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let y = b.param("y", Type::F64, vec![]);
        let (xv, yv) = (b.load(x), b.load(y));
        b.unary(UnaryOp::Cos, xv);
        b.unary(UnaryOp::Sin, yv);
        b.unary(UnaryOp::Sin, xv);
        b.ret();
        let found = sincos_operands(&proc, &proc.blocks[0]);
        if libm::FUSED_SINCOS {
            assert_eq!(found.keys().copied().collect::<Vec<_>>(), vec![xv]);
        } else {
            assert!(found.is_empty());
        }
    }
}
