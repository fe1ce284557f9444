//! ENTRY points and BLOCK arrays sized by locals against analytic
//! derivatives, in tangent and adjoint mode through the command line
//! (the corpus programs `entry_points.f` and `block_local_bounds.f90`; the
//! corpus-wide tests compare them with gfortran, the dot product and finite
//! differences).

use std::path::Path;
use std::process::Command;

/// `adjit grad FILE ARGS... --json` in `mode`: (value, gradient by name).
fn grad(file: &str, args: &[&str], mode: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .arg("grad")
        .arg(&path)
        .args(args)
        .args(["--mode", mode, "--json"])
        .output()
        .expect("cannot start adjit");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

fn close(got: &serde_json::Value, want: f64) {
    let got = got.as_f64().unwrap();
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{got} != {want}"
    );
}

#[test]
fn an_entry_evaluates_with_the_save_variables_another_entry_set() {
    // SETP(a, 2) stores p = a, q = 2a; EVALP(x, y): y = p x^2 + sin(q x).
    let (a, x) = (1.5f64, 0.25f64);
    for mode in ["adjoint", "tangent"] {
        let g = grad(
            "entry_points.f",
            &[
                "--entry", "driver", "--set", "a=1.5", "--set", "x=0.25", "--of", "y", "--wrt",
                "a,x",
            ],
            mode,
        );
        close(&g["value"], a * x * x + (2.0 * a * x).sin());
        close(&g["gradient"]["a"], x * x + 2.0 * x * (2.0 * a * x).cos());
        close(
            &g["gradient"]["x"],
            2.0 * a * x + 2.0 * a * (2.0 * a * x).cos(),
        );
    }
}

#[test]
fn a_function_entry_returns_through_its_own_name() {
    // v(2) = G(x + a): t^3 then t + exp(-t) with t = (x + a)^3.
    let (a, x) = (-0.75f64, 2.0f64);
    let s = x + a;
    let t = s * s * s;
    for mode in ["adjoint", "tangent"] {
        let g = grad(
            "entry_points.f",
            &[
                "--entry", "driver", "--set", "a=-0.75", "--set", "x=2", "--of", "v(2)", "--wrt",
                "x",
            ],
            mode,
        );
        close(&g["value"], t + (-t).exp());
        close(&g["gradient"]["x"], 3.0 * s * s * (1.0 - (-t).exp()));
    }
}

#[test]
fn block_arrays_are_sized_on_each_entry() {
    // z = prod over k of (1 + x^2 m_k), m_k = n - 2 + k.
    let (n, x) = (4.0f64, 0.7f64);
    let m: Vec<f64> = (1..=3).map(|k| n - 2.0 + k as f64).collect();
    let z: f64 = m.iter().map(|m| 1.0 + x * x * m).product();
    let dz: f64 = z * m
        .iter()
        .map(|m| 2.0 * x * m / (1.0 + x * x * m))
        .sum::<f64>();
    for mode in ["adjoint", "tangent"] {
        let g = grad(
            "block_local_bounds.f90",
            &["--set", "n=4", "--set", "x=0.7", "--of", "z", "--wrt", "x"],
            mode,
        );
        close(&g["value"], z);
        close(&g["gradient"]["x"], dz);
    }
}
