//! Array-valued user functions inside expressions (`y = 2*f(x) + 1`,
//! `s = sum(f(x))`, `dot_product(f(x), x)`, `call g(f(x))`).
//!
//! A reference to a function returning an array that is not the whole
//! right-hand side of an array assignment (that one is given the target,
//! [`Lowerer::array_function_assign`]) is called before its statement into
//! a temporary: an ALLOCATABLE array of the result's type, rank and
//! bounds, allocated before the call and released after the statement.
//! The statement is then lowered with the reference replaced by the
//! temporary's name (like ASSOCIATE's rewriting), so every array form
//! (elementwise expressions, reductions, intrinsics, actual arguments)
//! takes it. The result's bounds are those the callee declares, evaluated
//! in the caller from the actual arguments: constants, scalar integer
//! dummies, and the extents of assumed-shape dummies given as hidden
//! arguments.

use super::super::ast::{
    Arg, ArgValue, CaseItem, CaseSelector, DimSpec, Expr, ExprKind, Name, Stmt, StmtKind, UnOp,
};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::{StructDecl, Sym};
use adjit_ir::{BinaryOp, Bound, CallArg, CmpOp, Dim, Inst, Storage, Type, Value, Var, VarId};
use std::collections::HashMap;

/// `do while (c) ... end do` as `do; if (.not. (c)) exit; ... end do`,
/// so that the condition referencing an array-valued function (or an
/// array intrinsic whose `dim=` is not a constant) is a
/// logical IF (see [`Lowerer::lift_array_functions`]) evaluated at the
/// top of every trip (CYCLE comes back to it).
fn do_while_as_exit(s: &Stmt, name: &Option<Name>, cond: &Expr, body: &[Stmt]) -> Stmt {
    let span = cond.span;
    let negated = Expr {
        kind: ExprKind::Unary(
            UnOp::Not,
            Box::new(Expr {
                kind: ExprKind::Paren(Box::new(cond.clone())),
                span,
            }),
        ),
        span,
    };
    let test = Stmt {
        label: None,
        span,
        kind: StmtKind::LogicalIf {
            cond: negated,
            stmt: Box::new(Stmt {
                label: None,
                span,
                kind: StmtKind::Exit(name.clone()),
            }),
        },
    };
    let mut trip = vec![test];
    trip.extend(body.iter().cloned());
    Stmt {
        label: s.label,
        span: s.span,
        kind: StmtKind::DoForever {
            name: name.clone(),
            body: trip,
        },
    }
}

impl Lowerer<'_, '_> {
    /// The statement with its array-valued function references called
    /// into temporaries (see the module documentation), and the
    /// temporaries to release after it; `None` when it has none.
    pub(super) fn lift_array_functions(&mut self, s: &Stmt) -> R<Option<(Stmt, Vec<VarId>)>> {
        self.resolve_array_generics(s)?;
        if let Some(out) = self.lift_condition(s)? {
            return Ok(Some((out, Vec::new())));
        }
        if let StmtKind::DoWhile { name, cond, body } = &s.kind {
            if self.condition_lifted(cond) {
                return Ok(Some((do_while_as_exit(s, name, cond, body), Vec::new())));
            }
        }
        let shaped_by_constructors = match &s.kind {
            StmtKind::Assign { target, value } => self.shaped_by_constructors(target, value),
            _ => false,
        };
        let any = match &s.kind {
            StmtKind::Assign { target, value } => {
                self.has_array_function(target)
                    || self.has_array_function(value)
                    || self.has_nested_streamed_constructor(value, shaped_by_constructors)
            }
            StmtKind::Call { args, .. } => args.iter().any(|a| self.arg_has_array_function(a)),
            StmtKind::Write { items, .. } => items.iter().any(|x| self.has_array_function(x)),
            _ => false,
        };
        if !any {
            return Ok(None);
        }
        let mut out = s.clone();
        let mut temps = Vec::new();
        match &mut out.kind {
            StmtKind::Assign { target, value } => {
                self.lift_in(target, &mut temps)?;
                // A result sized by an actual's extent is not given the
                // target (whose storage may be longer than the result),
                // nor is an ALLOCATABLE result (allocated by the function:
                // [`super::alloc_result`]). Nor is a whole ALLOCATABLE
                // target, (re)allocated to the result's shape by the
                // assignment of the temporary.
                let reallocated = match &target.kind {
                    // Resolved (not looked up): the variable may be created
                    // by this first use.
                    ExprKind::Name(n) => matches!(
                        self.resolve(n)?,
                        Resolved::Var(v) if self.proc.var(v).storage.is_allocatable()
                    ),
                    _ => false,
                };
                let whole = self
                    .array_function(value)
                    .is_some_and(|u| self.prog.sigs[u].result_given_target())
                    && self.rank_of(target) > 0
                    && !reallocated;
                if whole {
                    // Given the target; only its arguments are lifted.
                    if let ExprKind::Apply { args, .. } = &mut value.kind {
                        self.lift_args(args, &mut temps)?;
                    }
                } else {
                    self.lift_in(value, &mut temps)?;
                }
                self.lift_nested_constructors(value, &mut temps, shaped_by_constructors)?;
            }
            StmtKind::Call { args, .. } => self.lift_args(args, &mut temps)?,
            StmtKind::Write { items, .. } => {
                for x in items {
                    self.lift_in(x, &mut temps)?;
                }
            }
            _ => return Ok(None),
        }
        Ok((!temps.is_empty()).then_some((out, temps)))
    }

    /// Resolves the references of `s` to generic functions whose specific
    /// returns an array (`scaled(x, s)` for `scaled_1d`), so that they are
    /// lifted as references to the specific are
    /// ([`Self::array_function`]).
    fn resolve_array_generics(&mut self, s: &Stmt) -> R<()> {
        fn generic_refs<'e>(this: &Lowerer, e: &'e Expr, out: &mut Vec<&'e Expr>) {
            if let ExprKind::Apply { name, .. } = &e.kind {
                let generic = matches!(this.proc_sym(&name.text), Some(Sym::Generic(_)));
                if generic && !this.is_array_name(&name.text) {
                    out.push(e);
                }
            }
            e.kind
                .children()
                .into_iter()
                .for_each(|x| generic_refs(this, x, out));
        }
        let mut refs = Vec::new();
        for e in s.kind.own_exprs() {
            generic_refs(self, e, &mut refs);
        }
        for e in refs {
            let ExprKind::Apply { name, args } = &e.kind else {
                continue;
            };
            let Some(Sym::Generic(specifics)) = self.proc_sym(&name.text) else {
                continue;
            };
            // Generics without array-valued specifics are resolved where
            // they are lowered (their actuals may need temporaries first).
            let returns_array = |s: &String| {
                self.prog
                    .find_proc(self.unit, s)
                    .is_some_and(|u| self.prog.sigs[u].array_result.is_some())
            };
            if self.generic_array_fns.contains_key(&name.span)
                || !specifics.iter().any(returns_array)
            {
                continue;
            }
            let unit = self.specific(name, specifics, args)?;
            if self.prog.sigs[unit].array_result.is_some() {
                self.generic_array_fns.insert(name.span, unit);
            }
        }
        Ok(())
    }

    /// An IF whose condition, or a SELECT CASE whose integer or logical
    /// selector, references an array-valued function
    /// (`if (any(f(x) > 0))`) or an array intrinsic with a `dim=` that is
    /// not a constant (`if (maxval(sum(m, dim=k)) > 1)`): the condition is assigned to a
    /// temporary first (an assignment, whose lifted temporaries are
    /// released before the IF branches), and the IF tests the temporary.
    /// An ELSE IF whose condition does becomes an IF nested in the ELSE of
    /// the arms before it, so that it is evaluated only when they fail.
    /// `None` when the statement is no such IF.
    fn lift_condition(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        // Reads the conditions first: the statement (with its bodies) is
        // copied only when one of them is lifted.
        let conds: Vec<&Expr> = match &s.kind {
            StmtKind::If { arms, .. } => arms.iter().map(|(c, _)| c).collect(),
            StmtKind::LogicalIf { cond, .. } => vec![cond],
            StmtKind::SelectCase { selector, .. } => vec![selector],
            _ => return Ok(None),
        };
        if !conds.into_iter().any(|c| self.condition_lifted(c)) {
            return Ok(None);
        }
        let mut out = s.clone();
        let mut split = false;
        let mut ty = Type::Bool;
        let cond = match &mut out.kind {
            StmtKind::If {
                arms, else_body, ..
            } if !arms.is_empty() => {
                let later = arms
                    .iter()
                    .skip(1)
                    .position(|(c, _)| self.condition_lifted(c));
                if let Some(k) = later {
                    let rest = arms.split_off(k + 1);
                    let span = rest[0].0.span;
                    let else_body_rest = else_body.take();
                    *else_body = Some(vec![Stmt {
                        label: None,
                        span,
                        kind: StmtKind::If {
                            name: None,
                            arms: rest,
                            else_body: else_body_rest,
                        },
                    }]);
                    split = true;
                }
                &mut arms[0].0
            }
            StmtKind::LogicalIf { cond, .. } => cond,
            StmtKind::SelectCase {
                selector, cases, ..
            } => {
                if !self.condition_lifted(selector) {
                    return Ok(None);
                }
                // The selector's type is that of its CASE values (constants,
                // typed without lowering the selector); any integer kind
                // is compared exactly as INTEGER(8).
                let value = cases.iter().find_map(|(c, _)| match c {
                    CaseSelector::Items(items) => items.iter().find_map(|it| match it {
                        CaseItem::Value(v) => Some(v),
                        CaseItem::Range(lo, hi) => lo.as_ref().or(hi.as_ref()),
                    }),
                    CaseSelector::Default => None,
                });
                ty = match value.map(|v| self.type_and_rank(v)).transpose()? {
                    Some((Type::Char, _)) => return Ok(None),
                    Some((Type::Bool, _)) => Type::Bool,
                    _ => Type::I64,
                };
                selector
            }
            _ => return Ok(None),
        };
        if !self.condition_lifted(cond) {
            return Ok(split.then_some(out));
        }
        let t = self.temp("cond", ty);
        let text = self.proc.var(t).name.clone();
        self.vars.insert(text.clone(), t);
        let span = cond.span;
        let name = Expr {
            kind: ExprKind::Name(Name { text, span }),
            span,
        };
        let value = std::mem::replace(cond, name.clone());
        let assign = std::rc::Rc::new(Stmt {
            label: None,
            span: s.span,
            kind: StmtKind::Assign {
                target: name,
                value,
            },
        });
        self.lifted.push(assign.clone());
        self.stmt(&assign)?;
        Ok(Some(out))
    }

    /// True when an expression references an array-valued user function.
    pub(super) fn has_array_function(&self, e: &Expr) -> bool {
        if self.array_function(e).is_some() {
            return true;
        }
        match &e.kind {
            ExprKind::Apply { args, .. } => args.iter().any(|a| self.arg_has_array_function(a)),
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.has_array_function(a),
            ExprKind::Binary(_, a, b) => self.has_array_function(a) || self.has_array_function(b),
            ExprKind::ArrayConstructor(items) => items.iter().any(|x| self.has_array_function(x)),
            _ => false,
        }
    }

    fn arg_has_array_function(&self, a: &Arg) -> bool {
        match &a.value {
            ArgValue::Expr(x) => self.has_array_function(x),
            ArgValue::Range { lo, hi, stride } => [lo, hi, stride]
                .into_iter()
                .flatten()
                .any(|x| self.has_array_function(x)),
        }
    }

    /// Releases the temporaries of [`Self::lift_array_functions`].
    pub(super) fn release_lifted(&mut self, temps: Vec<VarId>) {
        for t in temps {
            self.emit(Inst::Deallocate(t), None);
        }
    }

    fn lift_args(&mut self, args: &mut [Arg], temps: &mut Vec<VarId>) -> R<()> {
        for a in args {
            match &mut a.value {
                ArgValue::Expr(x) => self.lift_in(x, temps)?,
                ArgValue::Range { lo, hi, stride } => {
                    for x in [lo, hi, stride].into_iter().flatten() {
                        self.lift_in(x, temps)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Lifts the array-valued function references of an expression,
    /// innermost first.
    pub(super) fn lift_in(&mut self, e: &mut Expr, temps: &mut Vec<VarId>) -> R<()> {
        match &mut e.kind {
            ExprKind::Apply { args, .. } => self.lift_args(args, temps)?,
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.lift_in(a, temps)?,
            ExprKind::Binary(_, a, b) => {
                self.lift_in(a, temps)?;
                self.lift_in(b, temps)?;
            }
            ExprKind::ArrayConstructor(items) => {
                for x in items {
                    self.lift_in(x, temps)?;
                }
            }
            _ => {}
        }
        let Some(unit) = self.array_function(e) else {
            return Ok(());
        };
        let t = self.call_into_temp(e, unit)?;
        temps.push(t);
        let name = self.proc.var(t).name.clone();
        self.vars.insert(name.clone(), t);
        e.kind = ExprKind::Name(Name {
            text: name,
            span: e.span,
        });
        Ok(())
    }

    /// Calls the array-valued function `e` (of unit `unit`) into a fresh
    /// ALLOCATABLE temporary with the bounds the callee declares for its
    /// result.
    fn call_into_temp(&mut self, e: &Expr, unit: usize) -> R<VarId> {
        let ExprKind::Apply { name, args } = &e.kind else {
            unreachable!("array_function gives calls only")
        };
        let sig = self.prog.sigs[unit].clone();
        let (ty, rank) = sig.array_result.expect("an array function");
        if sig.allocatable_result {
            return self.call_into_allocatable_temp(unit, name, args, (ty, rank));
        }
        let result = sig.params.len() - 1;
        // The entry values of the callee's parameters its result's bounds
        // read, from the actual arguments.
        let mut known: HashMap<VarId, Value> = HashMap::new();
        let mut wanted = Vec::new();
        for d in &sig.dims[result] {
            bound_vars(&d.lower, &mut wanted);
            if let Some(u) = &d.upper {
                bound_vars(u, &mut wanted);
            }
        }
        for v in wanted {
            let x = match sig.param_vars.iter().position(|&p| p == v) {
                Some(k) => self.callee_param_value(&sig, k, name, args)?,
                None => {
                    let Some(&(_, i, d)) = sig.assumed_extents.iter().find(|m| m.0 == v) else {
                        return Err(self.unsized_result(name));
                    };
                    let x = actual_of(&sig, i, args).cloned();
                    match x.as_ref().and_then(|x| self.array_source(x)) {
                        Some(src) => {
                            let ext = self.extents(&src)?;
                            match ext.get(d) {
                                Some(&e) => self.val(Inst::Load(e), Type::I64),
                                None => return Err(self.unsized_result(name)),
                            }
                        }
                        None => return Err(self.unsized_result(name)),
                    }
                }
            };
            known.insert(v, x);
        }
        let mut bounds = Vec::new();
        for d in &sig.dims[result] {
            let Some(upper) = &d.upper else {
                return Err(self.unsized_result(name));
            };
            let lo = self.bound_value(&d.lower, &known);
            let hi = self.bound_value(upper, &known);
            bounds.push((lo, hi));
        }
        debug_assert_eq!(bounds.len(), rank);
        let t = self.allocatable_temp("fres", ty, rank);
        self.emit(Inst::Allocate(t, bounds), None);
        self.call_with_result(unit, name, args, t)?;
        Ok(t)
    }

    /// A fresh ALLOCATABLE temporary (unallocated) of element type `ty`
    /// and rank `rank`.
    pub(super) fn allocatable_temp(&mut self, prefix: &str, ty: Type, rank: usize) -> VarId {
        let t = self.temp(prefix, ty);
        let var = &mut self.proc.vars[t.index()];
        // An ALLOCATABLE array's dims give only its rank.
        var.dims = vec![
            Dim {
                lower: Bound::Const(1),
                upper: Some(Bound::Const(1)),
            };
            rank
        ];
        var.storage = Storage::Allocatable;
        t
    }

    /// Calls the array-valued function `name` (unit `unit`) with the
    /// array `result` as its result argument.
    pub(super) fn call_with_result(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
        result: VarId,
    ) -> R<()> {
        self.prepare_actuals(args)?;
        let (mut call_args, callee, copies) = self.call_args_copied(unit, name, args)?;
        call_args.push(CallArg::Var(result));
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)
    }

    /// The marker variable ([`super::assumed_extent_var`]) of dimension
    /// `d` (0-based) of the assumed-shape dummy `v`, created on first use;
    /// `None` when `v` is not an assumed-shape dummy.
    fn assumed_extent_marker(&mut self, v: VarId, d: usize) -> Option<VarId> {
        let var = self.proc.var(v);
        if !matches!(var.storage, Storage::Param(_)) {
            return None;
        }
        let name = var.name.clone();
        let decl = self.u().scope.var(&name)?;
        if !matches!(
            decl.dims.as_deref().and_then(|x| x.get(d)),
            Some(DimSpec::AssumedShape { .. })
        ) {
            return None;
        }
        let marker = super::assumed_extent_var(&name, d + 1);
        if let Some(&m) = self.vars.get(&marker) {
            return Some(m);
        }
        let m = self.proc.add_var(Var {
            name: marker.clone(),
            ty: Type::I64,
            dims: Vec::new(),
            char_len: None,
            storage: Storage::Local,
        });
        self.vars.insert(marker, m);
        Some(m)
    }

    /// True when a bound reads a marker variable.
    fn reads_marker(&self, b: &Bound) -> bool {
        let mut vars = Vec::new();
        bound_vars(b, &mut vars);
        vars.iter().any(|&v| {
            !matches!(self.proc.var(v).storage, Storage::Param(_))
                && super::parse_assumed_extent_var(&self.proc.var(v).name).is_some()
        })
    }

    /// Arrays declared with the extent of an assumed-shape dummy that no
    /// parameter carries (`y(size(x))` with `x(:)`), at procedure entry:
    /// a parameter (the function result, an explicit-shape dummy) takes
    /// that extent as of assumed size, the storage its caller gives being
    /// sized from the actual's extent; a local array is created now and
    /// allocated ([`Self::allocate_if_runtime_sized`]).
    pub(super) fn runtime_sized_declarations(&mut self) {
        for p in self.proc.params.clone() {
            let dims = self.proc.var(p).dims.clone();
            let Some(last) = dims.len().checked_sub(1) else {
                continue;
            };
            let inner = dims.iter().enumerate().any(|(k, d)| {
                self.reads_marker(&d.lower)
                    || (k < last && d.upper.as_ref().is_some_and(|u| self.reads_marker(u)))
            });
            let name = self.proc.var(p).name.clone();
            if inner {
                let span = self.name_span(&name);
                self.err(
                    span,
                    format!("unsupported Fortran: `{name}` takes the extent of an assumed-shape dummy in a lower bound or in a dimension other than its last"),
                );
            } else if dims[last]
                .upper
                .as_ref()
                .is_some_and(|u| self.reads_marker(u))
            {
                self.proc.vars[p.index()].dims[last].upper = None;
            }
        }
        let scope = &self.prog.units[self.unit].scope;
        let mut locals: Vec<Name> = scope
            .syms
            .iter()
            .filter_map(|(n, s)| match s {
                Sym::Var(d)
                    if d.arg.is_none()
                        && d.global.is_none()
                        && d.allocatable.is_none()
                        && d.dims.as_ref().is_some_and(|ds| {
                            ds.iter().any(|x| match x {
                                DimSpec::Explicit { lower, upper } => {
                                    mentions_size(upper)
                                        || lower.as_ref().is_some_and(mentions_size)
                                }
                                _ => false,
                            })
                        }) =>
                {
                    Some(Name {
                        text: n.clone(),
                        span: d.span,
                    })
                }
                _ => None,
            })
            .collect();
        locals.sort_by(|a, b| a.text.cmp(&b.text));
        for n in locals {
            if !self.vars.contains_key(&n.text) {
                let _ = self.resolve(&n);
            }
        }
    }

    /// Makes the local array `v` just created ALLOCATABLE and allocates it
    /// when its declared bounds read a marker variable (an automatic array
    /// `w(size(x))` with `x(:)`): the bounds are evaluated from the
    /// parameters' entry values and the dummy's extent. It is released at
    /// return like any allocatable local.
    pub(super) fn allocate_if_runtime_sized(&mut self, v: VarId) -> R<()> {
        let var = self.proc.var(v);
        if !matches!(var.storage, Storage::Local)
            || !var.dims.iter().any(|d| {
                self.reads_marker(&d.lower)
                    || d.upper.as_ref().is_some_and(|u| self.reads_marker(u))
            })
        {
            return Ok(());
        }
        let dims = var.dims.clone();
        let mut wanted = Vec::new();
        for d in &dims {
            bound_vars(&d.lower, &mut wanted);
            if let Some(u) = &d.upper {
                bound_vars(u, &mut wanted);
            }
        }
        let mut known = HashMap::new();
        for w in wanted {
            let read = self.proc.var(w);
            let x = match super::parse_assumed_extent_var(&read.name) {
                Some((dummy, k)) if !matches!(read.storage, Storage::Param(_)) => {
                    let x = self.vars[dummy];
                    self.val(Inst::DimExtent(x, k as u32 - 1), Type::I64)
                }
                _ => {
                    let ty = read.ty;
                    let x = self.val(Inst::Load(w), ty);
                    self.convert(x, ty, Type::I64)
                }
            };
            known.insert(w, x);
        }
        let mut bounds = Vec::new();
        for d in &dims {
            let lo = self.bound_value(&d.lower, &known);
            let hi = match &d.upper {
                Some(u) => self.bound_value(u, &known),
                None => unreachable!("a local array has every upper bound"),
            };
            bounds.push((lo, hi));
        }
        let var = &mut self.proc.vars[v.index()];
        var.dims = vec![
            Dim {
                lower: Bound::Const(1),
                upper: Some(Bound::Const(1)),
            };
            dims.len()
        ];
        var.storage = Storage::Allocatable;
        self.emit(Inst::Allocate(v, bounds), None);
        Ok(())
    }

    fn unsized_result(&mut self, name: &Name) -> super::lowerer::Reported {
        self.err(
            name.span,
            format!(
                "unsupported Fortran: the result of `{}` in an expression has bounds that are not constants, integer dummies or extents of assumed-shape dummies",
                name.text
            ),
        )
    }

    /// The value (I64) the callee's `k`-th parameter has at entry: a
    /// scalar integer actual argument, or an extent of an assumed-shape
    /// actual.
    fn callee_param_value(
        &mut self,
        sig: &super::Sig,
        k: usize,
        name: &Name,
        args: &[Arg],
    ) -> R<Value> {
        let actual = |i: usize| actual_of(sig, i, args);
        for (i, d) in sig.dummies.iter().enumerate() {
            if d.params.first() == Some(&k) && sig.params[k].1 == 0 {
                if let Some(x) = actual(i) {
                    let x = x.clone();
                    let (v, t) = self.integer(&x)?;
                    return Ok(self.convert(v, t, Type::I64));
                }
            }
            if let Some(j) = d.extents.iter().position(|&p| p == k) {
                if let Some(x) = actual(i) {
                    let x = x.clone();
                    if let Some(src) = self.array_source(&x) {
                        let ext = self.extents(&src)?;
                        return Ok(self.val(Inst::Load(ext[j]), Type::I64));
                    }
                }
            }
        }
        Err(self.unsized_result(name))
    }

    /// `size(x)` or `size(x, k)` in a declared bound: the extents of the
    /// array `x` declared before (explicit shape, or an assumed-shape
    /// dimension but the last, whose extent is a hidden argument).
    pub(super) fn size_bound(&mut self, e: &Expr, args: &[Arg]) -> R<Bound> {
        let unsupported = |this: &mut Self| {
            this.err(
                e.span,
                "unsupported Fortran: SIZE in an array bound of an array whose extent is assumed (the last dimension of an assumed-shape or assumed-size array)",
            )
        };
        let (
            Some(Arg {
                value: ArgValue::Expr(x),
                keyword: None,
            }),
            rest,
        ) = (args.first(), args.get(1..).unwrap_or_default())
        else {
            return Err(unsupported(self));
        };
        let ExprKind::Name(n) = &x.kind else {
            return Err(unsupported(self));
        };
        // An array of structures: the extents of its first leaf variable,
        // whose last dimensions are the structures' ([`StructDecl`]).
        let (v, first) = match self.resolve(n)? {
            Resolved::Var(v) if self.proc.var(v).is_array() => (v, 0),
            Resolved::Struct(StructDecl {
                leaves,
                dims: Some(sdims),
                ..
            }) => {
                let leaf = Name {
                    text: leaves[0].clone(),
                    span: n.span,
                };
                match self.resolve(&leaf)? {
                    Resolved::Var(v) if self.proc.var(v).dims.len() >= sdims.len() => {
                        (v, self.proc.var(v).dims.len() - sdims.len())
                    }
                    _ => return Err(unsupported(self)),
                }
            }
            _ => return Err(unsupported(self)),
        };
        let dims = self.proc.var(v).dims[first..].to_vec();
        let which: Vec<usize> = match rest {
            [] => (0..dims.len()).collect(),
            [Arg {
                value: ArgValue::Expr(k),
                ..
            }] => {
                let k = self.fold(k)?.as_int().unwrap_or(0);
                if k < 1 || k as usize > dims.len() {
                    return Err(self.err(
                        e.span,
                        format!("`dim={k}` of `size` is outside 1..{}", dims.len()),
                    ));
                }
                vec![k as usize - 1]
            }
            _ => return Err(unsupported(self)),
        };
        let mut size = Bound::Const(1);
        for d in which {
            let Some(upper) = dims[d].upper.clone() else {
                // The last extent of an assumed-shape dummy: a marker
                // variable ([`Self::runtime_sized_declarations`]).
                match self.assumed_extent_marker(v, first + d) {
                    Some(m) => {
                        size = Bound::Mul(Box::new(size), Box::new(Bound::Var(m)));
                        continue;
                    }
                    None => return Err(unsupported(self)),
                }
            };
            let extent = Bound::Max(
                Box::new(Bound::Add(
                    Box::new(Bound::Sub(Box::new(upper), Box::new(dims[d].lower.clone()))),
                    Box::new(Bound::Const(1)),
                )),
                Box::new(Bound::Const(0)),
            );
            size = Bound::Mul(Box::new(size), Box::new(extent));
        }
        Ok(size)
    }

    /// Emits the value (I64) of a bound whose variables are `known`.
    fn bound_value(&mut self, b: &Bound, known: &HashMap<VarId, Value>) -> Value {
        let i64t = Type::I64;
        let bin = |this: &mut Self, op, x: &Bound, y: &Bound| {
            let x = this.bound_value(x, known);
            let y = this.bound_value(y, known);
            this.val(Inst::Binary(op, x, y), i64t)
        };
        match b {
            Bound::Const(c) => self.int(*c, i64t),
            Bound::Var(v) => known[v],
            Bound::Neg(a) => {
                let zero = self.int(0, i64t);
                let a = self.bound_value(a, known);
                self.val(Inst::Binary(BinaryOp::Sub, zero, a), i64t)
            }
            Bound::Add(x, y) => bin(self, BinaryOp::Add, x, y),
            Bound::Sub(x, y) => bin(self, BinaryOp::Sub, x, y),
            Bound::Mul(x, y) => bin(self, BinaryOp::Mul, x, y),
            Bound::Div(x, y) => {
                // A zero divisor gives 0, as in `Bound::eval`.
                let x = self.bound_value(x, known);
                let y = self.bound_value(y, known);
                let zero = self.int(0, i64t);
                let one = self.int(1, i64t);
                let is_zero = self.val(Inst::Cmp(CmpOp::Eq, y, zero), Type::Bool);
                let safe = self.val(Inst::Select(is_zero, one, y), i64t);
                let q = self.val(Inst::Binary(BinaryOp::Div, x, safe), i64t);
                self.val(Inst::Select(is_zero, zero, q), i64t)
            }
            Bound::Max(x, y) | Bound::Min(x, y) => {
                let a = self.bound_value(x, known);
                let c = self.bound_value(y, known);
                let op = if matches!(b, Bound::Max(..)) {
                    CmpOp::Gt
                } else {
                    CmpOp::Lt
                };
                let pick = self.val(Inst::Cmp(op, a, c), Type::Bool);
                self.val(Inst::Select(pick, a, c), i64t)
            }
        }
    }
}

/// The actual argument (an expression) a call gives the `i`-th dummy of
/// `sig`, by keyword or position.
fn actual_of<'e>(sig: &super::Sig, i: usize, args: &'e [Arg]) -> Option<&'e Expr> {
    let d = &sig.dummies[i];
    let pos = args.iter().position(|a| match &a.keyword {
        Some(kw) => kw.text == d.name,
        None => false,
    });
    let a = match pos {
        Some(p) => &args[p],
        None => args.get(i).filter(|a| a.keyword.is_none())?,
    };
    match &a.value {
        ArgValue::Expr(x) => Some(x),
        ArgValue::Range { .. } => None,
    }
}

/// True when an AST expression references SIZE.
fn mentions_size(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Apply { name, args } => {
            name.text == "size"
                || args.iter().any(|a| match &a.value {
                    ArgValue::Expr(x) => mentions_size(x),
                    ArgValue::Range { lo, hi, stride } => {
                        [lo, hi, stride].into_iter().flatten().any(mentions_size)
                    }
                })
        }
        ExprKind::Unary(_, a) | ExprKind::Paren(a) => mentions_size(a),
        ExprKind::Binary(_, a, b) => mentions_size(a) || mentions_size(b),
        _ => false,
    }
}

impl super::Sig {
    /// True when the caller may give the target of `y = f(...)` as the
    /// array result: the result's shape is known before the call and
    /// is not read from an actual's extent.
    fn result_given_target(&self) -> bool {
        !self.allocatable_result && !self.result_reads_extents()
    }

    /// True when the array result's bounds read the extent of an actual
    /// argument that no parameter carries ([`super::Sig::assumed_extents`]).
    pub(super) fn result_reads_extents(&self) -> bool {
        let Some(dims) = self.dims.last().filter(|_| self.array_result.is_some()) else {
            return false;
        };
        let mut vars = Vec::new();
        for d in dims {
            bound_vars(&d.lower, &mut vars);
            if let Some(u) = &d.upper {
                bound_vars(u, &mut vars);
            }
        }
        vars.iter()
            .any(|v| self.assumed_extents.iter().any(|m| m.0 == *v))
    }
}

/// The variables a bound reads.
fn bound_vars(b: &Bound, out: &mut Vec<VarId>) {
    match b {
        Bound::Const(_) => {}
        Bound::Var(v) => {
            if !out.contains(v) {
                out.push(*v);
            }
        }
        Bound::Neg(a) => bound_vars(a, out),
        Bound::Add(x, y)
        | Bound::Sub(x, y)
        | Bound::Mul(x, y)
        | Bound::Div(x, y)
        | Bound::Max(x, y)
        | Bound::Min(x, y) => {
            bound_vars(x, out);
            bound_vars(y, out);
        }
    }
}
