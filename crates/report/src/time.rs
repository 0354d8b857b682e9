//! What the time charts need, gathered per engine while the games stream in: a 100,000-game
//! run holds millions of moves, so each engine keeps fixed-size histograms ([`Distribution`])
//! instead of the moves themselves. Percentiles read from them are exact in rank and within one
//! bin (about 6%) in value; counts and the maximum are exact.

use std::collections::BTreeMap;

use arbiter_records::entries::{GameEntry, MoveTime};
use arbiter_store::Clock;
use serde::Serialize;

/// Bins per factor of ten, from [`Distribution::FLOOR_MS`] up.
const BINS_PER_DECADE: f64 = 40.0;
/// Ten decades above the floor: 0.01 ms to 100,000 s.
const BINS: usize = 401;

/// A fixed log-scaled histogram of milliseconds with the exact count and maximum. Values at or
/// below the floor (including negative ones: a clock within the margin, an engine reporting a
/// little more than the runner measured) fall in the first bin and read as the floor.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    bins: Vec<u32>,
    count: u64,
    max: f64,
}

impl Default for Distribution {
    fn default() -> Distribution {
        Distribution {
            bins: vec![0; BINS],
            count: 0,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Distribution {
    pub const FLOOR_MS: f64 = 0.01;

    pub fn add(&mut self, ms: f64) {
        let bin = if ms > Self::FLOOR_MS {
            (1.0 + (ms / Self::FLOOR_MS).log10() * BINS_PER_DECADE) as usize
        } else {
            0
        };
        self.bins[bin.min(BINS - 1)] += 1;
        self.count += 1;
        self.max = self.max.max(ms);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value added, exactly; none when empty.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// The nearest-rank `q` quantile (0 < q <= 1), as its bin's geometric middle, never above
    /// the maximum; none when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        let bin = self
            .bins
            .iter()
            .position(|&n| {
                seen += u64::from(n);
                seen >= rank
            })
            .unwrap_or(BINS - 1);
        let value = if bin == 0 {
            Self::FLOOR_MS
        } else {
            Self::FLOOR_MS * 10f64.powf((bin as f64 - 0.5) / BINS_PER_DECADE)
        };
        Some(value.min(self.max.max(Self::FLOOR_MS)))
    }
}

/// One engine's timing over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineTimes {
    /// By the engine's own move number out of book (index 0 is its first move): time from `go`
    /// to `bestmove`, and the clock left after the move where there was a clock.
    pub by_move: Vec<(Distribution, Distribution)>,
    /// `move_ms - engine_ms` of every move whose search time the engine reported.
    pub latency: Distribution,
}

impl EngineTimes {
    /// Engine moves with a measured time.
    pub fn moves(&self) -> u64 {
        self.by_move.iter().map(|(used, _)| used.count()).sum()
    }

    /// Engine moves with a clock after them.
    pub fn clocked_moves(&self) -> u64 {
        self.by_move.iter().map(|(_, clock)| clock.count()).sum()
    }
}

/// Who moved which engine move of a game, and what the game says about time trouble.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameTimes {
    /// The lowest clock after a move of White's and of Black's; none without a clock.
    pub lowest_clock_ms: [Option<i64>; 2],
    /// Whether White made the first engine move (the side to move after the book).
    pub white_first: bool,
}

/// Whether White is to move in `fen` (its second field), as FEN defines it.
fn white_to_move(fen: &str) -> bool {
    fen.split_whitespace().nth(1) != Some("b")
}

impl GameTimes {
    /// Reads the game's timing from its record (plies counts book moves too; the record's
    /// per-move lists hold only engine moves, so the book's length is the difference) and adds
    /// each engine move to `engines`, by name.
    pub fn gather(
        entry: &GameEntry,
        plies: u32,
        engines: &mut BTreeMap<String, EngineTimes>,
    ) -> GameTimes {
        let book = (plies as usize).saturating_sub(entry.move_ms.len());
        let white_first = white_to_move(&entry.fen) == book.is_multiple_of(2);
        let mut times = GameTimes {
            lowest_clock_ms: [None, None],
            white_first,
        };
        let names = [entry.white.as_str(), entry.black.as_str()];
        let flagged_side = times.side_to_move_at_end(entry.move_ms.len());
        for (side, name) in names.into_iter().enumerate() {
            let engine = engines.entry(name.to_owned()).or_default();
            // The side's moves are every other entry, starting with the first mover's.
            let start = usize::from((side == 0) != white_first);
            let played = (start..entry.move_ms.len()).step_by(2).map(|i| MoveTime {
                ms: entry.move_ms[i],
                engine_ms: entry.engine_ms.get(i).copied().flatten(),
                clock_ms: entry.clock_ms.get(i).copied().flatten(),
            });
            // The move that overran the clock comes last, as the side's next move.
            let flagged = entry.flagged_move.filter(|_| side == flagged_side);
            for (number, m) in played.chain(flagged).enumerate() {
                times.add(side, engine, number, m);
            }
        }
        times
    }

    /// Adds one move of `side`'s, its `number`-th out of book, to its engine's times and to this
    /// game's lowest clock.
    fn add(&mut self, side: usize, engine: &mut EngineTimes, number: usize, m: MoveTime) {
        if engine.by_move.len() <= number {
            engine.by_move.resize_with(number + 1, Default::default);
        }
        let (used, clock) = &mut engine.by_move[number];
        used.add(m.ms);
        if let Some(left) = m.clock_ms {
            clock.add(left as f64);
            let lowest = &mut self.lowest_clock_ms[side];
            *lowest = Some(lowest.map_or(left, |l| l.min(left)));
        }
        if let Some(search) = m.engine_ms {
            engine.latency.add(m.ms - search as f64);
        }
    }

    /// The side to move when the game ended after `engine_moves` engine moves: the one whose
    /// flag fell in a time forfeit, since a flagged move is never played. 0 is White.
    pub fn side_to_move_at_end(&self, engine_moves: usize) -> usize {
        (usize::from(!self.white_first) + engine_moves) % 2
    }
}

/// What the time control allowed an engine, for the charts' reference lines.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Budget {
    pub base_ms: f64,
    pub increment_ms: f64,
    /// Moves per period; none for the whole game.
    pub moves: Option<u32>,
}

impl From<Clock> for Budget {
    fn from(clock: Clock) -> Budget {
        Budget {
            base_ms: clock.base_ms,
            increment_ms: clock.increment_ms,
            moves: clock.moves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_exact_in_rank_and_close_in_value() {
        let mut d = Distribution::default();
        assert_eq!((d.quantile(0.5), d.max()), (None, None));
        for ms in 1..=100 {
            d.add(f64::from(ms));
        }
        assert_eq!(d.count(), 100);
        assert_eq!(d.max(), Some(100.0));
        for (q, exact) in [(0.5, 50.0), (0.9, 90.0), (0.99, 99.0), (1.0, 100.0)] {
            let got = d.quantile(q).unwrap();
            assert!((got / exact - 1.0).abs() < 0.06, "q{q}: {got} vs {exact}");
        }
        d.add(-3.0);
        assert_eq!(d.quantile(0.001), Some(Distribution::FLOOR_MS));
    }

    fn entry(fen: &str, moves: usize, white: &str, black: &str) -> GameEntry {
        GameEntry {
            schema: 1,
            kind: arbiter_records::entries::EntryKind::Game,
            game: 1,
            pair: 0,
            white: white.into(),
            black: black.into(),
            result: "1-0".into(),
            termination: "normal".into(),
            reason: String::new(),
            plies: 0,
            opening: "startpos".into(),
            fen: fen.into(),
            moves: String::new(),
            move_ms: (0..moves).map(|i| 10.0 * (i + 1) as f64).collect(),
            engine_ms: (0..moves)
                .map(|i| (i % 2 == 0).then_some(9 * (i as u64 + 1)))
                .collect(),
            clock_ms: (0..moves).map(|i| Some(1000 - 100 * i as i64)).collect(),
            flagged_move: None,
            duration_ms: 0,
            runner_overhead_us: 0,
        }
    }

    /// Black to move in the FEN and one book move: White makes the first engine move, so the
    /// even entries are White's; counted here by hand.
    #[test]
    fn moves_go_to_the_side_that_made_them() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let mut engines = BTreeMap::new();
        // 5 engine moves after 1 book move: 6 plies.
        let times = GameTimes::gather(&entry(fen, 5, "w", "b"), 6, &mut engines);
        assert!(times.white_first);
        let (w, b) = (&engines["w"], &engines["b"]);
        assert_eq!((w.moves(), b.moves()), (3, 2));
        // White's moves: entries 0, 2, 4 (10, 30, 50 ms); its second move is entry 2.
        assert_eq!(w.by_move[1].0.max(), Some(30.0));
        assert_eq!(b.by_move[1].0.max(), Some(40.0));
        // Clocks: 1000 - 100 i; White's lowest after entry 4, Black's after entry 3.
        assert_eq!(times.lowest_clock_ms, [Some(600), Some(700)]);
        // Search reported on even entries only: all White's, none of Black's; latency i+1.
        assert_eq!((w.latency.count(), b.latency.count()), (3, 0));
        assert_eq!(w.latency.max(), Some(50.0 - 45.0));
        // After 5 engine moves from White's first, Black is to move; after 6, White.
        assert_eq!(times.side_to_move_at_end(5), 1);
        assert_eq!(times.side_to_move_at_end(6), 0);
    }

    /// The move that overran the clock was never played, yet it is Black's third move here (it
    /// was to move after five engine moves): its time, its clock below zero and its latency
    /// count with the rest of Black's.
    #[test]
    fn the_flagged_move_counts_as_its_sides_next_move() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let mut e = entry(fen, 5, "w", "b");
        e.flagged_move = Some(MoveTime {
            ms: 700.0,
            engine_ms: Some(20),
            clock_ms: Some(-50),
        });
        let mut engines = BTreeMap::new();
        let times = GameTimes::gather(&e, 6, &mut engines);
        let (w, b) = (&engines["w"], &engines["b"]);
        assert_eq!((w.moves(), b.moves()), (3, 3));
        assert_eq!(b.by_move[2].0.max(), Some(700.0));
        assert_eq!(b.by_move[2].1.count(), 1);
        assert_eq!(times.lowest_clock_ms, [Some(600), Some(-50)]);
        assert_eq!((w.latency.count(), b.latency.count()), (3, 1));
        assert_eq!(b.latency.max(), Some(680.0));
    }
}
