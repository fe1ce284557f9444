//! ALLOCATABLE arrays: derivatives through ALLOCATE, DEALLOCATE and
//! reallocation and through ALLOCATABLE dummy arguments (tangent against
//! adjoint, both against finite differences and the closed form), the JIT
//! against the interpreter, and the compile-time and runtime errors of
//! misuse (located, never a crash).

mod common;

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::engine::{Args, Backend, Engine, ErrorKind, FiniteDifferences, Options, Selection};
use common::check::{against, dot, mismatches, Rng};
use common::cli::run_source;

/// An array deallocated and allocated again with other bounds inside a
/// loop, whose values the reverse sweep needs after the primal released
/// them; an array allocated by assignment and alive at return; a rank-2
/// array. y = 14 sum x^4 + sum sin(x) x + sum x^2 e^x.
const REALLOCATING: &str = "
subroutine f(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision, allocatable :: w(:), v(:), m(:, :)
  integer :: i, k
  y = 0
  do k = 1, 3
    allocate(w(k:n + k - 1))
    do i = 1, n
      w(i + k - 1) = k * x(i)**2
    end do
    y = y + sum(w * w)
    deallocate(w)
  end do
  v = x
  y = y + sum(sin(v) * v)
  allocate(m(2, n))
  m(1, :) = x * x
  m(2, :) = exp(x)
  y = y + sum(m(1, :) * m(2, :))
end subroutine f
";

/// The closed-form gradient of [`REALLOCATING`].
fn expected_gradient(x: &[f64]) -> Vec<f64> {
    x.iter()
        .map(|&t| 56.0 * t.powi(3) + t.cos() * t + t.sin() + (2.0 * t + t * t) * t.exp())
        .collect()
}

fn engine(source: &str, backend: Backend, bounds_checks: bool) -> Engine {
    let options = Options {
        backend,
        bounds_checks,
        ..Options::default()
    };
    Engine::from_sources(&[("alloc.f90".to_string(), source.to_string())], options)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn point(engine: &Engine, x: &[f64]) -> Args {
    let f = engine.procedure(Some("f")).unwrap();
    let mut args = f.args();
    args.set_scalar("n", x.len() as f64).unwrap();
    args.set_array("x", x).unwrap();
    args
}

#[test]
fn reallocation_in_a_loop_has_the_closed_form_gradient() {
    let x = [0.3, -0.7, 1.1, 0.5, -1.3];
    let expected = expected_gradient(&x);
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let mut bad = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        for bounds_checks in [true, false] {
            let e = engine(REALLOCATING, backend, bounds_checks);
            let args = point(&e, &x);
            let label = format!("{backend:?}, bounds checks {bounds_checks}");
            let tangent = e.tangent(Some("f"), &of, &wrt, 2).unwrap();
            bad.extend(against(
                &format!("tangent ({label})"),
                &tangent.jacobian(&args).unwrap(),
                &expected,
                1e-12,
            ));
            for (record, activity) in [
                (RecordPolicy::Tbr, true),
                (RecordPolicy::Conservative, true),
                (RecordPolicy::Conservative, false),
            ] {
                let options = AdjointOptions {
                    record,
                    activity,
                    ..AdjointOptions::default()
                };
                let adjoint = e.adjoint(Some("f"), &of, &wrt, &options).unwrap();
                bad.extend(against(
                    &format!("adjoint {record:?} activity {activity} ({label})"),
                    &adjoint.jacobian(&args).unwrap(),
                    &expected,
                    1e-12,
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn tangent_adjoint_and_finite_differences_agree() {
    let bad = three_way(REALLOCATING, 0x5eed_a110c, 6, &expected_gradient);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Checks the gradient of `y` with respect to `x(1:n)` of the subroutine
/// `f(n, x, y)` in `source` at a random point of size `n`, on the JIT and
/// the interpreter: tangent against adjoint (and the dot-product identity
/// with random directions), the adjoint against finite differences and
/// against the closed form `expected`. Returns the mismatches.
fn three_way(
    source: &str,
    seed: u64,
    n: usize,
    expected: &dyn Fn(&[f64]) -> Vec<f64>,
) -> Vec<String> {
    let mut rng = Rng(seed);
    let x = rng.vec(n);
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let mut bad = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = engine(source, backend, true);
        let args = point(&e, &x);
        let tangent = e
            .tangent(Some("f"), &of, &wrt, 1)
            .unwrap()
            .jacobian(&args)
            .unwrap();
        let adjoint = e
            .adjoint(Some("f"), &of, &wrt, &AdjointOptions::default())
            .unwrap()
            .jacobian(&args)
            .unwrap();
        let label = format!("{backend:?}");
        bad.extend(mismatches(
            &format!("tangent vs adjoint ({label})"),
            &args,
            &tangent,
            &adjoint,
        ));
        // Dot product: <J xd, yb> = <xd, J^T yb> with random directions.
        let (xd, yb) = (rng.vec(x.len()), rng.next());
        let (jxd, _) = dot(&tangent.matrix, &xd);
        let jt_yb: Vec<f64> = adjoint.matrix.iter().map(|g| g * yb).collect();
        let (rhs, scale) = dot(&xd, &jt_yb);
        let lhs = jxd * yb;
        if (lhs - rhs).abs() > 1e-13 * scale.max(1.0) {
            bad.push(format!("dot product ({label}): {lhs:e} vs {rhs:e}"));
        }
        let f = e.procedure(Some("f")).unwrap();
        let fd = FiniteDifferences::new(&f)
            .jacobian(&args, &of, &wrt)
            .unwrap();
        for (k, (&a, &d)) in adjoint.matrix.iter().zip(&fd.matrix).enumerate() {
            if (a - d).abs() > 1e-6 * a.abs().max(1.0) {
                bad.push(format!(
                    "finite differences ({label}), x({}): {a:e} vs {d:e}",
                    k + 1
                ));
            }
        }
        bad.extend(against(
            &format!("closed form ({label})"),
            &adjoint,
            &expected(&x),
            1e-12,
        ));
    }
    bad
}

/// The ALLOCATABLE statement, the shape from the statement or from the
/// type declaration, and ERRMSG=: y = sum x^2 + 2 sum_{i>=2} x_i^3 + 3 x_1.
const STATEMENT: &str = "
subroutine f(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision :: a, b(:)
  allocatable :: a(:)
  allocatable b
  character(len=40) :: msg
  integer :: ierr
  allocate(a(n), stat=ierr, errmsg=msg)
  a = x * x
  b = x(2:n)
  allocate(a(1), stat=ierr, errmsg=msg)
  if (ierr /= 0) y = 3 * x(1)
  y = y + sum(a) + 2 * sum(b**3)
  deallocate(a, b)
end subroutine f
";

#[test]
fn allocatable_statement_and_errmsg_differentiate() {
    let expected = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, &t)| 2.0 * t + if i == 0 { 3.0 } else { 6.0 * t * t })
            .collect()
    };
    let bad = three_way(STATEMENT, 0xa110_c57a, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Reallocation on assignment of constructors with implied DO loops and
/// array items reading the target (growth in a loop, rotation):
/// y = sum x^4 + sum sin(x)^2 + x_1^2.
const CONSTRUCTOR: &str = "
subroutine f(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision, allocatable :: a(:)
  integer :: i
  a = [(x(i)**2, i = 1, n)]
  do i = 1, n
    a = [a, sin(x(i))]
  end do
  a = [a(2:), a(1)]
  y = sum(a * a) + a(size(a))
end subroutine f
";

#[test]
fn constructor_reallocation_differentiates() {
    let expected = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, &t)| {
                4.0 * t.powi(3) + 2.0 * t.sin() * t.cos() + if i == 0 { 2.0 * t } else { 0.0 }
            })
            .collect()
    };
    let bad = three_way(CONSTRUCTOR, 0xc0_7570, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Reallocation on assignment of a value reading the target through a
/// section (shrinking, then reversing): with u_i = x_{i+1}^2 + x_i,
/// y = sum_{i<n} u_i^2 / 4.
const OVERLAP: &str = "
subroutine f(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision, allocatable :: h(:)
  h = x * x
  h = h(2:n) + x(1:n-1)
  h = 0.5d0 * h(n-1:1:-1)
  y = sum(h * h)
end subroutine f
";

#[test]
fn overlapping_reallocation_differentiates() {
    let expected = |x: &[f64]| -> Vec<f64> {
        let mut g = vec![0.0; x.len()];
        for i in 0..x.len() - 1 {
            let u = x[i + 1] * x[i + 1] + x[i];
            g[i] += 0.5 * u;
            g[i + 1] += u * x[i + 1];
        }
        g
    };
    let bad = three_way(OVERLAP, 0x0be_71a9, 6, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The JIT and the interpreter agree bit for bit on a program exercising
/// every allocation path (corpus program `allocatable_local.f90`).
#[test]
fn jit_and_interpreter_agree() {
    let path = common::corpus::corpus_dir().join("allocatable_local.f90");
    let run = |backend: Backend, n: f64, x: f64| {
        let options = Options {
            backend,
            ..Options::default()
        };
        let e = Engine::from_files(&[&path], options).unwrap();
        let f = e.procedure(Some("alloc_local")).unwrap();
        let mut args = f.args();
        args.set_scalar("n", n).unwrap();
        args.set_scalar("x", x).unwrap();
        f.call(&mut args).unwrap();
        (
            args.scalar("s").unwrap().to_bits(),
            format!("{:?}", args.get("info").unwrap()),
        )
    };
    for (n, x) in [(3.0, 0.5), (4.0, 1.5), (9.0, -2.25)] {
        assert_eq!(
            run(Backend::Jit, n, x),
            run(Backend::Interpreter, n, x),
            "n = {n}, x = {x}"
        );
    }
}

/// Runs `body` (statements over `n`, `s` and the allocatable `a(:)`) and
/// returns the error message, checking both executors, with and without
/// bounds checks, give a runtime error.
fn runtime_error(body: &str, memory_limit: Option<usize>) -> Vec<String> {
    let source = format!(
        "subroutine f(n, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(out) :: s
  double precision, allocatable :: a(:), b(:, :)
{body}
end subroutine f
"
    );
    let mut messages = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        for bounds_checks in [true, false] {
            let mut options = Options {
                backend,
                bounds_checks,
                ..Options::default()
            };
            if let Some(limit) = memory_limit {
                options.memory_limit = limit;
            }
            let e = Engine::from_sources(&[("e.f90".to_string(), source.clone())], options)
                .unwrap_or_else(|e| panic!("{e}"));
            let f = e.procedure(Some("f")).unwrap();
            let mut args = f.args();
            args.set_scalar("n", 1_000_000.0).unwrap();
            let err = f.call(&mut args).expect_err(body);
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            messages.push(err.message);
        }
    }
    messages
}

#[test]
fn misuse_is_a_located_runtime_error() {
    let cases: [(&str, &str, &str); 4] = [
        ("  s = a(1)", "e.f90:6:", "`a` is not allocated"),
        ("  a(2) = 1\n  s = 0", "e.f90:6:", "`a` is not allocated"),
        (
            "  allocate(a(n))\n  allocate(a(2))\n  s = 0",
            "e.f90:7:",
            "`a` is already allocated",
        ),
        (
            "  allocate(a(n))\n  deallocate(a)\n  deallocate(a)\n  s = 0",
            "e.f90:8:",
            "`a` is not allocated",
        ),
    ];
    for (body, at, what) in cases {
        for m in runtime_error(body, None) {
            assert!(m.contains(at) && m.contains(what), "{body}: {m}");
        }
    }
}

#[test]
fn allocation_past_the_memory_limit_is_an_error() {
    // 10^12 doubles: past a 1 MB limit (and past the interpreter's own
    // limit on one array).
    let body = "  allocate(b(n, n))\n  s = 0";
    for m in runtime_error(body, Some(1 << 20)) {
        assert!(m.contains("e.f90:6:") && m.contains("`b`"), "{m}");
    }
}

/// ALLOCATABLE dummy arguments (rank 1 with lower bound 0, rank 2) of
/// module procedures that update them in place, one passed on to another
/// ALLOCATABLE dummy: with u = x + x^2,
/// y = 4 sum u^2 + sum x sin(x) + sum sin(x)^2.
const DUMMIES: &str = "
module work_m
  implicit none
contains
  subroutine accumulate(w, m, x)
    double precision, allocatable, intent(inout) :: w(:), m(:, :)
    double precision, intent(in) :: x(:)
    integer :: i, k
    k = lbound(w, 1)
    do i = 1, size(x)
      w(k + i - 1) = w(k + i - 1) + x(i)**2
      m(i, 2) = sin(x(i))
      m(i, 1) = m(i, 2) * x(i)
    end do
    call twice(w)
  end subroutine accumulate
  subroutine twice(w)
    double precision, allocatable, intent(inout) :: w(:)
    if (allocated(w)) w = 2 * w
  end subroutine twice
end module work_m

subroutine f(n, x, y)
  use work_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision, allocatable :: w(:), m(:, :)
  allocate(w(0:n - 1), m(n, 2))
  w = x
  call accumulate(w, m, x)
  y = sum(w * w) + sum(m(:, 1)) + sum(m(:, 2)**2)
end subroutine f
";

#[test]
fn allocatable_dummies_differentiate() {
    let expected = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .map(|&t| {
                8.0 * (t + t * t) * (1.0 + 2.0 * t)
                    + t.cos() * t
                    + t.sin()
                    + 2.0 * t.sin() * t.cos()
            })
            .collect()
    };
    let bad = three_way(DUMMIES, 0xd0_a110c, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An ALLOCATABLE dummy that is not a numeric or LOGICAL array of
/// deferred shape, and an actual argument that is not ALLOCATABLE, are
/// located compile-time errors.
#[test]
fn allocatable_dummy_misuse_is_a_located_compile_error() {
    let source = "module m
contains
  subroutine g(a)
    double precision, allocatable, intent(inout) :: a(:)
    a(1) = 0
  end subroutine g
end module m
subroutine f(b)
  use m
  double precision :: b(3)
  call g(b)
end subroutine f
";
    let m = compile_error(source);
    assert!(
        m.contains("e.f90:11:10") && m.contains("argument `a` of `g` is ALLOCATABLE"),
        "{m}"
    );
}

/// A loop calling a helper that allocates the caller's work array
/// (INTENT(OUT): released at entry when allocated, then allocated with
/// other bounds each trip), then a helper reallocating it by assignment:
/// the reverse sweep sees each trip's storage. y = 23 sum x^4 + sin(x_1)^2.
const CALLEE_ALLOCATES: &str = "
module work_m
  implicit none
contains
  subroutine make_work(w, n, x, k)
    double precision, allocatable, intent(out) :: w(:)
    integer, intent(in) :: n, k
    double precision, intent(in) :: x(n)
    integer :: i
    allocate(w(k:n + k - 1))
    do i = 1, n
      w(i + k - 1) = k * x(i)**2
    end do
  end subroutine make_work

  subroutine append(w, t)
    double precision, allocatable, intent(inout) :: w(:)
    double precision, intent(in) :: t
    w = [w, t]
  end subroutine append
end module work_m

subroutine f(n, x, y)
  use work_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  double precision, allocatable :: w(:)
  integer :: k
  y = 0
  do k = 1, 3
    call make_work(w, n, x, k)
    y = y + sum(w * w)
  end do
  call append(w, sin(x(1)))
  y = y + sum(w * w)
end subroutine f
";

#[test]
fn callee_allocated_work_arrays_differentiate() {
    let expected = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, &t)| {
                let first = if i == 0 { 2.0 * t.sin() * t.cos() } else { 0.0 };
                92.0 * t.powi(3) + first
            })
            .collect()
    };
    let bad = three_way(CALLEE_ALLOCATES, 0xca_11ee, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Misuse of an ALLOCATABLE dummy the callee allocates: an actual that is
/// not a whole ALLOCATABLE array of its type and rank is a located
/// compile-time error; a host cannot call such a procedure, nor one passing
/// its dummy on to such a dummy (a usage error naming the argument).
#[test]
fn callee_allocation_misuse_is_located() {
    let module = "module m
contains
  subroutine g(a)
    double precision, allocatable, intent(out) :: a(:)
    allocate(a(2))
  end subroutine g
end module m
";
    let cases = [
        (
            "double precision :: b(3)\n  call g(b)",
            "e.f90:11:10",
            "argument `a` of `g` is an ALLOCATABLE f64 array of rank 1 that `g` allocates",
        ),
        (
            "double precision, allocatable :: b(:, :)\n  call g(b)",
            "e.f90:11:10",
            "pass a whole ALLOCATABLE array of that type and rank",
        ),
    ];
    for (decl, at, what) in cases {
        let source = format!("{module}subroutine f()\n  use m\n  {decl}\nend subroutine f\n");
        let m = compile_error(&source);
        assert!(m.contains(at) && m.contains(what), "{decl}: {m}");
    }
    let source = format!(
        "{module}subroutine f(b)\n  use m\n  double precision, allocatable, intent(inout) :: b(:)\n  call g(b)\nend subroutine f\n"
    );
    let e = Engine::from_sources(&[("e.f90".to_string(), source)], Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    for (name, dummy) in [("g", "a"), ("f", "b")] {
        let p = e.procedure(Some(name)).unwrap();
        let mut args = p.args();
        let err = p.call(&mut args).expect_err("a host call");
        let what =
            format!("`{dummy}` of `{name}` is an ALLOCATABLE argument the procedure may allocate");
        assert!(err.message.contains(&what), "{err}");
    }
}

/// An ALLOCATABLE CHARACTER array dummy of constant length (once a
/// located error) is allocated by the callee, its assignments cut to the
/// length: the caller reads what gfortran reads (`y = 16` at `x = 2`).
#[test]
fn constant_length_character_dummy_is_allocated_by_the_callee() {
    let source = "subroutine g(a)
  implicit none
  character(len=3), allocatable :: a(:)
  if (.not. allocated(a)) allocate(a(2))
  a(1) = 'x'
  a(2) = 'abcdef'
end subroutine g
subroutine h(x, y)
  implicit none
  interface
    subroutine g(a)
      character(len=3), allocatable :: a(:)
    end subroutine
  end interface
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=3), allocatable :: a(:)
  call g(a)
  y = x * len_trim(a(1)) + x*x*len_trim(a(2)) + size(a)
end subroutine h
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let options = Options {
            backend,
            ..Options::default()
        };
        let e = Engine::from_sources(&[("e.f90".to_string(), source.to_string())], options)
            .unwrap_or_else(|e| panic!("{e}"));
        let h = e.procedure(Some("h")).unwrap();
        let mut args = h.args();
        args.set_scalar("x", 2.0).unwrap();
        h.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 16.0, "{backend:?}");
    }
}

/// The message of the compile-time error of `source` (a file `e.f90`).
fn compile_error(source: &str) -> String {
    match Engine::from_sources(
        &[("e.f90".to_string(), source.to_string())],
        Options::default(),
    ) {
        Ok(_) => panic!("compiled: {source}"),
        Err(e) => e.to_string(),
    }
}

/// An unallocated actual argument, and an assignment of another shape to
/// the whole dummy (which Fortran answers by reallocating), are located
/// runtime errors on both executors.
#[test]
fn allocatable_dummy_runtime_errors_are_located() {
    let source = "module m
contains
  subroutine g(a, k)
    double precision, allocatable, intent(inout) :: a(:)
    integer, intent(in) :: k
    double precision :: b(k)
    b = 1
    a = b
  end subroutine g
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  double precision, allocatable :: a(:)
  if (n > 0) allocate(a(n))
  call g(a, k)
  s = sum(a)
end subroutine f
";
    located_runtime_errors(
        source,
        &[
            (0.0, 1.0, "e.f90:17:", "`a` is not allocated"),
            (3.0, 4.0, "e.f90:8:", "assignment of another shape"),
        ],
        (3.0, 3.0, 3.0),
    );
}

/// Misuse of an ALLOCATABLE dummy the callee allocates at run time: an
/// element of the unallocated dummy, ALLOCATE of the allocated one, and
/// the caller's reference after the callee released it, are located
/// runtime errors naming the array, on both executors.
#[test]
fn callee_allocation_runtime_errors_are_located() {
    let source = "module m
contains
  subroutine g(a, k)
    double precision, allocatable, intent(inout) :: a(:)
    integer, intent(in) :: k
    if (k == 1) a(1) = 1
    if (k == 2) allocate(a(3))
    if (k == 3) deallocate(a)
  end subroutine g
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  double precision, allocatable :: b(:)
  if (n > 0) allocate(b(n))
  call g(b, k)
  s = sum(b) + b(1)
end subroutine f
";
    // Allocated by the callee (n = 0, k = 2): the caller sees it.
    located_runtime_errors(
        source,
        &[
            (0.0, 1.0, "e.f90:6:", "`a` is not allocated"),
            (2.0, 2.0, "e.f90:7:", "`a` is already allocated"),
            (2.0, 3.0, "e.f90:18:", "`b` is not allocated"),
        ],
        (0.0, 2.0, 0.0),
    );
}

/// Calls `f(n, k, s)` of `source` on both executors: each case `(n, k,
/// place, text)` fails at run time with a message holding both; `(n, k,
/// s)` of `ok` runs and gives `s`.
fn located_runtime_errors(source: &str, cases: &[(f64, f64, &str, &str)], ok: (f64, f64, f64)) {
    common::each_backend_calls(source, |backend, call| {
        for &(n, k, at, what) in cases {
            let err = call(n, k).expect_err("runtime error");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(
                err.message.contains(at) && err.message.contains(what),
                "{backend:?} n={n} k={k}: {err}"
            );
        }
        assert_eq!(call(ok.0, ok.1).unwrap(), ok.2);
    });
}

/// ALLOCATABLE module variables loaded, reallocated on assignment,
/// deallocated, allocated again with other bounds by another procedure and
/// moved by MOVE_ALLOC (which leaves the source unallocated, so it can be
/// allocated again), read through a renamed USE; and a SAVE allocatable
/// accumulator of a function called twice (allocated by the first call,
/// released by the second, as `f`, called through the API, must return
/// with it released), and an array-valued function reading one. With s2 = sum x^2, s3 = sum x^3:
/// y = (s2 + s3) + 4 s2 + 2 s2 + (s2 + 4 s2) = 12 s2 + s3.
const MODULE_ARRAYS: &str = "
module wdata
  implicit none
  double precision, allocatable :: w(:), g(:)
end module wdata
module wops
  use wdata
  implicit none
contains
  subroutine load(n, x)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    allocate(w(n))
    w = x
  end subroutine load
  subroutine square_all()
    g = w ** 2
  end subroutine square_all
  double precision function total()
    use wdata, only: v => w
    total = sum(g) + sum(v ** 3)
  end function total
  subroutine reload(n, x)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    deallocate(w)
    allocate(w(0:n - 1))
    w = 2 * x
    call move_alloc(w, g)
  end subroutine reload
  function gx(v) result(r)
    double precision, intent(in) :: v(:)
    double precision :: r(size(v))
    r = v * g
  end function gx
  double precision function accum(v, step)
    double precision, intent(in) :: v(:)
    integer, intent(in) :: step
    double precision, allocatable, save :: acc(:)
    if (step == 1) then
      allocate(acc(size(v)))
      acc = 0
    end if
    acc = acc + v
    accum = sum(acc * acc)
    if (step == 2) deallocate(acc)
  end function accum
end module wops
subroutine f(n, x, y)
  use wops
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  call load(n, x)
  call square_all()
  y = total()
  call reload(n, x)
  if (lbound(g, 1) /= 0) stop 1
  allocate(w(1))
  deallocate(w)
  y = y + sum(g * g)
  y = y + sum(gx(x))
  y = y + accum(x, 1)
  y = y + accum(x, 2)
  deallocate(g)
end subroutine f
";

#[test]
fn module_and_save_allocatables_differentiate() {
    let gradient = |x: &[f64]| x.iter().map(|&t| 24.0 * t + 3.0 * t * t).collect();
    let bad = three_way(MODULE_ARRAYS, 0x0a11_0c5e, 5, &gradient);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A module ALLOCATABLE array referenced before any procedure allocated it
/// is a located runtime error naming it; a procedure that takes module
/// arrays from its callers cannot be called from outside.
#[test]
fn module_allocatable_misuse_is_located() {
    let source = "module m
  double precision, allocatable :: a(:)
contains
  subroutine g(k)
    integer, intent(in) :: k
    if (k == 1) a(1) = 1
    if (k == 2) allocate(a(3))
    if (k == 3) deallocate(a)
  end subroutine g
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  if (n > 0) allocate(a(n))
  call g(k)
  s = a(1)
  if (k == 2) deallocate(a)
end subroutine f
";
    located_runtime_errors(
        source,
        &[
            (0.0, 1.0, "e.f90:6:", "`a` is not allocated"),
            (2.0, 2.0, "e.f90:7:", "`a` is already allocated"),
            (2.0, 3.0, "e.f90:17:", "`a` is not allocated"),
        ],
        (0.0, 2.0, 0.0),
    );
    let e = Engine::from_sources(
        &[("e.f90".to_string(), source.to_string())],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let g = e.procedure(Some("g")).unwrap();
    let mut args = g.args();
    args.set_scalar("k", 2.0).unwrap();
    let err = g.call(&mut args).expect_err("g takes `a` from its callers");
    assert!(err.message.contains("only a Fortran caller"), "{err}");
}

/// ALLOCATED, STAT= and MOVE_ALLOC of a module array and a SAVE array in
/// a procedure under `f`, called through the API: every call starts with
/// them unallocated, as a Fortran program's next call would (the previous
/// call released them). y = sum sin(x) x^2 + 2 sum x.
const KEPT_STATUS: &str = "
module status_m
  implicit none
  double precision, allocatable :: w(:)
contains
  subroutine work(n, x, y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y
    double precision, allocatable, save :: h(:)
    double precision, allocatable :: t(:)
    integer :: s
    if (.not. allocated(w)) allocate(w(n))
    w = x**2
    allocate(h(n), stat=s)
    h = sin(x) * w + s
    call move_alloc(h, t)
    y = sum(t)
    deallocate(w, stat=s)
    y = y + s
    deallocate(w, stat=s)
    y = y + (s - 1)
    if (allocated(h)) y = y + 100
  end subroutine work
end module status_m
subroutine f(n, x, y)
  use status_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  call work(n, x, y)
  if (allocated(w)) y = y + 100
  y = y + 2 * sum(x)
end subroutine f
";

/// Whether a module or SAVE allocatable is allocated, asked by ALLOCATED,
/// STAT= or MOVE_ALLOC under a procedure called through the API, answers
/// as in Fortran on every call: the derivatives (tangent, adjoint, dot
/// product, finite differences, which call `f` many times) have the
/// closed form, and the corpus program `alloc_status.f90` called twice
/// from one engine gives what gfortran prints for a main program calling
/// it twice.
#[test]
fn kept_allocation_status_under_the_api_answers_as_fortran() {
    let bad = three_way(KEPT_STATUS, 0x57a7_0005, 5, &|x| {
        x.iter()
            .map(|&t| t.cos() * t * t + 2.0 * t * t.sin() + 2.0)
            .collect()
    });
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // gfortran -O0 alloc_status.f90 with a main program calling
    // alloc_status(4, x, y, info), then alloc_status(3, x, y, info).
    let expected = [
        ([0.5, -1.25, 2.0, 0.75].as_slice(), 6.657679426723799, 4),
        ([-0.3, 1.1, 0.4].as_slice(), 3.514071021844201, 3),
    ];
    let path = common::corpus::corpus_dir().join("alloc_status.f90");
    for backend in [Backend::Jit, Backend::Interpreter] {
        let options = Options {
            backend,
            ..Options::default()
        };
        let e = Engine::from_files(&[&path], options).unwrap();
        let f = e.procedure(Some("alloc_status")).unwrap();
        for (x, y, n) in expected {
            let mut args = f.args();
            args.set_scalar("n", x.len() as f64).unwrap();
            args.set_array("x", x).unwrap();
            f.call(&mut args).unwrap();
            let got = args.scalar("y").unwrap();
            assert!(
                (got - y).abs() <= 1e-14 * y.abs(),
                "{backend:?}: {got} vs {y}"
            );
            assert_eq!(args.f64s("info").unwrap(), [0.0, 0.0, n as f64, 0.0, 1.0]);
        }
    }
}

/// A recursive procedure using a module ALLOCATABLE array is no owner of
/// it (its inner activations see what the outer one allocated): a main
/// program calling it gives gfortran's result, and a call through the API
/// is a usage error naming the array.
#[test]
fn a_recursive_procedure_shares_kept_arrays_with_its_activations() {
    let procedure = "module m
  double precision, allocatable :: a(:)
end module m
recursive subroutine f(n, s)
  use m
  integer, intent(in) :: n
  double precision, intent(out) :: s
  double precision :: t
  if (n == 2) then
    allocate(a(3))
    a = 1.5d0
    call f(1, t)
    s = t
    deallocate(a)
  else
    s = a(1) + size(a)
  end if
end subroutine f
";
    let e = Engine::from_sources(
        &[("r.f90".to_string(), procedure.to_string())],
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = e.procedure(Some("f")).unwrap();
    let mut args = f.args();
    args.set_scalar("n", 2.0).unwrap();
    let err = f.call(&mut args).expect_err("f takes `a` from its callers");
    assert!(err.message.contains("only a Fortran caller"), "{err}");
    let program = format!(
        "{procedure}program p
  double precision :: s
  call f(2, s)
  print *, s
end program p
"
    );
    let (code, stdout, stderr) = run_source("recursive.f90", &program);
    assert_eq!(code, 0, "{stderr}");
    // gfortran -O0 prints this for the same source.
    assert_eq!(stdout, "   4.5000000000000000     \n");
}

/// A main program calling a procedure three times: its SAVE history (grown
/// when ALLOCATED says it exists) and a module array (allocated when
/// ALLOCATE's STAT= says it was not) persist within the run, and the
/// output is gfortran's (printed by gfortran for this source).
#[test]
fn main_program_keeps_allocation_status_between_calls() {
    let source = "module hist_m
  implicit none
  real(8), allocatable :: w(:)
contains
  subroutine record(x, total, length)
    real(8), intent(in) :: x
    real(8), intent(out) :: total
    integer, intent(out) :: length
    real(8), allocatable, save :: hist(:)
    integer :: s
    if (.not. allocated(hist)) allocate(hist(0))
    hist = [hist, x * (size(hist) + 1)]
    total = sum(hist ** 2)
    length = size(hist)
    allocate(w(2), stat=s)
    if (s == 0) w = x
    w = w + 1
  end subroutine record
end module hist_m
program main
  use hist_m
  implicit none
  real(8) :: t
  integer :: n
  call record(0.5d0, t, n)
  print *, t, n, w
  call record(-1.25d0, t, n)
  print *, t, n, w
  call record(2d0, t, n)
  print *, t, n, w
end program main
";
    let (code, stdout, stderr) = run_source("hist.f90", source);
    assert_eq!(code, 0, "{stderr}");
    let expected =
        "  0.25000000000000000                1   1.5000000000000000        1.5000000000000000     
   6.5000000000000000                2   2.5000000000000000        2.5000000000000000     
   42.500000000000000                3   3.5000000000000000        3.5000000000000000     
";
    assert_eq!(stdout, expected);
}

/// A procedure called through the API that owns a module ALLOCATABLE
/// array keeps it between calls, as a Fortran program does: a call that
/// returns (at its end or by RETURN) with it allocated leaves it so, and
/// the next call's ALLOCATE of it is the located runtime error gfortran
/// stops with; released before returning, the next call succeeds.
#[test]
fn an_api_call_keeps_a_module_array_allocated_for_the_next() {
    let source = "module m
  double precision, allocatable :: a(:)
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  if (k == 3) then
    s = sum(a)
    deallocate(a)
    return
  end if
  allocate(a(n))
  a = 3
  s = sum(a)
  if (k == 1) return
  if (k == 2) deallocate(a)
end subroutine f
";
    common::each_backend_calls(source, |backend, call| {
        for k in [0.0, 1.0] {
            assert_eq!(call(2.0, k).unwrap(), 6.0);
            let err = call(2.0, 2.0).expect_err("allocated by the previous call");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(err.message.contains("e.f90:13:"), "{backend:?}: {err}");
            // The array the previous call kept, read and released.
            assert_eq!(call(5.0, 3.0).unwrap(), 6.0);
        }
        assert_eq!(call(2.0, 2.0).unwrap(), 6.0);
        assert_eq!(call(4.0, 2.0).unwrap(), 12.0);
    });
}

/// Whole-array use, sections, SIZE, LBOUND, UBOUND and SHAPE of
/// unallocated ALLOCATABLE arrays (a local, a module variable, a SAVE
/// local, a dummy the callee allocates, a structure component).
const UNALLOCATED_USES: &str = "module m
  implicit none
  double precision, allocatable :: w(:)
  type box
    double precision, allocatable :: u(:)
  end type box
contains
  subroutine g(k, c, s)
    integer, intent(in) :: k
    double precision, allocatable, intent(inout) :: c(:)
    double precision, intent(inout) :: s
    double precision, allocatable, save :: h(:)
    if (k == 10) s = s + sum(c)
    if (k == 11) allocate(c(2))
    if (k == 12) s = s + size(h)
    if (k == 13) h = 2 * h
    if (k == 14) print *, h
  end subroutine g
end module m
subroutine f(n, k, s)
  use m
  implicit none
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  double precision, allocatable :: a(:, :), c(:)
  double precision :: b(2)
  type(box) :: q
  s = 0
  if (n > 0) allocate(w(n), a(2, n), q%u(n))
  if (k == 1) s = sum(w)
  if (k == 2) s = size(w)
  if (k == 3) s = lbound(a, 2)
  if (k == 4) s = ubound(w, 1)
  if (k == 5) b = shape(a)
  if (k == 6) a = 2 * a
  if (k == 7) s = maxval(w(1:2))
  if (k == 8) s = sum(q%u)
  if (k == 9) s = size(q%u)
  call g(k, c, s)
  if (n > 0) deallocate(w)
end subroutine f
";

/// Reading the shape or values of an unallocated ALLOCATABLE array as a
/// whole (which Fortran forbids) is a runtime error located at the array
/// and naming it, as an element reference is, on both executors; the same
/// statements run when the arrays are allocated.
#[test]
fn whole_array_use_of_an_unallocated_array_is_located() {
    let cases: Vec<(f64, f64, String, String)> = [
        (1, 30, 23, "w"),
        (2, 31, 24, "w"),
        (3, 32, 26, "a"),
        (4, 33, 26, "w"),
        (5, 34, 25, "a"),
        (6, 35, 23, "a"),
        (7, 36, 26, "w"),
        (8, 37, 23, "q%u"),
        (9, 38, 24, "q%u"),
        (10, 13, 30, "c"),
        (12, 15, 31, "h"),
        (13, 16, 26, "h"),
        (14, 17, 27, "h"),
    ]
    .into_iter()
    .map(|(k, line, col, name)| {
        (
            0.0,
            k as f64,
            format!("e.f90:{line}:{col}:"),
            format!("`{name}` is not allocated"),
        )
    })
    .collect();
    let cases: Vec<(f64, f64, &str, &str)> = cases
        .iter()
        .map(|(n, k, at, what)| (*n, *k, at.as_str(), what.as_str()))
        .collect();
    located_runtime_errors(UNALLOCATED_USES, &cases, (2.0, 0.0, 0.0));
    // Allocated, the same statements run.
    for k in [1.0, 2.0, 3.0, 4.0, 7.0, 9.0] {
        located_runtime_errors(
            UNALLOCATED_USES,
            &[],
            (
                3.0,
                k,
                [0.0, 3.0, 1.0, 3.0, 0.0, 0.0, 0.0, 0.0, 3.0][k as usize - 1],
            ),
        );
    }
}

/// The tangent and the adjoint stop at the same place as the primal when
/// a whole-array use finds the array unallocated, and differentiate it
/// when it is allocated: y = sum x^3.
#[test]
fn derivatives_stop_at_an_unallocated_whole_array_use() {
    let source = "module m
  double precision, allocatable :: w(:)
end module m
subroutine f(n, x, y)
  use m
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  if (n > 1) w = x ** 2
  y = sum(w * x)
  if (allocated(w)) deallocate(w)
end subroutine f
";
    let bad = three_way(source, 0x0a11_0c07, 4, &|x| {
        x.iter().map(|t| 3.0 * t * t).collect()
    });
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = engine(source, backend, true);
        let args = point(&e, &[0.5]);
        let errors = [
            e.tangent(Some("f"), &of, &wrt, 1)
                .unwrap()
                .jacobian(&args)
                .err(),
            e.adjoint(Some("f"), &of, &wrt, &AdjointOptions::default())
                .unwrap()
                .jacobian(&args)
                .err(),
        ];
        for err in errors {
            let err = err.expect("w is not allocated");
            assert!(
                err.message.contains("alloc.f90:10:11:")
                    && err.message.contains("`w` is not allocated"),
                "{backend:?}: {err}"
            );
        }
    }
}

/// ALLOCATABLE scalars: a structure dummy whose ALLOCATABLE scalar
/// component (`scale`), ALLOCATABLE structure component (`opts`) and that
/// structure's ALLOCATABLE array component the callee allocates; a deep
/// copy kept after the source's component is released; an ALLOCATABLE
/// local allocated by assignment, released and allocated with SOURCE=.
/// With s1 = sum x, s2 = sum x^2: y = s1 s2 + x_1 s1 / 2 + s1^2.
const SCALARS: &str = "
module probm
  implicit none
  type :: opts_t
    double precision :: tol = 0.5d0
    double precision, allocatable :: w(:)
  end type
  type :: problem_t
    double precision, allocatable :: scale
    type(opts_t), allocatable :: opts
  end type
contains
  subroutine setup(p, n, x)
    type(problem_t), intent(out) :: p
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    p%scale = sum(x)
    allocate(p%opts)
    p%opts%w = x**2
    p%opts%tol = p%opts%tol * x(1)
  end subroutine
end module
subroutine f(n, x, y)
  use probm
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(problem_t) :: p, q
  double precision, allocatable :: t
  call setup(p, n, x)
  q = p
  deallocate(p%opts)
  t = q%scale * sum(q%opts%w)
  y = t + q%opts%tol * q%scale
  deallocate(t)
  allocate(t, source = q%scale ** 2)
  y = y + t
end subroutine
";

#[test]
fn allocatable_scalars_and_structure_components_differentiate() {
    let gradient = |x: &[f64]| {
        let (s1, s2) = (x.iter().sum::<f64>(), x.iter().map(|v| v * v).sum::<f64>());
        x.iter()
            .enumerate()
            .map(|(k, &v)| {
                let own = if k == 0 { s1 / 2.0 } else { 0.0 };
                s2 + 2.0 * s1 * v + x[0] / 2.0 + 2.0 * s1 + own
            })
            .collect()
    };
    let bad = three_way(SCALARS, 0xa11_5ca1a, 5, &gradient);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// ALLOCATE of an allocated ALLOCATABLE scalar (a component and a local)
/// and DEALLOCATE of an unallocated one are located runtime errors on
/// both executors.
#[test]
fn allocatable_scalar_misuse_is_a_located_runtime_error() {
    let source = "subroutine f(n, k, s)
  implicit none
  type :: box
    double precision, allocatable :: v
  end type
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  type(box) :: b
  double precision, allocatable :: t
  if (n > 0) b%v = n
  if (k == 1) allocate(b%v)
  if (k == 2) deallocate(t)
  t = 2
  if (k == 3) allocate(t)
  s = t
end subroutine f
";
    located_runtime_errors(
        source,
        &[
            (
                1.0,
                1.0,
                "e.f90:11:",
                "allocatable scalar `b%v` is already allocated",
            ),
            (
                1.0,
                2.0,
                "e.f90:12:",
                "allocatable scalar `t` is not allocated",
            ),
            (
                0.0,
                3.0,
                "e.f90:14:",
                "allocatable scalar `t` is already allocated",
            ),
        ],
        (0.0, 1.0, 2.0),
    );
}

/// What ALLOCATABLE scalars do not cover yet is a located compile-time
/// error naming the construct.
#[test]
fn unsupported_allocatable_scalars_are_located_compile_errors() {
    let cases = [
        (
            "subroutine g(y)\n  double precision :: y\n  call h(y)\ncontains\n  subroutine h(s)\n    double precision, allocatable, intent(inout) :: s\n    s = 1\n  end subroutine h\nend subroutine g\n",
            "e.f90:3:10",
            "argument `s` of `h` is an ALLOCATABLE scalar: pass an ALLOCATABLE scalar variable",
        ),
        (
            "subroutine g(y)\n  type :: pt\n    double precision :: b(3)\n    character(len=4) :: a(2)\n  end type\n  type(pt), allocatable :: p(:)\n  double precision :: y\n  y = 1\nend subroutine g\n",
            "e.f90:6:13",
            "ALLOCATABLE array of structures `p` of type `pt`, whose component `a` is a CHARACTER array, a deferred-length string, an array of structures or an ALLOCATABLE structure",
        ),
        (
            "subroutine g(y)\n  type :: pt\n    double precision :: a\n  end type\n  type :: box\n    type(pt), allocatable :: p(:)\n  end type\n  double precision :: y\n  type(box) :: b(2)\n  y = 1\nend subroutine g\n",
            "e.f90:9:16",
            "the ALLOCATABLE array of structures component `b%p` of an array of structures",
        ),
    ];
    for (source, at, what) in cases {
        let m = compile_error(source);
        assert!(m.contains(at) && m.contains(what), "{m}");
    }
}

/// ALLOCATABLE arrays of structures whose type has an array component:
/// an INTENT(OUT) dummy the callee allocates, a module array whose every
/// leaf (`kept%x`, `kept%m`) keeps its own storage, a callee that grows
/// its dummy through a local work array. After `make`, `ps(i)%x = (x_i,
/// x_i^2)` and `ps(i)%m = 3 x_i`; `grow` appends one copy of `ps(n)` with
/// `m` doubled. y = sum 3 x_i^3 + sum x_i^2 + 3 x_n^3, so dy/dx_i = 9 x_i^2
/// + 2 x_i, plus 9 x_n^2 for i = n.
const STRUCTURE_ARRAYS: &str = "
module parts_m
  implicit none
  type :: part
    double precision :: x(2), m
  end type
  type(part), allocatable :: kept(:)
contains
  subroutine make(ps, n, x)
    type(part), allocatable, intent(out) :: ps(:)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    integer :: i
    allocate(ps(n))
    do i = 1, n
      ps(i)%x(1) = x(i)
      ps(i)%x(2) = x(i)**2
      ps(i)%m = 3 * x(i)
    end do
  end subroutine make
  subroutine keep(ps)
    type(part), intent(in) :: ps(:)
    if (allocated(kept)) deallocate(kept)
    allocate(kept(size(ps)))
    kept = ps
  end subroutine keep
  subroutine grow(ps)
    type(part), allocatable, intent(inout) :: ps(:)
    type(part), allocatable :: work(:)
    integer :: n
    n = size(ps)
    allocate(work(n + 1))
    work(1:n) = ps
    work(n + 1) = ps(n)
    work(n + 1)%m = 2 * ps(n)%m
    deallocate(ps)
    allocate(ps(n + 1))
    ps = work
  end subroutine grow
end module parts_m

subroutine f(n, x, y)
  use parts_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(part), allocatable :: ps(:)
  call make(ps, n, x)
  call keep(ps)
  y = sum(kept%m * kept%x(2)) + sum(ps%x(1)**2)
  call grow(ps)
  y = y + ps(n + 1)%m * ps(n + 1)%x(2) - ps(n)%m * ps(n)%x(2)
end subroutine f
";

#[test]
fn allocatable_arrays_of_structures_with_array_components_differentiate() {
    let gradient = |x: &[f64]| {
        let last = x.len() - 1;
        x.iter()
            .enumerate()
            .map(|(k, &v)| 9.0 * v * v + 2.0 * v + if k == last { 9.0 * v * v } else { 0.0 })
            .collect()
    };
    let bad = three_way(STRUCTURE_ARRAYS, 0x57a1_ca11, 5, &gradient);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An ALLOCATABLE array of structures whose type has an ALLOCATABLE
/// component: an INTENT(OUT) routine allocates the array, then each
/// element's component to its own size (`c(i)%u` has `i` entries of
/// `x(i)**2`); the array is copied whole (a deep copy), released, and the
/// copy read: y = sum_i i^2 x_i^3.
const RAGGED_STRUCTURES: &str = "
module cells_m
  implicit none
  type :: cell
    double precision :: h
    double precision, allocatable :: u(:)
  end type
contains
  subroutine fill(c, x)
    type(cell), allocatable, intent(out) :: c(:)
    double precision, intent(in) :: x(:)
    integer :: i
    allocate(c(size(x)))
    do i = 1, size(x)
      c(i)%h = i
      allocate(c(i)%u(i))
      c(i)%u = x(i)**2
    end do
  end subroutine
end module

subroutine f(n, x, y)
  use cells_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(cell), allocatable :: c(:), d(:)
  integer :: i
  call fill(c, x)
  d = c
  deallocate(c)
  y = 0
  do i = 1, n
    y = y + d(i)%h * sum(d(i)%u * x(i))
  end do
end subroutine f
";

#[test]
fn allocatable_structures_with_allocatable_components_differentiate() {
    let expected = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, &t)| 3.0 * ((i + 1) * (i + 1)) as f64 * t * t)
            .collect()
    };
    let bad = three_way(RAGGED_STRUCTURES, 0x5eed_ce11, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
