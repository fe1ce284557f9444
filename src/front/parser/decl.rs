//! Declarations: the specification part of a unit, type declarations with
//! their attributes and entities, IMPLICIT, USE, DATA and the other
//! specification statements, and the rule that tells statement functions
//! from array element assignments.

use super::expr::Built;
use super::*;

/// Names declared as arrays, by scope (a contained procedure sees its
/// host's arrays), to tell statement functions from array assignments.
#[derive(Default)]
pub(super) struct ArrayNames {
    counts: HashMap<String, u32>,
    log: Vec<String>,
    scopes: Vec<usize>,
}

impl ArrayNames {
    pub(super) fn push_scope(&mut self) {
        self.scopes.push(self.log.len());
    }
    pub(super) fn pop_scope(&mut self) {
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
    pub(super) fn add_from(&mut self, decl: &DeclKind) {
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
    if arrays.contains(&name.text) || name.text.contains('%') {
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

/// Attribute and statement keywords the subset rejects as specification
/// statements, with the keyword reported.
const UNSUPPORTED_SPECIFICATIONS: [(&str, &str); 10] = [
    ("namelist", "NAMELIST"),
    ("pointer", "POINTER"),
    ("sequence", "SEQUENCE"),
    ("include", "INCLUDE"),
    ("volatile", "VOLATILE"),
    ("protected", "PROTECTED"),
    (
        "procedure",
        "PROCEDURE(interface) declaration (procedure dummies)",
    ),
    ("asynchronous", "ASYNCHRONOUS"),
    ("contiguous", "CONTIGUOUS"),
    ("enum", "ENUM"),
];

impl Parser {
    /// The specification part: declarations and statement functions, up to
    /// the first executable statement.
    pub(super) fn parse_specification_part(
        &mut self,
        allow_statement_functions: bool,
    ) -> Vec<Decl> {
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
}

impl<'s> StmtParser<'s> {
    pub(super) fn at_type_keyword(&self) -> bool {
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
    pub(super) fn type_spec(&mut self, paren_kind: bool) -> PResult<TypeSpec> {
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
        } else if self.at_kw("class")
            && self
                .keyword_end("class")
                .is_some_and(|e| self.kind_at(e) == Some(TokenKind::LParen))
        {
            return Err(Diagnostic::error(
                span,
                "unsupported Fortran: CLASS (polymorphic entities)",
            ));
        } else if self.eat_kw("type") {
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
        } else if self.eat(TokenKind::Colon) {
            Ok(CharLen::Deferred)
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
    pub(super) fn type_declaration(&mut self, ty: TypeSpec) -> PResult<DeclKind> {
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
            "optional" => Attr::Optional,
            "public" => Attr::Access(true),
            "private" => Attr::Access(false),
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
        let name = self.glued_name("a variable name")?;
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

    /// True when a SAVE list names a COMMON block after its first item.
    fn save_has_block(&self) -> bool {
        self.toks[self.pos..]
            .windows(2)
            .any(|w| w[0].kind == TokenKind::Comma && w[1].kind == TokenKind::Slash)
    }

    /// The groups of a COMMON statement after the keyword:
    /// `[/name/ | //] entity, entity [[,] /name/ entity, ...]`.
    fn common_groups(&mut self) -> PResult<Vec<CommonGroup>> {
        let mut groups = Vec::new();
        loop {
            let block = if self.eat(TokenKind::Concat) {
                None
            } else if self.eat(TokenKind::Slash) {
                if self.eat(TokenKind::Slash) {
                    None
                } else {
                    let name = self.name("a COMMON block name")?;
                    self.expect(TokenKind::Slash)?;
                    Some(name)
                }
            } else if groups.is_empty() {
                None
            } else {
                return Err(self.error_here("`/block/` or the end of the statement"));
            };
            let mut members = vec![self.entity(false)?];
            while self.eat(TokenKind::Comma) {
                if self.at(TokenKind::Slash) || self.at(TokenKind::Concat) {
                    break;
                }
                members.push(self.entity(false)?);
            }
            groups.push(CommonGroup { block, members });
            if self.at_end() {
                return Ok(groups);
            }
        }
    }

    /// The sets of an EQUIVALENCE statement after the keyword:
    /// `(object, object [, object...]) [, (object, object...)]...`, each
    /// object a variable, an array element or a substring.
    fn equivalence_sets(&mut self) -> PResult<Vec<Vec<Expr>>> {
        let mut sets = Vec::new();
        loop {
            let open = self.span_here();
            self.expect(TokenKind::LParen)?;
            let mut objects = vec![self.expr()?];
            while self.eat(TokenKind::Comma) {
                objects.push(self.expr()?);
            }
            self.expect(TokenKind::RParen)?;
            if objects.len() < 2 {
                return Err(Diagnostic::error(
                    open,
                    "an EQUIVALENCE set needs at least two objects",
                ));
            }
            sets.push(objects);
            if !self.eat(TokenKind::Comma) {
                return Ok(sets);
            }
        }
    }

    /// Specification statements other than type declarations.
    pub(super) fn specification_statement(&mut self) -> PResult<Option<LineKind>> {
        let decl = if self.eat_kw("implicit") {
            self.what = "IMPLICIT statement";
            self.implicit()?
        } else if self.eat_kw("use") {
            self.what = "USE statement";
            self.use_statement()?
        } else if self.eat_kw("common") {
            self.what = "COMMON statement";
            DeclKind::Common(self.common_groups()?)
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
        } else if self.eat_kw("allocatable") {
            self.what = "ALLOCATABLE statement";
            self.eat(TokenKind::DoubleColon);
            let entities = self.entity_list()?;
            DeclKind::Allocatable(entities)
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
            if self.at(TokenKind::Slash) || self.at(TokenKind::Concat) || self.save_has_block() {
                let (mut blocks, mut names) = (Vec::new(), Vec::new());
                loop {
                    if self.eat(TokenKind::Slash) {
                        blocks.push(self.name("a COMMON block name")?);
                        self.expect(TokenKind::Slash)?;
                    } else {
                        names.push(self.name("a variable or /COMMON block/ name")?);
                    }
                    if !self.eat(TokenKind::Comma) {
                        break;
                    }
                }
                DeclKind::SaveCommon(blocks, names)
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
        } else if self.eat_kw("equivalence") {
            self.what = "EQUIVALENCE statement";
            DeclKind::Equivalence(self.equivalence_sets()?)
        } else if self.at_kw("interface") || self.at_kw("abstractinterface") {
            return self.interface_statement().map(Some);
        } else if self.at_kw("type") {
            // A TYPE definition (`type(x) :: v` declarations were parsed as
            // type declarations before).
            return self.type_statement().map(Some);
        } else if self.eat_kw("public") {
            self.what = "PUBLIC statement";
            self.access_statement(true)?
        } else if self.eat_kw("private") {
            self.what = "PRIVATE statement";
            self.access_statement(false)?
        } else if self.eat_kw("optional") {
            self.what = "OPTIONAL statement";
            self.eat(TokenKind::DoubleColon);
            DeclKind::Optional(self.name_list("a dummy argument name")?)
        } else if self.eat_kw("value") {
            self.what = "VALUE statement";
            self.eat(TokenKind::DoubleColon);
            DeclKind::Value(self.name_list("a dummy argument name")?)
        } else if self.eat_kw("target") {
            // Without POINTER (rejected) TARGET changes nothing: what the
            // statement declares is the shapes it gives, as DIMENSION.
            self.what = "TARGET statement";
            self.eat(TokenKind::DoubleColon);
            let mut entities = self.entity_list()?;
            entities.retain(|e| e.dims.is_some());
            DeclKind::Dimension(entities)
        } else if self.eat_kw("import") {
            self.what = "IMPORT statement";
            self.eat(TokenKind::DoubleColon);
            let names = if self.at_end() {
                Vec::new()
            } else {
                self.name_list("an imported name")?
            };
            DeclKind::Import(names)
        } else if self.at_kw("moduleprocedure")
            || (self.at_kw("procedure")
                && self.keyword_end("procedure").is_some_and(|end| {
                    matches!(
                        self.kind_at(end),
                        Some(TokenKind::Name) | Some(TokenKind::DoubleColon)
                    )
                }))
        {
            self.what = "MODULE PROCEDURE statement";
            if !self.eat_kw("moduleprocedure") {
                self.eat_kw("procedure");
            }
            self.eat(TokenKind::DoubleColon);
            DeclKind::ModuleProcedure(self.name_list("a procedure name")?)
        } else if self
            .keyword_end("procedure")
            .is_some_and(|end| self.kind_at(end) == Some(TokenKind::LParen))
        {
            self.what = "PROCEDURE declaration";
            self.procedure_declaration()?
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

    /// `a(:), b, c(2, 3)`: names with optional bounds, without initial
    /// values (ALLOCATABLE and TARGET statements).
    fn entity_list(&mut self) -> PResult<Vec<Entity>> {
        let mut entities = Vec::new();
        loop {
            entities.push(self.entity(false)?);
            if !self.eat(TokenKind::Comma) {
                return Ok(entities);
            }
        }
    }

    /// `procedure(iface) [, attrs] :: names` after the keyword.
    fn procedure_declaration(&mut self) -> PResult<DeclKind> {
        self.eat_kw("procedure");
        self.expect(TokenKind::LParen)?;
        let interface = if self.at(TokenKind::RParen) {
            None
        } else {
            Some(self.name("an interface name")?)
        };
        self.expect(TokenKind::RParen)?;
        let mut attrs = Vec::new();
        while self.eat(TokenKind::Comma) {
            attrs.push(self.attribute()?);
        }
        self.eat(TokenKind::DoubleColon);
        Ok(DeclKind::Procedure {
            interface,
            attrs,
            names: self.name_list("a procedure name")?,
        })
    }

    /// `public` / `private` with an optional `[::] name, ...` list.
    fn access_statement(&mut self, public: bool) -> PResult<DeclKind> {
        self.eat(TokenKind::DoubleColon);
        let mut names = Vec::new();
        while !self.at_end() {
            let name = match self.operator_spec()? {
                Some(generic) => generic,
                None => self.name("a name")?,
            };
            names.push(name);
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        Ok(DeclKind::Access { public, names })
    }

    /// `operator(op)` or `assignment(=)` (interface statements, access
    /// statements, USE lists): the generic name ([`operator_generic`],
    /// [`ASSIGNMENT_GENERIC`]), or `None` when the cursor is elsewhere.
    fn operator_spec(&mut self) -> PResult<Option<Name>> {
        let Some(t) = self.toks.get(self.pos).copied() else {
            return Ok(None);
        };
        let word = t.text(&self.stmt.text);
        if t.kind != TokenKind::Name
            || !matches!(word, "operator" | "assignment")
            || self.kind_at(self.pos + 1) != Some(TokenKind::LParen)
                && self.kind_at(self.pos + 1) != Some(TokenKind::LArray)
        {
            return Ok(None);
        }
        let assignment = word == "assignment";
        self.pos += 1;
        let text = if self.eat(TokenKind::LArray) {
            // `operator(/)` lexes as `(/` `)`.
            "/".to_string()
        } else {
            self.pos += 1;
            let op = self.toks.get(self.pos).copied();
            let text = op.map_or("", |o| o.text(&self.stmt.text)).to_string();
            let ok = match op.map(|o| o.kind) {
                Some(TokenKind::Assign) => assignment,
                Some(TokenKind::Name | TokenKind::Int | TokenKind::Real | TokenKind::Str)
                | None => false,
                Some(_) => !assignment,
            };
            if !ok {
                return Err(Diagnostic::error(
                    t.span,
                    if assignment {
                        "expected `assignment(=)`"
                    } else {
                        "expected an operator in `operator(...)`"
                    },
                ));
            }
            self.pos += 1;
            text
        };
        self.expect(TokenKind::RParen)?;
        Ok(Some(Name {
            text: if assignment {
                ASSIGNMENT_GENERIC.to_string()
            } else {
                operator_generic(&text)
            },
            span: t.span,
        }))
    }

    /// `interface [name]` or `abstract interface`: the start of a block
    /// the statement parser assembles. Operator and assignment interfaces
    /// are skipped as unsupported blocks.
    fn interface_statement(&mut self) -> PResult<LineKind> {
        self.what = "INTERFACE statement";
        let is_abstract = self.eat_kw("abstract");
        let span = self.span_here();
        self.eat_kw("interface");
        let generic = if self.at_end() {
            None
        } else if let Some(generic) = self.operator_spec()? {
            Some(generic)
        } else {
            Some(self.name("a generic name")?)
        };
        self.expect_end()?;
        Ok(LineKind::InterfaceStart {
            generic,
            is_abstract,
            span,
        })
    }

    /// `type [, attributes ::] name`: the start of a derived type
    /// definition. Abstract types are skipped as unsupported.
    fn type_statement(&mut self) -> PResult<LineKind> {
        self.what = "TYPE statement";
        self.eat_kw("type");
        let mut access = None;
        let mut extends = None;
        if self.eat(TokenKind::Comma) {
            loop {
                let attr = self.name("a type attribute")?;
                match attr.text.as_str() {
                    "public" => access = Some(true),
                    "private" => access = Some(false),
                    "extends" => {
                        self.expect(TokenKind::LParen)?;
                        extends = Some(self.name("the parent type name")?);
                        self.expect(TokenKind::RParen)?;
                    }
                    "bind" | "sequence" => {
                        if self.at(TokenKind::LParen) {
                            self.skip_group()?;
                        }
                    }
                    _ => {
                        self.pos = self.toks.len();
                        return Ok(LineKind::Skip(SkippedBlock::TypeDefinition));
                    }
                }
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::DoubleColon)?;
        } else {
            self.eat(TokenKind::DoubleColon);
        }
        let name = self.name("the type name")?;
        if self.at(TokenKind::LParen) {
            return Err(Diagnostic::error(
                self.span_here(),
                "unsupported Fortran: parameterized derived types",
            ));
        }
        self.expect_end()?;
        Ok(LineKind::TypeStart {
            name,
            access,
            extends,
        })
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
        let mut renames = Vec::new();
        if self.eat(TokenKind::Comma) {
            let is_only = self.at_kw("only")
                && self
                    .keyword_end("only")
                    .is_some_and(|end| self.kind_at(end) == Some(TokenKind::Colon));
            if is_only {
                self.eat_kw("only");
                self.expect(TokenKind::Colon)?;
            }
            let mut names = Vec::new();
            while !self.at_end() {
                if let Some(generic) = self.operator_spec()? {
                    names.push((generic.clone(), generic));
                    if !self.eat(TokenKind::Comma) {
                        break;
                    }
                    continue;
                }
                let name = self.name("a name in the USE list")?;
                let remote = if self.eat(TokenKind::Arrow) {
                    self.name("the module's name after '=>'")?
                } else if is_only {
                    name.clone()
                } else {
                    return Err(self.error_here("'=>' in a USE rename"));
                };
                names.push((name, remote));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            if is_only {
                only = Some(names);
            } else {
                renames = names;
            }
        }
        Ok(DeclKind::Use {
            module,
            only,
            renames,
        })
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
}
