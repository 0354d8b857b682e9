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
    SetParams(Params),
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
        let args = &tokens[start + 1..];
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
                for job in state.set_option(args, &out) {
                    let _ = jobs.send(job);
                }
            }
            "ucinewgame" => {
                state.history = vec![Position::starting()];
                let _ = jobs.send(Job::NewGame);
            }
            "position" => match parse_position(args) {
                Ok(history) => state.history = history,
                Err(why) => send(
                    &out,
                    &format!("info string {why}; keeping the previous position"),
                ),
            },
            "go" => {
                let limits = state.parse_go(args, &out);
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
            Job::SetParams(params) => engine.set_params(params),
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
    let mut line = format!(
        "info depth {} seldepth {} score {} nodes {} nps {} time {} hashfull {}",
        info.depth,
        info.seldepth,
        info.score.to_uci(),
        info.nodes,
        info.nps(),
        info.elapsed.as_millis(),
        info.hashfull
    );
    if !info.pv.is_empty() {
        line.push_str(" pv");
        for &mv in info.pv {
            line.push(' ');
            line.push_str(&move_to_uci(Some(mv)));
        }
    }
    line
}

/// The closing lines of a search: a score line when there was no move to search, then
/// exactly one `bestmove`.
fn final_lines(result: &SearchResult) -> Vec<String> {
    let mut lines = Vec::new();
    match result.best_move {
        None => {
            lines.push(format!(
                "info depth 0 score {} nodes {} nps {} time {}",
                result.score.to_uci(),
                result.nodes,
                nps(result.nodes, result.elapsed),
                result.elapsed.as_millis()
            ));
            lines.push("bestmove 0000".to_owned());
        }
        Some(best) => {
            let mut line = format!("bestmove {}", move_to_uci(Some(best)));
            if let Some(ponder) = result.ponder {
                line.push_str(&format!(" ponder {}", move_to_uci(Some(ponder))));
            }
            lines.push(line);
        }
    }
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
            format!("option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"),
            "option name Threads type spin default 1 min 1 max 1".to_owned(),
            format!(
                "option name Move Overhead type spin default {} min 0 max {MAX_MOVE_OVERHEAD_MS}",
                DEFAULT_MOVE_OVERHEAD.as_millis()
            ),
            "option name Clear Hash type button".to_owned(),
            "option name ParamsFile type string default <empty>".to_owned(),
        ];
        lines.extend(self.params.uci_options());
        lines.push("uciok".to_owned());
        lines
    }

    /// `setoption name <N> [value <V>]`; returns the work it gives the search thread.
    fn set_option(&mut self, args: &[&str], out: &Output) -> Vec<Job> {
        let complain = |why: String| send(out, &format!("info string {why}"));
        if args.first() != Some(&"name") {
            complain("setoption: expected `setoption name <name> [value <value>]`".into());
            return Vec::new();
        }
        let value_at = args.iter().position(|t| *t == "value");
        let name = args[1..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at
            .map(|i| args[i + 1..].join(" "))
            .unwrap_or_default();
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
                        return vec![Job::SetParams(params)];
                    }
                    Err(e) => complain(format!("setoption ParamsFile: {e}")),
                }
            }
            _ => match self.params.set_text(&name, &value) {
                Ok(()) => return vec![Job::SetParams(self.params.clone())],
                Err(e) => complain(format!("setoption: {e}")),
            },
        }
        Vec::new()
    }

    /// `go ...`: every limit the protocol defines. Unknown tokens are reported and skipped. A
    /// limit whose value is missing or not a number is reported and taken as 0, its tightest
    /// (depth 1, no time left, 1 node ...), the way C++'s `>>` leaves 0 behind in Stockfish's
    /// parser: a malformed limit must never turn into no limit, which would search until a
    /// `stop` the GUI has no reason to send, and the GUI still gets its `bestmove`.
    fn parse_go(&self, args: &[&str], out: &Output) -> Limits {
        let mut limits = Limits {
            move_overhead: self.move_overhead,
            started_at: Some(Instant::now()),
            ..Limits::default()
        };
        let mut clock = ClockLimits::default();
        let mut has_clock = false;
        let mut i = 0;
        let complain = |why: String| send(out, &format!("info string go: {why}"));
        while i < args.len() {
            let key = args[i];
            let takes_number = matches!(
                key,
                "wtime"
                    | "btime"
                    | "winc"
                    | "binc"
                    | "movestogo"
                    | "movetime"
                    | "depth"
                    | "nodes"
                    | "mate"
            );
            if takes_number {
                let value = args.get(i + 1).copied();
                let n = match value.and_then(parse_integer) {
                    Some(n) => {
                        i += 2;
                        n
                    }
                    None => {
                        // The bad value is skipped, unless it is the next keyword.
                        let found = match value {
                            Some(v) if !GO_KEYWORDS.contains(&v) => {
                                i += 2;
                                format!("found {v:?}")
                            }
                            _ => {
                                i += 1;
                                "found none".to_owned()
                            }
                        };
                        complain(format!(
                            "expected a number after {key}, {found}; taking {key} 0"
                        ));
                        0
                    }
                };
                let ms = Duration::from_millis(n.max(0) as u64);
                let count = n.max(0) as u64;
                match key {
                    "wtime" => {
                        clock.wtime = ms;
                        has_clock = true;
                    }
                    "btime" => {
                        clock.btime = ms;
                        has_clock = true;
                    }
                    "winc" => clock.winc = ms,
                    "binc" => clock.binc = ms,
                    "movestogo" => clock.movestogo = (count > 0).then_some(count.min(1000) as u32),
                    "movetime" => limits.movetime = Some(ms),
                    "depth" => limits.depth = Some(count.clamp(1, 1000) as u32),
                    "nodes" => limits.nodes = Some(count.max(1)),
                    // A mate in n moves is found by a search of 2n - 1 plies.
                    "mate" => {
                        limits.depth = Some((2 * count).saturating_sub(1).clamp(1, 1000) as u32)
                    }
                    _ => unreachable!(),
                }
                continue;
            }
            match key {
                "infinite" => limits.infinite = true,
                // Pondering is not implemented: `go ponder` searches its limits at once.
                "ponder" => {}
                "searchmoves" => {
                    while let Some(mv) = args
                        .get(i + 1)
                        .and_then(|t| parse_uci_move(self.current(), t).ok())
                    {
                        limits.searchmoves.push(mv);
                        i += 1;
                    }
                }
                other => complain(format!("unknown token {other:?} ignored")),
            }
            i += 1;
        }
        if has_clock {
            limits.clock = Some(clock);
        }
        limits
    }
}

/// Every keyword of `go`: a value that is one of them was missing, not malformed.
const GO_KEYWORDS: &[&str] = &[
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
    "infinite",
    "ponder",
    "searchmoves",
];

/// A whole number of `go`; digits beyond `i64` saturate (a clock of 10^20 ms is just long).
fn parse_integer(token: &str) -> Option<i64> {
    if let Ok(n) = token.parse::<i64>() {
        return Some(n);
    }
    let (negative, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(if negative {
        i64::MIN
    } else {
        i64::MAX
    })
}

/// `position startpos|fen <fen> [moves ...]` as the full game history.
fn parse_position(args: &[&str]) -> Result<Vec<Position>, String> {
    let moves_at = args.iter().position(|t| *t == "moves");
    let setup = &args[..moves_at.unwrap_or(args.len())];
    let start = match setup.first() {
        Some(&"startpos") if setup.len() == 1 => Position::starting(),
        Some(&"fen") if setup.len() > 1 => {
            let fen = setup[1..].join(" ");
            Position::from_fen(&fen).map_err(|e| format!("position fen {fen:?}: {e}"))?
        }
        _ => return Err("expected `position startpos|fen <fen> [moves <move>...]`".to_owned()),
    };
    let mut history = vec![start];
    for text in moves_at.map_or(&[][..], |i| &args[i + 1..]) {
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
    use crate::Score;

    #[test]
    fn positions_are_validated() {
        assert_eq!(parse_position(&["startpos"]).unwrap().len(), 1);
        let h = parse_position(&["startpos", "moves", "e2e4", "e7e5"]).unwrap();
        assert_eq!(h.len(), 3);
        assert!(parse_position(&["startpos", "moves", "e2e5"])
            .unwrap_err()
            .contains("e2e5"));
        assert!(parse_position(&["fen", "8/8/8/8/8/8/8/8", "w", "-", "-"]).is_err());
        assert!(parse_position(&["sideways"]).is_err());
        let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
        let args: Vec<&str> = ["fen"]
            .into_iter()
            .chain(fen.split(' '))
            .chain(["moves", "e1g1"])
            .collect();
        let h = parse_position(&args).unwrap();
        assert_eq!(h[1].fen(), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
    }

    #[test]
    fn go_numbers_saturate_and_refuse_what_is_not_one() {
        assert_eq!(parse_integer("42"), Some(42));
        assert_eq!(parse_integer("-7"), Some(-7));
        assert_eq!(parse_integer("99999999999999999999"), Some(i64::MAX));
        assert_eq!(parse_integer("-99999999999999999999"), Some(i64::MIN));
        for bad in ["abc", "", "-", "1.5", "12abc", "0x10"] {
            assert_eq!(parse_integer(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_malformed_go_limit_is_its_tightest_never_none() {
        let state = State {
            params: Params::default(),
            hash_mb: DEFAULT_HASH_MB,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            history: vec![Position::starting()],
        };
        let out: Output = Arc::new(Mutex::new(Vec::<u8>::new()));
        let go = |line: &str| state.parse_go(&line.split_whitespace().collect::<Vec<_>>(), &out);
        assert_eq!(go("depth abc").depth, Some(1));
        assert_eq!(go("nodes x").nodes, Some(1));
        assert_eq!(go("movetime soon").movetime, Some(Duration::ZERO));
        // A missing value before the next keyword: that keyword still counts.
        let limits = go("depth nodes 500");
        assert_eq!((limits.depth, limits.nodes), (Some(1), Some(500)));
        let limits = go("wtime abc btime 1000");
        let clock = limits.clock.expect("a clock");
        assert_eq!(
            (clock.wtime, clock.btime),
            (Duration::ZERO, Duration::from_secs(1))
        );
        assert_eq!(go("depth").depth, Some(1));
        assert_eq!(go("depth 99999999999999999999").depth, Some(1000));
    }

    #[test]
    fn score_lines() {
        assert_eq!(Score::Mate(2).to_uci(), "mate 2");
    }
}
