//! Polyglot opening books (`.bin`), the format most engines and GUIs share: 16-byte entries
//! sorted by the position's key, each a move with a weight.
//!
//! The key is the format's own Zobrist hash ([`polyglot_key`]), made from its published random
//! numbers, not this crate's [`Position::hash`]: a book written by any tool must be found by
//! its keys. The en-passant file counts only when a pawn of the side to move stands ready to
//! take (the format's rule, unlike FEN's), and a castling move is written as the king taking
//! its own rook (`e1h1`).

use std::fmt;

use crate::polyglot_random::RANDOM64;
use crate::{CastlingSide, Color, File, Move, Position, Rank, Role, Square};

/// The Polyglot key of `pos`.
pub fn polyglot_key(pos: &Position) -> u64 {
    let mut key = 0;
    for (sq, piece) in pos.board().pieces() {
        // The format orders pieces black pawn, white pawn, black knight, ... white king.
        let kind = 2 * piece.role.index() + usize::from(piece.color == Color::White);
        key ^= RANDOM64[64 * kind + 8 * sq.rank().index() + sq.file().index()];
    }
    let rights = pos.castling();
    for (i, (color, side)) in [
        (Color::White, CastlingSide::KingSide),
        (Color::White, CastlingSide::QueenSide),
        (Color::Black, CastlingSide::KingSide),
        (Color::Black, CastlingSide::QueenSide),
    ]
    .into_iter()
    .enumerate()
    {
        if rights.has(color, side) {
            key ^= RANDOM64[768 + i];
        }
    }
    if let Some(ep) = pos.ep_square() {
        if capturable_en_passant(pos, ep) {
            key ^= RANDOM64[772 + ep.file().index()];
        }
    }
    if pos.turn() == Color::White {
        key ^= RANDOM64[780];
    }
    key
}

/// Whether a pawn of the side to move stands beside the pawn that just moved two squares.
fn capturable_en_passant(pos: &Position, ep: Square) -> bool {
    let us = pos.turn();
    // The pawn that may take stands on the rank the double-pushed pawn now stands on.
    let rank = match us {
        Color::White => 4,
        Color::Black => 3,
    };
    [-1i32, 1].into_iter().any(|side| {
        let file = ep.file().index() as i32 + side;
        let (Some(file), Some(rank)) = (
            u32::try_from(file).ok().and_then(File::new),
            Rank::new(rank),
        ) else {
            return false;
        };
        let sq = Square::from_coords(file, rank);
        pos.board()
            .piece_at(sq)
            .is_some_and(|p| p.color == us && p.role == Role::Pawn)
    })
}

/// One book entry: a move in the position with `key`, its weight, and the learn field (kept,
/// not used).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BookEntry {
    pub key: u64,
    /// The move as the format writes it (see [`decode_move`]).
    pub raw_move: u16,
    pub weight: u16,
    pub learn: u32,
}

/// The Polyglot code of `mv`: to-file, to-rank, from-file, from-rank in three bits each, the
/// promotion piece above them; castling as the king taking its rook.
pub fn encode_move(mv: Move) -> u16 {
    let to = match mv.castling_side() {
        Some(CastlingSide::KingSide) => Square::from_coords(File::new(7).unwrap(), mv.from.rank()),
        Some(CastlingSide::QueenSide) => Square::from_coords(File::new(0).unwrap(), mv.from.rank()),
        None => mv.to,
    };
    let promotion = match mv.promotion {
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(Role::Queen) => 4,
        _ => 0,
    };
    (to.file().index() as u16)
        | (to.rank().index() as u16) << 3
        | (mv.from.file().index() as u16) << 6
        | (mv.from.rank().index() as u16) << 9
        | promotion << 12
}

/// The legal move of `pos` that `raw` codes, if there is one (a book may hold entries that are
/// illegal in the position its key was computed for, through a key collision or a bad writer).
pub fn decode_move(pos: &Position, raw: u16) -> Option<Move> {
    let from = Square::from_coords(
        File::new(u32::from((raw >> 6) & 7)).expect("three bits"),
        Rank::new(u32::from((raw >> 9) & 7)).expect("three bits"),
    );
    pos.legal_moves_from(from)
        .into_iter()
        .find(|mv| encode_move(*mv) == raw & 0x7fff)
}

/// Why a book cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolyglotError {
    /// The length is not a whole number of 16-byte entries.
    Length(usize),
    /// The entries are not sorted by key: the entry at this index comes before its key's place.
    Unsorted(usize),
}

impl fmt::Display for PolyglotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolyglotError::Length(len) => write!(
                f,
                "{len} bytes is not a whole number of 16-byte Polyglot entries"
            ),
            PolyglotError::Unsorted(at) => write!(
                f,
                "entry {at} is out of key order (a Polyglot book is sorted by key)"
            ),
        }
    }
}

impl std::error::Error for PolyglotError {}

/// A Polyglot book in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolyglotBook {
    entries: Vec<BookEntry>,
}

impl PolyglotBook {
    /// Reads a book's bytes: whole entries, sorted by key.
    pub fn from_bytes(bytes: &[u8]) -> Result<PolyglotBook, PolyglotError> {
        if !bytes.len().is_multiple_of(16) {
            return Err(PolyglotError::Length(bytes.len()));
        }
        let entries: Vec<BookEntry> = bytes
            .chunks_exact(16)
            .map(|e| BookEntry {
                key: u64::from_be_bytes(e[0..8].try_into().expect("8 bytes")),
                raw_move: u16::from_be_bytes([e[8], e[9]]),
                weight: u16::from_be_bytes([e[10], e[11]]),
                learn: u32::from_be_bytes(e[12..16].try_into().expect("4 bytes")),
            })
            .collect();
        if let Some(at) = entries.windows(2).position(|w| w[1].key < w[0].key) {
            return Err(PolyglotError::Unsorted(at + 1));
        }
        Ok(PolyglotBook { entries })
    }

    /// A book of `entries`, sorted as the format requires (by key, then by weight, heaviest
    /// first, as Polyglot writes them).
    pub fn from_entries(mut entries: Vec<BookEntry>) -> PolyglotBook {
        entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.weight.cmp(&a.weight)));
        PolyglotBook { entries }
    }

    /// The book's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.entries.len() * 16);
        for e in &self.entries {
            bytes.extend_from_slice(&e.key.to_be_bytes());
            bytes.extend_from_slice(&e.raw_move.to_be_bytes());
            bytes.extend_from_slice(&e.weight.to_be_bytes());
            bytes.extend_from_slice(&e.learn.to_be_bytes());
        }
        bytes
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[BookEntry] {
        &self.entries
    }

    /// The book's legal moves in `pos` with their weights, in the book's order; entries whose
    /// move is not legal there are left out.
    pub fn moves(&self, pos: &Position) -> Vec<(Move, u16)> {
        let key = polyglot_key(pos);
        let start = self.entries.partition_point(|e| e.key < key);
        self.entries[start..]
            .iter()
            .take_while(|e| e.key == key)
            .filter_map(|e| decode_move(pos, e.raw_move).map(|mv| (mv, e.weight)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uci::parse_uci_move as parse_uci;

    fn after(moves: &[&str]) -> Position {
        let mut pos = Position::starting();
        for text in moves {
            let mv = parse_uci(&pos, text).unwrap();
            pos.play_unchecked(mv);
        }
        pos
    }

    /// The keys the format's specification publishes for its example positions.
    #[test]
    fn keys_are_the_published_ones() {
        let cases: [(&[&str], u64); 9] = [
            (&[], 0x463b96181691fc9c),
            (&["e2e4"], 0x823c9b50fd114196),
            (&["e2e4", "d7d5"], 0x0756b94461c50fb0),
            (&["e2e4", "d7d5", "e4e5"], 0x662fafb965db29d4),
            (&["e2e4", "d7d5", "e4e5", "f7f5"], 0x22a48b5a8e47ff78),
            (
                &["e2e4", "d7d5", "e4e5", "f7f5", "e1e2"],
                0x652a607ca3f242c1,
            ),
            (
                &["e2e4", "d7d5", "e4e5", "f7f5", "e1e2", "e8f7"],
                0x00fdd303c946bdd9,
            ),
            (
                &["a2a4", "b7b5", "h2h4", "b5b4", "c2c4"],
                0x3c8123ea7b067637,
            ),
            (
                &["a2a4", "b7b5", "h2h4", "b5b4", "c2c4", "b4c3", "a1a3"],
                0x5c3f9b829b279560,
            ),
        ];
        for (moves, key) in cases {
            assert_eq!(polyglot_key(&after(moves)), key, "{moves:?}");
        }
    }

    #[test]
    fn moves_round_trip_through_their_codes_castling_as_king_takes_rook() {
        let pos = Position::from_fen("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        for mv in pos.legal_moves() {
            assert_eq!(decode_move(&pos, encode_move(mv)), Some(mv), "{mv:?}");
        }
        let castle = parse_uci(&pos, "e1g1").unwrap();
        // e1h1: from e1 (file 4, rank 0), to h1 (file 7, rank 0).
        assert_eq!(encode_move(castle), 7 | 4 << 6);
        let promotion = parse_uci(&pos, "b7a8n").unwrap();
        assert_eq!(encode_move(promotion) >> 12, 1);
    }

    #[test]
    fn a_book_is_written_read_and_looked_up() {
        let start = Position::starting();
        let e4 = parse_uci(&start, "e2e4").unwrap();
        let d4 = parse_uci(&start, "d2d4").unwrap();
        let key = polyglot_key(&start);
        let book = PolyglotBook::from_entries(vec![
            BookEntry {
                key,
                raw_move: encode_move(d4),
                weight: 3,
                learn: 0,
            },
            BookEntry {
                key: 1,
                raw_move: 0,
                weight: 1,
                learn: 0,
            },
            BookEntry {
                key,
                raw_move: encode_move(e4),
                weight: 9,
                learn: 0,
            },
        ]);
        let read = PolyglotBook::from_bytes(&book.to_bytes()).unwrap();
        assert_eq!(read, book);
        assert_eq!(read.moves(&start), vec![(e4, 9), (d4, 3)]);
        assert_eq!(read.moves(&after(&["e2e4"])), vec![]);
        assert_eq!(
            PolyglotBook::from_bytes(&[0; 17]),
            Err(PolyglotError::Length(17))
        );
        let mut unsorted = book.to_bytes();
        unsorted.rotate_left(16);
        assert_eq!(
            PolyglotBook::from_bytes(&unsorted),
            Err(PolyglotError::Unsorted(2))
        );
    }
}
