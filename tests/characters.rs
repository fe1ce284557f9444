//! Character data steering real computations: options chosen by name with
//! TRIM, ADJUSTL, ADJUSTR and REPEAT (in SELECT CASE selectors,
//! comparisons, as actual arguments) and character searches of run-time
//! length. Derivatives through the branch taken agree in tangent and
//! adjoint mode, with central differences and with the analytic values;
//! what stays unsupported is a located error.

mod common;

use adjit::engine::{Backend, Engine, Options};
use adjit::ir::Buffer;
use common::check::{both_modes_against, within};
use common::scalar::{central, close, run};

/// The corpus program whose entry `options` picks a formula by a method
/// name that has leading and trailing blanks.
fn options_engine() -> Engine {
    let path = common::corpus::corpus_dir().join("char_intrinsics.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    Engine::from_source("char_intrinsics.f90", &src).unwrap()
}

/// `dy/dx` of `options` for each mode, analytically: the method's formula
/// is applied at `x` twice (by name and by its ADJUSTL) and at `2x` once
/// (by its ADJUSTR), so `dy/dx = 2 g'(x) + 2 g'(2x)`.
fn expected_slope(mode: i64, x: f64) -> f64 {
    let g = |t: f64| match mode {
        // One Newton step for the cube root of 2: 2t/3 + 2/(3 t^2).
        1 => 2.0 / 3.0 - 4.0 / (3.0 * t.powi(3)),
        // t sin t.
        2 | 3 => t.sin() + t * t.cos(),
        // exp(t/2).
        _ => 0.5 * (0.5 * t).exp(),
    };
    2.0 * g(x) + 2.0 * g(2.0 * x)
}

#[test]
fn a_method_chosen_by_name_is_differentiated_through_its_branch() {
    let engine = options_engine();
    for (mode, x) in [(1, 1.5), (2, -0.75), (3, 2.25), (4, 0.5), (1, 0.8)] {
        let inputs = [("mode", mode as f64), ("x", x)];
        let slope = expected_slope(mode, x);
        dy_dx_three_ways(&engine, "options", &inputs, slope, &format!("mode {mode}"));
    }
}

/// Tangent and adjoint of the branch taken satisfy the dot-product
/// identity `<ydot, ybar> = <xdot, xbar>` for random directions.
#[test]
fn tangent_and_adjoint_agree_by_the_dot_product() {
    dot_products_agree(&options_engine(), "options");
}

/// `dy/dx` of `entry` (arguments `mode`, `x`) for modes 1 to 4 satisfies
/// the dot-product identity `<ydot, ybar> = <xdot, xbar>` (relative
/// 1e-13) for random directions.
fn dot_products_agree(engine: &Engine, entry: &str) {
    use adjit::engine::Selection;
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let tangent = engine.tangent(Some(entry), &of, &wrt, 1).unwrap();
    let adjoint = engine
        .adjoint(Some(entry), &of, &wrt, &Default::default())
        .unwrap();
    let mut rng = common::check::Rng(0x5eed_c4a2);
    for mode in 1..=4 {
        let args = run(
            engine,
            entry,
            &[("mode", mode as f64), ("x", 0.9 + 0.1 * mode as f64)],
        );
        let (xdot, ybar) = (rng.next(), rng.next());
        let ydot = tangent.jacobian(&args).unwrap().get(0, 0) * xdot;
        let (_, grad) = adjoint.gradient(&args).unwrap();
        let (lhs, rhs) = (ydot * ybar, xdot * grad[0] * ybar);
        assert!(
            within(lhs, rhs, 1e-13 * lhs.abs().max(1.0)),
            "{entry} mode {mode}: {lhs} vs {rhs}"
        );
    }
}

/// The options parser of `char_runtime_len.f90` picks the formula by
/// `lower(trim(method)) // '_' // kind` (character functions of run-time
/// result length, `//` of run-time-length parts in SELECT CASE and
/// comparisons): `dy/dx` follows the branch chosen, analytically, in
/// tangent and adjoint mode, by central differences and by the dot-product
/// identity, on the JIT and the interpreter.
#[test]
fn options_of_run_time_length_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("char_runtime_len.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    // Newton/fast: x^3 + x + 2x + 3x; bisect/safe: x sin x; Quasi/x:
    // x^2 + 1 (the range 'p':'r'); other/fast: exp(x/2) + 2x + 3x.
    let slope = |mode: i64, x: f64| match mode {
        1 => 3.0 * x * x + 6.0,
        2 => x.sin() + x * x.cos(),
        3 => 2.0 * x,
        _ => 0.5 * (0.5 * x).exp() + 5.0,
    };
    for (jit, engine) in engines(&src) {
        for (mode, x) in [(1, 1.5), (2, 0.5), (3, -0.75), (4, 2.0), (1, -0.4)] {
            let inputs = [("mode", mode as f64), ("x", x)];
            let what = format!("mode {mode} (jit {jit})");
            dy_dx_three_ways(&engine, "drive", &inputs, slope(mode, x), &what);
        }
        dot_products_agree(&engine, "drive");
    }
}

/// Comparisons and SELECT CASE (values and ranges) of `//` with parts of
/// run-time length, ADJUSTR of a `character(len=*)` dummy and a function
/// result of run-time length, blank-padded as Fortran compares, also
/// when blank; LEN of a function reference of run-time length. The
/// interpreter and the JIT give gfortran's values (printed by gfortran
/// for this source).
#[test]
fn run_time_length_values_compare_as_gfortran_does() {
    let src = "
subroutine g(t, n, k)
  character(len=*), intent(in) :: t
  integer, intent(in) :: n
  integer, intent(out) :: k
  k = 0
  if (t // repeat(' ', n) == t) k = k + 1
  if (t // 'a' < t // 'b') k = k + 2
  if (trim(t) // repeat('-', n) >= t) k = k + 4
  if (adjustr(t) // '|' /= t // '|') k = k + 8
  if (echo(t) // '' == t) k = k + 16
  if (echo(trim(t)) < 'm') k = k + 32
  select case (trim(t) // repeat('z', n))
  case ('')
    k = k + 100
  case ('a':'aa')
    k = k + 200
  case ('ab':'abzz')
    k = k + 300
  case default
    k = k + 400
  end select
  k = k + 1000 * len(echo(t // t))
contains
  function echo(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    r = s
  end function echo
end subroutine g
";
    for (jit, engine) in engines(src) {
        let g = engine.procedure(Some("g")).unwrap();
        for (text, n, expected) in [
            ("ab  ", 2, 8363),
            (" ab", 0, 6455),
            (" ", 3, 2455),
            ("a", 0, 2255),
            ("zz", 1, 4423),
        ] {
            let mut args = g.args();
            args.set_buffer("t", Buffer::Char(text.as_bytes().to_vec()))
                .unwrap();
            args.set_scalar("n", n as f64).unwrap();
            g.call(&mut args).unwrap();
            let got = args.scalar("k").unwrap() as i64;
            assert_eq!(got, expected, "{text:?} (jit {jit})");
        }
    }
}

/// Character searches of a `character(len=*)` dummy give gfortran's
/// positions (values printed by gfortran) for lengths decided by the
/// caller, in the interpreter and in the JIT.
#[test]
fn searches_of_run_time_length() {
    let src = "
subroutine g(t, lt, sc, vb, ib, vf)
  character(len=*), intent(in) :: t
  integer, intent(out) :: lt, sc, vb, ib, vf
  lt = len_trim(t)
  sc = scan(t, 'b', back=.true.)
  vb = verify(t, ' b', .true.)
  ib = index(t, 'ab', back=.true.)
  vf = verify(t, ' ')
end subroutine g
";
    for (jit, engine) in engines(src) {
        let g = engine.procedure(None).unwrap();
        for (text, expected) in [
            ("  ab cab  ", [8, 8, 7, 7, 3]),
            ("ab", [2, 2, 1, 1, 1]),
            ("   ", [0, 0, 0, 0, 0]),
        ] {
            let mut args = g.args();
            args.set_buffer("t", Buffer::Char(text.as_bytes().to_vec()))
                .unwrap();
            g.call(&mut args).unwrap();
            let got: Vec<i64> = ["lt", "sc", "vb", "ib", "vf"]
                .iter()
                .map(|n| args.scalar(n).unwrap() as i64)
                .collect();
            assert_eq!(got, expected, "{text:?} (jit {jit})");
        }
    }
}

/// What stays unsupported is a located error naming the intrinsic.
#[test]
fn unsupported_character_results_are_located_errors() {
    let echo = "module m\n  integer :: n0 = 3\ncontains\n  function echo(s) result(r)\n    character(len=*), intent(in) :: s\n    character(len=len(s)) :: r\n    r = s\n  end function echo\n  function wide(s) result(r)\n    character(len=*), intent(in) :: s\n    character(len=n0) :: r\n    r = s\n  end function wide\nend module m\n";
    let trimmed = format!("{echo}subroutine f(s, t)\n  use m\n  character(len=*), intent(in) :: s\n  character(len=20), intent(out) :: t\n  t = s(1:ichar(echo(s)))\nend subroutine\n");
    let module_len = format!("{echo}subroutine f(s, t)\n  use m\n  character(len=*), intent(in) :: s\n  character(len=20), intent(out) :: t\n  t = wide(s)\nend subroutine\n");
    common::assert_compile_errors(
        "t.f90",
        &[
        (
            trimmed.as_str(),
            "t.f90:19:17:",
            "character function `echo` whose result length is not a constant used here",
        ),
        (
            module_len.as_str(),
            "t.f90:19:7:",
            "reads `n0`",
        ),
        (
            "subroutine f(x, t)\n  real, intent(in) :: x\n  character(len=20), intent(out) :: t\n  t = trim(x)\nend subroutine\n",
            "t.f90:4:12:",
            "`trim`",
        ),
    ],
    );
}

/// The status names returned by a character function choose the formula
/// (`char_functions.f90`); `dy/dx` analytically per status code.
#[test]
fn character_function_results_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("char_functions.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    let engine = Engine::from_source("char_functions.f90", &src).unwrap();
    let slope = |code: i64, x: f64| match code {
        0 => x.cos() + 1.0 + 2.0 * x - 8.0 * (2.0 * x).sin() - 9.0 * x.sin(),
        1 => 4.0 * x + 1.0 - 10.0 * (2.0 * x).sin() - 16.0 * x.sin(),
        _ => 5.0 + 2.0 * x - 8.0 * (2.0 * x).sin() - 6.0 * x.sin(),
    };
    for (code, x) in [(0, 1.5), (1, -0.5), (2, 0.75), (0, 0.3)] {
        let inputs = [("code", code as f64), ("x", x)];
        let expected = slope(code, x);
        dy_dx_three_ways(
            &engine,
            "report",
            &inputs,
            expected,
            &format!("code {code}"),
        );
    }
}

/// A value computed from a local character variable (LEN_TRIM, INDEX, a
/// comparison) reaches the reverse sweep as recorded in the forward sweep
/// (character variables are not restored there).
#[test]
fn values_from_local_character_data_reach_the_reverse_sweep() {
    let src = "
subroutine f(k, x, y)
  integer, intent(in) :: k
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=10) :: s
  s = repeat('ab', 2)
  if (k > 1) s = 'abc abc'
  y = x**2 * len_trim(s) + sin(x) * index(s, 'c', back=.true.)
  if (s(1:3) == 'abc') y = y + x * len(trim(s))
end subroutine f
";
    let engine = Engine::from_source("f.f90", src).unwrap();
    for (k, x) in [(1, 0.7), (2, -1.3)] {
        let inputs = [("k", k as f64), ("x", x)];
        let expected = if k > 1 {
            14.0 * x + 7.0 * x.cos() + 7.0
        } else {
            8.0 * x
        };
        dy_dx_three_ways(&engine, "f", &inputs, expected, &format!("k {k}"));
    }
}

/// A solver passes its dummy function (declared by an interface body, not
/// EXTERNAL) on to its line search; the step rule is chosen by name. The
/// Jacobian of both results in both parameters agrees in tangent and
/// adjoint mode and with central differences (`interface_dummy.f90`).
#[test]
fn a_dummy_function_passed_on_is_differentiated() {
    let path = common::corpus::corpus_dir().join("interface_dummy.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    let engine = Engine::from_source("interface_dummy.f90", &src).unwrap();
    for (p, x0) in [(2.0, 0.25), (3.5, 1.0)] {
        let inputs = [("p", p), ("x0", x0)];
        let args = run(&engine, "fit", &inputs);
        let mut fd = Vec::new();
        for of in ["x", "xh"] {
            for wrt in ["p", "x0"] {
                fd.push(central(&engine, "fit", &inputs, wrt, of));
            }
        }
        // The line searches move by whole steps: x = xb + 0.1 f(xb, p) with
        // xb = x0 + s; at p = 2, x0 = 0.25 the fixed rule stops at xb = 1
        // (x = 1.3), so dx/dp = 0.1 (xb - 2 (xb - p)) = 0.3 and
        // dx/dx0 = 1 + 0.1 (2 (xb - p) + p) = 1.
        if p == 2.0 {
            assert!(close(args.scalar("x").unwrap(), 1.3, 1e-15));
            assert!(close(fd[0], 0.3, 1e-7) && close(fd[1], 1.0, 1e-7), "{fd:?}");
        }
        let bad = both_modes_against(&engine, Some("fit"), &args, "x,xh", "p,x0", &fd, 1e-6);
        assert!(bad.is_empty(), "p {p}: {bad:?}");
    }
}

/// An OPTIONAL dummy procedure (by attribute or statement) may be given
/// or not: PRESENT tells which.
#[test]
fn optional_dummy_procedures_may_be_absent() {
    let iface = "  abstract interface\n    real(8) function fn(t)\n      real(8), intent(in) :: t\n    end function fn\n  end interface\n";
    for body in [
        "  procedure(fn), optional :: f\n",
        "  interface\n    real(8) function f(t)\n      real(8), intent(in) :: t\n    end function f\n  end interface\n  optional :: f\n",
    ] {
        let src = format!(
            "module m\n{iface}contains\n  real(8) function opt(x, f)\n  real(8), intent(in) :: x\n{body}  opt = x\n  if (present(f)) opt = f(x)\n  end function opt\n  real(8) function twice(t)\n  real(8), intent(in) :: t\n  twice = 2*t\n  end function twice\nend module m\n"
        );
        for (bind, expected) in [(false, 1.5), (true, 3.0)] {
            let mut options = Options::default();
            if bind {
                options = options.bind_procedure("opt", "f", "twice");
            }
            let engine = Engine::from_sources(&[("t.f90".to_string(), src.clone())], options)
                .unwrap_or_else(|e| panic!("{}\n{src}", e.message));
            let opt = engine.procedure(Some("opt")).unwrap();
            let mut args = opt.args();
            args.apply_settings(&["x=1.5"]).unwrap();
            opt.call(&mut args).unwrap();
            let result = opt.result_name().unwrap();
            assert_eq!(args.scalar(&result).unwrap(), expected, "{src}");
        }
    }
}

/// Character expressions of run-time length passed to `character(len=*)`
/// dummies (TRIM, `//` with such parts, ADJUSTR of a dummy, REPEAT with a
/// computed count) steer the formulas of `char_actuals.f90`:
/// `y = 2x (1 + 0.1 L) + p(x) + q(2x)` with `L` the length of the name
/// plus one and `p`, `q` chosen by name. The derivative agrees in tangent
/// and adjoint mode with the analytic value and central differences.
#[test]
fn character_actuals_of_run_time_length_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("char_actuals.f90");
    let src = std::fs::read_to_string(&path).unwrap();
    let engine = Engine::from_source("char_actuals.f90", &src).unwrap();
    let slope = |mode: i64, x: f64| match mode {
        1 => 2.8 + x.sin() + x * x.cos() + 2.0 * ((2.0 * x).sin() + 2.0 * x * (2.0 * x).cos()),
        2 => 2.8 + 0.5 * (0.5 * x).exp() + x.exp(),
        3 => 3.0 + 3.0 * x * x - 2.0 + 16.0,
        _ => 3.2 + 10.0 + 16.0,
    };
    for (mode, n, x) in [
        (1, 2, 1.25),
        (2, 0, -0.5),
        (3, 3, 0.75),
        (4, 1, 2.0),
        (1, 5, -0.3),
    ] {
        let inputs = [("mode", mode as f64), ("n", n as f64), ("x", x)];
        let expected = slope(mode, x);
        dy_dx_three_ways(&engine, "drive", &inputs, expected, &format!("mode {mode}"));
    }
}

/// Concatenations as values: in comparisons (blank-padded to the longer
/// operand), as intrinsic arguments and actual arguments, with parts of
/// run-time length; the interpreter and the JIT agree with gfortran's
/// values (printed by gfortran for this source).
#[test]
fn concatenations_of_run_time_length_compare_and_pass() {
    let src = "
subroutine g(t, n, k, lens)
  character(len=*), intent(in) :: t
  integer, intent(in) :: n
  integer, intent(out) :: k, lens(4)
  character(len=6) :: u
  u = t
  k = 0
  if (trim(u) // 'x' == u(1:n) // 'x') k = k + 1
  if ('<' // trim(u) // '>' == '<' // u // '>') k = k + 10
  if (trim(u) // 'z' > u) k = k + 100
  k = k + 1000 * index(u(1:2) // '.' // u, '.')
  call l(trim(t), lens(1))
  call l(t // repeat('-', n) // trim(adjustl(t)), lens(2))
  call l(adjustr(t), lens(3))
  call l(repeat(trim(t), n), lens(4))
contains
  subroutine l(s, m)
    character(len=*), intent(in) :: s
    integer, intent(out) :: m
    m = len(s) + 100 * len_trim(s)
  end subroutine l
end subroutine g
";
    for (jit, engine) in engines(src) {
        let g = engine.procedure(None).unwrap();
        for (text, n, expected) in [
            ("ab  ", 2, [3101, 202, 808, 404, 404]),
            (" ab", 0, [3100, 303, 505, 303, 0]),
            ("   ", 3, [3100, 0, 606, 3, 0]),
        ] {
            let mut args = g.args();
            args.set_buffer("t", Buffer::Char(text.as_bytes().to_vec()))
                .unwrap();
            args.set_scalar("n", n as f64).unwrap();
            g.call(&mut args).unwrap();
            let mut got = vec![args.scalar("k").unwrap() as i64];
            got.extend(args.f64s("lens").unwrap().iter().map(|&v| v as i64));
            assert_eq!(got, expected, "{text:?} (jit {jit})");
        }
    }
}

/// An engine for `src` (as `g.f90`) per backend, the interpreter first:
/// `(true, engine)` runs on the JIT.
fn engines(src: &str) -> [(bool, Engine); 2] {
    [false, true].map(|jit| {
        let options = Options {
            backend: if jit {
                Backend::Jit
            } else {
                Backend::Interpreter
            },
            ..Options::default()
        };
        let sources = [("g.f90".to_string(), src.to_string())];
        let engine = Engine::from_sources(&sources, options)
            .unwrap_or_else(|e| panic!("{}\n{src}", e.message));
        (jit, engine)
    })
}

/// The derivative of `y` with respect to `x` of `entry` at `inputs`:
/// tangent and adjoint equal `expected` to 1e-13, central differences to
/// 1e-7.
fn dy_dx_three_ways(
    engine: &Engine,
    entry: &str,
    inputs: &[(&str, f64)],
    expected: f64,
    what: &str,
) {
    let args = run(engine, entry, inputs);
    let bad = both_modes_against(engine, Some(entry), &args, "y", "x", &[expected], 1e-13);
    assert!(bad.is_empty(), "{what}: {bad:?}");
    let fd = central(engine, entry, inputs, "x", "y");
    assert!(close(fd, expected, 1e-7), "{what}: {fd} vs {expected}");
}

/// Character functions passed as actual arguments
/// (`character_function_actual.f90`) choose the formula by the names they
/// return: analytic derivatives in both modes, then tangent against
/// adjoint, the dot product and central differences.
#[test]
fn character_functions_passed_as_actuals_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("character_function_actual.f90");
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    // k = 2: `small` names low, high, high; `evenness` even, odd, even.
    let x = 1.5f64;
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    args.apply_settings(&["k=2", "x=1.5"]).unwrap();
    let e = (x / 2.0).exp() / 2.0;
    let expected = [3.0 + 4.0 * x.cos() + e, 2.0 * x + 3.0 * x.cos() + e];
    let bad = both_modes_against(
        &engine,
        Some("drive"),
        &args,
        "y1,y2",
        "x",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let (_, bad) = common::check::three_ways(&engine, Some("drive"), &args, "y1,y2", "x", 1e-7);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // An EXTERNAL character function: positive at x - 2 = 0.5, negative at
    // 2 - x = -0.5, so y1 = w x^3 + 8 w and y2 = (4 - x) / w + 8 w.
    let (x, w) = (2.5f64, 0.5f64);
    let mut args = engine.procedure(Some("tagged")).unwrap().args();
    args.apply_settings(&["x=2.5", "w=0.5"]).unwrap();
    let expected = [
        3.0 * w * x * x,
        x.powi(3) + 8.0,
        -1.0 / w,
        -(4.0 - x) / (w * w) + 8.0,
    ];
    let bad = both_modes_against(
        &engine,
        Some("tagged"),
        &args,
        "y1,y2",
        "x,w",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let (_, bad) = common::check::three_ways(&engine, Some("tagged"), &args, "y1,y2", "x,w", 1e-7);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// TRIM and LEN_TRIM of a character function result of run-time length
/// (`trim_runtime_function.f90`): with s = "ab", y = (2 x + sin x + x^2) * 2,
/// with s = "newton", y = (6 x + sin x) e^x - x^3; analytic derivatives in
/// both modes, then the three-way check.
#[test]
fn trim_of_a_run_time_length_function_result_steers_the_derivative() {
    let path = common::corpus::corpus_dir().join("trim_runtime_function.f90");
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    for (s, x) in [("ab", 1.5f64), ("newton", -0.5)] {
        let mut args = engine.procedure(Some("shape")).unwrap().args();
        args.apply_settings(&[&format!("s={s}"), &format!("x={x}")])
            .unwrap();
        let d = if s == "ab" {
            (2.0 + x.cos() + 2.0 * x) * 2.0
        } else {
            (6.0 + x.cos()) * x.exp() + (6.0 * x + x.sin()) * x.exp() - 3.0 * x * x
        };
        let bad = both_modes_against(&engine, Some("shape"), &args, "y", "x", &[d], 1e-13);
        assert!(bad.is_empty(), "{s}: {}", bad.join("\n"));
        let (_, bad) = common::check::three_ways(&engine, Some("shape"), &args, "y", "x", 1e-7);
        assert!(bad.is_empty(), "{s}: {}", bad.join("\n"));
    }
}

/// ADJUSTL, ADJUSTR, INDEX and SCAN of a character function result of
/// run-time length (`adjust_runtime_function.f90`, `framed(s)` is `s`
/// after two blanks, two blanks longer): with s = "ab",
/// y = 2 (4 x + sin x); with s = "newton", y = 8 x^2 e^x - x^3; with
/// s = "dw", y = 4 x^2 e^x + 1; analytic derivatives in both modes, then
/// the three-way check.
#[test]
fn searches_of_a_run_time_length_function_result_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("adjust_runtime_function.f90");
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    for (s, x) in [("ab", 1.5f64), ("newton", -0.5), ("dw", 0.75)] {
        let mut args = engine.procedure(Some("locate")).unwrap().args();
        args.apply_settings(&[&format!("s={s}"), &format!("x={x}")])
            .unwrap();
        let d = match s {
            "ab" => 2.0 * (4.0 + x.cos()),
            "newton" => (16.0 * x + 8.0 * x * x) * x.exp() - 3.0 * x * x,
            _ => (8.0 * x + 4.0 * x * x) * x.exp(),
        };
        let bad = both_modes_against(&engine, Some("locate"), &args, "y", "x", &[d], 1e-13);
        assert!(bad.is_empty(), "{s}: {}", bad.join("\n"));
        let (_, bad) = common::check::three_ways(&engine, Some("locate"), &args, "y", "x", 1e-7);
        assert!(bad.is_empty(), "{s}: {}", bad.join("\n"));
    }
}

/// ICHAR / IACHAR and CHAR / ACHAR (KIND= too) are inverse on all 256
/// codes, give the ASCII codes of literals, dummies and substrings, and
/// ACHAR assigned to a substring folds case, in the interpreter and the
/// JIT (a code out of 0..255 at run time is a runtime error).
#[test]
fn character_codes_are_ascii_both_ways() {
    let src = "
subroutine g(s, n, t, bad, a, z, first, last, big, c)
  character(len=*), intent(in) :: s
  integer, intent(in) :: n
  character(len=6), intent(out) :: t
  integer, intent(out) :: bad, a, z, first, last, c
  integer(8), intent(out) :: big
  integer :: i
  bad = 0
  do i = 0, 255
    if (ichar(char(i)) /= i .or. iachar(achar(i, kind=1)) /= i) bad = bad + 1
    if (char(i) /= achar(i)) bad = bad + 1
    if (i < 255) then
      if (.not. before(char(i), achar(i + 1))) bad = bad + 1
    end if
  end do
  a = ichar('a')
  z = iachar('Z', 4)
  first = iachar(s(1:1))
  last = ichar(s(len(s):len(s)))
  big = iachar(s(2:2), kind=8) * 2_8**40
  t = s
  do i = 1, len(t)
    if (iachar(t(i:i)) >= 97 .and. iachar(t(i:i)) <= 122) t(i:i) = achar(iachar(t(i:i)) - 32)
  end do
  c = ichar(achar(n))
contains
  logical function before(p, q)
    character, intent(in) :: p, q
    before = ichar(p) < ichar(q)
  end function before
end subroutine g
";
    for (jit, engine) in engines(src) {
        let g = engine.procedure(None).unwrap();
        let mut args = g.args();
        args.set_buffer("s", Buffer::Char(b"mIx~d!".to_vec()))
            .unwrap();
        args.set_scalar("n", 200.0).unwrap();
        g.call(&mut args).unwrap();
        let got: Vec<i64> = ["bad", "a", "z", "first", "last", "big", "c"]
            .iter()
            .map(|n| args.scalar(n).unwrap() as i64)
            .collect();
        assert_eq!(
            got,
            [0, 97, 90, 109, 33, 73 << 40, 200],
            "codes (jit {jit})"
        );
        assert_eq!(
            args.buffers()[args.names().iter().position(|n| n == "t").unwrap()],
            Buffer::Char(b"MIX~D!".to_vec()),
            "jit {jit}"
        );
        args.set_scalar("n", 256.0).unwrap();
        assert!(
            g.call(&mut args).is_err(),
            "ACHAR(256) must fail (jit {jit})"
        );
    }
}

/// The analytic Jacobian of `gemv2` (`blas_lsame.f`: the reference BLAS
/// LSAME choosing `y := alpha*op(A)*x + beta*y` with `x = (sin alpha, 2)`,
/// `y = (1, beta)`) of `(y1, y2)` in `(alpha, beta)`, row-major.
fn gemv2_jacobian(transposed: bool, alpha: f64, beta: f64) -> [f64; 4] {
    let (s, c) = (alpha.sin(), alpha.cos());
    // op(A) x = (p1 sin + q1, p2 sin + q2) for A = [1 3; -2 0.5].
    let ((p1, q1), (p2, q2)) = if transposed {
        ((1.0, -4.0), (3.0, 1.0))
    } else {
        ((1.0, 6.0), (-2.0, 1.0))
    };
    [
        p1 * s + q1 + alpha * p1 * c,
        1.0,
        p2 * s + q2 + alpha * p2 * c,
        2.0 * beta,
    ]
}

/// The netlib LSAME (ICHAR of its arguments) picks the product of a
/// GEMV-like routine by its TRANS letter in either case: the Jacobian in
/// tangent and adjoint mode matches the analytic one, central differences
/// and the dot-product identity, on the interpreter and the JIT.
#[test]
fn lsame_chooses_the_product_whatever_the_case() {
    let path = common::corpus::corpus_dir().join("blas_lsame.f");
    let src = std::fs::read_to_string(&path).unwrap();
    for backend in [Backend::Interpreter, Backend::Jit] {
        let options = Options {
            backend,
            ..Options::default()
        };
        let sources = [("blas_lsame.f".to_string(), src.clone())];
        let engine = Engine::from_sources(&sources, options).unwrap();
        let p = engine.procedure(Some("gemv2")).unwrap();
        for (trans, alpha, beta) in [
            ("N", 1.5, 0.5),
            ("n", -2.0, 0.25),
            ("T", 0.75, 2.0),
            ("t", 1.25, -1.0),
            ("C", 3.0, 1.0),
            ("c", 0.5, -0.5),
        ] {
            let transposed = !trans.eq_ignore_ascii_case("n");
            let at = |a: f64, b: f64| {
                let mut args = p.args();
                args.set_buffer("trans", Buffer::Char(trans.as_bytes().to_vec()))
                    .unwrap();
                args.set_scalar("alpha", a).unwrap();
                args.set_scalar("beta", b).unwrap();
                p.call(&mut args).unwrap();
                args
            };
            let args = at(alpha, beta);
            assert_eq!(args.scalar("info").unwrap(), 0.0, "{trans}");
            let expected = gemv2_jacobian(transposed, alpha, beta);
            let bad = both_modes_against(
                &engine,
                Some("gemv2"),
                &args,
                "y1,y2",
                "alpha,beta",
                &expected,
                1e-12,
            );
            assert!(bad.is_empty(), "{trans} ({backend:?}): {bad:?}");
            // Central differences, column by column.
            let h = 1e-6;
            for (k, (da, db)) in [(h, 0.0), (0.0, h)].into_iter().enumerate() {
                let (up, down) = (at(alpha + da, beta + db), at(alpha - da, beta - db));
                for (i, y) in ["y1", "y2"].into_iter().enumerate() {
                    let fd = (up.scalar(y).unwrap() - down.scalar(y).unwrap()) / (2.0 * h);
                    assert!(
                        close(fd, expected[2 * i + k], 1e-6),
                        "{trans} d{y}: {fd} vs {}",
                        expected[2 * i + k]
                    );
                }
            }
            // Dot product <ydot, ybar> = <xdot, xbar> for random directions.
            let (of, wrt) = (
                adjit::engine::Selection::parse_list("y1,y2").unwrap(),
                adjit::engine::Selection::parse_list("alpha,beta").unwrap(),
            );
            let jt = engine
                .tangent(Some("gemv2"), &of, &wrt, 2)
                .unwrap()
                .jacobian(&args)
                .unwrap();
            let ja = engine
                .adjoint(Some("gemv2"), &of, &wrt, &Default::default())
                .unwrap()
                .jacobian(&args)
                .unwrap();
            let mut rng = common::check::Rng(0x1c4a_2b1a);
            let (xdot, ybar) = ([rng.next(), rng.next()], [rng.next(), rng.next()]);
            let lhs: f64 = (0..2)
                .map(|i| ybar[i] * (0..2).map(|k| jt.get(i, k) * xdot[k]).sum::<f64>())
                .sum();
            let rhs: f64 = (0..2)
                .map(|k| xdot[k] * (0..2).map(|i| ja.get(i, k) * ybar[i]).sum::<f64>())
                .sum();
            assert!(
                within(lhs, rhs, 1e-13 * lhs.abs().max(1.0)),
                "{trans}: {lhs} vs {rhs}"
            );
        }
        // A letter that is no option is reported, as the reference routine does.
        let mut args = p.args();
        args.set_buffer("trans", Buffer::Char(b"x".to_vec()))
            .unwrap();
        p.call(&mut args).unwrap();
        assert_eq!(args.scalar("info").unwrap(), 1.0);
    }
}

/// Misuse of the character-code intrinsics is a located error naming the
/// intrinsic.
#[test]
fn character_code_misuse_is_a_located_error() {
    let wrap = |body: &str| {
        format!("subroutine f(s, i, c)\n  character(len=4), intent(in) :: s\n  integer, intent(out) :: i\n  character, intent(out) :: c\n  {body}\nend subroutine\n")
    };
    let cases = [
        (
            "i = ichar(s)",
            "t.f90:5:13:",
            "the argument of `ichar` must have length 1, not 4",
        ),
        (
            "i = iachar('ab')",
            "t.f90:5:14:",
            "`iachar` must have length 1",
        ),
        (
            "c = achar(300)",
            "t.f90:5:13:",
            "the argument of `achar` is 300",
        ),
        (
            "c = char(65, kind=4)",
            "t.f90:5:21:",
            "unsupported character kind 4 in `char`",
        ),
        (
            "i = ichar(2.5)",
            "t.f90:5:13:",
            "the argument of `ichar` must be character data",
        ),
        (
            "c = achar(1.5)",
            "t.f90:5:13:",
            "the argument of `achar` must be an integer",
        ),
        (
            "i = iachar('a', kind=2)",
            "t.f90:5:24:",
            "unsupported integer kind in `iachar`",
        ),
    ]
    .map(|(body, at, what)| (wrap(body), at, what));
    common::assert_compile_errors("t.f90", &cases);
}

/// Positions found by INDEX / SCAN / LEN_TRIM in character data built of
/// run-time length (a function result of non-constant length as the
/// substring, REPEAT of run-time data, `//` with a run-time part as the
/// argument; `search_built_strings.f90`) steer the derivative:
/// `y = (n1 x + n6 x^2 + l sin x)`, times `exp(x)` when the `w` appended
/// to `repeat(s, k)` is found past `len(s)`; analytic values in both
/// modes, then tangent against adjoint, the dot product and central
/// differences.
#[test]
fn positions_in_built_strings_steer_the_derivative() {
    let path = common::corpus::corpus_dir().join("search_built_strings.f90");
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    // (settings, n(1), n(6), len_trim(repeat(s // framed(s), k)), exp factor)
    for (settings, n1, n6, l, grows) in [
        (["s=ab", "k=2", "x=1.5"], 303.0, 300.0, 11.0, true),
        (["s=newt", "k=3", "x=-0.5"], 507.0, 503.0, 29.0, false),
    ] {
        let x: f64 = settings[2][2..].parse().unwrap();
        let p = n1 * x + n6 * x * x + l * x.sin();
        let dp = n1 + 2.0 * n6 * x + l * x.cos();
        let slope = if grows { (dp + p) * x.exp() } else { dp };
        let mut args = engine.procedure(Some("probe")).unwrap().args();
        args.apply_settings(&settings).unwrap();
        let bad = both_modes_against(&engine, Some("probe"), &args, "y", "x", &[slope], 1e-13);
        assert!(bad.is_empty(), "{settings:?}: {}", bad.join("\n"));
        let (_, bad) = common::check::three_ways(&engine, Some("probe"), &args, "y", "x", 1e-7);
        assert!(bad.is_empty(), "{settings:?}: {}", bad.join("\n"));
    }
}
