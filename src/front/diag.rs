//! Diagnostics: located error and warning messages, and the source map that
//! renders them as `file:line:col: message` with the source line and a caret.
//!
//! It knows files, lines and columns, not the grammar.

use super::ast::Span;
use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted; something was ignored or is suspicious.
    Warning,
}

/// One message attached to a source position.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in one sentence (no trailing period).
    pub message: String,
    /// Where.
    pub span: Span,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
        }
    }
    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            span,
        }
    }
    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The text of every source file of a program, indexed by [`Span::file`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(String, String)>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }
    /// Adds a file and returns its index.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> u32 {
        self.files.push((name.into(), text.into()));
        self.files.len() as u32 - 1
    }
    /// The name of a file.
    pub fn name(&self, file: u32) -> &str {
        self.files
            .get(file as usize)
            .map(|f| f.0.as_str())
            .unwrap_or("<unknown>")
    }
    /// The text of a file.
    pub fn text(&self, file: u32) -> &str {
        self.files
            .get(file as usize)
            .map(|f| f.1.as_str())
            .unwrap_or("")
    }
    /// Names of all files in index order.
    pub fn names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.0.clone()).collect()
    }
    /// The text of line `line` (1-based) of a file, without its newline.
    pub fn line(&self, file: u32, line: u32) -> Option<&str> {
        if line == 0 {
            return None;
        }
        self.text(file).lines().nth(line as usize - 1)
    }
    /// `file:line:col` for a span.
    pub fn location(&self, span: Span) -> String {
        format!("{}:{}:{}", self.name(span.file), span.line, span.col)
    }
    /// Renders a diagnostic: `file:line:col: error: message`, the source
    /// line, and a caret under the column.
    pub fn render(&self, d: &Diagnostic) -> String {
        let sev = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{}: {}: {}", self.location(d.span), sev, d.message);
        if let Some(text) = self.line(d.span.file, d.span.line) {
            let text = display_line(text).replace('\t', " ");
            let col = (d.span.col.max(1) - 1) as usize;
            out.push_str(&format!("\n  {}\n  {}^", text, " ".repeat(col)));
        }
        out
    }
}

/// A list of diagnostics that formats itself through a [`SourceMap`].
pub struct Rendered<'a>(pub &'a SourceMap, pub &'a [Diagnostic]);

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.1.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", self.0.render(d))?;
        }
        Ok(())
    }
}

/// The first code point of the private-use range that stands for source
/// bytes that are not UTF-8: byte `b` (0x80..=0xFF) is read as
/// `U+F700 + b`, so that the text is a Rust string and the byte comes back
/// unchanged in character literals ([`literal_bytes`]).
const RAW_BYTE_BASE: u32 = 0xF700;

/// Decodes the bytes of a source file. UTF-8 is taken as it is; any byte
/// that is not part of valid UTF-8 (Latin-1 accents in old files) becomes a
/// private-use character standing for that byte, so comments with such
/// bytes are ignored as usual and character literals keep the byte, one
/// character per byte as gfortran counts them.
pub fn decode(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(
            chunk
                .invalid()
                .iter()
                .filter_map(|&b| char::from_u32(RAW_BYTE_BASE + u32::from(b))),
        );
    }
    out
}

/// The bytes a character literal's text stands for: UTF-8, except that
/// the characters [`decode`] made of raw source bytes are those bytes.
pub fn literal_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for ch in text.chars() {
        match raw_byte(ch) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// The raw source byte a decoded character stands for, if it is one.
fn raw_byte(ch: char) -> Option<u8> {
    u8::try_from(u32::from(ch).checked_sub(RAW_BYTE_BASE)?)
        .ok()
        .filter(|b| *b >= 0x80)
}

/// A source line for display: raw bytes shown as the Latin-1 characters
/// they most likely are.
pub fn display_line(text: &str) -> String {
    text.chars()
        .map(|ch| raw_byte(ch).map_or(ch, char::from))
        .collect()
}
