//! First touch: the zero fill of a parameter zeroed on entry
//! ([`Proc::zeroed_params`]) narrowed to the elements a counted loop does
//! not increment.
//!
//! A procedure that zeroes an array `A` on entry and whose only access to
//! it is one counted loop doing `A(s) = A(s) + e` once per trip, at a
//! subscript `s` that steps by one with the DO variable (the reverse loop of
//! an adjoint accumulating into an input's adjoint), need not clear the
//! elements that loop covers: each one's first access is that load, which
//! reads the zero the fill left. The pass
//!
//! * replaces the load by the constant `+0.0` (the add stays: `0.0 + e`
//!   maps `-0.0` to `+0.0` and quiets a NaN exactly as before);
//! * computes in the loop's preheader the range `[lo, hi]` the subscript
//!   spans over all trips (with [`super::licm`]'s analysis) and the
//!   condition under which that range is right (the loop runs at least
//!   once, nothing wraps);
//! * zeroes, where the loop exits, the elements outside `[lo, hi]` by two
//!   explicit fill loops, or, when the condition fails (no trip, a step
//!   other than one, a wrap), all of them before the loop, by a third;
//! * and drops `A` from the procedure's zeroed parameters, so code
//!   generation no longer fills it on entry.
//!
//! The loop's other elements are the ones it never touches, so zeroing
//! them after it instead of before changes nothing. It applies only when
//! every path from the entry to a return passes through the loop's
//! preheader, which lies on no cycle (so the loop runs exactly once per
//! call, after the entry and before the return), when the increment's
//! block runs in every trip, and when nothing but arithmetic lies between
//! the load and the store, which come from one statement: an out-of-range
//! subscript then fails at the store exactly as it failed at the load
//! (same variable, subscript and line), so errors stay located as they
//! were. Anything else keeps the fill on entry.

use super::licm;
use crate::ir::{
    BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Storage, Terminator, Type, Value, Var, VarId,
};

/// Narrows the entry fill of every parameter of `proc` the module
/// documentation's pattern allows; returns how many it narrowed.
pub fn narrow_zero_fills(proc: &mut Proc) -> usize {
    let mut narrowed = 0;
    for z in proc.zeroed_params.clone() {
        if narrow(proc, z).is_some() {
            proc.zeroed_params.retain(|&v| v != z);
            narrowed += 1;
        }
    }
    narrowed
}

/// Instructions that neither fail nor have an effect: what may lie between
/// the load and the store of the increment.
fn harmless(proc: &Proc, v: Value) -> bool {
    let data = proc.inst(v);
    let float = data.ty.is_some_and(Type::is_float);
    match data.kind {
        Inst::Const(_) | Inst::Load(_) | Inst::Cmp(..) | Inst::Select(..) => true,
        Inst::Convert(..) => true,
        Inst::Unary(..) | Inst::Binary(..) => float,
        _ => false,
    }
}

/// The increment `A(s) = A(s) + e` of the zeroed parameter `z`: its block,
/// load and subscript, when it is the only reference to `z`'s contents.
fn increment(proc: &Proc, z: VarId) -> Option<(usize, Value, Value)> {
    let mut loads = Vec::new();
    let mut stores = Vec::new();
    for (b, block) in proc.blocks.iter().enumerate() {
        for (pos, &v) in block.insts.iter().enumerate() {
            match &proc.inst(v).kind {
                Inst::LoadElem(var, idx) if *var == z => loads.push((b, pos, v, idx.clone())),
                Inst::StoreElem(var, idx, x) if *var == z => stores.push((b, pos, idx.clone(), *x)),
                k if k.touches_contents(z) => return None,
                _ => {}
            }
        }
    }
    let ([load], [store]) = (&loads[..], &stores[..]) else {
        return None;
    };
    let (lb, lpos, l, idx) = load.clone();
    let (sb, spos, sidx, x) = store.clone();
    if lb != sb || lpos >= spos || idx != sidx || idx.len() != 1 {
        return None;
    }
    if proc.inst(l).span != proc.inst(proc.blocks[sb].insts[spos]).span {
        return None;
    }
    let between = &proc.blocks[lb].insts[lpos + 1..spos];
    if !between.iter().all(|&v| harmless(proc, v)) {
        return None;
    }
    // The loaded value feeds the one add whose sum is stored.
    let Inst::Binary(BinaryOp::Add, a, b) = proc.inst(x).kind else {
        return None;
    };
    if (a == l) == (b == l) {
        return None;
    }
    let mut uses = 0;
    for &v in &proc.blocks[lb].insts {
        proc.inst(v)
            .kind
            .for_each_operand(|o| uses += usize::from(o == l));
    }
    if let Some(c) = proc.blocks[lb].term.operand() {
        uses += usize::from(c == l);
    }
    (uses == 1).then_some((lb, l, idx[0]))
}

/// Narrows the entry fill of `z` when the pattern matches.
fn narrow(proc: &mut Proc, z: VarId) -> Option<()> {
    let var = proc.var(z);
    if var.dims.len() != 1
        || !var.ty.is_float()
        || !matches!(var.storage, Storage::Param(_))
        || proc.blocks.is_empty()
    {
        return None;
    }
    let ty = var.ty;
    let (block, load, s) = increment(proc, z)?;
    let preds = licm::predecessors(proc);
    let shape = (0..proc.blocks.len())
        .filter_map(|h| licm::loop_region(proc, &preds, h))
        .find(|shape| shape.blocks.contains(&block))?;
    // The increment runs in every trip, or in every trip but those that
    // take one branch around it (the adjoint's zero-seed skip), where a
    // store of zero then stands in for it.
    let doms = licm::dominators(&preds, &shape.blocks);
    let at = shape.blocks.iter().position(|&b| b == block)?;
    let skip = if doms[shape.blocks.len() - 1].contains(&at) {
        None
    } else {
        Some(skip_edge(proc, &preds, &shape, &doms, block, s)?)
    };
    let pre = shape.pre;
    let preb = BlockId(pre as u32);
    if proc.on_cycle(preb) || !proc.on_every_return_path(preb) {
        return None;
    }
    let Terminator::Branch {
        else_dest: exit, ..
    } = proc.blocks[shape.header].term
    else {
        return None;
    };
    let (ok, lo, hi) = licm::subscript_span(proc, &preds, &shape, s)?;
    // When `ok`, the elements outside [lo, hi] are zeroed at the loop's
    // exit: [L, min(lo - 1, U)] and [max(hi + 1, L), U]. Else (no trip, a
    // step that is not 1, a wrap) all of them before the loop.
    let span = proc.inst(load).span;
    let at_pre = |proc: &mut Proc, inst: Inst, ty: Type| proc.push_inst(preb, inst, Some(ty), span);
    let lower = at_pre(proc, Inst::DimLower(z, 0), Type::I64);
    let extent = at_pre(proc, Inst::DimExtent(z, 0), Type::I64);
    let one = at_pre(proc, Inst::Const(Const::Int(1)), Type::I64);
    let end = at_pre(proc, Inst::Binary(BinaryOp::Add, lower, extent), Type::I64);
    let upper = at_pre(proc, Inst::Binary(BinaryOp::Sub, end, one), Type::I64);
    let none = at_pre(proc, Inst::Binary(BinaryOp::Sub, lower, one), Type::I64);
    let all_before = at_pre(proc, Inst::Select(ok, none, upper), Type::I64);
    let below = at_pre(proc, Inst::Binary(BinaryOp::Sub, lo, one), Type::I64);
    let below = at_pre(proc, Inst::Binary(BinaryOp::Min, below, upper), Type::I64);
    let first_end = at_pre(proc, Inst::Select(ok, below, none), Type::I64);
    let above = at_pre(proc, Inst::Binary(BinaryOp::Add, hi, one), Type::I64);
    let above = at_pre(proc, Inst::Binary(BinaryOp::Max, above, lower), Type::I64);
    let second_start = at_pre(proc, Inst::Select(ok, above, end), Type::I64);
    let name = proc.var(z).name.clone();
    let scalar = |proc: &mut Proc, what: &str, x: Value| {
        let v = proc.add_var(Var::scalar(format!("_touch_{what}_{name}"), Type::I64));
        proc.push_inst(preb, Inst::Store(v, x), None, span);
        v
    };
    let before = (
        scalar(proc, "from0", lower),
        scalar(proc, "to0", all_before),
    );
    let after = [
        (scalar(proc, "from1", lower), scalar(proc, "to1", first_end)),
        (
            scalar(proc, "from2", second_start),
            scalar(proc, "to2", upper),
        ),
    ];
    // Before the loop: the preheader jumps to the fill, which jumps to a
    // new preheader (empty: the loop's counters are scalars, read there).
    let header = BlockId(shape.header as u32);
    let new_pre = proc.add_block();
    proc.blocks[new_pre.index()].term = Terminator::Jump(header);
    let fill = fill_loop(proc, z, ty, before, new_pre, span);
    proc.blocks[pre].term = Terminator::Jump(fill);
    // At the loop's exit.
    let mut next = exit;
    for &range in after.iter().rev() {
        next = fill_loop(proc, z, ty, range, next, span);
    }
    if let Terminator::Branch { else_dest, .. } = &mut proc.blocks[shape.header].term {
        *else_dest = next;
    }
    if let Some((guard, join)) = skip {
        zero_when_skipped(proc, z, ty, s, guard, join);
    }
    proc.insts[load.index()].kind = Inst::Const(Const::Float(0.0));
    Some(())
}

/// Adds the loop `while from <= to: z(from) = 0; from = from + 1` (the
/// scalars `(from, to)`), which then continues to `next`; returns its first
/// block.
fn fill_loop(
    proc: &mut Proc,
    z: VarId,
    ty: Type,
    (from, to): (VarId, VarId),
    next: BlockId,
    span: crate::ir::Span,
) -> BlockId {
    let test = proc.add_block();
    let body = proc.add_block();
    let f = proc.push_inst(test, Inst::Load(from), Some(Type::I64), span);
    let t = proc.push_inst(test, Inst::Load(to), Some(Type::I64), span);
    let c = proc.push_inst(test, Inst::Cmp(CmpOp::Le, f, t), Some(Type::Bool), span);
    proc.blocks[test.index()].term = Terminator::Branch {
        cond: c,
        then_dest: body,
        else_dest: next,
    };
    let k = proc.push_inst(body, Inst::Load(from), Some(Type::I64), span);
    let zero = proc.push_inst(body, Inst::Const(Const::Float(0.0)), Some(ty), span);
    proc.push_inst(body, Inst::StoreElem(z, vec![k], zero), None, span);
    let one = proc.push_inst(body, Inst::Const(Const::Int(1)), Some(Type::I64), span);
    let k1 = proc.push_inst(
        body,
        Inst::Binary(BinaryOp::Add, k, one),
        Some(Type::I64),
        span,
    );
    proc.push_inst(body, Inst::Store(from, k1), None, span);
    proc.blocks[body.index()].term = Terminator::Jump(test);
    test
}

/// The branch around the increment's block `block` in the loop `shape`:
/// `(guard, join)` when `guard`, a block of every trip, branches to
/// `block` (its only predecessor) or to `join`, and `block` jumps to
/// `join`; and the subscript `s` can be computed again at the start of a
/// block `guard` branches to (see [`copyable`]).
fn skip_edge(
    proc: &Proc,
    preds: &[Vec<usize>],
    shape: &licm::Shape,
    doms: &[rustc_hash::FxHashSet<usize>],
    block: usize,
    s: Value,
) -> Option<(usize, usize)> {
    let [guard] = preds[block][..] else {
        return None;
    };
    let Terminator::Jump(join) = proc.blocks[block].term else {
        return None;
    };
    let join = join.index();
    let Terminator::Branch {
        then_dest,
        else_dest,
        ..
    } = proc.blocks[guard].term
    else {
        return None;
    };
    let (t, e) = (then_dest.index(), else_dest.index());
    let every_trip = shape
        .blocks
        .iter()
        .position(|&b| b == guard)
        .is_some_and(|g| doms[shape.blocks.len() - 1].contains(&g));
    let around = (t == block && e == join) || (e == block && t == join);
    let stored_before: Vec<VarId> = proc.blocks[block]
        .insts
        .iter()
        .take_while(|&&v| v != s)
        .filter_map(|&v| match proc.inst(v).kind {
            Inst::Store(var, _) => Some(var),
            _ => None,
        })
        .collect();
    (every_trip && around && join != block && copyable(proc, s, &stored_before))
        .then_some((guard, join))
}

/// Whether the integer value `v` is computed from constants and scalar
/// loads (none of `stored`) by additions, subtractions, multiplications,
/// negations and conversions: operations that never fail, so a copy at the
/// start of another block of the same trip gives the same value.
fn copyable(proc: &Proc, v: Value, stored: &[VarId]) -> bool {
    match proc.inst(v).kind {
        Inst::Const(Const::Int(_)) => true,
        Inst::Load(var) => !proc.var(var).is_array() && !stored.contains(&var),
        Inst::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, a, b) => {
            copyable(proc, a, stored) && copyable(proc, b, stored)
        }
        Inst::Unary(crate::ir::UnaryOp::Neg, a) | Inst::Convert(a, _) => {
            proc.value_type(a).is_some_and(Type::is_int) && copyable(proc, a, stored)
        }
        _ => false,
    }
}

/// A copy of the [`copyable`] value `v` appended to `block`.
fn copy_value(proc: &mut Proc, v: Value, block: BlockId) -> Value {
    let data = proc.inst(v).clone();
    let kind = data.kind.map_operands(|x| copy_value(proc, x, block));
    proc.push_inst(block, kind, data.ty, data.span)
}

/// On the branch from `guard` around the increment to `join`: when the
/// subscript `s` lies inside `z`'s dimension, `z(s) = +0.0` (what the
/// skipped increment leaves in an element zeroed on entry).
fn zero_when_skipped(proc: &mut Proc, z: VarId, ty: Type, s: Value, guard: usize, join: usize) {
    let span = proc.inst(s).span;
    let test = proc.add_block();
    let store = proc.add_block();
    let k = copy_value(proc, s, test);
    let k = widen(proc, k, test);
    let lower = proc.push_inst(test, Inst::DimLower(z, 0), Some(Type::I64), span);
    let extent = proc.push_inst(test, Inst::DimExtent(z, 0), Some(Type::I64), span);
    let end = proc.push_inst(
        test,
        Inst::Binary(BinaryOp::Add, lower, extent),
        Some(Type::I64),
        span,
    );
    let above = proc.push_inst(test, Inst::Cmp(CmpOp::Le, lower, k), Some(Type::Bool), span);
    let below = proc.push_inst(test, Inst::Cmp(CmpOp::Lt, k, end), Some(Type::Bool), span);
    let inside = proc.push_inst(
        test,
        Inst::Binary(BinaryOp::And, above, below),
        Some(Type::Bool),
        span,
    );
    proc.blocks[test.index()].term = Terminator::Branch {
        cond: inside,
        then_dest: store,
        else_dest: BlockId(join as u32),
    };
    let k = copy_value(proc, s, store);
    let zero = proc.push_inst(store, Inst::Const(Const::Float(0.0)), Some(ty), span);
    proc.push_inst(store, Inst::StoreElem(z, vec![k], zero), None, span);
    proc.blocks[store.index()].term = Terminator::Jump(BlockId(join as u32));
    if let Terminator::Branch {
        then_dest,
        else_dest,
        ..
    } = &mut proc.blocks[guard].term
    {
        for dest in [then_dest, else_dest] {
            if dest.index() == join {
                *dest = test;
            }
        }
    }
}

/// The integer value `v` of `block` as I64.
fn widen(proc: &mut Proc, v: Value, block: BlockId) -> Value {
    if proc.value_type(v) == Some(Type::I64) {
        return v;
    }
    let span = proc.inst(v).span;
    proc.push_inst(
        block,
        Inst::Convert(v, crate::ir::Rounding::Trunc),
        Some(Type::I64),
        span,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::{CompiledModule, JitOptions};
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{Buffer, Module, ProcId};

    /// How the test procedure touches its zeroed array `a`.
    #[derive(Clone, Copy, PartialEq)]
    enum Shape {
        /// `a(i) = a(i) + x(i)` in every trip (the product's reverse loop).
        Product,
        /// `a(i) = a(i + 1) + x(i)`: the load is not the stored element.
        ReadsNext,
        /// `a(2*i) = a(2*i) + x(i)`: not unit stride.
        Strided,
        /// `a(1) = 5` before the loop.
        TouchedBefore,
        /// The increment in a block that some trips skip (`x(i) == 0`).
        Skipped,
        /// Two trips stepping `i` down by a variable holding 2: the range
        /// test fails although the loop runs.
        StepTwo,
    }

    /// `proc t(n, m, x(n), a(m)) zeroed a`: a reversed loop `i = n, 1, -1`
    /// (`trips` counting down, the counters stepped first, as in the
    /// adjoint) touching `a` as `shape` says.
    fn module(shape: Shape) -> Module {
        let mut proc = Proc::new("t");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, vec![]);
        let m = b.param("m", Type::I64, vec![]);
        let x = b.param("x", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(m)]);
        let (trips, i) = (b.local("trips", Type::I64), b.local("i", Type::I64));
        let st = b.local("st", Type::I64);
        let nv = b.load(n);
        let one = b.iconst(Type::I64, 1);
        let i0 = b.binary(BinaryOp::Add, nv, one);
        b.store(i, i0);
        if shape == Shape::StepTwo {
            let two = b.iconst(Type::I64, 2);
            b.store(st, two);
            b.store(trips, two);
        } else {
            b.store(st, one);
            b.store(trips, nv);
        }
        if shape == Shape::TouchedBefore {
            let five = b.fconst(Type::F64, 5.0);
            b.store_elem(a, vec![one], five);
        }
        let [header, body, inc, latch, exit] = [(); 5].map(|_| b.create_block());
        b.jump(header);
        b.switch_to_block(header);
        let t = b.load(trips);
        let zero = b.iconst(Type::I64, 0);
        let go = b.cmp(CmpOp::Gt, t, zero);
        b.branch(go, body, exit);
        b.switch_to_block(body);
        let t = b.load(trips);
        let one = b.iconst(Type::I64, 1);
        let t1 = b.binary(BinaryOp::Sub, t, one);
        b.store(trips, t1);
        let iv = b.load(i);
        let step = b.load(st);
        let i1 = b.binary(BinaryOp::Sub, iv, step);
        b.store(i, i1);
        if shape == Shape::Skipped {
            let iv = b.load(i);
            let xv = b.load_elem(x, vec![iv]);
            let fzero = b.fconst(Type::F64, 0.0);
            let skip = b.cmp(CmpOp::Eq, xv, fzero);
            b.branch(skip, latch, inc);
        } else {
            b.jump(inc);
        }
        b.switch_to_block(inc);
        let iv = b.load(i);
        let xv = b.load_elem(x, vec![iv]);
        let s = match shape {
            Shape::Strided => {
                let two = b.iconst(Type::I64, 2);
                b.binary(BinaryOp::Mul, two, iv)
            }
            _ => iv,
        };
        let read = match shape {
            Shape::ReadsNext => {
                let one = b.iconst(Type::I64, 1);
                b.binary(BinaryOp::Add, iv, one)
            }
            _ => s,
        };
        let old = b.load_elem(a, vec![read]);
        let sum = b.binary(BinaryOp::Add, old, xv);
        b.store_elem(a, vec![s], sum);
        b.jump(latch);
        b.switch_to_block(latch);
        b.jump(header);
        b.switch_to_block(exit);
        b.ret();
        proc.zeroed_params = vec![a];
        let mut module = Module::default();
        module.add_proc(proc);
        module
    }

    /// The module after the pass, and whether it narrowed the fill.
    fn narrowed(m: &Module) -> (Module, bool) {
        let mut after = m.clone();
        let count = narrow_zero_fills(&mut after.procs[0]);
        crate::ir::verify::verify_module(&after).expect("narrowed code verifies");
        (after, count == 1)
    }

    /// The arguments, `a` full of garbage.
    fn args(n: i64, x: &[f64], m: usize) -> Vec<Buffer> {
        vec![
            Buffer::I64(vec![n]),
            Buffer::I64(vec![m as i64]),
            Buffer::F64(x.to_vec()),
            Buffer::F64((0..m).map(|j| f64::NAN + j as f64).collect()),
        ]
    }

    fn bits(r: Result<Vec<Buffer>, String>) -> Result<Vec<u64>, String> {
        r.map(|b| match &b[3] {
            Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            _ => Vec::new(),
        })
    }

    fn interpret(m: &Module, n: i64, x: &[f64], len: usize) -> Result<Vec<u64>, String> {
        let mut args = args(n, x, len);
        bits(
            Interpreter::new(m)
                .call(ProcId(0), &mut args)
                .map(|()| args)
                .map_err(|e| format!("{}: {e}", e.span.line)),
        )
    }

    fn native(m: &Module, n: i64, x: &[f64], len: usize) -> Result<Vec<u64>, String> {
        let compiled = CompiledModule::compile(m, &JitOptions::default()).expect("compiles");
        let mut args = args(n, x, len);
        bits(
            compiled
                .call(ProcId(0), &mut args)
                .map(|()| args)
                .map_err(|e| format!("{}: {e}", e.span.line)),
        )
    }

    /// The narrowed module gives the original's results bit for bit, in
    /// the interpreter and compiled, whatever `a` held, for loops that
    /// cover `a` whole, in part, not at all (zero trips) or overrun it.
    fn same_results(m: &Module, after: &Module) {
        let x = [1.5, -0.0, 2.0, f64::NAN, 0.0, -3.0, 0.25];
        for (n, len) in [(7, 7), (3, 7), (0, 7), (0, 0), (7, 9), (7, 5)] {
            let want = interpret(m, n, &x, len);
            assert_eq!(interpret(after, n, &x, len), want, "n = {n}, m = {len}");
            assert_eq!(native(m, n, &x, len), want, "compiled, n = {n}, m = {len}");
        }
    }

    #[test]
    fn the_product_shaped_loop_narrows_the_fill() {
        let m = module(Shape::Product);
        let (after, done) = narrowed(&m);
        assert!(done, "narrowed");
        let proc = &after.procs[0];
        assert!(proc.zeroed_params.is_empty(), "no fill on entry left");
        // The increment's load is the constant +0.0; the add stays.
        let loads = proc
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|&&v| matches!(proc.inst(v).kind, Inst::LoadElem(a, _) if a == VarId(3)))
            .count();
        assert_eq!(loads, 0);
        // Three fill loops (a test and a body each), one before the loop,
        // behind a new preheader, and two at its exit.
        assert_eq!(proc.blocks.len(), m.procs[0].blocks.len() + 7);
        same_results(&m, &after);
        // -0.0 + +0.0 is +0.0, and the NaN increment stays a NaN, as before.
        let got = interpret(&after, 7, &[1.5, -0.0, 2.0, f64::NAN, 0.0, -3.0, 0.25], 7).unwrap();
        assert_eq!(got[1], 0.0f64.to_bits());
        assert!(f64::from_bits(got[3]).is_nan());
    }

    /// A loop whose range test fails although it runs: everything is
    /// zeroed before it, nothing after.
    #[test]
    fn a_failed_range_test_zeroes_before_the_loop() {
        let m = module(Shape::StepTwo);
        let (after, done) = narrowed(&m);
        assert!(done, "narrowed");
        same_results(&m, &after);
    }

    /// Trips that skip the increment store a zero instead (when the
    /// element is inside the array).
    #[test]
    fn a_skipped_increment_stores_zero_instead() {
        let m = module(Shape::Skipped);
        let (after, done) = narrowed(&m);
        assert!(done, "narrowed");
        let proc = &after.procs[0];
        let zero_stores = proc
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|&&v| matches!(proc.inst(v).kind, Inst::StoreElem(a, _, _) if a == VarId(3)))
            .count();
        // The increment, the skip's zero, the three fill loops.
        assert_eq!(zero_stores, 5);
        same_results(&m, &after);
    }

    #[test]
    fn other_shapes_keep_the_fill() {
        for shape in [Shape::ReadsNext, Shape::Strided, Shape::TouchedBefore] {
            let m = module(shape);
            let (after, done) = narrowed(&m);
            assert!(!done, "kept");
            assert_eq!(after.procs[0].zeroed_params, [VarId(3)]);
            let x = [1.5, 0.0, 2.0];
            for len in [3, 7] {
                let want = interpret(&m, 3, &x, len);
                assert_eq!(native(&m, 3, &x, len), want, "compiled, m = {len}");
            }
        }
    }

    /// Out of range: the store fails where the load failed, same line,
    /// same element, same variable.
    #[test]
    fn an_out_of_range_increment_fails_as_before() {
        let m = module(Shape::Product);
        let (after, _) = narrowed(&m);
        let x = [1.0; 7];
        let before = interpret(&m, 7, &x, 5);
        assert!(before.is_err());
        assert_eq!(interpret(&after, 7, &x, 5), before);
        assert_eq!(native(&m, 7, &x, 5), before);
    }
}
