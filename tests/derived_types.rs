//! Derived types as numerical modules use them, against analytic
//! derivatives (the corpus programs are also checked against gfortran,
//! and differentiated by tests/derivatives.rs with the dot-product and
//! finite-difference checks): component references taking whole parts of
//! arrays of structures, operator and assignment interfaces.

mod common;

use adjit::engine::Engine;

/// The Jacobian of `of` with respect to `wrt` of `entry` in the corpus
/// program `file` at `(s, t)`, tangent and adjoint, against `expected`
/// (row-major).
fn check(file: &str, entry: &str, (s, t): (f64, f64), of: &str, wrt: &str, expected: &[f64]) {
    let path = common::corpus::corpus_dir().join(file);
    let engine = Engine::from_files(&[&path], Default::default()).unwrap();
    let f = engine.procedure(Some(entry)).unwrap();
    let mut args = f.args();
    args.set_scalar("s", s).unwrap();
    args.set_scalar("t", t).unwrap();
    let bad =
        common::check::both_modes_against(&engine, Some(entry), &args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// tests/corpus/derived_parts.f90: `r1 = sum(a(3)%v)` with
/// `a(3)%v = (3s, t + 3, st - 3)`, and `first = a%v(1)`, the first
/// component of each structure's array: `(s, 2s^2 + t, 3s, 4st)` (the
/// last scaled by `t` through `call scale3(a(4)%v, t)`).
#[test]
fn whole_parts_of_arrays_of_structures_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    check(
        "derived_parts.f90",
        "parts",
        (s, t),
        "r1",
        "s,t",
        &[3.0 + t, 1.0 + s],
    );
    check(
        "derived_parts.f90",
        "parts",
        (s, t),
        "first",
        "s,t",
        &[1.0, 0.0, 4.0 * s, 1.0, 3.0, 0.0, 4.0 * t, 4.0 * s],
    );
}

/// tests/corpus/derived_operators.f90: with `a = (s, t, 1)`, `b = s`
/// (the defined assignment: `(s, 2s, 3s)`), `r = a + b*t - (-a)` and
/// `q = t * (a .cross. b) + r`, `c = q` is
/// `(3t^2 s - ts + 2s, 3ts - 3ts^2 + 2t, 2ts^2 - t^2 s + 2 + 3ts)`;
/// `w` after `r = 2*t` is `(2t, 4t, 6t)`.
#[test]
fn operator_interfaces_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    check(
        "derived_operators.f90",
        "vecops",
        (s, t),
        "c",
        "s,t",
        &[
            3.0 * t * t - t + 2.0,
            6.0 * t * s - s,
            3.0 * t - 6.0 * t * s,
            3.0 * s - 3.0 * s * s + 2.0,
            4.0 * t * s - t * t + 3.0 * t,
            2.0 * s * s - 2.0 * t * s + 3.0 * s,
        ],
    );
    check(
        "derived_operators.f90",
        "vecops",
        (s, t),
        "w",
        "s,t",
        &[0.0, 2.0, 0.0, 4.0, 0.0, 6.0],
    );
}
