//! Transposition table: what earlier searches learned about positions, by Zobrist key.
//!
//! One flat array of 12-byte entries, allocated once when the size is set and cleared by a new
//! game.
//!
//! A size that cannot be had never aborts the engine (an allocation failure in Rust is an
//! abort, which a GUI sees as a crash): the table halves the request until it fits, as
//! engines do, and [`TranspositionTable::mb`] says what it got. "Fits" means two things. The
//! allocator must grant it, and on Linux the size must not exceed `MemAvailable` in
//! `/proc/meminfo`: with overcommit the kernel grants far more than it has, and the table would
//! be killed by the OOM killer later, when `ucinewgame` clears it or the search fills it. The
//! memory comes zeroed from the allocator (fresh pages the kernel maps on first touch), so
//! setting a large Hash costs nothing until the table is used. Each entry keeps the upper 32 bits of the key (the index comes from the rest), the
//! best move in 16 bits, the score, the static evaluation, the depth and the bound. Mate
//! scores are stored relative to the node (distance from the node, not from the root) and
//! converted back by ply on the way out. Replacement prefers new generations and deeper
//! results; a new result without a move keeps the old move.

use arbiter_rules::{Move, Role};

use crate::limits::MATE_BOUND;

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
}

const ENTRY_BYTES: usize = size_of::<Entry>();
// No padding: an all-zero `Entry` is made of initialised integers only (see `zeroed_entries`).
const _: () = assert!(ENTRY_BYTES == 4 + 2 + 2 + 2 + 1 + 1);

/// The largest table the UCI `Hash` option offers, in MiB (and the most an in-process
/// [`Engine`](crate::Engine) is given).
pub const MAX_HASH_MB: usize = 32_768;

/// The table. Not shared between threads: each engine instance owns one.
pub struct TranspositionTable {
    entries: Vec<Entry>,
    generation: u8,
    /// The size obtained, in MiB (0 for the minimal table).
    mb: usize,
}

impl TranspositionTable {
    /// A table of `mb` mebibytes; 0 gives a minimal table of 64 KiB, for cheap instances.
    /// Above [`MAX_HASH_MB`], or beyond what the machine can give, the size is halved until it
    /// fits (see the module documentation); [`TranspositionTable::mb`] is the size obtained.
    pub fn new(mb: usize) -> TranspositionTable {
        let (mb, entries) = largest_that_fits(mb.min(MAX_HASH_MB), available_memory_mb(), |mb| {
            zeroed_entries(entries_in(mb))
        });
        TranspositionTable {
            entries,
            generation: 0,
            mb,
        }
    }

    /// The size obtained, in MiB: the request, or less if it could not be had.
    pub fn mb(&self) -> usize {
        self.mb
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

    #[expect(
        clippy::too_many_arguments,
        reason = "one argument per field of the entry, as engines' TT stores take them"
    )]
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
            eval: eval.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16,
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

/// Entries in a table of `mb` MiB (0: the minimal 64 KiB).
fn entries_in(mb: usize) -> usize {
    let bytes = if mb == 0 { 64 << 10 } else { mb << 20 };
    (bytes / ENTRY_BYTES).max(1)
}

/// `mb`, halved while it exceeds `available` MiB or `allocate` refuses it, down to 0 (the
/// minimal table, which is taken from `allocate` too and must not be refused).
fn largest_that_fits<T>(
    mut mb: usize,
    available: Option<usize>,
    mut allocate: impl FnMut(usize) -> Option<T>,
) -> (usize, T) {
    if let Some(available) = available {
        while mb > available {
            mb /= 2;
        }
    }
    loop {
        if let Some(table) = allocate(mb) {
            return (mb, table);
        }
        assert!(
            mb > 0,
            "the minimal 64 KiB hash table could not be allocated"
        );
        mb /= 2;
    }
}

/// `len` empty entries, or `None` if the allocator refuses (instead of aborting, as
/// `vec![Entry::default(); len]` would, after writing every entry and so touching every page).
#[expect(
    unsafe_code,
    reason = "zeroed memory the allocator may refuse; safe Rust writes every entry, or aborts"
)]
fn zeroed_entries(len: usize) -> Option<Vec<Entry>> {
    let layout = std::alloc::Layout::array::<Entry>(len).ok()?;
    if len == 0 {
        return Some(Vec::new());
    }
    // SAFETY: `layout` has a non-zero size, as `alloc_zeroed` requires. A null pointer is a
    // refusal. Otherwise the block holds `len` zeroed `Entry`s, and zero bytes are a valid
    // `Entry` (`Entry::default()`: integers only, no padding, asserted above). It comes from the
    // global allocator with the layout of `[Entry; len]`, which is exactly what a `Vec<Entry>`
    // of capacity `len` frees it with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Entry>();
        (!ptr.is_null()).then(|| Vec::from_raw_parts(ptr, len, len))
    }
}

/// `MemAvailable` of `/proc/meminfo` in MiB, on Linux; `None` where it cannot be read.
pub fn available_memory_mb() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
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
    use crate::limits::MATE;

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
    fn a_size_that_cannot_be_had_is_halved_until_it_fits() {
        // An allocator that grants at most 3000 MiB.
        let grants = |mb: usize| (mb <= 3000).then_some(mb);
        assert_eq!(largest_that_fits(32_768, None, grants), (2048, 2048));
        assert_eq!(largest_that_fits(2000, None, grants), (2000, 2000));
        // Less memory available than the allocator would grant: the smaller limit wins.
        assert_eq!(largest_that_fits(32_768, Some(1500), grants), (1024, 1024));
        // Nothing available at all still gives the minimal table.
        assert_eq!(largest_that_fits(64, Some(0), grants), (0, 0));
        let refuses_all_but_minimal = |mb: usize| (mb == 0).then_some(());
        assert_eq!(largest_that_fits(5, None, refuses_all_but_minimal).0, 0);
    }

    #[test]
    fn the_table_says_what_it_got_and_never_exceeds_the_maximum() {
        assert_eq!(TranspositionTable::new(1).mb(), 1);
        assert_eq!(TranspositionTable::new(0).mb(), 0);
        assert_eq!(TranspositionTable::new(0).entries.len(), (64 << 10) / 12);
        // usize::MAX MiB would overflow the byte count: clamped to the maximum, then halved to
        // what this machine has, without touching the memory.
        let huge = TranspositionTable::new(usize::MAX);
        assert!(huge.mb() <= MAX_HASH_MB);
        assert!(huge.mb().is_power_of_two());
        assert_eq!(huge.entries.len(), entries_in(huge.mb()));
        assert!(huge.probe(7, 0).is_none());
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
