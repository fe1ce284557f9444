//! ELEMENTAL subroutines called with arrays and `dim=` arguments that are
//! not constants, against analytic derivatives, tangent and adjoint both.
//! The corpus programs `elemental_subroutine.f90` and `dim_runtime.f90`
//! (used here) hold them to gfortran's primal results and to the
//! dot-product and finite-difference checks of `tests/derivatives.rs`.

mod common;

use adjit::engine::{Args, Engine};

fn corpus_engine(name: &str, source: &str) -> Engine {
    Engine::from_source(name, source).unwrap()
}

fn compare(engine: &Engine, args: &Args, of: &str, wrt: &str, expected: &[f64]) {
    let bad =
        common::check::both_modes_against(engine, Some("drive"), args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{of} wrt {wrt}:\n{}", bad.join("\n"));
}

const R: [f64; 3] = [1.0, 2.0, 0.5];
const T: [f64; 3] = [0.3, -1.2, 2.5];
const M: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

fn elemental() -> (Engine, Args) {
    let engine = corpus_engine(
        "elemental_subroutine.f90",
        include_str!("corpus/elemental_subroutine.f90"),
    );
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    args.set_scalar("n", 3.0).unwrap();
    args.set_array("r", &R).unwrap();
    args.set_array("t", &T).unwrap();
    args.set_array("m", &M).unwrap();
    (engine, args)
}

/// x = r cos t element by element (`call polar(r, t, x, y)`), then
/// x(2:3) = x(2:3)**2 + 1/2 (`call bump(x(2:n), 0.5d0)`): dx_i/dr_i =
/// cos t_1, 2 x_i cos t_i.
#[test]
fn an_elemental_subroutine_writes_each_element_of_its_array_actuals() {
    let (engine, args) = elemental();
    let mut dx = vec![0.0; 9];
    for i in 0..3 {
        let x = R[i] * T[i].cos();
        dx[i * 3 + i] = if i == 0 {
            T[0].cos()
        } else {
            2.0 * x * T[i].cos()
        };
    }
    compare(&engine, &args, "x", "r", &dx);
}

/// y(1) = (r1 sin t1)^2 + x2 and y(3) = (r3 sin t3)^2 + x1 (`call
/// bump(y(n:1:-2), x(1:2))`, a strided section written back), y(2) =
/// r2 sin t2: the derivatives with respect to t.
#[test]
fn a_strided_section_and_an_expression_actual_differentiate() {
    let (engine, args) = elemental();
    let (r, t) = (R, T);
    let expected = [
        2.0 * r[0] * r[0] * t[0].sin() * t[0].cos(),
        -2.0 * r[1] * r[1] * t[1].cos() * t[1].sin(),
        0.0,
        0.0,
        r[1] * t[1].cos(),
        0.0,
        -r[0] * t[0].sin(),
        0.0,
        2.0 * r[2] * r[2] * t[2].sin() * t[2].cos(),
    ];
    compare(&engine, &args, "y", "t", &expected);
    // m = m^2 + r1/10 everywhere, then column 2 once more m^2 + r + t.
    let mut dm = vec![0.0; 36];
    for k in 0..6 {
        let once = M[k] * M[k] + 0.1 * R[0];
        dm[k * 6 + k] = if k / 2 == 1 {
            2.0 * once * 2.0 * M[k]
        } else {
            2.0 * M[k]
        };
    }
    compare(&engine, &args, "m", "m", &dm);
}

fn dims(k: f64) -> (Engine, Args) {
    let engine = corpus_engine("dim_runtime.f90", include_str!("corpus/dim_runtime.f90"));
    let mut args = engine.procedure(Some("drive")).unwrap().args();
    args.set_scalar("k", k).unwrap();
    args.set_array("m", &M).unwrap();
    args.set_array("v", &[0.5, -1.0, 2.0]).unwrap();
    (engine, args)
}

/// `r = sum(m, dim=k)` with k = 1: r_j = m_1j + m_2j; with k = 2,
/// `r(1:2) = product(m, k)`: r_i = m_i1 m_i2 m_i3; s(4) = 3 sum m^2
/// whatever k (a `dim=` from a DO variable).
#[test]
fn a_dim_that_is_not_a_constant_differentiates() {
    let (engine, args) = dims(1.0);
    let mut dr = vec![0.0; 18];
    for j in 0..3 {
        dr[j * 6 + 2 * j] = 1.0;
        dr[j * 6 + 2 * j + 1] = 1.0;
    }
    compare(&engine, &args, "r", "m", &dr);
    let ds4: Vec<f64> = M.iter().map(|x| 6.0 * x).collect();
    compare(&engine, &args, "s(4)", "m", &ds4);
    let (engine, args) = dims(2.0);
    let mut dr = vec![0.0; 18];
    for i in 0..2 {
        for j in 0..3 {
            let others: f64 = (0..3).filter(|&l| l != j).map(|l| M[i + 2 * l]).product();
            dr[i * 6 + i + 2 * j] = others;
        }
    }
    compare(&engine, &args, "r", "m", &dr);
}

/// A `dim=` outside the array's dimensions is a runtime error at the
/// statement, not a wrong result.
#[test]
fn a_dim_outside_the_rank_is_a_runtime_error() {
    let (engine, mut args) = dims(3.0);
    let e = engine
        .procedure(Some("drive"))
        .unwrap()
        .call(&mut args)
        .unwrap_err();
    assert!(e.message.contains("out of bounds"), "{}", e.message);
    assert!(e.message.contains("dim_runtime.f90:18:"), "{}", e.message);
}
