//! The code-list IR: what every other part of adjit produces or consumes.
//!
//! It depends on nothing else in adjit, and every other part depends on it.
//!
//! A [`Module`] holds [`Proc`]s (procedures) and [`Global`]s (storage that
//! outlives a call: module variables, SAVE and DATA variables). A procedure
//! owns three arenas, each addressed by a typed handle:
//!
//! * **variables** ([`VarId`] → [`Var`]): named, typed, mutable storage, scalar
//!   or array (column-major, bounds given by [`Bound`] expressions evaluated
//!   once at procedure entry). Parameters are passed by reference. Variables
//!   are the only thing that lives across statements and blocks.
//! * **instructions** ([`Value`] → [`InstData`]): every instruction is stored
//!   once in the procedure's instruction arena; an instruction that produces a
//!   result has a [`Type`] and its handle doubles as the SSA value it defines.
//!   Values are defined once and used only later in the *same block*.
//! * **blocks** ([`BlockId`] → [`Block`]): a list of instructions and a
//!   [`Terminator`]. Control flow between blocks is an arbitrary CFG.
//!
//! This is "statement-level SSA" in the sense of the source papers: each
//! Fortran statement becomes a short code list `v_j = phi_j(v_i)` ending in
//! stores. Every instruction carries the [`Span`] of the statement it came
//! from.
//!
//! # Meaning of every instruction
//!
//! The semantics are documented on [`Inst`], [`UnaryOp`], [`BinaryOp`] and
//! [`Terminator`]; the interpreter ([`crate::interp`]) is the executable
//! definition and the Cranelift lowering must agree with it.

use std::collections::BTreeSet;
use std::fmt;

/// A scalar type of a value or of a variable's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// 32-bit two's complement integer.
    I32,
    /// 64-bit two's complement integer.
    I64,
    /// A truth value (stored as one byte, 0 or 1).
    Bool,
    /// One byte of character data. Only variables have this element type;
    /// characters are manipulated by [`Inst::CharAssign`] and
    /// [`Inst::CharCompare`], never as SSA values.
    Char,
}

impl Type {
    /// True for `F32` and `F64`.
    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }
    /// True for `I32` and `I64`.
    pub fn is_int(self) -> bool {
        matches!(self, Type::I32 | Type::I64)
    }
    /// Size in bytes of one element of this type in memory.
    pub fn size(self) -> usize {
        match self {
            Type::F32 | Type::I32 => 4,
            Type::F64 | Type::I64 => 8,
            Type::Bool | Type::Char => 1,
        }
    }
    /// The spelling used by the printer.
    pub fn name(self) -> &'static str {
        match self {
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::Bool => "bool",
            Type::Char => "char",
        }
    }
}

/// A position in the source a construct came from.
///
/// `file` indexes [`Module::files`]; lines and columns are 1-based. The
/// default span (all zeros) means "no source position".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Index into [`Module::files`].
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            /// The handle as an index into its arena.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

handle!(
    /// A procedure of a [`Module`].
    ProcId,
    "proc"
);
handle!(
    /// A global variable of a [`Module`].
    GlobalId,
    "g"
);
handle!(
    /// A variable of a [`Proc`].
    VarId,
    "%"
);
handle!(
    /// An instruction of a [`Proc`], and the SSA value it defines.
    Value,
    "v"
);
handle!(
    /// A basic block of a [`Proc`].
    BlockId,
    "bb"
);

/// A compilation unit: procedures that may call each other, and globals.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Source file names, indexed by [`Span::file`].
    pub files: Vec<String>,
    /// Procedures, indexed by [`ProcId`].
    pub procs: Vec<Proc>,
    /// Global storage, indexed by [`GlobalId`].
    pub globals: Vec<Global>,
    /// The globals holding PRIVATE module variables and named constants:
    /// code outside their module cannot name them (a Fortran back end
    /// keeps its own copy).
    pub private_globals: BTreeSet<GlobalId>,
    /// The globals holding PROTECTED module variables: code outside their
    /// module may read but not define them (a Fortran back end cannot emit
    /// a definition of one).
    pub protected_globals: BTreeSet<GlobalId>,
}

impl Module {
    /// Looks a procedure up by (case-insensitive) name.
    pub fn find_proc(&self, name: &str) -> Option<ProcId> {
        self.procs
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
            .map(|i| ProcId(i as u32))
    }
    /// The procedure behind a handle.
    pub fn proc(&self, id: ProcId) -> &Proc {
        &self.procs[id.index()]
    }
    /// Adds a procedure and returns its handle.
    pub fn add_proc(&mut self, proc: Proc) -> ProcId {
        self.procs.push(proc);
        ProcId(self.procs.len() as u32 - 1)
    }
    /// Adds a global and returns its handle.
    pub fn add_global(&mut self, global: Global) -> GlobalId {
        self.globals.push(global);
        GlobalId(self.globals.len() as u32 - 1)
    }
}

/// Storage that lives as long as the compiled module: module variables,
/// SAVE variables, variables initialised by DATA.
#[derive(Clone, Debug)]
pub struct Global {
    /// Name for diagnostics and printing (for example `mymod::counter`).
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Constant `(lower, upper)` bounds per dimension; empty for a scalar.
    pub dims: Vec<(i64, i64)>,
    /// Length of each element for `Type::Char`, else 1.
    pub char_len: i64,
    /// Initial values in column-major order, one per storage unit (one per
    /// element, or one `Const::Char` per byte for characters); empty means
    /// all zero (blank for characters). Shorter than the storage: the rest
    /// is zero (blank).
    pub init: Vec<Const>,
}

impl Global {
    /// Number of elements.
    pub fn len(&self) -> i64 {
        self.dims.iter().map(|(l, u)| (u - l + 1).max(0)).product()
    }
    /// True when the global has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A constant scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    /// A floating-point constant (its type says whether f32 or f64).
    Float(f64),
    /// An integer constant.
    Int(i64),
    /// A truth value.
    Bool(bool),
    /// One character byte.
    Char(u8),
}

/// One procedure: parameters, variables, instructions and a CFG of blocks.
#[derive(Clone, Debug, Default)]
pub struct Proc {
    /// Name (lower case, as the user calls it).
    pub name: String,
    /// Parameters in call order; each is a variable with
    /// [`Storage::Param`]. Passed by reference.
    pub params: Vec<VarId>,
    /// For a FUNCTION: the parameter that receives the result (always the last
    /// of `params`). Callers pass a scalar slot for it.
    pub result: Option<VarId>,
    /// For a FUNCTION returning an array: the parameter that receives it
    /// (the last of `params`, given by the caller; `result` is `None`).
    pub array_result: Option<VarId>,
    /// Variable arena.
    pub vars: Vec<Var>,
    /// Instruction arena (also the value arena).
    pub insts: Vec<InstData>,
    /// Block arena. Block 0 is the entry block.
    pub blocks: Vec<Block>,
    /// Where the procedure was declared.
    pub span: Span,
    /// The Fortran MODULE that contains the procedure (lower case), for
    /// tools that call it from Fortran (the gfortran oracle `use`s it);
    /// `None` for external procedures. Code generation ignores it.
    pub module: Option<String>,
    /// True for a PRIVATE module procedure: code outside its module cannot
    /// call it. Code generation ignores it.
    pub private: bool,
    /// Counted DO loops marked for binomial checkpointing of their adjoint
    /// (the source directive `!$AD BINOMIAL-CKP`). Only the adjoint
    /// transform reads them; the interpreter and code generation ignore
    /// them, and a transform that renumbers blocks must remap or drop them.
    pub checkpoints: Vec<CheckpointLoop>,
    /// The spans of CALL statements marked `!$AD NOCHECKPOINT`: the adjoint
    /// reverses them split, whatever the reversal schedule says. Only the
    /// adjoint transform reads them.
    pub split_calls: Vec<Span>,
    /// True when the procedure takes parameters its Fortran source does not
    /// declare (the ALLOCATABLE module and SAVE arrays its callers pass by
    /// descriptor; the allocation statuses, presence flags, extents and
    /// lower bounds of its dummies): Fortran code compiled beside the
    /// original source cannot call it with the IR's arguments. Code
    /// generation ignores it.
    pub hidden_params: bool,
    /// Array parameters (`Storage::Param`, float elements) the procedure
    /// sets to zero on entry, before its first instruction: a whole-array
    /// zero fill of the declared elements (or of the fewer a caller in the
    /// module gave), so what the caller passes in them is never read. The
    /// engine's in-place adjoint sets it on copies of the adjoint's
    /// procedures for the input adjoints it overwrites (instead of clearing
    /// the caller's gradient itself); the interpreter and code generation
    /// honour it (code generation may narrow the fill, see the jit crate's
    /// `first_touch` pass), and no transform reads it.
    pub zeroed_params: Vec<VarId>,
}

/// A counted DO loop whose adjoint reverses its trips by binomial
/// checkpointing (see [`Proc::checkpoints`]). The loop's blocks: `header`
/// tests for another trip and branches to `body` or `exit`; the blocks
/// reached from `body` without passing through `header` are the trip, which
/// ends with `latch` jumping back to `header`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointLoop {
    /// The block that tests for another trip.
    pub header: BlockId,
    /// The first block of a trip.
    pub body: BlockId,
    /// The last block of a trip (increments the DO variable, jumps to
    /// `header`).
    pub latch: BlockId,
    /// Where the loop goes when no trip is left.
    pub exit: BlockId,
    /// An I64 local holding the trip count, stored before the jump to
    /// `header`.
    pub trips: VarId,
    /// An I64 local holding the directive's snapshot count, stored before
    /// the jump to `header`; `None` when the directive gave none.
    pub snapshots: Option<VarId>,
    /// Where the directive was written.
    pub span: Span,
}

impl Proc {
    /// A new procedure with an empty entry block.
    pub fn new(name: impl Into<String>) -> Proc {
        Proc {
            name: name.into(),
            blocks: vec![Block::default()],
            ..Proc::default()
        }
    }
    /// The entry block.
    pub const ENTRY: BlockId = BlockId(0);
    /// The variable behind a handle.
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.index()]
    }
    /// The instruction behind a handle.
    pub fn inst(&self, v: Value) -> &InstData {
        &self.insts[v.index()]
    }
    /// The block behind a handle.
    pub fn block(&self, b: BlockId) -> &Block {
        &self.blocks[b.index()]
    }
    /// The type of the value an instruction defines (None for effects).
    pub fn value_type(&self, v: Value) -> Option<Type> {
        self.insts[v.index()].ty
    }
    /// Adds a variable and returns its handle.
    pub fn add_var(&mut self, var: Var) -> VarId {
        self.vars.push(var);
        VarId(self.vars.len() as u32 - 1)
    }
    /// Adds an empty block (terminated by `Return`) and returns its handle.
    pub fn add_block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        BlockId(self.blocks.len() as u32 - 1)
    }
    /// Looks a variable up by (case-insensitive) name.
    pub fn find_var(&self, name: &str) -> Option<VarId> {
        self.vars
            .iter()
            .position(|v| v.name.eq_ignore_ascii_case(name))
            .map(|i| VarId(i as u32))
    }
    /// Appends an instruction to a block and returns its handle.
    pub fn push_inst(&mut self, block: BlockId, inst: Inst, ty: Option<Type>, span: Span) -> Value {
        self.insts.push(InstData {
            kind: inst,
            ty,
            span,
        });
        let v = Value(self.insts.len() as u32 - 1);
        self.blocks[block.index()].insts.push(v);
        v
    }
    /// Successor blocks of a block, in terminator order.
    pub fn successors(&self, b: BlockId) -> Vec<BlockId> {
        self.blocks[b.index()].term.successors()
    }
    /// Whether block `b` lies on a cycle of the control-flow graph (may run
    /// more than once per call).
    pub fn on_cycle(&self, b: BlockId) -> bool {
        let mut seen = vec![false; self.blocks.len()];
        let mut stack = self.successors(b);
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if seen.get(x.index()) == Some(&false) {
                seen[x.index()] = true;
                stack.extend(self.successors(x));
            }
        }
        false
    }
    /// Whether every path from the entry block to a `Return` passes
    /// through block `b`.
    pub fn on_every_return_path(&self, b: BlockId) -> bool {
        let mut seen = vec![false; self.blocks.len()];
        let mut stack = vec![BlockId(0)];
        while let Some(x) = stack.pop() {
            if x == b || x.index() >= self.blocks.len() {
                continue;
            }
            if std::mem::replace(&mut seen[x.index()], true) {
                continue;
            }
            if self.blocks[x.index()].term == Terminator::Return {
                return false;
            }
            stack.extend(self.successors(x));
        }
        true
    }
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// The n-th argument (0-based), passed by reference.
    Param(u32),
    /// Storage private to one activation of the procedure, zero-initialised
    /// at entry.
    Local,
    /// Module-lifetime storage shared by every procedure naming the global,
    /// viewed from an element offset (0-based, in elements of the global):
    /// COMMON members and EQUIVALENCE partners that overlap live in one
    /// global at their own offsets, so a store through one view is seen
    /// through every other. The variable has the global's element type; its
    /// own dims and char_len (evaluated at entry) give its view of the
    /// global's storage from the offset on, which must be large enough (else
    /// [`RuntimeErrorKind::ArgumentSize`]).
    Global(GlobalId, i64),
    /// An ALLOCATABLE array private to one activation: unallocated at
    /// entry, given storage and bounds by [`Inst::Allocate`], released by
    /// [`Inst::Deallocate`] and at return. Its `dims` give only the rank
    /// (their bounds are ignored). While unallocated its extents read as 0
    /// and its lower bounds as 1, and referencing an element or passing it
    /// to a call is [`RuntimeErrorKind::NotAllocated`]. A character
    /// allocatable has one-character elements (its storage, passed whole,
    /// is character data of run-time length for an assumed-length
    /// parameter).
    Allocatable,
    /// The n-th argument (0-based), an ALLOCATABLE array passed by
    /// descriptor: the caller's [`Storage::Allocatable`] (or
    /// `AllocatableParam`) array of the same type and rank itself, so that
    /// [`Inst::Allocate`], [`Inst::Deallocate`] and reallocation in the
    /// callee change the caller's array (its storage, bounds and allocation
    /// status) and the caller sees them after the call. It behaves as a
    /// [`Storage::Allocatable`] array otherwise (its `dims` give only the
    /// rank), except that it is not released at return. Only a call may
    /// pass it (a host cannot).
    AllocatableParam(u32),
}

impl Storage {
    /// The argument position of a parameter ([`Storage::Param`] or
    /// [`Storage::AllocatableParam`]).
    pub fn param_index(self) -> Option<u32> {
        match self {
            Storage::Param(i) | Storage::AllocatableParam(i) => Some(i),
            _ => None,
        }
    }

    /// The storage of a parameter at position `pos` of the same kind as
    /// this one: [`Storage::AllocatableParam`] for an ALLOCATABLE array
    /// (local or parameter), [`Storage::Param`] otherwise.
    pub fn as_param(self, pos: u32) -> Storage {
        match self {
            Storage::Allocatable | Storage::AllocatableParam(_) => Storage::AllocatableParam(pos),
            _ => Storage::Param(pos),
        }
    }

    /// Whether the variable is an ALLOCATABLE array (a local or one passed
    /// by descriptor): what [`Inst::Allocate`], [`Inst::Deallocate`] and
    /// [`Inst::Allocated`] accept.
    pub fn is_allocatable(self) -> bool {
        matches!(self, Storage::Allocatable | Storage::AllocatableParam(_))
    }
}

/// A named, typed, mutable storage location.
#[derive(Clone, Debug)]
pub struct Var {
    /// Name (lower case). Compiler temporaries start with `_`.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Dimensions; empty for a scalar. Column-major.
    pub dims: Vec<Dim>,
    /// Length of each element when `ty` is `Char`. `None` means 1 for a
    /// local or global, and an assumed length (`CHARACTER*(*)`) for a
    /// parameter: the argument's byte count divided by the element count
    /// (a parameter may not have both an assumed length and an assumed
    /// last dimension). Ignored for other types.
    pub char_len: Option<Bound>,
    /// Where the storage is.
    pub storage: Storage,
}

impl Var {
    /// A scalar local variable.
    pub fn scalar(name: impl Into<String>, ty: Type) -> Var {
        Var {
            name: name.into(),
            ty,
            dims: Vec::new(),
            char_len: None,
            storage: Storage::Local,
        }
    }
    /// True when the variable has dimensions.
    pub fn is_array(&self) -> bool {
        !self.dims.is_empty()
    }
}

/// One dimension of an array variable: inclusive bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    /// Lower bound.
    pub lower: Bound,
    /// Upper bound; `None` when assumed (`a(*)` or `a(:)`, allowed only in
    /// the last dimension of a parameter): the extent then comes from the
    /// length of the argument buffer.
    pub upper: Option<Bound>,
}

/// A bound expression over constants and scalar integer variables of the
/// same procedure, evaluated once at procedure entry (Fortran's
/// specification expressions).
#[derive(Clone, Debug, PartialEq)]
pub enum Bound {
    /// A constant.
    Const(i64),
    /// The entry value of a scalar integer variable (usually a parameter).
    Var(VarId),
    /// Negation.
    Neg(Box<Bound>),
    /// Sum.
    Add(Box<Bound>, Box<Bound>),
    /// Difference.
    Sub(Box<Bound>, Box<Bound>),
    /// Product.
    Mul(Box<Bound>, Box<Bound>),
    /// Truncating quotient (a zero divisor gives 0).
    Div(Box<Bound>, Box<Bound>),
    /// Larger of two.
    Max(Box<Bound>, Box<Bound>),
    /// Smaller of two.
    Min(Box<Bound>, Box<Bound>),
}

impl Bound {
    /// Evaluates the bound given the value of each variable it reads.
    pub fn eval(&self, var: &mut dyn FnMut(VarId) -> i64) -> i64 {
        match self {
            Bound::Const(c) => *c,
            Bound::Var(v) => var(*v),
            Bound::Neg(a) => a.eval(var).wrapping_neg(),
            Bound::Add(a, b) => a.eval(var).wrapping_add(b.eval(var)),
            Bound::Sub(a, b) => a.eval(var).wrapping_sub(b.eval(var)),
            Bound::Mul(a, b) => a.eval(var).wrapping_mul(b.eval(var)),
            Bound::Div(a, b) => {
                let (x, y) = (a.eval(var), b.eval(var));
                if y == 0 {
                    0
                } else {
                    x.wrapping_div(y)
                }
            }
            Bound::Max(a, b) => a.eval(var).max(b.eval(var)),
            Bound::Min(a, b) => a.eval(var).min(b.eval(var)),
        }
    }
    /// The constant value when the bound reads no variable.
    pub fn as_const(&self) -> Option<i64> {
        let mut constant = true;
        let v = self.eval(&mut |_| {
            constant = false;
            0
        });
        constant.then_some(v)
    }
    /// Calls `f` on every variable the bound reads.
    pub fn for_each_var(&self, f: &mut dyn FnMut(VarId)) {
        match self {
            Bound::Const(_) => {}
            Bound::Var(v) => f(*v),
            Bound::Neg(a) => a.for_each_var(f),
            Bound::Add(a, b)
            | Bound::Sub(a, b)
            | Bound::Mul(a, b)
            | Bound::Div(a, b)
            | Bound::Max(a, b)
            | Bound::Min(a, b) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
        }
    }
}

/// An instruction with its result type and source span.
#[derive(Clone, Debug)]
pub struct InstData {
    /// What the instruction does.
    pub kind: Inst,
    /// Type of the defined value; `None` for pure effects.
    pub ty: Option<Type>,
    /// The statement it came from.
    pub span: Span,
}

/// Unary operations. Float operations act on F32 / F64 in the type of the
/// operand (F32 math is done in F32, like gfortran); `Neg` and `Abs` also act
/// on integers; `Not` acts on Bool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (integers wrap).
    Neg,
    /// `|x|`.
    Abs,
    /// Square root (NaN for negative input).
    Sqrt,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Base-10 logarithm.
    Log10,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Arc sine.
    Asin,
    /// Arc cosine.
    Acos,
    /// Arc tangent.
    Atan,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// A special function (error, gamma, Bessel, polygamma functions),
    /// computed by [`crate::special`].
    Special(crate::special::Special),
    /// Round toward minus infinity, result in the float type.
    Floor,
    /// Round toward plus infinity, result in the float type.
    Ceil,
    /// Round toward zero, result in the float type (Fortran AINT).
    Trunc,
    /// Round to nearest, ties away from zero, result in the float type
    /// (Fortran ANINT).
    Round,
    /// Logical negation.
    Not,
}

/// Binary operations. Both operands have the same type, which is also the
/// result type, except `PowI` (float base, integer exponent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// Sum (integers wrap).
    Add,
    /// Difference (integers wrap).
    Sub,
    /// Product (integers wrap).
    Mul,
    /// Quotient; integer division truncates toward zero and a zero divisor is
    /// a runtime error ([`RuntimeErrorKind::DivideByZero`]).
    Div,
    /// `a ** b`: float `pow` (`powf` in the operand type); for integers,
    /// exponentiation by squaring with wrapping products (the algorithm of
    /// [`BinaryOp::PowI`]) and Fortran's rules for negative exponents
    /// (1/a^|b| truncated: 1 when `a` is 1, `±1` when `a` is -1 (1 for an
    /// even exponent), 0 for any other non-zero `a`; a zero base with a
    /// negative exponent is a divide-by-zero error).
    Pow,
    /// Float base to an integer (I32 or I64) power, by repeated squaring.
    /// Result has the base's type. Exactly, in the base's float type:
    ///
    /// ```text
    /// m = |n| (as u64); r = 1; p = x
    /// loop { if m & 1 == 1 { r = r * p }; m >>= 1; if m == 0 { break }; p = p * p }
    /// result = if n < 0 { 1 / r } else { r }
    /// ```
    ///
    /// (so `x**0 = 1` even for NaN `x`).
    PowI,
    /// Smaller of two: `if b < a { b } else { a }`, except that a NaN in `a`
    /// yields `b` (gfortran's MIN returns the other argument when one is NaN).
    Min,
    /// Larger of two: `if b > a { b } else { a }`, except that a NaN in `a`
    /// yields `b`.
    Max,
    /// `atan2(a, b)`.
    Atan2,
    /// Fortran SIGN: `|a|` with the sign of `b` (for floats, the sign bit of
    /// `b`, so `-0.0` counts as negative; for integers `b >= 0` is positive).
    Sign,
    /// Fortran DIM: `Max(a - b, 0)` with the rule of [`BinaryOp::Max`]
    /// (integers: wrapping difference; floats: a NaN difference gives +0,
    /// a -0 difference stays -0).
    Dim,
    /// Fortran MOD: `a - trunc(a / b) * b` (sign of `a`); integer zero
    /// divisor is a runtime error; float uses `fmod`.
    Mod,
    /// Fortran MODULO: `a - floor(a / b) * b` (sign of `b`). Computed as
    /// `r = MOD(a, b); if r != 0 && (r < 0) != (b < 0) { r + b } else { r }`;
    /// integer zero divisor is a runtime error.
    Modulo,
    /// Logical and.
    And,
    /// Logical or.
    Or,
    /// Logical equivalence.
    Eqv,
    /// Logical non-equivalence (xor).
    Neqv,
}

/// Comparison operators (ordered for floats: any comparison with NaN is
/// false except `Ne`, which is true). Integers compare as signed numbers;
/// Bool operands compare with `false < true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Less than.
    Lt,
    /// Less or equal.
    Le,
    /// Greater than.
    Gt,
    /// Greater or equal.
    Ge,
}

/// How a float becomes an integer in [`Inst::Convert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Toward zero (INT, IDINT); also the mode of every other conversion.
    Trunc,
    /// Nearest, ties away from zero (NINT).
    Nearest,
    /// Toward minus infinity (FLOOR).
    Floor,
    /// Toward plus infinity (CEILING).
    Ceil,
}

/// The three runtime stacks of the adjoint (see DESIGN.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackKind {
    /// Floating-point values (stored as f64; an f32 pushed comes back exact).
    /// Only float values are pushed, and popped as F32 or F64.
    Value,
    /// Integers (stored as i64). Int or Bool values are pushed (sign
    /// extended; Bool as 0 / 1) and popped as I32 (wrapping), I64 or Bool
    /// (non-zero is true).
    Integer,
    /// Control-flow records: branch ids, trip counts, predecessor ids
    /// (stored as i64; typed like `Integer`).
    Control,
}

/// A reference to character data: a whole character variable (or one
/// element of a character array) or a literal, optionally restricted to a
/// substring. Substring bounds are integers of any width; `start..=end` must
/// satisfy `1 <= start` and `end <= len` unless it is empty (`end < start`,
/// length 0), else [`RuntimeErrorKind::SubstringOutOfRange`].
#[derive(Clone, Debug, PartialEq)]
pub struct CharRef {
    /// The storage referenced.
    pub base: CharBase,
    /// 1-based first character of a substring (`None`: 1).
    pub start: Option<Value>,
    /// 1-based last character of a substring (`None`: the length).
    pub end: Option<Value>,
}

impl CharRef {
    /// The whole of a scalar character variable.
    pub fn whole(var: VarId) -> CharRef {
        CharRef {
            base: CharBase::Var {
                var,
                index: Vec::new(),
            },
            start: None,
            end: None,
        }
    }

    /// The whole of a character literal (`b""` pads with blanks).
    pub fn literal(text: &[u8]) -> CharRef {
        CharRef {
            base: CharBase::Literal(text.to_vec()),
            start: None,
            end: None,
        }
    }
}

/// Which search [`Inst::CharSearch`] does in its first operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharSearch {
    /// INDEX: an occurrence of the second operand as a substring.
    Index,
    /// SCAN: a character that is in the second operand (a set).
    Scan,
    /// VERIFY: a character that is not in the second operand (a set).
    Verify,
}

impl CharSearch {
    /// The Fortran intrinsic's name.
    pub fn name(self) -> &'static str {
        match self {
            CharSearch::Index => "index",
            CharSearch::Scan => "scan",
            CharSearch::Verify => "verify",
        }
    }
}

/// What a [`CharRef`] points into.
#[derive(Clone, Debug, PartialEq)]
pub enum CharBase {
    /// A character variable; `index` selects an element of an array (empty
    /// for a scalar).
    Var {
        /// The variable.
        var: VarId,
        /// Fortran subscripts, one per dimension.
        index: Vec<Value>,
    },
    /// A literal string.
    Literal(Vec<u8>),
}

/// One step of an I/O statement ([`Inst::Io`]).
#[derive(Clone, Debug, PartialEq)]
pub enum IoOp {
    /// Starts an output statement (PRINT or WRITE to standard output):
    /// list-directed without a format, else the format specification
    /// (the text of a FORMAT statement or a format literal, with its
    /// parentheses).
    BeginWrite(Option<Vec<u8>>),
    /// Transfers a number or truth value to the current output statement.
    Put(Value),
    /// Transfers character data to the current output statement.
    PutChar(CharRef),
    /// Starts (`true`) or ends (`false`) one character item given in
    /// pieces: the characters of the [`IoOp::PutChar`] steps in between
    /// are transferred as a single item (a value of run-time length put
    /// piece by piece takes one edit descriptor, as in Fortran).
    JoinChars(bool),
    /// Ends the output statement: formats the items and writes the
    /// record(s) to the program's output.
    EndWrite,
    /// Starts a list-directed input statement (READ from standard input):
    /// reads the next record.
    BeginRead,
    /// Reads the next value of the current input statement, of the
    /// instruction's type (a number or truth value).
    Get,
    /// Reads the next value of the current input statement into
    /// character data.
    GetChar(CharRef),
    /// Ends the input statement.
    EndRead,
    /// Starts writing the kept record of that name (bytes): the `Put`
    /// steps that follow give its values, and `EndWrite` replaces the
    /// record with them instead of printing them. Kept records hold what a
    /// program keeps between calls made from outside (the allocation of an
    /// ALLOCATABLE module or SAVE array, see [`crate::io::Kept`]).
    BeginKeep(Vec<u8>),
    /// Starts reading the kept record of that name (bytes): the `Get`
    /// steps that follow read its values in order (a record never kept
    /// reads as one logical false), up to `EndRead`.
    BeginRestore(Vec<u8>),
    /// Ends an output statement into character data (an internal file:
    /// WRITE to a CHARACTER variable) instead of the program's output: the
    /// items are formatted into one record, stored blank-padded; a record
    /// longer than the data, or a second record, is an error (IOSTAT
    /// -2, end of record).
    EndWriteTo(CharRef),
    /// Starts an input statement reading the characters of the data (an
    /// internal file: READ from a CHARACTER variable): list-directed
    /// without a format, else under the format specification (as for
    /// [`IoOp::BeginWrite`]). Reading past its end is an end of file.
    BeginReadFrom(CharRef, Option<Vec<u8>>),
    /// Makes the errors of the statement in progress (begun by an earlier
    /// step) its status instead of failures (IOSTAT=): after an error, a
    /// `Get` returns zero and `GetChar` and `EndWriteTo` store nothing.
    CatchErrors,
    /// The status of the statement in progress or last ended (`I32`): 0,
    /// -1 at an end of file, -2 at an end of record, 5010 for a value that
    /// does not read as its item's type (gfortran's IOSTAT values).
    Status,
}

/// An actual argument of a [`Inst::Call`].
#[derive(Clone, Debug, PartialEq)]
pub enum CallArg {
    /// A whole variable, by reference. The callee sees the storage the
    /// variable's declaration describes, even when the variable is itself a
    /// parameter whose actual argument was longer (or the shorter storage a
    /// numeric array parameter was given, see
    /// [`crate::shape::may_be_short`]).
    Var(VarId),
    /// The storage starting at one array element, by reference (Fortran
    /// sequence association: the callee sees the tail of the array's
    /// declared storage).
    Elem(VarId, Vec<Value>),
    /// `len` elements of storage starting at one array element, by
    /// reference (an integer `len`, at least 0 and no more than the tail of
    /// the array's declared storage from that element, else a runtime
    /// error): a contiguous array section (`a(2:n)`, `m(:, j)`) passed
    /// without a copy to a dummy whose last extent is assumed, which sees
    /// exactly the section's elements; of a character array, its `len`
    /// elements' characters given to a dummy of assumed length (an
    /// element of an array of deferred-length strings, stored one
    /// character per element, to a `character(len=*)` dummy).
    Slice(VarId, Vec<Value>, Value),
    /// A value: the caller stores it into a fresh temporary and passes the
    /// temporary's address (writes by the callee are lost).
    Value(Value),
}

/// What an instruction does. Operands are [`Value`]s defined earlier in the
/// same block.
#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    /// A constant of the instruction's type.
    Const(Const),
    /// The value of a scalar variable.
    Load(VarId),
    /// Writes a scalar variable (the value has the variable's type).
    Store(VarId, Value),
    /// The value of an array element. Subscripts are Fortran subscripts
    /// (integers of any width, one per dimension) checked against the bounds
    /// unless bounds checks are off; an out-of-range subscript is a runtime
    /// error ([`RuntimeErrorKind::IndexOutOfBounds`]). With bounds checks
    /// off an out-of-range subscript is the program's error: compiled code
    /// does not check it (as gfortran without `-fcheck=bounds`), while the
    /// interpreter still checks the element lies inside the variable's
    /// storage (column-major offset computed in i64) and reports
    /// `IndexOutOfBounds` when it does not.
    LoadElem(VarId, Vec<Value>),
    /// Writes an array element; subscripts as for `LoadElem`.
    StoreElem(VarId, Vec<Value>, Value),
    /// A unary operation.
    Unary(UnaryOp, Value),
    /// A binary operation.
    Binary(BinaryOp, Value, Value),
    /// A comparison of two values of one type; result Bool.
    Cmp(CmpOp, Value, Value),
    /// Numeric conversion to the instruction's type. Float to integer uses
    /// the rounding mode (results saturate at the integer range, NaN gives
    /// 0); other conversions ignore it (int to float rounds to nearest,
    /// f64 to f32 rounds to nearest, integer narrowing wraps). Bool to
    /// integer gives 0 or 1, integer to Bool is `x != 0`; Bool and floats
    /// do not convert into each other.
    Convert(Value, Rounding),
    /// `if cond { a } else { b }`.
    Select(Value, Value, Value),
    /// The lower bound (as I64) of dimension `dim` (0-based) of an array.
    DimLower(VarId, u32),
    /// The extent (as I64, never negative) of dimension `dim` (0-based).
    DimExtent(VarId, u32),
    /// Calls another procedure of the module. A non-zero status from the
    /// callee propagates (the caller returns it at once). Each argument has
    /// the element type of the corresponding parameter; the callee's shape
    /// is evaluated at its entry and must fit in the storage passed (else
    /// [`RuntimeErrorKind::ArgumentSize`]), except that a numeric array
    /// parameter may be given less storage than it declares (Fortran 77):
    /// referencing an element beyond the storage given is then
    /// [`RuntimeErrorKind::IndexOutOfBounds`] ([`crate::shape::may_be_short`]). Calls nest at most
    /// [`MAX_CALL_DEPTH`] deep (else [`RuntimeErrorKind::CallDepthExceeded`]).
    Call(ProcId, Vec<CallArg>),
    /// Copies character data, blank-padding or truncating to the target
    /// length (Fortran character assignment).
    CharAssign(CharRef, CharRef),
    /// Compares character data after blank-padding the shorter operand;
    /// result Bool.
    CharCompare(CmpOp, CharRef, CharRef),
    /// The length of character data (Fortran LEN of the referenced
    /// variable, element or substring), as I64; an empty substring has
    /// length 0.
    CharLen(CharRef),
    /// Fortran INDEX: the 1-based position of the first occurrence of the
    /// second operand in the first, 0 when there is none, 1 when the second
    /// is empty; as I64 ([`crate::chars::index`]).
    CharIndex(CharRef, CharRef),
    /// Fortran INDEX, SCAN or VERIFY of run-time-length data, from the
    /// front or (`true`) from the back: the 1-based position found, 0 when
    /// there is none; as I64 ([`crate::chars::search`]). LEN_TRIM is
    /// VERIFY of a blank from the back.
    CharSearch(CharSearch, bool, CharRef, CharRef),
    /// One step of an I/O statement ([`IoOp`]); statements run their
    /// steps in order, begin, transfers, end. Formatting and parsing are
    /// defined by [`crate::io`]. An I/O error (a format that does not fit
    /// the items, input that does not parse, the end of the input) is a
    /// runtime error ([`RuntimeErrorKind::Io`], the reason in its detail)
    /// at the step that finds it.
    Io(IoOp),
    /// Gives an unallocated ALLOCATABLE array ([`Storage::is_allocatable`]) fresh storage,
    /// zero-filled, with the `(lower, upper)` bounds given per dimension
    /// (integers of any width; an upper below its lower gives extent 0).
    /// Already allocated: [`RuntimeErrorKind::AlreadyAllocated`]; element
    /// or byte count past 64 bits, or more than the memory limit:
    /// [`RuntimeErrorKind::TooLarge`].
    Allocate(VarId, Vec<(Value, Value)>),
    /// Releases the storage of an allocated [`Storage::Allocatable`]
    /// array; unallocated: [`RuntimeErrorKind::NotAllocated`].
    Deallocate(VarId),
    /// Whether a [`Storage::Allocatable`] array is allocated (Bool).
    Allocated(VarId),
    /// Pushes a value on a runtime stack.
    Push(StackKind, Value),
    /// Pops the top of a runtime stack, converted to the instruction's type.
    /// Popping an empty stack is a runtime error.
    Pop(StackKind),
}

impl Inst {
    /// Whether the instruction names `var` (see [`Inst::map_vars`]).
    pub fn names(&self, var: VarId) -> bool {
        let seen = std::cell::Cell::new(false);
        self.clone().map_vars(|v| {
            seen.set(seen.get() || v == var);
            v
        });
        seen.get()
    }

    /// Whether the instruction reads, writes or passes on `var`'s contents:
    /// names it other than to ask its shape (`DimLower`, `DimExtent`).
    pub fn touches_contents(&self, var: VarId) -> bool {
        !matches!(self, Inst::DimLower(..) | Inst::DimExtent(..)) && self.names(var)
    }

    /// Replaces every variable the instruction names (loads, stores,
    /// bounds, allocation, call arguments, character references) by `f`
    /// of it.
    pub fn map_vars(&mut self, f: impl Fn(VarId) -> VarId) {
        let char_ref = |r: &mut CharRef| {
            if let CharBase::Var { var, .. } = &mut r.base {
                *var = f(*var);
            }
        };
        match self {
            Inst::Load(v)
            | Inst::Store(v, _)
            | Inst::LoadElem(v, _)
            | Inst::StoreElem(v, _, _)
            | Inst::DimLower(v, _)
            | Inst::DimExtent(v, _)
            | Inst::Allocate(v, _)
            | Inst::Deallocate(v)
            | Inst::Allocated(v) => *v = f(*v),
            Inst::Call(_, args) => {
                for a in args {
                    match a {
                        CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) => {
                            *v = f(*v)
                        }
                        CallArg::Value(_) => {}
                    }
                }
            }
            Inst::CharAssign(a, b)
            | Inst::CharCompare(_, a, b)
            | Inst::CharIndex(a, b)
            | Inst::CharSearch(_, _, a, b) => {
                char_ref(a);
                char_ref(b);
            }
            Inst::CharLen(a) => char_ref(a),
            Inst::Io(
                IoOp::PutChar(r)
                | IoOp::GetChar(r)
                | IoOp::EndWriteTo(r)
                | IoOp::BeginReadFrom(r, _),
            ) => char_ref(r),
            Inst::Io(_)
            | Inst::Const(_)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cmp(..)
            | Inst::Convert(..)
            | Inst::Select(..)
            | Inst::Push(..)
            | Inst::Pop(_) => {}
        }
    }

    /// Calls `f` on every value operand, in order, letting it replace the
    /// operand.
    pub fn for_each_operand_mut(&mut self, mut f: impl FnMut(&mut Value)) {
        let char_ref = |r: &mut CharRef, f: &mut dyn FnMut(&mut Value)| {
            if let CharBase::Var { index, .. } = &mut r.base {
                index.iter_mut().for_each(&mut *f);
            }
            r.start.iter_mut().chain(r.end.iter_mut()).for_each(&mut *f);
        };
        match self {
            Inst::Const(_) | Inst::Load(_) | Inst::DimLower(..) | Inst::DimExtent(..) => {}
            Inst::Pop(_) | Inst::Deallocate(_) | Inst::Allocated(_) => {}
            Inst::Allocate(_, bounds) => bounds.iter_mut().for_each(|(l, u)| {
                f(l);
                f(u)
            }),
            Inst::Store(_, v) | Inst::Unary(_, v) | Inst::Convert(v, _) | Inst::Push(_, v) => f(v),
            Inst::LoadElem(_, idx) => idx.iter_mut().for_each(f),
            Inst::StoreElem(_, idx, v) => {
                idx.iter_mut().for_each(&mut f);
                f(v)
            }
            Inst::Binary(_, a, b) | Inst::Cmp(_, a, b) => {
                f(a);
                f(b)
            }
            Inst::Select(c, a, b) => {
                f(c);
                f(a);
                f(b)
            }
            Inst::Call(_, args) => {
                for a in args {
                    match a {
                        CallArg::Var(_) => {}
                        CallArg::Elem(_, idx) => idx.iter_mut().for_each(&mut f),
                        CallArg::Slice(_, idx, len) => {
                            idx.iter_mut().for_each(&mut f);
                            f(len)
                        }
                        CallArg::Value(v) => f(v),
                    }
                }
            }
            Inst::CharAssign(a, b)
            | Inst::CharCompare(_, a, b)
            | Inst::CharIndex(a, b)
            | Inst::CharSearch(_, _, a, b) => {
                char_ref(a, &mut f);
                char_ref(b, &mut f);
            }
            Inst::CharLen(a) => char_ref(a, &mut f),
            Inst::Io(op) => match op {
                IoOp::Put(v) => f(v),
                IoOp::PutChar(r)
                | IoOp::GetChar(r)
                | IoOp::EndWriteTo(r)
                | IoOp::BeginReadFrom(r, _) => char_ref(r, &mut f),
                IoOp::BeginWrite(_)
                | IoOp::JoinChars(_)
                | IoOp::CatchErrors
                | IoOp::Status
                | IoOp::EndWrite
                | IoOp::BeginRead
                | IoOp::Get
                | IoOp::EndRead
                | IoOp::BeginKeep(_)
                | IoOp::BeginRestore(_) => {}
            },
        }
    }

    /// A copy with every value operand replaced by `f` of it.
    pub fn map_operands(&self, mut f: impl FnMut(Value) -> Value) -> Inst {
        let mut copy = self.clone();
        copy.for_each_operand_mut(|v| *v = f(*v));
        copy
    }

    /// Calls `f` on every value operand, in order.
    pub fn for_each_operand(&self, mut f: impl FnMut(Value)) {
        let char_ref = |r: &CharRef, f: &mut dyn FnMut(Value)| {
            if let CharBase::Var { index, .. } = &r.base {
                index.iter().for_each(|&v| f(v));
            }
            r.start.into_iter().chain(r.end).for_each(&mut *f);
        };
        match self {
            Inst::Const(_) | Inst::Load(_) | Inst::DimLower(..) | Inst::DimExtent(..) => {}
            Inst::Pop(_) | Inst::Deallocate(_) | Inst::Allocated(_) => {}
            Inst::Allocate(_, bounds) => bounds.iter().for_each(|&(l, u)| {
                f(l);
                f(u)
            }),
            Inst::Store(_, v) | Inst::Unary(_, v) | Inst::Convert(v, _) | Inst::Push(_, v) => f(*v),
            Inst::LoadElem(_, idx) => idx.iter().for_each(|&v| f(v)),
            Inst::StoreElem(_, idx, v) => {
                idx.iter().for_each(|&i| f(i));
                f(*v)
            }
            Inst::Binary(_, a, b) | Inst::Cmp(_, a, b) => {
                f(*a);
                f(*b)
            }
            Inst::Select(c, a, b) => {
                f(*c);
                f(*a);
                f(*b)
            }
            Inst::Call(_, args) => {
                for a in args {
                    match a {
                        CallArg::Var(_) => {}
                        CallArg::Elem(_, idx) => idx.iter().for_each(|&v| f(v)),
                        CallArg::Slice(_, idx, len) => {
                            idx.iter().for_each(|&v| f(v));
                            f(*len)
                        }
                        CallArg::Value(v) => f(*v),
                    }
                }
            }
            Inst::CharAssign(a, b)
            | Inst::CharCompare(_, a, b)
            | Inst::CharIndex(a, b)
            | Inst::CharSearch(_, _, a, b) => {
                char_ref(a, &mut f);
                char_ref(b, &mut f);
            }
            Inst::CharLen(a) => char_ref(a, &mut f),
            Inst::Io(op) => match op {
                IoOp::Put(v) => f(*v),
                IoOp::PutChar(r)
                | IoOp::GetChar(r)
                | IoOp::EndWriteTo(r)
                | IoOp::BeginReadFrom(r, _) => char_ref(r, &mut f),
                IoOp::BeginWrite(_)
                | IoOp::JoinChars(_)
                | IoOp::CatchErrors
                | IoOp::Status
                | IoOp::EndWrite
                | IoOp::BeginRead
                | IoOp::Get
                | IoOp::EndRead
                | IoOp::BeginKeep(_)
                | IoOp::BeginRestore(_) => {}
            },
        }
    }
}

/// How a block ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Terminator {
    /// Continue at a block.
    Jump(BlockId),
    /// Two-way branch on a Bool value.
    Branch {
        /// The condition.
        cond: Value,
        /// Taken when true.
        then_dest: BlockId,
        /// Taken when false.
        else_dest: BlockId,
    },
    /// Multi-way branch on an integer value (computed GOTO, control-flow
    /// reversal): the first case whose key equals the value, else `default`.
    Switch {
        /// The selector (any integer type).
        value: Value,
        /// `(key, destination)` pairs.
        cases: Vec<(i64, BlockId)>,
        /// Taken when no key matches.
        default: BlockId,
    },
    /// Return to the caller with status 0.
    #[default]
    Return,
    /// Stop with a runtime error (Fortran STOP, or an unreachable point).
    Fail(RuntimeErrorKind),
}

impl Terminator {
    /// Successor blocks in order.
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Terminator::Jump(b) => vec![*b],
            Terminator::Branch {
                then_dest,
                else_dest,
                ..
            } => vec![*then_dest, *else_dest],
            Terminator::Switch { cases, default, .. } => {
                let mut v: Vec<BlockId> = cases.iter().map(|c| c.1).collect();
                v.push(*default);
                v
            }
            Terminator::Return | Terminator::Fail(_) => Vec::new(),
        }
    }
    /// Replaces every destination block `b` by `to(b)` (block renumbering
    /// when blocks are copied, merged or split).
    pub fn retarget(&mut self, mut to: impl FnMut(BlockId) -> BlockId) {
        match self {
            Terminator::Jump(b) => *b = to(*b),
            Terminator::Branch {
                then_dest,
                else_dest,
                ..
            } => {
                *then_dest = to(*then_dest);
                *else_dest = to(*else_dest);
            }
            Terminator::Switch { cases, default, .. } => {
                for (_, dest) in cases {
                    *dest = to(*dest);
                }
                *default = to(*default);
            }
            Terminator::Return | Terminator::Fail(_) => {}
        }
    }
    /// The value the terminator reads, if any.
    pub fn operand(&self) -> Option<Value> {
        match self {
            Terminator::Branch { cond, .. } => Some(*cond),
            Terminator::Switch { value, .. } => Some(*value),
            _ => None,
        }
    }
}

/// A basic block.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Instructions in execution order.
    pub insts: Vec<Value>,
    /// How the block ends.
    pub term: Terminator,
    /// Source span of the terminator.
    pub term_span: Span,
}

/// The kinds of runtime error generated code can report. Each is raised at a
/// known instruction (or terminator), whose span and variable name the
/// runtime attaches to the error message.
#[derive(Clone, Debug, PartialEq)]
pub enum RuntimeErrorKind {
    /// An array subscript outside the declared bounds.
    IndexOutOfBounds,
    /// Integer division (or MOD) by zero.
    DivideByZero,
    /// A substring outside the character variable.
    SubstringOutOfRange,
    /// A pop from an empty runtime stack.
    StackUnderflow,
    /// Fortran STOP, with its optional code or message.
    Stop(Option<String>),
    /// An argument buffer smaller than the declared shape requires.
    ArgumentSize,
    /// Calls nested deeper than [`MAX_CALL_DEPTH`] (runaway recursion).
    CallDepthExceeded,
    /// An I/O statement failed (the error's detail says why).
    Io,
    /// The native stack would overflow (deep recursion with large frames):
    /// the procedure was stopped at entry.
    StackOverflow,
    /// The call ran past its time limit (stopped at a loop back-edge).
    Timeout,
    /// An array's element or byte count overflows 64 bits, or its storage
    /// exceeds the memory limit.
    TooLarge,
    /// An ALLOCATABLE array referenced (or deallocated) while unallocated.
    NotAllocated,
    /// ALLOCATE of an array that is already allocated.
    AlreadyAllocated,
    /// ALLOCATE of an allocatable scalar (named) that is already
    /// allocated.
    ScalarAlreadyAllocated(String),
    /// DEALLOCATE of an allocatable scalar (named) that is not allocated.
    ScalarNotAllocated(String),
    /// A function returning a deferred-length CHARACTER result (its
    /// result variable `result`) returned without assigning it.
    ResultNotAssigned {
        /// The function's name.
        function: String,
        /// The name of its result variable.
        result: String,
    },
}

/// The deepest nesting of [`Inst::Call`]s allowed (the outermost call made
/// by the host counts as depth 1).
pub const MAX_CALL_DEPTH: usize = 1000;

impl fmt::Display for RuntimeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeErrorKind::IndexOutOfBounds => write!(f, "array index out of bounds"),
            RuntimeErrorKind::DivideByZero => write!(f, "integer division by zero"),
            RuntimeErrorKind::SubstringOutOfRange => write!(f, "substring out of range"),
            RuntimeErrorKind::StackUnderflow => write!(f, "runtime stack popped while empty"),
            RuntimeErrorKind::Stop(None) => write!(f, "STOP"),
            RuntimeErrorKind::Stop(Some(m)) => write!(f, "STOP {m}"),
            RuntimeErrorKind::ArgumentSize => write!(f, "argument buffer too small"),
            RuntimeErrorKind::CallDepthExceeded => write!(f, "calls nested too deeply"),
            RuntimeErrorKind::Io => write!(f, "I/O error"),
            RuntimeErrorKind::StackOverflow => write!(f, "stack overflow"),
            RuntimeErrorKind::Timeout => write!(f, "time limit exceeded"),
            RuntimeErrorKind::TooLarge => write!(f, "array too large"),
            RuntimeErrorKind::NotAllocated => write!(f, "array not allocated"),
            RuntimeErrorKind::AlreadyAllocated => write!(f, "array already allocated"),
            RuntimeErrorKind::ScalarAlreadyAllocated(name) => {
                write!(f, "allocatable scalar `{name}` is already allocated")
            }
            RuntimeErrorKind::ScalarNotAllocated(name) => {
                write!(f, "allocatable scalar `{name}` is not allocated")
            }
            RuntimeErrorKind::ResultNotAssigned { function, result } => write!(
                f,
                "function `{function}` returned without assigning its deferred-length result `{result}`"
            ),
        }
    }
}
