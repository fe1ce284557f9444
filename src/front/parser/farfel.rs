//! FARFEL's ADF blocks (seed 002, section 2): the opening line
//! `ADF(TANGENT(x) = expr, ...)` (shorthand `ADF(x)` for a seed of 1), the
//! closing line `END ADF(dest = TANGENT(y), ...)`, the block between them,
//! and the outlining of each block's statements into an internal subroutine
//! of the enclosing procedure (innermost blocks first, so a block nested in
//! another becomes a call inside the outer block's subroutine).

use super::super::ast::*;
use super::super::diag::Diagnostic;
use super::super::lexer::TokenKind;
use super::{ConstructClass, Line, LineKind, PResult, Parser, StmtParser};

impl StmtParser<'_> {
    /// Parses an `ADF(...)` or `END ADF(...)` line, or returns `None` when
    /// the line is neither.
    pub(super) fn adf_line(&mut self, name: &Option<Name>) -> PResult<Option<LineKind>> {
        let (is_end, end) = match (self.keyword_end("adf"), self.keyword_end("endadf")) {
            (_, Some(end)) => (true, end),
            (Some(end), None) => (false, end),
            _ => return Ok(None),
        };
        if self.kind_at(end) != Some(TokenKind::LParen) {
            return Ok(None);
        }
        if let Some(n) = name {
            return Err(Diagnostic::error(
                n.span,
                "an ADF block cannot have a construct name",
            ));
        }
        self.pos = end + 1;
        self.what = if is_end {
            "END ADF statement"
        } else {
            "ADF statement"
        };
        let line = if is_end {
            let mut results = Vec::new();
            loop {
                let dest = self.designator()?;
                self.expect(TokenKind::Assign)?;
                results.push((dest, self.tangent_of()?));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            LineKind::EndAdf { results }
        } else {
            let mut seeds = Vec::new();
            loop {
                if self.at_kw("tangent") && self.kind_at(self.pos + 1) == Some(TokenKind::LParen) {
                    let var = self.tangent_of()?;
                    self.expect(TokenKind::Assign)?;
                    seeds.push((var, Some(self.expr()?)));
                } else {
                    seeds.push((self.name("a variable or TANGENT(variable)")?, None));
                }
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            LineKind::AdfStart { seeds }
        };
        self.expect(TokenKind::RParen)?;
        self.expect_end()?;
        Ok(Some(line))
    }

    /// `TANGENT ( name )`: the name.
    fn tangent_of(&mut self) -> PResult<Name> {
        if !self.eat_kw("tangent") {
            return Err(self.error_here("TANGENT(variable)"));
        }
        self.expect(TokenKind::LParen)?;
        let n = self.name("a variable")?;
        self.expect(TokenKind::RParen)?;
        Ok(n)
    }
}

impl Parser {
    /// The statements of an ADF block up to its END ADF.
    pub(super) fn parse_adf(
        &mut self,
        span: adjit_ir::Span,
        seeds: Vec<(Name, Option<Expr>)>,
    ) -> StmtKind {
        self.open.push(ConstructClass::Adf);
        let (body, _) = self.parse_block(None);
        self.open.pop();
        let line = self.bump();
        let results = match line.kind {
            LineKind::EndAdf { results } => results,
            other => {
                self.unbump(Line {
                    kind: other,
                    ..line
                });
                self.error(span, "ADF block is not closed by END ADF");
                Vec::new()
            }
        };
        StmtKind::Adf(Box::new(AdfBlock {
            seeds,
            body,
            results,
            outlined: None,
        }))
    }
}

/// Moves the statements of every ADF block of `p` into new internal
/// subroutines `_adf1`, `_adf2`, ... of `p` (innermost first). Returns an
/// error when `p` is itself an internal procedure (which cannot contain
/// procedures) and has ADF blocks.
pub(super) fn outline_adf_blocks(p: &mut Procedure, is_internal: bool) -> Vec<Diagnostic> {
    let mut new = Vec::new();
    let mut diags = Vec::new();
    let mut body = std::mem::take(&mut p.body);
    outline_in(&mut body, &mut new, &mut diags, is_internal);
    p.body = body;
    p.contains.extend(new);
    diags
}

fn outline_in(
    stmts: &mut [Stmt],
    new: &mut Vec<Procedure>,
    diags: &mut Vec<Diagnostic>,
    is_internal: bool,
) {
    for s in stmts {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Adf(block) => {
                outline_in(&mut block.body, new, diags, is_internal);
                if is_internal {
                    diags.push(Diagnostic::error(
                        span,
                        "ADF blocks inside internal procedures are not supported",
                    ));
                    continue;
                }
                let name = Name {
                    text: format!("_adf{}", new.len() + 1),
                    span,
                };
                new.push(Procedure {
                    kind: ProcKind::Subroutine,
                    name: name.clone(),
                    args: Vec::new(),
                    decls: Vec::new(),
                    body: std::mem::take(&mut block.body),
                    formats: Vec::new(),
                    contains: Vec::new(),
                    span,
                });
                block.outlined = Some(name);
            }
            StmtKind::If {
                arms, else_body, ..
            } => {
                for (_, b) in arms {
                    outline_in(b, new, diags, is_internal);
                }
                if let Some(b) = else_body {
                    outline_in(b, new, diags, is_internal);
                }
            }
            StmtKind::Do { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::DoForever { body, .. }
            | StmtKind::Block { body, .. }
            | StmtKind::Associate { body, .. } => outline_in(body, new, diags, is_internal),
            StmtKind::SelectCase { cases, .. } => {
                for (_, b) in cases {
                    outline_in(b, new, diags, is_internal);
                }
            }
            _ => {}
        }
    }
}
