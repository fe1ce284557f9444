//! Procedures across procedure boundaries (issue 12, items 4 and 8), against
//! closed forms in tangent and adjoint mode, with the dot product and
//! central finite differences, on the JIT and the interpreter: internal
//! procedures taking dummy procedures passed as actuals with their host
//! variables (`tests/corpus/proc_host_template.f90`), module ALLOCATABLE
//! data read by the procedures a solver calls through its dummy procedures
//! (`proc_module_data.f90`), and ALLOCATABLE dummies reallocated by an
//! array-valued function or passed on through a generic interface or a
//! dummy procedure (`alloc_dummy_passed_on.f90`). The gfortran comparison
//! of the same programs is the corpus test.

mod common;

use adjit::engine::{Args, Backend, Engine, Options};
use common::check::{both_modes_against, three_ways};

/// The corpus program `name` on `backend`.
fn corpus(name: &str, backend: Backend) -> Engine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_files(&[path], options).unwrap_or_else(|e| panic!("{e}"))
}

/// The arguments of `entry` with `settings`, and the outputs of one call.
fn run(engine: &Engine, entry: &str, settings: &[&str]) -> (Args, Args) {
    let procedure = engine.procedure(Some(entry)).unwrap();
    let mut args = procedure.args();
    args.apply_settings(settings).unwrap();
    let mut out = args.clone();
    procedure.call(&mut out).unwrap();
    (args, out)
}

/// Checks the Jacobian of `of` with respect to `wrt` against `expected`
/// (row-major, relative to each entry's size, `exact`) in both modes, and
/// three ways (finite differences within `fd`).
#[allow(clippy::too_many_arguments)]
fn check(
    engine: &Engine,
    entry: &str,
    args: &Args,
    of: &str,
    wrt: &str,
    expected: &[f64],
    exact: f64,
    fd: f64,
) {
    let bad = both_modes_against(engine, Some(entry), args, of, wrt, expected, exact);
    assert!(bad.is_empty(), "{entry}: {}", bad.join("\n"));
    let (_, bad) = three_ways(engine, Some(entry), args, of, wrt, fd);
    assert!(bad.is_empty(), "{entry}: {}", bad.join("\n"));
}

const BACKENDS: [Backend; 2] = [Backend::Jit, Backend::Interpreter];

/// Quadrature rules CONTAINed in the entry, taking the integrand as a
/// dummy procedure and scaling by the host's `weight = 2 + p`, handed to
/// module routines (Simpson's and the two-point Gauss rules are exact for
/// cubics): `q = w (p/4 + p^2/3)`, `r = w (4p - 2)`, and an internal
/// subroutine visitor `t = w sum_{i=1}^{3} g(i/3)` with
/// `g(x) = p x^3 + p^2 x^2`.
#[test]
fn internal_rules_taking_dummy_procedures_passed_as_actuals() {
    for backend in BACKENDS {
        let engine = corpus("proc_host_template.f90", backend);
        for p in [0.7f64, -1.25] {
            let setting = format!("p={p}");
            let (args, out) = run(&engine, "host_rules", &[&setting]);
            let w = 2.0 + p;
            let xs = [1.0 / 3.0, 2.0 / 3.0, 1.0];
            let g: f64 = xs.iter().map(|x| p * x * x * x + p * p * x * x).sum();
            let dg: f64 = xs.iter().map(|x| x * x * x + 2.0 * p * x * x).sum();
            let values = [w * (p / 4.0 + p * p / 3.0), w * (4.0 * p - 2.0), w * g];
            for (name, v) in ["q", "r", "t"].iter().zip(values) {
                let got = out.scalar(name).unwrap();
                assert!(
                    (got - v).abs() <= 1e-13 * v.abs().max(1.0),
                    "{name}: {got} vs {v}"
                );
            }
            let expected = [
                p / 4.0 + p * p / 3.0 + w * (0.25 + 2.0 * p / 3.0),
                4.0 * p - 2.0 + 4.0 * w,
                g + w * dg,
            ];
            check(
                &engine,
                "host_rules",
                &args,
                "q,r,t",
                "p",
                &expected,
                1e-12,
                1e-7,
            );
        }
    }
}

/// A module Gauss-Newton solver fits `a exp(b t)` to module ALLOCATABLE
/// data `y = 2 exp(p t)` through its `procedure(resid_fn)` and
/// `procedure(jac_fn)` dummies (the residual also keeps a SAVE
/// ALLOCATABLE weight array), and again to the data shifted by
/// `0.5 exp(p t)` through an internal residual: the fits are exact, so
/// `a = 2`, `a2 = 2.5`, `b = b2 = p`, and `d b / d p = 1`, `d a / d p = 0`.
#[test]
fn module_data_reach_the_residual_a_solver_calls_through_a_dummy() {
    for backend in BACKENDS {
        let engine = corpus("proc_module_data.f90", backend);
        for p in [0.7f64, -0.4] {
            let setting = format!("p={p}");
            let (args, out) = run(&engine, "fit_module_data", &["n=6", &setting, "noise=0"]);
            for (name, v) in [("a", 2.0), ("b", p), ("a2", 2.5), ("b2", p)] {
                let got = out.scalar(name).unwrap();
                assert!((got - v).abs() < 1e-12, "{backend:?} {name}: {got} vs {v}");
            }
            let expected = [0.0, 1.0, 0.0, 1.0];
            check(
                &engine,
                "fit_module_data",
                &args,
                "a,b,a2,b2",
                "p",
                &expected,
                1e-10,
                1e-6,
            );
        }
    }
}

/// ALLOCATABLE dummies reallocated by `v = ramp(n, p)` or by the
/// procedure a generic interface or a dummy procedure passes them to:
/// `s2 = (n+1) sum_{i=0}^{n} (p + i)^2` (allocated by the specific of the
/// generic with lower bound 0), `s4 = sum_{i=1}^{n+3} (sin(p i) + p i)^2`
/// (a local assigned the function whole), their derivatives in p.
#[test]
fn allocatable_dummies_reallocated_through_functions_generics_and_dummies() {
    for backend in BACKENDS {
        let engine = corpus("alloc_dummy_passed_on.f90", backend);
        for (n, p) in [(3usize, 0.5f64), (6, -1.25)] {
            let settings = [format!("n={n}"), format!("p={p}")];
            let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
            let (args, out) = run(&engine, "alloc_passed_on", &settings);
            assert_eq!(out.scalar("lo2").unwrap(), 0.0);
            assert_eq!(out.scalar("len1").unwrap(), (10 * n + 1) as f64);
            let m = (n + 1) as f64;
            let s2: f64 = (0..=n).map(|i| (p + i as f64).powi(2)).sum::<f64>() * m;
            let ds2: f64 = (0..=n).map(|i| 2.0 * (p + i as f64)).sum::<f64>() * m;
            let r = |i: usize| (p * i as f64).sin() + p * i as f64;
            let dr = |i: usize| i as f64 * ((p * i as f64).cos() + 1.0);
            let s4: f64 = (1..=n + 3).map(|i| r(i) * r(i)).sum();
            let ds4: f64 = (1..=n + 3).map(|i| 2.0 * r(i) * dr(i)).sum();
            let s1: f64 = (1..=n).map(|i| r(i) * r(i)).sum();
            let ds1: f64 = (1..=n).map(|i| 2.0 * r(i) * dr(i)).sum();
            for (name, v) in [("s1", s1), ("s2", s2), ("s4", s4)] {
                let got = out.scalar(name).unwrap();
                assert!(
                    (got - v).abs() <= 1e-13 * v.abs().max(1.0),
                    "{name}: {got} vs {v}"
                );
            }
            check(
                &engine,
                "alloc_passed_on",
                &args,
                "s1,s2,s4",
                "p",
                &[ds1, ds2, ds4],
                1e-12,
                1e-7,
            );
        }
    }
}
