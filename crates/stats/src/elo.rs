//! The logistic Elo scale, the normalized-Elo constant and the normal distribution.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::StatsError;

/// Normalized Elo per unit of normalized t-value, `800 / ln 10`: with it, nElo equals logistic Elo
/// for small differences when no game is drawn (fishtest's `nelo_divided_by_nt`).
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Elo per natural-log unit of the logistic: `r = θ · 400 / ln 10`, so that `σ(θ)` is the
/// expected score of [`score_from_elo`]. Intervals stated on the likelihood's own scale (the
/// rating list's, a degenerate sample's) are carried to Elo by it.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The widest Elo difference (logistic, normalized or BayesElo) a hypothesis or a true Elo may
/// state: 1000 Elo is a 99.7 % score. fishtest's SPRT-aware estimate gives up at the same
/// distance, and `L(elo)` rounds to exactly 1 in `f64` not far beyond (about 6400 Elo).
pub const MAX_ELO: f64 = 1000.0;

/// An Elo given as input: finite and within ±[`MAX_ELO`].
pub(crate) fn check_elo(name: &'static str, value: f64) -> Result<(), StatsError> {
    if !value.is_finite() {
        return Err(StatsError::NotFinite { name, value });
    }
    if value.abs() > MAX_ELO {
        return Err(StatsError::EloRange { name, value });
    }
    Ok(())
}

/// The clamp fishtest's `stat_util.elo` applies before inverting the logistic: it keeps a sample
/// of all wins at about +1200 Elo instead of infinity.
pub const SCORE_CLAMP: f64 = 1e-3;

/// The expected score of a player `elo` points stronger: `1 / (1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The Elo difference that gives an expected `score`, with the score clamped to
/// `[0.001, 0.999]` as fishtest does, so that |Elo| never exceeds about 1199.83.
pub fn elo_from_score(score: f64) -> f64 {
    elo_from_score_unclamped(score.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP))
}

/// The same inverse without the clamp, for converting bounds (fishtest's calculator uses the bare
/// inverse there: a bound is a design parameter, not an estimate).
pub(crate) fn elo_from_score_unclamped(score: f64) -> f64 {
    // Written as log10(x / (1 - x)) rather than fishtest's -log10(1/x - 1) so that a score of
    // exactly ½ gives +0, not -0 (which would print as "-0.00").
    400.0 * (score / (1.0 - score)).log10()
}

fn standard_normal() -> Normal {
    // Mean 0 and standard deviation 1 are always valid parameters.
    Normal::standard()
}

/// The standard normal CDF `Φ`.
pub fn normal_cdf(x: f64) -> f64 {
    standard_normal().cdf(x)
}

/// The standard normal quantile `Φ⁻¹`.
pub fn normal_quantile(p: f64) -> f64 {
    standard_normal().inverse_cdf(p)
}

/// `z = Φ⁻¹(0.975)`: every "95%" interval in fishtest is `± z` standard errors.
pub fn z_95() -> f64 {
    normal_quantile(0.975)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_round_trip() {
        for elo in [-700.0, -35.5, 0.0, 2.0, 400.0] {
            assert!((elo_from_score(score_from_elo(elo)) - elo).abs() < 1e-9);
        }
        // 400 Elo is ten-to-one odds.
        assert!((score_from_elo(400.0) - 10.0 / 11.0).abs() < 1e-15);
    }

    #[test]
    fn clamp_caps_elo_near_1200() {
        assert!((elo_from_score(1.0) - 1199.8261952904).abs() < 1e-9);
        assert!((elo_from_score(0.0) + elo_from_score(1.0)).abs() < 1e-9);
    }

    #[test]
    fn normal_quantile_matches_tables() {
        assert!((z_95() - 1.959963984540054).abs() < 1e-12);
        let back = normal_cdf(1.959963984540054);
        assert!((back - 0.975).abs() < 1e-11, "{back}");
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!((NELO_PER_T - 347.4355855226).abs() < 1e-9);
    }
}
