//! Array sections, array expressions and array constructors as actual
//! arguments.
//!
//! A contiguous section (`a(2:n)`, `a(:, j)`, `m(:, :, k)`) passed to an
//! explicit-shape or assumed-size dummy is passed by the address of its
//! first element (Fortran sequence association, as gfortran does). A
//! section with a stride or a gap (`a(1:n:2)`, `a(i, :)`) is copied into a
//! temporary before the call and back after it (copy-in / copy-out). An
//! array expression (`2*x`) or an array constructor of scalars goes
//! through a temporary filled before the call, as does an expression
//! holding an array-valued intrinsic (`matmul(a, x)`, `cshift(x, 1) + 1`),
//! which gives the temporary its shape. A contiguous section given to an
//! assumed-shape dummy is passed without a copy too, as a slice (the
//! address of its first element and its number of elements,
//! [`CallArg::Slice`]): the callee takes its last extent from the length
//! of the storage it is given (its other extents are hidden arguments,
//! from the section's shape), so it sees exactly the section. The
//! derivative transforms pass the derivative's slice the same way.
//!
//! The temporaries of sections and expressions are rank-1 ALLOCATABLE
//! arrays holding exactly the argument's elements, allocated before the
//! call and released after it (so the derivative sweeps see their storage
//! like that of any allocatable array). They are prepared before the
//! statement (the copy loops are blocks of their own, so they cannot sit
//! between the evaluation of two arguments); a function reference taking
//! one is itself evaluated before its statement, into a scalar temporary,
//! like a reduction.

use super::super::ast::{Arg, ArgValue, DimSpec, Expr, ExprKind, Intent, Name};
use super::array::ArrayRef;
use super::lowerer::{ArgTemp, CopyBack, Lowerer, Sel, R};
use super::Program;
use adjit_ir::{BinaryOp, Bound, CallArg, Dim, Inst, Storage, Type, Value, VarId};

/// True when the dummy `dummy` of unit `unit` is an assumed-shape array.
pub(crate) fn is_assumed_shape_dummy(prog: &Program<'_>, unit: usize, dummy: &str) -> bool {
    prog.units[unit]
        .scope
        .var(dummy)
        .and_then(|v| v.dims.as_ref())
        .is_some_and(|ds| ds.iter().any(|x| matches!(x, DimSpec::AssumedShape { .. })))
}

/// True when a subscript is a triplet with no bounds and no stride (`:`).
fn is_full(a: &Arg) -> bool {
    matches!(
        a.value,
        ArgValue::Range {
            lo: None,
            hi: None,
            stride: None
        }
    )
}

/// True when a section is contiguous whatever the array's bounds: full
/// triplets, then one triplet without a stride, then scalar subscripts
/// (none of them a vector subscript).
pub(crate) fn is_contiguous(l: &Lowerer, args: &[Arg]) -> bool {
    if args.iter().any(|a| l.is_vector_subscript(a)) {
        return false;
    }
    let Some(last) = args
        .iter()
        .rposition(|a| matches!(a.value, ArgValue::Range { .. }))
    else {
        return false;
    };
    let unit_stride = match &args[last].value {
        ArgValue::Range { stride: None, .. } => true,
        ArgValue::Range {
            stride: Some(s), ..
        } => matches!(s.kind, ExprKind::Int { value: 1, .. }),
        ArgValue::Expr(_) => false,
    };
    unit_stride && args[..last].iter().all(is_full)
}

/// True when an actual argument needs a temporary filled before the call:
/// a section that is not contiguous, an array constructor, or an array
/// expression other than a variable, an element or a section.
fn needs_temp(l: &Lowerer, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::ArrayConstructor(_) => true,
        ExprKind::Name(_) => false,
        ExprKind::Apply { name, args } if l.is_array_name(&name.text) => {
            args.iter().any(|a| l.is_section_subscript(a)) && !is_contiguous(l, args)
        }
        _ => l.array_source(e).is_some(),
    }
}

impl Lowerer<'_, '_> {
    /// Prepares the temporaries of the actual arguments of a call before
    /// the statement (see the module documentation). Returns true when
    /// one was made.
    pub(super) fn prepare_actuals(&mut self, args: &[Arg]) -> R<bool> {
        let mut made = false;
        for a in args {
            if let ArgValue::Expr(e) = &a.value {
                if let Some((_, leaves)) = self.struct_section(e)? {
                    for x in leaves.iter().filter_map(|l| match &l.value {
                        ArgValue::Expr(x) => Some(x),
                        ArgValue::Range { .. } => None,
                    }) {
                        if self.prepare_storage_section(x)? {
                            made = true;
                        } else if needs_temp(self, x) {
                            self.prepare_actual(x)?;
                            made = true;
                        }
                    }
                    continue;
                }
                // A constructor of strings: a buffer of characters, as
                // an array of deferred-length strings holds them.
                if !self.arg_temps.iter().any(|t| t.is_for(e)) && self.is_string_constructor(e)? {
                    let temp = self.string_constructor_temp(e)?;
                    self.arg_temps.push(ArgTemp {
                        expr: e,
                        temp,
                        back: None,
                        storage: None,
                    });
                    made = true;
                    continue;
                }
                if (super::char_expr::may_need_char_temp(e) || self.runtime_len_fn(e).is_some())
                    && !self.arg_temps.iter().any(|t| t.is_for(e))
                {
                    if let Some(record) = self.char_arg_temp(e)? {
                        self.arg_temps.push(record);
                        made = true;
                        continue;
                    }
                }
                if needs_temp(self, e) {
                    self.prepare_actual(e)?;
                    made = true;
                }
            }
        }
        Ok(made)
    }

    /// A located error when `a`, given for the dummy `dummy` of unit
    /// `unit`, is a section with a vector subscript and the dummy is
    /// INTENT(OUT) or INTENT(INOUT): such a section may not be defined
    /// (gfortran's diagnostic; the copy-in temporary is never copied
    /// back).
    pub(super) fn check_vector_actual(&mut self, unit: usize, dummy: &str, a: &Arg) -> R<()> {
        let ArgValue::Expr(e) = &a.value else {
            return Ok(());
        };
        let ExprKind::Apply { name, args } = &e.kind else {
            return Ok(());
        };
        if !self.is_array_name(&name.text) || !args.iter().any(|x| self.is_vector_subscript(x)) {
            return Ok(());
        }
        let intent = self.prog.units[unit]
            .scope
            .var(dummy)
            .and_then(|d| d.intent);
        if !matches!(intent, Some(Intent::Out | Intent::InOut)) {
            return Ok(());
        }
        Err(self.err(
            e.span,
            format!(
                "array section `{}` with a vector subscript is incompatible with the INTENT(OUT) or INTENT(INOUT) dummy argument `{dummy}`",
                name.text
            ),
        ))
    }

    /// True when `name(args)` in an expression is a reference to a user
    /// function (not an array, statement function or intrinsic): a
    /// procedure of the program, a dummy procedure, or a generic interface
    /// or renamed module procedure (whose array-expression actuals need
    /// their temporaries like those of a specific's).
    pub(super) fn is_user_function_ref(&self, name: &Name) -> bool {
        !self.is_array_name(&name.text)
            && (self.prog.find_proc(self.unit, &name.text).is_some()
                || self.dummy_target(&name.text).is_some()
                || self.proc_sym(&name.text).is_some())
    }

    /// The unit of the user function `e` references when it returns an
    /// array (through a generic name: the specific resolved for it,
    /// `Lowerer::resolve_array_generics`).
    pub(crate) fn array_function(&self, e: &Expr) -> Option<usize> {
        let ExprKind::Apply { name, .. } = &e.kind else {
            return None;
        };
        if !self.is_user_function_ref(name) {
            return None;
        }
        if let Some(&unit) = self.generic_array_fns.get(&name.span) {
            return Some(unit);
        }
        let unit = self.prog.find_proc(self.unit, &name.text)?;
        self.prog.sigs[unit].array_result.map(|_| unit)
    }

    /// `target = f(args)` for a function returning an array: the target
    /// (a whole array or a contiguous section of the result's type and
    /// rank, not an argument of the call) is given as the result argument.
    pub(crate) fn array_function_assign(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
        unit: usize,
    ) -> R<()> {
        let ExprKind::Apply {
            name: f,
            args: fargs,
        } = &value.kind
        else {
            unreachable!("array_function gives calls only")
        };
        let (rty, rrank) = self.prog.sigs[unit]
            .array_result
            .expect("an array function");
        let var = self.proc.var(v);
        let rank = match args {
            None => var.dims.len(),
            Some(a) => self.section_rank(a),
        };
        if var.ty != rty || rank != rrank {
            return Err(self.err(
                value.span,
                format!(
                    "the result of `{}` ({} of rank {rrank}) does not match `{}` ({} of rank {rank})",
                    f.text,
                    super::consts::type_name(rty),
                    name.text,
                    super::consts::type_name(var.ty)
                ),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        super::lowerer::expr_names(value, &mut names);
        if names.contains(&name.text) {
            // The call reads the target: the result goes to a temporary
            // first (as large as the target's whole array), then to the
            // target.
            let temp = self.storage_like(v, rty, value, &name.text)?;
            let (mut call_args, callee, copies) = self.call_args_copied(unit, f, fargs)?;
            call_args.push(CallArg::Var(temp));
            if let Some(callee) = callee {
                self.emit(Inst::Call(callee, call_args), None);
            }
            self.copy_back_after(copies)?;
            let extents = self.extents(&ArrayRef {
                name,
                args,
                call: None,
            })?;
            return self.for_positions(&extents, &mut |this, pos| {
                let lin = this.linear(&extents, pos);
                let x = this.val(Inst::LoadElem(temp, vec![lin]), rty);
                let idx = match args {
                    None => this.whole_array_index(v, pos, name.span)?,
                    Some(a) => this.section_index(v, a, pos, name)?,
                };
                this.emit(Inst::StoreElem(v, idx, x), None);
                Ok(())
            });
        }
        let result = match args {
            None => CallArg::Var(v),
            Some(a) if is_contiguous(self, a) => CallArg::Elem(v, self.section_start(v, a)?),
            Some(_) => {
                return Err(self.err(
                    name.span,
                    format!(
                        "unsupported Fortran: array-valued function `{}` assigned to a section of `{}` that is not contiguous",
                        f.text, name.text
                    ),
                ))
            }
        };
        let (mut call_args, callee, copies) = self.call_args_copied(unit, f, fargs)?;
        call_args.push(result);
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)
    }

    fn prepare_actual(&mut self, e: &Expr) -> R<()> {
        let key = e as *const Expr;
        if self.arg_temps.iter().any(|t| t.expr == key) {
            return Ok(());
        }
        let record = match &e.kind {
            ExprKind::ArrayConstructor(items) => self.constructor_temp(e, items)?,
            // A section with a vector subscript is copied in only (Fortran
            // forbids defining it through the dummy: `check_vector_actual`).
            ExprKind::Apply { name, args }
                if self.is_array_name(&name.text)
                    && args
                        .iter()
                        .any(|a| matches!(a.value, ArgValue::Range { .. }))
                    && !args.iter().any(|a| self.is_vector_subscript(a)) =>
            {
                self.section_temp(e, name, args)?
            }
            _ => self.expression_temp(e)?,
        };
        self.arg_temps.push(record);
        Ok(())
    }

    /// A contiguous array section `name(args)` as an actual argument for a
    /// parameter of type `pty` (by the address of its first element), or
    /// the temporary prepared for a section that is not contiguous.
    pub(super) fn section_actual(
        &mut self,
        e: &Expr,
        v: VarId,
        name: &Name,
        args: &[Arg],
        pty: Type,
        assumed_shape: bool,
    ) -> R<CallArg> {
        let ty = self.proc.var(v).ty;
        if ty != pty || ty == Type::Char {
            return Err(self.err(
                e.span,
                format!(
                    "array section of `{}` does not match the type of the dummy",
                    name.text
                ),
            ));
        }
        let rank = self.proc.var(v).dims.len();
        self.check_subscript_count(name, rank, args.len())?;
        if !is_contiguous(self, args) {
            return self.prepared_actual(e, pty);
        }
        let idx = self.section_start(v, args)?;
        if !assumed_shape {
            return Ok(CallArg::Elem(v, idx));
        }
        // The dummy takes its last extent from the storage it is given:
        // exactly the section's elements.
        let extents = self.extents(&ArrayRef {
            name,
            args: Some(args),
            call: None,
        })?;
        let mut len = self.int(1, Type::I64);
        for n in extents {
            let n = self.val(Inst::Load(n), Type::I64);
            len = self.val(Inst::Binary(BinaryOp::Mul, len, n), Type::I64);
        }
        Ok(CallArg::Slice(v, idx, len))
    }

    /// The subscripts of the first element of a section of `v` (the lower
    /// bound of each triplet, the subscript of each scalar).
    fn section_start(&mut self, v: VarId, args: &[Arg]) -> R<Vec<Value>> {
        let mut idx = Vec::new();
        for (d, a) in args.iter().enumerate() {
            idx.push(match &a.value {
                ArgValue::Expr(x) | ArgValue::Range { lo: Some(x), .. } => self.index_value(x)?,
                ArgValue::Range { lo: None, .. } => {
                    self.val(Inst::DimLower(v, d as u32), Type::I64)
                }
            });
        }
        Ok(idx)
    }

    /// The temporary prepared for an actual argument (`None` when there is
    /// none).
    pub(super) fn prepared_actual(&mut self, e: &Expr, pty: Type) -> R<CallArg> {
        let key = e as *const Expr;
        let Some(t) = self.arg_temps.iter().find(|t| t.expr == key) else {
            return Err(self.err(
                e.span,
                "unsupported Fortran: array expression or strided section as an actual argument here",
            ));
        };
        let temp = t.temp;
        let ty = self.proc.var(temp).ty;
        if ty != pty {
            return Err(self.err(
                e.span,
                format!(
                    "type mismatch in an array argument: expected {}, got {}",
                    super::consts::type_name(pty),
                    super::consts::type_name(ty)
                ),
            ));
        }
        Ok(CallArg::Var(temp))
    }

    /// A temporary holding a section that is not contiguous.
    fn section_temp(&mut self, e: &Expr, name: &Name, args: &[Arg]) -> R<ArgTemp> {
        let v = match self.resolve(name)? {
            super::lowerer::Resolved::Var(v) => v,
            _ => return Err(self.err(name.span, format!("`{}` is not an array", name.text))),
        };
        let extents = self.extents(&ArrayRef {
            name,
            args: Some(args),
            call: None,
        })?;
        let sel = self.section_sel(v, args)?;
        let ty = self.proc.var(v).ty;
        let temp = self.exact_temp(ty, &extents);
        let copy = CopyBack {
            temp,
            var: v,
            sel,
            extents,
        };
        self.copy_section(&copy, true)?;
        Ok(ArgTemp {
            expr: e,
            temp,
            back: Some(copy),
            storage: None,
        })
    }

    /// The subscripts `args` of a section of `v`, evaluated once (into I64
    /// temporaries, readable from later blocks).
    pub(super) fn section_sel(&mut self, v: VarId, args: &[Arg]) -> R<Vec<Sel>> {
        let mut sel = Vec::new();
        for (d, a) in args.iter().enumerate() {
            sel.push(match &a.value {
                ArgValue::Expr(x) => {
                    let x = self.int64_value(x)?;
                    Sel::At(self.keep(x))
                }
                ArgValue::Range { lo, stride, .. } => {
                    let lo = match lo {
                        Some(x) => self.int64_value(x)?,
                        None => self.val(Inst::DimLower(v, d as u32), Type::I64),
                    };
                    let st = match stride {
                        Some(x) => self.int64_value(x)?,
                        None => self.int(1, Type::I64),
                    };
                    Sel::Range {
                        lo: self.keep(lo),
                        stride: self.keep(st),
                    }
                }
            });
        }
        Ok(sel)
    }

    /// An integer expression as an I64 value.
    fn int64_value(&mut self, x: &Expr) -> R<Value> {
        let (x, t) = self.integer(x)?;
        Ok(self.convert(x, t, Type::I64))
    }

    /// An I64 value kept in a temporary (readable from later blocks).
    fn keep(&mut self, x: Value) -> VarId {
        let t = self.temp("sub", Type::I64);
        self.emit(Inst::Store(t, x), None);
        t
    }

    /// A rank-1 temporary of type `ty` with as many elements as the array
    /// `v` (whose bounds are fixed at the procedure's entry).
    pub(crate) fn storage_like(&mut self, v: VarId, ty: Type, e: &Expr, what: &str) -> R<VarId> {
        let var = self.proc.var(v);
        let mut size = Bound::Const(1);
        for d in &var.dims {
            let Some(upper) = &d.upper else {
                return Err(self.err(
                    e.span,
                    format!(
                        "unsupported Fortran: a temporary copy of `{what}`, an array of assumed size or shape, as an actual argument"
                    ),
                ));
            };
            let extent = Bound::Max(
                Box::new(Bound::Add(
                    Box::new(Bound::Sub(
                        Box::new(upper.clone()),
                        Box::new(d.lower.clone()),
                    )),
                    Box::new(Bound::Const(1)),
                )),
                Box::new(Bound::Const(0)),
            );
            size = Bound::Mul(Box::new(size), Box::new(extent));
        }
        Ok(self.temp_array(ty, size))
    }

    /// A fresh rank-1 ALLOCATABLE temporary of type `ty`, allocated
    /// `(1:n)` with `n` the product of `extents` (released after the call
    /// by [`Self::copy_back_after`]).
    pub(super) fn exact_temp(&mut self, ty: Type, extents: &[VarId]) -> VarId {
        let i64t = Type::I64;
        let mut n = self.int(1, i64t);
        for &x in extents {
            let x = self.val(Inst::Load(x), i64t);
            n = self.val(Inst::Binary(BinaryOp::Mul, n, x), i64t);
        }
        let t = self.temp("arg", ty);
        let var = &mut self.proc.vars[t.index()];
        var.dims = vec![Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(1)),
        }];
        var.storage = Storage::Allocatable;
        let one = self.int(1, i64t);
        self.emit(Inst::Allocate(t, vec![(one, n)]), None);
        t
    }

    /// A fresh local rank-1 array `(1:size)`.
    fn temp_array(&mut self, ty: Type, size: Bound) -> VarId {
        let t = self.temp("arg", ty);
        self.proc.vars[t.index()].dims = vec![Dim {
            lower: Bound::Const(1),
            upper: Some(size),
        }];
        t
    }

    /// Copies a section into its temporary (`into_temp`) or back.
    fn copy_section(&mut self, c: &CopyBack, into_temp: bool) -> R<()> {
        let ty = self.proc.var(c.var).ty;
        let sel = c.sel.clone();
        let (temp, var) = (c.temp, c.var);
        self.for_positions(&c.extents.clone(), &mut |this, pos| {
            let idx = this.selected_index(&sel, pos);
            let lin = this.linear(&c.extents, pos);
            if into_temp {
                let x = this.val(Inst::LoadElem(var, idx), ty);
                this.emit(Inst::StoreElem(temp, vec![lin], x), None);
            } else {
                let x = this.val(Inst::LoadElem(temp, vec![lin]), ty);
                this.emit(Inst::StoreElem(var, idx, x), None);
            }
            Ok(())
        })
    }

    /// The subscripts of the element at the 0-based positions `pos` (one
    /// per triplet) of the section `sel`.
    pub(super) fn selected_index(&mut self, sel: &[Sel], pos: &[Value]) -> Vec<Value> {
        let i64t = Type::I64;
        let mut ranges = pos.iter();
        sel.iter()
            .map(|s| match *s {
                Sel::At(x) => self.val(Inst::Load(x), i64t),
                Sel::Range { lo, stride } => {
                    let lo = self.val(Inst::Load(lo), i64t);
                    let st = self.val(Inst::Load(stride), i64t);
                    let p = *ranges.next().expect("a position per triplet");
                    let off = self.val(Inst::Binary(BinaryOp::Mul, p, st), i64t);
                    self.val(Inst::Binary(BinaryOp::Add, lo, off), i64t)
                }
            })
            .collect()
    }

    /// The 1-based column-major position of 0-based positions in a shape.
    pub(crate) fn linear(&mut self, extents: &[VarId], pos: &[Value]) -> Value {
        let i64t = Type::I64;
        let mut lin = self.int(1, i64t);
        let mut stride = self.int(1, i64t);
        for (d, &p) in pos.iter().enumerate() {
            let term = self.val(Inst::Binary(BinaryOp::Mul, p, stride), i64t);
            lin = self.val(Inst::Binary(BinaryOp::Add, lin, term), i64t);
            if d + 1 < pos.len() {
                let n = self.val(Inst::Load(extents[d]), i64t);
                stride = self.val(Inst::Binary(BinaryOp::Mul, stride, n), i64t);
            }
        }
        lin
    }

    /// The actual arguments of a call (see [`Self::call_args`]) and the
    /// sections to copy back after it.
    pub(super) fn call_args_copied(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
    ) -> R<(Vec<CallArg>, Option<adjit_ir::ProcId>, Vec<ArgTemp>)> {
        let (call_args, callee) = self.call_args(unit, name, args)?;
        let used: Vec<VarId> = call_args
            .iter()
            .filter_map(|a| match a {
                CallArg::Var(v) => Some(*v),
                _ => None,
            })
            .collect();
        let (mine, rest) = std::mem::take(&mut self.arg_temps)
            .into_iter()
            .partition(|t| used.contains(&t.temp));
        self.arg_temps = rest;
        Ok((call_args, callee, mine))
    }

    /// Copies the sections passed to the call just emitted back from
    /// their temporaries, then releases the allocated temporaries.
    pub(super) fn copy_back_after(&mut self, temps: Vec<ArgTemp>) -> R<()> {
        for c in temps.iter().filter_map(|t| t.back.as_ref()) {
            self.copy_section(c, false)?;
        }
        // (A storage temporary is released by its copy back, when the
        // call left it allocated.)
        for c in temps.iter().filter_map(|t| t.storage.as_ref()) {
            self.storage_copy_back(c)?;
        }
        for t in temps.iter().filter(|t| t.storage.is_none()) {
            if self.proc.var(t.temp).storage == Storage::Allocatable {
                self.emit(Inst::Deallocate(t.temp), None);
            }
        }
        Ok(())
    }

    /// A temporary holding an array constructor of scalars.
    fn constructor_temp(&mut self, e: &Expr, items: &[Expr]) -> R<ArgTemp> {
        if self.needs_streaming(items) {
            return Ok(ArgTemp {
                expr: e,
                temp: self.streamed_temp(e, items)?,
                back: None,
                storage: None,
            });
        }
        let mut ty = None;
        for item in items {
            if matches!(
                item.kind,
                ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
            ) || self.array_source(item).is_some()
            {
                return Err(self.err(
                    item.span,
                    "unsupported Fortran: array constructor item that is not a scalar in an actual argument",
                ));
            }
            let t = self.static_type(item)?;
            ty = Some(ty.map_or(t, |u| super::consts::promote(u, t)));
        }
        let Some(ty) = ty else {
            return Err(self.err(e.span, "unsupported Fortran: empty array constructor"));
        };
        let mut values = Vec::new();
        for item in items {
            values.push(self.num_as(item, ty)?);
        }
        let temp = self.temp_array(ty, Bound::Const(values.len() as i64));
        for (k, x) in values.into_iter().enumerate() {
            let i = self.int(k as i64 + 1, Type::I64);
            self.emit(Inst::StoreElem(temp, vec![i], x), None);
        }
        Ok(ArgTemp {
            expr: e,
            temp,
            back: None,
            storage: None,
        })
    }

    /// A temporary holding the elements of an array expression.
    fn expression_temp(&mut self, e: &Expr) -> R<ArgTemp> {
        let Some(src) = self.array_source(e) else {
            return Err(self.err(e.span, "expected an array expression"));
        };
        // An array-valued intrinsic (`matmul(a, x)`) gives its own shape.
        if src.call.is_none()
            && !matches!(self.resolve(src.name)?, super::lowerer::Resolved::Var(_))
        {
            return Err(self.err(src.name.span, "expected an array"));
        }
        // Numeric or logical (`mask=x > 0`); character values are not
        // built element by element.
        let ty = match self.type_and_rank(e)?.0 {
            Type::Char => {
                return Err(self.err(e.span, "expected a numeric or logical array expression"))
            }
            t => t,
        };
        let extents = self.extents(&src)?;
        let temp = self.exact_temp(ty, &extents);
        self.for_positions(&extents, &mut |this, pos| {
            this.at_element(&[(e, pos.to_vec())], |this, ps| {
                let x = this.num_as(e, ty)?;
                let lin = this.linear(&extents, &ps[0]);
                this.emit(Inst::StoreElem(temp, vec![lin], x), None);
                Ok(())
            })
        })?;
        Ok(ArgTemp {
            expr: e,
            temp,
            back: None,
            storage: None,
        })
    }
}
