//! Array values assigned to arrays of strings held as buffers of
//! characters (arrays of deferred-length strings, ALLOCATABLE CHARACTER
//! arrays of constant length and assumed-shape `character(len=*) ::
//! a(:)` dummies: [`super::deferred_chars`] holds them, one string per
//! column), whole or sections (`a(2:3) = b(1:2)`):
//!
//! - a scalar value is broadcast, built once (`a = 'none'`), to the
//!   strings the target has (allocated, of its length: gfortran does not
//!   reallocate a deferred-length array to a scalar's length);
//! - an array value (a CHARACTER array or a section of one, of constant
//!   length or of strings, ADJUSTL / ADJUSTR of one, an array constructor
//!   of strings with implied DO) is built into a fresh buffer of strings
//!   first, so that it may read the target; a whole ALLOCATABLE target
//!   then takes its shape (and, deferred-length, its length), any other
//!   target must have as many strings (a located runtime error
//!   otherwise);
//! - every string is blank-padded or cut to the target's length.
//!
//! The same built values go to CHARACTER arrays of constant length
//! ([`Lowerer::put_strings_into`]), which [`super::char_array`] uses when
//! the value reads an array of strings or is a constructor with implied
//! DO.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind};
use super::char_expr::{element, StrFn};
use super::deferred_chars::StringCell;
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{
    BinaryOp, Bound, CharBase, CharRef, CmpOp, Inst, RuntimeErrorKind, Span, Type, Value, VarId,
};

/// The bounds `(lo, hi, stride)` of a rank-1 section, each optional.
type SectionBounds<'e> = (Option<&'e Expr>, Option<&'e Expr>, Option<&'e Expr>);

/// The strings an assignment writes or a value reads, of an array of
/// strings or a CHARACTER array: string `k` (0-based) is at subscript
/// `first + k * step` of the array's last dimension (I64 variables).
#[derive(Clone, Copy)]
struct Columns {
    first: VarId,
    step: VarId,
    count: VarId,
}

/// Where the characters of an assignment to an array of strings come
/// from.
#[derive(Clone, Copy)]
enum Strings {
    /// A fresh buffer of strings, one per column from 1 on.
    Built(VarId),
    /// One string, every target string's value: a rank-1 buffer of `len`
    /// (an I64 variable) characters.
    Broadcast(VarId, VarId),
}

impl Lowerer<'_, '_> {
    /// `target = value` when the target is a whole array of strings held
    /// as a buffer or a section of one (false, doing nothing, for another
    /// target); see the module documentation.
    pub(super) fn string_array_assign(&mut self, target: &Expr, value: &Expr) -> R<bool> {
        let (name, section) = match &target.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => match rank_one_section(args) {
                Some(s) => (name, Some(s)),
                None => return Ok(false),
            },
            _ => return Ok(false),
        };
        if !self.is_deferred_string_array(&name.text) {
            return Ok(false);
        }
        let v = self.string_var(name)?;
        self.check_writable(v, name)?;
        let fixed = self
            .visible_decl(&name.text)
            .and_then(|(_, d)| d.fixed_len)
            .map(i64::from);
        let reallocated = section.is_none() && self.proc.var(v).storage.is_allocatable();
        if let (true, ExprKind::Name(other)) = (reallocated, &value.without_parens().kind) {
            if self.is_deferred_string_array(&other.text) {
                let from = self.string_var(other)?;
                self.copy_string_array(v, from, fixed)?;
                return Ok(true);
            }
        }
        if let Some(built) = self.built_strings(value)? {
            if reallocated {
                self.copy_string_array(v, built, fixed)?;
            } else {
                self.require_allocated(v, name.span);
                let cols = self.section_columns(v, section, name.span)?;
                self.check_string_count(built, cols.count, value.span);
                self.put_strings(v, cols, Strings::Built(built))?;
            }
            self.emit(Inst::Deallocate(built), None);
            return Ok(true);
        }
        if self.rank_of(value) != 0 || self.is_adjusted_array(value) {
            return Err(self.err(
                value.span,
                format!(
                    "unsupported Fortran: this array value assigned to `{}`, an array of strings of run-time length (a CHARACTER array or section, ADJUSTL / ADJUSTR of one, an array constructor or a scalar is supported)",
                    name.text
                ),
            ));
        }
        let pieces = self.value_pieces(value)?;
        let (buf, len) = self.fill_buffer(&pieces, 0)?;
        self.require_allocated(v, name.span);
        let cols = self.section_columns(v, section, name.span)?;
        self.put_strings(v, cols, Strings::Broadcast(buf, len))?;
        self.emit(Inst::Deallocate(buf), None);
        Ok(true)
    }

    /// The array value `value` built into a fresh buffer of strings
    /// (`None` when it is not an array of character data this module
    /// builds): an array constructor of strings, a CHARACTER array or a
    /// section of one, ADJUSTL or ADJUSTR of such an array.
    pub(super) fn built_strings(&mut self, value: &Expr) -> R<Option<VarId>> {
        let e = value.without_parens();
        match &e.kind {
            ExprKind::ArrayConstructor(items) => {
                return self.string_array_temp(items, None).map(Some)
            }
            ExprKind::CharArrayConstructor { len, items } => {
                return self.string_array_temp(items, Some(len)).map(Some)
            }
            ExprKind::Apply { name, args } if self.names_string_fn(name) => {
                let which = StrFn::from_name(&name.text);
                let left = match which {
                    Some(StrFn::Adjustl) => true,
                    Some(StrFn::Adjustr) => false,
                    _ => return Ok(None),
                };
                let [Arg {
                    keyword: None,
                    value: ArgValue::Expr(x),
                }] = &args[..]
                else {
                    return Ok(None);
                };
                let Some(built) = self.copied_strings(x)? else {
                    return Ok(None);
                };
                self.adjust_strings(built, left)?;
                return Ok(Some(built));
            }
            _ => {}
        }
        self.copied_strings(e)
    }

    /// True when `e` is ADJUSTL or ADJUSTR of an array (elemental: an
    /// array value [`Self::built_strings`] builds, of which
    /// [`Lowerer::rank_of`] does not know the rank).
    pub(super) fn is_adjusted_array(&self, e: &Expr) -> bool {
        let ExprKind::Apply { name, args } = &e.without_parens().kind else {
            return false;
        };
        matches!(
            StrFn::from_name(&name.text),
            Some(StrFn::Adjustl | StrFn::Adjustr)
        ) && self.names_string_fn(name)
            && matches!(&args[..], [Arg { keyword: None, value: ArgValue::Expr(x) }] if self.rank_of(x) != 0)
    }

    /// The strings of `e`, a CHARACTER array (of strings held as a
    /// buffer, or rank-1 of constant length) or a section of one, copied
    /// into a fresh buffer of strings (`None` for anything else).
    fn copied_strings(&mut self, e: &Expr) -> R<Option<VarId>> {
        let i64t = Type::I64;
        let (name, section) = match &e.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => match rank_one_section(args) {
                Some(s) => (name, Some(s)),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let strings = self.is_deferred_string_array(&name.text);
        let v = match self.resolve(name)? {
            Resolved::Var(v) => v,
            _ => return Ok(None),
        };
        let var = self.proc.var(v);
        let const_len = match (var.ty, var.dims.len(), &var.char_len) {
            (Type::Char, 1, Some(Bound::Const(n))) => Some(*n),
            _ => None,
        };
        let width = match (strings, const_len) {
            (true, _) => {
                self.require_allocated(v, name.span);
                self.val(Inst::DimExtent(v, 0), i64t)
            }
            (false, Some(n)) => self.int(n, i64t),
            (false, None) => return Ok(None),
        };
        let width = self.keep_value(width);
        let cols = self.section_columns(v, section, name.span)?;
        let built = self.string_buffer(width, cols.count);
        self.for_positions(&[width, cols.count], &mut |this, ks| {
            let at = this.plus_one(ks[0]);
            let col = this.column(cols, ks[1]);
            let from = if strings {
                CharRef {
                    base: CharBase::Var {
                        var: v,
                        index: vec![at, col],
                    },
                    start: None,
                    end: None,
                }
            } else {
                CharRef {
                    base: CharBase::Var {
                        var: v,
                        index: vec![col],
                    },
                    start: Some(at),
                    end: Some(at),
                }
            };
            let k = this.plus_one(ks[1]);
            let to = string_char(built, at, k);
            this.emit(Inst::CharAssign(to, from), None);
            Ok(())
        })?;
        Ok(Some(built))
    }

    /// ADJUSTL (`left`) or ADJUSTR of every string of the buffer of
    /// strings `built`, in place.
    fn adjust_strings(&mut self, built: VarId, left: bool) -> R<()> {
        let i64t = Type::I64;
        let width = self.val(Inst::DimExtent(built, 0), i64t);
        let width = self.keep_value(width);
        let count = self.val(Inst::DimExtent(built, 1), i64t);
        let count = self.keep_value(count);
        let one = self.int(1, i64t);
        let first = self.keep_value(one);
        self.for_positions(&[count], &mut |this, ks| {
            let col = this.plus_one(ks[0]);
            let col = this.keep_value(col);
            let cell = StringCell {
                var: built,
                element: Some(col),
            };
            let copy = this.exact_temp(Type::Char, &[width]);
            this.for_positions(&[width], &mut |this, is| {
                let at = this.plus_one(is[0]);
                let k = this.val(Inst::Load(col), i64t);
                let from = string_char(built, at, k);
                this.emit(Inst::CharAssign(element(copy, at), from), None);
                Ok(())
            })?;
            let pieces = this.adjusted_buffer(left, copy, width)?;
            this.assign_padded(cell, first, width, pieces)
        })
    }

    /// A fresh buffer of `count` strings of `width` characters (I64
    /// variables), allocated.
    fn string_buffer(&mut self, width: VarId, count: VarId) -> VarId {
        let i64t = Type::I64;
        let built = self.temp("strings", Type::Char);
        let unallocated = adjit_ir::Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(0)),
        };
        let var = &mut self.proc.vars[built.index()];
        var.dims = vec![unallocated; 2];
        var.char_len = Some(Bound::Const(1));
        var.storage = adjit_ir::Storage::Allocatable;
        let one = self.int(1, i64t);
        let (w, c) = (
            self.val(Inst::Load(width), i64t),
            self.val(Inst::Load(count), i64t),
        );
        self.emit(Inst::Allocate(built, vec![(one, w), (one, c)]), None);
        built
    }

    /// The strings of the array `v` (held as a buffer of strings, or a
    /// rank-1 CHARACTER array) the section `section` selects (all of
    /// them for `None`), along its last dimension.
    fn section_columns(
        &mut self,
        v: VarId,
        section: Option<SectionBounds>,
        at: Span,
    ) -> R<Columns> {
        let i64t = Type::I64;
        let dim = self.proc.var(v).dims.len().saturating_sub(1) as u32;
        let (lo, hi, stride) = section.unwrap_or((None, None, None));
        // (Each bound is evaluated where it is used: evaluating another
        // may end the block.)
        let first = match lo {
            Some(e) => self.int64(e)?,
            None => self.val(Inst::DimLower(v, dim), i64t),
        };
        let first = self.keep_value(first);
        let last = match hi {
            Some(e) => self.int64(e)?,
            None => {
                let lower = self.val(Inst::DimLower(v, dim), i64t);
                let extent = self.val(Inst::DimExtent(v, dim), i64t);
                let one = self.int(1, i64t);
                let upper = self.val(Inst::Binary(BinaryOp::Add, lower, extent), i64t);
                self.val(Inst::Binary(BinaryOp::Sub, upper, one), i64t)
            }
        };
        let last = self.keep_value(last);
        let step = match stride {
            Some(e) => self.int64(e)?,
            None => self.int(1, i64t),
        };
        let step = self.keep_value(step);
        if stride.is_some() {
            // A zero stride selects nothing Fortran defines.
            let s = self.val(Inst::Load(step), i64t);
            let zero = self.int(0, i64t);
            let no_step = self.val(Inst::Cmp(CmpOp::Eq, s, zero), Type::Bool);
            self.fail_when(no_step, RuntimeErrorKind::IndexOutOfBounds, at);
        }
        let (f, l, s) = (
            self.val(Inst::Load(first), i64t),
            self.val(Inst::Load(last), i64t),
            self.val(Inst::Load(step), i64t),
        );
        let n = self.val(Inst::Binary(BinaryOp::Sub, l, f), i64t);
        let n = self.val(Inst::Binary(BinaryOp::Add, n, s), i64t);
        let n = self.val(Inst::Binary(BinaryOp::Div, n, s), i64t);
        let zero = self.int(0, i64t);
        let n = self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t);
        let count = self.keep_value(n);
        Ok(Columns { first, step, count })
    }

    /// Fails (a located runtime error, an index out of bounds) unless
    /// the buffer of strings `built` has `count` (an I64 variable)
    /// strings: the value of an assignment that cannot take its shape.
    fn check_string_count(&mut self, built: VarId, count: VarId, at: Span) {
        let i64t = Type::I64;
        let have = self.val(Inst::DimExtent(built, 1), i64t);
        let want = self.val(Inst::Load(count), i64t);
        let differ = self.val(Inst::Cmp(CmpOp::Ne, have, want), Type::Bool);
        self.fail_when(differ, RuntimeErrorKind::IndexOutOfBounds, at);
    }

    /// Writes `from` into the strings `cols` of the array of strings
    /// `to`, blank-padded or cut to their length.
    fn put_strings(&mut self, to: VarId, cols: Columns, from: Strings) -> R<()> {
        let i64t = Type::I64;
        let width = self.val(Inst::DimExtent(to, 0), i64t);
        let width = self.keep_value(width);
        self.put_chars(width, cols.count, from, &mut |this, at, k| {
            let col = this.column(cols, k);
            Ok(string_char(to, at, col))
        })
    }

    /// Writes the buffer of strings `built` into the elements `pos` gives
    /// (0-based position to element) of a CHARACTER array of constant
    /// length `len`, `count` (an I64 variable) of them, blank-padded or
    /// cut; fails at run time (located at `at`) unless `built` has
    /// `count` strings. The buffer is released.
    pub(super) fn put_strings_into(
        &mut self,
        built: VarId,
        (len, count): (i64, VarId),
        at: Span,
        pos: &mut dyn FnMut(&mut Self, Value) -> R<CharRef>,
    ) -> R<()> {
        self.check_string_count(built, count, at);
        let width = self.int(len, Type::I64);
        let width = self.keep_value(width);
        self.put_chars(width, count, Strings::Built(built), &mut |this, c, k| {
            let r = pos(this, k)?;
            Ok(CharRef {
                start: Some(c),
                end: Some(c),
                ..r
            })
        })?;
        self.emit(Inst::Deallocate(built), None);
        Ok(())
    }

    /// The character loops of an assignment of strings: blanks into the
    /// `width` characters of each of the `count` target strings (I64
    /// variables), then the characters of `from` that fit.
    /// `target(at, k)` is character `at` (1-based) of target string `k`
    /// (0-based).
    fn put_chars(
        &mut self,
        width: VarId,
        count: VarId,
        from: Strings,
        target: &mut dyn FnMut(&mut Self, Value, Value) -> R<CharRef>,
    ) -> R<()> {
        let i64t = Type::I64;
        let from_width = match from {
            Strings::Built(b) => self.val(Inst::DimExtent(b, 0), i64t),
            Strings::Broadcast(_, len) => self.val(Inst::Load(len), i64t),
        };
        let w = self.val(Inst::Load(width), i64t);
        let copied = self.val(Inst::Binary(BinaryOp::Min, w, from_width), i64t);
        let copied = self.keep_value(copied);
        self.for_positions(&[width, count], &mut |this, ks| {
            let at = this.plus_one(ks[0]);
            let to = target(this, at, ks[1])?;
            this.emit(Inst::CharAssign(to, CharRef::literal(b"")), None);
            Ok(())
        })?;
        self.for_positions(&[copied, count], &mut |this, ks| {
            let at = this.plus_one(ks[0]);
            let src = match from {
                Strings::Built(b) => {
                    let k = this.plus_one(ks[1]);
                    string_char(b, at, k)
                }
                Strings::Broadcast(buf, _) => element(buf, at),
            };
            let to = target(this, at, ks[1])?;
            this.emit(Inst::CharAssign(to, src), None);
            Ok(())
        })
    }

    /// The subscript of string `k` (0-based) of `cols`.
    fn column(&mut self, cols: Columns, k: Value) -> Value {
        let i64t = Type::I64;
        let (first, step) = (
            self.val(Inst::Load(cols.first), i64t),
            self.val(Inst::Load(cols.step), i64t),
        );
        let off = self.val(Inst::Binary(BinaryOp::Mul, k, step), i64t);
        self.val(Inst::Binary(BinaryOp::Add, first, off), i64t)
    }

    /// `k + 1` (I64).
    fn plus_one(&mut self, k: Value) -> Value {
        let one = self.int(1, Type::I64);
        self.val(Inst::Binary(BinaryOp::Add, k, one), Type::I64)
    }
}

/// The bounds of `args` when it is one section subscript `(lo:hi:st)`.
fn rank_one_section(args: &[Arg]) -> Option<SectionBounds<'_>> {
    match args {
        [Arg {
            keyword: None,
            value: ArgValue::Range { lo, hi, stride },
        }] => Some((lo.as_ref(), hi.as_ref(), stride.as_ref())),
        _ => None,
    }
}

/// Character `at` of string (column) `col` of the buffer of strings
/// `buf`.
fn string_char(buf: VarId, at: Value, col: Value) -> CharRef {
    CharRef {
        base: CharBase::Var {
            var: buf,
            index: vec![at, col],
        },
        start: None,
        end: None,
    }
}
