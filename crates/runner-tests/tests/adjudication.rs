//! Adjudication in whole games between real processes, counted as cutechess counts it: the draw
//! count starts again at every capture and pawn move, resign counts each side's own moves, and
//! the result text is the tools' own (`Draw by adjudication`), the rule that fired kept for the
//! PGN.

mod common;

use std::time::Duration;

use arbiter_rules::{Color, Position, RuleSet, Termination};
use arbiter_runner::adjudication::{Adjudication, DrawRule, ResignRule};
use arbiter_runner::game::{play_game, GameRecord, GameSpec};
use arbiter_runner::openings::Opening;
use arbiter_runner::player::{Player, PlayerSpec};
use arbiter_runner::process::Timeouts;
use arbiter_runner::tc::TimeControl;

fn engine(cmd: &str, args: &[&str], options: &[(&str, &str)]) -> PlayerSpec {
    let timeouts = Timeouts {
        handshake: Duration::from_secs(5),
        ready: Duration::from_secs(5),
        stop_grace: Duration::from_secs(1),
        unclocked_move: Some(Duration::from_secs(10)),
        ping: None,
    };
    let name = format!("{cmd} {}", args.join(" "));
    common::uci_player(name, cmd, args, options, timeouts)
}

fn fixture(args: &[&str]) -> PlayerSpec {
    engine(common::FIXTURE, args, &[])
}

async fn play(
    white: &PlayerSpec,
    black: &PlayerSpec,
    opening: &Opening,
    tc: &TimeControl,
    adjudication: Adjudication,
) -> GameRecord {
    let mut w = Player::start(white).await.expect("white starts");
    let mut b = Player::start(black).await.expect("black starts");
    w.new_game().await.unwrap();
    b.new_game().await.unwrap();
    let spec = GameSpec {
        opening,
        time_controls: [tc, tc],
        time_margin: Duration::from_millis(100),
        adjudication,
        rules: RuleSet::default(),
    };
    play_game(&mut w, &mut b, ["white", "black"], &spec).await
}

fn nodes(n: u64) -> TimeControl {
    TimeControl {
        nodes: Some(n),
        ..TimeControl::default()
    }
}

/// The ply (1-based, from the game's start position) at which cutechess's `-draw` rule ends
/// this game, worked out again from the record alone, as cutechess's `GameAdjudicator` and
/// `ChessGame::applyMove` do it: after each engine move, reset the count if the move was a
/// capture or a pawn move, count the move if its score is within the window (else reset), and
/// draw once the count reaches `2 * movecount` with `plies / 2 >= movenumber`.
fn cutechess_draw_ply(record: &GameRecord, rule: DrawRule) -> Option<usize> {
    let mut pos: Position = record.opening.start;
    let mut count = 0;
    for (i, (&mv, stats)) in record.moves.iter().zip(&record.stats).enumerate() {
        pos.play_unchecked(mv);
        let Some(stats) = stats else { continue };
        if pos.halfmove_clock() == 0 {
            count = 0;
        }
        match stats.score {
            Some(score) if score.centipawns().abs() <= rule.score => count += 1,
            _ => count = 0,
        }
        let plies = i + 1;
        if plies / 2 >= rule.movenumber as usize && count >= 2 * rule.movecount {
            return Some(plies);
        }
    }
    None
}

/// The ply at which the draw would have been adjudicated if captures and pawn moves did not
/// restart the count (arbiter's count before issue 10).
fn without_restarts(record: &GameRecord, rule: DrawRule) -> Option<usize> {
    let mut count = 0;
    for (i, stats) in record.stats.iter().enumerate() {
        let Some(stats) = stats else { continue };
        match stats.score {
            Some(score) if score.centipawns().abs() <= rule.score => count += 1,
            _ => count = 0,
        }
        if (i + 1).div_ceil(2) >= rule.movenumber as usize && count >= 2 * rule.movecount {
            return Some(i + 1);
        }
    }
    None
}

#[tokio::test]
async fn random_movers_are_drawn_only_after_quiet_moves_without_captures_or_pawn_moves() {
    // Two engines that play random legal moves and always report 0.00: every ply is inside the
    // window, so only captures and pawn moves hold the draw back.
    let rule = DrawRule {
        movenumber: 10,
        movecount: 4,
        score: 20,
    };
    let adjudication = Adjudication {
        draw: Some(rule),
        maxmoves: Some(300),
        ..Adjudication::default()
    };
    for seed in ["3", "11", "29"] {
        let game = play(
            &fixture(&["--seed", seed]),
            &fixture(&["--seed", &format!("1{seed}")]),
            &Opening::startpos(),
            &nodes(1),
            adjudication,
        )
        .await;
        let expected = cutechess_draw_ply(&game, rule).expect("a quiet stretch comes");
        assert_eq!(
            (game.plies(), &game.outcome.termination),
            (expected, &Termination::Adjudication("draw score".into())),
            "seed {seed}: {}",
            game.reason_in_full()
        );
        assert_eq!(game.reason, "Draw by adjudication");
        assert_eq!(game.detail.as_deref(), Some("draw score"));
        assert_eq!(game.reason_in_full(), "Draw by adjudication: draw score");
        let naive = without_restarts(&game, rule).unwrap();
        assert!(
            naive < expected,
            "seed {seed}: captures and pawn moves held the draw back from ply {naive} to \
             {expected}"
        );
    }
}

#[tokio::test]
async fn stockfish_plays_on_where_a_pawn_move_restarts_the_count() {
    // A symmetrical rook ending Stockfish sees as level from the first move: with
    // `-draw movenumber=0 movecount=3 score=20` a count that ignored pawn moves and captures
    // would stop the game at ply 6; cutechess and fastchess play on through the rook trade
    // and the pawn moves, and so must arbiter.
    let stockfish = "/usr/games/stockfish";
    assert!(
        std::path::Path::new(stockfish).exists(),
        "scripts/ci-setup.sh installs {stockfish}"
    );
    let rule = DrawRule {
        movenumber: 0,
        movecount: 3,
        score: 20,
    };
    let opening = Opening {
        start: Position::from_fen("2r3k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap(),
        ..Opening::startpos()
    };
    let sf = engine(stockfish, &[], &[("Threads", "1"), ("Hash", "16")]);
    let game = play(
        &sf,
        &sf,
        &opening,
        &nodes(20_000),
        Adjudication {
            draw: Some(rule),
            maxmoves: Some(150),
            ..Adjudication::default()
        },
    )
    .await;
    assert_eq!(game.faulted, None, "{}", game.reason_in_full());
    let expected = cutechess_draw_ply(&game, rule).expect("a quiet stretch comes");
    assert_eq!(game.plies(), expected, "{}", game.reason_in_full());
    assert_eq!(game.reason_in_full(), "Draw by adjudication: draw score");
    let naive = without_restarts(&game, rule).unwrap();
    assert!(
        naive < expected,
        "pawn moves and captures held the draw back from ply {naive} to {expected}"
    );
}

#[tokio::test]
async fn resign_counts_each_sides_own_moves_and_says_who_wins() {
    // White always reports +7.00, Black -7.00: with `-resign movecount=3 score=600` Black's
    // third move (ply 6) loses, one-sided or two-sided.
    for twosided in [false, true] {
        let game = play(
            &fixture(&["--score", "700"]),
            &fixture(&["--seed", "5", "--score", "-700"]),
            &Opening::startpos(),
            &nodes(1),
            Adjudication {
                resign: Some(ResignRule {
                    movecount: 3,
                    score: 600,
                    twosided,
                }),
                ..Adjudication::default()
            },
        )
        .await;
        assert_eq!(game.plies(), 6, "twosided={twosided}");
        assert_eq!(game.outcome.winner, Some(Color::White));
        assert_eq!(game.reason, "White wins by adjudication");
        assert_eq!(
            game.reason_in_full(),
            "White wins by adjudication: resign score"
        );
    }
    // Two-sided, with a winner who does not see itself winning: no adjudication.
    let game = play(
        &fixture(&["--score", "100"]),
        &fixture(&["--seed", "5", "--score", "-700"]),
        &Opening::startpos(),
        &nodes(1),
        Adjudication {
            resign: Some(ResignRule {
                movecount: 3,
                score: 600,
                twosided: true,
            }),
            maxmoves: Some(10),
            ..Adjudication::default()
        },
    )
    .await;
    assert_eq!(game.reason_in_full(), "Draw by adjudication: maximum moves");
}
