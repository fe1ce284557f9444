//! Symbol tables: what every name of a program unit means after its
//! specification part (types, kinds, dimensions, attributes, PARAMETER
//! values, statement functions), built from the declarations in order.
//!
//! It resolves declarations; it emits no IR.

use super::super::ast::{
    Attr, BaseType, CharLen, DataGroup, Decl, DeclKind, DimSpec, Entity, Expr, Intent, Name,
    TypeSpec,
};
use super::super::diag::Diagnostic;
use super::consts::{fold, int_kind, real_kind, ConstVal};
use adjit_ir::{GlobalId, Span, Type};
use std::collections::HashMap;

/// A resolved type: element type and character length.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeInfo {
    /// The element type.
    pub ty: Type,
    /// The length of a CHARACTER entity.
    pub char_len: CharLenInfo,
}

impl TypeInfo {
    /// A non-character type.
    pub fn plain(ty: Type) -> TypeInfo {
        TypeInfo {
            ty,
            char_len: CharLenInfo::None,
        }
    }
}

/// A CHARACTER length after folding.
#[derive(Clone, Debug, PartialEq)]
pub enum CharLenInfo {
    /// Not a character entity.
    None,
    /// A constant length.
    Const(i64),
    /// `*`: from the actual argument.
    Assumed,
    /// A specification expression over dummy arguments.
    Expr(Expr),
}

/// A variable declared (or implied) in a scoping unit.
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// Where it was first declared.
    pub span: Span,
    /// The explicit type, if declared.
    pub ty: Option<TypeInfo>,
    /// Its dimensions, if an array.
    pub dims: Option<Vec<DimSpec>>,
    /// Its INTENT.
    pub intent: Option<Intent>,
    /// SAVE (explicit, by initializer or by DATA).
    pub save: bool,
    /// The initializer.
    pub init: Option<Expr>,
    /// Position among the dummy arguments.
    pub arg: Option<usize>,
    /// The global storage of a module variable, COMMON member or
    /// EQUIVALENCE partner.
    pub global: Option<GlobalId>,
    /// The element of the global where the variable's storage starts.
    pub global_at: i64,
}

impl VarDecl {
    fn new(span: Span) -> VarDecl {
        VarDecl {
            span,
            ty: None,
            dims: None,
            intent: None,
            save: false,
            init: None,
            arg: None,
            global: None,
            global_at: 0,
        }
    }
}

/// A statement function `f(x, y) = expr`, inlined at each reference.
#[derive(Clone, Debug)]
pub struct StmtFn {
    /// Dummy argument names.
    pub args: Vec<String>,
    /// The defining expression.
    pub body: Expr,
    /// Its declared type (`None`: implicit).
    pub ty: Option<TypeInfo>,
    /// Where it was defined.
    pub span: Span,
}

/// What a name means in a scoping unit.
#[derive(Clone, Debug)]
pub enum Sym {
    /// A variable (local, dummy, module or SAVE).
    Var(VarDecl),
    /// A named constant.
    Const(ConstVal),
    /// A statement function.
    StmtFunc(StmtFn),
    /// Declared EXTERNAL (where).
    External(#[allow(dead_code)] Span),
    /// Declared INTRINSIC.
    Intrinsic,
}

/// The symbol table of one program unit.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Names declared in the unit (or imported by USE).
    pub syms: HashMap<String, Sym>,
    /// Implicit type per initial letter; `None` under IMPLICIT NONE.
    pub implicit: Vec<Option<TypeInfo>>,
    /// A bare SAVE statement.
    pub save_all: bool,
    /// DATA statements, in order.
    pub data: Vec<(DataGroup, Span)>,
    /// Modules named by USE statements (index into the module list).
    pub uses: Vec<usize>,
    /// Statement-function-shaped statements that assign array elements
    /// (the first executable statements, misread as statement functions).
    pub leading_assignments: Vec<(Name, Vec<Name>, Expr, Span)>,
    /// COMMON members in storage order per block (`None`: blank COMMON),
    /// blocks in order of first appearance.
    pub commons: Vec<(Option<Name>, Vec<Name>)>,
    /// EQUIVALENCE sets, in order (objects as written).
    pub equivalences: Vec<Vec<Expr>>,
}

/// The default implicit typing: I-N integer, others real.
pub fn default_implicit() -> Vec<Option<TypeInfo>> {
    (b'a'..=b'z')
        .map(|c| {
            Some(TypeInfo::plain(if (b'i'..=b'n').contains(&c) {
                Type::I32
            } else {
                Type::F32
            }))
        })
        .collect()
}

impl Scope {
    /// The implicit type of a name in this scope.
    pub fn implicit_type(&self, name: &str) -> Option<TypeInfo> {
        let c = name.bytes().next()?.to_ascii_lowercase();
        if !c.is_ascii_lowercase() {
            return None;
        }
        self.implicit.get((c - b'a') as usize).cloned().flatten()
    }
    /// Places a declared variable in a global from element `at` on (a
    /// COMMON member or EQUIVALENCE partner).
    pub fn set_global(&mut self, name: &str, g: GlobalId, at: i64) {
        if let Some(Sym::Var(d)) = self.syms.get_mut(name) {
            d.global = Some(g);
            d.global_at = at;
        }
    }
    /// The declared variable of a name.
    pub fn var(&self, name: &str) -> Option<&VarDecl> {
        match self.syms.get(name) {
            Some(Sym::Var(v)) => Some(v),
            _ => None,
        }
    }
    /// The type of a declared variable (explicit or implicit).
    pub fn var_type(&self, name: &str) -> Option<TypeInfo> {
        self.var(name)
            .and_then(|v| v.ty.clone())
            .or_else(|| self.implicit_type(name))
    }
    /// The value of a named constant.
    pub fn constant(&self, name: &str) -> Option<ConstVal> {
        match self.syms.get(name) {
            Some(Sym::Const(c)) => Some(c.clone()),
            _ => None,
        }
    }
}

/// What the scope builder may look at outside the unit.
pub struct Outer<'a> {
    /// Implicit rules and constants of the host (internal procedures).
    pub host: Option<&'a Scope>,
    /// Module scopes and names, for USE.
    pub modules: &'a [(String, Scope)],
    /// The scope of the enclosing module (module procedures).
    pub module: Option<&'a Scope>,
}

/// Builds the symbol table of a unit from its dummy arguments, function
/// result and declarations. Errors go to `diags`.
pub fn build_scope(
    args: &[Name],
    result: Option<(&Name, Option<&TypeSpec>)>,
    decls: &[Decl],
    outer: &Outer,
    diags: &mut Vec<Diagnostic>,
) -> Scope {
    let mut b = Builder {
        scope: Scope {
            implicit: outer
                .host
                .or(outer.module)
                .map(|h| h.implicit.clone())
                .unwrap_or_else(default_implicit),
            ..Scope::default()
        },
        outer,
        diags,
    };
    for (i, a) in args.iter().enumerate() {
        b.var_mut(a).arg = Some(i);
    }
    if let Some((name, prefix)) = result {
        let ty = prefix.and_then(|t| b.type_info(t));
        let v = b.var_mut(name);
        if ty.is_some() {
            v.ty = ty;
        }
    }
    for d in decls {
        b.decl(d);
    }
    b.finish()
}

struct Builder<'a, 'o> {
    scope: Scope,
    outer: &'a Outer<'o>,
    diags: &'a mut Vec<Diagnostic>,
}

impl Builder<'_, '_> {
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    fn lookup_const(&self, name: &str) -> Option<ConstVal> {
        self.scope
            .constant(name)
            .or_else(|| self.outer.host.and_then(|h| h.constant(name)))
            .or_else(|| self.outer.module.and_then(|m| m.constant(name)))
    }

    fn fold(&mut self, e: &Expr) -> Option<ConstVal> {
        match fold(e, &|n| self.lookup_const(n)) {
            Ok(c) => Some(c),
            Err(nc) => {
                self.error(nc.span, nc.message);
                None
            }
        }
    }

    fn var_mut(&mut self, name: &Name) -> &mut VarDecl {
        let entry = self
            .scope
            .syms
            .entry(name.text.clone())
            .or_insert_with(|| Sym::Var(VarDecl::new(name.span)));
        if !matches!(entry, Sym::Var(_)) {
            *entry = Sym::Var(VarDecl::new(name.span));
        }
        match entry {
            Sym::Var(v) => v,
            _ => unreachable!("just made a variable"),
        }
    }

    /// Resolves a type specification (kind and length folded).
    fn type_info(&mut self, t: &TypeSpec) -> Option<TypeInfo> {
        let kind = match &t.kind {
            Some(k) => Some(self.fold(k)?.as_int().or_else(|| {
                self.error(k.span, "a kind must be an integer constant");
                None
            })?),
            None => None,
        };
        let ty = match &t.base {
            BaseType::Integer => match kind {
                None => Type::I32,
                Some(k) => int_kind(k).or_else(|| {
                    self.error(t.span, format!("unsupported INTEGER kind {k}"));
                    None
                })?,
            },
            BaseType::Real => match kind {
                None => Type::F32,
                Some(k) => real_kind(k).or_else(|| {
                    self.error(t.span, format!("unsupported REAL kind {k}"));
                    None
                })?,
            },
            BaseType::DoublePrecision => Type::F64,
            BaseType::Logical => Type::Bool,
            BaseType::Character => Type::Char,
            BaseType::Complex => {
                self.error(t.span, "unsupported Fortran: COMPLEX");
                return None;
            }
            BaseType::Derived(n) => {
                self.error(
                    t.span,
                    format!("unsupported Fortran: derived type TYPE({})", n.text),
                );
                return None;
            }
        };
        let char_len = if ty == Type::Char {
            match &t.len {
                None => CharLenInfo::Const(1),
                Some(l) => self.char_len(l),
            }
        } else {
            CharLenInfo::None
        };
        Some(TypeInfo { ty, char_len })
    }

    fn char_len(&mut self, l: &CharLen) -> CharLenInfo {
        match l {
            CharLen::Assumed => CharLenInfo::Assumed,
            CharLen::Expr(e) => match fold(e, &|n| self.lookup_const(n)) {
                Ok(c) => match c.as_int() {
                    Some(v) => CharLenInfo::Const(v.max(0)),
                    None => {
                        self.error(e.span, "a character length must be an integer");
                        CharLenInfo::Const(1)
                    }
                },
                Err(_) => CharLenInfo::Expr(e.clone()),
            },
        }
    }

    fn decl(&mut self, d: &Decl) {
        match &d.kind {
            DeclKind::Use { module, only } => self.use_module(module, only.as_deref()),
            DeclKind::ImplicitNone => self.scope.implicit = vec![None; 26],
            DeclKind::Implicit(rules) => {
                for (spec, ranges) in rules {
                    let Some(ti) = self.type_info(spec) else {
                        continue;
                    };
                    for &(lo, hi) in ranges {
                        let (lo, hi) =
                            (lo.to_ascii_lowercase() as u8, hi.to_ascii_lowercase() as u8);
                        for c in lo..=hi {
                            if c.is_ascii_lowercase() {
                                self.scope.implicit[(c - b'a') as usize] = Some(ti.clone());
                            }
                        }
                    }
                }
            }
            DeclKind::Type {
                ty,
                attrs,
                entities,
            } => self.type_decl(ty, attrs, entities),
            DeclKind::Dimension(entities) => {
                for e in entities {
                    if let Some(dims) = &e.dims {
                        self.var_mut(&e.name).dims = Some(dims.clone());
                    }
                }
            }
            DeclKind::Parameter(list) => {
                for (name, value) in list {
                    self.parameter(name, value);
                }
            }
            DeclKind::SaveCommon(blocks, names) => {
                // COMMON storage is static: the blocks need nothing.
                let _ = blocks;
                for n in names {
                    self.var_mut(n).save = true;
                }
            }
            DeclKind::Common(groups) => {
                for g in groups {
                    let key = g.block.as_ref().map(|n| n.text.as_str());
                    let pos = match self
                        .scope
                        .commons
                        .iter()
                        .position(|(b, _)| b.as_ref().map(|n| n.text.as_str()) == key)
                    {
                        Some(p) => p,
                        None => {
                            self.scope.commons.push((g.block.clone(), Vec::new()));
                            self.scope.commons.len() - 1
                        }
                    };
                    for e in &g.members {
                        let in_common = self
                            .scope
                            .commons
                            .iter()
                            .any(|(_, ms)| ms.iter().any(|m| m.text == e.name.text));
                        if in_common {
                            self.error(
                                e.name.span,
                                format!("`{}` is already in COMMON", e.name.text),
                            );
                            continue;
                        }
                        if let Some(dims) = &e.dims {
                            self.var_mut(&e.name).dims = Some(dims.clone());
                        } else {
                            self.var_mut(&e.name);
                        }
                        self.scope.commons[pos].1.push(e.name.clone());
                    }
                }
            }
            DeclKind::Save(names) => {
                if names.is_empty() {
                    self.scope.save_all = true;
                }
                for n in names {
                    self.var_mut(n).save = true;
                }
            }
            DeclKind::External(names) => {
                for n in names {
                    self.scope
                        .syms
                        .insert(n.text.clone(), Sym::External(n.span));
                }
            }
            DeclKind::Intrinsic(names) => {
                for n in names {
                    self.scope.syms.insert(n.text.clone(), Sym::Intrinsic);
                }
            }
            DeclKind::Intent(intent, names) => {
                for n in names {
                    self.var_mut(n).intent = Some(*intent);
                }
            }
            DeclKind::Data(groups) => {
                for g in groups {
                    self.scope.data.push((g.clone(), d.span));
                }
            }
            DeclKind::StmtFunction { name, args, body } => {
                if self.scope.var(&name.text).is_some_and(|v| v.dims.is_some()) {
                    self.scope.leading_assignments.push((
                        name.clone(),
                        args.clone(),
                        body.clone(),
                        d.span,
                    ));
                } else {
                    let ty = self.scope.var(&name.text).and_then(|v| v.ty.clone());
                    self.scope.syms.insert(
                        name.text.clone(),
                        Sym::StmtFunc(StmtFn {
                            args: args.iter().map(|a| a.text.clone()).collect(),
                            body: body.clone(),
                            ty,
                            span: d.span,
                        }),
                    );
                }
            }
            DeclKind::Equivalence(sets) => {
                for set in sets {
                    for object in set {
                        if let Some(name) = equivalence_name(object) {
                            if matches!(self.scope.syms.get(&name.text), None | Some(Sym::Var(_))) {
                                self.var_mut(name);
                            }
                        }
                    }
                    self.scope.equivalences.push(set.clone());
                }
            }
            DeclKind::Unsupported(what) => {
                self.error(d.span, format!("unsupported Fortran: {what}"));
            }
        }
    }

    fn use_module(&mut self, module: &Name, only: Option<&[Name]>) {
        let Some(idx) = self.outer.modules.iter().position(|m| m.0 == module.text) else {
            self.error(module.span, format!("unknown module `{}`", module.text));
            return;
        };
        self.scope.uses.push(idx);
        let scope = &self.outer.modules[idx].1;
        let wanted = |n: &str| only.is_none_or(|o| o.iter().any(|x| x.text == n));
        for (name, sym) in &scope.syms {
            if wanted(name) && matches!(sym, Sym::Var(_) | Sym::Const(_)) {
                self.scope.syms.insert(name.clone(), sym.clone());
            }
        }
    }

    fn parameter(&mut self, name: &Name, value: &Expr) {
        let Some(c) = self.fold(value) else { return };
        let ti = self
            .scope
            .var(&name.text)
            .and_then(|v| v.ty.clone())
            .or_else(|| self.scope.implicit_type(&name.text));
        let c = match ti {
            Some(ti) => match c.convert(ti.ty) {
                Some(c) => c,
                None => {
                    self.error(
                        value.span,
                        format!("PARAMETER `{}` has the wrong type", name.text),
                    );
                    return;
                }
            },
            None if matches!(c, ConstVal::Str(_)) => c,
            None => {
                self.error(name.span, format!("PARAMETER `{}` has no type", name.text));
                return;
            }
        };
        self.scope.syms.insert(name.text.clone(), Sym::Const(c));
    }

    fn type_decl(&mut self, ty: &TypeSpec, attrs: &[Attr], entities: &[Entity]) {
        let Some(ti) = self.type_info(ty) else { return };
        let mut dims = None;
        let (mut is_param, mut save, mut external, mut intent) = (false, false, false, None);
        for a in attrs {
            match a {
                Attr::Dimension(d) => dims = Some(d.clone()),
                Attr::Intent(i) => intent = Some(*i),
                Attr::Parameter => is_param = true,
                Attr::Save => save = true,
                Attr::External => external = true,
                Attr::Intrinsic => {}
                Attr::Other(n) => {
                    self.error(
                        n.span,
                        format!("unsupported Fortran: {} attribute", n.text.to_uppercase()),
                    );
                }
            }
        }
        for e in entities {
            let mut eti = ti.clone();
            if let Some(l) = &e.char_len {
                eti.char_len = self.char_len(l);
            }
            if external {
                self.scope
                    .syms
                    .insert(e.name.text.clone(), Sym::External(e.name.span));
                continue;
            }
            if is_param {
                let Some(init) = &e.init else {
                    self.error(
                        e.name.span,
                        format!("PARAMETER `{}` has no value", e.name.text),
                    );
                    continue;
                };
                if e.dims.is_some() || dims.is_some() {
                    self.error(e.name.span, "unsupported Fortran: array PARAMETER");
                    continue;
                }
                self.var_mut(&e.name).ty = Some(eti);
                self.parameter(&e.name, init);
                continue;
            }
            let was_external = matches!(self.scope.syms.get(&e.name.text), Some(Sym::External(_)));
            if was_external {
                continue;
            }
            let v = self.var_mut(&e.name);
            v.span = e.name.span;
            v.ty = Some(eti);
            if let Some(d) = e.dims.clone().or_else(|| dims.clone()) {
                v.dims = Some(d);
            }
            if intent.is_some() {
                v.intent = intent;
            }
            if save {
                v.save = true;
            }
            if let Some(init) = &e.init {
                v.init = Some(init.clone());
                v.save = true;
            }
        }
    }

    fn finish(mut self) -> Scope {
        let names: Vec<(String, Span)> = self
            .scope
            .data
            .iter()
            .flat_map(|(g, span)| data_names(g).into_iter().map(move |n| (n, *span)))
            .collect();
        for (n, span) in names {
            let entry = self
                .scope
                .syms
                .entry(n)
                .or_insert_with(|| Sym::Var(VarDecl::new(span)));
            if let Sym::Var(v) = entry {
                v.save = true;
            }
        }
        if self.scope.save_all {
            for s in self.scope.syms.values_mut() {
                if let Sym::Var(v) = s {
                    if v.arg.is_none() {
                        v.save = true;
                    }
                }
            }
        }
        let mut errors = Vec::new();
        for (name, s) in &self.scope.syms {
            if let Sym::Var(v) = s {
                if v.arg.is_none() && v.intent.is_some() {
                    errors.push((
                        v.span,
                        format!("INTENT given for `{name}`, which is not a dummy argument"),
                    ));
                }
            }
        }
        errors.sort_by_key(|e| (e.0.line, e.0.col));
        for (span, m) in errors {
            self.error(span, m);
        }
        self.scope
    }
}

/// The variable names a DATA group initialises.
pub fn data_names(g: &DataGroup) -> Vec<String> {
    fn walk(e: &Expr, out: &mut Vec<String>) {
        use super::super::ast::ExprKind;
        match &e.kind {
            ExprKind::Name(n) => out.push(n.text.clone()),
            ExprKind::Apply { name, .. } => out.push(name.text.clone()),
            ExprKind::ImpliedDo { items, .. } => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    g.objects.iter().for_each(|o| walk(o, &mut out));
    out
}

/// The variable an EQUIVALENCE object names (`x`, `a(3)`, `c(2:4)`,
/// `c(1)(2:3)`), if it has the form of one.
pub(crate) fn equivalence_name(object: &Expr) -> Option<&Name> {
    use super::super::ast::ExprKind;
    match &object.kind {
        ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => Some(n),
        ExprKind::Substring { base, .. } => equivalence_name(base),
        _ => None,
    }
}
