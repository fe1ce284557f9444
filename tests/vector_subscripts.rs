//! Vector subscripts (`u(conn(:, e))`, `a(1:n, [2, 1])`, `v(perm) = x`):
//! derivatives three ways (tangent against adjoint, the dot-product
//! identity, finite differences) and against analytic values (a gather's
//! adjoint is a scatter-add, so repeated indices accumulate), and
//! out-of-range vector subscript values as located runtime errors on both
//! executors. The corpus programs `fe_gather_scatter.f90` and
//! `vector_subscripts.f90` (used here) hold the primal results to
//! gfortran's.

mod common;

use adjit::engine::{Args, Engine, ErrorKind};

const U: [f64; 6] = [0.1, 0.3, -0.2, 0.5, 0.7, -0.4];
const K: f64 = 1.5;

fn fe_engine() -> (Engine, Args) {
    common::engine_with_args(
        "fe_gather_scatter.f90",
        include_str!("corpus/fe_gather_scatter.f90"),
        "assemble",
        &[("u", &U), ("k", &[K])],
    )
}

/// The element energies read the nodal values through `u(conn(:, e))`
/// (a local gather and a copied-in actual): the gradient of the assembled
/// energy is the residual the program scatters with its DO loop, each
/// node summing over the elements that share it.
#[test]
fn gradient_of_gathered_energy_is_the_scattered_residual() {
    let (engine, args) = fe_engine();
    let p = engine.procedure(Some("assemble")).unwrap();
    let mut run = args.clone();
    p.call(&mut run).unwrap();
    let r = run.f64s("r").unwrap();
    let bad = common::check::both_modes_against(
        &engine,
        Some("assemble"),
        &args,
        "energy",
        "u",
        &r,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `sum(u([1, 1, 2]))` counts node 1 twice; `sum(u([6, 4, 2])**2)`
/// (the implied-DO index) is 2 u_i at those nodes; `v(perm) = u * k`
/// with the reversal permutation is k times the reversal.
#[test]
fn repeated_and_permuted_indices_accumulate() {
    let (engine, args) = fe_engine();
    let check = |of: &str, expected: &[f64]| {
        let bad = common::check::both_modes_against(
            &engine,
            Some("assemble"),
            &args,
            of,
            "u",
            expected,
            1e-13,
        );
        assert!(bad.is_empty(), "{of}:\n{}", bad.join("\n"));
    };
    check("g(1)", &[2.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    check("g(4)", &[0.0, 2.0 * U[1], 0.0, 2.0 * U[3], 0.0, 2.0 * U[5]]);
    let mut dv = vec![0.0; 36];
    for i in 0..6 {
        dv[i * 6 + (5 - i)] = K;
    }
    check("v", &dv);
    // dot_product(u(1:3), u([2, 4, 3])) = u1 u2 + u2 u4 + u3^2.
    check("g(2)", &[U[1], U[0] + U[3], 2.0 * U[2], U[1], 0.0, 0.0]);
}

/// Every output of both programs three ways.
#[test]
fn gathers_and_scatters_agree_three_ways() {
    let (engine, args) = fe_engine();
    let (_, bad) = common::check::three_ways(
        &engine,
        Some("assemble"),
        &args,
        "energy,r,g,v",
        "u,k",
        1e-7,
    );
    assert!(bad.is_empty(), "assemble:\n{}", bad.join("\n"));
    for x in [[0.5, -1.0, 2.0, 0.25], [1.5, 2.0, -0.75, 3.0]] {
        let (engine, args) = common::engine_with_args(
            "vector_subscripts.f90",
            include_str!("corpus/vector_subscripts.f90"),
            "mix",
            &[("x", &x), ("n", &[4.0])],
        );
        let (_, bad) = common::check::three_ways(&engine, Some("mix"), &args, "a,y,t", "x", 1e-7);
        assert!(bad.is_empty(), "mix at {x:?}:\n{}", bad.join("\n"));
    }
}

/// A vector subscript value outside the array's bounds, in a gather, a
/// scatter and a copied-in actual argument, is a runtime error naming the
/// array and the line, on both executors; in range the program runs.
#[test]
fn out_of_range_vector_subscripts_are_located() {
    let source = "module m
contains
  double precision function total(w)
    double precision, intent(in) :: w(:)
    total = sum(w)
  end function total
end module m
subroutine f(n, k, s)
  use m
  integer, intent(in) :: n, k
  double precision, intent(out) :: s
  double precision :: x(3), y(3)
  integer :: idx(2)
  x = [1d0, 2d0, 4d0]
  y = 0
  idx = [1, n]
  if (k == 1) s = sum(x(idx))
  if (k == 2) y(idx) = [5d0, 6d0]
  if (k == 2) s = sum(y)
  if (k == 3) s = total(x(idx))
end subroutine f
";
    common::each_backend_calls(source, |backend, call| {
        for (k, line, array) in [(1.0, 17, "x"), (2.0, 18, "y"), (3.0, 20, "x")] {
            for n in [0.0, 4.0] {
                let err = call(n, k).expect_err("runtime error");
                assert_eq!(err.kind, ErrorKind::Runtime, "{err}");
                let at = format!("e.f90:{line}:");
                let what = format!("array index out of bounds on `{array}`");
                assert!(
                    err.message.contains(&at) && err.message.contains(&what),
                    "{backend:?} n={n} k={k}: {err}"
                );
            }
            let expected = [5.0, 11.0, 5.0][k as usize - 1];
            assert_eq!(call(3.0, k).unwrap(), expected, "{backend:?} k={k}");
        }
    });
}
