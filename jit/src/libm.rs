//! The native symbols generated code may call: the C math library functions
//! behind the IR's float operations and the runtime helpers. Every symbol is
//! registered with the JIT builder up front so no lookup can fail at link
//! time.
//!
//! It knows symbol names and addresses, not the IR.

use crate::ir::special::Special;
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

/// Whether generated code computes the sine and cosine of one operand with
/// one call to the C library's `sincos` (through two stack slots): where
/// `sincos` gives the bits of `sin` and `cos` (glibc, checked by
/// `glibc_sincos_gives_the_bits_of_sin_and_cos`) on the System V x86-64
/// convention Cranelift follows.
pub const FUSED_SINCOS: bool = cfg!(all(
    target_os = "linux",
    target_env = "gnu",
    target_arch = "x86_64"
));

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn sincos(x: f64, s: *mut f64, c: *mut f64);
}

macro_rules! special_fns {
    ($($f64:ident, $f32:ident => $s:expr;)*) => {
        $(
            #[doc = concat!("`", stringify!($s), "` at a double: the interpreter's function (same bits).")]
            pub extern "C" fn $f64(x: f64) -> f64 {
                $s.f64(x)
            }
            #[doc = concat!("`", stringify!($s), "` at a single: the interpreter's function (same bits).")]
            pub extern "C" fn $f32(x: f32) -> f32 {
                $s.f32(x)
            }
        )*
        /// The symbols of the special-function wrappers.
        fn special_symbols() -> Vec<NativeFn> {
            natives![$($f64, $f32,)* adjit_polygamma, adjit_polygammaf].to_vec()
        }
    };
}

special_fns! {
    adjit_erf, adjit_erff => Special::Erf;
    adjit_erfc, adjit_erfcf => Special::Erfc;
    adjit_gamma, adjit_gammaf => Special::Gamma;
    adjit_log_gamma, adjit_log_gammaf => Special::LogGamma;
    adjit_bessel_j0, adjit_bessel_j0f => Special::BesselJ0;
    adjit_bessel_j1, adjit_bessel_j1f => Special::BesselJ1;
}

/// The polygamma function of order `n` (0..=255) at a double.
pub extern "C" fn adjit_polygamma(n: i32, x: f64) -> f64 {
    Special::Polygamma(n as u8).f64(x)
}

/// The polygamma function of order `n` (0..=255) at a single.
pub extern "C" fn adjit_polygammaf(n: i32, x: f32) -> f32 {
    Special::Polygamma(n as u8).f32(x)
}

/// The native symbols of a special function (double, single precision);
/// the polygamma symbols take the order as a leading `i32`.
pub fn special_symbol(s: Special) -> (&'static str, &'static str) {
    match s {
        Special::Erf => ("adjit_erf", "adjit_erff"),
        Special::Erfc => ("adjit_erfc", "adjit_erfcf"),
        Special::Gamma => ("adjit_gamma", "adjit_gammaf"),
        Special::LogGamma => ("adjit_log_gamma", "adjit_log_gammaf"),
        Special::BesselJ0 => ("adjit_bessel_j0", "adjit_bessel_j0f"),
        Special::BesselJ1 => ("adjit_bessel_j1", "adjit_bessel_j1f"),
        Special::Polygamma(_) => ("adjit_polygamma", "adjit_polygammaf"),
    }
}

/// Every math-library symbol generated code may reference (including the
/// names Cranelift uses for its own floor/ceil/trunc/nearest libcalls).
pub fn math_symbols() -> Vec<NativeFn> {
    let mut v = natives![
        sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, exp, log, log10, pow, fmod,
        floor, ceil, trunc, nearbyint, sinf, cosf, tanf, asinf, acosf, atanf, atan2f, sinhf, coshf,
        tanhf, expf, logf, log10f, powf, fmodf, floorf, ceilf, truncf, nearbyintf,
    ]
    .to_vec();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    v.extend(natives![sincos]);
    v.extend(special_symbols());
    v
}

/// Every runtime helper symbol generated code may reference.
pub fn runtime_symbols() -> Vec<NativeFn> {
    use runtime::*;
    let mut v: Vec<NativeFn> = natives![
        adjit_stack_grow,
        adjit_stack_retreat,
        adjit_stack_reserve,
        adjit_arena_mark,
        adjit_arena_release,
        adjit_arena_alloc,
        adjit_allocate,
        adjit_char_assign,
        adjit_char_compare,
        adjit_char_index,
        adjit_char_search,
        adjit_io_begin_write,
        adjit_io_put,
        adjit_io_put_char,
        adjit_io_end_write,
        adjit_io_read_bracket,
        adjit_io_begin_kept,
        adjit_io_get,
        adjit_io_get_char,
        adjit_io_end_write_to,
        adjit_io_begin_read_from,
        adjit_io_catch_errors,
        adjit_io_join_chars,
        adjit_io_status,
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

#[cfg(test)]
mod tests {
    /// Generated code takes both the sine and the cosine of one operand
    /// from one `sincos` call: its bits must be those of `sin` and `cos`,
    /// which the interpreter calls, at ordinary, large, tiny and special
    /// arguments.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_sincos_gives_the_bits_of_sin_and_cos() {
        let mut xs = vec![
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            1e-8,
            f64::consts::PI,
            1e22,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        // A deterministic spread over many binades, both signs.
        let mut bits: u64 = 0x3ff0_0000_0000_0001;
        for _ in 0..20_000 {
            bits = bits
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = f64::from_bits(bits);
            if x.is_finite() && x.abs() < 1e30 {
                xs.push(x);
            }
        }
        for x in xs {
            let (mut s, mut c) = (0.0, 0.0);
            // SAFETY: glibc's sincos writes one double through each
            // pointer, both of which point at live locals.
            unsafe { super::sincos(x, &mut s, &mut c) };
            // SAFETY: the C math library's sin and cos are pure functions.
            let (s1, c1) = unsafe { (super::sin(x), super::cos(x)) };
            assert_eq!(s.to_bits(), s1.to_bits(), "sin({x:e})");
            assert_eq!(c.to_bits(), c1.to_bits(), "cos({x:e})");
        }
    }

    use std::f64;
}
