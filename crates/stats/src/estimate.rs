//! Estimates from a fixed number of games: Elo with its 95% interval, LOS, draw ratios and
//! normalized Elo, as fishtest shows them for fixed-length tests (`stat_util.get_elo`,
//! `template_helpers`).
//!
//! These ignore how the sample was collected. After an SPRT stopped the games, they are biased
//! toward the bound that stopped it; [`crate::Sprt::elo_estimate`] corrects for that. Users want
//! both numbers side by side (fishtest issue #1924), so both exist.

use crate::elo::{elo_from_score, normal_cdf, score_from_elo, z_95, ELO_PER_NAT, NELO_PER_T};
use crate::results::{Pentanomial, Sample, Trinomial};
use crate::StatsError;

/// Logistic Elo with fishtest's symmetric 95% half-width and the likelihood of superiority.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    pub elo: f64,
    /// fishtest shows `Elo ± half_width`: half the width of the mapped score interval, although
    /// the logistic map makes the true interval slightly asymmetric.
    pub half_width: f64,
    /// Probability that the tested engine is the stronger one, `Φ((μ - ½) / stderr)`.
    pub los: f64,
}

impl EloEstimate {
    /// `[elo - half_width, elo + half_width]`, the interval fishtest's API returns.
    pub fn interval(&self) -> (f64, f64) {
        (self.elo - self.half_width, self.elo + self.half_width)
    }
}

/// Normalized Elo: the score's distance from ½ in per-game standard deviations, scaled so that it
/// equals logistic Elo at a 0% draw rate. It is what the SPRT bounds are stated in, because the
/// games a test needs depend on it alone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalizedElo {
    pub nelo: f64,
    /// 95% half-width by the delta method on the t-value.
    pub half_width: f64,
}

impl NormalizedElo {
    pub fn interval(&self) -> (f64, f64) {
        (self.nelo - self.half_width, self.nelo + self.half_width)
    }
}

/// Fixed-sample Elo, interval and LOS.
///
/// The standard error of the mean score is `sqrt(v / N)` with v the variance of one entry (a
/// game, or a pair's average) and N the regularized entries; for pairs this is the per-game
/// variance implied by the pairs, which opening bias makes smaller than the trinomial one.
///
/// A degenerate sample ([`Sample::is_degenerate`]: every game won, or every game lost, or
/// every pair the same uneven score) is the exception. fishtest clamps a sweep's score to
/// 99.9 % (1199.8 Elo) and, its variance being fishtest's regularization alone, prints LOS
/// 100 %: certainty from ten games. Here it gets
/// BayesElo's prior of [`crate::VIRTUAL_DRAWS`], and the estimate, interval and LOS are the
/// likelihood's on the Elo scale (the delta method at the mode, as the rating list states every
/// interval), because on the score scale the interval of a score near 1 runs past 1. Ten wins:
/// 416 ± 239 Elo, LOS 99.97 %; `arbiter rate` rates the same games the same.
pub fn elo(sample: &Sample) -> Result<EloEstimate, StatsError> {
    if sample.is_degenerate() {
        return degenerate_elo(sample);
    }
    let empirical = sample.empirical()?;
    let (mu, var) = empirical.pdf.mean_variance();
    let stderr = (var / empirical.entries).sqrt();
    let z = z_95();
    let (lo, hi) = (mu - z * stderr, mu + z * stderr);
    Ok(EloEstimate {
        elo: elo_from_score(mu),
        half_width: (elo_from_score(hi) - elo_from_score(lo)) / 2.0,
        los: normal_cdf((mu - 0.5) / stderr),
    })
}

/// See [`elo`]: the degenerate case, on the logit scale with the prior's virtual draws.
fn degenerate_elo(sample: &Sample) -> Result<EloEstimate, StatsError> {
    let empirical = sample.with_virtual_draws().empirical()?;
    let (mu, var) = empirical.pdf.mean_variance();
    let theta = (mu / (1.0 - mu)).ln();
    // The score's standard error carried to the logit by its derivative 1 / (μ (1 - μ)).
    let sd = (var / empirical.entries).sqrt() / (mu * (1.0 - mu));
    Ok(EloEstimate {
        elo: ELO_PER_NAT * theta,
        half_width: z_95() * ELO_PER_NAT * sd,
        los: normal_cdf(theta / sd),
    })
}

/// Normalized Elo and its delta-method interval. The t-value of a pair's average is about √2
/// times a game's, so pentanomial nElo divides by √2 to stay per game.
///
/// A degenerate sample ([`Sample::is_degenerate`]) has no variance but fishtest's
/// regularization, so its t-value runs to thousands (three pairs won twice: nElo 4911 ± 95610;
/// three pairs of a win and a draw: 3472 ± 71549); it is computed with BayesElo's prior of
/// [`crate::VIRTUAL_DRAWS`], as [`elo`] computes its Elo: 424 ± 483 and 422 ± 500.
pub fn normalized_elo(sample: &Sample) -> Result<NormalizedElo, StatsError> {
    let sample = &sample.with_prior_if_degenerate();
    let empirical = sample.empirical()?;
    let m = empirical.pdf.moments();
    let t = (m.mean - 0.5) / m.variance.sqrt();
    let scale = NELO_PER_T / sample.games_per_entry().sqrt();
    let var_t = (1.0 - t * m.skewness + t * t / 4.0 * (m.excess_kurtosis + 2.0)).max(0.0);
    Ok(NormalizedElo {
        nelo: scale * t,
        half_width: scale * z_95() * (var_t / empirical.entries).sqrt(),
    })
}

/// The per-game standard deviation of the score: the unit normalized Elo is measured in, and what
/// converts normalized bounds to scores.
pub fn game_stdev(sample: &Sample) -> Result<f64, StatsError> {
    let empirical = sample.empirical()?;
    let (_, var) = empirical.pdf.mean_variance();
    Ok((sample.games_per_entry() * var).sqrt())
}

/// Mean score per game.
pub fn score(sample: &Sample) -> Result<f64, StatsError> {
    Ok(sample.empirical()?.pdf.mean())
}

/// Fraction of games drawn, on regularized counts as fishtest shows it.
pub fn draw_ratio(trinomial: &Trinomial) -> Result<f64, StatsError> {
    regularized_share(&Sample::from(*trinomial), 1)
}

/// Fraction of pairs that end 1–1 (two draws or a win and a loss): the "draw ratio" of fishtest's
/// pentanomial panel.
pub fn pair_draw_ratio(pentanomial: &Pentanomial) -> Result<f64, StatsError> {
    regularized_share(&Sample::from(*pentanomial), 2)
}

fn regularized_share(sample: &Sample, bucket: usize) -> Result<f64, StatsError> {
    sample.check()?;
    let counts = sample.regularized();
    Ok(counts[bucket] / counts.iter().sum::<f64>())
}

/// Pairs won over pairs lost, `(DW + WW) / (LL + LD)`; `None` when no pair was lost, where
/// fishtest and fastchess print `inf` or `nan`: arbiter never prints a number that is not one.
pub fn pairs_ratio(pentanomial: &Pentanomial) -> Option<f64> {
    let lost = pentanomial.ll as f64 + pentanomial.ld as f64;
    let won = pentanomial.dw as f64 + pentanomial.ww as f64;
    (lost > 0.0).then(|| won / lost)
}

/// How unbalanced the openings are: the root-mean-square shift of a game's expected score caused
/// by the opening, `sqrt(max(var3 - var5, 0))`, with var5 the per-game variance implied by the
/// pairs. Returned in score units and as Elo; the SPRT calculator takes the Elo.
pub fn rms_bias(
    trinomial: &Trinomial,
    pentanomial: &Pentanomial,
) -> Result<(f64, f64), StatsError> {
    let var3 = game_stdev(&Sample::from(*trinomial))?.powi(2);
    let var5 = game_stdev(&Sample::from(*pentanomial))?.powi(2);
    let bias = (var3 - var5).max(0.0).sqrt();
    Ok((bias, elo_from_score(0.5 + bias)))
}

/// The per-game variance the SPRT calculator assumes for a draw ratio and an RMS opening bias in
/// Elo: `(1 - d)/4 - (L(r) - ½)²`.
pub(crate) fn calculator_variance(draw_ratio: f64, rms_bias: f64) -> Result<f64, StatsError> {
    if !(0.0..1.0).contains(&draw_ratio) {
        return Err(StatsError::DrawRatio(draw_ratio));
    }
    // Finite and non-negative: a root-mean-square is never negative, and a negative one
    // "working" only because it is squared would hide a sign mistake in the user's input.
    if !(rms_bias.is_finite() && rms_bias >= 0.0) {
        return Err(StatsError::RmsBias(rms_bias));
    }
    let variance = (1.0 - draw_ratio) / 4.0 - (score_from_elo(rms_bias) - 0.5).powi(2);
    if variance <= 0.0 {
        return Err(StatsError::NoVariance {
            draw_ratio,
            rms_bias,
        });
    }
    Ok(variance)
}
