//! Piece placement only: who stands where. No side to move, no rights, no history.

use std::fmt;

use crate::attacks;
use crate::{Bitboard, Color, File, Piece, Rank, Role, Square};

/// Piece placement as eight bitboards and nothing else. Search and perft copy the board at
/// every node, so its size is speed: 64 bytes copy in a few instructions, where a mailbox
/// would more than double them. "What stands here" is answered from the bitboards instead,
/// which costs a few tests and is asked far less often than a board is copied.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
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
        let role = self.role_at(sq)?;
        let color = if self.by_color[0].contains(sq) {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|role| self.by_role[role.index()].contains(sq))
    }
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
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
        debug_assert!(!self.occupied().contains(sq));
        self.toggle(sq, piece);
    }

    /// Removes and returns whatever stands on `sq`.
    #[inline]
    pub fn take(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        self.toggle(sq, piece);
        Some(piece)
    }

    /// Adds `piece` on `sq` if absent, removes it if present: the primitive make-move uses
    /// when the move already says what stands where.
    #[inline]
    pub(crate) fn toggle(&mut self, sq: Square, piece: Piece) {
        let bit = Bitboard::from_square(sq);
        self.by_role[piece.role.index()] ^= bit;
        self.by_color[piece.color.index()] ^= bit;
    }

    /// Moves `piece` from `from` to an empty `to`: one update per bitboard instead of two.
    #[inline]
    pub(crate) fn shift(&mut self, from: Square, to: Square, piece: Piece) {
        let bits = Bitboard::from_square(from) | Bitboard::from_square(to);
        self.by_role[piece.role.index()] ^= bits;
        self.by_color[piece.color.index()] ^= bits;
    }

    /// Every piece of `attacker` that attacks `sq`, given `occupied` for the sliders.
    #[inline(always)]
    pub fn attackers_to(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        let theirs = self.by_color(attacker);
        ((attacks::rook_attacks(sq, occupied) & self.line_sliders())
            | (attacks::bishop_attacks(sq, occupied) & self.diagonal_sliders())
            | (attacks::knight_attacks(sq) & self.by_role(Role::Knight))
            | (attacks::king_attacks(sq) & self.by_role(Role::King))
            | (attacks::pawn_attacks(!attacker, sq) & self.by_role(Role::Pawn)))
            & theirs
    }

    /// Pieces of `attacker` giving check to a king on `king`: [`Board::attackers_to`] without
    /// the king term, since a king never gives check. Make-move asks this at every node.
    #[inline(always)]
    pub fn checkers_to(&self, king: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        ((attacks::rook_attacks(king, occupied) & self.line_sliders())
            | (attacks::bishop_attacks(king, occupied) & self.diagonal_sliders())
            | (attacks::knight_attacks(king) & self.by_role(Role::Knight))
            | (attacks::pawn_attacks(!attacker, king) & self.by_role(Role::Pawn)))
            & self.by_color(attacker)
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
        self.occupied()
            .map(move |sq| (sq, self.piece_at(sq).expect("occupied square has a piece")))
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.board_fen())
    }
}
