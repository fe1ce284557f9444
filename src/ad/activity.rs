//! Activity analysis: which variables and values carry derivatives.
//!
//! A value is **varied** when it depends (through differentiable operations)
//! on an independent, and **useful** when a dependent depends on it; it is
//! **active** when both. Both analyses run over the CFG to a fixpoint
//! (forward for varied, backward for useful), flow-sensitively: a scalar
//! store kills the old value, an array element store does not.
//!
//! * Only floating-point data is ever varied or useful: integers, logicals
//!   and characters never are, nor are the results of rounding operations
//!   (flat) or the second argument of SIGN.
//! * Dependences are differentiable ones only (seed 003, section 4): a value
//!   that reaches the outputs only through control flow (a branch or loop
//!   condition, the condition of a selection, a comparison) is not useful,
//!   so it gets no tangent and its statement is not reversed.
//! * Storage is tracked per *slot*: one slot per variable of the procedure,
//!   plus one per module global (every variable naming a global shares its
//!   slot, so globals flow between procedures).
//! * **Calls** are interprocedural in two layers. A *dependence summary* per
//!   procedure (which interface inputs, i.e. parameters and globals at
//!   entry, may influence which interface outputs at return) is computed
//!   once per module by a fixpoint over the call graph; the caller's varied
//!   and useful analyses go through it, conservatively (an argument keeps
//!   its old activity across the call: weak update). Then each call site
//!   gets its own *activity context* (which callee parameters / globals are
//!   varied at entry, which are useful at return) and the callee is analysed
//!   for that context: [`Activity::call`] returns it, and the transforms
//!   generate one derivative procedure per distinct context.
//! * Variable activity is the union over program points: a variable is
//!   active when it is varied somewhere and useful somewhere. A caller
//!   variable passed to a callee parameter that is active in the callee's
//!   context is made active too (the callee needs its derivative storage),
//!   and a global active anywhere in the call tree is active everywhere.
//!   A parameter or global varied at entry and useful at return is active
//!   even when the procedure overwrites it with a passive value: the caller
//!   keeps its activity across the call (weak update), so the callee's
//!   derivative must define its derivative at return (zero, then).
//!   The root's independents and dependents are always active, so the
//!   derivative procedure's signature depends only on what was asked.
//!
//! **Recursion** (direct or mutual) is a fixpoint over the call graph's
//! cycles. A call reaching a context that is still being analysed (an
//! ancestor in the call tree) gets a *stub* ([`Activity::is_stub`]): the
//! context with the activity currently assumed for it (nothing at first).
//! When the ancestor's analysis ends with more active variables or globals
//! than assumed, the assumption grows to the result and the ancestor (and
//! everything analysed under it) is analysed again; activity only grows with
//! the callee's, so this ends, and at the end every stub has exactly the
//! activity of the context it stands for. The full activity of every stubbed
//! context is kept by the root ([`Activity::resolve`]), so a transform that
//! meets a stub generates (or reuses) one derivative procedure per context,
//! which calls itself.

use adjit_ir::{
    BinaryOp, CallArg, GlobalId, Inst, Module, Proc, ProcId, StackKind, Storage, Terminator, Type,
    UnaryOp, Value, VarId,
};
use rustc_hash::FxHashMap as HashMap;
use smallvec::{smallvec, SmallVec};
use std::collections::BTreeMap;

/// A fixed-size set of small integers. Up to 128 members are stored
/// inline: the analyses copy one set per value and per slot, and a heap
/// allocation per copy cost more than the analysis itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct BitSet {
    words: SmallVec<[u64; 2]>,
}

impl BitSet {
    fn new(len: usize) -> BitSet {
        BitSet {
            words: smallvec![0; len.div_ceil(64)],
        }
    }
    fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    /// `self |= other`; true when `self` changed.
    fn union_with(&mut self, other: &BitSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | *b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
    fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }
}

/// The storage slots of one procedure: its variables, then every global,
/// then (in value-stack mode, see [`uses_value_stack`]) one slot for the
/// runtime value stack.
#[derive(Clone, Copy)]
struct Slots<'m> {
    module: &'m Module,
    proc: &'m Proc,
    /// The value stack is tracked as a slot.
    stack: bool,
}

impl<'m> Slots<'m> {
    fn count(&self) -> usize {
        self.proc.vars.len() + self.module.globals.len() + usize::from(self.stack)
    }
    /// The slot of the value stack (meaningful in value-stack mode only).
    fn stack_slot(&self) -> usize {
        self.proc.vars.len() + self.module.globals.len()
    }
    fn of_var(&self, var: VarId) -> usize {
        match self.proc.var(var).storage {
            Storage::Global(g, _) => self.of_global(g),
            _ => var.index(),
        }
    }
    fn of_global(&self, g: GlobalId) -> usize {
        self.proc.vars.len() + g.index()
    }
    /// True when the slot holds floating-point data.
    fn is_float(&self, slot: usize) -> bool {
        match self.proc.vars.get(slot) {
            Some(v) => v.ty.is_float() && !matches!(v.storage, Storage::Global(..)),
            None => {
                (self.stack && slot == self.stack_slot())
                    || self
                        .module
                        .globals
                        .get(slot - self.proc.vars.len())
                        .is_some_and(|g| g.ty.is_float())
            }
        }
    }
    /// True when a store to the variable overwrites all of its slot: a
    /// scalar, unless it views one element of a larger global (an
    /// EQUIVALENCE or COMMON partner of other variables).
    fn is_scalar_var(&self, var: VarId) -> bool {
        let v = self.proc.var(var);
        match v.storage {
            _ if v.is_array() => false,
            Storage::Global(g, _) => self
                .module
                .globals
                .get(g.index())
                .is_some_and(|gl| gl.len() <= 1),
            _ => true,
        }
    }
}

/// The operands through which an instruction's result has a (possibly)
/// non-zero derivative, consistent with [`super::rules`].
fn differentiable_operands(proc: &Proc, v: Value) -> SmallVec<[Value; 2]> {
    let data = proc.inst(v);
    if !data.ty.is_some_and(Type::is_float) {
        return SmallVec::new();
    }
    let float = |u: &Value| proc.value_type(*u).is_some_and(Type::is_float);
    let ops: SmallVec<[Value; 2]> = match &data.kind {
        Inst::Unary(UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round, _) => {
            smallvec![]
        }
        Inst::Unary(_, a) | Inst::Convert(a, _) => smallvec![*a],
        Inst::Binary(BinaryOp::Sign | BinaryOp::PowI, a, _) => smallvec![*a],
        Inst::Binary(_, a, b) | Inst::Select(_, a, b) => smallvec![*a, *b],
        _ => smallvec![],
    };
    ops.into_iter().filter(float).collect()
}

/// One interface input or output of a procedure: a parameter (by position),
/// a global, or (value-stack mode) the runtime value stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Port {
    Param(usize),
    Global(GlobalId),
    Stack,
}

/// Which interface inputs may influence which interface outputs.
#[derive(Clone, Debug, PartialEq, Default)]
struct Summary {
    /// The interface ports, parameters first then globals.
    ports: Vec<Port>,
    /// Per output port: the set of input ports it depends on.
    deps: Vec<BitSet>,
}

/// Dependence summaries of the procedures reachable from a root.
struct Summaries {
    by_proc: HashMap<ProcId, Summary>,
    /// Value-stack mode: the code reached from the root pushes or pops
    /// floating-point values (derivative code being differentiated again).
    stack: bool,
}

/// The caller's view of one call's arguments, port by port.
struct CallPorts {
    ports: Vec<Port>,
    /// The caller slot bound to each port, if storage (None for a `Value`).
    slots: Vec<Option<usize>>,
    /// The value bound to each `Value` port.
    values: Vec<Option<Value>>,
}

impl Summaries {
    fn compute(module: &Module, root: ProcId) -> Summaries {
        let mut order = Vec::new();
        let mut seen = vec![false; module.procs.len()];
        let mut stack = vec![root];
        while let Some(p) = stack.pop() {
            if p.index() >= module.procs.len() || std::mem::replace(&mut seen[p.index()], true) {
                continue;
            }
            order.push(p);
            for_each_call(module.proc(p), |_, callee, _| stack.push(callee));
        }
        let mut s = Summaries {
            by_proc: HashMap::default(),
            stack: order.iter().any(|&p| touches_value_stack(module.proc(p))),
        };
        for &p in &order {
            let ports = interface_ports(module, p, s.stack);
            let deps = vec![BitSet::new(ports.len()); ports.len()];
            s.by_proc.insert(p, Summary { ports, deps });
        }
        // Monotone fixpoint (recursion converges from the empty relation).
        loop {
            let mut changed = false;
            for &p in order.iter().rev() {
                let new = s.summarize(module, p);
                if s.by_proc.get(&p) != Some(&new) {
                    s.by_proc.insert(p, new);
                    changed = true;
                }
            }
            if !changed {
                return s;
            }
        }
    }

    /// Runs the dependence analysis of `p` with one label per input port.
    fn summarize(&self, module: &Module, p: ProcId) -> Summary {
        let proc = module.proc(p);
        let slots = Slots {
            module,
            proc,
            stack: self.stack,
        };
        let ports = interface_ports(module, p, self.stack);
        let labels = ports.len();
        let mut entry = vec![BitSet::new(labels); slots.count()];
        for (i, port) in ports.iter().enumerate() {
            if let Some(slot) = port_slot(&slots, *port) {
                if slots.is_float(slot) {
                    entry[slot].insert(i);
                }
            }
        }
        let flow = forward(&slots, self, entry, labels);
        let deps = ports
            .iter()
            .map(|port| match port_slot(&slots, *port) {
                Some(slot) if slots.is_float(slot) => flow.exit[slot].clone(),
                _ => BitSet::new(labels),
            })
            .collect();
        Summary { ports, deps }
    }

    /// Binds a call's arguments to the callee's ports.
    fn call_ports(&self, slots: &Slots, callee: ProcId, args: &[CallArg]) -> CallPorts {
        let ports = match self.by_proc.get(&callee) {
            Some(s) => s.ports.clone(),
            None => (0..args.len()).map(Port::Param).collect(),
        };
        let mut cp = CallPorts {
            slots: Vec::new(),
            values: Vec::new(),
            ports,
        };
        for port in &cp.ports {
            let (slot, value) = match port {
                Port::Param(k) => match args.get(*k) {
                    Some(CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _)) => {
                        (Some(slots.of_var(*x)), None)
                    }
                    Some(CallArg::Value(v)) => (None, Some(*v)),
                    None => (None, None),
                },
                Port::Global(g) => (Some(slots.of_global(*g)), None),
                Port::Stack => (Some(slots.stack_slot()), None),
            };
            cp.slots.push(slot);
            cp.values.push(value);
        }
        cp
    }

    /// Whether input port `i` of `callee` may influence output port `j`
    /// (every pair when the callee is unknown).
    fn depends(&self, callee: ProcId, i: usize, j: usize) -> bool {
        self.by_proc
            .get(&callee)
            .is_none_or(|s| s.deps.get(j).is_some_and(|d| d.contains(i)))
    }
}

/// The slot a port of `slots.proc` lives in.
fn port_slot(slots: &Slots, port: Port) -> Option<usize> {
    match port {
        Port::Param(k) => slots.proc.params.get(k).map(|&v| slots.of_var(v)),
        Port::Global(g) => Some(slots.of_global(g)),
        Port::Stack => slots.stack.then(|| slots.stack_slot()),
    }
}

/// True when the procedure pushes or pops the runtime value stack.
fn touches_value_stack(proc: &Proc) -> bool {
    proc.insts.iter().any(|d| {
        matches!(
            d.kind,
            Inst::Push(StackKind::Value, _) | Inst::Pop(StackKind::Value)
        )
    })
}

/// True when `proc` or a procedure it calls (transitively) pushes or pops
/// the runtime value stack: the code is derivative code (an adjoint's
/// sweeps). Activity analysis then runs in *value-stack mode*: the stack is
/// one more storage slot (an interface port of every procedure that uses
/// it, directly or through callees), varied at every entry and useful at
/// every return, a push a weak store of its operand and a pop a load. The
/// tangent transform then carries tangents on the stack beside the values.
pub fn uses_value_stack(module: &Module, proc: ProcId) -> bool {
    let mut seen = vec![false; module.procs.len()];
    let mut todo = vec![proc];
    while let Some(p) = todo.pop() {
        if p.index() >= module.procs.len() || std::mem::replace(&mut seen[p.index()], true) {
            continue;
        }
        let proc = module.proc(p);
        if touches_value_stack(proc) {
            return true;
        }
        for_each_call(proc, |_, callee, _| todo.push(callee));
    }
    false
}

/// The ports of a procedure: its parameters, then the globals it or its
/// callees name (transitively), then in value-stack mode the value stack
/// when it or its callees use it.
fn interface_ports(module: &Module, p: ProcId, stack: bool) -> Vec<Port> {
    let mut globals = vec![false; module.globals.len()];
    let mut seen = vec![false; module.procs.len()];
    let mut uses_stack = false;
    let mut todo = vec![p];
    while let Some(q) = todo.pop() {
        if q.index() >= module.procs.len() || std::mem::replace(&mut seen[q.index()], true) {
            continue;
        }
        let proc = module.proc(q);
        for v in &proc.vars {
            if let Storage::Global(g, _) = v.storage {
                if let Some(slot) = globals.get_mut(g.index()) {
                    *slot = true;
                }
            }
        }
        uses_stack |= touches_value_stack(proc);
        for_each_call(proc, |_, callee, _| todo.push(callee));
    }
    let params = module.proc(p).params.len();
    (0..params)
        .map(Port::Param)
        .chain(
            globals
                .iter()
                .enumerate()
                .filter(|(_, &used)| used)
                .map(|(g, _)| Port::Global(GlobalId(g as u32))),
        )
        .chain((stack && uses_stack).then_some(Port::Stack))
        .collect()
}

/// Calls `f(call value, callee, args)` for every call of a procedure.
fn for_each_call(proc: &Proc, mut f: impl FnMut(Value, ProcId, &[CallArg])) {
    for block in &proc.blocks {
        for &v in &block.insts {
            if let Inst::Call(callee, args) = &proc.inst(v).kind {
                f(v, *callee, args);
            }
        }
    }
}

/// The blocks of a procedure reachable from the entry, in reverse postorder.
fn reverse_postorder(proc: &Proc) -> Vec<usize> {
    let n = proc.blocks.len();
    let mut visited = vec![false; n];
    let mut post = Vec::new();
    let mut stack = vec![(0usize, 0usize)];
    if n == 0 {
        return post;
    }
    visited[0] = true;
    while let Some((b, i)) = stack.pop() {
        let succ = proc.blocks[b].term.successors();
        if let Some(s) = succ.get(i) {
            stack.push((b, i + 1));
            let s = s.index();
            if s < n && !visited[s] {
                visited[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Result of the forward (varied / dependence) analysis.
struct ForwardFlow {
    /// Per value: the labels it depends on.
    values: Vec<BitSet>,
    /// Per slot: the labels at some return.
    exit: Vec<BitSet>,
    /// Per slot: the labels at some program point.
    ever: Vec<BitSet>,
    /// Per call: the labels of each callee port at entry.
    call_in: HashMap<Value, Vec<BitSet>>,
}

/// Forward analysis with `labels` labels from the entry state `entry`
/// (one label set per slot).
fn forward(slots: &Slots, summaries: &Summaries, entry: Vec<BitSet>, labels: usize) -> ForwardFlow {
    let proc = slots.proc;
    let order = reverse_postorder(proc);
    let mut block_in: Vec<Option<Vec<BitSet>>> = vec![None; proc.blocks.len()];
    block_in[0] = Some(entry.clone());
    let mut values = vec![BitSet::new(labels); proc.insts.len()];
    let mut flow = ForwardFlow {
        values: Vec::new(),
        exit: vec![BitSet::new(labels); slots.count()],
        ever: entry.clone(),
        call_in: HashMap::default(),
    };
    let mut recording = false;
    loop {
        let mut changed = false;
        for &b in &order {
            let Some(mut state) = block_in[b].clone() else {
                continue;
            };
            for &v in &proc.blocks[b].insts {
                let record = recording.then_some(&mut flow);
                let written =
                    transfer_forward(slots, summaries, v, &mut state, &mut values, labels, record);
                if recording {
                    // Only the slots the instruction writes can have
                    // changed; the others are joined at the block's end.
                    match written {
                        Written::Slot(w) => {
                            flow.ever[w].union_with(&state[w]);
                        }
                        Written::Nothing => {}
                        Written::Any => {
                            for (e, s) in flow.ever.iter_mut().zip(&state) {
                                e.union_with(s);
                            }
                        }
                    }
                }
            }
            if recording {
                for (e, s) in flow.ever.iter_mut().zip(&state) {
                    e.union_with(s);
                }
                if matches!(proc.blocks[b].term, Terminator::Return) {
                    for (e, s) in flow.exit.iter_mut().zip(&state) {
                        e.union_with(s);
                    }
                }
                continue;
            }
            for s in proc.blocks[b].term.successors() {
                let Some(slot) = block_in.get_mut(s.index()) else {
                    continue;
                };
                match slot {
                    None => {
                        *slot = Some(state.clone());
                        changed = true;
                    }
                    Some(old) => {
                        for (o, n) in old.iter_mut().zip(&state) {
                            changed |= o.union_with(n);
                        }
                    }
                }
            }
        }
        if recording {
            break;
        }
        recording = !changed;
    }
    flow.values = values;
    flow
}

/// The state slots [`transfer_forward`] changed at one instruction.
enum Written {
    Nothing,
    /// One slot: a store or a push.
    Slot(usize),
    /// Any slot: a call.
    Any,
}

/// The forward transfer function of one instruction; returns the state
/// slots it may have changed.
fn transfer_forward(
    slots: &Slots,
    summaries: &Summaries,
    v: Value,
    state: &mut [BitSet],
    values: &mut [BitSet],
    labels: usize,
    record: Option<&mut ForwardFlow>,
) -> Written {
    let proc = slots.proc;
    let float_value = proc.value_type(v).is_some_and(Type::is_float);
    match &proc.inst(v).kind {
        Inst::Load(x) | Inst::LoadElem(x, _) => {
            values[v.index()] = if float_value {
                state[slots.of_var(*x)].clone()
            } else {
                BitSet::new(labels)
            };
            Written::Nothing
        }
        Inst::Store(x, u) | Inst::StoreElem(x, _, u) => {
            let slot = slots.of_var(*x);
            if slots.is_float(slot) {
                if matches!(proc.inst(v).kind, Inst::Store(..)) && slots.is_scalar_var(*x) {
                    state[slot] = values[u.index()].clone();
                } else {
                    let u = values[u.index()].clone();
                    state[slot].union_with(&u);
                }
            }
            Written::Slot(slot)
        }
        Inst::Push(StackKind::Value, u) if slots.stack => {
            let u = values[u.index()].clone();
            state[slots.stack_slot()].union_with(&u);
            Written::Slot(slots.stack_slot())
        }
        Inst::Pop(StackKind::Value) if slots.stack => {
            values[v.index()] = if float_value {
                state[slots.stack_slot()].clone()
            } else {
                BitSet::new(labels)
            };
            Written::Nothing
        }
        Inst::Call(callee, args) => {
            let cp = summaries.call_ports(slots, *callee, args);
            let inputs: Vec<BitSet> = cp
                .slots
                .iter()
                .zip(&cp.values)
                .map(|(slot, value)| match (slot, value) {
                    (Some(s), _) => state[*s].clone(),
                    (None, Some(u)) => values[u.index()].clone(),
                    (None, None) => BitSet::new(labels),
                })
                .collect();
            for (j, slot) in cp.slots.iter().enumerate() {
                let Some(slot) = *slot else { continue };
                if !slots.is_float(slot) {
                    continue;
                }
                for (i, input) in inputs.iter().enumerate() {
                    if !input.is_empty() && summaries.depends(*callee, i, j) {
                        state[slot].union_with(input);
                    }
                }
            }
            if let Some(flow) = record {
                flow.call_in.insert(v, inputs);
            }
            Written::Any
        }
        _ => {
            let mut set = BitSet::new(labels);
            for u in differentiable_operands(proc, v) {
                set.union_with(&values[u.index()]);
            }
            values[v.index()] = set;
            Written::Nothing
        }
    }
}

/// Result of the backward (useful) analysis.
struct BackwardFlow {
    /// Per value: useful.
    values: Vec<bool>,
    /// Per slot: useful at some program point.
    ever: BitSet,
    /// Per call: which callee ports are useful at its return.
    call_out: HashMap<Value, Vec<bool>>,
}

/// Backward useful analysis from the set of slots useful at every return.
fn backward(slots: &Slots, summaries: &Summaries, exit: &BitSet) -> BackwardFlow {
    let proc = slots.proc;
    let n = slots.count();
    let mut order = reverse_postorder(proc);
    order.reverse();
    let mut block_in: Vec<BitSet> = vec![BitSet::new(n); proc.blocks.len()];
    let mut flow = BackwardFlow {
        values: vec![false; proc.insts.len()],
        ever: exit.clone(),
        call_out: HashMap::default(),
    };
    let mut recording = false;
    loop {
        let mut changed = false;
        for &b in &order {
            let block = &proc.blocks[b];
            let mut state = match block.term {
                Terminator::Return => exit.clone(),
                _ => BitSet::new(n),
            };
            for s in block.term.successors() {
                if let Some(s) = block_in.get(s.index()) {
                    state.union_with(s);
                }
            }
            if recording {
                flow.ever.union_with(&state);
            }
            for &v in block.insts.iter().rev() {
                transfer_backward(
                    slots,
                    summaries,
                    v,
                    &mut state,
                    &mut flow.values,
                    recording.then_some(&mut flow.call_out),
                );
                if recording {
                    flow.ever.union_with(&state);
                }
            }
            changed |= block_in[b].union_with(&state);
        }
        if recording {
            return flow;
        }
        if !changed {
            recording = true;
            flow.values.iter_mut().for_each(|u| *u = false);
        }
    }
}

/// The backward transfer function of one instruction.
fn transfer_backward(
    slots: &Slots,
    summaries: &Summaries,
    v: Value,
    state: &mut BitSet,
    values: &mut [bool],
    record: Option<&mut HashMap<Value, Vec<bool>>>,
) {
    let proc = slots.proc;
    match &proc.inst(v).kind {
        Inst::Load(x) | Inst::LoadElem(x, _) => {
            if values[v.index()] {
                state.insert(slots.of_var(*x));
            }
        }
        Inst::Store(x, u) | Inst::StoreElem(x, _, u) => {
            let slot = slots.of_var(*x);
            if slots.is_float(slot) && state.contains(slot) {
                values[u.index()] = true;
                if matches!(proc.inst(v).kind, Inst::Store(..)) && slots.is_scalar_var(*x) {
                    state.remove(slot);
                }
            }
        }
        Inst::Push(StackKind::Value, u) if slots.stack => {
            if state.contains(slots.stack_slot()) {
                values[u.index()] = true;
            }
        }
        Inst::Pop(StackKind::Value) if slots.stack => {
            if values[v.index()] && proc.value_type(v).is_some_and(Type::is_float) {
                state.insert(slots.stack_slot());
            }
        }
        Inst::Call(callee, args) => {
            let cp = summaries.call_ports(slots, *callee, args);
            let useful_out: Vec<bool> = cp
                .slots
                .iter()
                .map(|s| s.is_some_and(|s| slots.is_float(s) && state.contains(s)))
                .collect();
            for i in 0..cp.ports.len() {
                let useful_in = useful_out
                    .iter()
                    .enumerate()
                    .any(|(j, &u)| u && summaries.depends(*callee, i, j));
                if !useful_in {
                    continue;
                }
                match (cp.slots[i], cp.values[i]) {
                    (Some(s), _) if slots.is_float(s) => state.insert(s),
                    (None, Some(u)) => values[u.index()] = true,
                    _ => {}
                }
            }
            if let Some(record) = record {
                record.insert(v, useful_out);
            }
        }
        _ => {
            if values[v.index()] {
                for u in differentiable_operands(proc, v) {
                    values[u.index()] = true;
                }
            }
        }
    }
}

/// What a derivative procedure is generated for: a procedure, which of its
/// interface inputs are varied at entry and which outputs are useful at
/// return. Two call sites with equal contexts share one derivative.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    /// The procedure.
    pub proc: ProcId,
    /// Parameters varied at entry (the independents, for the root).
    pub independents: Vec<VarId>,
    /// Parameters useful at return (the dependents, for the root).
    pub dependents: Vec<VarId>,
    /// Globals varied at entry.
    pub varied_globals: Vec<GlobalId>,
    /// Globals useful at return.
    pub useful_globals: Vec<GlobalId>,
}

/// The activity of one procedure in one [`Context`], with the activity of
/// every callee at every call site.
#[derive(Clone, Debug)]
pub struct Activity {
    /// What was analysed.
    pub context: Context,
    varied_vars: Vec<bool>,
    useful_vars: Vec<bool>,
    active_vars: Vec<bool>,
    active_globals: Vec<bool>,
    varied_values: Vec<bool>,
    useful_values: Vec<bool>,
    calls: BTreeMap<Value, Activity>,
    /// Stands for the activity of its context analysed higher up in the call
    /// tree (a recursive call): it has that activity's variables and globals
    /// but no callees.
    stub: bool,
    /// At the root: the full activity of every context some stub stands for.
    recursive: HashMap<Context, Activity>,
}

impl Activity {
    /// True for the activity of a recursive call: it has the activity of its
    /// context's variables and globals but no callee activities; see
    /// [`Activity::resolve`].
    pub fn is_stub(&self) -> bool {
        self.stub
    }
    /// The full activity of `a`, a node of this (root) activity's tree:
    /// `a` itself, or for a stub the activity of its context.
    pub fn resolve<'s>(&'s self, a: &'s Activity) -> &'s Activity {
        if a.stub {
            self.recursive.get(&a.context).unwrap_or(a)
        } else {
            a
        }
    }
    /// True when `a` (a node of this root activity's tree) or a procedure it
    /// calls, transitively and through recursion, has an active variable.
    pub fn any_active(&self, a: &Activity) -> bool {
        let mut seen = Vec::new();
        let mut todo = vec![self.resolve(a)];
        while let Some(x) = todo.pop() {
            if seen.contains(&&x.context) {
                continue;
            }
            seen.push(&x.context);
            if x.active_vars.iter().any(|&v| v) {
                return true;
            }
            todo.extend(x.calls.values().map(|c| self.resolve(c)));
        }
        false
    }
    /// Varied somewhere (depends on an independent).
    pub fn is_varied(&self, var: VarId) -> bool {
        self.varied_vars.get(var.index()).copied().unwrap_or(false)
    }
    /// Useful somewhere (influences a dependent).
    pub fn is_useful(&self, var: VarId) -> bool {
        self.useful_vars.get(var.index()).copied().unwrap_or(false)
    }
    /// Needs derivative storage: varied and useful, or required by a callee,
    /// a global active anywhere in the call tree, or a root independent /
    /// dependent.
    pub fn is_active(&self, var: VarId) -> bool {
        self.active_vars.get(var.index()).copied().unwrap_or(false)
    }
    /// True when the global needs derivative storage (active in some
    /// procedure of the call tree).
    pub fn is_global_active(&self, g: GlobalId) -> bool {
        self.active_globals.get(g.index()).copied().unwrap_or(false)
    }
    /// The value depends on an independent.
    pub fn is_value_varied(&self, v: Value) -> bool {
        self.varied_values.get(v.index()).copied().unwrap_or(false)
    }
    /// The value influences a dependent.
    pub fn is_value_useful(&self, v: Value) -> bool {
        self.useful_values.get(v.index()).copied().unwrap_or(false)
    }
    /// The value has a non-zero derivative that matters: varied and useful.
    pub fn is_value_active(&self, v: Value) -> bool {
        self.is_value_varied(v) && self.is_value_useful(v)
    }
    /// The activity of the callee of the call instruction `call`, in that
    /// call site's context (None for a recursive call or a non-call).
    pub fn call(&self, call: Value) -> Option<&Activity> {
        self.calls.get(&call)
    }
    /// The active parameters, in parameter order.
    pub fn active_params(&self, module: &Module) -> Vec<VarId> {
        module
            .procs
            .get(self.context.proc.index())
            .map(|p| {
                p.params
                    .iter()
                    .copied()
                    .filter(|&v| self.is_active(v))
                    .collect()
            })
            .unwrap_or_default()
    }
    /// Calls `f` on this activity and on every callee activity, depth first
    /// (stubs included, not resolved).
    pub fn for_each(&self, f: &mut dyn FnMut(&Activity)) {
        f(self);
        for callee in self.calls.values() {
            callee.for_each(f);
        }
    }
}

/// Analyses `proc` with the given independents (varied at entry) and
/// dependents (useful at return): parameters or variables naming globals.
/// Out-of-range handles are ignored (the transforms validate first).
pub fn analyze(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
) -> Activity {
    analyze_with_globals(module, proc, independents, dependents, &[])
}

/// Like [`analyze`], with `globals` in addition both varied at entry and
/// useful at return, whether or not `proc` names them: the context of a
/// callee whose caller keeps these globals' derivatives across the call (a
/// global written by a deeper callee and read after the call is useful in
/// every procedure on the way, even one that never names it).
pub fn analyze_with_globals(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
    globals: &[GlobalId],
) -> Activity {
    let Some(p) = module.procs.get(proc.index()) else {
        return empty_activity(module, proc);
    };
    let summaries = Summaries::compute(module, proc);
    let split = |vars: &[VarId]| {
        let mut params = Vec::new();
        let mut globals = Vec::new();
        for &v in vars.iter().filter(|v| v.index() < p.vars.len()) {
            match p.var(v).storage {
                Storage::Global(g, _) => globals.push(g),
                _ => params.push(v),
            }
        }
        (params, globals)
    };
    let (ind_params, mut ind_globals) = split(independents);
    let (dep_params, mut dep_globals) = split(dependents);
    let float_global = |g: &&GlobalId| {
        module
            .globals
            .get(g.index())
            .is_some_and(|g| g.ty.is_float())
    };
    for &g in globals.iter().filter(float_global) {
        for list in [&mut ind_globals, &mut dep_globals] {
            if !list.contains(&g) {
                list.push(g);
            }
        }
    }
    let context = Context {
        proc,
        independents: ind_params,
        dependents: dep_params,
        varied_globals: ind_globals,
        useful_globals: dep_globals,
    };
    let mut analyzer = Analyzer {
        module,
        summaries: &summaries,
        in_progress: Vec::new(),
        memo: HashMap::default(),
        memo_log: Vec::new(),
        assumed: HashMap::default(),
        stubbed: Vec::new(),
        recursive: HashMap::default(),
    };
    let mut root = analyzer.analyze(&context);
    let mut recursive = std::mem::take(&mut analyzer.recursive);
    for &v in independents
        .iter()
        .chain(dependents)
        .filter(|v| v.index() < p.vars.len())
    {
        if p.var(v).ty.is_float() {
            root.active_vars[v.index()] = true;
            if let Storage::Global(g, _) = p.var(v).storage {
                root.active_globals[g.index()] = true;
            }
        }
    }
    let mut globals = vec![false; module.globals.len()];
    root.for_each(&mut |a| {
        for (g, &active) in globals.iter_mut().zip(&a.active_globals) {
            *g |= active;
        }
    });
    spread_globals(module, &mut root, &globals);
    for a in recursive.values_mut() {
        spread_globals(module, a, &globals);
    }
    root.recursive = recursive;
    root
}

/// Makes every variable naming an active global active, in the whole tree.
fn spread_globals(module: &Module, a: &mut Activity, globals: &[bool]) {
    a.active_globals = globals.to_vec();
    let proc = module.proc(a.context.proc);
    for (i, var) in proc.vars.iter().enumerate() {
        if let Storage::Global(g, _) = var.storage {
            if globals.get(g.index()).copied().unwrap_or(false) && var.ty.is_float() {
                a.active_vars[i] = true;
            }
        }
    }
    for callee in a.calls.values_mut() {
        spread_globals(module, callee, globals);
    }
}

/// The activity of nothing (unknown procedure).
fn empty_activity(module: &Module, proc: ProcId) -> Activity {
    Activity {
        context: Context {
            proc,
            independents: Vec::new(),
            dependents: Vec::new(),
            varied_globals: Vec::new(),
            useful_globals: Vec::new(),
        },
        varied_vars: Vec::new(),
        useful_vars: Vec::new(),
        active_vars: Vec::new(),
        active_globals: vec![false; module.globals.len()],
        varied_values: Vec::new(),
        useful_values: Vec::new(),
        calls: BTreeMap::new(),
        stub: false,
        recursive: HashMap::default(),
    }
}

/// Per-context analysis with memoisation and a fixpoint over recursion.
struct Analyzer<'m> {
    module: &'m Module,
    summaries: &'m Summaries,
    in_progress: Vec<Context>,
    memo: HashMap<Context, Activity>,
    /// Contexts in `memo`, in insertion order (an analysis that must be
    /// redone drops what was memoised under it).
    memo_log: Vec<Context>,
    /// The stub currently assumed for each context reached by a recursive
    /// call while in progress.
    assumed: HashMap<Context, Activity>,
    /// Contexts whose assumed stub was used since they started.
    stubbed: Vec<Context>,
    /// The final activity of every context a stub was made for.
    recursive: HashMap<Context, Activity>,
}

impl Analyzer<'_> {
    /// The activity of `context`, iterated while recursive calls back to it
    /// assumed less activity than its analysis finds (module docs).
    fn analyze(&mut self, context: &Context) -> Activity {
        if let Some(a) = self.memo.get(context) {
            return a.clone();
        }
        let log_len = self.memo_log.len();
        loop {
            let mut activity = self.analyze_once(context);
            if !self.stubbed.contains(context) {
                self.memoize(context, &activity);
                return activity;
            }
            let assumed = self
                .assumed
                .entry(context.clone())
                .or_insert_with(|| stub_of(&activity));
            let same = assumed.active_vars == activity.active_vars
                && assumed.active_globals == activity.active_globals;
            let grew = union_into(&mut assumed.active_vars, &activity.active_vars)
                | union_into(&mut assumed.active_globals, &activity.active_globals);
            if same || !grew {
                // Converged (or, defensively, no more growth: the result
                // takes the assumed activity so stubs and it agree).
                activity.active_vars.clone_from(&assumed.active_vars);
                activity.active_globals.clone_from(&assumed.active_globals);
                self.assumed.remove(context);
                self.stubbed.retain(|c| c != context);
                self.recursive.insert(context.clone(), activity.clone());
                self.memoize(context, &activity);
                return activity;
            }
            for c in self.memo_log.drain(log_len..) {
                self.memo.remove(&c);
            }
        }
    }

    fn memoize(&mut self, context: &Context, activity: &Activity) {
        self.memo.insert(context.clone(), activity.clone());
        self.memo_log.push(context.clone());
    }

    /// The stub for a recursive call reaching `context` (in progress).
    fn stub(&mut self, context: &Context) -> Activity {
        if !self.stubbed.contains(context) {
            self.stubbed.push(context.clone());
        }
        match self.assumed.get(context) {
            Some(a) => a.clone(),
            None => {
                let proc = self.module.proc(context.proc);
                let mut a = empty_activity(self.module, context.proc);
                a.context = context.clone();
                a.active_vars = vec![false; proc.vars.len()];
                a.varied_vars = vec![false; proc.vars.len()];
                a.useful_vars = vec![false; proc.vars.len()];
                a.stub = true;
                self.assumed.insert(context.clone(), a.clone());
                a
            }
        }
    }

    /// One analysis of `context`, with the current assumptions for
    /// recursive calls.
    fn analyze_once(&mut self, context: &Context) -> Activity {
        let module = self.module;
        let proc = module.proc(context.proc);
        let slots = Slots {
            module,
            proc,
            stack: self.summaries.stack,
        };
        let n = slots.count();
        let mut entry = vec![BitSet::new(1); n];
        let mut exit = BitSet::new(n);
        for &v in &context.independents {
            let s = slots.of_var(v);
            if slots.is_float(s) {
                entry[s].insert(0);
            }
        }
        for &g in &context.varied_globals {
            entry[slots.of_global(g)].insert(0);
        }
        for &v in &context.dependents {
            let s = slots.of_var(v);
            if slots.is_float(s) {
                exit.insert(s);
            }
        }
        for &g in &context.useful_globals {
            exit.insert(slots.of_global(g));
        }
        if slots.stack {
            // Conservatively: whatever a caller pushed may be varied, and
            // whatever this procedure leaves on the stack may be popped
            // into a dependent later.
            entry[slots.stack_slot()].insert(0);
            exit.insert(slots.stack_slot());
        }
        let fwd = forward(&slots, self.summaries, entry, 1);
        let bwd = backward(&slots, self.summaries, &exit);
        let varied_slot = |s: usize| fwd.ever[s].contains(0);
        let varied_vars: Vec<bool> = (0..proc.vars.len())
            .map(|v| varied_slot(slots.of_var(VarId(v as u32))))
            .collect();
        let useful_vars: Vec<bool> = (0..proc.vars.len())
            .map(|v| bwd.ever.contains(slots.of_var(VarId(v as u32))))
            .collect();
        let active_slots = active_slots(&slots, self.summaries, &fwd, &bwd, &exit);
        let mut active_vars: Vec<bool> = (0..proc.vars.len())
            .map(|v| active_slots.contains(slots.of_var(VarId(v as u32))))
            .collect();
        let mut active_globals: Vec<bool> = (0..module.globals.len())
            .map(|g| active_slots.contains(slots.of_global(GlobalId(g as u32))))
            .collect();
        // The caller keeps an argument's old activity across a call (weak
        // update), so an interface variable varied at entry and useful at
        // return needs its derivative defined at return even when this
        // procedure overwrites it with a passive value (the derivative is
        // then zero): it is active.
        for &v in &context.independents {
            if context.dependents.contains(&v) && slots.is_float(slots.of_var(v)) {
                active_vars[v.index()] = true;
            }
        }
        for &g in &context.varied_globals {
            if context.useful_globals.contains(&g) {
                active_globals[g.index()] = true;
            }
        }

        self.in_progress.push(context.clone());
        let mut calls = BTreeMap::new();
        for (call, callee, args) in collect_calls(proc) {
            if callee.index() >= module.procs.len() {
                continue;
            }
            let cp = self.summaries.call_ports(&slots, callee, &args);
            let inputs = fwd.call_in.get(&call);
            let outputs = bwd.call_out.get(&call);
            let callee_proc = module.proc(callee);
            let mut ctx = Context {
                proc: callee,
                independents: Vec::new(),
                dependents: Vec::new(),
                varied_globals: Vec::new(),
                useful_globals: Vec::new(),
            };
            for (i, port) in cp.ports.iter().enumerate() {
                let varied = inputs
                    .and_then(|ins| ins.get(i))
                    .is_some_and(|s| s.contains(0));
                let useful = outputs.and_then(|o| o.get(i)).copied().unwrap_or(false);
                match port {
                    Port::Param(k) => {
                        let Some(&param) = callee_proc.params.get(*k) else {
                            continue;
                        };
                        // An active ALLOCATABLE array passed by descriptor:
                        // the callee may allocate it, and must then
                        // allocate (and define) its derivative too.
                        let follows = matches!(
                            callee_proc.var(param).storage,
                            Storage::AllocatableParam(_)
                        ) && matches!(args.get(*k), Some(CallArg::Var(x)) if active_vars[x.index()]);
                        if varied || follows {
                            ctx.independents.push(param);
                        }
                        if useful || follows {
                            ctx.dependents.push(param);
                        }
                    }
                    Port::Global(g) => {
                        if varied {
                            ctx.varied_globals.push(*g);
                        }
                        if useful {
                            ctx.useful_globals.push(*g);
                        }
                    }
                    // Every context has the stack varied and useful.
                    Port::Stack => {}
                }
            }
            let callee_activity = if self.in_progress.contains(&ctx) {
                self.stub(&ctx)
            } else {
                self.analyze(&ctx)
            };
            // The caller must provide derivative storage for every actual
            // bound to an active callee parameter.
            for (k, arg) in args.iter().enumerate() {
                let active = callee_proc
                    .params
                    .get(k)
                    .is_some_and(|&p| callee_activity.is_active(p));
                if let (true, CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _)) =
                    (active, arg)
                {
                    if proc.var(*x).ty.is_float() {
                        active_vars[x.index()] = true;
                    }
                }
            }
            for (g, &a) in active_globals
                .iter_mut()
                .zip(&callee_activity.active_globals)
            {
                *g |= a;
            }
            calls.insert(call, callee_activity);
        }
        self.in_progress.pop();

        let activity = Activity {
            context: context.clone(),
            varied_vars,
            useful_vars,
            active_vars,
            active_globals,
            varied_values: fwd.values.iter().map(|s| s.contains(0)).collect(),
            useful_values: bwd.values,
            calls,
            stub: false,
            recursive: HashMap::default(),
        };
        activity
    }
}

/// The stub of a context with `a`'s variable and global activity (`a`
/// without callees).
fn stub_of(a: &Activity) -> Activity {
    Activity {
        context: a.context.clone(),
        varied_vars: a.varied_vars.clone(),
        useful_vars: a.useful_vars.clone(),
        active_vars: a.active_vars.clone(),
        active_globals: a.active_globals.clone(),
        varied_values: Vec::new(),
        useful_values: Vec::new(),
        calls: BTreeMap::new(),
        stub: true,
        recursive: HashMap::default(),
    }
}

/// `into |= from`, elementwise; true when `into` changed.
fn union_into(into: &mut [bool], from: &[bool]) -> bool {
    let mut changed = false;
    for (a, &b) in into.iter_mut().zip(from) {
        changed |= b && !*a;
        *a |= b;
    }
    changed
}

/// The slots that are varied and useful at some common program point. A
/// slot varied and useful at a point stays varied up to the use that makes
/// it useful (nothing kills it on the way), so it suffices to look at the
/// uses: a load whose value is varied and useful, a call argument varied at
/// the call whose callee input is useful, or a varied slot at a return where
/// it is useful.
fn active_slots(
    slots: &Slots,
    summaries: &Summaries,
    fwd: &ForwardFlow,
    bwd: &BackwardFlow,
    exit: &BitSet,
) -> BitSet {
    let proc = slots.proc;
    let mut active = BitSet::new(slots.count());
    for s in 0..slots.count() {
        if exit.contains(s) && fwd.exit[s].contains(0) {
            active.insert(s);
        }
    }
    for block in &proc.blocks {
        for &v in &block.insts {
            match &proc.inst(v).kind {
                Inst::Load(x) | Inst::LoadElem(x, _) => {
                    let varied = fwd.values.get(v.index()).is_some_and(|s| s.contains(0));
                    if varied && bwd.values.get(v.index()).copied().unwrap_or(false) {
                        active.insert(slots.of_var(*x));
                    }
                }
                Inst::Call(callee, args) => {
                    let (Some(ins), Some(outs)) = (fwd.call_in.get(&v), bwd.call_out.get(&v))
                    else {
                        continue;
                    };
                    let cp = summaries.call_ports(slots, *callee, args);
                    for (i, slot) in cp.slots.iter().enumerate() {
                        let Some(slot) = *slot else { continue };
                        let varied = ins.get(i).is_some_and(|s| s.contains(0));
                        let useful = outs
                            .iter()
                            .enumerate()
                            .any(|(j, &u)| u && summaries.depends(*callee, i, j));
                        if varied && useful {
                            active.insert(slot);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    active
}

/// Every call of a procedure: (call value, callee, arguments).
fn collect_calls(proc: &Proc) -> Vec<(Value, ProcId, Vec<CallArg>)> {
    let mut calls = Vec::new();
    for_each_call(proc, |v, callee, args| {
        calls.push((v, callee, args.to_vec()))
    });
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::{BinaryOp, CmpOp, Rounding, UnaryOp};

    fn module_of(proc: Proc) -> (Module, ProcId) {
        let mut m = Module::default();
        let id = m.add_proc(proc);
        (m, id)
    }

    #[test]
    fn varied_and_useful_are_both_needed() {
        // y = x*w; z = x*2; where only y is a dependent.
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let [x, y, z, w] = ["x", "y", "z", "w"].map(|n| b.param(n, Type::F64, vec![]));
        let n = b.param("n", Type::I32, vec![]);
        let (lx, lw) = (b.load(x), b.load(w));
        let xw = b.binary(BinaryOp::Mul, lx, lw);
        b.store(y, xw);
        let two = b.fconst(Type::F64, 2.0);
        let x2 = b.binary(BinaryOp::Mul, lx, two);
        b.store(z, x2);
        let nx = b.convert(lx, Type::I32, Rounding::Trunc);
        b.store(n, nx);
        b.ret();
        let (m, f) = module_of(p);
        let a = analyze(&m, f, &[x], &[y]);
        assert!(a.is_active(x) && a.is_active(y));
        assert!(a.is_varied(z) && !a.is_useful(z) && !a.is_active(z));
        assert!(a.is_useful(w) && !a.is_varied(w) && !a.is_active(w));
        assert!(
            !a.is_varied(n) && !a.is_active(n),
            "integers are never active"
        );
        assert!(a.is_value_active(xw) && a.is_value_active(lx));
        assert!(!a.is_value_active(lw) && !a.is_value_useful(x2) && !a.is_value_varied(nx));
        assert_eq!(a.active_params(&m), [x, y]);
    }

    #[test]
    fn values_reaching_outputs_only_through_control_flow_are_not_useful() {
        // t = sqrt(x); u = x*x; if (t > 1) y = x else y = 2*x;
        // z = merge(x, 3*x, u > 1): t and u decide, they do not feed.
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let [x, y, z] = ["x", "y", "z"].map(|n| b.param(n, Type::F64, vec![]));
        let (t, u) = (b.local("t", Type::F64), b.local("u", Type::F64));
        let lx = b.load(x);
        let root = b.unary(UnaryOp::Sqrt, lx);
        b.store(t, root);
        let sq = b.binary(BinaryOp::Mul, lx, lx);
        b.store(u, sq);
        let lu = b.load(u);
        let one = b.fconst(Type::F64, 1.0);
        let three = b.fconst(Type::F64, 3.0);
        let x3 = b.binary(BinaryOp::Mul, three, lx);
        let big = b.cmp(CmpOp::Gt, lu, one);
        let merged = b.select(big, lx, x3);
        b.store(z, merged);
        let lt = b.load(t);
        let cond = b.cmp(CmpOp::Gt, lt, one);
        let (then, other, join) = (b.create_block(), b.create_block(), b.create_block());
        b.branch(cond, then, other);
        b.switch_to_block(then);
        let lx = b.load(x);
        b.store(y, lx);
        b.jump(join);
        b.switch_to_block(other);
        let lx = b.load(x);
        let two = b.fconst(Type::F64, 2.0);
        let x2 = b.binary(BinaryOp::Mul, two, lx);
        b.store(y, x2);
        b.jump(join);
        b.switch_to_block(join);
        b.ret();
        let (m, f) = module_of(p);
        let a = analyze(&m, f, &[x], &[y, z]);
        assert!(a.is_varied(t) && !a.is_useful(t) && !a.is_active(t));
        assert!(a.is_varied(u) && !a.is_useful(u) && !a.is_active(u));
        assert!(!a.is_value_useful(root) && !a.is_value_useful(lt) && !a.is_value_useful(lu));
        assert!(a.is_value_active(merged) && a.is_value_active(x3) && a.is_active(x));
    }

    #[test]
    fn scalar_stores_kill_and_loops_reach_a_fixpoint() {
        // t = x; t = 1; y = t  (y not varied)   ; then a loop s = s*x.
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let [x, y, s] = ["x", "y", "s"].map(|n| b.param(n, Type::F64, vec![]));
        let t = b.local("t", Type::F64);
        let acc = b.local("acc", Type::F64);
        let i = b.local("i", Type::I32);
        let lx = b.load(x);
        b.store(t, lx);
        let one = b.fconst(Type::F64, 1.0);
        b.store(t, one);
        let lt = b.load(t);
        b.store(y, lt);
        let acc_init = b.load(s);
        b.store(acc, acc_init);
        let (head, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.jump(head);
        b.switch_to_block(head);
        let li = b.load(i);
        let three = b.iconst(Type::I32, 3);
        let more = b.cmp(CmpOp::Lt, li, three);
        b.branch(more, body, exit);
        b.switch_to_block(body);
        let la = b.load(acc);
        let lx = b.load(x);
        let prod = b.binary(BinaryOp::Mul, la, lx);
        b.store(acc, prod);
        let li = b.load(i);
        let one_i = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, li, one_i);
        b.store(i, next);
        b.jump(head);
        b.switch_to_block(exit);
        let la = b.load(acc);
        b.store(s, la);
        b.ret();
        let (m, f) = module_of(p);
        let a = analyze(&m, f, &[x], &[y, s]);
        assert!(
            !a.is_value_varied(lt),
            "the load after `t = 1` is not varied"
        );
        assert!(a.is_active(y), "dependents stay active");
        assert!(a.is_varied(t) && !a.is_active(t), "x's value in t is dead");
        assert!(a.is_active(acc) && a.is_value_active(la) && !a.is_value_varied(acc_init));
        assert!(a.is_active(s));
    }

    #[test]
    fn calls_get_per_site_contexts() {
        // g(a, b): b = a*a.  f(x, y): call g(x, t); call g(1.5, u); y = t + u
        let mut m = Module::default();
        let mut p = Proc::new("g");
        let mut b = ProcBuilder::new(&mut p);
        let (ga, gb) = (
            b.param("a", Type::F64, vec![]),
            b.param("b", Type::F64, vec![]),
        );
        let la = b.load(ga);
        let sq = b.binary(BinaryOp::Mul, la, la);
        b.store(gb, sq);
        b.ret();
        let g = m.add_proc(p);
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let (x, y) = (
            b.param("x", Type::F64, vec![]),
            b.param("y", Type::F64, vec![]),
        );
        let (t, u) = (b.local("t", Type::F64), b.local("u", Type::F64));
        let c1 = b.call(g, vec![CallArg::Var(x), CallArg::Var(t)]);
        let k = b.fconst(Type::F64, 1.5);
        let c2 = b.call(g, vec![CallArg::Value(k), CallArg::Var(u)]);
        let (lt, lu) = (b.load(t), b.load(u));
        let s = b.binary(BinaryOp::Add, lt, lu);
        b.store(y, s);
        b.ret();
        let f = m.add_proc(p);
        let a = analyze(&m, f, &[x], &[y]);
        assert!(a.is_active(t) && !a.is_active(u) && a.is_useful(u));
        let site1 = a.call(c1).expect("analysed");
        assert_eq!(site1.context.independents, [ga]);
        assert_eq!(site1.context.dependents, [gb]);
        assert!(site1.is_active(ga) && site1.is_active(gb));
        let site2 = a.call(c2).expect("analysed");
        assert!(site2.context.independents.is_empty());
        assert!(!site2.is_active(ga) && !site2.is_active(gb));
    }

    #[test]
    fn a_parameter_varied_at_entry_and_useful_at_return_is_active() {
        // g(v): v = 0.25.  f(x, y): t = x; call g(t); y = t*x
        let mut m = Module::default();
        let mut p = Proc::new("g");
        let mut b = ProcBuilder::new(&mut p);
        let v = b.param("v", Type::F64, vec![]);
        let c = b.fconst(Type::F64, 0.25);
        b.store(v, c);
        b.ret();
        let g = m.add_proc(p);
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let (x, y) = (
            b.param("x", Type::F64, vec![]),
            b.param("y", Type::F64, vec![]),
        );
        let t = b.local("t", Type::F64);
        let lx = b.load(x);
        b.store(t, lx);
        let call = b.call(g, vec![CallArg::Var(t)]);
        let (lt, lx) = (b.load(t), b.load(x));
        let r = b.binary(BinaryOp::Mul, lt, lx);
        b.store(y, r);
        b.ret();
        let f = m.add_proc(p);
        let a = analyze(&m, f, &[x], &[y]);
        let site = a.call(call).expect("analysed");
        assert_eq!(site.context.independents, [v]);
        assert_eq!(site.context.dependents, [v]);
        // Neither varied at return nor useful at entry, yet active: the
        // callee's derivative must zero it for the caller.
        assert!(site.is_active(v));
        assert!(a.is_active(t));
    }

    #[test]
    fn mutual_recursion_reaches_a_fixpoint_with_consistent_stubs() {
        // f(x, y, n): if (n > 0) call g(x, y, n) else y = x*x
        // g(a, b, m): call f(a, b, m - 1); b = b*a
        let mut m = Module::default();
        let (f_id, g_id) = (ProcId(0), ProcId(1));
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let x = b.param("x", Type::F64, vec![]);
        let y = b.param("y", Type::F64, vec![]);
        let n = b.param("n", Type::I32, vec![]);
        let ln = b.load(n);
        let zero = b.iconst(Type::I32, 0);
        let more = b.cmp(CmpOp::Gt, ln, zero);
        let (rec, base, join) = (b.create_block(), b.create_block(), b.create_block());
        b.branch(more, rec, base);
        b.switch_to_block(rec);
        let to_g = b.call(
            g_id,
            vec![CallArg::Var(x), CallArg::Var(y), CallArg::Var(n)],
        );
        b.jump(join);
        b.switch_to_block(base);
        let lx = b.load(x);
        let sq = b.binary(BinaryOp::Mul, lx, lx);
        b.store(y, sq);
        b.jump(join);
        b.switch_to_block(join);
        b.ret();
        m.add_proc(p);
        let mut p = Proc::new("g");
        let mut b = ProcBuilder::new(&mut p);
        let a = b.param("a", Type::F64, vec![]);
        let bb = b.param("b", Type::F64, vec![]);
        let mm = b.param("m", Type::I32, vec![]);
        let lm = b.load(mm);
        let one = b.iconst(Type::I32, 1);
        let m1 = b.binary(BinaryOp::Sub, lm, one);
        let to_f = b.call(
            f_id,
            vec![CallArg::Var(a), CallArg::Var(bb), CallArg::Value(m1)],
        );
        let (lb, la) = (b.load(bb), b.load(a));
        let prod = b.binary(BinaryOp::Mul, lb, la);
        b.store(bb, prod);
        b.ret();
        m.add_proc(p);
        let root = analyze(&m, f_id, &[x], &[y]);
        assert!(!root.is_stub());
        let g = root.call(to_g).expect("g analysed");
        assert!(!g.is_stub() && g.is_active(a) && g.is_active(bb) && !g.is_active(mm));
        // Down the chain f -> g -> f -> ... until a context repeats.
        let mut node = g;
        let back = loop {
            let next = node.call(to_f).or_else(|| node.call(to_g));
            let next = next.expect("every level calls");
            if next.is_stub() {
                break next;
            }
            node = next;
        };
        let full = root.resolve(back);
        assert!(!full.is_stub() && !full.calls.is_empty());
        assert_eq!(full.context, back.context);
        let params = &m.proc(back.context.proc).params;
        for &v in params {
            assert_eq!(back.is_active(v), full.is_active(v), "stub and full agree");
        }
        assert!(back.is_active(params[0]) && back.is_active(params[1]));
        assert!(!back.is_active(params[2]));
        assert!(root.any_active(back));
    }
}
