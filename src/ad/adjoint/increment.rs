//! Statements that read the old value of their left-hand side.
//!
//! The general reversal of an assignment reads the left side's adjoint,
//! resets it to 0 and increments the adjoints of everything loaded on the
//! right, the old `y(i)` included (`y_b(i) = 0; ...; y_b(i) = y_b(i) + g`).
//! Two kinds of statement do better ([`seed_use`]), when the statement loads
//! its left side's variable once, at the same location (no other reference
//! that could alias the element):
//! * **self-increments** `y = y + e`, `y(i) = y(i) - e`, ..., whose stored
//!   value reaches that load through a chain of additions (and left operands
//!   of subtractions) only. Along such a chain ∂y/∂y_old = 1, so the reverse
//!   sweep leaves `y_b(i)` as it is: same value, two memory operations and an
//!   addition fewer per statement.
//! * **other self-references** `y = y*x(i)`, `y = sin(y)`, ...: the adjoint
//!   of the old value is stored into `y_b` (`y_b = g`) instead of added to a
//!   reset one. A reverse loop over `y = y*x(i)` then waits for one multiply
//!   per trip instead of a multiply and an add (`0 + g`). The two differ
//!   only in the sign of a zero: `0 + (-0)` is `+0`. A statement that also
//!   reads another view of the left side's storage (COMMON, EQUIVALENCE)
//!   keeps the reset: that view's increment lands on the same adjoint.

use rustc_hash::FxHashMap as HashMap;

use adjit_ir::{BinaryOp, Inst, Proc, Value, VarId};

use super::normalize::Statement;
use super::store::may_change;

/// How the reverse sweep treats the adjoint of a statement's left-hand side
/// (the statement's seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeedUse {
    /// Reset to 0 before the right side's adjoints are incremented.
    Reset,
    /// A self-increment: the adjoint stays as it is, and this load of the old
    /// value (on the identity path) gets no increment.
    Kept(Value),
    /// Not reset: the adjoint of this load of the old value is stored into
    /// it, in place of an increment (see the module documentation).
    Assigned(Value),
}

/// How the reversal of `stmt` uses its seed (see the module documentation).
pub(crate) fn seed_use(proc: &Proc, stmt: &Statement) -> SeedUse {
    let Some((var, index, root)) = left_side(proc, stmt) else {
        return SeedUse::Reset;
    };
    let Some(old) = sole_old_value(proc, stmt, var, index) else {
        return SeedUse::Reset;
    };
    if identity_path(proc, stmt, root, old) {
        SeedUse::Kept(old)
    } else if reads_other_view(proc, stmt, var) {
        // Another view of the storage (COMMON, EQUIVALENCE) gets its
        // increment before the store: it must land on a reset adjoint.
        SeedUse::Reset
    } else {
        SeedUse::Assigned(old)
    }
}

/// True when the statement loads another variable that shares storage with
/// `var` (a view of the same global).
fn reads_other_view(proc: &Proc, stmt: &Statement, var: VarId) -> bool {
    stmt.pure.iter().any(|&v| {
        matches!(&proc.inst(v).kind, Inst::Load(x) | Inst::LoadElem(x, _)
            if *x != var && may_change(proc, var, *x))
    })
}

/// The stored variable of a float store, its subscripts and stored value.
fn left_side<'p>(proc: &'p Proc, stmt: &Statement) -> Option<(VarId, &'p [Value], Value)> {
    let (var, index, root): (VarId, &[Value], Value) = match &proc.inst(stmt.effect).kind {
        Inst::Store(var, value) => (*var, &[], *value),
        Inst::StoreElem(var, idx, value) => (*var, idx, *value),
        _ => return None,
    };
    proc.var(var).ty.is_float().then_some((var, index, root))
}

/// The statement's only reference to `var`, when it is a load of the
/// stored location `var(index)`.
fn sole_old_value(proc: &Proc, stmt: &Statement, var: VarId, index: &[Value]) -> Option<Value> {
    let mut loads = stmt.pure.iter().filter(
        |&&v| matches!(&proc.inst(v).kind, Inst::Load(x) | Inst::LoadElem(x, _) if *x == var),
    );
    let only_load = *loads.next()?;
    if loads.next().is_some() {
        return None;
    }
    let same_location = match &proc.inst(only_load).kind {
        Inst::Load(_) => index.is_empty(),
        Inst::LoadElem(_, idx) => {
            idx.len() == index.len() && idx.iter().zip(index).all(|(&a, &b)| same_value(proc, a, b))
        }
        _ => false,
    };
    same_location.then_some(only_load)
}

/// True when the stored value `root` reaches the load `old` through a chain
/// of single-use additions (either operand) and left operands of
/// subtractions of the stored type, and `old` itself is used once.
fn identity_path(proc: &Proc, stmt: &Statement, root: Value, old: Value) -> bool {
    let uses = use_counts(proc, stmt);
    let single = |v: Value| uses.get(&v).copied().unwrap_or(0) == 1;
    let ty = proc.inst(old).ty;
    if !single(old) {
        return false;
    }
    let mut at = root;
    loop {
        if proc.inst(at).ty != ty {
            return false;
        }
        if at == old {
            return true;
        }
        if at != root && !single(at) {
            return false;
        }
        at = match proc.inst(at).kind {
            Inst::Binary(BinaryOp::Add, a, b) => {
                if reaches(proc, stmt, a, old) {
                    a
                } else {
                    b
                }
            }
            Inst::Binary(BinaryOp::Sub, a, _) => a,
            _ => return false,
        };
    }
}

/// How often each value is an operand within the statement (its pure
/// instructions and its effect).
fn use_counts(proc: &Proc, stmt: &Statement) -> HashMap<Value, usize> {
    let mut uses = HashMap::default();
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
