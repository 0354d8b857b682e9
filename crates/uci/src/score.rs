//! `score cp <x>` / `score mate <y>` and the bound flag that may follow.

use std::fmt;

/// An engine's evaluation from its own point of view (the side to move).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Score {
    Cp(i32),
    /// Mate in this many moves; negative when the engine is being mated.
    Mate(i32),
}

impl Score {
    /// Centipawns for adjudication; mates count as far beyond any threshold.
    pub fn centipawns(self) -> i32 {
        match self {
            Score::Cp(cp) => cp,
            Score::Mate(n) if n > 0 => 100_000 - n,
            Score::Mate(n) => -100_000 - n,
        }
    }

    /// The PGN comment spelling: `+0.35`, `-1.20`, `+M3`, `-M2`.
    pub fn pgn(self) -> String {
        match self {
            Score::Cp(cp) => format!(
                "{}{}.{:02}",
                if cp < 0 { "-" } else { "+" },
                cp.unsigned_abs() / 100,
                cp.unsigned_abs() % 100
            ),
            Score::Mate(n) => format!("{}M{}", if n < 0 { "-" } else { "+" }, n.unsigned_abs()),
        }
    }

    /// The two tokens after `score`: `cp 35`, `mate -3`; `None` for anything else.
    pub(crate) fn from_tokens(kind: Option<&str>, value: Option<&str>) -> Option<Score> {
        let value = value?.parse::<i32>().ok()?;
        match kind? {
            "cp" => Some(Score::Cp(value)),
            "mate" => Some(Score::Mate(value)),
            _ => None,
        }
    }
}

/// `cp 35` or `mate -3`, as the words after `score` in an `info` line.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

/// The score is a bound from a search that failed high or low (an aspiration window), not
/// an exact value: adjudication may want to know.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `lowerbound`: the position is at least this good (the search failed high).
    Lower,
    /// `upperbound`: at most this good (failed low).
    Upper,
}

impl Bound {
    pub(crate) fn from_token(token: &str) -> Option<Bound> {
        match token {
            "lowerbound" => Some(Bound::Lower),
            "upperbound" => Some(Bound::Upper),
            _ => None,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Lower => "lowerbound",
            Bound::Upper => "upperbound",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(Score::Cp(35).pgn(), "+0.35");
        assert_eq!(Score::Cp(-120).pgn(), "-1.20");
        assert_eq!(Score::Cp(-5).pgn(), "-0.05");
        assert_eq!(Score::Mate(3).pgn(), "+M3");
        assert_eq!(Score::Mate(-2).pgn(), "-M2");
        assert_eq!(Score::Mate(-2).to_string(), "mate -2");
        assert_eq!(Score::Cp(0).to_string(), "cp 0");
        assert_eq!(Score::from_tokens(Some("cp"), Some("x")), None);
        assert_eq!(Score::from_tokens(Some("wdl"), Some("3")), None);
    }
}
