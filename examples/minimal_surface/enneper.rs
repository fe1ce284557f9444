//! The minimal surface problem of MINPACK-2 (`dmsabc`): Enneper's surface
//! as boundary data on the square [-1/2, 1/2]^2, so that the exact minimal
//! surface is known; and the Fortran objective (`examples/msa.f`) set up on
//! it as an argmin problem.

use adjit::engine::{Engine, Error, Options};
use adjit::optim::Problem;

/// MINPACK-2's minimal surface area on an n x n interior grid with
/// Enneper's boundary data, minimized over the interior heights `x`.
pub fn problem(n: usize) -> Result<Problem, Error> {
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/msa.f");
    let engine = Engine::from_files(&[source], Options::default())?;
    let mut args = engine.procedure(Some("msa"))?.args();
    args.set_scalar("nx", n as f64)?;
    args.set_scalar("ny", n as f64)?;
    let [bottom, top, left, right] = boundary(n, n);
    for (name, values) in [
        ("bottom", bottom),
        ("top", top),
        ("left", left),
        ("right", right),
    ] {
        args.set_array(name, &values)?;
    }
    Problem::new(&engine, Some("msa"), "f", "x", args)
}

/// Enneper's surface over the point `(x, y)`: solves `x = u + u v^2 - u^3/3`,
/// `y = -v - u^2 v + v^3/3` for `(u, v)` by Newton's method (as `dmsabc`
/// does) and returns `z = u^2 - v^2`.
pub fn height(x: f64, y: f64) -> f64 {
    let (mut u, mut v) = (x, -y);
    for _ in 0..50 {
        let fu = u + u * v * v - u.powi(3) / 3.0 - x;
        let fv = -v - u * u * v + v.powi(3) / 3.0 - y;
        if fu.abs().max(fv.abs()) < 1e-15 {
            break;
        }
        let (fuu, fuv) = (1.0 + v * v - u * u, 2.0 * u * v);
        let (fvu, fvv) = (-2.0 * u * v, -1.0 - u * u + v * v);
        let det = fuu * fvv - fuv * fvu;
        u -= (fvv * fu - fuv * fv) / det;
        v -= (fuu * fv - fvu * fu) / det;
    }
    u * u - v * v
}

/// The boundary arrays `bottom`, `top` (nx + 2 values each, left to right)
/// and `left`, `right` (ny + 2 values each, bottom to top) for an nx x ny
/// interior grid.
pub fn boundary(nx: usize, ny: usize) -> [Vec<f64>; 4] {
    let (hx, hy) = (1.0 / (nx + 1) as f64, 1.0 / (ny + 1) as f64);
    let xs = |i: usize| -0.5 + i as f64 * hx;
    let ys = |j: usize| -0.5 + j as f64 * hy;
    [
        (0..nx + 2).map(|i| height(xs(i), -0.5)).collect(),
        (0..nx + 2).map(|i| height(xs(i), 0.5)).collect(),
        (0..ny + 2).map(|j| height(-0.5, ys(j))).collect(),
        (0..ny + 2).map(|j| height(0.5, ys(j))).collect(),
    ]
}

/// Enneper's surface at the interior grid points, in the order of the
/// unknowns `x(nx*(j-1) + i)`.
pub fn exact(nx: usize, ny: usize) -> Vec<f64> {
    let (hx, hy) = (1.0 / (nx + 1) as f64, 1.0 / (ny + 1) as f64);
    (1..=ny)
        .flat_map(|j| (1..=nx).map(move |i| height(-0.5 + i as f64 * hx, -0.5 + j as f64 * hy)))
        .collect()
}
