//! Character-valued intrinsics: TRIM, ADJUSTL, ADJUSTR and REPEAT.
//!
//! TRIM is a substring of its argument ending at its last non-blank (a
//! run-time [`Inst::CharSearch`]), so it needs no storage of its own.
//! ADJUSTL, ADJUSTR and REPEAT of data of constant length are copied into
//! a compiler temporary of their result's length. Where trailing blanks do
//! not matter (comparisons, SELECT CASE, the argument of TRIM, the
//! right-hand side of an assignment) ADJUSTL of data of run-time length is
//! the substring from its first non-blank, padded by the consumer.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Operand, Reported, R};
use adjit_ir::{BinaryOp, CharRef, CharSearch, Const, Inst, Type, VarId};

/// The longest result a character intrinsic copies into a temporary.
const MAX_TEMP_LEN: i64 = 1 << 20;

/// A character-valued intrinsic.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum StrFn {
    /// TRIM(string).
    Trim,
    /// ADJUSTL(string).
    Adjustl,
    /// ADJUSTR(string).
    Adjustr,
    /// REPEAT(string, ncopies).
    Repeat,
}

impl StrFn {
    /// The intrinsic named `name`.
    pub(super) fn from_name(name: &str) -> Option<StrFn> {
        Some(match name {
            "trim" => StrFn::Trim,
            "adjustl" => StrFn::Adjustl,
            "adjustr" => StrFn::Adjustr,
            "repeat" => StrFn::Repeat,
            _ => return None,
        })
    }
}

impl Lowerer<'_, '_> {
    /// A fresh scalar character temporary of constant length `len`.
    pub(super) fn char_temp(&mut self, len: i64) -> VarId {
        self.ntemps += 1;
        self.proc.add_var(adjit_ir::Var {
            name: format!("_c{}", self.ntemps),
            ty: Type::Char,
            dims: Vec::new(),
            char_len: Some(adjit_ir::Bound::Const(len.max(1))),
            storage: adjit_ir::Storage::Local,
        })
    }

    /// Character data of an expression whose trailing blanks do not
    /// matter to the consumer (a comparison, a SELECT CASE selector, the
    /// argument of TRIM, the right-hand side of an assignment): ADJUSTL of
    /// run-time length is then the substring from the first non-blank.
    pub(super) fn char_unpadded(&mut self, e: &Expr) -> R<Operand> {
        if let ExprKind::Apply { name, args } = &e.kind {
            if StrFn::from_name(&name.text) == Some(StrFn::Adjustl) && self.names_string_fn(name) {
                let x = self.string_args(name, args, 1)?[0];
                let r = self.string_operand(x, name)?;
                if self.char_len_of(&r).is_none() {
                    return Ok(Operand::Char(self.after_leading_blanks(&r)));
                }
            }
        }
        self.expr(e)
    }

    /// True when `name` refers to the character intrinsic of that name.
    fn names_string_fn(&self, name: &Name) -> bool {
        StrFn::from_name(&name.text).is_some()
            && self.is_intrinsic_name(&name.text)
            && !self.declared_external(&name.text)
            && self.names_intrinsic(name)
    }

    /// Lowers TRIM, ADJUSTL, ADJUSTR or REPEAT.
    pub(super) fn string_fn(&mut self, which: StrFn, name: &Name, args: &[Arg]) -> R<Operand> {
        let n = if which == StrFn::Repeat { 2 } else { 1 };
        let xs = self.string_args(name, args, n)?;
        let r = match which {
            StrFn::Trim => {
                let Operand::Char(r) = self.char_unpadded(xs[0])? else {
                    return Err(self.not_char(xs[0], name));
                };
                let last = self.last_nonblank(&r);
                let one = self.int(1, Type::I64);
                self.shifted_ref(&r, one, last)
            }
            StrFn::Adjustl | StrFn::Adjustr => {
                let r = self.string_operand(xs[0], name)?;
                let len = self.temp_len(&r, xs[0], name)?;
                if len == 0 {
                    return Ok(Operand::Char(CharRef::literal(b"")));
                }
                let tmp = self.char_temp(len);
                let to = CharRef::whole(tmp);
                if which == StrFn::Adjustl {
                    let from = self.after_leading_blanks(&r);
                    self.emit(Inst::CharAssign(to.clone(), from), None);
                } else {
                    // Blanks, then the string up to its last non-blank at
                    // the end.
                    let last = self.last_nonblank(&r);
                    let one = self.int(1, Type::I64);
                    let head = self.shifted_ref(&r, one, last);
                    let n = self.int(len, Type::I64);
                    let gap = self.val(Inst::Binary(BinaryOp::Sub, n, last), Type::I64);
                    let start = self.val(Inst::Binary(BinaryOp::Add, gap, one), Type::I64);
                    self.emit(Inst::CharAssign(to.clone(), CharRef::literal(b"")), None);
                    let dest = self.shifted_ref(&to, start, n);
                    self.emit(Inst::CharAssign(dest, head), None);
                }
                to
            }
            StrFn::Repeat => {
                let r = self.string_operand(xs[0], name)?;
                let len = self.temp_len(&r, xs[0], name)?;
                let copies = match self.num(xs[1])? {
                    (v, Type::I32 | Type::I64) => match self.const_of(v) {
                        Some(Const::Int(c)) if c >= 0 => c,
                        Some(Const::Int(_)) => {
                            return Err(self.err(
                                xs[1].span,
                                "the NCOPIES argument of `repeat` is negative",
                            ))
                        }
                        _ => {
                            return Err(self.err(
                                xs[1].span,
                                "unsupported Fortran: `repeat` with a number of copies that is not a constant",
                            ))
                        }
                    },
                    _ => {
                        return Err(self.err(
                            xs[1].span,
                            "the NCOPIES argument of `repeat` must be an integer",
                        ))
                    }
                };
                let total = len.checked_mul(copies).filter(|&t| t <= MAX_TEMP_LEN);
                let Some(total) = total else {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: `repeat` longer than {MAX_TEMP_LEN} characters"
                        ),
                    ));
                };
                if total == 0 {
                    return Ok(Operand::Char(CharRef::literal(b"")));
                }
                let tmp = self.char_temp(total);
                let to = CharRef::whole(tmp);
                for k in 0..copies {
                    let dest = self.sub_ref(&to, k * len + 1, (k + 1) * len);
                    self.emit(Inst::CharAssign(dest, r.clone()), None);
                }
                to
            }
        };
        Ok(Operand::Char(r))
    }

    /// The positional arguments of a character intrinsic, `n` of them.
    fn string_args<'e>(&mut self, name: &Name, args: &'e [Arg], n: usize) -> R<Vec<&'e Expr>> {
        let mut out = Vec::new();
        for a in args {
            match &a.value {
                ArgValue::Expr(x) => out.push(x),
                ArgValue::Range { .. } => {
                    return Err(self.err(
                        name.span,
                        format!("a range is not an argument of `{}`", name.text),
                    ))
                }
            }
        }
        if out.len() != n {
            return Err(self.err(
                name.span,
                format!("wrong number of arguments to `{}`", name.text),
            ));
        }
        Ok(out)
    }

    /// The character argument of a character intrinsic.
    fn string_operand(&mut self, x: &Expr, name: &Name) -> R<CharRef> {
        match self.expr(x)? {
            Operand::Char(r) => Ok(r),
            Operand::Num(..) => Err(self.not_char(x, name)),
        }
    }

    /// The error for a numeric argument of a character intrinsic.
    fn not_char(&mut self, x: &Expr, name: &Name) -> Reported {
        self.err(
            x.span,
            format!("the argument of `{}` must be character data", name.text),
        )
    }

    /// The constant length of the argument of a character intrinsic that
    /// copies it into a temporary.
    fn temp_len(&mut self, r: &CharRef, x: &Expr, name: &Name) -> R<i64> {
        match self.char_len_of(r) {
            Some(n) if n <= MAX_TEMP_LEN => Ok(n),
            _ => Err(self.err(
                x.span,
                format!(
                    "unsupported Fortran: `{}` of character data whose length is not a constant (supported in comparisons, SELECT CASE, TRIM and assignments for ADJUSTL)",
                    name.text
                ),
            )),
        }
    }

    /// The position of the last non-blank of `r` (0 when all blank), I64.
    fn last_nonblank(&mut self, r: &CharRef) -> adjit_ir::Value {
        let search = Inst::CharSearch(CharSearch::Verify, true, r.clone(), CharRef::literal(b" "));
        self.val(search, Type::I64)
    }

    /// `r` from its first non-blank to its end (all of `r` when it is
    /// blank).
    fn after_leading_blanks(&mut self, r: &CharRef) -> CharRef {
        let search = Inst::CharSearch(CharSearch::Verify, false, r.clone(), CharRef::literal(b" "));
        let first = self.val(search, Type::I64);
        let one = self.int(1, Type::I64);
        let start = self.val(Inst::Binary(BinaryOp::Max, first, one), Type::I64);
        let len = self.char_len_value(r);
        self.shifted_ref(r, start, len)
    }
}
