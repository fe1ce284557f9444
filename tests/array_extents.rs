//! Arrays sized by the extent of a rank-1 assumed-shape dummy
//! (`y(size(x))` results, automatic locals `w(size(x))`) and array-valued
//! functions in IF conditions, against analytic derivatives, tangent and
//! adjoint both. The corpus programs `array_result_extent.f90` and
//! `array_function_cond.f90` hold the same forms to gfortran's primal
//! results (and PRINT output) and to the dot-product and finite-difference
//! checks of `tests/derivatives.rs`.

mod common;

use adjit::engine::{Args, Engine, ErrorKind};

const SOURCE: &str = "
module aext
  implicit none
contains
  ! y(i) = i x(i)**2 + sin(x(i))
  function scaled(x) result(y)
    double precision, intent(in) :: x(:)
    double precision :: y(size(x))
    integer :: i
    do i = 1, size(x)
      y(i) = x(i)**2 * i + sin(x(i))
    end do
  end function scaled
  ! s = sum x**2 + x(n) + (x(1)**3 + x(n) x(1)) x(2)**3 / 2 + 2 n + 1
  subroutine smooth(x, s)
    double precision, intent(in) :: x(:)
    double precision, intent(out) :: s
    double precision :: w(size(x)), w2(2*size(x) + 1)
    w = x*x
    w(1) = w(1) + x(size(x))
    w2 = 0.5d0
    w2(2:size(x) + 1) = w*x
    s = sum(w) + product(w2(1:3)) + size(w2)
  end subroutine smooth
end module aext

subroutine g(x, y, s)
  use aext
  implicit none
  double precision, intent(in) :: x(4)
  double precision, intent(out) :: y(4), s(2)
  y = scaled(x)
  s(1) = sum(scaled(x(2:4)))
  call smooth(x, s(2))
end subroutine g
";

const X: [f64; 4] = [0.5, -1.25, 2.0, 0.75];

fn engine() -> Engine {
    Engine::from_source("g.f90", SOURCE).unwrap()
}

fn compare(engine: &Engine, of: &str, expected: &[f64]) {
    let g = engine.procedure(Some("g")).unwrap();
    let mut args: Args = g.args();
    args.set_array("x", &X).unwrap();
    let bad = common::check::both_modes_against(engine, Some("g"), &args, of, "x", expected, 1e-13);
    assert!(bad.is_empty(), "{of}:\n{}", bad.join("\n"));
}

/// The primal values: the result and the automatic locals have the
/// actual's extent (`size(w2)` = 9 for four elements).
#[test]
fn results_and_locals_take_the_extent_of_the_actual() {
    let engine = engine();
    let g = engine.procedure(Some("g")).unwrap();
    let mut args: Args = g.args();
    args.set_array("x", &X).unwrap();
    g.call(&mut args).unwrap();
    let y = args.f64s("y").unwrap();
    for (i, (yi, xi)) in y.iter().zip(X).enumerate() {
        let want = xi * xi * (i + 1) as f64 + xi.sin();
        assert!((yi - want).abs() < 1e-14, "y({}) = {yi}, not {want}", i + 1);
    }
    let s = args.f64s("s").unwrap();
    let s1: f64 = (1..4).map(|i| X[i] * X[i] * i as f64 + X[i].sin()).sum();
    assert!((s[0] - s1).abs() < 1e-13, "s(1) = {}, not {s1}", s[0]);
    let (x1, x2, xn) = (X[0], X[1], X[3]);
    let s2 =
        X.iter().map(|v| v * v).sum::<f64>() + xn + 0.5 * (x1.powi(3) + xn * x1) * x2.powi(3) + 9.0;
    assert!((s[1] - s2).abs() < 1e-13, "s(2) = {}, not {s2}", s[1]);
}

/// dy_i/dx_j = [i = j] (2 i x_i + cos x_i); ds1/dx_j = [j > 1]
/// (2 (j - 1) x_j + cos x_j) (the callee numbers the section from 1).
#[test]
fn a_result_sized_by_an_assumed_shape_extent_differentiates() {
    let engine = engine();
    let mut dy = Vec::new();
    for i in 0..4 {
        for (j, xj) in X.iter().enumerate() {
            dy.push(if i == j {
                2.0 * (i + 1) as f64 * xj + xj.cos()
            } else {
                0.0
            });
        }
    }
    compare(&engine, "y", &dy);
    let ds1: Vec<f64> = X
        .iter()
        .enumerate()
        .map(|(j, xj)| {
            if j == 0 {
                0.0
            } else {
                2.0 * j as f64 * xj + xj.cos()
            }
        })
        .collect();
    compare(&engine, "s(1)", &ds1);
}

/// The derivative of `smooth` through its automatic locals, analytic.
#[test]
fn automatic_locals_sized_by_an_assumed_shape_extent_differentiate() {
    let engine = engine();
    let (x1, x2, xn) = (X[0], X[1], X[3]);
    let expected = [
        2.0 * x1 + 0.5 * (3.0 * x1 * x1 + xn) * x2.powi(3),
        2.0 * x2 + 0.5 * (x1.powi(3) + xn * x1) * 3.0 * x2 * x2,
        2.0 * X[2],
        2.0 * xn + 1.0 + 0.5 * x1 * x2.powi(3),
    ];
    compare(&engine, "s(2)", &expected);
}

/// Called as the entry, the function's result takes its extent like an
/// assumed-size array (`--extent y=N`).
#[test]
fn the_function_called_directly_takes_the_result_extent() {
    let engine = engine();
    let f = engine.procedure(Some("scaled")).unwrap();
    let mut args: Args = f.args();
    args.set_array("x", &X[..3]).unwrap();
    args.set_extent("y", 3).unwrap();
    f.call(&mut args).unwrap();
    let y = args.f64s("y").unwrap();
    assert_eq!(y.len(), 3);
    assert!((y[2] - (3.0 * X[2] * X[2] + X[2].sin())).abs() < 1e-14);
}

/// The extent of an assumed-shape dummy in a dimension other than the
/// last of the result is a located error naming the result.
#[test]
fn the_extent_outside_the_last_dimension_is_a_located_error() {
    let src = "module m
contains
  function f(x) result(y)
    double precision, intent(in) :: x(:)
    double precision :: y(size(x), 2)
    y = 1
  end function f
end module m
";
    let e = match Engine::from_source("m.f90", src) {
        Err(e) => e,
        Ok(_) => panic!("must be rejected"),
    };
    assert_eq!(e.kind, ErrorKind::Compile);
    assert!(e.message.contains("m.f90:5:"), "{}", e.message);
    assert!(e.message.contains("`y`"), "{}", e.message);
}

/// `drive` of `array_function_cond.f90`, whose branches are chosen by
/// array-valued functions in IF conditions: the Jacobian of `s` at `x` in
/// the branch taken, analytic (row-major, `s(1)`, `s(2)`, `s(3)`).
fn condition_jacobian(x: &[f64], expected: &[f64]) {
    let source = include_str!("corpus/array_function_cond.f90");
    let engine = Engine::from_source("array_function_cond.f90", source).unwrap();
    let f = engine.procedure(Some("drive")).unwrap();
    let mut args: Args = f.args();
    args.set_scalar("n", x.len() as f64).unwrap();
    args.set_array("x", x).unwrap();
    let bad =
        common::check::both_modes_against(&engine, Some("drive"), &args, "s", "x", expected, 1e-13);
    assert!(bad.is_empty(), "x = {x:?}:\n{}", bad.join("\n"));
}

/// x = (1, 2, 3): `any(sq(x) > 3)` holds, s1 = sum x^2; s2 = (x3^2 - 1)
/// x1; only k = 1 passes the test in the loop, s3 = x1.
#[test]
fn array_functions_in_if_conditions_choose_the_branch_differentiated() {
    condition_jacobian(
        &[1.0, 2.0, 3.0],
        &[2.0, 4.0, 6.0, 8.0, 0.0, 6.0, 1.0, 0.0, 0.0],
    );
    // x = (0.5, 1, 1.5): the ELSE IF arm, s1 = sum x + x3^2 - 1; s2 =
    // (x3^2 - 1) x1; every k passes, s3 = x1 + 2 x2 + 3 x3.
    condition_jacobian(
        &[0.5, 1.0, 1.5],
        &[1.0, 1.0, 4.0, 1.25, 0.0, 1.5, 1.0, 2.0, 3.0],
    );
}
