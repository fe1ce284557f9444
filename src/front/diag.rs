//! Diagnostics: located error and warning messages, and the source map that
//! renders them: a first line `file:line:col: error: message` (which tools
//! and tests grep), then the source lines with the span underlined and the
//! notes ("`x` declared here") at their own spans.
//!
//! The snippet is drawn by `codespan-reporting`: of the three maintained
//! renderers named for this (ariadne, miette, codespan-reporting) it is the
//! one that renders plain text and colour through the same small API, takes
//! byte ranges over files we already hold (no `Diagnostic` trait objects or
//! `'static` sources as miette wants), and whose output has been stable
//! across releases (ariadne's layout changes between versions), so rendered
//! messages can be compared whole in tests. Colour is off unless the
//! program turns it on ([`set_color`]: the command line does on a terminal
//! without `NO_COLOR`), so the library's error strings stay plain.
//!
//! It knows files, lines and columns, not the grammar.

use super::ast::Span;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether rendered diagnostics carry ANSI colour.
static COLOR: AtomicBool = AtomicBool::new(false);

/// Turns colour in rendered diagnostics on or off (off by default).
pub fn set_color(on: bool) {
    COLOR.store(on, Ordering::Relaxed);
}

/// True when rendered diagnostics carry colour.
pub fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// The mark the parser puts between a BLOCK variable's source name and
/// the ordinal of its BLOCK when it renames it (`w@block7`, see
/// `parser::block_scope`): no Fortran name holds `@`.
pub const BLOCK_RENAME_MARK: &str = "@block";

/// `text` with every BLOCK-renamed variable shown by its source name
/// (`w@block7` becomes `w`), as messages show it.
pub fn source_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(BLOCK_RENAME_MARK) {
        let after = &rest[at + BLOCK_RENAME_MARK.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let end = if digits > 0 {
            at
        } else {
            at + BLOCK_RENAME_MARK.len()
        };
        out.push_str(&rest[..end]);
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

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
    /// Characters underlined from `span`'s column (`None`: the token
    /// there, as far as the source line shows it).
    pub len: Option<u32>,
    /// Secondary locations, such as where a name was declared.
    pub notes: Vec<Note>,
}

/// A secondary location of a diagnostic.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Where.
    pub span: Span,
    /// What is there (`` `x` declared here ``).
    pub message: String,
}

impl Diagnostic {
    /// An error at `span` (its message shows BLOCK-renamed variables by
    /// their source names, [`source_names`]).
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: source_names(&message.into()),
            span,
            len: None,
            notes: Vec::new(),
        }
    }
    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: source_names(&message.into()),
            span,
            len: None,
            notes: Vec::new(),
        }
    }
    /// The same diagnostic underlining `len` characters from its column.
    pub fn with_len(mut self, len: u32) -> Diagnostic {
        self.len = Some(len);
        self
    }
    /// The same diagnostic with a note at `span` (a position of the same
    /// program; a span without a line, such as a generated one, is left
    /// out).
    pub fn with_note(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        if span.line > 0 {
            self.notes.push(Note {
                span,
                message: source_names(&message.into()),
            });
        }
        self
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
    /// Renders a diagnostic: `file:line:col: error: message`, then the
    /// source lines with the span underlined (`^`) and the notes (`-`).
    pub fn render(&self, d: &Diagnostic) -> String {
        self.render_styled(d, color())
    }

    /// [`SourceMap::render`] with ANSI colour or without.
    pub fn render_styled(&self, d: &Diagnostic, colored: bool) -> String {
        let sev = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let sev_text = match (colored, d.severity) {
            (false, _) => sev.to_string(),
            (true, Severity::Error) => format!("\x1b[1;31m{sev}\x1b[0m"),
            (true, Severity::Warning) => format!("\x1b[1;33m{sev}\x1b[0m"),
        };
        let mut out = format!("{}: {}: {}", self.location(d.span), sev_text, d.message);
        if let Some(snippet) = self.snippet(d, colored) {
            out.push('\n');
            out.push_str(snippet.trim_end());
        }
        out
    }

    /// The source part of a rendered diagnostic (codespan-reporting's
    /// rendering without its header line); `None` when no span has a line
    /// in a known file.
    fn snippet(&self, d: &Diagnostic, colored: bool) -> Option<String> {
        use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
        use codespan_reporting::files::SimpleFiles;
        use codespan_reporting::term;
        let mut files = SimpleFiles::new();
        let mut ids: Vec<(u32, usize)> = Vec::new();
        let mut range = |span: Span, len: Option<u32>| -> Option<(usize, std::ops::Range<usize>)> {
            let text = self.line(span.file, span.line)?;
            let id = match ids.iter().find(|(f, _)| *f == span.file) {
                Some(&(_, id)) => id,
                None => {
                    let id = files.add(
                        self.name(span.file).to_string(),
                        display_line(self.text(span.file)),
                    );
                    ids.push((span.file, id));
                    id
                }
            };
            let start_of_line = line_start(self.text(span.file), span.line);
            let shown = display_line(text);
            let col = (span.col.max(1) - 1) as usize;
            let len = len.map_or_else(|| token_len(&shown, col), |l| l as usize);
            let byte = |c: usize| shown.char_indices().nth(c).map_or(shown.len(), |(i, _)| i);
            let base = display_line(&self.text(span.file)[..start_of_line]).len();
            Some((id, base + byte(col)..base + byte(col + len)))
        };
        let (id, primary) = range(d.span, d.len)?;
        let mut labels = vec![Label::primary(id, primary)];
        for n in &d.notes {
            if let Some((id, r)) = range(n.span, None) {
                labels.push(Label::secondary(id, r).with_message(&n.message));
            }
        }
        let report = match d.severity {
            Severity::Error => Report::error(),
            Severity::Warning => Report::warning(),
        }
        .with_labels(labels);
        let config = term::Config::default();
        let text = if colored {
            let mut buffer = term::termcolor::Buffer::ansi();
            let styles = term::Styles::default();
            let mut writer = term::StylesWriter::new(&mut buffer, &styles);
            term::emit_to_write_style(&mut writer, &config, &files, &report).ok()?;
            String::from_utf8_lossy(buffer.as_slice()).into_owned()
        } else {
            term::emit_into_string(&config, &files, &report).ok()?
        };
        // Drop codespan's header line: ours names file:line:col first.
        text.split_once('\n').map(|(_, rest)| rest.to_string())
    }
}

/// The byte offset of the start of line `line` (1-based) of `text`.
fn line_start(text: &str, line: u32) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line as usize - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// Characters of the token starting at character `col` of `line`: a name
/// or number, a two-character operator, else one character (none past the
/// end of the line).
fn token_len(line: &str, col: usize) -> usize {
    let rest: Vec<char> = line.chars().skip(col).collect();
    let Some(&first) = rest.first() else {
        return 0;
    };
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    if word(&first) {
        let number = first.is_ascii_digit();
        return rest
            .iter()
            .take_while(|c| word(c) || (number && **c == '.'))
            .count();
    }
    let two: String = rest.iter().take(2).collect();
    if ["**", "==", "/=", "<=", ">=", "::", "=>", "//"].contains(&two.as_str()) {
        2
    } else {
        1
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

/// The character of a literal's text that stands for byte `b` (the
/// inverse of [`literal_bytes`] for one byte).
pub fn byte_char(b: u8) -> char {
    if b < 0x80 {
        char::from(b)
    } else {
        char::from_u32(RAW_BYTE_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_show_block_renamed_variables_by_source_name() {
        let d = Diagnostic::error(
            span(3, 4),
            "index out of bounds on `w@block7`, `w@block12` and `v@blockx`",
        )
        .with_note(span(2, 1), "`w@block7` declared here");
        assert_eq!(d.message, "index out of bounds on `w`, `w` and `v@blockx`");
        assert_eq!(d.notes[0].message, "`w` declared here");
        assert_eq!(source_names("a@block"), "a@block");
    }

    fn span(line: u32, col: u32) -> Span {
        Span { file: 0, line, col }
    }

    fn map() -> SourceMap {
        let mut map = SourceMap::new();
        map.add(
            "t.f90",
            "subroutine t(a, x)\n  real :: a(3), x\n  x = a ** 2 + b1_c\nend\n",
        );
        map
    }

    #[test]
    fn the_span_defaults_to_the_token_and_notes_point_at_declarations() {
        let d = Diagnostic::error(span(3, 16), "`b1_c` is not declared")
            .with_note(span(2, 17), "`x` declared here")
            .with_note(Span::default(), "a note without a place is left out");
        assert_eq!(d.notes.len(), 1);
        assert_eq!(
            map().render_styled(&d, false),
            "t.f90:3:16: error: `b1_c` is not declared
  ┌─ t.f90:3:16
  │
2 │   real :: a(3), x
  │                 - `x` declared here
3 │   x = a ** 2 + b1_c
  │                ^^^^"
        );
        let op = Diagnostic::warning(span(3, 9), "power").with_len(4);
        assert_eq!(
            map().render_styled(&op, false),
            "t.f90:3:9: warning: power
  ┌─ t.f90:3:9
  │
3 │   x = a ** 2 + b1_c
  │         ^^^^"
        );
    }

    #[test]
    fn token_lengths() {
        let line = "  y = 12.5e0 ** x_1 /= 3";
        assert_eq!(token_len(line, 2), 1);
        assert_eq!(token_len(line, 6), 6, "12.5e0");
        assert_eq!(token_len(line, 13), 2, "**");
        assert_eq!(token_len(line, 16), 3, "x_1");
        assert_eq!(token_len(line, 20), 2, "/=");
        assert_eq!(token_len(line, 99), 0);
    }

    #[test]
    fn colour_only_when_asked() {
        let d = Diagnostic::error(span(3, 3), "bad");
        let plain = map().render_styled(&d, false);
        let colored = map().render_styled(&d, true);
        assert!(!plain.contains('\x1b'));
        assert!(
            colored.starts_with("t.f90:3:3: \x1b[1;31merror\x1b[0m: bad"),
            "{colored}"
        );
        assert_eq!(map().render(&d), plain, "off by default");
    }

    #[test]
    fn a_span_outside_the_source_renders_the_first_line_only() {
        let d = Diagnostic::error(span(40, 1), "past the end");
        assert_eq!(
            map().render_styled(&d, false),
            "t.f90:40:1: error: past the end"
        );
    }
}
