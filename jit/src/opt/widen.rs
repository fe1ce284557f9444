//! A 64-bit induction variable for the fast copy of a versioned DO loop
//! ([`super::licm`]): a forward DO loop, or a reversed one of the adjoint.
//!
//! The front end counts a DO loop with its DO variable (often a default
//! INTEGER, 32 bits) and a trip bookkeeping that cannot overflow: `go`
//! (another trip runs) and `rest` (the distance still to go, biased by
//! `i64::MIN`); the adjoint's reversed loops count their `trips` down to 0
//! while the DO variable steps down. Lowered as written, every trip
//! sign-extends the DO variable for each address, steps it, steps the
//! bookkeeping and tests it. In the fast copy of a versioned loop the
//! preheader test has proved that the DO variable runs over `[first,
//! last]` exactly, with `first <= last` and (in a reversed loop, where the
//! last step leaves it at `first - 1`, read after the step) every value it
//! takes within the DO variable's kind, so the copy can count with one
//! 64-bit variable `w` instead:
//!
//! * the preheader stores `w` (`first`, or `last` for a reversed loop) and
//!   the bound the test compares `w` with (`last`, or `first - 1`) in I64
//!   scalars;
//! * the loads of the DO variable read `w` (a forward loop's only before
//!   its step, since its last step may leave the kind): a subscript (and a
//!   widening of the DO variable to I64) uses `w` itself, any other use its
//!   truncation to the DO variable's kind, which is the DO variable's value
//!   (`w` lies in the kind's range), and a conversion to a floating-point
//!   type converts `w` (the same integer); a subscript `i + t`, `i - t` or `t + i`
//!   of a reference the preheader test covered (which proved that it does
//!   not wrap) is computed from `w` in 64 bits;
//! * the step `i = i ± 1` becomes `w = w ± 1; i = trunc(w)`, so that `i`
//!   holds what it held before at every point;
//! * the loop's test compares `w` with its bound: a forward loop's `go`
//!   becomes `w <= last` (`w < last` before the step), a reversed loop's
//!   header tests `w > first - 1` in place of `trips > 0` (the two agree
//!   on every trip: `trips = w - (first - 1)`);
//! * the bookkeeping (`rest`, `trips`) is no longer stepped in the loop: a
//!   new exit block of the copy stores the value the loop left in it
//!   (`i64::MAX`, the distance after the last of at least one trip, or 0
//!   trips) before going on to the loop's exit;
//! * a forward copy's trip counters (local `I64` scalars stepped by
//!   `c = c + 1` in the latch and read nowhere else in the loop: the
//!   adjoint's forward sweep counts a loop's trips so) are no longer stepped
//!   either: the copy's exit stores the value the loop leaves in them,
//!   `c + (last - first + 1)`, computed as `(c - first) + w`.
//!
//! No result changes: every variable holds the same value as without the
//! rewrite wherever the code after the loop can read it, and the copied
//! instructions cannot fail (only subscripts of references the preheader
//! test covered read `w`).

use crate::ir::{BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Rounding, Terminator, Type, Value};
use crate::ir::{Span, Storage, Var, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The fast copy of a versioned DO loop, as [`super::licm`] built it.
pub(super) struct FastLoop<'a> {
    /// The original preheader: it computes `first` and `last` and branches
    /// to the fast copy when the preheader test passes.
    pub(super) pre: BlockId,
    /// The copy's header (`br go, body, exit` or `br trips > 0, body,
    /// exit`).
    pub(super) header: BlockId,
    /// The copy's body blocks, the latch (which jumps back) last.
    pub(super) blocks: Vec<BlockId>,
    /// The block of `blocks` that steps the counters (the latch of a
    /// forward loop; the first or the last block of a reversed one).
    pub(super) stepper: BlockId,
    /// The DO variable (an integer scalar).
    pub(super) var: VarId,
    /// How the loop counts its trips.
    pub(super) count: Count,
    /// The DO variable's first and last values at the start of a trip
    /// (I64 values of `pre`).
    pub(super) first: Value,
    /// See `first`.
    pub(super) last: Value,
    /// The copy's loads of the DO variable that read `w`: a forward loop's
    /// before its step, all of a reversed loop's.
    pub(super) iv_loads: FxHashSet<Value>,
    /// The element references whose subscripts the preheader test covered
    /// (none of their subscripts wraps).
    pub(super) unchecked: &'a FxHashSet<Value>,
}

/// How the fast copy of a loop counts its trips.
#[derive(Clone, Copy)]
pub(super) enum Count {
    /// A forward DO loop: the DO variable steps up by 1, the front end's
    /// bookkeeping `go` (whether another trip runs) and `rest` (the
    /// distance still to go) stepped in the latch.
    Up {
        /// Whether another trip runs.
        go: VarId,
        /// The distance still to go.
        rest: VarId,
    },
    /// A reversed loop of the adjoint: the header tests `trips > 0`, the
    /// stepping block counts `trips` down by 1 and steps the DO variable
    /// down by 1.
    Down {
        /// The trips still to run.
        trips: VarId,
    },
}

impl Count {
    /// The bookkeeping variable the copy stops stepping and its value when
    /// the loop is left.
    fn parked(self) -> (VarId, i64) {
        match self {
            Count::Up { rest, .. } => (rest, i64::MAX),
            Count::Down { trips } => (trips, 0),
        }
    }
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
    if let Count::Down { trips } = l.count {
        if !trips_only_stepped(proc, l, trips) {
            return;
        }
    }
    let span = proc.inst(l.first).span;
    let named = |what: &str| Var::scalar(format!("_{what}{}", l.var.0), Type::I64);
    let counter = Counter {
        wide: proc.add_var(named("wide")),
        bound: proc.add_var(named("wide_last")),
        ty: proc.var(l.var).ty,
        count: l.count,
    };
    let (start, bound) = match l.count {
        Count::Up { .. } => (l.first, l.last),
        Count::Down { .. } => {
            let one = proc.push_inst(l.pre, Inst::Const(Const::Int(1)), Some(Type::I64), span);
            let before_first = proc.push_inst(
                l.pre,
                Inst::Binary(BinaryOp::Sub, l.first, one),
                Some(Type::I64),
                span,
            );
            (l.last, before_first)
        }
    };
    proc.push_inst(l.pre, Inst::Store(counter.wide, start), None, span);
    proc.push_inst(l.pre, Inst::Store(counter.bound, bound), None, span);
    if let Count::Down { .. } = l.count {
        test_wide_in_header(proc, l.header, &counter);
    }
    let mut parked_store = None;
    for &b in &l.blocks {
        parked_store = parked_store.or(rewrite_block(proc, b, b == l.stepper, l, &counter));
    }
    let counted = match l.count {
        Count::Up { .. } => park_trip_counters(proc, l, span),
        Count::Down { .. } => Vec::new(),
    };
    // The copy's own exit: the bookkeeping as the loop leaves it.
    let (parked, left) = l.count.parked();
    let fast_exit = proc.add_block();
    let value = proc.push_inst(
        fast_exit,
        Inst::Const(Const::Int(left)),
        Some(Type::I64),
        span,
    );
    // The stepping block's store of the bookkeeping, moved.
    match parked_store {
        Some(store) => {
            proc.insts[store.index()].kind = Inst::Store(parked, value);
            proc.blocks[fast_exit.index()].insts.push(store);
        }
        None => {
            proc.push_inst(fast_exit, Inst::Store(parked, value), None, span);
        }
    }
    for (store, var, base) in counted {
        let base = proc.push_inst(fast_exit, Inst::Load(base), Some(Type::I64), span);
        let w = proc.push_inst(fast_exit, Inst::Load(counter.wide), Some(Type::I64), span);
        let value = proc.push_inst(
            fast_exit,
            Inst::Binary(BinaryOp::Add, base, w),
            Some(Type::I64),
            span,
        );
        // The stepping block's store of the counter, moved.
        proc.insts[store.index()].kind = Inst::Store(var, value);
        proc.blocks[fast_exit.index()].insts.push(store);
    }
    proc.blocks[fast_exit.index()].term = Terminator::Jump(exit);
    if let Terminator::Branch { else_dest, .. } = &mut proc.blocks[l.header.index()].term {
        *else_dest = fast_exit;
    }
}

/// Takes out of a forward copy's stepping block the trip counters it
/// steps: local `I64` scalars `c` stored once in the body, by `c = c + 1`
/// in the stepping block, and read nowhere else in the body (the adjoint's
/// forward sweep counts a loop's trips so, to push the count at the exit).
/// The copy runs `last - first + 1` trips (the preheader test proved
/// `first <= last`) and leaves `w` at `last + 1`, so the preheader stores
/// `c - first` in a new scalar and the copy's exit stores `c - first + w`
/// (wrapping as the steps would) back to `c`: the count without a value
/// live across the loop where `c` and `first` are constants (the adjoint's
/// `c = 0`, a DO loop from 1). Returns each counter's store (taken out
/// of the block) with the counter and that scalar. No result changes:
/// nothing in the copy reads `c`, and the copy is left only through its header. An
/// error inside the copy leaves `c` unstepped, but `c` is local, so the
/// failed call cannot show it.
fn park_trip_counters(proc: &mut Proc, l: &FastLoop, span: Span) -> Vec<(Value, VarId, VarId)> {
    let body: Vec<Value> = l
        .blocks
        .iter()
        .flat_map(|b| proc.blocks[b.index()].insts.iter().copied())
        .collect();
    let terms: Vec<Value> = l
        .blocks
        .iter()
        .filter_map(|b| proc.blocks[b.index()].term.operand())
        .collect();
    let readers = |x: Value| {
        let mut n = terms.iter().filter(|&&t| t == x).count();
        for &w in &body {
            proc.inst(w)
                .kind
                .for_each_operand(|y| n += usize::from(y == x));
        }
        n
    };
    let mut found = Vec::new();
    for &v in &proc.blocks[l.stepper.index()].insts {
        let Inst::Store(var, x) = proc.inst(v).kind else {
            continue;
        };
        let decl = proc.var(var);
        if var == l.var
            || decl.ty != Type::I64
            || !decl.dims.is_empty()
            || decl.storage != Storage::Local
        {
            continue;
        }
        let Inst::Binary(BinaryOp::Add, a, b) = proc.inst(x).kind else {
            continue;
        };
        let one = |y: Value| matches!(proc.inst(y).kind, Inst::Const(Const::Int(1)));
        let load = match (one(a), one(b)) {
            (false, true) => a,
            (true, false) => b,
            _ => continue,
        };
        let touches = |w: &&Value| match proc.inst(**w).kind {
            Inst::Store(u, _) | Inst::Load(u) => u == var,
            _ => false,
        };
        if proc.inst(load).kind == Inst::Load(var)
            && body.iter().filter(touches).count() == 2
            && readers(x) == 1
            && readers(load) == 1
        {
            found.push((v, var));
        }
    }
    let mut out = Vec::with_capacity(found.len());
    for (store, var) in found {
        proc.blocks[l.stepper.index()].insts.retain(|&w| w != store);
        let name = format!("_trips_base{}", var.0);
        let base = proc.add_var(Var::scalar(name, Type::I64));
        let start = proc.push_inst(l.pre, Inst::Load(var), Some(Type::I64), span);
        let value = proc.push_inst(
            l.pre,
            Inst::Binary(BinaryOp::Sub, start, l.first),
            Some(Type::I64),
            span,
        );
        proc.push_inst(l.pre, Inst::Store(base, value), None, span);
        out.push((store, var, base));
    }
    out
}

/// True when the only load of `trips` in the copy's body is the operand of
/// its step (`trips = trips - 1`), so that no instruction reads the trips
/// the copy no longer steps.
fn trips_only_stepped(proc: &Proc, l: &FastLoop, trips: VarId) -> bool {
    let body = l.blocks.iter().flat_map(|b| &proc.blocks[b.index()].insts);
    let mut step_operand = None;
    for &v in body.clone() {
        if let Inst::Store(var, x) = proc.inst(v).kind {
            if var == trips {
                if let Inst::Binary(BinaryOp::Sub, a, _) = proc.inst(x).kind {
                    step_operand = Some(a);
                }
            }
        }
    }
    body.into_iter()
        .all(|&v| proc.inst(v).kind != Inst::Load(trips) || Some(v) == step_operand)
}

/// Replaces the reversed loop's test `trips > 0` in the copy's header by
/// `w > first - 1`: the load of `trips` reads `w`, the constant 0 becomes
/// a load of the bound ([`super::licm`] matched the header's test as
/// `load trips > const 0`).
fn test_wide_in_header(proc: &mut Proc, header: BlockId, c: &Counter) {
    let Terminator::Branch { cond, .. } = proc.blocks[header.index()].term else {
        return;
    };
    if let Inst::Cmp(CmpOp::Gt, trips, zero) = proc.inst(cond).kind {
        proc.insts[trips.index()].kind = Inst::Load(c.wide);
        proc.insts[zero.index()].kind = Inst::Load(c.bound);
    }
}

/// The variables of the 64-bit counter.
struct Counter {
    /// `w`: the DO variable's value, as I64.
    wide: VarId,
    /// What the loop's test compares `w` with: the DO variable's last
    /// value (forward), or one before its first (reversed), as I64.
    bound: VarId,
    /// The DO variable's type.
    ty: Type,
    /// How the loop counts.
    count: Count,
}

/// Rewrites the instructions of one body block of the copy; `stepper`
/// says whether it steps the counters. Returns the store of the
/// bookkeeping ([`Count::parked`]) it took out of the block.
fn rewrite_block(
    proc: &mut Proc,
    b: BlockId,
    stepper: bool,
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
    let mut parked_store = None;
    let (parked, _) = c.count.parked();
    let step = match c.count {
        Count::Up { .. } => BinaryOp::Add,
        Count::Down { .. } => BinaryOp::Sub,
    };
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
            // A floating-point value of the DO variable's: the same
            // integer converted from `w`, so the same value.
            Inst::Convert(x, r)
                if proc.insts[v.index()].ty.is_some_and(Type::is_float)
                    && wide_of.contains_key(&x) =>
            {
                proc.insts[v.index()].kind = Inst::Convert(wide_of[&x], r);
                out.push(v);
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
            Inst::Store(var, stored) if stepper && var == l.var => {
                let w = emit(proc, &mut out, Inst::Load(c.wide), Some(Type::I64));
                let one = emit(proc, &mut out, Inst::Const(Const::Int(1)), Some(Type::I64));
                let next = emit(proc, &mut out, Inst::Binary(step, w, one), Some(Type::I64));
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
                // A reversed loop's stepped value lies in the kind (see
                // `FastLoop::iv_loads`): its later uses read `w` too.
                if let Count::Down { .. } = c.count {
                    rename.insert(stored, value);
                    wide_of.insert(stored, next);
                    wide_of.insert(value, next);
                }
            }
            Inst::Store(var, _)
                if stepper && matches!(c.count, Count::Up { go, .. } if go == var) =>
            {
                let w = emit(proc, &mut out, Inst::Load(c.wide), Some(Type::I64));
                let last = emit(proc, &mut out, Inst::Load(c.bound), Some(Type::I64));
                let op = if stepped { CmpOp::Le } else { CmpOp::Lt };
                let more = emit(proc, &mut out, Inst::Cmp(op, w, last), Some(Type::Bool));
                proc.insts[v.index()].kind = Inst::Store(var, more);
                out.push(v);
            }
            Inst::Store(var, _) if stepper && var == parked => parked_store = Some(v),
            _ => out.push(v),
        }
    }
    proc.blocks[b.index()].insts = out;
    let term = &mut proc.blocks[b.index()].term;
    if let Some(to) = term.operand().and_then(|x| rename.get(&x).copied()) {
        super::rename_terminator(term, to);
    }
    parked_store
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
        run_with(m, n, [])
    }

    /// [`run`] with `extra` arguments after the product's five.
    fn run_with<const K: usize>(
        m: &Module,
        n: i32,
        extra: [Buffer; K],
    ) -> Result<Vec<Buffer>, String> {
        let mut args = vec![
            Buffer::I32(vec![n]),
            Buffer::F64((1..=5).map(|k| 1.0 + k as f64 / 8.0).collect()),
            Buffer::F64(vec![0.0]),
            Buffer::I32(vec![0]),
            Buffer::I64(vec![0]),
        ];
        args.extend(extra);
        Interpreter::new(m)
            .call(ProcId(0), &mut args)
            .map(|()| args)
            .map_err(|e| format!("{}:{}: {e}", e.span.line, e.span.col))
    }

    /// [`product`] with a trip counter: a local `c` stepped by `c = c + 1`
    /// in the body (as the adjoint's forward sweep counts a loop's trips),
    /// stored after the loop into a sixth parameter `count`.
    fn product_counted() -> Module {
        let mut m = product();
        let proc = &mut m.procs[0];
        let c = proc.add_var(Var::scalar("c", Type::I64));
        let mut param = Var::scalar("count", Type::I64);
        param.storage = Storage::Param(proc.params.len() as u32);
        let count = proc.add_var(param);
        proc.params.push(count);
        let span = Span::default();
        let [body, exit] = [BlockId(2), BlockId(3)];
        let old = proc.push_inst(body, Inst::Load(c), Some(Type::I64), span);
        let one = proc.push_inst(body, Inst::Const(Const::Int(1)), Some(Type::I64), span);
        let new = proc.push_inst(
            body,
            Inst::Binary(BinaryOp::Add, old, one),
            Some(Type::I64),
            span,
        );
        proc.push_inst(body, Inst::Store(c, new), None, span);
        let last = proc.push_inst(exit, Inst::Load(c), Some(Type::I64), span);
        proc.push_inst(exit, Inst::Store(count, last), None, span);
        m
    }

    /// `before` with its one loop versioned; the result verifies.
    fn versioned(before: &Module) -> Module {
        let mut after = before.clone();
        let versions = version_loops(&mut after.procs[0], ProcId(0), &mut Origins::default());
        crate::ir::verify::verify_module(&after).expect("widened code verifies");
        assert_eq!(versions.guards.len(), 1, "the loop is versioned");
        after
    }

    #[test]
    fn the_fast_copy_leaves_a_trip_counter_to_its_exit() {
        let before = product_counted();
        crate::ir::verify::verify_module(&before).expect("the counted product verifies");
        let after = versioned(&before);
        let proc = &after.procs[0];
        let (c, i) = (proc.find_var("c").unwrap(), proc.find_var("i").unwrap());
        let wide = proc.find_var(&format!("_wide{}", i.0)).unwrap();
        let kinds = |b: usize| proc.blocks[b].insts.iter().map(|&v| &proc.inst(v).kind);
        let stores_to =
            |b: usize, var: VarId| kinds(b).any(|k| matches!(k, Inst::Store(v, _) if *v == var));
        // The copy's body steps `w` but not `c`; the original body still
        // steps `c`, the copy's exit stores it once.
        let fast_body = (1..proc.blocks.len())
            .find(|&b| stores_to(b, wide))
            .expect("a block steps the wide counter");
        assert!(
            !stores_to(fast_body, c),
            "the copy does not step the counter"
        );
        assert!(stores_to(2, c), "the original loop steps it");
        let run_counted = |m: &Module, n: i32| run_with(m, n, [Buffer::I64(vec![-1])]);
        for n in [-3, 0, 1, 2, 5, 6] {
            assert_eq!(run_counted(&before, n), run_counted(&after, n), "n = {n}");
        }
        let out = run_counted(&after, 5).unwrap();
        assert_eq!(out[5], Buffer::I64(vec![5]), "five trips counted");
    }

    #[test]
    fn the_fast_copy_counts_in_64_bits_with_the_same_results() {
        let before = product();
        let after = versioned(&before);
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
