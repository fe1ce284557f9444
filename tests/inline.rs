//! The JIT's inliner (`adjit::jit::opt::inline`) on whole programs: every
//! corpus case gives the same output with the JIT (inlining on) as with
//! the interpreter, character for character; the corpus does exercise the
//! inliner; and a runtime error inside an inlined callee reports the
//! callee's procedure, line and variable, as without inlining.

use std::process::Command;

use adjit::engine::{Backend, Engine, Options};
use adjit::ir::{Inst, Module};

mod common;
use common::corpus::{corpus_dir, programs_in};

/// Runs the adjit binary; returns (success, stdout, stderr).
fn run_adjit(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .output()
        .expect("cannot start the adjit binary");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The number of calls in the blocks of a module.
fn calls(module: &Module) -> usize {
    module
        .procs
        .iter()
        .flat_map(|p| {
            p.blocks
                .iter()
                .flat_map(|b| &b.insts)
                .filter(|&&v| matches!(p.inst(v).kind, Inst::Call(..)))
        })
        .count()
}

#[test]
fn the_corpus_agrees_with_the_interpreter_bit_for_bit_with_inlining() {
    let mut failures = Vec::new();
    let (mut cases, mut inlined) = (0, 0);
    for program in programs_in(&corpus_dir()) {
        let path = program.path.to_string_lossy().into_owned();
        if let Ok(engine) = Engine::from_files(&[&program.path], Options::default()) {
            let (optimized, _) = adjit::jit::opt::optimize_with(engine.module(), true);
            inlined += calls(engine.module()) - calls(&optimized);
        }
        for case in &program.cases {
            cases += 1;
            let mut args = vec!["run", path.as_str()];
            args.extend(case.split_whitespace());
            args.push("--json");
            let jit = run_adjit(&args);
            args.push("--interp");
            let interp = run_adjit(&args);
            // --json prints every real with the digits that round-trip it.
            if jit != interp {
                failures.push(format!(
                    "{} [{case}]:\n--- interpreter\n{interp:?}\n--- JIT\n{jit:?}",
                    program.name()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cases >= 45, "only {cases} corpus cases");
    assert!(inlined >= 20, "the corpus inlines only {inlined} calls");
}

/// A callee that indexes a COMMON array out of bounds and divides by zero,
/// called from a loop.
const SOURCE: &str = "\
subroutine top(n, k, x)
  integer n, k, i
  real(8) x
  do i = 1, n
    call put(i, k, x)
  end do
end subroutine

subroutine put(i, k, x)
  integer i, k, j
  real(8) x, w
  common /blk/ w(5)
  j = i / k
  w(i) = x + j
end subroutine
";

/// The error of `top(n, k, x)` with the given back end and inlining.
fn error_of(backend: Backend, inline: bool, n: i64, k: i64) -> String {
    let options = Options {
        backend,
        inline,
        ..Options::default()
    };
    let engine = Engine::from_sources(&[("put.f90".into(), SOURCE.into())], options).unwrap();
    let top = engine.procedure(Some("top")).unwrap();
    let mut args = top.args();
    args.apply_settings(&[
        format!("n={n}").as_str(),
        format!("k={k}").as_str(),
        "x=1.5",
    ])
    .unwrap();
    top.call(&mut args).expect_err("the call fails").to_string()
}

#[test]
fn errors_in_inlined_callees_name_the_callee_its_line_and_its_variable() {
    // The call of `put` is inlined.
    let engine =
        Engine::from_sources(&[("put.f90".into(), SOURCE.into())], Options::default()).unwrap();
    let (optimized, origins) = adjit::jit::opt::optimize_with(engine.module(), true);
    assert_eq!(calls(engine.module()), 1);
    assert_eq!(calls(&optimized), 0);
    assert!(!origins.is_empty());
    for (n, k, what) in [
        (7, 1, ["put.f90:14:3", "in `put`", "on `w`"]),
        (3, 0, ["put.f90:13:3", "in `put`", "division by zero"]),
    ] {
        let interp = error_of(Backend::Interpreter, true, n, k);
        let inlined = error_of(Backend::Jit, true, n, k);
        let called = error_of(Backend::Jit, false, n, k);
        assert_eq!(inlined, interp, "n = {n}, k = {k}");
        assert_eq!(called, interp, "n = {n}, k = {k}");
        for w in what {
            assert!(inlined.contains(w), "`{inlined}` does not name {w}");
        }
    }
}
