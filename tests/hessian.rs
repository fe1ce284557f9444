//! Second-order derivatives: Hessians by tangent over adjoint, Hessian-vector
//! products and second directional derivatives (tangent over tangent),
//! checked three ways: against analytic Hessians, against finite
//! differences of the gradient, and against each other (symmetry,
//! `u^T (H v)` = `v^T (H u)` = tangent over tangent).

mod common;

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::engine::{Args, Engine, HessianMatrix, Selection};
use common::cli::adjit;

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn assert_matrix(what: &str, h: &HessianMatrix, expected: &[f64], rel: f64) {
    assert_eq!(h.matrix.len(), expected.len(), "{what}: size");
    for (i, (a, b)) in h.matrix.iter().zip(expected).enumerate() {
        assert!(close(*a, *b, rel), "{what}: entry {i}: {a} vs {b}");
    }
}

/// Every option combination that must give the same Hessian.
fn option_sets() -> Vec<(usize, AdjointOptions)> {
    let mut out = Vec::new();
    for record in [RecordPolicy::Tbr, RecordPolicy::Conservative] {
        for activity in [true, false] {
            for directions in [1, 3, 0] {
                let options = AdjointOptions {
                    record,
                    activity,
                    ..AdjointOptions::default()
                };
                out.push((directions, options));
            }
        }
    }
    out
}

/// The Hessian at `args` by every option set (all equal) and checks:
/// symmetry, HVP = H v, tangent over tangent u^T H v, FD of the gradient.
fn check_all(engine: &Engine, entry: &str, of: &str, wrt: &str, args: &Args) -> HessianMatrix {
    let (of, wrt) = (sel(of), sel(wrt));
    let mut first: Option<HessianMatrix> = None;
    for (k, options) in option_sets() {
        let hess = engine
            .hessian(Some(entry), &of, &wrt, k, &options)
            .expect("hessian");
        let h = hess.hessian(args).expect("evaluate");
        if let Some(f) = &first {
            assert_matrix(&format!("k={k} {options:?}"), &h, &f.matrix, 1e-13);
        } else {
            first = Some(h);
        }
    }
    let h = first.expect("one");
    let n = h.n();
    // Symmetry.
    for i in 0..n {
        for j in 0..i {
            assert!(
                close(h.get(i, j), h.get(j, i), 1e-12),
                "not symmetric at ({i},{j}): {} vs {}",
                h.get(i, j),
                h.get(j, i)
            );
        }
    }
    // HVP vs the full Hessian, and the dot-product test u.(Hv) = v.(Hu)
    // against tangent over tangent.
    let hess = engine
        .hessian(Some(entry), &of, &wrt, 1, &AdjointOptions::default())
        .expect("hessian");
    let sd = engine
        .second_directional(Some(entry), &of, &wrt)
        .expect("tangent over tangent");
    let u: Vec<f64> = (0..n).map(|i| 0.3 + 0.7 * i as f64).collect();
    let v: Vec<f64> = (0..n).map(|i| 1.0 - 0.45 * i as f64).collect();
    let (value, grad, hv) = hess.hvp(args, &v).expect("hvp");
    assert!(close(value, h.value, 1e-14));
    for i in 0..n {
        assert!(close(grad[i], h.gradient[i], 1e-14));
        let row: f64 = (0..n).map(|j| h.get(i, j) * v[j]).sum();
        assert!(close(hv[i], row, 1e-12), "Hv[{i}] {} vs {row}", hv[i]);
    }
    let (_, _, hu) = hess.hvp(args, &u).expect("hvp");
    let uhv: f64 = u.iter().zip(&hv).map(|(a, b)| a * b).sum();
    let vhu: f64 = v.iter().zip(&hu).map(|(a, b)| a * b).sum();
    assert!(close(uhv, vhu, 1e-12), "u.Hv {uhv} vs v.Hu {vhu}");
    let (second, _) = sd.at(args, &u, &v).expect("second directional");
    assert!(
        close(second[0], uhv, 1e-12),
        "tot {} vs toa {uhv}",
        second[0]
    );
    // Finite differences of the adjoint gradient.
    let adj = engine
        .adjoint(Some(entry), &of, &wrt, &AdjointOptions::default())
        .expect("adjoint");
    for (col, (param, offset)) in wrt_elements(args, &h).into_iter().enumerate() {
        let x = args.buffers()[param].get_f64(offset);
        let step = 1e-5 * x.abs().max(1.0);
        let at = |d: f64| {
            let mut a = args.clone();
            a.buffers_mut()[param].set_f64(offset, x + d);
            adj.gradient(&a).expect("gradient").1
        };
        let (gp, gm) = (at(step), at(-step));
        for row in 0..n {
            let fd = (gp[row] - gm[row]) / (2.0 * step);
            assert!(
                close(h.get(row, col), fd, 1e-6),
                "FD of gradient ({row},{col}): {} vs {fd}",
                h.get(row, col)
            );
        }
    }
    h
}

/// (argument index, element offset) of each Hessian column.
fn wrt_elements(args: &Args, h: &HessianMatrix) -> Vec<(usize, usize)> {
    h.wrt
        .iter()
        .map(|label| match label.find('(') {
            None => (args.index_of(label).expect("param"), 0),
            Some(open) => {
                let name = &label[..open];
                let subs: Vec<i64> = label[open + 1..label.len() - 1]
                    .split(',')
                    .map(|s| s.parse().expect("subscript"))
                    .collect();
                let param = args.index_of(name).expect("param");
                (param, args.offset(param, &subs).expect("offset"))
            }
        })
        .collect()
}

const ROSENBROCK: &str = "
subroutine rosen(n, x, f)
  integer n, i
  double precision x(n), f
  f = 0d0
  do i = 1, n - 1
    f = f + 100d0*(x(i+1) - x(i)**2)**2 + (1d0 - x(i))**2
  end do
end subroutine
";

#[test]
fn rosenbrock_matches_its_analytic_hessian() {
    let engine = Engine::from_source("rosen.f90", ROSENBROCK).expect("compile");
    let mut args = engine.procedure(Some("rosen")).expect("proc").args();
    let x = [-1.2, 1.0, 0.7, -0.3, 2.1];
    let n = x.len();
    args.set_scalar("n", n as f64).expect("n");
    args.set_array("x", &x).expect("x");
    let h = check_all(&engine, "rosen", "f", "x", &args);
    let mut expected = vec![0.0; n * n];
    for i in 0..n - 1 {
        // Term 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2.
        expected[i * n + i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        expected[(i + 1) * n + i + 1] += 200.0;
        expected[i * n + i + 1] += -400.0 * x[i];
        expected[(i + 1) * n + i] += -400.0 * x[i];
    }
    assert_matrix("rosenbrock", &h, &expected, 1e-13);
}

const GRIEWANK: &str = "
double precision function griewank(n, x)
  integer n, i
  double precision x(n), s, p
  s = 0d0
  p = 1d0
  do i = 1, n
    s = s + x(i)**2
    p = p * cos(x(i) / sqrt(dble(i)))
  end do
  griewank = 1d0 + s / 4000d0 - p
end function
";

#[test]
fn griewank_function_matches_its_analytic_hessian() {
    let engine = Engine::from_source("griewank.f90", GRIEWANK).expect("compile");
    let mut args = engine.procedure(Some("griewank")).expect("proc").args();
    let x = [0.9, -1.7, 2.4, 0.35];
    let n = x.len();
    args.set_scalar("n", n as f64).expect("n");
    args.set_array("x", &x).expect("x");
    let h = check_all(&engine, "griewank", "griewank", "x", &args);
    let r = |i: usize| ((i + 1) as f64).sqrt();
    let c = |i: usize| (x[i] / r(i)).cos();
    let s = |i: usize| (x[i] / r(i)).sin();
    let prod_except =
        |a: usize, b: usize| -> f64 { (0..n).filter(|&k| k != a && k != b).map(c).product() };
    let mut expected = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[i * n + j] = if i == j {
                1.0 / 2000.0 + c(i) / (r(i) * r(i)) * prod_except(i, i)
            } else {
                -(s(i) / r(i)) * (s(j) / r(j)) * prod_except(i, j)
            };
        }
    }
    assert_matrix("griewank", &h, &expected, 1e-13);
}

const BRANCHY: &str = "
subroutine branchy(n, x, f)
  integer n, i, k
  double precision x(n), f, t
  f = 0d0
  t = 1d0
  do i = 1, n
    if (x(i) > 0d0) then
      t = t * exp(0.3d0*x(i)) + sin(x(i))*x(1)
    else
      t = t + x(i)**3 / (1d0 + t*t)
    end if
    k = 0
    do while (t > 2d0 .and. k < 5)
      t = sqrt(t) + 0.1d0*x(i)*t
      k = k + 1
    end do
    f = f + t*x(i) + log(1d0 + x(i)**2)
  end do
end subroutine
";

#[test]
fn branches_and_loops_agree_with_finite_differences_of_the_gradient() {
    let engine = Engine::from_source("branchy.f90", BRANCHY).expect("compile");
    for x in [[0.8, -0.4, 1.3, -1.1, 0.6], [-0.2, 1.9, 0.4, 2.2, -0.7]] {
        let mut args = engine.procedure(Some("branchy")).expect("proc").args();
        args.set_scalar("n", x.len() as f64).expect("n");
        args.set_array("x", &x).expect("x");
        check_all(&engine, "branchy", "f", "x", &args);
    }
}

const CALLS: &str = "
subroutine inner(a, b, r)
  double precision a, b, r
  r = a*a*b
end subroutine
subroutine outer(x, y, f)
  double precision x, y, f, t
  call inner(x, y, t)
  f = t*t
end subroutine
subroutine inner2(a, r)
  double precision a, r
  r = sin(a) * a
  a = 2d0 * r
end subroutine
subroutine pushy(x, y, f)
  double precision x, y, f, t
  t = x*x*y
  call inner2(t, f)
end subroutine
subroutine passive(x, f)
  double precision x, f, c, r
  c = 3d0
  call inner2(c, r)
  f = x*x*r
end subroutine
subroutine outer2(x, y, f)
  double precision x, y, f, t
  call inner(x, y, t)
  call inner(t, x, f)
  f = f + sin(t*y)
end subroutine
";

#[test]
fn hessians_through_calls() {
    let engine = Engine::from_source("calls.f90", CALLS).expect("compile");
    let (x, y) = (1.3, -0.8);
    let mut args = engine.procedure(Some("outer")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    args.set_scalar("y", y).expect("y");
    // f = x^4 y^2.
    let h = check_all(&engine, "outer", "f", "x,y", &args);
    let expected = [
        12.0 * x * x * y * y,
        8.0 * x * x * x * y,
        8.0 * x * x * x * y,
        2.0 * x.powi(4),
    ];
    assert_matrix("outer", &h, &expected, 1e-13);
    // The caller's t reaches the output only through the value the
    // callee's forward sweep pushes (inner2 overwrites its argument) and
    // its reverse sweep pops: the value stack is an interface port.
    let mut args = engine.procedure(Some("pushy")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    args.set_scalar("y", y).expect("y");
    let h = check_all(&engine, "pushy", "f", "x,y", &args);
    // f = g(u), g(u) = u sin u, u = x^2 y.
    let u = x * x * y;
    let (g1, g2) = (u.sin() + u * u.cos(), 2.0 * u.cos() - u * u.sin());
    let (ux, uy) = (2.0 * x * y, x * x);
    let expected = [
        g2 * ux * ux + g1 * 2.0 * y,
        g2 * ux * uy + g1 * 2.0 * x,
        g2 * ux * uy + g1 * 2.0 * x,
        g2 * uy * uy,
    ];
    assert_matrix("pushy", &h, &expected, 1e-12);
    // A callee on passive data only (its sweeps still push and pop the
    // value stack), f = 3 sin(3) x^2.
    let mut args = engine.procedure(Some("passive")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    let h = check_all(&engine, "passive", "f", "x", &args);
    assert_matrix("passive", &h, &[6.0 * 3f64.sin()], 1e-13);
    let mut args = engine.procedure(Some("outer2")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    args.set_scalar("y", y).expect("y");
    check_all(&engine, "outer2", "f", "x,y", &args);
}

const GLOBALS: &str = "
subroutine setc(x)
  double precision x, c
  common /blk/ c
  c = x*x
end subroutine
subroutine usec(x, y, f)
  double precision x, y, f, c
  common /blk/ c
  call setc(x)
  f = c*y + c*c
end subroutine
module m
  double precision :: w = 2d0
  double precision :: s
contains
  subroutine prep(x)
    double precision x
    s = w*x**3
  end subroutine
end module
subroutine modf(x, y, f)
  use m
  double precision x, y, f
  call prep(x)
  f = s*exp(y)
end subroutine
";

#[test]
fn hessians_through_common_and_module_globals() {
    let engine = Engine::from_source("globals.f90", GLOBALS).expect("compile");
    let (x, y) = (0.7, 1.4);
    let mut args = engine.procedure(Some("usec")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    args.set_scalar("y", y).expect("y");
    // f = x^2 y + x^4.
    let h = check_all(&engine, "usec", "f", "x,y", &args);
    let expected = [2.0 * y + 12.0 * x * x, 2.0 * x, 2.0 * x, 0.0];
    assert_matrix("common", &h, &expected, 1e-13);
    let mut args = engine.procedure(Some("modf")).expect("proc").args();
    args.set_scalar("x", x).expect("x");
    args.set_scalar("y", y).expect("y");
    // f = 2 x^3 e^y.
    let h = check_all(&engine, "modf", "f", "x,y", &args);
    let e = y.exp();
    let expected = [
        12.0 * x * e,
        6.0 * x * x * e,
        6.0 * x * x * e,
        2.0 * x.powi(3) * e,
    ];
    assert_matrix("module", &h, &expected, 1e-13);
}

#[test]
fn bad_requests_are_errors() {
    let engine = Engine::from_source("rosen.f90", ROSENBROCK).expect("compile");
    let options = AdjointOptions::default();
    let vector = engine
        .hessian(Some("rosen"), &sel("x"), &sel("x"), 0, &options)
        .expect("extents are known only at evaluation");
    let mut args = vector.args();
    args.set_scalar("n", 3.0).expect("n");
    let err = vector
        .hessian(&args)
        .expect_err("a vector output is refused");
    assert!(err.to_string().contains("one scalar output"), "{err}");
    let err = engine
        .hessian(Some("rosen"), &sel("f"), &sel("n"), 0, &options)
        .err()
        .expect("an integer input is refused");
    assert!(err.to_string().contains("floating-point"), "{err}");
    let hess = engine
        .hessian(Some("rosen"), &sel("f"), &sel("x"), 1, &options)
        .expect("hessian");
    let mut args = hess.args();
    args.set_scalar("n", 3.0).expect("n");
    args.set_array("x", &[1.0, 2.0, 3.0]).expect("x");
    assert!(hess.hvp(&args, &[1.0]).is_err());
}

/// Writes `text` to a fresh file in the temporary directory.
fn source_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("adjit-hessian-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

#[test]
fn cli_hessian_prints_text_and_json() {
    let file = source_file("rosen.f90", ROSENBROCK);
    let set = ["--set", "n=3", "--set", "x=-1.2,1,0.7"];
    let (code, out, err) = adjit(
        &[
            &["hessian", &file, "--of", "f", "--wrt", "x", "--json"],
            &set[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["of"], serde_json::json!(["f"]));
    assert_eq!(json["wrt"], serde_json::json!(["x(1)", "x(2)", "x(3)"]));
    assert_eq!(
        (json["rows"].as_u64(), json["cols"].as_u64()),
        (Some(3), Some(3))
    );
    // Analytic entries at x = (-1.2, 1, 0.7).
    let expected = [
        [1200.0 * 1.44 - 400.0 + 2.0, 480.0, 0.0],
        [480.0, 200.0 + 1200.0 - 280.0 + 2.0, -400.0],
        [0.0, -400.0, 200.0],
    ];
    for (r, row) in expected.iter().enumerate() {
        for (c, want) in row.iter().enumerate() {
            let got = json["matrix"][r][c].as_f64().expect("number");
            assert!(close(got, *want, 1e-13), "({r},{c}) {got} vs {want}");
        }
    }
    let (code, out, err) = adjit(
        &[
            &["hessian", &file, "--of", "f", "--wrt", "x(2),x(3)"],
            &set[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Hessian of f = "), "{out}");
    assert!(out.contains("x(3) -4.0000000000000000e2"), "{out}");
    let (code, _, err) =
        adjit(&[&["hessian", &file, "--of", "x", "--wrt", "x"], &set[..]].concat());
    assert_eq!(code, 2);
    assert!(
        err.contains("one scalar output; `--of` selects 3 elements"),
        "{err}"
    );
}

const KINK: &str = "
subroutine kink(x, y, f)
  double precision x, y, f
  f = max(x, 0d0)**2 + x*y**3
end subroutine
";

#[test]
fn cli_check_order_2_tests_the_hessian() {
    let file = source_file("kink.f90", KINK);
    let base = ["check", &file, "--of", "f", "--wrt", "x,y", "--order", "2"];
    // Smooth point: every test passes.
    let (code, out, err) =
        adjit(&[&base[..], &["--set", "x=0.5", "--set", "y=-1.5", "--json"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["second_order"]["ok"], serde_json::json!(true), "{out}");
    assert_eq!(json["second_order"]["symmetry"].as_f64(), Some(0.0));
    // At the kink of max(x, 0)**2 the first derivative is continuous (the
    // first-order tests pass with a small step) but the second is not:
    // d2f/dx2 is 0 by AD (the tie goes to the constant) and 1 by central
    // differences of the gradient.
    let at_kink = ["--set", "x=0", "--set", "y=0.5", "--step", "1e-9"];
    let (code, _, err) = adjit(&[&base[..1], &base[1..6], &at_kink[..]].concat());
    assert_eq!(code, 0, "first order alone passes: {err}");
    let (code, out, err) = adjit(&[&base[..], &at_kink[..]].concat());
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("Hessian and finite differences of the gradient disagree for: x"),
        "{err}"
    );
    let (code, _, err) = adjit(&[&base[..6], &["--order", "3"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid value '3' for '--order"), "{err}");
}

#[test]
fn interpreter_and_jit_give_the_same_hessian_bit_for_bit() {
    use adjit::engine::{Backend, Options};
    let interp = Engine::from_sources(
        &[("branchy.f90".to_string(), BRANCHY.to_string())],
        Options {
            backend: Backend::Interpreter,
            ..Options::default()
        },
    )
    .expect("compile");
    let jit = Engine::from_source("branchy.f90", BRANCHY).expect("compile");
    let x = [0.8, -0.4, 1.3, -1.1, 0.6];
    let options = AdjointOptions::default();
    let mut results = Vec::new();
    for engine in [&interp, &jit] {
        let hess = engine
            .hessian(Some("branchy"), &sel("f"), &sel("x"), 3, &options)
            .expect("hessian");
        let mut args = hess.args();
        args.set_scalar("n", x.len() as f64).expect("n");
        args.set_array("x", &x).expect("x");
        results.push(hess.hessian(&args).expect("evaluate"));
    }
    let bits = |h: &HessianMatrix| h.matrix.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&results[0]), bits(&results[1]));
}
