//! Derivatives of corpus programs written as public numerical libraries
//! write Fortran (LINPACK, MINPACK-2, netlib's ZEROIN, Numerical Recipes'
//! JACOBI, Gauss-Legendre quadrature) against analytic or published
//! values: the adjoint and tangent Jacobians are compared with what the
//! mathematics of each problem says they are, computed from the
//! program's own outputs (`tests/derivatives.rs` checks every corpus
//! case by finite differences and the dot-product identity already).

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Args, Engine, Jacobian, Selection};
use common::corpus::{case_engine, case_settings, corpus_dir};

/// Tolerance of an analytic comparison, relative to max(1, |value|).
const TOLERANCE: f64 = 1e-10;

/// A corpus program compiled for one case: the engine, the arguments
/// set as the case sets them and run once (outputs filled in), and the
/// entry's name.
fn run_case(file: &str, case: &str) -> (Engine, Args, String) {
    let (entry, sets) = case_settings(case);
    let path = corpus_dir().join(file);
    let (engine, sets) = case_engine(&path, entry.as_deref(), &sets, Default::default())
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let primal = engine.procedure(entry.as_deref()).unwrap();
    let mut args = primal.args();
    args.apply_settings(&sets).unwrap();
    let mut ran = args.clone();
    primal.call(&mut ran).unwrap();
    (engine, ran, primal.name().to_string())
}

/// The adjoint and tangent Jacobians of `of` with respect to `wrt` at the
/// arguments `args` (inputs as set before the run), checked equal.
fn jacobians(engine: &Engine, entry: &str, args: &Args, of: &str, wrt: &str) -> Jacobian {
    let of = Selection::parse_list(of).unwrap();
    let wrt = Selection::parse_list(wrt).unwrap();
    let adjoint = engine
        .adjoint(Some(entry), &of, &wrt, &AdjointOptions::default())
        .unwrap()
        .jacobian(args)
        .unwrap();
    let tangent = engine
        .tangent(Some(entry), &of, &wrt, 4)
        .unwrap()
        .jacobian(args)
        .unwrap();
    for r in 0..adjoint.rows() {
        for c in 0..adjoint.cols() {
            close(adjoint.get(r, c), tangent.get(r, c), "tangent vs adjoint");
        }
    }
    adjoint
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= TOLERANCE * want.abs().max(1.0),
        "{what}: {got:e}, expected {want:e}"
    );
}

/// The f64 values of an argument.
fn values(args: &Args, name: &str) -> Vec<f64> {
    let b = args.get(name).unwrap();
    (0..b.len()).map(|k| b.get_f64(k)).collect()
}

/// The inputs of a case: the arguments as set, before the run.
fn inputs(file: &str, case: &str) -> Args {
    let (entry, sets) = case_settings(case);
    let path = corpus_dir().join(file);
    let (engine, sets) = case_engine(&path, entry.as_deref(), &sets, Default::default()).unwrap();
    let mut args = engine.procedure(entry.as_deref()).unwrap().args();
    args.apply_settings(&sets).unwrap();
    args
}

/// LINPACK's DGEFA / DGESL: x = A^{-1} b (or A^{-T} b), so dx/db is the
/// inverse (its transpose): (dx/db) A = I, and dx/dA_kl = -(A^{-1})_ik x_l.
#[test]
fn linpack_solve_derivatives_are_the_inverse() {
    for (case, transposed) in [
        (
            "--entry solve --set n=3 --set a=4,1,2,1,5,1,2,1,6 --set b=1,2,3 --set job=0",
            false,
        ),
        (
            "--entry solve --set n=3 --set a=1,4,2,3,1,5,2,2,1 --set b=1,-2,0.5 --set job=1",
            true,
        ),
    ] {
        let (engine, ran, entry) = run_case("linpack_dgefa.f", case);
        let args = inputs("linpack_dgefa.f", case);
        let a = values(&args, "a");
        let x = values(&ran, "x");
        // op(A)(i, j): A column-major, transposed for job = 1.
        let op = |i: usize, j: usize| {
            if transposed {
                a[j + 3 * i]
            } else {
                a[i + 3 * j]
            }
        };
        let jb = jacobians(&engine, &entry, &args, "x", "b");
        for i in 0..3 {
            for j in 0..3 {
                let id: f64 = (0..3).map(|k| jb.get(i, k) * op(k, j)).sum();
                close(id, f64::from(u8::from(i == j)), "(dx/db) op(A)");
            }
        }
        let ja = jacobians(&engine, &entry, &args, "x", "a");
        for i in 0..3 {
            for k in 0..3 {
                for (l, xl) in x.iter().enumerate() {
                    // d x / d op(A)(k, l) = -inv(op(A))(i, k) x(l).
                    let col = if transposed { l + 3 * k } else { k + 3 * l };
                    close(ja.get(i, col), -jb.get(i, k) * xl, "dx/dA");
                }
            }
        }
    }
}

/// Kepler's equation E - e sin E = M solved by ZEROIN: the implicit
/// derivatives dE/dM = 1/(1 - e cos E), dE/de = sin E/(1 - e cos E).
#[test]
fn zeroin_root_has_the_implicit_derivative() {
    for case in [
        "--entry kepler --set ecc=0.3 --set am=1.2",
        "--entry kepler --set ecc=0.75 --set am=2.5",
    ] {
        let (engine, ran, entry) = run_case("zeroin_kepler.f", case);
        let args = inputs("zeroin_kepler.f", case);
        let (e, ea) = (values(&args, "ecc")[0], values(&ran, "ea")[0]);
        let j = jacobians(&engine, &entry, &args, "ea", "am,ecc");
        let den = 1.0 - e * ea.cos();
        close(j.get(0, 0), 1.0 / den, "dE/dM");
        close(j.get(0, 1), ea.sin() / den, "dE/de");
    }
}

/// MINPACK-2's torsion problem computes its own gradient by hand: the
/// derivative of f with respect to x is the program's fgrad.
#[test]
fn torsion_gradient_matches_the_hand_coded_one() {
    let case = "--entry dtorfg --set nx=4 --set ny=3 \
        --set x=0.1,0.2,0.3,0.1,0.05,0.2,0.4,0.3,0.2,0.1,0.15,0.25 --set task=FG --set c=5";
    let (engine, ran, entry) = run_case("minpack2_torsion.f", case);
    let args = inputs("minpack2_torsion.f", case);
    let fgrad = values(&ran, "fgrad");
    let j = jacobians(&engine, &entry, &args, "f", "x");
    for (k, g) in fgrad.iter().enumerate() {
        close(j.get(0, k), *g, "df/dx");
    }
}

/// Jacobi's rotations read the upper triangle and the diagonal: for a
/// simple eigenvalue, d(lambda_k)/dA_ii = v_ik^2, d(lambda_k)/dA_ij =
/// 2 v_ik v_jk above the diagonal and 0 below (Magnus 1985).
#[test]
fn jacobi_eigenvalue_derivatives_are_published_ones() {
    for (case, n) in [
        (
            "--entry eigsym --set n=3 --set a=4,1,0.5,1,3,-0.25,0.5,-0.25,1",
            3,
        ),
        (
            "--entry eigsym --set n=4 --set a=2,-1,0,0.3,-1,2,-1,0,0,-1,2,-1,0.3,0,-1,2",
            4,
        ),
    ] {
        let (engine, ran, entry) = run_case("jacobi_eigen.f", case);
        let args = inputs("jacobi_eigen.f", case);
        let v = values(&ran, "v");
        let j = jacobians(&engine, &entry, &args, "d", "a");
        for k in 0..n {
            for col in 0..n {
                for row in 0..n {
                    let (vi, vj) = (v[row + n * k], v[col + n * k]);
                    let want = match row.cmp(&col) {
                        std::cmp::Ordering::Equal => vi * vi,
                        std::cmp::Ordering::Less => 2.0 * vi * vj,
                        std::cmp::Ordering::Greater => 0.0,
                    };
                    close(j.get(k, row + n * col), want, "d(lambda)/dA");
                }
            }
        }
    }
}

/// Gauss-Legendre quadrature of exp(-a x) cos(b x): the integral in
/// closed form and its derivatives with respect to the ends (the
/// integrand there) and to a and b (the closed form's).
#[test]
fn gauss_legendre_integral_and_derivatives_are_exact() {
    let case = "--entry damped --set a=0.5 --set b=3 --set lo=0 --set hi=2 --set npts=12";
    let (engine, ran, entry) = run_case("gauss_legendre.f90", case);
    let args = inputs("gauss_legendre.f90", case);
    let (a, b, lo, hi) = (0.5f64, 3.0f64, 0.0f64, 2.0f64);
    // F(x) = exp(-a x) (b sin(b x) - a cos(b x)) / (a^2 + b^2).
    let prim = |a: f64, b: f64, x: f64| {
        (-a * x).exp() * (b * (b * x).sin() - a * (b * x).cos()) / (a * a + b * b)
    };
    let exact = |a: f64, b: f64| prim(a, b, hi) - prim(a, b, lo);
    close(values(&ran, "integral")[0], exact(a, b), "integral");
    let g = |x: f64| (-a * x).exp() * (b * x).cos();
    let j = jacobians(&engine, &entry, &args, "integral", "lo,hi,a,b");
    close(j.get(0, 0), -g(lo), "dI/dlo");
    close(j.get(0, 1), g(hi), "dI/dhi");
    // d/da and d/db: the closed form differentiated by a fourth-order
    // central difference (truncation ~h^4 = 1e-12, far below the bound).
    let h = 1e-3;
    let d4 = |f: &dyn Fn(f64) -> f64, x: f64| {
        (f(x - 2.0 * h) - 8.0 * f(x - h) + 8.0 * f(x + h) - f(x + 2.0 * h)) / (12.0 * h)
    };
    let tol = 1e-9;
    let da = d4(&|t| exact(t, b), a);
    let db = d4(&|t| exact(a, t), b);
    assert!(
        (j.get(0, 2) - da).abs() < tol,
        "dI/da {} vs {da}",
        j.get(0, 2)
    );
    assert!(
        (j.get(0, 3) - db).abs() < tol,
        "dI/db {} vs {db}",
        j.get(0, 3)
    );
}
