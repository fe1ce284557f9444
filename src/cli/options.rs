//! The parsed command line as the commands read it: the subcommand, its
//! source files, and named option values and flags (filled from clap's
//! parse in `cli::args`; `-I DIR` is the option `include-dir`), and the
//! numeric options already typed by clap's value parsers.

use std::collections::HashMap;

/// A parsed command line.
#[derive(Debug, Default)]
pub struct CommandLine {
    /// The subcommand (`run`, `grad`, ...).
    pub command: String,
    /// Positional arguments (source files).
    pub files: Vec<String>,
    /// In-memory sources `(name, text)` used instead of `files` (the
    /// REPL's units).
    pub sources: Vec<(String, String)>,
    /// The typed limits of the run (`--stack-size`, `--memory-limit`,
    /// `--timeout`), validated by clap's value parsers.
    pub limits: RunLimits,
    /// `check --order` (1 or 2).
    pub order: u8,
    /// `--threads` (positive).
    pub threads: Option<usize>,
    /// `--directions` (positive).
    pub directions: Option<usize>,
    /// `--step`.
    pub step: Option<f64>,
    values: HashMap<String, Vec<String>>,
    flags: Vec<String>,
}

/// Limits of a run given on the command line (`None`: the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunLimits {
    /// `--stack-size` in bytes.
    pub stack_size: Option<usize>,
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<usize>,
    /// `--timeout`.
    pub timeout: Option<std::time::Duration>,
}

impl CommandLine {
    /// Sets a single-valued option (nothing for `None`).
    pub fn set_value(&mut self, name: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.values.insert(name.to_string(), vec![v.to_string()]);
        }
    }

    /// Sets the values of a repeatable option (nothing when empty).
    pub fn set_values(&mut self, name: &str, values: &[String]) {
        if !values.is_empty() {
            self.values.insert(name.to_string(), values.to_vec());
        }
    }

    /// Sets a flag when `on`.
    pub fn set_flag(&mut self, name: &str, on: bool) {
        if on {
            self.flags.push(name.to_string());
        }
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
}
