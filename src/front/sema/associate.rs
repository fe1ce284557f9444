//! ASSOCIATE constructs, lowered by substitution: every associate name in
//! the body is replaced by its selector. A variable (or structure) selector
//! is itself, so assignments through the associate name write it; an array
//! element has its subscripts evaluated once, at entry, into temporaries;
//! any other (scalar) expression is evaluated once into a temporary.
//!
//! It owns the syntax-tree rewriting; statements are lowered by
//! [`super::stmt`].

use super::super::ast::{
    AdfEntry, Arg, ArgValue, CaseItem, CaseSelector, Expr, ExprKind, Name, Stmt, StmtKind,
};
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{Inst, Type};
use std::collections::HashMap;

impl Lowerer<'_, '_> {
    /// Lowers `associate (a => selector, ...) body end associate`.
    pub fn associate(&mut self, pairs: &[(Name, Expr)], body: &[Stmt]) -> R<()> {
        let mut subst = HashMap::new();
        for (n, sel) in pairs {
            let target = self.selector(sel)?;
            subst.insert(n.text.clone(), target);
        }
        for s in body {
            let mut s = s.clone();
            rewrite_stmt(&mut s, &subst);
            // Kept for the lowerer's lifetime (see `Lowerer::lifted`).
            let s = std::rc::Rc::new(s);
            self.lifted.push(s.clone());
            self.stmts(std::slice::from_ref(&*s));
        }
        Ok(())
    }

    /// What an associate name stands for in the body.
    fn selector(&mut self, sel: &Expr) -> R<Expr> {
        match &sel.kind {
            ExprKind::Name(v) => {
                if matches!(self.resolve(v)?, Resolved::Var(_) | Resolved::Struct(_)) {
                    return Ok(sel.clone());
                }
            }
            ExprKind::Apply { name, args }
                if self.is_array_name(&name.text)
                    && args.iter().all(|a| matches!(a.value, ArgValue::Expr(_))) =>
            {
                let mut fixed = Vec::new();
                for a in args {
                    let ArgValue::Expr(x) = &a.value else {
                        unreachable!("checked")
                    };
                    let (v, t) = self.integer(x)?;
                    fixed.push(Arg::positional(self.named_temp(v, t, x)));
                }
                return Ok(Expr {
                    kind: ExprKind::Apply {
                        name: name.clone(),
                        args: fixed,
                    },
                    span: sel.span,
                });
            }
            _ => {}
        }
        let (ty, rank) = self.type_and_rank(sel)?;
        if rank > 0 || ty == Type::Char {
            return Err(self.err(
                sel.span,
                "unsupported Fortran: ASSOCIATE with an array or character expression as selector",
            ));
        }
        let x = self.num_as(sel, ty)?;
        Ok(self.named_temp(x, ty, sel))
    }

    /// A temporary holding `v`, as a name expression the body can use.
    /// A temporary holding `v`, as a name expression located at `at`.
    pub(super) fn named_temp(&mut self, v: adjit_ir::Value, ty: Type, at: &Expr) -> Expr {
        let var = self.temp("assoc", ty);
        self.emit(Inst::Store(var, v), None);
        let name = self.proc.var(var).name.clone();
        self.vars.insert(name.clone(), var);
        Expr {
            kind: ExprKind::Name(Name {
                text: name,
                span: at.span,
            }),
            span: at.span,
        }
    }
}

/// Replaces the associate names of `subst` in a statement (and the
/// statements it contains; an inner ASSOCIATE hides the names it binds).
fn rewrite_stmt(s: &mut Stmt, subst: &HashMap<String, Expr>) {
    let e = |x: &mut Expr| rewrite_expr(x, subst);
    match &mut s.kind {
        StmtKind::Assign { target, value } => {
            e(target);
            e(value);
        }
        StmtKind::If {
            arms, else_body, ..
        } => {
            for (c, b) in arms {
                e(c);
                b.iter_mut().for_each(|s| rewrite_stmt(s, subst));
            }
            for s in else_body.iter_mut().flatten() {
                rewrite_stmt(s, subst);
            }
        }
        StmtKind::LogicalIf { cond, stmt } => {
            e(cond);
            rewrite_stmt(stmt, subst);
        }
        StmtKind::Do {
            var,
            start,
            end,
            step,
            body,
            ..
        } => {
            rename(var, subst);
            e(start);
            e(end);
            step.iter_mut().for_each(e);
            body.iter_mut().for_each(|s| rewrite_stmt(s, subst));
        }
        StmtKind::DoWhile { cond, body, .. } => {
            e(cond);
            body.iter_mut().for_each(|s| rewrite_stmt(s, subst));
        }
        StmtKind::DoForever { body, .. } | StmtKind::Block { body, .. } => {
            body.iter_mut().for_each(|s| rewrite_stmt(s, subst))
        }
        StmtKind::ComputedGoto { index, .. } => e(index),
        StmtKind::ArithmeticIf { value, .. } => e(value),
        StmtKind::Stop(x) => x.iter_mut().for_each(e),
        StmtKind::Call { args, .. } => args.iter_mut().for_each(|a| rewrite_arg(a, subst)),
        // Seed and result expressions; the variables named stay (the
        // block's statements were outlined, associate names are not
        // visible there).
        StmtKind::Adf(b) => {
            AdfEntry::visit_mut(&mut b.seeds, &mut |x| e(x));
            AdfEntry::visit_mut(&mut b.results, &mut |x| e(x));
        }
        StmtKind::SelectCase {
            selector, cases, ..
        } => {
            e(selector);
            for (sel, b) in cases {
                if let CaseSelector::Items(items) = sel {
                    for it in items {
                        match it {
                            CaseItem::Value(v) => e(v),
                            CaseItem::Range(lo, hi) => {
                                lo.iter_mut().chain(hi.iter_mut()).for_each(e)
                            }
                        }
                    }
                }
                b.iter_mut().for_each(|s| rewrite_stmt(s, subst));
            }
        }
        StmtKind::Associate { pairs, body, .. } => {
            let mut inner = subst.clone();
            for (n, sel) in pairs.iter_mut() {
                e(sel);
                inner.remove(&n.text);
            }
            body.iter_mut().for_each(|s| rewrite_stmt(s, &inner));
        }
        StmtKind::Where {
            arms, else_body, ..
        } => {
            for (c, b) in arms {
                e(c);
                b.iter_mut().for_each(|s| rewrite_stmt(s, subst));
            }
            for s in else_body.iter_mut().flatten() {
                rewrite_stmt(s, subst);
            }
        }
        StmtKind::Forall {
            indices,
            mask,
            body,
            ..
        } => {
            for ix in indices.iter_mut() {
                rename(&mut ix.var, subst);
                e(&mut ix.lo);
                e(&mut ix.hi);
                ix.stride.iter_mut().for_each(e);
            }
            mask.iter_mut().for_each(e);
            body.iter_mut().for_each(|s| rewrite_stmt(s, subst));
        }
        StmtKind::Exit(_)
        | StmtKind::Cycle(_)
        | StmtKind::Goto(_)
        | StmtKind::Continue
        | StmtKind::Return
        | StmtKind::Entry { .. }
        | StmtKind::Unsupported(_) => {}
        StmtKind::Write { items, .. } | StmtKind::Read { items, .. } => {
            items.iter_mut().for_each(e)
        }
        StmtKind::Allocate {
            objects,
            stat,
            errmsg,
            source,
            mold,
            char_len,
        } => {
            objects.iter_mut().for_each(e);
            stat.iter_mut()
                .chain(errmsg)
                .chain(char_len)
                .chain(source)
                .chain(mold)
                .for_each(e);
        }
        StmtKind::Deallocate {
            objects,
            stat,
            errmsg,
        } => {
            objects.iter_mut().for_each(e);
            stat.iter_mut().chain(errmsg).for_each(e);
        }
    }
}

fn rewrite_arg(a: &mut Arg, subst: &HashMap<String, Expr>) {
    match &mut a.value {
        ArgValue::Expr(x) => rewrite_expr(x, subst),
        ArgValue::Range { lo, hi, stride } => lo
            .iter_mut()
            .chain(hi.iter_mut())
            .chain(stride.iter_mut())
            .for_each(|x| rewrite_expr(x, subst)),
    }
}

/// Renames `a` (or the base of a component `a%x`) whose selector is a
/// name.
fn rename(n: &mut Name, subst: &HashMap<String, Expr>) {
    let (base, rest) = match n.text.find('%') {
        Some(i) => n.text.split_at(i),
        None => (n.text.as_str(), ""),
    };
    if let Some(Expr {
        kind: ExprKind::Name(s),
        ..
    }) = subst.get(base)
    {
        n.text = format!("{}{rest}", s.text);
    }
}

fn rewrite_expr(x: &mut Expr, subst: &HashMap<String, Expr>) {
    match &mut x.kind {
        ExprKind::Name(n) => match subst.get(&n.text) {
            // The selector replaces the name as it is (not rewritten).
            Some(sel) => {
                *x = sel.clone();
                return;
            }
            None => rename(n, subst),
        },
        ExprKind::Apply { name, .. } => rename(name, subst),
        _ => {}
    }
    x.kind
        .children_mut()
        .into_iter()
        .for_each(|y| rewrite_expr(y, subst));
}
