//! Deferred-length CHARACTER variables: `character(len=:), allocatable ::
//! s`, locals, SAVE and module variables.
//!
//! Such a string is stored as a rank-1 ALLOCATABLE array of one-character
//! elements (`scope` gives it the dimension `(:)`), the same *buffer* form
//! as character data of run-time length (`super::char_runtime`): its
//! extent is its length and its allocation status is the string's. So
//! DEALLOCATE, ALLOCATED, SAVE and module lifetime are those of
//! ALLOCATABLE arrays. Here:
//!
//! - `allocate(character(len=n) :: s)` allocates the buffer `(1:n)`;
//! - a reference `s` or `s(i:j)` in an expression is character data of
//!   run-time length: the characters are copied into a fresh buffer (the
//!   buffers of `char_runtime` are consumed where they are used), so every
//!   consumer of such data (comparisons, SELECT CASE, `//`, PRINT, LEN,
//!   INDEX, TRIM, ...) takes it; reading an unallocated string is the
//!   runtime error of an unallocated array, naming it;
//! - `s = value` builds the value first (it may read `s`), then gives `s`
//!   the value's length (Fortran 2003 reallocation) and its characters;
//!   `s(i:j) = value` assigns into the substring, blank-padded;
//! - `s` as an actual argument passes the buffer itself, so that a
//!   `character(len=*)` dummy reads and writes the string.
//!
//! An array of such strings (`character(len=:), allocatable ::
//! names(:)`) is a rank-2 ALLOCATABLE buffer, the characters of each
//! string along its first dimension (all of the array's strings have one
//! length, its first extent):
//!
//! - `allocate(character(len=n) :: names(m))` allocates `(1:n, 1:m)`;
//! - an element `names(i)` (or its substring) reads like a string, and
//!   `names(i) = value` assigns into it, blank-padded or cut;
//! - `names = [a, b, ...]` builds the items ([`Lowerer::string_array_temp`]),
//!   then reallocates `names` to their number, of the first item's
//!   length; `names = other` copies; assignments of whole arrays and
//!   sections are [`super::string_arrays`]';
//! - `names(i)` as an actual argument passes its characters in place
//!   (`CallArg::Slice`), so a `character(len=*)` dummy reads and writes
//!   exactly them; so does a substring of a string;
//! - LEN and SIZE read the buffer's extents (`intrinsics`).

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name, ProcKind};
use super::char_expr::{element, Piece, Pieces};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::{CharLenInfo, TypeInfo};
use adjit_ir::{
    BinaryOp, Bound, CallArg, CharBase, CharRef, Inst, RuntimeErrorKind, Span, Terminator, Type,
    VarId,
};

/// A reference to a deferred-length string in an expression: the whole
/// string, or a substring with its optional bounds; of an array of such
/// strings, an element (`names(i)`) or its substring (`names(i)(j:k)`).
pub(super) struct StringRef<'e> {
    /// The variable's name.
    name: &'e Name,
    /// The subscript of an element of an array of strings.
    element: Option<&'e Expr>,
    /// `Some((lo, hi))` for a substring `s(lo:hi)`.
    range: Option<(Option<&'e Expr>, Option<&'e Expr>)>,
}

/// The part of a deferred-length string variable a reference names, its
/// subscript evaluated: the variable (the buffer of characters) and, for
/// an element of an array of strings, its subscript (an I64 variable).
#[derive(Clone, Copy)]
pub(super) struct StringCell {
    /// The buffer of characters.
    pub(super) var: VarId,
    /// The subscript of an element of an array of strings.
    pub(super) element: Option<VarId>,
}

impl Lowerer<'_, '_> {
    /// True when `name` is a deferred-length CHARACTER scalar variable
    /// visible here.
    pub(super) fn is_deferred_string(&self, name: &str) -> bool {
        self.deferred_string_rank(name) == Some(0)
    }

    /// True when `name` is an array of deferred-length CHARACTER strings
    /// (`character(len=:), allocatable :: names(:)`) visible here.
    pub(super) fn is_deferred_string_array(&self, name: &str) -> bool {
        self.deferred_string_rank(name) == Some(1)
    }

    /// True when `e` names a deferred-length CHARACTER variable, a string
    /// or an array of strings (whose LEN is read from its storage).
    pub(super) fn is_deferred_string_name(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) if self.deferred_string_rank(&n.text).is_some())
    }

    /// The rank of the deferred-length CHARACTER variable `name` visible
    /// here (0 for a string, 1 for an array of strings), `None` for any
    /// other name.
    pub(super) fn deferred_string_rank(&self, name: &str) -> Option<usize> {
        if self.inline.last().is_some_and(|f| f.contains_key(name)) {
            return None;
        }
        let (_, d) = self.visible_decl(name)?;
        let deferred = matches!(
            d.ty,
            Some(TypeInfo {
                char_len: CharLenInfo::Deferred,
                ..
            })
        );
        // (The buffer of characters is the first dimension.)
        deferred.then(|| d.dims.as_ref().map_or(1, Vec::len).saturating_sub(1))
    }

    /// The constant length of `e` when it names an ALLOCATABLE CHARACTER
    /// variable of constant length (`character(len=8), allocatable ::
    /// tags(:)`), held as a deferred-length string, whole or an element.
    pub(super) fn fixed_string_len(&self, e: &Expr) -> Option<i64> {
        let name = match &e.kind {
            ExprKind::Name(n) => n,
            _ => {
                self.deferred_string_ref(e)
                    .filter(|r| r.range.is_none())?
                    .name
            }
        };
        self.deferred_string_rank(&name.text)?;
        self.visible_decl(&name.text)?.1.fixed_len.map(i64::from)
    }

    /// `e` as a reference to a deferred-length string: `s` or `s(i:j)`,
    /// or an element of an array of strings, `names(i)` or
    /// `names(i)(j:k)`.
    pub(super) fn deferred_string_ref<'e>(&self, e: &'e Expr) -> Option<StringRef<'e>> {
        let element = |args: &'e [Arg]| match args {
            [Arg {
                keyword: None,
                value: ArgValue::Expr(i),
            }] => Some(i),
            _ => None,
        };
        match &e.kind {
            ExprKind::Name(name) if self.is_deferred_string(&name.text) => Some(StringRef {
                name,
                element: None,
                range: None,
            }),
            ExprKind::Apply { name, args } if self.is_deferred_string_array(&name.text) => {
                Some(StringRef {
                    name,
                    element: Some(element(args)?),
                    range: None,
                })
            }
            ExprKind::Substring { base, start, end } => match &base.kind {
                ExprKind::Apply { name, args } if self.is_deferred_string_array(&name.text) => {
                    Some(StringRef {
                        name,
                        element: Some(element(args)?),
                        range: Some((start.as_deref(), end.as_deref())),
                    })
                }
                _ => None,
            },
            ExprKind::Apply { name, args } if self.is_deferred_string(&name.text) => {
                let [Arg {
                    keyword: None,
                    value:
                        ArgValue::Range {
                            lo,
                            hi,
                            stride: None,
                        },
                }] = &args[..]
                else {
                    return None;
                };
                Some(StringRef {
                    name,
                    element: None,
                    range: Some((lo.as_ref(), hi.as_ref())),
                })
            }
            _ => None,
        }
    }

    /// The buffer variable of the deferred-length string `name`.
    pub(super) fn string_var(&mut self, name: &Name) -> R<VarId> {
        match self.resolve(name)? {
            Resolved::Var(v) => Ok(v),
            _ => Err(self.err(
                name.span,
                format!("`{}` is not a character variable", name.text),
            )),
        }
    }

    /// The objects of an ALLOCATE statement, with `character(len=n) ::`
    /// (`len`) applied: a deferred-length string `s` becomes its buffer
    /// `s(n)`, an array of strings `names(m)` its buffer `names(n, m)`.
    /// Other objects are kept; a deferred-length string without the type
    /// specification, or the specification for anything else, is a
    /// located error.
    pub(super) fn deferred_string_objects(
        &mut self,
        objects: &[Expr],
        len: Option<&Expr>,
    ) -> R<Vec<Expr>> {
        let mut out = Vec::with_capacity(objects.len());
        for o in objects {
            let name = match &o.kind {
                ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => Some(n),
                _ => None,
            };
            let deferred = name.filter(|n| self.deferred_string_rank(&n.text).is_some());
            let array = deferred.is_some_and(|n| self.is_deferred_string_array(&n.text));
            // An ALLOCATABLE CHARACTER of constant length: that length.
            let fixed = deferred
                .and_then(|n| self.visible_decl(&n.text)?.1.fixed_len)
                .map(i64::from)
                .map(|n| Expr {
                    kind: ExprKind::Int {
                        value: n,
                        kind: None,
                    },
                    span: o.span,
                });
            match (deferred, &o.kind, len.or(fixed.as_ref())) {
                (Some(n), ExprKind::Name(_), Some(len)) if !array => out.push(Expr {
                    kind: ExprKind::Apply {
                        name: n.clone(),
                        args: vec![Arg::positional(len.clone())],
                    },
                    span: o.span,
                }),
                (Some(n), ExprKind::Apply { args, .. }, Some(len)) if array => out.push(Expr {
                    kind: ExprKind::Apply {
                        name: n.clone(),
                        args: std::iter::once(Arg::positional(len.clone()))
                            .chain(args.iter().cloned())
                            .collect(),
                    },
                    span: o.span,
                }),
                (Some(n), _, _) => {
                    return Err(self.err(
                        o.span,
                        format!(
                            "ALLOCATE of the deferred-length CHARACTER `{0}` needs its length: `allocate(character(len=n) :: {0})`",
                            n.text
                        ),
                    ))
                }
                (None, _, Some(len)) => {
                    return Err(self.err(
                        len.span,
                        "unsupported Fortran: a `character(len=n) ::` type specification in ALLOCATE of anything but a deferred-length CHARACTER variable",
                    ))
                }
                (None, _, None) => out.push(o.clone()),
            }
        }
        Ok(out)
    }

    /// The variable and the evaluated subscript of the string `r` names.
    fn string_cell(&mut self, r: &StringRef) -> R<StringCell> {
        let var = self.string_var(r.name)?;
        let element = match r.element {
            Some(i) => {
                let i = self.int64(i)?;
                Some(self.keep_value(i))
            }
            None => None,
        };
        Ok(StringCell { var, element })
    }

    /// Character `at` (1-based, I64) of the string `c`.
    fn cell_char(&mut self, c: StringCell, at: adjit_ir::Value) -> CharRef {
        let mut r = element(c.var, at);
        if let (Some(i), CharBase::Var { index, .. }) = (c.element, &mut r.base) {
            index.push(self.val(Inst::Load(i), Type::I64));
        }
        r
    }

    /// Fails with the runtime error of an unallocated array, naming the
    /// string `v`, unless it is allocated.
    pub(super) fn require_allocated(&mut self, v: VarId, at: Span) {
        // (An assumed-length array of strings, `character(len=*) ::
        // a(:)`, is always there.)
        if !self.proc.var(v).storage.is_allocatable() {
            return;
        }
        // Checked before the statement when it can be, so that no value
        // of the expression around the reference crosses a block.
        if self.fail_if_unallocated(v, at) {
            return;
        }
        let i64t = Type::I64;
        let is = self.val(Inst::Allocated(v), Type::Bool);
        let (missing, present) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: present,
            else_dest: missing,
        });
        self.switch_to(missing);
        let span = std::mem::replace(&mut self.span, at);
        // Referencing the first character fails, naming the string.
        let one = self.int(1, i64t);
        let probe = self.char_temp(1);
        let first = StringCell {
            var: v,
            element: (self.proc.var(v).dims.len() > 1).then(|| self.keep_value(one)),
        };
        let first = self.cell_char(first, one);
        self.emit(Inst::CharAssign(CharRef::whole(probe), first), None);
        self.terminate(Terminator::Fail(RuntimeErrorKind::NotAllocated));
        self.span = span;
        self.switch_to(present);
    }

    /// The first position and the length (I64 variables) of the part of
    /// the string `v` that `range` selects (all of it for `None`), the
    /// string checked to be allocated.
    fn string_extent(
        &mut self,
        v: VarId,
        range: Option<(Option<&Expr>, Option<&Expr>)>,
        at: Span,
    ) -> R<(VarId, VarId)> {
        let i64t = Type::I64;
        self.require_allocated(v, at);
        let (lo, hi) = range.unwrap_or((None, None));
        let first = match lo {
            Some(e) => self.int64(e)?,
            None => self.int(1, i64t),
        };
        let first = self.keep_value(first);
        let last = match hi {
            Some(e) => self.int64(e)?,
            None => self.val(Inst::DimExtent(v, 0), i64t),
        };
        let start = self.val(Inst::Load(first), i64t);
        let one = self.int(1, i64t);
        let n = self.val(Inst::Binary(BinaryOp::Sub, last, start), i64t);
        let n = self.val(Inst::Binary(BinaryOp::Add, n, one), i64t);
        let zero = self.int(0, i64t);
        let n = self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t);
        Ok((first, self.keep_value(n)))
    }

    /// LEN of the array of deferred-length strings `name` (I64), checked
    /// to be allocated.
    pub(super) fn deferred_array_len(&mut self, name: &Name) -> R<adjit_ir::Value> {
        let v = self.string_var(name)?;
        self.require_allocated(v, name.span);
        Ok(self.val(Inst::DimExtent(v, 0), Type::I64))
    }

    /// The length of the strings of `e`, the actual argument for the
    /// array of strings `dummy` of `callee` (`character(len=*) ::
    /// a(:)`), which the dummy takes as the hidden extent of its buffer's
    /// first dimension (an I64 variable): a whole array of deferred-length
    /// strings (checked to be allocated) or a whole rank-1 CHARACTER array
    /// of constant length, or a constructor of strings; anything else is a
    /// located error.
    pub(super) fn string_array_actual_len(
        &mut self,
        e: &Expr,
        dummy: &str,
        callee: &Name,
    ) -> R<VarId> {
        if let Some(t) = self.arg_temps.iter().find(|t| t.is_for(e)) {
            // A constructor of strings, built before the call.
            let len = self.val(Inst::DimExtent(t.temp, 0), Type::I64);
            return Ok(self.keep_value(len));
        }
        if let ExprKind::Name(n) = &e.kind {
            if self.is_deferred_string_array(&n.text) {
                let len = self.deferred_array_len(n)?;
                return Ok(self.keep_value(len));
            }
            if let Resolved::Var(v) = self.resolve(n)? {
                let var = self.proc.var(v);
                if let (Type::Char, 1, Some(Bound::Const(len))) =
                    (var.ty, var.dims.len(), &var.char_len)
                {
                    let len = self.int(*len, Type::I64);
                    return Ok(self.keep_value(len));
                }
            }
        }
        Err(self.err(
            e.span,
            format!(
                "argument `{dummy}` of `{}` is an array of strings of assumed length (`character(len=*) :: {dummy}(:)`): pass a whole array of deferred-length strings or a whole rank-1 CHARACTER array of constant length",
                callee.text
            ),
        ))
    }

    /// The first character a deferred-length string reference reads (the
    /// string checked to be allocated; an empty one is a subscript out of
    /// range at run time): what ICHAR and IACHAR read.
    pub(super) fn deferred_string_first_char(&mut self, r: &StringRef, at: Span) -> R<CharRef> {
        let c = self.string_cell(r)?;
        let (first, _) = self.string_extent(c.var, r.range, at)?;
        let first = self.val(Inst::Load(first), Type::I64);
        Ok(self.cell_char(c, first))
    }

    /// The characters a deferred-length string reference reads, copied
    /// into a fresh buffer, as parts of a value.
    pub(super) fn deferred_string_pieces(&mut self, r: &StringRef, at: Span) -> R<Pieces> {
        let (copy, n) = self.deferred_string_copy(r, at)?;
        Ok(copied_pieces(self, copy, n))
    }

    /// The parts of the concatenation parts `xs`: the deferred-length
    /// strings among them are copied first, since the copies end the
    /// current block and values may only be used in the block defining
    /// them.
    pub(super) fn concat_pieces(&mut self, xs: &[&Expr]) -> R<Pieces> {
        let mut copies = Vec::with_capacity(xs.len());
        for x in xs {
            copies.push(match self.deferred_string_ref(x) {
                Some(r) => Some(self.deferred_string_copy(&r, x.span)?),
                None => None,
            });
        }
        let mut parts = Vec::new();
        let mut len = Some(0i64);
        for (x, copy) in xs.iter().zip(copies) {
            let p = match copy {
                Some((buf, n)) => copied_pieces(self, buf, n),
                None => self.part_pieces(x)?,
            };
            len = len.zip(p.len).map(|(a, b)| a.saturating_add(b));
            parts.extend(p.parts);
        }
        Ok(Pieces { parts, len })
    }

    /// The characters a deferred-length string reference reads, copied
    /// into a fresh buffer: the buffer and the number of characters (an
    /// I64 variable).
    fn deferred_string_copy(&mut self, r: &StringRef, at: Span) -> R<(VarId, VarId)> {
        let i64t = Type::I64;
        let c = self.string_cell(r)?;
        let (first, n) = self.string_extent(c.var, r.range, at)?;
        let copy = self.exact_temp(Type::Char, &[n]);
        self.for_positions(&[n], &mut |this, ks| {
            let one = this.int(1, i64t);
            let to = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let start = this.val(Inst::Load(first), i64t);
            let from = this.val(Inst::Binary(BinaryOp::Add, start, ks[0]), i64t);
            let from = this.cell_char(c, from);
            this.emit(Inst::CharAssign(element(copy, to), from), None);
            Ok(())
        })?;
        Ok((copy, n))
    }

    /// `target = value` when the target is a deferred-length string or a
    /// substring of one, or an element of an array of strings or its
    /// substring (false, doing nothing, otherwise). The value is built in
    /// a buffer first, since it may read the target; an element keeps
    /// its length (the value blank-padded or cut).
    pub(super) fn deferred_string_assign(&mut self, target: &Expr, value: &Expr) -> R<bool> {
        let Some(r) = self.deferred_string_ref(target) else {
            return Ok(false);
        };
        let v = self.string_var(r.name)?;
        self.check_writable(v, r.name)?;
        if r.range.is_none() && r.element.is_none() {
            let mut pieces = self.value_pieces(value)?;
            let fixed = self.fixed_string_len(target);
            if let Some(n) = fixed {
                // Blank-padded, then cut to the variable's length.
                let pad = self.int(n, Type::I64);
                pieces.parts.push(Piece::Blanks(pad));
                pieces.len = None;
            }
            let (buf, mut len) = self.fill_buffer(&pieces, 0)?;
            if let Some(n) = fixed {
                let n = self.int(n, Type::I64);
                len = self.keep_value(n);
            }
            self.reallocate_string(v, len);
            self.copy_buffer(v, buf, len)?;
            return Ok(true);
        }
        // A substring or an element: the value blank-padded to at least
        // its length.
        let c = self.string_cell(&r)?;
        let (first, n) = self.string_extent(v, r.range, target.span)?;
        let pieces = self.value_pieces(value)?;
        self.assign_padded(c, first, n, pieces)?;
        Ok(true)
    }

    /// Writes the value `pieces`, blank-padded or cut to `n` (an I64
    /// variable) characters, into the string `c` from position `first`
    /// (an I64 variable) on.
    pub(super) fn assign_padded(
        &mut self,
        c: StringCell,
        first: VarId,
        n: VarId,
        mut pieces: Pieces,
    ) -> R<()> {
        let i64t = Type::I64;
        let pad = self.val(Inst::Load(n), i64t);
        pieces.parts.push(Piece::Blanks(pad));
        pieces.len = None;
        let (buf, _) = self.fill_buffer(&pieces, 0)?;
        self.for_positions(&[n], &mut |this, ks| {
            let one = this.int(1, i64t);
            let from = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let start = this.val(Inst::Load(first), i64t);
            let to = this.val(Inst::Binary(BinaryOp::Add, start, ks[0]), i64t);
            let to = this.cell_char(c, to);
            this.emit(Inst::CharAssign(to, element(buf, from)), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(buf), None);
        Ok(())
    }

    /// Sets every string of the allocated array of strings `name` to the
    /// scalar character value `value`, blank-padded or cut to the
    /// strings' length (the default initialization of a CHARACTER
    /// component of a newly allocated array of structures).
    pub(super) fn fill_string_array(&mut self, name: &Name, value: &Expr) -> R<()> {
        let i64t = Type::I64;
        let v = self.string_var(name)?;
        self.require_allocated(v, name.span);
        let width = self.val(Inst::DimExtent(v, 0), i64t);
        let width = self.keep_value(width);
        let count = self.val(Inst::DimExtent(v, 1), i64t);
        let count = self.keep_value(count);
        let first = self.int(1, i64t);
        let first = self.keep_value(first);
        self.for_positions(&[count], &mut |this, ks| {
            let lower = this.val(Inst::DimLower(v, 1), i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, lower, ks[0]), i64t);
            let element = Some(this.keep_value(at));
            let pieces = this.value_pieces(value)?;
            this.assign_padded(StringCell { var: v, element }, first, width, pieces)
        })
    }

    /// True when `e` is an array constructor of strings: one with a
    /// `character(len=n) ::` type specification, or whose items are
    /// CHARACTER.
    pub(super) fn is_string_constructor(&mut self, e: &Expr) -> R<bool> {
        Ok(match &e.kind {
            ExprKind::CharArrayConstructor { .. } => true,
            ExprKind::ArrayConstructor(items) => self.constructor_type(items)? == Some(Type::Char),
            _ => false,
        })
    }

    /// The strings of the array constructor `e` ([`Self::is_string_constructor`])
    /// in a fresh ALLOCATABLE buffer, as an array of deferred-length
    /// strings holds them.
    pub(super) fn string_constructor_temp(&mut self, e: &Expr) -> R<VarId> {
        match &e.kind {
            ExprKind::CharArrayConstructor { len, items } => {
                self.string_array_temp(items, Some(len))
            }
            ExprKind::ArrayConstructor(items) => self.string_array_temp(items, None),
            _ => Err(self.err(e.span, "not an array constructor of strings")),
        }
    }

    /// Builds the strings of a constructor's `items` (nested constructors
    /// and implied DO loops walked in order) into a fresh rank-2
    /// ALLOCATABLE buffer, one string per column: of the length `len` of
    /// a `[character(len=len) :: ...]` constructor, else of the first
    /// item's; each item is blank-padded or cut to it. Items that are
    /// arrays are a located error.
    pub(super) fn string_array_temp(&mut self, items: &[Expr], len: Option<&Expr>) -> R<VarId> {
        let i64t = Type::I64;
        // The number of strings (only implied DO bounds are evaluated).
        let count = self.temp("n", i64t);
        let zero = self.int(0, i64t);
        self.emit(Inst::Store(count, zero), None);
        self.walk_strings(items, &mut |this, _| {
            let n = this.val(Inst::Load(count), i64t);
            let one = this.int(1, i64t);
            let n = this.val(Inst::Binary(BinaryOp::Add, n, one), i64t);
            this.emit(Inst::Store(count, n), None);
            Ok(())
        })?;
        // The common length: given, or -1 until the first item is built.
        let width = self.temp("w", i64t);
        let w = match len {
            Some(e) => {
                let n = self.int64(e)?;
                let zero = self.int(0, i64t);
                self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t)
            }
            None => self.int(-1, i64t),
        };
        self.emit(Inst::Store(width, w), None);
        let strings = self.temp("strings", Type::Char);
        let unallocated = adjit_ir::Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(0)),
        };
        let var = &mut self.proc.vars[strings.index()];
        var.dims = vec![unallocated; 2];
        var.char_len = Some(Bound::Const(1));
        var.storage = adjit_ir::Storage::Allocatable;
        let column = self.temp("column", i64t);
        let one = self.int(1, i64t);
        self.emit(Inst::Store(column, one), None);
        self.walk_strings(items, &mut |this, item| {
            let mut pieces = match item {
                StringItem::Scalar(e) => this.value_pieces(e)?,
                StringItem::Column(built, k) => this.column_pieces(built, k)?,
            };
            let w = this.val(Inst::Load(width), i64t);
            let zero = this.int(0, i64t);
            let pad = this.val(Inst::Binary(BinaryOp::Max, w, zero), i64t);
            pieces.parts.push(Piece::Blanks(pad));
            pieces.len = None;
            let (chars, n) = this.fill_buffer(&pieces, 0)?;
            // The first item's length, when none is given.
            let w = this.val(Inst::Load(width), i64t);
            let n = this.val(Inst::Load(n), i64t);
            let zero = this.int(0, i64t);
            let unknown = this.val(Inst::Cmp(adjit_ir::CmpOp::Lt, w, zero), Type::Bool);
            let w = this.val(Inst::Select(unknown, n, w), i64t);
            this.emit(Inst::Store(width, w), None);
            this.allocate_strings(strings, width, count);
            let cell = StringCell {
                var: strings,
                element: Some(column),
            };
            this.for_positions(&[width], &mut |this, ks| {
                let one = this.int(1, i64t);
                let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
                let to = this.cell_char(cell, at);
                this.emit(Inst::CharAssign(to, element(chars, at)), None);
                Ok(())
            })?;
            this.emit(Inst::Deallocate(chars), None);
            let k = this.val(Inst::Load(column), i64t);
            let one = this.int(1, i64t);
            let k = this.val(Inst::Binary(BinaryOp::Add, k, one), i64t);
            this.emit(Inst::Store(column, k), None);
            Ok(())
        })?;
        // No items: no strings, of the given length or none.
        let w = self.val(Inst::Load(width), i64t);
        let zero = self.int(0, i64t);
        let w = self.val(Inst::Binary(BinaryOp::Max, w, zero), i64t);
        self.emit(Inst::Store(width, w), None);
        self.allocate_strings(strings, width, count);
        Ok(strings)
    }

    /// Allocates the buffer `strings` for `count` strings of `width`
    /// characters (I64 variables) unless it is allocated.
    fn allocate_strings(&mut self, strings: VarId, width: VarId, count: VarId) {
        let i64t = Type::I64;
        let is = self.val(Inst::Allocated(strings), Type::Bool);
        let (missing, done) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: done,
            else_dest: missing,
        });
        self.switch_to(missing);
        let one = self.int(1, i64t);
        let (w, c) = (
            self.val(Inst::Load(width), i64t),
            self.val(Inst::Load(count), i64t),
        );
        self.emit(Inst::Allocate(strings, vec![(one, w), (one, c)]), None);
        self.jump(done);
        self.switch_to(done);
    }

    /// Calls `visit` with every string item of a constructor's `items`, in
    /// order: nested constructors and implied DO loops are walked, an
    /// item that is a CHARACTER array (or a section, ADJUSTL / ADJUSTR of
    /// one) gives its strings in order; another array item is a located
    /// error.
    fn walk_strings(
        &mut self,
        items: &[Expr],
        visit: &mut dyn FnMut(&mut Self, StringItem) -> R<()>,
    ) -> R<()> {
        for item in items {
            match &item.kind {
                ExprKind::ArrayConstructor(inner) => self.walk_strings(inner, visit)?,
                ExprKind::ImpliedDo { items: inner, .. } => {
                    self.implied_do(item, &mut |this| this.walk_strings(inner, visit))?
                }
                _ if self.deferred_string_ref(item).is_none()
                    && (self.array_source(item).is_some()
                        || self.is_deferred_string_name(item)
                        || self.rank_of(item) != 0
                        || self.is_adjusted_array(item)) =>
                {
                    let Some(built) = self.built_strings(item)? else {
                        return Err(self.err(
                            item.span,
                            "unsupported Fortran: this array as an item of a constructor of strings (a CHARACTER array, a section or ADJUSTL / ADJUSTR of one is supported)",
                        ));
                    };
                    let count = self.val(Inst::DimExtent(built, 1), Type::I64);
                    let count = self.keep_value(count);
                    self.for_positions(&[count], &mut |this, ks| {
                        let one = this.int(1, Type::I64);
                        let k = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), Type::I64);
                        let k = this.keep_value(k);
                        visit(this, StringItem::Column(built, k))
                    })?;
                    self.emit(Inst::Deallocate(built), None);
                }
                _ => visit(self, StringItem::Scalar(item))?,
            }
        }
        Ok(())
    }

    /// String `k` (an I64 variable, 1-based) of the buffer of strings
    /// `built`, copied into a fresh buffer, as parts of a value.
    fn column_pieces(&mut self, built: VarId, k: VarId) -> R<Pieces> {
        let i64t = Type::I64;
        let width = self.val(Inst::DimExtent(built, 0), i64t);
        let width = self.keep_value(width);
        let copy = self.exact_temp(Type::Char, &[width]);
        let cell = StringCell {
            var: built,
            element: Some(k),
        };
        self.for_positions(&[width], &mut |this, ks| {
            let one = this.int(1, i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let from = this.cell_char(cell, at);
            this.emit(Inst::CharAssign(element(copy, at), from), None);
            Ok(())
        })?;
        Ok(copied_pieces(self, copy, width))
    }

    /// `to = from` for arrays of deferred-length strings: `to` takes the
    /// shape and the characters of `from` (checked to be allocated); with
    /// a constant length `fixed` (an ALLOCATABLE CHARACTER array of
    /// constant length), `to`'s strings have that length, `from`'s
    /// blank-padded or cut to it.
    pub(super) fn copy_string_array(
        &mut self,
        to: VarId,
        from: VarId,
        fixed: Option<i64>,
    ) -> R<()> {
        let i64t = Type::I64;
        if from == to {
            return Ok(());
        }
        self.require_allocated(from, self.span);
        let from_width = self.val(Inst::DimExtent(from, 0), i64t);
        let width = match fixed {
            Some(n) => self.int(n, i64t),
            None => from_width,
        };
        let copied = self.val(Inst::Binary(BinaryOp::Min, width, from_width), i64t);
        let copied = self.keep_value(copied);
        let width = self.keep_value(width);
        let count = self.val(Inst::DimExtent(from, 1), i64t);
        let count = self.keep_value(count);
        self.release_if_allocated(to);
        let one = self.int(1, i64t);
        let (w, c) = (
            self.val(Inst::Load(width), i64t),
            self.val(Inst::Load(count), i64t),
        );
        self.emit(Inst::Allocate(to, vec![(one, w), (one, c)]), None);
        let target_char = |this: &mut Self, ks: &[adjit_ir::Value]| {
            let one = this.int(1, i64t);
            let at: Vec<_> = ks
                .iter()
                .map(|&k| this.val(Inst::Binary(BinaryOp::Add, k, one), i64t))
                .collect();
            CharRef {
                base: CharBase::Var { var: to, index: at },
                start: None,
                end: None,
            }
        };
        if fixed.is_some() {
            // Blanks first, where `from`'s strings are shorter.
            self.for_positions(&[width, count], &mut |this, ks| {
                let dst = target_char(this, ks);
                this.emit(Inst::CharAssign(dst, CharRef::literal(b"")), None);
                Ok(())
            })?;
        }
        self.for_positions(&[copied, count], &mut |this, ks| {
            let dst = target_char(this, ks);
            let one = this.int(1, i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            let from_lb = this.val(Inst::DimLower(from, 1), i64t);
            let from_j = this.val(Inst::Binary(BinaryOp::Add, ks[1], from_lb), i64t);
            let src = CharRef {
                base: CharBase::Var {
                    var: from,
                    index: vec![at, from_j],
                },
                start: None,
                end: None,
            };
            this.emit(Inst::CharAssign(dst, src), None);
            Ok(())
        })
    }

    /// Gives the string `v` storage for `len` (an I64 variable)
    /// characters, releasing what it had.
    fn reallocate_string(&mut self, v: VarId, len: VarId) {
        let i64t = Type::I64;
        self.release_if_allocated(v);
        let one = self.int(1, i64t);
        let n = self.val(Inst::Load(len), i64t);
        self.emit(Inst::Allocate(v, vec![(one, n)]), None);
    }

    /// Copies the first `len` (an I64 variable) characters of the buffer
    /// `from` to the string `to`, then releases the buffer.
    fn copy_buffer(&mut self, to: VarId, from: VarId, len: VarId) -> R<()> {
        let i64t = Type::I64;
        self.for_positions(&[len], &mut |this, ks| {
            let one = this.int(1, i64t);
            let at = this.val(Inst::Binary(BinaryOp::Add, ks[0], one), i64t);
            this.emit(Inst::CharAssign(element(to, at), element(from, at)), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(from), None);
        Ok(())
    }

    /// Gives the result parameter `v` of a function returning a
    /// deferred-length string its storage: the caller's buffer, passed
    /// unallocated by descriptor ([`super::Sig::deferred_result`]), which
    /// the function's assignments to its result allocate.
    pub(super) fn deferred_result(&mut self, v: VarId) {
        let pos = self.proc.var(v).storage.param_index().unwrap_or(0);
        self.descriptor_dummy(v, pos, 1);
    }

    /// Calls `callee` (`call_args`, the result's buffer appended), a
    /// function returning a deferred-length string: the buffer, given
    /// unallocated, and the result's length (an I64 variable). A function
    /// that did not assign its result fails at run time, at the reference
    /// `name`, naming the function (`unit`) and its result variable.
    pub(super) fn deferred_result_call(
        &mut self,
        (unit, callee): (usize, Option<adjit_ir::ProcId>),
        mut call_args: Vec<CallArg>,
        name: &Name,
    ) -> (VarId, VarId) {
        let buf = self.temp(&format!("result_of_{}_", name.text), Type::Char);
        let var = &mut self.proc.vars[buf.index()];
        var.dims = vec![adjit_ir::Dim {
            lower: adjit_ir::Bound::Const(1),
            upper: Some(adjit_ir::Bound::Const(0)),
        }];
        var.char_len = Some(adjit_ir::Bound::Const(1));
        var.storage = adjit_ir::Storage::Allocatable;
        call_args.push(CallArg::Var(buf));
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        let ast = &self.prog.units[unit].ast;
        let result = match &ast.kind {
            ProcKind::Function {
                result: Some(r), ..
            } => r,
            _ => &ast.name,
        };
        let unassigned = RuntimeErrorKind::ResultNotAssigned {
            function: ast.name.text.clone(),
            result: result.text.clone(),
        };
        let assigned = self.val(Inst::Allocated(buf), Type::Bool);
        let unassigned_flag = self.val(Inst::Unary(adjit_ir::UnaryOp::Not, assigned), Type::Bool);
        self.fail_when(unassigned_flag, unassigned, name.span);
        let n = self.val(Inst::DimExtent(buf, 0), Type::I64);
        (buf, self.keep_value(n))
    }

    /// The actual argument for the deferred-length string `e` (`None`
    /// for another argument): the string's buffer itself, so that the
    /// callee's `character(len=*)` dummy (or deferred-length dummy) reads
    /// and writes it; for an element of an array of strings or a
    /// substring, its characters in place, so that a `character(len=*)`
    /// dummy sees exactly them.
    pub(super) fn deferred_string_actual(
        &mut self,
        e: &Expr,
        (pty, prank): (Type, usize),
        callee: &Name,
    ) -> R<Option<CallArg>> {
        let Some(r) = self.deferred_string_ref(e) else {
            return Ok(None);
        };
        let whole = r.element.is_none() && r.range.is_none();
        if pty != Type::Char || prank != 0 {
            return Err(self.err(
                e.span,
                format!(
                    "the deferred-length CHARACTER `{}` passed to `{}`, whose dummy is not a CHARACTER scalar",
                    r.name.text, callee.text
                ),
            ));
        }
        if whole {
            // Passing an unallocated array is the runtime error naming it.
            return Ok(Some(CallArg::Var(self.string_var(r.name)?)));
        }
        let c = self.string_cell(&r)?;
        let (first, n) = self.string_extent(c.var, r.range, e.span)?;
        let first = self.val(Inst::Load(first), Type::I64);
        let mut at = vec![first];
        if let Some(i) = c.element {
            at.push(self.val(Inst::Load(i), Type::I64));
        }
        let n = self.val(Inst::Load(n), Type::I64);
        Ok(Some(CallArg::Slice(c.var, at, n)))
    }
}

/// One string of a constructor of strings, as
/// [`Lowerer::walk_strings`] visits them.
#[derive(Clone, Copy)]
enum StringItem<'e> {
    /// A scalar item.
    Scalar(&'e Expr),
    /// String `k` (an I64 variable, 1-based) of a buffer of strings an
    /// array item was built into.
    Column(VarId, VarId),
}

/// A copied string (`n` characters, an I64 variable) as parts of a value.
fn copied_pieces(l: &mut Lowerer, copy: VarId, n: VarId) -> Pieces {
    let len = l.val(Inst::Load(n), Type::I64);
    Pieces {
        parts: vec![Piece::Buf(copy, len)],
        len: None,
    }
}
