//! The native symbols generated code may call: the C math library functions
//! behind the IR's float operations and the runtime helpers. Every symbol is
//! registered with the JIT builder up front so no lookup can fail at link
//! time.
//!
//! It knows symbol names and addresses, not the IR.

use crate::runtime;

extern "C" {
    fn sin(x: f64) -> f64;
    fn cos(x: f64) -> f64;
    fn tan(x: f64) -> f64;
    fn asin(x: f64) -> f64;
    fn acos(x: f64) -> f64;
    fn atan(x: f64) -> f64;
    fn atan2(y: f64, x: f64) -> f64;
    fn sinh(x: f64) -> f64;
    fn cosh(x: f64) -> f64;
    fn tanh(x: f64) -> f64;
    fn exp(x: f64) -> f64;
    fn log(x: f64) -> f64;
    fn log10(x: f64) -> f64;
    fn pow(x: f64, y: f64) -> f64;
    fn fmod(x: f64, y: f64) -> f64;
    fn floor(x: f64) -> f64;
    fn ceil(x: f64) -> f64;
    fn trunc(x: f64) -> f64;
    fn nearbyint(x: f64) -> f64;
    fn sinf(x: f32) -> f32;
    fn cosf(x: f32) -> f32;
    fn tanf(x: f32) -> f32;
    fn asinf(x: f32) -> f32;
    fn acosf(x: f32) -> f32;
    fn atanf(x: f32) -> f32;
    fn atan2f(y: f32, x: f32) -> f32;
    fn sinhf(x: f32) -> f32;
    fn coshf(x: f32) -> f32;
    fn tanhf(x: f32) -> f32;
    fn expf(x: f32) -> f32;
    fn logf(x: f32) -> f32;
    fn log10f(x: f32) -> f32;
    fn powf(x: f32, y: f32) -> f32;
    fn fmodf(x: f32, y: f32) -> f32;
    fn floorf(x: f32) -> f32;
    fn ceilf(x: f32) -> f32;
    fn truncf(x: f32) -> f32;
    fn nearbyintf(x: f32) -> f32;
}

/// A native function generated code may call: its symbol name, address and
/// signature shape.
#[derive(Clone, Copy, Debug)]
pub struct NativeFn {
    /// Symbol name registered with the JIT.
    pub name: &'static str,
    /// Address of the function.
    pub addr: *const u8,
}

macro_rules! natives {
    ($($name:ident),* $(,)?) => {
        [$(NativeFn { name: stringify!($name), addr: $name as *const u8 }),*]
    };
}

/// Every math-library symbol generated code may reference (including the
/// names Cranelift uses for its own floor/ceil/trunc/nearest libcalls).
pub fn math_symbols() -> Vec<NativeFn> {
    natives![
        sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, exp, log, log10, pow, fmod,
        floor, ceil, trunc, nearbyint, sinf, cosf, tanf, asinf, acosf, atanf, atan2f, sinhf, coshf,
        tanhf, expf, logf, log10f, powf, fmodf, floorf, ceilf, truncf, nearbyintf,
    ]
    .to_vec()
}

/// Every runtime helper symbol generated code may reference.
pub fn runtime_symbols() -> Vec<NativeFn> {
    use runtime::*;
    let mut v: Vec<NativeFn> = natives![
        adjit_stack_grow,
        adjit_stack_retreat,
        adjit_arena_mark,
        adjit_arena_release,
        adjit_arena_alloc,
        adjit_char_assign,
        adjit_char_compare,
        adjit_char_index,
        adjit_io_begin_write,
        adjit_io_put,
        adjit_io_put_char,
        adjit_io_end_write,
        adjit_io_read_bracket,
        adjit_io_get,
        adjit_io_get_char,
        adjit_ipow_i64,
        adjit_ipow_i32,
        adjit_powi_f64,
        adjit_powi_f32,
    ]
    .to_vec();
    v.push(NativeFn {
        name: "memset",
        addr: libc::memset as *const u8,
    });
    v.push(NativeFn {
        name: "memcpy",
        addr: libc::memcpy as *const u8,
    });
    v.push(NativeFn {
        name: "memmove",
        addr: libc::memmove as *const u8,
    });
    v
}
