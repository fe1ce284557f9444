//! [`ProcBuilder`]: a convenient way to fill in a [`Proc`].
//!
//! It appends instructions and derives their types; checking them is the
//! verifier's work ([`crate::verify`]).
//!
//! In the spirit of cranelift-frontend's `FunctionBuilder`, but for the
//! code-list IR: the builder wraps `&mut Proc`, keeps a *current block* and a
//! *current span*, and offers one method per instruction that appends it to
//! the current block with the span and the right result type. Result types
//! are derived from the operand types following the rules of [`Inst`]:
//!
//! * `Unary`, `Binary` (including `PowI`, whose result is the base's type),
//!   `Select`: the type of the first data operand;
//! * `Cmp`, `CharCompare`: `Bool`;
//! * `Load`, `LoadElem`: the variable's element type;
//! * `DimLower`, `DimExtent`: `I64`;
//! * `Const`, `Convert`, `Pop`: the type asked for;
//! * `Store`, `StoreElem`, `Call`, `CharAssign`, `Push`: no result (the
//!   returned [`Value`] only names the instruction).
//!
//! The builder never panics: an operand that is not a value of the procedure
//! simply gives a result without a type, which the verifier reports.

use crate::ir::{
    BinaryOp, BlockId, Bound, CallArg, CharRef, CmpOp, Const, Dim, Inst, Proc, ProcId, Rounding,
    RuntimeErrorKind, Span, StackKind, Storage, Terminator, Type, UnaryOp, Value, Var, VarId,
};

/// Appends instructions, blocks and variables to a [`Proc`].
pub struct ProcBuilder<'a> {
    proc: &'a mut Proc,
    block: BlockId,
    span: Span,
}

impl<'a> ProcBuilder<'a> {
    /// A builder positioned at the end of the entry block, with the default
    /// span.
    pub fn new(proc: &'a mut Proc) -> ProcBuilder<'a> {
        if proc.blocks.is_empty() {
            proc.blocks.push(Default::default());
        }
        ProcBuilder {
            proc,
            block: Proc::ENTRY,
            span: Span::default(),
        }
    }

    /// The procedure being built.
    pub fn proc(&self) -> &Proc {
        self.proc
    }

    /// Mutable access to the procedure being built.
    pub fn proc_mut(&mut self) -> &mut Proc {
        self.proc
    }

    /// The block instructions are appended to.
    pub fn current_block(&self) -> BlockId {
        self.block
    }

    /// The span given to new instructions and terminators.
    pub fn span(&self) -> Span {
        self.span
    }

    /// Sets the span given to new instructions and terminators.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    // ----- variables -------------------------------------------------------

    /// Adds a variable as given.
    pub fn declare_var(&mut self, var: Var) -> VarId {
        self.proc.add_var(var)
    }

    /// Adds a scalar local variable.
    pub fn local(&mut self, name: impl Into<String>, ty: Type) -> VarId {
        self.proc.add_var(Var::scalar(name, ty))
    }

    /// Adds a local array with the given dimensions (automatic when a bound
    /// reads a variable).
    pub fn local_array(&mut self, name: impl Into<String>, ty: Type, dims: Vec<Dim>) -> VarId {
        self.proc.add_var(Var {
            name: name.into(),
            ty,
            dims,
            char_len: None,
            storage: Storage::Local,
        })
    }

    /// Appends a parameter (`dims` empty for a scalar) and returns it.
    pub fn param(&mut self, name: impl Into<String>, ty: Type, dims: Vec<Dim>) -> VarId {
        self.param_var(Var {
            name: name.into(),
            ty,
            dims,
            char_len: None,
            storage: Storage::Local,
        })
    }

    /// Appends a fully described variable as the next parameter (its
    /// storage is overwritten with the right [`Storage::Param`] index).
    pub fn param_var(&mut self, mut var: Var) -> VarId {
        var.storage = Storage::Param(self.proc.params.len() as u32);
        let id = self.proc.add_var(var);
        self.proc.params.push(id);
        id
    }

    /// Appends the scalar result parameter of a FUNCTION (it must be the last
    /// parameter, so add it after every other one).
    pub fn result_param(&mut self, name: impl Into<String>, ty: Type) -> VarId {
        let id = self.param(name, ty, Vec::new());
        self.proc.result = Some(id);
        id
    }

    /// A dimension `lower:upper` with constant bounds.
    pub fn const_dim(lower: i64, upper: i64) -> Dim {
        Dim {
            lower: Bound::Const(lower),
            upper: Some(Bound::Const(upper)),
        }
    }

    /// A dimension `1:n` whose upper bound is the entry value of `n`.
    pub fn var_dim(n: VarId) -> Dim {
        Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Var(n)),
        }
    }

    /// An assumed dimension `1:*`.
    pub fn assumed_dim() -> Dim {
        Dim {
            lower: Bound::Const(1),
            upper: None,
        }
    }

    // ----- raw instructions -----------------------------------------------

    /// Appends any instruction with an explicit result type.
    pub fn ins(&mut self, inst: Inst, ty: Option<Type>) -> Value {
        self.proc.push_inst(self.block, inst, ty, self.span)
    }

    /// The type of a value (`None` for an effect or an unknown value).
    pub fn value_type(&self, v: Value) -> Option<Type> {
        self.proc.insts.get(v.index()).and_then(|d| d.ty)
    }

    fn var_type(&self, var: VarId) -> Option<Type> {
        self.proc.vars.get(var.index()).map(|v| v.ty)
    }

    // ----- constants -------------------------------------------------------

    /// An integer constant of type `ty` (I32 or I64).
    pub fn iconst(&mut self, ty: Type, value: i64) -> Value {
        self.ins(Inst::Const(Const::Int(value)), Some(ty))
    }

    /// A float constant of type `ty` (F32 or F64).
    pub fn fconst(&mut self, ty: Type, value: f64) -> Value {
        self.ins(Inst::Const(Const::Float(value)), Some(ty))
    }

    /// A Bool constant.
    pub fn bconst(&mut self, value: bool) -> Value {
        self.ins(Inst::Const(Const::Bool(value)), Some(Type::Bool))
    }

    // ----- memory ----------------------------------------------------------

    /// The value of a scalar variable.
    pub fn load(&mut self, var: VarId) -> Value {
        let ty = self.var_type(var);
        self.ins(Inst::Load(var), ty)
    }

    /// Writes a scalar variable.
    pub fn store(&mut self, var: VarId, value: Value) -> Value {
        self.ins(Inst::Store(var, value), None)
    }

    /// The value of an array element.
    pub fn load_elem(&mut self, var: VarId, index: Vec<Value>) -> Value {
        let ty = self.var_type(var);
        self.ins(Inst::LoadElem(var, index), ty)
    }

    /// Writes an array element.
    pub fn store_elem(&mut self, var: VarId, index: Vec<Value>, value: Value) -> Value {
        self.ins(Inst::StoreElem(var, index, value), None)
    }

    /// The lower bound (I64) of dimension `dim` (0-based) of an array.
    pub fn dim_lower(&mut self, var: VarId, dim: u32) -> Value {
        self.ins(Inst::DimLower(var, dim), Some(Type::I64))
    }

    /// The extent (I64) of dimension `dim` (0-based) of an array.
    pub fn dim_extent(&mut self, var: VarId, dim: u32) -> Value {
        self.ins(Inst::DimExtent(var, dim), Some(Type::I64))
    }

    // ----- arithmetic ------------------------------------------------------

    /// A unary operation; the result has the operand's type.
    pub fn unary(&mut self, op: UnaryOp, x: Value) -> Value {
        let ty = self.value_type(x);
        self.ins(Inst::Unary(op, x), ty)
    }

    /// A binary operation; the result has the first operand's type (for
    /// `PowI`, the float base's).
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.value_type(a);
        self.ins(Inst::Binary(op, a, b), ty)
    }

    /// A comparison; the result is Bool.
    pub fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.ins(Inst::Cmp(op, a, b), Some(Type::Bool))
    }

    /// A numeric conversion to `ty`.
    pub fn convert(&mut self, x: Value, ty: Type, rounding: Rounding) -> Value {
        self.ins(Inst::Convert(x, rounding), Some(ty))
    }

    /// `if cond { a } else { b }`.
    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        let ty = self.value_type(a);
        self.ins(Inst::Select(cond, a, b), ty)
    }

    // ----- calls, characters, stacks ----------------------------------------

    /// Calls a procedure of the module.
    pub fn call(&mut self, callee: ProcId, args: Vec<CallArg>) -> Value {
        self.ins(Inst::Call(callee, args), None)
    }

    /// Character assignment `dst = src`.
    pub fn char_assign(&mut self, dst: CharRef, src: CharRef) -> Value {
        self.ins(Inst::CharAssign(dst, src), None)
    }

    /// Character comparison; the result is Bool.
    pub fn char_compare(&mut self, op: CmpOp, a: CharRef, b: CharRef) -> Value {
        self.ins(Inst::CharCompare(op, a, b), Some(Type::Bool))
    }

    /// Pushes a value on a runtime stack.
    pub fn push(&mut self, stack: StackKind, value: Value) -> Value {
        self.ins(Inst::Push(stack, value), None)
    }

    /// Pops the top of a runtime stack as a value of type `ty`.
    pub fn pop(&mut self, stack: StackKind, ty: Type) -> Value {
        self.ins(Inst::Pop(stack), Some(ty))
    }

    // ----- blocks and terminators --------------------------------------------

    /// Adds a new empty block (it does not become current).
    pub fn create_block(&mut self) -> BlockId {
        self.proc.add_block()
    }

    /// Makes `block` the block new instructions are appended to.
    pub fn switch_to_block(&mut self, block: BlockId) {
        self.block = block;
    }

    /// Ends the current block with any terminator.
    pub fn terminate(&mut self, term: Terminator) {
        if let Some(b) = self.proc.blocks.get_mut(self.block.index()) {
            b.term = term;
            b.term_span = self.span;
        }
    }

    /// Ends the current block with a jump.
    pub fn jump(&mut self, dest: BlockId) {
        self.terminate(Terminator::Jump(dest));
    }

    /// Ends the current block with a two-way branch on a Bool.
    pub fn branch(&mut self, cond: Value, then_dest: BlockId, else_dest: BlockId) {
        self.terminate(Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        });
    }

    /// Ends the current block with a multi-way branch on an integer.
    pub fn switch(&mut self, value: Value, cases: Vec<(i64, BlockId)>, default: BlockId) {
        self.terminate(Terminator::Switch {
            value,
            cases,
            default,
        });
    }

    /// Ends the current block with a return.
    pub fn ret(&mut self) {
        self.terminate(Terminator::Return);
    }

    /// Ends the current block with a runtime error.
    pub fn fail(&mut self, kind: RuntimeErrorKind) {
        self.terminate(Terminator::Fail(kind));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_types_follow_operands() {
        let mut proc = Proc::new("t");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F32, Vec::new());
        let n = b.param("n", Type::I32, Vec::new());
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let vx = b.load(x);
        let vn = b.load(n);
        let p = b.binary(BinaryOp::PowI, vx, vn);
        let c = b.cmp(CmpOp::Lt, vx, p);
        let e = b.load_elem(a, vec![vn]);
        let s = b.select(c, vx, p);
        let ext = b.dim_extent(a, 0);
        let st = b.store(x, s);
        assert_eq!(b.value_type(p), Some(Type::F32));
        assert_eq!(b.value_type(c), Some(Type::Bool));
        assert_eq!(b.value_type(e), Some(Type::F64));
        assert_eq!(b.value_type(s), Some(Type::F32));
        assert_eq!(b.value_type(ext), Some(Type::I64));
        assert_eq!(b.value_type(st), None);
        assert_eq!(proc.params, vec![x, n, a]);
        assert_eq!(proc.var(a).storage, Storage::Param(2));
        assert_eq!(proc.blocks[0].insts.len(), 8);
    }

    #[test]
    fn terminators_go_to_the_current_block() {
        let mut proc = Proc::new("t");
        let mut b = ProcBuilder::new(&mut proc);
        let next = b.create_block();
        b.set_span(Span {
            file: 0,
            line: 7,
            col: 1,
        });
        b.jump(next);
        b.switch_to_block(next);
        b.fail(RuntimeErrorKind::Stop(None));
        assert_eq!(proc.blocks[0].term, Terminator::Jump(next));
        assert_eq!(proc.blocks[0].term_span.line, 7);
        assert_eq!(
            proc.blocks[1].term,
            Terminator::Fail(RuntimeErrorKind::Stop(None))
        );
    }
}
