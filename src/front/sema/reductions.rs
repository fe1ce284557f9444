//! Array reductions, each lowered into a loop that accumulates into a
//! scalar temporary before the statement that uses it: SUM, PRODUCT,
//! MAXVAL, MINVAL (with DIM= and MASK=), DOT_PRODUCT, NORM2, ANY, ALL,
//! COUNT, MAXLOC and MINLOC (the first position, 1-based within the
//! argument, 0 when the mask selects nothing), FINDLOC (the first or with
//! BACK= the last position of an element equal to VALUE=, 0 when there is
//! none); and the elemental MERGE and HYPOT. Everything is ordinary IR (arithmetic, comparisons, SELECT), so
//! tangents and adjoints follow.
//!
//! DIM= of a rank-1 argument gives a scalar, lowered here; DIM= of a
//! higher-rank argument and MAXLOC / MINLOC of a higher-rank argument give
//! arrays, lowered element by element through [`Lowerer::reduce_element`]
//! (see the transform module).

use super::super::ast::{Arg, ArgValue, Expr, Name};
use super::consts::{numeric_inquiry, promote, type_name};
use super::intrinsics::is_location;
use super::lowerer::{Lowerer, R};
use super::transform::zero_of;
use adjit_ir::{BinaryOp, CmpOp, Const, Inst, Type, UnaryOp, Value, VarId};

/// The arguments of a reduction, by meaning.
pub(super) struct ReductionArgs<'e> {
    /// The array (both vectors for DOT_PRODUCT).
    pub arrays: Vec<&'e Expr>,
    /// MASK= of SUM, PRODUCT, MAXVAL, MINVAL, MAXLOC, MINLOC.
    pub mask: Option<&'e Expr>,
    /// DIM=.
    pub dim: Option<&'e Expr>,
    /// KIND= of COUNT, MAXLOC, MINLOC and FINDLOC.
    pub kind: Option<&'e Expr>,
    /// VALUE= of FINDLOC.
    pub value: Option<&'e Expr>,
    /// BACK= of FINDLOC.
    pub back: Option<&'e Expr>,
}

/// The keyword a positional argument of FINDLOC stands for, by position
/// (1-based): `findloc(array, value, dim, mask, kind, back)`.
fn findloc_keyword(position: usize) -> Option<&'static str> {
    ["array", "value", "dim", "mask", "kind", "back"]
        .get(position.wrapping_sub(1))
        .copied()
}

/// True for the reductions whose array argument is logical.
fn logical_reduction(which: &str) -> bool {
    matches!(which, "any" | "all" | "count")
}

/// Where a location reduction (MAXLOC, MINLOC, FINDLOC) keeps its result
/// while it runs.
#[derive(Clone, Copy)]
struct Found<'a> {
    /// The 1-based subscripts of the element taken so far (0: none yet);
    /// empty for the other reductions.
    loc: &'a [VarId],
    /// The dimension of the argument each of `loc` reports.
    dims: &'a [usize],
    /// FINDLOC's BACK= flag (a logical temporary).
    back: Option<VarId>,
}

/// The one of a type.
fn one_of(t: Type) -> Const {
    if t.is_float() {
        Const::Float(1.0)
    } else {
        Const::Int(1)
    }
}

impl Lowerer<'_, '_> {
    /// Sorts the arguments of a reduction (positional and keyword).
    pub(super) fn reduction_args<'e>(
        &mut self,
        name: &Name,
        args: &'e [Arg],
    ) -> R<ReductionArgs<'e>> {
        let which = name.text.as_str();
        let mut out = ReductionArgs {
            arrays: Vec::new(),
            mask: None,
            dim: None,
            kind: None,
            value: None,
            back: None,
        };
        let arrays = if which == "dot_product" { 2 } else { 1 };
        let mut positional = 0;
        for a in args {
            let ArgValue::Expr(x) = &a.value else {
                return Err(self.err(
                    name.span,
                    format!("a range is not an argument of `{which}`"),
                ));
            };
            let key = match &a.keyword {
                Some(k) => k.text.clone(),
                None if which == "findloc" => {
                    positional += 1;
                    findloc_keyword(positional)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            self.err(x.span, format!("too many arguments to `{which}`"))
                        })?
                }
                None => {
                    positional += 1;
                    match positional {
                        p if p <= arrays => "array".to_string(),
                        // `sum(a, mask)`: a logical second argument is the mask.
                        2 if !logical_reduction(which)
                            && which != "norm2"
                            && self.type_and_rank(x)?.0 == Type::Bool =>
                        {
                            "mask".to_string()
                        }
                        2 => "dim".to_string(),
                        3 if which == "count" => "kind".to_string(),
                        3 => "mask".to_string(),
                        _ => {
                            return Err(self.err(x.span, format!("too many arguments to `{which}`")))
                        }
                    }
                }
            };
            match key.as_str() {
                "array" | "vector_a" | "vector_b" | "x" => out.arrays.push(x),
                "mask" if logical_reduction(which) => out.arrays.push(x),
                "mask" if which != "dot_product" && which != "norm2" => out.mask = Some(x),
                "dim" if which != "dot_product" => out.dim = Some(x),
                "kind" if which == "count" || is_location(which) => out.kind = Some(x),
                "value" if which == "findloc" => out.value = Some(x),
                "back" if which == "findloc" => out.back = Some(x),
                k => {
                    let span = a.keyword.as_ref().map_or(x.span, |k| k.span);
                    return Err(self.err(
                        span,
                        format!("unsupported Fortran: `{k}=` argument of `{which}`"),
                    ));
                }
            }
        }
        if out.arrays.len() != arrays {
            return Err(self.err(
                name.span,
                format!("`{which}` takes {arrays} array argument(s)"),
            ));
        }
        if which == "findloc" && out.value.is_none() {
            return Err(self.err(name.span, "`findloc` needs a `value=` argument"));
        }
        Ok(out)
    }

    /// Lowers a reduction into a fresh scalar temporary.
    pub(super) fn reduce(&mut self, e: &Expr, name: &Name, args: &[Arg]) -> R<VarId> {
        let which = name.text.as_str();
        let r = self.reduction_args(name, args)?;
        let first = r.arrays[0];
        let Some(src) = self.array_source(first) else {
            return Err(self.err(
                first.span,
                format!("the argument of `{which}` is not an array"),
            ));
        };
        let (elem_ty, rank) = self.type_and_rank(first)?;
        if let Some(d) = r.dim {
            let k = self.fold(d)?.as_int();
            if rank != 1 || k != Some(1) {
                return Err(self.err(
                    d.span,
                    format!(
                        "unsupported Fortran: `dim=` of `{which}` other than 1 for a rank-1 array (an array-valued reduction)"
                    ),
                ));
            }
        }
        if is_location(which) && rank != 1 {
            return Err(self.err(
                first.span,
                format!("unsupported Fortran: `{which}` of a rank-{rank} array (an array result)"),
            ));
        }
        let extents = self.extents(&src)?;
        let (ty, acc, back) = self.start_reduction(e, which, &r, elem_ty)?;
        let loc = self.loc_temps(which, 1);
        let mask: Vec<(&Expr, bool)> = r.mask.iter().map(|m| (*m, false)).collect();
        let arrays = r.arrays.clone();
        let found = Found {
            loc: &loc,
            dims: &[0],
            back,
        };
        self.for_positions(&extents, &mut |this, pos| {
            this.reduction_step(which, &arrays, &mask, pos, (ty, acc), &found)
        })?;
        self.finish_reduction(which, acc, ty);
        Ok(loc.first().copied().unwrap_or(acc))
    }

    /// One element of an array-valued reduction (see the transform
    /// module): DIM= of a rank >= 2 argument, at the result position `pos`
    /// (I64 temporaries), or MAXLOC / MINLOC of a rank >= 2 argument
    /// without DIM= (`pos` selects the dimension reported).
    pub(super) fn reduce_element(
        &mut self,
        e: &Expr,
        name: &Name,
        args: &[Arg],
        pos: &[VarId],
    ) -> R<VarId> {
        let which = name.text.as_str();
        let r = self.reduction_args(name, args)?;
        let first = r.arrays[0];
        let (elem_ty, rank) = self.type_and_rank(first)?;
        let (ty, acc, back) = self.start_reduction(e, which, &r, elem_ty)?;
        let extents = self.shape_of(first)?;
        let mask: Vec<(&Expr, bool)> = r.mask.iter().map(|m| (*m, false)).collect();
        let arrays = r.arrays.clone();
        let i64t = Type::I64;
        if r.dim.is_none() && (!is_location(which) || pos.is_empty()) {
            // Taken as array-valued for a second positional argument that
            // turned out to be a MASK (a logical scalar expression).
            return Err(self.err(
                e.span,
                format!(
                    "`{which}` with a logical second argument of a rank {rank} array: \
                     write it as `mask=`"
                ),
            ));
        }
        let Some(d) = r.dim else {
            // MAXLOC / MINLOC of the whole array: every subscript of the
            // extreme element, the one at `pos` returned.
            let loc = self.loc_temps(which, rank);
            let dims: Vec<usize> = (0..rank).collect();
            let found = Found {
                loc: &loc,
                dims: &dims,
                back,
            };
            self.for_positions(&extents, &mut |this, q| {
                this.reduction_step(which, &arrays, &mask, q, (ty, acc), &found)
            })?;
            let p = self.val(Inst::Load(pos[0]), i64t);
            let mut v = self.val(Inst::Load(loc[0]), Type::I32);
            for (k, &l) in loc.iter().enumerate().skip(1) {
                let kk = self.int(k as i64, i64t);
                let here = self.val(Inst::Cmp(CmpOp::Eq, p, kk), Type::Bool);
                let x = self.val(Inst::Load(l), Type::I32);
                v = self.val(Inst::Select(here, x, v), Type::I32);
            }
            let t = self.temp("loc", Type::I32);
            self.emit(Inst::Store(t, v), None);
            return Ok(t);
        };
        let d = self.const_dim(which, d, rank)?;
        let loc = self.loc_temps(which, 1);
        let found = Found {
            loc: &loc,
            dims: &[d],
            back,
        };
        self.for_positions(&[extents[d]], &mut |this, k| {
            let mut full = this.load_all(pos);
            full.insert(d, k[0]);
            this.reduction_step(which, &arrays, &mask, &full, (ty, acc), &found)
        })?;
        self.finish_reduction(which, acc, ty);
        Ok(loc.first().copied().unwrap_or(acc))
    }

    /// The accumulator of a reduction, set to its initial value (for
    /// FINDLOC, to the VALUE= sought, in the array's type), with its type,
    /// and FINDLOC's BACK= evaluated once into a temporary.
    fn start_reduction(
        &mut self,
        e: &Expr,
        which: &str,
        r: &ReductionArgs,
        elem_ty: Type,
    ) -> R<(Type, VarId, Option<VarId>)> {
        if which != "findloc" && logical_reduction(which) != (elem_ty == Type::Bool) {
            return Err(self.err(
                r.arrays[0].span,
                format!("`{which}` of a {} array", type_name(elem_ty)),
            ));
        }
        let (ty, init) = self.reduction_type(e, which, r, elem_ty)?;
        let acc = self.temp("acc", ty);
        let c = match r.value {
            Some(v) if ty == Type::Bool => self.logical(v)?,
            Some(v) => self.num_as(v, ty)?,
            None => self.konst(init, ty),
        };
        self.emit(Inst::Store(acc, c), None);
        let back = match r.back {
            Some(b) => {
                let flag = self.logical(b)?;
                let t = self.temp("back", Type::Bool);
                self.emit(Inst::Store(t, flag), None);
                Some(t)
            }
            None => None,
        };
        Ok((ty, acc, back))
    }

    /// The result type and initial value of a reduction.
    fn reduction_type(
        &mut self,
        e: &Expr,
        which: &str,
        r: &ReductionArgs,
        elem_ty: Type,
    ) -> R<(Type, Const)> {
        let first = r.arrays[0];
        let ty = match which {
            "dot_product" => promote(elem_ty, self.static_type(r.arrays[1])?),
            "any" | "all" => Type::Bool,
            "count" => match r.kind {
                Some(k) => {
                    let k = self.fold(k)?.as_int().unwrap_or(4);
                    super::consts::int_kind(k).unwrap_or(Type::I32)
                }
                None => Type::I32,
            },
            "norm2" if !elem_ty.is_float() => {
                return Err(self.err(first.span, "the argument of `norm2` must be real"))
            }
            "findloc" if elem_ty == Type::Char => {
                return Err(self.err(
                    first.span,
                    "unsupported Fortran: `findloc` of a CHARACTER array",
                ))
            }
            _ => elem_ty,
        };
        let init = match which {
            "sum" | "dot_product" | "norm2" | "count" => zero_of(ty),
            // Replaced by VALUE= (`start_reduction`).
            "findloc" if ty == Type::Bool => Const::Bool(false),
            "findloc" => zero_of(ty),
            "product" => one_of(ty),
            "any" => Const::Bool(false),
            "all" => Const::Bool(true),
            "maxval" | "minval" | "maxloc" | "minloc" => {
                let huge = numeric_inquiry("huge", ty).and_then(|c| c.to_ir());
                match (which, huge) {
                    ("maxval" | "maxloc", Some(Const::Float(h))) => Const::Float(-h),
                    ("maxval" | "maxloc", Some(Const::Int(h))) => Const::Int(-h - 1),
                    (_, Some(h)) => h,
                    _ => return Err(self.err(e.span, format!("`{which}` of {}", type_name(ty)))),
                }
            }
            _ => unreachable!("a reduction"),
        };
        Ok((ty, init))
    }

    /// The location temporaries of MAXLOC / MINLOC / FINDLOC (I32, 0 until
    /// an element is taken), `n` of them; none for other reductions.
    fn loc_temps(&mut self, which: &str, n: usize) -> Vec<VarId> {
        if !is_location(which) {
            return Vec::new();
        }
        (0..n)
            .map(|_| {
                let l = self.temp("loc", Type::I32);
                let z = self.int(0, Type::I32);
                self.emit(Inst::Store(l, z), None);
                l
            })
            .collect()
    }

    /// The final step of a reduction (the square root of NORM2).
    fn finish_reduction(&mut self, which: &str, acc: VarId, ty: Type) {
        if which == "norm2" {
            let a = self.val(Inst::Load(acc), ty);
            let s = self.val(Inst::Unary(UnaryOp::Sqrt, a), ty);
            self.emit(Inst::Store(acc, s), None);
        }
    }

    /// One element's contribution to a reduction at the argument position
    /// `pos`, under its mask: accumulated into `acc`, or for MAXLOC /
    /// MINLOC, the extreme value kept in `acc` and the 1-based subscripts
    /// `pos[dims[i]] + 1` of the first extreme element in `loc[i]` (of
    /// `found`), or for FINDLOC those of the first element equal to the
    /// value in `acc` (the last one under BACK=).
    fn reduction_step(
        &mut self,
        which: &str,
        arrays: &[&Expr],
        mask: &[(&Expr, bool)],
        pos: &[Value],
        (ty, acc): (Type, VarId),
        found: &Found,
    ) -> R<()> {
        let Found { loc, dims, back } = *found;
        let (skip, pos) = self.element_mask(mask, pos)?;
        let items: Vec<(&Expr, Vec<Value>)> = arrays.iter().map(|&a| (a, pos.clone())).collect();
        self.at_element(&items, |this, ps| {
            let pos = &ps[0];
            let x = this.reduction_operand(which, arrays, ty)?;
            let a = this.val(Inst::Load(acc), ty);
            if loc.is_empty() {
                let s = this.accumulate(which, a, x, ty);
                this.emit(Inst::Store(acc, s), None);
                return Ok(());
            }
            // The first extreme element: strictly better, or the first
            // element considered.
            let cur = this.val(Inst::Load(loc[0]), Type::I32);
            let zero = this.int(0, Type::I32);
            let none = this.val(Inst::Cmp(CmpOp::Eq, cur, zero), Type::Bool);
            let take = if which == "findloc" {
                // Equal to the value sought, and the first such element
                // (or, under BACK=, any: the last one stays).
                let equal = this.val(Inst::Cmp(CmpOp::Eq, x, a), Type::Bool);
                let fresh = match back {
                    Some(b) => {
                        let b = this.val(Inst::Load(b), Type::Bool);
                        this.val(Inst::Binary(BinaryOp::Or, none, b), Type::Bool)
                    }
                    None => none,
                };
                this.val(Inst::Binary(BinaryOp::And, equal, fresh), Type::Bool)
            } else {
                let op = if which == "maxloc" {
                    CmpOp::Gt
                } else {
                    CmpOp::Lt
                };
                let better = this.val(Inst::Cmp(op, x, a), Type::Bool);
                let take = this.val(Inst::Binary(BinaryOp::Or, none, better), Type::Bool);
                let best = this.val(Inst::Select(take, x, a), ty);
                this.emit(Inst::Store(acc, best), None);
                take
            };
            for (&l, &d) in loc.iter().zip(dims) {
                let one = this.int(1, Type::I64);
                let p1 = this.val(Inst::Binary(BinaryOp::Add, pos[d], one), Type::I64);
                let p1 = this.convert(p1, Type::I64, Type::I32);
                let cur = this.val(Inst::Load(l), Type::I32);
                let at = this.val(Inst::Select(take, p1, cur), Type::I32);
                this.emit(Inst::Store(l, at), None);
            }
            Ok(())
        })?;
        if let Some(skip) = skip {
            self.jump(skip);
            self.switch_to(skip);
        }
        Ok(())
    }

    /// The value one element contributes to a reduction.
    fn reduction_operand(&mut self, which: &str, arrays: &[&Expr], ty: Type) -> R<Value> {
        match which {
            "any" | "all" | "count" => self.logical(arrays[0]),
            "findloc" if ty == Type::Bool => self.logical(arrays[0]),
            "dot_product" => {
                let x = self.num_as(arrays[0], ty)?;
                let y = self.num_as(arrays[1], ty)?;
                Ok(self.val(Inst::Binary(BinaryOp::Mul, x, y), ty))
            }
            "norm2" => {
                let x = self.num_as(arrays[0], ty)?;
                Ok(self.val(Inst::Binary(BinaryOp::Mul, x, x), ty))
            }
            _ => self.num_as(arrays[0], ty),
        }
    }

    /// The accumulator updated with one element's contribution.
    fn accumulate(&mut self, which: &str, a: Value, x: Value, ty: Type) -> Value {
        let op = match which {
            "sum" | "dot_product" | "norm2" => BinaryOp::Add,
            "product" => BinaryOp::Mul,
            "maxval" => BinaryOp::Max,
            "minval" => BinaryOp::Min,
            "any" => BinaryOp::Or,
            "all" => BinaryOp::And,
            _ => {
                // COUNT: add 1 for a true element.
                let one = self.int(1, ty);
                let zero = self.int(0, ty);
                let d = self.val(Inst::Select(x, one, zero), ty);
                return self.val(Inst::Binary(BinaryOp::Add, a, d), ty);
            }
        };
        self.val(Inst::Binary(op, a, x), ty)
    }

    /// MERGE(tsource, fsource, mask), element by element.
    pub(super) fn merge(&mut self, name: &Name, args: &[&Expr]) -> R<(Value, Type)> {
        let [t, f, m] = args else {
            return Err(self.err(name.span, "`merge` takes 3 arguments"));
        };
        let (tv, tt) = self.num(t)?;
        let (fv, ft) = self.num(f)?;
        let c = self.logical(m)?;
        let ty = if tt == Type::Bool || ft == Type::Bool {
            if tt != ft {
                return Err(self.err(f.span, "the sources of `merge` differ in type"));
            }
            Type::Bool
        } else {
            promote(tt, ft)
        };
        let tv = self.convert(tv, tt, ty);
        let fv = self.convert(fv, ft, ty);
        Ok((self.val(Inst::Select(c, tv, fv), ty), ty))
    }

    /// HYPOT(x, y) = sqrt(x**2 + y**2), element by element.
    pub(super) fn hypot(&mut self, name: &Name, args: &[&Expr]) -> R<(Value, Type)> {
        let [x, y] = args else {
            return Err(self.err(name.span, "`hypot` takes 2 arguments"));
        };
        let (xv, xt) = self.num(x)?;
        let (yv, yt) = self.num(y)?;
        let ty = promote(xt, yt);
        if !ty.is_float() {
            return Err(self.err(x.span, "the arguments of `hypot` must be real"));
        }
        let xv = self.convert(xv, xt, ty);
        let yv = self.convert(yv, yt, ty);
        let x2 = self.val(Inst::Binary(BinaryOp::Mul, xv, xv), ty);
        let y2 = self.val(Inst::Binary(BinaryOp::Mul, yv, yv), ty);
        let s = self.val(Inst::Binary(BinaryOp::Add, x2, y2), ty);
        Ok((self.val(Inst::Unary(UnaryOp::Sqrt, s), ty), ty))
    }
}
