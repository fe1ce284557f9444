//! Semantic analysis and lowering: resolves the syntax tree of a Fortran
//! program (names, types, kinds, shapes, intrinsics, host and module
//! association) and lowers every procedure to the code-list IR.
//!
//! It knows Fortran and the IR; nothing of derivatives or code generation.
//!
//! # Mapping to the IR
//!
//! * Every SUBROUTINE, FUNCTION, module procedure, internal procedure and
//!   main PROGRAM becomes one [`ir::Proc`]. Top-level and module procedures
//!   are named by their lower-case name; an internal procedure `inner` of
//!   `host` is named `host.inner` (callable as `inner` from its host and
//!   siblings).
//! * Parameters, in order: the dummy arguments (a derived-type dummy as
//!   one parameter per leaf component); then one logical presence flag
//!   `_present_x` per OPTIONAL dummy `x`, in order; then, for an internal
//!   procedure, every host variable it uses (host association), by
//!   reference, sorted by name; then, for a FUNCTION, the result variable
//!   (always last, [`ir::Proc::result`]). Callers pass the host variables
//!   they see under the same names; for an absent OPTIONAL dummy they pass
//!   scratch storage and a false flag. Keyword arguments and generic
//!   names are resolved at the call.
//! * A variable of derived type is flattened into one variable per leaf
//!   component, named `var%comp%sub` (the parser reads `a%b%c` as one
//!   name); whole-structure assignment and structure constructors become
//!   one assignment per component.
//! * Module variables become [`ir::Global`]s named `module::var`; SAVE
//!   variables, initialised variables and DATA variables become globals
//!   named `proc::var`.
//! * A function reference in an expression stores its expression arguments
//!   in temporaries (`CallArg::Value`), calls with a fresh local scalar
//!   temporary for the result and loads it.
//! * Each statement lowers to a code list ending in stores; control flow
//!   (IF, DO, GO TO, SELECT CASE) becomes blocks and terminators. A DO loop
//!   evaluates its bounds once and fixes its trip count at entry: an
//!   integer loop keeps the distance still to go as an unsigned 64-bit
//!   number in temporaries `_go*`, `_rest*`, `_stride*` (so that no trip
//!   count overflows, whatever the kind and the range), a float loop its
//!   trip count in `_trip*`; the DO variable is left incremented after the
//!   last trip.

mod alloc;
mod alloc_dummy;
mod alloc_param;
mod alloc_result;
mod alloc_scalar;
mod alloc_structs;
mod array;
mod array_fn;
mod associate;
mod block_sized;
mod char_array;
mod char_code;
mod char_expr;
mod char_runtime;
mod cleanup;
mod closure;
mod common;
mod constructor;
mod consts;
mod ctor_lift;
mod deferred_chars;
mod dim_dispatch;
mod dummy;
mod elemental;
mod expr;
mod expr_table;
mod farfel;
mod forall_nest;
mod ieee;
mod intrinsics;
mod io;
mod lowerer;
mod masked;
mod module_alloc;
mod operators;
mod optional_proc;
mod ragged;
mod ragged_arg;
mod ragged_assign;
mod reductions;
mod scope;
mod section_arg;
mod short_circuit;
mod stmt;
mod string_arrays;
mod strings;
mod struct_ctor;
mod struct_elemental;
mod struct_intrinsic;
mod struct_merge;
mod struct_section;
mod structure;
#[cfg(test)]
mod tests;
mod transform;

use super::ast::{self, Name, ProcKind, Procedure, ProgramUnit};
use super::diag::{Diagnostic, SourceMap};
use adjit_ir::{self as ir, Module, Type};
use dummy::Instance;
pub use dummy::{BoundProcedure, ProcedureArg};
pub use lowerer::AdfCall;
use lowerer::{Lowerer, Out};
use scope::{build_scope, Outer, Scope, Sym};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

/// The result of a successful compilation.
pub struct Compiled {
    /// The lowered program.
    pub module: Module,
    /// Warnings (the program was accepted).
    pub warnings: Vec<Diagnostic>,
    /// Procedures left out because they take dummy procedures that no
    /// call and no binding names: each name with its dummy procedures.
    pub unbound: Vec<(String, Vec<String>)>,
    /// Procedures given dummy procedures from outside (`compile_with`):
    /// each name with what was passed.
    pub bound: Vec<(String, Vec<BoundProcedure>)>,
    /// The main PROGRAM's procedure, when the files have one (and it was
    /// compiled).
    pub main_program: Option<adjit_ir::ProcId>,
    /// The ADF blocks, each a call to replace by a call of a tangent
    /// (`crate::engine` does it).
    pub adf_calls: Vec<AdfCall>,
}

/// Analyses and lowers a whole program (every parsed file). Returns every
/// error found (several per run where possible).
pub fn compile<'a>(
    map: &'a SourceMap,
    files: &'a [ast::SourceFile],
) -> Result<Compiled, Vec<Diagnostic>> {
    compile_with(map, files, &[])
}

/// [`compile`], binding dummy procedures of entries that take them: each
/// [`ProcedureArg`] names the procedure (or intrinsic) to pass for one
/// dummy procedure of one entry. An entry all of whose dummy procedures are
/// given gets an instance under its own name.
pub fn compile_with<'a>(
    map: &'a SourceMap,
    files: &'a [ast::SourceFile],
    procedure_args: &[ProcedureArg],
) -> Result<Compiled, Vec<Diagnostic>> {
    let mut out = Out::default();
    let modules = build_modules(files, &mut out);
    let mut prog = Program {
        units: Vec::new(),
        modules,
        by_name: HashMap::new(),
        sigs: Vec::new(),
        instances: RefCell::new(Vec::new()),
        map,
        allocs: Default::default(),
    };
    for file in files {
        for unit in &file.units {
            match unit {
                ProgramUnit::Procedure(p)
                    if !matches!(p.kind, ProcKind::Program | ProcKind::BlockData) =>
                {
                    collect_unit(&mut prog, &mut out, p, None, None)
                }
                ProgramUnit::Procedure(_) => {}
                ProgramUnit::Module(m) => {
                    let idx = prog.modules.iter().position(|x| x.0 == m.name.text);
                    for p in &m.contains {
                        collect_unit(&mut prog, &mut out, p, None, idx);
                    }
                }
            }
        }
    }
    // Main programs (and their internal procedures) come last: nothing
    // calls them, and when they use what the subset does not support they
    // are dropped with warnings instead of failing the whole program.
    let first_program = prog.units.len();
    let mut program_diags = Vec::new();
    for file in files {
        for unit in &file.units {
            if let ProgramUnit::Procedure(p) = unit {
                if p.kind == ProcKind::Program {
                    out.with_diags(&mut program_diags, |out| {
                        collect_unit(&mut prog, out, p, None, None)
                    });
                }
            }
        }
    }
    // BLOCK DATA units come after them: lowered for their DATA (which
    // initialises COMMON globals), then dropped, as they are no procedures.
    let first_block_data = prog.units.len();
    for file in files {
        for unit in &file.units {
            if let ProgramUnit::Procedure(p) = unit {
                if p.kind == ProcKind::BlockData {
                    if let Some(s) = p.body.first() {
                        out.diags.push(Diagnostic::error(
                            s.span,
                            "executable statement in BLOCK DATA (only declarations and DATA)",
                        ));
                    }
                    collect_unit(&mut prog, &mut out, p, None, None);
                }
            }
        }
    }
    let mut module = Module {
        files: map.names(),
        ..Module::default()
    };
    common::lay_out(&mut prog, &mut out);
    dummy::infer_passed_procedures(&mut prog);
    module_alloc::analyse(&mut prog);
    compute_host_vars(&mut prog);
    compute_captured(&mut prog);
    // Declare every procedure's parameters, so that calls can be checked.
    let mut procs = Vec::new();
    for u in 0..prog.units.len() {
        let sink = if (first_program..first_block_data).contains(&u) {
            Some(&mut program_diags)
        } else {
            None
        };
        procs.push(out.maybe_with_diags(sink, |out| {
            let mut l = Lowerer::new(&prog, out, u, None);
            l.declare_params();
            l.declare_persistent_allocs();
            l.finish_declaration()
        }));
    }
    prog.sigs = procs
        .iter()
        .zip(&prog.units)
        .map(|((p, _), u)| Sig::of(p, u))
        .collect();
    let (unbound, bound) = dummy::root_instances(&prog, procedure_args, &mut out);
    // Lower every instance; lowering a call that passes procedures adds the
    // instance it calls, so the list grows while it is walked.
    let mut lowered: Vec<ir::Proc> = Vec::new();
    let mut next = 0;
    while next < prog.instances.borrow().len() {
        let u = prog.instances.borrow()[next].unit;
        let sink = if (first_program..first_block_data).contains(&u) {
            Some(&mut program_diags)
        } else {
            None
        };
        let (proc, vars) = procs[u].clone();
        let proc = out.maybe_with_diags(sink, |out| {
            let mut l = Lowerer::resume(&prog, out, u, proc, vars, Some(next));
            l.declare_environment();
            l.lower_body();
            l.into_proc()
        });
        lowered.push(cleanup::compact(proc));
        next += 1;
    }
    // Templates (procedures taking dummy procedures) nobody binds are
    // lowered for their diagnostics only (their ADF / ADR blocks are not
    // in the module).
    let adf_blocks = out.adf.len();
    for &u in &unbound {
        let (proc, vars) = procs[u].clone();
        let mut sink = Vec::new();
        out.with_diags(&mut sink, |out| {
            let mut l = Lowerer::resume(&prog, out, u, proc, vars, None);
            l.lower_body();
        });
        let program_unit = (first_program..first_block_data).contains(&u);
        let errors = sink.into_iter().filter(|d| d.is_error() || !program_unit);
        out.diags.extend(errors);
    }
    out.adf.truncate(adf_blocks);
    let unbound_names = unbound
        .iter()
        .filter(|&&u| prog.units[u].host.is_none())
        .map(|&u| {
            let unit = &prog.units[u];
            let names = unit.dummy_procs.iter().map(|d| d.text.clone()).collect();
            (unit.ir_name.clone(), names)
        })
        .collect();
    let instances = prog.instances.into_inner();
    let order = dummy::module_order(&instances, &mut lowered);
    // The outlined subroutines of ADF / ADR blocks, renumbered likewise.
    let mut position = vec![0u32; instances.len()];
    for (k, &i) in order.iter().enumerate() {
        position[i] = k as u32;
    }
    for c in &mut out.adf {
        c.callee = ir::ProcId(position[c.callee.index()]);
    }
    for proc in lowered {
        module.add_proc(proc);
    }
    let count_before = |unit: usize| order.iter().filter(|&&i| instances[i].unit < unit).count();
    let (first_program, first_block_data) =
        (count_before(first_program), count_before(first_block_data));
    module.procs.truncate(first_block_data);
    // The main program is the first of the program units (its internal
    // procedures follow it).
    let mut main_program =
        (first_program < module.procs.len()).then_some(adjit_ir::ProcId(first_program as u32));
    if program_diags.iter().any(|d| d.is_error()) {
        main_program = None;
        module.procs.truncate(first_program);
        for d in program_diags {
            out.diags.push(Diagnostic::warning(
                d.span,
                format!("main program not compiled: {}", d.message),
            ));
        }
    } else {
        out.diags.extend(program_diags);
    }
    module.globals = std::mem::take(&mut out.globals);
    module.private_globals = std::mem::take(&mut out.private);
    module.protected_globals = std::mem::take(&mut out.protected);
    let (errors, warnings): (Vec<_>, Vec<_>) = out.diags.into_iter().partition(|d| d.is_error());
    if errors.is_empty() {
        Ok(Compiled {
            module,
            warnings,
            unbound: unbound_names,
            bound,
            main_program,
            adf_calls: out.adf,
        })
    } else {
        let mut errors = errors;
        errors.sort_by_key(|d| (d.span.file, d.span.line, d.span.col));
        errors.dedup();
        Err(errors)
    }
}

/// What a dummy procedure stands for in one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A procedure of the program (its instance).
    Proc(usize),
    /// A procedure of the program that itself takes dummy procedures (its
    /// unit), passed unbound: each call through the dummy instantiates it
    /// with the procedures that call passes, and for a nested subprogram
    /// with the targets of the dummy procedures of its hosts it calls
    /// (bound where it was named, in the order of its captured dummies).
    Template(usize, Vec<Target>),
    /// An intrinsic function (its specific name).
    Intrinsic(String),
    /// Nothing: a template lowered for its diagnostics only.
    Unbound,
    /// An OPTIONAL dummy procedure not given (PRESENT is false; a
    /// reference fails at run time).
    Absent,
}

/// Everything known about the program while lowering one procedure.
pub(crate) struct Program<'a> {
    /// All procedures, hosts before their internal procedures.
    pub units: Vec<Unit<'a>>,
    /// Modules: name and symbol table.
    pub modules: Vec<(String, Scope)>,
    /// Top-level and module procedures by name.
    pub by_name: HashMap<String, usize>,
    /// Call signatures, by unit (filled once parameters are declared).
    pub sigs: Vec<Sig>,
    /// What becomes one IR procedure each: a unit with the procedures
    /// bound to its dummy procedures (grows while calls are lowered).
    pub instances: RefCell<Vec<Instance>>,
    /// The source text, to locate what the syntax tree does not (labels).
    pub map: &'a SourceMap,
    /// ALLOCATABLE module variables and SAVE allocatable locals.
    pub allocs: module_alloc::PersistentAllocs,
}

/// One procedure to lower.
pub(crate) struct Unit<'a> {
    /// Its syntax.
    pub ast: &'a Procedure,
    /// Its IR name.
    pub ir_name: String,
    /// The prefix of the names of its SAVE variables' storage: its IR
    /// name, or for an ENTRY's procedure that of the procedure holding
    /// the statement (they share it).
    pub save_name: String,
    /// The host of an internal procedure.
    pub host: Option<usize>,
    /// The module of a module procedure (or of the host).
    pub module: Option<usize>,
    /// Its symbol table.
    pub scope: Scope,
    /// Host variables it uses (extra by-reference parameters).
    pub host_vars: Vec<String>,
    /// Its internal procedures.
    pub children: Vec<usize>,
    /// Its dummy procedures (dummy arguments declared EXTERNAL or called),
    /// in argument order: they are bound per instance, not passed. A nested
    /// subprogram's list goes on with the dummy procedures of its hosts it
    /// uses (captured: bound where the subprogram is named).
    pub dummy_procs: Vec<Name>,
    /// How many of `dummy_procs` are the unit's own dummy arguments.
    pub own_dummies: usize,
}

/// What a caller needs to know about a procedure.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    /// Every parameter: type and rank.
    pub params: Vec<(Type, usize)>,
    /// Result type of a FUNCTION.
    pub result: Option<Type>,
    /// The constant length of a CHARACTER function result.
    pub result_len: Option<i64>,
    /// A FUNCTION returning a deferred-length string (`character(len=:),
    /// allocatable :: r`): `result` is CHARACTER and the result is the
    /// last parameter, an unallocated buffer the caller gives by
    /// descriptor and the function allocates ([`deferred_chars`]).
    pub deferred_result: bool,
    /// A FUNCTION returning a structure: its type and the parameters of
    /// the result's components (the last ones; `result` is then `None`).
    pub struct_result: Option<(String, Vec<usize>)>,
    /// A FUNCTION returning an array: the element type and rank of the
    /// result, which is the last parameter (`result` is then `None`); see
    /// [`Lowerer::array_function_assign`](lowerer::Lowerer).
    pub array_result: Option<(Type, usize)>,
    /// The array result is ALLOCATABLE: passed by descriptor, allocated by
    /// the function ([`alloc_result`]).
    pub allocatable_result: bool,
    /// The declared dummy arguments, in order, with their parameters.
    pub dummies: Vec<Dummy>,
    /// Every parameter's dimensions (scratch storage for absent OPTIONAL
    /// arrays copies them when they are constant).
    pub dims: Vec<Vec<ir::Dim>>,
    /// Every parameter's variable in the callee (what its bounds read).
    pub param_vars: Vec<ir::VarId>,
    /// Declared ELEMENTAL: array actuals for scalar dummies are taken
    /// element by element.
    pub elemental: bool,
    /// The marker variables ([`assumed_extent_var`]) the declared bounds
    /// read: (variable, index into [`Sig::dummies`], 0-based dimension).
    /// The callee sees a parameter sized by one as of assumed size in that
    /// dimension; a caller evaluates its bounds from the actual's extent.
    pub assumed_extents: Vec<(ir::VarId, usize, usize)>,
}

/// One declared dummy argument and the IR parameters it became.
#[derive(Clone, Debug)]
pub(crate) struct Dummy {
    /// Its name (the keyword of a keyword argument).
    pub name: String,
    /// OPTIONAL.
    pub optional: bool,
    /// Its INTENT.
    pub intent: Option<ast::Intent>,
    /// The derived type of a structure dummy.
    pub type_name: Option<String>,
    /// Its parameters (indices into [`Sig::params`]): one, or one per leaf
    /// component of a structure.
    pub params: Vec<usize>,
    /// The parameter of its presence flag (OPTIONAL dummies).
    pub present: Option<usize>,
    /// The parameter of its allocation status (ALLOCATABLE scalar
    /// dummies: an integer, 0 or 1, passed by reference like the value).
    pub status: Option<usize>,
    /// The parameters of its extents but the last (assumed-shape dummies
    /// of rank > 1), from the actual argument's shape.
    pub extents: Vec<usize>,
    /// The parameters of its lower bounds less one, one per dimension
    /// (ALLOCATABLE dummies, which take the actual argument's bounds).
    pub lbounds: Vec<usize>,
    /// An ALLOCATABLE dummy passed by descriptor (one the procedure
    /// allocates: [`alloc_param`]).
    pub descriptor: bool,
    /// An array of strings held as a rank-2 buffer of characters
    /// ([`deferred_chars`]): `character(len=*) :: a(:)` (its hidden
    /// extent is the strings' length) or `character(len=:), allocatable
    /// :: a(:)`.
    pub strings: bool,
    /// The components of a structure dummy that take hidden parameters
    /// (ALLOCATABLE ones, those of an array of structures of assumed shape
    /// of rank > 1), each as a dummy of its own (named `g%u`).
    pub leaves: Vec<Dummy>,
}

impl Dummy {
    /// Every parameter the dummy takes, its ALLOCATABLE components' hidden
    /// ones included.
    pub(crate) fn all_params(&self) -> Vec<usize> {
        let own = self
            .params
            .iter()
            .chain(&self.present)
            .chain(&self.status)
            .chain(&self.extents)
            .chain(&self.lbounds)
            .copied();
        own.chain(self.leaves.iter().flat_map(Dummy::all_params))
            .collect()
    }
}

/// True when the component `leaf` of a structure dummy takes hidden
/// parameters of its own: ALLOCATABLE, or a component of an array of
/// structures of assumed shape of rank > 1 (`p%x` of `p(:, :)`).
fn leaf_has_hidden_params(scope: &scope::Scope, leaf: &str) -> bool {
    declared_allocatable_rank(scope, leaf) > 0 || declared_assumed_shape_rank(scope, leaf) > 0
}

/// The names a procedure's dummy arguments give their hidden parameters
/// by: each dummy's, and each component's of a structure dummy that takes
/// its own ([`leaf_has_hidden_params`]).
pub(crate) fn hidden_param_owners(u: &Unit) -> Vec<ast::Name> {
    let mut out = Vec::new();
    for a in &u.ast.args {
        out.push(a.clone());
        if let Some(st) = u.scope.struct_decl(&a.text) {
            out.extend(
                st.leaves
                    .iter()
                    .filter(|l| leaf_has_hidden_params(&u.scope, l))
                    .map(|l| ast::Name {
                        text: l.clone(),
                        span: a.span,
                    }),
            );
        }
    }
    out
}

/// The name of the hidden integer (I64) parameter carrying extent `k`
/// (1-based) of an assumed-shape dummy of rank > 1 (every extent but the
/// last, which comes from the argument's length).
pub(crate) fn extent_param(dummy: &str, k: usize) -> String {
    format!("_extent_{dummy}_{k}")
}

/// The name of the marker variable that stands, in declared bounds, for
/// extent `k` (1-based) of an assumed-shape dummy that no hidden parameter
/// carries (the last one, `size(x)` with `x(:)`): never assigned, it is
/// replaced by the extent of the argument where the bound is evaluated
/// ([`Sig::assumed_extents`] for callers, `DimExtent` inside).
pub(crate) fn assumed_extent_var(dummy: &str, k: usize) -> String {
    format!("_size_{dummy}_{k}")
}

/// The dummy and the 1-based dimension an [`assumed_extent_var`] name
/// stands for.
pub(crate) fn parse_assumed_extent_var(name: &str) -> Option<(&str, usize)> {
    let (dummy, k) = name.strip_prefix("_size_")?.rsplit_once('_')?;
    Some((dummy, k.parse().ok()?))
}

/// The rank of an assumed-shape dummy of rank > 1 (0 otherwise, and for
/// an ALLOCATABLE dummy passed by descriptor).
pub(crate) fn assumed_shape_rank(prog: &Program, u: &Unit, dummy: &str) -> usize {
    if alloc_param::allocated_by_callee(prog, u, dummy) {
        return 0;
    }
    declared_assumed_shape_rank(&u.scope, dummy)
}

/// The rank of a dummy declared assumed-shape of rank > 1 (0 otherwise).
///
/// An array component of an array of structures of assumed shape
/// (`g%q` of `g(:, :)` with `q(4)`) has the component's explicit
/// dimensions first, then the structure array's assumed ones: when those
/// are more than one it takes hidden extents like any assumed-shape
/// dummy of its rank (the ones of its explicit dimensions go unread).
fn declared_assumed_shape_rank(scope: &scope::Scope, dummy: &str) -> usize {
    let assumed = |x: &ast::DimSpec| matches!(x, ast::DimSpec::AssumedShape { .. });
    match scope.var(dummy).and_then(|v| v.dims.as_ref()) {
        Some(d) if d.len() > 1 && d.iter().all(assumed) => d.len(),
        Some(d) if dummy.contains('%') => {
            let own = d.iter().take_while(|x| !assumed(x)).count();
            if d.len() - own > 1 && d[own..].iter().all(assumed) {
                d.len()
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// The name of the hidden integer (I64) parameter carrying the lower bound
/// less one of dimension `k` (1-based) of an ALLOCATABLE dummy (0, the
/// default of a host's argument, gives the lower bound 1).
pub(crate) fn lbound_param(dummy: &str, k: usize) -> String {
    format!("_lbound_{dummy}_{k}")
}

/// The rank of an ALLOCATABLE dummy argument passed as an array with its
/// lower bounds (0 for any other name, and for one passed by descriptor:
/// see [`alloc_param`]).
pub(crate) fn allocatable_dummy_rank(prog: &Program, u: &Unit, dummy: &str) -> usize {
    if alloc_param::allocated_by_callee(prog, u, dummy) {
        return 0;
    }
    declared_allocatable_rank(&u.scope, dummy)
}

/// The rank of a dummy declared ALLOCATABLE (0 for any other name).
pub(crate) fn declared_allocatable_rank(scope: &scope::Scope, dummy: &str) -> usize {
    match scope.var(dummy) {
        Some(v) if v.allocatable.is_some() => v.dims.as_ref().map_or(0, |d| d.len()),
        _ => 0,
    }
}

/// The name of the hidden logical parameter telling whether an OPTIONAL
/// dummy is present (Fortran names cannot start with `_`).
pub(crate) fn present_flag(dummy: &str) -> String {
    format!("_present_{dummy}")
}

impl Sig {
    fn of(p: &ir::Proc, u: &Unit) -> Sig {
        let param_index = |name: &str| p.params.iter().position(|&v| p.var(v).name == name);
        // (A dummy passed by descriptor has no extents or lower bounds.)
        let extents = |name: &str| -> Vec<usize> {
            (1..declared_assumed_shape_rank(&u.scope, name))
                .filter_map(|k| param_index(&extent_param(name, k)))
                .collect()
        };
        let lbounds = |name: &str| -> Vec<usize> {
            (1..=declared_allocatable_rank(&u.scope, name))
                .filter_map(|k| param_index(&lbound_param(name, k)))
                .collect()
        };
        let descriptor = |name: &str| {
            param_index(name).is_some_and(|i| {
                matches!(p.var(p.params[i]).storage, ir::Storage::AllocatableParam(_))
            })
        };
        let dummies = u
            .ast
            .args
            .iter()
            .map(|a| {
                let st = u.scope.struct_decl(&a.text);
                let decl = u.scope.var(&a.text);
                let params = match st {
                    Some(st) => st.leaves.iter().filter_map(|l| param_index(l)).collect(),
                    None => param_index(&a.text).into_iter().collect(),
                };
                Dummy {
                    name: a.text.clone(),
                    optional: u.scope.is_optional_dummy(&a.text)
                        || u.scope.optional_procs.contains(&a.text),
                    intent: decl.and_then(|d| d.intent).or_else(|| {
                        st.and_then(|s| s.leaves.first())
                            .and_then(|l| u.scope.var(l))
                            .and_then(|d| d.intent)
                    }),
                    type_name: st.map(|s| s.type_name.clone()),
                    params,
                    present: param_index(&present_flag(&a.text)),
                    status: param_index(&scope::status_name(&a.text)),
                    extents: extents(&a.text),
                    descriptor: descriptor(&a.text),
                    strings: decl.is_some_and(|d| d.string_buffer && d.dims.is_some()),
                    lbounds: lbounds(&a.text),
                    leaves: st
                        .into_iter()
                        .flat_map(|st| st.leaves.iter())
                        .filter(|l| leaf_has_hidden_params(&u.scope, l))
                        .filter_map(|l| {
                            Some(Dummy {
                                name: l.clone(),
                                optional: false,
                                intent: u.scope.var(l).and_then(|d| d.intent),
                                type_name: None,
                                params: vec![param_index(l)?],
                                present: None,
                                status: None,
                                extents: extents(l),
                                lbounds: lbounds(l),
                                descriptor: descriptor(l),
                                strings: false,
                                leaves: Vec::new(),
                            })
                        })
                        .collect(),
                }
            })
            .collect();
        let deferred_result = match &u.ast.kind {
            ProcKind::Function { result, .. } => u
                .scope
                .var(&result.as_ref().unwrap_or(&u.ast.name).text)
                .is_some_and(|d| {
                    alloc_param::is_deferred_string_decl(d)
                        && d.dims.as_ref().is_some_and(|d| d.len() == 1)
                }),
            _ => false,
        };
        Sig {
            params: p
                .params
                .iter()
                .map(|&v| (p.var(v).ty, p.var(v).dims.len()))
                .collect(),
            result: p
                .result
                .map(|r| p.var(r).ty)
                .or(deferred_result.then_some(Type::Char)),
            deferred_result,
            result_len: p
                .result
                .map(|r| p.var(r))
                .filter(|v| v.ty == Type::Char)
                .and_then(|v| v.char_len.as_ref()?.as_const()),
            struct_result: match &u.ast.kind {
                ProcKind::Function { result, .. } => {
                    let rn = result.as_ref().unwrap_or(&u.ast.name);
                    u.scope.struct_decl(&rn.text).map(|st| {
                        let params = st.leaves.iter().filter_map(|l| param_index(l)).collect();
                        (st.type_name.clone(), params)
                    })
                }
                _ => None,
            },
            array_result: match &u.ast.kind {
                ProcKind::Function { result, .. }
                    if !deferred_result
                        && u.scope
                            .struct_decl(&result.as_ref().unwrap_or(&u.ast.name).text)
                            .is_none() =>
                {
                    let rn = result.as_ref().unwrap_or(&u.ast.name);
                    param_index(&rn.text)
                        .map(|i| p.var(p.params[i]))
                        .filter(|v| v.is_array())
                        .map(|v| (v.ty, v.dims.len()))
                }
                _ => None,
            },
            allocatable_result: p
                .array_result
                .is_some_and(|r| matches!(p.var(r).storage, ir::Storage::AllocatableParam(_))),
            dummies,
            dims: p.params.iter().map(|&v| p.var(v).dims.clone()).collect(),
            param_vars: p.params.clone(),
            elemental: u.ast.elemental,
            assumed_extents: p
                .vars
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let (dummy, k) = parse_assumed_extent_var(&v.name)?;
                    let at = u.ast.args.iter().position(|a| a.text == dummy)?;
                    Some((ir::VarId(i as u32), at, k - 1))
                })
                .collect(),
        }
    }
}

impl Program<'_> {
    /// The procedure a unit sees under a name (its internal procedures, its
    /// siblings, then top-level and module procedures).
    pub fn find_proc(&self, from: usize, name: &str) -> Option<usize> {
        let in_children = |u: usize| {
            self.units[u]
                .children
                .iter()
                .copied()
                .find(|&c| self.units[c].ast.name.text == name)
        };
        // Lexical scope: the unit's internal procedures, then those of
        // each host outwards (siblings, then nested subprograms of outer
        // hosts), then the top level.
        let mut at = Some(from);
        while let Some(u) = at {
            if let Some(c) = in_children(u) {
                return Some(c);
            }
            at = self.units[u].host;
        }
        self.by_name.get(name).copied()
    }

    /// The unit that declares the host variable `name` seen from `host`:
    /// the first of `host` and its hosts outwards whose scope declares it
    /// (else the outermost, whose implicit typing rules apply).
    pub fn declaring_unit(&self, host: usize, name: &str) -> usize {
        let mut u = host;
        loop {
            if self.units[u].scope.var(name).is_some() {
                return u;
            }
            match self.units[u].host {
                Some(h) => u = h,
                None => return u,
            }
        }
    }

    /// The environment a procedure passed as an actual argument carries
    /// (closure conversion): the host variables of a nested subprogram,
    /// then the environments of the procedures bound to its dummy
    /// procedures, each with the unit that declares it. The instance it is
    /// passed to takes these as extra by-reference parameters.
    pub fn environment(&self, t: &Target) -> Vec<(String, usize)> {
        let i = match t {
            Target::Proc(i) => i,
            // A nested subprogram with dummy procedures: its host
            // variables, then the environments of the procedures bound to
            // the dummy procedures of its hosts it calls.
            Target::Template(u, captured) => {
                let unit = &self.units[*u];
                let Some(h) = unit.host else {
                    return Vec::new();
                };
                let hosts = unit
                    .host_vars
                    .iter()
                    .map(|v| (v.clone(), self.declaring_unit(h, v)));
                let captured = captured.iter().flat_map(|t| self.environment(t));
                return hosts.chain(captured).collect();
            }
            _ => return Vec::new(),
        };
        let inst = self.instances.borrow()[*i].clone();
        let unit = &self.units[inst.unit];
        let mut out: Vec<(String, usize)> = match unit.host {
            Some(h) => unit
                .host_vars
                .iter()
                .map(|v| (v.clone(), self.declaring_unit(h, v)))
                .collect(),
            None => Vec::new(),
        };
        for b in &inst.binding {
            out.extend(self.environment(b));
        }
        out
    }
}

/// The modules of the program, each built after the modules it uses
/// (whatever the file order), with their variables as globals.
fn build_modules(files: &[ast::SourceFile], out: &mut Out) -> Vec<(String, Scope)> {
    let mut pending: Vec<&ast::ModuleUnit> = files
        .iter()
        .flat_map(|f| &f.units)
        .filter_map(|u| match u {
            ProgramUnit::Module(m) => Some(m),
            ProgramUnit::Procedure(_) => None,
        })
        .collect();
    let uses = |m: &ast::ModuleUnit| -> Vec<String> {
        m.decls
            .iter()
            .filter_map(|d| match &d.kind {
                ast::DeclKind::Use { module, .. } => Some(module.text.clone()),
                _ => None,
            })
            .collect()
    };
    let mut modules: Vec<(String, Scope)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|m| {
                uses(m).iter().all(|u| {
                    modules.iter().any(|x| &x.0 == u) || !pending.iter().any(|p| &p.name.text == u)
                })
            })
            .unwrap_or(0);
        let m = pending.remove(ready);
        let mut scope = build_scope(
            &[],
            None,
            &m.decls,
            &Outer {
                host: None,
                modules: &modules,
                module: None,
            },
            &mut out.diags,
        );
        if let Some((_, span)) = scope.data.first() {
            out.diags.push(Diagnostic::error(
                *span,
                "unsupported Fortran: DATA statement in a module (use an initializer)",
            ));
        }
        scope.procs = m.contains.iter().map(|p| p.name.text.clone()).collect();
        // What `procedure(name)` naming a module procedure takes; the
        // procedures' own declarations are checked (and their errors
        // reported) when they are compiled.
        let own: Vec<(String, scope::Interface)> = m
            .contains
            .iter()
            .map(|p| {
                let outer = Outer {
                    host: None,
                    modules: &modules,
                    module: Some(&scope),
                };
                (
                    p.name.text.clone(),
                    scope::procedure_interface(p, &outer, &mut Vec::new()),
                )
            })
            .collect();
        scope.specifics.extend(own);
        if let Some(object) = scope.equivalences.first().and_then(|set| set.first()) {
            out.diags.push(Diagnostic::error(
                object.span,
                "unsupported Fortran: EQUIVALENCE in a module",
            ));
        }
        let mut names: Vec<String> = scope
            .syms
            .iter()
            .filter(
                |(_, s)| matches!(s, Sym::Var(v) if v.global.is_none() && v.allocatable.is_none()),
            )
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        for name in names {
            let gname = format!("{}::{}", m.name.text, marked_component_path(&scope, &name));
            let global = lowerer::global_for(&scope, &[], &name, gname, &mut out.diags);
            let public = scope.is_public(&name);
            if let (Some(g), Some(Sym::Var(v))) = (global, scope.syms.get_mut(&name)) {
                let id = out.push_global(g, v.constant);
                v.global = Some(id);
                if !public {
                    out.private.insert(id);
                }
                if scope
                    .protected
                    .contains(name.split('%').next().unwrap_or_default())
                {
                    out.protected.insert(id);
                }
            }
        }
        modules.push((m.name.text.clone(), scope));
    }
    modules
}

/// The name of the module variable or leaf component `name` with each
/// part that is an array of structures marked by its rank: `a(:)%x`,
/// `p%cells(:)%s%h`, `g(:,:)%m(:)%w` (the leaf's flattened array
/// `p%cells%s%h(k, j)` is `p%cells(j)%s%h(k)` in Fortran source; the
/// Fortran back end reads the marks to place the subscripts).
fn marked_component_path(scope: &scope::Scope, name: &str) -> String {
    let rank_of = |prefix: &str| {
        scope
            .struct_decl(prefix)
            .and_then(|s| s.dims.as_ref())
            .map_or(0, Vec::len)
    };
    let mut out = String::new();
    // The rank of the structures the previous part belongs to: a part's
    // dimensions are its own followed by those of the parts enclosing it.
    let mut enclosing = 0;
    for (i, part) in name.split('%').enumerate() {
        if i > 0 {
            out.push('%');
        }
        out.push_str(part);
        let prefix_end = name
            .match_indices('%')
            .nth(i)
            .map_or(name.len(), |(at, _)| at);
        if prefix_end == name.len() {
            break;
        }
        let rank = rank_of(&name[..prefix_end]);
        let own = rank.saturating_sub(enclosing);
        if own > 0 {
            out.push_str(&format!("({})", vec![":"; own].join(",")));
        }
        enclosing = rank.max(enclosing);
    }
    out
}

/// The Fortran spelling of the type of the result variable `name` of a
/// function whose scope is `scope` (`None` when it has no type).
fn result_type_text(scope: &scope::Scope, name: &str) -> Option<String> {
    if let Some(st) = scope.struct_decl(name) {
        return Some(format!("TYPE({})", st.type_name));
    }
    let ti = scope
        .var(name)
        .and_then(|v| v.ty.clone())
        .or_else(|| scope.implicit_type(name))?;
    let text = match ti.ty {
        Type::F32 => "REAL".to_string(),
        Type::F64 => "REAL(8)".to_string(),
        Type::I32 => "INTEGER".to_string(),
        Type::I64 => "INTEGER(8)".to_string(),
        Type::Bool => "LOGICAL".to_string(),
        Type::Char => match ti.char_len {
            scope::CharLenInfo::Const(n) => format!("CHARACTER(len={n})"),
            _ => "CHARACTER(len=*)".to_string(),
        },
    };
    Some(text)
}

/// The result variable of the function `p` (`None` for a subroutine).
fn result_name(p: &Procedure) -> Option<&ast::Name> {
    match &p.kind {
        ProcKind::Function { result, .. } => Some(result.as_ref().unwrap_or(&p.name)),
        _ => None,
    }
}

/// For an ENTRY point `p` of a function (`scope` its scope), a located
/// error when its result's type differs from the result of the function
/// holding the ENTRY statement: the results share one variable, so a
/// different type would reinterpret (Fortran's storage association) what
/// the other entries assign.
fn entry_result_mismatch(
    prog: &Program,
    p: &Procedure,
    scope: &scope::Scope,
) -> Option<Diagnostic> {
    let host = prog.units.iter().rev().find(|u| {
        p.entry_of
            .as_ref()
            .is_some_and(|e| u.ast.name.text == e.text)
            && u.ast.entry_of.is_none()
    })?;
    let (mine, theirs) = (result_name(p)?, result_name(host.ast)?);
    let mine_ty = result_type_text(scope, &mine.text)?;
    let theirs_ty = result_type_text(&host.scope, &theirs.text)?;
    (mine_ty != theirs_ty).then(|| {
        Diagnostic::error(
            p.name.span,
            format!(
                "unsupported Fortran: the result `{}` of ENTRY `{}` is {mine_ty}, the result `{}` of `{}` is {theirs_ty} (results of different types would share storage)",
                mine.text, p.name.text, theirs.text, host.ast.name.text
            ),
        )
    })
}

fn collect_unit<'a>(
    prog: &mut Program<'a>,
    out: &mut Out,
    p: &'a Procedure,
    host: Option<usize>,
    module: Option<usize>,
) {
    let result = match &p.kind {
        ProcKind::Function {
            prefix_type,
            result,
        } => Some((result.as_ref().unwrap_or(&p.name), prefix_type.as_ref())),
        _ => None,
    };
    let scope = {
        let host_scope = host.map(|h| &prog.units[h].scope);
        let module_scope = module.map(|m| &prog.modules[m].1);
        build_scope(
            &p.args,
            result,
            &p.decls,
            &Outer {
                host: host_scope,
                modules: &prog.modules,
                module: module_scope,
            },
            &mut out.diags,
        )
    };
    let mut scope = scope;
    let dummy_procs = dummy::dummy_procedures(p, &mut scope);
    let own_dummies = dummy_procs.len();
    let ir_name = match host {
        Some(h) => format!("{}.{}", prog.units[h].ir_name, p.name.text),
        None => p.name.text.clone(),
    };
    let idx = prog.units.len();
    if host.is_none() && !matches!(p.kind, ProcKind::Program | ProcKind::BlockData) {
        if prog.by_name.contains_key(&p.name.text) {
            out.diags.push(Diagnostic::error(
                p.name.span,
                format!("procedure `{}` is defined more than once", p.name.text),
            ));
        } else {
            prog.by_name.insert(p.name.text.clone(), idx);
        }
    }
    if let Some(diag) = entry_result_mismatch(prog, p, &scope) {
        out.diags.push(diag);
    }
    let save_name = p
        .entry_of
        .as_ref()
        .map_or_else(|| ir_name.clone(), |e| e.text.clone());
    prog.units.push(Unit {
        ast: p,
        ir_name,
        save_name,
        host,
        module,
        scope,
        host_vars: Vec::new(),
        children: Vec::new(),
        dummy_procs,
        own_dummies,
    });
    if let Some(h) = host {
        prog.units[h].children.push(idx);
    }
    for c in &p.contains {
        collect_unit(prog, out, c, Some(idx), module);
    }
}

/// Host association: which host variables each internal procedure uses
/// (directly, through calls to other internal procedures it sees, or for
/// its own internal procedures: a variable of an outer host reaches a
/// nested subprogram through every host in between).
fn compute_host_vars(prog: &mut Program) {
    let n = prog.units.len();
    let mut refs: Vec<BTreeSet<String>> = vec![BTreeSet::new(); n];
    // The variables each unit sees in its hosts (hosts come first).
    let mut visible: Vec<BTreeSet<String>> = vec![BTreeSet::new(); n];
    for u in 0..n {
        let Some(h) = prog.units[u].host else {
            continue;
        };
        let mut names = lowerer::referenced_names(prog.units[u].ast);
        // A derived-type variable stands for its components.
        let structs: Vec<String> = names
            .iter()
            .filter_map(|n| prog.units[h].scope.struct_decl(n))
            .flat_map(|s| s.leaves.iter().cloned())
            .collect();
        names.extend(structs);
        refs[u] = names;
        let mut seen = lowerer::host_variable_names(&prog.units[h]);
        seen.extend(visible[h].iter().cloned());
        // Persistent ALLOCATABLE arrays are passed by descriptor instead.
        seen.retain(|name| prog.persistent_alloc(h, name).is_none());
        visible[u] = seen;
    }
    let mut uses: Vec<BTreeSet<String>> = vec![BTreeSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for u in (0..n).rev() {
            let Some(h) = prog.units[u].host else {
                continue;
            };
            let own = &prog.units[u].scope;
            let local = |name: &String| own.syms.contains_key(name);
            let mut need = BTreeSet::new();
            for name in &refs[u] {
                if local(name) {
                    continue;
                }
                if visible[u].contains(name) {
                    need.insert(name.clone());
                } else if let Some(c) = prog.find_proc(u, name) {
                    if prog.units[c].host.is_some() && c != u {
                        need.extend(uses[c].iter().filter(|x| !local(x)).cloned());
                    }
                }
            }
            for &c in &prog.units[u].children {
                need.extend(
                    uses[c]
                        .iter()
                        .filter(|x| !local(x) && visible[u].contains(*x))
                        .cloned(),
                );
            }
            // Bounds of host arrays are host variables too.
            let extra: Vec<String> = need
                .iter()
                .flat_map(|name| {
                    let d = prog.declaring_unit(h, name);
                    lowerer::bound_names(&prog.units[d].scope, name)
                })
                .filter(|b| visible[u].contains(b) && !local(b))
                .collect();
            need.extend(extra);
            if need != uses[u] {
                uses[u] = need;
                changed = true;
            }
        }
    }
    for (u, set) in uses.into_iter().enumerate() {
        prog.units[u].host_vars = set.into_iter().collect();
    }
}

/// The dummy procedures of its hosts each nested or internal procedure
/// uses (directly, or through the internal procedures it contains or
/// names), appended to its `dummy_procs`: a procedure passed to a host is
/// bound in the nested subprogram's instance like one of its own.
fn compute_captured(prog: &mut Program) {
    let n = prog.units.len();
    let refs: Vec<BTreeSet<String>> = prog
        .units
        .iter()
        .map(|u| match u.host {
            Some(_) => lowerer::referenced_names(u.ast),
            None => BTreeSet::new(),
        })
        .collect();
    // Whether `name` is a dummy procedure of a host of `u` (not hidden by
    // a variable of a host in between).
    let host_dummy = |prog: &Program, u: usize, name: &str| {
        let mut at = prog.units[u].host;
        while let Some(a) = at {
            let unit = &prog.units[a];
            if unit.dummy_procs[..unit.own_dummies]
                .iter()
                .any(|d| d.text == name)
            {
                return true;
            }
            if unit.scope.var(name).is_some() {
                return false;
            }
            at = unit.host;
        }
        false
    };
    let mut captured: Vec<BTreeSet<String>> = vec![BTreeSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for u in (0..n).rev() {
            if prog.units[u].host.is_none() {
                continue;
            }
            let unit = &prog.units[u];
            let local = |name: &String| {
                unit.scope.var(name).is_some() || unit.dummy_procs.iter().any(|d| &d.text == name)
            };
            let mut names: BTreeSet<String> = refs[u].clone();
            for &c in &unit.children {
                names.extend(captured[c].iter().cloned());
            }
            for r in &refs[u] {
                if let Some(c) = prog.find_proc(u, r) {
                    if c != u && prog.units[c].host.is_some() {
                        names.extend(captured[c].iter().cloned());
                    }
                }
            }
            let need: BTreeSet<String> = names
                .into_iter()
                .filter(|x| !local(x) && host_dummy(prog, u, x))
                .collect();
            if need != captured[u] {
                captured[u] = need;
                changed = true;
            }
        }
    }
    for (u, set) in captured.into_iter().enumerate() {
        let span = prog.units[u].ast.name.span;
        prog.units[u]
            .dummy_procs
            .extend(set.into_iter().map(|text| Name { text, span }));
    }
}
