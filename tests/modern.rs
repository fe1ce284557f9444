//! Fortran 90+ at the engine boundary, beyond what the corpus shows: an
//! OPTIONAL dummy of the entry is present exactly when the caller gives
//! it a value (the API's `Args::set*` and the CLI's `--set`), in the primal
//! and in the derivatives.

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
