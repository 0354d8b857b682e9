//! The play step: units of a run's schedule in, finished pairs out, pushed into a sink.
//!
//! Workers (one per game in flight) take games from the schedule, seat players borrowed from
//! per-engine pools (in process or over UCI), play them, and hand the finished games back;
//! [`Play`] joins the games of each unit and hands the unit over. It knows nothing of stores,
//! SPRTs or files: what happens to a finished pair is the sink's (see [`crate::sinks`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use arbiter_rules::{Color, Game, RuleSet, Termination};
use arbiter_stats::{SprtStatus, StatsError};
use arbiter_store::{
    GameResult, GameRow, PairKey, PairRecord, PairTally, RunId, StoreError, Totals,
};
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, watch};

use crate::commlog::EngineTap;
use crate::executor::{block_on, run_on_pool};
use crate::game::{play_game, GameRecord};
use crate::player::{Player, PlayerKind, PlayerSpec};
use crate::process::EngineFault;
use crate::render::{game_json, game_pgn};
use crate::spec::PlaySpec;

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
    /// in [`PlaySpec::pairings`]); a match has none beyond `totals`. `record` is the pair as
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
    /// A unit was asked for that the run's schedule does not have.
    #[error("pair {pair} is not in the run's schedule (pairs 0 to {})", pairs.saturating_sub(1))]
    NoSuchPair { pair: u64, pairs: u64 },
    /// An engine faulted with `recover` off, where no store keeps the run (the tally sink).
    #[error("engine fault (recover is off): {0}")]
    Fault(String),
}

/// One finished game on its way from a worker to [`Play`].
struct Finished {
    pair: u64,
    game_index: usize,
    record: GameRecord,
    started_at: SystemTime,
}

/// A finished game of a played unit, written once as PGN and JSON (for the events, the store
/// and whatever else a sink sends it to).
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// The schedule unit (pair) it belongs to.
    pub pair: u64,
    /// Its index within the unit: 0 (the pairing's first engine White) or 1 (colours swapped,
    /// or in an unpaired run the unit's second game).
    pub game_index: usize,
    /// Its number in the run, from 1 ([`PlaySpec::game_number`]).
    pub number: u64,
    /// Whether the pairing's first engine had White ([`PlaySpec::seats`]): in game 0 of a
    /// pair it does, in game 1 it does not, and in a handicap match the giver's side decides.
    pub first_white: bool,
    pub record: GameRecord,
    pub started_at: SystemTime,
    pub pgn: String,
    pub json: String,
}

impl PlayedGame {
    /// The game as the store keeps it.
    pub fn row(&self, spec: &PlaySpec) -> GameRow {
        let record = &self.record;
        GameRow {
            game_number: self.number,
            white: record.white.clone(),
            black: record.black.clone(),
            result: match record.outcome.winner {
                Some(Color::White) => GameResult::WhiteWins,
                Some(Color::Black) => GameResult::BlackWins,
                None => GameResult::Draw,
            },
            termination: record.outcome.termination.pgn_tag().to_owned(),
            plies: record.plies() as u32,
            opening_index: spec.opening_index(self.pair, self.game_index) as u64,
            opening_fen: record.opening.start.fen(),
            pgn: self.pgn.clone(),
            json: self.json.clone(),
            started_at: self.started_at,
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

/// A started player, with the spec it was started from (or last set to).
struct Kept {
    spec: PlayerSpec,
    player: Player,
}

/// Started players, kept between games and between calls of [`play_with`]: a tuner's steps
/// and a worker's batches reuse the engines the previous ones started. An idle player is
/// taken as it is when its spec is unchanged; a UCI engine whose spec differs only in option
/// values is sent the changed `setoption`s (and `isready`) instead of being restarted; anything
/// else (another program, an option dropped, a faulted engine, `restart=on`) starts afresh.
#[derive(Default)]
pub struct Players {
    /// Idle players by engine index in the spec.
    idle: Mutex<Vec<Vec<Kept>>>,
}

impl Players {
    fn take(&self, engine: usize) -> Option<Kept> {
        self.idle.lock().ok()?.get_mut(engine)?.pop()
    }

    fn put(&self, engine: usize, kept: Kept) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() <= engine {
                idle.resize_with(engine + 1, Vec::new);
            }
            idle[engine].push(kept);
        }
    }

    /// Shuts the idle engines down politely (busy ones are killed when dropped).
    pub async fn shutdown(&self) {
        let idle: Vec<Kept> = self
            .idle
            .lock()
            .map(|mut idle| idle.drain(..).flatten().collect())
            .unwrap_or_default();
        for kept in idle {
            kept.player.shutdown().await;
        }
    }
}

/// Sets `kept` to `spec` without a restart, if only UCI option values differ: sends the
/// options whose values changed, then waits for `readyok`. `false` if it cannot (the player
/// must be started afresh).
async fn refit(kept: &mut Kept, spec: &PlayerSpec) -> bool {
    let (PlayerKind::Uci(was), PlayerKind::Uci(now), Player::Uci(engine)) =
        (&kept.spec.kind, &spec.kind, &mut kept.player)
    else {
        return false;
    };
    let same_program = was.cmd == now.cmd && was.args == now.args && was.dir == now.dir;
    let same_engine = same_program
        && was.env == now.env
        && kept.spec.name == spec.name
        && kept.spec.timeouts == spec.timeouts
        && kept.spec.restart == spec.restart;
    // An option the new spec no longer sets cannot be unset: only a restart gives the
    // engine's default back.
    let kept_all = was
        .options
        .iter()
        .all(|(name, _)| now.options.iter().any(|(n, _)| n == name));
    if !same_engine || !kept_all {
        return false;
    }
    for (name, value) in &now.options {
        if was.options.iter().any(|(n, v)| n == name && v == value) {
            continue;
        }
        if engine.set_option(name, value).await.is_err() {
            return false;
        }
    }
    if engine.sync().await.is_err() {
        return false;
    }
    kept.spec = spec.clone();
    true
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

/// A pair whose two games are finished (or a unit of one game, see [`PlaySpec::games_of`]),
/// each written once as PGN and JSON, in game order.
#[derive(Clone, Debug)]
pub struct PlayedPair {
    pub pair: u64,
    pub games: Vec<PlayedGame>,
}

impl PlayedPair {
    /// The pair's result from the first engine's side.
    pub fn tally(&self) -> PairTally {
        let mut tally = PairTally {
            wins: 0,
            draws: 0,
            losses: 0,
            penta: 0,
        };
        for game in &self.games {
            let first = if game.first_white {
                Color::White
            } else {
                Color::Black
            };
            let half_points = game.record.half_points(first);
            match half_points {
                2 => tally.wins += 1,
                1 => tally.draws += 1,
                _ => tally.losses += 1,
            }
            // The unit's score in half points: a pair's pentanomial bucket.
            tally.penta += half_points;
        }
        tally
    }

    /// The store's record of the pair in `run`.
    pub fn record(&self, spec: &PlaySpec, run: RunId) -> PairRecord {
        let (pairing, index) = spec.pairing_of(self.pair);
        PairRecord {
            run,
            key: PairKey {
                pairing: pairing as u32,
                index,
            },
            tally: self.tally(),
            games: self.games.iter().map(|game| game.row(spec)).collect(),
        }
    }
}

/// What a sink wants after taking a pair.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Play on.
    Continue,
    /// Stop: the games in flight are abandoned, uncounted (an SPRT decided, a server has
    /// enough).
    Stop,
}

/// Where [`play`] pushes each finished pair: a store that commits it and decides whether to go
/// on (the match's sink), a tally in memory (the tuner's), or whatever a fleet needs (a
/// database of batches, a server the results are posted to). Pairs arrive in the order they
/// finish, which is not the order they were asked for when several games are in flight.
pub trait PairSink {
    /// Takes one finished pair. An error stops play with it; nothing of a pair the sink did not
    /// take is counted anywhere.
    fn take(
        &mut self,
        pair: PlayedPair,
    ) -> impl std::future::Future<Output = Result<Flow, MatchError>> + Send;
}

/// Why [`play`] returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every unit asked for was played and taken.
    Played,
    /// The sink said [`Flow::Stop`].
    Stopped,
    /// `cancel` turned true (Ctrl-C).
    Cancelled,
    /// An engine crashed or stalled under `recover = false`; the text says where.
    Fault(String),
}

/// How [`play`] ended, and the games it leaves uncounted.
#[derive(Debug)]
pub struct Ending {
    pub end: End,
    /// Games played to the end whose unit was not complete when play stopped, as the store
    /// would keep them, in game order (the faulted game among them): see [`Play::unfinished`].
    pub unfinished: Vec<GameRow>,
}

/// The play step: plays the schedule units `units` of `spec` (pair indices below
/// `spec.pairs`), in the order given, and pushes each finished pair into `sink`. Each unit is
/// played with the seats and openings that (seed, unit) fix, so a unit played here is the
/// same game as the same unit played by any other run of `spec`, on any machine, in any
/// order. Per-game events (started, finished, warnings) go to `events`. `cancel` turning true
/// stops play (games in flight are abandoned; a pair being taken is taken first).
pub async fn play<I>(
    spec: &Arc<PlaySpec>,
    units: I,
    sink: &mut impl PairSink,
    events: &mpsc::UnboundedSender<Event>,
    cancel: &mut watch::Receiver<bool>,
) -> Result<Ending, MatchError>
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Send + 'static,
{
    let players = Arc::new(Players::default());
    let ending = play_with(spec, units, sink, &players, events, cancel).await;
    players.shutdown().await;
    ending
}

/// [`play`] with engines started earlier and kept for later (see [`Players`]): a tuner's
/// steps and a worker's batches pay engine start-up once, not once per call.
pub async fn play_with<I>(
    spec: &Arc<PlaySpec>,
    units: I,
    sink: &mut impl PairSink,
    players: &Arc<Players>,
    events: &mpsc::UnboundedSender<Event>,
    cancel: &mut watch::Receiver<bool>,
) -> Result<Ending, MatchError>
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Send + 'static,
{
    let mut play = Play::start(spec.clone(), units, players.clone(), events.clone());
    // Once every sender of `cancel` is gone, nothing can cancel any more.
    let mut cancellable = true;
    let end = loop {
        let played = if cancellable {
            tokio::select! {
                played = play.next_pair() => played,
                changed = cancel.changed() => {
                    match changed {
                        Ok(()) if *cancel.borrow() => break End::Cancelled,
                        Ok(()) => {}
                        Err(_) => cancellable = false,
                    }
                    continue;
                }
            }
        } else {
            play.next_pair().await
        };
        let taken = match played {
            Ok(Some(Played::Pair(pair))) => sink.take(*pair).await,
            Ok(Some(Played::Fault(reason))) => break End::Fault(reason),
            Ok(None) => break End::Played,
            Err(err) => Err(err),
        };
        match taken {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => break End::Stopped,
            Err(err) => {
                play.finish().await;
                return Err(err);
            }
        }
    };
    let unfinished = play.unfinished();
    play.finish().await;
    Ok(Ending { end, unfinished })
}

/// Play as a stream: the games of the units asked for in, finished pairs out ([`play`] pushes
/// them into a sink). It owns the workers (one per game in flight) and borrows started players
/// from [`Players`], seating in process or over UCI, faults and restarts; it knows nothing of
/// stores, SPRTs or files. The per-game events (started, finished, warnings) go to `events` as
/// games end.
pub struct Play {
    spec: Arc<PlaySpec>,
    events: mpsc::UnboundedSender<Event>,
    done: mpsc::UnboundedReceiver<Result<Finished, MatchError>>,
    halves: HashMap<u64, [Option<PlayedGame>; 2]>,
    schedule: Arc<Mutex<Schedule>>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    /// A crash or stall under `recover = false` that completed its pair: handed over after
    /// that pair.
    stopping: Option<String>,
}

impl Play {
    /// Starts playing the schedule units `units` of `spec`, in that order (see [`play`]).
    pub fn start<I>(
        spec: Arc<PlaySpec>,
        units: I,
        players: Arc<Players>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Play
    where
        I: IntoIterator<Item = u64>,
        I::IntoIter: Send + 'static,
    {
        Play::start_units(spec, Box::new(units.into_iter()), players, events)
    }

    /// [`Play::start`] without its type parameter. The workers it spawns (the game loop, the
    /// engines, UCI) are compiled here once, not again for each caller's type of `units`.
    fn start_units(
        spec: Arc<PlaySpec>,
        units: Box<dyn Iterator<Item = u64> + Send>,
        players: Arc<Players>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Play {
        // No more workers than there can be games: a worker starts its engines only once it
        // has a game, so one too many costs nothing but a task.
        let most = units.size_hint().1.map_or(u64::MAX, |n| n as u64);
        let in_flight = (spec.concurrency.max(1) as u64).min(most.saturating_mul(2));
        let schedule = Arc::new(Mutex::new(Schedule {
            spec: spec.clone(),
            units,
            second_game_of: None,
            in_flight: BTreeSet::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (done_tx, done) = mpsc::unbounded_channel::<Result<Finished, MatchError>>();
        let workers = (0..in_flight)
            .map(|_| {
                let (spec, schedule, players, stop, done, events) = (
                    spec.clone(),
                    schedule.clone(),
                    players.clone(),
                    stop.clone(),
                    done_tx.clone(),
                    events.clone(),
                );
                tokio::spawn(
                    async move { worker(spec, schedule, players, stop, done, events).await },
                )
            })
            .collect();
        Play {
            spec,
            events,
            done,
            halves: HashMap::new(),
            schedule,
            workers,
            stop,
            stopping: None,
        }
    }

    /// The next finished pair, in the order pairs finish; `None` once every unit asked for
    /// was handed over. Cancel-safe: dropping the future loses no game. Boxed, like the
    /// store's futures, so that the game loop behind it is compiled in this crate only.
    pub fn next_pair(&mut self) -> BoxFuture<'_, Result<Option<Played>, MatchError>> {
        Box::pin(self.next_pair_body())
    }

    async fn next_pair_body(&mut self) -> Result<Option<Played>, MatchError> {
        if let Some(text) = self.stopping.take() {
            return Ok(Some(Played::Fault(text)));
        }
        loop {
            // The workers end when the schedule is empty; the channel closes when the last
            // one has: every game was sent by then, unless a worker died with its game.
            let finished = match self.done.recv().await {
                Some(finished) => finished?,
                None if self.missing().is_none() => return Ok(None),
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
            let first = spec.pairings[spec.pairing_of(pair).0][0];
            let game = PlayedGame {
                pair,
                game_index: index,
                number,
                first_white: spec.seats(pair, index)[0] == first,
                record: finished.record,
                started_at: finished.started_at,
                pgn,
                json,
            };
            let _ = self.events.send(Event::GameFinished {
                number,
                pair,
                record: Arc::new(game.record.clone()),
                pgn: game.pgn.clone(),
                json: game.json.clone(),
            });
            let games = spec.games_of(pair);
            let slot = self.halves.entry(pair).or_default();
            slot[index] = Some(game);
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
            if let Ok(mut schedule) = self.schedule.lock() {
                schedule.in_flight.remove(&pair);
            }
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
            .map(|game| game.row(&self.spec))
            .collect();
        rows.sort_by_key(|row| row.game_number);
        rows
    }

    /// The first unit handed to a worker and not handed over, if any.
    fn missing(&self) -> Option<u64> {
        let schedule = self.schedule.lock().ok()?;
        schedule.in_flight.first().copied()
    }

    /// Every worker is gone with a unit still missing: one ended without reporting (a panic).
    /// The error names the first missing unit; nothing of it was handed over, so a sink that
    /// stores pairs stays resumable.
    async fn worker_ended(&mut self) -> MatchError {
        stop_workers(&self.stop, &self.workers);
        let pair = self.missing().unwrap_or_default();
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

    /// Stops the workers (games in flight are abandoned; their engines go with them). Idle
    /// engines stay in the [`Players`] for whoever plays next, or [`Players::shutdown`].
    pub async fn finish(self) {
        stop_workers(&self.stop, &self.workers);
        for worker in self.workers {
            let _ = worker.await;
        }
    }
}

/// The games still to play, handed out in order as workers ask: both games of each unit the
/// caller asked for, in the caller's order, taken from its iterator one unit at a time.
/// Nothing is planned ahead, so a run of a billion pairs costs no more memory than one of ten.
struct Schedule {
    spec: Arc<PlaySpec>,
    units: Box<dyn Iterator<Item = u64> + Send>,
    /// Unit whose second game (colours swapped) is still to be handed out.
    second_game_of: Option<u64>,
    /// Units handed out and not yet handed over whole: what is missing if a worker dies. As
    /// many as there are games in flight.
    in_flight: BTreeSet<u64>,
}

impl Schedule {
    /// The next game as (unit, game index); `None` when every unit was handed out. A unit
    /// outside the schedule is an error, named by the unit; one asked for again while it is
    /// still being played is played once.
    fn next_game(&mut self) -> Result<Option<(u64, usize)>, MatchError> {
        if let Some(unit) = self.second_game_of.take() {
            return Ok(Some((unit, 1)));
        }
        for unit in self.units.by_ref() {
            if unit >= self.spec.pairs {
                return Err(MatchError::NoSuchPair {
                    pair: unit,
                    pairs: self.spec.pairs,
                });
            }
            if !self.in_flight.insert(unit) {
                continue;
            }
            if self.spec.games_of(unit) == 2 {
                self.second_game_of = Some(unit);
            }
            return Ok(Some((unit, 0)));
        }
        Ok(None)
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

async fn worker(
    spec: Arc<PlaySpec>,
    queue: Arc<Mutex<Schedule>>,
    players: Arc<Players>,
    stop: Arc<AtomicBool>,
    done: mpsc::UnboundedSender<Result<Finished, MatchError>>,
    events: mpsc::UnboundedSender<Event>,
) {
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let next = match queue.lock() {
            Ok(mut schedule) => schedule.next_game(),
            Err(_) => Ok(None),
        };
        let (pair, game_index) = match next {
            Ok(Some(game)) => game,
            Ok(None) => return,
            Err(err) => {
                let _ = done.send(Err(err));
                return;
            }
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
            match take_player(player, engine, &players, &stop, &events, tap).await {
                Ok(kept) => seats.push(kept),
                Err(err) => {
                    let _ = done.send(Err(err));
                    return;
                }
            }
        }
        let (
            Kept {
                spec: white_spec,
                player: mut white,
            },
            Kept {
                spec: black_spec,
                player: mut black,
            },
        ) = {
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
        for (color, spec, player) in [
            (Color::White, white_spec, white),
            (Color::Black, black_spec, black),
        ] {
            let engine = order[color.index()];
            if record.faulted == Some(color) || spec.restart {
                drop(player);
            } else {
                players.put(engine, Kept { spec, player });
            }
        }
        // The next game's colours may follow from this one's result (the drawn-game colour
        // rule): recorded before this worker asks for its next game.
        if let Some(rule) = &spec.drawn_game_colours {
            let drawn = record.half_points(Color::White) == 1;
            rule.record(number, order[0], drawn);
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

/// A player for engine `engine` of the spec, set to `spec`: an idle one as it is or refitted
/// (see [`Players`]), else a fresh one.
async fn take_player(
    spec: &PlayerSpec,
    engine: usize,
    players: &Players,
    stop: &Arc<AtomicBool>,
    events: &mpsc::UnboundedSender<Event>,
    tap: Option<EngineTap>,
) -> Result<Kept, MatchError> {
    while let Some(mut kept) = players.take(engine) {
        // A player kept from an earlier call still answers to that call's stop flag, which
        // its end set: this play's flag replaces it before anything is asked of the engine.
        kept.player.abort_on(stop);
        if kept.spec == *spec || refit(&mut kept, spec).await {
            return Ok(kept);
        }
        // Neither the same nor refittable: this one ends (dropping kills the process).
    }
    let player = Player::start_logged(spec, tap).await;
    if let Ok(Player::Uci(engine)) = &player {
        for warning in &engine.option_warnings {
            let _ = events.send(Event::Warning(format!("engine {}: {warning}", spec.name)));
        }
    }
    match player {
        Ok(player) => Ok(Kept {
            spec: spec.clone(),
            player,
        }),
        Err(fault) => Err(MatchError::EngineStart {
            name: spec.name.clone(),
            fault,
        }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    use crate::spec::tests::test_spec;
    use crate::spec::TournamentKind;

    /// The pair at which a worker panics, for the test of a dying worker in
    /// [`crate::sinks`]'s tests (`u64::MAX`: never). Only that test sets it.
    pub(crate) static DIE_AT_PAIR: AtomicU64 = AtomicU64::new(u64::MAX);

    /// The event of the one test whose workers the hook kills: tests run in parallel, and the
    /// hook must not reach the matches of the others.
    pub(crate) const DYING_EVENT: &str = "a worker dies";

    pub(super) fn maybe_die(spec: &PlaySpec, pair: u64) {
        if spec.event == DYING_EVENT && DIE_AT_PAIR.load(Ordering::SeqCst) == pair {
            panic!("test hook: the worker of pair {pair} dies");
        }
    }

    fn schedule_of<I>(spec: Arc<PlaySpec>, units: I) -> Schedule
    where
        I: IntoIterator<Item = u64>,
        I::IntoIter: Send + 'static,
    {
        Schedule {
            spec,
            units: Box::new(units.into_iter()),
            second_game_of: None,
            in_flight: BTreeSet::new(),
        }
    }

    /// Every game the schedule hands out, as (unit, game index).
    fn all_games(schedule: &mut Schedule) -> Vec<(u64, usize)> {
        std::iter::from_fn(|| schedule.next_game().unwrap()).collect()
    }

    /// Both games of each unit asked for, in the order asked, and nothing planned ahead: the
    /// schedule takes one unit from its iterator at a time.
    #[test]
    fn schedule_hands_out_the_units_asked_for_lazily() {
        let spec = Arc::new(test_spec(10));
        let mut schedule = schedule_of(spec.clone(), [5, 2, 9]);
        assert_eq!(
            all_games(&mut schedule),
            [(5, 0), (5, 1), (2, 0), (2, 1), (9, 0), (9, 1)]
        );
        // As many units as a run may have (config's MAX_PAIRS), and more.
        let units = 1 << 40;
        let mut huge = schedule_of(Arc::new(test_spec(units)), (0..units).rev());
        let last = units - 1;
        assert_eq!(huge.next_game().unwrap(), Some((last, 0)));
        assert_eq!(huge.next_game().unwrap(), Some((last, 1)));
        assert_eq!(
            huge.units.size_hint().0 as u64,
            last,
            "one unit taken, none planned"
        );
    }

    /// A unit outside the schedule is an error that names it, not a game of some other unit;
    /// one asked for twice while it plays is played once.
    #[test]
    fn schedule_refuses_a_unit_it_does_not_have() {
        let spec = Arc::new(test_spec(4));
        let mut twice = schedule_of(spec.clone(), [1, 1, 3]);
        assert_eq!(all_games(&mut twice), [(1, 0), (1, 1), (3, 0), (3, 1)]);
        let mut beyond = schedule_of(spec, [4]);
        let err = beyond.next_game().unwrap_err();
        assert!(
            matches!(err, MatchError::NoSuchPair { pair: 4, pairs: 4 }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "pair 4 is not in the run's schedule (pairs 0 to 3)"
        );
    }

    /// cutechess's `-games 1 -rounds 3` in a three-engine round-robin: each pairing plays a
    /// unit of two games, then a last round of one game each; nine games numbered 1 to 9, each
    /// from its own opening, colours alternating by game within a pairing.
    #[test]
    fn an_odd_number_of_single_games_ends_with_a_round_of_one() {
        let mut spec = test_spec(6);
        let mut third = spec.players[1].clone();
        third.name = "old".into();
        spec.players.push(third);
        spec.time_controls.push(spec.time_controls[0].clone());
        spec.pairings = vec![[0, 1], [0, 2], [1, 2]];
        spec.kind = TournamentKind::RoundRobin;
        spec.paired = false;
        spec.games = 9;
        let spec = Arc::new(spec);
        let mut schedule = schedule_of(spec.clone(), 0..spec.pairs);
        let games = all_games(&mut schedule);
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
}
