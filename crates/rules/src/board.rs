//! Piece placement only: who stands where. No side to move, no rights, no history.

use std::fmt;

use crate::attacks;
use crate::{Bitboard, Color, File, Piece, Rank, Role, Square};

/// Piece placement, kept both as bitboards (for attack computations) and as a mailbox (for the
/// "what stands on this square" question that move expansion and SAN ask constantly).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
    occupied: Bitboard,
    mailbox: [Option<Piece>; 64],
}

impl Default for Board {
    fn default() -> Board {
        Board::empty()
    }
}

impl Board {
    pub const fn empty() -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            occupied: Bitboard::EMPTY,
            mailbox: [None; 64],
        }
    }

    /// The standard starting placement.
    pub fn starting() -> Board {
        let mut board = Board::empty();
        let back = [
            Role::Rook,
            Role::Knight,
            Role::Bishop,
            Role::Queen,
            Role::King,
            Role::Bishop,
            Role::Knight,
            Role::Rook,
        ];
        for (file, role) in File::all().zip(back) {
            board.put(
                Square::from_coords(file, Rank::FIRST),
                role.of(Color::White),
            );
            board.put(
                Square::from_coords(file, Rank::SECOND),
                Role::Pawn.of(Color::White),
            );
            board.put(
                Square::from_coords(file, Rank::SEVENTH),
                Role::Pawn.of(Color::Black),
            );
            board.put(
                Square::from_coords(file, Rank::EIGHTH),
                role.of(Color::Black),
            );
        }
        board
    }

    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.mailbox[sq.index()]
    }
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        self.mailbox[sq.index()].map(|p| p.role)
    }
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }
    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }
    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }
    #[inline]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.by_role[piece.role.index()] & self.by_color[piece.color.index()]
    }
    /// Bishops and queens: the pieces that attack along diagonals.
    #[inline]
    pub fn diagonal_sliders(&self) -> Bitboard {
        self.by_role(Role::Bishop) | self.by_role(Role::Queen)
    }
    /// Rooks and queens: the pieces that attack along ranks and files.
    #[inline]
    pub fn line_sliders(&self) -> Bitboard {
        self.by_role(Role::Rook) | self.by_role(Role::Queen)
    }
    /// The king of `color`, if there is exactly one.
    #[inline]
    pub fn king_of(&self, color: Color) -> Option<Square> {
        self.by_piece(Role::King.of(color)).single_square()
    }

    /// Places `piece` on an empty square.
    #[inline]
    pub fn put(&mut self, sq: Square, piece: Piece) {
        debug_assert!(self.mailbox[sq.index()].is_none());
        let bit = Bitboard::from_square(sq);
        self.by_role[piece.role.index()] |= bit;
        self.by_color[piece.color.index()] |= bit;
        self.occupied |= bit;
        self.mailbox[sq.index()] = Some(piece);
    }

    /// Removes and returns whatever stands on `sq`.
    #[inline]
    pub fn take(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.mailbox[sq.index()].take()?;
        let bit = Bitboard::from_square(sq);
        self.by_role[piece.role.index()] ^= bit;
        self.by_color[piece.color.index()] ^= bit;
        self.occupied ^= bit;
        Some(piece)
    }

    /// Every piece of `attacker` that attacks `sq`, given `occupied` for the sliders.
    #[inline]
    pub fn attackers_to(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        let theirs = self.by_color(attacker);
        ((attacks::rook_attacks(sq, occupied) & self.line_sliders())
            | (attacks::bishop_attacks(sq, occupied) & self.diagonal_sliders())
            | (attacks::knight_attacks(sq) & self.by_role(Role::Knight))
            | (attacks::king_attacks(sq) & self.by_role(Role::King))
            | (attacks::pawn_attacks(!attacker, sq) & self.by_role(Role::Pawn)))
            & theirs
    }

    /// The placement field of FEN.
    pub fn board_fen(&self) -> String {
        let mut out = String::with_capacity(72);
        for rank in Rank::all().rev() {
            let mut empty = 0;
            for file in File::all() {
                match self.piece_at(Square::from_coords(file, rank)) {
                    Some(piece) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push(piece.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank != Rank::FIRST {
                out.push('/');
            }
        }
        out
    }

    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied.map(move |sq| {
            (
                sq,
                self.mailbox[sq.index()].expect("occupied square has a piece"),
            )
        })
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.board_fen())
    }
}
