//! Strong-zero guards decided together: one test for a stretch of guarded
//! products instead of one selection per product.
//!
//! Derivative code forms `partial * derivative` as the strong zero
//! `select(p == 0 or d == 0, +0, p * d)` (see `adjit::ad::rules`): about
//! five machine instructions per product, most of a reverse sweep's
//! arithmetic. Where neither factor is zero the guard yields the plain
//! product `t = p * d`, and a product that is neither zero nor NaN has no
//! zero factor (`0 * x` is `±0` or NaN). So for the guards `g1 .. gk` of a
//! stretch of a block, when `|t1 * ... * tk| > 0` (false for a zero or NaN
//! product, true for an infinite one) every `ti` is neither zero nor NaN,
//! every guard yields its product, and the plain products give the guarded
//! results bit for bit, signs of zero included (an underflowing product
//! only sends the stretch to the guarded copy).
//!
//! The pass splits a block `B` at the first instruction with an effect (a
//! store, a call, the tape, ...) after its first guard, when the stretch
//! before it holds at least [`MIN_GUARDS`] guards:
//!
//! * `B` keeps its instructions up to the split with each guard replaced by
//!   its product, computes the test, and branches on it;
//! * a new cold block recomputes, from the same operands, the guards and
//!   every instruction of the stretch that depends on them, with the guards
//!   in place (pure floating-point and logical operations, which raise no
//!   error, so recomputing them is safe);
//! * a new block continues with the rest of `B`, reading the values of the
//!   stretch through scalar temporaries (registers after code generation)
//!   written by whichever path ran; it is split again in turn.
//!
//! Nothing is reassociated and no result changes: the fast path runs the
//! products the guarded code computes, minus selections proven to pick
//! them. Where products are often zero (an adjoint seeded at one output of
//! many leaves most adjoints zero) the cold copy runs after the test, which
//! costs more than the guards alone. So by default code generation splits
//! only the stretches of [`Scope::Carried`]: each guard multiplies a scalar
//! the block reads before it writes it, the state a loop carries from one
//! trip to the next (the running adjoint of a product chain, whose guards
//! test the same nonzero adjoint on every trip); guards of array elements
//! (adjoints of outputs that were not seeded, mostly zero) keep their
//! selections. Every stretch ([`Scope::All`]) on request
//! ([`crate::codegen::JitOptions::speculate_guards`]).

use super::inline::Origins;
use crate::ir::{
    BinaryOp, BlockId, CmpOp, Const, Inst, Proc, ProcId, Span, Terminator, Type, UnaryOp, Value,
    Var,
};
use std::collections::{HashMap, HashSet};

/// Which stretches of guards get a joint test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every stretch of at least [`MIN_GUARDS`] guards.
    All,
    /// The stretches of [`Scope::All`] each of whose guards has a factor
    /// loaded from a scalar variable that the same block stores to after
    /// the load: a value carried from one loop trip to the next (see the
    /// module documentation).
    Carried,
    /// The stretches of [`Scope::Carried`], each ending before the first
    /// instruction that reads one of its guards: the cold block recomputes
    /// the guards alone, and the rest of the block reads their values from
    /// the temporaries. The readers are not copied, so a fast product
    /// reaches them without a register copy (a reader that overwrites a
    /// carried value, such as a running tangent `y_d = g1 + g2`, needs the
    /// old value only on the cold path). For tangent code, whose other
    /// guards branch on their own products
    /// ([`crate::codegen::JitOptions::branch_on_zero_products`]).
    CarriedGuards,
    /// The stretches of [`Scope::CarriedGuards`], each extended through
    /// the sums that FMA contraction fuses with one of its guards
    /// ([`crate::opt::fma::plan`] of the block before the split; for
    /// [`crate::codegen::JitOptions::contract_fma`]). The cold block
    /// recomputes such a sum from the guards; the fast path adds the plain
    /// product, which code generation fuses (the joint test reads the
    /// product too, unfused, and decides only whether it is zero or NaN).
    /// So a running tangent `y_d = y_d*x + y*x_d` waits for one fused
    /// multiply-add per trip, not a multiply and an add.
    CarriedFused,
}

/// Applies [`speculate_guards`] to every procedure of `module`; returns the
/// number of stretches given a joint test.
pub fn speculate_module(module: &mut crate::ir::Module, origins: &mut Origins) -> usize {
    speculate_module_in(module, origins, Scope::All, None)
}

/// [`speculate_module`] for the stretches of `scope`, in the procedures
/// marked in `wanted` (by procedure index; all when `None`).
pub fn speculate_module_in(
    module: &mut crate::ir::Module,
    origins: &mut Origins,
    scope: Scope,
    wanted: Option<&[bool]>,
) -> usize {
    module
        .procs
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| super::is_wanted(wanted, *i))
        .map(|(i, proc)| speculate_guards_in(proc, ProcId(i as u32), origins, scope))
        .sum()
}

/// The fewest guards a stretch needs for a test of its own (one guard
/// costs about what its test would).
pub const MIN_GUARDS: usize = 2;

/// Splits every block of `proc` whose guards can be decided together (see
/// the module documentation), recording the copied instructions' origins.
/// Returns how many stretches of guards got a joint test.
pub fn speculate_guards(proc: &mut Proc, pid: ProcId, origins: &mut Origins) -> usize {
    speculate_guards_in(proc, pid, origins, Scope::All)
}

/// [`speculate_guards`] for the stretches of `scope`.
pub fn speculate_guards_in(
    proc: &mut Proc,
    pid: ProcId,
    origins: &mut Origins,
    scope: Scope,
) -> usize {
    let mut work: Vec<usize> = (0..proc.blocks.len()).collect();
    let mut stretches = 0;
    while let Some(b) = work.pop() {
        if let Some(rest) = split(proc, pid, origins, b, scope) {
            work.push(rest.index());
            stretches += 1;
        }
    }
    stretches
}

/// The product `t` a strong-zero guard `v = select(c, +0, t)` yields where
/// no factor of `t = p * d` is zero: `c` must be a disjunction of tests
/// `p == 0`, `d == 0`.
fn guarded_product(proc: &Proc, v: Value) -> Option<Value> {
    let data = proc.inst(v);
    if !data.ty.is_some_and(Type::is_float) {
        return None;
    }
    let Inst::Select(c, zero, t) = data.kind else {
        return None;
    };
    if float_const(proc, zero).map(f64::to_bits) != Some(0.0f64.to_bits()) {
        return None;
    }
    let Inst::Binary(BinaryOp::Mul, p, d) = proc.inst(t).kind else {
        return None;
    };
    zero_tests(proc, c, p, d).then_some(t)
}

/// True when `c` is `x == 0` or a disjunction of such tests, each `x` a
/// factor `p` or `d`.
fn zero_tests(proc: &Proc, c: Value, p: Value, d: Value) -> bool {
    match proc.inst(c).kind {
        Inst::Binary(BinaryOp::Or, a, b) => zero_tests(proc, a, p, d) && zero_tests(proc, b, p, d),
        Inst::Cmp(CmpOp::Eq, x, y) => {
            let factor = |x: Value| x == p || x == d;
            let zero = |y: Value| float_const(proc, y) == Some(0.0);
            (factor(x) && zero(y)) || (zero(x) && factor(y))
        }
        _ => false,
    }
}

/// The value of a floating-point constant.
fn float_const(proc: &Proc, v: Value) -> Option<f64> {
    match proc.inst(v).kind {
        Inst::Const(Const::Float(x)) => Some(x),
        _ => None,
    }
}

/// True for an instruction without effects: running it or not changes
/// nothing but its value (it may still fail, as a checked element load).
fn effect_free(kind: &Inst) -> bool {
    matches!(kind, Inst::Allocated(_))
        || (super::licm::arithmetic_or_access(kind) && !matches!(kind, Inst::Store(..)))
}

/// True for an instruction the cold path may run again: a floating-point
/// or logical operation, which raises no error.
fn recomputable(proc: &Proc, v: Value) -> bool {
    let data = proc.inst(v);
    data.ty.is_some_and(|t| t.is_float() || t == Type::Bool)
        && matches!(
            data.kind,
            Inst::Const(_)
                | Inst::Unary(..)
                | Inst::Binary(..)
                | Inst::Cmp(..)
                | Inst::Convert(..)
                | Inst::Select(..)
        )
}

/// One stretch of a block: from its first guard up to `end`.
struct Stretch {
    /// Where the stretch ends (the instruction with an effect, or the end
    /// of the block).
    end: usize,
    /// Each guard and its product.
    guards: Vec<(Value, Value)>,
    /// The guards and the instructions of the stretch that read them,
    /// directly or not, in order.
    tainted: Vec<Value>,
    /// The guards fused with a sum of the stretch ([`Scope::CarriedFused`]):
    /// the cold copy multiplies their products again, so that the copy of
    /// the sum fuses them too (as code generation does without the test).
    fused: HashSet<Value>,
}

/// True when every guard of `s` multiplies a value carried by the block
/// `insts` ([`Scope::Carried`]): a load of a scalar variable that a later
/// instruction of the block stores to.
fn carried(proc: &Proc, insts: &[Value], s: &Stretch) -> bool {
    let carried_load = |x: Value| {
        let Inst::Load(var) = proc.inst(x).kind else {
            return false;
        };
        let Some(at) = insts.iter().position(|&v| v == x) else {
            return false;
        };
        proc.var(var).dims.is_empty()
            && insts[at..]
                .iter()
                .any(|&v| matches!(proc.inst(v).kind, Inst::Store(w, _) if w == var))
    };
    s.guards.iter().all(|&(_, t)| match proc.inst(t).kind {
        Inst::Binary(BinaryOp::Mul, p, d) => carried_load(p) || carried_load(d),
        _ => false,
    })
}

/// The first stretch of `insts` from `start` with at least [`MIN_GUARDS`]
/// guards, of `scope`.
fn find_stretch(proc: &Proc, insts: &[Value], mut start: usize, scope: Scope) -> Option<Stretch> {
    // Planned only for a block with a guard (most blocks have none), once.
    let mut fused = None;
    while start < insts.len() {
        let first = start
            + insts[start..]
                .iter()
                .position(|&v| guarded_product(proc, v).is_some())?;
        let fused = fused.get_or_insert_with(|| match scope {
            Scope::CarriedFused => super::fma::plan(proc, true).contractions,
            _ => HashMap::new(),
        });
        let mut s = Stretch {
            end: insts.len(),
            guards: Vec::new(),
            tainted: Vec::new(),
            fused: HashSet::new(),
        };
        let mut tainted = HashSet::new();
        // A sum fused with a guard of the stretch joins it: that guard.
        let joins = |v: Value, tainted: &HashSet<Value>| {
            fused
                .get(&v)
                .and_then(|c| c.guard)
                .filter(|g| tainted.contains(g))
        };
        let guards_only = matches!(scope, Scope::CarriedGuards | Scope::CarriedFused);
        for (pos, &v) in insts.iter().enumerate().skip(first) {
            if let Some(t) = guarded_product(proc, v) {
                s.guards.push((v, t));
                s.tainted.push(v);
                tainted.insert(v);
                continue;
            }
            let kind = &proc.inst(v).kind;
            let mut reads = false;
            kind.for_each_operand(|x| reads |= tainted.contains(&x));
            let joined = joins(v, &tainted);
            let ends = !effect_free(kind)
                || (reads && ((guards_only && joined.is_none()) || !recomputable(proc, v)));
            if let (false, Some(g)) = (ends, joined) {
                s.fused.insert(g);
            }
            if ends {
                s.end = pos;
                break;
            }
            if reads {
                s.tainted.push(v);
                tainted.insert(v);
            }
        }
        if s.guards.len() >= MIN_GUARDS && (scope == Scope::All || carried(proc, insts, &s)) {
            return Some(s);
        }
        start = s.end + 1;
    }
    None
}

/// Splits block `b` at its first stretch of guards (see the module
/// documentation); returns the block holding the rest, to split in turn.
fn split(
    proc: &mut Proc,
    pid: ProcId,
    origins: &mut Origins,
    b: usize,
    scope: Scope,
) -> Option<BlockId> {
    let insts = proc.blocks[b].insts.clone();
    let s = find_stretch(proc, &insts, 0, scope)?;
    let (head, tail) = insts.split_at(s.end);
    let defined: HashSet<Value> = head.iter().copied().collect();
    let tainted: HashSet<Value> = s.tainted.iter().copied().collect();
    let fast: HashMap<Value, Value> = s.guards.iter().copied().collect();
    // Values of the head read later: by the rest of the block, or by the
    // cold copy (the untainted operands of tainted instructions).
    let mut crossing: Vec<Value> = Vec::new();
    let mut seen = HashSet::new();
    let mut note = |x: Value, crossing: &mut Vec<Value>| {
        if defined.contains(&x) && seen.insert(x) {
            crossing.push(x);
        }
    };
    for &v in tail {
        proc.inst(v)
            .kind
            .for_each_operand(|x| note(x, &mut crossing));
    }
    if let Some(x) = proc.blocks[b].term.operand() {
        note(x, &mut crossing);
    }
    let later: HashSet<Value> = crossing.iter().copied().collect();
    // A fused guard's copy is rebuilt whole from its factors (see
    // `Stretch::fused`): the factors cross, the guard's operands do not.
    let factors = |g: Value| match proc.inst(g).kind {
        Inst::Select(_, _, t) => match proc.inst(t).kind {
            Inst::Binary(BinaryOp::Mul, p, d) => [p, d],
            _ => unreachable!("a guard multiplies"),
        },
        _ => unreachable!("a guard selects"),
    };
    for &v in &s.tainted {
        if s.fused.contains(&v) {
            for x in factors(v) {
                if !tainted.contains(&x) {
                    note(x, &mut crossing);
                }
            }
            continue;
        }
        proc.inst(v).kind.for_each_operand(|x| {
            if !tainted.contains(&x) {
                note(x, &mut crossing)
            }
        });
    }
    if crossing
        .iter()
        .any(|&x| proc.value_type(x).is_none_or(|t| t == Type::Char))
    {
        return None;
    }
    // The stretch as written, for the cold copy (the head is rewritten).
    let originals: Vec<_> = s.tainted.iter().map(|&v| proc.inst(v).clone()).collect();
    let span = proc.inst(s.guards[0].0).span;
    let cold = proc.add_block();
    let rest = proc.add_block();
    // The head: guards replaced by their products (the guards themselves
    // leave the block), then the temporaries and the test.
    let fast_of = |x: Value| fast.get(&x).copied().unwrap_or(x);
    let mut kept = Vec::with_capacity(head.len());
    for &v in head {
        if fast.contains_key(&v) {
            continue;
        }
        if tainted.contains(&v) {
            let kind = proc.inst(v).kind.map_operands(fast_of);
            proc.insts[v.index()].kind = kind;
        }
        kept.push(v);
    }
    proc.blocks[b].insts = kept;
    let block = BlockId(b as u32);
    let mut temps: HashMap<Value, crate::ir::VarId> = HashMap::new();
    for &x in &crossing {
        let ty = proc.value_type(x).expect("a value with a type");
        let temp = proc.add_var(Var::scalar(format!("_spec{}", x.0), ty));
        temps.insert(x, temp);
        proc.push_inst(block, Inst::Store(temp, fast_of(x)), None, span);
    }
    let test = check(proc, block, &s.guards, span);
    let term = std::mem::replace(
        &mut proc.blocks[b].term,
        Terminator::Branch {
            cond: test,
            then_dest: rest,
            else_dest: cold,
        },
    );
    let term_span = proc.blocks[b].term_span;
    // The cold copy: the tainted instructions with the guards in place.
    let mut slow: HashMap<Value, Value> = HashMap::new();
    for &x in &crossing {
        if !tainted.contains(&x) {
            let ty = proc.value_type(x);
            let w = proc.push_inst(cold, Inst::Load(temps[&x]), ty, span);
            slow.insert(x, w);
        }
    }
    for (&v, data) in s.tainted.iter().zip(originals) {
        if s.fused.contains(&v) {
            let mut to = ColdCopy {
                block: cold,
                head: &defined,
                copies: &mut slow,
            };
            rebuild(proc, pid, origins, &mut to, v);
            continue;
        }
        let kind = data
            .kind
            .map_operands(|x| slow.get(&x).copied().unwrap_or(x));
        let c = proc.push_inst(cold, kind, data.ty, data.span);
        origins.copy_inst(pid, v.0, c.0);
        slow.insert(v, c);
    }
    for &x in &crossing {
        if tainted.contains(&x) && later.contains(&x) {
            proc.push_inst(cold, Inst::Store(temps[&x], slow[&x]), None, span);
        }
    }
    proc.blocks[cold.index()].term = Terminator::Jump(rest);
    proc.blocks[cold.index()].term_span = term_span;
    // The rest of the block, reading the temporaries.
    let mut renamed: HashMap<Value, Value> = HashMap::new();
    for &x in &crossing {
        if later.contains(&x) {
            let ty = proc.value_type(x);
            let w = proc.push_inst(rest, Inst::Load(temps[&x]), ty, span);
            renamed.insert(x, w);
        }
    }
    for &v in tail {
        let kind = proc
            .inst(v)
            .kind
            .map_operands(|x| renamed.get(&x).copied().unwrap_or(x));
        proc.insts[v.index()].kind = kind;
        proc.blocks[rest.index()].insts.push(v);
    }
    let mut term = term;
    if let Terminator::Branch { cond: x, .. } | Terminator::Switch { value: x, .. } = &mut term {
        *x = renamed.get(x).copied().unwrap_or(*x);
    }
    proc.blocks[rest.index()].term = term;
    proc.blocks[rest.index()].term_span = term_span;
    origins.copy_block(pid, b as u32, rest.0);
    Some(rest)
}

/// Where a stretch's cold copy goes: its block, and the values of the
/// head it copies from (`head`) with their copies so far (`copies`).
struct ColdCopy<'a> {
    block: BlockId,
    head: &'a HashSet<Value>,
    copies: &'a mut HashMap<Value, Value>,
}

/// The copy of `v` in the cold block: `v` itself when it is not a value of
/// the head (defined before it), its copy when `copies` has one (but for a
/// constant, copied again so that the copy reads as a constant), else a
/// new copy of its instruction reading the copies of its operands, rebuilt
/// in turn (with the origins recorded). For a guard, whose operands are its
/// test, its product and constants: rebuilt down to its factors.
fn rebuild(
    proc: &mut Proc,
    pid: ProcId,
    origins: &mut Origins,
    to: &mut ColdCopy,
    v: Value,
) -> Value {
    let constant = matches!(proc.inst(v).kind, Inst::Const(_));
    if !to.head.contains(&v) {
        return v;
    }
    if let (false, Some(&c)) = (constant, to.copies.get(&v)) {
        return c;
    }
    let data = proc.inst(v).clone();
    let mut operands = Vec::new();
    data.kind.for_each_operand(|x| operands.push(x));
    let rebuilt: HashMap<Value, Value> = operands
        .into_iter()
        .map(|x| (x, rebuild(proc, pid, origins, to, x)))
        .collect();
    let (copies, block) = (&mut *to.copies, to.block);
    let kind = data.kind.map_operands(|x| rebuilt[&x]);
    let c = proc.push_inst(block, kind, data.ty, data.span);
    origins.copy_inst(pid, v.0, c.0);
    if !constant {
        copies.insert(v, c);
    }
    c
}

/// Appends to `block` the test `|t1 * ... * tk| > 0` of each floating-point
/// type's products (joined by `and`): true when no product is zero or NaN.
fn check(proc: &mut Proc, block: BlockId, guards: &[(Value, Value)], span: Span) -> Value {
    let mut test: Option<Value> = None;
    for ty in [Type::F64, Type::F32] {
        let mut product: Option<Value> = None;
        for &(g, t) in guards {
            if proc.value_type(g) != Some(ty) {
                continue;
            }
            product = Some(match product {
                Some(p) => proc.push_inst(block, Inst::Binary(BinaryOp::Mul, p, t), Some(ty), span),
                None => t,
            });
        }
        let Some(product) = product else {
            continue;
        };
        let size = proc.push_inst(block, Inst::Unary(UnaryOp::Abs, product), Some(ty), span);
        let zero = proc.push_inst(block, Inst::Const(Const::Float(0.0)), Some(ty), span);
        let ok = proc.push_inst(
            block,
            Inst::Cmp(CmpOp::Gt, size, zero),
            Some(Type::Bool),
            span,
        );
        test = Some(match test {
            Some(t) => proc.push_inst(
                block,
                Inst::Binary(BinaryOp::And, t, ok),
                Some(Type::Bool),
                span,
            ),
            None => ok,
        });
    }
    test.expect("a stretch has guards")
}
