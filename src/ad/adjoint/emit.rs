//! Instruction emission for the adjoint transform: a cursor that appends
//! instructions to a block of a procedure under construction, and loop nests
//! that visit every element of an array variable (used to save and restore
//! whole arrays on the runtime stacks).

use adjit_ir::{
    BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Span, StackKind, Terminator, Type, UnaryOp, Value,
    Var, VarId,
};
use rustc_hash::FxHashMap as HashMap;

/// The two I64 locals of one loop of [`Cursor::for_each_element`].
#[derive(Clone, Copy)]
struct ElementCounters {
    /// The subscript (backward loops) or the step from the lower bound.
    subscript: VarId,
    /// The trips left (backward loops).
    trips: VarId,
}

/// Appends instructions at the end of one block of a procedure.
pub(crate) struct Cursor<'p> {
    /// The procedure being built.
    pub proc: &'p mut Proc,
    /// The block instructions go to.
    pub block: BlockId,
    /// Span given to every emitted instruction.
    pub span: Span,
    /// Loop counters reserved by [`Cursor::for_each_element`], by nesting depth.
    counters: Vec<ElementCounters>,
    /// Library-call results already at hand, by operation and operand: the
    /// companions the reverse sweep popped for the statement it reverses
    /// (`super::store::companion`). The partial rules read them instead of
    /// emitting the call again.
    pub known_calls: HashMap<(UnaryOp, Value), Value>,
}

impl<'p> Cursor<'p> {
    /// A cursor at the end of `block`.
    pub fn new(proc: &'p mut Proc, block: BlockId) -> Cursor<'p> {
        Cursor {
            proc,
            block,
            span: Span::default(),
            counters: Vec::new(),
            known_calls: HashMap::default(),
        }
    }

    /// Appends an instruction.
    pub fn ins(&mut self, inst: Inst, ty: Option<Type>) -> Value {
        self.proc.push_inst(self.block, inst, ty, self.span)
    }

    /// A constant of a numeric type.
    pub fn constant(&mut self, ty: Type, value: f64) -> Value {
        let c = if ty.is_float() {
            Const::Float(value)
        } else if ty == Type::Bool {
            Const::Bool(value != 0.0)
        } else {
            Const::Int(value as i64)
        };
        self.ins(Inst::Const(c), Some(ty))
    }

    /// A 64-bit integer constant.
    pub fn int(&mut self, value: i64) -> Value {
        self.ins(Inst::Const(Const::Int(value)), Some(Type::I64))
    }

    /// A binary operation whose result has the type of `a`.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.proc.value_type(a);
        self.ins(Inst::Binary(op, a, b), ty)
    }

    /// Converts `v` to `ty` when it has another type.
    pub fn convert_to(&mut self, v: Value, ty: Type) -> Value {
        if self.proc.value_type(v) == Some(ty) {
            v
        } else {
            self.ins(Inst::Convert(v, adjit_ir::Rounding::Trunc), Some(ty))
        }
    }

    /// Ends the current block.
    pub fn terminate(&mut self, term: Terminator) {
        let block = &mut self.proc.blocks[self.block.index()];
        block.term = term;
        block.term_span = self.span;
    }

    /// A fresh block (not yet the insertion point).
    pub fn new_block(&mut self) -> BlockId {
        self.proc.add_block()
    }

    /// Moves the insertion point to the end of `block`.
    pub fn switch_to(&mut self, block: BlockId) {
        self.block = block;
    }

    /// Pushes the value of a scalar location (given as the loaded value) on
    /// the stack that suits its type: floats on the Value stack, integers and
    /// truth values on the Integer stack.
    pub fn push_scalar(&mut self, value: Value) {
        let ty = self.proc.value_type(value).unwrap_or(Type::F64);
        if ty.is_float() {
            self.ins(Inst::Push(StackKind::Value, value), None);
        } else {
            let wide = self.convert_to(value, Type::I64);
            self.ins(Inst::Push(StackKind::Integer, wide), None);
        }
    }

    /// Pops a value pushed by [`Cursor::push_scalar`] for type `ty`.
    pub fn pop_scalar(&mut self, ty: Type) -> Value {
        if ty.is_float() {
            self.ins(Inst::Pop(StackKind::Value), Some(ty))
        } else if ty == Type::Bool {
            let wide = self.ins(Inst::Pop(StackKind::Integer), Some(Type::I64));
            let zero = self.int(0);
            self.ins(Inst::Cmp(CmpOp::Ne, wide, zero), Some(Type::Bool))
        } else {
            self.ins(Inst::Pop(StackKind::Integer), Some(ty))
        }
    }

    /// The loop counter variable for nesting depth `depth` (created once per
    /// procedure and reused by loops that are not nested in each other).
    /// The loop counters of nesting depth `depth`: a subscript (or a step
    /// from the lower bound) and a trip count.
    fn counters(&mut self, depth: usize) -> ElementCounters {
        while self.counters.len() <= depth {
            let n = self.counters.len();
            let subscript = self
                .proc
                .add_var(Var::scalar(format!("_ad_elem{n}"), Type::I64));
            let trips = self
                .proc
                .add_var(Var::scalar(format!("_ad_trips{n}"), Type::I64));
            self.counters.push(ElementCounters { subscript, trips });
        }
        self.counters[depth]
    }

    /// Emits a loop nest that calls `body` once per element of the array
    /// `var` with the element's subscripts, in column-major order (or its
    /// exact reverse when `backward`). A scalar gets a single call with no
    /// subscripts. Leaves the cursor after the loop nest.
    ///
    /// Backward loops count their trips down to zero while the subscript
    /// steps down by one from the upper bound: the shape of the reversed DO
    /// loops, which the JIT's loop versioning turns into one range test
    /// before the loop instead of a bounds check per element. Visits whose
    /// order does not matter ([`Cursor::zero_var`], [`Cursor::copy_var`])
    /// go backward for that reason.
    pub fn for_each_element(
        &mut self,
        var: VarId,
        backward: bool,
        body: &mut dyn FnMut(&mut Cursor<'_>, &[Value]),
    ) {
        let rank = self.proc.var(var).dims.len();
        if rank == 0 {
            body(self, &[]);
            return;
        }
        // Outermost loop runs over the last dimension.
        self.element_loop(var, rank, backward, &mut Vec::new(), body);
    }

    fn element_loop(
        &mut self,
        var: VarId,
        dims_left: usize,
        backward: bool,
        outer: &mut Vec<VarId>,
        body: &mut dyn FnMut(&mut Cursor<'_>, &[Value]),
    ) {
        if dims_left == 0 {
            // Subscripts in dimension order: counters were pushed outermost
            // (last dimension) first.
            let mut index = Vec::with_capacity(outer.len());
            for (k, &ctr) in outer.iter().enumerate().rev() {
                let counter = self.ins(Inst::Load(ctr), Some(Type::I64));
                let sub = if backward {
                    counter
                } else {
                    let dim = (outer.len() - 1 - k) as u32;
                    let lower = self.ins(Inst::DimLower(var, dim), Some(Type::I64));
                    self.binary(BinaryOp::Add, lower, counter)
                };
                index.push(sub);
            }
            body(self, &index);
            return;
        }
        let dim = (dims_left - 1) as u32;
        let ElementCounters { subscript, trips } = self.counters(outer.len());
        let header = self.new_block();
        let body_block = self.new_block();
        let exit = self.new_block();
        if backward {
            let extent = self.ins(Inst::DimExtent(var, dim), Some(Type::I64));
            let lower = self.ins(Inst::DimLower(var, dim), Some(Type::I64));
            let end = self.binary(BinaryOp::Add, lower, extent);
            let one = self.int(1);
            let upper = self.binary(BinaryOp::Sub, end, one);
            self.ins(Inst::Store(subscript, upper), None);
            self.ins(Inst::Store(trips, extent), None);
        } else {
            let zero = self.int(0);
            self.ins(Inst::Store(subscript, zero), None);
        }
        self.terminate(Terminator::Jump(header));
        self.switch_to(header);
        let more = if backward {
            let left = self.ins(Inst::Load(trips), Some(Type::I64));
            let zero = self.int(0);
            self.ins(Inst::Cmp(CmpOp::Gt, left, zero), Some(Type::Bool))
        } else {
            let step = self.ins(Inst::Load(subscript), Some(Type::I64));
            let extent = self.ins(Inst::DimExtent(var, dim), Some(Type::I64));
            self.ins(Inst::Cmp(CmpOp::Lt, step, extent), Some(Type::Bool))
        };
        self.terminate(Terminator::Branch {
            cond: more,
            then_dest: body_block,
            else_dest: exit,
        });
        self.switch_to(body_block);
        outer.push(subscript);
        self.element_loop(var, dims_left - 1, backward, outer, body);
        outer.pop();
        let (op, stepped): (BinaryOp, &[VarId]) = if backward {
            (BinaryOp::Sub, &[trips, subscript])
        } else {
            (BinaryOp::Add, &[subscript])
        };
        for &counter in stepped {
            let c = self.ins(Inst::Load(counter), Some(Type::I64));
            let one = self.int(1);
            let next = self.binary(op, c, one);
            self.ins(Inst::Store(counter, next), None);
        }
        self.terminate(Terminator::Jump(header));
        self.switch_to(exit);
    }

    /// Loads a scalar variable or an array element.
    pub fn load_at(&mut self, var: VarId, index: &[Value]) -> Value {
        let ty = self.proc.var(var).ty;
        if index.is_empty() {
            self.ins(Inst::Load(var), Some(ty))
        } else {
            self.ins(Inst::LoadElem(var, index.to_vec()), Some(ty))
        }
    }

    /// Stores into a scalar variable or an array element.
    pub fn store_at(&mut self, var: VarId, index: &[Value], value: Value) {
        if index.is_empty() {
            self.ins(Inst::Store(var, value), None);
        } else {
            self.ins(Inst::StoreElem(var, index.to_vec(), value), None);
        }
    }

    /// Pushes every element of `var` (forward order).
    pub fn save_var(&mut self, var: VarId) {
        self.for_each_element(var, false, &mut |c, idx| {
            let v = c.load_at(var, idx);
            c.push_scalar(v);
        });
    }

    /// Stores zero into every element of the floating-point `var`.
    pub fn zero_var(&mut self, var: VarId) {
        let ty = self.proc.var(var).ty;
        self.for_each_element(var, true, &mut |c, idx| {
            let zero = c.constant(ty, 0.0);
            c.store_at(var, idx, zero);
        });
    }

    /// Copies every element of `src` into `dst` (same type and shape).
    pub fn copy_var(&mut self, dst: VarId, src: VarId) {
        self.for_each_element(src, true, &mut |c, idx| {
            let v = c.load_at(src, idx);
            c.store_at(dst, idx, v);
        });
    }

    /// Pushes every element of the allocated array `var` (none of a
    /// character array), then its lower
    /// bound and extent per dimension (Integer stack): what
    /// [`Cursor::restore_allocation`] needs to allocate it again.
    pub fn save_allocation(&mut self, var: VarId) {
        // Character data is not restored in the reverse sweep (what the
        // forward sweep computed from it is recorded): only its bounds.
        if self.proc.var(var).ty != Type::Char {
            self.save_var(var);
        }
        for d in 0..self.proc.var(var).dims.len() as u32 {
            let lower = self.ins(Inst::DimLower(var, d), Some(Type::I64));
            self.push_scalar(lower);
            let extent = self.ins(Inst::DimExtent(var, d), Some(Type::I64));
            self.push_scalar(extent);
        }
    }

    /// Pops what [`Cursor::save_allocation`] pushed: allocates `var` (and
    /// its adjoint `adj`, zeroed, when it has one) with the bounds and
    /// restores its elements.
    pub fn restore_allocation(&mut self, var: VarId, adj: Option<VarId>) {
        let rank = self.proc.var(var).dims.len();
        let mut bounds = Vec::with_capacity(rank);
        for _ in 0..rank {
            let extent = self.pop_scalar(Type::I64);
            let lower = self.pop_scalar(Type::I64);
            let last = self.binary(BinaryOp::Add, lower, extent);
            let one = self.int(1);
            let upper = self.binary(BinaryOp::Sub, last, one);
            bounds.push((lower, upper));
        }
        bounds.reverse();
        if let Some(adj) = adj {
            self.ins(Inst::Allocate(adj, bounds.clone()), None);
        }
        self.ins(Inst::Allocate(var, bounds), None);
        if self.proc.var(var).ty != Type::Char {
            self.restore_var(var);
        }
    }

    /// Hands the allocation state of an ALLOCATABLE array over from the end
    /// of the forward sweep: its elements and bounds when allocated, then
    /// a flag (1 allocated, 0 not).
    pub fn save_allocation_state(&mut self, var: VarId) {
        let is = self.ins(Inst::Allocated(var), Some(Type::Bool));
        let (yes, no, join) = (self.new_block(), self.new_block(), self.new_block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: yes,
            else_dest: no,
        });
        for (block, flag) in [(yes, 1), (no, 0)] {
            self.switch_to(block);
            if flag == 1 {
                self.save_allocation(var);
            }
            let flag = self.int(flag);
            self.push_scalar(flag);
            self.terminate(Terminator::Jump(join));
        }
        self.switch_to(join);
    }

    /// Pops what [`Cursor::save_allocation_state`] pushed (at the start of
    /// the reverse sweep, where `var` is unallocated).
    pub fn restore_allocation_state(&mut self, var: VarId, adj: Option<VarId>) {
        let flag = self.pop_scalar(Type::I64);
        let zero = self.int(0);
        let is = self.ins(Inst::Cmp(CmpOp::Ne, flag, zero), Some(Type::Bool));
        let (yes, join) = (self.new_block(), self.new_block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: yes,
            else_dest: join,
        });
        self.switch_to(yes);
        self.restore_allocation(var, adj);
        self.terminate(Terminator::Jump(join));
        self.switch_to(join);
    }

    /// Pops every element of `var` pushed by [`Cursor::save_var`].
    pub fn restore_var(&mut self, var: VarId) {
        let ty = self.proc.var(var).ty;
        self.for_each_element(var, true, &mut |c, idx| {
            let v = c.pop_scalar(ty);
            c.store_at(var, idx, v);
        });
    }
}
