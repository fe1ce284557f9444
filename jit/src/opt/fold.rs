//! Exact constant folding and the collapse of strong-zero guards whose
//! factors became constants, run instruction by instruction inside block
//! value numbering ([`super::optimize`]).
//!
//! Derivative code written to be differentiated again guards each product
//! `p * d` as `select(finite(p) and finite(d), p * d, select(p == 0 or
//! d == 0, 0, p * d))` (a strong zero only where a factor is infinite or
//! NaN). Once inlining and store forwarding have made a factor a constant
//! (a seed of 1, a constant partial), most of that guard is decided: this
//! pass folds it away so that only the product is left, and the nested
//! tangents of such code (tangent over tangent over tangent in FARFEL's
//! ROOT of ARGMAX of DERIV1) stop multiplying tests through their loops.
//!
//! Every rewrite gives the same value as the instruction it replaces for
//! every input, bit for bit (a NaN stays a NaN):
//!
//! * float operations (`-`, `abs`, `+`, `-`, `*`, `/`, conversions between
//!   float types) and comparisons of constants are computed in the
//!   instruction's type, with IEEE rounding like the hardware;
//! * `x * 1` is `x`; `and` / `or` with a constant operand and a `select`
//!   on a constant condition or with equal arms are decided;
//! * `select(finite(x), a, b)` (`finite(x)` being `abs(x) < +inf`) is `a`
//!   when `b`, evaluated assuming `x` is infinite or NaN (so that `x == 0`
//!   is false), and `a`, evaluated assuming `x` is finite, are the same
//!   value or the same constant: the strong-zero fallback of a guarded
//!   product one of whose factors is a finite non-zero constant never
//!   differs from the product itself.

use crate::ir::{BinaryOp, CmpOp, Const, Inst, Proc, Type, UnaryOp, Value};

/// What an instruction folds to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fold {
    /// An earlier value of the block, which replaces it.
    Value(Value),
    /// A constant, which its instruction becomes.
    Const(Const),
}

/// What `v` is known to be, for [`simplify`] (operands already renamed by
/// value numbering, so equal values are equal handles).
pub(crate) fn simplify(proc: &Proc, v: Value) -> Option<Fold> {
    let data = &proc.insts[v.index()];
    let ty = data.ty?;
    match &data.kind {
        Inst::Unary(..) | Inst::Binary(..) | Inst::Cmp(..) | Inst::Convert(..) => {
            // Operands were simplified before `v` (value numbering visits
            // definitions first), so one level shows all there is to see.
            match eval(proc, v, &Facts::default(), &mut Budget(1)) {
                Sym::Val(w) if w != v => Some(Fold::Value(w)),
                Sym::Float(bits) => Some(Fold::Const(Const::Float(f64::from_bits(bits)))),
                Sym::Bool(b) => Some(Fold::Const(Const::Bool(b))),
                _ => None,
            }
        }
        Inst::Select(c, a, b) => {
            let (c, a, b) = (*c, *a, *b);
            let none = Facts::default();
            let mut budget = Budget(BUDGET);
            let folded = match eval(proc, c, &none, &mut Budget(1)) {
                Sym::Bool(true) => eval(proc, a, &none, &mut budget),
                Sym::Bool(false) => eval(proc, b, &none, &mut budget),
                _ if a == b => Sym::Val(a),
                _ => {
                    let x = finite_test(proc, c)?;
                    let finite = Facts {
                        cond: Some((c, true)),
                        x: Some((x, true)),
                    };
                    let not_finite = Facts {
                        cond: Some((c, false)),
                        x: Some((x, false)),
                    };
                    let sa = eval(proc, a, &finite, &mut budget);
                    let sb = eval(proc, b, &not_finite, &mut budget);
                    if sa != sb || sa == Sym::Opaque {
                        return None;
                    }
                    sa
                }
            };
            to_fold(folded, v, ty)
        }
        _ => None,
    }
}

/// The fold of an instruction of type `ty` to `s`, if any.
fn to_fold(s: Sym, v: Value, ty: Type) -> Option<Fold> {
    match s {
        Sym::Val(w) if w != v => Some(Fold::Value(w)),
        Sym::Float(bits) if ty.is_float() => Some(Fold::Const(Const::Float(f64::from_bits(bits)))),
        Sym::Bool(b) if ty == Type::Bool => Some(Fold::Const(Const::Bool(b))),
        _ => None,
    }
}

/// Instructions [`eval`] may visit for one fold (the operand graph is a
/// DAG: a bound keeps a long chain of guards linear).
const BUDGET: u32 = 48;

/// Remaining visits.
struct Budget(u32);

/// Assumptions under which a select's arm is evaluated.
#[derive(Default)]
struct Facts {
    /// The select's condition and its assumed value.
    cond: Option<(Value, bool)>,
    /// The value the condition tests for finiteness, and whether it is
    /// assumed finite.
    x: Option<(Value, bool)>,
}

/// A value as [`eval`] sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sym {
    /// An existing value (equal handles: equal values).
    Val(Value),
    /// A float constant, by bit pattern (of the instruction's type).
    Float(u64),
    /// A truth value.
    Bool(bool),
    /// A value no existing handle holds (a rewritten expression).
    Opaque,
}

/// `c` as `abs(x) < +inf`: returns `x`.
fn finite_test(proc: &Proc, c: Value) -> Option<Value> {
    let Inst::Cmp(CmpOp::Lt, a, inf) = proc.insts[c.index()].kind else {
        return None;
    };
    let Inst::Unary(UnaryOp::Abs, x) = proc.insts[a.index()].kind else {
        return None;
    };
    (float_const(proc, inf) == Some(f64::INFINITY)).then_some(x)
}

/// The float constant `v` is, if it is one.
fn float_const(proc: &Proc, v: Value) -> Option<f64> {
    match proc.insts[v.index()].kind {
        Inst::Const(Const::Float(x)) => Some(x),
        _ => None,
    }
}

/// Rounds `x` to the float type `ty` (f32 values are held as f64).
fn round(ty: Type, x: f64) -> f64 {
    if ty == Type::F32 {
        x as f32 as f64
    } else {
        x
    }
}

/// A float operation on constants, computed in `ty`.
fn float_binary(op: BinaryOp, ty: Type, a: f64, b: f64) -> Option<f64> {
    if ty == Type::F32 {
        let (a, b) = (a as f32, b as f32);
        let r = match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            _ => return None,
        };
        return Some(r as f64);
    }
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        _ => return None,
    })
}

/// A comparison of float constants (ordered: false with a NaN but `Ne`).
fn float_cmp(op: CmpOp, a: f64, b: f64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

/// What `v` is under `facts`: a constant, an existing value equal to it,
/// or opaque. Visits at most `budget` instructions.
fn eval(proc: &Proc, v: Value, facts: &Facts, budget: &mut Budget) -> Sym {
    if budget.0 == 0 {
        return leaf(proc, v);
    }
    budget.0 -= 1;
    if let Some((c, known)) = facts.cond {
        if c == v {
            return Sym::Bool(known);
        }
    }
    let data = &proc.insts[v.index()];
    let Some(ty) = data.ty else {
        return Sym::Val(v);
    };
    // The operands' symbols, and whether any differs from the operand.
    let mut operand = |w: Value| eval(proc, w, facts, budget);
    match data.kind {
        Inst::Const(Const::Float(x)) if ty.is_float() => Sym::Float(x.to_bits()),
        Inst::Const(Const::Bool(b)) => Sym::Bool(b),
        Inst::Unary(op, a) => {
            let sa = operand(a);
            match (op, sa) {
                (UnaryOp::Neg, Sym::Float(x)) if ty.is_float() => {
                    Sym::Float((-f64::from_bits(x)).to_bits())
                }
                (UnaryOp::Abs, Sym::Float(x)) if ty.is_float() => {
                    Sym::Float(f64::from_bits(x).abs().to_bits())
                }
                (UnaryOp::Not, Sym::Bool(b)) => Sym::Bool(!b),
                (_, s) => unchanged(proc, v, a, s),
            }
        }
        Inst::Convert(a, _) => {
            let from = proc.insts[a.index()].ty;
            match operand(a) {
                Sym::Float(x) if ty.is_float() && from.is_some_and(Type::is_float) => {
                    Sym::Float(round(ty, f64::from_bits(x)).to_bits())
                }
                s => unchanged(proc, v, a, s),
            }
        }
        Inst::Cmp(op, a, b) => {
            if let Some((x, finite)) = facts.x {
                let tests_zero = |l: Value, r: Value| l == x && float_const(proc, r) == Some(0.0);
                if op == CmpOp::Eq && !finite && (tests_zero(a, b) || tests_zero(b, a)) {
                    return Sym::Bool(false);
                }
                if finite_test(proc, v) == Some(x) {
                    return Sym::Bool(finite);
                }
            }
            let (sa, sb) = (operand(a), operand(b));
            match (sa, sb) {
                (Sym::Float(x), Sym::Float(y)) => {
                    Sym::Bool(float_cmp(op, f64::from_bits(x), f64::from_bits(y)))
                }
                _ => unchanged2(proc, v, (a, sa), (b, sb)),
            }
        }
        Inst::Binary(op, a, b) => {
            let (sa, sb) = (operand(a), operand(b));
            binary(proc, op, ty, v, (a, sa), (b, sb))
        }
        Inst::Select(c, a, b) => match operand(c) {
            Sym::Bool(true) => operand(a),
            Sym::Bool(false) => operand(b),
            sc => {
                let (sa, sb) = (operand(a), operand(b));
                if sa == sb && sa != Sym::Opaque {
                    sa
                } else if is_itself(proc, c, sc) && is_itself(proc, a, sa) && is_itself(proc, b, sb)
                {
                    Sym::Val(v)
                } else {
                    Sym::Opaque
                }
            }
        },
        _ => Sym::Val(v),
    }
}

/// `v` without looking through its operands: the constant it is, or itself.
fn leaf(proc: &Proc, v: Value) -> Sym {
    let data = &proc.insts[v.index()];
    match data.kind {
        Inst::Const(Const::Float(x)) if data.ty.is_some_and(Type::is_float) => {
            Sym::Float(x.to_bits())
        }
        Inst::Const(Const::Bool(b)) => Sym::Bool(b),
        _ => Sym::Val(v),
    }
}

/// A binary operation of type `ty` on operands evaluated to `sa` and `sb`.
fn binary(
    proc: &Proc,
    op: BinaryOp,
    ty: Type,
    v: Value,
    (a, sa): (Value, Sym),
    (b, sb): (Value, Sym),
) -> Sym {
    if ty == Type::Bool {
        return match (op, sa, sb) {
            (BinaryOp::And, Sym::Bool(false), _) | (BinaryOp::And, _, Sym::Bool(false)) => {
                Sym::Bool(false)
            }
            (BinaryOp::Or, Sym::Bool(true), _) | (BinaryOp::Or, _, Sym::Bool(true)) => {
                Sym::Bool(true)
            }
            (BinaryOp::And, Sym::Bool(true), s)
            | (BinaryOp::And, s, Sym::Bool(true))
            | (BinaryOp::Or, Sym::Bool(false), s)
            | (BinaryOp::Or, s, Sym::Bool(false)) => s,
            _ => unchanged2(proc, v, (a, sa), (b, sb)),
        };
    }
    match (op, sa, sb) {
        (_, Sym::Float(x), Sym::Float(y)) if ty.is_float() => {
            match float_binary(op, ty, f64::from_bits(x), f64::from_bits(y)) {
                Some(r) => Sym::Float(r.to_bits()),
                None => unchanged2(proc, v, (a, sa), (b, sb)),
            }
        }
        (BinaryOp::Mul, Sym::Float(one), s) | (BinaryOp::Mul, s, Sym::Float(one))
            if ty.is_float() && f64::from_bits(one) == 1.0 && s != Sym::Opaque =>
        {
            s
        }
        _ => unchanged2(proc, v, (a, sa), (b, sb)),
    }
}

/// Whether operand `a` evaluated to `s` is unchanged: itself, or the
/// constant it is.
fn is_itself(proc: &Proc, a: Value, s: Sym) -> bool {
    s == Sym::Val(a) || (matches!(proc.insts[a.index()].kind, Inst::Const(_)) && s != Sym::Opaque)
}

/// `v` itself when its operand `a` evaluated to itself, else opaque.
fn unchanged(proc: &Proc, v: Value, a: Value, s: Sym) -> Sym {
    if is_itself(proc, a, s) {
        Sym::Val(v)
    } else {
        Sym::Opaque
    }
}

/// `v` itself when both operands evaluated to themselves, else opaque.
fn unchanged2(proc: &Proc, v: Value, (a, sa): (Value, Sym), (b, sb): (Value, Sym)) -> Sym {
    if is_itself(proc, a, sa) && is_itself(proc, b, sb) {
        Sym::Val(v)
    } else {
        Sym::Opaque
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::buffer::Buffer;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::Module;

    /// Floats that exercise every branch of a guard.
    const SPECIAL: [f64; 8] = [
        0.0,
        -0.0,
        1.5,
        -2.25,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e300,
    ];

    /// `abs(x) < +inf`.
    fn finite(b: &mut ProcBuilder, x: Value, ty: Type) -> Value {
        let a = b.unary(UnaryOp::Abs, x);
        let inf = b.fconst(ty, f64::INFINITY);
        b.cmp(CmpOp::Lt, a, inf)
    }

    /// The guarded product `p * d` as derivative code to be differentiated
    /// again writes it: `select(finite(p) and finite(d), p*d,
    /// select(p == 0 or d == 0, 0, p*d))`.
    fn guarded(b: &mut ProcBuilder, p: Value, d: Value, ty: Type) -> Value {
        let t = b.binary(BinaryOp::Mul, p, d);
        let zero = b.fconst(ty, 0.0);
        let dz = b.cmp(CmpOp::Eq, d, zero);
        let pz = b.cmp(CmpOp::Eq, p, zero);
        let either = b.binary(BinaryOp::Or, dz, pz);
        let strong = b.select(either, zero, t);
        let pf = finite(b, p, ty);
        let df = finite(b, d, ty);
        let both = b.binary(BinaryOp::And, pf, df);
        b.select(both, t, strong)
    }

    /// A procedure `out = f(x)` of type `ty` built by `body`, before and
    /// after value numbering with folding.
    fn build(ty: Type, body: impl Fn(&mut ProcBuilder, Value) -> Value) -> (Module, Module) {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let [x, out] = ["x", "out"].map(|n| b.param(n, ty, vec![]));
        let lx = b.load(x);
        let r = body(&mut b, lx);
        b.store(out, r);
        b.ret();
        let mut m = Module::default();
        m.add_proc(proc);
        let folded = super::super::optimize(&m);
        (m, folded)
    }

    /// `out` for `x` in module `m` (the interpreter), as bits.
    fn run(m: &Module, ty: Type, x: f64) -> u64 {
        let mut args = [x, 0.0].map(|v| {
            let mut buf = Buffer::zeros(ty, 1);
            buf.set_f64(0, v);
            buf
        });
        Interpreter::new(m)
            .call(crate::ir::ProcId(0), &mut args)
            .expect("runs");
        let r = args[1].get_f64(0);
        if r.is_nan() {
            f64::NAN.to_bits()
        } else {
            r.to_bits()
        }
    }

    /// The instruction whose value the procedure stores last.
    fn stored(m: &Module) -> &Inst {
        let p = &m.procs[0];
        let last = p.blocks[0].insts.last().expect("a store");
        let Inst::Store(_, r) = p.insts[last.index()].kind else {
            panic!("a store last")
        };
        &p.insts[r.index()].kind
    }

    /// Asserts the folded module computes what the original does, bit for
    /// bit (NaNs as one), at every special value.
    fn same_results(ty: Type, (m, folded): &(Module, Module)) {
        for x in SPECIAL {
            assert_eq!(run(m, ty, x), run(folded, ty, x), "x = {x}, {ty:?}");
        }
    }

    #[test]
    fn a_guarded_product_by_a_finite_constant_is_the_product() {
        for ty in [Type::F64, Type::F32] {
            for c in [1.0, -0.1, 3.0] {
                let pair = build(ty, |b, x| {
                    let c = b.fconst(ty, c);
                    guarded(b, x, c, ty)
                });
                same_results(ty, &pair);
                // The product itself (`x * 1` is `x`), no guard.
                match stored(&pair.1) {
                    Inst::Load(_) => assert_eq!(c, 1.0),
                    Inst::Binary(BinaryOp::Mul, ..) => assert_ne!(c, 1.0),
                    other => panic!("c = {c}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn guards_of_a_zero_or_infinite_constant_or_two_variables_stay() {
        for c in [0.0, f64::INFINITY] {
            let pair = build(Type::F64, |b, x| {
                let c = b.fconst(Type::F64, c);
                guarded(b, x, c, Type::F64)
            });
            same_results(Type::F64, &pair);
            assert!(matches!(stored(&pair.1), Inst::Select(..)), "c = {c}");
        }
        // `x * -x` guarded: the fallback differs (0 * inf) only when one of
        // two is not finite; the rule needs a single tested value.
        let pair = build(Type::F64, |b, x| {
            let y = b.unary(UnaryOp::Neg, x);
            guarded(b, x, y, Type::F64)
        });
        same_results(Type::F64, &pair);
        assert!(
            matches!(stored(&pair.1), Inst::Select(..)),
            "the guard stays"
        );
    }

    #[test]
    fn the_tangent_of_a_guard_folds_where_its_partial_is_constant() {
        // select(finite(x), c, select(finite(x), c, 0) + select(x == 0, 0, c))
        // is c for a constant c (the shape nested tangents give).
        for c in [-0.1, 0.0, -0.0] {
            let pair = build(Type::F64, |b, x| {
                let c = b.fconst(Type::F64, c);
                let zero = b.fconst(Type::F64, 0.0);
                let f = finite(b, x, Type::F64);
                let kept = b.select(f, c, zero);
                let xz = b.cmp(CmpOp::Eq, x, zero);
                let masked = b.select(xz, zero, c);
                let sum = b.binary(BinaryOp::Add, kept, masked);
                b.select(f, c, sum)
            });
            same_results(Type::F64, &pair);
            // -0 is not folded: `+0 + -0` is +0 where x is not finite.
            let folded = matches!(stored(&pair.1), Inst::Const(Const::Float(k)) if k.to_bits() == c.to_bits());
            assert_eq!(folded, c.to_bits() != (-0.0f64).to_bits(), "c = {c}");
        }
    }

    #[test]
    fn constants_fold_in_their_type() {
        // 0.1f32 + 0.2f32 rounds in single precision.
        let pair = build(Type::F32, |b, x| {
            let a = b.fconst(Type::F32, 0.1f32 as f64);
            let c = b.fconst(Type::F32, 0.2f32 as f64);
            let s = b.binary(BinaryOp::Add, a, c);
            let q = b.binary(BinaryOp::Div, s, c);
            b.binary(BinaryOp::Mul, x, q)
        });
        same_results(Type::F32, &pair);
        let p = &pair.1.procs[0];
        assert!(p.blocks[0].insts.iter().any(|v| p.insts[v.index()].kind
            == Inst::Const(Const::Float(((0.1f32 + 0.2f32) / 0.2f32) as f64))));
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A random float expression of `x` of depth at most `depth`, built
    /// from constants that decide guards (0, -0, 1, -0.1, 2.5, inf, NaN),
    /// arithmetic, guarded products and finiteness selects.
    fn expr(b: &mut ProcBuilder, rng: &mut Rng, x: Value, ty: Type, depth: u32) -> Value {
        const CONSTS: [f64; 7] = [0.0, -0.0, 1.0, -0.1, 2.5, f64::INFINITY, f64::NAN];
        if depth == 0 || rng.below(4) == 0 {
            return match rng.below(3) {
                0 => x,
                _ => b.fconst(ty, CONSTS[rng.below(7) as usize]),
            };
        }
        let sub = |b: &mut ProcBuilder, rng: &mut Rng| expr(b, rng, x, ty, depth - 1);
        match rng.below(7) {
            0 => {
                let (p, d) = (sub(b, rng), sub(b, rng));
                guarded(b, p, d, ty)
            }
            1 => {
                let (c, a, e) = (sub(b, rng), sub(b, rng), sub(b, rng));
                let f = finite(b, c, ty);
                b.select(f, a, e)
            }
            2 => {
                let (c, a, e) = (sub(b, rng), sub(b, rng), sub(b, rng));
                let zero = b.fconst(ty, 0.0);
                let z = b.cmp(CmpOp::Eq, c, zero);
                b.select(z, a, e)
            }
            3 => {
                let a = sub(b, rng);
                let op = [UnaryOp::Neg, UnaryOp::Abs][rng.below(2) as usize];
                b.unary(op, a)
            }
            _ => {
                let (a, e) = (sub(b, rng), sub(b, rng));
                let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]
                    [rng.below(4) as usize];
                b.binary(op, a, e)
            }
        }
    }

    /// Random guard-shaped expressions compute the same bits folded and
    /// unfolded at every special value, in both float types; and the
    /// folding is not idle (some instructions go).
    #[test]
    fn random_guarded_expressions_fold_exactly() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut removed = 0;
        for case in 0..400 {
            let ty = if case % 2 == 0 { Type::F64 } else { Type::F32 };
            let seed = rng.below(u64::MAX);
            let pair = build(ty, |b, x| expr(b, &mut Rng(seed | 1), x, ty, 4));
            same_results(ty, &pair);
            removed +=
                pair.0.procs[0].blocks[0].insts.len() - pair.1.procs[0].blocks[0].insts.len();
        }
        assert!(removed > 400, "{removed} instructions folded");
    }
}
