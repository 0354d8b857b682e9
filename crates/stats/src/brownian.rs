//! Brownian motion with drift between two absorbing barriers: the continuous approximation of
//! the LLR walk that the SPRT-aware Elo estimate inverts (fishtest `brownian.py`, vdbergh's
//! "brownian_approximation" note).

use crate::elo::normal_cdf;
use crate::StatsError;
use std::f64::consts::PI;

/// The eigenfunction series converges geometrically once `σ²T/A²` is not tiny (below that the
/// Siegmund approximation is used instead); this cap only guards against non-finite input.
const MAX_SERIES_TERMS: usize = 100_000;

/// A walk started at 0, absorbed at `a < 0 < b`, with drift `mu` and variance `sigma2` per
/// unit time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Brownian {
    pub a: f64,
    pub b: f64,
    pub mu: f64,
    pub sigma2: f64,
}

impl Brownian {
    /// Probability that the walk ends no better than the observed state `(T, y)`: absorbed at
    /// `a` before time T, still running below y at T, or absorbed at `b` after T.
    pub fn outcome_cdf(&self, t: f64, y: f64) -> Result<f64, StatsError> {
        let gamma = self.mu / self.sigma2;
        let width = self.b - self.a;
        let p = if self.sigma2 * t / (width * width) < 1e-2 || (gamma * width).abs() > 15.0 {
            self.outcome_cdf_siegmund(t, y)
        } else {
            self.outcome_cdf_series(t, y)?
        };
        if p.is_finite() {
            Ok(p)
        } else {
            Err(StatsError::NoConvergence {
                what: "the Brownian outcome probability",
            })
        }
    }

    /// Exact eigenfunction expansion on the absorbing strip.
    fn outcome_cdf_series(&self, t: f64, y: f64) -> Result<f64, StatsError> {
        let (mu, sigma2) = (self.mu, self.sigma2);
        let width = self.b - self.a;
        let x = -self.a;
        let y = y - self.a;
        let gamma = mu / sigma2;
        let lambda = |n: f64| (n * PI / width).powi(2) * sigma2 / 2.0 + mu * mu / sigma2 / 2.0;
        let lambda_1 = lambda(1.0);
        let t0 = (-lambda_1 * t - x * gamma + y * gamma).exp();
        let mut sum = 0.0;
        let mut converged = false;
        for n in 1..=MAX_SERIES_TERMS {
            let n = n as f64;
            let t1 = (-(lambda(n) - lambda_1) * t).exp();
            let t3 = primitive(n, gamma, width, y);
            let t4 = (n * PI * x / width).sin();
            sum += t1 * t3 * t4;
            if (t0 * t1 * t3).abs() <= 1e-9 {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(StatsError::NoConvergence {
                what: "the Brownian eigenfunction series",
            });
        }
        let pre = if gamma * width > 30.0 {
            (-2.0 * gamma * x).exp()
        } else if (gamma * width).abs() < 1e-8 {
            (width - x) / width
        } else {
            (1.0 - (2.0 * gamma * (width - x)).exp()) / (1.0 - (2.0 * gamma * width).exp())
        };
        Ok(pre + t0 * sum)
    }

    /// Siegmund's approximation with normal CDFs, used where the series would converge slowly;
    /// far tails use the asymptotic expansion of Φ so that exp(large) · Φ(very negative) does not
    /// become inf · 0.
    fn outcome_cdf_siegmund(&self, t: f64, y: f64) -> f64 {
        let denom = (t * self.sigma2).sqrt();
        let offset = self.mu * t;
        let gamma = self.mu / self.sigma2;
        let (a, b) = (self.a, self.b);
        let z = (y - offset) / denom;
        let za = (-y + offset + 2.0 * a) / denom;
        let zb = (y - offset - 2.0 * b) / denom;
        let tail = |z: f64, log_factor: f64| {
            if log_factor >= 10.0 {
                -(-(z * z) / 2.0 + log_factor).exp() / (2.0 * PI).sqrt()
                    * (1.0 / z - 1.0 / z.powi(3))
            } else {
                log_factor.exp() * normal_cdf(z)
            }
        };
        normal_cdf(z) + tail(za, 2.0 * gamma * a) - tail(zb, 2.0 * gamma * b)
    }
}

/// A primitive of `e^(γy) sin(nπy/A)`, times `(2/A) e^(-γy)`.
fn primitive(n: f64, gamma: f64, width: f64, y: f64) -> f64 {
    let angle = PI * n * y / width;
    (2.0 * width * gamma * angle.sin() - 2.0 * PI * n * angle.cos())
        / (width * width * gamma * gamma + PI * PI * n * n)
}
