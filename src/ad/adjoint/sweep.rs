//! Generation of the augmented forward sweep and of the reverse sweep of one
//! normalised procedure.
//!
//! **Forward sweep** (`foo_fwd`): the original statements, where
//! * before each effect the `RecordPlan` marks, the overwritten value is
//!   pushed (floats on the Value stack, integers and truth values on the
//!   Integer stack), then the subscripts when they must be recorded;
//! * on every CFG edge into a block with several incoming edges, the edge's
//!   position among them is pushed on the Control stack (seed 000's general
//!   scheme, correct for any CFG, reducible or not: for an IF it is the
//!   branch id, for a loop header one id per iteration);
//! * a call runs the callee's forward sweep;
//! * at the end, the id of the RETURN taken (when there are several) and the
//!   locals the reverse sweep needs are pushed.
//!
//! **Reverse sweep** (`foo_rev`): pops the handed-over locals and the RETURN
//! id, then runs, for each forward block `B`, a block `B'` with `B`'s
//! statements reversed, ending in a jump to the reverse block of `B`'s
//! predecessor (a pop of the edge id and a Switch when `B` had several).
//! Each statement is reversed as: pop the recorded subscripts / old value and
//! store it back; recompute the part of the statement's code list the local
//! partials need, from the restored state; read the left-hand side's adjoint
//! and reset it to 0; propagate it backward through the code list
//! (`u_b += dphi/du * v_b`; adjoints of code-list temporaries are SSA values,
//! so they are overwritten, never incremented), incrementing the adjoints of
//! the variables loaded. Iterative assignments (`x = x*y`) come out right
//! because the left-hand side's adjoint is reset before the increments of
//! the right-hand side. A statement that reads its left side's old value
//! once skips the reset ([`SeedUse`]): a self-increment (`y = y + e`) leaves
//! the adjoint as it is, any other (`y = y*x`) stores the old value's adjoint
//! into it (`y_b = x*y_b`) in place of that value's increment. With strong zeros on every product, an array-element
//! store with a nonlinear partial skips its recomputation and propagation
//! when its adjoint is zero (see [`skip_zero_seed`]). A call is reversed by
//! the callee's reverse sweep.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use adjit_ir::{
    BlockId, CallArg, Inst, Proc, ProcId, Span, StackKind, Storage, Terminator, Type, UnaryOp,
    Value, Var, VarId,
};

use super::control::ControlPlan;
use super::emit::Cursor;
use super::increment::{seed_use, SeedUse};
use super::normalize::{is_effect, map_operands, Normalized, Statement};
use super::reach::{incoming_edges, return_blocks, Pred};
use super::record::{inversion, is_active_statement, recomputed, PlanContext, RecordPlan};
use super::store::{companion, shared_results, stored_results, Shared};
use crate::ad::rules::{self, Emit, Partial, StrongZero};

impl Emit for Cursor<'_> {
    fn emit(&mut self, inst: Inst, ty: Type) -> Value {
        if let Inst::Unary(op, a) = inst {
            if let Some(&known) = self.known_calls.get(&(op, a)) {
                return known;
            }
        }
        self.ins(inst, Some(ty))
    }
    fn type_of(&self, v: Value) -> Option<Type> {
        self.proc.insts.get(v.index()).and_then(|d| d.ty)
    }
    fn inst_of(&self, v: Value) -> Option<&Inst> {
        self.proc.insts.get(v.index()).map(|d| &d.kind)
    }
}

/// An [`Emit`] that only tracks types: used to learn the shape of an
/// instruction's partials without emitting anything.
struct DryEmit<'a> {
    proc: &'a Proc,
    emitted: Vec<Type>,
}

impl Emit for DryEmit<'_> {
    fn emit(&mut self, _inst: Inst, ty: Type) -> Value {
        self.emitted.push(ty);
        Value((self.proc.insts.len() + self.emitted.len() - 1) as u32)
    }
    fn type_of(&self, v: Value) -> Option<Type> {
        match self.proc.insts.get(v.index()) {
            Some(d) => d.ty,
            None => self.emitted.get(v.index() - self.proc.insts.len()).copied(),
        }
    }
    fn inst_of(&self, v: Value) -> Option<&Inst> {
        self.proc.insts.get(v.index()).map(|d| &d.kind)
    }
}

/// The local partials of one instruction of the normalised procedure, when
/// they are constants (0, ±1): then the reverse sweep needs no value of the
/// instruction. `None` for instructions whose partials depend on values
/// (nonlinear operations, selections, min / max) and for non-elemental
/// instructions.
pub(crate) fn symbolic_partials(proc: &Proc, v: Value) -> Option<Vec<(Value, Partial)>> {
    let data = proc.inst(v);
    let ty = data.ty?;
    let mut dry = DryEmit {
        proc,
        emitted: Vec::new(),
    };
    let parts = rules::partials(&mut dry, &data.kind, ty, v, &|_| true)?;
    parts
        .iter()
        .all(|(_, p)| matches!(p, Partial::Zero | Partial::One | Partial::MinusOne))
        .then_some(parts)
}

/// True when the partials of `v` depend on values (the reverse sweep must
/// recompute its operands and result).
pub(crate) fn is_nonlinear(proc: &Proc, v: Value) -> bool {
    let data = proc.inst(v);
    rules::is_elemental(&data.kind)
        && data.ty.is_some_and(Type::is_float)
        && symbolic_partials(proc, v).is_none()
}

/// The variables of the generated procedures: the normalised procedure's
/// variables (same handles) plus one adjoint per active variable.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Variable arena shared by the forward, reverse and combined procedures.
    pub vars: Vec<Var>,
    /// Parameters: the original ones in order, each active one followed by
    /// its adjoint.
    pub params: Vec<VarId>,
    /// The adjoint variable of each active variable.
    pub adjoint: HashMap<VarId, VarId>,
    /// Per original parameter: whether it is followed by an adjoint.
    pub active_params: Vec<bool>,
}

impl Layout {
    /// Lays out the variables of `proc`; `has_adjoint` says which variables
    /// get an adjoint, `global_adjoint` gives the adjoint global of a global.
    pub fn new(
        proc: &Proc,
        has_adjoint: &dyn Fn(VarId) -> bool,
        global_adjoint: &mut dyn FnMut(adjit_ir::GlobalId) -> adjit_ir::GlobalId,
    ) -> Layout {
        let mut vars = proc.vars.clone();
        let mut adjoint = HashMap::default();
        for (i, var) in proc.vars.iter().enumerate() {
            let id = VarId(i as u32);
            if !var.ty.is_float() || !has_adjoint(id) {
                continue;
            }
            let storage = match var.storage {
                Storage::Global(g, at) => Storage::Global(global_adjoint(g), at),
                other => other,
            };
            vars.push(Var {
                name: format!("{}_b", var.name),
                ty: var.ty,
                dims: var.dims.clone(),
                char_len: None,
                storage,
            });
            adjoint.insert(id, VarId(vars.len() as u32 - 1));
        }
        let mut params = Vec::new();
        let mut active_params = Vec::new();
        for &p in &proc.params {
            params.push(p);
            let adj = adjoint.get(&p).copied();
            active_params.push(adj.is_some());
            params.extend(adj);
        }
        for (position, &p) in params.iter().enumerate() {
            vars[p.index()].storage = vars[p.index()].storage.as_param(position as u32);
        }
        Layout {
            vars,
            params,
            adjoint,
            active_params,
        }
    }

    /// A procedure with this layout's variables and parameters and an empty
    /// entry block.
    pub fn new_proc(&self, name: String, span: Span) -> Proc {
        Proc {
            name,
            params: self.params.clone(),
            result: None,
            vars: self.vars.clone(),
            insts: Vec::new(),
            blocks: vec![Default::default()],
            span,
            ..Proc::default()
        }
    }
}

/// The generated sweeps of a callee for one activity pattern.
#[derive(Clone, Debug)]
pub(crate) struct CalleeSweeps {
    /// The callee's forward sweep.
    pub forward: ProcId,
    /// The callee's reverse sweep.
    pub reverse: ProcId,
    /// Per callee parameter: whether an adjoint argument follows it.
    pub active: Vec<bool>,
}

/// Everything the sweep generators read.
pub(crate) struct SweepContext<'a> {
    /// Plan inputs (normalised procedure, activity, partial shapes).
    pub plan_ctx: PlanContext<'a>,
    /// What the forward sweep records.
    pub plan: &'a RecordPlan,
    /// Variables of the generated procedures.
    pub layout: &'a Layout,
    /// The callee sweeps of every call effect.
    pub calls: &'a HashMap<Value, CalleeSweeps>,
    /// Reachable blocks of the normalised procedure.
    pub reachable: &'a [bool],
    /// How control flow is recorded (counted loops).
    pub control: &'a ControlPlan,
    /// Which local products are strong zeros (see [`rules::accumulate`]).
    pub strong_zero: StrongZero,
}

impl SweepContext<'_> {
    fn norm(&self) -> &Normalized {
        self.plan_ctx.norm
    }
    fn source(&self) -> &Proc {
        &self.plan_ctx.norm.proc
    }

    /// The arguments of a call to a callee sweep: the original arguments
    /// (subscripts through `map`), each active one followed by its adjoint.
    fn sweep_args(
        &self,
        args: &[CallArg],
        active: &[bool],
        map: &HashMap<Value, Value>,
    ) -> Vec<CallArg> {
        let mut out = Vec::with_capacity(args.len() * 2);
        for (i, arg) in args.iter().enumerate() {
            let m = |x: &Value| map[x];
            let (var, index, len) = match arg {
                CallArg::Var(v) => (*v, None, None),
                CallArg::Elem(v, idx) => (*v, Some(idx.iter().map(m).collect::<Vec<_>>()), None),
                CallArg::Slice(v, idx, n) => (*v, Some(idx.iter().map(m).collect()), Some(m(n))),
                CallArg::Value(v) => {
                    // Normalisation turned expression arguments into locals.
                    out.push(CallArg::Value(map[v]));
                    continue;
                }
            };
            let with = |v: VarId| match (&index, len) {
                (None, _) => CallArg::Var(v),
                (Some(idx), None) => CallArg::Elem(v, idx.clone()),
                (Some(idx), Some(n)) => CallArg::Slice(v, idx.clone(), n),
            };
            out.push(with(var));
            if active.get(i).copied().unwrap_or(false) {
                out.push(with(self.layout.adjoint[&var]));
            }
        }
        out
    }
}

/// Copies a pure or effect instruction with mapped operands.
fn copy_inst(c: &mut Cursor<'_>, source: &Proc, v: Value, map: &mut HashMap<Value, Value>) {
    let data = source.inst(v);
    let kind = map_operands(&data.kind, &mut |u| map[&u]);
    let new = c.ins(kind, data.ty);
    map.insert(v, new);
}

/// Generates the forward sweep.
pub(crate) fn forward_sweep(sc: &SweepContext<'_>, name: String) -> Proc {
    let source = sc.source();
    let mut proc = sc.layout.new_proc(name, source.span);
    let edges = incoming_edges(source, sc.reachable);
    let returns = return_blocks(source, sc.reachable);
    let nblocks = source.blocks.len();
    let mut fb: Vec<BlockId> = vec![Proc::ENTRY; nblocks];
    for (slot, _) in fb.iter_mut().zip(sc.reachable).filter(|(_, &live)| live) {
        *slot = proc.add_block();
    }
    let exit = proc.add_block();
    let mut c = Cursor::new(&mut proc, Proc::ENTRY);
    // Entry edge.
    let entry_dest = forward_edge(&mut c, sc, &edges, None, Proc::ENTRY, 0, fb[0]);
    c.terminate(Terminator::Jump(entry_dest));
    let mut next_edge = vec![0usize; nblocks];
    next_edge[0] = 1;
    for b in (0..nblocks).filter(|&b| sc.reachable[b]) {
        let block = BlockId(b as u32);
        c.switch_to(fb[b]);
        let mut map: HashMap<Value, Value> = HashMap::default();
        let stored: HashSet<Value> = sc.norm().shapes[b]
            .statements
            .iter()
            .flat_map(|stmt| stored_results(&sc.plan_ctx, stmt))
            .collect();
        let shared = shared_results(&sc.plan_ctx, &sc.norm().shapes[b]);
        for &v in &source.block(block).insts {
            let data = source.inst(v);
            c.span = data.span;
            if is_effect(&data.kind) {
                record_before(&mut c, sc, v, &map);
                if let (Inst::Call(_, args), Some(sweeps)) = (&data.kind, sc.calls.get(&v)) {
                    let args = sc.sweep_args(args, &sweeps.active, &map);
                    c.ins(Inst::Call(sweeps.forward, args), None);
                    continue;
                }
            }
            copy_inst(&mut c, source, v, &mut map);
            if stored.contains(&v) && shared.is_pushed(v) {
                c.push_scalar(map[&v]);
                if let Some((op, a)) = companion(&data.kind) {
                    let call = c.ins(Inst::Unary(op, map[&a]), data.ty);
                    c.push_scalar(call);
                }
            }
            allocate_adjoint(&mut c, sc, &data.kind, &map);
        }
        c.span = source.block(block).term_span;
        let term = match &source.block(block).term {
            Terminator::Return => {
                for counter in sc.control.exit_counters(block, None) {
                    push_counter(&mut c, counter);
                }
                if returns.len() > 1 {
                    let id = returns.iter().position(|&r| r == block).unwrap_or(0);
                    let id = c.int(id as i64);
                    c.ins(Inst::Push(StackKind::Control, id), None);
                }
                Terminator::Jump(exit)
            }
            Terminator::Fail(kind) => Terminator::Fail(kind.clone()),
            term => {
                let mut term = term.clone();
                retarget(&mut term, &mut |t| {
                    let k = next_edge[t.index()];
                    next_edge[t.index()] += 1;
                    forward_edge(&mut c, sc, &edges, Some(block), t, k, fb[t.index()])
                });
                if let Terminator::Branch { cond, .. } | Terminator::Switch { value: cond, .. } =
                    &mut term
                {
                    *cond = map[cond];
                }
                term
            }
        };
        c.terminate(term);
    }
    c.switch_to(exit);
    c.span = source.span;
    for &local in sc.plan.handover_locals() {
        c.save_var(local);
    }
    for var in allocatables(source) {
        c.save_allocation_state(var);
    }
    c.terminate(Terminator::Return);
    proc
}

/// In the forward sweep, an adjoint array is allocated and released with
/// its primal: the sweeps of callees take it as an argument.
fn allocate_adjoint(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    inst: &Inst,
    map: &HashMap<Value, Value>,
) {
    match inst {
        Inst::Allocate(var, bounds) => {
            if let Some(&adj) = sc.layout.adjoint.get(var) {
                let bounds = bounds.iter().map(|(l, u)| (map[l], map[u])).collect();
                c.ins(Inst::Allocate(adj, bounds), None);
            }
        }
        Inst::Deallocate(var) => {
            if let Some(&adj) = sc.layout.adjoint.get(var) {
                c.ins(Inst::Deallocate(adj), None);
            }
        }
        _ => {}
    }
}

/// The ALLOCATABLE arrays of a procedure: their allocation state (and
/// contents) is handed over from the forward to the reverse sweep.
fn allocatables(proc: &Proc) -> Vec<VarId> {
    (0..proc.vars.len() as u32)
        .map(VarId)
        .filter(|&v| proc.var(v).storage == Storage::Allocatable)
        .collect()
}

/// The block the `k`-th incoming edge of `to` (coming from `from`, `None`
/// for the procedure entry) goes to in the forward sweep: `dest` (the copy of
/// `to`) itself when nothing is recorded on the edge, else a new block that
/// pushes the counters of the loops the edge leaves, then counts a loop
/// iteration (`to` a counted header) or pushes the edge's id (`to` a join),
/// then jumps to `dest`.
fn forward_edge(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    edges: &[Vec<Pred>],
    from: Option<BlockId>,
    to: BlockId,
    k: usize,
    dest: BlockId,
) -> BlockId {
    let counters = from.map_or_else(Vec::new, |f| sc.control.exit_counters(f, Some(to)));
    let counted = sc.control.loops.get(&to);
    let needs_id = counted.is_none() && edges[to.index()].len() > 1;
    if counters.is_empty() && !needs_id && counted.is_none() {
        return dest;
    }
    let here = c.block;
    let block = c.new_block();
    c.switch_to(block);
    for counter in counters {
        push_counter(c, counter);
    }
    if let Some(l) = counted {
        let next = if k == l.entry_edge {
            c.int(0)
        } else {
            let trips = c.ins(Inst::Load(l.counter), Some(Type::I64));
            let one = c.int(1);
            c.binary(adjit_ir::BinaryOp::Add, trips, one)
        };
        c.ins(Inst::Store(l.counter, next), None);
    } else if needs_id {
        let id = c.int(k as i64);
        c.ins(Inst::Push(StackKind::Control, id), None);
    }
    c.terminate(Terminator::Jump(dest));
    c.switch_to(here);
    block
}

/// Pushes a loop's iteration count on the Control stack.
fn push_counter(c: &mut Cursor<'_>, counter: VarId) {
    let trips = c.ins(Inst::Load(counter), Some(Type::I64));
    c.ins(Inst::Push(StackKind::Control, trips), None);
}

/// The reverse-sweep block that reverses the `k`-th incoming edge of `to`:
/// the reverse block of the edge's source (`exit` for the procedure entry),
/// through a new block popping the counters the forward edge pushed, if any.
fn reverse_edge(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    edges: &[Vec<Pred>],
    rb: &[BlockId],
    exit: BlockId,
    to: BlockId,
    k: usize,
) -> BlockId {
    let (from, dest) = match edges[to.index()][k] {
        Pred::Entry => (None, exit),
        Pred::Block(x) => (Some(x), rb[x.index()]),
    };
    let counters = from.map_or_else(Vec::new, |f| sc.control.exit_counters(f, Some(to)));
    restore_counters(c, &counters, dest)
}

/// `dest`, or a new block popping `counters` (in reverse order) and jumping
/// to `dest`.
fn restore_counters(c: &mut Cursor<'_>, counters: &[VarId], dest: BlockId) -> BlockId {
    if counters.is_empty() {
        return dest;
    }
    let here = c.block;
    let block = c.new_block();
    c.switch_to(block);
    for &counter in counters.iter().rev() {
        let trips = c.ins(Inst::Pop(StackKind::Control), Some(Type::I64));
        c.ins(Inst::Store(counter, trips), None);
    }
    c.terminate(Terminator::Jump(dest));
    c.switch_to(here);
    block
}

/// Replaces every successor of a terminator by `f(successor)`.
fn retarget(term: &mut Terminator, f: &mut dyn FnMut(BlockId) -> BlockId) {
    match term {
        Terminator::Jump(b) => *b = f(*b),
        Terminator::Branch {
            then_dest,
            else_dest,
            ..
        } => {
            *then_dest = f(*then_dest);
            *else_dest = f(*else_dest);
        }
        Terminator::Switch { cases, default, .. } => {
            for case in cases.iter_mut() {
                case.1 = f(case.1);
            }
            *default = f(*default);
        }
        Terminator::Return | Terminator::Fail(_) => {}
    }
}

/// Emits the pushes the plan asks for before the effect `v`.
fn record_before(c: &mut Cursor<'_>, sc: &SweepContext<'_>, v: Value, map: &HashMap<Value, Value>) {
    let source = sc.source();
    match &source.inst(v).kind {
        Inst::Store(var, _) if sc.plan.must_record(v) => {
            let old = c.load_at(*var, &[]);
            c.push_scalar(old);
        }
        Inst::StoreElem(var, idx, _) => {
            let idx: Vec<Value> = idx.iter().map(|x| map[x]).collect();
            if sc.plan.must_record(v) {
                let old = c.load_at(*var, &idx);
                c.push_scalar(old);
            }
            if sc.plan.must_record_subscripts(v) {
                for &sub in &idx {
                    c.push_scalar(sub);
                }
            }
        }
        // The reverse sweep allocates the array again with these values.
        Inst::Deallocate(var) => c.save_allocation(*var),
        _ => {}
    }
}

/// Generates the reverse sweep.
pub(crate) fn reverse_sweep(sc: &SweepContext<'_>, name: String) -> Proc {
    let source = sc.source();
    let mut proc = sc.layout.new_proc(name, source.span);
    let edges = incoming_edges(source, sc.reachable);
    let returns = return_blocks(source, sc.reachable);
    let nblocks = source.blocks.len();
    let mut rb: Vec<BlockId> = vec![Proc::ENTRY; nblocks];
    for (slot, _) in rb.iter_mut().zip(sc.reachable).filter(|(_, &live)| live) {
        *slot = proc.add_block();
    }
    let exit = proc.add_block();
    let mut c = Cursor::new(&mut proc, Proc::ENTRY);
    c.span = source.span;
    for var in allocatables(source).into_iter().rev() {
        c.restore_allocation_state(var, sc.layout.adjoint.get(&var).copied());
    }
    for &local in sc.plan.handover_locals().iter().rev() {
        c.restore_var(local);
    }
    let targets: Vec<BlockId> = returns
        .iter()
        .map(|&r| {
            let counters = sc.control.exit_counters(r, None);
            restore_counters(&mut c, &counters, rb[r.index()])
        })
        .collect();
    let to_returns = dispatch(&mut c, &targets, exit);
    c.terminate(to_returns);
    for b in (0..nblocks).filter(|&b| sc.reachable[b]) {
        let block = BlockId(b as u32);
        c.switch_to(rb[b]);
        if matches!(source.block(block).term, Terminator::Fail(_)) {
            // Never reached: the forward sweep stopped there.
            c.terminate(Terminator::Return);
            continue;
        }
        let mut shared = shared_results(&sc.plan_ctx, &sc.norm().shapes[b]);
        for stmt in sc.norm().shapes[b].statements.iter().rev() {
            c.span = source.inst(stmt.effect).span;
            reverse_statement(&mut c, sc, stmt, &mut shared);
        }
        c.span = source.block(block).term_span;
        let targets: Vec<BlockId> = (0..edges[b].len())
            .map(|k| reverse_edge(&mut c, sc, &edges, &rb, exit, block, k))
            .collect();
        let term = match sc.control.loops.get(&block) {
            Some(l) => {
                // Back around while iterations remain, else out of the loop.
                let trips = c.ins(Inst::Load(l.counter), Some(Type::I64));
                let zero = c.int(0);
                let more = c.ins(
                    Inst::Cmp(adjit_ir::CmpOp::Gt, trips, zero),
                    Some(Type::Bool),
                );
                let here = c.block;
                let again = c.new_block();
                c.switch_to(again);
                let trips = c.ins(Inst::Load(l.counter), Some(Type::I64));
                let one = c.int(1);
                let fewer = c.binary(adjit_ir::BinaryOp::Sub, trips, one);
                c.ins(Inst::Store(l.counter, fewer), None);
                c.terminate(Terminator::Jump(targets[l.back_edge]));
                c.switch_to(here);
                Terminator::Branch {
                    cond: more,
                    then_dest: again,
                    else_dest: targets[l.entry_edge],
                }
            }
            None => dispatch(&mut c, &targets, exit),
        };
        c.terminate(term);
    }
    c.switch_to(exit);
    c.terminate(Terminator::Return);
    proc
}

/// A terminator going to `targets[k]` where `k` is popped from the Control
/// stack (no pop when there is a single target; `fallback` when none).
fn dispatch(c: &mut Cursor<'_>, targets: &[BlockId], fallback: BlockId) -> Terminator {
    match targets {
        [] => Terminator::Jump(fallback),
        [only] => Terminator::Jump(*only),
        [cases @ .., last] => {
            let id = c.ins(Inst::Pop(StackKind::Control), Some(Type::I64));
            Terminator::Switch {
                value: id,
                cases: cases
                    .iter()
                    .enumerate()
                    .map(|(k, &t)| (k as i64, t))
                    .collect(),
                default: *last,
            }
        }
    }
}

/// Emits the adjoint of one statement (see the module documentation);
/// `shared` tells which stored results of its block share one push.
fn reverse_statement(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    stmt: &Statement,
    shared: &mut Shared,
) {
    let source = sc.source();
    let ctx = &sc.plan_ctx;
    let active = is_active_statement(ctx, stmt);
    let needed = recomputed(ctx, stmt);
    let mut map: HashMap<Value, Value> = HashMap::default();
    match &source.inst(stmt.effect).kind {
        Inst::Store(var, value) => {
            if sc.plan.must_record(stmt.effect) {
                let ty = source.var(*var).ty;
                let old = c.pop_scalar(ty);
                c.store_at(*var, &[], old);
            }
            if sc.plan.must_invert(stmt.effect) {
                undo_increment(c, source, stmt);
            }
            if active {
                let companions = pop_stored(c, sc, stmt, &mut map, shared);
                recompute(c, source, needed, &mut map);
                let adj = sc.layout.adjoint[var];
                let seed = take_seed(c, sc, stmt, adj, &[]);
                know_companions(c, &companions, &map);
                propagate(c, sc, stmt, *value, &seed, &map);
                c.known_calls.clear();
            }
        }
        Inst::StoreElem(var, idx, value) => {
            let ty = source.var(*var).ty;
            if sc.plan.must_record_subscripts(stmt.effect) {
                for &sub in idx.iter().rev() {
                    let sub_ty = source.value_type(sub).unwrap_or(Type::I64);
                    let popped = c.pop_scalar(sub_ty);
                    map.insert(sub, popped);
                }
            } else {
                // The subscripts do not read the stored array: computing them
                // after the store gives the values they had before it.
                let closure = closure_of(source, stmt, idx);
                recompute(c, source, &closure, &mut map);
            }
            let index: Vec<Value> = idx.iter().map(|x| map[x]).collect();
            if sc.plan.must_record(stmt.effect) {
                let old = c.pop_scalar(ty);
                c.store_at(*var, &index, old);
            }
            if active {
                let mut companions = pop_stored(c, sc, stmt, &mut map, shared);
                let adj = sc.layout.adjoint[var];
                let mut seed = take_seed(c, sc, stmt, adj, &index);
                let skip = skip_zero_seed(c, sc, stmt, &mut seed, &mut map, &mut companions);
                recompute(c, source, needed, &mut map);
                know_companions(c, &companions, &map);
                propagate(c, sc, stmt, *value, &seed, &map);
                c.known_calls.clear();
                rejoin(c, skip);
            }
        }
        Inst::Call(_, args) => {
            if let Some(sweeps) = sc.calls.get(&stmt.effect) {
                recompute(c, source, needed, &mut map);
                let args = sc.sweep_args(args, &sweeps.active, &map);
                c.ins(Inst::Call(sweeps.reverse, args), None);
            }
        }
        // Before an ALLOCATE the array (and its adjoint) was unallocated.
        Inst::Allocate(var, _) => {
            if let Some(&adj) = sc.layout.adjoint.get(var) {
                c.ins(Inst::Deallocate(adj), None);
            }
            c.ins(Inst::Deallocate(*var), None);
        }
        // Before a DEALLOCATE it held the values the forward sweep saved;
        // its adjoint starts from zero (the released values were dead).
        Inst::Deallocate(var) => {
            c.restore_allocation(*var, sc.layout.adjoint.get(var).copied());
        }
        // Character copies carry no derivative and are not restored.
        _ => {}
    }
}

/// Restores the target of an inverted increment `i = i ± step` (see
/// [`inversion`]): `i = i ∓ step`, the step recomputed from its variables.
fn undo_increment(c: &mut Cursor<'_>, source: &Proc, stmt: &Statement) {
    let Some(inv) = inversion(source, stmt) else {
        return;
    };
    let mut map = HashMap::default();
    recompute(c, source, &inv.step_code, &mut map);
    let now = c.load_at(inv.var, &[]);
    let op = if inv.subtract {
        adjit_ir::BinaryOp::Add
    } else {
        adjit_ir::BinaryOp::Sub
    };
    let before = c.binary(op, now, map[&inv.step]);
    c.store_at(inv.var, &[], before);
}

/// The instructions of `stmt` that `roots` depend on, in execution order.
fn closure_of(source: &Proc, stmt: &Statement, roots: &[Value]) -> Vec<Value> {
    let mut needed = HashSet::default();
    let mut work: Vec<Value> = roots.to_vec();
    let in_stmt: HashSet<Value> = stmt.pure.iter().copied().collect();
    while let Some(v) = work.pop() {
        if in_stmt.contains(&v) && needed.insert(v) {
            source.inst(v).kind.for_each_operand(|u| work.push(u));
        }
    }
    stmt.pure
        .iter()
        .copied()
        .filter(|v| needed.contains(v))
        .collect()
}

/// A library-call result the forward sweep pushed after a stored result for
/// that result's partial ([`companion`]), as the reverse sweep popped it.
struct Companion {
    /// The call made.
    op: UnaryOp,
    /// Its operand in the normalised procedure.
    operand: Value,
    /// The popped result.
    popped: Value,
}

/// Pops the library-call results of `stmt` the forward sweep stored (see
/// [`stored_results`]), last pushed first, as the values of those
/// instructions, and the companion pushed after each ([`companion`]),
/// returned. A result served by a later equal one of its block
/// ([`Shared`]) is read from the local that one was popped into; a result
/// serving earlier ones is also kept in a fresh local.
fn pop_stored(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    stmt: &Statement,
    map: &mut HashMap<Value, Value>,
    shared: &mut Shared,
) -> Vec<Companion> {
    let mut companions = Vec::new();
    for v in stored_results(&sc.plan_ctx, stmt).into_iter().rev() {
        let ty = sc.source().value_type(v).unwrap_or(Type::F64);
        if !shared.is_pushed(v) {
            // Not pushed: the local of the result pushed for it, or (should
            // that never have been popped) recomputation from the state.
            if let Some(local) = shared.local_for(v) {
                let kept = c.load_at(local, &[]);
                map.insert(v, kept);
            }
            continue;
        }
        if let Some((op, operand)) = companion(&sc.source().inst(v).kind) {
            let popped = c.pop_scalar(ty);
            companions.push(Companion {
                op,
                operand,
                popped,
            });
        }
        let popped = c.pop_scalar(ty);
        map.insert(v, popped);
        if shared.is_serving(v) {
            let local = c
                .proc
                .add_var(adjit_ir::Var::scalar(format!("_ad_kept{}", v.0), ty));
            c.store_at(local, &[], popped);
            shared.set_local(v, local);
        }
    }
    companions
}

/// Makes the popped `companions` the results of their calls on the
/// recomputed operands (`map`) for the partial rules ([`Cursor::known_calls`]).
fn know_companions(c: &mut Cursor<'_>, companions: &[Companion], map: &HashMap<Value, Value>) {
    for popped in companions {
        if let Some(&operand) = map.get(&popped.operand) {
            c.known_calls.insert((popped.op, operand), popped.popped);
        }
    }
}

/// Re-emits the listed instructions (skipping those already mapped).
fn recompute(c: &mut Cursor<'_>, source: &Proc, list: &[Value], map: &mut HashMap<Value, Value>) {
    for &v in list {
        if !map.contains_key(&v) {
            copy_inst(c, source, v, map);
        }
    }
}

/// Reads the adjoint `adj(index)` of a statement's left-hand side: the seed
/// of the statement's reversal, and how the reversal uses it
/// ([`seed_use`]). It is reset to 0 unless the statement reads its old
/// value (a self-increment keeps it, another self-reference stores its
/// adjoint into it in [`propagate`]). A statement whose zero seed skips its
/// reversal ([`tests_zero_seed`]) always resets it: the skipped reversal
/// leaves it `+0` as in the general case.
fn take_seed(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    stmt: &Statement,
    adj: VarId,
    index: &[Value],
) -> Seed {
    let value = c.load_at(adj, index);
    let usage = match seed_use(sc.source(), stmt) {
        SeedUse::Assigned(_) if tests_zero_seed(sc, stmt) => SeedUse::Reset,
        found => found,
    };
    if let SeedUse::Reset = usage {
        let zero = c.constant(c.proc.var(adj).ty, 0.0);
        c.store_at(adj, index, zero);
    }
    Seed {
        value,
        usage,
        adj,
        index: index.to_vec(),
    }
}

/// The seed of a statement's reversal ([`take_seed`]).
struct Seed {
    /// The left side's adjoint as the reversal found it.
    value: Value,
    /// How the reversal uses it.
    usage: SeedUse,
    /// The left side's adjoint variable.
    adj: VarId,
    /// The left side's subscripts in the reverse sweep.
    index: Vec<Value>,
}

/// With strong zeros on every product ([`StrongZero::All`]), a statement
/// whose seed is zero (either sign) contributes only zeros: every computed
/// partial's product is the strong zero `+0`, and the unit and constant
/// partials pass on a signed zero. Adding `±0` leaves every adjoint as it is
/// (an adjoint only becomes `-0` from a `-0` written into it from outside
/// the sweeps: the drivers start every adjoint from `+0` and add the seeds
/// to it). So when the statement has a nonlinear partial (one that costs a
/// recomputation and guarded products), its reversal tests the seed once and
/// jumps over the recomputation and the propagation when it is zero: for
/// one seeded output of a vector function most element stores of a reverse
/// loop have a zero seed. Only element stores get the test: the adjoint of
/// a scalar is usually the accumulated derivative of the result (a sum or a
/// product over a loop), never zero, where the test and the block split it
/// makes (the loop body is no longer one block for the loop passes) would
/// only cost (product adjoint 54.5k -> 91.3k instructions per call at
/// n = 1000 with the test on scalar stores too).
/// Emits `if seed == 0 goto join` and continues in the fall-through block;
/// returns `join` for [`rejoin`] (`None`: no test emitted). Values are local
/// to their block: `seed` and the values of `map` (subscripts, popped
/// results) reach the new block through scalar temporaries, and are
/// replaced by their loads there (in `map` and in the seed's subscripts).
fn skip_zero_seed(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    stmt: &Statement,
    seed: &mut Seed,
    map: &mut HashMap<Value, Value>,
    companions: &mut [Companion],
) -> Option<BlockId> {
    if !tests_zero_seed(sc, stmt) {
        return None;
    }
    let ty = c.proc.value_type(seed.value)?;
    let zero = c.constant(ty, 0.0);
    let is_zero = c.ins(
        Inst::Cmp(adjit_ir::CmpOp::Eq, seed.value, zero),
        Some(Type::Bool),
    );
    let mut carried: Vec<(Carried, Value, VarId)> = Vec::new();
    let mut carry = |c: &mut Cursor<'_>, key: Carried, v: Value| {
        let ty = c.proc.value_type(v).unwrap_or(Type::F64);
        let temp = c
            .proc
            .add_var(Var::scalar(format!("_ad_carried{}", v.0), ty));
        c.store_at(temp, &[], v);
        carried.push((key, v, temp));
    };
    carry(c, Carried::Seed, seed.value);
    let mut entries: Vec<(Value, Value)> = map.iter().map(|(&k, &v)| (k, v)).collect();
    entries.sort();
    for (key, v) in entries {
        carry(c, Carried::Mapped(key), v);
    }
    for (k, popped) in companions.iter().enumerate() {
        carry(c, Carried::Companion(k), popped.popped);
    }
    let body = c.new_block();
    let join = c.new_block();
    c.terminate(Terminator::Branch {
        cond: is_zero,
        then_dest: join,
        else_dest: body,
    });
    c.switch_to(body);
    for (key, before, temp) in carried {
        let loaded = c.load_at(temp, &[]);
        match key {
            Carried::Seed => seed.value = loaded,
            Carried::Mapped(key) => {
                map.insert(key, loaded);
                for sub in seed.index.iter_mut().filter(|sub| **sub == before) {
                    *sub = loaded;
                }
            }
            Carried::Companion(k) => companions[k].popped = loaded,
        }
    }
    Some(join)
}

/// True when the reversal of the element store `stmt` tests its seed for
/// zero ([`skip_zero_seed`]): strong zeros on every product and a nonlinear
/// partial.
fn tests_zero_seed(sc: &SweepContext<'_>, stmt: &Statement) -> bool {
    let source = sc.source();
    matches!(source.inst(stmt.effect).kind, Inst::StoreElem(..))
        && sc.strong_zero == StrongZero::All
        && stmt.pure.iter().any(|&v| is_nonlinear(source, v))
}

/// What a value carried into the block a [`skip_zero_seed`] test guards
/// stands for.
enum Carried {
    /// The seed.
    Seed,
    /// The value of an instruction of the normalised procedure.
    Mapped(Value),
    /// The popped result of the companion with this index.
    Companion(usize),
}

/// Ends the block a [`skip_zero_seed`] test guarded: jumps to its join block
/// and continues there.
fn rejoin(c: &mut Cursor<'_>, join: Option<BlockId>) {
    if let Some(join) = join {
        c.terminate(Terminator::Jump(join));
        c.switch_to(join);
    }
}

/// Propagates the adjoint `seed` of the statement's stored value `root`
/// backward through the statement's code list. As `seed_use` says, the old
/// value of a self-increment gets no increment, and the adjoint of the
/// other self-references' old value is stored into the left side's adjoint
/// (0 when nothing reaches it).
fn propagate(
    c: &mut Cursor<'_>,
    sc: &SweepContext<'_>,
    stmt: &Statement,
    root: Value,
    seed: &Seed,
    map: &HashMap<Value, Value>,
) {
    let source = sc.source();
    let mut adj: HashMap<Value, Value> = HashMap::default();
    adj.insert(root, seed.value);
    for &v in stmt.pure.iter().rev() {
        let g = adj.remove(&v);
        let assigned = match seed.usage {
            SeedUse::Kept(old) if old == v => continue,
            SeedUse::Assigned(old) if old == v => true,
            _ => false,
        };
        let data = source.inst(v);
        let (var, idx): (&VarId, &[Value]) = match &data.kind {
            Inst::Load(var) => (var, &[]),
            Inst::LoadElem(var, idx) => (var, idx),
            kind => {
                let Some(g) = g else { continue };
                if !data.ty.is_some_and(Type::is_float) || !rules::is_elemental(kind) {
                    continue;
                }
                for (operand, partial) in local_partials(c, source, v, map) {
                    let Some(ty) = source.value_type(operand).filter(|t| t.is_float()) else {
                        continue;
                    };
                    let acc = adj.get(&operand).copied();
                    if let Some(sum) = rules::accumulate(c, acc, &partial, g, ty, sc.strong_zero) {
                        adj.insert(operand, sum);
                    }
                }
                continue;
            }
        };
        if assigned {
            let ty = c.proc.var(seed.adj).ty;
            let g = match g {
                Some(g) => c.convert_to(g, ty),
                None => c.constant(ty, 0.0),
            };
            c.store_at(seed.adj, &seed.index, g);
            continue;
        }
        let (Some(g), Some(&var_b)) = (g, sc.layout.adjoint.get(var)) else {
            continue;
        };
        let index: Vec<Value> = idx.iter().map(|x| map[x]).collect();
        increment(c, var_b, &index, g);
    }
}

/// The local partials of `v` keyed by its operands in the normalised
/// procedure: symbolic ones directly, the others emitted from the
/// recomputed operand values.
fn local_partials(
    c: &mut Cursor<'_>,
    source: &Proc,
    v: Value,
    map: &HashMap<Value, Value>,
) -> Vec<(Value, Partial)> {
    if let Some(parts) = symbolic_partials(source, v) {
        return parts;
    }
    let data = source.inst(v);
    let mut back: HashMap<Value, Value> = HashMap::default();
    let kind = map_operands(&data.kind, &mut |u| {
        let new = map[&u];
        back.insert(new, u);
        new
    });
    let ty = data.ty.unwrap_or(Type::F64);
    rules::partials(c, &kind, ty, map[&v], &|_| true)
        .unwrap_or_default()
        .into_iter()
        .map(|(u, p)| (back[&u], p))
        .collect()
}

/// `var(index) += g` (converted to the variable's type).
fn increment(c: &mut Cursor<'_>, var: VarId, index: &[Value], g: Value) {
    let ty = c.proc.var(var).ty;
    let old = c.load_at(var, index);
    let g = c.convert_to(g, ty);
    let sum = c.binary(adjit_ir::BinaryOp::Add, old, g);
    c.store_at(var, index, sum);
}
