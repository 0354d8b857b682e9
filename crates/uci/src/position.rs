//! `position`: the game so far, as a start and the moves played from it.

use std::fmt;

use crate::ParseError;

/// Where the game started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    StartPos,
    /// A FEN as text, checked by whoever sets it up (the fields joined by one space).
    Fen(String),
}

/// `position startpos|fen <fen> [moves <move>...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionCommand {
    pub start: Start,
    pub moves: Vec<String>,
}

impl PositionCommand {
    /// Reads a `position` line (with or without the leading `position`). The FEN is every
    /// token up to `moves`; whether it is a position, and the moves legal, is for the reader's
    /// board to say.
    pub fn parse(line: &str) -> Result<PositionCommand, ParseError> {
        let words: Vec<&str> = crate::arguments(line, "position").collect();
        let moves_at = words.iter().position(|w| *w == "moves");
        let setup = &words[..moves_at.unwrap_or(words.len())];
        let start = match setup {
            ["startpos"] => Start::StartPos,
            ["fen", fen @ ..] if !fen.is_empty() => Start::Fen(fen.join(" ")),
            _ => return Err(ParseError::Position),
        };
        let moves = moves_at.map_or(&[][..], |at| &words[at + 1..]);
        Ok(PositionCommand {
            start,
            moves: moves.iter().map(|&mv| mv.to_owned()).collect(),
        })
    }

    /// The line for a start given as an optional FEN (`None`: the standard start), without
    /// building a [`PositionCommand`]: the runner writes one every move, and grows the moves
    /// onto it (the same spelling as [`Display`](fmt::Display)).
    pub fn line(fen: Option<&str>, moves: &[String]) -> String {
        let mut line = String::with_capacity(32 + moves.len() * 5);
        let _ = write_line(&mut line, fen, moves.iter().map(String::as_str));
        line
    }
}

impl fmt::Display for PositionCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fen = match &self.start {
            Start::StartPos => None,
            Start::Fen(fen) => Some(fen.as_str()),
        };
        write_line(f, fen, self.moves.iter().map(String::as_str))
    }
}

fn write_line<'a>(
    out: &mut impl fmt::Write,
    fen: Option<&str>,
    moves: impl ExactSizeIterator<Item = &'a str>,
) -> fmt::Result {
    match fen {
        None => out.write_str("position startpos")?,
        Some(fen) => write!(out, "position fen {fen}")?,
    }
    if moves.len() > 0 {
        out.write_str(" moves")?;
        for mv in moves {
            out.write_char(' ')?;
            out.write_str(mv)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(PositionCommand::line(None, &[]), "position startpos");
        assert_eq!(
            PositionCommand::line(Some("8/8/8/8/8/8/8/K6k w - - 0 1"), &["a1a2".into()]),
            "position fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves a1a2"
        );
        let command = PositionCommand::parse("position startpos moves e2e4 e7e5").unwrap();
        assert_eq!(command.moves, ["e2e4", "e7e5"]);
        assert_eq!(command.to_string(), "position startpos moves e2e4 e7e5");
        let command = PositionCommand::parse("fen 8/8/8/8/8/8/8/K6k  w - - 0 1 moves").unwrap();
        assert_eq!(
            command.start,
            Start::Fen("8/8/8/8/8/8/8/K6k w - - 0 1".into())
        );
        assert!(command.moves.is_empty());
        for bad in [
            "position",
            "position sideways",
            "position fen",
            "position startpos x",
        ] {
            assert_eq!(
                PositionCommand::parse(bad),
                Err(ParseError::Position),
                "{bad}"
            );
        }
    }
}
