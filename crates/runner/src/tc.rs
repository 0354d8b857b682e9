//! Time controls and clocks.
//!
//! A time control is what the user asked for (`40/60+0.6`, `st=0.1`, `nodes=5000`); a
//! [`Clock`] is one side's running account of it during a game. The clock runs from the moment
//! `go` is written to the moment `bestmove` is read, on the monotonic clock, and what the
//! engine is told in `wtime`/`btime` is exactly what the clock holds, in whole milliseconds.
//! One exception: a clock that an engine overran (within the margin) stays below zero, and
//! `go` cannot say so; it says 1 ms, "move at once" (see [`ClockTime::told`]).
//!
//! The `tc=` grammar is what cutechess-cli and fastchess accept, so that their users' command
//! lines and scripts work unchanged: `[moves/][hg]time[+increment]` or `inf`, where a time is
//! seconds (`10`, `0.5`, with fastchess's optional `s`: `2s`, `0.02s`) or `min:sec` (`1:30`).
//! Times are whole milliseconds, as UCI speaks them: a decimal is rounded to the nearest one
//! (cutechess and older fastchess truncate `x * 1000` in floating point, which reads `1.005`
//! as 1004 ms). What the tools read in a surprising way is refused with the reason instead:
//! `1:99` (a typo, not 159 s), `60ms` (older fastchess read it as 60 seconds), `0+1` (a clock
//! that starts empty flags on the first move). `hg` is cutechess's hourglass: the time one side
//! uses is added to the other's clock ([`charge_move`]).

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
    /// cutechess's hourglass (`tc=hg60`): the time a side uses is added to its opponent's
    /// clock, so the two clocks always hold the same total. Only with neither moves per
    /// period nor an increment, and only when both sides have one, as in cutechess.
    #[serde(default)]
    pub hourglass: bool,
}

/// The grammar, for the end of every refusal.
const TC_GRAMMAR: &str = "expected [moves/]time[+increment], time in seconds with an optional \
                          s (2s, 0.02s) or min:sec; e.g. 40/60+0.6, 10+0.1, 2+0.02s, 1:30+1, \
                          hg60 (hourglass), or inf";

/// A time control that cannot be read; says what the grammar is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("time control {text:?}: {reason} ({TC_GRAMMAR})")]
pub struct TimeControlError {
    pub text: String,
    pub reason: String,
}

/// An `st=` value that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "time per move {text:?}: {reason} (expected st=SECONDS, a positive number of seconds with \
     an optional s, e.g. st=0.5 or st=0.5s)"
)]
pub struct MoveTimeError {
    pub text: String,
    pub reason: String,
}

/// The most seconds a time may hold: beyond any game, and milliseconds still fit in a `u64`.
const MAX_SECONDS: u64 = 1_000_000_000;

/// Why `60ms` is refused: older fastchess read a trailing unit as nothing (60 seconds), and
/// neither tool has milliseconds, so the text means different things to different tools.
const MILLISECONDS: &str = "is in milliseconds (ms), which neither cutechess nor fastchess \
                            reads: write seconds, 0.05 for 50 ms";

/// Reads a decimal number of seconds (`90`, `0.5`, `.5`, `5.`) into whole milliseconds,
/// rounded to the nearest (a half away from zero). Digits only: no sign, no exponent, no
/// `inf`/`nan`, which `f64` parsing would let through. The error is the reason.
fn decimal_millis(text: &str) -> Result<u64, &'static str> {
    const NOT_A_NUMBER: &str = "is not a number of seconds";
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return Err(NOT_A_NUMBER);
    }
    let too_long = "is more than 10^9 seconds";
    let whole: u64 = match whole.trim_start_matches('0') {
        "" => 0,
        w if w.len() > 10 => return Err(too_long),
        w => w.parse().map_err(|_| NOT_A_NUMBER)?,
    };
    if whole > MAX_SECONDS {
        return Err(too_long);
    }
    let digit = |i: usize| {
        fraction
            .as_bytes()
            .get(i)
            .map_or(0, |b| u64::from(b - b'0'))
    };
    let millis =
        whole * 1000 + digit(0) * 100 + digit(1) * 10 + digit(2) + u64::from(digit(3) >= 5);
    if millis == 0 && fraction.bytes().any(|b| b != b'0') {
        return Err("is below a millisecond, the smallest time UCI can say");
    }
    Ok(millis)
}

/// A number of seconds with fastchess's optional `s` suffix (`0.02s`).
fn seconds_millis(text: &str) -> Result<u64, &'static str> {
    if text.ends_with("ms") {
        return Err(MILLISECONDS);
    }
    decimal_millis(text.strip_suffix('s').unwrap_or(text))
}

/// Reads a time: seconds (`90`, `0.5`, `2s`) or `min:sec` (`1:30`, `0:05.5`, `1:30s`).
/// Neither tool reads hours (`1:30:00`), so neither do we; a `min:sec` with 60 or more seconds
/// is a typo (`1:99`), refused rather than read as 159 s as both tools would, and minutes are
/// whole (`1.5:00` is refused). The error is the reason, for [`TimeControlError`].
fn parse_time(text: &str) -> Result<Duration, &'static str> {
    let millis = match text.split_once(':') {
        None => seconds_millis(text)?,
        Some((_, sec)) if sec.contains(':') => {
            return Err("has more than one ':' (hours are written as minutes: 90:00)")
        }
        Some((min, sec)) => {
            let minutes: u64 = match min {
                m if !m.is_empty() && m.len() <= 8 && m.bytes().all(|b| b.is_ascii_digit()) => m
                    .parse()
                    .map_err(|_| "has minutes that are not a whole number")?,
                _ => return Err("has minutes before the ':' that are not a whole number"),
            };
            let seconds = seconds_millis(sec).map_err(|why| match why {
                MILLISECONDS => why,
                _ => "has seconds after the ':' that are not a number",
            })?;
            if seconds >= 60_000 {
                return Err("has 60 or more seconds after the ':'");
            }
            match minutes * 60_000 + seconds {
                millis if millis > MAX_SECONDS * 1000 => return Err("is more than 10^9 seconds"),
                millis => millis,
            }
        }
    };
    Ok(Duration::from_millis(millis))
}

/// The moves before `/`: a whole number of moves per period, or the whole game as cutechess
/// writes it (`0/60+2`) and fastchess (`inf/60+2`, `infinite/60+2`).
fn parse_moves(text: &str) -> Result<Option<u32>, &'static str> {
    if text.eq_ignore_ascii_case("inf") || text.eq_ignore_ascii_case("infinite") {
        return Ok(None);
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("the moves per period must be a whole number (0 or inf for the whole game)");
    }
    match text.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(moves) => Ok(Some(moves)),
        Err(_) => Err("the moves per period are too many"),
    }
}

impl FromStr for ClockSpec {
    type Err = TimeControlError;
    /// Reads the `tc=` grammar (without `inf`, which is "no clock": see
    /// [`TimeControl::parse_tc`]).
    fn from_str(text: &str) -> Result<ClockSpec, TimeControlError> {
        let err = |reason: &str| TimeControlError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (moves, rest) = match text.split_once('/') {
            Some((_, rest)) if rest.contains('/') => return Err(err("has more than one '/'")),
            Some((moves, rest)) => (parse_moves(moves).map_err(err)?, rest),
            None => (None, text),
        };
        let (hourglass, rest) = match rest.strip_prefix("hg") {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let (base, increment) = match rest.split_once('+') {
            Some((_, inc)) if inc.contains('+') => return Err(err("has more than one '+'")),
            Some((base, inc)) => (base, Some(inc)),
            None => (rest, None),
        };
        let base = parse_time(base).map_err(|why| err(&format!("the base time {why}")))?;
        let increment = match increment {
            Some(inc) => parse_time(inc).map_err(|why| err(&format!("the increment {why}")))?,
            None => Duration::ZERO,
        };
        if base.is_zero() {
            return Err(err(
                "the base time is 0: a clock must start with some time (cutechess refuses it \
                 too; with only an increment the first move would lose on time)",
            ));
        }
        if hourglass && moves.is_some() {
            return Err(err(
                "an hourglass (hg) has no moves per period: its time is passed between the \
                 players",
            ));
        }
        if hourglass && !increment.is_zero() {
            return Err(err(
                "an hourglass (hg) has no increment: the time one side uses is added to the \
                 other's clock",
            ));
        }
        Ok(ClockSpec {
            moves,
            base,
            increment,
            hourglass,
        })
    }
}

/// Writes the clock as cutechess and fastchess write it in the PGN `TimeControl` tag, which
/// is also a `tc=` value that reads back as the same clock: `40/60+0.6`, `90+1` for `1:30+1`,
/// `hg60`; the whole game has no `0/`, an increment of 0 is left out.
impl fmt::Display for ClockSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(moves) = self.moves {
            write!(f, "{moves}/")?;
        }
        if self.hourglass {
            f.write_str("hg")?;
        }
        f.write_str(&seconds_text(self.base))?;
        if !self.increment.is_zero() {
            write!(f, "+{}", seconds_text(self.increment))?;
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

/// Seconds to the nearest millisecond, exactly, without trailing zeros: `60`, `0.6`, `0.002`.
fn seconds_text(d: Duration) -> String {
    let millis = (d.as_nanos() + 500_000) / 1_000_000;
    let (secs, frac) = (millis / 1000, millis % 1000);
    if frac == 0 {
        secs.to_string()
    } else {
        format!("{secs}.{frac:03}").trim_end_matches('0').to_owned()
    }
}

impl TimeControl {
    /// Reads the `tc=` value: a clock, or `inf`/`infinite` for none.
    pub fn parse_tc(text: &str) -> Result<Option<ClockSpec>, TimeControlError> {
        if text.eq_ignore_ascii_case("inf") || text.eq_ignore_ascii_case("infinite") {
            Ok(None)
        } else {
            text.parse().map(Some)
        }
    }

    /// Reads the `st=` value: seconds per move, a decimal with fastchess's optional `s`
    /// (`0.5`, `0.5s`), rounded to whole milliseconds; at least 1 ms.
    pub fn parse_movetime(text: &str) -> Result<Duration, MoveTimeError> {
        let err = |reason: &str| MoveTimeError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        match seconds_millis(text).map_err(err)? {
            0 => Err(err("is 0: a move needs some time")),
            millis => Ok(Duration::from_millis(millis)),
        }
    }

    /// Whether anything at all limits a search: a game with none would never end.
    pub fn is_bounded(&self) -> bool {
        self.clock.is_some()
            || self.movetime.is_some()
            || self.nodes.is_some()
            || self.depth.is_some()
    }

    /// The PGN `TimeControl` tag as cutechess and fastchess write it: the clock in seconds
    /// (`40/60+0.6`, `hg60`), `0.5/move` for a fixed time per move, and `-` (the PGN
    /// standard's "no time control", fastchess's spelling) when only nodes or depth limit the
    /// search, where cutechess writes `inf`.
    pub fn pgn_tag(&self) -> String {
        match (&self.clock, self.movetime) {
            (Some(clock), _) => clock.to_string(),
            (None, Some(movetime)) => format!("{}/move", seconds_text(movetime)),
            (None, None) => "-".to_owned(),
        }
    }
}

/// The limits as `-each` keys that read back as the same limits: `tc=40/60+0.6 nodes=5000`.
impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match &self.clock {
            Some(clock) => parts.push(format!("tc={clock}")),
            None => parts.push("tc=inf".to_owned()),
        }
        if let Some(movetime) = self.movetime {
            parts.push(format!("st={}", seconds_text(movetime)));
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

    /// Whether this is one of cutechess's hourglass clocks (`tc=hg60`).
    pub fn is_hourglass(&self) -> bool {
        self.spec.is_some_and(|spec| spec.hourglass)
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

/// Charges the clock of `side` (0 White, 1 Black) for a move that took `used`, as
/// [`Clock::charge`] does, and in an hourglass game puts that time on the opponent's clock:
/// the sand that ran out of one glass fills the other, and the two clocks always hold the
/// same total. As in cutechess, the hourglass runs only when both sides play `hg`, and a move
/// that flags gives nothing to the opponent (the game is over). Returns `false` if the flag
/// fell.
pub fn charge_move(clocks: &mut [Clock; 2], side: usize, used: Duration, margin: Duration) -> bool {
    let in_time = clocks[side].charge(used, margin);
    if in_time && clocks.iter().all(Clock::is_hourglass) {
        let opponent = &mut clocks[1 - side];
        opponent.remaining = opponent.remaining.plus(used);
    }
    in_time
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// What a `tc=` reads as: moves per period, base and increment in ms, hourglass.
    type Reading = (Option<u32>, u64, u64, bool);

    fn clock(text: &str) -> Result<Reading, String> {
        text.parse::<ClockSpec>()
            .map(|c| {
                let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap();
                (c.moves, ms(c.base), ms(c.increment), c.hourglass)
            })
            .map_err(|e| e.reason)
    }

    /// Every form the two tools' documentation, tests and scripts write, with where it comes
    /// from, and what arbiter reads (cutechess's meaning where the two differ).
    #[test]
    fn forms_of_cutechess_and_fastchess() {
        let whole = None;
        #[rustfmt::skip]
        let accepted: &[(&str, Reading, &str)] = &[
            // cutechess docs/cutechess-cli.6 (man page), EXAMPLES and `tc=` description.
            ("40/60", (Some(40), 60_000, 0, false), "cutechess man page: 40 moves in 60 s"),
            ("40/1:30+1", (Some(40), 90_000, 1000, false), "cutechess man page: min:sec, +1 s"),
            ("4", (whole, 4000, 0, false), "cutechess man page: tc=4, sudden death"),
            // cutechess issue #753: the whole game is written without moves.
            ("180+2", (whole, 180_000, 2000, false), "cutechess #753"),
            ("80/180+2", (Some(80), 180_000, 2000, false), "cutechess #753"),
            // cutechess projects/lib/src/timecontrol.cpp: decimal increment (toDouble), and
            // 0 moves per period is the whole game (scripts write tc=0/1+2, tc=0/20+0.2).
            ("0/1+2", (whole, 1000, 2000, false), "cutechess: 0/ is the whole game"),
            ("0/20+0.2", (whole, 20_000, 200, false), "cutechess: 0/ is the whole game"),
            ("120/8+0.08", (Some(120), 8000, 80, false), "cutechess scripts"),
            // cutechess PR #567 and issue #273: hourglass, `hg` before the time.
            ("hg360", (whole, 360_000, 0, true), "cutechess PR #567: tc=hg360"),
            ("hg120", (whole, 120_000, 0, true), "cutechess #273: tc=hg120"),
            ("0/hg60", (whole, 60_000, 0, true), "cutechess: 0/ then hg"),
            ("hg1:30", (whole, 90_000, 0, true), "cutechess: hg with min:sec"),
            ("hg60+0", (whole, 60_000, 0, true), "cutechess: an increment of 0 is none"),
            // fastchess app/tests/e2e/e2e.sh and README ("short time controls (0.2+0.002s)").
            ("2+0.02s", (whole, 2000, 20, false), "fastchess e2e.sh: tc=2+0.02s"),
            ("0.2+0.002s", (whole, 200, 2, false), "fastchess README"),
            // fastchess: seconds parts may end in s, minutes not.
            ("2s+0.02s", (whole, 2000, 20, false), "fastchess: s on both"),
            ("0.02s", (whole, 20, 0, false), "fastchess: s alone"),
            ("1:30s+1", (whole, 90_000, 1000, false), "fastchess: s after min:sec"),
            // fastchess app/tests/cli_test.cpp.
            ("40/1:9.65+0.1", (Some(40), 69_650, 100, false), "fastchess cli_test.cpp"),
            ("10/9.64", (Some(10), 9640, 0, false), "fastchess cli_test.cpp"),
            // fastchess app/src/cli/help.txt and README examples.
            ("60+0.6", (whole, 60_000, 600, false), "fastchess help.txt"),
            ("300+5", (whole, 300_000, 5000, false), "fastchess help.txt"),
            ("10+0.1", (whole, 10_000, 100, false), "fastchess README"),
            // fastchess app/src/cli/cli.cpp parseTc: inf/infinite moves are the whole game.
            ("inf/10", (whole, 10_000, 0, false), "fastchess parseTc"),
            ("infinite/10+0.1", (whole, 10_000, 100, false), "fastchess parseTc"),
            // Decimals are whole milliseconds, rounded to the nearest.
            ("1+0.0015", (whole, 1000, 2, false), "a half millisecond rounds up"),
            ("1.005", (whole, 1005, 0, false), "not 1004 as 1.005 * 1000 truncated"),
            (".5+.25", (whole, 500, 250, false), "cutechess toDouble reads .5"),
            ("0:05.5", (whole, 5500, 0, false), "decimal seconds after ':'"),
            ("90:00", (whole, 5_400_000, 0, false), "hours as minutes"),
        ];
        for &(text, reading, source) in accepted {
            assert_eq!(clock(text), Ok(reading), "{text} ({source})");
        }
        for text in ["inf", "infinite", "INF"] {
            assert_eq!(TimeControl::parse_tc(text), Ok(None), "{text}: no clock");
        }

        // The exact reasons for what is refused; the message around them names the text and
        // the grammar.
        #[rustfmt::skip]
        let refused: &[(&str, &str)] = &[
            ("", "the base time is not a number of seconds"),
            ("x", "the base time is not a number of seconds"),
            ("40/", "the base time is not a number of seconds"),
            ("10+", "the increment is not a number of seconds"),
            ("1:", "the base time has seconds after the ':' that are not a number"),
            ("1:2:3", "the base time has more than one ':' (hours are written as minutes: 90:00)"),
            ("10/1junk", "the base time is not a number of seconds"),
            ("10/1ss", "the base time is not a number of seconds"),
            ("10/-1", "the base time is not a number of seconds"),
            ("-5", "the base time is not a number of seconds"),
            ("nan", "the base time is not a number of seconds"),
            ("1e3", "the base time is not a number of seconds"),
            ("inf+1", "the base time is not a number of seconds"),
            ("10++1", "has more than one '+'"),
            ("40/20/60", "has more than one '/'"),
            ("/60", "the moves per period must be a whole number (0 or inf for the whole game)"),
            ("x/60", "the moves per period must be a whole number (0 or inf for the whole game)"),
            ("99999999999/60", "the moves per period are too many"),
            ("0", "the base time is 0: a clock must start with some time (cutechess refuses \
                   it too; with only an increment the first move would lose on time)"),
            ("10/0+0", "the base time is 0: a clock must start with some time (cutechess \
                        refuses it too; with only an increment the first move would lose on \
                        time)"),
            ("0+1", "the base time is 0: a clock must start with some time (cutechess refuses \
                     it too; with only an increment the first move would lose on time)"),
            ("60ms", "the base time is in milliseconds (ms), which neither cutechess nor \
                      fastchess reads: write seconds, 0.05 for 50 ms"),
            ("10+100ms", "the increment is in milliseconds (ms), which neither cutechess nor \
                          fastchess reads: write seconds, 0.05 for 50 ms"),
            ("1+0.0004", "the increment is below a millisecond, the smallest time UCI can say"),
            ("2000000000", "the base time is more than 10^9 seconds"),
            ("99999999:00", "the base time is more than 10^9 seconds"),
            ("1:99", "the base time has 60 or more seconds after the ':'"),
            ("1.5:30", "the base time has minutes before the ':' that are not a whole number"),
            ("40/hg60", "an hourglass (hg) has no moves per period: its time is passed \
                         between the players"),
            ("hg60+1", "an hourglass (hg) has no increment: the time one side uses is added \
                        to the other's clock"),
            ("60hg", "the base time is not a number of seconds"),
            ("hg", "the base time is not a number of seconds"),
        ];
        for &(text, reason) in refused {
            assert_eq!(clock(text), Err(reason.to_owned()), "{text}");
        }
        assert_eq!(
            "2+0.02x".parse::<ClockSpec>().unwrap_err().to_string(),
            "time control \"2+0.02x\": the increment is not a number of seconds (expected \
             [moves/]time[+increment], time in seconds with an optional s (2s, 0.02s) or \
             min:sec; e.g. 40/60+0.6, 10+0.1, 2+0.02s, 1:30+1, hg60 (hourglass), or inf)"
        );
    }

    #[test]
    fn time_per_move() {
        // cutechess man page: st=n seconds (decimals: toDouble); fastchess e2e.sh `st=1`,
        // cli_test.cpp `st=5`, and fastchess's optional s.
        for (text, millis) in [
            ("1", 1000),
            ("5", 5000),
            ("0.5", 500),
            ("0.5s", 500),
            (".1", 100),
        ] {
            assert_eq!(
                TimeControl::parse_movetime(text),
                Ok(ms(millis)),
                "st={text}"
            );
        }
        let reason = |text: &str| TimeControl::parse_movetime(text).unwrap_err().reason;
        assert_eq!(reason("0"), "is 0: a move needs some time");
        assert_eq!(
            reason("0.0004"),
            "is below a millisecond, the smallest time UCI can say"
        );
        assert_eq!(reason("inf"), "is not a number of seconds");
        assert_eq!(reason("-1"), "is not a number of seconds");
        assert_eq!(reason("1:00"), "is not a number of seconds");
        assert_eq!(
            TimeControl::parse_movetime("100ms")
                .unwrap_err()
                .to_string(),
            "time per move \"100ms\": is in milliseconds (ms), which neither cutechess nor \
             fastchess reads: write seconds, 0.05 for 50 ms (expected st=SECONDS, a positive \
             number of seconds with an optional s, e.g. st=0.5 or st=0.5s)"
        );
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
             (expected [moves/]time[+increment], time in seconds with an optional s (2s, \
             0.02s) or min:sec; e.g. 40/60+0.6, 10+0.1, 2+0.02s, 1:30+1, hg60 (hourglass), \
             or inf)"
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
    fn pgn_tag_as_cutechess_and_fastchess_write_it() {
        let clock = |tc: &str| TimeControl {
            clock: TimeControl::parse_tc(tc).unwrap(),
            ..Default::default()
        };
        // cutechess TimeControl::toString (projects/lib/src/timecontrol.cpp) and fastchess's
        // operator<< (app/src/time/timecontrol.cpp): seconds as a plain number, moves/ only
        // for periods, +inc only when positive, "hg" for the hourglass, "N/move" for st.
        for (tc, tag) in [
            ("40/60+0.6", "40/60+0.6"),
            ("40/1:30+1", "40/90+1"),
            ("0/60+2", "60+2"),
            ("2+0.02s", "2+0.02"),
            ("0.2+0.002s", "0.2+0.002"),
            ("10+0", "10"),
            ("hg60", "hg60"),
            ("1:59.5", "119.5"),
        ] {
            assert_eq!(clock(tc).pgn_tag(), tag, "tc={tc}");
        }
        let st = |millis: u64| TimeControl {
            movetime: Some(ms(millis)),
            ..Default::default()
        };
        assert_eq!(st(1000).pgn_tag(), "1/move", "st=1");
        assert_eq!(st(100).pgn_tag(), "0.1/move", "st=0.1");
        // Only nodes or depth: fastchess writes "-" (the PGN standard's "no time control");
        // cutechess writes "inf".
        let nodes = TimeControl {
            nodes: Some(1000),
            ..Default::default()
        };
        assert_eq!(nodes.pgn_tag(), "-");
        assert_eq!(nodes.to_string(), "tc=inf nodes=1000");
        assert!(!TimeControl::default().is_bounded());
    }

    #[test]
    fn hourglass_passes_the_time_used_to_the_opponent() {
        let glass = || Clock::new(Some("hg10".parse().unwrap()));
        let mut clocks = [glass(), glass()];
        // White thinks 3 s: 7 s left, and Black's glass fills to 13 s.
        assert!(charge_move(&mut clocks, 0, ms(3000), ms(0)));
        assert_eq!((shows(&clocks[0]), shows(&clocks[1])), (7000, 13_000));
        // Black thinks 5 s: 8 s left, White back to 12 s. The total stays 20 s.
        assert!(charge_move(&mut clocks, 1, ms(5000), ms(0)));
        assert_eq!((shows(&clocks[0]), shows(&clocks[1])), (12_000, 8000));
        assert_eq!(
            clocks[0].moves_to_go(),
            None,
            "no periods: go has no movestogo"
        );
        // An overrun within the margin: the mover's clock goes below zero, the opponent gets
        // all the time used, and the total is still 20 s.
        assert!(charge_move(&mut clocks, 0, ms(12_040), ms(50)));
        assert_eq!((shows(&clocks[0]), shows(&clocks[1])), (-40, 20_040));
        // A move that flags gives the opponent nothing: the game is over.
        assert!(!charge_move(&mut clocks, 0, ms(11), ms(50)));
        assert_eq!(shows(&clocks[1]), 20_040);

        // As in cutechess, the glass runs only when both sides play hg: against a plain clock
        // an hg clock is sudden death, and the plain clock gains nothing.
        let mut clocks = [glass(), Clock::new(Some("10".parse().unwrap()))];
        assert!(charge_move(&mut clocks, 0, ms(3000), ms(0)));
        assert!(charge_move(&mut clocks, 1, ms(2000), ms(0)));
        assert_eq!((shows(&clocks[0]), shows(&clocks[1])), (7000, 8000));

        // Outside an hourglass charge_move is Clock::charge: increments, periods.
        let mut clocks = [Clock::new(Some("2/10+1".parse().unwrap())), glass()];
        assert!(charge_move(&mut clocks, 0, ms(3000), ms(0)));
        assert_eq!((shows(&clocks[0]), shows(&clocks[1])), (8000, 10_000));
    }

    fn clock_specs() -> impl Strategy<Value = ClockSpec> {
        let timed = (
            prop::option::of(1u32..=200),
            1u64..=100_000_000,
            prop_oneof![Just(0u64), 1u64..=600_000],
        )
            .prop_map(|(moves, base, increment)| ClockSpec {
                moves,
                base: ms(base),
                increment: ms(increment),
                hourglass: false,
            });
        let hourglass = (1u64..=100_000_000).prop_map(|base| ClockSpec {
            moves: None,
            base: ms(base),
            increment: Duration::ZERO,
            hourglass: true,
        });
        prop_oneof![4 => timed, 1 => hourglass]
    }

    proptest! {
        /// What arbiter writes, in `-each` keys and in the PGN tag, reads back as the same
        /// limits: a saved command line or a PGN's tag replays the same clock.
        #[test]
        fn written_time_controls_read_back(
            clock in prop::option::of(clock_specs()),
            movetime in prop::option::of(1u64..=10_000_000),
            nodes in prop::option::of(1u64..=u64::MAX),
            depth in prop::option::of(1u32..=200),
        ) {
            let tc = TimeControl { clock, movetime: movetime.map(ms), nodes, depth };
            let mut read = TimeControl::default();
            for key in tc.to_string().split(' ') {
                let (name, value) = key.split_once('=').unwrap();
                match name {
                    "tc" => read.clock = TimeControl::parse_tc(value).unwrap(),
                    "st" => read.movetime = Some(TimeControl::parse_movetime(value).unwrap()),
                    "nodes" => read.nodes = Some(value.parse().unwrap()),
                    "depth" => read.depth = Some(value.parse().unwrap()),
                    _ => panic!("unknown key in {tc}"),
                }
            }
            prop_assert_eq!(&read, &tc);
            if let Some(clock) = clock {
                prop_assert_eq!(TimeControl::parse_tc(&tc.pgn_tag()), Ok(Some(clock)));
            } else if let Some(movetime) = movetime {
                let tag = tc.pgn_tag();
                let secs = tag.strip_suffix("/move").unwrap();
                prop_assert_eq!(TimeControl::parse_movetime(secs), Ok(ms(movetime)));
            }
        }
    }
}
