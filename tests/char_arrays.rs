//! Whole CHARACTER arrays and sections of constant length assigned
//! (scalar broadcast, copies between arrays of other lengths, overlapping
//! sections, untyped and typed array constructors, WHERE, ADJUSTL over an
//! array, comparisons in ANY and COUNT): the values are gfortran's on
//! both executors; the method table of the corpus program
//! `char_array_table.f90` steers derivatives checked three ways and
//! against the analytic values; misuse is a located error.

mod common;

use adjit::engine::{Backend, ErrorKind};
use adjit::ir::Buffer;
use common::check::{against, three_ways};
use common::scalar::run;

/// Every form of assignment to a whole CHARACTER array or a section, one
/// after the other; `out` holds each result (3 x 4 characters) in turn.
const FORMS: &str = "subroutine f(out, counts)
  implicit none
  character(len=12), intent(out) :: out(11)
  integer, intent(out) :: counts(3)
  character(len=4) :: k(3), m(3)
  character(len=6) :: w(4)
  character(len=2) :: s(2)
  character(len=4), parameter :: p(3) = ['ab  ', 'cd  ', 'efgh']
  k = ['sq  ', 'abc ', 'x   ']
  out(1) = k(1) // k(2) // k(3)
  k = [character(len=4) :: 'a', 'bcdef', 'xy']
  out(2) = k(1) // k(2) // k(3)
  w = 'none'
  s = 'longer'
  out(3) = w(1)(1:4) // w(4)(1:4) // s(1) // s(2)
  w(2:3) = k(1:2)
  out(4) = w(1) // w(2)
  s = k(2:3)
  out(5) = s(1) // s(2)
  m = p
  out(6) = m(1) // m(2) // m(3)
  k = m
  k(2:3) = k(1:2)
  out(7) = k(1) // k(2) // k(3)
  k = [k(3), k(1), k(2)]
  out(8) = k(1) // k(2) // k(3)
  m = ['  ab', ' cd ', 'e   ']
  k = adjustl(m)
  out(9) = k(1) // k(2) // k(3)
  counts = [count(k == 'ab'), count(k /= 'e'), count(m == 'e')]
  if (any(k == 'cd')) counts(1) = counts(1) + 10
  where (k == 'cd') k = 'zz'
  out(10) = k(1) // k(2) // k(3)
  k = ''
  out(11) = k(1) // k(2) // k(3) // '|'
end subroutine
";

/// What gfortran prints for `out` and `counts` of [`FORMS`].
const FORMS_EXPECTED: [&str; 11] = [
    "sq  abc x   ",
    "a   bcdexy  ",
    "nonenonelolo",
    "none  a     ",
    "bcxy        ",
    "ab  cd  efgh",
    "ab  ab  cd  ",
    "cd  ab  ab  ",
    "ab  cd  e   ",
    "ab  zz  e   ",
    "            ",
];

#[test]
fn whole_character_arrays_are_assigned_as_gfortran_does() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = common::engine_on(backend, "forms.f90", FORMS);
        let f = engine.procedure(Some("f")).unwrap();
        let mut args = f.args();
        f.call(&mut args).unwrap_or_else(|e| panic!("{e}"));
        let Buffer::Char(bytes) = args.get("out").unwrap() else {
            panic!("out is CHARACTER")
        };
        let got: Vec<String> = bytes
            .chunks(12)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        assert_eq!(got, FORMS_EXPECTED, "{backend:?}");
        assert_eq!(
            args.f64s("counts").unwrap(),
            [11.0, 2.0, 1.0],
            "{backend:?}"
        );
    }
}

/// Assignments to arrays of strings of run-time length (an assumed-shape
/// `character(len=*) :: a(:)` dummy, a deferred-length and an
/// ALLOCATABLE array of constant length), whole and by sections, strided
/// and backwards, from scalars, arrays of other lengths, ADJUSTL /
/// ADJUSTR of them and constructors with array items and implied DO; a
/// CHARACTER array of constant length from them. `out` holds each result
/// in turn, `lens` LEN and SIZE.
const STRING_FORMS: &str = "module forms2_m
  implicit none
contains
  subroutine g(a, b, out)
    character(len=*), intent(inout) :: a(:)
    character(len=*), intent(in) :: b(:)
    character(len=12), intent(inout) :: out(:)
    a = 'none'
    out(1) = a(1) // a(2) // a(3)
    a(2:3) = b(1:2)
    out(2) = a(1) // a(2) // a(3)
    a = adjustl(a)
    out(3) = a(1) // a(2) // a(3)
    a(2:) = a(:2)
    out(4) = a(1) // a(2) // a(3)
    a(3:1:-2) = adjustr(b(2:3))
    out(5) = a(1) // a(2) // a(3)
    a(1:2) = [b(3), 'xyzzy']
    out(6) = a(1) // a(2) // a(3)
  end subroutine
  subroutine f(out, lens)
    character(len=12), intent(out) :: out(10)
    integer, intent(out) :: lens(3)
    character(len=4) :: k(3)
    character(len=5) :: m(3)
    character(len=:), allocatable :: t(:)
    character(len=6), allocatable :: u(:)
    integer :: i
    out = ''
    m = ['  ab ', 'cd   ', ' e   ']
    call g(k, m, out)
    t = m(2:3)
    u = t
    t = adjustr(m)
    out(7) = t(1) // t(2) // t(3)
    u(2:2) = t(1:1)
    out(8) = u(1) // u(2)
    k = [(t(i)(4:5), i = 1, 3)]
    out(9) = k(1) // k(2) // k(3)
    k = adjustl(t)
    out(10) = k(1) // k(2) // k(3)
    lens = [len(t), size(t), len(u) * 10 + size(u)]
  end subroutine
end module
";

/// What gfortran prints for `out` and `lens` of [`STRING_FORMS`].
const STRING_FORMS_EXPECTED: [&str; 10] = [
    "nonenonenone",
    "none  abcd  ",
    "noneab  cd  ",
    "nonenoneab  ",
    "    none   c",
    " e  xyzz   c",
    "   ab   cd  ",
    "cd       ab ",
    "ab  cd   e  ",
    "ab  cd  e   ",
];

#[test]
fn arrays_of_strings_are_assigned_as_gfortran_does() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = common::engine_on(backend, "strings.f90", STRING_FORMS);
        let f = engine.procedure(Some("f")).unwrap();
        let mut args = f.args();
        f.call(&mut args).unwrap_or_else(|e| panic!("{e}"));
        let Buffer::Char(bytes) = args.get("out").unwrap() else {
            panic!("out is CHARACTER")
        };
        let got: Vec<String> = bytes
            .chunks(12)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        assert_eq!(got, STRING_FORMS_EXPECTED, "{backend:?}");
        assert_eq!(args.f64s("lens").unwrap(), [5.0, 3.0, 62.0], "{backend:?}");
    }
}

/// A value with another number of strings than the section it is
/// assigned to is a runtime error at the assignment, on both executors.
#[test]
fn arrays_of_strings_of_other_sizes_are_runtime_errors() {
    let source = "subroutine g(a, n)
  character(len=*), intent(inout) :: a(:)
  integer, intent(in) :: n
  a(1:n) = adjustl(a(2:3))
end subroutine
subroutine f(n, k, s)
  implicit none
  double precision, intent(in) :: n, k
  double precision, intent(out) :: s
  character(len=4) :: t(3)
  t = ' a'
  call g(t, int(n))
  s = count(t == 'a') + k
end subroutine
";
    common::each_backend_calls(source, |backend, call| {
        let err = call(3.0, 0.0).expect_err("runtime error");
        assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
        assert!(err.message.contains("e.f90:4:"), "{backend:?}: {err}");
        assert_eq!(call(2.0, 0.0).unwrap(), 2.0, "{backend:?}");
    });
}

/// A section past the end of the array is a runtime error naming the
/// array and the line, on both executors, as it is for reals; the
/// `character(len=*)` dummy of explicit shape as well.
#[test]
fn character_sections_out_of_bounds_are_runtime_errors() {
    let source = "subroutine g(names, n, j)
  integer, intent(in) :: n, j
  character(len=*), intent(inout) :: names(n)
  names(1:j) = 'x'
end subroutine
subroutine f(n, k, s)
  implicit none
  double precision, intent(in) :: n, k
  double precision, intent(out) :: s
  character(len=4) :: t(3), u(2)
  t = 'a'
  u = t(1:2)
  if (k < 2) then
    t(2:int(n)) = u(1)(1:1) // 'b'
  else
    call g(t, 3, int(n))
  end if
  s = count(t == 'a')
end subroutine
";
    common::each_backend_calls(source, |backend, call| {
        for (k, at) in [(1.0, "e.f90:14:"), (2.0, "e.f90:4:")] {
            let err = call(4.0, k).expect_err("runtime error");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(err.message.contains(at), "{backend:?} k={k}: {err}");
            assert!(err.message.contains("out of bounds"), "{backend:?}: {err}");
        }
        assert_eq!(call(3.0, 1.0).unwrap(), 1.0, "{backend:?}");
        assert_eq!(call(2.0, 2.0).unwrap(), 1.0, "{backend:?}");
    });
}

/// An untyped constructor of items of different constant lengths (which
/// gfortran refuses), an array expression other than a CHARACTER array
/// assigned to an array of strings of run-time length and a constructor
/// of strings assigned to a rank-2 CHARACTER array are located
/// compile-time errors.
#[test]
fn character_array_misuse_is_located() {
    common::assert_compile_errors(
        "t.f90",
        &[
            (
                "subroutine f()\n  character(len=4) :: k(3)\n  k = ['ab', 'abc', 'd']\nend subroutine\n",
                "t.f90:3:14:",
                "different CHARACTER lengths (2/3)",
            ),
            (
                "subroutine f(names)\n  character(len=*), intent(inout) :: names(:)\n  names = names // 'a'\nend subroutine\n",
                "t.f90:3:11:",
                "array `names` used where a scalar is expected",
            ),
            (
                "subroutine f(names)\n  character(len=*), intent(inout) :: names(:)\n  character(len=4) :: k(3, 2)\n  k = [character(len=4) :: (names(i), i = 1, 6)]\nend subroutine\n",
                "t.f90:4:",
                "`k`",
            ),
        ],
    );
}

/// `y` and `z` of `run_method` in `char_array_table.f90`, for `sel` 1 to
/// 4: the key picked from the table (renamed for `sel > 2`) selects the
/// formula; `dy/dx` and `dz/dx` analytically, and three ways.
#[test]
fn the_method_table_steers_the_derivative() {
    let path = common::corpus::corpus_dir().join("char_array_table.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    let engine = adjit::engine::Engine::from_source("char_array_table.f90", &src).unwrap();
    // The formulas by table position: value and slope at `t`.
    let g = |key: usize, t: f64| -> (f64, f64) {
        match key {
            1 => (3.0 * t + 1.0, 3.0),
            2 => (t * t - 0.5 * t, 2.0 * t - 0.5),
            3 => ((2.0 * t).sin() + t, 2.0 * (2.0 * t).cos() + 1.0),
            4 => ((-t).exp() * t, (-t).exp() * (1.0 - t)),
            _ => (-t, -1.0),
        }
    };
    // (sel, key of y, key of z): `keys` is square, sinus-wa (unknown),
    // then table positions 3 and 4.
    for (sel, ky, kz) in [(1, 2, 0), (2, 0, 3), (3, 3, 4), (4, 4, 2)] {
        let x = 0.35 * sel as f64 - 0.2;
        let args = run(&engine, "run_method", &[("sel", sel as f64), ("x", x)]);
        let (y, dy) = g(ky, x);
        let (gz, dgz) = g(kz, 2.0 * x);
        let dz = 2.0 * dgz * y + gz * dy;
        assert!((args.scalar("y").unwrap() - y).abs() < 1e-13, "sel {sel}");
        assert!(
            (args.scalar("z").unwrap() - gz * y).abs() < 1e-13,
            "sel {sel}"
        );
        let (jac, mut bad) = three_ways(&engine, Some("run_method"), &args, "y,z", "x", 1e-6);
        bad.extend(against("analytic", &jac, &[dy, dz], 1e-12));
        assert!(bad.is_empty(), "sel {sel}: {bad:?}");
    }
}
