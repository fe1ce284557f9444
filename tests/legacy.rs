//! Fortran 77 as legacy libraries write it, beyond what the single-file
//! corpus can show: INCLUDE directories (`-I DIR`, API
//! `Options::include_dirs`), programs spread over several files, and the
//! located errors for what is rejected. Values are checked analytically;
//! the gfortran comparisons of the same constructs live in the corpus.

use adjit::engine::{Channels, Engine, Options};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A fixture under `tests/legacy/`.
fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/legacy")
        .join(rel)
}

/// Runs the adjit binary; returns (success, stdout, stderr).
fn adjit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .output()
        .expect("cannot start adjit");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn include_files_are_found_through_include_directories() {
    let poly = fixture("src/poly.f");
    let lib = fixture("lib");
    // Without the directory: a located error at the file name.
    let e = Engine::from_files(&[&poly], Options::default())
        .err()
        .expect("deep.h is only in lib/");
    assert!(
        e.message.contains("poly.f:4:15") && e.message.contains("`deep.h`"),
        "{}",
        e.message
    );
    // API: deep.h from the include directory, deeper.h next to deep.h.
    let options = Options {
        include_dirs: vec![fixture("nonexistent"), lib.clone()],
        ..Options::default()
    };
    let engine = Engine::from_files(&[&poly], options).unwrap();
    let p = engine.procedure(Some("poly")).unwrap();
    let mut args = p.args();
    args.apply_settings(&["x=2.5"]).unwrap();
    p.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 1.0 - 2.0 * 2.5 + 3.0 * 2.5 * 2.5);

    // CLI: -I DIR and -IDIR; the derivative goes through the included
    // constants (dy/dx = c1 + 2 c2 x).
    let (poly, lib) = (poly.to_str().unwrap(), lib.to_str().unwrap());
    let joined = format!("-I{lib}");
    for include in [vec!["-I", lib], vec![joined.as_str()]] {
        let mut args = vec!["grad", poly];
        args.extend(&include);
        args.extend(["--set", "x=2", "--of", "y", "--wrt", "x", "--json"]);
        let (ok, stdout, stderr) = adjit(&args);
        assert!(ok, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(json["value"], 9.0, "{stdout}");
        assert_eq!(json["gradient"]["x"], 10.0, "{stdout}");
    }
}

#[test]
fn a_missing_include_file_is_a_located_error() {
    let missing = fixture("src/missing.f");
    let (ok, _, stderr) = adjit(&["run", missing.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        stderr.contains("missing.f:3:17: error: cannot find the INCLUDE file `nowhere.h`"),
        "{stderr}"
    );
}

#[test]
fn typed_functions_in_other_files_are_function_references_in_any_order() {
    let (drv, lib) = (fixture("src/drv.f"), fixture("src/enorm.f"));
    let x = [1.0, 2.0, 2.0];
    for files in [[&drv, &lib], [&lib, &drv]] {
        let engine = Engine::from_files(&files, Options::default()).unwrap();
        let p = engine.procedure(Some("drv")).unwrap();
        let mut args = p.args();
        args.apply_settings(&["x=1,2,2"]).unwrap();
        p.call(&mut args).unwrap();
        // y = |x| + x1^2
        assert_eq!(args.scalar("y").unwrap(), 3.0 + 1.0);
        // dy/dx = x/|x| + (2 x1, 0, 0), adjoint and tangent.
        let (drv, lib) = (files[0].to_str().unwrap(), files[1].to_str().unwrap());
        for mode in ["adjoint", "tangent"] {
            let (ok, stdout, stderr) = adjit(&[
                "grad", drv, lib, "--entry", "drv", "--set", "x=1,2,2", "--of", "y", "--wrt", "x",
                "--mode", mode, "--json",
            ]);
            assert!(ok, "{stderr}");
            let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            let g = json["gradient"]["x"].as_array().unwrap();
            let expected = [x[0] / 3.0 + 2.0 * x[0], x[1] / 3.0, x[2] / 3.0];
            for (g, e) in g.iter().zip(expected) {
                assert!((g.as_f64().unwrap() - e).abs() < 1e-15, "{mode}: {stdout}");
            }
        }
    }
}

#[test]
fn common_blocks_share_state_across_files_with_other_names_and_shapes() {
    let files = [fixture("src/setup.f"), fixture("src/use.f")];
    let engine = Engine::from_files(&files, Options::default()).unwrap();
    let p = engine.procedure(Some("setup")).unwrap();
    let mut args = p.args();
    args.apply_settings(&["x=2,3"]).unwrap();
    p.call(&mut args).unwrap();
    // y = x1 x2 + 3 x1 x2 + 10 + 100
    assert_eq!(args.scalar("y").unwrap(), 2.0 * 3.0 + 3.0 * 6.0 + 110.0);
    // dy/dx = (4 x2, 4 x1): both modes carry the adjoint and tangent
    // of the COMMON members across the call.
    let (a, b) = (files[0].to_str().unwrap(), files[1].to_str().unwrap());
    for mode in ["adjoint", "tangent"] {
        let (ok, stdout, stderr) = adjit(&[
            "grad", a, b, "--entry", "setup", "--set", "x=2,3", "--of", "y", "--wrt", "x",
            "--mode", mode, "--json",
        ]);
        assert!(ok, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(
            json["gradient"]["x"],
            serde_json::json!([12.0, 8.0]),
            "{mode}: {stdout}"
        );
    }
}

#[test]
fn equivalenced_reals_carry_derivatives_through_either_name() {
    // y = x^2 + sin(3x), where the second store (through `b`) overwrites
    // the `a(2)` that the product read: dy/dx = 2x + 3 cos(3x).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/equivalence.f");
    let x: f64 = 1.25;
    let expected = 2.0 * x + 3.0 * (3.0 * x).cos();
    for mode in ["adjoint", "tangent", "fd"] {
        let (ok, stdout, stderr) = adjit(&[
            "grad",
            path.to_str().unwrap(),
            "--entry",
            "eqtbr",
            "--set",
            "x=1.25",
            "--of",
            "y",
            "--wrt",
            "x",
            "--mode",
            mode,
            "--json",
        ]);
        assert!(ok, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        let got = json["gradient"]["x"].as_f64().unwrap();
        let tol = if mode == "fd" { 1e-7 } else { 1e-14 };
        assert!(
            (got - expected).abs() <= tol * expected.abs(),
            "{mode}: {got} instead of {expected}"
        );
    }
}

/// A program that prints, reads and computes, for the I/O tests.
const IO_SOURCE: &str = "\
subroutine io(n, x, y)
  integer n, k
  double precision x(3), y, w
  read *, k, w
  y = w*x(1)**2 + x(2)*x(3)
  write (*, 100) n + k, y
100 format (' n =', i3, ', y =', f10.4)
  print *, 'x:', x
end subroutine
";

/// An engine on `IO_SOURCE` whose output is captured and whose input is
/// `input`.
fn io_engine(backend: adjit::engine::Backend, input: &str) -> (Engine, Arc<Mutex<Vec<u8>>>) {
    let captured = Arc::new(Mutex::new(Vec::new()));
    let options = Options {
        backend,
        io: Channels {
            output: captured.clone(),
            input: Arc::new(Mutex::new(std::io::Cursor::new(input.as_bytes().to_vec()))),
        },
        ..Options::default()
    };
    let engine = Engine::from_sources(&[("io.f90".into(), IO_SOURCE.into())], options).unwrap();
    (engine, captured)
}

#[test]
fn io_statements_write_and_read_through_the_engine_channels_once_per_evaluation() {
    use adjit::ad::adjoint::AdjointOptions;
    use adjit::engine::{Backend, FiniteDifferences, Selection};
    // gfortran 13 prints, for n = 2, k = 3, w = 0.5, x = (1, 2, 3):
    let record = " n =  5, y =    6.5000\n x:   1.0000000000000000        2.0000000000000000        3.0000000000000000     \n";
    let take = |c: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8(std::mem::take(&mut *c.lock().unwrap())).unwrap()
    };
    for backend in [Backend::Jit, Backend::Interpreter] {
        let (engine, out) = io_engine(backend, &"3, 0.5d0 extra\n".repeat(20));
        let p = engine.procedure(Some("io")).unwrap();
        let mut args = p.args();
        args.apply_settings(&["n=2", "x=1,2,3"]).unwrap();
        p.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 6.5);
        assert_eq!(take(&out), record, "{backend:?}: primal");

        let (of, wrt) = (
            Selection::parse_list("y").unwrap(),
            Selection::parse_list("x").unwrap(),
        );
        // The adjoint prints in its forward sweep only, whatever the number
        // of reverse sweeps; the tangent once per evaluation; finite
        // differences once (the base point), not per perturbed point.
        let adjoint = engine
            .adjoint(Some("io"), &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let (_, grad) = adjoint.gradient(&args).unwrap();
        assert_eq!(grad, vec![1.0, 3.0, 2.0]);
        assert_eq!(take(&out), record, "{backend:?}: adjoint");
        let tangent = engine.tangent(Some("io"), &of, &wrt, 3).unwrap();
        tangent.jacobian(&args).unwrap();
        assert_eq!(take(&out), record, "{backend:?}: tangent");
        FiniteDifferences::new(&p)
            .jacobian(&args, &of, &wrt)
            .unwrap();
        assert_eq!(take(&out), record, "{backend:?}: finite differences");
    }
    // The end of the input is a located runtime error.
    let (engine, _) = io_engine(Backend::Jit, "3\n");
    let p = engine.procedure(Some("io")).unwrap();
    let e = p.call(&mut p.args()).unwrap_err();
    assert!(
        e.message.contains("io.f90:4:") && e.message.contains("end of file"),
        "{}",
        e.message
    );
}
