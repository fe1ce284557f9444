//! Formatting of results: JSON (hand-written so that f32 values print in
//! their own shortest form and non-finite values stay readable) and plain
//! text tables.

use adjit::ir::Buffer;
use std::fmt::Write;

/// Formats an f64 as a JSON number (shortest round-trip form); non-finite
/// values become the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
pub fn json_f64(x: f64) -> String {
    if x.is_nan() {
        "\"NaN\"".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        }
        .into()
    } else if x != 0.0 && (x.abs() < 1e-5 || x.abs() >= 1e16) {
        format!("{x:e}")
    } else {
        format!("{x:?}")
    }
}

/// Formats an f32 by its exact value (widened to f64, shortest form), so
/// that the digits match what a Fortran driver prints for REAL(4) data.
pub fn json_f32(x: f32) -> String {
    json_f64(x as f64)
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// One element of a buffer as JSON.
fn element(b: &Buffer, i: usize) -> String {
    match b {
        Buffer::F32(v) => json_f32(v[i]),
        Buffer::F64(v) => json_f64(v[i]),
        Buffer::I32(v) => v[i].to_string(),
        Buffer::I64(v) => v[i].to_string(),
        Buffer::Bool(v) => (v[i] != 0).to_string(),
        Buffer::Char(_) => unreachable!("characters are formatted as strings"),
    }
}

/// A buffer as JSON: a number for scalars, an array for arrays, a string
/// (or array of strings) for CHARACTER data of element length `char_len`.
pub fn json_buffer(b: &Buffer, is_array: bool, char_len: usize) -> String {
    if let Buffer::Char(bytes) = b {
        let strings: Vec<String> = bytes
            .chunks(char_len.max(1))
            .map(|c| json_str(&String::from_utf8_lossy(c)))
            .collect();
        return if is_array {
            format!("[{}]", strings.join(", "))
        } else {
            strings.into_iter().next().unwrap_or_else(|| "\"\"".into())
        };
    }
    if !is_array && !b.is_empty() {
        return element(b, 0);
    }
    let items: Vec<String> = (0..b.len()).map(|i| element(b, i)).collect();
    format!("[{}]", items.join(", "))
}

/// A buffer as human-readable text.
pub fn text_buffer(b: &Buffer, is_array: bool, char_len: usize) -> String {
    let json = json_buffer(b, is_array, char_len);
    if !is_array || b.len() <= 8 {
        return json;
    }
    // Long arrays: one element per line with its index.
    let mut out = String::new();
    for i in 0..b.len() {
        let _ = write!(out, "\n  [{}] {}", i + 1, element(b, i));
    }
    out
}

/// A JSON array of f64.
pub fn json_f64s(xs: &[f64]) -> String {
    format!(
        "[{}]",
        xs.iter()
            .map(|&x| json_f64(x))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A JSON array of strings.
pub fn json_strs(xs: &[String]) -> String {
    format!(
        "[{}]",
        xs.iter()
            .map(|x| json_str(x))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A number for tables: 16 significant digits.
pub fn text_f64(x: f64) -> String {
    format!("{x:.16e}")
}

/// The members `"of", "wrt", "rows", "cols", "matrix"` of a dense
/// row-major matrix of `rows` rows and `wrt.len()` columns as JSON, without
/// braces (a Jacobian's rows are its `of` elements, a Hessian's its `wrt`).
pub fn json_matrix(of: &[String], wrt: &[String], rows: usize, matrix: &[f64]) -> String {
    let cols = wrt.len();
    let lines: Vec<String> = (0..rows)
        .map(|r| json_f64s(&matrix[r * cols..(r + 1) * cols]))
        .collect();
    format!(
        "\"of\": {}, \"wrt\": {}, \"rows\": {rows}, \"cols\": {cols}, \"matrix\": [{}]",
        json_strs(of),
        json_strs(wrt),
        lines.join(", ")
    )
}

/// A dense matrix as a text table: every entry with 17 significant digits
/// (it reads back as the same double), columns as wide as their widest
/// cell, a header line of column labels and one line per row.
pub fn text_matrix(of: &[String], wrt: &[String], matrix: &[f64]) -> String {
    let cols = wrt.len();
    let width = of.iter().map(|s| s.len()).max().unwrap_or(0);
    let cells: Vec<String> = matrix.iter().map(|&x| text_f64(x)).collect();
    let col_width: Vec<usize> = (0..cols)
        .map(|c| {
            (0..of.len())
                .map(|r| cells[r * cols + c].len())
                .chain([wrt[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("{:width$}", "");
    for (w, cw) in wrt.iter().zip(&col_width) {
        let _ = write!(out, " {w:>cw$}");
    }
    out.push('\n');
    for (r, label) in of.iter().enumerate() {
        let _ = write!(out, "{label:width$}");
        for (c, cw) in col_width.iter().enumerate() {
            let _ = write!(out, " {:>cw$}", cells[r * cols + c]);
        }
        out.push('\n');
    }
    out
}
