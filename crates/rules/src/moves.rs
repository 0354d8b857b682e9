//! Moves as the generator makes them: each carries what SAN, make-move and the engine need.

use arrayvec::ArrayVec;

use crate::{CastlingSide, Role, Square};

/// What is special about a move beyond from, to and promotion.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    Normal,
    /// A pawn's two-square advance, which may give the opponent an en-passant capture.
    DoublePush,
    /// The captured pawn stands beside `to`, not on it.
    EnPassant,
    /// `from` and `to` are the king's squares (e1g1); the rook moves too.
    Castle,
}

/// A legal move in some position. Build one with the generator or by parsing UCI/SAN against a
/// position; the fields describe it fully so it can be written back without the position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub role: Role,
    pub capture: Option<Role>,
    pub promotion: Option<Role>,
    pub kind: MoveKind,
}

impl Move {
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.capture.is_some()
    }
    #[inline]
    pub fn is_castle(&self) -> bool {
        self.kind == MoveKind::Castle
    }
    #[inline]
    pub fn is_en_passant(&self) -> bool {
        self.kind == MoveKind::EnPassant
    }
    /// Captures and promotions change material; everything else is quiet.
    #[inline]
    pub fn is_tactical(&self) -> bool {
        self.capture.is_some() || self.promotion.is_some()
    }
    /// Which castling this is, if it is one.
    pub fn castling_side(&self) -> Option<CastlingSide> {
        if self.is_castle() {
            CastlingSide::from_king_to(self.to)
        } else {
            None
        }
    }
    /// Pawn moves and captures reset the fifty-move count.
    #[inline]
    pub fn is_zeroing(&self) -> bool {
        self.role == Role::Pawn || self.capture.is_some()
    }
    /// The square of the captured piece: `to`, except for en passant.
    #[inline]
    pub fn capture_square(&self) -> Square {
        if self.is_en_passant() {
            Square::from_coords(self.to.file(), self.from.rank())
        } else {
            self.to
        }
    }
}

/// The most moves any legal chess position has is 218; 256 leaves room and keeps lists on the
/// stack, so generation never allocates.
pub const MAX_MOVES: usize = 256;

/// A stack-allocated list of moves.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;
