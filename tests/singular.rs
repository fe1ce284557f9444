//! Singular partials on the path not taken (issue 10, item 2): a partial
//! that is infinite or NaN multiplying a derivative that is exactly zero
//! contributes 0 (a strong zero), in the tangent (scalar and vector mode)
//! and the adjoint, through the JIT and the interpreter; a derivative that
//! is genuinely infinite on the path taken still comes out infinite.
//!
//! Each program is checked against its analytic Jacobian, tangent against
//! adjoint entry by entry, by the dot-product identity, and against central
//! finite differences where the function is smooth around the point.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Backend, Engine, FiniteDifferences, Jacobian, Options, Selection};
use common::check::Rng;

/// Relative agreement of finite derivatives between modes and with the
/// analytic values.
const AD_TOLERANCE: f64 = 1e-13;
/// The dot-product identity, relative to the magnitude of its terms.
const DOT_TOLERANCE: f64 = 1e-13;
/// Central differences (step `eps^(1/3)`) on smooth, low-curvature data.
const FD_TOLERANCE: f64 = 1e-7;

const BACKENDS: [Backend; 2] = [Backend::Jit, Backend::Interpreter];

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

fn engine(source: &str, backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("test.f90".to_string(), source.to_string())], options)
        .unwrap_or_else(|e| panic!("{e}\n{source}"))
}

/// True when `a` and `b` agree: equal infinities, or finite and within
/// `tol` relative to `max(1, |a|, |b|)`. NaN agrees with nothing.
fn agree(a: f64, b: f64, tol: f64) -> bool {
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// Entries of `got` that disagree with `want` (`None` entries are not
/// compared).
fn mismatches(what: &str, got: &Jacobian, want: &[Vec<Option<f64>>], tol: f64) -> Vec<String> {
    let mut out = Vec::new();
    for (r, row) in want.iter().enumerate() {
        for (c, w) in row.iter().enumerate() {
            if let Some(w) = *w {
                let g = got.get(r, c);
                if !agree(g, w, tol) {
                    out.push(format!(
                        "{what}: d{}/d{} = {g:e}, want {w:e}",
                        got.of[r], got.wrt[c]
                    ));
                }
            }
        }
    }
    out
}

/// Every entry of a Jacobian, as the expectation of [`mismatches`].
fn all_of(j: &Jacobian) -> Vec<Vec<Option<f64>>> {
    (0..j.rows())
        .map(|r| (0..j.cols()).map(|c| Some(j.get(r, c))).collect())
        .collect()
}

/// One program at one point with its analytic Jacobian (`None`: not
/// compared, e.g. where the true derivative is undefined).
struct Case<'a> {
    name: &'a str,
    source: String,
    settings: Vec<String>,
    of: &'a str,
    wrt: &'a str,
    analytic: Vec<Vec<Option<f64>>>,
    /// Entries compared with finite differences (smooth around the point;
    /// skipped where the output is not finite).
    fd: Vec<(usize, usize)>,
    /// Directions of the dot-product test: (input mask, output mask);
    /// random values where the mask is true, exact zeros elsewhere.
    dot: Vec<(Vec<bool>, Vec<bool>)>,
}

/// Checks a case through both backends, tangent K=1 and K=n, adjoint.
fn check(case: &Case) -> Vec<String> {
    let mut failures = Vec::new();
    for backend in BACKENDS {
        let label = format!("{} [{backend:?}]", case.name);
        let engine = engine(&case.source, backend);
        let primal = engine.procedure(None).unwrap();
        let mut args = primal.args();
        args.apply_settings(&case.settings).unwrap();
        let (of, wrt) = (sel(case.of), sel(case.wrt));
        let n = adjit::engine::element_count(&args, &wrt).unwrap();
        let adjoint = engine
            .adjoint(None, &of, &wrt, &AdjointOptions::default())
            .unwrap();
        let adj = adjoint.jacobian(&args).unwrap();
        failures.extend(mismatches(
            &format!("{label} adjoint vs analytic"),
            &adj,
            &case.analytic,
            AD_TOLERANCE,
        ));
        let mut tangents = Vec::new();
        for k in [1, n] {
            let tangent = engine.tangent(None, &of, &wrt, k).unwrap();
            let tan = tangent.jacobian(&args).unwrap();
            failures.extend(mismatches(
                &format!("{label} tangent K={k} vs analytic"),
                &tan,
                &case.analytic,
                AD_TOLERANCE,
            ));
            failures.extend(mismatches(
                &format!("{label} tangent K={k} vs adjoint"),
                &tan,
                &all_of(&adj),
                AD_TOLERANCE,
            ));
            tangents.push(tangent);
        }

        // Dot products <J xd, yb> = <xd, J^T yb>, with exact zeros in the
        // directions where the masks say so (that is where strong zeros
        // act: the zero direction times an infinite partial).
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for (xmask, ymask) in &case.dot {
            let xd: Vec<f64> = xmask
                .iter()
                .map(|&m| if m { rng.next() } else { 0.0 })
                .collect();
            let yb: Vec<f64> = ymask
                .iter()
                .map(|&m| if m { rng.next() } else { 0.0 })
                .collect();
            let (_, xb) = adjoint.vjp(&args, &yb).unwrap();
            for tangent in &tangents {
                let yd = tangent.directional(&args, &xd).unwrap();
                // Terms with an exactly zero factor are left out on both
                // sides: the other factor may be infinite.
                let terms = |a: &[f64], b: &[f64]| -> Vec<f64> {
                    a.iter()
                        .zip(b)
                        .filter(|(x, y)| **x != 0.0 && **y != 0.0)
                        .map(|(x, y)| x * y)
                        .collect()
                };
                let (l, r) = (terms(&yd, &yb), terms(&xd, &xb));
                let lhs: f64 = l.iter().sum();
                let rhs: f64 = r.iter().sum();
                let magnitude: f64 = l.iter().chain(&r).map(|t| t.abs()).sum();
                if !(lhs.is_finite()
                    && rhs.is_finite()
                    && (lhs - rhs).abs() <= DOT_TOLERANCE * magnitude.max(f64::MIN_POSITIVE))
                {
                    failures.push(format!(
                        "{label} dot product (K={}): {lhs:e} vs {rhs:e} (yd {yd:?}, xb {xb:?})",
                        tangent.directions()
                    ));
                }
            }
        }

        let fd = FiniteDifferences::new(&primal)
            .jacobian(&args, &of, &wrt)
            .unwrap();
        // Where an output is infinite its differences are meaningless.
        for &(r, c) in case.fd.iter().filter(|&&(r, _)| fd.values[r].is_finite()) {
            if !agree(fd.get(r, c), adj.get(r, c), FD_TOLERANCE) {
                failures.push(format!(
                    "{label} adjoint vs finite differences: d{}/d{} = {:e} vs {:e}",
                    adj.of[r],
                    adj.wrt[c],
                    adj.get(r, c),
                    fd.get(r, c)
                ));
            }
        }
    }
    failures
}

/// MINPACK-2's optimal design with composites (dodcfg / dodcps), function
/// part: `sqrtt = sqrt(t)` decides the branch and feeds the middle branch.
/// At the standard start (x = 0) every cell has t = 0, takes the first
/// branch, and the sqrt's partial is infinite.
const OPTIMAL_DESIGN: &str = "
subroutine odc(nx, ny, x, f, lambda)
  integer nx, ny
  double precision x(nx*ny), f, lambda
  integer i, j, k
  double precision v, vr, vt, dvdx, dvdy, gradv, hx, hy, dpsi
  double precision mu1, mu2, t1, t2
  mu1 = 1.0d0
  mu2 = 2.0d0
  t1 = sqrt(lambda*mu1/mu2)
  t2 = sqrt(lambda*mu2/mu1)
  hx = 1.0d0/dble(nx+1)
  hy = 1.0d0/dble(ny+1)
  f = 0.0d0
  do j = 0, ny
    do i = 0, nx
      k = nx*(j-1) + i
      v = 0.0d0
      vr = 0.0d0
      vt = 0.0d0
      if (j >= 1 .and. i >= 1) v = x(k)
      if (i < nx .and. j > 0) vr = x(k+1)
      if (i > 0 .and. j < ny) vt = x(k+nx)
      dvdx = (vr-v)/hx
      dvdy = (vt-v)/hy
      gradv = dvdx**2 + dvdy**2
      call dodcps(gradv, mu1, mu2, t1, t2, dpsi, lambda)
      f = f + dpsi
    end do
  end do
  f = hx*hy*f
end

subroutine dodcps(t, mu1, mu2, t1, t2, result, lambda)
  double precision t, mu1, mu2, t1, t2, result, lambda
  double precision sqrtt
  sqrtt = sqrt(t)
  if (sqrtt <= t1) then
    result = 0.5d0*mu2*t
  else if (sqrtt > t1 .and. sqrtt < t2) then
    result = mu2*t1*sqrtt - lambda*mu1
  else
    result = 0.5d0*mu1*t + lambda*(mu2-mu1)
  end if
end
";

/// The optimal-design gradient by hand: `f = hx hy sum psi(g_c)` over the
/// cells, `g_c = dvdx^2 + dvdy^2`, with `psi' = mu2/2` in the first branch,
/// `mu2 t1 / (2 sqrt(g))` in the second, `mu1/2` in the third.
fn optimal_design_gradient(nx: usize, ny: usize, x: &[f64], lambda: f64) -> Vec<f64> {
    let (mu1, mu2) = (1.0, 2.0);
    let (t1, t2) = ((lambda * mu1 / mu2).sqrt(), (lambda * mu2 / mu1).sqrt());
    let (hx, hy) = (1.0 / (nx + 1) as f64, 1.0 / (ny + 1) as f64);
    let mut grad = vec![0.0; nx * ny];
    let at = |i: usize, j: usize| x[nx * (j - 1) + i - 1];
    for j in 0..=ny {
        for i in 0..=nx {
            // (value, index) of v, vr, vt; index None for the boundary.
            let v = (j >= 1 && i >= 1).then(|| (at(i, j), nx * (j - 1) + i - 1));
            let vr = (i < nx && j > 0).then(|| (at(i + 1, j), nx * (j - 1) + i));
            let vt = (i > 0 && j < ny).then(|| (at(i, j + 1), nx * j + i - 1));
            let val = |p: Option<(f64, usize)>| p.map_or(0.0, |p| p.0);
            let dvdx = (val(vr) - val(v)) / hx;
            let dvdy = (val(vt) - val(v)) / hy;
            let g = dvdx * dvdx + dvdy * dvdy;
            let s = g.sqrt();
            let dpsi = if s <= t1 {
                0.5 * mu2
            } else if s < t2 {
                0.5 * mu2 * t1 / s
            } else {
                0.5 * mu1
            };
            // dg/dv = -2 dvdx/hx - 2 dvdy/hy, dg/dvr = 2 dvdx/hx, dg/dvt = 2 dvdy/hy.
            let mut add = |p: Option<(f64, usize)>, dg: f64| {
                if let Some((_, k)) = p {
                    grad[k] += hx * hy * dpsi * dg;
                }
            };
            add(v, -2.0 * dvdx / hx - 2.0 * dvdy / hy);
            add(vr, 2.0 * dvdx / hx);
            add(vt, 2.0 * dvdy / hy);
        }
    }
    grad
}

#[test]
fn optimal_design_gradient_is_finite_at_the_standard_start() {
    let (nx, ny, lambda) = (3usize, 2usize, 0.008);
    let n = nx * ny;
    // The standard start, and a point where some cells are flat (t = 0,
    // first branch) and the others steep (third branch).
    let points = [vec![0.0; n], vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.5]];
    let mut failures = Vec::new();
    for (p, x) in points.iter().enumerate() {
        let grad = optimal_design_gradient(nx, ny, x, lambda);
        let x_list = x.iter().map(f64::to_string).collect::<Vec<_>>().join(",");
        let case = Case {
            name: &format!("optimal design, point {p}"),
            source: OPTIMAL_DESIGN.to_string(),
            settings: vec![
                format!("nx={nx}"),
                format!("ny={ny}"),
                format!("lambda={lambda}"),
                format!("x={x_list}"),
            ],
            of: "f",
            wrt: "x",
            analytic: vec![grad.iter().map(|&g| Some(g)).collect()],
            fd: (0..n).map(|c| (0, c)).collect(),
            dot: vec![(vec![true; n], vec![true])],
        };
        failures.extend(check(&case));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One singular intrinsic: `t = expr` at a point where its partial in
/// `x(1)` (and `x(4)`) is infinite.
struct Singular {
    name: &'static str,
    /// The expression of `t` in `x(1)` and `x(4)`.
    expr: &'static str,
    x1: f64,
    x4: f64,
    /// dt/dx1 and dt/dx4 at the point (None: not compared).
    partials: [Option<f64>; 2],
}

/// `y = t + x(2)` uses `t` (its derivative is the genuine partial, infinite
/// in `x(1)`, and 1 in `x(2)` whatever `x(1)`'s tangent); `z` takes the
/// branch that does not use `t` (x(3) > 0), so `t`'s adjoint is zero there.
fn singular_program(expr: &str) -> String {
    format!(
        "subroutine f(x, y, z)
  double precision x(4), y, z, t
  t = {expr}
  y = t + x(2)
  if (x(3) > 0) then
    z = x(2)*x(3)
  else
    z = t*x(3)
  end if
end
"
    )
}

fn singular_cases() -> Vec<Singular> {
    let inf = f64::INFINITY;
    let s = |name, expr, x1, x4, p1, p4| Singular {
        name,
        expr,
        x1,
        x4,
        partials: [p1, p4],
    };
    vec![
        s("sqrt at 0", "sqrt(x(1))", 0.0, 0.0, Some(inf), Some(0.0)),
        s("log at 0", "log(x(1))", 0.0, 0.0, Some(inf), Some(0.0)),
        s("log10 at 0", "log10(x(1))", 0.0, 0.0, Some(inf), Some(0.0)),
        s("asin at 1", "asin(x(1))", 1.0, 0.0, Some(inf), Some(0.0)),
        s("asin at -1", "asin(x(1))", -1.0, 0.0, Some(inf), Some(0.0)),
        s("acos at 1", "acos(x(1))", 1.0, 0.0, Some(-inf), Some(0.0)),
        s(
            "real power at 0",
            "x(1)**x(4)",
            0.0,
            0.5,
            Some(inf),
            Some(0.0),
        ),
        s(
            "constant power at 0",
            "x(1)**0.5d0",
            0.0,
            0.0,
            Some(inf),
            Some(0.0),
        ),
        s(
            "integer power at 0",
            "x(1)**(-1)",
            0.0,
            0.0,
            Some(-inf),
            Some(0.0),
        ),
        s(
            "division by 0",
            "x(4)/x(1)",
            0.0,
            1.0,
            Some(-inf),
            Some(inf),
        ),
        s(
            "exp overflowing",
            "exp(x(1))",
            800.0,
            0.0,
            Some(inf),
            Some(0.0),
        ),
        // Zero by the rules already (not singular): pinned here too.
        s(
            "atan2 at the origin",
            "atan2(x(1), x(4))",
            0.0,
            0.0,
            Some(0.0),
            Some(0.0),
        ),
        s("abs at 0", "abs(x(1))", 0.0, 0.0, Some(1.0), Some(0.0)),
        s("max tie", "max(x(1), x(4))", 0.5, 0.5, Some(1.0), Some(0.0)),
    ]
}

#[test]
fn singular_partials_on_the_path_not_taken_are_strong_zeros() {
    let (x2, x3) = (0.7, 1.0);
    let mut failures = Vec::new();
    for c in singular_cases() {
        let [p1, p4] = c.partials;
        let case = Case {
            name: c.name,
            source: singular_program(c.expr),
            settings: vec![format!("x={},{x2},{x3},{}", c.x1, c.x4)],
            of: "y,z",
            wrt: "x",
            analytic: vec![
                vec![p1, Some(1.0), Some(0.0), p4],
                vec![Some(0.0), Some(x3), Some(x2), Some(0.0)],
            ],
            // z is smooth around the point; y in x(2), x(3).
            fd: vec![(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)],
            dot: vec![
                // t's adjoint is exactly zero: strong zeros in the adjoint.
                (vec![true; 4], vec![false, true]),
                // x(1)'s and x(4)'s tangents are exactly zero: strong
                // zeros in the tangent.
                (vec![false, true, true, false], vec![true, true]),
            ],
        };
        failures.extend(check(&case));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The settings of the option: `Off` is IEEE (the NaN comes back),
/// `Singular` guards singular partials, `All` (the default of both modes) also
/// guards products with an infinite primal value (`w = t*x(2)` after `t = 1/x(1)` at `x(1) = 0`,
/// executed, but used only by the branch not taken).
#[test]
fn strong_zero_settings_are_honoured() {
    use adjit::ad::rules::StrongZero;
    let source = "subroutine f(x, y)
  double precision x(2), y, t, w, s
  s = sqrt(x(1))
  t = 1/x(1)
  w = t*x(2)
  if (x(2) > 0) then
    y = x(2)
  else
    y = w + s
  end if
end
";
    for backend in BACKENDS {
        let engine = engine(source, backend);
        let mut args = engine.procedure(None).unwrap().args();
        args.apply_settings(&["x=0,3"]).unwrap();
        let gradient = |strong_zero| {
            let options = AdjointOptions {
                strong_zero,
                ..AdjointOptions::default()
            };
            let adjoint = engine
                .adjoint(None, &sel("y"), &sel("x"), &options)
                .unwrap();
            adjoint.gradient(&args).unwrap().1
        };
        let off = gradient(StrongZero::Off);
        assert!(
            off[0].is_nan() && off[1].is_nan(),
            "{backend:?} IEEE: {off:?}"
        );
        let singular = gradient(StrongZero::Singular);
        assert_eq!(
            singular[0], 0.0,
            "{backend:?} sqrt and 1/x at 0 are guarded"
        );
        assert!(singular[1].is_nan(), "{backend:?}: t*x(2) is not guarded");
        assert_eq!(gradient(StrongZero::All), [0.0, 1.0], "{backend:?} all");
        let default = engine
            .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
            .unwrap()
            .gradient(&args)
            .unwrap()
            .1;
        assert_eq!(default, [0.0, 1.0], "{backend:?} default");
    }
}

/// Strong zeros hold in both factors, so the two modes stay transposes of
/// each other at a singular point. Each chain multiplies an infinite
/// derivative by a partial that is exactly zero at the point, on the path
/// actually taken; the true derivative is finite (the singular piece is
/// locally constant):
/// * adjoint side: `t = sqrt(max(abs(max(s,0))*s, 0))` at `s < 0`, where
///   `abs(max(s,0)) = 0` is the partial of the product in `s` while the
///   adjoint arriving from `sqrt` at 0 is infinite;
/// * tangent side: `u = abs(max(y,0))*sqrt(x)` at `x = 0`, `y < 0`, where
///   the tangent of `sqrt(x)` is infinite and its partial in `u` is 0.
///
/// `r = 3*t + s + u + x`: `dr/ds = 1`, `dr/dx = 1`, `dr/dy = 0`.
#[test]
fn strong_zeros_hold_in_both_factors_so_the_modes_agree() {
    let source = "subroutine f(s, x, y, r)
  double precision s, x, y, r, t, u
  t = sqrt(max(abs(max(s, 0d0))*s, 0d0))
  u = abs(max(y, 0d0))*sqrt(x)
  r = 3*t + s + u + x
end
";
    for backend in BACKENDS {
        let engine = engine(source, backend);
        let mut args = engine.procedure(None).unwrap().args();
        args.apply_settings(&["s=-0.140625", "x=0", "y=-0.5"])
            .unwrap();
        let wrt = sel("s,x,y");
        let adjoint = engine
            .adjoint(None, &sel("r"), &wrt, &AdjointOptions::default())
            .unwrap()
            .gradient(&args)
            .unwrap()
            .1;
        assert_eq!(adjoint, [1.0, 1.0, 0.0], "{backend:?} adjoint");
        for directions in [1, 3] {
            let tangent = engine
                .tangent(None, &sel("r"), &wrt, directions)
                .unwrap()
                .jacobian(&args)
                .unwrap();
            assert_eq!(
                tangent.matrix,
                [1.0, 1.0, 0.0],
                "{backend:?} tangent K={directions}"
            );
        }
    }
}
