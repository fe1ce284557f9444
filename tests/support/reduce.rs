//! A test-case reducer for code-list modules: greedily deletes instructions,
//! simplifies terminators, drops procedures, variables and entry parameters
//! while a predicate (for example "the interpreter and the JIT still
//! disagree in the same way") keeps holding and the module stays verified.
//!
//! Reductions never make a terminating program loop forever: a terminator
//! becomes a jump only to a block that cannot reach it back (so no cycle
//! loses its exit), and stores to loop counters (variables named `_k...`,
//! as the generator names them) are never deleted.

use adjit::ir::buffer::Buffer;
use adjit::ir::verify::verify_module;
use adjit::ir::{
    BlockId, Bound, CallArg, CharBase, CharRef, Inst, IoOp, Module, Proc, ProcId, Storage,
    Terminator, Value, VarId,
};

/// A module, its entry and the host arguments, as the reducer shrinks them.
#[derive(Clone, Debug)]
pub struct Case {
    /// The module.
    pub module: Module,
    /// The procedure the host calls.
    pub entry: ProcId,
    /// The host arguments.
    pub args: Vec<Buffer>,
}

/// Shrinks `case` while `interesting` holds (it must hold for `case`).
pub fn reduce(case: Case, interesting: &mut dyn FnMut(&Case) -> bool) -> Case {
    let mut best = case;
    loop {
        let before = size(&best);
        best = pass(best, interesting, simplify_terminators);
        best = pass(best, interesting, delete_instructions);
        best = pass(best, interesting, delete_procs);
        best = pass(best, interesting, delete_entry_params);
        best = pass(best, interesting, |c| {
            let mut c = c.clone();
            delete_unused_vars(&mut c.module);
            vec![c]
        });
        if size(&best) >= before {
            return best;
        }
    }
}

fn size(case: &Case) -> usize {
    case.module
        .procs
        .iter()
        .map(|p| p.insts.len() + p.blocks.len() + p.vars.len())
        .sum::<usize>()
        + case.args.iter().map(Buffer::len).sum::<usize>()
}

/// Tries the candidates of `best` in turn, keeping the first that verifies,
/// is smaller and stays interesting, then continues from the same position
/// among the candidates of the new best case.
fn pass(
    mut best: Case,
    interesting: &mut dyn FnMut(&Case) -> bool,
    candidates: impl Fn(&Case) -> Vec<Case>,
) -> Case {
    let mut start = 0;
    loop {
        let found = candidates(&best)
            .into_iter()
            .enumerate()
            .skip(start)
            .find(|(_, c)| {
                size(c) < size(&best) && verify_module(&c.module).is_ok() && interesting(c)
            });
        match found {
            Some((k, c)) => {
                best = c;
                start = k;
            }
            None => return best,
        }
    }
}

/// Candidates replacing a terminator by `Return` or by a jump to one of its
/// successors, and dropping unreachable blocks.
fn simplify_terminators(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (p, proc) in case.module.procs.iter().enumerate() {
        for (b, block) in proc.blocks.iter().enumerate() {
            let mut replacements = vec![Terminator::Return];
            replacements.extend(
                block
                    .term
                    .successors()
                    .into_iter()
                    .filter(|s| !reaches(proc, *s, BlockId(b as u32)))
                    .map(Terminator::Jump),
            );
            for term in replacements {
                if term == block.term {
                    continue;
                }
                let mut c = case.clone();
                c.module.procs[p].blocks[b].term = term;
                drop_unreachable_blocks(&mut c.module.procs[p]);
                compact(&mut c.module.procs[p]);
                out.push(c);
            }
        }
    }
    out
}

/// Candidates deleting one instruction (and whatever in its block depends
/// on it), last instructions first.
fn delete_instructions(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (p, proc) in case.module.procs.iter().enumerate() {
        for (b, block) in proc.blocks.iter().enumerate() {
            for pos in (0..block.insts.len()).rev() {
                let mut c = case.clone();
                if !remove_with_users(&mut c.module.procs[p], b, pos) {
                    continue;
                }
                compact(&mut c.module.procs[p]);
                out.push(c);
            }
        }
    }
    out
}

/// Candidates deleting a procedure no other procedure calls.
fn delete_procs(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for p in 0..case.module.procs.len() {
        let id = ProcId(p as u32);
        if id == case.entry || calls(&case.module, id) {
            continue;
        }
        let mut c = case.clone();
        c.module.procs.remove(p);
        for proc in &mut c.module.procs {
            for data in &mut proc.insts {
                if let Inst::Call(callee, _) = &mut data.kind {
                    if callee.0 > id.0 {
                        callee.0 -= 1;
                    }
                }
            }
        }
        if c.entry.0 > id.0 {
            c.entry.0 -= 1;
        }
        out.push(c);
    }
    out
}

fn calls(module: &Module, target: ProcId) -> bool {
    module.procs.iter().any(|p| {
        p.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .any(|&v| matches!(&p.inst(v).kind, Inst::Call(callee, _) if *callee == target))
    })
}

/// Candidates deleting a parameter of the entry procedure (made a local,
/// its argument dropped) when no other procedure calls the entry.
fn delete_entry_params(case: &Case) -> Vec<Case> {
    if calls(&case.module, case.entry) {
        return Vec::new();
    }
    let proc = case.module.proc(case.entry);
    let mut out = Vec::new();
    for i in 0..proc.params.len() {
        let mut c = case.clone();
        let proc = &mut c.module.procs[c.entry.index()];
        let var = proc.params.remove(i);
        if proc.result == Some(var) {
            proc.result = None;
        }
        proc.vars[var.index()].storage = Storage::Local;
        for (n, &p) in proc.params.iter().enumerate() {
            proc.vars[p.index()].storage = Storage::Param(n as u32);
        }
        c.args.remove(i);
        out.push(c);
    }
    out
}

/// True when `to` is reachable from `from` (in one or more steps, or
/// `from == to`).
fn reaches(proc: &Proc, from: BlockId, to: BlockId) -> bool {
    let mut seen = vec![false; proc.blocks.len()];
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        if b == to {
            return true;
        }
        if b.index() >= seen.len() || std::mem::replace(&mut seen[b.index()], true) {
            continue;
        }
        work.extend(proc.blocks[b.index()].term.successors());
    }
    false
}

/// True for a store to a loop counter, which must stay for termination.
fn is_counter_update(proc: &Proc, inst: &Inst) -> bool {
    matches!(inst, Inst::Store(var, _) if proc.var(*var).name.starts_with("_k"))
}

/// Removes instruction `pos` of block `b`, every later instruction of the
/// block that reads a removed value, and turns a terminator reading one into
/// `Return`. Returns false (leaving a partly edited proc, to be dropped)
/// when that would delete a loop counter update.
fn remove_with_users(proc: &mut Proc, b: usize, pos: usize) -> bool {
    let mut removed = vec![proc.blocks[b].insts[pos]];
    let insts = proc.blocks[b].insts.clone();
    let mut kept = insts[..pos].to_vec();
    for &v in &insts[pos..] {
        let mut uses_removed = removed.contains(&v);
        proc.inst(v)
            .kind
            .for_each_operand(|o| uses_removed |= removed.contains(&o));
        if uses_removed {
            if is_counter_update(proc, &proc.inst(v).kind) {
                return false;
            }
            removed.push(v);
        } else {
            kept.push(v);
        }
    }
    proc.blocks[b].insts = kept;
    if proc.blocks[b]
        .term
        .operand()
        .is_some_and(|o| removed.contains(&o))
    {
        proc.blocks[b].term = Terminator::Return;
    }
    true
}

/// Deletes blocks unreachable from the entry block, renumbering the rest.
fn drop_unreachable_blocks(proc: &mut Proc) {
    let mut reachable = vec![false; proc.blocks.len()];
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut reachable[b], true) {
            continue;
        }
        work.extend(proc.blocks[b].term.successors().iter().map(|s| s.index()));
    }
    let mut new_index = vec![0u32; proc.blocks.len()];
    let mut next = 0;
    for (b, &r) in reachable.iter().enumerate() {
        new_index[b] = next;
        next += r as u32;
    }
    let blocks = std::mem::take(&mut proc.blocks);
    for (b, mut block) in blocks.into_iter().enumerate() {
        if !reachable[b] {
            continue;
        }
        let renumber = |t: &mut BlockId| t.0 = new_index[t.index()];
        match &mut block.term {
            Terminator::Jump(t) => renumber(t),
            Terminator::Branch {
                then_dest,
                else_dest,
                ..
            } => {
                renumber(then_dest);
                renumber(else_dest);
            }
            Terminator::Switch { cases, default, .. } => {
                cases.iter_mut().for_each(|(_, t)| renumber(t));
                renumber(default);
            }
            Terminator::Return | Terminator::Fail(_) => {}
        }
        proc.blocks.push(block);
    }
}

/// Drops instructions no block holds and renumbers the rest in block order.
fn compact(proc: &mut Proc) {
    let mut new_value: Vec<Option<Value>> = vec![None; proc.insts.len()];
    let mut insts = Vec::new();
    for block in &mut proc.blocks {
        for v in &mut block.insts {
            let n = Value(insts.len() as u32);
            new_value[v.index()] = Some(n);
            insts.push(proc.insts[v.index()].clone());
            *v = n;
        }
    }
    let map = |v: Value| new_value[v.index()].unwrap_or(v);
    for data in &mut insts {
        map_values(&mut data.kind, &map);
    }
    for block in &mut proc.blocks {
        match &mut block.term {
            Terminator::Branch { cond: v, .. } | Terminator::Switch { value: v, .. } => {
                *v = map(*v)
            }
            _ => {}
        }
    }
    proc.insts = insts;
}

/// Rewrites every value operand of an instruction.
fn map_values(inst: &mut Inst, f: &dyn Fn(Value) -> Value) {
    inst.for_each_operand_mut(|v| *v = f(*v));
}

/// Every variable an instruction names.
fn inst_vars(inst: &Inst, out: &mut Vec<VarId>) {
    let char_var = |r: &CharRef, out: &mut Vec<VarId>| {
        if let CharBase::Var { var, .. } = &r.base {
            out.push(*var);
        }
    };
    match inst {
        Inst::Load(v)
        | Inst::Store(v, _)
        | Inst::LoadElem(v, _)
        | Inst::StoreElem(v, _, _)
        | Inst::DimLower(v, _)
        | Inst::DimExtent(v, _) => out.push(*v),
        Inst::Call(_, args) => {
            for arg in args {
                if let CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) = arg {
                    out.push(*v);
                }
            }
        }
        Inst::CharAssign(a, b)
        | Inst::CharCompare(_, a, b)
        | Inst::CharIndex(a, b)
        | Inst::CharSearch(_, _, a, b) => {
            char_var(a, out);
            char_var(b, out);
        }
        Inst::CharLen(a) | Inst::Io(IoOp::PutChar(a) | IoOp::GetChar(a)) => char_var(a, out),
        _ => {}
    }
}

fn map_bound_vars(bound: &mut Bound, f: &dyn Fn(VarId) -> VarId) {
    match bound {
        Bound::Const(_) => {}
        Bound::Var(v) => *v = f(*v),
        Bound::Neg(a) => map_bound_vars(a, f),
        Bound::Add(a, b)
        | Bound::Sub(a, b)
        | Bound::Mul(a, b)
        | Bound::Div(a, b)
        | Bound::Max(a, b)
        | Bound::Min(a, b) => {
            map_bound_vars(a, f);
            map_bound_vars(b, f);
        }
    }
}

/// Deletes local variables that no placed instruction and no bound names.
fn delete_unused_vars(module: &mut Module) {
    for proc in &mut module.procs {
        let mut used = vec![false; proc.vars.len()];
        let mut named = Vec::new();
        for block in &proc.blocks {
            for &v in &block.insts {
                inst_vars(&proc.inst(v).kind, &mut named);
            }
        }
        for var in &proc.vars {
            for dim in &var.dims {
                dim.lower.for_each_var(&mut |v| named.push(v));
                if let Some(u) = &dim.upper {
                    u.for_each_var(&mut |v| named.push(v));
                }
            }
        }
        named.extend(proc.params.iter().copied());
        for v in named {
            used[v.index()] = true;
        }
        let mut new_id = vec![VarId(0); proc.vars.len()];
        let mut next = 0;
        for (i, &u) in used.iter().enumerate() {
            new_id[i] = VarId(next);
            next += u as u32;
        }
        let f = |v: VarId| new_id[v.index()];
        let vars = std::mem::take(&mut proc.vars);
        proc.vars = vars
            .into_iter()
            .enumerate()
            .filter(|(i, _)| used[*i])
            .map(|(_, mut var)| {
                for dim in &mut var.dims {
                    map_bound_vars(&mut dim.lower, &f);
                    if let Some(u) = &mut dim.upper {
                        map_bound_vars(u, &f);
                    }
                }
                var
            })
            .collect();
        for data in &mut proc.insts {
            data.kind.map_vars(f);
        }
        proc.params.iter_mut().for_each(|p| *p = f(*p));
        proc.result = proc.result.map(f);
    }
}
