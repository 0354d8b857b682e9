//! UCI move parsing must never panic; an accepted move writes back to the same text.
#![no_main]
use arbiter_rules::uci::{move_to_uci, parse_uci_move};
use arbiter_rules::Position;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    ] {
        let pos = Position::from_fen(fen).unwrap();
        if let Ok(mv) = parse_uci_move(&pos, text) {
            assert_eq!(move_to_uci(Some(mv)), text);
        }
    }
});
