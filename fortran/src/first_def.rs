//! Locals whose zeroing at entry is dead code.
//!
//! The IR's locals start at zero, so the emitted procedure sets each local
//! it reads to zero at entry. A scalar numeric or logical local that is
//! assigned on every path before each mention of it (a forward "definitely
//! assigned" data-flow over the blocks) never shows that zero, and its
//! zeroing is left out. A local mentioned in bounds (read at entry) keeps
//! it, as does every other kind of variable: zeroing stays where unsure.
//!
//! Likewise a store to a scalar local or dummy that a later store in the
//! same block, or in straight-line code it falls into, overwrites with
//! nothing between that could read it (a mention, a call), is dead
//! ([`overwritten_stores`]): the derivative `c_d = 0.0d0` at entry before
//! the first statement sets `c_d` again.

use adjit_ir::{BlockId, CallArg, Inst, Proc, Storage, Type, Value, VarId};
use std::collections::HashSet;

/// The scalar variables of `proc` assigned before every mention on every
/// path from entry, skipping the instructions in `dead` (not written).
pub(crate) fn defined_first(proc: &Proc, dead: &HashSet<Value>) -> HashSet<VarId> {
    let n = proc.vars.len();
    let mut candidate: Vec<bool> = proc
        .vars
        .iter()
        .map(|v| v.dims.is_empty() && v.ty != Type::Char)
        .collect();
    for var in &proc.vars {
        let mut bound_var = |v: VarId| candidate[v.index()] = false;
        for d in &var.dims {
            d.lower.for_each_var(&mut bound_var);
            if let Some(u) = &d.upper {
                u.for_each_var(&mut bound_var);
            }
        }
        if let Some(l) = &var.char_len {
            l.for_each_var(&mut bound_var);
        }
    }
    let blocks = proc.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks];
    for b in 0..blocks {
        for s in proc.successors(BlockId(b as u32)) {
            preds[s.index()].push(b);
        }
    }
    // Definitely assigned at each block's end (all, until computed).
    let mut out: Vec<Vec<bool>> = vec![vec![true; n]; blocks];
    let block_in = |out: &Vec<Vec<bool>>, b: usize| -> Vec<bool> {
        if b == Proc::ENTRY.index() {
            return vec![false; n];
        }
        let mut set = vec![true; n];
        for &p in &preds[b] {
            for (s, o) in set.iter_mut().zip(&out[p]) {
                *s &= *o;
            }
        }
        set
    };
    let mut unassigned_use = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..blocks {
            let mut set = block_in(&out, b);
            scan(proc, BlockId(b as u32), dead, &mut set, &mut |_| {});
            if set != out[b] {
                out[b] = set;
                changed = true;
            }
        }
    }
    for b in 0..blocks {
        let mut set = block_in(&out, b);
        scan(proc, BlockId(b as u32), dead, &mut set, &mut |x| {
            unassigned_use[x.index()] = true
        });
    }
    (0..n)
        .filter(|&i| candidate[i] && !unassigned_use[i])
        .map(|i| VarId(i as u32))
        .collect()
}

/// The stores of `proc` to a scalar local or dummy that a later store
/// overwrites before anything could read the variable, skipping the
/// instructions in `dead`. The later store is in the same block, or in a
/// block that straight-line code falls into (a block's only successor
/// whose only predecessor it is, followed as far as such a chain goes).
pub(crate) fn overwritten_stores(proc: &Proc, dead: &HashSet<Value>) -> HashSet<Value> {
    let blocks = proc.blocks.len();
    let mut preds = vec![0usize; blocks];
    for b in 0..blocks {
        for s in proc.successors(BlockId(b as u32)) {
            preds[s.index()] += 1;
        }
    }
    // The block that block `b` falls into, if any.
    let falls_into = |b: usize| -> Option<usize> {
        match proc.successors(BlockId(b as u32)).as_slice() {
            [s] if preds[s.index()] == 1 && s.index() != b => Some(s.index()),
            _ => None,
        }
    };
    let mut overwritten = HashSet::new();
    // The variables each block stores before any mention of them (from
    // its start, with what it falls into), filled in from the chains' ends.
    let mut stored_first: Vec<Option<HashSet<VarId>>> = vec![None; blocks];
    for start in 0..blocks {
        // The chain from `start` as far as it is not yet known (a cycle of
        // such blocks is unreachable; its length bounds the walk).
        let mut chain = vec![start];
        while let Some(next) = falls_into(*chain.last().unwrap_or(&start)) {
            if stored_first[next].is_some() || chain.contains(&next) {
                break;
            }
            chain.push(next);
        }
        for &b in chain.iter().rev() {
            if stored_first[b].is_some() {
                continue;
            }
            let mut pending = falls_into(b)
                .and_then(|s| stored_first[s].clone())
                .unwrap_or_default();
            scan_back(
                proc,
                BlockId(b as u32),
                dead,
                &mut pending,
                &mut overwritten,
            );
            stored_first[b] = Some(pending);
        }
    }
    overwritten
}

/// Runs backwards through block `b`, from the variables `pending` that
/// later code stores before any mention, adding to `overwritten` each
/// store to such a variable; leaves in `pending` those the block (and
/// what follows it) stores before any mention.
fn scan_back(
    proc: &Proc,
    b: BlockId,
    dead: &HashSet<Value>,
    pending: &mut HashSet<VarId>,
    overwritten: &mut HashSet<Value>,
) {
    for &v in proc.blocks[b.index()].insts.iter().rev() {
        if dead.contains(&v) {
            continue;
        }
        match &proc.inst(v).kind {
            Inst::Store(x, _) => {
                let var = proc.var(*x);
                let plain = var.dims.is_empty()
                    && matches!(var.storage, Storage::Local | Storage::Param(_));
                if plain && !pending.insert(*x) {
                    overwritten.insert(v);
                }
            }
            Inst::Load(x)
            | Inst::LoadElem(x, _)
            | Inst::StoreElem(x, _, _)
            | Inst::DimLower(x, _)
            | Inst::DimExtent(x, _) => {
                pending.remove(x);
            }
            Inst::Const(_)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cmp(..)
            | Inst::Convert(..)
            | Inst::Select(..)
            | Inst::Push(..)
            | Inst::Pop(_) => {}
            // Calls and the rest may read anything.
            _ => pending.clear(),
        }
    }
}

/// Runs through block `b` from the definitely assigned variables `set`,
/// calling `unassigned` on each mention of a variable not in it.
fn scan(
    proc: &Proc,
    b: BlockId,
    dead: &HashSet<Value>,
    set: &mut [bool],
    unassigned: &mut dyn FnMut(VarId),
) {
    let mut mention = |x: VarId, set: &mut [bool]| {
        if !set[x.index()] {
            unassigned(x);
        }
    };
    for &v in &proc.block(b).insts {
        if dead.contains(&v) {
            continue;
        }
        match &proc.inst(v).kind {
            Inst::Store(x, _) => set[x.index()] = true,
            Inst::Load(x) | Inst::LoadElem(x, _) | Inst::StoreElem(x, _, _) => mention(*x, set),
            Inst::Call(_, args) => {
                for a in args {
                    if let CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _) = a {
                        mention(*x, set);
                    }
                }
            }
            // The others mention arrays or character variables only.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::{BinaryOp, CmpOp, Type};

    /// `a = 1; c = c + a` assigns `a` first but reads `c` first; a local
    /// assigned on one branch only is not assigned where the branches
    /// meet.
    #[test]
    fn only_locals_assigned_before_any_mention() {
        let mut proc = Proc::new("f");
        let (a, c, late) = {
            let mut b = ProcBuilder::new(&mut proc);
            let a = b.local("a", Type::F64);
            let c = b.local("c", Type::F64);
            let late = b.local("late", Type::F64);
            let one = b.fconst(Type::F64, 1.0);
            b.store(a, one);
            let lc = b.load(c);
            let la = b.load(a);
            let s = b.binary(BinaryOp::Add, lc, la);
            b.store(c, s);
            let next = b.create_block();
            b.jump(next);
            b.switch_to_block(next);
            let cond = b.load(a);
            let zero = b.fconst(Type::F64, 0.0);
            let cmp = b.cmp(CmpOp::Gt, cond, zero);
            let then = b.create_block();
            let done = b.create_block();
            b.branch(cmp, then, done);
            b.switch_to_block(then);
            let one = b.fconst(Type::F64, 1.0);
            b.store(late, one);
            b.jump(done);
            b.switch_to_block(done);
            let l = b.load(late);
            b.store(c, l);
            b.ret();
            (a, c, late)
        };
        let defined = defined_first(&proc, &HashSet::new());
        assert!(defined.contains(&a));
        assert!(!defined.contains(&c));
        assert!(!defined.contains(&late));
    }

    /// `x = 1; x = 2` overwrites the first store; `x = 1; y = x; x = 2`
    /// and a store before a call keep it.
    #[test]
    fn a_store_overwritten_before_any_read_is_dead() {
        let mut proc = Proc::new("f");
        let (first, read_first, kept) = {
            let mut b = ProcBuilder::new(&mut proc);
            let x = b.local("x", Type::F64);
            let y = b.local("y", Type::F64);
            let one = b.fconst(Type::F64, 1.0);
            let first = b.store(x, one);
            let read_first = b.store(x, one);
            let l = b.load(x);
            b.store(y, l);
            let kept = b.store(x, one);
            b.ret();
            (first, read_first, kept)
        };
        let dead = overwritten_stores(&proc, &HashSet::new());
        assert!(dead.contains(&first));
        assert!(!dead.contains(&read_first));
        assert!(!dead.contains(&kept));
    }

    /// `x = 0` at entry, then a jump to a block that sets `x` first, is
    /// overwritten; before a branch, or before a block that reads `x`
    /// first, it is kept.
    #[test]
    fn a_store_overwritten_in_the_block_it_falls_into_is_dead() {
        let mut proc = Proc::new("f");
        let (first, before_branch, read_later) = {
            let mut b = ProcBuilder::new(&mut proc);
            let x = b.local("x", Type::F64);
            let y = b.local("y", Type::F64);
            let zero = b.fconst(Type::F64, 0.0);
            let first = b.store(x, zero);
            let second = b.create_block();
            b.jump(second);
            b.switch_to_block(second);
            let one = b.fconst(Type::F64, 1.0);
            let before_branch = b.store(x, one);
            let read_later = b.store(y, one);
            let cond = b.cmp(CmpOp::Gt, one, zero);
            let then = b.create_block();
            let done = b.create_block();
            b.branch(cond, then, done);
            b.switch_to_block(then);
            b.store(x, zero);
            b.jump(done);
            b.switch_to_block(done);
            let l = b.load(y);
            b.store(y, l);
            b.ret();
            (first, before_branch, read_later)
        };
        let dead = overwritten_stores(&proc, &HashSet::new());
        assert!(dead.contains(&first));
        assert!(!dead.contains(&before_branch));
        assert!(!dead.contains(&read_later));
    }
}
