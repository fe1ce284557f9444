//! Formatting of results: JSON through serde (report structs derive
//! `Serialize` and are written by [`to_json`]) and plain text tables.
//!
//! The JSON is written with a formatter of our own ([`Spaced`]): `", "`
//! between items and `": "` after keys, as the output always read, and
//! every number in its shortest form that reads back as the same double
//! ([`Num`] writes non-finite values as the strings `"NaN"`, `"Infinity"`,
//! `"-Infinity"`, which JSON numbers cannot be). An f32 is written by its
//! exact value widened to f64, so that the digits match what a Fortran
//! driver prints for REAL(4) data.

use adjit::ir::Buffer;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::fmt::Write;
use std::io;

/// A number of a report: finite values as JSON numbers, non-finite ones
/// as strings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_nan() {
            s.serialize_str("NaN")
        } else if x.is_infinite() {
            s.serialize_str(if x > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(x)
        }
    }
}

/// Numbers of a report.
pub fn nums(xs: &[f64]) -> Vec<Num> {
    xs.iter().copied().map(Num).collect()
}

/// Members of a JSON object in a given order (keys need not be known at
/// compile time).
pub struct Fields<T>(pub Vec<(String, T)>);

impl<T: Serialize> Serialize for Fields<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// serde_json's compact formatter with a space after every `,` and `:`,
/// and numbers in their shortest round-trip form (exponent notation below
/// 1e-5 and from 1e16 on).
pub struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, x: f64) -> io::Result<()> {
        w.write_all(number(x).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, x: f32) -> io::Result<()> {
        w.write_all(number(x as f64).as_bytes())
    }
}

/// A finite f64 in its shortest round-trip form.
fn number(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-5 || x.abs() >= 1e16) {
        format!("{x:e}")
    } else {
        format!("{x:?}")
    }
}

/// A report as one line of JSON.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    // Writing to a vector fails only for maps with non-string keys, which
    // no report has.
    if value.serialize(&mut ser).is_err() {
        return "null".into();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// An argument's value for JSON: a number for scalars, an array for
/// arrays, a string (or array of strings) for CHARACTER data of element
/// length `char_len`.
pub struct BufferJson<'a> {
    /// The values.
    pub buffer: &'a Buffer,
    /// Written as an array.
    pub is_array: bool,
    /// Bytes per CHARACTER element.
    pub char_len: usize,
}

/// One element of a buffer (not CHARACTER) for JSON.
struct Element<'a>(&'a Buffer, usize);

impl Serialize for Element<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Element(b, i) = *self;
        match b {
            Buffer::F32(v) => Num(v[i] as f64).serialize(s),
            Buffer::F64(v) => Num(v[i]).serialize(s),
            Buffer::I32(v) => s.serialize_i32(v[i]),
            Buffer::I64(v) => s.serialize_i64(v[i]),
            Buffer::Bool(v) => s.serialize_bool(v[i] != 0),
            Buffer::Char(v) => s.serialize_str(&String::from_utf8_lossy(&v[i..=i])),
        }
    }
}

impl Serialize for BufferJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.buffer;
        if let Buffer::Char(bytes) = b {
            let strings: Vec<String> = bytes
                .chunks(self.char_len.max(1))
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect();
            return if self.is_array {
                strings.serialize(s)
            } else {
                s.serialize_str(strings.first().map_or("", |x| x.as_str()))
            };
        }
        if !self.is_array && !b.is_empty() {
            return Element(b, 0).serialize(s);
        }
        let mut seq = s.serialize_seq(Some(b.len()))?;
        for i in 0..b.len() {
            seq.serialize_element(&Element(b, i))?;
        }
        seq.end()
    }
}

/// A buffer as JSON (see [`BufferJson`]).
pub fn json_buffer(b: &Buffer, is_array: bool, char_len: usize) -> String {
    to_json(&BufferJson {
        buffer: b,
        is_array,
        char_len,
    })
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
        let _ = write!(out, "\n  [{}] {}", i + 1, to_json(&Element(b, i)));
    }
    out
}

/// A dense row-major matrix with its row and column labels, as JSON
/// members `"of", "wrt", "rows", "cols", "matrix"` (a Jacobian's rows are
/// its `of` elements, a Hessian's its `wrt`).
#[derive(Serialize)]
pub struct MatrixJson<'a> {
    /// Row labels.
    pub of: &'a [String],
    /// Column labels.
    pub wrt: &'a [String],
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The rows.
    pub matrix: Vec<Vec<Num>>,
}

impl<'a> MatrixJson<'a> {
    /// The matrix of `rows` rows and `wrt.len()` columns.
    pub fn new(of: &'a [String], wrt: &'a [String], rows: usize, matrix: &[f64]) -> Self {
        let cols = wrt.len();
        MatrixJson {
            of,
            wrt,
            rows,
            cols,
            matrix: (0..rows)
                .map(|r| nums(&matrix[r * cols..(r + 1) * cols]))
                .collect(),
        }
    }
}

/// A number for tables: 16 significant digits.
pub fn text_f64(x: f64) -> String {
    format!("{x:.16e}")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of 64-bit patterns (xorshift).
    fn patterns(n: usize) -> impl Iterator<Item = u64> {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        (0..n).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
    }

    #[test]
    fn every_double_reads_back_bit_for_bit() {
        let special = [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e-5,
            9.999999999999999e-6,
            1e16,
            9999999999999998.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::MIN,
            std::f64::consts::PI,
        ];
        let random = patterns(20_000)
            .map(f64::from_bits)
            .filter(|x| x.is_finite());
        for x in special.into_iter().chain(random) {
            let text = to_json(&Num(x));
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x:e} written as {text}");
        }
    }

    #[test]
    fn every_single_reads_back_bit_for_bit() {
        for bits in patterns(20_000) {
            let x = f32::from_bits(bits as u32);
            if !x.is_finite() {
                continue;
            }
            let b = Buffer::F32(vec![x]);
            let text = json_buffer(&b, false, 1);
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back, x as f64, "{x:e} written as {text}");
            assert_eq!((back as f32).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn reports_keep_their_shape() {
        assert_eq!(to_json(&Num(f64::NAN)), "\"NaN\"");
        assert_eq!(to_json(&Num(f64::INFINITY)), "\"Infinity\"");
        assert_eq!(to_json(&Num(f64::NEG_INFINITY)), "\"-Infinity\"");
        assert_eq!(to_json(&Num(2.0)), "2.0");
        assert_eq!(to_json(&Num(1.5e-7)), "1.5e-7");
        assert_eq!(to_json(&Num(2e20)), "2e20");
        let labels = ["f(1)".to_string(), "f(2)".to_string()];
        let wrt = ["x".to_string()];
        assert_eq!(
            to_json(&MatrixJson::new(&labels, &wrt, 2, &[1.0, -0.5])),
            r#"{"of": ["f(1)", "f(2)"], "wrt": ["x"], "rows": 2, "cols": 1, "matrix": [[1.0], [-0.5]]}"#
        );
        let (ints, text, truth) = (
            Buffer::I32(vec![3, 4]),
            Buffer::Char(b"hi yo".to_vec()),
            Buffer::Bool(vec![1]),
        );
        let fields = Fields(vec![
            (
                "b".to_string(),
                BufferJson {
                    buffer: &ints,
                    is_array: true,
                    char_len: 1,
                },
            ),
            (
                "a".to_string(),
                BufferJson {
                    buffer: &text,
                    is_array: false,
                    char_len: 5,
                },
            ),
            (
                "c".to_string(),
                BufferJson {
                    buffer: &truth,
                    is_array: false,
                    char_len: 1,
                },
            ),
        ]);
        assert_eq!(
            to_json(&fields),
            r#"{"b": [3, 4], "a": "hi yo", "c": true}"#
        );
    }
}
