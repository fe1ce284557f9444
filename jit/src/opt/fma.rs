//! FMA contraction (opt-in: [`crate::codegen::JitOptions::contract_fma`]):
//! which float additions `a + p*d` and subtractions `a - p*d` code
//! generation lowers as one fused multiply-add.
//!
//! A fused multiply-add rounds once where the product and the sum round
//! twice, so contraction changes results within a rounding of the sum: it
//! is never on by default, and the interpreter never fuses. What it buys
//! is a shorter dependency chain: a recurrence such as the tangent of a
//! product, `yd = yd*x(i) + y*xd(i)`, waits for a multiply and an add per
//! trip unfused and for one fused operation fused.
//!
//! This module only chooses; [`crate::codegen`] emits. A product is
//! contracted when it is a float `Mul` used once, by the addition, in the
//! same block, either directly or through the strong-zero guard of
//! derivative code, `select(p == 0 or d == 0, +0, p*d)` (itself used once
//! and testing only factors of the product). Guarded products are
//! contracted only when code generation lowers their guard as a test of
//! the product with a cold exact path (see
//! [`crate::codegen::JitOptions::branch_on_zero_products`]): the fused
//! value is taken when the product is neither zero nor NaN, so no factor
//! is zero and the guard would have kept the product; otherwise the cold
//! path adds the exact guarded value, unfused, as without contraction.
//!
//! A use of the product by the joint test of [`crate::opt::speculate`]
//! (`|t1 * ... * tk| > 0` branched on) does not count: the test reads the
//! product unfused only to decide whether it is zero or NaN, which picks
//! the fast path or the cold one; each computes its sums as this module
//! says, so no value disagrees with another. (Speculation's
//! [`crate::opt::speculate::Scope::CarriedFused`] leaves the sum on its
//! fast path for this, and multiplies the product again in the cold copy.)
//!
//! When both operands of an addition can be contracted, the one chosen is
//! the product on a recurrence: whose factors depend on the load of a
//! scalar variable the addition's result is stored back to, directly or
//! through other scalar variables (the temporaries of a speculated block),
//! so that the fused operation takes the loop-carried value straight to
//! the sum. Ties go to the second operand.

use crate::ir::{BinaryOp, CmpOp, Const, Inst, Proc, UnaryOp, Value, VarId};
use std::collections::{HashMap, HashSet};

/// How one addition or subtraction is contracted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contraction {
    /// The addend `a` of `a ± p*d`.
    pub addend: Value,
    /// The `Mul` instruction `p*d`.
    pub product: Value,
    /// The strong-zero guard `select(.., +0, p*d)` between the product and
    /// the addition, if any (code generation does not lower it on its own).
    pub guard: Option<Value>,
    /// True for `a - p*d`.
    pub subtract: bool,
}

/// The contractions of one procedure, by the value of the addition or
/// subtraction they replace.
#[derive(Debug, Default)]
pub struct Plan {
    /// Additions and subtractions to lower fused.
    pub contractions: HashMap<Value, Contraction>,
    /// Guards lowered inside the contraction that uses them.
    pub guards: HashSet<Value>,
}

/// Chooses the contractions of `proc` (see the module docs); guarded
/// products only when `guarded` is set.
pub fn plan(proc: &Proc, guarded: bool) -> Plan {
    let uses = use_counts(proc);
    let reaches: Vec<_> = proc
        .blocks
        .iter()
        .map(|block| stores_reached(proc, &block.insts))
        .collect();
    let flows = variable_flows(proc, &reaches);
    let mut out = Plan::default();
    for (block, reach) in proc.blocks.iter().zip(&reaches) {
        let in_block: HashSet<Value> = block.insts.iter().copied().collect();
        let mut loads = HashMap::new();
        for &v in &block.insts {
            let data = &proc.insts[v.index()];
            if !data.ty.is_some_and(|t| t.is_float()) {
                continue;
            }
            let Inst::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b) = data.kind else {
                continue;
            };
            let candidate = |x: Value, addend: Value| {
                let (product, guard) = fusable(proc, x, &uses, &in_block, guarded)?;
                Some(Contraction {
                    addend,
                    product,
                    guard,
                    subtract: op == BinaryOp::Sub,
                })
            };
            let second = candidate(b, a);
            let first = if op == BinaryOp::Add {
                candidate(a, b)
            } else {
                None
            };
            let chosen = match (first, second) {
                (Some(f), Some(s)) => {
                    let targets = reach.get(&v).map(|t| closure(t, &flows));
                    let mut score = |c: &Contraction| {
                        let Inst::Binary(_, p, d) = proc.insts[c.product.index()].kind else {
                            return 0;
                        };
                        let mut vars = scalar_loads(proc, p, &in_block, &mut loads);
                        vars.extend(scalar_loads(proc, d, &in_block, &mut loads));
                        targets.as_ref().map_or(0, |t| vars.intersection(t).count())
                    };
                    let first_score = score(&f);
                    if first_score > score(&s) {
                        f
                    } else {
                        s
                    }
                }
                (f, s) => match s.or(f) {
                    Some(c) => c,
                    None => continue,
                },
            };
            if let Some(g) = chosen.guard {
                out.guards.insert(g);
            }
            out.contractions.insert(v, chosen);
        }
    }
    out
}

/// How many times each value is an operand (of an instruction or a
/// terminator) in `proc`, less its uses for joint tests ([`test_uses`]).
fn use_counts(proc: &Proc) -> Vec<u32> {
    let mut uses = all_uses(proc);
    for (u, t) in uses.iter_mut().zip(test_uses(proc)) {
        *u -= t;
    }
    uses
}

/// Per value, its uses by the joint tests of [`crate::opt::speculate`]: a
/// branch on `|m| > 0` (or a conjunction of such tests), `m` a chain of
/// products each used only by the chain, whose factors are read only to
/// decide whether they are zero or NaN (a node of the test counts as part
/// of it only when every use of it does).
fn test_uses(proc: &Proc) -> Vec<u32> {
    let all = all_uses(proc);
    let mut counted = vec![0u32; proc.insts.len()];
    let mut pending = Vec::new();
    for block in &proc.blocks {
        if let crate::ir::Terminator::Branch { cond, .. } = block.term {
            if all.get(cond.index()) == Some(&1) && test_node(proc, cond, None) {
                counted[cond.index()] += 1;
                pending.push(cond);
            }
        }
    }
    while let Some(node) = pending.pop() {
        let kind = &proc.insts[node.index()].kind;
        let mut operands = Vec::new();
        kind.for_each_operand(|o| operands.push(o));
        for o in operands {
            let Some(c) = counted.get_mut(o.index()) else {
                continue;
            };
            *c += 1;
            if *c == all[o.index()] && test_node(proc, o, Some(kind)) {
                pending.push(o);
            }
        }
    }
    counted
}

/// Whether `v` is a node of a joint test read by `user` (`None`: the
/// branch): a conjunction or `|m| > 0` under a conjunction or the branch,
/// `|m|` under the comparison, a float product under `|m|` or a product.
fn test_node(proc: &Proc, v: Value, user: Option<&Inst>) -> bool {
    let kind = &proc.insts[v.index()].kind;
    let float = proc.insts[v.index()].ty.is_some_and(|t| t.is_float());
    match user {
        None | Some(Inst::Binary(BinaryOp::And, ..)) => match *kind {
            Inst::Binary(BinaryOp::And, ..) => true,
            Inst::Cmp(CmpOp::Gt, a, zero) => {
                is_positive_zero(proc, zero)
                    && matches!(proc.insts[a.index()].kind, Inst::Unary(UnaryOp::Abs, _))
            }
            _ => false,
        },
        Some(Inst::Cmp(..)) => float && matches!(kind, Inst::Unary(UnaryOp::Abs, _)),
        Some(Inst::Unary(UnaryOp::Abs, _) | Inst::Binary(BinaryOp::Mul, ..)) => {
            float && matches!(kind, Inst::Binary(BinaryOp::Mul, ..))
        }
        _ => false,
    }
}

/// Per scalar variable `a`, the scalar variables stored in some block from
/// a value computed from a load of `a` in that block (`reaches`: each
/// block's [`stores_reached`]).
fn variable_flows(
    proc: &Proc,
    reaches: &[HashMap<Value, HashSet<VarId>>],
) -> HashMap<VarId, HashSet<VarId>> {
    let mut flows: HashMap<VarId, HashSet<VarId>> = HashMap::new();
    for (block, reach) in proc.blocks.iter().zip(reaches) {
        for &v in &block.insts {
            if let (Inst::Load(var), Some(targets)) = (&proc.insts[v.index()].kind, reach.get(&v)) {
                flows.entry(*var).or_default().extend(targets);
            }
        }
    }
    flows
}

/// `vars` and every variable they flow to ([`variable_flows`]), in any
/// number of steps.
fn closure(vars: &HashSet<VarId>, flows: &HashMap<VarId, HashSet<VarId>>) -> HashSet<VarId> {
    let mut out = vars.clone();
    let mut pending: Vec<VarId> = vars.iter().copied().collect();
    while let Some(var) = pending.pop() {
        for &w in flows.get(&var).into_iter().flatten() {
            if out.insert(w) {
                pending.push(w);
            }
        }
    }
    out
}

/// How many times each value is an operand (of an instruction of a block
/// or a terminator) in `proc`. Instructions that left every block (the
/// guards speculation replaced by their products) do not count.
fn all_uses(proc: &Proc) -> Vec<u32> {
    let mut uses = vec![0u32; proc.insts.len()];
    let mut count = |v: Value| {
        if let Some(u) = uses.get_mut(v.index()) {
            *u += 1;
        }
    };
    for block in &proc.blocks {
        for &v in &block.insts {
            proc.insts[v.index()].kind.for_each_operand(&mut count);
        }
        match &block.term {
            crate::ir::Terminator::Branch { cond, .. } => count(*cond),
            crate::ir::Terminator::Switch { value, .. } => count(*value),
            _ => {}
        }
    }
    uses
}

/// The product `x` is (a `Mul` used once) or guards (a strong-zero select
/// used once of such a product), with that guard; `None` when `x` cannot
/// be contracted.
fn fusable(
    proc: &Proc,
    x: Value,
    uses: &[u32],
    in_block: &HashSet<Value>,
    guarded: bool,
) -> Option<(Value, Option<Value>)> {
    let once = |v: Value| in_block.contains(&v) && uses.get(v.index()) == Some(&1);
    let is_product = |v: Value| {
        once(v)
            && matches!(proc.insts[v.index()].kind, Inst::Binary(BinaryOp::Mul, ..))
            && proc.insts[v.index()].ty == proc.insts[x.index()].ty
    };
    if !once(x) {
        return None;
    }
    match proc.insts[x.index()].kind {
        Inst::Binary(BinaryOp::Mul, ..) if is_product(x) => Some((x, None)),
        Inst::Select(cond, zero, product) if guarded && is_product(product) => {
            let Inst::Binary(_, p, d) = proc.insts[product.index()].kind else {
                return None;
            };
            (is_positive_zero(proc, zero) && tests_only(proc, cond, &[p, d]))
                .then_some((product, Some(x)))
        }
        _ => None,
    }
}

/// Whether `v` is the float constant `+0.0`.
fn is_positive_zero(proc: &Proc, v: Value) -> bool {
    let data = &proc.insts[v.index()];
    data.ty.is_some_and(|t| t.is_float())
        && match data.kind {
            Inst::Const(Const::Float(x)) => x.to_bits() == 0,
            Inst::Const(Const::Int(0)) => true,
            _ => false,
        }
}

/// Whether `cond` is a disjunction of at most four tests `f == 0` (or
/// `0 == f`) of values `f` among `factors`.
fn tests_only(proc: &Proc, cond: Value, factors: &[Value]) -> bool {
    let zero = |v: Value| match proc.insts[v.index()].kind {
        Inst::Const(Const::Float(x)) => x == 0.0,
        Inst::Const(Const::Int(0)) => proc.insts[v.index()].ty.is_some_and(|t| t.is_float()),
        _ => false,
    };
    let mut pending = vec![cond];
    let mut tests = 0;
    while let Some(c) = pending.pop() {
        match proc.insts[c.index()].kind {
            Inst::Binary(BinaryOp::Or, l, r) => pending.extend([l, r]),
            Inst::Cmp(CmpOp::Eq, l, r) => {
                let tested = if zero(r) {
                    l
                } else if zero(l) {
                    r
                } else {
                    return false;
                };
                if !factors.contains(&tested) {
                    return false;
                }
                tests += 1;
            }
            _ => return false,
        }
        if tests + pending.len() > 4 {
            return false;
        }
    }
    tests > 0
}

/// Per value of the block `insts`: the scalar variables stored (`Store`)
/// in the block from a value computed from it.
fn stores_reached(proc: &Proc, insts: &[Value]) -> HashMap<Value, HashSet<VarId>> {
    let mut reach: HashMap<Value, HashSet<VarId>> = HashMap::new();
    for &v in insts.iter().rev() {
        let kind = &proc.insts[v.index()].kind;
        let targets = match kind {
            Inst::Store(var, _) => HashSet::from([*var]),
            _ => match reach.get(&v) {
                Some(t) => t.clone(),
                None => continue,
            },
        };
        kind.for_each_operand(|o| reach.entry(o).or_default().extend(&targets));
    }
    reach
}

/// The scalar variables whose loads in the block `v` is computed from
/// (memoized in `memo`).
fn scalar_loads(
    proc: &Proc,
    v: Value,
    in_block: &HashSet<Value>,
    memo: &mut HashMap<Value, HashSet<VarId>>,
) -> HashSet<VarId> {
    if let Some(known) = memo.get(&v) {
        return known.clone();
    }
    let mut vars = HashSet::new();
    if in_block.contains(&v) {
        match &proc.insts[v.index()].kind {
            Inst::Load(var) => {
                vars.insert(*var);
            }
            kind => {
                let mut operands = Vec::new();
                kind.for_each_operand(|o| operands.push(o));
                for o in operands {
                    vars.extend(scalar_loads(proc, o, in_block, memo));
                }
            }
        }
    }
    memo.insert(v, vars.clone());
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::Type;

    /// `select(p == 0 or d == 0, +0, p*d)`, with the product.
    fn guarded(b: &mut ProcBuilder, p: Value, d: Value) -> (Value, Value) {
        let t = b.binary(BinaryOp::Mul, p, d);
        let zero = b.fconst(Type::F64, 0.0);
        let pz = b.cmp(CmpOp::Eq, p, zero);
        let dz = b.cmp(CmpOp::Eq, d, zero);
        let either = b.binary(BinaryOp::Or, pz, dz);
        (b.select(either, zero, t), t)
    }

    /// The tangent of `y = y*x`: `yd = guard(yd*x) + guard(y*xd)`; `y` and
    /// `yd` are both stored back.
    fn tangent_step() -> (Proc, Value, Value, Value) {
        let mut proc = Proc::new("step");
        let mut b = ProcBuilder::new(&mut proc);
        let [x, xd, y, yd] = ["x", "xd", "y", "yd"].map(|n| b.param(n, Type::F64, vec![]));
        let [lx, lxd, ly, lyd] = [x, xd, y, yd].map(|v| b.load(v));
        let (s1, m1) = guarded(&mut b, lyd, lx);
        let (s2, _) = guarded(&mut b, ly, lxd);
        let sum = b.binary(BinaryOp::Add, s1, s2);
        b.store(yd, sum);
        let prod = b.binary(BinaryOp::Mul, ly, lx);
        b.store(y, prod);
        b.ret();
        (proc, sum, m1, s1)
    }

    #[test]
    fn the_recurrence_product_is_fused() {
        let (proc, sum, m1, s1) = tangent_step();
        let plan = plan(&proc, true);
        assert_eq!(plan.contractions.len(), 1);
        let c = plan.contractions[&sum];
        assert_eq!((c.product, c.guard, c.subtract), (m1, Some(s1), false));
        assert!(plan.guards.contains(&s1));
    }

    #[test]
    fn guarded_products_wait_for_the_branching_lowering() {
        let (proc, ..) = tangent_step();
        assert!(plan(&proc, false).contractions.is_empty());
    }

    /// `out = a - p*d` (and `p*d` once more when `twice`).
    fn difference(twice: bool) -> (Proc, Value, Value) {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let [a, p, d, out] = ["a", "p", "d", "out"].map(|n| b.param(n, Type::F64, vec![]));
        let [la, lp, ld] = [a, p, d].map(|v| b.load(v));
        let t = b.binary(BinaryOp::Mul, lp, ld);
        let r = b.binary(BinaryOp::Sub, la, t);
        b.store(out, r);
        if twice {
            b.store(p, t);
        }
        b.ret();
        (proc, r, t)
    }

    #[test]
    fn a_difference_fuses_its_subtrahend_only_once_used() {
        let (proc, r, t) = difference(false);
        let plan = plan(&proc, false);
        let c = plan.contractions[&r];
        assert_eq!((c.product, c.guard, c.subtract), (t, None, true));
        let (proc, ..) = difference(true);
        assert!(super::plan(&proc, false).contractions.is_empty());
    }

    #[test]
    fn a_product_minus_a_value_is_not_fused() {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let [a, p, d, out] = ["a", "p", "d", "out"].map(|n| b.param(n, Type::F64, vec![]));
        let [la, lp, ld] = [a, p, d].map(|v| b.load(v));
        let t = b.binary(BinaryOp::Mul, lp, ld);
        let r = b.binary(BinaryOp::Sub, t, la);
        b.store(out, r);
        b.ret();
        assert!(plan(&proc, true).contractions.is_empty());
    }

    #[test]
    fn integer_sums_are_not_fused() {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let [a, p, out] = ["a", "p", "out"].map(|n| b.param(n, Type::I64, vec![]));
        let [la, lp] = [a, p].map(|v| b.load(v));
        let t = b.binary(BinaryOp::Mul, lp, lp);
        let r = b.binary(BinaryOp::Add, la, t);
        b.store(out, r);
        b.ret();
        assert!(plan(&proc, true).contractions.is_empty());
    }
}
