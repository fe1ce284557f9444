//! The parser: logical statements into the syntax tree of [`super::ast`].
//!
//! It owns the grammar of the subset. Parsing happens at two levels:
//!
//! - [`StmtParser`] parses the tokens of one logical statement (recursive
//!   descent, with Fortran operator precedence) into a [`Line`]: a
//!   declaration, a simple executable statement, or one piece of a construct
//!   (`IF (..) THEN`, `ELSE`, `END DO`, `SUBROUTINE f(x)`, ...). Fortran has no
//!   reserved words, so statements are classified first as assignments (by
//!   their shape) and then by their leading keyword, accepting both spellings
//!   of `END DO`/`ENDDO`, `GO TO`/`GOTO`, `DOUBLE PRECISION`, ...
//! - [`Parser`] assembles lines into program units and nested constructs,
//!   matching labelled DO loops with their terminal statements, telling
//!   statement functions from assignments, skipping unsupported blocks
//!   (INTERFACE, TYPE definitions, WHERE, ...), and recovering from errors
//!   at the next statement so that one run reports many of them.
//!
//! Nothing here panics on malformed input: nesting depth and expression
//! height are bounded, and every failure is a [`Diagnostic`].

use super::ast::*;
use super::diag::{Diagnostic, SourceMap};
use super::lexer::{lex_into, string_value, Token, TokenKind};
use super::source::{logical_statements, LogicalStmt, SourceForm};
use std::collections::HashMap;

/// Deepest allowed nesting of parentheses and unary/power operator chains
/// while parsing one expression.
const MAX_EXPR_NESTING: u32 = 200;
/// Highest allowed expression tree (keeps later recursive passes, and the
/// tree's destructor, within the stack).
const MAX_EXPR_HEIGHT: u32 = 2000;
/// Deepest allowed nesting of IF / DO / SELECT CASE constructs.
const MAX_CONSTRUCT_NESTING: usize = 200;
/// Deepest allowed nesting of internal procedures.
const MAX_UNIT_NESTING: usize = 8;

/// Parses one file of the source map into its program units.
///
/// The diagnostics contain the errors (the file is invalid when any is an
/// error) and warnings (ignored PRINT/WRITE statements). After an error the
/// parser resumes at the next statement, so several errors are reported.
pub fn parse_file(map: &SourceMap, file: u32, form: SourceForm) -> (SourceFile, Vec<Diagnostic>) {
    let text = map.text(file);
    let (stmts, mut diags) = logical_statements(text, file, form);
    let line_count = text.lines().count().max(1) as u32;
    let end_span = Span {
        file,
        line: line_count,
        col: 1,
    };
    let mut parser = Parser::new(stmts, end_span);
    let units = parser.parse_units();
    diags.append(&mut parser.diags);
    (SourceFile { file, units }, diags)
}

type PResult<T> = Result<T, Diagnostic>;

/// The kinds of program unit a header or END statement names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnitKind {
    Subroutine,
    Function,
    Program,
    Module,
}

impl UnitKind {
    fn keyword(self) -> &'static str {
        match self {
            UnitKind::Subroutine => "SUBROUTINE",
            UnitKind::Function => "FUNCTION",
            UnitKind::Program => "PROGRAM",
            UnitKind::Module => "MODULE",
        }
    }
}

/// A program unit's first statement.
#[derive(Clone, Debug, PartialEq)]
struct Header {
    unit: UnitKind,
    /// The procedure kind (unused for modules).
    proc_kind: ProcKind,
    name: Name,
    args: Vec<Name>,
    /// Position of the unit keyword.
    span: Span,
    /// True for a main program without a PROGRAM statement.
    implicit: bool,
}

/// The control of a DO statement.
#[derive(Clone, Debug, PartialEq)]
enum DoControl {
    Counted {
        var: Name,
        start: Expr,
        end: Expr,
        step: Option<Expr>,
    },
    While(Expr),
    Forever,
}

/// Statement blocks skipped as a whole because the subset does not support
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SkippedBlock {
    Interface,
    TypeDefinition,
    BlockData,
    Where,
    Forall,
    Associate,
    SelectType,
}

impl SkippedBlock {
    /// The keyword reported for the block.
    fn keyword(self) -> &'static str {
        match self {
            SkippedBlock::Interface => "INTERFACE",
            SkippedBlock::TypeDefinition => "TYPE",
            SkippedBlock::BlockData => "BLOCK DATA",
            SkippedBlock::Where => "WHERE",
            SkippedBlock::Forall => "FORALL",
            SkippedBlock::Associate => "ASSOCIATE",
            SkippedBlock::SelectType => "SELECT TYPE",
        }
    }
    /// The compacted (blank-free) text that starts its END statement.
    fn end(self) -> &'static str {
        match self {
            SkippedBlock::Interface => "endinterface",
            SkippedBlock::TypeDefinition => "endtype",
            SkippedBlock::BlockData => "end",
            SkippedBlock::Where => "endwhere",
            SkippedBlock::Forall => "endforall",
            SkippedBlock::Associate => "endassociate",
            SkippedBlock::SelectType => "endselect",
        }
    }
    /// True when a compacted statement text opens a nested block whose END
    /// looks like this block's END.
    fn opens_nested(self, compact: &str) -> bool {
        match self {
            SkippedBlock::Interface => {
                compact.starts_with("interface") || compact.starts_with("abstractinterface")
            }
            SkippedBlock::TypeDefinition | SkippedBlock::BlockData => false,
            SkippedBlock::Where => block_form_of(compact, "where"),
            SkippedBlock::Forall => block_form_of(compact, "forall"),
            SkippedBlock::Associate => compact.starts_with("associate("),
            SkippedBlock::SelectType => {
                compact.starts_with("selecttype")
                    || compact.starts_with("selectcase")
                    || compact.starts_with("selectrank")
            }
        }
    }
    /// True for specification blocks (reported as declarations).
    fn is_specification(self) -> bool {
        matches!(
            self,
            SkippedBlock::Interface | SkippedBlock::TypeDefinition | SkippedBlock::BlockData
        )
    }
}

/// True when a compacted statement is `keyword(...)` with nothing after the
/// parenthesized group (the block form of WHERE / FORALL).
fn block_form_of(compact: &str, keyword: &str) -> bool {
    let Some(rest) = compact.strip_prefix(keyword) else {
        return false;
    };
    if !rest.starts_with('(') {
        return false;
    }
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in rest.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1 == rest.len();
                    }
                }
                _ => {}
            },
        }
    }
    false
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
    Header(Header),
    Contains,
    End {
        unit: Option<UnitKind>,
        name: Option<Name>,
    },
    /// The start of a block to skip up to its END.
    Skip(SkippedBlock),
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

/// A dummy logical condition used when a construct's header failed to parse,
/// so that its body is still parsed and matched with its END.
fn placeholder_condition(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Logical(false),
        span,
    }
}

/// When a statement failed to parse, guesses from its text whether it opens
/// or continues a construct, so that the construct's END still matches.
fn recover_construct(text: &str, span: Span) -> Option<LineKind> {
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
    let digits = rest.len() - rest.trim_start_matches(|ch: char| ch.is_ascii_digit()).len();
    let label = rest[..digits].parse::<u32>().ok();
    let control = rest[digits..].trim_start_matches(',');
    let looks_like_do = control.is_empty()
        || control.starts_with("while(")
        || control.find('=').is_some_and(|eq| {
            let name = &control[..eq];
            let mut depth = 0i32;
            !name.is_empty()
                && name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
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

/// Names declared as arrays, by scope (a contained procedure sees its
/// host's arrays), to tell statement functions from array assignments.
#[derive(Default)]
struct ArrayNames {
    counts: HashMap<String, u32>,
    log: Vec<String>,
    scopes: Vec<usize>,
}

impl ArrayNames {
    fn push_scope(&mut self) {
        self.scopes.push(self.log.len());
    }
    fn pop_scope(&mut self) {
        let mark = self.scopes.pop().unwrap_or(0);
        for name in self.log.drain(mark..) {
            if let Some(count) = self.counts.get_mut(&name) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&name);
                }
            }
        }
    }
    fn add(&mut self, name: &str) {
        *self.counts.entry(name.to_string()).or_insert(0) += 1;
        self.log.push(name.to_string());
    }
    fn contains(&self, name: &str) -> bool {
        self.counts.contains_key(name)
    }
    /// Records the arrays a declaration declares.
    fn add_from(&mut self, decl: &DeclKind) {
        match decl {
            DeclKind::Type {
                attrs, entities, ..
            } => {
                let all = attrs.iter().any(|a| matches!(a, Attr::Dimension(_)));
                for e in entities.iter().filter(|e| all || e.dims.is_some()) {
                    self.add(&e.name.text);
                }
            }
            DeclKind::Dimension(entities) => {
                for e in entities {
                    self.add(&e.name.text);
                }
            }
            _ => {}
        }
    }
}

/// If an assignment in the specification part has the shape of a statement
/// function definition (`f(a, b) = expr`, `f` not an array), the statement
/// function.
fn as_statement_function(kind: &StmtKind, arrays: &ArrayNames) -> Option<DeclKind> {
    let StmtKind::Assign { target, value } = kind else {
        return None;
    };
    let ExprKind::Apply { name, args } = &target.kind else {
        return None;
    };
    if arrays.contains(&name.text) {
        return None;
    }
    let dummies = args
        .iter()
        .map(|arg| match (&arg.keyword, &arg.value) {
            (
                None,
                ArgValue::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }),
            ) => Some(n.clone()),
            _ => None,
        })
        .collect::<Option<Vec<Name>>>()?;
    Some(DeclKind::StmtFunction {
        name: name.clone(),
        args: dummies,
        body: value.clone(),
    })
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
    /// Constructs currently open, innermost last.
    open: Vec<ConstructClass>,
    unit_depth: usize,
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
            open: Vec::new(),
            unit_depth: 0,
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
            if is_format_statement(&stmt.text) {
                continue;
            }
            let parsed = match lex_into(stmt, &mut self.tokens) {
                Ok(()) => {
                    compute_matching(&self.tokens, &mut self.matching);
                    let mut sp = StmtParser::new(stmt, &self.tokens, &self.matching);
                    let result = sp.parse_line();
                    self.diags.append(&mut sp.warnings);
                    result
                }
                Err(d) => Err(d),
            };
            let kind = match parsed {
                Ok(LineKind::Skip(block)) => self.skip_block(block, span),
                Ok(kind) => kind,
                Err(d) => {
                    self.diags.push(d);
                    recover_construct(&stmt.text, span).unwrap_or(LineKind::Error)
                }
            };
            return Line { label, span, kind };
        }
    }

    /// Skips the statements of an unsupported block up to its END, and
    /// returns the line that stands for the whole block.
    fn skip_block(&mut self, block: SkippedBlock, span: Span) -> LineKind {
        let mut depth = 1usize;
        while let Some(stmt) = self.stmts.get(self.next) {
            self.next += 1;
            let compact = compact_text(&stmt.text);
            if compact.starts_with(block.end()) {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            } else if block.opens_nested(&compact) {
                depth += 1;
            }
        }
        if depth > 0 {
            self.error(
                span,
                format!(
                    "{} block is not closed by its END statement",
                    block.keyword()
                ),
            );
        }
        if block == SkippedBlock::BlockData {
            self.error(span, "BLOCK DATA program units are not supported");
            return LineKind::Error;
        }
        if block.is_specification() {
            LineKind::Decl(DeclKind::Unsupported(block.keyword().to_string()))
        } else {
            LineKind::Exec(StmtKind::Unsupported(block.keyword().to_string()))
        }
    }

    /// All program units of the file.
    fn parse_units(&mut self) -> Vec<ProgramUnit> {
        let mut units = Vec::new();
        loop {
            let line = self.bump();
            match line.kind {
                LineKind::Eof => break,
                LineKind::Header(header) => {
                    units.push(match header.unit {
                        UnitKind::Module => ProgramUnit::Module(self.parse_module(header)),
                        _ => ProgramUnit::Procedure(self.parse_procedure(header)),
                    });
                }
                LineKind::Error => {}
                _ => {
                    // Statements without a PROGRAM statement: a main program.
                    let header = Header {
                        unit: UnitKind::Program,
                        proc_kind: ProcKind::Program,
                        name: Name {
                            text: "main".to_string(),
                            span: line.span,
                        },
                        args: Vec::new(),
                        span: line.span,
                        implicit: true,
                    };
                    self.unbump(line);
                    units.push(ProgramUnit::Procedure(self.parse_procedure(header)));
                }
            }
        }
        units
    }

    /// The specification part: declarations and statement functions, up to
    /// the first executable statement.
    fn parse_specification_part(&mut self, allow_statement_functions: bool) -> Vec<Decl> {
        let mut decls = Vec::new();
        loop {
            let line = self.bump();
            let kind = match line.kind {
                LineKind::Decl(kind) => kind,
                LineKind::Error => continue,
                LineKind::Exec(ref exec) if allow_statement_functions => {
                    match as_statement_function(exec, &self.arrays) {
                        Some(kind) => kind,
                        None => {
                            self.unbump(line);
                            break;
                        }
                    }
                }
                _ => {
                    self.unbump(line);
                    break;
                }
            };
            self.arrays.add_from(&kind);
            decls.push(Decl {
                kind,
                span: line.span,
            });
        }
        decls
    }

    /// A subroutine, function or main program, after its header.
    fn parse_procedure(&mut self, header: Header) -> Procedure {
        self.arrays.push_scope();
        self.unit_depth += 1;
        let outer_late = std::mem::take(&mut self.late_decls);
        let outer_open = std::mem::take(&mut self.open);

        let mut decls = self.parse_specification_part(true);
        let (body, _) = self.parse_block(None);
        decls.append(&mut self.late_decls);
        let contains = self.parse_contains_part();
        self.parse_unit_end(&header);

        self.open = outer_open;
        self.late_decls = outer_late;
        self.unit_depth -= 1;
        self.arrays.pop_scope();
        Procedure {
            kind: header.proc_kind,
            name: header.name,
            args: header.args,
            decls,
            body,
            contains,
            span: header.span,
        }
    }

    /// A MODULE, after its header.
    fn parse_module(&mut self, header: Header) -> ModuleUnit {
        self.arrays.push_scope();
        self.unit_depth += 1;
        let decls = self.parse_specification_part(false);
        while self.peek_kind().terminates() != Some(ConstructClass::Unit) {
            let line = self.bump();
            self.error(
                line.span,
                "executable statements are not allowed in a MODULE (missing CONTAINS?)",
            );
            // Parse and drop the statements, keeping constructs matched.
            self.unbump(line);
            self.parse_block(None);
        }
        let contains = self.parse_contains_part();
        self.parse_unit_end(&header);
        self.unit_depth -= 1;
        self.arrays.pop_scope();
        ModuleUnit {
            name: header.name,
            decls,
            contains,
            span: header.span,
        }
    }

    /// CONTAINS and the procedures after it, if present, up to the END of
    /// the host.
    fn parse_contains_part(&mut self) -> Vec<Procedure> {
        let mut procs = Vec::new();
        let line = self.bump();
        if !matches!(line.kind, LineKind::Contains) {
            self.unbump(line);
            return procs;
        }
        loop {
            let line = self.bump();
            match line.kind {
                LineKind::End { .. } | LineKind::Eof => {
                    self.unbump(line);
                    break;
                }
                LineKind::Header(h)
                    if matches!(h.unit, UnitKind::Subroutine | UnitKind::Function)
                        && self.unit_depth < MAX_UNIT_NESTING =>
                {
                    procs.push(self.parse_procedure(h));
                }
                LineKind::Header(h) => {
                    if self.unit_depth >= MAX_UNIT_NESTING {
                        self.error(h.span, "internal procedures are nested too deeply");
                    }
                    self.unbump(Line {
                        kind: LineKind::Header(h),
                        ..line
                    });
                    break;
                }
                LineKind::Error => {}
                LineKind::Contains => {
                    self.error(line.span, "second CONTAINS statement");
                }
                _ => {
                    self.error(
                        line.span,
                        "only SUBROUTINE and FUNCTION definitions may follow CONTAINS",
                    );
                    // Parse and drop the statements, keeping constructs matched.
                    self.unbump(line);
                    self.parse_block(None);
                }
            }
        }
        procs
    }

    /// The END of a program unit: checks the keyword and name.
    fn parse_unit_end(&mut self, header: &Header) {
        let line = self.bump();
        let what = format!("{} {}", header.unit.keyword(), header.name.text);
        match line.kind {
            LineKind::End { unit, name } => {
                if let Some(unit) = unit {
                    if unit != header.unit {
                        self.error(
                            line.span,
                            format!("END {} does not close {what}", unit.keyword()),
                        );
                    }
                }
                if let Some(name) = name {
                    if name.text != header.name.text && !header.implicit {
                        self.error(
                            name.span,
                            format!("END names '{}' but closes {what}", name.text),
                        );
                    }
                }
            }
            _ => {
                let span = if header.implicit { line.span } else { header.span };
                self.unbump(line);
                self.error(span, format!("{what} is not closed by an END statement"));
            }
        }
    }

    /// Executable statements up to a line that ends or continues a construct
    /// (left unread). With `until_label`, also stops after a statement with
    /// that label (or a nested DO loop ending on it) and returns `true`.
    fn parse_block(&mut self, until_label: Option<u32>) -> (Vec<Stmt>, bool) {
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
            LineKind::IfThen { .. } | LineKind::Do { .. } | LineKind::SelectCase { .. }
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
            _ => (make(StmtKind::Continue), None),
        }
    }

    /// Reports a construct name on an END / ELSE / CASE that does not match
    /// the construct's own.
    fn check_construct_name(
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
            DoControl::Counted {
                var,
                start,
                end,
                step,
            } => StmtKind::Do {
                name,
                var,
                start,
                end,
                step,
                body,
            },
            DoControl::While(cond) => StmtKind::DoWhile { name, cond, body },
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
                            self.error(
                                line.span,
                                "second CASE DEFAULT in a SELECT CASE construct",
                            );
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

/// True for a FORMAT statement (skipped: its edit descriptors are not
/// Fortran tokens, and PRINT / WRITE are ignored anyway).
fn is_format_statement(text: &str) -> bool {
    let compact = text.trim_start();
    compact
        .strip_prefix("format")
        .is_some_and(|rest| rest.trim_start().starts_with('('))
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

/// An expression under construction with the height of its tree.
struct Built {
    expr: Expr,
    height: u32,
}

/// Attribute and statement keywords the subset rejects as specification
/// statements, with the keyword reported.
const UNSUPPORTED_SPECIFICATIONS: [(&str, &str); 19] = [
    ("common", "COMMON"),
    ("equivalence", "EQUIVALENCE"),
    ("namelist", "NAMELIST"),
    ("allocatable", "ALLOCATABLE"),
    ("pointer", "POINTER"),
    ("target", "TARGET"),
    ("optional", "OPTIONAL"),
    ("public", "PUBLIC"),
    ("private", "PRIVATE"),
    ("sequence", "SEQUENCE"),
    ("include", "INCLUDE"),
    ("volatile", "VOLATILE"),
    ("value", "VALUE"),
    ("protected", "PROTECTED"),
    ("import", "IMPORT"),
    ("procedure", "PROCEDURE"),
    ("asynchronous", "ASYNCHRONOUS"),
    ("contiguous", "CONTIGUOUS"),
    ("enum", "ENUM"),
];

/// Executable statements the subset rejects, with the keyword reported
/// (longer spellings first where one is a prefix of another).
const UNSUPPORTED_EXECUTABLES: [(&str, &str); 16] = [
    ("read", "READ"),
    ("open", "OPEN"),
    ("close", "CLOSE"),
    ("allocate", "ALLOCATE"),
    ("deallocate", "DEALLOCATE"),
    ("entry", "ENTRY"),
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
        }
    }

    // ----- token access -----

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
            None => self
                .toks
                .last()
                .map_or(self.stmt.start_span(), |t| self.stmt.span_at(t.end as usize)),
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
            format!("expected {expected} in {}, found {}", self.what, self.found()),
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

    // ----- statements -----

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
        if let Some(n) = construct_name {
            return Err(Diagnostic::error(
                n.span,
                "a construct name must be followed by IF, DO or SELECT CASE",
            ));
        }
        if let Some(kind) = self.unit_statement()? {
            return Ok(kind);
        }
        if let Some(kind) = self.specification_statement()? {
            return Ok(kind);
        }
        self.action_statement().map(LineKind::Exec)
    }

    /// True when the statement has the shape `designator = ...`: a name,
    /// up to two parenthesized groups, `%` components, then `=` or `=>`.
    fn is_assignment(&self) -> bool {
        let mut i = self.pos;
        if self.kind_at(i) != Some(TokenKind::Name) {
            return false;
        }
        i += 1;
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

    fn assignment(&mut self) -> PResult<StmtKind> {
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
    fn construct_statement(&mut self, name: &Option<Name>) -> PResult<Option<LineKind>> {
        let kind = if self.at_kw("if") && self.kind_at(self.pos + 1) == Some(TokenKind::LParen)
        {
            self.pos += 1;
            self.what = "IF statement";
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
                LineKind::Exec(StmtKind::Unsupported("arithmetic IF".to_string()))
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
            self.do_statement(name.clone())?
        } else if self.text_at(self.pos) == "dowhile"
            && self.kind_at(self.pos + 1) == Some(TokenKind::LParen)
        {
            self.what = "DO WHILE statement";
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
            self.expect(TokenKind::LParen)?;
            let selector = self.expr()?;
            self.expect(TokenKind::RParen)?;
            self.expect_end()?;
            LineKind::SelectCase {
                name: name.clone(),
                selector,
            }
        } else if name.is_some() {
            if self.at_kw("selecttype") || self.at_kw("associate") || self.at_kw("where")
                || self.at_kw("forall")
            {
                // Named unsupported constructs are skipped like unnamed ones.
                return self.unsupported_construct();
            }
            return Ok(None);
        } else if self.eat_kw("elseif") {
            self.what = "ELSE IF statement";
            self.expect(TokenKind::LParen)?;
            let cond = self.expr()?;
            self.expect(TokenKind::RParen)?;
            if !self.eat_kw("then") {
                return Err(self.error_here("THEN"));
            }
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::ElseIf { cond, name }
        } else if self.at_kw("elsewhere") {
            return Ok(None);
        } else if self.eat_kw("else") {
            self.what = "ELSE statement";
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Else { name }
        } else if self.eat_kw("endif") {
            self.what = "END IF statement";
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndIf { name }
        } else if self.eat_kw("enddo") {
            self.what = "END DO statement";
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndDo { name }
        } else if self.eat_kw("endselect") {
            self.what = "END SELECT statement";
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::EndSelect { name }
        } else if self.at_kw("casedefault") {
            self.eat_kw("casedefault");
            self.what = "CASE DEFAULT statement";
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Case {
                selector: CaseSelector::Default,
                name,
            }
        } else if self.at_kw("case") && self.kind_at(self.pos + 1) == Some(TokenKind::LParen) {
            self.eat_kw("case");
            self.what = "CASE statement";
            let selector = CaseSelector::Items(self.case_items()?);
            let name = self.optional_name()?;
            self.expect_end()?;
            LineKind::Case { selector, name }
        } else {
            return self.unsupported_construct();
        };
        Ok(Some(kind))
    }

    /// WHERE, FORALL, ASSOCIATE, SELECT TYPE: skipped (block form) or
    /// reported (statement form).
    fn unsupported_construct(&mut self) -> PResult<Option<LineKind>> {
        for (keyword, block) in [
            ("where", SkippedBlock::Where),
            ("forall", SkippedBlock::Forall),
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
            return Ok(Some(if is_block || block == SkippedBlock::Associate
                || block == SkippedBlock::SelectType
            {
                LineKind::Skip(block)
            } else {
                LineKind::Exec(StmtKind::Unsupported(block.keyword().to_string()))
            }));
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
        } else if self.at_kw("concurrent") {
            return Ok(LineKind::Exec(StmtKind::Unsupported(
                "DO CONCURRENT".to_string(),
            )));
        } else {
            let var = self.name("the DO variable")?;
            self.expect(TokenKind::Assign)?;
            let start = self.expr()?;
            self.expect(TokenKind::Comma)?;
            let end = self.expr()?;
            let step = if self.eat(TokenKind::Comma) {
                Some(self.expr()?)
            } else {
                None
            };
            DoControl::Counted {
                var,
                start,
                end,
                step,
            }
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

    /// SUBROUTINE, FUNCTION (with prefixes), PROGRAM, MODULE, BLOCK DATA,
    /// CONTAINS and the END of units. Type declarations that turn out not to
    /// be function headers are parsed here too.
    fn unit_statement(&mut self) -> PResult<Option<LineKind>> {
        if self.eat_kw("contains") {
            self.what = "CONTAINS statement";
            self.expect_end()?;
            return Ok(Some(LineKind::Contains));
        }
        if let Some(end) = self.end_statement()? {
            return Ok(Some(end));
        }
        if self.at_kw("blockdata") {
            self.pos = self.toks.len();
            return Ok(Some(LineKind::Skip(SkippedBlock::BlockData)));
        }
        if self.at_kw("program") {
            let span = self.span_here();
            self.eat_kw("program");
            self.what = "PROGRAM statement";
            let name = self.name("the program name")?;
            self.expect_end()?;
            return Ok(Some(LineKind::Header(Header {
                unit: UnitKind::Program,
                proc_kind: ProcKind::Program,
                name,
                args: Vec::new(),
                span,
                implicit: false,
            })));
        }
        if self.at_kw("module") && !self.at_kw("moduleprocedure") {
            let span = self.span_here();
            self.eat_kw("module");
            self.what = "MODULE statement";
            if self.at_kw("subroutine") || self.at_kw("function") {
                // `module subroutine` (separate module procedure) prefix.
                return Err(Diagnostic::error(
                    span,
                    "separate module procedures (MODULE SUBROUTINE / FUNCTION) are not supported",
                ));
            }
            let name = self.name("the module name")?;
            self.expect_end()?;
            return Ok(Some(LineKind::Header(Header {
                unit: UnitKind::Module,
                proc_kind: ProcKind::Program,
                name,
                args: Vec::new(),
                span,
                implicit: false,
            })));
        }
        // Procedure prefixes and a type, then FUNCTION or SUBROUTINE.
        let start = self.pos;
        let mut prefixed = false;
        let mut prefix_type = None;
        loop {
            if ["recursive", "pure", "elemental", "impure", "non_recursive"]
                .iter()
                .any(|p| self.eat_kw(p))
            {
                prefixed = true;
            } else if prefix_type.is_none() && self.at_type_keyword() {
                self.what = "type declaration";
                prefix_type = Some(self.type_spec(true)?);
            } else {
                break;
            }
        }
        if self.at_kw("function") {
            let span = self.span_here();
            self.eat_kw("function");
            return self.procedure_header(UnitKind::Function, prefix_type, span).map(Some);
        }
        if self.at_kw("subroutine") {
            let span = self.span_here();
            self.eat_kw("subroutine");
            if let Some(ty) = prefix_type {
                return Err(Diagnostic::error(
                    ty.span,
                    "a SUBROUTINE cannot have a type",
                ));
            }
            return self.procedure_header(UnitKind::Subroutine, None, span).map(Some);
        }
        if prefixed {
            return Err(self.error_here("FUNCTION or SUBROUTINE after the procedure prefix"));
        }
        match prefix_type {
            Some(ty) => self.type_declaration(ty).map(|d| Some(LineKind::Decl(d))),
            None => {
                self.pos = start;
                Ok(None)
            }
        }
    }

    fn procedure_header(
        &mut self,
        unit: UnitKind,
        prefix_type: Option<TypeSpec>,
        span: Span,
    ) -> PResult<LineKind> {
        self.what = match unit {
            UnitKind::Function => "FUNCTION statement",
            _ => "SUBROUTINE statement",
        };
        let name = self.name("the procedure name")?;
        let mut args = Vec::new();
        if self.eat(TokenKind::LParen) {
            if !self.eat(TokenKind::RParen) {
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
            }
        } else if unit == UnitKind::Function {
            return Err(self.error_here("'(' after the function name"));
        }
        let mut result = None;
        loop {
            if unit == UnitKind::Function && result.is_none() && self.eat_kw("result") {
                self.expect(TokenKind::LParen)?;
                result = Some(self.name("the result variable name")?);
                self.expect(TokenKind::RParen)?;
            } else if self.eat_kw("bind") {
                self.skip_group()?;
            } else {
                break;
            }
        }
        self.expect_end()?;
        let proc_kind = match unit {
            UnitKind::Function => ProcKind::Function {
                prefix_type,
                result,
            },
            _ => ProcKind::Subroutine,
        };
        Ok(LineKind::Header(Header {
            unit,
            proc_kind,
            name,
            args,
            span,
            implicit: false,
        }))
    }

    /// Skips a parenthesized group (e.g. `bind(c, name='f')`).
    fn skip_group(&mut self) -> PResult<()> {
        if !self.at(TokenKind::LParen) {
            return Err(self.error_here("'('"));
        }
        let close = self.matching[self.pos];
        if close == u32::MAX {
            return Err(Diagnostic::error(
                self.span_here(),
                format!("unbalanced parentheses in {}", self.what),
            ));
        }
        self.pos = close as usize + 1;
        Ok(())
    }

    /// END, END SUBROUTINE / FUNCTION / PROGRAM / MODULE [name].
    /// Returns `None` (consuming nothing) for other statements.
    fn end_statement(&mut self) -> PResult<Option<LineKind>> {
        let unit = [
            ("endsubroutine", UnitKind::Subroutine),
            ("endfunction", UnitKind::Function),
            ("endprogram", UnitKind::Program),
            ("endmodule", UnitKind::Module),
        ]
        .iter()
        .find(|(kw, _)| self.eat_kw(kw))
        .map(|&(_, unit)| unit);
        self.what = "END statement";
        let name = match unit {
            Some(_) => self.optional_name()?,
            None if self.keyword_end("end") == Some(self.toks.len()) => {
                self.pos = self.toks.len();
                None
            }
            None => return Ok(None),
        };
        self.expect_end()?;
        Ok(Some(LineKind::End { unit, name }))
    }

    fn at_type_keyword(&self) -> bool {
        ["integer", "real", "doubleprecision", "doublecomplex", "complex", "logical", "character"]
            .iter()
            .any(|k| self.at_kw(k))
            || ["type", "class"].iter().any(|k| {
                self.keyword_end(k)
                    .is_some_and(|end| self.kind_at(end) == Some(TokenKind::LParen))
            })
    }

    /// A type specification. With `paren_kind` false (IMPLICIT), a
    /// parenthesized group is a kind selector only when another group
    /// follows it.
    fn type_spec(&mut self, paren_kind: bool) -> PResult<TypeSpec> {
        let span = self.span_here();
        let base = if self.eat_kw("integer") {
            BaseType::Integer
        } else if self.eat_kw("real") {
            BaseType::Real
        } else if self.eat_kw("doubleprecision") {
            return Ok(TypeSpec {
                base: BaseType::DoublePrecision,
                kind: None,
                len: None,
                span,
            });
        } else if self.eat_kw("doublecomplex") {
            return Ok(TypeSpec {
                base: BaseType::Complex,
                kind: None,
                len: None,
                span,
            });
        } else if self.eat_kw("complex") {
            BaseType::Complex
        } else if self.eat_kw("logical") {
            BaseType::Logical
        } else if self.eat_kw("character") {
            BaseType::Character
        } else if self.eat_kw("type") || self.eat_kw("class") {
            self.expect(TokenKind::LParen)?;
            let name = self.name("a derived type name")?;
            self.expect(TokenKind::RParen)?;
            return Ok(TypeSpec {
                base: BaseType::Derived(name),
                kind: None,
                len: None,
                span,
            });
        } else {
            return Err(self.error_here("a type"));
        };
        let mut spec = TypeSpec {
            base,
            kind: None,
            len: None,
            span,
        };
        let selector_group = self.at(TokenKind::LParen)
            && (paren_kind || {
                let close = self.matching[self.pos];
                close != u32::MAX && self.kind_at(close as usize + 1) == Some(TokenKind::LParen)
            });
        if spec.base == BaseType::Character {
            if self.eat(TokenKind::Star) {
                spec.len = Some(self.star_char_len()?);
            } else if selector_group {
                self.char_selector(&mut spec)?;
            }
        } else if self.eat(TokenKind::Star) {
            let value = self.int_literal_expr()?;
            spec.kind = Some(value);
        } else if selector_group {
            self.expect(TokenKind::LParen)?;
            if self.at_kw("kind") && self.kind_at(self.pos + 1) == Some(TokenKind::Assign) {
                self.pos += 2;
            }
            spec.kind = Some(self.expr()?);
            self.expect(TokenKind::RParen)?;
        }
        Ok(spec)
    }

    /// `(len=10)`, `(10)`, `(*)`, `(len=*, kind=1)`, `(10, 1)`.
    fn char_selector(&mut self, spec: &mut TypeSpec) -> PResult<()> {
        self.expect(TokenKind::LParen)?;
        let mut position = 0;
        loop {
            let keyword = if self.kind_at(self.pos + 1) == Some(TokenKind::Assign)
                && (self.at_kw("len") || self.at_kw("kind"))
            {
                let k = self.text_at(self.pos);
                self.pos += 2;
                Some(k)
            } else {
                None
            };
            let is_len = match keyword {
                Some(k) => k == "len",
                None => position == 0,
            };
            if is_len {
                spec.len = Some(self.char_len_value()?);
            } else {
                spec.kind = Some(self.expr()?);
            }
            position += 1;
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)
    }

    /// A length value inside a selector: `*`, or an expression.
    fn char_len_value(&mut self) -> PResult<CharLen> {
        if self.eat(TokenKind::Star) {
            Ok(CharLen::Assumed)
        } else if self.at(TokenKind::Colon) {
            Err(Diagnostic::error(
                self.span_here(),
                "deferred-length CHARACTER (len=:) is not supported",
            ))
        } else {
            Ok(CharLen::Expr(self.expr()?))
        }
    }

    /// The length after `*`: `10`, `(*)`, `(n+1)`.
    fn star_char_len(&mut self) -> PResult<CharLen> {
        if self.eat(TokenKind::LParen) {
            let len = self.char_len_value()?;
            self.expect(TokenKind::RParen)?;
            Ok(len)
        } else {
            Ok(CharLen::Expr(self.int_literal_expr()?))
        }
    }

    /// An integer literal as an expression (`*8`, `*10`).
    fn int_literal_expr(&mut self) -> PResult<Expr> {
        if !self.at(TokenKind::Int) {
            return Err(self.error_here("an integer length"));
        }
        Ok(self.primary()?.expr)
    }

    /// The attributes and entities after a type specification.
    fn type_declaration(&mut self, ty: TypeSpec) -> PResult<DeclKind> {
        self.what = "type declaration";
        let mut attrs = Vec::new();
        if self.eat(TokenKind::Comma) {
            loop {
                attrs.push(self.attribute()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::DoubleColon)?;
        } else {
            self.eat(TokenKind::DoubleColon);
        }
        let mut entities = Vec::new();
        loop {
            entities.push(self.entity(true)?);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect_end()?;
        Ok(DeclKind::Type {
            ty,
            attrs,
            entities,
        })
    }

    fn attribute(&mut self) -> PResult<Attr> {
        let name = self.name("an attribute")?;
        Ok(match name.text.as_str() {
            "dimension" => Attr::Dimension(self.array_spec()?),
            "intent" => Attr::Intent(self.intent_spec()?),
            "parameter" => Attr::Parameter,
            "save" => Attr::Save,
            "external" => Attr::External,
            "intrinsic" => Attr::Intrinsic,
            _ => {
                if self.at(TokenKind::LParen) {
                    self.skip_group()?;
                }
                Attr::Other(name)
            }
        })
    }

    /// `(in)`, `(out)`, `(inout)`, `(in out)`.
    fn intent_spec(&mut self) -> PResult<Intent> {
        self.expect(TokenKind::LParen)?;
        let intent = if self.eat_kw("inout") {
            Intent::InOut
        } else if self.eat_kw("in") {
            Intent::In
        } else if self.eat_kw("out") {
            Intent::Out
        } else {
            return Err(self.error_here("IN, OUT or INOUT"));
        };
        self.expect(TokenKind::RParen)?;
        Ok(intent)
    }

    /// `(d1, d2, ...)` array bounds.
    fn array_spec(&mut self) -> PResult<Vec<DimSpec>> {
        self.expect(TokenKind::LParen)?;
        let mut dims = Vec::new();
        loop {
            let lower = if self.at(TokenKind::Star) || self.at(TokenKind::Colon) {
                None
            } else {
                Some(self.expr()?)
            };
            let dim = if lower.is_none() && self.eat(TokenKind::Star) {
                DimSpec::AssumedSize { lower: None }
            } else if self.eat(TokenKind::Colon) {
                if self.eat(TokenKind::Star) {
                    DimSpec::AssumedSize { lower }
                } else if self.at(TokenKind::Comma) || self.at(TokenKind::RParen) {
                    DimSpec::AssumedShape { lower }
                } else {
                    DimSpec::Explicit {
                        lower,
                        upper: self.expr()?,
                    }
                }
            } else {
                match lower {
                    Some(upper) => DimSpec::Explicit { lower: None, upper },
                    None => return Err(self.error_here("an array bound")),
                }
            };
            dims.push(dim);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok(dims)
    }

    /// One declared entity: `name [(dims)] [*len] [= init]`.
    fn entity(&mut self, allow_init: bool) -> PResult<Entity> {
        let name = self.name("a variable name")?;
        let dims = if self.at(TokenKind::LParen) {
            Some(self.array_spec()?)
        } else {
            None
        };
        let char_len = if self.eat(TokenKind::Star) {
            Some(self.star_char_len()?)
        } else {
            None
        };
        let init = if allow_init && self.eat(TokenKind::Assign) {
            Some(self.expr()?)
        } else if allow_init && self.at(TokenKind::Arrow) {
            return Err(Diagnostic::error(
                self.span_here(),
                "pointer initialization ('=>') is not supported",
            ));
        } else if allow_init && self.eat(TokenKind::Slash) {
            // Old-style initialization: `real x /1.0/`.
            let value = self.data_value()?;
            if value.0.is_some() || !self.at(TokenKind::Slash) {
                return Err(Diagnostic::error(
                    self.span_here(),
                    "only a single value is supported in an old-style initialization '/value/'",
                ));
            }
            self.expect(TokenKind::Slash)?;
            Some(value.1)
        } else {
            None
        };
        Ok(Entity {
            name,
            dims,
            char_len,
            init,
        })
    }

    /// Specification statements other than type declarations.
    fn specification_statement(&mut self) -> PResult<Option<LineKind>> {
        let decl = if self.eat_kw("implicit") {
            self.what = "IMPLICIT statement";
            self.implicit()?
        } else if self.eat_kw("use") {
            self.what = "USE statement";
            self.use_statement()?
        } else if self.eat_kw("dimension") {
            self.what = "DIMENSION statement";
            self.eat(TokenKind::DoubleColon);
            let mut entities = Vec::new();
            loop {
                let entity = self.entity(false)?;
                if entity.dims.is_none() {
                    return Err(Diagnostic::error(
                        entity.name.span,
                        format!("'{}' needs array bounds in a DIMENSION statement", entity.name.text),
                    ));
                }
                entities.push(entity);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            DeclKind::Dimension(entities)
        } else if self.eat_kw("parameter") {
            self.what = "PARAMETER statement";
            self.expect(TokenKind::LParen)?;
            let mut pairs = Vec::new();
            loop {
                let name = self.name("a constant name")?;
                self.expect(TokenKind::Assign)?;
                pairs.push((name, self.expr()?));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RParen)?;
            DeclKind::Parameter(pairs)
        } else if self.eat_kw("save") {
            self.what = "SAVE statement";
            self.eat(TokenKind::DoubleColon);
            if self.at(TokenKind::Slash) || self.at(TokenKind::Concat) {
                self.pos = self.toks.len();
                DeclKind::Unsupported("SAVE of a COMMON block".to_string())
            } else if self.at_end() {
                DeclKind::Save(Vec::new())
            } else {
                DeclKind::Save(self.name_list("a variable name")?)
            }
        } else if self.eat_kw("external") {
            self.what = "EXTERNAL statement";
            self.eat(TokenKind::DoubleColon);
            DeclKind::External(self.name_list("a procedure name")?)
        } else if self.eat_kw("intrinsic") {
            self.what = "INTRINSIC statement";
            self.eat(TokenKind::DoubleColon);
            DeclKind::Intrinsic(self.name_list("an intrinsic procedure name")?)
        } else if self.at_kw("intent") {
            self.eat_kw("intent");
            self.what = "INTENT statement";
            let intent = self.intent_spec()?;
            self.eat(TokenKind::DoubleColon);
            DeclKind::Intent(intent, self.name_list("a dummy argument name")?)
        } else if self.eat_kw("data") {
            self.what = "DATA statement";
            DeclKind::Data(self.data_groups()?)
        } else if self.at_kw("interface") || self.at_kw("abstractinterface") {
            self.pos = self.toks.len();
            return Ok(Some(LineKind::Skip(SkippedBlock::Interface)));
        } else if self.at_kw("type") {
            // A TYPE definition (`type(x) :: v` declarations were parsed as
            // type declarations before).
            self.pos = self.toks.len();
            return Ok(Some(LineKind::Skip(SkippedBlock::TypeDefinition)));
        } else if let Some(&(_, keyword)) = UNSUPPORTED_SPECIFICATIONS
            .iter()
            .find(|(kw, _)| self.at_kw(kw))
        {
            self.pos = self.toks.len();
            DeclKind::Unsupported(keyword.to_string())
        } else {
            return Ok(None);
        };
        self.expect_end()?;
        Ok(Some(LineKind::Decl(decl)))
    }

    fn implicit(&mut self) -> PResult<DeclKind> {
        if self.eat_kw("none") {
            if self.at(TokenKind::LParen) {
                self.skip_group()?;
            }
            return Ok(DeclKind::ImplicitNone);
        }
        let mut rules = Vec::new();
        loop {
            let ty = self.type_spec(false)?;
            self.expect(TokenKind::LParen)?;
            let mut ranges = Vec::new();
            loop {
                let first = self.letter()?;
                let last = if self.eat(TokenKind::Minus) {
                    self.letter()?
                } else {
                    first
                };
                ranges.push((first, last));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RParen)?;
            rules.push((ty, ranges));
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        Ok(DeclKind::Implicit(rules))
    }

    fn letter(&mut self) -> PResult<char> {
        let text = self.text_at(self.pos);
        let mut chars = text.chars();
        match (self.peek_kind(), chars.next(), chars.next()) {
            (Some(TokenKind::Name), Some(c), None) if c.is_ascii_alphabetic() => {
                self.pos += 1;
                Ok(c)
            }
            _ => Err(self.error_here("a letter")),
        }
    }

    fn use_statement(&mut self) -> PResult<DeclKind> {
        if self.eat(TokenKind::Comma) {
            if !(self.eat_kw("intrinsic") || self.eat_kw("non_intrinsic")) {
                return Err(self.error_here("INTRINSIC or NON_INTRINSIC"));
            }
            self.expect(TokenKind::DoubleColon)?;
        } else {
            self.eat(TokenKind::DoubleColon);
        }
        let module = self.name("the module name")?;
        let mut only = None;
        if self.eat(TokenKind::Comma) {
            if !self.eat_kw("only") {
                return Err(Diagnostic::error(
                    self.span_here(),
                    "USE with a rename list is not supported (use ONLY:)",
                ));
            }
            self.expect(TokenKind::Colon)?;
            let mut names = Vec::new();
            while !self.at_end() {
                let name = self.name("a name in the ONLY list")?;
                if self.at(TokenKind::Arrow) {
                    return Err(Diagnostic::error(
                        self.span_here(),
                        "renaming in a USE statement is not supported",
                    ));
                }
                if self.at(TokenKind::LParen) {
                    return Err(Diagnostic::error(
                        name.span,
                        "operators and assignments in an ONLY list are not supported",
                    ));
                }
                names.push(name);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            only = Some(names);
        }
        Ok(DeclKind::Use { module, only })
    }

    /// The `objects /values/` groups of a DATA statement.
    fn data_groups(&mut self) -> PResult<Vec<DataGroup>> {
        let mut groups = Vec::new();
        loop {
            let mut objects = Vec::new();
            loop {
                objects.push(self.data_object()?.expr);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::Slash)?;
            let mut values = Vec::new();
            loop {
                values.push(self.data_value()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::Slash)?;
            groups.push(DataGroup { objects, values });
            self.eat(TokenKind::Comma);
            if self.at_end() {
                break;
            }
        }
        Ok(groups)
    }

    /// A DATA object: a variable, element, substring, or implied DO.
    fn data_object(&mut self) -> PResult<Built> {
        if self.at(TokenKind::LParen) {
            if let Some(control) = self.implied_do_control() {
                return self.implied_do(control, Self::data_object);
            }
        }
        if !self.at(TokenKind::Name) {
            return Err(self.error_here("a variable or an implied DO loop"));
        }
        self.name_primary()
    }

    /// A DATA value: `[repeat *] [sign] constant`.
    fn data_value(&mut self) -> PResult<(Option<Expr>, Expr)> {
        let repeat = if matches!(self.peek_kind(), Some(TokenKind::Int | TokenKind::Name))
            && self.kind_at(self.pos + 1) == Some(TokenKind::Star)
        {
            let r = self.primary()?.expr;
            self.pos += 1;
            Some(r)
        } else {
            None
        };
        let value = if self.at(TokenKind::Minus) || self.at(TokenKind::Plus) {
            let span = self.span_here();
            let op = if self.eat(TokenKind::Minus) {
                UnOp::Neg
            } else {
                self.pos += 1;
                UnOp::Plus
            };
            let operand = self.primary()?;
            Expr {
                kind: ExprKind::Unary(op, Box::new(operand.expr)),
                span,
            }
        } else {
            self.primary()?.expr
        };
        Ok((repeat, value))
    }

    /// Simple executable statements (including the one of a logical IF).
    fn action_statement(&mut self) -> PResult<StmtKind> {
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
        } else if self.at_kw("print") || self.at_kw("write") {
            let keyword = if self.at_kw("print") { "PRINT" } else { "WRITE" };
            self.pos = self.toks.len();
            self.warnings.push(Diagnostic::warning(
                keyword_span,
                "PRINT/WRITE statement ignored",
            ));
            StmtKind::Output(keyword.to_string())
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

    // ----- expressions -----

    /// A whole expression.
    fn expr(&mut self) -> PResult<Expr> {
        Ok(self.expr_built()?.expr)
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

    fn expr_built(&mut self) -> PResult<Built> {
        self.enter()?;
        let mut lhs = self.or_level()?;
        loop {
            let op = match self.peek_kind() {
                Some(TokenKind::Eqv) => BinOp::Eqv,
                Some(TokenKind::Neqv) => BinOp::Neqv,
                _ => break,
            };
            self.pos += 1;
            let rhs = self.or_level()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
        self.leave();
        Ok(lhs)
    }

    fn or_level(&mut self) -> PResult<Built> {
        let mut lhs = self.and_level()?;
        while self.eat(TokenKind::Or) {
            let rhs = self.and_level()?;
            lhs = self.binary(BinOp::Or, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn and_level(&mut self) -> PResult<Built> {
        let mut lhs = self.not_level()?;
        while self.eat(TokenKind::And) {
            let rhs = self.not_level()?;
            lhs = self.binary(BinOp::And, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn not_level(&mut self) -> PResult<Built> {
        if self.at(TokenKind::Not) {
            let span = self.span_here();
            self.pos += 1;
            self.enter()?;
            let operand = self.not_level()?;
            self.leave();
            return self.unary(UnOp::Not, span, operand);
        }
        self.relational_level()
    }

    fn relational_level(&mut self) -> PResult<Built> {
        let lhs = self.concat_level()?;
        let op = match self.peek_kind() {
            Some(TokenKind::Eq) => BinOp::Eq,
            Some(TokenKind::Ne) => BinOp::Ne,
            Some(TokenKind::Lt) => BinOp::Lt,
            Some(TokenKind::Le) => BinOp::Le,
            Some(TokenKind::Gt) => BinOp::Gt,
            Some(TokenKind::Ge) => BinOp::Ge,
            _ => return Ok(lhs),
        };
        self.pos += 1;
        let rhs = self.concat_level()?;
        self.binary(op, lhs, rhs)
    }

    fn concat_level(&mut self) -> PResult<Built> {
        let mut lhs = self.additive_level()?;
        while self.eat(TokenKind::Concat) {
            let rhs = self.additive_level()?;
            lhs = self.binary(BinOp::Concat, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `[sign] term { (+|-) term }`: a leading sign applies to the first
    /// term (`-a*b` is `-(a*b)`, `-a+b` is `(-a)+b`).
    fn additive_level(&mut self) -> PResult<Built> {
        let mut lhs = self.signed(Self::term_level)?;
        loop {
            let op = match self.peek_kind() {
                Some(TokenKind::Plus) => BinOp::Add,
                Some(TokenKind::Minus) => BinOp::Sub,
                _ => break,
            };
            self.pos += 1;
            // A sign right after the operator (`a - -b`) is a gfortran
            // extension; it applies to the following term.
            let rhs = self.signed(Self::term_level)?;
            lhs = self.binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// An operand with optional leading signs, each applying to `operand`.
    fn signed(&mut self, operand: fn(&mut Self) -> PResult<Built>) -> PResult<Built> {
        let op = match self.peek_kind() {
            Some(TokenKind::Minus) => UnOp::Neg,
            Some(TokenKind::Plus) => UnOp::Plus,
            _ => return operand(self),
        };
        let span = self.span_here();
        self.pos += 1;
        self.enter()?;
        let inner = self.signed(operand)?;
        self.leave();
        self.unary(op, span, inner)
    }

    fn term_level(&mut self) -> PResult<Built> {
        let mut lhs = self.factor()?;
        loop {
            let op = match self.peek_kind() {
                Some(TokenKind::Star) => BinOp::Mul,
                Some(TokenKind::Slash) => BinOp::Div,
                _ => break,
            };
            self.pos += 1;
            // `a * -b` (extension): the sign applies to the next factor.
            let rhs = self.signed(Self::factor)?;
            lhs = self.binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `primary [** factor]`, right-associative; `2**-1` allowed.
    fn factor(&mut self) -> PResult<Built> {
        let base = self.primary()?;
        if !self.eat(TokenKind::Pow) {
            return Ok(base);
        }
        self.enter()?;
        let exponent = self.signed(Self::factor)?;
        self.leave();
        self.binary(BinOp::Pow, base, exponent)
    }

    fn primary(&mut self) -> PResult<Built> {
        let Some(tok) = self.toks.get(self.pos).copied() else {
            return Err(self.error_here("an expression"));
        };
        let text = tok.text(&self.stmt.text);
        match tok.kind {
            TokenKind::Int => {
                self.pos += 1;
                let (digits, kind) = self.split_kind(text, tok);
                let value = digits.parse::<i64>().map_err(|_| {
                    Diagnostic::error(tok.span, format!("integer literal '{text}' is out of range"))
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
                self.node(
                    ExprKind::Logical(tok.kind == TokenKind::True),
                    tok.span,
                    1,
                )
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

    /// A name, `name(args)`, or `name(args)(substring)`.
    fn name_primary(&mut self) -> PResult<Built> {
        let name = self.name("a name")?;
        let span = name.span;
        let mut built = if self.at(TokenKind::LParen) {
            self.enter()?;
            let (args, height) = self.arg_list(false)?;
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
                "derived-type component access ('%') is not supported",
            ));
        }
        Ok(built)
    }

    /// A variable, element, section or substring (assignment targets and
    /// DATA objects).
    fn designator(&mut self) -> PResult<Expr> {
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
    fn arg_list(&mut self, is_call: bool) -> PResult<(Vec<Arg>, u32)> {
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

    /// `(/ item, ... /)` or `[ item, ... ]`.
    fn array_constructor(&mut self, close: TokenKind) -> PResult<Built> {
        let span = self.span_here();
        self.pos += 1;
        self.enter()?;
        let mut items = Vec::new();
        let mut height = 0;
        if !self.at(close) {
            loop {
                let item = self.constructor_item()?;
                height = height.max(item.height);
                items.push(item.expr);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(close)?;
        self.leave();
        self.node(ExprKind::ArrayConstructor(items), span, height + 1)
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
    fn implied_do_control(&self) -> Option<usize> {
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
    fn implied_do(
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
