//! The SPRT calculator: how often a test passes and how long it runs, for a true Elo, a draw
//! ratio and an opening bias (fishtest's `sprt.js`, vdbergh's "sprta" note).
//!
//! It models the LLR as Brownian motion between the Wald bounds, which is what lets a user pick
//! bounds before spending the games.

use crate::bayeselo;
use crate::elo::{check_elo, elo_from_score_unclamped, score_from_elo, NELO_PER_T};
use crate::estimate::calculator_variance;
use crate::sprt::{EloModel, Sprt, WaldBounds};
use crate::StatsError;

/// fishtest's calculator defaults: a draw ratio typical of its UHO book at STC...
pub const DEFAULT_DRAW_RATIO: f64 = 0.49;
/// ...and the RMS opening bias of that book, in Elo.
pub const DEFAULT_RMS_BIAS: f64 = 191.0;

/// Operating characteristics of a test at one true Elo.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OperatingPoint {
    /// Probability of accepting H1.
    pub pass_probability: f64,
    /// Expected number of games (not pairs) before a decision.
    pub expected_games: f64,
}

/// A test design together with the draw ratio and opening bias it will meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtCalculator {
    score0: f64,
    score1: f64,
    /// Per-game variance of the score after removing the opening bias.
    variance: f64,
    bounds: WaldBounds,
}

impl SprtCalculator {
    /// Normalized bounds become scores with the per-game deviation `(1-d)/4 - (L(r) - ½)²`;
    /// BayesElo bounds become logistic ones at the drawelo of a balanced match with draw ratio d.
    pub fn new(sprt: &Sprt, draw_ratio: f64, rms_bias: f64) -> Result<Self, StatsError> {
        let variance = calculator_variance(draw_ratio, rms_bias)?;
        let (score0, score1) = match sprt.model() {
            EloModel::Normalized => {
                let sigma = variance.sqrt();
                (
                    sprt.elo0() / NELO_PER_T * sigma + 0.5,
                    sprt.elo1() / NELO_PER_T * sigma + 0.5,
                )
            }
            EloModel::Logistic => (score_from_elo(sprt.elo0()), score_from_elo(sprt.elo1())),
            EloModel::BayesElo => {
                let drawelo = bayeselo::drawelo_from_draw_ratio(draw_ratio);
                (
                    score_from_elo(bayeselo::to_logistic(sprt.elo0(), drawelo)),
                    score_from_elo(bayeselo::to_logistic(sprt.elo1(), drawelo)),
                )
            }
        };
        // NaN fails this too; equal scores would divide the drift by zero.
        if !(0.0 < score0 && score0 < score1 && score1 < 1.0) {
            return Err(StatsError::ScoreOutOfRange {
                elo0: sprt.elo0(),
                elo1: sprt.elo1(),
                score0,
                score1,
                draw_ratio,
                rms_bias,
            });
        }
        Ok(SprtCalculator {
            score0,
            score1,
            variance,
            bounds: sprt.wald_bounds(),
        })
    }

    /// The bounds as logistic Elo under the assumed draw ratio and bias.
    pub fn logistic_bounds(&self) -> (f64, f64) {
        (
            elo_from_score_unclamped(self.score0),
            elo_from_score_unclamped(self.score1),
        )
    }

    /// Pass probability and expected games at true logistic Elo `elo`.
    pub fn at(&self, elo: f64) -> Result<OperatingPoint, StatsError> {
        check_elo("elo", elo)?;
        let (a, b) = (self.bounds.lower, self.bounds.upper);
        let w2 = (self.score1 - self.score0).powi(2) / self.variance;
        // Drift of the LLR in units of half its variance.
        let h =
            (2.0 * score_from_elo(elo) - self.score0 - self.score1) / (self.score1 - self.score0);
        let (pass, time) = if (h * (a - b)).abs() < 1e-6 {
            (-a / (b - a), -a * b)
        } else {
            let pass = pass_probability(h, a, b);
            (pass, 2.0 / h * (b * pass + a * (1.0 - pass)))
        };
        Ok(OperatingPoint {
            pass_probability: pass,
            expected_games: time / w2,
        })
    }
}

/// `(1 - e^{-hA}) / (e^{-hB} - e^{-hA})`, rearranged for positive h so that a strong drift
/// gives 1 instead of inf/inf.
fn pass_probability(h: f64, a: f64, b: f64) -> f64 {
    if h > 0.0 {
        (h * a).exp_m1() / (h * (a - b)).exp_m1()
    } else {
        let (ea, eb) = ((-h * a).exp(), (-h * b).exp());
        if eb.is_infinite() {
            0.0
        } else {
            (1.0 - ea) / (eb - ea)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calculator(model: EloModel) -> SprtCalculator {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, model).unwrap();
        SprtCalculator::new(&sprt, DEFAULT_DRAW_RATIO, DEFAULT_RMS_BIAS).unwrap()
    }

    #[test]
    fn passes_alpha_at_h0_and_one_minus_beta_at_h1() {
        let calc = calculator(EloModel::Normalized);
        let (e0, e1) = calc.logistic_bounds();
        assert!((calc.at(e0).unwrap().pass_probability - 0.05).abs() < 1e-12);
        assert!((calc.at(e1).unwrap().pass_probability - 0.95).abs() < 1e-12);
    }

    #[test]
    fn midpoint_uses_the_limit() {
        let calc = calculator(EloModel::Logistic);
        let p = calc.at(1.0).unwrap();
        // L(1) is not exactly the mean of L(0) and L(2), but within the 1e-6 switch.
        assert!((p.pass_probability - 0.5).abs() < 1e-5);
        let ab = WaldBounds::new(0.05, 0.05).unwrap();
        let w2 = (score_from_elo(2.0) - 0.5).powi(2) / calc.variance;
        assert!((p.expected_games - (-ab.lower * ab.upper) / w2).abs() / p.expected_games < 1e-4);
    }

    #[test]
    fn strong_drift_does_not_overflow() {
        let calc = calculator(EloModel::Logistic);
        let strong = calc.at(400.0).unwrap();
        assert_eq!(strong.pass_probability, 1.0);
        assert!(strong.expected_games.is_finite() && strong.expected_games > 0.0);
        let weak = calc.at(-400.0).unwrap();
        assert_eq!(weak.pass_probability, 0.0);
        assert!(weak.expected_games.is_finite() && weak.expected_games > 0.0);
    }

    #[test]
    fn bounds_beyond_a_score_and_bad_biases_are_errors() {
        // <0, 1000> normalized Elo at the default draw ratio and bias is a score above 1: it
        // printed NaN logistic bounds before.
        let wide = Sprt::new(0.05, 0.05, 0.0, 1000.0, EloModel::Normalized).unwrap();
        assert!(matches!(
            SprtCalculator::new(&wide, DEFAULT_DRAW_RATIO, DEFAULT_RMS_BIAS),
            Err(StatsError::ScoreOutOfRange { .. })
        ));
        let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized).unwrap();
        for bias in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                SprtCalculator::new(&sprt, 0.5, bias),
                Err(StatsError::RmsBias(_))
            ));
        }
        let calc = SprtCalculator::new(&sprt, 0.5, 0.0).unwrap();
        assert!(matches!(
            calc.at(1e300),
            Err(StatsError::EloRange { name: "elo", .. })
        ));
    }

    #[test]
    fn impossible_variance_is_an_error() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized).unwrap();
        assert!(matches!(
            SprtCalculator::new(&sprt, 0.9, 191.0),
            Err(StatsError::NoVariance { .. })
        ));
        assert!(matches!(
            SprtCalculator::new(&sprt, 1.0, 0.0),
            Err(StatsError::DrawRatio(_))
        ));
    }
}
