//! Fortran 90+ at the engine boundary, beyond what the corpus shows: an
//! OPTIONAL dummy of the entry is present exactly when the caller gives
//! it a value (the API's `Args::set*` and the CLI's `--set`), in the primal
//! and in the derivatives; derivatives through procedures passed for
//! `procedure(iface)` dummies against analytic values.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Engine, Selection};

const SOURCE: &str = "
subroutine f(x, y, w, p)
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  double precision, intent(in), optional :: w
  double precision, intent(in), optional :: p(2)
  y = x*x
  if (present(w)) y = y*w
  if (present(p)) y = y + p(1)*x + p(2)
end subroutine f
";

#[test]
fn an_optional_entry_dummy_is_present_when_it_is_set() {
    let engine = Engine::from_source("f.f90", SOURCE).unwrap();
    let f = engine.procedure(None).unwrap();
    let mut args = f.args();
    args.set_scalar("x", 3.0).unwrap();
    f.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 9.0, "w and p absent");
    args.set_scalar("w", 2.0).unwrap();
    f.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 18.0, "w present");
    args.set_array("p", &[0.5, 1.0]).unwrap();
    f.call(&mut args).unwrap();
    assert_eq!(args.scalar("y").unwrap(), 20.5, "w and p present");

    // The derivatives see the same presence: d/dx (w x^2 + p1 x + p2).
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x,w").unwrap(),
    );
    let adjoint = engine
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let (value, gradient) = adjoint.gradient(&args).unwrap();
    assert_eq!((value, gradient), (20.5, vec![12.5, 9.0]));
    let tangent = engine.tangent(None, &of, &wrt, 2).unwrap();
    let jacobian = tangent.jacobian(&args).unwrap();
    assert_eq!((jacobian.get(0, 0), jacobian.get(0, 1)), (12.5, 9.0));
}

#[test]
fn an_optional_entry_dummy_is_present_when_the_cli_sets_it() {
    let dir = std::env::temp_dir().join(format!("adjit-modern-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f.f90");
    std::fs::write(&file, SOURCE).unwrap();
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", file, "--set", "x=3", "--print", "y"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = common::cli::adjit(&args);
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    assert!(run(&[]).contains("y = 9.0"), "{}", run(&[]));
    assert!(run(&["--set", "w=2"]).contains("y = 18.0"));
    assert!(run(&["--set", "w=2", "--set", "p=0.5,1"]).contains("y = 20.5"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The roots Newton's method finds through `procedure(scalar_fn)` dummies
/// (tests/corpus/abstract_interface.f90) have the derivatives the implicit
/// function theorem gives: r1 solves r^3 + a r - 3 = 0, so dr1/da =
/// -r1 / (3 r1^2 + a); r2 solves exp(b r) = 2, so r2 = ln 2 / b and
/// dr2/db = -ln 2 / b^2. Tangent and adjoint both.
#[test]
fn newton_roots_through_procedure_dummies_have_implicit_function_derivatives() {
    let path = common::corpus::corpus_dir().join("abstract_interface.f90");
    let engine = Engine::from_files(&[&path], Default::default()).unwrap();
    let f = engine.procedure(Some("roots")).unwrap();
    let mut args = f.args();
    let (a, b) = (3.5, 1.25);
    args.set_scalar("a", a).unwrap();
    args.set_scalar("b", b).unwrap();
    f.call(&mut args).unwrap();
    let r1 = args.scalar("r1").unwrap();
    assert!(
        (r1.powi(3) + a * r1 - 3.0).abs() < 1e-13,
        "r1 = {r1} is a root"
    );
    let ln2 = std::f64::consts::LN_2;
    let expected = [-r1 / (3.0 * r1 * r1 + a), 0.0, 0.0, -ln2 / (b * b)];
    let (of, wrt) = (
        Selection::parse_list("r1,r2").unwrap(),
        Selection::parse_list("a,b").unwrap(),
    );
    let tangent = engine.tangent(Some("roots"), &of, &wrt, 2).unwrap();
    let adjoint = engine
        .adjoint(Some("roots"), &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let mut bad = common::check::against(
        "tangent",
        &tangent.jacobian(&args).unwrap(),
        &expected,
        1e-12,
    );
    bad.extend(common::check::against(
        "adjoint",
        &adjoint.jacobian(&args).unwrap(),
        &expected,
        1e-12,
    ));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The solver module of tests/corpus/newton_module.f90 (Newton's method
/// taking `procedure(residual)` / `procedure(jacobian)` dummies, derived-type
/// options, OPTIONAL arguments) differentiated with respect to the
/// problem's parameters: the root of x1^2 + x2^2 = p1, x1 = p2 x2 is
/// x2 = sqrt(p1 / (1 + p2^2)), x1 = p2 x2, whose derivatives the tangent and
/// the adjoint must give (both solves: given options and defaults).
#[test]
fn newton_module_root_has_the_closed_form_derivatives() {
    let path = common::corpus::corpus_dir().join("newton_module.f90");
    let engine = Engine::from_files(&[&path], Default::default()).unwrap();
    let f = engine.procedure(Some("circle_line")).unwrap();
    let mut args = f.args();
    let (p1, p2) = (2.0, 0.5);
    args.set_array("p", &[p1, p2]).unwrap();
    f.call(&mut args).unwrap();
    let x2 = (p1 / (1.0 + p2 * p2)).sqrt();
    let (dx2_dp1, dx2_dp2) = (x2 / (2.0 * p1), -x2 * p2 / (1.0 + p2 * p2));
    let row = [p2 * dx2_dp1, x2 + p2 * dx2_dp2, dx2_dp1, dx2_dp2];
    let expected: Vec<f64> = row.iter().chain(&row).copied().collect();
    let (of, wrt) = (
        Selection::parse_list("x,y").unwrap(),
        Selection::parse_list("p").unwrap(),
    );
    let tangent = engine.tangent(Some("circle_line"), &of, &wrt, 2).unwrap();
    let adjoint = engine
        .adjoint(Some("circle_line"), &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let mut bad = common::check::against(
        "tangent",
        &tangent.jacobian(&args).unwrap(),
        &expected,
        1e-10,
    );
    bad.extend(common::check::against(
        "adjoint",
        &adjoint.jacobian(&args).unwrap(),
        &expected,
        1e-10,
    ));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

const ASSUMED_SHAPE: &str = "
subroutine weigh(a, t)
  double precision, intent(in) :: a(:, :)
  double precision, intent(out) :: t
  integer :: i, j
  t = 0
  do j = 1, size(a, 2)
    do i = 1, size(a, 1)
      t = t + a(i, j) * i / j
    end do
  end do
end subroutine weigh
";

/// An entry's assumed-shape dummy of rank 2 gets its shape from the caller
/// (`Args::set_shape`, `--extent a=3,2`): the hidden extents are filled by
/// the engine and never shown; values without a shape are a usage error.
#[test]
fn an_assumed_shape_entry_dummy_takes_its_shape_from_the_caller() {
    let engine = Engine::from_source("weigh.f90", ASSUMED_SHAPE).unwrap();
    let f = engine.procedure(Some("weigh")).unwrap();
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    for (shape, t) in [([3, 2], 30.0), ([2, 3], 16.0 + 1.0 / 6.0)] {
        let mut args = f.args();
        args.set_array("a", &a).unwrap();
        args.set_shape("a", &shape).unwrap();
        assert!(args.missing_shape().is_none());
        f.call(&mut args).unwrap();
        assert!((args.scalar("t").unwrap() - t).abs() < 1e-13, "{shape:?}");
        // dt/da(i, j) = i / j, column-major.
        let expected: Vec<f64> = (0..6)
            .map(|k| ((k % shape[0]) + 1) as f64 / ((k / shape[0]) + 1) as f64)
            .collect();
        let (of, wrt) = (
            Selection::parse_list("t").unwrap(),
            Selection::parse_list("a").unwrap(),
        );
        let tangent = engine.tangent(Some("weigh"), &of, &wrt, 6).unwrap();
        let adjoint = engine
            .adjoint(Some("weigh"), &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let mut bad = common::check::against(
            "tangent",
            &tangent.jacobian(&args).unwrap(),
            &expected,
            1e-13,
        );
        bad.extend(common::check::against(
            "adjoint",
            &adjoint.jacobian(&args).unwrap(),
            &expected,
            1e-13,
        ));
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
    let mut args = f.args();
    args.set_array("a", &a).unwrap();
    assert_eq!(args.missing_shape(), Some(("a", 2)));
    assert!(args.set_shape("a", &[6]).is_err(), "rank 2 needs 2 extents");
    assert!(args.set_shape("t", &[1]).is_err(), "t is a scalar");

    let dir = std::env::temp_dir().join(format!("adjit-shape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("weigh.f90");
    std::fs::write(&file, ASSUMED_SHAPE).unwrap();
    let path = file.to_str().unwrap();
    let (code, stdout, _) =
        common::cli::adjit(&["run", path, "--set", "a=1,2,3,4,5,6", "--extent", "a=3,2"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\nt = 30.0\n");
    let (code, _, stderr) = common::cli::adjit(&["run", path, "--set", "a=1,2,3,4,5,6"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--extent a=N1,N2"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// ASSOCIATE names of array sections write the variable's sections, and a
/// BLOCK array sized by an associate name takes its value on entry:
/// `inner => x(2:n-1)` scaled by `s`, `w(m)` with `m => n - 1` holding the
/// differences. For x = (1, 2, 4, 7) and s = 3: x becomes (1, 6, 12, 7),
/// `y = sum(w**2) = 25 + 36 + 25`, and dy/dx, dy/ds follow from
/// `y = (s x2 - x1)^2 + (s x3 - s x2)^2 + (x4 - s x3)^2` in closed form.
#[test]
fn associate_sections_and_block_arrays_have_closed_form_derivatives() {
    let source = "
subroutine sect(n, x, s, y)
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  double precision, intent(in) :: s
  double precision, intent(out) :: y
  integer :: i
  associate (inner => x(2:n-1), m => n - 1)
    inner = s*inner
    block
      double precision :: w(m)
      do i = 1, m
        w(i) = x(i+1) - x(i)
      end do
      y = sum(w**2) + 0*size(inner)
    end block
  end associate
end subroutine sect
";
    let engine = Engine::from_source("sect.f90", source).unwrap();
    let f = engine.procedure(None).unwrap();
    let mut args = f.args();
    args.set_scalar("n", 4.0).unwrap();
    args.set_array("x", &[1.0, 2.0, 4.0, 7.0]).unwrap();
    args.set_scalar("s", 3.0).unwrap();
    f.call(&mut args).unwrap();
    assert_eq!(args.f64s("x").unwrap(), vec![1.0, 6.0, 12.0, 7.0]);
    assert_eq!(args.scalar("y").unwrap(), 25.0 + 36.0 + 25.0);

    let (x1, x2, x3, x4, s) = (1.0, 2.0, 4.0, 7.0, 3.0);
    let (d1, d2, d3) = (s * x2 - x1, s * x3 - s * x2, x4 - s * x3);
    let expected = [
        -2.0 * d1,
        2.0 * d1 * s - 2.0 * d2 * s,
        2.0 * d2 * s - 2.0 * d3 * s,
        2.0 * d3,
        2.0 * d1 * x2 + 2.0 * d2 * (x3 - x2) - 2.0 * d3 * x3,
    ];
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x,s").unwrap(),
    );
    let mut point = f.args();
    point.set_scalar("n", 4.0).unwrap();
    point.set_array("x", &[x1, x2, x3, x4]).unwrap();
    point.set_scalar("s", s).unwrap();
    let adjoint = engine
        .adjoint(None, &of, &wrt, &AdjointOptions::default())
        .unwrap();
    let (_, gradient) = adjoint.gradient(&point).unwrap();
    let tangent = engine.tangent(None, &of, &wrt, 5).unwrap();
    let jacobian = tangent.jacobian(&point).unwrap();
    for (k, e) in expected.iter().enumerate() {
        assert!(
            (gradient[k] - e).abs() <= 1e-12 * e.abs().max(1.0),
            "adjoint {k}: {} vs {e}",
            gradient[k]
        );
        assert!(
            (jacobian.get(0, k) - e).abs() <= 1e-12 * e.abs().max(1.0),
            "tangent {k}: {} vs {e}",
            jacobian.get(0, k)
        );
    }
}
