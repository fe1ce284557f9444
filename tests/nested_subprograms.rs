//! FARFEL's nested subprograms (seed 002, section 2, "Extension 2"):
//! lexical scope (parameters and declared variables local, shadowing,
//! implicitly typed variables of the top-level subprogram), nested
//! functions passed to EXTERNAL dummies with their environment (closure
//! conversion), ADF blocks reached through them, nested AD across
//! procedures without perturbation confusion, blanks inside names in fixed
//! form, and the paper's Listing 1 (`examples/eqlbrm.f`) against the
//! equilibrium worked out by hand.

mod common;
use adjit::engine::{Engine, Selection};
use common::scalar::{central, close, run};
use std::io::Write;
use std::process::{Command, Stdio};

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn fixed(src: &str) -> Engine {
    Engine::from_source("nested.f", src).expect("compile")
}

/// A derivative template (`DERIV1` of Listing 1, double precision) and a
/// function applying a procedure.
const TEMPLATES: &str = "
      DOUBLE PRECISION FUNCTION DERIV1(F, X)
      EXTERNAL F
      DOUBLE PRECISION F, X, Y
      ADF(X)
      Y = F(X)
      END ADF(DERIV1 = TANGENT(Y))
      END
      DOUBLE PRECISION FUNCTION APPLY(F, X)
      EXTERNAL F
      DOUBLE PRECISION F, X
      APPLY = F(X)
      END
";

/// A nested function closing over a parameter of its host, passed to
/// templates: its value, and its derivative by an ADF block in the
/// template, agree with the analytic derivative and finite differences;
/// the derivative of that derivative in the closed-over parameter (an
/// outer adjoint and tangent over the inner ADF) is second order.
#[test]
fn closure_passed_to_templates_is_differentiated() {
    let src = format!(
        "{TEMPLATES}
      SUBROUTINE S(P, X, V, D)
      DOUBLE PRECISION P, X, V, D
       DOUBLE PRECISION FUNCTION G(T)
       DOUBLE PRECISION T
       G = SIN(P*T) + P*T*T
       END
      V = APPLY(G, X)
      D = DERIV1(G, X)
      END
"
    );
    let engine = fixed(&src);
    let adj = engine
        .adjoint(Some("s"), &sel("d"), &sel("p,x"), &Default::default())
        .expect("adjoint");
    let tan = engine
        .tangent(Some("s"), &sel("d"), &sel("p,x"), 1)
        .expect("tangent");
    for &(p, x) in &[(0.7, -0.3), (1.3, 0.4), (-2.0, 1.1)] {
        let inputs = [("p", p), ("x", x)];
        let out = run(&engine, "s", &inputs);
        let v = (p * x).sin() + p * x * x;
        assert!(close(out.scalar("v").unwrap(), v, 1e-15));
        let d = out.scalar("d").unwrap();
        let analytic = p * (p * x).cos() + 2.0 * p * x;
        assert!(close(d, analytic, 1e-14), "{d} vs {analytic}");
        assert!(close(d, central(&engine, "s", &inputs, "x", "v"), 1e-7));
        // Second order through the closure's environment.
        let (_, grad) = adj.gradient(&out).expect("gradient");
        let jt = tan.jacobian(&out).expect("tangent jacobian");
        let dp = (p * x).cos() - p * x * (p * x).sin() + 2.0 * x;
        let dx = -p * p * (p * x).sin() + 2.0 * p;
        for (k, (a, e)) in grad.iter().zip([dp, dx]).enumerate() {
            assert!(close(*a, e, 1e-13), "adjoint {k}: {a} vs {e}");
            assert!(close(jt.matrix[k], *a, 1e-13), "tangent {k}");
            let wrt = ["p", "x"][k];
            assert!(close(*a, central(&engine, "s", &inputs, wrt, "d"), 1e-7));
        }
    }
}

/// Scope: a nested function's parameter shadows the host's variable of
/// the same name, its declared variables are its own, and an implicitly
/// typed variable it assigns belongs to the top-level subprogram.
#[test]
fn nested_scope_shadows_and_shares_implicit_variables() {
    let src = "
      SUBROUTINE T(X, Y, R)
       FUNCTION H(X)
       DOUBLE PRECISION Y
       Y = 100
       C = 5
       H = 2*X
       END
      R = H(X+1)
      R = R + C + Y
      END
";
    let engine = fixed(src);
    let out = run(&engine, "t", &[("x", 3.0), ("y", 0.5)]);
    // H(4) = 8 (its X is its parameter), C = 5 (T's), Y = 0.5 (H's Y is
    // its own).
    assert_eq!(out.scalar("r").unwrap(), 8.0 + 5.0 + 0.5);
    assert_eq!(out.scalar("y").unwrap(), 0.5);
}

/// The perturbation-confusion test of the issue with nested subprograms:
/// d/dx [x * d/dy (x + y)] is 1 at any x (a confused implementation gives
/// 2): the inner function closes over the outer one's parameter, which the
/// outer ADF perturbs while the inner ADF perturbs y.
#[test]
fn nested_ad_through_closures_has_no_perturbation_confusion() {
    let src = format!(
        "{TEMPLATES}
      SUBROUTINE PC(X, D)
      DOUBLE PRECISION X, D
       DOUBLE PRECISION FUNCTION OUTER(X)
       DOUBLE PRECISION X
        DOUBLE PRECISION FUNCTION INNER(Y)
        DOUBLE PRECISION Y
        INNER = X + Y
        END
       OUTER = X * DERIV1(INNER, 0.5D0)
       END
      D = DERIV1(OUTER, X)
      END
"
    );
    let engine = fixed(&src);
    for x in [-1.5, 0.0, 2.0, 7.25] {
        let out = run(&engine, "pc", &[("x", x)]);
        assert_eq!(out.scalar("d").unwrap(), 1.0, "at x = {x}");
    }
}

/// Second derivatives where a partial vanishes: d/dx [d/dx x*x] = 2 at
/// x = 0, by nested ADF blocks in nested procedures (a strong zero taken
/// as a constant would give 0).
#[test]
fn nested_ad_at_a_vanishing_partial() {
    let src = format!(
        "{TEMPLATES}
      SUBROUTINE SECOND(X, D2)
      DOUBLE PRECISION X, D2
       DOUBLE PRECISION FUNCTION SQ(T)
       DOUBLE PRECISION T
       SQ = T*T
       END
       DOUBLE PRECISION FUNCTION DSQ(T)
       DOUBLE PRECISION T
       DSQ = DERIV1(SQ, T)
       END
      D2 = DERIV1(DSQ, X)
      END
"
    );
    let engine = fixed(&src);
    for x in [0.0, 1.0, -3.0] {
        let out = run(&engine, "second", &[("x", x)]);
        assert_eq!(out.scalar("d2").unwrap(), 2.0, "at x = {x}");
    }
}

/// Blanks are insignificant in fixed form: `Y PRIME` is `YPRIME` in
/// expressions, declarations, assignment targets, DO variables, CALL
/// arguments and ADF seeds and results, while `DO I = 1, 3` stays a DO
/// statement; free form keeps blanks significant (a located error).
#[test]
fn blanks_inside_names_in_fixed_form() {
    let src = "
      SUBROUTINE S(YPRIME, R)
      DO 10 I = 1, 3
   10 R = R + Y PRIME * I
      END

      SUBROUTINE T(X, R, D)
      DOUBLE PRECISION X, R, D, Y PRIME, Z VAL
      Z VAL(K) = K * Y PRIME
      Y PRIME = 2*X
      DO 10 I COUNT = 1, 3
   10 R = R + Y PRIME * I COUNT
      DO I = 1, 2
        R = R + Z VAL(I)
      END DO
      IF (R .GT. 0) Y PRIME = Y PRIME + 1
      CALL ADD(Y PRIME, R)
      ADF(X)
        Y PRIME = X**3
      END ADF(D = TANGENT(Y PRIME))
      END

      SUBROUTINE ADD(A, B)
      DOUBLE PRECISION A, B
      B = B + A
      END
";
    let engine = fixed(src);
    let out = run(&engine, "s", &[("yprime", 2.0), ("r", 1.0)]);
    assert_eq!(out.scalar("r").unwrap(), 13.0);
    // r = 2x (1 + 2 + 3) + (1 + 2) 2x, then y prime = 2x + 1 is added.
    let x = 1.5;
    let out = run(&engine, "t", &[("x", x), ("r", 0.0)]);
    assert_eq!(out.scalar("r").unwrap(), 12.0 * x + 6.0 * x + 2.0 * x + 1.0);
    assert_eq!(out.scalar("d").unwrap(), 3.0 * x * x);
    let free = "subroutine s(yprime, r)\n  r = y prime\nend subroutine\n";
    let err = Engine::from_source("s.f90", free).err().expect("free form");
    assert!(err.to_string().contains("s.f90:2:"), "{err}");
    let free = "subroutine s(yprime, r)\n  y prime = r\nend subroutine\n";
    let err = Engine::from_source("s.f90", free).err().expect("free form");
    assert!(err.to_string().contains("s.f90:2:"), "{err}");
}

/// A nested function reading an array of its host (bounds from a host
/// variable), passed to the templates: its value, its derivative by the
/// template's ADF block, and the derivative of that in the array's
/// elements (outer adjoint and tangent through the closure's environment)
/// agree with the analytic values and finite differences.
#[test]
fn closure_over_an_array_is_differentiated() {
    let src = format!(
        "{TEMPLATES}
      SUBROUTINE S(N, A, X, V, D)
      INTEGER N
      DOUBLE PRECISION A(N), X, V, D
       DOUBLE PRECISION FUNCTION G(T)
       DOUBLE PRECISION T
       INTEGER I
       G = 0
       DO 10 I = 1, N
   10  G = G + A(I) * T**I
       END
      V = APPLY(G, X)
      D = DERIV1(G, X)
      END
"
    );
    let engine = fixed(&src);
    let adj = engine
        .adjoint(Some("s"), &sel("d"), &sel("a,x"), &Default::default())
        .expect("adjoint");
    let tan = engine
        .tangent(Some("s"), &sel("d"), &sel("a,x"), 1)
        .expect("tangent");
    let a = [1.5, -2.0, 0.5, 3.0];
    for &x in &[0.5, -1.25] {
        let p = engine.procedure(Some("s")).expect("s");
        let mut args = p.args();
        args.set_scalar("n", 4.0).unwrap();
        args.set_array("a", &a).unwrap();
        args.set_scalar("x", x).unwrap();
        let entry = args.clone();
        p.call(&mut args).expect("call");
        let pw = |k: i32| x.powi(k);
        let v: f64 = (0..4).map(|i| a[i] * pw(i as i32 + 1)).sum();
        let d: f64 = (0..4).map(|i| a[i] * (i + 1) as f64 * pw(i as i32)).sum();
        assert!(close(args.scalar("v").unwrap(), v, 1e-15));
        assert!(close(args.scalar("d").unwrap(), d, 1e-14));
        // d(d)/da_i = i x^(i-1), d(d)/dx = sum a_i i (i-1) x^(i-2).
        let mut expected: Vec<f64> = (0..4).map(|i: i32| f64::from(i + 1) * pw(i)).collect();
        expected.push(
            (1..4)
                .map(|i| a[i] * ((i + 1) * i) as f64 * pw(i as i32 - 1))
                .sum(),
        );
        let (_, grad) = adj.gradient(&entry).expect("gradient");
        let jt = tan.jacobian(&entry).expect("tangent");
        for (k, e) in expected.iter().enumerate() {
            assert!(close(grad[k], *e, 1e-13), "adjoint {k}: {} vs {e}", grad[k]);
            assert!(close(jt.matrix[k], *e, 1e-13), "tangent {k}");
        }
        // FD of d in a(2).
        let h = 1e-6;
        let at = |delta: f64| {
            let mut shifted = a;
            shifted[1] += delta;
            let mut args = entry.clone();
            args.set_array("a", &shifted).unwrap();
            p.call(&mut args).expect("call");
            args.scalar("d").unwrap()
        };
        assert!(close((at(h) - at(-h)) / (2.0 * h), expected[1], 1e-7));
    }
}

/// A nested function reading a CHARACTER variable of its host passed as an
/// argument: the string chooses the branch; a character array is a
/// located error.
#[test]
fn closure_over_character_variables() {
    let src = format!(
        "{TEMPLATES}
      SUBROUTINE S(K, X, V, D)
      INTEGER K
      DOUBLE PRECISION X, V, D
      CHARACTER*6 MODE
       DOUBLE PRECISION FUNCTION G(T)
       DOUBLE PRECISION T
       IF (MODE .EQ. 'CUBE') THEN
         G = T**3
       ELSE
         G = SIN(T)
       END IF
       END
      MODE = 'SINE'
      IF (K .EQ. 3) MODE = 'CUBE'
      V = APPLY(G, X)
      D = DERIV1(G, X)
      END
"
    );
    let engine = fixed(&src);
    let x = 0.7;
    let cube = run(&engine, "s", &[("k", 3.0), ("x", x)]);
    assert!(close(cube.scalar("v").unwrap(), x * x * x, 1e-15));
    assert!(close(cube.scalar("d").unwrap(), 3.0 * x * x, 1e-15));
    let sine = run(&engine, "s", &[("k", 1.0), ("x", x)]);
    assert!(close(sine.scalar("v").unwrap(), x.sin(), 1e-15));
    assert!(close(sine.scalar("d").unwrap(), x.cos(), 1e-15));
    let bad = src
        .replace("CHARACTER*6 MODE", "CHARACTER*6 MODE(2)")
        .replace("MODE ", "MODE(1) ")
        .replace("MODE=", "MODE(1)=");
    let err = Engine::from_source("chr.f", &bad)
        .err()
        .expect("character array closure");
    let text = err.to_string();
    assert!(text.contains("chr.f:"), "{text}");
    assert!(text.contains("character array `mode`"), "{text}");
}

/// Runs `adjit run FILE` with `stdin`; returns standard output.
fn adjit_run(file: &str, stdin: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adjit"))
        .args(["run", file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("adjit");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn numbers(s: &str) -> Vec<f64> {
    s.split_whitespace()
        .map(|w| w.parse().expect("a number"))
        .collect()
}

/// Listing 1 of seed 002 runs from its PROGRAM and prints the equilibrium.
/// By hand: A(a, b) = 10a - 0.05a² - 0.1ab is maximal in a at
/// a = 100 - b, and B(a, b) = 9.995b - 0.05b² - 0.0999ab in b at
/// b = 99.95 - 0.999a; together a = 0.05 / 0.001 = 50 and b = 50. The
/// listing computes in single precision, where F(a*) = 0.05 - 0.001a* is
/// the difference of numbers near 100 (rounding 1e-5, over a slope of
/// 1e-3: about 0.01 in a*), so the check is to 0.05.
#[test]
fn eqlbrm_prints_the_equilibrium() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/eqlbrm.f");
    for (a0, b0) in [(1.0, 1.0), (80.0, 20.0)] {
        let out = numbers(&adjit_run(file, &format!("{a0}\n{b0}\n10\n")));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!((out[0] - 50.0).abs() < 0.05, "a* = {}", out[0]);
        assert!((out[1] - 50.0).abs() < 0.05, "b* = {}", out[1]);
    }
}

/// The same listing in double precision (IMPLICIT DOUBLE PRECISION in
/// every subprogram, constants in double precision) finds the equilibrium
/// to rounding.
#[test]
fn eqlbrm_in_double_precision_is_exact_to_rounding() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/eqlbrm.f"))
        .expect("example");
    let mut src = String::new();
    for line in text.lines() {
        let mut line = line.to_string();
        for c in ["0.1*", "0.05*", "0.0999*", "10.005-"] {
            let d = c.replacen(['*', '-'], "", 1);
            line = line.replace(c, &format!("{d}D0{}", &c[c.len() - 1..]));
        }
        src.push_str(&line);
        src.push('\n');
        let code = line.get(6..).unwrap_or("").trim_start();
        if ["FUNCTION ", "SUBROUTINE ", "PROGRAM "]
            .iter()
            .any(|k| code.starts_with(k))
        {
            src.push_str("      IMPLICIT DOUBLE PRECISION (A-H, O-Z)\n");
        }
    }
    let dir = std::env::temp_dir().join(format!("adjit-eqlbrm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("eqlbrm_double.f");
    std::fs::write(&file, src).expect("write");
    let out = numbers(&adjit_run(file.to_str().unwrap(), "3\n7\n6\n"));
    std::fs::remove_dir_all(&dir).ok();
    assert!((out[0] - 50.0).abs() < 1e-8, "a* = {}", out[0]);
    assert!((out[1] - 50.0).abs() < 1e-8, "b* = {}", out[1]);
}
