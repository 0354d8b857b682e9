//! A small UCI engine that misbehaves on purpose, for the runner's fault tests.
//!
//! It plays legal moves (a seeded choice among the legal moves, with a fake score) until its
//! fault triggers. Usage: `arbiter-fixture-engine [FAULT[=N]] [--seed S] [--score CP]`, where
//! FAULT is one of:
//!
//! - `crash=N`: exit with status 3 when asked for move N (1-based), with a line on stderr
//! - `die-on-option=NAME`: exit with status 1 when sent `setoption name NAME ...`, saying why
//!   on stdout and stderr, as engines do with an option value they cannot take
//! - `hang=N`: never answer `go` number N (and ignore `stop`)
//! - `illegal=N`, `none=N`, `null=N`, `a1a1=N`, `garbage=N`, `empty=N`: on move N answer an
//!   illegal move, `bestmove (none)`, `bestmove 0000`, `bestmove a1a1`, garbage, or `bestmove`
//! - `slow=MS`: think MS milliseconds per move (to lose on time)
//! - `overrun=MS`: think for the time its clock shows (`wtime`/`btime`) plus MS milliseconds,
//!   every move: the engine that a clock forgiving overruns within the margin never flags
//! - `noisy`: print garbage lines and very long lines around every answer
//! - `late=N`: on move N think for 600 ms whatever the clock says, then answer: the runner has
//!   flagged it by then, and the stale `bestmove` arrives while the runner moves on
//! - `no-uciok`, `no-readyok`: never finish the handshake / never answer `isready`
//! - `uci-garbage`: answer `uci` with lines of another protocol, never `uciok`, and wait
//! - `uci-exit`: answer `uci` with one line, a line on stderr, and exit with status 1
//! - `slow-readyok=MS`: wait MS milliseconds before every `readyok` (fastchess's `-ping-ms`)
//! - `scoreless`: never print a scored `info` line
//!
//! It declares the options `Hash` (spin 1..1024), `Threads` (spin 1..8), `Style` (combo Solid,
//! Normal, Risky), `Ponder` (check) and `Clear Hash` (button).
//!
//! And one mode that is no fault at all: `staunton` runs staunton's own UCI loop, the code of
//! the `staunton` binary, so the runner's tests can put the same engine behind a pipe and in
//! process and compare.

use std::io::{BufRead, Write};
use std::time::Duration;

use arbiter_rules::uci::{move_to_uci, parse_uci_move};
use arbiter_rules::{Color, Position};

#[derive(Default)]
struct Config {
    fault: String,
    /// The fault's argument: a number (`at`) or a name (`arg`).
    at: u64,
    arg: String,
    seed: u64,
    score: i32,
}

fn parse_args() -> Config {
    let mut config = Config {
        seed: 1,
        ..Config::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seed" => config.seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1),
            "--score" => config.score = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            fault => {
                let (name, n) = fault.split_once('=').unwrap_or((fault, "1"));
                config.fault = name.to_owned();
                config.at = n.parse().unwrap_or(1);
                config.arg = n.to_owned();
            }
        }
    }
    config
}

fn set_position(line: &str) -> Option<Position> {
    let rest = line.strip_prefix("position")?.trim();
    let (mut pos, moves) = if let Some(rest) = rest.strip_prefix("startpos") {
        (Position::starting(), rest.trim().strip_prefix("moves"))
    } else {
        let rest = rest.strip_prefix("fen")?.trim();
        let (fen, moves) = match rest.find(" moves") {
            Some(i) => (&rest[..i], Some(&rest[i + 6..])),
            None => (rest, None),
        };
        (Position::from_fen(fen).ok()?, moves)
    };
    for mv in moves.unwrap_or("").split_whitespace() {
        let mv = parse_uci_move(&pos, mv).ok()?;
        pos.play_unchecked(mv);
    }
    Some(pos)
}

/// The number after `key` in a `go` command.
fn go_value(line: &str, key: &str) -> Option<u64> {
    let mut tokens = line.split_whitespace();
    tokens.find(|&t| t == key)?;
    tokens.next()?.parse().ok()
}

fn main() {
    let config = parse_args();
    if config.fault == "staunton" {
        let stdin = std::io::BufReader::new(std::io::stdin());
        let out = std::sync::Arc::new(std::sync::Mutex::new(std::io::stdout()));
        staunton::uci::run(staunton::Params::default(), stdin, out);
        return;
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut pos = Position::starting();
    let mut go_count = 0u64;
    let mut state = config.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let say = |out: &mut std::io::Stdout, text: &str| {
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    };
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        let fault = config.fault.as_str();
        match line.split_whitespace().next().unwrap_or("") {
            "uci" if fault == "uci-garbage" => {
                say(&mut out, "Fixture 1.0 by arbiter tests");
                say(&mut out, "Error (unknown command): uci");
                say(&mut out, "feature myname=\"Fixture\" done=1");
            }
            "uci" if fault == "uci-exit" => {
                say(&mut out, "Unknown command: uci");
                eprintln!("fixture: usage: arbiter-fixture-engine --protocol xboard");
                std::process::exit(1);
            }
            "uci" => {
                say(&mut out, "a banner line some engines print");
                say(&mut out, "id name Fixture");
                say(&mut out, "id author arbiter tests");
                say(
                    &mut out,
                    "option name Hash type spin default 16 min 1 max 1024",
                );
                say(
                    &mut out,
                    "option name Threads type spin default 1 min 1 max 8",
                );
                say(
                    &mut out,
                    "option name Style type combo default Normal var Solid var Normal var Risky",
                );
                say(&mut out, "option name Ponder type check default false");
                say(&mut out, "option name Clear Hash type button");
                if fault != "no-uciok" {
                    say(&mut out, "uciok");
                }
            }
            "isready" if fault != "no-readyok" => {
                if fault == "slow-readyok" {
                    std::thread::sleep(Duration::from_millis(config.at));
                }
                say(&mut out, "readyok")
            }
            "position" => {
                if let Some(p) = set_position(line) {
                    pos = p;
                }
            }
            "go" => {
                go_count += 1;
                let due = go_count == config.at;
                if due && fault == "crash" {
                    eprintln!("fixture: crashing on purpose at move {go_count}");
                    std::process::exit(3);
                }
                if due && fault == "hang" {
                    // Ignore everything from now on, but keep reading so the pipe stays open.
                    for _ in stdin.lock().lines() {}
                    std::thread::sleep(Duration::from_secs(3600));
                    return;
                }
                if fault == "slow" {
                    std::thread::sleep(Duration::from_millis(config.at));
                }
                if fault == "overrun" {
                    let own = if pos.turn() == Color::White {
                        "wtime"
                    } else {
                        "btime"
                    };
                    let told = go_value(line, own).unwrap_or(0);
                    std::thread::sleep(Duration::from_millis(told + config.at));
                }
                if due && fault == "late" {
                    std::thread::sleep(Duration::from_millis(600));
                }
                if fault == "noisy" {
                    say(&mut out, "Unknown command: hello");
                    say(&mut out, &"x".repeat(200_000));
                    say(&mut out, "info depth seventeen score banana");
                }
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    say(&mut out, "bestmove (none)");
                    continue;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let mv = moves[(state % moves.len() as u64) as usize];
                if fault != "scoreless" {
                    say(
                        &mut out,
                        &format!(
                            "info multipv 1 depth 1 seldepth 1 score cp {} nodes 1 pv {}",
                            config.score,
                            move_to_uci(Some(mv))
                        ),
                    );
                }
                let answer = match fault {
                    "illegal" if due => "bestmove e1e5".to_owned(),
                    "none" if due => "bestmove (none)".to_owned(),
                    "null" if due => "bestmove 0000".to_owned(),
                    "a1a1" if due => "bestmove a1a1 ".to_owned(),
                    "garbage" if due => "bestmove ~~~garbage~~~".to_owned(),
                    "empty" if due => "bestmove".to_owned(),
                    _ => format!("bestmove {}", move_to_uci(Some(mv))),
                };
                say(&mut out, &answer);
            }
            "setoption" if fault == "die-on-option" => {
                let rest = line.strip_prefix("setoption name ").unwrap_or("");
                let (name, value) = rest.split_once(" value ").unwrap_or((rest, ""));
                if name.eq_ignore_ascii_case(&config.arg) {
                    say(
                        &mut out,
                        &format!("info string {name}: cannot take {value}"),
                    );
                    eprintln!("fixture: cannot set {name} to {value}");
                    std::process::exit(1);
                }
            }
            "quit" => return,
            _ => {}
        }
    }
}
