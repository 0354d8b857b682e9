//! The BayesElo draw model of cutechess-cli and fishtest's first years.
//!
//! BayesElo explains draws with a "drawelo" offset: `P(win) = L(elo - drawelo)` and
//! `P(loss) = L(-elo - drawelo)`. Its SPRT estimates drawelo from the sample and then compares
//! two fully specified trinomial laws. It is kept so that a user can check arbiter against a
//! cutechess-cli run; new tests should use normalized bounds.

use crate::elo::{elo_from_score, score_from_elo};
use crate::llr::check_hypotheses;
use crate::results::{Sample, Trinomial};
use crate::StatsError;

/// `[P(loss), P(draw), P(win)]` for a BayesElo difference and a drawelo.
pub fn probabilities(bayeselo: f64, drawelo: f64) -> [f64; 3] {
    let win = score_from_elo(bayeselo - drawelo);
    let loss = score_from_elo(-bayeselo - drawelo);
    [loss, 1.0 - win - loss, win]
}

/// BayesElo and drawelo that reproduce the given loss and win probabilities.
pub fn from_probabilities(loss: f64, win: f64) -> (f64, f64) {
    let bayeselo = 200.0 * (win / loss * (1.0 - loss) / (1.0 - win)).log10();
    let drawelo = 200.0 * ((1.0 - loss) / loss * (1.0 - win) / win).log10();
    (bayeselo, drawelo)
}

/// drawelo estimated "out of sample" from regularized W/D/L, as fishtest's `draw_elo_calc`.
pub fn drawelo(trinomial: &Trinomial) -> Result<f64, StatsError> {
    let [l, _, w] = regularized_frequencies(trinomial)?;
    Ok(from_probabilities(l, w).1)
}

/// The logistic Elo a BayesElo difference means at the given drawelo: the BayesElo bounds of an
/// old test become logistic bounds this way before the GSPRT or the SPRT-aware estimate sees
/// them.
pub fn to_logistic(bayeselo: f64, drawelo: f64) -> f64 {
    let [_, draw, win] = probabilities(bayeselo, drawelo);
    elo_from_score(win + 0.5 * draw)
}

/// The drawelo of a balanced match (P(win) = P(loss)) with the given draw ratio:
/// `400 log10((1 + d)/(1 - d))`. Used to read BayesElo bounds when only a draw ratio is known.
pub fn drawelo_from_draw_ratio(draw_ratio: f64) -> f64 {
    400.0 * ((1.0 + draw_ratio) / (1.0 - draw_ratio)).log10()
}

/// The legacy BayesElo SPRT log-likelihood ratio (fishtest's `LLRlegacy`, cutechess-cli's SPRT):
/// `Σ_i R_i ln(P1_i / P0_i)` with drawelo from the sample.
///
/// Zero counts are regularized like every other statistic here; cutechess-cli instead reports 0
/// until every outcome has occurred once. Once W, D and L are all positive the two agree.
pub fn llr_legacy(trinomial: &Trinomial, belo0: f64, belo1: f64) -> Result<f64, StatsError> {
    check_hypotheses(belo0, belo1)?;
    let drawelo = drawelo(trinomial)?;
    let counts = Sample::from(*trinomial).regularized();
    let p0 = probabilities(belo0, drawelo);
    let p1 = probabilities(belo1, drawelo);
    Ok(counts
        .iter()
        .zip(p0.iter().zip(&p1))
        .map(|(r, (q0, q1))| r * (q1 / q0).ln())
        .sum())
}

fn regularized_frequencies(trinomial: &Trinomial) -> Result<[f64; 3], StatsError> {
    let sample = Sample::from(*trinomial);
    sample.check()?;
    let counts = sample.regularized();
    let n: f64 = counts.iter().sum();
    Ok([counts[0] / n, counts[1] / n, counts[2] / n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_round_trip() {
        let p = probabilities(12.0, 240.0);
        let (belo, drawelo) = from_probabilities(p[0], p[2]);
        assert!((belo - 12.0).abs() < 1e-9);
        assert!((drawelo - 240.0).abs() < 1e-9);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn balanced_drawelo_reproduces_the_draw_ratio() {
        let d = 0.61;
        let p = probabilities(0.0, drawelo_from_draw_ratio(d));
        assert!((p[1] - d).abs() < 1e-12);
    }

    #[test]
    fn zero_bayeselo_is_zero_logistic_elo() {
        assert!(to_logistic(0.0, 300.0).abs() < 1e-12);
        // Draws shrink a BayesElo difference on the logistic scale.
        assert!(to_logistic(10.0, 300.0) < 10.0);
    }
}
