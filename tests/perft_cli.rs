//! `arbiter perft` end to end: the output format perft tools expect and the exit status on a
//! bad FEN, checked through the real binary.

use std::process::Command;

fn arbiter(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .output()
        .expect("run arbiter");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

#[test]
fn plain_count() {
    let (code, out, _) = arbiter(&["perft", "--depth", "4"]);
    assert_eq!(code, 0);
    assert_eq!(out, "Nodes searched: 197281\n");
}

#[test]
fn divide_format_matches_go_perft() {
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let (code, out, _) = arbiter(&["perft", "--fen", kiwipete, "--depth", "3", "--divide"]);
    assert_eq!(code, 0);
    let (moves, total) = out
        .split_once("\n\n")
        .expect("a blank line before the total");
    let mut sum = 0u64;
    let mut lines = 0;
    for line in moves.lines() {
        let (mv, count) = line.split_once(": ").expect("`<move>: <count>`");
        assert!((4..=5).contains(&mv.len()), "{line}");
        sum += count.parse::<u64>().expect("a count");
        lines += 1;
    }
    assert_eq!(lines, 48, "one line per legal move");
    assert!(
        moves.lines().any(|l| l.starts_with("e1g1: ")),
        "castling as the king's move"
    );
    assert_eq!(sum, 97862);
    assert_eq!(total, "Nodes searched: 97862\n");
}

#[test]
fn depth_0_is_one_leaf_with_no_move_to_divide() {
    // `--depth 0 --divide` listed the 20 moves of the start position, each with 1 node.
    let (code, out, _) = arbiter(&["perft", "--depth", "0", "--divide"]);
    assert_eq!(code, 0);
    assert_eq!(out, "\nNodes searched: 1\n");
    let (code, out, _) = arbiter(&["perft", "--depth", "0"]);
    assert_eq!((code, out.as_str()), (0, "Nodes searched: 1\n"));
    // A mated side has no move to divide by at any depth.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
    let (code, out, _) = arbiter(&["perft", "--fen", mated, "--depth", "3", "--divide"]);
    assert_eq!((code, out.as_str()), (0, "\nNodes searched: 0\n"));
}

#[test]
fn bad_fen_exits_2_naming_the_field() {
    let (code, out, err) = arbiter(&[
        "perft",
        "--fen",
        "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
        "--depth",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("FEN field 3 (castling)"), "{err}");
    let (code, _, err) = arbiter(&["perft", "--fen", "not a fen", "--depth", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("FEN"), "{err}");
}
