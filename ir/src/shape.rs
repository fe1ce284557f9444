//! The argument contract shared by the interpreter and the JIT: how the
//! declared shape of a variable (its [`Dim`](crate::ir::Dim) bounds and character length)
//! is evaluated at procedure entry, and how argument buffers are checked
//! against it.
//!
//! It evaluates shapes and checks sizes; it neither allocates storage nor
//! runs code.
//!
//! Rules (see also [`crate::ir::Var`] and [`crate::ir::Dim`]):
//!
//! * bounds are [`Bound`](crate::ir::Bound) expressions evaluated once at entry; a bound
//!   reading a parameter reads its first element (0 when the buffer is
//!   empty), a local reads 0 (locals are zero at entry), a global reads its
//!   current first element;
//! * the extent of an explicit dimension is `max(0, upper - lower + 1)`;
//! * an assumed last dimension (`upper: None`) takes the largest extent the
//!   storage holds: `available / (product of the other extents * char_len)`
//!   (0 when that divisor is 0);
//! * a character length is `max(0, len)`; `None` is 1 for locals and globals
//!   and assumed for parameters (`available / element count`, 0 when the
//!   count is 0);
//! * the storage must hold `elements * char_len` units (elements of the
//!   buffer's type, bytes for characters), else
//!   [`RuntimeErrorKind::ArgumentSize`] naming the variable and both sizes
//!   (a count that overflows is [`RuntimeErrorKind::TooLarge`]);
//!   except for a numeric array parameter passed by a call inside the
//!   module ([`may_be_short`]): as in Fortran 77, where a dummy may be
//!   declared larger than its actual argument (`fjac(ldfjac, n)` given a
//!   shorter array) as long as the elements beyond the actual's storage are
//!   never referenced, such a parameter takes the storage it is given and
//!   referencing an element beyond it is
//!   [`RuntimeErrorKind::IndexOutOfBounds`];
//! * the element type of an argument buffer must be the parameter's type.

use crate::buffer::Buffer;
use crate::error::RuntimeError;
use crate::ir::{Const, GlobalId, Module, ProcId, RuntimeErrorKind, Storage, Var, VarId};

/// Largest number of storage units (elements, or bytes for characters) a
/// variable may have: bigger shapes are reported as errors instead of
/// exhausting memory.
pub const MAX_STORAGE_UNITS: usize = 1 << 32;

/// One evaluated dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimShape {
    /// Lower bound.
    pub lower: i64,
    /// Extent (never negative).
    pub extent: i64,
}

impl DimShape {
    /// Upper bound (`lower + extent - 1`).
    pub fn upper(&self) -> i64 {
        self.lower.wrapping_add(self.extent).wrapping_sub(1)
    }
}

/// The evaluated shape of a variable at one procedure entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarShape {
    /// One entry per dimension (empty for a scalar), column-major.
    pub dims: Vec<DimShape>,
    /// Bytes per element for characters, 1 for every other type.
    pub char_len: usize,
    /// Number of elements (product of the extents; 1 for a scalar).
    pub elements: usize,
}

impl VarShape {
    /// Storage units the variable occupies: `elements * char_len`.
    pub fn units(&self) -> usize {
        self.elements * self.char_len
    }
}

/// The shape of one argument, as [`resolve_arguments`] returns it.
pub type ArgShape = VarShape;

fn non_negative(x: i64) -> usize {
    usize::try_from(x.max(0)).unwrap_or(usize::MAX)
}

/// Evaluates the shape of `var`.
///
/// `read` gives the entry value of a scalar integer variable a bound reads.
/// `available` is the size of the storage the variable is bound to (in
/// elements of its type, bytes for characters), `None` for storage that is
/// allocated to fit (locals).
pub fn eval_var_shape(
    var: &Var,
    read: &mut dyn FnMut(VarId) -> i64,
    available: Option<usize>,
) -> Result<VarShape, ShapeError> {
    eval_var_shape_with(var, read, available, false)
}

/// True when `var` may receive less storage than its declaration
/// describes from a call inside the module: a numeric (not CHARACTER)
/// array parameter.
pub fn may_be_short(var: &Var) -> bool {
    var.is_array() && var.ty != crate::ir::Type::Char && matches!(var.storage, Storage::Param(_))
}

/// [`eval_var_shape`]; with `allow_short`, storage shorter than the shape
/// is no error (see [`may_be_short`]).
pub fn eval_var_shape_with(
    var: &Var,
    read: &mut dyn FnMut(VarId) -> i64,
    available: Option<usize>,
    allow_short: bool,
) -> Result<VarShape, ShapeError> {
    let mut dims = DimsOnStack::new();
    let (char_len, elements) = eval_shape(var, read, available, allow_short, &mut dims)?;
    Ok(VarShape {
        dims: dims.into_vec(),
        char_len,
        elements,
    })
}

/// Dimensions of a shape held on the stack up to rank 8.
type DimsOnStack = smallvec::SmallVec<[DimShape; 8]>;

/// The work of [`eval_var_shape_with`]: pushes the dimensions on `dims`
/// (empty on entry) and returns the character length and the element
/// count, allocating nothing for ranks up to 8 (a caller that only
/// checks drops the dimensions).
fn eval_shape(
    var: &Var,
    read: &mut dyn FnMut(VarId) -> i64,
    available: Option<usize>,
    allow_short: bool,
    dims: &mut DimsOnStack,
) -> Result<(usize, usize), ShapeError> {
    let is_char = var.ty == crate::ir::Type::Char;
    let assumed_len = is_char && var.char_len.is_none() && matches!(var.storage, Storage::Param(_));
    let mut char_len = match (&var.char_len, is_char) {
        (Some(len), true) => non_negative(len.eval(read)),
        _ => 1,
    };
    let mut assumed_dim = None;
    for (d, dim) in var.dims.iter().enumerate() {
        let lower = dim.lower.eval(read);
        let extent = match &dim.upper {
            Some(upper) => upper.eval(read).wrapping_sub(lower).wrapping_add(1).max(0),
            None => {
                assumed_dim = Some(d);
                0
            }
        };
        dims.push(DimShape { lower, extent });
    }
    let too_big = || ShapeError {
        kind: RuntimeErrorKind::TooLarge,
        detail: format!(
            "`{}` would need more than {MAX_STORAGE_UNITS} units",
            var.name
        ),
    };
    let mut elements: usize = 1;
    for (d, dim) in dims.iter().enumerate() {
        if assumed_dim != Some(d) {
            elements = elements
                .checked_mul(non_negative(dim.extent))
                .filter(|&e| e <= MAX_STORAGE_UNITS)
                .ok_or_else(too_big)?;
        }
    }
    let available_units = available.unwrap_or(0);
    if assumed_len {
        char_len = available_units.checked_div(elements).unwrap_or(0);
    }
    if let Some(d) = assumed_dim {
        let per_unit = elements.saturating_mul(char_len);
        let extent = available_units.checked_div(per_unit).unwrap_or(0);
        dims[d].extent = i64::try_from(extent).unwrap_or(i64::MAX);
        elements = elements.saturating_mul(extent);
    }
    let units = elements
        .checked_mul(char_len)
        .filter(|&u| u <= MAX_STORAGE_UNITS)
        .ok_or_else(too_big)?;
    if let Some(have) = available.filter(|_| !allow_short) {
        if units > have {
            return Err(ShapeError {
                kind: RuntimeErrorKind::ArgumentSize,
                detail: format!(
                    "`{}` needs {units} {}, the argument has {have}",
                    var.name,
                    if is_char { "bytes" } else { "elements" }
                ),
            });
        }
    }
    Ok((char_len, elements))
}

/// The first element of a buffer as an integer (floats truncate; 0 when
/// empty).
pub fn first_as_int(buffer: &Buffer) -> i64 {
    int_at(buffer, 0)
}

/// The element at (0-based) offset `at` of a buffer as an integer (floats
/// truncated; 0 outside the buffer or for other types).
pub fn int_at(buffer: &Buffer, at: i64) -> i64 {
    let Some(i) = usize::try_from(at).ok().filter(|&i| i < buffer.len()) else {
        return 0;
    };
    match buffer {
        Buffer::I32(v) => v[i] as i64,
        Buffer::I64(v) => v[i],
        _ => buffer.get_f64(i) as i64,
    }
}

/// The initial value of the element at (0-based) offset `at` of a global,
/// as an integer.
pub fn global_initial_int(module: &Module, global: GlobalId, at: i64) -> i64 {
    match module
        .globals
        .get(global.index())
        .and_then(|g| g.init.get(usize::try_from(at).ok()?))
    {
        Some(Const::Int(i)) => *i,
        _ => 0,
    }
}

/// Why a variable's shape cannot be bound to its storage.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeError {
    /// [`RuntimeErrorKind::TooLarge`] when the element or storage-unit count
    /// overflows, [`RuntimeErrorKind::ArgumentSize`] when the storage is
    /// shorter than the shape.
    pub kind: RuntimeErrorKind,
    /// The message naming the variable and the sizes.
    pub detail: String,
}

fn argument_error(proc: ProcId, var: Option<&str>, detail: String) -> RuntimeError {
    shape_error(
        proc,
        var,
        ShapeError {
            kind: RuntimeErrorKind::ArgumentSize,
            detail,
        },
    )
}

fn shape_error(proc: ProcId, var: Option<&str>, error: ShapeError) -> RuntimeError {
    RuntimeError {
        kind: error.kind,
        proc,
        span: Default::default(),
        var: var.map(str::to_string),
        detail: error.detail,
    }
}

/// Checks host-supplied argument buffers against a procedure's parameters
/// and returns each parameter's evaluated shape, reading globals' initial
/// values for bounds that name globals.
pub fn resolve_arguments(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
) -> Result<Vec<ArgShape>, RuntimeError> {
    resolve_arguments_with(module, proc, args, &mut |g, at| {
        global_initial_int(module, g, at)
    })
}

/// [`resolve_arguments`] with the current element at a (0-based) offset of
/// each global given by `global` (for callers whose globals have changed
/// since start-up).
pub fn resolve_arguments_with(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    global: &mut dyn FnMut(GlobalId, i64) -> i64,
) -> Result<Vec<ArgShape>, RuntimeError> {
    let mut shapes = Vec::with_capacity(args.len());
    visit_argument_shapes(module, proc, args, global, &mut |shape| shapes.push(shape))?;
    Ok(shapes)
}

/// Checks what native code cannot check itself before it reads an
/// argument: the number of buffers, each buffer's element type, and that no
/// parameter is an ALLOCATABLE one (whose slot holds a Fortran caller's
/// descriptor). Sizes are not checked here: compiled procedures check each
/// argument's size against its declared shape at entry (a call of compiled
/// code validates its arguments this way on every call; evaluating the
/// shapes here too cost a microsecond-long call a fifth of its time).
pub fn check_argument_buffers(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
) -> Result<(), RuntimeError> {
    checked_proc(module, proc, args.len())?;
    for (i, buffer) in args.iter().enumerate() {
        check_argument_buffer(module, proc, i, buffer)?;
    }
    Ok(())
}

/// [`check_argument_buffers`] for argument lists held apart: an error
/// unless `proc` takes `count` arguments.
pub fn check_argument_count(
    module: &Module,
    proc: ProcId,
    count: usize,
) -> Result<(), RuntimeError> {
    checked_proc(module, proc, count).map(|_| ())
}

/// [`check_argument_buffers`] for argument `index` alone: an error unless
/// `buffer` may be passed for it.
pub fn check_argument_buffer(
    module: &Module,
    proc: ProcId,
    index: usize,
    buffer: &Buffer,
) -> Result<(), RuntimeError> {
    check_argument_type(module, proc, index, buffer.ty())
}

/// [`check_argument_buffer`] for storage of element type `ty` held
/// elsewhere than in a [`Buffer`] (a caller's slice): the check depends on
/// the type alone.
pub fn check_argument_type(
    module: &Module,
    proc: ProcId,
    index: usize,
    ty: crate::ir::Type,
) -> Result<(), RuntimeError> {
    let Some(p) = module.procs.get(proc.index()) else {
        return Err(argument_error(proc, None, format!("no procedure {proc}")));
    };
    let Some(&param) = p.params.get(index) else {
        return Err(argument_error(proc, None, format!("no argument {index}")));
    };
    check_buffer(proc, p, param, ty).map(|_| ())
}

/// The element types of the parameters of `p`, in order, when a host
/// caller may pass buffers for all of them (no ALLOCATABLE parameter):
/// buffers of exactly these types pass [`check_argument_buffers`], so a
/// caller that keeps this list checks a call with one comparison per
/// argument and asks [`check_argument_buffers`] for the error only when one
/// differs. `None` when some parameter cannot be passed from the host (or
/// is not a variable of `p`).
pub fn host_param_types(p: &crate::ir::Proc) -> Option<Box<[crate::ir::Type]>> {
    p.params
        .iter()
        .map(|param| {
            let var = p.vars.get(param.index())?;
            match var.storage {
                Storage::AllocatableParam(_) => None,
                _ => Some(var.ty),
            }
        })
        .collect()
}

/// The procedure `proc` of `module`, when it takes `count` arguments.
fn checked_proc(
    module: &Module,
    proc: ProcId,
    count: usize,
) -> Result<&crate::ir::Proc, RuntimeError> {
    let Some(p) = module.procs.get(proc.index()) else {
        return Err(argument_error(proc, None, format!("no procedure {proc}")));
    };
    if count != p.params.len() {
        return Err(argument_error(
            proc,
            None,
            format!(
                "`{}` takes {} arguments, {} given",
                p.name,
                p.params.len(),
                count
            ),
        ));
    }
    Ok(p)
}

/// The variable of parameter `param` of `p`, when `buffer` may be passed
/// for it: of its element type, and not an ALLOCATABLE parameter.
fn check_buffer(
    proc: ProcId,
    p: &crate::ir::Proc,
    param: VarId,
    ty: crate::ir::Type,
) -> Result<&Var, RuntimeError> {
    let Some(var) = p.vars.get(param.index()) else {
        return Err(argument_error(proc, None, format!("bad parameter {param}")));
    };
    if let Storage::AllocatableParam(_) = var.storage {
        return Err(argument_error(
            proc,
            Some(&var.name),
            format!(
                "`{}` of `{}` is an ALLOCATABLE argument the procedure may allocate: only a Fortran caller can pass it",
                var.name, p.name
            ),
        ));
    }
    if ty != var.ty {
        return Err(argument_error(
            proc,
            Some(&var.name),
            format!(
                "parameter `{}` is {}, the argument buffer holds {}",
                var.name,
                var.ty.name(),
                ty.name()
            ),
        ));
    }
    Ok(var)
}

/// Checks `args` against the parameters of `proc` and hands each
/// parameter's evaluated shape to `shape`, in parameter order.
fn visit_argument_shapes(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    global: &mut dyn FnMut(GlobalId, i64) -> i64,
    shape: &mut dyn FnMut(ArgShape),
) -> Result<(), RuntimeError> {
    let p = checked_proc(module, proc, args.len())?;
    for (&param, buffer) in p.params.iter().zip(args) {
        let var = check_buffer(proc, p, param, buffer.ty())?;
        let mut read = |v: VarId| match p.vars.get(v.index()).map(|v| v.storage) {
            Some(Storage::Param(i)) => args.get(i as usize).map_or(0, first_as_int),
            Some(Storage::Global(g, at)) => global(g, at),
            _ => 0,
        };
        shape(
            eval_var_shape(var, &mut read, Some(buffer.len()))
                .map_err(|e| shape_error(proc, Some(&var.name), e))?,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProcBuilder;
    use crate::ir::{Bound, Dim, Proc, Type};

    fn module() -> (Module, ProcId) {
        let mut module = Module::default();
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let m = b.param("m", Type::I64, Vec::new());
        b.param(
            "a",
            Type::F64,
            vec![
                Dim {
                    lower: Bound::Const(0),
                    upper: Some(Bound::Var(n)),
                },
                ProcBuilder::var_dim(m),
            ],
        );
        b.param(
            "w",
            Type::F32,
            vec![ProcBuilder::const_dim(1, 2), ProcBuilder::assumed_dim()],
        );
        b.param_var(Var {
            name: "s".into(),
            ty: Type::Char,
            dims: vec![ProcBuilder::const_dim(1, 2)],
            char_len: None,
            storage: Storage::Local,
        });
        let id = module.add_proc(proc);
        (module, id)
    }

    #[test]
    fn evaluates_bounds_from_scalar_arguments() {
        let (module, f) = module();
        let args = vec![
            Buffer::I32(vec![2]),
            Buffer::I64(vec![4]),
            Buffer::zeros(Type::F64, 12),
            Buffer::zeros(Type::F32, 7),
            Buffer::Char(b"abcdef".to_vec()),
        ];
        let shapes = resolve_arguments(&module, f, &args).unwrap();
        assert_eq!(
            shapes[2].dims,
            vec![
                DimShape {
                    lower: 0,
                    extent: 3
                },
                DimShape {
                    lower: 1,
                    extent: 4
                }
            ]
        );
        assert_eq!(shapes[2].elements, 12);
        assert_eq!(shapes[3].dims[1].extent, 3, "assumed: 7 / 2");
        assert_eq!(shapes[4].char_len, 3, "assumed length: 6 bytes / 2");
        assert_eq!(shapes[0].elements, 1);
    }

    #[test]
    fn reports_short_buffers_and_wrong_types() {
        let (module, f) = module();
        let mut args = vec![
            Buffer::I32(vec![2]),
            Buffer::I64(vec![4]),
            Buffer::zeros(Type::F64, 11),
            Buffer::zeros(Type::F32, 7),
            Buffer::Char(b"abcdef".to_vec()),
        ];
        let e = resolve_arguments(&module, f, &args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::ArgumentSize);
        assert_eq!(e.var.as_deref(), Some("a"));
        assert_eq!(e.detail, "`a` needs 12 elements, the argument has 11");
        args[2] = Buffer::zeros(Type::F32, 12);
        let e = resolve_arguments(&module, f, &args).unwrap_err();
        assert!(e.detail.contains("is f64, the argument buffer holds f32"));
        let e = resolve_arguments(&module, f, &args[..2]).unwrap_err();
        assert_eq!(e.detail, "`f` takes 5 arguments, 2 given");
        args[0] = Buffer::I32(vec![]);
        let e = resolve_arguments(&module, f, &args).unwrap_err();
        assert_eq!(e.var.as_deref(), Some("n"));
    }

    #[test]
    fn huge_local_shapes_are_errors() {
        let var = Var {
            name: "big".into(),
            ty: Type::F64,
            dims: vec![
                ProcBuilder::const_dim(1, 1 << 40),
                ProcBuilder::const_dim(1, 1 << 40),
            ],
            char_len: None,
            storage: Storage::Local,
        };
        assert!(eval_var_shape(&var, &mut |_| 0, None).is_err());
    }
}
