//! Self-increments: statements `y = y + e`, `y(i) = y(i) - e`, ... whose
//! stored value reaches the old value of the same location through a chain
//! of additions (and left operands of subtractions) only.
//!
//! The general reversal of an assignment reads the left side's adjoint,
//! resets it to 0 and increments the adjoints of everything loaded on the
//! right, the old `y(i)` included (`y_b(i) = 0; ...; y_b(i) = y_b(i) + g`).
//! Along such a chain ∂y/∂y_old = 1, so when the statement loads `y`
//! nowhere else (no other reference that could alias the element), the
//! reverse sweep leaves `y_b(i)` as it is: same value, two memory operations
//! and an addition fewer per statement.

use std::collections::HashMap;

use adjit_ir::{BinaryOp, Inst, Proc, Value, VarId};

use super::normalize::Statement;

/// The load of the old left-hand-side value on the identity path of a
/// self-increment statement, or `None` when `stmt` is not one (see the module
/// documentation). The reverse sweep skips that load's adjoint increment and
/// keeps the left side's adjoint instead of resetting it.
pub(crate) fn self_increment(proc: &Proc, stmt: &Statement) -> Option<Value> {
    let (var, index, root): (VarId, &[Value], Value) = match &proc.inst(stmt.effect).kind {
        Inst::Store(var, value) => (*var, &[], *value),
        Inst::StoreElem(var, idx, value) => (*var, idx, *value),
        _ => return None,
    };
    let ty = proc.var(var).ty;
    if !ty.is_float() {
        return None;
    }
    let uses = use_counts(proc, stmt);
    let single = |v: Value| uses.get(&v).copied().unwrap_or(0) == 1;
    // The only reference to `var` in the statement must be the one found.
    let mut loads = stmt.pure.iter().filter(
        |&&v| matches!(&proc.inst(v).kind, Inst::Load(x) | Inst::LoadElem(x, _) if *x == var),
    );
    let only_load = *loads.next()?;
    if loads.next().is_some() || !single(only_load) {
        return None;
    }
    let mut at = root;
    loop {
        if proc.inst(at).ty != Some(ty) {
            return None;
        }
        if at == only_load {
            return match &proc.inst(at).kind {
                Inst::Load(_) if index.is_empty() => Some(at),
                Inst::LoadElem(_, idx)
                    if idx.len() == index.len()
                        && idx.iter().zip(index).all(|(&a, &b)| same_value(proc, a, b)) =>
                {
                    Some(at)
                }
                _ => None,
            };
        }
        if at != root && !single(at) {
            return None;
        }
        at = match proc.inst(at).kind {
            Inst::Binary(BinaryOp::Add, a, b) => {
                if reaches(proc, stmt, a, only_load) {
                    a
                } else {
                    b
                }
            }
            Inst::Binary(BinaryOp::Sub, a, _) => a,
            _ => return None,
        };
    }
}

/// How often each value is an operand within the statement (its pure
/// instructions and its effect).
fn use_counts(proc: &Proc, stmt: &Statement) -> HashMap<Value, usize> {
    let mut uses = HashMap::new();
    for &v in stmt.pure.iter().chain([&stmt.effect]) {
        proc.inst(v)
            .kind
            .for_each_operand(|u| *uses.entry(u).or_insert(0) += 1);
    }
    uses
}

/// True when `target` is `v` or among its operands within the statement,
/// transitively.
fn reaches(proc: &Proc, stmt: &Statement, v: Value, target: Value) -> bool {
    let mut work = vec![v];
    while let Some(u) = work.pop() {
        if u == target {
            return true;
        }
        if stmt.pure.contains(&u) {
            proc.inst(u).kind.for_each_operand(|w| work.push(w));
        }
    }
    false
}

/// True when the pure subscript expressions `a` and `b` of one statement
/// have equal values: the same value, equal constants, loads of the same
/// scalar (no store between them within a statement) or the same integer
/// operation of equal operands.
fn same_value(proc: &Proc, a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (proc.inst(a), proc.inst(b));
    if x.ty != y.ty {
        return false;
    }
    match (&x.kind, &y.kind) {
        (Inst::Const(p), Inst::Const(q)) => p == q,
        (Inst::Load(p), Inst::Load(q)) => p == q,
        (Inst::Binary(op, a1, a2), Inst::Binary(oq, b1, b2)) => {
            op == oq
                && x.ty.is_some_and(|t| !t.is_float())
                && same_value(proc, *a1, *b1)
                && same_value(proc, *a2, *b2)
        }
        _ => false,
    }
}
