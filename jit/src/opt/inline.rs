//! Inlining of small, non-recursive callees, before the other passes.
//!
//! Every [`Inst::Call`] is a native call with its own frame: parameters are
//! written back to memory around it, the call depth is counted and checked,
//! and nothing of the caller's registers survives it. Small procedures
//! called in hot loops (the scalar functions of nested derivatives, which
//! the AD transforms produce as one procedure per level) pay that on every
//! trip. This pass copies the callee's code into the caller instead, when it
//! can map the call exactly:
//!
//! * **which calls**: the callee is not part of a recursive cycle of the
//!   call graph (a procedure calling itself, directly or not, keeps every
//!   call, so the call-depth limit keeps stopping runaway recursion) and
//!   is small: at most [`CALLEE_BUDGET`] instructions after its own calls
//!   were inlined, while the caller stays under [`CALLER_BUDGET`]. The
//!   call graph is processed leaf first (post-order), so a callee is
//!   inlined with its own inlined callees.
//! * **dummy arguments**: only scalar, non-character dummies are mapped. A
//!   [`CallArg::Var`] of a scalar variable of the same type becomes that
//!   variable (by reference, as the call passed it); a [`CallArg::Value`]
//!   becomes a fresh local holding the value (writes to it are lost, as in
//!   the call). An array element ([`CallArg::Elem`]), an array dummy or a
//!   character dummy leaves the call alone.
//! * **the callee's variables**: scalar non-character locals become fresh
//!   locals of the caller, zeroed where the call was (each activation starts
//!   from zero); views of globals (COMMON, SAVE, module variables) are
//!   copied with their storage, so they stay the same storage; a callee
//!   with local arrays, allocatable arrays or character data keeps its
//!   calls.
//! * **control and status**: the caller's block is split at the call; the
//!   callee's blocks are copied, its `Return`s jump to the continuation and
//!   its `Fail` terminators (STOP, unreachable points) fail the caller as
//!   the call's status did. Values the caller computed before the call and
//!   uses after it (values are local to one block) go through fresh scalar
//!   locals. Copied instructions keep their spans, and the variables keep
//!   their names, so a runtime error in inlined code is located at the same
//!   line and names the same variable; [`Origins`] remembers which
//!   procedure each copied instruction and terminator came from, so the
//!   error also names the same procedure.
//!
//! The only observable difference is the call depth: an inlined call is
//! not counted, so a recursion that passes through an inlined caller hits
//! [`crate::ir::MAX_CALL_DEPTH`] at the same recursive call but one level
//! of non-recursive calls later. [`crate::codegen::JitOptions::inline`]
//! turns the pass off.

use crate::ir::{
    BlockId, CallArg, Const, Inst, Module, Proc, ProcId, Storage, Terminator, Type, Value, Var,
    VarId,
};
use std::collections::{HashMap, HashSet};

/// The largest callee inlined, in instructions (after its own calls were
/// inlined). Big enough for the scalar functions of several nested
/// tangents, small enough that a callee used at many sites does not blow
/// up compilation.
pub const CALLEE_BUDGET: usize = 600;

/// The largest a caller may grow to by inlining, in instructions. Cranelift
/// compile time grows faster than linearly in function size beyond this.
pub const CALLER_BUDGET: usize = 12_000;

/// Where the code of an inlined call came from, per procedure of the
/// optimized module: the procedure of each copied instruction and of each
/// copied block terminator (nested inlining gives the innermost one).
#[derive(Clone, Debug, Default)]
pub struct Origins {
    procs: Vec<ProcOrigins>,
}

/// The origins of the copied code of one procedure.
#[derive(Clone, Debug, Default)]
struct ProcOrigins {
    insts: HashMap<u32, ProcId>,
    blocks: HashMap<u32, ProcId>,
}

impl Origins {
    /// The procedure the instruction `inst` of `proc` was copied from, if
    /// it was inlined.
    pub fn inst(&self, proc: ProcId, inst: u32) -> Option<ProcId> {
        self.procs.get(proc.index())?.insts.get(&inst).copied()
    }

    /// The procedure the terminator of block `block` of `proc` was copied
    /// from, if it was inlined.
    pub fn block(&self, proc: ProcId, block: u32) -> Option<ProcId> {
        self.procs.get(proc.index())?.blocks.get(&block).copied()
    }

    /// True when nothing was inlined.
    pub fn is_empty(&self) -> bool {
        self.procs
            .iter()
            .all(|p| p.insts.is_empty() && p.blocks.is_empty())
    }

    /// Records that instruction `to` of `proc` is a copy of instruction
    /// `from` (made by a later pass): it fails in the same procedure.
    pub fn copy_inst(&mut self, proc: ProcId, from: u32, to: u32) {
        if let Some(p) = self.procs.get_mut(proc.index()) {
            if let Some(&o) = p.insts.get(&from) {
                p.insts.insert(to, o);
            }
        }
    }

    /// Records that block `to` of `proc` ends like block `from` (a copy
    /// made by a later pass).
    pub fn copy_block(&mut self, proc: ProcId, from: u32, to: u32) {
        if let Some(p) = self.procs.get_mut(proc.index()) {
            if let Some(&o) = p.blocks.get(&from) {
                p.blocks.insert(to, o);
            }
        }
    }

    /// Renumbers the block origins of `proc` after block merging:
    /// `carried[new]` is the old block whose terminator block `new` ends
    /// with ([`super::merge::merge_blocks`]).
    pub fn renumber_blocks(&mut self, proc: ProcId, carried: &[BlockId]) {
        let Some(p) = self.procs.get_mut(proc.index()) else {
            return;
        };
        if p.blocks.is_empty() {
            return;
        }
        let old = std::mem::take(&mut p.blocks);
        p.blocks = carried
            .iter()
            .enumerate()
            .filter_map(|(new, b)| old.get(&b.0).map(|&o| (new as u32, o)))
            .collect();
    }
}

/// Number of instructions in the blocks of `proc`.
pub fn size(proc: &Proc) -> usize {
    proc.blocks.iter().map(|b| b.insts.len()).sum()
}

/// Inlines the eligible calls of every procedure of `module` (see the
/// module documentation) and returns where the copied code came from.
pub fn inline_module(module: &mut Module) -> Origins {
    inline_module_procs(module, None)
}

/// [`inline_module`] into the callers marked in `wanted` (by procedure
/// index; all when `None`) only: the others keep their calls.
pub fn inline_module_procs(module: &mut Module, wanted: Option<&[bool]>) -> Origins {
    let n = module.procs.len();
    let mut origins = Origins {
        procs: vec![ProcOrigins::default(); n],
    };
    let callees: Vec<Vec<usize>> = module.procs.iter().map(callees_of).collect();
    let recursive = recursive_procs(&callees);
    for p in post_order(&callees) {
        if super::is_wanted(wanted, p) && !callees[p].is_empty() {
            inline_calls(module, ProcId(p as u32), &recursive, &mut origins);
        }
    }
    origins
}

/// The procedures `proc` calls (with repetitions removed).
fn callees_of(proc: &Proc) -> Vec<usize> {
    let mut out: Vec<usize> = proc
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|&v| match proc.inst(v).kind {
            Inst::Call(c, _) => Some(c.index()),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The procedures on a cycle of the call graph (they can reach themselves).
fn recursive_procs(callees: &[Vec<usize>]) -> Vec<bool> {
    (0..callees.len())
        .map(|p| {
            let mut seen = vec![false; callees.len()];
            let mut stack: Vec<usize> = callees[p].clone();
            while let Some(q) = stack.pop() {
                if q == p {
                    return true;
                }
                if q < seen.len() && !seen[q] {
                    seen[q] = true;
                    stack.extend(&callees[q]);
                }
            }
            false
        })
        .collect()
}

/// The procedures in call-graph post-order: callees before their callers
/// (on a cycle, in the order the search finishes them).
fn post_order(callees: &[Vec<usize>]) -> Vec<usize> {
    let n = callees.len();
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut stack = vec![(root, 0usize)];
        while let Some(&mut (p, ref mut next)) = stack.last_mut() {
            if let Some(&q) = callees[p].get(*next) {
                *next += 1;
                if q < n && state[q] == 0 {
                    state[q] = 1;
                    stack.push((q, 0));
                }
            } else {
                order.push(p);
                stack.pop();
            }
        }
    }
    order
}

/// Inlines the eligible calls of `pid`, scanning its blocks (including the
/// ones inlining adds) once.
fn inline_calls(module: &mut Module, pid: ProcId, recursive: &[bool], origins: &mut Origins) {
    let mut b = 0;
    while b < module.procs[pid.index()].blocks.len() {
        let mut at = 0;
        while at < module.procs[pid.index()].blocks[b].insts.len() {
            let proc = &module.procs[pid.index()];
            let v = proc.blocks[b].insts[at];
            let Inst::Call(callee, args) = &proc.inst(v).kind else {
                at += 1;
                continue;
            };
            let c = callee.index();
            let ok = c != pid.index()
                && !recursive.get(c).copied().unwrap_or(true)
                && size(&module.procs[c]) <= CALLEE_BUDGET
                && size(proc) + size(&module.procs[c]) <= CALLER_BUDGET;
            let plan = if ok {
                plan_call(proc, &module.procs[c], args)
            } else {
                None
            };
            let Some(plan) = plan else {
                at += 1;
                continue;
            };
            let callee = module.procs[c].clone();
            let (callers, callee_origins) = split_origins(origins, pid.index(), c);
            let site = Site {
                block: BlockId(b as u32),
                at,
                call: v,
                callee: ProcId(c as u32),
            };
            inline_one(
                &mut module.procs[pid.index()],
                &callee,
                &site,
                &plan,
                callers,
                callee_origins,
            );
            // The block now ends with the jump into the copy: continue with
            // the next block (the copy and the continuation come later).
            break;
        }
        b += 1;
    }
}

/// The caller's origins (mutable) and the callee's (shared), distinct
/// procedures.
fn split_origins(
    origins: &mut Origins,
    caller: usize,
    callee: usize,
) -> (&mut ProcOrigins, &ProcOrigins) {
    if caller < callee {
        let (a, b) = origins.procs.split_at_mut(callee);
        (&mut a[caller], &b[0])
    } else {
        let (a, b) = origins.procs.split_at_mut(caller);
        (&mut b[0], &a[callee])
    }
}

/// How one callee variable maps into the caller.
#[derive(Clone, Debug)]
enum VarPlan {
    /// The caller's variable (a by-reference argument).
    Caller(VarId),
    /// A fresh local holding a value argument.
    Value(Value),
    /// A fresh local, zeroed at the call.
    Local,
    /// A copy of a global view.
    Global,
}

/// Decides whether a call can be inlined exactly: a plan per callee
/// variable, or `None`.
fn plan_call(caller: &Proc, callee: &Proc, args: &[CallArg]) -> Option<Vec<VarPlan>> {
    if args.len() != callee.params.len() {
        return None;
    }
    let mut plan = Vec::with_capacity(callee.vars.len());
    for var in &callee.vars {
        if var.ty == Type::Char {
            return None;
        }
        plan.push(match var.storage {
            Storage::Param(k) => {
                if var.is_array() {
                    return None;
                }
                match args.get(k as usize)? {
                    CallArg::Var(a) => {
                        let actual = caller.var(*a);
                        if actual.is_array() || actual.ty != var.ty {
                            return None;
                        }
                        VarPlan::Caller(*a)
                    }
                    CallArg::Value(v) => {
                        if caller.value_type(*v) != Some(var.ty) {
                            return None;
                        }
                        VarPlan::Value(*v)
                    }
                    CallArg::Elem(..) | CallArg::Slice(..) => return None,
                }
            }
            Storage::Local if !var.is_array() => VarPlan::Local,
            Storage::Global(..) if global_view_is_constant(var) => VarPlan::Global,
            Storage::Local
            | Storage::Global(..)
            | Storage::Allocatable
            | Storage::AllocatableParam(_) => return None,
        });
    }
    Some(plan)
}

/// True when a global view's shape reads no variable (so the copy in the
/// caller has the same shape).
fn global_view_is_constant(var: &Var) -> bool {
    var.char_len.is_none()
        && var.dims.iter().all(|d| {
            d.lower.as_const().is_some() && d.upper.as_ref().and_then(|u| u.as_const()).is_some()
        })
}

/// Where the call being inlined is.
struct Site {
    block: BlockId,
    at: usize,
    call: Value,
    callee: ProcId,
}

/// The zero of a scalar type.
fn zero(ty: Type) -> Const {
    match ty {
        Type::F32 | Type::F64 => Const::Float(0.0),
        Type::Bool => Const::Bool(false),
        Type::I32 | Type::I64 | Type::Char => Const::Int(0),
    }
}

/// Replaces the call at `site` of `caller` by a copy of `callee`.
fn inline_one(
    caller: &mut Proc,
    callee: &Proc,
    site: &Site,
    plan: &[VarPlan],
    origins: &mut ProcOrigins,
    callee_origins: &ProcOrigins,
) {
    let span = caller.inst(site.call).span;
    let b = site.block;
    let origin_of_inst = |v: Value| {
        callee_origins
            .insts
            .get(&v.0)
            .copied()
            .unwrap_or(site.callee)
    };
    // Split the block: the call and what follows leave `b`.
    let mut tail = caller.blocks[b.index()].insts.split_off(site.at);
    // The call's handle stays in the block as a dead constant, so the
    // arena keeps no instruction outside a block.
    let call = tail.remove(0);
    caller.insts[call.index()].kind = Inst::Const(Const::Int(0));
    caller.insts[call.index()].ty = Some(Type::I64);
    caller.blocks[b.index()].insts.push(call);
    let cont = caller.add_block();
    let term = std::mem::replace(
        &mut caller.blocks[b.index()].term,
        Terminator::Return, // replaced by the jump into the copy below
    );
    let term_span = caller.blocks[b.index()].term_span;
    if let Some(o) = origins.blocks.remove(&b.0) {
        origins.blocks.insert(cont.0, o);
    }

    // Values of `b` used after the call cross into `cont` through locals.
    let defined: HashSet<Value> = caller.blocks[b.index()].insts.iter().copied().collect();
    let mut crossing: Vec<Value> = Vec::new();
    let mut note = |v: Value| {
        if defined.contains(&v) && !crossing.contains(&v) {
            crossing.push(v);
        }
    };
    for &v in &tail {
        caller.inst(v).kind.for_each_operand(&mut note);
    }
    if let Some(v) = term.operand() {
        note(v);
    }
    let mut renamed: HashMap<Value, Value> = HashMap::new();
    for v in crossing {
        let ty = caller.value_type(v).unwrap_or(Type::I64);
        let name = format!("_inl{}", caller.vars.len());
        let tmp = caller.add_var(Var::scalar(name, ty));
        caller.push_inst(b, Inst::Store(tmp, v), None, span);
        let reloaded = caller.push_inst(cont, Inst::Load(tmp), Some(ty), span);
        renamed.insert(v, reloaded);
    }
    let rename = |v: &mut Value| {
        if let Some(&r) = renamed.get(v) {
            *v = r;
        }
    };
    for &v in &tail {
        caller.insts[v.index()].kind.for_each_operand_mut(rename);
    }
    let mut term = term;
    match &mut term {
        Terminator::Branch { cond, .. } => rename(cond),
        Terminator::Switch { value, .. } => rename(value),
        _ => {}
    }
    caller.blocks[cont.index()].insts.extend(tail);
    caller.blocks[cont.index()].term = term;
    caller.blocks[cont.index()].term_span = term_span;

    // The callee's variables in the caller; value arguments and locals are
    // set where the call was.
    let mut vars = Vec::with_capacity(callee.vars.len());
    for (var, how) in callee.vars.iter().zip(plan) {
        let id = match how {
            VarPlan::Caller(a) => *a,
            VarPlan::Value(value) => {
                let id = caller.add_var(Var::scalar(var.name.clone(), var.ty));
                caller.push_inst(b, Inst::Store(id, *value), None, span);
                id
            }
            VarPlan::Local => {
                let id = caller.add_var(Var::scalar(var.name.clone(), var.ty));
                let z = caller.push_inst(b, Inst::Const(zero(var.ty)), Some(var.ty), span);
                caller.push_inst(b, Inst::Store(id, z), None, span);
                id
            }
            VarPlan::Global => caller.add_var(var.clone()),
        };
        vars.push(id);
    }

    // Copy the blocks.
    let first = caller.blocks.len() as u32;
    let block_map = |cb: BlockId| BlockId(first + cb.0);
    for _ in &callee.blocks {
        caller.add_block();
    }
    caller.blocks[b.index()].term = Terminator::Jump(block_map(crate::ir::Proc::ENTRY));
    caller.blocks[b.index()].term_span = span;
    for (i, cblock) in callee.blocks.iter().enumerate() {
        let nb = block_map(BlockId(i as u32));
        let mut values: HashMap<Value, Value> = HashMap::new();
        for &v in &cblock.insts {
            let data = callee.inst(v);
            let mut kind = data
                .kind
                .map_operands(|x| values.get(&x).copied().unwrap_or(x));
            kind.map_vars(|x| vars[x.index()]);
            let nv = caller.push_inst(nb, kind, data.ty, data.span);
            values.insert(v, nv);
            origins.insts.insert(nv.0, origin_of_inst(v));
        }
        let mut term = cblock.term.clone();
        term.retarget(block_map);
        match &mut term {
            Terminator::Jump(_) => {}
            Terminator::Branch { cond, .. } => *cond = values[cond],
            Terminator::Switch { value, .. } => *value = values[value],
            Terminator::Return => term = Terminator::Jump(cont),
            Terminator::Fail(_) => {
                let o = callee_origins
                    .blocks
                    .get(&(i as u32))
                    .copied()
                    .unwrap_or(site.callee);
                origins.blocks.insert(nb.0, o);
            }
        }
        caller.blocks[nb.index()].term = term;
        caller.blocks[nb.index()].term_span = cblock.term_span;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{BinaryOp, Buffer, CmpOp, RuntimeErrorKind, Span};

    /// `twice(x, y)`: `t = x + x; if t > 100 stop; y = t` (a local, a
    /// branch, a STOP).
    fn twice() -> Proc {
        let mut proc = Proc::new("twice");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let y = b.param("y", Type::F64, vec![]);
        let t = b.local("t", Type::F64);
        let before = b.load(t);
        // `t` starts at zero in every activation.
        let xv = b.load(x);
        let sum = b.binary(BinaryOp::Add, xv, xv);
        let sum = b.binary(BinaryOp::Add, sum, before);
        b.store(t, sum);
        let limit = b.fconst(Type::F64, 100.0);
        let big = b.cmp(CmpOp::Gt, sum, limit);
        let (stop, done) = (b.create_block(), b.create_block());
        b.terminate(Terminator::Branch {
            cond: big,
            then_dest: stop,
            else_dest: done,
        });
        b.switch_to_block(stop);
        b.terminate(Terminator::Fail(RuntimeErrorKind::Stop(Some("big".into()))));
        b.switch_to_block(done);
        let tv = b.load(t);
        b.store(y, tv);
        b.ret();
        proc.span = Span {
            file: 0,
            line: 10,
            col: 1,
        };
        proc
    }

    /// `main(a, r)`: `k = a * 3; call twice(a, r); call twice(k + 1, s);
    /// r = r + s + k` — a by-reference and a value argument, and a value
    /// (`k`) computed before the calls and used after them.
    fn program() -> Module {
        let mut m = Module::default();
        m.add_proc(twice());
        let mut proc = Proc::new("main");
        let mut b = ProcBuilder::new(&mut proc);
        let a = b.param("a", Type::F64, vec![]);
        let r = b.param("r", Type::F64, vec![]);
        let s = b.local("s", Type::F64);
        let av = b.load(a);
        let three = b.fconst(Type::F64, 3.0);
        let k = b.binary(BinaryOp::Mul, av, three);
        b.call(ProcId(0), vec![CallArg::Var(a), CallArg::Var(r)]);
        let one = b.fconst(Type::F64, 1.0);
        let k1 = b.binary(BinaryOp::Add, k, one);
        b.call(ProcId(0), vec![CallArg::Value(k1), CallArg::Var(s)]);
        let (rv, sv) = (b.load(r), b.load(s));
        let sum = b.binary(BinaryOp::Add, rv, sv);
        let sum = b.binary(BinaryOp::Add, sum, k);
        b.store(r, sum);
        b.ret();
        m.add_proc(proc);
        m
    }

    fn calls(proc: &Proc) -> usize {
        proc.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|&&v| matches!(proc.inst(v).kind, Inst::Call(..)))
            .count()
    }

    fn run(m: &Module, a: f64) -> Result<Vec<Buffer>, crate::ir::RuntimeError> {
        let mut args = vec![Buffer::F64(vec![a]), Buffer::F64(vec![0.0])];
        Interpreter::new(m)
            .call(ProcId(1), &mut args)
            .map(|()| args)
    }

    #[test]
    fn calls_are_inlined_and_evaluate_identically() {
        let before = program();
        let mut after = before.clone();
        let origins = inline_module(&mut after);
        crate::ir::verify::verify_module(&after).expect("inlined code verifies");
        assert_eq!(calls(&after.procs[1]), 0, "both calls inlined");
        assert_eq!(calls(&before.procs[1]), 2);
        assert!(!origins.is_empty());
        // `twice` itself is unchanged (it may be called from outside).
        assert_eq!(
            crate::ir::print::print_proc(&before, ProcId(0)),
            crate::ir::print::print_proc(&after, ProcId(0))
        );
        // 2 * 2 + (3 * 2 + 1) * 2 + 3 * 2 = 24 at a = 2; a = 60 stops in
        // the first call, a = 20 in the second.
        for a in [2.0, -1.5, 0.0, 20.0, 60.0, f64::NAN] {
            match (run(&before, a), run(&after, a)) {
                (Ok(b), Ok(x)) => assert_eq!(format!("{b:?}"), format!("{x:?}"), "a = {a}"),
                (Err(b), Err(x)) => {
                    assert_eq!(b.kind, x.kind, "a = {a}");
                    assert_eq!(b.span, x.span, "a = {a}");
                }
                (b, x) => panic!("a = {a}: {b:?} against {x:?}"),
            }
        }
        assert_eq!(run(&after, 2.0).unwrap()[1], Buffer::F64(vec![24.0]));
    }

    #[test]
    fn inlined_stops_remember_the_callee() {
        let mut m = program();
        let origins = inline_module(&mut m);
        let main = &m.procs[1];
        let fails: Vec<usize> = (0..main.blocks.len())
            .filter(|&b| matches!(main.blocks[b].term, Terminator::Fail(_)))
            .collect();
        assert_eq!(fails.len(), 2, "one STOP per inlined call");
        for b in fails {
            assert_eq!(origins.block(ProcId(1), b as u32), Some(ProcId(0)));
        }
        let copied = main
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|v| origins.inst(ProcId(1), v.0).is_some())
            .count();
        assert!(copied >= 2 * size(&m.procs[0]));
        // Renumbering after merging keeps the STOP blocks' origins.
        let carried = super::super::merge::merge_blocks(&mut m.procs[1]);
        let mut origins = origins;
        origins.renumber_blocks(ProcId(1), &carried);
        let main = &m.procs[1];
        for (b, block) in main.blocks.iter().enumerate() {
            let from = origins.block(ProcId(1), b as u32);
            assert_eq!(
                from.is_some(),
                matches!(block.term, Terminator::Fail(_)),
                "block {b}"
            );
        }
    }

    #[test]
    fn recursive_callees_and_element_arguments_keep_their_calls() {
        let mut m = Module::default();
        // `rec(n)`: calls itself.
        let mut proc = Proc::new("rec");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, vec![]);
        b.call(ProcId(0), vec![CallArg::Var(n)]);
        b.ret();
        m.add_proc(proc);
        // `leaf(x)`: x = 1.
        let mut proc = Proc::new("leaf");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let one = b.fconst(Type::F64, 1.0);
        b.store(x, one);
        b.ret();
        m.add_proc(proc);
        // `top(n, v)`: call rec(n); call leaf(v(1)).
        let mut proc = Proc::new("top");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, vec![]);
        let v = b.param("v", Type::F64, vec![ProcBuilder::const_dim(1, 2)]);
        b.call(ProcId(0), vec![CallArg::Var(n)]);
        let i = b.iconst(Type::I64, 1);
        b.call(ProcId(1), vec![CallArg::Elem(v, vec![i])]);
        b.ret();
        m.add_proc(proc);
        let before = m.clone();
        let origins = inline_module(&mut m);
        assert!(origins.is_empty());
        for p in 0..3 {
            let p = ProcId(p);
            assert_eq!(
                crate::ir::print::print_proc(&before, p),
                crate::ir::print::print_proc(&m, p)
            );
        }
    }

    #[test]
    fn budgets_bound_the_callee() {
        // A callee of CALLEE_BUDGET + 1 instructions stays a call.
        let mut m = Module::default();
        let mut proc = Proc::new("big");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        for _ in 0..CALLEE_BUDGET.div_ceil(3) + 1 {
            let v = b.load(x);
            let w = b.binary(BinaryOp::Add, v, v);
            b.store(x, w);
        }
        b.ret();
        m.add_proc(proc);
        let mut proc = Proc::new("top");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        b.call(ProcId(0), vec![CallArg::Var(x)]);
        b.ret();
        m.add_proc(proc);
        assert!(size(&m.procs[0]) > CALLEE_BUDGET);
        inline_module(&mut m);
        assert_eq!(calls(&m.procs[1]), 1);
    }
}
