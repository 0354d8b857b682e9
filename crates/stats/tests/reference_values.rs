//! fishtest's own test inputs (the `__main__` block of `stat_util.py`) evaluated offline with
//! scipy by a Python transcription of the formulas in docs/statistics.md. They cover what the
//! published examples do not: logistic bounds, trinomial LLRs, the legacy BayesElo LLR, the
//! SPRT-aware estimate under both models, nElo and the calculator. Tolerances are far below any
//! printed precision; the two implementations share no code.

use arbiter_stats::{
    bayeselo, estimate, llr, EloModel, Pentanomial, Sample, Sprt, SprtCalculator, Trinomial,
};

fn close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} differs from {expected} by more than {tolerance}"
    );
}

/// `{"wins": 65388, "losses": 65804, "draws": 56553, "pentanomial": [10789, ...]}`.
fn fishtest_run() -> (Sample, Sample) {
    (
        Sample::from(Trinomial::from_wdl(65388, 56553, 65804)),
        Sample::from(Pentanomial::from_counts([
            10789, 19328, 33806, 19402, 10543,
        ])),
    )
}

#[test]
fn logistic_llr_of_fishtest_run() {
    let (games, pairs) = fishtest_run();
    close(
        llr::logistic(&pairs, -3.0, 1.0).unwrap(),
        2.1310678117940807,
        1e-9,
    );
    close(
        llr::logistic(&games, -3.0, 1.0).unwrap(),
        2.0490426179674808,
        1e-9,
    );
    close(
        llr::normalized(&pairs, -3.0, 1.0).unwrap(),
        0.30086978548354076,
        1e-9,
    );
    // The Gaussian approximation stays within a few hundredths of the exact GSPRT.
    close(
        llr::logistic_approx(&pairs, -3.0, 1.0).unwrap(),
        2.1312448707048293,
        1e-9,
    );
}

#[test]
fn legacy_bayeselo_llr() {
    let games = Trinomial::from_wdl(13543, 34333, 13624);
    close(
        bayeselo::llr_legacy(&games, -3.0, 1.0).unwrap(),
        0.7327615889067545,
        1e-9,
    );
}

#[test]
fn sprt_aware_estimates_under_both_models() {
    let pairs = Sample::from(Pentanomial::from_counts([39, 2226, 31451, 2412, 40]));
    let logistic = Sprt::new(0.05, 0.05, 0.2, 0.9, EloModel::Logistic).unwrap();
    let e = logistic.elo_estimate(&pairs).unwrap();
    close(e.elo, 0.8651827882599533, 1e-7);
    close(e.interval.0, 0.1683070591217054, 1e-7);
    close(e.interval.1, 1.5405993355073953, 1e-7);
    close(e.los, 0.9920016650631204, 1e-9);
    close(logistic.llr(&pairs).unwrap(), 2.1625425800483593, 1e-9);

    // fishtest's test picks normalized bounds equivalent to the logistic ones for this sample,
    // so both models must tell the same story.
    let normalized = Sprt::new(0.05, 0.05, 0.764, 3.439, EloModel::Normalized).unwrap();
    let e = normalized.elo_estimate(&pairs).unwrap();
    close(e.elo, 0.8651598534526277, 1e-7);
    close(e.interval.0, 0.16827135251642789, 1e-7);
    close(e.interval.1, 1.5405826879352602, 1e-7);
    close(e.los, 0.9919993674519018, 1e-9);
    close(normalized.llr(&pairs).unwrap(), 2.162940869584568, 1e-9);
}

#[test]
fn fixed_sample_estimates() {
    let pairs = Sample::from(Pentanomial::from_counts([39, 2226, 31451, 2412, 40]));
    let elo = estimate::elo(&pairs).unwrap();
    close(elo.elo, 0.902981048809024, 1e-9);
    close(elo.half_width, 0.6625314859816553, 1e-9);
    close(elo.los, 0.9962220973354207, 1e-9);
    let nelo = estimate::normalized_elo(&pairs).unwrap();
    close(nelo.nelo, 3.450799606946096, 1e-9);
    close(nelo.half_width, 2.5312396032638778, 1e-9);
}

#[test]
fn calculator_matches_fishtest_sprt_js() {
    let calc = |elo0, elo1, model| {
        let sprt = Sprt::new(0.05, 0.05, elo0, elo1, model).unwrap();
        SprtCalculator::new(&sprt, 0.49, 191.0).unwrap()
    };
    let stc = calc(0.0, 2.0, EloModel::Normalized).at(1.0).unwrap();
    close(stc.pass_probability, 0.9444699990948261, 1e-12);
    close(stc.expected_games, 164150.5038634856, 1e-6);
    let ltc = calc(0.5, 2.5, EloModel::Normalized).at(2.0).unwrap();
    close(ltc.pass_probability, 0.9992074996043429, 1e-12);
    close(ltc.expected_games, 73175.46851522362, 1e-6);
    let old = calc(0.0, 5.0, EloModel::Logistic).at(3.0).unwrap();
    close(old.pass_probability, 0.643145741941249, 1e-12);
    close(old.expected_games, 10567.958629985917, 1e-6);
}
