//! Character codes: ICHAR and IACHAR (a character's code) and CHAR and
//! ACHAR (the character of a code).
//!
//! Characters are bytes and the collating sequence is ASCII extended to
//! 256 codes (as gfortran's default character kind), so the processor
//! collating sequence of ICHAR / CHAR and the ASCII one of IACHAR / ACHAR
//! are the same. Both directions are positions in the 256-byte table of
//! all codes in order: the code of `c` is `INDEX(table, c(1:1)) - 1` (an
//! [`Inst::CharIndex`]) and the character of `i` is the substring
//! `table(i+1:i+1)`, so the IR, the interpreter, the JIT and the Fortran
//! back end need nothing new. A code outside 0..255 is a substring out of
//! range at run time (a runtime error), a constant one is a located error.

use super::super::ast::{Arg, ArgValue, Expr, Name};
use super::lowerer::{Lowerer, Operand, R};
use adjit_ir::{BinaryOp, CharBase, CharRef, Const, Inst, Rounding, Type};

/// The number of character codes (one byte each).
const CODES: i64 = 256;

/// Every character code in order: position `k + 1` holds code `k`.
fn code_table() -> CharRef {
    CharRef::literal(&(0..=255u8).collect::<Vec<u8>>())
}

/// Which direction a character-code intrinsic converts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum CodeFn {
    /// ICHAR / IACHAR: character to integer code.
    Code,
    /// CHAR / ACHAR: integer code to a character of length 1.
    Char,
}

impl CodeFn {
    /// The character-code intrinsic of that (lower-case) name.
    pub(super) fn from_name(name: &str) -> Option<CodeFn> {
        match name {
            "ichar" | "iachar" => Some(CodeFn::Code),
            "char" | "achar" => Some(CodeFn::Char),
            _ => None,
        }
    }
}

impl Lowerer<'_, '_> {
    /// Lowers ICHAR, IACHAR, CHAR or ACHAR (with an optional KIND=, by
    /// keyword or as the second argument).
    pub(super) fn char_code_fn(&mut self, which: CodeFn, name: &Name, args: &[Arg]) -> R<Operand> {
        let mut positional = Vec::new();
        let mut kind = None;
        for a in args {
            let ArgValue::Expr(x) = &a.value else {
                return Err(self.err(
                    name.span,
                    format!("a range is not an argument of `{}`", name.text),
                ));
            };
            match a.keyword.as_ref().map(|k| k.text.as_str()) {
                Some("kind") => kind = Some(x),
                Some("c" | "i") | None => positional.push(x),
                Some(other) => {
                    let at = a.keyword.as_ref().map_or(name.span, |k| k.span);
                    return Err(self.err(at, format!("`{}` has no argument `{other}`", name.text)));
                }
            }
        }
        if kind.is_none() && positional.len() == 2 {
            kind = positional.pop();
        }
        if positional.len() != 1 {
            return Err(self.err(
                name.span,
                format!("wrong number of arguments to `{}`", name.text),
            ));
        }
        let kind = match kind {
            Some(k) => Some((
                self.fold(k)?
                    .as_int()
                    .ok_or_else(|| self.err(k.span, "kind must be an integer constant"))?,
                k,
            )),
            None => None,
        };
        match which {
            CodeFn::Code => {
                let ty = match kind {
                    None | Some((4, _)) => Type::I32,
                    Some((8, _)) => Type::I64,
                    Some((_, k)) => {
                        return Err(self.err(
                            k.span,
                            format!("unsupported integer kind in `{}`", name.text),
                        ))
                    }
                };
                let v = self.char_code(positional[0], name, ty)?;
                Ok(Operand::Num(v, ty))
            }
            CodeFn::Char => {
                if let Some((k, at)) = kind {
                    if k != 1 {
                        return Err(self.err(
                            at.span,
                            format!(
                                "unsupported character kind {k} in `{}` (only kind 1)",
                                name.text
                            ),
                        ));
                    }
                }
                self.char_of_code(positional[0], name).map(Operand::Char)
            }
        }
    }

    /// The code of the character `x` (of length 1) as a value of type `ty`.
    fn char_code(&mut self, x: &Expr, name: &Name, ty: Type) -> R<adjit_ir::Value> {
        if let Some(s) = self.deferred_string_ref(x) {
            let c = self.deferred_string_first_char(&s, x.span)?;
            let code = self.code_of(&c);
            return Ok(self.code_as(code, ty));
        }
        let r = match self.expr(x)? {
            Operand::Char(r) => r,
            Operand::Num(..) => {
                return Err(self.err(
                    x.span,
                    format!("the argument of `{}` must be character data", name.text),
                ))
            }
        };
        match self.char_len_of(&r) {
            Some(1) | None => {}
            Some(n) => {
                return Err(self.err(
                    x.span,
                    format!(
                        "the argument of `{}` must have length 1, not {n}",
                        name.text
                    ),
                ))
            }
        }
        // A constant character: its code, folded.
        if let CharBase::Literal(text) = &r.base {
            let at = match r.start.map(|s| self.const_of(s)) {
                None => Some(0),
                Some(Some(Const::Int(s))) => usize::try_from(s - 1).ok(),
                Some(_) => None,
            };
            if let Some(&b) = at.and_then(|i| text.get(i)) {
                return Ok(self.int(i64::from(b), ty));
            }
        }
        let code = self.code_of(&r);
        Ok(self.code_as(code, ty))
    }

    /// A code (I64) as a value of type `ty`.
    fn code_as(&mut self, code: adjit_ir::Value, ty: Type) -> adjit_ir::Value {
        if ty == Type::I64 {
            code
        } else {
            self.val(Inst::Convert(code, Rounding::Trunc), ty)
        }
    }

    /// The character of code `x` (an integer): one character of the code
    /// table.
    fn char_of_code(&mut self, x: &Expr, name: &Name) -> R<CharRef> {
        let (v, t) = self.num(x)?;
        if !matches!(t, Type::I32 | Type::I64) {
            return Err(self.err(
                x.span,
                format!("the argument of `{}` must be an integer", name.text),
            ));
        }
        if let Some(Const::Int(c)) = self.const_of(v) {
            if !(0..CODES).contains(&c) {
                return Err(self.err(
                    x.span,
                    format!(
                        "the argument of `{}` is {c}, outside the character codes 0 to 255",
                        name.text
                    ),
                ));
            }
            return Ok(CharRef::literal(&[c as u8]));
        }
        let v = self.convert(v, t, Type::I64);
        Ok(self.char_with_code(v))
    }

    /// The code (I64) of the first character of `r`.
    pub(super) fn code_of(&mut self, r: &CharRef) -> adjit_ir::Value {
        let one = self.int(1, Type::I64);
        let first = self.shifted_ref(r, one, one);
        let at = self.val(Inst::CharIndex(code_table(), first), Type::I64);
        self.val(Inst::Binary(BinaryOp::Sub, at, one), Type::I64)
    }

    /// The character of the code `code` (I64; outside 0..255 a substring
    /// out of range at run time).
    pub(super) fn char_with_code(&mut self, code: adjit_ir::Value) -> CharRef {
        let one = self.int(1, Type::I64);
        let at = self.val(Inst::Binary(BinaryOp::Add, code, one), Type::I64);
        CharRef {
            start: Some(at),
            end: Some(at),
            ..code_table()
        }
    }
}
