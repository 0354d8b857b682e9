//! The King's Knight's Opening of a nineteenth-century handbook
//! (`openings/sources/kings-knight-opening.txt`), read in its own words: every move of Game I
//! and of the side lines is found in the handbook's text and read with the descriptive reader,
//! so the test fails if the text or the reader changes. The same lines make the opening book
//! `openings/kings-knight.pgn`, which must equal what they make (so the book cannot drift from
//! the handbook) and must read back through the PGN reader.
//!
//! To rebuild the book after a deliberate change to the lines below:
//! `ARBITER_WRITE_BOOK=1 cargo test -p arbiter-rules --test descriptive_handbook the_book_is_made`
//! (only that test: the others read the file it writes).

use std::fs;

use arbiter_rules::descriptive::parse_descriptive;
use arbiter_rules::pgn::{write_pgn, PgnReader};
use arbiter_rules::san::san_plus;
use arbiter_rules::{Move, Position};

const HANDBOOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../openings/sources/kings-knight-opening.txt"
);
const BOOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../openings/kings-knight.pgn"
);

/// A move as the handbook gives it.
#[derive(Clone, Copy, Debug)]
enum Said {
    /// In the handbook's own words, found in its text after the previous move.
    Quoted(&'static str),
    /// Said in prose rather than as a move: `words` is the handbook's phrase, which must be in
    /// the passage, and `reads` the move it means in descriptive notation.
    Prose {
        words: &'static str,
        reads: &'static str,
    },
}

/// Moves found in order in the handbook's text, from the first place `anchor` stands.
struct Passage {
    anchor: &'static str,
    moves: Vec<Said>,
}

/// One line of play, as one game of the book.
struct Line {
    opening: &'static str,
    variation: &'static str,
    passages: Vec<Passage>,
    /// The line in SAN from the start, with check marks: the independent statement of what the
    /// handbook's moves must mean.
    san: &'static str,
}

const THE_OPENING: &str = "THE KING'S KNIGHT'S OPENING.";
/// 1.e4 e5 2.Nf3, as the handbook's first lines give it.
const OPENING_MOVES: [&str; 3] = [
    "1. P. to K's 4th.",
    "1. P. to K's 4th.",
    "2. K's Kt. to B's 3d.",
];

const GAME_I: &str = "GAME I.--PHILIDOR'S DEFENCE.";
/// Game I's main line, 1.e4 e5 2.Nf3 d6 3.d4 exd4 4.Qxd4 Nc6 5.Bb5 Bd7 6.Qd1 Be7 7.Nc3.
const GAME_I_MOVES: [&str; 13] = [
    "1. P. to K's 4th.",
    "1. P. to K's 4th.",
    "2. K's Kt. to B's 3d.",
    "2. P. to Q's 3d.",
    "3. P. to Q's 4th.",
    "3. P. takes P. (best.)",
    "4. Q. takes P.",
    "4. Q's Kt. to B's 3d.",
    "5. B. to Q. Kt.'s 5th.",
    "5. B. to Q's 2d.",
    "6. Q. to Q's sq.",
    "6. B. to K's 2d",
    "7. Q's Kt. to B's 3d",
];

fn quoted(moves: &[&'static str]) -> Vec<Said> {
    moves.iter().map(|&text| Said::Quoted(text)).collect()
}

/// The first `plies` moves of Game I's main line.
fn game_i(plies: usize) -> Passage {
    Passage {
        anchor: GAME_I,
        moves: quoted(&GAME_I_MOVES[..plies]),
    }
}

fn opening() -> Passage {
    Passage {
        anchor: THE_OPENING,
        moves: quoted(&OPENING_MOVES),
    }
}

fn passage(anchor: &'static str, moves: &[Said]) -> Passage {
    Passage {
        anchor,
        moves: moves.to_vec(),
    }
}

/// Every line the handbook gives for the King's Knight's Opening: Game I and its side lines,
/// then each of Black's second moves it names with the reply it recommends.
fn lines() -> Vec<Line> {
    use Said::{Prose, Quoted};
    const PHILIDOR: &str = "Philidor's Defence";
    const KINGS_KNIGHT: &str = "King's Knight's Opening";
    const UNSAFE_DEFENCES: &str = "Should he play 2. P. to K. B's 3d";
    const BISHOPS_REPLY: &str = "Should he play 2. Q. to K. B's 3d";
    vec![
        Line {
            opening: PHILIDOR,
            variation: "Game I, main line",
            passages: vec![game_i(13)],
            san: "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1 Be7 Nc3",
        },
        Line {
            opening: PHILIDOR,
            variation: "6. K's Kt. to K's 2d",
            passages: vec![
                game_i(11),
                passage(
                    "6. B. to K's 2d, or",
                    &[Quoted("K's Kt. to K's 2d."), Quoted("7. Q's Kt. to B's 3d")],
                ),
            ],
            san: "e4 e5 Nf3 d6 d4 exd4 Qxd4 Nc6 Bb5 Bd7 Qd1 Nge7 Nc3",
        },
        Line {
            opening: PHILIDOR,
            variation: "3. B. to Q's B's 4th",
            passages: vec![
                game_i(4),
                passage(
                    "if instead you play,--",
                    &[
                        Quoted("3. B. to Q's B's 4th"),
                        Quoted("3. B. to K's 2d. (best.)"),
                    ],
                ),
            ],
            san: "e4 e5 Nf3 d6 Bc4 Be7",
        },
        Line {
            opening: PHILIDOR,
            variation: "4. Kt. takes P.",
            passages: vec![
                game_i(6),
                passage(
                    "If you play 4.",
                    &[Quoted("4. Kt. takes P."), Quoted("P. to Q's 4th.")],
                ),
            ],
            san: "e4 e5 Nf3 d6 d4 exd4 Nxd4 d5",
        },
        Line {
            opening: PHILIDOR,
            variation: "4. K's B. to Q. B's 4th",
            passages: vec![
                game_i(6),
                passage(
                    "You may also, instead of 4. Q. takes P., try",
                    &[
                        Quoted("K's B. to Q. B's 4th."),
                        Quoted("Q's Kt. to B's 3d."),
                    ],
                ),
            ],
            san: "e4 e5 Nf3 d6 d4 exd4 Bc4 Nc6",
        },
        Line {
            opening: "Petroff's Defence",
            variation: "2. K's Kt. to B's 3d",
            passages: vec![
                opening(),
                passage(
                    "three satisfactory methods of defence",
                    &[Quoted("2. K's Kt. to B's 3d")],
                ),
            ],
            san: "e4 e5 Nf3 Nf6",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. Q's Kt. to B's 3d",
            passages: vec![
                opening(),
                passage(
                    "three satisfactory methods of defence",
                    &[Quoted("2. Q's Kt. to B's 3d")],
                ),
            ],
            san: "e4 e5 Nf3 Nc6",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. P. to K. B's 3d",
            passages: vec![
                opening(),
                passage(
                    UNSAFE_DEFENCES,
                    &[
                        Quoted("2. P. to K. B's 3d"),
                        Quoted("3. Kt. takes K's P."),
                        Prose {
                            words: "if the Kt. be taken",
                            reads: "P. takes Kt.",
                        },
                        Quoted("Q. at K. R's 5th"),
                    ],
                ),
            ],
            san: "e4 e5 Nf3 f6 Nxe5 fxe5 Qh5+",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. Q. to K. B's 3d",
            passages: vec![
                opening(),
                passage(
                    BISHOPS_REPLY,
                    &[Quoted("Q. to K. B's 3d"), Quoted("B. to Q. B's 4th")],
                ),
            ],
            san: "e4 e5 Nf3 Qf6 Bc4",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. B. to Q's 3d",
            passages: vec![
                opening(),
                passage(
                    BISHOPS_REPLY,
                    &[Quoted("B. to Q's 3d"), Quoted("B. to Q. B's 4th")],
                ),
            ],
            san: "e4 e5 Nf3 Bd6 Bc4",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. P. to Q's 4th",
            passages: vec![
                opening(),
                passage(
                    "If he adopt 2. P. to Q's 4th",
                    &[
                        Quoted("2. P. to Q's 4th"),
                        Quoted("3. P. takes P."),
                        Prose {
                            words: "if he retake with Queen",
                            reads: "Q. takes P.",
                        },
                        Quoted("Q's Kt. to B's 3d"),
                    ],
                ),
            ],
            san: "e4 e5 Nf3 d5 exd5 Qxd5 Nc3",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. P. to K. B's 4th; 3. Kt. takes K's P.",
            passages: vec![
                opening(),
                passage(
                    "If he play 2. P. to K. B's 4th",
                    &[Quoted("2. P. to K. B's 4th"), Quoted("3. Kt. takes K's P.")],
                ),
            ],
            san: "e4 e5 Nf3 f5 Nxe5",
        },
        Line {
            opening: KINGS_KNIGHT,
            variation: "2. P. to K. B's 4th; 3. B. to Q. B's 4th",
            passages: vec![
                opening(),
                passage(
                    "If he play 2. P. to K. B's 4th",
                    &[Quoted("2. P. to K. B's 4th"), Quoted("B. to Q. B's 4th")],
                ),
            ],
            san: "e4 e5 Nf3 f5 Bc4",
        },
    ]
}

/// The handbook's text with every run of white space made one space, so that a move the
/// printed page broke across lines (`2.` / `Q. to K. B's 3d`) is found whole.
fn handbook() -> String {
    let text = fs::read_to_string(HANDBOOK).expect("openings/sources/kings-knight-opening.txt");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line's moves, each read from the handbook's own text, with the text each was read from.
fn read_line(handbook: &str, line: &Line) -> Vec<(String, Move)> {
    let mut pos = Position::starting();
    let mut played = Vec::new();
    for passage in &line.passages {
        let anchor = handbook
            .find(passage.anchor)
            .unwrap_or_else(|| panic!("the handbook no longer says {:?}", passage.anchor));
        let mut cursor = anchor;
        for said in &passage.moves {
            let text = match *said {
                Said::Quoted(quote) => {
                    let found = handbook[cursor..].find(quote).unwrap_or_else(|| {
                        panic!(
                            "{quote:?} is not in the handbook after {:?}",
                            passage.anchor
                        )
                    });
                    let start = cursor + found;
                    cursor = start + quote.len();
                    &handbook[start..cursor]
                }
                Said::Prose { words, reads } => {
                    assert!(
                        handbook[anchor..].contains(words),
                        "the handbook no longer says {words:?} after {:?}",
                        passage.anchor
                    );
                    reads
                }
            };
            let mv =
                parse_descriptive(&pos, text).unwrap_or_else(|e| panic!("{}: {e}", line.variation));
            played.push((text.to_owned(), mv));
            pos.play_unchecked(mv);
        }
    }
    played
}

/// The SAN of `moves` from the start, with check marks.
fn san_line(moves: &[Move]) -> String {
    let mut pos = Position::starting();
    let mut sans = Vec::new();
    for &mv in moves {
        sans.push(san_plus(&pos, mv));
        pos.play_unchecked(mv);
    }
    sans.join(" ")
}

#[test]
fn the_handbooks_lines_read_as_their_san() {
    let handbook = handbook();
    for line in lines() {
        let moves: Vec<Move> = read_line(&handbook, &line)
            .into_iter()
            .map(|(_, mv)| mv)
            .collect();
        assert_eq!(san_line(&moves), line.san, "{}", line.variation);
    }
}

#[test]
fn game_i_is_read_move_by_move_from_the_text() {
    let handbook = handbook();
    let main = &lines()[0];
    let read = read_line(&handbook, main);
    let texts: Vec<&str> = read.iter().map(|(text, _)| text.as_str()).collect();
    assert_eq!(texts, GAME_I_MOVES);
    let sans: Vec<String> = {
        let moves: Vec<Move> = read.iter().map(|&(_, mv)| mv).collect();
        san_line(&moves).split(' ').map(str::to_owned).collect()
    };
    let numbered: Vec<String> = sans
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| format!("{}.{}", i + 1, pair.join(" ")))
        .collect();
    assert_eq!(
        numbered.join(" "),
        "1.e4 e5 2.Nf3 d6 3.d4 exd4 4.Qxd4 Nc6 5.Bb5 Bd7 6.Qd1 Be7 7.Nc3"
    );
}

/// The book as the lines make it: one game per line, in SAN.
fn book_text() -> String {
    let handbook = handbook();
    let mut book = String::new();
    for line in lines() {
        let moves: Vec<Move> = read_line(&handbook, &line)
            .into_iter()
            .map(|(_, mv)| mv)
            .collect();
        let tags = [
            ("Event", "King's Knight's Opening"),
            ("Opening", line.opening),
            ("Variation", line.variation),
            ("Annotator", "handbook"),
        ];
        book.push_str(&write_pgn(&tags, &Position::starting(), &moves, &[], "*").unwrap());
    }
    book
}

#[test]
fn the_book_is_made_from_the_handbook() {
    let expected = book_text();
    if std::env::var_os("ARBITER_WRITE_BOOK").is_some() {
        fs::write(BOOK, &expected).expect("write openings/kings-knight.pgn");
    }
    let committed = fs::read_to_string(BOOK).expect("openings/kings-knight.pgn");
    assert!(
        committed == expected,
        "openings/kings-knight.pgn differs from what the handbook's lines make; rebuild it with \
         ARBITER_WRITE_BOOK=1 if the change is meant:\n{expected}"
    );
}

#[test]
fn the_book_reads_back_through_the_pgn_reader() {
    let committed = fs::read_to_string(BOOK).expect("openings/kings-knight.pgn");
    let games: Vec<_> = PgnReader::new(committed.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}"));
    let lines = lines();
    assert_eq!(games.len(), lines.len());
    for (game, line) in games.iter().zip(&lines) {
        assert_eq!(game.tag("Event"), Some("King's Knight's Opening"));
        assert_eq!(game.tag("Opening"), Some(line.opening));
        assert_eq!(game.tag("Variation"), Some(line.variation));
        assert_eq!(game.tag("Annotator"), Some("handbook"));
        assert_eq!(game.tag("Result"), Some("*"));
        assert_eq!(game.result, "*");
        assert_eq!(game.start, Position::starting());
        assert_eq!(san_line(&game.moves), line.san, "{}", line.variation);
    }
}
