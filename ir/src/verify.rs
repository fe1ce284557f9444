//! The IR verifier: [`verify_module`] checks the structural and typing rules
//! every producer of IR must follow, so that the interpreter and the
//! Cranelift lowering can rely on them (and never panic on a verified
//! module).
//!
//! It checks and reports; it never rewrites a module.
//!
//! # Typing rules (the one place they are written down)
//!
//! "Numeric" means I32, I64, F32 or F64; no value ever has type `Char`.
//! Effect instructions (`Store`, `StoreElem`, `Call`, `CharAssign`, `Push`)
//! have no result type; every other instruction has one, as follows:
//!
//! | instruction | operands | result |
//! |---|---|---|
//! | `Const(Float)` / `Const(Int)` / `Const(Bool)` | | F32/F64 / I32/I64 / Bool (`Const(Char)` is only for globals' `init`) |
//! | `Load(var)` | scalar non-Char var | the var's type |
//! | `Store(var, v)` | scalar non-Char var, `v` of its type | |
//! | `LoadElem(var, idx)` | non-Char array, one integer subscript per dimension | the var's type |
//! | `StoreElem(var, idx, v)` | as `LoadElem`, `v` of the var's type | |
//! | `Unary(Neg / Abs, x)` | numeric | type of `x` |
//! | `Unary(Not, x)` | Bool | Bool |
//! | `Unary(other, x)` | float | type of `x` |
//! | `Binary(Add..Modulo except PowI / Atan2, a, b)` | both numeric, same type | that type |
//! | `Binary(Atan2, a, b)` | both float, same type | that type |
//! | `Binary(PowI, a, b)` | float `a`, integer `b` | type of `a` |
//! | `Binary(And / Or / Eqv / Neqv, a, b)` | both Bool | Bool |
//! | `Cmp(op, a, b)` | same type | Bool |
//! | `Convert(x, r)` | numeric or Bool `x`; no Bool ↔ float | any numeric or Bool |
//! | `Select(c, a, b)` | Bool `c`, `a` and `b` of one type | that type |
//! | `DimLower / DimExtent(var, d)` | array var, `d` < rank | I64 |
//! | `Call(p, args)` | `p` exists, one argument per parameter, each of the parameter's element type; `Elem` subscripts as for `LoadElem` | |
//! | `CharAssign(dst, src)` | Char refs; `dst` not a literal | |
//! | `CharCompare(op, a, b)` | Char refs | Bool |
//! | `Allocate(var, bounds)` | `Allocatable` non-Char array, one pair of integer bounds per dimension | |
//! | `Deallocate(var)` | `Allocatable` array | |
//! | `Allocated(var)` | `Allocatable` array | Bool |
//! | `Push(Value, v)` / `Push(Integer / Control, v)` | float / integer or Bool | |
//! | `Pop(Value)` / `Pop(Integer / Control)` | | float / integer or Bool |
//!
//! A [`CharRef`] on a variable names a Char variable with one integer
//! subscript per dimension (none for a scalar); substring bounds are
//! integers.
//!
//! # Structural rules
//!
//! * every operand (of instructions and terminators) is defined earlier in the
//!   same block, and every instruction belongs to exactly one block;
//! * terminator targets exist; `Branch` reads a Bool, `Switch` an integer;
//! * `params[i]` has `Storage::Param(i)` and no other variable claims a
//!   parameter slot; `result`, when present, is the last parameter and a
//!   scalar; every `zeroed_params` entry is a float array parameter;
//! * bound and length expressions read only scalar integer variables;
//!   an assumed (`None`) upper bound appears only in the last dimension of a
//!   parameter, and not together with an assumed character length;
//! * a global variable names an existing global of the same element type;
//! * an `Allocatable` or `AllocatableParam` variable is a non-Char array,
//!   and the argument of an `AllocatableParam` is a whole allocatable array
//!   of its rank.

use crate::ir::{
    BinaryOp, BlockId, Bound, CallArg, CharBase, CharRef, Const, Inst, IoOp, Module, Proc, ProcId,
    StackKind, Storage, Terminator, Type, UnaryOp, Value, Var, VarId,
};
use std::fmt;

/// One violation of the IR rules, located as precisely as possible.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    /// Name of the procedure.
    pub proc: String,
    /// The block, when the problem is inside one.
    pub block: Option<BlockId>,
    /// The instruction, when the problem is one instruction.
    pub value: Option<Value>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proc {}", self.proc)?;
        if let Some(b) = self.block {
            write!(f, ", {b}")?;
        }
        if let Some(v) = self.value {
            write!(f, ", {v}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for VerifyError {}

/// Checks every procedure of a module; returns all violations found.
pub fn verify_module(module: &Module) -> Result<(), Vec<VerifyError>> {
    let mut errors = Vec::new();
    for proc in &module.procs {
        Checker {
            module,
            proc,
            block: None,
            value: None,
            owner: Vec::new(),
            errors: &mut errors,
        }
        .check();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks one procedure of a module.
pub fn verify_proc(module: &Module, proc: ProcId) -> Result<(), Vec<VerifyError>> {
    let mut errors = Vec::new();
    match module.procs.get(proc.index()) {
        Some(p) => Checker {
            module,
            proc: p,
            block: None,
            value: None,
            owner: Vec::new(),
            errors: &mut errors,
        }
        .check(),
        None => errors.push(VerifyError {
            proc: proc.to_string(),
            block: None,
            value: None,
            message: "no such procedure".into(),
        }),
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Checker<'a> {
    module: &'a Module,
    proc: &'a Proc,
    block: Option<BlockId>,
    value: Option<Value>,
    /// For each instruction: the block and position that contain it.
    owner: Vec<Option<(BlockId, usize)>>,
    errors: &'a mut Vec<VerifyError>,
}

fn is_numeric(ty: Type) -> bool {
    ty.is_int() || ty.is_float()
}

impl<'a> Checker<'a> {
    fn error(&mut self, message: impl Into<String>) {
        self.errors.push(VerifyError {
            proc: self.proc.name.clone(),
            block: self.block,
            value: self.value,
            message: message.into(),
        });
    }

    fn check(mut self) {
        self.check_params();
        for (i, var) in self.proc.vars.iter().enumerate() {
            self.check_var(VarId(i as u32), var);
        }
        if self.proc.blocks.is_empty() {
            self.error("no entry block");
        }
        self.owner = vec![None; self.proc.insts.len()];
        for (b, block) in self.proc.blocks.iter().enumerate() {
            self.block = Some(BlockId(b as u32));
            for (pos, &v) in block.insts.iter().enumerate() {
                self.value = Some(v);
                match self.owner.get(v.index()) {
                    None => self.error("instruction does not exist"),
                    Some(Some((other, _))) => {
                        let other = *other;
                        self.error(format!("instruction also appears in {other}"))
                    }
                    Some(None) => self.owner[v.index()] = Some((BlockId(b as u32), pos)),
                }
            }
        }
        self.block = None;
        for i in 0..self.owner.len() {
            if self.owner[i].is_none() {
                self.value = Some(Value(i as u32));
                self.error("instruction belongs to no block");
            }
        }
        for (b, block) in self.proc.blocks.iter().enumerate() {
            let bid = BlockId(b as u32);
            self.block = Some(bid);
            for (pos, &v) in block.insts.iter().enumerate() {
                if let Some(data) = self.proc.insts.get(v.index()) {
                    if self.owner[v.index()] == Some((bid, pos)) {
                        self.value = Some(v);
                        self.check_inst(bid, pos, &data.kind, data.ty);
                    }
                }
            }
            self.value = None;
            self.check_term(bid, block.insts.len(), &block.term);
        }
    }

    fn check_params(&mut self) {
        let proc = self.proc;
        for (i, &p) in proc.params.iter().enumerate() {
            match proc.vars.get(p.index()) {
                None => self.error(format!("parameter {i} is not a variable ({p})")),
                Some(var) if var.storage.param_index() != Some(i as u32) => self.error(format!(
                    "parameter {i} `{}` has storage {:?}, expected Param({i})",
                    var.name, var.storage
                )),
                Some(_) => {}
            }
        }
        for (i, var) in proc.vars.iter().enumerate() {
            if let Some(n) = var.storage.param_index() {
                if proc.params.get(n as usize) != Some(&VarId(i as u32)) {
                    self.error(format!(
                        "variable `{}` claims parameter slot {n} but is not params[{n}]",
                        var.name
                    ));
                }
            }
        }
        if let Some(r) = proc.result {
            if proc.params.last() != Some(&r) {
                self.error(format!("result {r} is not the last parameter"));
            } else if proc.vars.get(r.index()).is_some_and(Var::is_array) {
                self.error("the result parameter is an array");
            }
        }
        for &z in &proc.zeroed_params {
            match proc.vars.get(z.index()) {
                Some(var)
                    if matches!(var.storage, Storage::Param(_))
                        && var.is_array()
                        && var.ty.is_float() => {}
                _ => self.error(format!(
                    "zeroed parameter {z} is not a float array parameter"
                )),
            }
        }
    }

    fn check_bound(&mut self, owner: &str, bound: &Bound) {
        let mut bad = Vec::new();
        bound.for_each_var(&mut |v| match self.proc.vars.get(v.index()) {
            Some(var) if var.ty.is_int() && !var.is_array() => {}
            Some(var) => bad.push(format!(
                "bound of `{owner}` reads `{}`, which is not a scalar integer",
                var.name
            )),
            None => bad.push(format!("bound of `{owner}` reads a missing variable {v}")),
        });
        for message in bad {
            self.error(message);
        }
    }

    fn check_var(&mut self, id: VarId, var: &Var) {
        let rank = var.dims.len();
        for (d, dim) in var.dims.iter().enumerate() {
            self.check_bound(&var.name, &dim.lower);
            match &dim.upper {
                Some(u) => self.check_bound(&var.name, u),
                None => {
                    let is_param = matches!(var.storage, Storage::Param(_));
                    if !is_param || d + 1 != rank {
                        self.error(format!(
                            "`{}` ({id}): assumed upper bound outside the last dimension of a parameter",
                            var.name
                        ));
                    } else if var.ty == Type::Char && var.char_len.is_none() {
                        self.error(format!(
                            "`{}`: assumed length together with an assumed dimension",
                            var.name
                        ));
                    }
                }
            }
        }
        if let Some(len) = &var.char_len {
            self.check_bound(&var.name, len);
        }
        let long_chars =
            var.ty == Type::Char && !matches!(var.char_len, None | Some(Bound::Const(1)));
        if var.storage.is_allocatable() && (rank == 0 || long_chars) {
            self.error(format!(
                "`{}` ({id}): an allocatable variable must be an array (of one-character elements when character)",
                var.name
            ));
        }
        if let Storage::Global(g, at) = var.storage {
            match self.module.globals.get(g.index()) {
                None => self.error(format!("`{}` names a missing global {g}", var.name)),
                Some(global) if !(0..global.len().max(1)).contains(&at) => self.error(format!(
                    "`{}` views global `{}` from element {at}, outside its {} elements",
                    var.name,
                    global.name,
                    global.len().max(1)
                )),
                Some(global) if global.ty != var.ty => self.error(format!(
                    "`{}` has type {} but global `{}` has type {}",
                    var.name,
                    var.ty.name(),
                    global.name,
                    global.ty.name()
                )),
                Some(_) => {}
            }
        }
    }

    /// The type of an operand, after checking it is defined earlier in the
    /// same block and has a type.
    fn operand(&mut self, block: BlockId, pos: usize, v: Value) -> Option<Type> {
        match self.owner.get(v.index()).copied().flatten() {
            Some((b, p)) if b == block && p < pos => {}
            Some((b, _)) if b != block => {
                self.error(format!("operand {v} is defined in another block ({b})"));
                return None;
            }
            Some(_) => {
                self.error(format!("operand {v} is used before its definition"));
                return None;
            }
            None => {
                self.error(format!("operand {v} is not a placed instruction"));
                return None;
            }
        }
        let ty = self.proc.insts[v.index()].ty;
        if ty.is_none() {
            self.error(format!("operand {v} has no value (an effect)"));
        }
        ty
    }

    fn var(&mut self, v: VarId) -> Option<&'a Var> {
        let proc = self.proc;
        let var = proc.vars.get(v.index());
        if var.is_none() {
            self.error(format!("no such variable {v}"));
        }
        var
    }

    /// Checks subscripts of an element access to `var`; returns the var.
    fn subscripts(
        &mut self,
        block: BlockId,
        pos: usize,
        var: VarId,
        idx: &[Value],
    ) -> Option<&'a Var> {
        let var = self.var(var)?;
        if idx.len() != var.dims.len() {
            self.error(format!(
                "`{}` has rank {} but {} subscripts are given",
                var.name,
                var.dims.len(),
                idx.len()
            ));
        }
        for &i in idx {
            if let Some(t) = self.operand(block, pos, i) {
                if !t.is_int() {
                    self.error(format!(
                        "subscript {i} of `{}` has type {}",
                        var.name,
                        t.name()
                    ));
                }
            }
        }
        Some(var)
    }

    fn char_ref(&mut self, block: BlockId, pos: usize, r: &CharRef, is_target: bool) {
        match &r.base {
            CharBase::Var { var, index } => {
                if let Some(v) = self.subscripts(block, pos, *var, index) {
                    if v.ty != Type::Char {
                        self.error(format!("`{}` is not a character variable", v.name));
                    }
                }
            }
            CharBase::Literal(_) if is_target => self.error("assignment to a literal"),
            CharBase::Literal(_) => {}
        }
        for v in r.start.into_iter().chain(r.end) {
            if let Some(t) = self.operand(block, pos, v) {
                if !t.is_int() {
                    self.error(format!("substring bound {v} has type {}", t.name()));
                }
            }
        }
    }

    fn expect_result(&mut self, ty: Option<Type>, expected: Option<Type>) {
        if ty != expected {
            let show = |t: Option<Type>| t.map_or("none", Type::name);
            self.error(format!(
                "result type is {}, expected {}",
                show(ty),
                show(expected)
            ));
        }
    }

    fn check_inst(&mut self, block: BlockId, pos: usize, inst: &Inst, ty: Option<Type>) {
        let op = |me: &mut Self, v: Value| me.operand(block, pos, v);
        match inst {
            Inst::Const(c) => {
                let ok = match (c, ty) {
                    (Const::Float(_), Some(t)) => t.is_float(),
                    (Const::Int(_), Some(t)) => t.is_int(),
                    (Const::Bool(_), Some(t)) => t == Type::Bool,
                    _ => false,
                };
                if !ok {
                    self.error(format!("constant {c:?} with type {ty:?}"));
                }
            }
            Inst::Load(var) | Inst::Store(var, _) => {
                let Some(v) = self.var(*var) else {
                    return;
                };
                if v.is_array() || v.ty == Type::Char {
                    self.error(format!("`{}` is not a non-character scalar", v.name));
                }
                if let Inst::Store(_, x) = inst {
                    self.expect_result(ty, None);
                    if let Some(t) = op(self, *x) {
                        if t != v.ty {
                            self.error(format!(
                                "storing a {} into `{}` of type {}",
                                t.name(),
                                v.name,
                                v.ty.name()
                            ));
                        }
                    }
                } else {
                    self.expect_result(ty, Some(v.ty));
                }
            }
            Inst::LoadElem(var, idx) | Inst::StoreElem(var, idx, _) => {
                let Some(v) = self.subscripts(block, pos, *var, idx) else {
                    return;
                };
                if !v.is_array() || v.ty == Type::Char {
                    self.error(format!("`{}` is not a non-character array", v.name));
                }
                if let Inst::StoreElem(_, _, x) = inst {
                    self.expect_result(ty, None);
                    if let Some(t) = op(self, *x) {
                        if t != v.ty {
                            self.error(format!(
                                "storing a {} into an element of `{}` of type {}",
                                t.name(),
                                v.name,
                                v.ty.name()
                            ));
                        }
                    }
                } else {
                    self.expect_result(ty, Some(v.ty));
                }
            }
            Inst::Unary(u, x) => {
                let Some(t) = op(self, *x) else { return };
                let ok = match u {
                    UnaryOp::Neg | UnaryOp::Abs => is_numeric(t),
                    UnaryOp::Not => t == Type::Bool,
                    _ => t.is_float(),
                };
                if !ok {
                    self.error(format!("{u:?} of a {}", t.name()));
                }
                self.expect_result(ty, Some(t));
            }
            Inst::Binary(b, x, y) => {
                let (Some(tx), Some(ty_y)) = (op(self, *x), op(self, *y)) else {
                    return;
                };
                let ok = match b {
                    BinaryOp::PowI => tx.is_float() && ty_y.is_int(),
                    BinaryOp::Atan2 => tx.is_float() && tx == ty_y,
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Eqv | BinaryOp::Neqv => {
                        tx == Type::Bool && ty_y == Type::Bool
                    }
                    _ => is_numeric(tx) && tx == ty_y,
                };
                if !ok {
                    self.error(format!("{b:?} of {} and {}", tx.name(), ty_y.name()));
                }
                self.expect_result(ty, Some(tx));
            }
            Inst::Cmp(c, x, y) => {
                if let (Some(tx), Some(ty_y)) = (op(self, *x), op(self, *y)) {
                    if tx != ty_y {
                        self.error(format!("{c:?} of {} and {}", tx.name(), ty_y.name()));
                    }
                }
                self.expect_result(ty, Some(Type::Bool));
            }
            Inst::Convert(x, _) => {
                let Some(from) = op(self, *x) else { return };
                match ty {
                    None => self.error("conversion without a result type"),
                    Some(to) => {
                        if to == Type::Char
                            || (from == Type::Bool && to.is_float())
                            || (from.is_float() && to == Type::Bool)
                        {
                            self.error(format!(
                                "no conversion from {} to {}",
                                from.name(),
                                to.name()
                            ));
                        }
                    }
                }
            }
            Inst::Select(c, a, b) => {
                if let Some(tc) = op(self, *c) {
                    if tc != Type::Bool {
                        self.error(format!("select condition of type {}", tc.name()));
                    }
                }
                let (Some(ta), Some(tb)) = (op(self, *a), op(self, *b)) else {
                    return;
                };
                if ta != tb {
                    self.error(format!("select of {} and {}", ta.name(), tb.name()));
                }
                self.expect_result(ty, Some(ta));
            }
            Inst::DimLower(var, d) | Inst::DimExtent(var, d) => {
                let Some(v) = self.var(*var) else {
                    return;
                };
                if *d as usize >= v.dims.len() {
                    self.error(format!(
                        "dimension {d} of `{}` of rank {}",
                        v.name,
                        v.dims.len()
                    ));
                }
                self.expect_result(ty, Some(Type::I64));
            }
            Inst::Call(callee, args) => {
                self.expect_result(ty, None);
                self.check_call(block, pos, *callee, args);
            }
            Inst::CharAssign(dst, src) => {
                self.expect_result(ty, None);
                self.char_ref(block, pos, dst, true);
                self.char_ref(block, pos, src, false);
            }
            Inst::CharCompare(_, a, b) => {
                self.expect_result(ty, Some(Type::Bool));
                self.char_ref(block, pos, a, false);
                self.char_ref(block, pos, b, false);
            }
            Inst::CharIndex(a, b) | Inst::CharSearch(_, _, a, b) => {
                self.expect_result(ty, Some(Type::I64));
                self.char_ref(block, pos, a, false);
                self.char_ref(block, pos, b, false);
            }
            Inst::CharLen(a) => {
                self.expect_result(ty, Some(Type::I64));
                self.char_ref(block, pos, a, false);
            }
            Inst::Io(io) => match io {
                IoOp::Get => match ty {
                    Some(Type::Char) | None => {
                        self.error("an input value must be a number or a truth value".to_string())
                    }
                    Some(_) => {}
                },
                IoOp::Put(x) => {
                    self.expect_result(ty, None);
                    if let Some(Type::Char) = op(self, *x) {
                        self.error("output of a character value".to_string());
                    }
                }
                IoOp::PutChar(r) => {
                    self.expect_result(ty, None);
                    self.char_ref(block, pos, r, false);
                }
                IoOp::GetChar(r) | IoOp::EndWriteTo(r) => {
                    self.expect_result(ty, None);
                    self.char_ref(block, pos, r, true);
                }
                IoOp::BeginReadFrom(r, _) => {
                    self.expect_result(ty, None);
                    self.char_ref(block, pos, r, false);
                }
                IoOp::Status => self.expect_result(ty, Some(Type::I32)),
                IoOp::BeginWrite(_)
                | IoOp::JoinChars(_)
                | IoOp::CatchErrors
                | IoOp::EndWrite
                | IoOp::BeginRead
                | IoOp::EndRead
                | IoOp::BeginKeep(_)
                | IoOp::BeginRestore(_) => self.expect_result(ty, None),
            },
            Inst::Push(stack, x) => {
                self.expect_result(ty, None);
                if let Some(t) = op(self, *x) {
                    if !stack_accepts(*stack, t) {
                        self.error(format!("push of a {} on the {stack:?} stack", t.name()));
                    }
                }
            }
            Inst::Pop(stack) => match ty {
                Some(t) if stack_accepts(*stack, t) => {}
                _ => self.error(format!("pop from the {stack:?} stack as {ty:?}")),
            },
            Inst::Allocate(var, bounds) => {
                self.expect_result(ty, None);
                let rank = self.allocatable(*var);
                if rank.is_some_and(|r| r != bounds.len()) {
                    self.error(format!(
                        "allocate of rank {} with {} bounds",
                        rank.unwrap_or(0),
                        bounds.len()
                    ));
                }
                for &(l, u) in bounds {
                    for b in [l, u] {
                        if let Some(t) = op(self, b) {
                            if !t.is_int() {
                                self.error(format!("allocate bound of type {}", t.name()));
                            }
                        }
                    }
                }
            }
            Inst::Deallocate(var) => {
                self.expect_result(ty, None);
                self.allocatable(*var);
            }
            Inst::Allocated(var) => {
                self.expect_result(ty, Some(Type::Bool));
                self.allocatable(*var);
            }
        }
    }

    /// An argument given to an ALLOCATABLE parameter passed by descriptor
    /// must be a whole ALLOCATABLE variable of the parameter's rank.
    fn descriptor_arg(&mut self, arg: &CallArg, formal: &Var, i: usize, callee: &str) {
        let ok =
            match arg {
                CallArg::Var(v) => self.proc.vars.get(v.index()).is_some_and(|a| {
                    a.storage.is_allocatable() && a.dims.len() == formal.dims.len()
                }),
                _ => false,
            };
        if !ok {
            self.error(format!(
                "argument {} of `{callee}` is not an ALLOCATABLE array of rank {} (parameter `{}` is passed by descriptor)",
                i + 1,
                formal.dims.len(),
                formal.name
            ));
        }
    }

    /// The rank of an allocatable variable; an error when `var` is not one.
    fn allocatable(&mut self, var: VarId) -> Option<usize> {
        let v = self.var(var)?;
        if !v.storage.is_allocatable() {
            self.error(format!("`{}` is not allocatable", v.name));
            return None;
        }
        Some(v.dims.len())
    }

    fn check_call(&mut self, block: BlockId, pos: usize, callee: ProcId, args: &[CallArg]) {
        let Some(target) = self.module.procs.get(callee.index()) else {
            self.error(format!("call to a missing procedure {callee}"));
            return;
        };
        if args.len() != target.params.len() {
            self.error(format!(
                "call to `{}` with {} arguments, expected {}",
                target.name,
                args.len(),
                target.params.len()
            ));
        }
        for (i, arg) in args.iter().enumerate() {
            let actual = match arg {
                CallArg::Var(v) => self.var(*v).map(|v| v.ty),
                CallArg::Elem(v, idx) => self.subscripts(block, pos, *v, idx).map(|var| {
                    if !var.is_array() {
                        self.error(format!("element argument of scalar `{}`", var.name));
                    }
                    var.ty
                }),
                CallArg::Slice(v, idx, len) => {
                    if let Some(t) = self.operand(block, pos, *len) {
                        if !t.is_int() {
                            self.error(format!("slice length {len} has type {}", t.name()));
                        }
                    }
                    self.subscripts(block, pos, *v, idx).map(|var| {
                        if !var.is_array() {
                            self.error(format!(
                                "slice argument of `{}`, which is not an array",
                                var.name
                            ));
                        }
                        var.ty
                    })
                }
                CallArg::Value(v) => {
                    let t = self.operand(block, pos, *v);
                    if t == Some(Type::Char) {
                        self.error("a character value argument");
                    }
                    t
                }
            };
            let formal = target
                .params
                .get(i)
                .and_then(|p| target.vars.get(p.index()));
            if let Some(formal) = formal {
                if let Storage::AllocatableParam(_) = formal.storage {
                    self.descriptor_arg(arg, formal, i, &target.name);
                }
            }
            if let (Some(actual), Some(formal)) = (actual, formal) {
                if actual != formal.ty {
                    self.error(format!(
                        "argument {} of `{}` has type {}, parameter `{}` is {}",
                        i + 1,
                        target.name,
                        actual.name(),
                        formal.name,
                        formal.ty.name()
                    ));
                }
            }
        }
    }

    fn check_term(&mut self, block: BlockId, end: usize, term: &Terminator) {
        for target in term.successors() {
            if target.index() >= self.proc.blocks.len() {
                self.error(format!("jump to a missing block {target}"));
            }
        }
        match term {
            Terminator::Branch { cond, .. } => {
                if let Some(t) = self.operand(block, end, *cond) {
                    if t != Type::Bool {
                        self.error(format!("branch on a {}", t.name()));
                    }
                }
            }
            Terminator::Switch { value, .. } => {
                if let Some(t) = self.operand(block, end, *value) {
                    if !t.is_int() {
                        self.error(format!("switch on a {}", t.name()));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a value of type `ty` may be pushed on / popped from `stack`.
pub fn stack_accepts(stack: StackKind, ty: Type) -> bool {
    match stack {
        StackKind::Value => ty.is_float(),
        StackKind::Integer | StackKind::Control => ty.is_int() || ty == Type::Bool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProcBuilder;
    use crate::ir::{CmpOp, Dim};

    fn messages(module: &Module) -> Vec<String> {
        match verify_module(module) {
            Ok(()) => Vec::new(),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn accepts_a_well_formed_procedure() {
        let mut module = Module::default();
        let mut callee = Proc::new("g");
        let mut b = ProcBuilder::new(&mut callee);
        b.param("a", Type::F64, vec![ProcBuilder::assumed_dim()]);
        let g = module.add_proc(callee);
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let r = b.result_param("f", Type::F64);
        let exit = b.create_block();
        let vn = b.load(n);
        let x = b.load_elem(a, vec![vn]);
        let two = b.iconst(Type::I32, 2);
        let p = b.binary(BinaryOp::PowI, x, two);
        b.store(r, p);
        b.call(g, vec![CallArg::Elem(a, vec![vn])]);
        let c = b.cmp(CmpOp::Gt, vn, two);
        b.branch(c, exit, exit);
        module.add_proc(proc);
        assert_eq!(messages(&module), Vec::<String>::new());
    }

    #[test]
    fn reports_type_and_placement_errors_by_name() {
        let mut module = Module::default();
        let mut proc = Proc::new("bad");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, Vec::new());
        let a = b.local_array("a", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
        let next = b.create_block();
        let vx = b.load(x);
        let i = b.iconst(Type::I32, 1);
        b.binary(BinaryOp::Add, vx, i); // mixed types
        b.load_elem(a, vec![vx]); // float subscript
        b.load_elem(a, vec![i, i]); // rank mismatch
        b.jump(next);
        b.switch_to_block(next);
        b.store(x, vx); // operand from another block
        b.branch(i, BlockId(9), next); // not Bool, missing target
        module.add_proc(proc);
        let m = messages(&module);
        let expect = [
            "proc bad, bb0, v2: Add of f64 and i32",
            "proc bad, bb0, v3: subscript v0 of `a` has type f64",
            "proc bad, bb0, v4: `a` has rank 1 but 2 subscripts are given",
            "proc bad, bb1, v5: operand v0 is defined in another block (bb0)",
            "proc bad, bb1: jump to a missing block bb9",
            "proc bad, bb1: operand v1 is defined in another block (bb0)",
        ];
        assert_eq!(m, expect);
    }

    #[test]
    fn checks_params_bounds_and_calls() {
        let mut module = Module::default();
        let mut proc = Proc::new("p");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, Vec::new());
        b.declare_var(Var {
            name: "w".into(),
            ty: Type::F64,
            dims: vec![
                Dim {
                    lower: Bound::Const(1),
                    upper: None,
                },
                Dim {
                    lower: Bound::Const(1),
                    upper: Some(Bound::Var(x)),
                },
            ],
            char_len: None,
            storage: Storage::Param(5),
        });
        b.call(ProcId(0), vec![]);
        module.add_proc(proc);
        let m = messages(&module);
        assert!(
            m.iter().any(|s| s.contains("claims parameter slot 5")),
            "{m:?}"
        );
        assert!(m
            .iter()
            .any(|s| s.contains("reads `x`, which is not a scalar integer")));
        assert!(m
            .iter()
            .any(|s| s.contains("assumed upper bound outside the last")));
        assert!(m
            .iter()
            .any(|s| s.contains("call to `p` with 0 arguments, expected 1")));
    }

    #[test]
    fn checks_allocation_instructions() {
        let mut module = Module::default();
        let mut proc = Proc::new("al");
        let mut b = ProcBuilder::new(&mut proc);
        let fixed = b.local_array("w", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
        let heap = b.declare_var(Var {
            storage: Storage::Allocatable,
            ..Var::scalar("a", Type::F64)
        });
        let one = b.iconst(Type::I32, 1);
        let x = b.fconst(Type::F64, 1.0);
        b.ins(Inst::Allocate(fixed, vec![(one, one)]), None); // not allocatable
        b.ins(Inst::Allocate(heap, vec![(one, x)]), None); // float bound
        b.ins(Inst::Deallocate(heap), None);
        b.ins(Inst::Allocated(heap), Some(Type::Bool));
        b.ret();
        module.add_proc(proc);
        let m = messages(&module);
        let has = |text: &str| m.iter().any(|s| s.contains(text));
        assert!(
            has("`a` (%1): an allocatable variable must be an array (of one-character elements when character)"),
            "{m:?}"
        );
        assert!(has("`w` is not allocatable"), "{m:?}");
        assert!(has("allocate of rank 0 with 1 bounds"), "{m:?}");
        assert!(has("allocate bound of type f64"), "{m:?}");
    }
}
