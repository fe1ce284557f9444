//! `adjit hessian`: the Hessian of one scalar output by tangent over
//! adjoint, and the second-order tests of `adjit check --order 2`
//! (symmetry, finite differences of the adjoint gradient, and a
//! dot-product test of Hessian-vector products against tangent over
//! tangent).

use super::{adjoint_options, directions, problem, CmdResult, Failure, Problem};
use crate::cli::options::CommandLine;
use crate::cli::output::{nums, text_f64, text_matrix, to_json, MatrixJson, Num};
use adjit::engine::{element_count, Args, Engine, HessianMatrix, Procedure, Selection};
use serde::Serialize;

/// Relative agreement required between second-order quantities that are
/// equal up to round-off (symmetry, `u.(H v)` against `u^T H v`).
const TOLERANCE: f64 = 1e-10;

pub(crate) fn hessian(cl: &CommandLine) -> CmdResult {
    let Problem {
        engine,
        primal,
        args,
        of,
        wrt,
    } = problem(cl)?;
    let h = compute(cl, &engine, &primal, &args, &of, &wrt)?;
    if cl.flag("json") {
        /// `hessian --json`: the matrix, the value and the gradient.
        #[derive(Serialize)]
        struct HessianReport<'a> {
            #[serde(flatten)]
            matrix: MatrixJson<'a>,
            value: Num,
            gradient: Vec<Num>,
        }
        outln!(
            "{}",
            to_json(&HessianReport {
                matrix: MatrixJson::new(std::slice::from_ref(&h.of), &h.wrt, h.n(), &h.matrix),
                value: Num(h.value),
                gradient: nums(&h.gradient),
            })
        );
    } else {
        outln!("Hessian of {} = {}", h.of, text_f64(h.value));
        out!("{}", text_matrix(&h.wrt, &h.wrt, &h.matrix));
    }
    Ok(0)
}

/// The Hessian at `args` with the command line's options.
fn compute(
    cl: &CommandLine,
    engine: &Engine,
    primal: &Procedure,
    args: &Args,
    of: &[Selection],
    wrt: &[Selection],
) -> Result<HessianMatrix, Failure> {
    let n = element_count(args, wrt)?;
    let k = directions(cl, n);
    let hess = engine.hessian(Some(primal.name()), of, wrt, k, &adjoint_options(cl))?;
    Ok(engine.restoring_state(|| hess.hessian(args))?)
}

/// The outcome of the second-order tests of `check --order 2`.
#[derive(Serialize)]
pub(crate) struct SecondOrder {
    /// Every test passed.
    pub(crate) ok: bool,
    /// The output differentiated.
    of: String,
    /// max |H - H^T|.
    symmetry: Num,
    /// The largest difference from finite differences of the gradient.
    fd_of_gradient: Num,
    /// The second-order dot-product test.
    dot_product: SecondDot,
    /// The test results as text lines.
    #[serde(skip)]
    text: Vec<String>,
    /// What failed, one line each.
    #[serde(skip)]
    pub(crate) failures: Vec<String>,
}

/// The second-order dot-product test: `u.(H v)` by tangent over adjoint
/// and by tangent over tangent.
#[derive(Serialize)]
struct SecondDot {
    tangent_over_adjoint: Num,
    tangent_over_tangent: Num,
    relative_difference: Num,
}

impl SecondOrder {
    /// The text lines of the results.
    pub(crate) fn text(&self) -> &[String] {
        &self.text
    }
}

/// Second-order tests at `args`: the Hessian by tangent over adjoint is
/// symmetric, its columns agree with central differences of the adjoint
/// gradient (relative step `step`, default the cube root of epsilon), and
/// `u.(H v)` from a Hessian-vector product equals `u^T H v` by tangent over
/// tangent for fixed pseudo-random `u`, `v`.
pub(crate) fn second_order(
    cl: &CommandLine,
    engine: &Engine,
    primal: &Procedure,
    args: &Args,
    of: &[Selection],
    wrt: &[Selection],
    step: Option<f64>,
) -> Result<SecondOrder, Failure> {
    let entry = Some(primal.name());
    let h = compute(cl, engine, primal, args, of, wrt)?;
    let n = h.n();
    let scale = h.matrix.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let mut failures = Vec::new();

    // Symmetry.
    let mut asym = 0.0f64;
    for i in 0..n {
        for j in 0..i {
            asym = asym.max((h.get(i, j) - h.get(j, i)).abs());
        }
    }
    if asym.is_nan() || asym > TOLERANCE * scale {
        failures.push(format!("Hessian not symmetric: max |H - H^T| = {asym:.3e}"));
    }

    // Finite differences of the adjoint gradient, column by column.
    let adjoint = engine.adjoint(entry, of, wrt, &adjoint_options(cl))?;
    let rel = step.unwrap_or(f64::EPSILON.cbrt());
    let elements = wrt_elements(args, &h)?;
    let mut fd_diff = 0.0f64;
    let mut bad_cols = Vec::new();
    let gscale = h.gradient.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (col, &(param, offset)) in elements.iter().enumerate() {
        let x = args.buffers()[param].get_f64(offset);
        let h_step = rel * x.abs().max(1.0);
        let at = |d: f64| -> Result<(Vec<f64>, f64), Failure> {
            let mut a = args.clone();
            a.buffers_mut()[param].set_f64(offset, x + d);
            let actual = a.buffers()[param].get_f64(offset);
            let g = engine.restoring_state(|| adjoint.gradient(&a))?.1;
            Ok((g, actual))
        };
        let ((gp, xp), (gm, xm)) = (at(h_step)?, at(-h_step)?);
        let mut worst = 0.0f64;
        for row in 0..n {
            let fd = (gp[row] - gm[row]) / (xp - xm);
            worst = worst.max((h.get(row, col) - fd).abs());
        }
        // Central differences err by about h^2 |f''''| + eps |g| / h.
        let bound =
            100.0 * (h_step * h_step * scale + f64::EPSILON * gscale / h_step) + 1e-7 * scale;
        if worst.is_nan() || worst > bound {
            bad_cols.push(h.wrt[col].clone());
        }
        fd_diff = fd_diff.max(worst);
    }
    if !bad_cols.is_empty() {
        failures.push(format!(
            "Hessian and finite differences of the gradient disagree for: {}",
            bad_cols.join(", ")
        ));
    }

    // Dot-product test: u.(H v) by tangent over adjoint, u^T H v by tangent
    // over tangent.
    let hess = engine.hessian(entry, of, wrt, 1, &adjoint_options(cl))?;
    let second = engine.second_directional(entry, of, wrt)?;
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let u: Vec<f64> = (0..n).map(|_| next()).collect();
    let v: Vec<f64> = (0..n).map(|_| next()).collect();
    let (_, _, hv) = engine.restoring_state(|| hess.hvp(args, &v))?;
    let uhv: f64 = u.iter().zip(&hv).map(|(a, b)| a * b).sum();
    let (tot, _) = engine.restoring_state(|| second.at(args, &u, &v))?;
    let tot = tot.first().copied().unwrap_or(0.0);
    let dot_rel = (uhv - tot).abs() / uhv.abs().max(tot.abs()).max(f64::MIN_POSITIVE);
    let dot_ok = dot_rel <= TOLERANCE || (uhv - tot).abs() <= 1e-300;
    if !dot_ok {
        failures.push(format!(
            "second-order dot-product test failed: relative difference {dot_rel:.3e}"
        ));
    }

    let ok = failures.is_empty();
    let text = vec![
        format!("Hessian of {} ({n} x {n}): max |H - H^T| = {asym:.3e}", h.of),
        format!("Hessian vs finite differences of the gradient: max difference {fd_diff:.3e}"),
        format!("second-order dot product: u.(H v) = {uhv:.16e}, u^T H v (tangent over tangent) = {tot:.16e}, relative difference {dot_rel:.2e}"),
    ];
    Ok(SecondOrder {
        ok,
        of: h.of.clone(),
        symmetry: Num(asym),
        fd_of_gradient: Num(fd_diff),
        dot_product: SecondDot {
            tangent_over_adjoint: Num(uhv),
            tangent_over_tangent: Num(tot),
            relative_difference: Num(dot_rel),
        },
        text,
        failures,
    })
}

/// (argument index, element offset) of each Hessian column, from its
/// label (`x` or `x(2)`, `a(1,3)`).
fn wrt_elements(args: &Args, h: &HessianMatrix) -> Result<Vec<(usize, usize)>, Failure> {
    h.wrt
        .iter()
        .map(|label| {
            let sel = Selection::parse(label)?;
            let param = args.index_of(&sel.name)?;
            let offset = match &sel.subscripts {
                Some(subs) => args.offset(param, subs)?,
                None => 0,
            };
            Ok((param, offset))
        })
        .collect()
}
