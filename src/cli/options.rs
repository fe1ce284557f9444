//! The parsed command line as the commands read it: the subcommand, its
//! source files, and named option values and flags (filled from clap's
//! parse in `cli::args`; `-I DIR` is the option `include-dir`).

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
    values: HashMap<String, Vec<String>>,
    flags: Vec<String>,
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
}
