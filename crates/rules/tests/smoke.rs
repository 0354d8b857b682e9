use arbiter_rules::{perft, Position};
#[test]
fn smoke() {
    let cases = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            vec![20u64, 400, 8902, 197281],
        ),
        (
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            vec![48, 2039, 97862, 4085603],
        ),
        (
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            vec![14, 191, 2812, 43238, 674624],
        ),
        (
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            vec![6, 264, 9467, 422333],
        ),
        (
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            vec![44, 1486, 62379, 2103487],
        ),
        (
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            vec![46, 2079, 89890, 3894594],
        ),
    ];
    for (fen, counts) in cases {
        let pos = Position::from_fen(fen).unwrap();
        for (d, &c) in counts.iter().enumerate() {
            assert_eq!(perft::perft(&pos, d as u32 + 1), c, "{fen} depth {}", d + 1);
            assert_eq!(
                perft::perft_full(&pos, (d as u32 + 1).min(3)),
                perft::perft(&pos, (d as u32 + 1).min(3))
            );
        }
    }
}
