//! Character values of run-time length that have no variable of their own:
//! concatenations with parts of run-time length, ADJUSTL / ADJUSTR /
//! REPEAT of such data, and the results of character functions whose
//! result length is not a constant (`character(len=len(s)) :: r`), also
//! under TRIM, ADJUSTL and ADJUSTR and searched by INDEX, SCAN, VERIFY
//! and LEN_TRIM (loops over the buffer).
//!
//! Such a value is built, character by character, in a rank-1 ALLOCATABLE
//! array of one-character elements (a *buffer*, as for actual arguments in
//! [`super::char_expr`]). A comparison or SELECT CASE test against a buffer
//! walks both operands character by character (blank-padding the shorter
//! one) and keeps the first difference; PRINT transfers the parts one
//! after the other (adjacent character items of list-directed output are
//! not separated).
//!
//! A character function of non-constant result length is given a buffer
//! as long as its declared length evaluated in the caller: the length
//! expression, which may read only the function's dummy arguments
//! (`len(s)`, `len_trim(s) + n`), is evaluated with each dummy replaced by
//! its actual argument; the callee sees its result as assumed-length
//! character data.

use super::super::ast::{Arg, ArgValue, BinOp, CaseItem, Expr, ExprKind, Name, ProcKind};
use super::char_expr::{
    concat_parts, element, is_concat, Piece, Pieces, SpilledPiece, SpilledRef, StrFn, MAX_TEMP_LEN,
};
use super::lowerer::{Lowerer, Operand, R};
use super::scope::CharLenInfo;
use adjit_ir::{BinaryOp, CallArg, CharRef, CharSearch, CmpOp, Const, Inst, IoOp, Type, VarId};
use std::collections::HashMap;

/// A value of a comparison or SELECT CASE selector: ordinary data, or
/// character data of run-time length in a buffer.
pub(super) enum CharVal {
    /// A number, truth value or character reference.
    Data(Operand),
    /// Characters `buf(1..=len)` (for comparisons the buffer has one
    /// spare element, so that it is never empty).
    Buf {
        /// The rank-1 array of one-character elements.
        buf: VarId,
        /// The number of characters (I64 variable).
        len: VarId,
    },
}

impl Lowerer<'_, '_> {
    /// The index of the function `e` references when it is a character
    /// function whose result length is not a constant.
    pub(super) fn runtime_len_fn(&self, e: &Expr) -> Option<usize> {
        let ExprKind::Apply { name, .. } = &e.kind else {
            return None;
        };
        if self.vars.contains_key(&name.text)
            || self.shadows_proc(name)
            || self.u().ast.name.text == name.text
        {
            return None;
        }
        let p = self.prog.find_proc(self.unit, &name.text)?;
        let sig = &self.prog.sigs[p];
        (sig.result == Some(Type::Char) && sig.result_len.is_none()).then_some(p)
    }

    /// The character function reference under `e` when `e` is TRIM,
    /// ADJUSTL or ADJUSTR of a character function whose result length is
    /// not a constant, or TRIM of ADJUSTL of one.
    pub(super) fn wrapped_runtime_len_fn<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        let (which, x) = self.string_fn_arg(e)?;
        if self.runtime_len_fn(x).is_some() {
            return Some(x);
        }
        let (inner, y) = self.string_fn_arg(x)?;
        (which == StrFn::Trim && inner == StrFn::Adjustl && self.runtime_len_fn(y).is_some())
            .then_some(y)
    }

    /// The intrinsic and its one positional argument when `e` is TRIM,
    /// ADJUSTL or ADJUSTR.
    fn string_fn_arg<'e>(&self, e: &'e Expr) -> Option<(StrFn, &'e Expr)> {
        let ExprKind::Apply { name, args } = &e.kind else {
            return None;
        };
        let [Arg {
            keyword: None,
            value: ArgValue::Expr(x),
        }] = &args[..]
        else {
            return None;
        };
        let which = StrFn::from_name(&name.text)?;
        (matches!(which, StrFn::Trim | StrFn::Adjustl | StrFn::Adjustr)
            && self.names_string_fn(name))
        .then_some((which, x))
    }

    /// ADJUSTL (`left`) or ADJUSTR of character data of run-time length
    /// in the buffer `buf` (`n` characters, an I64 variable; the buffer is
    /// consumed), as parts: ADJUSTL moves the characters of the buffer
    /// left in place, over the leading blanks, and blanks the end;
    /// ADJUSTR is as many blanks as the trailing ones, then the buffer up
    /// to its last non-blank.
    pub(super) fn adjusted_buffer(&mut self, left: bool, buf: VarId, n: VarId) -> R<Pieces> {
        let i64t = Type::I64;
        let len = self.val(Inst::Load(n), i64t);
        let (first, last) =
            self.buffer_search(CharSearch::Verify, buf, len, &CharRef::literal(b" "))?;
        let len = self.val(Inst::Load(n), i64t);
        if !left {
            let gap = self.val(Inst::Binary(BinaryOp::Sub, len, last), i64t);
            return Ok(Pieces {
                parts: vec![Piece::Blanks(gap), Piece::Buf(buf, last)],
                len: None,
            });
        }
        // Characters move from `k + shift` to `k` (1-based), shift being
        // the number of leading blanks (none when all are blank).
        let one = self.int(1, i64t);
        let from = self.val(Inst::Binary(BinaryOp::Max, first, one), i64t);
        let shift = self.val(Inst::Binary(BinaryOp::Sub, from, one), i64t);
        let shift = self.keep_value(shift);
        self.for_positions(&[n], &mut |this, ks| {
            let (one, zero) = (this.int(1, i64t), this.int(0, i64t));
            let to = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let shift = this.val(Inst::Load(shift), i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, to, shift), i64t);
            let len = this.val(Inst::Load(n), i64t);
            let inside = this.val(Inst::Cmp(CmpOp::Le, at, len), Type::Bool);
            let idx = this.val(Inst::Binary(BinaryOp::Min, at, len), i64t);
            // Past the end: an empty reference, assigned as a blank.
            let end = this.val(Inst::Select(inside, one, zero), i64t);
            let c = CharRef {
                start: Some(one),
                end: Some(end),
                ..element(buf, idx)
            };
            this.emit(Inst::CharAssign(element(buf, to), c), None);
            Ok(())
        })?;
        let len = self.val(Inst::Load(n), i64t);
        Ok(Pieces {
            parts: vec![Piece::Buf(buf, len)],
            len: None,
        })
    }

    /// The first and last positions (1-based, I64; 0 when there is none)
    /// of the first `n` (I64) characters of the buffer `buf` where SCAN
    /// (a character of `set`) or VERIFY (a character not in `set`)
    /// succeeds.
    pub(super) fn buffer_search(
        &mut self,
        op: CharSearch,
        buf: VarId,
        n: adjit_ir::Value,
        set: &CharRef,
    ) -> R<(adjit_ir::Value, adjit_ir::Value)> {
        let n = self.keep_value(n);
        let set = self.spill_side(&Side::Ref(set.clone()));
        self.side_search(op, &SpilledSide::Kept(buf, n), &set)
    }

    /// The first and last positions (1-based, I64; 0 when there is none)
    /// of the string `s` where INDEX (`t` starts there; an empty `t` is
    /// found at 1 and past the end), SCAN (a character of the set `t`) or
    /// VERIFY (a character not in the set `t`) succeeds: a loop over the
    /// positions of `s` around one over the characters of `t`.
    fn side_search(
        &mut self,
        op: CharSearch,
        s: &SpilledSide,
        t: &SpilledSide,
    ) -> R<(adjit_ir::Value, adjit_ir::Value)> {
        let (i64t, bt) = (Type::I64, Type::Bool);
        let n = self.side_len(s);
        let m = self.side_len(t);
        let m = self.keep_value(m);
        let starts = if op == CharSearch::Index {
            let m = self.val(Inst::Load(m), i64t);
            let rest = self.val(Inst::Binary(BinaryOp::Sub, n, m), i64t);
            let one = self.int(1, i64t);
            let rest = self.val(Inst::Binary(BinaryOp::Add, rest, one), i64t);
            let zero = self.int(0, i64t);
            self.val(Inst::Binary(BinaryOp::Max, rest, zero), i64t)
        } else {
            n
        };
        let starts = self.keep_value(starts);
        let (first, last) = self.hit_positions();
        let at_var = self.temp("ip", i64t);
        // INDEX: every character matches; SCAN, VERIFY: some character
        // of the set matches.
        let every = op == CharSearch::Index;
        let acc = self.temp("im", bt);
        self.for_positions(&[starts], &mut |this, ks| {
            let one = this.int(1, i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            this.emit(Inst::Store(at_var, at), None);
            let init = this.konst(Const::Bool(every), bt);
            this.emit(Inst::Store(acc, init), None);
            this.for_positions(&[m], &mut |this, js| {
                let one = this.int(1, i64t);
                let j = this.val(Inst::Binary(BinaryOp::Add, js[0], one), i64t);
                let at = this.val(Inst::Load(at_var), i64t);
                let p = if every {
                    this.val(Inst::Binary(BinaryOp::Add, at, js[0]), i64t)
                } else {
                    at
                };
                let c = this.char_at(s, p);
                let d = this.char_at(t, j);
                let eq = this.val(Inst::CharCompare(CmpOp::Eq, c, d), bt);
                let so_far = this.val(Inst::Load(acc), bt);
                let join = if every { BinaryOp::And } else { BinaryOp::Or };
                let so_far = this.val(Inst::Binary(join, so_far, eq), bt);
                this.emit(Inst::Store(acc, so_far), None);
                Ok(())
            })?;
            let found = this.val(Inst::Load(acc), bt);
            let hit = if op == CharSearch::Verify {
                let (t, f) = (
                    this.konst(Const::Bool(true), bt),
                    this.konst(Const::Bool(false), bt),
                );
                this.val(Inst::Select(found, f, t), bt)
            } else {
                found
            };
            let at = this.val(Inst::Load(at_var), i64t);
            this.record_hit(hit, at, first, last);
            Ok(())
        })?;
        Ok(self.load_hits(first, last))
    }

    /// INDEX, SCAN or VERIFY (`op`) of the character expression `string`
    /// with the substring or set `set` (LEN_TRIM: VERIFY of a blank) where
    /// either is character data of run-time length that needs storage of
    /// its own ([`Self::is_built_char`]): loops over both, buffers
    /// released after them. The first and last positions where the
    /// search succeeds (I64 variables, 0 when it never does).
    pub(super) fn searched_values(
        &mut self,
        op: CharSearch,
        string: &Expr,
        set: Option<&Expr>,
    ) -> R<(VarId, VarId)> {
        let s = self.compared_side_exact(string)?;
        let s = self.spill_side(&s);
        let t = match set {
            Some(e) => self.compared_side_exact(e)?,
            None => Side::Ref(CharRef::literal(b" ")),
        };
        let t = self.spill_side(&t);
        let (first, last) = self.side_search(op, &s, &t)?;
        let kept = (self.keep_value(first), self.keep_value(last));
        self.release_sides(&[&s, &t]);
        Ok(kept)
    }

    /// LEN of character data that needs storage of its own
    /// ([`Self::is_built_char`]), built to be measured (I64).
    pub(super) fn built_len(&mut self, e: &Expr) -> R<adjit_ir::Value> {
        let side = self.compared_side_exact(e)?;
        let side = self.spill_side(&side);
        let n = self.side_len(&side);
        let n = self.keep_value(n);
        self.release_sides(&[&side]);
        Ok(self.val(Inst::Load(n), Type::I64))
    }

    /// Releases the buffers among the operands of a loop over characters.
    fn release_sides(&mut self, sides: &[&SpilledSide]) {
        for s in sides {
            if let SpilledSide::Buf(buf, _) = s {
                self.emit(Inst::Deallocate(*buf), None);
            }
        }
    }

    /// The exact value of a character expression (trailing blanks kept):
    /// its data, or a buffer when it is built of run-time length (its
    /// first `len` characters: the buffer may be longer, and has no spare
    /// element past them).
    pub(super) fn char_value(&mut self, e: &Expr) -> R<CharVal> {
        if !self.is_built_char(e) && !self.is_string_fn_ref(e) {
            return self.expr(e).map(CharVal::Data);
        }
        let pieces = self.value_pieces(e)?;
        if let [Piece::Text(r)] = &pieces.parts[..] {
            return Ok(CharVal::Data(Operand::Char(r.clone())));
        }
        if let Some(n) = pieces.len.filter(|&n| n <= MAX_TEMP_LEN) {
            return Ok(CharVal::Data(Operand::Char(self.pieces_in_temp(pieces, n))));
        }
        if let [Piece::Buf(buf, n)] = pieces.parts[..] {
            // Its first `n` characters (TRIM of a buffer is shorter).
            let len = self.keep_value(n);
            return Ok(CharVal::Buf { buf, len });
        }
        let (buf, len) = self.fill_buffer(&pieces, 0)?;
        Ok(CharVal::Buf { buf, len })
    }

    /// An operand of a search or of LEN: [`Self::char_value`] as a side.
    fn compared_side_exact(&mut self, e: &Expr) -> R<Side> {
        match self.char_value(e)? {
            CharVal::Data(Operand::Char(r)) => Ok(Side::Ref(r)),
            CharVal::Buf { buf, len } => Ok(Side::Buf(buf, len)),
            CharVal::Data(Operand::Num(..)) => {
                Err(self.err(e.span, "character data expected here, not a number"))
            }
        }
    }

    /// REPEAT of character data of run-time length in the buffer `buf`
    /// (`n` characters, an I64 variable; the buffer is consumed), `copies`
    /// (I64, not negative) times, in a new buffer.
    pub(super) fn repeat_buffer(
        &mut self,
        buf: VarId,
        n: VarId,
        copies: adjit_ir::Value,
    ) -> R<Pieces> {
        let i64t = Type::I64;
        let copies = self.keep_value(copies);
        let each = self.val(Inst::Load(n), i64t);
        let c = self.val(Inst::Load(copies), i64t);
        let total = self.val(Inst::Binary(BinaryOp::Mul, each, c), i64t);
        let total = self.keep_value(total);
        let out = self.exact_temp(Type::Char, &[total]);
        self.for_positions(&[n, copies], &mut |this, ks| {
            let (one, each) = (this.int(1, i64t), this.val(Inst::Load(n), i64t));
            let from = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let skip = this.val(Inst::Binary(BinaryOp::Mul, ks[1], each), i64t);
            let to = this.val(Inst::Binary(BinaryOp::Add, skip, from), i64t);
            this.emit(Inst::CharAssign(element(out, to), element(buf, from)), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(buf), None);
        let t = self.val(Inst::Load(total), i64t);
        Ok(Pieces {
            parts: vec![Piece::Buf(out, t)],
            len: None,
        })
    }

    /// Two I64 variables set to 0: the first and the last position where
    /// a search succeeds.
    fn hit_positions(&mut self) -> (VarId, VarId) {
        let i64t = Type::I64;
        let (first, last) = (self.temp("hf", i64t), self.temp("hl", i64t));
        let zero = self.int(0, i64t);
        self.emit(Inst::Store(first, zero), None);
        self.emit(Inst::Store(last, zero), None);
        (first, last)
    }

    /// The first and last positions a search recorded in the variables
    /// of [`Self::hit_positions`], loaded (I64).
    fn load_hits(&mut self, first: VarId, last: VarId) -> (adjit_ir::Value, adjit_ir::Value) {
        let i64t = Type::I64;
        (
            self.val(Inst::Load(first), i64t),
            self.val(Inst::Load(last), i64t),
        )
    }

    /// Records a search's success (`hit`, Bool) at `at` (I64) in the
    /// variables of [`Self::hit_positions`].
    fn record_hit(&mut self, hit: adjit_ir::Value, at: adjit_ir::Value, first: VarId, last: VarId) {
        let (i64t, bt) = (Type::I64, Type::Bool);
        let f = self.val(Inst::Load(first), i64t);
        let zero = self.int(0, i64t);
        let none = self.val(Inst::Cmp(CmpOp::Eq, f, zero), bt);
        let take = self.val(Inst::Binary(BinaryOp::And, hit, none), bt);
        let f = self.val(Inst::Select(take, at, f), i64t);
        self.emit(Inst::Store(first, f), None);
        let l = self.val(Inst::Load(last), i64t);
        let l = self.val(Inst::Select(hit, at, l), i64t);
        self.emit(Inst::Store(last, l), None);
    }

    /// The position of the last non-blank of the first `n` (I64)
    /// characters of the buffer `buf`, 0 when all are blank (I64).
    pub(super) fn buffer_last_nonblank(
        &mut self,
        buf: VarId,
        n: adjit_ir::Value,
    ) -> R<adjit_ir::Value> {
        let blank = CharRef::literal(b" ");
        Ok(self.buffer_search(CharSearch::Verify, buf, n, &blank)?.1)
    }

    /// True when `e` is character data of possibly run-time length that
    /// needs storage of its own: a concatenation, ADJUSTR / REPEAT, or a
    /// character function of non-constant result length (under TRIM,
    /// ADJUSTL or ADJUSTR too), and TRIM or ADJUSTL of any of them.
    pub(super) fn is_built_char(&self, e: &Expr) -> bool {
        if is_concat(e)
            || self.deferred_string_ref(e).is_some()
            || self.runtime_len_fn(e).is_some()
            || self.wrapped_runtime_len_fn(e).is_some()
            || matches!(&e.kind, ExprKind::Apply { name, .. }
                if matches!(StrFn::from_name(&name.text), Some(StrFn::Adjustr | StrFn::Repeat))
                    && self.names_string_fn(name))
        {
            return true;
        }
        // TRIM or ADJUSTL of such data.
        matches!(self.string_fn_arg(e), Some((StrFn::Trim | StrFn::Adjustl, x)) if self.is_built_char(x))
    }

    /// The parts of a value [`Self::is_built_char`] accepts.
    pub(super) fn value_pieces(&mut self, e: &Expr) -> R<Pieces> {
        if !is_concat(e) {
            return self.part_pieces(e);
        }
        self.concat_pieces(&concat_parts(e))
    }

    /// An operand of a comparison or a SELECT CASE selector, where
    /// trailing blanks do not matter.
    pub(super) fn compared_value(&mut self, e: &Expr) -> R<CharVal> {
        if !self.is_built_char(e) {
            return self.char_unpadded(e).map(CharVal::Data);
        }
        let pieces = self.value_pieces(e)?;
        if let [Piece::Text(r)] = &pieces.parts[..] {
            return Ok(CharVal::Data(Operand::Char(r.clone())));
        }
        if let Some(n) = pieces.len.filter(|&n| n <= MAX_TEMP_LEN) {
            return Ok(CharVal::Data(Operand::Char(self.pieces_in_temp(pieces, n))));
        }
        // Parts of data of constant length (TRIM of them): a blank-padded
        // temporary as long as the sum of the bounds.
        let texts: Option<Vec<CharRef>> = pieces
            .parts
            .iter()
            .map(|p| match p {
                Piece::Text(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        if let Some(texts) = texts {
            let bound: Option<i64> = texts.iter().map(|r| self.char_len_bound(r)).sum();
            if let Some(n) = bound.filter(|&n| (1..=MAX_TEMP_LEN).contains(&n)) {
                let to = CharRef::whole(self.char_temp(n));
                self.assign_parts(to.clone(), texts);
                return Ok(CharVal::Data(Operand::Char(to)));
            }
        }
        let (buf, len) = self.fill_buffer(&pieces, 1)?;
        Ok(CharVal::Buf { buf, len })
    }

    /// `a op b` for a relational operator where either operand is
    /// character data [`Self::is_built_char`] accepts.
    pub(super) fn compare_built(&mut self, op: CmpOp, a: &Expr, b: &Expr) -> R<Operand> {
        let x = self.compared_side(a)?;
        let x = self.spill_side(&x);
        let y = self.compared_side(b)?;
        let bt = Type::Bool;
        let v = match (&x, y) {
            (SpilledSide::Ref(x), Side::Ref(y)) => {
                // No buffer: nothing between the two operands left the block.
                let x = self.reload_char_ref(x);
                self.val(Inst::CharCompare(op, x, y), bt)
            }
            (_, y) => {
                let y = self.spill_side(&y);
                let r = self.compare_loop(op, &x, &y)?;
                self.val(Inst::Load(r), bt)
            }
        };
        Ok(Operand::Num(v, bt))
    }

    /// A character operand of a comparison.
    fn compared_side(&mut self, e: &Expr) -> R<Side> {
        match self.compared_value(e)? {
            CharVal::Data(Operand::Char(r)) => Ok(Side::Ref(r)),
            CharVal::Buf { buf, len } => Ok(Side::Buf(buf, len)),
            CharVal::Data(Operand::Num(..)) => {
                Err(self.err(e.span, "a comparison of character data with a number"))
            }
        }
    }

    /// The character-by-character comparison of two operands, its result
    /// in a Bool variable.
    fn compare_loop(&mut self, op: CmpOp, a: &SpilledSide, b: &SpilledSide) -> R<VarId> {
        let (i64t, bt) = (Type::I64, Type::Bool);
        let la = self.side_len(a);
        let lb = self.side_len(b);
        let n = self.val(Inst::Binary(BinaryOp::Max, la, lb), i64t);
        let n = self.keep_value(n);
        let decided = self.temp("cd", bt);
        let less = self.temp("cl", bt);
        let f = self.konst(Const::Bool(false), bt);
        self.emit(Inst::Store(decided, f), None);
        self.emit(Inst::Store(less, f), None);
        self.for_positions(&[n], &mut |this, ks| {
            let one = this.int(1, i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let ca = this.char_at(a, at);
            let cb = this.char_at(b, at);
            let ne = this.val(Inst::CharCompare(CmpOp::Ne, ca.clone(), cb.clone()), bt);
            let lt = this.val(Inst::CharCompare(CmpOp::Lt, ca, cb), bt);
            let d = this.val(Inst::Load(decided), bt);
            let l = this.val(Inst::Load(less), bt);
            let l = this.val(Inst::Select(d, l, lt), bt);
            let d = this.val(Inst::Binary(BinaryOp::Or, d, ne), bt);
            this.emit(Inst::Store(decided, d), None);
            this.emit(Inst::Store(less, l), None);
            Ok(())
        })?;
        self.release_sides(&[a, b]);
        let d = self.val(Inst::Load(decided), bt);
        let l = self.val(Inst::Load(less), bt);
        let (t, f) = (
            self.konst(Const::Bool(true), bt),
            self.konst(Const::Bool(false), bt),
        );
        let same = self.val(Inst::Select(d, f, t), bt);
        let greater = self.val(Inst::Select(l, f, d), bt);
        let r = match op {
            CmpOp::Eq => same,
            CmpOp::Ne => d,
            CmpOp::Lt => self.val(Inst::Select(d, l, f), bt),
            CmpOp::Le => self.val(Inst::Select(d, l, t), bt),
            CmpOp::Gt => greater,
            CmpOp::Ge => self.val(Inst::Select(l, f, t), bt),
        };
        Ok(self.keep_value(r))
    }

    /// A SELECT CASE test of a selector in a buffer (a Bool variable).
    pub(super) fn buffer_case_test(&mut self, sel: &CharVal, item: &CaseItem) -> R<VarId> {
        let test = |this: &mut Self, op: CmpOp, e: &Expr| -> R<VarId> {
            let CharVal::Buf { buf, len } = sel else {
                unreachable!("a selector in a buffer")
            };
            let side = this.compared_side(e)?;
            let side = this.spill_side(&side);
            // The selector's buffer serves every test: compare a view
            // of it that is not released.
            this.compare_loop(op, &SpilledSide::Kept(*buf, *len), &side)
        };
        let bt = Type::Bool;
        match item {
            CaseItem::Value(e) => test(self, CmpOp::Eq, e),
            CaseItem::Range(lo, hi) => {
                let lo = lo.as_ref().map(|e| test(self, CmpOp::Ge, e)).transpose()?;
                let hi = hi.as_ref().map(|e| test(self, CmpOp::Le, e)).transpose()?;
                let t = self.konst(Const::Bool(true), bt);
                let lo = lo.map_or(t, |v| self.val(Inst::Load(v), bt));
                let hi = hi.map_or(t, |v| self.val(Inst::Load(v), bt));
                let both = self.val(Inst::Binary(BinaryOp::And, lo, hi), bt);
                Ok(self.keep_value(both))
            }
        }
    }

    /// PRINT of a value [`Self::is_built_char`] accepts whose length is
    /// not a constant: one character item, put in parts
    /// ([`IoOp::JoinChars`]).
    pub(super) fn print_pieces(&mut self, e: &Expr) -> R<()> {
        let pieces = self.value_pieces(e)?;
        if let Some(n) = pieces.len.filter(|&n| n <= MAX_TEMP_LEN) {
            let r = self.pieces_in_temp(pieces, n);
            self.emit(Inst::Io(IoOp::PutChar(r)), None);
            return Ok(());
        }
        let i64t = Type::I64;
        let spilled: Vec<SpilledPiece> = pieces.parts.iter().map(|p| self.spill_piece(p)).collect();
        // The pieces form one item (one edit descriptor of a format).
        self.emit(Inst::Io(IoOp::JoinChars(true)), None);
        for p in &spilled {
            let (count, each) = match p {
                SpilledPiece::Text(_) => {
                    let Piece::Text(r) = self.reload_piece(p) else {
                        unreachable!("a text piece")
                    };
                    self.emit(Inst::Io(IoOp::PutChar(r)), None);
                    continue;
                }
                SpilledPiece::Blanks(n) | SpilledPiece::Buf(_, n) => (*n, None),
                SpilledPiece::Repeat(_, c) => (*c, Some(())),
            };
            self.for_positions(&[count], &mut |this, ks| {
                let item = match (this.reload_piece(p), each) {
                    (Piece::Repeat(r, _), Some(())) => r,
                    (Piece::Buf(buf, _), _) => {
                        let one = this.int(1, i64t);
                        let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
                        element(buf, at)
                    }
                    _ => CharRef::literal(b" "),
                };
                this.emit(Inst::Io(IoOp::PutChar(item)), None);
                Ok(())
            })?;
            if let SpilledPiece::Buf(buf, _) = p {
                self.emit(Inst::Deallocate(*buf), None);
            }
        }
        self.emit(Inst::Io(IoOp::JoinChars(false)), None);
        Ok(())
    }

    /// Calls the character function `unit` (result of non-constant
    /// length) with a buffer for its result: the buffer and its length
    /// (an I64 variable).
    pub(super) fn runtime_len_call(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
    ) -> R<(VarId, VarId)> {
        if self.prog.sigs[unit].deferred_result {
            self.prepare_actuals(args)?;
            let (call_args, callee, copies) = self.call_args_copied(unit, name, args)?;
            let result = self.deferred_result_call((unit, callee), call_args, name);
            self.copy_back_after(copies)?;
            return Ok(result);
        }
        let len = self.runtime_result_len(unit, name, args)?;
        self.prepare_actuals(args)?;
        let (mut call_args, callee, copies) = self.call_args_copied(unit, name, args)?;
        let buf = self.exact_temp(Type::Char, &[len]);
        call_args.push(CallArg::Var(buf));
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)?;
        Ok((buf, len))
    }

    /// The result length of a reference to the character function
    /// `unit` of non-constant result length (not negative; an I64
    /// variable).
    pub(super) fn runtime_result_len(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
    ) -> R<VarId> {
        let len_expr = self.result_len_expr(unit, name, args)?;
        let (v, t) = self.integer(&len_expr)?;
        let i64t = Type::I64;
        let v = self.convert(v, t, i64t);
        let zero = self.int(0, i64t);
        let v = self.val(Inst::Binary(BinaryOp::Max, v, zero), i64t);
        Ok(self.keep_value(v))
    }

    /// The declared result length of the function `unit` with each of its
    /// dummy arguments replaced by the actual argument of this reference.
    fn result_len_expr(&mut self, unit: usize, name: &Name, args: &[Arg]) -> R<Expr> {
        let u = &self.prog.units[unit];
        let result = match &u.ast.kind {
            ProcKind::Function { result, .. } => result.as_ref().unwrap_or(&u.ast.name),
            _ => &u.ast.name,
        };
        let Some(CharLenInfo::Expr(e)) = u.scope.var_type(&result.text).map(|t| t.char_len) else {
            return Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: the result length of character function `{}`",
                    name.text
                ),
            ));
        };
        let dummies: Vec<String> = u.ast.args.iter().map(|a| a.text.clone()).collect();
        let mut actuals: HashMap<String, Expr> = HashMap::new();
        for (i, a) in args.iter().enumerate() {
            let ArgValue::Expr(x) = &a.value else {
                continue;
            };
            let dummy = match &a.keyword {
                Some(k) => Some(k.text.clone()),
                None => dummies.get(i).cloned(),
            };
            if let Some(d) = dummy {
                actuals.insert(d, x.clone());
            }
        }
        substitute(&e, &actuals).map_err(|what| {
            self.err(
                name.span,
                format!(
                    "unsupported Fortran: the result length of character function `{}` reads `{what}`, which is not one of the actual arguments given (only dummy arguments may be read there)",
                    name.text
                ),
            )
        })
    }

    fn spill_side(&mut self, s: &Side) -> SpilledSide {
        match s {
            Side::Ref(r) => {
                let len = self.char_len_value(r);
                SpilledSide::Ref(SpilledChar {
                    text: self.spill_ref(r),
                    len: self.keep_value(len),
                })
            }
            Side::Buf(b, n) => SpilledSide::Buf(*b, *n),
        }
    }

    fn reload_char_ref(&mut self, s: &SpilledChar) -> CharRef {
        self.reload_ref(&s.text)
    }

    fn side_len(&mut self, s: &SpilledSide) -> adjit_ir::Value {
        let n = match s {
            SpilledSide::Ref(r) => r.len,
            SpilledSide::Buf(_, n) | SpilledSide::Kept(_, n) => *n,
        };
        self.val(Inst::Load(n), Type::I64)
    }

    /// Character `at` (1-based, I64) of an operand, or an empty reference
    /// (compared as a blank) past its end.
    fn char_at(&mut self, s: &SpilledSide, at: adjit_ir::Value) -> CharRef {
        let i64t = Type::I64;
        let n = self.side_len(s);
        let inside = self.val(Inst::Cmp(CmpOp::Le, at, n), Type::Bool);
        let (one, zero) = (self.int(1, i64t), self.int(0, i64t));
        match s {
            SpilledSide::Ref(r) => {
                let r = self.reload_char_ref(r);
                let pos = self.val(Inst::Binary(BinaryOp::Min, at, n), i64t);
                let last = self.val(Inst::Select(inside, pos, n), i64t);
                let first = self.val(Inst::Select(inside, pos, at), i64t);
                self.shifted_ref(&r, first, last)
            }
            SpilledSide::Buf(buf, _) | SpilledSide::Kept(buf, _) => {
                // The spare element past the end keeps the index valid.
                let idx = self.val(Inst::Binary(BinaryOp::Min, at, n), i64t);
                let idx = self.val(Inst::Binary(BinaryOp::Max, idx, one), i64t);
                let end = self.val(Inst::Select(inside, one, zero), i64t);
                CharRef {
                    start: Some(one),
                    end: Some(end),
                    ..element(*buf, idx)
                }
            }
        }
    }
}

/// One operand of a character-by-character comparison.
enum Side {
    /// Character data.
    Ref(CharRef),
    /// A buffer released after the comparison.
    Buf(VarId, VarId),
}

/// A [`CharRef`] with its run-time positions and length in variables.
struct SpilledChar {
    text: SpilledRef,
    len: VarId,
}

/// A [`Side`] usable in other blocks.
enum SpilledSide {
    Ref(SpilledChar),
    Buf(VarId, VarId),
    /// A buffer kept after the comparison (a SELECT CASE selector).
    Kept(VarId, VarId),
}

/// `e` with each name in `actuals` replaced by its expression
/// (parenthesized); `Err(name)` for a name that is not replaced and is not
/// applied as an intrinsic function.
fn substitute(e: &Expr, actuals: &HashMap<String, Expr>) -> Result<Expr, String> {
    let sub = |x: &Expr| substitute(x, actuals).map(Box::new);
    let kind = match &e.kind {
        ExprKind::Name(n) => match actuals.get(&n.text) {
            Some(a) => ExprKind::Paren(Box::new(a.clone())),
            None => return Err(n.text.clone()),
        },
        ExprKind::Apply { name, args } => {
            if actuals.contains_key(&name.text) {
                return Err(name.text.clone());
            }
            let mut out = Vec::new();
            for a in args {
                let value = match &a.value {
                    ArgValue::Expr(x) => ArgValue::Expr(substitute(x, actuals)?),
                    ArgValue::Range { .. } => return Err(name.text.clone()),
                };
                out.push(Arg {
                    keyword: a.keyword.clone(),
                    value,
                });
            }
            ExprKind::Apply {
                name: name.clone(),
                args: out,
            }
        }
        ExprKind::Unary(op, x) => ExprKind::Unary(*op, sub(x)?),
        ExprKind::Binary(op, a, b) if *op != BinOp::Concat => {
            ExprKind::Binary(*op, sub(a)?, sub(b)?)
        }
        ExprKind::Paren(x) => ExprKind::Paren(sub(x)?),
        ExprKind::Int { .. } => e.kind.clone(),
        _ => return Err("an expression other than integer arithmetic".into()),
    };
    Ok(Expr { kind, span: e.span })
}
