//! Correction history: what the search has learned about where the static evaluation errs.
//!
//! A hand-written evaluation is wrong in the same way in many related positions: a pawn
//! structure it misjudges is misjudged whatever the pieces around it do. So every finished
//! node whose search score says something about its static evaluation (an exact score, or a
//! bound on the far side of it) moves a running average of the error, kept per side to move and
//! per pawn structure, and later static evaluations of that structure are shifted by it. The
//! pruning decisions that compare the static evaluation with alpha and beta (reverse futility,
//! razoring, the null move, futility) then start from a better guess. The hash table keeps
//! the uncorrected evaluation, so a correction learned later also reaches positions stored
//! before.

use arbiter_rules::{Color, Position, Role};

use crate::limits::MATE_BOUND;

/// Pawn structures told apart per side to move (a power of two).
const ENTRIES: usize = 16_384;
/// Entries are centipawns in this many parts, so that small steps of the average survive.
const GRAIN: i32 = 256;
/// Weights of one update are out of this total.
const WEIGHT_SCALE: i32 = 256;
/// The largest error one node may report, in centipawns, so that one tactic (the search found
/// a piece the evaluation cannot see) does not rewrite what many quiet nodes agreed on.
const ERROR_CAP_CP: i32 = 256;

/// Running averages of (search score − static evaluation) by side to move and pawn structure.
#[derive(Clone, Debug)]
pub struct CorrectionHistory {
    table: [[i32; ENTRIES]; 2],
}

impl CorrectionHistory {
    pub fn clear(&mut self) {
        for side in self.table.iter_mut() {
            side.fill(0);
        }
    }

    /// `raw`, a static evaluation of `pos` from its side to move's view, shifted by `percent`
    /// of what was learned about its pawn structure; never into the range of mate scores.
    #[inline]
    pub fn correct(&self, pos: &Position, raw: i32, percent: i32) -> i32 {
        let shift = *self.entry(pos) * percent / (100 * GRAIN);
        (raw + shift).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Moves the average for `pos`'s structure towards `error` (search score − uncorrected
    /// static evaluation), the more the deeper the search that found it, never beyond
    /// `limit_cp` either way.
    pub fn update(&mut self, pos: &Position, error: i32, depth: i32, limit_cp: i32) {
        let entry = self.entry_mut(pos);
        let weight = (depth + 1).clamp(1, 16);
        let target = error.clamp(-ERROR_CAP_CP, ERROR_CAP_CP) * GRAIN;
        let blended = (*entry * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        *entry = blended.clamp(-limit_cp * GRAIN, limit_cp * GRAIN);
    }

    /// The learned correction for `pos`'s structure, whole centipawns.
    #[cfg(test)]
    pub fn correction_cp(&self, pos: &Position) -> i32 {
        *self.entry(pos) / GRAIN
    }

    #[inline]
    fn entry(&self, pos: &Position) -> &i32 {
        &self.table[pos.turn().index()][pawn_index(pos)]
    }

    #[inline]
    fn entry_mut(&mut self, pos: &Position) -> &mut i32 {
        &mut self.table[pos.turn().index()][pawn_index(pos)]
    }
}

impl Default for CorrectionHistory {
    fn default() -> CorrectionHistory {
        CorrectionHistory {
            table: [[0; ENTRIES]; 2],
        }
    }
}

/// The table slot of `pos`'s pawn structure: the two pawn sets mixed by multiplication. The
/// position's Zobrist key covers every piece, and keeping a second incremental key only for
/// pawns would cost every move made; two multiplications per evaluated node cost less.
#[inline]
fn pawn_index(pos: &Position) -> usize {
    let board = pos.board();
    let pawns = board.by_role(Role::Pawn);
    let white = (pawns & board.by_color(Color::White)).0;
    let black = (pawns & board.by_color(Color::Black)).0;
    let mixed =
        white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (mixed >> (64 - ENTRIES.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_rules::uci::parse_uci_move;

    const LIMIT: i32 = 64;

    fn fresh() -> Box<CorrectionHistory> {
        Box::default()
    }

    #[test]
    fn learns_towards_the_search_score_and_stays_inside_its_limit() {
        let pos = Position::starting();
        let mut history = fresh();
        assert_eq!(history.correct(&pos, 20, 100), 20);
        for _ in 0..200 {
            history.update(&pos, 40, 15, LIMIT);
        }
        // The average converges on the reported error.
        assert!((38..=40).contains(&history.correction_cp(&pos)));
        assert_eq!(
            history.correct(&pos, 20, 100),
            20 + history.correction_cp(&pos)
        );
        // Half the share, half the shift; none at 0 percent.
        assert_eq!(history.correct(&pos, 20, 0), 20);
        let half = history.correct(&pos, 20, 50) - 20;
        assert!((19..=20).contains(&half), "{half}");
        for _ in 0..500 {
            history.update(&pos, 10_000, 15, LIMIT);
        }
        assert_eq!(history.correction_cp(&pos), LIMIT);
        // The other side to move, and another pawn structure, learned nothing.
        let black = pos.play(parse_uci_move(&pos, "g1f3").unwrap()).unwrap();
        assert_eq!(history.correction_cp(&black), 0);
        let other = pos.play(parse_uci_move(&pos, "e2e4").unwrap()).unwrap();
        assert_eq!(history.correction_cp(&other.play_null().unwrap()), 0);
    }

    #[test]
    fn deeper_searches_weigh_more() {
        let pos = Position::starting();
        let (mut shallow, mut deep) = (fresh(), fresh());
        shallow.update(&pos, 100, 1, LIMIT);
        deep.update(&pos, 100, 12, LIMIT);
        assert!(deep.entry(&pos) > shallow.entry(&pos));
        assert!(*shallow.entry(&pos) > 0);
    }

    #[test]
    fn corrections_never_reach_mate_scores() {
        let pos = Position::starting();
        let mut history = fresh();
        for _ in 0..500 {
            history.update(&pos, 10_000, 15, LIMIT);
        }
        assert!(history.correct(&pos, MATE_BOUND - 5, 200) < MATE_BOUND);
        assert!(history.correct(&pos, -MATE_BOUND + 5, 200) > -MATE_BOUND);
    }
}
