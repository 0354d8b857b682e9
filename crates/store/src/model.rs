//! What the store keeps: runs, committed pairs and their games, and run totals.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

/// The database id of a run. Ids are never reused, so an id names one run for the database's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(i64);

impl RunId {
    /// Wraps an id read from elsewhere (a `--resume 7` argument, a report's file name).
    pub const fn new(id: i64) -> RunId {
        RunId(id)
    }

    /// The id as the database stores it.
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a run is started from: everything needed to rebuild it on `--resume`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// The run key: unique in a database. The runner derives it from the config, so rerunning the
    /// same command finds the same run with [`Store::find_run_by_name`](crate::Store::find_run_by_name).
    pub name: String,
    /// The run seed; pair k's opening and colours are a pure function of (seed, k).
    pub seed: u64,
    /// The config the run was started with (TOML or JSON), stored verbatim.
    pub config: String,
    /// The first player. Totals are counted from its point of view.
    pub first_engine: String,
    /// The second player.
    pub second_engine: String,
    /// How many pairs the schedule holds; pair indices run from 0 to `pairs_planned - 1`.
    pub pairs_planned: u64,
}

/// How a run ended: the verdict the store keeps, the records print and the exit code follows.
/// Stored as its text under a CHECK constraint (migration 2), read back as this enum.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RunOutcome {
    /// The SPRT accepted H1.
    H1,
    /// The SPRT accepted H0.
    H0,
    /// Every scheduled pair was played (without an SPRT decision, or without an SPRT).
    #[serde(rename = "complete")]
    Complete,
    /// Stopped from outside; resumable.
    #[serde(rename = "interrupted")]
    Interrupted,
    /// Stopped by an engine fault with `recover` off; resumable.
    #[serde(rename = "stopped")]
    Stopped,
}

impl RunOutcome {
    /// Every outcome, in the order of the migration's CHECK list.
    pub const ALL: [RunOutcome; 5] = [
        RunOutcome::H1,
        RunOutcome::H0,
        RunOutcome::Complete,
        RunOutcome::Interrupted,
        RunOutcome::Stopped,
    ];

    /// The text the database holds and the last line prints.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::H1 => "H1",
            RunOutcome::H0 => "H0",
            RunOutcome::Complete => "complete",
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::Stopped => "stopped",
        }
    }
}

impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunOutcome {
    type Err = String;

    /// Reads what [`RunOutcome::as_str`] wrote.
    fn from_str(text: &str) -> Result<RunOutcome, String> {
        RunOutcome::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == text)
            .ok_or_else(|| format!("{text:?} is not a run outcome"))
    }
}

/// Whether a run still accepts pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Pairs may still be committed.
    Running,
    /// Closed by [`Store::finish_run`](crate::Store::finish_run); its totals no longer change.
    Finished {
        /// Why it ended.
        verdict: RunOutcome,
    },
}

/// A run as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The database id.
    pub id: RunId,
    /// What the run was created from.
    pub spec: RunSpec,
    /// Running or finished (with its verdict).
    pub state: RunState,
    /// When [`Store::create_run`](crate::Store::create_run) stored it (millisecond precision).
    pub created_at: SystemTime,
    /// The last commit or state change (millisecond precision).
    pub updated_at: SystemTime,
}

/// A run's totals, from the first engine's point of view: the sums of its committed pairs.
///
/// The statistics crate computes Elo and the LLR from these; the store only adds counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Committed pairs.
    pub pairs: u64,
    /// Games won by the first engine.
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games lost by the first engine.
    pub losses: u64,
    /// Pair counts by pentanomial bucket `[LL, LD, DD+WL, DW, WW]`.
    pub pentanomial: [u64; 5],
}

impl Totals {
    /// Adds one pair's contribution, as [`Store::commit_pair`](crate::Store::commit_pair) does.
    pub fn add(&mut self, tally: PairTally) {
        self.pairs += 1;
        self.wins += u64::from(tally.wins);
        self.draws += u64::from(tally.draws);
        self.losses += u64::from(tally.losses);
        self.pentanomial[usize::from(tally.penta)] += 1;
    }
}

/// One pair's contribution to the totals, computed by the caller from the first engine's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairTally {
    /// Games of the pair the first engine won.
    pub wins: u8,
    /// Drawn games of the pair.
    pub draws: u8,
    /// Games of the pair the first engine lost.
    pub losses: u8,
    /// The pentanomial bucket 0..=4: LL, LD, DD or WL, DW, WW.
    pub penta: u8,
}

impl PairTally {
    /// Why this cannot be the tally of two games, if it cannot.
    ///
    /// Two games give `wins + draws + losses == 2`, and the bucket is the pair's score in half
    /// points, `2 * wins + draws`. The store refuses anything else rather than count it.
    pub fn inconsistency(&self) -> Option<String> {
        let games = u16::from(self.wins) + u16::from(self.draws) + u16::from(self.losses);
        if games != 2 {
            return Some(format!(
                "wins + draws + losses is {games}, a pair has 2 games"
            ));
        }
        let half_points = 2 * self.wins + self.draws;
        if self.penta != half_points {
            return Some(format!(
                "pentanomial bucket {} does not match {} win(s) and {} draw(s) (bucket {half_points})",
                self.penta, self.wins, self.draws
            ));
        }
        None
    }
}

/// The result of a finished game, as its PGN token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// `1-0`
    WhiteWins,
    /// `0-1`
    BlackWins,
    /// `1/2-1/2`
    Draw,
}

impl GameResult {
    /// The PGN result token.
    pub const fn as_pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_pgn())
    }
}

/// The text is not one of `1-0`, `0-1`, `1/2-1/2` (a stored game is always finished, so `*` is
/// not accepted either).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a finished game's result (expected 1-0, 0-1 or 1/2-1/2)")]
pub struct ParseGameResultError(pub String);

impl FromStr for GameResult {
    type Err = ParseGameResultError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "1-0" => Ok(GameResult::WhiteWins),
            "0-1" => Ok(GameResult::BlackWins),
            "1/2-1/2" => Ok(GameResult::Draw),
            _ => Err(ParseGameResultError(s.to_owned())),
        }
    }
}

/// One game of a pair, as committed: the runner's record reduced to what the system of record
/// keeps, with the full PGN text and the runner's JSON line verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRow {
    /// The game's number in the run, as in cutechess's `Finished game N`.
    pub game_number: u64,
    /// The engine that played White.
    pub white: String,
    /// The engine that played Black.
    pub black: String,
    /// How the game ended.
    pub result: GameResult,
    /// Why it ended, as the PGN `Termination` tag says (`normal`, `time forfeit` ...).
    pub termination: String,
    /// Half-moves played.
    pub plies: u32,
    /// The opening's index in the book.
    pub opening_index: u64,
    /// The position the game started from.
    pub opening_fen: String,
    /// The game's full PGN text.
    pub pgn: String,
    /// The runner's JSON line for the game.
    pub json: String,
    /// When the game started (stored to the millisecond).
    pub started_at: SystemTime,
    /// How long it took (stored to the millisecond).
    pub duration: Duration,
}

/// A finished colour-swapped pair, ready to commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRecord {
    /// The run it belongs to.
    pub run: RunId,
    /// The schedule's index of the pair, from 0.
    pub pair_index: u64,
    /// Its contribution to the run totals.
    pub tally: PairTally,
    /// The pair's games: index 0 is played first, index 1 with colours swapped.
    pub games: [GameRow; 2],
}

/// A committed game read back, in (pair, game) order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    /// The pair it belongs to.
    pub pair_index: u64,
    /// 0 or 1 within the pair.
    pub game_index: u8,
    /// The game as committed (times truncated to milliseconds).
    pub game: GameRow,
}

/// What [`Store::commit_pair`](crate::Store::commit_pair) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a pair that was already present was not counted again; callers usually report it"]
pub enum Committed {
    /// The pair, its games and its tally are now in the store.
    Inserted,
    /// The pair was committed before (a retry or a replay after resume); nothing changed.
    AlreadyPresent,
}
