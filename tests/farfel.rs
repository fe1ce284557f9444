//! FARFEL's ADF blocks (seed 002, section 2): forward AD requested inside
//! the program, checked against analytic derivatives and central finite
//! differences; nested blocks (tangent over tangent) with the
//! perturbation-confusion test; and a program holding an ADF block
//! differentiated again from outside (second order: adjoint and tangent
//! over the block's tangent, compared with each other, with the analytic
//! second derivative and with finite differences of the block's result).

mod common;
use adjit::engine::{Engine, Selection};
use common::scalar::{central, close, run};

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
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
    for &(x, y, u, v) in &[
        (0.7, -0.3, 1.0, 0.0),
        (1.3, 0.4, -0.5, 2.0),
        (-2.0, 1.1, 0.25, 0.75),
    ] {
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
        assert!(close(
            grad[0],
            central(&engine, "f", &inputs, "x", "d"),
            1e-7
        ));
        assert!(close(
            grad[1],
            central(&engine, "f", &inputs, "y", "d"),
            1e-7
        ));
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
            "subroutine f(k, d)\n  double precision :: b, d\n  integer :: k\n  adf(k)\n    b = k\n  end adf(d = tangent(b))\nend subroutine\n",
            "4:",
            "must be a real variable",
        ),
        (
            "subroutine f(x, d)\n  double precision :: x, b, d\n  adf(tangent(x(1)) = 1)\n    b = x\n  end adf(d = tangent(b))\nend subroutine\n",
            "3:",
            "`x` is not an array",
        ),
        (
            "subroutine f(x, d)\n  double precision :: x(2), b, d\n  adf((tangent(x(i)) = 1, 1, 2))\n    b = x(1)\n  end adf(d = tangent(b))\nend subroutine\n",
            "3:",
            "implied DO list",
        ),
        (
            "subroutine f(x, d)\n  double precision :: x, d, y\n  adf(tangent(x) = )\n  end adf(d = tangent(y))\nend subroutine\n",
            "3:",
            "ADF statement",
        ),
        (
            "subroutine f(x, d)\n  double precision :: x, d, y\n  l: adf(x)\n    y = x\n  end adf(d = tangent(y))\nend subroutine\n",
            "3:",
            "an ADF block cannot have a construct name",
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

const ADR_SEEDED_BY_RESULT: &str = "
subroutine g(x, y, gx, gy, f)
  implicit none
  double precision :: x, y, gx, gy, f
  adr(cotangent(f) = 2*f)
    f = x*x*y + sin(y)
  end adr(gx = cotangent(x), gy = cotangent(y))
end subroutine
";

/// The cotangent seed `2 f` is evaluated after the forward phase, so the
/// results are the gradient of `f^2`; the variables keep their forward
/// results after the block.
#[test]
fn adr_seed_reads_forward_results() {
    let engine = Engine::from_source("adr.f90", ADR_SEEDED_BY_RESULT).expect("compile");
    for &(x, y) in &[(0.7, 0.3), (-1.5, 2.0), (3.0, -0.25)] {
        let inputs = [("x", x), ("y", y)];
        let out = run(&engine, "g", &inputs);
        let f = x * x * y + y.sin();
        assert!(close(out.scalar("f").unwrap(), f, 1e-15));
        assert_eq!(out.scalar("x").unwrap(), x);
        let (gx, gy) = (out.scalar("gx").unwrap(), out.scalar("gy").unwrap());
        assert!(close(gx, 2.0 * f * 2.0 * x * y, 1e-14), "{gx}");
        assert!(close(gy, 2.0 * f * (x * x + y.cos()), 1e-14), "{gy}");
        // FD of f^2.
        let sq = |x: f64, y: f64| (x * x * y + y.sin()).powi(2);
        let h = 1e-6;
        assert!(close(gx, (sq(x + h, y) - sq(x - h, y)) / (2.0 * h), 1e-7));
        assert!(close(gy, (sq(x, y + h) - sq(x, y - h)) / (2.0 * h), 1e-7));
        // ADR and ADF agree (dot product <x_b, x_d> = <f_b, f_d>).
        let fx = central(&engine, "g", &inputs, "x", "f");
        assert!(close(gx, 2.0 * f * fx, 1e-7));
    }
}

/// ADF over ADR (tangent over adjoint): the second derivative, and the
/// perturbation-confusion test with the inner derivative in reverse mode.
#[test]
fn adf_over_adr_is_second_order_without_confusion() {
    let src = "
subroutine h(x, y, hxx, hxy, pc)
  implicit double precision (a-h, o-z)
  adf(x)
    adr(f)
      f = x*x*y + exp(x*y)
    end adr(gx = cotangent(x))
  end adf(hxx = tangent(gx))
  adf(y)
    adr(f2)
      f2 = x*x*y + exp(x*y)
    end adr(gx2 = cotangent(x))
  end adf(hxy = tangent(gx2))
  adf(x)
    z = 3.0d0
    adr(w)
      w = x + z
    end adr(dwdz = cotangent(z))
    v = x * dwdz
  end adf(pc = tangent(v))
end subroutine
";
    let engine = Engine::from_source("h.f90", src).expect("compile");
    for &(x, y) in &[(0.7, 0.3), (-1.5, 0.5), (0.2, -2.0)] {
        let out = run(&engine, "h", &[("x", x), ("y", y)]);
        let e = (x * y).exp();
        let (hxx, hxy) = (out.scalar("hxx").unwrap(), out.scalar("hxy").unwrap());
        assert!(close(hxx, 2.0 * y + y * y * e, 1e-13), "{hxx}");
        assert!(close(hxy, 2.0 * x + e + x * y * e, 1e-13), "{hxy}");
        assert_eq!(out.scalar("pc").unwrap(), 1.0);
    }
}

/// A program holding an ADR block, differentiated from outside by tangent
/// and by adjoint: both agree with the analytic second derivatives and FD.
#[test]
fn outer_derivative_of_an_adr_block() {
    let engine = Engine::from_source("adr.f90", ADR_SEEDED_BY_RESULT).expect("compile");
    let tan = engine
        .tangent(Some("g"), &sel("gx"), &sel("x,y"), 1)
        .expect("tangent");
    let adj = engine
        .adjoint(Some("g"), &sel("gx"), &sel("x,y"), &Default::default())
        .expect("adjoint");
    for &(x, y) in &[(0.7, 0.3), (-1.5, 2.0)] {
        let args = run(&engine, "g", &[("x", x), ("y", y)]);
        let jt = tan.jacobian(&args).expect("tangent");
        let (_, grad) = adj.gradient(&args).expect("adjoint");
        // gx = 4 f x y with f = x^2 y + sin y.
        let f = x * x * y + y.sin();
        let dx = 4.0 * (2.0 * x * y) * x * y + 4.0 * f * y;
        let dy = 4.0 * (x * x + y.cos()) * x * y + 4.0 * f * x;
        for (k, e) in [dx, dy].into_iter().enumerate() {
            assert!(
                close(jt.matrix[k], e, 1e-13),
                "tangent {k}: {} vs {e}",
                jt.matrix[k]
            );
            assert!(close(grad[k], e, 1e-13), "adjoint {k}: {} vs {e}", grad[k]);
        }
        let inputs = [("x", x), ("y", y)];
        assert!(close(dx, central(&engine, "g", &inputs, "x", "gx"), 1e-7));
    }
}

#[test]
fn adr_errors_are_located() {
    let cases = [
        (
            "subroutine f(a, g)\n  double precision :: a(*), g, s\n  adr(s)\n    a(2) = a(1)\n    s = a(2)**2\n  end adr(g = cotangent(a(1)))\nend subroutine\n",
            "assumed-size",
        ),
        (
            "subroutine f(x, g)\n  double precision :: x, g, s\n  adr(s)\n    s = x*x\n  end adf(g = tangent(x))\nend subroutine\n",
            "END ADF closes an ADR block",
        ),
    ];
    for (src, what) in cases {
        let e = match Engine::from_source("bad.f90", src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("bad.f90:"), "{e}");
        assert!(e.contains(what), "{e}");
    }
}

/// An ADR block whose forward phase runs a loop (its sweeps record the
/// loop on the tape): the gradient against the analytic one and
/// differences; the tangent of the program (second order) against the
/// analytic second derivatives and differences of the block's result;
/// the outer adjoint, which would differentiate the tape, is a located
/// error.
#[test]
fn adr_block_with_a_loop_first_and_second_order() {
    let src = "
subroutine g(n, x, y, gx, f)
  implicit none
  integer :: n, i
  double precision :: x, y, gx, f, s
  adr(f)
    s = 0
    do i = 1, n
      s = s + x*y*i + sin(x*i)
    end do
    f = s
  end adr(gx = cotangent(x))
end subroutine
";
    let engine = Engine::from_source("loop.f90", src).expect("compile");
    let tan = engine
        .tangent(Some("g"), &sel("gx"), &sel("x,y"), 1)
        .expect("tangent");
    for &(n, x, y) in &[(4, 0.7, 0.3), (7, -1.2, 2.0)] {
        let inputs = [("n", n as f64), ("x", x), ("y", y)];
        let args = run(&engine, "g", &inputs);
        let is = (1..=n).map(f64::from);
        let gx: f64 = is.clone().map(|i| y * i + i * (x * i).cos()).sum();
        let gxx: f64 = is.clone().map(|i| -i * i * (x * i).sin()).sum();
        let gxy: f64 = is.clone().sum();
        assert!(close(args.scalar("gx").unwrap(), gx, 1e-14));
        assert!(close(gx, central(&engine, "g", &inputs, "x", "f"), 1e-7));
        let jt = tan.jacobian(&args).expect("tangent");
        assert!(close(jt.matrix[0], gxx, 1e-13), "{} vs {gxx}", jt.matrix[0]);
        assert!(close(jt.matrix[1], gxy, 1e-13), "{} vs {gxy}", jt.matrix[1]);
        assert!(close(gxx, central(&engine, "g", &inputs, "x", "gx"), 1e-6));
        assert!(close(gxy, central(&engine, "g", &inputs, "y", "gx"), 1e-6));
    }
    let e = match engine.adjoint(Some("g"), &sel("gx"), &sel("x,y"), &Default::default()) {
        Ok(_) => panic!("the adjoint of a taped ADR block was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("loop.f90:"), "{e}");
    assert!(e.contains("ADR block that records loops"), "{e}");
}
