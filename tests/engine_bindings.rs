//! What the language bindings (the Python package) take from the API:
//! errors carry their location as fields, and a tangent Jacobian computes
//! in column blocks that put side by side give the whole one.

use adjit::engine::{Engine, ErrorKind, Location, Selection};

const SOURCE: &str = "\
module counter
  integer :: calls = 0
end module

subroutine grow(n, x, y)
  use counter
  integer n
  double precision x(n), y(n)
  integer i
  calls = calls + 1
  do i = 1, n
    y(i) = calls * x(i)**2 + x(max(1, i-1)) * x(n + 1 - i)
  end do
end subroutine

subroutine pick(n, k, x, s)
  integer n, k
  double precision x(n), s
  s = x(k)
end subroutine
";

#[test]
fn compile_and_runtime_errors_carry_their_location() {
    let e = Engine::from_source("bad.f90", "subroutine f(x)\n  x = = 1\nend\n")
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Compile);
    let at = |file: &str, line, col| {
        Some(Location {
            file: file.into(),
            line,
            col,
        })
    };
    assert_eq!(e.location, at("bad.f90", 2, 7));
    assert!(e.message.starts_with("bad.f90:2:7: error:"));

    let engine = Engine::from_source("grow.f90", SOURCE).unwrap();
    let f = engine.procedure(Some("pick")).unwrap();
    let mut args = f.args();
    args.set_scalar("n", 3.0).unwrap();
    args.set_scalar("k", 4.0).unwrap();
    let e = f.call(&mut args).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert_eq!(e.runtime.as_ref().and_then(|r| r.var.as_deref()), Some("x"));
    assert_eq!(e.location, at("grow.f90", 19, 3));
    // A usage error has no source position.
    assert_eq!(args.index_of("nope").unwrap_err().location, None);
}

#[test]
fn tangent_column_blocks_make_the_whole_jacobian_from_one_state() {
    let engine = Engine::from_source("grow.f90", SOURCE).unwrap();
    let (of, wrt) = (
        Selection::parse_list("y").unwrap(),
        Selection::parse_list("x").unwrap(),
    );
    let n = 7;
    let tangent = engine.tangent(Some("grow"), &of, &wrt, 3).unwrap();
    let mut args = tangent.args();
    args.set_scalar("n", n as f64).unwrap();
    let x: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
    args.set_array("x", &x).unwrap();
    let start = engine.state();
    let whole = tangent.jacobian(&args).unwrap();
    // Blocks of 2, 3 and 2 columns (not multiples of the 3 directions),
    // each from the same starting state, as separate workers would.
    let mut blocks = Vec::new();
    for cols in [0..2, 2..5, 5..usize::MAX] {
        engine.set_state(&start).unwrap();
        blocks.push(tangent.jacobian_columns(&args, cols).unwrap());
    }
    assert_eq!(
        blocks.iter().map(|b| b.cols()).collect::<Vec<_>>(),
        [2, 3, 2]
    );
    assert_eq!(blocks[1].wrt, ["x(3)", "x(4)", "x(5)"]);
    let mut col = 0;
    for b in &blocks {
        for c in 0..b.cols() {
            for row in 0..n {
                assert_eq!(b.get(row, c), whole.get(row, col), "({row}, {col})");
            }
            col += 1;
        }
        assert_eq!(b.values, whole.values);
    }
    // The state matters: dy(4)/dx(4) = 2 calls x(4) + x(3) carries the
    // call count (1 here, 2 in the next evaluation).
    assert_eq!(whole.get(3, 3), 2.0 * x[3] + x[2]);
    assert_ne!(tangent.jacobian(&args).unwrap().matrix, whole.matrix);
}
