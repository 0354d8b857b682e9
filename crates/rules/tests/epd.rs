//! EPD lines as opening books and test suites write them.

use arbiter_rules::epd::Epd;
use arbiter_rules::pgn::PgnReader;

const FEN: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";

/// A book saved by a Windows editor starts with a UTF-8 byte order mark. PGN accepted it and
/// EPD refused the first line ("needs four position fields"); both accept it now.
#[test]
fn a_leading_byte_order_mark_is_accepted_as_in_pgn() {
    let plain = Epd::parse(FEN).unwrap();
    for line in [
        format!("\u{feff}{FEN}"),
        format!("\u{feff}  {FEN}\r"),
        format!("\u{feff}{FEN} id \"book.1\";"),
    ] {
        let epd = Epd::parse(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(epd.position, plain.position, "{line:?}");
    }
    // The same file as PGN gives the same position.
    let pgn = format!("\u{feff}[SetUp \"1\"]\n[FEN \"{FEN}\"]\n\n*\n");
    let game = PgnReader::new(pgn.as_bytes()).next().unwrap().unwrap();
    assert_eq!(game.start, plain.position);
    // Only one mark, and only in front: elsewhere it is not whitespace.
    assert!(Epd::parse(&format!("\u{feff}\u{feff}{FEN}")).is_err());
    assert!(Epd::parse("\u{feff}").is_err());
}
