//! FEN parsing must never panic, and whatever validates must generate moves and round-trip.
#![no_main]
use arbiter_rules::Position;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(pos) = Position::from_fen(text) {
        let moves = pos.legal_moves();
        assert_eq!(moves.len(), pos.count_legal_moves());
        for mv in moves {
            let mut next = pos;
            next.play_unchecked(mv);
            let _ = next.legal_moves();
        }
        assert_eq!(Position::from_fen(&pos.fen()).unwrap(), pos);
    }
});
