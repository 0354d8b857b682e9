//! `arbiter datagen` end to end: the positions file it writes, read back as Texel reads it;
//! checked against the games it stored and against python-chess; and a run killed with
//! kill -9 and rerun, which must end with the file an uninterrupted run writes.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{arbiter, text, BOOK};
use arbiter_rules::pgn::PgnReader;
use arbiter_store::{Location, RunKind, RunSpec, Store};
use arbiter_tune::positions::{positions_of, read_positions, Filter};

/// A short run: fast games, two at a time, from the shipped book.
fn datagen_args<'a>(games: &'a str, seed: &'a str) -> Vec<&'a str> {
    vec![
        "datagen",
        "--games",
        games,
        "--nodes",
        "300",
        "--concurrency",
        "2",
        "--seed",
        seed,
        "--book",
        BOOK,
        "--output",
        "out/positions.txt",
        "--store",
        "dg.db",
        "--pgnout",
        "out/games.pgn",
        "--quiet",
    ]
}

#[test]
fn positions_read_back_unique_and_labelled_with_their_games_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(&datagen_args("6", "17"), dir.path());
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("Games: 6 (run 1, datagen, seed 17)"),
        "{stdout}"
    );

    let positions = read_positions(&dir.path().join("out/positions.txt"), &Filter::default())
        .expect("the positions file reads back");
    let written: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Positions: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a Positions line");
    assert_eq!(positions.len() as u64, written);
    assert!(written > 100, "6 games give more than {written} positions");

    // Each position once; each labelled with the result of the first stored game that kept it.
    let pgn = std::fs::read(dir.path().join("out/games.pgn")).unwrap();
    let mut label = HashMap::new();
    let mut results = Vec::new();
    for game in PgnReader::new(pgn.as_slice()) {
        let game = game.unwrap();
        results.push(game.result);
        for p in positions_of(&game, &Filter::default()) {
            label.entry(p.position.hash()).or_insert(p.result);
        }
    }
    assert_eq!(results.len(), 6);
    assert!(results.iter().all(|r| *r != "*"));
    assert_eq!(
        label.len(),
        positions.len(),
        "every kept position is written once"
    );
    for p in &positions {
        assert_eq!(
            label.get(&p.position.hash()),
            Some(&p.result),
            "{}",
            p.position.fen()
        );
    }
    // One generated opening per game, beside the output.
    let book = std::fs::read_to_string(dir.path().join("out/positions.book.epd")).unwrap();
    assert_eq!(book.lines().count(), 6);

    // python-chess reads the same games into the same file, when it is installed.
    let oracle = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/positions-oracle.py"
        ))
        .args(["out/games.pgn", "--dedup"])
        .current_dir(dir.path())
        .output();
    match oracle {
        Ok(oracle) if oracle.status.success() => {
            let ours = std::fs::read_to_string(dir.path().join("out/positions.txt")).unwrap();
            assert_eq!(text(&oracle.stdout), ours, "python-chess disagrees");
        }
        Ok(oracle) => eprintln!(
            "skipped the python-chess comparison: {}",
            text(&oracle.stderr).lines().last().unwrap_or_default()
        ),
        Err(e) => eprintln!("skipped the python-chess comparison: python3: {e}"),
    }
}

/// Pairs committed so far in the run called `datagen` of the store at `path` (0 before the run
/// exists).
fn committed_pairs(path: &Path) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let Ok(store) = Store::open_existing(&Location::Sqlite(path.to_owned())).await else {
            return 0;
        };
        let pairs = match store.find_run_by_name("datagen").await {
            Ok(Some(run)) => store.totals(run.id).await.map_or(0, |t| t.pairs),
            _ => 0,
        };
        store.close().await;
        pairs
    })
}

#[test]
fn a_killed_run_resumes_to_the_positions_of_an_uninterrupted_one() {
    // Enough games that the poller below (which opens the store each time) sees the run
    // mid-way even in a release build on an idle machine.
    let games = "200";
    let whole = tempfile::tempdir().unwrap();
    let out = arbiter(&datagen_args(games, "23"), whole.path());
    assert!(out.status.success(), "{}", text(&out.stderr));

    let killed = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(datagen_args(games, "23"))
        .current_dir(killed.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL: no clean-up of any kind) once some pairs are in the store.
    let db = killed.path().join("dg.db");
    let mut at_kill = 0;
    for _ in 0..6000 {
        at_kill = committed_pairs(&db);
        if at_kill >= 1 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        (1..100).contains(&at_kill),
        "killed with {at_kill} of 100 pairs in the store (the run should be mid-way)"
    );
    assert!(!killed.path().join("out/positions.txt").exists());

    let rerun = arbiter(&datagen_args(games, "23"), killed.path());
    let stderr = text(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert!(stderr.contains("resumed"), "{stderr}");
    let expected = std::fs::read_to_string(whole.path().join("out/positions.txt")).unwrap();
    let resumed = std::fs::read_to_string(killed.path().join("out/positions.txt")).unwrap();
    assert_eq!(resumed.lines().count(), expected.lines().count());
    assert!(resumed == expected, "the resumed run wrote other positions");
}

#[test]
fn bad_settings_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.toml"), "games = 5\nrandom_plys = 3\n").unwrap();
    let out = arbiter(&["datagen", "d.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("d.toml") && stderr.contains("unknown field `random_plys`"),
        "{stderr}"
    );

    let out = arbiter(&["datagen", "--games", "0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("error: games: must be at least 1"));

    let out = arbiter(&["datagen", "--concurrency", "0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: concurrency: 0: expected 1 to"),
        "{stderr}"
    );

    let out = arbiter(
        &["datagen", "--book", "missing.epd", "--games", "2"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("opening book missing.epd"), "{stderr}");
    assert!(
        !dir.path().join("arbiter.db").exists(),
        "nothing is created for settings that cannot run"
    );
}

/// An odd number of games is played as asked: the last is a unit of one game, stored, counted
/// and exported like the others, and nothing speaks of the runner's rounds.
#[test]
fn an_odd_game_count_is_played_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(&datagen_args("3", "5"), dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(!stderr.contains("round"), "{stderr}");
    assert!(
        stdout.contains("Games: 3 (run 1, datagen, seed 5)"),
        "{stdout}"
    );
    // Its facts, stored with it for reports: self-play of three games, on no clock.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let facts = runtime.block_on(async {
        let store = Store::open_existing(&Location::Sqlite(dir.path().join("dg.db")))
            .await
            .unwrap();
        let run = store.find_run_by_name("datagen").await.unwrap().unwrap();
        store.close().await;
        run.spec.facts.expect("stored facts")
    });
    assert_eq!(
        (facts.kind, facts.games_planned, facts.clocks),
        (RunKind::Datagen, 3, vec![None, None])
    );
}

/// A datagen run records the staunton that plays it by the bench it prints, and a run stored
/// by an arbiter whose staunton printed another count is not continued: its positions would
/// mix two engines' play in one data set.
#[test]
fn a_datagen_run_is_continued_only_by_the_staunton_that_started_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(&datagen_args("2", "7"), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bench = staunton::bench::run(
        &staunton::Params::default(),
        staunton::bench::DEFAULT_BENCH_DEPTH,
        |_, _, _| {},
    )
    .nodes;
    let pinned = format!("bench = {bench}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_existing(&Location::Sqlite(dir.path().join("dg.db")))
            .await
            .unwrap();
        let run = store.find_run_by_name("datagen").await.unwrap().unwrap();
        let config = &run.spec.config;
        assert_eq!(config.matches(&pinned).count(), 2, "{config}");
        // The same run, unfinished, as an arbiter whose staunton printed another count stored it.
        let other = config
            .replace(&pinned, &format!("bench = {}", bench + 1))
            .replace("name = \"datagen\"", "name = \"other\"");
        let spec = RunSpec::head_to_head(
            "other".into(),
            run.spec.seed,
            other,
            "staunton-a".into(),
            "staunton-b".into(),
            1,
        );
        store.create_run(&spec).await.unwrap();
        store.close().await;
    });
    let mut args = datagen_args("2", "7");
    args.extend(["--name", "other"]);
    let refused = arbiter(&args, dir.path());
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    let counts = format!(
        "its bench here is {bench} nodes, but the run expects {}",
        bench + 1
    );
    assert!(stderr.contains(&counts), "{stderr}");
    assert!(!dir.path().join("out/positions.txt.old").exists());
}
