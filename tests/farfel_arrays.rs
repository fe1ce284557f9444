//! FARFEL's ADF and ADR blocks on arrays (seed 002, section 2): implied-DO
//! seed and result lists (`ADF((TANGENT(X(I)) = V(I), I = 1, N))`,
//! `END ADF((G(I) = TANGENT(Y(I)), I = 1, M))`), nested implied DO, array
//! elements and whole arrays as seeds and results, cotangent seeds read
//! after the forward phase, ADR blocks writing arrays of the enclosing
//! procedure. Each is checked against analytic derivatives, central
//! differences, adjit's own gradient / tangent of the same function
//! without blocks, and the dot-product identity between an ADF block
//! (`J v`) and an ADR block (`J^T w`), in free and fixed form.

mod common;
use adjit::engine::{Args, Engine, Selection};
use common::scalar::close;

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// Calls `entry` with the integer / real scalars and the arrays set.
fn call(engine: &Engine, entry: &str, scalars: &[(&str, f64)], arrays: &[(&str, &[f64])]) -> Args {
    let p = engine.procedure(Some(entry)).expect("procedure");
    let mut args = p.args();
    for (n, v) in scalars {
        args.set_scalar(n, *v).expect("set scalar");
    }
    for (n, v) in arrays {
        args.set_array(n, v).expect("set array");
    }
    p.call(&mut args).expect("call");
    args
}

/// Central differences of the scalar `of` in each element of the array
/// `wrt` (given in `arrays`).
fn central_grad(
    engine: &Engine,
    entry: &str,
    scalars: &[(&str, f64)],
    arrays: &[(&str, &[f64])],
    wrt: &str,
    of: &str,
) -> Vec<f64> {
    let h = 1e-6;
    let x: Vec<f64> = arrays.iter().find(|a| a.0 == wrt).expect("wrt").1.to_vec();
    (0..x.len())
        .map(|k| {
            let at = |d: f64| {
                let mut shifted = x.clone();
                shifted[k] += d;
                let others: Vec<(&str, &[f64])> = arrays
                    .iter()
                    .map(|&(n, v)| if n == wrt { (n, &shifted[..]) } else { (n, v) })
                    .collect();
                call(engine, entry, scalars, &others)
                    .scalar(of)
                    .expect("of")
            };
            (at(h) - at(-h)) / (2.0 * h)
        })
        .collect()
}

fn assert_all_close(a: &[f64], b: &[f64], rel: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(close(*x, *y, rel), "{what}[{k}]: {x} vs {y}");
    }
}

/// The extended Rosenbrock function: its gradient from one ADR block with
/// an implied-DO result list, and the same function without a block for
/// `Engine::adjoint` (what `adjit grad` runs).
const ROSENBROCK: &str = "
subroutine rosen_grad(n, x, f, g)
  implicit none
  integer :: n, i
  double precision :: x(n), f, g(n)
  adr(f)
    call rosen(n, x, f)
  end adr((g(i) = cotangent(x(i)), i = 1, n))
end subroutine

subroutine rosen(n, x, f)
  implicit none
  integer :: n, i
  double precision :: x(n), f
  f = 0
  do i = 1, n - 1
    f = f + 100*(x(i+1) - x(i)**2)**2 + (1 - x(i))**2
  end do
end subroutine
";

fn rosenbrock_gradient(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for i in 0..n - 1 {
        let t = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * t - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * t;
    }
    g
}

#[test]
fn adr_gradient_of_n_variables_matches_analytic_fd_and_adjoint() {
    let engine = Engine::from_source("rosen.f90", ROSENBROCK).expect("compile");
    let adj = engine
        .adjoint(Some("rosen"), &sel("f"), &sel("x"), &Default::default())
        .expect("adjoint");
    for x in [
        vec![1.2, 0.5, -0.3, 2.0],
        vec![-1.0, 1.0, 0.7, 0.1, 0.3, -2.5, 1.5],
    ] {
        let n = x.len() as f64;
        let out = call(&engine, "rosen_grad", &[("n", n)], &[("x", &x)]);
        let g = out.f64s("g").unwrap();
        assert_all_close(&g, &rosenbrock_gradient(&x), 1e-14, "analytic");
        let plain = call(&engine, "rosen", &[("n", n)], &[("x", &x)]);
        let (f, grad) = adj.gradient(&plain).expect("gradient");
        assert_eq!(out.scalar("f").unwrap(), f);
        assert_all_close(&g, &grad, 1e-15, "Engine::adjoint");
        let fd = central_grad(&engine, "rosen", &[("n", n)], &[("x", &x)], "x", "f");
        assert_all_close(&g, &fd, 1e-6, "FD");
        // The block leaves x as it was.
        assert_eq!(out.f64s("x").unwrap(), x);
    }
}

/// y(i) = sin(x(i)) * x(i+1) (cyclic): a Jacobian column `J v` from one
/// ADF block, `J^T w` from one ADR block with a whole-array seed read
/// after the forward phase (w * y) and a whole-array result.
const CYCLIC: &str = "
subroutine jv(n, x, v, y, d)
  implicit none
  integer :: n, i
  double precision :: x(n), v(n), y(n), d(n)
  adf((tangent(x(i)) = v(i), i = 1, n))
    call cyc(n, x, y)
  end adf((d(i) = tangent(y(i)), i = 1, n))
end subroutine

subroutine jtw(n, x, w, y, g)
  implicit none
  integer :: n
  double precision :: x(n), w(n), y(n), g(n)
  adr(cotangent(y) = w)
    call cyc(n, x, y)
  end adr(g = cotangent(x))
end subroutine

subroutine jtwy(n, x, w, y, g)
  implicit none
  integer :: n, i
  double precision :: x(n), w(n), y(n), g(n)
  adr((cotangent(y(i)) = w(i) * y(i), i = 1, n))
    call cyc(n, x, y)
  end adr(g = cotangent(x))
end subroutine

subroutine cyc(n, x, y)
  implicit none
  integer :: n, i
  double precision :: x(n), y(n)
  do i = 1, n
    y(i) = sin(x(i)) * x(mod(i, n) + 1)
  end do
end subroutine
";

/// `J v` for [`CYCLIC`].
fn cyclic_jv(x: &[f64], v: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|i| {
            let j = (i + 1) % n;
            x[i].cos() * x[j] * v[i] + x[i].sin() * v[j]
        })
        .collect()
}

/// `J^T w` for [`CYCLIC`].
fn cyclic_jtw(x: &[f64], w: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for i in 0..n {
        let j = (i + 1) % n;
        g[i] += x[i].cos() * x[j] * w[i];
        g[j] += x[i].sin() * w[i];
    }
    g
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn adf_jacobian_column_and_adr_row_agree_with_analytic_tangent_and_each_other() {
    let engine = Engine::from_source("cyc.f90", CYCLIC).expect("compile");
    let tan = engine
        .tangent(Some("cyc"), &sel("y"), &sel("x"), 1)
        .expect("tangent");
    let x = [0.3, -1.2, 2.0, 0.8, 1.7];
    let n = [("n", x.len() as f64)];
    let v = [1.0, -0.5, 0.25, 2.0, -1.5];
    let w = [0.5, 1.5, -1.0, 0.75, 0.2];
    let out = call(&engine, "jv", &n, &[("x", &x), ("v", &v)]);
    let d = out.f64s("d").unwrap();
    assert_all_close(&d, &cyclic_jv(&x, &v), 1e-15, "J v analytic");
    // The Jacobian column k of the tangent of the function without block.
    let plain = call(&engine, "cyc", &n, &[("x", &x)]);
    assert_eq!(out.f64s("y").unwrap(), plain.f64s("y").unwrap());
    let jac = tan.jacobian(&plain).expect("jacobian");
    for k in 0..x.len() {
        let mut e = [0.0; 5];
        e[k] = 1.0;
        let col = call(&engine, "jv", &n, &[("x", &x), ("v", &e)])
            .f64s("d")
            .unwrap();
        let expected: Vec<f64> = (0..x.len())
            .map(|r| jac.matrix[r * jac.cols() + k])
            .collect();
        assert_all_close(&col, &expected, 1e-15, "column");
    }
    let g = call(&engine, "jtw", &n, &[("x", &x), ("w", &w)])
        .f64s("g")
        .unwrap();
    assert_all_close(&g, &cyclic_jtw(&x, &w), 1e-15, "J^T w analytic");
    // Dot-product identity between the two blocks.
    let (a, b) = (dot(&w, &d), dot(&g, &v));
    assert!(close(a, b, 1e-13), "{a} vs {b}");
    // FD: d = J v along v.
    let h = 1e-6;
    let shifted = |s: f64| -> Vec<f64> {
        let xs: Vec<f64> = x.iter().zip(&v).map(|(a, b)| a + s * b).collect();
        call(&engine, "cyc", &n, &[("x", &xs)]).f64s("y").unwrap()
    };
    let (p, m) = (shifted(h), shifted(-h));
    let fd: Vec<f64> = p.iter().zip(&m).map(|(a, b)| (a - b) / (2.0 * h)).collect();
    assert_all_close(&d, &fd, 1e-7, "FD");
    // The seed read after the forward phase sees y.
    let out = call(&engine, "jtwy", &n, &[("x", &x), ("w", &w)]);
    let y = out.f64s("y").unwrap();
    let wy: Vec<f64> = w.iter().zip(&y).map(|(a, b)| a * b).collect();
    assert_all_close(
        &out.f64s("g").unwrap(),
        &cyclic_jtw(&x, &wy),
        1e-15,
        "seed w*y",
    );
}

/// Nested implied DO over a rank-2 array, element seeds and results mixed
/// with scalars, and a block writing arrays of its host.
const MATRIX: &str = "
subroutine quad(a, b, s, ds, r)
  implicit none
  integer :: i, j
  double precision :: a(2, 3), b(2, 3), s, ds, r(2, 3), c(2, 3)
  adf(((tangent(a(i, j)) = b(i, j), i = 1, 2), j = 1, 3), tangent(s) = 2)
    c = a * s
    c(2, 2) = c(2, 2) * c(1, 1)
    r = sin(c)
  end adf(((r(i, j) = tangent(c(i, j)), i = 1, 2), j = 1, 3), ds = tangent(s))
end subroutine

subroutine quadr(a, w, s, gs, ga, c)
  implicit none
  integer :: i, j
  double precision :: a(2, 3), w(2, 3), s, gs, ga(2, 3), c(2, 3)
  adr(((cotangent(c(i, j)) = w(i, j), j = 1, 3), i = 1, 2))
    c = a * s
    c(2, 2) = c(2, 2) * c(1, 1)
  end adr(((ga(i, j) = cotangent(a(i, j)), j = 1, 3), i = 1, 2), gs = cotangent(s))
end subroutine
";

#[test]
fn nested_implied_do_on_rank_two_arrays() {
    let engine = Engine::from_source("quad.f90", MATRIX).expect("compile");
    let a = [0.5, -1.0, 1.5, 2.0, 0.25, -0.75];
    let b = [1.0, 0.5, -2.0, 0.3, 1.2, -0.6];
    let s = 1.3;
    let out = call(&engine, "quad", &[("s", s)], &[("a", &a), ("b", &b)]);
    // c = a s, except c(2,2) = a(2,2) s * a(1,1) s (column-major: 3 and 0).
    let mut dc: Vec<f64> = (0..6).map(|k| b[k] * s + a[k] * 2.0).collect();
    let (c11, c22) = (a[0] * s, a[3] * s);
    dc[3] = dc[3] * c11 + c22 * dc[0];
    assert_all_close(&out.f64s("r").unwrap(), &dc, 1e-15, "tangent of c");
    assert_eq!(out.scalar("ds").unwrap(), 2.0);
    // The reverse block with the loops nested the other way, and the
    // dot-product identity with the forward block (seeds b and 2 for s).
    let w = [0.7, -0.2, 1.1, 0.4, -1.3, 0.9];
    let rev = call(&engine, "quadr", &[("s", s)], &[("a", &a), ("w", &w)]);
    let ga = rev.f64s("ga").unwrap();
    let gs = rev.scalar("gs").unwrap();
    let lhs = dot(&w, &dc);
    let rhs = dot(&ga, &b) + gs * 2.0;
    assert!(close(lhs, rhs, 1e-13), "{lhs} vs {rhs}");
    // The ADR block wrote c: after it c holds the forward values.
    let mut c: Vec<f64> = a.iter().map(|x| x * s).collect();
    c[3] *= c[0];
    assert_eq!(rev.f64s("c").unwrap(), c);
}

/// An ADR block that overwrites an array of its host (in place, element by
/// element and passed to a call): the host sees the forward values after
/// the block, the gradient is right.
const IN_PLACE: &str = "
subroutine smooth(n, x, f, g)
  implicit none
  integer :: n, i, k
  double precision :: x(n), f, g(n)
  adr(f)
    do k = 1, 3
      do i = 2, n
        x(i) = x(i) + 0.5d0 * x(i - 1) * x(i)
      end do
      call scale(n, x)
    end do
    f = 0
    do i = 1, n
      f = f + x(i)**2
    end do
  end adr(g = cotangent(x))
end subroutine

subroutine scale(n, x)
  implicit none
  integer :: n
  double precision :: x(n)
  x = x * 0.9d0
end subroutine

subroutine smooth_plain(n, x, f)
  implicit none
  integer :: n, i, k
  double precision :: x(n), f
  do k = 1, 3
    do i = 2, n
      x(i) = x(i) + 0.5d0 * x(i - 1) * x(i)
    end do
    call scale(n, x)
  end do
  f = 0
  do i = 1, n
    f = f + x(i)**2
  end do
end subroutine
";

#[test]
fn adr_block_writing_host_arrays() {
    let engine = Engine::from_source("smooth.f90", IN_PLACE).expect("compile");
    let x = [0.4, -0.3, 0.8, 0.1];
    let n = [("n", 4.0)];
    let out = call(&engine, "smooth", &n, &[("x", &x)]);
    let plain = call(&engine, "smooth_plain", &n, &[("x", &x)]);
    assert_eq!(out.f64s("x").unwrap(), plain.f64s("x").unwrap());
    assert_eq!(out.scalar("f").unwrap(), plain.scalar("f").unwrap());
    let adj = engine
        .adjoint(
            Some("smooth_plain"),
            &sel("f"),
            &sel("x"),
            &Default::default(),
        )
        .expect("adjoint");
    let fresh = call(&engine, "smooth_plain", &n, &[("x", &x)]);
    let mut at_entry = fresh.clone();
    at_entry.set_array("x", &x).expect("x");
    let (_, grad) = adj.gradient(&at_entry).expect("gradient");
    let g = out.f64s("g").unwrap();
    assert_all_close(&g, &grad, 1e-15, "Engine::adjoint");
    let fd = central_grad(&engine, "smooth_plain", &n, &[("x", &x)], "x", "f");
    assert_all_close(&g, &fd, 1e-7, "FD");
}

/// The fixed-form spelling (blanks inside keywords, implied DO lists).
#[test]
fn array_blocks_in_fixed_form() {
    let src = "
      SUBROUTINE GRAD(N, X, F, G)
      INTEGER N, I
      DOUBLE PRECISION X(N), F, G(N)
      A D R(F)
        F = 0
        DO 10 I = 1, N
          F = F + X(I)**3 * I
   10   CONTINUE
      END ADR((G(I) = COTANGENT(X(I)), I = 1, N))
      END

      SUBROUTINE COL(N, X, V, Y, D)
      INTEGER N, I
      DOUBLE PRECISION X(N), V(N), Y(N), D(N)
      ADF((TANGENT(X(I)) = V(I), I = 1, N))
        DO 20 I = 1, N
          Y(I) = EXP(X(I)) * X(N + 1 - I)
   20   CONTINUE
      END ADF((D(I) = TANGENT(Y(I)), I = 1, N))
      END
";
    let engine = Engine::from_source("fixed.f", src).expect("compile");
    let x = [0.5, -1.5, 2.0];
    let g = call(&engine, "grad", &[("n", 3.0)], &[("x", &x)])
        .f64s("g")
        .unwrap();
    let analytic: Vec<f64> = (0..3).map(|i| 3.0 * x[i] * x[i] * (i + 1) as f64).collect();
    assert_all_close(&g, &analytic, 1e-15, "gradient");
    let v = [1.0, 2.0, -1.0];
    let d = call(&engine, "col", &[("n", 3.0)], &[("x", &x), ("v", &v)])
        .f64s("d")
        .unwrap();
    let expected: Vec<f64> = (0..3)
        .map(|i| x[i].exp() * (x[2 - i] * v[i] + v[2 - i]))
        .collect();
    assert_all_close(&d, &expected, 1e-15, "column");
}

/// Perturbation confusion with the array forms: the outer block perturbs
/// `x` along `v` (implied DO), the inner one every element of `y` (ADF)
/// or reads the cotangents of `y` (ADR). With `z = sum(x) + sum(y)`, the
/// inner derivatives are `n` and ones whatever `x` is, so the outer
/// derivatives are `n sum(v)` and `sum(v)`; mixing the perturbations would
/// add the outer direction to the inner derivative.
#[test]
fn nested_array_blocks_have_no_perturbation_confusion() {
    let src = "
subroutine pc(n, x, v, d, e)
  implicit none
  integer :: n, i
  double precision :: x(n), v(n), d, e, y(n), z, dzdy, w, g(n), u
  adf((tangent(x(i)) = v(i), i = 1, n))
    y = 3
    adf((tangent(y(i)) = 1, i = 1, n))
      z = sum(x) + sum(y)
    end adf(dzdy = tangent(z))
    w = sum(x) * dzdy
  end adf(d = tangent(w))
  adf((tangent(x(i)) = v(i), i = 1, n))
    y = 3
    adr(z)
      z = sum(x) + sum(y)
    end adr((g(i) = cotangent(y(i)), i = 1, n))
    u = sum(x * g)
  end adf(e = tangent(u))
end subroutine
";
    let engine = Engine::from_source("pc.f90", src).expect("compile");
    for v in [[1.0, 2.0, -0.5], [0.3, 0.0, 4.0]] {
        let x = [0.7, -1.1, 2.5];
        let out = call(&engine, "pc", &[("n", 3.0)], &[("x", &x), ("v", &v)]);
        let s: f64 = v.iter().sum();
        assert_eq!(out.scalar("d").unwrap(), 3.0 * s);
        assert_eq!(out.scalar("e").unwrap(), s);
    }
}

/// A function whose value is a directional derivative from an ADF block
/// with an implied-DO seed: f = d/dt y(x + t x) at t = 0 with
/// y = cos(x1) sum(x^3), i.e. f = S (3 cos x1 - x1 sin x1), S = sum(x^3).
const HESSIAN_OF_BLOCK: &str = "
subroutine s(n, x, f)
  implicit none
  integer :: n, i
  double precision :: x(n), f, y
  adf((tangent(x(i)) = x(i), i = 1, n))
    y = 0
    do i = 1, n
      y = y + x(i)**3 * cos(x(1))
    end do
  end adf(f = tangent(y))
end subroutine
";

/// The analytic Hessian of [`HESSIAN_OF_BLOCK`], row-major.
fn block_hessian(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let s: f64 = x.iter().map(|a| a * a * a).sum();
    let (c, sn) = (x[0].cos(), x[0].sin());
    let g = 3.0 * c - x[0] * sn;
    let g1 = -4.0 * sn - x[0] * c;
    let g2 = -5.0 * c + x[0] * sn;
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        // d2 (S g) / dxi dxj
        h[i * n + i] += 6.0 * x[i] * g;
    }
    for i in 0..n {
        let si = 3.0 * x[i] * x[i];
        h[i * n] += si * g1;
        h[i] += si * g1;
    }
    h[0] += s * g2;
    h
}

#[test]
fn adjit_hessian_and_check_order_2_on_a_program_with_blocks() {
    let dir = std::env::temp_dir().join(format!("adjit-farfel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("block.f90");
    std::fs::write(&file, HESSIAN_OF_BLOCK).expect("write");
    let file = file.to_string_lossy().into_owned();
    let x = [0.5, 1.0, -2.0];
    let set = ["--set", "n=3", "--set", "x=0.5,1,-2"];
    let (code, out, err) = common::cli::adjit(
        &[
            &["hessian", &file, "--of", "f", "--wrt", "x", "--json"],
            &set[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let expected = block_hessian(&x);
    for r in 0..3 {
        for c in 0..3 {
            let got = json["matrix"][r][c].as_f64().expect("number");
            let want = expected[r * 3 + c];
            assert!(close(got, want, 1e-13), "({r},{c}) {got} vs {want}");
        }
    }
    let (code, out, err) = common::cli::adjit(
        &[
            &["check", &file, "--of", "f", "--wrt", "x", "--order", "2"],
            &set[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Hessian vs finite differences"), "{out}");
    assert!(out.contains("ok:"), "{out}");
}
