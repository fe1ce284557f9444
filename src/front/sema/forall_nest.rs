//! The statements of a FORALL construct as the units FORALL executes:
//! Fortran runs each statement of the body for all index tuples before the
//! next one, and a FORALL or WHERE nested in it counts as the sequence of
//! its own statements. So a nested FORALL is flattened (its statements
//! loop over the outer and inner indices together, under the conjunction
//! of the masks), and a WHERE construct is split into one WHERE per
//! assignment (keeping the masks of its earlier arms, to be negated), each
//! then lowered as a loop nest of its own by
//! [`Lowerer::forall`](super::lowerer::Lowerer).

use super::super::ast::{BinOp, Expr, ExprKind, ForallIndex, Stmt, StmtKind};

/// One statement of a FORALL body with the index specifications (outermost
/// first) and the mask of the FORALLs around it.
pub(super) struct ForallUnit {
    /// Every index of the enclosing FORALLs, outermost first.
    pub indices: Vec<ForallIndex>,
    /// The conjunction of their masks.
    pub mask: Option<Expr>,
    /// An assignment, a WHERE holding one assignment, or (rejected later)
    /// any other statement.
    pub stmt: Stmt,
}

/// The units of a FORALL body under `indices` and `mask`.
pub(super) fn forall_units(
    indices: &[ForallIndex],
    mask: Option<&Expr>,
    body: &[Stmt],
) -> Vec<ForallUnit> {
    let mut out = Vec::new();
    for s in body {
        match &s.kind {
            StmtKind::Forall {
                concurrent: false,
                indices: inner,
                mask: inner_mask,
                body: inner_body,
                ..
            } => {
                let all: Vec<ForallIndex> = indices.iter().chain(inner).cloned().collect();
                let both = match (mask, inner_mask) {
                    (Some(a), Some(b)) => Some(Expr {
                        kind: ExprKind::Binary(
                            BinOp::And,
                            Box::new(a.clone()),
                            Box::new(b.clone()),
                        ),
                        span: b.span,
                    }),
                    (a, b) => a.or(b.as_ref()).cloned(),
                };
                out.extend(forall_units(&all, both.as_ref(), inner_body));
            }
            StmtKind::Where { .. } => {
                out.extend(split_where(s).into_iter().map(|stmt| ForallUnit {
                    indices: indices.to_vec(),
                    mask: mask.cloned(),
                    stmt,
                }))
            }
            _ => out.push(ForallUnit {
                indices: indices.to_vec(),
                mask: mask.cloned(),
                stmt: s.clone(),
            }),
        }
    }
    out
}

/// A WHERE construct as one WHERE per statement of its arms (nested WHERE
/// split the same way): the arms before the statement's are kept with
/// empty bodies, so that their masks are negated as in the construct.
fn split_where(s: &Stmt) -> Vec<Stmt> {
    let StmtKind::Where {
        name,
        arms,
        else_body,
    } = &s.kind
    else {
        return vec![s.clone()];
    };
    let emptied = |k: usize| -> Vec<(Expr, Vec<Stmt>)> {
        arms[..k]
            .iter()
            .map(|(m, _)| (m.clone(), Vec::new()))
            .collect()
    };
    let one = |arms: Vec<(Expr, Vec<Stmt>)>, else_body: Option<Vec<Stmt>>, span| Stmt {
        label: None,
        span,
        kind: StmtKind::Where {
            name: name.clone(),
            arms,
            else_body,
        },
    };
    let mut out = Vec::new();
    for (k, (m, body)) in arms.iter().enumerate() {
        for u in body.iter().flat_map(split_where) {
            let mut a = emptied(k);
            let span = u.span;
            a.push((m.clone(), vec![u]));
            out.push(one(a, None, span));
        }
    }
    for u in else_body.iter().flatten().flat_map(split_where) {
        let span = u.span;
        out.push(one(emptied(arms.len()), Some(vec![u]), span));
    }
    out
}

/// The masks of a split WHERE (every arm's, outermost first) and its one
/// statement; the statement itself with no masks when it is no WHERE.
pub(super) fn where_leaf(s: &Stmt) -> (Vec<&Expr>, &Stmt) {
    let mut masks = Vec::new();
    let mut at = s;
    while let StmtKind::Where {
        arms, else_body, ..
    } = &at.kind
    {
        masks.extend(arms.iter().map(|(m, _)| m));
        let next = arms
            .iter()
            .flat_map(|(_, b)| b)
            .chain(else_body.iter().flatten())
            .next();
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    (masks, at)
}
