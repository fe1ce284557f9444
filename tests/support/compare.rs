//! Running one module through the reference interpreter and through the
//! Cranelift JIT, and comparing what they did.
//!
//! Both sides get their own copy of the same argument buffers. A panic on
//! either side (or a compile error for a verified module) is a failure of
//! its own. After a successful call every argument buffer must agree (floats
//! bit for bit, any NaN matching any NaN), and so must every global
//! (each call starts from the globals' initial values); after an error the kind, the
//! procedure and the span must agree (buffer contents after an error are not
//! part of the contract and are not compared).

use adjit::ir::buffer::Buffer;
use adjit::ir::error::RuntimeError;
use adjit::ir::interp::Interpreter;
use adjit::ir::{GlobalId, Module, ProcId};
use adjit::jit::codegen::{CompiledModule, JitOptions, Tiering};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What one side did with one call: the status and the buffers afterwards.
#[derive(Clone, Debug)]
pub struct Run {
    /// `Ok` or the runtime error.
    pub status: Result<(), RuntimeError>,
    /// The argument buffers after the call.
    pub args: Vec<Buffer>,
    /// The contents of every global after the call.
    pub globals: Vec<Buffer>,
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Runs `entry` in a fresh interpreter; `Err` is a panic message.
pub fn run_interpreter(module: &Module, entry: ProcId, args: &[Buffer]) -> Result<Run, String> {
    run_interpreter_with(module, entry, args, true)
}

/// [`run_interpreter`] with subscript checks on or off.
pub fn run_interpreter_with(
    module: &Module,
    entry: ProcId,
    args: &[Buffer],
    bounds_checks: bool,
) -> Result<Run, String> {
    let mut args = args.to_vec();
    catch_unwind(AssertUnwindSafe(|| {
        let mut interpreter = Interpreter::new(module);
        interpreter.set_bounds_checks(bounds_checks);
        let status = interpreter.call(entry, &mut args);
        let globals = (0..module.globals.len())
            .map(|g| {
                interpreter
                    .global(GlobalId(g as u32))
                    .cloned()
                    .unwrap_or(Buffer::F64(vec![]))
            })
            .collect();
        Run {
            status,
            args: args.clone(),
            globals,
        }
    }))
    .map_err(|p| format!("interpreter panicked: {}", panic_message(p)))
}

/// Compiles a module; `Err` describes a compile error or a panic.
pub fn compile(module: &Module) -> Result<Compiled, String> {
    compile_with(module, true)
}

/// [`compile`] with subscript checks on or off.
pub fn compile_with(module: &Module, bounds_checks: bool) -> Result<Compiled, String> {
    compile_at(module, bounds_checks, Tiering::Optimized)
}

/// [`compile_with`] under `tiering` (the baseline tier, or the optimized
/// code).
pub fn compile_at(
    module: &Module,
    bounds_checks: bool,
    tiering: Tiering,
) -> Result<Compiled, String> {
    let options = JitOptions {
        bounds_checks,
        tiering,
        ..JitOptions::default()
    };
    match catch_unwind(|| CompiledModule::compile(module, &options)) {
        Ok(Ok(compiled)) => Ok(Compiled {
            bounds_checks,
            initial_globals: jit_globals(&compiled),
            module: compiled,
        }),
        Ok(Err(e)) => Err(format!("JIT compile error: {e}")),
        Err(p) => Err(format!("JIT compile panicked: {}", panic_message(p))),
    }
}

/// A compiled module and the initial contents of its globals (restored
/// before every call, so each call starts like a fresh interpreter).
pub struct Compiled {
    /// The native code.
    pub module: CompiledModule,
    /// Whether subscripts are checked (the interpreter is run the same way).
    pub bounds_checks: bool,
    initial_globals: Vec<Buffer>,
}

fn jit_globals(compiled: &CompiledModule) -> Vec<Buffer> {
    (0..compiled.module().globals.len())
        .map(|g| {
            compiled
                .global(GlobalId(g as u32))
                .unwrap_or(Buffer::F64(vec![]))
        })
        .collect()
}

/// Calls `entry` of compiled code with a fresh runtime and freshly
/// initialised globals; `Err` is a panic message or a failure to reset the
/// globals.
pub fn run_jit(compiled: &Compiled, entry: ProcId, args: &[Buffer]) -> Result<Run, String> {
    for (g, initial) in compiled.initial_globals.iter().enumerate() {
        compiled
            .module
            .set_global(GlobalId(g as u32), initial)
            .map_err(|e| format!("cannot reset global {g}: {e}"))?;
    }
    let mut args = args.to_vec();
    catch_unwind(AssertUnwindSafe(|| {
        let status = compiled.module.call(entry, &mut args);
        Run {
            status,
            args: args.clone(),
            globals: jit_globals(&compiled.module),
        }
    }))
    .map_err(|p| format!("JIT call panicked: {}", panic_message(p)))
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The first element where two buffers differ, as a message.
pub fn buffer_difference(a: &Buffer, b: &Buffer) -> Option<String> {
    if a.ty() != b.ty() || a.len() != b.len() {
        return Some(format!("shapes differ: {a:?} vs {b:?}"));
    }
    let first = |n: usize, same: &dyn Fn(usize) -> bool| (0..n).find(|&i| !same(i));
    let at = match (a, b) {
        (Buffer::F64(x), Buffer::F64(y)) => first(x.len(), &|i| same_f64(x[i], y[i])),
        (Buffer::F32(x), Buffer::F32(y)) => first(x.len(), &|i| same_f32(x[i], y[i])),
        _ => (a != b).then(|| first(a.len(), &|i| a.get_f64(i) == b.get_f64(i)).unwrap_or(0)),
    }?;
    let show = |buffer: &Buffer| match buffer {
        Buffer::F64(v) => format!("{:e} (bits {:#018x})", v[at], v[at].to_bits()),
        Buffer::F32(v) => format!("{:e} (bits {:#010x})", v[at], v[at].to_bits()),
        Buffer::I32(v) => v[at].to_string(),
        Buffer::I64(v) => v[at].to_string(),
        Buffer::Bool(v) | Buffer::Char(v) => v[at].to_string(),
    };
    Some(format!(
        "element {at}: interpreter {}, JIT {}",
        show(a),
        show(b)
    ))
}

/// How the two runs disagree, or `None` when they agree. The message
/// starts with a category word (`status`, `buffer`) used by the reducer to
/// keep the same kind of disagreement.
pub fn difference(interp: &Run, jit: &Run, module: &Module, entry: ProcId) -> Option<String> {
    match (&interp.status, &jit.status) {
        (Ok(()), Ok(())) => {
            let params = &module.proc(entry).params;
            let args = interp
                .args
                .iter()
                .zip(&jit.args)
                .enumerate()
                .find_map(|(i, (a, b))| {
                    buffer_difference(a, b).map(|d| {
                        let name = params
                            .get(i)
                            .map_or("?".to_string(), |&p| module.proc(entry).var(p).name.clone());
                        format!("buffer: argument {i} `{name}`, {d}")
                    })
                });
            args.or_else(|| {
                interp
                    .globals
                    .iter()
                    .zip(&jit.globals)
                    .enumerate()
                    .find_map(|(g, (a, b))| {
                        buffer_difference(a, b).map(|d| {
                            format!("buffer: global {g} `{}`, {d}", module.globals[g].name)
                        })
                    })
            })
        }
        (Err(a), Err(b)) if a.kind == b.kind && a.proc == b.proc && a.span == b.span => None,
        (a, b) => Some(format!(
            "status: interpreter {}, JIT {}",
            show_status(a),
            show_status(b)
        )),
    }
}

/// A status with the error's kind, procedure, span and message.
pub fn show_status(status: &Result<(), RuntimeError>) -> String {
    match status {
        Ok(()) => "Ok".into(),
        Err(e) => format!(
            "Err({:?} in {} at line {} col {}: {e})",
            e.kind, e.proc, e.span.line, e.span.col
        ),
    }
}

/// Runs both sides on one input and describes any disagreement (including
/// panics and compile errors).
pub fn check_once(
    module: &Module,
    compiled: &Compiled,
    entry: ProcId,
    args: &[Buffer],
) -> Result<Run, String> {
    let interp = run_interpreter_with(module, entry, args, compiled.bounds_checks)?;
    let jit = run_jit(compiled, entry, args)?;
    match difference(&interp, &jit, module, entry) {
        None => Ok(interp),
        Some(d) => Err(d),
    }
}

/// [`check_once`] that compiles first.
pub fn check_module(module: &Module, entry: ProcId, args: &[Buffer]) -> Result<Run, String> {
    let compiled = compile(module)?;
    check_once(module, &compiled, entry, args)
}
