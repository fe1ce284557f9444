//! `adjit repl`: type Fortran procedures at a prompt, then run, differentiate,
//! inspect and time them with the same commands as the command line (the
//! typed source stands in for the FILE arguments).

use super::{dispatch, parse, report, CmdResult};
use crate::cli::options::CommandLine;
use std::io::{BufRead, IsTerminal, Write};

const HELP: &str = "\
Type Fortran (free form); a unit ends at its END line. Commands:
  run [--entry NAME] [--set X=V]...        run a procedure
  grad --of OUT --wrt IN [--mode M] ...    gradient (adjoint by default)
  jacobian --of ... --wrt ... [--mode M]   Jacobian
  check --of ... --wrt ... [--set ...]     adjoint vs tangent vs finite differences
  bench --of ... --wrt ... --size N=...    timings
  ir [--entry NAME]                        code lists
  emit --mode tangent|adjoint --of ... --wrt ...
  load FILE      append a source file      show   print the source
  clear          forget the source         quit   leave
";

const COMMANDS: &[&str] = &["run", "grad", "jacobian", "check", "bench", "ir", "emit"];

/// The REPL loop over standard input.
pub(crate) fn repl(_cl: &CommandLine) -> CmdResult {
    let interactive = std::io::stdin().is_terminal();
    let path = std::env::temp_dir().join(format!("adjit-repl-{}.f90", std::process::id()));
    let mut source = String::new();
    let mut depth = 0i32;
    if interactive {
        outln!("adjit repl: type Fortran, then `run`, `grad`, `ir`, ... (`help` for more)");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            out!("{}", if depth > 0 { "  ...> " } else { "adjit> " });
            let _ = std::io::stdout().flush();
        }
        let Some(Ok(line)) = lines.next() else { break };
        let trimmed = line.trim();
        let first = trimmed
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if depth == 0 {
            match first.as_str() {
                "" => continue,
                "quit" | "exit" => break,
                "help" => {
                    out!("{HELP}");
                    continue;
                }
                "clear" => {
                    source.clear();
                    continue;
                }
                "show" => {
                    out!("{source}");
                    continue;
                }
                "load" => {
                    let file = trimmed[4..].trim();
                    match std::fs::read_to_string(file) {
                        Ok(text) => source.push_str(&text),
                        Err(e) => eprintln!("adjit: cannot read {file}: {e}"),
                    }
                    continue;
                }
                c if COMMANDS.contains(&c) => {
                    if let Err(e) = std::fs::write(&path, &source) {
                        eprintln!("adjit: cannot write {}: {e}", path.display());
                        continue;
                    }
                    let mut words: Vec<String> = split_words(trimmed);
                    words.insert(1, path.display().to_string());
                    words.insert(0, "adjit".into());
                    match parse(&words) {
                        Ok(cl) => {
                            report(dispatch(&cl));
                        }
                        Err(e) => {
                            let _ = e.print();
                        }
                    }
                    continue;
                }
                _ => {}
            }
        }
        depth += unit_depth_change(trimmed);
        depth = depth.max(0);
        source.push_str(&line);
        source.push('\n');
    }
    let _ = std::fs::remove_file(&path);
    Ok(0)
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
