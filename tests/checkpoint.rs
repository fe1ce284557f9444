//! Binomial checkpointing of loops under `!$AD BINOMIAL-CKP`: the
//! explicit heat equation (100 points, 10^5 time steps) gives the plain
//! adjoint's gradient with 30 snapshots, a tape at least 100 times smaller,
//! and exactly revolve's optimal number of recomputed steps; the gradient
//! also agrees with the tangent (dot product) and with finite differences;
//! the interpreter and the JIT agree; bad directives are located errors.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::ad::checkpoint::revolve;
use adjit::engine::{AdjointStats, Args, Backend, Engine, Options, Selection};

/// The corpus program with the explicit heat equation (`heat`, with a
/// temperature-dependent conductivity: the nonlinearity makes the adjoint
/// record the state at every step) under `!$AD BINOMIAL-CKP nsteps 3 1`.
const HEAT: &str = include_str!("corpus/binomial_ckp.f90");

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn engine(backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("binomial_ckp.f90".into(), HEAT.into())], options).expect("compiles")
}

/// The heat problem's arguments: a smooth initial profile, stable `r`.
fn heat_args(engine: &Engine, n: usize, steps: usize) -> Args {
    let mut args = engine.procedure(Some("heat")).expect("heat").args();
    args.set_scalar("n", n as f64).unwrap();
    args.set_scalar("nsteps", steps as f64).unwrap();
    let u: Vec<f64> = (0..n)
        .map(|i| {
            let x = i as f64 / (n - 1) as f64;
            (std::f64::consts::PI * x).sin() + 0.2 * (7.0 * x).cos()
        })
        .collect();
    args.set_array("u", &u).unwrap();
    args.set_scalar("r", 0.2).unwrap();
    args
}

/// Value, gradient over (u, r) and statistics of one adjoint.
fn gradient(
    engine: &Engine,
    args: &Args,
    options: &AdjointOptions,
) -> (f64, Vec<f64>, AdjointStats) {
    let adjoint = engine
        .adjoint(Some("heat"), &sel("cost"), &sel("u,r"), options)
        .expect("adjoint");
    let jac = adjoint.jacobian(args).expect("runs");
    let grad = (0..jac.cols()).map(|c| jac.get(0, c)).collect();
    (jac.values[0], grad, jac.tape.expect("stats"))
}

fn plain() -> AdjointOptions {
    AdjointOptions {
        checkpoint: false,
        ..AdjointOptions::default()
    }
}

fn snapshots(k: u32) -> AdjointOptions {
    AdjointOptions {
        snapshots: Some(k),
        ..AdjointOptions::default()
    }
}

fn budget(bytes: u64) -> AdjointOptions {
    AdjointOptions {
        tape_budget: Some(bytes),
        ..AdjointOptions::default()
    }
}

fn max_relative_difference(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

#[test]
fn heat_equation_with_30_snapshots() {
    let (n, steps) = (100, 100_000);
    let engine = engine(Backend::Jit);
    let args = heat_args(&engine, n, steps);
    let (v0, g0, s0) = gradient(&engine, &args, &plain());
    let (v1, g1, s1) = gradient(&engine, &args, &snapshots(30));
    assert_eq!(v0, v1, "the primal value");
    let diff = max_relative_difference(&g0, &g1);
    assert!(diff <= 1e-13, "gradients differ by {diff:e}");
    // The plain tape holds at least the recorded state of every step; the
    // checkpointed one at most the stack memory its runtime mapped.
    assert!(
        s0.bytes() >= 100 * s1.tape_mapped_bytes,
        "plain tape {} bytes, checkpointed {} bytes mapped",
        s0.bytes(),
        s1.tape_mapped_bytes
    );
    assert!(s0.bytes() >= 8 * (n * steps) as u64);
    assert_eq!(s0.forward_steps_recomputed, 0);
    assert_eq!(s0.snapshots_peak_bytes, 0);
    // revolve's optimum for 10^5 steps and 30 snapshots: r = 5,
    // t = 5·10^5 − C(35, 4).
    assert_eq!(s1.forward_steps_recomputed, 447_640);
    assert_eq!(
        s1.forward_steps_recomputed,
        revolve::optimal_advances(steps as u64, 30)
    );
    // At most 30 snapshots of the loop's state (u, unew, the DO variables
    // and a few loop temporaries: 2n + 10 words) were held at once.
    assert!(s1.snapshots_peak_bytes >= 8 * 2 * n as u64);
    assert!(s1.snapshots_peak_bytes <= 30 * 8 * (2 * n as u64 + 10));
}

#[test]
fn recomputation_is_revolves_optimum_for_every_snapshot_count() {
    let engine = engine(Backend::Jit);
    for steps in [0usize, 1, 2, 3, 10, 57, 200] {
        let args = heat_args(&engine, 8, steps);
        let (_, g0, _) = gradient(&engine, &args, &plain());
        for k in [1u32, 2, 3, 5, 30, 300] {
            let (_, g, s) = gradient(&engine, &args, &snapshots(k));
            assert_eq!(
                s.forward_steps_recomputed,
                revolve::optimal_advances(steps as u64, u64::from(k)),
                "{steps} steps, {k} snapshots"
            );
            assert!(max_relative_difference(&g0, &g) <= 1e-13);
        }
    }
}

#[test]
fn gradient_against_tangent_and_finite_differences() {
    let (n, steps) = (100, 2000);
    let engine = engine(Backend::Jit);
    let args = heat_args(&engine, n, steps);
    let (_, g, _) = gradient(&engine, &args, &snapshots(7));
    // Dot product: <J xd, 1> = <xd, J^T 1> for a fixed pseudo-random xd.
    let xd: Vec<f64> = (0..=n)
        .map(|i| ((i * 7919 % 113) as f64 / 113.0) - 0.5)
        .collect();
    let tangent = engine
        .tangent(Some("heat"), &sel("cost"), &sel("u,r"), 1)
        .expect("tangent");
    let jxd = tangent.directional(&args, &xd).expect("runs")[0];
    let dot: f64 = g.iter().zip(&xd).map(|(a, b)| a * b).sum();
    let terms: f64 = g.iter().zip(&xd).map(|(a, b)| (a * b).abs()).sum();
    assert!(
        (jxd - dot).abs() <= 1e-13 * terms,
        "dot product {jxd:e} vs {dot:e}"
    );
    // Central differences in r and in u(37).
    let procedure = engine.procedure(Some("heat")).unwrap();
    let cost = |r: f64, du: f64| {
        let mut a = args.clone();
        a.set_scalar("r", r).unwrap();
        let mut u = a.f64s("u").unwrap();
        u[36] += du;
        a.set_array("u", &u).unwrap();
        procedure.call(&mut a).unwrap();
        a.scalar("cost").unwrap()
    };
    let h = 1e-6;
    let fd_r = (cost(0.2 + h, 0.0) - cost(0.2 - h, 0.0)) / (2.0 * h);
    let fd_u = (cost(0.2, h) - cost(0.2, -h)) / (2.0 * h);
    assert!(
        (fd_r - g[n]).abs() <= 1e-6 * g[n].abs().max(1.0),
        "{fd_r} vs {}",
        g[n]
    );
    assert!(
        (fd_u - g[36]).abs() <= 1e-6 * g[36].abs().max(1.0),
        "{fd_u} vs {}",
        g[36]
    );
}

#[test]
fn interpreter_and_jit_agree() {
    for k in [1u32, 4] {
        let jit = engine(Backend::Jit);
        let interp = engine(Backend::Interpreter);
        let (v0, g0, s0) = gradient(&jit, &heat_args(&jit, 20, 150), &snapshots(k));
        let (v1, g1, s1) = gradient(&interp, &heat_args(&interp, 20, 150), &snapshots(k));
        assert_eq!(v0, v1);
        assert_eq!(g0, g1, "bit for bit");
        assert_eq!(s0.forward_steps_recomputed, s1.forward_steps_recomputed);
        assert_eq!(s0.snapshots_peak_bytes, s1.snapshots_peak_bytes);
    }
}

/// The adjoint's error for a program (compiled with default options).
fn adjoint_error(source: &str, options: &AdjointOptions) -> String {
    let engine = Engine::from_sources(&[("bad.f90".into(), source.into())], Options::default())
        .expect("compiles");
    match engine.adjoint(None, &sel("y"), &sel("x"), options) {
        Ok(_) => panic!("the adjoint of {source} should fail"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_directives_are_located_errors() {
    let bare = "subroutine f(n, x, y)
  integer :: n, i
  double precision :: x, y
  y = x
  !$AD BINOMIAL-CKP
  do i = 1, n
    y = sin(y)
  end do
end subroutine f
";
    let e = adjoint_error(bare, &AdjointOptions::default());
    assert!(e.contains("bad.f90:5:3"), "{e}");
    assert!(e.contains("--checkpoints"), "{e}");
    // The bare directive with --checkpoints K is fine.
    let engine = Engine::from_sources(&[("ok.f90".into(), bare.into())], Options::default())
        .expect("compiles");
    assert!(engine
        .adjoint(None, &sel("y"), &sel("x"), &snapshots(2))
        .is_ok());
    let exits = "subroutine f(n, x, y)
  integer :: n, i
  double precision :: x, y
  y = x
  !$AD BINOMIAL-CKP n 2 1
  do i = 1, n
    y = sin(y)
    if (y < 0.1d0) exit
  end do
end subroutine f
";
    let e = adjoint_error(exits, &AdjointOptions::default());
    assert!(e.contains("bad.f90:5:3") && e.contains("EXIT"), "{e}");
    let allocatable = "subroutine f(x, y)
  double precision :: x, y
  double precision, allocatable :: a(:)
  integer :: i
  allocate(a(3))
  !$AD BINOMIAL-CKP 3 2 1
  do i = 1, 3
    a(i) = x * i
  end do
  y = sum(a)
end subroutine f
";
    let e = adjoint_error(allocatable, &AdjointOptions::default());
    assert!(
        e.contains("bad.f90:6:3") && e.contains("allocatable array `a`"),
        "{e}"
    );
    let real_var = "subroutine f(x, y)
  double precision :: x, y, t
  y = x
  !$AD BINOMIAL-CKP 3 2 1
  do t = 1.0d0, 3.0d0
    y = sin(y)
  end do
end subroutine f
";
    let e = match Engine::from_sources(&[("bad.f90".into(), real_var.into())], Options::default()) {
        Ok(_) => panic!("a real DO variable under BINOMIAL-CKP should not compile"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("bad.f90:5:6") && e.contains("integer DO variable"),
        "{e}"
    );
    let bad_arg = "subroutine f(x, y)
  integer :: i
  double precision :: x, y
  y = x
  !$AD BINOMIAL-CKP 3 ) 1
  do i = 1, 3
    y = sin(y)
  end do
end subroutine f
";
    let e = match Engine::from_sources(&[("bad.f90".into(), bad_arg.into())], Options::default()) {
        Ok(_) => panic!("a malformed directive argument should not compile"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("bad.f90:5:23"), "{e}");
}

#[test]
fn command_line_options_and_json_statistics() {
    let base = [
        "grad",
        "tests/corpus/binomial_ckp.f90",
        "--entry",
        "heat",
        "--of",
        "cost",
        "--wrt",
        "u,r",
        "--set",
        "n=6",
        "--set",
        "nsteps=50",
        "--set",
        "u=0.1,0.5,0.2,0.4,0.3,0",
        "--set",
        "r=0.2",
        "--json",
        "--stats",
    ];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (code, out, err) = common::cli::adjit(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON")
    };
    let plain = run(&["--no-checkpoint"]);
    let directive = run(&[]);
    let two = run(&["--checkpoints", "2"]);
    assert_eq!(plain["gradient"], directive["gradient"]);
    assert_eq!(plain["gradient"], two["gradient"]);
    let recomputed = |v: &serde_json::Value| v["stats"]["forward_steps_recomputed"].as_u64();
    assert_eq!(recomputed(&plain), Some(0));
    // The directive asks for 3 snapshots.
    assert_eq!(
        recomputed(&directive),
        Some(revolve::optimal_advances(50, 3))
    );
    assert_eq!(recomputed(&two), Some(revolve::optimal_advances(50, 2)));
    assert!(two["stats"]["snapshots_peak_bytes"].as_u64() > Some(0));
    assert!(plain["stats"]["tape_peak_bytes"].as_u64() > two["stats"]["tape_peak_bytes"].as_u64());
    // Joint, split and linked reversal give the same gradient.
    let joint = run(&["--reversal", "joint"]);
    assert_eq!(plain["gradient"], joint["gradient"]);
    let linked = run(&["--link", "heat:heat_ckp1=weak"]);
    assert_eq!(plain["gradient"], linked["gradient"]);
    // The automatic mode: plain within the budget, checkpointed over it.
    let roomy = run(&["--tape-budget", "1G"]);
    assert_eq!(plain["gradient"], roomy["gradient"]);
    assert_eq!(recomputed(&roomy), Some(0));
    let tight = run(&["--tape-budget", "600"]);
    assert_eq!(plain["gradient"], tight["gradient"]);
    assert!(recomputed(&tight) > Some(0));
    assert!(
        tight["stats"]["tape_peak_bytes"].as_u64() < plain["stats"]["tape_peak_bytes"].as_u64()
    );
    // Usage errors.
    let mut bad = base.to_vec();
    bad.extend_from_slice(&["--link", "heat-step"]);
    let (code, _, err) = common::cli::adjit(&bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--link"), "{err}");
    let mut bad = base.to_vec();
    bad.extend_from_slice(&["--checkpoints", "0"]);
    assert_eq!(common::cli::adjit(&bad).0, 2);
    let mut bad = base.to_vec();
    bad.extend_from_slice(&["--tape-budget", "lots"]);
    let (code, _, err) = common::cli::adjit(&bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a byte count"), "{err}");
    let mut bad = base.to_vec();
    bad.extend_from_slice(&["--tape-budget", "1M", "--no-checkpoint"]);
    assert_eq!(common::cli::adjit(&bad).0, 2);
}

#[test]
fn automatic_mode_follows_the_tape_budget() {
    // The interpreter's tape peak is exact.
    let (n, steps) = (20, 500);
    let engine = engine(Backend::Interpreter);
    let args = heat_args(&engine, n, steps);
    let (v0, g0, s0) = gradient(&engine, &args, &plain());
    // A budget far above the plain tape: every trip is recorded, nothing
    // is recomputed; the measured trip held one snapshot.
    let (v1, g1, s1) = gradient(&engine, &args, &budget(100 * s0.tape_peak_bytes));
    assert_eq!(v0, v1);
    assert_eq!(g0, g1, "the plain adjoint, bit for bit");
    assert_eq!(s1.forward_steps_recomputed, 0);
    // Every trip recorded (as a call of the outlined trip: at least what
    // the inline loop records).
    assert!(s1.values >= s0.values, "{} < {}", s1.values, s0.values);
    let one_snapshot = s1.snapshots_peak_bytes;
    assert!(one_snapshot >= 8 * 2 * n as u64, "{one_snapshot}");
    // A budget far below: checkpointed, the loop's peak tape (snapshots
    // included; the peak less the tape of the code around the loop, the
    // whole tape of a run without trips under the same budget) within the
    // budget, as many snapshots as fit, revolve's optimum.
    let small = s0.tape_peak_bytes / 40;
    let (v2, g2, s2) = gradient(&engine, &args, &budget(small));
    assert_eq!(v0, v2);
    let diff = max_relative_difference(&g0, &g2);
    assert!(diff <= 1e-13, "gradients differ by {diff:e}");
    let around = gradient(&engine, &heat_args(&engine, n, 0), &budget(small))
        .2
        .tape_peak_bytes;
    assert!(
        s2.tape_peak_bytes <= small + around,
        "peak tape {} bytes, budget {small} + {around} around the loop",
        s2.tape_peak_bytes
    );
    assert!(s2.tape_peak_bytes * 20 <= s0.tape_peak_bytes);
    let k = s2.snapshots_peak_bytes / one_snapshot;
    assert!(k >= 2, "{k} snapshots");
    assert_eq!(s2.snapshots_peak_bytes, k * one_snapshot);
    assert_eq!(
        s2.forward_steps_recomputed,
        revolve::optimal_advances(steps as u64, k)
    );
    // Twice the budget: more snapshots, less recomputation, still within.
    let (_, g3, s3) = gradient(&engine, &args, &budget(2 * small));
    assert!(max_relative_difference(&g0, &g3) <= 1e-13);
    assert!(s3.tape_peak_bytes <= 2 * small + around);
    assert!(s3.snapshots_peak_bytes > s2.snapshots_peak_bytes);
    assert!(s3.forward_steps_recomputed < s2.forward_steps_recomputed);
    // A budget below one trip's tape: one snapshot (the least possible).
    let (_, g4, s4) = gradient(&engine, &args, &budget(1));
    assert!(max_relative_difference(&g0, &g4) <= 1e-13);
    assert_eq!(s4.snapshots_peak_bytes, one_snapshot);
    assert_eq!(
        s4.forward_steps_recomputed,
        revolve::optimal_advances(steps as u64, 1)
    );
    // `--checkpoints` caps the budget's count.
    let capped = AdjointOptions {
        snapshots: Some(2),
        ..budget(small)
    };
    let (_, g5, s5) = gradient(&engine, &args, &capped);
    assert!(max_relative_difference(&g0, &g5) <= 1e-13);
    assert_eq!(
        s5.forward_steps_recomputed,
        revolve::optimal_advances(steps as u64, 2)
    );
}

/// `nsteps` and `first` are evaluated but the schedule follows the DO
/// loop's own trip count: a wrong `nsteps` changes nothing.
#[test]
fn directive_step_count_and_first_index_do_not_change_the_schedule() {
    let source = |directive: &str| {
        format!(
            "subroutine f(n, k, x, y)
  integer, intent(in) :: n, k
  double precision, intent(inout) :: x(2)
  double precision, intent(out) :: y
  double precision :: t
  integer :: i
  {directive}
  do i = 3, n + 2
    t = x(1)
    x(1) = x(1) * cos(x(2)) + 0.01d0 * dble(i)
    x(2) = x(2) + 0.1d0 * sin(t)
  end do
  y = x(1) * x(2)
end subroutine f
"
        )
    };
    let run = |directive: &str, options: &AdjointOptions| {
        let engine =
            Engine::from_sources(&[("f.f90".into(), source(directive))], Options::default())
                .expect("compiles");
        let adjoint = engine
            .adjoint(None, &sel("y"), &sel("x"), options)
            .expect("adjoint");
        let mut args = engine.procedure(None).unwrap().args();
        args.set_scalar("n", 41.0).unwrap();
        args.set_scalar("k", 4.0).unwrap();
        args.set_array("x", &[0.3, 0.8]).unwrap();
        let jac = adjoint.jacobian(&args).expect("runs");
        let grad: Vec<f64> = (0..jac.cols()).map(|c| jac.get(0, c)).collect();
        (grad, jac.tape.expect("stats").forward_steps_recomputed)
    };
    let (g0, r0) = run("", &AdjointOptions::default());
    assert_eq!(r0, 0);
    for directive in [
        "!$AD BINOMIAL-CKP n+2 k 3",
        "!$AD BINOMIAL-CKP 2*n+7 k-1+1 n*0+3",
        "!$AD BINOMIAL-CKP 5 k 1",
        "!$AD BINOMIAL-CKP n-40 max(k,2)*2-4 -1",
    ] {
        let (g, r) = run(directive, &AdjointOptions::default());
        assert!(max_relative_difference(&g0, &g) <= 1e-13, "{directive}");
        assert_eq!(r, revolve::optimal_advances(41, 4), "{directive}");
    }
}
