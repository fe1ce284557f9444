//! A 64-bit induction variable for the fast copy of a versioned forward
//! DO loop ([`super::licm`]).
//!
//! The front end counts a DO loop with its DO variable (often a default
//! INTEGER, 32 bits) and a trip bookkeeping that cannot overflow: `go`
//! (another trip runs) and `rest` (the distance still to go, biased by
//! `i64::MIN`). Lowered as written, every trip sign-extends the DO
//! variable for each address, steps it, steps `rest` and compares `rest`
//! with a 64-bit constant loaded from memory. In the fast copy of a
//! versioned loop the preheader test has proved that the DO variable runs
//! over `[first, last]` exactly, with `first <= last` and both within the
//! DO variable's kind, so the copy can count with one 64-bit variable
//! `w` instead:
//!
//! * the preheader stores `w = first` and `last` in I64 scalars;
//! * the loads of the DO variable before its step read `w`: a subscript
//!   (and a widening of the DO variable to I64) uses `w` itself, any other
//!   use its truncation to the DO variable's kind, which is the DO
//!   variable's value (`w` lies in the kind's range); a subscript `i + t`,
//!   `i - t` or `t + i` of a reference the preheader test covered (which
//!   proved that it does not wrap) is computed from `w` in 64 bits;
//! * the step `i = i + 1` becomes `w = w + 1; i = trunc(w)`, so that `i`
//!   holds what it held before at every point;
//! * `go` becomes `w <= last` (`w < last` before the step), and `rest`
//!   is no longer stepped in the loop: a new exit block of the copy
//!   stores the value the loop left in it (`i64::MAX`: the distance after
//!   the last of at least one trip) before going on to the loop's exit.
//!
//! No result changes: every variable holds the same value as without the
//! rewrite wherever the code after the loop can read it, and the copied
//! instructions cannot fail (only subscripts of references the preheader
//! test covered read `w`).

use crate::ir::{BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Rounding, Terminator, Type, Value};
use crate::ir::{Var, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The fast copy of a versioned forward DO loop, as [`super::licm`] built
/// it.
pub(super) struct FastLoop<'a> {
    /// The original preheader: it computes `first` and `last` and branches
    /// to the fast copy when the preheader test passes.
    pub(super) pre: BlockId,
    /// The copy's header (`br go, body, exit`).
    pub(super) header: BlockId,
    /// The copy's body blocks, the latch (which steps the counters) last.
    pub(super) blocks: Vec<BlockId>,
    /// The DO variable (an integer scalar).
    pub(super) var: VarId,
    /// The bookkeeping: whether another trip runs.
    pub(super) go: VarId,
    /// The bookkeeping: the distance still to go.
    pub(super) rest: VarId,
    /// The DO variable's first and last values (I64 values of `pre`).
    pub(super) first: Value,
    /// See `first`.
    pub(super) last: Value,
    /// The copy's loads of the DO variable before its step.
    pub(super) iv_loads: FxHashSet<Value>,
    /// The element references whose subscripts the preheader test covered
    /// (none of their subscripts wraps).
    pub(super) unchecked: &'a FxHashSet<Value>,
}

/// Rewrites the fast copy `l` to count with a 64-bit induction variable
/// (see the module documentation).
pub(super) fn widen(proc: &mut Proc, l: &FastLoop) {
    let Terminator::Branch {
        else_dest: exit, ..
    } = proc.blocks[l.header.index()].term
    else {
        return;
    };
    let Some(&latch) = l.blocks.last() else {
        return;
    };
    let span = proc.inst(l.first).span;
    let named = |what: &str| Var::scalar(format!("_{what}{}", l.var.0), Type::I64);
    let counter = Counter {
        wide: proc.add_var(named("wide")),
        last: proc.add_var(named("wide_last")),
        ty: proc.var(l.var).ty,
    };
    proc.push_inst(l.pre, Inst::Store(counter.wide, l.first), None, span);
    proc.push_inst(l.pre, Inst::Store(counter.last, l.last), None, span);
    let mut rest_store = None;
    for &b in &l.blocks {
        rest_store = rest_store.or(rewrite_block(proc, b, b == latch, l, &counter));
    }
    // The copy's own exit: `rest` as the loop leaves it.
    let fast_exit = proc.add_block();
    let max = proc.push_inst(
        fast_exit,
        Inst::Const(Const::Int(i64::MAX)),
        Some(Type::I64),
        span,
    );
    // The latch's store of `rest`, moved.
    match rest_store {
        Some(store) => {
            proc.insts[store.index()].kind = Inst::Store(l.rest, max);
            proc.blocks[fast_exit.index()].insts.push(store);
        }
        None => {
            proc.push_inst(fast_exit, Inst::Store(l.rest, max), None, span);
        }
    }
    proc.blocks[fast_exit.index()].term = Terminator::Jump(exit);
    if let Terminator::Branch { else_dest, .. } = &mut proc.blocks[l.header.index()].term {
        *else_dest = fast_exit;
    }
}

/// The variables of the 64-bit counter.
struct Counter {
    /// `w`: the DO variable's value, as I64.
    wide: VarId,
    /// The DO variable's last value, as I64.
    last: VarId,
    /// The DO variable's type.
    ty: Type,
}

/// Rewrites the instructions of one body block of the copy; `latch` says
/// whether it steps the counters. Returns the store of `rest` it took
/// out of the block.
fn rewrite_block(
    proc: &mut Proc,
    b: BlockId,
    latch: bool,
    l: &FastLoop,
    c: &Counter,
) -> Option<Value> {
    let insts = std::mem::take(&mut proc.blocks[b.index()].insts);
    let mut out = Vec::with_capacity(insts.len() + 8);
    // Operand renaming: a load of the DO variable to its truncation of `w`.
    let mut rename: FxHashMap<Value, Value> = FxHashMap::default();
    // The I64 value equal to a value of the DO variable's kind: the loads
    // (and their truncations and widenings) read `w`.
    let mut wide_of: FxHashMap<Value, Value> = FxHashMap::default();
    // The I64 values of sums and differences of the DO variable and an
    // invariant, equal to the narrow ones where they do not wrap: in the
    // subscripts the preheader test covered.
    let mut affine: FxHashMap<Value, Value> = FxHashMap::default();
    let unproven = FxHashMap::default();
    let mut stepped = false;
    let mut rest_store = None;
    for v in insts {
        let span = proc.inst(v).span;
        let emit = |proc: &mut Proc, out: &mut Vec<Value>, kind: Inst, ty: Option<Type>| {
            proc.insts.push(crate::ir::InstData { kind, ty, span });
            let x = Value(proc.insts.len() as u32 - 1);
            out.push(x);
            x
        };
        let covered = if l.unchecked.contains(&v) {
            &affine
        } else {
            &unproven
        };
        let kind = &mut proc.insts[v.index()].kind;
        // Subscripts read `w`, other operands the renamed values.
        match kind {
            Inst::LoadElem(_, idx) => rename_all(idx, &[&wide_of, covered, &rename]),
            Inst::StoreElem(_, idx, x) => {
                rename_all(idx, &[&wide_of, covered, &rename]);
                if let Some(&to) = rename.get(x) {
                    *x = to;
                }
            }
            _ => kind.for_each_operand_mut(|x| {
                if let Some(&to) = rename.get(x) {
                    *x = to;
                }
            }),
        }
        match proc.insts[v.index()].kind.clone() {
            Inst::Load(_) if l.iv_loads.contains(&v) => {
                let data = &mut proc.insts[v.index()];
                data.kind = Inst::Load(c.wide);
                data.ty = Some(Type::I64);
                out.push(v);
                wide_of.insert(v, v);
                if c.ty != Type::I64 {
                    let narrow = emit(
                        proc,
                        &mut out,
                        Inst::Convert(v, Rounding::Trunc),
                        Some(c.ty),
                    );
                    rename.insert(v, narrow);
                    wide_of.insert(narrow, v);
                }
            }
            // A widening of the DO variable's value is `w`.
            Inst::Convert(x, _)
                if proc.insts[v.index()].ty == Some(Type::I64) && wide_of.contains_key(&x) =>
            {
                let w = wide_of[&x];
                out.push(v);
                rename.insert(v, w);
                wide_of.insert(v, w);
            }
            // `i + t`, `i - t`, `t + i` in the DO variable's kind.
            Inst::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), x, y)
                if proc.insts[v.index()].ty == Some(c.ty) && c.ty != Type::I64 =>
            {
                out.push(v);
                let (aff, inv, swapped) = match (wide_of.get(&x), wide_of.get(&y)) {
                    (Some(&w), None) => (w, y, false),
                    (None, Some(&w)) if op == BinaryOp::Add => (w, x, true),
                    _ => continue,
                };
                let inv = emit(
                    proc,
                    &mut out,
                    Inst::Convert(inv, Rounding::Trunc),
                    Some(Type::I64),
                );
                let (a, b) = if swapped { (inv, aff) } else { (aff, inv) };
                let sum = emit(proc, &mut out, Inst::Binary(op, a, b), Some(Type::I64));
                affine.insert(v, sum);
            }
            Inst::Store(var, _) if latch && var == l.var => {
                let w = emit(proc, &mut out, Inst::Load(c.wide), Some(Type::I64));
                let one = emit(proc, &mut out, Inst::Const(Const::Int(1)), Some(Type::I64));
                let next = emit(
                    proc,
                    &mut out,
                    Inst::Binary(BinaryOp::Add, w, one),
                    Some(Type::I64),
                );
                emit(proc, &mut out, Inst::Store(c.wide, next), None);
                let value = if c.ty == Type::I64 {
                    next
                } else {
                    emit(
                        proc,
                        &mut out,
                        Inst::Convert(next, Rounding::Trunc),
                        Some(c.ty),
                    )
                };
                proc.insts[v.index()].kind = Inst::Store(l.var, value);
                out.push(v);
                stepped = true;
            }
            Inst::Store(var, _) if latch && var == l.go => {
                let w = emit(proc, &mut out, Inst::Load(c.wide), Some(Type::I64));
                let last = emit(proc, &mut out, Inst::Load(c.last), Some(Type::I64));
                let op = if stepped { CmpOp::Le } else { CmpOp::Lt };
                let more = emit(proc, &mut out, Inst::Cmp(op, w, last), Some(Type::Bool));
                proc.insts[v.index()].kind = Inst::Store(l.go, more);
                out.push(v);
            }
            Inst::Store(var, _) if latch && var == l.rest => rest_store = Some(v),
            _ => out.push(v),
        }
    }
    proc.blocks[b.index()].insts = out;
    let term = &mut proc.blocks[b.index()].term;
    if let Some(to) = term.operand().and_then(|x| rename.get(&x).copied()) {
        super::rename_terminator(term, to);
    }
    rest_store
}

/// Renames each value of `values` by the first of `maps` that maps it.
fn rename_all(values: &mut [Value], maps: &[&FxHashMap<Value, Value>]) {
    for x in values {
        if let Some(&to) = maps.iter().find_map(|m| m.get(x)) {
            *x = to;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{Buffer, Module, ProcId};
    use crate::opt::inline::Origins;
    use crate::opt::licm::version_loops;

    /// `do i = 1, n: y = y * x(i) + i` with a 32-bit `i` and `n`, counted
    /// as the front end counts it (`go`, `rest`, `stride`). The DO
    /// variable and `rest` are parameters, so that their final values are
    /// results.
    pub(in crate::opt) fn product() -> Module {
        let mut proc = Proc::new("product");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, vec![]);
        let x = b.param("x", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let y = b.param("y", Type::F64, vec![]);
        let i = b.param("i", Type::I32, vec![]);
        let rest = b.param("rest", Type::I64, vec![]);
        let (step, go, stride) = (
            b.local("step", Type::I32),
            b.local("go", Type::Bool),
            b.local("stride", Type::I64),
        );
        let one = b.fconst(Type::F64, 1.0);
        b.store(y, one);
        let one = b.iconst(Type::I32, 1);
        let nv = b.load(n);
        b.store(i, one);
        b.store(step, one);
        let first = b.iconst(Type::I64, 1);
        let last = b.convert(nv, Type::I64, Rounding::Trunc);
        let more = b.cmp(CmpOp::Le, first, last);
        let d = b.binary(BinaryOp::Sub, last, first);
        let min = b.iconst(Type::I64, i64::MIN);
        let biased = b.binary(BinaryOp::Add, d, min);
        b.store(go, more);
        b.store(rest, biased);
        b.store(stride, first);
        let [header, body, exit] = [(); 3].map(|_| b.create_block());
        b.jump(header);
        b.switch_to_block(header);
        let g = b.load(go);
        b.terminate(Terminator::Branch {
            cond: g,
            then_dest: body,
            else_dest: exit,
        });
        b.switch_to_block(body);
        let (yv, iv) = (b.load(y), b.load(i));
        let xv = b.load_elem(x, vec![iv]);
        let p = b.binary(BinaryOp::Mul, yv, xv);
        let fi = b.convert(iv, Type::F64, Rounding::Trunc);
        let s = b.binary(BinaryOp::Add, p, fi);
        b.store(y, s);
        let sv = b.load(step);
        let next = b.binary(BinaryOp::Add, iv, sv);
        b.store(i, next);
        let (r, st) = (b.load(rest), b.load(stride));
        let min = b.iconst(Type::I64, i64::MIN);
        let t = b.binary(BinaryOp::Add, st, min);
        let more = b.cmp(CmpOp::Ge, r, t);
        b.store(go, more);
        let r1 = b.binary(BinaryOp::Sub, r, st);
        b.store(rest, r1);
        b.jump(header);
        b.switch_to_block(exit);
        b.ret();
        let mut m = Module::default();
        m.add_proc(proc);
        m
    }

    /// Runs [`product`] with `n` and five elements of `x`: the arguments
    /// after the call, or the located error.
    pub(in crate::opt) fn run(m: &Module, n: i32) -> Result<Vec<Buffer>, String> {
        let mut args = vec![
            Buffer::I32(vec![n]),
            Buffer::F64((1..=5).map(|k| 1.0 + k as f64 / 8.0).collect()),
            Buffer::F64(vec![0.0]),
            Buffer::I32(vec![0]),
            Buffer::I64(vec![0]),
        ];
        Interpreter::new(m)
            .call(ProcId(0), &mut args)
            .map(|()| args)
            .map_err(|e| format!("{}:{}: {e}", e.span.line, e.span.col))
    }

    #[test]
    fn the_fast_copy_counts_in_64_bits_with_the_same_results() {
        let before = product();
        let mut after = before.clone();
        let versions = version_loops(&mut after.procs[0], ProcId(0), &mut Origins::default());
        crate::ir::verify::verify_module(&after).expect("widened code verifies");
        assert_eq!(versions.guards.len(), 1, "the loop is versioned");
        let proc = &after.procs[0];
        let (rest, i) = (proc.find_var("rest").unwrap(), proc.find_var("i").unwrap());
        let wide = proc.find_var(&format!("_wide{}", i.0)).unwrap();
        let kinds = |b: usize| proc.blocks[b].insts.iter().map(|&v| &proc.inst(v).kind);
        // The copy's body: its subscript reads `w`, `go` compares `w` with
        // the last value, `rest` is stored only at the copy's exit.
        let fast_body = (0..proc.blocks.len())
            .find(|&b| kinds(b).any(|k| matches!(k, Inst::Store(v, _) if *v == wide)) && b != 0)
            .expect("a block steps the wide counter");
        assert!(kinds(fast_body).any(|k| matches!(k, Inst::Cmp(CmpOp::Le, ..))));
        assert!(!kinds(fast_body).any(|k| matches!(k, Inst::Store(v, _) if *v == rest)));
        let subscript = kinds(fast_body)
            .find_map(|k| match k {
                Inst::LoadElem(_, idx) => Some(idx[0]),
                _ => None,
            })
            .unwrap();
        assert_eq!(proc.inst(subscript).kind, Inst::Load(wide));
        let exits = (0..proc.blocks.len())
            .filter(|&b| kinds(b).any(|k| matches!(k, Inst::Store(v, _) if *v == rest)))
            .count();
        assert_eq!(
            exits, 3,
            "the preheader, the original latch and the copy's exit"
        );
        for n in [0, 1, 2, 5, 6] {
            assert_eq!(run(&before, n), run(&after, n), "n = {n}");
        }
        // The final values of `i` and `rest` are results.
        let out = run(&after, 5).unwrap();
        assert_eq!(
            (&out[3], &out[4]),
            (&Buffer::I32(vec![6]), &Buffer::I64(vec![i64::MAX]))
        );
    }
}
