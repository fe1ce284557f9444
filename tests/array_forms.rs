//! Array constructors with implied DO loops as actual arguments, array
//! PARAMETERs of implied shape and nested WHERE, against analytic
//! derivatives, tangent and adjoint both. The corpus programs
//! `constructor_actual.f90`, `implied_shape_parameter.f90` and
//! `where_nested.f90` (used here) hold them to gfortran's primal results
//! and to the dot-product and finite-difference checks of
//! `tests/derivatives.rs`.

mod common;

use adjit::engine::{Args, Engine};

fn compare(engine: &Engine, args: &Args, of: &str, wrt: &str, expected: &[f64]) {
    let bad =
        common::check::both_modes_against(engine, Some("drive"), args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{of} wrt {wrt}:\n{}", bad.join("\n"));
}

/// The program's procedure `drive` with the arguments `sets`.
fn setup(name: &str, source: &str, sets: &[(&str, &[f64])]) -> (Engine, Args) {
    common::engine_with_args(name, source, "drive", sets)
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

/// Implied shape of rank > 1 (`c(*, *)`, `d(0:*, *)`, `t(*, *, *)`,
/// each from a RESHAPE): y = c x + w z, so dy/dx = c = (1 3 5; 2 4 6) and
/// dy/dz = w = (0.5 2; -1 0.25); s1 = sum_j sum_{i=0..2} d(i, j) x(i+1)
/// z(j) with d(i, j) = i + 1 + 3 (j - 1); s4 = t(2, 1, 2) x1^2 + w(1, 2) z2
/// = 3 x1^2 + 2 z2.
#[test]
fn implied_shape_parameters_of_rank_2_take_the_reshape_extents() {
    let x = [1.0, -2.0, 0.5];
    let z = [0.25, -1.5];
    let (engine, args) = setup(
        "implied_shape_rank2.f90",
        include_str!("corpus/implied_shape_rank2.f90"),
        &[("x", &x), ("z", &z)],
    );
    compare(&engine, &args, "y", "x", &[1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    compare(&engine, &args, "y", "z", &[0.5, 2.0, -1.0, 0.25]);
    let ds1: Vec<f64> = (1..=3)
        .map(|k| k as f64 * z[0] + (k + 3) as f64 * z[1])
        .collect();
    compare(&engine, &args, "s(1)", "x", &ds1);
    compare(&engine, &args, "s(4)", "x", &[6.0 * x[0], 0.0, 0.0]);
    compare(&engine, &args, "s(4)", "z", &[0.0, 2.0]);
}

/// A `dim=` read at run time in a block IF condition: with the first arm
/// taken, s = sum m^2 + product(maxval(m, dim=k)). For m = 1..6 and k = 1,
/// maxval(m, dim=1) = (m(3, 1), m(3, 2)), so ds/dm = 2 m + (0, 0, m(3, 2),
/// 0, 0, m(3, 1)); for m = (-1, -2, -3, 4, 5, 6) and k = 2, maxval(m,
/// dim=2) = (m(1, 2), m(2, 2), m(3, 2)) = (4, 5, 6), whose product adds
/// 30, 24 and 20 to the last column's entries.
#[test]
fn a_runtime_dim_in_an_if_condition_differentiates() {
    let src = include_str!("corpus/dim_runtime_if.f90");
    let m1 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (engine, args) = setup("dim_runtime_if.f90", src, &[("m", &m1), ("k", &[1.0])]);
    let mut ds: Vec<f64> = m1.iter().map(|x| 2.0 * x).collect();
    ds[2] += m1[5];
    ds[5] += m1[2];
    compare(&engine, &args, "s", "m", &ds);
    let m2 = [-1.0, -2.0, -3.0, 4.0, 5.0, 6.0];
    let (engine, args) = setup("dim_runtime_if.f90", src, &[("m", &m2), ("k", &[2.0])]);
    let mut ds: Vec<f64> = m2.iter().map(|x| 2.0 * x).collect();
    ds[3] += 30.0;
    ds[4] += 24.0;
    ds[5] += 20.0;
    compare(&engine, &args, "s", "m", &ds);
}

/// EOSHIFT with an array boundary: r1 = eoshift(m, 1, b) puts b(j) at
/// r1(4, j), so dr1/db has a 1 at row (4, j), column j; s = sum of the
/// squares of eoshift(m, 2, c + 1, dim=2), whose first column is m(:, 3)
/// and whose other two are c + 1: ds/dc = 4 (c + 1), ds/dm(i, 3) =
/// 2 m(i, 3).
#[test]
fn an_array_boundary_of_eoshift_fills_each_line() {
    let m = [
        0.5, -1.0, 2.0, 1.5, 0.25, -2.0, 3.0, 1.0, -0.75, 1.25, 0.5, -1.5,
    ];
    let b = [10.0, 20.0, 30.0];
    let c = [-1.0, -2.0, -3.0, -4.0];
    let (engine, args) = setup(
        "eoshift_boundary.f90",
        include_str!("corpus/eoshift_boundary.f90"),
        &[("m", &m), ("b", &b), ("c", &c)],
    );
    let mut dr1 = vec![0.0; 36];
    for j in 0..3 {
        dr1[(3 + 4 * j) * 3 + j] = 1.0;
    }
    compare(&engine, &args, "r1", "b", &dr1);
    let dsdc: Vec<f64> = c.iter().map(|x| 4.0 * (x + 1.0)).collect();
    compare(&engine, &args, "s", "c", &dsdc);
    let mut dsdm = vec![0.0; 12];
    for i in 0..4 {
        dsdm[8 + i] = 2.0 * m[8 + i];
    }
    compare(&engine, &args, "s", "m", &dsdm);
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

/// `c = matmul(c, c)` reallocating `c` (unallocated before): y = sum(A^2)
/// with A = reshape(x, [2, 2]), so dy/dA(p, q) = (row sum q of A) +
/// (column sum p of A); `v = matmul(v(1:1), a(1:1, :))` reads a section of
/// its target and grows it from 1 to 2 elements, (x1 x1, x1 x3), so z =
/// x1^2 + x1 x3 + 2.
#[test]
fn matmul_reallocating_its_target_differentiates() {
    let src = "subroutine drive(x, y, z)
  double precision, intent(in) :: x(4)
  double precision, intent(out) :: y, z
  double precision :: a(2, 2)
  double precision, allocatable :: c(:, :), v(:)
  a = reshape(x, [2, 2])
  c = a
  c = matmul(c, c)
  y = sum(c)
  v = x(1:1)
  v = matmul(v(1:1), a(1:1, :))
  z = sum(v) + size(v)
end subroutine drive
";
    let x = [0.5, -1.25, 2.0, 1.5];
    let (engine, args) = setup("matmul_realloc.f90", src, &[("x", &x)]);
    let a = |p: usize, q: usize| x[p + 2 * q];
    let dy: Vec<f64> = (0..4)
        .map(|k| {
            let (p, q) = (k % 2, k / 2);
            (a(q, 0) + a(q, 1)) + (a(0, p) + a(1, p))
        })
        .collect();
    compare(&engine, &args, "y", "x", &dy);
    let dz = [2.0 * x[0] + x[2], 0.0, x[0], 0.0];
    compare(&engine, &args, "z", "x", &dz);
}

/// Nested FORALL: b(i, j) = a(j, i) i reads what the first inner
/// statement assigned at other outer tuples, a(i, j) = x_i x_j j, so
/// y_i = sum_j b(i, j) = i^2 x_i S with S = sum x: dy_i/dx_k = i^2
/// (delta_ik S + x_i). The WHERE in the FORALL then doubles b(i, j) where
/// x_j > 0 row by row; s = sum(b) sees it.
#[test]
fn nested_forall_reads_what_earlier_statements_assigned() {
    let src = "subroutine drive(x, y, s)
  double precision, intent(in) :: x(3)
  double precision, intent(out) :: y(3), s
  double precision :: a(3, 3), b(3, 3)
  integer :: i, j
  forall (i = 1:3)
    forall (j = 1:3)
      a(i, j) = x(i) * x(j) * j
      b(i, j) = a(j, i) * i
    end forall
  end forall
  y = sum(b, 2)
  forall (i = 1:3)
    where (x > 0)
      b(i, :) = 2 * b(i, :)
    elsewhere
      b(i, :) = 0
    end where
  end forall
  s = sum(b)
end subroutine drive
";
    let x = [0.5, -1.25, 2.0];
    let (engine, args) = setup("forall_in_forall.f90", src, &[("x", &x)]);
    let total: f64 = x.iter().sum();
    let mut dy = vec![0.0; 9];
    for i in 0..3 {
        let ii = ((i + 1) * (i + 1)) as f64;
        for k in 0..3 {
            dy[i * 3 + k] = ii * (if i == k { total } else { 0.0 } + x[i]);
        }
    }
    compare(&engine, &args, "y", "x", &dy);
    // s = sum_i sum_{j: x_j > 0} 2 i^2 x_i x_j = 2 (sum_i i^2 x_i) P,
    // P = sum of the positive x_j.
    let w: f64 = (0..3).map(|i| ((i + 1) * (i + 1)) as f64 * x[i]).sum();
    let p: f64 = x.iter().filter(|v| **v > 0.0).sum();
    let ds: Vec<f64> = (0..3)
        .map(|k| {
            let from_w = 2.0 * ((k + 1) * (k + 1)) as f64 * p;
            from_w + if x[k] > 0.0 { 2.0 * w } else { 0.0 }
        })
        .collect();
    compare(&engine, &args, "s", "x", &ds);
}

/// A runtime `dim=` in a SELECT CASE selector and a DO WHILE condition:
/// for x = 1..6 and m = reshape(x, [2, 3]), k = 2 gives row sums (9, 12)
/// whose MAXLOC 2 selects y = x2 x3; k = 1 gives column sums (3, 7, 11),
/// the default case y = sin(x4). The loop halves m until the largest sum
/// along `k` is at most 1 (4 trips for both), and z = sum(m) = sum(x) / 16.
#[test]
fn a_runtime_dim_in_select_case_and_do_while_differentiates() {
    let src = "subroutine drive(k, x, y, z)
  integer, intent(in) :: k
  double precision, intent(in) :: x(6)
  double precision, intent(out) :: y, z
  double precision :: m(2, 3)
  m = reshape(x, [2, 3])
  select case (maxloc(sum(m, dim=k), 1))
  case (1)
    y = x(1) ** 2
  case (2)
    y = x(2) * x(3)
  case default
    y = sin(x(4))
  end select
  do while (maxval(sum(m, dim=k)) > 1)
    m = 0.5d0 * m
  end do
  z = sum(m)
end subroutine drive
";
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (engine, args) = setup("dim_select.f90", src, &[("x", &x), ("k", &[2.0])]);
    compare(&engine, &args, "y", "x", &[0.0, 3.0, 2.0, 0.0, 0.0, 0.0]);
    compare(&engine, &args, "z", "x", &[1.0 / 16.0; 6]);
    let (engine, args) = setup("dim_select.f90", src, &[("x", &x), ("k", &[1.0])]);
    let dy = [0.0, 0.0, 0.0, 4.0_f64.cos(), 0.0, 0.0];
    compare(&engine, &args, "y", "x", &dy);
    compare(&engine, &args, "z", "x", &[1.0 / 16.0; 6]);
}

/// WHERE masks reading the variables the construct assigns
/// (`where_mask_reread.f90`): each mask is evaluated once, so with
/// x = (1.5, 0.2, 0.7, -1, 3, 0.4) and c = 1/2 the elements above 1 get
/// y = x - 2 (slope 1), those below c get y = 3x + c (slopes 3 and 1)
/// although the first arm moved elements 1 and 5 below c, and element 3
/// gets y = x + 10.
#[test]
fn where_masks_are_evaluated_once_before_their_arms_assign() {
    let x = [1.5, 0.2, 0.7, -1.0, 3.0, 0.4];
    let engine = Engine::from_source(
        "where_mask_reread.f90",
        include_str!("corpus/where_mask_reread.f90"),
    )
    .unwrap();
    let mut args = engine.procedure(Some("remask")).unwrap().args();
    args.set_array("x", &x).unwrap();
    args.set_scalar("c", 0.5).unwrap();
    let slope = [1.0, 3.0, 1.0, 3.0, 1.0, 3.0];
    let mut expected = vec![0.0; 6 * 7];
    for (i, s) in slope.iter().enumerate() {
        expected[i * 7 + i] = *s;
        expected[i * 7 + 6] = if *s == 3.0 { 1.0 } else { 0.0 };
    }
    let bad = common::check::both_modes_against(
        &engine,
        Some("remask"),
        &args,
        "y",
        "x,c",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
