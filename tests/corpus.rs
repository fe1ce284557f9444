//! The Fortran corpus: every program in `tests/corpus/` runs through the
//! `adjit` command line and its outputs are compared with the gfortran
//! results committed in `<name>.golden.json` (made by `scripts/golden.sh`).
//!
//! Test cases are declared in each program's header comments, one per line:
//! `! adjit-test: --entry NAME --set x=1 ...` (fixed form: `c adjit-test:`).
//! A golden file is a JSON array with one object per case, in header order:
//! `{"case": "<the header's arguments>", "expected": <adjit run --json>}`.
//!
//! Tolerances: integers, logicals and characters (trailing blanks ignored)
//! compare exactly; reals relatively, 1e-13 in general and 1e-6 when the
//! expected value is exactly a single-precision number (how REAL(4) results
//! print; an f64 value that happens to be a short binary fraction gets the
//! looser bound too, which is harmless for a regression check).
//!
//! Negative programs in `tests/corpus/errors/` declare the diagnostic they
//! must produce: `! adjit-error: LINE:COL: MESSAGE-SUBSTRING`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::corpus::{corpus_dir, header_directive, programs_in};

/// Relative tolerance for double-precision results.
const F64_TOLERANCE: f64 = 1e-13;
/// Relative tolerance for single-precision results.
const F32_TOLERANCE: f64 = 1e-6;
/// The corpus must stay at least this large.
const MIN_PROGRAMS: usize = 45;

/// Reads a golden file: `(case arguments, expected run JSON)` per case.
fn read_golden(path: &Path) -> Result<Vec<(String, Value)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let entries = json
        .as_array()
        .ok_or_else(|| format!("{}: not a JSON array", path.display()))?;
    entries
        .iter()
        .map(|entry| {
            let case = entry["case"]
                .as_str()
                .ok_or_else(|| format!("{}: an entry without \"case\"", path.display()))?;
            // The program's own output (PRINT / WRITE), when it has some,
            // travels with the expected result.
            let mut expected = entry["expected"].clone();
            if let Some(text) = entry.get("stdout") {
                expected["stdout"] = text.clone();
            }
            Ok((case.to_string(), expected))
        })
        .collect()
}

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

/// The relative tolerance for an expected real.
fn tolerance_for(expected: f64) -> f64 {
    if (expected as f32) as f64 == expected {
        F32_TOLERANCE
    } else {
        F64_TOLERANCE
    }
}

/// Compares one scalar; `None` when equal within tolerance, else why not.
fn scalar_mismatch(expected: &Value, got: &Value) -> Option<String> {
    let equal = match (expected, got) {
        (Value::Number(e), Value::Number(g)) => match (e.as_i64(), g.as_i64()) {
            (Some(e), Some(g)) => e == g,
            _ => {
                let (e, g) = (
                    e.as_f64().unwrap_or(f64::NAN),
                    g.as_f64().unwrap_or(f64::NAN),
                );
                let scale = e.abs().max(g.abs());
                e == g || (e - g).abs() <= tolerance_for(e) * scale
            }
        },
        (Value::String(e), Value::String(g)) => e.trim_end() == g.trim_end(),
        (e, g) => e == g,
    };
    (!equal).then(|| format!("expected {expected}, got {got}"))
}

/// Compares a variable's value (scalar or array); one message per
/// differing element, naming it (1-based, column-major).
fn value_mismatches(variable: &str, expected: &Value, got: &Value) -> Vec<String> {
    match (expected, got) {
        (Value::Array(e), Value::Array(g)) if e.len() == g.len() => e
            .iter()
            .zip(g)
            .enumerate()
            .filter_map(|(i, (e, g))| {
                scalar_mismatch(e, g).map(|m| format!("{variable} element {}: {m}", i + 1))
            })
            .collect(),
        (Value::Array(e), Value::Array(g)) => vec![format!(
            "{variable}: expected {} elements, got {}",
            e.len(),
            g.len()
        )],
        _ => scalar_mismatch(expected, got)
            .map(|m| format!("{variable}: {m}"))
            .into_iter()
            .collect(),
    }
}

/// Compares a `run --json` result with the expected one: every expected
/// output (and the FUNCTION result) must be present and equal.
fn run_mismatches(expected: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match expected["outputs"].as_object() {
        Some(outputs) => {
            for (name, value) in outputs {
                match got["outputs"].get(name) {
                    Some(g) => out.extend(value_mismatches(name, value, g)),
                    None => out.push(format!("{name}: missing from the output")),
                }
            }
        }
        None => out.push("golden entry has no \"outputs\" object".into()),
    }
    if let Some(result) = expected.get("result") {
        match got.get("result") {
            Some(g) => out.extend(value_mismatches("result", result, g)),
            None => out.push("result: missing from the output".into()),
        }
    }
    out
}

/// Runs every corpus case through `adjit run --json` plus `extra` flags and
/// compares with the golden files; panics listing every mismatch.
fn check_corpus_with(extra: &[&str], label: &str) {
    let dir = corpus_dir();
    let mut failures = Vec::new();
    let mut cases_run = 0;
    for program in programs_in(&dir) {
        let golden = match read_golden(&program.golden_path(&dir)) {
            Ok(g) => g,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for case in &program.cases {
            let Some((_, expected)) = golden.iter().find(|(c, _)| c == case) else {
                failures.push(format!("{} [{case}]: no golden entry", program.name()));
                continue;
            };
            cases_run += 1;
            let path = program.path.to_string_lossy().into_owned();
            let mut args = vec!["run", path.as_str()];
            args.extend(case.split_whitespace());
            args.push("--json");
            args.extend(extra);
            let (ok, stdout, stderr) = run_adjit(&args);
            let context = format!("{} [{case}]", program.name());
            if !ok {
                failures.push(format!("{context}: adjit failed: {}", stderr.trim()));
                continue;
            }
            // With --json the program's own output goes to standard error.
            if let Some(text) = expected.get("stdout").and_then(Value::as_str) {
                if stderr != text {
                    failures.push(format!(
                        "{context}: program output differs from gfortran's:\n--- gfortran\n{text}\
                         --- adjit\n{stderr}"
                    ));
                }
            }
            match serde_json::from_str::<Value>(stdout.trim()) {
                Ok(got) => failures.extend(
                    run_mismatches(expected, &got)
                        .into_iter()
                        .map(|m| format!("{context}: {m}")),
                ),
                Err(e) => failures.push(format!("{context}: output is not JSON ({e}): {stdout}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{label}: {} problem(s) over {cases_run} case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_program_has_cases_and_a_current_golden_file() {
    let dir = corpus_dir();
    let programs = programs_in(&dir);
    assert!(
        programs.len() >= MIN_PROGRAMS,
        "only {} corpus programs",
        programs.len()
    );
    let mut problems = Vec::new();
    for program in &programs {
        if program.cases.is_empty() {
            problems.push(format!("{}: no `adjit-test:` header line", program.name()));
        }
        match read_golden(&program.golden_path(&dir)) {
            Ok(golden) => {
                let golden_cases: Vec<&str> = golden.iter().map(|(c, _)| c.as_str()).collect();
                let header_cases: Vec<&str> = program.cases.iter().map(String::as_str).collect();
                if golden_cases != header_cases {
                    problems.push(format!(
                        "{}: golden cases {golden_cases:?} differ from the header {header_cases:?} \
                         (run scripts/golden.sh --write)",
                        program.name()
                    ));
                }
            }
            Err(e) => problems.push(e),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn interpreter_matches_gfortran() {
    check_corpus_with(&["--interp"], "interpreter");
}

#[test]

fn jit_matches_gfortran() {
    check_corpus_with(&[], "JIT");
}

/// Compares freshly generated gfortran results (a directory of golden files
/// written by `scripts/golden.sh --check`, named by `ADJIT_CORPUS_FRESH`)
/// with the committed golden files of the same programs, naming every stale
/// one.
#[test]
#[ignore = "run by scripts/golden.sh --check"]
fn fresh_gfortran_results_match_golden() {
    let fresh_dir = PathBuf::from(
        std::env::var("ADJIT_CORPUS_FRESH").expect("ADJIT_CORPUS_FRESH names the fresh results"),
    );
    let dir = corpus_dir();
    let mut stale = Vec::new();
    let mut compared = 0;
    // golden.sh may regenerate only some programs: compare those.
    for program in programs_in(&dir) {
        if !program.golden_path(&fresh_dir).exists() {
            continue;
        }
        compared += 1;
        let committed = read_golden(&program.golden_path(&dir));
        let fresh = read_golden(&program.golden_path(&fresh_dir));
        let problems = match (committed, fresh) {
            (Err(e), _) | (_, Err(e)) => vec![e],
            (Ok(committed), Ok(fresh)) if committed.len() != fresh.len() => {
                vec![format!(
                    "{} cases committed, {} fresh",
                    committed.len(),
                    fresh.len()
                )]
            }
            (Ok(committed), Ok(fresh)) => committed
                .iter()
                .zip(&fresh)
                .flat_map(|((cc, ce), (fc, fe))| {
                    if cc != fc {
                        vec![format!("case `{cc}` is now `{fc}`")]
                    } else if ce.get("stdout") != fe.get("stdout") {
                        vec![format!("[{cc}]: the program's output changed")]
                    } else {
                        run_mismatches(ce, fe)
                            .into_iter()
                            .map(|m| format!("[{cc}]: {m}"))
                            .collect()
                    }
                })
                .collect(),
        };
        if !problems.is_empty() {
            stale.push(format!(
                "stale golden file {}:\n  {}",
                program.golden_path(&dir).display(),
                problems.join("\n  ")
            ));
        }
    }
    assert!(
        compared > 0,
        "no fresh golden file in {}",
        fresh_dir.display()
    );
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn rejected_programs_report_located_errors() {
    let dir = corpus_dir().join("errors");
    let programs = programs_in(&dir);
    assert!(
        !programs.is_empty(),
        "no negative programs in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for program in &programs {
        let text = std::fs::read_to_string(&program.path).unwrap();
        let Some(expect) = text
            .lines()
            .find_map(|l| header_directive(l, "adjit-error:"))
        else {
            failures.push(format!("{}: no `adjit-error:` header", program.name()));
            continue;
        };
        let mut parts = expect.splitn(3, ':');
        let (line, col, message) = match (parts.next(), parts.next(), parts.next()) {
            (Some(l), Some(c), Some(m)) => (l.trim(), c.trim(), m.trim().to_ascii_lowercase()),
            _ => {
                failures.push(format!("{}: malformed header `{expect}`", program.name()));
                continue;
            }
        };
        let path = program.path.to_string_lossy().into_owned();
        let (ok, _, stderr) = run_adjit(&["ir", &path]);
        let name = program.name();
        if ok {
            failures.push(format!("{name}: accepted, expected an error"));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            failures.push(format!("{name}: panicked: {stderr}"));
        }
        let location = format!("{name}:{line}:{col}");
        if !stderr.contains(&location) {
            failures.push(format!(
                "{name}: stderr lacks `{location}`: {}",
                stderr.trim()
            ));
        }
        if !stderr.to_ascii_lowercase().contains(&message) {
            failures.push(format!(
                "{name}: stderr lacks `{message}`: {}",
                stderr.trim()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn comparison_tolerates_rounding_and_reports_elements() {
    let expected: Value = serde_json::from_str(
        r#"{"entry": "f", "outputs": {"x": [1.0, 0.1, 3], "t": "ab  ", "l": true}, "result": 0.3}"#,
    )
    .unwrap();
    let close: Value = serde_json::from_str(
        r#"{"entry": "f", "outputs": {"x": [1.0, 0.10000000000000002, 3], "t": "ab", "l": true}, "result": 0.30000000000000004}"#,
    )
    .unwrap();
    assert!(run_mismatches(&expected, &close).is_empty());
    let far: Value = serde_json::from_str(
        r#"{"entry": "f", "outputs": {"x": [1.0, 0.1000001, 4], "t": "ax", "l": false}}"#,
    )
    .unwrap();
    let m = run_mismatches(&expected, &far);
    assert_eq!(m.len(), 5, "{m:?}");
    assert!(m[0].starts_with("l: "), "{m:?}");
    assert!(
        m.iter().any(|s| s.starts_with("x element 2: expected 0.1")),
        "{m:?}"
    );
    assert!(
        m.iter().any(|s| s.starts_with("x element 3: expected 3")),
        "{m:?}"
    );
    assert!(
        m.iter().any(|s| s == "result: missing from the output"),
        "{m:?}"
    );
    assert_eq!(tolerance_for(1.7200000286102295), F32_TOLERANCE);
    assert_eq!(
        header_directive("c adjit-test: --set n=1", "adjit-test:"),
        Some("--set n=1")
    );
}
