//! The command line's conventions (clap): `--version`, per-command
//! `--help` with examples (exit 0), shell completions, typo suggestions
//! and usage errors (exit 2); and input hygiene: values set twice, more
//! values than elements, a selection left empty by an unset size, values
//! an INTEGER cannot hold, `--wrt "a(2),a"` labels, and messages that name
//! Fortran types and procedures, not Rust's or generated ones.

mod common;

use common::cli::{adjit, bench_results};

const G: &str = "examples/griewank.f90";

#[test]
fn version_help_and_completions() {
    let (code, out, _) = adjit(&["--version"]);
    assert_eq!(
        (code, out.as_str()),
        (0, concat!("adjit ", env!("CARGO_PKG_VERSION"), "\n"))
    );
    let (code, out, _) = adjit(&["grad", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "Usage: adjit grad [OPTIONS] --of <OUT[,OUT...]> --wrt <IN[,IN...]> <FILE>..."
        ),
        "{out}"
    );
    assert!(
        out.contains("Examples:\n  adjit grad examples/naumann.f90"),
        "{out}"
    );
    let (code, out, _) = adjit(&["jacobian", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--threads <N>"), "{out}");
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = adjit(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("jacobian") && out.contains("threads"),
            "{shell}: {out}"
        );
    }
    // No command: the help on standard error, exit 2.
    let (code, out, err) = adjit(&[]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("Usage: adjit <COMMAND>"), "{err}");
}

#[test]
fn misspellings_are_usage_errors_with_suggestions() {
    let (code, _, err) = adjit(&["grad", G, "--of", "c", "--wrt", "a", "--jsn"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unexpected argument '--jsn'") && err.contains("'--json'"),
        "{err}"
    );
    let (code, _, err) = adjit(&["jacobain", G]);
    assert_eq!(code, 2);
    assert!(
        err.contains("a similar subcommand exists: 'jacobian'"),
        "{err}"
    );
    let (code, _, err) = adjit(&["grad", G, "--of", "c", "--wrt", "a", "--mode", "revrse"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("[possible values: adjoint, reverse, tangent, forward, fd]"),
        "{err}"
    );
    let (code, _, err) = adjit(&["run", G, "--entry", "a", "--entry", "b"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn request_errors_the_engine_reports_exit_with_2_and_program_errors_with_1() {
    // Names the engine does not know: usage errors.
    for (args, message) in [
        (
            &["grad", G, "--of", "c", "--wrt", "zz", "--set", "s=2"][..],
            "no argument named `zz` (arguments: s, a, c)\n",
        ),
        (
            &["run", G, "--entry", "nosuch"][..],
            "no procedure named `nosuch` (procedures: griewank)\n",
        ),
        (
            &["grad", G, "--of", "s", "--wrt", "a", "--set", "s=2"][..],
            "`s` is an INTEGER scalar, not a floating-point variable: it has no derivative\n",
        ),
    ] {
        let (code, out, err) = adjit(args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (2, "", message),
            "{args:?}"
        );
    }
    // The program's errors: a rejected source (runtime errors: see
    // `messages_name_fortran_types_and_source_procedures`): exit 1.
    let dir = std::env::temp_dir().join(format!("adjit-cli-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.f90");
    std::fs::write(
        &bad,
        "subroutine b(x)\n  double precision x\n  x = x +\nend\n",
    )
    .unwrap();
    let (code, _, err) = adjit(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bad.f90:3:"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn limits_are_checked_when_the_command_line_is_parsed() {
    for (option, value, message) in [
        (
            "--stack-size",
            "12Q",
            "`12Q` is not a byte count (such as 512M)",
        ),
        (
            "--memory-limit",
            "lots",
            "`lots` is not a byte count (such as 512M)",
        ),
        ("--timeout", "0", "`0` is not a positive number of seconds"),
    ] {
        let (code, out, err) = adjit(&["run", G, option, value]);
        assert_eq!((code, out.as_str()), (2, ""), "{option}");
        assert!(
            err.starts_with(&format!("error: invalid value '{value}' for '{option} "))
                && err.contains(message),
            "{option}: {err}"
        );
    }
    let (code, _, err) = adjit(&["jacobian", G, "--of", "c", "--wrt", "a", "--threads", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("`0` is not a positive integer"), "{err}");
    // Good values pass (binary suffixes).
    let (code, out, err) = adjit(&[
        "run",
        G,
        "--set",
        "s=1",
        "--set",
        "a=2",
        "--stack-size",
        "64M",
        "--memory-limit",
        "1G",
        "--timeout",
        "30",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("c = "), "{out}");
}

#[test]
fn json_numbers_round_trip_exactly_through_output_and_input() {
    // Values whose shortest forms need 17 digits, exponents, subnormals.
    let a = "0.1,-1.2345678901234567e-300,3.0000000000000004,5e-324,1.7976931348623157e308,-0.0,2.220446049250313e-16";
    let (code, first, err) = adjit(&[
        "run",
        G,
        "--set",
        "s=7",
        "--set",
        &format!("a={a}"),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&first).unwrap();
    let outputs = &json["outputs"];
    let got: Vec<u64> = outputs["a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap().to_bits())
        .collect();
    let want: Vec<u64> = a
        .split(',')
        .map(|x| x.parse::<f64>().unwrap().to_bits())
        .collect();
    assert_eq!(got, want, "{first}");
    // The outputs read back with --input give the same run, byte for byte.
    let dir = std::env::temp_dir().join(format!("adjit-cli-rt-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.json");
    let mut back = outputs.clone();
    back.as_object_mut().unwrap().remove("c");
    std::fs::write(&input, back.to_string()).unwrap();
    let (code, second, err) = adjit(&["run", G, "--input", input.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(second, first);
    std::fs::remove_dir_all(&dir).ok();
    // Shape of the other reports: `", "` and `": "` separators.
    let (code, out, err) = adjit(&[
        "grad", G, "--of", "c", "--wrt", "a(2),a", "--set", "s=2", "--set", "a=1,2", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("{\"value\": ") && out.contains(", \"gradient\": {\"a(2)\": "),
        "{out}"
    );
}

/// The emitted Fortran files of the documentation and the `emit` options
/// that make them (as `scripts/docs.sh` does).
const DOCS_FORTRAN: [(&str, &[&str]); 2] = [
    (
        "docs/griewank_b.f90",
        &["examples/griewank.f90", "--of", "c", "--wrt", "a"],
    ),
    (
        "docs/bratu_b.f90",
        &["examples/bratu.f", "--of", "f", "--wrt", "x,prm"],
    ),
];

#[test]
fn docs_fortran_is_what_emit_writes() {
    for (file, options) in DOCS_FORTRAN {
        let args = [
            &["emit"][..],
            options,
            &["--mode", "adjoint", "--format", "fortran"],
        ]
        .concat();
        let (code, out, err) = adjit(&args);
        assert_eq!(code, 0, "{err}");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let committed = std::fs::read_to_string(&path).unwrap();
        // The support module is emitted, not copied by hand.
        // (Without kept records: neither example keeps any.)
        let support = adjit::fortran::support_module(false);
        assert!(out.contains(support.trim()), "{file}: no support module");
        assert!(
            committed == out,
            "{file} is not what `adjit {}` writes: run scripts/docs.sh",
            args.join(" ")
        );
    }
    // README quotes the reverse sweep of Griewank's gradient from it.
    let readme = include_str!("../README.md");
    let docs = include_str!("../docs/griewank_b.f90");
    let start = readme
        .find("```fortran\nsubroutine griewank_rev")
        .expect("README quotes griewank_rev")
        + "```fortran\n".len();
    let quoted = &readme[start..start + readme[start..].find("```").unwrap()];
    assert!(
        docs.contains(quoted),
        "README's griewank_rev is not the one in docs/griewank_b.f90"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    use std::io::{BufRead, BufReader};
    // A 100 x 102 Jacobian table (about 250 KB, more than a pipe holds),
    // read as `| head -1` would.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args([
            "jacobian",
            "examples/bratu.f",
            "--of",
            "f",
            "--wrt",
            "x,prm",
            "--set",
            "dim=100",
            "--set",
            "parmax=2",
            "--set",
            "x=1",
            "--set",
            "prm=1.3,0.2",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("x(1)"), "{first}");
    // The reader is dropped: the rest of the output meets a closed pipe.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), err.as_ref()), (Some(0), ""));
}

/// `adjit ARGS` that must fail with exit 2 and exactly `message`.
fn usage_error(args: &[&str], message: &str) {
    let (code, out, err) = adjit(args);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (2, "", &*format!("adjit: {message}\n")),
        "{args:?}"
    );
}

#[test]
fn values_set_twice_or_too_many_are_refused() {
    usage_error(
        &["run", G, "--set", "s=3", "--set", "S=4", "--set", "a=1"],
        "`s` is set twice: by --set s=3 and by --set S=4",
    );
    let dir = std::env::temp_dir().join(format!("adjit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.json");
    std::fs::write(&input, r#"{"s": 3, "a": [1, 2, 3]}"#).unwrap();
    let input = input.to_str().unwrap();
    usage_error(
        &["run", G, "--input", input, "--set", "s=4"],
        &format!("`s` is set twice: by --input {input} and by --set s=4"),
    );
    let (code, out, err) = adjit(&["run", G, "--input", input]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("a = [1.0, 2.0, 3.0]"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
    usage_error(
        &["run", G, "--set", "s=3", "--set", "a=1,2,3,4"],
        "`a` is given 4 values but has 3 elements",
    );
}

#[test]
fn an_unset_size_leaving_the_gradient_empty_is_an_error() {
    usage_error(
        &["grad", G, "--of", "c", "--wrt", "a"],
        "--wrt a selects no elements: `a` has none at these arguments (set the arguments its extent depends on with --set)",
    );
}

#[test]
fn messages_name_fortran_types_and_source_procedures() {
    let (code, _, err) = adjit(&["run", G, "--set", "s=1.5"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "cannot set `s` (an INTEGER scalar) from 1.5, not a whole number\n"
    );
    let (_, _, err) = adjit(&["run", G, "--set", "s=1e10"]);
    assert!(
        err.contains("(an INTEGER scalar) from 10000000000"),
        "{err}"
    );
    let (_, _, err) = adjit(&["run", G, "--set", "c=true"]);
    assert_eq!(
        err,
        "cannot set `c` (a DOUBLE PRECISION scalar) from a logical\n"
    );
    // A runtime error in the adjoint's forward sweep names `griewank`,
    // not the generated `griewank_fwd`.
    let dir = std::env::temp_dir().join(format!("adjit-cli-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("g.f90");
    std::fs::write(
        &file,
        "subroutine g(n, a, c)\n  integer, intent(in) :: n\n  double precision, intent(in) :: a(n)\n  double precision, intent(out) :: c\n  integer i\n  c = 0\n  do i = 1, n + 1\n    c = c + a(i)**2\n  end do\nend subroutine g\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    for mode in ["adjoint", "tangent"] {
        let (code, _, err) = adjit(&[
            "grad", f, "--of", "c", "--wrt", "a", "--set", "n=3", "--set", "a=1", "--mode", mode,
        ]);
        assert_eq!(code, 1);
        let first = err.lines().next().unwrap();
        assert_eq!(
            first,
            format!("{f}:8:5: error: runtime error in `g`: array index out of bounds on `a`: index 4 outside 1:3 in dimension 1"),
            "{mode}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn wrt_labels_name_the_right_elements() {
    let (code, out, err) = adjit(&[
        "grad", G, "--of", "c", "--wrt", "a(2),a", "--set", "s=3", "--set", "a=1,2,3",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let value = |label: &str| {
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("{label} in {out}"))
            .trim()
            .trim_start_matches("= ")
            .to_string()
    };
    let a2 = value("dc/da(2)");
    assert_eq!(value("a(2) "), a2, "{out}");
    assert_ne!(value("a(1) "), a2, "{out}");
    assert!(lines.iter().any(|l| l.trim().starts_with("a(3) ")), "{out}");
}

/// Runs `adjit repl` on `script` (standard input is a pipe: no history,
/// no prompt): `(exit code, stdout, stderr)`.
fn repl(script: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_adjit"))
        .arg("repl")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_repl_checks_units_refuses_mistyped_commands_and_drops_units() {
    let (code, out, err) = repl(
        "subroutine cube(x, y)\n  double precision x, y\n  y = x*x*q(\nend subroutine\n\
         rnu --set x=2\n\
         subroutine cube(x, y)\n  double precision x, y\n  y = x*x*x\nend subroutine\n\
         run --set x=2\n\
         subroutine sq(x, y)\n  double precision x, y\n  y = x*x\nend\n\
         :units\n:drop cube\n:units\n\
         run --set x=3\n:grad --of y --wrt x --set x=2 --json\n:quit\n",
    );
    assert_eq!(code, 0, "{err}");
    // The broken unit is reported at the line typed and not kept; the
    // mistyped command is refused with a suggestion, not appended.
    assert_eq!(
        err,
        "repl:cube:3:13: error: expected an expression in assignment, found end of statement
  ┌─ repl:cube:3:13
  │
3 │   y = x*x*q(
  │             ^
adjit: unknown command `rnu`; did you mean `run`? (`:help` lists the commands; Fortran starts with SUBROUTINE, FUNCTION or MODULE)
"
    );
    assert_eq!(
        out,
        "defined `cube`\nx = 2.0\ny = 8.0\ndefined `sq`\ncube\nsq\nsq\nx = 3.0\ny = 9.0\n\
         {\"value\": 4.0, \"gradient\": {\"x\": 4.0}}\n"
    );
}

/// A CHARACTER argument set on the command line chooses the branch of a
/// BLAS-style routine (`TRANS` of `tests/corpus/blas_dgemv.f`): `run`
/// gives `y = alpha op(A) x + beta y` for `T`, `t`, `N` and `n`, `grad`
/// the analytic gradient of `rnorm = |y|` with respect to `x`, and `check`
/// agrees.
#[test]
fn a_character_argument_set_on_the_command_line_chooses_the_branch() {
    let file = "tests/corpus/blas_dgemv.f";
    let base = [
        "--entry",
        "gemvnrm",
        "--set",
        "m=3",
        "--set",
        "n=2",
        "--set",
        "alpha=1.5",
        "--set",
        "beta=0.5",
        "--set",
        "a=1,2,3,4,5,6",
        "--set",
        "x=1,-1,2",
        "--set",
        "y=0.5,1,2",
    ];
    // A(3,2) column-major; y0 = (0.5, 1, 2).
    let a = |i: usize, j: usize| (j * 3 + i + 1) as f64;
    let (alpha, beta, x, y0) = (1.5, 0.5, [1.0, -1.0, 2.0], [0.5, 1.0, 2.0]);
    for trans in ["T", "t", "N", "n"] {
        let transposed = trans.eq_ignore_ascii_case("t");
        let len = if transposed { 2 } else { 3 };
        let mut y = y0;
        for (i, yi) in y.iter_mut().enumerate().take(len) {
            let ax: f64 = if transposed {
                (0..3).map(|k| a(k, i) * x[k]).sum()
            } else {
                (0..2).map(|k| a(i, k) * x[k]).sum()
            };
            *yi = alpha * ax + beta * y0[i];
        }
        let rnorm = y[..len].iter().map(|v| v * v).sum::<f64>().sqrt();
        // d rnorm / d x(k) = alpha sum_i op(A)(i, k) y(i) / rnorm.
        let grad: Vec<f64> = (0..3)
            .map(|k| {
                (0..len)
                    .map(|i| {
                        let op = if transposed {
                            a(k, i)
                        } else if k < 2 {
                            a(i, k)
                        } else {
                            0.0
                        };
                        alpha * op * y[i] / rnorm
                    })
                    .sum()
            })
            .collect();
        let set = format!("trans={trans}");
        let mut args = vec!["run", file, "--set", &set, "--json"];
        args.extend(base);
        let (code, out, err) = adjit(&args);
        assert_eq!(code, 0, "{trans}: {err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let outputs = &json["outputs"];
        assert_eq!(outputs["trans"], trans, "{out}");
        for (i, want) in y.iter().enumerate() {
            let got = outputs["y"][i].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-14 * want.abs(),
                "{trans}: y({i}) {got} vs {want}"
            );
        }
        let got = outputs["rnorm"].as_f64().unwrap();
        assert!(
            (got - rnorm).abs() <= 1e-14 * rnorm,
            "{trans}: {got} vs {rnorm}"
        );
        let mut args = vec![
            "grad", file, "--set", &set, "--of", "rnorm", "--wrt", "x", "--json",
        ];
        args.extend(base);
        let (code, out, err) = adjit(&args);
        assert_eq!(code, 0, "{trans}: {err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        for (k, want) in grad.iter().enumerate() {
            let got = json["gradient"]["x"][k].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-13 * want.abs().max(1.0),
                "{trans}: drnorm/dx({}) = {got}, expected {want}",
                k + 1
            );
        }
        let mut args = vec![
            "check",
            file,
            "--set",
            &set,
            "--of",
            "rnorm,y",
            "--wrt",
            "alpha,x,a",
        ];
        args.extend(base);
        let (code, out, err) = adjit(&args);
        assert_eq!(code, 0, "{trans}: {out}{err}");
        assert!(
            out.contains("ok: adjoint, tangent and finite differences agree"),
            "{out}"
        );
    }
}

#[test]
fn bench_times_the_in_place_zeroing_adjoint_on_request() {
    let (code, out, _) = adjit(&["bench", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("--in-place-zeroing") && out.contains("in_place_zeroing"),
        "{out}"
    );
    let (code, out, err) = adjit(&[
        "bench",
        "examples/product.f90",
        "--of",
        "y",
        "--wrt",
        "x",
        "--set",
        "x=1",
        "--size",
        "n=10,100",
        "--in-place-zeroing",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    bench_results(&out, 2, &["adjoint"]);
    // A flag of `bench` only: the one-shot commands make no repeated calls.
    let (code, _, err) = adjit(&["grad", G, "--of", "c", "--wrt", "a", "--in-place-zeroing"]);
    assert_eq!(code, 2, "{err}");
}
