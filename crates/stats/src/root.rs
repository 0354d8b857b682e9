//! Bounded one-dimensional root finding.
//!
//! fishtest solves every equation with scipy's `brentq`; this is the same algorithm (Brent's
//! method with inverse quadratic interpolation, as in scipy's `zeros/brentq.c`) with the same
//! default tolerances, so our roots agree with fishtest's to the last digits that matter. It
//! takes at most [`MAX_ITERATIONS`] steps and reports failure as an error: a root finder that can
//! loop forever has no place in a server.

use crate::StatsError;

/// scipy's default `xtol`.
pub(crate) const XTOL: f64 = 2e-12;
/// scipy's default `rtol`, four machine epsilons.
pub(crate) const RTOL: f64 = 4.0 * f64::EPSILON;
/// scipy's default `maxiter`.
pub(crate) const MAX_ITERATIONS: usize = 100;

/// Why a bracketing search failed; kept apart from [`StatsError`] so that callers can react to
/// an unbracketed interval (widen it) differently from a real failure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RootFailure {
    /// `f(a)` and `f(b)` have the same sign.
    NotBracketed,
    /// A function value was NaN or infinite, or the steps ran out.
    Diverged,
}

impl RootFailure {
    pub(crate) fn into_error(self, what: &'static str) -> StatsError {
        StatsError::NoConvergence { what }
    }
}

/// A root of `f` in `[a, b]`, where `f(a)` and `f(b)` must differ in sign.
pub(crate) fn brent(mut f: impl FnMut(f64) -> f64, a: f64, b: f64) -> Result<f64, RootFailure> {
    let (mut x_pre, mut x_cur) = (a, b);
    let (mut f_pre, mut f_cur) = (f(x_pre), f(x_cur));
    if !f_pre.is_finite() || !f_cur.is_finite() {
        return Err(RootFailure::Diverged);
    }
    if f_pre == 0.0 {
        return Ok(x_pre);
    }
    if f_cur == 0.0 {
        return Ok(x_cur);
    }
    if f_pre.is_sign_negative() == f_cur.is_sign_negative() {
        return Err(RootFailure::NotBracketed);
    }
    // x_blk is the point that keeps the root bracketed against x_cur.
    let (mut x_blk, mut f_blk) = (0.0, 0.0);
    let (mut s_pre, mut s_cur) = (0.0_f64, 0.0_f64);
    for _ in 0..MAX_ITERATIONS {
        if f_pre != 0.0 && f_cur != 0.0 && f_pre.is_sign_negative() != f_cur.is_sign_negative() {
            x_blk = x_pre;
            f_blk = f_pre;
            s_cur = x_cur - x_pre;
            s_pre = s_cur;
        }
        if f_blk.abs() < f_cur.abs() {
            x_pre = x_cur;
            x_cur = x_blk;
            x_blk = x_pre;
            f_pre = f_cur;
            f_cur = f_blk;
            f_blk = f_pre;
        }
        let delta = (XTOL + RTOL * x_cur.abs()) / 2.0;
        let s_bisect = (x_blk - x_cur) / 2.0;
        if f_cur == 0.0 || s_bisect.abs() < delta {
            return Ok(x_cur);
        }
        let mut bisect = true;
        if s_pre.abs() > delta && f_cur.abs() < f_pre.abs() {
            let s_try = if x_pre == x_blk {
                // Secant step.
                -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            } else {
                // Inverse quadratic interpolation through the three points.
                let d_pre = (f_pre - f_cur) / (x_pre - x_cur);
                let d_blk = (f_blk - f_cur) / (x_blk - x_cur);
                -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            };
            if 2.0 * s_try.abs() < s_pre.abs().min(3.0 * s_bisect.abs() - delta) {
                s_pre = s_cur;
                s_cur = s_try;
                bisect = false;
            }
        }
        if bisect {
            s_pre = s_bisect;
            s_cur = s_bisect;
        }
        x_pre = x_cur;
        f_pre = f_cur;
        x_cur += if s_cur.abs() > delta {
            s_cur
        } else if s_bisect > 0.0 {
            delta
        } else {
            -delta
        };
        f_cur = f(x_cur);
        if !f_cur.is_finite() {
            return Err(RootFailure::Diverged);
        }
    }
    Err(RootFailure::Diverged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sqrt_two() {
        let x = brent(|x| x * x - 2.0, 0.0, 2.0).unwrap();
        assert!((x - 2f64.sqrt()).abs() < 1e-11);
    }

    #[test]
    fn finds_root_of_steep_function() {
        // A pole-like secular function, the shape fishtest solves all day.
        let x = brent(|x| 0.3 / (1.0 + x) - 0.7 / (1.0 - x), -0.999, 0.999).unwrap();
        assert!((x - (-0.4)).abs() < 1e-11, "{x}");
    }

    #[test]
    fn reports_unbracketed_interval() {
        assert_eq!(
            brent(|x| x * x + 1.0, -1.0, 1.0),
            Err(RootFailure::NotBracketed)
        );
    }

    #[test]
    fn reports_nan_instead_of_looping() {
        assert_eq!(brent(|_| f64::NAN, 0.0, 1.0), Err(RootFailure::Diverged));
    }
}
