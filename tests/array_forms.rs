//! Array constructors with implied DO loops as actual arguments, array
//! PARAMETERs of implied shape and nested WHERE, against analytic
//! derivatives, tangent and adjoint both. The corpus programs
//! `constructor_actual.f90`, `implied_shape_parameter.f90` and
//! `where_nested.f90` (used here) hold them to gfortran's primal results
//! and to the dot-product and finite-difference checks of
//! `tests/derivatives.rs`.

mod common;

use adjit::engine::{Args, Engine};

fn setup(name: &str, source: &str, sets: &[(&str, &[f64])]) -> (Engine, Args) {
    let engine = Engine::from_source(name, source).unwrap();
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    for (n, v) in sets {
        if v.len() == 1 && args.rank(n).unwrap() == 0 {
            args.set_scalar(n, v[0]).unwrap();
        } else {
            args.set_array(n, v).unwrap();
        }
    }
    (engine, args)
}

fn compare(engine: &Engine, args: &Args, of: &str, wrt: &str, expected: &[f64]) {
    let bad =
        common::check::both_modes_against(engine, Some("drive"), args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{of} wrt {wrt}:\n{}", bad.join("\n"));
}

/// s1 = sum_i i (i x_i)^2 + n, s3 = x1^4 + x1^2 x2^2 + x2^4 + 3 (a
/// nested implied DO), s4 = sum 4 x_i^2 + n (a negative step).
#[test]
fn constructors_with_implied_do_as_actuals_differentiate() {
    let x = [1.0, -2.0, 0.5, 1.5];
    let (engine, args) = setup(
        "constructor_actual.f90",
        include_str!("corpus/constructor_actual.f90"),
        &[("n", &[4.0]), ("x", &x)],
    );
    let ds1: Vec<f64> = (0..4)
        .map(|i| 2.0 * ((i + 1) as f64).powi(3) * x[i])
        .collect();
    compare(&engine, &args, "s(1)", "x", &ds1);
    let (x1, x2) = (x[0], x[1]);
    let ds3 = [
        4.0 * x1.powi(3) + 2.0 * x1 * x2 * x2,
        2.0 * x1 * x1 * x2 + 4.0 * x2.powi(3),
        0.0,
        0.0,
    ];
    compare(&engine, &args, "s(3)", "x", &ds3);
    let ds4: Vec<f64> = x.iter().map(|v| 8.0 * v).collect();
    compare(&engine, &args, "s(4)", "x", &ds4);
}

/// y = c x^2 + w with c(*) = (1.5, -2, 0.25, 3), w(0:*) = 1/(k + 1):
/// dy_i/dx_i = 2 c_i x_i; s1 = c.x + w.x.
#[test]
fn implied_shape_parameters_have_their_constructor_values() {
    let x = [0.5, -1.5, 2.25, -0.75];
    let c = [1.5, -2.0, 0.25, 3.0];
    let w = [1.0, 0.5, 1.0 / 3.0, 0.25];
    let (engine, args) = setup(
        "implied_shape_parameter.f90",
        include_str!("corpus/implied_shape_parameter.f90"),
        &[("x", &x)],
    );
    let mut dy = vec![0.0; 16];
    for i in 0..4 {
        dy[i * 4 + i] = 2.0 * c[i] * x[i];
    }
    compare(&engine, &args, "y", "x", &dy);
    let ds1: Vec<f64> = (0..4).map(|i| c[i] + w[i]).collect();
    compare(&engine, &args, "s(1)", "x", &ds1);
}

/// w under nested masks: sqrt(x) + y (x > 0, y > 0), -x (x > 0, y < -2),
/// x^2 y (x > 0 otherwise), y^2 + x (x <= 0, y > 0).
#[test]
fn nested_where_differentiates_under_the_combined_masks() {
    let x = [1.0, -2.0, 3.0, -0.5, 0.25, 4.0];
    let y = [0.5, 1.0, -3.0, 2.0, -1.0, 0.75];
    let (engine, args) = setup(
        "where_nested.f90",
        include_str!("corpus/where_nested.f90"),
        &[("x", &x), ("y", &y)],
    );
    let dwdx = [0.5, 1.0, -1.0, 1.0, 2.0 * x[4] * y[4], 0.25];
    let dwdy = [1.0, 2.0, 0.0, 4.0, x[4] * x[4], 1.0];
    let diag = |d: &[f64]| {
        let mut m = vec![0.0; 36];
        for i in 0..6 {
            m[i * 6 + i] = d[i];
        }
        m
    };
    compare(&engine, &args, "w", "x", &diag(&dwdx));
    compare(&engine, &args, "w", "y", &diag(&dwdy));
}

/// `a = cshift(m, k, 1)*m` with an array shift k = (1, -1, 2): columns 1
/// and 2 swap their rows, column 3 stays: a(1, j) = m(2, j) m(1, j) for
/// j <= 2 (and a(2, j) likewise), a(i, 3) = m(i, 3)^2.
#[test]
fn an_array_shift_of_cshift_differentiates() {
    let m = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (engine, mut args) = setup(
        "cshift_array_shift.f90",
        include_str!("corpus/cshift_array_shift.f90"),
        &[("m", &m)],
    );
    args.set_array("k", &[1.0, -1.0, 2.0]).unwrap();
    let mut da = vec![0.0; 36];
    for j in 0..2 {
        let (p, q) = (2 * j, 2 * j + 1);
        for row in [p, q] {
            da[row * 6 + p] = m[q];
            da[row * 6 + q] = m[p];
        }
    }
    da[4 * 6 + 4] = 2.0 * m[4];
    da[5 * 6 + 5] = 2.0 * m[5];
    compare(&engine, &args, "a", "m", &da);
}

/// Newton's method whose DO WHILE conditions reference array-valued
/// functions (`maxval(abs(resid(x, p)))`, `any(abs(newton_step(x, p)) >
/// tol)`), `array_fn_while.f90`: the solution `x = (2, 1) sqrt(p / 5)`
/// has `dx/dp = (1, 1/2) / sqrt(5 p)`; tangent and adjoint agree with it
/// and with central differences.
#[test]
fn array_functions_in_do_while_conditions_differentiate() {
    let engine = Engine::from_source(
        "array_fn_while.f90",
        include_str!("corpus/array_fn_while.f90"),
    )
    .unwrap();
    for p in [2.0, 8.5, 0.3] {
        let mut args = engine.procedure(Some("solve")).unwrap().args();
        args.set_scalar("p", p).unwrap();
        engine
            .procedure(Some("solve"))
            .unwrap()
            .call(&mut args)
            .unwrap();
        let x = args.f64s("x").unwrap();
        let root = (p / 5.0f64).sqrt();
        assert!(
            (x[0] - 2.0 * root).abs() < 1e-14 && (x[1] - root).abs() < 1e-14,
            "{x:?}"
        );
        assert!(args.scalar("iters").unwrap() > 2.0);
        let slope = 1.0 / (5.0 * p).sqrt();
        let expected = [slope, 0.5 * slope];
        let bad = common::check::both_modes_against(
            &engine,
            Some("solve"),
            &args,
            "x",
            "p",
            &expected,
            1e-12,
        );
        assert!(bad.is_empty(), "p {p}:\n{}", bad.join("\n"));
        let h = 1e-6;
        let at = |q: f64| {
            let mut a = engine.procedure(Some("solve")).unwrap().args();
            a.set_scalar("p", q).unwrap();
            engine
                .procedure(Some("solve"))
                .unwrap()
                .call(&mut a)
                .unwrap();
            a.f64s("x").unwrap()
        };
        let (up, down) = (at(p + h), at(p - h));
        for (k, &e) in expected.iter().enumerate() {
            let fd = (up[k] - down[k]) / (2.0 * h);
            assert!(
                (fd - e).abs() < 1e-7 * e.abs().max(1.0),
                "p {p}: {fd} vs {e}"
            );
        }
    }
}
