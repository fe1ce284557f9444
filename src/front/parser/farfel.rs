//! FARFEL's ADF and ADR blocks (seed 002, section 2): the opening lines
//! `ADF(TANGENT(x) = expr, ...)` / `ADR(COTANGENT(y) = expr, ...)`
//! (shorthand `ADF(x)` / `ADR(y)` for a seed of 1), the closing lines
//! `END ADF(dest = TANGENT(y), ...)` / `END ADR(dest = COTANGENT(x), ...)`,
//! the block between them,
//! and the outlining of each block's statements into an internal subroutine
//! of the enclosing procedure (innermost blocks first, so a block nested in
//! another becomes a call inside the outer block's subroutine).

use super::super::ast::*;
use super::super::diag::Diagnostic;
use super::super::lexer::TokenKind;
use super::{ConstructClass, Line, LineKind, PResult, Parser, StmtParser};

impl StmtParser<'_> {
    /// Parses an `ADF(...)`, `ADR(...)`, `END ADF(...)` or `END ADR(...)`
    /// line, or returns `None` when the line is none of them.
    pub(super) fn adf_line(&mut self, name: &Option<Name>) -> PResult<Option<LineKind>> {
        let Some((is_end, reverse, end)) = [
            ("endadf", true, false),
            ("endadr", true, true),
            ("adf", false, false),
            ("adr", false, true),
        ]
        .into_iter()
        .find_map(|(kw, is_end, reverse)| self.keyword_end(kw).map(|e| (is_end, reverse, e))) else {
            return Ok(None);
        };
        if self.kind_at(end) != Some(TokenKind::LParen) {
            return Ok(None);
        }
        let (block, marker) = if reverse {
            ("ADR", "cotangent")
        } else {
            ("ADF", "tangent")
        };
        if let Some(n) = name {
            return Err(Diagnostic::error(
                n.span,
                format!("an {block} block cannot have a construct name"),
            ));
        }
        self.pos = end + 1;
        self.what = match (is_end, reverse) {
            (false, false) => "ADF statement",
            (false, true) => "ADR statement",
            (true, false) => "END ADF statement",
            (true, true) => "END ADR statement",
        };
        let entries = self.adf_entries(marker, is_end)?;
        let line = if is_end {
            LineKind::EndAdf {
                reverse,
                results: entries,
            }
        } else {
            LineKind::AdfStart {
                reverse,
                seeds: entries,
            }
        };
        self.expect(TokenKind::RParen)?;
        self.expect_end()?;
        Ok(Some(line))
    }

    /// A comma-separated list of seeds (`is_end` false) or results, up
    /// to the closing parenthesis.
    fn adf_entries(&mut self, marker: &str, is_end: bool) -> PResult<Vec<AdfEntry>> {
        let mut out = Vec::new();
        loop {
            out.push(self.adf_entry(marker, is_end)?);
            if !self.eat(TokenKind::Comma) {
                return Ok(out);
            }
        }
    }

    /// One seed (`TANGENT(x) = e`, `TANGENT(a(i)) = e` or the shorthand
    /// `x`), one result (`d = TANGENT(y)`), or an implied DO list of them
    /// (`(items, i = start, end [, step])`, nested at will).
    fn adf_entry(&mut self, marker: &str, is_end: bool) -> PResult<AdfEntry> {
        if self.at(TokenKind::LParen) {
            let Some(control) = self.implied_do_control() else {
                return Err(self.error_here("an implied DO list `(..., i = start, end)`"));
            };
            self.pos += 1;
            let mut items = Vec::new();
            while self.pos < control {
                items.push(self.adf_entry(marker, is_end)?);
                if self.pos < control {
                    self.expect(TokenKind::Comma)?;
                }
            }
            if self.pos != control {
                return Err(self.error_here("',' before the implied DO control"));
            }
            self.pos += 1;
            let var = self.name("the implied DO variable")?;
            self.expect(TokenKind::Assign)?;
            let (start, end, step) = self.loop_bounds()?;
            self.expect(TokenKind::RParen)?;
            return Ok(AdfEntry::Loop {
                items,
                var,
                start,
                end,
                step,
            });
        }
        if is_end {
            let dest = self.designator()?;
            self.expect(TokenKind::Assign)?;
            let target = self.marked(marker)?;
            return Ok(AdfEntry::One {
                target,
                other: Some(dest),
            });
        }
        if self.at_kw(marker)
            && self.keyword_end(marker).and_then(|e| self.kind_at(e)) == Some(TokenKind::LParen)
        {
            let target = self.marked(marker)?;
            self.expect(TokenKind::Assign)?;
            let seed = self.expr()?;
            return Ok(AdfEntry::One {
                target,
                other: Some(seed),
            });
        }
        if !self.at(TokenKind::Name) {
            return Err(self.error_here("a variable or a seed"));
        }
        Ok(AdfEntry::One {
            target: self.designator()?,
            other: None,
        })
    }

    /// `TANGENT ( designator )` / `COTANGENT ( designator )`: the variable
    /// or array element.
    fn marked(&mut self, marker: &str) -> PResult<Expr> {
        if !self.eat_kw(marker) {
            return Err(self.error_here(&format!("{}(variable)", marker.to_uppercase())));
        }
        self.expect(TokenKind::LParen)?;
        let n = self.designator()?;
        self.expect(TokenKind::RParen)?;
        Ok(n)
    }
}

impl Parser {
    /// The statements of an ADF / ADR block up to its END ADF / END ADR.
    pub(super) fn parse_adf(
        &mut self,
        span: adjit_ir::Span,
        reverse: bool,
        seeds: Vec<AdfEntry>,
    ) -> StmtKind {
        let block = if reverse { "ADR" } else { "ADF" };
        self.open.push(ConstructClass::Adf);
        let (body, _) = self.parse_block(None);
        self.open.pop();
        let line = self.bump();
        let results = match line.kind {
            LineKind::EndAdf {
                reverse: r,
                results,
            } => {
                if r != reverse {
                    let other = if r { "ADR" } else { "ADF" };
                    self.error(
                        line.span,
                        format!("END {other} closes an {block} block (END {block} expected)"),
                    );
                }
                results
            }
            other => {
                self.unbump(Line {
                    kind: other,
                    ..line
                });
                self.error(span, format!("{block} block is not closed by END {block}"));
                Vec::new()
            }
        };
        StmtKind::Adf(Box::new(AdfBlock {
            reverse,
            seeds,
            body,
            results,
            outlined: None,
        }))
    }
}

/// Moves the statements of every ADF / ADR block of `p` into new internal
/// subroutines `_adf1`, `_adf2`, ... of `p` (innermost first).
pub(super) fn outline_adf_blocks(p: &mut Procedure) {
    let mut new = Vec::new();
    let mut body = std::mem::take(&mut p.body);
    outline_in(&mut body, &mut new);
    p.body = body;
    p.contains.extend(new);
}

fn outline_in(stmts: &mut [Stmt], new: &mut Vec<Procedure>) {
    for s in stmts {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Adf(block) => {
                outline_in(&mut block.body, new);
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
                    nested: false,
                    span,
                    elemental: false,
                    entry_of: None,
                });
                block.outlined = Some(name);
            }
            StmtKind::If {
                arms, else_body, ..
            } => {
                for (_, b) in arms {
                    outline_in(b, new);
                }
                if let Some(b) = else_body {
                    outline_in(b, new);
                }
            }
            StmtKind::Do { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::DoForever { body, .. }
            | StmtKind::Block { body, .. }
            | StmtKind::Associate { body, .. } => outline_in(body, new),
            StmtKind::SelectCase { cases, .. } => {
                for (_, b) in cases {
                    outline_in(b, new);
                }
            }
            _ => {}
        }
    }
}
