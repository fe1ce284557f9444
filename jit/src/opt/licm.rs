//! Loop versioning for counted DO loops: bounds checks hoisted to one
//! range test before the loop, and loop-invariant element loads moved out
//! of it.
//!
//! A counted DO loop, after block merging, is a preheader that sets the DO
//! variable, its trip bookkeeping (`_go`, `_rest`, `_stride`) and jumps to
//! a header `br go, body, exit`, and a body: one block that ends with the
//! increment and a jump back, or an acyclic region of blocks (inner IF
//! diamonds, the adjoint's zero-seed skips) entered only at its first
//! block and left only through one latch block that jumps back (the
//! adjoint's reversed loops step their counters in the first block
//! instead). An integer scalar the body stores once and reads later in the
//! iteration (a subscript the zero-seed skip carries into the block it
//! guards) stands for the value stored. When the body makes no call, no I/O and
//! no allocation, and the DO variable steps by 1, the DO variable runs over
//! `[first, last]` exactly, and every subscript of the form `i + t`,
//! `i - t`, `t + i` (with `t` invariant, possibly widened) or an invariant
//! expression spans a range computed in the preheader.
//!
//! The pass then appends to the preheader one test: the loop runs at least
//! once, no subscript wraps, and every such element reference stays, for
//! all iterations, inside its dimensions and its variable's storage (the
//! placeholder [`Versions::guards`] that code generation lowers against the
//! arrays' bounds). When the test passes, a copy of the loop runs whose
//! element references are unchecked ([`Versions::unchecked`]) and whose
//! invariant element loads (of variables the loop does not write) are done
//! once, into scalar temporaries, before the copy's first iteration. When
//! it fails, the original loop runs with all its checks, so an error names
//! the first failing element, its variable and line exactly as without the
//! pass. Element references of blocks that run in some iterations only
//! join the test as if they ran in every one: a conservative test, since
//! when it fails the original loop runs and raises exactly the errors the
//! code without the pass raises.
//!
//! The same test checks that the current segment of every runtime stack the
//! body only pushes on (only pops from) has room for (holds) the words all
//! iterations push (pop), so that the fast copy's pushes and pops skip the
//! per-word segment test: one comparison per loop instead of one per word.
//! When a tape crosses a segment boundary inside the loop, the original
//! loop runs and switches segments as before.
//!
//! The fast copy also computes once, before its first iteration, the
//! floating-point and logical values of the body that depend on invariants
//! only (constants, scalars the loop does not write, the hoisted loads):
//! pure operations that raise no error, so the same bits whenever they are
//! computed. This moves the strong-zero guards of invariant products out of
//! the loop, which Cranelift's own hoisting cannot do once code generation
//! has lowered a guard as a branch.
//!
//! No result changes: the fast copy runs the same instructions on the same
//! operands, minus checks proven to pass, minus reloads of values proven
//! unchanged and minus recomputations of invariant values. Nothing is
//! reassociated.

use super::inline::Origins;
use crate::ir::{
    BinaryOp, BlockId, CmpOp, Const, Inst, Proc, ProcId, Rounding, StackKind, Terminator, Type,
    Value, Var, VarId,
};
use rustc_hash::{FxHashMap, FxHashSet};

/// The range of one element reference over all iterations of a loop: the
/// smallest and largest subscript (`I64` values of the preheader) of each
/// dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardAccess {
    /// The array referenced.
    pub var: VarId,
    /// `(lowest, highest)` subscript per dimension.
    pub dims: Vec<(Value, Value)>,
}

/// The room one runtime stack must have in its current segment for every
/// push (or pop) of a loop to stay in that segment: `per_trip` words per
/// iteration over `trips` iterations.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRoom {
    /// The stack the loop pushes on or pops from (never both).
    pub kind: StackKind,
    /// True when the loop pops (the words must be on the segment below
    /// `top`), false when it pushes (free words above `top`).
    pub pops: bool,
    /// Words pushed or popped in one iteration.
    pub per_trip: u32,
    /// The number of iterations (an `I64` value of the preheader, at least 1
    /// and at most 2^62 when the rest of the test holds).
    pub trips: Value,
}

/// What the preheader test of one versioned loop checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoopGuard {
    /// Element references that must stay inside their variables.
    pub accesses: Vec<GuardAccess>,
    /// Stacks whose current segment must hold the loop's pushes or pops.
    pub stacks: Vec<StackRoom>,
}

/// What code generation needs to know about the versioned loops of one
/// procedure.
#[derive(Clone, Debug, Default)]
pub struct ProcVersions {
    /// Element references (loads and stores) whose subscript and storage
    /// checks, and pushes and pops whose segment checks, a preheader test
    /// already passed: lowered without checks.
    pub unchecked: FxHashSet<Value>,
    /// Placeholder `Bool` constants (`true` to the interpreter) that code
    /// generation lowers as "every reference listed lies inside its
    /// variable's dimensions and storage, and every stack listed has the
    /// room its pushes or pops need in its current segment".
    pub guards: FxHashMap<Value, LoopGuard>,
}

/// The versioned loops of every procedure of a module.
#[derive(Clone, Debug, Default)]
pub struct Versions {
    /// By procedure index.
    pub procs: Vec<ProcVersions>,
}

impl Versions {
    /// The versioned loops of procedure `proc` (none when it has none).
    pub fn proc(&self, proc: ProcId) -> Option<&ProcVersions> {
        self.procs.get(proc.index())
    }
}

/// Versions every eligible counted loop of `proc` (see the module
/// documentation), recording copied instructions' origins.
pub fn version_loops(proc: &mut Proc, pid: ProcId, origins: &mut Origins) -> ProcVersions {
    let mut out = ProcVersions::default();
    let mut preds = predecessors(proc);
    for h in 0..proc.blocks.len() {
        if let Some(shape) = loop_region(proc, &preds, h) {
            version(proc, pid, origins, &preds, &shape, &mut out);
            preds = predecessors(proc);
        }
    }
    out
}

/// The predecessors of every block of `proc`, by block index.
pub(super) fn predecessors(proc: &Proc) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); proc.blocks.len()];
    for (b, block) in proc.blocks.iter().enumerate() {
        for s in block.term.successors() {
            if let Some(p) = preds.get_mut(s.index()) {
                p.push(b);
            }
        }
    }
    preds
}

/// The blocks of a candidate loop.
pub(super) struct Shape {
    /// The preheader (ends with a jump to the header).
    pub(super) pre: usize,
    /// The header (branches to the body or the exit).
    pub(super) header: usize,
    /// The body's first block (its only one for [`loop_shape`]).
    pub(super) body: usize,
    /// Every block of the body in an order where each block comes after
    /// its predecessors: `body` first, the latch (the one block jumping
    /// back to the header) last.
    pub(super) blocks: Vec<usize>,
}

impl Shape {
    /// The block that jumps back to the header (the body's last block).
    fn latch(&self) -> usize {
        self.blocks[self.blocks.len() - 1]
    }
}

/// The most blocks a versioned loop body may have (the fast copy
/// duplicates them all).
const MAX_BODY_BLOCKS: usize = 64;

/// Recognises `pre: ...; jump header`, `header: ...; br c, body, exit`,
/// `body: ...; jump header` with no other entry into the loop.
pub(super) fn loop_shape(proc: &Proc, preds: &[Vec<usize>], h: usize) -> Option<Shape> {
    loop_region(proc, preds, h).filter(|shape| shape.blocks.len() == 1)
}

/// Recognises a loop `pre: ...; jump header`, `header: ...; br c, body,
/// exit` whose body is an acyclic region entered only at `body` (inner
/// IF diamonds and forward branches), left only through one latch block
/// `...; jump header`, with no other exit and no other entry.
pub(super) fn loop_region(proc: &Proc, preds: &[Vec<usize>], h: usize) -> Option<Shape> {
    let Terminator::Branch {
        then_dest,
        else_dest,
        ..
    } = proc.blocks[h].term
    else {
        return None;
    };
    let body = then_dest.index();
    if body == h || else_dest.index() == h || preds[body] != [h] {
        return None;
    }
    // The blocks reachable from the body without passing the header.
    let mut inside = FxHashSet::default();
    let mut stack = vec![body];
    while let Some(b) = stack.pop() {
        if b == h || !inside.insert(b) {
            continue;
        }
        let term = &proc.blocks[b].term;
        if inside.len() > MAX_BODY_BLOCKS
            || !matches!(term, Terminator::Jump(_) | Terminator::Branch { .. })
        {
            return None;
        }
        stack.extend(term.successors().iter().map(|s| s.index()));
    }
    // One latch, and no entry but the header's branch.
    let mut latches = inside.iter().filter(|&&b| {
        proc.blocks[b]
            .term
            .successors()
            .iter()
            .any(|s| s.index() == h)
    });
    let (Some(&latch), None) = (latches.next(), latches.next()) else {
        return None;
    };
    if proc.blocks[latch].term != Terminator::Jump(BlockId(h as u32))
        || inside
            .iter()
            .any(|&b| b != body && preds[b].iter().any(|p| !inside.contains(p)))
    {
        return None;
    }
    // Predecessors first; a block left unordered lies on a cycle.
    let mut waiting: FxHashMap<usize, usize> = inside
        .iter()
        .map(|&b| (b, if b == body { 0 } else { preds[b].len() }))
        .collect();
    let mut blocks = Vec::with_capacity(inside.len());
    let mut ready = vec![body];
    while let Some(b) = ready.pop() {
        blocks.push(b);
        for s in proc.blocks[b].term.successors() {
            if let Some(n) = waiting.get_mut(&s.index()) {
                *n -= 1;
                if *n == 0 {
                    ready.push(s.index());
                }
            }
        }
    }
    let [a, b] = preds[h][..] else {
        return None;
    };
    let pre = if a == latch { b } else { a };
    if blocks.len() != inside.len()
        || pre == h
        || inside.contains(&pre)
        || proc.blocks[pre].term != Terminator::Jump(BlockId(h as u32))
    {
        return None;
    }
    Some(Shape {
        pre,
        header: h,
        body,
        blocks,
    })
}

/// The last value stored to each scalar in a block, and where.
pub(super) fn last_stores(proc: &Proc, block: usize) -> FxHashMap<VarId, (usize, Value)> {
    let mut m = FxHashMap::default();
    for (pos, &v) in proc.blocks[block].insts.iter().enumerate() {
        if let Inst::Store(var, x) = proc.inst(v).kind {
            m.insert(var, (pos, x));
        }
    }
    m
}

fn int_const(proc: &Proc, v: Value) -> Option<i64> {
    match proc.inst(v).kind {
        Inst::Const(Const::Int(c)) => Some(c),
        _ => None,
    }
}

pub(super) fn load_of(proc: &Proc, v: Value) -> Option<VarId> {
    match proc.inst(v).kind {
        Inst::Load(var) => Some(var),
        _ => None,
    }
}

/// The DO variable of a recognised loop and its range.
pub(super) struct Induction {
    /// The DO variable.
    pub(super) var: VarId,
    /// The body block that steps the counters: the latch, or the body's
    /// first block (the adjoint's reversed loops step first).
    block: usize,
    /// Position in `block` of the increment's store.
    store_pos: usize,
    /// The loop's range, emitted into the preheader.
    range: Range,
    /// The DO variable and the bookkeeping variables `block` steps or
    /// reads: no other block of the body may store them.
    counters: Vec<VarId>,
}

/// How the preheader finds the values the DO variable takes at the start
/// of an iteration.
enum Range {
    /// `[first, last]`: I64 values of the preheader (a forward DO loop
    /// counted by the bookkeeping variables `go` and `rest`).
    Values {
        first: Value,
        last: Value,
        go: VarId,
        rest: VarId,
    },
    /// A reversed loop counting `trips` down to 0 while the DO variable
    /// steps down by `step`: the variable's first value and the trips are
    /// loaded at the end of the preheader; the loop is versioned only when
    /// `step` is 1 there.
    CountDown { trips: VarId, step: Option<VarId> },
}

/// The stores to `var` in a block.
fn stores_to(proc: &Proc, block: usize, var: VarId) -> usize {
    proc.blocks[block]
        .insts
        .iter()
        .filter(|&&v| matches!(proc.inst(v).kind, Inst::Store(w, _) if w == var))
        .count()
}

/// The variables the body steps by a constant 1 or by a variable it does
/// not write (`op` is `Add` or `Sub`): `(var, store position, step var)`.
fn steppers(proc: &Proc, body: usize, op: BinaryOp) -> Vec<(VarId, usize, Option<VarId>)> {
    let stores = last_stores(proc, body);
    let mut found: Vec<_> = stores
        .iter()
        .filter_map(|(&var, &(pos, x))| {
            let Inst::Binary(o, a, step) = proc.inst(x).kind else {
                return None;
            };
            if o != op
                || load_of(proc, a) != Some(var)
                || !proc.var(var).ty.is_int()
                || proc.var(var).is_array()
                || stores_to(proc, body, var) != 1
            {
                return None;
            }
            if int_const(proc, step) == Some(1) {
                return Some((var, pos, None));
            }
            let sv = load_of(proc, step)?;
            (!stores.contains_key(&sv)).then_some((var, pos, Some(sv)))
        })
        .collect();
    found.sort_by_key(|c| c.1);
    found
}

/// Matches the DO bookkeeping of the front end with a step of 1:
/// preheader `go = first <= last`, `rest = (last - first) + MIN`,
/// `stride = 1`, `i = first` (`step = 1`); latch `i = i + step`,
/// `go = rest >= stride + MIN`, `rest = rest - stride`.
pub(super) fn forward(proc: &Proc, shape: &Shape, go: VarId) -> Option<Induction> {
    let latch = shape.latch();
    let body = last_stores(proc, latch);
    let pre = last_stores(proc, shape.pre);
    let &(_, go_next) = body.get(&go)?;
    let Inst::Cmp(CmpOp::Ge, r, t) = proc.inst(go_next).kind else {
        return None;
    };
    let rest = load_of(proc, r)?;
    let Inst::Binary(BinaryOp::Add, s, m) = proc.inst(t).kind else {
        return None;
    };
    let stride = load_of(proc, s)?;
    if int_const(proc, m)? != i64::MIN {
        return None;
    }
    let &(_, rest_next) = body.get(&rest)?;
    if proc.inst(rest_next).kind != Inst::Binary(BinaryOp::Sub, r, s)
        || body.contains_key(&stride)
        || stores_to(proc, latch, go) != 1
        || stores_to(proc, latch, rest) != 1
        || pre.get(&stride).and_then(|&(_, x)| int_const(proc, x)) != Some(1)
    {
        return None;
    }
    let &(_, go0) = pre.get(&go)?;
    let Inst::Cmp(CmpOp::Le, first, last) = proc.inst(go0).kind else {
        return None;
    };
    let &(_, rest0) = pre.get(&rest)?;
    let Inst::Binary(BinaryOp::Add, d, m0) = proc.inst(rest0).kind else {
        return None;
    };
    if int_const(proc, m0)? != i64::MIN
        || proc.inst(d).kind != Inst::Binary(BinaryOp::Sub, last, first)
        || proc.value_type(first) != Some(Type::I64)
    {
        return None;
    }
    // The DO variable: stepped by 1, starting at `first`.
    steppers(proc, latch, BinaryOp::Add)
        .into_iter()
        .find_map(|(var, store_pos, step)| {
            let step_one = step
                .is_none_or(|sv| pre.get(&sv).and_then(|&(_, x)| int_const(proc, x)) == Some(1));
            let &(_, init) = pre.get(&var)?;
            let same = init == first
                || matches!(proc.inst(first).kind, Inst::Convert(x, _) if x == init)
                || (int_const(proc, init).is_some()
                    && int_const(proc, init) == int_const(proc, first));
            (step_one && same).then_some(Induction {
                var,
                block: latch,
                store_pos,
                range: Range::Values {
                    first,
                    last,
                    go,
                    rest,
                },
                counters: [go, rest, stride, var].into_iter().chain(step).collect(),
            })
        })
}

/// Matches a reversed DO loop of the adjoint: header `br trips > 0`, latch
/// or first body block `trips = trips - 1`, `i = i - step`.
fn count_down(proc: &Proc, shape: &Shape) -> Option<Induction> {
    let header = &proc.blocks[shape.header];
    let Inst::Cmp(CmpOp::Gt, t, z) = proc.inst(header.term.operand()?).kind else {
        return None;
    };
    let trips = load_of(proc, t)?;
    if int_const(proc, z) != Some(0)
        || proc.var(trips).ty != Type::I64
        || header.insts.iter().any(|&v| {
            !matches!(
                proc.inst(v).kind,
                Inst::Load(_) | Inst::Const(_) | Inst::Cmp(..)
            )
        })
    {
        return None;
    }
    let (block, (_, trips_next)) = [shape.latch(), shape.body]
        .into_iter()
        .find_map(|b| Some((b, *last_stores(proc, b).get(&trips)?)))?;
    let Inst::Binary(BinaryOp::Sub, a, one) = proc.inst(trips_next).kind else {
        return None;
    };
    if load_of(proc, a) != Some(trips)
        || int_const(proc, one) != Some(1)
        || stores_to(proc, block, trips) != 1
    {
        return None;
    }
    let (var, store_pos, step) = steppers(proc, block, BinaryOp::Sub)
        .into_iter()
        .find(|c| c.0 != trips)?;
    Some(Induction {
        var,
        block,
        store_pos,
        range: Range::CountDown { trips, step },
        counters: [trips, var].into_iter().chain(step).collect(),
    })
}

/// How a body value depends on the DO variable.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// The same in every iteration (computable in the preheader).
    Invariant,
    /// The DO variable plus an invariant (see [`Analysis::affine`]).
    Affine,
}

/// Per-loop analysis state.
struct Analysis<'p> {
    proc: &'p Proc,
    /// Variables (with their aliases) the loop writes.
    written: FxHashSet<VarId>,
    /// Body values that load the DO variable's current value.
    iv_loads: FxHashSet<Value>,
    /// Loads of an integer scalar the body stores once, earlier in the
    /// same iteration (in the same block or one that dominates the load's),
    /// to the value stored: how a value reaches a later block of the body.
    forwarded: FxHashMap<Value, Value>,
    forms: FxHashMap<Value, Option<Form>>,
}

impl Analysis<'_> {
    /// Classifies an integer body value, or `None` when it is neither
    /// invariant nor affine in the DO variable.
    fn form(&mut self, v: Value) -> Option<Form> {
        if let Some(&f) = self.forms.get(&v) {
            return f;
        }
        let f = self.classify(v);
        self.forms.insert(v, f);
        f
    }

    fn classify(&mut self, v: Value) -> Option<Form> {
        let data = self.proc.inst(v);
        if !data.ty.is_some_and(|t| t.is_int()) {
            return None;
        }
        if self.iv_loads.contains(&v) {
            return Some(Form::Affine);
        }
        if let Some(&stored) = self.forwarded.get(&v) {
            return self.form(stored);
        }
        match data.kind {
            Inst::Const(Const::Int(_)) => Some(Form::Invariant),
            Inst::Load(var) => {
                let scalar = !self.proc.var(var).is_array();
                (scalar && !self.written.contains(&var)).then_some(Form::Invariant)
            }
            Inst::Convert(x, _) => {
                let from = self.proc.value_type(x)?;
                match self.form(x)? {
                    Form::Invariant => Some(Form::Invariant),
                    // Widening keeps the value; narrowing may wrap.
                    Form::Affine => {
                        (data.ty == Some(Type::I64) && from.is_int()).then_some(Form::Affine)
                    }
                }
            }
            Inst::Unary(crate::ir::UnaryOp::Neg, x) => match self.form(x)? {
                Form::Invariant => Some(Form::Invariant),
                Form::Affine => None,
            },
            Inst::Binary(op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), a, b) => {
                match (op, self.form(a)?, self.form(b)?) {
                    (_, Form::Invariant, Form::Invariant) => Some(Form::Invariant),
                    (BinaryOp::Add, Form::Affine, Form::Invariant)
                    | (BinaryOp::Add, Form::Invariant, Form::Affine)
                    | (BinaryOp::Sub, Form::Affine, Form::Invariant) => Some(Form::Affine),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// A pure instruction an [`Emitter`] emits at most once per block: the
/// range tests of many element references share their subscripts, bounds
/// and comparisons, and emitting each once keeps the preheader test (and
/// what the code generator compiles) small.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Int(i64, Type),
    Bool(bool),
    Load(VarId, Type),
    Unary(crate::ir::UnaryOp, Value, Type),
    Binary(BinaryOp, Value, Value, Type),
    Cmp(CmpOp, Value, Value),
    Convert(Value, Rounding, Type),
}

impl Key {
    /// The key of `inst` of type `ty`, or `None` for an instruction that is
    /// not a pure function of its operands (stores, element loads).
    fn of(inst: &Inst, ty: Option<Type>) -> Option<Key> {
        let ty = ty?;
        Some(match *inst {
            Inst::Const(Const::Int(c)) => Key::Int(c, ty),
            Inst::Const(Const::Bool(b)) => Key::Bool(b),
            Inst::Load(var) => Key::Load(var, ty),
            Inst::Unary(op, a) => Key::Unary(op, a, ty),
            Inst::Binary(op, a, b) => Key::Binary(op, a, b, ty),
            Inst::Cmp(op, a, b) => Key::Cmp(op, a, b),
            Inst::Convert(a, r) => Key::Convert(a, r, ty),
            _ => return None,
        })
    }
}

/// Emits instructions at the end of a block, copying spans from the
/// instructions they stand for. Identical pure instructions are emitted
/// once ([`Key`]); a store forgets the loads emitted before it.
struct Emitter<'p> {
    proc: &'p mut Proc,
    block: BlockId,
    /// Copies of invariant body values made in this block.
    copies: FxHashMap<Value, Value>,
    /// The pure instructions emitted so far, by what they compute.
    emitted: FxHashMap<Key, Value>,
    /// Body loads that stand for a value stored earlier in the iteration
    /// ([`Analysis::forwarded`]): copied as that value.
    forwarded: FxHashMap<Value, Value>,
}

impl<'p> Emitter<'p> {
    /// An emitter appending to `block`, reusing the pure instructions the
    /// block already computes (a load only while no store or call of the
    /// block follows it).
    fn new(proc: &'p mut Proc, block: BlockId) -> Self {
        let mut emitted = FxHashMap::default();
        for &v in &proc.blocks[block.index()].insts {
            let data = proc.inst(v);
            match Key::of(&data.kind, data.ty) {
                Some(k) => {
                    emitted.entry(k).or_insert(v);
                }
                None if matches!(data.kind, Inst::LoadElem(..)) => {}
                None => emitted.retain(|k, _| !matches!(k, Key::Load(..))),
            }
        }
        Emitter {
            proc,
            block,
            copies: FxHashMap::default(),
            emitted,
            forwarded: FxHashMap::default(),
        }
    }
}

impl Emitter<'_> {
    fn push(&mut self, inst: Inst, ty: Type, like: Value) -> Value {
        let span = self.proc.inst(like).span;
        self.emit(inst, Some(ty), span)
    }

    /// Appends `inst` unless an identical pure instruction was emitted.
    fn emit(&mut self, inst: Inst, ty: Option<Type>, span: crate::ir::Span) -> Value {
        let key = Key::of(&inst, ty);
        if let Some(&v) = key.as_ref().and_then(|k| self.emitted.get(k)) {
            return v;
        }
        if key.is_none() && !matches!(inst, Inst::LoadElem(..)) {
            self.emitted.retain(|k, _| !matches!(k, Key::Load(..)));
        }
        let v = self.proc.push_inst(self.block, inst, ty, span);
        if let Some(k) = key {
            self.emitted.insert(k, v);
        }
        v
    }

    fn iconst(&mut self, x: i64, like: Value) -> Value {
        self.push(Inst::Const(Const::Int(x)), Type::I64, like)
    }

    /// A copy of the invariant body value `v` (same operations, same
    /// types, so the same value, wrapping included).
    fn invariant(&mut self, v: Value) -> Value {
        if let Some(&c) = self.copies.get(&v) {
            return c;
        }
        let c = match self.forwarded.get(&v) {
            Some(&stored) => self.invariant(stored),
            None => {
                let data = self.proc.inst(v).clone();
                let kind = data.kind.map_operands(|x| self.invariant(x));
                self.emit(kind, data.ty, data.span)
            }
        };
        self.copies.insert(v, c);
        c
    }

    /// The invariant value `v` as I64.
    fn invariant64(&mut self, v: Value) -> Value {
        let c = self.invariant(v);
        if self.proc.value_type(c) == Some(Type::I64) {
            c
        } else {
            self.push(Inst::Convert(c, Rounding::Trunc), Type::I64, v)
        }
    }

    fn cmp(&mut self, op: CmpOp, a: Value, b: Value, like: Value) -> Value {
        self.push(Inst::Cmp(op, a, b), Type::Bool, like)
    }

    /// `lo <= x` and `x <= hi` for constants `lo`, `hi`, and-ed into `ok`.
    fn within(&mut self, ok: &mut Vec<Value>, x: Value, lo: i64, hi: i64, like: Value) {
        if int_const(self.proc, x).is_some_and(|c| lo <= c && c <= hi) {
            return;
        }
        let (l, h) = (self.iconst(lo, like), self.iconst(hi, like));
        ok.push(self.cmp(CmpOp::Le, l, x, like));
        ok.push(self.cmp(CmpOp::Le, x, h, like));
    }

    /// The lowest and highest value of the affine body value `v` over the
    /// loop's range, as I64 values; pushes onto `ok` the conditions under
    /// which no operation on the way wraps.
    fn range(
        &mut self,
        a: &mut Analysis,
        iv: (Value, Value),
        v: Value,
        ok: &mut Vec<Value>,
    ) -> (Value, Value) {
        if a.iv_loads.contains(&v) {
            return iv;
        }
        if let Some(&stored) = a.forwarded.get(&v) {
            if matches!(a.form(v), Some(Form::Affine)) {
                return self.range(a, iv, stored, ok);
            }
        }
        let data = a.proc.inst(v).clone();
        match (a.form(v), data.kind) {
            (Some(Form::Invariant), _) => {
                let x = self.invariant64(v);
                (x, x)
            }
            (_, Inst::Convert(x, _)) => self.range(a, iv, x, ok),
            (_, Inst::Binary(op, x, y)) => {
                let (aff, inv) = match a.form(x) {
                    Some(Form::Affine) => (x, y),
                    _ => (y, x),
                };
                let (lo, hi) = self.range(a, iv, aff, ok);
                let t = self.invariant64(inv);
                for z in [lo, hi, t] {
                    self.within(ok, z, -HALF, HALF, v);
                }
                let (lo, hi) = (
                    self.push(Inst::Binary(op, lo, t), Type::I64, v),
                    self.push(Inst::Binary(op, hi, t), Type::I64, v),
                );
                if data.ty == Some(Type::I32) {
                    self.within(ok, lo, i32::MIN as i64, i32::MAX as i64, v);
                    self.within(ok, hi, i32::MIN as i64, i32::MAX as i64, v);
                }
                (lo, hi)
            }
            _ => unreachable!("only affine values have ranges"),
        }
    }
}

/// Bound on the magnitude of the values added in a range computation, so
/// that no I64 sum or difference of two of them wraps.
const HALF: i64 = 1 << 62;

impl Emitter<'_> {
    /// The first and last value of the DO variable at the start of an
    /// iteration, as I64 values at the end of the preheader; pushes onto
    /// `ok` the conditions under which they are right (and the loop runs).
    fn iv_range(&mut self, ind: &Induction, ok: &mut Vec<Value>, like: Value) -> (Value, Value) {
        match ind.range {
            Range::Values { first, last, .. } => {
                ok.push(self.cmp(CmpOp::Le, first, last, like));
                // Every value the DO variable takes lies in its kind (the
                // fast copy counts in 64 bits: see `widen`).
                if self.proc.var(ind.var).ty == Type::I32 {
                    let (lo, hi) = (i32::MIN.into(), i32::MAX.into());
                    for bound in [first, last] {
                        let narrow = |x| self.proc.value_type(x) == Some(Type::I32);
                        if !matches!(self.proc.inst(bound).kind, Inst::Convert(x, _) if narrow(x)) {
                            self.within(ok, bound, lo, hi, like);
                        }
                    }
                }
                (first, last)
            }
            Range::CountDown { trips, step } => {
                let t = self.push(Inst::Load(trips), Type::I64, like);
                let ty = self.proc.var(ind.var).ty;
                let i = self.push(Inst::Load(ind.var), ty, like);
                let i = if ty == Type::I64 {
                    i
                } else {
                    self.push(Inst::Convert(i, Rounding::Trunc), Type::I64, like)
                };
                if let Some(sv) = step {
                    let sty = self.proc.var(sv).ty;
                    let s = self.push(Inst::Load(sv), sty, like);
                    let one = self.push(Inst::Const(Const::Int(1)), sty, like);
                    ok.push(self.cmp(CmpOp::Eq, s, one, like));
                }
                self.within(ok, t, 1, HALF, like);
                self.within(ok, i, -HALF, HALF, like);
                let one = self.iconst(1, like);
                let d = self.push(Inst::Binary(BinaryOp::Sub, i, t), Type::I64, like);
                // The value the last step leaves lies in the DO variable's
                // kind, as every value before it (the fast copy counts in
                // 64 bits: see `widen`).
                if ty == Type::I32 {
                    self.within(ok, d, i32::MIN.into(), i32::MAX.into(), like);
                }
                let first = self.push(Inst::Binary(BinaryOp::Add, d, one), Type::I64, like);
                (first, i)
            }
        }
    }

    /// The loop's number of iterations as an I64 value of the preheader,
    /// given the DO variable's range `iv` from [`Emitter::iv_range`] (whose
    /// conditions `ok` already holds); pushes onto `ok` the conditions under
    /// which computing it does not wrap.
    fn trips(
        &mut self,
        ind: &Induction,
        iv: (Value, Value),
        ok: &mut Vec<Value>,
        like: Value,
    ) -> Value {
        match ind.range {
            Range::Values { .. } => {
                let (first, last) = iv;
                self.within(ok, first, -HALF, HALF, like);
                self.within(ok, last, -HALF, HALF, like);
                let one = self.iconst(1, like);
                let d = self.push(Inst::Binary(BinaryOp::Sub, last, first), Type::I64, like);
                self.push(Inst::Binary(BinaryOp::Add, d, one), Type::I64, like)
            }
            // Checked within [1, HALF] by `iv_range`.
            Range::CountDown { trips, .. } => self.push(Inst::Load(trips), Type::I64, like),
        }
    }
}

/// The stacks the loop body `body` only pushes on or only pops from, with
/// the words one iteration moves: `(stack, pops, words)`. A stack the body
/// both pushes on and pops from keeps its per-word checks.
fn stack_traffic(proc: &Proc, body: &[Value]) -> Vec<(StackKind, bool, u32)> {
    let mut found: Vec<(StackKind, u32, u32)> = Vec::new();
    for &v in body {
        let (kind, pop) = match proc.inst(v).kind {
            Inst::Push(kind, _) => (kind, false),
            Inst::Pop(kind) => (kind, true),
            _ => continue,
        };
        let at = match found.iter().position(|f| f.0 == kind) {
            Some(at) => at,
            None => {
                found.push((kind, 0, 0));
                found.len() - 1
            }
        };
        if pop {
            found[at].2 += 1;
        } else {
            found[at].1 += 1;
        }
    }
    found
        .into_iter()
        .filter_map(|(kind, pushes, pops)| match (pushes, pops) {
            (0, n) => Some((kind, true, n)),
            (n, 0) => Some((kind, false, n)),
            _ => None,
        })
        .collect()
}

/// True for the instructions a versioned body may contain: no calls, I/O,
/// character assignment or allocation (which could change what the
/// preheader test proved).
fn allowed(inst: &Inst) -> bool {
    arithmetic_or_access(inst)
        || matches!(inst, Inst::StoreElem(..) | Inst::Push(..) | Inst::Pop(..))
}

/// True for constants, scalar loads and stores, element loads, arithmetic,
/// comparisons, conversions, selects and array bounds: the instructions
/// every loop pass lets a body hold.
pub(super) fn arithmetic_or_access(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Const(_)
            | Inst::Load(_)
            | Inst::Store(..)
            | Inst::LoadElem(..)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cmp(..)
            | Inst::Convert(..)
            | Inst::Select(..)
            | Inst::DimLower(..)
            | Inst::DimExtent(..)
    )
}

/// The values of the loop body `body` that the fast copy computes once,
/// before its first iteration (see [`liftable`]), given the invariant
/// element loads already `hoisted`; and those of them that the loop
/// computes as well: a logical value that a value computed in the loop
/// uses, so that the tests of a strong-zero product stay beside the
/// product (code generation lowers that pattern as one branch on the
/// product).
fn liftable_values(
    a: &Analysis,
    body: &[Value],
    hoisted: &FxHashMap<Value, VarId>,
) -> (FxHashSet<Value>, FxHashSet<Value>) {
    let mut ready: FxHashSet<Value> = hoisted.keys().copied().collect();
    let mut lift = FxHashSet::default();
    for &v in body {
        if !hoisted.contains_key(&v) && liftable(a, v, &ready) {
            ready.insert(v);
            lift.insert(v);
        }
    }
    // Backwards: the values some instruction computed in the loop uses.
    let mut used_in_loop = FxHashSet::default();
    let mut kept = FxHashSet::default();
    for &v in body.iter().rev() {
        let logical = a.proc.inst(v).ty == Some(Type::Bool);
        if lift.contains(&v) {
            if !(logical && used_in_loop.contains(&v)) {
                continue;
            }
            kept.insert(v);
        }
        a.proc.inst(v).kind.for_each_operand(|x| {
            used_in_loop.insert(x);
        });
    }
    (lift, kept)
}

/// Whether the body value `v` is the same in every iteration and cannot
/// fail: a constant, a load of a scalar the loop does not write, or a
/// floating-point or logical operation (and any comparison) of `ready`
/// values. Such operations are pure and raise no error (only integer
/// division can), so computing them once before the first iteration gives
/// the same bits as computing them in each; strong-zero guards of
/// invariant products then leave the loop with their products.
fn liftable(a: &Analysis, v: Value, ready: &FxHashSet<Value>) -> bool {
    let data = a.proc.inst(v);
    let ready = |x: &Value| ready.contains(x);
    let float_or_bool = data.ty.is_some_and(|t| t.is_float() || t == Type::Bool);
    match &data.kind {
        Inst::Const(_) => true,
        Inst::Load(var) => {
            let var_data = a.proc.var(*var);
            !var_data.is_array() && var_data.ty != Type::Char && !a.written.contains(var)
        }
        Inst::Unary(_, x) | Inst::Convert(x, _) => float_or_bool && ready(x),
        Inst::Binary(_, x, y) => float_or_bool && ready(x) && ready(y),
        Inst::Cmp(_, x, y) => ready(x) && ready(y),
        Inst::Select(c, x, y) => float_or_bool && ready(c) && ready(x) && ready(y),
        _ => false,
    }
}

/// Copies the [`liftable`] body instruction `data` (value `v`) into the
/// fast preheader `pre` and returns what the fast body `to` computes in
/// its place: the constant itself, or a read of a scalar temporary the
/// preheader stores the value in.
fn lift(
    proc: &mut Proc,
    pre: BlockId,
    to: BlockId,
    data: &crate::ir::InstData,
    lifted: &mut FxHashMap<Value, Value>,
    v: Value,
) -> Value {
    let kind = data.kind.map_operands(|x| lifted[&x]);
    let c = proc.push_inst(pre, kind, data.ty, data.span);
    lifted.insert(v, c);
    let kind = match (&data.kind, data.ty) {
        (Inst::Const(_), _) | (_, None) => data.kind.clone(),
        (_, Some(ty)) => {
            let temp = proc.add_var(Var::scalar(format!("_licm{}", c.0), ty));
            proc.push_inst(pre, Inst::Store(temp, c), None, data.span);
            Inst::Load(temp)
        }
    };
    proc.push_inst(to, kind, data.ty, data.span)
}

/// An array whose bounds and storage are fixed at entry.
fn fixed_array(var: &Var) -> bool {
    var.is_array() && var.ty != Type::Char && !var.storage.is_allocatable()
}

/// For each block of `blocks` (in an order where predecessors come first,
/// the first block entered only from outside), the positions in `blocks`
/// of the blocks that dominate it within them, itself included.
pub(super) fn dominators(preds: &[Vec<usize>], blocks: &[usize]) -> Vec<FxHashSet<usize>> {
    let pos: FxHashMap<usize, usize> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut doms: Vec<FxHashSet<usize>> = Vec::with_capacity(blocks.len());
    for (i, &b) in blocks.iter().enumerate() {
        let mut common: Option<FxHashSet<usize>> = None;
        for p in preds[b].iter().filter_map(|p| pos.get(p)) {
            common = Some(match common {
                None => doms[*p].clone(),
                Some(c) => c.intersection(&doms[*p]).copied().collect(),
            });
        }
        let mut d = if i == 0 {
            FxHashSet::default()
        } else {
            common.unwrap_or_default()
        };
        d.insert(i);
        doms.push(d);
    }
    doms
}

/// The loads of the loop body `blocks` that read an integer scalar the
/// body stores exactly once (counting stores to its aliases), where that
/// store comes earlier in the same block or in a block that dominates the
/// load's: the load to the value stored ([`Analysis::forwarded`]).
fn forwarded_loads(proc: &Proc, preds: &[Vec<usize>], blocks: &[usize]) -> FxHashMap<Value, Value> {
    let mut stores: FxHashMap<VarId, usize> = FxHashMap::default();
    let mut single: FxHashMap<VarId, (usize, usize, Value)> = FxHashMap::default();
    for (i, &b) in blocks.iter().enumerate() {
        for (pos, &v) in proc.blocks[b].insts.iter().enumerate() {
            if let Inst::Store(var, x) = proc.inst(v).kind {
                for alias in super::aliases(proc, var) {
                    *stores.entry(alias).or_default() += 1;
                }
                single.insert(var, (i, pos, x));
            }
        }
    }
    let doms = dominators(preds, blocks);
    let mut out = FxHashMap::default();
    for (i, &b) in blocks.iter().enumerate() {
        for (pos, &v) in proc.blocks[b].insts.iter().enumerate() {
            let Inst::Load(var) = proc.inst(v).kind else {
                continue;
            };
            let Some(&(si, spos, x)) = single.get(&var) else {
                continue;
            };
            let ty = proc.var(var).ty;
            let earlier = (si == i && spos < pos) || (si != i && doms[i].contains(&si));
            if earlier
                && stores.get(&var) == Some(&1)
                && ty.is_int()
                && !proc.var(var).is_array()
                && proc.value_type(x) == Some(ty)
            {
                out.insert(v, x);
            }
        }
    }
    out
}

/// What [`analyse`] finds in a counted loop whose body it handles.
struct Facts {
    /// The body's instructions, block by block in [`Shape::blocks`] order.
    body_insts: Vec<Value>,
    ind: Induction,
    /// Variables (with their aliases) the body writes.
    written: FxHashSet<VarId>,
    /// See [`Analysis::iv_loads`].
    iv_loads: FxHashSet<Value>,
    /// See [`Analysis::forwarded`].
    forwarded: FxHashMap<Value, Value>,
}

impl Facts {
    /// The [`Analysis`] of the loop over `proc` (a snapshot of the
    /// procedure the facts were found in), with the body's instructions
    /// and the induction.
    fn analysis(self, proc: &Proc) -> (Analysis<'_>, Vec<Value>, Induction) {
        let Facts {
            body_insts,
            ind,
            written,
            iv_loads,
            forwarded,
        } = self;
        let analysis = Analysis {
            proc,
            written,
            iv_loads,
            forwarded,
            forms: FxHashMap::default(),
        };
        (analysis, body_insts, ind)
    }
}

/// The induction of the counted loop `shape` and what its body writes,
/// when the body makes no call, I/O or allocation and only the counters'
/// block steps the counters.
fn analyse(proc: &Proc, preds: &[Vec<usize>], shape: &Shape) -> Option<Facts> {
    let body_insts: Vec<Value> = shape
        .blocks
        .iter()
        .flat_map(|&b| proc.blocks[b].insts.iter().copied())
        .collect();
    if !body_insts.iter().all(|&v| allowed(&proc.inst(v).kind)) {
        return None;
    }
    let header = &proc.blocks[shape.header];
    let go = match header.insts[..] {
        [c] if header.term.operand() == Some(c) => load_of(proc, c),
        _ => None,
    };
    let ind = match go {
        Some(go) => forward(proc, shape, go),
        None => count_down(proc, shape),
    }?;
    let mut written = FxHashSet::default();
    let mut written_elsewhere = FxHashSet::default();
    // Where the counters' block starts in `body_insts`.
    let block_start: usize = shape
        .blocks
        .iter()
        .take_while(|&&b| b != ind.block)
        .map(|&b| proc.blocks[b].insts.len())
        .sum();
    for &b in &shape.blocks {
        for &v in &proc.blocks[b].insts {
            if let Inst::Store(var, _) | Inst::StoreElem(var, ..) = proc.inst(v).kind {
                let aliases = super::aliases(proc, var);
                if b != ind.block {
                    written_elsewhere.extend(aliases.iter().copied());
                }
                written.extend(aliases);
            }
        }
    }
    if ind.counters.iter().any(|c| written_elsewhere.contains(c)) {
        return None;
    }
    // The DO variable's value at the start of the iteration: the loads
    // before the step (the counters' block is the first or the last of the
    // body, run in every iteration; the others store no counter). Loads
    // after it are forwarded to the stepped value.
    let iv_loads = body_insts[..block_start + ind.store_pos]
        .iter()
        .copied()
        .filter(|&v| proc.inst(v).kind == Inst::Load(ind.var))
        .collect();
    let forwarded = forwarded_loads(proc, preds, &shape.blocks);
    Some(Facts {
        body_insts,
        ind,
        written,
        iv_loads,
        forwarded,
    })
}

/// For a subscript `s` of the body of the counted loop `shape` that steps
/// by one with the DO variable (`i + t`, `i - t`, `t + i` with `t`
/// invariant, possibly widened): the lowest and highest value it takes over
/// all trips, as I64 values appended to the preheader, and a `Bool` value
/// there that holds when they are right (the loop runs at least once and
/// nothing on the way wraps). `None` when the loop is not one [`analyse`]
/// handles or `s` has another form.
pub(super) fn subscript_span(
    proc: &mut Proc,
    preds: &[Vec<usize>],
    shape: &Shape,
    s: Value,
) -> Option<(Value, Value, Value)> {
    let facts = analyse(proc, preds, shape)?;
    let snapshot = proc.clone();
    let (mut a, _, ind) = facts.analysis(&snapshot);
    if !matches!(a.form(s), Some(Form::Affine)) {
        return None;
    }
    let mut e = Emitter::new(proc, BlockId(shape.pre as u32));
    e.forwarded = a.forwarded.clone();
    let mut ok = Vec::new();
    let iv = e.iv_range(&ind, &mut ok, s);
    let (lo, hi) = e.range(&mut a, iv, s, &mut ok);
    let mut seen = FxHashSet::default();
    ok.retain(|&c| seen.insert(c));
    let all = e.push(Inst::Const(Const::Bool(true)), Type::Bool, s);
    let all = ok.into_iter().fold(all, |acc, c| {
        e.push(Inst::Binary(BinaryOp::And, acc, c), Type::Bool, s)
    });
    Some((all, lo, hi))
}

fn version(
    proc: &mut Proc,
    pid: ProcId,
    origins: &mut Origins,
    preds: &[Vec<usize>],
    shape: &Shape,
    out: &mut ProcVersions,
) {
    let Some(facts) = analyse(proc, preds, shape) else {
        return;
    };
    let snapshot = proc.clone();
    let (mut a, body_insts, ind) = facts.analysis(&snapshot);
    // Element references whose subscripts all have a range.
    let mut covered = Vec::new();
    for &v in &body_insts {
        let (var, idx) = match &snapshot.inst(v).kind {
            Inst::LoadElem(var, idx) | Inst::StoreElem(var, idx, _) => (*var, idx),
            _ => continue,
        };
        if fixed_array(snapshot.var(var)) && idx.iter().all(|&i| a.form(i).is_some()) {
            covered.push(v);
        }
    }
    if covered.is_empty() {
        return;
    }
    // The preheader test.
    let pre = BlockId(shape.pre as u32);
    let like = covered[0];
    let mut e = Emitter::new(proc, pre);
    e.forwarded = a.forwarded.clone();
    let mut ok = Vec::new();
    let iv = e.iv_range(&ind, &mut ok, like);
    let mut accesses = Vec::new();
    for &v in &covered {
        let (var, idx) = match &snapshot.inst(v).kind {
            Inst::LoadElem(var, idx) | Inst::StoreElem(var, idx, _) => (*var, idx.clone()),
            _ => continue,
        };
        let dims = idx
            .iter()
            .map(|&i| e.range(&mut a, iv, i, &mut ok))
            .collect();
        let access = GuardAccess { var, dims };
        if !accesses.contains(&access) {
            accesses.push(access);
        }
    }
    let traffic = stack_traffic(&snapshot, &body_insts);
    let mut stacks = Vec::new();
    if !traffic.is_empty() {
        let trips = e.trips(&ind, iv, &mut ok, like);
        stacks = traffic
            .iter()
            .map(|&(kind, pops, per_trip)| StackRoom {
                kind,
                pops,
                per_trip,
                trips,
            })
            .collect();
    }
    // The placeholder is pushed directly: it must stay a value of its own.
    let span = e.proc.inst(like).span;
    let guard = e
        .proc
        .push_inst(pre, Inst::Const(Const::Bool(true)), Some(Type::Bool), span);
    out.guards.insert(guard, LoopGuard { accesses, stacks });
    let mut seen = FxHashSet::default();
    ok.retain(|&c| seen.insert(c));
    let all = ok.into_iter().fold(guard, |acc, c| {
        e.push(Inst::Binary(BinaryOp::And, acc, c), Type::Bool, like)
    });
    // The fast copy: preheader of hoisted loads, header, body blocks.
    let fast_pre = e.proc.add_block();
    let fast_header = e.proc.add_block();
    let fast_blocks: Vec<(usize, BlockId)> = shape
        .blocks
        .iter()
        .map(|&b| (b, e.proc.add_block()))
        .collect();
    let fast_of: FxHashMap<usize, BlockId> = fast_blocks
        .iter()
        .copied()
        .chain([(shape.header, fast_header)])
        .collect();
    for (from, to) in [(shape.pre, fast_pre), (shape.header, fast_header)]
        .into_iter()
        .chain(fast_blocks.iter().copied())
    {
        origins.copy_block(pid, from as u32, to.0);
        e.proc.blocks[to.index()].term_span = e.proc.blocks[from].term_span;
    }
    let pre_block = &mut e.proc.blocks[shape.pre];
    pre_block.term = Terminator::Branch {
        cond: all,
        then_dest: fast_pre,
        else_dest: BlockId(shape.header as u32),
    };
    // Hoisted loads: invariant elements of variables the loop does not write.
    let mut hoisted: FxHashMap<Value, VarId> = FxHashMap::default();
    // Body values computed once in the fast preheader: body value to its copy there.
    let mut lifted: FxHashMap<Value, Value> = FxHashMap::default();
    let mut fp = Emitter::new(e.proc, fast_pre);
    fp.forwarded = a.forwarded.clone();
    for &v in &covered {
        let Inst::LoadElem(var, idx) = &snapshot.inst(v).kind else {
            continue;
        };
        let invariant = idx
            .iter()
            .all(|&i| matches!(a.form(i), Some(Form::Invariant)));
        if !invariant || a.written.contains(var) {
            continue;
        }
        let idx: Vec<Value> = idx.iter().map(|&i| fp.invariant(i)).collect();
        let data = snapshot.inst(v);
        let ty = data.ty.unwrap_or(snapshot.var(*var).ty);
        let x = fp
            .proc
            .push_inst(fast_pre, Inst::LoadElem(*var, idx), Some(ty), data.span);
        out.unchecked.insert(x);
        origins.copy_inst(pid, v.0, x.0);
        let temp = fp.proc.add_var(Var::scalar(format!("_licm{}", x.0), ty));
        fp.push(Inst::Store(temp, x), ty, v);
        hoisted.insert(v, temp);
        lifted.insert(v, x);
    }
    fp.proc.blocks[fast_pre.index()].term = Terminator::Jump(fast_header);
    // The header and the body, copied.
    let mut rename: FxHashMap<Value, Value> = FxHashMap::default();
    let covered: FxHashSet<Value> = covered.into_iter().collect();
    let (to_lift, kept) = liftable_values(&a, &body_insts, &hoisted);
    // The step variable of a reversed loop, which the preheader test proved 1
    // (no block of the loop writes it).
    let unit_step = match ind.range {
        Range::CountDown { step, .. } => step,
        Range::Values { .. } => None,
    };
    for (from, to) in [(shape.header, fast_header)]
        .into_iter()
        .chain(fast_blocks.iter().copied())
    {
        for &v in &snapshot.blocks[from].insts {
            let data = snapshot.inst(v);
            if from != shape.header && unit_step.is_some() && load_of(&snapshot, v) == unit_step {
                // The constant 1 in place of the step's load, in the loop
                // and before it.
                let one = Inst::Const(Const::Int(1));
                if to_lift.contains(&v) {
                    let c = proc.push_inst(fast_pre, one.clone(), data.ty, data.span);
                    lifted.insert(v, c);
                }
                let c = proc.push_inst(to, one, data.ty, data.span);
                origins.copy_inst(pid, v.0, c.0);
                rename.insert(v, c);
                continue;
            }
            if from != shape.header && to_lift.contains(&v) {
                if kept.contains(&v) {
                    // Computed before the loop for the values lifted with
                    // it, and in the loop beside the product it guards.
                    let kind = data.kind.map_operands(|x| lifted[&x]);
                    let c = proc.push_inst(fast_pre, kind, data.ty, data.span);
                    lifted.insert(v, c);
                } else {
                    let c = lift(proc, fast_pre, to, data, &mut lifted, v);
                    origins.copy_inst(pid, v.0, c.0);
                    rename.insert(v, c);
                    continue;
                }
            }
            let kind = match hoisted.get(&v) {
                Some(&temp) => Inst::Load(temp),
                None => data
                    .kind
                    .map_operands(|x| rename.get(&x).copied().unwrap_or(x)),
            };
            let c = proc.push_inst(to, kind, data.ty, data.span);
            let roomy = match data.kind {
                Inst::Push(kind, _) | Inst::Pop(kind) => traffic.iter().any(|t| t.0 == kind),
                _ => false,
            };
            if roomy || (covered.contains(&v) && !hoisted.contains_key(&v)) {
                out.unchecked.insert(c);
            }
            origins.copy_inst(pid, v.0, c.0);
            rename.insert(v, c);
        }
    }
    // The terminators: branches within the loop go to the fast copies.
    for (from, to) in [(shape.header, fast_header)]
        .into_iter()
        .chain(fast_blocks.iter().copied())
    {
        let term = match snapshot.blocks[from].term.clone() {
            Terminator::Jump(d) => Terminator::Jump(fast_of.get(&d.index()).copied().unwrap_or(d)),
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => Terminator::Branch {
                cond: rename[&cond],
                then_dest: fast_of
                    .get(&then_dest.index())
                    .copied()
                    .unwrap_or(then_dest),
                else_dest: fast_of
                    .get(&else_dest.index())
                    .copied()
                    .unwrap_or(else_dest),
            },
            _ => unreachable!("loop blocks end with jumps and branches"),
        };
        proc.blocks[to.index()].term = term;
    }
    // The fast copy counts in 64 bits (see `widen`).
    let (count, wide_loads) = match ind.range {
        Range::Values { go, rest, .. } => (
            super::widen::Count::Up { go, rest },
            a.iv_loads
                .iter()
                .filter_map(|v| rename.get(v).copied())
                .collect(),
        ),
        // Every value of the DO variable, before and after its step, lies
        // in its kind (see `Emitter::iv_range`): all its loads read `w`.
        Range::CountDown { trips, .. } => (
            super::widen::Count::Down { trips },
            fast_blocks
                .iter()
                .flat_map(|&(_, b)| proc.blocks[b.index()].insts.iter().copied())
                .filter(|&v| proc.inst(v).kind == Inst::Load(ind.var))
                .collect(),
        ),
    };
    let fast = super::widen::FastLoop {
        pre,
        header: fast_header,
        blocks: fast_blocks.iter().map(|&(_, b)| b).collect(),
        stepper: fast_of[&ind.block],
        var: ind.var,
        count,
        first: iv.0,
        last: iv.1,
        iv_loads: wide_loads,
        unchecked: &out.unchecked,
    };
    super::widen::widen(proc, &fast);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{Buffer, Module};

    /// A reversed loop `i = n, 2, -1` (`trips` counting down) whose body
    /// skips, when `x(i)` is zero, a block that updates `y(i-1)` (`y` has
    /// `m` elements): the
    /// subscript `i - 1` reaches the skipped block through the scalar `k`,
    /// as the adjoint's zero-seed skip carries it. With `store_iv`, the
    /// skipped block also stores the DO variable. With `step_first`, the
    /// body's first block steps the counters (from `i = n + 1`) and the
    /// latch only jumps back, as in the adjoint's reversed loops.
    fn guarded_update(store_iv: bool, step_first: bool) -> Module {
        let mut proc = Proc::new("guarded");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, vec![]);
        let m = b.param("m", Type::I64, vec![]);
        let x = b.param("x", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let y = b.param("y", Type::F64, vec![ProcBuilder::var_dim(m)]);
        let (trips, i, k) = (
            b.local("trips", Type::I64),
            b.local("i", Type::I64),
            b.local("k", Type::I64),
        );
        let nv = b.load(n);
        let one = b.iconst(Type::I64, 1);
        let i0 = if step_first {
            b.binary(BinaryOp::Add, nv, one)
        } else {
            nv
        };
        b.store(i, i0);
        let t = b.binary(BinaryOp::Sub, nv, one);
        b.store(trips, t);
        let step = |b: &mut ProcBuilder| {
            let t = b.load(trips);
            let one = b.iconst(Type::I64, 1);
            let t1 = b.binary(BinaryOp::Sub, t, one);
            b.store(trips, t1);
            let iv = b.load(i);
            let i1 = b.binary(BinaryOp::Sub, iv, one);
            b.store(i, i1);
        };
        let [header, body, guarded, latch, exit] = [(); 5].map(|_| b.create_block());
        b.jump(header);
        b.switch_to_block(header);
        let t = b.load(trips);
        let zero = b.iconst(Type::I64, 0);
        let go = b.cmp(CmpOp::Gt, t, zero);
        b.terminate(Terminator::Branch {
            cond: go,
            then_dest: body,
            else_dest: exit,
        });
        b.switch_to_block(body);
        if step_first {
            step(&mut b);
        }
        let iv = b.load(i);
        let one = b.iconst(Type::I64, 1);
        let km = b.binary(BinaryOp::Sub, iv, one);
        b.store(k, km);
        let xv = b.load_elem(x, vec![iv]);
        let fzero = b.fconst(Type::F64, 0.0);
        let skip = b.cmp(CmpOp::Eq, xv, fzero);
        b.terminate(Terminator::Branch {
            cond: skip,
            then_dest: latch,
            else_dest: guarded,
        });
        b.switch_to_block(guarded);
        let kv = b.load(k);
        let iv = b.load(i);
        let xv = b.load_elem(x, vec![iv]);
        let yv = b.load_elem(y, vec![kv]);
        let sum = b.binary(BinaryOp::Add, yv, xv);
        b.store_elem(y, vec![kv], sum);
        if store_iv {
            b.store(i, iv);
        }
        b.jump(latch);
        b.switch_to_block(latch);
        if !step_first {
            step(&mut b);
        }
        b.jump(header);
        b.switch_to_block(exit);
        b.ret();
        let mut m = Module::default();
        m.add_proc(proc);
        m
    }

    fn run(m: &Module, n: i64, x: &[f64], y_len: usize) -> Result<Vec<Buffer>, String> {
        let mut args = vec![
            Buffer::I64(vec![n]),
            Buffer::I64(vec![y_len as i64]),
            Buffer::F64(x.to_vec()),
            Buffer::F64((0..y_len).map(|j| j as f64 * 0.5).collect()),
        ];
        Interpreter::new(m)
            .call(ProcId(0), &mut args)
            .map(|()| args)
            .map_err(|e| format!("{}:{}: {e}", e.span.line, e.span.col))
    }

    fn versioned(m: &Module) -> (Module, ProcVersions) {
        let mut after = m.clone();
        let mut origins = Origins::default();
        let out = version_loops(&mut after.procs[0], ProcId(0), &mut origins);
        crate::ir::verify::verify_module(&after).expect("versioned code verifies");
        (after, out)
    }

    #[test]
    fn a_body_with_an_inner_branch_is_one_region() {
        let m = guarded_update(false, true);
        let proc = &m.procs[0];
        let preds = predecessors(proc);
        let shape = loop_region(proc, &preds, 1).expect("the loop is a region");
        // Body, the guarded block, the latch: predecessors first.
        assert_eq!(shape.blocks, [2, 3, 4]);
        assert_eq!((shape.pre, shape.header, shape.latch()), (0, 1, 4));
        assert!(loop_shape(proc, &preds, 1).is_none(), "not one block");
    }

    #[test]
    fn a_guarded_block_is_versioned_through_its_carried_subscript() {
        for step_first in [false, true] {
            guarded_block_is_versioned(step_first);
        }
    }

    fn guarded_block_is_versioned(step_first: bool) {
        let m = guarded_update(false, step_first);
        let (after, out) = versioned(&m);
        assert_eq!(out.guards.len(), 1, "one versioned loop");
        let accesses = &out.guards.values().next().expect("the guard").accesses;
        // x(i) (both loads: one range) and y(k), k = i - 1, forwarded.
        let vars: Vec<VarId> = accesses.iter().map(|a| a.var).collect();
        assert_eq!(vars, [VarId(2), VarId(3)]);
        // The guarded block's loads and store of the fast copy are
        // unchecked: three element references of the body's four, and
        // x(i) of the guarded block.
        assert_eq!(out.unchecked.len(), 4);
        // A body block, the guarded block and the latch copied, plus the
        // fast preheader and header and the copy's exit (see `widen`).
        assert_eq!(after.procs[0].blocks.len(), m.procs[0].blocks.len() + 6);
        let x = [1.0, 0.0, 2.5, 0.0, -1.0, 3.0];
        assert_eq!(run(&after, 6, &x, 6), run(&m, 6, &x, 6));
        assert!(run(&after, 6, &x, 6).is_ok());
    }

    /// The fast copy of a reversed loop counts with a 64-bit `w` (see
    /// `widen`): a header tests `w` against its bound, `trips` is stepped
    /// only by the original loop and stored at the copy's exit.
    #[test]
    fn the_fast_copy_of_a_reversed_loop_counts_with_a_wide_variable() {
        for step_first in [false, true] {
            let m = guarded_update(false, step_first);
            let (after, _) = versioned(&m);
            let proc = &after.procs[0];
            let (i, trips) = (proc.find_var("i").unwrap(), proc.find_var("trips").unwrap());
            let wide = proc.find_var(&format!("_wide{}", i.0)).unwrap();
            let stores_trips = |b: &crate::ir::Block| {
                b.insts
                    .iter()
                    .any(|&v| matches!(proc.inst(v).kind, Inst::Store(w, _) if w == trips))
            };
            // The entry, the original stepping block and the copy's exit.
            assert_eq!(proc.blocks.iter().filter(|b| stores_trips(b)).count(), 3);
            let tests_wide = |b: &crate::ir::Block| match b.term {
                Terminator::Branch { cond, .. } => matches!(
                    proc.inst(cond).kind,
                    Inst::Cmp(CmpOp::Gt, a, _) if proc.inst(a).kind == Inst::Load(wide)
                ),
                _ => false,
            };
            assert_eq!(proc.blocks.iter().filter(|b| tests_wide(b)).count(), 1);
            let x = [1.0, 0.0, 2.5, 0.0, -1.0, 3.0];
            for n in [1, 2, 6] {
                let (before, widened) = (run(&m, n, &x, 6), run(&after, n, &x, 6));
                assert!(before.is_ok(), "{before:?}");
                assert_eq!(widened, before, "n = {n}");
            }
        }
    }

    #[test]
    fn the_out_of_range_element_of_a_guarded_block_fails_as_before() {
        for step_first in [false, true] {
            out_of_range_element_fails_as_before(step_first);
        }
    }

    fn out_of_range_element_fails_as_before(step_first: bool) {
        let m = guarded_update(false, step_first);
        let (after, out) = versioned(&m);
        assert_eq!(out.guards.len(), 1);
        // y has 4 elements for n = 6: y(5), updated when i = 6, is outside
        // its bounds unless x(6) is zero and the update is skipped.
        let ones = [1.0; 6];
        let before = run(&m, 6, &ones, 4);
        assert!(
            before.as_ref().is_err_and(|e| e.contains("`y`")),
            "{before:?}"
        );
        assert_eq!(run(&after, 6, &ones, 4), before);
        let skipped = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0];
        let before = run(&m, 6, &skipped, 4);
        assert!(before.is_ok(), "{before:?}");
        assert_eq!(run(&after, 6, &skipped, 4), before);
    }

    #[test]
    fn a_body_block_storing_the_do_variable_is_not_versioned() {
        let (_, out) = versioned(&guarded_update(true, false));
        assert!(out.guards.is_empty());
    }

    /// A stack a body only pops from (or only pushes on) is listed with its
    /// words per iteration; one it both pushes on and pops from is not.
    #[test]
    fn stack_traffic_lists_the_one_way_stacks() {
        let mut proc = Proc::new("tape");
        let mut b = ProcBuilder::new(&mut proc);
        let k = b.iconst(Type::I64, 3);
        let block = b.create_block();
        b.jump(block);
        b.switch_to_block(block);
        let first = b.pop(StackKind::Value, Type::F64);
        b.pop(StackKind::Value, Type::F64);
        b.push(StackKind::Integer, k);
        b.push(StackKind::Control, k);
        b.pop(StackKind::Control, Type::I64);
        b.push(StackKind::Integer, k);
        let body = proc.blocks[block.index()].insts.clone();
        assert!(body.contains(&first));
        assert_eq!(
            stack_traffic(&proc, &body),
            vec![(StackKind::Value, true, 2), (StackKind::Integer, false, 2)]
        );
    }
}
