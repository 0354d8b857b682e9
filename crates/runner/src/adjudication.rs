//! Ending games early by the engines' own scores, as cutechess's `-draw`, `-resign` and
//! `-maxmoves` do, with the same semantics so that existing configurations mean the same thing.
//!
//! The counting is cutechess's (`GameAdjudicator`), described on [`Adjudicator`]. fastchess
//! agrees on the draw count (restarted by captures and pawn moves, the restarting move counted)
//! and on one-sided resign, and differs in four places where arbiter keeps cutechess's reading:
//! - `movenumber`: fastchess compares the position's own move number minus one (from the
//!   FEN's counter), cutechess the plies played since the start position halved. They agree
//!   for books whose positions say move 1 (EPD lines without counters, PGN games from the
//!   initial position); a FEN at move 20 counts 19 moves more in fastchess.
//! - `twosided` resign: fastchess counts one run of `2 * movecount` plies with a score of at
//!   least `score` either way and gives the game against the last mover if its score is
//!   negative; cutechess wants the loser's own `movecount` moves at `-score` or worse and the
//!   winner's own `movecount` moves at `+score` or better.
//! - `-maxmoves`: fastchess counts engine moves after the book, cutechess every ply from the
//!   start position.
//! - `movenumber=0`: cutechess then never adjudicates a draw; arbiter, like fastchess, counts
//!   from the first move.

use arbiter_rules::{Color, Outcome, Termination};

use crate::uci::Score;

/// `-draw movenumber=N movecount=C score=S`: from move N on, if both engines' scores stay
/// within S centipawns of zero for C consecutive moves each, with no capture or pawn move
/// among them (but the first), the game is drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DrawRule {
    pub movenumber: u32,
    pub movecount: u32,
    pub score: i32,
}

/// `-resign movecount=C score=S [twosided=true]`: an engine whose score is S centipawns or
/// more below zero for C consecutive moves loses; with `twosided`, its opponent must also see
/// itself S or more ahead over the same moves.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResignRule {
    pub movecount: u32,
    pub score: i32,
    #[serde(default)]
    pub twosided: bool,
}

/// All adjudication settings of a run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Adjudication {
    #[serde(default)]
    pub draw: Option<DrawRule>,
    #[serde(default)]
    pub resign: Option<ResignRule>,
    /// `-maxmoves N`: a game reaching N full moves is drawn.
    #[serde(default)]
    pub maxmoves: Option<u32>,
}

/// The running counts of one game, kept as cutechess's `GameAdjudicator` keeps them (fastchess
/// counts the same way; the README's table of differences lists where it does not).
///
/// - **Draw**: one count of consecutive plies, both sides' moves, whose score is within the
///   window. A capture or a pawn move (the fifty-move counter back to zero) starts the count
///   again, and that move's own score is its first ply. The game is drawn when the count reaches
///   `2 * movecount` and at least `movenumber` full moves have been played from the start
///   position, counted as `plies / 2` with book moves included.
/// - **Resign**: per side, consecutive own moves at `-score` or worse. The side whose count
///   reaches `movecount` loses on that move; with `twosided`, only if its opponent's own last
///   `movecount` moves all scored `+score` or better.
/// - A move without a score (an engine that prints none) breaks the draw count and the mover's
///   resign counts, as a book move does in cutechess.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Adjudication,
    /// Consecutive plies with |score| <= draw score since the last irreversible move.
    draw_plies: u32,
    /// Consecutive own moves with score <= -resign score, per side.
    losing_moves: [u32; 2],
    /// Consecutive own moves with score >= resign score, per side (for two-sided resign).
    winning_moves: [u32; 2],
}

/// Cutechess's reason strings for adjudicated games.
pub const DRAW_BY_SCORE: &str = "draw score";
pub const RESIGN_BY_SCORE: &str = "resign score";
pub const MAXIMUM_MOVES: &str = "maximum moves";

/// What the adjudicator is told of each engine move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MovePlayed {
    pub mover: Color,
    /// The score the mover reported with the move; `None` when it printed none.
    pub score: Option<Score>,
    /// Plies from the game's start position to the position after the move, book moves
    /// included (cutechess's `plyCount`).
    pub plies: u32,
    /// A capture or a pawn move: the fifty-move counter is back to zero.
    pub irreversible: bool,
}

impl Adjudicator {
    pub fn new(rules: Adjudication) -> Adjudicator {
        Adjudicator {
            rules,
            draw_plies: 0,
            losing_moves: [0; 2],
            winning_moves: [0; 2],
        }
    }

    /// Looks at an engine move just played (book moves are not shown: they all precede the
    /// engines' moves) and returns the adjudicated outcome, if any. Draw is considered before
    /// resign and game length last, as cutechess does; the caller lets the rules' own verdict
    /// (mate, stalemate ...) take precedence.
    pub fn after_move(&mut self, played: MovePlayed) -> Option<Outcome> {
        let side = played.mover.index();
        if played.irreversible {
            self.draw_plies = 0;
        }
        match played.score.map(Score::centipawns) {
            None => {
                self.draw_plies = 0;
                self.losing_moves[side] = 0;
                self.winning_moves[side] = 0;
            }
            Some(cp) => {
                if let Some(draw) = self.rules.draw {
                    if cp.abs() <= draw.score {
                        self.draw_plies += 1
                    } else {
                        self.draw_plies = 0
                    }
                    if played.plies / 2 >= draw.movenumber && self.draw_plies >= 2 * draw.movecount
                    {
                        return Some(Outcome::draw(Termination::Adjudication(
                            DRAW_BY_SCORE.into(),
                        )));
                    }
                }
                if let Some(resign) = self.rules.resign {
                    if cp <= -resign.score {
                        self.losing_moves[side] += 1
                    } else {
                        self.losing_moves[side] = 0
                    }
                    if cp >= resign.score {
                        self.winning_moves[side] += 1
                    } else {
                        self.winning_moves[side] = 0
                    }
                    let opponent = (!played.mover).index();
                    if self.losing_moves[side] >= resign.movecount
                        && (!resign.twosided || self.winning_moves[opponent] >= resign.movecount)
                    {
                        return Some(Outcome::win(
                            !played.mover,
                            Termination::Adjudication(RESIGN_BY_SCORE.into()),
                        ));
                    }
                }
            }
        }
        if let Some(maxmoves) = self.rules.maxmoves {
            if played.plies >= 2 * maxmoves {
                return Some(Outcome::draw(Termination::Adjudication(
                    MAXIMUM_MOVES.into(),
                )));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One engine move: its score and whether it was a capture or a pawn move.
    #[derive(Copy, Clone)]
    struct Ply(Option<i32>, bool);

    /// A quiet move with score `cp`.
    fn q(cp: i32) -> Ply {
        Ply(Some(cp), false)
    }

    /// A capture or pawn move with score `cp`.
    fn x(cp: i32) -> Ply {
        Ply(Some(cp), true)
    }

    fn quiet(cps: &[i32]) -> Vec<Ply> {
        cps.iter().map(|&cp| q(cp)).collect()
    }

    /// Feeds the moves that follow ply `start` of a game from the initial position (White made
    /// the odd plies) and returns the index of the move adjudicated, with the outcome.
    fn feed(adj: &mut Adjudicator, moves: &[Ply], start: u32) -> Option<(usize, Outcome)> {
        moves
            .iter()
            .enumerate()
            .find_map(|(i, &Ply(cp, irreversible))| {
                let plies = start + i as u32 + 1;
                let mover = if plies % 2 == 1 {
                    Color::White
                } else {
                    Color::Black
                };
                adj.after_move(MovePlayed {
                    mover,
                    score: cp.map(Score::Cp),
                    plies,
                    irreversible,
                })
                .map(|outcome| (i, outcome))
            })
    }

    fn draw_rule(movenumber: u32, movecount: u32, score: i32) -> Adjudication {
        Adjudication {
            draw: Some(DrawRule {
                movenumber,
                movecount,
                score,
            }),
            ..Default::default()
        }
    }

    fn resign_rule(movecount: u32, score: i32, twosided: bool) -> Adjudication {
        Adjudication {
            resign: Some(ResignRule {
                movecount,
                score,
                twosided,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn draw_needs_movecount_moves_from_both_after_movenumber() {
        let rules = draw_rule(40, 4, 10);
        // Eight quiet plies from ply 80 (move 41): drawn at the eighth.
        let (at, outcome) = feed(
            &mut Adjudicator::new(rules),
            &quiet(&[0, 5, -3, 10, 2, -10, 0, 1]),
            80,
        )
        .unwrap();
        assert_eq!(at, 7);
        assert_eq!(
            outcome,
            Outcome::draw(Termination::Adjudication(DRAW_BY_SCORE.into()))
        );
        // The same before move 40: no draw.
        assert!(feed(&mut Adjudicator::new(rules), &quiet(&[0; 8]), 10).is_none());
        // A score outside the window resets the count.
        assert!(feed(
            &mut Adjudicator::new(rules),
            &quiet(&[0, 0, 0, 0, 0, 11, 0, 0, 0, 0]),
            80
        )
        .is_none());
        // A move without a score resets it too.
        let mut moves = quiet(&[0; 10]);
        moves[4] = Ply(None, false);
        assert!(feed(&mut Adjudicator::new(rules), &moves, 80).is_none());
    }

    #[test]
    fn a_capture_or_a_pawn_move_restarts_the_draw_count() {
        // `-draw movenumber=34 movecount=8 score=20`, the fastchess README's setting. Sixteen
        // quiet plies within the window would draw; a capture at the fourth restarts the count,
        // and the capture's own score is the first ply of the new count (cutechess resets, then
        // counts the move; fastchess the same).
        let rules = draw_rule(34, 8, 20);
        let straight = feed(&mut Adjudicator::new(rules), &quiet(&[0; 16]), 80).unwrap();
        assert_eq!(straight.0, 15);
        let mut moves = quiet(&[0; 30]);
        moves[3] = x(5);
        let (at, outcome) = feed(&mut Adjudicator::new(rules), &moves, 80).unwrap();
        assert_eq!(
            at,
            3 + 15,
            "sixteen plies counted from the capture, itself included"
        );
        assert_eq!(
            outcome,
            Outcome::draw(Termination::Adjudication(DRAW_BY_SCORE.into()))
        );
        // An irreversible move outside the window: the count starts after it.
        let mut moves = quiet(&[0; 30]);
        moves[3] = x(50);
        assert_eq!(
            feed(&mut Adjudicator::new(rules), &moves, 80).unwrap().0,
            4 + 15
        );
        // Pawn moves every few plies (a pawn ending shuffling forward) never let the count
        // reach sixteen: no draw, where the old count adjudicated at the sixteenth ply.
        let moves: Vec<Ply> = (0..60)
            .map(|i| if i % 10 == 9 { x(0) } else { q(0) })
            .collect();
        assert!(feed(&mut Adjudicator::new(rules), &moves, 80).is_none());
    }

    #[test]
    fn movenumber_counts_full_moves_played_as_cutechess_does() {
        // cutechess checks `plyCount / 2 >= movenumber` after the move: move 34 is complete
        // after ply 68 (Black's 34th move), not after White's 34th (ply 67).
        let rules = draw_rule(34, 1, 20);
        let (at, _) = feed(&mut Adjudicator::new(rules), &quiet(&[0; 20]), 60).unwrap();
        assert_eq!(60 + at as u32 + 1, 68);
    }

    #[test]
    fn resign_one_sided_counts_the_losers_own_consecutive_moves() {
        let rules = resign_rule(3, 600, false);
        // Black reports -700 on three consecutive moves: White wins at Black's third.
        let (at, outcome) = feed(
            &mut Adjudicator::new(rules),
            &quiet(&[650, -700, 20, -700, 30, -650]),
            20,
        )
        .unwrap();
        assert_eq!(at, 5);
        assert_eq!(
            outcome,
            Outcome::win(
                Color::White,
                Termination::Adjudication(RESIGN_BY_SCORE.into())
            )
        );
        // One better move in between resets the count.
        assert!(feed(
            &mut Adjudicator::new(rules),
            &quiet(&[0, -700, 0, -599, 0, -700, 0, -700]),
            20
        )
        .is_none());
        // Captures and pawn moves do not matter to resign counts.
        let moves = [q(0), x(-700), x(0), x(-700), q(0), x(-700)];
        assert_eq!(feed(&mut Adjudicator::new(rules), &moves, 20).unwrap().0, 5);
    }

    #[test]
    fn resign_two_sided_is_decided_on_the_losers_move() {
        let two = resign_rule(2, 600, true);
        // The winner does not agree: no adjudication.
        assert!(feed(
            &mut Adjudicator::new(two),
            &quiet(&[20, -700, 30, -700, 40, -700]),
            20
        )
        .is_none());
        // Black's count reaches two at ply 4, White's only at ply 5: cutechess adjudicates on
        // the loser's next move (ply 6), not on the winner's.
        let (at, outcome) = feed(
            &mut Adjudicator::new(two),
            &quiet(&[0, -700, 700, -700, 700, -700]),
            20,
        )
        .unwrap();
        assert_eq!(at, 5);
        assert_eq!(outcome.winner, Some(Color::White));
        // If the loser recovers on that move, nothing happens.
        assert!(feed(
            &mut Adjudicator::new(two),
            &quiet(&[0, -700, 700, -700, 700, -500]),
            20
        )
        .is_none());
    }

    #[test]
    fn maximum_moves() {
        let rules = Adjudication {
            maxmoves: Some(3),
            ..Default::default()
        };
        let moves = [Ply(None, false); 8];
        let (at, outcome) = feed(&mut Adjudicator::new(rules), &moves, 0).unwrap();
        assert_eq!(at, 5, "after ply 6, book moves included in the count");
        assert_eq!(
            outcome,
            Outcome::draw(Termination::Adjudication(MAXIMUM_MOVES.into()))
        );
        assert_eq!(feed(&mut Adjudicator::new(rules), &moves, 4).unwrap().0, 1);
    }

    #[test]
    fn mate_scores_count_as_decisive() {
        let mut adj = Adjudicator::new(resign_rule(1, 1000, false));
        let played = MovePlayed {
            mover: Color::White,
            score: Some(Score::Mate(-5)),
            plies: 30,
            irreversible: false,
        };
        assert_eq!(adj.after_move(played).unwrap().winner, Some(Color::Black));
        // And never as a quiet position.
        let mut adj = Adjudicator::new(draw_rule(0, 1, 20));
        let mate = MovePlayed {
            score: Some(Score::Mate(3)),
            ..played
        };
        assert_eq!(adj.after_move(mate), None);
        assert_eq!(adj.after_move(MovePlayed { plies: 31, ..mate }), None);
    }
}
