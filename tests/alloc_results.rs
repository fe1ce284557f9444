//! Functions returning ALLOCATABLE arrays (`real(8), allocatable :: r(:)`),
//! sized inside the function: the gradient through tangent and adjoint on
//! both executors against the closed form, finite differences and the
//! dot-product identity (a function called twice with results of
//! different sizes in one statement, and in a loop); the runtime errors of
//! a result referenced before its allocation or never allocated, located;
//! the compile-time errors of the forms left out, located.

mod common;

use adjit::engine::{Args, Backend, Engine, ErrorKind};
use common::check::{both_modes_against, three_ways, Rng};

/// A module of vector utilities whose results are ALLOCATABLE (sized by
/// ALLOCATE, by a reallocating assignment, grown with `r = [r, v]`, a
/// section of an argument), an internal function of `f`, and an external
/// function seen through an interface block; `f` references them in
/// assignments, SUM, DOT_PRODUCT, SIZE and as actual arguments.
///
/// y = sum 3 x^2 + sum_{i<n} 2 x_i^2 + sum_{i even} x_i^2
///   + sum_{k=1}^{3} sum_{i>=k} k x_i^2 + sum_{i odd} x_i^3
///   + sum (x_i + 1)^2 + 0.5 * sum_i 4 x_i^2 + size(evens(x)).
const SOURCE: &str = "
module vec_results
  implicit none
contains
  function scaled(x, a) result(r)
    real(8), intent(in) :: x(:), a
    real(8), allocatable :: r(:)
    r = a * x**2
  end function scaled

  function evens(x) result(r)
    real(8), intent(in) :: x(:)
    real(8), allocatable :: r(:)
    allocate(r(size(x) / 2))
    r = x(2::2)
  end function evens

  function odd_cubes(x) result(r)
    real(8), intent(in) :: x(:)
    real(8), allocatable :: r(:)
    integer :: i
    allocate(r(0))
    do i = 1, size(x), 2
      r = [r, x(i)**3]
    end do
  end function odd_cubes

  real(8) function half_sum(v)
    real(8), intent(in) :: v(:)
    half_sum = 0.5d0 * sum(v)
  end function half_sum
end module vec_results

function shifted(x) result(r)
  real(8), intent(in) :: x(:)
  real(8), allocatable :: r(:)
  r = x + 1
end function shifted

subroutine f(n, x, y)
  use vec_results
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y
  real(8), allocatable :: t(:)
  integer :: k
  interface
    function shifted(x) result(r)
      real(8), intent(in) :: x(:)
      real(8), allocatable :: r(:)
    end function shifted
  end interface
  t = scaled(x, 3d0)
  y = sum(t) + sum(scaled(x(1:n - 1), 2d0))
  y = y + dot_product(evens(x), evens(x))
  do k = 1, 3
    y = y + sum(scaled(x(k:n), dble(k)))
  end do
  y = y + sum(odd_cubes(x))
  t = shifted(x)
  y = y + dot_product(t, t) + half_sum(doubled(x)) + size(evens(x))
contains
  function doubled(v) result(r)
    real(8), intent(in) :: v(:)
    real(8), allocatable :: r(:)
    allocate(r(size(v)))
    r = 4 * v * v
  end function doubled
end subroutine f
";

/// The closed-form gradient of [`SOURCE`] at `x`.
fn expected_gradient(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    x.iter()
        .enumerate()
        .map(|(i, &t)| {
            let at = i + 1; // the Fortran index
            let mut g = 6.0 * t; // sum(scaled(x, 3))
            if at < n {
                g += 4.0 * t; // sum(scaled(x(1:n-1), 2))
            }
            if at % 2 == 0 {
                g += 2.0 * t; // dot_product(evens(x), evens(x))
            }
            for k in 1..=3usize.min(at) {
                g += 2.0 * k as f64 * t; // sum(scaled(x(k:n), k))
            }
            if at % 2 == 1 {
                g += 3.0 * t * t; // sum(odd_cubes(x))
            }
            g + 2.0 * (t + 1.0) + 4.0 * t // shifted, half_sum(doubled)
        })
        .collect()
}

/// The value of [`SOURCE`] at `x`.
fn expected_value(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y = 0.0;
    for (i, &t) in x.iter().enumerate() {
        let at = i + 1;
        y += 3.0 * t * t + (t + 1.0) * (t + 1.0) + 2.0 * t * t;
        if at < n {
            y += 2.0 * t * t;
        }
        if at % 2 == 0 {
            y += t * t;
        }
        for k in 1..=3usize.min(at) {
            y += k as f64 * t * t;
        }
        if at % 2 == 1 {
            y += t * t * t;
        }
    }
    y + (n / 2) as f64
}

fn engine(backend: Backend) -> Engine {
    common::engine_on(backend, "results.f90", SOURCE)
}

fn point(engine: &Engine, x: &[f64]) -> Args {
    let f = engine.procedure(Some("f")).unwrap();
    let mut args = f.args();
    args.set_scalar("n", x.len() as f64).unwrap();
    args.set_array("x", x).unwrap();
    args
}

#[test]
fn allocatable_results_give_the_closed_form_value_and_gradient() {
    let mut rng = Rng(0xa110_cf0e);
    let mut bad = Vec::new();
    for n in [5, 6] {
        let x = rng.vec(n);
        for backend in [Backend::Jit, Backend::Interpreter] {
            let e = engine(backend);
            let mut args = point(&e, &x);
            e.procedure(Some("f")).unwrap().call(&mut args).unwrap();
            let y = args.scalar("y").unwrap();
            let want = expected_value(&x);
            if (y - want).abs() > 1e-12 * want.abs().max(1.0) {
                bad.push(format!("value (n={n}, {backend:?}): {y} vs {want}"));
            }
            for problem in both_modes_against(
                &e,
                Some("f"),
                &args,
                "y",
                "x",
                &expected_gradient(&x),
                1e-12,
            ) {
                bad.push(format!("n={n}, {backend:?}: {problem}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn tangent_adjoint_and_finite_differences_agree() {
    let mut rng = Rng(0x5eed_f00d);
    let x = rng.vec(7);
    let mut bad = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = engine(backend);
        let args = point(&e, &x);
        let (_, problems) = three_ways(&e, Some("f"), &args, "y", "x", 1e-6);
        bad.extend(problems.into_iter().map(|p| format!("{backend:?}: {p}")));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A result referenced inside the function before it is allocated, and a
/// function that returns without allocating its result, are the runtime
/// error of an unallocated array (not a STOP) located at the reference, on
/// both executors.
#[test]
fn unallocated_results_are_located_runtime_errors() {
    let source = "module m
contains
  function pick(n, k) result(r)
    integer, intent(in) :: n, k
    real(8), allocatable :: r(:)
    if (k == 1) r(1) = 1
    if (k == 2) return
    allocate(r(n))
    r = 1.5d0
  end function pick
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  real(8), intent(out) :: s
  s = sum(pick(n, k))
end subroutine f
";
    common::each_backend_calls(source, |backend, call| {
        for (k, at, what) in [
            (1.0, "e.f90:6:", "`r` is not allocated"),
            // The error of any unallocated array, naming the reference.
            (2.0, "e.f90:16:", "`pick()` is not allocated"),
        ] {
            let err = call(3.0, k).expect_err("runtime error");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(
                err.message.contains(at)
                    && err.message.contains(what)
                    && err.message.contains("array not allocated"),
                "{backend:?} k={k}: {err}"
            );
        }
        assert_eq!(call(3.0, 3.0).unwrap(), 4.5);
    });
}

/// ALLOCATABLE array results that are not numeric or LOGICAL arrays of
/// deferred shape are located compile-time errors.
#[test]
fn unsupported_allocatable_results_are_located() {
    let result = |decl: &str| {
        format!(
            "function g(x) result(r)
  real(8), intent(in) :: x
  {decl}
  r = x
end function g
"
        )
    };
    common::assert_compile_errors(
        "e.f90",
        &[
            (
                result("real(8), allocatable :: r(3)"),
                "e.f90:3:",
                "ALLOCATABLE function result `r` that is not a numeric or LOGICAL array of deferred shape",
            ),
            (
                result("character(len=4), allocatable :: r(:)"),
                "e.f90:3:",
                "ALLOCATABLE function result `r` that is not a numeric or LOGICAL array of deferred shape",
            ),
        ],
    );
}
