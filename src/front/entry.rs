//! ENTRY statements: alternate entry points of a subroutine or function.
//!
//! `SUBROUTINE INIT(A)` ... `ENTRY EVAL(X, F)` ... gives two procedures
//! sharing one body. After parsing, every procedure holding ENTRY
//! statements at the top level of its body is split into one ordinary
//! procedure per entry point (the procedure itself first):
//!
//! - its dummy arguments are the entry point's; the declarations of the
//!   other entry points' dummies are dropped when the procedure does not
//!   reference them (referenced ones become locals, as they are undefined
//!   when entered there);
//! - its body is the procedure's body from the entry statement on (ENTRY
//!   statements passed through do nothing), without the statements no path
//!   reaches (after RETURN, STOP or GO TO up to the next labelled one); when
//!   the body from the entry on jumps to a label before it, the whole body
//!   is kept behind a jump to the entry statement;
//! - for a function, every result variable (the function's and the other
//!   entries') is renamed to the entry's own (they share storage);
//! - it shares the SAVE variables of the procedure holding the statement
//!   ([`Procedure::entry_of`]: sema names their storage after that
//!   procedure); COMMON blocks and module variables are shared anyway.
//!
//! Copies rather than a master procedure with an entry selector and the
//! union of the dummies: each entry point is then an ordinary procedure
//! with exactly its own dummies, so activity analysis, the tangent and
//! adjoint transforms, the engine's argument binding and the emitted
//! Fortran need nothing new, and no dummy is passed absent. The price is
//! code size (each copy holds the code reachable from its entry).

use std::collections::BTreeSet;

use super::ast::{
    Decl, DeclKind, Expr, ExprKind, Name, ProcKind, Procedure, ProgramUnit, Stmt, StmtKind,
};
use super::diag::Diagnostic;

/// Splits every procedure of `units` holding ENTRY statements (external
/// and module procedures) into one procedure per entry point. ENTRY in a
/// main program or an internal procedure is an error.
pub fn split_entries(units: &mut Vec<ProgramUnit>, diags: &mut Vec<Diagnostic>) {
    let old = std::mem::take(units);
    for unit in old {
        match unit {
            ProgramUnit::Procedure(p) => {
                for q in split_procedure(p, diags) {
                    units.push(ProgramUnit::Procedure(q));
                }
            }
            ProgramUnit::Module(mut m) => {
                let contains = std::mem::take(&mut m.contains);
                m.contains = contains
                    .into_iter()
                    .flat_map(|p| split_procedure(p, diags))
                    .collect();
                units.push(ProgramUnit::Module(m));
            }
        }
    }
}

/// One way into a procedure: its name, dummies, result variable (for a
/// function) and the index of its first statement in the body.
struct Point {
    name: Name,
    args: Vec<Name>,
    result: Option<Name>,
    start: usize,
}

/// The procedures of `p`'s entry points (just `p` when it has none).
fn split_procedure(mut p: Procedure, diags: &mut Vec<Diagnostic>) -> Vec<Procedure> {
    for c in &mut p.contains {
        refuse_entries(c, "an internal procedure", diags);
    }
    let entries: Vec<(usize, Stmt)> = p
        .body
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.kind, StmtKind::Entry { .. }))
        .map(|(i, s)| (i, s.clone()))
        .collect();
    if entries.is_empty() {
        return vec![p];
    }
    let function = match &p.kind {
        ProcKind::Function { result, .. } => Some(result.clone().unwrap_or(p.name.clone())),
        ProcKind::Subroutine => None,
        ProcKind::Program | ProcKind::BlockData => {
            refuse_entries(&mut p, "a main program", diags);
            return vec![p];
        }
    };
    let mut points = vec![Point {
        name: p.name.clone(),
        args: p.args.clone(),
        result: function.clone(),
        start: 0,
    }];
    for (i, s) in entries {
        let StmtKind::Entry { name, args, result } = s.kind else {
            continue;
        };
        if points.iter().any(|q| q.name.text == name.text) {
            diags.push(Diagnostic::error(
                name.span,
                format!(
                    "ENTRY `{}` names another entry point of `{}`",
                    name.text, p.name.text
                ),
            ));
            continue;
        }
        if function.is_none() && result.is_some() {
            diags.push(Diagnostic::error(
                s.span,
                format!("ENTRY `{}` of a subroutine has a RESULT clause", name.text),
            ));
            continue;
        }
        let result = function.as_ref().map(|_| result.unwrap_or(name.clone()));
        points.push(Point {
            name,
            args,
            result,
            start: i + 1,
        });
    }
    let all_dummies: BTreeSet<String> = points
        .iter()
        .flat_map(|q| q.args.iter().map(|a| a.text.clone()))
        .collect();
    let results: BTreeSet<String> = points
        .iter()
        .filter_map(|q| q.result.as_ref().map(|r| r.text.clone()))
        .collect();
    points
        .iter()
        .map(|q| entry_procedure(&p, q, &all_dummies, &results))
        .collect()
}

/// The procedure entered at `q`.
fn entry_procedure(
    p: &Procedure,
    q: &Point,
    all_dummies: &BTreeSet<String>,
    results: &BTreeSet<String>,
) -> Procedure {
    let mut body = entry_body(&p.body, q.start);
    let mut referenced = BTreeSet::new();
    body.iter().for_each(|s| names_in_stmt(s, &mut referenced));
    let own_result = q.result.as_ref().map(|r| r.text.as_str());
    // Other result variables are this entry's result: renamed, undeclared.
    let renamed: BTreeSet<String> = results
        .iter()
        .filter(|r| Some(r.as_str()) != own_result)
        .cloned()
        .collect();
    if let Some(own) = &q.result {
        body.iter_mut()
            .for_each(|s| rename_in_stmt(s, &renamed, &own.text));
    }
    let dropped: BTreeSet<String> = all_dummies
        .iter()
        .filter(|d| !q.args.iter().any(|a| &a.text == *d) && !referenced.contains(*d))
        .chain(renamed.iter())
        .cloned()
        .collect();
    let decls = p
        .decls
        .iter()
        .filter_map(|d| without_names(d, &dropped))
        .collect();
    let is_host = q.start == 0;
    let kind = match &p.kind {
        ProcKind::Function { prefix_type, .. } => ProcKind::Function {
            // The prefix types the procedure's own result only.
            prefix_type: if is_host { prefix_type.clone() } else { None },
            result: q.result.clone().filter(|r| r.text != q.name.text),
        },
        other => other.clone(),
    };
    Procedure {
        kind,
        name: q.name.clone(),
        args: q.args.clone(),
        decls,
        body,
        formats: p.formats.clone(),
        contains: p.contains.clone(),
        nested: p.nested,
        span: if is_host { p.span } else { q.name.span },
        elemental: p.elemental,
        entry_of: (!is_host).then(|| p.name.clone()),
    }
}

/// The statements run when entering at `start`: ENTRY statements dropped,
/// the whole body behind a jump to the entry when the part from `start`
/// jumps back before it, unreachable statements removed.
fn entry_body(body: &[Stmt], start: usize) -> Vec<Stmt> {
    let tail = &body[start..];
    let mut defined = BTreeSet::new();
    let mut targets = BTreeSet::new();
    tail.iter()
        .for_each(|s| labels_in_stmt(s, &mut defined, &mut targets));
    let jumps_back = targets.iter().any(|l| !defined.contains(l));
    let mut out = Vec::new();
    if start > 0 && jumps_back {
        let mut all = BTreeSet::new();
        body.iter()
            .for_each(|s| labels_in_stmt(s, &mut all, &mut BTreeSet::new()));
        let label = all.last().map_or(1, |l| l + 1);
        let span = body[start - 1].span;
        out.push(Stmt {
            label: None,
            kind: StmtKind::Goto(label),
            span,
        });
        for (i, s) in body.iter().enumerate() {
            if i + 1 == start {
                out.push(Stmt {
                    label: Some(label),
                    kind: StmtKind::Continue,
                    span,
                });
            } else {
                out.push(s.clone());
            }
        }
    } else {
        out.extend(tail.iter().cloned());
    }
    out.retain(|s| !matches!(s.kind, StmtKind::Entry { .. }));
    let mut dead = false;
    out.retain(|s| {
        if dead && s.label.is_none() {
            return false;
        }
        dead = matches!(
            s.kind,
            StmtKind::Return | StmtKind::Goto(_) | StmtKind::Stop(_)
        );
        true
    });
    out
}

/// A declaration without the entities named in `drop` (`None` when none
/// is left).
fn without_names(d: &Decl, drop: &BTreeSet<String>) -> Option<Decl> {
    let keep_name = |n: &Name| !drop.contains(&n.text);
    let mut d = d.clone();
    let left = match &mut d.kind {
        DeclKind::Type { entities, .. }
        | DeclKind::Dimension(entities)
        | DeclKind::Allocatable(entities) => {
            entities.retain(|e| keep_name(&e.name));
            entities.len()
        }
        DeclKind::Intent(_, names)
        | DeclKind::Optional(names)
        | DeclKind::Value(names)
        | DeclKind::External(names)
        | DeclKind::Procedure { names, .. } => {
            names.retain(keep_name);
            names.len()
        }
        _ => 1,
    };
    (left > 0).then_some(d)
}

/// Every statement nested in `s` (itself included), depth first.
fn each_stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Stmt)) {
    f(s);
    if let StmtKind::LogicalIf { stmt, .. } = &mut s.kind {
        each_stmt(stmt, f);
    }
    for b in s.kind.bodies_mut() {
        b.iter_mut().for_each(|t| each_stmt(t, f));
    }
}

/// Every expression nested in `e` (itself included).
fn each_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    for c in e.kind.children_mut() {
        each_expr(c, f);
    }
}

/// The labels `s` defines and the labels its jumps target.
fn labels_in_stmt(s: &Stmt, defined: &mut BTreeSet<u32>, targets: &mut BTreeSet<u32>) {
    let mut s = s.clone();
    each_stmt(&mut s, &mut |t| {
        defined.extend(t.label);
        match &t.kind {
            StmtKind::Goto(l) => {
                targets.insert(*l);
            }
            StmtKind::ComputedGoto { labels, .. } => targets.extend(labels.iter().copied()),
            StmtKind::ArithmeticIf { labels, .. } => targets.extend(labels.iter().copied()),
            _ => {}
        }
    });
}

/// The first part of a (possibly `%`-qualified) name.
fn base_name(text: &str) -> &str {
    text.split('%').next().unwrap_or(text)
}

/// Adds the variable and procedure names `s` uses to `out`.
fn names_in_stmt(s: &Stmt, out: &mut BTreeSet<String>) {
    let mut s = s.clone();
    each_stmt(&mut s, &mut |t| {
        match &t.kind {
            StmtKind::Call { name, .. } => {
                out.insert(name.text.clone());
            }
            StmtKind::Do { var, .. } => {
                out.insert(var.text.clone());
            }
            _ => {}
        }
        for e in t.kind.own_exprs_mut() {
            each_expr(e, &mut |x| match &x.kind {
                ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => {
                    out.insert(base_name(&n.text).to_string());
                }
                _ => {}
            });
        }
    });
}

/// Renames the variables named in `from` to `to` throughout `s`.
fn rename_in_stmt(s: &mut Stmt, from: &BTreeSet<String>, to: &str) {
    let rename = |n: &mut Name| {
        let base = base_name(&n.text);
        if from.contains(base) {
            n.text = format!("{to}{}", &n.text[base.len()..]);
        }
    };
    each_stmt(s, &mut |t| {
        for e in t.kind.own_exprs_mut() {
            each_expr(e, &mut |x| match &mut x.kind {
                ExprKind::Name(n) => rename(n),
                ExprKind::Apply { name, .. } => rename(name),
                _ => {}
            });
        }
    });
}

/// Reports and removes the top-level ENTRY statements of `p`, where
/// `what` (a main program, an internal procedure) may have none.
fn refuse_entries(p: &mut Procedure, what: &str, diags: &mut Vec<Diagnostic>) {
    for s in &p.body {
        if let StmtKind::Entry { name, .. } = &s.kind {
            diags.push(Diagnostic::error(
                s.span,
                format!("ENTRY `{}` in {what} (`{}`)", name.text, p.name.text),
            ));
        }
    }
    p.body.retain(|s| !matches!(s.kind, StmtKind::Entry { .. }));
}
