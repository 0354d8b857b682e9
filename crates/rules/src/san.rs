//! Standard Algebraic Notation: written with minimal disambiguation and `+`/`#`, read
//! tolerantly (`0-0`, `O-O-O`, `e8=Q`, `e8Q`, `exd6 e.p.`, trailing `+`, `#`, `!?`).

use std::fmt;

use crate::{CastlingSide, File, Move, Position, Rank, Role, Square};

/// A move as SAN describes it, before it is matched against a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum San {
    Normal {
        role: Role,
        file: Option<File>,
        rank: Option<Rank>,
        capture: bool,
        to: Square,
        promotion: Option<Role>,
    },
    Castle(CastlingSide),
    /// `--` or `Z0`, the null move some PGN tools write.
    Null,
}

/// SAN that cannot be read, or that names no single legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    #[error("expected a SAN move such as Nf3, exd5, O-O or e8=Q, found {0:?}")]
    Syntax(String),
    #[error("{san} is not a legal move in {fen}")]
    Illegal { san: String, fen: String },
    #[error("{san} is ambiguous in {fen}: it fits {candidates}")]
    Ambiguous {
        san: String,
        fen: String,
        candidates: String,
    },
}

impl San {
    /// Reads SAN, ignoring check marks, annotation glyphs and an `e.p.` suffix.
    pub fn parse(text: &str) -> Result<San, SanError> {
        let syntax = || SanError::Syntax(text.to_owned());
        let mut core = text.trim();
        for suffix in ["e.p.", "ep"] {
            if let Some(stripped) = core.strip_suffix(suffix) {
                core = stripped.trim_end();
            }
        }
        let core = core.trim_end_matches(['+', '#', '!', '?']);
        match core {
            "O-O" | "0-0" | "o-o" => return Ok(San::Castle(CastlingSide::KingSide)),
            "O-O-O" | "0-0-0" | "o-o-o" => return Ok(San::Castle(CastlingSide::QueenSide)),
            "--" | "Z0" | "0000" => return Ok(San::Null),
            _ => {}
        }
        if !core.is_ascii() || core.len() < 2 {
            return Err(syntax());
        }
        let mut bytes = core.as_bytes();

        let role = match bytes[0] {
            b'N' | b'B' | b'R' | b'Q' | b'K' => {
                let role = Role::from_char(bytes[0] as char).expect("piece letter");
                bytes = &bytes[1..];
                role
            }
            b'P' => {
                bytes = &bytes[1..];
                Role::Pawn
            }
            _ => Role::Pawn,
        };

        // Promotion at the end: `=Q`, `Q` or `(Q)`.
        let mut promotion = None;
        if let [rest @ .., b'(', p, b')'] | [rest @ .., b'=', p] = bytes {
            promotion = Some(promotion_role(*p).ok_or_else(syntax)?);
            bytes = rest;
        } else if let [rest @ .., p] = bytes {
            if let Some(role) = promotion_role(*p).filter(|_| p.is_ascii_uppercase()) {
                promotion = Some(role);
                bytes = rest;
            }
        }

        // The destination is the last two characters.
        let [rest @ .., f, r] = bytes else {
            return Err(syntax());
        };
        let to = Square::from_ascii(&[*f, *r]).ok_or_else(syntax)?;
        let mut rest = rest;
        let mut capture = false;
        if let [before @ .., b'x' | b':'] = rest {
            capture = true;
            rest = before;
        }
        // Disambiguation: file, rank, both, or (lax) a full from-square with a dash.
        if let [before @ .., b'-'] = rest {
            rest = before;
        }
        let (file, rank) = match rest {
            [] => (None, None),
            [c] => match (File::from_char(*c as char), Rank::from_char(*c as char)) {
                (Some(file), _) => (Some(file), None),
                (None, Some(rank)) => (None, Some(rank)),
                _ => return Err(syntax()),
            },
            [f, r] => (
                Some(File::from_char(*f as char).ok_or_else(syntax)?),
                Some(Rank::from_char(*r as char).ok_or_else(syntax)?),
            ),
            _ => return Err(syntax()),
        };
        if promotion.is_some() && role != Role::Pawn {
            return Err(syntax());
        }
        Ok(San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        })
    }

    /// The legal move this SAN names in `pos`. Capture marks are not required to match, and
    /// a king moving two squares along its rank is read as castling, as lenient readers do.
    pub fn to_move(&self, pos: &Position) -> Result<Move, SanError> {
        let illegal = || SanError::Illegal {
            san: self.to_string(),
            fen: pos.fen(),
        };
        match *self {
            San::Null => Err(illegal()),
            San::Castle(side) => pos
                .legal_moves_from(CastlingSide::king_from(pos.turn()))
                .into_iter()
                .find(|mv| mv.castling_side() == Some(side))
                .ok_or_else(illegal),
            San::Normal {
                role,
                file,
                rank,
                to,
                promotion,
                ..
            } => {
                let mut found: Option<Move> = None;
                let mut candidates = Vec::new();
                for mv in pos.legal_moves() {
                    let matches = mv.role == role
                        && mv.to == to
                        && file.is_none_or(|f| mv.from.file() == f)
                        && rank.is_none_or(|r| mv.from.rank() == r)
                        && (mv.promotion == promotion);
                    if matches {
                        candidates.push(mv);
                        found = Some(mv);
                    }
                }
                match candidates.len() {
                    0 => Err(illegal()),
                    1 => Ok(found.expect("one candidate")),
                    _ => Err(SanError::Ambiguous {
                        san: self.to_string(),
                        fen: pos.fen(),
                        candidates: candidates
                            .iter()
                            .map(|mv| crate::uci::move_to_uci(Some(*mv)))
                            .collect::<Vec<_>>()
                            .join(", "),
                    }),
                }
            }
        }
    }

    /// The SAN of a legal move, with the least disambiguation that makes it unique.
    pub fn from_move(pos: &Position, mv: Move) -> San {
        if let Some(side) = mv.castling_side() {
            return San::Castle(side);
        }
        let (mut file, mut rank) = (None, None);
        if mv.role == Role::Pawn {
            if mv.is_capture() {
                file = Some(mv.from.file());
            }
        } else {
            let rivals: Vec<Square> = pos
                .legal_moves()
                .into_iter()
                .filter(|other| other.role == mv.role && other.to == mv.to && other.from != mv.from)
                .map(|other| other.from)
                .collect();
            if !rivals.is_empty() {
                if rivals.iter().all(|sq| sq.file() != mv.from.file()) {
                    file = Some(mv.from.file());
                } else if rivals.iter().all(|sq| sq.rank() != mv.from.rank()) {
                    rank = Some(mv.from.rank());
                } else {
                    file = Some(mv.from.file());
                    rank = Some(mv.from.rank());
                }
            }
        }
        San::Normal {
            role: mv.role,
            file,
            rank,
            capture: mv.is_capture(),
            to: mv.to,
            promotion: mv.promotion,
        }
    }
}

fn promotion_role(c: u8) -> Option<Role> {
    Role::from_char(c as char).filter(|role| Role::PROMOTIONS.contains(role))
}

impl fmt::Display for San {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            San::Castle(CastlingSide::KingSide) => f.write_str("O-O"),
            San::Castle(CastlingSide::QueenSide) => f.write_str("O-O-O"),
            San::Null => f.write_str("--"),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            } => {
                if role != Role::Pawn {
                    write!(f, "{}", role.upper_char())?;
                }
                if let Some(file) = file {
                    write!(f, "{}", file.char())?;
                }
                if let Some(rank) = rank {
                    write!(f, "{}", rank.char())?;
                }
                if capture {
                    f.write_str("x")?;
                }
                write!(f, "{to}")?;
                if let Some(role) = promotion {
                    write!(f, "={}", role.upper_char())?;
                }
                Ok(())
            }
        }
    }
}

/// The SAN of `mv` in `pos` with `+` or `#` appended when it gives check or mate.
pub fn san_plus(pos: &Position, mv: Move) -> String {
    let mut text = San::from_move(pos, mv).to_string();
    let mut after = *pos;
    after.play_unchecked(mv);
    if after.is_check() {
        text.push(if after.has_legal_moves() { '+' } else { '#' });
    }
    text
}

/// Reads SAN and finds the legal move it names in `pos`.
pub fn parse_san(pos: &Position, text: &str) -> Result<Move, SanError> {
    San::parse(text)?.to_move(pos)
}
