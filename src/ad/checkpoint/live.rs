//! The live state of a trip: the variables the step procedure may read
//! before writing them (upward-exposed uses). A snapshot of a checkpointed
//! loop needs only those of the variables a trip writes: a scalar every
//! path through the trip stores before reading it is dead at the loop head.

use std::collections::BTreeSet;

use adjit_ir::{BlockId, CallArg, Inst, Proc, VarId};

/// The variables of `proc` that some path from its entry may use before a
/// whole-variable store of them. Arrays and character variables, stored
/// element by element or in part, count as used whenever they are named;
/// only a `Store` of a scalar defines it.
pub fn upward_exposed(proc: &Proc) -> BTreeSet<VarId> {
    let n = proc.blocks.len();
    // Scalars surely stored on every path to a block's entry (None: not
    // reached yet), to a fixed point.
    let mut defined_in: Vec<Option<BTreeSet<VarId>>> = vec![None; n];
    defined_in[Proc::ENTRY.index()] = Some(BTreeSet::new());
    let mut exposed = BTreeSet::new();
    let mut work = vec![Proc::ENTRY];
    while let Some(b) = work.pop() {
        let Some(mut defined) = defined_in[b.index()].clone() else {
            continue;
        };
        scan_block(proc, b, &mut defined, &mut exposed);
        for succ in proc.block(b).term.successors() {
            let slot = &mut defined_in[succ.index()];
            let merged = match slot {
                None => defined.clone(),
                Some(old) => old.intersection(&defined).copied().collect(),
            };
            if slot.as_ref() != Some(&merged) {
                *slot = Some(merged);
                work.push(succ);
            }
        }
    }
    exposed
}

/// Adds to `exposed` the variables block `b` names before `defined` (the
/// scalars stored so far) holds them, and adds its scalar stores to
/// `defined`.
fn scan_block(
    proc: &Proc,
    b: BlockId,
    defined: &mut BTreeSet<VarId>,
    exposed: &mut BTreeSet<VarId>,
) {
    for &v in &proc.block(b).insts {
        let inst = &proc.inst(v).kind;
        if let Inst::Store(var, _) = inst {
            if !proc.var(*var).is_array() {
                defined.insert(*var);
                continue;
            }
        }
        let mut use_var = |var: VarId| {
            if !defined.contains(&var) {
                exposed.insert(var);
            }
        };
        match inst {
            Inst::Call(_, args) => {
                for a in args {
                    if let CallArg::Var(var) | CallArg::Elem(var, _) | CallArg::Slice(var, _, _) = a
                    {
                        use_var(*var);
                    }
                }
            }
            other => crate::ad::checkpoint::outline::inst_vars(other, &mut use_var),
        }
    }
}
