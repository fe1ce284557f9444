//! FMA contraction (`Options::fma_contraction`, opt-in): fused sums
//! round once, so they may differ from the unfused ones by a rounding, and
//! strong zeros keep their meaning.

use adjit::engine::{Engine, Options, Selection};

/// A library-style module: a residual with a correction term, and the
/// product of `examples/product.f90`.
const SOURCE: &str = "
module kernels
  implicit none
contains
  subroutine residual(a, b, c, r)
    double precision, intent(in) :: a, b, c
    double precision, intent(out) :: r
    r = c - a*b
  end subroutine residual
  subroutine product(n, x, y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y
    integer i
    y = 1
    do i = 1, n
      y = y*x(i)
    end do
  end subroutine product
end module kernels
";

fn engine(fused: bool) -> Engine {
    let options = Options {
        fma_contraction: fused,
        ..Options::default()
    };
    Engine::from_sources(&[("kernels.f90".into(), SOURCE.into())], options).expect("compiles")
}

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// `c - a*b` with `a*b = 1 - 2^-60` exactly: unfused, the product rounds
/// to 1 and the residual is 0; fused, the residual is the exact 2^-60.
#[test]
fn a_fused_difference_rounds_once() {
    let eps = 2f64.powi(-30);
    let residual = |fused: bool| {
        let proc = engine(fused).procedure(Some("residual")).unwrap();
        let mut args = proc.args();
        args.set_scalar("a", 1.0 + eps).unwrap();
        args.set_scalar("b", 1.0 - eps).unwrap();
        args.set_scalar("c", 1.0).unwrap();
        proc.call(&mut args).unwrap();
        args.scalar("r").unwrap()
    };
    assert_eq!(residual(false), 0.0);
    assert_eq!(residual(true), 2f64.powi(-60));
}

/// The tangent of the product, fused and not, along `xd` at `x`.
fn product_tangents(x: &[f64], xd: &[f64]) -> [f64; 2] {
    [false, true].map(|fused| {
        let engine = engine(fused);
        let proc = engine.procedure(Some("product")).unwrap();
        let mut args = proc.args();
        args.set_scalar("n", x.len() as f64).unwrap();
        args.set_array("x", x).unwrap();
        let tangent = engine
            .tangent(Some("product"), &sel("y"), &sel("x"), 1)
            .unwrap();
        tangent.directional(&args, xd).unwrap()[0]
    })
}

#[test]
fn the_fused_product_tangent_is_the_unfused_one_within_rounding() {
    let n = 200;
    let x: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.01 * ((i * 37 % 11) as f64 - 5.0))
        .collect();
    let xd: Vec<f64> = (0..n)
        .map(|i| ((i * 7919 % 113) as f64 / 113.0) - 0.5)
        .collect();
    let [plain, fused] = product_tangents(&x, &xd);
    // Analytic: sum_i xd_i * prod_{j != i} x_j.
    let y: f64 = x.iter().product();
    let exact: f64 = x.iter().zip(&xd).map(|(a, d)| d * y / a).sum();
    let scale: f64 = x.iter().zip(&xd).map(|(a, d)| (d * y / a).abs()).sum();
    assert!((plain - exact).abs() <= 1e-13 * scale, "{plain} vs {exact}");
    assert!((fused - plain).abs() <= 1e-13 * scale, "{fused} vs {plain}");
}

/// A zero factor and an infinite direction: the strong zero `0 * inf = 0`
/// holds fused too (the fused value is only taken for a nonzero product).
#[test]
fn strong_zeros_hold_in_fused_sums() {
    let x = [2.0, 0.0, 3.0, 5.0];
    let xd = [1.0, 1.0, f64::INFINITY, 0.0];
    let [plain, fused] = product_tangents(&x, &xd);
    assert_eq!(plain.to_bits(), 30f64.to_bits());
    assert_eq!(fused.to_bits(), plain.to_bits());
}

/// The fused product tangent, element by element: where the recurrence
/// product `y_d*x(i)` is neither zero nor NaN, `fma(x(i), y_d, g)` with `g`
/// the strong-zero product `y*xd(i)` (`+0` when a factor is zero); else the
/// exact guarded sum, unfused. The same on the fast path of the joint test
/// and on its cold copy.
fn fused_model(x: &[f64], xd: &[f64]) -> f64 {
    let guard = |p: f64, d: f64| if p == 0.0 || d == 0.0 { 0.0 } else { p * d };
    let (mut y, mut yd) = (1.0f64, 0.0f64);
    for (&a, &d) in x.iter().zip(xd) {
        let g = guard(y, d);
        let t = yd * a;
        yd = if t != 0.0 && !t.is_nan() {
            a.mul_add(yd, g)
        } else {
            guard(yd, a) + g
        };
        y *= a;
    }
    yd
}

/// Zeros, signed zeros, infinities, NaN and underflowing values as the
/// first, a middle and the last element of `x` and of the direction: the
/// fused tangent is the model's, bit for bit (every NaN as one).
#[test]
fn the_fused_product_tangent_is_fused_at_special_values() {
    let specials = [0.0, -0.0, f64::INFINITY, f64::NAN, 1e-200, -1e-170, 3.0];
    let n = 7;
    let base = |i: usize| 1.0 + 0.125 * i as f64 + 2f64.powi(-40);
    let bits = |v: f64| {
        if v.is_nan() {
            f64::NAN.to_bits()
        } else {
            v.to_bits()
        }
    };
    for &at in &[0, n / 2, n - 1] {
        for &s in &specials {
            for in_x in [true, false] {
                let mut x: Vec<f64> = (0..n).map(base).collect();
                let mut xd: Vec<f64> = (0..n).map(|i| 0.5 - 0.0625 * i as f64).collect();
                if in_x {
                    x[at] = s;
                } else {
                    xd[at] = s;
                }
                let [_, fused] = product_tangents(&x, &xd);
                let model = fused_model(&x, &xd);
                assert_eq!(bits(fused), bits(model), "{s} at {at} (x: {in_x})");
            }
        }
    }
}
