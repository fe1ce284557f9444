//! The reverse sweep's store-versus-recompute rule and self-increments:
//! library-call results the reverse sweep needs come from the value stack
//! (Bratu's reverse sweep calls no `exp`), a self-increment `y(i) = y(i) + e`
//! keeps `y_b(i)` instead of resetting and re-adding it, statements of a
//! block calling the library on the same unchanged arguments share one
//! push (and not once an argument changed in between), and the gradients
//! of such statements match their analytic values in both modes.
//! (Tangent against adjoint, the dot-product identity and finite differences
//! of the same statements run on the corpus program `self_increment.f90`.)

mod common;

use adjit::engine::Engine;
use common::cli::adjit;

/// The IR of the procedure `name` in `adjit emit ... --format ir` output.
fn proc_text<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .find(&format!("proc {name}("))
        .unwrap_or_else(|| panic!("no proc {name} in\n{ir}"));
    let rest = &ir[start..];
    let end = rest[1..].find("\nproc ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// Instructions `= OP ` in an IR text.
fn count(text: &str, op: &str) -> usize {
    text.lines()
        .filter(|l| l.contains(&format!("= {op} ")))
        .count()
}

#[test]
fn bratu_reverse_sweep_pops_the_exp_results_instead_of_calling_exp() {
    let (code, ir, err) = adjit(&[
        "emit",
        "examples/bratu.f",
        "--mode",
        "adjoint",
        "--of",
        "f",
        "--wrt",
        "x,prm",
        "--format",
        "ir",
    ]);
    assert_eq!(code, 0, "{err}");
    let (fwd, rev) = (proc_text(&ir, "bratu_fwd"), proc_text(&ir, "bratu_rev"));
    // Seven statements call exp once each.
    assert_eq!(count(fwd, "exp"), 7, "{fwd}");
    assert_eq!(count(rev, "exp"), 0, "{rev}");
    // The statements of a block evaluating exp of the same unchanged
    // argument share one push: exp(x(1)/...) of F(1), F(2); the three of
    // the loop body; exp(x(dim)/...) of F(dim-1), F(dim). Besides h.
    assert_eq!(
        fwd.matches("push.value").count(),
        4,
        "one push per distinct exp of a block besides h: {fwd}"
    );
    // The last of each group pops its value into a local the earlier ones
    // read: 4 of the 7 reversed statements read one.
    assert_eq!(rev.matches("store _ad_kept").count(), 3, "{rev}");
    assert_eq!(rev.matches("load _ad_kept").count(), 4, "{rev}");
    // Of the seven statements writing f, five are self-increments
    // (F(i) = F(i) - ..., ...): only F(1) = ..., F(2) = ... and
    // F(i+1) = ... reset their f_b element, and nothing adds it back.
    assert_eq!(rev.matches("store f_b(").count(), 3, "{rev}");
}

/// A self-increment chain with library calls, one trip per element.
const SOURCE: &str = "\
subroutine chain(n, x, y, s)
  integer n
  double precision x(n), y(n), s
  integer i
  do i = 1, n
    y(i) = y(i) + exp(x(i)) * x(i)
    y(i) = y(i) - log(1 + x(i)**2)
    s = s + sin(x(i)) * cos(x(i))
    y(i) = x(i) - y(i)
  end do
end subroutine
";

#[test]
fn self_increments_with_library_calls_have_the_analytic_gradient() {
    let engine = Engine::from_source("chain.f90", SOURCE).unwrap();
    let x = [0.3, -0.7, 1.1, 0.25];
    let n = x.len();
    let mut args = engine.procedure(Some("chain")).unwrap().args();
    args.set_scalar("n", n as f64).unwrap();
    args.set_array("x", &x).unwrap();
    args.set_array("y", &[1.0, 2.0, -1.0, 0.5]).unwrap();
    args.set_scalar("s", 0.75).unwrap();
    // Rows y(1..n), s; columns x(1..n), y(1..n), s.
    let cols = 2 * n + 1;
    let mut expected = vec![0.0; (n + 1) * cols];
    for (i, &xi) in x.iter().enumerate() {
        let row = &mut expected[i * cols..(i + 1) * cols];
        row[i] = 1.0 - xi.exp() * (1.0 + xi) + 2.0 * xi / (1.0 + xi * xi);
        row[n + i] = -1.0;
        expected[n * cols + i] = (2.0 * xi).cos();
    }
    expected[n * cols + 2 * n] = 1.0;
    let bad = common::check::both_modes_against(
        &engine,
        Some("chain"),
        &args,
        "y,s",
        "x,y,s",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Three statements evaluating `exp(x(i)*p)`: the first two share one
/// push; the third follows a write of `x(i)` and is pushed on its own.
const REPEATED: &str = "\
subroutine rep(n, x, p, y)
  integer n
  double precision x(n), p, y(n)
  integer i
  do i = 1, n
    y(i) = exp(x(i) * p)
    y(i) = y(i) + 2 * exp(x(i) * p)
    x(i) = x(i) + 1
    y(i) = y(i) * exp(x(i) * p)
  end do
end subroutine
";

#[test]
fn equal_library_calls_share_a_push_until_an_argument_changes() {
    let dir = std::env::temp_dir().join(format!("adjit_rep_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rep.f90");
    std::fs::write(&file, REPEATED).unwrap();
    let (code, ir, err) = adjit(&[
        "emit",
        file.to_str().unwrap(),
        "--mode",
        "adjoint",
        "--of",
        "y",
        "--wrt",
        "x,p",
        "--format",
        "ir",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    let (fwd, rev) = (proc_text(&ir, "rep_fwd"), proc_text(&ir, "rep_rev"));
    assert_eq!(count(fwd, "exp"), 3, "{fwd}");
    assert_eq!(count(rev, "exp"), 0, "{rev}");
    // Two exp results pushed (the first two statements share one).
    let pushed_exps = fwd
        .lines()
        .filter_map(|l| l.trim().strip_prefix("push.value "))
        .filter(|v| fwd.contains(&format!("{v} = exp ")))
        .count();
    assert_eq!(pushed_exps, 2, "{fwd}");
    assert_eq!(rev.matches("store _ad_kept").count(), 1, "{rev}");
    assert_eq!(rev.matches("load _ad_kept").count(), 1, "{rev}");

    // y(i) = 3 exp(x p) exp((x + 1) p) = 3 exp((2x + 1) p).
    let engine = Engine::from_source("rep.f90", REPEATED).unwrap();
    let x = [0.3, -0.7, 1.1];
    let p = 0.4;
    let n = x.len();
    let mut args = engine.procedure(Some("rep")).unwrap().args();
    args.set_scalar("n", n as f64).unwrap();
    args.set_array("x", &x).unwrap();
    args.set_scalar("p", p).unwrap();
    // Rows y(1..n); columns x(1..n), p.
    let cols = n + 1;
    let mut expected = vec![0.0; n * cols];
    for (i, &xi) in x.iter().enumerate() {
        let e = 3.0 * ((2.0 * xi + 1.0) * p).exp();
        expected[i * cols + i] = 2.0 * p * e;
        expected[i * cols + n] = (2.0 * xi + 1.0) * e;
    }
    let bad = common::check::both_modes_against(
        &engine,
        Some("rep"),
        &args,
        "y",
        "x,p",
        &expected,
        1e-13,
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
