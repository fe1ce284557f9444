//! Component references of arrays of structures: which part a subscript
//! list belongs to.
//!
//! A structure is one variable per component and an array of structures
//! one array per component, the component's own dimensions first
//! (`a(i)%w(j)` is `a%w(j, i)`). The parser marks each part's subscripts
//! ([`Arg::part_marker`]); here, knowing each part's rank, a statement's
//! component references get their full subscript lists, an omitted part
//! giving whole ranges: `a(i)%v` is the section `a%v(:, i)`, `a%w(1)` the
//! section `a%w(1, :)`. The rest of the analysis sees ordinary elements and
//! sections of the flattened arrays.
//!
//! The parent component of an extended type is dropped from references
//! through it (`c%base%x` is `c%x`, see `scope::extension`).

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name, Stmt};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::{CompType, DerivedType};

impl<'p> Lowerer<'p, '_> {
    /// The statement with its component references' subscripts completed,
    /// when it holds any marked ones (see the module documentation).
    pub(super) fn complete_parts(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        if !s
            .kind
            .own_exprs()
            .into_iter()
            .any(|e| has_marks(e) || has_deep_parts(e))
        {
            return Ok(None);
        }
        let mut out = s.clone();
        for e in out.kind.own_exprs_mut() {
            self.complete_in(e)?;
        }
        Ok((out != *s).then_some(out))
    }

    fn complete_in(&mut self, e: &mut Expr) -> R<()> {
        match &mut e.kind {
            ExprKind::Name(name) => {
                if let Some((text, _)) = self.canonical_component(&name.text)? {
                    name.text = text;
                }
            }
            ExprKind::Apply { name, args } => {
                if let Some((text, dropped)) = self.canonical_component(&name.text)? {
                    name.text = text;
                    renumber_parts(args, &dropped);
                }
            }
            _ => {}
        }
        if let ExprKind::Apply { name, args } = &mut e.kind {
            if args.iter().any(|a| a.marked_part().is_some()) {
                self.refuse_result_component(name)?;
                let (subscripts, substring) = self.part_subscripts(name, std::mem::take(args))?;
                *args = subscripts;
                // `a(i)%name(1:6)`: a substring of the element `a%name(i)`.
                if let Some(ArgValue::Range { lo, hi, .. }) = substring {
                    let base = Expr {
                        kind: e.kind.clone(),
                        span: e.span,
                    };
                    e.kind = ExprKind::Substring {
                        base: Box::new(base),
                        start: lo.map(Box::new),
                        end: hi.map(Box::new),
                    };
                }
            }
        }
        for c in e.kind.children_mut() {
            self.complete_in(c)?;
        }
        Ok(())
    }

    /// Refuses `f(x)%c`, a component of a function result, as gfortran
    /// does (a function reference is not a data reference).
    fn refuse_result_component(&mut self, name: &Name) -> R<()> {
        let Some((base, rest)) = name.text.split_once('%') else {
            return Ok(());
        };
        let f = Name {
            text: base.to_string(),
            span: name.span,
        };
        if matches!(self.resolve(&f)?, Resolved::Proc(_) | Resolved::Generic(_)) {
            return Err(self.err(
                name.span,
                format!(
                    "the leftmost part of `{base}(...)%{rest}` is a function reference, which \
                     cannot be followed by a component (assign the result to a variable first)"
                ),
            ));
        }
        Ok(())
    }

    /// The subscripts of the flattened component `name` (innermost part
    /// first) from marked per-part lists, and the range of a substring
    /// of a scalar character component when the last part gives one
    /// (`a(i)%name(1:6)`; kept among the subscripts when the other parts
    /// have none). A part without subscripts gives whole ranges. When a
    /// part's rank is unknown or its subscripts do not match it (an error
    /// reported later), the lists are kept as written.
    fn part_subscripts(&mut self, name: &Name, args: Vec<Arg>) -> R<(Vec<Arg>, Option<ArgValue>)> {
        let mut given: Vec<Option<Vec<Arg>>> = vec![None; name.text.matches('%').count() + 1];
        let mut current = None;
        for a in &args {
            match a.marked_part() {
                Some(k) if k < given.len() => {
                    given[k] = Some(Vec::new());
                    current = Some(k);
                }
                _ => {
                    if let Some(list) = current.and_then(|k| given[k].as_mut()) {
                        list.push(a.clone());
                    }
                }
            }
        }
        let as_written = || -> Vec<Arg> {
            args.iter()
                .filter(|a| a.marked_part().is_none())
                .cloned()
                .collect()
        };
        let Some(ranks) = self.part_ranks(name)? else {
            return Ok((as_written(), None));
        };
        let last = ranks.len() - 1;
        let mut out = Vec::new();
        let mut array_parts = 0;
        let mut substring = None;
        for (k, rank) in ranks.iter().copied().enumerate().rev() {
            match &given[k] {
                Some(list) if list.len() == rank => {
                    if list
                        .iter()
                        .any(|a| matches!(a.value, ArgValue::Range { .. }))
                    {
                        array_parts += 1;
                    }
                    out.extend(list.iter().cloned());
                }
                // A substring of a character component.
                Some(list) if k == last && rank == 0 && list.len() == 1 => match &list[0].value {
                    range @ ArgValue::Range { stride: None, .. } => substring = Some(range.clone()),
                    _ => out.extend(list.iter().cloned()),
                },
                Some(_) => return Ok((as_written(), None)),
                None => {
                    if rank > 0 {
                        array_parts += 1;
                    }
                    out.extend((0..rank).map(|_| Arg {
                        keyword: None,
                        value: ArgValue::Range {
                            lo: None,
                            hi: None,
                            stride: None,
                        },
                    }));
                }
            }
        }
        if array_parts > 1 {
            return Err(self.err(
                name.span,
                format!(
                    "`{}`: only one part of a component reference may be an array (give subscripts to the others)",
                    name.text
                ),
            ));
        }
        if out.is_empty() && substring.is_some() {
            // A substring of a scalar structure's component: `p%s(2:3)`.
            return Ok((as_written(), None));
        }
        Ok((out, substring))
    }

    /// A component reference through parent components (`c%base%x`) as
    /// the name of its leaf (`c%x`), with the indices of the parts dropped;
    /// `None` when there is none.
    pub(super) fn canonical_component(&mut self, text: &str) -> R<Option<(String, Vec<usize>)>> {
        let parts: Vec<&str> = text.split('%').collect();
        if parts.len() < 3 {
            return Ok(None);
        }
        let base = Name {
            text: parts[0].to_string(),
            span: self.span,
        };
        let Resolved::Struct(st) = self.resolve(&base)? else {
            return Ok(None);
        };
        let mut ty = self.find_type(&st.type_name);
        let mut out = parts[0].to_string();
        let mut dropped = Vec::new();
        for (k, part) in parts.iter().enumerate().skip(1) {
            let Some(t) = ty else {
                out.push('%');
                out.push_str(part);
                continue;
            };
            if k + 1 < parts.len() {
                if let Some(ancestor) = self.ancestor(t, part) {
                    dropped.push(k);
                    ty = Some(ancestor);
                    continue;
                }
            }
            out.push('%');
            out.push_str(part);
            ty = match t.comps.iter().find(|c| c.name == *part).map(|c| &c.ty) {
                Some(CompType::Derived(n)) => self.find_type(n),
                _ => None,
            };
        }
        Ok((!dropped.is_empty()).then_some((out, dropped)))
    }

    /// The ancestor type `name` of `t` (its parent, its parent's parent...).
    fn ancestor(&self, t: &DerivedType, name: &str) -> Option<&'p DerivedType> {
        let mut p = t.parent.as_ref().and_then(|(p, _)| self.find_type(p));
        for _ in 0..16 {
            let d = p?;
            if d.name == name {
                return Some(d);
            }
            p = d.parent.as_ref().and_then(|(p, _)| self.find_type(p));
        }
        None
    }

    /// The rank of each part of a component reference `a%b%c` (the array
    /// of structures `a`, then each component's own), or `None` when the
    /// base is not a structure variable.
    fn part_ranks(&mut self, name: &Name) -> R<Option<Vec<usize>>> {
        let mut parts = name.text.split('%');
        let base = Name {
            text: parts.next().unwrap_or_default().to_string(),
            span: name.span,
        };
        let Resolved::Struct(st) = self.resolve(&base)? else {
            return Ok(None);
        };
        let mut ranks = vec![st.dims.as_ref().map_or(0, Vec::len)];
        let mut ty = self.find_type(&st.type_name);
        for part in parts {
            let Some(comp) = ty.and_then(|t| t.comps.iter().find(|c| c.name == part)) else {
                return Ok(None);
            };
            ranks.push(comp.dims.as_ref().map_or(0, Vec::len));
            ty = match &comp.ty {
                CompType::Derived(t) => self.find_type(t),
                CompType::Plain(_) => None,
            };
        }
        Ok(Some(ranks))
    }
}

/// True when an expression names a component of a component
/// (`c%base%x`), which may go through a parent component.
fn has_deep_parts(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(n) | ExprKind::Apply { name: n, .. } if n.text.matches('%').count() > 1)
        || e.kind.children().into_iter().any(has_deep_parts)
}

/// Renumbers the part markers of a subscript list after the parts
/// `dropped` (in increasing order; parent components, which have no
/// subscripts) left the reference.
fn renumber_parts(args: &mut [Arg], dropped: &[usize]) {
    for a in args.iter_mut() {
        if let Some(k) = a.marked_part() {
            let shift = dropped.iter().filter(|&&d| d < k).count();
            *a = Arg::part_marker(
                k - shift,
                a.keyword.as_ref().map_or_else(Default::default, |n| n.span),
            );
        }
    }
}

/// True when an expression holds a marked component reference.
fn has_marks(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Apply { args, .. } if args.iter().any(|a| a.marked_part().is_some()))
        || e.kind.children().into_iter().any(has_marks)
}
