//! Search limits and time management.
//!
//! A clock search gets two budgets. The soft limit is checked between iterations of iterative
//! deepening: past it, no new iteration starts (the next one would take longer than all
//! before it). The hard limit is checked every few thousand nodes inside the search and ends it
//! at once. Both leave `move_overhead` for the trip from engine to referee and never spend more
//! than a fraction of what is left, so even at 1 s + 10 ms per game the clock never runs out.
//! `movetime` sets both limits to the given time less the overhead. Depth and node limits
//! involve no clock at all, which keeps those searches deterministic.

use std::time::{Duration, Instant};

use arbiter_rules::{Color, Move};

use crate::params::Params;

/// The remaining time and increments of both sides: the protocol's own `go` clocks.
pub use arbiter_uci::Clocks as ClockLimits;

/// When a search must stop. Limits combine: the search ends at the first one reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest iteration to complete.
    pub depth: Option<u32>,
    /// Node budget: the search stops as soon as it has visited this many nodes.
    pub nodes: Option<u64>,
    /// Exact time for this move.
    pub movetime: Option<Duration>,
    /// Clock times for a game under a time control.
    pub clock: Option<ClockLimits>,
    /// Search until stopped (`go infinite`); other limits are ignored.
    pub infinite: bool,
    /// Time kept in reserve for communication on every move.
    pub move_overhead: Duration,
    /// Only these root moves are searched (`go searchmoves`); empty means all.
    pub searchmoves: Vec<Move>,
    /// When the clock started for this move; `None`: when the search starts. The UCI loop sets
    /// it on reading `go`, so time spent before the search thread picks the job up counts.
    pub started_at: Option<Instant>,
    /// Where the search is cut off whatever its other limits say, as a GUI's `stop` would cut
    /// it: a hard limit only, with no soft one to end iterations early, so a search that
    /// finishes before it is exactly the search without it. The runner's move timeout for an
    /// unclocked in-process search.
    pub stop_at: Option<Duration>,
}

/// The UCI default for `Move Overhead`.
pub const DEFAULT_MOVE_OVERHEAD: Duration = Duration::from_millis(10);

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            depth: None,
            nodes: None,
            movetime: None,
            clock: None,
            infinite: false,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            searchmoves: Vec::new(),
            started_at: None,
            stop_at: None,
        }
    }
}

impl Limits {
    /// Search to a fixed depth.
    pub fn depth(depth: u32) -> Limits {
        Limits {
            depth: Some(depth),
            ..Limits::default()
        }
    }

    /// Search a fixed number of nodes.
    pub fn nodes(nodes: u64) -> Limits {
        Limits {
            nodes: Some(nodes),
            ..Limits::default()
        }
    }

    /// Search for a fixed time.
    pub fn movetime(time: Duration) -> Limits {
        Limits {
            movetime: Some(time),
            ..Limits::default()
        }
    }

    /// Play under a clock.
    pub fn clock(clock: ClockLimits) -> Limits {
        Limits {
            clock: Some(clock),
            ..Limits::default()
        }
    }

    /// Whether the clock can stop this search (as opposed to depth, nodes or `stop` only).
    pub fn is_timed(&self) -> bool {
        !self.infinite && (self.movetime.is_some() || self.clock.is_some())
    }
}

/// Budgets for one search, measured from its start.
#[derive(Clone, Debug)]
pub struct TimeManager {
    start: Instant,
    soft: Option<Duration>,
    hard: Option<Duration>,
}

impl TimeManager {
    /// Budgets for `side` under `limits`; the shares of a clock come from `params`' `tm_`
    /// parameters, the safety ceilings (never more than half the time left on one move) do not.
    pub fn new(limits: &Limits, side: Color, start: Instant, params: &Params) -> TimeManager {
        let mut soft: Option<Duration> = None;
        let mut hard: Option<Duration> = None;
        if !limits.infinite {
            if let Some(clock) = limits.clock {
                let (time, inc) = match side {
                    Color::White => (clock.wtime, clock.winc),
                    Color::Black => (clock.btime, clock.binc),
                };
                let (s, h) = clock_budget(time, inc, clock.movestogo, limits.move_overhead, params);
                soft = Some(s);
                hard = Some(h);
            }
            if let Some(movetime) = limits.movetime {
                let t = movetime
                    .saturating_sub(limits.move_overhead)
                    .max(Duration::from_millis(1));
                soft = Some(soft.map_or(t, |s| s.min(t)));
                hard = Some(hard.map_or(t, |h| h.min(t)));
            }
        }
        if let Some(limit) = limits.stop_at {
            hard = Some(hard.map_or(limit, |h| h.min(limit)));
        }
        TimeManager { start, soft, hard }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether the search must end now.
    pub fn hard_limit_reached(&self) -> bool {
        self.hard.is_some_and(|h| self.elapsed() >= h)
    }

    /// Whether to start no new iteration; `percent` scales the soft limit (best-move
    /// stability: less when the best move has not changed for a while, more when it has).
    pub fn soft_limit_reached(&self, percent: i32) -> bool {
        let percent = unsigned(percent).max(1);
        self.soft
            .is_some_and(|s| self.elapsed() >= s * percent / 100)
    }

    /// Shrinks the soft limit, for positions where thinking cannot change the move.
    pub fn shorten(&mut self, divisor: i32) {
        self.soft = self.soft.map(|s| s / unsigned(divisor).max(1));
    }

    pub fn soft(&self) -> Option<Duration> {
        self.soft
    }

    pub fn hard(&self) -> Option<Duration> {
        self.hard
    }
}

/// (soft, hard) budgets for `time` left with increment `inc`.
fn clock_budget(
    time: Duration,
    inc: Duration,
    movestogo: Option<u32>,
    overhead: Duration,
    params: &Params,
) -> (Duration, Duration) {
    let available = time.saturating_sub(overhead);
    let moves = movestogo.map_or(unsigned(params.tm_moves).max(1), |m| m.clamp(1, 40));
    let base = available / moves + inc * unsigned(params.tm_inc_percent) / 100;
    // With one move to the control all of the remaining time may go; otherwise never more
    // than half of it on one move, whatever the increment promises.
    let ceiling = if moves == 1 {
        available * 9 / 10
    } else {
        available / 2
    };
    let soft = base.min(ceiling * 6 / 10);
    let hard = (base * unsigned(params.tm_hard_percent) / 100).min(ceiling);
    (soft, hard)
}

/// A `tm_` parameter as a factor of a `Duration`. `Engine` takes parameters unchecked, so a
/// negative value counts as 0 rather than wrapping into a huge budget.
fn unsigned(value: i32) -> u32 {
    value.max(0).unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(time_ms: u64, inc_ms: u64, mtg: Option<u32>) -> (u128, u128) {
        let (s, h) = clock_budget(
            Duration::from_millis(time_ms),
            Duration::from_millis(inc_ms),
            mtg,
            DEFAULT_MOVE_OVERHEAD,
            &Params::default(),
        );
        (s.as_millis(), h.as_millis())
    }

    #[test]
    fn budgets_stay_inside_the_clock() {
        for time in [0, 5, 10, 11, 20, 50, 100, 1000, 10_000, 60_000, 600_000] {
            for inc in [0, 10, 100, 1000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    let (soft, hard) = budget(time, inc, mtg);
                    assert!(soft <= hard, "{time} {inc} {mtg:?}");
                    // The hard limit plus the overhead never exceeds the time left.
                    assert!(
                        hard + 10 <= u128::from(time.max(10)),
                        "{time} {inc} {mtg:?}: {hard}"
                    );
                }
            }
        }
    }

    #[test]
    fn sensible_shares() {
        // 1 s + 10 ms: some tens of milliseconds per move.
        let (soft, hard) = budget(1000, 10, None);
        assert!((30..=60).contains(&soft), "{soft}");
        assert!(hard >= soft * 2 && hard <= 495);
        // Last move before the control: most of the time is usable.
        let (_, hard) = budget(10_000, 0, Some(1));
        assert!(hard > 5000);
    }

    #[test]
    fn clock_shares_follow_the_tm_parameters() {
        let ms = |d: Duration| d.as_millis();
        let clock = |params: &Params| {
            let (soft, hard) = clock_budget(
                Duration::from_millis(10_010),
                Duration::from_millis(100),
                None,
                DEFAULT_MOVE_OVERHEAD,
                params,
            );
            (ms(soft), ms(hard))
        };
        // The defaults: 10 s over 25 moves plus three quarters of the increment, hard at 4×.
        assert_eq!(clock(&Params::default()), (475, 1900));
        let params = Params {
            tm_moves: 40,
            tm_inc_percent: 100,
            tm_hard_percent: 200,
            ..Params::default()
        };
        assert_eq!(clock(&params), (350, 700));
        // The ceiling is not a parameter: half the time left, whatever the shares say.
        let greedy = Params {
            tm_moves: 10,
            tm_hard_percent: 800,
            ..Params::default()
        };
        let (soft, hard) = clock(&greedy);
        assert_eq!((soft, hard), (1075, 5000));
    }

    #[test]
    fn movetime_and_untimed_limits() {
        let start = Instant::now();
        let tm = TimeManager::new(
            &Limits::movetime(Duration::from_millis(300)),
            Color::White,
            start,
            &Params::default(),
        );
        assert_eq!(tm.hard(), Some(Duration::from_millis(290)));
        let tm = TimeManager::new(&Limits::depth(5), Color::White, start, &Params::default());
        assert_eq!((tm.soft(), tm.hard()), (None, None));
        // A cut-off is a hard limit alone: iterations are not ended early because of it.
        let cut = Limits {
            stop_at: Some(Duration::from_millis(70)),
            ..Limits::depth(40)
        };
        let tm = TimeManager::new(&cut, Color::White, start, &Params::default());
        assert_eq!(
            (tm.soft(), tm.hard()),
            (None, Some(Duration::from_millis(70)))
        );
        assert!(!tm.hard_limit_reached() && !tm.soft_limit_reached(100));
        let infinite = Limits {
            infinite: true,
            movetime: Some(Duration::from_millis(1)),
            ..Limits::default()
        };
        assert_eq!(
            TimeManager::new(&infinite, Color::White, start, &Params::default()).hard(),
            None
        );
    }
}
