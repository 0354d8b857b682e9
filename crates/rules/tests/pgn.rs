//! PGN reading and writing: every construct of a multi-game file, errors that name the game and
//! line and let the reader go on, famous games replayed to their published final positions,
//! and property tests: written games read back unchanged, and no input makes the reader panic.
//!
//! Expected FENs were computed with python-chess 1.11 (`chess.pgn.read_game`, then
//! `game.end().board().fen()`), an independent PGN reader and move generator.

use std::io::{self, BufRead, BufReader, Read};

use arbiter_rules::pgn::{
    write_pgn, PgnError, PgnErrorKind, PgnGame, PgnLimits, PgnReader, LINE_WIDTH, RESULT_TOKENS,
};
use arbiter_rules::san::{parse_san, SanError};
use arbiter_rules::{Color, Game, Move, Outcome, Position, RuleSet, Termination};
use proptest::prelude::*;

const CONSTRUCTS: &str = include_str!("data/pgn/constructs.pgn");
const FAMOUS: &str = include_str!("data/pgn/famous.pgn");

fn read_all(text: &[u8]) -> Vec<Result<PgnGame, PgnError>> {
    PgnReader::new(text).collect()
}

fn read_one(text: &str) -> PgnGame {
    let mut games = read_all(text.as_bytes());
    assert_eq!(games.len(), 1, "{text}");
    games.remove(0).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn read_error(text: &str) -> PgnError {
    match read_all(text.as_bytes()).into_iter().next() {
        Some(Err(error)) => error,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn end_fen(game: &PgnGame) -> String {
    game.to_game(RuleSet::default()).unwrap().position().fen()
}

fn san_moves(start: &Position, sans: &[&str]) -> Vec<Move> {
    let mut pos = *start;
    sans.iter()
        .map(|san| {
            let mv = parse_san(&pos, san).unwrap();
            pos.play_unchecked(mv);
            mv
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reading

#[test]
fn reads_every_construct_of_a_multi_game_file() {
    let games: Vec<PgnGame> = read_all(CONSTRUCTS.as_bytes())
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(games.len(), 5);

    // Escape line, escaped tag value, leading comment, NAG, glyphs, a comment over two lines,
    // nested variations with a `)` inside a comment, a `;` comment, `31.` at a line's end.
    let g = &games[0];
    assert_eq!(g.line, 2);
    assert_eq!(g.tag("Event"), Some(r#"Club "Open" \ Rapid"#));
    assert_eq!(g.tag("ECO"), Some("C60"));
    assert_eq!(g.tags.len(), 8);
    assert_eq!(g.tags[0].0, "Event");
    assert_eq!(g.tags[7], ("ECO".to_owned(), "C60".to_owned()));
    assert_eq!(g.start, Position::starting());
    assert_eq!(
        g.leading_comment.as_deref(),
        Some("A leading comment, before any move.")
    );
    assert_eq!(g.moves.len(), 85);
    assert_eq!(g.comments.len(), 85);
    assert_eq!(
        g.comments[1].as_deref(),
        Some("Black answers symmetrically")
    );
    assert_eq!(g.comments[7].as_deref(), Some("the Morphy Defence"));
    assert_eq!(g.comments.iter().flatten().count(), 2);
    assert_eq!(g.result, "1-0");
    assert_eq!(
        end_fen(g),
        "8/8/4R1p1/2k3p1/1p4P1/1P1b1P2/3K1n2/8 b - - 2 43"
    );

    // FEN start with Black to move, `41...Rd1+` glued to its number, `$2`, `??`.
    let g = &games[1];
    assert_eq!(g.line, 22);
    assert_eq!(g.start.fen(), "3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 40");
    assert_eq!(g.moves.len(), 7);
    assert_eq!(g.comments[1].as_deref(), Some("White does not see it"));
    assert_eq!(g.result, "0-1");
    assert_eq!(end_fen(g), "6k1/5ppp/8/8/6P1/7P/3r1P1K/8 w - - 1 44");

    // No seven-tag roster; a `;` inside braces is comment text.
    let g = &games[2];
    assert_eq!(g.line, 34);
    assert_eq!(g.tags.len(), 2);
    assert_eq!(g.moves.len(), 22);
    assert_eq!(g.comments[13].as_deref(), Some(";not a line comment"));
    assert_eq!(g.result, "1/2-1/2");
    assert_eq!(
        end_fen(g),
        "rn3rk1/p1p1qpp1/1p2b2p/3p4/3P4/4PN2/PP3PPP/2RQKB1R w K - 2 12"
    );

    // No moves at all.
    let g = &games[3];
    assert_eq!(g.line, 40);
    assert!(g.moves.is_empty());
    assert_eq!(g.result, "*");

    // FEN without SetUp; en passant written with a separate `e.p.`.
    let g = &games[4];
    assert_eq!(g.line, 45);
    assert!(g.moves[0].is_en_passant());
    assert_eq!(g.moves.len(), 4);
    assert_eq!(g.result, "*");
    assert_eq!(
        end_fen(g),
        "rn1qkb1r/ppp1p1pp/5n2/3p4/6b1/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 5"
    );
}

#[test]
fn famous_games_reach_their_published_mates() {
    let games: Vec<PgnGame> = read_all(FAMOUS.as_bytes())
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(games.len(), 2);

    let immortal = &games[0];
    assert_eq!(immortal.tag("White"), Some("Adolf Anderssen"));
    assert_eq!(immortal.moves.len(), 45);
    assert_eq!(
        end_fen(immortal),
        "r1bk3r/p2pBpNp/n4n2/1p1NP2P/6P1/3P4/P1P1K3/q5b1 b - - 1 23"
    );
    let opera = &games[1];
    assert_eq!(opera.moves.len(), 33);
    assert_eq!(
        opera.comments[5].as_deref(),
        Some("This is a weak move already.")
    );
    assert_eq!(
        end_fen(opera),
        "1n1Rkb1r/p4ppp/4q3/4p1B1/4P3/8/PPP2PPP/2K5 b k - 1 17"
    );
    for game in &games {
        let outcome = game.to_game(RuleSet::default()).unwrap().outcome();
        assert_eq!(
            outcome,
            Some(Outcome::win(Color::White, Termination::Checkmate))
        );
        assert_eq!(game.result, "1-0");
    }
}

#[test]
fn all_four_results_and_move_number_forms() {
    for result in RESULT_TOKENS {
        let g = read_one(&format!(
            "1.e4 1...e5 2. Nf3 2... Nc6 3 Bb5 ... a6 {result}"
        ));
        assert_eq!(g.result, result);
        assert_eq!(g.moves.len(), 6);
    }
    // `0-0` is castling, not a move number or a result.
    let g = read_one("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. 0-0 Nf6 5. d3 0-0 *");
    assert!(g.moves[6].is_castle() && g.moves[9].is_castle());
}

#[test]
fn tolerates_byte_order_mark_crlf_and_bytes_that_are_not_utf8() {
    let mut text =
        b"\xEF\xBB\xBF[Event \"caf\xE9\"]\r\n\r\n1. e4 {\xFF\xFE ok} e5 1-0\r\n".to_vec();
    text.extend_from_slice(b"\r\n[Event \"next\"]\r\n1. d4 *\r\n");
    let games = read_all(&text);
    assert_eq!(games.len(), 2);
    let g = games[0].as_ref().unwrap();
    assert_eq!(g.tag("Event"), Some("caf\u{FFFD}"));
    assert_eq!(g.comments[0].as_deref(), Some("\u{FFFD}\u{FFFD} ok"));
    assert_eq!(g.line, 1);
    assert_eq!(games[1].as_ref().unwrap().line, 5);
}

#[test]
fn a_comment_after_the_result_does_not_make_a_game() {
    let games = read_all(b"1. e4 e5 1/2-1/2 {final comment}\n");
    assert_eq!(games.len(), 1);
    assert!(games[0].is_ok());
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn errors_name_game_line_and_column_and_reading_goes_on() {
    let text = "\
[Event \"good\"]\n\
\n\
1. e4 e5 1-0\n\
\n\
[Event \"illegal move\"]\n\
\n\
1. e4 e5 2. Ke3 Nc6 (2... Nf6 3. e5) 1-0\n\
\n\
[Event \"bad tag]\n\
[Result \"1-0\"]\n\
\n\
1. d4 1-0\n\
\n\
[Event \"bad FEN\"]\n\
[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\
\n\
1. d4 0-1\n\
\n\
[Event \"no result\"]\n\
1. d4 d5\n\
[Event \"after the one without a result\"]\n\
1. c4 *\n\
1. e4 ) e5 *\n\
1. f4 {never closed *\n";
    let games = read_all(text.as_bytes());
    let summary: Vec<String> = games
        .iter()
        .map(|g| match g {
            Ok(g) => format!("ok line {} {}", g.line, g.tag("Event").unwrap_or("")),
            Err(e) => format!("game {} line {} column {}", e.game, e.line, e.column),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "ok line 1 good",
            "game 2 line 7 column 13",
            "game 3 line 9 column 1",
            "game 4 line 15 column 1",
            "game 5 line 21 column 1",
            "ok line 21 after the one without a result",
            "game 7 line 23 column 7",
            "game 8 line 24 column 7",
        ]
    );
    let kinds: Vec<&PgnErrorKind> = games
        .iter()
        .filter_map(|g| g.as_ref().err())
        .map(|e| &e.kind)
        .collect();
    assert!(
        matches!(kinds[0], PgnErrorKind::Move { number, san, .. } if number == "2. " && san == "Ke3")
    );
    assert!(matches!(kinds[1], PgnErrorKind::BadTag(_)));
    assert!(matches!(kinds[2], PgnErrorKind::BadFen { .. }));
    assert!(matches!(kinds[3], PgnErrorKind::MissingResult(_)));
    assert!(matches!(kinds[4], PgnErrorKind::UnexpectedToken(t) if t == ")"));
    assert!(matches!(kinds[5], PgnErrorKind::UnterminatedComment));

    let message = games[1].as_ref().unwrap_err().to_string();
    assert!(
        message.contains("PGN game 2 (line 7, column 13)"),
        "{message}"
    );
    assert!(message.contains("Ke3"), "{message}");
    assert!(
        message.contains("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"),
        "{message}"
    );
}

type KindCheck = fn(&PgnErrorKind) -> bool;

#[test]
fn rejects_what_is_not_a_game() {
    let cases: &[(&str, KindCheck)] = &[
        ("[SetUp \"1\"]\n1. e4 *", |k| {
            matches!(k, PgnErrorKind::SetUpWithoutFen)
        }),
        ("[Event \"x\" ]\n[Site]\n*", |k| {
            matches!(k, PgnErrorKind::BadTag(_))
        }),
        ("[Event x]\n*", |k| matches!(k, PgnErrorKind::BadTag(_))),
        ("1. e4 (1. d4 *", |k| {
            matches!(k, PgnErrorKind::UnterminatedVariation(_))
        }),
        ("1. e4 e5", |k| matches!(k, PgnErrorKind::MissingResult(_))),
        ("1. e4 -- *", |k| matches!(k, PgnErrorKind::Move { .. })),
        ("1. e4 e5 2. Nc3 Nc6 3. Ne2 *", |k| {
            // Both knights can reach e2: ambiguous.
            matches!(k, PgnErrorKind::Move { source, .. }
                if matches!(**source, SanError::Ambiguous { .. }))
        }),
        ("1. e4 $ e5 *", |k| {
            matches!(k, PgnErrorKind::UnexpectedToken(_))
        }),
        ("1. e4 \u{1} *", |k| {
            matches!(k, PgnErrorKind::UnexpectedToken(_))
        }),
        ("1. e4 <reserved> *", |k| {
            matches!(k, PgnErrorKind::UnexpectedToken(_))
        }),
    ];
    for (text, is_expected) in cases {
        let error = read_error(text);
        assert!(is_expected(&error.kind), "{text}: {error}");
        assert_eq!(error.game, 1);
    }
}

#[test]
fn a_runaway_comment_is_capped_and_reading_resumes_after_it() {
    let limits = PgnLimits {
        max_game_text_bytes: 1000,
        ..PgnLimits::default()
    };
    let text = format!("1. e4 {{{}}} e5 1-0\n\n1. d4 *\n", "word ".repeat(1000));
    let games: Vec<_> = PgnReader::with_limits(text.as_bytes(), limits).collect();
    assert_eq!(games.len(), 2);
    let error = games[0].as_ref().unwrap_err();
    assert!(
        matches!(error.kind, PgnErrorKind::TooLarge { limit: 1000, .. }),
        "{error}"
    );
    assert_eq!(games[1].as_ref().unwrap().moves.len(), 1);

    // Many small tags are bounded by the same budget.
    let tags = "[A \"\"]\n".repeat(100);
    let games: Vec<_> = PgnReader::with_limits(format!("{tags}*").as_bytes(), limits).collect();
    assert!(matches!(
        games[0],
        Err(PgnError {
            kind: PgnErrorKind::TooLarge { .. },
            ..
        })
    ));
}

/// Bytes made on demand, so the test shows the reader never needs the whole input at once.
fn streamed(parts: Vec<Box<dyn Read>>) -> impl BufRead {
    BufReader::new(
        parts
            .into_iter()
            .fold(Box::new(io::empty()) as Box<dyn Read>, |acc, part| {
                Box::new(acc.chain(part))
            }),
    )
}

#[test]
fn a_huge_comment_or_line_is_streamed_not_stored() {
    // 16 MiB of comment with the default 4 MiB budget, then a good game.
    let input = streamed(vec![
        Box::new(&b"1. e4 {"[..]),
        Box::new(io::repeat(b'a').take(16 << 20)),
        Box::new(&b"} 1-0\n1. d4 *\n"[..]),
    ]);
    let games: Vec<_> = PgnReader::new(input).collect();
    assert_eq!(games.len(), 2);
    assert!(matches!(
        games[0],
        Err(PgnError {
            kind: PgnErrorKind::TooLarge { .. },
            ..
        })
    ));
    assert!(games[1].is_ok());

    // A single 16 MiB line of one "word".
    let input = streamed(vec![
        Box::new(&b"1. e4 "[..]),
        Box::new(io::repeat(b'x').take(16 << 20)),
        Box::new(&b" 1-0\n1. d4 *\n"[..]),
    ]);
    let games: Vec<_> = PgnReader::new(input).collect();
    assert_eq!(games.len(), 2);
    match &games[0] {
        Err(PgnError {
            kind: PgnErrorKind::UnexpectedToken(token),
            ..
        }) => assert!(token.len() < 300),
        other => panic!("{other:?}"),
    }
    assert!(games[1].is_ok());
}

#[test]
fn move_count_and_move_number_are_bounded() {
    let limits = PgnLimits {
        max_plies: 8,
        ..PgnLimits::default()
    };
    let text = "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 5. Nf3 *";
    let error = PgnReader::with_limits(text.as_bytes(), limits)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(error.kind, PgnErrorKind::TooManyMoves(8)));

    // Black's move would take the fullmove number past u32::MAX.
    let text = "[FEN \"6k1/8/8/8/8/8/8/6K1 b - - 0 4294967295\"]\n4294967295... Kf8 *";
    assert!(matches!(
        read_error(text).kind,
        PgnErrorKind::MoveNumberOverflow
    ));
}

/// Fails after its bytes run out, as a broken disk or pipe would.
struct Failing<'a>(&'a [u8]);

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::Error::other("disk on fire"));
        }
        let n = self.0.read(buf)?;
        Ok(n)
    }
}

#[test]
fn an_io_error_is_reported_once_and_ends_reading() {
    let games: Vec<_> = PgnReader::new(BufReader::new(Failing(b"1. e4 e5 1-0\n1. d4"))).collect();
    assert_eq!(games.len(), 2);
    assert!(games[0].is_ok());
    let error = games[1].as_ref().unwrap_err();
    assert!(matches!(error.kind, PgnErrorKind::Io(_)));
    assert_eq!(error.game, 2);
}

// ---------------------------------------------------------------------------------------------
// Writing

#[test]
fn writes_roster_extra_tags_comments_and_result() {
    let start = Position::starting();
    let moves = san_moves(&start, &["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]);
    let mut comments = vec![None; moves.len()];
    comments[0] = Some("+0.35/12 0.250s".to_owned());
    comments[6] = Some("mate".to_owned());
    let tags = [
        ("White", "staunton dev"),
        ("Black", "staunton \"base\""),
        ("TimeControl", "10+0.1"),
        ("Result", "ignored: the argument wins"),
        ("Termination", "normal"),
    ];
    let text = write_pgn(&tags, &start, &moves, &comments, "1-0").unwrap();
    assert_eq!(
        text,
        "[Event \"?\"]\n\
         [Site \"?\"]\n\
         [Date \"????.??.??\"]\n\
         [Round \"?\"]\n\
         [White \"staunton dev\"]\n\
         [Black \"staunton \\\"base\\\"\"]\n\
         [Result \"1-0\"]\n\
         [TimeControl \"10+0.1\"]\n\
         [Termination \"normal\"]\n\
         \n\
         1. e4 {+0.35/12 0.250s} 1... e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# {mate} 1-0\n\
         \n"
    );
    let back = read_one(&text);
    assert_eq!(back.tag("Black"), Some("staunton \"base\""));
    assert_eq!(back.moves, moves);
    assert_eq!(back.comments, comments);
}

#[test]
fn writes_fen_start_with_black_to_move() {
    let start = Position::from_fen("3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 40").unwrap();
    let moves = san_moves(&start, &["Rd2", "h3", "Rd1+", "Kh2"]);
    let text = write_pgn::<&str, &str>(&[], &start, &moves, &[], "*").unwrap();
    assert!(text.contains(
        "[Result \"*\"]\n[SetUp \"1\"]\n[FEN \"3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 40\"]\n\n"
    ));
    assert!(
        text.ends_with("\n40... Rd2 41. h3 Rd1+ 42. Kh2 *\n\n"),
        "{text}"
    );
}

#[test]
fn wraps_movetext_at_80_columns_breaking_long_comments_between_words() {
    let start = Position::starting();
    let mut game = Game::standard();
    let mut comments = Vec::new();
    for san in ["Nf3", "Nf6", "Ng1", "Ng8"].iter().cycle().take(60) {
        let mv = parse_san(game.position(), san).unwrap();
        game.play(mv).unwrap();
        comments.push(Some(format!(
            "a rather long engine comment {} with several words",
            comments.len()
        )));
    }
    let text = write_pgn::<&str, &str>(&[], &start, game.moves(), &comments, "1/2-1/2").unwrap();
    assert!(text.lines().all(|line| line.chars().count() <= LINE_WIDTH));
    assert!(text.lines().filter(|l| l.len() > 70).count() > 10, "{text}");
    let back = read_one(&text);
    assert_eq!(back.comments, comments);
}

#[test]
fn from_game_fills_result_and_termination_from_the_outcome() {
    let mut game = Game::standard();
    for san in ["f3", "e5", "g4", "Qh4"] {
        let mv = parse_san(game.position(), san).unwrap();
        game.play(mv).unwrap();
    }
    let outcome = game.outcome().unwrap();
    let mut pgn = PgnGame::from_game(&game, Some(&outcome));
    pgn.set_tag("White", "base");
    pgn.set_tag("Event", "regression");
    pgn.comments[3] = Some("-M1/1 0.001s".to_owned());
    let text = pgn.to_pgn().unwrap();
    assert!(text.starts_with("[Event \"regression\"]\n"), "{text}");
    assert!(text.contains("[Result \"0-1\"]\n"));
    assert!(text.contains("[Termination \"normal\"]\n"));
    assert!(text.contains("2. g4 Qh4# {-M1/1 0.001s} 0-1\n"), "{text}");

    let mut lost = PgnGame::from_game(&game, None);
    assert_eq!(lost.result, "*");
    lost.set_outcome(&Outcome::win(Color::White, Termination::TimeForfeit));
    assert_eq!(lost.tag("Termination"), Some("time forfeit"));
    assert_eq!(lost.tag("Result"), Some("1-0"));

    let mut back = read_one(&pgn.to_pgn().unwrap());
    back.line = 0;
    assert_eq!(back.moves, pgn.moves);
    assert_eq!(back.comments, pgn.comments);
    assert_eq!(back.tag("Termination"), Some("normal"));
}

#[test]
fn a_read_game_writes_back_to_the_same_game() {
    for game in read_all(CONSTRUCTS.as_bytes())
        .into_iter()
        .chain(read_all(FAMOUS.as_bytes()))
    {
        let game = game.unwrap();
        let mut back = read_one(&game.to_pgn().unwrap());
        back.line = game.line;
        assert_eq!(back.start, game.start);
        assert_eq!(back.moves, game.moves);
        assert_eq!(back.comments, game.comments);
        assert_eq!(back.leading_comment, game.leading_comment);
        assert_eq!(back.result, game.result);
        for (name, value) in &game.tags {
            if name != "SetUp" {
                assert_eq!(back.tag(name), Some(value.as_str()), "{name}");
            }
        }
    }
}

#[test]
fn the_writer_refuses_an_illegal_move() {
    let start = Position::starting();
    let moves = san_moves(
        &Position::from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").unwrap(),
        &["O-O"],
    );
    assert!(write_pgn::<&str, &str>(&[], &start, &moves, &[], "*").is_err());
}

// ---------------------------------------------------------------------------------------------
// Properties

const PLAYOUT_STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

/// A seeded random game: the same seed always gives the same moves.
fn playout(start: &Position, seed: u64, plies: usize) -> Vec<Move> {
    let mut state = seed | 1;
    let mut pos = *start;
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = legal[(state % legal.len() as u64) as usize];
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    moves
}

fn comment() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(None),
        1 => Just(Some(String::new())),
        2 => "[-+]?[0-9]{1,2}\\.[0-9]{2}/[0-9]{1,2} [0-9]\\.[0-9]{3}s".prop_map(Some),
        1 => "[a-zA-Z0-9%:;()\\[\\].,!?#=+-]{1,12}( [a-zA-Z0-9%:;()\\[\\].,!?#=+-]{1,12}){0,8}"
            .prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn written_games_read_back_unchanged(
        start in prop::sample::select(PLAYOUT_STARTS),
        seed in any::<u64>(),
        plies in 0usize..160,
        comments in prop::collection::vec(comment(), 160),
        leading in comment(),
        result in prop::sample::select(&RESULT_TOKENS[..]),
        event in "[ -~]{0,30}",
    ) {
        let start = Position::from_fen(start).unwrap();
        let mut game = PgnGame::new(start);
        game.moves = playout(&start, seed, plies);
        game.comments = comments[..game.moves.len()].to_vec();
        game.leading_comment = leading;
        game.result = result;
        game.set_tag("Event", &event);
        game.set_tag("Round", "7.1");
        game.set_tag("PlyCount", &game.moves.len().to_string());

        let text = game.to_pgn().unwrap();
        for line in text.lines().filter(|l| !l.starts_with('[')) {
            prop_assert!(line.chars().count() <= LINE_WIDTH, "{} columns: {}", line.len(), line);
        }
        // Two copies, so the second game is read after the first.
        let doubled = format!("{text}{text}");
        let back: Vec<PgnGame> = read_all(doubled.as_bytes())
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back.len(), 2);
        for read in back {
            prop_assert_eq!(read.start, game.start);
            prop_assert_eq!(&read.moves, &game.moves);
            prop_assert_eq!(&read.comments, &game.comments);
            prop_assert_eq!(&read.leading_comment, &game.leading_comment);
            prop_assert_eq!(read.result, game.result);
            prop_assert_eq!(read.tag("Event"), Some(event.as_str()));
            prop_assert_eq!(read.tag("Result"), Some(result));
            prop_assert_eq!(read.tags[..7].iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
                ["Event", "Site", "Date", "Round", "White", "Black", "Result"]);
        }
    }
}

/// Pieces of PGN syntax, so random inputs reach deep into the reader instead of failing on the
/// first byte.
const FRAGMENTS: &[&str] = &[
    "[",
    "]",
    "\"",
    "\\",
    "{",
    "}",
    "(",
    ")",
    ";",
    "$",
    "%",
    "\n",
    "\r\n",
    " ",
    "\t",
    ".",
    "...",
    "1.",
    "12...",
    "e4",
    "e5",
    "Nf3",
    "O-O",
    "0-0",
    "exd6",
    "e8=Q",
    "Kxf7#",
    "--",
    "!?",
    "$14",
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "Event",
    "FEN",
    "SetUp",
    "\"1\"",
    "[FEN \"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3\"]\n",
    "[FEN \"6k1/8/8/8/8/8/8/6K1 b - - 0 4294967295\"]\n",
    "[SetUp \"1\"]",
    "[Event \"x\"]\n",
    "\u{feff}",
    "\u{0}",
    "\u{ff}",
    "é",
    "4294967295...",
    "Kf8",
    "exf6",
    "e.p.",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn no_bytes_make_the_reader_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let games = read_all(&bytes);
        // Every game or error consumed at least one byte.
        prop_assert!(games.len() <= bytes.len() + 1);
    }

    #[test]
    fn no_pgn_like_text_makes_the_reader_panic(
        parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..200)
    ) {
        let text = parts.concat();
        let limits = PgnLimits { max_game_text_bytes: 64, max_plies: 10 };
        for games in [read_all(text.as_bytes()), PgnReader::with_limits(text.as_bytes(), limits).collect()] {
            prop_assert!(games.len() <= text.len() + 1);
            for game in games.into_iter().flatten() {
                // What the reader accepts, the writer can write and the reader read again.
                let again = read_one(&game.to_pgn().unwrap());
                prop_assert_eq!(again.moves, game.moves);
            }
        }
    }
}
