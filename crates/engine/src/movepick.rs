//! Move ordering: which move to search next.
//!
//! Alpha-beta is only as fast as its ordering is good, so every move gets a score and the best
//! remaining one is picked each time (a selection sort that stops early when a move cuts off).
//! The order: the transposition-table move; captures that do not lose material by SEE (most
//! valuable victim first, least valuable attacker next) and queen promotions; the two killer
//! moves of this ply; the countermove to the opponent's last move; other quiet moves by their
//! history score; captures that lose material; under-promotions last.

use std::ops::ControlFlow;

use arbiter_rules::{Bitboard, Color, Move, PieceMoves, Position, Rank, Role, MAX_MOVES};
use arrayvec::ArrayVec;

use crate::correction::CorrectionHistory;
use crate::see::see_ge;
use crate::tt::PackedMove;

const TT_MOVE: i32 = 1_000_000_000;
const GOOD_CAPTURE: i32 = 100_000_000;
const KILLER: i32 = 50_000_000;
const COUNTER: i32 = 49_000_000;
const BAD_CAPTURE: i32 = -100_000_000;
const UNDER_PROMOTION: i32 = -200_000_000;

/// History scores stay within this magnitude (the update is a "gravity" formula that saturates).
pub const HISTORY_MAX: i32 = 16_384;

/// What the search has learned about quiet moves, kept from one search to the next within a
/// game and cleared by a new game.
#[derive(Clone)]
pub struct Heuristics {
    /// Butterfly history by side, from and to.
    history: [[[i32; 64]; 64]; 2],
    /// Two quiet moves per ply that caused a beta cutoff at that ply.
    pub killers: [[Option<Move>; 2]; crate::limits::MAX_PLY + 2],
    /// The quiet reply that refuted a move, by the moved piece (colour, role) and its square.
    counters: [[[Option<Move>; 64]; 6]; 2],
    /// Counter-move history: how good a quiet move (role, to) has been as the reply to the
    /// opponent's last move (role, to). Colours are implied by who moves.
    counter_history: ContinuationTable,
    /// Follow-up history: the same for a quiet move after our own move before that, which
    /// knows the plan a move continues (a piece brought closer, then the attack it prepared).
    follow_up: ContinuationTable,
    /// Where the static evaluation erred, by pawn structure: the search's other lesson.
    pub correction: CorrectionHistory,
}

/// History of a quiet move (role, to) after an earlier move (role, to), by index in that order.
type ContinuationTable = [[[[i16; 64]; 6]; 64]; 6];

/// The earlier moves a quiet move's history is judged after: the opponent's last move and our
/// own move before it (`None` after a null move, at the root, or when the search leaves it out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorMoves {
    pub opponent: Option<Move>,
    pub own: Option<Move>,
}

#[inline]
fn continuation(table: &ContinuationTable, prior: Option<Move>, mv: Move) -> i32 {
    prior.map_or(0, |p| {
        i32::from(table[p.role.index()][p.to.index()][mv.role.index()][mv.to.index()])
    })
}

#[inline]
fn update_continuation(table: &mut ContinuationTable, prior: Option<Move>, mv: Move, bonus: i32) {
    if let Some(p) = prior {
        let entry = &mut table[p.role.index()][p.to.index()][mv.role.index()][mv.to.index()];
        let v = i32::from(*entry);
        *entry = (v + bonus - v * bonus.abs() / HISTORY_MAX) as i16;
    }
}

impl Heuristics {
    pub fn new() -> Box<Heuristics> {
        // Built on the heap directly: the tables are too big to pass through the stack.
        let mut heur: Box<Heuristics> = Box::new(Heuristics {
            history: [[[0; 64]; 64]; 2],
            killers: [[None; 2]; crate::limits::MAX_PLY + 2],
            counters: [[[None; 64]; 6]; 2],
            counter_history: [[[[0; 64]; 6]; 64]; 6],
            follow_up: [[[[0; 64]; 6]; 64]; 6],
            correction: CorrectionHistory::default(),
        });
        heur.clear();
        heur
    }

    pub fn clear(&mut self) {
        self.history = [[[0; 64]; 64]; 2];
        self.killers = [[None; 2]; crate::limits::MAX_PLY + 2];
        self.counters = [[[None; 64]; 6]; 2];
        for table in [&mut self.counter_history, &mut self.follow_up] {
            for row in table.iter_mut().flatten().flatten() {
                *row = [0; 64];
            }
        }
        self.correction.clear();
    }

    #[inline]
    pub fn history(&self, side: Color, mv: Move) -> i32 {
        self.history[side.index()][mv.from.index()][mv.to.index()]
    }

    /// The combined history of a quiet move: butterfly, counter-move and follow-up history.
    #[inline]
    pub fn quiet_score(&self, side: Color, prior: PriorMoves, mv: Move) -> i32 {
        self.history(side, mv)
            + continuation(&self.counter_history, prior.opponent, mv)
            + continuation(&self.follow_up, prior.own, mv)
    }

    /// Moves the history scores of `mv` towards ±HISTORY_MAX by `bonus`, less the closer they
    /// already are.
    pub fn update_history(&mut self, side: Color, prior: PriorMoves, mv: Move, bonus: i32) {
        let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
        let h = &mut self.history[side.index()][mv.from.index()][mv.to.index()];
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
        update_continuation(&mut self.counter_history, prior.opponent, mv, bonus);
        update_continuation(&mut self.follow_up, prior.own, mv, bonus);
    }

    pub fn store_killer(&mut self, ply: usize, mv: Move) {
        let k = &mut self.killers[ply];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
    }

    /// The remembered reply to `previous`, a move just played by `side`.
    pub fn counter(&self, side: Color, previous: Option<Move>) -> Option<Move> {
        let prev = previous?;
        self.counters[side.index()][prev.role.index()][prev.to.index()]
    }

    pub fn store_counter(&mut self, side: Color, previous: Option<Move>, reply: Move) {
        if let Some(prev) = previous {
            self.counters[side.index()][prev.role.index()][prev.to.index()] = Some(reply);
        }
    }
}

/// A move and its ordering score.
#[derive(Copy, Clone, Debug)]
pub struct ScoredMove {
    pub mv: Move,
    pub score: i32,
}

/// The moves of one node, handed out best first.
pub struct MovePicker {
    moves: ArrayVec<ScoredMove, MAX_MOVES>,
    next: usize,
}

/// What the main search knows that helps order a node's moves.
pub struct OrderingHints {
    pub tt_move: PackedMove,
    pub killers: [Option<Move>; 2],
    pub counter: Option<Move>,
    /// The moves before this node, for counter-move and follow-up history.
    pub prior: PriorMoves,
}

#[inline]
fn mvv_lva(mv: Move, values: &[i32; 6]) -> i32 {
    let victim = mv.capture.map_or(0, |r| values[r.index()]);
    let promo = mv.promotion.map_or(0, |r| values[r.index()]);
    (victim + promo) * 8 - mv.role.index() as i32
}

impl MovePicker {
    /// An empty picker, to be filled in place (the list is kilobytes: never copy it).
    pub fn empty() -> MovePicker {
        MovePicker {
            moves: ArrayVec::new(),
            next: 0,
        }
    }

    /// Generates and scores all legal moves of a main-search node.
    pub fn generate(
        &mut self,
        pos: &Position,
        hints: &OrderingHints,
        heur: &Heuristics,
        values: &[i32; 6],
    ) {
        let side = pos.turn();
        let score = |mv: Move| {
            if hints.tt_move.is(mv) {
                TT_MOVE
            } else if mv.promotion.is_some_and(|r| r != Role::Queen) {
                UNDER_PROMOTION + mvv_lva(mv, values)
            } else if mv.is_tactical() {
                if see_ge(pos, mv, 0, values) {
                    GOOD_CAPTURE + mvv_lva(mv, values)
                } else {
                    BAD_CAPTURE + mvv_lva(mv, values)
                }
            } else if hints.killers[0] == Some(mv) {
                KILLER + 1
            } else if hints.killers[1] == Some(mv) {
                KILLER
            } else if hints.counter == Some(mv) {
                COUNTER
            } else {
                heur.quiet_score(side, hints.prior, mv)
            }
        };
        self.fill(pos, false, |_| true, score);
    }

    /// Quiescence: captures (or, in check, every evasion) by MVV-LVA, hash move first; with a
    /// pawn on its seventh rank, queen promotions too. Filled in place, like
    /// [`MovePicker::generate`], in the generator's order.
    pub fn generate_tactical(
        &mut self,
        pos: &Position,
        in_check: bool,
        tt_move: PackedMove,
        values: &[i32; 6],
    ) {
        let us = pos.turn();
        let seventh = Bitboard::relative_rank(us, Rank::SEVENTH);
        let promoting = (pos.board().by_piece(Role::Pawn.of(us)) & seventh).any();
        let wanted = |mv: Move| in_check || mv.is_capture() || mv.promotion == Some(Role::Queen);
        let score = |mv: Move| {
            if tt_move.is(mv) {
                TT_MOVE
            } else {
                mvv_lva(mv, values)
            }
        };
        self.fill(pos, !in_check && !promoting, wanted, score);
    }

    /// Refills the list in place with the generator's moves (only captures when asked) that
    /// `wanted` keeps, each with its `score`, in generation order.
    fn fill(
        &mut self,
        pos: &Position,
        captures_only: bool,
        wanted: impl Fn(Move) -> bool,
        score: impl Fn(Move) -> i32,
    ) {
        self.moves.clear();
        self.next = 0;
        let moves = &mut self.moves;
        let mut add = |set: PieceMoves| {
            set.for_each_move(pos, |mv| {
                if wanted(mv) {
                    moves.push(ScoredMove {
                        mv,
                        score: score(mv),
                    });
                }
            });
            ControlFlow::<()>::Continue(())
        };
        let _ = if captures_only {
            pos.for_each_piece_captures(&mut add)
        } else {
            pos.for_each_piece_moves(&mut add)
        };
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }
}

impl Iterator for MovePicker {
    type Item = ScoredMove;

    #[inline]
    fn next(&mut self) -> Option<ScoredMove> {
        let rest = &mut self.moves[self.next..];
        let (best, _) = rest
            .iter()
            .enumerate()
            .max_by_key(|(i, m)| (m.score, std::cmp::Reverse(*i)))?;
        rest.swap(0, best);
        self.next += 1;
        Some(self.moves[self.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_rules::uci::{move_to_uci, parse_uci_move};

    #[test]
    fn order_tt_good_captures_killers_quiets_bad_captures() {
        // The pawn on d5 is defended by e6: exd5 trades evenly (a good capture), Nxd5 and
        // Qxd5 lose the piece (bad captures, queen last).
        let pos = Position::from_fen("4k3/8/4p3/3p4/4P3/2N5/8/3QK3 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let killer = parse_uci_move(&pos, "e1f2").unwrap();
        let hints = OrderingHints {
            tt_move: PackedMove::new(parse_uci_move(&pos, "c3b5").unwrap()),
            killers: [Some(killer), None],
            counter: None,
            prior: PriorMoves::default(),
        };
        let heur = Heuristics::new();
        let values = [100, 325, 325, 500, 950, 0];
        let mut picker = MovePicker::empty();
        picker.generate(&pos, &hints, &heur, &values);
        let order: Vec<String> = picker.map(|m| move_to_uci(Some(m.mv))).collect();
        assert_eq!(order.len(), moves.len());
        assert_eq!(order[0], "c3b5");
        assert_eq!(order[1], "e4d5");
        assert_eq!(order[2], "e1f2");
        assert_eq!(order[order.len() - 2..], ["c3d5", "d1d5"]);
    }

    #[test]
    fn history_saturates() {
        let pos = Position::starting();
        let mv = parse_uci_move(&pos, "e2e4").unwrap();
        let mut heur = Heuristics::new();
        for _ in 0..1000 {
            heur.update_history(Color::White, PriorMoves::default(), mv, 2000);
        }
        let h = heur.history(Color::White, mv);
        assert!(h > HISTORY_MAX / 2 && h <= HISTORY_MAX, "{h}");
    }
}
