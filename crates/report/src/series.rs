//! The numbers each chart draws, computed from a run's data by the statistics crate: plain
//! vectors that the charts, the JSON document and the tests share.

use std::collections::BTreeMap;

use arbiter_runner::tournament::sample;
use arbiter_stats::{estimate, Sprt, SprtState, StatsError};
use arbiter_store::{CommittedPair, Totals};
use serde::Serialize;

use crate::data::{GameFacts, RunData};

/// The LLR after one committed pair.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LlrPoint {
    /// Pairs committed so far (the pair's `sequence`).
    pub pairs: u64,
    pub llr: f64,
}

/// The SPRT's path as fishtest draws it: one point per committed pair, both Wald bounds, and
/// where (if anywhere) the test decided.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlrPath {
    pub points: Vec<LlrPoint>,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// The first pair after which the LLR was beyond a bound, and the hypothesis accepted.
    pub decision: Option<Decision>,
}

/// Where the SPRT stopped.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Decision {
    pub pairs: u64,
    pub llr: f64,
    /// `H0` or `H1`.
    pub state: &'static str,
}

/// The LLR after each pair of `pairs` (in commit order), recomputed from the cumulative counts
/// with [`Sprt::status`] as the runner does after each commit: the path the run took, never a
/// resampling of it.
pub fn llr_path(sprt: &Sprt, pairs: &[CommittedPair], paired: bool) -> Result<LlrPath, StatsError> {
    let bounds = sprt.wald_bounds();
    let mut totals = Totals::default();
    let mut points = Vec::with_capacity(pairs.len());
    let mut decision = None;
    for pair in pairs {
        totals.add(pair.tally);
        let status = sprt.status(&sample(&totals, paired))?;
        points.push(LlrPoint {
            pairs: pair.sequence,
            llr: status.llr,
        });
        if decision.is_none() && status.state != SprtState::Continue {
            decision = Some(Decision {
                pairs: pair.sequence,
                llr: status.llr,
                state: status.state.as_str(),
            });
        }
    }
    Ok(LlrPath {
        points,
        lower_bound: bounds.lower,
        upper_bound: bounds.upper,
        decision,
    })
}

/// Elo and its 95% interval after some games.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EloPoint {
    pub games: u64,
    pub elo: f64,
    pub lower: f64,
    pub upper: f64,
}

/// The first engine's Elo with its 95% interval after each committed pair (cumulative), on the
/// run's model. Points where no estimate exists yet (the statistics refuse the sample) are left
/// out rather than drawn as zero.
pub fn elo_path(pairs: &[CommittedPair], paired: bool) -> Vec<EloPoint> {
    let mut totals = Totals::default();
    let mut points = Vec::with_capacity(pairs.len());
    for pair in pairs {
        totals.add(pair.tally);
        if let Ok(e) = estimate::elo(&sample(&totals, paired)) {
            let (lower, upper) = e.interval();
            points.push(EloPoint {
                games: totals.wins + totals.draws + totals.losses,
                elo: e.elo,
                lower,
                upper,
            });
        }
    }
    points
}

/// Games per termination (`normal`, `adjudication`, `time forfeit` ...), most frequent first.
pub fn terminations(games: &[GameFacts]) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for game in games {
        *counts.entry(game.termination.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(String, u64)> =
        counts.into_iter().map(|(t, n)| (t.to_owned(), n)).collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

/// One bar of a histogram: games with `start <= plies < end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bin {
    pub start: u32,
    pub end: u32,
    pub games: u64,
}

/// Game lengths in plies, in bins of `width` from 0 to the longest game.
pub fn plies_histogram(games: &[GameFacts], width: u32) -> Vec<Bin> {
    let width = width.max(1);
    let Some(longest) = games.iter().map(|g| g.plies).max() else {
        return Vec::new();
    };
    let mut bins: Vec<Bin> = (0..=longest / width)
        .map(|i| Bin {
            start: i * width,
            end: (i + 1) * width,
            games: 0,
        })
        .collect();
    for game in games {
        bins[(game.plies / width) as usize].games += 1;
    }
    bins
}

/// A bin width that gives about 30 bars for games up to `longest` plies, in steps of 2 (a
/// whole move).
pub fn plies_bin_width(longest: u32) -> u32 {
    (longest.div_ceil(30).div_ceil(2) * 2).max(2)
}

/// One opening's pairs, from each pairing's first engine's side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpeningResult {
    pub opening: String,
    /// Complete pairs (both games) played from it.
    pub pairs: u64,
    /// The first engines' points over those pairs' games.
    pub points: f64,
    /// Pairs one engine won with both colours: the line, not the colour, decided them.
    pub lopsided: u64,
}

/// Per-opening results over complete pairs (both colours of a pair together), the most
/// lopsided lines first: those with the most pairs won twice by the same engine, then the
/// furthest from an even score.
pub fn openings(data: &RunData) -> Vec<OpeningResult> {
    let mut by_opening: BTreeMap<&str, OpeningResult> = BTreeMap::new();
    for ((pairing, _), games) in data.games_by_pair() {
        let Some((first, _)) = data.pairing_names(pairing) else {
            continue;
        };
        let [a, b] = games.as_slice() else {
            continue;
        };
        let (Some(pa), Some(pb)) = (a.points_of(first), b.points_of(first)) else {
            continue;
        };
        let entry = by_opening
            .entry(a.opening.as_str())
            .or_insert_with(|| OpeningResult {
                opening: a.opening.clone(),
                pairs: 0,
                points: 0.0,
                lopsided: 0,
            });
        entry.pairs += 1;
        entry.points += pa + pb;
        if pa == pb && pa != 0.5 {
            entry.lopsided += 1;
        }
    }
    let mut results: Vec<OpeningResult> = by_opening.into_values().collect();
    let imbalance = |r: &OpeningResult| (r.points / (2.0 * r.pairs as f64) - 0.5).abs();
    results.sort_by(|a, b| {
        b.lopsided
            .cmp(&a.lopsided)
            .then_with(|| imbalance(b).total_cmp(&imbalance(a)))
            .then_with(|| a.opening.cmp(&b.opening))
    });
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_stats::{EloModel, Pentanomial, Sample};
    use arbiter_store::{GameResult, PairKey, PairTally};
    use std::time::SystemTime;

    /// A pair from the first engine's half points in its two games.
    fn pair(sequence: u64, halves: [u8; 2]) -> CommittedPair {
        let count = |h| halves.iter().filter(|&&x| x == h).count() as u8;
        CommittedPair {
            key: PairKey {
                pairing: 0,
                index: sequence - 1,
            },
            sequence,
            tally: PairTally {
                wins: count(2),
                draws: count(1),
                losses: count(0),
                penta: halves[0] + halves[1],
            },
            committed_at: SystemTime::UNIX_EPOCH,
        }
    }

    fn sample_pairs() -> Vec<CommittedPair> {
        let halves = [
            [2, 1],
            [1, 1],
            [2, 2],
            [0, 1],
            [2, 0],
            [2, 2],
            [1, 2],
            [2, 2],
        ];
        (1..).zip(halves).map(|(n, h)| pair(n, h)).collect()
    }

    /// Each point is the LLR of the pentanomial counts of the pairs so far, counted here by
    /// hand from the buckets rather than by the store's `Totals`.
    #[test]
    fn the_llr_path_has_one_point_per_pair_with_the_counts_so_far() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 5.0, EloModel::Normalized).unwrap();
        let pairs = sample_pairs();
        let path = llr_path(&sprt, &pairs, true).unwrap();
        assert_eq!(path.points.len(), pairs.len());
        let mut counts = [0u64; 5];
        for (pair, point) in pairs.iter().zip(&path.points) {
            counts[pair.tally.penta as usize] += 1;
            let expected = sprt
                .llr(&Sample::from(Pentanomial::from_counts(counts)))
                .unwrap();
            assert_eq!(point.pairs, pair.sequence);
            assert!(
                (point.llr - expected).abs() < 1e-12,
                "{point:?} vs {expected}"
            );
        }
        let bounds = sprt.wald_bounds();
        assert_eq!(
            (path.lower_bound, path.upper_bound),
            (bounds.lower, bounds.upper)
        );
        assert!(bounds.lower < 0.0 && bounds.upper > 0.0);
    }

    /// Bounds this narrow are crossed within the sample: the decision is the first crossing.
    #[test]
    fn the_decision_is_the_first_pair_beyond_a_bound() {
        let sprt = Sprt::new(0.45, 0.45, -50.0, 50.0, EloModel::Logistic).unwrap();
        let path = llr_path(&sprt, &sample_pairs(), true).unwrap();
        let upper = path.upper_bound;
        let first = path
            .points
            .iter()
            .find(|p| p.llr >= upper)
            .expect("a crossing");
        let decision = path.decision.expect("decided");
        assert_eq!((decision.pairs, decision.state), (first.pairs, "H1"));
    }

    #[test]
    fn the_elo_path_follows_the_cumulative_games() {
        let pairs = sample_pairs();
        let path = elo_path(&pairs, true);
        assert_eq!(path.len(), pairs.len());
        let mut counts = [0u64; 5];
        for (pair, point) in pairs.iter().zip(&path) {
            counts[pair.tally.penta as usize] += 1;
            let e = estimate::elo(&Sample::from(Pentanomial::from_counts(counts))).unwrap();
            assert_eq!(point.games, 2 * pair.sequence);
            assert_eq!(point.elo, e.elo);
            assert!(point.lower < point.elo && point.elo < point.upper);
        }
    }

    fn game(plies: u32, termination: &str) -> GameFacts {
        GameFacts {
            pairing: 0,
            pair_index: 0,
            game_index: 0,
            white: "a".into(),
            black: "b".into(),
            result: GameResult::Draw,
            termination: termination.into(),
            plies,
            opening: "book.epd:1".into(),
            engine_moves: 0,
            move_ms_total: 0.0,
        }
    }

    #[test]
    fn histograms_count_every_game_once() {
        let games: Vec<GameFacts> = [0, 9, 10, 19, 20, 95]
            .into_iter()
            .map(|p| game(p, "normal"))
            .collect();
        let bins = plies_histogram(&games, 10);
        assert_eq!(bins.len(), 10);
        let counts: Vec<u64> = bins.iter().map(|b| b.games).collect();
        assert_eq!(counts, [2, 2, 1, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(plies_bin_width(300), 10);
        assert!(plies_histogram(&[], 10).is_empty());
        let mut games = games;
        games.push(game(50, "time forfeit"));
        assert_eq!(
            terminations(&games),
            [("normal".to_owned(), 6), ("time forfeit".to_owned(), 1)]
        );
    }
}
