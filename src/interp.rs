//! The reference interpreter: the executable definition of the code-list IR
//! (see `adjit_jit::ir` for the meaning of every instruction).
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

use crate::jit::buffer::Buffer;
use crate::jit::error::RuntimeError;
use crate::jit::ir::{
    BinaryOp, CallArg, CharBase, CharRef, CmpOp, Const, Inst, Module, Proc, ProcId, Rounding,
    RuntimeErrorKind, Span, StackKind, Storage, Terminator, Type, UnaryOp, Value, VarId,
    MAX_CALL_DEPTH,
};
use crate::jit::shape::{eval_var_shape, first_as_int, resolve_arguments_with, DimShape};
use std::cmp::Ordering;

/// Where an argument's storage is: a slot and a range of storage units
/// (elements, bytes for characters).
#[derive(Clone, Copy, Debug)]
struct Loc {
    slot: usize,
    offset: usize,
    units: usize,
}

/// A variable of one activation: its storage and evaluated shape.
#[derive(Clone, Copy, Debug)]
struct View {
    loc: Loc,
    /// Bytes per element for characters, else 1.
    char_len: usize,
    /// First entry of the activation's dimensions in `Interpreter::dims`.
    dims_start: usize,
    rank: usize,
}

/// One activation of a procedure.
#[derive(Clone, Copy, Debug)]
struct Frame {
    proc: ProcId,
    views_base: usize,
    values_base: usize,
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
    depth: usize,
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
    ($unary:ident, $binary:ident, $powi:ident, $t:ty) => {
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
                BinaryOp::Dim => {
                    if a > b {
                        a - b
                    } else {
                        0.0
                    }
                }
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

float_ops!(unary_f32, binary_f32, powi_f32, f32);
float_ops!(unary_f64, binary_f64, powi_f64, f64);

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
                BinaryOp::Dim => {
                    if a > b {
                        a.wrapping_sub(b)
                    } else {
                        0
                    }
                }
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
            depth: 0,
        }
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

    /// Empties the three runtime stacks.
    pub fn clear_stacks(&mut self) {
        self.value_stack.clear();
        self.integer_stack.clear();
        self.control_stack.clear();
    }

    /// The current storage of a global (column-major; bytes for characters).
    pub fn global(&self, global: crate::jit::ir::GlobalId) -> Option<&Buffer> {
        self.slots.get(global.index())
    }

    /// Calls a procedure with one buffer per parameter (checked against the
    /// declared types and shapes first). Arguments are updated in place.
    pub fn call(&mut self, proc: ProcId, args: &mut [Buffer]) -> Result<(), RuntimeError> {
        {
            let slots = &self.slots;
            resolve_arguments_with(self.module, proc, args, &mut |g| {
                slots.get(g.index()).map_or(0, first_as_int)
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
            });
            self.slots.push(std::mem::replace(arg, empty));
        }
        let result = self.invoke(proc, args_base, Span::default());
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

    /// Runs `proc` with its arguments at `arg_locs[args_base..]`.
    fn invoke(
        &mut self,
        pid: ProcId,
        args_base: usize,
        call_span: Span,
    ) -> Result<(), RuntimeError> {
        let module = self.module;
        let proc = &module.procs[pid.index()];
        if self.depth >= MAX_CALL_DEPTH {
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
        let slots_base = self.slots.len();
        let dims_base = self.dims.len();
        self.depth += 1;
        let result = self
            .enter(proc, frame, args_base)
            .and_then(|()| self.run(proc, frame));
        self.depth -= 1;
        self.views.truncate(frame.views_base);
        self.dims.truncate(dims_base);
        self.values.truncate(frame.values_base);
        self.slots.truncate(slots_base);
        result
    }

    /// Binds every variable of a new activation to storage and evaluates its
    /// shape.
    fn enter(
        &mut self,
        proc: &'m Proc,
        frame: Frame,
        args_base: usize,
    ) -> Result<(), RuntimeError> {
        for var in &proc.vars {
            let loc = match var.storage {
                Storage::Param(i) => self.arg_locs.get(args_base + i as usize).copied(),
                Storage::Global(g) => Some(Loc {
                    slot: g.index(),
                    offset: 0,
                    units: self.slots.get(g.index()).map_or(0, Buffer::len),
                }),
                Storage::Local => None,
            };
            let shape = {
                let (slots, arg_locs) = (&self.slots, &self.arg_locs);
                let mut read = |v: VarId| {
                    let loc = match proc.vars.get(v.index()).map(|v| v.storage) {
                        Some(Storage::Param(i)) => arg_locs.get(args_base + i as usize).copied(),
                        Some(Storage::Global(g)) => Some(Loc {
                            slot: g.index(),
                            offset: 0,
                            units: 1,
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
                    Storage::Local => None,
                    _ => Some(loc.map_or(0, |l| l.units)),
                };
                eval_var_shape(var, &mut read, available).map_err(|detail| {
                    self.error(
                        frame.proc,
                        RuntimeErrorKind::ArgumentSize,
                        proc.span,
                        Some(&var.name),
                        detail,
                    )
                })?
            };
            let loc = match loc {
                Some(loc) => loc,
                None => {
                    self.slots.push(Buffer::zeros(var.ty, shape.units()));
                    Loc {
                        slot: self.slots.len() - 1,
                        offset: 0,
                        units: shape.units(),
                    }
                }
            };
            self.views.push(View {
                loc,
                char_len: shape.char_len,
                dims_start: self.dims.len(),
                rank: shape.dims.len(),
            });
            self.dims.extend_from_slice(&shape.dims);
        }
        self.values.resize(frame.values_base + proc.insts.len(), 0);
        Ok(())
    }

    fn view(&self, frame: Frame, var: VarId) -> View {
        self.views[frame.views_base + var.index()]
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

    /// Resolves a character reference, including its substring.
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

    /// Executes the blocks of an activation until it returns or fails.
    fn run(&mut self, proc: &'m Proc, frame: Frame) -> Result<(), RuntimeError> {
        let mut block = Proc::ENTRY;
        loop {
            let data = &proc.blocks[block.index()];
            for &v in &data.insts {
                self.exec(proc, frame, v)?;
            }
            block = match &data.term {
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
                Terminator::Return => return Ok(()),
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
            Inst::Call(callee, args) => {
                self.exec_call(proc, frame, *callee, args, span)?;
                return Ok(());
            }
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

    /// Passes the actual arguments by reference and runs the callee.
    fn exec_call(
        &mut self,
        proc: &'m Proc,
        frame: Frame,
        callee: ProcId,
        args: &[CallArg],
        span: Span,
    ) -> Result<(), RuntimeError> {
        let args_base = self.arg_locs.len();
        let slots_base = self.slots.len();
        let mut result = Ok(());
        for arg in args {
            let loc = match arg {
                CallArg::Var(var) => self.view(frame, *var).loc,
                CallArg::Elem(var, idx) => match self.elem_offset(frame, proc, *var, idx, span) {
                    Ok(e) => {
                        let view = self.view(frame, *var);
                        let skip = e * view.char_len;
                        Loc {
                            slot: view.loc.slot,
                            offset: view.loc.offset + skip,
                            units: view.loc.units - skip,
                        }
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
                CallArg::Value(x) => {
                    let buffer = temporary(Self::value_type(proc, *x), self.get(frame, *x));
                    self.slots.push(buffer);
                    Loc {
                        slot: self.slots.len() - 1,
                        offset: 0,
                        units: 1,
                    }
                }
            };
            self.arg_locs.push(loc);
        }
        if result.is_ok() {
            result = self.invoke(callee, args_base, span);
        }
        self.arg_locs.truncate(args_base);
        self.slots.truncate(slots_base);
        result
    }
}
