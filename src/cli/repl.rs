//! `adjit repl`: type Fortran procedures at a prompt, then run, differentiate,
//! inspect and time them with the same commands as the command line (the
//! typed units stand in for the FILE arguments).
//!
//! On a terminal the prompt is rustyline's: line editing, a history file
//! (`--history FILE`, else `$ADJIT_HISTORY`, else
//! `$XDG_STATE_HOME/adjit/history`, else `~/.adjit_history`; none with
//! `--no-history`) and tab completion of commands, options and the names
//! of the units entered. Otherwise (a pipe, as in tests) lines are read
//! from standard input with no history.
//!
//! Each program unit is checked when its END line is typed, as its own
//! source named `repl:NAME`, so an error names the line as typed
//! (`repl:f:3:5: ...`) and the unit is not kept. A line that is neither a
//! command nor the start of a unit is refused (`rnu`: unknown command,
//! with a suggestion), never appended to the source.

use super::{dispatch, parse, report, CmdResult};
use crate::cli::options::CommandLine;
use adjit::engine::{Engine, Options};
use std::io::{BufRead, IsTerminal};

const HELP: &str = "\
Type Fortran (free form): a SUBROUTINE, FUNCTION or MODULE is checked when
its END line is entered, and replaces a unit of the same name. Commands (the
leading `:` is optional):
  run [--entry NAME] [--set X=V]...        run a procedure
  grad --of OUT --wrt IN [--mode M] ...    gradient (adjoint by default)
  jacobian --of ... --wrt ... [--mode M]   Jacobian
  check --of ... --wrt ... [--set ...]     adjoint vs tangent vs finite differences
  bench --of ... --wrt ... --size N=...    timings
  ir [--entry NAME]                        code lists
  emit --mode tangent|adjoint --of ... --wrt ...
  :units          list the units           :show [NAME]  print the source
  :drop NAME      forget one unit          :clear        forget every unit
  :load FILE      add a source file        :help         this text
  :quit           leave (also Ctrl-D)
";

/// Commands that run on the typed program (as `adjit COMMAND`).
const PROGRAM_COMMANDS: &[&str] = &["run", "grad", "jacobian", "check", "bench", "ir", "emit"];

/// Commands of the REPL itself.
const REPL_COMMANDS: &[&str] = &[
    "units", "show", "drop", "clear", "load", "help", "quit", "exit",
];

/// Options offered by tab completion after a program command.
const OPTIONS: &[&str] = &[
    "--entry",
    "--set",
    "--of",
    "--wrt",
    "--mode",
    "--json",
    "--directions",
    "--threads",
    "--size",
    "--plot",
    "--print",
    "--format",
    "--step",
    "--interp",
];

/// One program unit entered (or loaded).
struct Unit {
    /// Its name (lower case), or the file name of a loaded file.
    name: String,
    /// The source name errors show (`repl:NAME` or the file's path).
    source_name: String,
    text: String,
}

/// The units entered so far.
#[derive(Default)]
struct Session {
    units: Vec<Unit>,
}

impl Session {
    /// The sources of the program, in the order entered.
    fn sources(&self) -> Vec<(String, String)> {
        self.units
            .iter()
            .map(|u| (u.source_name.clone(), u.text.clone()))
            .collect()
    }

    /// Adds `unit` (replacing one of the same name) when the program
    /// with it compiles; otherwise prints the errors and keeps the
    /// program as it was.
    fn add(&mut self, unit: Unit) {
        let mut sources: Vec<(String, String)> = self
            .units
            .iter()
            .filter(|u| u.name != unit.name)
            .map(|u| (u.source_name.clone(), u.text.clone()))
            .collect();
        sources.push((unit.source_name.clone(), unit.text.clone()));
        match Engine::from_sources(&sources, Options::default()) {
            Ok(engine) => {
                for w in engine.warnings() {
                    eprintln!("{w}");
                }
                let replaced = self.units.iter().any(|u| u.name == unit.name);
                self.units.retain(|u| u.name != unit.name);
                outln!(
                    "{} `{}`",
                    if replaced { "replaced" } else { "defined" },
                    unit.name
                );
                self.units.push(unit);
            }
            Err(e) => eprintln!("{e}"),
        }
    }

    /// The names offered by tab completion: units and their procedures.
    fn names(&self) -> Vec<String> {
        self.units.iter().map(|u| u.name.clone()).collect()
    }
}

/// Where the REPL's lines come from.
enum Input {
    /// A terminal: rustyline with history and completion.
    Editor(Box<rustyline::Editor<Helper, rustyline::history::FileHistory>>),
    /// A pipe or file.
    Lines(std::io::Lines<std::io::StdinLock<'static>>),
}

impl Input {
    /// The next line, `None` at the end of input (or Ctrl-D).
    fn next(&mut self, prompt: &str, names: Vec<String>) -> Option<String> {
        match self {
            Input::Editor(editor) => {
                if let Some(h) = editor.helper_mut() {
                    h.names = names;
                }
                loop {
                    match editor.readline(prompt) {
                        Ok(line) => {
                            let _ = editor.add_history_entry(line.as_str());
                            return Some(line);
                        }
                        // Ctrl-C drops the line being typed.
                        Err(rustyline::error::ReadlineError::Interrupted) => continue,
                        Err(_) => return None,
                    }
                }
            }
            Input::Lines(lines) => lines.next().and_then(Result::ok),
        }
    }
}

/// Tab completion of commands, options and unit names.
struct Helper {
    names: Vec<String>,
}

impl rustyline::completion::Completer for Helper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let start = line[..pos]
            .rfind(|c: char| c.is_whitespace() || c == '=' || c == ',')
            .map_or(0, |i| i + 1);
        let word = &line[start..pos];
        Ok((start, completions(&line[..start], word, &self.names)))
    }
}

/// The completions of `word`, preceded on its line by `before`.
fn completions(before: &str, word: &str, names: &[String]) -> Vec<String> {
    let first_word = before.trim().is_empty();
    let mut pool: Vec<String> = Vec::new();
    if first_word {
        pool.extend(PROGRAM_COMMANDS.iter().map(|c| c.to_string()));
        pool.extend(REPL_COMMANDS.iter().map(|c| format!(":{c}")));
        pool.extend(["subroutine", "function", "module"].map(String::from));
    } else {
        pool.extend(OPTIONS.iter().map(|o| o.to_string()));
        pool.extend(names.iter().cloned());
    }
    let lower = word.to_ascii_lowercase();
    pool.into_iter().filter(|c| c.starts_with(&lower)).collect()
}

impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Helper {}
impl rustyline::validate::Validator for Helper {}
impl rustyline::Helper for Helper {}

/// The history file: `--history`, `$ADJIT_HISTORY`,
/// `$XDG_STATE_HOME/adjit/history` or `~/.adjit_history`.
fn history_path(cl: &CommandLine) -> Option<std::path::PathBuf> {
    if cl.flag("no-history") {
        return None;
    }
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(p) = cl.value("history") {
        return Some(p.into());
    }
    if let Some(p) = env("ADJIT_HISTORY") {
        return Some(p.into());
    }
    if let Some(state) = env("XDG_STATE_HOME") {
        let dir = std::path::PathBuf::from(state).join("adjit");
        let _ = std::fs::create_dir_all(&dir);
        return Some(dir.join("history"));
    }
    env("HOME").map(|h| std::path::PathBuf::from(h).join(".adjit_history"))
}

/// The REPL loop.
pub(crate) fn repl(cl: &CommandLine) -> CmdResult {
    let interactive = std::io::stdin().is_terminal();
    let history = if interactive { history_path(cl) } else { None };
    let mut input = if interactive {
        let mut editor = rustyline::Editor::<Helper, _>::new()
            .map_err(|e| super::Failure::Usage(format!("cannot start the line editor: {e}")))?;
        editor.set_helper(Some(Helper { names: Vec::new() }));
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        outln!("adjit repl: type Fortran, then `run`, `grad`, `ir`, ... (`:help` for more)");
        Input::Editor(Box::new(editor))
    } else {
        Input::Lines(std::io::stdin().lock().lines())
    };
    let mut session = Session::default();
    // The unit being typed: its name and lines so far, and the nesting.
    let mut pending: Option<(String, String)> = None;
    let mut depth = 0i32;
    loop {
        let prompt = if depth > 0 { "  ...> " } else { "adjit> " };
        let Some(line) = input.next(prompt, session.names()) else {
            break;
        };
        let trimmed = line.trim();
        if let Some((_, text)) = pending.as_mut() {
            text.push_str(&line);
            text.push('\n');
            depth = (depth + unit_depth_change(trimmed)).max(0);
            if depth == 0 {
                if let Some((name, text)) = pending.take() {
                    session.add(Unit {
                        source_name: format!("repl:{name}"),
                        name,
                        text,
                    });
                }
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('!') {
            continue;
        }
        if unit_depth_change(trimmed) > 0 {
            let name = unit_name(trimmed).unwrap_or_else(|| "unit".into());
            pending = Some((name, format!("{line}\n")));
            depth = 1;
            continue;
        }
        let words = split_words(trimmed.strip_prefix(':').unwrap_or(trimmed));
        let command = words
            .first()
            .map(|w| w.to_ascii_lowercase())
            .unwrap_or_default();
        match command.as_str() {
            "quit" | "exit" => break,
            "help" => out!("{HELP}"),
            "units" => {
                for u in &session.units {
                    outln!("{}", u.name);
                }
            }
            "show" => {
                for u in &session.units {
                    if words.len() < 2 || words[1..].iter().any(|w| w.eq_ignore_ascii_case(&u.name))
                    {
                        out!("{}", u.text);
                    }
                }
            }
            "clear" => session.units.clear(),
            "drop" => {
                for name in &words[1..] {
                    let name = name.to_ascii_lowercase();
                    let before = session.units.len();
                    session.units.retain(|u| u.name != name);
                    if session.units.len() == before {
                        eprintln!(
                            "adjit: no unit named `{name}` (units: {})",
                            session.names().join(", ")
                        );
                    }
                }
            }
            "load" => {
                for file in &words[1..] {
                    match std::fs::read(file) {
                        Ok(bytes) => session.add(Unit {
                            name: file.clone(),
                            source_name: file.clone(),
                            text: adjit::front::diag::decode(&bytes),
                        }),
                        Err(e) => eprintln!("adjit: cannot read {file}: {e}"),
                    }
                }
            }
            c if PROGRAM_COMMANDS.contains(&c) => run_command(&session, words),
            other => {
                let known = PROGRAM_COMMANDS.iter().chain(REPL_COMMANDS);
                let near = known
                    .filter(|k| strsim::osa_distance(other, k) <= 1 + usize::from(k.len() > 4))
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>();
                let hint = if near.is_empty() {
                    String::new()
                } else {
                    format!("; did you mean {}?", near.join(" or "))
                };
                eprintln!(
                    "adjit: unknown command `{other}`{hint} (`:help` lists the commands; Fortran starts with SUBROUTINE, FUNCTION or MODULE)"
                );
            }
        }
    }
    if let (Input::Editor(editor), Some(path)) = (&mut input, &history) {
        if let Err(e) = editor.save_history(path) {
            eprintln!("adjit: cannot save the history to {}: {e}", path.display());
        }
    }
    Ok(0)
}

/// Runs a program command (`grad --of ...`) on the typed units.
fn run_command(session: &Session, mut words: Vec<String>) {
    if session.units.is_empty() {
        eprintln!("adjit: no program yet: type a SUBROUTINE or FUNCTION first");
        return;
    }
    // clap wants the FILE arguments: a placeholder, replaced by the units.
    words.insert(1, "<repl>".into());
    words.insert(0, "adjit".into());
    match parse(&words) {
        Ok(mut cl) => {
            cl.files.clear();
            cl.sources = session.sources();
            report(dispatch(&cl));
        }
        Err(e) => {
            let _ = e.print();
        }
    }
}

/// The name of the unit a line opens (`subroutine f(x)` gives `f`).
fn unit_name(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let opens = ["subroutine", "function", "module", "program"];
    let k = words.iter().position(|w| opens.contains(w))?;
    words.get(k + 1).map(|w| w.to_string())
}

/// Splits a command line on blanks, keeping quoted text together.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// +1 for a line opening a program unit, -1 for a line closing one.
fn unit_depth_change(line: &str) -> i32 {
    let lower = line.to_ascii_lowercase();
    let code = lower.split('!').next().unwrap_or("").trim();
    let words: Vec<&str> = code
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let opens = ["subroutine", "function", "module", "program"];
    match words.as_slice() {
        ["end"] => -1,
        ["end", kind, ..] if opens.contains(kind) => -1,
        [first, ..] if *first == "end" => 0,
        ["module", "procedure", ..] => 0,
        ws if ws.iter().take_while(|w| !opens.contains(w)).count() < ws.len()
            && !code.contains('=')
            && !code.starts_with("call") =>
        {
            1
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_offers_commands_first_then_options_and_units() {
        let names = vec!["cube".to_string(), "griewank".to_string()];
        assert_eq!(completions("", "gr", &names), ["grad"]);
        assert_eq!(completions("", ":d", &names), [":drop"]);
        assert_eq!(completions("grad --entry ", "c", &names), ["cube"]);
        assert_eq!(completions("grad ", "--w", &names), ["--wrt"]);
    }

    #[test]
    fn unit_names_and_nesting() {
        assert_eq!(unit_name("subroutine cube(x, y)").as_deref(), Some("cube"));
        assert_eq!(
            unit_name("double precision function F(x)").as_deref(),
            Some("f")
        );
        assert_eq!(unit_depth_change("end subroutine cube"), -1);
        assert_eq!(unit_depth_change("rnu"), 0);
        assert_eq!(unit_depth_change("call f(x)"), 0);
    }
}
