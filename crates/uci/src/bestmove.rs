//! `bestmove`: the answer to `go`.

use std::fmt;

/// `bestmove <move> [ponder <move>]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BestMove {
    /// As the engine wrote it; empty when it wrote none, which the referee calls an illegal
    /// move rather than this parser guessing (`0000` and `(none)` are kept as written too).
    pub mv: String,
    pub ponder: Option<String>,
}

impl BestMove {
    /// `None` for a line that is not a `bestmove` line.
    pub fn parse(line: &str) -> Option<BestMove> {
        let mut words = line.split_ascii_whitespace();
        if words.next()? != "bestmove" {
            return None;
        }
        let mv = words.next().unwrap_or("").to_owned();
        let ponder = match words.next() {
            Some("ponder") => words.next().map(str::to_owned),
            _ => None,
        };
        Some(BestMove { mv, ponder })
    }
}

impl fmt::Display for BestMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bestmove {}", self.mv)?;
        if let Some(ponder) = &self.ponder {
            write!(f, " ponder {ponder}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Option<(String, Option<String>)> {
        BestMove::parse(line).map(|b| (b.mv, b.ponder))
    }

    #[test]
    fn lines() {
        assert_eq!(
            parse("bestmove e2e4 ponder e7e5"),
            Some(("e2e4".into(), Some("e7e5".into())))
        );
        assert_eq!(parse("bestmove e7e8q"), Some(("e7e8q".into(), None)));
        assert_eq!(parse("bestmove"), Some(("".into(), None)));
        assert_eq!(parse("bestmove (none)"), Some(("(none)".into(), None)));
        assert_eq!(parse("bestmove e2e4 ponder"), Some(("e2e4".into(), None)));
        assert_eq!(parse("info depth 1"), None);
        assert_eq!(parse("bestmoves e2e4"), None);
        assert_eq!(parse(""), None);
    }
}
