//! Expressions: operator precedence, primaries, designators and argument
//! lists, array constructors and implied DO, with nesting and height
//! bounds.

use super::*;

/// Deepest allowed nesting of parentheses and unary/power operator chains
/// while parsing one expression.
const MAX_EXPR_NESTING: u32 = 64;

/// Highest allowed expression tree (keeps later recursive passes, and the
/// tree's destructor, within the stack).
const MAX_EXPR_HEIGHT: u32 = 2000;

/// Operator precedences, loosest first: binary defined operators
/// (`a .dot. b`) bind loosest.
const PREC_DEFINED: u8 = 0;

const PREC_EQV: u8 = 1;

const PREC_OR: u8 = 2;

const PREC_AND: u8 = 3;

const PREC_RELATIONAL: u8 = 5;

const PREC_CONCAT: u8 = 6;

const PREC_ADD: u8 = 7;

const PREC_MUL: u8 = 8;

const PREC_POW: u8 = 9;

/// An expression under construction with the height of its tree.
pub(super) struct Built {
    pub(super) expr: Expr,
    pub(super) height: u32,
}

impl<'s> StmtParser<'s> {
    /// A whole expression.
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        Ok(self.expr_built()?.expr)
    }

    /// The bounds of a loop control after its `=`: `start, end [, step]`
    /// (DO statements and the implied DO lists of ADF / ADR blocks).
    pub(super) fn loop_bounds(&mut self) -> PResult<(Expr, Expr, Option<Expr>)> {
        let start = self.expr()?;
        self.expect(TokenKind::Comma)?;
        let end = self.expr()?;
        let step = if self.eat(TokenKind::Comma) {
            Some(self.expr()?)
        } else {
            None
        };
        Ok((start, end, step))
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_NESTING {
            return Err(Diagnostic::error(
                self.span_here(),
                format!("expression nested too deeply in {}", self.what),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Builds a node of height `height`, refusing overly tall trees.
    fn node(&self, kind: ExprKind, span: Span, height: u32) -> PResult<Built> {
        if height > MAX_EXPR_HEIGHT {
            return Err(Diagnostic::error(
                span,
                format!("expression too long or too deeply nested in {}", self.what),
            ));
        }
        Ok(Built {
            expr: Expr { kind, span },
            height,
        })
    }

    fn binary(&self, op: BinOp, lhs: Built, rhs: Built) -> PResult<Built> {
        let span = lhs.expr.span;
        let height = lhs.height.max(rhs.height) + 1;
        self.node(
            ExprKind::Binary(op, Box::new(lhs.expr), Box::new(rhs.expr)),
            span,
            height,
        )
    }

    fn unary(&self, op: UnOp, span: Span, operand: Built) -> PResult<Built> {
        let height = operand.height + 1;
        self.node(ExprKind::Unary(op, Box::new(operand.expr)), span, height)
    }

    pub(super) fn expr_built(&mut self) -> PResult<Built> {
        self.enter()?;
        let e = self.binary_expr(PREC_DEFINED)?;
        self.leave();
        Ok(e)
    }

    /// A defined operator (`.dot.`, or an intrinsic one under a user
    /// interface) applied to its operands: a reference to the generic
    /// `operator(.dot.)` (see [`operator_generic`]).
    fn defined(&self, op: &str, span: Span, operands: Vec<Built>) -> PResult<Built> {
        let height = operands.iter().map(|b| b.height).max().unwrap_or(0) + 1;
        let args = operands
            .into_iter()
            .map(|b| Arg::positional(b.expr))
            .collect();
        let name = Name {
            text: operator_generic(op),
            span,
        };
        self.node(ExprKind::Apply { name, args }, span, height)
    }

    /// The binary operator at the cursor with its precedence.
    fn binary_operator(&self) -> Option<(BinOp, u8)> {
        use TokenKind as T;
        let op = match self.peek_kind()? {
            T::Eqv => (BinOp::Eqv, PREC_EQV),
            T::Neqv => (BinOp::Neqv, PREC_EQV),
            T::Or => (BinOp::Or, PREC_OR),
            T::And => (BinOp::And, PREC_AND),
            T::Eq => (BinOp::Eq, PREC_RELATIONAL),
            T::Ne => (BinOp::Ne, PREC_RELATIONAL),
            T::Lt => (BinOp::Lt, PREC_RELATIONAL),
            T::Le => (BinOp::Le, PREC_RELATIONAL),
            T::Gt => (BinOp::Gt, PREC_RELATIONAL),
            T::Ge => (BinOp::Ge, PREC_RELATIONAL),
            T::Concat => (BinOp::Concat, PREC_CONCAT),
            T::Plus => (BinOp::Add, PREC_ADD),
            T::Minus => (BinOp::Sub, PREC_ADD),
            T::Star => (BinOp::Mul, PREC_MUL),
            T::Slash => (BinOp::Div, PREC_MUL),
            T::Pow => (BinOp::Pow, PREC_POW),
            _ => return None,
        };
        Some(op)
    }

    /// Precedence climbing over the binary operators binding at least as
    /// tightly as `min`. Binary operators are left-associative except `**`.
    fn binary_expr(&mut self, min: u8) -> PResult<Built> {
        let mut lhs = self.prefix_expr(min)?;
        loop {
            if self.peek_kind() == Some(TokenKind::DefinedOp) {
                if min > PREC_DEFINED {
                    break;
                }
                let tok = self.toks[self.pos];
                self.pos += 1;
                let rhs = self.binary_expr(PREC_DEFINED + 1)?;
                let span = lhs.expr.span;
                lhs = self.defined(tok.text(&self.stmt.text), span, vec![lhs, rhs])?;
                continue;
            }
            let Some((op, prec)) = self.binary_operator() else {
                break;
            };
            if prec < min {
                break;
            }
            self.pos += 1;
            // `**` is right-associative; the others take a tighter operand.
            // A sign right after an operator (`a * -b`, `2**-1`, `a - -b`)
            // is a gfortran extension handled by `prefix_expr`.
            let rhs_min = if op == BinOp::Pow { PREC_POW } else { prec + 1 };
            let rhs = self.binary_expr(rhs_min)?;
            lhs = self.binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// A primary, or a unary operator and its operand. A sign applies to a
    /// multiplicative operand at least (`-a*b` is `-(a*b)`, `-a**2` is
    /// `-(a**2)`), or to a factor after `*`, `/` and `**`; `.not.` applies
    /// to a relational operand.
    fn prefix_expr(&mut self, min: u8) -> PResult<Built> {
        let (op, operand_min) = match self.peek_kind() {
            Some(TokenKind::Minus) => (UnOp::Neg, min.max(PREC_MUL)),
            Some(TokenKind::Plus) => (UnOp::Plus, min.max(PREC_MUL)),
            Some(TokenKind::Not) => (UnOp::Not, min.max(PREC_RELATIONAL)),
            // A defined unary operator applies to a primary.
            Some(TokenKind::DefinedOp) => {
                let tok = self.toks[self.pos];
                self.pos += 1;
                self.enter()?;
                let operand = self.primary()?;
                self.leave();
                return self.defined(tok.text(&self.stmt.text), tok.span, vec![operand]);
            }
            _ => return self.primary(),
        };
        let span = self.span_here();
        self.pos += 1;
        self.enter()?;
        let operand = self.binary_expr(operand_min)?;
        self.leave();
        self.unary(op, span, operand)
    }

    pub(super) fn primary(&mut self) -> PResult<Built> {
        let Some(tok) = self.toks.get(self.pos).copied() else {
            return Err(self.error_here("an expression"));
        };
        let text = tok.text(&self.stmt.text);
        match tok.kind {
            TokenKind::Int => {
                self.pos += 1;
                let (digits, kind) = self.split_kind(text, tok);
                let value = digits.parse::<i64>().map_err(|_| {
                    Diagnostic::error(
                        tok.span,
                        format!("integer literal '{text}' is out of range"),
                    )
                })?;
                self.node(ExprKind::Int { value, kind }, tok.span, 1)
            }
            TokenKind::Real => {
                self.pos += 1;
                let (mantissa, kind) = self.split_kind(text, tok);
                let double = mantissa.contains('d');
                self.node(
                    ExprKind::Real {
                        text: mantissa.replace('d', "e"),
                        double,
                        kind,
                    },
                    tok.span,
                    1,
                )
            }
            TokenKind::Str => {
                self.pos += 1;
                self.node(ExprKind::Str(string_value(text)), tok.span, 1)
            }
            TokenKind::True | TokenKind::False => {
                self.pos += 1;
                self.node(ExprKind::Logical(tok.kind == TokenKind::True), tok.span, 1)
            }
            TokenKind::Name => self.name_primary(),
            TokenKind::LParen => {
                if self.implied_do_control().is_some() {
                    return Err(Diagnostic::error(
                        tok.span,
                        "an implied DO loop is only allowed in an array constructor or a DATA statement",
                    ));
                }
                self.pos += 1;
                let inner = self.expr_built()?;
                if self.at(TokenKind::Comma) {
                    return Err(Diagnostic::error(
                        tok.span,
                        "complex constants are not supported",
                    ));
                }
                self.expect(TokenKind::RParen)?;
                let height = inner.height + 1;
                self.node(ExprKind::Paren(Box::new(inner.expr)), tok.span, height)
            }
            TokenKind::LArray => self.array_constructor(TokenKind::RArray),
            TokenKind::LBracket => self.array_constructor(TokenKind::RBracket),
            _ => Err(self.error_here("an expression")),
        }
    }

    /// Splits `1.0_dp` / `1_8` into the literal and its kind parameter.
    fn split_kind(&self, text: &'s str, tok: Token) -> (&'s str, Option<KindParam>) {
        match text.split_once('_') {
            None => (text, None),
            Some((literal, kind)) => {
                let param = match kind.parse::<i64>() {
                    Ok(k) => KindParam::Int(k),
                    Err(_) => KindParam::Name(Name {
                        text: kind.to_string(),
                        span: self.stmt.span_at(tok.start as usize + literal.len() + 1),
                    }),
                };
                (literal, Some(param))
            }
        }
    }

    /// A name, `name(args)`, or `name(args)(substring)`. A component
    /// reference `a%b%c` is one name `a%b%c` (derived-type variables are
    /// flattened into one variable per component); a component of an array
    /// element `a(i)%b(j)` is the element `a%b(j, i)` of the component's
    /// array (an array of structures is one array per component).
    pub(super) fn name_primary(&mut self) -> PResult<Built> {
        // Blanks are insignificant in fixed form: `Y PRIME` is `YPRIME`
        // (two names never follow each other in a valid expression).
        let mut name = self.glued_name("a name")?;
        while self.at(TokenKind::Percent) && self.kind_at(self.pos + 1) == Some(TokenKind::Name) {
            self.pos += 1;
            let comp = self.name("a component name")?;
            name.text.push('%');
            name.text.push_str(&comp.text);
        }
        let span = name.span;
        let mut built = if self.at(TokenKind::LParen) {
            self.enter()?;
            let parts = |n: &Name| n.text.matches('%').count();
            let (first, mut height) = self.arg_list(false)?;
            // `a(i)%x%v(j)`: a component of an array element is an element
            // of the component's array `a%x%v`, subscripts of the innermost
            // part first (the component's dimensions come first). In a
            // component reference each part's subscripts follow a marker
            // naming the part, since only the semantic analysis knows which
            // parts are arrays (`a(i)%v` and `a%v(i)` differ).
            let mut groups = vec![(parts(&name), first)];
            while self.at(TokenKind::Percent) && self.kind_at(self.pos + 1) == Some(TokenKind::Name)
            {
                while self.at(TokenKind::Percent)
                    && self.kind_at(self.pos + 1) == Some(TokenKind::Name)
                {
                    self.pos += 1;
                    let comp = self.name("a component name")?;
                    name.text.push('%');
                    name.text.push_str(&comp.text);
                }
                if self.at(TokenKind::LParen) {
                    let (inner, h) = self.arg_list(false)?;
                    height = height.max(h);
                    groups.push((parts(&name), inner));
                }
            }
            let marked = name.text.contains('%');
            let mut args = Vec::new();
            for (k, g) in groups.into_iter().rev() {
                if marked {
                    args.push(Arg::part_marker(k, span));
                }
                args.extend(g);
            }
            self.leave();
            self.node(ExprKind::Apply { name, args }, span, height + 1)?
        } else {
            self.node(ExprKind::Name(name), span, 1)?
        };
        if self.at(TokenKind::LParen) && matches!(built.expr.kind, ExprKind::Apply { .. }) {
            let (start, end) = self.substring_range()?;
            let height = built.height + 1;
            built = self.node(
                ExprKind::Substring {
                    base: Box::new(built.expr),
                    start: start.map(Box::new),
                    end: end.map(Box::new),
                },
                span,
                height,
            )?;
        }
        if self.at(TokenKind::Percent) {
            return Err(Diagnostic::error(
                self.span_here(),
                "unsupported Fortran: component of a substring or function result",
            ));
        }
        Ok(built)
    }

    /// A variable, element, section or substring (assignment targets and
    /// DATA objects).
    pub(super) fn designator(&mut self) -> PResult<Expr> {
        if !self.at(TokenKind::Name) {
            return Err(self.error_here("a variable"));
        }
        Ok(self.name_primary()?.expr)
    }

    /// `(start:end)` after an element.
    fn substring_range(&mut self) -> PResult<(Option<Expr>, Option<Expr>)> {
        self.expect(TokenKind::LParen)?;
        let start = if self.at(TokenKind::Colon) {
            None
        } else {
            Some(self.expr()?)
        };
        if !self.eat(TokenKind::Colon) {
            return Err(self.error_here("':' in a substring range"));
        }
        let end = if self.at(TokenKind::RParen) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(TokenKind::RParen)?;
        Ok((start, end))
    }

    /// `(arg, ...)`: expressions, ranges, `keyword=` arguments; alternate
    /// return labels (`*10`) are rejected.
    /// Returns the arguments and the height of the tallest one.
    pub(super) fn arg_list(&mut self, is_call: bool) -> PResult<(Vec<Arg>, u32)> {
        self.expect(TokenKind::LParen)?;
        let mut args = Vec::new();
        let mut height = 0;
        if self.eat(TokenKind::RParen) {
            return Ok((args, height));
        }
        loop {
            if is_call && self.at(TokenKind::Star) {
                return Err(Diagnostic::error(
                    self.span_here(),
                    "alternate return arguments ('*label') are not supported",
                ));
            }
            let keyword = if self.at(TokenKind::Name)
                && self.kind_at(self.pos + 1) == Some(TokenKind::Assign)
            {
                let k = self.name("a keyword")?;
                self.pos += 1;
                Some(k)
            } else {
                None
            };
            let (value, value_height) = self.arg_value()?;
            height = height.max(value_height);
            args.push(Arg { keyword, value });
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok((args, height))
    }

    /// An expression or a `lo:hi[:stride]` triplet, with its height.
    fn arg_value(&mut self) -> PResult<(ArgValue, u32)> {
        let mut height = 0;
        let mut part = |p: &mut Self| -> PResult<Expr> {
            let b = p.expr_built()?;
            height = height.max(b.height);
            Ok(b.expr)
        };
        let lo = if self.at(TokenKind::Colon) || self.at(TokenKind::DoubleColon) {
            None
        } else {
            let e = part(self)?;
            if !(self.at(TokenKind::Colon) || self.at(TokenKind::DoubleColon)) {
                return Ok((ArgValue::Expr(e), height));
            }
            Some(e)
        };
        let (hi, stride) = if self.eat(TokenKind::DoubleColon) {
            (None, Some(part(self)?))
        } else {
            self.expect(TokenKind::Colon)?;
            let hi = if matches!(
                self.peek_kind(),
                Some(TokenKind::Comma | TokenKind::RParen | TokenKind::Colon) | None
            ) {
                None
            } else {
                Some(part(self)?)
            };
            let stride = if self.eat(TokenKind::Colon) {
                Some(part(self)?)
            } else {
                None
            };
            (hi, stride)
        };
        Ok((ArgValue::Range { lo, hi, stride }, height + 1))
    }

    /// `(/ item, ... /)` or `[ item, ... ]`, or with a CHARACTER type
    /// specification, `[character(len=n) :: item, ...]`.
    fn array_constructor(&mut self, close: TokenKind) -> PResult<Built> {
        let span = self.span_here();
        self.pos += 1;
        self.enter()?;
        let mut items = Vec::new();
        let mut height = 0;
        let mut len = None;
        if !self.at(close) {
            loop {
                let item = self.constructor_item()?;
                height = height.max(item.height);
                if items.is_empty() && len.is_none() && self.eat(TokenKind::DoubleColon) {
                    len = Some(constructor_char_len(item.expr)?);
                    if self.at(close) {
                        break;
                    }
                    continue;
                }
                items.push(item.expr);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(close)?;
        self.leave();
        let kind = match len {
            Some(len) => ExprKind::CharArrayConstructor {
                len: Box::new(len),
                items,
            },
            None => ExprKind::ArrayConstructor(items),
        };
        self.node(kind, span, height + 1)
    }

    fn constructor_item(&mut self) -> PResult<Built> {
        if self.at(TokenKind::LParen) {
            if let Some(control) = self.implied_do_control() {
                return self.implied_do(control, Self::constructor_item);
            }
        }
        self.expr_built()
    }

    /// If the parenthesized group at the cursor is an implied DO loop, the
    /// index of the comma before its `var =` control.
    pub(super) fn implied_do_control(&self) -> Option<usize> {
        let open = self.pos;
        let close = *self.matching.get(open)? as usize;
        if close == u32::MAX as usize {
            return None;
        }
        let mut i = open + 1;
        let mut control = None;
        while i < close {
            match self.kind_at(i) {
                Some(TokenKind::LParen | TokenKind::LArray | TokenKind::LBracket) => {
                    let m = self.matching[i];
                    if m == u32::MAX {
                        return None;
                    }
                    i = m as usize;
                }
                Some(TokenKind::Comma)
                    if self.kind_at(i + 1) == Some(TokenKind::Name)
                        && self.kind_at(i + 2) == Some(TokenKind::Assign) =>
                {
                    control = Some(i);
                }
                _ => {}
            }
            i += 1;
        }
        control
    }

    /// `(items, var = start, end [, step])` with the control comma at
    /// `control`; items are parsed by `item`.
    pub(super) fn implied_do(
        &mut self,
        control: usize,
        item: fn(&mut Self) -> PResult<Built>,
    ) -> PResult<Built> {
        let span = self.span_here();
        self.expect(TokenKind::LParen)?;
        self.enter()?;
        let mut items = Vec::new();
        let mut items_height = 0;
        loop {
            let built = item(self)?;
            items_height = items_height.max(built.height);
            items.push(built.expr);
            if self.pos >= control {
                break;
            }
            self.expect(TokenKind::Comma)?;
        }
        if self.pos != control {
            return Err(self.error_here("',' before the implied DO control"));
        }
        self.pos += 1;
        let var = self.name("the implied DO variable")?;
        self.expect(TokenKind::Assign)?;
        let start = self.expr_built()?;
        self.expect(TokenKind::Comma)?;
        let end = self.expr_built()?;
        let step = if self.eat(TokenKind::Comma) {
            Some(self.expr_built()?)
        } else {
            None
        };
        self.expect(TokenKind::RParen)?;
        self.leave();
        let height = 1 + start
            .height
            .max(end.height)
            .max(step.as_ref().map_or(0, |s| s.height))
            .max(items_height);
        self.node(
            ExprKind::ImpliedDo {
                items,
                var,
                start: Box::new(start.expr),
                end: Box::new(end.expr),
                step: step.map(|s| Box::new(s.expr)),
            },
            span,
            height,
        )
    }
}

/// The length `n` of the type specification `character(len=n)` (or
/// `character(n)`) parsed as the expression `spec` before `::` in an array
/// constructor; any other type specification is a located error.
fn constructor_char_len(spec: Expr) -> PResult<Expr> {
    if let ExprKind::Apply { name, mut args } = spec.kind {
        let is_len = |a: &Arg| a.keyword.as_ref().is_none_or(|k| k.text == "len");
        if name.text == "character" && args.len() == 1 && is_len(&args[0]) {
            if let ArgValue::Expr(len) = args.remove(0).value {
                return Ok(len);
            }
        }
    }
    Err(Diagnostic::error(
        spec.span,
        "unsupported Fortran: a type specification in an array constructor other than `character(len=n) ::`",
    ))
}
