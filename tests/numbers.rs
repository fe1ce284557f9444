//! Numbers through the command line are read correctly rounded and written
//! so that they read back as the same double: 2000 random 17-digit decimals
//! (exponents -300..300, both signs, subnormals) given by `--input` and by
//! `--set`, printed back by `run`, `grad` and `jacobian`, as JSON and as
//! text, must all be the double that Rust's own (correctly rounded) parser
//! makes of the decimal, bit for bit. INTEGER(8) values beyond 2**53 are
//! read exactly.

mod common;

use common::check::Rng;
use std::process::Command;

/// `y = x` element by element, and `s = sum(c*x)` (so that the gradient of
/// `s` with respect to `x` is `c` exactly).
const SOURCE: &str = "\
subroutine copy(n, x, c, y, s)
  integer n
  double precision x(n), c(n), y(n), s
  integer i
  s = 0
  do i = 1, n
    y(i) = x(i)
    s = s + c(i)*x(i)
  end do
end subroutine
";

const COUNT: usize = 2000;

/// `COUNT` decimals with 17 significant digits: exponents -300..=300, one
/// in ten subnormal (exponents -323..=-309), both signs.
fn decimals(seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    (0..COUNT)
        .map(|k| {
            let sign = if rng.below(2) == 0 { "" } else { "-" };
            let lead = 1 + rng.below(9);
            let digits: String = (0..16)
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            let exponent = if k % 10 == 9 {
                -309 - rng.below(15) as i64
            } else {
                rng.below(601) as i64 - 300
            };
            format!("{sign}{lead}.{digits}e{exponent}")
        })
        .collect()
}

/// `adjit ARGS...`'s standard output; the command must succeed.
fn adjit(args: &[&str]) -> String {
    let (code, stdout, stderr) = common::cli::adjit(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

/// The numbers of the JSON array (or first row of a matrix) that follows
/// `"key": ` in `json`, parsed from their text by Rust's parser (not by
/// serde_json).
fn json_array(json: &str, key: &str) -> Vec<f64> {
    let start = json
        .find(&format!("\"{key}\": ["))
        .unwrap_or_else(|| panic!("no array {key} in {}", &json[..json.len().min(300)]));
    let rest = &json[start + key.len() + 5..];
    let end = rest.find(']').unwrap();
    rest[..end]
        .split(',')
        .map(|t| t.trim().trim_start_matches('[').parse::<f64>().unwrap())
        .collect()
}

/// Elements that differ from the decimals' correctly rounded doubles.
fn mismatches(what: &str, decimals: &[String], got: &[f64]) -> Vec<String> {
    assert_eq!(got.len(), decimals.len(), "{what}: element count");
    decimals
        .iter()
        .zip(got)
        .filter(|(d, g)| d.parse::<f64>().unwrap().to_bits() != g.to_bits())
        .map(|(d, g)| format!("{what}: {d} came back as {g:e}"))
        .collect()
}

struct Setup {
    dir: std::path::PathBuf,
    file: String,
}

impl Setup {
    fn new(tag: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!("adjit-numbers-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("copy.f90");
        std::fs::write(&file, SOURCE).unwrap();
        let file = file.to_str().unwrap().to_string();
        Setup { dir, file }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

fn report(bad: Vec<String>) {
    assert!(
        bad.is_empty(),
        "{} number(s) not read or written exactly, e.g.\n{}",
        bad.len(),
        bad.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn random_doubles_round_trip_through_input_json() {
    let setup = Setup::new("input");
    let xs = decimals(0x9E37_79B9_7F4A_7C15);
    let input = setup.dir.join("in.json");
    std::fs::write(
        &input,
        format!("{{\"n\": {COUNT}, \"x\": [{}]}}", xs.join(", ")),
    )
    .unwrap();
    let input = input.to_str().unwrap();
    let out = adjit(&["run", &setup.file, "--input", input, "--json"]);
    let mut bad = mismatches("run --input --json, x", &xs, &json_array(&out, "x"));
    bad.extend(mismatches(
        "run --input --json, y",
        &xs,
        &json_array(&out, "y"),
    ));
    report(bad);
}

#[test]
fn random_doubles_round_trip_through_set_and_every_output() {
    let setup = Setup::new("set");
    let xs = decimals(0xD1B5_4A32_D192_ED03);
    let n = format!("n={COUNT}");
    let set_x = format!("x={}", xs.join(","));
    let set_c = format!("c={}", xs.join(","));
    let mut bad = Vec::new();

    // run, JSON and text (long arrays print one element per line).
    let out = adjit(&["run", &setup.file, "--set", &n, "--set", &set_x, "--json"]);
    bad.extend(mismatches("run --set --json", &xs, &json_array(&out, "y")));
    let out = adjit(&[
        "run",
        &setup.file,
        "--set",
        &n,
        "--set",
        &set_x,
        "--print",
        "y",
    ]);
    let text: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix('['))
        .map(|l| l.split_once("] ").unwrap().1.parse().unwrap())
        .collect();
    bad.extend(mismatches("run --set (text)", &xs, &text));

    // grad and jacobian: ds/dx = c exactly, in both modes.
    for mode in ["adjoint", "tangent"] {
        let common = [
            &setup.file[..],
            "--of",
            "s",
            "--wrt",
            "x",
            "--mode",
            mode,
            "--set",
            &n,
            "--set",
            &set_c,
            "--set",
            "x=1",
        ];
        let out = adjit(&[&["grad"][..], &common, &["--json"]].concat());
        bad.extend(mismatches(
            &format!("grad --mode {mode} --json"),
            &xs,
            &json_array(&out, "x"),
        ));
        let out = adjit(&[&["grad"][..], &common].concat());
        let text: Vec<f64> = out
            .lines()
            .filter(|l| l.trim_start().starts_with("x("))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        bad.extend(mismatches(
            &format!("grad --mode {mode} (text)"),
            &xs,
            &text,
        ));
        let out = adjit(&[&["jacobian"][..], &common, &["--json"]].concat());
        bad.extend(mismatches(
            &format!("jacobian --mode {mode} --json"),
            &xs,
            &json_array(&out, "matrix"),
        ));
        let out = adjit(&[&["jacobian"][..], &common].concat());
        let row = out.lines().nth(1).unwrap();
        let text: Vec<f64> = row
            .split_whitespace()
            .skip(1)
            .map(|t| t.parse().unwrap())
            .collect();
        bad.extend(mismatches(
            &format!("jacobian --mode {mode} (text)"),
            &xs,
            &text,
        ));
    }
    report(bad);
}

#[test]
fn non_finite_values_are_written_as_strings_and_read_back() {
    let setup = Setup::new("nonfinite");
    let out = adjit(&[
        "run",
        &setup.file,
        "--set",
        "n=3",
        "--set",
        "x=nan,inf,-inf",
        "--json",
    ]);
    assert!(
        out.contains(r#""y": ["NaN", "Infinity", "-Infinity"]"#),
        "{out}"
    );
    // The JSON written reads back through --input.
    let input = setup.dir.join("in.json");
    std::fs::write(
        &input,
        r#"{"n": 3, "x": ["NaN", "Infinity", "-Infinity"], "s": "NaN"}"#,
    )
    .unwrap();
    let out = adjit(&[
        "run",
        &setup.file,
        "--input",
        input.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.contains(r#""y": ["NaN", "Infinity", "-Infinity"]"#),
        "{out}"
    );
}

#[test]
fn integer8_values_beyond_2_pow_53_are_read_exactly() {
    let setup = Setup::new("int8");
    let file = setup.dir.join("ints.f90");
    std::fs::write(
        &file,
        "subroutine ints(k, a, m)\n  integer(8) k, a(3)\n  integer m\n  k = k + 0\n  m = m + 0\nend subroutine\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let values = [
        "9007199254740993",
        "-9223372036854775808",
        "9223372036854775807",
    ];
    let expected = format!("\"a\": [{}]", values.join(", "));
    let out = adjit(&[
        "run",
        f,
        "--set",
        "k=9007199254740993",
        "--set",
        &format!("a={}", values.join(",")),
        "--json",
    ]);
    assert!(out.contains("\"k\": 9007199254740993"), "{out}");
    assert!(out.contains(&expected), "{out}");
    let input = setup.dir.join("in.json");
    std::fs::write(
        &input,
        format!(
            "{{\"k\": 9007199254740993, \"a\": [{}]}}",
            values.join(", ")
        ),
    )
    .unwrap();
    let out = adjit(&["run", f, "--input", input.to_str().unwrap(), "--json"]);
    assert!(out.contains("\"k\": 9007199254740993"), "{out}");
    assert!(out.contains(&expected), "{out}");
    // An INTEGER(4) value out of range is a usage error, not a wrapped
    // value.
    let status = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(["run", f, "--set", "m=2147483648"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&status.stderr).contains("out of range"));
}
