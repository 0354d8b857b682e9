//! The typed records a run writes: one per finished game, one per committed pair and one summary
//! per run. The JSON-lines file, the store's JSON column, the report and (later) the HTTP API all
//! use these structs, so a field is named and typed once; `schema` lets a reader tell the
//! versions apart.

use serde::{Deserialize, Serialize};

/// The version of the records' layout. Readers refuse what they do not know.
pub const SCHEMA: u32 = 1;

/// One finished game (`"type": "game"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameEntry {
    pub schema: u32,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    /// The game's number in the run, from 1.
    pub game: u64,
    /// The unit of two games it belongs to (the colour-swapped pair), from 0, numbered across
    /// the run's pairings in schedule order (in a match, the pair's index).
    pub pair: u64,
    pub white: String,
    pub black: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// PGN's `Termination`: `normal`, `adjudication`, `time forfeit`, ...
    pub termination: String,
    /// cutechess's words: `White mates`, `Draw by adjudication`, ...
    pub reason: String,
    pub plies: usize,
    /// Where the opening came from: `book.epd:12`, `odds:knight`, `startpos`.
    pub opening: String,
    pub fen: String,
    /// Every move in UCI notation, book moves first, separated by spaces.
    pub moves: String,
    /// Milliseconds each engine move took, from `go` to `bestmove`.
    pub move_ms: Vec<f64>,
    /// Per engine move, as `move_ms`: the search time the engine reported (its last `info
    /// time`), none when it reported none. `move_ms` minus this is the latency the runner saw
    /// beyond the search. Absent in records written before it was kept.
    #[serde(default)]
    pub engine_ms: Vec<Option<u64>>,
    /// Per engine move, as `move_ms`: milliseconds left on the mover's clock after the move
    /// (increment included; negative within the time margin), none without a clock.
    #[serde(default)]
    pub clock_ms: Vec<Option<i64>>,
    /// In a time forfeit, the move that overran the clock: never played, so in none of the
    /// lists above. None in other games and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagged_move: Option<MoveTime>,
    pub duration_ms: u64,
    /// Time the runner itself spent per engine move, outside the engines.
    pub runner_overhead_us: u64,
}

/// Where a game's opening came from, without the folders of the user's disk: `quick.epd:12`,
/// `odds:knight`, `startpos`. (PGN's `Opening` tag is the opening's name, which a book line
/// does not give.)
pub fn book_entry(source: &str) -> String {
    std::path::Path::new(source).file_name().map_or_else(
        || source.to_owned(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// One engine move's timing, as the per-move lists of a [`GameEntry`] hold it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveTime {
    /// From `go` to `bestmove` (or to the flag, when none came).
    pub ms: f64,
    /// The search time the engine reported, if it did.
    pub engine_ms: Option<u64>,
    /// The mover's clock after the move; negative past the flag. None without a clock.
    pub clock_ms: Option<i64>,
}

/// What a JSON line is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Game,
    Pair,
    Summary,
}

/// A run's counts and the statistics of them, as the summary record and the report give them:
/// computed in one place from the stored totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    /// `pentanomial` (pairs) or `trinomial` (unpaired games): what Elo and LLR are computed on.
    pub model: String,
    pub pairs: u64,
    pub games: u64,
    /// The first engine's wins, draws and losses against the second. Absent in a tournament:
    /// its pairings are counted each from its own first engine's side, so their sum is no one's
    /// score (the standings hold each engine's and each pairing's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wins: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub losses: Option<u64>,
    /// [LL, LD, DD+WL, DW, WW]; none for unpaired games and in a tournament (each pairing's
    /// are in the standings).
    pub pentanomial: Option<[u64; 5]>,
    pub elo: Option<f64>,
    pub elo_ci: Option<[f64; 2]>,
    pub los: Option<f64>,
    pub nelo: Option<f64>,
    pub nelo_ci: Option<[f64; 2]>,
    pub llr: Option<f64>,
    pub lower_bound: Option<f64>,
    pub upper_bound: Option<f64>,
    /// The SPRT's state: `H0`, `H1` or `continue`.
    pub state: Option<String>,
}

impl RunResults {
    /// The results of `totals`: `paired` chooses the pentanomial or the trinomial model; a
    /// tournament's summed totals mix pairings, so it has only its numbers of pairs and games
    /// here, no score and no Elo (those are in the standings); `sprt` is the SPRT's status of
    /// the same totals.
    pub fn of(
        totals: &arbiter_store::Totals,
        paired: bool,
        tournament: bool,
        sprt: Option<arbiter_stats::SprtStatus>,
    ) -> RunResults {
        use arbiter_stats::estimate;
        let sample = arbiter_stats::Sample::of_run(paired, totals.wdl(), totals.pentanomial);
        let elo = estimate::elo(&sample).ok().filter(|_| !tournament);
        let nelo = estimate::normalized_elo(&sample)
            .ok()
            .filter(|_| !tournament);
        RunResults {
            model: if paired { "pentanomial" } else { "trinomial" }.to_owned(),
            pairs: totals.pairs,
            games: totals.games(),
            wins: (!tournament).then_some(totals.wins),
            draws: (!tournament).then_some(totals.draws),
            losses: (!tournament).then_some(totals.losses),
            pentanomial: (paired && !tournament).then_some(totals.pentanomial),
            elo: elo.map(|e| e.elo),
            elo_ci: elo.map(|e| [e.interval().0, e.interval().1]),
            los: elo.map(|e| e.los),
            nelo: nelo.map(|n| n.nelo),
            nelo_ci: nelo.map(|n| [n.interval().0, n.interval().1]),
            llr: sprt.map(|s| s.llr),
            lower_bound: sprt.map(|s| s.lower_bound),
            upper_bound: sprt.map(|s| s.upper_bound),
            state: sprt.map(|s| s.state.as_str().to_owned()),
        }
    }
}

/// One committed pair (`"type": "pair"`), as the store's commit order gives them: what a report
/// draws the statistics' path from, one point per pair, and what a fleet worker will hand over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairEntry {
    pub schema: u32,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    /// Its place in the run's commit order, from 1.
    pub sequence: u64,
    /// The pairing (0 in a match) and the pair's index within it (its round).
    pub pairing: u32,
    pub index: u64,
    /// The pairing's engines: the tally is from `first`'s side.
    pub first: String,
    pub second: String,
    pub wins: u8,
    pub draws: u8,
    pub losses: u8,
    /// The pentanomial bucket 0..=4 (LL, LD, DD or WL, DW, WW); meaningless when unpaired.
    pub penta: u8,
    /// Milliseconds since the Unix epoch.
    pub committed_at_ms: u64,
}

impl PairEntry {
    /// The record of a pair of `run` read back from the store; `None` when the run has no such
    /// pairing (a store and a run that do not belong together).
    pub fn from_committed(
        run: &arbiter_store::RunSpec,
        pair: &arbiter_store::CommittedPair,
    ) -> Option<PairEntry> {
        let pairing = run.pairings.get(pair.key.pairing as usize)?;
        let name = |engine: usize| run.engines.get(engine).cloned();
        Some(PairEntry {
            schema: SCHEMA,
            kind: EntryKind::Pair,
            sequence: pair.sequence,
            pairing: pair.key.pairing,
            index: pair.key.index,
            first: name(pairing.first)?,
            second: name(pairing.second)?,
            wins: pair.tally.wins,
            draws: pair.tally.draws,
            losses: pair.tally.losses,
            penta: pair.tally.penta,
            committed_at_ms: pair
                .committed_at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        })
    }
}

/// How a run ended: one type from the store (which keeps it under a CHECK constraint) to the
/// summary record and the exit code.
pub use arbiter_store::RunOutcome;

/// The run's summary (`"type": "summary"`), the last JSON line and `--json`'s output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub schema: u32,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub run: i64,
    pub seed: u64,
    pub verdict: RunOutcome,
    /// The counts and their statistics.
    #[serde(flatten)]
    pub results: RunResults,
    pub pgn: Option<String>,
    pub runner_cpu_ms: Option<u64>,
    pub peak_rss_mb: Option<f64>,
    /// `match`, `round-robin` or `gauntlet`. Absent in summaries written before tournaments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// A tournament's standings, pairings and crosstable: its results. None for a match, whose
    /// Elo, LLR and counts above are the first engine's against the second; a tournament has
    /// above only its numbers of pairs and games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standings: Option<crate::standings::Standings>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_back_what_they_write() {
        for outcome in RunOutcome::ALL {
            assert_eq!(outcome.as_str().parse::<RunOutcome>(), Ok(outcome));
            let json = serde_json::to_string(&outcome).unwrap();
            assert_eq!(json, format!("\"{}\"", outcome.as_str()));
        }
        assert!("h1".parse::<RunOutcome>().is_err());
    }

    /// A tournament's pairs read back from a real store in commit order become records that
    /// name the pairing's engines, add up to the store's totals, and survive JSON.
    #[tokio::test]
    async fn pair_records_follow_the_store_commit_order() {
        use arbiter_store::{
            CommittedPair, GameResult, GameRow, Location, PairKey, PairRecord, PairTally, Pairing,
            RunSpec, Store,
        };
        use futures_util::TryStreamExt;
        use std::time::{Duration, SystemTime};

        let dir = tempfile::tempdir().unwrap();
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Store::open(&location).await.unwrap();
        let pairing = |first, second| Pairing {
            first,
            second,
            pairs_planned: 3,
        };
        let spec = RunSpec {
            name: "records".into(),
            seed: 7,
            config: String::new(),
            engines: vec!["a".into(), "b".into(), "c".into()],
            pairings: vec![pairing(0, 1), pairing(0, 2), pairing(1, 2)],
            facts: None,
            confirms: None,
        };
        let run = store.create_run(&spec).await.unwrap();
        let game = |number: u64, result| GameRow {
            game_number: number,
            white: "w".into(),
            black: "b".into(),
            result,
            termination: "normal".into(),
            plies: 1,
            opening_index: 0,
            opening_fen: String::new(),
            pgn: String::new(),
            json: String::new(),
            started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1),
            duration: Duration::from_millis(5),
        };
        // (pairing, index, wins of the first engine): committed out of schedule order.
        let commits = [(2u32, 1u64, 2u8), (0, 0, 1), (1, 2, 0), (2, 0, 1)];
        for (n, &(pairing, index, wins)) in commits.iter().enumerate() {
            let (first, second) = match wins {
                2 => (GameResult::WhiteWins, GameResult::BlackWins),
                1 => (GameResult::WhiteWins, GameResult::WhiteWins),
                _ => (GameResult::BlackWins, GameResult::WhiteWins),
            };
            let record = PairRecord {
                run,
                key: PairKey { pairing, index },
                tally: PairTally {
                    wins,
                    draws: 0,
                    losses: 2 - wins,
                    penta: 2 * wins,
                },
                games: vec![
                    game(2 * n as u64 + 1, first),
                    game(2 * n as u64 + 2, second),
                ],
            };
            assert_eq!(
                store.commit_pair(&record).await.unwrap(),
                arbiter_store::Committed::Inserted
            );
        }
        let pairs: Vec<CommittedPair> = store
            .pairs_in_commit_order(run)
            .try_collect()
            .await
            .unwrap();
        let entries: Vec<PairEntry> = pairs
            .iter()
            .map(|p| PairEntry::from_committed(&spec, p).expect("a pairing of the run"))
            .collect();
        let order: Vec<(u32, u64)> = entries.iter().map(|e| (e.pairing, e.index)).collect();
        assert_eq!(order, commits.map(|(p, i, _)| (p, i)));
        assert_eq!(
            entries.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let names: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.first.as_str(), e.second.as_str()))
            .collect();
        assert_eq!(names, [("b", "c"), ("a", "b"), ("a", "c"), ("b", "c")]);
        let wins: u64 = entries.iter().map(|e| u64::from(e.wins)).sum();
        assert_eq!(wins, store.totals(run).await.unwrap().wins);
        for entry in &entries {
            let json = serde_json::to_string(entry).unwrap();
            assert!(json.contains("\"type\":\"pair\""), "{json}");
            assert_eq!(&serde_json::from_str::<PairEntry>(&json).unwrap(), entry);
        }
        // A pairing the run does not have gives no record rather than a wrong one.
        let mut stray = pairs[0];
        stray.key.pairing = 9;
        assert_eq!(PairEntry::from_committed(&spec, &stray), None);
    }
}
