//! Castling rights: which of the four castlings are still allowed by the rules' history.

use std::fmt;

use crate::{Color, Square};

/// King-side or queen-side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CastlingSide {
    KingSide = 0,
    QueenSide = 1,
}

impl CastlingSide {
    pub const ALL: [CastlingSide; 2] = [CastlingSide::KingSide, CastlingSide::QueenSide];

    /// Where the king stands before castling.
    #[inline]
    pub const fn king_from(color: Color) -> Square {
        match color {
            Color::White => Square::E1,
            Color::Black => Square::E8,
        }
    }
    /// Where the rook stands before castling.
    #[inline]
    pub const fn rook_from(self, color: Color) -> Square {
        match (self, color) {
            (CastlingSide::KingSide, Color::White) => Square::H1,
            (CastlingSide::QueenSide, Color::White) => Square::A1,
            (CastlingSide::KingSide, Color::Black) => Square::H8,
            (CastlingSide::QueenSide, Color::Black) => Square::A8,
        }
    }
    #[inline]
    pub const fn king_to(self, color: Color) -> Square {
        match (self, color) {
            (CastlingSide::KingSide, Color::White) => Square::G1,
            (CastlingSide::QueenSide, Color::White) => Square::C1,
            (CastlingSide::KingSide, Color::Black) => Square::G8,
            (CastlingSide::QueenSide, Color::Black) => Square::C8,
        }
    }
    #[inline]
    pub const fn rook_to(self, color: Color) -> Square {
        match (self, color) {
            (CastlingSide::KingSide, Color::White) => Square::F1,
            (CastlingSide::QueenSide, Color::White) => Square::D1,
            (CastlingSide::KingSide, Color::Black) => Square::F8,
            (CastlingSide::QueenSide, Color::Black) => Square::D8,
        }
    }
    /// The side a castling king lands on, from its destination square.
    pub fn from_king_to(to: Square) -> Option<CastlingSide> {
        match to {
            Square::G1 | Square::G8 => Some(CastlingSide::KingSide),
            Square::C1 | Square::C8 => Some(CastlingSide::QueenSide),
            _ => None,
        }
    }
}

/// The four castling rights as bits: White king-side 1, White queen-side 2, Black 4 and 8.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct CastlingRights(u8);

/// For each square, the rights that survive a move from or to it: moving the king or a rook, or
/// capturing a rook on its original square, loses the matching rights.
const KEEP_AFTER_TOUCH: [u8; 64] = {
    let mut table = [0x0f_u8; 64];
    table[0] = !2 & 0x0f; // a1
    table[4] = !3 & 0x0f; // e1
    table[7] = !1 & 0x0f; // h1
    table[56] = !8 & 0x0f; // a8
    table[60] = !12 & 0x0f; // e8
    table[63] = !4 & 0x0f; // h8
    table
};

impl CastlingRights {
    pub const NONE: CastlingRights = CastlingRights(0);
    pub const ALL: CastlingRights = CastlingRights(0x0f);

    #[inline]
    const fn bit(color: Color, side: CastlingSide) -> u8 {
        1 << (color as u8 * 2 + side as u8)
    }
    #[inline]
    pub const fn has(self, color: Color, side: CastlingSide) -> bool {
        self.0 & Self::bit(color, side) != 0
    }
    #[inline]
    pub const fn has_any(self, color: Color) -> bool {
        self.0 & (3 << (color as u8 * 2)) != 0
    }
    #[inline]
    pub fn set(&mut self, color: Color, side: CastlingSide) {
        self.0 |= Self::bit(color, side);
    }
    #[inline]
    pub fn clear(&mut self, color: Color, side: CastlingSide) {
        self.0 &= !Self::bit(color, side);
    }
    #[inline]
    pub fn clear_color(&mut self, color: Color) {
        self.0 &= !(3 << (color as u8 * 2));
    }
    /// The rights left after a move touches `from` and `to`.
    #[inline]
    pub fn after_move(self, from: Square, to: Square) -> CastlingRights {
        CastlingRights(self.0 & KEEP_AFTER_TOUCH[from.index()] & KEEP_AFTER_TOUCH[to.index()])
    }
    /// 0..16, for Zobrist keys.
    #[inline]
    pub const fn bits(self) -> usize {
        // Masked so that key lookups by these bits need no bounds check.
        (self.0 & 15) as usize
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The FEN field: `KQkq`, a subset, or `-`.
    pub fn fen(self) -> String {
        let mut out = String::with_capacity(4);
        for (color, side, c) in [
            (Color::White, CastlingSide::KingSide, 'K'),
            (Color::White, CastlingSide::QueenSide, 'Q'),
            (Color::Black, CastlingSide::KingSide, 'k'),
            (Color::Black, CastlingSide::QueenSide, 'q'),
        ] {
            if self.has(color, side) {
                out.push(c);
            }
        }
        if out.is_empty() {
            out.push('-');
        }
        out
    }
}

impl fmt::Debug for CastlingRights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}
