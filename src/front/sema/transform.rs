//! Array-valued intrinsics anywhere in an array expression: TRANSPOSE,
//! MATMUL (matrix-matrix, matrix-vector, vector-matrix), RESHAPE (with
//! PAD= and ORDER=), SPREAD, CSHIFT, EOSHIFT (with BOUNDARY=), PACK (with
//! VECTOR=), UNPACK, SHAPE, the reductions SUM, PRODUCT, MAXVAL, MINVAL,
//! NORM2, ANY, ALL and COUNT with DIM= of a rank >= 2 argument, and MAXLOC
//! / MINLOC of rank >= 2 arguments (with or without DIM=).
//!
//! Array expressions are lowered element by element (see [`super::array`]):
//! the loops of the statement give the 0-based position of the element
//! computed. These intrinsics are lowered the same way, without temporary
//! arrays:
//!
//! - a *positional* intrinsic (TRANSPOSE, SPREAD, CSHIFT, EOSHIFT,
//!   RESHAPE) is its argument at another position: before the element is
//!   evaluated, a walk of the expression ([`Lowerer::at_element`]) computes
//!   the position its argument is read at (kept in temporaries, in
//!   [`Lowerer::mapped`]);
//! - a *looped* intrinsic (MATMUL, the array-valued reductions, MAXLOC /
//!   MINLOC, PACK, UNPACK, SHAPE) needs a loop for one element (the sum of
//!   MATMUL, the scan of PACK): the same walk emits that loop and keeps the
//!   element in a scalar temporary, which the expression then reads like a
//!   hoisted reduction.
//!
//! Everything is ordinary IR (loops, arithmetic, SELECT), so tangents and
//! adjoints follow from the lowered code. An element of MATMUL costs one
//! inner loop, an element of PACK or UNPACK a scan of its mask.
//!
//! The shape of such an expression comes from [`Lowerer::call_shape`]
//! (extents in I64 temporaries) and its rank, known without lowering, from
//! [`Lowerer::rank_of`].

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::consts::promote;
use super::intrinsics::{is_location, is_reduction};
use super::lowerer::{Lowerer, Mapped, Operand, Transform, R};
use adjit_ir::{BinaryOp, CmpOp, Const, Inst, Type, Value, VarId};

/// The argument keywords of each intrinsic handled here, in positional
/// order.
pub(super) fn keywords(which: &str) -> &'static [&'static str] {
    match which {
        "transpose" => &["matrix"],
        "matmul" => &["matrix_a", "matrix_b"],
        "reshape" => &["source", "shape", "pad", "order"],
        "spread" => &["source", "dim", "ncopies"],
        "cshift" => &["array", "shift", "dim"],
        "eoshift" => &["array", "shift", "boundary", "dim"],
        "pack" => &["array", "mask", "vector"],
        "unpack" => &["vector", "mask", "field"],
        "shape" => &["source", "kind"],
        _ => &[],
    }
}

/// The arguments of `which` by keyword (positional ones first), or a
/// message naming what is wrong.
pub(super) fn keyed<'e>(which: &str, args: &'e [Arg]) -> Result<Vec<Option<&'e Expr>>, String> {
    let keys = keywords(which);
    let mut out = vec![None; keys.len()];
    for (i, a) in args.iter().enumerate() {
        let ArgValue::Expr(x) = &a.value else {
            return Err(format!("a range is not an argument of `{which}`"));
        };
        let slot = match &a.keyword {
            None => i,
            Some(k) => keys
                .iter()
                .position(|n| *n == k.text)
                .ok_or_else(|| format!("`{which}` has no argument `{}`", k.text))?,
        };
        if slot >= keys.len() {
            return Err(format!("too many arguments to `{which}`"));
        }
        if out[slot].replace(x).is_some() {
            return Err(format!(
                "argument `{}` of `{which}` is given twice",
                keys[slot]
            ));
        }
    }
    Ok(out)
}

/// The I64 temporaries of a list of positions that are pure variables
/// (no code needed): the chosen entries of `pos`.
fn pick(pos: &[VarId], keep: impl Fn(usize) -> bool) -> Vec<VarId> {
    pos.iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, &v)| v)
        .collect()
}

impl Lowerer<'_, '_> {
    /// How `e` is lowered when it is a reference to an array-valued
    /// intrinsic handled here.
    pub(crate) fn transform_kind(&self, e: &Expr) -> Option<Transform> {
        let ExprKind::Apply { name, args } = &e.kind else {
            return None;
        };
        let which = name.text.as_str();
        let kind = match which {
            "transpose" | "spread" | "cshift" | "eoshift" | "reshape" => Transform::Positional,
            "matmul" | "pack" | "unpack" | "shape" => Transform::Looped,
            _ if is_reduction(which) && self.reduction_is_array(which, args) => Transform::Looped,
            _ => return None,
        };
        self.names_intrinsic(name).then_some(kind)
    }

    /// True when a reduction reference gives an array: DIM= of a rank >= 2
    /// argument, or MAXLOC / MINLOC / FINDLOC of a rank >= 2 argument.
    pub(crate) fn reduction_is_array(&self, which: &str, args: &[Arg]) -> bool {
        if which == "dot_product" {
            return false;
        }
        let Some(ArgValue::Expr(first)) = args.first().map(|a| &a.value) else {
            return false;
        };
        let rank = self.rank_of(first);
        if rank < 2 {
            return false;
        }
        if is_location(which) {
            return true;
        }
        self.reduction_dim(which, args).is_some()
    }

    /// The DIM= argument of a reduction (keyword, or the second positional
    /// argument when it is a scalar and not the mask; FINDLOC's third).
    fn reduction_dim<'e>(&self, which: &str, args: &'e [Arg]) -> Option<&'e Expr> {
        let mut positional = 0;
        for a in args {
            let ArgValue::Expr(x) = &a.value else {
                continue;
            };
            match &a.keyword {
                Some(k) if k.text == "dim" => return Some(x),
                Some(_) => {}
                None if which == "findloc" => {
                    positional += 1;
                    if positional == 3 {
                        return Some(x);
                    }
                }
                None => {
                    positional += 1;
                    let logical = matches!(which, "any" | "all" | "count");
                    if positional == 2
                        && (logical || (self.rank_of(x) == 0 && !self.is_logical_literal(x)))
                    {
                        return Some(x);
                    }
                }
            }
        }
        None
    }

    /// True for `.true.` / `.false.` (a scalar mask given by position).
    fn is_logical_literal(&self, e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Logical(_))
    }

    /// The rank of an expression (0 for a scalar), known without lowering
    /// it.
    pub(crate) fn rank_of(&self, e: &Expr) -> usize {
        if matches!(e.kind, ExprKind::ArrayConstructor(_)) {
            return 1;
        }
        let Some(src) = self.array_source(e) else {
            return 0;
        };
        if let Some(call) = src.call {
            return self.call_rank(call);
        }
        match src.args {
            None => self.name_rank(&src.name.text),
            Some(a) => self.section_rank(a),
        }
    }

    /// The rank of an array variable by name.
    fn name_rank(&self, name: &str) -> usize {
        if let Some(&v) = self.vars.get(name) {
            return self.proc.var(v).dims.len();
        }
        self.visible_decl(name)
            .and_then(|(_, d)| d.dims.as_ref())
            .map_or(0, |d| d.len())
    }

    /// The rank of a reference to an intrinsic handled here.
    fn call_rank(&self, call: &Expr) -> usize {
        let ExprKind::Apply { name, args } = &call.kind else {
            return 0;
        };
        let which = name.text.as_str();
        let Ok(a) = keyed(which, args) else {
            // Reductions (their arguments are sorted by `reduction_args`).
            let first = match args.first().map(|a| &a.value) {
                Some(ArgValue::Expr(x)) => self.rank_of(x),
                _ => 0,
            };
            return match which {
                _ if is_location(which) && self.reduction_dim(which, args).is_none() => 1,
                _ => first.saturating_sub(1),
            };
        };
        let rank = |i: usize| a.get(i).copied().flatten().map_or(0, |x| self.rank_of(x));
        match which {
            "transpose" => 2,
            "matmul" => {
                if rank(0) == 2 && rank(1) == 2 {
                    2
                } else {
                    1
                }
            }
            "spread" => rank(0) + 1,
            "cshift" | "eoshift" => rank(0),
            "pack" | "shape" => 1,
            "unpack" => rank(1),
            "reshape" => a[1].and_then(|s| self.shape_arg_len(s)).unwrap_or(1),
            _ => 0,
        }
    }

    /// The number of elements of the SHAPE= argument of RESHAPE, when it
    /// is known without lowering: an array constructor of scalars,
    /// `shape(x)`, or an array of constant size.
    fn shape_arg_len(&self, s: &Expr) -> Option<usize> {
        match &s.kind {
            ExprKind::ArrayConstructor(items)
                if items
                    .iter()
                    .all(|i| !matches!(i.kind, ExprKind::ImpliedDo { .. })) =>
            {
                Some(items.len())
            }
            ExprKind::Apply { name, args }
                if name.text == "shape" && self.names_intrinsic(name) =>
            {
                match args.first().map(|a| &a.value) {
                    Some(ArgValue::Expr(x)) => Some(self.rank_of(x)),
                    _ => None,
                }
            }
            ExprKind::Name(n) => {
                let &v = self.vars.get(&n.text)?;
                let var = self.proc.var(v);
                if var.dims.len() != 1 {
                    return None;
                }
                let d = &var.dims[0];
                let hi = d.upper.as_ref()?.as_const()?;
                let lo = d.lower.as_const()?;
                usize::try_from(hi - lo + 1).ok()
            }
            _ => None,
        }
    }

    /// The arguments of an intrinsic handled here, by keyword, reporting
    /// a misuse.
    fn args_of<'e>(&mut self, name: &Name, args: &'e [Arg]) -> R<Vec<Option<&'e Expr>>> {
        keyed(&name.text, args).map_err(|m| self.err(name.span, m))
    }

    /// A required argument.
    fn required<'e>(&mut self, name: &Name, a: &[Option<&'e Expr>], i: usize) -> R<&'e Expr> {
        a[i].ok_or_else(|| {
            self.err(
                name.span,
                format!(
                    "missing argument `{}` of `{}`",
                    keywords(&name.text)[i],
                    name.text
                ),
            )
        })
    }

    /// The shape of an array expression: its extents in I64 temporaries.
    pub(crate) fn shape_of(&mut self, e: &Expr) -> R<Vec<VarId>> {
        if let Some(n) = scalar_constructor_len(e) {
            let n = self.int(n as i64, Type::I64);
            return Ok(vec![self.keep64(n)]);
        }
        match self.array_source(e) {
            Some(src) => self.extents(&src),
            None => Err(self.err(e.span, "expected an array expression")),
        }
    }

    /// A constant DIM= argument, checked against a rank (0-based).
    pub(super) fn const_dim(&mut self, which: &str, d: &Expr, rank: usize) -> R<usize> {
        let k = self.fold_quiet(d).ok().and_then(|c| c.as_int());
        match k {
            Some(k) if k >= 1 && k as usize <= rank => Ok(k as usize - 1),
            Some(k) => Err(self.err(
                d.span,
                format!("`dim={k}` of `{which}` is outside 1..{rank}"),
            )),
            None => Err(self.err(
                d.span,
                format!("unsupported Fortran: `dim=` of `{which}` that is not a constant"),
            )),
        }
    }

    /// An I64 value kept in a fresh temporary.
    fn keep64(&mut self, x: Value) -> VarId {
        let t = self.temp("n", Type::I64);
        self.emit(Inst::Store(t, x), None);
        t
    }

    /// A scalar integer expression as an I64 value (outside any element).
    fn scalar64(&mut self, e: &Expr) -> R<Value> {
        let saved = self.elem.take();
        let r = self.integer(e);
        self.elem = saved;
        let (v, t) = r?;
        Ok(self.convert(v, t, Type::I64))
    }

    /// The extents of a reference to an intrinsic handled here.
    pub(crate) fn call_shape(&mut self, call: &Expr) -> R<Vec<VarId>> {
        let ExprKind::Apply { name, args } = &call.kind else {
            unreachable!("array_source gives calls only")
        };
        let which = name.text.as_str();
        let i64t = Type::I64;
        if is_reduction(which) {
            let r = self.reduction_args(name, args)?;
            let first = r.arrays[0];
            let mut s = self.shape_of(first)?;
            return match r.dim {
                Some(d) => {
                    let d = self.const_dim(which, d, s.len())?;
                    s.remove(d);
                    Ok(s)
                }
                None => {
                    let n = self.int(s.len() as i64, i64t);
                    Ok(vec![self.keep64(n)])
                }
            };
        }
        let a = self.args_of(name, args)?;
        match which {
            "transpose" => {
                let m = self.required(name, &a, 0)?;
                let s = self.shape_of(m)?;
                if s.len() != 2 {
                    return Err(self.err(m.span, "the argument of `transpose` must have rank 2"));
                }
                Ok(vec![s[1], s[0]])
            }
            "matmul" => {
                let (x, y) = (self.required(name, &a, 0)?, self.required(name, &a, 1)?);
                let (sa, sb) = (self.shape_of(x)?, self.shape_of(y)?);
                match (sa.len(), sb.len()) {
                    (2, 2) => Ok(vec![sa[0], sb[1]]),
                    (2, 1) => Ok(vec![sa[0]]),
                    (1, 2) => Ok(vec![sb[1]]),
                    _ => Err(self.err(
                        name.span,
                        "the ranks of the arguments of `matmul` do not fit",
                    )),
                }
            }
            "spread" => {
                let src = self.required(name, &a, 0)?;
                let dim = self.required(name, &a, 1)?;
                let nc = self.required(name, &a, 2)?;
                let mut s = if self.rank_of(src) == 0 {
                    Vec::new()
                } else {
                    self.shape_of(src)?
                };
                let d = self.const_dim(which, dim, s.len() + 1)?;
                let n = self.scalar64(nc)?;
                let zero = self.int(0, i64t);
                let n = self.val(Inst::Binary(BinaryOp::Max, n, zero), i64t);
                let n = self.keep64(n);
                s.insert(d, n);
                Ok(s)
            }
            "cshift" | "eoshift" => {
                let x = self.required(name, &a, 0)?;
                self.shape_of(x)
            }
            "unpack" => {
                let m = self.required(name, &a, 1)?;
                self.shape_of(m)
            }
            "shape" => {
                let x = self.required(name, &a, 0)?;
                let n = self.int(self.rank_of(x) as i64, i64t);
                Ok(vec![self.keep64(n)])
            }
            "reshape" => {
                let s = self.required(name, &a, 1)?;
                self.reshape_extents(name, s)
            }
            "pack" => {
                if let Some(v) = a[2] {
                    return self.shape_of(v);
                }
                let x = self.required(name, &a, 0)?;
                let m = self.required(name, &a, 1)?;
                let n = self.shape_of(x)?;
                let cnt = self.temp("cnt", i64t);
                let zero = self.int(0, i64t);
                self.emit(Inst::Store(cnt, zero), None);
                self.for_positions(&n, &mut |this, pos| {
                    this.at_element(&[(m, pos.to_vec())], |this, _| {
                        let c = this.logical(m)?;
                        this.count_if(cnt, c);
                        Ok(())
                    })
                })?;
                Ok(vec![cnt])
            }
            _ => unreachable!("transform_kind lists the intrinsics"),
        }
    }

    /// Adds 1 to the I64 counter `cnt` when `c` holds.
    fn count_if(&mut self, cnt: VarId, c: Value) {
        let i64t = Type::I64;
        let (one, zero) = (self.int(1, i64t), self.int(0, i64t));
        let d = self.val(Inst::Select(c, one, zero), i64t);
        let k = self.val(Inst::Load(cnt), i64t);
        let k = self.val(Inst::Binary(BinaryOp::Add, k, d), i64t);
        self.emit(Inst::Store(cnt, k), None);
    }

    /// The extents given by the SHAPE= argument of RESHAPE.
    fn reshape_extents(&mut self, name: &Name, s: &Expr) -> R<Vec<VarId>> {
        if let ExprKind::Apply { name: f, args } = &s.kind {
            if f.text == "shape" && self.names_intrinsic(f) {
                let a = self.args_of(f, args)?;
                let x = self.required(f, &a, 0)?;
                return self.shape_of(x);
            }
        }
        let Some(n) = self.shape_arg_len(s) else {
            return Err(self.err(
                s.span,
                format!(
                    "unsupported Fortran: the `shape=` argument of `{}` must be an array constructor, `shape(x)` or an array of constant size",
                    name.text
                ),
            ));
        };
        let mut out = Vec::new();
        match &s.kind {
            ExprKind::ArrayConstructor(items) => {
                for item in items {
                    let x = self.scalar64(item)?;
                    out.push(self.keep64(x));
                }
            }
            _ => {
                for k in 0..n {
                    let p = self.int(k as i64, Type::I64);
                    let saved = self.elem.replace(vec![p]);
                    let r = self.integer(s);
                    self.elem = saved;
                    let (x, t) = r?;
                    let x = self.convert(x, t, Type::I64);
                    out.push(self.keep64(x));
                }
            }
        }
        Ok(out)
    }

    /// The constant ORDER= of RESHAPE (0-based dimensions), checked to be
    /// a permutation of the result's dimensions.
    fn reshape_order(&mut self, o: Option<&Expr>, rank: usize) -> R<Vec<usize>> {
        let Some(o) = o else {
            return Ok((0..rank).collect());
        };
        let bad = |this: &mut Self| {
            this.err(
                o.span,
                format!("the `order=` argument of `reshape` must be a constant permutation of 1..{rank}"),
            )
        };
        let ExprKind::ArrayConstructor(items) = &o.kind else {
            return Err(bad(self));
        };
        let mut out = Vec::new();
        for item in items {
            match self.fold(item)?.as_int() {
                Some(k) if k >= 1 && (k as usize) <= rank && !out.contains(&(k as usize - 1)) => {
                    out.push(k as usize - 1)
                }
                _ => return Err(bad(self)),
            }
        }
        if out.len() != rank {
            return Err(bad(self));
        }
        Ok(out)
    }

    /// True when the expression holds a reference handled here (outside
    /// hoisted scalar reductions), so that its elements need
    /// [`Self::at_element`]'s walk.
    pub(crate) fn needs_walk(&self, e: &Expr) -> bool {
        if self.transform_kind(e).is_some() {
            return true;
        }
        match &e.kind {
            ExprKind::Apply { args, .. } => args.iter().any(|a| match &a.value {
                ArgValue::Expr(x) => self.needs_walk(x),
                ArgValue::Range { .. } => false,
            }),
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.needs_walk(a),
            ExprKind::Binary(_, a, b) => self.needs_walk(a) || self.needs_walk(b),
            _ => false,
        }
    }

    /// Runs `f` with `self.elem` set to the element of each expression:
    /// first walks the expressions (each at its position, 0-based I64
    /// values) to compute what their array-valued intrinsics need for that
    /// element (see the module documentation). `f` gets the positions as
    /// values of the current block, in the order given.
    pub(crate) fn at_element<T>(
        &mut self,
        items: &[(&Expr, Vec<Value>)],
        f: impl FnOnce(&mut Self, &[Vec<Value>]) -> R<T>,
    ) -> R<T> {
        let walk = items.iter().any(|(e, _)| self.needs_walk(e));
        let pos: Vec<Vec<Value>> = if walk {
            let kept: Vec<Vec<VarId>> = items
                .iter()
                .map(|(_, p)| p.iter().map(|&x| self.keep64(x)).collect())
                .collect();
            let saved = self.elem.take();
            let r = items
                .iter()
                .zip(&kept)
                .try_for_each(|((e, _), k)| self.walk_element(e, k));
            self.elem = saved;
            r?;
            kept.iter().map(|k| self.load_all(k)).collect()
        } else {
            items.iter().map(|(_, p)| p.clone()).collect()
        };
        let saved = self.elem.replace(pos.first().cloned().unwrap_or_default());
        let r = f(self, &pos);
        self.elem = saved;
        r
    }

    /// The values of I64 temporaries.
    pub(super) fn load_all(&mut self, vars: &[VarId]) -> Vec<Value> {
        vars.iter()
            .map(|&v| self.val(Inst::Load(v), Type::I64))
            .collect()
    }

    /// The walk of [`Self::at_element`]: `pos` holds the position of the
    /// element of `e` computed.
    fn walk_element(&mut self, e: &Expr, pos: &[VarId]) -> R<()> {
        let kind = self.transform_kind(e);
        if kind.is_some() && self.rank_of(e) != pos.len() {
            let ExprKind::Apply { name, .. } = &e.kind else {
                unreachable!("transform_kind gives calls only")
            };
            return Err(self.err(
                e.span,
                format!(
                    "`{}` of rank {} in an expression of rank {}",
                    name.text,
                    self.rank_of(e),
                    pos.len()
                ),
            ));
        }
        match kind {
            Some(Transform::Positional) => return self.map_positions(e, pos),
            Some(Transform::Looped) => {
                let v = self.looped_element(e, pos)?;
                self.hoisted.insert(e, v);
                return Ok(());
            }
            None => {}
        }
        if self.hoisted.contains(e) {
            return Ok(());
        }
        match &e.kind {
            ExprKind::Apply { name, args } => {
                // A vector subscript is read at its own position (by
                // `section_index`), which walks it then.
                let array = self.is_array_name(&name.text);
                for a in args {
                    if let ArgValue::Expr(x) = &a.value {
                        if !(array && self.is_vector_subscript(a)) {
                            self.walk_element(x, pos)?;
                        }
                    }
                }
                Ok(())
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.walk_element(a, pos),
            ExprKind::Binary(_, a, b) => {
                self.walk_element(a, pos)?;
                self.walk_element(b, pos)
            }
            _ => Ok(()),
        }
    }

    /// The walk at a positional intrinsic: where its argument is read.
    fn map_positions(&mut self, e: &Expr, pos: &[VarId]) -> R<()> {
        let ExprKind::Apply { name, args } = &e.kind else {
            unreachable!("transform_kind gives calls only")
        };
        let which = name.text.as_str();
        let a = self.args_of(name, args)?;
        let x = self.required(name, &a, 0)?;
        let i64t = Type::I64;
        let mut inside = None;
        let mut pad_pos = Vec::new();
        let arg_pos = match which {
            "transpose" => {
                if pos.len() != 2 {
                    return Err(self.err(e.span, "`transpose` in an expression of another rank"));
                }
                vec![pos[1], pos[0]]
            }
            "spread" => {
                let d = self.required(name, &a, 1)?;
                let d = self.const_dim(which, d, self.rank_of(x) + 1)?;
                pick(pos, |i| i != d)
            }
            "cshift" | "eoshift" => {
                let rank = self.rank_of(x);
                let d = match a[if which == "cshift" { 2 } else { 3 }] {
                    Some(d) => self.const_dim(which, d, rank)?,
                    None => 0,
                };
                let shift = self.required(name, &a, 1)?;
                let s = match self.rank_of(shift) {
                    0 => self.scalar64(shift)?,
                    r if r + 1 == rank => {
                        // An array shift: its element at the position
                        // without dimension `d` shifts that line.
                        let line = pick(pos, |i| i != d);
                        let at = self.load_all(&line);
                        let saved = self.elem.take();
                        let r = self.at_element(&[(shift, at)], |this, _| this.integer(shift));
                        self.elem = saved;
                        let (v, t) = r?;
                        self.convert(v, t, i64t)
                    }
                    r => {
                        return Err(self.err(
                            shift.span,
                            format!("`shift=` of `{which}` has rank {r}: a scalar or rank {} (the array's rank less one)", rank - 1),
                        ))
                    }
                };
                let n = self.shape_of(x)?;
                let n = self.val(Inst::Load(n[d]), i64t);
                let p = self.val(Inst::Load(pos[d]), i64t);
                let q = self.val(Inst::Binary(BinaryOp::Add, p, s), i64t);
                let q = if which == "cshift" {
                    self.val(Inst::Binary(BinaryOp::Modulo, q, n), i64t)
                } else {
                    // Outside 0..n the element is the boundary; the
                    // argument is read at a clamped position.
                    let zero = self.int(0, i64t);
                    let ge = self.val(Inst::Cmp(CmpOp::Ge, q, zero), Type::Bool);
                    let lt = self.val(Inst::Cmp(CmpOp::Lt, q, n), Type::Bool);
                    let ok = self.val(Inst::Binary(BinaryOp::And, ge, lt), Type::Bool);
                    let t = self.temp("in", Type::Bool);
                    self.emit(Inst::Store(t, ok), None);
                    inside = Some(t);
                    let one = self.int(1, i64t);
                    let last = self.val(Inst::Binary(BinaryOp::Sub, n, one), i64t);
                    let q = self.val(Inst::Binary(BinaryOp::Min, q, last), i64t);
                    self.val(Inst::Binary(BinaryOp::Max, q, zero), i64t)
                };
                let q = self.keep64(q);
                let mut out = pos.to_vec();
                out[d] = q;
                out
            }
            "reshape" => {
                let shape = self.required(name, &a, 1)?;
                let ext = self.reshape_extents(name, shape)?;
                if ext.len() != pos.len() {
                    return Err(self.err(e.span, "`reshape` in an expression of another rank"));
                }
                let order = self.reshape_order(a[3], ext.len())?;
                // The 0-based position in array element order.
                let mut lin = self.int(0, i64t);
                let mut stride = self.int(1, i64t);
                for &d in &order {
                    let p = self.val(Inst::Load(pos[d]), i64t);
                    let t = self.val(Inst::Binary(BinaryOp::Mul, p, stride), i64t);
                    lin = self.val(Inst::Binary(BinaryOp::Add, lin, t), i64t);
                    let n = self.val(Inst::Load(ext[d]), i64t);
                    stride = self.val(Inst::Binary(BinaryOp::Mul, stride, n), i64t);
                }
                let src = self.shape_of(x)?;
                let size = self.size_of(&src);
                let lin = match a[2] {
                    None => lin,
                    Some(pad) => {
                        let ok = self.val(Inst::Cmp(CmpOp::Lt, lin, size), Type::Bool);
                        let t = self.temp("in", Type::Bool);
                        self.emit(Inst::Store(t, ok), None);
                        inside = Some(t);
                        let ps = self.shape_of(pad)?;
                        let psize = self.size_of(&ps);
                        let over = self.val(Inst::Binary(BinaryOp::Sub, lin, size), i64t);
                        let zero = self.int(0, i64t);
                        let over = self.val(Inst::Binary(BinaryOp::Max, over, zero), i64t);
                        let one = self.int(1, i64t);
                        let psize1 = self.val(Inst::Binary(BinaryOp::Max, psize, one), i64t);
                        let k = self.val(Inst::Binary(BinaryOp::Modulo, over, psize1), i64t);
                        pad_pos = self.unravel(k, &ps);
                        let one = self.int(1, i64t);
                        let last = self.val(Inst::Binary(BinaryOp::Sub, size, one), i64t);
                        self.val(Inst::Binary(BinaryOp::Min, lin, last), i64t)
                    }
                };
                self.unravel(lin, &src)
            }
            _ => unreachable!("positional intrinsics"),
        };
        let scalar = self.rank_of(x) == 0;
        let arg_pos = if scalar { Vec::new() } else { arg_pos };
        if !scalar {
            self.walk_element(x, &arg_pos)?;
        }
        if let Some(pad) = a.get(2).copied().flatten().filter(|_| which == "reshape") {
            self.walk_element(pad, &pad_pos)?;
        }
        self.mapped.insert(
            e,
            Mapped {
                pos: arg_pos,
                inside,
                pad: pad_pos,
            },
        );
        Ok(())
    }

    /// The number of elements of a shape.
    fn size_of(&mut self, ext: &[VarId]) -> Value {
        let i64t = Type::I64;
        let mut size = self.int(1, i64t);
        for &n in ext {
            let n = self.val(Inst::Load(n), i64t);
            size = self.val(Inst::Binary(BinaryOp::Mul, size, n), i64t);
        }
        size
    }

    /// The 0-based positions (in temporaries) of the element at 0-based
    /// array-element-order position `lin` of a shape.
    fn unravel(&mut self, lin: Value, ext: &[VarId]) -> Vec<VarId> {
        let i64t = Type::I64;
        let mut rest = lin;
        let mut out = Vec::new();
        for (d, &n) in ext.iter().enumerate() {
            if d + 1 == ext.len() {
                out.push(self.keep64(rest));
                break;
            }
            let n = self.val(Inst::Load(n), i64t);
            let one = self.int(1, i64t);
            let n = self.val(Inst::Binary(BinaryOp::Max, n, one), i64t);
            let p = self.val(Inst::Binary(BinaryOp::Mod, rest, n), i64t);
            out.push(self.keep64(p));
            rest = self.val(Inst::Binary(BinaryOp::Div, rest, n), i64t);
        }
        out
    }

    /// The element of a positional intrinsic, inside an array expression
    /// (after [`Self::at_element`]'s walk).
    pub(crate) fn positional_element(&mut self, e: &Expr, name: &Name, args: &[Arg]) -> R<Operand> {
        let Some(m) = self.mapped.get(e).cloned() else {
            return Err(self.err(
                e.span,
                format!(
                    "array-valued `{}` used where a scalar is expected",
                    name.text
                ),
            ));
        };
        let a = self.args_of(name, args)?;
        let x = self.required(name, &a, 0)?;
        let value = self.read_at(x, &m.pos)?;
        let Some(inside) = m.inside else {
            return Ok(value);
        };
        let Operand::Num(v, ty) = value else {
            return Err(self.err(
                e.span,
                format!("unsupported Fortran: `{}` of a character array", name.text),
            ));
        };
        let other = if name.text == "eoshift" {
            match a[2] {
                Some(b) if self.rank_of(b) != 0 => {
                    // An array boundary: its element at the position
                    // without dimension `dim` fills that line.
                    let rank = self.rank_of(x);
                    if self.rank_of(b) + 1 != rank {
                        return Err(self.err(
                            b.span,
                            format!(
                                "`boundary=` of `eoshift` has rank {}: a scalar or rank {} (the array's rank less one)",
                                self.rank_of(b),
                                rank - 1
                            ),
                        ));
                    }
                    let d = match a[3] {
                        Some(d) => self.const_dim("eoshift", d, rank)?,
                        None => 0,
                    };
                    let line = pick(&m.pos, |i| i != d);
                    let at = self.load_all(&line);
                    let saved = self.elem.take();
                    let r = self.at_element(&[(b, at)], |this, _| this.num_as(b, ty));
                    self.elem = saved;
                    r?
                }
                Some(b) => {
                    let saved = self.elem.take();
                    let r = self.num_as(b, ty);
                    self.elem = saved;
                    r?
                }
                None => self.konst(zero_of(ty), ty),
            }
        } else {
            let pad = self.required(name, &a, 2)?;
            match self.read_at(pad, &m.pad)? {
                Operand::Num(p, pt) => self.coerce(p, pt, ty, pad)?,
                Operand::Char(_) => return Err(self.err(pad.span, "a character `pad=`")),
            }
        };
        let c = self.val(Inst::Load(inside), Type::Bool);
        Ok(Operand::Num(self.val(Inst::Select(c, v, other), ty), ty))
    }

    /// An expression at a position kept in temporaries (a scalar when
    /// `pos` is empty).
    fn read_at(&mut self, x: &Expr, pos: &[VarId]) -> R<Operand> {
        let p = if pos.is_empty() {
            None
        } else {
            Some(self.load_all(pos))
        };
        let saved = std::mem::replace(&mut self.elem, p);
        let r = self.expr(x);
        self.elem = saved;
        r
    }

    /// The element of a looped intrinsic at `pos`, computed into a scalar
    /// temporary.
    fn looped_element(&mut self, e: &Expr, pos: &[VarId]) -> R<VarId> {
        let ExprKind::Apply { name, args } = &e.kind else {
            unreachable!("transform_kind gives calls only")
        };
        let which = name.text.as_str();
        if is_reduction(which) {
            return self.reduce_element(e, name, args, pos);
        }
        let a = self.args_of(name, args)?;
        let i64t = Type::I64;
        match which {
            "matmul" => {
                let (x, y) = (self.required(name, &a, 0)?, self.required(name, &a, 1)?);
                self.matmul_element(name, x, y, pos)
            }
            "shape" => {
                let x = self.required(name, &a, 0)?;
                let ext = self.shape_of(x)?;
                let ty = match a[1] {
                    Some(k) => {
                        let k = self.fold(k)?.as_int().unwrap_or(4);
                        super::consts::int_kind(k).unwrap_or(Type::I32)
                    }
                    None => Type::I32,
                };
                let p = self.val(Inst::Load(pos[0]), i64t);
                let mut v = self.val(Inst::Load(ext[0]), i64t);
                for (d, &n) in ext.iter().enumerate().skip(1) {
                    let k = self.int(d as i64, i64t);
                    let here = self.val(Inst::Cmp(CmpOp::Eq, p, k), Type::Bool);
                    let n = self.val(Inst::Load(n), i64t);
                    v = self.val(Inst::Select(here, n, v), i64t);
                }
                let v = self.convert(v, i64t, ty);
                let t = self.temp("shape", ty);
                self.emit(Inst::Store(t, v), None);
                Ok(t)
            }
            "pack" => {
                let x = self.required(name, &a, 0)?;
                let m = self.required(name, &a, 1)?;
                let ty = self.element_type(x)?;
                let acc = self.temp("pack", ty);
                let z = self.konst(zero_of(ty), ty);
                self.emit(Inst::Store(acc, z), None);
                let cnt = self.temp("cnt", i64t);
                let zero = self.int(0, i64t);
                self.emit(Inst::Store(cnt, zero), None);
                let n = self.shape_of(x)?;
                let want = pos[0];
                self.for_positions(&n, &mut |this, q| {
                    this.at_element(&[(x, q.to_vec()), (m, q.to_vec())], |this, _| {
                        let v = this.num_as(x, ty)?;
                        let c = this.logical(m)?;
                        let k = this.val(Inst::Load(cnt), i64t);
                        let w = this.val(Inst::Load(want), i64t);
                        let at = this.val(Inst::Cmp(CmpOp::Eq, k, w), Type::Bool);
                        let hit = this.val(Inst::Binary(BinaryOp::And, c, at), Type::Bool);
                        let old = this.val(Inst::Load(acc), ty);
                        let new = this.val(Inst::Select(hit, v, old), ty);
                        this.emit(Inst::Store(acc, new), None);
                        this.count_if(cnt, c);
                        Ok(())
                    })
                })?;
                if let Some(vector) = a[2] {
                    // Past the packed elements: VECTOR's element.
                    let w = self.val(Inst::Load(want), i64t);
                    self.at_element(&[(vector, vec![w])], |this, p| {
                        let v = this.num_as(vector, ty)?;
                        let k = this.val(Inst::Load(cnt), i64t);
                        let packed = this.val(Inst::Cmp(CmpOp::Lt, p[0][0], k), Type::Bool);
                        let old = this.val(Inst::Load(acc), ty);
                        let new = this.val(Inst::Select(packed, old, v), ty);
                        this.emit(Inst::Store(acc, new), None);
                        Ok(())
                    })?;
                }
                Ok(acc)
            }
            "unpack" => {
                let vector = self.required(name, &a, 0)?;
                let m = self.required(name, &a, 1)?;
                let field = self.required(name, &a, 2)?;
                let ty = self.element_type(vector)?;
                let n = self.shape_of(m)?;
                let nv = self.shape_of(vector)?;
                // The number of true mask elements before this one.
                let here = self.linear0(&n, pos);
                let here = self.keep64(here);
                let cnt = self.temp("cnt", i64t);
                let zero = self.int(0, i64t);
                self.emit(Inst::Store(cnt, zero), None);
                self.for_positions(&n, &mut |this, q| {
                    let q = q.to_vec();
                    let kept: Vec<VarId> = q.iter().map(|&x| this.keep64(x)).collect();
                    let lin = this.linear0(&n, &kept);
                    let h = this.val(Inst::Load(here), i64t);
                    let before = this.val(Inst::Cmp(CmpOp::Lt, lin, h), Type::Bool);
                    let q = this.load_all(&kept);
                    this.at_element(&[(m, q)], |this, _| {
                        let c = this.logical(m)?;
                        let c = this.val(Inst::Binary(BinaryOp::And, c, before), Type::Bool);
                        this.count_if(cnt, c);
                        Ok(())
                    })
                })?;
                let k = self.val(Inst::Load(cnt), i64t);
                let last = self.val(Inst::Load(nv[0]), i64t);
                let one = self.int(1, i64t);
                let last = self.val(Inst::Binary(BinaryOp::Sub, last, one), i64t);
                let k = self.val(Inst::Binary(BinaryOp::Min, k, last), i64t);
                let p = self.load_all(pos);
                let field_pos = if self.rank_of(field) == 0 {
                    Vec::new()
                } else {
                    p.clone()
                };
                let t = self.temp("unpack", ty);
                self.at_element(
                    &[(vector, vec![k]), (m, p), (field, field_pos)],
                    |this, ps| {
                        this.elem = Some(ps[0].clone());
                        let v = this.num_as(vector, ty)?;
                        this.elem = Some(ps[1].clone());
                        let c = this.logical(m)?;
                        this.elem = (!ps[2].is_empty()).then(|| ps[2].clone());
                        let f = this.num_as(field, ty)?;
                        let r = this.val(Inst::Select(c, v, f), ty);
                        this.emit(Inst::Store(t, r), None);
                        Ok(())
                    },
                )?;
                Ok(t)
            }
            _ => unreachable!("looped intrinsics"),
        }
    }

    /// The element at 0-based position `p` of an array constructor of
    /// scalars, as an operand of an array expression (a SELECT over the
    /// items, which are all evaluated).
    pub(crate) fn constructor_element(&mut self, e: &Expr, items: &[Expr], p: Value) -> R<Operand> {
        if items.is_empty() {
            return Err(self.err(e.span, "unsupported Fortran: empty array constructor"));
        }
        let saved = self.elem.take();
        let r = self.constructor_select(items, p);
        self.elem = saved;
        r
    }

    fn constructor_select(&mut self, items: &[Expr], p: Value) -> R<Operand> {
        let mut vals = Vec::new();
        for item in items {
            if self.rank_of(item) != 0 || matches!(item.kind, ExprKind::ImpliedDo { .. }) {
                return Err(self.err(
                    item.span,
                    "unsupported Fortran: array constructor item that is not a scalar in an array expression",
                ));
            }
            vals.push(self.num(item)?);
        }
        let t0 = vals[0].1;
        let ty = vals.iter().fold(t0, |t, &(_, u)| {
            if t == Type::Bool || u == Type::Bool {
                t
            } else {
                promote(t, u)
            }
        });
        let mut out: Option<Value> = None;
        for (k, (&(v, t), item)) in vals.iter().zip(items).enumerate().rev() {
            let v = self.coerce(v, t, ty, item)?;
            out = Some(match out {
                None => v,
                Some(rest) => {
                    let kk = self.int(k as i64, Type::I64);
                    let here = self.val(Inst::Cmp(CmpOp::Eq, p, kk), Type::Bool);
                    self.val(Inst::Select(here, v, rest), ty)
                }
            });
        }
        Ok(Operand::Num(out.expect("an item"), ty))
    }

    /// The 0-based array-element-order position of positions kept in
    /// temporaries.
    fn linear0(&mut self, ext: &[VarId], pos: &[VarId]) -> Value {
        let i64t = Type::I64;
        let mut lin = self.int(0, i64t);
        let mut stride = self.int(1, i64t);
        for (&p, &n) in pos.iter().zip(ext) {
            let p = self.val(Inst::Load(p), i64t);
            let t = self.val(Inst::Binary(BinaryOp::Mul, p, stride), i64t);
            lin = self.val(Inst::Binary(BinaryOp::Add, lin, t), i64t);
            let n = self.val(Inst::Load(n), i64t);
            stride = self.val(Inst::Binary(BinaryOp::Mul, stride, n), i64t);
        }
        lin
    }

    /// The numeric element type of an array expression.
    fn element_type(&mut self, x: &Expr) -> R<Type> {
        let (t, _) = self.type_and_rank(x)?;
        if t == Type::Char {
            return Err(self.err(x.span, "unsupported Fortran: a character array here"));
        }
        Ok(t)
    }

    /// One element of MATMUL: the sum over the inner dimension.
    fn matmul_element(&mut self, name: &Name, x: &Expr, y: &Expr, pos: &[VarId]) -> R<VarId> {
        let (ra, rb) = (self.rank_of(x), self.rank_of(y));
        let (ta, tb) = (self.element_type(x)?, self.element_type(y)?);
        if ta == Type::Bool || tb == Type::Bool {
            return Err(self.err(name.span, "unsupported Fortran: `matmul` of logical arrays"));
        }
        let ty = promote(ta, tb);
        let sa = self.shape_of(x)?;
        let nk = if ra == 2 { sa[1] } else { sa[0] };
        let acc = self.temp("mm", ty);
        let z = self.konst(zero_of(ty), ty);
        self.emit(Inst::Store(acc, z), None);
        self.for_positions(&[nk], &mut |this, k| {
            let k = k[0];
            let p = this.load_all(pos);
            let a_at = if ra == 2 { vec![p[0], k] } else { vec![k] };
            let b_at = match (ra, rb) {
                (2, 2) => vec![k, p[1]],
                (2, 1) => vec![k],
                _ => vec![k, p[0]],
            };
            this.at_element(&[(x, a_at), (y, b_at)], |this, ps| {
                this.elem = Some(ps[0].clone());
                let u = this.num_as(x, ty)?;
                this.elem = Some(ps[1].clone());
                let v = this.num_as(y, ty)?;
                let uv = this.val(Inst::Binary(BinaryOp::Mul, u, v), ty);
                let s = this.val(Inst::Load(acc), ty);
                let s = this.val(Inst::Binary(BinaryOp::Add, s, uv), ty);
                this.emit(Inst::Store(acc, s), None);
                Ok(())
            })
        })?;
        Ok(acc)
    }

    /// True when the expression reads `target` inside an intrinsic handled
    /// here (so an assignment to `target` must not overwrite elements the
    /// expression still reads).
    pub(crate) fn transform_reads(&self, e: &Expr, target: &str) -> bool {
        fn reads(e: &Expr, target: &str) -> bool {
            let mut names = std::collections::BTreeSet::new();
            super::lowerer::expr_names(e, &mut names);
            names.contains(target)
        }
        if self.transform_kind(e).is_some() {
            return reads(e, target);
        }
        match &e.kind {
            ExprKind::Apply { args, .. } => args.iter().any(|a| match &a.value {
                ArgValue::Expr(x) => self.transform_reads(x, target),
                ArgValue::Range { .. } => false,
            }),
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => self.transform_reads(a, target),
            ExprKind::Binary(_, a, b) => {
                self.transform_reads(a, target) || self.transform_reads(b, target)
            }
            _ => false,
        }
    }

    /// `target = value` when `value` reads `target` through an intrinsic
    /// handled here: the value goes to a temporary first, then to the
    /// target.
    pub(crate) fn assign_through_temp(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
    ) -> R<()> {
        let ty = self.proc.var(v).ty;
        let extents = self.extents(&ArrayRef {
            name,
            args,
            call: None,
        })?;
        // An array whose bounds are fixed at entry gets a temporary of its
        // size; an assumed-shape, assumed-size or ALLOCATABLE one (whose
        // declared bounds are placeholders) gets one allocated to the
        // extents assigned, released after the copy.
        let var = self.proc.var(v);
        let fixed = !var.storage.is_allocatable() && var.dims.iter().all(|d| d.upper.is_some());
        let temp = if fixed {
            self.storage_like(v, ty, value, &name.text)?
        } else {
            self.exact_temp(ty, &extents)
        };
        self.for_positions(&extents, &mut |this, pos| {
            this.at_element(&[(value, pos.to_vec())], |this, ps| {
                let x = this.num_as(value, ty)?;
                let lin = this.linear(&extents, &ps[0]);
                this.emit(Inst::StoreElem(temp, vec![lin], x), None);
                Ok(())
            })
        })?;
        self.for_positions(&extents, &mut |this, pos| {
            let lin = this.linear(&extents, pos);
            let x = this.val(Inst::LoadElem(temp, vec![lin]), ty);
            let idx = match args {
                None => this.whole_array_index(v, pos, name.span)?,
                Some(a) => this.section_index(v, a, pos, name)?,
            };
            this.emit(Inst::StoreElem(v, idx, x), None);
            Ok(())
        })?;
        if !fixed {
            self.emit(Inst::Deallocate(temp), None);
        }
        Ok(())
    }
}

/// The number of items of an array constructor whose items are all
/// scalars written out (no implied DO, no nested constructor).
fn scalar_constructor_len(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::ArrayConstructor(items)
            if items.iter().all(|i| {
                !matches!(
                    i.kind,
                    ExprKind::ImpliedDo { .. } | ExprKind::ArrayConstructor(_)
                )
            }) =>
        {
            Some(items.len())
        }
        _ => None,
    }
}

/// The zero of a numeric or logical type.
pub(crate) fn zero_of(t: Type) -> Const {
    match t {
        Type::Bool => Const::Bool(false),
        t if t.is_float() => Const::Float(0.0),
        _ => Const::Int(0),
    }
}
