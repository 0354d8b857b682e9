//! Legal move generation.
//!
//! The generator works in sets: for each piece it yields the bitboard of squares it may
//! legally move to (`PieceMoves`). Counting the legal moves is then a popcount per piece, which
//! makes "how many moves" and "is there any move" much cheaper than building a list; the list
//! is built from the same sets. Legality is decided up front with check and pin masks, so no
//! move is made and taken back to test it. The only move tested on the board is en passant,
//! which can uncover a rank attack on the king by removing two pawns from one line.

use std::ops::ControlFlow;

use crate::attacks;
use crate::{Bitboard, CastlingSide, Move, MoveKind, MoveList, Position, Rank, Role, Square};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Special {
    None,
    EnPassant,
    Castle,
}

/// The legal destinations of one piece.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PieceMoves {
    pub role: Role,
    pub from: Square,
    pub to: Bitboard,
    special: Special,
}

impl PieceMoves {
    /// Legal moves in this set; a pawn reaching the last rank is four moves (=Q, =R, =B, =N).
    #[inline]
    pub fn len(&self) -> usize {
        let promotions = self.to & Bitboard::BACKRANKS;
        // Tested before counting: without a popcnt instruction a count costs a dozen steps,
        // and a pawn set almost never reaches the last rank.
        if self.role == Role::Pawn && promotions.any() {
            self.to.count() + 3 * promotions.count()
        } else {
            self.to.count()
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// Calls `f` with each move of the set, given the position it was generated in, in
    /// square order (a1 first). The order is part of staunton's behaviour: its move ordering
    /// breaks ties by it, so changing it changes the engine's bench signature.
    #[inline]
    pub fn for_each_move(&self, pos: &Position, mut f: impl FnMut(Move)) {
        let (from, role) = (self.from, self.role);
        let board = pos.board();
        let make = |to, capture, kind| Move {
            from,
            to,
            role,
            capture,
            promotion: None,
            kind,
        };
        match self.special {
            Special::Castle => {
                for to in self.to {
                    f(make(to, None, MoveKind::Castle));
                }
            }
            Special::EnPassant => {
                for to in self.to {
                    f(make(to, Some(Role::Pawn), MoveKind::EnPassant));
                }
            }
            Special::None if role == Role::Pawn => {
                for to in self.to {
                    let capture = board.role_at(to);
                    let kind = if from.index().abs_diff(to.index()) == 16 {
                        MoveKind::DoublePush
                    } else {
                        MoveKind::Normal
                    };
                    let mv = make(to, capture, kind);
                    if Bitboard::BACKRANKS.contains(to) {
                        for promotion in Role::PROMOTIONS {
                            f(Move {
                                promotion: Some(promotion),
                                ..mv
                            });
                        }
                    } else {
                        f(mv);
                    }
                }
            }
            // Pieces other than pawns skip the double-push and promotion tests (2-3% of a
            // make-every-move perft).
            Special::None => {
                for to in self.to {
                    let capture = board.role_at(to);
                    f(make(to, capture, MoveKind::Normal));
                }
            }
        }
    }
}

/// Which moves to generate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Scope {
    All,
    /// Moves that capture something, en passant included; what quiescence search wants.
    Captures,
}

impl Position {
    /// Calls `f` with the legal destination set of each piece that can move, stopping early if
    /// `f` breaks.
    #[inline]
    pub fn for_each_piece_moves<B>(
        &self,
        f: impl FnMut(PieceMoves) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        self.generate(Scope::All, f)
    }

    /// [`Position::for_each_piece_moves`] restricted to captures (en passant included), for
    /// callers that fill their own lists.
    #[inline]
    pub fn for_each_piece_captures<B>(
        &self,
        f: impl FnMut(PieceMoves) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        self.generate(Scope::Captures, f)
    }

    #[inline(always)]
    fn generate<B>(
        &self,
        scope: Scope,
        mut f: impl FnMut(PieceMoves) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let board = self.board();
        let us = self.turn();
        let them = !us;
        let ours = board.by_color(us);
        let theirs = board.by_color(them);
        let occupied = board.occupied();
        let king = self.king(us);
        let targets = match scope {
            Scope::All => !ours,
            Scope::Captures => theirs,
        };
        let mut emit = |role, from, to: Bitboard, special| {
            if to.any() {
                f(PieceMoves {
                    role,
                    from,
                    to,
                    special,
                })
            } else {
                ControlFlow::Continue(())
            }
        };

        // King: any target not attacked once the king has left its square (so a slider's ray
        // through the king's old square counts).
        let without_king = occupied.without(king);
        let mut safe = Bitboard::EMPTY;
        for to in attacks::king_attacks(king) & targets {
            if board.attackers_to(to, them, without_king).is_empty() {
                safe = safe.with(to);
            }
        }
        emit(Role::King, king, safe, Special::None)?;

        let checkers = self.checkers();
        if checkers.more_than_one() {
            return ControlFlow::Continue(());
        }
        // In check, other pieces must capture the checker or block its line.
        let check_mask = match checkers.first() {
            Some(checker) => attacks::between(king, checker).with(checker),
            None => Bitboard::FULL,
        };
        let pinned = self.pinned(us);
        let allowed = targets & check_mask;
        let pin_line = |from: Square| {
            if pinned.contains(from) {
                attacks::line(king, from)
            } else {
                Bitboard::FULL
            }
        };

        for from in board.by_piece(Role::Knight.of(us)) - pinned {
            emit(
                Role::Knight,
                from,
                attacks::knight_attacks(from) & allowed,
                Special::None,
            )?;
        }
        for from in board.by_piece(Role::Bishop.of(us)) {
            emit(
                Role::Bishop,
                from,
                attacks::bishop_attacks(from, occupied) & allowed & pin_line(from),
                Special::None,
            )?;
        }
        for from in board.by_piece(Role::Rook.of(us)) {
            emit(
                Role::Rook,
                from,
                attacks::rook_attacks(from, occupied) & allowed & pin_line(from),
                Special::None,
            )?;
        }
        for from in board.by_piece(Role::Queen.of(us)) {
            emit(
                Role::Queen,
                from,
                attacks::queen_attacks(from, occupied) & allowed & pin_line(from),
                Special::None,
            )?;
        }

        let pawns = board.by_piece(Role::Pawn.of(us));
        let double_push_rank = Bitboard::relative_rank(us, Rank::SECOND);
        for from in pawns {
            let mut to = attacks::pawn_attacks(us, from) & theirs;
            if scope == Scope::All {
                let single = Bitboard::from(from).shift_forward(us) - occupied;
                to |= single;
                if double_push_rank.contains(from) {
                    to |= single.shift_forward(us) - occupied;
                }
            }
            emit(
                Role::Pawn,
                from,
                to & check_mask & pin_line(from),
                Special::None,
            )?;
        }
        if let Some(target) = self.ep_square() {
            for from in attacks::pawn_attacks(them, target) & pawns {
                if self.ep_is_legal(from, target) {
                    emit(Role::Pawn, from, Bitboard::from(target), Special::EnPassant)?;
                }
            }
        }

        if scope == Scope::All && checkers.is_empty() && self.castling().has_any(us) {
            for side in CastlingSide::ALL {
                if !self.castling().has(us, side) {
                    continue;
                }
                let king_to = side.king_to(us);
                let path_clear = (attacks::between(king, side.rook_from(us)) & occupied).is_empty();
                if path_clear
                    && (attacks::between(king, king_to).with(king_to))
                        .all(|sq| board.attackers_to(sq, them, occupied).is_empty())
                {
                    emit(Role::King, king, Bitboard::from(king_to), Special::Castle)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every legal move.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        self.collect(Scope::All)
    }

    /// Every legal capture, en passant included (promotions without capture are not captures).
    pub fn capture_moves(&self) -> MoveList {
        self.collect(Scope::Captures)
    }

    #[inline]
    fn collect(&self, scope: Scope) -> MoveList {
        let mut list = MoveList::new();
        let _ = self.generate::<()>(scope, |set| {
            set.for_each_move(self, |mv| list.push(mv));
            ControlFlow::Continue(())
        });
        list
    }

    /// The number of legal moves, without listing them.
    #[inline]
    pub fn count_legal_moves(&self) -> usize {
        let mut count = 0;
        let _ = self.generate::<()>(Scope::All, |set| {
            count += set.len();
            ControlFlow::Continue(())
        });
        count
    }

    /// Whether any legal move exists: stops at the first piece that can move.
    #[inline]
    pub fn has_legal_moves(&self) -> bool {
        self.generate(Scope::All, |_| ControlFlow::Break(()))
            .is_break()
    }

    /// Legal moves of the piece on `from` (none if it is not ours or cannot move).
    pub fn legal_moves_from(&self, from: Square) -> MoveList {
        let mut list = MoveList::new();
        let _ = self.generate::<()>(Scope::All, |set| {
            if set.from == from {
                set.for_each_move(self, |mv| list.push(mv));
            }
            ControlFlow::Continue(())
        });
        list
    }

    /// Whether `mv` is one of the legal moves here, with every field as the generator sets it.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves_from(mv.from).contains(&mv)
    }

    #[inline]
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_moves()
    }

    #[inline]
    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_moves()
    }
}
