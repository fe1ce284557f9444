//! The special functions behind the IR's `Erf`, `Erfc`, `Gamma`,
//! `LogGamma`, `BesselJ0`, `BesselJ1` and `Polygamma` operations.
//!
//! The interpreter calls these functions and the JIT calls them through
//! `extern "C"` wrappers, so both give the same bits. The elementary
//! special functions are the `libm` crate's (a port of musl's); the
//! polygamma functions (the derivatives of `log_gamma`) are computed here:
//! shifted up with the recurrence `psi^(n)(x) = psi^(n)(x+1) +
//! (-1)^(n+1) n!/x^(n+1)` until `x >= 10 + n`, then summed with the
//! asymptotic (Bernoulli) series; negative arguments of digamma and
//! trigamma use the reflection formulas.

/// The Bernoulli numbers `B_2, B_4, ..., B_20`.
const BERNOULLI: [f64; 10] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
];

/// A special function applied to `f64` and `f32` operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// The error function.
    Erf,
    /// The complementary error function.
    Erfc,
    /// The gamma function.
    Gamma,
    /// The logarithm of the absolute value of the gamma function.
    LogGamma,
    /// The Bessel function of the first kind of order 0.
    BesselJ0,
    /// The Bessel function of the first kind of order 1.
    BesselJ1,
    /// The polygamma function of the given order (0: digamma).
    Polygamma(u8),
}

impl Special {
    /// Its name: the Fortran intrinsic's for the elementary special
    /// functions, `polygamma` for the polygamma functions.
    pub fn name(self) -> &'static str {
        match self {
            Special::Erf => "erf",
            Special::Erfc => "erfc",
            Special::Gamma => "gamma",
            Special::LogGamma => "log_gamma",
            Special::BesselJ0 => "bessel_j0",
            Special::BesselJ1 => "bessel_j1",
            Special::Polygamma(_) => "polygamma",
        }
    }

    /// The function at a double-precision argument.
    pub fn f64(self, x: f64) -> f64 {
        match self {
            Special::Erf => libm::erf(x),
            Special::Erfc => libm::erfc(x),
            Special::Gamma => libm::tgamma(x),
            Special::LogGamma => libm::lgamma(x),
            Special::BesselJ0 => libm::j0(x),
            Special::BesselJ1 => libm::j1(x),
            Special::Polygamma(n) => polygamma(n, x),
        }
    }

    /// The function at a single-precision argument (polygamma is computed
    /// in double precision and rounded).
    pub fn f32(self, x: f32) -> f32 {
        match self {
            Special::Erf => libm::erff(x),
            Special::Erfc => libm::erfcf(x),
            Special::Gamma => libm::tgammaf(x),
            Special::LogGamma => libm::lgammaf(x),
            Special::BesselJ0 => libm::j0f(x),
            Special::BesselJ1 => libm::j1f(x),
            Special::Polygamma(n) => polygamma(n, f64::from(x)) as f32,
        }
    }
}

/// `psi^(n)(x)`, the `n`-th derivative of the digamma function
/// (`n = 0`: digamma). NaN at the poles (zero and the negative integers)
/// and for NaN; at `+inf` the limit (`inf` for digamma, 0 otherwise).
pub fn polygamma(n: u8, x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return if n == 0 { f64::INFINITY } else { 0.0 };
    }
    let pi = std::f64::consts::PI;
    if x < 0.0 && n <= 1 {
        // psi(x) = psi(1-x) - pi cot(pi x); psi'(x) = pi^2/sin^2(pi x) - psi'(1-x).
        let s = (pi * x).sin();
        return if n == 0 {
            polygamma(0, 1.0 - x) - pi * (pi * x).cos() / s
        } else {
            pi * pi / (s * s) - polygamma(1, 1.0 - x)
        };
    }
    let n_f = f64::from(n);
    // n! and the sign (-1)^(n+1).
    let factorial: f64 = (1..=u32::from(n)).map(f64::from).product();
    let sign = if n.is_multiple_of(2) { -1.0 } else { 1.0 };
    let mut x = x;
    let mut acc = 0.0;
    while x < 10.0 + n_f {
        acc += sign * factorial / x.powi(i32::from(n) + 1);
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    if n == 0 {
        // ln x - 1/(2x) - sum B_2k / (2k x^2k).
        let mut series = 0.0;
        let mut pow = inv2;
        for (k, b) in BERNOULLI.iter().enumerate() {
            series += b / (2.0 * (k as f64 + 1.0)) * pow;
            pow *= inv2;
        }
        return acc + x.ln() - 0.5 * inv - series;
    }
    // (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum B_2k (2k+n-1)!/(2k)! / x^(2k+n)].
    let x_n = x.powi(i32::from(n));
    let mut sum = factorial / n_f / x_n + factorial * 0.5 * inv / x_n;
    // ratio = (2k+n-1)!/(2k)!, updated from k-1 to k.
    let mut ratio = factorial / n_f; // (n-1)!/0! at k = 0
    let mut pow = 1.0 / x_n;
    for (k, b) in BERNOULLI.iter().enumerate() {
        let two_k = 2.0 * (k as f64 + 1.0);
        ratio *= (two_k + n_f - 2.0) * (two_k + n_f - 1.0) / ((two_k - 1.0) * two_k);
        pow *= inv2;
        sum += b * ratio * pow;
    }
    acc + sign * sum
}

#[cfg(test)]
mod tests {
    use super::*;

    const EULER: f64 = 0.577_215_664_901_532_9;

    fn close(a: f64, b: f64, rel: f64) {
        assert!(
            (a - b).abs() <= rel * b.abs().max(1e-300),
            "{a} vs {b} (relative {})",
            ((a - b) / b).abs()
        );
    }

    #[test]
    fn digamma_known_values() {
        close(polygamma(0, 1.0), -EULER, 1e-15);
        close(polygamma(0, 0.5), -EULER - 2.0 * 2f64.ln(), 1e-15);
        // psi(n+1) = H_n - gamma.
        close(polygamma(0, 11.0), 2.928_968_253_968_254 - EULER, 1e-15);
        close(polygamma(0, 100.0), 4.600_161_852_738_087, 1e-15);
        // psi(1/4) = -gamma - pi/2 - 3 ln 2.
        let pi = std::f64::consts::PI;
        close(
            polygamma(0, 0.25),
            -EULER - pi / 2.0 - 3.0 * 2f64.ln(),
            1e-14,
        );
        // psi(-0.5) = psi(0.5) + 2 (recurrence through the reflection).
        close(polygamma(0, -0.5), -EULER - 2.0 * 2f64.ln() + 2.0, 1e-14);
        assert!(polygamma(0, 0.0).is_nan() && polygamma(0, -3.0).is_nan());
    }

    #[test]
    fn trigamma_and_tetragamma_known_values() {
        let pi = std::f64::consts::PI;
        // psi'(1) = pi^2/6, psi'(1/2) = pi^2/2, psi''(1) = -2 zeta(3).
        close(polygamma(1, 1.0), pi * pi / 6.0, 1e-15);
        close(polygamma(1, 0.5), pi * pi / 2.0, 1e-15);
        close(polygamma(2, 1.0), -2.0 * 1.202_056_903_159_594_3, 1e-15);
        // psi'(-0.5) = psi'(0.5) + 1/0.25.
        close(polygamma(1, -0.5), pi * pi / 2.0 + 4.0, 1e-14);
        // psi'''(1) = pi^4/15.
        close(polygamma(3, 1.0), pi.powi(4) / 15.0, 1e-14);
    }

    #[test]
    fn digamma_is_the_derivative_of_log_gamma() {
        for &x in &[0.3, 1.7, 4.2, 7.5, 25.0, -1.3] {
            let h = 1e-5;
            let fd = (libm::lgamma(x + h) - libm::lgamma(x - h)) / (2.0 * h);
            close(polygamma(0, x), fd, 1e-8);
            let fd1 = (polygamma(0, x + h) - polygamma(0, x - h)) / (2.0 * h);
            close(polygamma(1, x), fd1, 1e-7);
        }
    }
}
