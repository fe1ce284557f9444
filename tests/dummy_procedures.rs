//! Dummy procedures (`external fcn` arguments) at the entry: the procedure
//! to pass named through the API (`Options::bind_procedure`) and the
//! command line (`--set fcn=NAME`), primal and derivatives (tangent vs
//! adjoint, dot product, finite differences, analytic values), and the
//! located errors. The gfortran comparison of dummy procedures passed
//! inside a program is the corpus program `dummy_procs.f`.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Engine, ErrorKind, FiniteDifferences, Options, Selection};
use common::check::{dot, mismatches, Rng};
use common::cli::adjit;

const CORPUS: &str = "tests/corpus/dummy_procs.f";

fn corpus_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS)
}

fn bound(entry: &str, dummy: &str, procedure: &str) -> Engine {
    let options = Options::default().bind_procedure(entry, dummy, procedure);
    Engine::from_files(&[corpus_path()], options).expect("the corpus program compiles")
}

#[test]
fn an_entry_taking_a_dummy_procedure_runs_with_the_procedure_named() {
    // Simpson's rule is exact for a cubic: (b^4 - a^4) / 4.
    let engine = bound("simpson", "f", "cube");
    let simpson = engine.procedure(Some("simpson")).unwrap();
    let mut args = simpson.args();
    args.apply_settings(&["a=0.5", "b=1.75"]).unwrap();
    simpson.call(&mut args).unwrap();
    let exact = (1.75f64.powi(4) - 0.5f64.powi(4)) / 4.0;
    assert!((args.scalar("s").unwrap() - exact).abs() < 1e-14 * exact);

    // An intrinsic bound from outside: DSIN.
    let engine = bound("Simpson", "F", " DSIN ");
    let simpson = engine.procedure(Some("simpson")).unwrap();
    let mut args = simpson.args();
    args.apply_settings(&["a=0.5", "b=1.75"]).unwrap();
    simpson.call(&mut args).unwrap();
    let m: f64 = (0.5 + 1.75) / 2.0;
    let expected = (1.75 - 0.5) / 6.0 * (0.5f64.sin() + 4.0 * m.sin() + 1.75f64.sin());
    assert_eq!(args.scalar("s").unwrap(), expected);
}

#[test]
fn derivatives_through_a_bound_solver_agree_three_ways() {
    // solve(resid, ...) with the entry's fcn bound to resid: Newton's method
    // on x**3 + cc*x = i (cc from COMMON is 0 here).
    let engine = bound("solve", "fcn", "resid");
    let solve = engine.procedure(Some("solve")).unwrap();
    let mut args = solve.args();
    args.apply_settings(&["n=3", "ldfjac=3", "x=0.9,1.3,1.5"])
        .unwrap();
    let of = Selection::parse_list("x,fnorm").unwrap();
    let wrt = Selection::parse_list("x").unwrap();
    let tangent = engine.tangent(Some("solve"), &of, &wrt, 3).unwrap();
    let adjoint = engine
        .adjoint(Some("solve"), &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let jt = tangent.jacobian(&args).unwrap();
    let ja = adjoint.jacobian(&args).unwrap();
    let problems = mismatches("adjoint vs tangent", &args, &ja, &jt);
    assert!(problems.is_empty(), "{problems:#?}");
    // Analytic: three Newton steps x <- x - (x^3 - i)/(3x^2) from x0; the
    // derivative of each step is 1 - (1 - 2 i / x^3 ... ) computed by the
    // chain rule here.
    let x0 = [0.9f64, 1.3, 1.5];
    for (i, &start) in x0.iter().enumerate() {
        let target = (i + 1) as f64;
        let (mut x, mut dx) = (start, 1.0);
        for _ in 0..3 {
            // x' = x - (x^3 - t) / (3 x^2) = 2x/3 + t / (3 x^2)
            dx *= 2.0 / 3.0 - 2.0 * target / (3.0 * x * x * x);
            x = 2.0 * x / 3.0 + target / (3.0 * x * x);
        }
        let got = ja.get(i, i);
        assert!(
            (got - dx).abs() < 1e-12 * dx.abs().max(1.0),
            "{got} vs {dx}"
        );
    }
    // Dot product with random directions.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let xd = rng.vec(3);
    let yb = rng.vec(4);
    let jxd = tangent.directional(&args, &xd).unwrap();
    let (_, jtyb) = adjoint.vjp(&args, &yb).unwrap();
    let (lhs, lm) = dot(&jxd, &yb);
    let (rhs, rm) = dot(&xd, &jtyb);
    assert!((lhs - rhs).abs() <= 1e-13 * lm.max(rm), "{lhs} vs {rhs}");
    // Central finite differences.
    let fd = FiniteDifferences::new(&solve)
        .jacobian(&args, &of, &wrt)
        .unwrap();
    for k in 0..fd.matrix.len() {
        let (a, f) = (ja.matrix[k], fd.matrix[k]);
        assert!((a - f).abs() < 1e-6 * a.abs().max(1.0), "{a} vs {f}");
    }
    // The primal run agrees with the driver's solve of the same problem.
    solve.call(&mut args).unwrap();
    let x = args.f64s("x").unwrap();
    for (i, &xi) in x.iter().enumerate() {
        assert!((xi * xi * xi - (i + 1) as f64).abs() < 1e-3, "{x:?}");
    }
}

#[test]
fn the_command_line_binds_dummy_procedures_with_set() {
    let (code, out, err) = adjit(&[
        "grad", CORPUS, "--entry", "simpson", "--set", "f=cube", "--set", "a=0.5", "--set",
        "b=1.5", "--of", "s", "--wrt", "b", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // s = (b^4 - a^4) / 4 exactly, so ds/db = b^3.
    let g = json["gradient"]["b"].as_f64().unwrap();
    assert!((g - 3.375).abs() < 1e-13, "{out}");
    let exact = (1.5f64.powi(4) - 0.5f64.powi(4)) / 4.0;
    assert!((json["value"].as_f64().unwrap() - exact).abs() < 1e-14);

    // check: tangent, adjoint, finite differences and the dot product.
    let (code, out, err) = adjit(&[
        "check",
        CORPUS,
        "--entry",
        "solve",
        "--set",
        "fcn=resid",
        "--set",
        "n=2",
        "--set",
        "ldfjac=2",
        "--set",
        "x=1.1,1.4",
        "--of",
        "x,fnorm",
        "--wrt",
        "x",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn unbound_and_wrongly_bound_dummy_procedures_are_clear_errors() {
    // Not bound: the error names the dummy and how to bind it.
    let engine = Engine::from_files(&[corpus_path()], Options::default()).unwrap();
    let e = engine.procedure(Some("simpson")).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Usage);
    assert!(
        e.message.contains("`f`") && e.message.contains("--set f=NAME"),
        "{}",
        e.message
    );
    assert_eq!(engine.unbound_dummy_procedures("SIMPSON"), vec!["f"]);
    let (code, _, err) = adjit(&["run", CORPUS, "--entry", "solve", "--set", "n=2"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("`fcn`") && err.contains("--set fcn=NAME"),
        "{err}"
    );

    // Bound to something that is no procedure: located at the dummy.
    let (code, _, err) = adjit(&[
        "run", CORPUS, "--entry", "simpson", "--set", "f=nosuch", "--set", "a=1",
    ]);
    assert_eq!(code, 1, "{err}");
    let text = std::fs::read_to_string(corpus_path()).unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.contains("subroutine simpson(f"))
        .unwrap();
    assert!(
        err.contains(&format!("dummy_procs.f:{line}:26:")) && err.contains("`nosuch`"),
        "{err}"
    );
}

#[test]
fn misused_dummy_procedures_are_located_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "subroutine a(y)\n  double precision y\n  call b(y + 1, y)\nend\n\
             subroutine b(f, y)\n  external f\n  double precision y\n  call f(y)\nend\n\
             subroutine c(y)\n  double precision y\n  y = 1\nend\n",
            "t.f90:3:10: error: `f` of `b` is a dummy procedure",
        ),
        (
            "subroutine a(y)\n  double precision y\n  real g\n  external g\n  call b(g, y)\nend\n\
             subroutine b(f, y)\n  double precision f, y\n  external f\n  y = f(y)\nend\n\
             real function g(t)\n  double precision t\n  g = t\nend\n",
            "t.f90:10:7: error: dummy function `f` is real(8) here but `g`, passed for it, returns real(4)",
        ),
        (
            "subroutine a(y)\n  double precision y\n  intrinsic dsin\n  call b(dsin, y)\nend\n\
             subroutine b(f, y)\n  external f\n  double precision y\n  call f(y)\nend\n",
            "t.f90:9:8: error: `f` is the intrinsic function DSIN, which cannot be CALLed",
        ),
        (
            "subroutine a(y)\n  double precision y\n  call b(nothere, y)\nend\n\
             subroutine b(f, y)\n  external f\n  double precision y\n  call f(y)\nend\n",
            "t.f90:3:10: error: `nothere` is not a procedure of the program",
        ),
        (
            "subroutine a(x)\n  real(8) :: x\n  real(8), external :: sq\n  call run(twice, sq, x)\nend\n\
             subroutine run(s, g, x)\n  external s, g\n  real(8) :: x\n  call s(g, x)\nend\n\
             subroutine twice(f, x)\n  real(8) :: x\n  real(4), external :: f\n  x = f(x)\nend\n\
             real(8) function sq(x)\n  real(8) :: x\n  sq = x*x\nend\n",
            "t.f90:14:7: error: dummy function `f` is real(4) here but `sq`, passed for it, returns real(8)",
        ),
    ];
    for (source, expected) in cases {
        let e = Engine::from_source("t.f90", source).err().expect(expected);
        assert!(
            e.message.contains(expected),
            "{}\n--- wanted {expected}",
            e.message
        );
    }
}

/// An internal procedure calls a dummy procedure of its host: bound in the
/// internal procedure's instance as in the host's.
#[test]
fn host_dummy_procedure_in_internal_procedure() {
    let source = "subroutine top(y)\n  double precision y\n  external twice\n  call a(y, twice)\nend\n\
                  subroutine a(y, fcn)\n  double precision y\n  external fcn\n  call inner(y)\n\
                  contains\n  subroutine inner(z)\n    double precision z\n    call fcn(z)\n  end subroutine\nend\n\
                  subroutine twice(z)\n  double precision z\n  z = 2*z + 1\nend\n";
    let engine = Engine::from_source("t.f90", source).expect("compile");
    let p = engine.procedure(Some("top")).expect("top");
    let mut args = p.args();
    args.set_scalar("y", 3.0).unwrap();
    p.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 7.0);
}

/// An internal procedure with a dummy procedure of its own that calls a
/// dummy procedure of its host (and reads a host variable), passed as an
/// actual: each call through the receiving dummy binds its own dummy, the
/// host's is the one bound where it was named (two hosts' instances, bound
/// to different procedures, stay apart). Once a located error.
#[test]
fn internal_procedure_with_own_and_host_dummy_procedures_passed_on() {
    let source = "subroutine top(x, y)\n  real(8) :: x, y(2)\n  real(8), external :: cube, half\n\
                  call a(cube, x, y(1))\n  call a(half, x, y(2))\nend\n\
                  subroutine a(h, x, y)\n  real(8) :: x, y, c\n  real(8), external :: h\n  c = 10\n\
                  call run(inner, x, y)\ncontains\n\
                  subroutine inner(g, x, y)\n    real(8), external :: g\n    real(8) :: x, y\n    y = g(x) + h(x) + c\n  end subroutine\n\
                  end subroutine\n\
                  subroutine run(s, x, y)\n  external s\n  real(8) :: x, y\n  real(8), external :: sq\n  call s(sq, x, y)\nend\n\
                  real(8) function sq(x)\n  real(8) :: x\n  sq = x*x\nend\n\
                  real(8) function cube(x)\n  real(8) :: x\n  cube = x**3\nend\n\
                  real(8) function half(x)\n  real(8) :: x\n  half = x / 2\nend\n";
    let engine = Engine::from_source("t.f90", source).expect("compile");
    let p = engine.procedure(Some("top")).expect("top");
    let mut args = p.args();
    args.set_scalar("x", 3.0).unwrap();
    p.call(&mut args).unwrap();
    let y = args.get("y").unwrap();
    assert_eq!(
        [y.get_f64(0), y.get_f64(1)],
        [9.0 + 27.0 + 10.0, 9.0 + 1.5 + 10.0]
    );
}

/// tests/corpus/optional_procedure.f90: Newton on `x^3 = p` with the
/// OPTIONAL Jacobian given (`r = q p^(1/3)`), and on `x^3 = p + q^2` with
/// it absent (a difference quotient instead, `s = (p + q^2)^(1/3)`): the
/// implicit-function derivatives, tangent and adjoint.
#[test]
fn optional_dummy_procedures_have_the_implicit_function_derivatives() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/optional_procedure.f90");
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    let solve = engine.procedure(Some("solve")).unwrap();
    let mut args = solve.args();
    let (p, q) = (2.0f64, 0.5f64);
    args.apply_settings(&["p=2", "q=0.5"]).unwrap();
    let c = p.cbrt();
    let s = (p + q * q).cbrt();
    let expected = [
        q / (3.0 * c * c),
        c,
        1.0 / (3.0 * s * s),
        2.0 * q / (3.0 * s * s),
    ];
    let bad = common::check::both_modes_against(
        &engine,
        Some("solve"),
        &args,
        "r,s",
        "p,q",
        &expected,
        1e-9,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An entry whose OPTIONAL dummy procedure is not bound runs with it
/// absent (PRESENT is false); one whose body references it anyway stops
/// with a runtime error naming it.
#[test]
fn an_unbound_optional_dummy_procedure_is_absent() {
    let source = "module m
  implicit none
  abstract interface
    double precision function g(x)
      double precision, intent(in) :: x
    end function g
  end interface
contains
  subroutine apply(f, x, y, tries)
    procedure(g) :: f
    procedure(g), optional :: tries
    double precision, intent(in) :: x
    double precision, intent(out) :: y
    y = f(x)
    if (present(tries)) y = y + tries(x)
    if (x < 0) y = tries(y)
  end subroutine apply
  double precision function sq(x)
    double precision, intent(in) :: x
    sq = x*x
  end function sq
end module m
";
    let options = Options::default().bind_procedure("apply", "f", "sq");
    let engine =
        Engine::from_sources(&[("o.f90".to_string(), source.to_string())], options).unwrap();
    let apply = engine.procedure(Some("apply")).unwrap();
    let mut args = apply.args();
    args.apply_settings(&["x=3"]).unwrap();
    apply.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 9.0);
    let mut args = apply.args();
    args.apply_settings(&["x=-1"]).unwrap();
    let e = apply.call(&mut args).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert!(
        e.message.contains("OPTIONAL dummy procedure `tries`") && e.message.contains("not present"),
        "{}",
        e.message
    );
}

/// A dummy function referenced without EXTERNAL (`f` in `simpson`, a
/// Fortran 77 dummy procedure because it is referenced as a function):
/// Simpson's rule is exact for the cubic c x^3 - x, so
/// s = c (b^4 - a^4) / 4 + (a^2 - b^2) / 2, with ds/da = a - c a^3,
/// ds/db = c b^3 - b and ds/dc = (b^4 - a^4) / 4, in tangent and adjoint
/// mode.
#[test]
fn a_dummy_function_without_external_differentiates() {
    let src = "subroutine drive(a, b, c, s)
  double precision a, b, c, s, cube, simpson
  external cube
  s = simpson(cube, a, b, c)
end subroutine drive
double precision function simpson(f, a, b, c)
  double precision f, a, b, c, h
  h = (b - a) / 2
  simpson = (f(a, c) + 4 * f(a + h, c) + f(b, c)) * h / 3
end function simpson
double precision function cube(x, c)
  double precision x, c
  cube = c * x ** 3 - x
end function cube
";
    let engine = Engine::from_source("implicit_dummy.f90", src).unwrap();
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    let (a, b, c): (f64, f64, f64) = (0.5, 1.75, 1.25);
    args.apply_settings(&["a=0.5", "b=1.75", "c=1.25"]).unwrap();
    let expected = [
        ("a", a - c * a * a * a),
        ("b", c * b * b * b - b),
        ("c", (b.powi(4) - a.powi(4)) / 4.0),
    ];
    for (wrt, d) in expected {
        let bad =
            common::check::both_modes_against(&engine, Some("drive"), &args, "s", wrt, &[d], 1e-13);
        assert!(bad.is_empty(), "s wrt {wrt}:\n{}", bad.join("\n"));
    }
}

/// The corpus program where procedures taking dummy procedures are passed
/// as actuals (`call run(newton, cubic, dcubic, x, p)`,
/// `call integrate(simpson, integrand, ...)`).
fn procedure_of_procedures() -> Engine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/procedure_of_procedures.f90");
    Engine::from_files(&[path], Options::default()).expect("the corpus program compiles")
}

/// Solvers handed to a driver find the roots r of x^3 + p x - 3 (Newton and
/// secant) and of exp(q x) - 2 (r = ln 2 / q), so dr/dp = -r / (3 r^2 + p)
/// and dr/dq = -ln 2 / q^2; tangent, adjoint, dot product and finite
/// differences agree.
#[test]
fn a_solver_passed_to_a_driver_differentiates_three_ways() {
    let engine = procedure_of_procedures();
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    let (p, q): (f64, f64) = (3.5, 1.25);
    args.apply_settings(&["p=3.5", "q=1.25"]).unwrap();
    let mut run = args.clone();
    engine
        .procedure(Some("drive"))
        .unwrap()
        .call(&mut run)
        .unwrap();
    let r = run.scalar("r1").unwrap();
    assert!((r * r * r + p * r - 3.0).abs() < 1e-13, "{r}");
    let ln2 = std::f64::consts::LN_2;
    let (dr, dl) = (-r / (3.0 * r * r + p), -ln2 / (q * q));
    let expected = [dr, 0.0, dr, 0.0, 0.0, dl, 0.0, dl];
    let bad = common::check::both_modes_against(
        &engine,
        Some("drive"),
        &args,
        "r1,r2,r3,r4",
        "p,q",
        &expected,
        1e-9,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let (_, bad) =
        common::check::three_ways(&engine, Some("drive"), &args, "r1,r2,r3,r4", "p,q", 1e-6);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An integrator handed a quadrature rule that takes the integrand: the
/// derivative of each rule with respect to c is the same rule applied to
/// d/dc exp(-c x^2) sin(c + x), to round-off, in both modes.
#[test]
fn a_quadrature_rule_passed_with_its_integrand_differentiates_three_ways() {
    let engine = procedure_of_procedures();
    let mut args = engine.procedure(Some("area")).unwrap().args();
    let (c, n) = (1.5f64, 8usize);
    args.apply_settings(&["c=1.5", "n=8"]).unwrap();
    let dg = |x: f64| (-c * x * x).exp() * ((c + x).cos() - x * x * (c + x).sin());
    let h = 2.0 / (2 * n) as f64;
    let simpson = (1..2 * n).fold(dg(0.0) + dg(2.0), |s, i| {
        s + if i % 2 == 1 { 4.0 } else { 2.0 } * dg(i as f64 * h)
    }) * h
        / 3.0;
    let h = 2.0 / n as f64;
    let trapezoid = (1..n).fold((dg(0.0) + dg(2.0)) / 2.0, |s, i| s + dg(i as f64 * h)) * h;
    let bad = common::check::both_modes_against(
        &engine,
        Some("area"),
        &args,
        "s1,s2",
        "c",
        &[simpson, trapezoid],
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let (_, bad) = common::check::three_ways(&engine, Some("area"), &args, "s1,s2", "c", 1e-7);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
