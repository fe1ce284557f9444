//! The reference interpreter: the executable definition of the code-list IR
//! (see the crate root for the meaning of every instruction).
//!
//! It knows the IR only; the JIT (`adjit-jit`) must agree with it, not the
//! other way round.
//!
//! Memory is flat typed storage: every variable lives in a *slot* (a
//! [`Buffer`]) at an offset, so that passing an array element by reference
//! (Fortran sequence association) hands the callee a `(slot, offset)` view of
//! the tail of the caller's storage. Slots `0..globals` hold the module's
//! globals; each activation pushes slots for its locals and for temporaries
//! of value arguments, and pops them on return. SSA values are kept as 64-bit
//! patterns in one register file shared by all activations (f32 as its bits,
//! integers sign-extended, Bool as 0 / 1), so no instruction allocates.
//!
//! Runtime stacks (value, integer, control) persist across calls, so an
//! adjoint's forward and reverse sweeps may be two calls.

use crate::buffer::Buffer;
use crate::error::RuntimeError;
use crate::io::{Channels, IoState, Item, Kept};
use crate::ir::{
    BinaryOp, CallArg, CharBase, CharRef, CmpOp, Const, Inst, IoOp, Module, Proc, ProcId, Rounding,
    RuntimeErrorKind, Span, StackKind, Storage, Terminator, Type, UnaryOp, Value, VarId,
    MAX_CALL_DEPTH,
};
use crate::shape::{eval_var_shape_with, int_at, may_be_short, resolve_arguments_with, DimShape};
use std::cmp::Ordering;

/// The largest local variable (in storage units) the interpreter allocates;
/// a bigger automatic array is reported as an error rather than exhausting
/// memory.
pub const MAX_LOCAL_UNITS: usize = 1 << 28;

/// Where an argument's storage is: a slot and a range of storage units
/// (elements, bytes for characters).
#[derive(Clone, Copy, Debug)]
struct Loc {
    slot: usize,
    offset: usize,
    units: usize,
    /// For an argument passed by descriptor
    /// ([`Storage::AllocatableParam`]): the index in `Interpreter::views`
    /// of the caller's array.
    view: Option<usize>,
}

/// A variable of one activation: its storage and evaluated shape.
#[derive(Clone, Copy, Debug)]
struct View {
    loc: Loc,
    /// Storage units the declaration describes: what the variable passes on
    /// to a callee, even when the actual argument it received is longer.
    declared: usize,
    /// Bytes per element for characters, else 1.
    char_len: usize,
    /// First entry of the activation's dimensions in `Interpreter::dims`.
    dims_start: usize,
    rank: usize,
    /// False for a [`Storage::Allocatable`] array without storage.
    allocated: bool,
    /// For a [`Storage::AllocatableParam`]: the index in
    /// `Interpreter::views` of the caller's array, whose view (storage,
    /// bounds and allocation) this one stands for.
    alias: Option<usize>,
}

/// One activation of a procedure.
#[derive(Clone, Copy, Debug)]
struct Frame {
    proc: ProcId,
    views_base: usize,
    values_base: usize,
}

/// A running procedure: its frame, where it is, and what to release when it
/// returns.
#[derive(Clone, Copy)]
struct Activation<'m> {
    proc: &'m Proc,
    frame: Frame,
    dims_base: usize,
    block: crate::ir::BlockId,
    /// Index of the next instruction of `block`.
    pos: usize,
    /// Length of `slots` before the caller made value temporaries.
    call_slots: usize,
    /// Length of `arg_locs` before the caller pushed the arguments.
    call_args: usize,
}

/// Character data resolved for one instruction.
#[derive(Clone, Copy)]
enum CharLoc<'m> {
    Slot {
        slot: usize,
        start: usize,
        len: usize,
    },
    Literal(&'m [u8]),
}

/// The contents of the interpreter's three runtime stacks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SavedStacks {
    value: Vec<f64>,
    integer: Vec<i64>,
    control: Vec<i64>,
}

/// Interprets the procedures of one module.
pub struct Interpreter<'m> {
    module: &'m Module,
    bounds_checks: bool,
    /// Storage: the globals, then the slots of live activations.
    slots: Vec<Buffer>,
    /// Views of the variables of live activations.
    views: Vec<View>,
    /// Dimensions of the views.
    dims: Vec<DimShape>,
    /// SSA registers of live activations.
    values: Vec<u64>,
    /// Argument locations handed from a caller to its callee.
    arg_locs: Vec<Loc>,
    /// Scratch for character assignment.
    char_scratch: Vec<u8>,
    value_stack: Vec<f64>,
    integer_stack: Vec<i64>,
    control_stack: Vec<i64>,
    /// Peak length of each stack, in [`StackKind`] order.
    stack_peaks: [usize; 3],
    /// Live activations (kept to reuse the allocation).
    activations: Vec<Activation<'m>>,
    /// The program's I/O channels and statement in progress.
    io: IoState,
}

// ----- value encoding -------------------------------------------------------

fn enc_f32(x: f32) -> u64 {
    x.to_bits() as u64
}
fn dec_f32(b: u64) -> f32 {
    f32::from_bits(b as u32)
}
fn enc_f64(x: f64) -> u64 {
    x.to_bits()
}
fn dec_f64(b: u64) -> f64 {
    f64::from_bits(b)
}
fn enc_int(x: i64) -> u64 {
    x as u64
}
/// Integers of either width are stored sign-extended, so this reads both.
fn dec_int(b: u64) -> i64 {
    b as i64
}
fn enc_i32(x: i32) -> u64 {
    x as i64 as u64
}
fn enc_bool(x: bool) -> u64 {
    x as u64
}

/// Encodes an integer result in the width of `ty` (wrapping to i32).
fn enc_int_as(ty: Type, x: i64) -> u64 {
    match ty {
        Type::I32 => enc_i32(x as i32),
        Type::Bool => enc_bool(x != 0),
        _ => enc_int(x),
    }
}

/// Encodes a float result (given as f64) in the width of `ty`.
fn enc_float_as(ty: Type, x: f64) -> u64 {
    match ty {
        Type::F32 => enc_f32(x as f32),
        _ => enc_f64(x),
    }
}

// ----- arithmetic -------------------------------------------------------------

macro_rules! float_ops {
    ($unary:ident, $binary:ident, $powi:ident, $t:ty, $special:ident) => {
        fn $unary(op: UnaryOp, x: $t) -> $t {
            match op {
                UnaryOp::Neg => -x,
                UnaryOp::Abs => x.abs(),
                UnaryOp::Sqrt => x.sqrt(),
                UnaryOp::Exp => x.exp(),
                UnaryOp::Log => x.ln(),
                UnaryOp::Log10 => x.log10(),
                UnaryOp::Sin => x.sin(),
                UnaryOp::Cos => x.cos(),
                UnaryOp::Tan => x.tan(),
                UnaryOp::Asin => x.asin(),
                UnaryOp::Acos => x.acos(),
                UnaryOp::Atan => x.atan(),
                UnaryOp::Sinh => x.sinh(),
                UnaryOp::Cosh => x.cosh(),
                UnaryOp::Tanh => x.tanh(),
                UnaryOp::Special(s) => s.$special(x),
                UnaryOp::Floor => x.floor(),
                UnaryOp::Ceil => x.ceil(),
                UnaryOp::Trunc => x.trunc(),
                UnaryOp::Round => x.round(),
                // Not a float operation (the verifier rejects it).
                UnaryOp::Not => x,
            }
        }

        fn $binary(op: BinaryOp, a: $t, b: $t) -> $t {
            match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Pow => a.powf(b),
                BinaryOp::Min => {
                    if a.is_nan() || b < a {
                        b
                    } else {
                        a
                    }
                }
                BinaryOp::Max => {
                    if a.is_nan() || b > a {
                        b
                    } else {
                        a
                    }
                }
                BinaryOp::Atan2 => a.atan2(b),
                BinaryOp::Sign => a.abs().copysign(b),
                BinaryOp::Dim => $binary(BinaryOp::Max, a - b, 0.0),
                BinaryOp::Mod => a % b,
                BinaryOp::Modulo => {
                    let r = a % b;
                    if r != 0.0 && (r < 0.0) != (b < 0.0) {
                        r + b
                    } else {
                        r
                    }
                }
                // Not float operations (PowI has its own function).
                BinaryOp::PowI | BinaryOp::And | BinaryOp::Or | BinaryOp::Eqv | BinaryOp::Neqv => a,
            }
        }

        /// `x ** n` by repeated squaring, exactly as documented on
        /// `BinaryOp::PowI`.
        fn $powi(x: $t, n: i64) -> $t {
            let mut m = n.unsigned_abs();
            let mut r: $t = 1.0;
            let mut p = x;
            loop {
                if m & 1 == 1 {
                    r *= p;
                }
                m >>= 1;
                if m == 0 {
                    break;
                }
                p *= p;
            }
            if n < 0 {
                1.0 / r
            } else {
                r
            }
        }
    };
}

float_ops!(unary_f32, binary_f32, powi_f32, f32, f32);
float_ops!(unary_f64, binary_f64, powi_f64, f64, f64);

macro_rules! int_binary {
    ($name:ident, $t:ty) => {
        /// An integer binary operation; `Err` is a division by zero.
        fn $name(op: BinaryOp, a: $t, b: $t) -> Result<$t, RuntimeErrorKind> {
            let nonzero = |b: $t| {
                if b == 0 {
                    Err(RuntimeErrorKind::DivideByZero)
                } else {
                    Ok(b)
                }
            };
            Ok(match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Div => a.wrapping_div(nonzero(b)?),
                BinaryOp::Pow => {
                    if b < 0 {
                        match a {
                            0 => return Err(RuntimeErrorKind::DivideByZero),
                            1 => 1,
                            -1 if b % 2 == 0 => 1,
                            -1 => -1,
                            _ => 0,
                        }
                    } else {
                        let mut m = b as u64;
                        let (mut r, mut p): ($t, $t) = (1, a);
                        loop {
                            if m & 1 == 1 {
                                r = r.wrapping_mul(p);
                            }
                            m >>= 1;
                            if m == 0 {
                                break;
                            }
                            p = p.wrapping_mul(p);
                        }
                        r
                    }
                }
                BinaryOp::Min => a.min(b),
                BinaryOp::Max => a.max(b),
                BinaryOp::Sign => {
                    if b >= 0 {
                        a.wrapping_abs()
                    } else {
                        a.wrapping_abs().wrapping_neg()
                    }
                }
                BinaryOp::Dim => a.wrapping_sub(b).max(0),
                BinaryOp::Mod => a.wrapping_rem(nonzero(b)?),
                BinaryOp::Modulo => {
                    let r = a.wrapping_rem(nonzero(b)?);
                    if r != 0 && (r < 0) != (b < 0) {
                        r.wrapping_add(b)
                    } else {
                        r
                    }
                }
                // Not integer operations (the verifier rejects them).
                BinaryOp::PowI
                | BinaryOp::Atan2
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Eqv
                | BinaryOp::Neqv => a,
            })
        }
    };
}

int_binary!(binary_i32, i32);
int_binary!(binary_i64, i64);

fn compare<T: PartialOrd>(op: CmpOp, a: T, b: T) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

fn round_float(x: f64, rounding: Rounding) -> f64 {
    match rounding {
        Rounding::Trunc => x.trunc(),
        Rounding::Nearest => x.round(),
        Rounding::Floor => x.floor(),
        Rounding::Ceil => x.ceil(),
    }
}

/// `Inst::Convert` of the value `bits` of type `from` to type `to`.
fn convert(bits: u64, from: Type, to: Type, rounding: Rounding) -> u64 {
    match (from, to) {
        (Type::F32 | Type::F64, Type::I32 | Type::I64) => {
            let x = if from == Type::F32 {
                dec_f32(bits) as f64
            } else {
                dec_f64(bits)
            };
            let r = round_float(x, rounding);
            // `as` saturates and maps NaN to 0.
            if to == Type::I32 {
                enc_i32(r as i32)
            } else {
                enc_int(r as i64)
            }
        }
        (Type::F32, Type::F64) => enc_f64(dec_f32(bits) as f64),
        (Type::F64, Type::F32) => enc_f32(dec_f64(bits) as f32),
        (Type::I32 | Type::I64 | Type::Bool, Type::F32) => enc_f32(dec_int(bits) as f32),
        (Type::I32 | Type::I64 | Type::Bool, Type::F64) => enc_f64(dec_int(bits) as f64),
        (Type::I32 | Type::I64 | Type::Bool, _) => enc_int_as(to, dec_int(bits)),
        _ => bits,
    }
}

// ----- memory -------------------------------------------------------------------

/// Reads storage unit `i` of a buffer as an encoded value.
fn read_unit(buffer: &Buffer, i: usize) -> u64 {
    match buffer {
        Buffer::F32(v) => enc_f32(v[i]),
        Buffer::F64(v) => enc_f64(v[i]),
        Buffer::I32(v) => enc_i32(v[i]),
        Buffer::I64(v) => enc_int(v[i]),
        Buffer::Bool(v) => enc_bool(v[i] != 0),
        Buffer::Char(v) => v[i] as u64,
    }
}

/// Writes an encoded value into storage unit `i` of a buffer.
fn write_unit(buffer: &mut Buffer, i: usize, bits: u64) {
    match buffer {
        Buffer::F32(v) => v[i] = dec_f32(bits),
        Buffer::F64(v) => v[i] = dec_f64(bits),
        Buffer::I32(v) => v[i] = dec_int(bits) as i32,
        Buffer::I64(v) => v[i] = dec_int(bits),
        Buffer::Bool(v) => v[i] = (bits != 0) as u8,
        Buffer::Char(v) => v[i] = bits as u8,
    }
}

/// A zeroed buffer of `units` storage units of `ty` holding, first, the
/// encoded value `bits`.
fn temporary(ty: Type, bits: u64) -> Buffer {
    let mut b = Buffer::zeros(ty, 1);
    write_unit(&mut b, 0, bits);
    b
}

fn const_bits(c: Const, ty: Type) -> u64 {
    match c {
        Const::Float(x) => enc_float_as(ty, x),
        Const::Int(i) => enc_int_as(ty, i),
        Const::Bool(b) => enc_bool(b),
        Const::Char(c) => c as u64,
    }
}

impl<'m> Interpreter<'m> {
    /// An interpreter for `module`, its globals initialised from
    /// `Global::init`, bounds checks on, stacks empty.
    pub fn new(module: &'m Module) -> Interpreter<'m> {
        let slots = module
            .globals
            .iter()
            .map(|g| {
                let units = usize::try_from(g.len().max(0)).unwrap_or(0).saturating_mul(
                    if g.ty == Type::Char {
                        usize::try_from(g.char_len.max(0)).unwrap_or(0)
                    } else {
                        1
                    },
                );
                let mut buffer = Buffer::zeros(g.ty, units);
                for (i, c) in g.init.iter().take(units).enumerate() {
                    write_unit(&mut buffer, i, const_bits(*c, g.ty));
                }
                buffer
            })
            .collect();
        Interpreter {
            module,
            bounds_checks: true,
            slots,
            views: Vec::new(),
            dims: Vec::new(),
            values: Vec::new(),
            arg_locs: Vec::new(),
            char_scratch: Vec::new(),
            value_stack: Vec::new(),
            integer_stack: Vec::new(),
            control_stack: Vec::new(),
            stack_peaks: [0; 3],
            activations: Vec::new(),
            io: IoState::default(),
        }
    }

    /// Sends the program's output to, and takes its input from, `channels`
    /// (standard output and input by default).
    pub fn set_io_channels(&mut self, channels: &Channels) {
        self.io.set_channels(channels);
    }

    /// Keeps the records of kept ALLOCATABLE module and SAVE arrays in
    /// `kept` (shared with the other calls of the program).
    pub fn set_kept(&mut self, kept: &Kept) {
        self.io.set_kept(kept);
    }

    /// Turns subscript checks on `LoadElem` / `StoreElem` / `Elem` arguments
    /// on or off (accesses outside a variable's storage are errors either
    /// way).
    pub fn set_bounds_checks(&mut self, on: bool) {
        self.bounds_checks = on;
    }

    /// Number of entries on a runtime stack.
    pub fn stack_len(&self, stack: StackKind) -> usize {
        match stack {
            StackKind::Value => self.value_stack.len(),
            StackKind::Integer => self.integer_stack.len(),
            StackKind::Control => self.control_stack.len(),
        }
    }

    /// The largest number of entries a runtime stack has held since the
    /// interpreter was created or its stacks cleared.
    pub fn stack_peak(&self, stack: StackKind) -> usize {
        self.stack_peaks[stack as usize].max(self.stack_len(stack))
    }

    /// Empties the three runtime stacks (and forgets their peaks).
    pub fn clear_stacks(&mut self) {
        self.value_stack.clear();
        self.integer_stack.clear();
        self.control_stack.clear();
        self.stack_peaks = [0; 3];
    }

    /// A copy of the three runtime stacks, for [`Interpreter::restore_stacks`]
    /// (several reverse sweeps over one recorded tape).
    pub fn save_stacks(&self) -> SavedStacks {
        SavedStacks {
            value: self.value_stack.clone(),
            integer: self.integer_stack.clone(),
            control: self.control_stack.clone(),
        }
    }

    /// Replaces the three runtime stacks by a saved copy.
    pub fn restore_stacks(&mut self, saved: &SavedStacks) {
        self.value_stack.clone_from(&saved.value);
        self.integer_stack.clone_from(&saved.integer);
        self.control_stack.clone_from(&saved.control);
    }

    /// The current storage of a global (column-major; bytes for characters).
    pub fn global(&self, global: crate::ir::GlobalId) -> Option<&Buffer> {
        self.slots.get(global.index())
    }

    /// Overwrites the storage of a global (same type and length as the
    /// global's storage).
    pub fn set_global(&mut self, global: crate::GlobalId, value: &Buffer) -> Result<(), String> {
        let slot = self
            .slots
            .get_mut(global.index())
            .filter(|_| global.index() < self.module.globals.len())
            .ok_or("no such global")?;
        if slot.ty() != value.ty() || slot.len() != value.len() {
            return Err(format!(
                "global `{}` needs {} {} elements",
                self.module.globals[global.index()].name,
                slot.len(),
                slot.ty().name()
            ));
        }
        slot.clone_from(value);
        Ok(())
    }

    /// Calls a procedure with one buffer per parameter (checked against the
    /// declared types and shapes first). Arguments are updated in place.
    pub fn call(&mut self, proc: ProcId, args: &mut [Buffer]) -> Result<(), RuntimeError> {
        {
            let slots = &self.slots;
            resolve_arguments_with(self.module, proc, args, &mut |g, at| {
                slots.get(g.index()).map_or(0, |s| int_at(s, at))
            })?;
        }
        let slots_base = self.slots.len();
        let args_base = self.arg_locs.len();
        for arg in args.iter_mut() {
            let units = arg.len();
            let empty = Buffer::zeros(arg.ty(), 0);
            self.arg_locs.push(Loc {
                slot: self.slots.len(),
                offset: 0,
                units,
                view: None,
            });
            self.slots.push(std::mem::replace(arg, empty));
        }
        let result = self.invoke(proc, args_base);
        self.arg_locs.truncate(args_base);
        for (arg, slot) in args.iter_mut().zip(self.slots.drain(slots_base..)) {
            *arg = slot;
        }
        result
    }

    fn error(
        &self,
        proc: ProcId,
        kind: RuntimeErrorKind,
        span: Span,
        var: Option<&str>,
        detail: String,
    ) -> RuntimeError {
        RuntimeError {
            kind,
            proc,
            span,
            var: var.map(str::to_string),
            detail,
        }
    }

    /// Runs `proc` with its arguments at `arg_locs[args_base..]`, and
    /// everything it calls, iteratively (an explicit activation stack, so
    /// deep recursion in the interpreted program cannot overflow the host's
    /// stack).
    fn invoke(&mut self, pid: ProcId, args_base: usize) -> Result<(), RuntimeError> {
        let mut acts = std::mem::take(&mut self.activations);
        let outer = acts.len();
        let (slots_len, arg_locs_len) = (self.slots.len(), self.arg_locs.len());
        let (views_len, dims_len, values_len) =
            (self.views.len(), self.dims.len(), self.values.len());
        let result = self
            .push_activation(
                &mut acts,
                pid,
                args_base,
                Span::default(),
                slots_len,
                arg_locs_len,
            )
            .and_then(|()| self.drive(&mut acts, outer));
        // On success every activation has been popped already; on failure
        // drop them all at once.
        acts.truncate(outer);
        self.activations = acts;
        self.slots.truncate(slots_len);
        self.arg_locs.truncate(arg_locs_len);
        self.views.truncate(views_len);
        self.dims.truncate(dims_len);
        self.values.truncate(values_len);
        result
    }

    /// Starts an activation of `pid` whose arguments are at
    /// `arg_locs[args_base..]`; `call_slots` and `call_args` are the lengths
    /// of `slots` and `arg_locs` to restore when it returns.
    fn push_activation(
        &mut self,
        acts: &mut Vec<Activation<'m>>,
        pid: ProcId,
        args_base: usize,
        call_span: Span,
        call_slots: usize,
        call_args: usize,
    ) -> Result<(), RuntimeError> {
        let module = self.module;
        let proc = &module.procs[pid.index()];
        if acts.len() >= MAX_CALL_DEPTH {
            return Err(self.error(
                pid,
                RuntimeErrorKind::CallDepthExceeded,
                call_span,
                None,
                format!("more than {MAX_CALL_DEPTH} nested calls"),
            ));
        }
        let frame = Frame {
            proc: pid,
            views_base: self.views.len(),
            values_base: self.values.len(),
        };
        let dims_base = self.dims.len();
        self.enter(proc, frame, args_base)?;
        acts.push(Activation {
            proc,
            frame,
            dims_base,
            block: Proc::ENTRY,
            pos: 0,
            call_slots,
            call_args,
        });
        Ok(())
    }

    /// Runs activations until the one at depth `outer` returns.
    fn drive(&mut self, acts: &mut Vec<Activation<'m>>, outer: usize) -> Result<(), RuntimeError> {
        while let Some(act) = acts.last_mut() {
            let (proc, frame) = (act.proc, act.frame);
            let data = &proc.blocks[act.block.index()];
            if let Some(&v) = data.insts.get(act.pos) {
                act.pos += 1;
                let inst = &proc.insts[v.index()];
                if let Inst::Call(callee, args) = &inst.kind {
                    let (call_slots, call_args) = (self.slots.len(), self.arg_locs.len());
                    let formals = &self.module.procs[callee.index()];
                    self.pass_arguments(proc, frame, formals, args, inst.span)?;
                    self.push_activation(
                        acts, *callee, call_args, inst.span, call_slots, call_args,
                    )?;
                } else {
                    self.exec(proc, frame, v)?;
                }
                continue;
            }
            act.pos = 0;
            act.block = match &data.term {
                Terminator::Jump(b) => *b,
                Terminator::Branch {
                    cond,
                    then_dest,
                    else_dest,
                } => {
                    if self.get(frame, *cond) != 0 {
                        *then_dest
                    } else {
                        *else_dest
                    }
                }
                Terminator::Switch {
                    value,
                    cases,
                    default,
                } => {
                    let key = dec_int(self.get(frame, *value));
                    cases
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map_or(*default, |(_, b)| *b)
                }
                Terminator::Return => {
                    let done = *act;
                    acts.pop();
                    self.views.truncate(done.frame.views_base);
                    self.dims.truncate(done.dims_base);
                    self.values.truncate(done.frame.values_base);
                    self.slots.truncate(done.call_slots);
                    self.arg_locs.truncate(done.call_args);
                    if acts.len() == outer {
                        return Ok(());
                    }
                    continue;
                }
                Terminator::Fail(kind) => {
                    return Err(self.error(
                        frame.proc,
                        kind.clone(),
                        data.term_span,
                        None,
                        String::new(),
                    ))
                }
            };
        }
        Ok(())
    }

    /// Binds every variable of a new activation to storage and evaluates its
    /// shape.
    fn enter(
        &mut self,
        proc: &'m Proc,
        frame: Frame,
        args_base: usize,
    ) -> Result<(), RuntimeError> {
        let views_base = self.views.len();
        for var in &proc.vars {
            let loc = match var.storage {
                Storage::Param(i) => self.arg_locs.get(args_base + i as usize).copied(),
                Storage::Global(g, at) => {
                    let offset = global_units(self.module, g, at);
                    Some(Loc {
                        slot: g.index(),
                        offset,
                        units: self
                            .slots
                            .get(g.index())
                            .map_or(0, |s| s.len().saturating_sub(offset)),
                        view: None,
                    })
                }
                Storage::AllocatableParam(i) => {
                    // The caller's array: this view stands for its view.
                    let alias = self
                        .arg_locs
                        .get(args_base + i as usize)
                        .and_then(|l| l.view);
                    let Some(at) = alias else {
                        return Err(self.error(
                            frame.proc,
                            RuntimeErrorKind::ArgumentSize,
                            proc.span,
                            Some(&var.name),
                            format!("`{}` is not given an ALLOCATABLE array", var.name),
                        ));
                    };
                    let mut view = self.views[at];
                    view.alias = Some(at);
                    self.views.push(view);
                    continue;
                }
                Storage::Local | Storage::Allocatable => None,
            };
            let shape = {
                let (slots, arg_locs) = (&self.slots, &self.arg_locs);
                let mut read = |v: VarId| {
                    let loc = match proc.vars.get(v.index()).map(|v| v.storage) {
                        Some(Storage::Param(i)) => arg_locs.get(args_base + i as usize).copied(),
                        Some(Storage::Global(g, at)) => Some(Loc {
                            slot: g.index(),
                            offset: global_units(self.module, g, at),
                            units: 1,
                            view: None,
                        }),
                        _ => None,
                    };
                    match loc.and_then(|l| slots.get(l.slot).map(|s| (s, l.offset))) {
                        Some((Buffer::I32(s), o)) => s.get(o).map_or(0, |&x| x as i64),
                        Some((Buffer::I64(s), o)) => s.get(o).copied().unwrap_or(0),
                        _ => 0,
                    }
                };
                let available = match var.storage {
                    Storage::Local | Storage::Allocatable | Storage::AllocatableParam(_) => None,
                    _ => Some(loc.map_or(0, |l| l.units)),
                };
                // The host's arguments were checked in full before the call;
                // a call inside the module may pass a numeric array less
                // storage than declared (Fortran 77), checked per element.
                let short_ok = may_be_short(var);
                eval_var_shape_with(var, &mut read, available, short_ok).map_err(|e| {
                    self.error(frame.proc, e.kind, proc.span, Some(&var.name), e.detail)
                })?
            };
            let allocatable = var.storage == Storage::Allocatable;
            let (loc, shape) = if allocatable {
                // Unallocated: no storage, extents 0, lower bounds 1.
                let mut shape = shape;
                shape.dims.iter_mut().for_each(|d| {
                    *d = DimShape {
                        lower: 1,
                        extent: 0,
                    }
                });
                (None, shape)
            } else {
                (loc, shape)
            };
            let loc = match loc {
                Some(loc) => loc,
                None if allocatable => {
                    self.slots.push(Buffer::zeros(var.ty, 0));
                    Loc {
                        slot: self.slots.len() - 1,
                        offset: 0,
                        units: 0,
                        view: None,
                    }
                }
                None if shape.units() > MAX_LOCAL_UNITS => {
                    return Err(self.error(
                        frame.proc,
                        RuntimeErrorKind::ArgumentSize,
                        proc.span,
                        Some(&var.name),
                        format!(
                            "local `{}` would need {} units, more than the interpreter's limit of {MAX_LOCAL_UNITS}",
                            var.name,
                            shape.units()
                        ),
                    ))
                }
                None => {
                    self.slots.push(Buffer::zeros(var.ty, shape.units()));
                    Loc {
                        slot: self.slots.len() - 1,
                        offset: 0,
                        units: shape.units(),
                        view: None,
                    }
                }
            };
            self.views.push(View {
                loc,
                declared: shape.units(),
                char_len: shape.char_len,
                dims_start: self.dims.len(),
                rank: shape.dims.len(),
                allocated: !allocatable,
                alias: None,
            });
            self.dims.extend_from_slice(&shape.dims);
        }
        // The zero fill on entry (`Proc::zeroed_params`): the declared
        // storage, or the shorter storage the caller gave.
        for &z in &proc.zeroed_params {
            let view = self.views[views_base + z.index()];
            let n = view.declared.min(view.loc.units);
            let from = view.loc.offset;
            match self.slots.get_mut(view.loc.slot) {
                Some(Buffer::F64(v)) => v.get_mut(from..from + n).map(|v| v.fill(0.0)),
                Some(Buffer::F32(v)) => v.get_mut(from..from + n).map(|v| v.fill(0.0)),
                _ => None,
            };
        }
        self.values.resize(frame.values_base + proc.insts.len(), 0);
        Ok(())
    }

    fn view(&self, frame: Frame, var: VarId) -> View {
        self.views[self.view_index(frame, var)]
    }

    /// The index in `views` of the view of `var`: the caller's for an
    /// array passed by descriptor.
    fn view_index(&self, frame: Frame, var: VarId) -> usize {
        let i = frame.views_base + var.index();
        self.views[i].alias.unwrap_or(i)
    }

    fn get(&self, frame: Frame, v: Value) -> u64 {
        self.values[frame.values_base + v.index()]
    }

    fn set(&mut self, frame: Frame, v: Value, bits: u64) {
        self.values[frame.values_base + v.index()] = bits;
    }

    /// The element offset (in elements) of `var(idx...)`, checked against the
    /// bounds (when on) and the storage (always).
    fn elem_offset(
        &self,
        frame: Frame,
        proc: &Proc,
        var: VarId,
        idx: &[Value],
        span: Span,
    ) -> Result<usize, RuntimeError> {
        let view = self.view(frame, var);
        if !view.allocated {
            return Err(self.not_allocated(frame, proc, var, span));
        }
        let dims = &self.dims[view.dims_start..view.dims_start + view.rank];
        let mut offset: i64 = 0;
        let mut stride: i64 = 1;
        for (k, (&i, dim)) in idx.iter().zip(dims).enumerate() {
            let s = dec_int(self.get(frame, i));
            if self.bounds_checks && (s < dim.lower || s > dim.upper()) {
                return Err(self.error(
                    frame.proc,
                    RuntimeErrorKind::IndexOutOfBounds,
                    span,
                    Some(&proc.vars[var.index()].name),
                    format!(
                        "index {s} outside {}:{} in dimension {}",
                        dim.lower,
                        dim.upper(),
                        k + 1
                    ),
                ));
            }
            offset = offset.wrapping_add(s.wrapping_sub(dim.lower).wrapping_mul(stride));
            stride = stride.wrapping_mul(dim.extent);
        }
        let storage_elems = view.loc.units / view.char_len.max(1);
        match usize::try_from(offset) {
            Ok(o) if o < storage_elems => Ok(o),
            _ => Err(self.error(
                frame.proc,
                RuntimeErrorKind::IndexOutOfBounds,
                span,
                Some(&proc.vars[var.index()].name),
                format!("element offset {offset} outside the storage of {storage_elems} elements"),
            )),
        }
    }

    /// The storage a [`CallArg::Slice`] passes: `n` elements from element
    /// `idx` of `var` (none, unchecked, when `n` is 0 or less).
    fn slice_loc(
        &self,
        frame: Frame,
        proc: &Proc,
        var: VarId,
        idx: &[Value],
        n: Value,
        span: Span,
    ) -> Result<Loc, RuntimeError> {
        let view = self.view(frame, var);
        if !view.allocated {
            return Err(self.not_allocated(frame, proc, var, span));
        }
        let n = dec_int(self.get(frame, n));
        if n <= 0 {
            return Ok(Loc {
                units: 0,
                ..view.loc
            });
        }
        let e = self.elem_offset(frame, proc, var, idx, span)?;
        let per = view.char_len.max(1);
        let storage = view.loc.units.min(view.declared) / per;
        let end = (e as i64).saturating_add(n);
        if end > storage as i64 {
            return Err(self.error(
                frame.proc,
                RuntimeErrorKind::IndexOutOfBounds,
                span,
                Some(&proc.vars[var.index()].name),
                format!(
                    "element offset {} outside the storage of {storage} elements",
                    end - 1
                ),
            ));
        }
        Ok(Loc {
            slot: view.loc.slot,
            offset: view.loc.offset + e * per,
            units: n as usize * per,
            view: None,
        })
    }

    /// The error of a reference to an unallocated array.
    fn not_allocated(&self, frame: Frame, proc: &Proc, var: VarId, span: Span) -> RuntimeError {
        let name = &proc.vars[var.index()].name;
        self.error(
            frame.proc,
            RuntimeErrorKind::NotAllocated,
            span,
            Some(name),
            format!("`{name}` is not allocated"),
        )
    }

    /// Runs [`Inst::Allocate`]: fresh zeroed storage and the bounds given.
    fn allocate(
        &mut self,
        frame: Frame,
        proc: &Proc,
        var: VarId,
        bounds: &[(Value, Value)],
        span: Span,
    ) -> Result<(), RuntimeError> {
        let view = self.view(frame, var);
        let name = &proc.vars[var.index()].name;
        if view.allocated {
            return Err(self.error(
                frame.proc,
                RuntimeErrorKind::AlreadyAllocated,
                span,
                Some(name),
                format!("`{name}` is already allocated"),
            ));
        }
        let mut units: Option<usize> = Some(1);
        for (k, &(l, u)) in bounds.iter().enumerate() {
            let (lower, upper) = (dec_int(self.get(frame, l)), dec_int(self.get(frame, u)));
            let extent = upper.wrapping_sub(lower).wrapping_add(1).max(0);
            units = units.and_then(|n| n.checked_mul(usize::try_from(extent).ok()?));
            self.dims[view.dims_start + k] = DimShape { lower, extent };
        }
        let units = match units {
            Some(n) if n <= MAX_LOCAL_UNITS => n,
            _ => {
                // Leave the array unallocated, with extents 0.
                for k in 0..view.rank {
                    self.dims[view.dims_start + k] = DimShape {
                        lower: 1,
                        extent: 0,
                    };
                }
                return Err(self.error(
                    frame.proc,
                    RuntimeErrorKind::TooLarge,
                    span,
                    Some(name),
                    format!("`{name}` would need more than {MAX_LOCAL_UNITS} elements"),
                ));
            }
        };
        self.slots[view.loc.slot] = Buffer::zeros(proc.vars[var.index()].ty, units);
        let at = self.view_index(frame, var);
        let v = &mut self.views[at];
        v.loc.units = units;
        v.declared = units;
        v.allocated = true;
        Ok(())
    }

    /// Runs [`Inst::Deallocate`].
    fn deallocate(
        &mut self,
        frame: Frame,
        proc: &Proc,
        var: VarId,
        span: Span,
    ) -> Result<(), RuntimeError> {
        let view = self.view(frame, var);
        if !view.allocated {
            return Err(self.not_allocated(frame, proc, var, span));
        }
        self.slots[view.loc.slot] = Buffer::zeros(proc.vars[var.index()].ty, 0);
        for k in 0..view.rank {
            self.dims[view.dims_start + k] = DimShape {
                lower: 1,
                extent: 0,
            };
        }
        let at = self.view_index(frame, var);
        let v = &mut self.views[at];
        v.loc.units = 0;
        v.declared = 0;
        v.allocated = false;
        Ok(())
    }

    /// Resolves a character reference, including its substring.
    /// Stores `text` into the character data `r` refers to, blank-padded
    /// or truncated to its length.
    fn fill_chars(
        &mut self,
        frame: Frame,
        proc: &'m Proc,
        r: &'m CharRef,
        span: Span,
        text: &[u8],
    ) -> Result<(), RuntimeError> {
        if let CharLoc::Slot { slot, start, len } = self.char_loc(frame, proc, r, span)? {
            if let Buffer::Char(bytes) = &mut self.slots[slot] {
                if let Some(target) = bytes.get_mut(start..start + len) {
                    for (i, t) in target.iter_mut().enumerate() {
                        *t = text.get(i).copied().unwrap_or(b' ');
                    }
                }
            }
        }
        Ok(())
    }

    fn char_loc(
        &self,
        frame: Frame,
        proc: &'m Proc,
        r: &'m CharRef,
        span: Span,
    ) -> Result<CharLoc<'m>, RuntimeError> {
        let (base, name) = match &r.base {
            CharBase::Literal(bytes) => (CharLoc::Literal(bytes), None),
            CharBase::Var { var, index } => {
                let view = self.view(frame, *var);
                let elem = if index.is_empty() {
                    0
                } else {
                    self.elem_offset(frame, proc, *var, index, span)?
                };
                let len = view.char_len.min(view.loc.units);
                (
                    CharLoc::Slot {
                        slot: view.loc.slot,
                        start: view.loc.offset + elem * view.char_len,
                        len,
                    },
                    Some(proc.vars[var.index()].name.as_str()),
                )
            }
        };
        if r.start.is_none() && r.end.is_none() {
            return Ok(base);
        }
        let len = match base {
            CharLoc::Slot { len, .. } => len,
            CharLoc::Literal(b) => b.len(),
        } as i64;
        let s = r.start.map_or(1, |v| dec_int(self.get(frame, v)));
        let e = r.end.map_or(len, |v| dec_int(self.get(frame, v)));
        if e < s {
            return Ok(CharLoc::Literal(&[]));
        }
        if s < 1 || e > len {
            return Err(self.error(
                frame.proc,
                RuntimeErrorKind::SubstringOutOfRange,
                span,
                name,
                format!("substring {s}:{e} of a string of length {len}"),
            ));
        }
        let (from, count) = ((s - 1) as usize, (e - s + 1) as usize);
        Ok(match base {
            CharLoc::Slot { slot, start, .. } => CharLoc::Slot {
                slot,
                start: start + from,
                len: count,
            },
            CharLoc::Literal(b) => CharLoc::Literal(&b[from..from + count]),
        })
    }

    fn char_bytes(&self, loc: CharLoc<'m>) -> &[u8] {
        match loc {
            CharLoc::Literal(b) => b,
            CharLoc::Slot { slot, start, len } => match &self.slots[slot] {
                Buffer::Char(v) => v.get(start..start + len).unwrap_or(&[]),
                _ => &[],
            },
        }
    }

    fn value_type(proc: &Proc, v: Value) -> Type {
        proc.insts[v.index()].ty.unwrap_or(Type::I64)
    }

    /// Executes one instruction.
    fn exec(&mut self, proc: &'m Proc, frame: Frame, v: Value) -> Result<(), RuntimeError> {
        let data = &proc.insts[v.index()];
        let ty = data.ty.unwrap_or(Type::I64);
        let span = data.span;
        let bits = match &data.kind {
            Inst::Const(c) => const_bits(*c, ty),
            Inst::Load(var) => {
                let loc = self.view(frame, *var).loc;
                read_unit(&self.slots[loc.slot], loc.offset)
            }
            Inst::Store(var, x) => {
                let loc = self.view(frame, *var).loc;
                let bits = self.get(frame, *x);
                write_unit(&mut self.slots[loc.slot], loc.offset, bits);
                return Ok(());
            }
            Inst::LoadElem(var, idx) => {
                let o = self.elem_offset(frame, proc, *var, idx, span)?;
                let loc = self.view(frame, *var).loc;
                read_unit(&self.slots[loc.slot], loc.offset + o)
            }
            Inst::StoreElem(var, idx, x) => {
                let o = self.elem_offset(frame, proc, *var, idx, span)?;
                let loc = self.view(frame, *var).loc;
                let bits = self.get(frame, *x);
                write_unit(&mut self.slots[loc.slot], loc.offset + o, bits);
                return Ok(());
            }
            Inst::Unary(op, x) => {
                let a = self.get(frame, *x);
                match ty {
                    Type::F32 => enc_f32(unary_f32(*op, dec_f32(a))),
                    Type::F64 => enc_f64(unary_f64(*op, dec_f64(a))),
                    Type::Bool => enc_bool(a == 0),
                    Type::I32 => {
                        let i = dec_int(a) as i32;
                        enc_i32(match op {
                            UnaryOp::Neg => i.wrapping_neg(),
                            UnaryOp::Abs => i.wrapping_abs(),
                            _ => i,
                        })
                    }
                    _ => {
                        let i = dec_int(a);
                        enc_int(match op {
                            UnaryOp::Neg => i.wrapping_neg(),
                            UnaryOp::Abs => i.wrapping_abs(),
                            _ => i,
                        })
                    }
                }
            }
            Inst::Binary(op, x, y) => {
                let (a, b) = (self.get(frame, *x), self.get(frame, *y));
                let operand_ty = Self::value_type(proc, *x);
                let int_result = |r: Result<u64, RuntimeErrorKind>| {
                    r.map_err(|kind| {
                        self.error(frame.proc, kind, span, None, format!("{op:?} by zero"))
                    })
                };
                match (operand_ty, op) {
                    (Type::F32, BinaryOp::PowI) => enc_f32(powi_f32(dec_f32(a), dec_int(b))),
                    (Type::F64, BinaryOp::PowI) => enc_f64(powi_f64(dec_f64(a), dec_int(b))),
                    (Type::F32, _) => enc_f32(binary_f32(*op, dec_f32(a), dec_f32(b))),
                    (Type::F64, _) => enc_f64(binary_f64(*op, dec_f64(a), dec_f64(b))),
                    (Type::I32, _) => int_result(
                        binary_i32(*op, dec_int(a) as i32, dec_int(b) as i32).map(enc_i32),
                    )?,
                    (Type::I64, _) => {
                        int_result(binary_i64(*op, dec_int(a), dec_int(b)).map(enc_int))?
                    }
                    _ => {
                        let (p, q) = (a != 0, b != 0);
                        enc_bool(match op {
                            BinaryOp::And => p && q,
                            BinaryOp::Or => p || q,
                            BinaryOp::Eqv => p == q,
                            _ => p != q,
                        })
                    }
                }
            }
            Inst::Cmp(op, x, y) => {
                let (a, b) = (self.get(frame, *x), self.get(frame, *y));
                enc_bool(match Self::value_type(proc, *x) {
                    Type::F32 => compare(*op, dec_f32(a), dec_f32(b)),
                    Type::F64 => compare(*op, dec_f64(a), dec_f64(b)),
                    Type::Bool => compare(*op, a, b),
                    _ => compare(*op, dec_int(a), dec_int(b)),
                })
            }
            Inst::Convert(x, rounding) => convert(
                self.get(frame, *x),
                Self::value_type(proc, *x),
                ty,
                *rounding,
            ),
            Inst::Select(c, x, y) => {
                if self.get(frame, *c) != 0 {
                    self.get(frame, *x)
                } else {
                    self.get(frame, *y)
                }
            }
            Inst::DimLower(var, d) | Inst::DimExtent(var, d) => {
                let view = self.view(frame, *var);
                let dim = if (*d as usize) < view.rank {
                    self.dims[view.dims_start + *d as usize]
                } else {
                    DimShape {
                        lower: 1,
                        extent: 1,
                    }
                };
                enc_int(if matches!(data.kind, Inst::DimLower(..)) {
                    dim.lower
                } else {
                    dim.extent
                })
            }
            // Calls are run by `drive`, which owns the activation stack.
            Inst::Call(..) => return Ok(()),
            Inst::Allocate(var, bounds) => return self.allocate(frame, proc, *var, bounds, span),
            Inst::Deallocate(var) => return self.deallocate(frame, proc, *var, span),
            Inst::Allocated(var) => enc_bool(self.view(frame, *var).allocated),
            Inst::CharAssign(dst, src) => {
                let dst = self.char_loc(frame, proc, dst, span)?;
                let src = self.char_loc(frame, proc, src, span)?;
                let mut scratch = std::mem::take(&mut self.char_scratch);
                scratch.clear();
                scratch.extend_from_slice(self.char_bytes(src));
                if let CharLoc::Slot { slot, start, len } = dst {
                    scratch.resize(len, b' ');
                    if let Buffer::Char(bytes) = &mut self.slots[slot] {
                        if let Some(target) = bytes.get_mut(start..start + len) {
                            target.copy_from_slice(&scratch);
                        }
                    }
                }
                self.char_scratch = scratch;
                return Ok(());
            }
            Inst::CharLen(a) => {
                let a = self.char_loc(frame, proc, a, span)?;
                enc_int(self.char_bytes(a).len() as i64)
            }
            Inst::CharIndex(a, b) => {
                let a = self.char_loc(frame, proc, a, span)?;
                let b = self.char_loc(frame, proc, b, span)?;
                enc_int(crate::chars::index(self.char_bytes(a), self.char_bytes(b)))
            }
            Inst::CharSearch(op, back, a, b) => {
                let a = self.char_loc(frame, proc, a, span)?;
                let b = self.char_loc(frame, proc, b, span)?;
                let (a, b) = (self.char_bytes(a), self.char_bytes(b));
                enc_int(crate::chars::search(*op, *back, a, b))
            }
            Inst::Io(op) => {
                let io_error = |this: &Self, m: String| {
                    this.error(frame.proc, RuntimeErrorKind::Io, span, None, m)
                };
                match op {
                    IoOp::BeginWrite(f) => self.io.begin_write(f.as_deref()),
                    IoOp::Put(x) => {
                        let bits = self.get(frame, *x);
                        let item = match Self::value_type(proc, *x) {
                            Type::F32 => Item::Real(dec_f32(bits) as f64, false),
                            Type::F64 => Item::Real(dec_f64(bits), true),
                            Type::Bool => Item::Logical(bits != 0),
                            t => Item::Int(dec_int(bits), t.size() as u8),
                        };
                        self.io.put(item);
                    }
                    IoOp::PutChar(r) => {
                        let loc = self.char_loc(frame, proc, r, span)?;
                        let bytes = self.char_bytes(loc).to_vec();
                        self.io.put(Item::Char(bytes));
                    }
                    IoOp::EndWrite => self.io.end_write().map_err(|m| io_error(self, m))?,
                    IoOp::BeginRead => self.io.begin_read(),
                    IoOp::EndRead => self.io.end_read(),
                    IoOp::BeginKeep(name) => self.io.begin_keep(name),
                    IoOp::BeginRestore(name) => self.io.begin_restore(name),
                    IoOp::Get => {
                        let kind = match ty {
                            Type::F32 => Item::Real(0.0, false),
                            Type::F64 => Item::Real(0.0, true),
                            Type::Bool => Item::Logical(false),
                            t => Item::Int(0, t.size() as u8),
                        };
                        return match self.io.get(&kind).map_err(|m| io_error(self, m))? {
                            Item::Real(x, _) => {
                                let b = enc_float_as(ty, x);
                                self.set(frame, v, b);
                                Ok(())
                            }
                            Item::Int(i, _) => {
                                let b = enc_int_as(ty, i);
                                self.set(frame, v, b);
                                Ok(())
                            }
                            Item::Logical(l) => {
                                self.set(frame, v, enc_bool(l));
                                Ok(())
                            }
                            Item::Char(_) => Ok(()),
                        };
                    }
                    IoOp::GetChar(r) => {
                        let got = self
                            .io
                            .get(&Item::Char(Vec::new()))
                            .map_err(|m| io_error(self, m))?;
                        if let (Item::Char(text), false) = (got, self.io.failed()) {
                            self.fill_chars(frame, proc, r, span, &text)?;
                        }
                    }
                    IoOp::EndWriteTo(r) => {
                        let len = match self.char_loc(frame, proc, r, span)? {
                            CharLoc::Slot { len, .. } => len,
                            CharLoc::Literal(bytes) => bytes.len(),
                        };
                        let record = self.io.end_write_to(len).map_err(|m| io_error(self, m))?;
                        if let Some(record) = record {
                            self.fill_chars(frame, proc, r, span, &record)?;
                        }
                    }
                    IoOp::BeginReadFrom(r, format) => {
                        let loc = self.char_loc(frame, proc, r, span)?;
                        let text = self.char_bytes(loc).to_vec();
                        self.io
                            .begin_read_from(&text, format.as_deref())
                            .map_err(|m| io_error(self, m))?;
                    }
                    IoOp::CatchErrors => self.io.catch_errors(),
                    IoOp::JoinChars(start) => self.io.join_chars(*start),
                    IoOp::Status => {
                        let status = self.io.status();
                        self.set(frame, v, enc_int_as(ty, status as i64));
                    }
                }
                return Ok(());
            }
            Inst::CharCompare(op, a, b) => {
                let a = self.char_loc(frame, proc, a, span)?;
                let b = self.char_loc(frame, proc, b, span)?;
                let (a, b) = (self.char_bytes(a), self.char_bytes(b));
                let n = a.len().max(b.len());
                let padded = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(b' ');
                let ord = (0..n)
                    .map(|i| padded(a, i).cmp(&padded(b, i)))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal);
                enc_bool(compare(*op, ord, Ordering::Equal))
            }
            Inst::Push(stack, x) => {
                let a = self.get(frame, *x);
                match stack {
                    StackKind::Value => self.value_stack.push(match Self::value_type(proc, *x) {
                        Type::F32 => dec_f32(a) as f64,
                        _ => dec_f64(a),
                    }),
                    StackKind::Integer => self.integer_stack.push(dec_int(a)),
                    StackKind::Control => self.control_stack.push(dec_int(a)),
                }
                let k = *stack as usize;
                self.stack_peaks[k] = self.stack_peaks[k].max(self.stack_len(*stack));
                return Ok(());
            }
            Inst::Pop(stack) => {
                let popped = match stack {
                    StackKind::Value => self.value_stack.pop().map(|x| enc_float_as(ty, x)),
                    StackKind::Integer => self.integer_stack.pop().map(|i| enc_int_as(ty, i)),
                    StackKind::Control => self.control_stack.pop().map(|i| enc_int_as(ty, i)),
                };
                popped.ok_or_else(|| {
                    self.error(
                        frame.proc,
                        RuntimeErrorKind::StackUnderflow,
                        span,
                        None,
                        format!("pop from the empty {stack:?} stack"),
                    )
                })?
            }
        };
        self.set(frame, v, bits);
        Ok(())
    }

    /// Pushes the locations of the actual arguments of a call on
    /// `arg_locs` (value arguments get fresh temporary slots).
    fn pass_arguments(
        &mut self,
        proc: &'m Proc,
        frame: Frame,
        callee: &'m Proc,
        args: &[CallArg],
        span: Span,
    ) -> Result<(), RuntimeError> {
        for (k, arg) in args.iter().enumerate() {
            let by_descriptor = callee
                .params
                .get(k)
                .is_some_and(|&p| matches!(callee.var(p).storage, Storage::AllocatableParam(_)));
            let loc = match arg {
                CallArg::Var(var) if by_descriptor => {
                    let at = self.view_index(frame, *var);
                    Loc {
                        view: Some(at),
                        ..self.views[at].loc
                    }
                }
                CallArg::Var(var) => {
                    let view = self.view(frame, *var);
                    if !view.allocated {
                        return Err(self.not_allocated(frame, proc, *var, span));
                    }
                    Loc {
                        units: view.loc.units.min(view.declared),
                        ..view.loc
                    }
                }
                CallArg::Elem(var, idx) => {
                    let e = self.elem_offset(frame, proc, *var, idx, span)?;
                    let view = self.view(frame, *var);
                    let skip = e * view.char_len;
                    Loc {
                        slot: view.loc.slot,
                        offset: view.loc.offset + skip,
                        units: view.loc.units.min(view.declared).saturating_sub(skip),
                        view: None,
                    }
                }
                CallArg::Slice(var, idx, n) => self.slice_loc(frame, proc, *var, idx, *n, span)?,
                CallArg::Value(x) => {
                    let buffer = temporary(Self::value_type(proc, *x), self.get(frame, *x));
                    self.slots.push(buffer);
                    Loc {
                        slot: self.slots.len() - 1,
                        offset: 0,
                        units: 1,
                        view: None,
                    }
                }
            };
            self.arg_locs.push(loc);
        }
        Ok(())
    }
}

/// The storage units (elements, or bytes for characters) before element
/// `at` of a global: where a view at that element offset starts.
fn global_units(module: &Module, g: crate::ir::GlobalId, at: i64) -> usize {
    let per = module.globals.get(g.index()).map_or(1, |gl| {
        if gl.ty == Type::Char {
            gl.char_len.max(1)
        } else {
            1
        }
    });
    usize::try_from(at.saturating_mul(per)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProcBuilder;
    use crate::ir::{BlockId, Bound, CharBase, Dim, Global, Var};
    use crate::verify::verify_module;

    fn at(line: u32) -> Span {
        Span {
            file: 0,
            line,
            col: 1,
        }
    }

    /// Verifies the module, then calls `proc` on `args`.
    fn run(module: &Module, proc: ProcId, args: &mut [Buffer]) -> Result<(), RuntimeError> {
        verify_module(module).unwrap_or_else(|e| panic!("{e:?}"));
        Interpreter::new(module).call(proc, args)
    }

    /// `do i = 1, n: body(i)`, leaving the builder in the exit block.
    fn counted_loop(b: &mut ProcBuilder, i: VarId, n: VarId, body: impl FnOnce(&mut ProcBuilder)) {
        let (head, work, exit) = (b.create_block(), b.create_block(), b.create_block());
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(head);
        b.switch_to_block(head);
        let (vi, vn) = (b.load(i), b.load(n));
        let c = b.cmp(CmpOp::Le, vi, vn);
        b.branch(c, work, exit);
        b.switch_to_block(work);
        body(b);
        let vi = b.load(i);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, vi, one);
        b.store(i, next);
        b.jump(head);
        b.switch_to_block(exit);
    }

    /// `sum(n, a(n), s)`: s = a(1) + ... + a(n), in the type `ty`.
    fn sum_module(ty: Type) -> (Module, ProcId) {
        let mut module = Module::default();
        let mut proc = Proc::new("sum");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let a = b.param("a", ty, vec![ProcBuilder::var_dim(n)]);
        let s = b.param("s", ty, Vec::new());
        let i = b.local("i", Type::I32);
        let zero = b.fconst(ty, 0.0);
        b.store(s, zero);
        counted_loop(&mut b, i, n, |b| {
            b.set_span(at(4));
            let vi = b.load(i);
            let x = b.load_elem(a, vec![vi]);
            let vs = b.load(s);
            let t = b.binary(BinaryOp::Add, vs, x);
            b.store(s, t);
        });
        b.ret();
        let id = module.add_proc(proc);
        (module, id)
    }

    #[test]
    fn loop_sums_an_array() {
        let (module, sum) = sum_module(Type::F64);
        let n = 5000;
        let mut args = vec![
            Buffer::I32(vec![n]),
            Buffer::F64((1..=n).map(f64::from).collect()),
            Buffer::F64(vec![0.0]),
        ];
        run(&module, sum, &mut args).unwrap();
        assert_eq!(
            args[2],
            Buffer::F64(vec![(n as f64) * (n as f64 + 1.0) / 2.0])
        );
    }

    #[test]
    fn f32_arithmetic_stays_in_f32() {
        let (module, sum) = sum_module(Type::F32);
        let mut args = vec![
            Buffer::I32(vec![3]),
            Buffer::F32(vec![1.0e8, 1.0, -1.0e8]),
            Buffer::F32(vec![0.0]),
        ];
        run(&module, sum, &mut args).unwrap();
        // In f64 the sum would be 1; in f32 the 1 is absorbed.
        assert_eq!(args[2], Buffer::F32(vec![0.0]));
        // Transcendentals use the f32 library functions.
        let mut module = Module::default();
        let mut proc = Proc::new("s");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F32, Vec::new());
        let vx = b.load(x);
        let y = b.unary(UnaryOp::Sin, vx);
        b.store(x, y);
        let id = module.add_proc(proc);
        let mut args = vec![Buffer::F32(vec![0.7])];
        run(&module, id, &mut args).unwrap();
        assert_eq!(args[0], Buffer::F32(vec![0.7f32.sin()]));
    }

    #[test]
    fn index_out_of_bounds_names_variable_index_and_line() {
        let (module, sum) = sum_module(Type::F64);
        let mut args = vec![
            Buffer::I32(vec![3]),
            Buffer::F64(vec![1.0; 3]),
            Buffer::F64(vec![0.0]),
        ];
        // Shrink the declared extent below the loop count with a wrong n:
        // the buffer is checked first, so use a module whose loop overruns.
        let mut overrun = module.clone();
        if let Some(Dim { upper, .. }) = overrun.procs[0].vars[1].dims.first_mut() {
            *upper = Some(Bound::Const(2));
        }
        let e = run(&overrun, sum, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::IndexOutOfBounds);
        assert_eq!(e.var.as_deref(), Some("a"));
        assert_eq!(e.detail, "index 3 outside 1:2 in dimension 1");
        assert_eq!(e.span.line, 4);
        assert_eq!(
            e.to_string(),
            "array index out of bounds on `a`: index 3 outside 1:2 in dimension 1"
        );
        // With checks off the element is inside the buffer and is read.
        let mut interp = Interpreter::new(&overrun);
        interp.set_bounds_checks(false);
        interp.call(sum, &mut args).unwrap();
        assert_eq!(args[2], Buffer::F64(vec![3.0]));
        // Too short a buffer is an argument error before anything runs.
        args[1] = Buffer::F64(vec![1.0; 2]);
        let e = run(&module, sum, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::ArgumentSize);
        assert_eq!(e.var.as_deref(), Some("a"));
    }

    /// A procedure `op(a, b, r)` computing `r = a <op> b` in type `ty`.
    fn binary_module(op: BinaryOp, ty: Type, rhs_ty: Type) -> (Module, ProcId) {
        let mut module = Module::default();
        let mut proc = Proc::new("op");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("a", ty, Vec::new());
        let y = b.param("b", rhs_ty, Vec::new());
        let r = b.param("r", ty, Vec::new());
        let (vx, vy) = (b.load(x), b.load(y));
        let v = b.binary(op, vx, vy);
        b.store(r, v);
        let id = module.add_proc(proc);
        (module, id)
    }

    fn eval_f64(op: BinaryOp, a: f64, b: f64) -> f64 {
        let (module, id) = binary_module(op, Type::F64, Type::F64);
        let mut args = vec![
            Buffer::F64(vec![a]),
            Buffer::F64(vec![b]),
            Buffer::F64(vec![0.0]),
        ];
        run(&module, id, &mut args).unwrap();
        args[2].get_f64(0)
    }

    fn eval_i32(op: BinaryOp, a: i32, b: i32) -> Result<i32, RuntimeError> {
        let (module, id) = binary_module(op, Type::I32, Type::I32);
        let mut args = vec![
            Buffer::I32(vec![a]),
            Buffer::I32(vec![b]),
            Buffer::I32(vec![0]),
        ];
        run(&module, id, &mut args)?;
        Ok(args[2].get_f64(0) as i32)
    }

    #[test]
    fn fortran_intrinsic_semantics() {
        use BinaryOp::*;
        assert_eq!(eval_f64(Min, f64::NAN, 1.0), 1.0);
        assert_eq!(eval_f64(Min, 1.0, f64::NAN), 1.0);
        assert_eq!(eval_f64(Max, f64::NAN, -1.0), -1.0);
        assert_eq!(eval_f64(Max, 2.0, 3.0), 3.0);
        assert_eq!(eval_i32(Mod, -7, 3).unwrap(), -1);
        assert_eq!(eval_i32(Modulo, -7, 3).unwrap(), 2);
        assert_eq!(eval_i32(Mod, 7, -3).unwrap(), 1);
        assert_eq!(eval_i32(Modulo, 7, -3).unwrap(), -2);
        assert_eq!(eval_i32(Modulo, 6, -3).unwrap(), 0);
        assert_eq!(eval_f64(Mod, -5.5, 2.0), -1.5);
        assert_eq!(eval_f64(Modulo, -5.5, 2.0), 0.5);
        assert_eq!(eval_f64(Modulo, 5.5, -2.0), -0.5);
        assert_eq!(eval_f64(Sign, 3.0, -0.0), -3.0);
        assert_eq!(eval_i32(Sign, -3, 0).unwrap(), 3);
        assert_eq!(eval_f64(Dim, 5.0, 3.0), 2.0);
        assert_eq!(eval_f64(Dim, 3.0, 5.0), 0.0);
        assert_eq!(eval_f64(Dim, f64::NAN, 1.0), 0.0);
        assert_eq!(eval_i32(Dim, -2, 5).unwrap(), 0);
        assert_eq!(eval_i32(Div, -7, 2).unwrap(), -3);
        assert_eq!(eval_i32(Add, i32::MAX, 1).unwrap(), i32::MIN);
        assert_eq!(eval_i32(Pow, 3, 4).unwrap(), 81);
        assert_eq!(eval_i32(Pow, -1, -3).unwrap(), -1);
        assert_eq!(eval_i32(Pow, -1, -4).unwrap(), 1);
        assert_eq!(eval_i32(Pow, 2, -1).unwrap(), 0);
        for (op, b) in [(Div, 0), (Mod, 0), (Modulo, 0)] {
            let e = eval_i32(op, 7, b).unwrap_err();
            assert_eq!(e.kind, RuntimeErrorKind::DivideByZero);
        }
        assert_eq!(
            eval_i32(Pow, 0, -1).unwrap_err().kind,
            RuntimeErrorKind::DivideByZero
        );
    }

    #[test]
    fn powi_is_repeated_squaring() {
        let (module, id) = binary_module(BinaryOp::PowI, Type::F32, Type::I32);
        let pow = |x: f32, n: i32| {
            let mut args = vec![
                Buffer::F32(vec![x]),
                Buffer::I32(vec![n]),
                Buffer::F32(vec![0.0]),
            ];
            run(&module, id, &mut args).unwrap();
            args[2].get_f64(0) as f32
        };
        assert_eq!(pow(2.0, 10), 1024.0);
        assert_eq!(pow(2.0, -2), 0.25);
        assert_eq!(pow(f32::NAN, 0), 1.0);
        let x = 1.1f32;
        let (x2, x4) = (x * x, x * x * (x * x));
        assert_eq!(pow(x, 7), x * x2 * x4, "r = x; r *= x^2; r *= x^4");
        assert_eq!(pow(x, -7), 1.0 / (x * x2 * x4));
    }

    /// A procedure `cv(x, r)` computing `r = convert(x)`.
    fn convert_module(from: Type, to: Type, rounding: Rounding) -> (Module, ProcId) {
        let mut module = Module::default();
        let mut proc = Proc::new("cv");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", from, Vec::new());
        let r = b.param("r", to, Vec::new());
        let vx = b.load(x);
        let c = b.convert(vx, to, rounding);
        b.store(r, c);
        let id = module.add_proc(proc);
        (module, id)
    }

    #[test]
    fn conversions_round_and_saturate() {
        let (module, id) = convert_module(Type::F64, Type::I32, Rounding::Nearest);
        let nint = |x: f64| {
            let mut args = vec![Buffer::F64(vec![x]), Buffer::I32(vec![0])];
            run(&module, id, &mut args).unwrap();
            args[1].get_f64(0) as i32
        };
        assert_eq!(nint(2.5), 3);
        assert_eq!(nint(-2.5), -3);
        assert_eq!(nint(0.49999999999999994), 0);
        assert_eq!(nint(1e20), i32::MAX);
        assert_eq!(nint(-1e20), i32::MIN);
        assert_eq!(nint(f64::NAN), 0);
        let (module, id) = convert_module(Type::F32, Type::I64, Rounding::Floor);
        let mut args = vec![Buffer::F32(vec![-1.5]), Buffer::I64(vec![0])];
        run(&module, id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::I64(vec![-2]));
        let (module, id) = convert_module(Type::I64, Type::I32, Rounding::Trunc);
        let mut args = vec![Buffer::I64(vec![(1 << 32) + 5]), Buffer::I32(vec![0])];
        run(&module, id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::I32(vec![5]));
        let (module, id) = convert_module(Type::I64, Type::F32, Rounding::Trunc);
        let big = (1i64 << 40) + 1;
        let mut args = vec![Buffer::I64(vec![big]), Buffer::F32(vec![0.0])];
        run(&module, id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::F32(vec![big as f32]));
    }

    #[test]
    fn branch_select_and_switch() {
        // r = (x < 0 ? -x : x) via a branch; k selects 10/20/30 via switch;
        // m = select(x > 1, 1, 2).
        let mut module = Module::default();
        let mut proc = Proc::new("ctl");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, Vec::new());
        let k = b.param("k", Type::I64, Vec::new());
        let r = b.param("r", Type::F64, Vec::new());
        let m = b.param("m", Type::I32, Vec::new());
        let (neg, pos, join) = (b.create_block(), b.create_block(), b.create_block());
        let vx = b.load(x);
        let zero = b.fconst(Type::F64, 0.0);
        let c = b.cmp(CmpOp::Lt, vx, zero);
        b.branch(c, neg, pos);
        b.switch_to_block(neg);
        let vx = b.load(x);
        let nx = b.unary(UnaryOp::Neg, vx);
        b.store(r, nx);
        b.jump(join);
        b.switch_to_block(pos);
        let vx = b.load(x);
        b.store(r, vx);
        b.jump(join);
        b.switch_to_block(join);
        let vx = b.load(x);
        let one = b.fconst(Type::F64, 1.0);
        let gt = b.cmp(CmpOp::Gt, vx, one);
        let (i1, i2) = (b.iconst(Type::I32, 1), b.iconst(Type::I32, 2));
        let s = b.select(gt, i1, i2);
        b.store(m, s);
        let vk = b.load(k);
        let targets: Vec<BlockId> = (0..3).map(|_| b.create_block()).collect();
        b.switch(vk, vec![(1, targets[0]), (2, targets[1])], targets[2]);
        for (t, value) in targets.iter().zip([10.0, 20.0, 30.0]) {
            b.switch_to_block(*t);
            let vr = b.load(r);
            let c = b.fconst(Type::F64, value);
            let sum = b.binary(BinaryOp::Add, vr, c);
            b.store(r, sum);
            b.ret();
        }
        let id = module.add_proc(proc);
        let case = |x: f64, k: i64| {
            let mut args = vec![
                Buffer::F64(vec![x]),
                Buffer::I64(vec![k]),
                Buffer::F64(vec![0.0]),
                Buffer::I32(vec![0]),
            ];
            run(&module, id, &mut args).unwrap();
            (args[2].get_f64(0), args[3].get_f64(0) as i32)
        };
        assert_eq!(case(-2.0, 1), (12.0, 2));
        assert_eq!(case(3.0, 2), (23.0, 1));
        assert_eq!(case(0.5, 7), (30.5, 2));
    }

    #[test]
    fn calls_use_sequence_association_and_value_temporaries() {
        let mut module = Module::default();
        // fill(m, b(m)): b(j) = j; m = 0 (the caller's value temporary is
        // lost when m is passed by value).
        let mut fill = Proc::new("fill");
        let mut b = ProcBuilder::new(&mut fill);
        let m = b.param("m", Type::I32, Vec::new());
        let arr = b.param("b", Type::F64, vec![ProcBuilder::var_dim(m)]);
        let j = b.local("j", Type::I32);
        counted_loop(&mut b, j, m, |b| {
            let vj = b.load(j);
            let x = b.convert(vj, Type::F64, Rounding::Trunc);
            b.store_elem(arr, vec![vj], x);
        });
        let zero = b.iconst(Type::I32, 0);
        b.store(m, zero);
        b.ret();
        let fill = module.add_proc(fill);
        // caller(a(10), k): call fill(4, a(k)); call fill(k, a) with k by reference.
        let mut caller = Proc::new("caller");
        let mut b = ProcBuilder::new(&mut caller);
        let a = b.param("a", Type::F64, vec![ProcBuilder::const_dim(1, 10)]);
        let k = b.param("k", Type::I32, Vec::new());
        let four = b.iconst(Type::I32, 4);
        let vk = b.load(k);
        b.call(fill, vec![CallArg::Value(four), CallArg::Elem(a, vec![vk])]);
        let vk = b.load(k);
        b.call(fill, vec![CallArg::Var(k), CallArg::Elem(a, vec![vk])]);
        let caller = module.add_proc(caller);
        let mut args = vec![Buffer::F64(vec![0.0; 10]), Buffer::I32(vec![3])];
        run(&module, caller, &mut args).unwrap();
        assert_eq!(
            args[0],
            Buffer::F64(vec![0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0])
        );
        assert_eq!(args[1], Buffer::I32(vec![0]), "k was passed by reference");
        // Passing a(8) with m = 4: b(4) is declared but lies beyond the
        // caller's storage (Fortran 77 lets a dummy be declared larger than
        // its actual); the error comes when it is referenced, after b(1:3).
        let mut args = vec![Buffer::F64(vec![0.0; 10]), Buffer::I32(vec![8])];
        let e = run(&module, caller, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::IndexOutOfBounds);
        assert_eq!(e.proc, fill);
        assert_eq!(e.var.as_deref(), Some("b"));
        assert_eq!(
            e.detail,
            "element offset 3 outside the storage of 3 elements"
        );
        assert_eq!(args[0].get_f64(9), 3.0, "b(1:3) were written first");
    }

    #[test]
    fn recursion_is_bounded_and_locals_are_fresh() {
        // rec(n): t = t + 1 (local, so always 1); if t == 1 and n > 0: n = n - 1, call rec(n).
        let mut module = Module::default();
        let mut proc = Proc::new("rec");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let t = b.local("t", Type::I32);
        let (again, done) = (b.create_block(), b.create_block());
        let vt = b.load(t);
        let one = b.iconst(Type::I32, 1);
        let t1 = b.binary(BinaryOp::Add, vt, one);
        b.store(t, t1);
        let vn = b.load(n);
        let zero = b.iconst(Type::I32, 0);
        let pos = b.cmp(CmpOp::Gt, vn, zero);
        let fresh = b.cmp(CmpOp::Eq, t1, one);
        let go = b.binary(BinaryOp::And, pos, fresh);
        b.branch(go, again, done);
        b.switch_to_block(again);
        let vn = b.load(n);
        let one = b.iconst(Type::I32, 1);
        let n1 = b.binary(BinaryOp::Sub, vn, one);
        b.store(n, n1);
        b.call(ProcId(0), vec![CallArg::Var(n)]);
        b.jump(done);
        let id = module.add_proc(proc);
        let mut args = vec![Buffer::I32(vec![100])];
        run(&module, id, &mut args).unwrap();
        assert_eq!(args[0], Buffer::I32(vec![0]));
        let mut args = vec![Buffer::I32(vec![5000])];
        let e = run(&module, id, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::CallDepthExceeded);
    }

    fn var_ref(var: VarId) -> CharRef {
        CharRef {
            base: CharBase::Var {
                var,
                index: Vec::new(),
            },
            start: None,
            end: None,
        }
    }

    fn literal(text: &str) -> CharRef {
        CharRef {
            base: CharBase::Literal(text.as_bytes().to_vec()),
            start: None,
            end: None,
        }
    }

    #[test]
    fn characters_pad_truncate_and_compare() {
        // s = 'abc'; t(2:4) = 'wxyz'; eq = (s == 'abc  '); lt = s(1:2) < 'b'
        // then u(i:j) = s with i, j given (possibly out of range).
        let mut module = Module::default();
        let mut proc = Proc::new("chars");
        let mut b = ProcBuilder::new(&mut proc);
        let char_param = |b: &mut ProcBuilder, name: &str, len: i64| {
            b.param_var(Var {
                name: name.into(),
                ty: Type::Char,
                dims: Vec::new(),
                char_len: Some(Bound::Const(len)),
                storage: Storage::Local,
            })
        };
        let s = char_param(&mut b, "s", 5);
        let t = char_param(&mut b, "t", 5);
        let eq = b.param("eq", Type::Bool, Vec::new());
        let lt = b.param("lt", Type::Bool, Vec::new());
        let i = b.param("i", Type::I32, Vec::new());
        let j = b.param("j", Type::I32, Vec::new());
        let u = b.param_var(Var {
            name: "u".into(),
            ty: Type::Char,
            dims: Vec::new(),
            char_len: None,
            storage: Storage::Local,
        });
        b.char_assign(var_ref(s), literal("abc"));
        let (two, four) = (b.iconst(Type::I32, 2), b.iconst(Type::I32, 4));
        let mut t_sub = var_ref(t);
        t_sub.start = Some(two);
        t_sub.end = Some(four);
        b.char_assign(t_sub, literal("wxyz"));
        let c = b.char_compare(CmpOp::Eq, var_ref(s), literal("abc  "));
        b.store(eq, c);
        let one = b.iconst(Type::I32, 1);
        let mut s12 = var_ref(s);
        s12.start = Some(one);
        s12.end = Some(two);
        let c = b.char_compare(CmpOp::Lt, s12, literal("b"));
        b.store(lt, c);
        let (vi, vj) = (b.load(i), b.load(j));
        let mut u_sub = var_ref(u);
        u_sub.start = Some(vi);
        u_sub.end = Some(vj);
        b.char_assign(u_sub, var_ref(s));
        let id = module.add_proc(proc);
        let call = |i: i32, j: i32| {
            let mut args = vec![
                Buffer::Char(b"?????".to_vec()),
                Buffer::Char(b"?????".to_vec()),
                Buffer::Bool(vec![0]),
                Buffer::Bool(vec![0]),
                Buffer::I32(vec![i]),
                Buffer::I32(vec![j]),
                Buffer::Char(b"1234567".to_vec()),
            ];
            run(&module, id, &mut args).map(|()| args)
        };
        let args = call(2, 3).unwrap();
        assert_eq!(args[0], Buffer::Char(b"abc  ".to_vec()));
        assert_eq!(args[1], Buffer::Char(b"?wxy?".to_vec()));
        assert_eq!(args[2], Buffer::Bool(vec![1]));
        assert_eq!(args[3], Buffer::Bool(vec![1]));
        assert_eq!(
            args[6],
            Buffer::Char(b"1ab4567".to_vec()),
            "assumed length 7"
        );
        let args = call(5, 4).unwrap();
        assert_eq!(
            args[6],
            Buffer::Char(b"1234567".to_vec()),
            "empty substring"
        );
        let e = call(6, 8).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::SubstringOutOfRange);
        assert_eq!(e.var.as_deref(), Some("u"));
    }

    #[test]
    fn stacks_persist_across_calls() {
        let mut module = Module::default();
        let mut fwd = Proc::new("fwd");
        let mut b = ProcBuilder::new(&mut fwd);
        let x = b.param("x", Type::F32, Vec::new());
        let vx = b.load(x);
        b.push(StackKind::Value, vx);
        let k = b.iconst(Type::I32, -3);
        b.push(StackKind::Control, k);
        let t = b.bconst(true);
        b.push(StackKind::Integer, t);
        let fwd = module.add_proc(fwd);
        let mut rev = Proc::new("rev");
        let mut b = ProcBuilder::new(&mut rev);
        let y = b.param("y", Type::F64, Vec::new());
        let k = b.param("k", Type::I64, Vec::new());
        let flag = b.param("flag", Type::Bool, Vec::new());
        let v = b.pop(StackKind::Value, Type::F64);
        b.store(y, v);
        let v = b.pop(StackKind::Control, Type::I64);
        b.store(k, v);
        let v = b.pop(StackKind::Integer, Type::Bool);
        b.store(flag, v);
        let rev = module.add_proc(rev);
        verify_module(&module).unwrap();
        let mut interp = Interpreter::new(&module);
        interp.call(fwd, &mut [Buffer::F32(vec![0.1])]).unwrap();
        interp.call(fwd, &mut [Buffer::F32(vec![0.1])]).unwrap();
        assert_eq!(interp.stack_len(StackKind::Value), 2);
        let mut args = vec![
            Buffer::F64(vec![0.0]),
            Buffer::I64(vec![0]),
            Buffer::Bool(vec![0]),
        ];
        interp.call(rev, &mut args).unwrap();
        assert_eq!(args[0], Buffer::F64(vec![0.1f32 as f64]));
        assert_eq!(args[1], Buffer::I64(vec![-3]));
        assert_eq!(args[2], Buffer::Bool(vec![1]));
        interp.clear_stacks();
        assert_eq!(interp.stack_len(StackKind::Control), 0);
        let e = interp.call(rev, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::StackUnderflow);
    }

    #[test]
    fn globals_persist_and_automatic_arrays_are_sized_at_entry() {
        let mut module = Module::default();
        let g = module.add_global(Global {
            name: "m::count".into(),
            ty: Type::I32,
            dims: Vec::new(),
            char_len: 1,
            init: vec![Const::Int(40)],
        });
        let mut proc = Proc::new("bump");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let out = b.param("out", Type::I64, Vec::new());
        let count = b.declare_var(Var {
            storage: Storage::Global(g, 0),
            ..Var::scalar("count", Type::I32)
        });
        let work = b.local_array("work", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let vc = b.load(count);
        let one = b.iconst(Type::I32, 1);
        let c1 = b.binary(BinaryOp::Add, vc, one);
        b.store(count, c1);
        let ext = b.dim_extent(work, 0);
        let vn = b.load(n);
        let x = b.convert(vn, Type::F64, Rounding::Trunc);
        b.store_elem(work, vec![vn], x);
        let y = b.load_elem(work, vec![vn]);
        let yi = b.convert(y, Type::I64, Rounding::Trunc);
        let sum = b.binary(BinaryOp::Add, ext, yi);
        b.store(out, sum);
        b.fail(RuntimeErrorKind::Stop(Some("done".into())));
        let id = module.add_proc(proc);
        verify_module(&module).unwrap();
        let mut interp = Interpreter::new(&module);
        for expected in [41, 42] {
            let mut args = vec![Buffer::I32(vec![6]), Buffer::I64(vec![0])];
            let e = interp.call(id, &mut args).unwrap_err();
            assert_eq!(e.kind, RuntimeErrorKind::Stop(Some("done".into())));
            assert_eq!(args[1], Buffer::I64(vec![12]));
            assert_eq!(interp.global(g), Some(&Buffer::I32(vec![expected])));
        }
    }

    #[test]
    fn oversized_locals_and_unknown_procedures_are_errors() {
        let mut module = Module::default();
        let mut proc = Proc::new("big");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, Vec::new());
        b.local_array(
            "work",
            Type::F64,
            vec![ProcBuilder::var_dim(n), ProcBuilder::var_dim(n)],
        );
        b.set_span(at(9));
        b.fail(RuntimeErrorKind::Stop(None));
        let id = module.add_proc(proc);
        let e = run(&module, id, &mut [Buffer::I64(vec![1 << 20])]).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::TooLarge);
        assert_eq!(e.var.as_deref(), Some("work"));
        let e = run(&module, id, &mut [Buffer::I64(vec![3])]).unwrap_err();
        assert_eq!((e.kind, e.span.line), (RuntimeErrorKind::Stop(None), 9));
        let e = run(&module, ProcId(7), &mut []).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::ArgumentSize);
    }
}
