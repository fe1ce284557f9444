//! The runtime generated code runs against: the context passed to every
//! compiled procedure (stack registers, error slot, arena), the [`Runtime`]
//! that owns it, and the `extern "C"` helpers generated code calls.
//!
//! It knows the IR's stack kinds, nothing of Fortran or derivatives.
//!
//! The layout of [`RuntimeCtx`] and [`ArgSlot`] is part of the native calling
//! convention: `extern "C" fn(args: *const ArgSlot, rt: *mut RuntimeCtx) ->
//! i32`, status 0 for success. Helpers never unwind: they contain no panics
//! and report failure through return values.

use crate::ir::io::{Channels, IoState, Item, Kept};
use crate::ir::{CharSearch, StackKind};
use crate::stack::{Arena, MapBudget, SegmentedStack, StackConfig, StackRegs, StackStats};
use std::mem::offset_of;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// One argument of a compiled procedure: the address of its storage and its
/// length in elements (bytes for CHARACTER).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArgSlot {
    /// First byte of the storage.
    pub ptr: *mut u8,
    /// Number of elements (bytes for CHARACTER data).
    pub len: i64,
}

impl ArgSlot {
    /// No storage (a placeholder to be overwritten).
    pub const EMPTY: ArgSlot = ArgSlot {
        ptr: std::ptr::null_mut(),
        len: 0,
    };

    /// The slot of `v`'s storage (valid while the borrow lives).
    #[inline]
    pub fn of<T>(v: &mut [T]) -> ArgSlot {
        ArgSlot {
            len: v.len() as i64,
            ptr: v.as_mut_ptr().cast(),
        }
    }
}

/// Error codes generated code writes into [`ErrorSlot::kind`].
pub mod code {
    /// An array subscript outside its bounds.
    pub const INDEX_OUT_OF_BOUNDS: i64 = 1;
    /// Integer division or MOD by zero.
    pub const DIVIDE_BY_ZERO: i64 = 2;
    /// A substring outside its character variable.
    pub const SUBSTRING_OUT_OF_RANGE: i64 = 3;
    /// Pop from an empty stack (`dim` holds the stack index).
    pub const STACK_UNDERFLOW: i64 = 4;
    /// A `Fail` terminator (`site` encodes the block).
    pub const FAIL: i64 = 5;
    /// An argument buffer smaller than its declared shape.
    pub const ARGUMENT_SIZE: i64 = 6;
    /// The arena could not provide memory for a local array (`index` holds
    /// the byte count).
    pub const OUT_OF_MEMORY: i64 = 7;
    /// A runtime stack could not grow (`dim` holds the stack index).
    pub const STACK_GROW: i64 = 8;
    /// Calls nested deeper than `MAX_CALL_DEPTH` (`dim` holds the callee).
    pub const CALL_DEPTH: i64 = 9;
    /// An I/O statement failed (the runtime holds the message).
    pub const IO: i64 = 10;
    /// The native stack reached the limit of [`super::RuntimeCtx::stack_limit`]
    /// at a procedure's entry (`index` holds the call depth).
    pub const STACK_OVERFLOW: i64 = 11;
    /// The time budget ran out at a loop back-edge (`site` encodes the
    /// block).
    pub const TIMEOUT: i64 = 12;
    /// The element or byte count of an array overflows 64 bits (`var` names
    /// the array).
    pub const SIZE_OVERFLOW: i64 = 13;
    /// An ALLOCATABLE array referenced or deallocated while unallocated
    /// (`var` names it).
    pub const NOT_ALLOCATED: i64 = 14;
    /// ALLOCATE of an allocated array (`var` names it).
    pub const ALREADY_ALLOCATED: i64 = 15;
    /// A reference to an element of a one-dimensional array whose one
    /// check against its dimension and its storage failed: `dim` holds
    /// the (constant) lower bound, `index` the subscript, `lower` the
    /// extent and `upper` the storage limit. Reported as the
    /// [`INDEX_OUT_OF_BOUNDS`] of the dimension or of the storage that
    /// the two checks made in order would give.
    pub const SUBSCRIPT_OR_STORAGE: i64 = 16;
}

/// The descriptor of an ALLOCATABLE array in generated code: words of
/// 8 bytes, [`alloc_desc::BASE`], [`alloc_desc::CAPACITY`],
/// [`alloc_desc::ALLOCATED`], then a (lower bound, extent) pair per
/// dimension from [`alloc_desc::DIMS`].
pub mod alloc_desc {
    /// Address of the storage (kept after DEALLOCATE for reuse).
    pub const BASE: i32 = 0;
    /// Bytes reserved at `BASE`.
    pub const CAPACITY: i32 = 8;
    /// 1 while allocated, else 0.
    pub const ALLOCATED: i32 = 16;
    /// Offset of the first (lower, extent) pair.
    pub const DIMS: i32 = 24;
    /// Bytes of a descriptor of rank `rank`.
    pub fn size(rank: usize) -> u32 {
        DIMS as u32 + 16 * rank as u32
    }
}

/// Where generated code records the first error of a call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorSlot {
    /// One of the [`code`] constants; 0 when no error.
    pub kind: i64,
    /// The procedure (index of its `ProcId`).
    pub proc: i64,
    /// The failing instruction's index, or `-1 - block` for a terminator.
    pub site: i64,
    /// The variable involved, or -1.
    pub var: i64,
    /// 0-based dimension (or stack index / parameter position).
    pub dim: i64,
    /// The offending index (or buffer length, or substring start).
    pub index: i64,
    /// Lower bound (or substring end).
    pub lower: i64,
    /// Upper bound (or required length).
    pub upper: i64,
}

/// The context every compiled procedure receives.
#[repr(C)]
pub struct RuntimeCtx {
    /// Registers of the value, integer and control stacks, in [`StackKind`]
    /// order.
    pub stacks: [StackRegs; 3],
    /// The error of the current call.
    pub error: ErrorSlot,
    /// Nesting depth of compiled calls (the host's call is depth 1).
    pub depth: i64,
    /// Lowest native stack pointer at which a procedure may start (0: no
    /// limit); checked at every procedure's entry.
    pub stack_limit: u64,
    /// Non-zero once the call's time limit has passed: set by the timer
    /// thread ([`crate::runtime_timer`]), read at every loop back-edge by code
    /// compiled with time checks.
    pub interrupt: AtomicI64,
    /// The table of addresses of the globals the current call runs against
    /// (the module's store or an evaluation's frame; null for a module
    /// without globals): generated code reads a global's address from it.
    pub globals: *const usize,
}

/// Byte offsets into [`RuntimeCtx`] used by code generation.
pub mod layout {
    use super::*;
    /// Offset of the registers of stack `k`.
    pub fn stack(k: usize) -> i32 {
        (offset_of!(RuntimeCtx, stacks) + k * std::mem::size_of::<StackRegs>()) as i32
    }
    /// Offset of `top` within [`StackRegs`].
    pub const TOP: i32 = offset_of!(StackRegs, top) as i32;
    /// Offset of `base` within [`StackRegs`].
    pub const BASE: i32 = offset_of!(StackRegs, base) as i32;
    /// Offset of `end` within [`StackRegs`].
    pub const END: i32 = offset_of!(StackRegs, end) as i32;
    /// Offset of `pushed` within [`StackRegs`].
    pub const PUSHED: i32 = offset_of!(StackRegs, pushed) as i32;
    /// Offset of the error slot.
    pub const ERROR: i32 = offset_of!(RuntimeCtx, error) as i32;
    /// Offset of the call depth.
    pub const DEPTH: i32 = offset_of!(RuntimeCtx, depth) as i32;
    /// Offset of the native stack limit.
    pub const STACK_LIMIT: i32 = offset_of!(RuntimeCtx, stack_limit) as i32;
    /// Offset of the interrupt flag.
    pub const INTERRUPT: i32 = offset_of!(RuntimeCtx, interrupt) as i32;
    /// Offset of the table of global addresses.
    pub const GLOBALS: i32 = offset_of!(RuntimeCtx, globals) as i32;
    /// Size of one [`ArgSlot`].
    pub const ARG_SLOT: i32 = std::mem::size_of::<ArgSlot>() as i32;
    /// Offset of `len` within [`ArgSlot`].
    pub const ARG_LEN: i32 = offset_of!(ArgSlot, len) as i32;
}

/// Index of a stack kind in [`RuntimeCtx::stacks`].
pub fn stack_index(kind: StackKind) -> usize {
    match kind {
        StackKind::Value => 0,
        StackKind::Integer => 1,
        StackKind::Control => 2,
    }
}

/// The state behind a [`Runtime`]; `ctx` comes first so a `*mut RuntimeCtx`
/// handed to generated code is also a pointer to the whole state.
#[repr(C)]
struct RuntimeState {
    ctx: RuntimeCtx,
    stacks: [SegmentedStack; 3],
    arena: Arena,
    config: StackConfig,
    budget: MapBudget,
    /// Message of the last failure a runtime helper reported (a stack
    /// that cannot grow, an I/O statement).
    helper_error: Option<String>,
    /// The program's I/O channels and statement in progress.
    io: IoState,
    /// Resource limits of calls.
    limits: Limits,
    /// The timer entry of the current call's time limit, if armed.
    alarm: Option<crate::runtime_timer::Alarm>,
    /// The native stack calls run on when [`Limits::stack_size`] is set:
    /// an inaccessible guard page and the stack above it, mapped on first
    /// use and kept for the later calls (mapping a fresh stack for every
    /// call cost about 10 µs, more than a small procedure runs). Pages are
    /// committed as the stack grows into them.
    call_stack: Option<memmap2::MmapMut>,
    /// The token of the last [`Runtime::mark_set_up`], 0 once the limits,
    /// I/O channels or kept records were set since.
    set_up: u64,
}

/// Where a call runs on a runtime's own stack (see
/// [`Runtime::call_stack`]).
#[derive(Clone, Copy, Debug)]
pub struct CallStackRegion {
    /// Lowest address of the usable stack (above the guard page).
    pub base: *mut u8,
    /// Bytes of usable stack (a multiple of the page size).
    pub size: usize,
    /// The stack limit to give generated code (see
    /// [`Runtime::begin_call_below`]).
    pub limit: u64,
}

/// Bytes of a memory page (4096 when it cannot be found).
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page)
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096)
}

/// Bytes of native stack kept free below the limit given to generated code,
/// for the runtime helpers it calls (I/O formatting, the arena) and for the
/// frame a procedure allocates before it checks the limit.
pub const STACK_RESERVE: usize = 256 << 10;

/// Resource limits of the calls made through a [`Runtime`]: what keeps a
/// runaway or hostile program from taking the host down with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Run each call on a native stack of this many bytes that the
    /// runtime maps on first use and keeps (`None`: on the caller's
    /// stack). Either way generated code checks the stack at every
    /// procedure entry and fails with a stack-overflow error
    /// before it could exhaust it.
    pub stack_size: Option<usize>,
    /// Wall-clock budget of one call; checked at loop back-edges of code
    /// compiled with time checks ([`crate::codegen::JitOptions`]).
    pub time: Option<Duration>,
    /// Bytes the local-array arena may hold (automatic and large local
    /// arrays); an allocation past it fails with a located error.
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stack_size: None,
            time: None,
            memory: default_memory_limit(),
        }
    }
}

/// The default memory limit: the machine's physical memory (16 GiB when it
/// cannot be found).
pub fn default_memory_limit() -> usize {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    match usize::try_from(pages) {
        Ok(pages) if pages > 0 => pages.saturating_mul(page_size()),
        _ => 16 << 30,
    }
}

/// The lowest stack pointer generated code may start a procedure at on the
/// current stack, keeping [`STACK_RESERVE`] bytes free; 0 when the stack's
/// bounds are unknown.
#[inline]
fn native_stack_limit() -> u64 {
    let here = 0u8;
    let sp = std::ptr::addr_of!(here) as usize;
    match stacker::remaining_stack() {
        Some(rest) => sp
            .saturating_sub(rest)
            .saturating_add(STACK_RESERVE)
            .min(sp) as u64,
        None => 0,
    }
}

/// Runtime stacks, arena and error slot for calls of compiled code. Reuse
/// one `Runtime` across calls to share the tape between a forward and a
/// reverse sweep.
pub struct Runtime {
    state: Box<RuntimeState>,
}

// SAFETY: the raw pointers in the context point only into memory owned by
// this Runtime (its segments), which moves with it between threads.
unsafe impl Send for Runtime {}

/// Where the three stacks stood at one moment (see
/// [`Runtime::tape_position`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapePosition([crate::stack::StackPosition; 3]);

/// Statistics of the three stacks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapeStats {
    /// The value (f64) stack.
    pub value: StackStats,
    /// The integer stack.
    pub integer: StackStats,
    /// The control stack.
    pub control: StackStats,
}

impl TapeStats {
    /// Total bytes of values currently on the three stacks.
    pub fn live_bytes(&self) -> u64 {
        (self.value.depth + self.integer.depth + self.control.depth) * crate::stack::WORD as u64
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime::new()
    }
}

impl Runtime {
    /// A runtime with the default [`StackConfig`] (no memory is mapped until
    /// the first push).
    pub fn new() -> Runtime {
        Runtime::with_config(StackConfig::default())
    }

    /// A runtime with the given stack sizing.
    pub fn with_config(config: StackConfig) -> Runtime {
        Runtime {
            state: Box::new(RuntimeState {
                ctx: RuntimeCtx {
                    stacks: Default::default(),
                    error: ErrorSlot::default(),
                    depth: 0,
                    stack_limit: 0,
                    interrupt: AtomicI64::new(0),
                    globals: std::ptr::null(),
                },
                stacks: Default::default(),
                arena: Arena::default(),
                config,
                budget: MapBudget::default(),
                helper_error: None,
                io: IoState::default(),
                limits: Limits::default(),
                alarm: None,
                call_stack: None,
                set_up: 0,
            }),
        }
    }

    /// Points the next calls at a table of global addresses (see
    /// [`RuntimeCtx::globals`]); the table must outlive those calls.
    #[inline]
    pub(crate) fn set_globals(&mut self, table: *const usize) {
        self.state.ctx.globals = table;
    }

    /// The context pointer to pass to a compiled procedure.
    #[inline]
    pub fn ctx_ptr(&mut self) -> *mut RuntimeCtx {
        &mut self.state.ctx
    }

    /// Prepares a call from the host: clears the error slot and sets the
    /// call depth to 1. [`crate::codegen::CompiledModule::call_with`] does
    /// this; callers of a raw function pointer must do it themselves.
    /// It also arms the limits: the native stack limit of the current
    /// stack and the time budget.
    #[inline]
    pub fn begin_call(&mut self) {
        self.begin_call_below(native_stack_limit());
    }

    /// [`Runtime::begin_call`] for a call that runs on a stack whose limit
    /// the caller knows (a [`CallStackRegion`]'s): generated code fails
    /// with a stack-overflow error before its stack pointer passes
    /// `stack_limit`.
    #[inline]
    pub fn begin_call_below(&mut self, stack_limit: u64) {
        let s = &mut *self.state;
        s.ctx.error = ErrorSlot::default();
        s.ctx.depth = 1;
        s.helper_error = None;
        s.ctx.stack_limit = stack_limit;
        s.alarm = None;
        s.ctx.interrupt.store(0, Ordering::SeqCst);
        if let Some(t) = s.limits.time {
            s.alarm = Some(crate::runtime_timer::Alarm::arm(
                Instant::now() + t,
                &s.ctx.interrupt,
            ));
        }
    }

    /// This runtime's own native stack of at least `bytes` (rounded up to
    /// pages, at least [`STACK_RESERVE`] and 64 KiB more), mapped on first
    /// use and kept for later calls; an error when it cannot be mapped.
    /// The region stays valid until the runtime is dropped or asked for a
    /// larger stack.
    pub fn call_stack(&mut self, bytes: usize) -> Result<CallStackRegion, String> {
        let page = page_size();
        let size = bytes
            .max(STACK_RESERVE + (64 << 10))
            .checked_next_multiple_of(page)
            .filter(|s| {
                s.checked_add(page)
                    .is_some_and(|t| t <= isize::MAX as usize)
            })
            .ok_or_else(|| format!("a native stack of {bytes} bytes cannot be mapped"))?;
        let s = &mut *self.state;
        if s.call_stack.as_ref().is_none_or(|m| m.len() - page < size) {
            s.call_stack = None;
            let mut map = memmap2::MmapOptions::new()
                .len(size + page)
                .map_anon()
                .map_err(|e| format!("a native stack of {size} bytes cannot be mapped: {e}"))?;
            // SAFETY: the first page of a mapping this runtime owns, which
            // nothing else references; made inaccessible so that running
            // past the stack faults instead of writing other memory.
            let status = unsafe { libc::mprotect(map.as_mut_ptr().cast(), page, libc::PROT_NONE) };
            if status != 0 {
                return Err(format!(
                    "the guard page of a native stack cannot be set: {}",
                    std::io::Error::last_os_error()
                ));
            }
            s.call_stack = Some(map);
        }
        let map = s.call_stack.as_mut().expect("mapped above");
        let usable = map.len() - page;
        // SAFETY: `page` < `map.len()`: the address stays inside the mapping.
        let base = unsafe { map.as_mut_ptr().add(page) };
        Ok(CallStackRegion {
            base,
            size: usable,
            limit: (base as u64).saturating_add(STACK_RESERVE as u64),
        })
    }

    /// Ends a call begun with [`Runtime::begin_call`]: disarms its time
    /// limit. (Dropping the runtime or beginning another call does it too.)
    #[inline]
    pub fn end_call(&mut self) {
        self.state.alarm = None;
    }

    /// The resource limits of calls through this runtime.
    #[inline]
    pub fn limits(&self) -> &Limits {
        &self.state.limits
    }

    /// Sets the resource limits of further calls.
    pub fn set_limits(&mut self, limits: Limits) {
        self.state.set_up = 0;
        self.state.limits = limits;
    }

    /// Records that the caller has set this runtime's limits, I/O channels
    /// and kept records as it wants them, under `token` (a caller's own
    /// non-zero identity), so that it can skip setting them again before
    /// the next call while [`Runtime::is_set_up`] holds.
    #[inline]
    pub fn mark_set_up(&mut self, token: u64) {
        self.state.set_up = token;
    }

    /// True when the last [`Runtime::mark_set_up`] was with `token` (non
    /// zero), no limits, channels or kept records were set since, and no
    /// I/O statement left state behind (a failed one's is reset by
    /// [`Runtime::set_io_channels`]).
    #[inline]
    pub fn is_set_up(&self, token: u64) -> bool {
        token != 0 && self.state.set_up == token && self.state.io.is_idle()
    }

    /// The error recorded by the last failing call.
    pub fn error_slot(&self) -> ErrorSlot {
        self.state.ctx.error
    }

    /// The message of the last failure a runtime helper reported (a stack
    /// that cannot grow, an I/O error), if any.
    pub fn helper_error(&self) -> Option<&str> {
        self.state.helper_error.as_deref()
    }

    /// Sends the output of compiled PRINT / WRITE to, and takes the input of
    /// READ from, `channels` (standard output and input by default).
    #[inline]
    pub fn set_io_channels(&mut self, channels: &Channels) {
        self.state.set_up = 0;
        self.state.io.set_channels(channels);
    }

    /// Keeps the records of kept ALLOCATABLE module and SAVE arrays in
    /// `kept` (shared with the other calls of the program).
    #[inline]
    pub fn set_kept(&mut self, kept: &Kept) {
        self.state.set_up = 0;
        self.state.io.set_kept(kept);
    }

    /// Records the current depths into the peaks (called after each call).
    #[inline]
    pub(crate) fn sample_peaks(&mut self) {
        let s = &mut *self.state;
        for (stack, regs) in s.stacks.iter_mut().zip(&s.ctx.stacks) {
            stack.sample_peak(regs);
        }
    }

    /// Statistics of one stack.
    pub fn stack_stats(&self, kind: StackKind) -> StackStats {
        let k = stack_index(kind);
        self.state.stacks[k].stats(&self.state.ctx.stacks[k])
    }

    /// Statistics of all three stacks.
    pub fn stats(&self) -> TapeStats {
        TapeStats {
            value: self.stack_stats(StackKind::Value),
            integer: self.stack_stats(StackKind::Integer),
            control: self.stack_stats(StackKind::Control),
        }
    }

    /// Number of values on a stack.
    pub fn depth(&self, kind: StackKind) -> u64 {
        let k = stack_index(kind);
        self.state.stacks[k].depth(&self.state.ctx.stacks[k])
    }

    /// The positions of the three stacks, for [`Runtime::rewind`]: taken
    /// after a forward sweep, it lets several reverse sweeps read the same
    /// tape.
    pub fn tape_position(&self) -> TapePosition {
        let s = &*self.state;
        TapePosition(std::array::from_fn(|k| {
            s.stacks[k].position(&s.ctx.stacks[k])
        }))
    }

    /// Returns the three stacks to a position taken with
    /// [`Runtime::tape_position`]. Valid while nothing was pushed over the
    /// values since (a reverse sweep only pops); false when the position is
    /// not one of this runtime's.
    pub fn rewind(&mut self, position: TapePosition) -> bool {
        let s = &mut *self.state;
        let mut ok = true;
        for (k, p) in position.0.into_iter().enumerate() {
            ok &= s.stacks[k].rewind(&mut s.ctx.stacks[k], p);
        }
        ok
    }

    /// Empties the three stacks, their segments kept mapped: as
    /// [`Runtime::rewind`] to the default position, without comparing
    /// positions (the host does it before every call).
    #[inline]
    pub fn empty_stacks(&mut self) {
        let s = &mut *self.state;
        for (stack, regs) in s.stacks.iter_mut().zip(s.ctx.stacks.iter_mut()) {
            stack.rewind_to_start(regs);
        }
    }

    /// Empties all stacks, unmaps their segments and resets statistics.
    pub fn clear(&mut self) {
        let s = &mut *self.state;
        for (stack, regs) in s.stacks.iter_mut().zip(s.ctx.stacks.iter_mut()) {
            stack.clear(regs, &mut s.budget);
        }
        s.arena = Arena::default();
    }

    /// Pushes a word from Rust (the same representation generated code uses:
    /// f64 bits on the value stack, i64 on the others).
    pub fn push_word(&mut self, kind: StackKind, word: u64) -> Result<(), String> {
        let k = stack_index(kind);
        let s = &mut *self.state;
        let regs = &mut s.ctx.stacks[k];
        if regs.top == regs.end {
            s.stacks[k]
                .advance(regs, &s.config, &mut s.budget)
                .map_err(|e| e.0)?;
        }
        // SAFETY: top < end within a live segment.
        unsafe {
            regs.top.write(word);
            regs.top = regs.top.add(1);
        }
        regs.pushed += 1;
        Ok(())
    }

    /// Pops a word from Rust; `None` when the stack is empty.
    pub fn pop_word(&mut self, kind: StackKind) -> Option<u64> {
        let k = stack_index(kind);
        let s = &mut *self.state;
        let regs = &mut s.ctx.stacks[k];
        if regs.top == regs.base && !s.stacks[k].retreat(regs) {
            return None;
        }
        // SAFETY: base < top within a live segment.
        unsafe {
            regs.top = regs.top.sub(1);
            Some(regs.top.read())
        }
    }

    /// Bytes currently reserved by the local-array arena.
    pub fn arena_bytes(&self) -> usize {
        self.state.arena.reserved_bytes()
    }

    /// Bytes this runtime keeps mapped: its stacks' segments (in RAM or
    /// spilled to files) and its local-array arena (what
    /// [`Runtime::stats`] reports per stack, summed, plus
    /// [`Runtime::arena_bytes`]).
    #[inline]
    pub fn mapped_bytes(&self) -> u64 {
        let s = &*self.state;
        (s.budget.ram_bytes + s.budget.spilled_bytes + s.arena.reserved_bytes()) as u64
    }
}

/// Recovers the state from the context pointer.
///
/// # Safety
/// `rt` must come from [`Runtime::ctx_ptr`] of a live runtime.
unsafe fn state<'a>(rt: *mut RuntimeCtx) -> &'a mut RuntimeState {
    // SAFETY: RuntimeState is repr(C) with `ctx` first, and the caller
    // guarantees `rt` points into a live RuntimeState.
    unsafe { &mut *(rt as *mut RuntimeState) }
}

/// Generated code calls this when a push finds its segment full. Returns 0
/// on success, 1 when no memory could be mapped.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_stack_grow(rt: *mut RuntimeCtx, kind: i64) -> i32 {
    // SAFETY: generated code passes the context it was given.
    let s = unsafe { state(rt) };
    let k = (kind as usize).min(2);
    match s.stacks[k].advance(&mut s.ctx.stacks[k], &s.config, &mut s.budget) {
        Ok(()) => 0,
        Err(e) => {
            s.helper_error = Some(e.0);
            1
        }
    }
}

/// Generated code calls this before a counted loop whose pushes on one
/// stack were counted in advance, when the current segment has too little
/// room for them: `request` is `words << 2 | kind`. Moves the stack to a
/// segment with room for `words` pushes (see [`SegmentedStack::reserve`]);
/// when it cannot, leaves it as it was and the loop runs with its per-push
/// segment tests, which report any failure. Returns 0.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_stack_reserve(rt: *mut RuntimeCtx, request: i64) -> i32 {
    // SAFETY: generated code passes the context it was given.
    let s = unsafe { state(rt) };
    let k = ((request & 3) as usize).min(2);
    let words = (request as u64 >> 2) as usize;
    // A refusal is not an error: the checked loop reports its own.
    let _ = s.stacks[k].reserve(&mut s.ctx.stacks[k], &s.config, &mut s.budget, words);
    0
}

/// Generated code calls this when a pop finds its segment empty. Returns 0
/// when the registers now point at a previous non-empty segment, 1 when the
/// stack is empty.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_stack_retreat(rt: *mut RuntimeCtx, kind: i64) -> i32 {
    // SAFETY: generated code passes the context it was given.
    let s = unsafe { state(rt) };
    let k = (kind as usize).min(2);
    if s.stacks[k].retreat(&mut s.ctx.stacks[k]) {
        0
    } else {
        1
    }
}

/// The current arena position (taken at procedure entry).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_arena_mark(rt: *mut RuntimeCtx) -> i64 {
    // SAFETY: generated code passes the context it was given.
    unsafe { state(rt) }.arena.mark() as i64
}

/// Releases the arena to a mark (at procedure exit).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_arena_release(rt: *mut RuntimeCtx, mark: i64) {
    // SAFETY: generated code passes the context it was given.
    unsafe { state(rt) }.arena.release(mark as u64)
}

/// Allocates `bytes` bytes filled with `fill` from the arena; null when the
/// size is negative or memory is exhausted.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_arena_alloc(rt: *mut RuntimeCtx, bytes: i64, fill: i64) -> *mut u8 {
    // SAFETY: generated code passes the context it was given.
    let s = unsafe { state(rt) };
    let limit = s.limits.memory;
    if bytes < 0 || (bytes as u64).saturating_add(s.arena.used_bytes() as u64) > limit as u64 {
        s.helper_error = Some(format!("more than the memory limit of {limit} bytes"));
        return std::ptr::null_mut();
    }
    s.arena
        .alloc(bytes as usize, fill as u8)
        .unwrap_or(std::ptr::null_mut())
}

/// ALLOCATE: gives the descriptor at `desc` (see [`alloc_desc`]) `bytes`
/// zeroed bytes of storage from the arena, reusing the storage it held
/// before when large enough (a reallocation in a loop does not grow the
/// arena; the arena is released when the procedure returns). Returns 0,
/// 1 when the array is already allocated, 2 when `bytes` is negative (an
/// overflowed size) or past the memory limit. Does not touch the bounds.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`] and `desc` a
/// descriptor of generated code.
pub unsafe extern "C" fn adjit_allocate(rt: *mut RuntimeCtx, desc: *mut i64, bytes: i64) -> i64 {
    // SAFETY: generated code passes its descriptor: three words at least.
    let (base, capacity, allocated) = unsafe { (desc, desc.add(1), desc.add(2)) };
    // SAFETY: as above.
    if unsafe { *allocated } != 0 {
        return 1;
    }
    if bytes < 0 {
        // SAFETY: generated code passes the context it was given.
        unsafe { state(rt) }.helper_error = Some("more bytes than 64 bits count".into());
        return 2;
    }
    // SAFETY: as above.
    if bytes > unsafe { *capacity } {
        // Grow geometrically so that repeated growth stays linear.
        // SAFETY: as above.
        let want = bytes.max(unsafe { *capacity }.saturating_mul(2));
        // SAFETY: the context is live (caller's contract).
        let mut p = unsafe { adjit_arena_alloc(rt, want, 0) };
        let mut got = want;
        if p.is_null() && want > bytes {
            // SAFETY: as above.
            p = unsafe { adjit_arena_alloc(rt, bytes, 0) };
            got = bytes;
        }
        if p.is_null() {
            return 2;
        }
        // SAFETY: the descriptor words are valid (caller's contract).
        unsafe {
            *base = p as i64;
            *capacity = got;
        }
    } else {
        // SAFETY: `base` holds `capacity >= bytes` bytes of arena storage.
        unsafe { std::ptr::write_bytes(*base as *mut u8, 0, bytes as usize) };
    }
    // SAFETY: as above.
    unsafe { *allocated = 1 };
    0
}

/// Fortran character assignment: copies `src` into `dst`, truncating or
/// padding with blanks. The ranges may overlap.
///
/// # Safety
/// Each pointer must be valid for its length in bytes.
pub unsafe extern "C" fn adjit_char_assign(
    dst: *mut u8,
    dst_len: i64,
    src: *const u8,
    src_len: i64,
) {
    let dst_len = dst_len.max(0) as usize;
    let n = dst_len.min(src_len.max(0) as usize);
    // SAFETY: generated code passes pointers to at least `*_len` bytes;
    // `copy` handles overlap.
    unsafe {
        std::ptr::copy(src, dst, n);
        std::ptr::write_bytes(dst.add(n), b' ', dst_len - n);
    }
}

/// Fortran character comparison after blank padding: -1, 0 or 1.
///
/// # Safety
/// Each pointer must be valid for its length in bytes.
pub unsafe extern "C" fn adjit_char_compare(
    a: *const u8,
    a_len: i64,
    b: *const u8,
    b_len: i64,
) -> i32 {
    let (a_len, b_len) = (a_len.max(0) as usize, b_len.max(0) as usize);
    let n = a_len.max(b_len);
    for i in 0..n {
        // SAFETY: reads stay below each operand's length.
        let x = if i < a_len {
            unsafe { *a.add(i) }
        } else {
            b' '
        };
        let y = if i < b_len {
            unsafe { *b.add(i) }
        } else {
            b' '
        };
        if x != y {
            return if x < y { -1 } else { 1 };
        }
    }
    0
}

/// Fortran INDEX of two character operands ([`adjit_ir::chars::index`]).
///
/// # Safety
/// Each pointer must be valid for its length in bytes.
pub unsafe extern "C" fn adjit_char_index(
    a: *const u8,
    a_len: i64,
    b: *const u8,
    b_len: i64,
) -> i64 {
    // SAFETY: generated code passes pointers to at least `*_len` bytes.
    let (a, b) = unsafe { (bytes(a, a_len), bytes(b, b_len)) };
    adjit_ir::chars::index(a, b)
}

/// Fortran INDEX, SCAN or VERIFY ([`adjit_ir::chars::search`]); `code`
/// is [`char_search_code`] of the search and its direction.
///
/// # Safety
/// Each pointer must be valid for its length in bytes.
pub unsafe extern "C" fn adjit_char_search(
    code: i64,
    a: *const u8,
    a_len: i64,
    b: *const u8,
    b_len: i64,
) -> i64 {
    // SAFETY: generated code passes pointers to at least `*_len` bytes.
    let (a, b) = unsafe { (bytes(a, a_len), bytes(b, b_len)) };
    let op = match code >> 1 {
        0 => CharSearch::Index,
        1 => CharSearch::Scan,
        _ => CharSearch::Verify,
    };
    adjit_ir::chars::search(op, code & 1 == 1, a, b)
}

/// The code [`adjit_char_search`] receives for a search and its direction.
pub fn char_search_code(op: CharSearch, back: bool) -> i64 {
    let op = match op {
        CharSearch::Index => 0,
        CharSearch::Scan => 1,
        CharSearch::Verify => 2,
    };
    op * 2 + i64::from(back)
}

/// The bytes at `p`, `len` of them (none when `len <= 0`).
///
/// # Safety
/// `p` must be valid for `len` bytes when `len > 0`.
unsafe fn bytes<'a>(p: *const u8, len: i64) -> &'a [u8] {
    if len <= 0 || p.is_null() {
        return &[];
    }
    // SAFETY: the caller guarantees `len` readable bytes at `p`.
    unsafe { std::slice::from_raw_parts(p, len as usize) }
}

/// Runs an I/O step on the runtime's I/O state: 0 when it succeeds, 1 when
/// it fails (the message is kept for the error report). Never unwinds.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
unsafe fn io_step(
    rt: *mut RuntimeCtx,
    step: impl FnOnce(&mut IoState) -> Result<(), String>,
) -> i32 {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { state(rt) };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(&mut s.io)))
        .unwrap_or_else(|_| Err("internal error in an I/O statement".into()));
    match r {
        Ok(()) => 0,
        Err(m) => {
            s.helper_error = Some(m);
            1
        }
    }
}

/// Starts an output statement; `len < 0`: list-directed, else the format
/// text at `format`.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `format` valid
/// for `len` bytes.
pub unsafe extern "C" fn adjit_io_begin_write(
    rt: *mut RuntimeCtx,
    format: *const u8,
    len: i64,
) -> i32 {
    // SAFETY: guaranteed by the caller.
    let f = (len >= 0).then(|| unsafe { bytes(format, len) });
    unsafe {
        io_step(rt, |io| {
            io.begin_write(f);
            Ok(())
        })
    }
}

/// Adds a number or logical to the output statement: `kind` 0 integer
/// (`bits` the value, `size` its bytes), 1 REAL(4), 2 REAL(8) (`bits` the
/// f64 bits), 3 logical.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_io_put(rt: *mut RuntimeCtx, kind: i64, bits: i64, size: i64) -> i32 {
    let item = match kind {
        0 => Item::Int(bits, size as u8),
        1 | 2 => Item::Real(f64::from_bits(bits as u64), kind == 2),
        _ => Item::Logical(bits != 0),
    };
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            io.put(item);
            Ok(())
        })
    }
}

/// Adds character data to the output statement.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `p` valid for
/// `len` bytes.
pub unsafe extern "C" fn adjit_io_put_char(rt: *mut RuntimeCtx, p: *const u8, len: i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    let text = unsafe { bytes(p, len) }.to_vec();
    unsafe {
        io_step(rt, |io| {
            io.put(Item::Char(text));
            Ok(())
        })
    }
}

/// Ends the output statement (formats and writes it).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_io_end_write(rt: *mut RuntimeCtx) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe { io_step(rt, IoState::end_write) }
}

/// Starts writing (`restore` 0) or reading (1) the kept record named by
/// the `len` bytes at `name` ([`IoState::begin_keep`],
/// [`IoState::begin_restore`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `name` valid
/// for `len` bytes.
pub unsafe extern "C" fn adjit_io_begin_kept(
    rt: *mut RuntimeCtx,
    name: *const u8,
    len: i64,
    restore: i64,
) -> i32 {
    // SAFETY: guaranteed by the caller.
    let name = unsafe { bytes(name, len) };
    // SAFETY: `rt` is a live runtime's context (guaranteed by the caller).
    unsafe {
        io_step(rt, |io| {
            if restore != 0 {
                io.begin_restore(name)
            } else {
                io.begin_keep(name)
            }
            Ok(())
        })
    }
}

/// Starts (`start` 1) or ends (0) a list-directed input statement.
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_io_read_bracket(rt: *mut RuntimeCtx, start: i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            if start != 0 {
                io.begin_read()
            } else {
                io.end_read()
            }
            Ok(())
        })
    }
}

/// Reads the next input value into `*out`: `kind` as for
/// [`adjit_io_put`] (an integer is stored as i64, a real as f64 bits, a
/// logical as 0 or 1).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `out` valid for
/// one i64.
pub unsafe extern "C" fn adjit_io_get(rt: *mut RuntimeCtx, kind: i64, out: *mut i64) -> i32 {
    let want = match kind {
        0 => Item::Int(0, 8),
        1 | 2 => Item::Real(0.0, kind == 2),
        _ => Item::Logical(false),
    };
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            let bits = match io.get(&want)? {
                Item::Int(v, _) => v,
                Item::Real(x, _) => x.to_bits() as i64,
                Item::Logical(b) => b as i64,
                Item::Char(_) => 0,
            };
            // SAFETY: `out` is valid for one i64 (caller).
            out.write(bits);
            Ok(())
        })
    }
}

/// Reads the next input value into character data (blank-padded or
/// truncated to `len`).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `p` valid for
/// `len` bytes.
pub unsafe extern "C" fn adjit_io_get_char(rt: *mut RuntimeCtx, p: *mut u8, len: i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            if let Item::Char(text) = io.get(&Item::Char(Vec::new()))? {
                if !io.failed() {
                    // SAFETY: `p` is valid for `len` bytes (caller).
                    fill_chars(p, len, &text);
                }
            }
            Ok(())
        })
    }
}

/// Writes `text` into the `len` bytes at `p`, blank-padded or truncated.
///
/// # Safety
/// `p` must be valid for writing `len` bytes.
unsafe fn fill_chars(p: *mut u8, len: i64, text: &[u8]) {
    for i in 0..len.max(0) as usize {
        // SAFETY: `p` is valid for `len` bytes (caller).
        unsafe { p.add(i).write(text.get(i).copied().unwrap_or(b' ')) };
    }
}

/// Ends the output statement into the internal file of `len` bytes at `p`
/// ([`IoState::end_write_to`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `p` valid for
/// `len` bytes.
pub unsafe extern "C" fn adjit_io_end_write_to(rt: *mut RuntimeCtx, p: *mut u8, len: i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            if let Some(record) = io.end_write_to(len.max(0) as usize)? {
                // SAFETY: `p` is valid for `len` bytes (caller).
                fill_chars(p, len, &record);
            }
            Ok(())
        })
    }
}

/// Starts an input statement reading the internal file of `len` bytes at
/// `p`; `format_len < 0`: list-directed, else the format text at `format`
/// ([`IoState::begin_read_from`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `p` valid for
/// `len` bytes, `format` for `format_len` bytes.
pub unsafe extern "C" fn adjit_io_begin_read_from(
    rt: *mut RuntimeCtx,
    p: *const u8,
    len: i64,
    format: *const u8,
    format_len: i64,
) -> i32 {
    // SAFETY: guaranteed by the caller.
    let (text, f) = unsafe {
        (
            bytes(p, len),
            (format_len >= 0).then(|| bytes(format, format_len)),
        )
    };
    // SAFETY: guaranteed by the caller.
    unsafe { io_step(rt, |io| io.begin_read_from(text, f)) }
}

/// Starts (`start` 1) or ends (0) one character item put in pieces
/// ([`IoState::join_chars`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_io_join_chars(rt: *mut RuntimeCtx, start: i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            io.join_chars(start != 0);
            Ok(())
        })
    }
}

/// Makes the errors of the statement in progress its status
/// ([`IoState::catch_errors`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`].
pub unsafe extern "C" fn adjit_io_catch_errors(rt: *mut RuntimeCtx) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            io.catch_errors();
            Ok(())
        })
    }
}

/// Writes the status of the statement in progress or last ended into
/// `*out` ([`IoState::status`]).
///
/// # Safety
/// `rt` must be the context pointer of a live [`Runtime`]; `out` valid for
/// one i64.
pub unsafe extern "C" fn adjit_io_status(rt: *mut RuntimeCtx, out: *mut i64) -> i32 {
    // SAFETY: guaranteed by the caller.
    unsafe {
        io_step(rt, |io| {
            // SAFETY: `out` is valid for one i64 (caller).
            out.write(io.status() as i64);
            Ok(())
        })
    }
}

/// Integer power for I64 (`b >= 0`, or `a` is ±1; the zero-base negative
/// case is rejected by generated code before the call): Fortran semantics.
pub extern "C" fn adjit_ipow_i64(a: i64, b: i64) -> i64 {
    int_pow(a, b)
}

/// Integer power for I32 (see [`adjit_ipow_i64`]).
pub extern "C" fn adjit_ipow_i32(a: i32, b: i32) -> i32 {
    int_pow(a as i64, b as i64) as i32
}

/// Fortran integer exponentiation: exponentiation by squaring with wrapping
/// products; for a negative exponent `1/a^|b|` truncated.
fn int_pow(a: i64, b: i64) -> i64 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 => {
                if b % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let (mut base, mut e, mut acc) = (a, b as u64, 1i64);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

/// Float to integer power by repeated squaring (`x**-n = 1/x**n`), the
/// algorithm of [`crate::ir::BinaryOp::PowI`], in f64.
pub extern "C" fn adjit_powi_f64(x: f64, n: i64) -> f64 {
    let (mut base, mut e, mut acc) = (x, n.unsigned_abs(), 1.0f64);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    if n < 0 {
        1.0 / acc
    } else {
        acc
    }
}

/// [`adjit_powi_f64`] in f32.
pub extern "C" fn adjit_powi_f32(x: f32, n: i64) -> f32 {
    let (mut base, mut e, mut acc) = (x, n.unsigned_abs(), 1.0f32);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    if n < 0 {
        1.0 / acc
    } else {
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_stack_is_mapped_once_and_reused() {
        let mut rt = Runtime::new();
        let first = rt.call_stack(1 << 20).expect("maps");
        assert!(first.size >= 1 << 20);
        assert_eq!(first.limit, first.base as u64 + STACK_RESERVE as u64);
        let again = rt.call_stack(512 << 10).expect("kept");
        assert_eq!((again.base, again.size), (first.base, first.size));
        let larger = rt.call_stack(4 << 20).expect("maps a larger one");
        assert!(larger.size >= 4 << 20);
    }

    #[test]
    fn a_call_stack_that_cannot_be_mapped_is_an_error() {
        let mut rt = Runtime::new();
        let e = rt.call_stack(usize::MAX - 4096).unwrap_err();
        assert!(e.contains("cannot be mapped"), "{e}");
    }
}
