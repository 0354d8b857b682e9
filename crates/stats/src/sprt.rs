//! The sequential probability ratio test: design, Wald bounds, and the stop rule with fishtest's
//! dynamic overshoot correction over batches (`stat_util.SPRT`, `update_SPRT`).

use std::fmt;
use std::str::FromStr;

use crate::bayeselo;
use crate::elo::{elo_from_score, score_from_elo, NELO_PER_T};
use crate::estimate::game_stdev;
use crate::llr::{self, check_hypotheses};
use crate::results::Sample;
use crate::StatsError;

/// The scale `elo0` and `elo1` are stated in, which also picks the LLR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EloModel {
    /// Normalized Elo, fishtest's default since 2022 (shown `<a, b>`): expected test length
    /// stays the same whatever the draw rate and the book.
    Normalized,
    /// Logistic Elo (shown `{a, b}`): the bounds are expected scores.
    Logistic,
    /// BayesElo (shown `[a, b]`) with the legacy trinomial LLR of cutechess-cli.
    BayesElo,
}

impl EloModel {
    /// Brackets fishtest uses to show which model bounds are in.
    pub fn brackets(self) -> (char, char) {
        match self {
            EloModel::Normalized => ('<', '>'),
            EloModel::Logistic => ('{', '}'),
            EloModel::BayesElo => ('[', ']'),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EloModel::Normalized => "normalized",
            EloModel::Logistic => "logistic",
            EloModel::BayesElo => "bayeselo",
        }
    }
}

impl fmt::Display for EloModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The model name was none of `normalized`, `logistic`, `bayeselo`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown Elo model {0:?}: expected normalized, logistic or bayeselo")]
pub struct UnknownEloModel(pub String);

impl FromStr for EloModel {
    type Err = UnknownEloModel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "normalized" => Ok(EloModel::Normalized),
            "logistic" => Ok(EloModel::Logistic),
            "bayeselo" => Ok(EloModel::BayesElo),
            _ => Err(UnknownEloModel(s.to_owned())),
        }
    }
}

/// Wald's thresholds on the LLR: below `lower` accept H0, above `upper` accept H1. With
/// α = β = 0.05 they are ±2.944.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaldBounds {
    pub lower: f64,
    pub upper: f64,
}

impl WaldBounds {
    /// `ln(β/(1-α))` and `ln((1-β)/α)`.
    pub fn new(alpha: f64, beta: f64) -> Result<Self, StatsError> {
        for (name, value) in [("alpha", alpha), ("beta", beta)] {
            if !(value > 0.0 && value < 1.0) {
                return Err(StatsError::ErrorRate { name, value });
            }
        }
        if alpha + beta >= 1.0 {
            return Err(StatsError::ErrorRatesSum { sum: alpha + beta });
        }
        // Differences of logarithms, not the logarithm of a quotient: (1 - β)/α overflows to
        // inf for a subnormal α. The two agree to the last bit or two otherwise.
        Ok(WaldBounds {
            lower: beta.ln() - (-alpha).ln_1p(),
            upper: (-beta).ln_1p() - alpha.ln(),
        })
    }
}

/// What the evidence says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SprtState {
    /// H0 accepted (fishtest: "rejected", the patch failed).
    H0,
    /// H1 accepted (fishtest: "accepted", the patch passed).
    H1,
    /// Neither bound reached: play more games.
    Continue,
}

impl SprtState {
    /// `"H0"`, `"H1"` or `"continue"`, as the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SprtState::H0 => "H0",
            SprtState::H1 => "H1",
            SprtState::Continue => "continue",
        }
    }
}

impl fmt::Display for SprtState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The LLR of a sample, the thresholds it was held against, and the verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtStatus {
    pub llr: f64,
    /// The thresholds actually used: the Wald bounds moved inward by the expected overshoot.
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub state: SprtState,
}

/// A test's design: error rates and the two hypotheses on an Elo scale. Validated once, so
/// everything computed from it can only fail on the sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    alpha: f64,
    beta: f64,
    elo0: f64,
    elo1: f64,
    model: EloModel,
    bounds: WaldBounds,
}

impl Sprt {
    /// H0: Elo = `elo0`; H1: Elo = `elo1`, both in `model`'s units. α is the chance of accepting
    /// H1 at `elo0`, β the chance of accepting H0 at `elo1`.
    pub fn new(
        alpha: f64,
        beta: f64,
        elo0: f64,
        elo1: f64,
        model: EloModel,
    ) -> Result<Self, StatsError> {
        check_hypotheses(elo0, elo1)?;
        let bounds = WaldBounds::new(alpha, beta)?;
        Ok(Sprt {
            alpha,
            beta,
            elo0,
            elo1,
            model,
            bounds,
        })
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }

    pub fn elo0(&self) -> f64 {
        self.elo0
    }

    pub fn elo1(&self) -> f64 {
        self.elo1
    }

    pub fn model(&self) -> EloModel {
        self.model
    }

    pub fn wald_bounds(&self) -> WaldBounds {
        self.bounds
    }

    /// The LLR of the totals: the GSPRT for normalized and logistic bounds, the legacy BayesElo
    /// LLR for BayesElo bounds (trinomial only).
    pub fn llr(&self, sample: &Sample) -> Result<f64, StatsError> {
        match (self.model, sample) {
            (EloModel::Normalized, _) => llr::normalized(sample, self.elo0, self.elo1),
            (EloModel::Logistic, _) => llr::logistic(sample, self.elo0, self.elo1),
            (EloModel::BayesElo, Sample::Trinomial(t)) => {
                bayeselo::llr_legacy(t, self.elo0, self.elo1)
            }
            (EloModel::BayesElo, Sample::Pentanomial(_)) => Err(StatsError::BayesEloNeedsTrinomial),
        }
    }

    /// Wald's rule with the thresholds moved inward by expected overshoots `o0 <= 0 <= o1`.
    pub fn decide(&self, llr: f64, overshoot: (f64, f64)) -> SprtStatus {
        let lower_bound = self.bounds.lower + overshoot.0;
        let upper_bound = self.bounds.upper - overshoot.1;
        let state = if llr < lower_bound {
            SprtState::H0
        } else if llr > upper_bound {
            SprtState::H1
        } else {
            SprtState::Continue
        };
        SprtStatus {
            llr,
            lower_bound,
            upper_bound,
            state,
        }
    }

    /// The verdict on totals alone, with Wald's plain bounds. Without the history of batch
    /// updates there is no overshoot estimate; [`SequentialSprt`] keeps one.
    pub fn status(&self, sample: &Sample) -> Result<SprtStatus, StatsError> {
        Ok(self.decide(self.llr(sample)?, (0.0, 0.0)))
    }

    /// The bounds as logistic Elo for this sample. Normalized bounds mean different logistic
    /// Elo at different draw rates and books: that is deliberate, it keeps test length constant
    /// (fishtest PR #875). BayesElo bounds use the sample's drawelo.
    pub fn logistic_bounds(&self, sample: &Sample) -> Result<(f64, f64), StatsError> {
        match self.model {
            EloModel::Logistic => Ok((self.elo0, self.elo1)),
            EloModel::Normalized => {
                let sigma = game_stdev(sample)?;
                let convert = |nelo: f64| elo_from_score(nelo / NELO_PER_T * sigma + 0.5);
                Ok((convert(self.elo0), convert(self.elo1)))
            }
            EloModel::BayesElo => match sample {
                Sample::Trinomial(t) => {
                    let drawelo = bayeselo::drawelo(t)?;
                    Ok((
                        bayeselo::to_logistic(self.elo0, drawelo),
                        bayeselo::to_logistic(self.elo1, drawelo),
                    ))
                }
                Sample::Pentanomial(_) => Err(StatsError::BayesEloNeedsTrinomial),
            },
        }
    }

    /// The two hypotheses as expected scores of one entry, for this sample: logistic bounds map
    /// through `L`, normalized ones through the sample's per-game standard deviation.
    pub(crate) fn scores(&self, sample: &Sample) -> Result<(f64, f64), StatsError> {
        match self.model {
            EloModel::Normalized => {
                let sigma = game_stdev(sample)?;
                Ok((
                    self.elo0 / NELO_PER_T * sigma + 0.5,
                    self.elo1 / NELO_PER_T * sigma + 0.5,
                ))
            }
            EloModel::Logistic | EloModel::BayesElo => {
                let (e0, e1) = self.logistic_bounds(sample)?;
                Ok((score_from_elo(e0), score_from_elo(e1)))
            }
        }
    }
}

/// A running SPRT fed cumulative totals once per batch, as the coordinator does: it keeps the
/// ladder heights of the LLR walk and stops a little before the nominal bound by the expected
/// overshoot, so the discrete walk's real error rates stay at α and β (Siegmund, *Sequential
/// Analysis*, Corollary 8.33; fishtest `update_SPRT`).
#[derive(Clone, Debug, PartialEq)]
pub struct SequentialSprt {
    sprt: Sprt,
    batch_size: u64,
    overshoot: Option<Overshoot>,
    skipped_updates: u64,
    last: Option<SprtStatus>,
}

/// Running sums of the descending (0) and ascending (1) ladder heights of the LLR walk.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Overshoot {
    last_update: u64,
    ref0: f64,
    m0: f64,
    sq0: f64,
    ref1: f64,
    m1: f64,
    sq1: f64,
}

impl Overshoot {
    /// Renewal theory: the expected overshoot is `E[H²] / (2 E[H])` over ladder heights H.
    fn expected(&self) -> (f64, f64) {
        let o0 = if self.m0 != 0.0 {
            -self.sq0 / self.m0 / 2.0
        } else {
            0.0
        };
        let o1 = if self.m1 != 0.0 {
            self.sq1 / self.m1 / 2.0
        } else {
            0.0
        };
        (o0, o1)
    }
}

impl SequentialSprt {
    /// `batch_size` is in entries: games for trinomial totals, pairs for pentanomial ones.
    pub fn new(sprt: Sprt, batch_size: u64) -> Result<Self, StatsError> {
        if batch_size == 0 {
            return Err(StatsError::BatchSize);
        }
        Ok(SequentialSprt {
            sprt,
            batch_size,
            overshoot: Some(Overshoot::default()),
            skipped_updates: 0,
            last: None,
        })
    }

    pub fn sprt(&self) -> &Sprt {
        &self.sprt
    }

    /// The last verdict, if any update has been made.
    pub fn status(&self) -> Option<SprtStatus> {
        self.last
    }

    /// Expected overshoots `(o0, o1)` currently applied; `(0, 0)` once the batch contract was
    /// broken and the correction dropped.
    pub fn expected_overshoot(&self) -> (f64, f64) {
        self.overshoot.map_or((0.0, 0.0), |o| o.expected())
    }

    /// Whether the overshoot correction is still in force.
    pub fn has_overshoot_correction(&self) -> bool {
        self.overshoot.is_some()
    }

    /// Batches that were never reported individually (their updates were lost).
    pub fn skipped_updates(&self) -> u64 {
        self.skipped_updates
    }

    /// Feed the cumulative totals after a batch. Calling it again with the same totals changes
    /// nothing. Totals that skipped batches restart the ladder; totals that shrank (a purge) or
    /// are not a whole number of batches break the contract the correction relies on, and it is
    /// dropped for good.
    pub fn update(&mut self, totals: &Sample) -> Result<SprtStatus, StatsError> {
        let entries = totals.entries();
        if !entries.is_multiple_of(self.batch_size) {
            self.overshoot = None;
        }
        let llr = self.sprt.llr(totals)?;
        if let Some(o) = self.overshoot.as_mut() {
            if entries < o.last_update {
                self.overshoot = None;
            } else {
                if entries == o.last_update + self.batch_size {
                    if llr < o.ref0 {
                        let delta = llr - o.ref0;
                        o.m0 += delta;
                        o.sq0 += delta * delta;
                        o.ref0 = llr;
                    }
                    if llr > o.ref1 {
                        let delta = llr - o.ref1;
                        o.m1 += delta;
                        o.sq1 += delta * delta;
                        o.ref1 = llr;
                    }
                } else if entries != o.last_update {
                    o.ref0 = llr;
                    o.ref1 = llr;
                    self.skipped_updates += (entries - o.last_update) / self.batch_size - 1;
                }
                o.last_update = entries;
            }
        }
        let status = self.sprt.decide(llr, self.expected_overshoot());
        self.last = Some(status);
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Pentanomial, Trinomial};

    #[test]
    fn wald_bounds_for_five_percent() {
        let b = WaldBounds::new(0.05, 0.05).unwrap();
        assert!((b.upper - 2.944438979).abs() < 1e-9);
        assert!((b.lower + 2.944438979).abs() < 1e-9);
    }

    #[test]
    fn tiny_error_rates_give_finite_bounds() {
        let b = WaldBounds::new(5e-324, 5e-324).unwrap();
        assert!(b.lower.is_finite() && b.upper.is_finite(), "{b:?}");
        assert!((b.upper - 744.44).abs() < 0.01);
    }

    #[test]
    fn elo_beyond_the_range_is_an_error() {
        for model in [EloModel::Normalized, EloModel::Logistic, EloModel::BayesElo] {
            assert!(matches!(
                Sprt::new(0.05, 0.05, 0.0, 1e6, model),
                Err(StatsError::EloRange { name: "elo1", .. })
            ));
            assert!(matches!(
                Sprt::new(0.05, 0.05, -1000.5, 0.0, model),
                Err(StatsError::EloRange { name: "elo0", .. })
            ));
            assert!(Sprt::new(0.05, 0.05, -1000.0, 1000.0, model).is_ok());
        }
    }

    #[test]
    fn impossible_designs_are_errors() {
        let m = EloModel::Normalized;
        assert!(matches!(
            Sprt::new(0.05, 0.05, 2.0, 2.0, m),
            Err(StatsError::HypothesesOrder { .. })
        ));
        assert!(matches!(
            Sprt::new(0.0, 0.05, 0.0, 2.0, m),
            Err(StatsError::ErrorRate { name: "alpha", .. })
        ));
        assert!(matches!(
            Sprt::new(0.05, 1.0, 0.0, 2.0, m),
            Err(StatsError::ErrorRate { name: "beta", .. })
        ));
        assert!(matches!(
            Sprt::new(0.6, 0.4, 0.0, 2.0, m),
            Err(StatsError::ErrorRatesSum { .. })
        ));
        assert!(matches!(
            Sprt::new(f64::NAN, 0.05, 0.0, 2.0, m),
            Err(StatsError::ErrorRate { .. })
        ));
        assert!(matches!(
            Sprt::new(0.05, 0.05, f64::NEG_INFINITY, 2.0, m),
            Err(StatsError::NotFinite { .. })
        ));
    }

    #[test]
    fn model_names_parse() {
        for m in [EloModel::Normalized, EloModel::Logistic, EloModel::BayesElo] {
            assert_eq!(m.name().parse::<EloModel>().unwrap(), m);
        }
        assert!("gaussian".parse::<EloModel>().is_err());
    }

    #[test]
    fn bayeselo_rejects_pairs() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 5.0, EloModel::BayesElo).unwrap();
        let penta = Sample::from(Pentanomial::from_counts([1, 2, 3, 2, 1]));
        assert_eq!(
            sprt.llr(&penta).unwrap_err(),
            StatsError::BayesEloNeedsTrinomial
        );
    }

    fn tri(w: u64, d: u64, l: u64) -> Sample {
        Sample::from(Trinomial::from_wdl(w, d, l))
    }

    #[test]
    fn overshoot_tracks_ladder_heights() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 10.0, EloModel::Logistic).unwrap();
        let mut seq = SequentialSprt::new(sprt, 10).unwrap();
        // Rising LLR: each batch is a new maximum, so every rise is a ladder height.
        let first = seq.update(&tri(5, 4, 1)).unwrap();
        let second = seq.update(&tri(10, 8, 2)).unwrap();
        let (h1, h2) = (first.llr, second.llr - first.llr);
        assert!(h1 > 0.0 && h2 > 0.0);
        let (o0, o1) = seq.expected_overshoot();
        assert_eq!(o0, 0.0);
        let expected = (h1 * h1 + h2 * h2) / (h1 + h2) / 2.0;
        assert!((o1 - expected).abs() < 1e-12);
        assert!((second.upper_bound - (sprt.wald_bounds().upper - o1)).abs() < 1e-12);
        // Repeating the same totals is idempotent.
        assert_eq!(seq.update(&tri(10, 8, 2)).unwrap(), second);
    }

    #[test]
    fn broken_batch_contract_drops_the_correction() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 10.0, EloModel::Logistic).unwrap();
        let mut seq = SequentialSprt::new(sprt, 10).unwrap();
        seq.update(&tri(5, 4, 1)).unwrap();
        // Two batches at once: kept, but the ladder restarts and the loss is counted.
        seq.update(&tri(15, 12, 3)).unwrap();
        assert!(seq.has_overshoot_correction());
        assert_eq!(seq.skipped_updates(), 1);
        // A purge (fewer games than before) voids the correction.
        seq.update(&tri(10, 8, 2)).unwrap();
        assert!(!seq.has_overshoot_correction());
        assert_eq!(seq.expected_overshoot(), (0.0, 0.0));

        let mut odd = SequentialSprt::new(sprt, 10).unwrap();
        odd.update(&tri(5, 4, 2)).unwrap();
        assert!(!odd.has_overshoot_correction());
    }
}
