//! The public API: compile Fortran source into callable primal, tangent and
//! adjoint procedures.
//!
//! It owns the thin layer that drives every other part (front end, AD
//! transforms, JIT or interpreter) and turns their errors into located
//! [`Error`]s; it knows nothing of the command line built on it.
//!
//! ```no_run
//! use adjit::engine::Engine;
//! let engine = Engine::from_source("f.f90", "subroutine sq(x, y)\n  double precision x, y\n  y = x*x\nend subroutine\n")?;
//! let f = engine.procedure(Some("sq"))?;
//! let mut args = f.args();
//! args.set_scalar("x", 3.0)?;
//! f.call(&mut args)?;
//! assert_eq!(args.scalar("y")?, 9.0);
//! # Ok::<(), adjit::engine::Error>(())
//! ```
//!
//! An [`Engine`] owns the sources and the code-list module; a [`Procedure`]
//! is one compiled procedure (JIT by default, or the reference interpreter);
//! [`Engine::tangent`] and [`Engine::adjoint`] generate and compile
//! derivative procedures and return handles that compute directional
//! derivatives, gradients and Jacobians.

mod args;
mod derivatives;
mod farfel;
mod state;

pub use crate::front::sema::{BoundProcedure, ProcedureArg};
pub use args::{ArgValue, Args};
pub use derivatives::{
    element_count, Adjoint, AdjointStats, FiniteDifferences, Hessian, HessianMatrix, Jacobian,
    SecondDirectional, Selection, Tangent, Tape, Workspace,
};
pub use state::GlobalState;

use crate::front::diag::{Diagnostic, Rendered, SourceMap};
use crate::front::source::SourceForm;
use adjit_ir::interp::{Interpreter, SavedStacks};
pub use adjit_ir::io::Channels;
use adjit_ir::{Buffer, RuntimeError};
use adjit_ir::{GlobalId, Module, ProcId, StackKind};
/// When optimized native code is compiled ([`Options::tiering`]).
pub use adjit_jit::codegen::Tiering;
use adjit_jit::codegen::{ArgBuffers, CompileSpeed, CompiledModule, JitOptions};
use adjit_jit::globals::GlobalStore;
use adjit_jit::runtime::{default_memory_limit, Limits, Runtime, TapePosition};
use adjit_jit::stack::StackConfig;
use state::Held;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What went wrong, broadly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source was rejected (parse or semantic errors).
    Compile,
    /// Generated code reported a runtime error (bounds, division by zero,
    /// STOP, argument sizes).
    Runtime,
    /// The request was wrong (unknown names, bad values).
    Usage,
    /// A file could not be read or written.
    Io,
    /// Differentiation or native compilation failed.
    Internal,
}

/// The one error type of the API. Its message already carries
/// `file:line:col` locations and source excerpts where they exist.
#[derive(Clone, Debug)]
pub struct Error {
    /// The category.
    pub kind: ErrorKind,
    /// The full, rendered message.
    pub message: String,
    /// The runtime error behind a `Runtime` error (boxed to keep `Error`
    /// small).
    pub runtime: Option<Box<RuntimeError>>,
    /// Where the (first) error points in the Fortran source, for compile
    /// errors and located runtime errors (bindings such as the Python
    /// package report it as structured fields).
    pub location: Option<Location>,
}

/// A position in a source file of the program, 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file's name as given to the engine.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl Location {
    /// The location of a span in `map` (`None` for an unknown position).
    fn of(map: &SourceMap, span: adjit_ir::Span) -> Option<Location> {
        (span.line != 0).then(|| Location {
            file: map.name(span.file).to_string(),
            line: span.line,
            col: span.col,
        })
    }
}

impl Error {
    /// A new error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            runtime: None,
            location: None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Which executor runs compiled procedures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Native code from Cranelift (the default).
    #[default]
    Jit,
    /// The reference interpreter of the IR.
    Interpreter,
}

/// How an [`Engine`] reads sources and runs procedures.
#[derive(Clone, Debug)]
pub struct Options {
    /// Force fixed or free form (default: guessed from each file name).
    pub form: Option<SourceForm>,
    /// Array bounds checks in generated code (default on).
    pub bounds_checks: bool,
    /// JIT or interpreter.
    pub backend: Backend,
    /// Bytes of RAM the adjoint's tape may use before it continues in a
    /// memory-mapped temporary file (default 4 GiB).
    pub tape_ram_budget: usize,
    /// Directories searched, in order, for the files of INCLUDE lines not
    /// found next to the including file (the command line's `-I DIR`).
    pub include_dirs: Vec<PathBuf>,
    /// Where the program's PRINT and WRITE output goes and where READ
    /// takes its input (default: standard output and standard input). A
    /// caller captures the output with a channel of its own, such as an
    /// `Arc<Mutex<Vec<u8>>>`.
    pub io: Channels,
    /// Procedures passed for the dummy procedures of entries (the command
    /// line's `--set fcn=myfcn`): a procedure that takes dummy procedures
    /// (`external fcn`) can be an entry once each of them is given here;
    /// it keeps its name. The procedure is one of the program's, or an
    /// intrinsic function (`dsin`). See [`Options::bind_procedure`].
    pub procedure_args: Vec<ProcedureArg>,
    /// Run each native call on a fresh stack of this many bytes (default:
    /// on the caller's stack). Whatever the stack, generated code stops a
    /// recursion that would overflow it with a runtime error.
    pub stack_size: Option<usize>,
    /// Wall-clock limit of one native call (default none); the call fails
    /// with a timeout error at the loop where it was. Setting it compiles
    /// a counter into every loop (no code without it).
    pub timeout: Option<Duration>,
    /// Bytes the local arrays of one call (automatic and large local
    /// arrays) and each argument the engine allocates may take (default:
    /// the machine's physical memory).
    pub memory_limit: usize,
    /// Inline small non-recursive procedures into their callers before
    /// native compilation (default on; see `adjit::jit::opt::inline`). Off
    /// keeps every call a native call, counted by the call-depth limit:
    /// useful to debug the JIT or to test call depth exactly.
    pub inline: bool,
    /// Skip the trips of a counted loop that only repeat earlier ones once
    /// the state it carries repeats bit for bit (default on; see
    /// `adjit::jit::opt::fixpoint`). Results are the same either way.
    pub fixed_point_exits: bool,
    /// Cranelift's compile-time against code-speed setting (default
    /// [`CompileSpeed::Optimized`]; [`CompileSpeed::Fast`] for code run
    /// once, as by a fuzzer).
    pub compile_speed: CompileSpeed,
    /// Fuse float products into the sums and differences that use them
    /// (fused multiply-adds; default off; see `adjit::jit::opt::fma`).
    /// Shorter dependency chains (a tangent's recurrence), but results may
    /// differ from the unfused ones, and from the interpreter's, by a
    /// rounding: the fused operation rounds once. Strong zeros keep their
    /// meaning.
    pub fma_contraction: bool,
    /// When the optimized native code is compiled (default
    /// [`Tiering::Tiered`]: a handle is callable once its baseline code is
    /// compiled, in about half the time, and its calls switch to the
    /// optimized code, compiled on a background thread from the handle's
    /// first call on, once it is ready; `wait_optimized` on a handle
    /// waits for it). [`Tiering::Optimized`]
    /// compiles the optimized code only, before the handle is returned.
    /// Results and errors are the same, bit for bit, whatever the tier.
    pub tiering: Tiering,
}

impl Options {
    /// Passes `procedure` (a procedure of the program or an intrinsic) for
    /// the dummy procedure `dummy` of the entry `entry`.
    pub fn bind_procedure(mut self, entry: &str, dummy: &str, procedure: &str) -> Options {
        let arg = ProcedureArg {
            entry: entry.trim().to_ascii_lowercase(),
            dummy: dummy.trim().to_ascii_lowercase(),
            procedure: procedure.trim().to_ascii_lowercase(),
        };
        self.procedure_args
            .retain(|a| (&a.entry, &a.dummy) != (&arg.entry, &arg.dummy));
        self.procedure_args.push(arg);
        self
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            form: None,
            bounds_checks: true,
            backend: Backend::Jit,
            tape_ram_budget: StackConfig::default().ram_budget,
            include_dirs: Vec::new(),
            procedure_args: Vec::new(),
            io: Channels::standard(),
            stack_size: None,
            timeout: None,
            memory_limit: default_memory_limit(),
            inline: true,
            fixed_point_exits: true,
            compile_speed: CompileSpeed::default(),
            fma_contraction: false,
            tiering: Tiering::Tiered,
        }
    }
}

/// A compiled program: sources, code lists, options, and the program's
/// state (its globals), shared by every handle made from it.
pub struct Engine {
    sources: Arc<SourceMap>,
    module: Arc<Module>,
    warnings: Vec<Diagnostic>,
    options: Options,
    globals: GlobalStore,
    /// Procedures left out for want of procedures for their dummy
    /// procedures, with those dummies' names.
    unbound: Vec<(String, Vec<String>)>,
    /// Entries given procedures for their dummy procedures.
    bound: Vec<(String, Vec<BoundProcedure>)>,
    /// The main PROGRAM, when the sources have one.
    main_program: Option<ProcId>,
}

impl Engine {
    /// Compiles one source text with default options (form guessed from the
    /// name).
    pub fn from_source(name: &str, text: &str) -> Result<Engine, Error> {
        Engine::from_sources(&[(name.to_string(), text.to_string())], Options::default())
    }

    /// Compiles several files forming one program. A file that is not
    /// UTF-8 is read byte for byte (Latin-1 comments and strings).
    /// INCLUDE lines are read from disk as described at
    /// [`Options::include_dirs`].
    pub fn from_files<P: AsRef<Path>>(paths: &[P], options: Options) -> Result<Engine, Error> {
        let mut sources = Vec::new();
        for p in paths {
            let p = p.as_ref();
            let bytes = std::fs::read(p).map_err(|e| {
                Error::new(ErrorKind::Io, format!("{}: cannot read: {e}", p.display()))
            })?;
            sources.push((p.display().to_string(), crate::front::diag::decode(&bytes)));
        }
        Engine::from_sources(&sources, options)
    }

    /// Compiles several `(name, text)` sources forming one program. The
    /// files named by INCLUDE lines are looked for next to the source's
    /// name, then in [`Options::include_dirs`].
    pub fn from_sources(sources: &[(String, String)], options: Options) -> Result<Engine, Error> {
        let mut map = SourceMap::new();
        let mut files = Vec::new();
        let mut diags = Vec::new();
        for (name, text) in sources {
            let id = map.add(name.clone(), text.clone());
            let form = options.form.unwrap_or_else(|| SourceForm::guess(name));
            let (file, d) = crate::front::parser::parse_file_with_includes(
                &mut map,
                id,
                form,
                &options.include_dirs,
            );
            files.push(file);
            diags.extend(d);
        }
        if diags.iter().any(Diagnostic::is_error) {
            return Err(compile_error(&map, &diags));
        }
        match crate::front::sema::compile_with(&map, &files, &options.procedure_args) {
            Ok(mut compiled) => {
                if !compiled.adf_calls.is_empty() {
                    let module = std::mem::take(&mut compiled.module);
                    compiled.module = farfel::expand(module, &compiled.adf_calls, &map)?;
                }
                diags.extend(compiled.warnings);
                check_global_sizes(&compiled.module, options.memory_limit)?;
                let globals = GlobalStore::new(&compiled.module.globals)
                    .map_err(|e| Error::new(ErrorKind::Compile, e))?;
                Ok(Engine {
                    sources: Arc::new(map),
                    module: Arc::new(compiled.module),
                    warnings: diags,
                    options,
                    globals,
                    unbound: compiled.unbound,
                    bound: compiled.bound,
                    main_program: compiled.main_program,
                })
            }
            Err(errors) => {
                diags.extend(errors);
                Err(compile_error(&map, &diags))
            }
        }
    }

    /// The code-list module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The options in force.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Warnings, rendered with locations.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings
            .iter()
            .filter(|d| !d.is_error())
            .map(|d| self.sources.render(d))
            .collect()
    }

    /// The dummy procedures of a procedure that takes some and was left out
    /// because they are not bound (empty for any other name): what
    /// [`Options::bind_procedure`] must name to make it an entry.
    pub fn unbound_dummy_procedures(&self, name: &str) -> Vec<String> {
        self.unbound
            .iter()
            .find(|(p, _)| p.eq_ignore_ascii_case(name.trim()))
            .map(|(_, d)| d.clone())
            .unwrap_or_default()
    }

    /// Of `NAME=VALUE` settings (the command line's `--set`), those that
    /// name the procedure to pass for a dummy procedure of `entry` left
    /// unbound here, for [`Options::procedure_args`]: compile again with
    /// them to call it.
    pub fn procedure_settings<S: AsRef<str>>(
        &self,
        entry: &str,
        settings: &[S],
    ) -> Vec<ProcedureArg> {
        let dummies = self.unbound_dummy_procedures(entry);
        settings
            .iter()
            .filter_map(|s| s.as_ref().split_once('='))
            .filter(|(name, _)| dummies.iter().any(|d| d.eq_ignore_ascii_case(name.trim())))
            .map(|(name, value)| ProcedureArg {
                entry: entry.trim().to_ascii_lowercase(),
                dummy: name.trim().to_ascii_lowercase(),
                procedure: value.trim().to_ascii_lowercase(),
            })
            .collect()
    }

    /// True when `setting` (`NAME=VALUE`) named the procedure passed for a
    /// dummy procedure of `entry` (no argument: see
    /// [`Engine::procedure_settings`]).
    pub fn is_procedure_setting(&self, entry: &str, setting: &str) -> bool {
        let name = setting.split_once('=').map_or(setting, |(n, _)| n).trim();
        self.bound_procedures(entry)
            .iter()
            .any(|b| b.dummy.eq_ignore_ascii_case(name))
    }

    /// The procedures passed for the dummy procedures of an entry (through
    /// [`Options::bind_procedure`]), by position among its dummy arguments
    /// (empty for a procedure without dummy procedures).
    pub fn bound_procedures(&self, name: &str) -> Vec<BoundProcedure> {
        self.bound
            .iter()
            .find(|(p, _)| p.eq_ignore_ascii_case(name.trim()))
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    }

    /// Resolves an entry name; `None` picks the main PROGRAM when the
    /// sources have one, else the first procedure.
    pub fn entry(&self, name: Option<&str>) -> Result<ProcId, Error> {
        if let Some(n) = name {
            let dummies = self.unbound_dummy_procedures(n);
            if !dummies.is_empty() {
                let list: Vec<String> = dummies.iter().map(|d| format!("`{d}`")).collect();
                let example: Vec<String> =
                    dummies.iter().map(|d| format!("--set {d}=NAME")).collect();
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "`{n}` takes the dummy procedure(s) {}: name the procedure to pass ({}, or Options::bind_procedure)",
                        list.join(", "),
                        example.join(" ")
                    ),
                ));
            }
        }
        match name {
            Some(n) => self.module.find_proc(n).ok_or_else(|| {
                let names: Vec<&str> = self.module.procs.iter().map(|p| p.name.as_str()).collect();
                Error::new(
                    ErrorKind::Usage,
                    format!(
                        "no procedure named `{n}` (procedures: {})",
                        names.join(", ")
                    ),
                )
            }),
            None => match self.main_program {
                Some(main) => Ok(main),
                None if self.module.procs.is_empty() => {
                    Err(Error::new(ErrorKind::Usage, "the program has no procedure"))
                }
                None => Ok(ProcId(0)),
            },
        }
    }

    /// Compiles (or prepares for interpretation) one procedure.
    pub fn procedure(&self, name: Option<&str>) -> Result<Procedure, Error> {
        let proc = self.entry(name)?;
        let exec = self.executor_for(self.program(), &[proc])?;
        Ok(Procedure {
            program: self.program(),
            proc,
            writes: exec.written_by(&[proc]),
            exec,
        })
    }

    /// An executor of `program` (this program or a derivative of it) against
    /// the program's globals.
    fn executor(&self, program: Program) -> Result<Executor, Error> {
        Executor::new(program, &self.options, &self.globals)
    }

    /// An executor of `program` that can run only `entries` (and what they
    /// call): the rest of the module is not compiled.
    fn executor_for(&self, program: Program, entries: &[ProcId]) -> Result<Executor, Error> {
        Executor::for_entries(program, &self.options, &self.globals, Some(entries), false)
    }

    /// A copy of the program's state: the values of its globals (module
    /// variables, SAVE locals, DATA-initialised variables). Every handle made
    /// from this engine (primal, tangent, adjoint) reads and writes these
    /// globals; a primal call advances them, a derivative evaluation leaves
    /// them as one primal call from its starting state would.
    pub fn state(&self) -> GlobalState {
        GlobalState::take_all(&self.globals.lock(), self.globals.len())
            .with_kept(self.globals.kept())
    }

    /// Number of values the program keeps between calls in its kept
    /// records: for each ALLOCATABLE module or SAVE array owned by a
    /// procedure called through the API, whether it is allocated, its
    /// bounds and its elements. It follows the arrays' current sizes, not
    /// the number of calls; the records are released with the engine.
    pub fn kept_values(&self) -> usize {
        self.globals.kept().values()
    }

    /// Runs `f` (evaluations of handles of this engine), then puts the
    /// program's globals back to their state before it, whatever `f`
    /// returned: several evaluations wrapped this way all start from one
    /// state, as `adjit check` needs.
    pub fn restoring_state<T, E: From<Error>>(
        &self,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let start = self.state();
        let result = f();
        self.set_state(&start)?;
        result
    }

    /// Puts the program's globals back to a state taken by
    /// [`Engine::state`] (a usage error for a state of another program).
    pub fn set_state(&self, state: &GlobalState) -> Result<(), Error> {
        state.put(&mut self.globals.lock())?;
        state.put_kept(self.globals.kept());
        Ok(())
    }

    /// Renders a runtime error with its Fortran location.
    pub fn render_runtime(&self, e: &RuntimeError) -> Error {
        self.program().runtime_error(e)
    }

    fn program(&self) -> Program {
        Program {
            sources: self.sources.clone(),
            module: self.module.clone(),
        }
    }

    /// Names of the procedures, in module order.
    pub fn procedure_names(&self) -> Vec<String> {
        self.module.procs.iter().map(|p| p.name.clone()).collect()
    }
}

/// Sources and module shared by every handle made from an [`Engine`].
#[derive(Clone)]
pub(crate) struct Program {
    pub(crate) sources: Arc<SourceMap>,
    pub(crate) module: Arc<Module>,
}

impl Program {
    /// The Fortran name of a procedure: a generated derivative procedure
    /// (`g_fwd`, `g_dv`, ...) is named by the procedure of the source it
    /// was made from (the one at the same place whose name it extends).
    fn source_name<'m>(&'m self, p: &'m adjit_ir::Proc) -> &'m str {
        self.module
            .procs
            .iter()
            .filter(|q| {
                q.span == p.span
                    && q.name.len() < p.name.len()
                    && p.name.starts_with(&q.name)
                    && p.name[q.name.len()..].starts_with('_')
            })
            .map(|q| q.name.as_str())
            .min_by_key(|n| n.len())
            .unwrap_or(&p.name)
    }

    /// Turns a runtime error into an API error with `file:line:col`.
    pub(crate) fn runtime_error(&self, e: &RuntimeError) -> Error {
        let proc = self
            .module
            .procs
            .get(e.proc.index())
            .map(|p| self.source_name(p))
            .unwrap_or("?");
        let diag = Diagnostic::error(e.span, format!("runtime error in `{proc}`: {e}"));
        let message = if e.span.line == 0 {
            diag.message.clone()
        } else {
            self.sources.render(&diag)
        };
        Error {
            kind: ErrorKind::Runtime,
            message,
            runtime: Some(Box::new(e.clone())),
            location: Location::of(&self.sources, e.span),
        }
    }
}

/// Refuses a program whose module variables and COMMON blocks together
/// need more than `limit` bytes (before any is allocated).
fn check_global_sizes(module: &Module, limit: usize) -> Result<(), Error> {
    let mut total = 0usize;
    for g in &module.globals {
        let bytes = adjit_jit::globals::global_bytes(g);
        total = total.saturating_add(bytes);
        if total > limit {
            return Err(Error::new(
                ErrorKind::Compile,
                format!(
                    "global `{}` needs {bytes} bytes: the program's globals exceed the memory limit of {limit} bytes",
                    g.name
                ),
            ));
        }
    }
    Ok(())
}

fn internal_error(e: String) -> Error {
    Error::new(ErrorKind::Internal, e)
}

fn compile_error(map: &SourceMap, diags: &[Diagnostic]) -> Error {
    let errors: Vec<Diagnostic> = diags.iter().filter(|d| d.is_error()).cloned().collect();
    let mut error = Error::new(ErrorKind::Compile, Rendered(map, &errors).to_string());
    error.location = errors.first().and_then(|d| Location::of(map, d.span));
    error
}

/// Runs procedures of one module: natively or by interpretation, against
/// the program's global storage.
pub(crate) struct Executor {
    /// The sources and module, for rendering runtime errors.
    program: Program,
    run: Run,
    /// How many of the module's globals are the program's (the rest are the
    /// derivative globals of a tangent or adjoint module).
    shared: usize,
    /// The program's I/O channels.
    io: Channels,
    /// Bytes an argument buffer or a call's local arrays may take.
    memory_limit: usize,
    /// The runtime of the last [`Executor::call`] when it kept little
    /// memory mapped, for the next call to reuse (a fresh runtime per call
    /// cost a primal of a microsecond a good part of its time).
    spare: std::sync::Mutex<Option<Box<Runtime>>>,
    /// This executor's identity among the program's, the token of the
    /// runtimes it set up (see [`Runtime::mark_set_up`]).
    id: u64,
}

/// Memory (stack segments and local-array arena) a runtime may keep mapped
/// to be kept as an [`Executor`]'s spare between calls.
const SPARE_RUNTIME_BYTES: u64 = 1 << 20;

/// Whether `runtime` holds little enough memory to be kept as a spare.
#[inline]
fn worth_keeping(runtime: &Runtime) -> bool {
    runtime.mapped_bytes() <= SPARE_RUNTIME_BYTES
}

/// The machinery behind an [`Executor`].
enum Run {
    /// Native code (holding its global storage), and the stack
    /// configuration and limits of its runtimes.
    Jit(Box<CompiledModule>, StackConfig, Limits),
    /// The reference interpreter over the module; the globals are copied in
    /// and out of the store around every call.
    Interp {
        module: Arc<Module>,
        bounds_checks: bool,
        globals: GlobalStore,
    },
}

impl Executor {
    /// An executor of `module`, whose first `root.len()` globals are the
    /// program's (shared with every other executor of the program).
    pub(crate) fn new(
        program: Program,
        options: &Options,
        root: &GlobalStore,
    ) -> Result<Executor, Error> {
        Executor::for_entries(program, options, root, None, false)
    }

    /// Like [`Executor::new`]; with `entries`, natively compiles only those
    /// procedures and the ones they call (calling another is an error).
    /// `dense_products` tells the JIT that the strong-zero products of the
    /// code are rarely zero (tangent code: see
    /// [`JitOptions::branch_on_zero_products`]).
    pub(crate) fn for_entries(
        program: Program,
        options: &Options,
        root: &GlobalStore,
        entries: Option<&[ProcId]>,
        dense_products: bool,
    ) -> Result<Executor, Error> {
        let module = program.module.clone();
        let globals = state::store_for(root, &module.globals)?;
        let run = match options.backend {
            Backend::Jit => {
                let jit_options = JitOptions {
                    bounds_checks: options.bounds_checks,
                    time_checks: options.timeout.is_some(),
                    inline: options.inline,
                    fixed_point_exits: options.fixed_point_exits,
                    compile_speed: options.compile_speed,
                    branch_on_zero_products: dense_products,
                    // Tangent code branches on each product; the guards of
                    // a product chain's running tangent take one test.
                    speculate_carried_guards: true,
                    contract_fma: options.fma_contraction,
                    tiering: options.tiering,
                    ..JitOptions::default()
                };
                let compiled = match entries {
                    Some(roots) => {
                        CompiledModule::compile_reachable(&module, &jit_options, globals, roots)
                    }
                    None => CompiledModule::compile_with_globals(&module, &jit_options, globals),
                }
                .map_err(|e| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("native compilation failed: {e}"),
                    )
                })?;
                let stacks = StackConfig {
                    ram_budget: options.tape_ram_budget,
                    ..StackConfig::default()
                };
                let limits = Limits {
                    stack_size: options.stack_size,
                    time: options.timeout,
                    memory: options.memory_limit,
                };
                Run::Jit(Box::new(compiled), stacks, limits)
            }
            Backend::Interpreter => Run::Interp {
                module,
                bounds_checks: options.bounds_checks,
                globals,
            },
        };
        Ok(Executor {
            program,
            run,
            shared: root.len(),
            io: options.io.clone(),
            memory_limit: options.memory_limit,
            spare: std::sync::Mutex::new(None),
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        })
    }

    /// Waits until calls run the optimized native code (see
    /// [`Options::tiering`]); at once for the interpreter.
    pub(crate) fn wait_optimized(&self) -> Result<(), Error> {
        match &self.run {
            Run::Jit(c, ..) => c.wait_optimized().map_err(|e| {
                Error::new(
                    ErrorKind::Internal,
                    format!("optimized native compilation failed: {e}"),
                )
            }),
            Run::Interp { .. } => Ok(()),
        }
    }

    /// Zero arguments of `proc` (of this executor's module or the primal
    /// one), within the memory limit.
    pub(crate) fn args(&self, proc: &adjit_ir::Proc) -> Args {
        Args::with_memory_limit(proc, self.memory_limit)
    }

    /// The global storage the module runs against.
    fn store(&self) -> &GlobalStore {
        match &self.run {
            Run::Jit(c, ..) => c.globals(),
            Run::Interp { globals, .. } => globals,
        }
    }

    /// Runs one procedure on the given buffers from the current state.
    /// Reuses the runtime of an earlier call when one is spare (concurrent
    /// calls make their own); results are the same either way.
    ///
    /// The spare's lock is taken once, without waiting, and held over the
    /// call (one uncontended lock instead of two); a call that finds it
    /// held (another thread's call, or a call made from within one) runs
    /// on a new runtime.
    pub(crate) fn call(&self, proc: ProcId, args: &mut [Buffer]) -> Result<(), Error> {
        let Ok(mut spare) = self.spare.try_lock() else {
            return self.call_reusing(&mut None, proc, args);
        };
        let result = self.call_reusing(&mut spare, proc, args);
        if !spare.as_deref().is_some_and(worth_keeping) {
            *spare = None;
        }
        result
    }

    /// Runs one procedure on the given buffers from the current state (as
    /// [`Executor::call`]) on `runtime` (a new one when `None`), left in
    /// `runtime` for the caller to reuse. A module without globals (the
    /// common case of an optimizer's objective) runs straight on the
    /// runtime: no frame of globals, no session.
    #[inline]
    pub(crate) fn call_reusing(
        &self,
        runtime: &mut Option<Box<Runtime>>,
        proc: ProcId,
        args: &mut [Buffer],
    ) -> Result<(), Error> {
        if let Some(result) = self.call_direct(runtime, proc, args) {
            return result;
        }
        let mut held = self.hold()?;
        let mut session = Session::with_runtime(self, runtime.take());
        let result = session.call_held(&mut held, proc, args);
        *runtime = session.into_runtime();
        result
    }

    /// Runs `proc` on `args` (buffers gathered by the caller: see
    /// [`ArgBuffers`]) straight on `runtime` (a new one when `None`, left
    /// there for reuse) when this executor runs native code without
    /// globals; `None`, running nothing, otherwise (the caller then runs
    /// it with [`Executor::call_reusing`]).
    #[inline]
    pub(crate) fn call_direct<A: ArgBuffers + ?Sized>(
        &self,
        runtime: &mut Option<Box<Runtime>>,
        proc: ProcId,
        args: &mut A,
    ) -> Option<Result<(), Error>> {
        let compiled = self.in_place()?;
        let mut rt = self.ready_runtime(runtime.take());
        let result = compiled.call_with_buffers(proc, args, &mut rt);
        *runtime = Some(rt);
        Some(result.map_err(|e| self.program.runtime_error(&e)))
    }

    /// True when [`Executor::call_direct`] runs calls (native code without
    /// globals): argument storage is then read and written where the
    /// caller holds it, whatever its owner.
    pub(crate) fn runs_in_place(&self) -> bool {
        self.in_place().is_some()
    }

    /// The compiled module when this executor runs native code without
    /// globals.
    #[inline]
    fn in_place(&self) -> Option<&CompiledModule> {
        match &self.run {
            Run::Jit(compiled, ..) if compiled.globals().is_empty() => Some(compiled),
            _ => None,
        }
    }

    /// The runtime an earlier call left spare, if any (see
    /// [`Executor::keep`]).
    fn take_spare(&self) -> Option<Box<Runtime>> {
        // Not waiting: the lock may be held by a call on this thread.
        self.spare.try_lock().ok().and_then(|mut s| s.take())
    }

    /// A session on the runtime an earlier call left spare, if any (see
    /// [`Executor::keep_runtime`]), else on a new one.
    pub(crate) fn session(&self) -> Session<'_> {
        Session::with_runtime(self, self.take_spare())
    }

    /// Keeps the runtime of a finished session as this executor's spare
    /// (see [`Executor::keep`]).
    pub(crate) fn keep_runtime(&self, session: Session<'_>) {
        if let Some(runtime) = session.into_runtime() {
            self.keep(runtime);
        }
    }

    /// Keeps `runtime` as this executor's spare when it holds little
    /// memory, for the next call or [`Executor::session`] (a runtime's
    /// stack segments and own native stack are mapped once).
    fn keep(&self, runtime: Box<Runtime>) {
        if worth_keeping(&runtime) {
            if let Ok(mut s) = self.spare.try_lock() {
                *s = Some(runtime);
            }
        }
    }

    /// `runtime` (a new one when `None`) ready for a call of this
    /// executor's native code: stacks emptied (their segments kept
    /// mapped), this executor's limits, I/O channels and kept records.
    /// Whatever an earlier call (failed, or on a silenced session) left in
    /// it is reset; a runtime this executor set up, unchanged since (see
    /// [`Runtime::is_set_up`]), is not set again.
    #[inline]
    fn ready_runtime(&self, runtime: Option<Box<Runtime>>) -> Box<Runtime> {
        let Run::Jit(compiled, stacks, limits) = &self.run else {
            return Box::new(Runtime::new());
        };
        let mut runtime = match runtime {
            Some(mut r) => {
                r.empty_stacks();
                r
            }
            None => Box::new(Runtime::with_config(stacks.clone())),
        };
        // Set up by this executor and unchanged since: nothing to set.
        if !runtime.is_set_up(self.id) {
            if runtime.limits() != limits {
                runtime.set_limits(limits.clone());
            }
            runtime.set_io_channels(&self.io);
            runtime.set_kept(compiled.globals().kept());
            runtime.mark_set_up(self.id);
        }
        runtime
    }

    /// The globals of an evaluation (a sequence of calls): a copy of the
    /// program's current ones, written back when it ends.
    pub(crate) fn hold(&self) -> Result<Held<'_>, Error> {
        Held::new(self.store(), self.shared)
    }

    /// The program's globals that `roots` (procedures of this executor's
    /// module) and their callees may write.
    pub(crate) fn written_by(&self, roots: &[ProcId]) -> Vec<GlobalId> {
        state::written_globals(&self.program.module, roots, self.shared)
    }
}

/// A stateful caller that keeps the runtime stacks between calls, so that a
/// forward sweep and several reverse sweeps share one tape.
pub(crate) struct Session<'a> {
    exec: &'a Executor,
    run: SessionRun<'a>,
}

/// The machinery behind a [`Session`].
enum SessionRun<'a> {
    /// Native code with its runtime.
    Jit {
        compiled: &'a CompiledModule,
        runtime: Box<Runtime>,
    },
    /// The interpreter, whose stacks persist across calls.
    Interp(Box<Interpreter<'a>>),
}

/// Where the stacks of a [`Session`] stood.
pub(crate) enum SessionMark {
    /// Positions in the native stacks (rewound in place).
    Jit(TapePosition),
    /// A copy of the interpreter's stacks.
    Interp(SavedStacks),
}

impl<'a> Session<'a> {
    /// A session on `exec`, reusing `runtime` (emptied, its stack segments
    /// kept mapped) when one is given.
    pub(crate) fn with_runtime(exec: &'a Executor, runtime: Option<Box<Runtime>>) -> Session<'a> {
        let run = match &exec.run {
            Run::Jit(c, ..) => SessionRun::Jit {
                compiled: c,
                runtime: exec.ready_runtime(runtime),
            },
            Run::Interp {
                module,
                bounds_checks,
                globals,
            } => {
                let mut interp = Interpreter::new(module);
                interp.set_bounds_checks(*bounds_checks);
                interp.set_io_channels(&exec.io);
                interp.set_kept(globals.kept());
                SessionRun::Interp(Box::new(interp))
            }
        };
        Session { exec, run }
    }

    /// Sends the output of the session's calls to, and takes their input
    /// from, `channels`.
    pub(crate) fn set_io_channels(&mut self, channels: &Channels) {
        match &mut self.run {
            SessionRun::Jit { runtime, .. } => runtime.set_io_channels(channels),
            SessionRun::Interp(interp) => interp.set_io_channels(channels),
        }
    }

    /// Discards the output of the session's further calls (the repeated
    /// evaluations of finite differences print nothing).
    pub(crate) fn silence_output(&mut self) {
        let channels = Channels {
            output: std::sync::Arc::new(std::sync::Mutex::new(std::io::sink())),
            ..self.exec.io.clone()
        };
        self.set_io_channels(&channels);
    }

    /// The session's native runtime (its stacks keep their segments), for
    /// reuse by a later session.
    pub(crate) fn into_runtime(self) -> Option<Box<Runtime>> {
        match self.run {
            SessionRun::Jit { runtime, .. } => Some(runtime),
            SessionRun::Interp(_) => None,
        }
    }

    /// Like [`Session::into_runtime`], leaving a fresh runtime in the
    /// session.
    pub(crate) fn take_runtime(&mut self) -> Option<Box<Runtime>> {
        match &mut self.run {
            SessionRun::Jit { runtime, .. } => Some(std::mem::take(runtime)),
            SessionRun::Interp(_) => None,
        }
    }

    /// Runs one procedure with the program's globals held: the module's
    /// derivative globals start at zero; the program's are as `held` has
    /// them.
    pub(crate) fn call_held(
        &mut self,
        held: &mut Held<'_>,
        proc: ProcId,
        args: &mut [Buffer],
    ) -> Result<(), Error> {
        let program = &self.exec.program;
        held.clear_derivatives();
        let Some(frame) = &mut held.frame else {
            return self
                .call_without_globals(proc, args)
                .map_err(|e| program.runtime_error(&e));
        };
        let result = match &mut self.run {
            SessionRun::Jit { compiled, runtime } => {
                compiled.call_in_frame(frame, proc, args, runtime)
            }
            SessionRun::Interp(interp) => {
                let n = frame.len();
                for i in 0..n {
                    let id = GlobalId(i as u32);
                    if let Some(value) = frame.get(id) {
                        interp.set_global(id, &value).map_err(internal_error)?;
                    }
                }
                let result = interp.call(proc, args);
                for i in 0..n {
                    let id = GlobalId(i as u32);
                    if let Some(value) = interp.global(id) {
                        frame.set(id, value).map_err(internal_error)?;
                    }
                }
                result
            }
        };
        result.map_err(|e| program.runtime_error(&e))
    }

    fn call_without_globals(
        &mut self,
        proc: ProcId,
        args: &mut [Buffer],
    ) -> Result<(), RuntimeError> {
        match &mut self.run {
            SessionRun::Jit { compiled, runtime } => compiled.call_with(proc, args, runtime),
            SessionRun::Interp(interp) => interp.call(proc, args),
        }
    }

    pub(crate) fn mark(&self) -> SessionMark {
        match &self.run {
            SessionRun::Jit { runtime, .. } => SessionMark::Jit(runtime.tape_position()),
            SessionRun::Interp(interp) => SessionMark::Interp(interp.save_stacks()),
        }
    }

    pub(crate) fn rewind(&mut self, mark: &SessionMark) {
        match (&mut self.run, mark) {
            (SessionRun::Jit { runtime, .. }, SessionMark::Jit(p)) => {
                runtime.rewind(*p);
            }
            (SessionRun::Interp(interp), SessionMark::Interp(saved)) => {
                interp.restore_stacks(saved)
            }
            _ => {}
        }
    }

    /// Bytes of tape segments backed by temporary files (native runtime).
    pub(crate) fn spilled_bytes(&self) -> u64 {
        match &self.run {
            SessionRun::Jit { runtime, .. } => {
                let s = runtime.stats();
                s.value.spilled_bytes + s.integer.spilled_bytes + s.control.spilled_bytes
            }
            SessionRun::Interp(_) => 0,
        }
    }

    /// The peak depth of each stack since the runtime was created (exact
    /// in the interpreter; in compiled code sampled when a stack changes
    /// segment and at the end of every call, so exact to within a segment).
    pub(crate) fn peaks(&self) -> [u64; 3] {
        let kinds = [StackKind::Value, StackKind::Integer, StackKind::Control];
        match &self.run {
            SessionRun::Jit { runtime, .. } => kinds.map(|k| runtime.stack_stats(k).peak),
            SessionRun::Interp(interp) => kinds.map(|k| interp.stack_peak(k) as u64),
        }
    }

    /// Bytes of stack memory mapped (compiled code; the interpreter's
    /// stacks are vectors: their peak bytes).
    pub(crate) fn mapped_bytes(&self) -> u64 {
        match &self.run {
            SessionRun::Jit { runtime, .. } => {
                let s = runtime.stats();
                s.value.mapped_bytes + s.integer.mapped_bytes + s.control.mapped_bytes
            }
            SessionRun::Interp(_) => 8 * self.peaks().iter().sum::<u64>(),
        }
    }

    /// Current depth of each stack.
    pub(crate) fn depths(&self) -> [u64; 3] {
        match &self.run {
            SessionRun::Jit { runtime, .. } => [
                runtime.depth(StackKind::Value),
                runtime.depth(StackKind::Integer),
                runtime.depth(StackKind::Control),
            ],
            SessionRun::Interp(interp) => [
                interp.stack_len(StackKind::Value) as u64,
                interp.stack_len(StackKind::Integer) as u64,
                interp.stack_len(StackKind::Control) as u64,
            ],
        }
    }
}

/// One compiled procedure of a program.
pub struct Procedure {
    program: Program,
    proc: ProcId,
    /// The program's globals a call may write.
    writes: Vec<GlobalId>,
    exec: Executor,
}

impl Procedure {
    /// Waits until calls run the optimized native code (see
    /// [`Options::tiering`]): benchmarks call it before they time. An error
    /// says why the optimized code could not be compiled (the baseline
    /// code then stays, with the same results).
    pub fn wait_optimized(&self) -> Result<(), Error> {
        self.exec.wait_optimized()
    }

    /// The procedure's name.
    pub fn name(&self) -> &str {
        &self.program.module.proc(self.proc).name
    }

    /// Its handle in the module.
    pub fn id(&self) -> ProcId {
        self.proc
    }

    /// True when the procedure is a FUNCTION (its result is the last
    /// argument, named `result` by [`Procedure::result_name`]).
    pub fn is_function(&self) -> bool {
        self.program.module.proc(self.proc).result.is_some()
    }

    /// The name of a FUNCTION's result argument.
    pub fn result_name(&self) -> Option<String> {
        let p = self.program.module.proc(self.proc);
        p.result.map(|r| p.var(r).name.clone())
    }

    /// A fresh, zeroed argument list for this procedure.
    pub fn args(&self) -> Args {
        self.exec.args(self.program.module.proc(self.proc))
    }

    /// Calls the procedure: arguments are read and written in place.
    pub fn call(&self, args: &mut Args) -> Result<(), Error> {
        self.call_buffers(args.buffers_mut())
    }

    /// Calls the procedure on raw buffers (one per parameter, in order).
    pub fn call_buffers(&self, buffers: &mut [Buffer]) -> Result<(), Error> {
        self.exec.call(self.proc, buffers)
    }
}
