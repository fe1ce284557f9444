//! Character expressions that need storage of their own: a concatenation
//! used as a value (an operand of a comparison, a SELECT CASE selector, a
//! PRINT item, the argument of an intrinsic, an actual argument) and the
//! results of TRIM, ADJUSTL, ADJUSTR and REPEAT passed as actual arguments.
//!
//! A result of constant length is built in a scalar temporary of that
//! length. Where trailing blanks do not matter (comparisons, SELECT CASE)
//! a concatenation whose parts have lengths bounded by constants (parts of
//! variables of constant length, TRIM of them) is built in a temporary as
//! long as the sum of the bounds and blank-padded. An actual argument of
//! run-time length (TRIM, a concatenation with a `character(len=*)` part,
//! ADJUSTL / ADJUSTR / REPEAT of such data, REPEAT with a computed number
//! of copies) is built, before the statement, character by character in a
//! rank-1 ALLOCATABLE array of one-character elements allocated to the
//! result's length and released after the call: a `character(len=*)`
//! dummy takes its length from the storage it is given. Assigned, such
//! results (`t = repeat('-', n) // adjustr(s)`) are copied part by part
//! into the target, clipped to its length.

use super::super::ast::{ArgValue, BinOp, Expr, ExprKind};
use super::lowerer::{ArgTemp, Lowerer, Operand, R};
use adjit_ir::{BinaryOp, CharBase, CharRef, Inst, Type, Value, VarId};

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

/// The longest character temporary of constant length.
pub(super) const MAX_TEMP_LEN: i64 = 1 << 20;

/// One part of a character result.
#[derive(Clone)]
pub(super) enum Piece {
    /// Character data.
    Text(CharRef),
    /// Blanks, as many as the (I64) value.
    Blanks(Value),
    /// Copies of character data, as many as the (I64, not negative) value.
    Repeat(CharRef, Value),
    /// The first characters of a buffer (a rank-1 array of one-character
    /// elements, released once the value is used), as many as the (I64)
    /// value: the result of a character function of non-constant length.
    Buf(VarId, Value),
}

/// A character result as the parts it is the concatenation of.
pub(super) struct Pieces {
    /// The parts, in order.
    pub parts: Vec<Piece>,
    /// The length of the whole, when it is a constant.
    pub len: Option<i64>,
}

/// A [`CharRef`] whose run-time positions are kept in variables, so that
/// it can be used in blocks other than the one that computed them.
pub(super) struct SpilledRef {
    base: CharBase,
    index: Vec<VarId>,
    start: Option<VarId>,
    end: Option<VarId>,
}

/// A [`Piece`] with its values kept in variables.
pub(super) enum SpilledPiece {
    Text(SpilledRef),
    Blanks(VarId),
    Repeat(SpilledRef, VarId),
    Buf(VarId, VarId),
}

/// The operands of a concatenation `a // b // ...` (parentheses removed).
pub(super) fn concat_parts(e: &Expr) -> Vec<&Expr> {
    fn walk<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Concat, a, b) => {
                walk(a, out);
                walk(b, out);
            }
            ExprKind::Paren(x) => walk(x, out),
            _ => out.push(e),
        }
    }
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

/// True when `e` is a concatenation.
pub(super) fn is_concat(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary(BinOp::Concat, ..))
}

impl Lowerer<'_, '_> {
    /// The character data of each operand of a concatenation.
    pub(super) fn concat_operands(&mut self, e: &Expr) -> R<Vec<CharRef>> {
        let mut froms = Vec::new();
        for piece in concat_parts(e) {
            let Operand::Char(from) = self.expr(piece)? else {
                return Err(self.err(piece.span, "concatenation of a non-character value"));
            };
            froms.push(from);
        }
        Ok(froms)
    }

    /// A concatenation as a value, in a temporary of its length; with
    /// `padded` (the consumer ignores trailing blanks) a temporary as long
    /// as the sum of constant bounds of the parts' lengths will do.
    pub(super) fn concat_value(&mut self, e: &Expr, padded: bool) -> R<Operand> {
        let froms = self.concat_operands(e)?;
        let exact: Option<i64> = froms.iter().map(|f| self.char_len_of(f)).sum();
        let bound: Option<i64> = froms.iter().map(|f| self.char_len_bound(f)).sum();
        let len = match (exact, bound) {
            (Some(n), _) => n,
            (None, Some(n)) if padded => n,
            _ => {
                return Err(self.err(
                    e.span,
                    "unsupported Fortran: concatenation (//) of character data of run-time length here (supported in assignments and actual arguments, and in comparisons and SELECT CASE when each part is part of data of constant length)",
                ))
            }
        };
        if len > MAX_TEMP_LEN {
            return Err(self.err(
                e.span,
                format!("unsupported Fortran: concatenation longer than {MAX_TEMP_LEN} characters"),
            ));
        }
        if len == 0 {
            return Ok(Operand::Char(CharRef::literal(b"")));
        }
        let to = CharRef::whole(self.char_temp(len));
        self.assign_parts(to.clone(), froms);
        Ok(Operand::Char(to))
    }

    /// A constant bound on the length of character data: the length of
    /// the variable or literal it is part of, when constant.
    pub(super) fn char_len_bound(&self, r: &CharRef) -> Option<i64> {
        match &r.base {
            CharBase::Literal(t) => Some(t.len() as i64),
            CharBase::Var { var, .. } => self.proc.var(*var).char_len.as_ref()?.as_const(),
        }
    }

    /// The length of a piece (I64).
    fn piece_len(&mut self, p: &Piece) -> Value {
        match p {
            Piece::Text(r) => self.char_len_value(r),
            Piece::Blanks(n) | Piece::Buf(_, n) => *n,
            Piece::Repeat(r, c) => {
                let n = self.char_len_value(r);
                self.val(Inst::Binary(BinaryOp::Mul, n, *c), Type::I64)
            }
        }
    }

    /// Builds a character result of constant length in a temporary, in
    /// the current block (no loops: a REPEAT is unrolled).
    pub(super) fn pieces_in_temp(&mut self, pieces: Pieces, len: i64) -> CharRef {
        if len == 0 {
            return CharRef::literal(b"");
        }
        let to = CharRef::whole(self.char_temp(len));
        let i64t = Type::I64;
        let one = self.int(1, i64t);
        let mut pos = one;
        for p in &pieces.parts {
            let n = self.piece_len(p);
            let copies = match p {
                Piece::Text(r) => vec![r.clone()],
                // A buffer's length is never a constant: not reached.
                Piece::Blanks(_) | Piece::Buf(..) => vec![CharRef::literal(b"")],
                Piece::Repeat(r, c) => {
                    let c = match self.const_of(*c) {
                        Some(adjit_ir::Const::Int(c)) => c.max(0),
                        _ => 0,
                    };
                    vec![r.clone(); c as usize]
                }
            };
            let each = match p {
                Piece::Repeat(r, _) => self.char_len_value(r),
                _ => n,
            };
            let mut at = pos;
            for from in copies {
                let last = self.val(Inst::Binary(BinaryOp::Add, at, each), i64t);
                let last = self.val(Inst::Binary(BinaryOp::Sub, last, one), i64t);
                let dest = self.shifted_ref(&to, at, last);
                self.emit(Inst::CharAssign(dest, from), None);
                at = self.val(Inst::Binary(BinaryOp::Add, at, each), i64t);
            }
            pos = self.val(Inst::Binary(BinaryOp::Add, pos, n), i64t);
        }
        to
    }

    /// When the actual argument `e` is character data that needs storage
    /// of its own (a concatenation, TRIM, ADJUSTL, ADJUSTR or REPEAT),
    /// builds it before the statement and returns its temporary.
    pub(super) fn char_arg_temp(&mut self, e: &Expr) -> R<Option<ArgTemp>> {
        let pieces = if is_concat(e) || self.runtime_len_fn(e).is_some() {
            self.value_pieces(e)?
        } else if self.is_string_fn_ref(e) {
            self.part_pieces(e)?
        } else {
            return Ok(None);
        };
        let temp = match (&pieces.parts[..], pieces.len) {
            // A function result: its buffer, exactly as long, is the
            // argument (other buffers may hold more than the value: TRIM).
            ([Piece::Buf(buf, _)], _) if self.runtime_len_fn(e).is_some() => *buf,
            (_, len) => self.pieces_temp(pieces, len)?,
        };
        Ok(Some(ArgTemp {
            expr: e,
            temp,
            back: None,
            storage: None,
        }))
    }

    /// The variable holding a character result for an actual argument:
    /// a temporary of its constant length, or a buffer.
    fn pieces_temp(&mut self, pieces: Pieces, len: Option<i64>) -> R<VarId> {
        Ok(match len {
            Some(n) if n <= MAX_TEMP_LEN => {
                let to = self.pieces_in_temp(pieces, n);
                match to.base {
                    CharBase::Var { var, .. } => var,
                    // An empty result: a zero-length buffer.
                    CharBase::Literal(_) => {
                        let none = Pieces {
                            parts: Vec::new(),
                            len: Some(0),
                        };
                        self.fill_buffer(&none, 0)?.0
                    }
                }
            }
            _ => self.fill_buffer(&pieces, 0)?.0,
        })
    }

    /// `to = value` when the value is character data that needs storage
    /// of its own ([`Self::is_built_char`]; returns false, doing nothing,
    /// for other values): the parts are
    /// copied one after the other into the target, clipped to its length,
    /// the rest blank.
    pub(super) fn assign_char_pieces(&mut self, to: &CharRef, value: &Expr) -> R<bool> {
        if !self.is_built_char(value) {
            return Ok(false);
        }
        // The target's subscripts are kept first: building the value may
        // end the block (copies of strings of run-time length).
        let target = self.spill_ref(to);
        let pieces = self.value_pieces(value)?.parts;
        if pieces.iter().all(|p| matches!(p, Piece::Text(_))) {
            let texts = pieces
                .into_iter()
                .filter_map(|p| match p {
                    Piece::Text(r) => Some(r),
                    _ => None,
                })
                .collect();
            let to = self.reload_ref(&target);
            self.assign_parts(to, texts);
            return Ok(true);
        }
        let i64t = Type::I64;
        let spilled: Vec<SpilledPiece> = pieces.iter().map(|p| self.spill_piece(p)).collect();
        let pos = self.temp("pos", i64t);
        let one = self.int(1, i64t);
        self.emit(Inst::Store(pos, one), None);
        for p in &spilled {
            if let SpilledPiece::Repeat(r, c) = p {
                self.for_positions(&[*c], &mut |this, ks| {
                    let to = this.reload_ref(&target);
                    let r = this.reload_ref(r);
                    let each = this.char_len_value(&r);
                    let skip = this.val(Inst::Binary(BinaryOp::Mul, ks[0], each), i64t);
                    let at = this.val(Inst::Load(pos), i64t);
                    let at = this.val(Inst::Binary(BinaryOp::Add, at, skip), i64t);
                    this.put_clipped(&to, at, each, r);
                    Ok(())
                })?;
            } else if let SpilledPiece::Buf(buf, n) = p {
                let buf = *buf;
                self.for_positions(&[*n], &mut |this, ks| {
                    let to = this.reload_ref(&target);
                    let one = this.int(1, i64t);
                    let k = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
                    let at = this.val(Inst::Load(pos), i64t);
                    let at = this.val(Inst::Binary(BinaryOp::Add, at, ks[0]), i64t);
                    this.put_clipped(&to, at, one, element(buf, k));
                    Ok(())
                })?;
                self.emit(Inst::Deallocate(buf), None);
            } else {
                let to = self.reload_ref(&target);
                let at = self.val(Inst::Load(pos), i64t);
                let piece = self.reload_piece(p);
                let n = self.piece_len(&piece);
                let from = match piece {
                    Piece::Text(r) => r,
                    _ => CharRef::literal(b""),
                };
                self.put_clipped(&to, at, n, from);
            }
            let piece = self.reload_piece(p);
            let n = self.piece_len(&piece);
            let at = self.val(Inst::Load(pos), i64t);
            let next = self.val(Inst::Binary(BinaryOp::Add, at, n), i64t);
            self.emit(Inst::Store(pos, next), None);
        }
        // The rest (empty when the parts filled the target) is blank.
        let to = self.reload_ref(&target);
        let len = self.char_len_value(&to);
        let at = self.val(Inst::Load(pos), i64t);
        let dest = self.shifted_ref(&to, at, len);
        self.emit(Inst::CharAssign(dest, CharRef::literal(b"")), None);
        Ok(true)
    }

    /// Copies `from` into `to` at `at` (`n` characters, clipped to the
    /// length of `to`).
    fn put_clipped(&mut self, to: &CharRef, at: Value, n: Value, from: CharRef) {
        let i64t = Type::I64;
        let len = self.char_len_value(to);
        let one = self.int(1, i64t);
        let last = self.val(Inst::Binary(BinaryOp::Add, at, n), i64t);
        let last = self.val(Inst::Binary(BinaryOp::Sub, last, one), i64t);
        let end = self.val(Inst::Binary(BinaryOp::Min, last, len), i64t);
        let dest = self.shifted_ref(to, at, end);
        self.emit(Inst::CharAssign(dest, from), None);
    }

    /// True when `e` references TRIM, ADJUSTL, ADJUSTR or REPEAT.
    pub(super) fn is_string_fn_ref(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Apply { name, .. } => self.names_string_fn(name),
            _ => false,
        }
    }

    /// One operand of a concatenation (or a whole actual argument) as
    /// pieces: the intrinsics' own parts, or the data.
    pub(super) fn part_pieces(&mut self, x: &Expr) -> R<Pieces> {
        if let Some(r) = self.deferred_string_ref(x) {
            return self.deferred_string_pieces(&r, x.span);
        }
        if let (Some(unit), ExprKind::Apply { name, args }) = (self.runtime_len_fn(x), &x.kind) {
            let (buf, len) = self.runtime_len_call(unit, name, args)?;
            let n = self.val(Inst::Load(len), Type::I64);
            return Ok(Pieces {
                parts: vec![Piece::Buf(buf, n)],
                len: None,
            });
        }
        if let ExprKind::Apply { name, args } = &x.kind {
            if self.names_string_fn(name) {
                let which = StrFn::from_name(&name.text).expect("a character intrinsic");
                return self.string_pieces(which, name, args);
            }
        }
        let Operand::Char(r) = self.expr(x)? else {
            return Err(self.err(x.span, "concatenation of a non-character value"));
        };
        let len = self.char_len_of(&r);
        Ok(Pieces {
            parts: vec![Piece::Text(r)],
            len,
        })
    }

    /// A character result of run-time length in an ALLOCATABLE array of
    /// one-character elements, filled character by character, with
    /// `spare` more elements past its end: the array and the result's
    /// length (an I64 variable). Buffers among the pieces are released.
    pub(super) fn fill_buffer(&mut self, pieces: &Pieces, spare: i64) -> R<(VarId, VarId)> {
        let i64t = Type::I64;
        let zero = self.int(0, i64t);
        let mut total = zero;
        for p in &pieces.parts {
            let n = self.piece_len(p);
            let n = self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t);
            total = self.val(Inst::Binary(BinaryOp::Add, total, n), i64t);
        }
        let spilled: Vec<SpilledPiece> = pieces.parts.iter().map(|p| self.spill_piece(p)).collect();
        let total_var = self.keep_value(total);
        let spare = self.int(spare, i64t);
        let size = self.val(Inst::Binary(BinaryOp::Add, total, spare), i64t);
        let size = self.keep_value(size);
        let buf = self.exact_temp(Type::Char, &[size]);
        let pos = self.temp("pos", i64t);
        let one = self.int(1, i64t);
        self.emit(Inst::Store(pos, one), None);
        for p in &spilled {
            // The piece's length, and its characters at `pos` on.
            let piece = self.reload_piece(p);
            let n = self.piece_len(&piece);
            let zero = self.int(0, i64t);
            let n = self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t);
            let n_var = self.keep_value(n);
            let (extents, each_var) = match p {
                SpilledPiece::Repeat(r, c) => {
                    let r = self.reload_ref(r);
                    let each = self.char_len_value(&r);
                    let each = self.keep_value(each);
                    (vec![each, *c], Some(each))
                }
                _ => (vec![n_var], None),
            };
            self.for_positions(&extents, &mut |this, ks| {
                let piece = this.reload_piece(p);
                let at = this.val(Inst::Load(pos), i64t);
                let mut k = ks[0];
                if let (Some(each), Some(&copy)) = (each_var, ks.get(1)) {
                    let each = this.val(Inst::Load(each), i64t);
                    let skip = this.val(Inst::Binary(BinaryOp::Mul, copy, each), i64t);
                    k = this.val(Inst::Binary(BinaryOp::Add, k, skip), i64t);
                }
                let at = this.val(Inst::Binary(BinaryOp::Add, at, k), i64t);
                let dest = CharRef {
                    base: CharBase::Var {
                        var: buf,
                        index: vec![at],
                    },
                    start: None,
                    end: None,
                };
                let one = this.int(1, i64t);
                let c = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
                let from = match &piece {
                    Piece::Text(r) | Piece::Repeat(r, _) => this.shifted_ref(r, c, c),
                    Piece::Buf(from, _) => element(*from, c),
                    Piece::Blanks(_) => CharRef::literal(b""),
                };
                this.emit(Inst::CharAssign(dest, from), None);
                Ok(())
            })?;
            let at = self.val(Inst::Load(pos), i64t);
            let n = self.val(Inst::Load(n_var), i64t);
            let next = self.val(Inst::Binary(BinaryOp::Add, at, n), i64t);
            self.emit(Inst::Store(pos, next), None);
            if let SpilledPiece::Buf(from, _) = p {
                self.emit(Inst::Deallocate(*from), None);
            }
        }
        Ok((buf, total_var))
    }

    /// A fresh variable holding `v`.
    pub(super) fn keep_value(&mut self, v: Value) -> VarId {
        let ty = self.proc.value_type(v).unwrap_or(Type::I64);
        let t = self.temp("k", ty);
        self.emit(Inst::Store(t, v), None);
        t
    }

    /// `r` with its values kept in variables (usable in other blocks).
    pub(super) fn spill_ref(&mut self, r: &CharRef) -> SpilledRef {
        let base = match &r.base {
            CharBase::Var { var, .. } => CharBase::Var {
                var: *var,
                index: Vec::new(),
            },
            b @ CharBase::Literal(_) => b.clone(),
        };
        let index = match &r.base {
            CharBase::Var { index, .. } => index.iter().map(|&v| self.keep_value(v)).collect(),
            CharBase::Literal(_) => Vec::new(),
        };
        SpilledRef {
            base,
            index,
            start: r.start.map(|v| self.keep_value(v)),
            end: r.end.map(|v| self.keep_value(v)),
        }
    }

    /// The reference [`Self::spill_ref`] kept, reloaded here.
    pub(super) fn reload_ref(&mut self, s: &SpilledRef) -> CharRef {
        let load = |this: &mut Self, x: VarId| {
            let ty = this.proc.var(x).ty;
            this.val(Inst::Load(x), ty)
        };
        let base = match &s.base {
            CharBase::Var { var, .. } => CharBase::Var {
                var: *var,
                index: s.index.iter().map(|&x| load(self, x)).collect(),
            },
            b => b.clone(),
        };
        CharRef {
            base,
            start: s.start.map(|x| load(self, x)),
            end: s.end.map(|x| load(self, x)),
        }
    }

    /// `p` with its values kept in variables.
    pub(super) fn spill_piece(&mut self, p: &Piece) -> SpilledPiece {
        match p {
            Piece::Text(r) => SpilledPiece::Text(self.spill_ref(r)),
            Piece::Blanks(n) => SpilledPiece::Blanks(self.keep_value(*n)),
            Piece::Buf(b, n) => SpilledPiece::Buf(*b, self.keep_value(*n)),
            Piece::Repeat(r, c) => {
                let r = self.spill_ref(r);
                SpilledPiece::Repeat(r, self.keep_value(*c))
            }
        }
    }

    /// A spilled piece, usable in the current block.
    pub(super) fn reload_piece(&mut self, p: &SpilledPiece) -> Piece {
        let i64t = Type::I64;
        match p {
            SpilledPiece::Text(r) => Piece::Text(self.reload_ref(r)),
            SpilledPiece::Blanks(n) => Piece::Blanks(self.val(Inst::Load(*n), i64t)),
            SpilledPiece::Buf(b, n) => Piece::Buf(*b, self.val(Inst::Load(*n), i64t)),
            SpilledPiece::Repeat(r, c) => {
                let r = self.reload_ref(r);
                Piece::Repeat(r, self.val(Inst::Load(*c), i64t))
            }
        }
    }
}

/// True when an actual argument is character data that
/// [`Lowerer::char_arg_temp`] may build.
pub(super) fn may_need_char_temp(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary(BinOp::Concat, ..) => true,
        ExprKind::Apply { name, args } => {
            StrFn::from_name(&name.text).is_some()
                && args.iter().all(|a| matches!(a.value, ArgValue::Expr(_)))
        }
        _ => false,
    }
}

/// Element `at` of a rank-1 character array.
pub(super) fn element(buf: VarId, at: adjit_ir::Value) -> CharRef {
    CharRef {
        base: CharBase::Var {
            var: buf,
            index: vec![at],
        },
        start: None,
        end: None,
    }
}
