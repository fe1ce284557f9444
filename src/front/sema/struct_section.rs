//! Sections of arrays of structures as actual arguments.
//!
//! An array of structures is one array per leaf component, the
//! component's own dimensions first (see `structure`), so a section of it
//! (`cells(2:n-1)`, `cells(1:n:2)`, `grid(:, j)`, `grid(i, :)`) given for a
//! structure dummy is one section per leaf: `cells%w(2:n-1)` and, for an
//! array component `q(4)`, `cells%q(:, 2:n-1)` (the storage of an
//! ALLOCATABLE array component, `cells%u.data(:, 2:n-1)`, goes through a
//! temporary of its own: `sema::ragged_arg`). Each leaf section is then
//! passed as any numeric section is (`section_arg`): by the address of its
//! first element, or as a slice for an assumed-shape dummy, when it is
//! contiguous; through a temporary copied in before the call and back
//! after it otherwise. Every leaf of a structure has the same shape of
//! structure dimensions, so a leaf of an array component is contiguous
//! exactly when the scalar leaves are.
//!
//! An array constructor of structures given for a structure dummy
//! (`call show([p1, p2])`, `total_mass([p1, a(3), pt(s, v), ring])`) is
//! one array constructor per leaf of the same items' leaves
//! (`[p1%m, p2%m]`; a leaf of an array component `x(3)` reshaped to the
//! component's extents then the number of structures, `reshape([p1%x,
//! p2%x], [3, 2])`), each passed through a temporary as a numeric array
//! constructor is. The items are scalar structures (variables, function
//! results, elements of arrays of structures, and structure constructors, the latter assigned to a
//! temporary structure first) and whole arrays of structures of
//! constant shape (`[p1, ring]`, `[ring, grid]`: each leaf of a whole array
//! in array element order; a whole array alone, `[ring]`, is the array
//! itself).
//!
//! The leaf sections of an actual are made once per statement and kept
//! (by the address of the actual) for the lowerer's lifetime: their
//! temporaries are prepared before the statement and found again, by the
//! address of the leaf expression, when the call is lowered.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Resolved, StructSection, R};
use super::scope::StructDecl;
use super::struct_elemental::{int_expr, name_expr};
use super::{Dummy, Sig};
use adjit_ir::CallArg;
use adjit_ir::{Bound, Span};
use std::rc::Rc;

/// A subscript `:`.
pub(super) fn full_range() -> Arg {
    Arg {
        keyword: None,
        value: ArgValue::Range {
            lo: None,
            hi: None,
            stride: None,
        },
    }
}

impl Lowerer<'_, '_> {
    /// The leaf sections of `e` when it is a section of an array of
    /// structures (`a(2:n)`, `g(:, j)`), made on first use; `None` for
    /// anything else (a whole array, an element, not a structure).
    pub(super) fn struct_section(&mut self, e: &Expr) -> R<Option<(StructDecl, Rc<Vec<Arg>>)>> {
        let inner = e.without_parens();
        if let ExprKind::ArrayConstructor(items) = &inner.kind {
            return self.constructor_leaves(e, items);
        }
        let ExprKind::Apply { name, args } = &inner.kind else {
            return Ok(None);
        };
        if !args
            .iter()
            .any(|a| matches!(a.value, ArgValue::Range { .. }))
            || self.find_type(&name.text).is_some()
        {
            return Ok(None);
        }
        let key = e as *const Expr;
        if let Some(s) = self
            .struct_sections
            .iter()
            .find(|s| s.key == key && s.expr == *e)
        {
            return Ok(Some((s.decl.clone(), s.leaves.clone())));
        }
        let st = match self.resolve(name)? {
            Resolved::Struct(st) if st.dims.is_some() => st,
            _ => return Ok(None),
        };
        let rank = st.dims.as_ref().map_or(0, Vec::len);
        self.check_subscript_count(name, rank, args.len())?;
        let mut leaves = Vec::new();
        for l in &st.leaves {
            let leaf = Name {
                text: l.clone(),
                span: name.span,
            };
            let own = match self.resolve(&leaf)? {
                Resolved::Var(v) => self.proc.var(v).dims.len().saturating_sub(rank),
                _ => {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: a section of `{}`, whose component `{l}` is not an array of numbers or logicals, as an actual argument",
                            name.text
                        ),
                    ))
                }
            };
            let mut sub: Vec<Arg> = (0..own).map(|_| full_range()).collect();
            sub.extend(args.iter().cloned());
            leaves.push(Arg {
                keyword: None,
                value: ArgValue::Expr(Expr {
                    kind: ExprKind::Apply {
                        name: leaf,
                        args: sub,
                    },
                    span: e.span,
                }),
            });
        }
        Ok(Some(self.remember_section(key, e, st, leaves)))
    }

    /// Records the leaves made for the actual argument `e` (address `key`)
    /// so that later uses of the same argument find them; returns them.
    fn remember_section(
        &mut self,
        key: *const Expr,
        e: &Expr,
        decl: StructDecl,
        leaves: Vec<Arg>,
    ) -> (StructDecl, Rc<Vec<Arg>>) {
        let leaves = Rc::new(leaves);
        self.struct_sections.push(StructSection {
            key,
            expr: e.clone(),
            decl: decl.clone(),
            leaves: leaves.clone(),
        });
        (decl, leaves)
    }
}

/// The positions (1-based) of an array of extents `extents`, in array
/// element order.
fn column_major(extents: &[i64]) -> Vec<Vec<i64>> {
    let total: i64 = extents.iter().product();
    (0..total)
        .map(|mut p| {
            extents
                .iter()
                .map(|&n| {
                    let k = p % n + 1;
                    p /= n;
                    k
                })
                .collect()
        })
        .collect()
}

/// The element at `position` of the array component a leaf expression
/// stands for: `p%x(i, j)` of `p%x`, `a%x(i, 3)` of `a%x(:, 3)`.
fn element_of(leaf: &Expr, position: &[i64]) -> Option<Expr> {
    let span = leaf.span;
    let mut at = position.iter().map(|&k| int_expr(k, span));
    let (name, args) = match &leaf.kind {
        ExprKind::Name(n) => (n.text.as_str(), at.by_ref().map(Arg::positional).collect()),
        ExprKind::Apply { name, args } => {
            let args = args
                .iter()
                .map(|a| match a.value {
                    ArgValue::Range { .. } => at.next().map_or_else(|| a.clone(), Arg::positional),
                    ArgValue::Expr(_) => a.clone(),
                })
                .collect();
            (name.text.as_str(), args)
        }
        _ => return None,
    };
    Some(Expr::apply(name, args, span))
}

impl Lowerer<'_, '_> {
    /// The leaf values of the array constructor of structures `e` (items
    /// `items`), made on first use (see the module documentation); `None`
    /// when its first item is not a structure.
    fn constructor_leaves(
        &mut self,
        e: &Expr,
        items: &[Expr],
    ) -> R<Option<(StructDecl, Rc<Vec<Arg>>)>> {
        let key = e as *const Expr;
        if let Some(s) = self
            .struct_sections
            .iter()
            .find(|s| s.key == key && s.expr == *e)
        {
            return Ok(Some((s.decl.clone(), s.leaves.clone())));
        }
        let span = e.span;
        // Per item: whether it is a whole array, its structure and leaves.
        let mut values: Vec<(bool, StructDecl, Vec<Expr>)> = Vec::new();
        for item in items {
            let made = match &item.without_parens().kind {
                ExprKind::Apply { name, .. } if self.find_type(&name.text).is_some() => {
                    let def = self.find_type(&name.text).expect("a type");
                    let (tmp, st) = self.temp_struct(def)?;
                    self.struct_assign(&name_expr(&tmp.text, item.span), &st, item)?;
                    let leaves = st.leaves.iter().map(|l| name_expr(l, item.span)).collect();
                    Some((st, leaves))
                }
                // An element's leaves with an array component's own
                // dimensions whole (`ring%pos(:, 1)`).
                ExprKind::Name(_) | ExprKind::Apply { .. } => self.struct_ref(item, false)?,
                _ => None,
            };
            let sectioned = matches!(&item.without_parens().kind, ExprKind::Apply { args, .. }
                if args.iter().any(|a| matches!(a.value, ArgValue::Range { .. })));
            let whole = matches!(&item.without_parens().kind, ExprKind::Name(_))
                && matches!(&made, Some((st, _)) if st.dims.is_some());
            match made {
                Some(_) if sectioned => {
                    return Err(self.err(
                        item.span,
                        "unsupported Fortran: a section of an array of structures in an array constructor of structures as an actual argument",
                    ))
                }
                Some((st, leaves)) => values.push((whole, st, leaves)),
                None if values.is_empty() => return Ok(None),
                None => {
                    return Err(self.err(
                        item.span,
                        "unsupported Fortran: an item of an array constructor of structures as an actual argument other than a structure or a whole array of structures",
                    ))
                }
            }
        }
        let Some((_, first, _)) = values.first() else {
            return Ok(None);
        };
        let type_name = first.type_name.clone();
        if let Some(((_, st, _), item)) = values
            .iter()
            .zip(items)
            .find(|((_, st, _), _)| st.type_name != type_name)
        {
            return Err(self.err(
                item.span,
                format!(
                    "an array constructor of structures of type `{type_name}` with an item of type `{}`",
                    st.type_name
                ),
            ));
        }
        let leaves = match values.as_slice() {
            // `[ring]`: the array itself.
            [(true, _, leaves)] => leaves.iter().cloned().map(Arg::positional).collect(),
            _ => self.item_leaves(&values, span)?,
        };
        let decl = StructDecl {
            type_name,
            leaves: first.leaves.clone(),
            dims: Some(vec![super::super::ast::DimSpec::AssumedShape {
                lower: None,
            }]),
        };
        Ok(Some(self.remember_section(key, e, decl, leaves)))
    }

    /// The leaf values of an array constructor of structures whose items
    /// (scalar structures and whole arrays of structures) have the leaves
    /// `values`: per leaf, the array constructor of every item's leaf (a
    /// whole array's leaf of a scalar component as it is, in array element
    /// order), an array component's element by element then reshaped to
    /// the component's extents and the number of structures.
    fn item_leaves(&mut self, values: &[(bool, StructDecl, Vec<Expr>)], span: Span) -> R<Vec<Arg>> {
        let nleaves = values.first().map_or(0, |(_, st, _)| st.leaves.len());
        let mut leaves = Vec::new();
        for k in 0..nleaves {
            let own = self.item_own_extents(&values[0], k)?;
            let mut parts = Vec::new();
            for (whole, _, l) in values {
                if own.is_empty() {
                    parts.push(l[k].clone());
                    continue;
                }
                // Element by element (RESHAPE takes scalar items): a whole
                // array's in array element order, the component's own
                // dimensions first.
                let leaf = self.completed_leaf(&l[k])?;
                let positions = if *whole {
                    column_major(&self.own_extents(&leaf)?)
                } else {
                    column_major(&own)
                };
                for position in positions {
                    match element_of(&leaf, &position) {
                        Some(x) => parts.push(x),
                        None => return Err(self.err(leaf.span, "not a component")),
                    }
                }
            }
            let ctor = Expr {
                kind: ExprKind::ArrayConstructor(parts),
                span,
            };
            leaves.push(Arg::positional(if own.is_empty() {
                ctor
            } else {
                let count = self.structure_count(values)?;
                let shape = own
                    .iter()
                    .chain(std::iter::once(&count))
                    .map(|&n| int_expr(n, span))
                    .collect();
                let shape = Expr {
                    kind: ExprKind::ArrayConstructor(shape),
                    span,
                };
                Expr::apply_positional("reshape", vec![ctor, shape], span)
            }));
        }
        Ok(leaves)
    }

    /// The number of structures of the items of an array constructor of
    /// structures (`(whole, structure, leaves)`): one per scalar item, the
    /// constant size of each whole array.
    fn structure_count(&mut self, values: &[(bool, StructDecl, Vec<Expr>)]) -> R<i64> {
        let mut count = 0;
        for (whole, st, l) in values {
            count += match (whole, l.first()) {
                (true, Some(leaf)) => {
                    let all = self.own_extents(leaf)?;
                    let rank = st.dims.as_ref().map_or(0, Vec::len);
                    all[all.len().saturating_sub(rank)..].iter().product()
                }
                _ => 1,
            };
        }
        Ok(count)
    }

    /// The constant extents of the component the `k`-th leaf of an item
    /// of an array constructor of structures (`(whole, structure,
    /// leaves)`) stands for: a whole array's leaf without the structures'
    /// dimensions.
    fn item_own_extents(&mut self, item: &(bool, StructDecl, Vec<Expr>), k: usize) -> R<Vec<i64>> {
        let (whole, st, l) = item;
        let leaf = self.completed_leaf(&l[k])?;
        let mut own = self.own_extents(&leaf)?;
        if *whole {
            let rank = st.dims.as_ref().map_or(0, Vec::len);
            own.truncate(own.len().saturating_sub(rank));
        }
        Ok(own)
    }

    /// The leaf expression `leaf` of an element (`ring%pos(1)` for
    /// `ring(1)`) with the component's own dimensions written out as
    /// whole ranges before the element's subscripts (`ring%pos(:, 1)`).
    fn completed_leaf(&mut self, leaf: &Expr) -> R<Expr> {
        let ExprKind::Apply { name, args } = &leaf.kind else {
            return Ok(leaf.clone());
        };
        let Resolved::Var(v) = self.resolve(name)? else {
            return Err(self.err(leaf.span, format!("`{}` is not a variable", name.text)));
        };
        let missing = self.proc.var(v).dims.len().saturating_sub(args.len());
        let args = (0..missing)
            .map(|_| full_range())
            .chain(args.iter().cloned())
            .collect();
        Ok(Expr::apply(&name.text, args, leaf.span))
    }

    /// The constant extents of the component a leaf expression `leaf`
    /// stands for: the dimensions of the variable it names, or those an
    /// element's leaf (`ring%pos(:, 3)`) takes whole; a located error when
    /// one is not constant.
    fn own_extents(&mut self, leaf: &Expr) -> R<Vec<i64>> {
        let (n, args) = match &leaf.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            _ => return Err(self.err(leaf.span, "not a component")),
        };
        let Resolved::Var(v) = self.resolve(n)? else {
            return Err(self.err(leaf.span, format!("`{}` is not a variable", n.text)));
        };
        let dims = self.proc.var(v).dims.clone();
        let taken = |k: usize| {
            args.is_none_or(|a| {
                matches!(
                    a.get(k),
                    Some(Arg {
                        value: ArgValue::Range { .. },
                        ..
                    })
                )
            })
        };
        dims.iter()
            .enumerate()
            .filter(|&(k, _)| taken(k))
            .map(|(_, d)| match (&d.lower, &d.upper) {
                (Bound::Const(l), Some(Bound::Const(u))) => Ok((u - l + 1).max(0)),
                _ => Err(self.err(
                    leaf.span,
                    format!(
                        "unsupported Fortran: the component `{}` of run-time extent in an array constructor of structures as an actual argument",
                        n.text
                    ),
                )),
            })
            .collect()
    }

    /// Places the leaf sections `leaves` of a section of an array of
    /// structures given for the structure dummy `d` (the `i`-th argument
    /// of `callee`): a leaf taking hidden extents with them, any other as
    /// a numeric section (a slice when the dummy's last extent is
    /// assumed).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn section_leaves(
        &mut self,
        sig: &Sig,
        d: &Dummy,
        leaves: &[Arg],
        i: usize,
        callee: &Name,
        explicit: bool,
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        for (&pi, leaf) in d.params.iter().zip(leaves) {
            // The storage of an ALLOCATABLE array component goes through
            // its temporary (`sema::ragged_arg`).
            let storage = match &leaf.value {
                ArgValue::Expr(x) => self
                    .arg_temps
                    .iter()
                    .find(|t| t.is_for(x) && t.storage.is_some()),
                ArgValue::Range { .. } => None,
            };
            if let Some(t) = storage {
                out[pi] = Some(CallArg::Var(t.temp));
                continue;
            }
            if let Some(ld) = d.leaves.iter().find(|l| l.params.first() == Some(&pi)) {
                self.plain_actual(sig, ld, leaf, i, callee, (explicit, true), out)?;
                continue;
            }
            let (pty, prank) = sig.params[pi];
            let assumed = sig.dims[pi].last().is_some_and(|x| x.upper.is_none());
            out[pi] = Some(self.actual_arg(leaf, (pty, prank, assumed), i, callee)?);
        }
        Ok(())
    }
}
