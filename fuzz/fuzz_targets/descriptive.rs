//! Descriptive notation reading must never panic; a move it accepts must write back to text
//! that reads the same.
#![no_main]
use arbiter_rules::descriptive::{descriptive, parse_descriptive};
use arbiter_rules::Position;
use libfuzzer_sys::fuzz_target;

const POSITIONS: [&str; 3] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for fen in POSITIONS {
        let pos = Position::from_fen(fen).unwrap();
        if let Ok(mv) = parse_descriptive(&pos, text) {
            assert_eq!(parse_descriptive(&pos, &descriptive(&pos, mv)).unwrap(), mv);
        }
    }
});
