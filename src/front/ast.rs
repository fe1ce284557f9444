//! The syntax tree of the supported Fortran subset, as the parser builds it.
//!
//! It knows Fortran syntax; of the IR it uses only source spans.
//!
//! The tree is purely syntactic: names are lower-cased but unresolved (an
//! `a(i)` may be an array element, a function call or an intrinsic), types
//! and kinds are unchecked. Semantic analysis ([`super::sema`]) resolves it.
//! Labelled DO loops are already nested here (the parser matches terminal
//! labels), so every DO has a body.

pub use adjit_ir::Span;
use smallvec::SmallVec;

/// A lower-cased identifier with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    /// The identifier, lower case.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// One parsed source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Index of the file in the source map (also [`Span::file`]).
    pub file: u32,
    /// Program units in source order.
    pub units: Vec<ProgramUnit>,
}

/// A top-level program unit.
// The tree is built once per parse and walked by reference; boxing the
// larger variants would trade one allocation per node for the padding.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum ProgramUnit {
    /// SUBROUTINE or FUNCTION (or a main PROGRAM, kind [`ProcKind::Program`]).
    Procedure(Procedure),
    /// MODULE.
    Module(ModuleUnit),
}

/// What kind of procedure.
// The tree is built once per parse and walked by reference; boxing the
// larger variants would trade one allocation per node for the padding.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ProcKind {
    /// SUBROUTINE.
    Subroutine,
    /// FUNCTION, with an optional type prefix (`double precision function f`)
    /// and an optional `result(name)`.
    Function {
        /// Type given before the FUNCTION keyword.
        prefix_type: Option<TypeSpec>,
        /// The RESULT variable, when named.
        result: Option<Name>,
    },
    /// A main PROGRAM (accepted so that files with a driver parse; never an
    /// entry point of the engine).
    Program,
    /// BLOCK DATA: declarations and DATA for COMMON blocks only; its DATA
    /// gives the blocks' initial values, and it is no procedure.
    BlockData,
}

/// A subroutine or function, with its specification part, executable part
/// and contained (internal or module) procedures.
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    /// Subroutine or function.
    pub kind: ProcKind,
    /// Its name.
    pub name: Name,
    /// Dummy argument names, in order.
    pub args: Vec<Name>,
    /// Specification statements, in order.
    pub decls: Vec<Decl>,
    /// Executable statements, in order.
    pub body: Vec<Stmt>,
    /// FORMAT statements, in order.
    pub formats: Vec<FormatStmt>,
    /// Procedures after CONTAINS, and nested subprograms.
    pub contains: Vec<Procedure>,
    /// A nested subprogram (FARFEL, seed 002): defined among its host's
    /// specification statements rather than after CONTAINS; implicitly
    /// typed variables it does not declare belong to the top-level
    /// subprogram.
    pub nested: bool,
    /// Position of the SUBROUTINE / FUNCTION keyword.
    pub span: Span,
    /// Declared ELEMENTAL (the PURE, IMPURE and RECURSIVE prefixes are
    /// accepted and change nothing).
    pub elemental: bool,
    /// For the procedure of an ENTRY statement: the procedure holding the
    /// statement, whose SAVE variables it shares (see [`crate::front::entry`]).
    pub entry_of: Option<Name>,
}

/// A labelled FORMAT statement.
#[derive(Clone, Debug, PartialEq)]
pub struct FormatStmt {
    /// Its label.
    pub label: u32,
    /// The format specification, from its opening parenthesis on
    /// (lower-cased outside character literals).
    pub text: String,
    /// Where the statement starts.
    pub span: Span,
}

/// A MODULE: declarations and module procedures.
#[derive(Clone, Debug)]
pub struct ModuleUnit {
    /// Its name.
    pub name: Name,
    /// Specification statements.
    pub decls: Vec<Decl>,
    /// Module procedures after CONTAINS.
    pub contains: Vec<Procedure>,
    /// Position of the MODULE keyword.
    pub span: Span,
}

/// The intrinsic type keywords (and the rejected ones, kept so that sema can
/// name them in an error).
#[derive(Clone, Debug, PartialEq)]
pub enum BaseType {
    /// INTEGER.
    Integer,
    /// REAL.
    Real,
    /// DOUBLE PRECISION.
    DoublePrecision,
    /// LOGICAL.
    Logical,
    /// CHARACTER.
    Character,
    /// COMPLEX / DOUBLE COMPLEX (rejected by sema).
    Complex,
    /// TYPE(name) (rejected by sema).
    Derived(Name),
}

/// A type specification: `real(kind=8)`, `integer*8`, `character(len=10)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpec {
    /// The keyword.
    pub base: BaseType,
    /// The kind: `(8)`, `(kind=dp)`, or `*8` (stored as an integer literal).
    pub kind: Option<Expr>,
    /// The CHARACTER length: `(len=10)`, `(10)`, `*10`, `*(*)`.
    pub len: Option<CharLen>,
    /// Position of the keyword.
    pub span: Span,
}

/// A CHARACTER length.
#[derive(Clone, Debug, PartialEq)]
pub enum CharLen {
    /// An explicit length expression.
    Expr(Expr),
    /// `*`: assumed from the actual argument.
    Assumed,
    /// `:`: deferred (an ALLOCATABLE scalar takes the length it is
    /// allocated or assigned with).
    Deferred,
}

/// Variable attributes in a type declaration statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// DIMENSION(...).
    Dimension(Vec<DimSpec>),
    /// INTENT(IN / OUT / INOUT).
    Intent(Intent),
    /// PARAMETER.
    Parameter,
    /// SAVE.
    Save,
    /// EXTERNAL.
    External,
    /// INTRINSIC.
    Intrinsic,
    /// OPTIONAL.
    Optional,
    /// PUBLIC (true) or PRIVATE (false).
    Access(bool),
    /// Any other attribute (ALLOCATABLE, POINTER, TARGET, OPTIONAL, ...),
    /// rejected by sema with its name.
    Other(Name),
}

/// INTENT values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    /// INTENT(IN).
    In,
    /// INTENT(OUT).
    Out,
    /// INTENT(INOUT) / INTENT(IN OUT).
    InOut,
}

/// One dimension in an array declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum DimSpec {
    /// `upper` or `lower:upper`.
    Explicit {
        /// Lower bound (default 1).
        lower: Option<Expr>,
        /// Upper bound.
        upper: Expr,
    },
    /// `*` or `lower:*` (assumed size).
    AssumedSize {
        /// Lower bound (default 1).
        lower: Option<Expr>,
    },
    /// `:` or `lower:` (assumed or deferred shape).
    AssumedShape {
        /// Lower bound (default 1).
        lower: Option<Expr>,
    },
}

/// One entity of a declaration: `a(10)*8 = 1.0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// The declared name.
    pub name: Name,
    /// Dimensions given on the entity.
    pub dims: Option<Vec<DimSpec>>,
    /// A CHARACTER length given on the entity (`c*10`).
    pub char_len: Option<CharLen>,
    /// Initializer (`= expr`, or the value of a PARAMETER).
    pub init: Option<Expr>,
}

/// One `/name/ member, member(10), ...` group of a COMMON statement.
#[derive(Clone, Debug, PartialEq)]
pub struct CommonGroup {
    /// The block name; `None` for blank COMMON.
    pub block: Option<Name>,
    /// The members, in storage order (dimensions may be given here).
    pub members: Vec<Entity>,
}

/// One `object-list / value-list /` group of a DATA statement.
#[derive(Clone, Debug, PartialEq)]
pub struct DataGroup {
    /// The objects (variables, elements, implied DO loops as
    /// [`ExprKind::ImpliedDo`]).
    pub objects: Vec<Expr>,
    /// `(repeat, value)` pairs: `3*0.0` has repeat 3.
    pub values: Vec<(Option<Expr>, Expr)>,
}

/// A specification statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// What it declares.
    pub kind: DeclKind,
    /// Where the statement starts.
    pub span: Span,
}

/// The kinds of specification statement.
#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    /// USE module [, ONLY: names] or USE module, renames.
    Use {
        /// The module.
        module: Name,
        /// The ONLY list (`None`: everything), as `(local, module)` name
        /// pairs (the same name twice when not renamed).
        only: Option<Vec<(Name, Name)>>,
        /// Renames without ONLY (`use m, b => c`): `(local, module)`.
        renames: Vec<(Name, Name)>,
    },
    /// PUBLIC / PRIVATE, with names or alone (the default accessibility).
    Access {
        /// PUBLIC (true) or PRIVATE (false).
        public: bool,
        /// The names (empty: sets the module's default).
        names: Vec<Name>,
    },
    /// OPTIONAL names.
    Optional(Vec<Name>),
    /// VALUE names (dummy arguments passed by value).
    Value(Vec<Name>),
    /// IMPORT [names] in an interface body (host names are visible in
    /// interface bodies anyway).
    Import(Vec<Name>),
    /// The declarations of a BLOCK construct, hoisted into its procedure
    /// (a name may not shadow one the procedure declares).
    Block(Vec<Decl>),
    /// `module procedure a, b` (inside a generic INTERFACE block).
    ModuleProcedure(Vec<Name>),
    /// An INTERFACE block.
    Interface(InterfaceBlock),
    /// A derived TYPE definition.
    TypeDef(TypeDef),
    /// IMPLICIT NONE.
    ImplicitNone,
    /// IMPLICIT type (letter ranges), ...
    Implicit(Vec<(TypeSpec, Vec<(char, char)>)>),
    /// A type declaration statement.
    Type {
        /// The type.
        ty: TypeSpec,
        /// Attributes after the type.
        attrs: Vec<Attr>,
        /// Declared entities.
        entities: Vec<Entity>,
    },
    /// DIMENSION a(10), b(n).
    Dimension(Vec<Entity>),
    /// ALLOCATABLE [::] a(:), b(:, :), c (the shape, when not given here,
    /// comes from another declaration).
    Allocatable(Vec<Entity>),
    /// PARAMETER (a = 1, b = 2).
    Parameter(Vec<(Name, Expr)>),
    /// SAVE with a list of names (empty: everything).
    Save(Vec<Name>),
    /// SAVE naming COMMON blocks (`save /blk/, x`): the blocks, then the
    /// variables. COMMON storage is static, so the blocks need nothing.
    SaveCommon(Vec<Name>, Vec<Name>),
    /// COMMON statement: blocks (`None` is blank COMMON) and their members
    /// in storage order, a block possibly named several times.
    Common(Vec<CommonGroup>),
    /// EXTERNAL names.
    External(Vec<Name>),
    /// `procedure(iface) [, attrs] :: names`: procedures (dummy
    /// procedures, as a rule) with the interface `iface`.
    Procedure {
        /// The interface named (`None` for `procedure()`).
        interface: Option<Name>,
        /// The attributes after it (POINTER is kept as [`Attr::Other`]).
        attrs: Vec<Attr>,
        /// The declared names.
        names: Vec<Name>,
    },
    /// INTRINSIC names.
    Intrinsic(Vec<Name>),
    /// INTENT(...) names.
    Intent(Intent, Vec<Name>),
    /// DATA statement.
    Data(Vec<DataGroup>),
    /// EQUIVALENCE statement: sets of objects (names, array elements with
    /// constant subscripts, substrings) that share their first storage unit.
    Equivalence(Vec<Vec<Expr>>),
    /// A statement function `f(x, y) = expr`.
    StmtFunction {
        /// Its name.
        name: Name,
        /// Dummy names.
        args: Vec<Name>,
        /// The defining expression.
        body: Expr,
    },
    /// A specification statement the subset does not support (
    /// NAMELIST, INTERFACE, TYPE definitions, ...), kept so that sema
    /// reports it with its keyword.
    Unsupported(String),
}

/// An INTERFACE block: specific interface bodies and, for a generic
/// interface, the MODULE PROCEDURE names it includes.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceBlock {
    /// The generic name (`interface norm`); `None` for a block of explicit
    /// interfaces.
    pub generic: Option<Name>,
    /// ABSTRACT INTERFACE.
    pub is_abstract: bool,
    /// The interface bodies (procedures without executable statements).
    pub bodies: Vec<Procedure>,
    /// `module procedure a, b` / `procedure a, b` names.
    pub procedures: Vec<Name>,
}

/// A derived TYPE definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDef {
    /// The type name.
    pub name: Name,
    /// PUBLIC / PRIVATE given on the TYPE statement.
    pub access: Option<bool>,
    /// The parent type of an extended type (`type, extends(base) :: t`).
    pub extends: Option<Name>,
    /// The component declarations (type declaration statements).
    pub components: Vec<Decl>,
}

/// An executable statement with its optional label.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// Statement label (fixed-form columns 1-5, or a free-form leading number).
    pub label: Option<u32>,
    /// What it does.
    pub kind: StmtKind,
    /// Where the statement starts.
    pub span: Span,
}

/// The kinds of executable statement.
// The tree is built once per parse and walked by reference; boxing the
// larger variants would trade one allocation per node for the padding.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `target = value` (target: a name, element, section or substring).
    Assign {
        /// Left-hand side.
        target: Expr,
        /// Right-hand side.
        value: Expr,
    },
    /// Block IF with ELSE IF arms and an optional ELSE.
    If {
        /// Construct name.
        name: Option<Name>,
        /// `(condition, body)` for IF and each ELSE IF.
        arms: Vec<(Expr, Vec<Stmt>)>,
        /// The ELSE body.
        else_body: Option<Vec<Stmt>>,
    },
    /// Logical IF: `if (cond) stmt`.
    LogicalIf {
        /// The condition.
        cond: Expr,
        /// The guarded statement.
        stmt: Box<Stmt>,
    },
    /// Counted DO (block or labelled; the labelled terminal statement, when
    /// not CONTINUE, is the last statement of `body`).
    Do {
        /// Construct name.
        name: Option<Name>,
        /// The DO variable.
        var: Name,
        /// Initial value.
        start: Expr,
        /// Final value.
        end: Expr,
        /// Step (default 1).
        step: Option<Expr>,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// DO WHILE (cond).
    DoWhile {
        /// Construct name.
        name: Option<Name>,
        /// The condition, tested before each iteration.
        cond: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// DO without control (left by EXIT, GO TO or RETURN).
    DoForever {
        /// Construct name.
        name: Option<Name>,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// EXIT [construct-name].
    Exit(Option<Name>),
    /// CYCLE [construct-name].
    Cycle(Option<Name>),
    /// GO TO label.
    Goto(u32),
    /// GO TO (l1, l2, ...) index.
    ComputedGoto {
        /// Target labels, 1-based by `index`.
        labels: Vec<u32>,
        /// Selector; out of range falls through.
        index: Expr,
    },
    /// Arithmetic IF `IF (e) l1, l2, l3`: to `l1` when `e < 0`, `l2` when
    /// `e = 0`, `l3` when `e > 0`.
    ArithmeticIf {
        /// The integer or real expression tested.
        value: Expr,
        /// The three target labels.
        labels: [u32; 3],
    },
    /// CONTINUE.
    Continue,
    /// RETURN.
    Return,
    /// STOP [code or message].
    Stop(Option<Expr>),
    /// CALL name(args).
    Call {
        /// The subroutine.
        name: Name,
        /// Actual arguments.
        args: Vec<Arg>,
    },
    /// SELECT CASE.
    SelectCase {
        /// Construct name.
        name: Option<Name>,
        /// The selector expression.
        selector: Expr,
        /// CASE blocks in order; at most one is `CaseSelector::Default`.
        cases: Vec<(CaseSelector, Vec<Stmt>)>,
    },
    /// BLOCK construct: its declarations were moved to the procedure's
    /// ([`DeclKind::Block`]); the body stays here.
    Block {
        /// Construct name.
        name: Option<Name>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// ASSOCIATE (name => selector, ...) with its body.
    Associate {
        /// Construct name.
        name: Option<Name>,
        /// The associate names and their selectors.
        pairs: Vec<(Name, Expr)>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// PRINT, or WRITE to standard output (unit `*` or 6) or to an
    /// internal file.
    Write {
        /// The format.
        format: IoFormat,
        /// The output items (expressions and implied DO loops).
        items: Vec<Expr>,
        /// The internal file and IOSTAT= variable.
        control: IoControl,
    },
    /// READ from standard input (unit `*` or 5, list-directed) or from an
    /// internal file (list-directed or formatted).
    Read {
        /// The format.
        format: IoFormat,
        /// The input items (variables, elements, substrings, implied DO
        /// loops).
        items: Vec<Expr>,
        /// The internal file and IOSTAT= variable.
        control: IoControl,
    },
    /// WHERE construct or statement: masked array assignments.
    Where {
        /// Construct name.
        name: Option<Name>,
        /// `(mask, body)` for the WHERE and each masked ELSEWHERE.
        arms: Vec<(Expr, Vec<Stmt>)>,
        /// The body of an ELSEWHERE without a mask.
        else_body: Option<Vec<Stmt>>,
    },
    /// FORALL construct or statement, or DO CONCURRENT.
    Forall {
        /// Construct name.
        name: Option<Name>,
        /// True for DO CONCURRENT (the body runs once per index tuple, in
        /// any order; FORALL runs each statement for all index tuples
        /// before the next statement).
        concurrent: bool,
        /// The index specifications, outermost first as written.
        indices: Vec<ForallIndex>,
        /// The scalar mask.
        mask: Option<Expr>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// ALLOCATE (objects[, STAT=var][, ERRMSG=var][, SOURCE= / MOLD=expr]): each object is
    /// `name(bounds)` as an `Apply` whose arguments are upper bounds or
    /// `lower:upper` ranges.
    Allocate {
        /// The objects with their bounds.
        objects: Vec<Expr>,
        /// `stat=` variable.
        stat: Option<Expr>,
        /// `errmsg=` variable (CHARACTER), given a message when the
        /// statement fails with `stat=`.
        errmsg: Option<Expr>,
        /// `source=` expression (the values given to the new storage).
        source: Option<Expr>,
        /// `mold=` expression (parsed; only its presence matters).
        mold: Option<Expr>,
        /// The length of a `character(len=n) ::` type specification
        /// before the objects (deferred-length CHARACTER objects).
        char_len: Option<Expr>,
    },
    /// DEALLOCATE (names[, STAT=var][, ERRMSG=var]).
    Deallocate {
        /// The arrays released.
        objects: Vec<Expr>,
        /// `stat=` variable.
        stat: Option<Expr>,
        /// `errmsg=` variable, as for ALLOCATE.
        errmsg: Option<Expr>,
    },
    /// A statement the subset does not support (READ, OPEN, ...),
    /// kept with its keyword so sema reports it with its position.
    Unsupported(String),
    /// `ENTRY name(args) [RESULT(r)]`: another way into the enclosing
    /// subroutine or function. The parser splits each procedure with
    /// ENTRY statements into one procedure per entry point
    /// ([`crate::front::entry`]); one left in a construct is refused by sema.
    Entry {
        /// The entry point's name.
        name: Name,
        /// Its dummy arguments, in order.
        args: Vec<Name>,
        /// `RESULT(r)` of an entry of a function.
        result: Option<Name>,
    },
    /// FARFEL's forward-AD block `ADF(TANGENT(x) = e, ...) ... END ADF(d =
    /// TANGENT(y), ...)` or reverse-AD block `ADR(COTANGENT(y) = e, ...)
    /// ... END ADR(g = COTANGENT(x), ...)` (see [`AdfBlock`]).
    Adf(Box<AdfBlock>),
}

/// An ADF or ADR block. The parser outlines its statements into an internal
/// subroutine of the enclosing procedure ([`AdfBlock::outlined`]); sema
/// lowers the block to a call of that subroutine with the seeds and results
/// recorded, and the engine turns the call into a call of its tangent.
/// The body of [`StmtKind::own_exprs`] and [`StmtKind::own_exprs_mut`]:
/// the same matching on a shared or a mutable reference.
macro_rules! own_exprs_body {
    ($kind:expr) => {{
        let mut out = Vec::new();
        match $kind {
            StmtKind::Assign { target, value } => out.extend([target, value]),
            StmtKind::If { arms, .. } | StmtKind::Where { arms, .. } => {
                out.extend(arms.into_iter().map(|(c, _)| c))
            }
            StmtKind::LogicalIf { cond, .. } | StmtKind::DoWhile { cond, .. } => out.push(cond),
            StmtKind::Do {
                start, end, step, ..
            } => {
                out.extend([start, end]);
                out.extend(step);
            }
            StmtKind::ComputedGoto { index: x, .. } | StmtKind::ArithmeticIf { value: x, .. } => {
                out.push(x)
            }
            StmtKind::Stop(x) => out.extend(x),
            StmtKind::Call { args, .. } => {
                for a in args {
                    match a {
                        Arg {
                            value: ArgValue::Expr(x),
                            ..
                        } => out.push(x),
                        Arg {
                            value: ArgValue::Range { lo, hi, stride },
                            ..
                        } => out.extend(lo.into_iter().chain(hi).chain(stride)),
                    }
                }
            }
            StmtKind::SelectCase {
                selector, cases, ..
            } => {
                out.push(selector);
                for (sel, _) in cases {
                    if let CaseSelector::Items(items) = sel {
                        for it in items {
                            match it {
                                CaseItem::Value(v) => out.push(v),
                                CaseItem::Range(lo, hi) => out.extend(lo.into_iter().chain(hi)),
                            }
                        }
                    }
                }
            }
            StmtKind::Associate { pairs, .. } => out.extend(pairs.into_iter().map(|(_, x)| x)),
            StmtKind::Write {
                items,
                control: IoControl { unit, iostat },
                ..
            }
            | StmtKind::Read {
                items,
                control: IoControl { unit, iostat },
                ..
            } => {
                out.extend(items);
                out.extend(unit);
                out.extend(iostat);
            }
            StmtKind::Forall { indices, mask, .. } => {
                for ix in indices {
                    let ForallIndex { lo, hi, stride, .. } = ix;
                    out.extend([lo, hi]);
                    out.extend(stride);
                }
                out.extend(mask);
            }
            StmtKind::Allocate {
                objects,
                stat,
                errmsg,
                source,
                mold,
                char_len,
            } => {
                out.extend(objects);
                out.extend(
                    stat.into_iter()
                        .chain(errmsg)
                        .chain(source)
                        .chain(mold)
                        .chain(char_len),
                );
            }
            StmtKind::Deallocate {
                objects,
                stat,
                errmsg,
            } => {
                out.extend(objects);
                out.extend(stat.into_iter().chain(errmsg));
            }
            StmtKind::DoForever { .. }
            | StmtKind::Block { .. }
            | StmtKind::Exit(_)
            | StmtKind::Cycle(_)
            | StmtKind::Goto(_)
            | StmtKind::Continue
            | StmtKind::Return
            | StmtKind::Unsupported(_)
            | StmtKind::Entry { .. }
            | StmtKind::Adf(_) => {}
        }
        out
    }};
}

impl StmtKind {
    /// `allocate(objects)` without STAT=, ERRMSG=, SOURCE=, MOLD= or a
    /// type specification.
    pub fn allocate(objects: Vec<Expr>) -> StmtKind {
        StmtKind::Allocate {
            objects,
            stat: None,
            errmsg: None,
            source: None,
            mold: None,
            char_len: None,
        }
    }

    /// The expressions a statement holds itself (not those of the
    /// statements in its bodies, nor ADF seeds and results).
    pub fn own_exprs(&self) -> Vec<&Expr> {
        own_exprs_body!(self)
    }

    /// The statement lists nested directly in a statement (the bodies of
    /// IF, WHERE, DO, ASSOCIATE, BLOCK, FORALL and SELECT CASE constructs;
    /// not a logical IF's statement, nor an ADF block's body).
    pub fn bodies_mut(&mut self) -> Vec<&mut Vec<Stmt>> {
        let mut out = Vec::new();
        match self {
            StmtKind::If {
                arms, else_body, ..
            }
            | StmtKind::Where {
                arms, else_body, ..
            } => {
                out.extend(arms.iter_mut().map(|(_, b)| b));
                out.extend(else_body.iter_mut());
            }
            StmtKind::Do { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::DoForever { body, .. }
            | StmtKind::Associate { body, .. }
            | StmtKind::Block { body, .. }
            | StmtKind::Forall { body, .. } => out.push(body),
            StmtKind::SelectCase { cases, .. } => out.extend(cases.iter_mut().map(|(_, b)| b)),
            _ => {}
        }
        out
    }

    /// [`StmtKind::own_exprs`], mutable.
    pub fn own_exprs_mut(&mut self) -> Vec<&mut Expr> {
        own_exprs_body!(self)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdfBlock {
    /// True for ADR (reverse mode), false for ADF (forward mode).
    pub reverse: bool,
    /// The seeds: ADF's independents with their tangents, ADR's dependents
    /// with their cotangents (evaluated after the forward phase). In
    /// [`AdfEntry::One`], `target` is the variable or array element inside
    /// `TANGENT(...)` / `COTANGENT(...)` (or the shorthand's variable) and
    /// `other` the seed (`None`: the shorthand `ADF(x)` / `ADR(y)`, a seed
    /// of 1).
    pub seeds: Vec<AdfEntry>,
    /// The statements differentiated (empty once outlined).
    pub body: Vec<Stmt>,
    /// The results: in [`AdfEntry::One`], `target` is the variable or
    /// element whose tangent (ADF: dependents) or cotangent (ADR:
    /// independents) is read and `other` the destination it is assigned to.
    pub results: Vec<AdfEntry>,
    /// The internal subroutine holding the body, once outlined.
    pub outlined: Option<Name>,
}

/// One item of an ADF / ADR seed or result list: a single seed or result,
/// or an implied DO loop over items (`(TANGENT(X(I)) = V(I), I = 1, N)`).
#[derive(Clone, Debug, PartialEq)]
pub enum AdfEntry {
    /// A seed or a result (see [`AdfBlock::seeds`], [`AdfBlock::results`]).
    One {
        /// The variable or array element marked by `TANGENT` / `COTANGENT`.
        target: Expr,
        /// The seed value or the result's destination.
        other: Option<Expr>,
    },
    /// `(items, var = start, end [, step])`.
    Loop {
        /// The items repeated.
        items: Vec<AdfEntry>,
        /// The implied DO variable.
        var: Name,
        /// Initial value.
        start: Expr,
        /// Final value.
        end: Expr,
        /// Step (default 1).
        step: Option<Expr>,
    },
}

impl AdfEntry {
    /// Calls `name` on every implied DO variable and `expr` on every
    /// expression (targets, seeds, destinations, loop bounds) of the items.
    pub fn visit(entries: &[AdfEntry], name: &mut dyn FnMut(&Name), expr: &mut dyn FnMut(&Expr)) {
        for e in entries {
            match e {
                AdfEntry::One { target, other } => {
                    expr(target);
                    other.iter().for_each(&mut *expr);
                }
                AdfEntry::Loop {
                    items,
                    var,
                    start,
                    end,
                    step,
                } => {
                    name(var);
                    expr(start);
                    expr(end);
                    step.iter().for_each(&mut *expr);
                    Self::visit(items, name, expr);
                }
            }
        }
    }

    /// Calls `expr` on every seed, destination and loop bound of the items
    /// (not on the marked targets).
    pub fn visit_mut(entries: &mut [AdfEntry], expr: &mut dyn FnMut(&mut Expr)) {
        for e in entries {
            match e {
                AdfEntry::One { other, .. } => other.iter_mut().for_each(&mut *expr),
                AdfEntry::Loop {
                    items,
                    start,
                    end,
                    step,
                    ..
                } => {
                    expr(start);
                    expr(end);
                    step.iter_mut().for_each(&mut *expr);
                    Self::visit_mut(items, expr);
                }
            }
        }
    }
}

/// One index of a FORALL or DO CONCURRENT header: `var = lo:hi[:stride]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForallIndex {
    /// The index variable.
    pub var: Name,
    /// First value.
    pub lo: Expr,
    /// Last value.
    pub hi: Expr,
    /// Stride (default 1).
    pub stride: Option<Expr>,
}

/// The unit and status specifiers of a READ or WRITE statement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IoControl {
    /// The unit when it is not standard input or output (`*`, 5 for READ,
    /// 6 for WRITE): an internal file, a CHARACTER variable, array element
    /// or substring (anything else is refused by the semantic analysis).
    pub unit: Option<Expr>,
    /// The IOSTAT= variable (`None`: errors stop the program).
    pub iostat: Option<Expr>,
}

/// The format of an I/O statement.
#[derive(Clone, Debug, PartialEq)]
pub enum IoFormat {
    /// `*`: list-directed.
    List,
    /// The label of a FORMAT statement (and where it is named).
    Label(u32, Span),
    /// A character expression (a format literal or named constant).
    Expr(Expr),
}

/// The selector of one CASE block.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseSelector {
    /// CASE DEFAULT.
    Default,
    /// CASE (items).
    Items(Vec<CaseItem>),
}

/// One item of a CASE selector list.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseItem {
    /// A single value.
    Value(Expr),
    /// `lo:hi`, `lo:` or `:hi`.
    Range(Option<Expr>, Option<Expr>),
}

/// An expression with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub span: Span,
}

impl Expr {
    /// The reference `f(args)` with every argument by position.
    pub fn apply_positional(f: &str, args: Vec<Expr>, span: Span) -> Expr {
        Expr::apply(f, args.into_iter().map(Arg::positional).collect(), span)
    }

    /// The reference `f(args)` to the procedure or intrinsic `f`, at `span`.
    pub fn apply(f: &str, args: Vec<Arg>, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Apply {
                name: Name {
                    text: f.to_string(),
                    span,
                },
                args,
            },
            span,
        }
    }

    /// The expression inside any number of enclosing parentheses.
    pub fn without_parens(&self) -> &Expr {
        let mut inner = self;
        while let ExprKind::Paren(x) = &inner.kind {
            inner = x;
        }
        inner
    }
}

impl ExprKind {
    /// The direct subexpressions, argument values and range ends included,
    /// in source order (not the names of `Apply` and `ImpliedDo`).
    pub fn children(&self) -> SmallVec<[&Expr; 4]> {
        let mut out = SmallVec::new();
        match self {
            ExprKind::Apply { args, .. } => {
                for a in args {
                    match &a.value {
                        ArgValue::Expr(x) => out.push(x),
                        ArgValue::Range { lo, hi, stride } => {
                            out.extend(lo.iter().chain(hi).chain(stride))
                        }
                    }
                }
            }
            ExprKind::Substring { base, start, end } => {
                out.push(&**base);
                out.extend(start.iter().chain(end).map(|x| &**x));
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => out.push(&**a),
            ExprKind::Binary(_, a, b) => out.extend([&**a, &**b]),
            ExprKind::ArrayConstructor(items) => out.extend(items),
            ExprKind::CharArrayConstructor { len, items } => {
                out.push(&**len);
                out.extend(items);
            }
            ExprKind::ImpliedDo {
                items,
                start,
                end,
                step,
                ..
            } => {
                out.extend(items);
                out.extend([&**start, &**end]);
                out.extend(step.iter().map(|x| &**x));
            }
            ExprKind::Int { .. }
            | ExprKind::Real { .. }
            | ExprKind::Logical(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_) => {}
        }
        out
    }

    /// [`ExprKind::children`], mutable.
    pub fn children_mut(&mut self) -> SmallVec<[&mut Expr; 4]> {
        let mut out = SmallVec::new();
        match self {
            ExprKind::Apply { args, .. } => {
                for a in args {
                    match &mut a.value {
                        ArgValue::Expr(x) => out.push(x),
                        ArgValue::Range { lo, hi, stride } => {
                            out.extend(lo.iter_mut().chain(hi).chain(stride))
                        }
                    }
                }
            }
            ExprKind::Substring { base, start, end } => {
                out.push(&mut **base);
                out.extend(start.iter_mut().chain(end).map(|x| &mut **x));
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => out.push(&mut **a),
            ExprKind::Binary(_, a, b) => out.extend([&mut **a, &mut **b]),
            ExprKind::ArrayConstructor(items) => out.extend(items),
            ExprKind::CharArrayConstructor { len, items } => {
                out.push(&mut **len);
                out.extend(items);
            }
            ExprKind::ImpliedDo {
                items,
                start,
                end,
                step,
                ..
            } => {
                out.extend(items);
                out.extend([&mut **start, &mut **end]);
                out.extend(step.iter_mut().map(|x| &mut **x));
            }
            ExprKind::Int { .. }
            | ExprKind::Real { .. }
            | ExprKind::Logical(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_) => {}
        }
        out
    }
}

/// A literal's kind parameter: `1.0_dp`, `1_8`.
#[derive(Clone, Debug, PartialEq)]
pub enum KindParam {
    /// A digit string.
    Int(i64),
    /// A named constant.
    Name(Name),
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int {
        /// Its value.
        value: i64,
        /// `_kind` suffix.
        kind: Option<KindParam>,
    },
    /// A real literal, kept as text so that sema converts it exactly in its
    /// kind (a default REAL literal is rounded to f32 first, as gfortran
    /// does).
    Real {
        /// The literal with any `d`/`D` exponent letter replaced by `e`
        /// (parseable by Rust's `str::parse::<f64>()`).
        text: String,
        /// True when the exponent letter was `d` (DOUBLE PRECISION).
        double: bool,
        /// `_kind` suffix.
        kind: Option<KindParam>,
    },
    /// `.true.` / `.false.`.
    Logical(bool),
    /// A character literal (quotes removed, doubled quotes collapsed).
    Str(String),
    /// A bare name.
    Name(Name),
    /// `name(args)`: array element, array section, substring of a scalar,
    /// function call or intrinsic call; sema decides.
    Apply {
        /// The name applied.
        name: Name,
        /// The arguments or subscripts.
        args: Vec<Arg>,
    },
    /// `base(start:end)` applied to an array element (`c(i)(1:2)`).
    Substring {
        /// The character element.
        base: Box<Expr>,
        /// First character.
        start: Option<Box<Expr>>,
        /// Last character.
        end: Option<Box<Expr>>,
    },
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A parenthesized expression.
    Paren(Box<Expr>),
    /// `(/ a, b /)` or `[a, b]`.
    ArrayConstructor(Vec<Expr>),
    /// `[character(len=n) :: a, b]`: the items blank-padded or cut to the
    /// length `n`.
    CharArrayConstructor {
        /// The length of every element.
        len: Box<Expr>,
        /// The items.
        items: Vec<Expr>,
    },
    /// `(objects, var = start, end [, step])` inside DATA or an array
    /// constructor.
    ImpliedDo {
        /// The objects or values.
        items: Vec<Expr>,
        /// The implied DO variable.
        var: Name,
        /// Initial value.
        start: Box<Expr>,
        /// Final value.
        end: Box<Expr>,
        /// Step.
        step: Option<Box<Expr>>,
    },
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`.
    Neg,
    /// `+x`.
    Plus,
    /// `.not. x`.
    Not,
}

/// The generic name of an operator interface, `operator(+)` or
/// `operator(.dot.)`; `op` is the operator as written (an intrinsic
/// operator's dot form and symbol name the same interface: `.eq.` is
/// `==`).
pub fn operator_generic(op: &str) -> String {
    let op = match op {
        ".eq." => "==",
        ".ne." => "/=",
        ".lt." => "<",
        ".le." => "<=",
        ".gt." => ">",
        ".ge." => ">=",
        other => other,
    };
    format!("operator({op})")
}

/// The generic name of an assignment interface.
pub const ASSIGNMENT_GENERIC: &str = "assignment(=)";

impl BinOp {
    /// The operator as written (the symbol form of a relational one).
    pub fn symbol(self) -> &'static str {
        match self {
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
            BinOp::And => ".and.",
            BinOp::Or => ".or.",
            BinOp::Eqv => ".eqv.",
            BinOp::Neqv => ".neqv.",
        }
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `**`.
    Pow,
    /// `//`.
    Concat,
    /// `==` / `.eq.`.
    Eq,
    /// `/=` / `.ne.`.
    Ne,
    /// `<` / `.lt.`.
    Lt,
    /// `<=` / `.le.`.
    Le,
    /// `>` / `.gt.`.
    Gt,
    /// `>=` / `.ge.`.
    Ge,
    /// `.and.`.
    And,
    /// `.or.`.
    Or,
    /// `.eqv.`.
    Eqv,
    /// `.neqv.`.
    Neqv,
}

/// An actual argument or subscript.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// `keyword =` (for intrinsics such as `kind=`, `dim=`).
    pub keyword: Option<Name>,
    /// The value.
    pub value: ArgValue,
}

/// Keyword text of a part marker (see [`Arg::part_marker`]).
const PART_MARK: &str = "%part";

impl Arg {
    /// The argument `e` given by position.
    pub fn positional(e: Expr) -> Arg {
        Arg {
            keyword: None,
            value: ArgValue::Expr(e),
        }
    }

    /// A marker placed before the subscripts of part `k` of a component
    /// reference (`a(i)%w(j)`: part 0 is `a`, part 1 is `w`) in an
    /// `Apply` whose name holds a `%`; the semantic analysis knows each
    /// part's rank and gives omitted subscripts as whole ranges
    /// (`a(i)%v` is `a%v(:, i)`, `a%w(1)` is `a%w(1, :)`). The marker's
    /// value is an empty range and its keyword `%partK`.
    pub fn part_marker(k: usize, span: Span) -> Arg {
        Arg {
            keyword: Some(Name {
                text: format!("{PART_MARK}{k}"),
                span,
            }),
            value: ArgValue::Range {
                lo: None,
                hi: None,
                stride: None,
            },
        }
    }

    /// The part a [`Arg::part_marker`] stands before, if this is one.
    pub fn marked_part(&self) -> Option<usize> {
        self.keyword
            .as_ref()?
            .text
            .strip_prefix(PART_MARK)?
            .parse()
            .ok()
    }
}

/// A subscript, section triplet or expression argument.
// The tree is built once per parse and walked by reference; boxing the
// larger variants would trade one allocation per node for the padding.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// An expression.
    Expr(Expr),
    /// `lo:hi[:stride]` (array section or substring range).
    Range {
        /// Lower end.
        lo: Option<Expr>,
        /// Upper end.
        hi: Option<Expr>,
        /// Stride.
        stride: Option<Expr>,
    },
}
