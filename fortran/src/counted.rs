//! Counted DO loops recovered from the code lists, so that they are written
//! as `do i = start, end, step` rather than as the trip counter the IR runs.
//!
//! The front end lowers an integer DO loop with a constant step to: an
//! entry that stores the DO variable, the step (`_step*`), whether a first
//! trip is taken (`_go*`, `start <= end`), the distance still to go
//! (`_rest*`, `end - start` biased by `-2**63`) and the step's magnitude
//! (`_stride*`); a header that only loads `_go*` and branches to the body
//! or out; and a latch that adds the step to the DO variable and advances
//! `_go*` and `_rest*`. The transforms keep that shape (the adjoint's
//! forward sweep copies values through spill variables in between and
//! counts trips after the latch).
//!
//! [`analyse`] finds the loops of that shape whose DO variable nothing but
//! the latch writes and nothing reads between the increment and the next
//! test, and whose bounds fit the DO variable's kind. For each it records
//! the start and end values (defined in the entry block) and marks the
//! counter's stores dead; a Fortran DO then counts its trips from the same
//! bounds, which gives the same trips and leaves the DO variable at the
//! same value. Any other loop is left to the general form.

use adjit_ir::{BinaryOp, CmpOp, Const, Inst, Proc, Storage, Terminator, Type, Value, VarId};
use adjit_ir::{BlockId, InstData};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// One counted DO loop.
#[derive(Clone, Debug)]
pub struct CountedLoop {
    /// The DO variable.
    pub var: VarId,
    /// How its bounds are found.
    pub control: Control,
}

/// Where a counted loop's bounds come from.
#[derive(Clone, Debug)]
pub enum Control {
    /// A source DO loop (a tangent, a forward sweep): `do var = start,
    /// end, step`.
    Forward {
        /// The block whose code computes the bounds (the loop's entry).
        entry: BlockId,
        /// The first value of the DO variable (defined in `entry`).
        start: Value,
        /// The last value (defined in `entry`), of the DO variable's type
        /// or a constant that fits it.
        end: Value,
        /// The constant step.
        step: i64,
    },
    /// A reverse sweep's loop: `trips` times, the DO variable first
    /// stepped back by `step` (its value after the forward loop, as the
    /// forward sweep saved it): `do var = var - step, var - trips*step,
    /// -step`.
    Reverse {
        /// The I64 trip count the forward sweep recorded.
        trips: VarId,
        /// The step of the forward loop.
        step: VarId,
    },
}

/// The counted loops of a procedure and the instructions their DO
/// statements replace.
#[derive(Clone, Debug, Default)]
pub struct Counted {
    /// The loops, by header block.
    pub loops: HashMap<BlockId, CountedLoop>,
    /// Instructions not written (the counter's stores and what only they
    /// use).
    pub dead: HashSet<Value>,
}

impl Counted {
    /// The values block `b` must keep for the DO statements it enters.
    pub fn bound_uses(&self, b: BlockId) -> Vec<Value> {
        let mut v: Vec<Value> = Vec::new();
        for l in self.loops.values() {
            if let Control::Forward {
                entry, start, end, ..
            } = l.control
            {
                if entry == b {
                    v.push(start);
                    v.push(end);
                }
            }
        }
        v
    }
}

/// The variables instruction `kind` names (reads or writes).
fn vars_named(kind: &Inst) -> Vec<VarId> {
    let seen = RefCell::new(Vec::new());
    let mut k = kind.clone();
    k.map_vars(|v| {
        seen.borrow_mut().push(v);
        v
    });
    seen.into_inner()
}

/// Looks through copies within one block.
struct Resolver<'p> {
    proc: &'p Proc,
    /// Block and position of each instruction.
    at: HashMap<Value, (BlockId, usize)>,
}

impl Resolver<'_> {
    fn data(&self, v: Value) -> &InstData {
        self.proc.inst(v)
    }

    /// `v`, or the value last stored into the scalar local `v` loads when
    /// that store is earlier in the same block with no call between.
    fn resolve(&self, v: Value) -> Value {
        let mut v = v;
        for _ in 0..64 {
            let Inst::Load(x) = self.data(v).kind else {
                return v;
            };
            let var = self.proc.var(x);
            if var.storage != Storage::Local || !var.dims.is_empty() {
                return v;
            }
            let Some(&(b, pos)) = self.at.get(&v) else {
                return v;
            };
            let insts = &self.proc.block(b).insts;
            let mut found = None;
            for &w in insts[..pos].iter().rev() {
                match &self.data(w).kind {
                    Inst::Store(y, a) if *y == x => {
                        found = Some(*a);
                        break;
                    }
                    Inst::Call(..) => break,
                    _ => {}
                }
            }
            match found {
                Some(a) => v = a,
                None => return v,
            }
        }
        v
    }

    /// The integer constant `v` computes, if it is one.
    fn const_int(&self, v: Value) -> Option<i64> {
        let v = self.resolve(v);
        match &self.data(v).kind {
            Inst::Const(Const::Int(k)) => Some(*k),
            Inst::Convert(a, _) if self.data(*a).ty.is_some_and(|t| t.is_int()) => {
                self.const_int(*a)
            }
            Inst::Binary(BinaryOp::Sub, a, b) => {
                self.const_int(*a)?.checked_sub(self.const_int(*b)?)
            }
            _ => None,
        }
    }

    /// `v` and `w` are the same value (through copies and constants).
    fn same(&self, v: Value, w: Value) -> bool {
        let (v, w) = (self.resolve(v), self.resolve(w));
        v == w || matches!((self.const_int(v), self.const_int(w)), (Some(a), Some(b)) if a == b)
    }

    /// `v` as `(op, a, b)` when it is a binary operation.
    fn binary(&self, v: Value) -> Option<(BinaryOp, Value, Value)> {
        match self.data(self.resolve(v)).kind {
            Inst::Binary(op, a, b) => Some((op, a, b)),
            _ => None,
        }
    }

    /// The last store to `x` in block `b`: (position, stored value).
    fn last_store(&self, b: BlockId, x: VarId) -> Option<(usize, Value)> {
        let insts = &self.proc.block(b).insts;
        insts
            .iter()
            .enumerate()
            .rev()
            .find_map(|(p, &w)| match self.data(w).kind {
                Inst::Store(y, a) if y == x => Some((p, a)),
                _ => None,
            })
    }
}

/// The smallest and largest values of integer type `t`.
fn range(t: Type) -> Option<(i64, i64)> {
    match t {
        Type::I32 => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
        Type::I64 => Some((i64::MIN, i64::MAX)),
        _ => None,
    }
}

/// Finds the counted loops of `proc`.
pub fn analyse(proc: &Proc) -> Counted {
    let mut at = HashMap::new();
    for (b, block) in proc.blocks.iter().enumerate() {
        for (p, &v) in block.insts.iter().enumerate() {
            at.insert(v, (BlockId(b as u32), p));
        }
    }
    let r = Resolver { proc, at };
    let n = proc.blocks.len();
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for b in 0..n {
        for s in proc.block(BlockId(b as u32)).term.successors() {
            if !preds[s.index()].contains(&BlockId(b as u32)) {
                preds[s.index()].push(BlockId(b as u32));
            }
        }
    }
    let mut out = Counted::default();
    let mut suppressed: Vec<Value> = Vec::new();
    for h in 0..n {
        let h = BlockId(h as u32);
        if let Some(found) = counted_at(&r, &preds, h).or_else(|| reversed_at(&r, &preds, h)) {
            suppressed.extend(found.1);
            out.loops.insert(h, found.0);
        }
    }
    let mut keep: HashSet<Value> = HashSet::new();
    let mut pinned: HashSet<VarId> = HashSet::new();
    for l in out.loops.values() {
        pinned.insert(l.var);
        match l.control {
            Control::Forward { start, end, .. } => keep.extend([start, end]),
            Control::Reverse { trips, step } => pinned.extend([trips, step]),
        }
    }
    out.dead = dead_code(proc, suppressed, &keep, pinned);
    out
}

/// Blocks reached backwards from `b` through blocks with one predecessor
/// that jump unconditionally (`b` first).
fn chain_back(proc: &Proc, preds: &[Vec<BlockId>], b: BlockId) -> Vec<BlockId> {
    let mut chain = vec![b];
    let mut x = b;
    while chain.len() < 8 {
        let [p] = preds[x.index()].as_slice() else {
            break;
        };
        if !matches!(proc.block(*p).term, Terminator::Jump(_)) || chain.contains(p) {
            break;
        }
        chain.push(*p);
        x = *p;
    }
    chain
}

/// The counted loop headed by `h` and the instructions its DO statement
/// replaces.
fn counted_at(
    r: &Resolver<'_>,
    preds: &[Vec<BlockId>],
    h: BlockId,
) -> Option<(CountedLoop, Vec<Value>)> {
    let proc = r.proc;
    let header = proc.block(h);
    let [load] = header.insts.as_slice() else {
        return None;
    };
    let Inst::Load(go) = proc.inst(*load).kind else {
        return None;
    };
    let Terminator::Branch {
        cond, then_dest, ..
    } = header.term
    else {
        return None;
    };
    if cond != *load || proc.var(go).storage != Storage::Local {
        return None;
    }
    let [p1, p2] = preds[h.index()].as_slice() else {
        return None;
    };
    // The latch adds the step to the DO variable; the entry stores it.
    let latch_of = |p: BlockId| -> Option<(Vec<BlockId>, BlockId, VarId, VarId, usize, Value)> {
        let chain = chain_back(proc, preds, p);
        for &b in &chain {
            let Some(_) = r.last_store(b, go) else {
                continue;
            };
            for (pos, &w) in proc.block(b).insts.iter().enumerate() {
                let Inst::Store(i, x) = proc.inst(w).kind else {
                    continue;
                };
                let Some((BinaryOp::Add, a, s)) = r.binary(x) else {
                    continue;
                };
                let (Inst::Load(ia), Inst::Load(step)) =
                    (&proc.inst(r.resolve(a)).kind, &proc.inst(r.resolve(s)).kind)
                else {
                    continue;
                };
                if *ia == i {
                    return Some((chain, b, i, *step, pos, w));
                }
            }
            return None;
        }
        None
    };
    let ((chain, latch, var, step_var, inc_pos, inc), entry_pred) =
        match (latch_of(*p1), latch_of(*p2)) {
            (Some(l), None) => (l, *p2),
            (None, Some(l)) => (l, *p1),
            _ => return None,
        };
    let ty = proc.var(var).ty;
    let (lo, hi) = range(ty)?;
    let dvar = proc.var(var);
    if !dvar.dims.is_empty() || !matches!(dvar.storage, Storage::Local | Storage::Param(_)) {
        return None;
    }
    // The latch chain: nothing reads the DO variable after the increment.
    let after_inc = chain
        .iter()
        .rev()
        .skip_while(|&&b| b != latch)
        .flat_map(|&b| {
            let insts = &proc.block(b).insts;
            let from = if b == latch { inc_pos + 1 } else { 0 };
            insts[from..].to_vec()
        });
    for w in after_inc {
        if vars_named(&proc.inst(w).kind).contains(&var) {
            return None;
        }
    }
    let (_, rest_store) = {
        let mut found = None;
        for &w in &proc.block(latch).insts {
            if let Inst::Store(x, _) = proc.inst(w).kind {
                if x != go && x != var && proc.var(x).storage == Storage::Local {
                    let name = &proc.var(x).name;
                    if name.starts_with("_rest") {
                        found = Some((x, w));
                    }
                }
            }
        }
        found?
    };
    let Inst::Store(rest, _) = proc.inst(rest_store).kind else {
        return None;
    };
    // The entry: the last stores of the counter in one block of the chain
    // leading to the header.
    let entry_chain = chain_back(proc, preds, entry_pred);
    let (k, &entry) = entry_chain
        .iter()
        .enumerate()
        .find(|(_, &b)| r.last_store(b, go).is_some())?;
    let between = &entry_chain[..k];
    let (go_pos, go_val) = r.last_store(entry, go)?;
    let (rest_pos, rest_val) = r.last_store(entry, rest)?;
    let (init_pos, init_val) = r.last_store(entry, var)?;
    let (step_pos, step_val) = r.last_store(entry, step_var)?;
    let step = r.const_int(step_val).filter(|&k| k != 0)?;
    let stride_store = proc.block(entry).insts[rest_pos + 1..]
        .iter()
        .copied()
        .find(|&w| matches!(proc.inst(w).kind, Inst::Store(x, _) if proc.var(x).name.starts_with("_stride")))?;
    let Inst::Store(stride, stride_val) = proc.inst(stride_store).kind else {
        return None;
    };
    if r.const_int(stride_val) != step.checked_abs() {
        return None;
    }
    let Inst::Cmp(op, a, b) = proc.inst(r.resolve(go_val)).kind else {
        return None;
    };
    let (first, last) = match (op, step > 0) {
        (CmpOp::Le, true) | (CmpOp::Ge, false) => (a, b),
        _ => return None,
    };
    let (BinaryOp::Add, dist, bias) = r.binary(rest_val)? else {
        return None;
    };
    if r.const_int(bias) != Some(i64::MIN) {
        return None;
    }
    let (BinaryOp::Sub, d1, d2) = r.binary(dist)? else {
        return None;
    };
    let (far, near) = if step > 0 { (d1, d2) } else { (d2, d1) };
    if !r.same(far, last) || !r.same(near, first) {
        return None;
    }
    // `first` is the start widened to 64 bits.
    let start = r.resolve(init_val);
    let widened = |v: Value| -> Option<Value> {
        let v = r.resolve(v);
        match proc.inst(v).kind {
            Inst::Convert(x, _) if proc.inst(x).ty == Some(ty) => Some(r.resolve(x)),
            _ if proc.inst(v).ty == Some(ty) => Some(v),
            _ => None,
        }
    };
    let start_ok = widened(first) == Some(start)
        || matches!((r.const_int(first), r.const_int(start)), (Some(x), Some(y)) if x == y);
    if !start_ok {
        return None;
    }
    let end = match widened(last) {
        Some(e) => e,
        None => {
            let k = r.const_int(last)?;
            if k < lo || k > hi {
                return None;
            }
            r.resolve(last)
        }
    };
    // The bounds are defined in the entry block, before the counter.
    let in_entry = |v: Value| r.at.get(&v).is_some_and(|&(b, _)| b == entry);
    if !in_entry(start) || !in_entry(end) {
        return None;
    }
    // Nothing after the DO variable's store in the entry reads it, and
    // the blocks between the entry and the header only store locals that
    // the bounds do not read.
    let after_init = proc.block(entry).insts[init_pos + 1..].iter();
    for &w in after_init.clone() {
        if let Inst::Load(x) = proc.inst(w).kind {
            if x == var {
                return None;
            }
        }
    }
    let mut bound_reads = reads_of(proc, start);
    bound_reads.extend(reads_of(proc, end));
    for &b in between {
        for &w in &proc.block(b).insts {
            match &proc.inst(w).kind {
                Inst::Store(x, _)
                    if proc.var(*x).storage == Storage::Local
                        && *x != var
                        && !bound_reads.contains(x) => {}
                Inst::Store(..) | Inst::StoreElem(..) | Inst::Call(..) | Inst::CharAssign(..) => {
                    return None;
                }
                _ => {}
            }
        }
    }
    // Inside the loop only the latch writes the DO variable, the step and
    // the counter.
    let body = loop_blocks(preds, h, &chain);
    for b in body {
        for &w in &proc.block(b).insts {
            if w == inc {
                continue;
            }
            let kind = &proc.inst(w).kind;
            let named = vars_named(kind);
            if let Inst::Store(x, _) = kind {
                if *x == go || *x == rest {
                    if b == latch {
                        continue;
                    }
                    return None;
                }
            }
            let writes = matches!(
                kind,
                Inst::Store(..) | Inst::Call(..) | Inst::StoreElem(..) | Inst::CharAssign(..)
            );
            if writes
                && (named.contains(&var) || named.contains(&step_var) || named.contains(&stride))
            {
                return None;
            }
        }
    }
    let _ = then_dest;
    let entry_insts = &proc.block(entry).insts;
    let mut dead = vec![*load, inc, entry_insts[go_pos], entry_insts[init_pos]];
    let _ = step_pos;
    dead.extend(
        proc.block(latch)
            .insts
            .iter()
            .copied()
            .filter(|&w| matches!(proc.inst(w).kind, Inst::Store(x, _) if x == go || x == rest)),
    );
    Some((
        CountedLoop {
            var,
            control: Control::Forward {
                entry,
                start,
                end,
                step,
            },
        },
        dead,
    ))
}

/// The blocks of the natural loop of `h` whose back edges come from the
/// end of `latch_chain`.
fn loop_blocks(preds: &[Vec<BlockId>], h: BlockId, latch_chain: &[BlockId]) -> Vec<BlockId> {
    let mut seen: HashSet<BlockId> = HashSet::from([h]);
    let mut work: Vec<BlockId> = latch_chain.to_vec();
    while let Some(b) = work.pop() {
        if seen.insert(b) {
            work.extend(preds[b.index()].iter().copied());
        }
    }
    seen.into_iter().collect()
}

/// `suppressed` and the instructions only they need: pure values nothing
/// live uses, and stores to scalar locals that only dead loads read.
fn dead_code(
    proc: &Proc,
    suppressed: Vec<Value>,
    keep: &HashSet<Value>,
    mut pinned: HashSet<VarId>,
) -> HashSet<Value> {
    let mut dead: HashSet<Value> = suppressed.into_iter().collect();
    if dead.is_empty() {
        return dead;
    }
    // Variables something other than a load or a store names, or that a
    // bound reads (and the DO statements' own), are never dropped.
    for var in &proc.vars {
        for d in &var.dims {
            d.lower.for_each_var(&mut |v| {
                pinned.insert(v);
            });
            if let Some(u) = &d.upper {
                u.for_each_var(&mut |v| {
                    pinned.insert(v);
                });
            }
        }
        if let Some(l) = &var.char_len {
            l.for_each_var(&mut |v| {
                pinned.insert(v);
            });
        }
    }
    let mut users: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut term_used: HashSet<Value> = HashSet::new();
    let mut loads: HashMap<VarId, Vec<Value>> = HashMap::new();
    let mut stores: HashMap<VarId, Vec<Value>> = HashMap::new();
    for block in &proc.blocks {
        if let Some(o) = block.term.operand() {
            term_used.insert(o);
        }
        for &v in &block.insts {
            let kind = &proc.inst(v).kind;
            kind.for_each_operand(|o| users.entry(o).or_default().push(v));
            match kind {
                Inst::Load(x) => loads.entry(*x).or_default().push(v),
                Inst::Store(x, _) => stores.entry(*x).or_default().push(v),
                k => pinned.extend(vars_named(k)),
            }
        }
    }
    let effect = |k: &Inst| {
        !matches!(
            k,
            Inst::Load(_)
                | Inst::Const(_)
                | Inst::Unary(..)
                | Inst::Binary(..)
                | Inst::Cmp(..)
                | Inst::Convert(..)
                | Inst::Select(..)
        )
    };
    loop {
        let mut changed = false;
        // Stores to dead variables.
        for (x, st) in &stores {
            let var = proc.var(*x);
            if pinned.contains(x) || var.storage != Storage::Local || !var.dims.is_empty() {
                continue;
            }
            let all_loads_dead = loads.get(x).into_iter().flatten().all(|l| dead.contains(l));
            if all_loads_dead {
                for s in st {
                    changed |= dead.insert(*s);
                }
            }
        }
        // Pure values whose users are all dead.
        for block in &proc.blocks {
            for &v in &block.insts {
                if dead.contains(&v)
                    || keep.contains(&v)
                    || term_used.contains(&v)
                    || effect(&proc.inst(v).kind)
                {
                    continue;
                }
                let all_dead = users
                    .get(&v)
                    .into_iter()
                    .flatten()
                    .all(|u| dead.contains(u));
                if all_dead {
                    changed |= dead.insert(v);
                }
            }
        }
        if !changed {
            return dead;
        }
    }
}

/// The reverse sweep's loop headed by `h` (`trips > 0`, then `trips =
/// trips - 1` and `var = var - step` before anything else) when neither
/// `var` nor `trips` is read after the loop (a DO leaves them one step
/// further and untouched), and the instructions its DO statement replaces.
fn reversed_at(
    r: &Resolver<'_>,
    preds: &[Vec<BlockId>],
    h: BlockId,
) -> Option<(CountedLoop, Vec<Value>)> {
    let proc = r.proc;
    let header = proc.block(h);
    let Terminator::Branch {
        cond,
        then_dest,
        else_dest,
    } = header.term
    else {
        return None;
    };
    if header.insts.len() > 3
        || header.insts.iter().any(|&w| {
            !matches!(
                proc.inst(w).kind,
                Inst::Load(_) | Inst::Const(_) | Inst::Cmp(..)
            )
        })
    {
        return None;
    }
    let Inst::Cmp(CmpOp::Gt, a, zero) = proc.inst(cond).kind else {
        return None;
    };
    let Inst::Load(trips) = proc.inst(a).kind else {
        return None;
    };
    if r.const_int(zero) != Some(0) || !is_local_scalar(proc, trips, Some(Type::I64)) {
        return None;
    }
    // The first two effects of the trip.
    let mut effects: Vec<Value> = Vec::new();
    let mut b = then_dest;
    let mut steps = 0;
    while effects.len() < 2 && steps < 8 {
        if preds[b.index()].len() != 1 {
            return None;
        }
        for &w in &proc.block(b).insts {
            let k = &proc.inst(w).kind;
            if !matches!(
                k,
                Inst::Load(_) | Inst::Const(_) | Inst::Binary(..) | Inst::Cmp(..)
            ) {
                effects.push(w);
                if effects.len() == 2 {
                    break;
                }
            }
        }
        let Terminator::Jump(next) = proc.block(b).term else {
            break;
        };
        b = next;
        steps += 1;
    }
    let [e1, e2] = effects.as_slice() else {
        return None;
    };
    let mut var_step = None;
    let mut counted_down = false;
    for &e in [e1, e2] {
        let Inst::Store(x, v) = proc.inst(e).kind else {
            return None;
        };
        let Inst::Binary(BinaryOp::Sub, p, q) = proc.inst(v).kind else {
            return None;
        };
        let Inst::Load(px) = proc.inst(p).kind else {
            return None;
        };
        if px != x {
            return None;
        }
        if x == trips {
            counted_down = r.const_int(q) == Some(1);
        } else if let Inst::Load(step) = proc.inst(q).kind {
            var_step = Some((x, step));
        }
    }
    let (var, step) = var_step?;
    if !counted_down
        || !is_local_scalar(proc, var, Some(Type::I32))
        || !is_local_scalar(proc, step, Some(Type::I32))
        || var == step
    {
        return None;
    }
    // Inside the loop nothing else writes the three variables or reads
    // the trip count.
    let latches: Vec<BlockId> = preds[h.index()]
        .iter()
        .copied()
        .filter(|&p| reaches(proc, then_dest, p, h))
        .collect();
    // A block of that shape no trip comes back to is not a loop header:
    // the copy of a reversed loop's test that node splitting made for an
    // entry into the middle of the loop (see `crate::split`), which runs
    // the partial trip's decrements once.
    if latches.is_empty() {
        return None;
    }
    for b in loop_blocks(preds, h, &latches) {
        for &w in &proc.block(b).insts {
            if w == *e1 || w == *e2 || header.insts.contains(&w) {
                continue;
            }
            let kind = &proc.inst(w).kind;
            let named = vars_named(kind);
            if named.contains(&trips) {
                // The load the decrement subtracts from.
                let decrements = |&e: &Value| match proc.inst(e).kind {
                    Inst::Store(_, v) => uses(proc, v, w),
                    _ => false,
                };
                if matches!(kind, Inst::Load(_)) && effects.iter().any(decrements) {
                    continue;
                }
                return None;
            }
            let writes = matches!(
                kind,
                Inst::Store(..) | Inst::Call(..) | Inst::StoreElem(..) | Inst::CharAssign(..)
            );
            if writes && (named.contains(&var) || named.contains(&step)) {
                return None;
            }
        }
    }
    if live_at(proc, else_dest, var) || live_at(proc, else_dest, trips) {
        return None;
    }
    Some((
        CountedLoop {
            var,
            control: Control::Reverse { trips, step },
        },
        vec![*e1, *e2],
    ))
}

/// The variables value `v` reads, through its operands.
fn reads_of(proc: &Proc, v: Value) -> HashSet<VarId> {
    let mut out = HashSet::new();
    let mut work = vec![v];
    let mut seen = HashSet::new();
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        let kind = &proc.inst(v).kind;
        out.extend(vars_named(kind));
        kind.for_each_operand(|o| work.push(o));
    }
    out
}

/// Instruction `user` has `v` as an operand.
fn uses(proc: &Proc, user: Value, v: Value) -> bool {
    let mut found = false;
    proc.inst(user).kind.for_each_operand(|o| found |= o == v);
    found
}

/// `x` is a scalar local (of type `ty` when given).
fn is_local_scalar(proc: &Proc, x: VarId, ty: Option<Type>) -> bool {
    let var = proc.var(x);
    var.storage == Storage::Local && var.dims.is_empty() && ty.is_none_or(|t| var.ty == t)
}

/// Block `to` is reachable from `from` without passing through `avoid`.
fn reaches(proc: &Proc, from: BlockId, to: BlockId, avoid: BlockId) -> bool {
    let mut seen: HashSet<BlockId> = HashSet::new();
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        if b == to {
            return true;
        }
        if b == avoid || !seen.insert(b) {
            continue;
        }
        work.extend(proc.block(b).term.successors());
    }
    false
}

/// Scalar `x` may be read, on some path from the start of block `b`,
/// before it is stored.
fn live_at(proc: &Proc, b: BlockId, x: VarId) -> bool {
    let mut seen: HashSet<BlockId> = HashSet::new();
    let mut work = vec![b];
    while let Some(b) = work.pop() {
        if !seen.insert(b) {
            continue;
        }
        let block = proc.block(b);
        let mut killed = false;
        for &w in &block.insts {
            let kind = &proc.inst(w).kind;
            if let Inst::Store(y, _) = kind {
                if *y == x {
                    killed = true;
                    break;
                }
            }
            if vars_named(kind).contains(&x) {
                return true;
            }
        }
        if !killed {
            work.extend(block.term.successors());
        }
    }
    false
}
