//! The rules of chess for arbiter: the referee of every game the harness plays.
//!
//! Every move an engine sends is checked here, and every game is ended here: arbiter never
//! trusts an engine's claim of mate, draw or legality (see ARCHITECTURE.md, "Referee is ours"). The
//! crate therefore has to be exact, fast enough to be invisible next to the engines, and
//! impossible to crash from outside: every parser returns an error instead of panicking.
//!
//! Text becomes a position in two stages: [`Setup`] is what a FEN says, unchecked;
//! [`Position`] is validated, with a typed [`PositionError`] naming the broken rule. Moves come
//! from the legal move generator ([`Position::legal_moves`]) or from parsing UCI and SAN
//! against a position ([`descriptive`] reads and writes the English descriptive notation of
//! older books, `P-K4` and `P. to K's 4th.`, the same way). [`Game`] adds history and answers
//! how a game ends under a [`RuleSet`]. [`polyglot`] reads and writes Polyglot opening books
//! with the format's own keys.

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod attacks;
mod bitboard;
mod board;
mod castling;
mod color;
pub mod descriptive;
pub mod epd;
mod game;
mod movegen;
mod moves;
pub mod perft;
pub mod pgn;
mod piece;
pub mod polyglot;
mod polyglot_random;
mod position;
pub mod san;
mod setup;
mod square;
pub mod uci;
mod zobrist;

pub use bitboard::Bitboard;
pub use board::Board;
pub use castling::{CastlingRights, CastlingSide};
pub use color::Color;
pub use game::{
    is_insufficient_material, DrawApplication, Game, InsufficientMaterial, Odds, Outcome, RuleSet,
    StalemateRule, Termination,
};
pub use movegen::PieceMoves;
pub use moves::{Move, MoveKind, MoveList, MAX_MOVES};
pub use piece::{Piece, Role};
pub use position::{IllegalMove, Position, PositionError};
pub use setup::{FenError, Setup, STARTING_FEN};
pub use square::{File, ParseSquareError, Rank, Square};
