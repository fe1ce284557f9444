//! Array expressions: whole-array and section assignments (also under a
//! WHERE mask) and elementwise expressions lowered to loop nests, and the
//! hoisting of reductions (lowered by [`super::reductions`]) before the
//! statement that uses them, into a scalar temporary.
//!
//! Scalar expressions are [`super::expr`]'s; this module only builds the
//! loops around them.

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name};
use super::intrinsics::{is_elemental, is_reduction};
use super::lowerer::{Lowerer, Operand, Resolved, R};
use super::masked::{disjoint_args, same_args};
use adjit_ir::{BinaryOp, CmpOp, Inst, Span, Terminator, Type, Value, VarId};

/// An array operand that gives an array expression its shape.
pub(crate) struct ArrayRef<'e> {
    /// The array's name.
    pub name: &'e Name,
    /// Its subscripts (`None`: the whole array).
    pub args: Option<&'e [Arg]>,
    /// The reference when the operand is an array-valued intrinsic
    /// (`name` and `args` are then the intrinsic's; see the transform
    /// module).
    pub call: Option<&'e Expr>,
}

impl Lowerer<'_, '_> {
    /// True when a subscript is a vector subscript: an array-valued
    /// integer expression (`a(idx)`, `a([2, 1])`, `x(conn(:, e))`), which
    /// selects the elements its values name, in its order.
    pub(crate) fn is_vector_subscript(&self, a: &Arg) -> bool {
        matches!(&a.value, ArgValue::Expr(x) if self.rank_of(x) > 0)
    }

    /// True when a subscript gives its section a dimension: a triplet or a
    /// vector subscript.
    pub(crate) fn is_section_subscript(&self, a: &Arg) -> bool {
        matches!(a.value, ArgValue::Range { .. }) || self.is_vector_subscript(a)
    }

    /// The rank of the section `name(args)`: its triplets and vector
    /// subscripts.
    pub(crate) fn section_rank(&self, args: &[Arg]) -> usize {
        args.iter().filter(|a| self.is_section_subscript(a)).count()
    }

    /// The extent (an I64 temporary) of the vector subscript `x` of
    /// `name`, a located error unless `x` has rank one.
    fn vector_extent(&mut self, name: &Name, x: &Expr) -> R<VarId> {
        let rank = self.rank_of(x);
        if rank != 1 {
            return Err(self.err(
                x.span,
                format!(
                    "a vector subscript of `{}` must have rank one, not {rank}",
                    name.text
                ),
            ));
        }
        Ok(self.shape_of(x)?[0])
    }

    /// The value (I64) of the vector subscript `x` at its 0-based
    /// position `p`: the element of `x` evaluated on its own (its
    /// array-valued intrinsics walked at that position).
    fn vector_subscript_at(&mut self, x: &Expr, p: Value) -> R<Value> {
        let saved = self.elem.take();
        let r = self.at_element(&[(x, vec![p])], |this, _| this.int64(x));
        self.elem = saved;
        r
    }

    /// A located error unless `given` subscripts are given to `name`, an
    /// array of rank `rank`.
    pub(super) fn check_subscript_count(
        &mut self,
        name: &Name,
        rank: usize,
        given: usize,
    ) -> R<()> {
        if given == rank {
            return Ok(());
        }
        Err(self.err(
            name.span,
            format!(
                "`{}` has {rank} dimension(s) but {given} subscript(s) are given",
                name.text
            ),
        ))
    }
}

impl Lowerer<'_, '_> {
    /// Lowers every array reduction inside an expression into a scalar
    /// temporary (before the statement's own code list).
    pub fn hoist(&mut self, e: &Expr) -> R<()> {
        match &e.kind {
            ExprKind::Apply { name, args } => {
                for a in args {
                    match &a.value {
                        ArgValue::Expr(x) => self.hoist(x)?,
                        ArgValue::Range { lo, hi, stride } => {
                            for x in [lo, hi, stride].into_iter().flatten() {
                                self.hoist(x)?;
                            }
                        }
                    }
                }
                if is_reduction(&name.text)
                    && self.names_intrinsic(name)
                    && !self.reduction_is_array(&name.text, args)
                {
                    let v = self.reduce(e, name, args)?;
                    self.hoisted.insert(e, v);
                } else if self.array_function(e).is_some() {
                    // Called by its assignment (`array_function_assign`).
                    self.prepare_actuals(args)?;
                } else if self.runtime_len_fn(e).is_some() {
                    // Called where its value is used (`char_runtime`).
                    self.prepare_actuals(args)?;
                } else if matches!(
                    name.text.as_str(),
                    "len_trim" | "index" | "scan" | "verify" | "len"
                ) && self.names_intrinsic(name)
                    && args
                        .iter()
                        .take(2)
                        .any(|a| matches!(&a.value, ArgValue::Expr(x) if self.is_built_char(x) || self.is_deferred_string_name(x)))
                {
                    // Loops over character data built of run-time length
                    // (a function result, a concatenation): before the statement.
                    let (x, t) = self.num(e)?;
                    let keep = self.temp("lt", t);
                    self.emit(Inst::Store(keep, x), None);
                    self.hoisted.insert(e, keep);
                } else if self.is_user_function_ref(name)
                    && !self.is_elemental_use(name, args)
                    && self.prepare_actuals(args)?
                {
                    // The call itself goes before the statement (after the
                    // loops filling its arguments' temporaries).
                    let (x, t) = self.num(e)?;
                    let keep = self.temp("f", t);
                    self.emit(Inst::Store(keep, x), None);
                    self.hoisted.insert(e, keep);
                }
                Ok(())
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.hoist(a),
            // A comparison of character data built of run-time length
            // loops over it: before the statement, so that no operand of
            // the expression around it (`.or.`) is left in another block.
            ExprKind::Binary(op, a, b)
                if matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                ) && (self.is_built_char(a) || self.is_built_char(b)) =>
            {
                self.hoist(a)?;
                self.hoist(b)?;
                let (x, t) = self.num(e)?;
                let keep = self.temp("cmp", t);
                self.emit(Inst::Store(keep, x), None);
                self.hoisted.insert(e, keep);
                Ok(())
            }
            ExprKind::Binary(_, a, b) => {
                self.hoist(a)?;
                self.hoist(b)
            }
            // Items of an array constructor (not those of an implied DO,
            // which may read its index): a function call given a strided
            // section, `[h, f(m(n:1:-1, 1))]`, is made before the statement
            // like one outside a constructor.
            ExprKind::ArrayConstructor(items) => items
                .iter()
                .filter(|i| !matches!(i.kind, ExprKind::ImpliedDo { .. }))
                .try_for_each(|i| self.hoist(i)),
            ExprKind::Substring { base, start, end } => {
                self.hoist(base)?;
                for x in [start, end].into_iter().flatten() {
                    self.hoist(x)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// True when a name applied to arguments denotes the intrinsic (no
    /// array, structure, statement function, EXTERNAL name or user
    /// procedure of this scope or an enclosing one shadows it: a local
    /// `type(pt) :: all(3)` makes `all(2)` its element).
    pub(crate) fn names_intrinsic(&self, name: &Name) -> bool {
        use super::scope::Sym;
        let shadowed = match self.visible_sym(&name.text) {
            Some((_, Sym::Var(d))) => d.dims.is_some(),
            Some((_, Sym::Struct(_) | Sym::StmtFunc(_) | Sym::External(_))) => true,
            _ => false,
        };
        !shadowed
            && !self.vars.contains_key(&name.text)
            && self.prog.find_proc(self.unit, &name.text).is_none()
    }

    /// The first array operand of an expression, if the expression is
    /// array-valued.
    pub fn array_source<'e>(&self, e: &'e Expr) -> Option<ArrayRef<'e>> {
        // A deferred-length string (`super::deferred_chars`) is stored as
        // an array of characters but is a scalar, as are its substrings
        // and the elements of an array of such strings.
        if let ExprKind::Name(n) | ExprKind::Apply { name: n, .. } = &e.kind {
            if self.deferred_string_rank(&n.text).is_some() {
                return None;
            }
        }
        match &e.kind {
            ExprKind::Name(n) if self.is_array_name(&n.text) => Some(ArrayRef {
                name: n,
                args: None,
                call: None,
            }),
            ExprKind::Apply { name, args } => {
                if self.transform_kind(e).is_some() {
                    return Some(ArrayRef {
                        name,
                        args: Some(args),
                        call: Some(e),
                    });
                }
                if self.is_array_name(&name.text) {
                    return args
                        .iter()
                        .any(|a| self.is_section_subscript(a))
                        .then_some(ArrayRef {
                            name,
                            args: Some(args),
                            call: None,
                        });
                }
                if is_elemental(&name.text) && self.names_intrinsic(name) {
                    return args.iter().find_map(|a| match &a.value {
                        ArgValue::Expr(x) => self.array_source(x),
                        ArgValue::Range { .. } => None,
                    });
                }
                self.elemental_source(name, args)
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.array_source(a),
            ExprKind::Binary(_, a, b) => self.array_source(a).or_else(|| self.array_source(b)),
            _ => None,
        }
    }

    fn array_var(&mut self, name: &Name) -> R<VarId> {
        match self.resolve(name)? {
            Resolved::Var(v) if self.proc.var(v).is_array() => Ok(v),
            _ => Err(self.err_declared(
                name.span,
                format!("`{}` is not an array", name.text),
                &name.text,
            )),
        }
    }

    /// Lower bound (I64) of dimension `d` of an array.
    fn lower64(&mut self, v: VarId, d: usize) -> Value {
        self.val(Inst::DimLower(v, d as u32), Type::I64)
    }

    /// An integer expression widened to I64.
    pub(super) fn int64(&mut self, e: &Expr) -> R<Value> {
        let (v, t) = self.integer(e)?;
        Ok(self.convert(v, t, Type::I64))
    }

    /// The extents of an array operand (whole array or section), stored in
    /// temporaries so that loops in later blocks can read them.
    pub fn extents(&mut self, r: &ArrayRef) -> R<Vec<VarId>> {
        if let Some(call) = r.call {
            return self.call_shape(call);
        }
        let v = self.array_var(r.name)?;
        self.fail_if_unallocated(v, r.name.span);
        let rank = self.proc.var(v).dims.len();
        let mut out = Vec::new();
        let i64t = Type::I64;
        match r.args {
            None => {
                for d in 0..rank {
                    let e = self.val(Inst::DimExtent(v, d as u32), i64t);
                    out.push(self.store_temp("n", e, i64t));
                }
            }
            Some(args) => {
                self.check_subscript_count(r.name, rank, args.len())?;
                for (d, a) in args.iter().enumerate() {
                    let (lo, hi, stride) = match &a.value {
                        ArgValue::Range { lo, hi, stride } => (lo, hi, stride),
                        ArgValue::Expr(x) if self.is_vector_subscript(a) => {
                            out.push(self.vector_extent(r.name, x)?);
                            continue;
                        }
                        ArgValue::Expr(_) => continue,
                    };
                    let lo = match lo {
                        Some(x) => self.int64(x)?,
                        None => self.lower64(v, d),
                    };
                    let hi = match hi {
                        Some(x) => self.int64(x)?,
                        None => {
                            let l = self.lower64(v, d);
                            let n = self.val(Inst::DimExtent(v, d as u32), i64t);
                            let one = self.int(1, i64t);
                            let s = self.val(Inst::Binary(BinaryOp::Add, l, n), i64t);
                            self.val(Inst::Binary(BinaryOp::Sub, s, one), i64t)
                        }
                    };
                    let st = match stride {
                        Some(x) => self.int64(x)?,
                        None => self.int(1, i64t),
                    };
                    let diff = self.val(Inst::Binary(BinaryOp::Sub, hi, lo), i64t);
                    let num = self.val(Inst::Binary(BinaryOp::Add, diff, st), i64t);
                    let q = self.val(Inst::Binary(BinaryOp::Div, num, st), i64t);
                    let zero = self.int(0, i64t);
                    let n = self.val(Inst::Binary(BinaryOp::Max, q, zero), i64t);
                    out.push(self.store_temp("n", n, i64t));
                }
            }
        }
        Ok(out)
    }

    fn store_temp(&mut self, prefix: &str, v: Value, ty: Type) -> VarId {
        let t = self.temp(prefix, ty);
        self.emit(Inst::Store(t, v), None);
        t
    }

    /// Subscripts of the element of a whole array at 0-based positions.
    pub fn whole_array_index(&mut self, v: VarId, pos: &[Value], span: Span) -> R<Vec<Value>> {
        let rank = self.proc.var(v).dims.len();
        if rank != pos.len() {
            let name = self.proc.var(v).name.clone();
            return Err(self.err(
                span,
                format!(
                    "array `{name}` of rank {rank} in an expression of rank {}",
                    pos.len()
                ),
            ));
        }
        let mut idx = Vec::new();
        for (d, &p) in pos.iter().enumerate() {
            let lo = self.lower64(v, d);
            idx.push(self.val(Inst::Binary(BinaryOp::Add, lo, p), Type::I64));
        }
        Ok(idx)
    }

    /// Subscripts of the element of a section at 0-based positions.
    pub fn section_index(
        &mut self,
        v: VarId,
        args: &[Arg],
        pos: &[Value],
        name: &Name,
    ) -> R<Vec<Value>> {
        let rank = self.proc.var(v).dims.len();
        self.check_subscript_count(name, rank, args.len())?;
        let triplets = self.section_rank(args);
        if triplets != pos.len() {
            return Err(self.err(
                name.span,
                format!(
                    "section of `{}` of rank {triplets} in an expression of rank {}",
                    name.text,
                    pos.len()
                ),
            ));
        }
        let mut idx = Vec::new();
        let mut k = 0;
        for (d, a) in args.iter().enumerate() {
            match &a.value {
                ArgValue::Expr(x) if self.is_vector_subscript(a) => {
                    idx.push(self.vector_subscript_at(x, pos[k])?);
                    k += 1;
                }
                ArgValue::Expr(x) => idx.push(self.index_value(x)?),
                ArgValue::Range { lo, stride, .. } => {
                    let lo = match lo {
                        Some(x) => self.int64(x)?,
                        None => self.lower64(v, d),
                    };
                    let off = match stride {
                        Some(s) => {
                            let s = self.int64(s)?;
                            self.val(Inst::Binary(BinaryOp::Mul, pos[k], s), Type::I64)
                        }
                        None => pos[k],
                    };
                    idx.push(self.val(Inst::Binary(BinaryOp::Add, lo, off), Type::I64));
                    k += 1;
                }
            }
        }
        Ok(idx)
    }

    /// Runs `body` for every position of a shape (column-major: the first
    /// dimension varies fastest). `body` sees 0-based I64 positions.
    pub fn for_positions(
        &mut self,
        extents: &[VarId],
        body: &mut dyn FnMut(&mut Self, &[Value]) -> R<()>,
    ) -> R<()> {
        let counters: Vec<VarId> = extents.iter().map(|_| self.temp("k", Type::I64)).collect();
        self.nest(extents, &counters, extents.len(), body)
    }

    fn nest(
        &mut self,
        extents: &[VarId],
        counters: &[VarId],
        level: usize,
        body: &mut dyn FnMut(&mut Self, &[Value]) -> R<()>,
    ) -> R<()> {
        if level == 0 {
            let pos: Vec<Value> = counters
                .iter()
                .map(|&c| self.val(Inst::Load(c), Type::I64))
                .collect();
            return body(self, &pos);
        }
        let d = level - 1;
        let i64t = Type::I64;
        let zero = self.int(0, i64t);
        self.emit(Inst::Store(counters[d], zero), None);
        let (header, inner, exit) = (self.block(), self.block(), self.block());
        self.jump(header);
        self.switch_to(header);
        let k = self.val(Inst::Load(counters[d]), i64t);
        let n = self.val(Inst::Load(extents[d]), i64t);
        let more = self.val(Inst::Cmp(CmpOp::Lt, k, n), Type::Bool);
        self.terminate(Terminator::Branch {
            cond: more,
            then_dest: inner,
            else_dest: exit,
        });
        self.switch_to(inner);
        self.nest(extents, counters, d, body)?;
        let k = self.val(Inst::Load(counters[d]), i64t);
        let one = self.int(1, i64t);
        let k1 = self.val(Inst::Binary(BinaryOp::Add, k, one), i64t);
        self.emit(Inst::Store(counters[d], k1), None);
        self.jump(header);
        self.switch_to(exit);
        Ok(())
    }

    /// A constructor is assigned to a rank-1 array or section only.
    pub(super) fn check_constructor_rank(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        span: Span,
    ) -> R<()> {
        let rank = match args {
            None => self.proc.var(v).dims.len(),
            Some(a) => self.section_rank(a),
        };
        if rank == 1 {
            return Ok(());
        }
        Err(self.err(
            span,
            format!(
                "array constructor assigned to `{}` of rank {rank}",
                name.text
            ),
        ))
    }

    /// A constructor of `count` items assigned whole to the rank-1 array
    /// `v` of constant extent must have as many items.
    pub(super) fn check_constructor_length(
        &mut self,
        v: VarId,
        count: usize,
        name: &Name,
        span: Span,
    ) -> R<()> {
        let d = &self.proc.var(v).dims[0];
        let extent = d
            .upper
            .as_ref()
            .and_then(|u| u.as_const())
            .zip(d.lower.as_const());
        match extent {
            Some((hi, lo)) if hi - lo + 1 != count as i64 => Err(self.err(
                span,
                format!(
                    "array constructor has {count} element(s) but `{}` has {}",
                    name.text,
                    hi - lo + 1
                ),
            )),
            _ => Ok(()),
        }
    }

    /// `target = value` where the target is a whole array or a section.
    pub fn array_assign(&mut self, name: &Name, args: Option<&[Arg]>, value: &Expr) -> R<()> {
        self.masked_assign(name, args, value, &[])
    }

    /// `target = value` for the elements where every mask (negated when
    /// its flag is set) holds; masks are evaluated element by element with
    /// the target's shape (WHERE).
    pub fn masked_assign(
        &mut self,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
        mask: &[(&Expr, bool)],
    ) -> R<()> {
        let v = self.array_var(name)?;
        let ty = self.proc.var(v).ty;
        if ty == Type::Char {
            return self.char_array_assign(v, name, args, value, mask);
        }
        if args.is_none() && self.is_allocatable_dummy(v) {
            self.check_dummy_assignment(v, name, value)?;
        }
        if let Some(unit) = self.array_function(value) {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    "unsupported Fortran: an array-valued function assigned under a WHERE mask",
                ));
            }
            return self.array_function_assign(v, name, args, value, unit);
        }
        if self.transform_reads(value, &name.text) {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    format!("unsupported Fortran: an array-valued intrinsic reading `{}` assigned to it under a WHERE mask", name.text),
                ));
            }
            if args.is_none() && self.proc.var(v).storage.is_allocatable() {
                // `c = matmul(c, a)`: evaluated whole, then (re)allocated.
                return self.overlapping_realloc(v, name, value);
            }
            return self.assign_through_temp(v, name, args, value);
        }
        if let ExprKind::ArrayConstructor(items) = &value.kind {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    "unsupported Fortran: array constructor assigned under a WHERE mask",
                ));
            }
            return self.constructor_assign(v, name, args, items, value);
        }
        // Fortran evaluates the whole right-hand side (and the mask) before
        // storing any element; lowering element by element is only right
        // when every read of the target is at the element being assigned.
        for (m, _) in mask {
            if self.reads_out_of_place(m, name, args) {
                return Err(self.err(
                    m.span,
                    format!("unsupported Fortran: a WHERE mask reading `{}` at other elements than the one assigned", name.text),
                ));
            }
        }
        if self.reads_out_of_place(value, name, args) {
            if let Some((m, _)) = mask.first() {
                return Err(self.err(
                    m.span,
                    format!("unsupported Fortran: an assignment to `{}` under a WHERE mask reading it at other elements than the one assigned", name.text),
                ));
            }
            if args.is_none() && self.proc.var(v).storage.is_allocatable() {
                return self.overlapping_realloc(v, name, value);
            }
            return self.assign_through_temp(v, name, args, value);
        }
        let source = self.array_source(value);
        if args.is_none() && mask.is_empty() && self.proc.var(v).storage.is_allocatable() {
            // Fortran 2003: (re)allocated to the value's shape first.
            if let Some(src) = &source {
                let from = self.extents(src)?;
                if from.len() == self.proc.var(v).dims.len() {
                    let whole = match &value.kind {
                        ExprKind::Name(n) => match self.resolve(n)? {
                            Resolved::Var(s) if self.proc.var(s).dims.len() == from.len() => {
                                Some(s)
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    self.realloc_with_bounds_of(v, &from, whole);
                }
            }
        }
        let tref = ArrayRef {
            name,
            args,
            call: None,
        };
        let extents = self.extents(&tref)?;
        let scalar = match source {
            None => {
                let x = self.num_as(value, ty)?;
                Some(self.store_temp("s", x, ty))
            }
            Some(_) => None,
        };
        self.for_positions(&extents, &mut |this, pos| {
            let (skip, pos) = this.element_mask(mask, pos)?;
            let (x, pos) = match scalar {
                Some(s) => (this.val(Inst::Load(s), ty), pos),
                None => this.at_element(&[(value, pos)], |this, ps| {
                    Ok((this.num_as(value, ty)?, ps[0].clone()))
                })?,
            };
            let idx = match args {
                None => this.whole_array_index(v, &pos, name.span)?,
                Some(a) => this.section_index(v, a, &pos, name)?,
            };
            this.emit(Inst::StoreElem(v, idx, x), None);
            if let Some(skip) = skip {
                this.jump(skip);
                this.switch_to(skip);
            }
            Ok(())
        })
    }

    /// Branches on the masks at one element: continues in a fresh block
    /// when they all hold and returns the block to join (`None` without
    /// masks) and the positions as values of the current block.
    pub(super) fn element_mask(
        &mut self,
        mask: &[(&Expr, bool)],
        pos: &[Value],
    ) -> R<(Option<adjit_ir::BlockId>, Vec<Value>)> {
        if mask.is_empty() {
            return Ok((None, pos.to_vec()));
        }
        let kept: Vec<VarId> = pos
            .iter()
            .map(|&p| self.store_temp("p", p, Type::I64))
            .collect();
        let items: Vec<(&Expr, Vec<Value>)> =
            mask.iter().map(|&(m, _)| (m, pos.to_vec())).collect();
        let all = self.at_element(&items, |this, ps| {
            let mut all: Option<Value> = None;
            for (&(m, negate), p) in mask.iter().zip(ps) {
                this.elem = Some(p.clone());
                let c = this.logical(m)?;
                let c = if negate {
                    this.val(Inst::Unary(adjit_ir::UnaryOp::Not, c), Type::Bool)
                } else {
                    c
                };
                all = Some(match all {
                    None => c,
                    Some(a) => this.val(Inst::Binary(BinaryOp::And, a, c), Type::Bool),
                });
            }
            Ok(all.expect("a mask"))
        })?;
        let (then_b, join) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond: all,
            then_dest: then_b,
            else_dest: join,
        });
        self.switch_to(then_b);
        let pos = kept
            .into_iter()
            .map(|k| self.val(Inst::Load(k), Type::I64))
            .collect();
        Ok((Some(join), pos))
    }

    /// `a = (/ x1, ..., xn /)` for a rank-1 array or section: every item is
    /// evaluated, then stored (so items may read the target).
    fn constructor_assign(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        items: &[Expr],
        value: &Expr,
    ) -> R<()> {
        let ty = self.proc.var(v).ty;
        self.check_constructor_rank(v, name, args, value.span)?;
        if self.needs_streaming(items) {
            if args.is_none() && self.proc.var(v).storage.is_allocatable() {
                return self.streamed_constructor_realloc(v, items, value.span);
            }
            // Stored as evaluated: the items must not read the target.
            let mut names = std::collections::BTreeSet::new();
            super::lowerer::expr_names(value, &mut names);
            if names.contains(&name.text) {
                return Err(self.err(
                    value.span,
                    format!(
                        "unsupported Fortran: array constructor with implied DO loops or array items reading its target `{}`",
                        name.text
                    ),
                ));
            }
            let counter = self.temp("c", Type::I64);
            let zero = self.int(0, Type::I64);
            self.emit(Inst::Store(counter, zero), None);
            return self.stream_items(items, ty, counter, &mut |this, x, k| {
                let idx = match args {
                    None => this.whole_array_index(v, &[k], name.span)?,
                    Some(a) => this.section_index(v, a, &[k], name)?,
                };
                this.emit(Inst::StoreElem(v, idx, x), None);
                Ok(())
            });
        }
        // Fortran 2003: an allocatable array takes the constructor's size.
        let allocatable = args.is_none() && self.proc.var(v).storage.is_allocatable();
        if args.is_none() && !allocatable {
            self.check_constructor_length(v, items.len(), name, value.span)?;
        }
        let mut values = Vec::new();
        for item in items {
            if matches!(
                item.kind,
                ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
            ) || self.array_source(item).is_some()
            {
                return Err(self.err(
                    item.span,
                    "unsupported Fortran: array constructor item that is not a scalar",
                ));
            }
            values.push(self.num_as(item, ty)?);
        }
        if allocatable {
            // The values wait in temporaries while the target is
            // (re)allocated in other blocks.
            let kept: Vec<VarId> = values
                .iter()
                .map(|&x| self.store_temp("c", x, ty))
                .collect();
            let n = self.int(items.len() as i64, Type::I64);
            let extent = self.store_temp("n", n, Type::I64);
            self.realloc_for_assignment(v, &[extent]);
            values = kept.iter().map(|&k| self.val(Inst::Load(k), ty)).collect();
        }
        for (k, x) in values.into_iter().enumerate() {
            let pos = self.int(k as i64, Type::I64);
            let idx = match args {
                None => self.whole_array_index(v, &[pos], name.span)?,
                Some(a) => self.section_index(v, a, &[pos], name)?,
            };
            self.emit(Inst::StoreElem(v, idx, x), None);
        }
        Ok(())
    }

    /// True when `value` reads the target `name(args)` anywhere but at the
    /// element being assigned: an element (`w(1)`), another section, the
    /// whole array when a section is assigned, or the array passed to a
    /// function that is not applied element by element (which may read
    /// any element). Whole-array reductions are evaluated before the
    /// assignment's loop and never count.
    pub(super) fn reads_out_of_place(
        &self,
        value: &Expr,
        name: &Name,
        args: Option<&[Arg]>,
    ) -> bool {
        let target = name.text.as_str();
        let mentions = |e: &Expr| {
            let mut names = std::collections::BTreeSet::new();
            super::lowerer::expr_names(e, &mut names);
            names.contains(target)
        };
        match &value.kind {
            ExprKind::Name(n) if n.text == target => args.is_some(),
            ExprKind::Apply { name: f, args: a } if f.text == target => {
                let in_place = args.is_some_and(|t| same_args(t, a) || disjoint_args(t, a));
                !in_place
                    || a.iter().any(|x| match &x.value {
                        ArgValue::Expr(e) => mentions(e),
                        ArgValue::Range { lo, hi, stride } => {
                            [lo, hi, stride].into_iter().flatten().any(&mentions)
                        }
                    })
            }
            ExprKind::Apply { name: f, args: a } => {
                if is_reduction(&f.text) && self.names_intrinsic(f) {
                    return false;
                }
                let elementwise = (is_elemental(&f.text) && self.names_intrinsic(f))
                    || self.is_elemental_use(f, a);
                a.iter().any(|x| match &x.value {
                    ArgValue::Expr(e) if elementwise => self.reads_out_of_place(e, name, args),
                    ArgValue::Expr(e) => mentions(e),
                    ArgValue::Range { lo, hi, stride } => {
                        [lo, hi, stride].into_iter().flatten().any(&mentions)
                    }
                })
            }
            _ => value
                .kind
                .children()
                .into_iter()
                .any(|x| self.reads_out_of_place(x, name, args)),
        }
    }

    /// The type of an expression, found by lowering it in a scratch block
    /// that is discarded.
    pub fn static_type(&mut self, e: &Expr) -> R<Type> {
        match self.type_and_rank(e)?.0 {
            t if t != Type::Bool && t != Type::Char => Ok(t),
            _ => Err(self.err(e.span, "expected a numeric array expression")),
        }
    }

    /// The element type (`Type::Char` for character data) and rank of an
    /// expression, found by lowering it in a scratch block that is
    /// discarded.
    pub fn type_and_rank(&mut self, e: &Expr) -> R<(Type, usize)> {
        let (saved_cur, saved_dead, saved_elem, saved_start) =
            (self.cur, self.dead, self.elem.clone(), self.stmt_start);
        let saved_checks = (self.check_at, std::mem::take(&mut self.checked));
        let scratch = self.block();
        self.switch_to(scratch);
        let zero = self.int(0, Type::I64);
        let src = self.array_source(e);
        let rank = match &src {
            Some(r) if r.call.is_some() => self.rank_of(e),
            Some(r) => match r.args {
                None => match self.array_var(r.name) {
                    Ok(v) => self.proc.var(v).dims.len(),
                    Err(rep) => {
                        self.cur = saved_cur;
                        self.dead = saved_dead;
                        self.stmt_start = saved_start;
                        (self.check_at, self.checked) = saved_checks;
                        return Err(rep);
                    }
                },
                Some(a) => self.section_rank(a),
            },
            // An array constructor (rank 1), else a scalar.
            None => self.rank_of(e),
        };
        self.elem = None;
        let r = self.at_element(&[(e, vec![zero; rank])], |this, _| this.expr(e));
        self.elem = saved_elem;
        self.cur = saved_cur;
        self.dead = saved_dead;
        self.stmt_start = saved_start;
        (self.check_at, self.checked) = saved_checks;
        // The scratch block stays unreachable; cleanup drops it.
        match r? {
            Operand::Num(_, t) => Ok((t, rank)),
            Operand::Char(_) => Ok((Type::Char, rank)),
        }
    }
}
