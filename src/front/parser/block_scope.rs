//! Scoping of BLOCK constructs that reuse names of earlier BLOCKs.
//!
//! The declarations of a BLOCK construct join the procedure's (one
//! [`DeclKind::Block`]), so two BLOCKs declaring the same name would
//! declare one variable twice. A BLOCK's variables exist only inside it:
//! when a BLOCK declares a name an earlier, closed BLOCK of the procedure
//! declared too, the later BLOCK's variable is renamed throughout the
//! BLOCK (its declarations and statements) to a name no Fortran source can
//! spell ([`block_local_name`]), so each BLOCK has its own variable.
//!
//! A name a nested BLOCK of this one declares again is left alone (and
//! reported by sema as shadowing), as are BLOCKs holding declarations
//! this pass does not rewrite (EQUIVALENCE, INTERFACE, statement
//! functions, ...: sema reports the duplicate as before). Messages about
//! a renamed variable show its source name (`w`:
//! [`crate::front::diag::source_names`] drops the suffix).

use super::super::ast::{
    AdfEntry, CharLen, Decl, DeclKind, DimSpec, Entity, Expr, ExprKind, Name, Stmt, StmtKind,
    TypeSpec,
};
use super::super::diag::BLOCK_RENAME_MARK;
use std::collections::BTreeSet;

/// The name the variable `name` of the `ordinal`-th BLOCK of a procedure
/// takes when an earlier BLOCK declared `name` too (`@` keeps it apart
/// from every Fortran name).
pub(super) fn block_local_name(name: &str, ordinal: usize) -> String {
    format!("{name}{BLOCK_RENAME_MARK}{ordinal}")
}

/// The names the declarations `decls` of a BLOCK declare.
pub(super) fn block_names(decls: &[Decl]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for d in decls {
        match &d.kind {
            DeclKind::Type { entities, .. }
            | DeclKind::Dimension(entities)
            | DeclKind::Allocatable(entities) => {
                out.extend(entities.iter().map(|e| e.name.text.clone()))
            }
            DeclKind::Parameter(pairs) => out.extend(pairs.iter().map(|(n, _)| n.text.clone())),
            _ => {}
        }
    }
    out
}

/// Renames, in the BLOCK whose declarations are `decls` and statements
/// `body` (the `ordinal`-th of its procedure), the names it declares that
/// are in `earlier` (declared by earlier, closed BLOCKs) and not in
/// `nested` (declared again by BLOCKs nested in this one).
pub(super) fn rename_reused(
    decls: &mut [Decl],
    body: &mut [Stmt],
    earlier: &BTreeSet<String>,
    nested: &BTreeSet<String>,
    ordinal: usize,
) {
    if !decls.iter().all(|d| rewritable(&d.kind)) {
        return;
    }
    let reused: BTreeSet<String> = block_names(decls)
        .into_iter()
        .filter(|n| earlier.contains(n) && !nested.contains(n))
        .collect();
    if reused.is_empty() {
        return;
    }
    let r = Renamer { reused, ordinal };
    decls.iter_mut().for_each(|d| r.decl(&mut d.kind));
    body.iter_mut().for_each(|s| r.stmt(s));
}

/// True for the declarations of a BLOCK whose names [`Renamer`] rewrites.
fn rewritable(d: &DeclKind) -> bool {
    matches!(
        d,
        DeclKind::Type { .. }
            | DeclKind::Dimension(_)
            | DeclKind::Allocatable(_)
            | DeclKind::Parameter(_)
            | DeclKind::Save(_)
            | DeclKind::Data(_)
            | DeclKind::Use { .. }
            | DeclKind::Import(_)
            | DeclKind::ImplicitNone
    )
}

/// Renames the names of one BLOCK's reused variables.
struct Renamer {
    reused: BTreeSet<String>,
    ordinal: usize,
}

impl Renamer {
    /// Renames `n` (or the base of `n%c`) when it is reused.
    fn name(&self, n: &mut Name) {
        let split = n.text.find('%').unwrap_or(n.text.len());
        let (base, rest) = n.text.split_at(split);
        if self.reused.contains(base) {
            n.text = format!("{}{rest}", block_local_name(base, self.ordinal));
        }
    }

    fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Name(n) => self.name(n),
            ExprKind::Apply { name, .. } => self.name(name),
            ExprKind::ImpliedDo { var, .. } => self.name(var),
            _ => {}
        }
        for c in e.kind.children_mut() {
            self.expr(c);
        }
    }

    fn dims(&self, dims: &mut Option<Vec<DimSpec>>) {
        for d in dims.iter_mut().flatten() {
            match d {
                DimSpec::Explicit { lower, upper } => {
                    lower.iter_mut().for_each(|x| self.expr(x));
                    self.expr(upper);
                }
                DimSpec::AssumedSize { lower } | DimSpec::AssumedShape { lower } => {
                    lower.iter_mut().for_each(|x| self.expr(x))
                }
            }
        }
    }

    fn entity(&self, e: &mut Entity) {
        self.name(&mut e.name);
        self.dims(&mut e.dims);
        if let Some(CharLen::Expr(x)) = &mut e.char_len {
            self.expr(x);
        }
        e.init.iter_mut().for_each(|x| self.expr(x));
    }

    fn decl(&self, d: &mut DeclKind) {
        match d {
            DeclKind::Type { ty, entities, .. } => {
                self.type_spec(ty);
                entities.iter_mut().for_each(|e| self.entity(e));
            }
            DeclKind::Dimension(entities) | DeclKind::Allocatable(entities) => {
                entities.iter_mut().for_each(|e| self.entity(e))
            }
            DeclKind::Parameter(pairs) => pairs.iter_mut().for_each(|(n, x)| {
                self.name(n);
                self.expr(x);
            }),
            DeclKind::Save(names) => names.iter_mut().for_each(|n| self.name(n)),
            DeclKind::Data(groups) => {
                for g in groups {
                    g.objects.iter_mut().for_each(|x| self.expr(x));
                    for (repeat, value) in &mut g.values {
                        repeat.iter_mut().for_each(|x| self.expr(x));
                        self.expr(value);
                    }
                }
            }
            _ => {}
        }
    }

    /// The kind and length expressions of a type (`real(wp)`,
    /// `character(len=n)` with `wp`, `n` BLOCK constants).
    fn type_spec(&self, ty: &mut TypeSpec) {
        ty.kind.iter_mut().for_each(|x| self.expr(x));
        if let Some(CharLen::Expr(x)) = &mut ty.len {
            self.expr(x);
        }
    }

    /// The marked variables, seeds, destinations and implied DO loops of
    /// ADF / ADR seeds or results.
    fn adf_entries(&self, entries: &mut [AdfEntry]) {
        for e in entries {
            match e {
                AdfEntry::One { target, other } => {
                    self.expr(target);
                    other.iter_mut().for_each(|x| self.expr(x));
                }
                AdfEntry::Loop {
                    items,
                    var,
                    start,
                    end,
                    step,
                } => {
                    self.name(var);
                    self.expr(start);
                    self.expr(end);
                    step.iter_mut().for_each(|x| self.expr(x));
                    self.adf_entries(items);
                }
            }
        }
    }

    fn stmt(&self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Do { var, .. } => self.name(var),
            StmtKind::Forall { indices, .. } => {
                indices.iter_mut().for_each(|ix| self.name(&mut ix.var))
            }
            StmtKind::Adf(b) => {
                self.adf_entries(&mut b.seeds);
                self.adf_entries(&mut b.results);
                b.body.iter_mut().for_each(|t| self.stmt(t));
            }
            _ => {}
        }
        for x in s.kind.own_exprs_mut() {
            self.expr(x);
        }
        if let StmtKind::LogicalIf { stmt, .. } = &mut s.kind {
            self.stmt(stmt);
        }
        for b in s.kind.bodies_mut() {
            b.iter_mut().for_each(|t| self.stmt(t));
        }
    }
}
