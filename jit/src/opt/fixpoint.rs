//! Skipping the trips of counted loops that only repeat themselves.
//!
//! A Newton iteration written as `DO I = 1, N` with no convergence test
//! (FARFEL's ROOT) keeps running after its iterate has stopped changing,
//! or, once rounding has its say, while it cycles through a few
//! neighbouring numbers. Once the state the loop carries comes back bit for
//! bit to one it had `p` trips before, the loop is periodic: every later
//! run of `p` trips repeats the last one exactly. This pass then skips the
//! whole periods still to go at once, by the trip bookkeeping alone, and
//! lets the loop run the fewer than `p` trips that remain as written. The
//! variables end as the full loop would leave them, the DO variable
//! included (Fortran's DO variable after normal completion): no result
//! changes, only the work. A fixed point (a trip that changes nothing) is
//! the period 1.
//!
//! A loop qualifies when it is a counted DO loop of the front end's shape
//! with a step of 1 ([`super::licm`]: preheader, header `br go, body,
//! exit`, one body block) whose body is a pure function of the variables
//! it carries and of loop invariants:
//!
//! * the body holds only constants, scalar loads and stores, element loads,
//!   arithmetic, comparisons, conversions, selects and array bounds: no
//!   element store, call, I/O, stack operation, allocation or character
//!   operation, so that nothing outside the loop's scalars changes and the
//!   arrays it reads stay as they are;
//! * no variable the body stores shares its storage with another variable
//!   (a global with several views), so a store changes no other load;
//! * the DO variable and the trip bookkeeping (`_go`, `_rest`) feed only
//!   their own updates, through operations that cannot fail: the body does
//!   not use the index;
//! * every carried variable is an integer, a float or a logical.
//!
//! The carried state is every variable the body loads before storing it
//! (other than the bookkeeping); the values it stores without loading
//! first are functions of that state and of the invariants. Cycles are
//! found as by Brent's algorithm: each carried variable gets a shadow
//! (`_fp_NAME`) holding a saved state (at first the state at the loop's
//! start), `_fp_distance` counts the trips since it was saved and, when
//! the count reaches `_fp_window`, the state of that trip is saved instead
//! and the window doubles; a cycle of period `p` that starts after `m`
//! trips is found within about `2 (m + p)` trips. At the end of each trip
//! the new state is compared with the saved one: integers and logicals by
//! equality, floats by equality and equal sign bits (`+0` and `-0` differ;
//! `NaN` never compares equal, so a state holding a NaN never skips: the
//! loop runs its trips as written). When all are equal `d` trips after the
//! save, the trips from there on repeat with period `d`, computations and
//! stored temporaries included, so the skip block advances the DO variable
//! and the bookkeeping by the largest multiple of `d` trips still to go
//! (none beyond 2^63 trips) and returns to the header. A trip that did
//! not fail cannot fail when repeated from the same state, so no error is
//! skipped either.

use super::licm::{self, Shape};
use crate::ir::{
    BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Rounding, Terminator, Type, UnaryOp, Value, Var,
    VarId,
};
use std::collections::HashSet;

/// Gives every qualifying loop of `proc` the skip of its repeating trips
/// (see the module documentation); returns how many loops were given one.
pub fn skip_repeated_trips(proc: &mut Proc) -> usize {
    let mut count = 0;
    let mut h = 0;
    while h < proc.blocks.len() {
        let preds = licm::predecessors(proc);
        if let Some(shape) = licm::loop_shape(proc, &preds, h) {
            if let Some(plan) = plan(proc, &shape) {
                apply(proc, &shape, &plan);
                count += 1;
            }
        }
        h += 1;
    }
    count
}

/// What [`apply`] needs of a qualifying loop.
struct Plan {
    /// The DO variable.
    var: VarId,
    /// The trip bookkeeping: whether another trip runs.
    go: VarId,
    /// The trip bookkeeping: the distance still to go (biased by
    /// `i64::MIN`).
    rest: VarId,
    /// The carried state: each carried variable and the value it has at
    /// the end of a trip.
    state: Vec<(VarId, Value)>,
}

/// True for the instructions a body may hold (see the module docs).
fn allowed(inst: &Inst) -> bool {
    licm::arithmetic_or_access(inst) || matches!(inst, Inst::Allocated(..))
}

/// True for the instructions that may carry the bookkeeping's values:
/// integer arithmetic that wraps instead of failing.
fn bookkeeping(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, ..)
            | Inst::Cmp(..)
            | Inst::Convert(..)
            | Inst::Store(..)
    )
}

/// Checks a loop against the conditions of the module documentation.
fn plan(proc: &Proc, shape: &Shape) -> Option<Plan> {
    let body = &proc.blocks[shape.body].insts;
    if !body.iter().all(|&v| allowed(&proc.inst(v).kind)) {
        return None;
    }
    let header = &proc.blocks[shape.header];
    let go = match header.insts[..] {
        [c] if header.term.operand() == Some(c) => licm::load_of(proc, c)?,
        _ => return None,
    };
    let ind = licm::forward(proc, shape, go)?;
    let stores = licm::last_stores(proc, shape.body);
    let &(_, go_next) = stores.get(&go)?;
    let Inst::Cmp(_, r, _) = proc.inst(go_next).kind else {
        return None;
    };
    let rest = licm::load_of(proc, r)?;
    let counters = [ind.var, go, rest];
    // Everything computed from the bookkeeping stays in the bookkeeping.
    let mut derived: HashSet<Value> = HashSet::new();
    for &v in body {
        let kind = &proc.inst(v).kind;
        let mut uses = false;
        kind.for_each_operand(|x| uses |= derived.contains(&x));
        let counter_load = matches!(kind, Inst::Load(var) if counters.contains(var));
        if !(uses || counter_load) {
            // A store to the bookkeeping of anything else.
            if matches!(kind, Inst::Store(var, _) if counters.contains(var)) {
                return None;
            }
            continue;
        }
        let to_counter = matches!(kind, Inst::Store(var, _) if counters.contains(var));
        let store_elsewhere = matches!(kind, Inst::Store(..)) && !to_counter;
        if store_elsewhere || !(counter_load || bookkeeping(kind)) {
            return None;
        }
        derived.insert(v);
    }
    // The carried state: loaded before stored.
    let mut loaded_first: HashSet<VarId> = HashSet::new();
    let mut stored: HashSet<VarId> = HashSet::new();
    for &v in body {
        match proc.inst(v).kind {
            Inst::Load(var) if !stored.contains(&var) => {
                loaded_first.insert(var);
            }
            Inst::Store(var, _) => {
                if super::aliases(proc, var).len() != 1 {
                    return None;
                }
                stored.insert(var);
            }
            _ => {}
        }
    }
    let mut state = Vec::new();
    let mut carried: Vec<VarId> = stored
        .iter()
        .copied()
        .filter(|v| !counters.contains(v) && loaded_first.contains(v))
        .collect();
    carried.sort();
    for var in carried {
        let ty = proc.var(var).ty;
        if !(ty.is_int() || ty.is_float() || ty == Type::Bool) {
            return None;
        }
        state.push((var, stores[&var].1));
    }
    Some(Plan {
        var: ind.var,
        go,
        rest,
        state,
    })
}

/// Appends the cycle test to the body and the skip after it.
fn apply(proc: &mut Proc, shape: &Shape, plan: &Plan) {
    let body = BlockId(shape.body as u32);
    let pre = BlockId(shape.pre as u32);
    let header = BlockId(shape.header as u32);
    let span = proc.blocks[shape.body].term_span;
    let push = |proc: &mut Proc, block: BlockId, inst: Inst, ty: Option<Type>| {
        proc.push_inst(block, inst, ty, span)
    };
    let (bool_ty, int) = (Some(Type::Bool), Some(Type::I64));
    // Trips since the saved state, and the count at which it is replaced.
    let distance = proc.add_var(Var::scalar("_fp_distance", Type::I64));
    let window = proc.add_var(Var::scalar("_fp_window", Type::I64));
    let zero = push(proc, pre, Inst::Const(Const::Int(0)), int);
    let one = push(proc, pre, Inst::Const(Const::Int(1)), int);
    push(proc, pre, Inst::Store(distance, zero), None);
    push(proc, pre, Inst::Store(window, one), None);
    let one = push(proc, body, Inst::Const(Const::Int(1)), int);
    let d = push(proc, body, Inst::Load(distance), int);
    let d = push(proc, body, Inst::Binary(BinaryOp::Add, d, one), int);
    let w = push(proc, body, Inst::Load(window), int);
    let mut same = push(proc, body, Inst::Const(Const::Bool(true)), bool_ty);
    let mut saves = Vec::new();
    for &(var, new) in &plan.state {
        let ty = proc.var(var).ty;
        let name = format!("_fp_{}", proc.var(var).name);
        let saved = proc.add_var(Var::scalar(name, ty));
        // The state at the loop's start is the first one saved.
        let x = push(proc, pre, Inst::Load(var), Some(ty));
        push(proc, pre, Inst::Store(saved, x), None);
        let then = push(proc, body, Inst::Load(saved), Some(ty));
        let mut eq = push(proc, body, Inst::Cmp(CmpOp::Eq, then, new), bool_ty);
        if ty.is_float() {
            // Equal floats differ in their bits only as +0 and -0.
            let one = push(proc, body, Inst::Const(Const::Float(1.0)), Some(ty));
            let sign_then = push(
                proc,
                body,
                Inst::Binary(BinaryOp::Sign, one, then),
                Some(ty),
            );
            let sign_new = push(proc, body, Inst::Binary(BinaryOp::Sign, one, new), Some(ty));
            let signs = push(
                proc,
                body,
                Inst::Cmp(CmpOp::Eq, sign_then, sign_new),
                bool_ty,
            );
            eq = push(proc, body, Inst::Binary(BinaryOp::And, eq, signs), bool_ty);
        }
        same = push(proc, body, Inst::Binary(BinaryOp::And, same, eq), bool_ty);
        saves.push((saved, then, new, ty));
    }
    // Brent's cycle finding: when the distance reaches the window, this
    // state becomes the saved one and the window doubles.
    let full = push(proc, body, Inst::Cmp(CmpOp::Eq, d, w), bool_ty);
    let differ = push(proc, body, Inst::Unary(UnaryOp::Not, same), bool_ty);
    let renew = push(
        proc,
        body,
        Inst::Binary(BinaryOp::And, full, differ),
        bool_ty,
    );
    for (saved, then, new, ty) in saves {
        let x = push(proc, body, Inst::Select(renew, new, then), Some(ty));
        push(proc, body, Inst::Store(saved, x), None);
    }
    let zero = push(proc, body, Inst::Const(Const::Int(0)), int);
    let two = push(proc, body, Inst::Const(Const::Int(2)), int);
    let d_next = push(proc, body, Inst::Select(renew, zero, d), int);
    push(proc, body, Inst::Store(distance, d_next), None);
    let wider = push(proc, body, Inst::Binary(BinaryOp::Mul, w, two), int);
    let w_next = push(proc, body, Inst::Select(renew, wider, w), int);
    push(proc, body, Inst::Store(window, w_next), None);
    // The skip: the whole periods still to go, done by the bookkeeping
    // alone. After this trip `rest` holds `MIN + r - 1` for the `r` trips
    // still to go, so `r = rest - (MIN - 1)` (wrapping: `MIN - 1` is
    // `MAX`); a last trip leaves `MAX`.
    let skip = proc.add_block();
    let period = push(proc, skip, Inst::Load(distance), int);
    let rest = push(proc, skip, Inst::Load(plan.rest), int);
    let max = push(proc, skip, Inst::Const(Const::Int(i64::MAX)), int);
    let trips = push(proc, skip, Inst::Binary(BinaryOp::Sub, rest, max), int);
    let zero = push(proc, skip, Inst::Const(Const::Int(0)), int);
    let part = push(proc, skip, Inst::Binary(BinaryOp::Mod, trips, period), int);
    let whole = push(proc, skip, Inst::Binary(BinaryOp::Sub, trips, part), int);
    // Beyond 2^63 trips to go: no skip (the loop runs on as written).
    let counted = push(proc, skip, Inst::Cmp(CmpOp::Ge, trips, zero), bool_ty);
    let skipped = push(proc, skip, Inst::Select(counted, whole, zero), int);
    let rest_after = push(proc, skip, Inst::Binary(BinaryOp::Sub, rest, skipped), int);
    push(proc, skip, Inst::Store(plan.rest, rest_after), None);
    let left = push(proc, skip, Inst::Binary(BinaryOp::Sub, trips, skipped), int);
    let go = push(proc, skip, Inst::Cmp(CmpOp::Ne, left, zero), bool_ty);
    push(proc, skip, Inst::Store(plan.go, go), None);
    let ty = proc.var(plan.var).ty;
    let steps = if ty == Type::I64 {
        skipped
    } else {
        push(
            proc,
            skip,
            Inst::Convert(skipped, Rounding::Trunc),
            Some(ty),
        )
    };
    let i = push(proc, skip, Inst::Load(plan.var), Some(ty));
    let i_after = push(proc, skip, Inst::Binary(BinaryOp::Add, i, steps), Some(ty));
    push(proc, skip, Inst::Store(plan.var, i_after), None);
    proc.blocks[skip.index()].term = Terminator::Jump(header);
    proc.blocks[skip.index()].term_span = span;
    proc.blocks[shape.body].term = Terminator::Branch {
        cond: same,
        then_dest: skip,
        else_dest: header,
    };
}
