//! `arbiter book generate|check|convert` through the real binary: a generated book is the same
//! for a seed whatever the threads, holds what its window asks, each position once; `check`
//! names every bad entry by its line; `convert` moves lines between EPD, PGN and Polyglot
//! without changing a position. Every shipped book passes `check`.

use std::path::Path;

use arbiter_rules::epd::Epd;
use arbiter_rules::pgn::PgnReader;
use arbiter_rules::Position;

use crate::common::{arbiter, polyglot_book, text};

fn ok(args: &[&str], dir: &Path) -> String {
    let out = arbiter(args, dir);
    assert!(
        out.status.success(),
        "arbiter {args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The scores (`c0 "+N cp, ..."`) and FENs of an EPD book.
fn scored(path: &Path) -> Vec<(String, i32)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let epd = Epd::parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let c0 = epd.comment(0).unwrap().to_owned();
            let cp = c0.split(' ').next().unwrap().parse().unwrap();
            (epd.position.fen(), cp)
        })
        .collect()
}

#[test]
fn a_generated_book_is_its_seeds_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let generate = |name: &str, threads: &str, count: &str, extra: &[&str]| {
        let mut args = vec![
            "book",
            "generate",
            "-o",
            name,
            "--count",
            count,
            "--seed",
            "7",
            "--nodes",
            "800",
            "--threads",
            threads,
        ];
        args.extend_from_slice(extra);
        ok(&args, dir.path())
    };
    let said = generate("one.epd", "1", "60", &[]);
    assert!(
        said.starts_with("wrote 60 positions to one.epd (seed 7)"),
        "{said}"
    );
    generate("two.epd", "2", "60", &[]);
    let one = std::fs::read(dir.path().join("one.epd")).unwrap();
    assert_eq!(one, std::fs::read(dir.path().join("two.epd")).unwrap());
    let book = scored(&dir.path().join("one.epd"));
    assert_eq!(book.len(), 60);
    assert!(
        book.iter().all(|(_, cp)| (-50..=50).contains(cp)),
        "{book:?}"
    );
    let unique: std::collections::HashSet<&String> = book.iter().map(|(fen, _)| fen).collect();
    assert_eq!(unique.len(), 60, "each position once");
    // Eight random plies from the start: White to move at move 5.
    for (fen, _) in &book {
        let fields: Vec<&str> = fen.split(' ').collect();
        assert_eq!((fields[1], fields[5]), ("w", "5"), "{fen}");
    }

    // White ahead by a band; and as PGN, each line eight plies from the start.
    generate("ahead.epd", "2", "20", &["--window", "100..200"]);
    let ahead = scored(&dir.path().join("ahead.epd"));
    assert!(
        ahead.iter().all(|(_, cp)| (100..=200).contains(cp)),
        "{ahead:?}"
    );
    generate("lines.pgn", "2", "10", &[]);
    let games: Vec<_> = PgnReader::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("lines.pgn")).unwrap(),
    ))
    .map(Result::unwrap)
    .collect();
    assert_eq!(games.len(), 10);
    assert!(games
        .iter()
        .all(|g| g.moves.len() == 8 && g.start == Position::starting()));
    // The PGN's lines end where the EPD's positions stand.
    let first = games[0].to_game(Default::default()).unwrap();
    assert_eq!(first.position().fen(), book[0].0);
}

#[test]
fn generate_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let out = arbiter(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
    };
    refused(
        &["book", "generate", "-o", "b.txt"],
        "name the book .epd or .pgn",
    );
    refused(
        &["book", "generate", "-o", "b.epd", "--window", "x"],
        "\"x\" is not a whole number",
    );
    refused(
        &["book", "generate", "-o", "b.epd", "--window", "50..-50"],
        "the low end is above the high end",
    );
    refused(
        &[
            "book",
            "generate",
            "-o",
            "b.epd",
            "--count",
            "1",
            "--nodes",
            "1",
            "--plies",
            "1",
            "--window",
            "5000..6000",
        ],
        "only 0 of 1 positions scored within 5000..6000 cp",
    );
    assert!(!dir.path().join("b.epd").exists(), "nothing written");
}

#[test]
fn check_names_every_bad_entry_and_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("book.epd"),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
         not a position\n\
         rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n\
         rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 id \"again\";\n\
         rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n\
         8/8/8/8/8/8/8/8 w - - 0 1\n",
    )
    .unwrap();
    let out = arbiter(
        &["book", "check", "book.epd", "--score-nodes", "500"],
        dir.path(),
    );
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", text(&out.stderr));
    assert!(
        said.starts_with("book.epd: epd book, 3 openings, 3 invalid, 1 duplicates"),
        "{said}"
    );
    assert!(said.contains("line 2:"), "{said}");
    assert!(said.contains("line 6:"), "the empty board: {said}");
    assert!(
        said.contains("book.epd:5") && said.contains("already over"),
        "the mate: {said}"
    );
    assert!(
        said.contains("duplicate: book.epd:4 is the position of book.epd:1"),
        "{said}"
    );
    assert!(said.contains("scores at 500 nodes"), "{said}");

    let json = arbiter(
        &[
            "book",
            "check",
            "book.epd",
            "--json",
            "--score-nodes",
            "0",
            "--pair",
            "200",
        ],
        dir.path(),
    );
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["openings"], 3);
    assert_eq!(report["invalid"].as_array().unwrap().len(), 3);
    assert!(report["scores"].is_null());
    assert!(report["lopsided"].is_array(), "{report}");

    // A clean book: 0.
    std::fs::write(
        dir.path().join("clean.epd"),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n",
    )
    .unwrap();
    ok(&["book", "check", "clean.epd"], dir.path());
}

#[test]
fn convert_keeps_every_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("games.pgn"),
        "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n[Event \"b\"]\n\n1. d4 d5 2. c4 *\n",
    )
    .unwrap();
    let said = ok(
        &["book", "convert", "games.pgn", "at2.epd", "--plies", "2"],
        dir.path(),
    );
    assert!(
        said.starts_with("wrote 2 openings from games.pgn to at2.epd"),
        "{said}"
    );
    let epd = std::fs::read_to_string(dir.path().join("at2.epd")).unwrap();
    let fens: Vec<String> = epd
        .lines()
        .map(|l| Epd::parse(l).unwrap().position.fen())
        .collect();
    assert_eq!(
        fens,
        [
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
        ]
    );
    // EPD to PGN and back: the same positions.
    ok(&["book", "convert", "at2.epd", "back.pgn"], dir.path());
    ok(&["book", "convert", "back.pgn", "again.epd"], dir.path());
    let again: Vec<String> = std::fs::read_to_string(dir.path().join("again.epd"))
        .unwrap()
        .lines()
        .map(|l| Epd::parse(l).unwrap().position.fen())
        .collect();
    assert_eq!(again, fens);

    // Polyglot to EPD: the book's lines to --plies.
    let entries: [(&[&str], &str, u16); 3] =
        [(&[], "e2e4", 2), (&[], "d2d4", 1), (&["e2e4"], "c7c5", 1)];
    std::fs::write(dir.path().join("book.bin"), polyglot_book(&entries)).unwrap();
    ok(
        &["book", "convert", "book.bin", "walked.epd", "--plies", "2"],
        dir.path(),
    );
    let mut walked: Vec<String> = std::fs::read_to_string(dir.path().join("walked.epd"))
        .unwrap()
        .lines()
        .map(|l| Epd::parse(l).unwrap().position.fen())
        .collect();
    walked.sort();
    assert_eq!(
        walked,
        [
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
        ]
    );
    let bad = arbiter(&["book", "convert", "nothing.pgn", "x.epd"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("nothing.pgn"),
        "{}",
        text(&bad.stderr)
    );
}

/// Every book the repository ships is fit to use.
#[test]
fn every_shipped_book_passes_check() {
    let openings = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openings");
    let mut checked = 0;
    let mut paths: Vec<std::path::PathBuf> = Vec::new();
    for folder in [openings.clone(), openings.join("odds")] {
        for entry in std::fs::read_dir(&folder).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    for path in paths {
        let book = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("epd" | "pgn" | "bin")
        );
        if !book {
            continue;
        }
        let out = arbiter(
            &[
                "book",
                "check",
                path.to_str().unwrap(),
                "--score-nodes",
                "0",
            ],
            &openings,
        );
        assert!(
            out.status.success(),
            "{}: {}{}",
            path.display(),
            text(&out.stdout),
            text(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 8, "the shipped books were found: {checked}");
}

/// `book show` prints a line as the handbook would, and as SAN.
#[test]
fn show_writes_a_line_in_descriptive_notation() {
    let openings = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openings");
    let said = ok(
        &[
            "book",
            "show",
            "kings-knight.pgn",
            "--notation",
            "descriptive",
        ],
        &openings,
    );
    let first = said.lines().next().unwrap();
    assert_eq!(
        first,
        "kings-knight.pgn:1  1. P-K4 P-K4 2. N-KB3 P-Q3 3. P-Q4 PxP 4. QxP N-QB3 5. B-QN5 B-Q2 \
         6. Q-Q1 B-K2 7. N-B3"
    );
    let san = ok(&["book", "show", "kings-knight.pgn"], &openings);
    assert!(
        san.starts_with("kings-knight.pgn:1  1. e4 e5 2. Nf3 d6 3. d4 exd4 4. Qxd4 Nc6"),
        "{san}"
    );
    let out = arbiter(
        &["book", "show", "kings-knight.pgn", "--notation", "x"],
        &openings,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected san or descriptive"));
}

/// A handicap match through the binary, from a shipped odds book: the giver plays White short
/// of its queen's knight in every game, the output says so, and the totals count games.
#[test]
fn a_handicap_match_gives_the_odds_in_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openings/odds/knight.epd");
    std::fs::write(
        dir.path().join("odds.toml"),
        format!(
            "name = \"odds\"\nseed = 3\nrounds = 3\npgnout = \"odds.pgn\"\n\
             [each]\ntc = \"inf\"\nnodes = 300\n\
             [[engine]]\nname = \"receiver\"\nbuiltin = \"staunton\"\n\
             [[engine]]\nname = \"giver\"\nbuiltin = \"staunton\"\n\
             [openings]\nfile = {:?}\norder = \"random\"\nodds = \"knight\"\ngiver = \"giver\"\n\
             [adjudication]\nmaxmoves = 60\n",
            book.display().to_string()
        ),
    )
    .unwrap();
    let out = arbiter(&["match", "odds.toml"], dir.path());
    let said = text(&out.stderr) + &text(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("Handicap: giver gives knight odds in every game (giver always plays white"),
        "{said}"
    );
    assert!(said.contains("6 games, unpaired"), "{said}");
    let games: Vec<_> = PgnReader::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("odds.pgn")).unwrap(),
    ))
    .map(Result::unwrap)
    .collect();
    assert_eq!(games.len(), 6);
    for game in &games {
        assert_eq!(game.tag("White"), Some("giver"));
        assert_eq!(game.tag("Black"), Some("receiver"));
        let white_knights = game
            .start
            .board()
            .by_piece(arbiter_rules::Piece {
                color: arbiter_rules::Color::White,
                role: arbiter_rules::Role::Knight,
            })
            .count();
        assert_eq!(white_knights, 1, "{:?}", game.tags);
    }
    // The same through the cutechess grammar, the odds' own start and colours alternating.
    let out = arbiter(
        &[
            "-engine",
            "builtin=staunton",
            "name=a",
            "-engine",
            "builtin=staunton",
            "name=b",
            "-each",
            "tc=inf",
            "nodes=200",
            "-maxmoves",
            "40",
            "-rounds",
            "1",
            "-openings",
            "odds=knight",
            "giver=a",
            "alternate=true",
            "-pgnout",
            "alt.pgn",
            "-store",
            "alt.db",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let games: Vec<_> = PgnReader::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("alt.pgn")).unwrap(),
    ))
    .map(Result::unwrap)
    .collect();
    assert_eq!(games[0].tag("White"), Some("a"));
    assert_eq!(
        games[0].tag("FEN"),
        Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1")
    );
    assert_eq!(games[1].tag("Black"), Some("a"));
    assert_eq!(
        games[1].tag("FEN"),
        Some("r1bqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"),
        "the giver as Black lacks its knight and has the move"
    );
}

/// The drawn-game colour rule through the binary: after each draw the same engine has White,
/// after each decisive game the other.
#[test]
fn after_a_drawn_game_its_first_player_moves_first_again() {
    let dir = tempfile::tempdir().unwrap();
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openings/balanced.epd");
    std::fs::write(
        dir.path().join("kept.toml"),
        format!(
            "name = \"kept\"\nseed = 5\ngames = 1\nrounds = 16\npgnout = \"kept.pgn\"\n\
             [each]\ntc = \"inf\"\nnodes = 400\n\
             [[engine]]\nname = \"a\"\nbuiltin = \"staunton\"\n\
             [[engine]]\nname = \"b\"\nbuiltin = \"staunton\"\nparams = {{ knight_mg = 250 }}\n\
             [openings]\nfile = {:?}\norder = \"random\"\n\
             [rules]\ncolours_after_draw = \"kept\"\n[adjudication]\nmaxmoves = 40\n",
            book.display().to_string()
        ),
    )
    .unwrap();
    ok(&["match", "kept.toml"], dir.path());
    let games: Vec<_> = PgnReader::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("kept.pgn")).unwrap(),
    ))
    .map(Result::unwrap)
    .collect();
    assert_eq!(games.len(), 16);
    let (mut kept, mut swapped) = (0, 0);
    for pair in games.windows(2) {
        let same = pair[0].tag("White") == pair[1].tag("White");
        if pair[0].result == "1/2-1/2" {
            assert!(
                same,
                "after a draw: {:?} then {:?}",
                pair[0].tags, pair[1].tags
            );
            kept += 1;
        } else {
            assert!(
                !same,
                "after a win: {:?} then {:?}",
                pair[0].tags, pair[1].tags
            );
            swapped += 1;
        }
    }
    assert!(
        kept > 0 && swapped > 0,
        "both cases seen: {kept} kept, {swapped} swapped"
    );
}

/// Every shipped match configuration is one arbiter accepts as written (checked from its text,
/// as a coordinator checks it: no file is read, no engine started).
#[test]
fn every_shipped_match_configuration_checks() {
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&configs).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // Match configurations: engines, and none of the tuners' or datagen's own sections.
        let is_match = path.extension().is_some_and(|e| e == "toml")
            && text.contains("[[engine]]")
            && !text.contains("[spsa]")
            && !text.contains("[texel]");
        if !is_match {
            continue;
        }
        let config = arbiter_runner::config::RunConfig::parse(&text, &path.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        config
            .check()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    for expected in [
        "quick.toml",
        "sprt-balanced.toml",
        "odds-knight.toml",
        "ladder.toml",
        "milestones.toml",
        "sprt-toga.toml",
        "texel-gauntlet.toml",
    ] {
        assert!(checked.iter().any(|c| c == expected), "{checked:?}");
    }
}
