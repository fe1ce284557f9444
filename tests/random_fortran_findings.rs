//! Minimised reproducers of the bugs the random-program tester
//! (`tests/random_fortran.rs`) found, each against values worked out by
//! hand, and variants written around them. Each one that is a finding
//! failed on the code the tester ran against and is a live regression test
//! now that its fix has landed; a finding still open is `#[ignore]`d with
//! the reason (run those with `cargo test --release --test
//! random_fortran_findings -- --ignored`).

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Args, Backend, Engine, FiniteDifferences, Options, Selection};

/// The Jacobian of `of` with respect to `wrt` at `settings`, by tangent,
/// by reverse sweeps of one tape, and by central differences (each from an
/// engine of its own), as `[tangent, adjoint, fd]` row-major matrices.
fn jacobians(source: &str, entry: &str, of: &str, wrt: &str, settings: &[&str]) -> [Vec<f64>; 3] {
    jacobians_on(source, entry, of, wrt, settings, Backend::Jit, 4)
}

/// The engine of a finding's single source file `finding.f90` on
/// `backend`.
fn engine_on(source: &str, backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("finding.f90".into(), source.into())], options)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The arguments of `top` after one primal call with `settings` on
/// `backend`.
fn top_called_on(source: &str, settings: &[&str], backend: Backend) -> Args {
    let p = engine_on(source, backend).procedure(Some("top")).unwrap();
    let mut args = p.args();
    args.apply_settings(settings).unwrap();
    p.call(&mut args).unwrap();
    args
}

/// [`jacobians`] on a given backend, with `directions` tangent directions
/// per sweep.
fn jacobians_on(
    source: &str,
    entry: &str,
    of: &str,
    wrt: &str,
    settings: &[&str],
    backend: Backend,
    directions: usize,
) -> [Vec<f64>; 3] {
    let (of, wrt) = (
        Selection::parse_list(of).unwrap(),
        Selection::parse_list(wrt).unwrap(),
    );
    let engine = || engine_on(source, backend);
    let e = engine();
    let primal = e.procedure(Some(entry)).unwrap();
    let mut args = primal.args();
    args.apply_settings(settings).unwrap();
    let flat = |j: adjit::engine::Jacobian| -> Vec<f64> {
        (0..j.rows())
            .flat_map(|r| (0..j.cols()).map(move |c| (r, c)))
            .map(|(r, c)| j.get(r, c))
            .collect()
    };
    let tangent = engine()
        .tangent(Some(entry), &of, &wrt, directions)
        .unwrap()
        .jacobian(&args)
        .unwrap();
    let adjoint = engine()
        .adjoint(Some(entry), &of, &wrt, &AdjointOptions::default())
        .unwrap()
        .jacobian(&args)
        .unwrap();
    let fd = FiniteDifferences::new(&primal)
        .jacobian(&args, &of, &wrt)
        .unwrap();
    [flat(tangent), flat(adjoint), flat(fd)]
}

/// Asserts tangent and adjoint equal `expected` (to round-off) and finite
/// differences come close.
fn assert_jacobians(got: [Vec<f64>; 3], expected: &[f64]) {
    let [t, a, fd] = got;
    for (what, v, tol) in [
        ("tangent", &t, 1e-12),
        ("adjoint", &a, 1e-12),
        ("fd", &fd, 1e-6),
    ] {
        assert_eq!(v.len(), expected.len());
        for (k, (x, e)) in v.iter().zip(expected).enumerate() {
            assert!(
                (x - e).abs() <= tol * e.abs().max(1.0),
                "{what} entry {k}: {x} instead of {e} (tangent {t:?}, adjoint {a:?}, fd {fd:?})"
            );
        }
    }
}

/// Seed 3 of the first fixed-seed run (reduced by the tester, then by
/// hand): a subroutine overwrites an active INOUT argument with a passive
/// value. The caller's tangent of `t` keeps its value from before the call
/// (`t_d = 2`), so `r = t*x` gets `dr/dx = t + x*t_d = 0.25 + 1 = 1.25`
/// instead of `0.25`. The adjoint and finite differences are right. (No
/// module or global state is involved.)
#[test]
fn tangent_of_inout_overwritten_by_callee_with_passive_value() {
    let source = "
subroutine sub(v)
  double precision, intent(inout) :: v
  v = 0.25d0
end subroutine sub
subroutine top(x, r)
  double precision, intent(in) :: x
  double precision, intent(out) :: r
  double precision :: t
  t = 2d0*x
  call sub(t)
  r = t*x
end subroutine top
";
    // r = 0.25 x.
    assert_jacobians(jacobians(source, "top", "r", "x", &["x=0.5"]), &[0.25]);
}

/// [`assert_jacobians`] of `r` with respect to `x, y` at `x = 0.5, y = 3`,
/// on both backends, in scalar and vector (K = 2) tangent mode.
fn assert_jacobians_everywhere(source: &str, expected: &[f64]) {
    for backend in [Backend::Jit, Backend::Interpreter] {
        for directions in [1, 2] {
            let got = jacobians_on(
                source,
                "top",
                "r",
                "x,y",
                &["x=0.5", "y=3"],
                backend,
                directions,
            );
            assert_jacobians(got, expected);
        }
    }
}

/// The subroutine of the finding above: overwrites its INOUT argument with
/// a passive value.
const PASSIVE_SUB: &str = "
subroutine sub(v)
  double precision, intent(inout) :: v
  v = 0.25d0
end subroutine sub
";

/// Variant of the finding: the actual is an element of an active array.
#[test]
fn passive_overwrite_of_an_array_element_argument() {
    let source = format!(
        "{PASSIVE_SUB}
subroutine top(x, y, r)
  double precision, intent(in) :: x, y
  double precision, intent(out) :: r(2)
  double precision :: a(3)
  a(1) = x
  a(2) = 2d0*x*y
  a(3) = y
  call sub(a(2))
  r(1) = a(2)*x + a(1)
  r(2) = a(2)*y + a(3)*x
end subroutine top
"
    );
    // r1 = 1.25 x, r2 = 0.25 y + x y.
    assert_jacobians_everywhere(&source, &[1.25, 0.0, 3.0, 0.75]);
}

/// Variant: the callee overwrites a whole array argument. (Right before
/// the fix too: element stores do not kill, so the array stays varied.)
#[test]
fn passive_overwrite_of_a_whole_array_argument() {
    let source = "
subroutine suba(v)
  double precision, intent(inout) :: v(2)
  v = 0.25d0
end subroutine suba
subroutine top(x, y, r)
  double precision, intent(in) :: x, y
  double precision, intent(out) :: r(2)
  double precision :: a(2)
  a(1) = x
  a(2) = x*y
  call suba(a)
  r(1) = a(1)*x + a(2)*y
  r(2) = a(2)*x*y
end subroutine top
";
    // r1 = 0.25 (x + y), r2 = 0.25 x y.
    assert_jacobians_everywhere(source, &[0.25, 0.25, 0.75, 0.125]);
}

/// Variant: the callee overwrites a module variable, not an argument.
/// (Right before the fix too: an active global is active everywhere.)
#[test]
fn passive_overwrite_of_a_global_by_a_callee() {
    let source = "
module m
  implicit none
  double precision :: g = 0d0
contains
  subroutine setg()
    g = 0.25d0
  end subroutine setg
  subroutine top(x, y, r)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r(2)
    g = x*y
    call setg()
    r(1) = g*x
    r(2) = g*y + x
  end subroutine top
end module m
";
    // r1 = 0.25 x, r2 = 0.25 y + x.
    assert_jacobians_everywhere(source, &[0.25, 0.0, 1.0, 0.25]);
}

/// Variant: the callee overwrites its argument on one branch only; one
/// call takes it, the other does not. (Right before the fix too: the
/// argument is varied at return through the untaken branch.)
#[test]
fn passive_overwrite_on_one_branch_of_the_callee() {
    let source = "
subroutine subb(v, c)
  double precision, intent(inout) :: v
  double precision, intent(in) :: c
  if (c > 0d0) then
    v = 0.25d0
  end if
end subroutine subb
subroutine top(x, y, r)
  double precision, intent(in) :: x, y
  double precision, intent(out) :: r(2)
  double precision :: t, u
  t = x*y
  call subb(t, x)
  u = 2d0*x*y
  call subb(u, y - 10d0)
  r(1) = t*x
  r(2) = u*y
end subroutine top
";
    // At x = 0.5, y = 3: r1 = 0.25 x, r2 = 2 x y^2.
    assert_jacobians_everywhere(source, &[0.25, 0.0, 18.0, 6.0]);
}

/// Variant: the overwrite happens two calls down, the middle procedure
/// only passes the argument on.
#[test]
fn passive_overwrite_two_calls_down() {
    let source = format!(
        "{PASSIVE_SUB}
subroutine mid(w)
  double precision, intent(inout) :: w
  call sub(w)
end subroutine mid
subroutine top(x, y, r)
  double precision, intent(in) :: x, y
  double precision, intent(out) :: r(2)
  double precision :: t
  t = 2d0*x*y
  call mid(t)
  r(1) = t*x
  r(2) = t*y
end subroutine top
"
    );
    // r = 0.25 (x, y).
    assert_jacobians_everywhere(&source, &[0.25, 0.0, 0.0, 0.25]);
}

/// Seed 0 of the first fixed-seed run, reduced: issue 10 item 1 without
/// any global written in a callee. The entry writes module variable `g`
/// after a call (which does not touch `g`) and reads it nonlinearly for two
/// outputs; the second reverse sweep over the tape gives 0 for `dy2/ds`.
/// Without the call both rows are right.
#[test]
fn global_written_by_the_entry_after_a_call_under_two_reverse_sweeps() {
    let source = "
module m
  implicit none
  double precision :: g = 0d0
contains
  subroutine sub(v)
    double precision, intent(inout) :: v
    v = 2d0*v
  end subroutine sub
  subroutine top(s, y1, y2)
    double precision, intent(in) :: s
    double precision, intent(out) :: y1, y2
    double precision :: r
    r = s
    call sub(r)
    g = s
    y1 = g*g
    y2 = g*g
  end subroutine top
end module m
";
    // y1 = y2 = s^2: both rows 2 s = 6 at s = 3.
    assert_jacobians(
        jacobians(source, "top", "y1,y2", "s", &["s=3"]),
        &[6.0, 6.0],
    );
}

/// Issue 10 item 6 as the tester meets it, at the primal level: with the
/// interpreter backend, `Procedure::call` starts every call from the
/// initial module state, while the JIT (and gfortran) keep it between
/// calls: a counter `cnt = 0.5*cnt + 1` reads 1, 1.5 in the JIT and 1, 1 in
/// the interpreter.
#[test]
fn interpreter_keeps_module_state_between_calls_like_the_jit() {
    let source = "
module m
  implicit none
  double precision :: cnt = 0d0
contains
  subroutine top(r)
    double precision, intent(out) :: r
    cnt = 0.5d0*cnt + 1d0
    r = cnt
  end subroutine top
end module m
";
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = engine_on(source, backend);
        let p = engine.procedure(Some("top")).unwrap();
        let mut values = Vec::new();
        for _ in 0..2 {
            let mut args = p.args();
            p.call(&mut args).unwrap();
            values.push(args.scalar("r").unwrap());
        }
        assert_eq!(values, [1.0, 1.5], "{backend:?}");
    }
}

/// Found while writing the generator: a module array initialised by an
/// array constructor was rejected ("not a constant expression"), in
/// `(/ ... /)` and `[ ... ]` form alike; gfortran accepts both. The
/// values reach the primal on both backends and the derivatives
/// (`r = ga(2) x^2 + gb(2) x`, `dr/dx = 2 ga(2) x + gb(2)`). A DATA
/// statement in a module stays unsupported (located error).
#[test]
fn module_array_initialised_by_an_array_constructor() {
    let source = "
module m
  implicit none
  double precision :: ga(3) = (/ 1.25d0, -0.5d0, 2d0 /)
  double precision :: gb(2) = [3d0, 4d0]
contains
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    r = ga(2) * x**2 + gb(2) * x + ga(1) - ga(3)
  end subroutine top
end module m
";
    assert_top_r_at(source, "x=2", -2.0 + 8.0 + 1.25 - 2.0);
    for backend in [Backend::Jit, Backend::Interpreter] {
        assert_jacobians(
            jacobians_on(source, "top", "r", "x", &["x=2"], backend, 1),
            &[2.0],
        );
    }
    let data = "module m\n  double precision :: gc(2)\n  data gc /5d0, 6d0/\nend module m\n";
    let e = Engine::from_source("finding.f90", data)
        .err()
        .expect("DATA in a module");
    assert!(
        e.message
            .contains("finding.f90:3:3: error: unsupported Fortran: DATA statement in a module"),
        "{}",
        e.message
    );
}

/// Issue 10 item 2 in the tangent (seed 1 of the singular-points class,
/// reduced by hand): `sqrt(max(x, 0))` at `x < 0` is `sqrt(0)`, constant
/// near the point; its tangent multiplies the infinite partial by the zero
/// tangent of `max` and gets NaN. `dy/dx = 1`; the adjoint gets it.
#[test]
fn tangent_strong_zero_at_sqrt_of_zero() {
    let source = "
subroutine top(x, y)
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  y = 3d0*sqrt(max(x, 0d0)) + x
end subroutine top
";
    assert_jacobians(jacobians(source, "top", "y", "x", &["x=-1"]), &[1.0]);
}

/// Issue 10 item 2 in the adjoint (seed 17 of the singular-points class,
/// reduced by the tester, then by hand): a dead store `r = sqrt(0**p)`
/// (overwritten at once) whose adjoint is zero poisons every row with NaN
/// (0 * inf in its reverse sweep), although nothing of it reaches an
/// output. The tangent is right.
#[test]
fn adjoint_strong_zero_at_a_dead_singular_intermediate() {
    let source = "
subroutine top(s, y, r)
  double precision, intent(in) :: s
  double precision, intent(out) :: y(2), r
  y(1) = sin(s)
  y(2) = s
  r = sqrt(max(max(y(2), 0d0)**(2d0 + 0.5d0*sin(y(1))), 0d0))
  r = 2d0*s
end subroutine top
";
    let s: f64 = -1.5;
    assert_jacobians(
        jacobians(source, "top", "y,r", "s", &["s=-1.5"]),
        &[s.cos(), 1.0, 2.0],
    );
}

/// Found by the random-program tester (adjoint gave `0.2872`, only the
/// direct `g*x` term, where tangent and finite differences give `0.5502`):
/// module variable `g` is written by `sub2` from its argument, which `sub3`
/// passes an active local; `sub3` itself never names `g`. The adjoint
/// re-analysed `sub3` in a context of its own parameters and the globals it
/// names, so `g` was not useful there, `t` got no adjoint and the adjoint
/// of `g` stopped at the call. Procedures of [`NESTED_GLOBAL`] for the
/// variants below.
const NESTED_GLOBAL: &str = "
  subroutine sub2(v)
    double precision, intent(inout) :: v
    g = tanh(v)
  end subroutine sub2
  subroutine sub3(a)
    double precision, intent(in) :: a
    double precision :: t
    t = sin(a)
    call sub2(t)
  end subroutine sub3
  subroutine outer(b)
    double precision, intent(in) :: b
    double precision :: s
    s = b*b
    call sub3(s)
  end subroutine outer
  subroutine useg(a, b, r)
    double precision, intent(in) :: a, b
    double precision, intent(out) :: r(2)
    r(1) = g*a
    r(2) = g*b
  end subroutine useg
";

/// Module `m` with global `g`, the procedures of [`NESTED_GLOBAL`] and `top`.
fn nested_global_module(top: &str) -> String {
    format!(
        "module m
  implicit none
  double precision :: g = 0d0
contains
{NESTED_GLOBAL}
{top}
end module m
"
    )
}

/// `d/du tanh(sin(u)) = sech^2(sin u) cos u`.
fn d_tanh_sin(u: f64) -> f64 {
    let th = u.sin().tanh();
    (1.0 - th * th) * u.cos()
}

/// The finding: `g` written two calls down, read by the entry.
#[test]
fn global_written_two_calls_down_read_by_the_entry() {
    let source = nested_global_module(
        "  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    call sub3(x)
    r = g*x
  end subroutine top",
    );
    // r = tanh(sin x) x.
    let x: f64 = 0.3;
    let expected = x.sin().tanh() + x * d_tanh_sin(x);
    assert_jacobians(jacobians(&source, "top", "r", "x", &["x=0.3"]), &[expected]);
}

/// Variant: both inputs, both backends, scalar and vector tangents.
#[test]
fn global_written_two_calls_down_read_by_the_entry_everywhere() {
    let source = nested_global_module(
        "  subroutine top(x, y, r)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r(2)
    call sub3(x)
    r(1) = g*x
    r(2) = g*y
  end subroutine top",
    );
    // r = tanh(sin x) (x, y) at x = 0.5, y = 3.
    let (x, y): (f64, f64) = (0.5, 3.0);
    let (f, df) = (x.sin().tanh(), d_tanh_sin(x));
    assert_jacobians_everywhere(&source, &[f + x * df, 0.0, y * df, f]);
}

/// Variant: one level deeper, `outer` and `sub3` pass the active value on
/// and neither names `g`.
#[test]
fn global_written_three_calls_down_read_by_the_entry() {
    let source = nested_global_module(
        "  subroutine top(x, y, r)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r(2)
    call outer(x)
    r(1) = g*x
    r(2) = g*y
  end subroutine top",
    );
    // r = tanh(sin(x^2)) (x, y).
    let (x, y): (f64, f64) = (0.5, 3.0);
    let (f, df) = ((x * x).sin().tanh(), d_tanh_sin(x * x) * 2.0 * x);
    assert_jacobians_everywhere(&source, &[f + x * df, 0.0, y * df, f]);
}

/// Variant: the entry never names `g` either; another callee reads it.
#[test]
fn global_written_two_calls_down_read_by_another_callee() {
    let source = nested_global_module(
        "  subroutine top(x, y, r)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r(2)
    call sub3(y)
    call useg(x, y, r)
  end subroutine top",
    );
    // r = tanh(sin y) (x, y).
    let (x, y): (f64, f64) = (0.5, 3.0);
    let (f, df) = (y.sin().tanh(), d_tanh_sin(y));
    assert_jacobians_everywhere(&source, &[f, x * df, 0.0, f + y * df]);
}

/// Variant: `g` written one call down (the callee names it), read by
/// another callee; the entry never names it. (Right before the fix too:
/// the writing callee names `g`, so its own context made it useful.)
#[test]
fn global_written_one_call_down_read_by_another_callee() {
    let source = nested_global_module(
        "  subroutine top(x, y, r)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r(2)
    double precision :: t
    t = sin(x)
    call sub2(t)
    call useg(x, y, r)
  end subroutine top",
    );
    // r = tanh(sin x) (x, y).
    let (x, y): (f64, f64) = (0.5, 3.0);
    let (f, df) = (x.sin().tanh(), d_tanh_sin(x));
    assert_jacobians_everywhere(&source, &[f + x * df, 0.0, y * df, f]);
}

/// Campaign finding (seed 500626 of `ADJIT_PROPTEST_SEED=500000`, reduced by
/// hand): an infinite partial meets a zero that only exists by cancellation.
/// `t = min(s*s, s - s)` is 0 for every `s` (the derivative of `s - s` is
/// `1 - 1 = 0`), and `g = sqrt(t)` sits at its singular point. The tangent
/// forms `inf * (1 - 1) = inf * 0`, a strong zero: `dr/ds = 1`, as finite
/// differences say. The adjoint forms `inf * 1 + inf * (-1) = NaN`: the
/// cancellation happens after the multiplication by the infinite partial,
/// where no strong zero could see it. Fixed by summing the partials of an
/// operand used twice by one instruction (`rules::partials`) before they
/// multiply a derivative: `s - s` has the partial 0 in `s` in both modes.
#[test]
fn adjoint_of_an_infinite_partial_times_a_cancelling_difference() {
    let source = "
subroutine top(s, r)
  double precision, intent(in) :: s
  double precision, intent(out) :: r
  double precision :: t, g
  t = min(s*s, s - s)
  g = sqrt(t)
  r = g + s
end subroutine top
";
    assert_jacobians(jacobians(source, "top", "r", "s", &["s=1.5"]), &[1.0]);
}

/// Campaign finding (seed 504450 of `ADJIT_PROPTEST_SEED=500000`, reduced by
/// hand): the cancellation of the finding above spread over two
/// statements. `t = s` then `sqrt(max(t - s, 0d0))`: the square root sits
/// at its singular point behind a `max` tie. With the tie sent to `t - s`,
/// the adjoint of `t - s` is infinite and splits into `+inf` for `t` (hence
/// `s`) and `-inf` for `s`: NaN, which no per-instruction rule can see. At
/// a tie with a constant the derivative goes to the constant (`max(x, 0d0)`
/// is flat at `x = 0`, as a ReLU's derivative at 0), so nothing infinite
/// leaves the `max`.
#[test]
fn adjoint_of_a_safe_sqrt_at_zero_behind_a_cancellation_over_two_statements() {
    let source = "
subroutine top(s, r)
  double precision, intent(in) :: s
  double precision, intent(out) :: r
  double precision :: t, g
  t = s
  g = sqrt(max(t - s, 0d0))
  r = g + s
end subroutine top
";
    assert_jacobians(jacobians(source, "top", "r", "s", &["s=1.5"]), &[1.0]);
}

/// The tie rule of the finding above on its own: `max(x, 0d0)` and
/// `min(0d0, x)` at `x = 0` have the derivative 0 in both modes (the tie
/// goes to the constant), and 1 on the side where `x` is returned.
#[test]
fn a_tie_with_a_constant_goes_to_the_constant() {
    let source = "
subroutine top(x, r)
  double precision, intent(in) :: x
  double precision, intent(out) :: r
  r = max(x, 0d0) + 2d0*min(0d0, x)
end subroutine top
";
    let at = |x: &str| jacobians(source, "top", "r", "x", &[x]);
    let [t, a, _] = at("x=0");
    assert_eq!((t[0], a[0]), (0.0, 0.0));
    assert_jacobians(at("x=0.5"), &[1.0]);
    assert_jacobians(at("x=-0.5"), &[2.0]);
}

/// The program of `shift_source(decl, local)`: `shift` assigns the
/// overlapping `c(2:n) = c(1:n - 1)*c(2:n)` to its dummy declared `decl`,
/// given `w = [x, 2x, 3]` (declared `local` in `top`). Fortran evaluates
/// the right-hand side first: `w = [x, 2x^2, 6x]`, so
/// `r = w(1) + 10 w(2) + 100 w(3) = x + 20x^2 + 600x`.
fn shift_source(decl: &str, local: &str) -> String {
    format!(
        "
module m
contains
  subroutine shift(n, c)
    integer, intent(in) :: n
    double precision, {decl}
    c(2:n) = c(1:n - 1)*c(2:n)
  end subroutine shift
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    double precision, {local}
    w = [x, 2d0*x, 3d0]
    call shift(3, w)
    r = w(1) + 10d0*w(2) + 100d0*w(3)
  end subroutine top
end module m
"
    )
}

/// Array-section campaign finding (seed 20 of the generator with array
/// sections): an assignment to a section of an ALLOCATABLE, assumed-shape
/// or assumed-size dummy whose right-hand side reads the dummy at other
/// elements (`c(2:n) = c(1:n - 1)*c(2:n)`) was rejected ("a temporary copy
/// of `c`, an array of assumed size or shape, as an actual argument"):
/// the right-hand side's temporary was sized by the dummy's declared
/// bounds, which it does not have. Fixed by allocating the temporary to
/// the section's extents. At `x = 0.5`: `r = 305.5`, `dr/dx = 1 + 40x +
/// 600 = 621`.
#[test]
fn overlapping_section_assignment_to_a_dummy_without_fixed_bounds() {
    for (decl, local) in [
        ("intent(inout) :: c(:)", "dimension(3) :: w"),
        ("intent(inout) :: c(*)", "dimension(3) :: w"),
        ("allocatable, intent(inout) :: c(:)", "allocatable :: w(:)"),
    ] {
        let source = shift_source(decl, local);
        assert_top_r(&source, 305.5);
        assert_jacobians(jacobians(&source, "top", "r", "x", &["x=0.5"]), &[621.0]);
    }
}

/// Array-section campaign finding (seed 35 of the generator with array
/// sections, reduced by hand): a function call given a strided section
/// inside an array constructor assigned to an ALLOCATABLE array,
/// `g = [g(1:2), f(g(3:1:-2))]`, was rejected ("array expression or
/// strided section as an actual argument here"): the items of a
/// constructor were not searched for calls needing a temporary. With
/// `g = [x, 2, 3]`, `f(a) = a(1)*a(2)` gets `[3, x]`: `g = [x, 2, 3x]`;
/// `h = [x, 2, 3x]` (beside an implied DO) likewise:
/// `r = g(1) + g(3)*g(2) + h(3) = x + 6x + 3x = 10x`.
#[test]
fn function_given_a_strided_section_inside_an_array_constructor() {
    let source = "
module m
contains
  double precision function f(a)
    double precision, intent(in) :: a(2)
    f = a(1)*a(2)
  end function f
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    double precision :: w(3)
    double precision, allocatable :: g(:), h(:)
    integer :: i
    w = [x, 2d0, 3d0]
    g = w
    h = [(w(i), i = 1, 2), f(w(3:1:-2))]
    g = [g(1:2), f(g(3:1:-2))]
    r = g(1) + g(3)*g(2) + h(3)
  end subroutine top
end module m
";
    assert_top_r(source, 5.0);
    assert_jacobians(jacobians(source, "top", "r", "x", &["x=0.5"]), &[10.0]);
}

/// Array-section campaign finding (seed 1007 of the generator with array
/// sections, reduced by hand): an assignment to a section of an
/// ALLOCATABLE local whose right-hand side reads it at other elements,
/// `h(n:2:-1) = 2*h(1:n - 1)`, stopped with "index 1 outside 1:0" on the
/// right-hand side's temporary, sized by the placeholder bounds of the
/// declaration `h(:)`. With `h(0:n + 1) = x` and `n = 3`: `h(3) = 2h(1)`,
/// `h(2) = 2h(2)`, so `r = sum(h) = 7x`.
#[test]
fn overlapping_section_assignment_to_an_allocatable_local() {
    let source = "
subroutine top(x, r)
  double precision, intent(in) :: x
  double precision, intent(out) :: r
  double precision, allocatable :: h(:)
  integer :: n
  n = 3
  allocate(h(0:n + 1), source=x)
  h(n:2:-1) = 2d0*h(1:n - 1)
  r = sum(h)
end subroutine top
";
    assert_top_r(source, 3.5);
    assert_jacobians(jacobians(source, "top", "r", "x", &["x=0.5"]), &[7.0]);
}

/// Derived-type campaign finding (seed 0 of the generator with derived
/// types, reduced by hand): a WHERE mask reading one element of an array
/// of structures' component (`q(2)%v`) while the construct assigns another
/// element's (`q(1)%v`) is rejected ("a WHERE mask reading `q%v` at other
/// elements than the one assigned"); gfortran accepts it, as the two are
/// different arrays. With `x = 0.5`: `q(1)%v = [x, -x]`, `q(2)%v = [1, 1]`,
/// the mask `[x, -x] > 0` holds for the first element only, so
/// `q(1)%v = [2x, -x]` and `r = q(1)%v(1) - 3 q(1)%v(2) = 5x = 2.5`.
#[test]
fn where_mask_reading_another_structure_of_the_array() {
    let source = "
module m
  type pt
    double precision :: v(2)
  end type pt
contains
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    type(pt) :: q(2)
    q(1) = pt([x, -x])
    q(2) = pt([1d0, 1d0])
    where (q(2)%v*q(1)%v > 0d0)
      q(1)%v = 2d0*q(1)%v
    end where
    r = q(1)%v(1) - 3d0*q(1)%v(2)
  end subroutine top
end module m
";
    assert_top_r(source, 2.5);
    assert_jacobians(jacobians(source, "top", "r", "x", &["x=0.5"]), &[5.0]);
}

/// Derived-type campaign finding (seeds 0 and 11 of the generator with
/// derived types, reduced by hand): under a WHERE mask, an assignment to a
/// section of a structure's array component, `p2%v(1:n:2) = 2*w(1:n:2)`,
/// is rejected ("`p2%v` has 1 dimension(s) but 2 subscript(s) are
/// given"; for an element of an array of structures, `q(1)%v(n:1:-2)`,
/// "`q%v` has 2 dimension(s) but 4 subscript(s)"), and so is reading such a
/// section, or even a scalar component of an element of an array of
/// structures (`max(q(1)%a, g1)` in an arm assigning `m2(n:2:-1, 2)`:
/// "`q%a` has 1 dimension(s) but 2 subscript(s)"), under the mask; the
/// same assignments outside WHERE run.
/// gfortran: with `x = 0.5`, `w = [x, -x, x, 2]`, both mask elements hold,
/// `p2%v = [2x, -x, 2x, 2]`, `r = 7x = 3.5`.
#[test]
fn where_assignment_to_a_section_of_a_structure_component() {
    let source = "
module m
  type pt
    double precision :: v(4)
  end type pt
contains
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    type(pt) :: p2
    double precision :: w(4)
    integer :: n
    n = 3
    w = [x, -x, x, 2d0]
    p2 = pt(w)
    where (w(1:n:2) > 0d0)
      p2%v(1:n:2) = 2d0*w(1:n:2)
    end where
    r = p2%v(1) - 3d0*p2%v(2) + p2%v(3)
  end subroutine top
end module m
";
    assert_top_r(source, 3.5);
    assert_jacobians(jacobians(source, "top", "r", "x", &["x=0.5"]), &[7.0]);
}

/// `top`'s result `r` at `x = 0.5` on the JIT and on the interpreter is
/// `expected`.
fn assert_top_r(source: &str, expected: f64) {
    assert_top_r_at(source, "x=0.5", expected);
}

/// `top`'s result `r` with the input set by `x` (`"x=2"`) on the JIT and
/// on the interpreter is `expected`.
fn assert_top_r_at(source: &str, x: &str, expected: f64) {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let args = top_called_on(source, &[x], backend);
        assert_eq!(args.scalar("r").unwrap(), expected, "{backend:?}");
    }
}

/// Random-program campaign of array intrinsics (seed 1021, reduced by
/// hand): an array constructor with array items as an operand of an array
/// expression (`reshape([x, 2*x], [n, 2])`, `3*[x(1:n-1), x(n)]`) was
/// rejected ("array constructor item that is not a scalar in an array
/// expression"); gfortran accepts both, and so does adjit now (the
/// constructor is assigned to a temporary before the statement).
/// `y = 3x` and `dy/dx = 3 I`.
#[test]
fn array_constructor_of_arrays_inside_an_array_expression() {
    let source = "
module m
  implicit none
contains
  subroutine top(n, x, y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y(n)
    y = sum(reshape([x, 2d0*x], [n, 2]), dim=2)
    y = 0.5d0*y + 1.5d0*[x(1:n - 1), x(n)]
  end subroutine top
end module m
";
    let settings = ["n=2", "x=0.5,-1.25"];
    for backend in [Backend::Jit, Backend::Interpreter] {
        let args = top_called_on(source, &settings, backend);
        assert_eq!(args.f64s("y").unwrap(), [1.5, -3.75], "{backend:?}");
    }
    assert_jacobians(
        jacobians(source, "top", "y", "x", &settings),
        &[3.0, 0.0, 0.0, 3.0],
    );
}

/// Random-program campaign with ASSOCIATE, BLOCK and CHARACTER control
/// flow (seed 1039, reduced by deleting lines:
/// `tests/random_fortran_findings/nondeterministic_stride.f90`): the front
/// end gives the same source different verdicts from run to run. About
/// two compilations in three reject the stride `-2` of `m2(n:1:-2, 2)` in a
/// WHERE body ("expected an integer expression, found real(8)"), the others
/// accept it (the reduced program then stops at run time on the module
/// array it no longer allocates; the unreduced one runs and agrees with
/// gfortran). The verdict also depends on the line numbers: the same
/// program with six comment lines above it is accepted every time. Open:
/// the source of the nondeterminism (a hash-ordered table of the front
/// end keyed by source positions, by the look of it) is not found yet.
#[test]
#[ignore = "open: the front end's verdict on this source changes from run to run"]
fn the_front_end_is_deterministic_on_a_strided_where_body() {
    let source = include_str!("random_fortran_findings/nondeterministic_stride.f90");
    let verdicts: std::collections::BTreeSet<String> = (0..20)
        .map(|_| {
            match Engine::from_sources(&[("finding.f90".into(), source.into())], Options::default())
            {
                Ok(_) => "accepted".to_string(),
                Err(e) => e.to_string(),
            }
        })
        .collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:#?}");
    assert_eq!(verdicts.first().map(String::as_str), Some("accepted"));
}

/// Random-program seed 79 (reduced by hand:
/// `tests/random_fortran_findings/associate_reused_addresses.f90`): JIT,
/// interpreter and gfortran gave three different `r`. The front end keys
/// the reductions it lowers before a statement by the address of their
/// expression; the body of an ASSOCIATE was lowered from a rewritten copy
/// freed at `end associate`, so the copy of a later ASSOCIATE body could
/// reuse those addresses: `((t1)**3)**2` in the second construct read the
/// `sum(...)` hoisted in the first as its exponent. Fixed by keeping the
/// rewritten body alive as long as the lowerer. The values are
/// gfortran's on the same source.
#[test]
fn a_second_associate_body_does_not_read_the_first_ones_reductions() {
    let source = include_str!("random_fortran_findings/associate_reused_addresses.f90");
    let settings = ["n=2", "mode=0", "x=0.5,0.7", "s=0.3"];
    for backend in [Backend::Jit, Backend::Interpreter] {
        let args = top_called_on(source, &settings, backend);
        let y = args.f64s("y").unwrap();
        let r = args.scalar("r").unwrap();
        let expected_y = [0.512338250442899, 0.542338250442899];
        for (got, want) in y.iter().zip(expected_y) {
            assert!((got - want).abs() < 1e-14, "{backend:?}: y {y:?}");
        }
        assert!((r - 1.6836423801938365).abs() < 1e-14, "{backend:?}: r {r}");
        assert_eq!(args.scalar("path").unwrap(), 3.0, "{backend:?}");
    }
}
