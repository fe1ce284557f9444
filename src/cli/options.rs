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

    /// A byte count option (`--stack-size 64M`): a whole number with an
    /// optional binary suffix K, M, G or T.
    pub fn bytes(&self, name: &str) -> Result<Option<usize>, String> {
        let Some(text) = self.value(name) else {
            return Ok(None);
        };
        let t = text.trim();
        let (digits, shift) = match t.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => {
                let shift = match c.to_ascii_uppercase() {
                    'K' => 10,
                    'M' => 20,
                    'G' => 30,
                    'T' => 40,
                    _ => return Err(format!("--{name}: `{text}` is not a byte count")),
                };
                (&t[..i], shift)
            }
            _ => (t, 0),
        };
        digits
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_mul(1usize << shift))
            .map(Some)
            .ok_or_else(|| format!("--{name}: `{text}` is not a byte count (such as 512M)"))
    }

    /// A positive duration in seconds (`--timeout 2.5`).
    pub fn seconds(&self, name: &str) -> Result<Option<std::time::Duration>, String> {
        let Some(text) = self.value(name) else {
            return Ok(None);
        };
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
            .map(|s| Some(std::time::Duration::from_secs_f64(s)))
            .ok_or_else(|| format!("--{name}: `{text}` is not a positive number of seconds"))
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
