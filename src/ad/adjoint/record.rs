//! What the forward sweep records: THE decision point of the adjoint
//! transform.
//!
//! For every statement the `RecordPlan` says whether the value its effect
//! overwrites is pushed before the overwrite (and popped back by the reverse
//! sweep before the statement's adjoint), whether the subscripts of an
//! array-element store are pushed too, and which locals the forward sweep
//! hands over to the reverse sweep at its end. Two policies produce a plan:
//!
//! * [`RecordPolicy::Conservative`]: copy-on-def (seed 001 §3.2): every
//!   overwritten number or truth value is recorded, every local is handed
//!   over.
//! * [`RecordPolicy::Tbr`]: to-be-recorded analysis (seed 003 §4): a value is
//!   recorded only when it belongs to `Req`, the variables whose current value
//!   the reverse sweep of earlier statements needs (in nonlinear partials or
//!   subscripts). `Req` is a forward data flow over the CFG solved to a
//!   fixpoint: `Req_out(S) = (Req_in(S) ∪ Use(S)) \ Kill(S)`, union at joins,
//!   and `S` records its target when the target is in `Req_in(S) ∪ Use(S)`.
//!
//! The rest of the transform consults only `RecordPlan::must_record`,
//! `RecordPlan::must_record_subscripts` and `RecordPlan::handover_locals`.
//!
//! [`RecordPolicy::Conservative`]: crate::ad::adjoint::RecordPolicy::Conservative
//! [`RecordPolicy::Tbr`]: crate::ad::adjoint::RecordPolicy::Tbr

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::OnceCell;

use adjit_ir::{BinaryOp, CallArg, Inst, Proc, Storage, Terminator, Type, Value, VarId};

use super::normalize::{Normalized, Statement};
use super::reach::{predecessors, reachable_blocks};

/// The recording decisions for one procedure.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecordPlan {
    /// Effects whose overwritten value is pushed.
    record: HashSet<Value>,
    /// Array-element stores whose subscripts are pushed (the subscripts read
    /// the array being stored into, so they cannot be recomputed afterwards).
    record_subscripts: HashSet<Value>,
    /// Integer increments `i = i ± step` the reverse sweep undoes by
    /// computing `i ∓ step` instead of popping a recorded value.
    inverted: HashSet<Value>,
    /// Locals (non-character) saved at the end of the forward sweep and
    /// restored at the start of the reverse sweep.
    handover: Vec<VarId>,
}

impl RecordPlan {
    /// True when the forward sweep pushes the value `effect` overwrites.
    pub fn must_record(&self, effect: Value) -> bool {
        self.record.contains(&effect)
    }
    /// True when the forward sweep pushes the subscripts of the array-element
    /// store `effect`.
    pub fn must_record_subscripts(&self, effect: Value) -> bool {
        self.record_subscripts.contains(&effect)
    }
    /// True when the reverse sweep restores the integer `effect` overwrites
    /// by undoing its increment (see [`inversion`]).
    pub fn must_invert(&self, effect: Value) -> bool {
        self.inverted.contains(&effect)
    }
    /// Locals the forward sweep pushes at its end for the reverse sweep.
    pub fn handover_locals(&self) -> &[VarId] {
        &self.handover
    }
}

/// What the plan builders need to know about the transform's other choices.
pub(crate) struct PlanContext<'a> {
    /// The normalised procedure.
    pub norm: &'a Normalized,
    /// True for variables that carry an adjoint.
    pub has_adjoint: &'a dyn Fn(VarId) -> bool,
    /// True for instructions whose local partials depend on values
    /// (nonlinear operations).
    pub nonlinear: &'a dyn Fn(Value) -> bool,
    /// Record every overwrite of a parameter or global (a callee's reverse
    /// sweep must give its caller back the state before the call).
    pub restore_nonlocals: bool,
    /// Store library-call results for the reverse sweep rather than
    /// recomputing them ([`super::store`]).
    pub store_library_results: bool,
    /// [`recomputed`] of each statement, by its effect, once asked for: the
    /// plan and both sweeps ask for it several times per statement.
    pub recomputed: Vec<OnceCell<Vec<Value>>>,
}

impl PlanContext<'_> {
    /// An empty [`PlanContext::recomputed`] for the values of `proc`.
    pub fn recomputed_memo(proc: &Proc) -> Vec<OnceCell<Vec<Value>>> {
        (0..proc.insts.len()).map(|_| OnceCell::new()).collect()
    }
}

/// The variable an effect overwrites and whether it overwrites it entirely.
fn target(inst: &Inst) -> Option<(VarId, bool)> {
    match inst {
        Inst::Store(var, _) => Some((*var, true)),
        Inst::StoreElem(var, ..) => Some((*var, false)),
        _ => None,
    }
}

/// True for element types the stacks can hold.
fn recordable(ty: Type) -> bool {
    ty != Type::Char
}

/// True when the effect of `stmt` is differentiated (it stores into a
/// variable with an adjoint).
pub(crate) fn is_active_statement(ctx: &PlanContext<'_>, stmt: &Statement) -> bool {
    let proc = &ctx.norm.proc;
    match target(&proc.inst(stmt.effect).kind) {
        Some((var, _)) => proc.var(var).ty.is_float() && (ctx.has_adjoint)(var),
        None => false,
    }
}

/// The pure instructions of `stmt` the reverse sweep recomputes, in
/// execution order: the operands (and results) of nonlinear operations,
/// subscripts of array elements with adjoints, subscripts of the stored
/// element and of array-element call arguments, and everything those read.
pub(crate) fn recomputed<'c>(ctx: &'c PlanContext<'_>, stmt: &Statement) -> &'c [Value] {
    ctx.recomputed[stmt.effect.index()].get_or_init(|| find_recomputed(ctx, stmt))
}

/// [`recomputed`], computed.
fn find_recomputed(ctx: &PlanContext<'_>, stmt: &Statement) -> Vec<Value> {
    let proc = &ctx.norm.proc;
    let in_stmt: HashSet<Value> = stmt.pure.iter().copied().collect();
    let mut needed: HashSet<Value> = HashSet::default();
    let mut roots: Vec<Value> = Vec::new();
    let active = is_active_statement(ctx, stmt);
    match &proc.inst(stmt.effect).kind {
        Inst::StoreElem(_, idx, _) => roots.extend(idx.iter().copied()),
        Inst::Call(_, args) => {
            for arg in args {
                match arg {
                    CallArg::Elem(_, idx) => roots.extend(idx.iter().copied()),
                    CallArg::Slice(_, idx, n) => {
                        roots.extend(idx.iter().copied());
                        roots.push(*n);
                    }
                    CallArg::Var(_) | CallArg::Value(_) => {}
                }
            }
        }
        _ => {}
    }
    if active {
        for &v in &stmt.pure {
            match &proc.inst(v).kind {
                Inst::LoadElem(var, idx) if (ctx.has_adjoint)(*var) => {
                    roots.extend(idx.iter().copied())
                }
                _ if (ctx.nonlinear)(v) => {
                    roots.push(v);
                    proc.inst(v).kind.for_each_operand(|u| roots.push(u));
                }
                _ => {}
            }
        }
    }
    while let Some(v) = roots.pop() {
        if in_stmt.contains(&v) && needed.insert(v) {
            proc.inst(v).kind.for_each_operand(|u| roots.push(u));
        }
    }
    stmt.pure
        .iter()
        .copied()
        .filter(|v| needed.contains(v))
        .collect()
}

/// Variables the reverse sweep of `stmt` reads (its `Use` set).
fn used_vars(ctx: &PlanContext<'_>, stmt: &Statement) -> HashSet<VarId> {
    let proc = &ctx.norm.proc;
    let mut used = HashSet::default();
    for &v in recomputed(ctx, stmt) {
        match &proc.inst(v).kind {
            Inst::Load(var) | Inst::LoadElem(var, _) => {
                used.insert(*var);
            }
            _ => {}
        }
    }
    if let Inst::Call(_, args) = &proc.inst(stmt.effect).kind {
        // The callee's reverse sweep reads its arguments and the globals in
        // their state after the call.
        for arg in args {
            if let CallArg::Var(var) | CallArg::Elem(var, _) | CallArg::Slice(var, _, _) = arg {
                used.insert(*var);
            }
        }
        for (i, var) in proc.vars.iter().enumerate() {
            if matches!(var.storage, Storage::Global(..)) {
                used.insert(VarId(i as u32));
            }
        }
    }
    used
}

/// Subscripts of a store that read the stored array cannot be recomputed
/// after the store: they are recorded.
fn subscripts_read_target(proc: &Proc, stmt: &Statement) -> bool {
    let Inst::StoreElem(var, idx, _) = &proc.inst(stmt.effect).kind else {
        return false;
    };
    let in_stmt: HashSet<Value> = stmt.pure.iter().copied().collect();
    let mut seen: HashSet<Value> = HashSet::default();
    let mut work: Vec<Value> = idx.clone();
    while let Some(v) = work.pop() {
        if !in_stmt.contains(&v) || !seen.insert(v) {
            continue;
        }
        if matches!(&proc.inst(v).kind, Inst::LoadElem(w, _) if w == var) {
            return true;
        }
        proc.inst(v).kind.for_each_operand(|u| work.push(u));
    }
    false
}

/// An increment `i = i + step` or `i = i - step` of an integer local `i`
/// whose `step` reads neither `i` nor memory other than integer scalars:
/// the reverse sweep restores `i` by computing `i - step` (`i + step`)
/// with the wrapping arithmetic of the forward sweep, exact whatever the
/// values, from the step's variables as they were at the statement.
#[derive(Clone, Debug)]
pub(crate) struct Inversion {
    /// The incremented local.
    pub var: VarId,
    /// True for `i = i - step`.
    pub subtract: bool,
    /// The step value (an instruction of the statement).
    pub step: Value,
    /// The statement's instructions computing `step`, in execution order.
    pub step_code: Vec<Value>,
    /// The variables `step_code` reads.
    pub step_vars: HashSet<VarId>,
}

/// The inversion of `stmt` when it is an invertible integer increment (a
/// DO loop's index update: `i = i + _step`).
pub(crate) fn inversion(proc: &Proc, stmt: &Statement) -> Option<Inversion> {
    let Inst::Store(var, value) = &proc.inst(stmt.effect).kind else {
        return None;
    };
    let var_def = proc.var(*var);
    let int = matches!(var_def.ty, Type::I32 | Type::I64);
    if !int || var_def.storage != Storage::Local || var_def.is_array() {
        return None;
    }
    let in_stmt: HashSet<Value> = stmt.pure.iter().copied().collect();
    if !in_stmt.contains(value) || proc.value_type(*value) != Some(var_def.ty) {
        return None;
    }
    let Inst::Binary(op, a, b) = &proc.inst(*value).kind else {
        return None;
    };
    let loads_var = |x: Value| in_stmt.contains(&x) && proc.inst(x).kind == Inst::Load(*var);
    let (subtract, step) = match op {
        BinaryOp::Add if loads_var(*a) => (false, *b),
        BinaryOp::Add if loads_var(*b) => (false, *a),
        BinaryOp::Sub if loads_var(*a) => (true, *b),
        _ => return None,
    };
    // The step's code: constants, integer conversions and arithmetic
    // without division, loads of integer scalars other than `var`.
    let mut needed: HashSet<Value> = HashSet::default();
    let mut step_vars = HashSet::default();
    let mut work = vec![step];
    while let Some(x) = work.pop() {
        if !in_stmt.contains(&x) {
            return None;
        }
        if !needed.insert(x) {
            continue;
        }
        if !proc
            .value_type(x)
            .is_some_and(|t| matches!(t, Type::I32 | Type::I64))
        {
            return None;
        }
        match &proc.inst(x).kind {
            Inst::Const(_) => {}
            Inst::Load(w) if w != var && !proc.var(*w).is_array() => {
                step_vars.insert(*w);
            }
            Inst::Convert(u, _) => work.push(*u),
            Inst::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, u, w) => {
                work.push(*u);
                work.push(*w);
            }
            _ => return None,
        }
    }
    Some(Inversion {
        var: *var,
        subtract,
        step,
        step_code: stmt
            .pure
            .iter()
            .copied()
            .filter(|x| needed.contains(x))
            .collect(),
        step_vars,
    })
}

/// The copy-on-def plan: record every overwrite, hand over every local.
pub(crate) fn conservative_plan(ctx: &PlanContext<'_>) -> RecordPlan {
    let proc = &ctx.norm.proc;
    let mut plan = RecordPlan::default();
    for shape in &ctx.norm.shapes {
        for stmt in &shape.statements {
            if let Some((var, _)) = target(&proc.inst(stmt.effect).kind) {
                if recordable(proc.var(var).ty) {
                    plan.record.insert(stmt.effect);
                    if subscripts_read_target(proc, stmt) {
                        plan.record_subscripts.insert(stmt.effect);
                    }
                }
            }
        }
    }
    plan.handover = proc
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| v.storage == Storage::Local && recordable(v.ty))
        .map(|(i, _)| VarId(i as u32))
        .collect();
    plan
}

/// True when a store to `var` overwrites a value in `req`: `var`'s own, or
/// that of another view of the same global (COMMON or EQUIVALENCE
/// partners share storage, so a store through one name overwrites the
/// other).
fn required(proc: &Proc, req: &HashSet<VarId>, var: VarId) -> bool {
    if req.contains(&var) {
        return true;
    }
    let Storage::Global(g, _) = proc.var(var).storage else {
        return false;
    };
    req.iter()
        .any(|v| matches!(proc.var(*v).storage, Storage::Global(h, _) if h == g))
}

/// The TBR plan (see the module documentation).
///
/// An invertible integer increment (see [`inversion`]) whose target the
/// reverse sweep needs is undone instead of recorded: its target stays
/// required after it (the reverse sweep reads the incremented value) and
/// so do the step's variables. The transfer function stays monotone: a
/// larger `Req` only turns a kill into a keep.
pub(crate) fn tbr_plan(ctx: &PlanContext<'_>) -> RecordPlan {
    let proc = &ctx.norm.proc;
    let reachable = reachable_blocks(proc);
    let uses: HashMap<Value, HashSet<VarId>> = ctx
        .norm
        .shapes
        .iter()
        .flat_map(|s| s.statements.iter())
        .map(|stmt| (stmt.effect, used_vars(ctx, stmt)))
        .collect();
    let inversions: HashMap<Value, Inversion> = ctx
        .norm
        .shapes
        .iter()
        .flat_map(|s| s.statements.iter())
        .filter_map(|stmt| Some((stmt.effect, inversion(proc, stmt)?)))
        .collect();
    // One statement's effect on `req`; with `plan`, also its decisions.
    let transfer = |stmt: &Statement, req: &mut HashSet<VarId>, plan: Option<&mut RecordPlan>| {
        req.extend(uses[&stmt.effect].iter().copied());
        let Some((var, whole)) = target(&proc.inst(stmt.effect).kind) else {
            return;
        };
        if let Some(inv) = inversions.get(&stmt.effect).filter(|_| req.contains(&var)) {
            req.extend(inv.step_vars.iter().copied());
            if let Some(plan) = plan {
                plan.inverted.insert(stmt.effect);
            }
            return;
        }
        if let Some(plan) = plan {
            let nonlocal = proc.var(var).storage != Storage::Local;
            if recordable(proc.var(var).ty)
                && (required(proc, req, var) || (ctx.restore_nonlocals && nonlocal))
            {
                plan.record.insert(stmt.effect);
            }
            let restored_or_active =
                plan.record.contains(&stmt.effect) || is_active_statement(ctx, stmt);
            if restored_or_active && subscripts_read_target(proc, stmt) {
                plan.record_subscripts.insert(stmt.effect);
            }
        }
        if whole {
            req.remove(&var);
        }
    };
    let nblocks = proc.blocks.len();
    let mut req_in: Vec<HashSet<VarId>> = vec![HashSet::default(); nblocks];
    let mut req_out: Vec<Option<HashSet<VarId>>> = vec![None; nblocks];
    let preds = predecessors(proc);
    // Iterate to the fixpoint (sets only grow).
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..nblocks {
            if !reachable[b] {
                continue;
            }
            let mut req: HashSet<VarId> = HashSet::default();
            for p in &preds[b] {
                if let Some(out) = &req_out[p.index()] {
                    req.extend(out.iter().copied());
                }
            }
            req_in[b] = req.clone();
            for stmt in &ctx.norm.shapes[b].statements {
                transfer(stmt, &mut req, None);
            }
            if req_out[b].as_ref() != Some(&req) {
                req_out[b] = Some(req);
                changed = true;
            }
        }
    }
    let mut plan = RecordPlan::default();
    for b in 0..nblocks {
        if !reachable[b] {
            continue;
        }
        let mut req = req_in[b].clone();
        for stmt in &ctx.norm.shapes[b].statements {
            transfer(stmt, &mut req, Some(&mut plan));
        }
    }
    let mut handover: HashSet<VarId> = HashSet::default();
    for b in 0..nblocks {
        if reachable[b] && matches!(proc.blocks[b].term, Terminator::Return) {
            if let Some(out) = &req_out[b] {
                handover.extend(out.iter().copied().filter(|&v| {
                    proc.var(v).storage == Storage::Local && recordable(proc.var(v).ty)
                }));
            }
        }
    }
    let mut handover: Vec<VarId> = handover.into_iter().collect();
    handover.sort();
    plan.handover = handover;
    plan
}
