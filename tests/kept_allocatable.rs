//! ALLOCATABLE module and SAVE arrays kept between calls made through the
//! API, as a Fortran program keeps them between its calls (issue 12, item
//! 4): a library (tests/kept) whose `setup` allocates and fills module data
//! that the objective `residual` reads on every later call, primal, tangent
//! and adjoint (closed-form values and Jacobians, dot product, central
//! finite differences, JIT and interpreter), until `finalize` releases it;
//! the same library under a main PROGRAM prints what gfortran prints; the
//! records stay the size of the arrays under many reallocating calls;
//! misuse (the objective before `setup`, `setup` twice) is a located
//! runtime error; a solver module fits the kept data through dummy
//! procedures bound to procedures that read them.

mod common;

use adjit::engine::{Args, Backend, Engine, ErrorKind, Options, Procedure};
use common::check::{against, three_ways};
use std::path::{Path, PathBuf};

/// Central finite differences against the adjoint.
const FD: f64 = 1e-6;
/// Derivative code against closed forms.
const EXACT: f64 = 1e-13;

fn kept(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kept")
        .join(name)
}

/// An engine on `backend` for the files of tests/kept named.
fn engine(files: &[&str], backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    let paths: Vec<PathBuf> = files.iter().map(|f| kept(f)).collect();
    Engine::from_files(&paths, options).unwrap_or_else(|e| panic!("{e}"))
}

/// The library: its data module and entry points.
fn library(backend: Backend) -> Engine {
    engine(&["fit_data.f90", "fit_model.f90"], backend)
}

/// The data `load_data(m)` computes.
fn data(m: usize) -> (Vec<f64>, Vec<f64>) {
    let t: Vec<f64> = (0..m).map(|i| 0.25 * i as f64).collect();
    let y = t
        .iter()
        .map(|&t| 2.0 * (-0.5 * t).exp() + 0.1 * (3.0 * t).sin())
        .collect();
    (t, y)
}

fn call_setup(engine: &Engine, m: usize) -> Result<(), adjit::engine::Error> {
    let setup = engine.procedure(Some("setup")).unwrap();
    let mut args = setup.args();
    args.set_scalar("m", m as f64).unwrap();
    setup.call(&mut args)
}

fn residual_args(residual: &Procedure, x: [f64; 2], m: usize) -> Args {
    let mut args = residual.args();
    args.set_scalar("m", m as f64).unwrap();
    args.set_array("x", &x).unwrap();
    args
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

/// `setup` once, then the objective's primal, tangent and adjoint several
/// times from one engine (the data set by `setup` is there on every call,
/// and the work array the first `residual` allocates is kept too), then
/// `finalize`: values and Jacobians have the closed form.
#[test]
fn setup_objective_finalize_across_api_calls() {
    let m = 7;
    let (t, y) = data(m);
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = library(backend);
        assert_eq!(engine.kept_values(), 0);
        call_setup(&engine, m).unwrap();
        // tdata and ydata: allocated, bounds, m values each.
        assert_eq!(engine.kept_values(), 2 * (3 + m), "{backend:?}");
        let residual = engine.procedure(Some("residual")).unwrap();
        let sse = engine.procedure(Some("sse")).unwrap();
        for (k, x) in [[1.75, -0.4], [2.0, -0.5], [1.25, -0.2]]
            .into_iter()
            .enumerate()
        {
            let mut args = residual_args(&residual, x, m);
            residual.call(&mut args).unwrap();
            let f = args.f64s("f").unwrap();
            let mut jac = Vec::new();
            for i in 0..m {
                let e = (x[1] * t[i]).exp();
                let expected = x[0] * e - y[i];
                assert!(close(f[i], expected, 1e-14), "{backend:?} call {k}: f({i})");
                jac.extend([e, x[0] * t[i] * e]);
            }
            let (adj, bad) = three_ways(&engine, Some("residual"), &args, "f", "x", FD);
            assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
            let bad = against("adjoint", &adj, &jac, EXACT);
            assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
            // The sum of squares and its gradient.
            let mut sargs = sse.args();
            sargs.set_array("x", &x).unwrap();
            let (grad, bad) = three_ways(&engine, Some("sse"), &sargs, "s", "x", FD);
            assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
            let mut expected = [0.0; 2];
            let mut s = 0.0;
            for i in 0..m {
                let e = (x[1] * t[i]).exp();
                let r = x[0] * e - y[i];
                s += r * r;
                expected[0] += 2.0 * r * e;
                expected[1] += 2.0 * r * x[0] * t[i] * e;
            }
            let bad = against("gradient", &grad, &expected, EXACT);
            assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
            assert!(close(grad.values[0], s, 1e-13), "{backend:?}: sse");
            // Derivative evaluations leave the records as one primal call
            // would: the data and the work array, unchanged.
            assert_eq!(engine.kept_values(), 3 * (3 + m), "{backend:?}");
        }
        let finalize = engine.procedure(Some("finalize")).unwrap();
        finalize.call(&mut finalize.args()).unwrap();
        // Three records, each "not allocated".
        assert_eq!(engine.kept_values(), 3, "{backend:?}");
        // A new setup with other data: the objective follows it.
        call_setup(&engine, 3).unwrap();
        let mut args = residual_args(&residual, [2.0, -0.5], 3);
        residual.call(&mut args).unwrap();
        let (t, y) = data(3);
        let f = args.f64s("f").unwrap();
        for i in 0..3 {
            assert!(close(f[i], 2.0 * (-0.5 * t[i]).exp() - y[i], 1e-14));
        }
    }
}

/// A solver module (tests/kept/fit_solver.f90) fits the kept data through
/// `procedure(...)` dummies bound to procedures that read the module
/// arrays `setup` allocated in an earlier call. The data scaled by `s`
/// are fitted by `(s a, b)`: the fit is proportional to `s`, so
/// `d a / d s = a / s` and `d b / d s = 0`, in both modes, with the dot
/// product and finite differences, on both backends.
#[test]
fn kept_module_data_reach_the_procedures_a_solver_calls_through_dummies() {
    let m = 7;
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(
            &["fit_data.f90", "fit_model.f90", "fit_solver.f90"],
            backend,
        );
        call_setup(&engine, m).unwrap();
        let fit = engine.procedure(Some("fit")).unwrap();
        let mut base = fit.args();
        base.set_scalar("m", m as f64).unwrap();
        base.set_scalar("scale", 1.0).unwrap();
        fit.call(&mut base).unwrap();
        let x1 = base.f64s("x").unwrap().to_vec();
        // The fit is a stationary point of the sum of squares.
        let (t, y) = data(m);
        let (mut g0, mut g1) = (0.0, 0.0);
        for i in 0..m {
            let e = (x1[1] * t[i]).exp();
            let r = x1[0] * e - y[i];
            g0 += r * e;
            g1 += r * x1[0] * t[i] * e;
        }
        assert!(
            g0.abs() < 1e-12 && g1.abs() < 1e-12,
            "{backend:?}: {g0} {g1}"
        );
        let s = 2.5;
        let mut args = fit.args();
        args.set_scalar("m", m as f64).unwrap();
        args.set_scalar("scale", s).unwrap();
        let mut run = args.clone();
        fit.call(&mut run).unwrap();
        let x = run.f64s("x").unwrap().to_vec();
        assert!(close(x[0], s * x1[0], 1e-12), "{backend:?}: {x:?}");
        assert!(close(x[1], x1[1], 1e-12), "{backend:?}: {x:?}");
        let (adj, bad) = three_ways(&engine, Some("fit"), &args, "x", "scale", FD);
        assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
        let bad = against("adjoint", &adj, &[x[0] / s, 0.0], 1e-10);
        assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
        // tdata and ydata stay kept, unchanged by the derivative code.
        assert_eq!(engine.kept_values(), 2 * (3 + m), "{backend:?}");
    }
}

/// A state taken by `Engine::state` holds the kept arrays: put back, the
/// next call starts from them again.
#[test]
fn engine_state_holds_the_kept_arrays() {
    let engine = library(Backend::Jit);
    let start = engine.state();
    call_setup(&engine, 4).unwrap();
    let loaded = engine.state();
    assert_ne!(start, loaded);
    engine.set_state(&start).unwrap();
    assert_eq!(engine.kept_values(), 0);
    // Not set up any more: setup again succeeds.
    call_setup(&engine, 4).unwrap();
    assert_eq!(engine.state(), loaded);
}

/// The objective before `setup` reads unallocated data, and `setup` twice
/// allocates allocated data: runtime errors located in the library's
/// source, naming the array, as gfortran stops.
#[test]
fn misuse_of_the_kept_library_is_located() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = library(backend);
        let residual = engine.procedure(Some("residual")).unwrap();
        let mut args = residual_args(&residual, [1.0, 0.0], 4);
        let e = residual.call(&mut args).expect_err("no data yet");
        assert_eq!(e.kind, ErrorKind::Runtime, "{e}");
        let text = e.message;
        assert!(text.contains("fit_model.f90:16:"), "{backend:?}: {text}");
        assert!(text.contains("tdata"), "{backend:?}: {text}");
        call_setup(&engine, 4).unwrap();
        let e = call_setup(&engine, 4).expect_err("allocated twice");
        assert_eq!(e.kind, ErrorKind::Runtime, "{e}");
        let text = e.message;
        assert!(text.contains("fit_data.f90:14:"), "{backend:?}: {text}");
        assert!(text.contains("tdata"), "{backend:?}: {text}");
    }
}

/// Many calls that grow a SAVE history and reallocate a module array to
/// the size each asks for: the values are Fortran's (a history of `k`
/// calls, the sum of what the previous call allocated), and what is kept
/// is the current arrays' size, whatever the number of calls.
#[test]
fn repeated_reallocation_keeps_only_the_current_arrays() {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(&["history.f90"], backend);
        let record = engine.procedure(Some("record")).unwrap();
        let resize = engine.procedure(Some("resize")).unwrap();
        let mut total = 0.0;
        let mut previous: Option<(usize, f64)> = None;
        for k in 1..=60usize {
            let x = 0.5 + 0.01 * k as f64;
            let mut args = record.args();
            args.set_scalar("x", x).unwrap();
            record.call(&mut args).unwrap();
            total += (x * k as f64).powi(2);
            assert_eq!(args.scalar("length").unwrap(), k as f64);
            assert!(close(args.scalar("total").unwrap(), total, 1e-13));
            let n = (k * 7) % 13;
            let mut args = resize.args();
            args.set_scalar("n", n as f64).unwrap();
            args.set_scalar("x", x).unwrap();
            resize.call(&mut args).unwrap();
            let expected = match previous {
                Some((n0, x0)) if n0 > 0 => x0 * (n0 * (n0 - 1) / 2) as f64,
                _ => -1.0,
            };
            assert!(close(args.scalar("s").unwrap(), expected, 1e-13), "{k}");
            previous = Some((n, x));
            // hist: flag, bounds, k values; w: flag (and bounds, n values).
            let w = if n > 0 { 3 + n } else { 1 };
            assert_eq!(engine.kept_values(), 3 + k + w, "{backend:?} call {k}");
        }
    }
}

/// The library under a main PROGRAM (`adjit run` on the three files)
/// prints what gfortran prints for the same files
/// (`tests/kept/library_main.expected`, gfortran -O0).
#[test]
fn the_library_under_a_main_program_prints_what_gfortran_prints() {
    let files = ["fit_data.f90", "fit_model.f90", "library_main.f90"].map(kept);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_adjit"))
        .arg("run")
        .args(&files)
        .output()
        .expect("adjit runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let expected = std::fs::read_to_string(kept("library_main.expected")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

/// A derivative evaluation of an entry that grows a kept SAVE history on
/// every call: every sweep and every finite-difference point starts from
/// the history the evaluation found (d total / dx = 2 (k + 1)^2 x after
/// `k` calls), and the evaluation leaves the history one primal call
/// would (one element longer).
#[test]
fn derivative_evaluations_start_from_the_kept_arrays_and_leave_one_call() {
    use adjit::ad::adjoint::AdjointOptions;
    use adjit::engine::{FiniteDifferences, Selection};
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(&["history.f90"], backend);
        let record = engine.procedure(Some("record")).unwrap();
        let x = 0.75;
        let mut args = record.args();
        args.set_scalar("x", x).unwrap();
        for _ in 0..5 {
            record.call(&mut args.clone()).unwrap();
        }
        let (of, wrt) = (
            Selection::parse_list("total").unwrap(),
            Selection::parse_list("x").unwrap(),
        );
        let start = engine.state();
        let expected = [2.0 * 36.0 * x];
        let adjoint = engine
            .adjoint(Some("record"), &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let tangent = engine.tangent(Some("record"), &of, &wrt, 1).unwrap();
        let fd = FiniteDifferences::new(&record);
        let runs: [(&str, &dyn Fn() -> adjit::engine::Jacobian, f64); 3] = [
            ("adjoint", &|| adjoint.jacobian(&args).unwrap(), EXACT),
            ("tangent", &|| tangent.jacobian(&args).unwrap(), EXACT),
            (
                "finite differences",
                &|| fd.jacobian(&args, &of, &wrt).unwrap(),
                FD,
            ),
        ];
        for (what, run, tol) in runs {
            engine.set_state(&start).unwrap();
            let jac = run();
            let bad = against(what, &jac, &expected, tol);
            assert!(bad.is_empty(), "{backend:?}: {bad:#?}");
            // flag, bounds and 6 values: one call's growth.
            assert_eq!(engine.kept_values(), 3 + 6, "{backend:?} {what}");
        }
    }
}
