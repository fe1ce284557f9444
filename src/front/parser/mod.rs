//! The parser: logical statements into the syntax tree of [`super::ast`].
//!
//! It owns the grammar of the subset. Parsing happens at two levels:
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
//! Nothing here panics on malformed input: nesting depth and expression
//! height are bounded, and every failure is a [`Diagnostic`].

use super::ast::*;
use super::diag::{Diagnostic, SourceMap};
use super::lexer::{lex_into, string_value, Token, TokenKind};
use super::source::{logical_statements, LogicalStmt, SourceForm};
use std::collections::HashMap;

/// Deepest allowed nesting of parentheses and unary/power operator chains
/// while parsing one expression.
const MAX_EXPR_NESTING: u32 = 64;
/// Highest allowed expression tree (keeps later recursive passes, and the
/// tree's destructor, within the stack).
const MAX_EXPR_HEIGHT: u32 = 2000;
/// Deepest allowed nesting of IF / DO / SELECT CASE constructs.
const MAX_CONSTRUCT_NESTING: usize = 64;
/// Deepest allowed nesting of internal procedures.
const MAX_UNIT_NESTING: usize = 8;

/// Operator precedences, loosest first.
const PREC_EQV: u8 = 1;
const PREC_OR: u8 = 2;
const PREC_AND: u8 = 3;
const PREC_RELATIONAL: u8 = 5;
const PREC_CONCAT: u8 = 6;
const PREC_ADD: u8 = 7;
const PREC_MUL: u8 = 8;
const PREC_POW: u8 = 9;

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

/// The control of a counted DO loop: `var = start, end [, step]`.
#[derive(Clone, Debug, PartialEq)]
struct CountedControl {
    var: Name,
    start: Expr,
    end: Expr,
    step: Option<Expr>,
}

/// The control of a DO statement.
#[derive(Clone, Debug, PartialEq)]
enum DoControl {
    Counted(Box<CountedControl>),
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

/// When a statement failed to lex, guesses from its text whether it opens
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
                Ok(kind) => kind,
                Err(d) => {
                    self.diags.push(d);
                    recovery.unwrap_or(LineKind::Error)
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
                let span = if header.implicit {
                    line.span
                } else {
                    header.span
                };
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
        } else if name.is_some() {
            if self.at_kw("selecttype")
                || self.at_kw("associate")
                || self.at_kw("where")
                || self.at_kw("forall")
            {
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
        } else if self.at_kw("elsewhere") {
            return Ok(None);
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
            return self
                .procedure_header(UnitKind::Function, prefix_type, span)
                .map(Some);
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
            return self
                .procedure_header(UnitKind::Subroutine, None, span)
                .map(Some);
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
        let placeholder_kind = match unit {
            UnitKind::Function => ProcKind::Function {
                prefix_type: prefix_type.clone(),
                result: None,
            },
            _ => ProcKind::Subroutine,
        };
        self.recovery = Some(LineKind::Header(Header {
            unit,
            proc_kind: placeholder_kind,
            name: name.clone(),
            args: Vec::new(),
            span,
            implicit: false,
        }));
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
            Some(_) => {
                self.recovery = Some(LineKind::End { unit, name: None });
                self.optional_name()?
            }
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
        [
            "integer",
            "real",
            "doubleprecision",
            "doublecomplex",
            "complex",
            "logical",
            "character",
        ]
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
                        format!(
                            "'{}' needs array bounds in a DIMENSION statement",
                            entity.name.text
                        ),
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
            let keyword = if self.at_kw("print") {
                "PRINT"
            } else {
                "WRITE"
            };
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
        let e = self.binary_expr(PREC_EQV)?;
        self.leave();
        Ok(e)
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
        while let Some((op, prec)) = self.binary_operator() {
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
            _ => return self.primary(),
        };
        let span = self.span_here();
        self.pos += 1;
        self.enter()?;
        let operand = self.binary_expr(operand_min)?;
        self.leave();
        self.unary(op, span, operand)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::diag::Severity;

    /// Parses `text` in the given form; returns the file and diagnostics.
    fn parse(text: &str, form: SourceForm) -> (SourceFile, Vec<Diagnostic>) {
        let mut map = SourceMap::new();
        let file = map.add("test", text);
        parse_file(&map, file, form)
    }

    /// Parses free-form text that must produce no diagnostics at all.
    fn parse_ok(text: &str) -> SourceFile {
        let (file, diags) = parse(text, SourceForm::Free);
        assert!(diags.is_empty(), "unexpected diagnostics: {diags:#?}");
        file
    }

    fn errors(text: &str, form: SourceForm) -> Vec<Diagnostic> {
        parse(text, form)
            .1
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect()
    }

    fn procedure(unit: &ProgramUnit) -> &Procedure {
        match unit {
            ProgramUnit::Procedure(p) => p,
            ProgramUnit::Module(m) => panic!("expected a procedure, got module {}", m.name.text),
        }
    }

    /// The body of the only procedure of a free-form subroutine.
    fn body_of(text: &str) -> Vec<Stmt> {
        let file = parse_ok(text);
        procedure(&file.units[0]).body.clone()
    }

    /// Wraps statements in a subroutine and returns its body.
    fn stmts(lines: &str) -> Vec<Stmt> {
        body_of(&format!("subroutine s\n{lines}\nend subroutine s\n"))
    }

    fn decls(lines: &str) -> Vec<DeclKind> {
        let file = parse_ok(&format!("subroutine s\n{lines}\nend subroutine s\n"));
        procedure(&file.units[0])
            .decls
            .iter()
            .map(|d| d.kind.clone())
            .collect()
    }

    /// A compact prefix rendering of an expression.
    fn sx(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int { value, kind } => match kind {
                None => value.to_string(),
                Some(k) => format!("{value}_{}", kind_text(k)),
            },
            ExprKind::Real { text, double, kind } => format!(
                "{text}{}{}",
                if *double { "D" } else { "" },
                kind.as_ref()
                    .map_or(String::new(), |k| format!("_{}", kind_text(k)))
            ),
            ExprKind::Logical(b) => format!(".{b}."),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Name(n) => n.text.clone(),
            ExprKind::Apply { name, args } => format!(
                "{}[{}]",
                name.text,
                args.iter().map(sx_arg).collect::<Vec<_>>().join(" ")
            ),
            ExprKind::Substring { base, start, end } => format!(
                "(substr {} {} {})",
                sx(base),
                start.as_ref().map_or("_".to_string(), |e| sx(e)),
                end.as_ref().map_or("_".to_string(), |e| sx(e))
            ),
            ExprKind::Unary(op, a) => {
                let op = match op {
                    UnOp::Neg => "neg",
                    UnOp::Plus => "pos",
                    UnOp::Not => "not",
                };
                format!("({op} {})", sx(a))
            }
            ExprKind::Binary(op, a, b) => format!("({} {} {})", bin_text(*op), sx(a), sx(b)),
            ExprKind::Paren(a) => format!("(paren {})", sx(a)),
            ExprKind::ArrayConstructor(items) => {
                format!("{{{}}}", items.iter().map(sx).collect::<Vec<_>>().join(" "))
            }
            ExprKind::ImpliedDo {
                items,
                var,
                start,
                end,
                step,
            } => format!(
                "(do {} {}={} {}{})",
                items.iter().map(sx).collect::<Vec<_>>().join(" "),
                var.text,
                sx(start),
                sx(end),
                step.as_ref()
                    .map_or(String::new(), |s| format!(" {}", sx(s)))
            ),
        }
    }

    fn kind_text(k: &KindParam) -> String {
        match k {
            KindParam::Int(i) => i.to_string(),
            KindParam::Name(n) => n.text.clone(),
        }
    }

    fn sx_arg(a: &Arg) -> String {
        let value = match &a.value {
            ArgValue::Expr(e) => sx(e),
            ArgValue::Range { lo, hi, stride } => {
                let part = |e: &Option<Expr>| e.as_ref().map_or(String::new(), sx);
                match stride {
                    Some(s) => format!("{}:{}:{}", part(lo), part(hi), sx(s)),
                    None => format!("{}:{}", part(lo), part(hi)),
                }
            }
        };
        match &a.keyword {
            Some(k) => format!("{}={value}", k.text),
            None => value,
        }
    }

    fn bin_text(op: BinOp) -> &'static str {
        match op {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "**",
            BinOp::Concat => "//",
            BinOp::Eq => "==",
            BinOp::Ne => "/=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Eqv => "eqv",
            BinOp::Neqv => "neqv",
        }
    }

    /// The value expression of `x = <text>`.
    fn expr_of(text: &str) -> String {
        let body = stmts(&format!("x = {text}"));
        match &body[0].kind {
            StmtKind::Assign { value, .. } => sx(value),
            other => panic!("not an assignment: {other:?}"),
        }
    }

    fn assign_parts(stmt: &Stmt) -> (String, String) {
        match &stmt.kind {
            StmtKind::Assign { target, value } => (sx(target), sx(value)),
            other => panic!("not an assignment: {other:?}"),
        }
    }

    fn pos(span: Span) -> (u32, u32) {
        (span.line, span.col)
    }

    const BRATU: &str = include_str!("testdata/bratu.f");

    #[test]
    fn bratu_fixed_form() {
        let (file, diags) = parse(BRATU, SourceForm::Fixed);
        assert!(diags.is_empty(), "{diags:#?}");
        assert_eq!(file.units.len(), 1);
        let p = procedure(&file.units[0]);
        assert_eq!(p.kind, ProcKind::Subroutine);
        assert_eq!(p.name.text, "bratu");
        assert_eq!(pos(p.span), (1, 7));
        let args: Vec<&str> = p.args.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(args, ["dim", "parmax", "x", "prm", "f"]);
        assert_eq!(p.decls.len(), 5);
        match &p.decls[1].kind {
            DeclKind::Type { ty, entities, .. } => {
                assert_eq!(ty.base, BaseType::DoublePrecision);
                assert_eq!(entities.len(), 2);
                assert_eq!(entities[0].name.text, "x");
                assert_eq!(
                    entities[0].dims,
                    Some(vec![DimSpec::Explicit {
                        lower: None,
                        upper: Expr {
                            kind: ExprKind::Name(Name {
                                text: "dim".into(),
                                span: Span {
                                    file: 0,
                                    line: 4,
                                    col: 26
                                }
                            }),
                            span: Span {
                                file: 0,
                                line: 4,
                                col: 26
                            }
                        }
                    }])
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.body.len(), 7);
        assert_eq!(pos(p.body[0].span), (11, 7));
        assert_eq!(
            assign_parts(&p.body[0]),
            ("h".into(), "(/ 2.0 (paren (+ dim 1)))".into())
        );
        assert_eq!(
            assign_parts(&p.body[1]).1,
            "(+ (neg (* 2 x[1])) (* (/ (* (* h h) prm[1]) 12.0) (paren (+ 1 (* 10 exp[(/ x[1] (paren (+ 1.0 (* prm[2] x[1]))))])))))"
        );
        match &p.body[3].kind {
            StmtKind::Do {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                assert_eq!(var.text, "i");
                assert_eq!(sx(start), "2");
                assert_eq!(sx(end), "(- dim 1)");
                assert!(step.is_none());
                assert_eq!(body.len(), 4);
                assert_eq!(
                    assign_parts(&body[1]).1,
                    "(+ (- f[i] (* 2 x[i])) (* (/ (* (* h h) prm[1]) 1.2) exp[(/ x[i] (paren (+ 1.0 (* prm[2] x[i]))))]))"
                );
                assert_eq!(body[3].kind, StmtKind::Continue);
                assert_eq!(body[3].label, Some(1));
                assert_eq!(pos(body[3].span), (19, 7));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(pos(p.body[3].span), (15, 7));
        // The continued statement spans two lines.
        let (target, value) = assign_parts(&p.body[4]);
        assert_eq!(target, "f[(- dim 1)]");
        assert_eq!(
            value,
            "(+ (+ f[(- dim 1)] x[dim]) (* (/ (* (* h h) prm[1]) 12.0) exp[(/ x[dim] (paren (+ 1.0 (* prm[2] x[dim]))))]))"
        );
        match &p.body[4].kind {
            StmtKind::Assign { value, .. } => {
                // `prm(2)` on the continuation line is at line 22, column 18.
                let ExprKind::Binary(_, _, rhs) = &value.kind else {
                    panic!()
                };
                let ExprKind::Binary(_, _, call) = &rhs.kind else {
                    panic!()
                };
                let ExprKind::Apply { args, .. } = &call.kind else {
                    panic!()
                };
                let ArgValue::Expr(quot) = &args[0].value else {
                    panic!()
                };
                let ExprKind::Binary(_, _, paren) = &quot.kind else {
                    panic!()
                };
                let ExprKind::Paren(sum) = &paren.kind else {
                    panic!()
                };
                let ExprKind::Binary(_, _, product) = &sum.kind else {
                    panic!()
                };
                assert_eq!(pos(product.span), (22, 18));
            }
            _ => unreachable!(),
        }
        assert_eq!(pos(p.body[6].span), (24, 7));
    }

    #[test]
    fn operator_precedence() {
        for (text, expected) in [
            ("-a**2", "(neg (** a 2))"),
            ("2**-1", "(** 2 (neg 1))"),
            ("2.0**-1*4", "(* (** 2.0 (neg 1)) 4)"),
            ("a**b**c", "(** a (** b c))"),
            ("a*b/c", "(/ (* a b) c)"),
            ("-a*b", "(neg (* a b))"),
            ("-a+b", "(+ (neg a) b)"),
            ("a*-b+c", "(+ (* a (neg b)) c)"),
            ("8/-2*2", "(* (/ 8 (neg 2)) 2)"),
            ("a - -b*c", "(- a (neg (* b c)))"),
            ("a-b-c", "(- (- a b) c)"),
            ("a//b//c", "(// (// a b) c)"),
            ("a+b .lt. c*d", "(< (+ a b) (* c d))"),
            ("a == -1", "(== a (neg 1))"),
            (
                ".not. a .and. b .or. c .eqv. d",
                "(eqv (or (and (not a) b) c) d)",
            ),
            ("a .neqv. b .and. .not. c", "(neqv a (and b (not c)))"),
            ("1.eq.2", "(== 1 2)"),
            ("a.and.b", "(and a b)"),
            ("x.gt.1.e5", "(> x 1.e5)"),
            ("a /= b", "(/= a b)"),
            ("(a+b)*c", "(* (paren (+ a b)) c)"),
        ] {
            assert_eq!(expr_of(text), expected, "{text}");
        }
    }

    #[test]
    fn literals() {
        for (text, expected) in [
            ("1", "1"),
            ("1.0", "1.0"),
            (".5", ".5"),
            ("1.", "1."),
            ("1.e5", "1.e5"),
            ("1.0d0", "1.0e0D"),
            ("1.d-3", "1.e-3D"),
            ("1.0_dp", "1.0_dp"),
            ("1_8", "1_8"),
            ("2.5e3_8", "2.5e3_8"),
            (".true.", ".true."),
            (".false._1", ".false."),
            ("'It''s'", "\"It's\""),
            ("\"a\"\"b\"", "\"a\\\"b\""),
        ] {
            assert_eq!(expr_of(text), expected, "{text}");
        }
        let body = stmts("x = 1.0d0");
        let StmtKind::Assign { value, .. } = &body[0].kind else {
            panic!()
        };
        let ExprKind::Real { text, double, .. } = &value.kind else {
            panic!()
        };
        assert!(*double);
        assert_eq!(text.parse::<f64>().unwrap(), 1.0);
    }

    #[test]
    fn designators_sections_and_keywords() {
        for (text, expected) in [
            ("a(1:n, j)", "a[1:n j]"),
            ("a(:, j)", "a[: j]"),
            ("a(2:)", "a[2:]"),
            ("a(::2)", "a[::2]"),
            ("a(1:n:2)", "a[1:n:2]"),
            ("a(1::2)", "a[1::2]"),
            ("c(i)(1:2)", "(substr c[i] 1 2)"),
            ("c(i)(:k)", "(substr c[i] _ k)"),
            ("int(x, kind=8)", "int[x kind=8]"),
            ("f()", "f[]"),
            ("(/ 1, 2, 3 /)", "{1 2 3}"),
            ("[ 1.0, x ]", "{1.0 x}"),
            ("(/ (i, i = 1, n) /)", "{(do i i=1 n)}"),
            (
                "[((i*j, i=1,3), j=1,3, 2)]",
                "{(do (do (* i j) i=1 3) j=1 3 2)}",
            ),
            ("[ (a(i), b(i), i = 1, n) ]", "{(do a[i] b[i] i=1 n)}"),
            ("(/ /)", "{}"),
        ] {
            assert_eq!(expr_of(text), expected, "{text}");
        }
        let body = stmts("c(1:2) = 'ab'\nc(i)(2:3) = 'xy'\na(i, j) = 0");
        assert_eq!(assign_parts(&body[0]).0, "c[1:2]");
        assert_eq!(assign_parts(&body[1]).0, "(substr c[i] 2 3)");
        assert_eq!(assign_parts(&body[2]).0, "a[i j]");
    }

    #[test]
    fn program_units_free_form() {
        let file = parse_ok(
            "module consts\n\
               implicit none\n\
               integer, parameter :: dp = kind(1.0d0)\n\
             contains\n\
               pure real(dp) function sq(x)\n\
                 real(dp), intent(in) :: x\n\
                 sq = x*x\n\
               end function sq\n\
             end module consts\n\
             \n\
             recursive integer function fact(n) result(r)\n\
               integer :: n\n\
               if (n <= 1) then\n\
                 r = 1\n\
               else\n\
                 r = n * fact(n - 1)\n\
               end if\n\
             end function\n\
             double precision function g(x)\n\
               double precision x\n\
               g = h(x)\n\
             contains\n\
               double precision function h(y)\n\
                 double precision y\n\
                 h = 2*y\n\
               end function h\n\
             end\n\
             subroutine noargs\n\
             end subroutine noargs\n\
             program main\n\
               call noargs\n\
             end program main\n",
        );
        assert_eq!(file.units.len(), 5);
        let ProgramUnit::Module(m) = &file.units[0] else {
            panic!()
        };
        assert_eq!(m.name.text, "consts");
        assert_eq!(m.decls.len(), 2);
        assert_eq!(m.contains.len(), 1);
        match &m.contains[0].kind {
            ProcKind::Function {
                prefix_type: Some(ty),
                result: None,
            } => {
                assert_eq!(ty.base, BaseType::Real);
                assert_eq!(ty.kind.as_ref().map(sx), Some("dp".into()));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(pos(m.contains[0].span), (5, 15));
        let fact = procedure(&file.units[1]);
        match &fact.kind {
            ProcKind::Function {
                prefix_type: Some(ty),
                result: Some(r),
            } => {
                assert_eq!(ty.base, BaseType::Integer);
                assert_eq!(r.text, "r");
            }
            other => panic!("{other:?}"),
        }
        let g = procedure(&file.units[2]);
        assert_eq!(g.contains.len(), 1);
        assert_eq!(g.contains[0].name.text, "h");
        let noargs = procedure(&file.units[3]);
        assert_eq!(noargs.kind, ProcKind::Subroutine);
        assert!(noargs.args.is_empty() && noargs.body.is_empty());
        let main = procedure(&file.units[4]);
        assert_eq!(main.kind, ProcKind::Program);
        assert!(
            matches!(&main.body[0].kind, StmtKind::Call { name, args } if name.text == "noargs" && args.is_empty())
        );
    }

    #[test]
    fn implicit_main_program() {
        let file = parse_ok(
            "x = 1\nprint *, x\nend\n"
                .replace("print *, x\n", "")
                .as_str(),
        );
        let p = procedure(&file.units[0]);
        assert_eq!(p.kind, ProcKind::Program);
        assert_eq!(p.body.len(), 1);
    }

    #[test]
    fn type_declarations() {
        let d = decls(
            "integer n, m\n\
             real*8 a\n\
             real(8) b\n\
             real(kind=8) :: c\n\
             real(dp) d\n\
             integer*8 i8\n\
             integer(8) :: j8\n\
             logical flag\n\
             character(len=10) s1\n\
             character*10 s2\n\
             character(*) s3\n\
             character*(*) s4\n\
             character c5*5, c6*(*)\n\
             character(len=*, kind=1) s7\n\
             complex z\n\
             double complex dz\n\
             type(point) :: p\n\
             doubleprecision e\n",
        );
        let tys: Vec<(BaseType, Option<String>, Option<String>)> = d
            .iter()
            .map(|k| match k {
                DeclKind::Type { ty, .. } => (
                    ty.base.clone(),
                    ty.kind.as_ref().map(sx),
                    ty.len.as_ref().map(|l| match l {
                        CharLen::Assumed => "*".to_string(),
                        CharLen::Expr(e) => sx(e),
                    }),
                ),
                other => panic!("{other:?}"),
            })
            .collect();
        let n = |s: &str| Some(s.to_string());
        assert_eq!(tys[0], (BaseType::Integer, None, None));
        assert_eq!(tys[1], (BaseType::Real, n("8"), None));
        assert_eq!(tys[2], (BaseType::Real, n("8"), None));
        assert_eq!(tys[3], (BaseType::Real, n("8"), None));
        assert_eq!(tys[4], (BaseType::Real, n("dp"), None));
        assert_eq!(tys[5], (BaseType::Integer, n("8"), None));
        assert_eq!(tys[6], (BaseType::Integer, n("8"), None));
        assert_eq!(tys[7], (BaseType::Logical, None, None));
        assert_eq!(tys[8], (BaseType::Character, None, n("10")));
        assert_eq!(tys[9], (BaseType::Character, None, n("10")));
        assert_eq!(tys[10], (BaseType::Character, None, n("*")));
        assert_eq!(tys[11], (BaseType::Character, None, n("*")));
        assert_eq!(tys[13], (BaseType::Character, n("1"), n("*")));
        assert_eq!(tys[14], (BaseType::Complex, None, None));
        assert_eq!(tys[15], (BaseType::Complex, None, None));
        assert!(matches!(&tys[16].0, BaseType::Derived(n) if n.text == "point"));
        assert_eq!(tys[17], (BaseType::DoublePrecision, None, None));
        let DeclKind::Type { entities, .. } = &d[12] else {
            panic!()
        };
        assert_eq!(
            entities[0].char_len.as_ref().map(|l| match l {
                CharLen::Expr(e) => sx(e),
                CharLen::Assumed => "*".into(),
            }),
            Some("5".into())
        );
        assert_eq!(entities[1].char_len, Some(CharLen::Assumed));
    }

    #[test]
    fn attributes_and_entities() {
        let d = decls(
            "real(8), dimension(n, 0:m), intent(in out) :: a, b\n\
             integer, parameter :: k = 3, l = k + 1\n\
             real, save, external :: f\n\
             real, allocatable, target :: q(:)\n\
             real :: w(*), v(2:*), u(:, 3:), t(n) = 0.0\n\
             real, intent(inout) :: r\n\
             real, intent(out) :: o\n\
             real x /1.5/\n",
        );
        let DeclKind::Type {
            attrs, entities, ..
        } = &d[0]
        else {
            panic!()
        };
        assert_eq!(attrs.len(), 2);
        let Attr::Dimension(dims) = &attrs[0] else {
            panic!()
        };
        assert_eq!(dims.len(), 2);
        assert!(
            matches!(&dims[1], DimSpec::Explicit { lower: Some(l), upper } if sx(l) == "0" && sx(upper) == "m")
        );
        assert_eq!(attrs[1], Attr::Intent(Intent::InOut));
        assert_eq!(entities.len(), 2);
        let DeclKind::Type {
            attrs, entities, ..
        } = &d[1]
        else {
            panic!()
        };
        assert_eq!(attrs[0], Attr::Parameter);
        assert_eq!(entities[1].init.as_ref().map(sx), Some("(+ k 1)".into()));
        let DeclKind::Type { attrs, .. } = &d[2] else {
            panic!()
        };
        assert_eq!(attrs, &vec![Attr::Save, Attr::External]);
        let DeclKind::Type { attrs, .. } = &d[3] else {
            panic!()
        };
        assert!(matches!(&attrs[0], Attr::Other(n) if n.text == "allocatable"));
        assert!(matches!(&attrs[1], Attr::Other(n) if n.text == "target"));
        let DeclKind::Type { entities, .. } = &d[4] else {
            panic!()
        };
        assert_eq!(
            entities[0].dims,
            Some(vec![DimSpec::AssumedSize { lower: None }])
        );
        assert!(matches!(
            &entities[1].dims.as_ref().unwrap()[0],
            DimSpec::AssumedSize { lower: Some(_) }
        ));
        let u = entities[2].dims.as_ref().unwrap();
        assert_eq!(u[0], DimSpec::AssumedShape { lower: None });
        assert!(matches!(&u[1], DimSpec::AssumedShape { lower: Some(_) }));
        assert_eq!(entities[3].init.as_ref().map(sx), Some("0.0".into()));
        let DeclKind::Type { attrs, .. } = &d[5] else {
            panic!()
        };
        assert_eq!(attrs[0], Attr::Intent(Intent::InOut));
        let DeclKind::Type { attrs, .. } = &d[6] else {
            panic!()
        };
        assert_eq!(attrs[0], Attr::Intent(Intent::Out));
        let DeclKind::Type { entities, .. } = &d[7] else {
            panic!()
        };
        assert_eq!(entities[0].init.as_ref().map(sx), Some("1.5".into()));
    }

    #[test]
    fn specification_statements() {
        let d = decls(
            "use m\n\
             use other, only: a, b\n\
             use, intrinsic :: iso_fortran_env, only: real64\n\
             implicit none\n\
             implicit double precision (a-h, o-z), integer (i-n)\n\
             implicit real*8 (x), real(8) (y)\n\
             dimension p(10), q(n, m)\n\
             parameter (pi = 3.14159, two = 2)\n\
             save\n\
             save s, t\n\
             external f, g\n\
             intrinsic sin\n\
             intent(in) :: x, y\n\
             intent(in out) z\n\
             common /blk/ a, b\n\
             equivalence (a, b)\n\
             namelist /nl/ a\n\
             allocatable :: w(:)\n\
             pointer p\n",
        );
        assert_eq!(
            d[0],
            DeclKind::Use {
                module: Name {
                    text: "m".into(),
                    span: Span {
                        file: 0,
                        line: 2,
                        col: 5
                    }
                },
                only: None
            }
        );
        assert!(matches!(&d[1], DeclKind::Use { only: Some(names), .. } if names.len() == 2));
        assert!(
            matches!(&d[2], DeclKind::Use { module, only: Some(names) } if module.text == "iso_fortran_env" && names[0].text == "real64")
        );
        assert_eq!(d[3], DeclKind::ImplicitNone);
        let DeclKind::Implicit(rules) = &d[4] else {
            panic!("{:?}", d[4])
        };
        assert_eq!(rules[0].0.base, BaseType::DoublePrecision);
        assert_eq!(rules[0].1, vec![('a', 'h'), ('o', 'z')]);
        assert_eq!(rules[1].0.base, BaseType::Integer);
        assert_eq!(rules[1].1, vec![('i', 'n')]);
        let DeclKind::Implicit(rules) = &d[5] else {
            panic!()
        };
        assert_eq!(rules[0].0.kind.as_ref().map(sx), Some("8".into()));
        assert_eq!(rules[1].0.kind.as_ref().map(sx), Some("8".into()));
        assert_eq!(rules[1].1, vec![('y', 'y')]);
        let DeclKind::Dimension(ents) = &d[6] else {
            panic!()
        };
        assert_eq!(ents.len(), 2);
        let DeclKind::Parameter(pairs) = &d[7] else {
            panic!()
        };
        assert_eq!(pairs[0].0.text, "pi");
        assert_eq!(sx(&pairs[1].1), "2");
        assert_eq!(d[8], DeclKind::Save(vec![]));
        assert!(matches!(&d[9], DeclKind::Save(n) if n.len() == 2));
        assert!(matches!(&d[10], DeclKind::External(n) if n.len() == 2));
        assert!(matches!(&d[11], DeclKind::Intrinsic(n) if n[0].text == "sin"));
        assert!(matches!(&d[12], DeclKind::Intent(Intent::In, n) if n.len() == 2));
        assert!(matches!(&d[13], DeclKind::Intent(Intent::InOut, _)));
        let unsupported: Vec<&str> = d[14..]
            .iter()
            .map(|k| match k {
                DeclKind::Unsupported(s) => s.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            unsupported,
            [
                "COMMON",
                "EQUIVALENCE",
                "NAMELIST",
                "ALLOCATABLE",
                "POINTER"
            ]
        );
    }

    #[test]
    fn unsupported_blocks_are_skipped() {
        let file = parse_ok(
            "subroutine s(x)\n\
               interface\n\
                 subroutine ext(y)\n\
                   real y\n\
                 end subroutine ext\n\
               end interface\n\
               type point\n\
                 real :: x, y\n\
               end type point\n\
               real x\n\
               where (x > 0) x = 1\n\
               where (x > 0)\n\
                 x = 2\n\
               elsewhere\n\
                 x = 3\n\
               end where\n\
               x = 4\n\
             end subroutine s\n",
        );
        let p = procedure(&file.units[0]);
        let kinds: Vec<&DeclKind> = p.decls.iter().map(|d| &d.kind).collect();
        assert_eq!(kinds[0], &DeclKind::Unsupported("INTERFACE".into()));
        assert_eq!(pos(p.decls[0].span), (2, 1));
        assert_eq!(kinds[1], &DeclKind::Unsupported("TYPE".into()));
        assert!(matches!(kinds[2], DeclKind::Type { .. }));
        assert_eq!(p.body.len(), 3);
        assert_eq!(p.body[0].kind, StmtKind::Unsupported("WHERE".into()));
        assert_eq!(p.body[1].kind, StmtKind::Unsupported("WHERE".into()));
        assert_eq!(assign_parts(&p.body[2]).1, "4");
    }

    #[test]
    fn statement_functions_versus_array_assignments() {
        let file = parse_ok(
            "subroutine s(n)\n\
               real a(10), f, g\n\
               dimension b(5)\n\
               f(x, y) = x + y\n\
               g(z) = z * 2\n\
               a(1) = 1.0\n\
               b(2) = 2.0\n\
               h(q) = q\n\
             end subroutine s\n",
        );
        let p = procedure(&file.units[0]);
        let fns: Vec<(String, usize)> = p
            .decls
            .iter()
            .filter_map(|d| match &d.kind {
                DeclKind::StmtFunction { name, args, .. } => Some((name.text.clone(), args.len())),
                _ => None,
            })
            .collect();
        assert_eq!(fns, vec![("f".into(), 2), ("g".into(), 1)]);
        // After the first executable statement, `h(q) = q` is an assignment.
        assert_eq!(p.body.len(), 3);
        assert_eq!(assign_parts(&p.body[0]).0, "a[1]");
        assert_eq!(assign_parts(&p.body[1]).0, "b[2]");
        assert_eq!(assign_parts(&p.body[2]).0, "h[q]");
        // Non-name arguments make an assignment even first.
        let body = stmts("real c(3)\nc(1) = 2");
        assert_eq!(assign_parts(&body[0]).0, "c[1]");
    }

    #[test]
    fn host_arrays_are_not_statement_functions() {
        let file = parse_ok(
            "subroutine outer\n\
               real a(10)\n\
               call inner\n\
             contains\n\
               subroutine inner\n\
                 a(i) = 1.0\n\
               end subroutine inner\n\
             end subroutine outer\n",
        );
        let inner = &procedure(&file.units[0]).contains[0];
        assert!(inner.decls.is_empty());
        assert_eq!(assign_parts(&inner.body[0]).0, "a[i]");
    }

    #[test]
    fn data_statements() {
        let d = decls(
            "real a(3), b, c(2)\n\
             data a /3*0.0/, b /-1.5/\n\
             data (c(i), i = 1, 2) / 1.0, 2.0 /, s /'x'/\n\
             data x, y / n*1, .true. /\n",
        );
        let DeclKind::Data(groups) = &d[1] else {
            panic!()
        };
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].objects.iter().map(sx).collect::<Vec<_>>(), ["a"]);
        assert_eq!(groups[0].values.len(), 1);
        assert_eq!(groups[0].values[0].0.as_ref().map(sx), Some("3".into()));
        assert_eq!(sx(&groups[0].values[0].1), "0.0");
        assert_eq!(sx(&groups[1].values[0].1), "(neg 1.5)");
        let DeclKind::Data(groups) = &d[2] else {
            panic!()
        };
        assert_eq!(sx(&groups[0].objects[0]), "(do c[i] i=1 2)");
        assert_eq!(groups[0].values.len(), 2);
        assert_eq!(sx(&groups[1].values[0].1), "\"x\"");
        let DeclKind::Data(groups) = &d[3] else {
            panic!()
        };
        assert_eq!(groups[0].objects.len(), 2);
        assert_eq!(groups[0].values[0].0.as_ref().map(sx), Some("n".into()));
        assert_eq!(sx(&groups[0].values[1].1), ".true.");
    }

    #[test]
    fn data_after_executable_statements_is_a_declaration() {
        let file = parse_ok("subroutine s\nx = 1\ndata y /2.0/\nend\n");
        let p = procedure(&file.units[0]);
        assert_eq!(p.body.len(), 1);
        assert!(matches!(p.decls[0].kind, DeclKind::Data(_)));
    }

    #[test]
    fn if_constructs() {
        let body = stmts(
            "if (a > 0) then\n\
               x = 1\n\
             else if (a < 0) then\n\
               x = 2\n\
             elseif (a == 0) then\n\
               x = 3\n\
               x = 4\n\
             else\n\
               x = 5\n\
             endif\n\
             outer: if (b) then\n\
               y = 1\n\
             end if outer\n\
             if (c) y = 2\n\
             if (c) go to 10\n\
             if (d) 10, 20, 30\n\
             10 continue\n",
        );
        match &body[0].kind {
            StmtKind::If {
                name,
                arms,
                else_body,
            } => {
                assert!(name.is_none());
                assert_eq!(arms.len(), 3);
                assert_eq!(sx(&arms[1].0), "(< a 0)");
                assert_eq!(arms[2].1.len(), 2);
                assert_eq!(else_body.as_ref().map(|b| b.len()), Some(1));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&body[1].kind, StmtKind::If { name: Some(n), else_body: None, .. } if n.text == "outer")
        );
        match &body[2].kind {
            StmtKind::LogicalIf { cond, stmt } => {
                assert_eq!(sx(cond), "c");
                assert_eq!(assign_parts(stmt).0, "y");
                assert_eq!(pos(stmt.span), (15, 8));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&body[3].kind, StmtKind::LogicalIf { stmt, .. } if stmt.kind == StmtKind::Goto(10))
        );
        assert_eq!(body[4].kind, StmtKind::Unsupported("arithmetic IF".into()));
        assert_eq!(body[5].label, Some(10));
    }

    #[test]
    fn do_loops() {
        let body = stmts(
            "do i = 1, n, 2\n\
               x = x + i\n\
             end do\n\
             do while (x > 0)\n\
               x = x - 1\n\
             enddo\n\
             dowhile (x < 5)\n\
               x = x + 1\n\
             end do\n\
             do\n\
               exit\n\
             end do\n\
             outer: do j = 1, m\n\
               inner: do k = 1, m\n\
                 cycle outer\n\
                 exit inner\n\
               end do inner\n\
             end do outer\n\
             do 10, i = 1, n\n\
               x = i\n\
             10 y = i\n\
             do 20 i = 1, n\n\
               do 20 j = 1, n\n\
                 a(i, j) = 0\n\
             20 continue\n\
             do 30 i = 1, n\n\
               x = i\n\
             30 end do\n",
        );
        assert_eq!(body.len(), 8);
        assert!(
            matches!(&body[0].kind, StmtKind::Do { step: Some(s), body, .. } if sx(s) == "2" && body.len() == 1)
        );
        assert!(matches!(&body[1].kind, StmtKind::DoWhile { cond, .. } if sx(cond) == "(> x 0)"));
        assert!(matches!(&body[2].kind, StmtKind::DoWhile { cond, .. } if sx(cond) == "(< x 5)"));
        assert!(
            matches!(&body[3].kind, StmtKind::DoForever { body, .. } if body[0].kind == StmtKind::Exit(None))
        );
        match &body[4].kind {
            StmtKind::Do {
                name: Some(n),
                body,
                ..
            } => {
                assert_eq!(n.text, "outer");
                let StmtKind::Do {
                    name: Some(inner),
                    body,
                    ..
                } = &body[0].kind
                else {
                    panic!()
                };
                assert_eq!(inner.text, "inner");
                assert!(matches!(&body[0].kind, StmtKind::Cycle(Some(n)) if n.text == "outer"));
                assert!(matches!(&body[1].kind, StmtKind::Exit(Some(n)) if n.text == "inner"));
            }
            other => panic!("{other:?}"),
        }
        // The labelled terminal statement belongs to the body.
        match &body[5].kind {
            StmtKind::Do { body, .. } => {
                assert_eq!(body.len(), 2);
                assert_eq!(body[1].label, Some(10));
                assert_eq!(assign_parts(&body[1]).0, "y");
            }
            other => panic!("{other:?}"),
        }
        // Two loops sharing label 20 are nested; the CONTINUE is innermost.
        match &body[6].kind {
            StmtKind::Do { var, body, .. } => {
                assert_eq!(var.text, "i");
                assert_eq!(body.len(), 1);
                let StmtKind::Do { var, body, .. } = &body[0].kind else {
                    panic!()
                };
                assert_eq!(var.text, "j");
                assert_eq!(body.len(), 2);
                assert_eq!(body[1].kind, StmtKind::Continue);
                assert_eq!(body[1].label, Some(20));
            }
            other => panic!("{other:?}"),
        }
        match &body[7].kind {
            StmtKind::Do { body, .. } => {
                assert_eq!(body.len(), 2);
                assert_eq!(body[1].label, Some(30));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fixed_form_loops_and_blank_insensitive_keywords() {
        let src = "      SUBROUTINE S(A, N)\n\
                   \x20     DOUBLEPRECISION A(N)\n\
                   \x20     INTEGER I, J\n\
                   \x20     DO 10 I = 1, N\n\
                   \x20        DO 10 J = 1, N\n\
                   \x20           IF (A(I) .GT. 0.D0) GOTO 10\n\
                   \x20           A(I) = -A(I)\n\
                   \x20  10 CONTINUE\n\
                   \x20     GO TO (20, 30), I\n\
                   \x20  20 ENDIF = 1\n\
                   \x20  30 IF (N .EQ. 1) THEN\n\
                   \x20        RETURN\n\
                   \x20     ELSEIF (N .EQ. 2) THEN\n\
                   \x20        STOP 'two'\n\
                   \x20     END IF\n\
                   \x20     SELECTCASE (N)\n\
                   \x20     CASE DEFAULT\n\
                   \x20     ENDSELECT\n\
                   \x20     END\n";
        let (file, diags) = parse(src, SourceForm::Fixed);
        assert!(diags.is_empty(), "{diags:#?}");
        let p = procedure(&file.units[0]);
        assert!(
            matches!(&p.decls[0].kind, DeclKind::Type { ty, .. } if ty.base == BaseType::DoublePrecision)
        );
        assert_eq!(p.body.len(), 5);
        let StmtKind::Do { body, .. } = &p.body[0].kind else {
            panic!()
        };
        let StmtKind::Do { body, .. } = &body[0].kind else {
            panic!()
        };
        assert_eq!(body.len(), 3);
        assert!(
            matches!(&body[0].kind, StmtKind::LogicalIf { stmt, .. } if stmt.kind == StmtKind::Goto(10))
        );
        assert!(
            matches!(&p.body[1].kind, StmtKind::ComputedGoto { labels, index } if labels == &vec![20, 30] && sx(index) == "i")
        );
        // No reserved words: `ENDIF = 1` assigns to a variable.
        assert_eq!(p.body[2].label, Some(20));
        assert_eq!(assign_parts(&p.body[2]).0, "endif");
        assert!(matches!(&p.body[3].kind, StmtKind::If { arms, .. } if arms.len() == 2));
        assert!(matches!(&p.body[4].kind, StmtKind::SelectCase { cases, .. } if cases.len() == 1));
    }

    #[test]
    fn select_case() {
        let body = stmts(
            "sel: select case (k)\n\
             case (1)\n\
               x = 1\n\
             case (2, 4:6, :0, 10:) sel\n\
               x = 2\n\
             case default\n\
               x = 3\n\
             end select sel\n\
             select case (c)\n\
             case ('a':'z')\n\
             end select\n",
        );
        match &body[0].kind {
            StmtKind::SelectCase {
                name,
                selector,
                cases,
            } => {
                assert_eq!(name.as_ref().map(|n| n.text.as_str()), Some("sel"));
                assert_eq!(sx(selector), "k");
                assert_eq!(cases.len(), 3);
                let CaseSelector::Items(items) = &cases[1].0 else {
                    panic!()
                };
                assert_eq!(items.len(), 4);
                assert!(
                    matches!(&items[1], CaseItem::Range(Some(a), Some(b)) if sx(a) == "4" && sx(b) == "6")
                );
                assert!(matches!(&items[2], CaseItem::Range(None, Some(b)) if sx(b) == "0"));
                assert!(matches!(&items[3], CaseItem::Range(Some(a), None) if sx(a) == "10"));
                assert_eq!(cases[2].0, CaseSelector::Default);
                assert_eq!(cases[2].1.len(), 1);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&body[1].kind, StmtKind::SelectCase { cases, .. } if cases.len() == 1 && cases[0].1.is_empty())
        );
    }

    #[test]
    fn simple_statements() {
        let body = stmts(
            "call f\n\
             call g()\n\
             call h(a, b(1:2), n=3)\n\
             go to 100\n\
             goto (10, 20, 30) k\n\
             go to (10, 20), k + 1\n\
             continue\n\
             return\n\
             stop\n\
             stop 2\n\
             stop 'done'\n\
             read (*, *) x\n\
             allocate (a(n))\n\
             deallocate (a)\n\
             open (unit=10, file='f')\n\
             close (10)\n\
             entry e2(x)\n\
             assign 10 to k\n\
             go to k\n\
             10 20 30 100 continue\n"
                .replace(
                    "10 20 30 100 continue\n",
                    "100 continue\n10 continue\n20 continue\n30 continue\n",
                )
                .as_str(),
        );
        assert!(
            matches!(&body[0].kind, StmtKind::Call { name, args } if name.text == "f" && args.is_empty())
        );
        assert!(matches!(&body[1].kind, StmtKind::Call { args, .. } if args.is_empty()));
        match &body[2].kind {
            StmtKind::Call { args, .. } => {
                assert_eq!(
                    args.iter().map(sx_arg).collect::<Vec<_>>(),
                    ["a", "b[1:2]", "n=3"]
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(body[3].kind, StmtKind::Goto(100));
        assert!(
            matches!(&body[4].kind, StmtKind::ComputedGoto { labels, index } if labels.len() == 3 && sx(index) == "k")
        );
        assert!(
            matches!(&body[5].kind, StmtKind::ComputedGoto { index, .. } if sx(index) == "(+ k 1)")
        );
        assert_eq!(body[6].kind, StmtKind::Continue);
        assert_eq!(body[7].kind, StmtKind::Return);
        assert_eq!(body[8].kind, StmtKind::Stop(None));
        assert!(matches!(&body[9].kind, StmtKind::Stop(Some(e)) if sx(e) == "2"));
        assert!(matches!(&body[10].kind, StmtKind::Stop(Some(e)) if sx(e) == "\"done\""));
        let unsupported: Vec<String> = body[11..19]
            .iter()
            .map(|s| match &s.kind {
                StmtKind::Unsupported(k) => k.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            unsupported,
            [
                "READ",
                "ALLOCATE",
                "DEALLOCATE",
                "OPEN",
                "CLOSE",
                "ENTRY",
                "ASSIGN",
                "assigned GO TO"
            ]
        );
    }

    #[test]
    fn print_and_write_are_ignored_with_a_warning() {
        let (file, diags) = parse(
            "subroutine s\n\
               print *, 'x = ', x\n\
               write (*, '(a, f10.3)') 'y', y\n\
               write (6, 100) (a(i), i = 1, n)\n\
             100 format (1x, 'a', 2hab, f10.3, e12.4e3, /)\n\
               if (x > 0) print *, x\n\
             end\n",
            SourceForm::Free,
        );
        let p = procedure(&file.units[0]);
        assert_eq!(p.body.len(), 4);
        assert_eq!(p.body[0].kind, StmtKind::Output("PRINT".into()));
        assert_eq!(p.body[1].kind, StmtKind::Output("WRITE".into()));
        assert_eq!(diags.len(), 4);
        assert!(diags.iter().all(
            |d| d.severity == Severity::Warning && d.message == "PRINT/WRITE statement ignored"
        ));
        assert_eq!(pos(diags[0].span), (2, 1));
        assert_eq!(pos(diags[3].span), (6, 12));
    }

    #[test]
    fn free_form_continuations_and_semicolons() {
        let body = stmts(
            "x = a + &\n\
             \x20     & b; y = 'abc&\n\
             &def' ! comment\n\
             z = f(1, &  ! comment after the marker\n\
             \n\
             \x20      2)\n",
        );
        assert_eq!(body.len(), 3);
        assert_eq!(assign_parts(&body[0]).1, "(+ a b)");
        assert_eq!(assign_parts(&body[1]).1, "\"abcdef\"");
        assert_eq!(pos(body[1].span), (3, 12));
        assert_eq!(assign_parts(&body[2]).1, "f[1 2]");
    }

    #[test]
    fn fixed_form_tabs_long_lines_and_comments() {
        let mut long = String::from("      X = 1.0 + Y");
        while long.len() < 72 {
            long.push(' ');
        }
        long.push_str("IGNORED1");
        let src = format!(
            "C comment\n*star\n\tSUBROUTINE T(X, Y)\n{long}\n\tX = X +\n\t1 2.0 ! tail\n10\tCONTINUE\n\tEND\n"
        );
        let (file, diags) = parse(&src, SourceForm::Fixed);
        assert!(diags.is_empty(), "{diags:#?}");
        let p = procedure(&file.units[0]);
        assert_eq!(assign_parts(&p.body[0]).1, "(+ 1.0 y)");
        assert_eq!(assign_parts(&p.body[1]).1, "(+ x 2.0)");
        assert_eq!(p.body[2].label, Some(10));
        assert_eq!(pos(p.body[2].span), (7, 4));
    }

    #[test]
    fn errors_have_precise_positions_and_recovery_continues() {
        let errs = errors(
            "subroutine s(x)\n\
               real x\n\
               x = (1 +\n\
               call\n\
               x = 2 *\n\
               y = 3 3\n\
               do i = 1\n\
                 x = 1\n\
               end do\n\
               x = 4\n\
             end subroutine s\n",
            SourceForm::Free,
        );
        let found: Vec<((u32, u32), &str)> = errs
            .iter()
            .map(|d| (pos(d.span), d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 5, "{found:#?}");
        assert_eq!(found[0].0, (3, 9));
        assert!(
            found[0].1.contains("expected an expression in assignment"),
            "{}",
            found[0].1
        );
        assert_eq!(found[1].0, (4, 5));
        assert!(found[1].1.contains("CALL statement"));
        assert_eq!(found[2].0, (5, 8));
        assert_eq!(found[3].0, (6, 7));
        assert!(found[3].1.contains("unexpected '3' after the assignment"));
        assert_eq!(found[4].0, (7, 9));
        assert!(found[4].1.contains("DO statement"));
    }

    #[test]
    fn construct_mismatches_are_reported() {
        let errs = errors(
            "subroutine s\n\
               if (x) then\n\
                 y = 1\n\
               end do\n\
               do i = 1, 2\n\
               end if\n\
               end do\n\
               a: do\n\
               end do b\n\
               else\n\
             end function s\n",
            SourceForm::Free,
        );
        let found: Vec<((u32, u32), &str)> = errs
            .iter()
            .map(|d| (pos(d.span), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ((4, 1), "END DO without a matching DO"),
                ((5, 1), "DO loop is not closed by END DO"),
                ((7, 1), "END DO without a matching DO"),
                (
                    (9, 8),
                    "construct name 'b' does not match the DO loop name 'a'"
                ),
                ((10, 1), "ELSE without a matching IF THEN"),
                ((11, 1), "END FUNCTION does not close SUBROUTINE s"),
            ]
        );
    }

    #[test]
    fn unterminated_units_and_loops() {
        let errs = errors("subroutine s\n do 10 i = 1, n\n x = 1\n", SourceForm::Free);
        let found: Vec<((u32, u32), &str)> = errs
            .iter()
            .map(|d| (pos(d.span), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    (2, 2),
                    "DO loop is not terminated: no statement with label 10 follows"
                ),
                ((1, 1), "SUBROUTINE s is not closed by an END statement"),
            ]
        );
    }

    #[test]
    fn header_errors_keep_constructs_matched() {
        // The broken IF and DO headers still open constructs, so their ENDs
        // match and only the header errors are reported.
        let errs = errors(
            "subroutine s\n\
               if (x .eq. ) then\n\
                 y = 1\n\
               else if (x # 2) then\n\
               end if\n\
               do 10 i = 1,\n\
             10 continue\n\
               select case (x +)\n\
               case (1)\n\
               end select\n\
             end\n",
            SourceForm::Free,
        );
        let lines: Vec<u32> = errs.iter().map(|d| d.span.line).collect();
        assert_eq!(lines, vec![2, 4, 6, 8], "{errs:#?}");
    }

    #[test]
    fn lexical_errors_are_reported_with_positions() {
        let errs = errors(
            "subroutine s\n  x = 'abc\n  y = a .foo. b\nend\n",
            SourceForm::Free,
        );
        assert_eq!(errs.len(), 2);
        assert_eq!(pos(errs[0].span), (2, 7));
        assert_eq!(pos(errs[1].span), (3, 9));
    }

    #[test]
    fn empty_and_comment_only_files() {
        for text in ["", "\n\n", "! only a comment\n"] {
            let (file, diags) = parse(text, SourceForm::Free);
            assert!(file.units.is_empty() && diags.is_empty());
        }
        let (file, diags) = parse("C comment\n      \n", SourceForm::Fixed);
        assert!(file.units.is_empty() && diags.is_empty());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("x = {}1{}", "(".repeat(5000), ")".repeat(5000));
        let errs = errors(&format!("subroutine s\n{deep}\nend\n"), SourceForm::Free);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.contains("nested too deeply"));
        let long = format!("x = 1{}", "+1".repeat(10000));
        let errs = errors(&format!("subroutine s\n{long}\nend\n"), SourceForm::Free);
        assert_eq!(errs.len(), 1);
        let minus = format!("x = {}1", "-".repeat(10000));
        assert_eq!(
            errors(&format!("subroutine s\n{minus}\nend\n"), SourceForm::Free).len(),
            1
        );
        let ifs = "if (x) then\n".repeat(1000) + &"end if\n".repeat(1000);
        let errs = errors(&format!("subroutine s\n{ifs}end\n"), SourceForm::Free);
        assert!(!errs.is_empty());
        let units = "subroutine a\ncontains\n".repeat(100);
        let _ = parse(&units, SourceForm::Free);
    }

    /// A small deterministic PRNG (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            if n == 0 {
                0
            } else {
                (self.next() % n as u64) as usize
            }
        }
    }

    const FUZZ_FREE: &str = "module m\n\
        integer, parameter :: dp = kind(1.d0)\n\
        contains\n\
        subroutine s(a, n, c)\n\
          real(dp), intent(inout) :: a(n)\n\
          character(len=*) :: c\n\
          data q /3*0.0/\n\
          f(x) = x**2 + 1\n\
          outer: do i = 1, n\n\
            if (a(i) > 0 .and. .not. (i == 2)) then\n\
              a(i) = -a(i)**2 + f(1.5_dp) * sum([1, (j, j=1,3)])\n\
            else if (a(i) < 0) then\n\
              cycle outer\n\
            else\n\
              c(1:2) = 'x''y' // \"z\"\n\
            end if\n\
          end do outer\n\
          select case (n)\n\
          case (1:3, 5)\n\
            call t(a, n=n)\n\
          case default\n\
            print *, 'n = ', n; go to (10, 20) n\n\
          end select\n\
       10 continue\n\
       20 return\n\
        end subroutine s\n\
        end module m\n";

    /// Applies `count` random character and token mutations to `src`.
    fn mutate(src: &str, rng: &mut Rng, count: usize) -> String {
        const PIECES: [&str; 24] = [
            "(", ")", "(/", "/)", "&", "!", "'", "\"", ";", "\n", "\t", "=", ",", ":", "::",
            ".and.", "1.e", "end", "do", "if", "then", " ", "*", "10",
        ];
        let mut chars: Vec<char> = src.chars().collect();
        for _ in 0..count {
            let at = rng.below(chars.len() + 1);
            match rng.below(6) {
                0 if !chars.is_empty() => {
                    let at = at.min(chars.len() - 1);
                    chars.remove(at);
                }
                1 if !chars.is_empty() => {
                    let at = at.min(chars.len() - 1);
                    let c = chars[at];
                    chars.insert(at, c);
                }
                2 if chars.len() > 1 => {
                    let a = rng.below(chars.len());
                    let b = rng.below(chars.len());
                    chars.swap(a, b);
                }
                3 => {
                    let piece = PIECES[rng.below(PIECES.len())];
                    for (k, c) in piece.chars().enumerate() {
                        chars.insert(at + k, c);
                    }
                }
                4 => chars.truncate(at),
                _ => {
                    // Duplicate a random slice (lines, tokens).
                    if !chars.is_empty() {
                        let start = rng.below(chars.len());
                        let len = rng.below(40).min(chars.len() - start);
                        let slice: Vec<char> = chars[start..start + len].to_vec();
                        let at = at.min(chars.len());
                        chars.splice(at..at, slice);
                    }
                }
            }
        }
        chars.into_iter().collect()
    }

    #[test]
    fn fuzzed_sources_never_panic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..3000 {
            let (base, form) = if case % 2 == 0 {
                (FUZZ_FREE, SourceForm::Free)
            } else {
                (BRATU, SourceForm::Fixed)
            };
            let count = 1 + rng.below(8);
            let text = mutate(base, &mut rng, count);
            let (file, diags) = parse(&text, form);
            // Every diagnostic points into the file.
            let lines = text.split('\n').count() as u32;
            for d in &diags {
                assert!(
                    d.span.line >= 1 && d.span.line <= lines.max(1),
                    "case {case}: {d:?}\n{text}"
                );
            }
            let _ = file;
        }
    }

    #[test]
    fn unmutated_fuzz_base_is_valid() {
        let (_, diags) = parse(FUZZ_FREE, SourceForm::Free);
        let errs: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
        assert!(errs.is_empty(), "{errs:#?}");
    }

    #[test]
    fn large_files_parse_in_linear_time() {
        let mut text = String::from("subroutine big(x, n)\n  real x(n)\n");
        for i in 0..20000 {
            text.push_str(&format!(
                "  x({}) = x({}) * 2.0 + sin(x(1)) / 3.0\n",
                i % 7 + 1,
                i % 5 + 1
            ));
        }
        text.push_str("end subroutine big\n");
        let start = std::time::Instant::now();
        let (file, diags) = parse(&text, SourceForm::Free);
        assert!(diags.is_empty());
        assert_eq!(procedure(&file.units[0]).body.len(), 20000);
        // Generous even for unoptimized builds on a loaded machine.
        assert!(start.elapsed().as_secs() < 20);
    }

    /// Throughput check on 100k lines (run with `--release --ignored`).
    #[test]
    #[ignore]
    fn parses_100k_lines_quickly() {
        let mut text = String::new();
        for unit in 0..1000 {
            text.push_str(&format!(
                "subroutine s{unit}(x, y, n)\n  integer n, i\n  double precision x(n), y(n)\n"
            ));
            for i in 0..24 {
                text.push_str(&format!(
                    "  do i = 1, n\n    y(i) = y(i) + {i}.0d0*x(i)**2 - sin(x(i))/(1.0 + x(i)*x(i))\n  end do\n  if (y(1) > 0) y(1) = -y(1)\n"
                ));
            }
            text.push_str("end subroutine\n");
        }
        let lines = text.lines().count();
        // CPU time of this process in clock ticks (the machine may be busy).
        let cpu_ticks = || -> u64 {
            let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
            let fields: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            fields
                .get(11)
                .and_then(|u| u.parse::<u64>().ok())
                .unwrap_or(0)
                + fields
                    .get(12)
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0)
        };
        let cpu_start = cpu_ticks();
        let start = std::time::Instant::now();
        let (file, diags) = parse(&text, SourceForm::Free);
        let elapsed = start.elapsed();
        let cpu = cpu_ticks() - cpu_start;
        eprintln!(
            "{lines} lines in {elapsed:?} wall, {cpu} CPU ticks (1/100 s); sizes: Expr {} Arg {} Stmt {}",
            std::mem::size_of::<Expr>(),
            std::mem::size_of::<Arg>(),
            std::mem::size_of::<Stmt>()
        );
        assert!(diags.is_empty());
        assert_eq!(file.units.len(), 1000);
    }
}
