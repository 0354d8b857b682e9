//! Time controls and clocks.
//!
//! A time control is what the user asked for (`40/60+0.6`, `st=0.1`, `nodes=5000`); a
//! [`Clock`] is one side's running account of it during a game. The clock runs from the moment
//! `go` is written to the moment `bestmove` is read, on the monotonic clock, and what the
//! engine is told in `wtime`/`btime` is exactly what the clock holds, in whole milliseconds.
//! One exception: a clock that an engine overran (within the margin) stays below zero, and
//! `go` cannot say so; it says 1 ms, "move at once" (see [`ClockTime::told`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How a side's thinking is limited. Several limits may be combined (`tc=inf nodes=5000`,
/// `tc=10+0.1 depth=12`); `clock: None` means no clock (cutechess's `inf`).
#[derive(Clone, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct TimeControl {
    pub clock: Option<ClockSpec>,
    /// Fixed time per move (`st=` / `movetime`).
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
}

/// A clock: `moves` per period (none: the whole game), base time, increment per move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockSpec {
    pub moves: Option<u32>,
    pub base: Duration,
    pub increment: Duration,
}

/// A time control that cannot be read; says what the grammar is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("time control {text:?}: {reason} (expected [moves/]time[+increment] with time in seconds or min:sec, e.g. 40/60+0.6, 10+0.1, 1:30+1, or inf)")]
pub struct TimeControlError {
    pub text: String,
    pub reason: String,
}

/// Reads a time as cutechess does: seconds (`90`, `0.5`) or `min:sec` (`1:30`, `0:05.5`).
/// cutechess reads nothing longer (`1:30:00` is not an hour and a half there), so neither do
/// we; a `min:sec` with 60 or more seconds is a typo (`1:99`), refused rather than read as
/// 159 s. The error is the reason, for [`TimeControlError`].
fn parse_seconds(text: &str) -> Result<Duration, &'static str> {
    let number = |text: &str| {
        text.parse::<f64>()
            .ok()
            .filter(|secs| secs.is_finite() && (0.0..1e9).contains(secs))
    };
    let secs = match text.split_once(':') {
        None => number(text).ok_or("is not a number of seconds")?,
        Some((_, sec)) if sec.contains(':') => {
            return Err("has more than one ':' (hours are written as minutes: 90:00)")
        }
        Some((min, sec)) => {
            let min: u32 = min
                .parse()
                .map_err(|_| "has minutes before the ':' that are not a whole number")?;
            let sec = number(sec).ok_or("has seconds after the ':' that are not a number")?;
            if sec >= 60.0 {
                return Err("has 60 or more seconds after the ':'");
            }
            f64::from(min) * 60.0 + sec
        }
    };
    Ok(Duration::from_secs_f64(secs))
}

impl FromStr for ClockSpec {
    type Err = TimeControlError;
    /// Reads cutechess's `tc=` grammar (without `inf`, which is "no clock").
    fn from_str(text: &str) -> Result<ClockSpec, TimeControlError> {
        let err = |reason: &str| TimeControlError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (moves, rest) = match text.split_once('/') {
            Some((moves, rest)) => {
                let moves: u32 = moves
                    .parse()
                    .map_err(|_| err("the moves per period must be a whole number"))?;
                if moves == 0 {
                    return Err(err("the moves per period must be at least 1"));
                }
                (Some(moves), rest)
            }
            None => (None, text),
        };
        let (base, increment) = match rest.split_once('+') {
            Some((base, inc)) => (base, Some(inc)),
            None => (rest, None),
        };
        let base = parse_seconds(base).map_err(|why| err(&format!("the base time {why}")))?;
        let increment = match increment {
            Some(inc) => parse_seconds(inc).map_err(|why| err(&format!("the increment {why}")))?,
            None => Duration::ZERO,
        };
        if base.is_zero() && increment.is_zero() {
            return Err(err("a clock needs some time"));
        }
        Ok(ClockSpec {
            moves,
            base,
            increment,
        })
    }
}

impl fmt::Display for ClockSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(moves) = self.moves {
            write!(f, "{moves}/")?;
        }
        write!(f, "{}", trim_secs(self.base))?;
        if !self.increment.is_zero() {
            write!(f, "+{}", trim_secs(self.increment))?;
        }
        Ok(())
    }
}

/// A duration as people write it in a message: `10 s`, `1.53 s`, `0.5 s`, `0.031 s` (three
/// significant digits, whole milliseconds below a second), never `10.001677029s`.
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let decimals = match secs {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        s if s >= 1.0 => 2,
        _ => 3,
    };
    let text = format!("{secs:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text} s")
}

fn trim_secs(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

impl TimeControl {
    /// Reads the `tc=` value: a clock or `inf`.
    pub fn parse_tc(text: &str) -> Result<Option<ClockSpec>, TimeControlError> {
        if text.eq_ignore_ascii_case("inf") || text.eq_ignore_ascii_case("infinite") {
            Ok(None)
        } else {
            text.parse().map(Some)
        }
    }

    /// Whether anything at all limits a search: a game with none would never end.
    pub fn is_bounded(&self) -> bool {
        self.clock.is_some()
            || self.movetime.is_some()
            || self.nodes.is_some()
            || self.depth.is_some()
    }

    /// The PGN `TimeControl` tag: `40/60+0.6` in the PGN standard's spelling
    /// (`moves/seconds:...`), `-` when unlimited by a clock.
    pub fn pgn_tag(&self) -> String {
        match (&self.clock, self.movetime) {
            (Some(clock), _) => {
                let secs = |d: Duration| trim_secs(d);
                let mut text = match clock.moves {
                    Some(moves) => format!("{moves}/{}", secs(clock.base)),
                    None => secs(clock.base),
                };
                if !clock.increment.is_zero() {
                    text.push('+');
                    text.push_str(&secs(clock.increment));
                }
                text
            }
            (None, Some(movetime)) => format!("{}/move", trim_secs(movetime)),
            (None, None) => "-".to_owned(),
        }
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match &self.clock {
            Some(clock) => parts.push(format!("tc={clock}")),
            None => parts.push("tc=inf".to_owned()),
        }
        if let Some(movetime) = self.movetime {
            parts.push(format!("st={}", trim_secs(movetime)));
        }
        if let Some(nodes) = self.nodes {
            parts.push(format!("nodes={nodes}"));
        }
        if let Some(depth) = self.depth {
            parts.push(format!("depth={depth}"));
        }
        f.write_str(&parts.join(" "))
    }
}

/// The time showing on a clock, which goes below zero when a side overruns it.
///
/// Kept in signed nanoseconds (enough for ±292 years) rather than a [`Duration`], because an
/// overrun within the margin is not forgiven: the deficit stays on the clock and every later
/// move is charged against it, as cutechess does. A clock clamped at zero would give an engine
/// that always overruns a fresh margin on every move and never flag it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockTime {
    nanos: i64,
}

impl ClockTime {
    pub const ZERO: ClockTime = ClockTime { nanos: 0 };

    pub fn from_duration(d: Duration) -> ClockTime {
        ClockTime {
            nanos: i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        }
    }

    /// Signed milliseconds, for tests and logs (rounded towards zero).
    pub fn as_millis(self) -> i64 {
        self.nanos / 1_000_000
    }

    pub fn is_negative(self) -> bool {
        self.nanos < 0
    }

    /// The time left as a [`Duration`]: zero when the clock is at or below zero.
    pub fn positive_part(self) -> Duration {
        Duration::from_nanos(u64::try_from(self.nanos).unwrap_or(0))
    }

    /// What an engine is told of this clock in `go` (`wtime`/`btime`), UCI engines and the
    /// in-process one alike: whole milliseconds, rounded down, and never less than 1 ms. UCI
    /// has no negative times, and `wtime 0` makes engines divide by zero or read "no clock";
    /// 1 ms says "move at once", which is what a side at or below zero must do. So a clock at
    /// -20 ms is told as `wtime 1`, while the runner keeps the -20 ms.
    pub fn told(self) -> Duration {
        Duration::from_millis(u64::try_from(self.nanos / 1_000_000).unwrap_or(0).max(1))
    }

    fn plus(self, d: Duration) -> ClockTime {
        ClockTime {
            nanos: self.nanos.saturating_add(ClockTime::from_duration(d).nanos),
        }
    }

    fn minus(self, d: Duration) -> ClockTime {
        ClockTime {
            nanos: self.nanos.saturating_sub(ClockTime::from_duration(d).nanos),
        }
    }
}

/// One side's clock during a game.
#[derive(Clone, Debug)]
pub struct Clock {
    spec: Option<ClockSpec>,
    remaining: ClockTime,
    /// Moves this side has completed, for the moves-per-period count.
    moves_made: u32,
}

impl Clock {
    pub fn new(spec: Option<ClockSpec>) -> Clock {
        Clock {
            spec,
            remaining: spec.map_or(ClockTime::ZERO, |s| ClockTime::from_duration(s.base)),
            moves_made: 0,
        }
    }

    pub fn spec(&self) -> Option<ClockSpec> {
        self.spec
    }

    /// Time left on the clock: negative after an overrun within the margin (zero when there
    /// is no clock). Engines are told [`ClockTime::told`] of it.
    pub fn remaining(&self) -> ClockTime {
        self.remaining
    }

    /// How long after `go` the side may think before its flag falls: the time left plus the
    /// margin, which is less than the margin when the clock is already below zero.
    pub fn flag_after(&self, margin: Duration) -> Duration {
        self.remaining.plus(margin).positive_part()
    }

    /// Moves until the next time control, for `go movestogo`.
    pub fn moves_to_go(&self) -> Option<u32> {
        let moves = self.spec?.moves?;
        Some(moves - self.moves_made % moves)
    }

    /// Charges a move that took `used`. Returns `false` if the flag fell: more than
    /// [`Clock::flag_after`] was used, that is the clock went below minus the margin.
    ///
    /// As in cutechess: the time used comes off the clock even when that leaves it below zero,
    /// and the deficit is carried; the flag is looked at before the increment, which is earned
    /// by completing the move in time (a clock charged to -20 ms gets +100 ms and shows 80 ms);
    /// when a period's moves are done its base time is added to whatever the clock shows, a
    /// deficit included.
    pub fn charge(&mut self, used: Duration, margin: Duration) -> bool {
        let Some(spec) = self.spec else { return true };
        let flagged = used > self.flag_after(margin);
        self.remaining = self.remaining.minus(used);
        if flagged {
            return false;
        }
        self.remaining = self.remaining.plus(spec.increment);
        self.moves_made += 1;
        if let Some(moves) = spec.moves {
            if self.moves_made.is_multiple_of(moves) {
                self.remaining = self.remaining.plus(spec.base);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn grammar() {
        let tc: ClockSpec = "40/60+0.6".parse().unwrap();
        assert_eq!(
            tc,
            ClockSpec {
                moves: Some(40),
                base: ms(60_000),
                increment: ms(600)
            }
        );
        assert_eq!(
            "10+0.1".parse::<ClockSpec>().unwrap(),
            ClockSpec {
                moves: None,
                base: ms(10_000),
                increment: ms(100)
            }
        );
        assert_eq!("1:30+1".parse::<ClockSpec>().unwrap().base, ms(90_000));
        assert_eq!("0:05".parse::<ClockSpec>().unwrap().base, ms(5_000));
        assert_eq!("40/1:00".parse::<ClockSpec>().unwrap().moves, Some(40));
        assert_eq!(TimeControl::parse_tc("inf").unwrap(), None);
        for bad in [
            "", "x", "40/", "/60", "0/60", "60+", "60+x", "-5", "0", "1:xx", "nan", "inf+1",
        ] {
            let e = bad.parse::<ClockSpec>().unwrap_err();
            assert!(
                e.to_string().contains("expected [moves/]time"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            "40/60+0.6".parse::<ClockSpec>().unwrap().to_string(),
            "40/60+0.6"
        );
        assert_eq!("1+0.01".parse::<ClockSpec>().unwrap().to_string(), "1+0.01");
    }

    /// The clock's time in whole milliseconds.
    fn shows(clock: &Clock) -> i64 {
        clock.remaining().as_millis()
    }

    #[test]
    fn clock_increment_periods_and_flag() {
        let mut clock = Clock::new(Some("2/10+1".parse().unwrap()));
        assert_eq!(clock.moves_to_go(), Some(2));
        assert!(clock.charge(ms(3000), ms(0)));
        assert_eq!(shows(&clock), 8000);
        assert_eq!(clock.moves_to_go(), Some(1));
        assert!(clock.charge(ms(1000), ms(0)));
        // Second move of the period: increment, then a new period's 10 s.
        assert_eq!(shows(&clock), 18_000);
        assert_eq!(clock.moves_to_go(), Some(2));
        assert!(clock.charge(ms(18_050), ms(100)), "within the margin");
        assert_eq!(shows(&clock), 950, "-50 ms, then the 1 s increment");
        assert!(
            !clock.charge(ms(1_051), ms(100)),
            "1.051 s used of 0.95 s + 0.1 s margin"
        );
        let mut clock = Clock::new(Some("1+0".parse().unwrap()));
        assert!(
            !clock.charge(ms(1_011), ms(10)),
            "flag falls beyond the margin"
        );
        assert_eq!(shows(&clock), -11, "a flagged clock shows what was used");
    }

    #[test]
    fn an_overrun_within_the_margin_is_carried_not_forgiven() {
        // The engine of issue 9: at 1+0 with a 50 ms margin it always thinks for what its
        // clock says plus 30 ms. Clamped at zero, it got a fresh margin every move.
        let mut clock = Clock::new(Some("1+0".parse().unwrap()));
        assert!(
            clock.charge(ms(1_030), ms(50)),
            "30 ms over: within the margin"
        );
        assert_eq!(shows(&clock), -30);
        assert!(clock.remaining().is_negative());
        assert_eq!(clock.remaining().told(), ms(1), "go says wtime 1");
        assert_eq!(clock.flag_after(ms(50)), ms(20), "20 ms of margin left");
        assert!(
            !clock.charge(ms(31), ms(50)),
            "told 1 ms, 31 ms used: the deficit (61 ms) passes the margin"
        );
        assert_eq!(shows(&clock), -61);

        // Small overruns add up until the margin is spent.
        let mut clock = Clock::new(Some("1+0".parse().unwrap()));
        assert!(clock.charge(ms(1_000), ms(50)));
        let mut moves = 0;
        while clock.charge(ms(10), ms(50)) {
            moves += 1;
        }
        assert_eq!(
            moves, 5,
            "five 10 ms moves fit in the 50 ms margin, not one more"
        );
        assert_eq!(shows(&clock), -60);
    }

    #[test]
    fn the_increment_is_added_to_a_negative_clock_after_the_flag_check() {
        let mut clock = Clock::new(Some("1+0.1".parse().unwrap()));
        assert!(clock.charge(ms(1_020), ms(50)));
        assert_eq!(shows(&clock), 80, "-20 ms, then +100 ms");
        // An increment too small to pay the overrun off leaves the clock below zero, and
        // the next move is charged against the deficit.
        let mut clock = Clock::new(Some("1+0.01".parse().unwrap()));
        assert!(clock.charge(ms(1_040), ms(50)));
        assert_eq!(shows(&clock), -30, "-40 ms, then +10 ms");
        assert_eq!(clock.remaining().told(), ms(1));
        assert_eq!(clock.flag_after(ms(50)), ms(20));
        assert!(
            clock.charge(ms(15), ms(50)),
            "-45 ms: still within the margin"
        );
        assert_eq!(shows(&clock), -35);
        // The increment does not count towards the move it follows: 21 ms leaves -56 ms
        // before the increment, beyond the margin, though -46 ms after it.
        assert!(!clock.charge(ms(21), ms(50)), "-56 ms before the increment");
    }

    #[test]
    fn a_deficit_is_carried_into_the_next_period() {
        let mut clock = Clock::new(Some("2/1".parse().unwrap()));
        assert!(clock.charge(ms(600), ms(50)));
        assert!(
            clock.charge(ms(430), ms(50)),
            "-30 ms at the end of the period"
        );
        assert_eq!(shows(&clock), 970, "the new period's 1 s less the deficit");
        assert_eq!(clock.moves_to_go(), Some(2));
    }

    #[test]
    fn what_go_is_told() {
        let told = |nanos: i64| ClockTime { nanos }.told();
        assert_eq!(told(9_500_000_000), ms(9_500));
        assert_eq!(told(1_999_999), ms(1), "whole milliseconds, rounded down");
        assert_eq!(told(400_000), ms(1), "never 0");
        assert_eq!(told(0), ms(1));
        assert_eq!(
            told(-20_000_000),
            ms(1),
            "a negative clock says: move at once"
        );
        assert_eq!(ClockTime { nanos: -5 }.positive_part(), Duration::ZERO);
    }

    #[test]
    fn min_sec_is_checked() {
        let reason = |text: &str| text.parse::<ClockSpec>().unwrap_err().to_string();
        assert!(
            reason("1:99").contains("the base time has 60 or more seconds after the ':'"),
            "{}",
            reason("1:99")
        );
        assert!(reason("1:60+1").contains("60 or more seconds"));
        assert!(reason("1.5:30").contains("minutes before the ':' that are not a whole number"));
        assert!(reason("-1:30").contains("not a whole number"));
        assert!(reason("1:30:00").contains("more than one ':'"));
        assert!(reason("60+0:75").contains("the increment has 60 or more seconds"));
        assert!(reason("1:x").contains("seconds after the ':' that are not a number"));
        assert_eq!(
            reason("1:99"),
            "time control \"1:99\": the base time has 60 or more seconds after the ':' \
             (expected [moves/]time[+increment] with time in seconds or min:sec, e.g. \
             40/60+0.6, 10+0.1, 1:30+1, or inf)"
        );
        assert!(reason("1:99").contains("expected [moves/]time[+increment]"));
        assert_eq!("1:59.5".parse::<ClockSpec>().unwrap().base, ms(119_500));
        assert_eq!("90:00".parse::<ClockSpec>().unwrap().base, ms(5_400_000));
    }

    #[test]
    fn durations_in_messages() {
        let human = |secs: f64| human_duration(Duration::from_secs_f64(secs));
        assert_eq!(human(10.001_677_029), "10 s");
        assert_eq!(human(0.5), "0.5 s");
        assert_eq!(human(1.5), "1.5 s");
        assert_eq!(human(1.0301), "1.03 s");
        assert_eq!(human(0.031_2), "0.031 s");
        assert_eq!(human(0.000_2), "0 s");
        assert_eq!(human(9.999), "10 s");
        assert_eq!(human(60.0), "60 s");
        assert_eq!(human(3600.4), "3600 s");
    }

    #[test]
    fn pgn_tag() {
        let tc = TimeControl {
            clock: Some("40/60+0.6".parse().unwrap()),
            ..Default::default()
        };
        assert_eq!(tc.pgn_tag(), "40/60+0.6");
        let tc = TimeControl {
            nodes: Some(1000),
            ..Default::default()
        };
        assert_eq!(tc.pgn_tag(), "-");
        assert_eq!(tc.to_string(), "tc=inf nodes=1000");
        assert!(!TimeControl::default().is_bounded());
    }
}
