//! Handicap starts: the mirror that puts the odds on the other colour, and pawn and two moves'
//! starts. The mirror is checked by an independent oracle, the move tree: a position and its
//! mirror have the same perft counts.

use arbiter_rules::perft::perft;
use arbiter_rules::{Color, Odds, Position, Square};

const POSITIONS: [&str; 5] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
];

#[test]
fn a_mirrored_position_has_the_same_move_tree() {
    for fen in POSITIONS {
        let pos = Position::from_fen(fen).unwrap();
        let mirror = pos.mirrored();
        assert_ne!(mirror.turn(), pos.turn(), "{fen}");
        assert_eq!(mirror.mirrored(), pos, "twice is the identity: {fen}");
        for depth in 1..=3 {
            assert_eq!(
                perft(&mirror, depth),
                perft(&pos, depth),
                "{fen} at {depth}"
            );
        }
    }
}

#[test]
fn odds_starts_give_the_handicap_to_the_giver() {
    let knight = Odds::Knight.position();
    assert_eq!(Odds::Knight.giver(), Color::White);
    assert!(knight.board().piece_at(Square::B1).is_none());
    // On the other colour: Black lacks the queen's knight and, having the move, moves first.
    let mirrored = knight.mirrored();
    assert!(mirrored.board().piece_at(Square::B8).is_none());
    assert!(mirrored.board().piece_at(Square::B1).is_some());
    assert_eq!(mirrored.turn(), Color::Black);
    assert_eq!(Odds::PawnAndMove.giver(), Color::Black);
    assert_eq!(Odds::Knight.starts(), vec![knight]);

    // Pawn and two moves: White's first move made, White to move again, Black's f-pawn gone.
    let starts = Odds::PawnAndTwoMoves.starts();
    assert_eq!(starts.len(), 20);
    for start in &starts {
        assert_eq!(start.turn(), Color::White);
        assert!(start.board().piece_at(Square::F7).is_none());
        assert_eq!(start.board().occupied().count(), 31);
    }
    let distinct: std::collections::HashSet<String> = starts.iter().map(|p| p.fen()).collect();
    assert_eq!(distinct.len(), 20);
}
