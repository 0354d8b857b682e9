//! Discrete distributions of one entry's score, and the constrained maximum-likelihood
//! distributions behind the GSPRT.
//!
//! fishtest fixes no draw model: an entry (a game, or a pair's average score) falls in one of
//! k + 1 buckets with free probabilities. A hypothesis constrains one number of that
//! distribution (its mean, or its normalized t-value), and the LLR compares the two
//! distributions closest, in likelihood, to what was observed (vdbergh, "support_MLE_multinomial"
//! and "normalized_elo_practical" §4.1).

use crate::root::{brent, RootFailure};
use crate::StatsError;

/// At most five buckets (a pair's five totals); stored inline so an LLR update allocates nothing.
const MAX_BUCKETS: usize = 5;

/// How far inside the poles of the secular equation the root is searched, as in fishtest.
const SECULAR_MARGIN: f64 = 1e-9;

/// fishtest's fixed-point iteration for the t-value constraint stops after ten rounds or once no
/// probability moves by more than this.
const T_VALUE_ROUNDS: usize = 10;
const T_VALUE_STEP: f64 = 1e-9;

/// A probability distribution on scores `values[i]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pdf {
    values: [f64; MAX_BUCKETS],
    probabilities: [f64; MAX_BUCKETS],
    len: usize,
}

/// Mean, variance and the two shape numbers the nElo interval needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    pub mean: f64,
    pub variance: f64,
    pub skewness: f64,
    pub excess_kurtosis: f64,
}

impl Pdf {
    /// Probabilities on the scores `0, 1/k, ..., 1` (k = len - 1): one game's score for three
    /// buckets, one pair's average score for five.
    pub(crate) fn on_even_support(probabilities: &[f64]) -> Pdf {
        let len = probabilities.len();
        debug_assert!((2..=MAX_BUCKETS).contains(&len));
        let mut values = [0.0; MAX_BUCKETS];
        for (i, v) in values.iter_mut().enumerate().take(len) {
            *v = i as f64 / (len - 1) as f64;
        }
        let mut p = [0.0; MAX_BUCKETS];
        p[..len].copy_from_slice(probabilities);
        Pdf {
            values,
            probabilities: p,
            len,
        }
    }

    pub fn values(&self) -> &[f64] {
        &self.values[..self.len]
    }

    pub fn probabilities(&self) -> &[f64] {
        &self.probabilities[..self.len]
    }

    fn with_probabilities(&self, probabilities: [f64; MAX_BUCKETS]) -> Pdf {
        Pdf {
            probabilities,
            ..*self
        }
    }

    fn pairs(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.values()
            .iter()
            .copied()
            .zip(self.probabilities().iter().copied())
    }

    pub fn mean(&self) -> f64 {
        self.pairs().map(|(a, p)| p * a).sum()
    }

    /// Mean and variance together, as fishtest's `stats`.
    pub fn mean_variance(&self) -> (f64, f64) {
        let mean = self.mean();
        let variance = self.pairs().map(|(a, p)| p * (a - mean).powi(2)).sum();
        (mean, variance)
    }

    /// fishtest's `stats_ex`.
    pub fn moments(&self) -> Moments {
        let (mean, variance) = self.mean_variance();
        let central = |k: i32| -> f64 { self.pairs().map(|(a, p)| p * (a - mean).powi(k)).sum() };
        Moments {
            mean,
            variance,
            skewness: central(3) / variance.powf(1.5),
            excess_kurtosis: central(4) / (variance * variance) - 3.0,
        }
    }

    /// The distribution on the same scores, with mean `s`, that is most likely to have produced
    /// the observed `self`: `p_i = p̂_i / (1 + λ (a_i - s))` with λ the root of the secular
    /// equation.
    pub(crate) fn mle_with_mean(&self, s: f64) -> Result<Pdf, StatsError> {
        let mut shifts = [0.0; MAX_BUCKETS];
        for (b, a) in shifts.iter_mut().zip(self.values()) {
            *b = a - s;
        }
        let mle = self.reweighted(&shifts, "mean")?;
        if (mle.mean() - s).abs() >= 1e-6 {
            return Err(StatsError::NoConvergence {
                what: "the maximum-likelihood distribution with a given mean",
            });
        }
        Ok(mle)
    }

    /// The most likely distribution whose t-value `(mean - reference) / stdev` is `t`. The
    /// constraint is not linear, so this is fishtest's fixed-point iteration from the uniform
    /// distribution, linearizing the constraint around the current estimate each round.
    pub(crate) fn mle_with_t_value(&self, reference: f64, t: f64) -> Result<Pdf, StatsError> {
        let n = self.len;
        let mut mle = self.with_probabilities({
            let mut uniform = [0.0; MAX_BUCKETS];
            uniform[..n].fill(1.0 / n as f64);
            uniform
        });
        for _ in 0..T_VALUE_ROUNDS {
            let previous = mle;
            let (mu, var) = mle.mean_variance();
            let sigma = var.sqrt();
            let mut shifts = [0.0; MAX_BUCKETS];
            for (b, &a) in shifts.iter_mut().zip(self.values()) {
                *b = a - reference - t * sigma * (1.0 + ((mu - a) / sigma).powi(2)) / 2.0;
            }
            mle = self.reweighted(&shifts, "t-value")?;
            let moved = previous
                .probabilities()
                .iter()
                .zip(mle.probabilities())
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            if moved < T_VALUE_STEP {
                break;
            }
        }
        let (mu, var) = mle.mean_variance();
        let reached = ((mu - reference) / var.sqrt() - t).abs() < 1e-5;
        if !reached {
            return Err(StatsError::NoConvergence {
                what: "the maximum-likelihood distribution with a given t-value",
            });
        }
        Ok(mle)
    }

    /// `p̂_i / (1 + λ b_i)` where λ solves `Σ p̂_i b_i / (1 + λ b_i) = 0`.
    fn reweighted(
        &self,
        shifts: &[f64; MAX_BUCKETS],
        constraint: &'static str,
    ) -> Result<Pdf, StatsError> {
        let shifts = &shifts[..self.len];
        let lambda = self.secular_root(shifts, constraint)?;
        let mut p = [0.0; MAX_BUCKETS];
        for ((q, &p_hat), &b) in p.iter_mut().zip(self.probabilities()).zip(shifts) {
            *q = p_hat / (1.0 + lambda * b);
        }
        Ok(self.with_probabilities(p))
    }

    /// The root lies strictly between the poles `-1/max b` and `-1/min b`, where every
    /// reweighted probability stays positive; it exists only if the shifts straddle zero.
    fn secular_root(&self, shifts: &[f64], constraint: &'static str) -> Result<f64, StatsError> {
        let lo = shifts.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = shifts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Also rejects NaN shifts, which no comparison lets through.
        let straddles = lo < 0.0 && hi > 0.0;
        if !straddles {
            return Err(StatsError::Unattainable { constraint });
        }
        let f = |x: f64| -> f64 {
            shifts
                .iter()
                .zip(self.probabilities())
                .map(|(&b, &p)| p * b / (1.0 + x * b))
                .sum()
        };
        brent(f, -1.0 / hi + SECULAR_MARGIN, -1.0 / lo - SECULAR_MARGIN).map_err(|e| match e {
            RootFailure::NotBracketed => StatsError::Unattainable { constraint },
            RootFailure::Diverged => e.into_error("the secular equation"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdf(p: &[f64]) -> Pdf {
        Pdf::on_even_support(p)
    }

    #[test]
    fn moments_of_a_fair_coin() {
        let m = pdf(&[0.5, 0.0, 0.5]).moments();
        assert_eq!(m.mean, 0.5);
        assert_eq!(m.variance, 0.25);
        assert_eq!(m.skewness, 0.0);
        // A two-point distribution has kurtosis 1.
        assert!((m.excess_kurtosis + 2.0).abs() < 1e-15);
    }

    #[test]
    fn mle_with_mean_hits_the_mean_and_keeps_a_distribution() {
        let hat = pdf(&[0.2, 0.5, 0.3]);
        let mle = hat.mle_with_mean(0.45).unwrap();
        assert!((mle.mean() - 0.45).abs() < 1e-12);
        assert!((mle.probabilities().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Already at its own mean, the MLE is the sample itself.
        let same = hat.mle_with_mean(hat.mean()).unwrap();
        for (p, q) in same.probabilities().iter().zip(hat.probabilities()) {
            assert!((p - q).abs() < 1e-12);
        }
    }

    #[test]
    fn mle_with_t_value_hits_the_t_value() {
        let hat = pdf(&[0.01, 0.2, 0.55, 0.22, 0.02]);
        let mle = hat.mle_with_t_value(0.5, 0.03).unwrap();
        let (mu, var) = mle.mean_variance();
        assert!(((mu - 0.5) / var.sqrt() - 0.03).abs() < 1e-7);
    }

    #[test]
    fn unattainable_mean_is_an_error() {
        let hat = pdf(&[0.2, 0.5, 0.3]);
        assert!(matches!(
            hat.mle_with_mean(1.5),
            Err(StatsError::Unattainable { .. })
        ));
    }
}
