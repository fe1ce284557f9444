//! Array intrinsics of arrays of structures (CSHIFT, EOSHIFT with a
//! structure BOUNDARY=, SPREAD, RESHAPE, TRANSPOSE, UNPACK, PACK with
//! VECTOR=) assigned to an array of structures, and a scalar structure
//! broadcast to a whole array or a section of structures.
//!
//! An array of structures is one array per leaf component, the
//! component's own dimensions first (`a(i)%w(j)` is `a%w(j, i)`), so an
//! intrinsic moving elements of the array moves the same elements of
//! every leaf: `b = cshift(a, 1)` is `b%x = cshift(a%x, 1)` then `b%w =
//! cshift(a%w, 1, dim=2)` for every leaf, each lowered as the intrinsic of
//! a numeric array (`super::transform`). The arguments of structures
//! become the leaf (`boundary=c` is `c%w`), a DIM= counts past the
//! component's dimensions, RESHAPE's SHAPE= and ORDER= keep the
//! component's dimensions first, and TRANSPOSE of a leaf with dimensions
//! of its own is a RESHAPE with ORDER= swapping the last two. Tangents and
//! adjoints follow from the lowered leaves: the derivative components move
//! with the values.
//!
//! Every leaf reads only its own arrays, so a value reading its target
//! (`ring = cshift(ring, 1)`) is the intrinsic of each leaf reading
//! itself; the other arguments (a mask, a shift) are read once per leaf,
//! so one reading the target's array is a located error. PACK and UNPACK
//! of a type with array components, an array SHIFT= or a BOUNDARY= of a
//! rank > 1 array for such a type, and leaves with ALLOCATABLE
//! components are located errors.
//!
//! A scalar structure (a constructor, a variable, an element) assigned
//! to an array of structures of a type with array components becomes
//! loops over the target's positions assigning the structure to each
//! element (`sel = pt(0d0, [0d0, 0d0])`); a constructor reading the
//! target is a located error.

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::StructDecl;
use super::struct_ctor::{assign, loops_over};
use super::struct_elemental::{base, binary, int_expr, name_expr, reads, Operand};
use super::transform::{keyed, keywords};
use adjit_ir::Span;

/// The argument slots (in [`keywords`] order) of an intrinsic of arrays
/// of structures that take structures; `None` for an intrinsic not
/// lowered here.
fn struct_slots(which: &str) -> Option<&'static [usize]> {
    Some(match which {
        "transpose" | "spread" | "cshift" => &[0],
        "reshape" | "eoshift" | "pack" | "unpack" => &[0, 2],
        _ => return None,
    })
}

/// The DIM= slot of an intrinsic, if it has one.
fn dim_slot(which: &str) -> Option<usize> {
    match which {
        "spread" => Some(1),
        "cshift" => Some(2),
        "eoshift" => Some(3),
        _ => None,
    }
}

/// The intrinsic reference `f(args)`.
fn call(f: &str, args: Vec<Arg>, span: Span) -> Expr {
    Expr::apply(f, args, span)
}

/// The argument `e` given by keyword `key`.
fn keyword_arg(key: &str, e: Expr, span: Span) -> Arg {
    Arg {
        keyword: Some(Name {
            text: key.to_string(),
            span,
        }),
        value: ArgValue::Expr(e),
    }
}

/// `which(args)`, the arguments given by keyword (in [`keywords`] order,
/// absent ones left out).
fn keyed_call(which: &str, args: Vec<Option<Expr>>, span: Span) -> Expr {
    let keys = keywords(which);
    let args = args
        .into_iter()
        .enumerate()
        .filter_map(|(slot, x)| Some(keyword_arg(keys[slot], x?, span)))
        .collect();
    call(which, args, span)
}

/// `size(leaf, d)` for each of the leaf's own dimensions `1..=own`.
fn own_extents(leaf: &str, own: usize, span: Span) -> Vec<Expr> {
    (1..=own)
        .map(|d| {
            call(
                "size",
                vec![
                    keyword_arg("array", name_expr(leaf, span), span),
                    keyword_arg("dim", int_expr(d as i64, span), span),
                ],
                span,
            )
        })
        .collect()
}

/// `[1, ..., own]`: the leaf's own dimensions first in an ORDER=.
fn own_order(own: usize, span: Span) -> Vec<Expr> {
    (1..=own).map(|d| int_expr(d as i64, span)).collect()
}

/// `[items]`.
fn constructor(items: Vec<Expr>, span: Span) -> Expr {
    Expr {
        kind: ExprKind::ArrayConstructor(items),
        span,
    }
}

/// The items of an array constructor of scalars (no implied DO).
fn constructor_items(e: &Expr) -> Option<&[Expr]> {
    let inner = e.without_parens();
    match &inner.kind {
        ExprKind::ArrayConstructor(items)
            if items
                .iter()
                .all(|i| !matches!(i.kind, ExprKind::ImpliedDo { .. })) =>
        {
            Some(items)
        }
        _ => None,
    }
}

/// True when `e` references a procedure named `shape`.
fn has_shape_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Apply { name, .. } if name.text == "shape")
        || e.kind.children().into_iter().any(has_shape_call)
}

/// One leaf of an array of structures: its name and the number of its
/// own (component) dimensions.
struct Leaf {
    /// The leaf variable's full name (`b%w`).
    name: String,
    /// The component's own rank (0 for a scalar component).
    own: usize,
}

impl Lowerer<'_, '_> {
    /// The statements assigning an intrinsic of arrays of structures, or a
    /// scalar structure, to an array of structures (see the module
    /// documentation); `None` for any other statement.
    pub(super) fn struct_intrinsic_assign(&mut self, s: &Stmt) -> R<Option<Vec<Stmt>>> {
        let StmtKind::Assign { target, value } = &s.kind else {
            return Ok(None);
        };
        let inner = value.without_parens();
        if let ExprKind::Apply { name, args } = &inner.kind {
            if self.names_intrinsic(name) && struct_slots(&name.text).is_some() {
                let pack_without_vector = name.text == "pack"
                    && keyed("pack", args).is_ok_and(|a| a.get(2).copied().flatten().is_none());
                if pack_without_vector || !self.is_struct_array(target)? {
                    return Ok(None);
                }
                return self.per_leaf_intrinsic(s, target, name, args).map(Some);
            }
        }
        if !self.is_struct_array(target)? || !self.is_scalar_structure(inner)? {
            return Ok(None);
        }
        let (st, _) = self.struct_leaves_of(target)?;
        if self.leaves(&st)?.iter().all(|l| l.own == 0) {
            return Ok(None);
        }
        self.broadcast(s, target, inner).map(|b| Some(vec![b]))
    }

    /// The statement with every `shape(x)` of an array of structures or a
    /// section of one `x` replaced by the array constructor of its
    /// extents; `None` when it has none.
    pub(super) fn struct_shapes(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        if !s.kind.own_exprs().into_iter().any(has_shape_call) {
            return Ok(None);
        }
        let mut out = s.clone();
        let mut changed = false;
        for e in out.kind.own_exprs_mut() {
            changed |= self.struct_shapes_in(e)?;
        }
        Ok(changed.then_some(out))
    }

    /// [`Self::struct_shapes`] in one expression; true when it changed.
    fn struct_shapes_in(&mut self, e: &mut Expr) -> R<bool> {
        if let ExprKind::Apply { name, args } = &e.kind {
            if name.text == "shape" && self.names_intrinsic(name) {
                if let [Arg {
                    keyword: None,
                    value: ArgValue::Expr(x),
                }] = args.as_slice()
                {
                    if self.is_struct_array(x)? {
                        let op = Operand::of(x).expect("an array of structures or a section");
                        let rank = self.operand_rank(&op)?.unwrap_or(0);
                        let extents = (0..rank).map(|r| op.extent(r, e.span)).collect();
                        *e = constructor(extents, e.span);
                        return Ok(true);
                    }
                }
            }
        }
        let mut changed = false;
        for c in e.kind.children_mut() {
            changed |= self.struct_shapes_in(c)?;
        }
        Ok(changed)
    }

    /// True when `e` is a structure constructor, a scalar structure or an
    /// element of an array of structures.
    fn is_scalar_structure(&mut self, e: &Expr) -> R<bool> {
        let (name, args) = match &e.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            _ => return Ok(false),
        };
        if args.is_some() && self.find_type(&name.text).is_some() {
            return Ok(true);
        }
        Ok(match (self.resolve(name)?, args) {
            (Resolved::Struct(st), None) => st.dims.is_none(),
            (Resolved::Struct(st), Some(args)) => {
                st.dims.is_some()
                    && args
                        .iter()
                        .all(|a| a.marked_part().is_none() && matches!(a.value, ArgValue::Expr(_)))
            }
            _ => false,
        })
    }

    /// The type and the leaf values of a structure value: a variable, an
    /// element, a section, a structure constructor (each component's
    /// value) or an array constructor of those (an array constructor of
    /// each leaf, array components flattened in array element order);
    /// `None` for any other expression.
    fn leaf_values(&mut self, e: &Expr) -> R<Option<(String, Vec<Expr>)>> {
        match &e.kind {
            ExprKind::Paren(x) => self.leaf_values(x),
            ExprKind::ArrayConstructor(items) => {
                let Some((ty, per_item)) = self.items_leaf_values(items)? else {
                    return Ok(None);
                };
                Ok(Some((
                    ty,
                    per_item
                        .into_iter()
                        .map(|leaf_items| constructor(leaf_items, e.span))
                        .collect(),
                )))
            }
            ExprKind::Apply { name, args } if self.find_type(&name.text).is_some() => {
                self.constructor_leaf_values(name, args).map(Some)
            }
            _ => Ok(self
                .struct_ref(e, false)?
                .map(|(st, leaves)| (st.type_name, leaves))),
        }
    }

    /// The items of an array constructor of structures (implied DO loops
    /// kept around their items' leaves), by leaf: one list of items per
    /// leaf; `None` when an item is not a structure.
    fn items_leaf_values(&mut self, items: &[Expr]) -> R<Option<(String, Vec<Vec<Expr>>)>> {
        let mut ty: Option<String> = None;
        let mut per_leaf: Vec<Vec<Expr>> = Vec::new();
        for item in items {
            let (item_ty, leaves) = if let ExprKind::ImpliedDo {
                items,
                var,
                start,
                end,
                step,
            } = &item.kind
            {
                let Some((t, inner)) = self.items_leaf_values(items)? else {
                    return Ok(None);
                };
                let looped = inner
                    .into_iter()
                    .map(|leaf_items| Expr {
                        kind: ExprKind::ImpliedDo {
                            items: leaf_items,
                            var: var.clone(),
                            start: start.clone(),
                            end: end.clone(),
                            step: step.clone(),
                        },
                        span: item.span,
                    })
                    .collect();
                (t, looped)
            } else {
                let Some(found) = self.leaf_values(item)? else {
                    return Ok(None);
                };
                found
            };
            match &ty {
                None => {
                    per_leaf = vec![Vec::new(); leaves.len()];
                    ty = Some(item_ty);
                }
                Some(t) if *t != item_ty || per_leaf.len() != leaves.len() => {
                    return Err(self.err(
                        item.span,
                        format!("an array constructor mixing the types `{t}` and `{item_ty}`"),
                    ))
                }
                Some(_) => {}
            }
            for (list, leaf) in per_leaf.iter_mut().zip(leaves) {
                list.push(leaf);
            }
        }
        Ok(ty.map(|t| (t, per_leaf)))
    }

    /// The components' values of the structure constructor `name(args)`
    /// (by position or keyword, else the default), for a type whose
    /// components are not structures.
    fn constructor_leaf_values(&mut self, name: &Name, args: &[Arg]) -> R<(String, Vec<Expr>)> {
        let def = self.find_type(&name.text).expect("a derived type");
        let mut values: Vec<Option<Expr>> = def.comps.iter().map(|c| c.init.clone()).collect();
        for (i, a) in args.iter().enumerate() {
            let slot = match &a.keyword {
                None => Some(i),
                Some(k) => def.comps.iter().position(|c| c.name == k.text),
            };
            let (Some(slot), ArgValue::Expr(x)) = (slot.filter(|&j| j < values.len()), &a.value)
            else {
                return Err(self.err(
                    a.keyword.as_ref().map_or(name.span, |k| k.span),
                    format!("not a component of a constructor of type `{}`", def.name),
                ));
            };
            values[slot] = Some(x.clone());
        }
        let mut out = Vec::new();
        for (c, v) in def.comps.iter().zip(values) {
            let plain = matches!(c.ty, super::scope::CompType::Plain(_)) && !c.allocatable;
            match v {
                Some(v) if plain && (c.dims.is_none() || self.rank_of(&v) > 0) => out.push(v),
                _ => {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: the constructor of type `{}` in an array \
                             intrinsic of structures (give every component, an array for an \
                             array component; no structure components)",
                            def.name
                        ),
                    ))
                }
            }
        }
        Ok((def.name.clone(), out))
    }

    /// The structure declaration and leaf expressions of an array of
    /// structures or a section of one.
    fn struct_leaves_of(&mut self, e: &Expr) -> R<(StructDecl, Vec<Expr>)> {
        match self.struct_ref(e, false)? {
            Some(found) => Ok(found),
            None => Err(self.err(e.span, "expected an array of structures")),
        }
    }

    /// The leaves of an array of structures with their own ranks (the
    /// status of an ALLOCATABLE scalar component, `b%s.alloc`, is one
    /// like the others); a located error for the leaves of ALLOCATABLE
    /// array components.
    fn leaves(&mut self, st: &StructDecl) -> R<Vec<Leaf>> {
        let rank = st.dims.as_ref().map_or(0, Vec::len);
        let mut out = Vec::new();
        for l in &st.leaves {
            let leaf = Name {
                text: l.clone(),
                span: self.span,
            };
            let own = match self.resolve(&leaf)? {
                Resolved::Var(v) if !l.contains('.') || l.ends_with(".alloc") => {
                    self.proc.var(v).dims.len().saturating_sub(rank)
                }
                _ => {
                    return Err(self.err(
                        self.span,
                        format!(
                            "unsupported Fortran: an array intrinsic or broadcast of arrays of \
                             structures of type `{}`, which has ALLOCATABLE array components",
                            st.type_name
                        ),
                    ))
                }
            };
            out.push(Leaf {
                name: l.clone(),
                own,
            });
        }
        Ok(out)
    }

    /// `target = value` for a scalar structure `value`: loops over the
    /// target's positions assigning it to every element.
    fn broadcast(&mut self, s: &Stmt, target: &Expr, value: &Expr) -> R<Stmt> {
        let t = Operand::of(target).expect("an array of structures or a section");
        if matches!(value.kind, ExprKind::Apply { .. }) && !self.is_struct_element(value)? {
            if let Some(at) = reads(value, base(&t.name.text), &[]) {
                return Err(self.err(
                    at,
                    format!(
                        "unsupported Fortran: a structure constructor broadcast to `{}` reading it \
                         (assign the value to a temporary first)",
                        base(&t.name.text)
                    ),
                ));
            }
        }
        let rank = self.operand_rank(&t)?.unwrap_or(0);
        let counters: Vec<String> = (0..rank).map(|_| self.position_counter()).collect();
        let body = vec![assign(t.element(&counters, s.span), value.clone(), s.span)];
        let mut out = loops_over(&t, &counters, body, s.span);
        out.label = s.label;
        Ok(out)
    }

    /// True when `e` is an element of an array of structures (not a
    /// constructor).
    fn is_struct_element(&mut self, e: &Expr) -> R<bool> {
        let ExprKind::Apply { name, .. } = &e.kind else {
            return Ok(false);
        };
        Ok(matches!(self.resolve(name)?, Resolved::Struct(st) if st.dims.is_some()))
    }

    /// `target = which(args)` as one assignment per leaf (see the module
    /// documentation).
    fn per_leaf_intrinsic(
        &mut self,
        s: &Stmt,
        target: &Expr,
        name: &Name,
        args: &[Arg],
    ) -> R<Vec<Stmt>> {
        let which = name.text.as_str();
        let slots = struct_slots(which).expect("an intrinsic lowered per leaf");
        let given = keyed(which, args).map_err(|m| self.err(name.span, m))?;
        if which == "eoshift" && given.get(2).copied().flatten().is_none() {
            return Err(self.err(
                name.span,
                "`eoshift` of arrays of structures takes a BOUNDARY= (a structure has no default)",
            ));
        }
        let (st, target_leaves) = self.struct_leaves_of(target)?;
        let leaves = self.leaves(&st)?;
        let target_base =
            base(&Operand::of(target).expect("a structure array").name.text).to_string();
        // The leaves of every argument of structures, by slot.
        let mut struct_args: Vec<Option<Vec<Expr>>> = vec![None; given.len()];
        for (slot, arg) in given.iter().enumerate() {
            let Some(arg) = arg else { continue };
            if slots.contains(&slot) {
                let (from, leaves_of_arg) = match self.leaf_values(arg)? {
                    Some(found) => found,
                    None => {
                        return Err(self.err(
                            arg.span,
                            format!(
                            "the `{}` of `{which}` assigned to an array of structures must be a \
                                 structure or an array of structures of type `{}`",
                            keywords(which)[slot],
                            st.type_name
                        ),
                        ))
                    }
                };
                if from != st.type_name || leaves_of_arg.len() != leaves.len() {
                    return Err(self.err(
                        arg.span,
                        format!(
                            "type mismatch: the `{}` of `{which}` is of type `{}`, the target of type `{}`",
                            keywords(which)[slot],
                            from,
                            st.type_name
                        ),
                    ));
                }
                let flattened = matches!(arg.kind, ExprKind::ArrayConstructor(_));
                if flattened
                    && !(which == "reshape" && slot == 2)
                    && leaves.iter().any(|l| l.own > 0)
                {
                    return Err(self.err(
                        arg.span,
                        format!(
                            "unsupported Fortran: an array constructor of structures with an array \
                             component as the `{}` of `{which}`",
                            keywords(which)[slot]
                        ),
                    ));
                }
                struct_args[slot] = Some(leaves_of_arg);
            } else if let Some(at) = reads(arg, &target_base, &[]) {
                return Err(self.err(
                    at,
                    format!(
                        "unsupported Fortran: the `{}` of `{which}` reading its target `{target_base}` \
                         (assign it to a temporary first)",
                        keywords(which)[slot]
                    ),
                ));
            }
        }
        let target_rank = self.operand_rank(&Operand::of(target).expect("a structure array"))?;
        let mut out = Vec::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let leaf_args: Vec<Option<Expr>> = given
                .iter()
                .enumerate()
                .map(|(slot, a)| match &struct_args[slot] {
                    Some(l) => Some(l[i].clone()),
                    None => a.cloned(),
                })
                .collect();
            let value = if leaf.own == 0 {
                keyed_call(which, leaf_args, s.span)
            } else {
                self.own_dims_call(name, leaf, leaf_args, target_rank.unwrap_or(0), s.span)?
            };
            out.push(assign(target_leaves[i].clone(), value, s.span));
        }
        if let Some(first) = out.first_mut() {
            first.label = s.label;
        }
        Ok(out)
    }

    /// The intrinsic `name` of a leaf with `leaf.own` dimensions of its
    /// own before those of the array of structures (of rank `rank`):
    /// DIM=, SHAPE= and ORDER= counted past them, TRANSPOSE as a RESHAPE
    /// swapping the last two dimensions.
    fn own_dims_call(
        &mut self,
        name: &Name,
        leaf: &Leaf,
        mut a: Vec<Option<Expr>>,
        rank: usize,
        span: Span,
    ) -> R<Expr> {
        let which = name.text.as_str();
        let own = leaf.own;
        let refuse = |this: &mut Self, what: &str| {
            Err(this.err(
                name.span,
                format!(
                    "unsupported Fortran: {what} of `{which}` of arrays of structures with an \
                     array component (`{}`)",
                    leaf.name
                ),
            ))
        };
        match which {
            "pack" | "unpack" => return refuse(self, "the arrays"),
            "transpose" => {
                let source = a[0].take().expect("TRANSPOSE takes a matrix");
                // The matrix's extents, the last two swapped (the leaf
                // may be a section: its extents are the argument's).
                let mut shape = own_extents(&leaf.name, own, span);
                for d in [own + 2, own + 1] {
                    shape.push(call(
                        "size",
                        vec![
                            keyword_arg("array", source.clone(), span),
                            keyword_arg("dim", int_expr(d as i64, span), span),
                        ],
                        span,
                    ));
                }
                let mut order = own_order(own, span);
                order.push(int_expr(own as i64 + 2, span));
                order.push(int_expr(own as i64 + 1, span));
                return Ok(call(
                    "reshape",
                    vec![
                        keyword_arg("source", source, span),
                        keyword_arg("shape", constructor(shape, span), span),
                        keyword_arg("order", constructor(order, span), span),
                    ],
                    span,
                ));
            }
            "reshape" => {
                let shape = a[1].take().expect("RESHAPE takes a shape");
                let Some(items) = constructor_items(&shape) else {
                    return refuse(self, "a SHAPE= other than an array constructor");
                };
                let mut full = own_extents(&leaf.name, own, span);
                full.extend(items.iter().cloned());
                a[1] = Some(constructor(full, span));
                if let Some(order) = a[3].take() {
                    let Some(items) = constructor_items(&order) else {
                        return refuse(self, "an ORDER= other than an array constructor");
                    };
                    let mut full = own_order(own, span);
                    full.extend(
                        items.iter().map(|o| {
                            binary(BinOp::Add, o.clone(), int_expr(own as i64, span), span)
                        }),
                    );
                    a[3] = Some(constructor(full, span));
                }
            }
            "cshift" | "eoshift" => {
                if a[1].as_ref().is_some_and(|x| self.rank_of(x) > 0) {
                    return refuse(self, "an array SHIFT=");
                }
                if which == "eoshift" && a[2].is_some() && rank > 1 {
                    return refuse(self, "a BOUNDARY= of an array of rank > 1");
                }
            }
            _ => {}
        }
        if let Some(slot) = dim_slot(which) {
            let dim = a[slot].take().unwrap_or_else(|| int_expr(1, span));
            a[slot] = Some(binary(BinOp::Add, dim, int_expr(own as i64, span), span));
        }
        Ok(keyed_call(which, a, span))
    }
}
