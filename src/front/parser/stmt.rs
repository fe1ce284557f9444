//! Executable statements: assignments, the simple action statements, and
//! the IF / DO / SELECT CASE constructs with their labelled-DO matching and
//! error recovery.

use super::expr::Built;
use super::*;
use std::collections::BTreeSet;

/// Deepest allowed nesting of IF / DO / SELECT CASE constructs.
const MAX_CONSTRUCT_NESTING: usize = 64;

/// The control of a counted DO loop: `var = start, end [, step]`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CountedControl {
    var: Name,
    start: Expr,
    end: Expr,
    step: Option<Expr>,
}

/// The control of a DO statement.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum DoControl {
    Counted(Box<CountedControl>),
    While(Expr),
    Concurrent(Box<super::masked::ForallHeader>),
    Forever,
}

/// A dummy logical condition used when a construct's header failed to parse,
/// so that its body is still parsed and matched with its END.
fn placeholder_condition(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Logical(false),
        span,
    }
}

/// When a statement failed to lex, guesses from its text whether it opens
/// or continues a construct, so that the construct's END still matches.
pub(super) fn recover_construct(text: &str, span: Span) -> Option<LineKind> {
    let compact = compact_text(text);
    let c = compact.as_str();
    if c.starts_with("if(") && c.ends_with("then") {
        return Some(LineKind::IfThen {
            name: None,
            cond: placeholder_condition(span),
        });
    }
    if c.starts_with("elseif(") && c.ends_with("then") {
        return Some(LineKind::ElseIf {
            cond: placeholder_condition(span),
            name: None,
        });
    }
    if c.starts_with("selectcase") {
        return Some(LineKind::SelectCase {
            name: None,
            selector: placeholder_condition(span),
        });
    }
    if c.starts_with("case(") || c.starts_with("casedefault") {
        return Some(LineKind::Case {
            selector: CaseSelector::Items(Vec::new()),
            name: None,
        });
    }
    let rest = c.strip_prefix("do")?;
    let digits = rest.len()
        - rest
            .trim_start_matches(|ch: char| ch.is_ascii_digit())
            .len();
    let label = rest[..digits].parse::<u32>().ok();
    let control = rest[digits..].trim_start_matches(',');
    let looks_like_do = control.is_empty()
        || control.starts_with("while(")
        || control.find('=').is_some_and(|eq| {
            let name = &control[..eq];
            let mut depth = 0i32;
            !name.is_empty()
                && name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && control[eq..].chars().any(|ch| {
                    match ch {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    ch == ',' && depth == 0
                })
        });
    looks_like_do.then_some(LineKind::Do {
        name: None,
        label,
        control: DoControl::Forever,
    })
}

/// Executable statements the subset rejects, with the keyword reported
/// (longer spellings first where one is a prefix of another).
const UNSUPPORTED_EXECUTABLES: [(&str, &str); 12] = [
    ("open", "OPEN"),
    ("close", "CLOSE"),
    ("assign", "ASSIGN"),
    ("pause", "PAUSE"),
    ("inquire", "INQUIRE"),
    ("rewind", "REWIND"),
    ("backspace", "BACKSPACE"),
    ("endfile", "ENDFILE"),
    ("flush", "FLUSH"),
    ("nullify", "NULLIFY"),
    ("wait", "WAIT"),
    ("syncall", "SYNC ALL"),
];

impl StmtParser<'_> {
    /// The dummy argument names of a procedure or ENTRY statement after
    /// its `(`, through the closing `)`; alternate returns (`*`) are
    /// refused.
    pub(super) fn dummy_names(&mut self) -> PResult<Vec<Name>> {
        let mut args = Vec::new();
        if self.eat(TokenKind::RParen) {
            return Ok(args);
        }
        loop {
            if self.at(TokenKind::Star) {
                return Err(Diagnostic::error(
                    self.span_here(),
                    "alternate return dummy arguments ('*') are not supported",
                ));
            }
            args.push(self.name("a dummy argument name")?);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok(args)
    }

    /// The rest of `ENTRY name[(args)] [RESULT(r)]`, after the keyword.
    fn entry_statement(&mut self) -> PResult<StmtKind> {
        let name = self.name("the entry point name")?;
        let args = if self.eat(TokenKind::LParen) {
            self.dummy_names()?
        } else {
            Vec::new()
        };
        let mut result = None;
        if self.eat_kw("result") {
            self.expect(TokenKind::LParen)?;
            result = Some(self.name("the result variable name")?);
            self.expect(TokenKind::RParen)?;
        }
        Ok(StmtKind::Entry { name, args, result })
    }

    /// The control list of READ / WRITE: `(unit, format)` with optional
    /// `unit=` and `fmt=`, then an optional `iostat=`; the unit is standard
    /// input / output (unit `*`, 5 for READ, 6 for WRITE) or, when named
    /// (a variable, element or substring), an internal file, checked by the
    /// semantic analysis (an integer variable is a file unit, refused
    /// there).
    fn io_control(&mut self, read: bool, keyword_span: Span) -> PResult<(IoFormat, IoControl)> {
        let statement = if read { "READ" } else { "WRITE" };
        self.expect(TokenKind::LParen)?;
        self.io_keyword("unit");
        let unit_span = self.span_here();
        let mut control = IoControl::default();
        if !self.eat(TokenKind::Star) {
            let unit = self.expr()?;
            let standard = if read { 5 } else { 6 };
            let is_standard =
                matches!(&unit.kind, ExprKind::Int { value, .. } if *value == standard);
            let named = matches!(
                &unit.kind,
                ExprKind::Name(_) | ExprKind::Apply { .. } | ExprKind::Substring { .. }
            );
            if named {
                control.unit = Some(unit);
            } else if !is_standard {
                return Err(Diagnostic::error(
                    unit_span,
                    format!(
                        "unsupported Fortran: {statement} {} a unit other than `*` or \
                         {standard} (file I/O)",
                        if read { "from" } else { "to" }
                    ),
                ));
            }
        }
        if !self.eat(TokenKind::Comma) {
            return Err(Diagnostic::error(
                keyword_span,
                format!("unsupported Fortran: unformatted {statement}"),
            ));
        }
        self.io_keyword("fmt");
        let format = self.io_format()?;
        while self.eat(TokenKind::Comma) {
            let at = self.span_here();
            let iostat =
                self.toks.get(self.pos).is_some_and(|t| {
                    t.kind == TokenKind::Name && t.text(&self.stmt.text) == "iostat"
                }) && self.kind_at(self.pos + 1) == Some(TokenKind::Assign);
            if !iostat || control.iostat.is_some() {
                return Err(Diagnostic::error(
                    at,
                    format!(
                        "unsupported Fortran: {statement} specifiers other than the unit, the \
                         format and one IOSTAT= (ERR=, END=, ADVANCE=, IOMSG=, ...)"
                    ),
                ));
            }
            self.pos += 2;
            control.iostat = Some(self.expr()?);
        }
        self.expect(TokenKind::RParen)?;
        Ok((format, control))
    }

    /// Skips `keyword =` when it comes next.
    fn io_keyword(&mut self, keyword: &str) {
        let named = self
            .toks
            .get(self.pos)
            .is_some_and(|t| t.kind == TokenKind::Name && t.text(&self.stmt.text) == keyword);
        if named && self.kind_at(self.pos + 1) == Some(TokenKind::Assign) {
            self.pos += 2;
        }
    }

    /// The parenthesised list of ALLOCATE or DEALLOCATE after the keyword:
    /// objects, then `stat=`, `errmsg=`, `source=`, `mold=` options.
    fn allocation(&mut self, allocate: bool, keyword_span: Span) -> PResult<StmtKind> {
        self.expect(TokenKind::LParen)?;
        let char_len = if allocate {
            self.allocate_char_spec()?
        } else {
            None
        };
        let mut objects = Vec::new();
        let (mut stat, mut errmsg, mut source, mut mold) = (None, None, None, None);
        loop {
            let keyword = self
                .toks
                .get(self.pos)
                .filter(|t| t.kind == TokenKind::Name)
                .map(|t| t.text(&self.stmt.text).to_string())
                .filter(|_| self.kind_at(self.pos + 1) == Some(TokenKind::Assign));
            match keyword.as_deref() {
                Some(k @ ("stat" | "errmsg" | "source" | "mold")) => {
                    let k = k.to_string();
                    self.pos += 2;
                    let value = self.expr()?;
                    match k.as_str() {
                        "stat" => stat = Some(value),
                        "source" if allocate => source = Some(value),
                        "mold" if allocate => mold = Some(value),
                        "errmsg" => errmsg = Some(value),
                        _ => {
                            return Err(Diagnostic::error(
                                value.span,
                                format!("{} is not an option of DEALLOCATE", k.to_uppercase()),
                            ))
                        }
                    }
                }
                _ => objects.push(self.expr()?),
            }
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        if objects.is_empty() {
            return Err(Diagnostic::error(
                keyword_span,
                "ALLOCATE / DEALLOCATE names no array",
            ));
        }
        Ok(if allocate {
            StmtKind::Allocate {
                objects,
                stat,
                errmsg,
                source,
                mold,
                char_len,
            }
        } else {
            StmtKind::Deallocate {
                objects,
                stat,
                errmsg,
            }
        })
    }

    /// The length of the type specification `character(len=n) ::` that
    /// may open an ALLOCATE's list (deferred-length CHARACTER objects).
    fn allocate_char_spec(&mut self) -> PResult<Option<Expr>> {
        let typed = self.at_kw("character")
            && self.kind_at(self.pos + 1) == Some(TokenKind::LParen)
            && self.matching.get(self.pos + 1).is_some_and(|&close| {
                self.kind_at(close as usize + 1) == Some(TokenKind::DoubleColon)
            });
        if !typed {
            return Ok(None);
        }
        let spec = self.type_spec(true)?;
        self.expect(TokenKind::DoubleColon)?;
        match spec.len {
            Some(CharLen::Expr(e)) => Ok(Some(e)),
            _ => Err(Diagnostic::error(
                spec.span,
                "the type specification of ALLOCATE needs a length, `character(len=n) ::`",
            )),
        }
    }

    /// A format: `*`, a FORMAT label or a character expression.
    fn io_format(&mut self) -> PResult<IoFormat> {
        if self.eat(TokenKind::Star) {
            return Ok(IoFormat::List);
        }
        if self.at(TokenKind::Int) {
            let span = self.span_here();
            return Ok(IoFormat::Label(self.label_value()?, span));
        }
        Ok(IoFormat::Expr(self.expr()?))
    }

    /// The items of an I/O statement: expressions and implied DO loops,
    /// separated by commas.
    fn io_items(&mut self) -> PResult<Vec<Expr>> {
        let mut items = Vec::new();
        loop {
            items.push(self.io_item()?.expr);
            if !self.eat(TokenKind::Comma) {
                return Ok(items);
            }
        }
    }

    fn io_item(&mut self) -> PResult<Built> {
        if self.at(TokenKind::LParen) {
            if let Some(control) = self.implied_do_control() {
                return self.implied_do(control, Self::io_item);
            }
        }
        self.expr_built()
    }
}

impl Parser {
    /// Executable statements up to a line that ends or continues a construct
    /// (left unread). With `until_label`, also stops after a statement with
    /// that label (or a nested DO loop ending on it) and returns `true`.
    pub(super) fn parse_block(&mut self, until_label: Option<u32>) -> (Vec<Stmt>, bool) {
        let mut body = Vec::new();
        loop {
            let line = self.bump();
            if let Some(class) = line.kind.terminates() {
                if class == ConstructClass::Unit || self.open.contains(&class) {
                    self.unbump(line);
                    return (body, false);
                }
                let construct = match class {
                    ConstructClass::If => "IF THEN",
                    ConstructClass::Do => "DO",
                    ConstructClass::Associate => "ASSOCIATE",
                    ConstructClass::Block => "BLOCK",
                    ConstructClass::Adf => "ADF / ADR",
                    _ => "SELECT CASE",
                };
                self.error(
                    line.span,
                    format!("{} without a matching {construct}", line.kind.describe()),
                );
                continue;
            }
            let label = line.label;
            let terminal = match line.kind {
                LineKind::Error => None,
                LineKind::Decl(kind) => {
                    if !matches!(kind, DeclKind::Data(_)) {
                        self.error(
                            line.span,
                            "specification statement after executable statements",
                        );
                    }
                    self.arrays.add_from(&kind);
                    self.late_decls.push(Decl {
                        kind,
                        span: line.span,
                    });
                    None
                }
                _ => {
                    let (stmt, terminal) = self.parse_executable(line);
                    body.push(stmt);
                    terminal
                }
            };
            if until_label.is_some() && (label == until_label || terminal == until_label) {
                return (body, true);
            }
        }
    }

    /// One executable statement or construct, starting at `line`. Returns
    /// the statement and, for a labelled DO loop, the label of its terminal
    /// statement (loops sharing it end there too).
    fn parse_executable(&mut self, line: Line) -> (Stmt, Option<u32>) {
        let Line { label, span, kind } = line;
        let make = |kind| Stmt { label, kind, span };
        let is_construct = matches!(
            kind,
            LineKind::IfThen { .. }
                | LineKind::Do { .. }
                | LineKind::SelectCase { .. }
                | LineKind::Associate { .. }
                | LineKind::BlockStart { .. }
                | LineKind::WhereStart { .. }
                | LineKind::ForallStart { .. }
                | LineKind::AdfStart { .. }
        );
        if is_construct && self.open.len() >= MAX_CONSTRUCT_NESTING {
            self.error(span, "constructs are nested too deeply");
            return (make(StmtKind::Continue), None);
        }
        match kind {
            LineKind::Exec(kind) => (make(kind), None),
            LineKind::IfThen { name, cond } => (make(self.parse_if(span, name, cond)), None),
            LineKind::Do {
                name,
                label: do_label,
                control,
            } => {
                let (kind, terminal) = self.parse_do(span, name, do_label, control);
                (make(kind), terminal)
            }
            LineKind::SelectCase { name, selector } => {
                (make(self.parse_select(span, name, selector)), None)
            }
            LineKind::Associate { name, pairs } => {
                (make(self.parse_associate(span, name, pairs)), None)
            }
            LineKind::BlockStart { name } => (make(self.parse_block_construct(span, name)), None),
            LineKind::WhereStart { name, mask } => (make(self.parse_where(span, name, mask)), None),
            LineKind::ForallStart { name, header } => {
                (make(self.parse_forall(span, name, *header)), None)
            }
            LineKind::AdfStart { reverse, seeds } => {
                (make(self.parse_adf(span, reverse, seeds)), None)
            }
            _ => (make(StmtKind::Continue), None),
        }
    }

    /// Reports a construct name on an END / ELSE / CASE that does not match
    /// the construct's own.
    pub(super) fn check_construct_name(
        &mut self,
        construct: &str,
        own: &Option<Name>,
        given: &Option<Name>,
        span: Span,
        required: bool,
    ) {
        match (own, given) {
            (Some(own), Some(given)) if own.text != given.text => self.error(
                given.span,
                format!(
                    "construct name '{}' does not match the {construct} name '{}'",
                    given.text, own.text
                ),
            ),
            (Some(own), None) if required => self.error(
                span,
                format!(
                    "the END of the {construct} must repeat its construct name '{}'",
                    own.text
                ),
            ),
            (None, Some(given)) => self.error(
                given.span,
                format!(
                    "construct name '{}' given, but the {construct} has none",
                    given.text
                ),
            ),
            _ => {}
        }
    }

    /// A BLOCK construct up to its END BLOCK: its declarations go to the
    /// procedure's (as one [`DeclKind::Block`]), its statements stay.
    fn parse_block_construct(&mut self, span: Span, name: Option<Name>) -> StmtKind {
        const WHAT: &str = "BLOCK construct";
        self.open.push(ConstructClass::Block);
        let earlier = self.late_decls.len();
        let mut decls = self.parse_specification_part(false);
        let (mut body, _) = self.parse_block(None);
        self.open.pop();
        let names_of = |ds: &[Decl]| -> BTreeSet<String> {
            ds.iter()
                .filter_map(|d| match &d.kind {
                    DeclKind::Block(inner) => Some(block_scope::block_names(inner)),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        block_scope::rename_reused(
            &mut decls,
            &mut body,
            &names_of(&self.late_decls[..earlier]),
            &names_of(&self.late_decls[earlier..]),
            self.late_decls.len() + 1,
        );
        if !decls.is_empty() {
            self.late_decls.push(Decl {
                kind: DeclKind::Block(decls),
                span,
            });
        }
        let line = self.bump();
        match line.kind {
            LineKind::EndBlock { name: given } => {
                self.check_construct_name(WHAT, &name, &given, line.span, true);
            }
            other => {
                self.unbump(Line {
                    kind: other,
                    ..line
                });
                self.error(span, "BLOCK construct is not closed by END BLOCK");
            }
        }
        StmtKind::Block { name, body }
    }

    /// The body of an ASSOCIATE construct up to its END ASSOCIATE.
    fn parse_associate(
        &mut self,
        span: Span,
        name: Option<Name>,
        pairs: Vec<(Name, Expr)>,
    ) -> StmtKind {
        const WHAT: &str = "ASSOCIATE construct";
        self.open.push(ConstructClass::Associate);
        let (body, _) = self.parse_block(None);
        self.open.pop();
        let line = self.bump();
        match line.kind {
            LineKind::EndAssociate { name: given } => {
                self.check_construct_name(WHAT, &name, &given, line.span, true);
            }
            other => {
                self.unbump(Line {
                    kind: other,
                    ..line
                });
                self.error(span, "ASSOCIATE construct is not closed by END ASSOCIATE");
            }
        }
        StmtKind::Associate { name, pairs, body }
    }

    fn parse_if(&mut self, span: Span, name: Option<Name>, cond: Expr) -> StmtKind {
        const WHAT: &str = "IF construct";
        self.open.push(ConstructClass::If);
        let mut arms: Vec<(Expr, Vec<Stmt>)> = Vec::new();
        let mut else_body: Option<Vec<Stmt>> = None;
        let mut current_cond = Some(cond);
        loop {
            let (body, _) = self.parse_block(None);
            match current_cond.take() {
                Some(cond) => arms.push((cond, body)),
                None => {
                    if let Some(e) = else_body.as_mut() {
                        e.extend(body)
                    }
                }
            }
            let line = self.bump();
            match line.kind {
                LineKind::ElseIf { cond, name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, false);
                    if else_body.is_some() {
                        self.error(line.span, "ELSE IF after ELSE in an IF construct");
                    } else {
                        current_cond = Some(cond);
                    }
                }
                LineKind::Else { name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, false);
                    if else_body.is_some() {
                        self.error(line.span, "second ELSE in an IF construct");
                    } else {
                        else_body = Some(Vec::new());
                    }
                }
                LineKind::EndIf { name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, true);
                    break;
                }
                _ => {
                    self.unbump(line);
                    self.error(span, "IF construct is not closed by END IF");
                    break;
                }
            }
        }
        self.open.pop();
        StmtKind::If {
            name,
            arms,
            else_body,
        }
    }

    fn parse_do(
        &mut self,
        span: Span,
        name: Option<Name>,
        do_label: Option<u32>,
        control: DoControl,
    ) -> (StmtKind, Option<u32>) {
        const WHAT: &str = "DO loop";
        self.open.push(ConstructClass::Do);
        let (mut body, ended_on_label) = self.parse_block(do_label);
        let mut terminal = None;
        if ended_on_label {
            terminal = do_label;
            if name.is_some() {
                self.error(span, "a named DO loop must end with END DO");
            }
        } else {
            let line = self.bump();
            match line.kind {
                LineKind::EndDo { name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, true);
                    if let Some(l) = do_label {
                        if line.label != Some(l) {
                            self.error(
                                line.span,
                                format!(
                                    "the END DO of the DO loop with label {l} must carry that label"
                                ),
                            );
                        }
                        terminal = Some(l);
                    }
                    if let Some(l) = line.label {
                        // Keep the label as a branch target inside the loop.
                        body.push(Stmt {
                            label: Some(l),
                            kind: StmtKind::Continue,
                            span: line.span,
                        });
                    }
                }
                _ => {
                    self.unbump(line);
                    match do_label {
                        Some(l) => self.error(
                            span,
                            format!(
                                "DO loop is not terminated: no statement with label {l} follows"
                            ),
                        ),
                        None => self.error(span, "DO loop is not closed by END DO"),
                    }
                }
            }
        }
        self.open.pop();
        let kind = match control {
            DoControl::Counted(control) => {
                let CountedControl {
                    var,
                    start,
                    end,
                    step,
                } = *control;
                StmtKind::Do {
                    name,
                    var,
                    start,
                    end,
                    step,
                    body,
                }
            }
            DoControl::While(cond) => StmtKind::DoWhile { name, cond, body },
            DoControl::Concurrent(header) => StmtKind::Forall {
                name,
                concurrent: true,
                indices: header.indices,
                mask: header.mask,
                body,
            },
            DoControl::Forever => StmtKind::DoForever { name, body },
        };
        (kind, terminal)
    }

    fn parse_select(&mut self, span: Span, name: Option<Name>, selector: Expr) -> StmtKind {
        const WHAT: &str = "SELECT CASE construct";
        self.open.push(ConstructClass::Select);
        let (before, _) = self.parse_block(None);
        if let Some(first) = before.first() {
            self.error(
                first.span,
                "statements between SELECT CASE and its first CASE are not allowed",
            );
        }
        let mut cases: Vec<(CaseSelector, Vec<Stmt>)> = Vec::new();
        let mut default_seen = false;
        loop {
            let line = self.bump();
            match line.kind {
                LineKind::Case {
                    selector: case,
                    name: given,
                } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, false);
                    if case == CaseSelector::Default {
                        if default_seen {
                            self.error(line.span, "second CASE DEFAULT in a SELECT CASE construct");
                        }
                        default_seen = true;
                    }
                    let (body, _) = self.parse_block(None);
                    cases.push((case, body));
                }
                LineKind::EndSelect { name: given } => {
                    self.check_construct_name(WHAT, &name, &given, line.span, true);
                    break;
                }
                _ => {
                    self.unbump(line);
                    self.error(span, "SELECT CASE construct is not closed by END SELECT");
                    break;
                }
            }
        }
        self.open.pop();
        StmtKind::SelectCase {
            name,
            selector,
            cases,
        }
    }
}

impl<'s> StmtParser<'s> {
    /// True when the statement has the shape `designator = ...`: a name,
    /// up to two parenthesized groups, `%` components, then `=` or `=>`.
    /// In fixed form the name may be written with blanks (`Y PRIME = 1`);
    /// such a statement is an assignment only without a comma after its
    /// `=` (else it is a keyword statement: `DO I = 1, N`).
    pub(super) fn is_assignment(&self) -> bool {
        let mut i = self.pos;
        if self.kind_at(i) != Some(TokenKind::Name) {
            return false;
        }
        i += 1;
        let glued = self.stmt.fixed && self.kind_at(i) == Some(TokenKind::Name);
        while self.stmt.fixed && self.kind_at(i) == Some(TokenKind::Name) {
            i += 1;
        }
        if glued && self.top_level_comma_after(i) {
            return false;
        }
        loop {
            let mut groups = 0;
            while self.kind_at(i) == Some(TokenKind::LParen) && groups < 2 {
                let close = self.matching[i];
                if close == u32::MAX {
                    return false;
                }
                i = close as usize + 1;
                groups += 1;
            }
            if self.kind_at(i) == Some(TokenKind::Percent)
                && self.kind_at(i + 1) == Some(TokenKind::Name)
            {
                i += 2;
                continue;
            }
            break;
        }
        matches!(
            self.kind_at(i),
            Some(TokenKind::Assign) | Some(TokenKind::Arrow)
        )
    }

    /// Whether a comma outside parentheses follows token `i`.
    fn top_level_comma_after(&self, mut i: usize) -> bool {
        while let Some(k) = self.kind_at(i) {
            match k {
                TokenKind::Comma => return true,
                TokenKind::LParen | TokenKind::LArray | TokenKind::LBracket => {
                    let m = self.matching[i];
                    if m == u32::MAX {
                        return false;
                    }
                    i = m as usize;
                }
                _ => {}
            }
            i += 1;
        }
        false
    }

    pub(super) fn assignment(&mut self) -> PResult<StmtKind> {
        self.what = "assignment";
        let target = self.designator()?;
        if self.at(TokenKind::Arrow) {
            return Ok(StmtKind::Unsupported("pointer assignment".to_string()));
        }
        self.expect(TokenKind::Assign)?;
        let value = self.expr()?;
        self.expect_end()?;
        Ok(StmtKind::Assign { target, value })
    }

    /// IF / ELSE / END IF, DO / END DO, SELECT CASE / CASE / END SELECT.
    pub(super) fn construct_statement(&mut self, name: &Option<Name>) -> PResult<Option<LineKind>> {
        if let Some(kind) = self.masked_statement(name)? {
            return Ok(Some(kind));
        }
        if let Some(line) = self.adf_line(name)? {
            return Ok(Some(line));
        }
        let kind = if self.at_kw("if") && self.kind_at(self.pos + 1) == Some(TokenKind::LParen) {
            self.pos += 1;
            self.what = "IF statement";
            if self
                .toks
                .last()
                .is_some_and(|t| t.text(&self.stmt.text) == "then")
            {
                self.recovery = Some(LineKind::IfThen {
                    name: name.clone(),
                    cond: placeholder_condition(self.span_here()),
                });
            }
            self.expect(TokenKind::LParen)?;
            let cond = self.expr()?;
            self.expect(TokenKind::RParen)?;
            if self.at_kw("then") && self.keyword_end("then") == Some(self.toks.len()) {
                LineKind::IfThen {
                    name: name.clone(),
                    cond,
                }
            } else if name.is_some() {
                return Err(self.error_here("THEN after the condition of a named IF"));
            } else if self.at(TokenKind::Int) {
                self.what = "arithmetic IF statement";
                let negative = self.label_value()?;
                self.expect(TokenKind::Comma)?;
                let zero = self.label_value()?;
                self.expect(TokenKind::Comma)?;
                let positive = self.label_value()?;
                self.expect_end()?;
                LineKind::Exec(StmtKind::ArithmeticIf {
                    value: cond,
                    labels: [negative, zero, positive],
                })
            } else if self.at_end() {
                return Err(self.error_here("THEN or a statement after the condition"));
            } else {
                let span = self.span_here();
                let inner = self.action_statement()?;
                LineKind::Exec(StmtKind::LogicalIf {
                    cond,
                    stmt: Box::new(Stmt {
                        label: None,
                        kind: inner,
                        span,
                    }),
                })
            }
        } else if self.eat_kw("do") {
            self.what = "DO statement";
            self.recovery = Some(LineKind::Do {
                name: name.clone(),
                label: None,
                control: DoControl::Forever,
            });
            self.do_statement(name.clone())?
        } else if self.text_at(self.pos) == "dowhile"
            && self.kind_at(self.pos + 1) == Some(TokenKind::LParen)
        {
            self.what = "DO WHILE statement";
            self.recovery = Some(LineKind::Do {
                name: name.clone(),
                label: None,
                control: DoControl::Forever,
            });
            self.pos += 1;
            self.expect(TokenKind::LParen)?;
            let cond = self.expr()?;
            self.expect(TokenKind::RParen)?;
            self.expect_end()?;
            LineKind::Do {
                name: name.clone(),
                label: None,
                control: DoControl::While(cond),
            }
        } else if self.at_kw("selectcase") {
            self.eat_kw("selectcase");
            self.what = "SELECT CASE statement";
            self.recovery = Some(LineKind::SelectCase {
                name: name.clone(),
                selector: placeholder_condition(self.span_here()),
            });
            self.expect(TokenKind::LParen)?;
            let selector = self.expr()?;
            self.expect(TokenKind::RParen)?;
            self.expect_end()?;
            LineKind::SelectCase {
                name: name.clone(),
                selector,
            }
        } else if self.keyword_end("block") == Some(self.toks.len()) {
            self.eat_kw("block");
            LineKind::BlockStart { name: name.clone() }
        } else if self.at_kw("endblock") && !self.at_kw("endblockdata") {
            self.eat_kw("endblock");
            self.what = "END BLOCK statement";
            self.recovery = Some(LineKind::EndBlock { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndBlock { name }
        } else if self.at_kw("associate")
            && self
                .keyword_end("associate")
                .is_some_and(|end| self.kind_at(end) == Some(TokenKind::LParen))
        {
            self.eat_kw("associate");
            self.what = "ASSOCIATE statement";
            self.recovery = Some(LineKind::Associate {
                name: name.clone(),
                pairs: Vec::new(),
            });
            self.expect(TokenKind::LParen)?;
            let mut pairs = Vec::new();
            loop {
                let n = self.name("an associate name")?;
                self.expect(TokenKind::Arrow)?;
                pairs.push((n, self.expr()?));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RParen)?;
            self.expect_end()?;
            LineKind::Associate {
                name: name.clone(),
                pairs,
            }
        } else if name.is_some() {
            if self.at_kw("selecttype") || self.at_kw("associate") {
                // Named unsupported constructs are skipped like unnamed ones.
                return self.unsupported_construct();
            }
            return Ok(None);
        } else if self.eat_kw("elseif") {
            self.what = "ELSE IF statement";
            self.recovery = Some(LineKind::ElseIf {
                cond: placeholder_condition(self.span_here()),
                name: None,
            });
            self.expect(TokenKind::LParen)?;
            let cond = self.expr()?;
            self.expect(TokenKind::RParen)?;
            if !self.eat_kw("then") {
                return Err(self.error_here("THEN"));
            }
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::ElseIf { cond, name }
        } else if self.eat_kw("else") {
            self.what = "ELSE statement";
            self.recovery = Some(LineKind::Else { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Else { name }
        } else if self.eat_kw("endif") {
            self.what = "END IF statement";
            self.recovery = Some(LineKind::EndIf { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndIf { name }
        } else if self.eat_kw("enddo") {
            self.what = "END DO statement";
            self.recovery = Some(LineKind::EndDo { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndDo { name }
        } else if self.eat_kw("endassociate") {
            self.what = "END ASSOCIATE statement";
            self.recovery = Some(LineKind::EndAssociate { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndAssociate { name }
        } else if self.eat_kw("endselect") {
            self.what = "END SELECT statement";
            self.recovery = Some(LineKind::EndSelect { name: None });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndSelect { name }
        } else if self.at_kw("casedefault") {
            self.eat_kw("casedefault");
            self.what = "CASE DEFAULT statement";
            self.recovery = Some(LineKind::Case {
                selector: CaseSelector::Default,
                name: None,
            });
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Case {
                selector: CaseSelector::Default,
                name,
            }
        } else if self.at_kw("case") && self.kind_at(self.pos + 1) == Some(TokenKind::LParen) {
            self.eat_kw("case");
            self.what = "CASE statement";
            self.recovery = Some(LineKind::Case {
                selector: CaseSelector::Items(Vec::new()),
                name: None,
            });
            let selector = CaseSelector::Items(self.case_items()?);
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Case { selector, name }
        } else {
            return self.unsupported_construct();
        };
        Ok(Some(kind))
    }

    /// ASSOCIATE, SELECT TYPE: skipped (block form) or
    /// reported (statement form).
    fn unsupported_construct(&mut self) -> PResult<Option<LineKind>> {
        for (keyword, block) in [
            ("associate", SkippedBlock::Associate),
            ("selecttype", SkippedBlock::SelectType),
        ] {
            let Some(end) = self.keyword_end(keyword) else {
                continue;
            };
            if self.kind_at(end) != Some(TokenKind::LParen) {
                continue;
            }
            let close = self.matching[end];
            let is_block = close != u32::MAX && close as usize + 1 == self.toks.len();
            self.pos = self.toks.len();
            return Ok(Some(
                if is_block || block == SkippedBlock::Associate || block == SkippedBlock::SelectType
                {
                    LineKind::Skip(block)
                } else {
                    LineKind::Exec(StmtKind::Unsupported(block.keyword().to_string()))
                },
            ));
        }
        Ok(None)
    }

    /// The rest of a DO statement after the DO keyword.
    fn do_statement(&mut self, name: Option<Name>) -> PResult<LineKind> {
        let label = if self.at(TokenKind::Int) {
            Some(self.label_value()?)
        } else {
            None
        };
        self.recovery = Some(LineKind::Do {
            name: name.clone(),
            label,
            control: DoControl::Forever,
        });
        let comma = self.eat(TokenKind::Comma);
        let control = if self.at_end() {
            if comma {
                return Err(self.error_here("a loop control after ','"));
            }
            DoControl::Forever
        } else if self.at_kw("while")
            && self.kind_at(self.keyword_end("while").unwrap_or(0)) == Some(TokenKind::LParen)
        {
            self.eat_kw("while");
            self.expect(TokenKind::LParen)?;
            let cond = self.expr()?;
            self.expect(TokenKind::RParen)?;
            DoControl::While(cond)
        } else if self.at_kw("concurrent")
            && self
                .keyword_end("concurrent")
                .is_some_and(|end| self.kind_at(end) == Some(TokenKind::LParen))
        {
            self.eat_kw("concurrent");
            self.what = "DO CONCURRENT statement";
            DoControl::Concurrent(Box::new(self.forall_header()?))
        } else {
            let var = self.glued_name("the DO variable")?;
            self.expect(TokenKind::Assign)?;
            let (start, end, step) = self.loop_bounds()?;
            DoControl::Counted(Box::new(CountedControl {
                var,
                start,
                end,
                step,
            }))
        };
        self.expect_end()?;
        Ok(LineKind::Do {
            name,
            label,
            control,
        })
    }

    /// `(item, item, ...)` of a CASE statement.
    fn case_items(&mut self) -> PResult<Vec<CaseItem>> {
        self.expect(TokenKind::LParen)?;
        let mut items = Vec::new();
        loop {
            let item = if self.eat(TokenKind::Colon) {
                CaseItem::Range(None, Some(self.expr()?))
            } else {
                let lo = self.expr()?;
                if self.eat(TokenKind::Colon) {
                    let hi = if self.at(TokenKind::Comma) || self.at(TokenKind::RParen) {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    CaseItem::Range(Some(lo), hi)
                } else {
                    CaseItem::Value(lo)
                }
            };
            items.push(item);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok(items)
    }

    /// Simple executable statements (including the one of a logical IF).
    pub(super) fn action_statement(&mut self) -> PResult<StmtKind> {
        if self.is_assignment() {
            return self.assignment();
        }
        let keyword_span = self.span_here();
        let kind = if self.eat_kw("call") {
            self.what = "CALL statement";
            let name = self.name("the subroutine name")?;
            let args = if self.at(TokenKind::LParen) {
                self.arg_list(true)?.0
            } else {
                Vec::new()
            };
            StmtKind::Call { name, args }
        } else if self.eat_kw("goto") {
            self.what = "GO TO statement";
            if self.at(TokenKind::Int) {
                StmtKind::Goto(self.label_value()?)
            } else if self.eat(TokenKind::LParen) {
                let mut labels = vec![self.label_value()?];
                while self.eat(TokenKind::Comma) {
                    labels.push(self.label_value()?);
                }
                self.expect(TokenKind::RParen)?;
                self.eat(TokenKind::Comma);
                let index = self.expr()?;
                StmtKind::ComputedGoto { labels, index }
            } else if self.at(TokenKind::Name) {
                self.pos = self.toks.len();
                StmtKind::Unsupported("assigned GO TO".to_string())
            } else {
                return Err(self.error_here("a statement label"));
            }
        } else if self.eat_kw("continue") {
            StmtKind::Continue
        } else if self.eat_kw("return") {
            self.what = "RETURN statement";
            if self.at_end() {
                StmtKind::Return
            } else {
                self.expr()?;
                StmtKind::Unsupported("alternate RETURN".to_string())
            }
        } else if self.eat_kw("errorstop") || self.eat_kw("stop") {
            self.what = "STOP statement";
            StmtKind::Stop(if self.at_end() {
                None
            } else {
                Some(self.expr()?)
            })
        } else if self.eat_kw("exit") {
            self.what = "EXIT statement";
            StmtKind::Exit(self.optional_name()?)
        } else if self.eat_kw("cycle") {
            self.what = "CYCLE statement";
            StmtKind::Cycle(self.optional_name()?)
        } else if self.eat_kw("print") {
            self.what = "PRINT statement";
            let format = self.io_format()?;
            let items = if self.eat(TokenKind::Comma) {
                self.io_items()?
            } else {
                Vec::new()
            };
            StmtKind::Write {
                format,
                items,
                control: IoControl::default(),
            }
        } else if self.at_kw("write") || self.at_kw("read") {
            let read = self.eat_kw("read");
            if !read {
                self.eat_kw("write");
            }
            self.what = if read {
                "READ statement"
            } else {
                "WRITE statement"
            };
            let (format, control) = if read && !self.at(TokenKind::LParen) {
                // READ format [, items]
                let format = self.io_format()?;
                if !self.at_end() {
                    self.expect(TokenKind::Comma)?;
                }
                (format, IoControl::default())
            } else {
                let control = self.io_control(read, keyword_span)?;
                // `write(*,*), x` (an extension gfortran accepts).
                self.eat(TokenKind::Comma);
                control
            };
            let items = if self.at_end() {
                Vec::new()
            } else {
                self.io_items()?
            };
            if read {
                StmtKind::Read {
                    format,
                    items,
                    control,
                }
            } else {
                StmtKind::Write {
                    format,
                    items,
                    control,
                }
            }
        } else if self.at_kw("allocate") || self.at_kw("deallocate") {
            let allocate = self.eat_kw("allocate");
            if !allocate {
                self.eat_kw("deallocate");
            }
            self.what = if allocate {
                "ALLOCATE statement"
            } else {
                "DEALLOCATE statement"
            };
            self.allocation(allocate, keyword_span)?
        } else if self.eat_kw("entry") {
            self.what = "ENTRY statement";
            self.entry_statement()?
        } else if let Some(&(_, keyword)) = UNSUPPORTED_EXECUTABLES
            .iter()
            .find(|(kw, _)| self.at_kw(kw))
        {
            self.pos = self.toks.len();
            StmtKind::Unsupported(keyword.to_string())
        } else if self.at_kw("if")
            || self.at_kw("do")
            || self.at_kw("end")
            || self.at_kw("else")
            || self.at_kw("selectcase")
        {
            return Err(Diagnostic::error(
                keyword_span,
                "this statement is not allowed as the statement of a logical IF",
            ));
        } else {
            return Err(Diagnostic::error(
                keyword_span,
                format!("unrecognized statement starting with {}", self.found()),
            ));
        };
        self.expect_end()?;
        Ok(kind)
    }
}
