//! What a user hears about an engine that is set up wrong or answers badly: option values the
//! engine declares it cannot take, an engine that never answers `uci` with `uciok`, and one that
//! answers `isready` too slowly for `-ping-ms`. The engines are real processes (the
//! `arbiter-fixture-engine` binary).

mod common;

use std::time::Duration;

use staunton::Params;

use arbiter_rules::{Color, RuleSet, Termination};
use arbiter_runner::adjudication::Adjudication;
use arbiter_runner::builtin::BuiltinSpec;
use arbiter_runner::game::{play_game, GameRecord, GameSpec};
use arbiter_runner::openings::Opening;
use arbiter_runner::player::{Player, PlayerKind, PlayerSpec};
use arbiter_runner::process::{EngineFault, ProcessSpec, Timeouts};
use arbiter_runner::tc::TimeControl;

fn timeouts() -> Timeouts {
    Timeouts {
        handshake: Duration::from_millis(1500),
        ready: Duration::from_millis(1500),
        stop_grace: Duration::from_millis(500),
        unclocked_move: Some(Duration::from_millis(1500)),
        ping: None,
    }
}

fn fixture(args: &[&str], options: &[(&str, &str)]) -> PlayerSpec {
    let name = format!("fixture {}", args.join(" "));
    common::uci_player(name, common::FIXTURE, args, options, timeouts())
}

/// The option warnings of a started engine.
async fn warnings(args: &[&str], options: &[(&str, &str)]) -> Vec<String> {
    match Player::start(&fixture(args, options)).await {
        Ok(Player::Uci(engine)) => engine.option_warnings.clone(),
        Ok(_) => panic!("a UCI player"),
        Err(fault) => panic!("the engine did not start: {fault}"),
    }
}

#[tokio::test]
async fn values_the_engine_declares_it_cannot_take_are_warned_about_and_not_sent() {
    // The fixture declares `Hash type spin default 16 min 1 max 1024`, `Threads` spin 1..8,
    // `Style` combo Solid/Normal/Risky and `Ponder` check. It dies when sent a value for Hash
    // (`die-on-option=Hash`): starting at all shows that `Hash=-16` was not sent.
    let seen = warnings(
        &["die-on-option=Hash"],
        &[
            ("Hash", "-16"),
            ("Threads", "two"),
            ("Style", "Wild"),
            ("Ponder", "yes"),
            ("Hahs", "8"),
        ],
    )
    .await;
    assert_eq!(
        seen,
        [
            "option Hash=-16 is outside the range it declares (from 1 to 1024); not sent",
            "option Threads=two is not a whole number (it declares a spin from 1 to 8); not sent",
            "option Style=Wild is not one of the values it declares (Solid, Normal, Risky); \
             not sent",
            "option Ponder=yes is neither true nor false (it declares a check); not sent",
            "option \"Hahs\" is not one it declares; sent anyway",
        ]
    );
    let too_big = warnings(&[], &[("Hash", "4096")]).await;
    assert_eq!(
        too_big,
        ["option Hash=4096 is outside the range it declares (from 1 to 1024); not sent"]
    );
}

#[tokio::test]
async fn values_within_the_declaration_are_sent_without_a_word() {
    // Names, choices and booleans compare without case, as engines compare them; the range's
    // ends are inside it.
    assert!(warnings(
        &[],
        &[
            ("hash", "1024"),
            ("Threads", "1"),
            ("style", "risky"),
            ("Ponder", "True"),
        ],
    )
    .await
    .is_empty());
    // And a declared value is really sent: the engine that dies on Hash dies.
    let fault = Player::start(&fixture(&["die-on-option=Hash"], &[("Hash", "64")]))
        .await
        .err()
        .expect("Hash=64 was sent and the engine died of it");
    assert!(
        fault.to_string().contains("setoption name Hash value 64"),
        "{fault}"
    );
}

/// The fault of an engine that did not start, checked to be the handshake's.
async fn handshake_fault(spec: &PlayerSpec) -> String {
    match Player::start(spec).await {
        Ok(_) => panic!("the engine started"),
        Err(fault) => {
            assert!(matches!(fault, EngineFault::NoUciok(_)), "{fault:?}");
            fault.to_string()
        }
    }
}

#[tokio::test]
async fn an_engine_that_never_answers_uciok_is_named_as_such() {
    // It talks another protocol and waits.
    assert_eq!(
        handshake_fault(&fixture(&["uci-garbage"], &[])).await,
        "the engine never answered `uci` with `uciok` within 1.5 s; it printed \
         `Fixture 1.0 by arbiter tests`, `Error (unknown command): uci`, \
         `feature myname=\"Fixture\" done=1`"
    );
    // It lists its options but forgets `uciok`.
    assert_eq!(
        handshake_fault(&fixture(&["no-uciok"], &[])).await,
        "the engine never answered `uci` with `uciok` within 1.5 s; it printed 8 lines, the \
         last `option name Style type combo default Normal var Solid var Normal var Risky`, \
         `option name Ponder type check default false`, `option name Clear Hash type button`"
    );
    // It says it does not understand and exits.
    assert_eq!(
        handshake_fault(&fixture(&["uci-exit"], &[])).await,
        "the engine never answered `uci` with `uciok`: it exited (exit status: 1) after \
         printing `Unknown command: uci`; its stderr ended with \
         `fixture: usage: arbiter-fixture-engine --protocol xboard`"
    );
}

#[tokio::test]
async fn a_program_that_is_no_engine_at_all_is_named_as_such() {
    let spec = |cmd: &str, args: &[&str]| PlayerSpec {
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: cmd.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            ..ProcessSpec::default()
        }),
        ..fixture(&[], &[])
    };
    // Exits at once without reading (or the write of `uci` finds the pipe closed).
    assert_eq!(
        handshake_fault(&spec("/bin/false", &[])).await,
        "the engine never answered `uci` with `uciok`: it exited (exit status: 1) after \
         printing nothing"
    );
    // Prints its input back until the end of it: never `uciok`, whatever it is sent.
    let cat = handshake_fault(&spec("/bin/cat", &[])).await;
    assert_eq!(
        cat,
        "the engine never answered `uci` with `uciok` within 1.5 s; it printed `uci`"
    );
}

#[tokio::test]
async fn ping_wants_readyok_within_the_time_given() {
    // `slow-readyok=300` waits 300 ms before every `readyok`: in time for the 1.5 s of the
    // start, too slow for `-ping-ms 100`.
    let mut player = Player::start(&fixture(&["slow-readyok=300"], &[]))
        .await
        .expect("starts within 1.5 s");
    player
        .ping(Duration::from_millis(1500))
        .await
        .expect("answers within 1.5 s");
    let fault = player
        .ping(Duration::from_millis(100))
        .await
        .expect_err("too slow for 100 ms");
    assert!(matches!(fault, EngineFault::Stalled { .. }), "{fault:?}");
    assert_eq!(fault.to_string(), "no readyok within 0.1 s");

    // A prompt engine passes a short ping, again and again.
    let mut prompt = Player::start(&fixture(&[], &[])).await.unwrap();
    for _ in 0..3 {
        prompt.ping(Duration::from_millis(500)).await.unwrap();
    }
    // An in-process player is always ready.
    let mut builtin = Player::start(&PlayerSpec {
        name: "staunton".into(),
        kind: PlayerKind::Builtin(Box::new(BuiltinSpec {
            params: Params::default(),
            hash_mb: 1,
        })),
        timeouts: timeouts(),
        restart: false,
    })
    .await
    .unwrap();
    builtin.ping(Duration::ZERO).await.unwrap();
}

/// A game between the fixture engine with `white` arguments and a plain one, with `ping`.
async fn game_with_ping(white: &[&str], ping: Option<Duration>) -> GameRecord {
    let mut spec = fixture(white, &[]);
    spec.timeouts.ping = ping;
    let mut w = Player::start(&spec).await.expect("starts");
    let mut b = Player::start(&fixture(&["--seed", "9"], &[]))
        .await
        .unwrap();
    w.new_game().await.unwrap();
    b.new_game().await.unwrap();
    let opening = Opening::startpos();
    let tc = TimeControl {
        nodes: Some(1),
        ..TimeControl::default()
    };
    let game = GameSpec {
        opening: &opening,
        time_controls: [&tc, &tc],
        time_margin: Duration::from_millis(50),
        adjudication: Adjudication {
            maxmoves: Some(5),
            ..Adjudication::default()
        },
        rules: RuleSet::default(),
    };
    play_game(&mut w, &mut b, ["white", "black"], &game).await
}

#[tokio::test]
async fn with_ping_a_slow_readyok_during_the_game_is_a_stalled_connection() {
    // fastchess asks `isready` before each move with `-ping-ms`; an engine slower than that
    // loses the game as stalled, before it is asked for a move.
    let game = game_with_ping(&["slow-readyok=300"], Some(Duration::from_millis(100))).await;
    assert_eq!(game.outcome.termination, Termination::StalledConnection);
    assert_eq!(game.outcome.winner, Some(Color::Black));
    assert_eq!(game.faulted, Some(Color::White));
    assert_eq!(game.reason, "White's connection stalls");
    assert_eq!(
        game.fault.as_ref().map(|f| f.to_string()).as_deref(),
        Some("no readyok within 0.1 s")
    );
    assert_eq!(game.plies(), 0);
    // Without `-ping-ms` the same engine plays: its readyok is slow, not missing.
    let game = game_with_ping(&["slow-readyok=300"], None).await;
    assert_eq!(game.faulted, None, "{}", game.reason);
    assert_eq!(game.reason, "Draw by adjudication");
    // And a prompt engine passes the check on every move.
    let game = game_with_ping(&[], Some(Duration::from_millis(500))).await;
    assert_eq!(game.faulted, None, "{}", game.reason);
    assert_eq!(game.plies(), 10);
}
