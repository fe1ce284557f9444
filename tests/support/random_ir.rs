//! A deterministic generator of random, well-formed code-list programs.
//!
//! [`generate`] turns a seed into a [`Program`]: a module of one to a few
//! procedures (each may call the ones generated before it, so there is no
//! recursion and every run terminates) and the entry procedure (the last
//! one). Procedures have scalar parameters of every type, array parameters of
//! rank 1 to 3 (constant bounds with lower bounds other than 1, bounds read
//! from integer "size" parameters, assumed-size rank-1 arrays), scalar and
//! array locals (automatic when their bounds read a size parameter), and a
//! body of structured statements lowered to blocks: assignments of random
//! expressions (every unary, binary and comparison operator valid for the
//! operand types, conversions with every rounding mode, selects, bounds
//! queries), two-way branches, counted loops (test at the top or at the
//! bottom, with a trip counter variable), multi-way switches (occasionally
//! with duplicate keys or keys outside the selector's type), calls passing
//! variables, array elements and values, balanced push / pop pairs on the
//! three runtime stacks, integer division and remainders whose divisors may
//! be zero, early returns and conditional STOPs.
//!
//! Array subscripts stay in range by construction (`lower + modulo(e,
//! extent)` from `DimLower` / `DimExtent`, or constants inside constant
//! bounds); calls pass storage at least as large as the callee's declared
//! shape and never pass the same variable twice by reference. The only
//! runtime errors of a [`Fault::None`] program are therefore the natural
//! ones: integer division by zero and STOP. With another [`Fault`], every
//! natural error source is disabled and the entry procedure ends with one
//! statement that must fail with that error, at [`Program::fault_span`].
//!
//! Globals (scalars and small arrays of every type, partly initialised) are
//! viewed by procedures with their own shape or as a shorter rank-1 view;
//! variables viewing globals are never passed by reference.
//!
//! Sizes: size parameters always hold 1 to 4 at entry (the host arguments of
//! [`random_args`] and every generated call respect this), so extents are at
//! least 1 and every bound is known to lie in a small range.

use adjit::ir::buffer::Buffer;
use adjit::ir::builder::ProcBuilder;
use adjit::ir::shape::eval_var_shape;
use adjit::ir::{
    BinaryOp, Bound, CallArg, CmpOp, Const, Dim, Global, GlobalId, Module, Proc, ProcId, Rounding,
    RuntimeErrorKind, Span, StackKind, Storage, Type, UnaryOp, Value, Var, VarId,
};

/// Smallest value a size parameter holds at entry.
pub const SIZE_MIN: i64 = 1;
/// Largest value a size parameter holds at entry.
pub const SIZE_MAX: i64 = 4;

/// A small deterministic random source (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True with the given probability in percent.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as usize) as i64
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A float drawn from special values (zeros, halves, infinities, NaN,
    /// huge, subnormal, beyond f32) and random magnitudes.
    pub fn float(&mut self) -> f64 {
        const SPECIAL: [f64; 20] = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.499_999_999_999_999_94,
            1e300,
            -3e-310,
            4_503_599_627_370_497.0,
            3.0,
            3.5e38,
            -2.1e9,
            9.3e18,
            1e-40,
        ];
        let r = self.next_u64();
        if r.is_multiple_of(4) {
            SPECIAL[(r >> 8) as usize % SPECIAL.len()]
        } else {
            let magnitude = ((r >> 16) % 2000) as f64 / 100.0 - 10.0;
            let sign = if r & (1 << 40) != 0 { -1.0 } else { 1.0 };
            sign * magnitude.exp() * ((r >> 20) % 1000) as f64 / 997.0
        }
    }

    /// An integer drawn from special values (0, ±1, extremes of both widths)
    /// and random small and large values.
    pub fn int(&mut self) -> i64 {
        const SPECIAL: [i64; 12] = [
            0,
            1,
            -1,
            2,
            -2,
            7,
            i64::MIN,
            i64::MAX,
            i32::MIN as i64,
            i32::MAX as i64,
            63,
            64,
        ];
        let r = self.next_u64();
        match r % 4 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
            1 => (r >> 3) as i64,
            _ => ((r >> 8) % 41) as i64 - 20,
        }
    }

    /// An integer of type `ty` (I32 values stay in the i32 range).
    pub fn int_of(&mut self, ty: Type) -> i64 {
        let x = self.int();
        if ty == Type::I32 {
            x as i32 as i64
        } else {
            x
        }
    }
}

/// The error a generated program is built to end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No planted error: natural errors (division by zero, STOP) may occur.
    None,
    /// The entry ends with an array access outside the bounds.
    IndexOutOfBounds,
    /// The entry ends with a pop from an empty stack.
    StackUnderflow,
    /// The entry ends with an integer division (or MOD, MODULO, `**`) by
    /// zero.
    DivideByZero,
}

impl Fault {
    /// The error kind the planted statement raises, if any.
    pub fn kind(self) -> Option<RuntimeErrorKind> {
        match self {
            Fault::None => None,
            Fault::IndexOutOfBounds => Some(RuntimeErrorKind::IndexOutOfBounds),
            Fault::StackUnderflow => Some(RuntimeErrorKind::StackUnderflow),
            Fault::DivideByZero => Some(RuntimeErrorKind::DivideByZero),
        }
    }
}

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Most procedures in a module (at least 1).
    pub max_procs: usize,
    /// Most statements in one statement list.
    pub max_stmts: usize,
    /// Deepest nesting of compound statements (branches, loops, switches).
    pub max_nesting: usize,
    /// Percentage of integer divisors left unprotected (possibly zero).
    pub unprotected_divisor_percent: u32,
    /// Percentage of statements that are a conditional STOP.
    pub stop_percent: u32,
    /// The planted error, if any.
    pub fault: Fault,
    /// Binary operations never generated on float operands (to step around
    /// a known, separately reported disagreement while it is being fixed).
    pub excluded_float_binary: Vec<BinaryOp>,
}

impl GenOptions {
    /// Small programs with natural errors only.
    pub fn clean() -> GenOptions {
        GenOptions {
            max_procs: 3,
            max_stmts: 6,
            max_nesting: 2,
            unprotected_divisor_percent: 15,
            stop_percent: 3,
            fault: Fault::None,
            excluded_float_binary: Vec::new(),
        }
    }

    /// Small programs with no natural error source that end with `fault`.
    pub fn with_fault(fault: Fault) -> GenOptions {
        GenOptions {
            unprotected_divisor_percent: 0,
            stop_percent: 0,
            fault,
            ..GenOptions::clean()
        }
    }
}

/// A generated module and how to call it.
#[derive(Clone, Debug)]
pub struct Program {
    /// The procedures.
    pub module: Module,
    /// The procedure the host calls (the last one).
    pub entry: ProcId,
    /// The span of the planted faulty statement (only with a [`Fault`]).
    pub fault_span: Option<Span>,
}

/// How a generated procedure uses one of its variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// An integer parameter holding 1..=4 that bounds may read; read-only.
    Size,
    /// A writable scalar.
    Scalar,
    /// An array.
    Array,
    /// A loop's trip counter or trip count; read-only outside the loop.
    Counter,
}

/// The role of every variable of a procedure, indexed like `Proc::vars`.
#[derive(Clone, Debug, Default)]
struct Roles(Vec<Role>);

const SCALAR_TYPES: [Type; 5] = [Type::F64, Type::F32, Type::I32, Type::I64, Type::Bool];
const INT_TYPES: [Type; 2] = [Type::I32, Type::I64];
const FLOAT_TYPES: [Type; 2] = [Type::F64, Type::F32];
const ROUNDINGS: [Rounding; 4] = [
    Rounding::Trunc,
    Rounding::Nearest,
    Rounding::Floor,
    Rounding::Ceil,
];
const CMP_OPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];
const FLOAT_UNARY: [UnaryOp; 19] = [
    UnaryOp::Neg,
    UnaryOp::Abs,
    UnaryOp::Sqrt,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Log10,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tan,
    UnaryOp::Asin,
    UnaryOp::Acos,
    UnaryOp::Atan,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Tanh,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Trunc,
    UnaryOp::Round,
];
const NUMERIC_BINARY: [BinaryOp; 11] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Pow,
    BinaryOp::Min,
    BinaryOp::Max,
    BinaryOp::Sign,
    BinaryOp::Dim,
    BinaryOp::Mod,
    BinaryOp::Modulo,
];
const LOGICAL_BINARY: [BinaryOp; 4] = [BinaryOp::And, BinaryOp::Or, BinaryOp::Eqv, BinaryOp::Neqv];
const STACKS: [StackKind; 3] = [StackKind::Value, StackKind::Integer, StackKind::Control];

/// Generates the program of `seed`. Every program passes `verify_module`
/// (the caller should assert it: a failure is a generator bug).
pub fn generate(seed: u64, options: &GenOptions) -> Program {
    let mut rng = Rng::new(seed);
    let mut module = Module {
        files: vec![format!("random{seed}.f90")],
        ..Module::default()
    };
    for g in 0..rng.below(3) {
        let global = random_global(&mut rng, format!("m::g{g}"));
        module.add_global(global);
    }
    let procs = 1 + rng.below(options.max_procs.max(1));
    let mut roles = Vec::new();
    let mut fault_span = None;
    for index in 0..procs {
        let is_entry = index + 1 == procs;
        let mut proc = Proc::new(format!("p{index}"));
        let mut gen = ProcGen {
            b: ProcBuilder::new(&mut proc),
            rng: &mut rng,
            options,
            callees: &module.procs,
            globals: &module.globals,
            callee_roles: &roles,
            roles: Roles::default(),
            pool: Vec::new(),
            line: 0,
            nesting: 0,
            subscript_depth: 0,
        };
        gen.declare_variables();
        let budget = 2 + gen.rng.below(options.max_stmts.max(1));
        gen.stmts(budget);
        if is_entry && options.fault != Fault::None {
            fault_span = Some(gen.plant_fault(options.fault));
        }
        gen.b.ret();
        let proc_roles = gen.roles;
        module.add_proc(proc);
        roles.push(proc_roles);
    }
    Program {
        entry: ProcId(procs as u32 - 1),
        module,
        fault_span,
    }
}

/// Random host arguments for the entry of `program`: size parameters in
/// 1..=4, buffers exactly as large as the declared shapes (with `spare`,
/// sometimes with spare elements at the end), random contents.
pub fn random_args(program: &Program, rng: &mut Rng, spare: bool) -> Vec<Buffer> {
    let proc = program.module.proc(program.entry);
    let mut sizes = vec![0i64; proc.vars.len()];
    let mut args: Vec<Buffer> = proc
        .params
        .iter()
        .map(|&p| {
            let var = proc.var(p);
            let mut buffer = Buffer::zeros(var.ty, 1);
            if is_size_name(&var.name) {
                let n = rng.range(SIZE_MIN, SIZE_MAX);
                sizes[p.index()] = n;
                set_int(&mut buffer, 0, n);
            }
            buffer
        })
        .collect();
    for (&p, buffer) in proc.params.iter().zip(args.iter_mut()) {
        let var = proc.var(p);
        if is_size_name(&var.name) {
            continue;
        }
        let len = if var.is_array() {
            let assumed = var.dims.iter().any(|d| d.upper.is_none());
            let units = if assumed {
                rng.range(1, 6) as usize
            } else {
                eval_var_shape(var, &mut |v| sizes[v.index()], None)
                    .map(|s| s.units())
                    .unwrap_or(0)
            };
            units
                + if spare && rng.chance(20) {
                    rng.below(3)
                } else {
                    0
                }
        } else {
            1
        };
        *buffer = Buffer::zeros(var.ty, len);
        for i in 0..len {
            fill_random(buffer, i, rng);
        }
    }
    args
}

/// Size parameters are recognisable by name, so that the host side needs no
/// extra bookkeeping.
fn is_size_name(name: &str) -> bool {
    name.starts_with('n')
}

fn set_int(buffer: &mut Buffer, i: usize, x: i64) {
    match buffer {
        Buffer::I32(v) => v[i] = x as i32,
        Buffer::I64(v) => v[i] = x,
        _ => buffer.set_f64(i, x as f64),
    }
}

fn fill_random(buffer: &mut Buffer, i: usize, rng: &mut Rng) {
    match buffer {
        Buffer::F32(v) => v[i] = rng.float() as f32,
        Buffer::F64(v) => v[i] = rng.float(),
        Buffer::I32(v) => v[i] = rng.int() as i32,
        Buffer::I64(v) => v[i] = rng.int(),
        Buffer::Bool(v) => v[i] = rng.chance(50) as u8,
        Buffer::Char(v) => v[i] = b'a' + rng.below(26) as u8,
    }
}

/// A scalar or small array global of a random type, partly initialised.
fn random_global(rng: &mut Rng, name: String) -> Global {
    let ty = rng.pick(&SCALAR_TYPES);
    let dims: Vec<(i64, i64)> = (0..rng.below(3))
        .map(|_| {
            let lower = rng.range(-2, 2);
            (lower, lower + rng.range(0, 2))
        })
        .collect();
    let len: i64 = dims.iter().map(|(l, u)| u - l + 1).product();
    let init = (0..rng.below(len as usize + 1))
        .map(|_| match ty {
            Type::F32 | Type::F64 => Const::Float(rng.float()),
            Type::Bool => Const::Bool(rng.chance(50)),
            _ => Const::Int(rng.int_of(ty)),
        })
        .collect();
    Global {
        name,
        ty,
        dims,
        char_len: 1,
        init,
    }
}

/// Storage units of the array `var` of `proc` with every size parameter
/// `v` at `size(v)` (an assumed-size array counts 1: callers pass at least
/// one element).
fn units_at(proc: &Proc, var: VarId, size: &dyn Fn(VarId) -> i64) -> usize {
    let var = proc.var(var);
    if var.dims.iter().any(|d| d.upper.is_none()) {
        return 1;
    }
    eval_var_shape(var, &mut |v| size(v), None)
        .map(|s| s.units())
        .unwrap_or(usize::MAX)
}

/// What a call passes for one size parameter of the callee.
#[derive(Clone, Copy)]
enum SizeArg {
    /// A constant in 1..=4.
    Const(i64),
    /// One of the caller's size parameters (1..=4, unknown).
    Forward(VarId),
}

/// Generates one procedure.
struct ProcGen<'a> {
    b: ProcBuilder<'a>,
    rng: &'a mut Rng,
    options: &'a GenOptions,
    /// Procedures generated before this one (the possible callees).
    callees: &'a [Proc],
    /// Roles of the callees' variables.
    callee_roles: &'a [Roles],
    /// The module's globals.
    globals: &'a [Global],
    roles: Roles,
    /// Values of the current block that later instructions may reuse.
    pool: Vec<Value>,
    /// Source line of the statement being generated.
    line: u32,
    /// Current nesting of compound statements.
    nesting: usize,
    /// How many subscript computations enclose the expression being built.
    subscript_depth: u32,
}

impl ProcGen<'_> {
    // ----- variables ---------------------------------------------------------

    fn add_var(&mut self, var: Var, role: Role, param: bool) -> VarId {
        let id = if param {
            self.b.param_var(var)
        } else {
            self.b.declare_var(var)
        };
        self.roles.0.push(role);
        debug_assert_eq!(self.roles.0.len(), self.b.proc().vars.len());
        id
    }

    fn vars_where(&self, mut keep: impl FnMut(VarId, &Var, Role) -> bool) -> Vec<VarId> {
        let proc = self.b.proc();
        (0..proc.vars.len())
            .map(|i| VarId(i as u32))
            .filter(|&v| keep(v, proc.var(v), self.roles.0[v.index()]))
            .collect()
    }

    fn size_params(&self) -> Vec<VarId> {
        self.vars_where(|_, _, r| r == Role::Size)
    }

    /// A random dimension: constant bounds, bounds around a size parameter,
    /// or a lower bound read from a size parameter.
    fn random_dim(&mut self) -> Dim {
        let sizes = self.size_params();
        let lower = self.rng.range(-3, 3);
        match self.rng.below(3) {
            1 if !sizes.is_empty() => {
                let n = self.rng.pick(&sizes);
                let k = self.rng.range(0, 1);
                Dim {
                    lower: Bound::Const(lower),
                    upper: Some(Bound::Add(
                        Box::new(Bound::Var(n)),
                        Box::new(Bound::Const(lower - 1 + k)),
                    )),
                }
            }
            2 if !sizes.is_empty() => {
                let n = self.rng.pick(&sizes);
                let extent = self.rng.range(1, 3);
                Dim {
                    lower: Bound::Var(n),
                    upper: Some(Bound::Add(
                        Box::new(Bound::Var(n)),
                        Box::new(Bound::Const(extent - 1)),
                    )),
                }
            }
            _ => ProcBuilder::const_dim(lower, lower + self.rng.range(0, 2)),
        }
    }

    fn random_array(&mut self, name: String, param: bool) -> VarId {
        let ty = self.rng.pick(&SCALAR_TYPES);
        let dims = if param && self.rng.chance(20) {
            vec![Dim {
                lower: Bound::Const(self.rng.range(-2, 2)),
                upper: None,
            }]
        } else {
            let rank = 1 + self.rng.below(3);
            (0..rank).map(|_| self.random_dim()).collect()
        };
        let var = Var {
            name,
            ty,
            dims,
            char_len: None,
            storage: Storage::Local,
        };
        self.add_var(var, Role::Array, param)
    }

    fn declare_variables(&mut self) {
        for i in 0..self.rng.below(3) {
            let ty = self.rng.pick(&INT_TYPES);
            self.add_var(Var::scalar(format!("n{i}"), ty), Role::Size, true);
        }
        let params = self.rng.below(5);
        let arrays = self.rng.below(3);
        let mut kinds: Vec<bool> = (0..params + arrays).map(|i| i >= params).collect();
        for i in (1..kinds.len()).rev() {
            kinds.swap(i, self.rng.below(i + 1));
        }
        for (i, is_array) in kinds.into_iter().enumerate() {
            if is_array {
                self.random_array(format!("a{i}"), true);
            } else {
                let ty = self.rng.pick(&SCALAR_TYPES);
                self.add_var(Var::scalar(format!("x{i}"), ty), Role::Scalar, true);
            }
        }
        if self.rng.chance(30) {
            let ty = self.rng.pick(&SCALAR_TYPES);
            let result = self.add_var(Var::scalar("res", ty), Role::Scalar, true);
            self.b.proc_mut().result = Some(result);
        }
        for i in 0..self.rng.below(3) {
            let ty = self.rng.pick(&SCALAR_TYPES);
            self.add_var(Var::scalar(format!("t{i}"), ty), Role::Scalar, false);
        }
        for i in 0..self.rng.below(3) {
            self.random_array(format!("w{i}"), false);
        }
        for (g, global) in self.globals.iter().enumerate() {
            if self.rng.chance(50) {
                continue;
            }
            let len = global.len();
            let dims = if global.dims.is_empty() {
                Vec::new()
            } else if self.rng.chance(50) {
                global
                    .dims
                    .iter()
                    .map(|&(l, u)| ProcBuilder::const_dim(l, u))
                    .collect()
            } else {
                let lower = self.rng.range(-2, 2);
                vec![ProcBuilder::const_dim(
                    lower,
                    lower + self.rng.range(0, len - 1),
                )]
            };
            let role = if dims.is_empty() {
                Role::Scalar
            } else {
                Role::Array
            };
            let var = Var {
                name: format!("g{g}"),
                ty: global.ty,
                dims,
                char_len: None,
                storage: Storage::Global(GlobalId(g as u32), 0),
            };
            self.add_var(var, role, false);
        }
    }

    /// True for a variable viewing a global (never passed by reference: a
    /// callee may name the same global, and Fortran forbids that aliasing).
    fn is_global(&self, var: VarId) -> bool {
        matches!(self.b.proc().var(var).storage, Storage::Global(..))
    }

    /// A writable scalar of type `ty` not in `exclude`, declaring a local
    /// when there is none (or sometimes anyway).
    fn scalar_target(&mut self, ty: Type, exclude: &[VarId]) -> VarId {
        let found =
            self.vars_where(|v, var, r| r == Role::Scalar && var.ty == ty && !exclude.contains(&v));
        if found.is_empty() || self.rng.chance(5) {
            let name = format!("s{}", self.b.proc().vars.len());
            return self.add_var(Var::scalar(name, ty), Role::Scalar, false);
        }
        self.rng.pick(&found)
    }

    fn arrays_of(&self, ty: Option<Type>) -> Vec<VarId> {
        self.vars_where(|_, var, r| r == Role::Array && ty.is_none_or(|t| var.ty == t))
    }

    // ----- values ------------------------------------------------------------

    fn start_block(&mut self, block: adjit::ir::BlockId) {
        self.b.switch_to_block(block);
        self.pool.clear();
    }

    fn remember(&mut self, v: Value) -> Value {
        self.pool.push(v);
        v
    }

    fn konst(&mut self, ty: Type) -> Value {
        let v = match ty {
            Type::F32 | Type::F64 => {
                let x = self.rng.float();
                self.b.fconst(ty, x)
            }
            Type::Bool => {
                let x = self.rng.chance(50);
                self.b.bconst(x)
            }
            _ => {
                let x = self.rng.int_of(ty);
                self.b.iconst(ty, x)
            }
        };
        self.remember(v)
    }

    /// An expression of type `ty` at most `depth` operators deep.
    fn expr(&mut self, ty: Type, depth: u32) -> Value {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        let v = match ty {
            Type::Bool => self.bool_expr(depth),
            Type::I32 | Type::I64 => self.int_expr(ty, depth),
            _ => self.float_expr(ty, depth),
        };
        self.remember(v)
    }

    fn leaf(&mut self, ty: Type) -> Value {
        let pooled: Vec<Value> = self
            .pool
            .iter()
            .copied()
            .filter(|&v| self.b.value_type(v) == Some(ty))
            .collect();
        match self.rng.below(4) {
            0 if !pooled.is_empty() => self.rng.pick(&pooled),
            1 => {
                let scalars = self
                    .vars_where(|_, var, r| r != Role::Array && var.ty == ty && !var.is_array());
                if scalars.is_empty() {
                    return self.konst(ty);
                }
                let var = self.rng.pick(&scalars);
                let v = self.b.load(var);
                self.remember(v)
            }
            2 => {
                let arrays = self.arrays_of(Some(ty));
                if arrays.is_empty() || self.subscript_depth >= 2 {
                    return self.konst(ty);
                }
                let var = self.rng.pick(&arrays);
                let index = self.subscripts(var);
                let v = self.b.load_elem(var, index);
                self.remember(v)
            }
            _ => self.konst(ty),
        }
    }

    fn bool_expr(&mut self, depth: u32) -> Value {
        match self.rng.below(5) {
            0 | 1 => {
                let ty = self.rng.pick(&SCALAR_TYPES);
                let a = self.expr(ty, depth - 1);
                let b = self.expr(ty, depth - 1);
                let op = self.rng.pick(&CMP_OPS);
                self.b.cmp(op, a, b)
            }
            2 => {
                let a = self.expr(Type::Bool, depth - 1);
                let b = self.expr(Type::Bool, depth - 1);
                let op = self.rng.pick(&LOGICAL_BINARY);
                self.b.binary(op, a, b)
            }
            3 => {
                let a = self.expr(Type::Bool, depth - 1);
                self.b.unary(UnaryOp::Not, a)
            }
            _ => self.convert_or_select(Type::Bool, depth),
        }
    }

    fn int_expr(&mut self, ty: Type, depth: u32) -> Value {
        match self.rng.below(7) {
            0 => {
                let op = self.rng.pick(&[UnaryOp::Neg, UnaryOp::Abs]);
                let a = self.expr(ty, depth - 1);
                self.b.unary(op, a)
            }
            1..=3 => {
                let op = self.rng.pick(&NUMERIC_BINARY);
                let a = self.expr(ty, depth - 1);
                let b = self.expr(ty, depth - 1);
                self.int_binary(op, a, b, ty)
            }
            4 => {
                let arrays = self.arrays_of(None);
                if arrays.is_empty() {
                    return self.convert_or_select(ty, depth);
                }
                let var = self.rng.pick(&arrays);
                let rank = self.b.proc().var(var).dims.len();
                let dim = self.rng.below(rank) as u32;
                let v = if self.rng.chance(50) {
                    self.b.dim_lower(var, dim)
                } else {
                    self.b.dim_extent(var, dim)
                };
                self.fit_int(v, ty)
            }
            _ => self.convert_or_select(ty, depth),
        }
    }

    /// An integer binary operation whose divisor (or `**` base) is made
    /// non-zero unless the options leave it unprotected.
    fn int_binary(&mut self, op: BinaryOp, a: Value, b: Value, ty: Type) -> Value {
        let unprotected = self.rng.chance(self.options.unprotected_divisor_percent);
        match op {
            BinaryOp::Div | BinaryOp::Mod | BinaryOp::Modulo if !unprotected => {
                let b = self.non_zero(b, ty);
                self.b.binary(op, a, b)
            }
            BinaryOp::Pow if !unprotected => {
                let a = self.non_zero(a, ty);
                self.b.binary(op, a, b)
            }
            _ => self.b.binary(op, a, b),
        }
    }

    /// `if x == 0 { 1 } else { x }`.
    fn non_zero(&mut self, x: Value, ty: Type) -> Value {
        let zero = self.b.iconst(ty, 0);
        let one = self.b.iconst(ty, 1);
        let is_zero = self.b.cmp(CmpOp::Eq, x, zero);
        self.b.select(is_zero, one, x)
    }

    fn float_expr(&mut self, ty: Type, depth: u32) -> Value {
        match self.rng.below(7) {
            0 | 1 => {
                let op = self.rng.pick(&FLOAT_UNARY);
                let a = self.expr(ty, depth - 1);
                self.b.unary(op, a)
            }
            2 | 3 => {
                let op = self.rng.pick(&NUMERIC_BINARY);
                if self.options.excluded_float_binary.contains(&op) {
                    return self.leaf(ty);
                }
                let a = self.expr(ty, depth - 1);
                let b = self.expr(ty, depth - 1);
                self.b.binary(op, a, b)
            }
            4 => {
                let a = self.expr(ty, depth - 1);
                let int_ty = self.rng.pick(&INT_TYPES);
                let n = self.expr(int_ty, depth - 1);
                self.b.binary(BinaryOp::PowI, a, n)
            }
            5 => {
                let a = self.expr(ty, depth - 1);
                let b = self.expr(ty, depth - 1);
                self.b.binary(BinaryOp::Atan2, a, b)
            }
            _ => self.convert_or_select(ty, depth),
        }
    }

    /// A conversion into `ty` from a random allowed type, or a select.
    fn convert_or_select(&mut self, ty: Type, depth: u32) -> Value {
        if self.rng.chance(40) {
            let c = self.expr(Type::Bool, depth - 1);
            let a = self.expr(ty, depth - 1);
            let b = self.expr(ty, depth - 1);
            return self.b.select(c, a, b);
        }
        let from = loop {
            let from = self.rng.pick(&SCALAR_TYPES);
            let bool_float =
                (from == Type::Bool && ty.is_float()) || (from.is_float() && ty == Type::Bool);
            if !bool_float {
                break from;
            }
        };
        let x = self.expr(from, depth - 1);
        let rounding = self.rng.pick(&ROUNDINGS);
        self.b.convert(x, ty, rounding)
    }

    /// Converts an integer value to the integer type `ty` if needed.
    fn fit_int(&mut self, v: Value, ty: Type) -> Value {
        if self.b.value_type(v) == Some(ty) {
            v
        } else {
            self.b.convert(v, ty, Rounding::Trunc)
        }
    }

    /// In-range subscripts for every dimension of an array.
    fn subscripts(&mut self, var: VarId) -> Vec<Value> {
        let dims = self.b.proc().var(var).dims.clone();
        (0..dims.len())
            .map(|d| self.subscript(var, d, &dims[d]))
            .collect()
    }

    fn subscript(&mut self, var: VarId, d: usize, dim: &Dim) -> Value {
        let index_ty = self.rng.pick(&INT_TYPES);
        let constant = match (
            dim.lower.as_const(),
            dim.upper.as_ref().and_then(Bound::as_const),
        ) {
            (Some(l), Some(u)) if self.rng.chance(40) => Some(self.rng.range(l, u)),
            _ => None,
        };
        if let Some(c) = constant {
            return self.b.iconst(index_ty, c);
        }
        let lower = self.b.dim_lower(var, d as u32);
        let extent = self.b.dim_extent(var, d as u32);
        let e_ty = self.rng.pick(&INT_TYPES);
        self.subscript_depth += 1;
        let e = self.expr(e_ty, 1);
        self.subscript_depth -= 1;
        let e = self.fit_int(e, Type::I64);
        let offset = self.b.binary(BinaryOp::Modulo, e, extent);
        let index = self.b.binary(BinaryOp::Add, lower, offset);
        self.fit_int(index, index_ty)
    }

    // ----- statements --------------------------------------------------------

    fn next_line(&mut self) {
        self.line += 1;
        self.b.set_span(Span {
            file: 0,
            line: self.line,
            col: 1 + self.nesting as u32 * 2,
        });
    }

    fn stmts(&mut self, count: usize) {
        for _ in 0..count {
            self.stmt();
        }
    }

    fn nested_stmts(&mut self) {
        self.nesting += 1;
        let count = self.rng.below(self.options.max_stmts.div_ceil(2) + 1);
        self.stmts(count);
        self.nesting -= 1;
    }

    fn stmt(&mut self) {
        self.next_line();
        let compound = self.nesting < self.options.max_nesting;
        let clean = self.options.fault == Fault::None;
        match self.rng.below(100) {
            0..=29 => self.assign_scalar(),
            30..=49 => self.assign_elem(),
            50..=57 if compound => self.if_stmt(),
            58..=65 if compound => self.loop_stmt(),
            66..=70 if compound => self.switch_stmt(),
            71..=80 => self.call_stmt(),
            81..=87 => self.push_pop(compound),
            88..=90 if clean => {
                let stack = self.rng.pick(&STACKS);
                let v = self.stack_value(stack);
                self.b.push(stack, v);
            }
            91..=92 if clean => self.early_return(),
            _ if self.rng.chance(self.options.stop_percent * 10) => self.conditional_stop(),
            _ => self.assign_scalar(),
        }
    }

    fn assign_scalar(&mut self) {
        let ty = self.rng.pick(&SCALAR_TYPES);
        let v = self.expr(ty, 3);
        let target = self.scalar_target(ty, &[]);
        self.b.store(target, v);
    }

    fn assign_elem(&mut self) {
        let arrays = self.arrays_of(None);
        if arrays.is_empty() {
            return self.assign_scalar();
        }
        let var = self.rng.pick(&arrays);
        let ty = self.b.proc().var(var).ty;
        let index = self.subscripts(var);
        let v = self.expr(ty, 3);
        self.b.store_elem(var, index, v);
    }

    fn if_stmt(&mut self) {
        let cond = self.expr(Type::Bool, 2);
        let then_block = self.b.create_block();
        let else_block = self.b.create_block();
        let join = self.b.create_block();
        self.b.branch(cond, then_block, else_block);
        self.start_block(then_block);
        self.nested_stmts();
        self.b.jump(join);
        self.start_block(else_block);
        if self.rng.chance(50) {
            self.nested_stmts();
        }
        self.b.jump(join);
        self.start_block(join);
    }

    /// A counted loop `k = 0; while k < trips { body; k = k + 1 }`, tested at
    /// the top or (running at least once) at the bottom.
    fn loop_stmt(&mut self) {
        let ty = self.rng.pick(&INT_TYPES);
        let trips = self.trip_count(ty);
        let name = format!("_k{}", self.b.proc().vars.len());
        let counter = self.add_var(Var::scalar(name, ty), Role::Counter, false);
        let name = format!("_n{}", self.b.proc().vars.len());
        let limit = self.add_var(Var::scalar(name, ty), Role::Counter, false);
        self.b.store(limit, trips);
        let zero = self.b.iconst(ty, 0);
        self.b.store(counter, zero);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let test_at_top = self.rng.chance(60);
        self.b.jump(if test_at_top { header } else { body });
        self.start_block(header);
        let k = self.b.load(counter);
        let n = self.b.load(limit);
        let more = self.b.cmp(CmpOp::Lt, k, n);
        self.b.branch(more, body, exit);
        self.start_block(body);
        self.nested_stmts();
        let k = self.b.load(counter);
        let one = self.b.iconst(ty, 1);
        let k1 = self.b.binary(BinaryOp::Add, k, one);
        self.b.store(counter, k1);
        if test_at_top {
            self.b.jump(header);
        } else {
            let n = self.b.load(limit);
            let more = self.b.cmp(CmpOp::Lt, k1, n);
            self.b.branch(more, body, exit);
        }
        self.start_block(exit);
    }

    /// A small trip count of type `ty`: a constant, a size parameter, or
    /// `modulo(e, 4)`.
    fn trip_count(&mut self, ty: Type) -> Value {
        let sizes = self.size_params();
        match self.rng.below(3) {
            0 if !sizes.is_empty() => {
                let n = self.rng.pick(&sizes);
                let v = self.b.load(n);
                self.fit_int(v, ty)
            }
            1 => {
                let e = self.expr(ty, 2);
                let four = self.b.iconst(ty, 4);
                self.b.binary(BinaryOp::Modulo, e, four)
            }
            _ => {
                let c = self.rng.range(0, 3);
                self.b.iconst(ty, c)
            }
        }
    }

    fn switch_stmt(&mut self) {
        let ty = self.rng.pick(&INT_TYPES);
        let selector = if self.rng.chance(50) {
            let e = self.expr(ty, 2);
            let five = self.b.iconst(ty, 5);
            let m = self.b.binary(BinaryOp::Modulo, e, five);
            let one = self.b.iconst(ty, 1);
            self.b.binary(BinaryOp::Sub, m, one)
        } else {
            self.expr(ty, 2)
        };
        let join = self.b.create_block();
        let targets: Vec<_> = (0..1 + self.rng.below(3))
            .map(|_| self.b.create_block())
            .collect();
        let default = self.b.create_block();
        let mut cases = Vec::new();
        for _ in 0..1 + self.rng.below(4) {
            let key = match self.rng.below(10) {
                0 if ty == Type::I32 => (1i64 << 32) + self.rng.range(-1, 3),
                1 => self.rng.int_of(ty),
                _ => self.rng.range(-1, 3),
            };
            let target = self.rng.pick(&targets);
            cases.push((key, target));
        }
        self.b.switch(selector, cases, default);
        for block in targets.into_iter().chain([default]) {
            self.start_block(block);
            self.nested_stmts();
            self.b.jump(join);
        }
        self.start_block(join);
    }

    fn early_return(&mut self) {
        let cond = self.expr(Type::Bool, 2);
        let out = self.b.create_block();
        let rest = self.b.create_block();
        self.b.branch(cond, out, rest);
        self.start_block(out);
        self.b.ret();
        self.start_block(rest);
    }

    fn conditional_stop(&mut self) {
        let cond = self.expr(Type::Bool, 2);
        let stop = self.b.create_block();
        let rest = self.b.create_block();
        self.b.branch(cond, stop, rest);
        self.start_block(stop);
        let message = self
            .rng
            .chance(50)
            .then(|| format!("at line {}", self.line));
        self.b.fail(RuntimeErrorKind::Stop(message));
        self.start_block(rest);
    }

    /// A value of a type the stack accepts.
    fn stack_value(&mut self, stack: StackKind) -> Value {
        let ty = self.stack_type(stack);
        self.expr(ty, 2)
    }

    fn stack_type(&mut self, stack: StackKind) -> Type {
        match stack {
            StackKind::Value => self.rng.pick(&FLOAT_TYPES),
            _ => self.rng.pick(&[Type::I32, Type::I64, Type::Bool]),
        }
    }

    /// `push v; <balanced statements>; target = pop` (popped as any type the
    /// stack accepts).
    fn push_pop(&mut self, compound: bool) {
        let stack = self.rng.pick(&STACKS);
        let v = self.stack_value(stack);
        self.b.push(stack, v);
        if compound {
            self.nested_stmts();
            self.next_line();
        }
        let ty = self.stack_type(stack);
        let popped = self.b.pop(stack, ty);
        let target = self.scalar_target(ty, &[]);
        self.b.store(target, popped);
    }

    fn call_stmt(&mut self) {
        if self.callees.is_empty() {
            return self.assign_scalar();
        }
        let callee = self.rng.below(self.callees.len());
        self.emit_call(callee, None);
    }

    /// Calls `callee_id` with random arguments, except that the argument of
    /// parameter `forced.0` is `forced.1`.
    fn emit_call(&mut self, callee_id: usize, forced: Option<(usize, CallArg)>) {
        let callees = self.callees;
        let callee = &callees[callee_id];
        let callee_roles = &self.callee_roles[callee_id];
        // Size parameters first: the storage needed by array parameters
        // depends on them.
        let mut size_args: Vec<Option<SizeArg>> = vec![None; callee.vars.len()];
        let own_sizes = self.size_params();
        for &p in &callee.params {
            if callee_roles.0[p.index()] == Role::Size {
                size_args[p.index()] = Some(if !own_sizes.is_empty() && self.rng.chance(40) {
                    SizeArg::Forward(self.rng.pick(&own_sizes))
                } else {
                    SizeArg::Const(self.rng.range(SIZE_MIN, SIZE_MAX))
                });
            }
        }
        let mut by_reference: Vec<VarId> = Vec::new();
        if let Some((_, CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _))) = &forced
        {
            by_reference.push(*v);
        }
        let mut args = Vec::new();
        for (position, &p) in callee.params.iter().enumerate() {
            if let Some((forced_position, arg)) = &forced {
                if *forced_position == position {
                    args.push(arg.clone());
                    continue;
                }
            }
            let formal = callee.var(p);
            let ty = formal.ty;
            let arg = match (callee_roles.0[p.index()], size_args[p.index()]) {
                (Role::Size, Some(SizeArg::Const(c))) => CallArg::Value(self.b.iconst(ty, c)),
                (Role::Size, Some(SizeArg::Forward(n))) => {
                    let v = self.b.load(n);
                    CallArg::Value(self.fit_int(v, ty))
                }
                (Role::Array, _) => {
                    let needed = units_at(callee, p, &|v| match size_args[v.index()] {
                        Some(SizeArg::Const(c)) => c,
                        _ => SIZE_MAX,
                    });
                    let assumed = formal.dims.iter().any(|d| d.upper.is_none());
                    self.array_arg(ty, needed, assumed, &mut by_reference)
                }
                _ => self.scalar_arg(ty, &mut by_reference),
            };
            args.push(arg);
        }
        self.b.call(ProcId(callee_id as u32), args);
    }

    /// An actual argument for a scalar formal of type `ty`.
    fn scalar_arg(&mut self, ty: Type, by_reference: &mut Vec<VarId>) -> CallArg {
        match self.rng.below(3) {
            0 => {
                let var = self.scalar_target(ty, by_reference);
                if self.is_global(var) {
                    return CallArg::Value(self.expr(ty, 2));
                }
                by_reference.push(var);
                CallArg::Var(var)
            }
            1 => {
                let arrays: Vec<VarId> = self
                    .arrays_of(Some(ty))
                    .into_iter()
                    .filter(|&v| !by_reference.contains(&v) && !self.is_global(v))
                    .collect();
                if arrays.is_empty() {
                    return CallArg::Value(self.expr(ty, 2));
                }
                let var = self.rng.pick(&arrays);
                by_reference.push(var);
                CallArg::Elem(var, self.subscripts(var))
            }
            _ => CallArg::Value(self.expr(ty, 2)),
        }
    }

    /// An actual argument for an array formal of type `ty` needing `needed`
    /// elements (assumed size: any tail of at least one element).
    fn array_arg(
        &mut self,
        ty: Type,
        needed: usize,
        assumed: bool,
        by_reference: &mut Vec<VarId>,
    ) -> CallArg {
        let min_size = |_: VarId| SIZE_MIN;
        let proc = self.b.proc();
        let big_enough: Vec<VarId> = self
            .arrays_of(Some(ty))
            .into_iter()
            .filter(|&v| !by_reference.contains(&v) && !self.is_global(v))
            .filter(|&v| units_at(proc, v, &min_size) >= needed)
            .collect();
        let choice = self.rng.below(4);
        let scalar = (choice == 0 && needed <= 1)
            .then(|| self.scalar_target(ty, by_reference))
            .filter(|&v| !self.is_global(v));
        let arg = if let Some(var) = scalar {
            CallArg::Var(var)
        } else if choice == 1 && assumed && !big_enough.is_empty() {
            let var = self.rng.pick(&big_enough);
            CallArg::Elem(var, self.subscripts(var))
        } else if !big_enough.is_empty() && !self.rng.chance(10) {
            CallArg::Var(self.rng.pick(&big_enough))
        } else {
            let lower = self.rng.range(-2, 2);
            let extent = needed.max(1) as i64 + self.rng.range(0, 2);
            let name = format!("w{}", self.b.proc().vars.len());
            let var = Var {
                name,
                ty,
                dims: vec![ProcBuilder::const_dim(lower, lower + extent - 1)],
                char_len: None,
                storage: Storage::Local,
            };
            CallArg::Var(self.add_var(var, Role::Array, false))
        };
        match &arg {
            CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) => {
                by_reference.push(*v)
            }
            CallArg::Value(_) => {}
        }
        arg
    }

    // ----- planted faults ------------------------------------------------------

    /// Appends, at the top level of the procedure, one statement that must
    /// fail with `fault`; returns its span.
    fn plant_fault(&mut self, fault: Fault) -> Span {
        self.nesting = 0;
        self.next_line();
        match fault {
            Fault::None => {}
            Fault::IndexOutOfBounds => self.out_of_bounds_access(),
            Fault::StackUnderflow => {
                let stack = self.rng.pick(&STACKS);
                let ty = self.stack_type(stack);
                let popped = self.b.pop(stack, ty);
                let target = self.scalar_target(ty, &[]);
                self.b.store(target, popped);
            }
            Fault::DivideByZero => {
                let ty = self.rng.pick(&INT_TYPES);
                let a = self.expr(ty, 2);
                let zero = if self.rng.chance(50) {
                    self.b.iconst(ty, 0)
                } else {
                    let x = self.expr(ty, 1);
                    self.b.binary(BinaryOp::Sub, x, x)
                };
                let v = match self.rng.below(4) {
                    0 => self.b.binary(BinaryOp::Div, a, zero),
                    1 => self.b.binary(BinaryOp::Mod, a, zero),
                    2 => self.b.binary(BinaryOp::Modulo, a, zero),
                    _ => {
                        let minus = self.b.iconst(ty, -1 - self.rng.range(0, 2));
                        self.b.binary(BinaryOp::Pow, zero, minus)
                    }
                };
                let target = self.scalar_target(ty, &[]);
                self.b.store(target, v);
            }
        }
        self.b.span()
    }

    /// A load, store or element argument with one subscript just outside
    /// its dimension (the others in range).
    fn out_of_bounds_access(&mut self) {
        let mut arrays = self.arrays_of(None);
        if arrays.is_empty() {
            arrays.push(self.random_array(format!("w{}", self.b.proc().vars.len()), false));
        }
        let var = self.rng.pick(&arrays);
        let ty = self.b.proc().var(var).ty;
        let mut index = self.subscripts(var);
        let d = self.rng.below(index.len());
        let lower = self.b.dim_lower(var, d as u32);
        let e = self.expr(Type::I64, 1);
        let three = self.b.iconst(Type::I64, 3);
        let slack = self.b.binary(BinaryOp::Modulo, e, three);
        let bad = if self.rng.chance(50) {
            let one = self.b.iconst(Type::I64, 1);
            let below = self.b.binary(BinaryOp::Sub, lower, one);
            self.b.binary(BinaryOp::Sub, below, slack)
        } else {
            let extent = self.b.dim_extent(var, d as u32);
            let past = self.b.binary(BinaryOp::Add, lower, extent);
            self.b.binary(BinaryOp::Add, past, slack)
        };
        index[d] = bad;
        match self.rng.below(3) {
            0 => {
                let v = self.b.load_elem(var, index);
                let target = self.scalar_target(ty, &[]);
                self.b.store(target, v);
            }
            1 => {
                let v = self.expr(ty, 1);
                self.b.store_elem(var, index, v);
            }
            _ => match self.element_formal(ty) {
                Some((callee, position)) => {
                    self.emit_call(callee, Some((position, CallArg::Elem(var, index))))
                }
                None => {
                    let v = self.b.load_elem(var, index);
                    let target = self.scalar_target(ty, &[]);
                    self.b.store(target, v);
                }
            },
        }
    }

    /// A callee parameter of type `ty` that accepts an element argument (a
    /// scalar or an assumed-size array), as `(callee, position)`.
    fn element_formal(&mut self, ty: Type) -> Option<(usize, usize)> {
        let mut found = Vec::new();
        for (c, callee) in self.callees.iter().enumerate() {
            for (position, &p) in callee.params.iter().enumerate() {
                let formal = callee.var(p);
                let accepts = match self.callee_roles[c].0[p.index()] {
                    Role::Scalar => true,
                    Role::Array => formal.dims.iter().any(|d| d.upper.is_none()),
                    _ => false,
                };
                if accepts && formal.ty == ty {
                    found.push((c, position));
                }
            }
        }
        (!found.is_empty()).then(|| self.rng.pick(&found))
    }
}
