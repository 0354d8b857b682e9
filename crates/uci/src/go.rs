//! `go`: the limits of one search.

use std::fmt;
use std::time::Duration;

/// Both clocks of a game under a time control, as `go` tells them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Clocks {
    pub wtime: Duration,
    pub btime: Duration,
    pub winc: Duration,
    pub binc: Duration,
    /// Moves until the next time control; `None` is sudden death.
    pub movestogo: Option<u32>,
}

/// What `go` says about the limits of this search.
///
/// Times are whole milliseconds on the wire. [`Display`](fmt::Display) rounds them down and
/// tells `wtime`/`btime` as at least 1 ms (0 confuses engines, and a clock below zero has no
/// UCI spelling); increments and `movestogo` are written only when positive, as the protocol
/// says. So the values that survive a round trip are whole milliseconds, clocks of at least
/// 1 ms, and a `movestogo` of at least 1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoLimits {
    /// Present when there is a clock (`wtime` or `btime` was given).
    pub clocks: Option<Clocks>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// `mate <n>`: look for a mate in `n` moves.
    pub mate: Option<u32>,
    /// Search until `stop`.
    pub infinite: bool,
    /// The search is on the opponent's time, until `ponderhit` or `stop`.
    pub ponder: bool,
    /// Only these root moves are searched; empty means all.
    pub searchmoves: Vec<String>,
}

/// Something in a `go` line that was not understood; said back to the GUI and otherwise
/// forgiven.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoProblem {
    /// A limit whose value is missing or not a whole number; it was taken as 0.
    NotANumber {
        key: &'static str,
        /// The token found instead, `None` when the line ended or the next keyword followed.
        found: Option<String>,
    },
    UnknownToken(String),
}

impl fmt::Display for GoProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GoProblem::NotANumber { key, found } => {
                write!(f, "expected a number after {key}, ")?;
                match found {
                    Some(found) => write!(f, "found {found:?}")?,
                    None => f.write_str("found none")?,
                }
                write!(f, "; taking {key} 0")
            }
            GoProblem::UnknownToken(token) => write!(f, "unknown token {token:?} ignored"),
        }
    }
}

/// The keywords of `go` that take a number.
const NUMBER_KEYWORDS: [&str; 9] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
];

/// Every keyword of `go`: a value that is one of them was missing, not malformed, and a
/// `searchmoves` list ends at the first of them.
fn is_keyword(token: &str) -> bool {
    NUMBER_KEYWORDS.contains(&token) || matches!(token, "infinite" | "ponder" | "searchmoves")
}

impl GoLimits {
    /// Reads a `go` line (with or without the leading `go`), keywords in any order. Nothing
    /// is fatal: an unknown token is skipped, and a limit whose value is missing or not a
    /// number is taken as 0, its tightest (no time left, depth 0, no nodes), the way C++'s
    /// `>>` leaves 0 behind in Stockfish's parser. A malformed limit must never become no
    /// limit, which would search until a `stop` the GUI has no reason to send. Each problem
    /// is returned, in order, to be reported. Negative numbers are 0; numbers too large for
    /// their field saturate (a clock of 10^20 ms is just long).
    pub fn parse(line: &str) -> (GoLimits, Vec<GoProblem>) {
        let mut limits = GoLimits::default();
        let mut problems = Vec::new();
        let mut clocks = Clocks::default();
        let mut has_clock = false;
        let mut tokens = crate::arguments(line, "go").peekable();
        while let Some(token) = tokens.next() {
            if let Some(key) = NUMBER_KEYWORDS.iter().copied().find(|k| *k == token) {
                let value = match tokens.peek().copied() {
                    Some(value) if !is_keyword(value) => {
                        tokens.next();
                        Some(value)
                    }
                    // A missing value before the next keyword: that keyword still counts.
                    _ => None,
                };
                let n = value.and_then(parse_integer).unwrap_or_else(|| {
                    problems.push(GoProblem::NotANumber {
                        key,
                        found: value.map(str::to_owned),
                    });
                    0
                });
                let count = u64::try_from(n.clamp(0, i128::from(u64::MAX))).expect("clamped");
                let small = u32::try_from(count).unwrap_or(u32::MAX);
                let ms = Duration::from_millis(count);
                match key {
                    "wtime" => (clocks.wtime, has_clock) = (ms, true),
                    "btime" => (clocks.btime, has_clock) = (ms, true),
                    "winc" => clocks.winc = ms,
                    "binc" => clocks.binc = ms,
                    "movestogo" => clocks.movestogo = (small > 0).then_some(small),
                    "movetime" => limits.movetime = Some(ms),
                    "nodes" => limits.nodes = Some(count),
                    "depth" => limits.depth = Some(small),
                    "mate" => limits.mate = Some(small),
                    _ => unreachable!("every number keyword has a field"),
                }
                continue;
            }
            match token {
                "infinite" => limits.infinite = true,
                "ponder" => limits.ponder = true,
                "searchmoves" => {
                    while let Some(mv) = tokens.next_if(|t| !is_keyword(t)) {
                        limits.searchmoves.push(mv.to_owned());
                    }
                }
                other => problems.push(GoProblem::UnknownToken(other.to_owned())),
            }
        }
        if has_clock {
            limits.clocks = Some(clocks);
        }
        (limits, problems)
    }
}

/// `go` and every limit set: `go [ponder] [wtime .. btime .. [winc ..] [binc ..] [movestogo
/// ..]] [movetime ..] [nodes ..] [depth ..] [mate ..] [infinite] [searchmoves ..]`.
impl fmt::Display for GoLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("go")?;
        if self.ponder {
            f.write_str(" ponder")?;
        }
        if let Some(clocks) = &self.clocks {
            let told = |d: Duration| d.as_millis().max(1);
            write!(
                f,
                " wtime {} btime {}",
                told(clocks.wtime),
                told(clocks.btime)
            )?;
            if !clocks.winc.is_zero() {
                write!(f, " winc {}", clocks.winc.as_millis())?;
            }
            if !clocks.binc.is_zero() {
                write!(f, " binc {}", clocks.binc.as_millis())?;
            }
            if let Some(moves) = clocks.movestogo.filter(|&m| m > 0) {
                write!(f, " movestogo {moves}")?;
            }
        }
        if let Some(movetime) = self.movetime {
            write!(f, " movetime {}", movetime.as_millis())?;
        }
        if let Some(nodes) = self.nodes {
            write!(f, " nodes {nodes}")?;
        }
        if let Some(depth) = self.depth {
            write!(f, " depth {depth}")?;
        }
        if let Some(mate) = self.mate {
            write!(f, " mate {mate}")?;
        }
        if self.infinite {
            f.write_str(" infinite")?;
        }
        if !self.searchmoves.is_empty() {
            f.write_str(" searchmoves")?;
            for mv in &self.searchmoves {
                write!(f, " {mv}")?;
            }
        }
        Ok(())
    }
}

/// A whole number of `go`, wide enough for any field's range; digits beyond it saturate.
fn parse_integer(token: &str) -> Option<i128> {
    if let Ok(n) = token.parse::<i128>() {
        return Some(n);
    }
    let (negative, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(if negative {
        i128::MIN
    } else {
        i128::MAX
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(line: &str) -> GoLimits {
        GoLimits::parse(line).0
    }

    #[test]
    fn numbers_saturate_and_refuse_what_is_not_one() {
        assert_eq!(parse_integer("42"), Some(42));
        assert_eq!(parse_integer("-7"), Some(-7));
        let huge = "9".repeat(50);
        assert_eq!(parse_integer(&huge), Some(i128::MAX));
        assert_eq!(parse_integer(&format!("-{huge}")), Some(i128::MIN));
        assert_eq!(go("nodes 18446744073709551615").nodes, Some(u64::MAX));
        assert_eq!(go(&format!("nodes {huge}")).nodes, Some(u64::MAX));
        for bad in ["abc", "", "-", "1.5", "12abc", "0x10"] {
            assert_eq!(parse_integer(bad), None, "{bad}");
        }
        assert_eq!(go("depth 99999999999999999999").depth, Some(u32::MAX));
        assert_eq!(
            go("wtime -300 btime 5").clocks.unwrap().wtime,
            Duration::ZERO
        );
    }

    #[test]
    fn a_malformed_limit_is_zero_never_none() {
        assert_eq!(go("depth abc").depth, Some(0));
        assert_eq!(go("nodes x").nodes, Some(0));
        assert_eq!(go("movetime soon").movetime, Some(Duration::ZERO));
        assert_eq!(go("go depth").depth, Some(0));
        let (limits, problems) = GoLimits::parse("go depth nodes 500 sideways");
        assert_eq!((limits.depth, limits.nodes), (Some(0), Some(500)));
        assert_eq!(
            problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "expected a number after depth, found none; taking depth 0",
                "unknown token \"sideways\" ignored"
            ]
        );
        let (limits, problems) = GoLimits::parse("wtime abc btime 1000");
        let clocks = limits.clocks.expect("a clock");
        assert_eq!(
            (clocks.wtime, clocks.btime),
            (Duration::ZERO, Duration::from_secs(1))
        );
        assert_eq!(
            problems[0].to_string(),
            "expected a number after wtime, found \"abc\"; taking wtime 0"
        );
    }

    #[test]
    fn increments_alone_are_no_clock() {
        assert_eq!(go("winc 100 binc 100 depth 3").clocks, None);
        assert_eq!(
            go("wtime 10 btime 10 movestogo 0")
                .clocks
                .unwrap()
                .movestogo,
            None
        );
    }

    #[test]
    fn searchmoves_run_to_the_next_keyword() {
        let limits = go("go searchmoves e2e4 d2d4 depth 3 infinite");
        assert_eq!(limits.searchmoves, ["e2e4", "d2d4"]);
        assert_eq!((limits.depth, limits.infinite), (Some(3), true));
    }

    #[test]
    fn written_as_the_protocol_says() {
        let clocks = Clocks {
            wtime: Duration::from_millis(9500),
            btime: Duration::from_millis(10_000),
            winc: Duration::from_millis(100),
            binc: Duration::from_millis(100),
            movestogo: Some(12),
        };
        let limits = GoLimits {
            clocks: Some(clocks),
            ..GoLimits::default()
        };
        assert_eq!(
            limits.to_string(),
            "go wtime 9500 btime 10000 winc 100 binc 100 movestogo 12"
        );
        let sudden = GoLimits {
            clocks: Some(Clocks {
                wtime: Duration::ZERO,
                btime: Duration::from_millis(700),
                ..Clocks::default()
            }),
            ..GoLimits::default()
        };
        assert_eq!(sudden.to_string(), "go wtime 1 btime 700");
        let fixed = GoLimits {
            movetime: Some(Duration::from_millis(100)),
            depth: Some(9),
            ..GoLimits::default()
        };
        assert_eq!(fixed.to_string(), "go movetime 100 depth 9");
        assert_eq!(go("go infinite").to_string(), "go infinite");
    }
}
