//! The test corpus: Fortran programs under `tests/corpus/` whose header
//! comments declare test cases (`! adjit-test: --entry E --set ...`).

use std::path::{Path, PathBuf};

/// One corpus program and its declared cases.
pub struct Program {
    /// The Fortran source.
    pub path: PathBuf,
    /// Each case's command-line arguments, as written in the header.
    pub cases: Vec<String>,
}

impl Program {
    /// File name for messages.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
    /// The golden file next to the source.
    pub fn golden_path(&self, dir: &Path) -> PathBuf {
        let stem = self.path.file_stem().unwrap().to_string_lossy();
        dir.join(format!("{stem}.golden.json"))
    }
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The text after `marker` on a header comment line (`!`, `c`, `C` or `*`
/// comment), if the line is one.
pub fn header_directive<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(['!', 'c', 'C', '*'])?;
    let rest = rest.trim_start().strip_prefix(marker)?;
    Some(rest.trim())
}

/// Every `*.f` / `*.f90` program of a directory, sorted, with its cases.
pub fn programs_in(dir: &Path) -> Vec<Program> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("f" | "f90")))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            let cases = text
                .lines()
                .filter_map(|l| header_directive(l, "adjit-test:"))
                .map(str::to_string)
                .collect();
            Program { path, cases }
        })
        .collect()
}

/// Splits a case's header arguments into the entry name and `--set` items.
pub fn case_settings(case: &str) -> (Option<String>, Vec<String>) {
    let words: Vec<&str> = case.split_whitespace().collect();
    let mut entry = None;
    let mut sets = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "--entry" if i + 1 < words.len() => {
                entry = Some(words[i + 1].to_string());
                i += 1;
            }
            "--set" if i + 1 < words.len() => {
                sets.push(words[i + 1].to_string());
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    (entry, sets)
}

/// Compiles a corpus program for one case as `adjit run` does: settings
/// that name procedures for dummy procedures of the entry (`--set
/// f=cube`) bind them; returns the engine and the other settings (the
/// arguments).
pub fn case_engine(
    path: &Path,
    entry: Option<&str>,
    sets: &[String],
    options: adjit::engine::Options,
) -> Result<(adjit::engine::Engine, Vec<String>), adjit::engine::Error> {
    use adjit::engine::{Engine, Options};
    let engine = Engine::from_files(&[path], options.clone())?;
    let name = entry.unwrap_or_default();
    let procedure_args = engine.procedure_settings(name, sets);
    let engine = if procedure_args.is_empty() {
        engine
    } else {
        let options = Options {
            procedure_args,
            ..options
        };
        Engine::from_files(&[path], options)?
    };
    let args = sets
        .iter()
        .filter(|s| !engine.is_procedure_setting(name, s))
        .cloned()
        .collect();
    Ok((engine, args))
}
