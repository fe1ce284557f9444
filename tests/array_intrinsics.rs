//! Derivatives of array-valued intrinsics against analytic values, tangent
//! and adjoint both (the corpus programs `array_intrinsics.f90` and
//! `array_reductions_dim.f90` hold them to gfortran's primal results and to
//! the dot-product and finite-difference checks of `tests/derivatives.rs`),
//! and the located errors of the forms that stay out of reach.

mod common;

use adjit::engine::{Args, Engine};

const SOURCE: &str = "
subroutine f(a, x, y, cs, r, nr, w)
  implicit none
  double precision, intent(in) :: a(3, 3), x(3)
  double precision, intent(out) :: y(3), cs(3), r(3), nr(3), w(3, 2)
  y = matmul(a, x) + matmul(x, transpose(a))*2d0
  cs = sum(a*a, dim=1)
  r = cshift(x, 1) + eoshift(x, -1, boundary=5d0)
  nr = norm2(a, dim=2)
  w = reshape(spread(x, 2, 2), [3, 2]) * 3d0
end subroutine f
";

const A: [f64; 9] = [0.5, -1.0, 2.0, 1.5, 0.25, -2.0, 3.0, 1.0, -0.75];
const X: [f64; 3] = [1.0, -2.0, 0.5];

/// Column-major `a(i, j)` (1-based).
fn a(i: usize, j: usize) -> f64 {
    A[(i - 1) + 3 * (j - 1)]
}

fn kronecker(i: usize, j: usize) -> f64 {
    if i == j {
        1.0
    } else {
        0.0
    }
}

/// The Jacobian of `of` with respect to `wrt` at (A, X), tangent and
/// adjoint, compared with `expected` (row-major).
fn check(of: &str, wrt: &str, expected: &[f64]) {
    let engine = Engine::from_source("f.f90", SOURCE).unwrap();
    let f = engine.procedure(None).unwrap();
    let mut args: Args = f.args();
    args.set_array("a", &A).unwrap();
    args.set_array("x", &X).unwrap();
    let bad = common::check::both_modes_against(&engine, None, &args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// y = A x + 2 A x (x^T A^T = (A x)^T): dy/dx = 3 A.
#[test]
fn matmul_and_transpose_have_the_matrix_as_jacobian() {
    let mut expected = Vec::new();
    for i in 1..=3 {
        for j in 1..=3 {
            expected.push(3.0 * a(i, j));
        }
    }
    check("y", "x", &expected);
}

/// dy_i/da_kl = 3 delta_ik x_l.
#[test]
fn matmul_is_linear_in_the_matrix() {
    let mut expected = Vec::new();
    for i in 1..=3 {
        for l in 1..=3 {
            for k in 1..=3 {
                expected.push(3.0 * kronecker(i, k) * X[l - 1]);
            }
        }
    }
    check("y", "a", &expected);
}

/// cs_j = sum_i a_ij^2: dcs_j/da_kl = 2 a_kl delta_jl.
#[test]
fn sum_along_a_dimension_differentiates_per_column() {
    let mut expected = Vec::new();
    for j in 1..=3 {
        for l in 1..=3 {
            for k in 1..=3 {
                expected.push(2.0 * a(k, l) * kronecker(j, l));
            }
        }
    }
    check("cs", "a", &expected);
}

/// nr_i = |a(i, :)|: dnr_i/da_kl = delta_ik a_kl / nr_i.
#[test]
fn norm2_along_a_dimension_differentiates_per_row() {
    let norm = |i: usize| (1..=3).map(|j| a(i, j) * a(i, j)).sum::<f64>().sqrt();
    let mut expected = Vec::new();
    for i in 1..=3 {
        for l in 1..=3 {
            for k in 1..=3 {
                expected.push(kronecker(i, k) * a(k, l) / norm(i));
            }
        }
    }
    check("nr", "a", &expected);
}

/// r = cshift(x, 1) + eoshift(x, -1): r1 = x2 + 5, r2 = x3 + x1,
/// r3 = x1 + x2 (the boundary is constant).
#[test]
fn shifts_move_derivatives_with_the_elements() {
    #[rustfmt::skip]
    let expected = [
        0.0, 1.0, 0.0,
        1.0, 0.0, 1.0,
        1.0, 1.0, 0.0,
    ];
    check("r", "x", &expected);
}

/// w(i, j) = 3 x_i for both columns.
#[test]
fn reshape_of_spread_copies_derivatives() {
    let mut expected = Vec::new();
    for _j in 0..2 {
        for i in 0..3 {
            for k in 0..3 {
                expected.push(3.0 * kronecker(i, k));
            }
        }
    }
    check("w", "x", &expected);
}

/// Forms out of reach give located errors naming the construct.
#[test]
fn unsupported_forms_are_located_errors() {
    let cases = [
        (
            "subroutine g(x, y)\n  double precision :: x(3), y(3)\n  y = cshift(x, [1, 2, 3])\nend subroutine g\n",
            "3:17",
            "`shift=` of `cshift` has rank 1",
        ),
        (
            "subroutine g(m, s, k)\n  double precision :: m(3, 3), s(3)\n  integer :: k, i\n  do i = 1, int(sum(sum(m, dim=k)))\n    m = m - 1\n  end do\nend subroutine g\n",
            "4:32",
            "`dim=` of `sum` that is not a constant",
        ),
        (
            "subroutine g(m, s)\n  double precision :: m(3, 3), s(3)\n  s = sum(m, dim=3)\nend subroutine g\n",
            "3:18",
            "`dim=3` of `sum` is outside 1..2",
        ),
    ];
    for (source, at, message) in cases {
        let err = match Engine::from_source("g.f90", source) {
            Ok(_) => panic!("accepted:\n{source}"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains(&format!("g.f90:{at}")) && err.contains(message),
            "expected `{message}` at {at}, got:\n{err}"
        );
    }
}

/// `y = scaled(x, n, a)` of tests/corpus/array_functions.f90 (a module
/// function returning `a*x**2` as an array): dy_i/dx_j = 2 a x_i delta_ij,
/// dy_i/da = x_i^2, tangent and adjoint.
#[test]
fn an_array_valued_function_has_the_elementwise_derivatives() {
    let path = common::corpus::corpus_dir().join("array_functions.f90");
    let engine = Engine::from_files(&[&path], Default::default()).unwrap();
    let f = engine.procedure(Some("user")).unwrap();
    let mut args = f.args();
    let (x, a) = ([1.0, -2.0, 0.5, 3.0], 1.5);
    args.set_scalar("n", 4.0).unwrap();
    args.set_array("x", &x).unwrap();
    args.set_scalar("a", a).unwrap();
    let mut expected = Vec::new();
    for (i, xi) in x.iter().enumerate() {
        for j in 0..4 {
            expected.push(2.0 * a * xi * kronecker(i, j));
        }
        expected.push(xi * xi);
    }
    let bad = common::check::both_modes_against(
        &engine,
        Some("user"),
        &args,
        "y",
        "x,a",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
