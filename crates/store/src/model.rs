//! What the store keeps: runs, committed pairs and their games, and run totals.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use crate::facts::RunFacts;

/// The database id of a run. Ids are never reused, so an id names one run for the database's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
///
/// A run has two or more engines and a list of pairings; pair k of pairing p is scheduled by
/// the runner from (seed, p, k). A match is one pairing of two engines
/// ([`RunSpec::head_to_head`]); a round-robin of four engines has six pairings; a gauntlet has
/// one per seed and opponent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The run key: unique in a database. The runner derives it from the config, so rerunning the
    /// same command finds the same run with [`Store::find_run_by_name`](crate::Store::find_run_by_name).
    pub name: String,
    /// The run seed; pair k's opening and colours are a pure function of (seed, pairing, k).
    pub seed: u64,
    /// The config the run was started with (TOML or JSON), stored verbatim.
    pub config: String,
    /// The engines' names in the run's order: at least two, distinct. Pairings, standings and
    /// crosstables refer to an engine by its place in this list.
    pub engines: Vec<String>,
    /// Who plays whom: at least one. A pairing's place in this list is its number in
    /// [`PairKey::pairing`] and in [`Store::pairing_totals`](crate::Store::pairing_totals).
    pub pairings: Vec<Pairing>,
    /// What a report needs of the run (kind, model, SPRT, games planned, clocks), decided by
    /// the runner from the checked configuration; none for a run stored before migration 6
    /// (or by a caller that has none to give).
    pub facts: Option<RunFacts>,
    /// The tuning run this run is the confirmation SPRT of, if it is one.
    pub confirms: Option<RunId>,
}

impl RunSpec {
    /// A match: one pairing of two engines, `first` under test (the totals are its side).
    pub fn head_to_head(
        name: String,
        seed: u64,
        config: String,
        first: String,
        second: String,
        pairs_planned: u64,
    ) -> RunSpec {
        RunSpec {
            name,
            seed,
            config,
            engines: vec![first, second],
            pairings: vec![Pairing {
                first: 0,
                second: 1,
                pairs_planned,
            }],
            facts: None,
            confirms: None,
        }
    }

    /// The same run with its facts.
    pub fn with_facts(self, facts: RunFacts) -> RunSpec {
        RunSpec {
            facts: Some(facts),
            ..self
        }
    }

    /// The pairs of all pairings: what "complete" means for the whole run.
    pub fn pairs_planned(&self) -> u64 {
        self.pairings
            .iter()
            .fold(0, |sum, p| sum.saturating_add(p.pairs_planned))
    }

    /// Why the store cannot hold this run, if it cannot: the lineup must make sense before a
    /// single pair is keyed to it.
    pub(crate) fn inconsistency(&self) -> Option<String> {
        if self.engines.len() < 2 {
            return Some(format!(
                "a run needs at least two engines, this one has {}",
                self.engines.len()
            ));
        }
        for (i, name) in self.engines.iter().enumerate() {
            if name.is_empty() {
                return Some(format!("engine {i} has an empty name"));
            }
            if let Some(j) = self.engines[..i].iter().position(|other| other == name) {
                return Some(format!("engines {j} and {i} are both named {name:?}"));
            }
        }
        if self.pairings.is_empty() {
            return Some("a run needs at least one pairing, this one has none".to_owned());
        }
        if u32::try_from(self.pairings.len()).is_err() {
            return Some(format!("{} pairings exceed 2^32", self.pairings.len()));
        }
        let engines = self.engines.len();
        for (p, pairing) in self.pairings.iter().enumerate() {
            for index in [pairing.first, pairing.second] {
                if index >= engines {
                    return Some(format!(
                        "pairing {p} refers to engine {index}, but the run has engines 0 to {}",
                        engines - 1
                    ));
                }
            }
            if pairing.first == pairing.second {
                return Some(format!(
                    "pairing {p} has engine {} ({:?}) play itself",
                    pairing.first, self.engines[pairing.first]
                ));
            }
        }
        let total = self
            .pairings
            .iter()
            .try_fold(0u64, |sum, p| sum.checked_add(p.pairs_planned))
            .filter(|&total| i64::try_from(total).is_ok());
        if total.is_none() {
            return Some("the planned pairs of all pairings exceed 2^63 - 1".to_owned());
        }
        if let Some(facts) = &self.facts {
            if facts.clocks.len() != engines {
                return Some(format!(
                    "its facts give {} clock(s) for {engines} engines",
                    facts.clocks.len()
                ));
            }
        }
        None
    }
}

/// Who plays whom in a run, and for how many pairs. Totals of the pairing are counted from
/// `first`'s side, as a match's are from the engine under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pairing {
    /// The engine whose side the totals take: an index into [`RunSpec::engines`].
    pub first: usize,
    /// Its opponent: an index into [`RunSpec::engines`].
    pub second: usize,
    /// How many pairs the schedule holds for it; pair indices run from 0 to `pairs_planned - 1`.
    pub pairs_planned: u64,
}

/// Where a pair sits in a run's schedule: the store's exactly-once key within the run.
///
/// Ordered by pairing, then index: the order of
/// [`Store::committed_pairs`](crate::Store::committed_pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PairKey {
    /// The pairing: an index into [`RunSpec::pairings`].
    pub pairing: u32,
    /// The pair within its pairing, from 0.
    pub index: u64,
}

impl fmt::Display for PairKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pair {} of pairing {}", self.index, self.pairing)
    }
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The database id.
    pub id: RunId,
    /// What the run was created from: its name, seed, config, engines and pairings.
    pub spec: RunSpec,
    /// Running or finished (with its verdict).
    pub state: RunState,
    /// When [`Store::create_run`](crate::Store::create_run) stored it (millisecond precision).
    pub created_at: SystemTime,
    /// The last commit or state change (millisecond precision).
    pub updated_at: SystemTime,
}

impl Run {
    /// The pairs of all its pairings: a run with this many committed pairs is complete.
    pub fn pairs_planned(&self) -> u64 {
        self.spec.pairs_planned()
    }
}

/// The sums of committed pairs: of one pairing, from its first engine's side, or of a whole run
/// (every pairing's, added up; for a match, its one pairing's).
///
/// The statistics crate computes Elo and the LLR from these; the store only adds counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The first engine's games won, drawn and lost, as a run's statistics take them
    /// (`arbiter_stats::Sample::of_run`).
    pub fn wdl(&self) -> [u64; 3] {
        [self.wins, self.draws, self.losses]
    }

    /// Games counted: a pair's two, or an unpaired run's unit of one.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

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
///
/// A pair is two games; the one exception is the last round of an unpaired run asked for an
/// odd number of games, a unit of one game (see [`PairRecord::games`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The games this tally counts: 2 for a pair, 1 for a unit of one game.
    pub fn games(&self) -> u16 {
        u16::from(self.wins) + u16::from(self.draws) + u16::from(self.losses)
    }

    /// Why this cannot be the tally of a pair (or of a unit of one game), if it cannot.
    ///
    /// Two games (or one) give `wins + draws + losses` of 2 (or 1), and the bucket is the
    /// unit's score in half points, `2 * wins + draws`. The store refuses anything else rather
    /// than count it.
    pub fn inconsistency(&self) -> Option<String> {
        let games = self.games();
        if !(1..=2).contains(&games) {
            return Some(format!(
                "wins + draws + losses is {games}, a pair has 2 games (a unit of an unpaired \
                 run 1 or 2)"
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// A finished colour-swapped pair, ready to commit (or a unit of an unpaired run: its one or
/// two games, each from its own opening).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairRecord {
    /// The run it belongs to.
    pub run: RunId,
    /// Its place in the run's schedule: pairing and index.
    pub key: PairKey,
    /// Its contribution to the totals, from the pairing's first engine's side.
    pub tally: PairTally,
    /// The pair's games: index 0 is played first, index 1 with colours swapped. As many as the
    /// tally counts: two, or one in the last round of an unpaired run of an odd number of
    /// games.
    pub games: Vec<GameRow>,
}

/// A committed game read back, in the order the runner numbered the run's games.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    /// The pairing of its pair.
    pub pairing: u32,
    /// Its pair's index within the pairing.
    pub pair_index: u64,
    /// 0 or 1 within the pair (0 alone in a unit of one game).
    pub game_index: u8,
    /// The game as committed (times truncated to milliseconds).
    pub game: GameRow,
}

/// A committed pair read back in commit order, without its games: what a report needs to draw
/// the statistics' path, one point per pair, as the run saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommittedPair {
    /// Which pair it is.
    pub key: PairKey,
    /// Its place in the run's commit order, from 1: after it the run's totals held `sequence`
    /// pairs.
    pub sequence: u64,
    /// Its contribution, from its pairing's first engine's side.
    pub tally: PairTally,
    /// When it was committed (millisecond precision).
    pub committed_at: SystemTime,
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

/// What a tuning run tunes by. Stored as its text under a CHECK constraint (migration 4).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TuningMethod {
    /// SPSA by games: each step plays pairs at a perturbation and moves the values.
    Spsa,
}

impl TuningMethod {
    /// The text the database holds.
    pub fn as_str(self) -> &'static str {
        match self {
            TuningMethod::Spsa => "spsa",
        }
    }
}

impl fmt::Display for TuningMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TuningMethod {
    type Err = String;

    fn from_str(text: &str) -> Result<TuningMethod, String> {
        match text {
            "spsa" => Ok(TuningMethod::Spsa),
            _ => Err(format!("{text:?} is not a tuning method")),
        }
    }
}

/// What a tuning run was created with, beside its [`RunSpec`]: the method and its set-up (the
/// parameters and hyper-parameters, JSON the tuner wrote and reads back; the store keeps it
/// verbatim), so that a resumed run tunes exactly what it started with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuningSetup {
    /// How the run tunes.
    pub method: TuningMethod,
    /// The tuner's JSON, verbatim.
    pub setup: String,
}

/// One finished step of a tuning run, committed once with
/// [`Store::commit_step`](crate::Store::commit_step).
///
/// The step's games are summed in `totals` from the plus side (engine 0); the perturbation and
/// the values after the update are the tuner's JSON, kept verbatim: the store never interprets
/// them, the tuner reads back exactly what it wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningStep {
    /// The step's number, from 0, one after the other with no gap.
    pub step: u64,
    /// Pairs played before the step: the SPSA iteration its perturbation was drawn at.
    pub iteration: u64,
    /// The step's games from the plus side: at least one pair.
    pub totals: Totals,
    /// The perturbation the games were played at (JSON).
    pub perturbation: String,
    /// The values after the step's update (JSON).
    pub theta: String,
}

impl TuningStep {
    /// Why these counts cannot be the games of a step, if they cannot.
    pub(crate) fn inconsistency(&self) -> Option<String> {
        let t = &self.totals;
        if t.pairs == 0 {
            return Some("a step plays at least one pair".into());
        }
        let games = t
            .wins
            .checked_add(t.draws)
            .and_then(|n| n.checked_add(t.losses));
        if games != t.pairs.checked_mul(2) {
            return Some(format!(
                "{} wins, {} draws and {} losses are not the {} games of {} pairs",
                t.wins,
                t.draws,
                t.losses,
                t.pairs.saturating_mul(2),
                t.pairs
            ));
        }
        if t.pentanomial
            .iter()
            .try_fold(0u64, |sum, &n| sum.checked_add(n))
            != Some(t.pairs)
        {
            return Some(format!(
                "the pentanomial counts {:?} do not add up to {} pairs",
                t.pentanomial, t.pairs
            ));
        }
        None
    }
}

/// A committed step read back, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedStep {
    /// The step as committed.
    pub step: TuningStep,
    /// When it was committed (millisecond precision).
    pub committed_at: SystemTime,
}
