//! `adjit-oracle`: prints the gfortran driver program of one test case.
//!
//! ```text
//! adjit-oracle FILE... [--entry NAME] [--set NAME=VALUES]...
//! ```
//!
//! The files are compiled as `adjit run` compiles them, the arguments are set
//! as `adjit run --set` sets them, and the driver ([`adjit_oracle::driver_source`])
//! calls the entry procedure with those values and prints the results as
//! `adjit run --json` does. `scripts/golden.sh` runs it for every `adjit-test:`
//! header line of the corpus. Test tooling only: the `adjit` command line
//! does not know about it.

use adjit::engine::{Args, Engine, Options};
use std::process::ExitCode;

/// The parsed command line.
#[derive(Default)]
struct CommandLine {
    files: Vec<String>,
    entry: Option<String>,
    settings: Vec<String>,
}

/// Reads `FILE... [--entry NAME] [--set NAME=VALUES]...`.
fn parse(argv: impl Iterator<Item = String>) -> Result<CommandLine, String> {
    let mut cl = CommandLine::default();
    let mut argv = argv.peekable();
    while let Some(arg) = argv.next() {
        let mut value = |option: &str| argv.next().ok_or_else(|| format!("{option} needs a value"));
        match arg.as_str() {
            "--entry" => cl.entry = Some(value("--entry")?),
            "--set" => cl.settings.push(value("--set")?),
            other if other.starts_with("--") => {
                return Err(format!(
                    "unknown option `{other}` (usage: adjit-oracle FILE... [--entry NAME] [--set NAME=VALUES]...)"
                ))
            }
            _ => cl.files.push(arg),
        }
    }
    if cl.files.is_empty() {
        return Err("needs at least one source file".into());
    }
    Ok(cl)
}

/// Compiles the files and returns the driver's text.
fn driver(cl: &CommandLine) -> Result<String, String> {
    let mut engine =
        Engine::from_files(&cl.files, Options::default()).map_err(|e| e.to_string())?;
    // `--set fcn=myfcn` for a dummy procedure of the entry, as `adjit run`.
    let name = cl.entry.as_deref().unwrap_or_default();
    let procedure_args = engine.procedure_settings(name, &cl.settings);
    if !procedure_args.is_empty() {
        let options = Options {
            procedure_args,
            ..Options::default()
        };
        engine = Engine::from_files(&cl.files, options).map_err(|e| e.to_string())?;
    }
    let entry = engine
        .entry(cl.entry.as_deref())
        .map_err(|e| e.to_string())?;
    let mut args = Args::new(engine.module().proc(entry));
    let settings: Vec<&String> = cl
        .settings
        .iter()
        .filter(|s| !engine.is_procedure_setting(name, s))
        .collect();
    args.apply_settings(&settings).map_err(|e| e.to_string())?;
    let procedures: Vec<adjit_oracle::PassedProcedure> = engine
        .bound_procedures(name)
        .into_iter()
        .map(|b| adjit_oracle::PassedProcedure {
            position: b.position,
            name: b.procedure,
            intrinsic: b.intrinsic,
        })
        .collect();
    adjit_oracle::driver_source_with(engine.module(), entry, args.buffers(), &procedures)
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)).and_then(|cl| driver(&cl)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("adjit-oracle: {message}");
            ExitCode::from(2)
        }
    }
}
