//! The game-ending rules, each with cases that must end the game and cases that must not.

use arbiter_rules::san::parse_san;
use arbiter_rules::{
    is_insufficient_material, Color, DrawApplication, Game, InsufficientMaterial, Odds, Outcome,
    Position, RuleSet, StalemateRule, Termination,
};

fn game_from(fen: &str, rules: RuleSet) -> Game {
    Game::new(Position::from_fen(fen).unwrap(), rules)
}

/// Plays SAN moves, asserting the game is not over before the last one.
fn play(game: &mut Game, sans: &str) {
    for san in sans.split_whitespace() {
        assert_eq!(game.outcome(), None, "game ended before {san}");
        let mv = parse_san(game.position(), san).unwrap();
        game.play(mv).unwrap();
    }
}

#[test]
fn threefold_repetition_by_knight_shuffle() {
    let mut game = Game::standard();
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
    assert_eq!(game.outcome(), None);
    assert_eq!(game.repetition_count(), 2); // the position after 1...Nf6 is about to come back
    play(&mut game, "Ng8");
    assert_eq!(game.repetition_count(), 3);
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::ThreefoldRepetition))
    );
}

#[test]
fn repetition_that_only_looks_like_one_because_en_passant_was_possible() {
    // After e2-e4 Black could capture en passant; after the shuffles the same placement returns
    // without that possibility, so it is a different position the first time.
    let start = "4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1";
    let mut game = game_from(start, RuleSet::default());
    // Each shuffle takes a different route so that only the position after e4 comes back.
    play(&mut game, "e4 Kd8 Nf3 Ke8 Ng1 Kf8 Nh3 Ke8 Ng1");
    assert_eq!(
        game.repetition_count(),
        2,
        "the first occurrence had a legal en-passant capture"
    );
    assert_eq!(game.outcome(), None);
    play(&mut game, "Kd7 Ne2 Ke8 Ng1");
    assert_eq!(game.repetition_count(), 3);
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::ThreefoldRepetition))
    );
}

#[test]
fn en_passant_that_is_not_legal_does_not_make_a_position_different() {
    // The white rook on d1 pins the d4 pawn to the king on d8: dxe3 would leave the d-file.
    let start = "3k4/8/8/8/3p4/8/4P3/3RK1N1 w - - 0 1";
    let mut game = game_from(start, RuleSet::default());
    play(&mut game, "e4");
    assert_eq!(
        game.position().ep_square(),
        None,
        "the d4 pawn is pinned: no legal en passant"
    );
    play(&mut game, "Kc8 Nf3 Kd8 Ng1 Kc8 Nf3 Kd8");
    assert_eq!(game.outcome(), None);
    play(&mut game, "Ng1");
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::ThreefoldRepetition))
    );
}

#[test]
fn fifty_moves() {
    let mut game = game_from("4k3/8/8/8/8/8/8/R3K3 w - - 98 70", RuleSet::default());
    play(&mut game, "Ra2");
    assert_eq!(
        game.outcome(),
        None,
        "99 half-moves are not yet fifty moves"
    );
    play(&mut game, "Kd7");
    assert_eq!(game.outcome(), Some(Outcome::draw(Termination::FiftyMoves)));
    // A capture or pawn move resets the count.
    let mut game = game_from("4k3/8/8/8/8/8/p7/R3K3 w - - 99 70", RuleSet::default());
    play(&mut game, "Rxa2");
    assert_eq!(game.position().halfmove_clock(), 0);
    assert_eq!(game.outcome(), None);
}

#[test]
fn mate_on_the_hundredth_half_move_beats_fifty_moves() {
    let mut game = game_from("7k/8/6K1/8/8/8/8/R7 w - - 99 80", RuleSet::default());
    play(&mut game, "Ra8#");
    assert_eq!(game.position().halfmove_clock(), 100);
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::White, Termination::Checkmate))
    );
}

#[test]
fn claim_only_rules_and_the_automatic_limits() {
    let mut game = Game::new(Position::starting(), RuleSet::fide_claims());
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8");
    assert_eq!(game.outcome(), None, "threefold needs a claim");
    assert_eq!(
        game.claimable_draw(),
        Some(Termination::ThreefoldRepetition)
    );
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
    assert_eq!(game.outcome(), None);
    play(&mut game, "Ng8");
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::FivefoldRepetition))
    );

    let mut game = Game::new(Position::starting(), RuleSet::fide_claims());
    assert_eq!(game.claim_draw(), None, "nothing to claim at the start");
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8");
    assert_eq!(
        game.claim_draw(),
        Some(Outcome::draw(Termination::ThreefoldRepetition))
    );
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::ThreefoldRepetition))
    );

    let mut game = game_from("4k3/8/8/8/8/8/8/R3K3 w - - 148 90", RuleSet::fide_claims());
    play(&mut game, "Ra2");
    assert_eq!(game.outcome(), None, "fifty moves only allow a claim");
    assert_eq!(game.claimable_draw(), Some(Termination::FiftyMoves));
    play(&mut game, "Kd7");
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::SeventyFiveMoves))
    );
}

#[test]
fn checkmate_and_stalemate() {
    let mut game = Game::standard();
    play(&mut game, "f3 e5 g4 Qh4#");
    assert_eq!(
        game.outcome(),
        Some(Outcome::win(Color::Black, Termination::Checkmate))
    );

    let fen = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1";
    assert_eq!(
        game_from(fen, RuleSet::default()).outcome(),
        Some(Outcome::draw(Termination::Stalemate))
    );
    let english = RuleSet {
        stalemate: StalemateRule::WinForStalematedSide,
        ..RuleSet::default()
    };
    assert_eq!(
        game_from(fen, english).outcome(),
        Some(Outcome::win(Color::Black, Termination::Stalemate))
    );
    // Not stalemate: the same placement with White to move.
    assert_eq!(
        game_from("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1", RuleSet::default()).outcome(),
        None
    );
}

#[test]
fn insufficient_material() {
    let strict = InsufficientMaterial::Strict;
    let wide = InsufficientMaterial::Wide;
    let dead = |fen: &str, rule| is_insufficient_material(&Position::from_fen(fen).unwrap(), rule);
    assert!(dead("4k3/8/8/8/8/8/8/4K3 w - - 0 1", strict));
    assert!(dead("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", strict));
    assert!(dead("4k3/8/8/8/8/8/8/4KN2 w - - 0 1", strict));
    assert!(
        dead("4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", strict),
        "bishops on the same colour"
    );
    assert!(
        dead("4k3/8/8/8/8/8/1B6/B1B1K3 w - - 0 1", strict),
        "three bishops, all dark-squared"
    );
    assert!(
        !dead("4k1b1/8/8/8/8/8/8/2B1K3 w - - 0 1", strict),
        "opposite-coloured bishops can mate"
    );
    assert!(
        !dead("4k3/8/8/8/8/8/8/4KNN1 w - - 0 1", strict),
        "K+N+N v K is not dead"
    );
    assert!(
        dead("4k3/8/8/8/8/8/8/4KNN1 w - - 0 1", wide),
        "but it cannot force mate"
    );
    assert!(
        !dead("4k3/8/8/8/8/8/8/4KNN1 w - - 0 1", wide)
            || !dead("4kn2/8/8/8/8/8/8/4KN2 w - - 0 1", wide)
    );
    assert!(
        !dead("4kn2/8/8/8/8/8/8/4KB2 w - - 0 1", strict),
        "K+B v K+N has a helpmate"
    );
    assert!(!dead("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", strict));
    assert!(!dead("4k3/8/8/8/8/8/8/4KR2 w - - 0 1", wide));
    let game = game_from("4k3/8/8/8/8/8/8/4KN2 b - - 0 1", RuleSet::default());
    assert_eq!(
        game.outcome(),
        Some(Outcome::draw(Termination::InsufficientMaterial))
    );
    let rules = RuleSet {
        insufficient_material: wide,
        fifty_moves: DrawApplication::Automatic,
        ..RuleSet::default()
    };
    assert_eq!(
        game_from("4k3/8/8/8/8/8/8/4KNN1 b - - 0 1", rules).outcome(),
        Some(Outcome::draw(Termination::InsufficientMaterial))
    );
    assert_eq!(
        game_from("4k3/8/8/8/8/8/8/4KNN1 b - - 0 1", RuleSet::default()).outcome(),
        None
    );
}

#[test]
fn odds_positions() {
    let fens = [
        (
            Odds::PawnAndMove,
            "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ),
        (
            Odds::PawnAndTwoMoves,
            "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ),
        (
            Odds::Knight,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1",
        ),
        (
            Odds::Rook,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w Kkq - 0 1",
        ),
        (
            Odds::Queen,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1",
        ),
    ];
    for (odds, fen) in fens {
        assert_eq!(odds.position().fen(), fen, "{odds:?}");
        assert_eq!(Odds::from_name(odds.name()), Some(odds));
    }
    assert_eq!(Odds::PawnAndTwoMoves.white_opening_moves(), 2);
    // White's second opening move: pass Black's turn.
    let mut pos = Odds::PawnAndTwoMoves.position();
    pos.play_unchecked(parse_san(&pos, "e4").unwrap());
    let pos = pos.play_null().unwrap();
    assert_eq!(pos.turn(), Color::White);
    assert!(parse_san(&pos, "d4").is_ok());
}
