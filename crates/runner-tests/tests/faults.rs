//! Misbehaving engines are the normal path: each fault ends the game as a loss for the engine
//! that caused it, with the right termination, and the runner carries on. The engines here are
//! real processes (the `arbiter-fixture-engine` binary) that misbehave on purpose.

mod common;

use std::time::Duration;

use arbiter_rules::RuleSet;
use arbiter_rules::{Color, Termination};
use arbiter_runner::adjudication::Adjudication;
use arbiter_runner::game::{play_game, GameRecord, GameSpec};
use arbiter_runner::openings::Opening;
use arbiter_runner::player::{Player, PlayerKind, PlayerSpec};
use arbiter_runner::process::{EngineFault, ProcessSpec, Timeouts, UciProcess};
use arbiter_runner::tc::TimeControl;
use arbiter_runner::uci::GoLimits;

fn fixture(args: &[&str]) -> PlayerSpec {
    let timeouts = Timeouts {
        handshake: Duration::from_millis(1500),
        ready: Duration::from_millis(1500),
        stop_grace: Duration::from_millis(500),
        unclocked_move: Some(Duration::from_millis(1500)),
        ping: None,
    };
    let name = format!("fixture {}", args.join(" "));
    common::uci_player(name, common::FIXTURE, args, &[], timeouts)
}

async fn play(white: &[&str], black: &[&str], tc: &TimeControl) -> GameRecord {
    let mut w = Player::start(&fixture(white)).await.expect("white starts");
    let mut b = Player::start(&fixture(black)).await.expect("black starts");
    w.new_game().await.unwrap();
    b.new_game().await.unwrap();
    let opening = Opening::startpos();
    let spec = GameSpec {
        opening: &opening,
        time_controls: [tc, tc],
        time_margin: Duration::from_millis(50),
        adjudication: Adjudication {
            maxmoves: Some(40),
            ..Adjudication::default()
        },
        rules: RuleSet::default(),
    };
    play_game(&mut w, &mut b, ["white", "black"], &spec).await
}

fn nodes() -> TimeControl {
    TimeControl {
        nodes: Some(1),
        ..TimeControl::default()
    }
}

#[tokio::test]
async fn crash_is_abandoned() {
    let game = play(&["crash=3"], &[], &nodes()).await;
    assert_eq!(game.outcome.termination, Termination::Abandoned);
    assert_eq!(game.outcome.winner, Some(Color::Black));
    assert_eq!(game.faulted, Some(Color::White));
    assert_eq!(game.reason, "White disconnects");
    assert_eq!(game.plies(), 4, "two moves each before the crash");
    let fault = game
        .fault
        .expect("the crash is kept for the log")
        .to_string();
    assert!(
        fault.contains("`fixture: crashing on purpose at move 3`"),
        "{fault}"
    );
}

#[tokio::test]
async fn silence_without_a_clock_is_a_stalled_connection() {
    let game = play(&[], &["hang=2"], &nodes()).await;
    assert_eq!(game.outcome.termination, Termination::StalledConnection);
    assert_eq!(game.outcome.winner, Some(Color::White));
    assert_eq!(game.reason, "Black's connection stalls");
}

#[tokio::test]
async fn silence_with_a_clock_is_a_time_forfeit() {
    let tc = TimeControl {
        clock: Some("0.5+0".parse().unwrap()),
        ..TimeControl::default()
    };
    let game = play(&["hang=2"], &[], &tc).await;
    assert_eq!(game.outcome.termination, Termination::TimeForfeit);
    assert_eq!(game.outcome.winner, Some(Color::Black));
    assert_eq!(game.reason, "White loses on time");
}

#[tokio::test]
async fn slow_engine_loses_on_time() {
    let tc = TimeControl {
        clock: Some("0.6+0".parse().unwrap()),
        ..TimeControl::default()
    };
    let game = play(&[], &["slow=250"], &tc).await;
    assert_eq!(game.outcome.termination, Termination::TimeForfeit);
    assert_eq!(game.outcome.winner, Some(Color::White));
    assert!(game.plies() >= 4, "it had time for two moves");
}

#[tokio::test]
async fn an_engine_that_always_overruns_within_the_margin_loses_on_time() {
    // At 1+0 with a 50 ms margin White always thinks for what its clock shows plus 30 ms.
    // With the clock clamped at zero it used 1.03 s, was then told `wtime 1`, spent 31 ms a
    // move and was never flagged: 2 s on a 1 s clock. Its deficit now stays on the clock:
    // -30 ms after the first move, and the second move's 31 ms passes the margin.
    let tc = TimeControl {
        clock: Some("1+0".parse().unwrap()),
        ..TimeControl::default()
    };
    let game = play(&["overrun=30"], &[], &tc).await;
    assert_eq!(
        game.outcome.termination,
        Termination::TimeForfeit,
        "{}",
        game.reason
    );
    assert_eq!(game.faulted, Some(Color::White));
    assert_eq!(game.reason, "White loses on time");
    assert!(
        game.plies() <= 4,
        "flagged within White's first three moves, not after {} plies",
        game.plies()
    );
}

#[tokio::test]
async fn every_kind_of_bad_bestmove_is_an_illegal_move() {
    for (fault, shown) in [
        ("illegal=2", "e1e5"),
        ("none=1", "(none)"),
        ("null=3", "0000"),
        ("a1a1=2", "a1a1"),
        ("garbage=1", "~~~garbage~~~"),
        ("empty=2", "(empty)"),
    ] {
        let game = play(&[fault], &[], &nodes()).await;
        assert_eq!(
            game.outcome.termination,
            Termination::IllegalMove,
            "{fault}"
        );
        assert_eq!(game.outcome.winner, Some(Color::Black), "{fault}");
        assert_eq!(
            game.reason,
            format!("White makes an illegal move: {shown}"),
            "{fault}"
        );
    }
}

#[tokio::test]
async fn noise_and_long_lines_are_ignored() {
    let game = play(&["noisy"], &["noisy"], &nodes()).await;
    assert_eq!(game.faulted, None, "{}", game.reason);
    assert!(
        game.stats.iter().flatten().all(|s| s.score.is_some()),
        "scores still parsed"
    );
}

#[tokio::test]
async fn a_late_bestmove_never_leaks_into_the_next_game() {
    // White overruns its clock on its second move and answers 600 ms later, when the runner
    // has already flagged it. The same process then plays on: the stale `bestmove` must be
    // discarded, not read as the first move of the next game.
    let mut w = Player::start(&fixture(&["late=2"])).await.unwrap();
    let mut b = Player::start(&fixture(&["--seed", "7"])).await.unwrap();
    let opening = Opening::startpos();
    let tc = TimeControl {
        clock: Some("0.3+0.1".parse().unwrap()),
        ..TimeControl::default()
    };
    let spec = GameSpec {
        opening: &opening,
        time_controls: [&tc, &tc],
        time_margin: Duration::from_millis(20),
        adjudication: Adjudication {
            maxmoves: Some(10),
            ..Adjudication::default()
        },
        rules: RuleSet::default(),
    };
    w.new_game().await.unwrap();
    b.new_game().await.unwrap();
    let first = play_game(&mut w, &mut b, ["w", "b"], &spec).await;
    assert_eq!(
        first.outcome.termination,
        Termination::TimeForfeit,
        "{}",
        first.reason
    );
    assert_eq!(first.faulted, Some(Color::White));
    w.new_game()
        .await
        .expect("the stale bestmove is drained by the sync");
    b.new_game().await.unwrap();
    let second = play_game(&mut w, &mut b, ["w", "b"], &spec).await;
    assert_eq!(second.faulted, None, "{}", second.reason);
    assert_eq!(second.plies(), 20, "played to the move limit");
}

#[tokio::test]
async fn handshake_faults_are_reported_not_hung() {
    // (An engine that never says `uciok` has tests of its own, in diagnostics.rs.)
    let err = Player::start(&fixture(&["no-readyok"]))
        .await
        .err()
        .expect("no readyok");
    assert!(matches!(err, EngineFault::Stalled { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "no readyok within 1.5 s",
        "the time allowed, as people write it"
    );
    let missing = PlayerSpec {
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: "/nonexistent/engine".into(),
            ..ProcessSpec::default()
        }),
        ..fixture(&[])
    };
    let err = Player::start(&missing).await.err().expect("no such file");
    assert!(err.to_string().contains("/nonexistent/engine"), "{err}");
}

#[tokio::test]
async fn options_the_engine_does_not_declare_are_reported() {
    let mut spec = fixture(&[]);
    let PlayerKind::Uci(process) = &mut spec.kind else {
        unreachable!()
    };
    process.options = vec![("hash".into(), "8".into()), ("Hahs".into(), "8".into())];
    let player = Player::start(&spec).await.unwrap();
    let Player::Uci(engine) = &player else {
        panic!("a UCI player")
    };
    assert_eq!(
        engine.undeclared_options,
        ["Hahs"],
        "Hash is declared (names are case-insensitive)"
    );
}

#[tokio::test]
async fn dropping_a_player_ends_its_process() {
    let player = Player::start(&fixture(&[])).await.unwrap();
    let Player::Uci(engine) = &player else {
        panic!("a UCI player")
    };
    let pid = engine.pid().expect("running");
    drop(player);
    let proc_path = format!("/proc/{pid}");
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let zombie_or_gone = std::fs::read_to_string(format!("{proc_path}/stat"))
            .map_or(true, |s| s.contains(") Z "));
        if zombie_or_gone {
            return;
        }
    }
    panic!("engine process {pid} still running after drop");
}

/// The fault of a player that failed to start, as text.
async fn start_fault(spec: &PlayerSpec) -> String {
    match Player::start(spec).await {
        Ok(_) => panic!("the engine started"),
        Err(fault) => {
            assert!(matches!(fault, EngineFault::Died(_)), "{fault:?}");
            fault.to_string()
        }
    }
}

#[tokio::test]
async fn an_engine_that_dies_on_an_option_says_which_and_why() {
    let mut spec = fixture(&["die-on-option=Hash"]);
    let PlayerKind::Uci(process) = &mut spec.kind else {
        unreachable!()
    };
    process.options = vec![
        ("Threads".into(), "1".into()),
        ("Hash".into(), "512".into()),
    ];
    let message = start_fault(&spec).await;
    for part in [
        "the engine exited (exit status: 1) while the runner was ",
        "after `setoption name Threads value 1`, `setoption name Hash value 512`",
        "it said `info string Hash: cannot take 512`",
        "its stderr ended with `fixture: cannot set Hash to 512`",
    ] {
        assert!(message.contains(part), "{part:?} not in: {message}");
    }
}

#[tokio::test]
async fn an_engine_that_crashes_in_search_says_what_it_was_asked() {
    let mut engine = UciProcess::start(
        &ProcessSpec {
            cmd: env!("CARGO_BIN_EXE_arbiter-fixture-engine").into(),
            args: vec!["crash=1".into()],
            ..ProcessSpec::default()
        },
        fixture(&[]).timeouts,
    )
    .await
    .unwrap();
    let limits = GoLimits {
        nodes: Some(1),
        ..GoLimits::default()
    };
    let fault = engine
        .go("position startpos moves e2e4", &limits, None)
        .await
        .unwrap_err();
    assert_eq!(
        fault.to_string(),
        "the engine exited (exit status: 3) while the runner was waiting for bestmove, \
         after `isready`, `position startpos moves e2e4`, `go nodes 1`; \
         its stderr ended with `fixture: crashing on purpose at move 1`"
    );
}
