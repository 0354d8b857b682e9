//! Properties that must hold for every sample, checked on random counts: symmetry under
//! swapping the players, linearity of the GSPRT in the sample size, monotonicity in wins, and
//! that nothing ever panics or returns NaN.

use arbiter_stats::{estimate, llr, EloModel, Pentanomial, Sample, Sprt, Trinomial};
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
