//! The native half of the `adjit` Python package (`adjit._adjit`): a
//! compiled Fortran program ([`NativeProgram`]) over the public Rust API
//! (`adjit::engine`), with NumPy arrays in and out.
//!
//! This module owns the conversions between Python values and the engine's
//! argument buffers (column-major, Fortran order honoured in both
//! directions), the mapping of engine errors to Python exceptions (defined
//! in `adjit/_errors.py`), the cache of derivative handles per selection,
//! and the GIL release around every call into generated code. The
//! pure-Python half (`adjit/__init__.py`, `adjit/dask.py`) builds the
//! user-facing API on it.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{
    element_count, Adjoint, ArgValue, Args, Backend, Engine, Error, ErrorKind, FiniteDifferences,
    Jacobian, Options, Procedure, Selection, Tangent, Workspace,
};
use adjit::front::source::SourceForm;
use adjit::ir::{Buffer, Type};
use numpy::npyffi::NPY_ORDER;
use numpy::{
    Element, PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

/// The most directions a tangent sweep carries (the command line's default).
const MAX_DIRECTIONS: usize = 8;

/// How a program was made: everything needed to compile it again (the
/// pickled form of a `Program`).
#[derive(Clone, Debug)]
struct Spec {
    /// `(name, text)` of every source file, in order.
    sources: Vec<(String, String)>,
    entry: Option<String>,
    form: Option<String>,
    include_dirs: Vec<String>,
    bounds_checks: bool,
    interpreter: bool,
    /// Bytes the tape of one loop marked `!$AD BINOMIAL-CKP` may take
    /// before it is checkpointed (the automatic mode; `None`: the
    /// directives' schedule).
    tape_budget: Option<u64>,
    /// Gradients from `grad` run the adjoint copy that zeroes the gradient
    /// itself into a gradient buffer ([`AdjointOptions::in_place_zeroing`]).
    in_place_zeroing: bool,
}

/// Derivative handles compiled so far, by selection (`of`, `wrt` as
/// normalised text, and the tangent's directions).
#[derive(Default)]
struct Handles {
    adjoints: HashMap<(String, String), Arc<Adjoint>>,
    tangents: HashMap<(String, String, usize), Arc<Tangent>>,
    /// A workspace (tape, companions, runtime) per adjoint selection for
    /// `grad`'s evaluations into a gradient buffer: taken for a call and
    /// put back after it, so that repeated calls reuse it and concurrent
    /// ones each lay out their own.
    workspaces: HashMap<(String, String), Workspace>,
}

/// A compiled Fortran program and its entry procedure (`adjit._adjit.Program`).
///
/// Arguments are passed as a dict of Fortran names to values; derivative
/// code is generated and JIT-compiled on first use for each selection and
/// kept. Every call into generated code releases the GIL.
#[pyclass(module = "adjit._adjit", name = "Program", frozen)]
struct NativeProgram {
    spec: Spec,
    engine: Engine,
    primal: Procedure,
    handles: Mutex<Handles>,
    /// Taken shared by every evaluation and exclusively by the block
    /// evaluations of distributed Jacobians, which run from the program's
    /// state and put it back: nothing else runs in between.
    evaluating: RwLock<()>,
}

/// The Python exception for an engine error: `FortranError` (compile, with
/// file, line, column), `adjit.RuntimeError` (generated code, naming the
/// variable and line), `ValueError` (usage), `OSError` (files),
/// `adjit.AdjitError` (internal).
fn py_error(py: Python<'_>, e: Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let errors = py.import("adjit._errors")?;
        let (file, line, col) = match &e.location {
            Some(l) => (Some(l.file.clone()), Some(l.line), Some(l.col)),
            None => (None, None, None),
        };
        let value = match e.kind {
            ErrorKind::Compile => {
                errors
                    .getattr("FortranError")?
                    .call1((e.message.clone(), file, line, col))?
            }
            ErrorKind::Runtime => {
                let (kind, variable, detail) = match &e.runtime {
                    Some(r) => (
                        Some(r.kind.to_string()),
                        r.var.clone(),
                        Some(r.detail.clone()),
                    ),
                    None => (None, None, None),
                };
                errors.getattr("RuntimeError")?.call1((
                    e.message.clone(),
                    variable,
                    file,
                    line,
                    col,
                    kind,
                    detail,
                ))?
            }
            ErrorKind::Usage => return Ok(PyValueError::new_err(e.message.clone())),
            ErrorKind::Io => return Ok(PyOSError::new_err(e.message.clone())),
            ErrorKind::Internal => errors.getattr("AdjitError")?.call1((e.message.clone(),))?,
        };
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|err| err)
}

/// Runs `f` without the GIL and maps its error.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    py.detach(f).map_err(|e| py_error(py, e))
}

fn usage(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// Parses a selection given as one string (`"x"`, `"f(3)"`, `"x, y"`) or a
/// sequence of strings; returns the selections and their normalised text.
fn selections(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<(Vec<Selection>, String)> {
    let texts: Vec<String> = if let Ok(s) = obj.extract::<String>() {
        vec![s]
    } else {
        obj.extract::<Vec<String>>()
            .map_err(|_| usage("a selection is a name (`x`, `f(3)`) or a sequence of names"))?
    };
    let mut out = Vec::new();
    for t in &texts {
        out.extend(Selection::parse_list(t).map_err(|e| py_error(py, e))?);
    }
    if out.is_empty() {
        return Err(usage("empty selection"));
    }
    let key = out.iter().map(selection_text).collect::<Vec<_>>().join(",");
    Ok((out, key))
}

/// The canonical text of a selection: `x` or `f(1,2)`.
fn selection_text(s: &Selection) -> String {
    match &s.subscripts {
        None => s.name.clone(),
        Some(subs) => {
            let subs: Vec<String> = subs.iter().map(i64::to_string).collect();
            format!("{}({})", s.name, subs.join(","))
        }
    }
}

/// The elements of a NumPy array in column-major (Fortran) order: one copy
/// of the memory when the array is Fortran-contiguous (any 1-D contiguous
/// array is), else one pass over its strides.
fn column_major<T: Element + Copy>(a: &PyReadonlyArrayDyn<'_, T>) -> Vec<T> {
    if a.is_fortran_contiguous() {
        if let Ok(s) = a.as_slice() {
            return s.to_vec();
        }
    }
    a.as_array().reversed_axes().iter().copied().collect()
}

/// Converts `obj` to a NumPy array of `T` (no copy when it already is one)
/// and returns its column-major elements and shape.
fn numpy_elements<T: Element + Copy>(
    obj: &Bound<'_, PyAny>,
    dtype: &str,
) -> PyResult<(Vec<T>, Vec<usize>)> {
    let array = match obj.cast::<PyArrayDyn<T>>() {
        Ok(a) => a.clone(),
        Err(_) => {
            let np = obj.py().import("numpy")?;
            np.call_method1("asarray", (obj, dtype))?
                .cast_into::<PyArrayDyn<T>>()?
        }
    };
    let ro = array.try_readonly()?;
    Ok((column_major(&ro), ro.shape().to_vec()))
}

/// The dtype kind (`'f'`, `'i'`, `'u'`, `'b'`, ...) of `obj` seen as an array.
fn dtype_kind(obj: &Bound<'_, PyAny>) -> PyResult<char> {
    let np = obj.py().import("numpy")?;
    let kind: String = np
        .call_method1("asarray", (obj,))?
        .getattr("dtype")?
        .getattr("kind")?
        .extract()?;
    Ok(kind.chars().next().unwrap_or('?'))
}

/// A buffer of `ty` from an array-like value, and the value's shape.
fn buffer_from(name: &str, ty: Type, obj: &Bound<'_, PyAny>) -> PyResult<(Buffer, Vec<usize>)> {
    Ok(match ty {
        Type::F64 => {
            let (v, shape) = numpy_elements::<f64>(obj, "float64")?;
            (Buffer::F64(v), shape)
        }
        Type::F32 => {
            let (v, shape) = numpy_elements::<f32>(obj, "float32")?;
            (Buffer::F32(v), shape)
        }
        Type::I32 | Type::I64 => {
            if !matches!(dtype_kind(obj)?, 'i' | 'u' | 'b') {
                return Err(usage(format!(
                    "`{name}` is an INTEGER array: give integers, not {}",
                    obj.get_type().name()?
                )));
            }
            let (v, shape) = numpy_elements::<i64>(obj, "int64")?;
            if ty == Type::I64 {
                (Buffer::I64(v), shape)
            } else {
                let mut out = Vec::with_capacity(v.len());
                for k in v {
                    out.push(i32::try_from(k).map_err(|_| {
                        usage(format!("{k} is out of range for `{name}` (INTEGER(4))"))
                    })?);
                }
                (Buffer::I32(out), shape)
            }
        }
        Type::Bool => {
            let (v, shape) = numpy_elements::<bool>(obj, "bool")?;
            (Buffer::Bool(v.into_iter().map(u8::from).collect()), shape)
        }
        Type::Char => {
            return Err(usage(format!(
                "`{name}` is a CHARACTER argument: give a str"
            )))
        }
    })
}

/// A scalar Python value (bool, int, float, str, or a NumPy scalar) as an
/// argument value; `None` for anything else (arrays, sequences).
fn scalar_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<ArgValue>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(ArgValue::Logical(obj.is_truthy()?)));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(ArgValue::Text(s.to_str()?.to_string())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Some(ArgValue::Integer(obj.extract::<i64>()?)));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(ArgValue::Scalar(obj.extract::<f64>()?)));
    }
    // NumPy scalars and 0-d arrays.
    if obj.hasattr("dtype")? && obj.getattr("ndim")?.extract::<usize>()? == 0 {
        return Ok(Some(match dtype_kind(obj)? {
            'i' | 'u' => ArgValue::Integer(obj.call_method0("item")?.extract::<i64>()?),
            'b' => ArgValue::Logical(obj.is_truthy()?),
            _ => ArgValue::Scalar(obj.call_method0("item")?.extract::<f64>()?),
        }));
    }
    Ok(None)
}

/// A value for an array argument, set once the scalars are.
enum Pending<'py> {
    /// One value filling every element.
    Fill(ArgValue),
    /// An array-like value.
    Elements(Bound<'py, PyAny>),
}

/// Fills an argument list from a dict of Fortran names to values: scalars
/// first (they size the arrays), then arrays, whose NumPy shape must match
/// the declared extents (a 1-D array may fill an array of any rank in
/// column-major order).
fn fill_args(py: Python<'_>, args: &mut Args, values: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let Some(values) = values else {
        return Ok(());
    };
    let mut arrays = Vec::new();
    let mut shapes = Vec::new();
    for (key, value) in values.iter() {
        let name: String = key.extract()?;
        let i = args.index_of(&name).map_err(|e| py_error(py, e))?;
        match scalar_value(&value)? {
            Some(v) => {
                if let (ArgValue::Scalar(x), true) = (&v, args.ty(i).is_int()) {
                    if x.fract() != 0.0 || !x.is_finite() {
                        return Err(usage(format!("`{name}` is INTEGER: {x} is not an integer")));
                    }
                }
                if args.is_array(i) {
                    arrays.push((name, i, Pending::Fill(v)));
                } else {
                    args.set(&name, v).map_err(|e| py_error(py, e))?;
                }
            }
            None => arrays.push((name, i, Pending::Elements(value))),
        }
    }
    for (name, i, value) in arrays {
        match value {
            Pending::Fill(fill) => args.set(&name, fill).map_err(|e| py_error(py, e))?,
            Pending::Elements(value) => {
                let (buffer, shape) = buffer_from(&name, args.ty(i), &value)?;
                if !args.is_array(i) {
                    if buffer.len() != 1 {
                        return Err(usage(format!(
                            "`{name}` is a scalar: got an array of shape {}",
                            shape_text(&shape)
                        )));
                    }
                    let one = match &buffer {
                        Buffer::I32(v) => ArgValue::Integer(v[0].into()),
                        Buffer::I64(v) => ArgValue::Integer(v[0]),
                        Buffer::Bool(v) => ArgValue::Logical(v[0] != 0),
                        b => ArgValue::Scalar(b.get_f64(0)),
                    };
                    args.set(&name, one).map_err(|e| py_error(py, e))?;
                    continue;
                }
                args.set_buffer(&name, buffer)
                    .map_err(|e| py_error(py, e))?;
                if shape.len() > 1 {
                    shapes.push((name, i, shape));
                }
            }
        }
    }
    for (name, i, shape) in shapes {
        let extents = extents(args, i);
        if extents != shape {
            return Err(usage(format!(
                "`{name}` is declared with shape {}, got an array of shape {}",
                shape_text(&extents),
                shape_text(&shape)
            )));
        }
    }
    Ok(())
}

/// A shape as Python writes it: `(3,)`, `(2, 3)`.
fn shape_text(shape: &[usize]) -> String {
    let items: Vec<String> = shape.iter().map(usize::to_string).collect();
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// The extents of array parameter `i` under the current arguments.
fn extents(args: &Args, i: usize) -> Vec<usize> {
    args.bounds(i)
        .iter()
        .map(|&(lo, hi)| (hi - lo + 1).max(0) as usize)
        .collect()
}

/// A NumPy array of `shape` in Fortran order that takes over `data`
/// without copying it.
fn fortran_array<'py, T: Element>(
    py: Python<'py>,
    data: Vec<T>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let flat = PyArray1::from_vec(py, data);
    if shape.len() == 1 && shape[0] == flat.len() {
        return Ok(flat.into_any());
    }
    Ok(flat
        .reshape_with_order(shape.to_vec(), NPY_ORDER::NPY_FORTRANORDER)?
        .into_any())
}

/// How argument `i` comes back to Python: whether it is an array, its
/// CHARACTER length, and its shape (the declared extents, or its length
/// when the buffer does not fill them).
struct OutputShape {
    array: bool,
    char_len: usize,
    shape: Vec<usize>,
}

impl OutputShape {
    /// Read before any buffer is taken (the extents read the integers).
    fn of(args: &Args, i: usize) -> OutputShape {
        let array = args.is_array(i);
        let char_len = args.char_len(i).max(1);
        let shape = if array {
            let e = extents(args, i);
            let per = if args.ty(i) == Type::Char {
                char_len
            } else {
                1
            };
            let len = args.buffers()[i].len() / per;
            if e.iter().product::<usize>() == len {
                e
            } else {
                vec![len]
            }
        } else {
            Vec::new()
        };
        OutputShape {
            array,
            char_len,
            shape,
        }
    }
}

/// Every argument's Python value after a call, by name: scalars as
/// `float`, `int`, `bool` or `str`; arrays as NumPy arrays of the declared
/// shape in Fortran order (taking over the buffers, no copy); CHARACTER
/// arrays as lists of `str`.
fn py_values<'py>(py: Python<'py>, mut args: Args) -> PyResult<Bound<'py, PyDict>> {
    let shapes: Vec<OutputShape> = (0..args.names().len())
        .map(|i| OutputShape::of(&args, i))
        .collect();
    let names = args.names().to_vec();
    let out = PyDict::new(py);
    for ((name, buffer), shape) in names
        .into_iter()
        .zip(args.buffers_mut().iter_mut())
        .zip(&shapes)
    {
        let buffer = std::mem::replace(buffer, Buffer::F64(Vec::new()));
        out.set_item(name, py_value(py, buffer, shape)?)?;
    }
    Ok(out)
}

/// The Python value of one argument's buffer.
fn py_value<'py>(
    py: Python<'py>,
    buffer: Buffer,
    out: &OutputShape,
) -> PyResult<Bound<'py, PyAny>> {
    let (array, char_len, shape) = (out.array, out.char_len, &out.shape);
    let text = |bytes: &[u8]| -> String { bytes.iter().map(|&b| b as char).collect() };
    if !array {
        return Ok(match buffer {
            Buffer::Char(b) => PyString::new(py, &text(&b)).into_any(),
            Buffer::Bool(b) => PyBool::new(py, b.first().copied().unwrap_or(0) != 0)
                .to_owned()
                .into_any(),
            Buffer::I32(v) => v
                .first()
                .copied()
                .unwrap_or(0)
                .into_pyobject(py)?
                .into_any(),
            Buffer::I64(v) => v
                .first()
                .copied()
                .unwrap_or(0)
                .into_pyobject(py)?
                .into_any(),
            Buffer::F32(v) => (v.first().copied().unwrap_or(0.0) as f64)
                .into_pyobject(py)?
                .into_any(),
            Buffer::F64(v) => v
                .first()
                .copied()
                .unwrap_or(0.0)
                .into_pyobject(py)?
                .into_any(),
        });
    }
    match buffer {
        Buffer::F64(v) => fortran_array(py, v, shape),
        Buffer::F32(v) => fortran_array(py, v, shape),
        Buffer::I32(v) => fortran_array(py, v, shape),
        Buffer::I64(v) => fortran_array(py, v, shape),
        Buffer::Bool(v) => fortran_array(py, v.into_iter().map(|b| b != 0).collect(), shape),
        Buffer::Char(b) => {
            let items: Vec<String> = b.chunks(char_len).map(text).collect();
            Ok(PyList::new(py, items)?.into_any())
        }
    }
}

/// A row-major `rows x cols` matrix as a 2-D NumPy array (no copy).
fn matrix<'py>(
    py: Python<'py>,
    data: Vec<f64>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, data)
        .reshape_with_order([rows, cols], NPY_ORDER::NPY_CORDER)?
        .into_any())
}

/// Which derivative code computes a Jacobian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Adjoint,
    Tangent,
    Fd,
}

impl Mode {
    /// Parses a mode name; `None` picks the adjoint for at most as many
    /// outputs as inputs, else the tangent (`auto`).
    fn parse(text: Option<&str>, rows: usize, cols: usize) -> PyResult<Mode> {
        match text.map(str::to_ascii_lowercase).as_deref() {
            None | Some("auto") => Ok(if rows <= cols {
                Mode::Adjoint
            } else {
                Mode::Tangent
            }),
            Some("adjoint" | "reverse") => Ok(Mode::Adjoint),
            Some("tangent" | "forward") => Ok(Mode::Tangent),
            Some("fd") => Ok(Mode::Fd),
            Some(other) => Err(usage(format!(
                "unknown mode `{other}` (adjoint, tangent, fd or auto)"
            ))),
        }
    }
}

impl NativeProgram {
    fn compile(spec: Spec) -> Result<NativeProgram, Error> {
        let form = match spec.form.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None => None,
            Some("fixed") => Some(SourceForm::Fixed),
            Some("free") => Some(SourceForm::Free),
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!("unknown source form `{other}` (fixed or free)"),
                ))
            }
        };
        let options = Options {
            form,
            bounds_checks: spec.bounds_checks,
            backend: if spec.interpreter {
                Backend::Interpreter
            } else {
                Backend::Jit
            },
            include_dirs: spec.include_dirs.iter().map(Into::into).collect(),
            ..Options::default()
        };
        let engine = Engine::from_sources(&spec.sources, options)?;
        let primal = engine.procedure(spec.entry.as_deref())?;
        Ok(NativeProgram {
            spec,
            engine,
            primal,
            handles: Mutex::new(Handles::default()),
            evaluating: RwLock::new(()),
        })
    }

    /// The argument list for a call, filled from `values`.
    fn args(&self, py: Python<'_>, values: Option<&Bound<'_, PyDict>>) -> PyResult<Args> {
        let mut args = self.primal.args();
        fill_args(py, &mut args, values)?;
        Ok(args)
    }

    /// The compiled handles and workspaces (a poisoned lock is taken
    /// over: they stay consistent whatever a panicking holder did).
    fn handles(&self) -> MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn adjoint(
        &self,
        of: &[Selection],
        wrt: &[Selection],
        key: (String, String),
    ) -> Result<Arc<Adjoint>, Error> {
        let mut handles = self.handles();
        if let Some(a) = handles.adjoints.get(&key) {
            return Ok(a.clone());
        }
        let a = Arc::new(self.engine.adjoint(
            Some(self.primal.name()),
            of,
            wrt,
            &AdjointOptions {
                tape_budget: self.spec.tape_budget,
                in_place_zeroing: self.spec.in_place_zeroing,
                ..AdjointOptions::default()
            },
        )?);
        handles.adjoints.insert(key, a.clone());
        Ok(a)
    }

    fn tangent(
        &self,
        of: &[Selection],
        wrt: &[Selection],
        key: (String, String),
        cols: usize,
    ) -> Result<Arc<Tangent>, Error> {
        let directions = cols.clamp(1, MAX_DIRECTIONS);
        let key = (key.0, key.1, directions);
        let mut handles = self.handles();
        if let Some(t) = handles.tangents.get(&key) {
            return Ok(t.clone());
        }
        let t = Arc::new(
            self.engine
                .tangent(Some(self.primal.name()), of, wrt, directions)?,
        );
        handles.tangents.insert(key, t.clone());
        Ok(t)
    }

    /// The selections, the argument list and the Jacobian's size.
    fn prepare(
        &self,
        py: Python<'_>,
        of: &Bound<'_, PyAny>,
        wrt: &Bound<'_, PyAny>,
        values: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Prepared> {
        let (of, of_key) = selections(py, of)?;
        let (wrt, wrt_key) = selections(py, wrt)?;
        let args = self.args(py, values)?;
        let rows = element_count(&args, &of).map_err(|e| py_error(py, e))?;
        let cols = element_count(&args, &wrt).map_err(|e| py_error(py, e))?;
        Ok(Prepared {
            of,
            wrt,
            key: (of_key, wrt_key),
            args,
            rows,
            cols,
        })
    }

    /// The whole Jacobian in `mode`, without the GIL.
    fn full_jacobian(&self, py: Python<'_>, p: &Prepared, mode: Mode) -> PyResult<Jacobian> {
        detached(py, || {
            let _shared = self
                .evaluating
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            match mode {
                Mode::Adjoint => self
                    .adjoint(&p.of, &p.wrt, p.key.clone())?
                    .jacobian(&p.args),
                Mode::Tangent => self
                    .tangent(&p.of, &p.wrt, p.key.clone(), p.cols)?
                    .jacobian(&p.args),
                Mode::Fd => FiniteDifferences::new(&self.primal).jacobian(&p.args, &p.of, &p.wrt),
            }
        })
    }
}

/// Selections and arguments of one derivative request.
struct Prepared {
    of: Vec<Selection>,
    wrt: Vec<Selection>,
    key: (String, String),
    args: Args,
    rows: usize,
    cols: usize,
}

#[pymethods]
impl NativeProgram {
    /// Compiles sources into a program.
    ///
    /// `sources` lists the files in order, each as `(name, text)` or
    /// `(path, None)` for a file read from disk (a file that is not UTF-8
    /// is read byte for byte); `entry` names the procedure (default: the
    /// first), `form` forces `"fixed"` or `"free"` form (default: guessed
    /// from each name), `include_dirs` are searched for INCLUDE files,
    /// `interpreter` runs the reference interpreter instead of native code,
    /// `tape_budget` (bytes) checkpoints a loop marked `!$AD BINOMIAL-CKP`
    /// only when its projected tape exceeds it (the automatic mode),
    /// `in_place_zeroing` makes gradients with the adjoint copy that
    /// zeroes the gradient itself (`AdjointOptions::in_place_zeroing`).
    #[new]
    #[pyo3(signature = (sources, entry=None, form=None, include_dirs=Vec::new(), bounds_checks=true, interpreter=false, tape_budget=None, in_place_zeroing=false))]
    // One parameter per keyword argument of the Python constructor.
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sources: Vec<(String, Option<String>)>,
        entry: Option<String>,
        form: Option<String>,
        include_dirs: Vec<String>,
        bounds_checks: bool,
        interpreter: bool,
        tape_budget: Option<u64>,
        in_place_zeroing: bool,
    ) -> PyResult<NativeProgram> {
        let mut texts = Vec::with_capacity(sources.len());
        for (name, text) in sources {
            let text = match text {
                Some(t) => t,
                None => {
                    let bytes = std::fs::read(&name)
                        .map_err(|e| PyOSError::new_err(format!("{name}: cannot read: {e}")))?;
                    adjit::front::diag::decode(&bytes)
                }
            };
            texts.push((name, text));
        }
        let spec = Spec {
            sources: texts,
            entry,
            form,
            include_dirs,
            bounds_checks,
            interpreter,
            tape_budget,
            in_place_zeroing,
        };
        detached(py, move || NativeProgram::compile(spec))
    }

    /// The shape of argument `name` under `args` (its declared extents;
    /// `()` for a scalar).
    #[pyo3(signature = (name, args=None))]
    fn shape(
        &self,
        py: Python<'_>,
        name: &str,
        args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<usize>> {
        let a = self.args(py, args)?;
        let i = a.index_of(name).map_err(|e| py_error(py, e))?;
        Ok(if a.is_array(i) {
            extents(&a, i)
        } else {
            Vec::new()
        })
    }

    /// The arguments of `NativeProgram(...)` that rebuild this program:
    /// `(sources, entry, form, include_dirs, bounds_checks, interpreter,
    /// tape_budget, in_place_zeroing)`,
    /// every source as `(name, text)`.
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let s = &self.spec;
        let sources: Vec<(String, Option<String>)> = s
            .sources
            .iter()
            .map(|(n, t)| (n.clone(), Some(t.clone())))
            .collect();
        (
            sources,
            s.entry.clone(),
            s.form.clone(),
            s.include_dirs.clone(),
            s.bounds_checks,
            s.interpreter,
            s.tape_budget,
            s.in_place_zeroing,
        )
            .into_pyobject(py)
    }

    /// The entry procedure's name.
    #[getter]
    fn entry(&self) -> String {
        self.primal.name().to_string()
    }

    /// Names of every procedure of the program.
    #[getter]
    fn procedures(&self) -> Vec<String> {
        self.engine.procedure_names()
    }

    /// The entry's argument names in call order (lower case).
    #[getter]
    fn arguments(&self) -> Vec<String> {
        self.primal.args().names().to_vec()
    }

    /// The name of a FUNCTION's result argument (`None` for a subroutine).
    #[getter]
    fn result_name(&self) -> Option<String> {
        self.primal.result_name()
    }

    /// Compiler warnings, rendered with their locations.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.engine.warnings()
    }

    /// Calls the entry; returns every argument's value after the call.
    #[pyo3(signature = (args=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        args: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut a = self.args(py, args)?;
        a = detached(py, || {
            let _shared = self
                .evaluating
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            self.primal.call(&mut a).map(|()| a)
        })?;
        py_values(py, a)
    }

    /// The gradient of one scalar output: `(value, [arrays])`, one array
    /// per `wrt` selection (shaped like the argument for a whole array,
    /// 0-d for a scalar or one element), and the selections' names.
    #[pyo3(signature = (of, wrt, mode=None, args=None))]
    fn grad<'py>(
        &self,
        py: Python<'py>,
        of: &Bound<'py, PyAny>,
        wrt: &Bound<'py, PyAny>,
        mode: Option<&str>,
        args: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(f64, Bound<'py, PyDict>)> {
        let p = self.prepare(py, of, wrt, args)?;
        if p.rows != 1 {
            return Err(usage(format!(
                "a gradient needs one scalar output; `{}` selects {} elements",
                p.key.0, p.rows
            )));
        }
        let mode = match mode {
            None => Mode::Adjoint,
            Some(m) => Mode::parse(Some(m), 1, p.cols)?,
        };
        let (value, gradient) = if mode == Mode::Adjoint {
            detached(py, || {
                let _shared = self
                    .evaluating
                    .read()
                    .unwrap_or_else(PoisonError::into_inner);
                let adjoint = self.adjoint(&p.of, &p.wrt, p.key.clone())?;
                if !self.spec.in_place_zeroing {
                    return adjoint.gradient(&p.args);
                }
                // The evaluation into caller-owned storage an optimizer's
                // loop makes, on a copy of the arguments (left holding the
                // outputs), through the copy that zeroes the gradient.
                let mut args = p.args.clone();
                let mut grad = vec![0.0; p.cols];
                let taken = self.handles().workspaces.remove(&p.key);
                let mut ws = taken.unwrap_or_else(|| adjoint.workspace());
                let value = adjoint.gradient_into(&mut ws, &mut args, &mut grad);
                self.handles().workspaces.insert(p.key.clone(), ws);
                Ok((value?, grad))
            })?
        } else {
            let jac = self.full_jacobian(py, &p, mode)?;
            (jac.values[0], jac.matrix)
        };
        let out = PyDict::new(py);
        let mut rest = gradient;
        for (k, s) in p.wrt.iter().enumerate() {
            let n = element_count(&p.args, std::slice::from_ref(s)).map_err(|e| py_error(py, e))?;
            // The last selection takes over what is left (no copy).
            let part = if k + 1 == p.wrt.len() {
                std::mem::take(&mut rest)
            } else {
                rest.drain(..n.min(rest.len())).collect()
            };
            let i = p.args.index_of(&s.name).map_err(|e| py_error(py, e))?;
            let shape = if s.subscripts.is_none() && p.args.is_array(i) {
                let e = extents(&p.args, i);
                if e.iter().product::<usize>() == n {
                    e
                } else {
                    vec![n]
                }
            } else {
                Vec::new()
            };
            let value = if shape.is_empty() {
                PyArray1::from_vec(py, part)
                    .reshape(Vec::<usize>::new())?
                    .into_any()
            } else {
                fortran_array(py, part, &shape)?
            };
            out.set_item(selection_text(s), value)?;
        }
        Ok((value, out))
    }

    /// The Jacobian (rows: output elements, columns: input elements, both
    /// column-major within an argument, in the order selected) and the
    /// outputs' values.
    #[pyo3(signature = (of, wrt, mode=None, args=None))]
    fn jacobian<'py>(
        &self,
        py: Python<'py>,
        of: &Bound<'py, PyAny>,
        wrt: &Bound<'py, PyAny>,
        mode: Option<&str>,
        args: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let p = self.prepare(py, of, wrt, args)?;
        let mode = Mode::parse(mode, p.rows, p.cols)?;
        let jac = self.full_jacobian(py, &p, mode)?;
        let (rows, cols) = (jac.rows(), jac.cols());
        Ok((
            matrix(py, jac.matrix, rows, cols)?,
            PyArray1::from_vec(py, jac.values).into_any(),
        ))
    }

    /// `(rows, cols, mode)` of the Jacobian of `of` with respect to `wrt` at
    /// `args`, with the mode `auto` (or the one given) resolves to.
    #[pyo3(signature = (of, wrt, mode=None, args=None))]
    fn jacobian_plan(
        &self,
        py: Python<'_>,
        of: &Bound<'_, PyAny>,
        wrt: &Bound<'_, PyAny>,
        mode: Option<&str>,
        args: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(usize, usize, &'static str)> {
        let p = self.prepare(py, of, wrt, args)?;
        let mode = match Mode::parse(mode, p.rows, p.cols)? {
            Mode::Adjoint => "adjoint",
            Mode::Tangent => "tangent",
            Mode::Fd => return Err(usage("a Jacobian in blocks is by adjoint or tangent")),
        };
        Ok((p.rows, p.cols, mode))
    }

    /// A block of the Jacobian: rows `start..stop` by reverse sweeps over
    /// one tape (`mode="adjoint"`), or columns `start..stop` by vector
    /// tangent sweeps (`mode="tangent"`). It runs from the program's state
    /// and puts that state back, with no other evaluation of the program in
    /// between, so that blocks computed apart agree with one
    /// `jacobian` call from that state.
    #[pyo3(signature = (of, wrt, mode, start, stop, args=None))]
    #[allow(clippy::too_many_arguments)]
    fn jacobian_block<'py>(
        &self,
        py: Python<'py>,
        of: &Bound<'py, PyAny>,
        wrt: &Bound<'py, PyAny>,
        mode: &str,
        start: usize,
        stop: usize,
        args: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.prepare(py, of, wrt, args)?;
        let mode = Mode::parse(Some(mode), p.rows, p.cols)?;
        let (start, stop) = (start.min(stop), stop);
        let block = detached(py, || {
            let _exclusive = self
                .evaluating
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            self.engine.restoring_state(|| match mode {
                Mode::Adjoint => {
                    let stop = stop.min(p.rows);
                    let adjoint = self.adjoint(&p.of, &p.wrt, p.key.clone())?;
                    let mut tape = adjoint.record(&p.args)?;
                    let mut data = Vec::with_capacity((stop - start.min(stop)) * p.cols);
                    for row in start..stop {
                        let mut seed = vec![0.0; p.rows];
                        seed[row] = 1.0;
                        data.extend(tape.reverse(&seed)?);
                    }
                    Ok((data, stop - start.min(stop), p.cols))
                }
                Mode::Tangent => {
                    let tangent = self.tangent(&p.of, &p.wrt, p.key.clone(), p.cols)?;
                    let jac = tangent.jacobian_columns(&p.args, Range { start, end: stop })?;
                    let (rows, cols) = (jac.rows(), jac.cols());
                    Ok((jac.matrix, rows, cols))
                }
                Mode::Fd => Err(Error::new(
                    ErrorKind::Usage,
                    "a Jacobian in blocks is by adjoint or tangent",
                )),
            })
        })?;
        matrix(py, block.0, block.1, block.2)
    }
}

/// The native module `adjit._adjit`.
#[pymodule]
fn _adjit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeProgram>()?;
    Ok(())
}
