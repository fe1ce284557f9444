//! Whole-structure assignment between a structure and an element of an
//! array of structures whose type has ALLOCATABLE components (`t = b(k)`,
//! `b(k) = t`). The structure keeps such a component as an ALLOCATABLE
//! array of its own (`t%u`), the array of structures as the storage of
//! `ragged` (`b%u.data`, `b%u.bounds`), so the two have different leaves:
//! they are paired by component, and each ALLOCATABLE component is
//! assigned as Fortran's intrinsic assignment does it (the target's
//! released, then, when the source's is allocated, allocated with its
//! bounds and given its values), written as the statements a program
//! would write and lowered as such.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, Reported, R};
use adjit_ir::Span;

/// A statement at `span`.
fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt {
        label: None,
        kind,
        span,
    }
}

/// `f(x)` or `f(x, j)` for an inquiry intrinsic `f`.
fn inquiry(f: &str, x: &Expr, dim: Option<i64>, span: Span) -> Expr {
    let mut args = vec![Arg::positional(x.clone())];
    if let Some(j) = dim {
        args.push(Arg {
            keyword: None,
            value: ArgValue::Expr(Expr {
                kind: ExprKind::Int {
                    value: j,
                    kind: None,
                },
                span,
            }),
        });
    }
    Expr::apply(f, args, span)
}

/// The component a leaf of a whole-structure assignment stands for,
/// without the structure's name (`%u` for `t%u`, `b%u.data(:, k)` and
/// `b%u.bounds(:, k)`), and whether it is the bounds leaf.
fn component_key(e: &Expr) -> Option<(String, bool)> {
    let text = match &e.kind {
        ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => &n.text,
        _ => return None,
    };
    let (_, rest) = text.split_once('%')?;
    if let Some(c) = rest.strip_suffix(".bounds") {
        return Some((c.to_string(), true));
    }
    Some((
        rest.strip_suffix(".data").unwrap_or(rest).to_string(),
        false,
    ))
}

impl Lowerer<'_, '_> {
    /// `to = src` component by component, where one side is an element of
    /// an array of structures with ALLOCATABLE components and the other a
    /// structure (`to` and `src` are their leaves, of
    /// [`Lowerer::struct_ref`]); see the module documentation.
    pub(super) fn mixed_struct_assign(&mut self, to: &[Expr], src: &[Expr], span: Span) -> R<()> {
        let mut failed = false;
        for t in to {
            let Some((key, false)) = component_key(t) else {
                continue;
            };
            let Some(f) = src
                .iter()
                .find(|f| component_key(f) == Some((key.clone(), false)))
            else {
                return Err(self.err(span, format!("no component `{key}` in the value assigned")));
            };
            let r = match (self.element_component(t), self.element_component(f)) {
                (Some((e, rank)), None) => self.assign_allocatable(&e, f, rank, span),
                (None, Some((e, rank))) => self.assign_allocatable(t, &e, rank, span),
                _ => self.leaf_assign(t, f),
            };
            failed |= r.is_err();
        }
        if failed {
            return Err(Reported);
        }
        Ok(())
    }

    /// For the storage leaf `b%u.data(:, k)` of an ALLOCATABLE component of
    /// an element, the element's component as a program names it after
    /// completion (`b%u(:, k)`) and its rank.
    fn element_component(&self, leaf: &Expr) -> Option<(Expr, usize)> {
        let ExprKind::Apply { name, args } = &leaf.kind else {
            return None;
        };
        let comp = name.text.strip_suffix(".data")?;
        let rank = self.ragged_rank(comp)?;
        Some((
            Expr {
                kind: ExprKind::Apply {
                    name: Name {
                        text: comp.to_string(),
                        span: name.span,
                    },
                    args: args.clone(),
                },
                span: leaf.span,
            },
            rank,
        ))
    }

    /// `target = source` for ALLOCATABLE arrays of rank `rank` (whole
    /// arrays, or whole components of an element: `b%u(:, k)`):
    /// `if (allocated(target)) deallocate(target)`, then, when `source` is
    /// allocated, `allocate(target(lbound(source, 1):ubound(source, 1),
    /// ...))` and `target = source`.
    fn assign_allocatable(
        &mut self,
        target: &Expr,
        source: &Expr,
        rank: usize,
        span: Span,
    ) -> R<()> {
        let release = stmt(
            StmtKind::LogicalIf {
                cond: inquiry("allocated", target, None, span),
                stmt: Box::new(stmt(
                    StmtKind::Deallocate {
                        objects: vec![target.clone()],
                        stat: None,
                        errmsg: None,
                    },
                    span,
                )),
            },
            span,
        );
        let ranges = (1..=rank as i64).map(|j| Arg {
            keyword: None,
            value: ArgValue::Range {
                lo: Some(inquiry("lbound", source, Some(j), span)),
                hi: Some(inquiry("ubound", source, Some(j), span)),
                stride: None,
            },
        });
        let object = match &target.kind {
            ExprKind::Apply { name, args } => ExprKind::Apply {
                name: name.clone(),
                args: ranges.chain(args[rank..].iter().cloned()).collect(),
            },
            ExprKind::Name(name) => ExprKind::Apply {
                name: name.clone(),
                args: ranges.collect(),
            },
            _ => return Err(self.err(span, "not an ALLOCATABLE component")),
        };
        let copy = stmt(
            StmtKind::If {
                name: None,
                arms: vec![(
                    inquiry("allocated", source, None, span),
                    vec![
                        stmt(StmtKind::allocate(vec![Expr { kind: object, span }]), span),
                        stmt(
                            StmtKind::Assign {
                                target: target.clone(),
                                value: source.clone(),
                            },
                            span,
                        ),
                    ],
                )],
                else_body: None,
            },
            span,
        );
        self.stmt_rewritten(release)?;
        self.stmt_rewritten(copy)
    }
}
