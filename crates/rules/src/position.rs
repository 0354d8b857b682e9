//! `Position`: a validated, history-free chess position, and make-move.

use std::fmt;
use std::str::FromStr;

use crate::attacks;
use crate::setup::{FenError, Setup};
use crate::zobrist;
use crate::{
    Bitboard, Board, CastlingRights, CastlingSide, Color, Move, MoveKind, Piece, Rank, Role, Square,
};

/// A legal chess position: exactly one king each, side not to move not in check, consistent
/// castling rights and en-passant square. Cheap to copy (copy-make is the fastest way to
/// search), and hashed incrementally.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    board: Board,
    turn: Color,
    castling: CastlingRights,
    /// Set only when an en-passant capture is legal right now. A skipped-over square where no
    /// capture is possible does not change the position for repetition, so it is not kept.
    ep_square: Option<Square>,
    halfmove_clock: u32,
    fullmove_number: u32,
    hash: u64,
}

/// A setup that breaks a rule of chess; the message names the rule and the FEN field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error(transparent)]
    Fen(#[from] FenError),
    #[error("FEN field 1 (piece placement): {0} has no king")]
    MissingKing(Color),
    #[error("FEN field 1 (piece placement): {0} has more than one king")]
    TooManyKings(Color),
    #[error("FEN field 1 (piece placement): {0} has more than 16 pieces")]
    TooManyPieces(Color),
    #[error("FEN field 1 (piece placement): {0} has more than 8 pawns")]
    TooManyPawns(Color),
    #[error("FEN field 1 (piece placement): a pawn stands on {0}, on the first or last rank")]
    PawnOnBackrank(Square),
    #[error("FEN field 2 (side to move): {0} is to move but {not} is in check", not = !*.0)]
    OppositeCheck(Color),
    #[error("FEN field 1 (piece placement): impossible check: {0}")]
    ImpossibleCheck(String),
    #[error("FEN field 3 (castling): right {right} needs the {color} king on {king} and a rook on {rook}")]
    CastlingRights {
        right: char,
        color: Color,
        king: Square,
        rook: Square,
    },
    #[error("FEN field 4 (en passant): {square} cannot be the en-passant square: {reason}")]
    EnPassant { square: Square, reason: String },
    #[error("FEN field 5 (halfmove clock): {0} is out of range (at most 150; the 75-move rule ends the game)")]
    HalfmoveClock(u32),
}

/// A move that is not legal in the position it was played in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {uci} in position {fen}")]
pub struct IllegalMove {
    pub uci: String,
    pub fen: String,
}

impl Default for Position {
    fn default() -> Position {
        Position::starting()
    }
}

impl Position {
    /// The standard starting position.
    pub fn starting() -> Position {
        Position::from_setup(&Setup::starting()).expect("the starting position is legal")
    }

    /// Parses and validates a FEN.
    pub fn from_fen(fen: &str) -> Result<Position, PositionError> {
        Position::from_setup(&Setup::from_fen(fen)?)
    }

    /// Validates a setup against every rule a reachable position obeys that can be checked
    /// without its history.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let board = setup.board;
        for color in Color::ALL {
            match board.by_piece(Role::King.of(color)).count() {
                0 => return Err(PositionError::MissingKing(color)),
                1 => {}
                _ => return Err(PositionError::TooManyKings(color)),
            }
            if board.by_color(color).count() > 16 {
                return Err(PositionError::TooManyPieces(color));
            }
            if board.by_piece(Role::Pawn.of(color)).count() > 8 {
                return Err(PositionError::TooManyPawns(color));
            }
        }
        if let Some(sq) = (board.by_role(Role::Pawn) & Bitboard::BACKRANKS).first() {
            return Err(PositionError::PawnOnBackrank(sq));
        }
        for color in Color::ALL {
            for side in CastlingSide::ALL {
                if !setup.castling.has(color, side) {
                    continue;
                }
                let king = CastlingSide::king_from(color);
                let rook = side.rook_from(color);
                if board.piece_at(king) != Some(Role::King.of(color))
                    || board.piece_at(rook) != Some(Role::Rook.of(color))
                {
                    let right = match side {
                        CastlingSide::KingSide => 'k',
                        CastlingSide::QueenSide => 'q',
                    };
                    let right = if color == Color::White {
                        right.to_ascii_uppercase()
                    } else {
                        right
                    };
                    return Err(PositionError::CastlingRights {
                        right,
                        color,
                        king,
                        rook,
                    });
                }
            }
        }
        if setup.halfmove_clock > 150 {
            return Err(PositionError::HalfmoveClock(setup.halfmove_clock));
        }

        let turn = setup.turn;
        let them_king = board.king_of(!turn).expect("one king");
        if board.attackers_to(them_king, turn, board.occupied()).any() {
            return Err(PositionError::OppositeCheck(turn));
        }

        let mut pos = Position {
            board,
            turn,
            castling: setup.castling,
            ep_square: None,
            halfmove_clock: setup.halfmove_clock,
            fullmove_number: setup.fullmove_number.max(1),
            hash: 0,
        };
        if let Some(target) = setup.ep_target {
            pos.validate_ep_target(target, setup.halfmove_clock)?;
        }
        pos.validate_checkers(setup.ep_target)?;
        if let Some(target) = setup.ep_target {
            pos.ep_square = pos.legal_ep_square(target);
        }
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    fn validate_ep_target(&self, target: Square, halfmove_clock: u32) -> Result<(), PositionError> {
        let err = |reason: String| {
            Err(PositionError::EnPassant {
                square: target,
                reason,
            })
        };
        let us = self.turn;
        if target.rank() != Rank::SIXTH.relative_to(us) {
            return err(format!(
                "with {us} to move it must be on rank {}",
                Rank::SIXTH.relative_to(us).char()
            ));
        }
        // The opponent's pawn went from `origin` over `target` to `pushed`.
        let pushed = one_rank_back(target, us);
        let origin = one_rank_back(target, !us);
        if self.board.piece_at(pushed) != Some(Role::Pawn.of(!us)) {
            return err(format!("no {} pawn stands on {pushed}", !us));
        }
        if self.board.occupied().contains(target) || self.board.occupied().contains(origin) {
            return err(format!(
                "{target} and {origin} must be empty after a double push"
            ));
        }
        if halfmove_clock != 0 {
            return err(format!(
                "a double push resets the halfmove clock, but it is {halfmove_clock}"
            ));
        }
        Ok(())
    }

    /// Checks that cannot arise from any legal move: three checkers, two checkers that no single
    /// move could have given, or a check that the double push recorded in the en-passant field
    /// cannot explain.
    fn validate_checkers(&self, ep_target: Option<Square>) -> Result<(), PositionError> {
        let checkers = self.checkers();
        let king = self.king(self.turn);
        if checkers.count() > 2 {
            return Err(PositionError::ImpossibleCheck(format!(
                "{} pieces give check at once",
                checkers.count()
            )));
        }
        if checkers.count() == 2 {
            let sliders = self.board.diagonal_sliders() | self.board.line_sliders();
            if (checkers & sliders).is_empty() {
                return Err(PositionError::ImpossibleCheck(
                    "double check without a long-range piece".into(),
                ));
            }
            let mut it = checkers;
            let (a, b) = (it.next().expect("two"), it.next().expect("two"));
            if attacks::aligned(a, b, king) {
                return Err(PositionError::ImpossibleCheck(format!(
                    "{a} and {b} check along the same line"
                )));
            }
        }
        if let Some(target) = ep_target {
            let pushed = one_rank_back(target, self.turn);
            let origin = one_rank_back(target, !self.turn);
            for checker in checkers {
                if checker != pushed && !attacks::between(king, checker).contains(origin) {
                    return Err(PositionError::ImpossibleCheck(format!(
                        "the check from {checker} cannot follow the double push to {pushed}"
                    )));
                }
            }
        }
        Ok(())
    }

    fn compute_hash(&self) -> u64 {
        let mut hash = zobrist::side(self.turn) ^ zobrist::castling(self.castling.bits());
        for (sq, piece) in self.board.pieces() {
            hash ^= zobrist::piece(piece, sq);
        }
        if let Some(ep) = self.ep_square {
            hash ^= zobrist::en_passant(ep);
        }
        hash
    }

    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }
    #[inline]
    pub fn castling(&self) -> CastlingRights {
        self.castling
    }
    /// The square a pawn may capture onto en passant, when such a capture is legal.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }
    #[inline]
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }
    #[inline]
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove_number
    }
    /// Zobrist key of placement, side, castling rights and legal en-passant square: equal keys
    /// mean the same position in FIDE's sense of repetition.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Pieces giving check to the side to move. Found when asked rather than kept by
    /// make-move: most positions a search or perft makes are never expanded, and a lookup from
    /// the king costs about what keeping it up to date would. Callers that need it more than
    /// once per position keep the answer.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        let king = self.king(self.turn);
        self.board
            .checkers_to(king, !self.turn, self.board.occupied())
    }
    #[inline]
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }
    #[inline]
    pub fn king(&self, color: Color) -> Square {
        let kings = self.board.by_piece(Role::King.of(color));
        Square::from_index_unchecked(kings.0.trailing_zeros())
    }
    #[inline]
    pub fn us(&self) -> Bitboard {
        self.board.by_color(self.turn)
    }
    #[inline]
    pub fn them(&self) -> Bitboard {
        self.board.by_color(!self.turn)
    }

    /// Pieces of `color` that may not leave the line between their king and an enemy slider.
    pub fn pinned(&self, color: Color) -> Bitboard {
        let king = self.king(color);
        let theirs = self.board.by_color(!color);
        let snipers = ((attacks::rook_attacks(king, Bitboard::EMPTY) & self.board.line_sliders())
            | (attacks::bishop_attacks(king, Bitboard::EMPTY) & self.board.diagonal_sliders()))
            & theirs;
        let occupied = self.board.occupied();
        let mut pinned = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = attacks::between(king, sniper) & occupied;
            if !blockers.more_than_one() {
                pinned |= blockers & self.board.by_color(color);
            }
        }
        pinned
    }

    /// Whether a piece of `attacker` attacks `sq`.
    #[inline]
    pub fn is_attacked(&self, sq: Square, attacker: Color) -> bool {
        self.board
            .attackers_to(sq, attacker, self.board.occupied())
            .any()
    }

    /// The setup this position was, or would be, read from; the en-passant field is written
    /// only when a capture is legal, as Stockfish and most tools do.
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            castling: self.castling,
            ep_target: self.ep_square,
            halfmove_clock: self.halfmove_clock,
            fullmove_number: self.fullmove_number,
        }
    }

    pub fn fen(&self) -> String {
        self.to_setup().fen()
    }

    /// Whether the pawn on `from` may capture en passant onto `target` without leaving its king
    /// in check. Checked directly on the occupancy after the capture, which covers the rank
    /// pin that removes two pawns from one line at once.
    pub(crate) fn ep_is_legal(&self, from: Square, target: Square) -> bool {
        let us = self.turn;
        let captured = Square::from_coords(target.file(), from.rank());
        let occupied =
            (self.board.occupied() - Bitboard::from(from) - Bitboard::from(captured)).with(target);
        let king = self.king(us);
        let theirs = self.them();
        let b = &self.board;
        let attackers = (attacks::rook_attacks(king, occupied) & b.line_sliders())
            | (attacks::bishop_attacks(king, occupied) & b.diagonal_sliders())
            | (attacks::knight_attacks(king) & b.by_role(Role::Knight))
            | (attacks::pawn_attacks(us, king) & b.by_role(Role::Pawn)).without(captured);
        (attackers & theirs).is_empty()
    }

    /// `target` if the side to move has a legal en-passant capture onto it.
    fn legal_ep_square(&self, target: Square) -> Option<Square> {
        let candidates = attacks::pawn_attacks(!self.turn, target)
            & self.board.by_piece(Role::Pawn.of(self.turn));
        let mut candidates = candidates;
        Iterator::any(&mut candidates, |from| self.ep_is_legal(from, target)).then_some(target)
    }

    /// Adds or removes `piece` on `sq`, keeping the key in step.
    #[inline]
    fn toggle_hashed(&mut self, sq: Square, piece: Piece) {
        self.board.toggle(sq, piece);
        self.hash ^= zobrist::piece(piece, sq);
    }

    /// Plays a move the generator produced for this position. A move from anywhere else is a
    /// logic error: use [`Position::play`] at the edges. The move says what moves and what is
    /// captured, so the board is updated by toggling bits, without looking anything up. Only
    /// what defines the position is kept up to date (placement, rights, clocks, key); checkers
    /// are found when asked.
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) {
        let us = self.turn;
        if let Some(ep) = self.ep_square.take() {
            self.hash ^= zobrist::en_passant(ep);
        }
        self.halfmove_clock = if mv.is_zeroing() {
            0
        } else {
            self.halfmove_clock + 1
        };
        if us == Color::Black {
            self.fullmove_number = self.fullmove_number.saturating_add(1);
        }
        self.turn = !us;
        self.hash ^= zobrist::side(Color::Black);

        if mv.kind == MoveKind::Castle {
            self.castle(us, mv.to);
            return;
        }
        if let Some(captured) = mv.capture {
            self.toggle_hashed(mv.capture_square(), captured.of(!us));
        }
        let moved = mv.role.of(us);
        match mv.promotion {
            None => {
                self.board.shift(mv.from, mv.to, moved);
                self.hash ^= zobrist::piece(moved, mv.from) ^ zobrist::piece(moved, mv.to);
            }
            Some(role) => {
                self.toggle_hashed(mv.from, moved);
                self.toggle_hashed(mv.to, role.of(us));
            }
        }
        self.update_castling(self.castling.after_move(mv.from, mv.to));
        if mv.kind == MoveKind::DoublePush {
            let target = one_rank_back(mv.to, us);
            if let Some(ep) = self.legal_ep_square(target) {
                self.ep_square = Some(ep);
                self.hash ^= zobrist::en_passant(ep);
            }
        }
    }

    /// The king and rook moves of castling by `us`, the king landing on `king_to`. Out of line
    /// so that the common path of make-move stays small.
    #[inline(never)]
    fn castle(&mut self, us: Color, king_to: Square) {
        let side = CastlingSide::from_king_to(king_to).expect("castling move lands on c or g");
        let (king, rook) = (Role::King.of(us), Role::Rook.of(us));
        let king_from = CastlingSide::king_from(us);
        self.toggle_hashed(king_from, king);
        self.toggle_hashed(king_to, king);
        self.toggle_hashed(side.rook_from(us), rook);
        self.toggle_hashed(side.rook_to(us), rook);
        self.update_castling(self.castling.after_move(king_from, king_to));
    }

    #[inline]
    fn update_castling(&mut self, castling: CastlingRights) {
        if castling != self.castling {
            self.hash ^=
                zobrist::castling(self.castling.bits()) ^ zobrist::castling(castling.bits());
            self.castling = castling;
        }
    }

    /// Plays `mv` if it is legal here, else says why not.
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMove> {
        if !self.is_legal(mv) {
            return Err(IllegalMove {
                uci: crate::uci::move_to_uci(Some(mv)),
                fen: self.fen(),
            });
        }
        let mut next = *self;
        next.play_unchecked(mv);
        Ok(next)
    }

    /// The same position with the colours exchanged: every man moved to the mirror square on
    /// the other side of the board and given to the other side, the side to move and the
    /// castling rights exchanged too. How a handicap whose giver takes the other colour is set
    /// up, the odds on the giver's side.
    pub fn mirrored(&self) -> Position {
        let mut setup = self.to_setup();
        let mut board = Board::empty();
        for (sq, piece) in self.board().pieces() {
            board.put(
                sq.flip_vertical(),
                Piece {
                    color: !piece.color,
                    role: piece.role,
                },
            );
        }
        setup.board = board;
        setup.turn = !setup.turn;
        let mut castling = CastlingRights::NONE;
        for color in Color::ALL {
            for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
                if self.castling().has(color, side) {
                    castling.set(!color, side);
                }
            }
        }
        setup.castling = castling;
        setup.ep_target = setup.ep_target.map(Square::flip_vertical);
        Position::from_setup(&setup).expect("the mirror of a legal position is legal")
    }

    /// Passes the turn without moving (`0000` in UCI), as null-move pruning does. Not legal
    /// chess; `None` when in check, where passing would leave the king capturable.
    pub fn play_null(&self) -> Option<Position> {
        if self.is_check() {
            return None;
        }
        let mut next = *self;
        if let Some(ep) = next.ep_square.take() {
            next.hash ^= zobrist::en_passant(ep);
        }
        next.halfmove_clock += 1;
        if self.turn == Color::Black {
            next.fullmove_number = next.fullmove_number.saturating_add(1);
        }
        next.turn = !self.turn;
        next.hash ^= zobrist::side(Color::Black);
        Some(next)
    }
}

/// One rank towards `color`'s own back rank. Used only between ranks 2 and 7.
#[inline]
fn one_rank_back(sq: Square, color: Color) -> Square {
    Square::from_index_unchecked(match color {
        Color::White => sq.index() as u32 - 8,
        Color::Black => sq.index() as u32 + 8,
    })
}

impl FromStr for Position {
    type Err = PositionError;
    fn from_str(s: &str) -> Result<Position, PositionError> {
        Position::from_fen(s)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.fen())
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}
