//! The typed records a run writes: one per finished game and one summary per run. The JSON-lines
//! file, the store's JSON column and (later) reports and the HTTP API all use these structs, so
//! a field is named and typed once; `schema` lets a reader tell the versions apart.

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
    /// The unit of two games it belongs to (the colour-swapped pair), from 0.
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
    pub duration_ms: u64,
    /// Time the runner itself spent per engine move, outside the engines.
    pub runner_overhead_us: u64,
}

/// What a JSON line is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Game,
    Summary,
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
    /// `pentanomial` (pairs) or `trinomial` (unpaired games): what Elo and LLR are computed on.
    pub model: String,
    pub pairs: u64,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// [LL, LD, DD+WL, DW, WW]; none for unpaired games.
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
    pub pgn: Option<String>,
    pub runner_cpu_ms: Option<u64>,
    pub peak_rss_mb: Option<f64>,
    /// `match`, `round-robin` or `gauntlet`. Absent in summaries written before tournaments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// A tournament's standings, pairings and crosstable; none for a match, whose Elo, LLR and
    /// counts above are the first engine's against the second. In a tournament those fields
    /// hold the counts of all games from each pairing's first engine's side, and no Elo.
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
}
