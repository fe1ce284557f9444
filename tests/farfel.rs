//! FARFEL's ADF blocks (seed 002, section 2): forward AD requested inside
//! the program, checked against analytic derivatives and central finite
//! differences; nested blocks (tangent over tangent) with the
//! perturbation-confusion test; and a program holding an ADF block
//! differentiated again from outside (second order: adjoint and tangent
//! over the block's tangent, compared with each other, with the analytic
//! second derivative and with finite differences of the block's result).

use adjit::engine::{Args, Engine, Selection};

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// Calls `entry` with the scalar inputs set; returns the argument list.
fn run(engine: &Engine, entry: &str, inputs: &[(&str, f64)]) -> Args {
    let p = engine.procedure(Some(entry)).expect("procedure");
    let mut args = p.args();
    for (n, v) in inputs {
        args.set_scalar(n, *v).expect("set");
    }
    p.call(&mut args).expect("call");
    args
}

/// Central difference of output `of` of `entry` in input `wrt`.
fn central(engine: &Engine, entry: &str, inputs: &[(&str, f64)], wrt: &str, of: &str) -> f64 {
    let h = 1e-6;
    let at = |delta: f64| {
        let shifted: Vec<(&str, f64)> = inputs
            .iter()
            .map(|&(n, v)| (n, if n == wrt { v + delta } else { v }))
            .collect();
        run(engine, entry, &shifted).scalar(of).expect("output")
    };
    (at(h) - at(-h)) / (2.0 * h)
}

const TWO_SEEDS: &str = "
subroutine f(x, y, u, v, val, d)
  implicit none
  double precision :: x, y, u, v, val, d, g
  adf(tangent(x) = u, tangent(y) = 2*v)
    g = x*x*y + exp(y)
  end adf(d = tangent(g))
  val = g
end subroutine
";

#[test]
fn adf_with_seed_expressions_matches_analytic_and_fd() {
    let engine = Engine::from_source("two.f90", TWO_SEEDS).expect("compile");
    for &(x, y, u, v) in &[(0.7, -0.3, 1.0, 0.0), (1.3, 0.4, -0.5, 2.0), (-2.0, 1.1, 0.25, 0.75)] {
        let inputs = [("x", x), ("y", y), ("u", u), ("v", v)];
        let out = run(&engine, "f", &inputs);
        // The block ran: its result is the function value.
        let g = x * x * y + y.exp();
        assert!(close(out.scalar("val").unwrap(), g, 1e-15));
        let analytic = u * 2.0 * x * y + 2.0 * v * (x * x + y.exp());
        let d = out.scalar("d").unwrap();
        assert!(close(d, analytic, 1e-14), "{d} vs {analytic}");
        let fd = u * central(&engine, "f", &inputs, "x", "val")
            + 2.0 * v * central(&engine, "f", &inputs, "y", "val");
        assert!(close(d, fd, 1e-7), "{d} vs FD {fd}");
    }
}

#[test]
fn adf_in_fixed_form_with_shorthand() {
    let src = "
      SUBROUTINE DERIV(X, YPRIME)
      DOUBLE PRECISION X, Y, YPRIME
      A D F(X)
      Y = SIN(X) * X
      END ADF(YPRIME = TANGENT(Y))
      END
";
    let engine = Engine::from_source("deriv.f", src).expect("compile");
    for &x in &[0.7, -1.2, 3.0] {
        let d = run(&engine, "deriv", &[("x", x)]).scalar("yprime").unwrap();
        assert!(close(d, x.cos() * x + x.sin(), 1e-15), "{d}");
    }
}

/// d/dx [x * d/dy (x + y)] = 1 everywhere; confusing the inner and outer
/// perturbations gives 2.
#[test]
fn nested_adf_has_no_perturbation_confusion() {
    let src = "
subroutine pc(x, d)
  implicit double precision (a-h, o-z)
  adf(x)
    y = 3.0d0
    adf(y)
      z = x + y
    end adf(dzdy = tangent(z))
    w = x * dzdy
  end adf(d = tangent(w))
end subroutine
";
    let engine = Engine::from_source("pc.f90", src).expect("compile");
    for &x in &[0.7, -4.0, 12.5] {
        let d = run(&engine, "pc", &[("x", x)]).scalar("d").unwrap();
        assert_eq!(d, 1.0, "at x = {x}");
    }
}

/// A block inside a loop: its tangents start from the seeds on every trip.
#[test]
fn adf_in_a_loop_reseeds_each_trip() {
    let src = "
subroutine s(x, n, total)
  implicit none
  integer :: n, i
  double precision :: x, total, p, d
  total = 0
  do i = 1, n
    adf(x)
      p = x**i
    end adf(d = tangent(p))
    total = total + d
  end do
end subroutine
";
    let engine = Engine::from_source("loop.f90", src).expect("compile");
    let p = engine.procedure(Some("s")).unwrap();
    let mut args = p.args();
    args.set_scalar("x", 1.5).unwrap();
    args.set_scalar("n", 4.0).unwrap();
    p.call(&mut args).unwrap();
    let x: f64 = 1.5;
    let expected: f64 = (1..=4).map(|i| i as f64 * x.powi(i - 1)).sum();
    assert!(close(args.scalar("total").unwrap(), expected, 1e-14));
}

/// Second order: the gradient of a program whose result is an ADF
/// derivative, by adjoint and by tangent over the block's tangent, vs the
/// analytic second derivative and finite differences of the ADF result.
#[test]
fn outer_derivative_of_an_adf_block_is_second_order() {
    let src = "
subroutine f(x, y, d)
  implicit none
  double precision :: x, y, d, g
  adf(x)
    g = sin(x*y) + x**3 * y
  end adf(d = tangent(g))
end subroutine
";
    let engine = Engine::from_source("second.f90", src).expect("compile");
    let adj = engine
        .adjoint(Some("f"), &sel("d"), &sel("x,y"), &Default::default())
        .expect("adjoint");
    let tan = engine
        .tangent(Some("f"), &sel("d"), &sel("x,y"), 1)
        .expect("tangent");
    for &(x, y) in &[(0.7, -0.3), (1.3, 0.4), (-2.0, 1.1)] {
        let args = run(&engine, "f", &[("x", x), ("y", y)]);
        let (_, grad) = adj.gradient(&args).expect("gradient");
        let jt = tan.jacobian(&args).expect("tangent jacobian");
        // d = y cos(xy) + 3 x^2 y.
        let dx = -y * y * (x * y).sin() + 6.0 * x * y;
        let dy = (x * y).cos() - x * y * (x * y).sin() + 3.0 * x * x;
        for (k, (a, e)) in grad.iter().zip([dx, dy]).enumerate() {
            assert!(close(*a, e, 1e-13), "adjoint {k}: {a} vs {e}");
            assert!(close(jt.matrix[k], *a, 1e-13), "tangent {k}");
        }
        let inputs = [("x", x), ("y", y)];
        assert!(close(grad[0], central(&engine, "f", &inputs, "x", "d"), 1e-7));
        assert!(close(grad[1], central(&engine, "f", &inputs, "y", "d"), 1e-7));
    }
}

#[test]
fn adf_errors_are_located() {
    let cases = [
        (
            "subroutine f(x)\n  double precision :: x, y\n  adf(x)\n    y = x\nend subroutine\n",
            "3:",
            "not closed by END ADF",
        ),
        (
            "subroutine f(a, d)\n  double precision :: a(3), b, d\n  adf(a)\n    b = a(1)\n  end adf(d = tangent(b))\nend subroutine\n",
            "3:",
            "real scalar",
        ),
        (
            "subroutine f(x, d)\n  double precision :: x, d, y\n  adf(tangent(x) = )\n  end adf(d = tangent(y))\nend subroutine\n",
            "3:",
            "ADF statement",
        ),
    ];
    for (src, line, what) in cases {
        let e = match Engine::from_source("bad.f90", src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(&format!("bad.f90:{line}")), "{e}");
        assert!(e.contains(what), "{e}");
    }
}
