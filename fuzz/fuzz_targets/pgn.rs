//! The PGN reader must never panic or hang on any bytes; every game it accepts writes back to
//! PGN that reads as the same moves.
#![no_main]
use arbiter_rules::pgn::PgnReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for game in PgnReader::new(data).take(64) {
        let Ok(game) = game else { continue };
        if let Ok(text) = game.to_pgn() {
            let again = PgnReader::new(text.as_bytes()).next().expect("one game").expect("written PGN reads back");
            assert_eq!(again.moves, game.moves);
        }
    }
});
