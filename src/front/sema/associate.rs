//! ASSOCIATE constructs, lowered by substitution: every associate name in
//! the body is replaced by its selector. A variable (or structure) selector
//! is itself, so assignments through the associate name write it; an array
//! element has its subscripts evaluated once, at entry, into temporaries;
//! an array section (`y => s%y(1:n)`, `a => x(2:n-1)`) has its bounds and
//! strides evaluated at entry too and stays the variable's section, so
//! writes through the name reach the variable and `a(i)` / `a(i:j)` map to
//! the variable's elements; any other expression is evaluated once into a
//! temporary (an ALLOCATABLE array for an array value, `r => b - matmul(a,
//! x)`).
//!
//! The substitution in force is kept in [`Lowerer::associated`] while the
//! body is lowered, for the bounds of the arrays of a BLOCK inside it
//! (sized on entry to the BLOCK, [`super::block_sized`]).
//!
//! It owns the syntax-tree rewriting; statements are lowered by
//! [`super::stmt`].

use super::super::ast::{
    AdfEntry, Arg, ArgValue, BinOp, CaseItem, CaseSelector, Expr, ExprKind, Name, Stmt, StmtKind,
};
use super::lowerer::{Associated, Lowerer, Resolved, Section, Substitution, R};
use adjit_ir::{Dim, Inst, Span, Storage, Type, Var};
use std::collections::HashMap;

impl Lowerer<'_, '_> {
    /// Lowers `associate (a => selector, ...) body end associate`.
    pub fn associate(&mut self, pairs: &[(Name, Expr)], body: &[Stmt]) -> R<()> {
        let mut subst = HashMap::new();
        for (n, sel) in pairs {
            let target = self.selector(sel)?;
            subst.insert(n.text.clone(), target);
        }
        // The names in force inside: the enclosing constructs' (their
        // selectors were rewritten already) with this one's over them.
        let mut inner = self.associated.clone();
        inner.extend(subst.iter().map(|(k, v)| (k.clone(), v.clone())));
        let outer = std::mem::replace(&mut self.associated, inner);
        for s in body {
            let mut s = s.clone();
            rewrite_stmt(&mut s, &subst);
            // Kept for the lowerer's lifetime (see `Lowerer::lifted`).
            let s = std::rc::Rc::new(s);
            self.lifted.push(s.clone());
            self.stmts(std::slice::from_ref(&*s));
        }
        self.associated = outer;
        Ok(())
    }

    /// `e` with the associate names in force replaced by what they stand
    /// for (the bounds of a BLOCK's arrays declared inside ASSOCIATE).
    pub(super) fn with_associate_names(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        rewrite_expr(&mut e, &self.associated);
        e
    }

    /// What an associate name stands for in the body.
    fn selector(&mut self, sel: &Expr) -> R<Associated> {
        match &sel.kind {
            ExprKind::Name(v) => {
                if matches!(self.resolve(v)?, Resolved::Var(_) | Resolved::Struct(_)) {
                    return Ok(Associated::Expr(sel.clone()));
                }
            }
            ExprKind::Apply { name, args }
                if self.is_array_name(&name.text) && self.scalar_subscripts(args)? =>
            {
                if args
                    .iter()
                    .any(|a| a.marked_part().is_none() && matches!(a.value, ArgValue::Range { .. }))
                {
                    return self.section_selector(sel, name, args);
                }
                let mut fixed = Vec::new();
                for a in args {
                    let ArgValue::Expr(x) = &a.value else {
                        fixed.push(a.clone());
                        continue;
                    };
                    fixed.push(Arg::positional(self.integer_temp(x)?));
                }
                return Ok(Associated::Expr(Expr {
                    kind: ExprKind::Apply {
                        name: name.clone(),
                        args: fixed,
                    },
                    span: sel.span,
                }));
            }
            _ => {}
        }
        let (ty, rank) = self.type_and_rank(sel)?;
        if ty == Type::Char {
            return Err(self.err(
                sel.span,
                "unsupported Fortran: ASSOCIATE with a character expression as selector",
            ));
        }
        if rank > 0 {
            return self.array_value_selector(sel, ty, rank);
        }
        let x = self.num_as(sel, ty)?;
        Ok(Associated::Expr(self.named_temp(x, ty, sel)))
    }

    /// True when every subscript of `args` is a scalar (a vector subscript
    /// makes the selector a value: its associate name may not be assigned).
    fn scalar_subscripts(&mut self, args: &[Arg]) -> R<bool> {
        for a in args {
            if let ArgValue::Expr(x) = &a.value {
                if a.keyword.is_some() || self.type_and_rank(x)?.1 > 0 {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// An array section selector `array(args)`: its subscripts, bounds and
    /// strides evaluated into temporaries.
    fn section_selector(&mut self, sel: &Expr, array: &Name, args: &[Arg]) -> R<Associated> {
        if args.iter().filter(|a| a.marked_part().is_some()).count() > 1 {
            return Err(self.err(
                sel.span,
                "unsupported Fortran: ASSOCIATE with a section of an array of structures as selector",
            ));
        }
        if self.type_and_rank(sel)?.0 == Type::Char {
            return Err(self.err(
                sel.span,
                "unsupported Fortran: ASSOCIATE with a section of a character array as selector",
            ));
        }
        let at = |kind| Expr {
            kind,
            span: sel.span,
        };
        let mut fixed = Vec::new();
        let mut triplets = Vec::new();
        let mut dim = 0;
        for a in args {
            if a.marked_part().is_some() {
                fixed.push(a.clone());
                continue;
            }
            dim += 1;
            let (lo, hi, stride) = match &a.value {
                ArgValue::Expr(x) => {
                    fixed.push(Arg::positional(self.integer_temp(x)?));
                    continue;
                }
                ArgValue::Range { lo, hi, stride } => (lo, hi, stride),
            };
            let bound_of = |f: &str| {
                at(ExprKind::Apply {
                    name: Name {
                        text: f.to_string(),
                        span: sel.span,
                    },
                    args: vec![
                        Arg::positional(at(ExprKind::Name(array.clone()))),
                        Arg::positional(at(ExprKind::Int {
                            value: dim,
                            kind: None,
                        })),
                    ],
                })
            };
            let lo = self.integer_temp(&lo.clone().unwrap_or_else(|| bound_of("lbound")))?;
            let hi = self.integer_temp(&hi.clone().unwrap_or_else(|| bound_of("ubound")))?;
            let Some(stride) = stride else {
                let one = at(ExprKind::Int {
                    value: 1,
                    kind: None,
                });
                let offset = self.integer_temp(&binary(BinOp::Sub, lo.clone(), one))?;
                triplets.push((offset, None));
                fixed.push(Arg {
                    keyword: None,
                    value: ArgValue::Range {
                        lo: Some(lo),
                        hi: Some(hi),
                        stride: None,
                    },
                });
                continue;
            };
            let stride = self.integer_temp(stride)?;
            // The last element selected: lo + (extent - 1)*stride, the
            // extent max(0, (hi - lo + stride)/stride).
            let span = (hi.clone(), lo.clone(), stride.clone());
            let count = binary(
                BinOp::Div,
                binary(BinOp::Add, binary(BinOp::Sub, span.0, span.1), span.2),
                stride.clone(),
            );
            let zero = at(ExprKind::Int {
                value: 0,
                kind: None,
            });
            let one = at(ExprKind::Int {
                value: 1,
                kind: None,
            });
            let extent = at(ExprKind::Apply {
                name: Name {
                    text: "max".to_string(),
                    span: sel.span,
                },
                args: vec![Arg::positional(zero), Arg::positional(count)],
            });
            let steps = binary(BinOp::Sub, extent, one);
            let last = self.integer_temp(&binary(
                BinOp::Add,
                lo.clone(),
                binary(BinOp::Mul, steps, stride.clone()),
            ))?;
            let offset = self.integer_temp(&binary(BinOp::Sub, lo.clone(), stride.clone()))?;
            triplets.push((offset, Some(stride.clone())));
            fixed.push(Arg {
                keyword: None,
                value: ArgValue::Range {
                    lo: Some(lo),
                    hi: Some(last),
                    stride: Some(stride),
                },
            });
        }
        Ok(Associated::Section(Section {
            array: array.clone(),
            args: fixed,
            triplets,
        }))
    }

    /// An expression selector of array value: evaluated at entry into an
    /// ALLOCATABLE temporary of its shape (lower bounds 1), which the
    /// associate name stands for.
    fn array_value_selector(&mut self, sel: &Expr, ty: Type, rank: usize) -> R<Associated> {
        self.ntemps += 1;
        let name = format!("_assoc{}", self.ntemps);
        let unallocated = Dim {
            lower: adjit_ir::Bound::Const(1),
            upper: Some(adjit_ir::Bound::Const(0)),
        };
        let var = self.proc.add_var(Var {
            name: name.clone(),
            ty,
            dims: vec![unallocated; rank],
            char_len: None,
            storage: Storage::Allocatable,
        });
        self.vars.insert(name.clone(), var);
        let target = Expr {
            kind: ExprKind::Name(Name {
                text: name,
                span: sel.span,
            }),
            span: sel.span,
        };
        // Reallocated to the value's shape on each entry.
        self.stmt_rewritten(Stmt {
            label: None,
            kind: StmtKind::Assign {
                target: target.clone(),
                value: sel.clone(),
            },
            span: sel.span,
        })?;
        Ok(Associated::Expr(target))
    }

    /// A temporary holding the integer expression `x`, as a name
    /// expression.
    fn integer_temp(&mut self, x: &Expr) -> R<Expr> {
        let (v, t) = self.integer(x)?;
        Ok(self.named_temp(v, t, x))
    }

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

/// `a op b`, located at `a`.
fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let span = a.span;
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

impl Section {
    /// The whole section, located at `span`.
    fn whole(&self, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Apply {
                name: Name {
                    text: self.array.text.clone(),
                    span,
                },
                args: self.args.clone(),
            },
            span,
        }
    }

    /// The array reference `name(subscripts)` of the associate name is:
    /// element `i` of a triplet is element `offset + i*stride` of the
    /// array, a triplet `l:h:s` of it the array's `offset + l*stride :
    /// offset + h*stride : s*stride` (omitted ends: the section's).
    fn subscripted(&self, subscripts: Vec<Arg>, span: Span) -> Expr {
        let position = |i: Expr, (offset, stride): &(Expr, Option<Expr>)| {
            let step = match stride {
                Some(s) => binary(BinOp::Mul, i, s.clone()),
                None => i,
            };
            binary(BinOp::Add, offset.clone(), step)
        };
        let mut given = subscripts.into_iter();
        let mut triplet = self.triplets.iter();
        let mut args = Vec::new();
        for a in &self.args {
            let (ArgValue::Range { lo, hi, stride }, None) = (&a.value, a.marked_part()) else {
                args.push(a.clone());
                continue;
            };
            let t = triplet.next().expect("one triplet per range");
            let Some(sub) = given.next() else {
                args.push(a.clone());
                continue;
            };
            args.push(match sub.value {
                ArgValue::Expr(i) => Arg::positional(position(i, t)),
                ArgValue::Range {
                    lo: l,
                    hi: h,
                    stride: s,
                } => Arg {
                    keyword: None,
                    value: ArgValue::Range {
                        lo: Some(l.map_or_else(|| lo.clone().expect("fixed"), |l| position(l, t))),
                        hi: Some(h.map_or_else(|| hi.clone().expect("fixed"), |h| position(h, t))),
                        stride: match (s, &t.1, stride) {
                            (Some(s), Some(st), _) => Some(binary(BinOp::Mul, s, st.clone())),
                            (Some(s), None, _) => Some(s),
                            (None, _, st) => st.clone(),
                        },
                    },
                },
            });
        }
        // More subscripts than the section has triplets: left for the
        // rank check of the reference.
        args.extend(given);
        Expr {
            kind: ExprKind::Apply {
                name: Name {
                    text: self.array.text.clone(),
                    span,
                },
                args,
            },
            span,
        }
    }
}

/// Replaces the associate names of `subst` in a statement (and the
/// statements it contains; an inner ASSOCIATE hides the names it binds).
fn rewrite_stmt(s: &mut Stmt, subst: &Substitution) {
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

fn rewrite_arg(a: &mut Arg, subst: &Substitution) {
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
fn rename(n: &mut Name, subst: &Substitution) {
    let (base, rest) = match n.text.find('%') {
        Some(i) => n.text.split_at(i),
        None => (n.text.as_str(), ""),
    };
    if let Some(Associated::Expr(Expr {
        kind: ExprKind::Name(s),
        ..
    })) = subst.get(base)
    {
        n.text = format!("{}{rest}", s.text);
    }
}

fn rewrite_expr(x: &mut Expr, subst: &Substitution) {
    match &mut x.kind {
        ExprKind::Name(n) => match subst.get(&n.text) {
            // The selector replaces the name as it is (not rewritten).
            Some(Associated::Expr(sel)) => {
                *x = sel.clone();
                return;
            }
            Some(Associated::Section(s)) => {
                *x = s.whole(x.span);
                return;
            }
            None => rename(n, subst),
        },
        ExprKind::Apply { name, args } => {
            if let Some(Associated::Section(s)) = subst.get(&name.text) {
                let mut args = std::mem::take(args);
                args.iter_mut().for_each(|a| rewrite_arg(a, subst));
                *x = s.subscripted(args, x.span);
                return;
            }
            rename(name, subst)
        }
        _ => {}
    }
    x.kind
        .children_mut()
        .into_iter()
        .for_each(|y| rewrite_expr(y, subst));
}
