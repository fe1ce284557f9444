//! Strong-zero guards decided by one test per stretch
//! (`adjit::jit::opt::speculate`): adjoints whose sweeps the pass splits
//! give, bit for bit, the interpreter's results (signs of zero included)
//! where partials or adjoints are zero, signed zeros, infinite, NaN or so
//! small that their products underflow (NaNs compare as NaN, whatever
//! their sign), so that the cold copy with the
//! guards runs as well as the fast one.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Backend, Engine, Options, Selection};

/// The product of seed 000 and a Bratu-like stencil with an `exp` term:
/// reverse sweeps with several guarded products per iteration.
const SOURCE: &str = "\
subroutine product(n, x, y)
  integer n
  double precision x(n), y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine
subroutine bratu(n, x, p, y)
  integer n
  double precision x(n), p(2), y(n)
  integer i
  double precision h
  h = 2.0d0 / (n + 1)
  do i = 2, n - 1
    y(i) = x(i-1) - 2 * x(i) * x(i+1) + h * h * p(1) / 12.0d0 * exp(x(i) / (1 + p(2) * x(i)))
  end do
end subroutine
";

/// The engine of [`SOURCE`] on a backend.
fn engine(backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("speculate.f90".into(), SOURCE.into())], options)
        .expect("the source compiles")
}

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// The values the inputs and seeds cycle through: ordinary numbers, signed
/// zeros, infinities, NaN and numbers whose products underflow.
const SPECIALS: [f64; 9] = [
    1.5,
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NAN,
    -2.0,
    1e-200,
    -1e-170,
    f64::NEG_INFINITY,
];

/// Runs the vjp of `name` (outputs `of`, inputs `wrt`) on both backends for
/// arguments set by `setup` and seed `seed`; asserts equal bits.
fn vjp_agrees(
    name: &str,
    of: &str,
    wrt: &str,
    settings: &[String],
    arrays: &[(&str, Vec<f64>)],
    seed: &[f64],
) -> Vec<f64> {
    let run = |backend| {
        let engine = engine(backend);
        let adjoint = engine
            .adjoint(Some(name), &sel(of), &sel(wrt), &AdjointOptions::default())
            .expect("the adjoint compiles");
        let mut args = engine.procedure(Some(name)).unwrap().args();
        let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
        args.apply_settings(&settings).unwrap();
        for (array, values) in arrays {
            args.set_array(array, values).unwrap();
        }
        adjoint.vjp(&args, seed).expect("the sweep runs")
    };
    let (jv, jg) = run(Backend::Jit);
    let (iv, ig) = run(Backend::Interpreter);
    // Bits, every NaN as one (the two backends' NaNs may differ in sign
    // with or without the pass).
    let bits = |v: &[f64]| {
        v.iter()
            .map(|d| if d.is_nan() { f64::NAN } else { *d }.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bits(&jg),
        bits(&ig),
        "{name}: gradient, seed {seed:?}, {arrays:?}"
    );
    assert_eq!(format!("{jv:?}"), format!("{iv:?}"), "{name}: values");
    jg
}

#[test]
fn the_product_adjoint_agrees_bit_for_bit_at_special_values() {
    let n = 7;
    let mut cold = 0;
    for k in 0..SPECIALS.len() {
        for &seed in &SPECIALS {
            let x: Vec<f64> = (0..n)
                .map(|i| match i {
                    2 => SPECIALS[k],
                    5 => SPECIALS[(k + 4) % SPECIALS.len()],
                    i => 0.5 + 0.25 * i as f64,
                })
                .collect();
            let g = vjp_agrees(
                "product",
                "y",
                "x",
                &[format!("n={n}")],
                &[("x", x)],
                &[seed],
            );
            cold += g.iter().filter(|d| **d == 0.0 || d.is_nan()).count();
        }
    }
    assert!(cold > 0, "some gradients take the guarded path");
}

#[test]
fn the_bratu_adjoint_agrees_bit_for_bit_at_special_values() {
    let n = 8;
    let m = SPECIALS.len();
    for k in 0..m {
        for j in 0..m {
            let x: Vec<f64> = (0..n)
                .map(|i| match i {
                    3 => SPECIALS[k],
                    6 => SPECIALS[(k + j) % m],
                    i => 0.25 + 0.125 * i as f64,
                })
                .collect();
            let p = vec![SPECIALS[j], SPECIALS[(j + 3) % m]];
            let seed: Vec<f64> = (0..n).map(|i| SPECIALS[(i + j + k) % m]).collect();
            vjp_agrees(
                "bratu",
                "y",
                "x,p",
                &[format!("n={n}")],
                &[("x", x), ("p", p)],
                &seed,
            );
        }
    }
}

/// The pass finds the stretches: both reverse sweeps have iterations with
/// at least two guarded products and get a joint test.
#[test]
fn the_reverse_sweeps_get_joint_tests() {
    for (name, of, wrt) in [("product", "y", "x"), ("bratu", "y", "x,p")] {
        let engine = engine(Backend::Jit);
        let adjoint = engine
            .adjoint(Some(name), &sel(of), &sel(wrt), &AdjointOptions::default())
            .expect("the adjoint compiles");
        let (module, _) = adjoint.module();
        let (mut optimized, mut origins) = adjit::jit::opt::optimize_with(module, false);
        let stretches: usize = optimized
            .procs
            .iter_mut()
            .enumerate()
            .map(|(i, proc)| {
                adjit::jit::opt::speculate::speculate_guards(
                    proc,
                    adjit::ir::ProcId(i as u32),
                    &mut origins,
                )
            })
            .sum();
        assert!(stretches >= 1, "{name}: {stretches} stretches");
    }
}
