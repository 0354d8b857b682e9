//! The UCI protocol loop of the `staunton` binary.
//!
//! Input is read on the calling thread; searches run on a worker thread that owns the
//! [`Engine`], so `isready` and `stop` are answered while a search runs. Commands other than
//! those two are queued to the worker in order, so `ucinewgame` then `isready` answers
//! `readyok` only once the new game is set up. Nothing a GUI sends can end the loop except
//! `quit` and end of input: bad input gets `info string <what was wrong>` and is otherwise
//! ignored, keeping the previous valid state (a `position` with an illegal move keeps the
//! previous position).

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use arbiter_rules::uci::{move_to_uci, parse_uci_move};
use arbiter_rules::Position;
use arbiter_uci::{BestMove, GoLimits, Info, OptionDecl, PositionCommand, SetOption, Start};

use crate::search::{nps, SearchInfo, SearchResult};
use crate::timeman::{ClockLimits, Limits, DEFAULT_MOVE_OVERHEAD};
use crate::tt::available_memory_mb;
use crate::{Engine, Params, DEFAULT_HASH_MB, MAX_HASH_MB};

/// Where UCI output goes; shared by the input and search threads, one whole line at a time.
pub type Output = Arc<Mutex<dyn Write + Send>>;

const MAX_MOVE_OVERHEAD_MS: u64 = 5_000;

fn send(out: &Output, line: &str) {
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    // A closed pipe means the GUI is gone; the read loop will see end of input and quit.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Work for the search thread, in the order the GUI sent it.
enum Job {
    Go {
        history: Vec<Position>,
        limits: Limits,
        /// This search's own flag: a `stop` can never be lost to a later `go`.
        stop: Arc<AtomicBool>,
    },
    NewGame,
    SetHash(usize),
    SetParams(Box<Params>),
    Ready,
    Eval(Position),
}

/// Runs the protocol until `quit` or end of input.
pub fn run(params: Params, input: impl BufRead, out: Output) {
    // Searches sent and not yet answered with `bestmove`, and their stop flags.
    let pending = Arc::new(AtomicUsize::new(0));
    let mut stops: Vec<Arc<AtomicBool>> = Vec::new();
    let stop_all = |stops: &mut Vec<Arc<AtomicBool>>| {
        for flag in stops.drain(..) {
            flag.store(true, Ordering::SeqCst);
        }
    };
    let (jobs, inbox) = channel::<Job>();
    let worker = {
        let (pending, out, params) = (pending.clone(), out.clone(), params.clone());
        thread::Builder::new()
            .name("staunton-search".into())
            .stack_size(16 << 20)
            .spawn(move || search_thread(params, inbox, &pending, &out))
            .expect("spawn the search thread")
    };

    let mut state = State {
        params,
        hash_mb: DEFAULT_HASH_MB,
        move_overhead: DEFAULT_MOVE_OVERHEAD,
        history: vec![Position::starting()],
    };
    for line in input.lines() {
        let Ok(line) = line else { break };
        let tokens: Vec<&str> = line.split_whitespace().collect();
        // Unknown leading tokens are skipped, as the protocol asks ("joho debug on").
        let Some(start) = tokens.iter().position(|t| COMMANDS.contains(t)) else {
            if !tokens.is_empty() {
                send(
                    &out,
                    &format!("info string unknown command: {}", line.trim()),
                );
            }
            continue;
        };
        // The command from its word on, for the message parsers of `arbiter-uci`.
        let command = tokens[start..].join(" ");
        match tokens[start] {
            "uci" => {
                for line in state.identify() {
                    send(&out, &line);
                }
            }
            "isready" => {
                if pending.load(Ordering::SeqCst) > 0 {
                    send(&out, "readyok");
                } else {
                    let _ = jobs.send(Job::Ready);
                }
            }
            "setoption" => {
                for job in state.set_option(&command, &out) {
                    let _ = jobs.send(job);
                }
            }
            "ucinewgame" => {
                state.history = vec![Position::starting()];
                let _ = jobs.send(Job::NewGame);
            }
            "position" => match parse_position(&command) {
                Ok(history) => state.history = history,
                Err(why) => send(
                    &out,
                    &format!("info string {why}; keeping the previous position"),
                ),
            },
            "go" => {
                let limits = state.parse_go(&command, &out);
                let stop = Arc::new(AtomicBool::new(false));
                stops.retain(|flag| Arc::strong_count(flag) > 1);
                stops.push(stop.clone());
                pending.fetch_add(1, Ordering::SeqCst);
                let _ = jobs.send(Job::Go {
                    history: state.history.clone(),
                    limits,
                    stop,
                });
            }
            "stop" => stop_all(&mut stops),
            "ponderhit" | "debug" | "register" => {}
            "eval" => {
                let _ = jobs.send(Job::Eval(*state.current()));
            }
            "d" => send(&out, &format!("info string fen {}", state.current().fen())),
            "quit" => break,
            _ => unreachable!("every entry of COMMANDS is handled"),
        }
    }
    stop_all(&mut stops);
    drop(jobs);
    let _ = worker.join();
}

const COMMANDS: &[&str] = &[
    "uci",
    "isready",
    "setoption",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "debug",
    "register",
    "eval",
    "d",
    "quit",
];

fn search_thread(params: Params, inbox: Receiver<Job>, pending: &AtomicUsize, out: &Output) {
    let mut engine = Engine::new(params, DEFAULT_HASH_MB);
    for job in inbox {
        match job {
            Job::Go {
                history,
                limits,
                stop,
            } => {
                let result = engine.search(&history, &limits, &stop, &mut |info| {
                    send(out, &info_line(info));
                });
                for line in final_lines(&result) {
                    send(out, &line);
                }
                pending.fetch_sub(1, Ordering::SeqCst);
            }
            Job::NewGame => engine.new_game(),
            Job::SetHash(mb) => {
                let got = engine.set_hash(mb);
                if got < mb {
                    let available = available_memory_mb()
                        .map(|a| format!(" ({a} MB of memory available)"))
                        .unwrap_or_default();
                    send(
                        out,
                        &format!(
                            "info string Hash {mb} MB could not be allocated{available}; \
                             using {got} MB"
                        ),
                    );
                }
            }
            Job::SetParams(params) => engine.set_params(*params),
            Job::Ready => send(out, "readyok"),
            Job::Eval(pos) => send(
                out,
                &format!(
                    "info string eval {} cp (side to move)",
                    engine.evaluate(&pos)
                ),
            ),
        }
    }
}

/// `info depth ... pv ...` for a completed iteration.
pub fn info_line(info: &SearchInfo<'_>) -> String {
    Info {
        depth: Some(info.depth),
        seldepth: Some(info.seldepth),
        score: Some(info.score),
        nodes: Some(info.nodes),
        nps: Some(info.nps()),
        hashfull: Some(info.hashfull),
        time: Some(info.elapsed),
        pv: info.pv.iter().map(|&mv| move_to_uci(Some(mv))).collect(),
        ..Info::default()
    }
    .to_string()
}

/// The closing lines of a search: a score line when there was no move to search, then
/// exactly one `bestmove` (`0000`, the protocol's null move, when there is none).
fn final_lines(result: &SearchResult) -> Vec<String> {
    let mut lines = Vec::new();
    if result.best_move.is_none() {
        let info = Info {
            depth: Some(0),
            score: Some(result.score),
            nodes: Some(result.nodes),
            nps: Some(nps(result.nodes, result.elapsed)),
            time: Some(result.elapsed),
            ..Info::default()
        };
        lines.push(info.to_string());
    }
    let best = BestMove {
        mv: move_to_uci(result.best_move),
        ponder: result
            .best_move
            .and(result.ponder)
            .map(|mv| move_to_uci(Some(mv))),
    };
    lines.push(best.to_string());
    lines
}

/// What the input thread keeps between commands.
struct State {
    params: Params,
    hash_mb: usize,
    move_overhead: Duration,
    /// The game from its first position; the last is the one `go` searches.
    history: Vec<Position>,
}

impl State {
    fn current(&self) -> &Position {
        self.history.last().expect("never empty")
    }

    fn identify(&self) -> Vec<String> {
        let mut lines = vec![
            format!("id name staunton {}", env!("CARGO_PKG_VERSION")),
            "id author the arbiter developers".to_owned(),
        ];
        let options = [
            OptionDecl::spin("Hash", DEFAULT_HASH_MB as i64, 1, MAX_HASH_MB as i64),
            OptionDecl::spin("Threads", 1, 1, 1),
            OptionDecl::spin(
                "Move Overhead",
                DEFAULT_MOVE_OVERHEAD.as_millis() as i64,
                0,
                MAX_MOVE_OVERHEAD_MS as i64,
            ),
            OptionDecl::new("Clear Hash", "button"),
            OptionDecl {
                default: Some("<empty>".to_owned()),
                ..OptionDecl::new("ParamsFile", "string")
            },
        ];
        lines.extend(options.iter().map(ToString::to_string));
        lines.extend(self.params.uci_options());
        lines.push("uciok".to_owned());
        lines
    }

    /// `setoption name <N> [value <V>]`; returns the work it gives the search thread.
    fn set_option(&mut self, command: &str, out: &Output) -> Vec<Job> {
        let complain = |why: String| send(out, &format!("info string {why}"));
        let set = match SetOption::parse(command) {
            Ok(set) => set,
            Err(why) => {
                complain(why.to_string());
                return Vec::new();
            }
        };
        let name = set.name;
        let value = set.value.unwrap_or_default();
        let number = |min: u64, max: u64| -> Option<u64> {
            match value.parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => Some(v),
                _ => {
                    complain(format!(
                        "setoption {name}: expected a whole number from {min} to {max}, found {value:?}"
                    ));
                    None
                }
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                if let Some(mb) = number(1, MAX_HASH_MB as u64) {
                    self.hash_mb = mb as usize;
                    return vec![Job::SetHash(self.hash_mb)];
                }
            }
            "threads" => {
                if number(1, 1024).is_some_and(|n| n != 1) {
                    complain("staunton searches on one thread; Threads stays 1".into());
                }
            }
            "move overhead" => {
                if let Some(ms) = number(0, MAX_MOVE_OVERHEAD_MS) {
                    self.move_overhead = Duration::from_millis(ms);
                }
            }
            "clear hash" => return vec![Job::NewGame],
            "paramsfile" => {
                if value.is_empty() || value == "<empty>" {
                    return Vec::new();
                }
                match Params::load(Path::new(&value)) {
                    Ok(params) => {
                        self.params = params.clone();
                        return vec![Job::SetParams(Box::new(params))];
                    }
                    Err(e) => complain(format!("setoption ParamsFile: {e}")),
                }
            }
            _ => match self.params.set_text(&name, &value) {
                Ok(()) => return vec![Job::SetParams(Box::new(self.params.clone()))],
                Err(e) => complain(format!("setoption: {e}")),
            },
        }
        Vec::new()
    }

    /// `go ...`, read by the protocol's one parser, which reports what it did not understand
    /// and takes a limit whose value is missing or not a number as 0 (see
    /// [`GoLimits::parse`]): a malformed limit must never turn into no limit, and the GUI
    /// still gets its `bestmove`. Here 0 becomes staunton's tightest search (depth 1, 1 node,
    /// no time left), and every limit is bounded to what the search can do.
    fn parse_go(&self, command: &str, out: &Output) -> Limits {
        let complain = |why: String| send(out, &format!("info string go: {why}"));
        let (go, problems) = GoLimits::parse(command);
        for problem in problems {
            complain(problem.to_string());
        }
        // A mate in n moves is found by a search of 2n - 1 plies; with a depth too, the
        // tighter of the two.
        let mate_depth = go.mate.map(|n| (2 * n).saturating_sub(1));
        let depth = match (go.depth, mate_depth) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut searchmoves = Vec::new();
        for text in &go.searchmoves {
            match parse_uci_move(self.current(), text) {
                Ok(mv) => searchmoves.push(mv),
                Err(e) => complain(format!("searchmoves: {text:?} ignored: {e}")),
            }
        }
        Limits {
            depth: depth.map(|d| d.clamp(1, 1000)),
            nodes: go.nodes.map(|n| n.max(1)),
            movetime: go.movetime,
            clock: go.clocks.map(|clocks| ClockLimits {
                movestogo: clocks.movestogo.map(|m| m.min(1000)),
                ..clocks
            }),
            infinite: go.infinite,
            move_overhead: self.move_overhead,
            searchmoves,
            started_at: Some(Instant::now()),
            stop_at: None,
        }
    }
}

/// `position startpos|fen <fen> [moves ...]` as the full game history, every move checked.
fn parse_position(command: &str) -> Result<Vec<Position>, String> {
    let command = PositionCommand::parse(command).map_err(|e| e.to_string())?;
    let start = match &command.start {
        Start::StartPos => Position::starting(),
        Start::Fen(fen) => {
            Position::from_fen(fen).map_err(|e| format!("position fen {fen:?}: {e}"))?
        }
    };
    let mut history = vec![start];
    for text in &command.moves {
        let pos = history.last().expect("never empty");
        let mv = parse_uci_move(pos, text).map_err(|e| format!("position: move {text:?}: {e}"))?;
        let mut next = *pos;
        next.play_unchecked(mv);
        history.push(next);
    }
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_validated() {
        assert_eq!(parse_position("position startpos").unwrap().len(), 1);
        let h = parse_position("position startpos moves e2e4 e7e5").unwrap();
        assert_eq!(h.len(), 3);
        assert!(parse_position("position startpos moves e2e5")
            .unwrap_err()
            .contains("e2e5"));
        assert!(parse_position("position fen 8/8/8/8/8/8/8/8 w - -").is_err());
        assert_eq!(
            parse_position("position sideways").unwrap_err(),
            "expected `position startpos|fen <fen> [moves <move>...]`"
        );
        let h = parse_position("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1").unwrap();
        assert_eq!(h[1].fen(), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
    }

    fn state() -> State {
        State {
            params: Params::default(),
            hash_mb: DEFAULT_HASH_MB,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            history: vec![Position::starting()],
        }
    }

    /// What `line` makes of the limits, and what staunton said about it.
    fn go(state: &State, line: &str) -> (Limits, String) {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let limits = state.parse_go(line, &(out.clone() as Output));
        let said = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        (limits, said)
    }

    #[test]
    fn a_malformed_go_limit_is_its_tightest_never_none() {
        let state = state();
        let go = |line: &str| go(&state, line).0;
        assert_eq!(go("go depth abc").depth, Some(1));
        assert_eq!(go("go nodes x").nodes, Some(1));
        assert_eq!(go("go movetime soon").movetime, Some(Duration::ZERO));
        // A missing value before the next keyword: that keyword still counts.
        let limits = go("go depth nodes 500");
        assert_eq!((limits.depth, limits.nodes), (Some(1), Some(500)));
        let limits = go("go wtime abc btime 1000");
        let clock = limits.clock.expect("a clock");
        assert_eq!(
            (clock.wtime, clock.btime),
            (Duration::ZERO, Duration::from_secs(1))
        );
        assert_eq!(go("go depth").depth, Some(1));
        assert_eq!(go("go depth 99999999999999999999").depth, Some(1000));
        assert_eq!(go("go nodes -5").nodes, Some(1));
        assert_eq!(
            go("go wtime 1 btime 1 movestogo 5000")
                .clock
                .unwrap()
                .movestogo,
            Some(1000)
        );
    }

    #[test]
    fn go_says_what_it_did_not_understand() {
        let state = state();
        let (_, said) = go(&state, "go depth abc sideways");
        assert_eq!(
            said,
            "info string go: expected a number after depth, found \"abc\"; taking depth 0\n\
             info string go: unknown token \"sideways\" ignored\n"
        );
        let (limits, said) = go(&state, "go searchmoves e2e4 e2e5 depth 2");
        assert_eq!(limits.searchmoves.len(), 1);
        assert_eq!(limits.depth, Some(2));
        assert!(
            said.starts_with("info string go: searchmoves: \"e2e5\" ignored"),
            "{said}"
        );
    }

    #[test]
    fn a_mate_search_is_a_depth() {
        let state = state();
        assert_eq!(go(&state, "go mate 3").0.depth, Some(5));
        assert_eq!(go(&state, "go mate 3 depth 2").0.depth, Some(2));
        assert_eq!(go(&state, "go mate 0").0.depth, Some(1));
    }

    #[test]
    fn options_are_declared_in_the_protocol_spelling() {
        let lines = state().identify();
        assert!(lines.contains(&"option name Clear Hash type button".to_owned()));
        assert!(lines.contains(&"option name ParamsFile type string default <empty>".to_owned()));
        assert!(lines.contains(&"option name Threads type spin default 1 min 1 max 1".to_owned()));
        for line in lines.iter().filter(|l| l.starts_with("option ")) {
            assert_eq!(OptionDecl::parse(line).unwrap().to_string(), *line);
        }
    }
}
