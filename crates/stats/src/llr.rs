//! The generalized SPRT log-likelihood ratio fishtest uses (`LLRcalc.py`).
//!
//! H0 and H1 each fix one number of the entry-score distribution: its mean (logistic bounds) or
//! its t-value (normalized bounds). The LLR is the log ratio of the two constrained
//! maximum-likelihood distributions, evaluated on the observed counts:
//! `LLR = N · Σ p̂_i (ln p1_i - ln p0_i)`.
//!
//! It is always recomputed from cumulative totals, never accumulated from increments, so a
//! duplicate or replayed report cannot change it (ARCHITECTURE.md, "Exactly once").

use crate::elo::{check_elo, score_from_elo, NELO_PER_T};
use crate::pdf::Pdf;
use crate::results::Sample;
use crate::StatsError;

/// GSPRT LLR for logistic Elo bounds: H_j says the mean score is `L(elo_j)`. For pairs the mean
/// is a pair's average score, which has the same expectation, so no factor is needed.
pub fn logistic(sample: &Sample, elo0: f64, elo1: f64) -> Result<f64, StatsError> {
    check_hypotheses(elo0, elo1)?;
    let empirical = sample.empirical()?;
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    let pdf0 = empirical.pdf.mle_with_mean(s0)?;
    let pdf1 = empirical.pdf.mle_with_mean(s1)?;
    Ok(empirical.entries * mean_jump(&empirical.pdf, &pdf0, &pdf1))
}

/// GSPRT LLR for normalized Elo bounds: H_j says `(mean - ½)/stdev = nelo_j / K_n` per game. A
/// pair's average has about half a game's variance, so for pairs the t-value is √2 larger.
pub fn normalized(sample: &Sample, nelo0: f64, nelo1: f64) -> Result<f64, StatsError> {
    check_hypotheses(nelo0, nelo1)?;
    let empirical = sample.empirical()?;
    let scale = sample.games_per_entry().sqrt() / NELO_PER_T;
    let pdf0 = empirical.pdf.mle_with_t_value(0.5, nelo0 * scale)?;
    let pdf1 = empirical.pdf.mle_with_t_value(0.5, nelo1 * scale)?;
    Ok(empirical.entries * mean_jump(&empirical.pdf, &pdf0, &pdf1))
}

/// The Gaussian (Brownian) approximation of [`logistic`], fishtest's `LLR_alt2`:
/// `N (s1 - s0)(2μ - s0 - s1) / (2v)`.
pub fn logistic_approx(sample: &Sample, elo0: f64, elo1: f64) -> Result<f64, StatsError> {
    check_hypotheses(elo0, elo1)?;
    let empirical = sample.empirical()?;
    let (drift, _) =
        brownian_drift_variance(&empirical.pdf, score_from_elo(elo0), score_from_elo(elo1));
    Ok(empirical.entries * drift)
}

/// The closed-form approximation of [`normalized`], fishtest's `LLR_normalized_alt`:
/// `(games/2) ln((1 + (nt - nt0)²) / (1 + (nt - nt1)²))`.
pub fn normalized_approx(sample: &Sample, nelo0: f64, nelo1: f64) -> Result<f64, StatsError> {
    check_hypotheses(nelo0, nelo1)?;
    let empirical = sample.empirical()?;
    let (mu, var) = empirical.pdf.mean_variance();
    let k = sample.games_per_entry();
    let games = k * empirical.entries;
    let nt = (mu - 0.5) / (k * var).sqrt();
    let (nt0, nt1) = (nelo0 / NELO_PER_T, nelo1 / NELO_PER_T);
    Ok(games / 2.0 * ((1.0 + (nt - nt0).powi(2)) / (1.0 + (nt - nt1).powi(2))).ln())
}

/// Drift and variance per entry of the LLR's Brownian approximation for a test of mean `s0`
/// against `s1`, when entries follow `pdf` (`LLR_drift_variance_alt2`).
pub(crate) fn brownian_drift_variance(pdf: &Pdf, s0: f64, s1: f64) -> (f64, f64) {
    let (mu, var) = pdf.mean_variance();
    drift_variance_at(mu, var, s0, s1)
}

/// The same with the true mean given: the sample's variance is kept, because estimating it
/// conditionally on the mean makes the outcome probability non-monotonic for large Elo
/// (fishtest issue #2571, fixed by PR #2581).
pub(crate) fn drift_variance_at(mean: f64, variance: f64, s0: f64, s1: f64) -> (f64, f64) {
    let drift = (mean - (s0 + s1) / 2.0) * (s1 - s0) / variance;
    (drift, (s1 - s0).powi(2) / variance)
}

/// `Σ p̂_i (ln p1_i - ln p0_i)`: the expected LLR increment of one entry under the sample.
fn mean_jump(hat: &Pdf, pdf0: &Pdf, pdf1: &Pdf) -> f64 {
    hat.probabilities()
        .iter()
        .zip(pdf0.probabilities().iter().zip(pdf1.probabilities()))
        .map(|(p, (q0, q1))| p * (q1.ln() - q0.ln()))
        .sum()
}

/// Hypotheses must be finite, within ±[`crate::MAX_ELO`] and ordered.
pub(crate) fn check_hypotheses(elo0: f64, elo1: f64) -> Result<(), StatsError> {
    check_elo("elo0", elo0)?;
    check_elo("elo1", elo1)?;
    if elo0 >= elo1 {
        return Err(StatsError::HypothesesOrder { elo0, elo1 });
    }
    Ok(())
}
