//! ELEMENTAL functions of structures applied to whole arrays of
//! structures, directly or through operator interfaces.
//!
//! `c = a + b`, with `interface operator(+)` naming an ELEMENTAL function
//! of `type(vec)` and `a`, `b`, `c` arrays of `type(vec)`, is (after the
//! operator became a reference to its interface, `operators`) the
//! assignment of every element: here the statement becomes loops over the
//! target's elements, in array element order, each assigning
//! `c(i) = operator(+)(a(i), b(i))`, every whole array of structures of
//! the value taken at the same position (counted from its own lower
//! bounds). Elements of the same position only are read, so a value
//! reading the target (`c = t * c + a`) is safe. Sections of arrays of
//! structures given to such functions, and ELEMENTAL references of arrays
//! of structures whose target is not a whole array of structures, are
//! located errors.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{Span, Type, Var};

/// An expression `name`.
fn name_expr(text: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(Name {
            text: text.to_string(),
            span,
        }),
        span,
    }
}

/// An integer literal.
fn int_expr(value: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Int { value, kind: None },
        span,
    }
}

/// The intrinsic reference `f(x, dim)`.
fn inquiry(f: &str, x: &str, dim: usize, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Apply {
            name: Name {
                text: f.to_string(),
                span,
            },
            args: [name_expr(x, span), int_expr(dim as i64, span)]
                .into_iter()
                .map(|e| Arg {
                    keyword: None,
                    value: ArgValue::Expr(e),
                })
                .collect(),
        },
        span,
    }
}

impl Lowerer<'_, '_> {
    /// The loops assigning element by element an assignment to a whole
    /// array of structures whose value applies ELEMENTAL functions to
    /// whole arrays of structures (see the module documentation); `None`
    /// for any other statement.
    pub(super) fn elemental_struct_assign(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        let StmtKind::Assign { target, value } = &s.kind else {
            return Ok(None);
        };
        let base = match &target.kind {
            ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => n,
            _ => return Ok(None),
        };
        if matches!(value.kind, ExprKind::Name(_) | ExprKind::Paren(_))
            || !matches!(self.resolve(base)?, Resolved::Struct(_))
        {
            return Ok(None);
        }
        let mut arrays = Vec::new();
        if !self.struct_array_operands(value, &mut arrays)? {
            return Ok(None);
        }
        let ExprKind::Name(t) = &target.kind else {
            return Err(self.err(
                target.span,
                "unsupported Fortran: an ELEMENTAL function of structures applied to arrays of structures, assigned to anything but a whole array of structures",
            ));
        };
        let rank = match self.resolve(t)? {
            Resolved::Struct(st) => st.dims.as_ref().map_or(0, Vec::len),
            _ => 0,
        };
        for (name, r) in &arrays {
            if *r != rank {
                return Err(self.err(
                    name.span,
                    format!(
                        "`{}` (of rank {r}) does not conform with `{}` (of rank {rank})",
                        name.text, t.text
                    ),
                ));
            }
        }
        // One DO variable per dimension, counting positions from 1.
        let span = s.span;
        let counters: Vec<String> = (0..rank)
            .map(|_| {
                self.ntemps += 1;
                let n = format!("_elem{}", self.ntemps);
                let v = self.proc.add_var(Var::scalar(n.clone(), Type::I32));
                self.vars.insert(n.clone(), v);
                n
            })
            .collect();
        let element = |x: &str| -> Expr {
            let args = counters
                .iter()
                .enumerate()
                .map(|(d, k)| {
                    // lbound(x, d) + k - 1
                    let lo = inquiry("lbound", x, d + 1, span);
                    let at = Expr {
                        kind: ExprKind::Binary(
                            super::super::ast::BinOp::Add,
                            Box::new(lo),
                            Box::new(name_expr(k, span)),
                        ),
                        span,
                    };
                    Arg {
                        keyword: None,
                        value: ArgValue::Expr(Expr {
                            kind: ExprKind::Binary(
                                super::super::ast::BinOp::Sub,
                                Box::new(at),
                                Box::new(int_expr(1, span)),
                            ),
                            span,
                        }),
                    }
                })
                .collect();
            Expr {
                kind: ExprKind::Apply {
                    name: Name {
                        text: x.to_string(),
                        span,
                    },
                    args,
                },
                span,
            }
        };
        let names: Vec<String> = arrays.iter().map(|(n, _)| n.text.clone()).collect();
        let mut value = value.clone();
        substitute(&mut value, &names, &element);
        let mut body = vec![Stmt {
            kind: StmtKind::Assign {
                target: element(&t.text),
                value,
            },
            ..s.clone()
        }];
        for (d, k) in counters.iter().enumerate() {
            body = vec![Stmt {
                kind: StmtKind::Do {
                    name: None,
                    var: Name {
                        text: k.clone(),
                        span,
                    },
                    start: int_expr(1, span),
                    end: inquiry("size", &t.text, d + 1, span),
                    step: None,
                    body,
                },
                ..s.clone()
            }];
        }
        Ok(body.pop())
    }

    /// Collects the whole arrays of structures (with their ranks) that
    /// `e` gives as actual arguments of ELEMENTAL functions; false when it
    /// gives none. A section of an array of structures given to a function
    /// of structures, or an array of structures given to one that is not
    /// ELEMENTAL, is left to the call (a located error there).
    fn struct_array_operands(&mut self, e: &Expr, out: &mut Vec<(Name, usize)>) -> R<bool> {
        let mut found = false;
        if let ExprKind::Apply { name, args } = &e.kind {
            let elemental = match self.resolve(name)? {
                Resolved::Proc(p) => self.prog.sigs[p].elemental,
                Resolved::Generic(specifics) => {
                    let specifics = specifics.to_vec();
                    self.try_specific(name, &specifics, args)
                        .is_some_and(|p| self.prog.sigs[p].elemental)
                }
                _ => false,
            };
            if elemental {
                for a in args {
                    let ArgValue::Expr(x) = &a.value else {
                        continue;
                    };
                    if let ExprKind::Apply { name: n, args } = &x.kind {
                        let section = args
                            .iter()
                            .any(|a| matches!(a.value, ArgValue::Range { .. }));
                        if section && matches!(self.resolve(n)?, Resolved::Struct(_)) {
                            return Err(self.err(
                                x.span,
                                format!(
                                    "unsupported Fortran: a section of the array of structures `{}` given to the ELEMENTAL function `{}` (assign the section to an array first)",
                                    n.text, name.text
                                ),
                            ));
                        }
                    }
                    if let ExprKind::Name(n) = &x.kind {
                        if let Resolved::Struct(st) = self.resolve(n)? {
                            if let Some(d) = &st.dims {
                                out.push((n.clone(), d.len()));
                                found = true;
                            }
                        }
                    }
                }
            }
        }
        for c in e.kind.children() {
            found |= self.struct_array_operands(c, out)?;
        }
        Ok(found)
    }
}

/// Replaces every reference to a whole array named in `names` by its
/// element (`element`).
fn substitute(e: &mut Expr, names: &[String], element: &dyn Fn(&str) -> Expr) {
    if let ExprKind::Name(n) = &e.kind {
        if names.contains(&n.text) {
            *e = element(&n.text);
            return;
        }
    }
    for c in e.kind.children_mut() {
        substitute(c, names, element);
    }
}
