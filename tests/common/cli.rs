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
