//! The game loop: two players, one game, refereed by the rules crate.
//!
//! Per move: ask the rules whether the game is over, ask the side to move for a move with
//! its clock, charge the clock, check the move is legal, play it, and let the adjudicator
//! look at the score. Any fault of a player (crash, stall, illegal or unparsable move, flag)
//! ends the game as a loss for that player with the matching termination; the caller then
//! restarts that player. Engines' claims are never trusted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arbiter_rules::uci::parse_uci_move;
use arbiter_rules::{Color, Game, Move, Outcome, Role, RuleSet, Termination};
use tokio::runtime::RuntimeFlavor;

use crate::adjudication::{Adjudication, Adjudicator, MovePlayed};
use crate::executor::{as_game_thread, block_on};
use crate::openings::Opening;
use crate::player::{MoveRequest, Player, PositionCommand};
use crate::process::EngineFault;
use crate::tc::{charge_move, Clock, ClockTime, TimeControl};
use crate::uci::{Clocks, GoLimits, Score};

/// Everything a game needs besides its players.
#[derive(Clone, Debug)]
pub struct GameSpec<'a> {
    pub opening: &'a Opening,
    /// Time control of the white and the black player, in that order.
    pub time_controls: [&'a TimeControl; 2],
    /// How far past zero a clock may run before the flag falls (cutechess's `timemargin`).
    pub time_margin: Duration,
    pub adjudication: Adjudication,
    pub rules: RuleSet,
}

/// One engine move's record, for the PGN comment and the latency statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveStats {
    pub score: Option<Score>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// From writing `go` to reading `bestmove`.
    pub elapsed: Duration,
    /// The search time the engine itself reported (its last `info ... time`): what `elapsed`
    /// holds beyond it is pipe, scheduling and the engine's own start-up and shutdown of the
    /// search, the part of a time loss that is not the search's.
    pub reported: Option<Duration>,
    /// What the mover's clock held after this move (increment included); negative within the
    /// margin. `None` without a clock.
    pub clock_after: Option<ClockTime>,
}

impl MoveStats {
    /// `+0.35/12 0.250s`, cutechess's comment format.
    pub fn comment(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        match self.score {
            Some(score) => format!("{}/{} {secs:.3}s", score.pgn(), self.depth.unwrap_or(0)),
            None => format!("{secs:.3}s"),
        }
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    pub opening: Opening,
    /// Every move from `opening.start`, book moves first.
    pub moves: Vec<Move>,
    /// Statistics of each engine move (`None` for book moves), parallel to `moves`.
    pub stats: Vec<Option<MoveStats>>,
    /// In a time forfeit, the move that overran the clock: never played, so in neither `moves`
    /// nor `stats`, yet its time (against what the engine said it searched, and the clock it
    /// left below zero) is what shows whose fault the loss was.
    pub flagged_move: Option<MoveStats>,
    pub outcome: Outcome,
    /// The result text exactly as cutechess and fastchess print it between braces (`White
    /// mates`, `Draw by adjudication`, `White makes an illegal move: e1e5`), for the
    /// `Finished game` line and whatever scripts read from it.
    pub reason: String,
    /// What arbiter knows beyond those words, for the PGN: which adjudication rule ended the
    /// game (`resign score`, `draw score`, `maximum moves`), or why a flag was a draw.
    pub detail: Option<String>,
    /// The player that faulted (crash, stall, forfeit, illegal move), which must be restarted.
    pub faulted: Option<Color>,
    /// What went wrong with the engine when the game ended by a fault of its process (crash,
    /// stall, no answer before the flag): the PGN says "White disconnects", this says why, for
    /// the log.
    pub fault: Option<EngineFault>,
    /// Wall time of the whole game.
    pub duration: Duration,
    /// Time the runner itself spent per engine move, outside the engines' thinking.
    pub overhead: Duration,
}

impl GameRecord {
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The reason with its detail, `Black wins by adjudication: resign score`: the text for the
    /// PGN's last comment, where readers want to know which rule ended the game.
    pub fn reason_in_full(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{}: {detail}", self.reason),
            None => self.reason.clone(),
        }
    }

    /// The half points the player of `color` scored: 2 for a win, 1 for a draw, 0 for a loss.
    pub fn half_points(&self, color: Color) -> u8 {
        match self.outcome.winner {
            None => 1,
            Some(winner) if winner == color => 2,
            Some(_) => 0,
        }
    }

    /// The name of the player of `color`.
    pub fn player(&self, color: Color) -> &str {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }
}

/// The record of a game that could not start because a player failed to get ready: a loss
/// for that player, with no moves.
pub fn unplayable(
    names: [&str; 2],
    opening: &Opening,
    faulted: Color,
    fault: &EngineFault,
) -> GameRecord {
    let outcome = Outcome::win(!faulted, termination_of(fault));
    let reason = describe(&outcome, faulted, None);
    let detail = detail(&outcome, faulted);
    GameRecord {
        white: names[0].to_owned(),
        black: names[1].to_owned(),
        opening: opening.clone(),
        moves: opening.moves.clone(),
        stats: vec![None; opening.moves.len()],
        flagged_move: None,
        outcome,
        reason,
        detail,
        faulted: Some(faulted),
        fault: Some(fault.clone()),
        duration: Duration::ZERO,
        overhead: Duration::ZERO,
    }
}

fn termination_of(fault: &EngineFault) -> Termination {
    match fault {
        EngineFault::TimeForfeit { .. } => Termination::TimeForfeit,
        EngineFault::Stalled { .. } => Termination::StalledConnection,
        EngineFault::NoUciok(handshake) if handshake.ended.is_none() => {
            Termination::StalledConnection
        }
        EngineFault::NoUciok(_) => Termination::Abandoned,
        EngineFault::Exited | EngineFault::Died(_) | EngineFault::Spawn { .. } => {
            Termination::Abandoned
        }
    }
}

/// How many games may run on threads of their own at once (see [`play_game`]); more wait on
/// the async runtime. Below tokio's 512 blocking threads, which each such game takes one of.
const OWN_THREAD_GAMES: usize = 256;

/// Plays one game. Never fails: every problem is an outcome.
///
/// A game with a UCI engine runs on a thread of its own (tokio's `block_in_place`, on the
/// multi-threaded runtime), which waits on the engines' pipes itself: each line the engine
/// writes wakes that thread once, and `bestmove` is answered with the next `go` from there,
/// with no hand-over to another thread, no scheduler and no timer per move (see
/// [`crate::process`]). Elsewhere (a current-thread runtime, or past `OWN_THREAD_GAMES` games
/// at once) each wait is a blocking task of the runtime: slower, the same behaviour.
pub async fn play_game(
    white: &mut Player,
    black: &mut Player,
    names: [&str; 2],
    spec: &GameSpec<'_>,
) -> GameRecord {
    static OWN_THREADS: AtomicUsize = AtomicUsize::new(0);
    let runtime = tokio::runtime::Handle::try_current()
        .ok()
        .filter(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)
        .filter(|_| !(white.is_builtin() && black.is_builtin()));
    let Some(runtime) = runtime.filter(|_| {
        let taken = OWN_THREADS.fetch_add(1, Ordering::Relaxed) < OWN_THREAD_GAMES;
        if !taken {
            OWN_THREADS.fetch_sub(1, Ordering::Relaxed);
        }
        taken
    }) else {
        return play(white, black, names, spec).await;
    };
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            OWN_THREADS.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let release = Release;
    let record = tokio::task::block_in_place(|| {
        let _runtime = runtime.enter();
        as_game_thread(|| block_on(play(white, black, names, spec)))
    });
    drop(release);
    if white.stopped() || black.stopped() {
        // The match stopped while this game waited for an engine: the game was cut short and
        // is no result. On the runtime the match's abort ends the game's task at an await;
        // here the thread had to finish first, and the abort takes this await instead.
        std::future::pending::<()>().await;
    }
    record
}

/// [`play_game`]'s game loop, wherever it runs.
async fn play(
    white: &mut Player,
    black: &mut Player,
    names: [&str; 2],
    spec: &GameSpec<'_>,
) -> GameRecord {
    let started = Instant::now();
    let mut overhead = Duration::ZERO;
    let mut game = Game::new(spec.opening.start, spec.rules);
    let mut command = PositionCommand::new(&spec.opening.start);
    let mut stats: Vec<Option<MoveStats>> = Vec::with_capacity(160);
    for &mv in &spec.opening.moves {
        game.play_unchecked(mv);
        command.push(mv);
        stats.push(None);
    }
    let mut clocks = [
        Clock::new(spec.time_controls[0].clock),
        Clock::new(spec.time_controls[1].clock),
    ];
    let mut adjudicator = Adjudicator::new(spec.adjudication);

    let players = [white, black];
    let mut fault = None;
    let mut flagged_move = None;
    // The side the result text speaks of: the side to move at the end, or the side that
    // faulted.
    let (outcome, reason, faulted, side) = loop {
        let pos = *game.position();
        if let Some(outcome) = game.outcome() {
            let reason = describe(&outcome, pos.turn(), None);
            break (outcome, reason, None, pos.turn());
        }
        let mover = pos.turn();
        let side = mover.index();
        let tc = spec.time_controls[side];
        let limits = go_limits(spec, &clocks, mover);
        let deadline = match (tc.clock, tc.movetime) {
            (Some(_), _) => Some(clocks[side].flag_after(spec.time_margin)),
            (None, Some(movetime)) => Some(movetime + spec.time_margin),
            (None, None) => None,
        };
        // Positions before the last capture or pawn move can never repeat: the in-process
        // engine needs only the rest.
        let positions = game.positions();
        let reversible = (pos.halfmove_clock() as usize).min(positions.len() - 1);
        let request = MoveRequest {
            position_command: command.as_str(),
            history: &positions[positions.len() - 1 - reversible..],
            limits,
            deadline,
        };
        let prepared = Instant::now();
        let reply = players[side].think(&request).await;
        let reply_at = Instant::now();

        let reply = match reply {
            Ok(reply) => reply,
            Err(engine_fault) => {
                if let EngineFault::TimeForfeit { elapsed, searched } = engine_fault {
                    // No `bestmove` before the flag: the time waited is the move's, charged
                    // so that the clock shows how far past zero it ran, beside what the engine
                    // said it had searched.
                    charge_move(&mut clocks, side, elapsed, spec.time_margin);
                    flagged_move = Some(MoveStats {
                        score: None,
                        depth: None,
                        nodes: None,
                        elapsed,
                        reported: searched,
                        clock_after: tc.clock.map(|_| clocks[side].remaining()),
                    });
                }
                let outcome = forfeit(&pos, mover, termination_of(&engine_fault));
                let reason = describe(&outcome, mover, None);
                fault = Some(engine_fault);
                break (outcome, reason, Some(mover), mover);
            }
        };
        let info = reply.info.as_ref();
        let move_stats = |clocks: &[Clock; 2]| MoveStats {
            score: info.and_then(|i| i.score),
            depth: info.and_then(|i| i.depth),
            nodes: info.and_then(|i| i.nodes),
            elapsed: reply.elapsed,
            reported: info.and_then(|i| i.time),
            clock_after: tc.clock.map(|_| clocks[side].remaining()),
        };
        let think_time = reply.elapsed;
        overhead += reply_at
            .saturating_duration_since(prepared)
            .saturating_sub(think_time);

        let flagged = match tc.clock {
            Some(_) => !charge_move(&mut clocks, side, think_time, spec.time_margin),
            None => deadline.is_some_and(|d| think_time > d),
        };
        if flagged {
            // The clock was charged: it holds how far past zero the move ran.
            flagged_move = Some(move_stats(&clocks));
            let outcome = forfeit(&pos, mover, Termination::TimeForfeit);
            let reason = describe(&outcome, mover, None);
            break (outcome, reason, Some(mover), mover);
        }
        // Legal on the board and under the game's rules (the marked pawn may not promote).
        let mv = match parse_uci_move(&pos, reply.bestmove.trim()) {
            Ok(mv) if game.allows(mv) => Ok(mv),
            Ok(_) => Err(()),
            Err(_) => Err(()),
        };
        let mv = match mv {
            Ok(mv) => mv,
            Err(_) => {
                let outcome = Outcome::win(!mover, Termination::IllegalMove);
                let text = if reply.bestmove.is_empty() {
                    "(empty)".to_owned()
                } else {
                    reply.bestmove.clone()
                };
                let reason = describe(&outcome, mover, Some(&text));
                break (outcome, reason, Some(mover), mover);
            }
        };
        let loop_start = Instant::now();
        game.play_unchecked(mv);
        command.push(mv);
        let score = info.and_then(|i| i.score);
        stats.push(Some(move_stats(&clocks)));
        let adjudicated = adjudicator.after_move(MovePlayed {
            mover,
            score,
            plies: game.moves().len() as u32,
            irreversible: game.position().halfmove_clock() == 0,
        });
        overhead += loop_start.elapsed();
        if let Some(outcome) = adjudicated {
            // The rules come first: a move that mates is a mate, not an adjudication.
            let outcome = game.outcome().unwrap_or(outcome);
            let to_move = game.position().turn();
            let reason = describe(&outcome, to_move, None);
            break (outcome, reason, None, to_move);
        }
    };
    let detail = detail(&outcome, side);
    GameRecord {
        white: names[0].to_owned(),
        black: names[1].to_owned(),
        opening: spec.opening.clone(),
        moves: game.moves().to_vec(),
        stats,
        flagged_move,
        outcome,
        reason,
        detail,
        faulted,
        fault,
        duration: started.elapsed(),
        overhead,
    }
}

/// What `go` says: both clocks as the runner holds them (a clock below zero is told as 1 ms,
/// see [`ClockTime::told`](crate::tc::ClockTime::told)), each side's own increment, and the
/// mover's fixed limits.
fn go_limits(spec: &GameSpec<'_>, clocks: &[Clock; 2], mover: Color) -> GoLimits {
    let tc = spec.time_controls[mover.index()];
    let increment = |side: usize| {
        spec.time_controls[side]
            .clock
            .map_or(Duration::ZERO, |c| c.increment)
    };
    GoLimits {
        clocks: tc.clock.map(|_| Clocks {
            wtime: clocks[0].remaining().told(),
            btime: clocks[1].remaining().told(),
            winc: increment(0),
            binc: increment(1),
            movestogo: clocks[mover.index()].moves_to_go(),
        }),
        movetime: tc.movetime,
        nodes: tc.nodes,
        depth: tc.depth,
        ..GoLimits::default()
    }
}

/// A loss for `loser`, except that a flag against a lone king is a draw: the opponent could
/// never have mated (FIDE 6.9).
fn forfeit(pos: &arbiter_rules::Position, loser: Color, termination: Termination) -> Outcome {
    let winner = !loser;
    let lone_king = pos.board().by_color(winner) == pos.board().by_piece(Role::King.of(winner));
    if termination == Termination::TimeForfeit && lone_king {
        Outcome::draw(termination)
    } else {
        Outcome::win(winner, termination)
    }
}

fn side_name(color: Color) -> &'static str {
    match color {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The result text cutechess prints in `Finished game` lines and PGN comments (its
/// `Result::description`; fastchess prints the same words). `to_move` is the side to move in
/// the final position (or the side that faulted); `illegal_move` is the move text of an illegal
/// move, which cutechess appends.
pub fn describe(outcome: &Outcome, to_move: Color, illegal_move: Option<&str>) -> String {
    let winner = outcome.winner.map(side_name);
    let side = side_name(to_move);
    match (&outcome.termination, winner) {
        (Termination::Checkmate, Some(w)) => format!("{w} mates"),
        (Termination::Stalemate, None) => "Draw by stalemate".into(),
        (Termination::Stalemate, Some(w)) => format!("{w} wins by stalemate"),
        (Termination::InsufficientMaterial, _) => "Draw by insufficient mating material".into(),
        (Termination::ThreefoldRepetition, _) => "Draw by 3-fold repetition".into(),
        (Termination::FivefoldRepetition, _) => "Draw by 5-fold repetition".into(),
        (Termination::FiftyMoves, _) => "Draw by fifty moves rule".into(),
        (Termination::SeventyFiveMoves, _) => "Draw by seventy-five moves rule".into(),
        (Termination::DrawClaimed, _) => "Draw by claim".into(),
        (Termination::TimeForfeit, None) => "Draw by timeout".into(),
        (Termination::TimeForfeit, Some(_)) => format!("{side} loses on time"),
        (Termination::IllegalMove, _) => {
            format!(
                "{side} makes an illegal move: {}",
                illegal_move.unwrap_or("?")
            )
        }
        (Termination::Abandoned, _) => format!("{side} disconnects"),
        (Termination::StalledConnection, _) => format!("{side}'s connection stalls"),
        (Termination::Adjudication(_), None) => "Draw by adjudication".into(),
        (Termination::Adjudication(_), Some(w)) => format!("{w} wins by adjudication"),
        (Termination::MarkedPawnCaptured, Some(w)) => format!("{w} takes the marked pawn"),
        (Termination::MateByUnmarkedMan, Some(w)) => {
            format!("{w} wins: mate by a man other than the marked pawn")
        }
        (t, w) => format!("{} by {t}", w.unwrap_or("Draw")),
    }
}

/// What the PGN adds to [`describe`]'s words: the adjudication rule, or why a flag fell
/// without a loss. `to_move` as for `describe`.
fn detail(outcome: &Outcome, to_move: Color) -> Option<String> {
    match (&outcome.termination, outcome.winner) {
        (Termination::Adjudication(rule), _) => Some(rule.clone()),
        (Termination::TimeForfeit, None) => Some(format!(
            "{} ran out of time, but {} has only its king and cannot mate",
            side_name(to_move),
            side_name(!to_move)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjudication::{DRAW_BY_SCORE, MAXIMUM_MOVES, RESIGN_BY_SCORE};

    /// A game of two shell engines that answer every `go` with `on_go`, on the runtime a match
    /// runs on (multi-threaded), where a game with a UCI engine gets a thread of its own.
    #[cfg(unix)]
    mod on_its_own_thread {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;

        use super::*;
        use crate::player::{PlayerKind, PlayerSpec};
        use crate::process::tests::shell_engine;
        use crate::process::Timeouts;
        use crate::tc::ClockSpec;

        async fn player(on_go: &str, stop: &Arc<AtomicBool>) -> Player {
            let spec = PlayerSpec {
                name: "shell".into(),
                kind: PlayerKind::Uci(shell_engine(on_go)),
                timeouts: Timeouts::default(),
                restart: false,
            };
            let mut player = Player::start(&spec).await.expect("the shell engine starts");
            player.new_game().await.expect("it answers isready");
            player.abort_on(stop);
            player
        }

        async fn play_with(on_go: &str, tc: TimeControl, stop: Arc<AtomicBool>) -> GameRecord {
            let mut white = player(on_go, &stop).await;
            let mut black = player(on_go, &stop).await;
            let opening = Opening::startpos();
            let spec = GameSpec {
                opening: &opening,
                time_controls: [&tc, &tc],
                time_margin: Duration::ZERO,
                adjudication: Adjudication::default(),
                rules: RuleSet::default(),
            };
            play_game(&mut white, &mut black, ["white", "black"], &spec).await
        }

        /// Both engines answer e2e4: legal for White, illegal for Black, whose move the
        /// referee on the game's thread refuses with its words and a loss.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_referee_rules_there() {
            let tc = TimeControl {
                nodes: Some(100),
                ..TimeControl::default()
            };
            let stop = Arc::new(AtomicBool::new(false));
            let game = play_with("echo 'bestmove e2e4'", tc, stop).await;
            assert_eq!(game.reason, "Black makes an illegal move: e2e4");
            assert_eq!(game.plies(), 1);
            assert_eq!(game.faulted, Some(Color::Black));
        }

        /// An engine that answers after its flag fell loses on time: the clock is read from
        /// the timestamp of the read that brought `bestmove`, wherever the game waits.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_late_answer_loses_on_time() {
            let tc = TimeControl {
                clock: Some(ClockSpec {
                    moves: None,
                    base: Duration::from_millis(100),
                    increment: Duration::ZERO,
                    hourglass: false,
                }),
                ..TimeControl::default()
            };
            let stop = Arc::new(AtomicBool::new(false));
            let game = play_with(
                "sleep 0.3; echo 'bestmove e2e4'",
                tc.clone(),
                Arc::clone(&stop),
            )
            .await;
            assert_eq!(game.reason, "White loses on time");
            assert_eq!(game.plies(), 0);
            // The move that lost is kept though never played: the time the runner waited, up
            // to the flag, charged to the clock, and no search time (the engine said none).
            assert!(
                game.stats.is_empty(),
                "nothing played, nothing in the moves' stats"
            );
            let flagged = game.flagged_move.expect("the flagged move's time");
            assert!(flagged.elapsed >= Duration::from_millis(100), "{flagged:?}");
            assert_eq!(flagged.reported, None);
            let clock = flagged.clock_after.expect("a clock").as_millis();
            assert_eq!(clock, 100 - flagged.elapsed.as_millis() as i64);

            // An engine that searches on past its flag, saying so: its last scored line's
            // 180 ms of search rides with the flagged move.
            let on_go = "echo 'info depth 1 score cp 5 time 180 pv e2e4'; sleep 0.3; \
                         echo 'bestmove e2e4'";
            let game = play_with(on_go, tc, stop).await;
            assert_eq!(game.reason, "White loses on time");
            let flagged = game.flagged_move.expect("the flagged move's time");
            assert_eq!(flagged.reported, Some(Duration::from_millis(180)));
            assert!(flagged.clock_after.expect("a clock").as_millis() <= 0);
        }

        /// An engine that dies in search is reported as it is on the runtime: how it ended,
        /// what it was doing and the note it left, read by the game's thread to the end.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn an_engine_that_dies_there_is_heard_to_its_last_words() {
            let tc = TimeControl {
                nodes: Some(100),
                ..TimeControl::default()
            };
            let stop = Arc::new(AtomicBool::new(false));
            let game =
                play_with("echo 'info string Hash: cannot take 512'; exit 3", tc, stop).await;
            assert_eq!(game.reason, "White disconnects");
            let Some(EngineFault::Died(report)) = game.fault else {
                panic!("{:?}", game.fault);
            };
            assert_eq!(report.status.as_deref(), Some("exit status: 3"));
            assert_eq!(report.during, "waiting for bestmove");
            assert_eq!(report.said, ["info string Hash: cannot take 512"]);
        }

        /// A match that stops while a game waits for an engine that never answers: the game
        /// stops waiting (a game on the runtime would be dropped at its await) and its task
        /// ends at the match's abort, with no result handed over. Without the stop flag the
        /// wait would last `Timeouts::unclocked_move`, a minute.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_stopped_match_ends_a_wait_for_a_silent_engine() {
            let tc = TimeControl {
                nodes: Some(100),
                ..TimeControl::default()
            };
            let stop = Arc::new(AtomicBool::new(false));
            let game = tokio::spawn(play_with(":", tc, Arc::clone(&stop)));
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(!game.is_finished(), "the engine never answers");
            stop.store(true, Ordering::SeqCst);
            game.abort();
            let ended = tokio::time::timeout(Duration::from_secs(20), game)
                .await
                .expect("the game's task ends long before the engine's minute");
            assert!(ended.is_err_and(|e| e.is_cancelled()), "no record");
        }
    }

    /// Every way a game ends, with the words cutechess prints for it (`Result::description`
    /// and its boards' results) and what arbiter adds for the PGN.
    #[test]
    fn result_texts_are_cutechess_words() {
        let adjudication = |rule: &str| Termination::Adjudication(rule.into());
        let white = Some(Color::White);
        let black = Some(Color::Black);
        // (winner, termination, side to move or at fault, illegal move, text, detail)
        let cases = [
            (
                white,
                Termination::Checkmate,
                Color::Black,
                None,
                "White mates",
                None,
            ),
            (
                black,
                Termination::Checkmate,
                Color::White,
                None,
                "Black mates",
                None,
            ),
            (
                None,
                Termination::Stalemate,
                Color::White,
                None,
                "Draw by stalemate",
                None,
            ),
            (
                None,
                Termination::InsufficientMaterial,
                Color::White,
                None,
                "Draw by insufficient mating material",
                None,
            ),
            (
                None,
                Termination::ThreefoldRepetition,
                Color::Black,
                None,
                "Draw by 3-fold repetition",
                None,
            ),
            (
                None,
                Termination::FiftyMoves,
                Color::White,
                None,
                "Draw by fifty moves rule",
                None,
            ),
            (
                black,
                Termination::TimeForfeit,
                Color::White,
                None,
                "White loses on time",
                None,
            ),
            (
                None,
                Termination::TimeForfeit,
                Color::White,
                None,
                "Draw by timeout",
                Some("White ran out of time, but Black has only its king and cannot mate"),
            ),
            (
                black,
                Termination::IllegalMove,
                Color::White,
                Some("e2e5"),
                "White makes an illegal move: e2e5",
                None,
            ),
            (
                white,
                Termination::Abandoned,
                Color::Black,
                None,
                "Black disconnects",
                None,
            ),
            (
                black,
                Termination::StalledConnection,
                Color::White,
                None,
                "White's connection stalls",
                None,
            ),
            (
                black,
                adjudication(RESIGN_BY_SCORE),
                Color::White,
                None,
                "Black wins by adjudication",
                Some("resign score"),
            ),
            (
                white,
                adjudication(RESIGN_BY_SCORE),
                Color::White,
                None,
                "White wins by adjudication",
                Some("resign score"),
            ),
            (
                None,
                adjudication(DRAW_BY_SCORE),
                Color::Black,
                None,
                "Draw by adjudication",
                Some("draw score"),
            ),
            (
                None,
                adjudication(MAXIMUM_MOVES),
                Color::White,
                None,
                "Draw by adjudication",
                Some("maximum moves"),
            ),
        ];
        for (winner, termination, side, illegal, text, extra) in cases {
            let outcome = Outcome {
                winner,
                termination,
            };
            assert_eq!(describe(&outcome, side, illegal), text, "{outcome:?}");
            assert_eq!(detail(&outcome, side).as_deref(), extra, "{outcome:?}");
        }
    }
}
