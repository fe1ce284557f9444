//! Array arguments: sections (contiguous, strided, with a gap, rank 2) and
//! expressions of sections given to assumed-shape dummies, against analytic
//! derivatives, tangent and adjoint both. The corpus program
//! `section_arguments.f90` holds the same forms to gfortran's primal
//! results and to the dot-product and finite-difference checks of
//! `tests/derivatives.rs`.

mod common;

use adjit::engine::{Args, Engine};

const SECTIONS: &str = "
module ops
  implicit none
contains
  ! v(i) = i v(i); s = sum v(i)**2 + size(v)
  subroutine scale(v, s)
    double precision, intent(inout) :: v(:)
    double precision, intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(v)
      v(i) = v(i)*i
      s = s + v(i)**2
    end do
    s = s + size(v)
  end subroutine scale
  ! s = sum m(i, j) (i + 10 j) + 100 ubound(m, 1) + 1000 ubound(m, 2)
  subroutine weigh(m, s)
    double precision, intent(in) :: m(:, :)
    double precision, intent(out) :: s
    integer :: i, j
    s = 0
    do j = 1, size(m, 2)
      do i = 1, size(m, 1)
        s = s + m(i, j)*(i + 10*j)
      end do
    end do
    s = s + 100*ubound(m, 1) + 1000*ubound(m, 2)
  end subroutine weigh
  ! sum i v(i)**2 + size(v)/2
  double precision function wsum(v)
    double precision, intent(in) :: v(:)
    integer :: i
    wsum = 0
    do i = 1, size(v)
      wsum = wsum + i*v(i)**2
    end do
    wsum = wsum + 0.5d0*size(v)
  end function wsum
end module ops

subroutine f(a, b, m, s)
  use ops
  implicit none
  double precision, intent(inout) :: a(5), b(5), m(4, 3)
  double precision, intent(out) :: s(5)
  call scale(a(2:5), s(1))
  call scale(m(2, :), s(2))
  call weigh(m(2:3, 2:3), s(3))
  s(4) = wsum(3*b(1:5:2))
  s(5) = wsum(b(4:1:-2) * m(1, 2:3))
end subroutine f
";

const A: [f64; 5] = [0.5, -1.0, 2.0, 1.5, -0.25];
const B: [f64; 5] = [1.25, -0.5, 0.75, 2.0, -1.5];
const M: [f64; 12] = [
    0.5, -1.0, 2.0, 1.5, 0.25, -2.0, 3.0, 1.0, -0.75, 1.25, 0.5, -1.5,
];

/// Column-major `m(i, j)` (1-based) of the input.
fn m(i: usize, j: usize) -> f64 {
    M[(i - 1) + 4 * (j - 1)]
}

/// The Jacobian of `of` with respect to `wrt` at (A, B, M), tangent and
/// adjoint, compared with `expected` (row-major).
fn check(of: &str, wrt: &str, expected: &[f64]) {
    let engine = Engine::from_source("f.f90", SECTIONS).unwrap();
    let f = engine.procedure(Some("f")).unwrap();
    let mut args: Args = f.args();
    args.set_array("a", &A).unwrap();
    args.set_array("b", &B).unwrap();
    args.set_array("m", &M).unwrap();
    let bad =
        common::check::both_modes_against(&engine, Some("f"), &args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The primal results: the callee sees the sections' extents (SIZE,
/// UBOUND) and its writes come back to the sections.
#[test]
fn callees_see_the_extents_of_sections() {
    let engine = Engine::from_source("f.f90", SECTIONS).unwrap();
    let f = engine.procedure(Some("f")).unwrap();
    let mut args: Args = f.args();
    args.set_array("a", &A).unwrap();
    args.set_array("b", &B).unwrap();
    args.set_array("m", &M).unwrap();
    f.call(&mut args).unwrap();
    let s = args.f64s("s").unwrap();
    let s1: f64 = (1..=4).map(|i| (i as f64 * A[i]).powi(2)).sum::<f64>() + 4.0;
    let s2: f64 = (1..=3).map(|j| (j as f64 * m(2, j)).powi(2)).sum::<f64>() + 3.0;
    // m(2, 2:3) were scaled by 2 and 3 in the call before.
    let m2 = |i: usize, j: usize| if i == 2 { m(i, j) * j as f64 } else { m(i, j) };
    let mut s3 = 200.0 + 2000.0;
    for j in 1..=2 {
        for i in 1..=2 {
            s3 += m2(i + 1, j + 1) * (i + 10 * j) as f64;
        }
    }
    let s4: f64 = (1..=3)
        .map(|i| i as f64 * (3.0 * B[2 * i - 2]).powi(2))
        .sum::<f64>()
        + 1.5;
    let s5 = (B[3] * m(1, 2)).powi(2) + 2.0 * (B[1] * m(1, 3)).powi(2) + 1.0;
    for (k, (got, want)) in s.iter().zip([s1, s2, s3, s4, s5]).enumerate() {
        assert!(
            common::check::within(*got, want, 1e-13),
            "s({}) = {got}, expected {want}",
            k + 1
        );
    }
    let a = args.f64s("a").unwrap();
    for (k, (got, want)) in a.iter().zip(&A).enumerate() {
        let factor = k.max(1) as f64;
        assert!(
            common::check::within(*got, want * factor, 1e-15),
            "a({})",
            k + 1
        );
    }
}

/// s1 = sum_{i=1..4} i^2 a(i+1)^2 + 4: ds1/da(k) = 2 (k-1)^2 a(k) (k >= 2);
/// the section's elements come back scaled: da(k)/da(k) = k - 1.
#[test]
fn a_contiguous_section_differentiates_through_the_callee() {
    let mut expected = vec![0.0];
    expected.extend((2..=5).map(|k| 2.0 * ((k - 1) * (k - 1)) as f64 * A[k - 1]));
    check("s(1)", "a", &expected);
    let mut jac = Vec::new();
    for r in 1..=5 {
        for k in 1..=5 {
            jac.push(if r != k { 0.0 } else { (k - 1).max(1) as f64 });
        }
    }
    check("a", "a", &jac);
}

/// s2 = sum_j j^2 m(2, j)^2 + 3 (a row: a section with a gap);
/// s3 = sum m'(i+1, j+1) (i + 10 j) + 2200 with m'(2, j) = j m(2, j) after
/// the first call (copy-out carries the derivative).
#[test]
fn row_and_rank_2_sections_differentiate() {
    let mut s2 = vec![0.0; 12];
    let mut s3 = vec![0.0; 12];
    for j in 1..=3 {
        s2[1 + 4 * (j - 1)] = 2.0 * (j * j) as f64 * m(2, j);
    }
    for j in 1..=2 {
        for i in 1..=2 {
            let scale = if i == 1 { (j + 1) as f64 } else { 1.0 };
            s3[i + 4 * j] = (i + 10 * j) as f64 * scale;
        }
    }
    check("s(2)", "m", &s2);
    check("s(3)", "m", &s3);
}

/// s4 = sum_{i=1..3} 9 i b(2i-1)^2 + 1.5 (an expression of a strided
/// section); s5 = (b4 m(1,2))^2 + 2 (b2 m(1,3))^2 + 1 (a product of a
/// reversed strided section and a row).
#[test]
fn expressions_of_strided_sections_differentiate() {
    let mut s4 = vec![0.0; 5];
    for i in 1..=3 {
        s4[2 * i - 2] = 18.0 * i as f64 * B[2 * i - 2];
    }
    check("s(4)", "b", &s4);
    let mut s5 = vec![0.0; 5];
    s5[3] = 2.0 * B[3] * m(1, 2).powi(2);
    s5[1] = 4.0 * B[1] * m(1, 3).powi(2);
    check("s(5)", "b", &s5);
    let mut s5m = vec![0.0; 12];
    s5m[4] = 2.0 * B[3].powi(2) * m(1, 2);
    s5m[8] = 4.0 * B[1].powi(2) * m(1, 3);
    check("s(5)", "m", &s5m);
}

const FUNCTIONS: &str = "
module fns
  implicit none
contains
  function sq(x, n) result(y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision :: y(n)
    y = x**2 + x
  end function sq
  function twice(m) result(r)
    double precision, intent(in) :: m(:, :)
    double precision :: r(size(m, 1), 2)
    r = 2*m(:, 1:2)
  end function twice
end module fns

subroutine g(x, m, y, s)
  use fns
  implicit none
  double precision, intent(in) :: x(3), m(2, 3)
  double precision, intent(out) :: y(3), s(3)
  y = 2*sq(x, 3) + 1
  s(1) = sum(sq(x, 3))
  s(2) = dot_product(sq(x, 3), x)
  s(3) = sum(twice(m) * m(:, 2:3))
end subroutine g
";

/// y = 2 (x^2 + x) + 1, s1 = sum (x^2 + x), s2 = sum (x^3 + x^2),
/// s3 = sum_{i, j<=2} 2 m(i, j) m(i, j+1): derivatives of array-valued
/// functions inside expressions, against the analytic values.
#[test]
fn array_valued_functions_in_expressions_differentiate() {
    let x = [0.5, -1.25, 2.0];
    let mv = [1.0, -0.5, 2.0, 0.25, -1.5, 3.0];
    let mm = |i: usize, j: usize| mv[(i - 1) + 2 * (j - 1)];
    let engine = Engine::from_source("g.f90", FUNCTIONS).unwrap();
    let g = engine.procedure(Some("g")).unwrap();
    let mut args: Args = g.args();
    args.set_array("x", &x).unwrap();
    args.set_array("m", &mv).unwrap();
    let compare = |of: &str, wrt: &str, expected: &[f64]| {
        let bad =
            common::check::both_modes_against(&engine, Some("g"), &args, of, wrt, expected, 1e-13);
        assert!(bad.is_empty(), "{of} wrt {wrt}:\n{}", bad.join("\n"));
    };
    let mut dy = Vec::new();
    for (i, xi) in x.iter().enumerate() {
        for j in 0..3 {
            dy.push(if i == j { 2.0 * (2.0 * xi + 1.0) } else { 0.0 });
        }
    }
    compare("y", "x", &dy);
    let ds1: Vec<f64> = x.iter().map(|v| 2.0 * v + 1.0).collect();
    compare("s(1)", "x", &ds1);
    let ds2: Vec<f64> = x.iter().map(|v| 3.0 * v * v + 2.0 * v).collect();
    compare("s(2)", "x", &ds2);
    // d/dm(i, j) of sum_{i, j<=2} 2 m(i, j) m(i, j+1).
    let mut ds3 = Vec::new();
    for j in 1..=3 {
        for i in 1..=2 {
            let mut d = 0.0;
            if j <= 2 {
                d += 2.0 * mm(i, j + 1);
            }
            if j >= 2 {
                d += 2.0 * mm(i, j - 1);
            }
            ds3.push(d);
        }
    }
    compare("s(3)", "m", &ds3);
}

/// `call acc(matmul(a, x), s)` with `s = sum_i i v_i^2`: through a
/// temporary of MATMUL's shape, ds/dx_k = sum_i 2 i (A x)_i a_ik and
/// ds/da_ik = 2 i (A x)_i x_k.
#[test]
fn an_array_valued_intrinsic_is_an_actual_argument() {
    let source = "
module acc_m
contains
  subroutine acc(v, s)
    double precision, intent(in) :: v(:)
    double precision, intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(v)
      s = s + i*v(i)**2
    end do
  end subroutine acc
end module acc_m
subroutine h(a, x, s)
  use acc_m
  double precision, intent(in) :: a(3, 3), x(3)
  double precision, intent(out) :: s
  call acc(matmul(a, x), s)
end subroutine h
";
    let a = [0.5, -1.0, 2.0, 1.5, 0.25, -2.0, 3.0, 1.0, -0.75];
    let x = [1.0, -2.0, 0.5];
    let ax: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|k| a[i + 3 * k] * x[k]).sum())
        .collect();
    let engine = Engine::from_source("h.f90", source).unwrap();
    let h = engine.procedure(Some("h")).unwrap();
    let mut args: Args = h.args();
    args.set_array("a", &a).unwrap();
    args.set_array("x", &x).unwrap();
    let mut expected: Vec<f64> = (0..3)
        .map(|k| {
            (0..3)
                .map(|i| 2.0 * (i + 1) as f64 * ax[i] * a[i + 3 * k])
                .sum()
        })
        .collect();
    for xk in x {
        for (i, axi) in ax.iter().enumerate() {
            expected.push(2.0 * (i + 1) as f64 * axi * xk);
        }
    }
    let bad =
        common::check::both_modes_against(&engine, Some("h"), &args, "s", "x,a", &expected, 1e-13);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A MINPACK-style column loop: `y = A x` built by an axpy-like routine
/// taking `a(:, j)` as an assumed-shape dummy, then the tail `a(2:n, 1)`
/// squared in place by another.
const COLUMNS: &str = "
module colops
  implicit none
contains
  subroutine axpy(alpha, x, y)
    double precision, intent(in) :: alpha, x(:)
    double precision, intent(inout) :: y(:)
    integer :: i
    do i = 1, size(y)
      y(i) = y(i) + alpha*x(i)
    end do
  end subroutine axpy
  subroutine square(v)
    double precision, intent(inout) :: v(:)
    integer :: i
    do i = 1, size(v)
      v(i) = v(i)**2
    end do
  end subroutine square
end module colops
subroutine matvec(n, a, x, y)
  use colops
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n, n)
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n)
  integer :: j
  y = 0
  do j = 1, n
    call axpy(x(j), a(:, j), y)
  end do
  call square(a(2:n, 1))
end subroutine matvec
";

const COL_A: [f64; 9] = [0.5, -1.0, 2.0, 1.5, 0.25, -2.0, 3.0, 1.0, -0.75];
const COL_X: [f64; 3] = [1.0, -2.0, 0.5];

fn columns_args(engine: &Engine) -> Args {
    let mut args = engine.procedure(Some("matvec")).unwrap().args();
    args.set_scalar("n", 3.0).unwrap();
    args.set_array("a", &COL_A).unwrap();
    args.set_array("x", &COL_X).unwrap();
    args
}

/// The column sections reach the callees as slices of the caller's array
/// (no temporary is allocated, nothing is copied), and the callees see
/// their extents and write through them.
#[test]
fn contiguous_sections_to_assumed_shape_dummies_are_not_copied() {
    use adjit::ir::{CallArg, Inst};
    let engine = Engine::from_source("c.f90", COLUMNS).unwrap();
    let module = engine.module();
    let matvec = module
        .procs
        .iter()
        .find(|p| p.name == "matvec")
        .expect("matvec");
    let slices = matvec
        .insts
        .iter()
        .filter(|i| matches!(&i.kind, Inst::Call(_, args) if args.iter().any(|a| matches!(a, CallArg::Slice(..)))))
        .count();
    assert_eq!(slices, 2, "both sections are passed as slices");
    assert!(
        !matvec
            .insts
            .iter()
            .any(|i| matches!(i.kind, Inst::Allocate(..))),
        "no temporary for a contiguous section"
    );
    let f = engine.procedure(Some("matvec")).unwrap();
    let mut args = columns_args(&engine);
    f.call(&mut args).unwrap();
    let y = args.f64s("y").unwrap();
    for (i, &yi) in y.iter().enumerate() {
        let want: f64 = (0..3).map(|j| COL_A[i + 3 * j] * COL_X[j]).sum();
        assert!(common::check::within(yi, want, 1e-15), "y({})", i + 1);
    }
    let a = args.f64s("a").unwrap();
    for (k, (&got, &a0)) in a.iter().zip(&COL_A).enumerate() {
        let want = if k == 1 || k == 2 { a0 * a0 } else { a0 };
        assert_eq!(got, want, "a element {k}");
    }
}

/// dy(i)/dx(j) = a(i, j), dy(i)/da(k, j) = [i = k] x(j); the squared tail
/// a(2:3, 1) has derivative 2 a(k, 1) with respect to itself. Tangent
/// (four directions per sweep) and adjoint, both through the slices.
#[test]
fn a_column_loop_over_slices_differentiates() {
    let engine = Engine::from_source("c.f90", COLUMNS).unwrap();
    let args = columns_args(&engine);
    let mut dydx = Vec::new();
    for i in 0..3 {
        for j in 0..3 {
            dydx.push(COL_A[i + 3 * j]);
        }
    }
    let bad =
        common::check::both_modes_against(&engine, Some("matvec"), &args, "y", "x", &dydx, 1e-14);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let mut dyda = Vec::new();
    for i in 0..3 {
        for k in 0..9 {
            let (row, col) = (k % 3, k / 3);
            dyda.push(if row == i { COL_X[col] } else { 0.0 });
        }
    }
    let bad =
        common::check::both_modes_against(&engine, Some("matvec"), &args, "y", "a", &dyda, 1e-14);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let mut dada = vec![0.0; 81];
    for k in 0..9 {
        dada[k * 9 + k] = if k == 1 || k == 2 {
            2.0 * COL_A[k]
        } else {
            1.0
        };
    }
    let bad =
        common::check::both_modes_against(&engine, Some("matvec"), &args, "a", "a", &dada, 1e-14);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
