//! The local partial derivatives of every IR operation, emitted as IR.
//!
//! This is the one place that knows the derivative of each elemental
//! operation `r = phi(u_1, ..., u_n)`. Both transforms use it:
//!
//! * the tangent computes `r_d = sum_i dphi/du_i * u_i_d`;
//! * the adjoint computes `u_i_b += dphi/du_i * r_b`.
//!
//! [`partials`] emits the code computing each wanted partial `dphi/du_i`
//! (only for the operands the caller asks for, so passive operands cost
//! nothing) and returns it as a [`Partial`]; trivial partials (`0`, `±1`, a
//! selection) are returned symbolically so that [`accumulate`] forms
//! `acc + partial * d` without useless multiplications.
//!
//! Partials are expressed in the type of the result. The only operation whose
//! operand type differs from its result type is a float-to-float
//! [`Inst::Convert`], whose partial is [`Partial::One`]; [`accumulate`]
//! converts the derivative it is given to the accumulator's type, which
//! covers both directions (tangent: operand → result type; adjoint: result →
//! operand type).
//!
//! # Rules
//!
//! `r` is the primal result, `a` and `b` the operands. "Gate(c)" means the
//! partial is 1 where the condition `c` holds and 0 elsewhere (emitted as a
//! `select`, never as a multiplication).
//!
//! | operation | `dr/da` | `dr/db` | choice at non-differentiable / singular points |
//! |---|---|---|---|
//! | `a + b` | 1 | 1 | |
//! | `a - b` | 1 | -1 | |
//! | `a * b` | `b` | `a` | |
//! | `a / b` | `1/b` | `-(r/b)` | `b = 0` gives ±inf / NaN (singular: strong zero) |
//! | `-a` | -1 | | |
//! | `abs(a)` | `sign(1, a)` | | the one-sided derivative chosen by the sign bit: +1 at `+0.0`, -1 at `-0.0` (seed 004 §6.2 writes `a/abs(a)`, which is NaN at 0; this is Tapenade's choice) |
//! | `sqrt(a)` | `0.5/r` | | `+inf` at `a = 0` (seed 004 §6.2: `1/(2 sqrt(a))`; singular: strong zero) |
//! | `exp(a)` | `r` | | |
//! | `log(a)` | `1/a` | | |
//! | `log10(a)` | `log10(e)/a` | | (seed 004: `1/(a ln 10)`) |
//! | `sin(a)` | `cos(a)` | | |
//! | `cos(a)` | `-sin(a)` | | |
//! | `tan(a)` | `1 + r*r` | | (seed 004: `1 + tan(a)**2`) |
//! | `asin(a)` | `1/sqrt(1 - a*a)` | | `+inf` at `abs(a) = 1`, NaN outside |
//! | `acos(a)` | `-1/sqrt(1 - a*a)` | | `-inf` at `abs(a) = 1`, NaN outside |
//! | `atan(a)` | `1/(1 + a*a)` | | |
//! | `sinh(a)` | `cosh(a)` | | |
//! | `cosh(a)` | `sinh(a)` | | |
//! | `tanh(a)` | `1 - r*r` | | |
//! | `erf(a)` | `2/sqrt(pi) exp(-a*a)` | | |
//! | `erfc(a)` | `-2/sqrt(pi) exp(-a*a)` | | |
//! | `gamma(a)` | `r * psi(a)` (digamma) | | ±inf / NaN at the poles (singular: strong zero) |
//! | `log_gamma(a)` | `psi(a)` | | NaN at the poles (singular: strong zero) |
//! | `psi^(n)(a)` (polygamma) | `psi^(n+1)(a)` | | NaN at the poles (singular); NaN for `n = 255` (no higher order) |
//! | `bessel_j0(a)` | `-bessel_j1(a)` | | |
//! | `bessel_j1(a)` | `bessel_j0(a) - r/a` | | `1/2` at `a = 0` (the limit) |
//! | `floor`, `ceiling`, `aint`, `anint` | 0 | | 0 everywhere, including at the jumps |
//! | `a ** b` (both real) | `b * a**(b-1)`, but 0 where `b = 0` | `log(a) * r` where `a > 0`, else 0 | `b = 0`: `x**0` is constant, so 0 (avoids `0 * inf`); `a <= 0`: `a**b` is not differentiable in `b` over the reals, 0 is chosen (Tapenade's choice; at `a = 0, b > 0` it is the limit) |
//! | `a ** n` (integer `n`) | `n * a**(n-1)`, but 0 where `n = 0` | (integer: none) | `n = 0`: constant, 0 (avoids `0 * (1/0)`) |
//! | `min(a, b)` | Gate(`r == a`) | Gate(`r != a`) | the partial goes to the argument the primal returned: ties go to `a` (the primal returns `a`); a NaN in `a` makes the primal return `b`, and then `r == a` is false so `b` gets it |
//! | `max(a, b)` | Gate(`r == a`) | Gate(`r != a`) | as for `min` |
//! | `atan2(a, b)` | `b/(a*a + b*b)` | `-a/(a*a + b*b)` | 0 at `a = b = 0` (where atan2 jumps) |
//! | `sign(a, b)` | `sign(1,a) * sign(1,b)` | 0 | as `abs` for `a`: the sign bits decide at `±0`; 0 for `b` (the jump at `b = 0` is ignored) |
//! | `dim(a, b)` = `max(a - b, 0)` | Gate(`r == a - b`) | -Gate(`r == a - b`) | as for `max`: at `a = b` the tie goes to `a - b` (1, -1); a NaN difference gives 0 |
//! | `mod(a, b)` (real) | 1 | `-k`, `k = anint((a - r)/b)` = `aint(a/b)` | at the jumps (`a/b` an integer) the one-sided value of the branch the primal took; `k` is recovered from `r` so it matches the primal's quotient even where `a/b` rounds |
//! | `modulo(a, b)` (real) | 1 | `-k`, `k = anint((a - r)/b)` = `floor(a/b)` | as for `mod` |
//! | `real(a, kind)` float → float | 1 (in the target type) | | |
//! | float → integer (`int`, `nint`, `floor`, `ceiling`) | 0 | | integers are never active |
//! | integer / logical → float | none | | integers are never active |
//! | `select(c, a, b)` (merge) | Gate(`c`) | Gate(`not c`) | the condition is a logical: no derivative |
//! | constants, comparisons, logical ops, integer ops, bounds | none | | |
//!
//! Memory instructions (loads, stores), calls, character operations and the
//! runtime stacks are not elemental: [`partials`] returns `None` for them and
//! the transforms handle them.
//!
//! # Strong zeros
//!
//! Several partials are infinite or NaN at finite points: `sqrt` at 0,
//! `log` / `log10` at 0, `asin` / `acos` at ±1, both partials of a division
//! by 0, `a ** b` at `a = 0` with `b < 1`, `a ** n` at 0 with `n < 1`, `mod`
//! by 0, and `exp`, `sinh`, `cosh`, `tan` where they overflow. When such a
//! partial multiplies a derivative that is exactly zero (the tangent of a
//! value that does not vary in this direction, or the adjoint of a value
//! the outputs do not use, such as an intermediate that only feeds the
//! branch not taken), IEEE arithmetic gives `inf * 0 = NaN`, which poisons
//! every derivative it is added into although the true contribution is 0.
//! [`partials`] returns these partials as [`Partial::Singular`], and
//! [`accumulate`] forms their products as *strong zeros*:
//! `select(partial == 0 or d == 0, 0, partial * d)`, so `d = 0` (either sign) contributes
//! exactly 0 whatever the partial. The primal is untouched, and a singular
//! partial multiplying a non-zero derivative still gives ±inf or NaN: a
//! derivative that is genuinely infinite on the path taken is reported.
//!
//! The other partials ([`Partial::Value`]) are finite wherever the
//! operation's operands are. Both transforms guard every computed partial
//! by default ([`StrongZero::All`]), and in both factors: a zero partial
//! times an infinite derivative is 0 as well, so that a chain
//! `inf * (0 * 1)` of the tangent and its transpose `(inf * 1) * 0` in the
//! adjoint agree, and an infinite intermediate *value* (the `t` in `z = t*y`
//! after `t = 1/0`) used only where it does not matter never poisons a
//! derivative (cost: `cargo bench --bench strong_zero`). `atan2` at the
//! origin, `x ** 0` and `log(a)` for `a <= 0` in `a ** b` are zero by their
//! rules (selections), and `min` / `max` ties, `abs`, `sign` and `dim` are
//! gates or signs, never infinite.

use adjit_ir::special::Special;
use adjit_ir::{BinaryOp, BlockId, CmpOp, Const, Inst, Proc, Span, Type, UnaryOp, Value};
use std::f64::consts::FRAC_2_SQRT_PI;

/// `log10(e)`: the derivative of `log10` at 1.
const LOG10_E: f64 = std::f64::consts::LOG10_E;

/// Where rules put the instructions they emit: the insertion point of a
/// transform. Every emitted instruction defines a value.
pub trait Emit {
    /// Appends an instruction producing a value of type `ty`; returns it.
    fn emit(&mut self, inst: Inst, ty: Type) -> Value;
    /// The type of a value already defined (None for an effect).
    fn type_of(&self, v: Value) -> Option<Type>;
    /// The instruction defining a value already defined, when it is known
    /// (None for values the emitter cannot see).
    fn inst_of(&self, v: Value) -> Option<&Inst>;

    /// The value of a float constant (None for any other value).
    fn float_constant(&self, v: Value) -> Option<f64> {
        match self.inst_of(v) {
            Some(Inst::Const(Const::Float(x))) => Some(*x),
            _ => None,
        }
    }

    /// A float constant of type `ty`.
    fn float(&mut self, ty: Type, x: f64) -> Value {
        self.emit(Inst::Const(Const::Float(x)), ty)
    }
    /// A unary operation whose result has type `ty`.
    fn unary(&mut self, op: UnaryOp, a: Value, ty: Type) -> Value {
        self.emit(Inst::Unary(op, a), ty)
    }
    /// A binary operation whose result has type `ty`.
    fn binary(&mut self, op: BinaryOp, a: Value, b: Value, ty: Type) -> Value {
        self.emit(Inst::Binary(op, a, b), ty)
    }
    /// A comparison (result Bool).
    fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.emit(Inst::Cmp(op, a, b), Type::Bool)
    }
    /// `if cond { a } else { b }` of type `ty`.
    fn select(&mut self, cond: Value, a: Value, b: Value, ty: Type) -> Value {
        self.emit(Inst::Select(cond, a, b), ty)
    }
    /// `v` converted to `ty` (itself when it already has that type).
    fn convert_to(&mut self, v: Value, ty: Type) -> Value {
        if self.type_of(v) == Some(ty) {
            v
        } else {
            self.emit(Inst::Convert(v, adjit_ir::Rounding::Trunc), ty)
        }
    }
}

/// An [`Emit`] that appends to one block of a procedure, every instruction
/// with the same span.
pub struct BlockCursor<'a> {
    /// The procedure written.
    pub proc: &'a mut Proc,
    /// The block appended to.
    pub block: BlockId,
    /// The span given to every instruction.
    pub span: Span,
}

impl Emit for BlockCursor<'_> {
    fn emit(&mut self, inst: Inst, ty: Type) -> Value {
        self.proc.push_inst(self.block, inst, Some(ty), self.span)
    }
    fn type_of(&self, v: Value) -> Option<Type> {
        self.proc.insts.get(v.index()).and_then(|d| d.ty)
    }
    fn inst_of(&self, v: Value) -> Option<&Inst> {
        self.proc.insts.get(v.index()).map(|d| &d.kind)
    }
}

impl Emit for adjit_ir::builder::ProcBuilder<'_> {
    fn emit(&mut self, inst: Inst, ty: Type) -> Value {
        self.ins(inst, Some(ty))
    }
    fn type_of(&self, v: Value) -> Option<Type> {
        self.value_type(v)
    }
    fn inst_of(&self, v: Value) -> Option<&Inst> {
        self.proc().insts.get(v.index()).map(|d| &d.kind)
    }
}

/// A local partial derivative `dphi/du` of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partial {
    /// Identically zero (the operand is float but the operation is flat in
    /// it, e.g. rounding).
    Zero,
    /// Exactly 1.
    One,
    /// Exactly -1.
    MinusOne,
    /// A computed value, in the result type, finite wherever the
    /// operation's operands are finite (e.g. the operands of a product).
    Value(Value),
    /// A computed value, in the result type, that may be infinite or NaN
    /// where the operation's operands are finite: the singular points of
    /// `sqrt`, `log`, `asin`, a division by zero, or an overflow.
    Singular(Value),
    /// `+1` (or `-1` when `negative`) where the Bool `cond` equals `when`,
    /// 0 elsewhere.
    Gate {
        /// The Bool condition.
        cond: Value,
        /// The value of `cond` for which the partial is non-zero.
        when: bool,
        /// True when the non-zero value is -1.
        negative: bool,
    },
}

/// Emits the local partial derivatives of the elemental instruction `inst`
/// (whose operands are values of the procedure `e` writes into, and whose
/// result is `result` of type `ty`) with respect to every float operand for
/// which `wanted` is true, in operand order. An operand used twice (`x*x`,
/// `s - s`) appears once, with the sum of its two partials: summed before
/// they multiply a derivative, `s - s` stays exactly flat in `s` in both
/// transforms, so an infinite adjoint or tangent reaching it gives the
/// strong zero `inf * 0 = 0` rather than `inf - inf = NaN`.
///
/// Returns `Some(vec![])` for elemental instructions without a derivative
/// (constants, comparisons, integer and logical operations, conversions from
/// integers) and `None` for instructions that are not elemental operations
/// (memory, calls, characters, stacks): the transforms handle those.
pub fn partials(
    e: &mut dyn Emit,
    inst: &Inst,
    ty: Type,
    result: Value,
    wanted: &dyn Fn(Value) -> bool,
) -> Option<Vec<(Value, Partial)>> {
    let float_operand =
        |e: &dyn Emit, v: Value| e.type_of(v).is_some_and(Type::is_float) && wanted(v);
    if !is_elemental(inst) {
        return None;
    }
    let mut out = Vec::new();
    if !ty.is_float() {
        return Some(out);
    }
    match inst {
        Inst::Unary(op, a) if float_operand(e, *a) => {
            out.push((*a, unary_partial(e, *op, *a, ty, result)));
        }
        Inst::Binary(op, a, b) => {
            let (want_a, want_b) = (float_operand(e, *a), float_operand(e, *b));
            if want_a || want_b {
                binary_partials(e, *op, [*a, *b], [want_a, want_b], ty, result, &mut out);
            }
        }
        Inst::Convert(a, _) if float_operand(e, *a) => out.push((*a, Partial::One)),
        Inst::Select(cond, a, b) => {
            let gate = |when| Partial::Gate {
                cond: *cond,
                when,
                negative: false,
            };
            if float_operand(e, *a) {
                out.push((*a, gate(true)));
            }
            if float_operand(e, *b) {
                out.push((*b, gate(false)));
            }
        }
        // Constants, comparisons and bounds: no derivative.
        _ => {}
    }
    merge_repeated(e, &mut out, ty);
    Some(out)
}

/// Replaces the two entries of an operand used twice by one entry holding
/// the sum of their partials (an instruction has at most two float
/// operands, so at most one operand repeats).
fn merge_repeated(e: &mut dyn Emit, out: &mut Vec<(Value, Partial)>, ty: Type) {
    if let [(a, p), (b, q)] = out[..] {
        if a == b {
            *out = vec![(a, sum(e, p, q, ty))];
        }
    }
}

/// The partial `p + q` of one operand, symbolic where both are.
fn sum(e: &mut dyn Emit, p: Partial, q: Partial, ty: Type) -> Partial {
    use Partial as P;
    match (p, q) {
        (P::Zero, r) | (r, P::Zero) => r,
        (P::One, P::MinusOne) | (P::MinusOne, P::One) => P::Zero,
        (
            P::Gate {
                cond: c1,
                when: w1,
                negative: n1,
            },
            P::Gate {
                cond: c2,
                when: w2,
                negative: n2,
            },
        ) if c1 == c2 => match (w1 == w2, n1 == n2) {
            // `min(x, x)`, `select(c, x, x)`: exactly one gate is open.
            (false, true) if n1 => P::MinusOne,
            (false, true) => P::One,
            // `dim(x, x)`: one gate with opposite signs.
            (true, false) => P::Zero,
            _ => sum_values(e, p, q, ty),
        },
        _ => sum_values(e, p, q, ty),
    }
}

/// `p + q` emitted as a value: singular when either is.
fn sum_values(e: &mut dyn Emit, p: Partial, q: Partial, ty: Type) -> Partial {
    let singular = matches!(p, Partial::Singular(_)) || matches!(q, Partial::Singular(_));
    let (p, q) = (partial_value(e, p, ty), partial_value(e, q, ty));
    let total = e.binary(BinaryOp::Add, p, q, ty);
    if singular {
        Partial::Singular(total)
    } else {
        Partial::Value(total)
    }
}

/// The value of a partial, emitted in type `ty`.
fn partial_value(e: &mut dyn Emit, p: Partial, ty: Type) -> Value {
    match p {
        Partial::Zero => e.float(ty, 0.0),
        Partial::One => e.float(ty, 1.0),
        Partial::MinusOne => e.float(ty, -1.0),
        Partial::Value(v) | Partial::Singular(v) => v,
        Partial::Gate {
            cond,
            when,
            negative,
        } => {
            let unit = e.float(ty, if negative { -1.0 } else { 1.0 });
            let zero = e.float(ty, 0.0);
            let (if_true, if_false) = if when { (unit, zero) } else { (zero, unit) };
            e.select(cond, if_true, if_false, ty)
        }
    }
}

/// True for the instructions [`partials`] knows: pure operations on values.
pub fn is_elemental(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Const(_)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cmp(..)
            | Inst::Convert(..)
            | Inst::Select(..)
            | Inst::DimLower(..)
            | Inst::DimExtent(..)
            | Inst::CharCompare(..)
            | Inst::CharLen(..)
            | Inst::CharIndex(..)
            | Inst::CharSearch(..)
    )
}

/// The partial of a unary float operation `r = op(a)`.
fn unary_partial(e: &mut dyn Emit, op: UnaryOp, a: Value, ty: Type, r: Value) -> Partial {
    use UnaryOp as U;
    let (value, singular) = (Partial::Value, Partial::Singular);
    match op {
        U::Neg => Partial::MinusOne,
        U::Abs => {
            // -1 below zero, +1 from zero on, -0.0 included: the side a
            // program's own test (`if (x < 0) ...`, `x >= 0`) puts the
            // point on, where SIGN(1, x) would answer -1 for -0.0 (Jacobi's
            // rotation at theta = 0.5*0/(-a) = -0.0 takes the `theta >= 0`
            // branch, and its derivative must be that branch's).
            let one = e.float(ty, 1.0);
            let zero = e.float(ty, 0.0);
            let minus_one = e.float(ty, -1.0);
            let below = e.cmp(CmpOp::Lt, a, zero);
            value(e.select(below, minus_one, one, ty))
        }
        U::Sqrt => singular(reciprocal(e, 0.5, r, ty)),
        // exp, sinh, cosh and tan overflow at finite arguments.
        U::Exp => singular(r),
        U::Log => singular(reciprocal(e, 1.0, a, ty)),
        U::Log10 => singular(reciprocal(e, LOG10_E, a, ty)),
        U::Sin => value(e.unary(U::Cos, a, ty)),
        U::Cos => {
            let s = e.unary(U::Sin, a, ty);
            value(e.unary(U::Neg, s, ty))
        }
        U::Tan => singular(one_plus_or_minus_square(e, r, BinaryOp::Add, ty)),
        U::Tanh => value(one_plus_or_minus_square(e, r, BinaryOp::Sub, ty)),
        U::Asin | U::Acos => {
            let one = e.float(ty, 1.0);
            let sq = e.binary(BinaryOp::Mul, a, a, ty);
            let diff = e.binary(BinaryOp::Sub, one, sq, ty);
            let root = e.unary(U::Sqrt, diff, ty);
            let numerator = if op == U::Asin { 1.0 } else { -1.0 };
            singular(reciprocal(e, numerator, root, ty))
        }
        U::Atan => {
            let sum = one_plus_or_minus_square(e, a, BinaryOp::Add, ty);
            value(reciprocal(e, 1.0, sum, ty))
        }
        U::Sinh => singular(e.unary(U::Cosh, a, ty)),
        U::Cosh => singular(e.unary(U::Sinh, a, ty)),
        U::Special(s) => special_partial(e, s, a, ty, r),
        U::Floor | U::Ceil | U::Trunc | U::Round => Partial::Zero,
        // Logical: never reached for a float result.
        U::Not => Partial::Zero,
    }
}

/// The partial of a special function `r = s(a)`.
fn special_partial(e: &mut dyn Emit, s: Special, a: Value, ty: Type, r: Value) -> Partial {
    let (value, singular) = (Partial::Value, Partial::Singular);
    let special = |e: &mut dyn Emit, s: Special| e.unary(UnaryOp::Special(s), a, ty);
    match s {
        Special::Erf | Special::Erfc => {
            let sq = e.binary(BinaryOp::Mul, a, a, ty);
            let neg = e.unary(UnaryOp::Neg, sq, ty);
            let ex = e.unary(UnaryOp::Exp, neg, ty);
            let scale = if s == Special::Erf {
                FRAC_2_SQRT_PI
            } else {
                -FRAC_2_SQRT_PI
            };
            let c = e.float(ty, scale);
            value(e.binary(BinaryOp::Mul, c, ex, ty))
        }
        Special::Gamma => {
            let psi = special(e, Special::Polygamma(0));
            singular(e.binary(BinaryOp::Mul, r, psi, ty))
        }
        Special::LogGamma => singular(special(e, Special::Polygamma(0))),
        Special::Polygamma(n) => match n.checked_add(1) {
            Some(m) => singular(special(e, Special::Polygamma(m))),
            None => singular(e.float(ty, f64::NAN)),
        },
        Special::BesselJ0 => {
            let j1 = special(e, Special::BesselJ1);
            value(e.unary(UnaryOp::Neg, j1, ty))
        }
        Special::BesselJ1 => {
            let j0 = special(e, Special::BesselJ0);
            let q = e.binary(BinaryOp::Div, r, a, ty);
            let d = e.binary(BinaryOp::Sub, j0, q, ty);
            let zero = e.float(ty, 0.0);
            let at_zero = e.cmp(CmpOp::Eq, a, zero);
            let half = e.float(ty, 0.5);
            value(e.select(at_zero, half, d, ty))
        }
    }
}

/// `scale / x` in type `ty`; a constant when `x` is a constant (the
/// quotient rounded as the division would round it).
fn reciprocal(e: &mut dyn Emit, scale: f64, x: Value, ty: Type) -> Value {
    if let Some(c) = e.float_constant(x) {
        let q = if ty == Type::F32 {
            f64::from(scale as f32 / c as f32)
        } else {
            scale / c
        };
        return e.float(ty, q);
    }
    let c = e.float(ty, scale);
    e.binary(BinaryOp::Div, c, x, ty)
}

/// `1 ± x*x`.
fn one_plus_or_minus_square(e: &mut dyn Emit, x: Value, op: BinaryOp, ty: Type) -> Value {
    let one = e.float(ty, 1.0);
    let sq = e.binary(BinaryOp::Mul, x, x, ty);
    e.binary(op, one, sq, ty)
}

/// The partials of a binary operation `r = op(a, b)` with a float result,
/// for the operands flagged in `want`.
fn binary_partials(
    e: &mut dyn Emit,
    op: BinaryOp,
    [a, b]: [Value; 2],
    [want_a, want_b]: [bool; 2],
    ty: Type,
    r: Value,
    out: &mut Vec<(Value, Partial)>,
) {
    use BinaryOp as B;
    match op {
        B::Add => {
            push(e, out, want_a, a, |_| Partial::One);
            push(e, out, want_b, b, |_| Partial::One);
        }
        B::Sub => {
            push(e, out, want_a, a, |_| Partial::One);
            push(e, out, want_b, b, |_| Partial::MinusOne);
        }
        B::Mul => {
            push(e, out, want_a, a, |_| Partial::Value(b));
            push(e, out, want_b, b, |_| Partial::Value(a));
        }
        B::Div => {
            // Both singular at b = 0. When both are wanted they share one
            // division: -r/b is formed as -(r * (1/b)), a product, so a
            // quotient of two active operands costs one division beside
            // the primal's rather than two (the two roundings keep it
            // within two ulps of -(r/b)).
            let inv = (want_a && want_b).then(|| reciprocal(e, 1.0, b, ty));
            push(e, out, want_a, a, |e| {
                Partial::Singular(inv.unwrap_or_else(|| reciprocal(e, 1.0, b, ty)))
            });
            push(e, out, want_b, b, |e| {
                let q = match inv {
                    Some(inv) => e.binary(B::Mul, r, inv, ty),
                    None => e.binary(B::Div, r, b, ty),
                };
                Partial::Singular(e.unary(UnaryOp::Neg, q, ty))
            });
        }
        B::Pow => {
            push(e, out, want_a, a, |e| {
                // b * a**(b-1), 0 where b = 0.
                let zero = e.float(ty, 0.0);
                let one = e.float(ty, 1.0);
                let bm1 = e.binary(B::Sub, b, one, ty);
                let p = e.binary(B::Pow, a, bm1, ty);
                let d = e.binary(B::Mul, b, p, ty);
                let b_is_zero = e.cmp(CmpOp::Eq, b, zero);
                Partial::Singular(e.select(b_is_zero, zero, d, ty))
            });
            push(e, out, want_b, b, |e| {
                // log(a) * r where a > 0, else 0.
                let zero = e.float(ty, 0.0);
                let l = e.unary(UnaryOp::Log, a, ty);
                let d = e.binary(B::Mul, l, r, ty);
                let positive = e.cmp(CmpOp::Gt, a, zero);
                Partial::Singular(e.select(positive, d, zero, ty))
            });
        }
        B::PowI => {
            // Only the base is float: n * a**(n-1), 0 where n = 0.
            push(e, out, want_a, a, |e| {
                let int_ty = e.type_of(b).unwrap_or(Type::I32);
                let zero_int = e.emit(Inst::Const(Const::Int(0)), int_ty);
                let one_int = e.emit(Inst::Const(Const::Int(1)), int_ty);
                let nm1 = e.binary(B::Sub, b, one_int, int_ty);
                let p = e.binary(B::PowI, a, nm1, ty);
                let n = e.convert_to(b, ty);
                let d = e.binary(B::Mul, n, p, ty);
                let zero = e.float(ty, 0.0);
                let n_is_zero = e.cmp(CmpOp::Eq, b, zero_int);
                Partial::Singular(e.select(n_is_zero, zero, d, ty))
            });
        }
        B::Min | B::Max => {
            // The partial goes to the argument the primal returned; at a
            // tie with a constant, to the constant: `max(x, 0d0)` is flat
            // at `x = 0`, so a singular point behind it (`sqrt(max(x, 0d0))`)
            // never sends an infinite derivative on to `x`.
            let constant = |e: &dyn Emit, v| e.float_constant(v).is_some();
            let a_chosen = if constant(e, b) && !constant(e, a) {
                e.cmp(CmpOp::Ne, r, b)
            } else {
                e.cmp(CmpOp::Eq, r, a)
            };
            let gate = |when| Partial::Gate {
                cond: a_chosen,
                when,
                negative: false,
            };
            push(e, out, want_a, a, |_| gate(true));
            push(e, out, want_b, b, |_| gate(false));
        }
        B::Atan2 => {
            // inv = 1/(a*a + b*b), 0 at the origin.
            let zero = e.float(ty, 0.0);
            let aa = e.binary(B::Mul, a, a, ty);
            let bb = e.binary(B::Mul, b, b, ty);
            let den = e.binary(B::Add, aa, bb, ty);
            let recip = reciprocal(e, 1.0, den, ty);
            let at_origin = e.cmp(CmpOp::Eq, den, zero);
            let inv = e.select(at_origin, zero, recip, ty);
            push(e, out, want_a, a, |e| {
                Partial::Value(e.binary(B::Mul, b, inv, ty))
            });
            push(e, out, want_b, b, |e| {
                let t = e.binary(B::Mul, a, inv, ty);
                Partial::Value(e.unary(UnaryOp::Neg, t, ty))
            });
        }
        B::Sign => {
            push(e, out, want_a, a, |e| {
                let one = e.float(ty, 1.0);
                let sa = e.binary(B::Sign, one, a, ty);
                let sb = e.binary(B::Sign, one, b, ty);
                Partial::Value(e.binary(B::Mul, sa, sb, ty))
            });
            push(e, out, want_b, b, |_| Partial::Zero);
        }
        B::Dim => {
            // DIM is Max(a - b, 0): the difference is chosen iff r == a - b.
            let diff = e.binary(B::Sub, a, b, ty);
            let chosen = e.cmp(CmpOp::Eq, r, diff);
            let gate = |negative| Partial::Gate {
                cond: chosen,
                when: true,
                negative,
            };
            push(e, out, want_a, a, |_| gate(false));
            push(e, out, want_b, b, |_| gate(true));
        }
        B::Mod | B::Modulo => {
            push(e, out, want_a, a, |_| Partial::One);
            push(e, out, want_b, b, |e| {
                // k = anint((a - r) / b): the quotient the primal used.
                let diff = e.binary(B::Sub, a, r, ty);
                let q = e.binary(B::Div, diff, b, ty);
                let k = e.unary(UnaryOp::Round, q, ty);
                Partial::Singular(e.unary(UnaryOp::Neg, k, ty))
            });
        }
        // Logical: never reached for a float result.
        B::And | B::Or | B::Eqv | B::Neqv => {}
    }
}

/// Which products `partial * d` [`accumulate`] forms as strong zeros
/// (`select(partial == 0 or d == 0, 0, partial * d)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrongZero {
    /// None: IEEE products (`inf * 0 = NaN`).
    Off,
    /// Those with a [`Partial::Singular`] partial: a singular intrinsic on
    /// a path whose derivative is zero. Cheaper, but neither mode is then
    /// safe from an infinite *value*: `z = t*y` after `t = 1/0` poisons the
    /// adjoint of `y` where `z` is unused, and a tangent that is genuinely
    /// infinite (`sqrt` at 0) times a partial that is exactly zero gives NaN.
    Singular,
    /// Every computed partial (the default of both transforms): adjoints
    /// flow backward into every statement executed, tangents forward from
    /// every singular point, so only a rule applied to every product keeps
    /// one unused singular intermediate from poisoning a derivative and
    /// keeps the two modes transposes of each other.
    All,
    /// As [`StrongZero::All`] in value, written so that the code can be
    /// differentiated again: where both factors are finite the product
    /// itself is kept (not a constant 0 where one of them vanishes), so a
    /// tangent of it keeps `p' * d + p * d'`; only an infinite or NaN factor
    /// meets the strong zero. Costs a finiteness test per product: for
    /// derivative code that is itself differentiated (ADF / ADR blocks).
    Differentiable,
}

/// Computes the partial `p` of operand `v` and records it, when wanted.
fn push(
    e: &mut dyn Emit,
    out: &mut Vec<(Value, Partial)>,
    want: bool,
    v: Value,
    p: impl FnOnce(&mut dyn Emit) -> Partial,
) {
    if want {
        let p = p(e);
        out.push((v, p));
    }
}

/// Emits `acc + partial * d` (or `partial * d` when `acc` is `None`) in type
/// `ty`, the accumulator's type; `d` is first converted to `ty` when its type
/// differs (float-to-float conversions). Returns `acc` unchanged for a zero
/// partial, so `None` means "still identically zero".
///
/// With `strong_zero` (the transforms' default), a computed partial
/// contributes exactly 0 where `d` is zero, even when the partial is
/// infinite or NaN (see the module documentation); without it the product
/// follows IEEE arithmetic (`inf * 0 = NaN`).
///
/// Tangent: fold over an instruction's partials starting from `None` with
/// `d = u_d` to get the result's tangent. Adjoint: call with `acc = u_b`,
/// `d = r_b` to get the incremented adjoint of an operand.
pub fn accumulate(
    e: &mut dyn Emit,
    acc: Option<Value>,
    partial: &Partial,
    d: Value,
    ty: Type,
    strong_zero: StrongZero,
) -> Option<Value> {
    let d = e.convert_to(d, ty);
    match *partial {
        Partial::Zero => acc,
        Partial::One => Some(match acc {
            Some(acc) => e.binary(BinaryOp::Add, acc, d, ty),
            None => d,
        }),
        Partial::MinusOne => Some(match acc {
            Some(acc) => e.binary(BinaryOp::Sub, acc, d, ty),
            None => e.unary(UnaryOp::Neg, d, ty),
        }),
        Partial::Value(p) | Partial::Singular(p) => {
            let guard = match strong_zero {
                StrongZero::Off => Guard::None,
                StrongZero::Singular if matches!(partial, Partial::Singular(_)) => Guard::Strong,
                StrongZero::Singular => Guard::None,
                StrongZero::All => Guard::Strong,
                StrongZero::Differentiable => Guard::Differentiable,
            };
            let t = product(e, p, d, ty, guard);
            Some(match acc {
                Some(acc) => e.binary(BinaryOp::Add, acc, t, ty),
                None => t,
            })
        }
        Partial::Gate {
            cond,
            when,
            negative,
        } => {
            if let Some(both) = second_gate(e, acc, cond, when, negative, d, ty) {
                return Some(both);
            }
            let unit = if negative {
                Partial::MinusOne
            } else {
                Partial::One
            };
            let moved = accumulate(e, acc, &unit, d, ty, strong_zero)
                .expect("a unit partial gives a value");
            let kept = match acc {
                Some(acc) => acc,
                None => e.float(ty, 0.0),
            };
            let (if_true, if_false) = if when { (moved, kept) } else { (kept, moved) };
            Some(e.select(cond, if_true, if_false, ty))
        }
    }
}

/// The two gates of a select (`select(c, a, b)`: `a` then `b`) summed
/// into one accumulator: when `acc` is the first gate's `select(c, x, +0)`,
/// the second gives `select(c, x, d)` rather than `select(c, acc, acc +
/// d)`, which differs only in turning a `-0` `d` into `+0`. Code
/// differentiated again then keeps the select's shape, and the JIT folds
/// the strong-zero guards of nested tangents through it.
fn second_gate(
    e: &mut dyn Emit,
    acc: Option<Value>,
    cond: Value,
    when: bool,
    negative: bool,
    d: Value,
    ty: Type,
) -> Option<Value> {
    if when || negative {
        return None;
    }
    let Some(Inst::Select(c, x, zero)) = e.inst_of(acc?) else {
        return None;
    };
    let (c, x, zero) = (*c, *x, *zero);
    let positive_zero = e
        .float_constant(zero)
        .is_some_and(|z| z.to_bits() == 0.0f64.to_bits());
    (c == cond && positive_zero && e.type_of(x) == Some(ty)).then(|| e.select(cond, x, d, ty))
}

/// How [`product`] guards `p * d` (from the [`StrongZero`] level).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Guard {
    /// IEEE product.
    None,
    /// `select(p == 0 or d == 0, 0, p * d)`.
    Strong,
    /// The strong zero only where a factor is not finite.
    Differentiable,
}

/// Emits `p * d` in type `ty`; when guarded, as
/// `select(p == 0 or d == 0, 0, p * d)`, a strong zero in *both* factors, so
/// that the tangent and the adjoint stay transposes of each other at a
/// singular point: a chain `inf * (0 * 1)` in one mode is `(inf * 1) * 0` in
/// the other. A finite non-zero constant `p` needs only the `d` test, and a
/// finite constant none (its product with a zero is already zero, and with
/// an infinite `d` genuinely infinite). [`Guard::Differentiable`] keeps the
/// plain product wherever both factors are finite.
fn product(e: &mut dyn Emit, p: Value, d: Value, ty: Type, guard: Guard) -> Value {
    let t = e.binary(BinaryOp::Mul, p, d, ty);
    let constant = e.float_constant(p);
    if guard == Guard::None || constant.is_some_and(f64::is_finite) {
        return t;
    }
    let zero = e.float(ty, 0.0);
    let d_is_zero = e.cmp(CmpOp::Eq, d, zero);
    if constant.is_some() {
        return e.select(d_is_zero, zero, t, ty);
    }
    let p_is_zero = e.cmp(CmpOp::Eq, p, zero);
    let either_is_zero = e.binary(BinaryOp::Or, d_is_zero, p_is_zero, Type::Bool);
    let strong = e.select(either_is_zero, zero, t, ty);
    if guard == Guard::Strong {
        return strong;
    }
    // Where both factors are finite the product itself is kept, not a
    // constant 0 where one of them vanishes: code differentiated again
    // (tangent over tangent, tangent over adjoint) then differentiates
    // `p * d`, whose derivative `dp * d + p * dd` need not vanish there.
    let infinity = e.float(ty, f64::INFINITY);
    let finite = |e: &mut dyn Emit, x: Value| {
        let a = e.unary(UnaryOp::Abs, x, ty);
        e.cmp(CmpOp::Lt, a, infinity)
    };
    let p_finite = finite(e, p);
    let d_finite = finite(e, d);
    let both_finite = e.binary(BinaryOp::And, p_finite, d_finite, Type::Bool);
    e.select(both_finite, t, strong, ty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::buffer::Buffer;
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::interp::Interpreter;
    use adjit_ir::Module;

    /// A constructor of a computed partial.
    type MakePartial = fn(Value) -> Partial;

    /// Runs `out = accumulate(None, make(p), d)` with `p` and `d`
    /// read from parameters (so nothing is constant), in a procedure of its
    /// own; returns `out`.
    fn product_of(make: MakePartial, zeros: StrongZero, p: f64, d: f64) -> f64 {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let [pv, dv, out] = ["p", "d", "out"].map(|n| b.param(n, Type::F64, vec![]));
        let (lp, ld) = (b.load(pv), b.load(dv));
        let r = accumulate(&mut b, None, &make(lp), ld, Type::F64, zeros).expect("a value");
        b.store(out, r);
        b.ret();
        let mut m = Module::default();
        let f = m.add_proc(proc);
        let mut args = [p, d, 0.0].map(|x| {
            let mut buf = Buffer::zeros(Type::F64, 1);
            buf.set_f64(0, x);
            buf
        });
        Interpreter::new(&m).call(f, &mut args).expect("runs");
        args[2].get_f64(0)
    }

    #[test]
    fn strong_zero_levels_guard_the_products_they_name() {
        let inf = f64::INFINITY;
        let (value, singular): (MakePartial, MakePartial) = (Partial::Value, Partial::Singular);
        for (zeros, guards_value, guards_singular) in [
            (StrongZero::Off, false, false),
            (StrongZero::Singular, false, true),
            (StrongZero::All, true, true),
        ] {
            for (make, guarded) in [(value, guards_value), (singular, guards_singular)] {
                for d in [0.0, -0.0] {
                    // Strong in both factors: a zero partial times an
                    // infinite or NaN derivative, and the other way round.
                    for (p, d) in [(inf, d), (f64::NAN, d), (d, -inf), (d, f64::NAN)] {
                        let r = product_of(make, zeros, p, d);
                        assert!(
                            if guarded { r == 0.0 } else { r.is_nan() },
                            "{zeros:?}: {p} * {d} = {r}"
                        );
                    }
                }
                // A non-zero derivative keeps the infinity (genuine).
                assert_eq!(product_of(make, zeros, inf, -2.0), -inf, "{zeros:?}");
                assert_eq!(product_of(make, zeros, 3.0, 0.5), 1.5, "{zeros:?}");
            }
        }
    }

    #[test]
    fn constant_partials_need_no_guard_and_reciprocals_of_constants_fold() {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let lx = b.load(x);
        let twelve = b.fconst(Type::F64, 12.0);
        let q = b.binary(BinaryOp::Div, lx, twelve);
        let parts = partials(
            &mut b,
            &Inst::Binary(BinaryOp::Div, lx, twelve),
            Type::F64,
            q,
            &|_| true,
        )
        .expect("elemental");
        let Partial::Singular(p) = parts[0].1 else {
            panic!("{parts:?}")
        };
        assert_eq!(b.float_constant(p), Some(1.0 / 12.0));
        let before = b.proc().insts.len();
        let d = b.load(x);
        accumulate(&mut b, None, &parts[0].1, d, Type::F64, StrongZero::All);
        assert_eq!(
            b.proc().insts.len(),
            before + 2,
            "one load and one multiplication, no guard"
        );
    }

    /// The two gates of `select(s > 0, a, b)` accumulated in order give
    /// `select(s > 0, da, db)` itself: one select, `db`'s sign kept.
    #[test]
    fn the_gates_of_a_select_accumulate_to_one_select() {
        for (s, da, db) in [(1.0, 2.5, -3.0), (-1.0, 2.5, -3.0), (-1.0, 2.5, -0.0)] {
            let mut proc = Proc::new("f");
            let mut b = ProcBuilder::new(&mut proc);
            let [sv, av, bv, out] = ["s", "da", "db", "out"].map(|n| b.param(n, Type::F64, vec![]));
            let (ls, la, lb) = (b.load(sv), b.load(av), b.load(bv));
            let zero = b.fconst(Type::F64, 0.0);
            let cond = b.cmp(CmpOp::Gt, ls, zero);
            let gate = |when| Partial::Gate {
                cond,
                when,
                negative: false,
            };
            let z = StrongZero::Differentiable;
            let first = accumulate(&mut b, None, &gate(true), la, Type::F64, z);
            let r = accumulate(&mut b, first, &gate(false), lb, Type::F64, z).expect("a value");
            assert_eq!(b.proc().inst(r).kind, Inst::Select(cond, la, lb));
            b.store(out, r);
            b.ret();
            let mut m = Module::default();
            let f = m.add_proc(proc);
            let mut args = [s, da, db, 0.0].map(|x| {
                let mut buf = Buffer::zeros(Type::F64, 1);
                buf.set_f64(0, x);
                buf
            });
            Interpreter::new(&m).call(f, &mut args).expect("runs");
            let want = if s > 0.0 { da } else { db };
            assert_eq!(args[3].get_f64(0).to_bits(), want.to_bits(), "s = {s}");
        }
    }

    /// The partials of `op(x, x)` for a parameter `x`.
    fn partials_of_repeated(op: BinaryOp) -> Vec<(Value, Partial)> {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let lx = b.load(x);
        let r = b.binary(op, lx, lx);
        let inst = Inst::Binary(op, lx, lx);
        let parts = partials(&mut b, &inst, Type::F64, r, &|_| true).expect("elemental");
        assert!(parts.iter().all(|(u, _)| *u == lx), "{parts:?}");
        parts
    }

    #[test]
    fn an_operand_used_twice_gets_one_summed_partial() {
        use BinaryOp as B;
        // Symbolic sums: `x - x` and `dim(x, x)` are flat, `min(x, x)` is x.
        for op in [B::Sub, B::Dim] {
            assert!(matches!(partials_of_repeated(op)[..], [(_, Partial::Zero)]));
        }
        for op in [B::Min, B::Max] {
            assert!(matches!(partials_of_repeated(op)[..], [(_, Partial::One)]));
        }
        // Computed sums: one entry, its kind kept.
        assert!(matches!(
            partials_of_repeated(B::Add)[..],
            [(_, Partial::Value(_))]
        ));
        assert!(matches!(
            partials_of_repeated(B::Mul)[..],
            [(_, Partial::Value(_))]
        ));
        assert!(matches!(
            partials_of_repeated(B::Div)[..],
            [(_, Partial::Singular(_))]
        ));
    }
}
