//! Counting copies of forward sweeps, for the automatic mode of
//! checkpointing (a tape budget, [`crate::ad::adjoint::AdjointOptions::tape_budget`]).
//!
//! To project the tape a marked loop would record, its forward sweep runs
//! one trip with a copy of the step's forward sweep in which every `Push`
//! is a call of a counting procedure (which adds 8 bytes, one stack entry,
//! to a global) and every call of a procedure that pushes, directly or
//! through its callees, calls that procedure's counting copy instead. The
//! copy computes what the forward sweep computes and leaves the stacks
//! untouched.

use std::collections::{BTreeMap, BTreeSet};

use adjit_ir::{CallArg, Inst, Module, Proc, ProcId};

/// The procedures `root` may call (itself included), transitively.
fn reachable(module: &Module, root: ProcId) -> BTreeSet<ProcId> {
    let mut seen = BTreeSet::from([root]);
    let mut work = vec![root];
    while let Some(p) = work.pop() {
        for callee in callees(module.proc(p)) {
            if seen.insert(callee) {
                work.push(callee);
            }
        }
    }
    seen
}

/// The procedures `proc` calls.
fn callees(proc: &Proc) -> impl Iterator<Item = ProcId> + '_ {
    proc.blocks.iter().flat_map(move |b| {
        b.insts
            .iter()
            .filter_map(move |&v| match &proc.inst(v).kind {
                Inst::Call(f, _) => Some(*f),
                _ => None,
            })
    })
}

/// Whether `proc` pushes on a runtime stack itself.
fn pushes(proc: &Proc) -> bool {
    proc.blocks.iter().any(|b| {
        b.insts
            .iter()
            .any(|&v| matches!(proc.inst(v).kind, Inst::Push(..)))
    })
}

/// Adds to `module` the counting copy of `root` and of every procedure it
/// may call that pushes (directly or through its callees), each named
/// after its original with `_count`; every `Push` of a copy becomes a call
/// of `count` (a procedure without parameters). Returns the copy of `root`
/// (`root` itself when nothing it runs pushes).
pub fn counting_copy(module: &mut Module, root: ProcId, count: ProcId) -> ProcId {
    let procs = reachable(module, root);
    // The procedures that push, directly or through a callee (to a fixed
    // point: recursion is allowed).
    let mut pushing: BTreeSet<ProcId> = procs
        .iter()
        .copied()
        .filter(|&p| pushes(module.proc(p)))
        .collect();
    loop {
        let more: Vec<ProcId> = procs
            .iter()
            .copied()
            .filter(|p| !pushing.contains(p))
            .filter(|&p| callees(module.proc(p)).any(|f| pushing.contains(&f)))
            .collect();
        if more.is_empty() {
            break;
        }
        pushing.extend(more);
    }
    let copies: BTreeMap<ProcId, ProcId> = pushing
        .iter()
        .map(|&p| {
            let mut name = format!("{}_count", module.proc(p).name);
            while module.find_proc(&name).is_some() {
                name.push('_');
            }
            (p, module.add_proc(Proc::new(name)))
        })
        .collect();
    for (&original, &copy) in &copies {
        let mut p = module.proc(original).clone();
        p.name = module.proc(copy).name.clone();
        for data in &mut p.insts {
            match &mut data.kind {
                Inst::Push(..) => data.kind = Inst::Call(count, Vec::<CallArg>::new()),
                Inst::Call(f, _) => {
                    if let Some(&c) = copies.get(f) {
                        *f = c;
                    }
                }
                _ => {}
            }
        }
        module.procs[copy.index()] = p;
    }
    copies.get(&root).copied().unwrap_or(root)
}
