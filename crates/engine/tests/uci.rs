//! staunton end to end: UCI sessions driven through the real binary over pipes, plus its
//! `bench` and `params` subcommands.
//!
//! Every read has a timeout, so a broken engine fails a test instead of hanging it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use arbiter_rules::uci::parse_uci_move;
use arbiter_rules::Position;
use staunton::{Params, PARAMS};

/// `staunton bench` at the default depth: the engine's behavioural signature. Update it (and
/// the README) with every change that alters search or evaluation.
const BENCH_SIGNATURE: u64 = 996_896;

const EXE: &str = env!("CARGO_BIN_EXE_staunton");
const TIMEOUT: Duration = Duration::from_secs(20);

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    fn start() -> Session {
        let mut child = Command::new(EXE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start staunton");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to staunton");
        stdin.flush().expect("flush");
    }

    /// Lines up to and including the first that satisfies `done`.
    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + TIMEOUT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let stop = done(&line);
                    seen.push(line);
                    if stop {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out; read so far: {seen:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("staunton exited; read: {seen:#?}"),
            }
        }
    }

    /// Sends `go ...` and returns every line up to `bestmove`, and the time it took.
    fn go(&mut self, args: &str) -> (Vec<String>, Duration) {
        let start = Instant::now();
        self.send(&format!("go {args}"));
        let lines = self.read_until(|l| l.starts_with("bestmove"));
        (lines, start.elapsed())
    }

    fn ready(&mut self) {
        self.send("isready");
        self.read_until(|l| l == "readyok");
    }

    /// Waits for the process to end by itself.
    fn wait_exit(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bestmove(lines: &[String]) -> &str {
    let last = lines.last().expect("a bestmove line");
    last.split_whitespace().nth(1).expect("bestmove <move>")
}

/// The last `info ... score ...` line's score, as ("cp" | "mate", value).
fn last_score(lines: &[String]) -> (String, i32) {
    let line = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info") && l.contains(" score "))
        .unwrap_or_else(|| panic!("no score line in {lines:#?}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "score").expect("score");
    (
        words[at + 1].to_owned(),
        words[at + 2].parse().expect("a number"),
    )
}

fn info_value(line: &str, key: &str) -> Option<u64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == key)?;
    words.get(at + 1)?.parse().ok()
}

fn assert_legal(fen: &str, mv: &str) {
    let pos = Position::from_fen(fen).unwrap();
    parse_uci_move(&pos, mv).unwrap_or_else(|e| panic!("bestmove {mv} in {fen}: {e}"));
}

#[test]
fn handshake_lists_every_option_and_parameter() {
    let mut s = Session::start();
    s.send("uci");
    let lines = s.read_until(|l| l == "uciok");
    assert!(lines.iter().any(|l| l.starts_with("id name staunton")));
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for option in ["Hash", "Threads", "Move Overhead", "ParamsFile"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("option name {option} type "))),
            "{option} missing"
        );
    }
    for spec in PARAMS {
        let expected = format!(
            "option name {} type spin default {} min {} max {}",
            spec.name, spec.default, spec.min, spec.max
        );
        assert!(lines.contains(&expected), "missing: {expected}");
    }
    s.ready();
}

#[test]
fn setoption_of_a_piece_value_changes_the_evaluation() {
    let mut s = Session::start();
    // White has an extra knight.
    s.send("position fen 4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 w - - 0 1");
    let eval = |s: &mut Session| -> i32 {
        s.send("eval");
        let line = s.read_until(|l| l.starts_with("info string eval"));
        line.last()
            .unwrap()
            .split_whitespace()
            .nth(3)
            .unwrap()
            .parse()
            .unwrap()
    };
    let before = eval(&mut s);
    let knight = Params::default();
    let (knight_mg, knight_eg) = (knight.knight_mg, knight.knight_eg);
    // Names are case-insensitive, as UCI says.
    s.send(&format!(
        "setoption name Knight_MG value {}",
        knight_mg + 100
    ));
    s.send(&format!(
        "setoption name knight_eg value {}",
        knight_eg + 100
    ));
    let after = eval(&mut s);
    assert_eq!(after - before, 100, "before {before}, after {after}");
    // An out-of-range value is refused with a reason and changes nothing.
    s.send("setoption name knight_mg value 99999");
    let complaint = s.read_until(|l| l.starts_with("info string"));
    assert!(
        complaint.last().unwrap().contains("knight_mg"),
        "{complaint:?}"
    );
    assert_eq!(eval(&mut s), after);

    // A parameter file replaces every parameter: back to the default knight, 50 more for
    // both halves of the knight's value.
    let path = std::env::temp_dir().join(format!("staunton-uci-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "knight_mg = {}\nknight_eg = {}\n",
            knight_mg + 50,
            knight_eg + 50
        ),
    )
    .unwrap();
    s.send(&format!(
        "setoption name ParamsFile value {}",
        path.display()
    ));
    assert_eq!(eval(&mut s) - before, 50);
    std::fs::write(&path, "knight_mg = oops\n").unwrap();
    s.send(&format!(
        "setoption name ParamsFile value {}",
        path.display()
    ));
    let complaint = s.read_until(|l| l.starts_with("info string"));
    assert!(
        complaint.last().unwrap().contains("ParamsFile"),
        "{complaint:?}"
    );
    assert_eq!(eval(&mut s) - before, 50);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn illegal_position_input_keeps_the_previous_position() {
    let mut s = Session::start();
    s.send("position startpos moves e2e4");
    s.send("position startpos moves e2e4 e7e5 e1e3");
    let complaint = s.read_until(|l| l.starts_with("info string"));
    assert!(complaint.last().unwrap().contains("e1e3"), "{complaint:?}");
    s.send("position fen 8/8/8/8/8/8/8/8 w - - 0 1");
    let complaint = s.read_until(|l| l.starts_with("info string"));
    assert!(
        complaint.last().unwrap().contains("no king"),
        "{complaint:?}"
    );
    // Still the position after 1. e4: Black to move.
    let (lines, _) = s.go("depth 4");
    assert_legal(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        bestmove(&lines),
    );
}

#[test]
fn garbage_never_kills_the_engine() {
    let mut s = Session::start();
    for line in [
        "hello world",
        "",
        "   ",
        "position",
        "position fen",
        "position fen rnbqkbnr/pppppppp w",
        "go depth banana",
        "go wtime -50 btime x",
        "setoption",
        "setoption name Hash value -5",
        "setoption name NoSuchOption value 3",
        "setoption name Threads value 4",
        "stop",
        "ponderhit",
        "\u{1b}[A\u{0}\u{7f}",
    ] {
        s.send(line);
    }
    s.ready();
    s.send("position startpos");
    let (lines, _) = s.go("depth 3");
    assert_legal(arbiter_rules::STARTING_FEN, bestmove(&lines));
    // Unknown leading tokens are skipped, as the protocol asks.
    s.send("joho isready");
    s.read_until(|l| l == "readyok");
}

#[test]
fn a_malformed_go_limit_still_ends_in_a_bestmove() {
    // `go depth abc` searched forever: the bad depth was skipped and no limit was left.
    let mut s = Session::start();
    s.send("position startpos");
    let (lines, _) = s.go("depth abc");
    assert!(
        lines.contains(
            &"info string go: expected a number after depth, found \"abc\"; taking depth 0"
                .to_owned()
        ),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("unknown token")),
        "{lines:#?}"
    );
    assert_legal(arbiter_rules::STARTING_FEN, bestmove(&lines));
    for go in [
        "movetime soon",
        "nodes",
        "depth movetime x",
        "wtime abc btime abc",
        "mate m8",
    ] {
        let (lines, _) = s.go(go);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string go: expected a number after")),
            "go {go}: {lines:#?}"
        );
        assert_legal(arbiter_rules::STARTING_FEN, bestmove(&lines));
    }
    // A number too large for the engine is a long limit, not a malformed one.
    let (lines, _) = s.go("depth 99999999999999999999 nodes 2000");
    assert!(
        !lines.iter().any(|l| l.starts_with("info string")),
        "{lines:#?}"
    );
    assert_legal(arbiter_rules::STARTING_FEN, bestmove(&lines));
}

#[test]
fn the_largest_hash_offered_never_kills_the_engine() {
    // Hash 32768 aborted staunton on a 24 GB machine: the allocation failed. Now the table is
    // halved until it fits and is not touched until used, so this costs no memory here.
    let mut s = Session::start();
    s.send("uci");
    let lines = s.read_until(|l| l == "uciok");
    let max = lines
        .iter()
        .find(|l| l.starts_with("option name Hash "))
        .and_then(|l| info_value(l, "max"))
        .expect("a Hash option with a max");
    s.send(&format!("setoption name Hash value {max}"));
    s.send("isready");
    let lines = s.read_until(|l| l == "readyok");
    // The machine may have that much; if not, the engine says what it took instead.
    for line in &lines[..lines.len() - 1] {
        let prefix = format!("info string Hash {max} MB could not be allocated");
        assert!(line.starts_with(&prefix), "{lines:#?}");
        let got: u64 = line
            .rsplit_once("; using ")
            .and_then(|(_, mb)| mb.strip_suffix(" MB"))
            .and_then(|mb| mb.parse().ok())
            .unwrap_or_else(|| panic!("no size in {line}"));
        assert!(got < max && got.is_power_of_two(), "{line}");
    }
    s.send("position startpos");
    let (lines, _) = s.go("depth 4");
    assert_legal(arbiter_rules::STARTING_FEN, bestmove(&lines));
    assert!(
        s.child.try_wait().expect("try_wait").is_none(),
        "staunton exited"
    );
    // Beyond the maximum is refused by the option itself, as before.
    s.send(&format!("setoption name Hash value {}", max + 1));
    let lines = s.read_until(|l| l.starts_with("info string"));
    assert!(lines
        .last()
        .unwrap()
        .contains("expected a whole number from 1 to 32768"));
    s.ready();
}

#[test]
fn one_legal_move_is_answered_quickly() {
    let mut s = Session::start();
    // Kxb2 is the only legal move.
    let fen = "k7/8/8/8/8/8/1q6/K7 w - - 0 1";
    s.send(&format!("position fen {fen}"));
    let (lines, took) = s.go("wtime 30000 btime 30000");
    assert_eq!(bestmove(&lines), "a1b2");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn finds_mate_in_one_and_two() {
    let mut s = Session::start();
    s.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
    let (lines, _) = s.go("depth 6");
    assert_eq!(bestmove(&lines), "d1d8");
    assert_eq!(last_score(&lines), ("mate".to_owned(), 1));

    s.send("position fen 7k/8/8/8/8/8/R7/1R4K1 w - - 0 1");
    let (lines, _) = s.go("depth 8");
    // Either rook cuts the king off; the other mates.
    assert!(["a2a7", "b1b7"].contains(&bestmove(&lines)), "{lines:?}");
    assert_eq!(last_score(&lines), ("mate".to_owned(), 2));

    // The side being mated sees it coming.
    s.send("position fen 7k/R7/8/8/8/8/8/1R4K1 b - - 0 1");
    let (lines, _) = s.go("depth 8");
    assert_eq!(last_score(&lines), ("mate".to_owned(), -1));
}

#[test]
fn no_legal_move_gives_a_null_bestmove() {
    let mut s = Session::start();
    // Fool's mate: White is checkmated.
    s.send("position startpos moves f2f3 e7e5 g2g4 d8h4");
    let (lines, _) = s.go("depth 5");
    assert!(["0000", "(none)"].contains(&bestmove(&lines)), "{lines:?}");
    assert_eq!(last_score(&lines), ("mate".to_owned(), 0));
    // Stalemate.
    s.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let (lines, _) = s.go("wtime 1000 btime 1000");
    assert!(["0000", "(none)"].contains(&bestmove(&lines)), "{lines:?}");
    assert_eq!(last_score(&lines), ("cp".to_owned(), 0));
}

#[test]
fn isready_and_stop_during_infinite_search() {
    let mut s = Session::start();
    s.send("position startpos moves d2d4 d7d5 c2c4");
    s.send("go infinite");
    thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    s.send("isready");
    let lines = s.read_until(|l| l == "readyok");
    assert!(start.elapsed() < Duration::from_millis(1000));
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "infinite must wait for stop"
    );
    let start = Instant::now();
    s.send("stop");
    let lines = s.read_until(|l| l.starts_with("bestmove"));
    assert!(
        start.elapsed() < Duration::from_millis(1000),
        "{:?}",
        start.elapsed()
    );
    assert_legal(
        "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2",
        bestmove(&lines),
    );
    // Exactly one bestmove per go.
    s.ready();
}

#[test]
fn end_of_input_and_quit_end_the_process() {
    let mut s = Session::start();
    s.send("uci");
    s.read_until(|l| l == "uciok");
    s.stdin = None; // close the pipe
    assert!(
        s.wait_exit(Duration::from_secs(5)),
        "still running after EOF"
    );

    let mut s = Session::start();
    s.send("position startpos");
    s.send("go infinite");
    thread::sleep(Duration::from_millis(100));
    s.send("quit");
    assert!(
        s.wait_exit(Duration::from_secs(5)),
        "still running after quit"
    );
}

#[test]
fn same_search_after_ucinewgame_is_identical() {
    let mut s = Session::start();
    let run = |s: &mut Session| {
        s.send("ucinewgame");
        s.send("position startpos moves e2e4 c7c5 g1f3");
        let (lines, _) = s.go("depth 8");
        let info = lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth 8 "))
            .expect("a depth 8 line")
            .clone();
        (
            bestmove(&lines).to_owned(),
            last_score(&lines),
            info_value(&info, "nodes"),
        )
    };
    let first = run(&mut s);
    let second = run(&mut s);
    assert_eq!(first, second);
    // And a node-limited search too.
    s.send("ucinewgame");
    s.send("position startpos");
    let (a, _) = s.go("nodes 20000");
    s.send("ucinewgame");
    s.send("position startpos");
    let (b, _) = s.go("nodes 20000");
    assert_eq!(bestmove(&a), bestmove(&b));
    assert_eq!(last_score(&a), last_score(&b));
}

/// Plays the engine against itself at 1 s + 10 ms, tracking both clocks as a referee would
/// (time from writing `go` to reading `bestmove`); neither flag may fall.
#[test]
fn never_loses_on_time_at_one_second_plus_ten_milliseconds() {
    let starts = [
        "startpos",
        "fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "fen 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ];
    let inc = Duration::from_millis(10);
    for start in starts {
        let mut s = Session::start();
        s.send("ucinewgame");
        let mut clocks = [Duration::from_millis(1000); 2];
        let mut moves: Vec<String> = Vec::new();
        let mut pos = match start.strip_prefix("fen ") {
            Some(fen) => Position::from_fen(fen).unwrap(),
            None => Position::starting(),
        };
        for ply in 0..40 {
            if !pos.has_legal_moves() {
                break;
            }
            let side = ply % 2; // 0: the side that moved first
            let (w, b) = if pos.turn() == arbiter_rules::Color::White {
                (clocks[side], clocks[1 - side])
            } else {
                (clocks[1 - side], clocks[side])
            };
            s.send(&format!("position {start} moves {}", moves.join(" ")));
            let (lines, took) = s.go(&format!(
                "wtime {} btime {} winc 10 binc 10",
                w.as_millis(),
                b.as_millis()
            ));
            assert!(
                took < clocks[side],
                "{start}, ply {ply}: used {took:?} with {:?} left",
                clocks[side]
            );
            clocks[side] = clocks[side] - took + inc;
            let mv = bestmove(&lines).to_owned();
            let parsed = parse_uci_move(&pos, &mv).expect("a legal bestmove");
            pos.play_unchecked(parsed);
            moves.push(mv);
        }
    }
}

#[test]
fn bench_prints_the_signature() {
    let out = Command::new(EXE).arg("bench").output().expect("run bench");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let nodes: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Nodes searched: "))
        .expect("a Nodes searched line")
        .parse()
        .unwrap();
    assert!(stdout.lines().any(|l| l.starts_with("Nodes/second: ")));
    assert_eq!(
        nodes, BENCH_SIGNATURE,
        "bench signature changed: update the README too"
    );
}

#[test]
fn params_subcommand_dumps_every_format() {
    let dump = |arg: &str| {
        let out = Command::new(EXE).args(["params", arg]).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    // The defaults are a fit that changes; the formats are what is checked.
    let defaults = Params::default();
    let spsa = dump("--spsa");
    assert_eq!(spsa.lines().count(), PARAMS.len());
    let knight = format!(
        "knight_mg, int, {}, 200, 500, 12, 0.002",
        defaults.knight_mg
    );
    assert!(spsa.contains(&knight), "{spsa}");
    let toml = dump("--toml");
    assert!(toml.contains(&format!("queen_mg = {}", defaults.queen_mg)));
    let json: serde_json::Value = serde_json::from_str(&dump("--json")).unwrap();
    assert_eq!(json.as_array().unwrap().len(), PARAMS.len());
    let table = Command::new(EXE).arg("params").output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let in_pawns = format!("{:.2}", f64::from(defaults.knight_mg) / 100.0);
    assert!(table
        .lines()
        .any(|l| l.starts_with("knight_mg") && l.contains(&in_pawns)));

    // A params file is loaded by --params, and a bad one is refused with exit status 2.
    let dir = std::env::temp_dir().join(format!("staunton-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, "knight_mg = 333\n").unwrap();
    let out = Command::new(EXE)
        .args(["--params", good.to_str().unwrap(), "params", "--toml"])
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("knight_mg = 333"));
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "knight_mg = 1\n").unwrap();
    let out = Command::new(EXE)
        .args(["--params", bad.to_str().unwrap(), "params"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("bad.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}
