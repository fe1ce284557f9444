//! Program units: SUBROUTINE, FUNCTION, PROGRAM, MODULE and BLOCK DATA headers, their
//! END statements, CONTAINS parts, and the unsupported blocks (INTERFACE,
//! TYPE, ...) that are skipped as a whole.

use super::*;

/// Deepest allowed nesting of internal procedures.
const MAX_UNIT_NESTING: usize = 8;

/// The kinds of program unit a header or END statement names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UnitKind {
    Subroutine,
    Function,
    Program,
    Module,
    BlockData,
}

impl UnitKind {
    pub(super) fn keyword(self) -> &'static str {
        match self {
            UnitKind::Subroutine => "SUBROUTINE",
            UnitKind::Function => "FUNCTION",
            UnitKind::Program => "PROGRAM",
            UnitKind::Module => "MODULE",
            UnitKind::BlockData => "BLOCK DATA",
        }
    }
}

/// A program unit's first statement.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Header {
    unit: UnitKind,
    /// The procedure kind (unused for modules).
    proc_kind: ProcKind,
    name: Name,
    args: Vec<Name>,
    /// Position of the unit keyword.
    span: Span,
    /// True for a main program without a PROGRAM statement.
    implicit: bool,
    /// The ELEMENTAL prefix.
    elemental: bool,
}

/// Statement blocks skipped as a whole because the subset does not support
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SkippedBlock {
    TypeDefinition,
    Associate,
    SelectType,
}

impl SkippedBlock {
    /// The keyword reported for the block.
    pub(super) fn keyword(self) -> &'static str {
        match self {
            SkippedBlock::TypeDefinition => "ABSTRACT type (polymorphism: CLASS)",
            SkippedBlock::Associate => "ASSOCIATE",
            SkippedBlock::SelectType => "SELECT TYPE",
        }
    }
    /// The compacted (blank-free) text that starts its END statement.
    fn end(self) -> &'static str {
        match self {
            SkippedBlock::TypeDefinition => "endtype",
            SkippedBlock::Associate => "endassociate",
            SkippedBlock::SelectType => "endselect",
        }
    }
    /// True when a compacted statement text opens a nested block whose END
    /// looks like this block's END.
    fn opens_nested(self, compact: &str) -> bool {
        match self {
            SkippedBlock::TypeDefinition => false,
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
        matches!(self, SkippedBlock::TypeDefinition)
    }
}

impl Parser {
    /// Skips the statements of an unsupported block up to its END, and
    /// returns the line that stands for the whole block.
    pub(super) fn skip_block(&mut self, block: SkippedBlock, span: Span) -> LineKind {
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
        if block.is_specification() {
            LineKind::Decl(DeclKind::Unsupported(block.keyword().to_string()))
        } else {
            LineKind::Exec(StmtKind::Unsupported(block.keyword().to_string()))
        }
    }

    /// True (consuming it) when the next statement starts with the
    /// compacted text `end` (`endinterface`, `endtype`), which the
    /// statement parser does not classify.
    fn eat_block_end(&mut self, end: &str) -> bool {
        if self.peeked.is_some() {
            return false;
        }
        match self.stmts.get(self.next) {
            Some(stmt) if compact_text(&stmt.text).starts_with(end) => {
                self.next += 1;
                true
            }
            _ => false,
        }
    }

    /// The body of an INTERFACE block after its first statement, up to
    /// END INTERFACE: interface bodies and MODULE PROCEDURE statements.
    pub(super) fn parse_interface(
        &mut self,
        generic: Option<Name>,
        is_abstract: bool,
        span: Span,
    ) -> LineKind {
        let mut block = InterfaceBlock {
            generic,
            is_abstract,
            bodies: Vec::new(),
            procedures: Vec::new(),
        };
        loop {
            if self.eat_block_end("endinterface") {
                break;
            }
            let line = self.bump();
            match line.kind {
                LineKind::Header(h) if matches!(h.unit, UnitKind::Subroutine | UnitKind::Function) => {
                    if self.unit_depth >= MAX_UNIT_NESTING {
                        self.error(h.span, "interface bodies are nested too deeply");
                        continue;
                    }
                    block.bodies.push(self.parse_procedure(h));
                }
                LineKind::Decl(DeclKind::ModuleProcedure(names)) => {
                    block.procedures.extend(names);
                }
                LineKind::Error => {}
                LineKind::Eof | LineKind::End { .. } => {
                    self.unbump(Line { ..line });
                    self.error(span, "INTERFACE block is not closed by END INTERFACE");
                    break;
                }
                _ => self.error(
                    line.span,
                    "only interface bodies and MODULE PROCEDURE statements may appear in an INTERFACE block",
                ),
            }
        }
        LineKind::Decl(DeclKind::Interface(block))
    }

    /// The components of a derived TYPE definition after its first
    /// statement, up to END TYPE.
    pub(super) fn parse_type_definition(
        &mut self,
        name: Name,
        access: Option<bool>,
        extends: Option<Name>,
        span: Span,
    ) -> LineKind {
        let mut components = Vec::new();
        loop {
            if self.eat_block_end("endtype") {
                break;
            }
            let line = self.bump();
            match line.kind {
                LineKind::Decl(kind @ DeclKind::Type { .. }) => components.push(Decl {
                    kind,
                    span: line.span,
                }),
                // PRIVATE components and SEQUENCE change nothing here.
                LineKind::Decl(DeclKind::Access { ref names, .. }) if names.is_empty() => {}
                LineKind::Decl(DeclKind::Unsupported(ref k)) if k == "SEQUENCE" => {}
                LineKind::Error => {}
                LineKind::Contains => {
                    self.error(
                        line.span,
                        "unsupported Fortran: type-bound procedures (CONTAINS in a TYPE definition)",
                    );
                    while !self.eat_block_end("endtype") && self.next < self.stmts.len() {
                        self.next += 1;
                    }
                    break;
                }
                LineKind::Eof | LineKind::End { .. } | LineKind::Header(_) => {
                    self.unbump(line);
                    self.error(
                        span,
                        format!("TYPE {} is not closed by END TYPE", name.text),
                    );
                    break;
                }
                _ => self.error(
                    line.span,
                    "only component declarations may appear in a TYPE definition",
                ),
            }
        }
        LineKind::Decl(DeclKind::TypeDef(TypeDef {
            name,
            access,
            extends,
            components,
        }))
    }

    /// All program units of the file.
    pub(super) fn parse_units(&mut self) -> Vec<ProgramUnit> {
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
                        elemental: false,
                    };
                    self.unbump(line);
                    units.push(ProgramUnit::Procedure(self.parse_procedure(header)));
                }
            }
        }
        units
    }

    /// A subroutine, function or main program, after its header.
    fn parse_procedure(&mut self, header: Header) -> Procedure {
        self.arrays.push_scope();
        self.unit_depth += 1;
        let outer_late = std::mem::take(&mut self.late_decls);
        let outer_open = std::mem::take(&mut self.open);
        let outer_formats = std::mem::take(&mut self.formats);
        let is_internal = std::mem::replace(&mut self.in_procedure, true);

        let mut decls = self.parse_specification_part(true);
        let mut nested = Vec::new();
        while let Some(h) = self.nested_header() {
            nested.push(Procedure {
                nested: true,
                ..self.parse_procedure(h)
            });
            let mut more = self.parse_specification_part(true);
            decls.append(&mut more);
        }
        let (body, _) = self.parse_block(None);
        decls.append(&mut self.late_decls);
        let formats = std::mem::take(&mut self.formats);
        let mut contains = self.parse_contains_part();
        contains.splice(0..0, nested);
        self.parse_unit_end(&header);

        self.open = outer_open;
        self.late_decls = outer_late;
        self.formats = outer_formats;
        self.unit_depth -= 1;
        self.arrays.pop_scope();
        self.in_procedure = is_internal;
        let mut p = Procedure {
            kind: header.proc_kind,
            name: header.name,
            args: header.args,
            decls,
            body,
            formats,
            contains,
            nested: false,
            span: header.span,
            elemental: header.elemental,
            entry_of: None,
        };
        super::farfel::outline_adf_blocks(&mut p);
        p
    }

    /// The header of a nested subprogram (FARFEL, seed 002: a SUBROUTINE
    /// or FUNCTION among the specification statements of a subroutine or
    /// function, closed by its own END), if the next line is one.
    fn nested_header(&mut self) -> Option<Header> {
        let line = self.bump();
        match line.kind {
            LineKind::Header(h)
                if self.in_procedure
                    && matches!(h.unit, UnitKind::Subroutine | UnitKind::Function)
                    && self.unit_depth < MAX_UNIT_NESTING =>
            {
                Some(h)
            }
            kind => {
                self.unbump(Line { kind, ..line });
                None
            }
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
}

impl<'s> StmtParser<'s> {
    /// SUBROUTINE, FUNCTION (with prefixes), PROGRAM, MODULE, BLOCK DATA,
    /// CONTAINS and the END of units. Type declarations that turn out not to
    /// be function headers are parsed here too.
    pub(super) fn unit_statement(&mut self) -> PResult<Option<LineKind>> {
        if self.eat_kw("contains") {
            self.what = "CONTAINS statement";
            self.expect_end()?;
            return Ok(Some(LineKind::Contains));
        }
        if let Some(end) = self.end_statement()? {
            return Ok(Some(end));
        }
        if self.at_kw("blockdata") {
            let span = self.span_here();
            self.eat_kw("blockdata");
            self.what = "BLOCK DATA statement";
            let name = match self.optional_name()? {
                Some(n) => n,
                None => Name {
                    text: "_blockdata".to_string(),
                    span,
                },
            };
            self.expect_end()?;
            return Ok(Some(LineKind::Header(Header {
                unit: UnitKind::BlockData,
                proc_kind: ProcKind::BlockData,
                name,
                args: Vec::new(),
                span,
                implicit: false,
                elemental: false,
            })));
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
                elemental: false,
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
                elemental: false,
            })));
        }
        // Procedure prefixes and a type, then FUNCTION or SUBROUTINE.
        let start = self.pos;
        let mut prefixed = false;
        let mut elemental = false;
        let mut prefix_type = None;
        loop {
            if self.eat_kw("elemental") {
                prefixed = true;
                elemental = true;
            } else if ["recursive", "pure", "impure", "non_recursive"]
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
                .procedure_header(UnitKind::Function, prefix_type, span, elemental)
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
                .procedure_header(UnitKind::Subroutine, None, span, elemental)
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
        elemental: bool,
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
            elemental,
        }));
        let mut args = Vec::new();
        if self.eat(TokenKind::LParen) {
            args = self.dummy_names()?;
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
            elemental,
        }))
    }

    /// Skips a parenthesized group (e.g. `bind(c, name='f')`).
    pub(super) fn skip_group(&mut self) -> PResult<()> {
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
            ("endblockdata", UnitKind::BlockData),
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
}
