//! What scripts written for cutechess-cli and fastchess expect of a command line (issue 10),
//! through the real binary: the flags mean what they mean there.

use std::path::Path;
use std::process::Output;

use crate::common::{self, text, write_script, BOOK};
use arbiter_records::entries::{self, GameEntry, RunOutcome, RunSummary};
use arbiter_store::{Location, Store};
use futures_util::StreamExt;

/// `arbiter` with a command line written as one string (no argument holds a space).
fn arbiter(line: &str, dir: &Path) -> Output {
    common::arbiter(&line.split_whitespace().collect::<Vec<_>>(), dir)
}

/// Two in-process staunton engines at a few hundred nodes, from the shipped book.
fn staunton_match(extra: &str) -> String {
    format!(
        "-engine builtin=staunton name=dev -engine builtin=staunton name=base param.knight_mg=250 \
         -each tc=inf nodes=300 hash=0 -maxmoves 60 -openings file={BOOK} order=random \
         -store runs.db {extra}"
    )
}

/// Per run of the store: its name, seed and its games' opening FENs in order.
fn runs(dir: &Path) -> Vec<(String, u64, Vec<String>)> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.join("runs.db").display().to_string());
        let store = Store::open_existing(&location).await.unwrap();
        let mut out = Vec::new();
        for run in store.runs().await.unwrap() {
            let mut games = store.games(run.id);
            let mut openings = Vec::new();
            while let Some(game) = games.next().await {
                openings.push(game.unwrap().game.opening_fen);
            }
            out.push((run.spec.name, run.spec.seed, openings));
        }
        out
    })
}

/// Items 7 and 8: rerunning a finished command starts a new run, with a seed of its own
/// (so a random book order differs), and says so; `-srand` reproduces a run; an unfinished
/// run is resumed with its seed.
#[test]
fn a_finished_run_does_not_swallow_the_next_and_each_run_draws_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let line = staunton_match("-rounds 6 -concurrency 2");
    for _ in 0..2 {
        let out = arbiter(&line, dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let out = arbiter(&line, dir.path());
    let first_line = text(&out.stderr).lines().next().unwrap().to_owned();
    assert!(
        first_line.contains("-3): ") && first_line.contains("new run (run 2 of this configuration"),
        "{first_line}"
    );
    let stored = runs(dir.path());
    assert_eq!(stored.len(), 3);
    assert!(stored[1].0.ends_with("-2"), "{:?}", stored[1].0);
    assert_ne!(stored[0].1, stored[1].1, "each new run draws a seed");
    assert_ne!(
        stored[0].2, stored[1].2,
        "so a random order differs between runs"
    );
    assert!(
        first_line.contains(&format!("seed {}", stored[2].1)),
        "{first_line}"
    );

    // The printed seed, given back, plays the same openings.
    let seed = stored[0].1;
    let out = arbiter(&format!("{line} -srand {seed}"), dir.path());
    assert_eq!(out.status.code(), Some(0));
    let stored = runs(dir.path());
    assert_eq!(stored[3].1, seed);
    assert_eq!(
        stored[3].2, stored[0].2,
        "-srand reproduces the run's openings"
    );
}

/// Item 2: without `-recover` an engine that crashes ends the match, as in cutechess and
/// fastchess; with it the engine is restarted and the match goes on.
#[test]
fn a_crash_ends_the_match_unless_recover_is_given() {
    let dir = tempfile::tempdir().unwrap();
    // A UCI engine of a few lines that crashes when asked to think.
    let engine = dir.path().join("crasher.sh");
    write_script(
        &engine,
        "#!/bin/sh\nwhile read line; do\n  case \"$line\" in\n    uci) echo 'id name crasher'; \
         echo uciok;;\n    isready) echo readyok;;\n    go*) exit 3;;\n    quit) exit 0;;\n  \
         esac\ndone\n",
    );
    let line = format!(
        "-engine cmd={} name=crasher -engine builtin=staunton name=staunton \
         -each tc=inf nodes=200 hash=0 -rounds 3 -store runs.db",
        engine.display()
    );
    let outputs = "-pgnout out.pgn -epdout out.epd -jsonl out.jsonl";
    let out = arbiter(&format!("{line} {outputs}"), dir.path());
    let stderr = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("recover is off"), "{stderr}");
    // Issue 18, items 7 and 21: the game the crash stopped the run in is on the console, and
    // so in every export (marked as not counted: its pair is incomplete), and the message names
    // the game and the position the engine was asked about.
    assert_eq!(stdout.matches("Finished game").count(), 1, "{stdout}");
    assert!(
        stdout.contains("Score of crasher vs staunton: 0 - 1 - 0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Player: crasher\n  Timeouts: 0\n  Crashed: 1"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "game 1 (crasher vs staunton): crasher (white): White disconnects, in \
             rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        ),
        "{stderr}"
    );
    let pgn = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 1, "{pgn}");
    assert!(pgn.contains("[Termination \"abandoned\"]"), "{pgn}");
    assert!(pgn.contains("{not counted (run 1)"), "{pgn}");
    let epd = std::fs::read_to_string(dir.path().join("out.epd")).unwrap();
    assert_eq!(epd.lines().count(), 1, "{epd}");
    assert!(
        epd.contains("id \"game 1\"; c0 \"crasher vs staunton: 0-1 abandoned\"; c1 \"not counted"),
        "{epd}"
    );
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len(), 2, "the game and the summary: {jsonl}");
    let game: GameEntry = serde_json::from_str(lines[0]).unwrap();
    assert_eq!((game.game, game.termination.as_str()), (1, "abandoned"));
    assert!(
        lines[0].contains("\"uncounted\":\"not counted (run 1)"),
        "{jsonl}"
    );
    let summary: RunSummary = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(summary.verdict, RunOutcome::Stopped);
    // Rerun, the same file is recognised as the run's export: rebuilt, not moved aside.
    let out = arbiter(&format!("{line} {outputs} -recover"), dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("moved to"),
        "{}",
        text(&out.stderr)
    );
    let pgn = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 6, "{pgn}");
    assert!(!pgn.contains("not counted"), "{pgn}");

    let out = arbiter(&format!("{line} -recover"), dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(stdout.matches("Finished game").count(), 6, "{stdout}");
    assert_eq!(stdout.matches(" disconnects}").count(), 6, "{stdout}");
    assert!(
        stdout.contains("Score of crasher vs staunton: 0 - 6 - 0"),
        "{stdout}"
    );
}

/// Item 3: time controls as fastchess's README writes them (`s` suffixes), and a fixed time
/// per move with one, are played, and the PGN tag is written as both tools write it.
#[test]
fn time_controls_with_seconds_suffixes_are_played() {
    let dir = tempfile::tempdir().unwrap();
    for (limit, tag) in [("tc=2+0.02s", "2+0.02"), ("st=0.02s", "0.02/move")] {
        let line = format!(
            "-engine builtin=staunton name=a -engine builtin=staunton name=b -each {limit} \
             hash=0 -maxmoves 10 -rounds 1 -store runs.db -pgnout out.pgn -recover"
        );
        let out = arbiter(&line, dir.path());
        assert_eq!(out.status.code(), Some(0), "{limit}: {}", text(&out.stderr));
        let pgn = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
        assert_eq!(
            pgn.matches(&format!("[TimeControl \"{tag}\"]")).count(),
            2,
            "{limit}: {pgn}"
        );
    }
}

/// Item 5: `-ratinginterval`, `-scoreinterval`, `-report penta=` and `-output format=fastchess`
/// shape the stream as they do in the two tools: interim blocks every N games, the same block
/// once at the end, the pentanomial line when asked. Issue 18, item 18: with pentanomial
/// reports fastchess counts the interval in pairs (its `shouldPrintRatingInterval` takes the
/// pair's number), so 10 games at `-ratinginterval 2` print blocks after pairs 2 and 4 and
/// one at the end: 3, not 5.
#[test]
fn interim_reports_come_at_the_asked_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let count_in = |rounds: u64, flags: &str, pattern: &str| {
        let out = arbiter(
            &staunton_match(&format!("-rounds {rounds} {flags}")),
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{flags}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.ends_with("Finished match\n"), "{stdout}");
        stdout.matches(pattern).count()
    };
    let count = |flags: &str, pattern: &str| count_in(4, flags, pattern);
    let fastchess = "-output format=fastchess";
    let results = "Results of dev vs base (300 nodes, 1t, 0MB, quick.epd):";
    assert_eq!(
        count_in(5, &format!("{fastchess} -ratinginterval 2"), results),
        3,
        "pairs 2 and 4, and the end"
    );
    assert_eq!(
        count_in(
            5,
            &format!("{fastchess} -ratinginterval 2 -report penta=true"),
            results
        ),
        3
    );
    // Without pentanomial reports fastchess counts games, as cutechess does: 4 and 8 of 8.
    assert_eq!(
        count(
            &format!("{fastchess} -ratinginterval 4 -report penta=false"),
            "Games: 8, Wins: "
        ),
        1
    );
    assert_eq!(
        count(
            &format!("{fastchess} -ratinginterval 4 -report penta=false"),
            "--------------------------------------------------\nResults of"
        ),
        2
    );
    assert_eq!(count(&format!("{fastchess} -ratinginterval 4"), results), 1);
    assert_eq!(count(&format!("{fastchess} -ratinginterval 3"), results), 2);
    assert_eq!(count(&format!("{fastchess} -ratinginterval 0"), results), 1);
    assert_eq!(
        count(fastchess, results),
        4,
        "arbiter's default: every pair"
    );
    assert_eq!(
        count(&format!("{fastchess} -ratinginterval 0"), "Ptnml(0-2): ["),
        1
    );
    let no_penta = format!("{fastchess} -ratinginterval 0 -report penta=false");
    assert_eq!(count(&no_penta, "Ptnml"), 0);
    assert_eq!(count(&no_penta, "Games: 8, Wins: "), 1);
    assert_eq!(
        count(fastchess, "Score of"),
        0,
        "fastchess prints no score lines"
    );
    assert_eq!(count("-scoreinterval 2", "Score of dev vs base: "), 4);
    assert_eq!(count("-scoreinterval 0 -ratinginterval 0", "Score of"), 0);
    assert_eq!(count("-ratinginterval 0", "Elo difference: "), 1);
    // cutechess counts games whatever the report: 4 and 8 of 8.
    assert_eq!(count("-ratinginterval 4", "Elo difference: "), 2);
    assert_eq!(
        count("", "Elo difference: "),
        4,
        "arbiter's default: every pair"
    );
}

/// Item 6: `-ping-ms N`: an engine that answers `isready` more slowly than N ms is treated as
/// stalled (it loses the game), as in fastchess; without the flag it plays.
#[test]
fn ping_ms_treats_a_slow_readyok_as_a_stall() {
    let dir = tempfile::tempdir().unwrap();
    // Stockfish behind a pipe that holds every isready back for 300 ms.
    let engine = dir.path().join("slow-ready.sh");
    write_script(
        &engine,
        "#!/bin/sh\n(while read -r line; do\n  [ \"$line\" = isready ] && sleep 0.3\n  \
         echo \"$line\"\n  [ \"$line\" = quit ] && break\ndone) | /usr/games/stockfish\n",
    );
    let line = |extra: &str| {
        format!(
            "-engine cmd={} name=slow -engine builtin=staunton name=staunton \
             -each tc=inf nodes=500 hash=0 -maxmoves 20 -rounds 1 -recover -store runs.db {extra}",
            engine.display()
        )
    };
    let out = arbiter(&line("-ping-ms 100"), dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        stdout.matches("'s connection stalls}").count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("Score of slow vs staunton: 0 - 2 - 0"),
        "{stdout}"
    );

    let out = arbiter(&line(""), dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(stdout.matches("connection stalls").count(), 0, "{stdout}");
}

/// Issue 18, item 12: a move without a clock is held to `-move-timeout` whoever plays it:
/// Stockfish over UCI and staunton in process, both at depth 40, each stall on their first
/// move as White and lose that game, scored the same way. Before, Stockfish alone was held to
/// a hidden minute and staunton searched on.
#[test]
fn the_move_timeout_holds_uci_and_in_process_players_alike() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        "-engine cmd=/usr/games/stockfish name=sf -engine builtin=staunton name=staunton \
         -each tc=inf depth=40 hash=0 -move-timeout 0.3 -rounds 1 -recover -store runs.db \
         -pgnout file=games.pgn -log file=run.log",
        dir.path(),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.contains("Finished game 1 (sf vs staunton): 0-1 {White's connection stalls}"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Finished game 2 (staunton vs sf): 0-1 {White's connection stalls}"),
        "{stdout}"
    );
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Termination \"stalled connection\"]").count(),
        2,
        "{pgn}"
    );
    // The run's log (at its default level, warn) says why, for each: the same fault.
    let log = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    for (game, players, engine) in [
        (1, "sf vs staunton", "sf"),
        (2, "staunton vs sf", "staunton"),
    ] {
        let fault = format!(
            " WARN game {game} ({players}): {engine} (white): White's connection stalls, in \
             {start}: no bestmove within 0.3 s"
        );
        assert!(log.contains(&fault), "{fault}: {log}");
    }
    // A bad value is refused before anything starts, naming the flag.
    let out = arbiter(&staunton_match("-move-timeout -1"), dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("-move-timeout"),
        "{}",
        text(&out.stderr)
    );
}

/// Issue 18, item 17: `-log file=F engine=true` writes every line each engine was sent and
/// wrote, with its time, game and direction; `level` filters arbiter's own messages; without
/// `engine=true` no engine line is written; `append=false` starts the file afresh; `compress`
/// is refused rather than ignored.
#[test]
fn the_log_holds_every_engine_line_of_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let line = |log: &str| {
        format!(
            "-engine cmd=/usr/games/stockfish name=sf -engine cmd=/usr/games/stockfish name=sf2 \
             -each tc=inf nodes=2000 -maxmoves 4 -rounds 1 -store runs.db -srand 1 {log}"
        )
    };
    let out = arbiter(
        &line("-log file=engines.log level=info engine=true append=false"),
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(dir.path().join("engines.log")).unwrap();
    // `[HH:MM:SS.micro] game N ENGINE --> line`
    let has = |game: u64, engine: &str, arrow: &str, text: &str| {
        log.lines().any(|l| {
            l.len() > 18
                && l.as_bytes()[0] == b'['
                && l[16..].starts_with(&format!("] game {game} {engine} {arrow} {text}"))
        })
    };
    for engine in ["sf", "sf2"] {
        assert!(has(1, engine, "-->", "uci"), "{engine}: {log}");
        assert!(has(1, engine, "<--", "uciok"), "{engine}: {log}");
        assert!(has(1, engine, "<--", "readyok"), "{engine}: {log}");
        for game in [1, 2] {
            assert!(has(game, engine, "-->", "ucinewgame"), "{game} {engine}");
            assert!(
                has(game, engine, "-->", "position startpos"),
                "{game} {engine}"
            );
            assert!(has(game, engine, "-->", "go nodes 2000"), "{game} {engine}");
            assert!(has(game, engine, "<--", "info depth"), "{game} {engine}");
            assert!(has(game, engine, "<--", "bestmove "), "{game} {engine}");
        }
    }
    assert!(log.contains(" INFO Finished game 2 (sf2 vs sf): "), "{log}");
    let lines = log.lines().count();

    // Appended by default (fastchess's default); the default level, warn, keeps the games'
    // INFO lines out; without engine=true no engine line is written.
    let out = arbiter(&line("-log file=engines.log"), dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(dir.path().join("engines.log")).unwrap();
    assert_eq!(
        log.lines().count(),
        lines,
        "nothing at warn, no engine lines: {log}"
    );
    let out = arbiter(&line("-log file=engines.log append=false"), dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(dir.path().join("engines.log")).unwrap();
    assert_eq!(log, "", "started afresh, and nothing to say at warn");

    let out = arbiter(&line("-log file=engines.log compress=true"), dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("plain text only"),
        "{}",
        text(&out.stderr)
    );
}

/// The stored games' PGN of the only run in the store.
fn pgn_of_run(dir: &Path) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.join("runs.db").display().to_string());
        let store = Store::open_existing(&location).await.unwrap();
        let run = store.runs().await.unwrap().pop().unwrap().id;
        let mut games = store.games(run);
        let mut pgn = Vec::new();
        while let Some(game) = games.next().await {
            pgn.push(game.unwrap().game.pgn);
        }
        pgn
    })
}

fn tag<'a>(pgn: &'a str, name: &str) -> &'a str {
    let start = pgn.find(&format!("[{name} \"")).expect(name) + name.len() + 3;
    &pgn[start..start + pgn[start..].find('"').unwrap()]
}

/// Books as both tools play them: EPD with Black to move, random order using every opening
/// equally often, PGN books cut to a number of plies with `{book}` comments; and item 12's
/// tags: `Round` is the pair, the book entry names no folder of the user's disk.
#[test]
fn books_are_used_evenly_and_tagged_as_fastchess_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("book.epd"),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
         rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -\n\
         rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -\n",
    )
    .unwrap();
    let line = "-engine builtin=staunton name=dev -engine builtin=staunton name=base \
                -each tc=inf nodes=200 hash=0 -maxmoves 30 -rounds 8 -store runs.db \
                -openings file=book.epd order=random";
    let out = arbiter(line, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let games = pgn_of_run(dir.path());
    assert_eq!(games.len(), 16);
    for entry in 1..=4 {
        let uses = games
            .iter()
            .filter(|g| tag(g, "BookEntry") == format!("book.epd:{entry}"))
            .count();
        assert_eq!(uses, 4, "each opening twice per cycle, both colours");
    }
    let black_to_move = games
        .iter()
        .filter(|g| tag(g, "FEN").contains(" b "))
        .count();
    assert_eq!(black_to_move, 12);
    for (index, game) in games.iter().enumerate() {
        assert_eq!(tag(game, "Round"), (index / 2 + 1).to_string(), "{game}");
        assert_eq!(tag(game, "GameNumber"), (index + 1).to_string());
        assert!(!tag(game, "BookEntry").contains('/'));
    }

    // A PGN book cut at 3 plies: each game starts with three `{book}` moves.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("book.pgn"),
        "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n[Event \"b\"]\n\n1. d4 d5 2. c4 e6 *\n",
    )
    .unwrap();
    let line = "-engine builtin=staunton name=dev -engine builtin=staunton name=base \
                -each tc=inf nodes=200 hash=0 -maxmoves 30 -rounds 2 -store runs.db \
                -openings file=book.pgn format=pgn plies=3";
    let out = arbiter(line, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let games = pgn_of_run(dir.path());
    for (game, moves) in [
        (&games[0], "1. e4 {book} 1... e5 {book} 2. Nf3 {book} 2... "),
        (&games[1], "1. e4 {book} 1... e5 {book} 2. Nf3 {book} 2... "),
        (&games[2], "1. d4 {book} 1... d5 {book} 2. c4 {book} 2... "),
    ] {
        let one_line = game.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(one_line.contains(moves), "{game}");
        assert_eq!(game.matches("{book}").count(), 3, "{game}");
    }
}

/// Item 4: `-games 1` without `-repeat` plays every game from its own opening, colours
/// alternating by game, and the statistics are the games' (trinomial), as the output says.
#[test]
fn single_games_each_take_their_own_opening_with_trinomial_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        &staunton_match("-games 1 -rounds 6 -jsonl out.jsonl")
            .replace("order=random", "order=sequential"),
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("6 games, unpaired"), "{stderr}");
    assert!(!stderr.contains("Ptnml"), "{stderr}");
    let games = pgn_of_run(dir.path());
    assert_eq!(games.len(), 6);
    for (index, game) in games.iter().enumerate() {
        assert_eq!(tag(game, "BookEntry"), format!("quick.epd:{}", index + 3));
        assert_eq!(tag(game, "Round"), (index + 1).to_string());
        let white = if index % 2 == 0 { "dev" } else { "base" };
        assert_eq!(tag(game, "White"), white);
    }
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    // Every line is a typed record of the current schema.
    let lines: Vec<&str> = jsonl.lines().collect();
    for (index, line) in lines[..6].iter().enumerate() {
        let game: GameEntry = serde_json::from_str(line).unwrap();
        assert_eq!(
            (game.schema, game.game),
            (entries::SCHEMA, index as u64 + 1)
        );
        // Issue 18, item 15: the JSON names the opening as the PGN does (`quick.epd:3`), not
        // by the book's absolute path.
        assert_eq!(game.opening, tag(&games[index], "BookEntry"), "{line}");
    }
    let record: RunSummary = serde_json::from_str(lines[6]).unwrap();
    assert_eq!(record.verdict, RunOutcome::Complete);
    assert_eq!(record.results.pentanomial, None);
    let summary: serde_json::Value = serde_json::from_str(lines[6]).unwrap();
    assert_eq!(summary["model"], "trinomial");
    assert_eq!(summary["games"], 6);
    assert!(summary["pentanomial"].is_null());
}

/// Issue 18, item 20: `-games 1 -rounds 5` plays five games, not six: the last round is a unit
/// of one game, stored, exported and counted like the others, and nothing warns of a sixth.
/// In a round-robin of three engines `-games 1 -rounds 3` is nine games numbered 1 to 9, the
/// third round one game per pairing.
#[test]
fn an_odd_number_of_single_games_is_played_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        &staunton_match("-games 1 -rounds 5 -concurrency 2 -pgnout out.pgn -jsonl out.jsonl")
            .replace("order=random", "order=sequential"),
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("5 games, unpaired"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Started game 5 of 5 "), "{stdout}");
    assert!(stdout.contains("Finished game 5 "), "{stdout}");
    assert!(!stdout.contains("game 6"), "{stdout}");
    let games = pgn_of_run(dir.path());
    assert_eq!(games.len(), 5);
    let exported = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
    assert_eq!(exported.matches("[Event ").count(), 5, "{exported}");
    let rounds: Vec<&str> = games.iter().map(|g| tag(g, "Round")).collect();
    assert_eq!(rounds, ["1", "2", "3", "4", "5"]);
    assert_eq!(tag(&games[4], "White"), "dev", "colours alternate by game");
    assert_eq!(
        tag(&games[4], "BookEntry"),
        "quick.epd:7",
        "its own opening"
    );
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(summary["games"], 5);
    let points = ["wins", "draws", "losses"].map(|k| summary[k].as_u64().unwrap());
    assert_eq!(points.iter().sum::<u64>(), 5, "{summary}");

    // Run again: the finished run is found and nothing more is played.
    let again = arbiter(
        &staunton_match("-games 1 -rounds 5 -concurrency 2 -pgnout out.pgn -jsonl out.jsonl")
            .replace("order=random", "order=sequential"),
        dir.path(),
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(pgn_of_run(dir.path()).len(), 5);

    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        "-tournament round-robin -engine builtin=staunton name=a -engine builtin=staunton name=b \
         param.knight_mg=250 -engine builtin=staunton name=c param.bishop_mg=250 \
         -each tc=inf nodes=200 hash=0 -maxmoves 30 -games 1 -rounds 3 -concurrency 2 \
         -store runs.db",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("9 games, unpaired"), "{stderr}");
    let games = pgn_of_run(dir.path());
    let mut numbers: Vec<u64> = games
        .iter()
        .map(|g| tag(g, "GameNumber").parse().unwrap())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=9).collect::<Vec<_>>());
    let third_round: Vec<(&str, &str)> = games
        .iter()
        .filter(|g| tag(g, "Round") == "3")
        .map(|g| (tag(g, "White"), tag(g, "Black")))
        .collect();
    assert_eq!(
        third_round.len(),
        3,
        "one game per pairing in the last round"
    );
}

/// Item 11: engine diagnostics through the binary: a value outside the declared range and an
/// option the engine does not declare are warned about; an engine that never answers `uciok`
/// is reported as exactly that.
#[test]
fn engine_diagnostics_name_the_option_and_the_missing_uciok() {
    let dir = tempfile::tempdir().unwrap();
    let line = "-engine cmd=/usr/games/stockfish name=sf option.Hash=-16 option.Hahs=16 \
                -engine builtin=staunton name=staunton -each tc=inf nodes=300 hash=0 \
                -maxmoves 10 -rounds 1 -store runs.db";
    let out = arbiter(line, dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("engine sf: option Hash=-16 is outside the range it declares"),
        "{stderr}"
    );
    assert!(
        stderr.contains("engine sf: option \"Hahs\" is not one it declares"),
        "{stderr}"
    );

    let line = "-engine cmd=/bin/false name=mute -engine builtin=staunton name=staunton \
                -each tc=inf nodes=300 -rounds 1 -store runs.db";
    let out = arbiter(line, dir.path());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("never answered `uci` with `uciok`"),
        "{stderr}"
    );
}

/// Issue 18, item 11: a flag-based run is found by what defines its games, not by its length:
/// rerunning a killed run with another `-rounds` is refused with what changed, as a named run
/// is, instead of starting a second run beside the unfinished one.
#[test]
fn changing_rounds_of_an_unfinished_flag_run_is_refused() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let line = staunton_match("-concurrency 1");
    let args = |rounds: u64| {
        let mut args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        args.extend(["-rounds".to_owned(), rounds.to_string()]);
        args
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args(200))
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed after its first pair: an unfinished run.
    let stdout = child.stdout.take().unwrap();
    let first_block = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("Elo difference"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first_block, "the run played a pair");
    let played = runs(dir.path());
    assert_eq!(played.len(), 1);
    assert!(!played[0].2.is_empty());

    let out = common::arbiter(
        &args(400).iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("rounds: 200 -> 400"), "{stderr}");
    assert!(!text(&out.stdout).contains("Started game"));
    let after = runs(dir.path());
    assert_eq!(after.len(), 1, "no second run: {after:?}");
    assert_eq!(after[0].2, played[0].2, "nothing added");
}

/// Issue 18, item 6: a run that stops with an error (here an engine that never starts, met
/// after the first pairing of a round-robin played) leaves its exports as the store holds it,
/// the JSON lines closed by the summary of a stopped run.
#[test]
fn an_error_exit_leaves_the_exports_as_the_store_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let engine = dir.path().join("mute.sh");
    write_script(&engine, "#!/bin/sh\nexit 1\n");
    let line = format!(
        "-tournament round-robin -engine builtin=staunton name=a -engine builtin=staunton name=b \
         param.knight_mg=250 -engine cmd={} name=mute -each tc=inf nodes=200 hash=0 \
         -maxmoves 30 -rounds 2 -concurrency 1 -recover -store runs.db -pgnout out.pgn \
         -epdout out.epd -jsonl out.jsonl",
        engine.display()
    );
    let out = arbiter(&line, dir.path());
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("engine mute"), "{stderr}");
    let stored = runs(dir.path());
    assert_eq!(stored.len(), 1);
    let games = stored[0].2.len();
    assert_eq!(games, 2, "the first pairing's pair: {stderr}");
    let pgn = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), games, "{pgn}");
    let epd = std::fs::read_to_string(dir.path().join("out.epd")).unwrap();
    assert_eq!(epd.lines().count(), games, "{epd}");
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len(), games + 1, "{jsonl}");
    let summary: RunSummary = serde_json::from_str(lines[games]).unwrap();
    assert_eq!(summary.verdict, RunOutcome::Stopped);
}

/// A Polyglot book as the openings (`format=polyglot`, cut at `plies`): each game starts with the book's moves, tagged `{book}`, the entry naming the
/// line. The book is written here with the format's keys (checked in the rules crate against
/// the published ones).
#[test]
fn a_polyglot_book_opens_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let entries: [(&[&str], &str, u16); 6] = [
        (&[], "e2e4", 5),
        (&[], "d2d4", 1),
        (&["e2e4"], "c7c5", 4),
        (&["e2e4", "c7c5"], "g1f3", 1),
        (&["d2d4"], "g8f6", 1),
        (&["d2d4", "g8f6"], "c2c4", 1),
    ];
    std::fs::write(dir.path().join("book.bin"), common::polyglot_book(&entries)).unwrap();
    let line = "-engine builtin=staunton name=dev -engine builtin=staunton name=base \
                -each tc=inf nodes=200 hash=0 -maxmoves 30 -rounds 4 -store runs.db \
                -openings file=book.bin format=polyglot plies=3 order=sequential";
    let out = arbiter(line, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let games = pgn_of_run(dir.path());
    assert_eq!(games.len(), 8);
    let mut lines = std::collections::BTreeSet::new();
    for game in &games {
        let one_line = game.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(game.matches("{book}").count(), 3, "{game}");
        assert!(
            one_line.contains("1. e4 {book} 1... c5 {book} 2. Nf3 {book}")
                || one_line.contains("1. d4 {book} 1... Nf6 {book} 2. c4 {book}"),
            "{game}"
        );
        assert!(tag(game, "BookEntry").starts_with("book.bin#"), "{game}");
        lines.insert(tag(game, "BookEntry").to_owned());
    }
    assert_eq!(
        lines.len(),
        2,
        "both lines of the book are played: {lines:?}"
    );
}
