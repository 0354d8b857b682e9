//! [`Engine`]: one independent staunton instance, the unit the UCI front end and the match
//! runner's in-process players both drive.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use arbiter_rules::{Game, Move, Position};

use crate::evaluate::Evaluator;
use crate::movepick::Heuristics;
use crate::params::Params;
use crate::search::{lmr_table, LmrTable, PvTable, SearchInfo, SearchResult, Searcher};
use crate::timeman::{Limits, TimeManager};
use crate::tt::TranspositionTable;

/// The default hash size of the UCI binary, in MiB.
pub const DEFAULT_HASH_MB: usize = 16;

/// An engine: parameters, the evaluation built from them, the transposition table and the
/// move-ordering memory. Owns everything it uses; no global mutable state exists, so any
/// number of engines can search at once on different threads.
pub struct Engine {
    params: Params,
    eval: Evaluator,
    lmr: Box<LmrTable>,
    tt: TranspositionTable,
    heur: Box<Heuristics>,
    pv: Box<PvTable>,
}

impl Engine {
    /// An engine with `params` and a hash table of `hash_mb` MiB (0: a minimal 64 KiB table,
    /// for running very many instances at once). Parameters are used as given; check them
    /// with [`Params::validate`] if they come from outside.
    ///
    /// Never aborts on a size it cannot have: above [`MAX_HASH_MB`](crate::MAX_HASH_MB), or
    /// beyond the memory available, the table is halved until it fits, and
    /// [`Engine::hash_mb`] is the size obtained. A caller that must not run with less than it
    /// asked compares the two.
    pub fn new(params: Params, hash_mb: usize) -> Engine {
        Engine {
            eval: Evaluator::new(&params),
            lmr: lmr_table(&params),
            params,
            tt: TranspositionTable::new(hash_mb),
            heur: Heuristics::new(),
            pv: PvTable::new(),
        }
    }

    /// Forgets everything learned in the previous game (hash table, history, killers): what
    /// `ucinewgame` does. Searches after it are reproducible.
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.heur.clear();
    }

    /// Reallocates the hash table (empty) with `mb` MiB, or less if that cannot be had (as in
    /// [`Engine::new`]); returns the size obtained.
    pub fn set_hash(&mut self, mb: usize) -> usize {
        // The old table goes first, so that its memory can serve the new one.
        self.tt = TranspositionTable::new(0);
        self.tt = TranspositionTable::new(mb);
        self.tt.mb()
    }

    /// The hash table's size in MiB: what was asked, or less if it could not be had.
    pub fn hash_mb(&self) -> usize {
        self.tt.mb()
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Replaces the parameters. The hash table is cleared: its static evaluations and scores
    /// were computed with the old ones.
    pub fn set_params(&mut self, params: Params) {
        self.eval = Evaluator::new(&params);
        self.lmr = lmr_table(&params);
        self.params = params;
        self.tt.clear();
    }

    /// The static evaluation of `pos` in centipawns, from the side to move's point of view.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        self.eval.evaluate(pos)
    }

    /// The quiescence search of `pos` (captures, promotions, evasions) with a full window: its
    /// score from the side to move's view and the line it expects. A Texel tuner plays the line
    /// out to reach the quiet position the score belongs to. The hash table is cleared first, so
    /// the line depends on `pos` alone: cheap with the 64 KiB table of `Engine::new(params, 0)`.
    pub fn quiescence(&mut self, pos: &Position) -> (i32, Vec<Move>) {
        self.tt.clear();
        let limits = Limits::default();
        let time = TimeManager::new(&limits, pos.turn(), Instant::now(), &self.params);
        let never = AtomicBool::new(false);
        let mut searcher = Searcher::new(
            &self.eval,
            &self.lmr,
            &mut self.tt,
            &mut self.heur,
            &mut self.pv,
            &never,
            time,
            &limits,
        );
        searcher.quiescence_line(pos)
    }

    /// Searches the last position of `history` (earlier positions are the game so far, used
    /// to recognise repetitions) until a limit in `limits` is reached or `stop` becomes true.
    /// `on_info` hears about every completed iteration. The first iteration always completes,
    /// so a legal move is returned whenever one exists; `best_move` is `None` only when the
    /// position is checkmate or stalemate (or `searchmoves` names no legal move), and an
    /// empty `history` is treated the same way.
    pub fn search(
        &mut self,
        history: &[Position],
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo<'_>),
    ) -> SearchResult {
        let start = limits.started_at.unwrap_or_else(Instant::now);
        let Some(root) = history.last() else {
            return SearchResult {
                best_move: None,
                ponder: None,
                score: crate::Score::Cp(0),
                depth: 0,
                seldepth: 0,
                nodes: 0,
                elapsed: start.elapsed(),
                pv: Vec::new(),
            };
        };
        let time = TimeManager::new(limits, root.turn(), start, &self.params);
        let mut searcher = Searcher::new(
            &self.eval,
            &self.lmr,
            &mut self.tt,
            &mut self.heur,
            &mut self.pv,
            stop,
            time,
            limits,
        );
        let result = searcher.run(history, limits, on_info);
        debug_assert_eq!(result.nodes, searcher.nodes());
        result
    }

    /// [`Engine::search`] on the current position of a game.
    pub fn search_game(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo<'_>),
    ) -> SearchResult {
        let history: Vec<Position> = game
            .plies()
            .map(|(pos, _)| *pos)
            .chain(std::iter::once(*game.position()))
            .collect();
        self.search(&history, limits, stop, on_info)
    }
}

impl Default for Engine {
    fn default() -> Engine {
        Engine::new(Params::default(), DEFAULT_HASH_MB)
    }
}
