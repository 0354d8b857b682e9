//! The Elo estimate that accounts for the SPRT having stopped the games (fishtest `sprt.py`,
//! `stat_util.SPRT_elo`).
//!
//! A sequential test stops when the evidence is extreme, so the plain fixed-sample estimate is
//! biased toward the bound that stopped it. The median-unbiased estimate instead asks, for each
//! candidate Elo, how likely an outcome no better than the observed one would be, and reports
//! the Elo where that probability is ½ (vdbergh, "brownian_approximation", eq. 6.1).

use crate::brownian::Brownian;
use crate::elo::score_from_elo;
use crate::llr::drift_variance_at;
use crate::results::Sample;
use crate::root::{brent, RootFailure};
use crate::sprt::{EloModel, Sprt};
use crate::StatsError;

/// fishtest searches roots on `(elo0 + elo1)/2 ∓ 30 (elo1 - elo0)` first, doubles the bracket on
/// failure, and gives up at ±1000 Elo by returning the clamp.
const FIRST_BRACKET: f64 = 30.0;
const ELO_CLAMP: f64 = crate::MAX_ELO;
/// Doubling from a bracket of at least 30 ulps of anything reaches ±1000 long before this.
const MAX_DOUBLINGS: usize = 2100;

/// The SPRT-aware estimate. Always in **logistic** Elo, whatever the bounds' model: the outcome
/// probability maps candidate Elo through the logistic law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtElo {
    /// Median-unbiased Elo.
    pub elo: f64,
    /// 95% confidence interval (or as asked of [`Sprt::elo_estimate_at`]).
    pub interval: (f64, f64),
    /// Probability that the outcome would have been no better at 0 Elo.
    pub los: f64,
    /// The LLR's Brownian approximation lay more than 3% beyond a bound, so the state was
    /// truncated onto it: the test ran past where it should have stopped.
    pub clamped: bool,
}

/// The observed state `(T, y)` of the approximating walk and what it needs to move.
struct StoppedWalk {
    brownian_a: f64,
    brownian_b: f64,
    /// The sample's variance of one entry's score, used for every candidate Elo.
    variance: f64,
    s0: f64,
    s1: f64,
    time: f64,
    llr: f64,
    clamped: bool,
    /// Centre and width of the first root bracket, in the bounds' own units.
    centre: f64,
    delta: f64,
}

impl Sprt {
    /// Median-unbiased Elo, its 95% interval and LOS after this SPRT was run on `sample`.
    pub fn elo_estimate(&self, sample: &Sample) -> Result<SprtElo, StatsError> {
        self.elo_estimate_at(sample, 0.95)
    }

    /// The same with another confidence level.
    pub fn elo_estimate_at(&self, sample: &Sample, level: f64) -> Result<SprtElo, StatsError> {
        if !(level > 0.0 && level < 1.0) {
            return Err(StatsError::ErrorRate {
                name: "confidence level",
                value: level,
            });
        }
        let walk = StoppedWalk::new(self, sample)?;
        let p = 1.0 - level;
        Ok(SprtElo {
            elo: walk.lower_confidence_bound(0.5)?,
            interval: (
                walk.lower_confidence_bound(p / 2.0)?,
                walk.lower_confidence_bound(1.0 - p / 2.0)?,
            ),
            los: walk.outcome_probability(0.0)?,
            clamped: walk.clamped,
        })
    }
}

impl StoppedWalk {
    fn new(sprt: &Sprt, sample: &Sample) -> Result<Self, StatsError> {
        // BayesElo bounds are read as logistic ones at the sample's drawelo, as fishtest does.
        let (e0, e1) = match sprt.model() {
            EloModel::BayesElo => sprt.logistic_bounds(sample)?,
            _ => (sprt.elo0(), sprt.elo1()),
        };
        let (s0, s1) = sprt.scores(sample)?;
        let empirical = sample.empirical()?;
        let (mean, variance) = empirical.pdf.mean_variance();
        let (drift, _) = drift_variance_at(mean, variance, s0, s1);
        let wald = sprt.wald_bounds();
        let n = empirical.entries;
        let mut llr = n * drift;
        let mut time = n;
        let clamped = llr > 1.03 * wald.upper || llr < 1.03 * wald.lower;
        // A state beyond a bound is moved back onto it along its own slope: the walk would have
        // stopped there.
        if llr < wald.lower {
            time = wald.lower / drift;
            llr = wald.lower;
        } else if llr > wald.upper {
            time = wald.upper / drift;
            llr = wald.upper;
        }
        if !(time.is_finite() && llr.is_finite() && variance > 0.0) {
            return Err(StatsError::NoConvergence {
                what: "the SPRT-aware Elo estimate",
            });
        }
        Ok(StoppedWalk {
            brownian_a: wald.lower,
            brownian_b: wald.upper,
            variance,
            s0,
            s1,
            time,
            llr,
            clamped,
            centre: (e0 + e1) / 2.0,
            delta: e1 - e0,
        })
    }

    /// Probability, at true logistic Elo `elo`, of an outcome no better than the observed one:
    /// a faster fail, a slower pass, or a fail instead of a pass.
    fn outcome_probability(&self, elo: f64) -> Result<f64, StatsError> {
        let (mu, sigma2) = drift_variance_at(score_from_elo(elo), self.variance, self.s0, self.s1);
        Brownian {
            a: self.brownian_a,
            b: self.brownian_b,
            mu,
            sigma2,
        }
        .outcome_cdf(self.time, self.llr)
    }

    /// The largest Elo at which the observed outcome has probability below `p` of being beaten.
    fn lower_confidence_bound(&self, p: f64) -> Result<f64, StatsError> {
        let target = 1.0 - p;
        let f = |elo: f64| {
            self.outcome_probability(elo)
                .map_or(f64::NAN, |q| q - target)
        };
        let mut width = FIRST_BRACKET;
        for _ in 0..MAX_DOUBLINGS {
            let lo = (self.centre - width * self.delta).max(-ELO_CLAMP);
            let hi = (self.centre + width * self.delta).min(ELO_CLAMP);
            match brent(f, lo, hi) {
                Ok(elo) => return Ok(elo),
                Err(RootFailure::NotBracketed) if lo > -ELO_CLAMP || hi < ELO_CLAMP => {
                    width *= 2.0;
                }
                Err(RootFailure::NotBracketed) => {
                    // No root within ±1000 Elo: report the clamp on the side the target lies.
                    return Ok(if f(lo) > 0.0 { hi } else { lo });
                }
                Err(failure) => return Err(failure.into_error("the SPRT-aware Elo estimate")),
            }
        }
        Err(StatsError::NoConvergence {
            what: "the SPRT-aware Elo bracket",
        })
    }
}
