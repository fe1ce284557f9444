//! The procedures and constants of the intrinsic module IEEE_ARITHMETIC
//! that the subset supports: the inquiries `ieee_is_nan`,
//! `ieee_is_finite`, `ieee_is_negative` (logical results, elemental),
//! `ieee_copy_sign` (elemental) and `ieee_value(x, class)` for the classes
//! of [`CLASSES`], lowered to IR arithmetic and comparisons.
//!
//! The inquiries are passive for derivatives (logical results);
//! `ieee_copy_sign(x, y)` is Fortran's SIGN of a real (`|x|` with the sign
//! of `y`, the sign of a zero included), whose derivative in `x` is the
//! sign flip `sign(1, x) * sign(1, y)`; `ieee_value` is a constant. The
//! names are known as intrinsics without the USE (gfortran needs it).

use super::super::ast::{Expr, Name};
use super::consts::ConstVal;
use super::lowerer::{Lowerer, R};
use super::scope::IEEE_CLASSES as CLASSES;
use adjit_ir::{BinaryOp, CmpOp, Const, Inst, Type, UnaryOp, Value};

/// One procedure of IEEE_ARITHMETIC.
#[derive(Clone, Copy)]
pub(super) enum IeeeFn {
    /// `ieee_is_nan(x)`.
    IsNan,
    /// `ieee_is_finite(x)`: neither infinite nor NaN.
    IsFinite,
    /// `ieee_is_negative(x)`: a negative number, zero or infinity (not NaN).
    IsNegative,
    /// `ieee_copy_sign(x, y)`.
    CopySign,
    /// `ieee_value(x, class)`.
    Value,
}

impl IeeeFn {
    /// The procedure named `name`.
    pub(super) fn from_name(name: &str) -> Option<IeeeFn> {
        Some(match name {
            "ieee_is_nan" => IeeeFn::IsNan,
            "ieee_is_finite" => IeeeFn::IsFinite,
            "ieee_is_negative" => IeeeFn::IsNegative,
            "ieee_copy_sign" => IeeeFn::CopySign,
            "ieee_value" => IeeeFn::Value,
            _ => return None,
        })
    }
}

impl Lowerer<'_, '_> {
    /// Lowers a reference to an IEEE_ARITHMETIC procedure with the
    /// positional arguments `args`: its value and type.
    pub(super) fn ieee_fn(
        &mut self,
        which: IeeeFn,
        name: &Name,
        args: &[&Expr],
    ) -> R<(Value, Type)> {
        let arity = if matches!(which, IeeeFn::CopySign | IeeeFn::Value) {
            2
        } else {
            1
        };
        if args.len() != arity {
            return Err(self.err(
                name.span,
                format!("wrong number of arguments to `{}`", name.text),
            ));
        }
        let (x, t) = self.num(args[0])?;
        if !t.is_float() {
            return Err(self.err(
                args[0].span,
                format!("the argument of `{}` must be real", name.text),
            ));
        }
        let b = Type::Bool;
        let same = |this: &mut Self| this.val(Inst::Cmp(CmpOp::Eq, x, x), b);
        Ok(match which {
            IeeeFn::IsNan => (self.val(Inst::Cmp(CmpOp::Ne, x, x), b), b),
            IeeeFn::IsFinite => {
                let size = self.val(Inst::Unary(UnaryOp::Abs, x), t);
                let huge = self.konst(Const::Float(float_max(t)), t);
                (self.val(Inst::Cmp(CmpOp::Le, size, huge), b), b)
            }
            IeeeFn::IsNegative => {
                let one = self.konst(Const::Float(1.0), t);
                let zero = self.konst(Const::Float(0.0), t);
                let signed = self.val(Inst::Binary(BinaryOp::Sign, one, x), t);
                let negative = self.val(Inst::Cmp(CmpOp::Lt, signed, zero), b);
                let number = same(self);
                let both = self.val(Inst::Binary(BinaryOp::And, negative, number), b);
                (both, b)
            }
            IeeeFn::CopySign => {
                let (y, u) = self.num(args[1])?;
                if !u.is_float() {
                    return Err(self.err(
                        args[1].span,
                        format!("the arguments of `{}` must be real", name.text),
                    ));
                }
                let y = self.convert(y, u, t);
                (self.val(Inst::Binary(BinaryOp::Sign, x, y), t), t)
            }
            IeeeFn::Value => {
                let class = match self.fold(args[1]) {
                    Ok(ConstVal::Int(c, _)) => c,
                    _ => {
                        return Err(self.err(
                            args[1].span,
                            "the class of `ieee_value` must be a constant of \
                             IEEE_ARITHMETIC (ieee_quiet_nan, ieee_positive_inf, ...)",
                        ))
                    }
                };
                let value = class_value(class).ok_or_else(|| {
                    self.err(
                        args[1].span,
                        format!(
                            "unsupported Fortran: this IEEE class in `ieee_value` (only {})",
                            CLASSES.map(|c| c.0).join(", ")
                        ),
                    )
                })?;
                (self.konst(Const::Float(value), t), t)
            }
        })
    }
}

/// The value `ieee_value` makes for the class numbered `class` in
/// [`CLASSES`].
fn class_value(class: i64) -> Option<f64> {
    let name = CLASSES.iter().find(|c| c.1 == class)?.0;
    Some(match name {
        "ieee_signaling_nan" | "ieee_quiet_nan" => f64::NAN,
        "ieee_negative_inf" => f64::NEG_INFINITY,
        "ieee_positive_inf" => f64::INFINITY,
        "ieee_negative_zero" => -0.0,
        _ => 0.0,
    })
}

/// The largest finite value of a real type.
fn float_max(t: Type) -> f64 {
    if t == Type::F32 {
        f32::MAX as f64
    } else {
        f64::MAX
    }
}
