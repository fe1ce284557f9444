//! Source forms: turning raw Fortran text into logical statements.
//!
//! It knows the physical layout of lines, not tokens or grammar.
//!
//! This module owns everything about the physical layout of a Fortran file:
//! fixed form (comment lines, label columns 1-5, continuation in column 6,
//! statement field up to column 72, TAB-format lines) and free form (`&`
//! continuation, `!` comments, `;` separators, leading labels). The result is a
//! list of [`LogicalStmt`]s: the statement text joined over its continuation
//! lines, lower-cased outside character literals, with a position map back to
//! the original line and column of every character.

use super::ast::Span;
use super::diag::Diagnostic;

/// The two Fortran source forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceForm {
    /// Fixed form (FORTRAN 77 card layout).
    Fixed,
    /// Free form (Fortran 90 and later).
    Free,
}

impl SourceForm {
    /// Guesses the form from a file name's extension, as gfortran does:
    /// `.f .for .f77 .ftn` (any case) are fixed form; `.f90 .f95 .f03 .f08`
    /// and anything unknown are free form.
    pub fn guess(path: &str) -> SourceForm {
        let ext = path
            .rsplit_once('.')
            .map(|(stem, ext)| {
                // A dot inside a directory name is not an extension.
                if ext.contains('/') || ext.contains('\\') || stem.is_empty() {
                    String::new()
                } else {
                    ext.to_ascii_lowercase()
                }
            })
            .unwrap_or_default();
        match ext.as_str() {
            "f" | "for" | "f77" | "ftn" => SourceForm::Fixed,
            _ => SourceForm::Free,
        }
    }
}

/// Guesses the source form of a file from its name; see
/// [`SourceForm::guess`].
pub fn guess(path: &str) -> SourceForm {
    SourceForm::guess(path)
}

/// The last column of the fixed-form statement field.
const FIXED_LAST_COLUMN: u32 = 72;

/// A run of statement text whose characters come from consecutive columns of
/// one source line: byte `offset` of the text is at (`line`, `col`), and each
/// following byte of the run one column further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    offset: u32,
    line: u32,
    col: u32,
}

/// One logical statement: its label and its text over all continuation
/// lines, with the map from text offsets back to source positions.
#[derive(Clone, Debug)]
pub struct LogicalStmt {
    /// The statement label, if any.
    pub label: Option<u32>,
    /// Where the label was written (meaningful when `label` is set).
    pub label_span: Span,
    /// The statement text, lower-cased outside character literals,
    /// continuation markers and comments removed.
    pub text: String,
    /// Written in fixed form, where blanks are insignificant: consecutive
    /// names in an expression are one name (`Y PRIME` is `YPRIME`).
    pub fixed: bool,
    file: u32,
    segments: Vec<Segment>,
}

impl LogicalStmt {
    /// A statement of one line of text written at `span` (lower-cased
    /// outside character literals is the caller's business): the arguments
    /// of source directives, which live in comments.
    pub fn at(text: &str, span: Span) -> LogicalStmt {
        LogicalStmt {
            label: None,
            label_span: span,
            text: text.to_string(),
            fixed: false,
            file: span.file,
            segments: vec![Segment {
                offset: 0,
                line: span.line,
                col: span.col,
            }],
        }
    }

    /// The source position of byte `offset` of [`LogicalStmt::text`] (the end
    /// of the text maps just past its last character).
    pub fn span_at(&self, offset: usize) -> Span {
        let offset = offset.min(self.text.len()) as u32;
        let index = self
            .segments
            .partition_point(|s| s.offset <= offset)
            .saturating_sub(1);
        match self.segments.get(index) {
            Some(seg) => Span {
                file: self.file,
                line: seg.line,
                col: seg.col + (offset - seg.offset),
            },
            None => self.label_span,
        }
    }

    /// The position of the first non-blank character of the statement text
    /// (the label's position when the text is blank).
    pub fn start_span(&self) -> Span {
        match self.text.find(|c: char| !c.is_whitespace()) {
            Some(offset) => self.span_at(offset),
            None => self.label_span,
        }
    }

    /// True when the statement has no text (only a label, or nothing).
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// Accumulates logical statements character by character, tracking
/// character-literal state (for `!` comments, `;` separators and
/// lower-casing) across continuation lines.
struct StatementBuilder {
    file: u32,
    statements: Vec<LogicalStmt>,
    diagnostics: Vec<Diagnostic>,
    /// The statement being built, if any.
    current: Option<LogicalStmt>,
    /// The quote character of the open character literal, if inside one.
    quote: Option<char>,
}

/// What the builder did with one character of a line.
#[derive(PartialEq, Eq)]
enum Fed {
    /// The character was taken.
    Taken,
    /// The character starts a comment: the rest of the line is ignored.
    Comment,
    /// The character was a `;` that ended the statement.
    Separator,
}

impl StatementBuilder {
    fn new(file: u32) -> StatementBuilder {
        StatementBuilder {
            file,
            statements: Vec::new(),
            diagnostics: Vec::new(),
            current: None,
            quote: None,
        }
    }

    fn span(&self, line: u32, col: u32) -> Span {
        Span {
            file: self.file,
            line,
            col,
        }
    }

    /// Ends the current statement (blank ones without a label are dropped).
    fn finish(&mut self) {
        self.quote = None;
        if let Some(stmt) = self.current.take() {
            if stmt.is_blank() {
                if stmt.label.is_some() {
                    self.diagnostics.push(Diagnostic::error(
                        stmt.label_span,
                        "statement label without a statement",
                    ));
                }
            } else {
                self.statements.push(stmt);
            }
        }
    }

    /// Starts a new statement, ending the current one.
    fn start(&mut self, label: Option<(u32, Span)>, line: u32, col: u32) {
        self.finish();
        let (label, label_span) = match label {
            Some((value, span)) => (Some(value), span),
            None => (None, self.span(line, col)),
        };
        self.current = Some(LogicalStmt {
            label,
            label_span,
            text: String::new(),
            fixed: false,
            file: self.file,
            segments: Vec::new(),
        });
    }

    /// True when a statement is open (continuation lines can attach to it).
    fn has_statement(&self) -> bool {
        self.current.is_some()
    }

    /// Appends one character at (`line`, `col`): handles quotes, `!`
    /// comments, `;` separators and lower-casing.
    fn feed(&mut self, ch: char, line: u32, col: u32) -> Fed {
        match self.quote {
            Some(q) => {
                if ch == q {
                    self.quote = None;
                }
                self.push(ch, line, col);
            }
            None => match ch {
                '!' => return Fed::Comment,
                ';' => {
                    self.finish();
                    return Fed::Separator;
                }
                '\'' | '"' => {
                    self.quote = Some(ch);
                    self.push(ch, line, col);
                }
                _ => self.push(ch.to_ascii_lowercase(), line, col),
            },
        }
        Fed::Taken
    }

    /// Appends a character to the current statement's text and position map.
    fn push(&mut self, ch: char, line: u32, col: u32) {
        if self.current.is_none() {
            self.start(None, line, col);
        }
        let Some(stmt) = self.current.as_mut() else {
            return;
        };
        let offset = stmt.text.len() as u32;
        let continues_run = stmt
            .segments
            .last()
            .is_some_and(|seg| seg.line == line && seg.col + (offset - seg.offset) == col);
        if !continues_run {
            stmt.segments.push(Segment { offset, line, col });
        }
        stmt.text.push(ch);
        if !ch.is_ascii() {
            // Columns count characters, offsets count bytes: restart the run
            // after a multi-byte character.
            stmt.segments.push(Segment {
                offset: stmt.text.len() as u32,
                line,
                col: col + 1,
            });
        }
    }

    fn into_result(mut self) -> (Vec<LogicalStmt>, Vec<Diagnostic>) {
        self.finish();
        (self.statements, self.diagnostics)
    }
}

/// Splits a file's text into logical statements, in the given source form.
///
/// Diagnostics report malformed layout (bad label fields, continuation lines
/// with nothing to continue, labels without statements); the statements are
/// still produced as well as possible.
pub fn logical_statements(
    text: &str,
    file: u32,
    form: SourceForm,
) -> (Vec<LogicalStmt>, Vec<Diagnostic>) {
    let mut builder = StatementBuilder::new(file);
    match form {
        SourceForm::Fixed => split_fixed(text, &mut builder),
        SourceForm::Free => split_free(text, &mut builder),
    }
    let (mut stmts, diags) = builder.into_result();
    for s in &mut stmts {
        s.fixed = form == SourceForm::Fixed;
    }
    (stmts, diags)
}

/// The physical lines of a text, numbered from 1, without line terminators.
fn physical_lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| (i as u32 + 1, line.strip_suffix('\r').unwrap_or(line)))
}

/// Parses a label from its digits; reports zero and overlong labels.
fn label_value(digits: &str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<u32> {
    if digits.len() > 5 {
        diags.push(Diagnostic::error(
            span,
            "statement label has more than five digits",
        ));
        return None;
    }
    match digits.parse::<u32>() {
        Ok(0) => {
            diags.push(Diagnostic::error(span, "statement label must not be zero"));
            None
        }
        Ok(value) => Some(value),
        Err(_) => None,
    }
}

fn split_fixed(text: &str, builder: &mut StatementBuilder) {
    let mut chars: Vec<char> = Vec::new();
    for (line_no, line) in physical_lines(text) {
        chars.clear();
        chars.extend(line.chars());
        // Blank lines and comment lines.
        let Some(first_nonblank) = chars.iter().position(|c| !c.is_whitespace()) else {
            continue;
        };
        if matches!(chars[0], 'c' | 'C' | '*' | 'd' | 'D' | '!')
            || (chars[first_nonblank] == '!' && first_nonblank != 5)
        {
            continue;
        }
        // Locate the label field, the continuation mark and the statement field.
        let tab = chars.iter().take(6).position(|&c| c == '\t');
        let label_end;
        let continuation;
        let field_start;
        // Column (1-based) assigned to the first statement-field character
        // for the purpose of the 72-column limit.
        let field_column;
        match tab {
            Some(t) => {
                label_end = t;
                let next = chars.get(t + 1).copied();
                continuation = next.is_some_and(|c| c.is_ascii_digit() && c != '0');
                field_start = if next.is_some_and(|c| c.is_ascii_digit()) {
                    t + 2
                } else {
                    t + 1
                };
                field_column = 7;
            }
            None => {
                label_end = chars.len().min(5);
                continuation = chars.get(5).is_some_and(|&c| c != ' ' && c != '0');
                field_start = 6;
                field_column = 7;
            }
        }
        let field_len = (FIXED_LAST_COLUMN + 1 - field_column) as usize;
        let field_end = chars.len().min(field_start + field_len);
        let label_field = &chars[..label_end];

        if continuation {
            if !builder.has_statement() {
                builder.diagnostics.push(Diagnostic::error(
                    builder.span(line_no, label_end as u32 + 1),
                    "continuation line without a statement to continue",
                ));
                builder.start(None, line_no, field_start as u32 + 1);
            }
        } else {
            // An initial line: parse the label field.
            let mut digits = String::new();
            let mut label_col = 0u32;
            let mut bad = false;
            for (i, &c) in label_field.iter().enumerate() {
                if c.is_ascii_digit() {
                    if digits.is_empty() {
                        label_col = i as u32 + 1;
                    }
                    digits.push(c);
                } else if !c.is_whitespace() && !bad {
                    bad = true;
                    builder.diagnostics.push(Diagnostic::error(
                        builder.span(line_no, i as u32 + 1),
                        format!(
                            "invalid character '{c}' in the statement label field (columns 1-5); \
                             statements start in column 7"
                        ),
                    ));
                }
            }
            let label = if digits.is_empty() || bad {
                None
            } else {
                let span = builder.span(line_no, label_col);
                label_value(&digits, span, &mut builder.diagnostics).map(|v| (v, span))
            };
            builder.start(label, line_no, field_start as u32 + 1);
        }
        for (i, &c) in chars.iter().enumerate().take(field_end).skip(field_start) {
            if builder.feed(c, line_no, i as u32 + 1) == Fed::Comment {
                break;
            }
        }
    }
}

fn split_free(text: &str, builder: &mut StatementBuilder) {
    let mut chars: Vec<char> = Vec::new();
    let mut continuing = false;
    for (line_no, line) in physical_lines(text) {
        chars.clear();
        chars.extend(line.chars());
        let first_nonblank = chars.iter().position(|c| !c.is_whitespace());
        let mut pos = match first_nonblank {
            // Blank lines and comment lines never end or start a statement.
            None => continue,
            Some(p) if chars[p] == '!' && builder.quote.is_none() => continue,
            Some(p) => p,
        };
        if continuing {
            if chars[pos] == '&' {
                pos += 1;
            } else if builder.quote.is_some() {
                // A character context continues from column 1.
                pos = 0;
            } else if builder.has_statement() {
                // Keep the tokens of the two lines apart.
                builder.push(' ', line_no, pos as u32 + 1);
            }
        } else {
            builder.finish();
            if chars[pos] == '&' {
                builder.diagnostics.push(Diagnostic::error(
                    builder.span(line_no, pos as u32 + 1),
                    "continuation line without a statement to continue",
                ));
                pos += 1;
            }
        }
        // Find where the line's content ends: a comment outside strings, and
        // a trailing `&` that continues the statement.
        let mut quote = builder.quote;
        let mut content_end = chars.len();
        for (i, &c) in chars.iter().enumerate().skip(pos) {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '!' => {
                    content_end = i;
                    break;
                }
                None if c == '\'' || c == '"' => quote = Some(c),
                None => {}
            }
        }
        let mut last = content_end;
        while last > pos && chars[last - 1].is_whitespace() {
            last -= 1;
        }
        continuing = last > pos && chars[last - 1] == '&';
        let feed_end = if continuing { last - 1 } else { last };
        let mut at_statement_start = !builder.has_statement();
        let mut i = pos;
        while i < feed_end {
            if at_statement_start {
                // Skip blanks and read a leading label.
                while i < feed_end && chars[i].is_whitespace() {
                    i += 1;
                }
                let digits_start = i;
                while i < feed_end && chars[i].is_ascii_digit() && i - digits_start < 8 {
                    i += 1;
                }
                if i < feed_end && !chars[i].is_whitespace() {
                    // Not a label: a statement starting with digits.
                    i = digits_start;
                }
                let label = if i > digits_start {
                    let digits: String = chars[digits_start..i].iter().collect();
                    let span = builder.span(line_no, digits_start as u32 + 1);
                    label_value(&digits, span, &mut builder.diagnostics).map(|v| (v, span))
                } else {
                    None
                };
                builder.start(label, line_no, i as u32 + 1);
                at_statement_start = false;
                continue;
            }
            match builder.feed(chars[i], line_no, i as u32 + 1) {
                Fed::Comment => break,
                // The next statement may carry a label.
                Fed::Separator => at_statement_start = true,
                Fed::Taken => {}
            }
            i += 1;
        }
        if !continuing {
            builder.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str, form: SourceForm) -> Vec<LogicalStmt> {
        let (stmts, diags) = logical_statements(text, 0, form);
        assert!(diags.is_empty(), "unexpected diagnostics: {diags:?}");
        stmts
    }

    fn texts(stmts: &[LogicalStmt]) -> Vec<String> {
        stmts.iter().map(|s| s.text.trim().to_string()).collect()
    }

    #[test]
    fn guesses_form_from_extension() {
        for fixed in ["a.f", "dir/b.FOR", "c.f77", "d.ftn", "E.F"] {
            assert_eq!(SourceForm::guess(fixed), SourceForm::Fixed, "{fixed}");
        }
        for free in [
            "a.f90", "b.F95", "c.f03", "d.f08", "e.txt", "noext", "dir.f/x",
        ] {
            assert_eq!(SourceForm::guess(free), SourceForm::Free, "{free}");
        }
    }

    #[test]
    fn fixed_form_comments_labels_and_continuations() {
        let src = "C comment\n\
                   c another\n\
                   * star\n\
                   ! bang\n\
                   \n\
                   \x20     X = 1 ! trailing\n\
                   \x2010   CONTINUE\n\
                   \x20     Y = 'It''s ! not' //\n\
                   \x20    &    'A'\n";
        let stmts = split(src, SourceForm::Fixed);
        assert_eq!(
            texts(&stmts),
            vec!["x = 1", "continue", "y = 'It''s ! not' //    'A'"]
        );
        assert_eq!(stmts[1].label, Some(10));
        assert_eq!(stmts[1].label_span.line, 7);
        assert_eq!(stmts[1].label_span.col, 2);
        assert_eq!(stmts[1].start_span().col, 7);
        // The continued part maps back to line 9.
        let off = stmts[2].text.find("'A'").unwrap();
        let span = stmts[2].span_at(off);
        assert_eq!((span.line, span.col), (9, 11));
    }

    #[test]
    fn fixed_form_ignores_columns_past_72() {
        let mut line = String::from("      x = 1");
        while line.len() < 72 {
            line.push(' ');
        }
        line.push_str("SEQ00010");
        let stmts = split(&line, SourceForm::Fixed);
        assert_eq!(texts(&stmts), vec!["x = 1"]);
    }

    #[test]
    fn fixed_form_tab_lines() {
        let src = "\tx = 1 +\n\t1 2\n10\tcontinue\n";
        let stmts = split(src, SourceForm::Fixed);
        assert_eq!(texts(&stmts), vec!["x = 1 + 2", "continue"]);
        assert_eq!(stmts[1].label, Some(10));
        assert_eq!(stmts[0].start_span().col, 2);
    }

    #[test]
    fn fixed_form_zero_in_column_six_is_initial_line() {
        let stmts = split("      x = 1\n     0y = 2\n", SourceForm::Fixed);
        assert_eq!(texts(&stmts), vec!["x = 1", "y = 2"]);
    }

    #[test]
    fn fixed_form_bad_label_field_is_reported() {
        let (_, diags) = logical_statements("  x = 1\n", 0, SourceForm::Fixed);
        assert_eq!(diags.len(), 1);
        assert_eq!((diags[0].span.line, diags[0].span.col), (1, 3));
        let (_, diags) = logical_statements("     &x = 1\n", 0, SourceForm::Fixed);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("continuation"));
        let (_, diags) = logical_statements("00000 x = 1\n", 0, SourceForm::Fixed);
        assert!(diags[0].message.contains("zero"));
    }

    #[test]
    fn free_form_continuation_comments_and_separators() {
        let src = "x = 1 + & ! comment\n\
                   ! interleaved comment\n\
                   \n\
                   \x20  & 2; y = 3\n\
                   s = 'ab&\n\
                   &cd' ! c\n\
                   10 CONTINUE\n\
                   a = b &\n\
                   + c\n";
        let stmts = split(src, SourceForm::Free);
        assert_eq!(
            texts(&stmts),
            vec![
                "x = 1 +  2",
                "y = 3",
                "s = 'abcd'",
                "continue",
                "a = b  + c"
            ]
        );
        assert_eq!(stmts[3].label, Some(10));
        let span = stmts[1].start_span();
        assert_eq!((span.line, span.col), (4, 9));
    }

    #[test]
    fn free_form_lowercases_outside_strings_only() {
        let stmts = split("PRINT *, 'MiXeD', \"Q\"\"Q\"\n", SourceForm::Free);
        assert_eq!(stmts[0].text, "print *, 'MiXeD', \"Q\"\"Q\"");
    }

    #[test]
    fn free_form_labels_after_semicolon() {
        let stmts = split("x = 1; 20 y = 2\n", SourceForm::Free);
        assert_eq!(texts(&stmts), vec!["x = 1", "y = 2"]);
        assert_eq!(stmts[1].label, Some(20));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let stmts = split("s = 'é' // t\n", SourceForm::Free);
        let off = stmts[0].text.find('t').unwrap();
        assert_eq!(stmts[0].span_at(off).col, 12);
    }

    #[test]
    fn crlf_line_endings() {
        let stmts = split("x = 1\r\ny = 2\r\n", SourceForm::Free);
        assert_eq!(texts(&stmts), vec!["x = 1", "y = 2"]);
    }

    #[test]
    fn latin1_bytes_survive_decoding_as_single_characters() {
        let text = super::super::diag::decode(b"c caf\xe9\n      s = 'na\xefve \xc3\xa9'\n");
        let stmts = split(&text, SourceForm::Fixed);
        assert_eq!(stmts.len(), 1);
        let literal = text.lines().nth(1).unwrap();
        let literal = &literal[literal.find('\'').unwrap() + 1..literal.rfind('\'').unwrap()];
        assert_eq!(
            super::super::diag::literal_bytes(literal),
            b"na\xefve \xc3\xa9"
        );
        assert_eq!(super::super::diag::display_line("caf\u{f7e9}"), "caf\u{e9}");
        assert_eq!(
            super::super::diag::decode("d\u{e9}j\u{e0}".as_bytes()),
            "d\u{e9}j\u{e0}"
        );
    }
}
