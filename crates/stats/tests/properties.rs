//! Properties that must hold for every sample, checked on random counts: symmetry under
//! swapping the players, linearity of the GSPRT in the sample size, monotonicity in wins, and
//! that nothing ever panics or returns NaN.

use arbiter_stats::{
    estimate, llr, EloModel, Pentanomial, Sample, Sprt, SprtCalculator, Trinomial, MAX_ELO,
    MAX_GAMES,
};
use proptest::prelude::*;

fn counts3() -> impl Strategy<Value = [u64; 3]> {
    prop::array::uniform3(0u64..5_000)
}

fn counts5() -> impl Strategy<Value = [u64; 5]> {
    prop::array::uniform5(0u64..5_000)
}

fn tri([l, d, w]: [u64; 3]) -> Sample {
    Sample::from(Trinomial::from_wdl(w, d, l))
}

fn mirrored3([l, d, w]: [u64; 3]) -> Sample {
    tri([w, d, l])
}

fn penta(c: [u64; 5]) -> Sample {
    Sample::from(Pentanomial::from_counts(c))
}

fn mirrored5([a, b, c, d, e]: [u64; 5]) -> Sample {
    penta([e, d, c, b, a])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Seen from the other engine, every Elo changes sign, and a test of elo0 against elo1
    /// becomes a test of -elo1 against -elo0 with the LLR negated.
    #[test]
    fn swapping_players_mirrors_everything(c3 in counts3(), c5 in counts5()) {
        prop_assume!(c3.iter().sum::<u64>() > 0 && c5.iter().sum::<u64>() > 0);
        for (s, m) in [(tri(c3), mirrored3(c3)), (penta(c5), mirrored5(c5))] {
            let (e, em) = (estimate::elo(&s).unwrap(), estimate::elo(&m).unwrap());
            prop_assert!((e.elo + em.elo).abs() < 1e-9);
            prop_assert!((e.los + em.los - 1.0).abs() < 1e-9);
            let l = llr::logistic(&s, -1.0, 4.0).unwrap();
            let lm = llr::logistic(&m, -4.0, 1.0).unwrap();
            prop_assert!((l + lm).abs() < 1e-7 * (1.0 + l.abs()), "{} vs {}", l, lm);
        }
    }

    /// With no empty bucket the GSPRT LLR is N times a function of the frequencies, so
    /// doubling every count doubles it.
    #[test]
    fn llr_is_linear_in_the_sample_size(c5 in prop::array::uniform5(1u64..5_000)) {
        let once = llr::normalized(&penta(c5), 0.0, 2.0).unwrap();
        let twice = llr::normalized(&penta(c5.map(|n| 2 * n)), 0.0, 2.0).unwrap();
        prop_assert!((twice - 2.0 * once).abs() < 1e-6 * (1.0 + once.abs()));
        let once = llr::logistic(&penta(c5), 0.0, 5.0).unwrap();
        let twice = llr::logistic(&penta(c5.map(|n| 2 * n)), 0.0, 5.0).unwrap();
        prop_assert!((twice - 2.0 * once).abs() < 1e-6 * (1.0 + once.abs()));
    }

    /// One more win is never evidence against the stronger hypothesis.
    #[test]
    fn a_win_never_lowers_the_llr(c3 in counts3()) {
        prop_assume!(c3.iter().sum::<u64>() > 0);
        let before = llr::logistic(&tri(c3), 0.0, 5.0).unwrap();
        let after = llr::logistic(&tri([c3[0], c3[1], c3[2] + 1]), 0.0, 5.0).unwrap();
        prop_assert!(after >= before - 1e-9);
    }

    /// Every statistic of every non-empty sample is a number or a typed error: never NaN, never
    /// a panic.
    #[test]
    fn never_nan(c5 in counts5(), model in 0..2usize) {
        prop_assume!(c5.iter().sum::<u64>() > 0);
        let s = penta(c5);
        let model = [EloModel::Normalized, EloModel::Logistic][model];
        let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, model).unwrap();
        let e = estimate::elo(&s).unwrap();
        prop_assert!(e.elo.is_finite() && e.half_width.is_finite() && e.los.is_finite());
        if let Ok(status) = sprt.status(&s) {
            prop_assert!(status.llr.is_finite());
        }
        if let Ok(aware) = sprt.elo_estimate(&s) {
            prop_assert!(aware.elo.is_finite() && aware.los.is_finite());
            prop_assert!(aware.interval.0 <= aware.elo + 1e-9 && aware.elo <= aware.interval.1 + 1e-9);
        }
    }
}

/// Any `u64` count: mostly small, sometimes at the edges of the type and of [`MAX_GAMES`].
fn any_count() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..2_000,
        1 => 0u64..=u64::MAX,
        1 => Just(u64::MAX),
        1 => (MAX_GAMES / 4 - 2)..=(MAX_GAMES / 2 + 2),
    ]
}

/// Any `f64` a user could type for a bound, an error rate, a draw ratio or a bias.
fn any_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -5.0..5.0f64,
        2 => -1500.0..1500.0f64,
        1 => 0.0..1.0f64,
        1 => prop::num::f64::ANY,
        1 => prop::sample::select(vec![
            0.0, -0.0, 1.0, 1e-300, 5e-324, 1e6, -1e6, 1e300, MAX_ELO, -MAX_ELO,
            f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE,
        ]),
    ]
}

/// An error rate: mostly a sensible one, so that the design is valid and the sample is tested.
fn any_error_rate() -> impl Strategy<Value = f64> {
    prop_oneof![6 => 1e-6..0.45f64, 1 => any_number()]
}

/// Two bounds, mostly ordered so that the design is valid.
fn any_bounds() -> impl Strategy<Value = (f64, f64)> {
    (any_number(), any_number(), 0..4u8).prop_map(|(a, b, order)| match order {
        0 => (a, b),
        _ => (a.min(b), a.max(b)),
    })
}

fn any_model() -> impl Strategy<Value = EloModel> {
    prop::sample::select(vec![
        EloModel::Normalized,
        EloModel::Logistic,
        EloModel::BayesElo,
    ])
}

fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever counts and design `arbiter sprt` is given, every statistic is a finite number
    /// or a typed error: no overflow, no NaN, no infinity, no panic.
    #[test]
    fn any_input_is_a_finite_number_or_an_error(
        c5 in prop::array::uniform5(any_count()),
        pentanomial in any::<bool>(),
        (alpha, beta) in (any_error_rate(), any_error_rate()),
        (elo0, elo1) in any_bounds(),
        model in any_model(),
    ) {
        let s = if pentanomial { penta(c5) } else { tri([c5[0], c5[1], c5[2]]) };
        let checked = s.check();
        if let Ok(e) = estimate::elo(&s) {
            prop_assert!(checked.is_ok());
            prop_assert!(all_finite(&[e.elo, e.half_width, e.los]));
        }
        if let Ok(n) = estimate::normalized_elo(&s) {
            prop_assert!(all_finite(&[n.nelo, n.half_width]));
        }
        if let Sample::Pentanomial(p) = s {
            if let Some(ratio) = estimate::pairs_ratio(&p) {
                prop_assert!(ratio.is_finite());
            }
        }
        if checked.is_err() {
            prop_assert!(estimate::elo(&s).is_err());
        }
        let Ok(sprt) = Sprt::new(alpha, beta, elo0, elo1, model) else { return Ok(()) };
        prop_assert!(elo0.abs() <= MAX_ELO && elo1.abs() <= MAX_ELO && elo0 < elo1);
        prop_assert!(alpha > 0.0 && beta > 0.0 && alpha + beta < 1.0);
        let wald = sprt.wald_bounds();
        prop_assert!(all_finite(&[wald.lower, wald.upper]));
        if let Ok(status) = sprt.status(&s) {
            prop_assert!(all_finite(&[status.llr, status.lower_bound, status.upper_bound]));
        }
        if let Ok((e0, e1)) = sprt.logistic_bounds(&s) {
            prop_assert!(all_finite(&[e0, e1]));
        }
        if let Ok(aware) = sprt.elo_estimate(&s) {
            prop_assert!(all_finite(&[aware.elo, aware.interval.0, aware.interval.1, aware.los]));
        }
    }

    /// The calculator (`arbiter sprt --expect`) on any design, draw ratio, bias and true Elo.
    #[test]
    fn any_calculator_input_is_a_finite_number_or_an_error(
        ((elo0, elo1), elo) in (any_bounds(), any_number()),
        (draw_ratio, rms_bias) in (
            prop_oneof![3 => 0.0..1.0f64, 1 => any_number()],
            prop_oneof![3 => 0.0..400.0f64, 1 => any_number()],
        ),
        model in any_model(),
    ) {
        let Ok(sprt) = Sprt::new(0.05, 0.05, elo0, elo1, model) else { return Ok(()) };
        let Ok(calculator) = SprtCalculator::new(&sprt, draw_ratio, rms_bias) else {
            return Ok(());
        };
        prop_assert!((0.0..1.0).contains(&draw_ratio) && rms_bias >= 0.0);
        let (e0, e1) = calculator.logistic_bounds();
        prop_assert!(all_finite(&[e0, e1]));
        if let Ok(point) = calculator.at(elo) {
            prop_assert!(all_finite(&[point.pass_probability, point.expected_games]));
            prop_assert!((0.0..=1.0).contains(&point.pass_probability));
            prop_assert!(point.expected_games >= 0.0);
        }
    }
}
