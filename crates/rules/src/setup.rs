//! FEN text to an unvalidated `Setup`, and back. `Position::from_setup` does the validation.

use std::fmt;
use std::str::FromStr;

use crate::{Board, CastlingRights, CastlingSide, Color, File, Piece, Rank, Square};

/// Everything FEN says, not yet checked against the rules of chess.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    pub board: Board,
    pub turn: Color,
    pub castling: CastlingRights,
    /// FEN's en-passant field: the square a pawn skipped over on the last move, if the writer
    /// recorded one, whether or not a capture there is possible.
    pub ep_target: Option<Square>,
    pub halfmove_clock: u32,
    pub fullmove_number: u32,
}

/// The FEN of the standard starting position.
pub const STARTING_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A FEN that cannot be read; the message names the field and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("FEN is empty")]
    Empty,
    #[error("FEN field 1 (piece placement): {0}")]
    Board(String),
    #[error("FEN field 2 (side to move): expected w or b, found {0:?}")]
    Turn(String),
    #[error("FEN field 3 (castling): expected - or a subset of KQkq in that order, found {0:?}")]
    Castling(String),
    #[error("FEN field 4 (en passant): expected - or a square on rank 3 or 6, found {0:?}")]
    EnPassant(String),
    #[error("FEN field 5 (halfmove clock): expected a number of half-moves, found {0:?}")]
    HalfmoveClock(String),
    #[error("FEN field 6 (fullmove number): expected a move number of at least 1, found {0:?}")]
    FullmoveNumber(String),
    #[error("FEN has {0} fields; expected 4 to 6 (placement, side, castling, en passant, halfmove clock, fullmove number)")]
    FieldCount(usize),
}

impl Setup {
    pub fn starting() -> Setup {
        Setup {
            board: Board::starting(),
            turn: Color::White,
            castling: CastlingRights::ALL,
            ep_target: None,
            halfmove_clock: 0,
            fullmove_number: 1,
        }
    }

    /// Reads a FEN. The halfmove and fullmove fields may be missing (as in EPD); they default to
    /// 0 and 1. Surrounding whitespace is ignored.
    pub fn from_fen(fen: &str) -> Result<Setup, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::Empty);
        }
        if !(4..=6).contains(&fields.len()) {
            return Err(FenError::FieldCount(fields.len()));
        }
        let mut setup = Setup::from_fen_fields(fields[0], fields[1], fields[2], fields[3])?;
        if let Some(&clock) = fields.get(4) {
            setup.halfmove_clock = clock
                .parse()
                .map_err(|_| FenError::HalfmoveClock(clock.to_owned()))?;
        }
        if let Some(&number) = fields.get(5) {
            setup.fullmove_number = match number.parse() {
                Ok(n) if n >= 1 => n,
                _ => return Err(FenError::FullmoveNumber(number.to_owned())),
            };
        }
        Ok(setup)
    }

    /// The four fields EPD and FEN share.
    pub fn from_fen_fields(
        board: &str,
        turn: &str,
        castling: &str,
        ep: &str,
    ) -> Result<Setup, FenError> {
        let board = parse_board(board)?;
        let turn = match turn {
            "w" => Color::White,
            "b" => Color::Black,
            _ => return Err(FenError::Turn(turn.to_owned())),
        };
        let castling = parse_castling(castling)?;
        let ep_target = match ep {
            "-" => None,
            _ => match Square::from_ascii(ep.as_bytes()) {
                Some(sq) if sq.rank() == Rank::THIRD || sq.rank() == Rank::SIXTH => Some(sq),
                _ => return Err(FenError::EnPassant(ep.to_owned())),
            },
        };
        Ok(Setup {
            board,
            turn,
            castling,
            ep_target,
            halfmove_clock: 0,
            fullmove_number: 1,
        })
    }

    /// The FEN of this setup, all six fields.
    pub fn fen(&self) -> String {
        format!(
            "{} {} {}",
            self.epd_fields(),
            self.halfmove_clock,
            self.fullmove_number
        )
    }

    /// The first four FEN fields, which EPD uses.
    pub fn epd_fields(&self) -> String {
        format!(
            "{} {} {} {}",
            self.board.board_fen(),
            self.turn.fen_char(),
            self.castling.fen(),
            self.ep_target
                .map_or_else(|| "-".to_owned(), |sq| sq.to_string())
        )
    }
}

fn parse_board(text: &str) -> Result<Board, FenError> {
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::Board(format!(
            "expected 8 ranks separated by '/', found {}",
            ranks.len()
        )));
    }
    let mut board = Board::empty();
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = Rank::new(7 - row as u32).expect("8 ranks");
        let mut file = 0u32;
        for c in rank_text.chars() {
            if let Some(skip) = c.to_digit(10).filter(|d| (1..=8).contains(d)) {
                file += skip;
            } else if let Some(piece) = Piece::from_fen_char(c) {
                let Some(f) = File::new(file) else {
                    return Err(FenError::Board(format!(
                        "rank {} has more than 8 squares",
                        rank.char()
                    )));
                };
                board.put(Square::from_coords(f, rank), piece);
                file += 1;
            } else {
                return Err(FenError::Board(format!(
                    "rank {}: expected a piece letter (PNBRQK/pnbrqk) or a digit 1-8, found {c:?}",
                    rank.char()
                )));
            }
            if file > 8 {
                return Err(FenError::Board(format!(
                    "rank {} has more than 8 squares",
                    rank.char()
                )));
            }
        }
        if file != 8 {
            return Err(FenError::Board(format!(
                "rank {} has {file} squares; expected 8",
                rank.char()
            )));
        }
    }
    Ok(board)
}

fn parse_castling(text: &str) -> Result<CastlingRights, FenError> {
    let mut rights = CastlingRights::NONE;
    if text == "-" {
        return Ok(rights);
    }
    let order = "KQkq";
    let mut last = None;
    for c in text.chars() {
        let Some(position) = order.find(c) else {
            return Err(FenError::Castling(text.to_owned()));
        };
        if last.is_some_and(|l| position <= l) {
            return Err(FenError::Castling(text.to_owned()));
        }
        last = Some(position);
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let side = if c.eq_ignore_ascii_case(&'k') {
            CastlingSide::KingSide
        } else {
            CastlingSide::QueenSide
        };
        rights.set(color, side);
    }
    if text.is_empty() {
        return Err(FenError::Castling(text.to_owned()));
    }
    Ok(rights)
}

impl FromStr for Setup {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Setup, FenError> {
        Setup::from_fen(s)
    }
}

impl fmt::Display for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}
