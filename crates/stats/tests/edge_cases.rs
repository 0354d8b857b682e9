//! Edge cases checked by hand: all draws, no losses, one game, 100 000 games, no games. The
//! expected numbers are derived in the comments from the definitions (with fishtest's ε = 1e-3
//! for empty buckets), not copied from the implementation.

use std::f64::consts::LN_10;

use arbiter_stats::elo::{z_95, NELO_PER_T};
use arbiter_stats::{
    estimate, llr, EloModel, Pentanomial, Sample, Sprt, SprtCalculator, SprtState, StatsError,
    Trinomial, REGULARIZATION_EPSILON as EPS,
};

fn tri(w: u64, d: u64, l: u64) -> Sample {
    Sample::from(Trinomial::from_wdl(w, d, l))
}

fn close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} differs from {expected} by more than {tolerance}"
    );
}

/// Logistic Elo of a score, written independently of the crate.
fn elo_of(score: f64) -> f64 {
    400.0 * (score / (1.0 - score)).log10()
}

fn sprt(elo0: f64, elo1: f64, model: EloModel) -> Sprt {
    Sprt::new(0.05, 0.05, elo0, elo1, model).unwrap()
}

#[test]
fn all_draws() {
    // 1000 draws: the two empty buckets get ε each, symmetrically, so the mean is exactly ½:
    // Elo 0, LOS ½, nElo 0. N = 1000.002, variance 2·(ε/N)·¼, so the standard error is
    // sqrt(ε/2)/N, and near ½ the logistic has slope 1600/ln 10 Elo per point of score.
    let sample = tri(0, 1000, 0);
    let n = 1000.0 + 2.0 * EPS;
    let e = estimate::elo(&sample).unwrap();
    assert_eq!(e.elo, 0.0);
    assert_eq!(e.los, 0.5);
    let stderr = (EPS / 2.0).sqrt() / n;
    close(e.half_width, 1600.0 / LN_10 * z_95() * stderr, 1e-7);
    assert_eq!(estimate::normalized_elo(&sample).unwrap().nelo, 0.0);
    close(
        estimate::draw_ratio(&Trinomial::from_wdl(0, 1000, 0)).unwrap(),
        1000.0 / n,
        1e-15,
    );

    // Logistic bounds {0, 5}: a thousand draws in a row is overwhelming evidence that the score
    // is ½ and not L(5), so H0 is accepted...
    let logistic = sprt(0.0, 5.0, EloModel::Logistic);
    assert_eq!(logistic.status(&sample).unwrap().state, SprtState::H0);
    // ...and, as docs/statistics.md §7 warns, the SPRT-aware interval is then wider than the
    // bounds although the fixed-games interval is almost nothing.
    let aware = logistic.elo_estimate(&sample).unwrap();
    assert!(aware.interval.1 - aware.interval.0 > 5.0);
    assert!(e.half_width < 0.05);
    assert!(aware.clamped);

    // Normalized Elo measures the score in units of its own spread; with no spread there is no
    // evidence either way, and the test goes on.
    let normalized = sprt(0.0, 2.0, EloModel::Normalized)
        .status(&sample)
        .unwrap();
    assert_eq!(normalized.state, SprtState::Continue);
    assert!(normalized.llr.abs() < 0.1);
}

#[test]
fn no_losses() {
    // W 30, D 20, L 0: N = 50.001, mean = (30 + 10)/N.
    let sample = tri(30, 20, 0);
    let n = 50.0 + EPS;
    let mean = 40.0 / n;
    let e = estimate::elo(&sample).unwrap();
    close(e.elo, elo_of(mean), 1e-9);
    // Variance of one game, with the ε loss at score 0.
    let var = (EPS * mean * mean + 20.0 * (0.5 - mean).powi(2) + 30.0 * (1.0 - mean).powi(2)) / n;
    let stderr = (var / n).sqrt();
    let half = (elo_of(mean + z_95() * stderr) - elo_of(mean - z_95() * stderr)) / 2.0;
    close(e.half_width, half, 1e-9);
    assert!(e.los > 1.0 - 1e-12);
    // Every statistic stays finite: this is what the regularization is for.
    let nelo = estimate::normalized_elo(&sample).unwrap();
    close(nelo.nelo, NELO_PER_T * (mean - 0.5) / var.sqrt(), 1e-9);
    for model in [EloModel::Normalized, EloModel::Logistic, EloModel::BayesElo] {
        let s = sprt(0.0, 5.0, model);
        assert!(s.llr(&sample).unwrap() > 0.0, "{model}");
        assert!(s.elo_estimate(&sample).unwrap().elo.is_finite(), "{model}");
    }
}

#[test]
fn one_game() {
    // One win is one-sided: fishtest's ε alone would give N = 1.002 and a mean of
    // (1 + ε/2)/N, 1129.65 Elo from one game. With BayesElo's two virtual draws it is one win
    // and two draws, N = 3 + ε, mean 2/N: 120.2 Elo.
    let win = tri(1, 0, 0);
    let mean = 2.0 / (3.0 + EPS);
    let e = estimate::elo(&win).unwrap();
    close(e.elo, elo_of(mean), 1e-9);
    assert_eq!(format!("{:.2}", e.elo), "120.24");
    // One loss mirrors one win.
    close(estimate::elo(&tri(0, 0, 1)).unwrap().elo, -e.elo, 1e-9);
    // One game decides nothing...
    let s = sprt(0.0, 2.0, EloModel::Normalized);
    assert_eq!(s.status(&win).unwrap().state, SprtState::Continue);
    // ...and the SPRT-aware estimate has no root within ±1000 Elo: fishtest returns the clamp.
    assert_eq!(s.elo_estimate(&win).unwrap().elo, 1000.0);
    // One pair of two wins, and the prior's pair of draws: the pair average is 1 and ½ with
    // weight 1 each, ε elsewhere.
    let ww = Sample::from(Pentanomial::from_counts([0, 0, 0, 0, 1]));
    let n = 2.0 + 3.0 * EPS;
    let pair_mean = (1.0 + 0.5 + EPS * (0.25 + 0.75)) / n;
    close(estimate::elo(&ww).unwrap().elo, elo_of(pair_mean), 1e-9);
}

#[test]
fn hundred_thousand_games() {
    // W 30 000, D 40 000, L 30 000: mean ½, variance 0.3·¼ + 0.3·¼ = 0.15 per game, no
    // regularization. Elo 0, LOS ½; the interval is symmetric, half-width elo(½ + z·se).
    let sample = tri(30_000, 40_000, 30_000);
    let se = (0.15f64 / 100_000.0).sqrt();
    let e = estimate::elo(&sample).unwrap();
    assert_eq!(e.elo, 0.0);
    assert_eq!(e.los, 0.5);
    close(e.half_width, elo_of(0.5 + z_95() * se), 1e-9);
    // nElo: t = 0, so the delta-method variance of t is exactly 1: ± K_n·z/√N.
    let nelo = estimate::normalized_elo(&sample).unwrap();
    assert_eq!(nelo.nelo, 0.0);
    close(
        nelo.half_width,
        NELO_PER_T * z_95() / 100_000f64.sqrt(),
        1e-9,
    );

    // 100 000 pairs. For pairs the per-game variance is Var(pair total)/2; here totals are
    // 1/2, 1, 3/2 points with shares 0.2, 0.6, 0.2 around a mean of 1 point: Var = 0.2·¼·2 = 0.1,
    // so 0.05 per game, and the standard error of the per-game mean is sqrt(0.05/200 000).
    let pairs = Sample::from(Pentanomial::from_counts([0, 20_000, 60_000, 20_000, 0]));
    let e = estimate::elo(&pairs).unwrap();
    let se = (0.05f64 / 200_000.0).sqrt();
    close(e.elo, 0.0, 1e-12);
    // ε in the outer buckets widens this by about ε/(N·0.1) relatively: far below 1e-6.
    close(e.half_width, elo_of(0.5 + z_95() * se), 1e-6);
    close(estimate::game_stdev(&pairs).unwrap(), 0.05f64.sqrt(), 1e-7);

    // On a sample this size the closed-form approximations agree with the exact GSPRT.
    let exact = llr::normalized(&sample, 0.0, 2.0).unwrap();
    let approx = llr::normalized_approx(&sample, 0.0, 2.0).unwrap();
    close(approx, exact, 0.01 * exact.abs());
}

#[test]
fn no_games_is_an_error_everywhere() {
    let empty_games = tri(0, 0, 0);
    let empty_pairs = Sample::from(Pentanomial::default());
    for sample in [empty_games, empty_pairs] {
        assert_eq!(estimate::elo(&sample).unwrap_err(), StatsError::NoGames);
        assert_eq!(
            estimate::normalized_elo(&sample).unwrap_err(),
            StatsError::NoGames
        );
        assert_eq!(
            llr::logistic(&sample, 0.0, 5.0).unwrap_err(),
            StatsError::NoGames
        );
        assert_eq!(
            llr::normalized(&sample, 0.0, 2.0).unwrap_err(),
            StatsError::NoGames
        );
        let s = sprt(0.0, 2.0, EloModel::Normalized);
        assert_eq!(s.elo_estimate(&sample).unwrap_err(), StatsError::NoGames);
    }
    assert_eq!(
        estimate::draw_ratio(&Trinomial::default()).unwrap_err(),
        StatsError::NoGames
    );
}

#[test]
fn impossible_inputs_are_typed_errors() {
    let sample = tri(10, 10, 10);
    assert!(matches!(
        llr::normalized(&sample, 2.0, 0.0),
        Err(StatsError::HypothesesOrder { .. })
    ));
    assert!(matches!(
        llr::logistic(&sample, f64::NAN, 0.0),
        Err(StatsError::NotFinite { .. })
    ));
    let s = sprt(0.0, 2.0, EloModel::Normalized);
    assert!(matches!(
        SprtCalculator::new(&s, -0.1, 0.0),
        Err(StatsError::DrawRatio(_))
    ));
    assert!(matches!(
        s.elo_estimate_at(&sample, 1.0),
        Err(StatsError::ErrorRate { .. })
    ));
    // A draw ratio of 0.9 with a 191 Elo bias would need a negative variance.
    assert!(matches!(
        SprtCalculator::new(&s, 0.9, 191.0),
        Err(StatsError::NoVariance { .. })
    ));
}

/// Issue 18, items 1 and 15: a sweep printed LOS 100 % and nElo in the thousands (three pairs
/// won twice: 4911 ± 95610). With BayesElo's prior it reads as near-certain superiority with
/// finite, honest intervals, and more wins only make it surer.
#[test]
fn a_sweep_takes_the_prior() {
    // Ten wins and two virtual draws: 11 of 12 points, 400·log10(11) = 416.5 Elo (the 0.001
    // of a loss moves it by 0.2).
    let e = estimate::elo(&tri(10, 0, 0)).unwrap();
    close(e.elo, 400.0 * 11f64.log10(), 0.2);
    assert!(e.half_width.is_finite() && e.half_width < 300.0, "{e:?}");
    assert!((0.999..1.0).contains(&e.los), "{e:?}");
    // Ten losses mirror ten wins.
    let lost = estimate::elo(&tri(0, 0, 10)).unwrap();
    close(lost.elo, -e.elo, 1e-9);
    close(lost.los, 1.0 - e.los, 1e-12);
    let mut last = e.los;
    for n in [20, 50, 100, 1000] {
        let e = estimate::elo(&tri(n, 0, 0)).unwrap();
        assert!(e.los > last && e.half_width < 300.0, "{n}: {e:?}");
        last = e.los;
    }

    // Three pairs won twice, and one virtual pair of draws: pair averages ½ and 1 with shares
    // ¼ and ¾ (ε aside). Mean 7/8, variance 3/64, so t = (3/8)/sqrt(3/64) = √3 and nElo is
    // 800/ln10/√2·√3 = 425.5. The two-point distribution has skewness -2/√3 and excess
    // kurtosis -2/3, so Var(t) = 1 + √3·2/√3 + ¾·(4/3) = 4, and the half-width is
    // 800/ln10/√2·z·sqrt(4/4) = 481.5.
    let ww = Sample::from(Pentanomial::from_counts([0, 0, 0, 0, 3]));
    let nelo = estimate::normalized_elo(&ww).unwrap();
    let scale = NELO_PER_T / 2f64.sqrt();
    // The three empty buckets' ε move both by under 1 %.
    close(nelo.nelo, scale * 3f64.sqrt(), 0.01 * 425.5);
    close(nelo.half_width, scale * z_95(), 0.01 * 481.5);
    // Issue 18, item 15's own case: three pairs of a win and a draw printed nElo
    // 3471.8 +/- 71549.2. With the virtual pair of draws the pair averages are ½ and ¾ with
    // shares ¼ and ¾: the same two-point shape as above, a quarter apart, so the same t.
    let dw = Sample::from(Pentanomial::from_counts([0, 0, 0, 3, 0]));
    let nelo = estimate::normalized_elo(&dw).unwrap();
    close(nelo.nelo, scale * 3f64.sqrt(), 0.01 * 425.5);
    // The ε of the bucket 0 sits four steps from the mean here, which moves the kurtosis in
    // the half-width by 4 %.
    close(nelo.half_width, scale * z_95(), 0.05 * 481.5);
    // Its Elo: 4.5 of 6 points and the virtual 1 of 2, 5.5 of 8: 400·log10(11/5) = 137.
    let e = estimate::elo(&dw).unwrap();
    close(e.elo, 400.0 * (11.0f64 / 5.0).log10(), 0.5);
    assert!(e.half_width > 50.0 && e.los < 1.0, "{e:?}");
    // Samples with a point to each side are fishtest's, untouched: one win and one draw.
    let n = 2.0 + EPS;
    close(
        estimate::elo(&tri(1, 1, 0)).unwrap().elo,
        elo_of((1.5 + 0.0) / n),
        1e-9,
    );
}
