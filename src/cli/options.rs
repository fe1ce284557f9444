//! Command-line parsing: a subcommand, source files, and `--name value`
//! options (also `--name=value`), following the contract in DESIGN.md,
//! and `-I DIR` (INCLUDE directories, stored as the option `include-dir`).

use std::collections::HashMap;

/// Options that take no value.
const FLAGS: &[&str] = &[
    "json",
    "interp",
    "no-bounds-check",
    "stats",
    "help",
    "no-tbr",
    "no-activity",
    "no-plot",
];

/// Options that may be repeated (values accumulate).
const REPEATABLE: &[&str] = &["set", "extent", "size", "include-dir"];

/// A parsed command line.
#[derive(Debug, Default)]
pub struct CommandLine {
    /// The subcommand (`run`, `grad`, ...).
    pub command: String,
    /// Positional arguments (source files).
    pub files: Vec<String>,
    values: HashMap<String, Vec<String>>,
    flags: Vec<String>,
}

impl CommandLine {
    /// Parses `args` (without the program name).
    pub fn parse(args: &[String]) -> Result<CommandLine, String> {
        let mut cl = CommandLine::default();
        let mut it = args.iter().peekable();
        while let Some(arg) = it.next() {
            if let Some(opt) = arg.strip_prefix("--") {
                let (name, inline) = match opt.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (opt.to_string(), None),
                };
                if FLAGS.contains(&name.as_str()) {
                    if inline.is_some() {
                        return Err(format!("option --{name} takes no value"));
                    }
                    cl.flags.push(name);
                    continue;
                }
                let value = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("option --{name} needs a value"))?,
                };
                let entry = cl.values.entry(name.clone()).or_default();
                if !entry.is_empty() && !REPEATABLE.contains(&name.as_str()) {
                    return Err(format!("option --{name} given twice"));
                }
                entry.push(value);
            } else if let Some(dir) = arg.strip_prefix("-I") {
                // `-I DIR` or `-IDIR`, as for gfortran: an INCLUDE directory.
                let dir = if dir.is_empty() {
                    it.next()
                        .cloned()
                        .ok_or_else(|| "option -I needs a directory".to_string())?
                } else {
                    dir.to_string()
                };
                cl.values.entry("include-dir".into()).or_default().push(dir);
            } else if arg == "-o" {
                // `-o FILE`: where `emit` writes (same as `--output FILE`).
                let file = it
                    .next()
                    .cloned()
                    .ok_or_else(|| "option -o needs a file".to_string())?;
                let entry = cl.values.entry("output".into()).or_default();
                if !entry.is_empty() {
                    return Err("option -o given twice".into());
                }
                entry.push(file);
            } else if arg == "-h" {
                cl.flags.push("help".into());
            } else if cl.command.is_empty() {
                cl.command = arg.clone();
            } else {
                cl.files.push(arg.clone());
            }
        }
        Ok(cl)
    }

    /// True when a flag was given.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    /// The value of a single-valued option.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.first())
            .map(|s| s.as_str())
    }

    /// Every value of a repeatable option.
    pub fn values(&self, name: &str) -> &[String] {
        self.values.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// The value of a required option.
    pub fn required(&self, name: &str) -> Result<&str, String> {
        self.value(name)
            .ok_or_else(|| format!("`adjit {}` needs --{name}", self.command))
    }

    /// Rejects options the command does not know.
    pub fn allow_only(&self, allowed: &[&str]) -> Result<(), String> {
        for name in self.values.keys().chain(self.flags.iter()) {
            if !allowed.contains(&name.as_str()) && name != "help" {
                return Err(format!("`adjit {}` does not take --{name}", self.command));
            }
        }
        Ok(())
    }
}
