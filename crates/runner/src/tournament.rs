//! The match: many games at once, in colour-swapped pairs, each finished pair committed to the
//! store, stopped by the SPRT.
//!
//! Workers take games from the schedule (pair `k`, game 0 with the first engine as White, game
//! 1 with colours swapped, both from the opening the seed gives pair `k`) and play them with
//! players borrowed from per-engine pools. A single collector owns everything that must
//! happen once: it joins the two games of a pair, commits the pair with its PGN and tally in
//! one transaction, reads the totals back, and recomputes the LLR from them. Nothing is
//! counted in memory, so a run killed at any instant resumes from exactly what the store holds.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arbiter_rules::pgn::PgnGame;
use arbiter_rules::uci::move_to_uci;
use arbiter_rules::{Color, Game, RuleSet, Termination};
use arbiter_stats::{Pentanomial, Sample, Sprt, SprtState, SprtStatus, StatsError, Trinomial};
use arbiter_store::{
    Committed, GameResult, GameRow, PairKey, PairRecord, PairTally, RunId, RunState, Store,
    StoreError, Totals,
};
use tokio::sync::{mpsc, watch};

use crate::adjudication::Adjudication;
use crate::builtin::{block_on, run_on_pool};
use crate::commlog::{CommLog, EngineTap};
use crate::config::TournamentKind;
use crate::game::{play_game, GameRecord, GameSpec};
use crate::openings::Book;
use crate::player::{Player, PlayerSpec};
use crate::process::EngineFault;
use crate::records::{self, EntryKind, GameEntry, MoveTime, RunOutcome};
use crate::tc::TimeControl;

/// Everything a match needs, resolved and validated.
#[derive(Debug)]
pub struct MatchSpec {
    /// The engines of the run, in the configuration's order. In a match the first is the one
    /// under test: totals and Elo are from its point of view.
    pub players: Vec<PlayerSpec>,
    /// Each engine's limits, by the same index.
    pub time_controls: Vec<TimeControl>,
    pub time_margin: Duration,
    pub book: Book,
    /// Pairs in the schedule, over all pairings (cutechess's `-rounds` with `-games 2 -repeat`,
    /// times the pairings): units of two games, committed together.
    pub pairs: u64,
    /// Games in the schedule, over all pairings: twice `pairs`, or in an unpaired run the games
    /// asked for (cutechess's `-games 1 -rounds R`: R per pairing), whose last round is a unit
    /// of one game when R is odd.
    pub games: u64,
    /// Who plays whom, as indices into `players`: `[first, second]`, the first White in game 0
    /// of each pair and the side the pairing's totals are counted from. A match has one
    /// pairing. Unit `u` of the schedule is pair `u / P` of pairing `u % P` (P pairings): a
    /// round plays every pairing once, with the round's opening, before the next begins.
    pub pairings: Vec<[usize; 2]>,
    /// What made the pairings: a match, a round-robin or a gauntlet.
    pub kind: TournamentKind,
    /// Each opening played twice with colours swapped, counted as pentanomial pairs (the
    /// default); or, `false`, cutechess's `-games 1` without `-repeat`: every game its own
    /// opening, colours alternating by game, counted as games (trinomial statistics). The two
    /// games of a unit are then consecutive rounds, not a pair.
    pub paired: bool,
    /// Games in flight at once.
    pub concurrency: usize,
    pub adjudication: Adjudication,
    pub rules: RuleSet,
    pub sprt: Option<Sprt>,
    /// Keep going after an engine crashes or stalls (restart the engine), or stop the run.
    /// Illegal moves and lost flags are results either way.
    pub recover: bool,
    pub seed: u64,
    /// PGN `Event` and `Site` tags.
    pub event: String,
    pub site: String,
    /// What the configuration asked for that will not happen as written (skipped book entries,
    /// options an in-process engine does not declare), for the user to see before the games.
    pub warnings: Vec<String>,
    /// The run's log (`-log`, `[log]`): engines' lines and arbiter's messages. Opened by the
    /// caller, which owns the file; `None` logs nothing.
    pub log: Option<Arc<CommLog>>,
}

impl MatchSpec {
    /// The players' names for White and Black when `order` gives the engines' seats.
    fn seat_names(&self, order: [usize; 2]) -> [&str; 2] {
        order.map(|engine| self.players[engine].name.as_str())
    }

    /// The pairing of schedule unit `unit` and the unit's index within it (its round).
    pub fn pairing_of(&self, unit: u64) -> (usize, u64) {
        let pairings = self.pairings.len().max(1) as u64;
        ((unit % pairings) as usize, unit / pairings)
    }

    /// The schedule unit of pair `index` of `pairing`.
    pub fn unit_of(&self, pairing: usize, index: u64) -> u64 {
        index * self.pairings.len().max(1) as u64 + pairing as u64
    }

    /// Pairs of `pairing` in the schedule (every pairing has the same, `rounds`).
    pub fn pairs_in(&self, pairing: usize) -> u64 {
        let pairings = self.pairings.len().max(1) as u64;
        (self.pairs + pairings - 1 - pairing as u64) / pairings
    }

    /// Games of schedule unit `unit`: a pair's two, or one in the last round of an unpaired run
    /// of an odd number of games per pairing.
    pub fn games_of(&self, unit: u64) -> usize {
        if self.paired {
            return 2;
        }
        let per_pairing = self.games / self.pairings.len().max(1) as u64;
        let round = self.pairing_of(unit).1;
        per_pairing.saturating_sub(2 * round).min(2) as usize
    }

    /// The number of game `game_index` of `unit` in the run, from 1: in schedule order, as
    /// cutechess numbers its `Finished game N` lines. A last round of single games numbers them
    /// after every earlier round's, one per pairing.
    pub fn game_number(&self, unit: u64, game_index: usize) -> u64 {
        if self.games_of(unit) == 1 {
            let pairings = self.pairings.len().max(1) as u64;
            let (pairing, round) = self.pairing_of(unit);
            2 * round * pairings + pairing as u64 + 1
        } else {
            2 * unit + game_index as u64 + 1
        }
    }

    /// The PGN `Round` of game `game_index` of `unit`, from 1: the pair's (in a tournament,
    /// the round every pairing plays once), as fastchess writes it; unpaired, every game is a
    /// round of its own, as cutechess numbers them.
    fn round_tag(&self, unit: u64, game_index: usize) -> u64 {
        let round = self.pairing_of(unit).1;
        if self.paired {
            round + 1
        } else {
            2 * round + game_index as u64 + 1
        }
    }

    /// The engines of game `game_index` of `unit`, White first.
    fn seats(&self, unit: u64, game_index: usize) -> [usize; 2] {
        let [first, second] = self.pairings[self.pairing_of(unit).0];
        if game_index == 0 {
            [first, second]
        } else {
            [second, first]
        }
    }

    /// Whether this run is a tournament of several pairings rather than a match.
    pub fn is_tournament(&self) -> bool {
        self.pairings.len() > 1
    }

    /// The index of the opening of game `game_index` (0 or 1) of unit `pair` in the book's
    /// order: its round's (every pairing of a round plays the same line), or in unpaired runs
    /// the game's own.
    fn opening_index(&self, pair: u64, game_index: usize) -> usize {
        let round = self.pairing_of(pair).1;
        let entry = if self.paired {
            round
        } else {
            2 * round + game_index as u64
        };
        self.book.index_for_pair(self.seed, entry)
    }

    fn opening(&self, pair: u64, game_index: usize) -> &crate::openings::Opening {
        self.book.opening(self.opening_index(pair, game_index))
    }

    /// The statistics' sample of `totals`: pentanomial pairs, or games when unpaired.
    pub fn sample(&self, totals: &Totals) -> Sample {
        sample(totals, self.paired)
    }

    /// The game of `pair` with the engines seated by `order`.
    fn game_spec(&self, pair: u64, game_index: usize, order: [usize; 2]) -> GameSpec<'_> {
        GameSpec {
            opening: self.opening(pair, game_index),
            time_controls: order.map(|engine| &self.time_controls[engine]),
            time_margin: self.time_margin,
            adjudication: self.adjudication,
            rules: self.rules,
        }
    }
}

/// The sample statistics are computed on: the pentanomial pairs of `totals`, or (without
/// `pentanomial`) its games as a trinomial.
pub fn sample(totals: &Totals, pentanomial: bool) -> Sample {
    if pentanomial {
        Sample::from(Pentanomial::from_counts(totals.pentanomial))
    } else {
        Sample::from(Trinomial::from_wdl(
            totals.wins,
            totals.draws,
            totals.losses,
        ))
    }
}

/// What happens during a match, for whoever reports it (progress bar, cutechess-style lines,
/// JSON lines, PGN file).
#[derive(Clone, Debug)]
pub enum Event {
    GameStarted {
        number: u64,
        pair: u64,
        white: String,
        black: String,
    },
    GameFinished {
        number: u64,
        pair: u64,
        record: Arc<GameRecord>,
        pgn: String,
        json: String,
    },
    /// A pair is in the store (or already was); `totals` and `sprt` are recomputed from it.
    /// In a tournament `pairings` holds every pairing's totals as stored (index = pairing, as
    /// in [`MatchSpec::pairings`]); a match has none beyond `totals`. `record` is the pair as
    /// committed, so that the exports can append its games as the store now holds them.
    PairCommitted {
        pair: u64,
        record: Arc<PairRecord>,
        totals: Totals,
        sprt: Option<SprtStatus>,
        pairings: Option<Arc<Vec<Totals>>>,
        already_present: bool,
    },
    Warning(String),
}

/// How a match ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The SPRT accepted H1 (or H0).
    Accepted(SprtState),
    /// Every pair was played without an SPRT decision (or without an SPRT).
    Complete,
    /// Stopped from outside (Ctrl-C); resumable.
    Interrupted,
    /// An engine crashed or stalled under `recover = false`; resumable.
    Fault(String),
}

impl Verdict {
    /// The verdict as the records and the store name it.
    pub fn outcome(&self) -> RunOutcome {
        match self {
            Verdict::Accepted(SprtState::H1) => RunOutcome::H1,
            Verdict::Accepted(SprtState::H0) => RunOutcome::H0,
            Verdict::Accepted(SprtState::Continue) | Verdict::Complete => RunOutcome::Complete,
            Verdict::Interrupted => RunOutcome::Interrupted,
            Verdict::Fault(_) => RunOutcome::Stopped,
        }
    }

    /// The text the store records and the summary prints.
    pub fn as_str(&self) -> &'static str {
        self.outcome().as_str()
    }
}

/// The end of a match.
#[derive(Clone, Debug)]
pub struct Summary {
    pub totals: Totals,
    pub sprt: Option<SprtStatus>,
    pub verdict: Verdict,
    /// Games played to the end whose pair was not complete when the match stopped without a
    /// verdict (a fault under `recover = false`, a stop from outside), in game order: the
    /// faulted game among them. The store counts pairs only, so it does not hold them and
    /// resuming replays their pairs; the console showed them, and the exports keep them, marked
    /// as not counted. After a verdict there are none: the result is the committed pairs.
    pub uncounted: Vec<GameRow>,
}

/// What stops a match as an error (engine faults are not errors; they are game results).
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("statistics: {0}")]
    Stats(#[from] StatsError),
    #[error("engine {name}: {fault}")]
    EngineStart { name: String, fault: EngineFault },
    /// A bug in arbiter or staunton, not an engine fault: the run stops and can be resumed.
    #[error("the in-process game of pair {pair} panicked (a bug: please report it)")]
    GamePanicked { pair: u64 },
    /// A worker that plays games ended early (a bug, not an engine fault): the run is left
    /// running, and resuming it plays the pairs it lacks.
    #[error(
        "a game worker stopped before pair {pair} was played ({reason}; a bug: please report \
         it); the run is kept unfinished: rerun the command to play the missing pairs"
    )]
    WorkerEnded { pair: u64, reason: String },
    /// An engine faulted with `recover` off, where no store keeps the run (the tally sink).
    #[error("engine fault (recover is off): {0}")]
    Fault(String),
}

/// One finished game on its way to the collector.
struct Finished {
    pair: u64,
    game_index: usize,
    record: GameRecord,
    started_at: SystemTime,
}

/// A finished game with its PGN and JSON written once, for the event and for the store.
struct Written {
    finished: Finished,
    pgn: String,
    json: String,
}

impl Written {
    /// The game as the store keeps it.
    fn row(&self, spec: &MatchSpec) -> GameRow {
        let finished = &self.finished;
        let record = &finished.record;
        let pair = finished.pair;
        GameRow {
            game_number: spec.game_number(pair, finished.game_index),
            white: record.white.clone(),
            black: record.black.clone(),
            result: match record.outcome.winner {
                Some(Color::White) => GameResult::WhiteWins,
                Some(Color::Black) => GameResult::BlackWins,
                None => GameResult::Draw,
            },
            termination: record.outcome.termination.pgn_tag().to_owned(),
            plies: record.plies() as u32,
            opening_index: spec.opening_index(pair, finished.game_index) as u64,
            opening_fen: record.opening.start.fen(),
            pgn: self.pgn.clone(),
            json: self.json.clone(),
            started_at: finished.started_at,
            duration: record.duration,
        }
    }
}

/// Whether a fault stops a match under `recover = false`: a crash or a stall, where the
/// engine's process is gone or no longer answers. An illegal move or a lost flag ends that
/// game as a loss and the match goes on, as in cutechess and fastchess, whose `-recover` is
/// about restarting crashed engines (the engine that faulted is restarted all the same).
fn stops_without_recover(record: &GameRecord) -> bool {
    record.faulted.is_some()
        && matches!(
            record.outcome.termination,
            Termination::Abandoned | Termination::StalledConnection
        )
}

/// The position a game ended in, as FEN: where the engine at fault was to move.
fn final_fen(record: &GameRecord, rules: RuleSet) -> String {
    let mut game = Game::new(record.opening.start, rules);
    for &mv in &record.moves {
        game.play_unchecked(mv);
    }
    game.position().fen()
}

/// Idle started players of one engine, reused between games.
type Pool = Mutex<Vec<Player>>;

/// Plays the pairs of `run` that the store does not hold yet: the store-and-SPRT sink over
/// [`Play`]. Each finished pair is committed, the LLR recomputed from the stored totals, and the
/// match stops when the SPRT decides. `cancel` turning true stops the match (games in flight are
/// abandoned uncounted; the run stays resumable).
pub async fn run_match(
    spec: Arc<MatchSpec>,
    store: Arc<Store>,
    run: RunId,
    events: mpsc::UnboundedSender<Event>,
    mut cancel: watch::Receiver<bool>,
) -> Result<Summary, MatchError> {
    let committed: BTreeSet<u64> = store
        .committed_pairs(run)
        .await?
        .into_iter()
        .map(|key| spec.unit_of(key.pairing as usize, key.index))
        .collect();
    let mut totals = store.totals(run).await?;
    // A finished run is closed: report its verdict again rather than play on.
    if let RunState::Finished { verdict } = store.run(run).await?.state {
        let verdict = match verdict {
            RunOutcome::H1 => Verdict::Accepted(SprtState::H1),
            RunOutcome::H0 => Verdict::Accepted(SprtState::H0),
            RunOutcome::Complete | RunOutcome::Interrupted | RunOutcome::Stopped => {
                Verdict::Complete
            }
        };
        return Ok(Summary {
            totals,
            sprt: sprt_status(&spec, &totals)?,
            verdict,
            uncounted: Vec::new(),
        });
    }
    let mut sprt_now = sprt_status(&spec, &totals)?;
    if let Some(status) = sprt_now.filter(|s| s.state != SprtState::Continue) {
        return Ok(Summary {
            totals,
            sprt: Some(status),
            verdict: Verdict::Accepted(status.state),
            uncounted: Vec::new(),
        });
    }

    let mut play = Play::start(spec.clone(), committed, events.clone());
    let verdict = loop {
        let played = tokio::select! {
            played = play.next() => played,
            _ = cancel.changed() => {
                if *cancel.borrow() { break Verdict::Interrupted; }
                continue;
            }
        };
        let pair = match played {
            Ok(Some(Played::Pair(pair))) => pair,
            Ok(Some(Played::Fault(reason))) => break Verdict::Fault(reason),
            Ok(None) => break Verdict::Complete,
            Err(err) => {
                play.finish().await;
                return Err(err);
            }
        };
        let record = Arc::new(pair.record(&spec, run));
        let committed = store.commit_pair(&record).await?;
        totals = store.totals(run).await?;
        sprt_now = sprt_status(&spec, &totals)?;
        let pairings = match spec.is_tournament() {
            true => Some(Arc::new(store.pairing_totals(run).await?)),
            false => None,
        };
        let _ = events.send(Event::PairCommitted {
            pair: pair.pair,
            record,
            totals,
            sprt: sprt_now,
            pairings,
            already_present: committed == Committed::AlreadyPresent,
        });
        if let Some(status) = sprt_now.filter(|s| s.state != SprtState::Continue) {
            break Verdict::Accepted(status.state);
        }
    };
    // A verdict's result is its pairs: a game of a pair the verdict cut short was shown on the
    // console but belongs to no result, and the published PGN is the verdict's. A stop without
    // a verdict keeps such games (the faulted one among them) for the user to look at.
    let decided = matches!(verdict, Verdict::Accepted(_) | Verdict::Complete);
    let uncounted = if decided {
        Vec::new()
    } else {
        play.unfinished()
    };
    play.finish().await;
    if decided {
        store.finish_run(run, verdict.outcome()).await?;
    }
    Ok(Summary {
        totals,
        sprt: sprt_now,
        verdict,
        uncounted,
    })
}

/// The in-memory sink over [`Play`]: plays `pairs` of `spec` (indices below `spec.pairs`) and
/// returns their totals, with no store, files or SPRT. What a tuner needs: "play these pairs
/// and hand me the outcomes". An engine fault under `recover = false` is an error here.
pub async fn tally_pairs(
    spec: Arc<MatchSpec>,
    pairs: &BTreeSet<u64>,
    events: mpsc::UnboundedSender<Event>,
) -> Result<Totals, MatchError> {
    let skip: BTreeSet<u64> = (0..spec.pairs).filter(|k| !pairs.contains(k)).collect();
    let mut play = Play::start(spec, skip, events);
    let mut totals = Totals::default();
    loop {
        match play.next().await {
            Ok(Some(Played::Pair(pair))) => totals.add(pair.tally()),
            Ok(Some(Played::Fault(reason))) => {
                play.finish().await;
                return Err(MatchError::Fault(reason));
            }
            Ok(None) => break,
            Err(err) => {
                play.finish().await;
                return Err(err);
            }
        }
    }
    play.finish().await;
    Ok(totals)
}

/// What [`Play`] hands over.
pub enum Played {
    /// Both games of a pair (a unit of two games when unpaired), played to the end.
    Pair(Box<PlayedPair>),
    /// An engine crashed or stalled and `recover` is off: the match should stop. The text names
    /// the game, the position the engine was asked about and what went wrong; the game itself
    /// is in [`Play::unfinished`] (it is part of no pair handed over).
    Fault(String),
}

/// A pair whose two games are finished (or a unit of one game, see [`MatchSpec::games_of`]),
/// each written once as PGN and JSON.
pub struct PlayedPair {
    pub pair: u64,
    games: Vec<Written>,
}

impl PlayedPair {
    /// The pair's result from the first engine's side.
    pub fn tally(&self) -> PairTally {
        // Half points of the first engine: it is White in game 0 and Black in game 1.
        let points: Vec<u8> = self
            .games
            .iter()
            .zip([Color::White, Color::Black])
            .map(|(game, first)| game.finished.record.half_points(first))
            .collect();
        let wins = points.iter().filter(|&&p| p == 2).count() as u8;
        let draws = points.iter().filter(|&&p| p == 1).count() as u8;
        PairTally {
            wins,
            draws,
            losses: points.len() as u8 - wins - draws,
            // The unit's score in half points: a pair's pentanomial bucket.
            penta: points.iter().sum(),
        }
    }

    /// The store's record of the pair in `run`.
    fn record(&self, spec: &MatchSpec, run: RunId) -> PairRecord {
        let pair = self.pair;
        let row = |written: &Written| written.row(spec);
        let (pairing, index) = spec.pairing_of(pair);
        PairRecord {
            run,
            key: PairKey {
                pairing: pairing as u32,
                index,
            },
            tally: self.tally(),
            games: self.games.iter().map(row).collect(),
        }
    }
}

/// Play: the games of a schedule in, finished pairs out, as a stream. It owns the workers (one
/// per game in flight), the per-engine pools of started players, seating in process or over
/// UCI, faults and restarts, and cancellation; it knows nothing of stores, SPRTs or files. The
/// per-game events (started, finished, warnings) go to `events` as games end.
pub struct Play {
    spec: Arc<MatchSpec>,
    events: mpsc::UnboundedSender<Event>,
    done: mpsc::UnboundedReceiver<Result<Finished, MatchError>>,
    halves: HashMap<u64, [Option<Written>; 2]>,
    /// Pairs not to play (already committed), and pairs handed over: what is missing when a
    /// worker dies is what neither holds.
    skip: Arc<BTreeSet<u64>>,
    delivered: BTreeSet<u64>,
    remaining: u64,
    workers: Vec<tokio::task::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    pools: Arc<[Pool]>,
    /// A crash or stall under `recover = false` that completed its pair: handed over after
    /// that pair.
    stopping: Option<String>,
}

impl Play {
    /// Starts playing every pair of `spec.pairs` not in `skip`.
    pub fn start(
        spec: Arc<MatchSpec>,
        skip: BTreeSet<u64>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Play {
        let remaining = spec.pairs - skip.range(..spec.pairs).count() as u64;
        let skip = Arc::new(skip);
        let queue = Arc::new(Mutex::new(Schedule {
            spec: spec.clone(),
            next_pair: 0,
            second_game_of: None,
            committed: skip.clone(),
        }));
        let pools: Arc<[Pool]> = spec
            .players
            .iter()
            .map(|_| Mutex::new(Vec::new()))
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let (done_tx, done) = mpsc::unbounded_channel::<Result<Finished, MatchError>>();
        // No more workers (and so no more engines) than there are games left to play.
        let in_flight = (spec.concurrency.max(1) as u64).min(remaining.saturating_mul(2));
        let workers = (0..in_flight)
            .map(|_| {
                let (spec, queue, pools, stop, done, events) = (
                    spec.clone(),
                    queue.clone(),
                    pools.clone(),
                    stop.clone(),
                    done_tx.clone(),
                    events.clone(),
                );
                tokio::spawn(async move { worker(spec, queue, pools, stop, done, events).await })
            })
            .collect();
        Play {
            spec,
            events,
            done,
            halves: HashMap::new(),
            skip,
            delivered: BTreeSet::new(),
            remaining,
            workers,
            stop,
            pools,
            stopping: None,
        }
    }

    /// The next finished pair, in the order pairs finish; `None` once every pair was handed
    /// over. Cancel-safe: dropping the future loses no game.
    pub async fn next(&mut self) -> Result<Option<Played>, MatchError> {
        if let Some(text) = self.stopping.take() {
            return Ok(Some(Played::Fault(text)));
        }
        loop {
            if self.remaining == 0 {
                return Ok(None);
            }
            let finished = match self.done.recv().await {
                Some(finished) => finished?,
                None => return Err(self.worker_ended().await),
            };
            let spec = &self.spec;
            let pair = finished.pair;
            let index = finished.game_index;
            let number = spec.game_number(pair, index);
            let stop = !spec.recover && stops_without_recover(&finished.record);
            let mut fault_text = None;
            if let Some(color) = finished.record.faulted {
                // The PGN says "White disconnects"; the log names the game, the position the
                // engine was asked about and, for a process, why (its last lines).
                let record = &finished.record;
                let mut text = format!(
                    "game {number} ({} vs {}): {} ({color}): {}, in {}",
                    record.white,
                    record.black,
                    record.player(color),
                    record.reason,
                    final_fen(record, spec.rules)
                );
                if let Some(fault) = &record.fault {
                    text.push_str(&format!(": {fault}"));
                }
                if !stop {
                    let _ = self.events.send(Event::Warning(text.clone()));
                }
                fault_text = Some(text);
            }
            let pgn = game_pgn(spec, &finished.record, pair, index, finished.started_at);
            let json = game_json(&finished.record, number, pair);
            let written = Written {
                finished,
                pgn,
                json,
            };
            let _ = self.events.send(Event::GameFinished {
                number,
                pair,
                record: Arc::new(written.finished.record.clone()),
                pgn: written.pgn.clone(),
                json: written.json.clone(),
            });
            let games = spec.games_of(pair);
            let slot = self.halves.entry(pair).or_default();
            slot[index] = Some(written);
            let complete = slot[..games].iter().all(Option::is_some);
            if let (true, Some(text)) = (stop, fault_text) {
                if !complete {
                    return Ok(Some(Played::Fault(text)));
                }
                // The fault completed its pair: the pair is handed over (the store keeps the
                // game, a loss for the engine at fault), and the stop comes next.
                self.stopping = Some(text);
            }
            if !complete {
                continue;
            }
            let games = self.halves.remove(&pair).expect("a complete unit");
            self.remaining -= 1;
            self.delivered.insert(pair);
            return Ok(Some(Played::Pair(Box::new(PlayedPair {
                pair,
                games: games.into_iter().flatten().collect(),
            }))));
        }
    }

    /// The games played to the end whose pair is not complete, as the store would keep them,
    /// in game order: what a match that stops now leaves uncounted.
    pub fn unfinished(&self) -> Vec<GameRow> {
        let mut rows: Vec<GameRow> = self
            .halves
            .values()
            .flatten()
            .flatten()
            .map(|written| written.row(&self.spec))
            .collect();
        rows.sort_by_key(|row| row.game_number);
        rows
    }

    /// Every worker is gone with pairs still missing: one ended without reporting (a panic).
    /// The error names the first missing pair; nothing of it was handed over, so a sink that
    /// stores pairs stays resumable.
    async fn worker_ended(&mut self) -> MatchError {
        stop_workers(&self.stop, &self.workers);
        let pair = (0..self.spec.pairs)
            .find(|k| !self.skip.contains(k) && !self.delivered.contains(k))
            .unwrap_or_default();
        let mut reason = "it ended without a result".to_owned();
        for worker in std::mem::take(&mut self.workers) {
            if let Err(err) = worker.await {
                if err.is_panic() {
                    reason = format!("it panicked: {}", panic_text(err.into_panic()));
                }
            }
        }
        MatchError::WorkerEnded { pair, reason }
    }

    /// Stops the workers (games in flight are abandoned) and shuts idle engines down politely;
    /// busy ones went with their aborted workers.
    pub async fn finish(self) {
        stop_workers(&self.stop, &self.workers);
        for worker in self.workers {
            let _ = worker.await;
        }
        for pool in self.pools.iter() {
            let players: Vec<Player> = pool
                .lock()
                .map(|mut p| p.drain(..).collect())
                .unwrap_or_default();
            for player in players {
                player.shutdown().await;
            }
        }
    }
}

/// The games still to play, handed out in order as workers ask: both games of every pair the
/// store does not hold. Nothing is planned ahead, so a run of a billion pairs costs no more
/// memory than one of ten.
struct Schedule {
    spec: Arc<MatchSpec>,
    next_pair: u64,
    /// Pair whose second game (colours swapped) is still to be handed out.
    second_game_of: Option<u64>,
    committed: Arc<BTreeSet<u64>>,
}

impl Schedule {
    fn next_game(&mut self) -> Option<(u64, usize)> {
        if let Some(pair) = self.second_game_of.take() {
            return Some((pair, 1));
        }
        while self.next_pair < self.spec.pairs {
            let pair = self.next_pair;
            self.next_pair += 1;
            if !self.committed.contains(&pair) {
                if self.spec.games_of(pair) == 2 {
                    self.second_game_of = Some(pair);
                }
                return Some((pair, 0));
            }
        }
        None
    }
}

/// The message of a panic payload, when it is text.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

fn stop_workers(stop: &AtomicBool, workers: &[tokio::task::JoinHandle<()>]) {
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.abort();
    }
}

/// The SPRT verdict of the totals as stored, recomputed from scratch every time; none before
/// the first pair or without an SPRT.
fn sprt_status(spec: &MatchSpec, totals: &Totals) -> Result<Option<SprtStatus>, MatchError> {
    let Some(sprt) = spec.sprt.as_ref().filter(|_| totals.pairs > 0) else {
        return Ok(None);
    };
    Ok(Some(sprt.status(&spec.sample(totals))?))
}

async fn worker(
    spec: Arc<MatchSpec>,
    queue: Arc<Mutex<Schedule>>,
    pools: Arc<[Pool]>,
    stop: Arc<AtomicBool>,
    done: mpsc::UnboundedSender<Result<Finished, MatchError>>,
    events: mpsc::UnboundedSender<Event>,
) {
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Some((pair, game_index)) = queue.lock().ok().and_then(|mut q| q.next_game()) else {
            return;
        };
        #[cfg(test)]
        tests::maybe_die(&spec, pair);
        // Game 0: the pairing's first engine has White; game 1: colours swapped.
        let order = spec.seats(pair, game_index);
        let number = spec.game_number(pair, game_index);
        let mut seats = Vec::with_capacity(2);
        for &engine in &order {
            let player = &spec.players[engine];
            let tap = spec
                .log
                .as_ref()
                .and_then(|log| EngineTap::new(log, &player.name, number));
            match take_player(player, &pools[engine], &events, tap).await {
                Ok(player) => seats.push(player),
                Err(err) => {
                    let _ = done.send(Err(err));
                    return;
                }
            }
        }
        let (mut white, mut black) = {
            let mut it = seats.into_iter();
            (it.next().expect("white"), it.next().expect("black"))
        };
        white.abort_on(&stop);
        black.abort_on(&stop);
        white.log_game(number);
        black.log_game(number);
        let names = spec.seat_names(order);
        let _ = events.send(Event::GameStarted {
            number,
            pair,
            white: names[0].into(),
            black: names[1].into(),
        });
        let started_at = SystemTime::now();
        let prepared = match white.new_game().await {
            Err(fault) => Err((Color::White, fault)),
            Ok(()) => black
                .new_game()
                .await
                .map_err(|fault| (Color::Black, fault)),
        };
        let record = match prepared {
            Err((color, fault)) => {
                let opening = spec.opening(pair, game_index);
                crate::game::unplayable(names, opening, color, &fault)
            }
            // Two in-process engines: the whole game on one pool thread (see `builtin`).
            Ok(()) if white.is_builtin() && black.is_builtin() => {
                let spec = Arc::clone(&spec);
                let game = run_on_pool(move || {
                    let game_spec = spec.game_spec(pair, game_index, order);
                    let names = spec.seat_names(order);
                    let record = block_on(play_game(&mut white, &mut black, names, &game_spec));
                    (white, black, record)
                });
                match game.await {
                    Some((w, b, record)) => {
                        (white, black) = (w, b);
                        record
                    }
                    None => {
                        let _ = done.send(Err(MatchError::GamePanicked { pair }));
                        return;
                    }
                }
            }
            Ok(()) => {
                play_game(
                    &mut white,
                    &mut black,
                    names,
                    &spec.game_spec(pair, game_index, order),
                )
                .await
            }
        };
        if let Some(log) = &spec.log {
            log.flush();
        }
        // A player that faulted is not trusted again: drop it (which kills the process) and
        // start a fresh one next time. `restart=on` does the same after every game.
        for (color, player) in [(Color::White, white), (Color::Black, black)] {
            let engine = order[color.index()];
            if record.faulted == Some(color) || spec.players[engine].restart {
                drop(player);
            } else if let Ok(mut pool) = pools[engine].lock() {
                pool.push(player);
            }
        }
        if done
            .send(Ok(Finished {
                pair,
                game_index,
                record,
                started_at,
            }))
            .is_err()
        {
            return;
        }
    }
}

async fn take_player(
    spec: &PlayerSpec,
    pool: &Pool,
    events: &mpsc::UnboundedSender<Event>,
    tap: Option<EngineTap>,
) -> Result<Player, MatchError> {
    if let Some(player) = pool.lock().ok().and_then(|mut p| p.pop()) {
        return Ok(player);
    }
    let player = Player::start_logged(spec, tap).await;
    if let Ok(Player::Uci(engine)) = &player {
        for warning in &engine.option_warnings {
            let _ = events.send(Event::Warning(format!("engine {}: {warning}", spec.name)));
        }
    }
    player.map_err(|fault| MatchError::EngineStart {
        name: spec.name.clone(),
        fault,
    })
}

/// The PGN of game `game_index` of schedule unit `unit`: seven-tag roster, cutechess's extra
/// tags, `{+0.35/12 0.250s}` move comments, and the reason after the last move.
pub fn game_pgn(
    spec: &MatchSpec,
    record: &GameRecord,
    unit: u64,
    game_index: usize,
    started_at: SystemTime,
) -> String {
    let number = spec.game_number(unit, game_index);
    let mut game = Game::new(record.opening.start, spec.rules);
    for &mv in &record.moves {
        game.play_unchecked(mv);
    }
    let mut pgn = PgnGame::from_game(&game, Some(&record.outcome));
    pgn.tags.clear();
    let white = spec.players.iter().position(|p| p.name == record.white);
    let tc = &spec.time_controls[white.unwrap_or(0)];
    for (name, value) in [
        ("Event", spec.event.clone()),
        ("Site", spec.site.clone()),
        ("Date", pgn_date(started_at)),
        // The game's own number is arbiter's tag.
        ("Round", spec.round_tag(unit, game_index).to_string()),
        ("White", record.white.clone()),
        ("Black", record.black.clone()),
        ("Result", record.outcome.result_token().to_owned()),
        (
            "Termination",
            record.outcome.termination.pgn_tag().to_owned(),
        ),
        ("TimeControl", tc.pgn_tag()),
        ("PlyCount", record.plies().to_string()),
        ("GameNumber", number.to_string()),
        ("BookEntry", book_entry(&record.opening.source)),
    ] {
        pgn.set_tag(name, &value);
    }
    pgn.comments = record
        .stats
        .iter()
        .map(|stats| {
            Some(
                stats
                    .as_ref()
                    .map_or_else(|| "book".to_owned(), |s| s.comment()),
            )
        })
        .collect();
    match pgn.comments.last_mut() {
        Some(Some(last)) => {
            last.push_str(", ");
            last.push_str(&record.reason_in_full());
        }
        _ => pgn.leading_comment = Some(record.reason_in_full()),
    }
    pgn.to_pgn().unwrap_or_else(|e| {
        format!(
            "[Event \"{}\"]\n\n{{unwritable game: {e}}} *\n\n",
            spec.event
        )
    })
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

/// One JSON object per game, for `jsonl` output and the store (a [`GameEntry`]).
pub fn game_json(record: &GameRecord, number: u64, pair: u64) -> String {
    let moves: Vec<String> = record
        .moves
        .iter()
        .map(|&mv| move_to_uci(Some(mv)))
        .collect();
    let times: Vec<MoveTime> = record.stats.iter().flatten().map(MoveTime::from).collect();
    let entry = GameEntry {
        schema: records::SCHEMA,
        kind: EntryKind::Game,
        game: number,
        pair,
        white: record.white.clone(),
        black: record.black.clone(),
        result: record.outcome.result_token().to_owned(),
        termination: record.outcome.termination.pgn_tag().to_owned(),
        reason: record.reason.clone(),
        plies: record.plies(),
        // As the PGN's BookEntry names it: the book's file name and line, not the folders of
        // the machine that played it.
        opening: book_entry(&record.opening.source),
        fen: record.opening.start.fen(),
        moves: moves.join(" "),
        move_ms: times.iter().map(|t| t.ms).collect(),
        engine_ms: times.iter().map(|t| t.engine_ms).collect(),
        clock_ms: times.iter().map(|t| t.clock_ms).collect(),
        flagged_move: record.flagged_move.as_ref().map(MoveTime::from),
        duration_ms: record.duration.as_millis() as u64,
        runner_overhead_us: record.overhead.as_micros() as u64,
    };
    serde_json::to_string(&entry).unwrap_or_default()
}

/// `YYYY.MM.DD` in UTC, from the civil-from-days algorithm (no calendar crate needed).
fn pgn_date(time: SystemTime) -> String {
    let days = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    use crate::builtin::BuiltinSpec;
    use crate::openings::BookSpec;
    use crate::player::PlayerKind;
    use crate::process::Timeouts;
    use arbiter_store::{Location, RunSpec};

    /// The pair at which a worker panics, for the test of the collector below (`u64::MAX`:
    /// never). Only that test sets it.
    static DIE_AT_PAIR: AtomicU64 = AtomicU64::new(u64::MAX);

    /// The event of the one test whose workers the hook kills: tests run in parallel, and the
    /// hook must not reach the matches of the others.
    const DYING_EVENT: &str = "a worker dies";

    pub(super) fn maybe_die(spec: &MatchSpec, pair: u64) {
        if spec.event == DYING_EVENT && DIE_AT_PAIR.load(Ordering::SeqCst) == pair {
            panic!("test hook: the worker of pair {pair} dies");
        }
    }

    fn staunton_spec(pairs: u64) -> MatchSpec {
        let player = |name: &str| PlayerSpec {
            name: name.into(),
            kind: PlayerKind::Builtin(Box::new(BuiltinSpec {
                params: staunton::Params::default(),
                hash_mb: 0,
            })),
            timeouts: Timeouts::default(),
            restart: false,
        };
        let tc = TimeControl {
            nodes: Some(100),
            ..TimeControl::default()
        };
        MatchSpec {
            players: vec![player("dev"), player("base")],
            time_controls: vec![tc.clone(), tc],
            pairings: vec![[0, 1]],
            kind: TournamentKind::Match,
            time_margin: Duration::from_millis(50),
            book: Book::load(&BookSpec::default()).unwrap(),
            pairs,
            games: 2 * pairs,
            paired: true,
            concurrency: 2,
            adjudication: Adjudication {
                maxmoves: Some(20),
                ..Adjudication::default()
            },
            rules: RuleSet::default(),
            sprt: None,
            recover: true,
            seed: 1,
            event: "test".into(),
            site: "here".into(),
            warnings: Vec::new(),
            log: None,
        }
    }

    /// A round-robin's schedule: a round plays every pairing once, each pairing's first engine
    /// White in game 0, all from the round's opening; pair k of pairing p is the same unit
    /// whichever way it is reached.
    #[test]
    fn a_round_plays_every_pairing_from_its_opening() {
        let mut spec = staunton_spec(0);
        let tc = spec.time_controls[0].clone();
        let mut third = spec.players[1].clone();
        third.name = "old".into();
        spec.players.push(third);
        spec.time_controls.push(tc);
        spec.pairings = vec![[0, 1], [0, 2], [1, 2]];
        spec.kind = TournamentKind::RoundRobin;
        spec.pairs = 3 * 5;
        spec.book = Book::load(&BookSpec {
            file: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd").into()),
            ..BookSpec::default()
        })
        .unwrap();
        for pairing in 0..3 {
            assert_eq!(spec.pairs_in(pairing), 5);
        }
        let mut seen = BTreeSet::new();
        for unit in 0..spec.pairs {
            let (pairing, index) = spec.pairing_of(unit);
            assert_eq!(spec.unit_of(pairing, index), unit);
            assert!(seen.insert((pairing, index)));
            assert_eq!(index, unit / 3, "round by round");
            let [first, second] = spec.pairings[pairing];
            assert_eq!(spec.seats(unit, 0), [first, second]);
            assert_eq!(spec.seats(unit, 1), [second, first]);
            // Every pairing of a round plays the round's opening, both games.
            let round_opening = spec.opening_index(spec.unit_of(0, index), 0);
            assert_eq!(spec.opening_index(unit, 0), round_opening);
            assert_eq!(spec.opening_index(unit, 1), round_opening);
        }
        assert_eq!(seen.len(), 15);
        let openings: BTreeSet<usize> = (0..5).map(|k| spec.opening_index(3 * k, 0)).collect();
        assert_eq!(openings.len(), 5, "each round its own opening");
    }

    /// The in-memory sink plays exactly the pairs asked for, with the results the store-and-SPRT
    /// sink commits for the same pairs (in-process games at a node limit are deterministic).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_tally_sink_counts_what_the_store_sink_commits() {
        let spec = Arc::new(staunton_spec(4));
        let tally = |pairs: &[u64]| {
            let spec = spec.clone();
            let pairs: BTreeSet<u64> = pairs.iter().copied().collect();
            async move {
                let (events, mut received) = mpsc::unbounded_channel();
                let totals = tally_pairs(spec, &pairs, events).await.unwrap();
                let mut played = BTreeSet::new();
                while let Ok(event) = received.try_recv() {
                    if let Event::GameFinished { pair, .. } = event {
                        played.insert(pair);
                    }
                }
                assert_eq!(played, pairs, "exactly the pairs asked for");
                totals
            }
        };
        let mut odd_and_even = tally(&[1, 3]).await;
        let even = tally(&[0, 2]).await;
        assert_eq!(odd_and_even.pairs, 2);
        for (i, count) in even.pentanomial.iter().enumerate() {
            odd_and_even.pentanomial[i] += count;
        }
        odd_and_even.pairs += even.pairs;
        odd_and_even.wins += even.wins;
        odd_and_even.draws += even.draws;
        odd_and_even.losses += even.losses;

        let dir = tempfile::tempdir().unwrap();
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Arc::new(Store::open(&location).await.unwrap());
        let run = store
            .create_run(&RunSpec::head_to_head(
                "both".into(),
                1,
                String::new(),
                "dev".into(),
                "base".into(),
                4,
            ))
            .await
            .unwrap();
        let (events, _received) = mpsc::unbounded_channel();
        let (_cancel, cancelled) = watch::channel(false);
        let summary = run_match(spec, store, run, events, cancelled)
            .await
            .unwrap();
        assert_eq!(summary.totals, odd_and_even);
    }

    /// A worker that dies must not make the run complete with pairs missing: the error names the
    /// pair, the store still says running, and a rerun plays exactly what is missing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_that_dies_leaves_the_run_resumable() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Arc::new(Store::open(&location).await.unwrap());
        let run = store
            .create_run(&RunSpec::head_to_head(
                "dies".into(),
                1,
                String::new(),
                "dev".into(),
                "base".into(),
                6,
            ))
            .await
            .unwrap();
        let spec = Arc::new(MatchSpec {
            event: DYING_EVENT.into(),
            ..staunton_spec(6)
        });
        let play = |spec: Arc<MatchSpec>| {
            let store = store.clone();
            async move {
                let (events, _received) = mpsc::unbounded_channel();
                let (_cancel, cancelled) = watch::channel(false);
                run_match(spec, store, run, events, cancelled).await
            }
        };
        DIE_AT_PAIR.store(3, Ordering::SeqCst);
        let err = play(spec.clone()).await.unwrap_err();
        DIE_AT_PAIR.store(u64::MAX, Ordering::SeqCst);
        let text = err.to_string();
        assert!(
            matches!(err, MatchError::WorkerEnded { pair: 3, .. }),
            "{text}"
        );
        assert!(text.contains("panicked: test hook"), "{text}");
        assert_eq!(store.run(run).await.unwrap().state, RunState::Running);
        let committed = store.committed_pairs(run).await.unwrap();
        assert!(!committed.contains(&key(3)), "{committed:?}");

        let summary = play(spec).await.unwrap();
        assert_eq!(summary.verdict, Verdict::Complete);
        assert_eq!(summary.totals.pairs, 6);
        assert_eq!(
            store.committed_pairs(run).await.unwrap(),
            (0..6).map(key).collect::<BTreeSet<_>>()
        );
    }

    /// Pair `index` of a match: its run's one pairing.
    fn key(index: u64) -> PairKey {
        PairKey { pairing: 0, index }
    }

    /// Both games of every pair the store lacks, in order, and nothing planned ahead.
    #[test]
    fn schedule_hands_out_the_missing_pairs_lazily() {
        let mut schedule = Schedule {
            spec: Arc::new(staunton_spec(5)),
            next_pair: 0,
            second_game_of: None,
            committed: Arc::new([1, 3].into_iter().collect()),
        };
        let games: Vec<_> = std::iter::from_fn(|| schedule.next_game()).collect();
        assert_eq!(games, [(0, 0), (0, 1), (2, 0), (2, 1), (4, 0), (4, 1)]);
        let mut huge = Schedule {
            spec: Arc::new(staunton_spec(crate::config::MAX_PAIRS)),
            next_pair: 0,
            second_game_of: None,
            committed: Arc::default(),
        };
        assert_eq!(huge.next_game(), Some((0, 0)));
        assert_eq!(huge.next_game(), Some((0, 1)));
        assert_eq!(huge.next_pair, 1, "one pair taken, none planned");
    }

    /// cutechess's `-games 1 -rounds 3` in a three-engine round-robin: each pairing plays a
    /// unit of two games, then a last round of one game each; nine games numbered 1 to 9, each
    /// from its own opening, colours alternating by game within a pairing.
    #[test]
    fn an_odd_number_of_single_games_ends_with_a_round_of_one() {
        let mut spec = staunton_spec(6);
        let mut third = spec.players[1].clone();
        third.name = "old".into();
        spec.players.push(third);
        spec.time_controls.push(spec.time_controls[0].clone());
        spec.pairings = vec![[0, 1], [0, 2], [1, 2]];
        spec.kind = TournamentKind::RoundRobin;
        spec.paired = false;
        spec.games = 9;
        let spec = Arc::new(spec);
        let mut schedule = Schedule {
            spec: spec.clone(),
            next_pair: 0,
            second_game_of: None,
            committed: Arc::default(),
        };
        let games: Vec<_> = std::iter::from_fn(|| schedule.next_game()).collect();
        assert_eq!(
            games,
            [
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (3, 0),
                (4, 0),
                (5, 0)
            ]
        );
        let numbers: Vec<u64> = games
            .iter()
            .map(|&(unit, g)| spec.game_number(unit, g))
            .collect();
        assert_eq!(numbers, (1..=9).collect::<Vec<_>>());
        let rounds: Vec<u64> = games.iter().map(|&(u, g)| spec.round_tag(u, g)).collect();
        assert_eq!(rounds, [1, 2, 1, 2, 1, 2, 3, 3, 3]);
        assert_eq!(
            spec.seats(3, 0),
            [0, 1],
            "the third game of a pairing: first is White"
        );
    }

    #[test]
    fn dates() {
        assert_eq!(pgn_date(UNIX_EPOCH), "1970.01.01");
        assert_eq!(
            pgn_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000.02.29"
        );
        assert_eq!(
            pgn_date(UNIX_EPOCH + Duration::from_secs(1_795_910_400)),
            "2026.11.29"
        );
    }
}
