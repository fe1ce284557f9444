//! `adjit run FILE` runs the main PROGRAM when the files have one: `READ *`
//! from standard input, `PRINT *` to standard output, and nothing else on
//! standard output.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `adjit ARGS...` with `input` on standard input: `(exit code,
/// stdout, stderr)`.
fn adjit_with_input(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the adjit binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` to a fresh file in the temporary directory.
fn source_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("adjit-main-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

const PROGRAM: &str = "      SUBROUTINE SCALE(N, X, S)
      INTEGER N, I
      DOUBLE PRECISION X(N), S
      DO 10 I = 1, N
        X(I) = S * X(I)
   10 CONTINUE
      END
      PROGRAM DEMO
      INTEGER N
      DOUBLE PRECISION X(3), S
      READ *, N, S
      READ *, X(1), X(2), X(3)
      CALL SCALE(N, X, S)
      PRINT *, 'SUM', X(1) + X(2) + X(3)
      END
";

#[test]
fn run_executes_the_main_program_with_stdin_and_stdout() {
    let file = source_file("demo.f", PROGRAM);
    let (code, out, err) = adjit_with_input(&["run", &file], "3 2.0\n1.0 2.5 4.0\n");
    assert_eq!(code, 0, "{err}");
    // Only the program's output: no argument listing of an entry.
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        ["SUM", "15.000000000000000"],
        "{out:?}"
    );
    assert_eq!(out.lines().count(), 1, "{out:?}");
    // The subroutine is still an entry when named.
    let (code, out, err) = adjit_with_input(
        &[
            "run", &file, "--entry", "scale", "--set", "n=2", "--set", "x=1,2", "--set", "s=3",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "n = 2\nx = [3.0, 6.0]\ns = 3.0\n");
    // Input that runs out is a located runtime error.
    let (code, _, err) = adjit_with_input(&["run", &file], "3\n");
    assert_ne!(code, 0);
    assert!(err.contains("demo.f:"), "{err}");
}

/// A main program owning an ALLOCATABLE module array that a module
/// procedure allocates, and a SAVE allocatable of its own, both updated by
/// an internal procedure called twice: the output is gfortran's.
const PERSISTENT_ALLOCATABLES: &str = "module d
  implicit none
  real(8), allocatable :: w(:)
end module d
module ops
  use d
  implicit none
contains
  subroutine init(n)
    integer, intent(in) :: n
    integer :: i
    allocate(w(n))
    w = [(dble(i), i = 1, n)]
  end subroutine init
end module ops
program main
  use ops
  implicit none
  real(8), allocatable, save :: h(:)
  call init(4)
  call inner()
  print *, sum(w), size(h)
  call inner()
  print *, sum(w), size(h), h
contains
  subroutine inner()
    real(8) :: t
    w = w * 2
    if (.not. allocated(h)) allocate(h(0))
    t = sum(w)
    h = [h, t]
  end subroutine inner
end program main
";

#[test]
fn main_program_owns_module_and_save_allocatables() {
    let path = source_file("persistent_alloc.f90", PERSISTENT_ALLOCATABLES);
    let (code, stdout, stderr) = adjit_with_input(&["run", &path], "");
    assert_eq!(code, 0, "{stderr}");
    let expected = "   20.000000000000000                1\n   40.000000000000000                2   20.000000000000000        40.000000000000000     \n";
    assert_eq!(stdout, expected);
}
