//! Descriptive notation: every form the reader accepts, on real positions; what the writer
//! writes; and, on random games, that every move written reads back to itself and that SAN and
//! descriptive notation agree.

use std::collections::HashSet;

use arbiter_rules::descriptive::{descriptive, parse_descriptive, DescriptiveError};
use arbiter_rules::san::{parse_san, San};
use arbiter_rules::uci::parse_uci_move;
use arbiter_rules::Position;
use proptest::prelude::*;

/// The position after `sans` from the standard start.
fn after(sans: &str) -> Position {
    let mut pos = Position::starting();
    for san in sans.split_whitespace() {
        let mv = parse_san(&pos, san).unwrap_or_else(|e| panic!("{san}: {e}"));
        pos.play_unchecked(mv);
    }
    pos
}

fn fen(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

/// Asserts that each text reads as the move `san` names in `pos`.
fn assert_reads(pos: &Position, cases: &[(&str, &str)]) {
    for &(text, san) in cases {
        let mv = parse_descriptive(pos, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            San::from_move(pos, mv).to_string(),
            san,
            "{text} in {}",
            pos.fen()
        );
    }
}

/// Asserts that `text` is ambiguous in `pos` between exactly `candidates` (SAN, in the order
/// the generator lists them).
fn assert_ambiguous(pos: &Position, text: &str, candidates: &str) {
    match parse_descriptive(pos, text) {
        Err(DescriptiveError::Ambiguous {
            candidates: found, ..
        }) => {
            let mut found: Vec<&str> = found.split(", ").collect();
            let mut expected: Vec<&str> = candidates.split(", ").collect();
            found.sort_unstable();
            expected.sort_unstable();
            assert_eq!(found, expected, "{text} in {}", pos.fen());
        }
        other => panic!("{text} in {}: expected ambiguous, got {other:?}", pos.fen()),
    }
}

fn assert_illegal(pos: &Position, text: &str) {
    let error = parse_descriptive(pos, text).expect_err(text);
    assert!(
        matches!(error, DescriptiveError::Illegal { .. }),
        "{text}: {error}"
    );
    assert!(error.to_string().contains("names no legal move"), "{error}");
}

fn assert_syntax(pos: &Position, text: &str, expected_part: &str) {
    let error = parse_descriptive(pos, text).expect_err(text);
    assert!(
        matches!(error, DescriptiveError::Syntax { .. }),
        "{text}: {error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(expected_part) && message.contains(&format!("{text:?}")),
        "{text}: {message}"
    );
}

/// The descriptive text of the move `uci` in `pos`.
fn written(pos: &Position, uci: &str) -> String {
    descriptive(pos, parse_uci_move(pos, uci).unwrap())
}

#[test]
fn ranks_count_from_the_movers_own_side() {
    let start = Position::starting();
    assert_reads(
        &start,
        &[
            ("P-K4", "e4"),
            ("P. to K's 4th.", "e4"),
            ("1. P. to K's 4th.", "e4"),
            ("P-Q4", "d4"),
            ("P. to Q's 3d.", "d3"),
            ("P. to K. B's 3d", "f3"),
            ("P-KR3", "h3"),
            ("P-QR4", "a4"),
            ("K's P. to K's 4th", "e4"),
            ("P-QKt3", "b3"),
            ("N-KB3", "Nf3"),
            ("Kt-KB3", "Nf3"),
            ("K's Kt. to B's 3d.", "Nf3"),
            ("Q's Kt. to B's 3d.", "Nc3"),
            ("Knight to King's Bishop's 3rd", "Nf3"),
            ("N-QR3", "Na3"),
            ("N-KR3", "Nh3"),
        ],
    );
    // Only the wing of the file or of the knight tells c3 from f3, and both rook's pawns can
    // reach their third rank.
    assert_ambiguous(&start, "N-B3", "Nc3, Nf3");
    assert_ambiguous(&start, "Kt. to B's 3d", "Nc3, Nf3");
    assert_ambiguous(&start, "P-R3", "a3, h3");
    assert_illegal(&start, "P-K5");
    assert_illegal(&start, "N-K4");

    let black = after("e4");
    assert_reads(
        &black,
        &[
            ("P-K4", "e5"),
            ("P. to K's 4th.", "e5"),
            ("1. P. to K's 4th.", "e5"),
            ("1... P-Q4", "d5"),
            ("N-KB3", "Nf6"),
            ("K's Kt. to B's 3d.", "Nf6"),
            ("P. to K. B's 4th", "f5"),
        ],
    );
}

#[test]
fn captures_name_the_man_taken() {
    // Damiano's defence: 2...f6 3.Nxe5, the handbook's "Kt. takes K's P."
    let pos = after("e4 e5 Nf3 f6");
    assert_reads(
        &pos,
        &[
            ("Kt. takes K's P.", "Nxe5"),
            ("3. Kt. takes K's P., checking", "Nxe5"),
            ("NxP", "Nxe5"),
            ("KtxP", "Nxe5"),
            ("NxKP", "Nxe5"),
            ("KNxP", "Nxe5"),
            ("NxP(K5)", "Nxe5"),
        ],
    );
    assert_illegal(&pos, "NxQP");
    assert_illegal(&pos, "QNxP");
    // A capture is never written as a move to a square.
    assert_illegal(&pos, "N-K5");

    // ...and after 3...fxe5 the queen checks from h5.
    let pos = after("e4 e5 Nf3 f6 Nxe5 fxe5");
    assert_reads(
        &pos,
        &[
            ("Q. at K. R's 5th", "Qh5"),
            ("Q-R5ch", "Qh5"),
            ("Q-R5+", "Qh5"),
            ("Q-KR5 ch.", "Qh5"),
            ("Q. to K. R's 5th (ch.)", "Qh5"),
        ],
    );

    let pos = after("e4 e5 Nf3 d6 d4");
    assert_reads(
        &pos,
        &[
            ("P. takes P. (best.)", "exd4"),
            ("3. P. takes P. (best.)", "exd4"),
            ("PxP", "exd4"),
            ("KPxP", "exd4"),
            ("PxQP", "exd4"),
            ("P:P", "exd4"),
        ],
    );
    let pos = after("e4 e5 Nf3 d6 d4 exd4");
    assert_reads(
        &pos,
        &[
            ("Q. takes P.", "Qxd4"),
            ("QxP", "Qxd4"),
            ("Kt. takes P.", "Nxd4"),
        ],
    );

    let pos = after("e4 e5 Nf3 Nc6 Bb5 a6");
    assert_reads(
        &pos,
        &[
            ("BxN", "Bxc6"),
            ("B. takes Kt.", "Bxc6"),
            ("BxQN", "Bxc6"),
            ("BxN ch", "Bxc6"),
            ("BxP", "Bxa6"),
            ("B. takes Q. R's P.", "Bxa6"),
        ],
    );
    assert_illegal(&pos, "BxKN");
    assert_illegal(&pos, "BxKP");

    // Scholar's mate: the queen takes the king's pawn (check), the bishop's (mate) or the
    // rook's.
    let pos = after("e4 e5 Qh5 Nc6 Bc4 Nf6");
    assert_reads(
        &pos,
        &[
            ("QxBP mate", "Qxf7"),
            ("QxKBP", "Qxf7"),
            ("QxBP ch", "Qxf7"),
            ("QxKP ch", "Qxe5"),
            ("Q. takes K's P., checking", "Qxe5"),
        ],
    );
    assert_ambiguous(&pos, "QxP", "Qxe5, Qxf7, Qxh7");
    assert_ambiguous(&pos, "QxP ch", "Qxe5, Qxf7, Qxh7");
}

#[test]
fn the_handbooks_philidor_moves() {
    let cases = [
        ("e4 e5 Nf3", "P. to Q's 3d.", "d6"),
        ("e4 e5 Nf3 d6", "B. to Q's B's 4th", "Bc4"),
        ("e4 e5 Nf3 d6", "B. to Q. B's 4th", "Bc4"),
        ("e4 e5 Nf3 d6", "B-QB4", "Bc4"),
        ("e4 e5 Nf3 d6", "B-B4", "Bc4"),
        ("e4 e5 Nf3 d6 Bc4", "B. to K's 2d. (best.)", "Be7"),
        ("e4 e5 Nf3 d6 d4 exd4", "K's B. to Q. B's 4th.", "Bc4"),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4", "Q's Kt. to B's 3d.", "Nc6"),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6",
            "B. to Q. Kt.'s 5th.",
            "Bb5",
        ),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6", "B-QN5", "Bb5"),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6", "KB-N5", "Bb5"),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6", "QB-N5", "Bg5"),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5", "B. to Q's 2d.", "Bd7"),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7",
            "Q. to Q's sq.",
            "Qd1",
        ),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7", "Q-Q1", "Qd1"),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1",
            "B. to K's 2d",
            "Be7",
        ),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1",
            "K's Kt. to K's 2d.",
            "Nge7",
        ),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1", "KN-K2", "Nge7"),
        ("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1", "QN-K2", "Nce7"),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1",
            "N(QB3)-K2",
            "Nce7",
        ),
        (
            "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1 Be7",
            "N-B3",
            "Nc3",
        ),
        ("e4 e5 Nf3 d6 d4 exd4 Nxd4", "P. to Q's 4th.", "d5"),
    ];
    for (line, text, san) in cases {
        assert_reads(&after(line), &[(text, san)]);
    }
    let pos = after("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6");
    assert_ambiguous(&pos, "B-N5", "Bb5, Bg5");
    let pos = after("e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1");
    assert_ambiguous(&pos, "N-K2", "Nce7, Nge7");
    assert_ambiguous(&pos, "Kt. to K's 2d", "Nce7, Nge7");
}

#[test]
fn kings_and_queens_move_by_name() {
    assert_reads(
        &after("d4 d5"),
        &[("K-Q2", "Kd2"), ("King to Q's 2d", "Kd2")],
    );
    assert_reads(
        &fen("4k3/8/8/8/8/8/8/R5K1 w - - 0 1"),
        &[
            ("R-K1 ch", "Re1"),
            ("R-K1+", "Re1"),
            ("R. to K's sq., checking", "Re1"),
        ],
    );
}

#[test]
fn bishops_belong_to_a_wing_by_their_colour() {
    // Black's bishops stand on c5 (dark) and d5 (light): the dark one is Black's king's
    // bishop although it stands on the queen's side.
    let pos = fen("4k3/8/8/2bb4/3Q4/8/8/4K3 w - - 0 1");
    assert_reads(
        &pos,
        &[
            ("QxKB", "Qxc5"),
            ("Q. takes K's B.", "Qxc5"),
            ("QxQB", "Qxd5"),
            ("QxB(QB5)", "Qxc5"),
        ],
    );
    assert_ambiguous(&pos, "QxB", "Qxc5, Qxd5");
    assert_eq!(written(&pos, "d4c5"), "QxKB");
    assert_eq!(written(&pos, "d4d5"), "QxQB");
}

#[test]
fn castling_forms() {
    let pos = fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    assert_reads(
        &pos,
        &[
            ("O-O", "O-O"),
            ("0-0", "O-O"),
            ("O-O-O", "O-O-O"),
            ("0-0-0", "O-O-O"),
            ("Castles KR", "O-O"),
            ("Castles K", "O-O"),
            ("Castles QR", "O-O-O"),
            ("Castles (Q)", "O-O-O"),
            ("Castles on K's side.", "O-O"),
            ("Castles QR ch", "O-O-O"),
        ],
    );
    // Bare "Castles" fits either side, so it needs a position where only one is legal.
    assert_ambiguous(&pos, "Castles", "O-O, O-O-O");
    assert_reads(
        &fen("r3k2r/8/8/8/8/8/8/R3K2R w K - 0 1"),
        &[("Castles", "O-O"), ("Castles.", "O-O")],
    );
    assert_illegal(&fen("r3k2r/8/8/8/8/8/8/R3K2R w K - 0 1"), "O-O-O");
    // The king's two-square step is castling, not a king's move.
    assert_illegal(&pos, "K-KN1");
    assert_eq!(written(&pos, "e1g1"), "O-O");
    assert_eq!(written(&pos, "e1c1"), "O-O-O");
}

#[test]
fn promotion_forms() {
    let pos = fen("7k/3P4/8/8/8/8/8/4K3 w - - 0 1");
    assert_reads(
        &pos,
        &[
            ("P-Q8=Q", "d8=Q"),
            ("P-Q8(Q)", "d8=Q"),
            ("P-Q8Q", "d8=Q"),
            ("P-Q8/Q ch", "d8=Q"),
            ("P-Q8=Kt", "d8=N"),
            ("P-Q8(N)", "d8=N"),
            ("P. to Q's 8th (R)", "d8=R"),
        ],
    );
    assert_illegal(&pos, "P-Q8");
    assert_syntax(&pos, "P-Q8=K", "a piece to promote to");
    assert_eq!(written(&pos, "d7d8q"), "P-Q8=Qch");
    assert_eq!(written(&pos, "d7d8n"), "P-Q8=N");

    // Black promotes on his eighth rank, White's first.
    let pos = fen("4k3/8/8/8/8/8/3p4/K7 b - - 0 1");
    assert_reads(&pos, &[("P-Q8=Q", "d1=Q"), ("P-Q8(Q) ch", "d1=Q")]);
    assert_eq!(written(&pos, "d2d1q"), "P-Q8=Qch");

    let pos = fen("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
    assert_reads(
        &pos,
        &[
            ("PxR=Q", "axb8=Q"),
            ("PxR(Q)", "axb8=Q"),
            ("P-R8=Q", "a8=Q"),
        ],
    );
    assert_eq!(written(&pos, "a7b8q"), "PxR=Qch");
}

#[test]
fn en_passant() {
    let pos = fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
    assert_reads(
        &pos,
        &[
            ("PxP e.p.", "exd6"),
            ("PxP ep", "exd6"),
            ("PxP en passant", "exd6"),
            ("PxP", "exd6"),
            ("P. takes P. e.p.", "exd6"),
            ("PxQP e.p.", "exd6"),
            ("P-K6", "e6"),
        ],
    );
    // The pawn goes to d6, but it is a capture, and "e.p." fits only a capture.
    assert_illegal(&pos, "P-Q6");
    assert_syntax(&pos, "P-K6 e.p.", "a capture before e.p.");
    assert_eq!(written(&pos, "e5d6"), "PxP e.p.");
    // Two pawns may take en passant: the writer names the one that does.
    let pos = fen("4k3/8/8/2PpP3/8/8/8/4K3 w - d6 0 1");
    assert_ambiguous(&pos, "PxP e.p.", "cxd6, exd6");
    assert_reads(&pos, &[("BPxP e.p.", "cxd6"), ("KPxP", "exd6")]);
    assert_eq!(written(&pos, "c5d6"), "BPxP e.p.");
    assert_eq!(written(&pos, "e5d6"), "KPxP e.p.");
}

#[test]
fn qualifiers_tell_like_men_apart() {
    // Two knights on the queen's side, on the first and third ranks, both reach d2.
    let pos = fen("4k3/8/8/8/8/1N6/8/1N2K3 w - - 0 1");
    assert_ambiguous(&pos, "N-Q2", "N1d2, N3d2");
    assert_ambiguous(&pos, "QN-Q2", "N1d2, N3d2");
    assert_reads(
        &pos,
        &[
            ("N(1)-Q2", "N1d2"),
            ("N(3)-Q2", "N3d2"),
            ("N(QN1)-Q2", "N1d2"),
            ("Kt (Q. Kt.'s sq.) to Q's 2d", "N1d2"),
        ],
    );
    assert_eq!(written(&pos, "b1d2"), "N(1)-Q2");
    assert_eq!(written(&pos, "b3d2"), "N(3)-Q2");

    // Rooks on a1 and d8 both reach d1, and both are on the queen's side.
    let pos = fen("3R4/6k1/8/8/8/8/8/R5K1 w - - 0 1");
    assert_ambiguous(&pos, "R-Q1", "Rad1, Rdd1");
    assert_reads(
        &pos,
        &[
            ("R(QR1)-Q1", "Rad1"),
            ("R(1)-Q1", "Rad1"),
            ("R(Q8)-Q1", "Rdd1"),
        ],
    );
    assert_eq!(written(&pos, "a1d1"), "R(1)-Q1");

    // Rooks on a1 and c1 both reach b1: only the origin's file tells them apart.
    let pos = fen("4k3/8/8/8/8/8/8/R1R1K3 w - - 0 1");
    assert_eq!(written(&pos, "a1b1"), "R(R1)-N1");
    assert_eq!(written(&pos, "c1b1"), "R(B1)-N1");
    assert_reads(&pos, &[("R(R1)-N1", "Rab1"), ("R(QR1)-QN1", "Rab1")]);

    // Queens on a1 and h1 both reach d1: the short name R1 fits both of them.
    let pos = fen("4k3/8/8/8/8/8/4K3/Q6Q w - - 0 1");
    assert_ambiguous(&pos, "Q(R1)-Q1", "Qad1, Qhd1");
    assert_eq!(written(&pos, "a1d1"), "Q(QR1)-Q1");
    assert_eq!(written(&pos, "h1d1"), "Q(KR1)-Q1");

    // Knights on g1 and d2 both reach f3; the wing tells them apart.
    let pos = fen("4k3/8/8/8/8/8/3N4/4K1N1 w - - 0 1");
    assert_eq!(written(&pos, "g1f3"), "KN-B3");
    assert_eq!(written(&pos, "d2f3"), "QN-B3");
    assert_eq!(written(&pos, "d2b3"), "N-N3");

    // The king's file is on the king's side: the knight on e2 is the king's knight.
    let pos = fen("4k3/8/8/8/8/8/4N3/1N2K3 w - - 0 1");
    assert_eq!(written(&pos, "e2c3"), "KN-B3");
    assert_eq!(written(&pos, "b1c3"), "QN-B3");
    assert_reads(
        &pos,
        &[("KN-QB3", "Nec3"), ("Q's Kt. to Q. B's 3d", "Nbc3")],
    );

    // Rooks on a5 and h5 both take the pawn on d5.
    let pos = fen("4k3/8/8/R2p3R/8/8/8/4K3 w - - 0 1");
    assert_eq!(written(&pos, "a5d5"), "QRxP");
    assert_eq!(written(&pos, "h5d5"), "KRxP");
    assert_ambiguous(&pos, "RxP", "Raxd5, Rhxd5");

    // The pawn on e4 takes on d5 or f5.
    let pos = fen("4k3/8/8/3p1p2/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(written(&pos, "e4d5"), "PxQP");
    assert_eq!(written(&pos, "e4f5"), "PxBP");
    assert_reads(
        &pos,
        &[
            ("P. takes Q's P.", "exd5"),
            ("PxKBP", "exf5"),
            ("P-K5", "e5"),
        ],
    );
}

#[test]
fn the_writer_uses_the_shortest_text_that_reads_back() {
    let start = Position::starting();
    assert_eq!(written(&start, "e2e4"), "P-K4");
    assert_eq!(written(&start, "g1f3"), "N-KB3");
    assert_eq!(written(&start, "h2h3"), "P-KR3");
    assert_eq!(written(&start, "b1a3"), "N-QR3");
    let pos = after("e4 e5 Nf3 f6 Nxe5 fxe5");
    assert_eq!(written(&pos, "d1h5"), "Q-R5ch");
    let pos = after("e4 e5 Nf3 Nc6 Bb5 a6");
    assert_eq!(written(&pos, "b5c6"), "BxN");
    let pos = after("e4 e5 Qh5 Nc6 Bc4 Nf6");
    assert_eq!(written(&pos, "h5f7"), "QxBP mate");
    assert_eq!(written(&pos, "h5e5"), "QxKPch");
}

#[test]
fn errors_say_what_was_expected() {
    let start = Position::starting();
    assert_syntax(&start, "", "a move");
    assert_syntax(&start, "Z-K4", "a piece");
    assert_syntax(&start, "P-K9", "a square such as K4");
    assert_syntax(&start, "P-Z4", "a piece");
    assert_syntax(&start, "P-4", "a square such as K4");
    assert_syntax(&start, "N3", "- or to");
    assert_syntax(&start, "P-K4 please", "a word of the notation");
    assert_syntax(&start, "PPPP-K4", "at most three letters");
    assert_syntax(&start, "KQ-K4", "a man such as");
    assert_syntax(&start, "P-K4 P-K4", "the end of the move");
    assert_syntax(&start, "O-", "O-O or O-O-O");
    assert_syntax(&start, "Castles KB", "the side castled on");
    assert_syntax(&start, "NxK's Q's", "the man taken");
    let error = parse_descriptive(&start, "P-K9").unwrap_err();
    assert!(error.to_string().contains("found \"K9\""), "{error}");
    let error = parse_descriptive(&start, "N-B3").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("\"N-B3\" is ambiguous in {}: it fits Nc3, Nf3", start.fen())
    );
    let error = parse_descriptive(&start, "P-K5").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("\"P-K5\" names no legal move in {}", start.fen())
    );
}

#[test]
fn the_philidor_main_line_written_back() {
    let sans = "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1 Be7 Nc3";
    let expected = [
        "P-K4", "P-K4", "N-KB3", "P-Q3", "P-Q4", "PxP", "QxP", "N-QB3", "B-QN5", "B-Q2", "Q-Q1",
        "B-K2", "N-B3",
    ];
    let mut pos = Position::starting();
    for (san, text) in sans.split_whitespace().zip(expected) {
        let mv = parse_san(&pos, san).unwrap();
        assert_eq!(descriptive(&pos, mv), text, "{san}");
        assert_eq!(parse_descriptive(&pos, text), Ok(mv), "{text}");
        pos.play_unchecked(mv);
    }
}

// ---------------------------------------------------------------------------------------------
// Random games

const STARTS: [&str; 4] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

/// The positions of a seeded random game from one of `STARTS`, with the move played from each.
fn random_game(start: usize, seed: u64, plies: usize) -> Vec<(Position, arbiter_rules::Move)> {
    let mut pos = Position::from_fen(STARTS[start]).unwrap();
    let mut state = seed | 1;
    let mut game = Vec::new();
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = moves[(state % moves.len() as u64) as usize];
        game.push((pos, mv));
        pos.play_unchecked(mv);
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_move_written_reads_back(start in 0..STARTS.len(), seed in any::<u64>(), plies in 1usize..120) {
        for (pos, played) in random_game(start, seed, plies) {
            let mut seen = HashSet::new();
            for mv in pos.legal_moves() {
                let text = descriptive(&pos, mv);
                prop_assert_eq!(parse_descriptive(&pos, &text), Ok(mv), "{} in {}", text, pos.fen());
                let bare = text.trim_end_matches("ch").trim_end_matches(" mate").to_owned();
                prop_assert!(seen.insert(bare), "{} written twice in {}", text, pos.fen());
            }
            // SAN -> move -> descriptive -> move -> SAN gives back the SAN.
            let san = San::from_move(&pos, played).to_string();
            let mv = parse_san(&pos, &san).unwrap();
            let text = descriptive(&pos, mv);
            let back = parse_descriptive(&pos, &text).unwrap();
            prop_assert_eq!(San::from_move(&pos, back).to_string(), san);
        }
    }

    #[test]
    fn the_reader_never_panics(text in "\\PC{0,60}") {
        let _ = parse_descriptive(&Position::starting(), &text);
    }

    #[test]
    fn descriptive_like_text_never_panics(text in "[PKQRBNtx()=/+ 0-9.',a-z-]{0,30}") {
        let pos = Position::starting();
        if let Ok(mv) = parse_descriptive(&pos, &text) {
            prop_assert!(pos.legal_moves().contains(&mv));
        }
    }
}
