//! The command line's grammar, declared with clap's derive API: every
//! subcommand, its options, their help and examples, `--version`, typo
//! suggestions and shell completions (`adjit completions bash`).
//!
//! clap parses and validates; each subcommand's arguments then fill a
//! [`CommandLine`] (named option values and flags), which the commands
//! read. Adding a subcommand is: a variant of [`Command`] with its
//! argument struct (reusing the shared groups below with
//! `#[command(flatten)]`), a line in [`Command::fill`] and one in
//! `cli::dispatch`.

use super::options::{CommandLine, RunLimits};
use clap::{Args, Parser, Subcommand};

/// clap's value parser of a byte count (`--stack-size 64M`): a whole
/// number with an optional binary suffix K, M, G or T.
fn bytes(text: &str) -> Result<usize, String> {
    let bad = || format!("`{text}` is not a byte count (such as 512M)");
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(bad()),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize << shift))
        .ok_or_else(bad)
}

/// clap's value parser of a positive duration in seconds (`--timeout 2.5`).
fn seconds(text: &str) -> Result<std::time::Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("`{text}` is not a positive number of seconds"))
}

/// clap's value parser of a positive count (`--threads`, `--directions`).
fn positive(text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{text}` is not a positive integer"))
}

/// JIT-compiled Fortran with tangents and adjoints.
#[derive(Parser, Debug)]
#[command(
    name = "adjit",
    version,
    about = "adjit: JIT-compiled Fortran with tangents and adjoints",
    arg_required_else_help = true,
    after_help = "Exit codes: 0 success, 1 program error (compile or run time, failed check), 2 usage error.\n\
                  Run `adjit COMMAND --help` for a command's options and examples."
)]
pub(crate) struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run a procedure and print its outputs
    #[command(after_help = "Examples:\n  \
        adjit run examples/naumann.f90 --set x=-5 --set y=-0.5\n  \
        adjit run prog.f90 --entry solve --input in.json --print x,f --json")]
    Run(RunArgs),
    /// Print the program's code lists (IR)
    #[command(after_help = "Examples:\n  adjit ir examples/griewank.f90 --entry griewank")]
    Ir(IrArgs),
    /// The gradient of one output with respect to inputs
    #[command(after_help = "Examples:\n  \
        adjit grad examples/naumann.f90 --of x --wrt x,y --set x=-5 --set y=-0.5\n  \
        adjit grad examples/griewank.f90 --of c --wrt a --set s=5 --set a=1 --mode tangent --json")]
    Grad(DerivativeArgs),
    /// The Jacobian of outputs with respect to inputs
    #[command(after_help = "Examples:\n  \
        adjit jacobian examples/bratu.f --of f --wrt x,prm --set dim=7 --set parmax=2 \\\n      \
        --set x=1.72,3.45,4.16,4.87,4.16,3.45,1.72 --set prm=1.3,0.245828 --threads 2")]
    Jacobian(JacobianArgs),
    /// Write the tangent or adjoint code (IR or Fortran source)
    #[command(after_help = "Examples:\n  \
        adjit emit examples/naumann.f90 --mode adjoint --of x --wrt x,y --format fortran -o naumann_b.f90")]
    Emit(EmitArgs),
    /// Compare adjoint, tangent and finite differences (exit 1 on disagreement)
    #[command(after_help = "Examples:\n  \
        adjit check examples/product.f90 --of y --wrt x --set n=6 --set x=1,2,3,4,5,6")]
    Check(CheckArgs),
    /// The Hessian of one scalar output (tangent over adjoint)
    #[command(after_help = "Examples:\n  \
        adjit hessian examples/griewank.f90 --of c --wrt a --set s=3 --set a=1,2,3\n  \
        adjit hessian rosen.f90 --of f --wrt x --set n=4 --set x=1,1,1,1 --directions 4 --json")]
    Hessian(HessianArgs),
    /// Time primal, adjoint, tangent and finite differences over sizes
    #[command(after_help = "Examples:\n  \
        adjit bench examples/griewank.f90 --of c --wrt a --set a=1 --size s=10,100,1000 --plot griewank.svg\n  \
        (--plot also writes a PNG next to the SVG)")]
    Bench(BenchArgs),
    /// Type Fortran at a prompt, then run, differentiate and inspect it
    #[command(after_help = "Type `:help` at the prompt for the commands.")]
    Repl(ReplArgs),
    /// Print a shell completion script
    #[command(after_help = "Examples:\n  \
        adjit completions bash > ~/.local/share/bash-completion/completions/adjit\n  \
        adjit completions zsh > ~/.zfunc/_adjit\n  \
        adjit completions fish > ~/.config/fish/completions/adjit.fish")]
    Completions(CompletionsArgs),
}

impl Command {
    /// The parsed arguments as a [`CommandLine`] for the commands.
    pub(crate) fn fill(&self) -> CommandLine {
        let mut cl = CommandLine::default();
        let name = match self {
            Command::Run(a) => {
                a.source.fill(&mut cl);
                a.values.fill(&mut cl);
                a.exec.fill(&mut cl);
                cl.set_value("print", a.print.as_deref());
                "run"
            }
            Command::Ir(a) => {
                a.source.fill(&mut cl);
                "ir"
            }
            Command::Grad(a) => {
                a.fill(&mut cl);
                "grad"
            }
            Command::Jacobian(a) => {
                a.derivative.fill(&mut cl);
                cl.threads = a.threads;
                "jacobian"
            }
            Command::Emit(a) => {
                a.source.fill(&mut cl);
                a.select.fill(&mut cl);
                a.adjoint.fill(&mut cl);
                cl.set_values("set", &a.set);
                cl.set_value("mode", Some(&a.mode));
                cl.set_value("format", Some(&a.format));
                cl.directions = a.directions;
                cl.set_value("output", a.output.as_deref());
                "emit"
            }
            Command::Check(a) => {
                a.source.fill(&mut cl);
                a.values.fill(&mut cl);
                a.exec.fill(&mut cl);
                a.select.fill(&mut cl);
                a.adjoint.fill(&mut cl);
                cl.step = a.step;
                cl.directions = a.directions;
                cl.order = a.order;
                "check"
            }
            Command::Hessian(a) => {
                a.source.fill(&mut cl);
                a.values.fill(&mut cl);
                a.exec.fill(&mut cl);
                a.select.fill(&mut cl);
                a.adjoint.fill(&mut cl);
                cl.directions = a.directions;
                "hessian"
            }
            Command::Bench(a) => {
                a.source.fill(&mut cl);
                a.values.fill(&mut cl);
                a.exec.fill(&mut cl);
                a.select.fill(&mut cl);
                a.adjoint.fill(&mut cl);
                cl.set_value("size", Some(&a.size));
                cl.set_value("plot", a.plot.as_deref());
                cl.directions = a.directions;
                cl.set_flag("in-place-zeroing", a.in_place_zeroing);
                "bench"
            }
            Command::Repl(a) => {
                cl.set_value("history", a.history.as_deref());
                cl.set_flag("no-history", a.no_history);
                "repl"
            }
            Command::Completions(a) => {
                cl.set_value("shell", Some(&a.shell.to_string()));
                "completions"
            }
        };
        cl.command = name.to_string();
        cl
    }
}

/// Source files and how to read them (every command that compiles).
#[derive(Args, Debug)]
pub(crate) struct SourceArgs {
    /// Fortran source files; together they form one program
    #[arg(value_name = "FILE", required = true, value_hint = clap::ValueHint::FilePath)]
    files: Vec<String>,
    /// The procedure to use (default: the first one)
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// Source form, overriding the guess from the file name
    #[arg(long, value_name = "FORM", value_parser = ["fixed", "free"])]
    form: Option<String>,
    /// Look for INCLUDE files in DIR (after the including file's directory; repeatable, in order)
    #[arg(short = 'I', long = "include-dir", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    include_dir: Vec<String>,
}

impl SourceArgs {
    fn fill(&self, cl: &mut CommandLine) {
        cl.files = self.files.clone();
        cl.set_value("entry", self.entry.as_deref());
        cl.set_value("form", self.form.as_deref());
        cl.set_values("include-dir", &self.include_dir);
    }
}

/// Argument values.
#[derive(Args, Debug)]
pub(crate) struct ValueArgs {
    /// An argument's value: x=1.5, a=1,2,3 (column-major), a=0.5 (fill), task=FG; for a dummy procedure of the entry, the procedure to pass (fcn=myfcn). Repeatable
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// The extent of an assumed-size array x(*) (or the length of a CHARACTER*(*)) argument, or the shape of an array of assumed shape or size, one extent per dimension (a=2,3). Repeatable
    #[arg(long, value_name = "NAME=N")]
    extent: Vec<String>,
    /// A JSON object of argument values (as --set; --set may not name the same argument)
    #[arg(long, value_name = "IN.json", value_hint = clap::ValueHint::FilePath)]
    input: Option<String>,
}

impl ValueArgs {
    fn fill(&self, cl: &mut CommandLine) {
        cl.set_values("set", &self.set);
        cl.set_values("extent", &self.extent);
        cl.set_value("input", self.input.as_deref());
    }
}

/// How the program runs and what is printed.
#[derive(Args, Debug)]
pub(crate) struct ExecArgs {
    /// Print one JSON document on standard output (the program's own output goes to standard error)
    #[arg(long)]
    json: bool,
    /// Run with the reference interpreter instead of the JIT
    #[arg(long)]
    interp: bool,
    /// Drop subscript checks from generated code (the storage check stays)
    #[arg(long = "no-bounds-check")]
    no_bounds_check: bool,
    /// Stop a native call that runs longer than this (located error, exit 1)
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    timeout: Option<std::time::Duration>,
    /// Native stack of calls (default 256M; suffixes K, M, G, T)
    #[arg(long = "stack-size", value_name = "BYTES", value_parser = bytes)]
    stack_size: Option<usize>,
    /// Largest local-array memory of a call and size of an argument (default: physical memory)
    #[arg(long = "memory-limit", value_name = "BYTES", value_parser = bytes)]
    memory_limit: Option<usize>,
}

impl ExecArgs {
    fn fill(&self, cl: &mut CommandLine) {
        cl.set_flag("json", self.json);
        cl.set_flag("interp", self.interp);
        cl.set_flag("no-bounds-check", self.no_bounds_check);
        cl.limits = RunLimits {
            stack_size: self.stack_size,
            memory_limit: self.memory_limit,
            timeout: self.timeout,
        };
    }
}

/// Which outputs are differentiated with respect to which inputs.
#[derive(Args, Debug)]
pub(crate) struct SelectArgs {
    /// Outputs: names or elements, comma-separated (f, f(2), a(1,3))
    #[arg(long, value_name = "OUT[,OUT...]", required = true)]
    of: String,
    /// Inputs: names or elements, comma-separated (x, a(2),a)
    #[arg(long, value_name = "IN[,IN...]", required = true)]
    wrt: String,
}

impl SelectArgs {
    fn fill(&self, cl: &mut CommandLine) {
        cl.set_value("of", Some(&self.of));
        cl.set_value("wrt", Some(&self.wrt));
    }
}

/// How the adjoint records.
#[derive(Args, Debug)]
pub(crate) struct AdjointArgs {
    /// Record every overwritten value (no to-be-recorded analysis)
    #[arg(long = "no-tbr")]
    no_tbr: bool,
    /// Treat every variable as active (no activity analysis)
    #[arg(long = "no-activity")]
    no_activity: bool,
    /// Snapshots of every loop under `!$AD BINOMIAL-CKP` (overrides the directives' counts)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    checkpoints: Option<u32>,
    /// Ignore `!$AD BINOMIAL-CKP` directives: loops record their whole tape
    #[arg(long = "no-checkpoint", conflicts_with_all = ["checkpoints", "tape_budget"])]
    no_checkpoint: bool,
    /// Automatic checkpointing: a loop under `!$AD BINOMIAL-CKP` whose projected tape (bytes of one trip times its trips) exceeds BYTES is checkpointed with as many snapshots as fit; otherwise it records every trip
    #[arg(long = "tape-budget", value_name = "BYTES", value_parser = bytes)]
    tape_budget: Option<usize>,
    /// How calls are reversed: split (callees record with the caller) or joint (callees run plain, then record and reverse in the caller's reverse sweep)
    #[arg(long, value_name = "MODE", default_value = "split", value_parser = ["split", "joint"])]
    reversal: String,
    /// The reversal of the calls of CALLEE from CALLER: strong = split, weak = joint. Repeatable
    #[arg(long, value_name = "CALLER:CALLEE=strong|weak")]
    link: Vec<String>,
}

impl AdjointArgs {
    fn fill(&self, cl: &mut CommandLine) {
        cl.set_flag("no-tbr", self.no_tbr);
        cl.set_flag("no-activity", self.no_activity);
        cl.set_value(
            "checkpoints",
            self.checkpoints.map(|k| k.to_string()).as_deref(),
        );
        cl.set_flag("no-checkpoint", self.no_checkpoint);
        cl.set_value(
            "tape-budget",
            self.tape_budget.map(|b| b.to_string()).as_deref(),
        );
        cl.set_value("reversal", Some(&self.reversal));
        cl.set_values("link", &self.link);
    }
}

/// `adjit run`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    exec: ExecArgs,
    /// Print only these arguments (comma-separated)
    #[arg(long, value_name = "NAMES")]
    print: Option<String>,
}

/// `adjit ir`.
#[derive(Args, Debug)]
pub(crate) struct IrArgs {
    #[command(flatten)]
    source: SourceArgs,
}

/// The derivative modes of `--mode` (with their aliases).
const MODES: [&str; 5] = ["adjoint", "reverse", "tangent", "forward", "fd"];

/// `adjit grad` (and the common part of `adjit jacobian`).
#[derive(Args, Debug)]
pub(crate) struct DerivativeArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    exec: ExecArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    adjoint: AdjointArgs,
    /// Derivative mode (reverse = adjoint, forward = tangent, fd = finite differences)
    #[arg(long, value_name = "MODE", default_value = "adjoint", value_parser = MODES)]
    mode: String,
    /// Directions per tangent sweep (default: the number of inputs, at most 8)
    #[arg(long, value_name = "K", value_parser = positive)]
    directions: Option<usize>,
    /// Relative finite-difference step (--mode fd)
    #[arg(long, value_name = "H")]
    step: Option<f64>,
    /// Print the adjoint's tape statistics (on standard error, or in the --json output)
    #[arg(long)]
    stats: bool,
}

impl DerivativeArgs {
    fn fill(&self, cl: &mut CommandLine) {
        self.source.fill(cl);
        self.values.fill(cl);
        self.exec.fill(cl);
        self.select.fill(cl);
        self.adjoint.fill(cl);
        cl.set_value("mode", Some(&self.mode));
        cl.directions = self.directions;
        cl.step = self.step;
        cl.set_flag("stats", self.stats);
    }
}

/// `adjit jacobian`.
#[derive(Args, Debug)]
pub(crate) struct JacobianArgs {
    #[command(flatten)]
    derivative: DerivativeArgs,
    /// Threads computing rows (adjoint) or column blocks (tangent) in parallel (default: all cores)
    #[arg(long, value_name = "N", value_parser = positive)]
    threads: Option<usize>,
}

/// `adjit emit`.
#[derive(Args, Debug)]
pub(crate) struct EmitArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    adjoint: AdjointArgs,
    /// For a dummy procedure of the entry, the procedure to pass (fcn=myfcn). Repeatable
    #[arg(long, value_name = "DUMMY=PROC")]
    set: Vec<String>,
    /// Which derivative to write
    #[arg(long, value_name = "MODE", default_value = "adjoint", value_parser = MODES)]
    mode: String,
    /// Output format: derivative code lists or Fortran source
    #[arg(long, value_name = "FORMAT", default_value = "ir", value_parser = ["ir", "fortran"])]
    format: String,
    /// Directions of the tangent (vector mode)
    #[arg(long, value_name = "K", value_parser = positive)]
    directions: Option<usize>,
    /// Write to FILE instead of standard output
    #[arg(short = 'o', long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    output: Option<String>,
}

/// `adjit check`.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    exec: ExecArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    adjoint: AdjointArgs,
    /// Relative finite-difference step
    #[arg(long, value_name = "H")]
    step: Option<f64>,
    /// Directions per tangent sweep
    #[arg(long, value_name = "K", value_parser = positive)]
    directions: Option<usize>,
    /// 2 adds the second-order tests: Hessian symmetry, finite differences of the gradient, a second-order dot product
    #[arg(long, value_name = "ORDER", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    order: u8,
}

/// `adjit hessian`.
#[derive(Args, Debug)]
pub(crate) struct HessianArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    exec: ExecArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    adjoint: AdjointArgs,
    /// Directions per tangent sweep over the adjoint (default: the number of inputs, at most 8)
    #[arg(long, value_name = "K", value_parser = positive)]
    directions: Option<usize>,
}

/// `adjit bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    exec: ExecArgs,
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    adjoint: AdjointArgs,
    /// The size argument and its values
    #[arg(long, value_name = "NAME=N,N,...", required = true)]
    size: String,
    /// Write a log-log plot of time against size: OUT.svg and OUT.png
    #[arg(long, value_name = "OUT.svg", value_hint = clap::ValueHint::FilePath)]
    plot: Option<String>,
    /// Directions per tangent sweep
    #[arg(long, value_name = "K", value_parser = positive)]
    directions: Option<usize>,
    /// Time the adjoint copy that zeroes the gradient itself (AdjointOptions::in_place_zeroing; same gradients, about 1.7x the compile work)
    #[arg(long = "in-place-zeroing")]
    in_place_zeroing: bool,
}

/// `adjit repl`.
#[derive(Args, Debug)]
pub(crate) struct ReplArgs {
    /// The history file (default: $ADJIT_HISTORY, else $XDG_STATE_HOME/adjit/history, else ~/.adjit_history)
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    history: Option<String>,
    /// Keep no history file
    #[arg(long = "no-history")]
    no_history: bool,
}

/// `adjit completions`.
#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> Result<CommandLine, clap::Error> {
        Cli::try_parse_from(std::iter::once("adjit").chain(args.iter().copied()))
            .map(|c| c.command.fill())
    }

    #[test]
    fn options_keep_their_names() {
        let cl = parse(&[
            "grad",
            "a.f90",
            "b.f",
            "--of",
            "f",
            "--wrt=x,y",
            "--set",
            "n=3",
            "--set",
            "x=1",
            "-Iinc",
            "-I",
            "dir",
            "--mode",
            "reverse",
            "--no-tbr",
            "--json",
        ])
        .unwrap();
        assert_eq!(cl.command, "grad");
        assert_eq!(cl.files, ["a.f90", "b.f"]);
        assert_eq!(cl.value("of"), Some("f"));
        assert_eq!(cl.value("wrt"), Some("x,y"));
        assert_eq!(cl.values("set"), ["n=3", "x=1"]);
        assert_eq!(cl.values("include-dir"), ["inc", "dir"]);
        assert_eq!(cl.value("mode"), Some("reverse"));
        assert!(cl.flag("no-tbr") && cl.flag("json") && !cl.flag("interp"));
    }

    #[test]
    fn a_misspelt_option_is_a_usage_error_with_a_suggestion() {
        let e = parse(&["grad", "a.f90", "--of", "f", "--wrt", "x", "--jsn"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.contains("--json"), "{text}");
        let e = parse(&["grda", "a.f90"]).unwrap_err();
        assert!(e.to_string().contains("'grad'"), "{e}");
    }

    #[test]
    fn options_of_other_commands_are_refused() {
        let e = parse(&["ir", "a.f90", "--set", "x=1"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = parse(&["run", "a.f90", "--threads", "2"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
