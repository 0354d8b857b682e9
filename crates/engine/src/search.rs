//! The search: iterative deepening over a principal-variation alpha-beta search with a
//! quiescence search at the leaves.
//!
//! [`Searcher`] is what one `go` builds: it borrows the engine's long-lived state (hash table,
//! move-ordering heuristics, PV table) and adds the per-search state (node count, limits, the
//! path of position keys for repetition). Nothing in the node functions allocates: move lists
//! are fixed-capacity arrays on the stack, the PV lives in a preallocated triangular table and
//! the key path in a fixed array.
//!
//! Scores are centipawns from the side to move's point of view; mate scores count plies from
//! the root, `MATE - n` for mating in `n` plies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arbiter_rules::{Move, MoveKind, Position, Role, Square};
use arrayvec::ArrayVec;

use crate::evaluate::Evaluator;
use crate::movepick::{Heuristics, MovePicker, OrderingHints, PriorMoves, ScoredMove};
use crate::params::Params;
use crate::see::see_ge;
use crate::timeman::{Limits, TimeManager};
use crate::tt::{Bound, PackedMove, TranspositionTable, TtHit};

pub use crate::limits::{INFINITY, MATE, MATE_BOUND, MAX_DEPTH, MAX_PLY};

/// Game positions before the root kept for repetition detection. A repetition needs no
/// capture or pawn move in between, and the fifty-move rule ends games long before 256 plies.
const KEY_HISTORY: usize = 256;

/// A search score as UCI reports it: centipawns from the side to move's point of view, or mate
/// in moves (not plies), negative when the side to move is being mated, `Mate(0)` when it is
/// checkmated already. The protocol's own type, so the engine and the runner mean one thing.
pub use arbiter_uci::Score;

/// The UCI score of an internal score (centipawns or `±(MATE - plies)`).
pub fn uci_score(score: i32) -> Score {
    if score >= MATE_BOUND {
        Score::Mate((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Score::Mate(-(MATE + score) / 2)
    } else {
        Score::Cp(score)
    }
}

/// Progress reported after each completed iteration.
#[derive(Clone, Debug)]
pub struct SearchInfo<'a> {
    pub depth: u32,
    pub seldepth: u32,
    pub score: Score,
    pub nodes: u64,
    pub elapsed: Duration,
    /// Permille of the hash table written by this search.
    pub hashfull: u32,
    pub pv: &'a [Move],
}

impl SearchInfo<'_> {
    /// Nodes per second so far.
    pub fn nps(&self) -> u64 {
        nps(self.nodes, self.elapsed)
    }
}

pub(crate) fn nps(nodes: u64, elapsed: Duration) -> u64 {
    let micros = elapsed.as_micros().max(1);
    (u128::from(nodes) * 1_000_000 / micros) as u64
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play; `None` only when the root has no legal move.
    pub best_move: Option<Move>,
    /// The expected reply, if the PV has one.
    pub ponder: Option<Move>,
    pub score: Score,
    /// The last completed iteration.
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub elapsed: Duration,
    pub pv: Vec<Move>,
}

/// A placeholder that never becomes a real move: the PV table's filler.
const NO_MOVE: Move = Move {
    from: Square::A1,
    to: Square::A1,
    role: Role::Pawn,
    capture: None,
    promotion: None,
    kind: MoveKind::Normal,
};

/// The triangular PV table: row `ply` holds the best line found from that ply.
pub struct PvTable {
    moves: [[Move; MAX_PLY + 1]; MAX_PLY + 1],
    len: [usize; MAX_PLY + 1],
}

impl PvTable {
    pub fn new() -> Box<PvTable> {
        Box::new(PvTable {
            moves: [[NO_MOVE; MAX_PLY + 1]; MAX_PLY + 1],
            len: [0; MAX_PLY + 1],
        })
    }

    #[inline]
    fn clear(&mut self, ply: usize) {
        self.len[ply] = ply;
    }

    /// `mv` followed by the line below it.
    #[inline]
    fn update(&mut self, ply: usize, mv: Move) {
        self.moves[ply][ply] = mv;
        let below = self.len[ply + 1].max(ply + 1);
        let (head, tail) = self.moves.split_at_mut(ply + 1);
        head[ply][ply + 1..below].copy_from_slice(&tail[0][ply + 1..below]);
        self.len[ply] = below;
    }

    fn root(&self) -> &[Move] {
        &self.moves[0][..self.len[0]]
    }
}

/// Late-move reductions by depth and move number, from the parameters.
pub type LmrTable = [[i32; 64]; 64];

pub fn lmr_table(p: &Params) -> Box<LmrTable> {
    let mut table = Box::new([[0; 64]; 64]);
    let base = f64::from(p.lmr_base) / 100.0;
    let div = f64::from(p.lmr_div) / 100.0;
    for (depth, row) in table.iter_mut().enumerate().skip(1) {
        for (count, r) in row.iter_mut().enumerate().skip(1) {
            *r = (base + (depth as f64).ln() * (count as f64).ln() / div) as i32;
        }
    }
    table
}

#[derive(Copy, Clone)]
struct Frame {
    /// Static evaluation, or `-INFINITY` when in check.
    eval: i32,
    /// The move played from this ply (`None`: a null move, or not yet).
    mv: Option<Move>,
    /// Plies since the last null move; repetition is not looked for across one.
    plies_from_null: u32,
    /// Whether the side to move at this ply is in check, written by the parent, which has
    /// already asked (for check extensions) and need not let the child ask again.
    in_check: bool,
    /// The move a singular-extension search at this ply leaves out (the hash move it tests).
    excluded: Option<Move>,
}

const NO_FRAME: Frame = Frame {
    eval: -INFINITY,
    mv: None,
    plies_from_null: 0,
    in_check: false,
    excluded: None,
};

/// One search in progress.
pub struct Searcher<'a> {
    eval: &'a Evaluator,
    params: &'a Params,
    lmr: &'a LmrTable,
    tt: &'a mut TranspositionTable,
    heur: &'a mut Heuristics,
    pv: &'a mut PvTable,
    stop: &'a AtomicBool,
    time: TimeManager,
    values: [i32; 6],
    node_limit: u64,
    nodes: u64,
    seldepth: usize,
    aborted: bool,
    /// False until the root's first move has a score: there is always a move to play.
    can_abort: bool,
    /// The depth of the current iteration; extensions stop at twice this many plies.
    root_depth: i32,
    /// The score of the best root move so far in this iteration.
    root_score: i32,
    keys: ArrayVec<u64, { KEY_HISTORY + MAX_PLY + 8 }>,
    stack: [Frame; MAX_PLY + 4],
    root_moves: &'a [Move],
}

impl<'a> Searcher<'a> {
    #[expect(
        clippy::too_many_arguments,
        reason = "each of the engine's tables is borrowed on its own, so the borrows stay disjoint"
    )]
    pub(crate) fn new(
        eval: &'a Evaluator,
        lmr: &'a LmrTable,
        tt: &'a mut TranspositionTable,
        heur: &'a mut Heuristics,
        pv: &'a mut PvTable,
        stop: &'a AtomicBool,
        time: TimeManager,
        limits: &'a Limits,
    ) -> Searcher<'a> {
        Searcher {
            params: eval.params(),
            values: eval.see_values(),
            eval,
            lmr,
            tt,
            heur,
            pv,
            stop,
            time,
            node_limit: if limits.infinite {
                u64::MAX
            } else {
                limits.nodes.unwrap_or(u64::MAX)
            },
            nodes: 0,
            seldepth: 0,
            aborted: false,
            can_abort: false,
            root_depth: 0,
            root_score: 0,
            keys: ArrayVec::new(),
            stack: [NO_FRAME; MAX_PLY + 4],
            root_moves: &limits.searchmoves,
        }
    }

    /// Iterative deepening from the last position of `history`, reporting each completed
    /// iteration to `on_info`.
    pub(crate) fn run(
        &mut self,
        history: &[Position],
        limits: &Limits,
        on_info: &mut dyn FnMut(&SearchInfo<'_>),
    ) -> SearchResult {
        let root = *history.last().expect("a position to search");
        let start = history.len().saturating_sub(KEY_HISTORY);
        for pos in &history[start..] {
            self.keys.push(pos.hash());
        }
        self.stack[0].plies_from_null = u32::MAX / 2;
        self.stack[0].in_check = root.is_check();
        self.tt.new_search();
        for killers in self.heur.killers.iter_mut() {
            *killers = [None, None];
        }

        let legal = root.legal_moves();
        let searchable = legal
            .iter()
            .filter(|mv| self.root_moves.is_empty() || self.root_moves.contains(mv))
            .count();
        if searchable == 0 || legal.is_empty() {
            return SearchResult {
                best_move: None,
                ponder: None,
                score: if root.is_check() && legal.is_empty() {
                    Score::Mate(0)
                } else {
                    Score::Cp(0)
                },
                depth: 0,
                seldepth: 0,
                nodes: 0,
                elapsed: self.time.elapsed(),
                pv: Vec::new(),
            };
        }
        // With one legal move there is nothing to think about; a short search still gives a
        // score for the referee's adjudication.
        if searchable == 1 {
            self.time.shorten(self.params.tm_single_reply_div);
        }

        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let max_depth = if limits.infinite {
            MAX_DEPTH
        } else {
            max_depth
        };
        let mut best: ArrayVec<Move, MAX_PLY> = ArrayVec::new();
        let mut best_score = 0;
        let mut completed = 0;
        let mut seldepth = 0;
        let mut stable_iterations = 0;

        for depth in 1..=max_depth as i32 {
            self.seldepth = 0;
            self.root_depth = depth;
            let score = self.aspiration(&root, depth, best_score);
            if self.aborted {
                // Stopped inside the first iteration: the best root move so far is played.
                if completed == 0 {
                    best.extend(self.pv.root().iter().copied());
                    best_score = self.root_score;
                    completed = 1;
                    seldepth = self.seldepth as u32;
                    on_info(&SearchInfo {
                        depth: completed,
                        seldepth,
                        score: uci_score(best_score),
                        nodes: self.nodes,
                        elapsed: self.time.elapsed(),
                        hashfull: self.tt.hashfull(),
                        pv: &best,
                    });
                }
                break;
            }
            let line = self.pv.root();
            if line.is_empty() {
                // Cannot happen after a full-window search with legal moves; keep what we have.
                break;
            }
            if best.first() == line.first() {
                stable_iterations += 1;
            } else {
                stable_iterations = 0;
            }
            best.clear();
            best.extend(line.iter().copied());
            best_score = score;
            completed = depth as u32;
            seldepth = self.seldepth as u32;
            on_info(&SearchInfo {
                depth: completed,
                seldepth,
                score: uci_score(score),
                nodes: self.nodes,
                elapsed: self.time.elapsed(),
                hashfull: self.tt.hashfull(),
                pv: &best,
            });
            // Less time when the best move keeps standing, more while it changes.
            let percent = match stable_iterations {
                0 => self.params.tm_unstable_percent,
                1 => self.params.tm_stable1_percent,
                2 | 3 => self.params.tm_stable2_percent,
                _ => self.params.tm_stable4_percent,
            };
            if self.time.soft_limit_reached(percent)
                || self.nodes >= self.node_limit
                || self.stop.load(Ordering::Relaxed)
            {
                break;
            }
        }

        // Never without a move while one is legal: a root that ended without a line (an
        // iteration stopped before its first root move raised alpha, a score taken without a
        // move) plays the hash move, else the first searchable legal move. Only ever reached
        // when the iterations left nothing, so it changes no search that found a move.
        if best.is_empty() {
            let searchable = |mv: &Move| self.root_moves.is_empty() || self.root_moves.contains(mv);
            let hash_move = self
                .tt
                .probe(root.hash(), 0)
                .map_or(PackedMove::NONE, |hit| hit.mv);
            let fallback = legal
                .iter()
                .copied()
                .filter(searchable)
                .find(|&mv| PackedMove::new(mv) == hash_move)
                .or_else(|| legal.iter().copied().find(searchable));
            best.extend(fallback);
        }

        // `go infinite` reports its move only when told to stop.
        if limits.infinite {
            while !self.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        SearchResult {
            best_move: best.first().copied(),
            ponder: best.get(1).copied(),
            score: uci_score(best_score),
            depth: completed,
            seldepth,
            nodes: self.nodes,
            elapsed: self.time.elapsed(),
            pv: best.to_vec(),
        }
    }

    /// One iteration, first in a narrow window around the last score, widened on failure.
    fn aspiration(&mut self, root: &Position, depth: i32, previous: i32) -> i32 {
        let mut delta = self.params.asp_delta;
        let (mut alpha, mut beta) = if depth >= self.params.asp_depth && previous.abs() < MATE_BOUND
        {
            (previous - delta, previous + delta)
        } else {
            (-INFINITY, INFINITY)
        };
        loop {
            let score = self.negamax(root, depth, alpha, beta, 0);
            if self.aborted {
                return score;
            }
            if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITY);
            } else if score >= beta {
                beta = (score + delta).min(INFINITY);
            } else {
                return score;
            }
            delta += delta / 2;
            if delta > 1000 {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }

    /// Whether a limit has been reached; once true, every node returns at once.
    #[inline]
    fn should_abort(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if !self.can_abort {
            return false;
        }
        if self.nodes >= self.node_limit
            || (self.nodes & 2047 == 0
                && (self.stop.load(Ordering::Relaxed) || self.time.hard_limit_reached()))
        {
            self.aborted = true;
        }
        self.aborted
    }

    /// Whether the position repeats so that best play makes it a draw. A repetition of a
    /// position on the search path (at or after the root) counts at once: the side that could
    /// avoid it would have. A position only seen in the game before the root must have been
    /// there twice (the third occurrence is the draw), since the opponent may still deviate.
    fn is_repetition(&self, pos: &Position, ply: usize) -> bool {
        let n = self.keys.len();
        let window =
            (pos.halfmove_clock().min(self.stack[ply].plies_from_null) as usize).min(n - 1);
        let key = pos.hash();
        let root_index = n - 1 - ply;
        let mut earlier = 0;
        for back in (4..=window).step_by(2) {
            let i = n - 1 - back;
            if self.keys[i] == key {
                if i >= root_index {
                    return true;
                }
                earlier += 1;
                if earlier == 2 {
                    return true;
                }
            }
        }
        false
    }

    fn is_draw(&self, pos: &Position, ply: usize) -> bool {
        if pos.halfmove_clock() >= 100 {
            // Mate given on the hundredth half-move still wins.
            return !pos.is_check() || pos.has_legal_moves();
        }
        let board = pos.board();
        let heavy =
            board.by_role(Role::Pawn) | board.by_role(Role::Rook) | board.by_role(Role::Queen);
        if board.occupied().count() <= 3 && heavy.is_empty() {
            return true;
        }
        self.is_repetition(pos, ply)
    }

    fn has_non_pawn_material(pos: &Position) -> bool {
        let board = pos.board();
        (pos.us() - board.by_role(Role::Pawn) - board.by_role(Role::King)).any()
    }

    /// The static evaluation of `pos` (out of check), the hash table's copy if it has one: as
    /// evaluated, which is what the table keeps, and corrected by the history of its pawn
    /// structure, which is what the search compares with its bounds.
    #[inline]
    fn static_evals(&self, pos: &Position, tt_hit: Option<TtHit>) -> (i32, i32) {
        let raw = tt_hit.map_or_else(|| self.eval.evaluate(pos), |h| h.eval);
        match self.params.corr_hist_percent {
            0 => (raw, raw),
            percent => (raw, self.heur.correction.correct(pos, raw, percent)),
        }
    }

    fn stat_bonus(&self, depth: i32) -> i32 {
        let p = &self.params;
        (p.hist_bonus_quad * depth * depth + p.hist_bonus_lin * depth).min(p.hist_bonus_max)
    }

    /// The main search.
    fn negamax(
        &mut self,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv.clear(ply);

        // 1. Horizon: resolve captures before trusting a static evaluation.
        if depth <= 0 {
            return self.quiescence(pos, alpha, beta, ply);
        }

        // 2. Stop when a limit says so, else count the node.
        if self.should_abort() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        let in_check = self.stack[ply].in_check;
        debug_assert_eq!(in_check, pos.is_check());

        if !root {
            // 3. Draws end the line: repetition, fifty moves, no mating material.
            if self.is_draw(pos, ply) {
                return 0;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { 0 } else { self.eval.evaluate(pos) };
            }
            // 4. Mate distance pruning: nothing here beats a mate already found nearer the root.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        // 5. Transposition table: a deep enough earlier result decides the node outright.
        let key = pos.hash();
        let tt_hit = self.tt.probe(key, ply);
        let tt_move = tt_hit.map_or(PackedMove::NONE, |h| h.mv);
        // A search that leaves a move out is not this node's search: it neither takes the
        // table's result nor stores its own.
        let excluded = self.stack[ply].excluded;
        if let Some(hit) = tt_hit {
            if !pv_node
                && excluded.is_none()
                && hit.depth >= depth
                && bound_allows(hit.bound, hit.score, alpha, beta)
            {
                return hit.score;
            }
        }

        // 6. Static evaluation, corrected by what earlier searches of this pawn structure
        //    found; a hash score with a fitting bound is a better guess still.
        let (raw_eval, static_eval) = if in_check {
            (-INFINITY, -INFINITY)
        } else {
            self.static_evals(pos, tt_hit)
        };
        let eval = match tt_hit {
            Some(h)
                if !in_check && bound_allows(h.bound, h.score, static_eval, static_eval + 1) =>
            {
                h.score
            }
            _ => static_eval,
        };
        self.stack[ply].eval = static_eval;
        self.stack[ply].mv = None;
        let improving = !in_check && ply >= 2 && static_eval > self.stack[ply - 2].eval;

        if !pv_node && !in_check && excluded.is_none() {
            // 7. Reverse futility: far enough above beta at low depth, the opponent will not
            //    catch up.
            let margin = self.params.rfp_margin * (depth - i32::from(improving));
            if depth <= self.params.rfp_depth && eval - margin >= beta && eval < MATE_BOUND {
                return eval;
            }

            // 8. Razoring: this far below alpha near the horizon only a capture can save the
            //    node; when the quiescence search agrees, its score stands. Measured at
            //    depth 2, 250 per ply: +15.2 +/- 8.5 Elo at 6000 nodes, +22.0 +/- 13.5 at 1+0.01.
            if depth <= self.params.razor_depth
                && eval + self.params.razor_margin * depth <= alpha
                && alpha < MATE_BOUND
            {
                let score = self.quiescence(pos, alpha, alpha + 1, ply);
                if self.aborted {
                    return 0;
                }
                if score <= alpha {
                    return score;
                }
            }

            // 9. Null move: if passing still beats beta, some real move will too. Not without
            //    pieces, where zugzwang is common, and never twice in a row.
            if depth >= self.params.nmp_depth
                && eval >= beta
                && static_eval >= beta
                && beta > -MATE_BOUND
                && (ply == 0 || self.stack[ply - 1].mv.is_some())
                && Self::has_non_pawn_material(pos)
            {
                let p = self.params;
                let r =
                    p.nmp_base + depth / p.nmp_depth_div + ((eval - beta) / p.nmp_eval_div).min(3);
                let null = pos.play_null().expect("not in check");
                self.stack[ply + 1].plies_from_null = 0;
                // Passing is only tried out of check, and cannot put the opponent in check.
                self.stack[ply + 1].in_check = false;
                self.keys.push(null.hash());
                let score = -self.negamax(&null, depth - 1 - r, -beta, -beta + 1, ply + 1);
                self.keys.pop();
                if self.aborted {
                    return 0;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }

        // 10. ProbCut: a good capture that still beats beta by a margin in a search four
        //     plies shallower would very probably beat it at full depth.
        if !pv_node
            && !in_check
            && excluded.is_none()
            && self.params.probcut_depth > 0
            && depth >= self.params.probcut_depth
            && beta.abs() < MATE_BOUND
        {
            let raised = beta + self.params.probcut_margin;
            // A hash result as deep as the shallow search that falls short says it would fail.
            let hopeless = tt_hit.is_some_and(|h| h.depth >= depth - 3 && h.score < raised);
            if !hopeless {
                if let Some(score) =
                    self.probcut(pos, depth, raised, (raw_eval, static_eval), tt_move, ply)
                {
                    return score;
                }
                if self.aborted {
                    return 0;
                }
            }
        }

        // 11. Internal iterative reduction: without a hash move this node was not searched
        //     before and is probably less important; search it shallower.
        if depth >= self.params.iir_depth && tt_move.is_none() {
            depth -= 1;
        }

        // 12. Generate and order the moves.
        let us = pos.turn();
        let previous = if ply > 0 {
            self.stack[ply - 1].mv
        } else {
            None
        };
        let prior = PriorMoves {
            opponent: previous,
            own: if ply >= 2 && self.params.follow_up_hist != 0 {
                self.stack[ply - 2].mv
            } else {
                None
            },
        };
        let hints = OrderingHints {
            tt_move,
            killers: self.heur.killers[ply],
            counter: self.heur.counter(!us, previous),
            prior,
        };
        let mut picker = MovePicker::empty();
        picker.generate(pos, &hints, self.heur, &self.values);
        if picker.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }

        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move: Option<Move> = None;
        let mut move_count = 0;
        let mut skip_quiets = false;
        let mut quiets_tried: ArrayVec<Move, 64> = ArrayVec::new();
        let lmp_limit = (self.params.lmp_base + depth * depth) / if improving { 1 } else { 2 };
        // Extensions stop at twice the iteration's depth (cross-checks could otherwise
        // extend without end).
        let may_extend = (ply as i32) < 2 * self.root_depth;
        // Whether this node may test its hash move for singularity (step 15), and the hash
        // score it would test against: decided once here, not for every move.
        let singular_score = tt_hit
            .filter(|h| {
                let p = self.params;
                p.se_depth > 0
                    && depth >= p.se_depth
                    && !root
                    && excluded.is_none()
                    && may_extend
                    && h.depth >= depth - 3
                    && h.bound != Bound::Upper
                    && h.score.abs() < MATE_BOUND
            })
            .map(|h| h.score);

        for ScoredMove { mv, .. } in &mut picker {
            if root && !self.root_moves.is_empty() && !self.root_moves.contains(&mv) {
                continue;
            }
            if excluded == Some(mv) {
                continue;
            }
            let quiet = !mv.is_tactical();
            let mut child = *pos;
            child.play_unchecked(mv);
            let gives_check = child.is_check();
            // Checks are never skipped with the quiet moves: mating attacks are made of them.
            if quiet && skip_quiets && !gives_check {
                continue;
            }

            // 13. Shallow-depth pruning, once some move has saved us from being mated. Checks
            //     are exempt (measured: WAC at 40k nodes 184 -> 211).
            if !root && best_score > -MATE_BOUND {
                if quiet && !gives_check {
                    // Late-move pruning: late quiet moves at low depth rarely matter.
                    if depth <= self.params.lmp_depth && move_count >= lmp_limit {
                        skip_quiets = true;
                        continue;
                    }
                    // Futility: this quiet move cannot lift the evaluation to alpha.
                    if !in_check
                        && depth <= self.params.fut_depth
                        && eval + self.params.fut_base + self.params.fut_margin * depth <= alpha
                    {
                        skip_quiets = true;
                        continue;
                    }
                    // History: a quiet move that keeps failing here is not worth a search
                    // this near the horizon.
                    if depth <= self.params.hist_prune_depth
                        && self.heur.quiet_score(us, prior, mv)
                            < -self.params.hist_prune_margin * depth
                    {
                        continue;
                    }
                    // SEE: the moved piece is simply lost.
                    if depth <= self.params.see_depth
                        && !see_ge(pos, mv, -self.params.see_quiet_margin * depth, &self.values)
                    {
                        continue;
                    }
                } else if !quiet
                    && !gives_check
                    && depth <= self.params.see_depth
                    && !see_ge(
                        pos,
                        mv,
                        -self.params.see_capture_margin * depth * depth,
                        &self.values,
                    )
                {
                    continue;
                }
            }
            move_count += 1;

            // 14. Check extension: forcing lines are searched a ply deeper.
            //     Measured: WAC 214 extending every check, 209 only SEE-safe ones, 204 none.
            let mut extend = gives_check && may_extend;

            // 15. Singular extension: when the hash move beats every other move by a margin
            //     in a shallower search without it, it is the only good move here and gets a
            //     ply more. When even the others beat beta, several moves would cut this
            //     node and it is cut at once (multi-cut).
            if let Some(tt_score) = singular_score
                .filter(|_| !extend && move_count == 1 && PackedMove::new(mv) == tt_move)
            {
                let singular_beta = tt_score - self.params.se_margin * depth;
                self.stack[ply].excluded = Some(mv);
                let score =
                    self.negamax(pos, (depth - 1) / 2, singular_beta - 1, singular_beta, ply);
                self.stack[ply].excluded = None;
                if self.aborted {
                    return 0;
                }
                if score < singular_beta {
                    extend = true;
                } else if singular_beta >= beta {
                    return singular_beta;
                }
            }
            let new_depth = depth - 1 + i32::from(extend);
            self.stack[ply].mv = Some(mv);
            self.stack[ply + 1].plies_from_null = self.stack[ply].plies_from_null + 1;
            self.stack[ply + 1].in_check = gives_check;
            self.keys.push(child.hash());

            // 16. Principal variation search with late-move reductions: the first move gets
            //     the full window, later ones a zero window (reduced when late and quiet),
            //     re-searched only if they surprise.
            let score = if move_count == 1 {
                -self.negamax(&child, new_depth, -beta, -alpha, ply + 1)
            } else {
                let mut r = 0;
                if depth >= self.params.lmr_depth && move_count > 1 + i32::from(pv_node) && quiet {
                    r = self.lmr[(depth as usize).min(63)][(move_count as usize).min(63)];
                    r += i32::from(!pv_node) + i32::from(!improving);
                    r -= i32::from(gives_check || in_check);
                    r -= i32::from(hints.killers.contains(&Some(mv)) || hints.counter == Some(mv));
                    r -= self.heur.quiet_score(us, prior, mv) / self.params.lmr_history_div;
                    r = r.clamp(0, new_depth - 1);
                }
                let mut s = -self.negamax(&child, new_depth - r, -alpha - 1, -alpha, ply + 1);
                if s > alpha && r > 0 {
                    s = -self.negamax(&child, new_depth, -alpha - 1, -alpha, ply + 1);
                }
                if s > alpha && s < beta {
                    s = -self.negamax(&child, new_depth, -beta, -alpha, ply + 1);
                }
                s
            };
            self.keys.pop();
            if self.aborted {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    self.pv.update(ply, mv);
                    if root {
                        // From now on there is a move to play, so the search may be stopped.
                        self.root_score = score;
                        self.can_abort = true;
                    }
                    if score >= beta {
                        // 17. A cutoff teaches move ordering: killers, countermove, history
                        //     (counter-move history: +9 Elo [-24, +43] in self-play).
                        if quiet {
                            let bonus = self.stat_bonus(depth);
                            self.heur.store_killer(ply, mv);
                            self.heur.store_counter(!us, previous, mv);
                            self.heur.update_history(us, prior, mv, bonus);
                            for &tried in &quiets_tried {
                                self.heur.update_history(us, prior, tried, -bonus);
                            }
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet {
                let _ = quiets_tried.try_push(mv);
            }
        }

        if move_count == 0 {
            // Every move was pruned or filtered: fail low without a move.
            return alpha;
        }

        if excluded.is_some() {
            // Without its best move this is not the node's value: neither the table nor the
            // correction history may learn it.
            return best_score;
        }

        // 18. Remember the result for later visits and the next iteration.
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let packed = best_move.map_or(PackedMove::NONE, PackedMove::new);
        self.tt
            .store(key, packed, best_score, raw_eval, depth, bound, ply);

        // 19. Teach the correction history how far the static evaluation was off, when the
        //     score says so (exact, or a bound beyond the evaluation), no capture or
        //     promotion, which the evaluation is not meant to foresee, decided it, and no
        //     quiet move was pruned unsearched (a fail low that never looked at them is
        //     lower than the position). Off by default: at 6000 nodes the full share lost
        //     (about -47 Elo as here, -19 learning from pruned nodes too), half the share
        //     with a 16 cp limit was even (CHANGELOG).
        if self.params.corr_hist_percent != 0
            && !in_check
            && !skip_quiets
            && best_move.is_none_or(|m| !m.is_tactical())
            && best_score.abs() < MATE_BOUND
            && !(bound == Bound::Lower && best_score <= static_eval)
            && !(bound == Bound::Upper && best_score >= static_eval)
        {
            self.heur.correction.update(
                pos,
                best_score - raw_eval,
                depth,
                self.params.corr_hist_limit,
            );
        }
        best_score
    }

    /// ProbCut's captures at a node: the score of the first whose exchange gains enough and
    /// that beats `raised` in quiescence and then in a search four plies shallower, stored as
    /// a lower bound. Its own function so that its move list does not widen every frame of
    /// the main search.
    #[inline(never)]
    fn probcut(
        &mut self,
        pos: &Position,
        depth: i32,
        raised: i32,
        (raw_eval, static_eval): (i32, i32),
        tt_move: PackedMove,
        ply: usize,
    ) -> Option<i32> {
        let mut picker = MovePicker::empty();
        picker.generate_tactical(pos, false, tt_move, &self.values);
        for ScoredMove { mv, .. } in &mut picker {
            if !see_ge(pos, mv, raised - static_eval, &self.values) {
                continue;
            }
            let mut child = *pos;
            child.play_unchecked(mv);
            self.stack[ply].mv = Some(mv);
            self.stack[ply + 1].plies_from_null = self.stack[ply].plies_from_null + 1;
            self.stack[ply + 1].in_check = child.is_check();
            self.keys.push(child.hash());
            let mut score = -self.quiescence(&child, -raised, -raised + 1, ply + 1);
            if score >= raised && !self.aborted {
                score = -self.negamax(&child, depth - 4, -raised, -raised + 1, ply + 1);
            }
            self.keys.pop();
            self.stack[ply].mv = None;
            if self.aborted {
                return None;
            }
            if score >= raised {
                self.tt.store(
                    pos.hash(),
                    PackedMove::new(mv),
                    score,
                    raw_eval,
                    depth - 3,
                    Bound::Lower,
                    ply,
                );
                return Some(score);
            }
        }
        None
    }

    /// Captures only (every move when in check), until the position is quiet.
    fn quiescence(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv.clear(ply);
        if self.should_abort() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        let in_check = pos.is_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.eval.evaluate(pos) };
        }

        let pv_node = beta - alpha > 1;
        let key = pos.hash();
        let tt_hit = self.tt.probe(key, ply);
        if let Some(hit) = tt_hit {
            if !pv_node && bound_allows(hit.bound, hit.score, alpha, beta) {
                return hit.score;
            }
        }
        let tt_move = tt_hit.map_or(PackedMove::NONE, |h| h.mv);

        // Stand pat: the side to move can usually do at least as well as doing nothing.
        let mut picker = MovePicker::empty();
        let (raw_eval, static_eval, mut best_score) = if in_check {
            picker.generate_tactical(pos, true, tt_move, &self.values);
            if picker.is_empty() {
                return -MATE + ply as i32;
            }
            (-INFINITY, -INFINITY, -INFINITY)
        } else {
            let (raw, eval) = self.static_evals(pos, tt_hit);
            if eval >= beta {
                return eval;
            }
            alpha = alpha.max(eval);
            picker.generate_tactical(pos, false, tt_move, &self.values);
            (raw, eval, eval)
        };

        let original_alpha = alpha;
        let mut best_move = None;
        for ScoredMove { mv, .. } in &mut picker {
            if !in_check {
                // Delta pruning: even winning this piece for free does not reach alpha.
                let gain = mv.capture.map_or(0, |r| self.values[r.index()]);
                if mv.promotion.is_none()
                    && static_eval + gain + self.params.qs_delta_margin <= alpha
                {
                    continue;
                }
                // Losing captures are not worth searching.
                if !see_ge(pos, mv, 0, &self.values) {
                    continue;
                }
            }
            let mut child = *pos;
            child.play_unchecked(mv);
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    self.pv.update(ply, mv);
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let packed = best_move.map_or(PackedMove::NONE, PackedMove::new);
        self.tt
            .store(key, packed, best_score, raw_eval, 0, bound, ply);
        best_score
    }

    /// The quiescence search of `pos` with a full window: its score (side to move's view) and
    /// the line of captures and evasions it expects.
    pub(crate) fn quiescence_line(&mut self, pos: &Position) -> (i32, Vec<Move>) {
        let score = self.quiescence(pos, -INFINITY, INFINITY, 0);
        (score, self.pv.root().to_vec())
    }

    pub(crate) fn nodes(&self) -> u64 {
        self.nodes
    }
}

/// Whether a stored score with `bound` is usable against the window (alpha, beta).
#[inline]
fn bound_allows(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_in_moves() {
        assert_eq!(uci_score(MATE - 1), Score::Mate(1));
        assert_eq!(uci_score(MATE - 3), Score::Mate(2));
        assert_eq!(uci_score(-MATE + 2), Score::Mate(-1));
        assert_eq!(uci_score(-MATE), Score::Mate(0));
        assert_eq!(uci_score(-35), Score::Cp(-35));
        assert_eq!(Score::Mate(-2).to_string(), "mate -2");
    }

    #[test]
    fn lmr_grows_with_depth_and_move_number() {
        let t = lmr_table(&Params::default());
        assert!(t[20][30] > t[3][3]);
        assert!(t[10][40] >= t[10][5]);
        assert_eq!(t[1][1], 0);
    }
}
