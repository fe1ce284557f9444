//! Runtime errors in generated code come back as errors naming the variable
//! and the Fortran line, through the API and through the command line, and
//! the host process survives them. Unsupported Fortran is rejected with its
//! location.

use adjit::engine::{Backend, Engine, ErrorKind, Options};
use std::process::Command;

const SOURCE: &str = "\
subroutine oob(n, a, k, s)
  integer n, k
  double precision a(n), s
  s = a(k)
end subroutine

subroutine divide(i, j, k)
  integer i, j, k
  k = i / j
end subroutine

subroutine halt(x)
  double precision x
  if (x > 1) stop 'x too large'
  x = 2*x
end subroutine
";

fn engine(backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("errors.f90".into(), SOURCE.into())], options).unwrap()
}

#[test]
fn runtime_errors_are_values_naming_variable_and_line() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(backend);

        let oob = engine.procedure(Some("oob")).unwrap();
        let mut args = oob.args();
        args.apply_settings(&["n=3", "a=1,2,3", "k=4"]).unwrap();
        let e = oob.call(&mut args).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Runtime);
        assert!(
            e.message.contains("errors.f90:4:"),
            "{backend:?}: {}",
            e.message
        );
        assert!(e.message.contains("out of bounds"), "{}", e.message);
        assert!(e.message.contains("`a`"), "{}", e.message);
        // The same handle keeps working after the error.
        args.apply_settings(&["k=2"]).unwrap();
        oob.call(&mut args).unwrap();
        assert_eq!(args.scalar("s").unwrap(), 2.0);

        let divide = engine.procedure(Some("divide")).unwrap();
        let mut args = divide.args();
        args.apply_settings(&["i=7", "j=0"]).unwrap();
        let e = divide.call(&mut args).unwrap_err();
        assert!(e.message.contains("division by zero"), "{}", e.message);
        assert!(e.message.contains("errors.f90:9:"), "{}", e.message);

        let halt = engine.procedure(Some("halt")).unwrap();
        let mut args = halt.args();
        args.apply_settings(&["x=5"]).unwrap();
        let e = halt.call(&mut args).unwrap_err();
        assert!(e.message.contains("STOP"), "{}", e.message);
        assert!(e.message.contains("x too large"), "{}", e.message);
        assert!(e.message.contains("errors.f90:14:"), "{}", e.message);
    }
}

#[test]
fn argument_buffers_are_checked_against_declared_shapes() {
    let engine = engine(Backend::Jit);
    let oob = engine.procedure(Some("oob")).unwrap();
    let mut args = oob.args();
    args.apply_settings(&["n=5", "k=1"]).unwrap();
    // Five elements are declared; give three.
    args.set_array("a", &[1.0, 2.0, 3.0]).unwrap();
    let e = oob.call(&mut args).unwrap_err();
    assert!(e.message.contains("`a`"), "{}", e.message);
    assert!(
        e.message.contains("argument buffer too small"),
        "{}",
        e.message
    );
}

#[test]
fn unsupported_fortran_names_construct_and_location() {
    let src = "subroutine z(c)\n  complex c\n  c = c*c\nend subroutine\n";
    let e = match Engine::from_source("z.f90", src) {
        Err(e) => e,
        Ok(_) => panic!("COMPLEX must be rejected"),
    };
    assert_eq!(e.kind, ErrorKind::Compile);
    assert!(e.message.contains("z.f90:2:"), "{}", e.message);
    assert!(
        e.message.to_lowercase().contains("complex"),
        "{}",
        e.message
    );
}

/// An array given for a scalar dummy of a function that is not ELEMENTAL
/// is a rank mismatch at the argument (as gfortran reports it), whether the
/// array is a whole array, a section or an array expression; the same
/// references to an ELEMENTAL (also PURE ELEMENTAL) function run
/// elementwise.
#[test]
fn arrays_for_scalar_dummies_need_an_elemental_function() {
    let module = "module m
contains
  pure function sq(x) result(y)
    double precision, intent(in) :: x
    double precision :: y
    y = x*x
  end function
  pure elemental function cube(x) result(y)
    double precision, intent(in) :: x
    double precision :: y
    y = x*x*x
  end function
end module
";
    for (body, col) in [
        ("b = sq(a)", 10),
        ("b = sq(a(1:3))", 10),
        ("b = 1 + sq(2*a)", 14),
    ] {
        let src = format!(
            "{module}subroutine s(a, b)\n  use m\n  double precision :: a(3), b(3)\n  {body}\nend subroutine\n"
        );
        let e = match Engine::from_source("el.f90", &src) {
            Err(e) => e,
            Ok(_) => panic!("`{body}` must be rejected"),
        };
        assert_eq!(e.kind, ErrorKind::Compile);
        assert!(
            e.message.contains(&format!(
                "el.f90:17:{col}: error: rank mismatch in argument 1 of `sq`"
            )),
            "{body}: {}",
            e.message
        );
    }
    let src = format!(
        "{module}subroutine s(a, b)\n  use m\n  double precision :: a(3), b(3)\n  b = cube(a(1:3)) + sq(a(2))\nend subroutine\n"
    );
    let engine = Engine::from_source("el.f90", &src).unwrap();
    let s = engine.procedure(Some("s")).unwrap();
    let mut args = s.args();
    args.set_array("a", &[1.0, 2.0, 3.0]).unwrap();
    s.call(&mut args).unwrap();
    let b = args.get("b").unwrap();
    let b: Vec<f64> = (0..b.len()).map(|k| b.get_f64(k)).collect();
    assert_eq!(b, [5.0, 12.0, 31.0]);
}

/// LEN_TRIM, SCAN, VERIFY and INDEX of a number are a located error naming
/// the intrinsic.
#[test]
fn character_searches_of_numbers_are_located_errors() {
    let src = "subroutine f(s, k)\n  real, intent(in) :: s\n  integer, intent(out) :: k\n  k = len_trim(s)\nend subroutine\n";
    let e = match Engine::from_source("t.f90", src) {
        Err(e) => e,
        Ok(_) => panic!("LEN_TRIM of a real must be rejected"),
    };
    assert_eq!(e.kind, ErrorKind::Compile);
    assert!(e.message.contains("t.f90:4:16:"), "{}", e.message);
    assert!(e.message.contains("`len_trim`"), "{}", e.message);
}

/// Runs the `adjit` binary.
fn adjit(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn command_line_reports_runtime_errors_with_location() {
    let dir = std::env::temp_dir().join(format!("adjit-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("errors.f90");
    std::fs::write(&file, SOURCE).unwrap();
    let f = file.to_str().unwrap();
    // (arguments, location, message, exit code): more values than
    // elements is refused before the call, as a usage error.
    let cases: [(&[&str], &str, &str, i32); 4] = [
        (
            &["--entry", "oob", "--set", "n=3", "--set", "k=7"],
            ":4:",
            "out of bounds",
            1,
        ),
        (
            &["--entry", "divide", "--set", "i=1", "--set", "j=0"],
            ":9:",
            "division by zero",
            1,
        ),
        (&["--entry", "halt", "--set", "x=3"], ":14:", "STOP", 1),
        (
            &["--entry", "oob", "--set", "n=2", "--set", "a=1,2,3,4"],
            "",
            "`a` is given 4 values but has 2 elements",
            2,
        ),
    ];
    for interp in [false, true] {
        for (extra, location, message, expected) in cases {
            let mut args = vec!["run", f];
            args.extend_from_slice(extra);
            if interp {
                args.push("--interp");
            }
            let (code, _, stderr) = adjit(&args);
            assert_eq!(code, expected, "{args:?}: {stderr}");
            assert!(
                stderr.contains(location) && stderr.contains(message),
                "{args:?}: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    // A usage error is exit code 2, found by the command line or by the
    // engine (an unknown entry), a runtime error exit code 1 (above).
    let (code, _, stderr) = adjit(&["run", f, "--entry", "nosuch"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no procedure named"), "{stderr}");
    let (code, _, _) = adjit(&["run"]);
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_fails_on_an_injected_wrong_derivative_and_names_the_input() {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = format!("{root}/examples/griewank.f90");
    let args = [
        "check", &file, "--of", "c", "--wrt", "a", "--set", "s=5", "--set", "a=1",
    ];
    let (code, stdout, stderr) = adjit(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .env("ADJIT_CHECK_INJECT", "a(3):1e-4")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a(3)"), "{stderr}");
    assert!(!stderr.contains("a(2)"), "{stderr}");
}

/// Runs the `adjit` binary with one environment variable set.
fn adjit_env(args: &[&str], var: &str, value: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .env(var, value)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The text table row of one input of `adjit check`.
fn check_row<'a>(stdout: &'a str, input: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(input))
        .unwrap_or_else(|| panic!("no row {input} in\n{stdout}"))
}

#[test]
fn check_reports_a_nan_adjoint_on_its_input_as_nan() {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = format!("{root}/examples/griewank.f90");
    let args = [
        "check", &file, "--of", "c", "--wrt", "a", "--set", "s=5", "--set", "a=1",
    ];
    let (code, stdout, stderr) = adjit_env(&args, "ADJIT_CHECK_INJECT", "a(3):NaN");
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("NaN or infinite for: a(3) (adjoint)"),
        "{stderr}"
    );
    assert!(!stderr.contains("a(2)"), "{stderr}");
    // The differences of that input print as NaN, not as 0.
    let row = check_row(&stdout, "a(3)");
    assert_eq!(
        row.split_whitespace().skip(1).take(2).collect::<Vec<_>>(),
        ["NaN", "NaN"],
        "{row}"
    );
    assert!(!check_row(&stdout, "a(2)").contains("NaN"), "{stdout}");
    assert!(!stdout.contains("ok: "), "{stdout}");

    // JSON: the input fails, its NaN differences are the string "NaN".
    let json_args = [&args[..], &["--json"]].concat();
    let (code, stdout, stderr) = adjit_env(&json_args, "ADJIT_CHECK_INJECT", "a(3):NaN");
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["ok"], false);
    let inputs = json["inputs"].as_array().unwrap();
    let a3 = inputs.iter().find(|i| i["input"] == "a(3)").unwrap();
    assert_eq!(a3["ok"], false, "{a3}");
    assert_eq!(a3["adjoint_vs_tangent"], "NaN", "{a3}");
    assert_eq!(a3["non_finite"], serde_json::json!(["adjoint"]), "{a3}");
    let a2 = inputs.iter().find(|i| i["input"] == "a(2)").unwrap();
    assert_eq!(a2["ok"], true, "{a2}");
    assert!(a2["adjoint_vs_tangent"].is_number(), "{a2}");
}

#[test]
fn check_fails_on_a_genuinely_infinite_derivative_and_names_the_input() {
    let dir = std::env::temp_dir().join(format!("adjit-check-inf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("root.f90");
    std::fs::write(
        &file,
        "subroutine root(x, y)\n  double precision x(2), y\n  y = sqrt(x(1)) + x(2)**2\nend subroutine\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    // d sqrt(x)/dx is +inf at x = 0 in every mode.
    let (code, stdout, stderr) = adjit(&["check", f, "--of", "y", "--wrt", "x", "--set", "x=0,1"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("NaN or infinite for: x(1) (adjoint, tangent, finite differences)"),
        "{stderr}"
    );
    let row = check_row(&stdout, "x(1)");
    assert!(!row.contains("0.000e0"), "{row}");
    // Away from 0 the same program passes.
    let (code, stdout, stderr) = adjit(&["check", f, "--of", "y", "--wrt", "x", "--set", "x=2,1"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_tape_beyond_the_ram_budget_spills_to_a_file_and_gives_the_same_gradient() {
    use adjit::ad::adjoint::AdjointOptions;
    use adjit::engine::Selection;
    let root = env!("CARGO_MANIFEST_DIR");
    let path = format!("{root}/examples/griewank.f90");
    let gradient = |budget: usize| {
        let options = Options {
            tape_ram_budget: budget,
            ..Options::default()
        };
        let engine = Engine::from_files(&[&path], options).unwrap();
        let (of, wrt) = (
            Selection::parse_list("c").unwrap(),
            Selection::parse_list("a").unwrap(),
        );
        let adjoint = engine
            .adjoint(None, &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let mut args = adjoint.args();
        args.set_scalar("s", 200_000.0).unwrap();
        let a: Vec<f64> = (0..200_000).map(|i| 0.5 + (i % 11) as f64 * 0.1).collect();
        args.set_array("a", &a).unwrap();
        let tape = adjoint.record(&args).unwrap();
        let stats = tape.stats();
        (adjoint.gradient(&args).unwrap(), stats)
    };
    let ((value, in_ram), ram_stats) = gradient(1 << 30);
    let ((spilled_value, spilled), spill_stats) = gradient(64 << 10);
    assert_eq!(ram_stats.spilled_bytes, 0);
    assert!(spill_stats.bytes() > 64 << 10, "{spill_stats:?}");
    assert!(spill_stats.spilled_bytes > 0, "{spill_stats:?}");
    assert_eq!(value, spilled_value);
    assert_eq!(in_ram, spilled);
}
