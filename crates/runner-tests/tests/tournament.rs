//! Matches end to end inside the runner: in-process staunton at small node limits, a real
//! SQLite store in a temporary folder, the exactly-once contract checked from the store.

use std::sync::Arc;
use std::time::Duration;

use arbiter_rules::pgn::PgnReader;
use arbiter_rules::uci::move_to_uci;
use arbiter_rules::RuleSet;
use arbiter_runner::adjudication::Adjudication;
use arbiter_runner::builtin::BuiltinSpec;
use arbiter_runner::openings::{Book, BookSpec};
use arbiter_runner::outputs::export_pgn;
use arbiter_runner::play::Event;
use arbiter_runner::player::{PlayerKind, PlayerSpec};
use arbiter_runner::process::{ProcessSpec, Timeouts};
use arbiter_runner::sinks::{run_match, Verdict};
use arbiter_runner::spec::{MatchSpec, PlaySpec, TournamentKind};
use arbiter_runner::tc::TimeControl;
use arbiter_store::{Location, PairKey, RunSpec, Store};
use tokio::sync::{mpsc, watch};

fn staunton(name: &str, knight: i64) -> PlayerSpec {
    let mut params = staunton::Params::default();
    params.set("knight_mg", knight).unwrap();
    PlayerSpec {
        name: name.into(),
        kind: PlayerKind::Builtin(Box::new(BuiltinSpec { params, hash_mb: 0 })),
        timeouts: Timeouts::default(),
        restart: false,
    }
}

fn spec(pairs: u64, concurrency: usize, nodes: u64) -> MatchSpec {
    let book_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd");
    let tc = TimeControl {
        nodes: Some(nodes),
        ..TimeControl::default()
    };
    MatchSpec::new(PlaySpec {
        players: vec![staunton("dev", 325), staunton("base", 250)],
        time_controls: vec![tc.clone(), tc],
        pairings: vec![[0, 1]],
        kind: TournamentKind::Match,
        time_margin: Duration::from_millis(50),
        book: Arc::new(
            Book::load(&BookSpec {
                file: Some(book_file.into()),
                ..BookSpec::default()
            })
            .unwrap(),
        ),
        pairs,
        games: 2 * pairs,
        paired: true,
        concurrency,
        adjudication: Adjudication {
            maxmoves: Some(60),
            ..Adjudication::default()
        },
        rules: RuleSet::default(),
        recover: true,
        seed: 7,
        event: "test".into(),
        site: "here".into(),
        log: None,
        handicap: None,
        drawn_game_colours: None,
    })
}

async fn open_run(dir: &std::path::Path, pairs: u64) -> (Arc<Store>, arbiter_store::RunId) {
    let store = Store::open(&Location::parse(&dir.join("runs.db").display().to_string()))
        .await
        .unwrap();
    let run = store
        .create_run(&RunSpec::head_to_head(
            "t".into(),
            7,
            String::new(),
            "dev".into(),
            "base".into(),
            pairs,
        ))
        .await
        .unwrap();
    (Arc::new(store), run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_commits_every_pair_once_and_exports_legal_games() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 6).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let summary = run_match(Arc::new(spec(6, 3, 300)), store.clone(), run, tx, cancel)
        .await
        .unwrap();
    assert_eq!(summary.verdict, Verdict::Complete);
    assert_eq!(summary.totals.pairs, 6);
    assert_eq!(
        summary.totals.wins + summary.totals.draws + summary.totals.losses,
        12
    );
    assert_eq!(summary.totals.pentanomial.iter().sum::<u64>(), 6);

    let mut finished = 0;
    while let Ok(event) = rx.try_recv() {
        if let Event::GameFinished { record, .. } = event {
            finished += 1;
            assert_eq!(record.faulted, None, "{}", record.reason);
        }
    }
    assert_eq!(finished, 12);

    let pgn = dir.path().join("out.pgn");
    assert_eq!(export_pgn(&store, run, &pgn).await.unwrap(), 12);
    let games: Vec<_> =
        PgnReader::new(std::io::BufReader::new(std::fs::File::open(&pgn).unwrap())).collect();
    assert_eq!(games.len(), 12);
    for (i, game) in games.into_iter().enumerate() {
        let game = game.unwrap_or_else(|e| panic!("game {i}: {e}"));
        // Every game replays legally and its recorded result is what the rules or the
        // adjudicator decided.
        let replay = game.to_game(RuleSet::default()).unwrap();
        assert_ne!(game.result, "*");
        let termination = game.tag("Termination").unwrap();
        if termination == "normal" {
            let outcome = replay.outcome().expect("a normal ending is a rules ending");
            assert_eq!(outcome.result_token(), game.result);
        } else {
            assert_eq!(termination, "adjudication");
        }
        // The round is the pair (as fastchess writes it); the game has its own number.
        assert_eq!(game.tag("Round").unwrap(), (i / 2 + 1).to_string());
        assert_eq!(game.tag("GameNumber").unwrap(), (i + 1).to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_and_resuming_plays_each_pair_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 8).await;
    let spec = Arc::new(spec(8, 2, 300));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (cancel_tx, cancel) = watch::channel(false);
    let first = tokio::spawn(run_match(spec.clone(), store.clone(), run, tx, cancel));
    // Interrupt after the third pair is in the store.
    let mut committed = 0;
    while let Some(event) = rx.recv().await {
        if let Event::PairCommitted { .. } = event {
            committed += 1;
            if committed == 3 {
                cancel_tx.send(true).unwrap();
                break;
            }
        }
    }
    let summary = first.await.unwrap().unwrap();
    assert_eq!(summary.verdict, Verdict::Interrupted);
    let kept = store.committed_pairs(run).await.unwrap();
    assert!(kept.len() >= 3 && kept.len() < 8, "{kept:?}");

    let (tx, _rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let summary = run_match(spec, store.clone(), run, tx, cancel)
        .await
        .unwrap();
    assert_eq!(summary.verdict, Verdict::Complete);
    assert_eq!(summary.totals.pairs, 8);
    assert_eq!(
        store.committed_pairs(run).await.unwrap(),
        (0..8).map(|index| PairKey { pairing: 0, index }).collect()
    );
    let pgn = dir.path().join("out.pgn");
    assert_eq!(export_pgn(&store, run, &pgn).await.unwrap(), 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_in_process_games_in_flight() {
    // 500 pairs with concurrency 1000: every game is in flight at once, each with its own
    // engine and hash, searching on the shared CPU pool.
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 500).await;
    let mut spec = spec(500, 1000, 40);
    spec.adjudication.maxmoves = Some(20);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let watcher = tokio::spawn(async move {
        let (mut in_flight, mut peak) = (0i64, 0i64);
        while let Some(event) = rx.recv().await {
            match event {
                Event::GameStarted { .. } => in_flight += 1,
                Event::GameFinished { .. } => in_flight -= 1,
                _ => {}
            }
            peak = peak.max(in_flight);
        }
        peak
    });
    let summary = run_match(Arc::new(spec), store, run, tx, cancel)
        .await
        .unwrap();
    assert_eq!(summary.totals.pairs, 500);
    let peak = watcher.await.unwrap();
    assert!(peak >= 900, "only {peak} games were in flight at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_stops_at_the_first_engine_fault() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 10).await;
    let mut spec = spec(10, 1, 100);
    spec.recover = false;
    spec.players[1] = PlayerSpec {
        name: "crasher".into(),
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: env!("CARGO_BIN_EXE_arbiter-fixture-engine").into(),
            args: vec!["crash=5".into()],
            ..Default::default()
        }),
        timeouts: Timeouts::default(),
        restart: false,
    };
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let summary = run_match(Arc::new(spec), store.clone(), run, tx, cancel)
        .await
        .unwrap();
    let reason = match summary.verdict {
        Verdict::Fault(reason) => reason,
        other => panic!("expected a fault stop, got {other:?}"),
    };
    assert!(
        reason.contains("crasher") && reason.contains("disconnects"),
        "{reason}"
    );
    // Issue 18, item 21: the game the engine crashed in is kept, and the message names it and
    // the position the engine was asked about, with what the engine last said and did.
    let [faulted] = &summary.uncounted[..] else {
        panic!("one uncounted game: {:?}", summary.uncounted);
    };
    assert_eq!(faulted.termination, "abandoned");
    assert!(
        reason.contains(&format!("game {} (", faulted.game_number)),
        "{reason}"
    );
    let game = PgnReader::new(faulted.pgn.as_bytes())
        .next()
        .unwrap()
        .unwrap();
    let mut end = game.start;
    for &mv in &game.moves {
        end.play_unchecked(mv);
    }
    assert!(reason.contains(&format!("in {}", end.fen())), "{reason}");
    assert!(reason.contains("exit"), "the process's end: {reason}");
    assert!(
        !store
            .committed_pairs(run)
            .await
            .unwrap()
            .contains(&PairKey {
                pairing: 0,
                index: (faulted.game_number - 1) / 2
            }),
        "its pair is incomplete, so not counted"
    );
    assert!(
        store.committed_pairs(run).await.unwrap().len() < 10,
        "the run stopped early"
    );
    assert!(
        matches!(
            store.run(run).await.unwrap().state,
            arbiter_store::RunState::Running
        ),
        "and stays resumable"
    );
}

/// Issue 18, item 16: an illegal move loses that game and the match goes on without
/// `recover`, as in cutechess and fastchess (`recover` is about restarting crashed engines).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_move_loses_the_game_and_the_match_goes_on_without_recover() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 3).await;
    let mut spec = spec(3, 2, 100);
    spec.recover = false;
    spec.players[1] = PlayerSpec {
        name: "cheater".into(),
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: env!("CARGO_BIN_EXE_arbiter-fixture-engine").into(),
            args: vec!["null=3".into()],
            ..Default::default()
        }),
        timeouts: Timeouts::default(),
        restart: false,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let summary = run_match(Arc::new(spec), store.clone(), run, tx, cancel)
        .await
        .unwrap();
    assert_eq!(summary.verdict, Verdict::Complete);
    assert_eq!(summary.totals.pairs, 3);
    assert_eq!((summary.totals.wins, summary.totals.losses), (6, 0));
    let pgn = dir.path().join("out.pgn");
    assert_eq!(export_pgn(&store, run, &pgn).await.unwrap(), 6);
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(
        text.matches("[Termination \"illegal move\"]").count(),
        6,
        "{text}"
    );
    // The reason closes the last comment (a PGN line may break inside it).
    let one_line = text.replace('\n', " ");
    assert_eq!(one_line.matches("makes an illegal move: 0000}").count(), 6);
    // The log names each game and the position the illegal move was played in.
    let mut warnings = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::Warning(text) = event {
            warnings.push(text);
        }
    }
    assert_eq!(warnings.len(), 6, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.starts_with("game ") && w.contains("illegal move: 0000, in ")),
        "{warnings:?}"
    );
}

/// staunton behind a pipe: the fixture binary running staunton's own UCI loop.
fn staunton_uci(name: &str) -> PlayerSpec {
    PlayerSpec {
        name: name.into(),
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: env!("CARGO_BIN_EXE_arbiter-fixture-engine").into(),
            args: vec!["staunton".into()],
            options: vec![("Hash".into(), "1".into())],
            ..ProcessSpec::default()
        }),
        timeouts: Timeouts::default(),
        restart: false,
    }
}

fn staunton_in_process(name: &str) -> PlayerSpec {
    PlayerSpec {
        name: name.into(),
        kind: PlayerKind::Builtin(Box::new(BuiltinSpec {
            params: staunton::Params::default(),
            hash_mb: 1,
        })),
        timeouts: Timeouts::default(),
        restart: false,
    }
}

/// The moves and result of every game of a match, by game number.
async fn games_of(players: [PlayerSpec; 2]) -> Vec<(Vec<String>, &'static str)> {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = open_run(dir.path(), 4).await;
    let mut spec = spec(4, 1, 400);
    spec.players = players.to_vec();
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let summary = run_match(Arc::new(spec), store.clone(), run, tx, cancel)
        .await
        .unwrap();
    assert_eq!(summary.totals.pairs, 4);
    let pgn = dir.path().join("out.pgn");
    export_pgn(&store, run, &pgn).await.unwrap();
    PgnReader::new(std::io::BufReader::new(std::fs::File::open(&pgn).unwrap()))
        .map(|game| {
            let game = game.unwrap();
            let moves = game.moves.iter().map(|&m| move_to_uci(Some(m))).collect();
            (moves, game.result)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_and_uci_staunton_play_the_same_games() {
    // At a fixed node count staunton is deterministic, so the three ways of seating it (both
    // in process, where whole games run on one pool thread; one in process and one behind a
    // pipe, where each in-process search goes to the pool; both behind pipes) must produce
    // the same games move for move. Concurrency 1 keeps each engine's game sequence fixed.
    let in_process = games_of([staunton_in_process("a"), staunton_in_process("b")]).await;
    let mixed = games_of([staunton_in_process("a"), staunton_uci("b")]).await;
    let uci = games_of([staunton_uci("a"), staunton_uci("b")]).await;
    assert_eq!(in_process.len(), 8);
    assert!(in_process.iter().all(|(moves, _)| moves.len() > 10));
    assert_eq!(in_process, mixed);
    assert_eq!(in_process, uci);
}
