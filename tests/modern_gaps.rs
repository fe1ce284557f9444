//! Constructs of modern Fortran that real code hits and the front end
//! refused before: the VALUE attribute (the callee works on a copy, the
//! caller's variables stay), FINDLOC (DIM=, MASK=, BACK=, of logical and
//! rank-2 arrays), array constructors of scalars giving the only shape of
//! an assignment to a section, and array PARAMETERs given by operations on
//! constructors; primal values and derivatives against analytic values on
//! both modes. The corpus programs `c_interop_findloc.f90`,
//! `ctor_section_assign.f90` and `quadrature_internal.f90` hold the same
//! constructs to gfortran's results.

mod common;

const VALUE_DUMMIES: &str = "
module vm
  use, intrinsic :: iso_c_binding, only: c_double, c_int
  implicit none
contains
  function damped(n, s, v) result(t) bind(c, name='damped')
    integer(c_int), value :: n
    real(c_double), value :: s
    real(c_double), intent(in) :: v(*)
    real(c_double) :: t
    t = 0
    do while (n > 0)
      t = t + s*v(n)
      s = 0.5_c_double*s
      n = n - 1
    end do
  end function damped
  subroutine drive(s, v, t, n_after, s_after)
    real(c_double), intent(inout) :: s
    real(c_double), intent(in) :: v(3)
    real(c_double), intent(out) :: t, s_after
    integer(c_int), intent(out) :: n_after
    integer(c_int) :: n
    n = 3
    t = damped(n, s, v)
    n_after = n
    s_after = s
  end subroutine drive
end module vm
";

/// `damped` halves and counts down its VALUE dummies: the caller's `n`
/// and `s` keep their values, and `t = s (v3 + v2/2 + v1/4)`.
#[test]
fn value_dummies_are_copies() {
    let (s, v) = (1.5, [0.5, -2.0, 3.0]);
    let (engine, args) = common::engine_with_args(
        "gaps.f90",
        VALUE_DUMMIES,
        "drive",
        &[("s", &[s]), ("v", &v)],
    );
    let mut run = args.clone();
    engine
        .procedure(Some("drive"))
        .unwrap()
        .call(&mut run)
        .unwrap();
    assert_eq!(run.scalar("n_after").unwrap(), 3.0);
    assert_eq!(run.scalar("s_after").unwrap(), s);
    let t = s * (v[2] + v[1] / 2.0 + v[0] / 4.0);
    assert!((run.scalar("t").unwrap() - t).abs() < 1e-14);
    let expected = [v[2] + v[1] / 2.0 + v[0] / 4.0, s / 4.0, s / 2.0, s];
    let bad = common::check::both_modes_against(
        &engine,
        Some("drive"),
        &args,
        "t",
        "s,v",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{bad:?}");
}

const FINDLOC: &str = "
subroutine locate(a, m, y, i1, i2, i3, i4, i5, cols, p2)
  real(8), intent(in) :: a(6), m(2, 3)
  real(8), intent(out) :: y
  integer, intent(out) :: i1, i2, i3, i4, i5, cols(3), p2(2)
  logical :: mk(6)
  mk = a > 0
  i1 = findloc(a, 2.0d0, dim=1)
  i2 = findloc(a, 2, dim=1, back=.true.)
  i3 = findloc(a, -2.0d0, 1, a < 0)
  i4 = findloc(mk, .false., dim=1)
  i5 = findloc(a, 9.0d0, dim=1)
  cols = findloc(m, 1.0d0, dim=1)
  p2 = findloc(m, 0.0d0)
  y = a(i1) * a(i2) + a(max(i5, 3))
end subroutine locate
";

/// FINDLOC's first and last matches, under a mask, of a logical array,
/// of no match (0), along DIM=1 of a matrix and of a whole matrix; the
/// positions then pick the elements differentiated.
#[test]
fn findloc_positions() {
    let a = [1.0, 2.0, 3.0, 2.0, -2.0, 2.0];
    let m = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let (engine, args) =
        common::engine_with_args("gaps.f90", FINDLOC, "locate", &[("a", &a), ("m", &m)]);
    let mut run = args.clone();
    engine
        .procedure(Some("locate"))
        .unwrap()
        .call(&mut run)
        .unwrap();
    let got: Vec<f64> = ["i1", "i2", "i3", "i4", "i5"]
        .iter()
        .map(|n| run.scalar(n).unwrap())
        .collect();
    assert_eq!(got, [2.0, 6.0, 5.0, 5.0, 0.0]);
    assert_eq!(run.f64s("cols").unwrap(), [1.0, 2.0, 1.0]);
    assert_eq!(run.f64s("p2").unwrap(), [2.0, 1.0]);
    // y = a(2) a(6) + a(3).
    let expected = [0.0, a[5], 1.0, 0.0, 0.0, a[1]];
    let bad = common::check::both_modes_against(
        &engine,
        Some("locate"),
        &args,
        "y",
        "a",
        &expected,
        1e-14,
    );
    assert!(bad.is_empty(), "{bad:?}");
}

const CONSTRUCTORS: &str = "
subroutine rot(x, c, y)
  real(8), intent(in) :: x(2), c
  real(8), intent(out) :: y(4)
  real(8), parameter :: w(2) = [5.0d0, 8.0d0] / 4.0d0
  y = 0
  y(2:3) = [x(1), x(2)] * c
  y(1:4:3) = -[c, x(1)]**2 + w
end subroutine rot
";

/// `y(2:3) = [x1, x2] c` and `y(1:4:3) = -[c, x1]**2 + w` with
/// `w = [5, 8] / 4` a PARAMETER: values and the Jacobian.
#[test]
fn constructors_shape_section_assignments() {
    let (x, c) = ([0.75, -1.25], 2.0);
    let (engine, args) =
        common::engine_with_args("gaps.f90", CONSTRUCTORS, "rot", &[("x", &x), ("c", &[c])]);
    let mut run = args.clone();
    engine
        .procedure(Some("rot"))
        .unwrap()
        .call(&mut run)
        .unwrap();
    let y = [-c * c + 1.25, x[0] * c, x[1] * c, -x[0] * x[0] + 2.0];
    assert_eq!(run.f64s("y").unwrap(), y);
    #[rustfmt::skip]
    let expected = [
        0.0, 0.0, -2.0 * c,
        c, 0.0, x[0],
        0.0, c, x[1],
        -2.0 * x[0], 0.0, 0.0,
    ];
    let bad = common::check::both_modes_against(
        &engine,
        Some("rot"),
        &args,
        "y",
        "x,c",
        &expected,
        1e-14,
    );
    assert!(bad.is_empty(), "{bad:?}");
}
