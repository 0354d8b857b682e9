//! Transposition table: what earlier searches learned about positions, by Zobrist key.
//!
//! One flat array of 12-byte entries, allocated once when the size is set and cleared by a new
//! game. Each entry keeps the upper 32 bits of the key (the index comes from the rest), the
//! best move in 16 bits, the score, the static evaluation, the depth and the bound. Mate
//! scores are stored relative to the node (distance from the node, not from the root) and
//! converted back by ply on the way out. Replacement prefers new generations and deeper
//! results; a new result without a move keeps the old move.

use arbiter_rules::{Move, Role, Square};

use crate::search::MATE_BOUND;

/// How a stored score relates to the true value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The score is exact (a PV node).
    Exact,
    /// The true value is at least the score (a beta cutoff).
    Lower,
    /// The true value is at most the score (no move raised alpha).
    Upper,
}

#[derive(Copy, Clone, Default)]
#[repr(C)]
struct Entry {
    key: u32,
    mv: u16,
    score: i16,
    eval: i16,
    depth: u8,
    /// Bits 0-1: bound (0 = empty); bits 2-7: generation.
    flags: u8,
}

/// A probe's result, scores already adjusted to the probing node's ply.
#[derive(Copy, Clone, Debug)]
pub struct TtHit {
    pub mv: PackedMove,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

/// A move in 16 bits: from, to and promotion. Matched against generated moves, so a stale or
/// colliding entry can never produce an illegal move.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedMove(pub u16);

impl PackedMove {
    pub const NONE: PackedMove = PackedMove(0);

    pub fn new(mv: Move) -> PackedMove {
        let promo = match mv.promotion {
            None => 0,
            Some(Role::Knight) => 1,
            Some(Role::Bishop) => 2,
            Some(Role::Rook) => 3,
            Some(_) => 4,
        };
        PackedMove(mv.from.index() as u16 | (mv.to.index() as u16) << 6 | promo << 12)
    }

    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Whether this is the packed form of `mv`.
    #[inline]
    pub fn is(self, mv: Move) -> bool {
        !self.is_none() && PackedMove::new(mv) == self
    }

    pub fn from_square(self) -> Square {
        Square::new(u32::from(self.0 & 63)).expect("six bits")
    }
}

const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

/// The table. Not shared between threads: each engine instance owns one.
pub struct TranspositionTable {
    entries: Vec<Entry>,
    generation: u8,
}

impl TranspositionTable {
    /// A table of `mb` mebibytes; 0 gives a minimal table of 64 KiB, for cheap instances.
    pub fn new(mb: usize) -> TranspositionTable {
        let bytes = if mb == 0 { 64 << 10 } else { mb << 20 };
        let len = (bytes / ENTRY_BYTES).max(1);
        TranspositionTable {
            entries: vec![Entry::default(); len],
            generation: 0,
        }
    }

    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
        self.generation = 0;
    }

    /// Marks the start of a new search, so older entries are replaced first.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.entries.len() as u128) >> 64) as usize
    }

    #[inline]
    fn check(key: u64) -> u32 {
        (key >> 32) as u32 | 1
    }

    pub fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        let e = &self.entries[self.index(key)];
        if e.key != Self::check(key) {
            return None;
        }
        let bound = match e.flags & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            3 => Bound::Upper,
            _ => return None,
        };
        Some(TtHit {
            mv: PackedMove(e.mv),
            score: score_from_tt(i32::from(e.score), ply),
            eval: i32::from(e.eval),
            depth: i32::from(e.depth),
            bound,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        key: u64,
        mv: PackedMove,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let check = Self::check(key);
        let generation = self.generation;
        let i = self.index(key);
        let e = &mut self.entries[i];
        let same = e.key == check;
        let old_generation = e.flags >> 2;
        let replace = !same
            || bound == Bound::Exact
            || old_generation != generation
            || depth + 3 >= i32::from(e.depth);
        if !replace {
            return;
        }
        let mv = if mv.is_none() && same {
            PackedMove(e.mv)
        } else {
            mv
        };
        let bound_bits = match bound {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        *e = Entry {
            key: check,
            mv: mv.0,
            score: score_to_tt(score, ply) as i16,
            eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(0, 255) as u8,
            flags: bound_bits | generation << 2,
        };
    }

    /// Permille of a sample of entries written in the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.entries.len().min(1000);
        let used = self.entries[..sample]
            .iter()
            .filter(|e| e.flags & 3 != 0 && e.flags >> 2 == self.generation)
            .count();
        (used * 1000 / sample.max(1)) as u32
    }
}

/// Mate scores count plies from the root; in the table they count from the node.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;

    #[test]
    fn store_probe_and_mate_adjustment() {
        let mut tt = TranspositionTable::new(1);
        let key = 0x1234_5678_9abc_def0;
        assert!(tt.probe(key, 0).is_none());
        // A mate found 3 plies below a node at ply 5: stored from the node, read at ply 2.
        tt.store(key, PackedMove(77), MATE - 8, 12, 6, Bound::Exact, 5);
        let hit = tt.probe(key, 2).unwrap();
        assert_eq!(hit.score, MATE - 5);
        assert_eq!(
            (hit.mv, hit.eval, hit.depth, hit.bound),
            (PackedMove(77), 12, 6, Bound::Exact)
        );
        tt.clear();
        assert!(tt.probe(key, 0).is_none());
    }

    #[test]
    fn shallow_results_do_not_evict_deep_ones_but_keep_moves() {
        let mut tt = TranspositionTable::new(1);
        let key = 42 << 40;
        tt.store(key, PackedMove(5), 10, 0, 12, Bound::Lower, 0);
        tt.store(key, PackedMove::NONE, 20, 0, 2, Bound::Upper, 0);
        assert_eq!(tt.probe(key, 0).unwrap().depth, 12);
        tt.store(key, PackedMove::NONE, 30, 0, 11, Bound::Upper, 0);
        let hit = tt.probe(key, 0).unwrap();
        assert_eq!((hit.depth, hit.mv), (11, PackedMove(5)));
    }
}
