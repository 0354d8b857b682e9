//! Every rule `Position::from_setup` enforces, each with a FEN that breaks it and the field the
//! error must name, plus FEN syntax errors.

use arbiter_rules::{Color, FenError, Position, PositionError, Square};

fn err(fen: &str) -> PositionError {
    Position::from_fen(fen).expect_err(fen)
}

#[test]
fn kings() {
    assert_eq!(
        err("8/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::MissingKing(Color::Black)
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/8 w - - 0 1"),
        PositionError::MissingKing(Color::White)
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/3KK3 w - - 0 1"),
        PositionError::TooManyKings(Color::White)
    );
    assert!(err("4k3/8/8/8/8/8/8/3KK3 w - - 0 1")
        .to_string()
        .contains("field 1"));
}

#[test]
fn piece_counts_and_backrank_pawns() {
    assert_eq!(
        err("4k3/8/8/8/8/8/PPPPPPPP/P3K3 w - - 0 1"),
        PositionError::TooManyPawns(Color::White)
    );
    assert_eq!(
        err("QQQQk3/QQQQ4/8/8/8/8/QQQQQQQQ/4K3 w - - 0 1"),
        PositionError::TooManyPieces(Color::White)
    );
    assert_eq!(
        err("4k2P/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::PawnOnBackrank(Square::H8)
    );
    assert_eq!(
        err("4k3/8/8/8/8/8/8/p3K3 w - - 0 1"),
        PositionError::PawnOnBackrank(Square::A1)
    );
}

#[test]
fn side_not_to_move_in_check() {
    let e = err("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1");
    assert_eq!(e, PositionError::OppositeCheck(Color::White));
    assert!(e.to_string().contains("field 2"), "{e}");
    // The same placement with Black to move is a legal check.
    assert!(Position::from_fen("4k3/4Q3/8/8/8/8/8/4K3 b - - 0 1")
        .unwrap()
        .is_check());
}

#[test]
fn impossible_checks() {
    // Two knights.
    assert!(matches!(
        err("4k3/8/3N1N2/8/8/8/8/4K3 b - - 0 1"),
        PositionError::ImpossibleCheck(_)
    ));
    // Three checkers.
    assert!(matches!(
        err("4k3/3P4/5N2/8/8/8/8/4R1K1 b - - 0 1"),
        PositionError::ImpossibleCheck(_)
    ));
    // Two sliders on one line through the king.
    assert!(matches!(
        err("R3k2R/8/8/8/8/8/8/4K3 b - - 0 1"),
        PositionError::ImpossibleCheck(_)
    ));
    // A legal double check: rook discovered plus knight.
    assert!(
        Position::from_fen("4k3/8/3N4/8/8/8/8/4RK2 b - - 0 1")
            .unwrap()
            .checkers()
            .count()
            == 2
    );
    // Check that the recorded double push cannot explain: e4 was pushed, but a rook on a8 checks.
    assert!(matches!(
        err("R3k3/8/8/8/4P3/8/8/7K b - e3 0 1"),
        PositionError::ImpossibleCheck(_)
    ));
    // The pushed pawn itself gives the check: fine.
    assert!(Position::from_fen("8/8/8/8/3kP3/8/8/7K b - e3 0 1").is_ok());
}

#[test]
fn castling_rights_need_king_and_rook_home() {
    let e = err("4k3/8/8/8/8/8/8/4K3 w K - 0 1");
    assert!(
        matches!(e, PositionError::CastlingRights { right: 'K', .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("field 3"), "{e}");
    assert!(matches!(
        err("r3k3/8/8/8/8/8/8/4K3 w kq - 0 1"),
        PositionError::CastlingRights { right: 'k', .. }
    ));
    assert!(matches!(
        err("r2k3r/8/8/8/8/8/8/4K3 w q - 0 1"),
        PositionError::CastlingRights { right: 'q', .. }
    ));
    assert!(Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").is_ok());
}

#[test]
fn en_passant_square_must_be_real() {
    // Wrong rank for the side to move.
    assert!(matches!(
        err("4k3/8/8/8/4P3/8/8/4K3 w - e3 0 1"),
        PositionError::EnPassant { .. }
    ));
    // No pawn that could have been pushed.
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 b - e3 0 1"),
        PositionError::EnPassant { .. }
    ));
    // The square it came from is occupied.
    assert!(matches!(
        err("4k3/8/8/8/4P3/8/4N3/4K3 b - e3 0 1"),
        PositionError::EnPassant { .. }
    ));
    // Halfmove clock not reset.
    let e = err("4k3/8/8/8/4P3/8/8/4K3 b - e3 3 1");
    assert!(e.to_string().contains("field 4"), "{e}");
    // Real but not capturable: accepted, and dropped from the position (and its FEN).
    let pos = Position::from_fen("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1").unwrap();
    assert_eq!(pos.ep_square(), None);
    assert_eq!(pos.fen(), "4k3/8/8/8/4P3/8/8/4K3 b - - 0 1");
    // Real and capturable: kept.
    let pos = Position::from_fen("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1").unwrap();
    assert_eq!(pos.ep_square(), Some("e3".parse().unwrap()));
}

#[test]
fn counters() {
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 151 80"),
        PositionError::HalfmoveClock(151)
    ));
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - 0 0"),
        PositionError::Fen(FenError::FullmoveNumber(_))
    ));
    assert!(matches!(
        err("4k3/8/8/8/8/8/8/4K3 w - - x 1"),
        PositionError::Fen(FenError::HalfmoveClock(_))
    ));
    // EPD-style FEN without counters defaults to 0 1.
    assert_eq!(
        Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - -")
            .unwrap()
            .fen(),
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
    );
}

#[test]
fn syntax_errors_name_the_field() {
    let cases: [(&str, &str); 9] = [
        ("", "empty"),
        ("8/8/8 w - - 0 1", "field 1"),
        ("4k3/8/8/8/8/8/8/4K3/8 w - - 0 1", "field 1"),
        ("4k3/9/8/8/8/8/8/4K3 w - - 0 1", "field 1"),
        ("4k3/8/8/8/8/8/8/4K4 w - - 0 1", "field 1"),
        ("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "field 2"),
        ("4k3/8/8/8/8/8/8/4K3 w KX - 0 1", "field 3"),
        ("4k3/8/8/8/8/8/8/4K3 w - e4 0 1", "field 4"),
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", "fields"),
    ];
    for (fen, needle) in cases {
        let e = err(fen).to_string();
        assert!(e.contains(needle), "{fen:?}: {e}");
    }
}
