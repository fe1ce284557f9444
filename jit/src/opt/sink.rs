//! Loads sunk below the math library calls that do not need them.
//!
//! A float intrinsic such as `exp` or `sin` is a native call, and the
//! System V calling convention preserves no floating-point register across
//! a call: every float value live across it is spilled before the call and
//! reloaded after it. Code lists evaluate a statement's operands in source
//! order, so `F(i-1) = F(i-1) + x(i) + c*exp(...)` loads `F(i-1)` (and its
//! tangent `F_d(i-1)`) before the call, and code generation keeps loads
//! in the order the IR gives them (Cranelift never moves a load past a
//! call). Cranelift does place pure arithmetic at its first use, so only
//! the loads keep values alive across the call.
//!
//! For each such call in a block, this pass takes the stretch of the block
//! before it that holds only loads and pure operations (no store, no call,
//! no stack or I/O step) and moves every instruction of the stretch that
//! the call does not depend on to just after the call, in their order.
//! The loaded values then live from after the call; the values the call
//! needs are unchanged.
//!
//! No result and no error changes: the moved loads pass no store (so read
//! the same memory), pure operations give the same bits wherever they run,
//! and the instructions that can fail (a checked element reference, an
//! integer division) keep their relative order: when moving would reorder
//! two of them, the stretch is left as it is.

use super::licm::arithmetic_or_access;
use crate::codegen::inline_inst;
use crate::ir::{BinaryOp, Inst, Proc, Value};
use rustc_hash::FxHashSet;

/// Whether `inst` is lowered as a call to the C math library: a float
/// operation that code generation does not lower inline
/// ([`crate::codegen::inline_inst`], one list for both).
fn is_math_call(proc: &Proc, inst: &Inst) -> bool {
    let float = |v: &Value| {
        proc.insts
            .get(v.index())
            .and_then(|d| d.ty)
            .is_some_and(|t| t.is_float())
    };
    match inst {
        Inst::Unary(_, a) | Inst::Binary(_, a, _) => float(a) && !inline_inst(inst),
        _ => false,
    }
}

/// Whether `inst` reads or computes without an effect: it may be moved
/// past other such instructions (and past a math call) without changing
/// what it reads or what others read. These are the instructions every
/// loop pass lets a body hold ([`arithmetic_or_access`]) but stores.
fn is_movable(inst: &Inst) -> bool {
    arithmetic_or_access(inst) && !matches!(inst, Inst::Store(..))
}

/// Whether the movable instruction `v` can raise a runtime error: an
/// element reference whose check no loop version has already passed, or
/// an integer operation that can divide by zero.
fn can_fail(proc: &Proc, v: Value, unchecked: &FxHashSet<Value>) -> bool {
    let data = &proc.insts[v.index()];
    match &data.kind {
        Inst::LoadElem(..) => !unchecked.contains(&v),
        Inst::Binary(op, ..) => {
            !data.ty.is_some_and(|t| t.is_float())
                && !matches!(
                    op,
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Min | BinaryOp::Max
                )
        }
        _ => false,
    }
}

/// Sinks, in every block of `proc`, the loads (and the pure operations
/// on them) that precede a math library call without feeding it to just
/// after the call (see the module documentation). `unchecked` holds the
/// element references that cannot fail (checked once before their loop).
/// Returns the number of instructions moved.
pub fn sink_loads_below_calls(proc: &mut Proc, unchecked: &FxHashSet<Value>) -> usize {
    let mut moved = 0;
    for b in 0..proc.blocks.len() {
        let mut insts = std::mem::take(&mut proc.blocks[b].insts);
        // The start of the current stretch of movable instructions.
        let mut start = 0;
        let mut at = 0;
        while at < insts.len() {
            let kind = &proc.insts[insts[at].index()].kind;
            if is_math_call(proc, kind) {
                let n = sink_before(proc, &mut insts[start..=at], unchecked);
                moved += n;
                // The call now sits `n` places earlier; what follows it
                // (including the moved instructions) starts a new stretch.
                start = at - n + 1;
            } else if !is_movable(kind) {
                start = at + 1;
            }
            at += 1;
        }
        proc.blocks[b].insts = insts;
    }
    moved
}

/// Reorders `stretch` (movable instructions ending with a math call) so
/// that the instructions the call does not depend on follow it; returns
/// how many moved (0 when moving would reorder two that can fail).
fn sink_before(proc: &Proc, stretch: &mut [Value], unchecked: &FxHashSet<Value>) -> usize {
    let Some((&call, before)) = stretch.split_last() else {
        return 0;
    };
    // The call's operands within the stretch, transitively.
    let mut needed: FxHashSet<Value> = FxHashSet::default();
    let inside: FxHashSet<Value> = before.iter().copied().collect();
    let mut work = vec![call];
    while let Some(v) = work.pop() {
        proc.insts[v.index()].kind.for_each_operand(|o| {
            if inside.contains(&o) && needed.insert(o) {
                work.push(o);
            }
        });
    }
    let (kept, sunk): (Vec<Value>, Vec<Value>) = before
        .iter()
        .partition(|v| needed.contains(v) || matches!(proc.insts[v.index()].kind, Inst::Load(_)));
    if !sunk
        .iter()
        .any(|v| matches!(proc.insts[v.index()].kind, Inst::LoadElem(..)))
    {
        return 0;
    }
    let position = |v: &Value| before.iter().position(|w| w == v).unwrap_or(0);
    let last_kept_failing = kept
        .iter()
        .filter(|&&v| can_fail(proc, v, unchecked))
        .map(position)
        .max();
    let first_sunk_failing = sunk
        .iter()
        .filter(|&&v| can_fail(proc, v, unchecked))
        .map(position)
        .min();
    if let (Some(k), Some(s)) = (last_kept_failing, first_sunk_failing) {
        if s < k {
            return 0;
        }
    }
    let n = sunk.len();
    let order: Vec<Value> = kept
        .into_iter()
        .chain(std::iter::once(call))
        .chain(sunk)
        .collect();
    stretch.copy_from_slice(&order);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{Buffer, Module, ProcId, Type, UnaryOp};

    /// `f(k) = f(k) + exp(x(j))`, then `f(1) = f(1) * 2` after a store:
    /// the module and its three element loads (`f(k)`, `x(j)`, `f(1)`).
    fn statement() -> (Module, [Value; 3]) {
        let mut proc = Proc::new("s");
        let mut b = ProcBuilder::new(&mut proc);
        let three = ProcBuilder::const_dim(1, 3);
        let f = b.param("f", Type::F64, vec![three.clone()]);
        let x = b.param("x", Type::F64, vec![three]);
        let k = b.param("k", Type::I32, vec![]);
        let j = b.param("j", Type::I32, vec![]);
        let (kv, jv) = (b.load(k), b.load(j));
        let fk = b.load_elem(f, vec![kv]);
        let xj = b.load_elem(x, vec![jv]);
        let e = b.unary(UnaryOp::Exp, xj);
        let s = b.binary(BinaryOp::Add, fk, e);
        b.store_elem(f, vec![kv], s);
        let one = b.iconst(Type::I32, 1);
        let f1 = b.load_elem(f, vec![one]);
        let two = b.fconst(Type::F64, 2.0);
        let e2 = b.unary(UnaryOp::Exp, two);
        let p = b.binary(BinaryOp::Mul, f1, e2);
        b.store_elem(f, vec![one], p);
        b.ret();
        let mut m = Module::default();
        m.add_proc(proc);
        (m, [fk, xj, f1])
    }

    fn run(m: &Module, f: [f64; 3], k: i32, j: i32) -> Result<Vec<u64>, String> {
        let mut args = vec![
            Buffer::F64(f.to_vec()),
            Buffer::F64(vec![0.5, -0.0, f64::NAN]),
            Buffer::I32(vec![k]),
            Buffer::I32(vec![j]),
        ];
        Interpreter::new(m)
            .call(ProcId(0), &mut args)
            .map_err(|e| e.to_string())?;
        let Buffer::F64(f) = &args[0] else {
            panic!("f is F64")
        };
        Ok(f.iter().map(|x| x.to_bits()).collect())
    }

    fn position(m: &Module, v: Value) -> usize {
        m.procs[0].blocks[0]
            .insts
            .iter()
            .position(|&w| w == v)
            .unwrap()
    }

    #[test]
    fn a_load_the_call_does_not_need_follows_it() {
        let (before, [fk, xj, f1]) = statement();
        let mut after = before.clone();
        let unchecked: FxHashSet<Value> = [fk, xj, f1].into_iter().collect();
        // `f(k)` moves below the first exp; `f(1)` and its subscript
        // (after a store) below the second.
        assert_eq!(sink_loads_below_calls(&mut after.procs[0], &unchecked), 3);
        let call = |m: &Module, after: Value| {
            let p = position(m, after);
            m.procs[0].blocks[0].insts[p + 1]
        };
        assert!(matches!(
            after.procs[0].insts[call(&after, xj).index()].kind,
            Inst::Unary(UnaryOp::Exp, _)
        ));
        assert!(position(&after, fk) > position(&after, xj) + 1);
        assert!(position(&before, fk) < position(&before, xj));
        crate::ir::verify::verify_module(&after).unwrap();
        let specials = [0.0, -0.0, f64::INFINITY, f64::NAN, 1.5];
        for (a, b) in specials.iter().zip(specials.iter().rev()) {
            for (k, j) in [(1, 1), (2, 2), (3, 3), (1, 3), (3, 2)] {
                let f = [*a, *b, -*a];
                assert_eq!(run(&before, f, k, j), run(&after, f, k, j));
            }
        }
    }

    #[test]
    fn checked_loads_keep_their_order() {
        let (before, [_, _, f1]) = statement();
        let mut after = before.clone();
        // Both references of the first statement can fail: `f(k)` stays
        // before `x(j)`, so an error names the same one; `f(1)` still moves.
        let unchecked: FxHashSet<Value> = [f1].into_iter().collect();
        // (`f(1)` and its subscript.)
        assert_eq!(sink_loads_below_calls(&mut after.procs[0], &unchecked), 2);
        let (b, a) = (
            &before.procs[0].blocks[0].insts,
            &after.procs[0].blocks[0].insts,
        );
        assert_eq!(b[..7], a[..7]);
        for (k, j) in [(4, 9), (4, 1), (1, 9), (0, 0)] {
            let e = run(&after, [1.0; 3], k, j);
            assert!(e.is_err());
            assert_eq!(run(&before, [1.0; 3], k, j), e);
        }
    }
}
