//! The `adjit` command line: `run`, `ir`, `grad`, `jacobian`, `emit`,
//! `check`, `bench` and `repl`, per the contract in DESIGN.md. It owns
//! option parsing and output formats, and knows the public API only
//! (`adjit::engine` and what the library re-exports), no internals.

/// `print!` to standard output; a closed pipe (`adjit ... | head`) ends
/// the program quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` with the behaviour of [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => {{
        out!($($arg)*);
        out!("\n");
    }};
}

mod args;
mod bench;
mod check;
mod hessian;
mod options;
mod output;
mod repl;

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy, Reversal, ReversalSchedule};
use adjit::engine::{
    Args, Backend, Channels, Engine, Error, FiniteDifferences, Jacobian, Options, Procedure,
    Selection, Tiering,
};
use adjit::front::source::SourceForm;
use options::CommandLine;
use output::{
    nums, text_buffer, text_f64, text_matrix, to_json, BufferJson, Fields, MatrixJson, Num,
};
use serde::Serialize;
use std::path::PathBuf;

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    use std::io::IsTerminal;
    // Colour only on a terminal, and never with NO_COLOR set (non-empty).
    adjit::front::diag::set_color(
        std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    );
    match parse(std::env::args_os()) {
        Ok(cl) => report(dispatch(&cl)),
        Err(e) => {
            // `--help` and `--version` print to standard output and exit 0;
            // usage errors print to standard error and exit 2.
            let _ = e.print();
            e.exit_code()
        }
    }
}

/// Parses a command line (the program name first) with clap.
pub(crate) fn parse<I, T>(args: I) -> Result<CommandLine, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::Parser;
    args::Cli::try_parse_from(args).map(|cli| cli.command.fill())
}

/// Runs one parsed command.
pub(crate) fn dispatch(cl: &CommandLine) -> CmdResult {
    match cl.command.as_str() {
        "run" => run(cl),
        "ir" => ir(cl),
        "grad" => grad(cl),
        "jacobian" => jacobian(cl),
        "emit" => emit(cl),
        "check" => check::check(cl),
        "hessian" => hessian::hessian(cl),
        "bench" => bench::bench(cl),
        "repl" => repl::repl(cl),
        "completions" => completions(cl),
        other => Err(Failure::Usage(format!("unknown command `{other}`"))),
    }
}

/// `adjit completions SHELL`: the shell's completion script.
fn completions(cl: &CommandLine) -> CmdResult {
    use clap::{CommandFactory, ValueEnum};
    let name = cl.value("shell").unwrap_or_default();
    let shell = clap_complete::Shell::from_str(name, true)
        .map_err(|_| Failure::Usage(format!("no completions for the shell `{name}`")))?;
    let mut command = args::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "adjit", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(0)
}

/// Prints a failure and turns a result into an exit code.
pub(crate) fn report(result: CmdResult) -> i32 {
    match result {
        Ok(code) => code,
        Err(Failure::Usage(m)) => {
            eprintln!("adjit: {m}");
            2
        }
        Err(Failure::Api(e)) => {
            eprintln!("{e}");
            exit_code(&e)
        }
    }
}

/// The exit code of an engine error: 2 for a request the engine refused
/// (unknown names in `--of`, `--wrt`, `--set` or `--entry`, a value its
/// argument cannot take), 1 for the program's errors (rejected source,
/// runtime errors) and the rest.
pub(crate) fn exit_code(e: &Error) -> i32 {
    match e.kind {
        adjit::engine::ErrorKind::Usage => 2,
        _ => 1,
    }
}

/// Writes to standard output; exits quietly when the reader went away.
pub(crate) fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("adjit: cannot write output: {e}");
        std::process::exit(1);
    }
}

/// Why a command failed.
pub(crate) enum Failure {
    /// Bad command line.
    Usage(String),
    /// An error from the engine (already rendered with locations).
    Api(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Api(e)
    }
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Usage(e)
    }
}

pub(crate) type CmdResult = Result<i32, Failure>;

/// Native stack of the command line's calls unless `--stack-size` says
/// otherwise (generated code stops a deeper recursion with an error).
const DEFAULT_STACK_SIZE: usize = 256 << 20;

/// Compiles the files of the command line.
pub(crate) fn engine(cl: &CommandLine) -> Result<Engine, Failure> {
    if cl.files.is_empty() && cl.sources.is_empty() {
        return Err(Failure::Usage(format!(
            "`adjit {}` needs at least one source file",
            cl.command
        )));
    }
    let form = match cl.value("form") {
        None => None,
        Some("fixed") => Some(SourceForm::Fixed),
        Some("free") => Some(SourceForm::Free),
        Some(other) => {
            return Err(Failure::Usage(format!(
                "--form must be fixed or free, not `{other}`"
            )))
        }
    };
    let options = Options {
        form,
        bounds_checks: !cl.flag("no-bounds-check"),
        // A command evaluates once and waits for the result, which may be
        // one long call that cannot switch tiers midway: optimized code
        // only. (The REPL, which answers many small requests, tiers.)
        tiering: Tiering::Optimized,
        include_dirs: cl.values("include-dir").iter().map(PathBuf::from).collect(),
        backend: if cl.flag("interp") {
            Backend::Interpreter
        } else {
            Backend::Jit
        },
        // With --json, standard output carries one JSON document: the
        // program's own PRINT / WRITE output goes to standard error.
        io: if cl.flag("json") {
            Channels::standard_error()
        } else {
            Channels::standard()
        },
        stack_size: Some(cl.limits.stack_size.unwrap_or(DEFAULT_STACK_SIZE)),
        timeout: cl.limits.timeout,
        memory_limit: cl
            .limits
            .memory_limit
            .unwrap_or_else(|| Options::default().memory_limit),
        ..Options::default()
    };
    let compile = |options: Options| {
        if cl.sources.is_empty() {
            Engine::from_files(&cl.files, options)
        } else {
            Engine::from_sources(&cl.sources, options)
        }
    };
    let mut engine = compile(options.clone())?;
    // An entry taking dummy procedures: `--set fcn=myfcn` names what to
    // pass, and the program is compiled again with them bound.
    if let Some(entry) = cl.value("entry") {
        let procedure_args = engine.procedure_settings(entry, cl.values("set"));
        if !procedure_args.is_empty() {
            let options = Options {
                procedure_args,
                ..options
            };
            engine = compile(options)?;
        }
    }
    for w in engine.warnings() {
        eprintln!("{w}");
    }
    Ok(engine)
}

/// Builds the argument list from `--input` and `--set` (in that order);
/// the `--set` of a dummy procedure `engine` was compiled with is no
/// argument.
pub(crate) fn arguments(
    cl: &CommandLine,
    engine: &Engine,
    mut args: Args,
) -> Result<Args, Failure> {
    // Who set each argument, to refuse setting one twice.
    let mut set_by: Vec<(String, String)> = Vec::new();
    let mut claim = |name: &str, by: String| -> Result<(), Failure> {
        let name = name.trim().to_ascii_lowercase();
        if let Some((_, first)) = set_by.iter().find(|(n, _)| *n == name) {
            return Err(Failure::Usage(format!(
                "`{name}` is set twice: by {first} and by {by}"
            )));
        }
        set_by.push((name, by));
        Ok(())
    };
    if let Some(path) = cl.value("input") {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
        if let Some(object) = json.as_object() {
            for name in object.keys() {
                claim(name, format!("--input {path}"))?;
            }
        }
        args.apply_json(&json)?;
    }
    // `--set fcn=myfcn` for a dummy procedure was used to compile.
    let entry = cl.value("entry").unwrap_or_default();
    let settings: Vec<&String> = cl
        .values("set")
        .iter()
        .filter(|s| !engine.is_procedure_setting(entry, s))
        .collect();
    for s in &settings {
        if let Some((name, _)) = s.split_once('=') {
            claim(name, format!("--set {s}"))?;
        }
    }
    for e in cl.values("extent") {
        let (name, n) = e
            .split_once('=')
            .ok_or_else(|| format!("--extent expects NAME=N or NAME=N1,N2,..., got `{e}`"))?;
        let shape = n
            .split(',')
            .map(|n| n.trim().parse::<usize>())
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| format!("--extent {name}= needs non-negative integers, not `{n}`"))?;
        match shape.as_slice() {
            // One value: the last (assumed) extent, as for `x(*)` and
            // `a(ld, *)`.
            [n] => args.set_extent(name.trim(), *n)?,
            _ => args.set_shape(name.trim(), &shape)?,
        }
    }
    args.apply_settings(&settings)?;
    if let Some((name, rank)) = args.missing_shape() {
        let extents: Vec<String> = (1..=rank).map(|k| format!("N{k}")).collect();
        return Err(Failure::Usage(format!(
            "`{name}` is an assumed-shape array of rank {rank}: give its shape with --extent {name}={}",
            extents.join(",")
        )));
    }
    if let Some((name, given, elements)) = args.overfull() {
        return Err(Failure::Usage(format!(
            "`{name}` is given {given} values but has {elements} elements"
        )));
    }
    Ok(args)
}

/// Refuses a selection (`--of` or `--wrt`, named by `option`) of an
/// array that has no elements at these arguments, as when the argument
/// its extent depends on is not set.
fn non_empty(option: &str, args: &Args, selections: &[Selection]) -> Result<(), Failure> {
    for s in selections {
        if s.subscripts.is_none()
            && adjit::engine::element_count(args, std::slice::from_ref(s))? == 0
        {
            return Err(Failure::Usage(format!(
                "{option} {} selects no elements: `{}` has none at these arguments (set the arguments its extent depends on with --set)",
                s.name, s.name
            )));
        }
    }
    Ok(())
}

/// What a derivative command starts from: the compiled program, its entry
/// procedure, the arguments, and the selected outputs and inputs.
pub(crate) struct Problem {
    pub(crate) engine: Engine,
    pub(crate) primal: Procedure,
    pub(crate) args: Args,
    pub(crate) of: Vec<Selection>,
    pub(crate) wrt: Vec<Selection>,
}

/// Compiles the files and reads `--entry`, `--input`, `--set`, `--of` and
/// `--wrt`.
pub(crate) fn problem(cl: &CommandLine) -> Result<Problem, Failure> {
    let engine = engine(cl)?;
    let primal = engine.procedure(cl.value("entry"))?;
    let args = arguments(cl, &engine, primal.args())?;
    let of = Selection::parse_list(cl.required("of")?)?;
    let wrt = Selection::parse_list(cl.required("wrt")?)?;
    // `bench` sets the size itself, per measurement.
    if cl.command != "bench" {
        non_empty("--of", &args, &of)?;
        non_empty("--wrt", &args, &wrt)?;
    }
    Ok(Problem {
        engine,
        primal,
        args,
        of,
        wrt,
    })
}

/// The relative finite-difference step of `--step`, if given.
pub(crate) fn fd_step(cl: &CommandLine) -> Option<f64> {
    cl.step
}

fn run(cl: &CommandLine) -> CmdResult {
    let engine = engine(cl)?;
    let f = engine.procedure(cl.value("entry"))?;
    let mut args = arguments(cl, &engine, f.args())?;
    f.call(&mut args)?;
    let wanted: Option<Vec<String>> = cl.value("print").map(|p| {
        p.split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .collect()
    });
    let result = f.result_name();
    let shown: Vec<usize> = (0..args.names().len())
        .filter(|&i| !args.is_hidden(i))
        .filter(|&i| wanted.as_ref().is_none_or(|w| w.contains(&args.names()[i])))
        .collect();
    let json = |i: usize| BufferJson {
        buffer: &args.buffers()[i],
        is_array: args.is_array(i),
        char_len: args.char_len(i),
    };
    if cl.flag("json") {
        /// `run --json`.
        #[derive(Serialize)]
        struct RunReport<'a> {
            entry: &'a str,
            outputs: Fields<BufferJson<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<BufferJson<'a>>,
        }
        let outputs = shown
            .iter()
            .filter(|&&i| Some(&args.names()[i]) != result.as_ref())
            .map(|&i| (args.names()[i].clone(), json(i)))
            .collect();
        let result = match &result {
            Some(r) => Some(json(args.index_of(r)?)),
            None => None,
        };
        outln!(
            "{}",
            to_json(&RunReport {
                entry: f.name(),
                outputs: Fields(outputs),
                result,
            })
        );
    } else {
        for &i in &shown {
            let name = &args.names()[i];
            let label = if Some(name) == result.as_ref() {
                "result"
            } else {
                name
            };
            outln!(
                "{label} = {}",
                text_buffer(&args.buffers()[i], args.is_array(i), args.char_len(i))
            );
        }
    }
    Ok(0)
}

fn ir(cl: &CommandLine) -> CmdResult {
    let engine = engine(cl)?;
    match cl.value("entry") {
        Some(name) => {
            let id = engine.entry(Some(name))?;
            out!("{}", adjit::ir::print::print_proc(engine.module(), id));
        }
        None => out!("{}", engine.module()),
    }
    Ok(0)
}

/// The derivative mode of `grad`, `jacobian` and `emit`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Adjoint,
    Tangent,
    FiniteDifferences,
}

fn mode(cl: &CommandLine, default: Mode) -> Result<Mode, Failure> {
    match cl.value("mode") {
        None => Ok(default),
        Some("adjoint") | Some("reverse") => Ok(Mode::Adjoint),
        Some("tangent") | Some("forward") => Ok(Mode::Tangent),
        Some("fd") => Ok(Mode::FiniteDifferences),
        Some(m) => Err(Failure::Usage(format!(
            "--mode must be adjoint, tangent or fd, not `{m}`"
        ))),
    }
}

pub(crate) fn adjoint_options(cl: &CommandLine) -> AdjointOptions {
    AdjointOptions {
        record: if cl.flag("no-tbr") {
            RecordPolicy::Conservative
        } else {
            RecordPolicy::Tbr
        },
        activity: !cl.flag("no-activity"),
        checkpoint: !cl.flag("no-checkpoint"),
        snapshots: cl.value("checkpoints").and_then(|k| k.parse().ok()),
        tape_budget: cl.value("tape-budget").and_then(|b| b.parse().ok()),
        reversal: match cl.value("reversal") {
            Some("joint") => Reversal::Joint,
            _ => Reversal::Split,
        },
        in_place_zeroing: cl.flag("in-place-zeroing"),
        ..AdjointOptions::default()
    }
}

/// The reversal schedule of `--reversal` and the `--link CALLER:CALLEE=
/// strong|weak` options.
pub(crate) fn reversal_schedule(cl: &CommandLine) -> Result<ReversalSchedule, Failure> {
    let mut schedule = ReversalSchedule::uniform(adjoint_options(cl).reversal);
    for link in cl.values("link") {
        let bad = || {
            Failure::Usage(format!(
                "--link takes CALLER:CALLEE=strong or CALLER:CALLEE=weak, not `{link}`"
            ))
        };
        let (pair, kind) = link.split_once('=').ok_or_else(bad)?;
        let (caller, callee) = pair.split_once(':').ok_or_else(bad)?;
        let reversal = match kind.trim().to_ascii_lowercase().as_str() {
            "strong" => Reversal::Split,
            "weak" => Reversal::Joint,
            _ => return Err(bad()),
        };
        let (caller, callee) = (caller.trim(), callee.trim());
        if caller.is_empty() || callee.is_empty() {
            return Err(bad());
        }
        schedule.links.push((
            caller.to_ascii_lowercase(),
            callee.to_ascii_lowercase(),
            reversal,
        ));
    }
    Ok(schedule)
}

/// Default directions per tangent sweep: every input at once up to 8.
pub(crate) fn directions(cl: &CommandLine, inputs: usize) -> usize {
    cl.directions.unwrap_or(inputs.clamp(1, 8))
}

/// The threads of `--threads` (default: every core the process may use).
pub(crate) fn threads(cl: &CommandLine) -> usize {
    cl.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Computes a Jacobian in the requested mode.
pub(crate) fn compute_jacobian(
    cl: &CommandLine,
    engine: &Engine,
    primal: &Procedure,
    args: &Args,
    of: &[Selection],
    wrt: &[Selection],
    mode: Mode,
) -> Result<Jacobian, Failure> {
    let entry = Some(primal.name());
    Ok(match mode {
        Mode::Adjoint => engine
            .adjoint_scheduled(
                entry,
                of,
                wrt,
                &adjoint_options(cl),
                &reversal_schedule(cl)?,
            )?
            .jacobian_threads(args, threads(cl))?,
        Mode::Tangent => {
            let n = adjit::engine::element_count(args, wrt)?;
            engine
                .tangent(entry, of, wrt, directions(cl, n))?
                .jacobian_threads(args, threads(cl))?
        }
        Mode::FiniteDifferences => {
            let mut fd = FiniteDifferences::new(primal);
            fd.step = fd_step(cl);
            fd.jacobian(args, of, wrt)?
        }
    })
}

fn grad(cl: &CommandLine) -> CmdResult {
    let Problem {
        engine,
        primal,
        args,
        of,
        wrt,
    } = problem(cl)?;
    if of.len() != 1 {
        return Err(Failure::Usage(
            "`adjit grad` takes one output in --of".into(),
        ));
    }
    let jac = compute_jacobian(
        cl,
        &engine,
        &primal,
        &args,
        &of,
        &wrt,
        mode(cl, Mode::Adjoint)?,
    )?;
    print_stats(cl, &jac);
    if jac.rows() != 1 {
        return Err(Failure::Usage(format!(
            "--of {} selects {} elements; name one element such as {}(1)",
            of[0].name,
            jac.rows(),
            of[0].name
        )));
    }
    // Group the columns back by input selection: (label, first column,
    // values, whole array).
    let mut groups: Vec<(String, usize, Vec<f64>, bool)> = Vec::new();
    let mut col = 0;
    for w in &wrt {
        let i = args.index_of(&w.name)?;
        let whole_array = w.subscripts.is_none() && args.is_array(i);
        let count = if whole_array {
            args.get(&w.name)?.len().min(args.declared_len(i))
        } else {
            1
        };
        let label = match &w.subscripts {
            Some(s) => format!(
                "{}({})",
                w.name,
                s.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => w.name.clone(),
        };
        groups.push((
            label,
            col,
            (col..col + count).map(|c| jac.get(0, c)).collect(),
            whole_array,
        ));
        col += count;
    }
    if cl.flag("json") {
        /// A gradient member: a number for a scalar or an element, an
        /// array for a whole array.
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Part {
            One(Num),
            Many(Vec<Num>),
        }
        /// `grad --json`.
        #[derive(Serialize)]
        struct GradReport {
            value: Num,
            gradient: Fields<Part>,
            #[serde(skip_serializing_if = "Option::is_none")]
            stats: Option<Option<StatsJson>>,
        }
        let gradient = groups
            .iter()
            .map(|(name, _, g, arr)| {
                let part = if *arr {
                    Part::Many(nums(g))
                } else {
                    Part::One(Num(g[0]))
                };
                (name.clone(), part)
            })
            .collect();
        outln!(
            "{}",
            to_json(&GradReport {
                value: Num(jac.values[0]),
                gradient: Fields(gradient),
                stats: json_stats(cl, &jac),
            })
        );
    } else {
        outln!("{} = {}", jac.of[0], text_f64(jac.values[0]));
        for (name, start, g, arr) in &groups {
            if *arr {
                outln!("d{}/d{}:", jac.of[0], name);
                for (k, x) in g.iter().enumerate() {
                    outln!("  {}  {}", jac.wrt[start + k], text_f64(*x));
                }
            } else {
                outln!("d{}/d{} = {}", jac.of[0], name, text_f64(g[0]));
            }
        }
    }
    Ok(0)
}

/// With `--stats` and without `--json`, prints the adjoint's tape
/// statistics on standard error (with `--json` they are a `"stats"` field
/// of the output, see [`json_stats`]).
fn print_stats(cl: &CommandLine, jac: &Jacobian) {
    if !cl.flag("stats") || cl.flag("json") {
        return;
    }
    match jac.tape {
        Some(t) => {
            eprintln!(
                "tape: {} values, {} integers, {} control entries, {} bytes",
                t.values,
                t.integers,
                t.control,
                t.bytes()
            );
            eprintln!(
                "tape_peak_bytes: {}\nsnapshots_peak_bytes: {}\nforward_steps_recomputed: {}",
                t.tape_peak_bytes, t.snapshots_peak_bytes, t.forward_steps_recomputed
            );
        }
        None => eprintln!("tape: none (--stats applies to --mode adjoint)"),
    }
}

/// With `--stats` and `--json`: `, "stats": {...}` to append to the JSON
/// object of the output (empty otherwise).
fn json_stats(cl: &CommandLine, jac: &Jacobian) -> Option<Option<StatsJson>> {
    (cl.flag("stats") && cl.flag("json")).then(|| {
        jac.tape.map(|t| StatsJson {
            tape_bytes: t.bytes(),
            tape_peak_bytes: t.tape_peak_bytes,
            snapshots_peak_bytes: t.snapshots_peak_bytes,
            forward_steps_recomputed: t.forward_steps_recomputed,
        })
    })
}

/// The `"stats"` member of `grad --json --stats` and `jacobian --json
/// --stats`: what the adjoint's sweeps held and recomputed.
#[derive(Serialize)]
struct StatsJson {
    tape_bytes: u64,
    tape_peak_bytes: u64,
    snapshots_peak_bytes: u64,
    forward_steps_recomputed: u64,
}

/// `jacobian --json`: the matrix, and the statistics with `--stats`.
#[derive(Serialize)]
struct JacobianReport<'a> {
    #[serde(flatten)]
    matrix: MatrixJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<Option<StatsJson>>,
}

fn jacobian(cl: &CommandLine) -> CmdResult {
    let Problem {
        engine,
        primal,
        args,
        of,
        wrt,
    } = problem(cl)?;
    let jac = compute_jacobian(
        cl,
        &engine,
        &primal,
        &args,
        &of,
        &wrt,
        mode(cl, Mode::Adjoint)?,
    )?;
    print_stats(cl, &jac);
    if cl.flag("json") {
        outln!(
            "{}",
            to_json(&JacobianReport {
                matrix: MatrixJson::new(&jac.of, &jac.wrt, jac.rows(), &jac.matrix),
                stats: json_stats(cl, &jac),
            })
        );
    } else {
        out!("{}", text_matrix(&jac.of, &jac.wrt, &jac.matrix));
    }
    Ok(0)
}

fn emit(cl: &CommandLine) -> CmdResult {
    let engine = engine(cl)?;
    let of = Selection::parse_list(cl.required("of")?)?;
    let wrt = Selection::parse_list(cl.required("wrt")?)?;
    let fortran = match cl.value("format").unwrap_or("ir") {
        "ir" => false,
        "fortran" => true,
        other => {
            return Err(Failure::Usage(format!(
                "--format must be ir or fortran, not `{other}`"
            )))
        }
    };
    let entry = cl.value("entry");
    // The derivative module, its requested procedure and the mode.
    let (tangent, adjoint);
    let (module, main, mode) = match mode(cl, Mode::Adjoint)? {
        Mode::Tangent => {
            let k = directions(cl, 1);
            tangent = engine.tangent(entry, &of, &wrt, k)?;
            let (module, id) = tangent.module();
            (module, id, adjit::fortran::Mode::Tangent)
        }
        Mode::Adjoint => {
            adjoint = engine.adjoint_scheduled(
                entry,
                &of,
                &wrt,
                &adjoint_options(cl),
                &reversal_schedule(cl)?,
            )?;
            let (module, procs) = adjoint.module();
            (module, procs.combined, adjit::fortran::Mode::Adjoint)
        }
        Mode::FiniteDifferences => {
            return Err(Failure::Usage(
                "emit needs --mode tangent or adjoint".into(),
            ))
        }
    };
    let text = if fortran {
        let request = adjit::fortran::Request {
            module,
            primal_procs: engine.module().procs.len(),
            primal_globals: engine.module().globals.len(),
            roots: vec![main],
            mode,
            sources: module
                .files
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap_or_default())
                .collect(),
        };
        adjit::fortran::emit(&request)
            .map_err(|e| Error::new(adjit::engine::ErrorKind::Compile, e.to_string()))?
    } else {
        derived_listing(module, engine.module().procs.len(), main)
    };
    match cl.value("output") {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            Error::new(
                adjit::engine::ErrorKind::Io,
                format!("cannot write {path}: {e}"),
            )
        })?,
        None => out!("{text}"),
    }
    Ok(0)
}

/// Prints the generated procedures of a derivative module (those after the
/// primal ones), the requested one first.
fn derived_listing(
    module: &adjit::ir::Module,
    primal_count: usize,
    main: adjit::ir::ProcId,
) -> String {
    let mut out = adjit::ir::print::print_proc(module, main);
    for i in primal_count..module.procs.len() {
        let id = adjit::ir::ProcId(i as u32);
        if id != main {
            out.push('\n');
            out.push_str(&adjit::ir::print::print_proc(module, id));
        }
    }
    out
}
