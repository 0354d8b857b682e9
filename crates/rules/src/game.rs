//! `Game`: a position plus its history, and how a game ends under a `RuleSet`.

use std::fmt;

use crate::{
    Bitboard, Color, File, IllegalMove, Move, MoveList, Piece, Position, Rank, Role, Setup, Square,
};

/// What stalemate means.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum StalemateRule {
    /// Today's rule.
    #[default]
    Draw,
    /// The old English rule: the side left without a move wins.
    WinForStalematedSide,
}

/// Whether a draw the rules allow ends the game by itself or only when a player claims it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum DrawApplication {
    /// The arbiter ends the game as soon as the condition holds (what engine testing wants:
    /// engines never claim).
    #[default]
    Automatic,
    /// The condition only allows a claim; the game continues until [`Game::claim_draw`].
    OnClaim,
}

/// Which material counts as insufficient to mate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum InsufficientMaterial {
    /// FIDE's dead position: no sequence of legal moves can mate (K v K, K+minor v K, bishops
    /// all on one colour).
    #[default]
    Strict,
    /// The older "cannot force mate" list: also K+N+N v K.
    Wide,
}

/// The laws a game is played under. The default is today's FIDE rules with automatic draws.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RuleSet {
    pub stalemate: StalemateRule,
    pub repetition: DrawApplication,
    pub fifty_moves: DrawApplication,
    pub insufficient_material: InsufficientMaterial,
    /// The marked pawn ("pion coiffé") odds: this side's king's bishop's pawn is marked. If it
    /// is captured its owner loses; its owner may mate with it alone (a mate by any other man
    /// loses); and it may not promote.
    pub marked_pawn: Option<Color>,
}

impl RuleSet {
    /// FIDE's rules, with the threefold and fifty-move draws applied only on claim, as over the
    /// board (fivefold and seventy-five moves still end the game).
    pub fn fide_claims() -> RuleSet {
        RuleSet {
            repetition: DrawApplication::OnClaim,
            fifty_moves: DrawApplication::OnClaim,
            ..RuleSet::default()
        }
    }
}

/// Why a game ended. The first group is decided by this crate's rules; the second by whoever
/// runs the game (the match runner), and is here so that every game's end has one vocabulary
/// and one PGN spelling.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    Checkmate,
    Stalemate,
    InsufficientMaterial,
    ThreefoldRepetition,
    FivefoldRepetition,
    FiftyMoves,
    SeventyFiveMoves,
    /// Ended by a draw claim or agreement under claim-only rules.
    DrawClaimed,
    TimeForfeit,
    IllegalMove,
    /// The engine crashed or left.
    Abandoned,
    /// The engine stopped answering.
    StalledConnection,
    /// Ended by the runner's adjudication rules; the text says which (e.g. "resign score").
    Adjudication(String),
    /// Under the marked pawn odds: the marked pawn was taken, and its owner loses.
    MarkedPawnCaptured,
    /// Under the marked pawn odds: the marked pawn's owner mated with another man, and loses.
    MateByUnmarkedMan,
}

impl Termination {
    /// The value of PGN's `Termination` tag, in the vocabulary cutechess and fastchess write.
    pub fn pgn_tag(&self) -> &'static str {
        match self {
            Termination::TimeForfeit => "time forfeit",
            Termination::IllegalMove => "illegal move",
            Termination::Abandoned => "abandoned",
            Termination::StalledConnection => "stalled connection",
            Termination::Adjudication(_) => "adjudication",
            _ => "normal",
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::ThreefoldRepetition => "threefold repetition",
            Termination::FivefoldRepetition => "fivefold repetition",
            Termination::FiftyMoves => "fifty-move rule",
            Termination::SeventyFiveMoves => "seventy-five-move rule",
            Termination::DrawClaimed => "draw claimed",
            Termination::TimeForfeit => "loses on time",
            Termination::IllegalMove => "illegal move",
            Termination::Abandoned => "abandoned",
            Termination::StalledConnection => "stalled connection",
            Termination::Adjudication(reason) => return write!(f, "adjudication: {reason}"),
            Termination::MarkedPawnCaptured => "the marked pawn captured",
            Termination::MateByUnmarkedMan => "mate by a man other than the marked pawn",
        };
        f.write_str(text)
    }
}

/// How a game ended: the winner (none for a draw) and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Option<Color>,
    pub termination: Termination,
}

impl Outcome {
    pub fn draw(termination: Termination) -> Outcome {
        Outcome {
            winner: None,
            termination,
        }
    }
    pub fn win(winner: Color, termination: Termination) -> Outcome {
        Outcome {
            winner: Some(winner),
            termination,
        }
    }
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn result_token(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

/// A game: where it started, the moves played, and every position on the way.
#[derive(Clone, Debug)]
pub struct Game {
    rules: RuleSet,
    moves: Vec<Move>,
    /// `positions[0]` is the start; `positions[i + 1]` follows `moves[i]`.
    positions: Vec<Position>,
    /// Set once a claim (or an external event) ends the game.
    ended: Option<Outcome>,
    /// Under the marked pawn odds, the marked pawn's square after each position (`None` once
    /// it is taken), by the same index as `positions`.
    marked: Vec<Option<Square>>,
}

impl Game {
    pub fn new(start: Position, rules: RuleSet) -> Game {
        let marked = rules.marked_pawn.map(|owner| {
            // The king's bishop's pawn: on the bishop's file, the owner's rearmost pawn there
            // (a start taken from a book may have moved it on). A start without one has none
            // to lose: the game is over before it begins.
            let pawn = Piece {
                color: owner,
                role: Role::Pawn,
            };
            let file = File::new(5).expect("the f-file");
            let ranks: Vec<Rank> = match owner {
                Color::White => Rank::all().collect(),
                Color::Black => Rank::all().rev().collect(),
            };
            ranks
                .into_iter()
                .map(|rank| Square::from_coords(file, rank))
                .find(|&square| start.board().piece_at(square) == Some(pawn))
        });
        Game {
            rules,
            moves: Vec::new(),
            positions: vec![start],
            ended: None,
            marked: marked.into_iter().collect(),
        }
    }

    /// A game under the marked pawn odds (`rules.marked_pawn`) whose marked pawn stands on
    /// `square` at the start: a game taken up in the middle, where the pawn has moved on.
    pub fn with_marked_pawn(start: Position, rules: RuleSet, square: Square) -> Game {
        let mut game = Game::new(start, rules);
        game.marked = vec![Some(square)];
        game
    }

    /// The marked pawn's square now, under the marked pawn odds while it stands.
    pub fn marked_pawn(&self) -> Option<Square> {
        self.marked.last().copied().flatten()
    }

    /// Whether `mv` is allowed by the game's rules beyond the board's: under the marked pawn
    /// odds the marked pawn may not promote.
    pub fn allows(&self, mv: Move) -> bool {
        !(mv.promotion.is_some() && self.marked_pawn() == Some(mv.from))
    }

    /// The legal moves under the game's rules (none once the marked pawn is taken: that ends
    /// the game).
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = self.position().legal_moves();
        match self.marked.last() {
            Some(None) => moves.clear(),
            Some(Some(_)) => moves.retain(|mv| self.allows(*mv)),
            None => {}
        }
        moves
    }

    /// The leaves of the move tree `depth` plies deep under the game's rules: perft, for rule
    /// sets that change which moves are legal (the marked pawn's).
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let moves = self.legal_moves();
        if depth == 1 {
            return moves.len() as u64;
        }
        moves
            .iter()
            .map(|&mv| {
                let mut next = self.clone();
                next.play_unchecked(mv);
                next.perft(depth - 1)
            })
            .sum()
    }

    /// The marked pawn's square after `mv` is played from the current position.
    fn marked_after(&self, mv: Move) -> Option<Square> {
        let square = self.marked_pawn()?;
        if mv.from == square {
            Some(mv.to)
        } else if mv.is_capture() && mv.capture_square() == square {
            None
        } else {
            Some(square)
        }
    }

    /// A game from the standard starting position under today's rules.
    pub fn standard() -> Game {
        Game::new(Position::starting(), RuleSet::default())
    }

    pub fn rules(&self) -> RuleSet {
        self.rules
    }
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }
    pub fn position(&self) -> &Position {
        self.positions.last().expect("a game has a start position")
    }
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }
    /// Every position of the game, the start first and the current one last.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }
    /// The position before each move and the move, in order.
    pub fn plies(&self) -> impl Iterator<Item = (&Position, Move)> {
        self.positions.iter().zip(self.moves.iter().copied())
    }

    /// Plays a move after checking it is legal here. Whether the game is already over is the
    /// caller's question ([`Game::outcome`]), asked once per move.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if !self.allows(mv) {
            return Err(IllegalMove {
                uci: crate::uci::move_to_uci(Some(mv)),
                fen: self.position().fen(),
            });
        }
        let next = self.position().play(mv)?;
        self.record(mv, next);
        Ok(())
    }

    /// Plays a move the generator made for the current position.
    pub fn play_unchecked(&mut self, mv: Move) {
        let mut next = *self.position();
        next.play_unchecked(mv);
        self.record(mv, next);
    }

    fn record(&mut self, mv: Move, next: Position) {
        if !self.marked.is_empty() {
            let marked = self.marked_after(mv);
            self.marked.push(marked);
        }
        self.moves.push(mv);
        self.positions.push(next);
    }

    /// How many times the current position has occurred, counting now. Only positions since the
    /// last capture or pawn move can repeat, and the Zobrist key already covers side, castling
    /// and a capturable en-passant square; placement is compared too, so a key collision
    /// cannot fake a repetition.
    pub fn repetition_count(&self) -> usize {
        let now = self.position();
        let window = (now.halfmove_clock() as usize).min(self.positions.len() - 1);
        self.positions[self.positions.len() - 1 - window..]
            .iter()
            .rev()
            .step_by(2)
            .filter(|p| same_position(p, now))
            .count()
    }

    /// The outcome, if the game is over under its rules (or was ended by a claim or by
    /// [`Game::end`]). Checkmate comes first: mate on the hundredth half-move wins.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(ended) = &self.ended {
            return Some(ended.clone());
        }
        let pos = self.position();
        if let Some(owner) = self.rules.marked_pawn {
            if self.marked.last() == Some(&None) {
                return Some(Outcome::win(!owner, Termination::MarkedPawnCaptured));
            }
        }
        let stuck = match self.rules.marked_pawn {
            None => !pos.has_legal_moves(),
            Some(_) => self.legal_moves().is_empty(),
        };
        if stuck {
            if pos.is_check() {
                // The marked pawn's owner mates with it alone.
                if self.rules.marked_pawn == Some(!pos.turn()) {
                    let by_marked = self.moves.last().is_some_and(|mv| {
                        self.marked_pawn() == Some(mv.to) && mv.role == Role::Pawn
                    });
                    if !by_marked {
                        return Some(Outcome::win(pos.turn(), Termination::MateByUnmarkedMan));
                    }
                }
                return Some(Outcome::win(!pos.turn(), Termination::Checkmate));
            }
            return Some(match self.rules.stalemate {
                StalemateRule::Draw => Outcome::draw(Termination::Stalemate),
                StalemateRule::WinForStalematedSide => {
                    Outcome::win(pos.turn(), Termination::Stalemate)
                }
            });
        }
        if is_insufficient_material(pos, self.rules.insufficient_material) {
            return Some(Outcome::draw(Termination::InsufficientMaterial));
        }
        if pos.halfmove_clock() >= 150 {
            return Some(Outcome::draw(Termination::SeventyFiveMoves));
        }
        let repetitions = self.repetition_count();
        if repetitions >= 5 {
            return Some(Outcome::draw(Termination::FivefoldRepetition));
        }
        if self.rules.fifty_moves == DrawApplication::Automatic && pos.halfmove_clock() >= 100 {
            return Some(Outcome::draw(Termination::FiftyMoves));
        }
        if self.rules.repetition == DrawApplication::Automatic && repetitions >= 3 {
            return Some(Outcome::draw(Termination::ThreefoldRepetition));
        }
        None
    }

    /// The draw a player could claim now, under claim-only rules (or that automatic rules
    /// have already applied).
    pub fn claimable_draw(&self) -> Option<Termination> {
        if self.position().is_checkmate() {
            return None;
        }
        if self.repetition_count() >= 3 {
            Some(Termination::ThreefoldRepetition)
        } else if self.position().halfmove_clock() >= 100 {
            Some(Termination::FiftyMoves)
        } else {
            None
        }
    }

    /// Ends the game by a valid claim; returns the outcome, or `None` if nothing is claimable.
    pub fn claim_draw(&mut self) -> Option<Outcome> {
        let termination = self.claimable_draw()?;
        let outcome = Outcome::draw(termination);
        self.ended = Some(outcome.clone());
        Some(outcome)
    }

    /// Ends the game for a reason outside the board (time, crash, adjudication).
    pub fn end(&mut self, outcome: Outcome) {
        self.ended = Some(outcome);
    }
}

fn same_position(a: &Position, b: &Position) -> bool {
    a.hash() == b.hash()
        && a.board() == b.board()
        && a.turn() == b.turn()
        && a.castling() == b.castling()
        && a.ep_square() == b.ep_square()
}

/// Whether the material left cannot lead to mate under the given definition.
pub fn is_insufficient_material(pos: &Position, rule: InsufficientMaterial) -> bool {
    let board = pos.board();
    let heavy = board.by_role(Role::Pawn) | board.by_role(Role::Rook) | board.by_role(Role::Queen);
    if heavy.any() {
        return false;
    }
    let knights = board.by_role(Role::Knight);
    let bishops = board.by_role(Role::Bishop);
    let minors = knights | bishops;
    if minors.count() <= 1 {
        return true;
    }
    // Only bishops, all on one colour of square: no mate is possible whoever owns them.
    if knights.is_empty()
        && (bishops.is_subset_of(Bitboard::LIGHT_SQUARES)
            || bishops.is_subset_of(Bitboard::DARK_SQUARES))
    {
        return true;
    }
    if rule == InsufficientMaterial::Wide && bishops.is_empty() && knights.count() == 2 {
        // K+N+N v K: mate exists but cannot be forced.
        return Color::ALL.iter().any(|&c| board.by_color(c).count() == 1);
    }
    false
}

/// The standard handicap openings of the classical era.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Odds {
    /// Black's f-pawn removed; White moves first.
    PawnAndMove,
    /// Black's f-pawn removed; White makes two moves before Black's first.
    PawnAndTwoMoves,
    /// White's queen's knight (b1) removed.
    Knight,
    /// White's queen's rook (a1) removed, with its castling right.
    Rook,
    /// White's queen removed.
    Queen,
}

impl Odds {
    pub const ALL: [Odds; 5] = [
        Odds::PawnAndMove,
        Odds::PawnAndTwoMoves,
        Odds::Knight,
        Odds::Rook,
        Odds::Queen,
    ];

    /// The name used in configs: `pawn-and-move`, `pawn-and-two-moves`, `knight`, `rook`, `queen`.
    pub fn name(self) -> &'static str {
        match self {
            Odds::PawnAndMove => "pawn-and-move",
            Odds::PawnAndTwoMoves => "pawn-and-two-moves",
            Odds::Knight => "knight",
            Odds::Rook => "rook",
            Odds::Queen => "queen",
        }
    }

    pub fn from_name(name: &str) -> Option<Odds> {
        Odds::ALL.into_iter().find(|odds| odds.name() == name)
    }

    /// The starting position with the odds given. For pawn and two moves, White's extra move
    /// is played by the game's driver: after White's first move, pass Black's turn with
    /// [`Position::play_null`].
    pub fn position(self) -> Position {
        let mut setup = Setup::starting();
        let removed: Square = match self {
            Odds::PawnAndMove | Odds::PawnAndTwoMoves => Square::F7,
            Odds::Knight => Square::B1,
            Odds::Rook => Square::A1,
            Odds::Queen => Square::D1,
        };
        setup.board.take(removed);
        if self == Odds::Rook {
            setup
                .castling
                .clear(Color::White, crate::CastlingSide::QueenSide);
        }
        Position::from_setup(&setup).expect("odds positions are legal")
    }

    /// How many moves White plays before Black's first.
    pub fn white_opening_moves(self) -> u32 {
        if self == Odds::PawnAndTwoMoves {
            2
        } else {
            1
        }
    }

    /// The side of the player who gives the odds in [`Odds::position`]: "he that gives a piece
    /// is supposed to have the move" (White, short of the piece), while a pawn is given with
    /// the move, or two (Black, short of the king's bishop's pawn).
    pub fn giver(self) -> Color {
        match self {
            Odds::PawnAndMove | Odds::PawnAndTwoMoves => Color::Black,
            Odds::Knight | Odds::Rook | Odds::Queen => Color::White,
        }
    }

    /// The positions a game at these odds starts from, the receiver's extra moves played: one
    /// position for most odds; for pawn and two moves, every first move White can make,
    /// followed by White to move again ("two moves in succession").
    pub fn starts(self) -> Vec<Position> {
        let start = self.position();
        if self != Odds::PawnAndTwoMoves {
            return vec![start];
        }
        start
            .legal_moves()
            .into_iter()
            .filter_map(|mv| {
                let mut after = start;
                after.play_unchecked(mv);
                // Black passes: never in check after White's first move from the start.
                after.play_null()
            })
            .collect()
    }
}
