//! The differential derivative check of one generated Fortran program at
//! one point, through the public engine API (`tests/random_fortran.rs`).
//!
//! For a program from [`super::random_fortran`] and a [`Point`]:
//!
//! * primal: the JIT and the interpreter agree bit for bit on every
//!   argument, call after call (state carries between calls);
//! * derivatives of `y, r` with respect to `x, s`, in [`ROUNDS`] rounds
//!   (round `k` on handles that have evaluated `k` times before): tangent
//!   Jacobian (JIT and interpreter, bit for bit), adjoint Jacobian by
//!   reverse sweeps of one tape (JIT and interpreter, bit for bit), the
//!   engine's finite differences; the primal values every handle reports
//!   equal the primal call's;
//! * tangent vs adjoint entry by entry, and the dot-product identity
//!   `<J xd, yb> = <xd, J^T yb>` through `Tangent::directional` and
//!   `Adjoint::vjp`;
//! * both against a reference of central differences (step `h` and `h/2`,
//!   Richardson-extrapolated), where the function is smooth at the point:
//!   the branch trace (`path`) must not change within the steps, the
//!   one-sided differences must agree (no kink at the point: the second
//!   differences at `h` and `h/2` scale as `h^2`), and the two central
//!   differences must agree. Every entry left out is counted by reason in
//!   the [`Tally`], never dropped silently. Where the function is smooth,
//!   a NaN or infinite derivative is a failure.
//!
//! The reference evaluates every point from a known state: the program
//! resets its state when `mode == 1`, so round `k`'s points are evaluated
//! after a reset and `k` calls at the base point.

use super::random_fortran::{Point, Program};
use super::random_ir::Rng;
use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Backend, Engine, FiniteDifferences, Jacobian, Options, Procedure, Selection};
use adjit::ir::buffer::Buffer;
use std::collections::BTreeMap;

/// Derivative evaluations per handle.
pub const ROUNDS: usize = 2;
/// Tangent vs adjoint, relative to the larger entry and the row's scale.
pub const AD_TOLERANCE: f64 = 1e-11;
/// The dot-product identity, relative to the sum of the magnitudes of its
/// terms.
pub const DOT_TOLERANCE: f64 = 1e-13;
/// AD vs the extrapolated central difference, relative (plus the
/// difference of the two central differences, the reference's own error
/// estimate).
pub const FD_TOLERANCE: f64 = 1e-6;
/// A kink at the point: one-sided differences disagreeing beyond this
/// (relative), measured as `|D(h) - 4 D(h/2)| / h`.
const KINK_TOLERANCE: f64 = 1e-6;
/// Central differences at `h` and `h/2` disagreeing beyond this (relative):
/// the function is not smooth enough within the step.
const CONVERGENCE_TOLERANCE: f64 = 1e-4;

/// What one failed check was, for reduction (same class = same bug) and
/// for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The check that failed (`tangent vs FD`, `primal JIT vs interpreter`...).
    pub class: String,
    /// What differed.
    pub message: String,
    /// The classes of the other checks that failed on the same program.
    pub others: Vec<String>,
}

/// Records a failure unless one of its class is already recorded.
fn note(found: &mut Vec<Failure>, failure: Failure) {
    if !found.iter().any(|f| f.class == failure.class) {
        found.push(failure);
    }
}

impl Failure {
    fn new(class: &str, message: impl Into<String>) -> Failure {
        Failure {
            class: class.into(),
            message: message.into(),
            others: Vec::new(),
        }
    }
}

/// Counts over many checks: what was compared and what was left out, and
/// why.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Programs checked.
    pub programs: usize,
    /// Jacobian entries compared against finite differences.
    pub fd_checked: usize,
    /// Entries left out, by reason.
    pub fd_skipped: BTreeMap<&'static str, usize>,
    /// Tangent-vs-adjoint entry comparisons made.
    pub ad_checked: usize,
    /// Dot-product tests made.
    pub dot_checked: usize,
    /// Dot-product tests left out because a derivative was not finite at a
    /// non-smooth point.
    pub dot_skipped: usize,
}

impl Tally {
    /// Adds another tally.
    pub fn add(&mut self, other: &Tally) {
        self.programs += other.programs;
        self.fd_checked += other.fd_checked;
        for (k, v) in &other.fd_skipped {
            *self.fd_skipped.entry(k).or_default() += v;
        }
        self.ad_checked += other.ad_checked;
        self.dot_checked += other.dot_checked;
        self.dot_skipped += other.dot_skipped;
    }

    /// Entries left out of the FD comparison.
    pub fn fd_skipped_total(&self) -> usize {
        self.fd_skipped.values().sum()
    }

    fn skip(&mut self, why: &'static str) {
        *self.fd_skipped.entry(why).or_default() += 1;
    }
}

fn engine(source: &str, backend: Backend) -> Result<Engine, Failure> {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("random.f90".to_string(), source.to_string())], options)
        .map_err(|e| Failure::new("compile", e.to_string()))
}

fn internal(what: &str) -> impl Fn(adjit::engine::Error) -> Failure + '_ {
    move |e| Failure::new(what, e.to_string())
}

/// Arguments of `top` at a point.
fn top_args(p: &Procedure, point: &Point, mode: i64) -> adjit::engine::Args {
    let mut args = p.args();
    args.set_scalar("n", point.n as f64).expect("n");
    args.set_scalar("mode", mode as f64).expect("mode");
    args.set_array("x", &point.x).expect("x");
    args.set_scalar("s", point.s).expect("s");
    args
}

/// The outputs `y(1..n), r` of a call, and `path`.
fn outputs(args: &adjit::engine::Args) -> (Vec<f64>, i64) {
    let mut v = args.f64s("y").expect("y");
    v.push(args.scalar("r").expect("r"));
    (v, args.scalar("path").expect("path") as i64)
}

fn same_bits(a: &Buffer, b: &Buffer) -> bool {
    a.len() == b.len()
        && a.ty() == b.ty()
        && (0..a.len()).all(|i| {
            let (x, y) = (a.get_f64(i), b.get_f64(i));
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        })
}

fn same_jacobian(a: &Jacobian, b: &Jacobian) -> Option<String> {
    for r in 0..a.rows() {
        for c in 0..a.cols() {
            let (x, y) = (a.get(r, c), b.get(r, c));
            if x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan()) {
                return Some(format!("d{}/d{}: {x:e} vs {y:e}", a.of[r], a.wrt[c]));
            }
        }
    }
    None
}

fn same_values(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The reference derivative of one column by central differences, with the
/// smoothness evidence.
struct Column {
    /// Richardson extrapolation of the two central differences, per row.
    reference: Vec<f64>,
    /// The central difference at step `h` (the engine's step), per row.
    central: Vec<f64>,
    /// Why an entry is not comparable, per row (`None`: comparable).
    skip: Vec<Option<&'static str>>,
    /// The reference's own error estimate, per row.
    error: Vec<f64>,
}

/// Evaluations of `top` from a known state: a reset and `round` calls at
/// the base point before the evaluated call.
struct Reference<'a> {
    primal: &'a Procedure,
    base: Point,
    round: usize,
}

impl Reference<'_> {
    fn eval(&self, point: &Point) -> Result<(Vec<f64>, i64), Failure> {
        let call = |pt: &Point, mode: i64| -> Result<adjit::engine::Args, Failure> {
            let mut a = top_args(self.primal, pt, mode);
            self.primal
                .call(&mut a)
                .map_err(internal("primal (reference)"))?;
            Ok(a)
        };
        if self.round == 0 {
            return Ok(outputs(&call(point, 1)?));
        }
        call(&self.base, 1)?;
        for _ in 1..self.round {
            call(&self.base, 0)?;
        }
        Ok(outputs(&call(point, 0)?))
    }

    fn column(&self, j: usize, f0: &[f64], path0: i64) -> Result<Column, Failure> {
        let x = self.base.inputs();
        // The engine's step and its representable width.
        let h = f64::EPSILON.cbrt() * x[j].abs().max(1.0);
        let at = |d: f64| {
            let mut v = x.clone();
            v[j] += d;
            (v[j], self.base.with_inputs(&v))
        };
        let (xp, pp) = at(h);
        let (xm, pm) = at(-h);
        let (xp2, pp2) = at(h / 2.0);
        let (xm2, pm2) = at(-h / 2.0);
        let (fp, path_p) = self.eval(&pp)?;
        let (fm, path_m) = self.eval(&pm)?;
        let (fp2, path_p2) = self.eval(&pp2)?;
        let (fm2, path_m2) = self.eval(&pm2)?;
        let same_path = [path_p, path_m, path_p2, path_m2]
            .iter()
            .all(|&p| p == path0);
        let rows = f0.len();
        let mut col = Column {
            reference: vec![0.0; rows],
            central: vec![0.0; rows],
            skip: vec![None; rows],
            error: vec![0.0; rows],
        };
        for i in 0..rows {
            let c1 = (fp[i] - fm[i]) / (xp - xm);
            let c2 = (fp2[i] - fm2[i]) / (xp2 - xm2);
            let d1 = fp[i] - 2.0 * f0[i] + fm[i];
            let d2 = fp2[i] - 2.0 * f0[i] + fm2[i];
            let scale = 1f64.max(c2.abs()).max(f0[i].abs());
            col.central[i] = c1;
            col.reference[i] = (4.0 * c2 - c1) / 3.0;
            col.error[i] = (c1 - c2).abs();
            col.skip[i] = if !same_path {
                Some("branch decision changes within the step")
            } else if !(c1.is_finite() && c2.is_finite()) {
                Some("non-finite difference quotient")
            } else if (d1 - 4.0 * d2).abs() / h > KINK_TOLERANCE * scale {
                Some("kink at the point (one-sided differences disagree)")
            } else if (c1 - c2).abs() > CONVERGENCE_TOLERANCE * scale {
                Some("central differences do not converge")
            } else {
                None
            };
        }
        Ok(col)
    }
}

/// The derivative handles of one program.
struct Handles {
    tangent: adjit::engine::Tangent,
    adjoint: adjit::engine::Adjoint,
    tangent_interp: adjit::engine::Tangent,
    adjoint_interp: adjit::engine::Adjoint,
    fd_primal: Procedure,
}

impl Handles {
    /// Every handle from an engine of its own, so that no state can be
    /// shared between them whatever the engine's design.
    fn new(source: &str, directions: usize) -> Result<Handles, Failure> {
        let of = Selection::parse_list("y,r").expect("of");
        let wrt = Selection::parse_list("x,s").expect("wrt");
        let top = Some("top");
        let adj_options = AdjointOptions::default();
        Ok(Handles {
            tangent: engine(source, Backend::Jit)?
                .tangent(top, &of, &wrt, directions)
                .map_err(internal("tangent generation"))?,
            adjoint: engine(source, Backend::Jit)?
                .adjoint(top, &of, &wrt, &adj_options)
                .map_err(internal("adjoint generation"))?,
            tangent_interp: engine(source, Backend::Interpreter)?
                .tangent(top, &of, &wrt, directions)
                .map_err(internal("tangent generation"))?,
            adjoint_interp: engine(source, Backend::Interpreter)?
                .adjoint(top, &of, &wrt, &adj_options)
                .map_err(internal("adjoint generation"))?,
            fd_primal: engine(source, Backend::Jit)?
                .procedure(top)
                .map_err(internal("primal compile"))?,
        })
    }
}

/// Checks one program at one point; returns what was compared.
pub fn check(program: &Program, point: &Point, rng_seed: u64) -> Result<Tally, Failure> {
    check_source(
        &program.source(),
        program.options.persistent_state,
        point,
        rng_seed,
    )
}

/// [`check`] on source text with the generated programs' entry
/// `top(n, mode, x, s, y, r, path)`; `persistent` says whether state may
/// carry between calls.
pub fn check_source(
    source: &str,
    persistent: bool,
    point: &Point,
    rng_seed: u64,
) -> Result<Tally, Failure> {
    let source = source.to_string();
    let mut tally = Tally {
        programs: 1,
        ..Tally::default()
    };

    // Primal: JIT vs interpreter, call after call.
    let jit = engine(&source, Backend::Jit)?
        .procedure(Some("top"))
        .map_err(internal("primal compile"))?;
    let interp = engine(&source, Backend::Interpreter)?
        .procedure(Some("top"))
        .map_err(internal("primal compile"))?;
    let mut primal_outputs: Vec<Vec<f64>> = Vec::new();
    let mut deferred: Option<Failure> = None;
    let mut found: Vec<Failure> = Vec::new();
    for call in 0..=ROUNDS {
        let mut a = top_args(&jit, point, 0);
        let mut b = top_args(&interp, point, 0);
        jit.call(&mut a).map_err(internal("primal run (JIT)"))?;
        interp
            .call(&mut b)
            .map_err(internal("primal run (interpreter)"))?;
        for (k, name) in a.names().iter().enumerate() {
            if !same_bits(&a.buffers()[k], &b.buffers()[k]) && deferred.is_none() {
                // Reported after the derivative checks when it is about
                // state carried between calls, so that those still run.
                let failure = Failure::new(
                    "primal JIT vs interpreter",
                    format!(
                        "call {}: `{name}`: JIT {:?} vs interpreter {:?}",
                        call + 1,
                        a.buffers()[k],
                        b.buffers()[k]
                    ),
                );
                if call == 0 {
                    return Err(failure);
                }
                deferred = Some(failure);
            }
        }
        let (out, path) = outputs(&a);
        if out.iter().any(|v| !v.is_finite()) {
            return Err(Failure::new(
                "generator: non-finite primal",
                format!("{out:?}"),
            ));
        }
        if call > 0 && !persistent && !same_values(&out, &primal_outputs[0]) {
            return Err(Failure::new(
                "primal state leaks between calls",
                format!(
                    "call {}: {out:?} vs call 1: {:?}",
                    call + 1,
                    primal_outputs[0]
                ),
            ));
        }
        primal_outputs.push(out);
        let _ = path;
    }

    let inputs = point.inputs().len();
    let h = Handles::new(&source, inputs.min(8))?;
    let of = Selection::parse_list("y,r").expect("of");
    let wrt = Selection::parse_list("x,s").expect("wrt");
    let mut first: Option<(Jacobian, Jacobian)> = None;
    for (round, expected) in primal_outputs[..ROUNDS].iter().enumerate() {
        let args = top_args(&jit, point, 0);
        let jt = h.tangent.jacobian(&args).map_err(internal("tangent run"))?;
        let ja = h.adjoint.jacobian(&args).map_err(internal("adjoint run"))?;
        let jti = h
            .tangent_interp
            .jacobian(&args)
            .map_err(internal("tangent run (interpreter)"))?;
        let jai = h
            .adjoint_interp
            .jacobian(&args)
            .map_err(internal("adjoint run (interpreter)"))?;
        let jfd = FiniteDifferences::new(&h.fd_primal)
            .jacobian(&args, &of, &wrt)
            .map_err(internal("finite differences run"))?;
        let label = |what: &str| format!("round {}: {what}", round + 1);
        if let Some(d) = same_jacobian(&jt, &jti) {
            note(
                &mut found,
                Failure::new("tangent JIT vs interpreter", label(&d)),
            );
        }
        if let Some(d) = same_jacobian(&ja, &jai) {
            note(
                &mut found,
                Failure::new("adjoint JIT vs interpreter", label(&d)),
            );
        }
        for (what, j) in [
            ("tangent", &jt),
            ("adjoint", &ja),
            ("finite differences", &jfd),
        ] {
            if !same_values(&j.values, expected) {
                note(
                    &mut found,
                    Failure::new(
                        "primal values of a derivative evaluation",
                        label(&format!(
                            "{what} reports {:?}, the primal call {:?}",
                            j.values, expected
                        )),
                    ),
                );
            }
        }
        if !persistent {
            match &first {
                None => first = Some((jt.clone(), ja.clone())),
                Some((t0, a0)) => {
                    for (what, a, b) in [("tangent", t0, &jt), ("adjoint", a0, &ja)] {
                        if let Some(d) = same_jacobian(a, b) {
                            note(
                                &mut found,
                                Failure::new(
                                    "derivative state leaks between evaluations",
                                    label(&format!("{what}: {d}")),
                                ),
                            );
                        }
                    }
                }
            }
        }

        // The reference.
        let reference = Reference {
            primal: &jit,
            base: point.clone(),
            round,
        };
        let (f0, path0) = reference.eval(point)?;
        if !same_values(&f0, expected) {
            note(
                &mut found,
                Failure::new(
                    "reset does not restore the initial state",
                    label(&format!("{f0:?} vs {:?}", expected)),
                ),
            );
        }
        for c in 0..jt.cols() {
            let col = reference.column(c, &f0, path0)?;
            for r in 0..jt.rows() {
                let (t, a, e) = (jt.get(r, c), ja.get(r, c), jfd.get(r, c));
                let entry = format!("d{}/d{}", jt.of[r], jt.wrt[c]);
                // Tangent vs adjoint wherever both are finite.
                if t.is_finite() && a.is_finite() {
                    let row_scale = (0..jt.cols())
                        .map(|k| jt.get(r, k).abs())
                        .fold(0.0, f64::max);
                    let tol = AD_TOLERANCE * t.abs().max(a.abs()) + 1e-2 * AD_TOLERANCE * row_scale;
                    tally.ad_checked += 1;
                    if (t - a).abs() > tol {
                        note(
                            &mut found,
                            Failure::new(
                                "tangent vs adjoint",
                                label(&format!("{entry}: tangent {t:e}, adjoint {a:e}")),
                            ),
                        );
                    }
                }
                if let Some(why) = col.skip[r] {
                    tally.skip(why);
                    continue;
                }
                tally.fd_checked += 1;
                let reference = col.reference[r];
                let tol = FD_TOLERANCE * reference.abs().max(1.0) + col.error[r];
                for (what, v) in [("tangent", t), ("adjoint", a)] {
                    if !v.is_finite() {
                        note(
                            &mut found,
                            Failure::new(
                                &format!("{what}: non-finite where smooth"),
                                label(&format!(
                                    "{entry}: {what} {v:e}, finite differences {reference:e}"
                                )),
                            ),
                        );
                    }
                    if (v - reference).abs() > tol {
                        note(&mut found, Failure::new(
                            &format!("{what} vs finite differences"),
                            label(&format!(
                                "{entry}: {what} {v:e}, finite differences {reference:e} (tangent {t:e}, adjoint {a:e})"
                            )),
                        ));
                    }
                }
                // The engine's differences take the same points from the
                // same state: the same quotient up to round-off.
                let c1 = col.central[r];
                if (e - c1).abs() > 1e-9 * c1.abs().max(1.0) {
                    note(
                        &mut found,
                        Failure::new(
                            "engine finite differences",
                            label(&format!(
                                "{entry}: engine {e:e}, same points from the start state {c1:e}"
                            )),
                        ),
                    );
                }
            }
        }
    }

    // The dot-product identity through the directional and vjp calls (the
    // handles' third evaluation).
    let mut rng = Rng::new(rng_seed ^ 0xD07);
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    let xd: Vec<f64> = (0..inputs).map(|_| unit()).collect();
    let yb: Vec<f64> = (0..primal_outputs[0].len()).map(|_| unit()).collect();
    let args = top_args(&jit, point, 0);
    let td = h
        .tangent
        .directional(&args, &xd)
        .map_err(internal("tangent run"))?;
    let (values, xb) = h.adjoint.vjp(&args, &yb).map_err(internal("adjoint run"))?;
    if !same_values(&values, &primal_outputs[ROUNDS]) {
        note(
            &mut found,
            Failure::new(
                "primal values of a derivative evaluation",
                format!(
                    "vjp reports {values:?}, the primal call {:?}",
                    primal_outputs[ROUNDS]
                ),
            ),
        );
    }
    let lhs: f64 = td.iter().zip(&yb).map(|(a, b)| a * b).sum();
    let rhs: f64 = xd.iter().zip(&xb).map(|(a, b)| a * b).sum();
    let terms: f64 = td.iter().zip(&yb).map(|(a, b)| (a * b).abs()).sum::<f64>()
        + xd.iter().zip(&xb).map(|(a, b)| (a * b).abs()).sum::<f64>();
    // An entry that is a small difference of O(1) path contributions (the
    // generated programs keep values and partials near 1) carries their
    // absolute round-off: a floor of 1% of the tolerance per unit weight.
    let floor: f64 =
        0.01 * xd.iter().map(|v| v.abs()).sum::<f64>() * yb.iter().map(|v| v.abs()).sum::<f64>();
    if lhs.is_finite() && rhs.is_finite() {
        tally.dot_checked += 1;
        if (lhs - rhs).abs() > DOT_TOLERANCE * (terms + floor) {
            note(
                &mut found,
                Failure::new(
                    "dot product",
                    format!(
                        "<J xd, yb> = {lhs:e}, <xd, J^T yb> = {rhs:e}, relative {:e}",
                        (lhs - rhs).abs() / terms
                    ),
                ),
            );
        }
    } else {
        tally.dot_skipped += 1;
    }
    found.extend(deferred);
    if found.is_empty() {
        return Ok(tally);
    }
    let mut first = found.remove(0);
    first.others = found.into_iter().map(|f| f.class).collect();
    Err(first)
}

/// Greedily removes statements and procedures from `program` while
/// `fails` still holds.
pub fn reduce(program: &Program, fails: &dyn Fn(&Program) -> bool) -> Program {
    let mut current = program.clone();
    loop {
        let mut progress = false;
        let mut i = 0;
        while let Some(candidate) = current.without_proc(i) {
            if fails(&candidate) {
                current = candidate;
                progress = true;
            } else {
                i += 1;
            }
        }
        let mut k = current.statement_count();
        while k > 0 {
            k -= 1;
            if let Some(candidate) = current.without_statement(k) {
                if fails(&candidate) {
                    current = candidate;
                    progress = true;
                    k = k.min(current.statement_count());
                }
            }
        }
        if !progress {
            return current;
        }
    }
}

/// The outputs `(y(1..n), r)` and `path` of `calls` successive JIT calls of
/// `top` at `point` (mode 0).
pub fn primal_calls(
    source: &str,
    point: &Point,
    calls: usize,
) -> Result<Vec<(Vec<f64>, i64)>, Failure> {
    let p = engine(source, Backend::Jit)?
        .procedure(Some("top"))
        .map_err(internal("primal compile"))?;
    (0..calls)
        .map(|_| {
            let mut a = top_args(&p, point, 0);
            p.call(&mut a).map_err(internal("primal run (JIT)"))?;
            Ok(outputs(&a))
        })
        .collect()
}

/// The same calls compiled by gfortran (`-O0`, so no contraction or
/// reassociation) with a driver program, run in `dir`. `Err` describes a
/// compile or run failure.
pub fn gfortran_calls(
    source: &str,
    point: &Point,
    calls: usize,
    dir: &std::path::Path,
) -> Result<Vec<(Vec<f64>, i64)>, String> {
    use std::fmt::Write as _;
    let n = point.n;
    let literal = |v: f64| format!("{v:e}").replace('e', "d");
    let xs: Vec<String> = point.x.iter().map(|&v| literal(v)).collect();
    let mut driver = String::new();
    let _ = writeln!(driver, "program drv\n  use rfmod\n  implicit none");
    let _ = writeln!(driver, "  double precision :: x({n}), y({n}), r, s");
    let _ = writeln!(driver, "  integer :: path, k");
    let _ = writeln!(driver, "  x = (/ {} /)", xs.join(", "));
    let _ = writeln!(driver, "  s = {}", literal(point.s));
    let _ = writeln!(driver, "  do k = 1, {calls}");
    let _ = writeln!(driver, "    call top({n}, 0, x, s, y, r, path)");
    let _ = writeln!(driver, "    write (*, '(*(es26.17e3))') y, r");
    let _ = writeln!(driver, "    write (*, '(i0)') path");
    let _ = writeln!(driver, "  end do\nend program drv");
    std::fs::write(dir.join("prog.f90"), source).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("drv.f90"), driver).map_err(|e| e.to_string())?;
    let out = std::process::Command::new("gfortran")
        .args(["-O0", "prog.f90", "drv.f90", "-o", "prog"])
        .current_dir(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "gfortran: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = std::process::Command::new(dir.join("prog"))
        .current_dir(dir)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let mut result = Vec::new();
    for pair in lines.chunks(2).take(calls) {
        let values: Result<Vec<f64>, _> = pair[0]
            .split_whitespace()
            .map(|t| t.replace(['d', 'D'], "e").parse::<f64>())
            .collect();
        let path = pair.get(1).and_then(|p| p.trim().parse::<i64>().ok());
        match (values, path) {
            (Ok(v), Some(p)) => result.push((v, p)),
            _ => return Err(format!("unreadable gfortran output:\n{text}")),
        }
    }
    if result.len() != calls {
        return Err(format!(
            "gfortran output has {} calls:\n{text}",
            result.len()
        ));
    }
    Ok(result)
}

/// Compares the JIT's calls with gfortran's: `path`s equal, values to
/// `1e-12` relative (the two use different `libm`s).
pub fn compare_with_gfortran(
    source: &str,
    point: &Point,
    dir: &std::path::Path,
) -> Result<(), Failure> {
    const CALLS: usize = 3;
    let ours = primal_calls(source, point, CALLS)?;
    let theirs =
        gfortran_calls(source, point, CALLS, dir).map_err(|e| Failure::new("gfortran", e))?;
    for (k, ((a, pa), (b, pb))) in ours.iter().zip(&theirs).enumerate() {
        let close = a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0));
        if pa != pb || !close {
            return Err(Failure::new(
                "primal JIT vs gfortran",
                format!(
                    "call {}: adjit {a:?} path {pa}, gfortran {b:?} path {pb}",
                    k + 1
                ),
            ));
        }
    }
    Ok(())
}
