//! The bundled examples through the command line: `adjit check` passes on
//! each of them, and `adjit bench` draws its plot.

mod common;

use common::cli::{adjit, bench_results};
use std::process::Command;

#[test]
fn check_passes_on_every_example() {
    let cases: [&[&str]; 4] = [
        &[
            "examples/naumann.f90",
            "--of",
            "x",
            "--wrt",
            "x,y",
            "--set",
            "x=-5",
            "--set",
            "y=-0.5",
        ],
        &[
            "examples/griewank.f90",
            "--of",
            "c",
            "--wrt",
            "a",
            "--set",
            "s=5",
            "--set",
            "a=1",
        ],
        &[
            "examples/product.f90",
            "--of",
            "y",
            "--wrt",
            "x",
            "--set",
            "n=6",
            "--set",
            "x=1,2,3,4,5,6",
        ],
        &[
            "examples/bratu.f",
            "--of",
            "f",
            "--wrt",
            "x,prm",
            "--set",
            "dim=7",
            "--set",
            "parmax=2",
            "--set",
            "x=1.72,3.45,4.16,4.87,4.16,3.45,1.72",
            "--set",
            "prm=1.3,0.245828",
        ],
    ];
    for case in cases {
        let mut args = vec!["check"];
        args.extend_from_slice(case);
        let (code, stdout, stderr) = adjit(&args);
        assert_eq!(code, 0, "{args:?}\n{stdout}{stderr}");
        assert!(
            stdout.contains("ok: adjoint, tangent and finite differences agree"),
            "{stdout}"
        );
    }
}

#[test]
fn bench_prints_a_table_and_draws_a_plot() {
    let dir = std::env::temp_dir().join(format!("adjit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("griewank.svg");
    let plot_arg = plot.to_str().unwrap();
    let (code, stdout, stderr) = adjit(&[
        "bench",
        "examples/griewank.f90",
        "--of",
        "c",
        "--wrt",
        "a",
        "--set",
        "a=1",
        "--size",
        "s=10,100",
        "--plot",
        plot_arg,
        "--json",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    bench_results(&stdout, 2, &["primal", "adjoint", "tangent", "fd"]);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("finite differences"),
        "{svg}"
    );
    // The PNG next to it: a 900 x 620 image (PNG signature, IHDR), and
    // not a blank one (a white image compresses to a few hundred bytes).
    let png = std::fs::read(dir.join("griewank.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    assert_eq!((be(&png[16..20]), be(&png[20..24])), (900, 620));
    assert!(png.len() > 10_000, "{} bytes", png.len());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn repl_defines_runs_and_differentiates_typed_source() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .arg("repl")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let script = "subroutine cube(x, y)\n  double precision x, y\n  y = x*x*x\nend subroutine\n\
                  run --set x=2\ngrad --of y --wrt x --set x=2 --json\nquit\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("y = 8.0"), "{stdout}");
    assert!(
        stdout.contains("{\"value\": 8.0, \"gradient\": {\"x\": 12.0}}"),
        "{stdout}"
    );
}
