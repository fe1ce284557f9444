//! Deferred-length CHARACTER variables (`character(len=:), allocatable`):
//! a method name and a label held in such strings choose what is
//! computed (`deferred_strings.f90`), and the derivative through the
//! branch taken agrees in tangent and adjoint mode with the analytic value
//! and central differences; misuse is a located runtime error, and what
//! stays unsupported a located compile error.

mod common;

use adjit::engine::{Backend, Engine, ErrorKind, Options};
use adjit::ir::Buffer;
use common::check::{both_modes_against, three_ways};
use common::scalar::close;

/// The corpus program `file` on one backend.
fn corpus_engine(file: &str, backend: Backend) -> Engine {
    let path = common::corpus::corpus_dir().join(file);
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_files(&[path], options).unwrap()
}

/// Runs `blend(method, k, x)`: the arguments after the call.
fn blend(engine: &Engine, method: &str, k: f64, x: f64) -> adjit::engine::Args {
    let p = engine.procedure(Some("blend")).unwrap();
    let mut args = p.args();
    args.set_buffer("method", Buffer::Char(method.as_bytes().to_vec()))
        .unwrap();
    args.set_scalar("k", k).unwrap();
    args.set_scalar("x", x).unwrap();
    p.call(&mut args).unwrap();
    args
}

/// `dy/dx` of `blend`, analytically. The label is `M`, `k` marks `#`,
/// `_v` and `M`'s first letter: `y = 1.5 (f(x) [2 for EXP] + w x^2 [k >
/// 0] - x [len(label) > 4])` with `w = len(label) + (len(M) + 1) / 2`.
fn expected_slope(method: &str, k: usize, x: f64) -> f64 {
    let m = method.trim().to_uppercase();
    let (f, scale) = match m.as_str() {
        "SIN" => (x.cos(), 1.0),
        "EXP" => (x.exp(), 2.0),
        "POLY" => (1.0 + x + 0.5 * x * x, 1.0),
        _ => (1.0, 1.0),
    };
    let label_len = m.len() + k + 3;
    let w = label_len as f64 + 0.5 * (m.len() + 1) as f64;
    let marked = if k > 0 { 2.0 * w * x } else { 0.0 };
    let long = if label_len > 4 { 1.0 } else { 0.0 };
    1.5 * (scale * f + marked - long)
}

#[test]
fn strings_choosing_the_method_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_strings.f90", backend);
        for (method, k, x) in [
            ("sin", 1, 0.75),
            ("Exp", 2, -0.5),
            ("Poly", 3, 1.25),
            ("tanh", 0, 0.5),
        ] {
            let args = blend(&engine, method, k as f64, x);
            let m = method.trim();
            let label_len = m.len() + k + 3;
            let n = args.scalar("n").unwrap();
            assert_eq!(n, (label_len + 10 * m.len()) as f64, "{method}");
            let expected = expected_slope(method, k, x);
            let bad =
                both_modes_against(&engine, Some("blend"), &args, "y", "x", &[expected], 1e-13);
            assert!(bad.is_empty(), "{method}: {bad:?}");
            let h = 1e-6;
            let y_at = |x: f64| blend(&engine, method, k as f64, x).scalar("y").unwrap();
            let fd = (y_at(x + h) - y_at(x - h)) / (2.0 * h);
            assert!(close(fd, expected, 1e-7), "{method}: {fd} vs {expected}");
        }
    }
}

/// Runs `body` over the strings `s` and `t` in both executors and
/// returns their runtime error messages.
fn runtime_errors(body: &str) -> Vec<String> {
    let source = format!(
        "subroutine f(x, y)
  implicit none
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=:), allocatable :: s, t
  y = x
{body}
end subroutine f
"
    );
    let mut messages = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, "e.f90", &source);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        let err = f.call(&mut args).expect_err(body);
        assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
        messages.push(err.message);
    }
    messages
}

#[test]
fn misuse_is_a_located_runtime_error() {
    for (body, at, what) in [
        ("  t = s // 'x'", "e.f90:7:", "`s` is not allocated"),
        (
            "  if (s == 'a') y = 2 * x",
            "e.f90:7:",
            "`s` is not allocated",
        ),
        ("  y = len(s)", "e.f90:7:", "`s` is not allocated"),
        (
            "  s = 'ab'\n  allocate(character(len=3) :: s)",
            "e.f90:8:",
            "`s` is already allocated",
        ),
        ("  deallocate(t)", "e.f90:7:", "`t` is not allocated"),
    ] {
        for m in runtime_errors(body) {
            assert!(m.contains(at), "{body}: {m}");
            assert!(m.contains(what), "{body}: {m}");
        }
    }
}

/// What stays unsupported is a located compile error naming the entity.
#[test]
fn unsupported_deferred_strings_are_located_errors() {
    common::assert_compile_errors(
        "t.f90",
        &[
        (
            "module m\ncontains\n  integer function n(a)\n    character(len=*), intent(in) :: a(:)\n    n = size(a)\n  end function\n  subroutine f(x)\n    real(8) :: x\n    character(len=:), allocatable :: s(:)\n    s = ['ab', 'cd']\n    x = n(s(1:1))\n  end subroutine\nend module m\n",
            "t.f90:11:11:",
            "array section of `s` does not match the type of the dummy",
        ),
        (
            "module m\n  type :: t\n    character(len=:), allocatable :: names(:, :)\n  end type\nend module m\n",
            "t.f90:3:",
            "deferred-length CHARACTER component `names`",
        ),
        (
            "subroutine f(x)\n  real(8) :: x\n  character(len=4), allocatable :: t(:, :)\n  x = 1\nend subroutine\n",
            "t.f90:3:",
            "ALLOCATABLE CHARACTER array `t` of rank above 1",
        ),
        (
            "module m\n  type :: t\n    character(len=:), allocatable :: name\n  end type\ncontains\n  subroutine f(x)\n    real(8) :: x\n    type(t) :: a(3)\n    x = 1\n  end subroutine\nend module m\n",
            "t.f90:",
            "deferred-length CHARACTER component `a%name` of an array of structures",
        ),
        (
            "module m\ncontains\n  subroutine fill(key)\n    character(len=:), allocatable, intent(out) :: key\n    key = 'k'\n  end subroutine\n  subroutine f(x)\n    real(8) :: x\n    character(len=8) :: label\n    call fill(label)\n    x = len(label)\n  end subroutine\nend module m\n",
            "t.f90:10:15:",
            "the actual argument `label` passed to `fill` is not a deferred-length CHARACTER variable, as its dummy `key`",
        ),
        (
            "subroutine f(x)\n  real(8) :: x\n  character(len=:), allocatable :: t(:, :)\n  x = 1\nend subroutine\n",
            "t.f90:3:",
            "deferred-length CHARACTER array `t` of rank 2",
        ),
        (
            "subroutine f(x)\n  real(8) :: x\n  x = sum([real(8) :: 1, 2])\nend subroutine\n",
            "t.f90:3:12:",
            "type specification in an array constructor other than `character(len=n) ::`",
        ),
        (
            "subroutine f(x)\n  real(8) :: x\n  character(len=:) :: s\n  x = 1\nend subroutine\n",
            "t.f90:3:",
            "`s` (`character(len=:)`) must be ALLOCATABLE",
        ),
        (
            "subroutine f(x)\n  real(8) :: x\n  character(len=:), allocatable :: s\n  allocate(s)\n  x = 1\nend subroutine\n",
            "t.f90:4:",
            "`allocate(character(len=n) :: s)`",
        ),
    ],
    );
}

/// A SAVE string keeps its value between calls, growing by one letter
/// per call; a string assigned from itself in a loop.
#[test]
fn saved_strings_grow_between_calls() {
    let src = "subroutine f(x, y, n)
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer, intent(out) :: n
  character(len=:), allocatable, save :: history
  character(len=:), allocatable :: word
  integer :: i
  if (.not. allocated(history)) history = ''
  history = history // 'a'
  word = ''
  do i = 1, len(history)
    word = 'b' // word // 'c'
  end do
  n = len(word) + 100 * index(word, 'bc')
  y = x * len(history)
end subroutine f
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, "s.f90", src);
        let f = e.procedure(Some("f")).unwrap();
        for call in 1..=3 {
            let mut args = f.args();
            args.set_scalar("x", 2.0).unwrap();
            f.call(&mut args).unwrap();
            assert_eq!(args.scalar("y").unwrap(), 2.0 * call as f64);
            let n = 2 * call + 100 * call;
            assert_eq!(args.scalar("n").unwrap(), n as f64);
        }
    }
}

/// `model(method, level, x)` of `deferred_string_dummies.f90`: the
/// arguments after the call.
fn model(engine: &Engine, method: &str, level: f64, x: f64) -> adjit::engine::Args {
    let p = engine.procedure(Some("model")).unwrap();
    let mut args = p.args();
    args.set_buffer("method", Buffer::Char(method.as_bytes().to_vec()))
        .unwrap();
    args.set_scalar("level", level).unwrap();
    args.set_scalar("x", x).unwrap();
    p.call(&mut args).unwrap();
    args
}

/// Callees allocate (INTENT(OUT)) and append to (INTENT(INOUT)) a
/// deferred-length key that selects the model: the key's length and parts
/// come back to the caller, and `dy/dx` agrees in tangent and adjoint mode
/// with the analytic value and central differences. The key is the method
/// lower-cased, `-lv` per level and `-end`: `y = f(x) p + len(key) x` with
/// `p = level + 1` parts.
#[test]
fn keys_built_by_callees_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_string_dummies.f90", backend);
        for (method, level, x) in [
            ("quad", 2, 0.5),
            ("Cubic", 1, -0.75),
            ("log", 3, 1.5),
            ("flat", 0, 2.0),
        ] {
            let args = model(&engine, method, level as f64, x);
            let key_len = method.len() + 3 * level + 4;
            let parts = level + 1;
            let n = args.scalar("n").unwrap();
            assert_eq!(n, (100 * key_len + parts) as f64, "{method}");
            let slope = match method.to_lowercase().as_str() {
                "quad" => 2.0 * x,
                "cubic" => 3.0 * x * x - 1.0,
                "log" => 2.0 * x / (1.0 + x * x),
                _ => 2.0,
            };
            let expected = slope * parts as f64 + key_len as f64;
            let bad =
                both_modes_against(&engine, Some("model"), &args, "y", "x", &[expected], 1e-13);
            assert!(bad.is_empty(), "{method}: {bad:?}");
            let h = 1e-6;
            let y_at = |x: f64| model(&engine, method, level as f64, x).scalar("y").unwrap();
            let fd = (y_at(x + h) - y_at(x - h)) / (2.0 * h);
            assert!(close(fd, expected, 1e-7), "{method}: {fd} vs {expected}");
        }
    }
}

/// A callee reading its INTENT(OUT) deferred-length dummy before
/// allocating it (released at entry) fails at run time, naming it.
#[test]
fn reading_a_released_intent_out_string_is_a_runtime_error() {
    let src = "module m
contains
  subroutine fill(s, n)
    character(len=:), allocatable, intent(out) :: s
    integer, intent(out) :: n
    n = len(s)
  end subroutine fill
  subroutine f(x, y)
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    character(len=:), allocatable :: key
    integer :: n
    key = 'abc'
    call fill(key, n)
    y = x * n
  end subroutine f
end module m
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, "o.f90", src);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        let err = f.call(&mut args).expect_err("unallocated");
        assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
        assert!(err.message.contains("o.f90:6:"), "{}", err.message);
        assert!(
            err.message.contains("`s` is not allocated"),
            "{}",
            err.message
        );
    }
}

/// Calls `entry` with the CHARACTER argument `method` and the scalar
/// `inputs`: the arguments after the call.
fn call_with_method(
    engine: &Engine,
    entry: &str,
    method: &str,
    inputs: &[(&str, f64)],
) -> adjit::engine::Args {
    let p = engine.procedure(Some(entry)).unwrap();
    let mut args = p.args();
    args.set_buffer("method", Buffer::Char(method.as_bytes().to_vec()))
        .unwrap();
    for (name, value) in inputs {
        args.set_scalar(name, *value).unwrap();
    }
    p.call(&mut args).unwrap();
    args
}

/// `dy/d(wrt)` of `entry` at `args` (the call of `method` and `inputs`)
/// is `expected`: by tangent and adjoint (relative `tol`), by central
/// differences (relative 1e-7), and tangent and adjoint agree by the
/// dot-product identity.
fn assert_slope(
    engine: &Engine,
    entry: &str,
    (method, inputs): (&str, &[(&str, f64)]),
    args: &adjit::engine::Args,
    wrt: &str,
    (expected, tol): (f64, f64),
) {
    let bad = both_modes_against(engine, Some(entry), args, "y", wrt, &[expected], tol);
    assert!(bad.is_empty(), "{method}: {bad:?}");
    let (_, bad) = three_ways(engine, Some(entry), args, "y", wrt, 1e-6);
    assert!(bad.is_empty(), "{method}: {bad:?}");
    let h = 1e-6;
    let y_at = |delta: f64| {
        let shifted: Vec<(&str, f64)> = inputs
            .iter()
            .map(|&(n, v)| (n, if n == wrt { v + delta } else { v }))
            .collect();
        let args = call_with_method(engine, entry, method, &shifted);
        args.scalar("y").unwrap()
    };
    let fd = (y_at(h) - y_at(-h)) / (2.0 * h);
    assert!(close(fd, expected, 1e-7), "{method}: {fd} vs {expected}");
}

/// Functions returning deferred-length strings (`to_upper`, `join`,
/// `digits`, `make_key`) build the key `METHOD:level` that is compared,
/// selected on, joined and measured: `y = (f(x) + W x) J + len(m) x / 2`
/// with `W = len(key) + (len(m) + 1) / 4` and `J = len(key) + 2 +
/// digits(level)`, and `n = len(m) + 1 + 100 (1 + digits(level))`.
#[test]
fn functions_returning_strings_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_string_functions.f90", backend);
        for (method, level, x) in [
            ("newton", 3, 0.5),
            ("Secant", 12, -0.75),
            ("bisect", 0, 1.25),
            ("other", 407, 2.0),
        ] {
            let inputs = [("level", level as f64), ("x", x)];
            let args = call_with_method(&engine, "evaluate", method, &inputs);
            let m = method.len() as f64;
            let nd = level.to_string().len() as f64;
            assert_eq!(args.scalar("n").unwrap(), m + 1.0 + 100.0 * (1.0 + nd));
            let key_len = m + 1.0 + nd;
            let w = key_len + 0.25 * (m + 1.0);
            let j = key_len + 2.0 + nd;
            let (f, slope) = match method.to_uppercase().as_str() {
                "NEWTON" => (x * x, 2.0 * x),
                "SECANT" => (x.sin(), x.cos()),
                "BISECT" => (x.exp(), x.exp()),
                _ => (x, 1.0),
            };
            let y = (f + w * x) * j + 0.5 * m * x;
            assert!(close(args.scalar("y").unwrap(), y, 1e-14), "{method}");
            let expected = (slope + w) * j + 0.5 * m;
            let problem = (method, &inputs[..]);
            assert_slope(&engine, "evaluate", problem, &args, "x", (expected, 1e-13));
        }
    }
}

/// A solver's options structure holds its method as a deferred-length
/// component and weights as an ALLOCATABLE array component, set by a
/// structure constructor and copied deeply by assignment: `y = sqrt(a) +
/// a` (Newton), `1 + a/2 + a^2/3 + a^3/4 + a` (poly) or `len(m) a + a`,
/// and `n = len(m) + 5 + 100 len(m) + 100000`.
#[test]
fn options_structures_holding_strings_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_string_components.f90", backend);
        for (method, a) in [("newton", 2.0), ("poly", 0.5), ("Scale", 1.5)] {
            let inputs = [("a", a)];
            let args = call_with_method(&engine, "run_solver", method, &inputs);
            let m = method.len() as f64;
            assert_eq!(args.scalar("n").unwrap(), 101.0 * m + 5.0 + 100000.0);
            let expected: f64 = match method {
                "newton" => 0.5 / f64::sqrt(a) + 1.0,
                "poly" => 0.5 + 2.0 * a / 3.0 + 0.75 * a * a + 1.0,
                _ => m + 1.0,
            };
            let problem = (method, &inputs[..]);
            assert_slope(
                &engine,
                "run_solver",
                problem,
                &args,
                "a",
                (expected, 1e-12),
            );
        }
    }
}

/// A function that leaves its deferred-length result unassigned fails
/// at run time where it is referenced, naming the function's result; so
/// does reading an unallocated deferred-length component.
#[test]
fn unassigned_results_and_components_are_runtime_errors() {
    let src = "module m
  type :: opts
    character(len=:), allocatable :: method
  end type
contains
  function pick(s) result(r)
    character(len=*), intent(in) :: s
    character(len=:), allocatable :: r
    if (len(s) > 3) r = s
  end function pick
  subroutine f(x, y)
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    type(opts) :: o
    y = x * len(pick('long'))
    if (x > 1) y = x * len(pick('ab'))
    if (x < 0) y = len(o%method)
  end subroutine f
end module m
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, "r.f90", src);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_scalar("x", 0.5).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 2.0);
        for (x, at, what) in [
            (
                2.0,
                "r.f90:16:",
                "function `pick` returned without assigning its deferred-length result `r`",
            ),
            (-1.0, "r.f90:17:", "`o%method` is not allocated"),
        ] {
            let mut args = f.args();
            args.set_scalar("x", x).unwrap();
            let err = f.call(&mut args).expect_err("unallocated");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(err.message.contains(at), "{}", err.message);
            assert!(err.message.contains(what), "{}", err.message);
        }
    }
}

/// `score(method, x)` of `deferred_string_tables.f90`: the parameter
/// named `method`, looked up in a module table of deferred-length names
/// defined at `x` (`rate` 0.5 x, `decay` 0.25, `gain` 1.5 + x, `shift`
/// -0.125; 1 for another name), times `x`. Its slope, analytically.
fn table_slope(method: &str, x: f64) -> f64 {
    match method {
        "rate" => x,
        "decay" => 0.25,
        "gain" => 1.5 + 2.0 * x,
        "shift" => -0.125,
        _ => 1.0,
    }
}

#[test]
fn names_looked_up_in_arrays_of_strings_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_string_tables.f90", backend);
        for (method, x) in [
            ("rate", 0.75),
            ("decay", -1.5),
            ("gain", 0.5),
            ("none", 2.0),
        ] {
            let inputs = [("x", x)];
            let args = call_with_method(&engine, "score", method, &inputs);
            assert_slope(
                &engine,
                "score",
                (method, &inputs),
                &args,
                "x",
                (table_slope(method, x), 1e-13),
            );
        }
    }
}

/// Misuse of arrays of deferred-length strings is a located runtime
/// error naming the array: an element of an unallocated array read or
/// written, a substring past an element's length.
#[test]
fn misused_arrays_of_strings_are_located_runtime_errors() {
    let source = "subroutine f(k, x, y)
  implicit none
  integer, intent(in) :: k
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=:), allocatable :: names(:)
  y = x
  if (k == 1) y = len_trim(names(2)) * x
  if (k == 2) names(1) = 'abc'
  allocate(character(len=4) :: names(2))
  names(1) = 'abcd'
  if (k == 3) y = index(names(1)(2:7), 'c') * x
  if (k == 4) y = size(names) * x
end subroutine f
";
    check_misuse_located(
        "n.f90",
        source,
        &[
            (1.0, "n.f90:8:", "`names` is not allocated"),
            (2.0, "n.f90:9:", "`names` is not allocated"),
            (3.0, "n.f90:12:", "`names`"),
        ],
    );
}

/// Comparisons of deferred-length data combined by `.or.` (each copies
/// its operand in loops) are made before the statement: the left one's
/// value was used in another block and the JIT refused the module.
#[test]
fn comparisons_of_strings_combine_in_one_condition() {
    let source = "subroutine f(x, y)
  implicit none
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=:), allocatable :: s, keys(:)
  s = 'abc'
  keys = [character(len=3) :: 'xy', 'abc']
  y = x
  if (s(1:1) == 'J' .or. s(1:1) == 'a') y = 2 * x
  if (keys(1) == s .or. keys(2) == s .and. len(keys) == 3) y = y + 3 * x
  y = y + 2 + len(s) * x
end subroutine f
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, "c.f90", source);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_scalar("x", 0.5).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 2.0 * 0.5 + 3.0 * 0.5 + 2.0 + 1.5);
        let bad = both_modes_against(&e, Some("f"), &args, "y", "x", &[8.0], 1e-13);
        assert!(bad.is_empty(), "{bad:?}");
    }
}

/// `fit(method, n, x)` of `deferred_string_array_dummies.f90`: a callee
/// lists the first `n` of `lin quad cubic exp log` (at least one) in an
/// array of deferred-length strings, another appends `sqrt`; the method
/// found among them (or among `tanh sin`, else `none`) picks `f`, and
/// `y = f(x) + q x + c x^2` with `q` the position of `QUAD` among the
/// upper-cased names (0 when `n` < 2) and `c` that of the method in `[lin,
/// quad]`; `k = 100 p + w + 6000`, `p` the method's position among the
/// names, `w` the longest name's length. The slope and `k`, analytically.
fn registry_fit(method: &str, n: usize, x: f64) -> (f64, f64) {
    let listed = ["lin", "quad", "cubic", "exp", "log"];
    let mut names: Vec<&str> = listed[..n.clamp(1, 5)].to_vec();
    names.push("sqrt");
    let chosen = if names.contains(&method) || ["tanh", "sin"].contains(&method) {
        method
    } else {
        "none"
    };
    let slope = match chosen {
        "lin" => 2.0,
        "quad" => 2.0 * x,
        "cubic" => 3.0 * x * x - 1.0,
        "sqrt" => x / (1.0 + x * x).sqrt(),
        "tanh" => 1.0 / (x.cosh() * x.cosh()),
        "sin" => 2.0 * (2.0 * x).cos(),
        _ => 0.5 * (0.5 * x).exp(),
    };
    let at = |table: &[&str], key: &str| table.iter().position(|&t| t == key).map_or(0, |p| p + 1);
    let q = at(&names, "quad") as f64;
    let c = at(&["lin", "quad"], method) as f64;
    let position = at(&names, method);
    let widest = names.iter().map(|s| s.len()).max().unwrap_or(0);
    let k = 100 * position + widest + 1000 * 6;
    (slope + q + 2.0 * c * x, k as f64)
}

/// Arrays of deferred-length strings built, grown and measured by callees
/// through `character(len=:), allocatable :: names(:)` dummies, searched
/// through `character(len=*) :: table(:)` dummies (given the array, a
/// CHARACTER array of constant length, an array constructor): the
/// method found steers `dy/dx`, agreeing in tangent and adjoint mode with
/// the analytic value and central differences.
#[test]
fn arrays_of_strings_passed_to_procedures_steer_the_derivative() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = corpus_engine("deferred_string_array_dummies.f90", backend);
        for (method, n, x) in [
            ("quad", 3, 0.5),
            ("cubic", 5, -0.75),
            ("sqrt", 2, 1.5),
            ("sin", 4, 0.25),
            ("lin", 1, 0.5),
            ("none", 1, 2.0),
        ] {
            let inputs = [("n", n as f64), ("x", x)];
            let args = call_with_method(&engine, "fit", method, &inputs);
            let (slope, k) = registry_fit(method, n, x);
            assert_eq!(args.scalar("k").unwrap(), k, "{method} {n}");
            assert_slope(
                &engine,
                "fit",
                (method, &inputs),
                &args,
                "x",
                (slope, 1e-13),
            );
        }
    }
}

/// A constructor of strings with an implied DO and no type specification
/// (`[(labels(i), i = n, 1, -1)]`, of the first item's length), assigned
/// to an array of deferred-length strings and given to a `character(len=*)
/// :: a(:)` dummy: `y = sum_i len_trim(picked(i)) x^i = sum_i (n + 1 - i)
/// x^i`, `k = 100 n + 5 + 1000 count`.
#[test]
fn implied_do_constructors_of_strings_steer_the_derivative() {
    let source = "module picking
  implicit none
contains
  integer function count_long(a, at_least)
    character(len=*), intent(in) :: a(:)
    integer, intent(in) :: at_least
    integer :: i
    count_long = 0
    do i = 1, size(a)
      if (len_trim(a(i)) >= at_least) count_long = count_long + 1
    end do
  end function count_long

  subroutine pick(n, x, y, k)
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    character(len=5) :: labels(4)
    character(len=:), allocatable :: picked(:)
    integer :: i
    labels(1) = 'a'
    labels(2) = 'bb'
    labels(3) = 'ccc'
    labels(4) = 'dddd'
    picked = [(labels(i), i = n, 1, -1)]
    k = 100 * size(picked) + len(picked) &
        + 1000 * count_long([character(len=3) :: (picked(i), i = 1, size(picked))], 2)
    y = 0.0d0
    do i = 1, size(picked)
      y = y + len_trim(picked(i)) * x ** i
    end do
  end subroutine pick
end module picking
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = common::engine_on(backend, "p.f90", source);
        for (n, x) in [(1usize, 0.5), (3, -0.75), (4, 1.25)] {
            let p = engine.procedure(Some("pick")).unwrap();
            let mut args = p.args();
            args.set_scalar("n", n as f64).unwrap();
            args.set_scalar("x", x).unwrap();
            p.call(&mut args).unwrap();
            let long = n.saturating_sub(1);
            let k = 100 * n + 5 + 1000 * long;
            assert_eq!(args.scalar("k").unwrap(), k as f64, "{n}");
            let y: f64 = (1..=n).map(|i| (n + 1 - i) as f64 * x.powi(i as i32)).sum();
            assert!(close(args.scalar("y").unwrap(), y, 1e-14), "{n}");
            let slope: f64 = (1..=n)
                .map(|i| (n + 1 - i) as f64 * i as f64 * x.powi(i as i32 - 1))
                .sum();
            let bad = both_modes_against(&engine, Some("pick"), &args, "y", "x", &[slope], 1e-13);
            assert!(bad.is_empty(), "{n}: {bad:?}");
        }
    }
}

/// An ALLOCATABLE CHARACTER component of constant length
/// (`character(len=12), allocatable :: name`) keeps its length: ALLOCATE
/// without a type specification gives it, an assignment pads or cuts to
/// it, LEN reads it; the name chosen steers `dy/dx`: `y = f(x) + len(name)
/// x` with `f` = `x^2` for `quadratic...`, `sin x` for `sine`, else `x`.
#[test]
fn constant_length_allocatable_components_keep_their_length() {
    let source = "module named
  implicit none
  type :: item
    character(len=12), allocatable :: name
    character(len=4), allocatable :: codes(:)
  end type item
contains
  subroutine run(method, x, y, k)
    character(len=*), intent(in) :: method
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    type(item) :: a, b
    k = 0
    if (.not. allocated(a%name)) k = 1
    allocate(a%name)
    a%name = method
    allocate(a%codes(3))
    a%codes(1) = method
    b = a
    b%name = 'other'
    select case (a%name)
    case ('quadratic-model')
      y = x * x
    case ('quadratic-mo')
      y = x * x
    case ('sine')
      y = sin(x)
    case default
      y = x
    end select
    y = y + len(a%name) * x
    k = k + 10 * len_trim(a%name) + 1000 * len(b%codes) + 100 * len_trim(b%codes(1))
  end subroutine run
end module named
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = common::engine_on(backend, "c.f90", source);
        for (method, x) in [("quadratic-model", 0.5), ("sine", -0.75), ("flat", 1.5)] {
            let inputs = [("x", x)];
            let args = call_with_method(&engine, "run", method, &inputs);
            let name = &method[..method.len().min(12)];
            let code = &method[..method.len().min(4)];
            let k = 1 + 10 * name.len() + 4000 + 100 * code.len();
            assert_eq!(args.scalar("k").unwrap(), k as f64, "{method}");
            let f = match name {
                "quadratic-mo" => 2.0 * x,
                "sine" => x.cos(),
                _ => 1.0,
            };
            assert_slope(
                &engine,
                "run",
                (method, &inputs),
                &args,
                "x",
                (f + 12.0, 1e-13),
            );
        }
    }
}

/// Misuse of arrays of strings passed to procedures is a located runtime
/// error naming the array: an unallocated array given to a `character(len=*)
/// :: a(:)` dummy, a substring past the end of an element read through
/// it, an unallocated element of a constant-length component.
#[test]
fn misused_string_array_arguments_are_located_runtime_errors() {
    let source = "module m
  implicit none
  type :: rec
    character(len=8), allocatable :: tags(:)
  end type rec
contains
  integer function tail(a, j)
    character(len=*), intent(in) :: a(:)
    integer, intent(in) :: j
    tail = index(a(1)(2:j), 'c')
  end function tail

  subroutine f(k, x, y)
    integer, intent(in) :: k
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    character(len=:), allocatable :: names(:)
    type(rec) :: r
    y = x
    if (k == 1) y = tail(names, 2) * x
    names = [character(len=4) :: 'abcd', 'ef']
    if (k == 2) y = tail(names, 7) * x
    if (k == 3) y = len_trim(r%tags(1)) * x
    if (k == 4) y = tail(names, 4) * x
  end subroutine f
end module m
";
    check_misuse_located(
        "a.f90",
        source,
        &[
            (1.0, "a.f90:20:", "`names` is not allocated"),
            (2.0, "a.f90:10:", "`a`"),
            (3.0, "a.f90:23:", "`r%tags` is not allocated"),
        ],
    );
}

/// Runs `f(k, x, y)` of `source` (a file named `file`) on both executors:
/// `k = 4` at `x = 0.5` gives `y = 1`; each `(k, at, what)` of `misuses`
/// fails at run time with a message holding the location `at` and `what`.
fn check_misuse_located(file: &str, source: &str, misuses: &[(f64, &str, &str)]) {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = common::engine_on(backend, file, source);
        let f = e.procedure(Some("f")).unwrap();
        let mut args = f.args();
        args.set_scalar("k", 4.0).unwrap();
        args.set_scalar("x", 0.5).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 1.0, "{backend:?}");
        for &(k, at, what) in misuses {
            let mut args = f.args();
            args.set_scalar("k", k).unwrap();
            args.set_scalar("x", 0.5).unwrap();
            let err = f.call(&mut args).expect_err("misuse");
            assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
            assert!(err.message.contains(at), "{k}: {}", err.message);
            assert!(err.message.contains(what), "{k}: {}", err.message);
        }
    }
}
