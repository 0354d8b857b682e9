//! The UCI protocol as text: parsing what engines print and writing what they are sent.
//! Pure functions, so every quirk in ../shared/docs/uci.md has a unit test.

use std::fmt::Write as _;
use std::time::Duration;

/// An engine's evaluation from its own point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Score {
    Cp(i32),
    /// Mate in this many moves; negative when the engine is being mated.
    Mate(i32),
}

impl Score {
    /// Centipawns for adjudication; mates count as far beyond any threshold.
    pub fn centipawns(self) -> i32 {
        match self {
            Score::Cp(cp) => cp,
            Score::Mate(n) if n > 0 => 100_000 - n,
            Score::Mate(n) => -100_000 - n,
        }
    }

    /// The PGN comment spelling: `+0.35`, `-1.20`, `+M3`, `-M2`.
    pub fn pgn(self) -> String {
        match self {
            Score::Cp(cp) => format!(
                "{}{}.{:02}",
                if cp < 0 { "-" } else { "+" },
                cp.unsigned_abs() / 100,
                cp.unsigned_abs() % 100
            ),
            Score::Mate(n) => format!("{}M{}", if n < 0 { "-" } else { "+" }, n.unsigned_abs()),
        }
    }
}

/// What an `info` line said; fields the line did not have are `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub multipv: Option<u32>,
    pub score: Option<Score>,
    /// `lowerbound`/`upperbound`: the score is a bound from a failed aspiration search.
    pub bound: bool,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    pub time: Option<Duration>,
    pub hashfull: Option<u32>,
    pub tbhits: Option<u64>,
    pub pv: Vec<String>,
    pub string: Option<String>,
}

/// Parses an `info` line's tokens in any order. Unknown tokens and malformed values are
/// skipped rather than fatal: engines print all sorts of things.
pub fn parse_info(line: &str) -> Info {
    let mut info = Info::default();
    let mut tokens = line.split_ascii_whitespace().peekable();
    if tokens.peek() == Some(&"info") {
        tokens.next();
    }
    while let Some(token) = tokens.next() {
        match token {
            "depth" => info.depth = tokens.next().and_then(|t| t.parse().ok()),
            "seldepth" => info.seldepth = tokens.next().and_then(|t| t.parse().ok()),
            "multipv" => info.multipv = tokens.next().and_then(|t| t.parse().ok()),
            "nodes" => info.nodes = tokens.next().and_then(|t| t.parse().ok()),
            "nps" => info.nps = tokens.next().and_then(|t| t.parse().ok()),
            "hashfull" => info.hashfull = tokens.next().and_then(|t| t.parse().ok()),
            "tbhits" => info.tbhits = tokens.next().and_then(|t| t.parse().ok()),
            "time" => {
                info.time = tokens
                    .next()
                    .and_then(|t| t.parse().ok())
                    .map(Duration::from_millis)
            }
            "score" => {
                // `score cp 35`, `score mate -3`, optionally followed by a bound flag.
                let kind = tokens.next();
                let value = tokens.next().and_then(|t| t.parse::<i32>().ok());
                info.score = match (kind, value) {
                    (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                    (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
                if let Some(&flag) = tokens.peek() {
                    if flag == "lowerbound" || flag == "upperbound" {
                        info.bound = true;
                        tokens.next();
                    }
                }
            }
            "lowerbound" | "upperbound" => info.bound = true,
            "pv" => {
                // The PV runs to the end of the line, or to the next keyword some engines
                // append after it.
                while let Some(&mv) = tokens.peek() {
                    if is_info_keyword(mv) {
                        break;
                    }
                    info.pv.push(mv.to_owned());
                    tokens.next();
                }
            }
            "string" => {
                let rest: Vec<&str> = tokens.by_ref().collect();
                info.string = Some(rest.join(" "));
            }
            _ => {}
        }
    }
    info
}

fn is_info_keyword(token: &str) -> bool {
    matches!(
        token,
        "depth"
            | "seldepth"
            | "multipv"
            | "score"
            | "nodes"
            | "nps"
            | "hashfull"
            | "tbhits"
            | "time"
            | "currmove"
            | "currmovenumber"
            | "string"
            | "cpuload"
            | "refutation"
            | "currline"
            | "sbhits"
            | "wdl"
    )
}

/// The move of a `bestmove` line, and the ponder move if any. `None` for a line that is not
/// a bestmove line.
pub fn parse_bestmove(line: &str) -> Option<(String, Option<String>)> {
    let mut tokens = line.split_ascii_whitespace();
    if tokens.next()? != "bestmove" {
        return None;
    }
    let mv = tokens.next().unwrap_or("").to_owned();
    let ponder = match tokens.next() {
        Some("ponder") => tokens.next().map(str::to_owned),
        _ => None,
    };
    Some((mv, ponder))
}

/// An `option` line from the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDecl {
    pub name: String,
    pub kind: String,
    pub default: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub vars: Vec<String>,
}

/// Parses `option name <words> type <t> [default <words>] [min n] [max n] [var <words>]*`.
pub fn parse_option(line: &str) -> Option<OptionDecl> {
    let rest = line.strip_prefix("option")?.trim_start();
    let rest = rest.strip_prefix("name")?;
    let words: Vec<&str> = rest.split_ascii_whitespace().collect();
    let mut decl = OptionDecl {
        name: String::new(),
        kind: String::new(),
        default: None,
        min: None,
        max: None,
        vars: vec![],
    };
    let mut section = "name";
    let mut current: Vec<&str> = Vec::new();
    let flush = |decl: &mut OptionDecl, section: &str, words: &mut Vec<&str>| {
        let text = words.join(" ");
        match section {
            "name" => decl.name = text,
            "type" => decl.kind = text,
            "default" => decl.default = Some(text),
            "min" => decl.min = text.parse().ok(),
            "max" => decl.max = text.parse().ok(),
            "var" => decl.vars.push(text),
            _ => {}
        }
        words.clear();
    };
    for word in words {
        if matches!(word, "type" | "default" | "min" | "max" | "var")
            && !(section == "name" && current.is_empty())
        {
            flush(&mut decl, section, &mut current);
            section = word;
        } else {
            current.push(word);
        }
    }
    flush(&mut decl, section, &mut current);
    (!decl.name.is_empty()).then_some(decl)
}

/// The `position` command for a game: the start as `startpos` or `fen`, then every move.
pub fn position_command(start_fen: Option<&str>, moves: &[String]) -> String {
    let mut cmd = String::with_capacity(32 + moves.len() * 5);
    match start_fen {
        None => cmd.push_str("position startpos"),
        Some(fen) => {
            let _ = write!(cmd, "position fen {fen}");
        }
    }
    if !moves.is_empty() {
        cmd.push_str(" moves");
        for mv in moves {
            cmd.push(' ');
            cmd.push_str(mv);
        }
    }
    cmd
}

/// What `go` tells the engine about the limits of this move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoLimits {
    /// `(wtime, btime, winc, binc, movestogo)` when there is a clock. `wtime`/`btime` are
    /// what the clocks are told as ([`ClockTime::told`](crate::tc::ClockTime::told)): whole
    /// milliseconds, at least 1 even when the runner's clock is at or below zero.
    pub clocks: Option<(Duration, Duration, Duration, Duration, Option<u32>)>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
}

pub fn go_command(limits: &GoLimits) -> String {
    let mut cmd = String::from("go");
    if let Some((wtime, btime, winc, binc, movestogo)) = limits.clocks {
        // Times are whole milliseconds, at least 1 (0 confuses engines, and a clock below
        // zero has no UCI spelling); increments and movestogo only when positive, as the
        // protocol says.
        let ms = |d: Duration| d.as_millis().max(1);
        let _ = write!(cmd, " wtime {} btime {}", ms(wtime), ms(btime));
        if !winc.is_zero() {
            let _ = write!(cmd, " winc {}", winc.as_millis());
        }
        if !binc.is_zero() {
            let _ = write!(cmd, " binc {}", binc.as_millis());
        }
        if let Some(moves) = movestogo.filter(|&m| m > 0) {
            let _ = write!(cmd, " movestogo {moves}");
        }
    }
    if let Some(movetime) = limits.movetime {
        let _ = write!(cmd, " movetime {}", movetime.as_millis());
    }
    if let Some(nodes) = limits.nodes {
        let _ = write!(cmd, " nodes {nodes}");
    }
    if let Some(depth) = limits.depth {
        let _ = write!(cmd, " depth {depth}");
    }
    if cmd == "go" {
        cmd.push_str(" infinite");
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_in_any_order() {
        let a = parse_info("info depth 12 seldepth 18 multipv 1 score cp 35 nodes 123456 nps 1000000 hashfull 12 tbhits 0 time 250 pv e2e4 e7e5 g1f3");
        let b = parse_info("info pv e2e4 e7e5 g1f3 time 250 score cp 35 nodes 123456 depth 12 seldepth 18 nps 1000000 hashfull 12 multipv 1 tbhits 0");
        assert_eq!(a.score, Some(Score::Cp(35)));
        assert_eq!(a.depth, Some(12));
        assert_eq!(a.time, Some(Duration::from_millis(250)));
        assert_eq!(a.pv, ["e2e4", "e7e5", "g1f3"]);
        assert_eq!(b.pv, ["e2e4", "e7e5", "g1f3"]);
        assert_eq!(
            (a.score, a.depth, a.nodes, a.time),
            (b.score, b.depth, b.nodes, b.time)
        );
    }

    #[test]
    fn info_quirks() {
        let i = parse_info("info depth 7 score cp -20 lowerbound nodes 5 pv d2d4");
        assert_eq!(i.score, Some(Score::Cp(-20)));
        assert!(i.bound);
        assert_eq!(i.nodes, Some(5));
        let i = parse_info("info score mate -3 depth 9");
        assert_eq!(i.score, Some(Score::Mate(-3)));
        let i = parse_info("info depth x score cp nodes 12");
        assert_eq!(i.depth, None);
        assert_eq!(i.score, None);
        let i = parse_info("info string NNUE evaluation using nn.bin enabled");
        assert_eq!(
            i.string.as_deref(),
            Some("NNUE evaluation using nn.bin enabled")
        );
        assert_eq!(
            parse_info("info currmove e2e4 currmovenumber 1").score,
            None
        );
        assert_eq!(parse_info("info depth 3 pv e2e4 string hello").pv, ["e2e4"]);
    }

    #[test]
    fn bestmove_lines() {
        assert_eq!(
            parse_bestmove("bestmove e2e4 ponder e7e5"),
            Some(("e2e4".into(), Some("e7e5".into())))
        );
        assert_eq!(
            parse_bestmove("bestmove e7e8q"),
            Some(("e7e8q".into(), None))
        );
        assert_eq!(parse_bestmove("bestmove"), Some(("".into(), None)));
        assert_eq!(
            parse_bestmove("bestmove (none)"),
            Some(("(none)".into(), None))
        );
        assert_eq!(parse_bestmove("info depth 1"), None);
    }

    #[test]
    fn option_lines() {
        let o =
            parse_option("option name Move Overhead type spin default 10 min 0 max 5000").unwrap();
        assert_eq!(
            (
                o.name.as_str(),
                o.kind.as_str(),
                o.default.as_deref(),
                o.min,
                o.max
            ),
            ("Move Overhead", "spin", Some("10"), Some(0), Some(5000))
        );
        let o = parse_option(
            "option name Style type combo default Normal var Solid var Normal var Risky",
        )
        .unwrap();
        assert_eq!(o.vars, ["Solid", "Normal", "Risky"]);
        let o = parse_option("option name Clear Hash type button").unwrap();
        assert_eq!(o.name, "Clear Hash");
        let o = parse_option("option name SyzygyPath type string default <empty>").unwrap();
        assert_eq!(o.default.as_deref(), Some("<empty>"));
        assert_eq!(parse_option("option type spin"), None);
    }

    #[test]
    fn commands() {
        assert_eq!(position_command(None, &[]), "position startpos");
        assert_eq!(
            position_command(Some("8/8/8/8/8/8/8/K6k w - - 0 1"), &["a1a2".into()]),
            "position fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves a1a2"
        );
        let go = GoLimits {
            clocks: Some((
                Duration::from_millis(9500),
                Duration::from_millis(10_000),
                Duration::from_millis(100),
                Duration::from_millis(100),
                Some(12),
            )),
            ..Default::default()
        };
        assert_eq!(
            go_command(&go),
            "go wtime 9500 btime 10000 winc 100 binc 100 movestogo 12"
        );
        assert_eq!(
            go_command(&GoLimits {
                nodes: Some(5000),
                ..Default::default()
            }),
            "go nodes 5000"
        );
        let sudden = GoLimits {
            clocks: Some((
                Duration::ZERO,
                Duration::from_millis(700),
                Duration::ZERO,
                Duration::ZERO,
                None,
            )),
            ..Default::default()
        };
        assert_eq!(go_command(&sudden), "go wtime 1 btime 700");
        assert_eq!(
            go_command(&GoLimits {
                movetime: Some(Duration::from_millis(100)),
                depth: Some(9),
                ..Default::default()
            }),
            "go movetime 100 depth 9"
        );
        assert_eq!(Score::Cp(35).pgn(), "+0.35");
        assert_eq!(Score::Cp(-120).pgn(), "-1.20");
        assert_eq!(Score::Cp(-5).pgn(), "-0.05");
        assert_eq!(Score::Mate(3).pgn(), "+M3");
        assert_eq!(Score::Mate(-2).pgn(), "-M2");
    }
}
