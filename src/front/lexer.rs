//! The lexer: one logical statement's text into tokens with source spans.
//!
//! It knows tokens, not the grammar.
//!
//! It owns the token vocabulary of the subset: names, integer and real
//! literals (with `_kind` suffixes and `d` exponents), character literals,
//! the symbolic operators and the dot operators (`.eq.`, `.and.`, `.true.`,
//! ...). Statement text arrives lower-cased (outside character literals) from
//! [`super::source`], so the lexer only sees lower-case letters in names.

use super::ast::Span;
use super::diag::Diagnostic;
use super::source::LogicalStmt;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A name (identifier or keyword; Fortran has no reserved words).
    Name,
    /// An integer literal, possibly with a `_kind` suffix.
    Int,
    /// A real literal, possibly with an exponent and a `_kind` suffix.
    Real,
    /// A character literal, quotes included.
    Str,
    /// `.true.` (any `_kind` suffix is part of the token).
    True,
    /// `.false.`.
    False,
    /// `**`.
    Pow,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// `//`.
    Concat,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `(/`.
    LArray,
    /// `/)`.
    RArray,
    /// `[`.
    LBracket,
    /// `]`.
    RBracket,
    /// `,`.
    Comma,
    /// `:`.
    Colon,
    /// `::`.
    DoubleColon,
    /// `=`.
    Assign,
    /// `=>`.
    Arrow,
    /// `%`.
    Percent,
    /// `==` or `.eq.`.
    Eq,
    /// `/=` or `.ne.`.
    Ne,
    /// `<` or `.lt.`.
    Lt,
    /// `<=` or `.le.`.
    Le,
    /// `>` or `.gt.`.
    Gt,
    /// `>=` or `.ge.`.
    Ge,
    /// `.and.`.
    And,
    /// `.or.`.
    Or,
    /// `.not.`.
    Not,
    /// `.eqv.`.
    Eqv,
    /// `.neqv.`.
    Neqv,
    /// A user-defined operator `.name.` (its text is the operator).
    DefinedOp,
}

impl TokenKind {
    /// How the token is written, for messages (literals and names describe
    /// their class).
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Name => "a name",
            Int => "an integer literal",
            Real => "a real literal",
            Str => "a character literal",
            True => "'.true.'",
            False => "'.false.'",
            Pow => "'**'",
            Star => "'*'",
            Slash => "'/'",
            Concat => "'//'",
            Plus => "'+'",
            Minus => "'-'",
            LParen => "'('",
            RParen => "')'",
            LArray => "'(/'",
            RArray => "'/)'",
            LBracket => "'['",
            RBracket => "']'",
            Comma => "','",
            Colon => "':'",
            DoubleColon => "'::'",
            Assign => "'='",
            Arrow => "'=>'",
            Percent => "'%'",
            Eq => "'=='",
            Ne => "'/='",
            Lt => "'<'",
            Le => "'<='",
            Gt => "'>'",
            Ge => "'>='",
            And => "'.and.'",
            Or => "'.or.'",
            Not => "'.not.'",
            Eqv => "'.eqv.'",
            Neqv => "'.neqv.'",
            DefinedOp => "a defined operator",
        }
    }
}

/// One token: its kind, its byte range in the statement text and its source
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// First byte in [`LogicalStmt::text`].
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// Where it was written.
    pub span: Span,
}

impl Token {
    /// The token's text within the statement text it was lexed from.
    pub fn text<'a>(&self, stmt_text: &'a str) -> &'a str {
        stmt_text
            .get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }
}

/// The dot operators, spelled without their dots.
const DOT_OPERATORS: [(&str, TokenKind); 13] = [
    ("eq", TokenKind::Eq),
    ("ne", TokenKind::Ne),
    ("lt", TokenKind::Lt),
    ("le", TokenKind::Le),
    ("gt", TokenKind::Gt),
    ("ge", TokenKind::Ge),
    ("and", TokenKind::And),
    ("or", TokenKind::Or),
    ("not", TokenKind::Not),
    ("eqv", TokenKind::Eqv),
    ("neqv", TokenKind::Neqv),
    ("true", TokenKind::True),
    ("false", TokenKind::False),
];

/// If a dot operator starts at `bytes[i]` (which is a `.`), its kind and
/// length, including a `_kind` suffix on `.true.` / `.false.`.
fn dot_operator(bytes: &[u8], i: usize) -> Option<(TokenKind, usize)> {
    let mut j = i + 1;
    while j < bytes.len() && bytes[j].is_ascii_alphabetic() {
        j += 1;
    }
    if j == i + 1 || j >= bytes.len() || bytes[j] != b'.' {
        return None;
    }
    let word = std::str::from_utf8(&bytes[i + 1..j]).ok()?;
    let kind = DOT_OPERATORS.iter().find(|(w, _)| *w == word)?.1;
    let mut end = j + 1;
    if matches!(kind, TokenKind::True | TokenKind::False) && bytes.get(end) == Some(&b'_') {
        end += 1;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
    }
    Some((kind, end - i))
}

/// True when a dot at `bytes[i]` starts a dot operator word (`.eq.`,
/// `.and.`, ... or an unknown `.xyz.`), so that a preceding digit string
/// ends there.
fn starts_dot_word(bytes: &[u8], i: usize) -> bool {
    let mut j = i + 1;
    while j < bytes.len() && bytes[j].is_ascii_alphabetic() {
        j += 1;
    }
    j > i + 1 && j < bytes.len() && bytes[j] == b'.'
}

fn skip_digits(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// Length of the `_kind` suffix starting at `bytes[i]` (0 when absent).
fn kind_suffix(bytes: &[u8], i: usize) -> usize {
    if bytes.get(i) != Some(&b'_') {
        return 0;
    }
    let mut j = i + 1;
    while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
        j += 1;
    }
    if j == i + 1 {
        0
    } else {
        j - i
    }
}

/// Lexes a numeric literal starting at `bytes[i]` (a digit, or a `.`
/// followed by a digit). Returns the kind and the end offset.
fn number(bytes: &[u8], i: usize) -> (TokenKind, usize) {
    let mut j = skip_digits(bytes, i);
    let mut real = false;
    if bytes.get(j) == Some(&b'.') && !starts_dot_word(bytes, j) {
        real = true;
        j = skip_digits(bytes, j + 1);
    }
    if matches!(bytes.get(j), Some(b'e' | b'd')) {
        let mut k = j + 1;
        if matches!(bytes.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if bytes.get(k).is_some_and(|b| b.is_ascii_digit()) {
            real = true;
            j = skip_digits(bytes, k);
        }
    }
    j += kind_suffix(bytes, j);
    (
        if real {
            TokenKind::Real
        } else {
            TokenKind::Int
        },
        j,
    )
}

/// Lexes the whole text of a statement into `out` (cleared first).
///
/// Returns an error for characters outside the Fortran character set,
/// a stray `.` and unterminated character literals. A dot word other than
/// the intrinsic ones is a defined operator.
pub fn lex_into(stmt: &LogicalStmt, out: &mut Vec<Token>) -> Result<(), Diagnostic> {
    use TokenKind::*;
    out.clear();
    let bytes = stmt.text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let next = bytes.get(i + 1).copied();
        let (kind, len) = match b {
            b'a'..=b'z' | b'A'..=b'Z' => {
                let mut j = i + 1;
                while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
                (Name, j - i)
            }
            b'0'..=b'9' => {
                let (kind, end) = number(bytes, i);
                (kind, end - i)
            }
            b'.' if next.is_some_and(|c| c.is_ascii_digit()) => {
                let (kind, end) = number(bytes, i);
                (kind, end - i)
            }
            b'.' => match dot_operator(bytes, i) {
                Some(found) => found,
                None if starts_dot_word(bytes, i) => {
                    let mut j = i + 1;
                    while bytes[j] != b'.' {
                        j += 1;
                    }
                    (DefinedOp, j + 1 - i)
                }
                None => return Err(Diagnostic::error(stmt.span_at(i), "unexpected '.'")),
            },
            b'\'' | b'"' => {
                let mut j = i + 1;
                loop {
                    match bytes.get(j) {
                        None => {
                            return Err(Diagnostic::error(
                                stmt.span_at(i),
                                "unterminated character literal",
                            ))
                        }
                        Some(&c) if c == b => {
                            if bytes.get(j + 1) == Some(&b) {
                                j += 2;
                            } else {
                                break;
                            }
                        }
                        Some(_) => j += 1,
                    }
                }
                (Str, j + 1 - i)
            }
            b'*' if next == Some(b'*') => (Pow, 2),
            b'*' => (Star, 1),
            b'/' if next == Some(b'/') => (Concat, 2),
            b'/' if next == Some(b'=') => (Ne, 2),
            b'/' if next == Some(b')') => (RArray, 2),
            b'/' => (Slash, 1),
            b'(' if next == Some(b'/') && bytes.get(i + 2) != Some(&b'/') => (LArray, 2),
            b'(' => (LParen, 1),
            b')' => (RParen, 1),
            b'[' => (LBracket, 1),
            b']' => (RBracket, 1),
            b'+' => (Plus, 1),
            b'-' => (Minus, 1),
            b',' => (Comma, 1),
            b':' if next == Some(b':') => (DoubleColon, 2),
            b':' => (Colon, 1),
            b'=' if next == Some(b'=') => (Eq, 2),
            b'=' if next == Some(b'>') => (Arrow, 2),
            b'=' => (Assign, 1),
            b'<' if next == Some(b'=') => (Le, 2),
            b'<' => (Lt, 1),
            b'>' if next == Some(b'=') => (Ge, 2),
            b'>' => (Gt, 1),
            b'%' => (Percent, 1),
            _ => {
                let ch = stmt.text[i..].chars().next().unwrap_or('?');
                return Err(Diagnostic::error(
                    stmt.span_at(i),
                    format!("unexpected character '{ch}'"),
                ));
            }
        };
        out.push(Token {
            kind,
            start: i as u32,
            end: (i + len) as u32,
            span: stmt.span_at(i),
        });
        i += len;
    }
    Ok(())
}

/// The value of a character literal token's text (quotes removed, doubled
/// quotes collapsed).
pub fn string_value(raw: &str) -> String {
    let Some(quote) = raw.chars().next() else {
        return String::new();
    };
    let inner = raw.get(1..raw.len().saturating_sub(1).max(1)).unwrap_or("");
    let doubled: String = [quote, quote].iter().collect();
    inner.replace(&doubled, &quote.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::source::{logical_statements, SourceForm};
    use TokenKind::*;

    /// Lexes `text` (after a leading name, so that digits are not a label).
    fn lex(text: &str) -> Vec<(TokenKind, String)> {
        let (stmts, diags) = logical_statements(&format!("z {text}"), 0, SourceForm::Free);
        assert!(diags.is_empty());
        let mut out = Vec::new();
        lex_into(&stmts[0], &mut out).expect("lexes");
        out.iter()
            .skip(1)
            .map(|t| (t.kind, t.text(&stmts[0].text).to_string()))
            .collect()
    }

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text).into_iter().map(|t| t.0).collect()
    }

    fn lex_error(text: &str) -> Diagnostic {
        let (stmts, _) = logical_statements(text, 0, SourceForm::Free);
        let mut out = Vec::new();
        lex_into(&stmts[0], &mut out).expect_err("should fail")
    }

    #[test]
    fn numeric_literals() {
        for (text, kind) in [
            ("1", Int),
            ("1.0", Real),
            (".5", Real),
            ("1.", Real),
            ("1.e5", Real),
            ("1.0e0", Real),
            ("1.0d0", Real),
            ("1.d-3", Real),
            ("1.0_dp", Real),
            ("1_8", Int),
            ("2e+10", Real),
            ("3d0", Real),
        ] {
            assert_eq!(lex(text), vec![(kind, text.to_string())], "{text}");
        }
    }

    #[test]
    fn digit_before_dot_operator_is_an_integer() {
        assert_eq!(kinds("1.eq.2"), vec![Int, Eq, Int]);
        assert_eq!(kinds("1.and.x"), vec![Int, And, Name]);
        assert_eq!(kinds("a.and.b"), vec![Name, And, Name]);
        assert_eq!(kinds("1.e5.gt.x"), vec![Real, Gt, Name]);
        assert_eq!(kinds("x.ne..5"), vec![Name, Ne, Real]);
        assert_eq!(kinds("1..eq.2"), vec![Real, Eq, Int]);
    }

    #[test]
    fn dot_operators_and_logicals() {
        assert_eq!(
            kinds(".eq. .ne. .lt. .le. .gt. .ge. .and. .or. .not. .eqv. .neqv. .true. .false._1"),
            vec![Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not, Eqv, Neqv, True, False]
        );
        assert_eq!(lex(".TRUE._lk")[0].1, ".true._lk");
    }

    #[test]
    fn symbolic_operators() {
        assert_eq!(
            kinds("** * / // + - ( ) , : :: = => == /= < <= > >= % (/ /) [ ]"),
            vec![
                Pow,
                Star,
                Slash,
                Concat,
                Plus,
                Minus,
                LParen,
                RParen,
                Comma,
                Colon,
                DoubleColon,
                Assign,
                Arrow,
                Eq,
                Ne,
                Lt,
                Le,
                Gt,
                Ge,
                Percent,
                LArray,
                RArray,
                LBracket,
                RBracket
            ]
        );
        assert_eq!(kinds("a(//)"), vec![Name, LParen, Concat, RParen]);
    }

    #[test]
    fn strings_with_doubled_quotes() {
        let toks = lex("'it''s' \"say \"\"hi\"\"\"");
        assert_eq!(toks[0], (Str, "'it''s'".to_string()));
        assert_eq!(string_value(&toks[0].1), "it's");
        assert_eq!(string_value(&toks[1].1), "say \"hi\"");
        assert_eq!(string_value("''"), "");
    }

    #[test]
    fn token_spans_point_at_source_columns() {
        let (stmts, _) = logical_statements("  x = y +&\n   & 2.5\n", 3, SourceForm::Free);
        let mut out = Vec::new();
        lex_into(&stmts[0], &mut out).unwrap();
        let cols: Vec<(u32, u32)> = out.iter().map(|t| (t.span.line, t.span.col)).collect();
        assert_eq!(cols, vec![(1, 3), (1, 5), (1, 7), (1, 9), (2, 6)]);
        assert_eq!(out[0].span.file, 3);
    }

    #[test]
    fn lexical_errors() {
        let e = lex_error("x = 'abc");
        assert!(e.message.contains("unterminated"));
        assert_eq!(e.span.col, 5);
        assert_eq!(kinds("a .foo. b"), vec![Name, DefinedOp, Name]);
        assert_eq!(lex_error("x = a # b").span.col, 7);
        assert!(lex_error("x = a . b").message.contains("'.'"));
    }
}
