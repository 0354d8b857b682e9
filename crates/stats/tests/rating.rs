//! Rating lists: a three-engine case derived by hand, agreement with the match Elo for two
//! engines, an independent oracle (scripts/rating-oracle.py, scipy), the properties every list
//! must have, and the hard cases (perfect scores, groups that never met, no games).

use arbiter_stats::elo::{normal_cdf, score_from_elo, z_95, ELO_PER_NAT};
use arbiter_stats::{
    estimate, rate, Anchor, Encounter, Pentanomial, RatingList, Sample, StatsError, Trinomial,
};
use proptest::prelude::*;

fn close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} differs from {expected} by more than {tolerance}"
    );
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("engine{i}")).collect()
}

fn games(first: usize, second: usize, w: u64, d: u64, l: u64) -> Encounter {
    Encounter::games(first, second, Trinomial::from_wdl(w, d, l))
}

/// The line of engine `index`.
fn line(list: &RatingList, index: usize) -> &arbiter_stats::RatedEngine {
    list.engines.iter().find(|e| e.engine == index).unwrap()
}

/// A, B, C with A–B 60/30/10 (A scores 75 %), B–C 60/30/10 and A–C 85/10/5 (A scores 90 %).
///
/// Ratings. At the maximum of the likelihood each engine's expected score equals its actual
/// score. Ratings 400·log10(3) apart satisfy every pairing exactly: L(400 log10 3) = 3/4 and
/// L(800 log10 3) = 9/10. So with mean zero, A = +400·log10(3) = +190.85, B = 0, C = -190.85.
///
/// Intervals (natural-log units θ = Elo·ln10/400). The Fisher information of a pairing is
/// n·E(1-E): 100·¾·¼ = 18.75 for A–B and B–C, 100·0.9·0.1 = 9 for A–C. The observed variance
/// of a pairing's points is n·Σ p(x - E)²: A–B is 100·(0.6·¼² + 0.3·¼² + 0.1·¾²) = 11.25, and
/// so is B–C; A–C is 100·(0.85·0.1² + 0.1·0.4² + 0.05·0.9²) = 6.5. Holding B at 0, with
/// x = θ_A, y = θ_C: I = [[27.75, -9], [-9, 27.75]] and J = [[17.75, -6.5], [-6.5, 17.75]].
/// Both have eigenvectors (1, 1) and (1, -1), with I's eigenvalues 18.75 and 36.75 and J's
/// 11.25 and 24.25, so I⁻¹JI⁻¹ has λ1 = 11.25/18.75² = 0.032 along (1, 1) and
/// λ2 = 24.25/36.75² along (1, -1). Hence Var x = Var y = (λ1 + λ2)/2,
/// Cov(x, y) = (λ1 - λ2)/2, and with mean zero A's rating is (2x - y)/3 and B's is -(x + y)/3:
/// Var A = (5 Var x - 4 Cov)/9, Var B = (2 Var x + 2 Cov)/9.
#[test]
fn three_engines_by_hand() {
    let list = rate(
        &names(3),
        &[
            games(0, 1, 60, 30, 10),
            games(1, 2, 60, 30, 10),
            games(0, 2, 85, 10, 5),
        ],
        Anchor::MeanZero,
    )
    .unwrap();
    let step = 400.0 * 3f64.log10();
    assert!((score_from_elo(step) - 0.75).abs() < 1e-15);
    assert!((score_from_elo(2.0 * step) - 0.9).abs() < 1e-15);
    let order: Vec<usize> = list.engines.iter().map(|e| e.engine).collect();
    assert_eq!(order, [0, 1, 2]);
    close(line(&list, 0).elo, step, 1e-7);
    close(line(&list, 1).elo, 0.0, 1e-7);
    close(line(&list, 2).elo, -step, 1e-7);

    let (l1, l2) = (11.25 / 18.75f64.powi(2), 24.25 / 36.75f64.powi(2));
    assert_eq!(l1, 0.032);
    let (var_x, cov_xy) = ((l1 + l2) / 2.0, (l1 - l2) / 2.0);
    let var_a = (5.0 * var_x - 4.0 * cov_xy) / 9.0;
    let var_b = (2.0 * var_x + 2.0 * cov_xy) / 9.0;
    let hw = |var: f64| z_95() * ELO_PER_NAT * var.sqrt();
    close(line(&list, 0).half_width, hw(var_a), 1e-9);
    close(line(&list, 1).half_width, hw(var_b), 1e-9);
    close(line(&list, 2).half_width, hw(var_a), 1e-9);
    // A over B: the difference is x, θ = ln 3 with variance Var x.
    let los_ab = normal_cdf(3f64.ln() / var_x.sqrt());
    close(line(&list, 0).los_next.unwrap(), los_ab, 1e-12);
    close(line(&list, 1).los_next.unwrap(), los_ab, 1e-12);
    assert_eq!(line(&list, 2).los_next, None);
    assert_eq!(list.groups, 1);
    assert!(list.engines.iter().all(|e| !e.separated));
    // Counts and scores come from the raw games.
    let a = line(&list, 0);
    assert_eq!(a.results, Trinomial::from_wdl(145, 40, 15));
    assert_eq!(a.games(), 200);
    close(a.score().unwrap(), 165.0 / 200.0, 1e-15);
    close(a.draw_ratio().unwrap(), 0.2, 1e-15);
}

/// For two engines the rating difference is the match Elo of the same games: exactly (to the
/// solver's tolerance) whenever fishtest's score clamp at ±1199.8 Elo is not in play. The
/// interval is the same standard error carried to the Elo scale by the delta method where
/// fishtest maps the score interval's ends; the two differ by the curvature of the logistic
/// over the interval, which shrinks as 1/games: the half-widths agree to within 1 % for scores
/// in [0.15, 0.85] from 1,000 games (3 % at 200 games), and the LOS to within 0.002 from 200
/// games (fishtest computes it on the score scale, the list on the Elo scale).
fn check_two_engines(sample: Sample, games: Trinomial, pairs: Option<Pentanomial>) {
    let encounter = Encounter {
        first: 0,
        second: 1,
        games,
        pairs,
    };
    let list = rate(
        &names(2),
        &[encounter],
        Anchor::Engine {
            engine: 1,
            elo: 0.0,
        },
    )
    .unwrap();
    let matched = estimate::elo(&sample).unwrap();
    let first = line(&list, 0);
    close(first.elo, matched.elo, 1e-6);
    let score = estimate::score(&sample).unwrap();
    if (0.15..=0.85).contains(&score) && sample.games() >= 200 {
        let tolerance = if sample.games() >= 1000 { 0.01 } else { 0.035 };
        close(first.half_width / matched.half_width, 1.0, tolerance);
        let los = if first.elo >= 0.0 {
            first.los_next.unwrap()
        } else {
            1.0 - line(&list, 1).los_next.unwrap()
        };
        close(los, matched.los, 0.002);
    }
    assert_eq!(line(&list, 1).half_width, 0.0);
}

#[test]
fn two_engines_agree_with_the_match_elo() {
    let t = Trinomial::from_wdl(1235, 2450, 1150);
    check_two_engines(Sample::from(t), t, None);
    // Pairs: the interval is the pentanomial one, narrower than the trinomial one.
    let p = Pentanomial::from_counts([365, 16618, 36229, 16974, 390]);
    // Games consistent with those pairs: W - L = 2·points - games, draws the rest.
    let pair_points = p.points();
    let games = p.games();
    let wins = 30_000u64;
    let losses = wins - (2.0 * pair_points - games as f64) as u64;
    let t = Trinomial::from_wdl(wins, games - wins - losses, losses);
    assert_eq!(t.points(), pair_points);
    check_two_engines(Sample::from(p), t, Some(p));
    let trinomial_width = line(
        &rate(&names(2), &[Encounter::games(0, 1, t)], Anchor::MeanZero).unwrap(),
        0,
    )
    .half_width;
    let pentanomial_width = line(
        &rate(&names(2), &[Encounter::pairs(0, 1, t, p)], Anchor::MeanZero).unwrap(),
        0,
    )
    .half_width;
    assert!(pentanomial_width < trinomial_width);
}

/// scripts/rating-oracle.py fits the same data with scipy's BFGS and a finite-difference
/// Hessian; its output is pasted here.
#[test]
fn agrees_with_the_scipy_oracle() {
    let names: Vec<String> = ["anchor", "bravo", "charlie", "delta", "echo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let encounters = [
        games(0, 1, 31, 52, 17),
        games(0, 2, 40, 45, 15),
        games(1, 2, 22, 50, 28),
        games(1, 3, 45, 40, 15),
        games(2, 3, 30, 60, 10),
        games(3, 4, 20, 70, 0),
        games(2, 4, 12, 30, 8),
        games(0, 4, 9, 1, 0),
    ];
    let list = rate(
        &names,
        &encounters,
        Anchor::Engine {
            engine: 0,
            elo: 2800.0,
        },
    )
    .unwrap();
    let oracle = [
        ("anchor", 2800.000000, 0.000000, Some(0.999720588)),
        ("bravo", 2733.514091, 37.761709, Some(0.856614296)),
        ("charlie", 2715.139300, 38.172922, Some(0.999959021)),
        ("delta", 2649.862344, 45.017330, Some(0.998494936)),
        ("echo", 2602.508068, 50.458730, None),
    ];
    for (line, (name, elo, half_width, los)) in list.engines.iter().zip(oracle) {
        assert_eq!(line.name, name);
        close(line.elo, elo, 1e-5);
        close(line.half_width, half_width, 1e-4);
        match (line.los_next, los) {
            (Some(a), Some(b)) => close(a, b, 1e-7),
            (a, b) => assert_eq!(a, b),
        }
    }
}

/// A sweep of `n` games from first principles. BayesElo's prior adds two draws, so the
/// likelihood is `(n + 1) ln L(θ) + ln L(-θ)` (fishtest's 0.001 of a loss is its only other
/// term): its maximum is at `L(θ) = (n + 1)/(n + 2)`, `θ = ln(n + 1)`. Per game the observed
/// variance of the points about that score is `n/(n+2)·(1/(n+2))² + 2/(n+2)·(n/(2(n+2)))²`,
/// which is `n/(2(n+2)²)`; the information is `(n+2) L (1-L) = (n+1)/(n+2)`; the sandwich
/// variance of θ is their ratio `n(n+2)/(2(n+1)²)`. (With the 0.001 loss the figures move by
/// less than 0.2 Elo; the tolerances allow for it.)
fn sweep_by_hand(n: f64) -> (f64, f64, f64) {
    let theta = (n + 1.0).ln();
    let sd = (n * (n + 2.0) / (2.0 * (n + 1.0).powi(2))).sqrt();
    (
        ELO_PER_NAT * theta,
        z_95() * ELO_PER_NAT * sd,
        normal_cdf(theta / sd),
    )
}

/// Issue 18, item 1: ten straight wins printed `765 +/-4013`, LOS 64.6 %; 100 of them LOS
/// 68.1 %. A sweep reads as near-certain superiority with a finite interval.
#[test]
fn a_sweep_is_near_certain_with_a_finite_interval() {
    let mut last_los = 0.0;
    for n in [10u64, 20, 30, 50, 100, 1000] {
        let list = rate(&names(2), &[games(0, 1, n, 0, 0)], Anchor::MeanZero).unwrap();
        let (top, bottom) = (line(&list, 0), line(&list, 1));
        assert!(top.separated && bottom.separated);
        let gap = top.elo - bottom.elo;
        let (elo, half_width, los) = sweep_by_hand(n as f64);
        close(gap, elo, 0.2);
        // Mean zero, so each engine is half the gap out, with half the difference's interval.
        close(top.elo, elo / 2.0, 0.1);
        close(top.half_width, half_width / 2.0, 0.1);
        let list_los = top.los_next.unwrap();
        // The 0.001 loss moves 1 - LOS by under 1 %.
        close(list_los, los, 0.01 * (1.0 - los));
        assert!(list_los >= 0.999, "{n}: LOS {list_los}");
        assert!(
            list_los > last_los,
            "LOS falls from {last_los} to {list_los} at {n}"
        );
        last_los = list_los;
        assert!(half_width.is_finite() && top.half_width < 250.0);
        // The match statistics of the same games say the same.
        let matched = estimate::elo(&Sample::from(Trinomial::from_wdl(n, 0, 0))).unwrap();
        close(matched.elo, gap, 1e-6);
        close(matched.half_width, 2.0 * top.half_width, 1e-6);
        close(matched.los, list_los, 1e-12);
    }
    // Ten wins: 400·log10(11) = 416.5 Elo, LOS 99.97 %.
    let (elo, _, los) = sweep_by_hand(10.0);
    close(elo, 416.5, 0.1);
    assert!((0.9996..0.9998).contains(&los), "{los}");
    // A pentanomial sweep (eight pairs won twice) takes one virtual pair of draws.
    let pairs = Encounter::pairs(
        0,
        1,
        Trinomial::from_wdl(16, 0, 0),
        Pentanomial::from_counts([0, 0, 0, 0, 8]),
    );
    let list = rate(&names(2), &[pairs], Anchor::MeanZero).unwrap();
    let los = line(&list, 0).los_next.unwrap();
    assert!((0.99..1.0).contains(&los), "{los}");
    // 17 of 18 points; the three empty buckets' 0.001 pairs move it by under an Elo.
    close(line(&list, 0).elo * 2.0, 400.0 * 17f64.log10(), 1.0);
}

/// A pairing whose every pair ended 1½–½ has no observed spread: its interval was the
/// regularization's alone (a few Elo from three pairs). It takes the prior as the match
/// statistics do, and the list stays the match.
#[test]
fn a_pairing_without_spread_takes_the_prior() {
    let p = Pentanomial::from_counts([0, 0, 0, 3, 0]);
    let t = Trinomial::from_wdl(3, 3, 0);
    let list = rate(&names(2), &[Encounter::pairs(0, 1, t, p)], Anchor::MeanZero).unwrap();
    let matched = estimate::elo(&Sample::from(p)).unwrap();
    let top = line(&list, 0);
    close(2.0 * top.elo, matched.elo, 1e-6);
    close(2.0 * top.half_width, matched.half_width, 1e-6);
    close(top.los_next.unwrap(), matched.los, 1e-12);
    assert!(matched.half_width > 50.0, "{matched:?}");
    assert!(!top.separated);
}

#[test]
fn a_perfect_score_is_finite_and_marked_separated() {
    // engine0 won all 100 games against engine1, which drew with engine2.
    let list = rate(
        &names(3),
        &[games(0, 1, 100, 0, 0), games(1, 2, 10, 20, 10)],
        Anchor::MeanZero,
    )
    .unwrap();
    let top = line(&list, 0);
    assert!(top.separated);
    assert!(!line(&list, 1).separated && !line(&list, 2).separated);
    // The prior puts 100 wins and 2 draws at 400·log10(101) = 801.7 Elo over engine1, which
    // stays level with engine2; the mean of all three is zero.
    close(top.elo - line(&list, 1).elo, 400.0 * 101f64.log10(), 0.2);
    close(line(&list, 1).elo, line(&list, 2).elo, 1e-6);
    close(list.engines.iter().map(|e| e.elo).sum::<f64>(), 0.0, 1e-6);
    assert!(top.half_width.is_finite() && top.half_width < 300.0);
    assert!(top.los_next.unwrap() > 0.999_999);

    // Every game lost, and a group that scored every point against another group.
    let list = rate(
        &names(4),
        &[
            games(0, 1, 5, 5, 5),
            games(2, 3, 3, 4, 3),
            games(0, 2, 20, 0, 0),
            games(1, 3, 10, 10, 0),
        ],
        Anchor::MeanZero,
    )
    .unwrap();
    // {0, 1} scored every point... except draws count: 1 vs 3 drew, so 3 scored against 1.
    assert!(list.engines.iter().all(|e| !e.separated));
    let list = rate(
        &names(4),
        &[
            games(0, 1, 5, 5, 5),
            games(2, 3, 3, 4, 3),
            games(0, 2, 20, 0, 0),
            games(1, 3, 10, 0, 0),
        ],
        Anchor::MeanZero,
    )
    .unwrap();
    // Two equal groups, one above the other by a margin the prior keeps finite: all four are
    // marked, and the mean is over all four.
    assert!(list.engines.iter().all(|e| e.separated));
    assert!(line(&list, 2).elo < -150.0 && line(&list, 0).elo > 150.0);
    close(list.engines.iter().map(|e| e.elo).sum::<f64>(), 0.0, 1e-6);
    assert!(list.engines.iter().all(|e| e.half_width < 400.0));
}

/// Issue 18, item 2: "mean rating 0" held only over the engines without a perfect score.
/// With the prior the mean holds over every engine, and scripts/rating-oracle.py (scipy, a
/// finite-difference Hessian, the virtual draws added to its data) agrees on every figure.
#[test]
fn a_sweep_in_a_list_agrees_with_the_scipy_oracle() {
    let names: Vec<String> = ["alpha", "bravo", "charlie", "delta"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let encounters = [
        games(0, 1, 10, 0, 0),
        games(1, 2, 12, 10, 8),
        games(2, 3, 9, 12, 9),
        games(1, 3, 15, 10, 5),
    ];
    let list = rate(&names, &encounters, Anchor::MeanZero).unwrap();
    let oracle = [
        ("alpha", 350.950916, 182.992523, Some(0.999667365)),
        ("bravo", -65.432528, 68.838579, Some(0.951352158)),
        ("charlie", -131.714407, 78.932079, Some(0.716775015)),
        ("delta", -153.803981, 78.095327, None),
    ];
    for (line, (name, elo, half_width, los)) in list.engines.iter().zip(oracle) {
        assert_eq!(line.name, name);
        close(line.elo, elo, 1e-4);
        close(line.half_width, half_width, 1e-4);
        match (line.los_next, los) {
            (Some(a), Some(b)) => close(a, b, 1e-7),
            (a, b) => assert_eq!(a, b),
        }
    }
    close(list.engines.iter().map(|e| e.elo).sum::<f64>(), 0.0, 1e-9);
    assert!(line(&list, 0).separated && !line(&list, 1).separated);
}

#[test]
fn groups_that_never_met_are_rated_apart() {
    let list = rate(
        &names(5),
        &[
            games(0, 1, 30, 40, 30),
            games(2, 3, 50, 30, 20),
            games(3, 4, 50, 30, 20),
        ],
        Anchor::Engine {
            engine: 1,
            elo: 1500.0,
        },
    )
    .unwrap();
    assert_eq!(list.groups, 2);
    // The anchor's group first, then the other, centred on the anchor's rating.
    let groups: Vec<usize> = list.engines.iter().map(|e| e.group).collect();
    assert_eq!(groups, [0, 0, 1, 1, 1]);
    close(line(&list, 0).elo, 1500.0, 1e-9);
    close(line(&list, 1).elo, 1500.0, 1e-9);
    let other: f64 = [2, 3, 4].iter().map(|&i| line(&list, i).elo).sum::<f64>() / 3.0;
    close(other, 1500.0, 1e-9);
    // No LOS across groups.
    assert!(list.engines[1].los_next.is_none());
    assert!(list.engines[4].los_next.is_none());
    assert!(list.engines[2].los_next.is_some());
}

#[test]
fn no_games_and_engines_without_games() {
    assert_eq!(
        rate(&names(1), &[], Anchor::MeanZero).unwrap_err(),
        StatsError::NoGames
    );
    assert_eq!(
        rate(&names(3), &[games(0, 1, 0, 0, 0)], Anchor::MeanZero).unwrap_err(),
        StatsError::NoGames
    );
    assert_eq!(
        rate(&[], &[], Anchor::MeanZero).unwrap_err(),
        StatsError::NoGames
    );
    // engine2 is listed but has not played: last, at the centre, no score, no LOS.
    let list = rate(
        &names(3),
        &[games(0, 1, 10, 10, 10)],
        Anchor::Engine {
            engine: 0,
            elo: 2000.0,
        },
    )
    .unwrap();
    let idle = list.engines.last().unwrap();
    assert_eq!(idle.engine, 2);
    assert_eq!((idle.elo, idle.half_width), (2000.0, 0.0));
    assert_eq!(
        (idle.score(), idle.draw_ratio(), idle.los_next),
        (None, None, None)
    );
    assert_eq!(list.groups, 1);
    assert_eq!(idle.group, 1);
}

#[test]
fn bad_input_is_an_error() {
    let two = names(2);
    assert_eq!(
        rate(&two, &[games(0, 2, 1, 1, 1)], Anchor::MeanZero).unwrap_err(),
        StatsError::UnknownEngine {
            index: 2,
            engines: 2
        }
    );
    assert_eq!(
        rate(
            &two,
            &[games(0, 1, 1, 1, 1)],
            Anchor::Engine {
                engine: 5,
                elo: 0.0
            }
        )
        .unwrap_err(),
        StatsError::UnknownEngine {
            index: 5,
            engines: 2
        }
    );
    assert!(matches!(
        rate(
            &two,
            &[games(0, 1, 1, 1, 1)],
            Anchor::Engine {
                engine: 0,
                elo: f64::NAN
            }
        ),
        Err(StatsError::NotFinite { name: "anchor", .. })
    ));
    assert_eq!(
        rate(&two, &[games(1, 1, 1, 1, 1)], Anchor::MeanZero).unwrap_err(),
        StatsError::SelfPairing { engine: 1 }
    );
    let wrong = Encounter::pairs(
        0,
        1,
        Trinomial::from_wdl(2, 0, 0),
        Pentanomial::from_counts([1, 0, 0, 0, 0]),
    );
    assert_eq!(
        rate(&two, &[wrong], Anchor::MeanZero).unwrap_err(),
        StatsError::PairsDisagree {
            first: 0,
            second: 1
        }
    );
    let huge = games(0, 1, u64::MAX, 1, 0);
    assert!(matches!(
        rate(&two, &[huge], Anchor::MeanZero),
        Err(StatsError::TooManyGames { .. })
    ));
}

#[test]
fn encounters_add_up_in_either_order() {
    let split = rate(
        &names(2),
        &[games(0, 1, 10, 5, 3), games(1, 0, 4, 6, 20)],
        Anchor::MeanZero,
    )
    .unwrap();
    let whole = rate(&names(2), &[games(0, 1, 30, 11, 7)], Anchor::MeanZero).unwrap();
    assert_eq!(split, whole);
}

/// A random tournament: up to six engines, random pairings with random counts (zeros too).
fn tournament() -> impl Strategy<Value = (usize, Vec<(usize, usize, [u64; 3])>)> {
    (2usize..=6).prop_flat_map(|n| {
        let encounter = (0..n, 1..n, prop::array::uniform3(0u64..60))
            .prop_map(move |(a, offset, counts)| (a, (a + offset) % n, counts));
        (Just(n), prop::collection::vec(encounter, 1..12))
    })
}

fn encounters(list: &[(usize, usize, [u64; 3])]) -> Vec<Encounter> {
    list.iter()
        .map(|&(a, b, [w, d, l])| games(a, b, w, d, l))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Any results give a list without NaN, infinities or panics.
    #[test]
    fn never_nan((n, list) in tournament()) {
        match rate(&names(n), &encounters(&list), Anchor::MeanZero) {
            Ok(rated) => {
                prop_assert_eq!(rated.engines.len(), n);
                for e in &rated.engines {
                    prop_assert!(e.elo.is_finite() && e.half_width.is_finite());
                    prop_assert!(e.half_width >= 0.0);
                    if let Some(los) = e.los_next {
                        prop_assert!((0.0..=1.0).contains(&los));
                    }
                }
            }
            Err(err) => prop_assert_eq!(err, StatsError::NoGames),
        }
    }

    /// Numbering the engines differently changes nothing but the numbers.
    #[test]
    fn permuting_engines((n, list) in tournament(), rotation in 1usize..6) {
        let base = match rate(&names(n), &encounters(&list), Anchor::MeanZero) {
            Ok(rated) => rated,
            Err(_) => return Ok(()),
        };
        let perm = |i: usize| (i + rotation) % n;
        let mut renamed = vec![String::new(); n];
        for (i, name) in names(n).into_iter().enumerate() {
            renamed[perm(i)] = name;
        }
        let moved: Vec<_> = list.iter().map(|&(a, b, c)| (perm(a), perm(b), c)).collect();
        let other = rate(&renamed, &encounters(&moved), Anchor::MeanZero).unwrap();
        for e in &base.engines {
            let o = other.engines.iter().find(|o| o.name == e.name).unwrap();
            // Separated engines' ratings sit far out on a flat likelihood: compare loosely.
            let tolerance = if e.separated { 1e-3 } else { 1e-6 };
            prop_assert!((e.elo - o.elo).abs() < tolerance * (1.0 + e.elo.abs()), "{} vs {}", e.elo, o.elo);
            prop_assert!((e.half_width - o.half_width).abs() < tolerance * (1.0 + e.half_width));
            prop_assert_eq!(e.results, o.results);
        }
    }

    /// Moving the anchor's rating moves every rating by the same amount; intervals stay.
    #[test]
    fn anchor_shift((n, list) in tournament(), shift in -3000.0f64..3000.0) {
        let anchored = |elo| rate(&names(n), &encounters(&list), Anchor::Engine { engine: list[0].0, elo });
        let (Ok(a), Ok(b)) = (anchored(0.0), anchored(shift)) else { return Ok(()) };
        for (x, y) in a.engines.iter().zip(&b.engines) {
            prop_assert_eq!(x.engine, y.engine);
            prop_assert!((x.elo + shift - y.elo).abs() < 1e-9 * (1.0 + y.elo.abs()));
            prop_assert_eq!(x.half_width, y.half_width);
            prop_assert_eq!(x.los_next, y.los_next);
        }
    }

    /// A cycle in which each engine beats the next by the same counts, and every other
    /// pairing is even, leaves all engines equal.
    #[test]
    fn symmetric_results_give_equal_ratings(n in 2usize..7, w in 0u64..40, d in 0u64..40, l in 0u64..40, even in 0u64..20) {
        prop_assume!(w + d + l > 0);
        let mut list = Vec::new();
        for i in 0..n {
            let j = (i + 1) % n;
            if n == 2 && i == 1 {
                // Two engines: the "cycle" is one pairing played both ways.
                list.push(games(i, j, w, d, l));
                break;
            }
            list.push(games(i, j, w, d, l));
            for k in i + 2..n {
                if (k + 1) % n != i {
                    list.push(games(i, k, even, 2 * even, even));
                }
            }
        }
        let rated = rate(&names(n), &list, Anchor::MeanZero).unwrap();
        let first = rated.engines[0].elo;
        for e in &rated.engines {
            prop_assert!((e.elo - first).abs() < 1e-6, "{:?}", rated.engines);
            prop_assert!(e.elo.abs() < 1e-6);
        }
    }

    /// Two engines: the list is the match, for any counts away from fishtest's clamp.
    #[test]
    fn two_engines_match_elo(w in 0u64..3000, d in 0u64..3000, l in 0u64..3000) {
        prop_assume!(w + d + l > 0);
        let t = Trinomial::from_wdl(w, d, l);
        let matched = estimate::elo(&Sample::from(t)).unwrap();
        prop_assume!(matched.elo.abs() < 1190.0);
        check_two_engines(Sample::from(t), t, None);
    }
}
