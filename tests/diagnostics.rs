//! Rendered diagnostics on the command line, compared whole (standard
//! error is a pipe here, so without colour): the first line names
//! `file:line:col`, the source lines follow with the span underlined and
//! a note where the variable was declared.

mod common;

use common::cli::adjit;

#[test]
fn a_compile_error_shows_the_source_the_span_and_the_declaration() {
    let dir = std::env::temp_dir().join(format!("adjit-diag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("e.f90");
    std::fs::write(
        &file,
        "subroutine f(x, y)
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  y = x ** 2
  x = y + 1
end subroutine f
",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (code, stdout, stderr) = adjit(&["run", path]);
    std::fs::remove_dir_all(&dir).ok();
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
