//! Property tests: every notation this crate writes reads back to the same thing, and no
//! parser panics on arbitrary text.

use std::collections::HashSet;

use arbiter_rules::epd::Epd;
use arbiter_rules::san::{parse_san, san_plus, San};
use arbiter_rules::uci::{move_to_uci, parse_uci_move};
use arbiter_rules::{Position, Setup};
use proptest::prelude::*;

const STARTS: [&str; 4] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

/// A position reached by a seeded random playout: varied, legal, and reproducible.
fn playout(start: usize, seed: u64, plies: usize) -> Position {
    let mut pos = Position::from_fen(STARTS[start]).unwrap();
    let mut state = seed | 1;
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        pos.play_unchecked(moves[(state % moves.len() as u64) as usize]);
    }
    pos
}

fn positions() -> impl Strategy<Value = Position> {
    (0..STARTS.len(), any::<u64>(), 0usize..120)
        .prop_map(|(s, seed, plies)| playout(s, seed, plies))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn fen_round_trips(pos in positions()) {
        let fen = pos.fen();
        let back = Position::from_fen(&fen).unwrap();
        prop_assert_eq!(back, pos);
        prop_assert_eq!(back.hash(), pos.hash());
        prop_assert_eq!(Setup::from_fen(&fen).unwrap().fen(), fen);
    }

    #[test]
    fn uci_round_trips(pos in positions()) {
        for mv in pos.legal_moves() {
            let text = move_to_uci(Some(mv));
            prop_assert_eq!(parse_uci_move(&pos, &text).unwrap(), mv);
        }
    }

    #[test]
    fn san_round_trips_and_is_unique(pos in positions()) {
        let mut seen = HashSet::new();
        for mv in pos.legal_moves() {
            let text = san_plus(&pos, mv);
            prop_assert!(seen.insert(text.clone()), "duplicate SAN {} in {}", text, pos.fen());
            prop_assert_eq!(parse_san(&pos, &text).unwrap(), mv, "{} in {}", text, pos.fen());
            let mut after = pos;
            after.play_unchecked(mv);
            prop_assert_eq!(text.ends_with('#'), after.is_checkmate());
            prop_assert_eq!(text.ends_with('+'), after.is_check() && !after.is_checkmate());
        }
    }

    #[test]
    fn epd_round_trips(pos in positions(), id in "[A-Za-z0-9 .]{0,12}") {
        let bm = pos.legal_moves().first().map(|mv| San::from_move(&pos, *mv).to_string());
        let mut line = format!("{} id \"{}\";", pos.to_setup().epd_fields(), id);
        if let Some(bm) = &bm {
            line.push_str(&format!(" bm {bm};"));
        }
        let epd = Epd::parse(&line).unwrap();
        prop_assert_eq!(epd.id(), Some(id.as_str()));
        prop_assert_eq!(Epd::parse(&epd.to_string()).unwrap(), epd.clone());
        if bm.is_some() {
            prop_assert_eq!(epd.moves("bm").unwrap(), vec![pos.legal_moves()[0]]);
        }
    }

    #[test]
    fn parsers_never_panic(text in "\\PC{0,90}") {
        let _ = Position::from_fen(&text);
        let _ = Epd::parse(&text);
        let _ = San::parse(&text);
        let pos = Position::starting();
        let _ = parse_san(&pos, &text);
        let _ = parse_uci_move(&pos, &text);
    }

    #[test]
    fn fen_like_garbage_never_panics(
        board in "[pnbrqkPNBRQK1-9/]{0,70}",
        turn in "[wbx]",
        castling in "[KQkq-]{1,5}",
        ep in "(-|[a-i][0-9])",
        clocks in "[0-9 ]{0,8}",
    ) {
        let fen = format!("{board} {turn} {castling} {ep} {clocks}");
        if let Ok(pos) = Position::from_fen(&fen) {
            // Whatever validates must survive move generation and a round trip.
            let _ = pos.legal_moves();
            prop_assert_eq!(Position::from_fen(&pos.fen()).unwrap(), pos);
        }
    }
}

#[test]
fn tolerant_san_reading() {
    let pos = Position::from_fen("r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1").unwrap();
    let cases = [
        ("O-O", "e1g1"),
        ("0-0", "e1g1"),
        ("O-O-O", "e1c1"),
        ("0-0-0+", "e1c1"),
        ("exd6", "e5d6"),
        ("exd6 e.p.", "e5d6"),
        ("exd6e.p.", "e5d6"),
        ("bxa8=Q+", "b7a8q"),
        ("bxa8Q", "b7a8q"),
        ("b8=N", "b7b8n"),
        ("b8N", "b7b8n"),
        ("b8(R)", "b7b8r"),
        ("Rxa8!?", "a1a8"),
        ("Kf1?!", "e1f1"),
        ("Ra1-a8", "a1a8"),
    ];
    for (san, uci) in cases {
        let mv = parse_san(&pos, san).unwrap_or_else(|e| panic!("{san}: {e}"));
        assert_eq!(move_to_uci(Some(mv)), uci, "{san}");
    }
    assert!(
        parse_san(&pos, "b8").is_err(),
        "a promotion needs its piece"
    );
    assert!(parse_san(&pos, "Nf3").is_err());
    assert!(parse_san(&pos, "e9").is_err());
}

#[test]
fn san_disambiguation_is_minimal() {
    // Knights on b1 and f1 differ by file, rooks on a1 and a5 by rank; three queens need both.
    let pos = Position::from_fen("4k3/8/8/R7/8/8/8/RN3NK1 w - - 0 1").unwrap();
    let san = |uci: &str| san_plus(&pos, parse_uci_move(&pos, uci).unwrap());
    assert_eq!(san("b1d2"), "Nbd2");
    assert_eq!(san("a1a3"), "R1a3");
    assert_eq!(san("a5a3"), "R5a3");
    let pos = Position::from_fen("k7/8/8/8/8/2Q1Q3/8/4Q1K1 w - - 0 1").unwrap();
    let san = |uci: &str| san_plus(&pos, parse_uci_move(&pos, uci).unwrap());
    assert_eq!(san("e3d2"), "Qe3d2");
    assert_eq!(san("e1d2"), "Q1d2");
    assert_eq!(san("c3d2"), "Qcd2");
    let ambiguous = parse_san(&pos, "Qd2").unwrap_err();
    assert!(ambiguous.to_string().contains("ambiguous"), "{ambiguous}");
}

#[test]
fn uci_errors() {
    let pos = Position::starting();
    assert!(parse_uci_move(&pos, "e2e5")
        .unwrap_err()
        .to_string()
        .contains("not a legal move"));
    assert!(parse_uci_move(&pos, "e2e4x")
        .unwrap_err()
        .to_string()
        .contains("expected a UCI move"));
    assert!(
        parse_uci_move(&pos, "0000").is_err(),
        "the null move is not a legal move"
    );
    assert_eq!(arbiter_rules::uci::parse_uci_squares("0000").unwrap(), None);
    assert_eq!(move_to_uci(None), "0000");
}
