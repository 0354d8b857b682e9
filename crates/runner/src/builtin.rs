//! staunton in process: the fast player for self-play.
//!
//! No processes and no pipes: a game's engine is a value, and its searches run on the CPU pool
//! of [`crate::executor`], so thousands of games can be in flight at once (each with a small
//! hash) while only as many searches run as there are cores.
//!
//! A game between two in-process engines runs whole on one pool thread (`run_on_pool` with
//! `block_on`): each search then starts inline, with no hand-over between the async runtime
//! and the pool per move, and both engines' tables stay in that core's cache. That is where
//! the in-process path gains on a UCI engine when searches are short. A game against a UCI
//! engine runs on a thread of its own (see [`crate::game::play_game`]) and sends each
//! in-process search to the pool, where the waiting game costs nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbiter_rules::uci::move_to_uci;
use arbiter_rules::Position;
use staunton::{Engine, Limits, Params, SearchResult};

use crate::executor::{on_pool, run_on_pool};
use crate::process::{EngineFault, Reply};
use crate::uci::{GoLimits, Info};

/// How to build the in-process engine.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltinSpec {
    pub params: Params,
    pub hash_mb: usize,
}

/// One game's in-process engine.
pub struct BuiltinPlayer {
    /// Taken while a search runs on the pool, given back with its result.
    engine: Option<Box<Engine>>,
    /// The match's stop flag: once it is set, searches return at once, so that a game the
    /// match no longer wants does not keep a core busy to its end.
    abort: Option<Arc<AtomicBool>>,
    /// `Timeouts::unclocked_move`: where a search without a clock is cut off and the move
    /// scored as a stall, as a UCI engine's would be.
    move_timeout: Option<Duration>,
}

impl BuiltinPlayer {
    pub fn new(spec: &BuiltinSpec, move_timeout: Option<Duration>) -> BuiltinPlayer {
        BuiltinPlayer {
            engine: Some(Box::new(Engine::new(spec.params.clone(), spec.hash_mb))),
            abort: None,
            move_timeout,
        }
    }

    /// Ends this player's searches early once `stop` is set.
    pub fn abort_on(&mut self, stop: Arc<AtomicBool>) {
        self.abort = Some(stop);
    }

    /// Whether the match has stopped this player's searches.
    pub fn stopped(&self) -> bool {
        self.abort
            .as_deref()
            .is_some_and(|stop| stop.load(Ordering::Relaxed))
    }

    pub fn new_game(&mut self) {
        if let Some(engine) = self.engine.as_mut() {
            engine.new_game();
        }
    }

    /// Searches the last position of `history`: right here on a pool thread, else on the
    /// pool. The clock is the search's own elapsed time, not the time spent queueing for a
    /// core, so a full pool never costs a game on time.
    ///
    /// `deadline` is when the side's flag falls (the game loop judges that); without one the
    /// search is cut off at the move timeout, as the runner's `stop` cuts off a UCI engine's,
    /// and the move is a stall (`no bestmove within 60 s`), not a move: a limit on the
    /// runner's patience is not a time control the engine plays to.
    pub async fn think(
        &mut self,
        history: &[Position],
        limits: &GoLimits,
        deadline: Option<Duration>,
    ) -> Result<Reply, EngineFault> {
        let cut_off = self.move_timeout.filter(|_| deadline.is_none());
        let reply = self.search(history, limits, cut_off).await?;
        match cut_off {
            Some(limit) if reply.elapsed >= limit && !self.stopped() => Err(EngineFault::Stalled {
                expected: "bestmove",
                waited: limit,
            }),
            _ => Ok(reply),
        }
    }

    async fn search(
        &mut self,
        history: &[Position],
        limits: &GoLimits,
        cut_off: Option<Duration>,
    ) -> Result<Reply, EngineFault> {
        let limits = Limits {
            stop_at: cut_off,
            ..to_staunton(limits)
        };
        // Without a match to stop it, a search is stopped by its limits alone.
        static NEVER: AtomicBool = AtomicBool::new(false);
        if on_pool() {
            let engine = self.engine.as_mut().ok_or(EngineFault::Exited)?;
            let abort = self.abort.as_deref().unwrap_or(&NEVER);
            let (result, elapsed) = search(engine, history, &limits, abort);
            return Ok(reply(&result, elapsed));
        }
        let abort = self.abort.clone();
        let mut engine = self.engine.take().ok_or(EngineFault::Exited)?;
        let history = history.to_vec();
        let (engine, result, elapsed) = run_on_pool(move || {
            let abort = abort.as_deref().unwrap_or(&NEVER);
            let (result, elapsed) = search(&mut engine, &history, &limits, abort);
            (engine, result, elapsed)
        })
        .await
        .ok_or(EngineFault::Exited)?;
        self.engine = Some(engine);
        Ok(reply(&result, elapsed))
    }
}

fn search(
    engine: &mut Engine,
    history: &[Position],
    limits: &Limits,
    stop: &AtomicBool,
) -> (SearchResult, Duration) {
    let started = Instant::now();
    let result = engine.search(history, limits, stop, &mut |_| {});
    (result, started.elapsed())
}

/// The search's answer in the form a UCI engine's `info` and `bestmove` take.
fn reply(result: &SearchResult, elapsed: Duration) -> Reply {
    let info = Info {
        depth: Some(result.depth),
        seldepth: Some(result.seldepth),
        score: Some(result.score),
        nodes: Some(result.nodes),
        time: Some(result.elapsed),
        pv: result.pv.iter().map(|&mv| move_to_uci(Some(mv))).collect(),
        ..Info::default()
    };
    let bestmove = result
        .best_move
        .map_or_else(|| "(none)".to_owned(), |mv| move_to_uci(Some(mv)));
    Reply {
        bestmove,
        ponder: result.ponder.map(|mv| move_to_uci(Some(mv))),
        info: Some(info),
        elapsed,
    }
}

/// The same limits a UCI engine would get from `go`, as staunton's library type.
fn to_staunton(limits: &GoLimits) -> Limits {
    Limits {
        depth: limits.depth,
        nodes: limits.nodes,
        movetime: limits.movetime,
        clock: limits.clocks,
        move_overhead: Duration::from_millis(5),
        ..Limits::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::block_on;

    /// Issue 18, item 12: a search without a clock is cut off at the move timeout and is a
    /// stall, as a UCI engine's is; under a clock (a deadline) the timeout does not apply,
    /// and without one set the search runs to its limit.
    #[test]
    fn an_unclocked_search_past_the_move_timeout_is_a_stall() {
        let spec = BuiltinSpec {
            params: Params::default(),
            hash_mb: 0,
        };
        let limit = Duration::from_millis(50);
        let mut player = BuiltinPlayer::new(&spec, Some(limit));
        let deep = GoLimits {
            depth: Some(60),
            ..GoLimits::default()
        };
        let start = [Position::starting()];
        let fault = block_on(player.think(&start, &deep, None)).unwrap_err();
        assert_eq!(
            fault,
            EngineFault::Stalled {
                expected: "bestmove",
                waited: limit
            }
        );
        assert_eq!(fault.to_string(), "no bestmove within 0.05 s");
        // The player is whole: its next search answers.
        let quick = GoLimits {
            depth: Some(1),
            ..GoLimits::default()
        };
        assert!(block_on(player.think(&start, &quick, None)).is_ok());
        // 100,000 nodes take longer than 1 ms; under a clock the flag judges them, not this.
        let mut player = BuiltinPlayer::new(&spec, Some(Duration::from_millis(1)));
        let nodes = GoLimits {
            nodes: Some(100_000),
            ..GoLimits::default()
        };
        let reply = block_on(player.think(&start, &nodes, Some(Duration::from_secs(3600))));
        assert!(reply.is_ok(), "{reply:?}");
        // Without a timeout a search stops at its own limit (the default is a minute).
        let mut player = BuiltinPlayer::new(&spec, None);
        let info = block_on(player.think(&start, &nodes, None))
            .unwrap()
            .info
            .unwrap();
        assert!(info.nodes.unwrap() >= 100_000, "{info:?}");
    }

    #[test]
    fn the_match_stop_flag_ends_a_search_at_once() {
        let mut player = BuiltinPlayer::new(
            &BuiltinSpec {
                params: Params::default(),
                hash_mb: 0,
            },
            None,
        );
        let stop = Arc::new(AtomicBool::new(true));
        player.abort_on(Arc::clone(&stop));
        // A million nodes is most of a second; a stopped search answers after a handful.
        let limits = GoLimits {
            nodes: Some(1_000_000),
            ..GoLimits::default()
        };
        // From a thread that is not the pool's, so the search goes to the pool and back.
        let reply = block_on(player.think(&[Position::starting()], &limits, None)).unwrap();
        let info = reply.info.expect("an answer with its search statistics");
        assert!(
            info.nodes.unwrap() < 10_000,
            "searched {:?} nodes",
            info.nodes
        );
        // Still a legal move: staunton always has one to play.
        assert!(arbiter_rules::uci::parse_uci_move(&Position::starting(), &reply.bestmove).is_ok());
    }
}
