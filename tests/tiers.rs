//! Tiered compilation (`adjit::engine::Tiering`): a handle is callable
//! once its baseline code is compiled, and its calls move to the optimized
//! code once the background thread installs it. Both tiers give the same
//! results and errors bit for bit; the baseline tier compiles less (no
//! loop versions); calls from several threads during the install, and
//! dropping a handle while its optimized code compiles, are safe.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Args, Engine, Options, Selection, Tiering};
use adjit::jit::codegen::{CompiledModule, JitOptions};

/// The Bratu problem at size `n` compiled with `tiering`, and arguments.
fn bratu(n: usize, tiering: Tiering) -> (Engine, Args) {
    let options = Options {
        tiering,
        ..Options::default()
    };
    let engine = Engine::from_files(&["examples/bratu.f"], options).unwrap();
    let mut args = engine.procedure(None).unwrap().args();
    args.set_scalar("dim", n as f64).unwrap();
    args.set_scalar("parmax", 2.0).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("prm", &[1.3, 0.245828]).unwrap();
    (engine, args)
}

fn sel(list: &str) -> Vec<Selection> {
    Selection::parse_list(list).unwrap()
}

/// Bratu's Jacobian (adjoint) and residual (primal) under `tiering`, as
/// bits; under `Tiered`, one before and one after the optimized code is
/// installed.
fn bratu_results(tiering: Tiering) -> Vec<Vec<u64>> {
    let (engine, args) = bratu(40, tiering);
    let adjoint = engine
        .adjoint(None, &sel("f"), &sel("x,prm"), &AdjointOptions::default())
        .unwrap();
    let primal = engine.procedure(None).unwrap();
    let run = || {
        let jacobian = adjoint.jacobian(&args).unwrap();
        let mut a = args.clone();
        primal.call(&mut a).unwrap();
        let f = a.f64s("f").unwrap();
        vec![
            jacobian.matrix.iter().map(|x| x.to_bits()).collect(),
            f.iter().map(|x| x.to_bits()).collect::<Vec<u64>>(),
        ]
    };
    let mut out = run();
    adjoint.wait_optimized().unwrap();
    primal.wait_optimized().unwrap();
    out.extend(run());
    out
}

#[test]
fn every_tiering_gives_the_same_bits() {
    let optimized = bratu_results(Tiering::Optimized);
    assert!(optimized[0].iter().any(|&x| x != 0), "a real Jacobian");
    assert_eq!(optimized[0], optimized[2]);
    assert_eq!(bratu_results(Tiering::Baseline), optimized);
    assert_eq!(bratu_results(Tiering::Tiered), optimized);
}

/// The baseline tier of Bratu compiles no loop versions: fewer IR blocks
/// than the optimized tier; a tiered module starts with it and installs
/// the optimized code, which it then runs.
#[test]
fn the_baseline_tier_compiles_less_and_the_optimized_tier_installs() {
    let engine = Engine::from_files(&["examples/bratu.f"], Options::default()).unwrap();
    let module = engine.module();
    let at = |tiering| {
        let options = JitOptions {
            tiering,
            ..JitOptions::default()
        };
        CompiledModule::compile(module, &options).expect("compiles")
    };
    let blocks =
        |c: &CompiledModule| -> usize { c.module().procs.iter().map(|p| p.blocks.len()).sum() };
    let baseline = at(Tiering::Baseline);
    let optimized = at(Tiering::Optimized);
    assert!(!baseline.is_optimized());
    assert!(optimized.is_optimized());
    assert!(
        blocks(&baseline) < blocks(&optimized),
        "baseline {} blocks, optimized {}",
        blocks(&baseline),
        blocks(&optimized)
    );
    let tiered = at(Tiering::Tiered);
    tiered.wait_optimized().unwrap();
    assert!(tiered.is_optimized());
    assert_eq!(blocks(&tiered), blocks(&optimized));
}

/// An error (a subscript out of bounds) is reported the same, located at
/// the same statement, by every tier.
#[test]
fn every_tier_reports_the_same_error() {
    let text = "subroutine g(x, n, y)\n  integer n\n  real(8) x(10), y\n  integer i\n  y = 0\n  do i = 1, n\n    y = y + x(i) * x(i)\n  end do\nend subroutine\n";
    let message = |tiering| {
        let options = Options {
            tiering,
            ..Options::default()
        };
        let engine = Engine::from_sources(&[("g.f90".into(), text.into())], options).unwrap();
        let adjoint = engine
            .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
            .unwrap();
        let primal = engine.procedure(None).unwrap();
        let mut args = primal.args();
        args.set_scalar("n", 11.0).unwrap();
        let first = (
            primal.call(&mut args.clone()).unwrap_err().to_string(),
            adjoint.jacobian(&args).unwrap_err().to_string(),
        );
        primal.wait_optimized().unwrap();
        adjoint.wait_optimized().unwrap();
        let second = (
            primal.call(&mut args.clone()).unwrap_err().to_string(),
            adjoint.jacobian(&args).unwrap_err().to_string(),
        );
        assert_eq!(first, second);
        first
    };
    let optimized = message(Tiering::Optimized);
    assert!(optimized.0.contains("g.f90:"), "{}", optimized.0);
    assert_eq!(message(Tiering::Baseline), optimized);
    assert_eq!(message(Tiering::Tiered), optimized);
}

/// Threads calling one tiered adjoint while its optimized code is
/// compiled and installed all get the optimized code's bits.
#[test]
fn threads_calling_during_the_install_get_the_same_bits() {
    let (engine, args) = bratu(30, Tiering::Optimized);
    let want = engine
        .adjoint(None, &sel("f"), &sel("x,prm"), &AdjointOptions::default())
        .unwrap()
        .jacobian(&args)
        .unwrap()
        .matrix;
    for _ in 0..3 {
        let (engine, args) = bratu(30, Tiering::Tiered);
        let adjoint = engine
            .adjoint(None, &sel("f"), &sel("x,prm"), &AdjointOptions::default())
            .unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20 {
                        let got = adjoint.jacobian(&args).unwrap().matrix;
                        assert!(got
                            .iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()));
                    }
                });
            }
        });
        adjoint.wait_optimized().unwrap();
        assert_eq!(adjoint.jacobian(&args).unwrap().matrix, want);
    }
}

/// Handles dropped while their optimized code compiles (at once, or
/// after one call) leave nothing behind that fails.
#[test]
fn dropping_a_handle_while_its_optimized_code_compiles_is_safe() {
    for i in 0..8 {
        let (engine, args) = bratu(12, Tiering::Tiered);
        let adjoint = engine
            .adjoint(None, &sel("f"), &sel("x,prm"), &AdjointOptions::default())
            .unwrap();
        if i % 2 == 1 {
            adjoint.jacobian(&args).unwrap();
        }
        drop(adjoint);
        drop(engine);
    }
}

/// With FMA contraction (which changes results against unfused code), the
/// baseline tier fuses the same sums as the optimized one: the tangents
/// and adjoints of the three benchmark examples agree bit for bit.
#[test]
fn fma_contraction_fuses_the_same_sums_in_both_tiers() {
    let cases = [
        ("examples/griewank.f90", "c", "a", "s", 9.0),
        ("examples/product.f90", "y", "x", "n", 9.0),
        ("examples/bratu.f", "f", "x,prm", "dim", 9.0),
    ];
    for (file, of, wrt, size, n) in cases {
        let run = |tiering| {
            let options = Options {
                tiering,
                fma_contraction: true,
                ..Options::default()
            };
            let engine = Engine::from_files(&[file], options).unwrap();
            let mut args = engine.procedure(None).unwrap().args();
            args.set_scalar(size, n).unwrap();
            if file.ends_with("bratu.f") {
                args.set_scalar("parmax", 2.0).unwrap();
            }
            let names = args.names().to_vec();
            for (i, name) in names.iter().enumerate() {
                if args.ty(i).is_float() && args.is_array(i) {
                    let len = args.get(name).unwrap().len();
                    let x: Vec<f64> = (0..len).map(|k| 1.1 + (k as f64 * 0.37).sin()).collect();
                    args.set_array(name, &x).unwrap();
                }
            }
            let tangent = engine.tangent(None, &sel(of), &sel(wrt), 1).unwrap();
            let adjoint = engine
                .adjoint(None, &sel(of), &sel(wrt), &AdjointOptions::default())
                .unwrap();
            let bits = |m: Vec<f64>| m.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
            (
                bits(tangent.jacobian(&args).unwrap().matrix),
                bits(adjoint.jacobian(&args).unwrap().matrix),
            )
        };
        let optimized = run(Tiering::Optimized);
        assert!(optimized.0.iter().any(|&x| x != 0), "{file}");
        assert_eq!(run(Tiering::Baseline), optimized, "{file}");
    }
}

/// The strong zeros of an adjoint (`0 * inf = 0`, never NaN) are the same
/// bits in every tier and in the interpreter: the baseline tier lowers
/// them as plain selects, the optimized tier as lane masks.
#[test]
fn strong_zeros_are_the_same_bits_in_every_tier() {
    let text = "subroutine f(x, y)\n  real(8) x(3), y\n  y = x(1) * x(2) + x(2) * x(3) * x(1)\nend subroutine\n";
    let inf = f64::INFINITY;
    let points = [
        [0.0, inf, -0.0],
        [inf, 0.0, f64::NAN],
        [-0.0, 2.0, inf],
        [1.5, -inf, 0.0],
    ];
    let bits = |options: Options| {
        let engine = Engine::from_sources(&[("f.f90".into(), text.into())], options).unwrap();
        let adjoint = engine
            .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
            .unwrap();
        let mut out = Vec::new();
        for x in points {
            for seed in [0.0, 1.0, -0.0] {
                let mut args = engine.procedure(None).unwrap().args();
                args.set_array("x", &x).unwrap();
                let (y, g) = adjoint.vjp(&args, &[seed]).unwrap();
                out.push(y.iter().chain(&g).map(|v| v.to_bits()).collect::<Vec<_>>());
            }
        }
        out
    };
    let at = |tiering| Options {
        tiering,
        ..Options::default()
    };
    let optimized = bits(at(Tiering::Optimized));
    assert_eq!(bits(at(Tiering::Baseline)), optimized);
    let interpreted = bits(Options {
        backend: adjit::engine::Backend::Interpreter,
        ..Options::default()
    });
    assert_eq!(interpreted, optimized);
}

/// An element reference with several subscripts out of bounds reports the
/// first one, as the interpreter does, in every tier (the baseline and
/// optimized code test all of a reference's bounds with one branch and
/// pick the first failing check on the cold path).
#[test]
fn the_first_failing_subscript_is_reported_in_every_tier() {
    let text = "subroutine g(a, i, j, y)\n  integer i, j\n  real(8) a(2, 3), y\n  y = a(i, j)\nend subroutine\n";
    let message = |options: Options, i: f64, j: f64| {
        let engine = Engine::from_sources(&[("g.f90".into(), text.into())], options).unwrap();
        let primal = engine.procedure(None).unwrap();
        let mut args = primal.args();
        args.set_scalar("i", i).unwrap();
        args.set_scalar("j", j).unwrap();
        primal.call(&mut args).unwrap_err().to_string()
    };
    for (i, j) in [(5.0, 7.0), (1.0, 7.0), (0.0, 1.0), (2.0, 0.0)] {
        let want = message(
            Options {
                backend: adjit::engine::Backend::Interpreter,
                ..Options::default()
            },
            i,
            j,
        );
        for tiering in [Tiering::Optimized, Tiering::Baseline] {
            let options = Options {
                tiering,
                ..Options::default()
            };
            assert_eq!(message(options, i, j), want, "a({i}, {j}), {tiering:?}");
        }
    }
}

/// A one-dimensional array given less storage than declared (a Fortran
/// caller passing an element: sequence association) reports a subscript
/// outside its dimension, or an element beyond its storage, as the
/// interpreter does, in every tier: both checks are one compare with
/// their minimum in the baseline tier, told apart when the error is
/// reported (constant lower bound) or on the cold path (a lower bound
/// read from an argument).
#[test]
fn a_short_array_reports_its_dimension_or_its_storage_in_every_tier() {
    let text = "subroutine g(a, i, y)\n  integer i\n  real(8) a(4), y\n  call h(a(3), i, y)\nend subroutine\nsubroutine g2(a, k, i, y)\n  integer k, i\n  real(8) a(4), y\n  call v(a(3), k, i, y)\nend subroutine\nsubroutine h(b, i, y)\n  integer i\n  real(8) b(3), y\n  y = b(i) + b(1)\nend subroutine\nsubroutine v(c, k, i, y)\n  integer k, i\n  real(8) c(k:k+2), y\n  y = c(i - 1 + k)\nend subroutine\n";
    let message = |options: Options, entry: &str, i: f64| {
        let engine = Engine::from_sources(&[("g.f90".into(), text.into())], options).unwrap();
        let primal = engine.procedure(Some(entry)).unwrap();
        let mut args = primal.args();
        if entry == "g2" {
            args.set_scalar("k", -3.0).unwrap();
        }
        args.set_scalar("i", i).unwrap();
        primal
            .call(&mut args)
            .map_or_else(|e| e.to_string(), |_| "ok".into())
    };
    let mut seen = Vec::new();
    for (entry, i) in ["g", "g2"]
        .into_iter()
        .flat_map(|e| [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 9.0].map(|i| (e, i)))
    {
        let want = message(
            Options {
                backend: adjit::engine::Backend::Interpreter,
                ..Options::default()
            },
            entry,
            i,
        );
        for tiering in [Tiering::Optimized, Tiering::Baseline] {
            let options = Options {
                tiering,
                ..Options::default()
            };
            assert_eq!(
                message(options, entry, i),
                want,
                "{entry}, i = {i}, {tiering:?}"
            );
        }
        seen.push(want);
    }
    // Both kinds of error, and successful calls, were exercised.
    for kind in ["outside the storage", "in dimension 1", "ok"] {
        assert!(seen.iter().any(|m| m.contains(kind)), "{kind}: {seen:?}");
    }
}

/// A tiered module compiled from a shared module keeps that module (not
/// a copy) for its optimized compilation, queued by its first call.
#[test]
fn the_optimized_tier_shares_the_callers_module() {
    let engine = Engine::from_files(&["examples/bratu.f"], Options::default()).unwrap();
    let module = std::sync::Arc::new(engine.module().clone());
    let globals = adjit::jit::globals::GlobalStore::new(&module.globals).unwrap();
    let options = JitOptions {
        tiering: Tiering::Tiered,
        ..JitOptions::default()
    };
    let tiered = CompiledModule::compile_with_globals(&module, &options, globals).unwrap();
    assert_eq!(std::sync::Arc::strong_count(&module), 2);
    tiered.wait_optimized().unwrap();
    assert!(tiered.is_optimized());
}
