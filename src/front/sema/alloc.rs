//! ALLOCATABLE arrays: ALLOCATE and DEALLOCATE statements, the ALLOCATED
//! intrinsic, and the reallocation of an allocatable array on whole-array
//! assignment (Fortran 2003).
//!
//! An allocatable local is an IR variable with
//! [`Storage::Allocatable`]: unallocated at entry, given storage and bounds
//! by [`Inst::Allocate`], released by [`Inst::Deallocate`] and at return.
//! With `stat=` the statement tests [`Inst::Allocated`] first and sets the
//! variable (0, or gfortran's codes for an array already allocated / not
//! allocated) instead of failing; `errmsg=` then receives gfortran's
//! message. A statement reading the shape of an ALLOCATABLE array (whole,
//! a section, SIZE / LBOUND / UBOUND / SHAPE) first checks that it is
//! allocated ([`Lowerer::fail_if_unallocated`]).

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::lowerer::{Lowerer, Operand, Resolved, R};
use adjit_ir::{
    BinaryOp, BlockId, Bound, CmpOp, Const, Dim, Inst, Storage, Terminator, Type, Value, Var, VarId,
};

/// The value `stat=` receives when ALLOCATE finds the array allocated
/// (gfortran's `LIBERROR_ALLOCATION`).
const STAT_ALLOCATED: i64 = 5014;
/// The value `stat=` receives when DEALLOCATE finds the array unallocated
/// (gfortran's value).
const STAT_UNALLOCATED: i64 = 1;
/// The `errmsg=` text of a failed ALLOCATE (gfortran's).
const MSG_ALLOCATED: &str = "Attempt to allocate an allocated object";
/// The `errmsg=` text of a failed DEALLOCATE (gfortran's).
const MSG_UNALLOCATED: &str = "Attempt to deallocate an unallocated object";

/// The status variables of an ALLOCATE or DEALLOCATE: `stat=` and
/// `errmsg=`.
#[derive(Clone, Copy, Default)]
pub(super) struct Status<'a> {
    stat: Option<&'a Expr>,
    errmsg: Option<&'a Expr>,
}

impl<'a> Status<'a> {
    /// The options `stat=` and `errmsg=` of a statement.
    pub(super) fn new(stat: Option<&'a Expr>, errmsg: Option<&'a Expr>) -> Self {
        Status { stat, errmsg }
    }
}

impl Lowerer<'_, '_> {
    /// The allocatable local array `name` names; a located error otherwise.
    pub(super) fn allocatable_var(&mut self, name: &Name, what: &str) -> R<VarId> {
        self.reject_dummy_allocation(name, what)?;
        match self.resolve(name)? {
            Resolved::Var(v) if self.proc.var(v).storage.is_allocatable() => Ok(v),
            Resolved::Var(_) | Resolved::Struct(_) => Err(self.err_declared(
                name.span,
                format!("{what} of `{}`, which is not ALLOCATABLE", name.text),
                &name.text,
            )),
            _ => Err(self.err(
                name.span,
                format!("{what} of `{}`, which is not a variable", name.text),
            )),
        }
    }

    /// Lowers `allocate (a(n), b(0:m, k) [, stat=s] [, source=e | mold=e])`.
    pub(super) fn allocate_stmt(
        &mut self,
        objects: &[Expr],
        status: Status,
        source: Option<&Expr>,
        mold: Option<&Expr>,
    ) -> R<()> {
        self.check_errmsg(status)?;
        if let (Some(_), Some(m)) = (source, mold) {
            return Err(self.err(m.span, "ALLOCATE with both SOURCE= and MOLD="));
        }
        if let (Some(s), true) = (source.or(mold), objects.len() > 1) {
            return Err(self.err(
                s.span,
                "unsupported Fortran: SOURCE= or MOLD= with more than one object",
            ));
        }
        for object in objects {
            let bounded;
            let object = match (&object.kind, source.or(mold)) {
                (ExprKind::Name(name), Some(from)) => {
                    // Kept for the lowerer's lifetime (see `Lowerer::lifted`).
                    bounded = std::rc::Rc::new(self.bounds_of_source(name, from)?);
                    self.lifted.push(bounded.clone());
                    &*bounded
                }
                _ => object,
            };
            let ExprKind::Apply { name, args } = &object.kind else {
                let span = object.span;
                return Err(self.err(
                    span,
                    "unsupported Fortran: ALLOCATE object without bounds (give `a(lower:upper)`)",
                ));
            };
            let var = self.allocatable_var(name, "ALLOCATE")?;
            let rank = self.proc.var(var).dims.len();
            if args.len() != rank {
                return Err(self.err(
                    object.span,
                    format!(
                        "ALLOCATE of `{}` gives {} bounds for its rank {rank}",
                        name.text,
                        args.len()
                    ),
                ));
            }
            for a in args {
                if a.keyword.is_some() {
                    return Err(self.err(object.span, "keyword in ALLOCATE bounds"));
                }
                match &a.value {
                    ArgValue::Expr(e) => self.hoist(e)?,
                    ArgValue::Range {
                        lo: Some(lo),
                        hi: Some(hi),
                        stride: None,
                    } => {
                        self.hoist(lo)?;
                        self.hoist(hi)?;
                    }
                    ArgValue::Range { .. } => {
                        return Err(self.err(
                            object.span,
                            format!(
                                "ALLOCATE bounds of `{}` must be `upper` or `lower:upper`",
                                name.text
                            ),
                        ))
                    }
                }
            }
            let guard = self.stat_guard(var, status, true)?;
            let mut bounds = Vec::new();
            for a in args {
                let (lo, hi) = match &a.value {
                    ArgValue::Expr(e) => (None, e),
                    ArgValue::Range {
                        lo: Some(lo),
                        hi: Some(hi),
                        ..
                    } => (Some(lo), hi),
                    ArgValue::Range { .. } => unreachable_bounds()?,
                };
                let lo = match lo {
                    Some(e) => self.int64(e)?,
                    None => self.int(1, Type::I64),
                };
                let hi = self.int64(hi)?;
                bounds.push((lo, hi));
            }
            self.emit(Inst::Allocate(var, bounds), None);
            self.stat_done(guard, status)?;
        }
        if let Some(src) = source {
            // Every element takes the source's value (a scalar is
            // broadcast; an array must conform).
            if let Some(target) = objects.first().and_then(|o| match &o.kind {
                ExprKind::Apply { name, .. } | ExprKind::Name(name) => Some(name.clone()),
                _ => None,
            }) {
                self.hoist(src)?;
                self.array_assign(&target, None, src)?;
            }
        }
        Ok(())
    }

    /// `allocate (a, source=e)` (or `mold=e`) without bounds: `a` takes the
    /// bounds of `e`, `a(lbound(e, 1):ubound(e, 1), ...)` for an array
    /// variable, `a(size(e, 1), ...)` for an array expression (lower
    /// bounds 1).
    fn bounds_of_source(&mut self, name: &Name, from: &Expr) -> R<Expr> {
        let rank = self.type_and_rank(from)?.1;
        if rank == 0 {
            return Err(self.err(
                name.span,
                format!("ALLOCATE of `{}` without bounds takes them from SOURCE= or MOLD=, which is not an array", name.text),
            ));
        }
        let variable = matches!(&from.kind, ExprKind::Name(n) if self.is_array_name(&n.text));
        let at = |kind| Expr {
            kind,
            span: name.span,
        };
        let inquiry = |f: &str, d: usize| {
            at(ExprKind::Apply {
                name: Name {
                    text: f.to_string(),
                    span: name.span,
                },
                args: vec![
                    Arg::positional(from.clone()),
                    Arg::positional(at(ExprKind::Int {
                        value: d as i64,
                        kind: None,
                    })),
                ],
            })
        };
        let args = (1..=rank)
            .map(|d| Arg {
                keyword: None,
                value: if variable {
                    ArgValue::Range {
                        lo: Some(inquiry("lbound", d)),
                        hi: Some(inquiry("ubound", d)),
                        stride: None,
                    }
                } else {
                    ArgValue::Expr(inquiry("size", d))
                },
            })
            .collect();
        Ok(at(ExprKind::Apply {
            name: name.clone(),
            args,
        }))
    }

    /// Before a use of the ALLOCATABLE array `v` that reads its shape (the
    /// whole array or a section in an expression or assignment, SIZE,
    /// LBOUND, UBOUND, SHAPE): a runtime error located at `at` naming the
    /// array ("`w` is not allocated") when it is not allocated, which
    /// Fortran forbids. Nothing for other arrays, so code without
    /// ALLOCATABLE arrays is unchanged.
    ///
    /// The check runs before the statement (or before the part of it that
    /// starts a block: an ELSE IF condition, a loop body), at
    /// [`Lowerer::check_at`]: the instructions the statement emitted there
    /// move to a new block that the check branches to, so no value crosses
    /// a block and the statement's own blocks (its loops) stay whole. The
    /// failing branch references the array's first element, which fails
    /// as an element reference of an unallocated array does, naming it.
    /// True when `v` is checked so (now or before, in this statement).
    pub(super) fn fail_if_unallocated(&mut self, v: VarId, at: adjit_ir::Span) -> bool {
        let var = self.proc.var(v);
        let (b, i) = self.check_at;
        // Compiler temporaries are allocated where they are used.
        let temporary = var.name.starts_with('_');
        if self.checked.contains(&v) {
            return true;
        }
        if !var.storage.is_allocatable() || temporary || b != self.cur {
            return false;
        }
        self.checked.push(v);
        let (present, missing) = (self.block(), self.block());
        let blocks = &mut self.proc.blocks;
        let tail = blocks[b.index()].insts.split_off(i);
        blocks[present.index()].insts = tail;
        blocks[present.index()].term = std::mem::take(&mut blocks[b.index()].term);
        blocks[present.index()].term_span = blocks[b.index()].term_span;
        let cond = self
            .proc
            .push_inst(b, Inst::Allocated(v), Some(Type::Bool), at);
        let block = &mut self.proc.blocks[b.index()];
        block.term = Terminator::Branch {
            cond,
            then_dest: present,
            else_dest: missing,
        };
        block.term_span = at;
        self.fail_unallocated(missing, v, at);
        self.cur = present;
        self.stmt_start = self.stmt_start.saturating_sub(i);
        self.check_at = (present, 0);
        true
    }

    /// Ends `block`, reached when the ALLOCATABLE array `v` is not
    /// allocated, with the runtime error of a reference to it (which names
    /// it), located at `at`.
    pub(super) fn fail_unallocated(&mut self, block: BlockId, v: VarId, at: adjit_ir::Span) {
        let var = self.proc.var(v);
        let (rank, ty) = (var.dims.len(), var.ty);
        let one = self
            .proc
            .push_inst(block, Inst::Const(Const::Int(1)), Some(Type::I64), at);
        if ty == Type::Char {
            // A character array (a deferred-length string's buffer) is
            // referenced by copying its first character.
            let probe = self.char_temp(1);
            let first = adjit_ir::CharRef {
                base: adjit_ir::CharBase::Var {
                    var: v,
                    index: vec![one; rank],
                },
                start: None,
                end: None,
            };
            let copy = Inst::CharAssign(adjit_ir::CharRef::whole(probe), first);
            self.proc.push_inst(block, copy, None, at);
        } else {
            self.proc
                .push_inst(block, Inst::LoadElem(v, vec![one; rank]), Some(ty), at);
        }
        // Not reached: the element reference above fails.
        let block = &mut self.proc.blocks[block.index()];
        block.term = Terminator::Fail(adjit_ir::RuntimeErrorKind::NotAllocated);
        block.term_span = at;
    }

    /// Marks where the checks of [`Lowerer::fail_if_unallocated`] go: the
    /// end of the current block, before a statement or at the start of a
    /// block.
    pub(super) fn check_here(&mut self) {
        self.check_at = (self.cur, self.proc.blocks[self.cur.index()].insts.len());
        self.checked.clear();
    }

    /// Lowers `deallocate (a, b [, stat=s] [, errmsg=m])`.
    pub(super) fn deallocate_stmt(&mut self, objects: &[Expr], status: Status) -> R<()> {
        self.check_errmsg(status)?;
        for object in objects {
            let ExprKind::Name(name) = &object.kind else {
                let span = object.span;
                return Err(self.err(span, "DEALLOCATE takes whole array names"));
            };
            let var = self.allocatable_var(name, "DEALLOCATE")?;
            let guard = self.stat_guard(var, status, false)?;
            self.emit(Inst::Deallocate(var), None);
            self.stat_done(guard, status)?;
        }
        Ok(())
    }

    /// `call move_alloc(from, to)`: `to` is released if allocated, then
    /// takes the bounds and values of `from`, which ends unallocated (the
    /// values are copied: the IR has no storage transfer).
    pub(super) fn move_alloc(&mut self, call: &Name, args: &[Arg]) -> R<()> {
        let names: Vec<&Name> = args
            .iter()
            .filter_map(|a| match &a.value {
                ArgValue::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }) => Some(n),
                _ => None,
            })
            .collect();
        let [from_name, to_name] = names[..] else {
            return Err(self.err(call.span, "MOVE_ALLOC takes two ALLOCATABLE array names"));
        };
        let from = self.allocatable_var(from_name, "MOVE_ALLOC")?;
        let to = self.allocatable_var(to_name, "MOVE_ALLOC")?;
        let (f, t) = (self.proc.var(from), self.proc.var(to));
        if f.ty != t.ty || f.dims.len() != t.dims.len() || from == to {
            return Err(self.err(
                call.span,
                "MOVE_ALLOC of arrays of different types or ranks (or of one array)",
            ));
        }
        let (rank, ty) = (f.dims.len(), f.ty);
        // `to` is released when allocated.
        self.release_if_allocated(to);
        let is = self.val(Inst::Allocated(from), Type::Bool);
        let (copy, done) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: copy,
            else_dest: done,
        });
        self.switch_to(copy);
        let mut bounds = Vec::with_capacity(rank);
        for d in 0..rank as u32 {
            let lower = self.val(Inst::DimLower(from, d), Type::I64);
            let extent = self.val(Inst::DimExtent(from, d), Type::I64);
            let last = self.val(Inst::Binary(BinaryOp::Add, lower, extent), Type::I64);
            let one = self.int(1, Type::I64);
            let upper = self.val(Inst::Binary(BinaryOp::Sub, last, one), Type::I64);
            bounds.push((lower, upper));
        }
        self.emit(Inst::Allocate(to, bounds), None);
        let extents = self.extents(&ArrayRef {
            name: from_name,
            args: None,
            call: None,
        })?;
        self.for_positions(&extents, &mut |this, pos| {
            let i = this.whole_array_index(from, pos, from_name.span)?;
            let x = this.val(Inst::LoadElem(from, i), ty);
            let j = this.whole_array_index(to, pos, to_name.span)?;
            this.emit(Inst::StoreElem(to, j, x), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(from), None);
        self.jump(done);
        self.switch_to(done);
        Ok(())
    }

    /// `errmsg=`, when given, must name a CHARACTER variable (checked
    /// also without `stat=`, where it is never assigned).
    pub(super) fn check_errmsg(&mut self, status: Status) -> R<()> {
        let Some(e) = status.errmsg else {
            return Ok(());
        };
        let variable = matches!(e.kind, ExprKind::Name(_) | ExprKind::Apply { .. });
        match self.expr(e)? {
            Operand::Char(_) if variable => Ok(()),
            _ => Err(self.err(e.span, "ERRMSG= must name a CHARACTER variable")),
        }
    }

    /// With `stat=`: branches on the allocation status of `var`, setting
    /// the variable to [`STAT_ALLOCATED`] or [`STAT_UNALLOCATED`] (and
    /// `errmsg=` to the message) on the path where the statement cannot run
    /// (`allocating` an allocated array, deallocating an unallocated one)
    /// and continuing on the other. Returns the block where both paths
    /// meet.
    fn stat_guard(
        &mut self,
        var: VarId,
        status: Status,
        allocating: bool,
    ) -> R<Option<adjit_ir::BlockId>> {
        if status.stat.is_none() {
            return Ok(None);
        }
        let is = self.val(Inst::Allocated(var), Type::Bool);
        self.stat_guard_on(is, status, allocating)
    }

    /// [`Self::stat_guard`] on the allocation status `is` (a Bool value:
    /// allocated) of any object, arrays and ALLOCATABLE scalars alike.
    pub(super) fn stat_guard_on(
        &mut self,
        is: Value,
        status: Status,
        allocating: bool,
    ) -> R<Option<adjit_ir::BlockId>> {
        let Some(stat) = status.stat else {
            return Ok(None);
        };
        let (run, failed, end) = (self.block(), self.block(), self.block());
        let (then_dest, else_dest) = if allocating {
            (failed, run)
        } else {
            (run, failed)
        };
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest,
            else_dest,
        });
        self.switch_to(failed);
        let (code, message) = if allocating {
            (STAT_ALLOCATED, MSG_ALLOCATED)
        } else {
            (STAT_UNALLOCATED, MSG_UNALLOCATED)
        };
        self.set_stat(stat, code)?;
        if let Some(errmsg) = status.errmsg {
            let text = Expr {
                span: errmsg.span,
                kind: ExprKind::Str(message.to_string()),
            };
            self.assign(errmsg, &text)?;
        }
        self.jump(end);
        self.switch_to(run);
        Ok(Some(end))
    }

    /// Ends the statement guarded by [`Self::stat_guard`]: `stat = 0`.
    pub(super) fn stat_done(&mut self, end: Option<adjit_ir::BlockId>, status: Status) -> R<()> {
        if let (Some(end), Some(stat)) = (end, status.stat) {
            self.set_stat(stat, 0)?;
            self.jump(end);
            self.switch_to(end);
        }
        Ok(())
    }

    fn set_stat(&mut self, stat: &Expr, value: i64) -> R<()> {
        let literal = Expr {
            span: stat.span,
            kind: ExprKind::Int { value, kind: None },
        };
        self.assign(stat, &literal)
    }

    /// Deallocates `var` if it is allocated and continues in a fresh block
    /// where it is not.
    pub(super) fn release_if_allocated(&mut self, var: VarId) {
        let is = self.val(Inst::Allocated(var), Type::Bool);
        let (free, done) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: free,
            else_dest: done,
        });
        self.switch_to(free);
        self.emit(Inst::Deallocate(var), None);
        self.jump(done);
        self.switch_to(done);
    }

    /// Fortran 2003 assignment to a whole allocatable array `var` from a
    /// value whose extents are in the I64 temporaries `extents`: when `var`
    /// is unallocated or its shape differs, it is (re)allocated with lower
    /// bounds 1 and those extents before the assignment. Returns with the
    /// builder in a block where `var` has the value's shape.
    pub(super) fn realloc_for_assignment(&mut self, var: VarId, extents: &[VarId]) {
        self.realloc_with_bounds_of(var, extents, None);
    }

    /// [`Lowerer::realloc_for_assignment`] from a whole array variable
    /// `source` (when given): a (re)allocation takes its lower bounds, as
    /// Fortran's does (`b = a` with `a(0:2)` gives `b` the bounds 0:2).
    pub(super) fn realloc_with_bounds_of(
        &mut self,
        var: VarId,
        extents: &[VarId],
        source: Option<VarId>,
    ) {
        let is = self.val(Inst::Allocated(var), Type::Bool);
        let same = self.same_extents(is, extents, |this, d| {
            this.val(Inst::DimExtent(var, d as u32), Type::I64)
        });
        self.unless(same, |this| {
            this.release_if_allocated(var);
            let bounds = extents
                .iter()
                .enumerate()
                .map(|(d, &t)| {
                    let extent = this.val(Inst::Load(t), Type::I64);
                    match source {
                        Some(s) => {
                            let lo = this.val(Inst::DimLower(s, d as u32), Type::I64);
                            let one = this.konst(Const::Int(1), Type::I64);
                            let last =
                                this.val(Inst::Binary(BinaryOp::Sub, extent, one), Type::I64);
                            (
                                lo,
                                this.val(Inst::Binary(BinaryOp::Add, lo, last), Type::I64),
                            )
                        }
                        None => (this.konst(Const::Int(1), Type::I64), extent),
                    }
                })
                .collect();
            this.emit(Inst::Allocate(var, bounds), None);
        });
    }

    /// Whether `start` holds and every extent `have(this, d)` equals the
    /// one held in `want[d]`: Fortran's test of whether an allocated array
    /// keeps its storage on assignment.
    pub(super) fn same_extents(
        &mut self,
        start: Value,
        want: &[VarId],
        mut have: impl FnMut(&mut Self, usize) -> Value,
    ) -> Value {
        let mut same = start;
        for (d, &t) in want.iter().enumerate() {
            let have = have(self, d);
            let want = self.val(Inst::Load(t), Type::I64);
            let eq = self.val(Inst::Cmp(CmpOp::Eq, have, want), Type::Bool);
            same = self.val(Inst::Binary(BinaryOp::And, same, eq), Type::Bool);
        }
        same
    }

    /// Runs `body` in a block of its own when `cond` is false; both paths
    /// meet in a fresh block that becomes current. Returns what `body`
    /// returns.
    pub(super) fn unless<T>(&mut self, cond: Value, body: impl FnOnce(&mut Self) -> T) -> T {
        let (otherwise, done) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond,
            then_dest: done,
            else_dest: otherwise,
        });
        self.switch_to(otherwise);
        let result = body(self);
        self.jump(done);
        self.switch_to(done);
        result
    }
}

impl Lowerer<'_, '_> {
    /// `a = [...]` for a whole ALLOCATABLE rank-1 array `v` and a
    /// constructor with implied DO loops, nested constructors or array
    /// items (which may read `v`, as in `a = [a, x]`): the elements are
    /// counted, streamed into a fresh allocatable temporary, and copied into
    /// `v`, (re)allocated to their number.
    pub(super) fn streamed_constructor_realloc(
        &mut self,
        v: VarId,
        items: &[Expr],
        span: adjit_ir::Span,
    ) -> R<()> {
        let ty = self.proc.var(v).ty;
        let (tmp, count) = self.constructor_into_temp(items, ty, span)?;
        self.realloc_from_temp(v, tmp, &[count], span)
    }

    /// The elements of a constructor streamed into a fresh ALLOCATABLE
    /// temporary of element type `ty`, with the temporary holding their
    /// number.
    fn constructor_into_temp(
        &mut self,
        items: &[Expr],
        ty: Type,
        span: adjit_ir::Span,
    ) -> R<(VarId, VarId)> {
        let count = self.temp("n", Type::I64);
        let zero = self.int(0, Type::I64);
        self.emit(Inst::Store(count, zero), None);
        self.count_items(items, ty, count)?;
        let tmp = self.allocated_temp(ty, &[count]);
        let counter = self.temp("c", Type::I64);
        let zero = self.int(0, Type::I64);
        self.emit(Inst::Store(counter, zero), None);
        self.stream_items(items, ty, counter, &mut |this, x, k| {
            let idx = this.whole_array_index(tmp, &[k], span)?;
            this.emit(Inst::StoreElem(tmp, idx, x), None);
            Ok(())
        })?;
        Ok((tmp, count))
    }

    /// `a = e` for a whole ALLOCATABLE array `v` and an array expression
    /// `value` reading `v` through a section (`a = a(2:n)`) or passing it
    /// whole to a function (`a = a + f(a)`): the value is
    /// evaluated into a fresh allocatable temporary, then `v` is
    /// (re)allocated to its shape and takes it.
    pub(super) fn overlapping_realloc(&mut self, v: VarId, name: &Name, value: &Expr) -> R<()> {
        let ty = self.proc.var(v).ty;
        let rank = self.proc.var(v).dims.len();
        let (tmp, extents) = self.value_into_temp(value, ty, rank, &name.text)?;
        self.realloc_from_temp(v, tmp, &extents, value.span)
    }

    /// The array expression `value` evaluated into a fresh ALLOCATABLE
    /// temporary of element type `ty` (lower bounds 1), with the
    /// temporaries holding its extents; its rank must be `rank` (it is
    /// assigned to `target`).
    pub(super) fn value_into_temp(
        &mut self,
        value: &Expr,
        ty: Type,
        rank: usize,
        target: &str,
    ) -> R<(VarId, Vec<VarId>)> {
        if let (ExprKind::ArrayConstructor(items), 1) = (&value.kind, rank) {
            let (tmp, count) = self.constructor_into_temp(items, ty, value.span)?;
            return Ok((tmp, vec![count]));
        }
        let Some(src) = self.array_source(value) else {
            return Err(self.err(value.span, "array value expected"));
        };
        let extents = self.extents(&src)?;
        if extents.len() != rank {
            return Err(self.err(
                value.span,
                format!("array of rank {} assigned to `{target}`", extents.len()),
            ));
        }
        let tmp = self.allocated_temp(ty, &extents);
        self.for_positions(&extents, &mut |this, pos| {
            let (x, pos) = this.at_element(&[(value, pos.to_vec())], |this, ps| {
                Ok((this.num_as(value, ty)?, ps[0].clone()))
            })?;
            let idx = this.whole_array_index(tmp, &pos, value.span)?;
            this.emit(Inst::StoreElem(tmp, idx, x), None);
            Ok(())
        })?;
        Ok((tmp, extents))
    }

    /// A fresh ALLOCATABLE temporary of element type `ty`, allocated with
    /// lower bounds 1 and the extents held in the I64 temporaries `extents`.
    pub(super) fn allocated_temp(&mut self, ty: Type, extents: &[VarId]) -> VarId {
        let tmp = self.unallocated_temp(ty, extents.len());
        self.allocate_from_one(tmp, extents);
        tmp
    }

    /// A fresh ALLOCATABLE temporary of element type `ty` and rank `rank`,
    /// not allocated.
    pub(super) fn unallocated_temp(&mut self, ty: Type, rank: usize) -> VarId {
        self.ntemps += 1;
        let unallocated = Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(0)),
        };
        self.proc.add_var(Var {
            name: format!("_at{}", self.ntemps),
            ty,
            dims: vec![unallocated; rank],
            char_len: None,
            storage: Storage::Allocatable,
        })
    }

    /// Allocates `tmp` with lower bounds 1 and the extents held in the I64
    /// temporaries `extents`.
    pub(super) fn allocate_from_one(&mut self, tmp: VarId, extents: &[VarId]) {
        let bounds = extents
            .iter()
            .map(|&e| {
                let one = self.int(1, Type::I64);
                (one, self.val(Inst::Load(e), Type::I64))
            })
            .collect();
        self.emit(Inst::Allocate(tmp, bounds), None);
    }

    /// Ends an assignment through the temporary `tmp` of extents `extents`:
    /// `v` is (re)allocated to that shape, takes the values, and `tmp` is
    /// released.
    fn realloc_from_temp(
        &mut self,
        v: VarId,
        tmp: VarId,
        extents: &[VarId],
        span: adjit_ir::Span,
    ) -> R<()> {
        let ty = self.proc.var(v).ty;
        self.realloc_for_assignment(v, extents);
        self.for_positions(extents, &mut |this, pos| {
            let i = this.whole_array_index(tmp, pos, span)?;
            let x = this.val(Inst::LoadElem(tmp, i), ty);
            let j = this.whole_array_index(v, pos, span)?;
            this.emit(Inst::StoreElem(v, j, x), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(tmp), None);
        Ok(())
    }
}

/// Bounds were checked before the guard; this path is never taken.
fn unreachable_bounds<T>() -> R<T> {
    Err(super::lowerer::Reported)
}
