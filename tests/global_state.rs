//! Globals and persistent state under derivatives (issue 10, items 1 and 6),
//! through the API (JIT and interpreter) and the command line:
//!
//! * a module variable written in one call and read nonlinearly in later
//!   ones, overwritten after its use, and a SAVE local of a callee: the
//!   Jacobian by several reverse sweeps over one tape, by tangent sweeps and
//!   by finite differences all equal the analytic one;
//! * module and SAVE variables updated on every call: every sweep and every
//!   finite-difference point starts from the same state, and an evaluation
//!   leaves behind the state one primal call would;
//! * every corpus program with calls or globals: several reverse sweeps
//!   over one tape against the tangent (dot-product identity and whole
//!   Jacobians), JIT against interpreter bit for bit, and the state left
//!   behind.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{
    element_count, Args, Backend, Engine, FiniteDifferences, GlobalState, Jacobian, Options,
    Selection,
};
use adjit::ir::Buffer;
use adjit::ir::Inst;
use common::check::{against, dot, mismatches, within, Rng};
use common::cli::adjit;
use common::corpus::{case_engine, case_settings, corpus_dir, programs_in};

const ACROSS_CALLS: &str = "tests/corpus/globals_across_calls.f90";
const PERSISTENT: &str = "tests/globals/persistent.f90";

/// Derivatives the AD modes must match to round-off.
const EXACT: f64 = 1e-13;
/// Central finite differences against analytic values.
const FD: f64 = 1e-6;

fn engine(path: &str, backend: Backend) -> Engine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_files(&[path], options).expect("compiles")
}

fn sel(text: &str) -> Vec<Selection> {
    Selection::parse_list(text).expect("selection")
}

/// The three Jacobians of one engine at `args`: adjoint (one tape, one
/// reverse sweep per row), tangent with `directions` per sweep, central
/// finite differences.
fn jacobians(
    engine: &Engine,
    entry: &str,
    args: &Args,
    of: &str,
    wrt: &str,
    directions: usize,
) -> [Jacobian; 3] {
    let (of, wrt) = (sel(of), sel(wrt));
    let adjoint = engine
        .adjoint(Some(entry), &of, &wrt, &AdjointOptions::default())
        .expect("adjoint");
    let tangent = engine
        .tangent(Some(entry), &of, &wrt, directions)
        .expect("tangent");
    let primal = engine.procedure(Some(entry)).expect("primal");
    let start = engine.state();
    let adj = adjoint.jacobian(args).expect("adjoint Jacobian");
    engine.set_state(&start).expect("state");
    let tan = tangent.jacobian(args).expect("tangent Jacobian");
    engine.set_state(&start).expect("state");
    let fd = FiniteDifferences::new(&primal)
        .jacobian(args, &of, &wrt)
        .expect("finite differences");
    [adj, tan, fd]
}

/// The analytic Jacobian of `across_calls.f90`'s `top` at `x`.
fn across_calls_jacobian(x: [f64; 2]) -> Vec<f64> {
    let g1 = x[0] * x[1];
    let g2 = x[0] + x[1] * x[1];
    let dg1 = [x[1], x[0]];
    let dg2 = [1.0, 2.0 * x[1]];
    let rows = [
        (g1.cos(), dg1),
        (2.0 * g1, dg1),
        (g1.exp() + 3.0 * g1 * g1, dg1),
        (3.0 * g2 * g2, dg2),
    ];
    rows.iter()
        .flat_map(|&(f, d)| [f * d[0], f * d[1]])
        .collect()
}

#[test]
fn a_global_across_calls_under_several_reverse_sweeps() {
    let x = [0.7, 1.3];
    let expected = across_calls_jacobian(x);
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(ACROSS_CALLS, backend);
        let mut args = engine.procedure(Some("top")).unwrap().args();
        args.set_array("x", &x).unwrap();
        for directions in [1, 2] {
            let [adj, tan, fd] = jacobians(&engine, "top", &args, "y", "x", directions);
            let mut failures = against("adjoint", &adj, &expected, EXACT);
            failures.extend(against("tangent", &tan, &expected, EXACT));
            failures.extend(against("finite differences", &fd, &expected, FD));
            assert!(failures.is_empty(), "{backend:?}: {failures:#?}");
        }
        // Rows in any order from one tape: each reverse sweep sees the
        // forward sweep's globals, not what the previous sweep left.
        let adjoint = engine
            .adjoint(
                Some("top"),
                &sel("y"),
                &sel("x"),
                &AdjointOptions::default(),
            )
            .unwrap();
        let mut tape = adjoint.record(&args).unwrap();
        for row in [3, 0, 3, 2, 1] {
            let mut seed = vec![0.0; 4];
            seed[row] = 1.0;
            let g = tape.reverse(&seed).unwrap();
            for (c, v) in g.iter().enumerate() {
                let e = expected[row * 2 + c];
                assert!(
                    (v - e).abs() <= EXACT * e.abs().max(1.0),
                    "{backend:?}: row {row}"
                );
            }
        }
    }
}

/// Every option combination of the adjoint (recording policy, activity).
#[test]
fn a_global_across_calls_with_every_adjoint_option() {
    use adjit::ad::adjoint::RecordPolicy;
    let x = [-0.4, 0.9];
    let expected = across_calls_jacobian(x);
    let engine = engine(ACROSS_CALLS, Backend::Jit);
    let mut args = engine.procedure(Some("top")).unwrap().args();
    args.set_array("x", &x).unwrap();
    for record in [RecordPolicy::Conservative, RecordPolicy::Tbr] {
        for activity in [false, true] {
            let options = AdjointOptions {
                record,
                activity,
                ..AdjointOptions::default()
            };
            let jac = engine
                .adjoint(Some("top"), &sel("y"), &sel("x"), &options)
                .unwrap()
                .jacobian(&args)
                .unwrap();
            let failures = against("adjoint", &jac, &expected, EXACT);
            assert!(failures.is_empty(), "{options:?}: {failures:#?}");
        }
    }
}

/// The analytic Jacobian of `persistent.f90`'s `step` from state `(acc, s)`.
fn persistent_jacobian(x: [f64; 3], acc: f64, s0: f64) -> Vec<f64> {
    let s = s0 + x[0] * x[1];
    let ds = [x[1], x[0], 0.0];
    let mut j = vec![0.0; 9];
    for i in 0..3 {
        for k in 0..3 {
            let diag = if i == k {
                2.0 * (acc + 1.0) * x[i] + s
            } else {
                0.0
            };
            j[i * 3 + k] = diag + x[i] * ds[k];
        }
    }
    j
}

fn scalar_of(state: &GlobalState, name: &str) -> f64 {
    state
        .get(name)
        .unwrap_or_else(|| panic!("no global {name}"))
        .get_f64(0)
}

/// `(acc, s, calls)` of `persistent.f90`.
fn counters(engine: &Engine) -> [f64; 3] {
    let state = engine.state();
    [
        scalar_of(&state, "counter::acc"),
        scalar_of(&state, "counter::s"),
        scalar_of(&state, "step::calls"),
    ]
}

#[test]
fn persistent_state_every_evaluation_starts_from_one_state() {
    let x = [1.0, 2.0, 3.0];
    let (of, wrt) = (sel("y"), sel("x"));
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(PERSISTENT, backend);
        let primal = engine.procedure(None).unwrap();
        let mut args = primal.args();
        args.set_array("x", &x).unwrap();
        let adjoint = engine
            .adjoint(None, &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let tangent1 = engine.tangent(None, &of, &wrt, 1).unwrap();
        let tangent3 = engine.tangent(None, &of, &wrt, 3).unwrap();
        let fd = FiniteDifferences::new(&primal);
        type Eval<'a> = Box<dyn Fn() -> Jacobian + 'a>;
        let evaluations: [(&str, Eval, f64); 4] = [
            (
                "adjoint",
                Box::new(|| adjoint.jacobian(&args).unwrap()),
                EXACT,
            ),
            (
                "tangent, 1 direction",
                Box::new(|| tangent1.jacobian(&args).unwrap()),
                EXACT,
            ),
            (
                "tangent, 3 directions",
                Box::new(|| tangent3.jacobian(&args).unwrap()),
                EXACT,
            ),
            (
                "finite differences",
                Box::new(|| fd.jacobian(&args, &of, &wrt).unwrap()),
                FD,
            ),
        ];
        // Each evaluation, twice in a row: the second starts where one
        // primal call from the first one's start would have left the state.
        for (what, eval, tol) in &evaluations {
            let start = engine.state();
            let [acc, s, calls] = counters(&engine);
            let jac = eval();
            let failures = against(what, &jac, &persistent_jacobian(x, acc, s), *tol);
            assert!(failures.is_empty(), "{backend:?}: {failures:#?}");
            let after = counters(&engine);
            let mut once = args.clone();
            engine.set_state(&start).unwrap();
            primal.call(&mut once).unwrap();
            assert_eq!(
                after,
                counters(&engine),
                "{backend:?}: {what} leaves one call's state"
            );
            assert_eq!(
                after,
                [acc + 1.0, s + x[0] * x[1], calls + 1.0],
                "{backend:?}: {what}"
            );
            let jac = eval();
            let failures = against(
                what,
                &jac,
                &persistent_jacobian(x, acc + 1.0, after[1]),
                *tol,
            );
            assert!(failures.is_empty(), "{backend:?}: second: {failures:#?}");
        }
        // The values come from the same state too.
        let [acc, s, calls] = counters(&engine);
        let jac = adjoint.jacobian(&args).unwrap();
        for i in 0..3 {
            let y = (acc + 1.0) * x[i] * x[i] + (s + x[0] * x[1]) * x[i] + calls + 1.0;
            assert_eq!(jac.values[i], y, "{backend:?}: value of y({})", i + 1);
        }
    }
}

#[test]
fn a_state_of_another_program_is_refused() {
    let a = engine(PERSISTENT, Backend::Jit);
    let b = engine(ACROSS_CALLS, Backend::Jit);
    let err = b.set_state(&a.state()).unwrap_err();
    assert!(err.message.contains("does not belong"), "{err}");
}

/// `adjit jacobian --json` in one mode: the matrix, row-major.
fn cli_jacobian(file: &str, entry: &str, set: &str, mode: &str, extra: &[&str]) -> Vec<f64> {
    let mut argv = vec![
        "jacobian", file, "--entry", entry, "--of", "y", "--wrt", "x", "--set", set, "--mode",
        mode, "--json",
    ];
    argv.extend_from_slice(extra);
    let (code, out, err) = adjit(&argv);
    assert_eq!(code, 0, "{argv:?}: {err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    json["matrix"]
        .as_array()
        .expect("matrix")
        .iter()
        .flat_map(|row| row.as_array().expect("row").iter())
        .map(|v| v.as_f64().expect("number"))
        .collect()
}

fn close(what: &str, got: &[f64], expected: &[f64], tol: f64) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (k, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= tol * e.abs().max(1.0),
            "{what}: entry {k}: {g:e}, expected {e:e}"
        );
    }
}

#[test]
fn command_line_jacobians_of_globals_agree_with_the_analytic_ones() {
    let cases = [
        (
            ACROSS_CALLS,
            "top",
            "x=0.7,1.3",
            across_calls_jacobian([0.7, 1.3]),
        ),
        (
            PERSISTENT,
            "step",
            "x=1,2,3",
            persistent_jacobian([1.0, 2.0, 3.0], 0.0, 0.5),
        ),
    ];
    for (file, entry, set, expected) in &cases {
        for extra in [&[][..], &["--interp"][..], &["--directions", "1"][..]] {
            for (mode, tol) in [("adjoint", EXACT), ("tangent", EXACT), ("fd", FD)] {
                let got = cli_jacobian(file, entry, set, mode, extra);
                close(
                    &format!("{file} --mode {mode} {extra:?}"),
                    &got,
                    expected,
                    tol,
                );
            }
        }
        let (code, out, err) = adjit(&[
            "check", file, "--entry", entry, "--of", "y", "--wrt", "x", "--set", set,
        ]);
        assert_eq!(code, 0, "check {file}:\n{out}\n{err}");
    }
}

/// True when the program has globals or calls.
fn has_calls_or_globals(engine: &Engine) -> bool {
    let m = engine.module();
    !m.globals.is_empty()
        || m.procs
            .iter()
            .any(|p| p.insts.iter().any(|i| matches!(i.kind, Inst::Call(..))))
}

/// One corpus case on one backend: the adjoint Jacobian (several reverse
/// sweeps over one tape), dot products of several reverse sweeps over a
/// second tape, and the state the evaluations leave.
struct Outcome {
    adjoint: Jacobian,
    failures: Vec<String>,
}

fn corpus_case(
    backend: Backend,
    path: &std::path::Path,
    entry: Option<&str>,
    sets: &[String],
    label: &str,
) -> Option<Outcome> {
    let options = Options {
        backend,
        ..Options::default()
    };
    let (engine, sets) = case_engine(path, entry, sets, options).expect("compiles");
    if !has_calls_or_globals(&engine) {
        return None;
    }
    let primal = engine.procedure(entry).expect("entry");
    let mut args = primal.args();
    args.apply_settings(&sets).expect("settings");
    let start = engine.state();
    // One primal call: the state every evaluation must leave behind.
    let mut once = args.clone();
    if primal.call(&mut once).is_err() {
        return None; // a case that exercises STOP or a runtime error
    }
    let end = engine.state();
    engine.set_state(&start).unwrap();
    let floats: Vec<String> = (0..args.names().len())
        .filter(|&i| args.ty(i).is_float() && !args.buffers()[i].is_empty())
        .map(|i| args.names()[i].clone())
        .collect();
    if floats.is_empty() {
        return None;
    }
    let s = Selection::parse_list(&floats.join(",")).unwrap();
    let n = element_count(&args, &s).unwrap();
    let name = Some(primal.name());
    let adjoint = engine
        .adjoint(name, &s, &s, &AdjointOptions::default())
        .expect("adjoint");
    let tangent = engine
        .tangent(name, &s, &s, n.clamp(1, 8))
        .expect("tangent");
    let mut failures = Vec::new();
    let mut left = |what: &str, engine: &Engine| {
        if engine.state() != end {
            failures.push(format!(
                "{label}: {what} leaves another state than one call"
            ));
        }
        engine.set_state(&start).unwrap();
    };
    let adj = adjoint.jacobian(&args).expect("adjoint Jacobian");
    left("the adjoint Jacobian", &engine);
    let tan = tangent.jacobian(&args).expect("tangent Jacobian");
    left("the tangent Jacobian", &engine);
    let mut failures_j = mismatches("adjoint vs tangent", &args, &adj, &tan);
    // Several reverse sweeps over one tape against one tangent direction
    // each: <J xd, yb> = <xd, J^T yb>.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ label.len() as u64);
    let any_f32 = (0..args.names().len()).any(|i| args.ty(i) == adjit::ir::Type::F32);
    let dot_tol = if any_f32 { 1e-5 } else { 1e-13 };
    {
        let mut tape = adjoint.record(&args).expect("tape");
        for sweep in 0..3 {
            let xd = rng.vec(adj.cols());
            let yb = rng.vec(adj.rows());
            let xb = tape.reverse(&yb).expect("reverse sweep");
            engine.set_state(&start).unwrap();
            let yd = tangent.directional(&args, &xd).expect("tangent");
            engine.set_state(&end).unwrap();
            let (lhs, m1) = dot(&yd, &yb);
            let (rhs, m2) = dot(&xd, &xb);
            if !within(lhs, rhs, dot_tol * (m1 + m2).max(f64::MIN_POSITIVE)) {
                failures_j.push(format!("dot product, sweep {sweep}: {lhs:e} vs {rhs:e}"));
            }
        }
    }
    left("a tape and its reverse sweeps", &engine);
    failures.extend(failures_j.into_iter().map(|m| format!("{label}: {m}")));
    Some(Outcome {
        adjoint: adj,
        failures,
    })
}

#[test]
fn corpus_programs_with_calls_or_globals_under_several_reverse_sweeps() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for program in programs_in(&corpus_dir()) {
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let (entry, sets) = case_settings(case);
            let jit = corpus_case(Backend::Jit, &program.path, entry.as_deref(), &sets, &label);
            let interp = corpus_case(
                Backend::Interpreter,
                &program.path,
                entry.as_deref(),
                &sets,
                &format!("{label} (interpreter)"),
            );
            let (Some(jit), Some(interp)) = (jit, interp) else {
                continue;
            };
            if jit.adjoint.matrix != interp.adjoint.matrix {
                failures.push(format!("{label}: JIT and interpreter adjoints differ"));
            }
            failures.extend(jit.failures);
            failures.extend(interp.failures);
            checked += 1;
        }
    }
    eprintln!("{checked} corpus cases with calls or globals differentiated");
    assert!(
        checked >= 12,
        "only {checked} corpus cases with calls or globals were differentiated"
    );
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Buffers compare by value: a state taken twice without a call between is
/// the same.
#[test]
fn states_compare_by_value() {
    let engine = engine(PERSISTENT, Backend::Jit);
    assert_eq!(engine.state(), engine.state());
    assert_eq!(
        engine.state().get("COUNTER::S"),
        Some(&Buffer::F64(vec![0.5]))
    );
    assert_eq!(engine.state().len(), 3);
}

/// Evaluations of one engine in parallel threads: each holds the program's
/// globals from its forward sweep to its last reverse sweep, so no other
/// thread's call changes the module variable in between.
#[test]
fn parallel_evaluations_see_their_own_globals() {
    let engine = engine(ACROSS_CALLS, Backend::Jit);
    let adjoint = engine
        .adjoint(
            Some("top"),
            &sel("y"),
            &sel("x"),
            &AdjointOptions::default(),
        )
        .unwrap();
    let tangent = engine
        .tangent(Some("top"), &sel("y"), &sel("x"), 1)
        .unwrap();
    let primal = engine.procedure(Some("top")).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (adjoint, tangent, primal) = (&adjoint, &tangent, &primal);
            scope.spawn(move || {
                for i in 0..25 {
                    let x = [0.1 + 0.2 * t as f64, -0.5 + 0.04 * i as f64];
                    let mut args = primal.args();
                    args.set_array("x", &x).unwrap();
                    let expected = across_calls_jacobian(x);
                    let adj = adjoint.jacobian(&args).unwrap();
                    let tan = tangent.jacobian(&args).unwrap();
                    let mut failures = against("adjoint", &adj, &expected, EXACT);
                    failures.extend(against("tangent", &tan, &expected, EXACT));
                    assert!(failures.is_empty(), "thread {t}, x = {x:?}: {failures:#?}");
                    primal.call(&mut args).unwrap();
                }
            });
        }
    });
}
