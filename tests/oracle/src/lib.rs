//! The gfortran oracle: generates a Fortran main program ("driver") that
//! calls one procedure of a compiled [`Module`] with given argument values
//! and prints the arguments afterwards in exactly the JSON shape of
//! `adjit run --json`.
//!
//! Compiling the original source together with the driver by gfortran gives
//! the reference result adjit's interpreter and JIT are compared against
//! (`scripts/golden.sh`, `tests/corpus.rs`). This test-only crate owns the
//! driver text only and knows the IR, not Fortran parsing nor derivatives:
//! argument shapes come from the IR parameter declarations, evaluated by the
//! argument contract the interpreter and the JIT share
//! ([`resolve_arguments`]); values come from the [`Buffer`]s the `adjit-oracle`
//! binary builds from `--set` as the CLI does. The `adjit` library does not
//! depend on it.
//!
//! The driver:
//! * `use`s the module of a module procedure ([`Proc::module`]), or declares
//!   an external FUNCTION's result type;
//! * declares one variable per argument (`arg1`, `arg2`, ...; never clashing
//!   with user names) with the parameter's type and evaluated bounds;
//! * initialises every element with a literal that reads back exactly
//!   (17 significant digits for REAL(8), 9 for REAL(4));
//! * calls the procedure (assigning a FUNCTION's value to `adjit_result`);
//! * prints `{"entry": NAME, "outputs": {...}}` (plus `"result"`), arrays
//!   column-major as JSON arrays, reals as `ES26.17E3` (valid JSON numbers),
//!   NaN and infinities as `null`, logicals as `true` / `false`, characters
//!   as JSON strings. The printing helpers are external subroutines appended
//!   after the main program, so that arrays of any rank pass to them by
//!   sequence association.

use std::fmt::{self, Write as _};

use adjit_ir::shape::{resolve_arguments, ArgShape, DimShape};
#[cfg(doc)]
use adjit_ir::Proc;
use adjit_ir::{Buffer, RuntimeError};
use adjit_ir::{Module, ProcId, Type};

/// Why a driver could not be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum OracleError {
    /// The buffers do not fit the procedure's parameters (count, types,
    /// sizes), as [`resolve_arguments`] checks them for the interpreter and
    /// the JIT.
    Arguments(RuntimeError),
    /// An argument buffer is larger than the declared shape: the driver
    /// declares the declared shape, so the extra storage could not be
    /// represented.
    ArgumentSize {
        /// Parameter name.
        name: String,
        /// Storage units (elements, bytes for characters) the declaration
        /// takes.
        expected: usize,
        /// Storage units in the buffer.
        got: usize,
    },
    /// A construct the driver cannot express (a CHARACTER function result,
    /// an internal procedure as the entry).
    Unsupported {
        /// What is not supported.
        what: String,
    },
}

impl fmt::Display for OracleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OracleError::Arguments(e) => write!(f, "arguments: {e}"),
            OracleError::ArgumentSize {
                name,
                expected,
                got,
            } => write!(
                f,
                "argument `{name}` takes {expected} storage units, the buffer has {got}"
            ),
            OracleError::Unsupported { what } => write!(f, "oracle driver: unsupported {what}"),
        }
    }
}

impl std::error::Error for OracleError {}

/// Writes the Fortran driver program that calls `proc` of `module` with the
/// values in `args` (one buffer per IR parameter, in order; a FUNCTION's
/// result slot included) and prints every argument afterwards as the JSON of
/// `adjit run --json`.
pub fn driver_source(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
) -> Result<String, OracleError> {
    driver_source_with(module, proc, args, &[])
}

/// A procedure the driver passes for a dummy procedure of the entry.
#[derive(Clone, Debug)]
pub struct PassedProcedure {
    /// Position among the entry's Fortran dummy arguments (0-based).
    pub position: usize,
    /// The procedure's name.
    pub name: String,
    /// True for an intrinsic function (declared INTRINSIC in the driver).
    pub intrinsic: bool,
}

/// [`driver_source`] for an entry taking dummy procedures: `procedures`
/// are passed at their positions in the Fortran argument list (the IR
/// parameters, bound per instance, leave them out).
pub fn driver_source_with(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    procedures: &[PassedProcedure],
) -> Result<String, OracleError> {
    driver_source_setting(module, proc, args, procedures, &[])
}

/// A module variable the driver sets to the number of elements of an
/// argument before the call (how a caller tells an emitted derivative the
/// extent of an assumed-size dummy).
#[derive(Clone, Debug)]
pub struct SizeSetting {
    /// The module declaring the variable.
    pub module: String,
    /// The `integer(8)` variable.
    pub variable: String,
    /// The argument whose SIZE it gets (index among the IR parameters).
    pub param: usize,
}

/// [`driver_source_with`] that also sets `sizes` before the call.
pub fn driver_source_setting(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    procedures: &[PassedProcedure],
    sizes: &[SizeSetting],
) -> Result<String, OracleError> {
    let shapes = resolve_arguments(module, proc, args).map_err(OracleError::Arguments)?;
    let callee = module.proc(proc);
    for ((&param, shape), buffer) in callee.params.iter().zip(&shapes).zip(args) {
        if shape.units() != buffer.len() {
            return Err(OracleError::ArgumentSize {
                name: callee.var(param).name.clone(),
                expected: shape.units(),
                got: buffer.len(),
            });
        }
    }
    if callee.name.contains('.') {
        return Err(OracleError::Unsupported {
            what: format!("entry `{}`: an internal procedure", callee.name),
        });
    }
    let (module_name, proc_name) = (callee.module.as_deref(), callee.name.as_str());
    let mut out = String::new();
    let w = &mut out;
    line(w, "program adjit_oracle_driver");
    line(
        w,
        "  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, \
         ieee_positive_inf, ieee_negative_inf",
    );
    if let Some(m) = module_name {
        line(w, &format!("  use {m}, only: {proc_name}"));
    }
    for s in sizes {
        line(w, &format!("  use {}, only: {}", s.module, s.variable));
    }
    line(w, "  implicit none");
    let mut names = Vec::with_capacity(args.len());
    for (i, (&param, shape)) in callee.params.iter().zip(&shapes).enumerate() {
        let var = callee.var(param);
        let local = format!("arg{}", i + 1);
        line(
            w,
            &format!(
                "  {} :: {local}{}",
                fortran_type(var.ty, shape.char_len),
                dims_decl(&shape.dims)
            ),
        );
        names.push(local);
    }
    if let Some(result) = callee.result {
        if callee.var(result).ty == Type::Char {
            return Err(OracleError::Unsupported {
                what: "CHARACTER function result".into(),
            });
        }
        if module_name.is_none() {
            line(
                w,
                &format!(
                    "  {}, external :: {proc_name}",
                    fortran_type(callee.var(result).ty, 1)
                ),
            );
        }
    }
    for p in procedures {
        let what = if p.intrinsic { "intrinsic" } else { "external" };
        line(w, &format!("  {what} :: {}", p.name));
    }
    for ((local, shape), buffer) in names.iter().zip(&shapes).zip(args) {
        write_initialisation(w, local, shape, buffer);
    }
    let mut call_args: Vec<&str> = callee
        .params
        .iter()
        .zip(&names)
        .filter(|(&p, _)| Some(p) != callee.result)
        .map(|(_, n)| n.as_str())
        .collect();
    let mut passed: Vec<&PassedProcedure> = procedures.iter().collect();
    passed.sort_by_key(|p| p.position);
    for p in passed {
        call_args.insert(p.position.min(call_args.len()), p.name.as_str());
    }
    let call_args = call_args.join(", ");
    for s in sizes {
        let Some(local) = names.get(s.param) else {
            return Err(OracleError::Unsupported {
                what: format!("size of argument {} of {}", s.param + 1, names.len()),
            });
        };
        line(w, &format!("  {} = size({local}, kind=8)", s.variable));
    }
    match callee.result {
        Some(result) => {
            let index = callee.params.iter().position(|&p| p == result).unwrap_or(0);
            line(w, &format!("  {} = {proc_name}({call_args})", names[index]));
        }
        None => line(w, &format!("  call {proc_name}({call_args})")),
    }
    put_text(
        w,
        &format!("{{\"entry\": {}, \"outputs\": {{", json_string(proc_name)),
    );
    let mut first = true;
    let mut result_print = None;
    for (((&param, local), shape), buffer) in
        callee.params.iter().zip(&names).zip(&shapes).zip(args)
    {
        let var = callee.var(param);
        if Some(param) == callee.result {
            result_print = Some((local, var.ty, shape, buffer));
            continue;
        }
        if !first {
            put_text(w, ", ");
        }
        first = false;
        put_text(
            w,
            &format!("{}: ", json_string(&var.name.to_ascii_lowercase())),
        );
        write_print(w, local, var.ty, shape);
    }
    put_text(w, "}");
    if let Some((local, ty, shape, _)) = result_print {
        put_text(w, ", \"result\": ");
        write_print(w, local, ty, shape);
    }
    put_text(w, "}");
    line(w, "  write(*, '(a)') ''");
    line(w, "end program adjit_oracle_driver");
    out.push_str(PRINT_HELPERS);
    Ok(out)
}

/// The Fortran type spelling of an IR element type.
fn fortran_type(ty: Type, char_len: usize) -> String {
    match ty {
        Type::F32 => "real(4)".into(),
        Type::F64 => "real(8)".into(),
        Type::I32 => "integer(4)".into(),
        Type::I64 => "integer(8)".into(),
        Type::Bool => "logical".into(),
        Type::Char => format!("character(len={char_len})"),
    }
}

/// `(l1:u1, l2:u2, ...)`, or nothing for a scalar.
fn dims_decl(dims: &[DimShape]) -> String {
    if dims.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = dims
        .iter()
        .map(|d| format!("{}:{}", d.lower, d.upper()))
        .collect();
    format!("({})", parts.join(", "))
}

/// Appends one line of Fortran.
fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

/// Appends a statement printing literal text (no newline).
fn put_text(out: &mut String, text: &str) {
    line(
        out,
        &format!(
            "  call adjit_oracle_put_text({})",
            fortran_string(text.as_bytes())
        ),
    );
}

/// Appends the statements that set every element of `local` from `buffer`.
fn write_initialisation(out: &mut String, local: &str, shape: &ArgShape, buffer: &Buffer) {
    let elements = shape.elements;
    for k in 0..elements {
        let target = format!("{local}{}", subscript(&shape.dims, k));
        let value = match buffer {
            Buffer::F32(v) => f32_literal(v[k]),
            Buffer::F64(v) => f64_literal(v[k]),
            Buffer::I32(v) => int_literal(v[k] as i64, i32::MIN as i64, 4),
            Buffer::I64(v) => int_literal(v[k], i64::MIN, 8),
            Buffer::Bool(v) => if v[k] != 0 { ".true." } else { ".false." }.to_string(),
            Buffer::Char(v) => fortran_string(&v[k * shape.char_len..(k + 1) * shape.char_len]),
        };
        let _ = writeln!(out, "  {target} = {value}");
    }
}

/// The Fortran subscript `(i, j, ...)` of the `k`-th element (0-based,
/// column-major) of an array with the given bounds; nothing for a scalar.
fn subscript(dims: &[DimShape], mut k: usize) -> String {
    if dims.is_empty() {
        return String::new();
    }
    let mut parts = Vec::with_capacity(dims.len());
    for d in dims {
        let extent = d.extent.max(1) as usize;
        parts.push((d.lower + (k % extent) as i64).to_string());
        k /= extent;
    }
    format!("({})", parts.join(", "))
}

/// Appends the statement printing argument `local` as JSON.
fn write_print(out: &mut String, local: &str, ty: Type, shape: &ArgShape) {
    let helper = match ty {
        Type::F32 => "f32",
        Type::F64 => "f64",
        Type::I32 => "i32",
        Type::I64 => "i64",
        Type::Bool => "bool",
        Type::Char => "char",
    };
    let len_arg = if ty == Type::Char {
        format!(", {}", shape.char_len)
    } else {
        String::new()
    };
    // A scalar goes through a one-element array constructor: the helpers'
    // dummies are arrays, and gfortran rejects a scalar actual for them.
    let (data, count, array) = if shape.dims.is_empty() {
        (format!("[{local}]"), 1, 0)
    } else {
        (local.to_string(), shape.elements, 1)
    };
    let _ = writeln!(
        out,
        "  call adjit_oracle_put_{helper}({data}{len_arg}, {count}, {array})"
    );
}

/// A REAL(8) literal that reads back exactly.
fn f64_literal(x: f64) -> String {
    if x.is_nan() {
        "ieee_value(1d0, ieee_quiet_nan)".into()
    } else if x.is_infinite() {
        let which = if x > 0.0 {
            "ieee_positive_inf"
        } else {
            "ieee_negative_inf"
        };
        format!("ieee_value(1d0, {which})")
    } else {
        format!("{x:.16e}").replacen('e', "d", 1)
    }
}

/// A REAL(4) literal that reads back exactly.
fn f32_literal(x: f32) -> String {
    if x.is_nan() {
        "ieee_value(1e0, ieee_quiet_nan)".into()
    } else if x.is_infinite() {
        let which = if x > 0.0 {
            "ieee_positive_inf"
        } else {
            "ieee_negative_inf"
        };
        format!("ieee_value(1e0, {which})")
    } else {
        format!("{x:.8e}")
    }
}

/// An integer literal of the given kind; the most negative value, which has
/// no literal, is written as an expression.
fn int_literal(x: i64, min: i64, kind: u8) -> String {
    if x == min {
        format!("(-{}_{kind} - 1_{kind})", -(x + 1))
    } else {
        format!("{x}_{kind}")
    }
}

/// A Fortran character expression with exactly the given bytes: quoted
/// printable text, `achar(n)` for anything else, joined by `//`.
fn fortran_string(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "''".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut text = String::new();
    for &b in bytes {
        if (0x20..0x7f).contains(&b) {
            if b == b'\'' {
                text.push('\'');
            }
            text.push(b as char);
        } else {
            if !text.is_empty() {
                parts.push(format!("'{}'", std::mem::take(&mut text)));
            }
            parts.push(format!("achar({b})"));
        }
    }
    if !text.is_empty() {
        parts.push(format!("'{text}'"));
    }
    parts.join(" // ")
}

/// A JSON string literal (for names, which are plain identifiers).
fn json_string(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// External printing subroutines appended after the driver's main program.
/// Each takes the data, the element count and whether it is an array
/// (`1`: print a JSON array, `0`: a single value); arrays of any rank arrive
/// by sequence association.
const PRINT_HELPERS: &str = r#"
subroutine adjit_oracle_put_text(s)
  character(len=*), intent(in) :: s
  write(*, '(a)', advance='no') s
end subroutine adjit_oracle_put_text

subroutine adjit_oracle_open(i, array)
  integer, intent(in) :: i, array
  if (array /= 0) then
    if (i == 1) then
      call adjit_oracle_put_text('[')
    else
      call adjit_oracle_put_text(', ')
    end if
  end if
end subroutine adjit_oracle_open

subroutine adjit_oracle_close(array)
  integer, intent(in) :: array
  if (array /= 0) call adjit_oracle_put_text(']')
end subroutine adjit_oracle_close

subroutine adjit_oracle_put_real(x)
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite
  real(8), intent(in) :: x
  character(len=40) :: buf
  if (.not. ieee_is_finite(x)) then
    call adjit_oracle_put_text('null')
  else
    write(buf, '(es26.17e3)') x
    call adjit_oracle_put_text(trim(adjustl(buf)))
  end if
end subroutine adjit_oracle_put_real

subroutine adjit_oracle_put_f64(x, n, array)
  integer, intent(in) :: n, array
  real(8), intent(in) :: x(n)
  integer :: i
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    call adjit_oracle_put_real(x(i))
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_f64

subroutine adjit_oracle_put_f32(x, n, array)
  integer, intent(in) :: n, array
  real(4), intent(in) :: x(n)
  integer :: i
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    call adjit_oracle_put_real(real(x(i), 8))
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_f32

subroutine adjit_oracle_put_i32(x, n, array)
  integer, intent(in) :: n, array
  integer(4), intent(in) :: x(n)
  integer :: i
  character(len=24) :: buf
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    write(buf, '(i0)') x(i)
    call adjit_oracle_put_text(trim(buf))
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_i32

subroutine adjit_oracle_put_i64(x, n, array)
  integer, intent(in) :: n, array
  integer(8), intent(in) :: x(n)
  integer :: i
  character(len=24) :: buf
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    write(buf, '(i0)') x(i)
    call adjit_oracle_put_text(trim(buf))
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_i64

subroutine adjit_oracle_put_bool(x, n, array)
  integer, intent(in) :: n, array
  logical, intent(in) :: x(n)
  integer :: i
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    if (x(i)) then
      call adjit_oracle_put_text('true')
    else
      call adjit_oracle_put_text('false')
    end if
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_bool

subroutine adjit_oracle_put_char(x, len, n, array)
  integer, intent(in) :: len, n, array
  character(len=len), intent(in) :: x(n)
  integer :: i, k, code
  character(len=8) :: buf
  if (array /= 0 .and. n == 0) call adjit_oracle_put_text('[')
  do i = 1, n
    call adjit_oracle_open(i, array)
    call adjit_oracle_put_text('"')
    do k = 1, len
      code = iachar(x(i)(k:k))
      if (code == 34 .or. code == 92) then
        call adjit_oracle_put_text(achar(92) // x(i)(k:k))
      else if (code < 32 .or. code > 126) then
        write(buf, '(a, z4.4)') 'u', code
        call adjit_oracle_put_text(achar(92) // trim(buf))
      else
        call adjit_oracle_put_text(x(i)(k:k))
      end if
    end do
    call adjit_oracle_put_text('"')
  end do
  call adjit_oracle_close(array)
end subroutine adjit_oracle_put_char
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::{Bound, Dim, Proc, Storage, Var, VarId};

    fn param(proc: &mut Proc, name: &str, ty: Type, dims: Vec<Dim>) -> VarId {
        let index = proc.params.len() as u32;
        let id = proc.add_var(Var {
            name: name.into(),
            ty,
            dims,
            char_len: None,
            storage: Storage::Param(index),
        });
        proc.params.push(id);
        id
    }

    /// `subroutine griewank(s, a, c)` with `a(s)`.
    fn griewank() -> (Module, ProcId) {
        let mut proc = Proc::new("griewank");
        let s = param(&mut proc, "s", Type::I32, vec![]);
        param(
            &mut proc,
            "a",
            Type::F64,
            vec![Dim {
                lower: Bound::Const(1),
                upper: Some(Bound::Var(s)),
            }],
        );
        param(&mut proc, "c", Type::F64, vec![]);
        let mut module = Module::default();
        let id = module.add_proc(proc);
        (module, id)
    }

    #[test]
    fn driver_declares_initialises_calls_and_prints() {
        let (module, id) = griewank();
        let args = [
            Buffer::I32(vec![3]),
            Buffer::F64(vec![1.0, 0.1, -2.5e-300]),
            Buffer::F64(vec![0.0]),
        ];
        let text = driver_source(&module, id, &args).unwrap();
        assert!(text.contains("integer(4) :: arg1\n"), "{text}");
        assert!(text.contains("real(8) :: arg2(1:3)\n"), "{text}");
        assert!(text.contains("arg2(2) = 1.0000000000000001d-1\n"), "{text}");
        assert!(
            text.contains("arg2(3) = -2.5000000000000000d-300\n"),
            "{text}"
        );
        assert!(text.contains("call griewank(arg1, arg2, arg3)\n"), "{text}");
        assert!(
            text.contains("call adjit_oracle_put_f64(arg2, 3, 1)"),
            "{text}"
        );
        assert!(text.contains("\"s\": "), "{text}");
    }

    #[test]
    fn wrong_buffers_are_errors() {
        let (module, id) = griewank();
        let short = [
            Buffer::I32(vec![3]),
            Buffer::F64(vec![1.0]),
            Buffer::F64(vec![0.0]),
        ];
        assert!(matches!(
            driver_source(&module, id, &short),
            Err(OracleError::Arguments(_))
        ));
        let long = [
            Buffer::I32(vec![1]),
            Buffer::F64(vec![1.0; 2]),
            Buffer::F64(vec![0.0]),
        ];
        assert_eq!(
            driver_source(&module, id, &long),
            Err(OracleError::ArgumentSize {
                name: "a".into(),
                expected: 1,
                got: 2
            })
        );
        let typed = [
            Buffer::I32(vec![1]),
            Buffer::F32(vec![1.0]),
            Buffer::F64(vec![0.0]),
        ];
        assert!(matches!(
            driver_source(&module, id, &typed),
            Err(OracleError::Arguments(_))
        ));
        assert!(matches!(
            driver_source(&module, id, &typed[..2]),
            Err(OracleError::Arguments(_))
        ));
    }

    #[test]
    fn module_function_with_assumed_size_and_characters() {
        let mut proc = Proc::new("norm");
        proc.module = Some("stats".into());
        param(
            &mut proc,
            "x",
            Type::F32,
            vec![
                Dim {
                    lower: Bound::Const(0),
                    upper: Some(Bound::Const(1)),
                },
                Dim {
                    lower: Bound::Const(1),
                    upper: None,
                },
            ],
        );
        let task = param(&mut proc, "task", Type::Char, vec![]);
        proc.vars[task.index()].char_len = Some(Bound::Const(4));
        let r = param(&mut proc, "norm", Type::F32, vec![]);
        proc.result = Some(r);
        let mut module = Module::default();
        let id = module.add_proc(proc);
        let args = [
            Buffer::F32(vec![1.5, 2.0, 0.1, -1.0, 7.0, 8.0]),
            Buffer::Char(b"it's".to_vec()),
            Buffer::F32(vec![0.0]),
        ];
        let text = driver_source(&module, id, &args).unwrap();
        assert!(text.contains("use stats, only: norm\n"), "{text}");
        assert!(text.contains("real(4) :: arg1(0:1, 1:3)\n"), "{text}");
        assert!(text.contains("arg1(0, 2) = 1.00000001e-1\n"), "{text}");
        assert!(text.contains("arg2 = 'it''s'\n"), "{text}");
        assert!(text.contains("arg3 = norm(arg1, arg2)\n"), "{text}");
        assert!(!text.contains("external"), "{text}");
        assert!(text.contains("\"result\": "), "{text}");
        let odd = [
            Buffer::F32(vec![1.0; 5]),
            Buffer::Char(b"abcd".to_vec()),
            Buffer::F32(vec![0.0]),
        ];
        assert!(matches!(
            driver_source(&module, id, &odd),
            Err(OracleError::ArgumentSize { .. })
        ));
    }

    /// Compiles the Griewank source with a generated driver by gfortran
    /// (when installed) and checks the printed JSON.
    #[test]
    fn generated_driver_runs_under_gfortran() {
        if std::process::Command::new("gfortran")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("gfortran not installed: skipping");
            return;
        }
        let dir = std::env::temp_dir().join(format!("adjit-oracle-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("griewank.f90");
        std::fs::write(
            &source,
            "subroutine griewank(s, a, c)\n integer s, i\n double precision a(s), c, d\n \
             c = 1\n d = 1.d0\n do i = 1, s\n c = c + (a(i)**2)/400\n \
             d = d*cos(a(i)/sqrt(dble(i)))\n end do\n c = c - d\nend\n",
        )
        .unwrap();
        let (module, id) = griewank();
        let args = [
            Buffer::I32(vec![5]),
            Buffer::F64(vec![1.0; 5]),
            Buffer::F64(vec![0.0]),
        ];
        let driver = dir.join("driver.f90");
        std::fs::write(&driver, driver_source(&module, id, &args).unwrap()).unwrap();
        let exe = dir.join("driver");
        let status = std::process::Command::new("gfortran")
            .arg("-O0")
            .arg(&source)
            .arg(&driver)
            .arg("-o")
            .arg(&exe)
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(status.success());
        let output = std::process::Command::new(&exe).output().unwrap();
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["entry"], "griewank");
        assert_eq!(json["outputs"]["s"], 5);
        assert_eq!(json["outputs"]["a"].as_array().unwrap().len(), 5);
        // REFERENCE_CASES.md section 2 (last digit depends on libm's cos).
        let c = json["outputs"]["c"].as_f64().unwrap();
        assert!((c - 0.7401564142777319).abs() < 1e-15, "{c}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn literals_read_back_exactly() {
        assert_eq!(f64_literal(0.1), "1.0000000000000001d-1");
        assert_eq!(f32_literal(1.72), "1.72000003e0");
        assert_eq!(
            int_literal(i32::MIN as i64, i32::MIN as i64, 4),
            "(-2147483647_4 - 1_4)"
        );
        assert_eq!(fortran_string(b"a\tb"), "'a' // achar(9) // 'b'");
        let dims = [
            DimShape {
                lower: 0,
                extent: 3,
            },
            DimShape {
                lower: 1,
                extent: 4,
            },
        ];
        assert_eq!(subscript(&dims, 4), "(1, 2)");
    }
}
