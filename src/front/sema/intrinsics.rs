//! Intrinsic procedures: generic and specific names, lowered to IR
//! operations (elemental math, conversions, MIN/MAX, inquiries). Array
//! reductions are lowered by the array module.
//!
//! It owns the intrinsic table; general expression lowering is
//! [`super::expr`]'s.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::char_code::CodeFn;
use super::char_expr::StrFn;
use super::consts::{int_kind, kind_of, numeric_inquiry, promote, real_kind, type_name};
use super::ieee::IeeeFn;
use super::lowerer::{Lowerer, Operand, Resolved, R};
use adjit_ir::special::Special;
use adjit_ir::{BinaryOp, CharRef, CharSearch, Const, Inst, Rounding, Type, UnaryOp, Value};

/// How an intrinsic is lowered.
#[derive(Clone, Copy)]
enum How {
    /// A unary float operation.
    Math(UnaryOp),
    /// ABS.
    Abs,
    /// A binary operation on promoted operands.
    Binary(BinaryOp),
    /// MIN / MAX (n-ary).
    MinMax(BinaryOp),
    /// To an integer with a rounding mode.
    ToInt(Rounding),
    /// Rounding in the float type (AINT, ANINT).
    RoundFloat(UnaryOp),
    /// To a real (kind from `kind=` or the result type).
    ToReal,
    /// HUGE / TINY / EPSILON.
    Inquiry,
    /// KIND.
    Kind,
    /// SIZE, LBOUND, UBOUND.
    Shape,
    /// LEN.
    Len,
    /// INDEX (BACK= included).
    Index,
    /// LEN_TRIM, SCAN and VERIFY (BACK= included): searches of character
    /// data.
    Search(Search),
    /// ICHAR, IACHAR, CHAR, ACHAR: character codes, by the char_code
    /// module.
    Code,
    /// TRIM, ADJUSTL, ADJUSTR, REPEAT: character results, by the strings
    /// module.
    Str,
    /// An array reduction (hoisted before the statement).
    Reduction,
    /// MERGE.
    Merge,
    /// HYPOT.
    Hypot,
    /// ALLOCATED(array).
    Allocated,
    /// An array-valued intrinsic (MATMUL, TRANSPOSE, RESHAPE, ...), by the
    /// transform module.
    Transform,
    /// A procedure of IEEE_ARITHMETIC, by the ieee module.
    Ieee,
}

/// What a character search looks for at each position of its string.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Search {
    /// INDEX with BACK=: the substring.
    Index,
    /// LEN_TRIM: a character other than a blank.
    LenTrim,
    /// SCAN: a character of the set.
    Scan,
    /// VERIFY: a character not in the set.
    Verify,
}

/// `(name, how, argument type forced, result type forced)`.
type Entry = (&'static str, How, Option<Type>, Option<Type>);

const F32: Option<Type> = Some(Type::F32);
const F64: Option<Type> = Some(Type::F64);
const I32: Option<Type> = Some(Type::I32);

fn table() -> &'static [Entry] {
    use How::*;
    use UnaryOp as U;
    &[
        ("sqrt", Math(U::Sqrt), None, None),
        ("dsqrt", Math(U::Sqrt), F64, None),
        ("exp", Math(U::Exp), None, None),
        ("dexp", Math(U::Exp), F64, None),
        ("log", Math(U::Log), None, None),
        ("alog", Math(U::Log), F32, None),
        ("dlog", Math(U::Log), F64, None),
        ("log10", Math(U::Log10), None, None),
        ("alog10", Math(U::Log10), F32, None),
        ("dlog10", Math(U::Log10), F64, None),
        ("sin", Math(U::Sin), None, None),
        ("dsin", Math(U::Sin), F64, None),
        ("cos", Math(U::Cos), None, None),
        ("dcos", Math(U::Cos), F64, None),
        ("tan", Math(U::Tan), None, None),
        ("dtan", Math(U::Tan), F64, None),
        ("asin", Math(U::Asin), None, None),
        ("dasin", Math(U::Asin), F64, None),
        ("acos", Math(U::Acos), None, None),
        ("dacos", Math(U::Acos), F64, None),
        ("atan", Math(U::Atan), None, None),
        ("datan", Math(U::Atan), F64, None),
        ("sinh", Math(U::Sinh), None, None),
        ("dsinh", Math(U::Sinh), F64, None),
        ("cosh", Math(U::Cosh), None, None),
        ("dcosh", Math(U::Cosh), F64, None),
        ("tanh", Math(U::Tanh), None, None),
        ("dtanh", Math(U::Tanh), F64, None),
        ("erf", Math(U::Special(Special::Erf)), None, None),
        ("erfc", Math(U::Special(Special::Erfc)), None, None),
        ("gamma", Math(U::Special(Special::Gamma)), None, None),
        ("log_gamma", Math(U::Special(Special::LogGamma)), None, None),
        ("bessel_j0", Math(U::Special(Special::BesselJ0)), None, None),
        ("bessel_j1", Math(U::Special(Special::BesselJ1)), None, None),
        ("abs", Abs, None, None),
        ("iabs", Abs, I32, None),
        ("dabs", Abs, F64, None),
        ("atan2", Binary(BinaryOp::Atan2), None, None),
        ("datan2", Binary(BinaryOp::Atan2), F64, None),
        ("mod", Binary(BinaryOp::Mod), None, None),
        ("amod", Binary(BinaryOp::Mod), F32, None),
        ("dmod", Binary(BinaryOp::Mod), F64, None),
        ("modulo", Binary(BinaryOp::Modulo), None, None),
        ("sign", Binary(BinaryOp::Sign), None, None),
        ("isign", Binary(BinaryOp::Sign), I32, None),
        ("dsign", Binary(BinaryOp::Sign), F64, None),
        ("dim", Binary(BinaryOp::Dim), None, None),
        ("idim", Binary(BinaryOp::Dim), I32, None),
        ("ddim", Binary(BinaryOp::Dim), F64, None),
        ("max", MinMax(BinaryOp::Max), None, None),
        ("max0", MinMax(BinaryOp::Max), I32, None),
        ("amax1", MinMax(BinaryOp::Max), F32, None),
        ("dmax1", MinMax(BinaryOp::Max), F64, None),
        ("amax0", MinMax(BinaryOp::Max), I32, F32),
        ("max1", MinMax(BinaryOp::Max), F32, I32),
        ("min", MinMax(BinaryOp::Min), None, None),
        ("min0", MinMax(BinaryOp::Min), I32, None),
        ("amin1", MinMax(BinaryOp::Min), F32, None),
        ("dmin1", MinMax(BinaryOp::Min), F64, None),
        ("amin0", MinMax(BinaryOp::Min), I32, F32),
        ("min1", MinMax(BinaryOp::Min), F32, I32),
        ("int", ToInt(Rounding::Trunc), None, None),
        ("ifix", ToInt(Rounding::Trunc), F32, None),
        ("idint", ToInt(Rounding::Trunc), F64, None),
        ("nint", ToInt(Rounding::Nearest), None, None),
        ("idnint", ToInt(Rounding::Nearest), F64, None),
        ("floor", ToInt(Rounding::Floor), None, None),
        ("ceiling", ToInt(Rounding::Ceil), None, None),
        ("aint", RoundFloat(U::Trunc), None, None),
        ("dint", RoundFloat(U::Trunc), F64, None),
        ("anint", RoundFloat(U::Round), None, None),
        ("dnint", RoundFloat(U::Round), F64, None),
        ("real", ToReal, None, F32),
        ("float", ToReal, None, F32),
        ("sngl", ToReal, None, F32),
        ("dble", ToReal, None, F64),
        ("dfloat", ToReal, None, F64),
        ("huge", Inquiry, None, None),
        ("tiny", Inquiry, None, None),
        ("epsilon", Inquiry, None, None),
        ("kind", Kind, None, None),
        ("size", Shape, None, None),
        ("lbound", Shape, None, None),
        ("ubound", Shape, None, None),
        ("len", Len, None, None),
        ("index", Index, None, None),
        ("ichar", Code, None, None),
        ("iachar", Code, None, None),
        ("char", Code, None, None),
        ("achar", Code, None, None),
        ("len_trim", Search(self::Search::LenTrim), None, None),
        ("scan", Search(self::Search::Scan), None, None),
        ("verify", Search(self::Search::Verify), None, None),
        ("trim", Str, None, None),
        ("adjustl", Str, None, None),
        ("adjustr", Str, None, None),
        ("repeat", Str, None, None),
        ("sum", Reduction, None, None),
        ("product", Reduction, None, None),
        ("dot_product", Reduction, None, None),
        ("maxval", Reduction, None, None),
        ("minval", Reduction, None, None),
        ("norm2", Reduction, None, None),
        ("any", Reduction, None, None),
        ("all", Reduction, None, None),
        ("count", Reduction, None, None),
        ("maxloc", Reduction, None, None),
        ("minloc", Reduction, None, None),
        ("findloc", Reduction, None, None),
        ("merge", Merge, None, None),
        ("matmul", Transform, None, None),
        ("transpose", Transform, None, None),
        ("reshape", Transform, None, None),
        ("spread", Transform, None, None),
        ("cshift", Transform, None, None),
        ("eoshift", Transform, None, None),
        ("pack", Transform, None, None),
        ("unpack", Transform, None, None),
        ("shape", Transform, None, None),
        ("hypot", Hypot, None, None),
        ("allocated", Allocated, None, None),
        ("ieee_is_nan", Ieee, None, None),
        ("ieee_is_finite", Ieee, None, None),
        ("ieee_is_negative", Ieee, None, None),
        ("ieee_copy_sign", Ieee, None, None),
        ("ieee_value", Ieee, None, None),
    ]
}

/// True when a name is a supported intrinsic function.
pub(crate) fn is_intrinsic(name: &str) -> bool {
    lookup(name).is_some()
}

fn lookup(name: &str) -> Option<&'static Entry> {
    table().iter().find(|e| e.0 == name)
}

/// Standard intrinsics the subset does not implement (named in errors).
const UNSUPPORTED: &[&str] = &[
    "present",
    "associated",
    "cmplx",
    "conjg",
    "aimag",
    "random_number",
    "random_seed",
    "cpu_time",
    "system_clock",
    "date_and_time",
    "exponent",
    "fraction",
    "nearest",
    "spacing",
    "scale",
    "iand",
    "ior",
    "ieor",
    "ishft",
    "btest",
    "ibset",
    "ibclr",
    "not",
    "repeat",
    "lge",
    "lgt",
    "lle",
    "llt",
    "mvbits",
    "get_command_argument",
];

/// True for a standard intrinsic that the subset rejects.
pub(crate) fn is_unsupported_intrinsic(name: &str) -> bool {
    UNSUPPORTED.contains(&name)
}

/// True for an intrinsic whose result is an array reduction.
pub(crate) fn is_reduction(name: &str) -> bool {
    matches!(lookup(name), Some((_, How::Reduction, _, _)))
}

/// True for the reductions that give positions (MAXLOC, MINLOC, FINDLOC).
pub(super) fn is_location(which: &str) -> bool {
    matches!(which, "maxloc" | "minloc" | "findloc")
}

/// True for intrinsics that act element by element on arrays.
pub(crate) fn is_elemental(name: &str) -> bool {
    matches!(
        lookup(name),
        Some((
            _,
            How::Math(_)
                | How::Abs
                | How::Binary(_)
                | How::MinMax(_)
                | How::ToInt(_)
                | How::RoundFloat(_)
                | How::ToReal
                | How::Merge
                | How::Hypot
                | How::Code
                | How::Ieee,
            _,
            _
        ))
    )
}

impl Lowerer<'_, '_> {
    /// True when a name is a supported intrinsic.
    pub fn is_intrinsic_name(&self, name: &str) -> bool {
        lookup(name).is_some()
    }

    /// Lowers an intrinsic function reference.
    pub fn intrinsic(&mut self, e: &Expr, name: &Name, args: &[Arg]) -> R<Operand> {
        let &(_, how, arg_ty, res_ty) = lookup(&name.text).expect("checked by is_intrinsic_name");
        if let Some(which) = StrFn::from_name(&name.text) {
            return self.string_fn(which, name, args);
        }
        if let Some(which) = CodeFn::from_name(&name.text) {
            return self.char_code_fn(which, name, args);
        }
        let mut positional = Vec::new();
        let mut kind = None;
        let mut dim = None;
        for a in args {
            let ArgValue::Expr(x) = &a.value else {
                return Err(self.err(
                    e.span,
                    format!("a range is not an argument of `{}`", name.text),
                ));
            };
            match a.keyword.as_ref().map(|k| k.text.as_str()) {
                Some("kind") => kind = Some(x),
                Some("dim") => dim = Some(x),
                Some(_) | None => positional.push(x),
            }
        }
        // `real(x, wp)`, `int(n, int64)`: the kind given by position.
        if matches!(how, How::ToReal | How::ToInt(_)) && positional.len() == 2 && kind.is_none() {
            kind = positional.pop();
        }
        let arity = |this: &mut Self, lo: usize, hi: usize| -> R<()> {
            if positional.len() < lo || positional.len() > hi {
                Err(this.err(
                    name.span,
                    format!("wrong number of arguments to `{}`", name.text),
                ))
            } else {
                Ok(())
            }
        };
        match how {
            How::Shape => {
                if positional.len() == 2 && dim.is_none() {
                    dim = Some(positional[1]);
                }
                arity(self, 1, 2)?;
                return self
                    .shape_inquiry(&name.text, positional[0], dim)
                    .map(|(v, t)| Operand::Num(v, t));
            }
            How::Transform
                if self.transform_kind(e) == Some(super::lowerer::Transform::Positional) =>
            {
                return self.positional_element(e, name, args);
            }
            How::Reduction | How::Transform => {
                let msg = if self.transform_kind(e).is_some() {
                    format!(
                        "array-valued `{}` used where a scalar is expected",
                        name.text
                    )
                } else {
                    format!("unsupported Fortran: `{}` in this context", name.text)
                };
                return Err(self.err(e.span, msg));
            }
            How::Len => {
                arity(self, 1, 1)?;
                return self.len_of(positional[0]);
            }
            How::Allocated => {
                arity(self, 1, 1)?;
                if let Some(is) = self.scalar_allocated(positional[0])? {
                    return Ok(is);
                }
                let super::super::ast::ExprKind::Name(n) = &positional[0].kind else {
                    return Err(self.err(
                        positional[0].span,
                        "the argument of `allocated` must be an array name",
                    ));
                };
                if let Some(yes) = self.dummy_allocated(n)? {
                    return Ok(Operand::Num(yes, Type::Bool));
                }
                let v = self.allocatable_var(n, "ALLOCATED")?;
                let is = self.val(Inst::Allocated(v), Type::Bool);
                return Ok(Operand::Num(is, Type::Bool));
            }
            How::Merge => {
                let (v, t) = self.merge(name, &positional)?;
                return Ok(Operand::Num(v, t));
            }
            How::Hypot => {
                let (v, t) = self.hypot(name, &positional)?;
                return Ok(Operand::Num(v, t));
            }
            How::Ieee => {
                let which = IeeeFn::from_name(&name.text).expect("an IEEE_ARITHMETIC procedure");
                let (v, t) = self.ieee_fn(which, name, &positional)?;
                return Ok(Operand::Num(v, t));
            }
            How::Index if positional.len() == 3 => {
                return self.search(name, Search::Index, &positional);
            }
            How::Search(what) => {
                return self.search(name, what, &positional);
            }
            How::Index => {
                arity(self, 2, 2)?;
                if self.searches_built(&positional) {
                    return self.buffer_search_intrinsic(name, Search::Index, &positional);
                }
                let a = self.char_operand(positional[0], &name.text)?;
                let b = self.char_operand(positional[1], &name.text)?;
                let at = self.val(Inst::CharIndex(a, b), Type::I64);
                let at = self.val(Inst::Convert(at, Rounding::Trunc), Type::I32);
                return Ok(Operand::Num(at, Type::I32));
            }
            _ => {}
        }
        let mut vals = Vec::new();
        for x in &positional {
            let (v, t) = self.num(x)?;
            if t == Type::Bool {
                return Err(self.err(x.span, format!("logical argument to `{}`", name.text)));
            }
            vals.push((v, t, *x));
        }
        let kind_val = match kind {
            Some(k) => Some(
                self.fold(k)?
                    .as_int()
                    .ok_or_else(|| self.err(k.span, "kind must be an integer constant"))?,
            ),
            None => None,
        };
        let (v, t) = match how {
            How::Math(op) | How::RoundFloat(op) => {
                arity(self, 1, 1)?;
                let (v, t, x) = vals[0];
                let target = arg_ty.unwrap_or(t);
                if !target.is_float() {
                    return Err(self.err(
                        x.span,
                        format!(
                            "argument of `{}` must be real, not {}",
                            name.text,
                            type_name(t)
                        ),
                    ));
                }
                let v = self.convert(v, t, target);
                (self.val(Inst::Unary(op, v), target), target)
            }
            How::Abs => {
                arity(self, 1, 1)?;
                let (v, t, _) = vals[0];
                let target = arg_ty.unwrap_or(t);
                let v = self.convert(v, t, target);
                (self.val(Inst::Unary(UnaryOp::Abs, v), target), target)
            }
            How::Binary(op) | How::MinMax(op) => {
                if matches!(how, How::Binary(_)) {
                    arity(self, 2, 2)?;
                } else {
                    arity(self, 2, usize::MAX)?;
                }
                let common = arg_ty
                    .unwrap_or_else(|| vals.iter().fold(vals[0].1, |acc, v| promote(acc, v.1)));
                if matches!(op, BinaryOp::Atan2) && !common.is_float() {
                    return Err(
                        self.err(e.span, format!("arguments of `{}` must be real", name.text))
                    );
                }
                let mut acc = self.convert(vals[0].0, vals[0].1, common);
                for &(v, t, _) in &vals[1..] {
                    let v = self.convert(v, t, common);
                    acc = self.val(Inst::Binary(op, acc, v), common);
                }
                match res_ty {
                    Some(r) if r.is_int() && common.is_float() => {
                        (self.val(Inst::Convert(acc, Rounding::Trunc), r), r)
                    }
                    Some(r) => (self.convert(acc, common, r), r),
                    None => (acc, common),
                }
            }
            How::ToInt(rounding) => {
                arity(self, 1, 1)?;
                let (v, t, _) = vals[0];
                let target = match kind_val {
                    Some(k) => int_kind(k)
                        .ok_or_else(|| self.err(e.span, format!("unsupported INTEGER kind {k}")))?,
                    None => Type::I32,
                };
                let (v, t) = match arg_ty {
                    Some(a) => (self.convert(v, t, a), a),
                    None => (v, t),
                };
                if t.is_int() {
                    (self.convert(v, t, target), target)
                } else {
                    (self.val(Inst::Convert(v, rounding), target), target)
                }
            }
            How::ToReal => {
                arity(self, 1, 1)?;
                let (v, t, _) = vals[0];
                let target = match kind_val {
                    Some(k) => real_kind(k)
                        .ok_or_else(|| self.err(e.span, format!("unsupported REAL kind {k}")))?,
                    None => res_ty.unwrap_or(Type::F32),
                };
                (self.convert(v, t, target), target)
            }
            How::Inquiry => {
                arity(self, 1, 1)?;
                let (_, t, _) = vals[0];
                let c = numeric_inquiry(&name.text, t).ok_or_else(|| {
                    self.err(e.span, format!("`{}` of {}", name.text, type_name(t)))
                })?;
                (self.konst(c.to_ir().expect("numeric"), t), t)
            }
            How::Kind => {
                arity(self, 1, 1)?;
                (self.int(kind_of(vals[0].1), Type::I32), Type::I32)
            }
            How::Shape
            | How::Reduction
            | How::Len
            | How::Index
            | How::Search(_)
            | How::Str
            | How::Code
            | How::Merge
            | How::Hypot
            | How::Allocated
            | How::Transform
            | How::Ieee => {
                unreachable!("handled above")
            }
        };
        Ok(Operand::Num(v, t))
    }

    /// SIZE, LBOUND and UBOUND of an array expression other than a whole
    /// variable (a section `x(2:n-1)`, `b - matmul(a, x)`): its extents,
    /// its lower bounds 1. DIM= must be a constant.
    fn expression_shape(
        &mut self,
        which: &str,
        array: &Expr,
        dim: Option<&Expr>,
    ) -> R<(Value, Type)> {
        let Some(src) = self.array_source(array) else {
            return Err(self.err(
                array.span,
                format!("`{which}` of an expression is not supported"),
            ));
        };
        let extents = self.extents(&src)?;
        let i64t = Type::I64;
        let v = match dim {
            None if which == "size" => {
                let mut n = self.int(1, i64t);
                for &x in &extents {
                    let x = self.val(Inst::Load(x), i64t);
                    n = self.val(Inst::Binary(BinaryOp::Mul, n, x), i64t);
                }
                n
            }
            None => {
                return Err(self.err(
                    array.span,
                    format!("unsupported Fortran: `{which}` of an expression without DIM="),
                ))
            }
            Some(d) => {
                let k = match self.fold(d)? {
                    super::consts::ConstVal::Int(k, _) if k >= 1 && k as usize <= extents.len() => {
                        k as usize
                    }
                    _ => {
                        return Err(self.err(
                            d.span,
                            format!(
                                "DIM= of `{which}` must be a constant from 1 to {}",
                                extents.len()
                            ),
                        ))
                    }
                };
                if which == "lbound" {
                    self.int(1, i64t)
                } else {
                    self.val(Inst::Load(extents[k - 1]), i64t)
                }
            }
        };
        Ok((self.convert(v, i64t, Type::I32), Type::I32))
    }

    /// SIZE, LBOUND and UBOUND of a whole array variable (SIZE of an
    /// array constructor too, [`Self::constructor_size`]).
    fn shape_inquiry(&mut self, which: &str, array: &Expr, dim: Option<&Expr>) -> R<(Value, Type)> {
        if let ("size", ExprKind::ArrayConstructor(items)) = (which, &array.kind) {
            let n = self.constructor_size(items, dim)?;
            return Ok((self.convert(n, Type::I64, Type::I32), Type::I32));
        }
        let ExprKind::Name(n) = &array.kind else {
            return self.expression_shape(which, array, dim);
        };
        // An array of structures: the last dimensions of any component.
        let (v, skip) = match self.resolve(n)? {
            // The strings of an array of deferred-length strings follow
            // their characters.
            Resolved::Var(v) if self.is_deferred_string_array(&n.text) => (v, 1),
            Resolved::Var(v) => (v, 0),
            Resolved::Struct(st) if st.dims.is_some() => {
                let leaf = Name {
                    text: st.leaves.first().cloned().unwrap_or_default(),
                    span: n.span,
                };
                let Resolved::Var(v) = self.resolve(&leaf)? else {
                    return Err(self.err(array.span, format!("`{}` has no components", n.text)));
                };
                let own = self.proc.var(v).dims.len();
                (
                    v,
                    own.saturating_sub(st.dims.as_ref().map_or(0, Vec::len)) as u32,
                )
            }
            _ => return Err(self.err(array.span, format!("`{}` is not an array", n.text))),
        };
        let rank = self.proc.var(v).dims.len() - skip as usize;
        if rank == 0 {
            return Err(self.err(array.span, format!("`{}` is not an array", n.text)));
        }
        let d = match dim {
            Some(x) => {
                let d = self.fold(x)?.as_int().unwrap_or(0);
                if d < 1 || d as usize > rank {
                    return Err(self.err(
                        x.span,
                        format!("dimension {d} out of range for `{}` of rank {rank}", n.text),
                    ));
                }
                Some(d as u32 - 1 + skip)
            }
            None if which == "size" => None,
            None if rank == 1 => Some(skip),
            None => {
                return Err(self.err(
                    array.span,
                    format!("unsupported Fortran: `{which}` of a rank-{rank} array without dim="),
                ))
            }
        };
        self.fail_if_unallocated(v, n.span);
        let i64t = Type::I64;
        let v64 = match (which, d) {
            ("size", None) => {
                let mut acc = self.val(Inst::DimExtent(v, skip), i64t);
                for k in skip + 1..skip + rank as u32 {
                    let e = self.val(Inst::DimExtent(v, k), i64t);
                    acc = self.val(Inst::Binary(BinaryOp::Mul, acc, e), i64t);
                }
                acc
            }
            ("size", Some(d)) => self.val(Inst::DimExtent(v, d), i64t),
            ("lbound", Some(d)) => self.val(Inst::DimLower(v, d), i64t),
            (_, Some(d)) => {
                let lo = self.val(Inst::DimLower(v, d), i64t);
                let ext = self.val(Inst::DimExtent(v, d), i64t);
                let one = self.int(1, i64t);
                let hi = self.val(Inst::Binary(BinaryOp::Add, lo, ext), i64t);
                self.val(Inst::Binary(BinaryOp::Sub, hi, one), i64t)
            }
            _ => unreachable!("dim resolved above"),
        };
        Ok((self.convert(v64, i64t, Type::I32), Type::I32))
    }

    /// SIZE (I64) of an array constructor, of numbers or of structures
    /// (`size([p1, p2, ring])`): one for each scalar item, the size of each
    /// whole-array item and of each nested constructor. DIM= may only be 1;
    /// implied DO loops and array sections among the items are refused.
    fn constructor_size(&mut self, items: &[Expr], dim: Option<&Expr>) -> R<Value> {
        if let Some(x) = dim {
            if self.fold(x)?.as_int() != Some(1) {
                return Err(self.err(
                    x.span,
                    "`dim=` of `size` of an array constructor (of rank 1) must be 1",
                ));
            }
        }
        let i64t = Type::I64;
        let mut total = self.int(0, i64t);
        for item in items {
            let n = match &item.kind {
                ExprKind::ArrayConstructor(inner) => self.constructor_size(inner, None)?,
                ExprKind::Name(n) if self.names_array(n)? => {
                    let (v, t) = self.shape_inquiry("size", item, None)?;
                    self.convert(v, t, i64t)
                }
                ExprKind::ImpliedDo { .. } => {
                    return Err(self.err(
                        item.span,
                        "unsupported Fortran: `size` of an array constructor with an implied DO",
                    ))
                }
                _ if self.array_source(item).is_some() => {
                    return Err(self.err(
                        item.span,
                        "unsupported Fortran: `size` of an array constructor with an array expression item",
                    ))
                }
                _ => self.int(1, i64t),
            };
            total = self.val(Inst::Binary(BinaryOp::Add, total, n), i64t);
        }
        Ok(total)
    }

    /// True when `n` names an array variable or an array of structures.
    fn names_array(&mut self, n: &Name) -> R<bool> {
        Ok(match self.resolve(n)? {
            Resolved::Var(v) => self.proc.var(v).is_array(),
            Resolved::Struct(st) => st.dims.is_some(),
            _ => false,
        })
    }

    /// LEN of a character expression: its constant length when known,
    /// else the length at run time.
    fn len_of(&mut self, x: &Expr) -> R<Operand> {
        let bare = x.without_parens();
        if let Some(n) = self.fixed_string_len(bare) {
            return Ok(Operand::Num(self.int(n, Type::I32), Type::I32));
        }
        if let ExprKind::Name(n) = &bare.kind {
            if self.is_deferred_string_array(&n.text) {
                let n = self.deferred_array_len(n)?;
                return Ok(Operand::Num(
                    self.convert(n, Type::I64, Type::I32),
                    Type::I32,
                ));
            }
        }
        if let (Some(unit), ExprKind::Apply { name, args }) =
            (self.runtime_len_fn(bare), &bare.kind)
        {
            // A function result of non-constant length: its declared
            // length, without the call; a deferred-length one is known
            // only by calling the function.
            let n = if self.prog.sigs[unit].deferred_result {
                let (buf, n) = self.runtime_len_call(unit, name, args)?;
                self.emit(Inst::Deallocate(buf), None);
                n
            } else {
                self.runtime_result_len(unit, name, args)?
            };
            let n = self.val(Inst::Load(n), Type::I64);
            return Ok(Operand::Num(
                self.convert(n, Type::I64, Type::I32),
                Type::I32,
            ));
        }
        if let Some(f) = self.wrapped_runtime_len_fn(bare) {
            if !matches!(&bare.kind, ExprKind::Apply { name, .. } if name.text == "trim") {
                // ADJUSTL and ADJUSTR keep the length.
                return self.len_of(f);
            }
        }
        if super::char_expr::is_concat(bare) {
            // The sum of the parts' lengths (no need to build the value).
            let mut total = self.int(0, Type::I32);
            for part in super::char_expr::concat_parts(bare) {
                let Operand::Num(n, _) = self.len_of(part)? else {
                    return Err(self.err(part.span, "LEN of a non-character value"));
                };
                total = self.val(Inst::Binary(BinaryOp::Add, total, n), Type::I32);
            }
            return Ok(Operand::Num(total, Type::I32));
        }
        if let ExprKind::Apply { name, args } = &bare.kind {
            if matches!(name.text.as_str(), "adjustl" | "adjustr")
                && self.names_string_fn(name)
                && args.len() == 1
            {
                if let ArgValue::Expr(inner) = &args[0].value {
                    // ADJUSTL and ADJUSTR keep the length.
                    return self.len_of(inner);
                }
            }
        }
        if self.is_built_char(bare) {
            // Built to be measured (REPEAT, TRIM of data of run-time length).
            let n = self.built_len(bare)?;
            return Ok(Operand::Num(
                self.convert(n, Type::I64, Type::I32),
                Type::I32,
            ));
        }
        let r = self.char_operand(x, "len")?;
        let len = match self.char_len_of(&r) {
            Some(n) => self.int(n, Type::I32),
            None => {
                let n = self.val(Inst::CharLen(r), Type::I64);
                self.val(Inst::Convert(n, Rounding::Trunc), Type::I32)
            }
        };
        Ok(Operand::Num(len, Type::I32))
    }

    /// LEN_TRIM, SCAN, VERIFY and INDEX with BACK=: the first (last, with
    /// BACK true) position of the string where the search succeeds, else 0
    /// (LEN_TRIM: the last non-blank, VERIFY of a blank from the back). A
    /// BACK= known only at run time selects between both directions.
    fn search(&mut self, name: &Name, what: Search, positional: &[&Expr]) -> R<Operand> {
        let (lo, hi) = match what {
            Search::LenTrim => (1, 1),
            _ => (2, 3),
        };
        if positional.len() < lo || positional.len() > hi {
            return Err(self.err(
                name.span,
                format!("wrong number of arguments to `{}`", name.text),
            ));
        }
        if self.searches_built(positional) {
            return self.buffer_search_intrinsic(name, what, positional);
        }
        // LEN_TRIM ignores trailing blanks: `len_trim(adjustl(s))` of
        // run-time length reads `s` from its first non-blank.
        let a = if what == Search::LenTrim {
            match self.char_unpadded(positional[0])? {
                Operand::Char(r) => r,
                Operand::Num(..) => return Err(self.not_char_argument(positional[0], &name.text)),
            }
        } else {
            self.char_operand(positional[0], &name.text)?
        };
        let (op, set) = match what {
            Search::LenTrim => (CharSearch::Verify, CharRef::literal(b" ")),
            Search::Index => (
                CharSearch::Index,
                self.char_operand(positional[1], &name.text)?,
            ),
            Search::Scan => (
                CharSearch::Scan,
                self.char_operand(positional[1], &name.text)?,
            ),
            Search::Verify => (
                CharSearch::Verify,
                self.char_operand(positional[1], &name.text)?,
            ),
        };
        let back = self.back_arg(name, what, positional.get(lo).copied())?;
        let at = |this: &mut Self, back: bool| {
            let i = this.val(
                Inst::CharSearch(op, back, a.clone(), set.clone()),
                Type::I64,
            );
            this.val(Inst::Convert(i, Rounding::Trunc), Type::I32)
        };
        let r = match back {
            Ok(back) => at(self, back),
            Err(cond) => {
                let last = at(self, true);
                let first = at(self, false);
                self.val(Inst::Select(cond, last, first), Type::I32)
            }
        };
        Ok(Operand::Num(r, Type::I32))
    }

    /// The BACK= argument `x` of a search: a constant, else the (Bool)
    /// value known at run time.
    fn back_arg(&mut self, name: &Name, what: Search, x: Option<&Expr>) -> R<Result<bool, Value>> {
        let Some(x) = x else {
            return Ok(Ok(what == Search::LenTrim));
        };
        match self.num(x)? {
            (v, Type::Bool) => Ok(match self.const_of(v) {
                Some(Const::Bool(b)) => Ok(b),
                _ => Err(v),
            }),
            _ => Err(self.err(x.span, format!("BACK= of `{}` must be logical", name.text))),
        }
    }

    /// True when the string or the substring / set of a search is
    /// character data that needs storage of its own
    /// ([`Self::is_built_char`]).
    fn searches_built(&self, positional: &[&Expr]) -> bool {
        positional.iter().take(2).any(|x| self.is_built_char(x))
    }

    /// LEN_TRIM, INDEX, SCAN or VERIFY where the string or the substring /
    /// set is character data that needs storage of its own (a character
    /// function result of non-constant length, a concatenation, ADJUSTL,
    /// ADJUSTR or REPEAT of data of run-time length): loops over both
    /// ([`Self::searched_values`]).
    fn buffer_search_intrinsic(
        &mut self,
        name: &Name,
        what: Search,
        positional: &[&Expr],
    ) -> R<Operand> {
        let (op, set) = match what {
            Search::LenTrim => (CharSearch::Verify, None),
            Search::Index => (CharSearch::Index, Some(positional[1])),
            Search::Scan => (CharSearch::Scan, Some(positional[1])),
            Search::Verify => (CharSearch::Verify, Some(positional[1])),
        };
        let (first, last) = self.searched_values(op, positional[0], set)?;
        let lo = if what == Search::LenTrim { 1 } else { 2 };
        let back = self.back_arg(name, what, positional.get(lo).copied())?;
        let i64t = Type::I64;
        let at = match back {
            Ok(true) => self.val(Inst::Load(last), i64t),
            Ok(false) => self.val(Inst::Load(first), i64t),
            Err(cond) => {
                let l = self.val(Inst::Load(last), i64t);
                let f = self.val(Inst::Load(first), i64t);
                self.val(Inst::Select(cond, l, f), i64t)
            }
        };
        let r = self.val(Inst::Convert(at, Rounding::Trunc), Type::I32);
        Ok(Operand::Num(r, Type::I32))
    }

    /// A character argument of an intrinsic.
    fn char_operand(&mut self, x: &Expr, intrinsic: &str) -> R<CharRef> {
        match self.expr(x)? {
            Operand::Char(r) => Ok(r),
            Operand::Num(..) => Err(self.not_char_argument(x, intrinsic)),
        }
    }

    /// The error of a non-character argument `x` of `intrinsic`.
    fn not_char_argument(&mut self, x: &Expr, intrinsic: &str) -> super::lowerer::Reported {
        self.err(
            x.span,
            format!("the argument of `{intrinsic}` must be character data"),
        )
    }
}
