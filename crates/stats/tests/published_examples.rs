//! The public examples listed at the end of docs/statistics.md, each reproduced to the precision
//! it was printed with. These are outputs of fishtest, fastchess and OpenBench themselves, so they
//! check arbiter against the tools users compare it with.

use arbiter_stats::{estimate, llr, EloModel, Pentanomial, Sample, Sprt, Trinomial, WaldBounds};

fn penta(counts: [u64; 5]) -> Sample {
    Sample::from(Pentanomial::from_counts(counts))
}

fn fixed(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

#[test]
fn fastchess_test_vector() {
    // fastchess: pentanomial [365, 16618, 36229, 16974, 390], W 36433 L 36027 D 68692,
    // normalized bounds <0, 2>: LLR 2.25 from the pairs, 0.92 from the games.
    let pairs = penta([365, 16618, 36229, 16974, 390]);
    let games = Sample::from(Trinomial::from_wdl(36433, 68692, 36027));
    assert_eq!(
        pairs.games(),
        games.games(),
        "the vector describes one match"
    );
    let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized).unwrap();
    assert_eq!(fixed(sprt.llr(&pairs).unwrap(), 2), "2.25");
    assert_eq!(fixed(sprt.llr(&games).unwrap(), 2), "0.92");
}

#[test]
fn fishtest_issue_1737_sprt_aware_estimate() {
    // fishtest issue #1737: [93, 18711, 58877, 18739, 100] under <-1.75, 0.25>:
    // Elo -0.068, 95% interval [-0.847, 0.660], LLR 2.942.
    let sample = penta([93, 18711, 58877, 18739, 100]);
    let sprt = Sprt::new(0.05, 0.05, -1.75, 0.25, EloModel::Normalized).unwrap();
    let estimate = sprt.elo_estimate(&sample).unwrap();
    assert_eq!(fixed(estimate.elo, 3), "-0.068");
    assert_eq!(fixed(estimate.interval.0, 3), "-0.847");
    assert_eq!(fixed(estimate.interval.1, 3), "0.660");
    assert_eq!(fixed(sprt.llr(&sample).unwrap(), 3), "2.942");
    // The plain estimate of the same games is positive: the SPRT-aware one is pulled toward
    // the bounds, as the document warns.
    assert!(estimate::elo(&sample).unwrap().elo > 0.0);
}

#[test]
fn openbench_clockwork_test() {
    // OpenBench: [398, 4112, 7672, 4336, 430] with nElo bounds [0, 3]: Elo 2.95 +/- 2.18, LLR 2.96.
    // OpenBench uses a Student-t quantile where fishtest uses z; with 16 948 pairs the two agree
    // far below the printed precision.
    let sample = penta([398, 4112, 7672, 4336, 430]);
    let elo = estimate::elo(&sample).unwrap();
    assert_eq!(fixed(elo.elo, 2), "2.95");
    assert_eq!(fixed(elo.half_width, 2), "2.18");
    assert_eq!(
        fixed(llr::normalized(&sample, 0.0, 3.0).unwrap(), 2),
        "2.96"
    );
}

#[test]
fn wald_bounds_at_five_percent() {
    let bounds = WaldBounds::new(0.05, 0.05).unwrap();
    assert_eq!(fixed(bounds.upper, 9), "2.944438979");
    assert_eq!(fixed(bounds.lower, 9), "-2.944438979");
}
