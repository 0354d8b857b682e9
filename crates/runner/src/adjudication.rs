//! Ending games early by the engines' own scores, as cutechess's `-draw`, `-resign` and
//! `-maxmoves` do, with the same semantics so that existing configurations mean the same thing.

use arbiter_rules::{Color, Outcome, Termination};

use crate::uci::Score;

/// `-draw movenumber=N movecount=C score=S`: from move N on, if both engines' scores stay
/// within S centipawns of zero for C consecutive moves each, the game is drawn.
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

/// The running counts of one game.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Adjudication,
    /// Consecutive plies with |score| <= draw score.
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

impl Adjudicator {
    pub fn new(rules: Adjudication) -> Adjudicator {
        Adjudicator {
            rules,
            draw_plies: 0,
            losing_moves: [0; 2],
            winning_moves: [0; 2],
        }
    }

    /// Takes the score the mover reported with the move just played (`None` for book moves
    /// and engines that print no score, which break every streak) and the number of plies
    /// played in the game. Returns the adjudicated outcome, if any. Draw is considered before
    /// resign and game length last, as cutechess does.
    pub fn after_move(
        &mut self,
        mover: Color,
        score: Option<Score>,
        plies_played: u32,
    ) -> Option<Outcome> {
        let side = mover.index();
        match score.map(Score::centipawns) {
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
                    let move_number = plies_played.div_ceil(2);
                    if move_number >= draw.movenumber && self.draw_plies >= 2 * draw.movecount {
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
                    let other = (!mover).index();
                    let loser_done = self.losing_moves[side] >= resign.movecount;
                    if loser_done
                        && (!resign.twosided || self.winning_moves[other] >= resign.movecount)
                    {
                        return Some(Outcome::win(
                            !mover,
                            Termination::Adjudication(RESIGN_BY_SCORE.into()),
                        ));
                    }
                    // Two-sided: the mover may be the one far ahead, confirming the other's loss.
                    if resign.twosided
                        && self.winning_moves[side] >= resign.movecount
                        && self.losing_moves[other] >= resign.movecount
                    {
                        return Some(Outcome::win(
                            mover,
                            Termination::Adjudication(RESIGN_BY_SCORE.into()),
                        ));
                    }
                }
            }
        }
        if let Some(maxmoves) = self.rules.maxmoves {
            if plies_played >= 2 * maxmoves {
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

    fn feed(
        adj: &mut Adjudicator,
        scores: &[(Color, Option<i32>)],
        start_ply: u32,
    ) -> Option<(usize, Outcome)> {
        for (i, &(mover, cp)) in scores.iter().enumerate() {
            if let Some(outcome) =
                adj.after_move(mover, cp.map(Score::Cp), start_ply + i as u32 + 1)
            {
                return Some((i, outcome));
            }
        }
        None
    }

    fn alternating(cps: &[i32]) -> Vec<(Color, Option<i32>)> {
        cps.iter()
            .enumerate()
            .map(|(i, &cp)| {
                (
                    if i % 2 == 0 {
                        Color::White
                    } else {
                        Color::Black
                    },
                    Some(cp),
                )
            })
            .collect()
    }

    #[test]
    fn draw_needs_movecount_moves_from_both_after_movenumber() {
        let rules = Adjudication {
            draw: Some(DrawRule {
                movenumber: 40,
                movecount: 4,
                score: 10,
            }),
            ..Default::default()
        };
        // Eight quiet plies starting at ply 80 (move 41): drawn at the eighth.
        let (at, outcome) = feed(
            &mut Adjudicator::new(rules),
            &alternating(&[0, 5, -3, 10, 2, -10, 0, 1]),
            80,
        )
        .unwrap();
        assert_eq!(at, 7);
        assert_eq!(
            outcome,
            Outcome::draw(Termination::Adjudication(DRAW_BY_SCORE.into()))
        );
        // The same before move 40: no draw.
        assert!(feed(&mut Adjudicator::new(rules), &alternating(&[0; 8]), 10).is_none());
        // A score outside the window resets the streak.
        assert!(feed(
            &mut Adjudicator::new(rules),
            &alternating(&[0, 0, 0, 0, 0, 11, 0, 0, 0, 0]),
            80
        )
        .is_none());
        // A move without a score (book) resets it too.
        let mut moves = alternating(&[0; 10]);
        moves[4].1 = None;
        assert!(feed(&mut Adjudicator::new(rules), &moves, 80).is_none());
    }

    #[test]
    fn resign_one_and_two_sided() {
        let rules = Adjudication {
            resign: Some(ResignRule {
                movecount: 3,
                score: 600,
                twosided: false,
            }),
            ..Default::default()
        };
        // Black reports -700 on three consecutive moves: White wins at Black's third.
        let (at, outcome) = feed(
            &mut Adjudicator::new(rules),
            &alternating(&[650, -700, 20, -700, 30, -650]),
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
        // One good move in between resets the count.
        assert!(feed(
            &mut Adjudicator::new(rules),
            &alternating(&[0, -700, 0, -599, 0, -700, 0, -700]),
            20
        )
        .is_none());

        let two = Adjudication {
            resign: Some(ResignRule {
                movecount: 3,
                score: 600,
                twosided: true,
            }),
            ..Default::default()
        };
        // The winner does not agree: no adjudication.
        assert!(feed(
            &mut Adjudicator::new(two),
            &alternating(&[20, -700, 30, -700, 40, -700]),
            20
        )
        .is_none());
        // Both agree: decided on the move that completes both streaks.
        let (at, outcome) = feed(
            &mut Adjudicator::new(two),
            &alternating(&[700, -700, 700, -700, 700, -700]),
            20,
        )
        .unwrap();
        assert_eq!(at, 5);
        assert_eq!(outcome.winner, Some(Color::White));
    }

    #[test]
    fn maximum_moves() {
        let rules = Adjudication {
            maxmoves: Some(3),
            ..Default::default()
        };
        let mut adj = Adjudicator::new(rules);
        for ply in 1..6 {
            assert_eq!(
                adj.after_move(
                    if ply % 2 == 1 {
                        Color::White
                    } else {
                        Color::Black
                    },
                    None,
                    ply
                ),
                None
            );
        }
        assert_eq!(
            adj.after_move(Color::Black, None, 6),
            Some(Outcome::draw(Termination::Adjudication(
                MAXIMUM_MOVES.into()
            )))
        );
    }

    #[test]
    fn mate_scores_count_as_decisive() {
        let rules = Adjudication {
            resign: Some(ResignRule {
                movecount: 1,
                score: 1000,
                twosided: false,
            }),
            ..Default::default()
        };
        let mut adj = Adjudicator::new(rules);
        assert_eq!(
            adj.after_move(Color::White, Some(Score::Mate(-5)), 30)
                .unwrap()
                .winner,
            Some(Color::Black)
        );
    }
}
