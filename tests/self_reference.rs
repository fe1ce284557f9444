//! Statements that read the old value of their left side (`y = y*x(i)`,
//! `y = sin(y)*x(i)`, `z(i) = 2*z(i)`): the reverse sweep stores the old
//! value's adjoint into the left side's adjoint instead of resetting it and
//! adding (`src/ad/adjoint/increment.rs`). Checked three ways (tangent
//! against adjoint, the dot-product identity, finite differences) and
//! against analytic values, including the cases that must keep the reset:
//! two reads of the old value, another view of the same storage
//! (EQUIVALENCE), an element store whose zero seed skips its reversal, and
//! an old value that reaches the result through no derivative at all.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Adjoint, Args, Engine, Selection};
use adjit::ir::{BinaryOp, Inst, Type};
use common::check::three_ways;
use common::engine_with_args;

const SOURCE: &str = "\
subroutine prod(n, x, y)
  integer n, i
  double precision x(n), y
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine

subroutine chain(n, x, y)
  integer n, i
  double precision x(n), y
  y = x(1)
  do i = 2, n
    y = sin(y)*x(i)
    y = -y + x(i)
    y = y*y*x(i)
  end do
end subroutine

subroutine alias(n, x, y)
  integer n, i
  double precision x(n), y, a, b
  equivalence (a, b)
  a = x(1)
  do i = 2, n
    a = a*b*x(i)
  end do
  y = a
end subroutine

subroutine elems(n, x, z)
  integer n, i
  double precision x(n), z(n)
  do i = 1, n
    z(i) = x(i)
    z(i) = 2*z(i)
    z(i) = z(i)*x(i)
  end do
end subroutine

subroutine flat(n, x, y)
  integer n, i
  double precision x(n), y
  y = x(1)
  do i = 2, n
    y = merge(x(i), 3*x(i), y > 1)
  end do
end subroutine
";

const X: [f64; 4] = [1.1, 0.7, -1.3, 0.9];

fn engine_at(entry: &str) -> (Engine, adjit::engine::Args) {
    engine_with_args(
        "self_reference.f90",
        SOURCE,
        entry,
        &[("n", &[4.0]), ("x", &X)],
    )
}

/// The adjoint of `entry`'s `y` with respect to `x`.
fn adjoint_of(engine: &Engine, entry: &str) -> Adjoint {
    let sel = |s: &str| Selection::parse_list(s).expect("selection");
    engine
        .adjoint(
            Some(entry),
            &sel("y"),
            &sel("x"),
            &AdjointOptions::default(),
        )
        .expect("the adjoint compiles")
}

/// The Jacobian of `entry`'s `y` with respect to `x` at `args`, by adjoint.
fn adjoint_jacobian(engine: &Engine, entry: &str, args: &Args) -> Vec<f64> {
    adjoint_of(engine, entry).jacobian(args).unwrap().matrix
}

/// The number of floating-point additions in the reverse sweep of `entry`'s
/// adjoint of `y` with respect to `x`.
fn reverse_float_adds(entry: &str) -> usize {
    let (engine, _) = engine_at(entry);
    let adjoint = adjoint_of(&engine, entry);
    let (module, procs) = adjoint.module();
    let proc = module.proc(procs.reverse);
    proc.blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|&&v| {
            let data = proc.inst(v);
            matches!(data.kind, Inst::Binary(BinaryOp::Add, ..)) && data.ty == Some(Type::F64)
        })
        .count()
}

#[test]
fn the_product_loop_stores_the_running_adjoint_without_an_addition() {
    // One addition per trip: x_b(i) += y_b*y. The running adjoint
    // y_b = y_b*x(i) is stored, not added to a reset y_b.
    assert_eq!(reverse_float_adds("prod"), 1);
    let (engine, args) = engine_at("prod");
    let (jac, problems) = three_ways(&engine, Some("prod"), &args, "y", "x", 1e-7);
    assert!(problems.is_empty(), "{problems:#?}");
    let y: f64 = X.iter().product();
    for (k, (&g, &x)) in jac.matrix.iter().zip(&X).enumerate() {
        let exact = X
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, &v)| v)
            .product::<f64>();
        assert!(
            (g - exact).abs() <= 1e-15 * exact.abs(),
            "{k}: {g} vs {exact}"
        );
        assert!((g * x - y).abs() <= 1e-14, "{k}");
    }
}

#[test]
fn a_zero_in_the_product_gives_the_one_nonzero_partial() {
    let (engine, mut args) = engine_at("prod");
    args.set_array("x", &[2.0, 0.0, 3.0, -0.5]).unwrap();
    let jac = adjoint_jacobian(&engine, "prod", &args);
    assert_eq!(jac, vec![0.0, -3.0, 0.0, 0.0]);
}

#[test]
fn self_references_of_every_shape_agree_three_ways() {
    for entry in ["chain", "alias", "flat"] {
        let (engine, args) = engine_at(entry);
        let (_, problems) = three_ways(&engine, Some(entry), &args, "y", "x", 1e-6);
        assert!(problems.is_empty(), "{entry}: {problems:#?}");
    }
    let (engine, args) = engine_at("elems");
    let (jac, problems) = three_ways(&engine, Some("elems"), &args, "z", "x", 1e-7);
    assert!(problems.is_empty(), "elems: {problems:#?}");
    // z(i) = 2 x(i)^2: a diagonal Jacobian 4 x(i).
    for (r, row) in jac.matrix.chunks(X.len()).enumerate() {
        for (c, &d) in row.iter().enumerate() {
            let exact = if r == c { 4.0 * X[c] } else { 0.0 };
            assert_eq!(d, exact, "z({r}) / x({c})");
        }
    }
}

#[test]
fn equivalenced_views_keep_the_reset() {
    // a = a*b with b equivalenced to a squares a: y = x1^(2^3) x2^4 x3^2 x4.
    let (engine, args) = engine_at("alias");
    let jac = adjoint_jacobian(&engine, "alias", &args);
    let [x1, x2, x3, x4] = X;
    let y = x1.powi(8) * x2.powi(4) * x3.powi(2) * x4;
    let exact = [8.0 * y / x1, 4.0 * y / x2, 2.0 * y / x3, y / x4];
    for (k, (&g, &e)) in jac.iter().zip(&exact).enumerate() {
        assert!((g - e).abs() <= 1e-13 * e.abs(), "x({k}): {g} vs {e}");
    }
}

#[test]
fn an_old_value_read_only_by_a_test_leaves_a_zero_adjoint() {
    // y = merge(x(i), 3 x(i), y > 1): y's old value carries no derivative.
    let (engine, args) = engine_at("flat");
    let jac = adjoint_jacobian(&engine, "flat", &args);
    // The last trip decides: y before it is 3*(-1.3) < 1, so y = 3 x(4).
    assert_eq!(jac, vec![0.0, 0.0, 0.0, 3.0]);
}
