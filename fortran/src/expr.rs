//! Fortran spellings of IR types, literals and operators, and the precedence
//! rules that decide where an inlined expression needs parentheses.

use adjit_ir::{BinaryOp, CmpOp, Const, Type, UnaryOp};

/// An expression's text with the precedence of its outermost operator.
#[derive(Clone, Debug)]
pub struct Expr {
    /// The Fortran text.
    pub text: String,
    /// Binding strength of the outermost operator ([`PRIMARY`] for names,
    /// calls and unsigned literals).
    pub prec: u8,
}

/// `.eqv.` / `.neqv.`.
pub const EQV: u8 = 1;
/// `.or.`.
pub const OR: u8 = 2;
/// `.and.`.
pub const AND: u8 = 3;
/// `.not.`.
pub const NOT: u8 = 4;
/// Relational operators.
pub const REL: u8 = 5;
/// Binary `+` / `-` and unary minus.
pub const ADD: u8 = 6;
/// `*` / `/`.
pub const MUL: u8 = 7;
/// `**`.
pub const POW: u8 = 8;
/// Names, function references, parenthesised expressions.
pub const PRIMARY: u8 = 9;

impl Expr {
    /// A primary (name, call, literal without sign).
    pub fn primary(text: impl Into<String>) -> Expr {
        Expr {
            text: text.into(),
            prec: PRIMARY,
        }
    }
    /// The text, parenthesised unless its precedence is at least `min`.
    pub fn at_least(&self, min: u8) -> String {
        if self.prec >= min {
            self.text.clone()
        } else {
            format!("({})", self.text)
        }
    }
}

/// The Fortran kind number of a numeric type (`None` for logical and character).
pub fn kind(ty: Type) -> Option<u8> {
    match ty {
        Type::F32 | Type::I32 => Some(4),
        Type::F64 | Type::I64 => Some(8),
        Type::Bool | Type::Char => None,
    }
}

/// The declaration type of a scalar type (characters get their length elsewhere).
pub fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::F32 => "real(4)",
        Type::F64 => "real(8)",
        Type::I32 => "integer(4)",
        Type::I64 => "integer(8)",
        Type::Bool => "logical",
        Type::Char => "character",
    }
}

/// The support-module subroutine `(y, x, n)` that adds the `n` elements
/// of array `x` to the element sequence starting at `y`, for real type `ty`.
pub fn add_elements_name(ty: Type) -> &'static str {
    match ty {
        Type::F32 => "adjit_add_elements_4",
        _ => "adjit_add_elements_8",
    }
}

/// A literal of type `ty` that reads back as exactly `c` (non-finite floats
/// through `ieee_value`, re-exported by the support module).
pub fn literal(c: Const, ty: Type) -> Expr {
    match (c, ty) {
        (Const::Float(x), Type::F32 | Type::F64) => float_literal(x, ty),
        (Const::Int(i), Type::I32 | Type::I64) => int_literal(i, ty),
        (Const::Int(i), Type::F32 | Type::F64) => float_literal(i as f64, ty),
        (Const::Bool(b), _) => Expr::primary(if b { ".true." } else { ".false." }),
        (Const::Char(b), _) => Expr::primary(string_literal(&[b])),
        (Const::Float(x), _) => int_literal(x as i64, ty),
        (Const::Int(i), _) => int_literal(i, Type::I64),
    }
}

fn float_literal(x: f64, ty: Type) -> Expr {
    let (mold, letter) = if ty == Type::F32 {
        ("0.0", 'e')
    } else {
        ("0d0", 'd')
    };
    if x.is_nan() {
        return Expr::primary(format!("ieee_value({mold}, ieee_quiet_nan)"));
    }
    if x.is_infinite() {
        let which = if x > 0.0 {
            "ieee_positive_inf"
        } else {
            "ieee_negative_inf"
        };
        return Expr::primary(format!("ieee_value({mold}, {which})"));
    }
    // Shortest text that reads back exactly, in the literal's own kind.
    let text = if ty == Type::F32 {
        format!("{:e}", x as f32)
    } else {
        format!("{x:e}")
    };
    let (mantissa, exponent) = text.split_once('e').expect("`{:e}` has an exponent");
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    let text = format!("{mantissa}{letter}{exponent}");
    if x.is_sign_negative() {
        Expr { text, prec: ADD }
    } else {
        Expr::primary(text)
    }
}

/// An integer literal of type `ty` (the most negative value as a difference).
pub fn int_literal(i: i64, ty: Type) -> Expr {
    let k = kind(ty).unwrap_or(8);
    let min = if k == 4 {
        i64::from(i32::MIN)
    } else {
        i64::MIN
    };
    let text = if i == min {
        format!("-{}_{k} - 1_{k}", -(i + 1))
    } else {
        format!("{i}_{k}")
    };
    if i < 0 {
        Expr { text, prec: ADD }
    } else {
        Expr::primary(text)
    }
}

/// The longest literal piece [`string_literal`] writes.
const LITERAL_PIECE: usize = 60;

/// A Fortran character literal (quotes doubled; bytes outside printable
/// ASCII through `achar`; long text as literals of at most
/// [`LITERAL_PIECE`] characters joined by `//`, so that a line can be
/// continued between them).
pub fn string_literal(bytes: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut run = String::new();
    for &b in bytes {
        if run.len() >= LITERAL_PIECE {
            parts.push(format!("'{run}'"));
            run.clear();
        }
        if (0x20..0x7f).contains(&b) {
            if b == b'\'' {
                run.push('\'');
            }
            run.push(b as char);
        } else {
            if !run.is_empty() {
                parts.push(format!("'{run}'"));
                run.clear();
            }
            parts.push(format!("achar({b})"));
        }
    }
    if !run.is_empty() || parts.is_empty() {
        parts.push(format!("'{run}'"));
    }
    parts.join(" // ")
}

/// The intrinsic (or support-module function) computing a unary operation,
/// or `None` for the operators `-` and `.not.`.
pub fn unary_function(op: UnaryOp) -> Option<&'static str> {
    Some(match op {
        UnaryOp::Neg | UnaryOp::Not => return None,
        UnaryOp::Floor => "adjit_floor",
        UnaryOp::Ceil => "adjit_ceil",
        UnaryOp::Trunc => "aint",
        UnaryOp::Round => "anint",
        // The IR's mnemonics of the elementary functions are Fortran's
        // intrinsic names (abs, sqrt, exp, log, log10, sin, ..., tanh).
        _ => adjit_ir::print::unary_name(op),
    })
}

/// How a binary operation is spelled.
pub enum BinarySpelling {
    /// An infix operator with its precedence.
    Infix(&'static str, u8),
    /// An intrinsic function of two arguments.
    Function(&'static str),
}

/// The spelling of a binary operation (gfortran's intrinsics define the
/// IR's MIN, MAX, SIGN, DIM, MOD and MODULO).
pub fn binary_spelling(op: BinaryOp) -> BinarySpelling {
    use BinarySpelling::*;
    match op {
        BinaryOp::Add => Infix("+", ADD),
        BinaryOp::Sub => Infix("-", ADD),
        BinaryOp::Mul => Infix("*", MUL),
        BinaryOp::Div => Infix("/", MUL),
        BinaryOp::Pow | BinaryOp::PowI => Infix("**", POW),
        BinaryOp::And => Infix(".and.", AND),
        BinaryOp::Or => Infix(".or.", OR),
        BinaryOp::Eqv => Infix(".eqv.", EQV),
        BinaryOp::Neqv => Infix(".neqv.", EQV),
        BinaryOp::Min => Function("min"),
        BinaryOp::Max => Function("max"),
        BinaryOp::Atan2 => Function("atan2"),
        BinaryOp::Sign => Function("sign"),
        BinaryOp::Dim => Function("dim"),
        BinaryOp::Mod => Function("mod"),
        BinaryOp::Modulo => Function("modulo"),
    }
}

/// The relational operator of a comparison of numbers or characters.
pub fn relational(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "/=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// Every intrinsic or support name the printer may reference: variables
/// of the same name are renamed so that they never hide one.
pub const RESERVED: &[&str] = &[
    "abs",
    "sqrt",
    "exp",
    "log",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "erf",
    "erfc",
    "gamma",
    "log_gamma",
    "bessel_j0",
    "bessel_j1",
    "adjit_polygamma",
    "aint",
    "anint",
    "min",
    "max",
    "atan2",
    "sign",
    "dim",
    "mod",
    "modulo",
    "merge",
    "ieor",
    "real",
    "int",
    "nint",
    "floor",
    "ceiling",
    "lbound",
    "size",
    "achar",
    "ieee_value",
    "ieee_quiet_nan",
    "ieee_positive_inf",
    "ieee_negative_inf",
    "adjit_floor",
    "adjit_ceil",
    "adjit_push_value",
    "adjit_pop_value",
    "adjit_push_int",
    "adjit_pop_int",
    "adjit_push_control",
    "adjit_pop_control",
    "adjit_keep_begin",
    "adjit_keep_put",
    "adjit_keep_end",
    "adjit_restore_begin",
    "adjit_restore_end",
    "adjit_kept_get_i8",
    "adjit_kept_get_r8",
    "adjit_kept_get_l",
    "adjit_support",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_read_back_exactly() {
        assert_eq!(literal(Const::Float(0.1), Type::F64).text, "1.0d-1");
        assert_eq!(literal(Const::Float(2.5), Type::F64).text, "2.5d0");
        assert_eq!(literal(Const::Float(0.1), Type::F32).text, "1.0e-1");
        let third = literal(Const::Float(1.0 / 3.0), Type::F64).text;
        let back: f64 = third.replace('d', "e").parse().unwrap();
        assert_eq!(back, 1.0 / 3.0);
        assert_eq!(literal(Const::Float(-1.0), Type::F64).prec, ADD);
    }

    #[test]
    fn extreme_integers_and_strings() {
        assert_eq!(
            int_literal(i64::from(i32::MIN), Type::I32).text,
            "-2147483647_4 - 1_4"
        );
        assert_eq!(string_literal(b"it's"), "'it''s'");
        assert_eq!(string_literal(b"a\tb"), "'a' // achar(9) // 'b'");
        assert_eq!(string_literal(b""), "''");
    }
}
