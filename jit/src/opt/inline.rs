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
    BlockId, CallArg, CharBase, CharRef, Const, Inst, IoOp, Module, Proc, ProcId, Storage,
    Terminator, Type, Value, Var, VarId,
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
    let n = module.procs.len();
    let mut origins = Origins {
        procs: vec![ProcOrigins::default(); n],
    };
    let callees: Vec<Vec<usize>> = module.procs.iter().map(callees_of).collect();
    let recursive = recursive_procs(&callees);
    for p in post_order(&callees) {
        if !callees[p].is_empty() {
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
                    CallArg::Elem(..) => return None,
                }
            }
            Storage::Local if !var.is_array() => VarPlan::Local,
            Storage::Global(..) if global_view_is_constant(var) => VarPlan::Global,
            Storage::Local | Storage::Global(..) | Storage::Allocatable => return None,
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
    tail.remove(0);
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
            let mut kind = data.kind.map_operands(|x| values.get(&x).copied().unwrap_or(x));
            map_vars(&mut kind, |x| vars[x.index()]);
            let nv = caller.push_inst(nb, kind, data.ty, data.span);
            values.insert(v, nv);
            origins.insts.insert(nv.0, origin_of_inst(v));
        }
        let mut term = cblock.term.clone();
        match &mut term {
            Terminator::Jump(d) => *d = block_map(*d),
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                *cond = values[cond];
                *then_dest = block_map(*then_dest);
                *else_dest = block_map(*else_dest);
            }
            Terminator::Switch {
                value,
                cases,
                default,
            } => {
                *value = values[value];
                cases.iter_mut().for_each(|(_, d)| *d = block_map(*d));
                *default = block_map(*default);
            }
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

/// Replaces every variable `inst` names by `f` of it.
fn map_vars(inst: &mut Inst, f: impl Fn(VarId) -> VarId) {
    let char_ref = |r: &mut CharRef| {
        if let CharBase::Var { var, .. } = &mut r.base {
            *var = f(*var);
        }
    };
    match inst {
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
                    CallArg::Var(v) | CallArg::Elem(v, _) => *v = f(*v),
                    CallArg::Value(_) => {}
                }
            }
        }
        Inst::CharAssign(a, b) | Inst::CharCompare(_, a, b) | Inst::CharIndex(a, b) => {
            char_ref(a);
            char_ref(b);
        }
        Inst::CharLen(a) => char_ref(a),
        Inst::Io(IoOp::PutChar(r) | IoOp::GetChar(r)) => char_ref(r),
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
