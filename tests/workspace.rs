//! Evaluation into caller-owned buffers with a reusable workspace
//! (`Adjoint::vjp_into`, `Adjoint::gradient_into`,
//! `Tangent::directional_into`): the same numbers as the allocating API,
//! repeated calls that do not accumulate, arguments left as a primal call
//! leaves them, a new layout when the shapes change, globals, and usage
//! errors for slices of the wrong length.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Engine, Options, Selection};
use std::path::PathBuf;

fn engine(file: &str) -> Engine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    Engine::from_files(&[path], Options::default()).expect("example compiles")
}

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

#[test]
fn bratu_vjp_and_tangent_into_buffers_match_the_allocating_api() {
    let engine = engine("examples/bratu.f");
    let adjoint = engine
        .adjoint(None, &sel("f"), &sel("x,prm"), &AdjointOptions::default())
        .unwrap();
    let tangent = engine.tangent(None, &sel("f"), &sel("x,prm"), 1).unwrap();
    let primal = engine.procedure(None).unwrap();
    let mut ws = adjoint.workspace();
    let mut tws = tangent.workspace();
    for dim in [7usize, 30, 7] {
        let mut args = primal.args();
        args.set_scalar("dim", dim as f64).unwrap();
        args.set_scalar("parmax", 2.0).unwrap();
        let x: Vec<f64> = (0..dim).map(|i| 1.0 + 0.3 * (i % 4) as f64).collect();
        args.set_array("x", &x).unwrap();
        args.set_array("prm", &[1.3, 0.245828]).unwrap();
        let seed: Vec<f64> = (0..dim).map(|i| 0.5 - (i % 3) as f64 * 0.25).collect();
        let (values, expected) = adjoint.vjp(&args, &seed).unwrap();
        let mut after_primal = args.clone();
        primal.call(&mut after_primal).unwrap();
        let mut grad = vec![f64::NAN; dim + 2];
        for _ in 0..3 {
            let mut a = args.clone();
            adjoint.vjp_into(&mut ws, &mut a, &seed, &mut grad).unwrap();
            assert_eq!(
                grad, expected,
                "dim={dim}: vjp_into == vjp, call after call"
            );
            assert_eq!(
                a.buffers(),
                after_primal.buffers(),
                "dim={dim}: arguments as after a primal call"
            );
            assert_eq!(a.f64s("f").unwrap(), values);
        }
        // Tangent: the directional derivative, and the dot product with the
        // adjoint: <seed, J d> = <J^T seed, d>.
        let dir: Vec<f64> = (0..dim + 2).map(|i| 1.0 - 0.1 * i as f64).collect();
        let expected_t = tangent.directional(&args, &dir).unwrap();
        let mut out = vec![f64::NAN; dim];
        let mut a = args.clone();
        tangent
            .directional_into(&mut tws, &mut a, &dir, &mut out)
            .unwrap();
        assert_eq!(out, expected_t);
        let lhs: f64 = seed.iter().zip(&out).map(|(s, t)| s * t).sum();
        let rhs: f64 = grad.iter().zip(&dir).map(|(g, d)| g * d).sum();
        assert!(
            (lhs - rhs).abs() <= 1e-13 * lhs.abs().max(rhs.abs()),
            "{lhs} vs {rhs}"
        );
    }
}

#[test]
fn gradient_into_matches_gradient_and_finite_differences() {
    let engine = engine("examples/griewank.f90");
    let adjoint = engine
        .adjoint(None, &sel("c"), &sel("a"), &AdjointOptions::default())
        .unwrap();
    let primal = engine.procedure(None).unwrap();
    let n = 6;
    let mut args = primal.args();
    args.set_scalar("s", n as f64).unwrap();
    let a: Vec<f64> = (0..n).map(|i| 0.7 + 0.4 * i as f64).collect();
    args.set_array("a", &a).unwrap();
    let (value, expected) = adjoint.gradient(&args).unwrap();
    let mut ws = adjoint.workspace();
    let mut grad = vec![0.0; n];
    let got = adjoint
        .gradient_into(&mut ws, &mut args, &mut grad)
        .unwrap();
    assert_eq!(got, value);
    assert_eq!(grad, expected);
    for (i, g) in grad.iter().enumerate() {
        let c = |h: f64| {
            let mut p = args.clone();
            let mut ai = a.clone();
            ai[i] += h;
            p.set_array("a", &ai).unwrap();
            primal.call(&mut p).unwrap();
            p.scalar("c").unwrap()
        };
        let fd = (c(1e-6) - c(-1e-6)) / 2e-6;
        assert!((g - fd).abs() < 1e-7, "a({i}): {g} vs {fd}");
    }
    // The analytic gradient: a_i/200 + sin(a_i/sqrt i)/sqrt i prod_{j!=i} cos(a_j/sqrt j).
    for (i, g) in grad.iter().enumerate() {
        let r = |j: usize| 1.0 / ((j + 1) as f64).sqrt();
        let others: f64 = (0..n)
            .filter(|&j| j != i)
            .map(|j| (a[j] * r(j)).cos())
            .product();
        let exact = a[i] / 200.0 + (a[i] * r(i)).sin() * r(i) * others;
        assert!((g - exact).abs() <= 1e-14 * exact.abs().max(1.0));
    }
}

#[test]
fn wrong_lengths_are_usage_errors() {
    let engine = engine("examples/product.f90");
    let adjoint = engine
        .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
        .unwrap();
    let mut args = adjoint.args();
    args.set_scalar("n", 3.0).unwrap();
    args.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
    let mut ws = adjoint.workspace();
    let mut short = vec![0.0; 2];
    let e = adjoint
        .gradient_into(&mut ws, &mut args, &mut short)
        .unwrap_err();
    assert!(e.to_string().contains("2 gradient values for 3"), "{e}");
    let mut grad = vec![0.0; 3];
    let e = adjoint
        .vjp_into(&mut ws, &mut args, &[1.0, 1.0], &mut grad)
        .unwrap_err();
    assert!(e.to_string().contains("2 seed values for 1"), "{e}");
    adjoint
        .gradient_into(&mut ws, &mut args, &mut grad)
        .unwrap();
    assert_eq!(grad, vec![6.0, 3.0, 2.0]);
}

/// A module variable carries state between calls: every evaluation into
/// buffers leaves it as one primal call would.
#[test]
fn globals_advance_as_after_a_primal_call() {
    let src = "
module m
  double precision :: calls = 0
end module
subroutine f(x, y)
  use m
  double precision x, y
  calls = calls + 1
  y = x*x*calls
end subroutine
";
    let engine = Engine::from_source("m.f90", src).unwrap();
    let adjoint = engine
        .adjoint(Some("f"), &sel("y"), &sel("x"), &AdjointOptions::default())
        .unwrap();
    let mut args = adjoint.args();
    args.set_scalar("x", 3.0).unwrap();
    let mut ws = adjoint.workspace();
    let mut g = [0.0];
    for k in 1..=3 {
        let y = adjoint.gradient_into(&mut ws, &mut args, &mut g).unwrap();
        assert_eq!(y, 9.0 * k as f64);
        assert_eq!(g[0], 6.0 * k as f64);
        assert_eq!(engine.state().get("m::calls").unwrap().get_f64(0), k as f64);
    }
}

/// A product whose loop pushes on the tape (directly, or through a callee
/// that pushes), then reads `x(k)`: with `k` out of bounds the adjoint
/// fails after its loop has pushed, and the next call on the same
/// workspace must start from an empty tape (the pushes of the failed call
/// are not kept) and give the analytic gradient.
const PUSHING_THEN_FAILING: &str = "\
subroutine direct(n, k, x, y)
  integer n, k
  double precision x(n), y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
  y = y + x(k)
end subroutine direct

subroutine called(n, k, x, y)
  integer n, k
  double precision x(n), y
  integer i
  y = 1
  do i = 1, n
    call mul(y, x(i))
  end do
  y = y + x(k)
end subroutine called

subroutine mul(a, b)
  double precision a, b
  a = a*b
end subroutine mul
";

#[test]
fn a_failed_adjoint_that_pushed_leaves_the_workspace_usable() {
    let sources = [("push.f90".to_string(), PUSHING_THEN_FAILING.to_string())];
    let engine = Engine::from_sources(&sources, Options::default()).expect("compiles");
    let x = [1.5, -2.0, 0.75, 3.0, 1.25];
    let n = x.len();
    let product: f64 = x.iter().product();
    for entry in ["direct", "called"] {
        let adjoint = engine
            .adjoint(
                Some(entry),
                &sel("y"),
                &sel("x"),
                &AdjointOptions::default(),
            )
            .unwrap();
        let primal = engine.procedure(Some(entry)).unwrap();
        let mut ws = adjoint.workspace();
        let mut grad = vec![f64::NAN; n];
        for k in [n + 1, 2, n + 3, 4] {
            let mut args = primal.args();
            args.set_scalar("n", n as f64).unwrap();
            args.set_scalar("k", k as f64).unwrap();
            args.set_array("x", &x).unwrap();
            let result = adjoint.vjp_into(&mut ws, &mut args, &[1.0], &mut grad);
            if k > n {
                let e = result.expect_err("x(k) is out of bounds");
                assert!(e.to_string().contains("push.f90:"), "{entry}: {e}");
                continue;
            }
            result.unwrap();
            // dy/dx(j) = product of the others, plus 1 at j = k.
            for (j, g) in grad.iter().enumerate() {
                let want = product / x[j] + if j + 1 == k { 1.0 } else { 0.0 };
                assert!(
                    (g - want).abs() <= 1e-13 * want.abs(),
                    "{entry} k={k}: grad[{j}] = {g}, want {want}"
                );
            }
            assert_eq!(args.f64s("y").unwrap(), [product + x[k - 1]]);
        }
    }
}

/// Inputs named twice (`x,x(2)`, runs that overlap) and in another order
/// than their storage: repeated calls on one workspace, whose input
/// companions are zeroed as the gradient is read out rather than cleared
/// before the next call, give the allocating API's numbers every time.
#[test]
fn overlapping_inputs_and_repeated_calls_match_the_allocating_api() {
    let engine = engine("examples/product.f90");
    let primal = engine.procedure(None).unwrap();
    let x = [1.5, -2.0, 0.75, 3.0];
    let mut args = primal.args();
    args.set_scalar("n", x.len() as f64).unwrap();
    args.set_array("x", &x).unwrap();
    for wrt in ["x", "x,x(2)", "x(3),x", "x(3),x(2)"] {
        let adjoint = engine
            .adjoint(None, &sel("y"), &sel(wrt), &AdjointOptions::default())
            .unwrap();
        let tangent = engine.tangent(None, &sel("y"), &sel(wrt), 1).unwrap();
        let (_, expected) = adjoint.gradient(&args).unwrap();
        let mut ws = adjoint.workspace();
        let mut tws = tangent.workspace();
        let mut grad = vec![f64::NAN; expected.len()];
        for round in 0..3 {
            let mut a = args.clone();
            adjoint.gradient_into(&mut ws, &mut a, &mut grad).unwrap();
            assert_eq!(grad, expected, "{wrt}, call {round}");
            // The tangent into buffers matches the allocating one; with
            // distinct inputs, it is <grad, d>.
            let dir: Vec<f64> = (0..grad.len()).map(|i| 0.5 + i as f64).collect();
            let expected_t = tangent.directional(&args, &dir).unwrap();
            let mut out = [f64::NAN];
            let mut a = args.clone();
            tangent
                .directional_into(&mut tws, &mut a, &dir, &mut out)
                .unwrap();
            assert_eq!(out[..], expected_t[..], "{wrt}, call {round}");
            if wrt != "x,x(2)" {
                let want: f64 = grad.iter().zip(&dir).map(|(g, d)| g * d).sum();
                assert!(
                    (out[0] - want).abs() <= 1e-13 * want.abs(),
                    "{wrt}, call {round}: {} vs {want}",
                    out[0]
                );
            }
        }
    }
}

/// Repeated calls through the allocating API (a primal handle's `call`, an
/// adjoint's `vjp`), which reuse the runtime of the previous call when it
/// kept little memory: a call that failed after pushing values leaves
/// nothing behind, the next call gives the numbers and the error of a
/// fresh handle, every time.
#[test]
fn calls_after_failed_calls_match_a_fresh_handle() {
    let sources = [("push.f90".to_string(), PUSHING_THEN_FAILING.to_string())];
    let engine = Engine::from_sources(&sources, Options::default()).expect("compiles");
    let x = [1.5, -2.0, 0.75, 3.0, 1.25];
    let n = x.len();
    for entry in ["direct", "called"] {
        let handles = || {
            let primal = engine.procedure(Some(entry)).unwrap();
            let adjoint = engine
                .adjoint(
                    Some(entry),
                    &sel("y"),
                    &sel("x"),
                    &AdjointOptions::default(),
                )
                .unwrap();
            (primal, adjoint)
        };
        let (primal, adjoint) = handles();
        let args_for = |k: usize| {
            let mut args = primal.args();
            args.set_scalar("n", n as f64).unwrap();
            args.set_scalar("k", k as f64).unwrap();
            args.set_array("x", &x).unwrap();
            args
        };
        // What fresh handles give, for each k.
        let fresh = |k: usize| {
            let (primal, adjoint) = handles();
            let mut args = args_for(k);
            let called = primal.call(&mut args).map_err(|e| e.to_string());
            let vjp = adjoint.vjp(&args_for(k), &[1.0]).map_err(|e| e.to_string());
            (called.map(|()| args.buffers().to_vec()), vjp)
        };
        for k in [n + 1, 2, n + 3, 4, n + 1, 1] {
            let mut args = args_for(k);
            let called = primal.call(&mut args).map_err(|e| e.to_string());
            let vjp = adjoint.vjp(&args_for(k), &[1.0]).map_err(|e| e.to_string());
            let got = (called.map(|()| args.buffers().to_vec()), vjp);
            assert_eq!(got, fresh(k), "{entry} k={k}");
            assert_eq!(got.0.is_err(), k > n, "{entry} k={k}: {:?}", got.0);
        }
    }
}

/// A loop whose tape outgrows the first segment records in one reserved
/// segment (its fast copy, without per-push tests): the gradient is the
/// interpreter's, bit for bit, through a reused workspace whose calls
/// shrink and grow the tape, with the tape in RAM and spilled to files.
/// The short loop before the long one leaves a few values in the first
/// segment, which the reverse sweep pops after coming back from the
/// reserved one (where those values end, not where the segment ends).
#[test]
fn a_reserved_tape_segment_gives_the_interpreters_gradient() {
    use adjit::engine::Backend;
    let text = "subroutine twoprod(n, x, y)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer i
  y = 1
  do i = 1, 5
    y = y*x(i)
  end do
  do i = 1, n
    y = y*x(i)
  end do
end subroutine twoprod
";
    let build = |backend: Backend, tape_ram_budget: usize| {
        let options = Options {
            backend,
            tape_ram_budget,
            ..Options::default()
        };
        let engine = Engine::from_sources(&[("twoprod.f90".into(), text.into())], options).unwrap();
        let adjoint = engine
            .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
            .unwrap();
        (engine, adjoint)
    };
    let (_ie, interp) = build(Backend::Interpreter, 1 << 30);
    for budget in [1 << 30, 64 << 10] {
        let (engine, jit) = build(Backend::Jit, budget);
        let primal = engine.procedure(None).unwrap();
        let mut ws = jit.workspace();
        for n in [100usize, 20_000, 3_000, 50_000, 20_000] {
            let mut args = primal.args();
            args.set_scalar("n", n as f64).unwrap();
            let x: Vec<f64> = (0..n).map(|i| 1.0 + 1e-6 * (i % 17) as f64).collect();
            args.set_array("x", &x).unwrap();
            let (_, expected) = interp.vjp(&args, &[1.0]).unwrap();
            let mut grad = vec![f64::NAN; n];
            jit.vjp_into(&mut ws, &mut args, &[1.0], &mut grad).unwrap();
            let differs = grad
                .iter()
                .zip(&expected)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(
                differs, None,
                "n={n}, RAM budget {budget}: first difference"
            );
        }
    }
}

/// The host's call path checks argument types with one comparison per
/// argument against a list kept per procedure: a buffer of the wrong type,
/// passed to the primal or to the derivatives' in-place calls (which read
/// the caller's buffers where they are), is still the located usage error
/// naming the parameter, and the next call with the right buffers is
/// exact.
#[test]
fn a_buffer_of_the_wrong_type_is_an_error_on_every_call_path() {
    use adjit::ir::Buffer;
    let engine = Engine::from_source(
        "t.f90",
        "subroutine f(n, x, y)\n  integer n\n  double precision x(n), y\n  integer i\n  y = 0\n  do i = 1, n\n    y = y + x(i)*x(i)\n  end do\nend subroutine\n",
    )
    .unwrap();
    let primal = engine.procedure(Some("f")).unwrap();
    let adjoint = engine
        .adjoint(Some("f"), &sel("y"), &sel("x"), &AdjointOptions::default())
        .unwrap();
    let tangent = engine.tangent(Some("f"), &sel("y"), &sel("x"), 1).unwrap();
    let mut ws = adjoint.workspace();
    let mut tws = tangent.workspace();
    let mut args = primal.args();
    args.set_scalar("n", 3.0).unwrap();
    args.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
    let (mut grad, mut dout) = (vec![0.0; 3], [0.0]);
    for round in 0..2 {
        let good = args.buffers()[1].clone();
        args.buffers_mut()[1] = Buffer::I32(vec![1, 2, 3]);
        let e = primal.call(&mut args).unwrap_err();
        assert!(e.message.contains("`x`"), "{}", e.message);
        // The workspace was laid out for the wrong buffer on the first
        // round (an I32 companion of 3 elements): the argument error makes
        // the next call lay it out again.
        let e = adjoint.vjp_into(&mut ws, &mut args, &[1.0], &mut grad);
        assert!(e.unwrap_err().message.contains("`x`"), "round {round}");
        let e = tangent.directional_into(&mut tws, &mut args, &[1.0; 3], &mut dout);
        assert!(e.unwrap_err().message.contains("`x`"), "round {round}");
        args.buffers_mut()[1] = good;
        primal.call(&mut args).unwrap();
        assert_eq!(args.scalar("y").unwrap(), 14.0);
        adjoint
            .vjp_into(&mut ws, &mut args, &[1.0], &mut grad)
            .unwrap();
        assert_eq!(grad, [2.0, 4.0, 6.0]);
        tangent
            .directional_into(&mut tws, &mut args, &[1.0, 0.0, 1.0], &mut dout)
            .unwrap();
        assert_eq!(dout, [8.0]);
        assert_eq!(args.get("x").unwrap(), &Buffer::F64(vec![1.0, 2.0, 3.0]));
    }
}

/// A reused runtime keeps its I/O state between calls and resets it only
/// when a statement ran: a call that fails in the middle of a PRINT leaves
/// nothing of it to the next call, and output silenced by finite
/// differences (on the runtime the next primal call reuses) goes to the
/// program's channel again.
#[test]
fn output_after_a_failed_print_and_after_finite_differences_is_whole() {
    use std::sync::{Arc, Mutex};
    let out = Arc::new(Mutex::new(Vec::<u8>::new()));
    let options = Options {
        io: adjit::engine::Channels {
            output: out.clone(),
            ..adjit::engine::Channels::standard()
        },
        ..Options::default()
    };
    let text = "subroutine p(k, x, y)\n  integer k\n  double precision x, y\n  integer a(2)\n  a = 7\n  y = x*x\n  print *, 'v', x, a(k)\nend subroutine\n";
    let engine = Engine::from_sources(&[("p.f90".to_string(), text.to_string())], options).unwrap();
    let p = engine.procedure(Some("p")).unwrap();
    let mut args = p.args();
    args.set_scalar("x", 2.0).unwrap();
    args.set_scalar("k", 5.0).unwrap();
    assert!(p.call(&mut args).is_err());
    let failed = out.lock().unwrap().len();
    args.set_scalar("k", 1.0).unwrap();
    p.call(&mut args).unwrap();
    let fd = adjit::engine::FiniteDifferences::new(&p);
    fd.jacobian(&args, &sel("y"), &sel("x")).unwrap();
    p.call(&mut args).unwrap();
    let text = String::from_utf8(out.lock().unwrap()[failed..].to_vec()).unwrap();
    // The call, finite differences' base point (its other points are
    // silenced), the call again.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text:?}");
    assert!(lines.iter().all(|l| *l == lines[0]), "{text:?}");
    let words: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(words, ["v", "2.0000000000000000", "7"], "{text:?}");
}

/// The gradient the sweep accumulates into the caller's slice (the `wrt`
/// elements cover an argument whole, in order) equals, bit for bit, the
/// copying path's (the allocating API, and the interpreter, whose calls
/// move buffers and copy the gradient out): whole and partial `wrt`, two
/// parameters, an element named twice, an argument that is both seeded
/// (`of`) and differentiated (`wrt`), seeds over a whole output and over
/// a part of it, and `REAL(4)` companions; repeated calls on one
/// workspace, with `grad` holding garbage in between.
#[test]
fn gradient_into_the_callers_slice_matches_the_copying_path_bit_for_bit() {
    use adjit::engine::Backend;
    let text = "subroutine g(n, x, p, f, w)
  integer n
  double precision x(n), p(2), f(n), w(n)
  integer i
  do i = 1, n
    f(i) = p(1)*x(i)*x(i) + p(2)*w(i)
    w(i) = w(i)*x(i) + p(2)
  end do
end subroutine g
subroutine s(n, x, y)
  integer n
  real x(n), y
  integer i
  y = 0
  do i = 1, n
    y = y + x(i)*x(i)
  end do
end subroutine s
";
    let build = |backend: Backend| {
        let options = Options {
            backend,
            ..Options::default()
        };
        Engine::from_sources(&[("g.f90".into(), text.into())], options).unwrap()
    };
    let (jit, interp) = (build(Backend::Jit), build(Backend::Interpreter));
    let n = 5;
    let mut args = jit.procedure(Some("g")).unwrap().args();
    args.set_scalar("n", n as f64).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 0.5 + 0.25 * i as f64).collect();
    let w: Vec<f64> = (0..n).map(|i| 1.5 - 0.5 * i as f64).collect();
    args.set_array("x", &x).unwrap();
    args.set_array("w", &w).unwrap();
    args.set_array("p", &[1.25, -0.75]).unwrap();
    // (of, wrt, number of output elements)
    let cases = [
        ("f", "x", n),
        ("f", "x,p", n),
        ("f", "p,x", n),
        ("f", "x(2:4)", n),
        ("f", "x,x(3)", n),
        ("f(2)", "x,p", 1),
        ("f,w", "x,w", 2 * n),
        ("w", "w", n),
        ("w(2),f", "w,x(1)", 1 + n),
    ];
    // Plain, and with the copy of the adjoint that zeroes the gradient.
    for (of, wrt, m, zeroing) in cases
        .iter()
        .flat_map(|&(of, wrt, m)| [(of, wrt, m, false), (of, wrt, m, true)])
    {
        let wrt_sel = match wrt {
            "x(2:4)" => sel("x(2),x(3),x(4)"),
            other => sel(other),
        };
        let options = AdjointOptions {
            in_place_zeroing: zeroing,
            ..AdjointOptions::default()
        };
        let handle = |engine: &Engine| {
            engine
                .adjoint(Some("g"), &sel(of), &wrt_sel, &options)
                .unwrap()
        };
        let (a_jit, a_interp) = (handle(&jit), handle(&interp));
        let seed: Vec<f64> = (0..m).map(|i| 1.0 - 0.375 * i as f64).collect();
        let (_, expected) = a_jit.vjp(&args, &seed).unwrap();
        let mut ws = a_jit.workspace();
        let mut iws = a_interp.workspace();
        for round in 0..3 {
            for (adjoint, ws, who) in [
                (&a_jit, &mut ws, "jit"),
                (&a_interp, &mut iws, "interpreter"),
            ] {
                let mut grad = vec![f64::NAN; expected.len()];
                if round == 1 {
                    grad.fill(7.5);
                }
                let mut a = args.clone();
                adjoint.vjp_into(ws, &mut a, &seed, &mut grad).unwrap();
                let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&grad),
                    bits(&expected),
                    "{who} of={of} wrt={wrt} round {round}: {grad:?} vs {expected:?}"
                );
            }
        }
    }
    // REAL(4): the companion is not an F64 slice; the gradient is copied.
    let zeroing = AdjointOptions {
        in_place_zeroing: true,
        ..AdjointOptions::default()
    };
    let single = jit
        .adjoint(Some("s"), &sel("y"), &sel("x"), &zeroing)
        .unwrap();
    let mut sargs = single.args();
    sargs.set_scalar("n", 3.0).unwrap();
    sargs.set_array("x", &[1.0, 2.0, 3.0]).unwrap();
    let (_, expected) = single.gradient(&sargs).unwrap();
    let mut ws = single.workspace();
    let mut grad = vec![f64::NAN; 3];
    for _ in 0..2 {
        single
            .gradient_into(&mut ws, &mut sargs, &mut grad)
            .unwrap();
        assert_eq!(grad, expected);
        assert_eq!(grad, [2.0, 4.0, 6.0]);
    }
}

/// A call that fails after its sweep has accumulated into the caller's
/// gradient slice (an index out of bounds after the loop), or before
/// running (a buffer of the wrong size), leaves the slice and the
/// workspace fit for the next call, whose gradient is exact.
#[test]
fn a_failed_call_into_the_callers_slice_leaves_it_fit_for_the_next() {
    let sources = [("push.f90".to_string(), PUSHING_THEN_FAILING.to_string())];
    let engine = Engine::from_sources(&sources, Options::default()).expect("compiles");
    let x = [1.5, -2.0, 0.75, 3.0, 1.25];
    let n = x.len();
    let product: f64 = x.iter().product();
    let adjoint = engine
        .adjoint(
            Some("direct"),
            &sel("y"),
            &sel("x"),
            &AdjointOptions::default(),
        )
        .unwrap();
    let mut ws = adjoint.workspace();
    let mut grad = vec![f64::NAN; n];
    let args_for = |k: usize, len: usize| {
        let mut args = adjoint.args();
        args.set_scalar("n", n as f64).unwrap();
        args.set_scalar("k", k as f64).unwrap();
        args.set_array("x", &x).unwrap();
        // A buffer shorter than the declared x(n): an argument error.
        let i = args.index_of("x").unwrap();
        args.buffers_mut()[i] = adjit::ir::Buffer::F64(x[..len].to_vec());
        args
    };
    for (k, len, fails) in [(n + 1, n, true), (2, n, false), (2, 3, true), (4, n, false)] {
        let mut args = args_for(k, len);
        let mut g = vec![f64::NAN; len];
        let grad = if len == n { &mut grad } else { &mut g };
        let result = adjoint.vjp_into(&mut ws, &mut args, &[1.0], grad);
        assert_eq!(result.is_err(), fails, "k={k} len={len}: {result:?}");
        if fails {
            continue;
        }
        for (j, g) in grad.iter().enumerate() {
            let want = product / x[j] + if j + 1 == k { 1.0 } else { 0.0 };
            assert!(
                (g - want).abs() <= 1e-13 * want.abs(),
                "k={k}: grad[{j}] = {g}, want {want}"
            );
        }
    }
}

/// A workspace's plan (which companions the seed and the gradient use)
/// is made for one handle and one set of argument shapes: passed to
/// another handle of the same shapes it is laid out again for that one,
/// and a call with an argument of the wrong size after a good call is an
/// error that leaves it fit for the next good call.
#[test]
fn a_workspace_follows_its_handle_and_survives_a_wrong_size() {
    let src = "subroutine f(n, x, a, y)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), a
  double precision, intent(out) :: y
  integer i
  y = a*a
  do i = 1, n
    y = y*x(i)
  end do
end subroutine f
";
    let engine = Engine::from_source("f.f90", src).unwrap();
    let opts = AdjointOptions::default();
    let by_x = engine.adjoint(None, &sel("y"), &sel("x"), &opts).unwrap();
    let by_a = engine.adjoint(None, &sel("y"), &sel("a"), &opts).unwrap();
    let t_x = engine.tangent(None, &sel("y"), &sel("x"), 1).unwrap();
    let t_a = engine.tangent(None, &sel("y"), &sel("a"), 1).unwrap();
    let mut args = by_x.args();
    args.set_scalar("n", 1.0).unwrap();
    args.set_array("x", &[3.0]).unwrap();
    args.set_scalar("a", 2.0).unwrap();
    // y = a^2 x: dy/dx = a^2 = 4, dy/da = 2 a x = 12 (one entry each).
    let mut ws = by_x.workspace();
    let mut g = [0.0];
    by_x.vjp_into(&mut ws, &mut args, &[1.0], &mut g).unwrap();
    assert_eq!(g, [4.0]);
    by_a.vjp_into(&mut ws, &mut args, &[1.0], &mut g).unwrap();
    assert_eq!(g, [12.0]);
    by_x.vjp_into(&mut ws, &mut args, &[2.0], &mut g).unwrap();
    assert_eq!(g, [8.0]);
    let mut tws = t_x.workspace();
    let mut d = [0.0];
    t_x.directional_into(&mut tws, &mut args, &[1.0], &mut d)
        .unwrap();
    assert_eq!(d, [4.0]);
    t_a.directional_into(&mut tws, &mut args, &[1.0], &mut d)
        .unwrap();
    assert_eq!(d, [12.0]);
    // x shorter than n says: an argument error, then the right values.
    args.set_scalar("n", 2.0).unwrap();
    assert!(by_x.vjp_into(&mut ws, &mut args, &[1.0], &mut g).is_err());
    assert!(t_x
        .directional_into(&mut tws, &mut args, &[1.0], &mut d)
        .is_err());
    args.set_array("x", &[3.0, 5.0]).unwrap();
    let mut g2 = [0.0; 2];
    by_x.vjp_into(&mut ws, &mut args, &[1.0], &mut g2).unwrap();
    assert_eq!(g2, [20.0, 12.0]);
    by_a.vjp_into(&mut ws, &mut args, &[1.0], &mut g).unwrap();
    assert_eq!(g, [60.0]);
    t_a.directional_into(&mut tws, &mut args, &[1.0], &mut d)
        .unwrap();
    assert_eq!(d, [60.0]);
}

/// The in-place gradient of products whose reverse loop increments each
/// `x_b(i)` once (the jit's first-touch pass narrows the zero fill of the
/// caller's gradient to what the loop does not cover): bit for bit the
/// copying path's and the interpreter's, with garbage in the slice
/// between calls, zero, signed-zero, NaN and infinite factors (the
/// adjoint's zero-seed skips), and loops that cover `x` in part or not at
/// all.
#[test]
fn first_touch_gradients_match_the_copying_path_bit_for_bit() {
    use adjit::engine::Backend;
    let text = "subroutine p(n, m, x, y)
  integer n, m
  double precision x(m), y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine p
subroutine q(n, x, y)
  integer n
  double precision x(n), y
  integer i
  y = 1
  do i = n, 2, -1
    y = y*x(i) + x(i)
  end do
end subroutine q
";
    let build = |backend: Backend| {
        let options = Options {
            backend,
            ..Options::default()
        };
        Engine::from_sources(&[("p.f90".into(), text.into())], options).unwrap()
    };
    let (jit, interp) = (build(Backend::Jit), build(Backend::Interpreter));
    let inputs: [&[f64]; 4] = [
        &[1.5, -2.0, 0.75, 3.0, 1.25, 0.5],
        &[1.5, 0.0, 0.75, -0.0, 1.25, 2.0],
        &[1.5, f64::NAN, 0.75, 3.0, f64::INFINITY, 2.0],
        &[-0.0, 2.0, -1.0, 0.5, 0.0, 3.0],
    ];
    let options = AdjointOptions {
        in_place_zeroing: true,
        ..AdjointOptions::default()
    };
    for (proc, sizes) in [
        ("p", &[(6, 6), (4, 6), (0, 6), (6, 6)][..]),
        ("q", &[(6, 6), (1, 1)][..]),
    ] {
        let handle = |engine: &Engine| {
            engine
                .adjoint(Some(proc), &sel("y"), &sel("x"), &options)
                .unwrap()
        };
        let (a_jit, a_interp) = (handle(&jit), handle(&interp));
        let mut ws = a_jit.workspace();
        let mut iws = a_interp.workspace();
        for &(n, m) in sizes {
            for x in inputs {
                let mut args = a_jit.args();
                args.set_scalar("n", n as f64).unwrap();
                if proc == "p" {
                    args.set_scalar("m", m as f64).unwrap();
                }
                args.set_array("x", &x[..m]).unwrap();
                let (_, expected) = a_jit.vjp(&args, &[1.0]).unwrap();
                let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
                for round in 0..2 {
                    for (adjoint, ws, who) in [
                        (&a_jit, &mut ws, "jit"),
                        (&a_interp, &mut iws, "interpreter"),
                    ] {
                        let mut grad = vec![if round == 0 { f64::NAN } else { -7.5 }; m];
                        let mut a = args.clone();
                        adjoint.vjp_into(ws, &mut a, &[1.0], &mut grad).unwrap();
                        assert_eq!(
                            bits(&grad),
                            bits(&expected),
                            "{who} {proc} n={n} x={x:?}: {grad:?} vs {expected:?}"
                        );
                    }
                }
            }
        }
    }
}
