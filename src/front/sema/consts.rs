//! Compile-time constants: folding of PARAMETER values, kind selectors,
//! array bounds and DATA values (Fortran constant expressions).
//!
//! It folds values; it emits no IR.

use super::super::ast::{ArgValue, BinOp, Expr, ExprKind, KindParam, UnOp};
use super::super::diag::{byte_char, literal_bytes};
use adjit_ir::{Const, Type};

/// A folded constant with its Fortran type.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstVal {
    /// An integer of type I32 or I64.
    Int(i64, Type),
    /// A real of type F32 or F64 (an F32 value is exactly representable).
    Real(f64, Type),
    /// A logical.
    Bool(bool),
    /// A character string.
    Str(String),
}

impl ConstVal {
    /// The IR type of the constant (`Char` for strings).
    pub fn ty(&self) -> Type {
        match self {
            ConstVal::Int(_, t) | ConstVal::Real(_, t) => *t,
            ConstVal::Bool(_) => Type::Bool,
            ConstVal::Str(_) => Type::Char,
        }
    }
    /// The value converted to a numeric or logical type, as Fortran
    /// assignment converts (`None` for an impossible conversion).
    pub fn convert(&self, to: Type) -> Option<ConstVal> {
        Some(match (self, to) {
            (ConstVal::Int(v, _), Type::I32) => ConstVal::Int(*v as i32 as i64, to),
            (ConstVal::Int(v, _), Type::I64) => ConstVal::Int(*v, to),
            (ConstVal::Int(v, _), Type::F32) => ConstVal::Real(*v as f32 as f64, to),
            (ConstVal::Int(v, _), Type::F64) => ConstVal::Real(*v as f64, to),
            (ConstVal::Real(v, _), Type::F32) => ConstVal::Real(*v as f32 as f64, to),
            (ConstVal::Real(v, _), Type::F64) => ConstVal::Real(*v, to),
            (ConstVal::Real(v, _), Type::I32) => ConstVal::Int(*v as i32 as i64, to),
            (ConstVal::Real(v, _), Type::I64) => ConstVal::Int(*v as i64, to),
            (ConstVal::Bool(b), Type::Bool) => ConstVal::Bool(*b),
            (ConstVal::Str(s), Type::Char) => ConstVal::Str(s.clone()),
            _ => return None,
        })
    }
    /// The IR constant of a numeric or logical value.
    pub fn to_ir(&self) -> Option<Const> {
        match self {
            ConstVal::Int(v, _) => Some(Const::Int(*v)),
            ConstVal::Real(v, _) => Some(Const::Float(*v)),
            ConstVal::Bool(b) => Some(Const::Bool(*b)),
            ConstVal::Str(_) => None,
        }
    }
    /// The integer value, if the constant is an integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            ConstVal::Int(v, _) => Some(*v),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        match self {
            ConstVal::Int(v, _) => Some(*v as f64),
            ConstVal::Real(v, _) => Some(*v),
            _ => None,
        }
    }
}

/// The Fortran name of a numeric or logical type (`real(8)`).
pub fn type_name(t: Type) -> &'static str {
    match t {
        Type::F32 => "real(4)",
        Type::F64 => "real(8)",
        Type::I32 => "integer(4)",
        Type::I64 => "integer(8)",
        Type::Bool => "logical",
        Type::Char => "character",
    }
}

/// The type both operands of a numeric binary operation are converted to
/// (Fortran mixed-mode rules: integer to real, narrow to wide).
pub fn promote(a: Type, b: Type) -> Type {
    let rank = |t: Type| match t {
        Type::I32 => 0,
        Type::I64 => 1,
        Type::F32 => 2,
        Type::F64 => 3,
        _ => 0,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The value of a real literal in its kind: a default-kind literal is
/// rounded to f32 first, as gfortran does.
pub fn real_literal(text: &str, ty: Type) -> Option<f64> {
    match ty {
        Type::F32 => text.parse::<f32>().ok().map(f64::from),
        _ => text.parse::<f64>().ok(),
    }
}

/// The IR type of a REAL kind number.
pub fn real_kind(k: i64) -> Option<Type> {
    match k {
        4 => Some(Type::F32),
        8 => Some(Type::F64),
        _ => None,
    }
}

/// The IR type of an INTEGER kind number.
pub fn int_kind(k: i64) -> Option<Type> {
    match k {
        1 | 2 | 4 => Some(Type::I32),
        8 => Some(Type::I64),
        _ => None,
    }
}

/// The kind number of a type.
pub fn kind_of(t: Type) -> i64 {
    match t {
        Type::F32 | Type::I32 => 4,
        Type::F64 | Type::I64 => 8,
        Type::Bool => 4,
        Type::Char => 1,
    }
}

/// Why a constant expression could not be folded.
pub struct NotConst {
    /// Where.
    pub span: adjit_ir::Span,
    /// What is wrong.
    pub message: String,
}

fn not_const(e: &Expr, message: impl Into<String>) -> NotConst {
    NotConst {
        span: e.span,
        message: message.into(),
    }
}

/// Folds a constant expression; `lookup` gives the value of named constants
/// (PARAMETERs), `None` for any other name.
pub fn fold(e: &Expr, lookup: &dyn Fn(&str) -> Option<ConstVal>) -> Result<ConstVal, NotConst> {
    match &e.kind {
        ExprKind::Int { value, kind } => {
            let ty = match kind {
                None => Type::I32,
                Some(k) => {
                    let k = fold_kind_param(e, k, lookup)?;
                    int_kind(k)
                        .ok_or_else(|| not_const(e, format!("unsupported INTEGER kind {k}")))?
                }
            };
            Ok(ConstVal::Int(*value, ty))
        }
        ExprKind::Real { text, double, kind } => {
            let ty = match kind {
                Some(k) => {
                    let k = fold_kind_param(e, k, lookup)?;
                    real_kind(k)
                        .ok_or_else(|| not_const(e, format!("unsupported REAL kind {k}")))?
                }
                None if *double => Type::F64,
                None => Type::F32,
            };
            let v = real_literal(text, ty).ok_or_else(|| not_const(e, "malformed real literal"))?;
            Ok(ConstVal::Real(v, ty))
        }
        ExprKind::Logical(b) => Ok(ConstVal::Bool(*b)),
        ExprKind::Str(s) => Ok(ConstVal::Str(s.clone())),
        ExprKind::Name(n) => {
            lookup(&n.text).ok_or_else(|| not_const(e, format!("`{}` is not a constant", n.text)))
        }
        ExprKind::Paren(inner) => fold(inner, lookup),
        ExprKind::Unary(op, a) => fold_unary(e, *op, fold(a, lookup)?),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (fold(a, lookup)?, fold(b, lookup)?);
            fold_binary(e, *op, x, y)
        }
        ExprKind::Apply { name, args } => {
            let mut vals = Vec::new();
            let mut kind_arg = None;
            for a in args {
                let super::super::ast::ArgValue::Expr(x) = &a.value else {
                    return Err(not_const(e, "a range is not a constant"));
                };
                let v = fold(x, lookup)?;
                if a.keyword.as_ref().is_some_and(|k| k.text == "kind") {
                    kind_arg = v.as_int();
                } else {
                    vals.push(v);
                }
            }
            fold_intrinsic(e, &name.text, &vals, kind_arg)
        }
        _ => Err(not_const(e, "not a constant expression")),
    }
}

/// A unary operator applied to a constant.
fn fold_unary(e: &Expr, op: UnOp, a: ConstVal) -> Result<ConstVal, NotConst> {
    match (op, a) {
        (UnOp::Plus, v @ (ConstVal::Int(..) | ConstVal::Real(..))) => Ok(v),
        (UnOp::Neg, ConstVal::Int(v, t)) => Ok(ConstVal::Int(v.wrapping_neg(), t)),
        (UnOp::Neg, ConstVal::Real(v, t)) => Ok(ConstVal::Real(-v, t)),
        (UnOp::Not, ConstVal::Bool(b)) => Ok(ConstVal::Bool(!b)),
        _ => Err(not_const(e, "invalid operand of a unary operator")),
    }
}

/// True when a constant expression is array-valued by its form: a
/// constructor, a RESHAPE, or an operation on one
/// (`[5.0_dp, 8.0_dp, 5.0_dp] / 9.0_dp`).
pub(crate) fn constructs_array(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::ArrayConstructor(_) | ExprKind::ImpliedDo { .. } => true,
        ExprKind::Paren(a) | ExprKind::Unary(_, a) => constructs_array(a),
        ExprKind::Binary(_, a, b) => constructs_array(a) || constructs_array(b),
        ExprKind::Apply { .. } => reshape_args(e).is_some(),
        _ => false,
    }
}

fn fold_kind_param(
    e: &Expr,
    k: &KindParam,
    lookup: &dyn Fn(&str) -> Option<ConstVal>,
) -> Result<i64, NotConst> {
    match k {
        KindParam::Int(v) => Ok(*v),
        KindParam::Name(n) => lookup(&n.text)
            .and_then(|c| c.as_int())
            .ok_or_else(|| not_const(e, format!("kind `{}` is not an integer constant", n.text))),
    }
}

fn fold_binary(e: &Expr, op: BinOp, x: ConstVal, y: ConstVal) -> Result<ConstVal, NotConst> {
    use ConstVal::*;
    let cmp = |o: std::cmp::Ordering| -> bool {
        match op {
            BinOp::Eq => o.is_eq(),
            BinOp::Ne => o.is_ne(),
            BinOp::Lt => o.is_lt(),
            BinOp::Le => o.is_le(),
            BinOp::Gt => o.is_gt(),
            _ => o.is_ge(),
        }
    };
    match (&x, &y) {
        (Bool(a), Bool(b)) => {
            let r = match op {
                BinOp::And => *a && *b,
                BinOp::Or => *a || *b,
                BinOp::Eqv => a == b,
                BinOp::Neqv => a != b,
                _ => return Err(not_const(e, "invalid logical operation")),
            };
            return Ok(Bool(r));
        }
        (Str(a), Str(b)) => {
            return match op {
                BinOp::Concat => Ok(Str(format!("{a}{b}"))),
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    let n = a.len().max(b.len());
                    Ok(Bool(cmp(format!("{a:<n$}").cmp(&format!("{b:<n$}")))))
                }
                _ => Err(not_const(e, "invalid character operation")),
            };
        }
        _ => {}
    }
    let t = promote(x.ty(), y.ty());
    if !matches!(x, Int(..) | Real(..)) || !matches!(y, Int(..) | Real(..)) {
        return Err(not_const(e, "invalid operands"));
    }
    if let (Int(a, _), Int(b, _)) = (&x, &y) {
        let (a, b) = (*a, *b);
        let wrap = |v: i64| if t == Type::I32 { v as i32 as i64 } else { v };
        let r = match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div if b == 0 => return Err(not_const(e, "division by zero in a constant")),
            BinOp::Div => a.wrapping_div(b),
            BinOp::Pow => int_pow(a, b).ok_or_else(|| not_const(e, "zero to a negative power"))?,
            _ => return Ok(Bool(cmp(a.cmp(&b)))),
        };
        return Ok(Int(wrap(r), t));
    }
    let round = |v: f64| if t == Type::F32 { v as f32 as f64 } else { v };
    if op == BinOp::Pow {
        if let Int(n, _) = y {
            let base = x.convert(t).and_then(|c| c.as_f64()).unwrap_or(0.0);
            return Ok(Real(round(base.powi(n as i32)), t));
        }
    }
    let a = x.convert(t).and_then(|c| c.as_f64()).unwrap_or(0.0);
    let b = y.convert(t).and_then(|c| c.as_f64()).unwrap_or(0.0);
    let r = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Pow => a.powf(b),
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            return match a.partial_cmp(&b) {
                Some(o) => Ok(Bool(cmp(o))),
                None => Ok(Bool(op == BinOp::Ne)),
            }
        }
        _ => return Err(not_const(e, "invalid arithmetic operation")),
    };
    Ok(Real(round(r), t))
}

/// Integer power with Fortran's rules for negative exponents.
pub fn int_pow(a: i64, b: i64) -> Option<i64> {
    if b < 0 {
        return match a {
            0 => None,
            1 => Some(1),
            -1 => Some(if b % 2 == 0 { 1 } else { -1 }),
            _ => Some(0),
        };
    }
    let mut r: i64 = 1;
    for _ in 0..b.min(64) {
        r = r.wrapping_mul(a);
    }
    Some(r)
}

/// `huge`, `tiny` and `epsilon` of a type.
pub fn numeric_inquiry(name: &str, t: Type) -> Option<ConstVal> {
    Some(match (name, t) {
        ("huge", Type::I32) => ConstVal::Int(i32::MAX as i64, t),
        ("huge", Type::I64) => ConstVal::Int(i64::MAX, t),
        ("huge", Type::F32) => ConstVal::Real(f32::MAX as f64, t),
        ("huge", Type::F64) => ConstVal::Real(f64::MAX, t),
        ("tiny", Type::F32) => ConstVal::Real(f32::MIN_POSITIVE as f64, t),
        ("tiny", Type::F64) => ConstVal::Real(f64::MIN_POSITIVE, t),
        ("epsilon", Type::F32) => ConstVal::Real(f32::EPSILON as f64, t),
        ("epsilon", Type::F64) => ConstVal::Real(f64::EPSILON, t),
        _ => return None,
    })
}

/// The bytes of a character constant.
fn literal_bytes_of(c: &ConstVal) -> Option<Vec<u8>> {
    match c {
        ConstVal::Str(s) => Some(literal_bytes(s)),
        _ => None,
    }
}

fn fold_intrinsic(
    e: &Expr,
    name: &str,
    args: &[ConstVal],
    kind: Option<i64>,
) -> Result<ConstVal, NotConst> {
    let bad = || {
        not_const(
            e,
            format!("`{name}` cannot be evaluated at compile time here"),
        )
    };
    let first = args.first().ok_or_else(bad)?;
    let math = |f: fn(f64) -> f64| -> Result<ConstVal, NotConst> {
        let t = first.ty();
        if !t.is_float() {
            return Err(bad());
        }
        let v = f(first.as_f64().ok_or_else(bad)?);
        Ok(ConstVal::Real(
            if t == Type::F32 { v as f32 as f64 } else { v },
            t,
        ))
    };
    match name {
        "kind" => Ok(ConstVal::Int(kind_of(first.ty()), Type::I32)),
        "selected_real_kind" => {
            let p = first.as_int().ok_or_else(bad)?;
            let r = args.get(1).and_then(|c| c.as_int()).unwrap_or(0);
            Ok(ConstVal::Int(
                if p <= 6 && r <= 37 { 4 } else { 8 },
                Type::I32,
            ))
        }
        "selected_int_kind" => {
            let r = first.as_int().ok_or_else(bad)?;
            Ok(ConstVal::Int(if r <= 9 { 4 } else { 8 }, Type::I32))
        }
        "huge" | "tiny" | "epsilon" => numeric_inquiry(name, first.ty()).ok_or_else(bad),
        "sqrt" | "dsqrt" => math(f64::sqrt),
        "exp" | "dexp" => math(f64::exp),
        "log" | "dlog" | "alog" => math(f64::ln),
        "log10" | "dlog10" => math(f64::log10),
        "sin" | "dsin" => math(f64::sin),
        "cos" | "dcos" => math(f64::cos),
        "tan" | "dtan" => math(f64::tan),
        "atan" | "datan" => math(f64::atan),
        "asin" | "dasin" => math(f64::asin),
        "acos" | "dacos" => math(f64::acos),
        "abs" | "dabs" | "iabs" => match first {
            ConstVal::Int(v, t) => Ok(ConstVal::Int(v.wrapping_abs(), *t)),
            ConstVal::Real(v, t) => Ok(ConstVal::Real(v.abs(), *t)),
            _ => Err(bad()),
        },
        "real" | "float" | "sngl" => {
            let t = match kind {
                Some(k) => real_kind(k).ok_or_else(bad)?,
                None => Type::F32,
            };
            first.convert(t).ok_or_else(bad)
        }
        "dble" | "dfloat" => first.convert(Type::F64).ok_or_else(bad),
        "int" | "ifix" | "idint" => {
            let t = match kind {
                Some(k) => int_kind(k).ok_or_else(bad)?,
                None => Type::I32,
            };
            first.convert(t).ok_or_else(bad)
        }
        "nint" | "idnint" => {
            let v = first.as_f64().ok_or_else(bad)?;
            Ok(ConstVal::Int(v.round() as i64, Type::I32))
        }
        "min" | "max" | "min0" | "max0" | "amin1" | "amax1" | "dmin1" | "dmax1" => {
            let t = args.iter().fold(first.ty(), |t, c| promote(t, c.ty()));
            let mut best = first.convert(t).ok_or_else(bad)?;
            for c in &args[1..] {
                let c = c.convert(t).ok_or_else(bad)?;
                let (a, b) = (best.as_f64().ok_or_else(bad)?, c.as_f64().ok_or_else(bad)?);
                let take = if name.contains("min") { b < a } else { b > a };
                if take {
                    best = c;
                }
            }
            Ok(best)
        }
        "mod" => {
            let second = args.get(1).ok_or_else(bad)?;
            match (first, second) {
                (ConstVal::Int(_, _), ConstVal::Int(0, _)) => Err(bad()),
                (ConstVal::Int(a, t), ConstVal::Int(b, _)) => {
                    Ok(ConstVal::Int(a.wrapping_rem(*b), *t))
                }
                _ => {
                    let t = promote(first.ty(), second.ty());
                    let (a, b) = (
                        first.as_f64().ok_or_else(bad)?,
                        second.as_f64().ok_or_else(bad)?,
                    );
                    Ok(ConstVal::Real(a % b, t))
                }
            }
        }
        "len" => match first {
            ConstVal::Str(s) => Ok(ConstVal::Int(literal_bytes(s).len() as i64, Type::I32)),
            _ => Err(bad()),
        },
        "ichar" | "iachar" => match (first, literal_bytes_of(first).as_deref()) {
            (ConstVal::Str(_), Some(&[b])) => {
                let t = match kind {
                    Some(k) => int_kind(k).ok_or_else(bad)?,
                    None => Type::I32,
                };
                Ok(ConstVal::Int(i64::from(b), t))
            }
            _ => Err(bad()),
        },
        "char" | "achar" => match (first.as_int().map(u8::try_from), kind) {
            (Some(Ok(b)), None | Some(1)) => Ok(ConstVal::Str(byte_char(b).to_string())),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// Folds the initial value of an array (an array PARAMETER or an
/// initialized array) into its elements in array element order: an array
/// constructor (nested constructors and implied DO loops over constants
/// expanded), else one scalar (given to every element by the caller).
/// The most initial values a DATA statement, an initializer or an array
/// PARAMETER may give: the values are held in the program's IR, so a larger
/// count (`data w /2147483647*0/`) is refused instead of expanded.
pub const MAX_INITIAL_VALUES: usize = 1 << 24;

///
/// An expansion past `limit` values (the elements of the array it
/// initializes, at most [`MAX_INITIAL_VALUES`]) stops there with an error,
/// so an implied DO of 2^31 trips costs nothing.
pub fn fold_elements(
    e: &Expr,
    lookup: &dyn Fn(&str) -> Option<ConstVal>,
    limit: usize,
) -> Result<Vec<ConstVal>, NotConst> {
    let mut out = Vec::new();
    fold_items(e, lookup, limit.min(MAX_INITIAL_VALUES), &mut out)?;
    Ok(out)
}

fn fold_items(
    e: &Expr,
    lookup: &dyn Fn(&str) -> Option<ConstVal>,
    limit: usize,
    out: &mut Vec<ConstVal>,
) -> Result<(), NotConst> {
    let too_many = || {
        not_const(
            e,
            format!("array constructor gives more than {limit} values"),
        )
    };
    match &e.kind {
        ExprKind::ArrayConstructor(items) => {
            for it in items {
                fold_items(it, lookup, limit, out)?;
            }
            Ok(())
        }
        ExprKind::ImpliedDo {
            items,
            var,
            start,
            end,
            step,
        } => {
            let int = |x: &Expr| {
                fold(x, lookup)?
                    .as_int()
                    .ok_or_else(|| not_const(x, "implied DO bound is not an integer"))
            };
            let (s, t) = (int(start)?, int(end)?);
            let st = match step {
                Some(x) => int(x)?,
                None => 1,
            };
            if st == 0 {
                return Err(not_const(e, "implied DO step is zero"));
            }
            // Each trip gives a value at least (unless its items are
            // empty): a trip count past the limit is refused at once.
            let trips = (t as i128 - s as i128) / st as i128 + 1;
            if !items.is_empty() && trips > (limit - out.len().min(limit)) as i128 {
                return Err(too_many());
            }
            let mut i = s;
            while (st > 0 && i <= t) || (st < 0 && i >= t) {
                if out.len() > limit {
                    return Err(too_many());
                }
                let inner = |n: &str| {
                    if n.eq_ignore_ascii_case(&var.text) {
                        Some(ConstVal::Int(i, Type::I32))
                    } else {
                        lookup(n)
                    }
                };
                for it in items {
                    fold_items(it, &inner, limit, out)?;
                }
                match i.checked_add(st) {
                    Some(next) => i = next,
                    None => break,
                }
            }
            Ok(())
        }
        ExprKind::Paren(a) => fold_items(a, lookup, limit, out),
        ExprKind::Unary(op, a) if constructs_array(a) => {
            let start = out.len();
            fold_items(a, lookup, limit, out)?;
            for v in &mut out[start..] {
                *v = fold_unary(e, *op, v.clone())?;
            }
            Ok(())
        }
        ExprKind::Binary(op, a, b) if constructs_array(e) => {
            // Element by element, a scalar operand applied to every element.
            let operand = |x: &Expr| -> Result<Vec<ConstVal>, NotConst> {
                let mut vals = Vec::new();
                if constructs_array(x) {
                    fold_items(x, lookup, limit, &mut vals)?;
                } else {
                    vals.push(fold(x, lookup)?);
                }
                Ok(vals)
            };
            let (xs, ys) = (operand(a)?, operand(b)?);
            let n = match (constructs_array(a), constructs_array(b)) {
                (true, true) if xs.len() != ys.len() => {
                    return Err(not_const(
                        e,
                        format!("operands of {} and {} elements", xs.len(), ys.len()),
                    ))
                }
                (true, _) => xs.len(),
                _ => ys.len(),
            };
            for i in 0..n {
                let x = xs[if xs.len() == 1 { 0 } else { i }].clone();
                let y = ys[if ys.len() == 1 { 0 } else { i }].clone();
                out.push(fold_binary(e, *op, x, y)?);
            }
            Ok(())
        }
        ExprKind::Apply { .. } if reshape_args(e).is_some() => {
            let (source, shape) = reshape_args(e).expect("a RESHAPE");
            let n: i64 = fold_shape(shape, lookup)?.iter().product();
            let start = out.len();
            fold_items(source, lookup, limit, out)?;
            if ((out.len() - start) as i64) < n {
                return Err(not_const(
                    e,
                    format!(
                        "RESHAPE in a constant: the source has {} elements, the shape asks for {n}",
                        out.len() - start
                    ),
                ));
            }
            out.truncate(start + n as usize);
            Ok(())
        }
        _ => {
            out.push(fold(e, lookup)?);
            Ok(())
        }
    }
}

/// The SOURCE and SHAPE of `reshape(source, shape)` (positional or by
/// keyword, without PAD= or ORDER=), the form of a constant of rank > 1.
pub(crate) fn reshape_args(e: &Expr) -> Option<(&Expr, &Expr)> {
    let ExprKind::Apply { name, args } = &e.kind else {
        return None;
    };
    if !name.text.eq_ignore_ascii_case("reshape") || args.len() != 2 {
        return None;
    }
    let mut found = [None, None];
    for (i, a) in args.iter().enumerate() {
        let ArgValue::Expr(x) = &a.value else {
            return None;
        };
        let slot = match a.keyword.as_ref().map(|k| k.text.to_ascii_lowercase()) {
            None => i,
            Some(k) if k == "source" => 0,
            Some(k) if k == "shape" => 1,
            Some(_) => return None,
        };
        found[slot] = Some(x);
    }
    Some((found[0]?, found[1]?))
}

/// The extents a constant SHAPE argument of RESHAPE gives (each at least
/// 0, at most 7 of them).
pub(crate) fn fold_shape(
    shape: &Expr,
    lookup: &dyn Fn(&str) -> Option<ConstVal>,
) -> Result<Vec<i64>, NotConst> {
    let mut out = Vec::new();
    fold_items(shape, lookup, 8, &mut out)?;
    if out.is_empty() || out.len() > 7 {
        return Err(not_const(
            shape,
            "the SHAPE of a RESHAPE constant gives 1 to 7 extents",
        ));
    }
    out.iter()
        .map(|c| match c.as_int() {
            Some(n) if n >= 0 => Ok(n),
            _ => Err(not_const(
                shape,
                "the SHAPE of a RESHAPE constant holds nonnegative integers",
            )),
        })
        .collect()
}
