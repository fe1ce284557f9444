//! RECURSIVE procedures differentiated (tests/corpus/recursive_ad.f90):
//! tangent and adjoint (both recording policies), by the JIT and by the
//! interpreter, against analytic derivatives; the corpus tests add the
//! gfortran primal, the dot-product identity and finite differences.
//! Recursion deeper than the nesting limit is a located runtime error in
//! the primal and in both derivatives.

mod common;

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::engine::{Backend, Engine, Options, Selection};

/// Tangent/adjoint against analytic values: round-off of short recursions.
const TOLERANCE: f64 = 1e-12;

fn engine(backend: Backend) -> Engine {
    let path = common::corpus::corpus_dir().join("recursive_ad.f90");
    let options = Options {
        backend,
        ..Default::default()
    };
    Engine::from_files(&[&path], options).unwrap()
}

/// The tangent and both adjoints of `entry` at `settings`, each compared
/// with `expected` (row-major d of / d wrt), by both back ends.
fn check(entry: &str, settings: &[&str], of: &str, wrt: &str, expected: &[f64]) {
    let mut bad = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine(backend);
        let mut args = engine.procedure(Some(entry)).unwrap().args();
        args.apply_settings(settings).unwrap();
        let (of, wrt) = (
            Selection::parse_list(of).unwrap(),
            Selection::parse_list(wrt).unwrap(),
        );
        let tangent = engine.tangent(Some(entry), &of, &wrt, 1).unwrap();
        let what = format!("{entry} {backend:?} tangent");
        bad.extend(common::check::against(
            &what,
            &tangent.jacobian(&args).unwrap(),
            expected,
            TOLERANCE,
        ));
        for record in [RecordPolicy::Tbr, RecordPolicy::Conservative] {
            let options = AdjointOptions {
                record,
                ..Default::default()
            };
            let adjoint = engine.adjoint(Some(entry), &of, &wrt, &options).unwrap();
            let what = format!("{entry} {backend:?} adjoint {record:?}");
            bad.extend(common::check::against(
                &what,
                &adjoint.jacobian(&args).unwrap(),
                expected,
                TOLERANCE,
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_recursive_power_has_the_derivative_of_x_to_the_n() {
    let x: f64 = 1.5;
    check("power", &["x=1.5", "n=5"], "r", "x", &[5.0 * x.powi(4)]);
}

#[test]
fn a_binary_splitting_product_has_the_product_over_each_factor() {
    let a = [1.1, 0.9, 1.3, 0.7, 1.2, 0.8, 1.05];
    let p: f64 = a.iter().product();
    let expected: Vec<f64> = a.iter().map(|x| p / x).collect();
    check(
        "split_prod",
        &["a=1.1,0.9,1.3,0.7,1.2,0.8,1.05", "n=7"],
        "p",
        "a",
        &expected,
    );
}

/// `sum_range` of the corpus program with its gradient, by hand:
/// s = a(lo)^2 on one element, else s(lo..mid) + sin(s(mid+1..hi)).
fn sum_range(a: &[f64], lo: usize, hi: usize, grad: &mut [f64], weight: f64) -> f64 {
    if lo == hi {
        grad[lo] += weight * 2.0 * a[lo];
        return a[lo] * a[lo];
    }
    let mid = (lo + hi) / 2;
    let left = sum_range(a, lo, mid, grad, weight);
    // d sin(right) = cos(right) d right: the right half's weight needs its
    // value first.
    let right = sum_range(a, mid + 1, hi, &mut vec![0.0; a.len()], 0.0);
    sum_range(a, mid + 1, hi, grad, weight * right.cos());
    left + right.sin()
}

#[test]
fn a_binary_splitting_sum_has_the_chain_rule_through_every_level() {
    let a = [0.5, -1.25, 2.0, 0.75, -0.5, 1.5];
    let mut grad = vec![0.0; a.len()];
    sum_range(&a, 0, a.len() - 1, &mut grad, 1.0);
    check(
        "split_sum",
        &["a=0.5,-1.25,2,0.75,-0.5,1.5", "n=6"],
        "s",
        "a",
        &grad,
    );
}

#[test]
fn mutual_recursion_sums_the_cosh_series_and_differentiates_to_sinh() {
    // even_terms / odd_terms add x^k / k! for even k <= 9; the derivative
    // is the sinh series x + x^3/3! + x^5/5! + x^7/7!.
    let x: f64 = 0.7;
    let fact = |k: i32| (1..=k).product::<i32>() as f64;
    let sinh: f64 = [1, 3, 5, 7].iter().map(|&k| x.powi(k) / fact(k)).sum();
    check("cosh_series", &["x=0.7", "n=9"], "s", "x", &[sinh]);
}

#[test]
fn a_branch_on_the_depth_alternates_the_chain_rule() {
    // depth_fn(x, 0) = x; even d: exp(y/2); odd d: y^2 - 1.
    let (mut y, mut dy) = (0.8f64, 1.0f64);
    for d in 1..=6 {
        if d % 2 == 0 {
            let e = (0.5 * y).exp();
            dy *= 0.5 * e;
            y = e;
        } else {
            dy *= 2.0 * y;
            y = y * y - 1.0;
        }
    }
    check("depth_branch", &["x=0.8", "n=6"], "y", "x", &[dy]);
}

#[test]
fn recursion_near_the_nesting_limit_differentiates_and_past_it_is_a_located_error() {
    let x: f64 = 1.0001;
    let n = 990;
    check(
        "power",
        &["x=1.0001", "n=990"],
        "r",
        "x",
        &[n as f64 * x.powi(n - 1)],
    );
    let engine = engine(Backend::Jit);
    let entry = Some("power");
    let mut args = engine.procedure(entry).unwrap().args();
    args.apply_settings(&["x=1.0001", "n=10000"]).unwrap();
    let (of, wrt) = (
        Selection::parse_list("r").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let located = |e: adjit::engine::Error| {
        let text = e.to_string();
        assert!(
            text.contains("recursive_ad.f90:45:5") && text.contains("nested too deeply"),
            "{text}"
        );
    };
    located(
        engine
            .procedure(entry)
            .unwrap()
            .call(&mut args.clone())
            .unwrap_err(),
    );
    let tangent = engine.tangent(entry, &of, &wrt, 1).unwrap();
    located(tangent.jacobian(&args).unwrap_err());
    let adjoint = engine
        .adjoint(entry, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    located(adjoint.jacobian(&args).unwrap_err());
}
