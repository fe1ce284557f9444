//! Running the `adjit` binary from integration tests.

use std::process::Command;

/// Runs `adjit ARGS...` in the crate directory: `(exit code, stdout,
/// stderr)`.
pub fn adjit(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the adjit binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `source` to a fresh file named `file` in a directory of this
/// test process and runs `adjit run` on it: `(exit code, stdout, stderr)`.
pub fn run_source(file: &str, source: &str) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("adjit-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(file);
    std::fs::write(&path, source).expect("the source is written");
    adjit(&["run", path.to_str().expect("a UTF-8 path")])
}

/// The rows of `adjit bench --json`'s output `stdout`: one per size (as
/// many as `sizes`), each timing every one of `modes` (`"primal"`,
/// `"adjoint"`, ...) in a positive number of seconds.
pub fn bench_results(stdout: &str, sizes: usize, modes: &[&str]) -> Vec<serde_json::Value> {
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).expect("bench prints JSON");
    let results = json["results"].as_array().expect("a results array").clone();
    assert_eq!(results.len(), sizes, "{json}");
    for r in &results {
        for mode in modes {
            assert!(r[*mode]["seconds"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    results
}
