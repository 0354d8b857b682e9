//! Time controls and clocks.
//!
//! A time control is what the user asked for (`40/60+0.6`, `st=0.1`, `nodes=5000`); a
//! [`Clock`] is one side's running account of it during a game. The clock runs from the moment
//! `go` is written to the moment `bestmove` is read, on the monotonic clock, and what the
//! engine is told in `wtime`/`btime` is exactly what the clock holds.

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

fn parse_seconds(text: &str) -> Option<Duration> {
    let secs = match text.split_once(':') {
        Some((min, sec)) => min.parse::<f64>().ok()? * 60.0 + sec.parse::<f64>().ok()?,
        None => text.parse::<f64>().ok()?,
    };
    (secs.is_finite() && (0.0..1e9).contains(&secs)).then(|| Duration::from_secs_f64(secs))
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
        let base =
            parse_seconds(base).ok_or_else(|| err("the base time is not a number of seconds"))?;
        let increment = match increment {
            Some(inc) => {
                parse_seconds(inc).ok_or_else(|| err("the increment is not a number of seconds"))?
            }
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

/// One side's clock during a game.
#[derive(Clone, Debug)]
pub struct Clock {
    spec: Option<ClockSpec>,
    remaining: Duration,
    /// Moves this side has completed, for the moves-per-period count.
    moves_made: u32,
}

impl Clock {
    pub fn new(spec: Option<ClockSpec>) -> Clock {
        Clock {
            spec,
            remaining: spec.map_or(Duration::ZERO, |s| s.base),
            moves_made: 0,
        }
    }

    pub fn spec(&self) -> Option<ClockSpec> {
        self.spec
    }

    /// Time left on the clock (zero when there is no clock).
    pub fn remaining(&self) -> Duration {
        self.remaining
    }

    /// Moves until the next time control, for `go movestogo`.
    pub fn moves_to_go(&self) -> Option<u32> {
        let moves = self.spec?.moves?;
        Some(moves - self.moves_made % moves)
    }

    /// Charges a move that took `used`. Returns `false` if the flag fell: more than the
    /// remaining time plus `margin` was used. The increment is added after the move, and a
    /// new period's base time when the moves of a period are done, as cutechess does.
    pub fn charge(&mut self, used: Duration, margin: Duration) -> bool {
        let Some(spec) = self.spec else { return true };
        if used > self.remaining + margin {
            self.remaining = Duration::ZERO;
            return false;
        }
        self.remaining = self.remaining.saturating_sub(used) + spec.increment;
        self.moves_made += 1;
        if let Some(moves) = spec.moves {
            if self.moves_made.is_multiple_of(moves) {
                self.remaining += spec.base;
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

    #[test]
    fn clock_increment_periods_and_flag() {
        let mut clock = Clock::new(Some("2/10+1".parse().unwrap()));
        assert_eq!(clock.moves_to_go(), Some(2));
        assert!(clock.charge(ms(3000), ms(0)));
        assert_eq!(clock.remaining(), ms(8000));
        assert_eq!(clock.moves_to_go(), Some(1));
        assert!(clock.charge(ms(1000), ms(0)));
        // Second move of the period: increment, then a new period's 10 s.
        assert_eq!(clock.remaining(), ms(18_000));
        assert_eq!(clock.moves_to_go(), Some(2));
        assert!(clock.charge(ms(18_050), ms(100)), "within the margin");
        assert_eq!(clock.remaining(), ms(1000));
        assert!(
            !clock.charge(ms(1_201), ms(100)),
            "1.201 s used of 1 s + 0.1 s margin"
        );
        let mut clock = Clock::new(Some("1+0".parse().unwrap()));
        assert!(
            !clock.charge(ms(1_011), ms(10)),
            "flag falls beyond the margin"
        );
        assert_eq!(clock.remaining(), ms(0));
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
