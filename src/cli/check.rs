//! `adjit check`: derivatives of `--of` with respect to `--wrt` by adjoint,
//! tangent and central finite differences, a dot-product test with random
//! directions, a table of the differences per input, and a non-zero exit
//! naming the inputs where the methods disagree or where any derivative
//! (adjoint, tangent or finite difference) is NaN or infinite, even a
//! genuinely infinite one such as that of `sqrt(x)` at 0.
//!
//! Differences fold with a NaN-propagating maximum, so that a NaN anywhere
//! in a column prints as `NaN` in the text table. JSON has no NaN or
//! infinity: `--json` writes them as the strings `"NaN"`, `"Infinity"` and
//! `"-Infinity"`, as every adjit JSON output does.
//!
//! `--order 2` adds the second-order tests of [`super::hessian`] (one
//! scalar output): Hessian symmetry, finite differences of the gradient,
//! and a second-order dot-product test.

use super::{
    adjoint_options, directions, fd_step, problem, reversal_schedule, CmdResult, Failure, Problem,
};
use crate::cli::options::CommandLine;
use crate::cli::output::{to_json, Num};
use adjit::engine::{element_count, FiniteDifferences, Jacobian};
use serde::Serialize;

/// Relative agreement required between tangent and adjoint (round-off).
const AD_TOLERANCE: f64 = 1e-10;

/// Environment variable of the test-only hook that corrupts one adjoint
/// column (`LABEL:DELTA`), so that tests can see `check` fail. Compiled in
/// only with the `test-hooks` feature (on for the integration tests).
#[cfg(feature = "test-hooks")]
const INJECT_VAR: &str = "ADJIT_CHECK_INJECT";

/// A deterministic xorshift generator for the dot-product directions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Per-input comparison.
struct Row {
    label: String,
    adjoint_vs_tangent: f64,
    adjoint_vs_fd: f64,
    fd_bound: f64,
    scale: f64,
    /// The methods that gave a NaN or infinite derivative for this input.
    non_finite: Vec<&'static str>,
}

impl Row {
    /// Tangent and adjoint agree to round-off (false when NaN).
    fn ad_ok(&self) -> bool {
        self.adjoint_vs_tangent <= AD_TOLERANCE * self.scale
    }

    /// Finite differences agree within their bound (false when NaN).
    fn fd_ok(&self) -> bool {
        self.adjoint_vs_fd <= self.fd_bound
    }

    /// Every check of this input passed.
    fn ok(&self) -> bool {
        self.ad_ok() && self.fd_ok() && self.non_finite.is_empty()
    }
}

/// The larger of two numbers, NaN when either is (`f64::max` drops NaN).
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The labels of the rows that fail a test.
fn failing(rows: &[Row], fails: impl Fn(&Row) -> bool) -> Vec<&str> {
    rows.iter()
        .filter(|r| fails(r))
        .map(|r| r.label.as_str())
        .collect()
}

pub(crate) fn check(cl: &CommandLine) -> CmdResult {
    // clap admits only 1 and 2.
    let order = cl.order;
    let Problem {
        engine,
        primal,
        args,
        of,
        wrt,
    } = problem(cl)?;
    let entry = Some(primal.name());
    let n = element_count(&args, &wrt)?;
    let adjoint = engine.adjoint_scheduled(
        entry,
        &of,
        &wrt,
        &adjoint_options(cl),
        &reversal_schedule(cl)?,
    )?;
    let tangent = engine.tangent(entry, &of, &wrt, directions(cl, n))?;
    // Every evaluation starts from the program's initial state (globals);
    // the last one leaves what one primal call would.
    let tan = engine.restoring_state(|| tangent.jacobian(&args))?;
    let mut fd = FiniteDifferences::new(&primal);
    fd.step = fd_step(cl);
    let fdj = engine.restoring_state(|| fd.jacobian(&args, &of, &wrt))?;

    // Dot-product test: <J xd, yb> = <xd, J^T yb> with random directions.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let xd: Vec<f64> = (0..tan.cols()).map(|_| rng.next()).collect();
    let yb: Vec<f64> = (0..tan.rows()).map(|_| rng.next()).collect();
    let yd = engine.restoring_state(|| tangent.directional(&args, &xd))?;
    let (_, xb) = engine.restoring_state(|| adjoint.vjp(&args, &yb))?;
    let mut adj = adjoint.jacobian(&args)?;
    inject(&mut adj)?;
    let lhs: f64 = yd.iter().zip(&yb).map(|(a, b)| a * b).sum();
    let rhs: f64 = xd.iter().zip(&xb).map(|(a, b)| a * b).sum();
    let dot_rel = (lhs - rhs).abs() / lhs.abs().max(rhs.abs()).max(f64::MIN_POSITIVE);
    let dot_ok = dot_rel <= AD_TOLERANCE || (lhs - rhs).abs() <= 1e-300;

    let rows = compare(&adj, &tan, &fdj, &fd);
    let bad_ad = failing(&rows, |r| !r.ad_ok());
    let bad_fd = failing(&rows, |r| !r.fd_ok());
    let non_finite: Vec<String> = rows
        .iter()
        .filter(|r| !r.non_finite.is_empty())
        .map(|r| format!("{} ({})", r.label, r.non_finite.join(", ")))
        .collect();
    let second = match order {
        2 => Some(super::hessian::second_order(
            cl, &engine, &primal, &args, &of, &wrt, fd.step,
        )?),
        _ => None,
    };
    let ok = bad_ad.is_empty()
        && bad_fd.is_empty()
        && non_finite.is_empty()
        && dot_ok
        && second.as_ref().is_none_or(|s| s.ok);

    if cl.flag("json") {
        /// One input's comparisons.
        #[derive(Serialize)]
        struct InputReport<'a> {
            input: &'a str,
            ok: bool,
            adjoint_vs_tangent: Num,
            adjoint_vs_fd: Num,
            fd_bound: Num,
            non_finite: &'a [&'static str],
        }
        /// The first-order dot-product test.
        #[derive(Serialize)]
        struct DotReport {
            tangent: Num,
            adjoint: Num,
            relative_difference: Num,
        }
        /// `check --json`.
        #[derive(Serialize)]
        struct CheckReport<'a> {
            ok: bool,
            dot_product: DotReport,
            inputs: Vec<InputReport<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            second_order: Option<&'a super::hessian::SecondOrder>,
        }
        let inputs = rows
            .iter()
            .map(|r| InputReport {
                input: &r.label,
                ok: r.ok(),
                adjoint_vs_tangent: Num(r.adjoint_vs_tangent),
                adjoint_vs_fd: Num(r.adjoint_vs_fd),
                fd_bound: Num(r.fd_bound),
                non_finite: &r.non_finite,
            })
            .collect();
        outln!(
            "{}",
            to_json(&CheckReport {
                ok,
                dot_product: DotReport {
                    tangent: Num(lhs),
                    adjoint: Num(rhs),
                    relative_difference: Num(dot_rel),
                },
                inputs,
                second_order: second.as_ref(),
            })
        );
    } else {
        outln!(
            "{:<16} {:>14} {:>14} {:>14}",
            "input",
            "|adj - tan|",
            "|adj - fd|",
            "fd bound"
        );
        for r in &rows {
            outln!(
                "{:<16} {:>14.3e} {:>14.3e} {:>14.3e}",
                r.label,
                r.adjoint_vs_tangent,
                r.adjoint_vs_fd,
                r.fd_bound
            );
        }
        outln!("dot product: <J xd, yb> = {lhs:.16e}, <xd, J^T yb> = {rhs:.16e}, relative difference {dot_rel:.2e}");
        for line in second.iter().flat_map(|s| s.text()) {
            outln!("{line}");
        }
        if ok {
            outln!("ok: adjoint, tangent and finite differences agree");
        }
    }
    if !non_finite.is_empty() {
        eprintln!(
            "derivative is NaN or infinite for: {}",
            non_finite.join(", ")
        );
    }
    if !bad_ad.is_empty() {
        eprintln!(
            "adjoint and tangent disagree beyond round-off for: {}",
            bad_ad.join(", ")
        );
    }
    if !bad_fd.is_empty() {
        eprintln!(
            "finite differences disagree beyond the step-aware bound for: {}",
            bad_fd.join(", ")
        );
    }
    if !dot_ok {
        eprintln!("dot-product test failed: relative difference {dot_rel:.3e}");
    }
    for failure in second.iter().flat_map(|s| &s.failures) {
        eprintln!("{failure}");
    }
    if ok {
        Ok(0)
    } else {
        Ok(1)
    }
}

/// Maximum differences per input column (NaN when any difference is NaN)
/// and the methods that give non-finite derivatives.
fn compare(adj: &Jacobian, tan: &Jacobian, fdj: &Jacobian, fd: &FiniteDifferences) -> Vec<Row> {
    (0..adj.cols())
        .map(|c| {
            let mut row = Row {
                label: adj.wrt[c].clone(),
                adjoint_vs_tangent: 0.0,
                adjoint_vs_fd: 0.0,
                fd_bound: 0.0,
                scale: 1.0,
                non_finite: Vec::new(),
            };
            // A central difference with relative step h errs by about
            // h^2 |f'''| + eps |f| / h; bound it generously in terms of the
            // output and derivative magnitudes.
            let h = fd.step.unwrap_or(f64::EPSILON.cbrt());
            for r in 0..adj.rows() {
                let (a, t, f) = (adj.get(r, c), tan.get(r, c), fdj.get(r, c));
                for (method, x) in [("adjoint", a), ("tangent", t), ("finite differences", f)] {
                    if !x.is_finite() && !row.non_finite.contains(&method) {
                        row.non_finite.push(method);
                    }
                }
                let scale = max_nan(max_nan(a.abs(), t.abs()), 1.0);
                row.scale = max_nan(row.scale, scale);
                row.adjoint_vs_tangent = max_nan(row.adjoint_vs_tangent, (a - t).abs());
                row.adjoint_vs_fd = max_nan(row.adjoint_vs_fd, (a - f).abs());
                let value = adj.values.get(r).copied().unwrap_or(0.0).abs().max(1.0);
                row.fd_bound = max_nan(
                    row.fd_bound,
                    100.0 * (h * h * scale + f64::EPSILON * value / h) + 1e-7 * scale,
                );
            }
            row
        })
        .collect()
}

/// The test-only hook: adds DELTA to the adjoint column LABEL.
#[cfg(feature = "test-hooks")]
fn inject(adj: &mut Jacobian) -> Result<(), Failure> {
    let Ok(spec) = std::env::var(INJECT_VAR) else {
        return Ok(());
    };
    let (label, delta) = spec
        .split_once(':')
        .and_then(|(l, d)| Some((l.to_string(), d.parse::<f64>().ok()?)))
        .ok_or_else(|| format!("{INJECT_VAR} must be LABEL:DELTA"))?;
    if let Some(c) = adj.wrt.iter().position(|w| *w == label) {
        let cols = adj.cols();
        for r in 0..adj.rows() {
            adj.matrix[r * cols + c] += delta;
        }
    }
    Ok(())
}

/// Without the `test-hooks` feature there is no hook.
#[cfg(not(feature = "test-hooks"))]
fn inject(_adj: &mut Jacobian) -> Result<(), Failure> {
    Ok(())
}
