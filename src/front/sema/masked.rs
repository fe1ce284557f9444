//! WHERE / ELSEWHERE, FORALL and DO CONCURRENT lowered to loops of
//! ordinary IR (so the tangent and adjoint transforms see nothing new).
//!
//! WHERE: every assignment of the construct becomes a loop over its
//! target's elements guarded by its masks (the WHERE mask and the
//! ELSEWHERE masks before it, negated). FORALL: every statement of the
//! body becomes a loop nest over the index tuples (guarded by the mask).
//! DO CONCURRENT: one loop nest around the whole body. Fortran evaluates a
//! mask once for the whole construct and a FORALL right-hand side for all
//! tuples before assigning; the loops give the same results unless a mask
//! reads a variable assigned earlier in the construct or a right-hand side
//! reads other elements of its target. A WHERE or ELSEWHERE mask reading a
//! variable the construct assigns is therefore evaluated into a LOGICAL
//! temporary when its arm starts; the FORALL cases are rejected with a
//! located error. Index variables keep their values outside the construct.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, ForallIndex, Name, Stmt, StmtKind};
use super::forall_nest::{forall_units, where_leaf, ForallUnit};
use super::lowerer::{expr_names, Lowerer, R};
use adjit_ir::{Inst, Terminator};
use std::collections::BTreeSet;

/// The base name of an assignment target (`a`, `a(i)`, `a(1:n)`) and its
/// subscripts.
fn target_of(target: &Expr) -> Option<(&Name, Option<&[Arg]>)> {
    match &target.kind {
        ExprKind::Name(n) => Some((n, None)),
        ExprKind::Apply { name, args } => Some((name, Some(args.as_slice()))),
        _ => None,
    }
}

/// True when two expressions are written alike (positions ignored).
fn same_expr(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Name(x), ExprKind::Name(y)) => x.text == y.text,
        (ExprKind::Apply { name: f, args: x }, ExprKind::Apply { name: g, args: y }) => {
            f.text == g.text && same_args(x, y)
        }
        (ExprKind::Int { value: x, .. }, ExprKind::Int { value: y, .. }) => x == y,
        (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && same_expr(x, y),
        (ExprKind::Binary(o, x1, x2), ExprKind::Binary(p, y1, y2)) => {
            o == p && same_expr(x1, y1) && same_expr(x2, y2)
        }
        (ExprKind::Paren(x), ExprKind::Paren(y)) => same_expr(x, y),
        _ => false,
    }
}

fn same_opt(a: &Option<Expr>, b: &Option<Expr>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => same_expr(x, y),
        _ => false,
    }
}

/// True when two subscript lists are written alike.
pub(super) fn same_args(a: &[Arg], b: &[Arg]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (&x.value, &y.value) {
            (ArgValue::Expr(x), ArgValue::Expr(y)) => same_expr(x, y),
            (
                ArgValue::Range {
                    lo: l1,
                    hi: h1,
                    stride: s1,
                },
                ArgValue::Range {
                    lo: l2,
                    hi: h2,
                    stride: s2,
                },
            ) => same_opt(l1, l2) && same_opt(h1, h2) && same_opt(s1, s2),
            _ => false,
        })
}

/// True when two subscript lists name disjoint parts of one array: in
/// some dimension both are single integer constants that differ
/// (`q%v(:, 1)` and `q%v(:, 2)`, the components of two elements of an
/// array of structures).
pub(super) fn disjoint_args(a: &[Arg], b: &[Arg]) -> bool {
    let constant = |x: &Arg| match &x.value {
        ArgValue::Expr(Expr {
            kind: ExprKind::Int { value, .. },
            ..
        }) => Some(*value),
        _ => None,
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .any(|(x, y)| matches!((constant(x), constant(y)), (Some(i), Some(j)) if i != j))
}

/// The first reference in `e` to `name` other than `name(args)` written
/// exactly as the target (`args` `None`: the bare name is the target).
fn other_reference<'e>(e: &'e Expr, name: &str, args: Option<&[Arg]>) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Name(n) if n.text == name && args.is_some() => return Some(e),
        ExprKind::Apply { name: n, args: a }
            if n.text == name && args.is_none_or(|t| !same_args(t, a)) =>
        {
            return Some(e)
        }
        _ => {}
    }
    e.kind
        .children()
        .into_iter()
        .find_map(|x| other_reference(x, name, args))
}

/// The target of an assignment earlier in a WHERE construct, which the
/// masks evaluated after it must not read.
struct Assigned<'e> {
    name: &'e Name,
    args: Option<&'e [Arg]>,
}

impl Assigned<'_> {
    /// The name of the target when `e` may read an element it assigned:
    /// any reference to it but a section disjoint from the one assigned
    /// (`q%v(:, 2)` after `q%v(:, 1)`).
    fn read_by(&self, e: &Expr) -> Option<&str> {
        let hit = match &e.kind {
            ExprKind::Name(n) => n.text == self.name.text,
            ExprKind::Apply { name, args } => {
                name.text == self.name.text && self.args.is_none_or(|t| !disjoint_args(t, args))
            }
            _ => false,
        };
        if hit {
            return Some(&self.name.text);
        }
        e.kind.children().into_iter().find_map(|x| self.read_by(x))
    }
}

/// The masks of a WHERE construct evaluated into temporaries: by the
/// temporary's name, the assignment filling it and the temporary.
type MaskLifts = std::collections::BTreeMap<String, (std::rc::Rc<Stmt>, adjit_ir::VarId)>;

/// The targets of the assignments of the WHERE statements `body` (and of
/// the constructs nested in them).
fn where_targets<'e>(body: &'e [Stmt], out: &mut Vec<Assigned<'e>>) {
    for s in body {
        match &s.kind {
            StmtKind::Assign { target, .. } => {
                if let Some((name, args)) = target_of(target) {
                    out.push(Assigned { name, args });
                }
            }
            StmtKind::Where {
                arms, else_body, ..
            } => {
                for (_, b) in arms {
                    where_targets(b, out);
                }
                where_targets(else_body.as_deref().unwrap_or(&[]), out);
            }
            _ => {}
        }
    }
}

impl Lowerer<'_, '_> {
    /// A WHERE construct (or statement) `s`.
    pub(super) fn where_construct(&mut self, s: &Stmt) -> R<()> {
        // The masks were completed with the construct; its statements'
        // component references (`p%v(1:n)`, `q(i)%a`) are completed here,
        // in a copy kept alive as long as the lowering (which may remember
        // expressions by address).
        let Some(mut completed) = self.completed_body(std::slice::from_ref(s))?.pop() else {
            return Err(self.err(s.span, "expected a WHERE construct"));
        };
        let lifts = self.lift_masks(&mut completed)?;
        let completed = std::rc::Rc::new(completed);
        self.lifted.push(completed.clone());
        let StmtKind::Where {
            arms, else_body, ..
        } = &completed.kind
        else {
            return Err(self.err(s.span, "expected a WHERE construct"));
        };
        let mut assigned = Vec::new();
        if self.where_arms(&[], arms, else_body.as_deref(), &mut assigned, &lifts) {
            return Err(super::lowerer::Reported);
        }
        for (_, t) in lifts.values() {
            self.emit(Inst::Deallocate(*t), None);
        }
        Ok(())
    }

    /// Replaces each mask of the WHERE construct `s` (of its nested
    /// constructs too) that reads a variable the construct assigns by an
    /// ALLOCATABLE LOGICAL temporary: Fortran evaluates a mask once, when
    /// its WHERE or ELSEWHERE statement is reached, so the statements
    /// after it see its value from then, not one re-read after their
    /// assignments. Gives, by the temporary's name, the assignment that
    /// fills it (lowered when its arm starts) and the temporary.
    fn lift_masks(&mut self, s: &mut Stmt) -> R<MaskLifts> {
        let snapshot = s.clone();
        let mut targets = Vec::new();
        where_targets(std::slice::from_ref(&snapshot), &mut targets);
        let mut lifts = MaskLifts::new();
        if !targets.is_empty() {
            self.lift_masks_in(s, &targets, &mut lifts)?;
        }
        Ok(lifts)
    }

    /// [`Self::lift_masks`] for the WHERE construct `s` (or nothing when
    /// `s` is another statement), `targets` being the whole construct's.
    fn lift_masks_in(
        &mut self,
        s: &mut Stmt,
        targets: &[Assigned],
        lifts: &mut MaskLifts,
    ) -> R<()> {
        let StmtKind::Where {
            arms, else_body, ..
        } = &mut s.kind
        else {
            return Ok(());
        };
        for (m, body) in arms.iter_mut() {
            if targets.iter().any(|a| a.read_by(m).is_some()) {
                let (_, rank) = self.type_and_rank(m)?;
                if rank > 0 {
                    let t = self.temp("wm", adjit_ir::Type::Bool);
                    let var = &mut self.proc.vars[t.index()];
                    // An ALLOCATABLE array's dims give only its rank.
                    var.dims = vec![
                        adjit_ir::Dim {
                            lower: adjit_ir::Bound::Const(1),
                            upper: Some(adjit_ir::Bound::Const(1)),
                        };
                        rank
                    ];
                    var.storage = adjit_ir::Storage::Allocatable;
                    let text = var.name.clone();
                    self.vars.insert(text.clone(), t);
                    let span = m.span;
                    let name = Expr {
                        kind: ExprKind::Name(Name {
                            text: text.clone(),
                            span,
                        }),
                        span,
                    };
                    let value = std::mem::replace(m, name.clone());
                    let fill = std::rc::Rc::new(Stmt {
                        label: None,
                        span,
                        kind: StmtKind::Assign {
                            target: name,
                            value,
                        },
                    });
                    // Kept for the lowerer's lifetime (expressions are
                    // keyed by address).
                    self.lifted.push(fill.clone());
                    lifts.insert(text, (fill, t));
                }
            }
            for x in body.iter_mut() {
                self.lift_masks_in(x, targets, lifts)?;
            }
        }
        for x in else_body.iter_mut().flatten() {
            self.lift_masks_in(x, targets, lifts)?;
        }
        Ok(())
    }

    /// The statements of a WHERE arm with their component references'
    /// subscripts completed (see `complete_parts`), nested WHERE
    /// constructs' arms too.
    fn completed_body(&mut self, body: &[Stmt]) -> R<Vec<Stmt>> {
        body.iter()
            .map(|s| {
                let mut c = self.complete_parts(s)?.unwrap_or_else(|| s.clone());
                if let StmtKind::Where {
                    arms, else_body, ..
                } = &mut c.kind
                {
                    for (_, b) in arms.iter_mut() {
                        *b = self.completed_body(b)?;
                    }
                    if let Some(b) = else_body {
                        *b = self.completed_body(b)?;
                    }
                }
                Ok(c)
            })
            .collect()
    }

    /// The arms of a WHERE construct under the masks `outer` of the
    /// constructs it is nested in (a nested WHERE adds its masks to those
    /// of its arm); true when an assignment failed.
    fn where_arms<'e>(
        &mut self,
        outer: &[(&'e Expr, bool)],
        arms: &'e [(Expr, Vec<Stmt>)],
        else_body: Option<&'e [Stmt]>,
        assigned: &mut Vec<Assigned<'e>>,
        lifts: &MaskLifts,
    ) -> bool {
        let all_masks: Vec<&Expr> = arms.iter().map(|(m, _)| m).collect();
        let groups = arms
            .iter()
            .enumerate()
            .map(|(k, (_, b))| (k, b.as_slice()))
            .chain(else_body.map(|b| (arms.len(), b)));
        let mut failed = false;
        for (k, body) in groups {
            // The masks of this arm: the outer ones, the earlier ones of
            // this construct negated, its own.
            let mut mask: Vec<(&Expr, bool)> = outer.to_vec();
            mask.extend(
                all_masks
                    .iter()
                    .enumerate()
                    .take(k + 1)
                    .map(|(j, m)| (*m, j < k)),
            );
            if let Some(ExprKind::Name(n)) = arms.get(k).map(|(m, _)| &m.kind) {
                if let Some((fill, _)) = lifts.get(&n.text) {
                    let fill = fill.clone();
                    self.span = fill.span;
                    self.start_statement();
                    failed |= self.stmt(&fill).is_err();
                }
            }
            for s in body {
                self.span = s.span;
                self.start_statement();
                if let StmtKind::Where {
                    arms: inner,
                    else_body: inner_else,
                    ..
                } = &s.kind
                {
                    failed |= self.where_arms(&mask, inner, inner_else.as_deref(), assigned, lifts);
                    continue;
                }
                failed |= self.where_assignment(s, &mask, assigned).is_err();
            }
        }
        failed
    }

    /// One assignment of a WHERE construct under its masks.
    fn where_assignment<'e>(
        &mut self,
        s: &'e Stmt,
        mask: &[(&Expr, bool)],
        assigned: &mut Vec<Assigned<'e>>,
    ) -> R<()> {
        let StmtKind::Assign { target, value } = &s.kind else {
            return Err(self.err(
                s.span,
                "unsupported Fortran: statement other than an array assignment in a WHERE construct",
            ));
        };
        let Some((name, args)) = target_of(target) else {
            return Err(self.err(target.span, "WHERE assigns an array"));
        };
        if !self.is_array_name(&name.text) {
            return Err(self.err(
                target.span,
                format!(
                    "the target `{}` of a masked assignment is not an array",
                    name.text
                ),
            ));
        }
        for (m, _) in mask {
            if let Some(x) = assigned.iter().find_map(|a| a.read_by(m)) {
                return Err(self.err(
                    m.span,
                    format!(
                        "unsupported Fortran: WHERE mask reading `{x}`, assigned earlier in the construct"
                    ),
                ));
            }
        }
        assigned.push(Assigned { name, args });
        // Array-valued function references are called into temporaries
        // first (on every element: Fortran evaluates them whole), and the
        // assignment reads the temporaries under the masks.
        if let Some((lifted, temps)) = self.lift_array_functions(s)? {
            let lifted = std::rc::Rc::new(lifted);
            self.lifted.push(lifted.clone());
            let r = self.where_assignment(&lifted, mask, &mut Vec::new());
            self.release_lifted(temps);
            return r;
        }
        for (m, _) in mask {
            self.hoist(m)?;
        }
        self.hoist(target)?;
        self.hoist(value)?;
        let v = self.var_of(name)?;
        self.check_writable(v, name)?;
        self.masked_assign(name, args, value, mask)
    }

    /// A FORALL construct (or statement) or a DO CONCURRENT loop.
    pub(super) fn forall(
        &mut self,
        name: Option<&Name>,
        concurrent: bool,
        indices: &[ForallIndex],
        mask: Option<&Expr>,
        body: &[Stmt],
    ) -> R<()> {
        let units = (!concurrent).then(|| {
            let units = std::rc::Rc::new(forall_units(indices, mask, body));
            self.lifted.push(units.clone());
            units
        });
        // The index variables (of nested FORALLs too) are the construct's
        // own: save and restore.
        let mut saved = Vec::new();
        let mut seen = BTreeSet::new();
        let all = units.iter().flat_map(|u| u.iter()).flat_map(|u| &u.indices);
        for ix in indices.iter().chain(all) {
            if !seen.insert(ix.var.text.clone()) {
                continue;
            }
            let v = self.var_of(&ix.var)?;
            let t = self.proc.var(v).ty;
            if self.proc.var(v).is_array() || !t.is_int() {
                return Err(self.err(
                    ix.var.span,
                    format!("index `{}` must be an integer scalar", ix.var.text),
                ));
            }
            let keep = self.temp("ix", t);
            let x = self.val(Inst::Load(v), t);
            self.emit(Inst::Store(keep, x), None);
            saved.push((v, keep, t));
        }
        let result = match &units {
            None => self.index_nest(name, indices, mask, &mut |l| l.stmts(body)),
            Some(units) => self.forall_statements(units),
        };
        for (v, keep, t) in saved {
            let x = self.val(Inst::Load(keep), t);
            self.emit(Inst::Store(v, x), None);
        }
        result
    }

    /// The statements of a FORALL (see [`forall_units`]), each in a loop
    /// nest of its own.
    fn forall_statements(&mut self, units: &[ForallUnit]) -> R<()> {
        let mut assigned: BTreeSet<String> = BTreeSet::new();
        let mut failed = false;
        for u in units {
            let (s, mask) = (&u.stmt, u.mask.as_ref());
            self.span = s.span;
            self.start_statement();
            let r = self.forall_check(s, mask, &mut assigned).and_then(|_| {
                self.index_nest(None, &u.indices, mask, &mut |l| {
                    l.stmts(std::slice::from_ref(s))
                })
            });
            failed |= r.is_err();
        }
        if failed {
            return Err(super::lowerer::Reported);
        }
        Ok(())
    }

    /// Rejects a FORALL statement whose sequential loop would not give the
    /// FORALL's results.
    fn forall_check(
        &mut self,
        s: &Stmt,
        mask: Option<&Expr>,
        assigned: &mut BTreeSet<String>,
    ) -> R<()> {
        // A WHERE is split to one assignment (see `forall_units`).
        let (where_masks, s) = where_leaf(s);
        for m in mask.into_iter().chain(where_masks.iter().copied()) {
            let mut names = BTreeSet::new();
            expr_names(m, &mut names);
            if let Some(x) = names.intersection(assigned).next() {
                return Err(self.err(
                    m.span,
                    format!(
                        "unsupported Fortran: FORALL or WHERE mask reading `{x}`, assigned by an earlier statement of the construct"
                    ),
                ));
            }
        }
        match &s.kind {
            StmtKind::Assign { target, value } => {
                let Some((name, args)) = target_of(target) else {
                    return Err(self.err(target.span, "FORALL assigns a variable"));
                };
                let masks = mask.into_iter().chain(where_masks.iter().copied());
                for x in std::iter::once(value).chain(masks) {
                    if let Some(r) = other_reference(x, &name.text, args) {
                        return Err(self.err(
                            r.span,
                            format!(
                                "unsupported Fortran: FORALL reading other elements of `{}`, which it assigns",
                                name.text
                            ),
                        ));
                    }
                }
                assigned.insert(name.text.clone());
                Ok(())
            }
            _ => Err(self.err(
                s.span,
                "unsupported Fortran: statement other than an assignment, WHERE or FORALL in a FORALL construct",
            )),
        }
    }

    /// Loops over the index tuples (the first index outermost), running
    /// `body` where the mask holds.
    fn index_nest(
        &mut self,
        name: Option<&Name>,
        indices: &[ForallIndex],
        mask: Option<&Expr>,
        body: &mut dyn FnMut(&mut Self),
    ) -> R<()> {
        let Some((ix, rest)) = indices.split_first() else {
            return match mask {
                None => {
                    body(self);
                    Ok(())
                }
                Some(m) => {
                    self.hoist(m)?;
                    let c = self.logical(m)?;
                    let (then_b, join) = (self.block(), self.block());
                    self.terminate(Terminator::Branch {
                        cond: c,
                        then_dest: then_b,
                        else_dest: join,
                    });
                    self.switch_to(then_b);
                    body(self);
                    self.jump(join);
                    self.switch_to(join);
                    Ok(())
                }
            };
        };
        let inner_name = if rest.is_empty() { name } else { None };
        let mut result = Ok(());
        self.do_loop(
            inner_name,
            &ix.var,
            &ix.lo,
            &ix.hi,
            ix.stride.as_ref(),
            &mut |l| {
                if let Err(e) = l.index_nest(name, rest, mask, body) {
                    result = Err(e);
                }
            },
        )?;
        result
    }
}
