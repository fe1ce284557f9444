//! Rendered diagnostics on the command line, compared whole (standard
//! error is a pipe here, so without colour): the first line names
//! `file:line:col`, the source lines follow with the span underlined and
//! a note where the variable was declared.

mod common;

use common::cli::adjit;

/// Runs `adjit run` on `source` written to a temporary `e.f90`: exit
/// code, standard output and error, and the file's path.
fn run_source(tag: &str, source: &str) -> (i32, String, String, String) {
    let dir = std::env::temp_dir().join(format!("adjit-diag-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("e.f90");
    std::fs::write(&file, source).unwrap();
    let path = file.to_str().unwrap().to_string();
    let (code, stdout, stderr) = adjit(&["run", &path]);
    std::fs::remove_dir_all(&dir).ok();
    (code, stdout, stderr, path)
}

#[test]
fn a_compile_error_shows_the_source_the_span_and_the_declaration() {
    let (code, stdout, stderr, path) = run_source(
        "intent",
        "subroutine f(x, y)
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  y = x ** 2
  x = y + 1
end subroutine f
",
    );
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        format!(
            "{path}:5:3: error: `x` is INTENT(IN) and cannot be assigned
  ┌─ {path}:5:3
  │
2 │   double precision, intent(in) :: x
  │                                   - `x` declared here
  ·
5 │   x = y + 1
  │   ^
"
        )
    );
}

#[test]
fn assigning_an_array_parameter_is_located() {
    let (code, stdout, stderr, path) = run_source(
        "param",
        "subroutine f(x)
  double precision, intent(inout) :: x(3)
  double precision :: d(2)
  double precision, parameter :: c(3) = [1d0, 2d0, 3d0]
  parameter (d = (/ 4d0, 5d0 /))
  x = x * c + d(1)
  c(2) = x(1)
end subroutine f
",
    );
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        format!(
            "{path}:7:3: error: `c` is a PARAMETER and cannot be assigned
  ┌─ {path}:7:3
  │
4 │   double precision, parameter :: c(3) = [1d0, 2d0, 3d0]
  │                                  - `c` declared here
  ·
7 │   c(2) = x(1)
  │   ^
"
        )
    );
}
