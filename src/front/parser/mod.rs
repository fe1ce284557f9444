//! The parser: logical statements into the syntax tree of [`super::ast`].
//!
//! It owns the grammar of the subset and knows nothing of symbols, types or
//! the IR (that is [`super::sema`]'s work). Parsing happens at two levels,
//! both defined here and extended by one submodule per part of the grammar:
//!
//! - `StmtParser` parses the tokens of one logical statement (recursive
//!   descent, with Fortran operator precedence) into a `Line`: a
//!   declaration, a simple executable statement, or one piece of a construct
//!   (`IF (..) THEN`, `ELSE`, `END DO`, `SUBROUTINE f(x)`, ...). Fortran has no
//!   reserved words, so statements are classified first as assignments (by
//!   their shape) and then by their leading keyword, accepting both spellings
//!   of `END DO`/`ENDDO`, `GO TO`/`GOTO`, `DOUBLE PRECISION`, ...
//! - `Parser` assembles lines into program units and nested constructs,
//!   matching labelled DO loops with their terminal statements, telling
//!   statement functions from assignments, skipping unsupported blocks
//!   (INTERFACE, TYPE definitions, WHERE, ...), and recovering from errors
//!   at the next statement so that one run reports many of them.
//!
//! This module holds the two parsers' state, token access and statement
//! classification; `unit` parses program units, `decl` declarations, `stmt`
//! executable statements and constructs, `expr` expressions.
//!
//! Nothing here panics on malformed input: nesting depth and expression
//! height are bounded, and every failure is a [`Diagnostic`].

use super::ast::*;
use super::diag::{Diagnostic, SourceMap};
use super::lexer::{lex_into, string_value, Token, TokenKind};
use super::source::{logical_statements, LogicalStmt, SourceForm};
use std::collections::HashMap;
use std::path::PathBuf;

mod block_scope;
mod decl;
mod expr;
mod farfel;
mod include;
mod masked;
mod stmt;
#[cfg(test)]
mod tests;
mod unit;

use decl::ArrayNames;
use masked::ForallHeader;
use stmt::{recover_construct, DoControl};
use unit::{Header, SkippedBlock, UnitKind};

/// Parses one file of the source map into its program units.
///
/// The diagnostics contain the errors (the file is invalid when any is an
/// error) and warnings (ignored PRINT/WRITE statements). After an error the
/// parser resumes at the next statement, so several errors are reported.
/// INCLUDE lines are errors here (there is no file system to read them
/// from); [`parse_file_with_includes`] expands them.
pub fn parse_file(map: &SourceMap, file: u32, form: SourceForm) -> (SourceFile, Vec<Diagnostic>) {
    let (stmts, diags) = logical_statements(map.text(file), file, form);
    parse_statements(map, file, stmts, diags)
}

/// Parses one file like [`parse_file`], replacing every INCLUDE line by the
/// statements of the file it names. That file is looked for next to the
/// including file, then in `include_dirs` in order; it is read in the
/// including file's source form and added to `map`, so its statements keep
/// their own locations.
pub fn parse_file_with_includes(
    map: &mut SourceMap,
    file: u32,
    form: SourceForm,
    include_dirs: &[PathBuf],
) -> (SourceFile, Vec<Diagnostic>) {
    let (stmts, mut diags) = logical_statements(map.text(file), file, form);
    let stmts = include::expand(map, stmts, form, include_dirs, &mut diags);
    parse_statements(map, file, stmts, diags)
}

/// Parses a file's logical statements into program units.
fn parse_statements(
    map: &SourceMap,
    file: u32,
    stmts: Vec<LogicalStmt>,
    mut diags: Vec<Diagnostic>,
) -> (SourceFile, Vec<Diagnostic>) {
    let line_count = map.text(file).lines().count().max(1) as u32;
    let end_span = Span {
        file,
        line: line_count,
        col: 1,
    };
    let mut parser = Parser::new(stmts, end_span);
    let mut units = parser.parse_units();
    diags.append(&mut parser.diags);
    crate::front::entry::split_entries(&mut units, &mut diags);
    (SourceFile { file, units }, diags)
}

type PResult<T> = Result<T, Diagnostic>;

/// Parses `text`, written at `span` (inside a comment), as one expression:
/// the arguments of source directives such as `!$AD BINOMIAL-CKP`.
pub(crate) fn parse_expression(text: &str, span: Span) -> Result<Expr, Diagnostic> {
    let stmt = LogicalStmt::at(&text.to_ascii_lowercase(), span);
    let mut toks = Vec::new();
    lex_into(&stmt, &mut toks)?;
    let mut matching = Vec::new();
    compute_matching(&toks, &mut matching);
    let mut p = StmtParser::new(&stmt, &toks, &matching);
    p.what = "directive argument";
    let e = p.expr()?;
    p.expect_end()?;
    Ok(e)
}

/// A statement's text without blanks, and without a leading construct name
/// (`outer:`).
fn compact_text(text: &str) -> String {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let name_len = compact
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(compact.len());
    let rest = &compact[name_len..];
    if name_len > 0 && rest.starts_with(':') && !rest.starts_with("::") {
        rest[1..].to_string()
    } else {
        compact
    }
}

/// What one logical statement is.
#[derive(Clone, Debug, PartialEq)]
enum LineKind {
    /// A simple executable statement.
    Exec(StmtKind),
    /// A specification statement.
    Decl(DeclKind),
    IfThen {
        name: Option<Name>,
        cond: Expr,
    },
    ElseIf {
        cond: Expr,
        name: Option<Name>,
    },
    Else {
        name: Option<Name>,
    },
    EndIf {
        name: Option<Name>,
    },
    Do {
        name: Option<Name>,
        label: Option<u32>,
        control: DoControl,
    },
    EndDo {
        name: Option<Name>,
    },
    SelectCase {
        name: Option<Name>,
        selector: Expr,
    },
    Case {
        selector: CaseSelector,
        name: Option<Name>,
    },
    EndSelect {
        name: Option<Name>,
    },
    Associate {
        name: Option<Name>,
        pairs: Vec<(Name, Expr)>,
    },
    EndAssociate {
        name: Option<Name>,
    },
    BlockStart {
        name: Option<Name>,
    },
    WhereStart {
        name: Option<Name>,
        mask: Expr,
    },
    ElseWhere {
        mask: Option<Expr>,
        name: Option<Name>,
    },
    EndWhere {
        name: Option<Name>,
    },
    ForallStart {
        name: Option<Name>,
        header: Box<ForallHeader>,
    },
    EndForall {
        name: Option<Name>,
    },
    EndBlock {
        name: Option<Name>,
    },
    /// `ADF(TANGENT(x) = e, ...)` or `ADR(COTANGENT(y) = e, ...)`.
    AdfStart {
        reverse: bool,
        seeds: Vec<AdfEntry>,
    },
    /// `END ADF(d = TANGENT(y), ...)` or `END ADR(g = COTANGENT(x), ...)`.
    EndAdf {
        reverse: bool,
        results: Vec<AdfEntry>,
    },
    Header(Header),
    Contains,
    End {
        unit: Option<UnitKind>,
        name: Option<Name>,
    },
    /// The start of a block to skip up to its END.
    Skip(SkippedBlock),
    /// `interface [name]` / `abstract interface`: replaced by the whole
    /// block (a [`DeclKind::Interface`]) as soon as it is read.
    InterfaceStart {
        generic: Option<Name>,
        is_abstract: bool,
        span: Span,
    },
    /// `type [, access ::] name`: replaced by the whole definition (a
    /// [`DeclKind::TypeDef`]) as soon as it is read.
    TypeStart {
        name: Name,
        access: Option<bool>,
        extends: Option<Name>,
    },
    /// A statement that failed to parse (already reported); kept for its
    /// label.
    Error,
    /// The end of the file.
    Eof,
}

/// The constructs whose END and intermediate statements must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConstructClass {
    If,
    Do,
    Select,
    Associate,
    Block,
    Where,
    Forall,
    /// ADF or ADR block.
    Adf,
    /// Program unit (END, CONTAINS, a new unit header, end of file).
    Unit,
}

impl LineKind {
    /// The construct this line closes or continues, if it is such a line.
    fn terminates(&self) -> Option<ConstructClass> {
        match self {
            LineKind::ElseIf { .. } | LineKind::Else { .. } | LineKind::EndIf { .. } => {
                Some(ConstructClass::If)
            }
            LineKind::EndDo { .. } => Some(ConstructClass::Do),
            LineKind::Case { .. } | LineKind::EndSelect { .. } => Some(ConstructClass::Select),
            LineKind::EndAssociate { .. } => Some(ConstructClass::Associate),
            LineKind::EndBlock { .. } => Some(ConstructClass::Block),
            LineKind::ElseWhere { .. } | LineKind::EndWhere { .. } => Some(ConstructClass::Where),
            LineKind::EndForall { .. } => Some(ConstructClass::Forall),
            LineKind::EndAdf { .. } => Some(ConstructClass::Adf),
            LineKind::Header(_) | LineKind::Contains | LineKind::End { .. } | LineKind::Eof => {
                Some(ConstructClass::Unit)
            }
            _ => None,
        }
    }

    /// How the statement is written, for messages about stray lines.
    fn describe(&self) -> &'static str {
        match self {
            LineKind::ElseIf { .. } => "ELSE IF",
            LineKind::Else { .. } => "ELSE",
            LineKind::EndIf { .. } => "END IF",
            LineKind::EndDo { .. } => "END DO",
            LineKind::Case { .. } => "CASE",
            LineKind::EndSelect { .. } => "END SELECT",
            LineKind::EndAssociate { .. } => "END ASSOCIATE",
            LineKind::EndBlock { .. } => "END BLOCK",
            LineKind::ElseWhere { .. } => "ELSEWHERE",
            LineKind::EndWhere { .. } => "END WHERE",
            LineKind::EndForall { .. } => "END FORALL",
            LineKind::EndAdf { reverse: false, .. } => "END ADF",
            LineKind::EndAdf { reverse: true, .. } => "END ADR",
            LineKind::Contains => "CONTAINS",
            LineKind::End { .. } => "END",
            _ => "statement",
        }
    }
}

/// One parsed statement with its label and position.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    label: Option<u32>,
    span: Span,
    kind: LineKind,
}

/// The statement-stream parser: program units and constructs.
struct Parser {
    stmts: Vec<LogicalStmt>,
    /// Index of the next statement to read.
    next: usize,
    peeked: Option<Line>,
    diags: Vec<Diagnostic>,
    /// Token buffer reused for every statement.
    tokens: Vec<Token>,
    /// For every opening bracket token, the index of its closing one.
    matching: Vec<u32>,
    arrays: ArrayNames,
    /// Declarations found among the executable statements of the current
    /// procedure.
    late_decls: Vec<Decl>,
    /// FORMAT statements of the current procedure.
    formats: Vec<FormatStmt>,
    /// Constructs currently open, innermost last.
    open: Vec<ConstructClass>,
    unit_depth: usize,
    /// Parsing inside a procedure (its internal procedures are internal).
    in_procedure: bool,
    end_span: Span,
}

impl Parser {
    fn new(stmts: Vec<LogicalStmt>, end_span: Span) -> Parser {
        Parser {
            stmts,
            next: 0,
            peeked: None,
            diags: Vec::new(),
            tokens: Vec::new(),
            matching: Vec::new(),
            arrays: ArrayNames::default(),
            late_decls: Vec::new(),
            formats: Vec::new(),
            open: Vec::new(),
            unit_depth: 0,
            in_procedure: false,
            end_span,
        }
    }

    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, message));
    }

    /// Takes the next line (reading it if needed).
    fn bump(&mut self) -> Line {
        match self.peeked.take() {
            Some(line) => line,
            None => self.read_line(),
        }
    }

    /// Puts a line taken by [`Parser::bump`] back.
    fn unbump(&mut self, line: Line) {
        self.peeked = Some(line);
    }

    /// The kind of the next line.
    fn peek_kind(&mut self) -> &LineKind {
        if self.peeked.is_none() {
            let line = self.read_line();
            self.peeked = Some(line);
        }
        match &self.peeked {
            Some(line) => &line.kind,
            None => &LineKind::Eof,
        }
    }

    /// Reads and parses the next statement (skipping FORMAT statements and
    /// whole unsupported blocks).
    fn read_line(&mut self) -> Line {
        loop {
            let Some(stmt) = self.stmts.get(self.next) else {
                return Line {
                    label: None,
                    span: self.end_span,
                    kind: LineKind::Eof,
                };
            };
            self.next += 1;
            let label = stmt.label;
            let span = stmt.start_span();
            if let Some(spec) = format_specification(&stmt.text) {
                match label {
                    Some(label) => self.formats.push(FormatStmt {
                        label,
                        text: spec.to_string(),
                        span,
                    }),
                    None => self.error(span, "a FORMAT statement needs a label"),
                }
                continue;
            }
            let (parsed, recovery) = match lex_into(stmt, &mut self.tokens) {
                Ok(()) => {
                    compute_matching(&self.tokens, &mut self.matching);
                    let mut sp = StmtParser::new(stmt, &self.tokens, &self.matching);
                    let result = sp.parse_line();
                    self.diags.append(&mut sp.warnings);
                    (result, sp.recovery)
                }
                Err(d) => (Err(d), recover_construct(&stmt.text, span)),
            };
            let kind = match parsed {
                Ok(LineKind::Skip(block)) => self.skip_block(block, span),
                Ok(LineKind::InterfaceStart {
                    generic,
                    is_abstract,
                    span,
                }) => self.parse_interface(generic, is_abstract, span),
                Ok(LineKind::TypeStart {
                    name,
                    access,
                    extends,
                }) => self.parse_type_definition(name, access, extends, span),
                Ok(kind) => kind,
                Err(d) => {
                    self.diags.push(d);
                    recovery.unwrap_or(LineKind::Error)
                }
            };
            return Line { label, span, kind };
        }
    }
}

/// The format specification of a FORMAT statement (from its opening
/// parenthesis on), `None` for other statements. FORMAT statements are not
/// tokenized (edit descriptors are not Fortran tokens): the procedure keeps
/// their text ([`FormatStmt`]).
fn format_specification(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix("format")?.trim_start();
    rest.starts_with('(').then(|| rest.trim_end())
}

/// Fills `matching[i]` with the index of the bracket closing the opening
/// bracket at token `i` (`u32::MAX` when unmatched or not an opener).
fn compute_matching(tokens: &[Token], matching: &mut Vec<u32>) {
    matching.clear();
    matching.resize(tokens.len(), u32::MAX);
    let mut stack: Vec<usize> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::LParen | TokenKind::LArray | TokenKind::LBracket => stack.push(i),
            TokenKind::RParen | TokenKind::RArray | TokenKind::RBracket => {
                if let Some(open) = stack.pop() {
                    matching[open] = i as u32;
                }
            }
            _ => {}
        }
    }
}

/// Recursive-descent parser over the tokens of one logical statement.
struct StmtParser<'s> {
    stmt: &'s LogicalStmt,
    toks: &'s [Token],
    matching: &'s [u32],
    pos: usize,
    /// Current nesting of recursive expression parsing.
    depth: u32,
    /// The construct being parsed, for messages ("DO statement").
    what: &'static str,
    /// Warnings produced while parsing (errors are returned).
    warnings: Vec<Diagnostic>,
    /// What the statement stands for if it turns out malformed after its
    /// keyword identified it (a construct header with a placeholder), so
    /// that constructs stay matched after an error.
    recovery: Option<LineKind>,
}

impl<'s> StmtParser<'s> {
    fn new(stmt: &'s LogicalStmt, toks: &'s [Token], matching: &'s [u32]) -> StmtParser<'s> {
        StmtParser {
            stmt,
            toks,
            matching,
            pos: 0,
            depth: 0,
            what: "statement",
            warnings: Vec::new(),
            recovery: None,
        }
    }

    fn kind_at(&self, i: usize) -> Option<TokenKind> {
        self.toks.get(i).map(|t| t.kind)
    }

    fn peek_kind(&self) -> Option<TokenKind> {
        self.kind_at(self.pos)
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek_kind() == Some(kind)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn text_at(&self, i: usize) -> &'s str {
        self.toks.get(i).map_or("", |t| t.text(&self.stmt.text))
    }

    fn span_here(&self) -> Span {
        match self.toks.get(self.pos) {
            Some(t) => t.span,
            None => self.toks.last().map_or(self.stmt.start_span(), |t| {
                self.stmt.span_at(t.end as usize)
            }),
        }
    }

    fn eat(&mut self, kind: TokenKind) -> bool {
        if self.at(kind) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// What the current token is, for messages.
    fn found(&self) -> String {
        match self.toks.get(self.pos) {
            None => "end of statement".to_string(),
            Some(t) => {
                let text = t.text(&self.stmt.text);
                if text.chars().count() > 24 {
                    format!("'{}...'", text.chars().take(20).collect::<String>())
                } else {
                    format!("'{text}'")
                }
            }
        }
    }

    fn error_here(&self, expected: &str) -> Diagnostic {
        Diagnostic::error(
            self.span_here(),
            format!(
                "expected {expected} in {}, found {}",
                self.what,
                self.found()
            ),
        )
    }

    fn expect(&mut self, kind: TokenKind) -> PResult<()> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.error_here(kind.describe()))
        }
    }

    fn expect_end(&self) -> PResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(Diagnostic::error(
                self.span_here(),
                format!("unexpected {} after the {}", self.found(), self.what),
            ))
        }
    }

    /// If the names at the cursor spell `keyword` (possibly split over
    /// several names, `end do` / `enddo`), the position after them.
    fn keyword_end(&self, keyword: &str) -> Option<usize> {
        let mut rest = keyword;
        let mut i = self.pos;
        while let Some(t) = self.toks.get(i) {
            if t.kind != TokenKind::Name {
                return None;
            }
            rest = rest.strip_prefix(t.text(&self.stmt.text))?;
            i += 1;
            if rest.is_empty() {
                return Some(i);
            }
        }
        None
    }

    fn at_kw(&self, keyword: &str) -> bool {
        self.keyword_end(keyword).is_some()
    }

    fn eat_kw(&mut self, keyword: &str) -> bool {
        match self.keyword_end(keyword) {
            Some(end) => {
                self.pos = end;
                true
            }
            None => false,
        }
    }

    /// A name; in fixed form, where blanks are insignificant, the names
    /// right after it are part of it (`Y PRIME` is `YPRIME`: two names never
    /// follow each other where a name is expected).
    fn glued_name(&mut self, expected: &str) -> PResult<Name> {
        let mut name = self.name(expected)?;
        while self.stmt.fixed && self.at(TokenKind::Name) {
            let more = self.name(expected)?;
            name.text.push_str(&more.text);
        }
        Ok(name)
    }

    fn name(&mut self, expected: &str) -> PResult<Name> {
        match self.toks.get(self.pos) {
            Some(t) if t.kind == TokenKind::Name => {
                self.pos += 1;
                Ok(Name {
                    text: t.text(&self.stmt.text).to_string(),
                    span: t.span,
                })
            }
            _ => Err(self.error_here(expected)),
        }
    }

    /// An optional trailing construct name.
    fn optional_name(&mut self) -> PResult<Option<Name>> {
        if self.at_end() {
            Ok(None)
        } else {
            self.name("a construct name").map(Some)
        }
    }

    /// A list of names separated by commas.
    fn name_list(&mut self, expected: &str) -> PResult<Vec<Name>> {
        let mut names = vec![self.name(expected)?];
        while self.eat(TokenKind::Comma) {
            names.push(self.name(expected)?);
        }
        Ok(names)
    }

    fn label_value(&mut self) -> PResult<u32> {
        match self.toks.get(self.pos) {
            Some(t) if t.kind == TokenKind::Int => {
                let text = t.text(&self.stmt.text);
                match text.parse::<u32>() {
                    Ok(v) if (1..=99999).contains(&v) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(Diagnostic::error(
                        t.span,
                        format!("invalid statement label '{text}' in {}", self.what),
                    )),
                }
            }
            _ => Err(self.error_here("a statement label")),
        }
    }

    /// Classifies and parses the statement.
    fn parse_line(&mut self) -> PResult<LineKind> {
        if self.toks.is_empty() {
            return Ok(LineKind::Error);
        }
        let mut construct_name = None;
        if self.kind_at(0) == Some(TokenKind::Name)
            && self.kind_at(1) == Some(TokenKind::Colon)
            && self.kind_at(2) == Some(TokenKind::Name)
        {
            construct_name = Some(self.name("a construct name")?);
            self.pos += 1;
        }
        if self.is_assignment() {
            if let Some(n) = construct_name {
                return Err(Diagnostic::error(
                    n.span,
                    "a construct name must be followed by IF, DO or SELECT CASE",
                ));
            }
            return self.assignment().map(LineKind::Exec);
        }
        if let Some(kind) = self.construct_statement(&construct_name)? {
            return Ok(kind);
        }
        self.recovery = None;
        if let Some(n) = construct_name {
            return Err(Diagnostic::error(
                n.span,
                "a construct name must be followed by IF, DO or SELECT CASE",
            ));
        }
        if let Some(kind) = self.unit_statement()? {
            return Ok(kind);
        }
        self.recovery = None;
        if let Some(kind) = self.specification_statement()? {
            return Ok(kind);
        }
        self.action_statement().map(LineKind::Exec)
    }
}
