//! ALLOCATABLE components of arrays of structures: `type(block) :: b(nb)`
//! whose type has `real(8), allocatable :: u(:)`, each element with an
//! allocation of its own (`allocate(b(k)%u(m(k)))`).
//!
//! The component `b%u` is stored as two leaves of the structure (declared
//! by `scope::components`):
//!
//! - `b%u.data`, an ALLOCATABLE array of the component's rank then the
//!   array's (`b%u.data(:, :)`), each element's allocation in its column,
//!   at positions 1, 2, ... whatever its bounds. Its extents are the
//!   largest allocation made so far; it grows (keeping every element's
//!   values) when an element is allocated larger.
//! - `b%u.bounds`, an integer array `(0:2r, nb)`: for each element its
//!   allocation status (0 or 1), then its lower bounds, then its upper
//!   bounds (a dimension of zero extent has bounds 1 and 0).
//!
//! After `structure` has completed the subscripts (`b(k)%u(i)` is
//! `b%u(i, k)`), references are rewritten to the storage:
//! `b%u(i, k)` is `b%u.data(i - lbound + 1, k)`, the whole element
//! `b%u(:, k)` the section `b%u.data(1:extent, k)`; ALLOCATED, SIZE,
//! LBOUND, UBOUND and SHAPE read the bounds. ALLOCATE, DEALLOCATE and the
//! assignment of an array to a whole element (allocating it to the
//! value's shape as Fortran 2003 does) are lowered here. Everything else
//! (element assignment `b(j) = b(k)`, whole-array assignment, passing the
//! structure, derivatives) is that of the two leaves: the derivative
//! storage of `b%u.data` follows its allocation.

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::{bounds_name, data_name, Sym};
use adjit_ir::{BinaryOp, CmpOp, Inst, RuntimeErrorKind, Span, Terminator, Type, Value, VarId};

/// True when `name` is the storage leaf of a component of an array of
/// structures declared in `scope` (passed by descriptor when a dummy).
pub(super) fn is_storage(scope: &super::scope::Scope, name: &str) -> bool {
    name.strip_suffix(".data")
        .is_some_and(|c| scope.var(&bounds_name(c)).is_some())
}

/// A component of an array of structures stored as described in the
/// module documentation.
pub(super) struct Ragged {
    /// The component as written after completion (`b%u`).
    pub(super) name: String,
    /// The rank of the component.
    pub(super) rank: usize,
    /// The rank of the array of structures.
    pub(super) elems: usize,
}

/// An expression node.
fn node(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// An integer literal.
fn int(value: i64, span: Span) -> Expr {
    node(ExprKind::Int { value, kind: None }, span)
}

/// `a op b`.
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let span = a.span;
    node(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

/// True for a whole-range subscript `:`.
fn is_colon(a: &Arg) -> bool {
    matches!(
        a.value,
        ArgValue::Range {
            lo: None,
            hi: None,
            stride: None
        }
    )
}

impl Lowerer<'_, '_> {
    /// The component `text` names, when it is one of an array of
    /// structures with its own allocation per element.
    pub(super) fn ragged(&self, text: &str) -> Option<Ragged> {
        if !text.contains('%') {
            return None;
        }
        let scopes = [
            Some(&self.u().scope),
            self.host_scope(),
            self.module_scope(),
        ];
        let dims = |s: &super::scope::Scope, n: &str| match s.syms.get(n) {
            Some(Sym::Var(v)) => v.dims.as_ref().map(Vec::len),
            _ => None,
        };
        scopes.into_iter().flatten().find_map(|s| {
            let all = dims(s, &data_name(text))?;
            let elems = dims(s, &bounds_name(text))? - 1;
            Some(Ragged {
                name: text.to_string(),
                rank: all - elems,
                elems,
            })
        })
    }

    /// The rank of the component `text` when it is one of an array of
    /// structures with its own allocation per element.
    pub(super) fn ragged_rank(&self, text: &str) -> Option<usize> {
        self.ragged(text).map(|r| r.rank)
    }

    /// True when `e` references such a component.
    fn mentions_ragged(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n) | ExprKind::Apply { name: n, .. } if self.ragged(&n.text).is_some())
            || e.kind
                .children()
                .into_iter()
                .any(|c| self.mentions_ragged(c))
    }

    /// The statement `s` (its subscripts completed) with its references to
    /// components of arrays of structures rewritten to their storage, once
    /// ALLOCATE, DEALLOCATE and reallocating assignments of such
    /// components have been lowered; `None` when it references none.
    pub(super) fn ragged_stmt(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        if !s
            .kind
            .own_exprs()
            .into_iter()
            .any(|e| self.mentions_ragged(e))
        {
            return Ok(None);
        }
        let mut out = s.clone();
        match &mut out.kind {
            StmtKind::Allocate {
                objects,
                stat,
                errmsg,
                source,
                mold,
                char_len,
            } => {
                let extra = stat.iter().chain(errmsg.iter()).chain(source.iter());
                if let Some(x) = extra.chain(mold.iter()).chain(char_len.iter()).next() {
                    return Err(self.err(
                        x.span,
                        "unsupported Fortran: STAT=, ERRMSG=, SOURCE= or MOLD= in the ALLOCATE of a component of an element of an array of structures",
                    ));
                }
                let mut rest = Vec::new();
                for o in std::mem::take(objects) {
                    match self.ragged_object(&o) {
                        Some((rg, args)) => self.ragged_allocate(&rg, &args, o.span)?,
                        None => rest.push(o),
                    }
                }
                *objects = rest;
                if objects.is_empty() {
                    out.kind = StmtKind::Continue;
                }
            }
            StmtKind::Deallocate {
                objects,
                stat,
                errmsg,
            } => {
                if let Some(x) = stat.iter().chain(errmsg.iter()).next() {
                    return Err(self.err(
                        x.span,
                        "unsupported Fortran: STAT= or ERRMSG= in the DEALLOCATE of a component of an element of an array of structures",
                    ));
                }
                let mut rest = Vec::new();
                for o in std::mem::take(objects) {
                    match self.ragged_object(&o) {
                        Some((rg, args)) => self.ragged_deallocate(&rg, &args, o.span)?,
                        None => rest.push(o),
                    }
                }
                *objects = rest;
                if objects.is_empty() {
                    out.kind = StmtKind::Continue;
                }
            }
            StmtKind::Assign { target, value } => {
                if let Some((rg, args)) = self.ragged_object(target) {
                    let whole = args[..rg.rank].iter().all(is_colon);
                    self.ragged_expr(value)?;
                    if whole && self.rank_of(value) > 0 {
                        self.ragged_assign(&rg, &args, value, target.span)?;
                        out.kind = StmtKind::Continue;
                        return Ok(Some(out));
                    }
                }
            }
            _ => {}
        }
        for e in out.kind.own_exprs_mut() {
            self.ragged_expr(e)?;
        }
        Ok(Some(out))
    }

    /// The component and the subscripts of an ALLOCATE or DEALLOCATE
    /// object or assignment target naming a component of an array of
    /// structures.
    fn ragged_object(&self, o: &Expr) -> Option<(Ragged, Vec<Arg>)> {
        match &o.kind {
            ExprKind::Apply { name, args } => Some((self.ragged(&name.text)?, args.clone())),
            ExprKind::Name(name) => Some((self.ragged(&name.text)?, Vec::new())),
            _ => None,
        }
    }

    /// The element subscripts of a reference to the component `rg` with
    /// subscripts `args` (the component's, then the element's), each a
    /// scalar; a located error otherwise.
    fn ragged_element(&mut self, rg: &Ragged, args: &[Arg], span: Span) -> R<Vec<Expr>> {
        let (part, _) = rg.name.split_once('%').unwrap_or((&rg.name, ""));
        let element = if args.len() == rg.rank + rg.elems {
            args[rg.rank..]
                .iter()
                .map(|a| match &a.value {
                    ArgValue::Expr(e) => Some(e.clone()),
                    ArgValue::Range { .. } => None,
                })
                .collect::<Option<Vec<_>>>()
        } else {
            None
        };
        element.ok_or_else(|| {
            self.err(
                span,
                format!(
                    "`{}` is an ALLOCATABLE component of the array of structures `{part}`: reference it through one element (`{part}(k)%...`)",
                    rg.name
                ),
            )
        })
    }

    /// `name.bounds(j, element)`.
    fn bound_ref(rg: &Ragged, j: i64, element: &[Expr], span: Span) -> Expr {
        let mut args = vec![int(j, span)];
        args.extend(element.iter().cloned());
        Expr::apply_positional(&bounds_name(&rg.name), args, span)
    }

    /// The storage position `pos` of a subscript when `valid` holds, else
    /// position 0, outside the storage (whose positions start at 1): the
    /// reference is then an out-of-bounds error, reported on the component
    /// (see [`adjit_ir::RuntimeError`]'s display of a storage leaf).
    fn checked(pos: Expr, valid: Expr, span: Span) -> Expr {
        Expr::apply_positional("merge", vec![pos, int(0, span), valid], span)
    }

    /// Rewrites the references to components of arrays of structures in
    /// `e` (see the module documentation).
    fn ragged_expr(&mut self, e: &mut Expr) -> R<()> {
        if let Some(inquiry) = self.ragged_inquiry(e)? {
            *e = inquiry;
            return Ok(());
        }
        let span = e.span;
        let found = match &e.kind {
            ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => self.ragged(&n.text),
            _ => None,
        };
        for c in e.kind.children_mut() {
            self.ragged_expr(c)?;
        }
        let Some(rg) = found else {
            return Ok(());
        };
        let args = match &e.kind {
            ExprKind::Apply { args, .. } => args.clone(),
            _ => Vec::new(),
        };
        let element = self.ragged_element(&rg, &args, span)?;
        let mut out = Vec::new();
        for (j, a) in args[..rg.rank].iter().enumerate() {
            let j = j as i64 + 1;
            let lo = Self::bound_ref(&rg, j, &element, span);
            let hi = Self::bound_ref(&rg, j + rg.rank as i64, &element, span);
            // A subscript of the element as a position in its storage.
            let shift = |x: Expr| bin(BinOp::Add, bin(BinOp::Sub, x, lo.clone()), int(1, span));
            // Whether `x` lies within the element's own bounds.
            let inside = |x: &Expr| {
                bin(
                    BinOp::And,
                    bin(BinOp::Le, lo.clone(), x.clone()),
                    bin(BinOp::Le, x.clone(), hi.clone()),
                )
            };
            out.push(match &a.value {
                ArgValue::Expr(x) => {
                    Arg::positional(Self::checked(shift(x.clone()), inside(x), span))
                }
                ArgValue::Range {
                    lo: l,
                    hi: h,
                    stride,
                } => {
                    let (l, h) = (
                        l.clone().unwrap_or_else(|| lo.clone()),
                        h.clone().unwrap_or_else(|| hi.clone()),
                    );
                    // A section without stride must lie within the
                    // element's bounds unless it is empty (with a stride
                    // only the storage bounds are checked).
                    let valid = |x: &Expr| {
                        if stride.is_some() {
                            return None;
                        }
                        Some(bin(
                            BinOp::Or,
                            inside(x),
                            bin(BinOp::Gt, l.clone(), h.clone()),
                        ))
                    };
                    let end = |x: &Expr| match valid(x) {
                        Some(v) => Self::checked(shift(x.clone()), v, span),
                        None => shift(x.clone()),
                    };
                    Arg {
                        keyword: None,
                        value: ArgValue::Range {
                            lo: Some(end(&l)),
                            hi: Some(end(&h)),
                            stride: stride.clone(),
                        },
                    }
                }
            });
        }
        out.extend(args[rg.rank..].iter().cloned());
        e.kind = ExprKind::Apply {
            name: Name {
                text: data_name(&rg.name),
                span,
            },
            args: out,
        };
        Ok(())
    }

    /// ALLOCATED, SIZE, LBOUND, UBOUND or SHAPE of a whole element's
    /// component, read from its bounds; `None` for another expression.
    fn ragged_inquiry(&mut self, e: &Expr) -> R<Option<Expr>> {
        let ExprKind::Apply { name, args } = &e.kind else {
            return Ok(None);
        };
        let f = name.text.as_str();
        if !matches!(f, "allocated" | "size" | "lbound" | "ubound" | "shape") {
            return Ok(None);
        }
        let Some((rg, sub)) = args.first().and_then(|a| match &a.value {
            ArgValue::Expr(x) if a.keyword.is_none() => self.ragged_object(x),
            _ => None,
        }) else {
            return Ok(None);
        };
        let span = e.span;
        let mut element = self.ragged_element(&rg, &sub, span)?;
        if !sub[..rg.rank].iter().all(is_colon) {
            return Ok(None);
        }
        for x in &mut element {
            self.ragged_expr(x)?;
        }
        let dim = match &args[1..] {
            [] => None,
            [Arg {
                keyword,
                value: ArgValue::Expr(d),
            }] if f != "allocated"
                && f != "shape"
                && keyword.as_ref().is_none_or(|k| k.text == "dim") =>
            {
                let mut d = d.clone();
                self.ragged_expr(&mut d)?;
                Some(d)
            }
            _ => {
                return Err(self.err(
                    span,
                    format!(
                        "unsupported Fortran: these arguments of `{f}` of the component `{}` of an element of an array of structures",
                        rg.name
                    ),
                ))
            }
        };
        let r = rg.rank as i64;
        let lower = |j: Expr| {
            let mut a = vec![j];
            a.extend(element.iter().cloned());
            Expr::apply_positional(&bounds_name(&rg.name), a, span)
        };
        let upper = |j: Expr| lower(bin(BinOp::Add, j, int(r, span)));
        let extent = |j: Expr| {
            bin(
                BinOp::Add,
                bin(BinOp::Sub, upper(j.clone()), lower(j)),
                int(1, span),
            )
        };
        let each = |g: &dyn Fn(Expr) -> Expr| {
            node(
                ExprKind::ArrayConstructor((1..=r).map(|j| g(int(j, span))).collect()),
                span,
            )
        };
        Ok(Some(match (f, dim) {
            ("allocated", _) => bin(BinOp::Ne, lower(int(0, span)), int(0, span)),
            ("lbound", Some(d)) => lower(d),
            ("ubound", Some(d)) => upper(d),
            ("size", Some(d)) => extent(d),
            ("lbound", None) => each(&lower),
            ("ubound", None) => each(&upper),
            ("shape", _) => each(&extent),
            _ => (2..=r).fold(extent(int(1, span)), |p, j| {
                bin(BinOp::Mul, p, extent(int(j, span)))
            }),
        }))
    }

    /// The variable of a leaf of the component `rg`.
    pub(super) fn ragged_var(&mut self, text: String, span: Span) -> R<VarId> {
        match self.resolve(&Name { text, span })? {
            Resolved::Var(v) => Ok(v),
            _ => Err(self.err(span, "component storage not found")),
        }
    }

    /// The element's 0-based positions in the structure dimensions of the
    /// bounds leaf `bv`, checked against its extents, in I64 temporaries
    /// (they are read in the blocks that follow).
    fn ragged_position(&mut self, bv: VarId, element: &[Expr]) -> R<Vec<VarId>> {
        let mut pos = Vec::new();
        for (d, x) in element.iter().enumerate() {
            let k = self.int64(x)?;
            let lo = self.val(Inst::DimLower(bv, d as u32 + 1), Type::I64);
            let p = self.val(Inst::Binary(BinaryOp::Sub, k, lo), Type::I64);
            let n = self.val(Inst::DimExtent(bv, d as u32 + 1), Type::I64);
            let zero = self.int(0, Type::I64);
            let below = self.val(Inst::Cmp(CmpOp::Lt, p, zero), Type::Bool);
            let above = self.val(Inst::Cmp(CmpOp::Ge, p, n), Type::Bool);
            let out = self.val(Inst::Binary(BinaryOp::Or, below, above), Type::Bool);
            let t = self.temp("k", Type::I64);
            self.emit(Inst::Store(t, p), None);
            self.fail_if(out, RuntimeErrorKind::IndexOutOfBounds);
            pos.push(t);
        }
        Ok(pos)
    }

    /// Ends the program with `kind` when `cond` holds.
    fn fail_if(&mut self, cond: Value, kind: RuntimeErrorKind) {
        let (bad, ok) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond,
            then_dest: bad,
            else_dest: ok,
        });
        self.switch_to(bad);
        self.terminate(Terminator::Fail(kind));
        self.switch_to(ok);
    }

    /// The subscripts of entry `j` of the element at `pos` in the bounds
    /// leaf `bv`.
    fn bound_index(&mut self, bv: VarId, j: usize, pos: &[VarId]) -> Vec<Value> {
        let mut idx = vec![self.int(j as i64, Type::I64)];
        for (d, &p) in pos.iter().enumerate() {
            let p = self.val(Inst::Load(p), Type::I64);
            let lo = self.val(Inst::DimLower(bv, d as u32 + 1), Type::I64);
            idx.push(self.val(Inst::Binary(BinaryOp::Add, lo, p), Type::I64));
        }
        idx
    }

    /// Entry `j` of the element at `pos` (I64).
    fn load_bound(&mut self, bv: VarId, j: usize, pos: &[VarId]) -> Value {
        let idx = self.bound_index(bv, j, pos);
        let x = self.val(Inst::LoadElem(bv, idx), Type::I32);
        self.convert(x, Type::I32, Type::I64)
    }

    /// Sets entry `j` of the element at `pos` to `x` (I64).
    fn store_bound(&mut self, bv: VarId, j: usize, pos: &[VarId], x: Value) {
        let idx = self.bound_index(bv, j, pos);
        let x = self.convert(x, Type::I64, Type::I32);
        self.emit(Inst::StoreElem(bv, idx, x), None);
    }

    /// Whether the element at `pos` is allocated (Bool).
    fn element_allocated(&mut self, bv: VarId, pos: &[VarId]) -> Value {
        let status = self.load_bound(bv, 0, pos);
        let zero = self.int(0, Type::I64);
        self.val(Inst::Cmp(CmpOp::Ne, status, zero), Type::Bool)
    }

    /// `allocate(b(k)%u(lo:hi, ...))`, the subscripts completed in `args`.
    fn ragged_allocate(&mut self, rg: &Ragged, args: &[Arg], span: Span) -> R<()> {
        let element = self.ragged_element(rg, args, span)?;
        let mut bounds = Vec::new();
        for a in &args[..rg.rank] {
            let (lo, hi) = match &a.value {
                ArgValue::Expr(hi) => (None, hi),
                ArgValue::Range {
                    lo: Some(lo),
                    hi: Some(hi),
                    stride: None,
                } => (Some(lo), hi),
                ArgValue::Range { .. } => {
                    return Err(self.err(
                        span,
                        format!(
                            "ALLOCATE bounds of `{}` must be `upper` or `lower:upper`",
                            rg.name
                        ),
                    ))
                }
            };
            let lo = match lo {
                Some(e) => self.int64(e)?,
                None => self.int(1, Type::I64),
            };
            let hi = self.int64(hi)?;
            let keep = |this: &mut Self, x: Value| {
                let t = this.temp("b", Type::I64);
                this.emit(Inst::Store(t, x), None);
                t
            };
            bounds.push((keep(self, lo), keep(self, hi)));
        }
        let bv = self.ragged_var(bounds_name(&rg.name), span)?;
        let pos = self.ragged_position(bv, &element)?;
        let is = self.element_allocated(bv, &pos);
        self.fail_if(is, RuntimeErrorKind::AlreadyAllocated);
        let mut widths = Vec::new();
        for (j, (lo, hi)) in bounds.into_iter().enumerate() {
            let lo = self.val(Inst::Load(lo), Type::I64);
            let hi = self.val(Inst::Load(hi), Type::I64);
            // A dimension of zero extent has bounds 1 and 0.
            let empty = self.val(Inst::Cmp(CmpOp::Lt, hi, lo), Type::Bool);
            let one = self.int(1, Type::I64);
            let zero = self.int(0, Type::I64);
            let lo = self.val(Inst::Select(empty, one, lo), Type::I64);
            let hi = self.val(Inst::Select(empty, zero, hi), Type::I64);
            self.store_bound(bv, j + 1, &pos, lo);
            self.store_bound(bv, j + 1 + rg.rank, &pos, hi);
            let d = self.val(Inst::Binary(BinaryOp::Sub, hi, lo), Type::I64);
            let w = self.val(Inst::Binary(BinaryOp::Add, d, one), Type::I64);
            let t = self.temp("w", Type::I64);
            self.emit(Inst::Store(t, w), None);
            widths.push(t);
        }
        let one = self.int(1, Type::I64);
        self.store_bound(bv, 0, &pos, one);
        self.ragged_grow(rg, bv, &widths, span)
    }

    /// Makes the storage of `rg` at least `widths` (I64 temporaries) wide
    /// in the component's dimensions, allocating it or reallocating it
    /// with every element's values kept.
    pub(super) fn ragged_grow(
        &mut self,
        rg: &Ragged,
        bv: VarId,
        widths: &[VarId],
        span: Span,
    ) -> R<()> {
        let data = self.ragged_var(data_name(&rg.name), span)?;
        let ty = self.proc.var(data).ty;
        let is = self.val(Inst::Allocated(data), Type::Bool);
        let (fresh, check, grow, done) = (self.block(), self.block(), self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: check,
            else_dest: fresh,
        });
        // The extents of the element dimensions are those of the bounds.
        let element_bounds = |this: &mut Self| {
            (0..rg.elems)
                .map(|d| {
                    let lo = this.val(Inst::DimLower(bv, d as u32 + 1), Type::I64);
                    let n = this.val(Inst::DimExtent(bv, d as u32 + 1), Type::I64);
                    let last = this.val(Inst::Binary(BinaryOp::Add, lo, n), Type::I64);
                    let one = this.int(1, Type::I64);
                    (
                        lo,
                        this.val(Inst::Binary(BinaryOp::Sub, last, one), Type::I64),
                    )
                })
                .collect::<Vec<_>>()
        };
        self.switch_to(fresh);
        let mut bounds: Vec<(Value, Value)> = widths
            .iter()
            .map(|&w| {
                let one = self.int(1, Type::I64);
                (one, self.val(Inst::Load(w), Type::I64))
            })
            .collect();
        bounds.extend(element_bounds(self));
        self.emit(Inst::Allocate(data, bounds), None);
        self.jump(done);

        self.switch_to(check);
        let mut wider = self.konst(adjit_ir::Const::Bool(false), Type::Bool);
        for (j, &w) in widths.iter().enumerate() {
            let have = self.val(Inst::DimExtent(data, j as u32), Type::I64);
            let want = self.val(Inst::Load(w), Type::I64);
            let gt = self.val(Inst::Cmp(CmpOp::Gt, want, have), Type::Bool);
            wider = self.val(Inst::Binary(BinaryOp::Or, wider, gt), Type::Bool);
        }
        self.terminate(Terminator::Branch {
            cond: wider,
            then_dest: grow,
            else_dest: done,
        });

        self.switch_to(grow);
        let rank = rg.rank + rg.elems;
        let old: Vec<VarId> = (0..rank)
            .map(|d| {
                let n = self.val(Inst::DimExtent(data, d as u32), Type::I64);
                let t = self.temp("n", Type::I64);
                self.emit(Inst::Store(t, n), None);
                t
            })
            .collect();
        let tmp = self.allocated_temp(ty, &old);
        self.copy_positions(data, tmp, &old, span)?;
        self.emit(Inst::Deallocate(data), None);
        let mut bounds: Vec<(Value, Value)> = widths
            .iter()
            .zip(&old)
            .map(|(&w, &n)| {
                let one = self.int(1, Type::I64);
                let w = self.val(Inst::Load(w), Type::I64);
                let n = self.val(Inst::Load(n), Type::I64);
                let gt = self.val(Inst::Cmp(CmpOp::Gt, w, n), Type::Bool);
                (one, self.val(Inst::Select(gt, w, n), Type::I64))
            })
            .collect();
        bounds.extend(element_bounds(self));
        self.emit(Inst::Allocate(data, bounds), None);
        self.copy_positions(tmp, data, &old, span)?;
        self.emit(Inst::Deallocate(tmp), None);
        self.jump(done);
        self.switch_to(done);
        Ok(())
    }

    /// Copies the elements of `from` at the positions of `extents` to the
    /// same positions of `to`.
    fn copy_positions(&mut self, from: VarId, to: VarId, extents: &[VarId], span: Span) -> R<()> {
        let ty = self.proc.var(from).ty;
        self.for_positions(extents, &mut |this, pos| {
            let i = this.whole_array_index(from, pos, span)?;
            let x = this.val(Inst::LoadElem(from, i), ty);
            let j = this.whole_array_index(to, pos, span)?;
            this.emit(Inst::StoreElem(to, j, x), None);
            Ok(())
        })
    }

    /// `deallocate(b(k)%u)`.
    fn ragged_deallocate(&mut self, rg: &Ragged, args: &[Arg], span: Span) -> R<()> {
        let element = self.ragged_element(rg, args, span)?;
        if !args[..rg.rank].iter().all(is_colon) {
            return Err(self.err(span, "DEALLOCATE takes whole array names"));
        }
        let bv = self.ragged_var(bounds_name(&rg.name), span)?;
        let pos = self.ragged_position(bv, &element)?;
        let is = self.element_allocated(bv, &pos);
        let not = self.val(Inst::Unary(adjit_ir::UnaryOp::Not, is), Type::Bool);
        self.fail_if(not, RuntimeErrorKind::NotAllocated);
        for j in 0..=2 * rg.rank {
            let zero = self.int(0, Type::I64);
            self.store_bound(bv, j, &pos, zero);
        }
        Ok(())
    }

    /// `b(k)%u = value` for an array `value` (references already
    /// rewritten): the value is evaluated first, then the element is
    /// allocated to its shape (bounds from 1) unless it is allocated with
    /// that shape (keeping its bounds), and takes it.
    fn ragged_assign(&mut self, rg: &Ragged, args: &[Arg], value: &Expr, span: Span) -> R<()> {
        let element = self.ragged_element(rg, args, span)?;
        let data = self.ragged_var(data_name(&rg.name), span)?;
        let ty = self.proc.var(data).ty;
        self.hoist(value)?;
        let (tmp, extents) = self.value_into_temp(value, ty, rg.rank, &rg.name)?;
        let bv = self.ragged_var(bounds_name(&rg.name), span)?;
        let pos = self.ragged_position(bv, &element)?;
        let is = self.element_allocated(bv, &pos);
        let same = self.same_extents(is, &extents, |this, j| {
            let lo = this.load_bound(bv, j + 1, &pos);
            let hi = this.load_bound(bv, j + 1 + rg.rank, &pos);
            let d = this.val(Inst::Binary(BinaryOp::Sub, hi, lo), Type::I64);
            let one = this.int(1, Type::I64);
            this.val(Inst::Binary(BinaryOp::Add, d, one), Type::I64)
        });
        self.unless(same, |this| {
            let one = this.int(1, Type::I64);
            this.store_bound(bv, 0, &pos, one);
            for (j, &n) in extents.iter().enumerate() {
                let one = this.int(1, Type::I64);
                this.store_bound(bv, j + 1, &pos, one);
                let n = this.val(Inst::Load(n), Type::I64);
                this.store_bound(bv, j + 1 + rg.rank, &pos, n);
            }
            this.ragged_grow(rg, bv, &extents, span)
        })?;
        self.for_positions(&extents, &mut |this, p| {
            let i = this.whole_array_index(tmp, p, span)?;
            let x = this.val(Inst::LoadElem(tmp, i), ty);
            let mut at = p.to_vec();
            for &k in &pos {
                at.push(this.val(Inst::Load(k), Type::I64));
            }
            let j = this.whole_array_index(data, &at, span)?;
            this.emit(Inst::StoreElem(data, j, x), None);
            Ok(())
        })?;
        self.emit(Inst::Deallocate(tmp), None);
        Ok(())
    }

    /// One component's part of a whole-structure assignment `t = f` (leaf
    /// expressions of [`Lowerer::struct_ref`]). The storage of a component
    /// of an array of structures is copied as the element's allocation:
    /// between elements, the source element's values (the target's storage
    /// grown to hold them); between whole arrays, the storage (none when
    /// the source has none). Other leaves, the bounds among them, are
    /// assigned.
    pub(super) fn leaf_assign(&mut self, t: &Expr, f: &Expr) -> R<()> {
        let leaf = |e: &Expr| match &e.kind {
            ExprKind::Name(n) => Some((n.text.strip_suffix(".data")?.to_string(), Vec::new())),
            ExprKind::Apply { name, args } => {
                Some((name.text.strip_suffix(".data")?.to_string(), args.clone()))
            }
            _ => None,
        };
        let (Some((tn, targs)), Some((fname, fargs))) = (leaf(t), leaf(f)) else {
            return self.assign(t, f);
        };
        let (Some(trg), Some(frg)) = (self.ragged(&tn), self.ragged(&fname)) else {
            return self.assign(t, f);
        };
        let span = t.span;
        let tv = self.ragged_var(data_name(&tn), span)?;
        let fv = self.ragged_var(data_name(&fname), span)?;
        if targs.is_empty() {
            // Whole arrays of structures: the storage as it is.
            let (copy, none, done) = (self.block(), self.block(), self.block());
            let is = self.val(Inst::Allocated(fv), Type::Bool);
            self.terminate(Terminator::Branch {
                cond: is,
                then_dest: copy,
                else_dest: none,
            });
            self.switch_to(copy);
            self.assign(t, f)?;
            self.jump(done);
            self.switch_to(none);
            self.release_if_allocated(tv);
            self.jump(done);
            self.switch_to(done);
            return Ok(());
        }
        let te = self.ragged_element(&trg, &targs, span)?;
        let fe = self.ragged_element(&frg, &fargs, span)?;
        let tb = self.ragged_var(bounds_name(&tn), span)?;
        let fb = self.ragged_var(bounds_name(&fname), span)?;
        let tpos = self.ragged_position(tb, &te)?;
        let fpos = self.ragged_position(fb, &fe)?;
        let is = self.element_allocated(fb, &fpos);
        let (copy, done) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: is,
            then_dest: copy,
            else_dest: done,
        });
        self.switch_to(copy);
        let mut widths = Vec::new();
        for j in 0..frg.rank {
            let lo = self.load_bound(fb, j + 1, &fpos);
            let hi = self.load_bound(fb, j + 1 + frg.rank, &fpos);
            let d = self.val(Inst::Binary(BinaryOp::Sub, hi, lo), Type::I64);
            let one = self.int(1, Type::I64);
            let w = self.val(Inst::Binary(BinaryOp::Add, d, one), Type::I64);
            let t = self.temp("w", Type::I64);
            self.emit(Inst::Store(t, w), None);
            widths.push(t);
        }
        self.ragged_grow(&trg, tb, &widths, span)?;
        let ty = self.proc.var(tv).ty;
        self.for_positions(&widths, &mut |this, p| {
            let mut at = |v: VarId, pos: &[VarId]| {
                let mut at = p.to_vec();
                for &k in pos {
                    at.push(this.val(Inst::Load(k), Type::I64));
                }
                this.whole_array_index(v, &at, span)
            };
            let i = at(fv, &fpos)?;
            let j = at(tv, &tpos)?;
            let x = this.val(Inst::LoadElem(fv, i), ty);
            this.emit(Inst::StoreElem(tv, j, x), None);
            Ok(())
        })?;
        self.jump(done);
        self.switch_to(done);
        Ok(())
    }
}
