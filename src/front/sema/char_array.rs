//! Assignment to whole CHARACTER arrays and sections of them (of constant
//! length, or `character(len=*)` dummies): `k = other`, `k(2:3) = o(1:2)`,
//! `k = 'none'` (a scalar broadcast), `k = adjustl(k)`, array
//! constructors (`k = ['sq  ', 'abc ']`, `k = [character(len=4) :: 'a',
//! 'bcdef']`), also under a WHERE mask. Every element is copied with
//! [`Inst::CharAssign`], which blank-pads or cuts to the target's length.
//!
//! Arrays of deferred-length strings (held as buffers of characters) are
//! [`super::deferred_chars`]'s; the loops over positions are
//! [`super::array`]'s.

use super::super::ast::{Arg, Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::lowerer::{Lowerer, Operand, R};
use adjit_ir::{BinaryOp, CharBase, CharRef, Const, Inst, Type, Value, VarId};

impl Lowerer<'_, '_> {
    /// `target = value` for the CHARACTER array `v` (whole, or the
    /// section `args`), element by element where every mask holds.
    pub(super) fn char_array_assign(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
        mask: &[(&Expr, bool)],
    ) -> R<()> {
        let unsupported = |what: &str| {
            format!(
                "unsupported Fortran: {what} assigned to the CHARACTER array `{}`",
                name.text
            )
        };
        if self.deferred_string_rank(&name.text).is_some() {
            return Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: assigning under a WHERE mask to `{}`, an array of strings of run-time length (ALLOCATABLE, deferred-length or an assumed-shape `character(len=*)` dummy): assign its elements in a DO loop",
                    name.text
                ),
            ));
        }
        if mask.is_empty() && self.reads_strings_or_loops(value) {
            return self.char_array_from_strings(v, name, args, value);
        }
        let constructor = match &value.without_parens().kind {
            ExprKind::ArrayConstructor(items) => Some((items, None)),
            ExprKind::CharArrayConstructor { len, items } => Some((items, Some(&**len))),
            _ => None,
        };
        if let Some((items, len)) = constructor {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    unsupported("an array constructor under a WHERE mask"),
                ));
            }
            return self.char_constructor_assign(v, name, args, items, len, value);
        }
        if self.array_function(value).is_some() || self.transform_reads(value, &name.text) {
            return Err(self.err(
                value.span,
                unsupported("an array-valued function or transformational intrinsic"),
            ));
        }
        if self.reads_out_of_place(value, name, args) {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    unsupported(&format!(
                        "a value reading `{}` at other elements, under a WHERE mask,",
                        name.text
                    )),
                ));
            }
            return self.char_assign_through_temp(v, name, args, value);
        }
        for (m, _) in mask {
            if self.reads_out_of_place(m, name, args) {
                return Err(self.err(
                    m.span,
                    format!("unsupported Fortran: a WHERE mask reading `{}` at other elements than the one assigned", name.text),
                ));
            }
        }
        let extents = self.extents(&ArrayRef {
            name,
            args,
            call: None,
        })?;
        self.for_positions(&extents, &mut |this, pos| {
            let (skip, pos) = this.element_mask(mask, pos)?;
            this.at_element(&[(value, pos)], |this, ps| {
                let to = this.char_element(v, name, args, &ps[0])?;
                this.char_assign(to, value)
            })?;
            if let Some(skip) = skip {
                this.jump(skip);
                this.switch_to(skip);
            }
            Ok(())
        })
    }

    /// True when `value` reads an array of strings held as a buffer
    /// (`adjustl(b)` of an assumed-shape `character(len=*) :: b(:)`) or
    /// is an array constructor with implied DO or array items: values
    /// [`super::string_arrays`] builds.
    fn reads_strings_or_loops(&self, value: &Expr) -> bool {
        let value = value.without_parens();
        if let ExprKind::ArrayConstructor(items) | ExprKind::CharArrayConstructor { items, .. } =
            &value.kind
        {
            if items.iter().any(|i| {
                matches!(
                    i.kind,
                    ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
                ) || self.rank_of(i) != 0
                    || self.is_adjusted_array(i)
            }) {
                return true;
            }
        }
        let mut names = std::collections::BTreeSet::new();
        super::lowerer::expr_names(value, &mut names);
        names.iter().any(|n| self.is_deferred_string_array(n))
    }

    /// `k = value` for the rank-1 CHARACTER array `v` of constant length
    /// (whole, or the section `args`), the value built as strings first
    /// ([`Self::built_strings`]), then blank-padded or cut into `k`.
    fn char_array_from_strings(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
    ) -> R<()> {
        let len = self
            .proc
            .var(v)
            .char_len
            .as_ref()
            .and_then(|l| l.as_const());
        let extents = self.extents(&ArrayRef {
            name,
            args,
            call: None,
        })?;
        let (Some(len), [count]) = (len, &extents[..]) else {
            return Err(self.err(
                value.span,
                format!(
                    "unsupported Fortran: this value assigned to `{}` (an array of strings or a constructor with implied DO or array items goes to a rank-1 CHARACTER array of constant length)",
                    name.text
                ),
            ));
        };
        let Some(built) = self.built_strings(value)? else {
            return Err(self.err(
                value.span,
                format!(
                    "unsupported Fortran: this array value assigned to the CHARACTER array `{}` (an array of strings, a section of one, ADJUSTL / ADJUSTR of one or an array constructor is supported)",
                    name.text
                ),
            ));
        };
        self.put_strings_into(built, (len, *count), value.span, &mut |this, k| {
            this.char_element(v, name, args, &[k])
        })
    }

    /// The element of `v` (whole, or the section `args`) at the 0-based
    /// positions `pos`, bounds checked.
    fn char_element(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        pos: &[Value],
    ) -> R<CharRef> {
        let index = match args {
            None => self.whole_array_index(v, pos, name.span)?,
            Some(a) => self.section_index(v, a, pos, name)?,
        };
        Ok(CharRef {
            base: CharBase::Var { var: v, index },
            start: None,
            end: None,
        })
    }

    /// `k = value` where `value` reads `k` at other elements than the one
    /// assigned (`k(2:3) = k(1:2)`): the value goes to a temporary of the
    /// target's length first. The target's size and length must be fixed
    /// at entry.
    fn char_assign_through_temp(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
    ) -> R<()> {
        let len = self.proc.var(v).char_len.clone();
        if len.as_ref().and_then(|l| l.as_const()).is_none() {
            return Err(self.err(
                value.span,
                format!(
                    "unsupported Fortran: an assignment to `{}`, a CHARACTER array of run-time length, reading it at other elements than the one assigned",
                    name.text
                ),
            ));
        }
        let extents = self.extents(&ArrayRef {
            name,
            args,
            call: None,
        })?;
        let temp = self.storage_like(v, Type::Char, value, &name.text)?;
        self.proc.vars[temp.index()].char_len = len;
        self.for_positions(&extents, &mut |this, pos| {
            this.at_element(&[(value, pos.to_vec())], |this, ps| {
                let lin = this.linear(&extents, &ps[0]);
                let to = CharRef {
                    base: CharBase::Var {
                        var: temp,
                        index: vec![lin],
                    },
                    start: None,
                    end: None,
                };
                this.char_assign(to, value)
            })
        })?;
        self.for_positions(&extents, &mut |this, pos| {
            let lin = this.linear(&extents, pos);
            let from = CharRef {
                base: CharBase::Var {
                    var: temp,
                    index: vec![lin],
                },
                start: None,
                end: None,
            };
            let to = this.char_element(v, name, args, pos)?;
            this.emit(Inst::CharAssign(to, from), None);
            Ok(())
        })
    }

    /// `k = [a, b, ...]` or `k = [character(len=n) :: a, b, ...]` for a
    /// rank-1 CHARACTER array or section: the items are scalars, of equal
    /// constant lengths in an untyped constructor (as gfortran requires),
    /// cut to `n` in a typed one. Every item is evaluated before any is
    /// stored (through temporaries when the items read the target).
    fn char_constructor_assign(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        items: &[Expr],
        len: Option<&Expr>,
        value: &Expr,
    ) -> R<()> {
        for item in items {
            if matches!(
                item.kind,
                ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
            ) || self.rank_of(item) != 0
            {
                return Err(self.err(
                    item.span,
                    format!("unsupported Fortran: an array constructor item that is not a scalar, assigned to the CHARACTER array `{}`", name.text),
                ));
            }
        }
        self.check_constructor_rank(v, name, args, value.span)?;
        if args.is_none() {
            self.check_constructor_length(v, items.len(), name, value.span)?;
        }
        let width = match len {
            None => None,
            Some(e) => {
                let n = self.int64(e)?;
                match self.const_of(n) {
                    Some(Const::Int(n)) => Some(n.max(0)),
                    _ => {
                        return Err(self.err(
                            e.span,
                            "unsupported Fortran: a `[character(len=n) :: ...]` constructor of run-time length assigned to a CHARACTER array",
                        ))
                    }
                }
            }
        };
        let mut names = std::collections::BTreeSet::new();
        super::lowerer::expr_names(value, &mut names);
        let reads_target = names.contains(&name.text);
        let mut froms = Vec::new();
        let mut first_len: Option<(i64, &Expr)> = None;
        for item in items {
            let Operand::Char(from) = self.expr(item)? else {
                return Err(self.err(
                    item.span,
                    format!("a non-character item in an array constructor assigned to the CHARACTER array `{}`", name.text),
                ));
            };
            let item_len = self.char_len_of(&from);
            let from = match (width, item_len) {
                (None, Some(n)) => {
                    match first_len {
                        Some((m, _)) if m != n => {
                            return Err(self.err(
                                item.span,
                                format!("different CHARACTER lengths ({m}/{n}) in an array constructor (give its type: `[character(len={m}) :: ...]`)"),
                            ))
                        }
                        None => first_len = Some((n, item)),
                        _ => {}
                    }
                    from
                }
                (None, None) => from,
                (Some(w), Some(n)) if n <= w => from,
                (Some(w), Some(_)) => self.sub_ref(&from, 1, w),
                (Some(w), None) => {
                    let n = self.char_len_value(&from);
                    let w = self.int(w, Type::I64);
                    let end = self.val(Inst::Binary(BinaryOp::Min, n, w), Type::I64);
                    let one = self.int(1, Type::I64);
                    self.shifted_ref(&from, one, end)
                }
            };
            let from = match (reads_target, self.char_len_of(&from)) {
                (false, _) => from,
                (true, Some(n)) => {
                    let t = self.char_temp(n);
                    let copy = CharRef {
                        base: CharBase::Var {
                            var: t,
                            index: Vec::new(),
                        },
                        start: None,
                        end: None,
                    };
                    self.emit(Inst::CharAssign(copy.clone(), from), None);
                    copy
                }
                (true, None) => {
                    return Err(self.err(
                        item.span,
                        format!("unsupported Fortran: an array constructor item of run-time length reading its target `{}`", name.text),
                    ))
                }
            };
            froms.push(from);
        }
        for (k, from) in froms.into_iter().enumerate() {
            let pos = self.int(k as i64, Type::I64);
            let to = self.char_element(v, name, args, &[pos])?;
            self.emit(Inst::CharAssign(to, from), None);
        }
        Ok(())
    }
}
