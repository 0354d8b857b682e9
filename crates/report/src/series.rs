//! The numbers each chart draws, computed from a run's data by the statistics crate: plain
//! vectors that the charts, the JSON document and the tests share.

use std::collections::BTreeMap;

use arbiter_stats::{estimate, Sample, Sprt, SprtState, StatsError};
use arbiter_store::{CommittedPair, Totals};
use serde::Serialize;

use crate::data::{GameFacts, RunData};
use crate::time::{Budget, EngineTimes};

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
        let status = sprt.status(&Sample::of_run(paired, totals.wdl(), totals.pentanomial))?;
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

/// The SPRT's path over a run judged on its prefix ([`JudgedOn::Prefix`]): the pairs in
/// schedule order (unit u is pair u / P of pairing u % P, with P `pairings`) from the first,
/// while none is missing, up to the one after which the test decided, the rule the run's
/// verdict was reached by. The points count units of the prefix. Returns the path and the
/// totals the verdict rests on.
///
/// [`JudgedOn::Prefix`]: arbiter_store::JudgedOn::Prefix
pub fn prefix_path(
    sprt: &Sprt,
    pairs: &[CommittedPair],
    pairings: u64,
    paired: bool,
) -> Result<(LlrPath, Totals), StatsError> {
    let pairings = pairings.max(1);
    let unit = |pair: &CommittedPair| pair.key.index * pairings + u64::from(pair.key.pairing);
    let mut in_order: Vec<&CommittedPair> = pairs.iter().collect();
    in_order.sort_by_key(|pair| unit(pair));
    let bounds = sprt.wald_bounds();
    let mut totals = Totals::default();
    let mut points = Vec::new();
    let mut decision = None;
    for (expected, pair) in (0u64..).zip(in_order) {
        if unit(pair) != expected {
            break;
        }
        totals.add(pair.tally);
        let status = sprt.status(&Sample::of_run(paired, totals.wdl(), totals.pentanomial))?;
        let units = expected + 1;
        points.push(LlrPoint {
            pairs: units,
            llr: status.llr,
        });
        if status.state != SprtState::Continue {
            decision = Some(Decision {
                pairs: units,
                llr: status.llr,
                state: status.state.as_str(),
            });
            break;
        }
    }
    Ok((
        LlrPath {
            points,
            lower_bound: bounds.lower,
            upper_bound: bounds.upper,
            decision,
        },
        totals,
    ))
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
        if let Ok(e) = estimate::elo(&Sample::of_run(paired, totals.wdl(), totals.pentanomial)) {
            let (lower, upper) = e.interval();
            points.push(EloPoint {
                games: totals.games(),
                elo: e.elo,
                lower,
                upper,
            });
        }
    }
    points
}

/// The SPRT-aware Elo of a run the SPRT stopped: median-unbiased where the plain estimate leans
/// toward the bound that stopped the test (statistics.md section 7, fishtest's `SPRT_elo`).
/// Logistic Elo, as the plain `elo` beside it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SprtEstimate {
    /// The games and pairs it is computed from: the sample the verdict was judged on (the
    /// run's totals, or the prefix in schedule order for a run judged on its prefix), since the
    /// correction for the stopping rule holds for the sample the walk stopped on.
    pub games: u64,
    pub pairs: u64,
    pub elo: f64,
    /// Its 95% interval.
    pub elo_ci: [f64; 2],
    pub los: f64,
    /// The LLR lay more than 3% beyond a bound (pairs committed after the decision): the
    /// estimate treats the walk as stopped on the bound.
    pub clamped: bool,
}

/// The SPRT-aware estimate of `judged`, the totals the SPRT's verdict was reached on, under
/// `sprt`. Pairs committed after the decision on a run judged on all its pairs are part of
/// them; `clamped` says so when they carried the LLR well past the bound.
pub fn sprt_estimate(
    sprt: &Sprt,
    totals: &Totals,
    paired: bool,
) -> Result<SprtEstimate, StatsError> {
    let e = sprt.elo_estimate(&Sample::of_run(paired, totals.wdl(), totals.pentanomial))?;
    Ok(SprtEstimate {
        games: totals.games(),
        pairs: totals.pairs,
        elo: e.elo,
        elo_ci: [e.interval.0, e.interval.1],
        los: e.los,
        clamped: e.clamped,
    })
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

/// One opening's pairs in one pairing, from the pairing's first engine's side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpeningResult {
    pub opening: String,
    /// The pairing's engines: `points` are `first`'s.
    pub first: String,
    pub second: String,
    /// Complete pairs (both games) played from it.
    pub pairs: u64,
    /// `first`'s points over those pairs' games.
    pub points: f64,
    /// Pairs one engine won with both colours: the line, not the colour, decided them.
    pub lopsided: u64,
}

/// Per-opening results over complete pairs (both colours of a pair together), one for each
/// pairing that played the opening (a tournament's pairings are scored each from its own first
/// engine's side, so they are not added up), the most lopsided lines first: those with the most
/// pairs won twice by the same engine, then the furthest from an even score, then in book
/// order ([`book_order`]). An unpaired run has none: its two games of a unit are two different
/// openings, and a single game says nothing of a line's balance.
pub fn openings(data: &RunData) -> Vec<OpeningResult> {
    if !data.paired {
        return Vec::new();
    }
    let mut by_opening: BTreeMap<(u32, &str), OpeningResult> = BTreeMap::new();
    for ((pairing, _), games) in data.games_by_pair() {
        let Some((first, second)) = data.pairing_names(pairing) else {
            continue;
        };
        let [a, b] = games.as_slice() else {
            continue;
        };
        let (Some(pa), Some(pb)) = (a.points_of(first), b.points_of(first)) else {
            continue;
        };
        let entry = by_opening
            .entry((pairing, a.opening.as_str()))
            .or_insert_with(|| OpeningResult {
                opening: a.opening.clone(),
                first: first.to_owned(),
                second: second.to_owned(),
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
            .then_with(|| book_order(&a.opening, &b.opening))
            .then_with(|| (&a.first, &a.second).cmp(&(&b.first, &b.second)))
    });
    results
}

/// Book lines in the book's order: by file, then by line number (`quick.epd:3` before
/// `quick.epd:10`, which text order puts first); any other run of digits (`#12`, a file's
/// number) also compares as a number.
pub fn book_order(a: &str, b: &str) -> std::cmp::Ordering {
    /// The text as runs of digits (as numbers) and runs of anything else.
    fn chunks(text: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = text;
        std::iter::from_fn(move || {
            let digits = rest.chars().next()?.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digits)
                .unwrap_or(rest.len());
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some((digits, chunk))
        })
    }
    let mut left = chunks(a);
    let mut right = chunks(b);
    loop {
        let order = match (left.next(), right.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some((true, x)), Some((true, y))) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            (Some((_, x)), Some((_, y))) => x.cmp(y),
        };
        if order.is_ne() {
            return order;
        }
    }
}

/// An engine's median time per move and clock left at one of its move numbers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MoveTimePoint {
    /// The engine's own move out of book, from 1.
    pub move_number: u32,
    /// Moves it made at that number (one per game that lasted so long).
    pub moves: u64,
    pub median_ms: f64,
    /// None where it had no clock.
    pub median_clock_ms: Option<f64>,
}

/// One engine's time used per move against the clock it had left.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveTimes {
    pub engine: String,
    /// Engine moves summarized (every point's `moves` together).
    pub moves: u64,
    pub budget: Option<Budget>,
    pub points: Vec<MoveTimePoint>,
}

/// Each engine's median time per move and clock left by move number, in the run's engine order;
/// empty when no move had a clock (records from before clocks were kept, nodes- or depth-limited
/// runs), where the chart would say nothing about time trouble.
pub fn move_times(
    engines: &[String],
    times: &BTreeMap<String, EngineTimes>,
    budgets: &BTreeMap<String, Budget>,
) -> Vec<MoveTimes> {
    if times.values().all(|t| t.clocked_moves() == 0) {
        return Vec::new();
    }
    in_order(engines, times)
        .map(|(engine, t)| MoveTimes {
            engine: engine.to_owned(),
            moves: t.moves(),
            budget: budgets.get(engine).copied(),
            points: (1..)
                .zip(&t.by_move)
                .filter_map(|(move_number, (used, clock))| {
                    Some(MoveTimePoint {
                        move_number,
                        moves: used.count(),
                        median_ms: used.quantile(0.5)?,
                        median_clock_ms: clock.quantile(0.5),
                    })
                })
                .collect(),
        })
        .collect()
}

/// The engines of `engines` that have times, in that order, then any others by name.
fn in_order<'a>(
    engines: &'a [String],
    times: &'a BTreeMap<String, EngineTimes>,
) -> impl Iterator<Item = (&'a str, &'a EngineTimes)> {
    let listed = engines
        .iter()
        .filter_map(|e| times.get_key_value(e))
        .map(|(e, t)| (e.as_str(), t));
    let others = times
        .iter()
        .filter(|(e, _)| !engines.contains(e))
        .map(|(e, t)| (e.as_str(), t));
    listed.chain(others)
}

/// The spread of one engine's latency beyond its search: what the runner measured from `go` to
/// `bestmove` minus the search time the engine reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencySpread {
    pub engine: String,
    /// Moves with a reported search time.
    pub moves: u64,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Each engine's latency percentiles, for the engines that reported their search time.
pub fn latency(engines: &[String], times: &BTreeMap<String, EngineTimes>) -> Vec<LatencySpread> {
    in_order(engines, times)
        .filter_map(|(engine, t)| {
            let d = &t.latency;
            Some(LatencySpread {
                engine: engine.to_owned(),
                moves: d.count(),
                median_ms: d.quantile(0.5)?,
                p90_ms: d.quantile(0.9)?,
                p99_ms: d.quantile(0.99)?,
                max_ms: d.max()?,
            })
        })
        .collect()
}

/// A clock below this share of its base is time trouble.
pub const TIME_TROUBLE: f64 = 0.1;

/// One engine's brushes with the clock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeTrouble {
    pub engine: String,
    pub games: u64,
    /// Games in which its clock fell below [`TIME_TROUBLE`] of its base after some move.
    pub in_trouble: u64,
    /// Games it lost (or drew) on time: its flag fell.
    pub forfeits: u64,
}

/// Time trouble and time forfeits per engine, in the run's engine order; empty when no game
/// had a clock and none was forfeited on time.
pub fn time_trouble(
    engines: &[String],
    games: &[GameFacts],
    budgets: &BTreeMap<String, Budget>,
) -> Vec<TimeTrouble> {
    let clocked = games
        .iter()
        .any(|g| g.lowest_clock_ms.iter().any(Option::is_some));
    if !clocked && games.iter().all(|g| g.flagged.is_none()) {
        return Vec::new();
    }
    let mut rows: Vec<TimeTrouble> = engines
        .iter()
        .map(|engine| TimeTrouble {
            engine: engine.clone(),
            games: 0,
            in_trouble: 0,
            forfeits: 0,
        })
        .collect();
    for game in games {
        for (side, name) in [&game.white, &game.black].into_iter().enumerate() {
            let Some(row) = rows.iter_mut().find(|r| &r.engine == name) else {
                continue;
            };
            row.games += 1;
            let threshold = budgets.get(name).map(|b| TIME_TROUBLE * b.base_ms);
            if let (Some(lowest), Some(threshold)) = (game.lowest_clock_ms[side], threshold) {
                row.in_trouble += u64::from((lowest as f64) < threshold);
            }
            row.forfeits += u64::from(game.flagged.as_ref() == Some(name));
        }
    }
    rows
}

/// A move that lost on time, and whether the engine's search or what lay around it overran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeLoss {
    /// The game's number in the run.
    pub game: u64,
    /// The engine whose flag fell.
    pub engine: String,
    /// What the runner measured, from `go` to `bestmove` (or to the flag when none came).
    pub move_ms: f64,
    /// The search time the engine reported; none if it reported none (or never answered).
    pub engine_ms: Option<u64>,
    /// Its clock after the move, below zero; none under a time per move.
    pub clock_ms: Option<i64>,
    pub cause: TimeLossCause,
}

/// Where a time loss's time went, told by the search time the engine reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeLossCause {
    /// The search time the engine reported was already more than its clock held: its time
    /// management's fault.
    Search,
    /// Its last reported search time fit, and the overrun came after it: the engine's I/O, a
    /// hang, scheduling, a loaded machine.
    AfterSearch,
    /// No search time to tell by.
    Unknown,
}

impl TimeLossCause {
    /// The words the report's table shows.
    pub fn describe(self) -> &'static str {
        match self {
            TimeLossCause::Search => "its reported search alone overran the clock",
            TimeLossCause::AfterSearch => "the overrun came after its last reported search time",
            TimeLossCause::Unknown => "no search time reported",
        }
    }
}

/// Every time forfeit whose record holds the flagged move, in game order.
pub fn time_losses(games: &[GameFacts]) -> Vec<TimeLoss> {
    let mut losses: Vec<TimeLoss> = games
        .iter()
        .filter_map(|g| {
            let m = g.flagged_move?;
            // The move was not in time, so no increment came: the clock before it is the clock
            // after plus the move.
            let had_ms = m.clock_ms.map(|c| c as f64 + m.ms);
            let cause = match (m.engine_ms, had_ms) {
                (Some(search), Some(had)) if search as f64 > had => TimeLossCause::Search,
                (Some(_), Some(_)) => TimeLossCause::AfterSearch,
                _ => TimeLossCause::Unknown,
            };
            Some(TimeLoss {
                game: g.number,
                engine: g.flagged.clone()?,
                move_ms: m.ms,
                engine_ms: m.engine_ms,
                clock_ms: m.clock_ms,
                cause,
            })
        })
        .collect();
    losses.sort_by_key(|l| l.game);
    losses
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_records::entries::MoveTime;
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

    /// The prefix is walked in schedule order whatever the commit order, and stops at the
    /// first missing pair: its points are those of the all-pairs path over the same pairs
    /// committed in order, up to the gap.
    #[test]
    fn the_prefix_path_walks_schedule_order_up_to_the_first_gap() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 5.0, EloModel::Normalized).unwrap();
        let in_order = sample_pairs();
        let in_order_path = llr_path(&sprt, &in_order, true).unwrap();
        // Committed out of order, and pair 5 (index 5) missing.
        let mut shuffled: Vec<CommittedPair> =
            [3, 0, 7, 1, 2, 6, 4].iter().map(|&i| in_order[i]).collect();
        for (sequence, pair) in (1..).zip(&mut shuffled) {
            pair.sequence = sequence;
        }
        let (path, judged) = prefix_path(&sprt, &shuffled, 1, true).unwrap();
        assert_eq!(path.points, in_order_path.points[..5]);
        assert_eq!(path.decision, None);
        let mut expected = Totals::default();
        in_order[..5].iter().for_each(|p| expected.add(p.tally));
        assert_eq!(judged, expected);
        // All-pairs over the same commits would have judged on seven pairs.
        assert_eq!(llr_path(&sprt, &shuffled, true).unwrap().points.len(), 7);
    }

    /// The prefix stops at the decision: pairs committed after it are not its evidence.
    #[test]
    fn the_prefix_path_stops_at_the_decision() {
        let sprt = Sprt::new(0.45, 0.45, -50.0, 50.0, EloModel::Logistic).unwrap();
        let pairs = sample_pairs();
        let decided = llr_path(&sprt, &pairs, true).unwrap().decision.unwrap();
        let (path, judged) = prefix_path(&sprt, &pairs, 1, true).unwrap();
        assert_eq!(path.decision, Some(decided));
        assert_eq!(path.points.len() as u64, decided.pairs);
        assert_eq!(judged.pairs, decided.pairs);
        assert!(
            decided.pairs < pairs.len() as u64,
            "the test needs pairs after it"
        );
    }

    /// Two pairings: unit u is pair u / 2 of pairing u % 2.
    #[test]
    fn the_prefix_orders_units_across_pairings() {
        let sprt = Sprt::new(0.05, 0.05, 0.0, 5.0, EloModel::Normalized).unwrap();
        let mut pairs = sample_pairs();
        for (n, pair) in pairs.iter_mut().enumerate() {
            pair.key = PairKey {
                pairing: (n % 2) as u32,
                index: n as u64 / 2,
            };
        }
        pairs.reverse();
        let (path, _) = prefix_path(&sprt, &pairs, 2, true).unwrap();
        let in_order_path = llr_path(&sprt, &sample_pairs(), true).unwrap();
        assert_eq!(path.points, in_order_path.points);
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
            number: 1,
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
            lowest_clock_ms: [None, None],
            flagged: None,
            flagged_move: None,
        }
    }

    /// Book lines sort by file, then by line number, as an independent reading of `file:line`
    /// orders them; `quick.epd:10` was put before `quick.epd:3`.
    #[test]
    fn book_lines_sort_by_file_then_line_number() {
        let mut lines = vec![
            "quick.epd:10",
            "quick.epd:3",
            "a.epd:20",
            "quick.epd:1",
            "a.epd:2",
        ];
        lines.sort_by(|a, b| book_order(a, b));
        assert_eq!(
            lines,
            [
                "a.epd:2",
                "a.epd:20",
                "quick.epd:1",
                "quick.epd:3",
                "quick.epd:10"
            ]
        );
        let key = |name: &str| {
            let (file, line) = name.rsplit_once(':').unwrap();
            (file.to_owned(), line.parse::<u64>().unwrap())
        };
        let names: Vec<String> = ["book.epd", "quick.epd", "uho.epd"]
            .iter()
            .flat_map(|file| {
                (0..120)
                    .step_by(7)
                    .map(move |line| format!("{file}:{line}"))
            })
            .collect();
        for a in &names {
            for b in &names {
                assert_eq!(book_order(a, b), key(a).cmp(&key(b)), "{a} {b}");
            }
        }
        assert!(book_order("#9", "#12").is_lt());
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

    fn budgets(base_ms: f64) -> BTreeMap<String, Budget> {
        ["a", "b"]
            .map(|e| {
                let budget = Budget {
                    base_ms,
                    increment_ms: 50.0,
                    moves: None,
                };
                (e.to_owned(), budget)
            })
            .into_iter()
            .collect()
    }

    /// Base 1000 ms: trouble is a clock under 100 ms. Counted by hand: `a` is under it in games
    /// 1 and 3 (as White, then as Black), `b` in game 2 and flagged in game 3.
    #[test]
    fn time_trouble_and_forfeits_are_counted_per_engine() {
        let engines = ["a".to_owned(), "b".to_owned()];
        let mut games = Vec::new();
        for (white, black, lowest, flagged) in [
            ("a", "b", [Some(99), Some(100)], None),
            ("b", "a", [Some(-5), Some(500)], None),
            ("b", "a", [Some(700), Some(0)], Some("b")),
            ("a", "b", [None, None], None),
        ] {
            let mut g = game(
                40,
                if flagged.is_some() {
                    "time forfeit"
                } else {
                    "normal"
                },
            );
            g.white = white.into();
            g.black = black.into();
            g.lowest_clock_ms = lowest;
            g.flagged = flagged.map(str::to_owned);
            games.push(g);
        }
        let rows = time_trouble(&engines, &games, &budgets(1000.0));
        let counts: Vec<(&str, u64, u64, u64)> = rows
            .iter()
            .map(|r| (r.engine.as_str(), r.games, r.in_trouble, r.forfeits))
            .collect();
        assert_eq!(counts, [("a", 4, 2, 0), ("b", 4, 1, 1)]);
        for g in &mut games {
            g.lowest_clock_ms = [None, None];
            g.flagged = None;
        }
        assert!(time_trouble(&engines, &games, &budgets(1000.0)).is_empty());
    }

    /// Clock before the flagged move = clock after + its time (no increment came). Game 3's
    /// engine searched 1200 ms of the 1050 it had: its own overrun. Game 1's searched 100 of
    /// 1050 and the move took 1100: the time around the search. Game 2 reported no search.
    #[test]
    fn time_losses_say_whether_the_search_overran() {
        let lost = |number, engine: &str, engine_ms| {
            let mut g = game(40, "time forfeit");
            g.number = number;
            g.flagged = Some(engine.to_owned());
            g.flagged_move = Some(MoveTime {
                ms: 1100.0,
                engine_ms,
                clock_ms: Some(-50),
            });
            g
        };
        let games = [
            lost(3, "a", Some(1200)),
            game(40, "normal"),
            lost(1, "b", Some(100)),
            lost(2, "a", None),
        ];
        let losses = time_losses(&games);
        let got: Vec<(u64, &str, TimeLossCause)> = losses
            .iter()
            .map(|l| (l.game, l.engine.as_str(), l.cause))
            .collect();
        assert_eq!(
            got,
            [
                (1, "b", TimeLossCause::AfterSearch),
                (2, "a", TimeLossCause::Unknown),
                (3, "a", TimeLossCause::Search)
            ]
        );
        assert_eq!(losses[0].clock_ms, Some(-50));
    }

    /// Three games of `a`'s: its first move took 10, 20, 30 ms (median 20) with 900, 800, 700
    /// left (median 800); its second move only in one game. Latency: 1, 2, 3 and 40 ms.
    #[test]
    fn move_times_and_latency_follow_the_moves() {
        let mut times = BTreeMap::new();
        let a: &mut EngineTimes = times.entry("a".to_owned()).or_default();
        a.by_move.resize_with(2, Default::default);
        for (used, left) in [(10.0, 900.0), (20.0, 800.0), (30.0, 700.0)] {
            a.by_move[0].0.add(used);
            a.by_move[0].1.add(left);
        }
        a.by_move[1].0.add(5.0);
        for l in [1.0, 2.0, 3.0, 40.0] {
            a.latency.add(l);
        }
        let engines = ["a".to_owned(), "b".to_owned()];
        let lines = move_times(&engines, &times, &budgets(1000.0));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].moves, 4);
        let close = |got: f64, want: f64| (got / want - 1.0).abs() < 0.06;
        let p = &lines[0].points;
        assert_eq!((p[0].move_number, p[0].moves, p[1].moves), (1, 3, 1));
        assert!(close(p[0].median_ms, 20.0) && close(p[0].median_clock_ms.unwrap(), 800.0));
        assert_eq!(p[1].median_clock_ms, None);
        let spread = latency(&engines, &times);
        assert_eq!(spread.len(), 1);
        let s = &spread[0];
        assert_eq!((s.moves, s.max_ms), (4, 40.0));
        assert!(close(s.median_ms, 2.0) && close(s.p90_ms, 40.0) && close(s.p99_ms, 40.0));
        // Without any clock there is nothing to say about time trouble.
        times.get_mut("a").unwrap().by_move[0].1 = Default::default();
        assert!(move_times(&engines, &times, &budgets(1000.0)).is_empty());
    }
}
