//! The marked pawn odds as a rule set: perft under its rules against an independent oracle
//! (python-chess with the same rules, `scripts/marked-pawn-oracle.py`, whose output these
//! counts are), and its game ends: the marked pawn taken, a mate by another man, a promotion
//! refused.

use arbiter_rules::uci::parse_uci_move;
use arbiter_rules::{Color, Game, Outcome, Position, RuleSet, Square, Termination};

fn marked(color: Color) -> RuleSet {
    RuleSet {
        marked_pawn: Some(color),
        ..RuleSet::default()
    }
}

/// `scripts/marked-pawn-oracle.py`'s counts.
const ORACLE: &[(&str, Square, &[u64])] = &[
    (
        "3k4/5P2/8/8/8/8/8/4K3 w - - 0 1",
        Square::F7,
        &[5, 20, 136, 918],
    ),
    (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        Square::F2,
        &[48, 2039, 97862],
    ),
    (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        Square::F2,
        &[20, 400, 8902, 197281],
    ),
    (
        "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR b KQkq - 0 3",
        Square::F2,
        &[31, 1014, 30883, 998238],
    ),
    (
        "8/2k2P2/8/8/8/8/6p1/4K3 w - - 0 1",
        Square::F7,
        &[4, 48, 295, 3576],
    ),
];

#[test]
fn perft_under_the_marked_pawn_matches_the_oracle() {
    for &(fen, square, counts) in ORACLE {
        let start = Position::from_fen(fen).unwrap();
        let game = Game::with_marked_pawn(start, marked(Color::White), square);
        for (depth, &count) in counts.iter().enumerate() {
            assert_eq!(
                game.perft(depth as u32 + 1),
                count,
                "{fen} at {}",
                depth + 1
            );
        }
    }
}

fn play(game: &mut Game, moves: &[&str]) {
    for text in moves {
        let mv = parse_uci_move(game.position(), text).unwrap();
        game.play(mv).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

#[test]
fn the_marked_pawn_taken_loses() {
    let mut game = Game::new(Position::starting(), marked(Color::White));
    assert_eq!(game.marked_pawn(), Some(Square::F2));
    play(&mut game, &["e2e4", "e7e5", "g1f3", "d8h4", "f3e5"]);
    assert_eq!(game.outcome(), None);
    play(&mut game, &["h4f2"]);
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::Black, Termination::MarkedPawnCaptured))
    );
    assert_eq!(game.marked_pawn(), None);
}

#[test]
fn only_the_marked_pawn_mates_and_it_never_promotes() {
    // Fool's mate reversed: White (the owner) mates with the queen, and loses.
    let mut game = Game::new(Position::starting(), marked(Color::White));
    play(&mut game, &["e2e4", "f7f6", "d2d4", "g7g5", "d1h5"]);
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::Black, Termination::MateByUnmarkedMan))
    );
    // The same mate by the other side is a mate.
    let mut game = Game::new(Position::starting(), marked(Color::Black));
    play(&mut game, &["e2e4", "f7f6", "d2d4", "g7g5", "d1h5"]);
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::White, Termination::Checkmate))
    );
    // The marked pawn mates: a win.
    let start = Position::from_fen("7k/5K1p/6P1/8/8/8/8/8 w - - 0 1").unwrap();
    let g6 = Square::from_ascii(b"g6").unwrap();
    let mut game = Game::with_marked_pawn(start, marked(Color::White), g6);
    play(&mut game, &["g6g7"]);
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::White, Termination::Checkmate))
    );
    // It may not promote: refused, and not among the legal moves.
    let start = Position::from_fen("3k4/5P2/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    let mut game = Game::with_marked_pawn(start, marked(Color::White), Square::F7);
    let promotion = parse_uci_move(game.position(), "f7f8q").unwrap();
    assert!(!game.legal_moves().contains(&promotion));
    assert!(game.play(promotion).is_err());
}
