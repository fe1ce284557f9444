//! WHERE / ELSEWHERE / END WHERE, FORALL / END FORALL and the header of DO
//! CONCURRENT: their statement lines (both the construct and the one-line
//! forms) and the assembly of the construct bodies.

use super::*;

/// The header of a FORALL or DO CONCURRENT: index specifications and the
/// optional mask.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ForallHeader {
    pub(super) indices: Vec<ForallIndex>,
    pub(super) mask: Option<Expr>,
}

impl StmtParser<'_> {
    /// WHERE, ELSEWHERE, END WHERE, FORALL and END FORALL lines (`None`
    /// when the statement is none of them).
    pub(super) fn masked_statement(&mut self, name: &Option<Name>) -> PResult<Option<LineKind>> {
        let opens = |this: &Self, kw: &str| {
            this.keyword_end(kw)
                .is_some_and(|end| this.kind_at(end) == Some(TokenKind::LParen))
        };
        if opens(self, "where") {
            self.eat_kw("where");
            self.what = "WHERE statement";
            self.recovery = Some(LineKind::WhereStart {
                name: name.clone(),
                mask: placeholder(self.span_here()),
            });
            self.expect(TokenKind::LParen)?;
            let mask = self.expr()?;
            self.expect(TokenKind::RParen)?;
            if self.at_end() {
                return Ok(Some(LineKind::WhereStart {
                    name: name.clone(),
                    mask,
                }));
            }
            let stmt = self.one_line_body(name)?;
            return Ok(Some(LineKind::Exec(StmtKind::Where {
                name: None,
                arms: vec![(mask, vec![stmt])],
                else_body: None,
            })));
        }
        if self.at_kw("elsewhere") {
            self.eat_kw("elsewhere");
            self.what = "ELSEWHERE statement";
            self.recovery = Some(LineKind::ElseWhere {
                mask: None,
                name: None,
            });
            let mask = if self.eat(TokenKind::LParen) {
                let m = self.expr()?;
                self.expect(TokenKind::RParen)?;
                Some(m)
            } else {
                None
            };
            let name = self.optional_name()?;
            self.expect_end()?;
            return Ok(Some(LineKind::ElseWhere { mask, name }));
        }
        if self.at_kw("endwhere") {
            self.eat_kw("endwhere");
            self.what = "END WHERE statement";
            self.recovery = Some(LineKind::EndWhere { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            return Ok(Some(LineKind::EndWhere { name }));
        }
        if opens(self, "forall") {
            self.eat_kw("forall");
            self.what = "FORALL statement";
            let empty = ForallHeader {
                indices: Vec::new(),
                mask: None,
            };
            self.recovery = Some(LineKind::ForallStart {
                name: name.clone(),
                header: Box::new(empty),
            });
            let header = self.forall_header()?;
            if self.at_end() {
                return Ok(Some(LineKind::ForallStart {
                    name: name.clone(),
                    header: Box::new(header),
                }));
            }
            let stmt = self.one_line_body(name)?;
            return Ok(Some(LineKind::Exec(StmtKind::Forall {
                name: None,
                concurrent: false,
                indices: header.indices,
                mask: header.mask,
                body: vec![stmt],
            })));
        }
        if self.at_kw("endforall") {
            self.eat_kw("endforall");
            self.what = "END FORALL statement";
            self.recovery = Some(LineKind::EndForall { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            return Ok(Some(LineKind::EndForall { name }));
        }
        Ok(None)
    }

    /// The assignment of a one-line WHERE or FORALL.
    fn one_line_body(&mut self, name: &Option<Name>) -> PResult<Stmt> {
        if let Some(n) = name {
            return Err(Diagnostic::error(
                n.span,
                "a construct name on a one-line WHERE or FORALL statement",
            ));
        }
        let span = self.span_here();
        if !self.is_assignment() {
            return Err(self.error_here("an assignment"));
        }
        let kind = self.assignment()?;
        Ok(Stmt {
            label: None,
            kind,
            span,
        })
    }

    /// `([integer ::] i = lo:hi[:stride], ..., [mask])`.
    pub(super) fn forall_header(&mut self) -> PResult<ForallHeader> {
        self.expect(TokenKind::LParen)?;
        if self.at_kw("integer") {
            // An optional type specification: `integer [(kind)] ::`.
            let mut i = self.pos;
            while i < self.toks.len() && self.kind_at(i) != Some(TokenKind::DoubleColon) {
                i += 1;
            }
            if i < self.toks.len() {
                self.pos = i + 1;
            }
        }
        let mut indices = Vec::new();
        let mut mask = None;
        loop {
            let is_index = self.kind_at(self.pos) == Some(TokenKind::Name)
                && self.kind_at(self.pos + 1) == Some(TokenKind::Assign);
            if is_index && mask.is_none() {
                let var = self.name("an index name")?;
                self.expect(TokenKind::Assign)?;
                let lo = self.expr()?;
                self.expect(TokenKind::Colon)?;
                let hi = self.expr()?;
                let stride = if self.eat(TokenKind::Colon) {
                    Some(self.expr()?)
                } else {
                    None
                };
                indices.push(ForallIndex {
                    var,
                    lo,
                    hi,
                    stride,
                });
            } else if mask.is_none() && !indices.is_empty() {
                mask = Some(self.expr()?);
            } else {
                return Err(self.error_here("an index specification `i = lo:hi`"));
            }
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok(ForallHeader { indices, mask })
    }
}

/// A dummy mask for a header that failed to parse.
fn placeholder(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Logical(false),
        span,
    }
}

impl Parser {
    /// The body of a WHERE construct up to its END WHERE.
    pub(super) fn parse_where(&mut self, span: Span, name: Option<Name>, mask: Expr) -> StmtKind {
        const WHAT: &str = "WHERE construct";
        self.open.push(ConstructClass::Where);
        let mut arms: Vec<(Expr, Vec<Stmt>)> = Vec::new();
        let mut else_body: Option<Vec<Stmt>> = None;
        let mut current = Some(mask);
        loop {
            let (body, _) = self.parse_block(None);
            match current.take() {
                Some(mask) => arms.push((mask, body)),
                None => {
                    if let Some(e) = else_body.as_mut() {
                        e.extend(body)
                    }
                }
            }
            let line = self.bump();
            match line.kind {
                LineKind::ElseWhere { mask, name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, false);
                    if else_body.is_some() {
                        self.error(line.span, "ELSEWHERE after the unmasked ELSEWHERE");
                    } else if let Some(m) = mask {
                        current = Some(m);
                    } else {
                        else_body = Some(Vec::new());
                    }
                }
                LineKind::EndWhere { name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, true);
                    break;
                }
                _ => {
                    self.unbump(line);
                    self.error(span, "WHERE construct is not closed by END WHERE");
                    break;
                }
            }
        }
        self.open.pop();
        StmtKind::Where {
            name,
            arms,
            else_body,
        }
    }

    /// The body of a FORALL construct up to its END FORALL.
    pub(super) fn parse_forall(
        &mut self,
        span: Span,
        name: Option<Name>,
        header: ForallHeader,
    ) -> StmtKind {
        const WHAT: &str = "FORALL construct";
        self.open.push(ConstructClass::Forall);
        let (body, _) = self.parse_block(None);
        self.open.pop();
        let line = self.bump();
        match line.kind {
            LineKind::EndForall { name: given } => {
                self.check_construct_name(WHAT, &name, &given, line.span, true);
            }
            other => {
                self.unbump(Line {
                    kind: other,
                    ..line
                });
                self.error(span, "FORALL construct is not closed by END FORALL");
            }
        }
        StmtKind::Forall {
            name,
            concurrent: false,
            indices: header.indices,
            mask: header.mask,
            body,
        }
    }
}
