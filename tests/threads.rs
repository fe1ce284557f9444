//! Threads: a compiled program is `Send + Sync`; Jacobians computed by
//! blocks of rows (adjoint) or columns (tangent) on several threads equal
//! the one-thread ones bit for bit; many threads calling one procedure at
//! once get what one thread gets; a program with globals keeps its
//! documented state (one primal call's worth per Jacobian) whatever the
//! thread count, and its evaluations run on many threads at once (each
//! against its own copy of the globals); and `adjit jacobian --threads N`
//! prints the same matrix for every N.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Adjoint, Args, Engine, Jacobian, Options, Procedure, Selection, Tangent};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn compiled_programs_are_send_and_sync() {
    assert_send_sync::<Engine>();
    assert_send_sync::<Procedure>();
    assert_send_sync::<Adjoint>();
    assert_send_sync::<Tangent>();
    assert_send_sync::<Args>();
}

/// The Bratu problem at size `n` with a non-trivial point.
fn bratu(n: usize) -> (Engine, Args) {
    let engine = Engine::from_files(&["examples/bratu.f"], Options::default()).unwrap();
    let f = engine.procedure(None).unwrap();
    let mut args = f.args();
    args.set_scalar("dim", n as f64).unwrap();
    args.set_scalar("parmax", 2.0).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    (engine, args)
}

fn selections() -> (Vec<Selection>, Vec<Selection>) {
    (
        Selection::parse_list("f").unwrap(),
        Selection::parse_list("x,prm").unwrap(),
    )
}

#[test]
fn threaded_jacobians_equal_the_serial_ones() {
    let (engine, args) = bratu(23);
    let (of, wrt) = selections();
    let adjoint = engine
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let tangent = engine.tangent(None, &of, &wrt, 4).unwrap();
    let serial = adjoint.jacobian(&args).unwrap();
    assert_eq!((serial.rows(), serial.cols()), (23, 25));
    // Tangent and adjoint agree to round-off (a real Jacobian, not zeros).
    let tangent_serial = tangent.jacobian(&args).unwrap();
    let scale = serial.matrix.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(scale > 1.0);
    for (a, t) in serial.matrix.iter().zip(&tangent_serial.matrix) {
        assert!((a - t).abs() <= 1e-13 * scale, "{a} vs {t}");
    }
    let same = |a: &Jacobian, b: &Jacobian| {
        assert_eq!((&a.of, &a.wrt, &a.values), (&b.of, &b.wrt, &b.values));
        assert_eq!(a.matrix, b.matrix);
    };
    for threads in [1, 2, 3, 7, 64] {
        same(&adjoint.jacobian_threads(&args, threads).unwrap(), &serial);
        same(
            &tangent.jacobian_threads(&args, threads).unwrap(),
            &tangent_serial,
        );
    }
}

#[test]
fn many_threads_calling_one_program_get_the_same_results() {
    let (engine, args) = bratu(9);
    let (of, wrt) = selections();
    let f = engine.procedure(None).unwrap();
    let adjoint = engine
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let mut one = args.clone();
    f.call(&mut one).unwrap();
    let jac = adjoint.jacobian(&args).unwrap();
    std::thread::scope(|s| {
        for t in 0..8 {
            let (f, adjoint, args, one, jac) = (&f, &adjoint, &args, &one, &jac);
            s.spawn(move || {
                for _ in 0..20 {
                    let mut mine = args.clone();
                    f.call(&mut mine).unwrap();
                    assert_eq!(
                        mine.f64s("f").unwrap(),
                        one.f64s("f").unwrap(),
                        "thread {t}"
                    );
                    assert_eq!(adjoint.jacobian(args).unwrap().matrix, jac.matrix);
                }
            });
        }
    });
}

#[test]
fn a_program_with_globals_keeps_its_state_whatever_the_threads() {
    let source = std::fs::read_to_string("tests/globals/persistent.f90").unwrap();
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let run = |threads: usize| {
        let engine = Engine::from_source("persistent.f90", &source).unwrap();
        let f = engine.procedure(None).unwrap();
        let mut args = f.args();
        args.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
        let adjoint = engine
            .adjoint(None, &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let tangent = engine.tangent(None, &of, &wrt, 1).unwrap();
        let a = adjoint.jacobian_threads(&args, threads).unwrap();
        let t = tangent.jacobian_threads(&args, threads).unwrap();
        // After two Jacobians, the state of two primal calls: acc = 2,
        // s = 0.5 + 2 * 2, calls = 2; one more call sees it.
        f.call(&mut args).unwrap();
        (a, t, args.f64s("y").unwrap())
    };
    let (a1, t1, y1) = run(1);
    // y(i) = 3 x(i)^2 + (4.5 + 2) x(i) + 3 on the third call.
    assert_eq!(y1, [12.5, 28.0, 49.5]);
    // The adjoint sees the first call's state (acc = 1, s = 2.5), the
    // tangent the second's (acc = 2, s = 4.5): dy(1)/dx(1) = 2 acc x(1) +
    // s + x(1) x(2) = 2 + 2.5 + 2 and 4 + 4.5 + 2.
    assert_eq!((a1.get(0, 0), t1.get(0, 0)), (6.5, 10.5));
    for threads in [2, 3] {
        let (a, t, y) = run(threads);
        assert_eq!(
            (a.matrix, t.matrix, y),
            (a1.matrix.clone(), t1.matrix.clone(), y1.clone())
        );
    }
}

#[test]
fn evaluations_of_a_program_with_globals_run_on_many_threads_at_once() {
    let engine =
        Engine::from_files(&["tests/globals/coefficients.f90"], Options::default()).unwrap();
    let setup = engine.procedure(Some("setup")).unwrap();
    let mut coef = setup.args();
    coef.set_scalar("a", 2.0).unwrap();
    coef.set_scalar("b", 0.5).unwrap();
    setup.call(&mut coef).unwrap();
    let f = engine.procedure(Some("f")).unwrap();
    let n = 12;
    let mut args = f.args();
    args.set_scalar("n", n as f64).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 0.3 + 0.1 * i as f64).collect();
    args.set_array("x", &x).unwrap();
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let adjoint = engine
        .adjoint(Some("f"), &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let tangent = engine.tangent(Some("f"), &of, &wrt, 3).unwrap();
    let serial = adjoint.jacobian(&args).unwrap();
    // Analytic: dy(i)/dx(i) = c1 cos x(i) + c2 x(i+1), dy(i)/dx(i+1) =
    // c2 x(i) (cyclic), with the coefficients the globals hold.
    for i in 0..n {
        let j = (i + 1) % n;
        for c in 0..n {
            let want = if c == i {
                2.0 * x[i].cos() + 0.5 * x[j]
            } else if c == j {
                0.5 * x[i]
            } else {
                0.0
            };
            let got = serial.get(i, c);
            assert!(
                (got - want).abs() <= 1e-14 * want.abs().max(1.0),
                "({i}, {c}): {got} vs {want}"
            );
        }
    }
    let mut one = args.clone();
    f.call(&mut one).unwrap();
    std::thread::scope(|s| {
        for t in 0..6 {
            let (f, adjoint, tangent, args, one, serial) =
                (&f, &adjoint, &tangent, &args, &one, &serial);
            s.spawn(move || {
                for _ in 0..10 {
                    let mut mine = args.clone();
                    f.call(&mut mine).unwrap();
                    assert_eq!(
                        mine.f64s("y").unwrap(),
                        one.f64s("y").unwrap(),
                        "thread {t}"
                    );
                    assert_eq!(
                        adjoint.jacobian_threads(args, 2).unwrap().matrix,
                        serial.matrix
                    );
                    let tan = tangent.jacobian_threads(args, 3).unwrap();
                    for (a, b) in tan.matrix.iter().zip(&serial.matrix) {
                        assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "thread {t}");
                    }
                }
            });
        }
    });
    // The coefficients are still the program's: a primal call from the
    // main thread sees them.
    let mut last = args.clone();
    f.call(&mut last).unwrap();
    assert_eq!(last.f64s("y").unwrap(), one.f64s("y").unwrap());
}

#[test]
fn the_cli_prints_the_same_jacobian_for_every_thread_count() {
    let base = [
        "jacobian",
        "examples/bratu.f",
        "--of",
        "f",
        "--wrt",
        "x,prm",
        "--set",
        "dim=7",
        "--set",
        "parmax=2",
        "--set",
        "x=1.72,3.45,4.16,4.87,4.16,3.45,1.72",
        "--set",
        "prm=1.3,0.245828",
        "--json",
    ];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (code, out, err) = common::cli::adjit(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let one = with(&["--threads", "1"]);
    assert!(one.contains("\"rows\": 7, \"cols\": 9"), "{one}");
    assert_eq!(with(&["--threads", "3"]), one);
    assert_eq!(with(&[]), one);
    assert_eq!(
        with(&["--threads", "4", "--mode", "tangent", "--directions", "1"]).len(),
        one.len()
    );
    let (code, _, err) = common::cli::adjit(&[&base[..], &["--threads", "0"]].concat());
    assert_eq!(code, 2, "{err}");
}
