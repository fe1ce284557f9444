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
use super::char_expr::{Piece, Pieces, StrFn, MAX_TEMP_LEN};
use super::char_runtime::CharVal;
use super::lowerer::{Lowerer, Operand, Reported, R};
use adjit_ir::{BinaryOp, CharRef, CharSearch, Const, Inst, Type, VarId};

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
        if super::char_expr::is_concat(e) {
            return self.concat_value(e, true);
        }
        if let ExprKind::Apply { name, args } = &e.kind {
            if StrFn::from_name(&name.text) == Some(StrFn::Adjustl) && self.names_string_fn(name) {
                let x = self.string_args(name, args, 1)?[0];
                if self.is_built_char(x) {
                    return self.expr(e);
                }
                let r = self.string_operand(x, name)?;
                if self.char_len_of(&r).is_none() {
                    return Ok(Operand::Char(self.after_leading_blanks(&r)));
                }
            }
        }
        self.expr(e)
    }

    /// True when `name` refers to the character intrinsic of that name.
    pub(super) fn names_string_fn(&self, name: &Name) -> bool {
        StrFn::from_name(&name.text).is_some()
            && self.is_intrinsic_name(&name.text)
            && !self.declared_external(&name.text)
            && self.names_intrinsic(name)
    }

    /// Lowers TRIM, ADJUSTL, ADJUSTR or REPEAT.
    pub(super) fn string_fn(&mut self, which: StrFn, name: &Name, args: &[Arg]) -> R<Operand> {
        let pieces = self.string_pieces(which, name, args)?;
        if which == StrFn::Trim {
            let [Piece::Text(r)] = &pieces.parts[..] else {
                return Err(self.err(
                    name.span,
                    "unsupported Fortran: `trim` of a character function of run-time result length here (supported in comparisons, SELECT CASE selectors, PRINT, `//`, assignments, actual arguments and LEN_TRIM)",
                ));
            };
            return Ok(Operand::Char(r.clone()));
        }
        let Some(len) = pieces.len.filter(|&n| n <= MAX_TEMP_LEN) else {
            return Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: `{}` of run-time length here (supported in comparisons, SELECT CASE selectors, PRINT, `//`, assignments and actual arguments{})",
                    name.text,
                    if which == StrFn::Adjustl {
                        " and as the argument of TRIM"
                    } else {
                        ""
                    }
                ),
            ));
        };
        Ok(Operand::Char(self.pieces_in_temp(pieces, len)))
    }

    /// TRIM, ADJUSTL, ADJUSTR or REPEAT as the parts of its result.
    pub(super) fn string_pieces(&mut self, which: StrFn, name: &Name, args: &[Arg]) -> R<Pieces> {
        let n = if which == StrFn::Repeat { 2 } else { 1 };
        let xs = self.string_args(name, args, n)?;
        let i64t = Type::I64;
        Ok(match which {
            // Other data of run-time length that needs storage: its
            // value up to the last non-blank.
            StrFn::Trim if self.is_built_char(xs[0]) => match self.char_value(xs[0])? {
                CharVal::Buf { buf, len } => {
                    let n = self.val(Inst::Load(len), i64t);
                    let last = self.buffer_last_nonblank(buf, n)?;
                    Pieces {
                        parts: vec![Piece::Buf(buf, last)],
                        len: None,
                    }
                }
                CharVal::Data(Operand::Char(r)) => {
                    let last = self.last_nonblank(&r);
                    let one = self.int(1, i64t);
                    Pieces {
                        parts: vec![Piece::Text(self.shifted_ref(&r, one, last))],
                        len: None,
                    }
                }
                CharVal::Data(Operand::Num(..)) => return Err(self.not_char(xs[0], name)),
            },
            StrFn::Trim => {
                let Operand::Char(r) = self.char_unpadded(xs[0])? else {
                    return Err(self.not_char(xs[0], name));
                };
                let last = self.last_nonblank(&r);
                let one = self.int(1, i64t);
                Pieces {
                    parts: vec![Piece::Text(self.shifted_ref(&r, one, last))],
                    len: None,
                }
            }
            StrFn::Adjustl | StrFn::Adjustr => {
                let r = match self.string_value(xs[0], name)? {
                    Ok(r) => r,
                    Err((buf, n)) => return self.adjusted_buffer(which == StrFn::Adjustl, buf, n),
                };
                let len = self.char_len_value(&r);
                let (text, kept) = if which == StrFn::Adjustl {
                    let text = self.after_leading_blanks(&r);
                    let kept = self.char_len_value(&text);
                    (text, kept)
                } else {
                    let last = self.last_nonblank(&r);
                    let one = self.int(1, i64t);
                    (self.shifted_ref(&r, one, last), last)
                };
                let gap = self.val(Inst::Binary(BinaryOp::Sub, len, kept), i64t);
                let parts = if which == StrFn::Adjustl {
                    vec![Piece::Text(text), Piece::Blanks(gap)]
                } else {
                    vec![Piece::Blanks(gap), Piece::Text(text)]
                };
                Pieces {
                    parts,
                    len: self.char_len_of(&r),
                }
            }
            StrFn::Repeat => {
                let r = self.string_value(xs[0], name)?;
                let copies = match self.num(xs[1])? {
                    (v, t @ (Type::I32 | Type::I64)) => match self.const_of(v) {
                        Some(Const::Int(c)) if c < 0 => {
                            return Err(self
                                .err(xs[1].span, "the NCOPIES argument of `repeat` is negative"))
                        }
                        Some(Const::Int(c)) => self.int(c, i64t),
                        _ => {
                            let v = self.convert(v, t, i64t);
                            let zero = self.int(0, i64t);
                            self.val(Inst::Binary(BinaryOp::Max, v, zero), i64t)
                        }
                    },
                    _ => {
                        return Err(self.err(
                            xs[1].span,
                            "the NCOPIES argument of `repeat` must be an integer",
                        ))
                    }
                };
                let r = match r {
                    Ok(r) => r,
                    Err((buf, n)) => return self.repeat_buffer(buf, n, copies),
                };
                let len = match (self.char_len_of(&r), self.const_of(copies)) {
                    (Some(n), Some(Const::Int(c))) => n.checked_mul(c).or(Some(i64::MAX)),
                    _ => None,
                };
                Pieces {
                    parts: vec![Piece::Repeat(r, copies)],
                    len,
                }
            }
        })
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

    /// The character argument of ADJUSTL, ADJUSTR or REPEAT: its data, or
    /// (`Err`) a buffer and its length (an I64 variable) when it is built
    /// of run-time length.
    fn string_value(&mut self, x: &Expr, name: &Name) -> R<Result<CharRef, (VarId, VarId)>> {
        match self.char_value(x)? {
            CharVal::Data(Operand::Char(r)) => Ok(Ok(r)),
            CharVal::Buf { buf, len } => Ok(Err((buf, len))),
            CharVal::Data(Operand::Num(..)) => Err(self.not_char(x, name)),
        }
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
