//! Symbol tables: what every name of a program unit means after its
//! specification part (types, kinds, dimensions, attributes, PARAMETER
//! values, statement functions), built from the declarations in order.
//!
//! It resolves declarations; it emits no IR.

use super::super::ast::{
    Attr, BaseType, BinOp, CharLen, DataGroup, Decl, DeclKind, DimSpec, Entity, Expr, ExprKind,
    Intent, InterfaceBlock, Name, ProcKind, Procedure, TypeDef, TypeSpec,
};
use super::super::diag::Diagnostic;
use super::consts::{fold, int_kind, real_kind, ConstVal};
use adjit_ir::{GlobalId, Span, Type};
use std::collections::{HashMap, HashSet};

mod components;
mod extension;

pub(crate) use components::{bounds_name, data_name, status_name};

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
    /// `:`: a deferred-length ALLOCATABLE scalar, held as a rank-1
    /// ALLOCATABLE array of one-character elements (`sema::deferred_chars`).
    Deferred,
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
    /// OPTIONAL (a dummy argument).
    pub optional: bool,
    /// The default initialization of a derived-type component (a local
    /// is set to it at every entry, a module or SAVE variable initially).
    pub default_init: Option<Expr>,
    /// The element of the global where the variable's storage starts.
    pub global_at: i64,
    /// An array PARAMETER (read-only).
    pub constant: bool,
    /// ALLOCATABLE, with the position of the attribute.
    pub allocatable: Option<Span>,
    /// VALUE (a dummy argument the procedure works on a copy of), with
    /// the position of the attribute.
    pub value: Option<Span>,
    /// The dimensions a leaf of an ALLOCATABLE array of structures takes
    /// from its array component (`(3)` for `x(3)` of `ps(:)`, whose leaf
    /// `ps%x` is declared `(:, :)`): ALLOCATE puts them before the bounds
    /// it gives the structures.
    pub component_dims: Option<Vec<DimSpec>>,
    /// The dimensions start with those of a deferred-length string's
    /// buffer of characters (`deferred_string_shape` gave them).
    pub string_buffer: bool,
    /// The constant length of an ALLOCATABLE CHARACTER variable declared
    /// `character(len=n), allocatable`: it is held as a deferred-length
    /// string (its type's length is `Deferred`) whose allocations and
    /// assignments keep that length (a length above 65535 is not kept:
    /// such a variable behaves as a deferred-length one).
    pub fixed_len: Option<u16>,
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
            optional: false,
            default_init: None,
            global_at: 0,
            constant: false,
            allocatable: None,
            value: None,
            component_dims: None,
            string_buffer: false,
            fixed_len: None,
        }
    }
}

/// A variable of derived type, flattened: one variable per (nested)
/// component, named `var%comp%sub`.
#[derive(Clone, Debug)]
pub struct StructDecl {
    /// The derived type's name (as defined).
    pub type_name: String,
    /// The leaf component variables' full names, in component order.
    pub leaves: Vec<String>,
    /// The dimensions of an array of structures (each leaf is then an
    /// array with the component's dimensions followed by these).
    pub dims: Option<Vec<DimSpec>>,
}

/// The type of a derived-type component.
#[derive(Clone, Debug)]
pub enum CompType {
    /// An intrinsic type.
    Plain(TypeInfo),
    /// Another derived type (by name).
    Derived(String),
}

/// One component of a derived type.
#[derive(Clone, Debug)]
pub struct Component {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: CompType,
    /// Its dimensions (constant), if an array.
    pub dims: Option<Vec<DimSpec>>,
    /// Its default initialization.
    pub init: Option<Expr>,
    /// ALLOCATABLE (a deferred-shape array of a numeric or LOGICAL type,
    /// a scalar: numeric, LOGICAL or of derived type, or a deferred-length
    /// string or a rank-1 array of them).
    pub allocatable: bool,
    /// The constant length of an ALLOCATABLE CHARACTER component
    /// (`character(len=8), allocatable :: tags(:)`), whose type is then
    /// a deferred-length string's (see [`VarDecl::fixed_len`]).
    pub fixed_len: Option<u16>,
}

impl Component {
    /// An ALLOCATABLE scalar kept beside an allocation status leaf
    /// (`components::status_name`): not a deferred-length string, which
    /// is an ALLOCATABLE array of characters.
    pub fn is_allocatable_scalar(&self) -> bool {
        self.allocatable
            && self.dims.is_none()
            && !matches!(&self.ty, CompType::Plain(ti) if ti.char_len == CharLenInfo::Deferred)
    }
}

/// A derived type definition.
#[derive(Clone, Debug)]
pub struct DerivedType {
    /// The type name as defined.
    pub name: String,
    /// Components in order (an extended type's inherited ones first).
    pub comps: Vec<Component>,
    /// The parent type of an extended type: its name (also the name of
    /// the parent component) and how many of `comps` are inherited.
    pub parent: Option<(String, usize)>,
}

/// One dummy argument of an abstract interface.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceArg {
    /// Its name.
    pub name: String,
    /// Its element type (`None`: a structure or a procedure).
    pub ty: Option<Type>,
    /// Its rank.
    pub rank: usize,
    /// The derived type of a structure argument.
    pub type_name: Option<String>,
}

/// An abstract interface (`abstract interface; function f(x) ...`): what
/// a procedure passed for a `procedure(f)` dummy must look like.
#[derive(Clone, Debug, PartialEq)]
pub struct Interface {
    /// Its name.
    pub name: String,
    /// The result type of a function interface (`None`: a subroutine).
    pub result: Option<Type>,
    /// The dummy arguments, in order.
    pub args: Vec<InterfaceArg>,
}

/// Names of the intrinsic module ISO_FORTRAN_ENV and their values (kinds,
/// units and IOSTAT values, gfortran's).
const ISO_FORTRAN_ENV: [(&str, i64); 11] = [
    ("real32", 4),
    ("real64", 8),
    ("int8", 1),
    ("int16", 2),
    ("int32", 4),
    ("int64", 8),
    ("input_unit", 5),
    ("output_unit", 6),
    ("error_unit", 0),
    ("iostat_end", adjit_ir::io::IOSTAT_END as i64),
    ("iostat_eor", adjit_ir::io::IOSTAT_EOR as i64),
];

/// Kind constants of the intrinsic module ISO_C_BINDING and their values
/// (those of gfortran on a 64-bit Unix: `c_long` and `c_size_t` are 8).
const ISO_C_BINDING: [(&str, i64); 20] = [
    ("c_int", 4),
    ("c_short", 2),
    ("c_long", 8),
    ("c_long_long", 8),
    ("c_signed_char", 1),
    ("c_size_t", 8),
    ("c_int8_t", 1),
    ("c_int16_t", 2),
    ("c_int32_t", 4),
    ("c_int64_t", 8),
    ("c_int_least32_t", 4),
    ("c_int_least64_t", 8),
    ("c_int_fast32_t", 8),
    ("c_int_fast64_t", 8),
    ("c_intmax_t", 8),
    ("c_intptr_t", 8),
    ("c_float", 4),
    ("c_double", 8),
    ("c_bool", 1),
    ("c_char", 1),
];

/// The IEEE classes `ieee_value` makes, as the integer values USE gives
/// their names (IEEE_CLASS_TYPE constants are integers here).
pub(super) const IEEE_CLASSES: [(&str, i64); 6] = [
    ("ieee_signaling_nan", 1),
    ("ieee_quiet_nan", 2),
    ("ieee_negative_inf", 3),
    ("ieee_negative_zero", 6),
    ("ieee_positive_zero", 7),
    ("ieee_positive_inf", 10),
];

/// The procedures of IEEE_ARITHMETIC the subset supports.
pub(super) const IEEE_PROCEDURES: [&str; 5] = [
    "ieee_is_nan",
    "ieee_is_finite",
    "ieee_is_negative",
    "ieee_copy_sign",
    "ieee_value",
];

/// The intrinsic modules whose integer constants USE imports, by name,
/// with the names of their procedures (known as intrinsics).
const INTRINSIC_MODULES: [IntrinsicModule; 3] = [
    ("iso_fortran_env", &ISO_FORTRAN_ENV, &[]),
    ("iso_c_binding", &ISO_C_BINDING, &[]),
    ("ieee_arithmetic", &IEEE_CLASSES, &IEEE_PROCEDURES),
];

/// An intrinsic module: its name, its integer constants and the names of
/// its procedures.
type IntrinsicModule = (
    &'static str,
    &'static [(&'static str, i64)],
    &'static [&'static str],
);

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
    /// A variable of derived type (flattened into its leaf components).
    Struct(StructDecl),
    /// A generic interface: the specific procedures' names.
    Generic(Vec<String>),
    /// A module procedure renamed by USE: the procedure's own name.
    ProcAlias(String),
}

/// The symbol table of one program unit.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Names declared in the unit (or imported by USE).
    pub syms: HashMap<String, Sym>,
    /// Arrays of a BLOCK whose bounds read a local variable of the
    /// procedure: the BLOCK statement's position, the array and its
    /// declared bounds. They are ALLOCATABLE here, allocated on entry to
    /// the BLOCK ([`super::block_sized`]).
    pub block_sized: Vec<(Span, Name, Vec<DimSpec>)>,
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
    /// Derived types defined or imported here, by (local) name.
    pub types: HashMap<String, DerivedType>,
    /// Names declared PUBLIC (modules).
    pub public: HashSet<String>,
    /// Names declared PRIVATE (modules).
    pub private: HashSet<String>,
    /// A bare PRIVATE statement: names are private unless declared PUBLIC.
    pub default_private: bool,
    /// Names declared PROTECTED (module variables code outside the module
    /// may read but not define).
    pub protected: HashSet<String>,
    /// The module procedures of a module (filled by the module builder).
    pub procs: Vec<String>,
    /// Types declared for names declared EXTERNAL (`double precision f`
    /// with `external f`, in either order): the result type of a function
    /// (a dummy function's, checked against the procedure passed).
    pub proc_types: HashMap<String, TypeInfo>,
    /// EQUIVALENCE sets, in order (objects as written).
    pub equivalences: Vec<Vec<Expr>>,
    /// Abstract interfaces defined or imported here, by (local) name.
    pub interfaces: HashMap<String, Interface>,
    /// The interface of each `procedure(iface)` name declared here.
    pub proc_interfaces: HashMap<String, Interface>,
    /// Interfaces of specific procedures, which `procedure(name)` may
    /// name as well as an abstract interface: a module's procedures
    /// (filled by the module builder), external procedures with an
    /// explicit interface body, and those imported by USE.
    pub specifics: HashMap<String, Interface>,
    /// The OPTIONAL dummy procedures.
    pub optional_procs: HashSet<String>,
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
    /// True when a module entity is visible through USE (PUBLIC, or not
    /// PRIVATE by default). A component `p%a` has its variable's access.
    pub fn is_public(&self, name: &str) -> bool {
        let base = name.split('%').next().unwrap_or(name);
        if self.public.contains(base) {
            return true;
        }
        !(self.private.contains(base) || self.default_private)
    }
    /// True for an OPTIONAL dummy argument (a structure's by its
    /// components).
    pub fn is_optional_dummy(&self, name: &str) -> bool {
        let leaf = match self.syms.get(name) {
            Some(Sym::Struct(st)) => st.leaves.first().map(String::as_str),
            _ => Some(name),
        };
        leaf.and_then(|l| self.var(l))
            .is_some_and(|v| v.optional && v.arg.is_some())
    }
    /// The derived-type variable of a name.
    pub fn struct_decl(&self, name: &str) -> Option<&StructDecl> {
        match self.syms.get(name) {
            Some(Sym::Struct(s)) => Some(s),
            _ => None,
        }
    }
    /// The value of a named constant.
    pub fn constant(&self, name: &str) -> Option<ConstVal> {
        match self.syms.get(name) {
            Some(Sym::Const(c)) => Some(c.clone()),
            _ => None,
        }
    }
}

/// The interface a procedure or interface body describes: its arguments'
/// types and ranks and its result type, resolved with the names `outer`
/// sees (kinds, types: what IMPORT would bring in). Errors of its
/// declarations go to `diags`.
pub fn procedure_interface(
    body: &Procedure,
    outer: &Outer,
    diags: &mut Vec<Diagnostic>,
) -> Interface {
    let result = match &body.kind {
        ProcKind::Function {
            prefix_type,
            result,
        } => Some((result.as_ref().unwrap_or(&body.name), prefix_type.as_ref())),
        _ => None,
    };
    let inner = build_scope(&body.args, result, &body.decls, outer, diags);
    let ty_of = |n: &str| {
        inner
            .var(n)
            .and_then(|v| v.ty.clone())
            .or_else(|| inner.implicit_type(n))
            .map(|t| t.ty)
    };
    let args = body
        .args
        .iter()
        .map(|a| match inner.syms.get(&a.text) {
            Some(Sym::Struct(st)) => InterfaceArg {
                name: a.text.clone(),
                ty: None,
                rank: 0,
                type_name: Some(st.type_name.clone()),
            },
            Some(Sym::Var(v)) => InterfaceArg {
                name: a.text.clone(),
                ty: ty_of(&a.text),
                rank: v.dims.as_ref().map_or(0, Vec::len),
                type_name: None,
            },
            _ => InterfaceArg {
                name: a.text.clone(),
                ty: None,
                rank: 0,
                type_name: None,
            },
        })
        .collect();
    Interface {
        name: body.name.text.clone(),
        result: result.and_then(|(r, _)| ty_of(&r.text)),
        args,
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
        used: HashMap::new(),
    };
    for (i, a) in args.iter().enumerate() {
        if args[..i].iter().any(|p| p.text == a.text) {
            b.error(
                a.span,
                format!(
                    "dummy argument `{}` appears twice in the argument list",
                    a.text
                ),
            );
            continue;
        }
        b.var_mut(a).arg = Some(i);
    }
    let mut derived_result = None;
    if let Some((name, prefix)) = result {
        match prefix {
            // `type(t) function f(...)`: declared after the specification
            // part, which may USE the type's module.
            Some(
                t @ TypeSpec {
                    base: BaseType::Derived(_),
                    ..
                },
            ) => derived_result = Some((name, t)),
            _ => {
                let ty = prefix.and_then(|t| b.type_info(t));
                let v = b.var_mut(name);
                if ty.is_some() {
                    v.ty = ty;
                }
            }
        }
    }
    for d in decls {
        b.decl(d);
    }
    if let Some((
        name,
        t @ TypeSpec {
            base: BaseType::Derived(type_name),
            ..
        },
    )) = derived_result
    {
        let entity = Entity {
            name: name.clone(),
            dims: None,
            char_len: None,
            init: None,
        };
        b.derived_decl(t, type_name, &[], &[entity]);
    }
    b.finish()
}

struct Builder<'a, 'o> {
    scope: Scope,
    outer: &'a Outer<'o>,
    diags: &'a mut Vec<Diagnostic>,
    /// Names made visible by USE, with their module: they cannot be
    /// declared again in the unit.
    used: HashMap<String, String>,
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
            CharLen::Deferred => CharLenInfo::Deferred,
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
        for n in declared_names(&d.kind) {
            if let Some(module) = self.used.get(&n.text) {
                let msg = format!(
                    "symbol `{}` from module `{module}` cannot be redeclared",
                    n.text
                );
                self.error(n.span, msg);
            }
        }
        match &d.kind {
            DeclKind::Use {
                module,
                only,
                renames,
            } => self.use_module(module, only.as_deref(), renames),
            DeclKind::Access { public, names } => {
                if names.is_empty() {
                    self.scope.default_private = !public;
                }
                for n in names {
                    self.set_access(n, *public);
                }
            }
            DeclKind::Optional(names) => {
                for n in names {
                    if matches!(self.scope.syms.get(&n.text), Some(Sym::External(_))) {
                        self.scope.optional_procs.insert(n.text.clone());
                        continue;
                    }
                    self.each_var(n, |v| v.optional = true);
                }
            }
            DeclKind::Value(names) => {
                for n in names {
                    if self.scope.struct_decl(&n.text).is_some() {
                        // As the attribute on a structure declaration.
                        self.error(n.span, "unsupported Fortran: VALUE attribute");
                        continue;
                    }
                    self.var_mut(n).value = Some(n.span);
                }
            }
            DeclKind::Import(_) => {}
            DeclKind::Block(decls) => {
                for inner in decls {
                    for n in declared_names(&inner.kind) {
                        if self.scope.syms.contains_key(&n.text) {
                            self.error(
                                n.span,
                                format!(
                                    "unsupported Fortran: BLOCK variable `{}` shadows a name of its procedure (or of a BLOCK enclosing it or nested in it)",
                                    n.text
                                ),
                            );
                        }
                    }
                    self.decl(inner);
                    self.block_bounds_from_locals(inner, d.span);
                }
            }
            DeclKind::ModuleProcedure(names) => {
                if let Some(n) = names.first() {
                    self.error(n.span, "MODULE PROCEDURE outside a generic INTERFACE block");
                }
            }
            DeclKind::Interface(block) => self.interface(block),
            DeclKind::TypeDef(def) => self.type_def(def, d.span),
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
            DeclKind::Allocatable(entities) => {
                for e in entities {
                    let v = self.var_mut(&e.name);
                    v.allocatable = Some(e.name.span);
                    if let Some(dims) = &e.dims {
                        v.dims = Some(dims.clone());
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
                    self.each_var(n, |v| v.save = true);
                }
            }
            DeclKind::External(names) => {
                for n in names {
                    self.external(n);
                }
            }
            DeclKind::Procedure {
                interface,
                attrs,
                names,
            } => self.procedure_decl(interface.as_ref(), attrs, names, d.span),
            DeclKind::Intrinsic(names) => {
                for n in names {
                    self.scope.syms.insert(n.text.clone(), Sym::Intrinsic);
                }
            }
            DeclKind::Intent(intent, names) => {
                for n in names {
                    self.each_var(n, |v| v.intent = Some(*intent));
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

    /// Declares a name EXTERNAL, keeping a type declared before.
    fn external(&mut self, n: &Name) {
        if let Some(ty) = self.scope.var(&n.text).and_then(|v| v.ty.clone()) {
            self.scope.proc_types.insert(n.text.clone(), ty);
        }
        self.scope
            .syms
            .insert(n.text.clone(), Sym::External(n.span));
    }

    fn use_module(
        &mut self,
        module: &Name,
        only: Option<&[(Name, Name)]>,
        renames: &[(Name, Name)],
    ) {
        let Some(idx) = self.outer.modules.iter().position(|m| m.0 == module.text) else {
            if let Some(m) = INTRINSIC_MODULES.iter().find(|m| m.0 == module.text) {
                return self.use_intrinsic_module(m, only, renames);
            }
            if matches!(module.text.as_str(), "ieee_exceptions" | "ieee_features") {
                self.error(
                    module.span,
                    format!(
                        "unsupported Fortran: the intrinsic module {}",
                        module.text.to_uppercase()
                    ),
                );
                return;
            }
            self.error(module.span, format!("unknown module `{}`", module.text));
            return;
        };
        self.scope.uses.push(idx);
        let scope = &self.outer.modules[idx].1;
        match only {
            Some(list) => {
                for (local, remote) in list {
                    self.import(scope, &module.text, local, remote);
                }
            }
            None => {
                let mut names: Vec<&String> = scope
                    .syms
                    .iter()
                    .filter(|(n, s)| !n.contains('%') && importable(s))
                    .map(|(n, _)| n)
                    .chain(scope.types.keys())
                    .chain(scope.interfaces.keys())
                    .filter(|n| scope.is_public(n))
                    .filter(|n| !renames.iter().any(|(_, r)| &r.text == *n))
                    .collect();
                names.sort();
                names.dedup();
                for n in names {
                    let name = Name {
                        text: n.clone(),
                        span: module.span,
                    };
                    self.import(scope, &module.text, &name, &name);
                }
                for (local, remote) in renames {
                    self.import(scope, &module.text, local, remote);
                }
                for (n, i) in &scope.specifics {
                    if scope.is_public(n) && !renames.iter().any(|(_, r)| &r.text == n) {
                        self.scope.specifics.insert(n.clone(), i.clone());
                    }
                }
            }
        }
    }

    /// Imports one module entity under a local name: variables (with
    /// their components), constants, types, generic names, procedures.
    fn import(&mut self, scope: &Scope, module: &str, local: &Name, remote: &Name) {
        let r = remote.text.as_str();
        let exists = scope.syms.get(r).is_some_and(importable)
            || scope.types.contains_key(r)
            || scope.interfaces.contains_key(r)
            || scope.procs.iter().any(|p| p == r);
        if !exists {
            self.error(
                remote.span,
                format!("`{r}` is not an entity of module `{module}`"),
            );
            return;
        }
        if !scope.is_public(r) {
            self.error(
                remote.span,
                format!("`{r}` is PRIVATE in module `{module}`"),
            );
            return;
        }
        let l = local.text.as_str();
        if let Some(def) = scope.types.get(r) {
            self.scope.types.insert(l.to_string(), def.clone());
        }
        if let Some(i) = scope.interfaces.get(r) {
            self.scope.interfaces.insert(l.to_string(), i.clone());
        }
        if let Some(i) = scope.specifics.get(r) {
            self.scope.specifics.insert(l.to_string(), i.clone());
        }
        if scope.procs.iter().any(|p| p == r) && l != r {
            self.scope
                .syms
                .insert(l.to_string(), Sym::ProcAlias(r.to_string()));
        }
        match scope.syms.get(r) {
            Some(Sym::Struct(st)) => {
                let rename = |leaf: &str| format!("{l}{}", &leaf[r.len()..]);
                for (name, sym) in &scope.syms {
                    if name.starts_with(r) && name[r.len()..].starts_with('%') {
                        let sym = match sym {
                            Sym::Struct(inner) => Sym::Struct(StructDecl {
                                leaves: inner.leaves.iter().map(|x| rename(x)).collect(),
                                ..inner.clone()
                            }),
                            other => other.clone(),
                        };
                        self.scope.syms.insert(rename(name), sym);
                    }
                }
                let st = StructDecl {
                    leaves: st.leaves.iter().map(|x| rename(x)).collect(),
                    ..st.clone()
                };
                self.scope.syms.insert(l.to_string(), Sym::Struct(st));
            }
            Some(sym) if importable(sym) => {
                self.scope.syms.insert(l.to_string(), sym.clone());
            }
            _ => return,
        }
        self.used.insert(l.to_string(), module.to_string());
    }

    /// USE of an intrinsic module (ISO_FORTRAN_ENV, ISO_C_BINDING): its
    /// kind constants `kinds`, all of them or those of the ONLY list.
    fn use_intrinsic_module(
        &mut self,
        &(module, kinds, procedures): &IntrinsicModule,
        only: Option<&[(Name, Name)]>,
        renames: &[(Name, Name)],
    ) {
        let kind = |n: &str| kinds.iter().find(|(k, _)| *k == n).map(|x| x.1);
        let mut list: Vec<(String, i64)> = Vec::new();
        let wanted: Vec<(Name, Name)> = match only {
            Some(l) => l.to_vec(),
            None => {
                for &(n, k) in kinds {
                    if !renames.iter().any(|(_, r)| r.text == n) {
                        list.push((n.to_string(), k));
                    }
                }
                renames.to_vec()
            }
        };
        for (local, remote) in &wanted {
            match kind(&remote.text) {
                Some(k) => list.push((local.text.clone(), k)),
                // A procedure is known by its own name.
                None if procedures.contains(&remote.text.as_str()) && local.text == remote.text => {
                }
                None => self.error(
                    remote.span,
                    format!(
                        "unsupported Fortran: `{}` of {} (only {})",
                        remote.text,
                        module.to_uppercase(),
                        kinds
                            .iter()
                            .map(|x| x.0)
                            .chain(procedures.iter().copied())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            }
        }
        for (n, k) in list {
            self.scope
                .syms
                .insert(n, Sym::Const(ConstVal::Int(k, Type::I32)));
        }
    }

    /// Records PUBLIC / PRIVATE for a name.
    fn set_access(&mut self, n: &Name, public: bool) {
        if public {
            self.scope.public.insert(n.text.clone());
            self.scope.private.remove(&n.text);
        } else {
            self.scope.private.insert(n.text.clone());
            self.scope.public.remove(&n.text);
        }
    }

    /// Applies `f` to a variable, or to every component of a derived-type
    /// variable.
    /// A BLOCK's array whose bounds read a local variable of its
    /// procedure (`m = n - 2` then `block; real :: w(m)`) or an associate
    /// name (`associate (m => n - 2)` around the BLOCK) is sized when
    /// the BLOCK (at `block`) is entered, which local arrays sized at
    /// procedure entry cannot express: it becomes ALLOCATABLE, recorded in
    /// [`Scope::block_sized`] to be allocated on entry to the BLOCK.
    fn block_bounds_from_locals(&mut self, d: &Decl, block: Span) {
        fn names(e: &Expr, out: &mut Vec<Name>) {
            if let ExprKind::Name(n) = &e.kind {
                out.push(n.clone());
            }
            e.kind.children().into_iter().for_each(|x| names(x, out));
        }
        let entities = match &d.kind {
            DeclKind::Type { entities, .. } | DeclKind::Dimension(entities) => entities,
            _ => return,
        };
        for ent in entities {
            let Some(dims) = &ent.dims else { continue };
            let mut read = Vec::new();
            for dim in dims {
                match dim {
                    DimSpec::Explicit { lower, upper } => {
                        lower.iter().for_each(|e| names(e, &mut read));
                        names(upper, &mut read);
                    }
                    DimSpec::AssumedSize { lower } | DimSpec::AssumedShape { lower } => {
                        lower.iter().for_each(|e| names(e, &mut read))
                    }
                }
            }
            // A local variable, or a name declared nowhere: an associate
            // name of an ASSOCIATE construct enclosing the BLOCK (or an
            // implicitly typed local), which sema resolves on entry.
            let declared_outside = |n: &Name| {
                [self.outer.host, self.outer.module]
                    .into_iter()
                    .flatten()
                    .any(|s| s.syms.contains_key(&n.text))
            };
            let local = read.iter().find(|n| match self.scope.syms.get(&n.text) {
                Some(Sym::Var(v)) => v.arg.is_none() && v.global.is_none() && !v.constant,
                Some(_) => false,
                None => !declared_outside(n),
            });
            let Some(n) = local else { continue };
            let explicit = dims.iter().all(|d| matches!(d, DimSpec::Explicit { .. }));
            match self.scope.syms.get_mut(&ent.name.text) {
                Some(Sym::Var(v)) if explicit && v.allocatable.is_none() && v.init.is_none() => {
                    v.allocatable = Some(ent.name.span);
                    v.dims = Some(
                        dims.iter()
                            .map(|_| DimSpec::AssumedShape { lower: None })
                            .collect(),
                    );
                    self.scope
                        .block_sized
                        .push((block, ent.name.clone(), dims.clone()));
                }
                _ => self.error(
                    n.span,
                    format!(
                        "unsupported Fortran: BLOCK array `{}` takes its bounds from `{}`, a local variable of the procedure (only explicit-shape arrays of intrinsic type without an initial value are sized on entry to the BLOCK)",
                        ent.name.text, n.text
                    ),
                ),
            }
        }
    }

    /// Applies `f` to the declaration of the variable `n`: its leaves for a
    /// structure, and the status variable of an ALLOCATABLE scalar (which
    /// shares the dummy's attributes).
    fn each_var(&mut self, n: &Name, mut f: impl FnMut(&mut VarDecl)) {
        if let Some(Sym::Var(v)) = self.scope.syms.get_mut(&status_name(&n.text)) {
            f(v);
        }
        if let Some(Sym::Struct(st)) = self.scope.syms.get(&n.text) {
            for leaf in st.leaves.clone() {
                if let Some(Sym::Var(v)) = self.scope.syms.get_mut(&leaf) {
                    f(v);
                }
            }
            return;
        }
        f(self.var_mut(n));
    }

    /// A derived type known here (own, host, module).
    fn find_type(&self, name: &str) -> Option<DerivedType> {
        self.scope
            .types
            .get(name)
            .or_else(|| self.outer.host.and_then(|h| h.types.get(name)))
            .or_else(|| self.outer.module.and_then(|m| m.types.get(name)))
            .cloned()
    }

    /// A TYPE definition: its components, resolved.
    fn type_def(&mut self, def: &TypeDef, span: Span) {
        let _ = span;
        let (mut comps, parent) = self.inherited(def);
        for d in &def.components {
            let DeclKind::Type {
                ty,
                attrs,
                entities,
            } = &d.kind
            else {
                continue;
            };
            let mut dims = None;
            let mut allocatable = None;
            for a in attrs {
                match a {
                    Attr::Dimension(dd) => dims = Some(dd.clone()),
                    Attr::Access(_) => {}
                    Attr::Other(n) if n.text == "allocatable" => allocatable = Some(n.span),
                    Attr::Other(n) => self.error(
                        n.span,
                        format!("unsupported Fortran: {} component", n.text.to_uppercase()),
                    ),
                    _ => self.error(d.span, "invalid attribute for a component"),
                }
            }
            let cty = match &ty.base {
                BaseType::Derived(n) => match self.find_type(&n.text) {
                    Some(t) => CompType::Derived(t.name),
                    None => {
                        self.error(n.span, format!("unknown derived type `{}`", n.text));
                        continue;
                    }
                },
                _ => match self.type_info(ty) {
                    Some(ti) => CompType::Plain(ti),
                    None => continue,
                },
            };
            for e in entities {
                if !self.check_parent_name(def, &e.name) {
                    continue;
                }
                let dims = e.dims.clone().or_else(|| dims.clone());
                if let Some(at) = allocatable {
                    if !self.allocatable_component(&cty, &dims, at, &e.name) {
                        continue;
                    }
                } else if let Some(dd) = &dims {
                    if dd.iter().any(|x| !matches!(x, DimSpec::Explicit { .. })) {
                        self.error(
                            e.name.span,
                            "unsupported Fortran: deferred-shape component (ALLOCATABLE or POINTER)",
                        );
                        continue;
                    }
                }
                if comps.iter().any(|c: &Component| c.name == e.name.text) {
                    self.error(
                        e.name.span,
                        format!(
                            "component `{}` of type `{}` is declared twice",
                            e.name.text, def.name.text
                        ),
                    );
                    continue;
                }
                let mut cty = cty.clone();
                if let (CompType::Plain(ti), Some(l)) = (&mut cty, &e.char_len) {
                    ti.char_len = self.char_len(l);
                }
                // An ALLOCATABLE CHARACTER component of constant length is
                // held as a deferred-length string keeping that length.
                let mut fixed_len = None;
                if let (CompType::Plain(ti), Some(_)) = (&mut cty, allocatable) {
                    if let (Type::Char, CharLenInfo::Const(n)) = (ti.ty, &ti.char_len) {
                        fixed_len = u16::try_from(*n).ok();
                        ti.char_len = CharLenInfo::Deferred;
                    }
                }
                let string_rank = dims.as_ref().map_or(0, Vec::len);
                if matches!(&cty, CompType::Plain(ti) if ti.char_len == CharLenInfo::Deferred)
                    && (allocatable.is_none() || string_rank > 1)
                {
                    self.error(
                        e.name.span,
                        format!(
                            "unsupported Fortran: deferred-length CHARACTER component `{}` (`character(len=:)`) that is not ALLOCATABLE, or of rank above 1",
                            e.name.text
                        ),
                    );
                    continue;
                }
                comps.push(Component {
                    name: e.name.text.clone(),
                    ty: cty,
                    dims,
                    init: e.init.clone(),
                    allocatable: allocatable.is_some(),
                    fixed_len,
                });
            }
        }
        if let Some(public) = def.access {
            self.set_access(&def.name, public);
        }
        self.scope.types.insert(
            def.name.text.clone(),
            DerivedType {
                name: def.name.text.clone(),
                comps,
                parent,
            },
        );
    }

    /// An INTERFACE block: a generic name with its specifics, or the
    /// abstract interfaces of an ABSTRACT INTERFACE block. An explicit
    /// interface of a dummy argument declares a dummy procedure (as
    /// `procedure(iface)` does); explicit interfaces of external procedures
    /// need nothing (the procedures are compiled with the program and
    /// checked at each call).
    fn interface(&mut self, block: &InterfaceBlock) {
        if block.is_abstract {
            if let Some(g) = &block.generic {
                self.error(g.span, "an ABSTRACT INTERFACE has no generic name");
            }
            for body in &block.bodies {
                let iface = self.abstract_interface(body);
                self.scope.interfaces.insert(iface.name.clone(), iface);
            }
            if let Some(n) = block.procedures.first() {
                self.error(n.span, "MODULE PROCEDURE in an ABSTRACT INTERFACE");
            }
            return;
        }
        let Some(g) = &block.generic else {
            for body in &block.bodies {
                if self
                    .scope
                    .var(&body.name.text)
                    .is_some_and(|v| v.arg.is_some())
                {
                    let iface = self.abstract_interface(body);
                    self.declare_dummy_procedure(&body.name, &iface);
                } else {
                    // An external procedure's interface, for `procedure(name)`:
                    // the procedure itself is checked where it is compiled.
                    let host = self.scope.clone();
                    let outer = Outer {
                        host: Some(&host),
                        modules: self.outer.modules,
                        module: self.outer.module,
                    };
                    let iface = procedure_interface(body, &outer, &mut Vec::new());
                    self.scope.specifics.insert(iface.name.clone(), iface);
                }
            }
            if let Some(n) = block.procedures.first() {
                self.error(
                    n.span,
                    "MODULE PROCEDURE in an INTERFACE block without a generic name",
                );
            }
            return;
        };
        let mut specifics: Vec<String> = match self.scope.syms.get(&g.text) {
            Some(Sym::Generic(s)) => s.clone(),
            _ => Vec::new(),
        };
        specifics.extend(block.bodies.iter().map(|b| b.name.text.clone()));
        specifics.extend(block.procedures.iter().map(|n| n.text.clone()));
        self.scope
            .syms
            .insert(g.text.clone(), Sym::Generic(specifics));
    }

    /// The interface an abstract interface body describes: its arguments'
    /// types and ranks and its result type, resolved with the names this
    /// unit sees (kinds, types: what IMPORT would bring in).
    fn abstract_interface(&mut self, body: &Procedure) -> Interface {
        let host = self.scope.clone();
        procedure_interface(
            body,
            &Outer {
                host: Some(&host),
                modules: self.outer.modules,
                module: self.outer.module,
            },
            self.diags,
        )
    }

    /// The abstract interface of a name, or the interface of a specific
    /// procedure with an explicit interface (here, in the host or the
    /// module).
    fn find_interface(&self, name: &str) -> Option<Interface> {
        self.scope
            .interfaces
            .get(name)
            .or_else(|| self.outer.host.and_then(|h| h.interfaces.get(name)))
            .or_else(|| self.outer.module.and_then(|m| m.interfaces.get(name)))
            .or_else(|| self.scope.specifics.get(name))
            .or_else(|| self.outer.host.and_then(|h| h.specifics.get(name)))
            .or_else(|| self.outer.module.and_then(|m| m.specifics.get(name)))
            .cloned()
    }

    /// `procedure(iface) [, attrs] :: names`: procedures with an abstract
    /// interface, declared as EXTERNAL (dummy procedures, specialized per
    /// procedure passed, which is checked against the interface).
    fn procedure_decl(
        &mut self,
        interface: Option<&Name>,
        attrs: &[Attr],
        names: &[Name],
        span: Span,
    ) {
        for a in attrs {
            match a {
                Attr::Intent(_) | Attr::Access(_) => {}
                Attr::Other(n) if n.text == "pointer" => {
                    return self.error(
                        n.span,
                        "unsupported Fortran: procedure pointer (PROCEDURE(...), POINTER)",
                    );
                }
                Attr::Other(n) => {
                    return self.error(
                        n.span,
                        format!(
                            "unsupported Fortran: {} attribute of a PROCEDURE declaration",
                            n.text.to_uppercase()
                        ),
                    );
                }
                Attr::Optional => {
                    for n in names {
                        self.scope.optional_procs.insert(n.text.clone());
                    }
                }
                _ => return self.error(span, "unsupported attribute of a PROCEDURE declaration"),
            }
        }
        let Some(iface_name) = interface else {
            return self.error(
                span,
                "unsupported Fortran: PROCEDURE() without an interface",
            );
        };
        let Some(iface) = self.find_interface(&iface_name.text) else {
            return self.error(
                iface_name.span,
                format!(
                    "`{}` is neither an abstract interface nor a procedure with an explicit interface",
                    iface_name.text
                ),
            );
        };
        for n in names {
            self.declare_dummy_procedure(n, &iface);
        }
    }

    /// Declares `n` a procedure with interface `iface` (EXTERNAL: a dummy
    /// procedure, specialized per procedure passed).
    fn declare_dummy_procedure(&mut self, n: &Name, iface: &Interface) {
        if self
            .scope
            .var(&n.text)
            .is_some_and(|v| v.ty.is_some() || v.dims.is_some())
        {
            return self.error(n.span, format!("`{}` is declared twice", n.text));
        }
        if let Some(ty) = iface.result {
            self.scope
                .proc_types
                .insert(n.text.clone(), TypeInfo::plain(ty));
        }
        self.scope
            .proc_interfaces
            .insert(n.text.clone(), iface.clone());
        self.scope
            .syms
            .insert(n.text.clone(), Sym::External(n.span));
    }

    /// A declaration of derived-type variables: each becomes one variable
    /// per leaf component.
    fn derived_decl(
        &mut self,
        ty: &TypeSpec,
        type_name: &Name,
        attrs: &[Attr],
        entities: &[Entity],
    ) {
        let Some(def) = self.find_type(&type_name.text) else {
            self.error(
                type_name.span,
                format!("unknown derived type `{}`", type_name.text),
            );
            return;
        };
        let (mut intent, mut save, mut access, mut optional) = (None, false, None, false);
        let mut protected = false;
        let (mut all_dims, mut allocatable) = (None, None);
        for a in attrs {
            match a {
                Attr::Other(n) if n.text == "allocatable" => allocatable = Some(n.span),
                Attr::Intent(i) => intent = Some(*i),
                Attr::Save => save = true,
                Attr::Access(p) => access = Some(*p),
                Attr::Dimension(d) => all_dims = Some(d.clone()),
                Attr::Optional => optional = true,
                // No POINTER is supported: TARGET changes nothing; an
                // assumed-shape dummy is always given contiguous storage
                // (a strided section goes through a temporary), so
                // CONTIGUOUS changes nothing either; PROTECTED only forbids
                // what a valid program does not do (the Fortran back end
                // needs to know it: it may not define such a variable).
                Attr::Other(n) if n.text == "protected" => protected = true,
                Attr::Other(n) if matches!(n.text.as_str(), "target" | "contiguous") => {}
                Attr::Parameter => {
                    self.error(ty.span, "unsupported Fortran: derived-type PARAMETER");
                    return;
                }
                Attr::Other(n) => {
                    self.error(
                        n.span,
                        format!("unsupported Fortran: {} attribute", n.text.to_uppercase()),
                    );
                    return;
                }
                Attr::External | Attr::Intrinsic => {
                    self.error(ty.span, "invalid attribute for a derived-type variable");
                    return;
                }
            }
        }
        for e in entities {
            let dims = e.dims.clone().or_else(|| all_dims.clone());
            if let Some(init) = &e.init {
                self.error(
                    init.span,
                    "unsupported Fortran: initializer of a derived-type variable (give component defaults)",
                );
                continue;
            }
            if let Some(p) = access {
                self.set_access(&e.name, p);
            }
            if protected {
                self.scope.protected.insert(e.name.text.clone());
            }
            let arg = self.scope.var(&e.name.text).and_then(|v| v.arg);
            let template = VarDecl {
                intent,
                save,
                arg,
                optional,
                ..VarDecl::new(e.name.span)
            };
            let mut leaves = Vec::new();
            let mut template = template;
            match (allocatable, &dims) {
                (Some(at), Some(d)) => {
                    if !self.allocatable_structures(&e.name.text, &def, d, at) {
                        continue;
                    }
                    template.allocatable = Some(at);
                }
                (Some(at), None) if !self.allocatable_scalar(&e.name, at, intent) => continue,
                _ => {}
            }
            self.flatten(&e.name.text, &def, &template, &dims, &mut leaves, 0);
            self.scope.syms.insert(
                e.name.text.clone(),
                Sym::Struct(StructDecl {
                    type_name: def.name.clone(),
                    leaves,
                    dims,
                }),
            );
        }
    }

    /// Declares the leaf components of `prefix` (of type `def`; an array
    /// of structures when `dims` is given: each leaf is an array with the
    /// component's dimensions, then `dims`).
    fn flatten(
        &mut self,
        prefix: &str,
        def: &DerivedType,
        template: &VarDecl,
        dims: &Option<Vec<DimSpec>>,
        leaves: &mut Vec<String>,
        depth: usize,
    ) {
        if depth > 16 {
            self.error(template.span, "derived types nested too deeply");
            return;
        }
        let start = leaves.len();
        for c in &def.comps {
            let name = format!("{prefix}%{}", c.name);
            match &c.ty {
                CompType::Plain(ti) => {
                    // A deferred-length string is an ALLOCATABLE array of
                    // characters (`deferred_string_shape`), without a
                    // status leaf.
                    if ti.char_len == CharLenInfo::Deferred && dims.is_some() {
                        self.error(
                            template.span,
                            format!(
                                "unsupported Fortran: the deferred-length CHARACTER component `{name}` of an array of structures"
                            ),
                        );
                        continue;
                    }
                    let scalar = c.is_allocatable_scalar();
                    if let (false, true, Some(d)) = (scalar, c.allocatable, dims) {
                        self.ragged_component(&name, ti, c, d, template, leaves);
                        continue;
                    }
                    let (leaf_dims, component_dims) = match (&c.dims, dims) {
                        // A leaf of an ALLOCATABLE array of structures:
                        // deferred shape, the component's bounds kept for
                        // ALLOCATE.
                        (Some(own), Some(d)) if template.allocatable.is_some() => {
                            let deferred = DimSpec::AssumedShape { lower: None };
                            (Some(vec![deferred; own.len() + d.len()]), Some(own.clone()))
                        }
                        (Some(c), Some(d)) => (Some(c.iter().chain(d).cloned().collect()), None),
                        (c, d) => (c.clone().or_else(|| d.clone()), None),
                    };
                    let v = VarDecl {
                        ty: Some(ti.clone()),
                        dims: leaf_dims,
                        component_dims,
                        default_init: c.init.clone(),
                        allocatable: (c.allocatable && !scalar)
                            .then_some(template.span)
                            .or(template.allocatable),
                        fixed_len: c.fixed_len,
                        ..template.clone()
                    };
                    self.scope.syms.insert(name.clone(), Sym::Var(v));
                    leaves.push(name.clone());
                    if scalar {
                        self.status_leaf(&name, dims, template, leaves);
                    }
                }
                CompType::Derived(t) => {
                    let Some(inner) = self.find_type(t) else {
                        continue;
                    };
                    let mut sub = Vec::new();
                    if let (true, Some(d)) = (c.allocatable, &c.dims) {
                        // An ALLOCATABLE array of structures component.
                        if dims.is_some() {
                            self.error(
                                template.span,
                                format!(
                                    "unsupported Fortran: the ALLOCATABLE array of structures component `{name}` of an array of structures"
                                ),
                            );
                            continue;
                        }
                        if !self.allocatable_structures(&name, &inner, d, template.span) {
                            continue;
                        }
                        let template = VarDecl {
                            allocatable: Some(template.span),
                            ..template.clone()
                        };
                        self.flatten(&name, &inner, &template, &c.dims, &mut sub, depth + 1);
                        leaves.extend(sub.iter().cloned());
                        self.scope.syms.insert(
                            name,
                            Sym::Struct(StructDecl {
                                type_name: inner.name.clone(),
                                leaves: sub,
                                dims: c.dims.clone(),
                            }),
                        );
                        continue;
                    }
                    // A fixed-size array of structures component
                    // (`type(layer) :: layers(4)`): an array of structures
                    // of the component's dimensions, followed by those of
                    // the enclosing array of structures (`ms(i)%layers(j)%w`
                    // is `ms%layers%w(j, i)`).
                    let nested;
                    let dims = match (&c.dims, dims) {
                        (Some(own), Some(outer)) => {
                            if own.len() + outer.len() > 7 {
                                self.error(
                                    template.span,
                                    format!(
                                        "the array of structures component `{name}` of an array of structures has more than 7 dimensions with the array's"
                                    ),
                                );
                                continue;
                            }
                            nested = Some(own.iter().chain(outer).cloned().collect());
                            &nested
                        }
                        (Some(_), None) => &c.dims,
                        (None, _) => dims,
                    };
                    self.flatten(&name, &inner, template, dims, &mut sub, depth + 1);
                    leaves.extend(sub.iter().cloned());
                    if c.allocatable {
                        self.status_leaf(&name, dims, template, leaves);
                    }
                    self.scope.syms.insert(
                        name,
                        Sym::Struct(StructDecl {
                            type_name: inner.name.clone(),
                            leaves: sub,
                            dims: dims.clone(),
                        }),
                    );
                }
            }
        }
        let own = leaves[start..].to_vec();
        self.parent_views(prefix, def, &own, dims);
    }

    fn parameter(&mut self, name: &Name, value: &Expr) {
        /// An integer literal.
        fn int_literal(value: i64, span: Span) -> Expr {
            Expr {
                kind: ExprKind::Int { value, kind: None },
                span,
            }
        }
        if let Some(v) = self.scope.var(&name.text).filter(|v| v.dims.is_some()) {
            // An array PARAMETER: read-only SAVEd storage initialized like
            // an initialized variable.
            let assumed_len = matches!(
                v.ty,
                Some(TypeInfo {
                    char_len: CharLenInfo::Assumed,
                    ..
                })
            );
            let implied: Option<Vec<Option<Expr>>> = v.dims.as_deref().and_then(|ds| {
                ds.iter()
                    .map(|d| match d {
                        DimSpec::AssumedSize { lower } => Some(lower.clone()),
                        _ => None,
                    })
                    .collect()
            });
            if let Some(lowers) = implied {
                // `c(*)`: as many elements as the constructor gives;
                // `c(*, *)`: the extents of the RESHAPE giving the value.
                let lookup = |n: &str| self.lookup_const(n);
                let extents = match super::consts::reshape_args(value) {
                    Some((_, shape)) => super::consts::fold_shape(shape, &lookup),
                    None if lowers.len() > 1 => Err(super::consts::NotConst {
                        span: value.span,
                        message: format!(
                            "the value of `{}`, of implied shape of rank {}, must be a RESHAPE with a constant shape",
                            name.text,
                            lowers.len()
                        ),
                    }),
                    None => super::consts::fold_elements(
                        value,
                        &lookup,
                        super::consts::MAX_INITIAL_VALUES,
                    )
                    .map(|v| vec![v.len() as i64]),
                };
                let extents = match extents {
                    Ok(e) if e.len() == lowers.len() => e,
                    Ok(e) => {
                        self.error(
                            value.span,
                            format!(
                                "`{}` has rank {}, its value rank {}",
                                name.text,
                                lowers.len(),
                                e.len()
                            ),
                        );
                        return;
                    }
                    Err(nc) => {
                        self.error(nc.span, nc.message);
                        return;
                    }
                };
                let dims = lowers
                    .into_iter()
                    .zip(extents)
                    .map(|(lower, n)| {
                        let upper = match &lower {
                            Some(lo) => Expr {
                                kind: ExprKind::Binary(
                                    BinOp::Add,
                                    Box::new(lo.clone()),
                                    Box::new(int_literal(n - 1, value.span)),
                                ),
                                span: value.span,
                            },
                            None => int_literal(n, value.span),
                        };
                        DimSpec::Explicit { lower, upper }
                    })
                    .collect();
                self.var_mut(name).dims = Some(dims);
            } else if v
                .dims
                .iter()
                .flatten()
                .any(|d| !matches!(d, DimSpec::Explicit { .. }))
            {
                self.error(
                    name.span,
                    format!(
                        "unsupported Fortran: array PARAMETER `{}` of implied shape",
                        name.text
                    ),
                );
                return;
            }
            if assumed_len {
                // `character(len=*), parameter :: h(2) = [...]`: the
                // length of the value's strings.
                let lookup = |n: &str| self.lookup_const(n);
                let first =
                    super::consts::fold_elements(value, &lookup, super::consts::MAX_INITIAL_VALUES)
                        .map(|v| v.into_iter().next());
                let len = match first {
                    Ok(Some(ConstVal::Str(text))) => text.len() as i64,
                    Ok(_) => {
                        self.error(
                            value.span,
                            format!(
                                "the value of `{}`, a CHARACTER PARAMETER of assumed length, must be character strings",
                                name.text
                            ),
                        );
                        return;
                    }
                    Err(nc) => {
                        self.error(nc.span, nc.message);
                        return;
                    }
                };
                if let Some(ti) = &mut self.var_mut(name).ty {
                    ti.char_len = CharLenInfo::Const(len);
                }
            }
            let v = self.var_mut(name);
            v.init = Some(value.clone());
            v.save = true;
            v.constant = true;
            return;
        }
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
        if let BaseType::Derived(n) = &ty.base {
            return self.derived_decl(ty, n, attrs, entities);
        }
        let Some(ti) = self.type_info(ty) else { return };
        let mut dims = None;
        let (mut is_param, mut save, mut external, mut intent) = (false, false, false, None);
        let (mut optional, mut access, mut allocatable, mut value) = (false, None, None, None);
        let mut protected = false;
        for a in attrs {
            match a {
                Attr::Other(n) if n.text == "allocatable" => allocatable = Some(n.span),
                Attr::Other(n) if n.text == "value" => value = Some(n.span),
                // No POINTER is supported: TARGET changes nothing; an
                // assumed-shape dummy is always given contiguous storage
                // (a strided section goes through a temporary), so
                // CONTIGUOUS changes nothing either; PROTECTED only forbids
                // what a valid program does not do (the Fortran back end
                // needs to know it: it may not define such a variable).
                Attr::Other(n) if n.text == "protected" => protected = true,
                Attr::Other(n) if matches!(n.text.as_str(), "target" | "contiguous") => {}
                Attr::Dimension(d) => dims = Some(d.clone()),
                Attr::Intent(i) => intent = Some(*i),
                Attr::Parameter => is_param = true,
                Attr::Save => save = true,
                Attr::External => external = true,
                Attr::Intrinsic => {}
                Attr::Optional => optional = true,
                Attr::Access(p) => access = Some(*p),
                Attr::Other(n) => {
                    self.error(
                        n.span,
                        format!("unsupported Fortran: {} attribute", n.text.to_uppercase()),
                    );
                }
            }
        }
        for e in entities {
            if let Some(p) = access {
                self.set_access(&e.name, p);
            }
            if protected {
                self.scope.protected.insert(e.name.text.clone());
            }
            let mut eti = ti.clone();
            if let Some(l) = &e.char_len {
                eti.char_len = self.char_len(l);
            }
            if external {
                self.scope.proc_types.insert(e.name.text.clone(), eti);
                self.external(&e.name);
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
                let v = self.var_mut(&e.name);
                v.ty = Some(eti);
                if let Some(d) = e.dims.clone().or_else(|| dims.clone()) {
                    v.span = e.name.span;
                    v.dims = Some(d);
                }
                self.parameter(&e.name, init);
                continue;
            }
            let was_external = matches!(self.scope.syms.get(&e.name.text), Some(Sym::External(_)));
            if was_external {
                self.scope.proc_types.insert(e.name.text.clone(), eti);
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
            if optional {
                v.optional = true;
            }
            if value.is_some() {
                v.value = value;
            }
            if save {
                v.save = true;
            }
            let scalar = v.dims.is_none();
            if allocatable.is_some() {
                v.allocatable = allocatable;
            }
            if let Some(init) = &e.init {
                v.init = Some(init.clone());
                v.save = true;
            }
            let deferred = matches!(
                v.ty,
                Some(TypeInfo {
                    char_len: CharLenInfo::Deferred,
                    ..
                })
            );
            // (A CHARACTER ALLOCATABLE of constant length is held as a
            // deferred-length string: `deferred_string_shape`.)
            let string = deferred
                || matches!(
                    v.ty,
                    Some(TypeInfo {
                        ty: Type::Char,
                        char_len: CharLenInfo::Const(_),
                    })
                );
            let rank = v.dims.as_ref().map_or(0, Vec::len);
            if deferred && rank > 1 && !v.string_buffer {
                self.error(
                    e.name.span,
                    format!(
                        "unsupported Fortran: deferred-length CHARACTER array `{}` of rank {rank}",
                        e.name.text
                    ),
                );
            }
            if let (Some(span), true, false) = (allocatable, scalar, string) {
                self.allocatable_scalar(&e.name, span, None);
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
        for (name, s) in &mut self.scope.syms {
            if let Sym::Var(v) = s {
                if let Some(why) = deferred_string_shape(name, v) {
                    errors.push((v.span, why));
                }
                if v.arg.is_none() && v.intent.is_some() {
                    errors.push((
                        v.span,
                        format!("INTENT given for `{name}`, which is not a dummy argument"),
                    ));
                }
                if v.arg.is_none() && v.optional {
                    errors.push((
                        v.span,
                        format!("OPTIONAL given for `{name}`, which is not a dummy argument"),
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

/// Gives a deferred-length CHARACTER variable (`character(len=:),
/// allocatable :: s`) its storage, a rank-1 ALLOCATABLE array of
/// one-character elements (`sema::deferred_chars`; a dummy argument is
/// passed by descriptor, `sema::alloc_param`); a rank-1 array of such
/// strings (`names(:)`, a dummy argument too), a rank-2 one, the
/// characters of each string along its first dimension. An assumed-length
/// assumed-shape dummy `character(len=*) :: a(:)` takes the same form,
/// not ALLOCATABLE: a rank-2 assumed-shape array of characters, its
/// length the hidden extent of its first dimension. The reason when the
/// declaration is not one this supports (not ALLOCATABLE; arrays of
/// higher rank are refused where declared). A module variable's imported
/// copy already has its storage's dimensions.
fn deferred_string_shape(name: &str, v: &mut VarDecl) -> Option<String> {
    if let (Some(_), Some(t), false) = (v.allocatable, v.ty.as_mut(), v.string_buffer) {
        if let (Type::Char, CharLenInfo::Const(n)) = (t.ty, &t.char_len) {
            v.fixed_len = u16::try_from(*n).ok();
            t.char_len = CharLenInfo::Deferred;
            if v.dims.as_ref().is_some_and(|d| d.len() > 1) {
                return Some(format!(
                    "unsupported Fortran: the ALLOCATABLE CHARACTER array `{name}` of rank above 1"
                ));
            }
        }
    }
    if is_assumed_string_array_dummy(v) {
        if let Some(t) = v.ty.as_mut() {
            t.char_len = CharLenInfo::Deferred;
        }
        v.dims
            .get_or_insert_with(Vec::new)
            .insert(0, DimSpec::AssumedShape { lower: None });
        v.string_buffer = true;
        return None;
    }
    if !matches!(
        v.ty,
        Some(TypeInfo {
            char_len: CharLenInfo::Deferred,
            ..
        })
    ) {
        return None;
    }
    if v.allocatable.is_none() {
        return Some(format!(
            "deferred-length CHARACTER `{name}` (`character(len=:)`) must be ALLOCATABLE (POINTER is not supported)"
        ));
    }
    if v.string_buffer {
        return None;
    }
    v.dims
        .get_or_insert_with(Vec::new)
        .insert(0, DimSpec::AssumedShape { lower: None });
    v.string_buffer = true;
    None
}

/// Whether `v` declares an assumed-length CHARACTER dummy argument of
/// assumed shape and rank 1, `character(len=*) :: a(:)`, not yet given
/// its buffer form.
fn is_assumed_string_array_dummy(v: &VarDecl) -> bool {
    v.arg.is_some()
        && !v.string_buffer
        && v.allocatable.is_none()
        && matches!(
            v.ty,
            Some(TypeInfo {
                ty: Type::Char,
                char_len: CharLenInfo::Assumed,
                ..
            })
        )
        && matches!(v.dims.as_deref(), Some([DimSpec::AssumedShape { .. }]))
}

/// The names a type or DIMENSION declaration declares.
fn declared_names(d: &DeclKind) -> Vec<&Name> {
    match d {
        DeclKind::Type { entities, .. }
        | DeclKind::Dimension(entities)
        | DeclKind::Allocatable(entities) => entities.iter().map(|e| &e.name).collect(),
        DeclKind::Parameter(pairs) => pairs.iter().map(|(n, _)| n).collect(),
        _ => Vec::new(),
    }
}

/// True for the symbols USE makes visible.
fn importable(s: &Sym) -> bool {
    matches!(
        s,
        Sym::Var(_) | Sym::Const(_) | Sym::Struct(_) | Sym::Generic(_) | Sym::ProcAlias(_)
    )
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
