//! Smaller modern-Fortran forms that used to be refused: a generic
//! interface choosing its specific by the rank of an array expression
//! actual (a constructor, array arithmetic, a section expression), an
//! ALLOCATE / DEALLOCATE naming arrays and ALLOCATABLE scalars together
//! with STAT= / ERRMSG= (the first failure stops the statement, as in
//! gfortran), an automatic array of structures sized by SIZE of an
//! assumed-shape array of structures, and messages about BLOCK variables
//! renamed apart, which show the source name. Each on the JIT and the
//! interpreter; derivatives against analytic values.

mod common;

use adjit::engine::{Args, Backend, Engine, Options};
use common::check::{both_modes_against, three_ways};

/// `source` compiled (as `m.f90`) for `backend`.
fn engine(source: &str, backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("m.f90".to_string(), source.to_string())], options)
        .unwrap_or_else(|e| panic!("{e}"))
}

const BACKENDS: [Backend; 2] = [Backend::Jit, Backend::Interpreter];

/// The values of the argument `name`, as f64.
fn values(args: &Args, name: &str) -> Vec<f64> {
    let b = args.get(name).unwrap();
    (0..b.len()).map(|k| b.get_f64(k)).collect()
}

const GENERIC_BY_RANK: &str = "
module weighted
  implicit none
  interface wn
    module procedure wn_scalar, wn_vector
  end interface
contains
  function wn_scalar(x) result(r)
    real(8), intent(in) :: x
    real(8) :: r
    r = x * x
  end function
  function wn_vector(x) result(r)
    real(8), intent(in) :: x(:)
    real(8) :: r
    integer :: i
    r = 0
    do i = 1, size(x)
      r = r + i * x(i)**2
    end do
  end function
end module
subroutine f(x, y)
  use weighted
  implicit none
  real(8), intent(in) :: x(3)
  real(8), intent(out) :: y(4)
  y(1) = wn([x(3), x(1)])
  y(2) = wn(2 * x)
  y(3) = wn(x(1:2) + x(3))
  y(4) = wn(x(2))
end subroutine
";

#[test]
fn a_generic_takes_its_specific_from_the_rank_of_an_array_expression() {
    // y1 = x3^2 + 2 x1^2, y2 = 4 (x1^2 + 2 x2^2 + 3 x3^2),
    // y3 = (x1 + x3)^2 + 2 (x2 + x3)^2, y4 = x2^2 at x = (1, 2, 3).
    let expected = [11.0, 144.0, 66.0, 4.0];
    #[rustfmt::skip]
    let jacobian = [
        4.0, 0.0, 6.0,
        8.0, 32.0, 72.0,
        8.0, 20.0, 28.0,
        0.0, 4.0, 0.0,
    ];
    for backend in BACKENDS {
        let e = engine(GENERIC_BY_RANK, backend);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(values(&args, "y"), expected, "{backend:?}");
        let bad = both_modes_against(&e, Some("f"), &args, "y", "x", &jacobian, 1e-12);
        assert!(bad.is_empty(), "{backend:?}: {bad:?}");
        let (_, bad) = three_ways(&e, Some("f"), &args, "y", "x", 1e-6);
        assert!(bad.is_empty(), "{backend:?}: {bad:?}");
    }
}

const MIXED_DEALLOCATE: &str = "
subroutine f(n, k, flags)
  implicit none
  integer, intent(in) :: n, k
  integer, intent(out) :: flags(5)
  real(8), allocatable :: a(:), s, b(:)
  character(len=50) :: msg
  flags = -1
  msg = 'untouched'
  allocate(a(n), s, b(2 * n))
  if (k == 1) deallocate(s)
  if (k == 2) deallocate(a)
  deallocate(a, s, b, stat=flags(1), errmsg=msg)
  if (allocated(a)) flags(2) = 1
  if (allocated(s)) flags(3) = 1
  if (allocated(b)) flags(4) = 1
  if (msg == 'Attempt to deallocate an unallocated object') flags(5) = 1
end subroutine
";

#[test]
fn deallocate_of_arrays_and_scalars_with_stat_stops_at_the_first_failure() {
    // gfortran -O0: k = 0 releases all three; k = 1 (s released before)
    // releases a, fails on s and leaves b; k = 2 (a released before)
    // fails on a and leaves s and b. STAT= is 1 and ERRMSG= set on failure.
    let expected = [
        (0, [0, -1, -1, -1, -1]),
        (1, [1, -1, -1, 1, 1]),
        (2, [1, -1, 1, 1, 1]),
    ];
    for backend in BACKENDS {
        let e = engine(MIXED_DEALLOCATE, backend);
        let f = e.procedure(Some("f")).unwrap();
        for (k, flags) in expected {
            let mut args = f.args();
            args.set_scalar("n", 3.0).unwrap();
            args.set_scalar("k", f64::from(k)).unwrap();
            f.call(&mut args).unwrap();
            let got: Vec<i32> = values(&args, "flags").iter().map(|&v| v as i32).collect();
            assert_eq!(got, flags, "{backend:?}, k = {k}");
        }
    }
}

const MIXED_ALLOCATE: &str = "
subroutine f(n, k, s)
  implicit none
  integer, intent(in) :: n, k
  real(8), intent(out) :: s
  real(8), allocatable :: a(:), b(:), t
  integer :: st
  allocate(a(2))
  if (k == 1) then
    allocate(b(n), a(n), t, stat=st)
  else
    allocate(a(n), b(n), t, stat=st)
  end if
  s = st
  if (allocated(b)) s = s + 10
  if (allocated(t)) s = s + 100
  s = s + 1000 * size(a)
end subroutine
";

#[test]
fn allocate_of_arrays_and_scalars_with_stat_stops_at_the_first_failure() {
    // gfortran -O0: STAT= 5014 on the allocated `a`; `b` is allocated
    // only when named before it, `t` (after it) never.
    common::each_backend_calls(MIXED_ALLOCATE, |backend, call| {
        assert_eq!(call(3.0, 0.0).unwrap(), 7014.0, "{backend:?}");
        assert_eq!(call(3.0, 1.0).unwrap(), 7024.0, "{backend:?}");
    });
}

#[test]
fn deallocate_of_an_unallocated_scalar_without_stat_names_it() {
    let source = MIXED_DEALLOCATE.replace(", stat=flags(1), errmsg=msg", "");
    for backend in BACKENDS {
        let e = engine(&source, backend);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_scalar("n", 3.0).unwrap();
        args.set_scalar("k", 1.0).unwrap();
        let err = f.call(&mut args).unwrap_err();
        assert!(err.message.contains("m.f90:13:"), "{}", err.message);
        assert!(err.message.contains("`s`"), "{}", err.message);
    }
}

const STRUCTURE_RING: &str = "
module ring_m
  implicit none
  type particle
    real(8) :: x, v
  end type
contains
  subroutine step(ring, dt)
    type(particle), intent(inout) :: ring(:)
    real(8), intent(in) :: dt
    type(particle) :: next(size(ring))
    integer :: i, n
    n = size(ring)
    do i = 1, n
      next(i)%x = ring(i)%x + dt * ring(mod(i, n) + 1)%v
      next(i)%v = ring(i)%v - dt * ring(i)%x
    end do
    ring = next
  end subroutine
end module
subroutine f(x, v, y)
  use ring_m
  implicit none
  real(8), intent(in) :: x(3), v(3)
  real(8), intent(out) :: y
  type(particle) :: r(3)
  r%x = x
  r%v = v
  call step(r, 0.5d0)
  y = sum(r%x * r%v)
end subroutine
";

#[test]
fn an_automatic_array_of_structures_is_sized_by_size_of_a_dummy() {
    // After the step, x'_i = x_i + v_{i+1} / 2 and v'_i = v_i - x_i / 2;
    // y = sum x'_i v'_i, so dy/dx_i = v'_i - x'_i / 2 and
    // dy/dv_i = x'_i + v'_{i-1} / 2 (cyclically).
    let (x, v) = ([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]);
    let xn: Vec<f64> = (0..3).map(|i| x[i] + 0.5 * v[(i + 1) % 3]).collect();
    let vn: Vec<f64> = (0..3).map(|i| v[i] - 0.5 * x[i]).collect();
    let y: f64 = (0..3).map(|i| xn[i] * vn[i]).sum();
    let mut grad: Vec<f64> = (0..3).map(|i| vn[i] - 0.5 * xn[i]).collect();
    grad.extend((0..3).map(|i| xn[i] + 0.5 * vn[(i + 2) % 3]));
    for backend in BACKENDS {
        let e = engine(STRUCTURE_RING, backend);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_array("x", &x).unwrap();
        args.set_array("v", &v).unwrap();
        f.call(&mut args).unwrap();
        let got = args.scalar("y").unwrap();
        assert!(
            (got - y).abs() <= 1e-14 * y.abs(),
            "{backend:?}: {got} vs {y}"
        );
        let bad = both_modes_against(&e, Some("f"), &args, "y", "x,v", &grad, 1e-12);
        assert!(bad.is_empty(), "{backend:?}: {bad:?}");
    }
}

#[test]
fn size_counts_the_items_of_a_constructor_of_structures() {
    let source = "
module pm
  implicit none
  type particle
    real(8) :: x, v
  end type
end module
subroutine f(n, k, s)
  use pm
  implicit none
  integer, intent(in) :: n, k
  real(8), intent(out) :: s
  type(particle) :: p1, p2, ring(3)
  s = size([p1, p2, ring]) + 100 * size([ring, p1, ring(2)]) + 1000 * size([n, k, n])
end subroutine
";
    // gfortran -O0: 5 + 100 * 5 + 1000 * 3.
    common::each_backend_calls(source, |backend, call| {
        assert_eq!(call(1.0, 2.0).unwrap(), 3505.0, "{backend:?}");
    });
}

const TWO_BLOCKS: &str = "
subroutine f(x, n, y)
  implicit none
  real(8), intent(in) :: x(3)
  integer, intent(in) :: n
  real(8), intent(out) :: y
  y = 0
  block
    real(8) :: w(2)
    w = x(1:2)
    y = y + sum(w)
  end block
  block
    real(8) :: w(3)
    w = x
    y = y + w(n)
  end block
end subroutine
";

#[test]
fn messages_about_a_renamed_block_variable_show_its_source_name() {
    let bad = TWO_BLOCKS.replace("w(n)", "w(n, 1)");
    let message = common::compile_error_in("m.f90", &bad);
    assert!(message.contains("m.f90:16:13"), "{message}");
    assert!(message.contains("`w` has 1 dimension(s)"), "{message}");
    assert!(!message.contains('@'), "{message}");
    for backend in BACKENDS {
        let e = engine(TWO_BLOCKS, backend);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
        args.set_scalar("n", 2.0).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 5.0, "{backend:?}");
        args.set_scalar("n", 4.0).unwrap();
        let err = f.call(&mut args).unwrap_err();
        assert!(err.message.contains("m.f90:16:"), "{}", err.message);
        assert!(
            err.message.contains("out of bounds on `w`"),
            "{}",
            err.message
        );
        assert!(!err.message.contains('@'), "{}", err.message);
    }
}
