//! A UCI engine as an owned child process.
//!
//! Engine output is read by the thread that waits for it, blocked on the pipe with a deadline
//! (`poll`): the game's own thread during a game (see [`crate::game::play_game`]), a blocking
//! thread of the runtime otherwise. Each read is timed the moment it returns, so the clock
//! stops when `bestmove` was read, and a silent engine is a timeout rather than a hang. No
//! thread reads on the game's behalf: a line costs the runner one wake-up, not a second one
//! to hand it over, which with engines that print a dozen lines a move is most of the
//! runner's own CPU.
//!
//! Dropping a [`UciProcess`] ends the process: it is asked to `stop` and `quit`, given a
//! moment, then killed, so no code path can leak an engine. An engine that dies is reported
//! with what it was doing and its last words: how it ended, the last commands it was sent,
//! what it printed after them and the tail of its stderr.

use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, Command};

use crate::commlog::{Direction, EngineTap};
use crate::executor::on_game_thread;
use crate::tc::human_duration;
use crate::uci::{BestMove, GoLimits, Info, OptionDecl, SetOption};

/// How to start an engine and set it up. Nothing passes through a shell: `cmd`, `args`, `dir`
/// and `env` reach the operating system as given.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessSpec {
    pub cmd: PathBuf,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub dir: Option<PathBuf>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// `setoption` pairs, sent in order after the handshake.
    #[serde(default)]
    pub options: Vec<(String, String)>,
}

/// Timeouts for the parts of the protocol that have no clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// `uci` to `uciok`.
    pub handshake: Duration,
    /// `isready` to `readyok` (hash allocation can be slow).
    pub ready: Duration,
    /// How long past its deadline a searching engine may take to answer `stop` before it is
    /// declared stalled and killed.
    pub stop_grace: Duration,
    /// For searches without a clock (nodes, depth): how long to wait for `bestmove` before the
    /// engine is stalled (`move_timeout`, [`DEFAULT_MOVE_TIMEOUT`] unless set); `None` waits as
    /// long as it takes. In-process staunton is cut off at the same limit.
    pub unclocked_move: Option<Duration>,
    /// fastchess's `-ping-ms`: when set, the engine is asked `isready` before every move and
    /// must answer `readyok` within this time, or it is stalled and loses the game. Off by
    /// default, as in cutechess: the round trip costs every move a little.
    pub ping: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            handshake: Duration::from_secs(10),
            ready: Duration::from_secs(10),
            stop_grace: Duration::from_secs(2),
            unclocked_move: Some(DEFAULT_MOVE_TIMEOUT),
            ping: None,
        }
    }
}

/// How long an unclocked move (`nodes`, `depth`) may take unless `move_timeout` says otherwise:
/// long enough for any node or depth limit a match is played at, short enough that an engine
/// that hangs costs its game a minute, not the run.
pub const DEFAULT_MOVE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why an engine could not do what was asked. Each is a normal event: the game loop turns it
/// into a lost game with the matching termination.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineFault {
    #[error("cannot start {cmd}: {reason}")]
    Spawn { cmd: String, reason: String },
    /// An in-process engine that is gone (its search panicked); a process says more, in
    /// [`EngineFault::Died`].
    #[error("the engine exited (or closed its output)")]
    Exited,
    /// An engine process that exited or closed its output.
    #[error("{0}")]
    Died(Box<ExitReport>),
    /// `waited` is the time the engine was given since the runner's last command.
    #[error("no {expected} within {}", human_duration(*waited))]
    Stalled {
        expected: &'static str,
        waited: Duration,
    },
    #[error("no bestmove before the flag fell ({} used)", human_duration(*elapsed))]
    /// `searched` is the search time the engine's last scored `info` line reported, if any:
    /// beside `elapsed`, whether its search or what lay around it ran out the clock.
    TimeForfeit {
        elapsed: Duration,
        searched: Option<Duration>,
    },
    /// The engine never finished the handshake: a fault of its own, named as such, because
    /// "the engine exited" or "no uciok" alone sends people looking in the wrong place (a
    /// wrong `cmd`, an engine that speaks another protocol, one that needs an argument).
    #[error("{0}")]
    NoUciok(Box<NoUciok>),
}

/// An engine that did not answer `uci` with `uciok`, and what it did instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoUciok {
    /// How long it was given.
    pub waited: Duration,
    /// How it ended, when it exited (or closed its output) instead of answering; `None` when it
    /// was still running at the end of `waited`.
    pub ended: Option<Box<ExitReport>>,
    /// How many lines it printed after `uci`, and the last of them.
    pub lines: usize,
    pub said: Vec<String>,
}

impl fmt::Display for NoUciok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let printed = match (self.lines, self.said.as_slice()) {
            (0, _) | (_, []) => "nothing".to_owned(),
            (n, said) if n > said.len() => {
                format!("{n} lines, the last {}", quoted(said))
            }
            (_, said) => quoted(said),
        };
        write!(f, "the engine never answered `uci` with `uciok`")?;
        match &self.ended {
            None => write!(
                f,
                " within {}; it printed {printed}",
                human_duration(self.waited)
            ),
            Some(report) => {
                match &report.status {
                    Some(status) => write!(f, ": it exited ({status})")?,
                    None => write!(f, ": it closed its output")?,
                }
                write!(f, " after printing {printed}")?;
                if !report.stderr.is_empty() {
                    write!(f, "; its stderr ended with {}", quoted(&report.stderr))?;
                }
                Ok(())
            }
        }
    }
}

/// Lines as a message quotes them: `a`, `b`.
fn quoted(lines: &[String]) -> String {
    lines
        .iter()
        .map(|line| format!("`{line}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What is known of an engine process that died: enough to tell a bad option value from a
/// crash in search without rerunning it by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitReport {
    /// How it ended (`exit status: 1`, `signal: 11 (SIGSEGV)`); `None` if it had closed its
    /// output but was still running when looked at.
    pub status: Option<String>,
    /// What the runner was doing: `waiting for readyok`, `writing to it`.
    pub during: String,
    /// The last commands it was sent, oldest first (each cut to a readable length).
    pub sent: Vec<String>,
    /// The lines it printed on stdout after the last command.
    pub said: Vec<String>,
    /// The last lines it printed on stderr.
    pub stderr: Vec<String>,
}

impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            Some(status) => write!(f, "the engine exited ({status})")?,
            None => write!(f, "the engine closed its output")?,
        }
        write!(f, " while the runner was {}", self.during)?;
        if !self.sent.is_empty() {
            write!(f, ", after {}", quoted(&self.sent))?;
        }
        if !self.said.is_empty() {
            write!(f, "; it said {}", quoted(&self.said))?;
        }
        if !self.stderr.is_empty() {
            write!(f, "; its stderr ended with {}", quoted(&self.stderr))?;
        }
        Ok(())
    }
}

/// How many commands, stdout lines and stderr lines an [`ExitReport`] keeps, and how long
/// each may be: the report is one message, not a log.
const REPORT_LINES: usize = 3;
const REPORT_STDERR_LINES: usize = 5;
const REPORT_LINE_CHARS: usize = 160;

/// An engine's line as it may appear in a message: control characters escaped (an engine's
/// output must not break the runner's lines or colour the terminal) and cut to a readable
/// length.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(REPORT_LINE_CHARS + 8));
    for (i, c) in text.chars().enumerate() {
        if i == REPORT_LINE_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Why the engine's declaration of an option refuses `value`, as the end of a sentence
/// (`is outside the range it declares (min 1, max 1024)`), or `None` if it accepts it. Names
/// of choices and booleans are compared without case, as engines compare them.
fn refusal(decl: &OptionDecl, value: &str) -> Option<String> {
    let range = || match (decl.min, decl.max) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("of at least {min}"),
        (None, Some(max)) => format!("of at most {max}"),
        (None, None) => "without bounds".to_owned(),
    };
    match decl.kind.to_ascii_lowercase().as_str() {
        "spin" => match value.trim().parse::<i64>() {
            Err(_) => Some(format!(
                "is not a whole number (it declares a spin {})",
                range()
            )),
            Ok(n) if decl.min.is_some_and(|min| n < min) || decl.max.is_some_and(|max| n > max) => {
                Some(format!("is outside the range it declares ({})", range()))
            }
            Ok(_) => None,
        },
        "check" => (!["true", "false"]
            .iter()
            .any(|b| b.eq_ignore_ascii_case(value.trim())))
        .then(|| "is neither true nor false (it declares a check)".to_owned()),
        // A combo declared without choices says nothing about the value.
        "combo" if decl.vars.is_empty() => None,
        "combo" => (!decl
            .vars
            .iter()
            .any(|var| var.eq_ignore_ascii_case(value.trim())))
        .then(|| {
            format!(
                "is not one of the values it declares ({})",
                decl.vars.join(", ")
            )
        }),
        _ => None,
    }
}

/// Keeps the last `capacity` lines pushed.
fn push_bounded(lines: &mut VecDeque<String>, capacity: usize, line: String) {
    if lines.len() == capacity {
        lines.pop_front();
    }
    lines.push_back(line);
}

/// Keeps the last `capacity` lines of a conversation as they were, each cut to what
/// [`printable`] shows of it, and in the buffer of the line it drops: the runner keeps every
/// command and answer but reads them only when an engine dies, so they are made printable
/// then.
fn keep_bounded(lines: &mut VecDeque<String>, capacity: usize, text: &str) {
    // A character is at most 4 bytes: this keeps more than `REPORT_LINE_CHARS` characters
    // of a longer line, so that `printable` still marks it as cut.
    let mut end = text.len().min(4 * (REPORT_LINE_CHARS + 1));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut kept = match lines.len() == capacity {
        true => lines.pop_front().unwrap_or_default(),
        false => String::new(),
    };
    kept.clear();
    kept.push_str(&text[..end]);
    lines.push_back(kept);
}

/// The kept lines as a report shows them.
fn printable_lines(lines: &VecDeque<String>) -> Vec<String> {
    lines.iter().map(|line| printable(line)).collect()
}

/// One line of engine output and when it was read.
#[derive(Debug)]
struct Line {
    text: String,
    at: Instant,
    /// The last scored `info` line (multipv 1) read since the previous line handed over.
    info: Option<String>,
    /// The `info string` lines held back during the search, oldest first.
    notes: Vec<String>,
}

impl Line {
    fn new(text: String, at: Instant) -> Line {
        Line {
            text,
            at,
            info: None,
            notes: Vec::new(),
        }
    }
}

/// How many `info string` lines the filter holds during one search: an engine that prints
/// more is talking to itself, and [`UciProcess::notes`] keeps only the first few anyway.
const HELD_NOTES: usize = 16;

/// Keeps an engine's search chatter out of the game's way. Engines print many `info` lines per
/// move and the game uses only the last scored one, so the filter holds them and hands that
/// one over with the next other line (`bestmove`): the game looks at one line per move
/// instead of a dozen.
/// During a search (from `go` to `bestmove`) the engine's notes wait too: Stockfish opens every
/// search with `info string NNUE evaluation using ...`. Outside a search (the handshake,
/// `isready`) they go through at once, so that an engine stuck before `uciok` is reported with
/// what it said.
///
/// The held lines cost nothing per line: superseded `info` lines are never parsed or
/// allocated, the last scored one is copied into a buffer that is reused, and text becomes a
/// `String` only when it is handed over.
struct InfoFilter {
    /// Set by the game side before it writes `go`, cleared here at `bestmove`.
    searching: bool,
    last_scored: Vec<u8>,
    has_scored: bool,
    notes: Vec<String>,
}

impl InfoFilter {
    fn new() -> InfoFilter {
        InfoFilter {
            searching: false,
            last_scored: Vec::with_capacity(512),
            has_scored: false,
            notes: Vec::new(),
        }
    }

    /// The line to hand over for `bytes` (one line of output, without its newline), or `None`
    /// while it is held back.
    fn pass(&mut self, bytes: &[u8], at: Instant) -> Option<Line> {
        let bytes = bytes.trim_ascii();
        if bytes.is_empty() {
            return None;
        }
        if bytes.starts_with(b"info string") {
            // A note leaves the held search line for the `bestmove` after it.
            if !self.searching {
                return Some(Line::new(text_of(bytes), at));
            }
            if self.notes.len() < HELD_NOTES {
                self.notes.push(text_of(bytes));
            }
            return None;
        }
        if !bytes.starts_with(b"info") {
            if bytes.starts_with(b"bestmove") {
                self.searching = false;
            }
            let info = std::mem::take(&mut self.has_scored).then(|| text_of(&self.last_scored));
            return Some(Line {
                text: text_of(bytes),
                at,
                info,
                notes: std::mem::take(&mut self.notes),
            });
        }
        if is_scored_first_line(bytes) {
            self.last_scored.clear();
            self.last_scored.extend_from_slice(bytes);
            self.has_scored = true;
        }
        None
    }

    /// The search time (`info ... time`) of the scored line still held: what an engine cut
    /// off by its flag said it had searched.
    fn held_search_time(&self) -> Option<Duration> {
        self.has_scored
            .then(|| Info::parse(&text_of(&self.last_scored)).time)
            .flatten()
    }

    /// What is still held when the output ends: the notes, as the lines they were, so that an
    /// engine dying in search is reported with its last words.
    fn finish(&mut self, at: Instant) -> impl Iterator<Item = Line> {
        std::mem::take(&mut self.notes)
            .into_iter()
            .map(move |note| Line::new(note, at))
    }
}

/// Engine output as text: invalid UTF-8 is replaced, not fatal.
fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether an `info` line carries a score (`score cp`, `score mate`) of the principal
/// variation: no `multipv`, or `multipv 1`. One pass over the bytes, without parsing the
/// line, which happens once per move, for the last such line only.
fn is_scored_first_line(line: &[u8]) -> bool {
    let mut tokens = line
        .split(u8::is_ascii_whitespace)
        .filter(|token| !token.is_empty());
    let (mut scored, mut first) = (false, true);
    while let Some(token) = tokens.next() {
        match token {
            b"score" => scored |= matches!(tokens.next(), Some(b"cp" | b"mate")),
            b"multipv" => {
                first = tokens
                    .next()
                    .and_then(|n| std::str::from_utf8(n).ok()?.parse::<u32>().ok())
                    == Some(1)
            }
            _ => {}
        }
    }
    scored && first
}

/// Lines longer than this are garbage, not protocol; they are cut and the rest skipped.
const MAX_LINE: usize = 64 * 1024;

/// What the engine answered to one `go`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The move text exactly as sent after `bestmove` (may be `(none)`, `0000`, garbage).
    pub bestmove: String,
    pub ponder: Option<String>,
    /// The last `info` line that carried a score (multipv 1 only).
    pub info: Option<Info>,
    /// From writing `go` to reading `bestmove`.
    pub elapsed: Duration,
}

/// A running UCI engine.
pub struct UciProcess {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// Its stdout. `None` once a wait for it was given up half way (its task was cancelled):
    /// the engine is then as good as gone.
    output: Option<Box<Output>>,
    pub name: Option<String>,
    pub author: Option<String>,
    pub options: Vec<OptionDecl>,
    /// Whether a `go` is outstanding: its `bestmove` must be read or discarded before the next
    /// command that expects an answer.
    searching: bool,
    timeouts: Timeouts,
    /// `info string` and unrecognised lines seen, for the log (bounded).
    pub notes: Vec<String>,
    /// Options the configuration sets that the engine did not declare in its handshake.
    pub undeclared_options: Vec<String>,
    /// What is wrong with the options the configuration sets, one sentence each, for the
    /// user's warnings: an option the engine does not declare (sent anyway), a value outside
    /// the range it declares, not one of its choices, not a boolean (not sent, as cutechess
    /// and fastchess do not send them).
    pub option_warnings: Vec<String>,
    /// The last commands written (see [`keep_bounded`]), and when the last one was.
    sent: VecDeque<String>,
    sent_at: Instant,
    /// The bytes of the last write, kept for the next.
    outgoing: Vec<u8>,
    /// Lines read since the last command (see [`keep_bounded`]), for an [`ExitReport`], and
    /// how many.
    said: VecDeque<String>,
    said_count: usize,
    /// The thread keeping the tail of the engine's stderr, which it returns at end of file.
    stderr_tail: Option<std::thread::JoinHandle<Vec<String>>>,
    /// The match's stop flag: a game on its own thread stops waiting for this engine once it
    /// is set (on the async runtime, aborting the game's task does that).
    stop: Option<Arc<AtomicBool>>,
    /// The run's log of engine lines, for the lines written (the output has its own, for the
    /// lines read).
    tap: Option<EngineTap>,
}

impl UciProcess {
    /// Starts the process and completes the handshake: `uci`/`uciok`, options, `isready`.
    pub async fn start(spec: &ProcessSpec, timeouts: Timeouts) -> Result<UciProcess, EngineFault> {
        UciProcess::start_logged(spec, timeouts, None).await
    }

    /// [`UciProcess::start`], every line sent and read, the handshake's too, going to `tap`.
    pub async fn start_logged(
        spec: &ProcessSpec,
        timeouts: Timeouts,
        tap: Option<EngineTap>,
    ) -> Result<UciProcess, EngineFault> {
        let mut command = Command::new(&spec.cmd);
        command
            .args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(STDERR())
            .kill_on_drop(true);
        if let Some(dir) = &spec.dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(|e| EngineFault::Spawn {
            cmd: spec.cmd.display().to_string(),
            reason: e.to_string(),
        })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take().expect("piped stdin");
        let mut output = Output::new(stdout).map_err(|e| EngineFault::Spawn {
            cmd: spec.cmd.display().to_string(),
            reason: e.to_string(),
        })?;
        output.tap = tap.clone();
        let stderr_tail = child.stderr.take().and_then(spawn_stderr_tail);

        let mut engine = UciProcess {
            child: Some(child),
            stdin: Some(stdin),
            output: Some(Box::new(output)),
            name: None,
            author: None,
            options: Vec::new(),
            searching: false,
            timeouts,
            notes: Vec::new(),
            undeclared_options: Vec::new(),
            option_warnings: Vec::new(),
            sent: VecDeque::with_capacity(REPORT_LINES),
            sent_at: Instant::now(),
            outgoing: Vec::with_capacity(1024),
            said: VecDeque::with_capacity(REPORT_LINES),
            said_count: 0,
            stderr_tail,
            stop: None,
            tap,
        };
        let deadline = Instant::now() + timeouts.handshake;
        if let Err(fault) = engine.send("uci").await {
            return Err(engine.no_uciok(fault));
        }
        loop {
            let line = match engine.next_line(deadline, "uciok").await {
                Ok(line) => line,
                Err(fault) => return Err(engine.no_uciok(fault)),
            };
            let text = line.text.as_str();
            if text == "uciok" {
                break;
            } else if let Some(name) = text.strip_prefix("id name ") {
                engine.name = Some(name.trim().to_owned());
            } else if let Some(author) = text.strip_prefix("id author ") {
                engine.author = Some(author.trim().to_owned());
            } else if let Some(option) = OptionDecl::parse(text) {
                engine.options.push(option);
            }
        }
        for (name, value) in &spec.options {
            match engine.option(name).map(|decl| refusal(decl, value)) {
                // Sent anyway (some engines accept options they do not list), but the user
                // hears about it: a misspelt option silently ignored makes a whole test
                // meaningless.
                None => {
                    engine.undeclared_options.push(name.clone());
                    engine.option_warnings.push(format!(
                        "option {name:?} is not one it declares; sent anyway"
                    ));
                }
                // A value the engine declares it cannot take is not sent, as cutechess and
                // fastchess do: engines ignore it, clamp it or die of it.
                Some(Some(why)) => {
                    engine
                        .option_warnings
                        .push(format!("option {name}={value} {why}; not sent"));
                    continue;
                }
                Some(None) => {}
            }
            engine.set_option(name, value).await?;
        }
        engine.sync().await?;
        Ok(engine)
    }

    /// The handshake's fault, said as one: what the engine did instead of answering `uciok`.
    fn no_uciok(&self, fault: EngineFault) -> EngineFault {
        let waited = self.timeouts.handshake;
        let handshake = match fault {
            EngineFault::Died(report) => NoUciok {
                waited,
                lines: self.said_count,
                said: report.said.clone(),
                ended: Some(report),
            },
            EngineFault::Stalled { .. } => NoUciok {
                waited,
                lines: self.said_count,
                said: printable_lines(&self.said),
                ended: None,
            },
            other => return other,
        };
        EngineFault::NoUciok(Box::new(handshake))
    }

    /// The declared option of that name (UCI names are case-insensitive).
    pub fn option(&self, name: &str) -> Option<&OptionDecl> {
        self.options
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(name))
    }

    /// Sends `setoption`. The engine's own spelling of the name is used when it declared it.
    pub async fn set_option(&mut self, name: &str, value: &str) -> Result<(), EngineFault> {
        let name = self
            .option(name)
            .map_or(name.to_owned(), |o| o.name.clone());
        let value = (!value.is_empty()).then(|| value.to_owned());
        self.send(&SetOption { name, value }.to_string()).await
    }

    /// `isready` until `readyok`, discarding everything else, including a late `bestmove` from
    /// a search that was already given up on.
    pub async fn sync(&mut self) -> Result<(), EngineFault> {
        self.ready_within(self.timeouts.ready).await
    }

    /// fastchess's `-ping-ms`: `isready` answered with `readyok` within `within`, or the
    /// engine is stalled (`no readyok within 0.5 s`).
    pub async fn ping(&mut self, within: Duration) -> Result<(), EngineFault> {
        self.ready_within(within).await
    }

    async fn ready_within(&mut self, within: Duration) -> Result<(), EngineFault> {
        self.finish_search().await?;
        self.send("isready").await?;
        // Counted from the write, so that the time allowed is the time reported.
        let deadline = self.sent_at + within;
        loop {
            if self.next_line(deadline, "readyok").await?.text == "readyok" {
                return Ok(());
            }
        }
    }

    /// `ucinewgame` and a sync, before every game.
    pub async fn new_game(&mut self) -> Result<(), EngineFault> {
        self.finish_search().await?;
        self.send("ucinewgame").await?;
        self.sync().await
    }

    /// Sends the position and `go`, then waits for `bestmove`. `deadline` is when the side's
    /// flag falls (clock or movetime plus margin); past it the search is stopped and the move
    /// is a time forfeit. Without a deadline the engine gets `Timeouts::unclocked_move`, and
    /// past it is stalled.
    pub async fn go(
        &mut self,
        position: &str,
        limits: &GoLimits,
        deadline: Option<Duration>,
    ) -> Result<Reply, EngineFault> {
        self.finish_search().await?;
        if let Some(within) = self.timeouts.ping {
            self.ping(within).await?;
        }
        // Before `go` is written, so that the search's notes are held.
        if let Some(output) = self.output.as_mut() {
            output.filter.searching = true;
        }
        // One write for both lines: one wake-up of the engine, one system call.
        self.send_lines(&[position, &limits.to_string()]).await?;
        let started = Instant::now();
        self.searching = true;
        let flag = deadline.map(|d| started + d);
        // Without any limit, a wait that outlasts the run: the match's stop flag still ends it.
        let unbounded = started + Duration::from_secs(100 * 365 * 24 * 3600);
        let give_up = flag.unwrap_or_else(|| {
            self.timeouts
                .unclocked_move
                .and_then(|limit| started.checked_add(limit))
                .unwrap_or(unbounded)
        });
        loop {
            let line = match self.next_line(give_up, "bestmove").await {
                Ok(line) => line,
                Err(EngineFault::Stalled { .. }) if flag.is_some() => {
                    let searched = self
                        .output
                        .as_ref()
                        .and_then(|o| o.filter.held_search_time());
                    return Err(EngineFault::TimeForfeit {
                        elapsed: started.elapsed(),
                        searched,
                    });
                }
                Err(fault) => return Err(fault),
            };
            if let Some(BestMove {
                mv: bestmove,
                ponder,
            }) = BestMove::parse(&line.text)
            {
                self.searching = false;
                let elapsed = line.at.saturating_duration_since(started);
                // The filter kept only the last scored line, parsed once here.
                return Ok(Reply {
                    bestmove,
                    ponder,
                    info: line.info.map(|text| Info::parse(&text)),
                    elapsed,
                });
            }
        }
    }

    /// If a search is outstanding, `stop` it and discard its `bestmove`, so that it never
    /// answers the next request. An engine that does not stop is stalled.
    async fn finish_search(&mut self) -> Result<(), EngineFault> {
        if !self.searching {
            return Ok(());
        }
        self.send("stop").await?;
        let deadline = Instant::now() + self.timeouts.stop_grace;
        loop {
            let line = self.next_line(deadline, "bestmove after stop").await?;
            if line.text.starts_with("bestmove") {
                self.searching = false;
                return Ok(());
            }
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), EngineFault> {
        self.send_lines(&[line]).await
    }

    /// The game this engine's next lines in the run's log belong to.
    pub fn log_game(&mut self, game: u64) {
        if let Some(tap) = self.tap.as_mut() {
            tap.set_game(game);
        }
        if let Some(tap) = self.output.as_mut().and_then(|o| o.tap.as_mut()) {
            tap.set_game(game);
        }
    }

    /// Writes the lines in one system call, from a buffer kept for the purpose.
    async fn send_lines(&mut self, lines: &[&str]) -> Result<(), EngineFault> {
        if let Some(tap) = &self.tap {
            for line in lines {
                tap.line(Direction::Sent, line.as_bytes());
            }
        }
        self.outgoing.clear();
        for line in lines {
            keep_bounded(&mut self.sent, REPORT_LINES, line);
            self.outgoing.extend_from_slice(line.as_bytes());
            self.outgoing.push(b'\n');
        }
        self.said.clear();
        self.said_count = 0;
        self.sent_at = Instant::now();
        let written = match self.stdin.as_mut() {
            Some(stdin) => {
                stdin.write_all(&self.outgoing).await.is_ok() && stdin.flush().await.is_ok()
            }
            None => false,
        };
        if written {
            Ok(())
        } else {
            Err(self.died("writing to it".to_owned()).await)
        }
    }

    /// Lets the match's stop flag end a wait for this engine on a game's own thread.
    pub fn abort_on(&mut self, stop: Arc<AtomicBool>) {
        self.stop = Some(stop);
    }

    /// Whether the match's stop flag (see [`UciProcess::abort_on`]) is set.
    pub fn stopped(&self) -> bool {
        self.stop
            .as_deref()
            .is_some_and(|stop| stop.load(Ordering::Relaxed))
    }

    /// The next line of the engine's output, or the fault of an engine that ended or said
    /// nothing before `deadline`.
    async fn next_line(
        &mut self,
        deadline: Instant,
        expected: &'static str,
    ) -> Result<Line, EngineFault> {
        match self.wait_for_output(deadline).await {
            Heard::Line(mut line) => {
                self.heard(&mut line);
                Ok(line)
            }
            Heard::Ended => Err(self.died(format!("waiting for {expected}")).await),
            Heard::Late | Heard::Stopped => Err(EngineFault::Stalled {
                expected,
                waited: deadline.saturating_duration_since(self.sent_at),
            }),
        }
    }

    /// Waits for the engine's next line. On a game's own thread (see [`crate::game`]) the
    /// thread itself waits on the pipe, so the line is timed the moment it is read and the game
    /// answers it without a hand-over between threads; on the async runtime a blocking thread
    /// waits, with the same timing. A line already read is taken at once.
    async fn wait_for_output(&mut self, deadline: Instant) -> Heard {
        let stop = self.stop.clone();
        let Some(output) = self.output.as_mut() else {
            return Heard::Ended;
        };
        if on_game_thread() || output.has_news() {
            return output.next_line(deadline, stop.as_deref());
        }
        let Some(mut output) = self.output.take() else {
            return Heard::Ended;
        };
        let waited = tokio::task::spawn_blocking(move || {
            let heard = output.next_line(deadline, stop.as_deref());
            (output, heard)
        })
        .await;
        match waited {
            Ok((output, heard)) => {
                self.output = Some(output);
                heard
            }
            // The wait panicked (a bug): the engine's output is lost with it.
            Err(_) => Heard::Ended,
        }
    }

    /// The fault of an engine whose output ended or whose input broke: how it ended (given a
    /// moment to finish dying), what it was last sent and its last words.
    async fn died(&mut self, during: String) -> EngineFault {
        const GRACE: Duration = Duration::from_millis(200);
        let status = match self.child.as_mut() {
            Some(child) => match tokio::time::timeout(GRACE, child.wait()).await {
                Ok(Ok(status)) => Some(status.to_string()),
                _ => None,
            },
            None => None,
        };
        // What it printed before dying and the runner had not read yet (its input may have
        // broken before the runner read its last lines).
        let give_up = Instant::now() + GRACE;
        while let Heard::Line(mut line) = self.wait_for_output(give_up).await {
            self.heard(&mut line);
        }
        // Its stderr ends when it does, unless a process it started still holds it.
        let mut stderr = Vec::new();
        if let Some(tail) = self.stderr_tail.take() {
            let give_up = Instant::now() + GRACE;
            while !tail.is_finished() && Instant::now() < give_up {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if tail.is_finished() {
                stderr = tail.join().unwrap_or_default();
            }
        }
        EngineFault::Died(Box::new(ExitReport {
            status,
            during,
            sent: printable_lines(&self.sent),
            said: printable_lines(&self.said),
            stderr,
        }))
    }

    /// Keeps what a line of the engine says for the reports: the notes held back with it,
    /// then the line itself.
    fn heard(&mut self, line: &mut Line) {
        for note in std::mem::take(&mut line.notes) {
            keep_bounded(&mut self.said, REPORT_LINES, &note);
            self.said_count += 1;
            self.note(note);
        }
        keep_bounded(&mut self.said, REPORT_LINES, &line.text);
        self.said_count += 1;
        if line.text.starts_with("info string ") {
            self.note(line.text.clone());
        }
    }

    fn note(&mut self, text: String) {
        if self.notes.len() < 64 {
            self.notes.push(text);
        }
    }

    /// Ends the engine politely: `stop`, `quit`, a short wait, then kill.
    pub async fn shutdown(mut self) {
        if let (Some(stdin), Some(child)) = (self.stdin.take(), self.child.take()) {
            quit(stdin, child).await;
        }
    }

    /// The operating system's id of the process, for diagnostics and tests.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }
}

impl Drop for UciProcess {
    fn drop(&mut self) {
        let (Some(stdin), Some(child)) = (self.stdin.take(), self.child.take()) else {
            return;
        };
        // Quit politely on the runtime if there is one; `kill_on_drop` is the backstop.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(quit(stdin, child));
        }
    }
}

/// `stop` and `quit`, half a second to comply, then kill and reap: the one way an engine ends.
async fn quit(mut stdin: ChildStdin, mut child: Child) {
    let _ = stdin.write_all(b"stop\nquit\n").await;
    let _ = stdin.flush().await;
    drop(stdin);
    if tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
        let _ = child.wait().await;
    }
}

/// Engines' stderr is kept (its tail, for [`ExitReport`]) where a thread can read it.
#[cfg(unix)]
const STDERR: fn() -> Stdio = Stdio::piped;
#[cfg(not(unix))]
const STDERR: fn() -> Stdio = Stdio::null;

/// Drains an engine's stderr on its own thread, which returns the last lines at end of file.
/// Draining matters as much as keeping: an engine blocks when a pipe it writes fills up.
#[cfg(unix)]
fn spawn_stderr_tail(
    stderr: tokio::process::ChildStderr,
) -> Option<std::thread::JoinHandle<Vec<String>>> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::from(stderr.into_owned_fd().ok()?);
    std::thread::Builder::new()
        .name("engine-stderr".into())
        .stack_size(64 << 10)
        .spawn(move || {
            let mut reader = std::io::BufReader::new(file);
            let mut tail = VecDeque::with_capacity(REPORT_STDERR_LINES);
            let mut buf = Vec::with_capacity(256);
            loop {
                buf.clear();
                match (&mut reader)
                    .take(MAX_LINE as u64)
                    .read_until(b'\n', &mut buf)
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&buf);
                let text = text.trim();
                if !text.is_empty() {
                    push_bounded(&mut tail, REPORT_STDERR_LINES, printable(text));
                }
            }
            tail.into()
        })
        .ok()
}

#[cfg(not(unix))]
fn spawn_stderr_tail(
    _stderr: tokio::process::ChildStderr,
) -> Option<std::thread::JoinHandle<Vec<String>>> {
    None
}

/// What a wait for an engine's output came to.
#[derive(Debug)]
enum Heard {
    Line(Line),
    /// Its output ended (it exited or closed it); whatever it held was handed over before.
    Ended,
    /// The deadline passed first.
    Late,
    /// The match's stop flag was set first.
    Stopped,
}

/// How often a wait for a silent engine looks at the match's stop flag, which has no way to
/// wake it: the longest a stopped match waits for a game that waits on such an engine.
const STOP_LOOK: Duration = Duration::from_millis(50);

/// An engine's stdout, read by whoever waits for it: no thread of its own, so a line costs
/// one wake-up of the thread that wants it, not a second one to hand it over. One `read`
/// takes whatever the engine has written (often several lines of a search at once), and one
/// timestamp, taken when the read returns, times them all.
struct Output {
    source: Source,
    buffer: LineBuffer,
    filter: InfoFilter,
    /// Lines read and not yet taken, oldest first.
    ready: VecDeque<Line>,
    ended: bool,
    /// The run's log of engine lines: every line read goes there, before the filter.
    tap: Option<EngineTap>,
}

impl Output {
    fn new(stdout: tokio::process::ChildStdout) -> std::io::Result<Output> {
        Ok(Output {
            source: Source::new(stdout)?,
            buffer: LineBuffer::new(),
            filter: InfoFilter::new(),
            ready: VecDeque::new(),
            ended: false,
            tap: None,
        })
    }

    /// Whether [`Output::next_line`] would answer without waiting.
    fn has_news(&self) -> bool {
        self.ended || !self.ready.is_empty()
    }

    /// The next line the filter hands over, waiting on this thread until `deadline` at most.
    fn next_line(&mut self, deadline: Instant, stop: Option<&AtomicBool>) -> Heard {
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Heard::Line(line);
            }
            if self.ended {
                return Heard::Ended;
            }
            if stop.is_some_and(|stop| stop.load(Ordering::Relaxed)) {
                return Heard::Stopped;
            }
            let now = Instant::now();
            if now >= deadline {
                return Heard::Late;
            }
            let wait = match stop {
                Some(_) => (deadline - now).min(STOP_LOOK),
                None => deadline - now,
            };
            match self.source.read_within(self.buffer.space(), wait) {
                Ok(Some(0)) | Err(_) => {
                    self.ended = true;
                    let at = Instant::now();
                    let held = self.buffer.finish(&mut self.filter, at, self.tap.as_ref());
                    self.ready.extend(held);
                }
                Ok(Some(n)) => {
                    let at = Instant::now();
                    let lines = self
                        .buffer
                        .filled(n, &mut self.filter, at, self.tap.as_ref());
                    self.ready.extend(lines);
                }
                Ok(None) => {}
            }
        }
    }
}

/// The pipe of an engine's stdout.
#[cfg(unix)]
struct Source {
    file: std::fs::File,
}

#[cfg(unix)]
impl Source {
    fn new(stdout: tokio::process::ChildStdout) -> std::io::Result<Source> {
        // Out of the async runtime's hands: its I/O driver would otherwise be woken by every
        // line the engine writes.
        Ok(Source {
            file: std::fs::File::from(stdout.into_owned_fd()?),
        })
    }

    /// Reads what the engine has written into `buf`, after waiting at most `wait` for it:
    /// `Ok(None)` if nothing came (or the wait was interrupted), `Ok(Some(0))` at its end.
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> std::io::Result<Option<usize>> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use std::io::{ErrorKind, Read};
        let timeout = Timespec {
            tv_sec: wait.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: wait.subsec_nanos().into(),
        };
        let mut pipe = [PollFd::new(&self.file, PollFlags::IN)];
        match poll(&mut pipe, Some(&timeout)) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        // Readable, or at its end (POLLHUP): the read says which.
        match self.file.read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// Elsewhere a thread reads the pipe and passes on what it read, so that a wait can end at
/// its deadline.
#[cfg(not(unix))]
struct Source {
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Bytes received and not yet copied out.
    pending: Vec<u8>,
}

#[cfg(not(unix))]
impl Source {
    fn new(stdout: tokio::process::ChildStdout) -> std::io::Result<Source> {
        use std::io::Read;
        let mut file = std::fs::File::from(stdout.into_owned_handle()?);
        let (tx, chunks) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("engine-output".into())
            .stack_size(256 << 10)
            .spawn(move || {
                let mut buf = vec![0; MAX_LINE];
                while let Ok(n) = file.read(&mut buf) {
                    if tx.send(buf[..n].to_vec()).is_err() || n == 0 {
                        return;
                    }
                }
                let _ = tx.send(Vec::new());
            })?;
        Ok(Source {
            chunks,
            pending: Vec::new(),
        })
    }

    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> std::io::Result<Option<usize>> {
        if self.pending.is_empty() {
            match self.chunks.recv_timeout(wait) {
                Ok(chunk) if chunk.is_empty() => return Ok(Some(0)),
                Ok(chunk) => self.pending = chunk,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Ok(None),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(Some(0)),
            }
        }
        let n = self.pending.len().min(buf.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(Some(n))
    }
}

/// An engine's output between reads: the bytes of lines not yet complete. A line longer than
/// [`MAX_LINE`] is cut there and the rest of it skipped.
struct LineBuffer {
    buf: Box<[u8]>,
    /// The unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Inside an over-long line whose first `MAX_LINE` bytes were passed on.
    skipping: bool,
    /// Lines ready to hand over from the last read (reused).
    ready: Vec<Line>,
}

impl LineBuffer {
    fn new() -> LineBuffer {
        LineBuffer {
            buf: vec![0; MAX_LINE].into_boxed_slice(),
            start: 0,
            end: 0,
            skipping: false,
            ready: Vec::new(),
        }
    }

    /// Where the next read goes: never empty.
    fn space(&mut self) -> &mut [u8] {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        &mut self.buf[self.end..]
    }

    /// Takes `n` bytes just read into [`LineBuffer::space`] at `at`, and returns the lines
    /// that the filter hands over.
    fn filled(
        &mut self,
        n: usize,
        filter: &mut InfoFilter,
        at: Instant,
        tap: Option<&EngineTap>,
    ) -> std::vec::Drain<'_, Line> {
        let searched = self.end;
        self.end += n;
        let mut from = searched;
        while let Some(newline) = self.buf[from..self.end].iter().position(|&b| b == b'\n') {
            let line_end = from + newline;
            if let Some(tap) = tap {
                tap.line(Direction::Received, &self.buf[self.start..line_end]);
            }
            if std::mem::take(&mut self.skipping) {
                // The tail of an over-long line.
            } else if let Some(line) = filter.pass(&self.buf[self.start..line_end], at) {
                self.ready.push(line);
            }
            self.start = line_end + 1;
            from = self.start;
        }
        if self.start == 0 && self.end == self.buf.len() {
            // No newline in a whole buffer: garbage, not protocol.
            if let Some(tap) = tap {
                tap.line(Direction::Received, &self.buf[..]);
            }
            if !self.skipping {
                if let Some(line) = filter.pass(&self.buf[..], at) {
                    self.ready.push(line);
                }
            }
            self.skipping = true;
            (self.start, self.end) = (0, 0);
        }
        self.ready.drain(..)
    }

    /// At the end of the output: the last line if it had no newline, and what the filter held.
    fn finish(
        &mut self,
        filter: &mut InfoFilter,
        at: Instant,
        tap: Option<&EngineTap>,
    ) -> Vec<Line> {
        let mut lines = Vec::new();
        if let (Some(tap), false) = (tap, self.start == self.end) {
            tap.line(Direction::Received, &self.buf[self.start..self.end]);
        }
        if !self.skipping && self.start < self.end {
            lines.extend(filter.pass(&self.buf[self.start..self.end], at));
        }
        lines.extend(filter.finish(at));
        lines
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn engine_text_in_messages_cannot_break_lines_or_colour_the_terminal() {
        assert_eq!(printable("id name Evil\nEngine"), "id name Evil\\nEngine");
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable("tab\there"), "tab\\there");
        let long = printable(&"x".repeat(1000));
        assert_eq!(long.len(), REPORT_LINE_CHARS + 3);
        assert!(long.ends_with("..."));
    }

    #[test]
    fn kept_lines_are_reported_as_the_lines_they_were() {
        let lines = [
            "position startpos moves e2e4".to_owned(),
            format!("position startpos moves {}", "e2e4 e7e5 ".repeat(100)),
            "\u{e9}\u{1b}".repeat(700),
            "go nodes 2000".to_owned(),
        ];
        let mut kept = VecDeque::new();
        for line in &lines {
            keep_bounded(&mut kept, REPORT_LINES, line);
        }
        let expected: Vec<String> = lines[1..].iter().map(|l| printable(l)).collect();
        assert_eq!(printable_lines(&kept), expected);
        assert!(expected[0].ends_with("..."));
    }

    /// What the game would see of `output`, read in one piece with a search on from the
    /// start or not: each handed-over line with its attached info and notes.
    fn handed_over(output: &str, searching: bool) -> Vec<(String, Option<String>, Vec<String>)> {
        handed_over_in_reads(&[output], searching)
    }

    /// The same, with the output arriving in the given reads, then ending.
    fn handed_over_in_reads(
        reads: &[&str],
        searching: bool,
    ) -> Vec<(String, Option<String>, Vec<String>)> {
        let mut filter = InfoFilter::new();
        filter.searching = searching;
        let mut buffer = LineBuffer::new();
        let mut lines = Vec::new();
        for read in reads {
            // A read takes at most what fits.
            let mut read = read.as_bytes();
            while !read.is_empty() {
                let space = buffer.space();
                let n = read.len().min(space.len());
                space[..n].copy_from_slice(&read[..n]);
                read = &read[n..];
                lines.extend(buffer.filled(n, &mut filter, Instant::now(), None));
            }
        }
        lines.extend(buffer.finish(&mut filter, Instant::now(), None));
        lines
            .into_iter()
            .map(|line| (line.text, line.info, line.notes))
            .collect()
    }

    fn with(
        text: &str,
        info: Option<&str>,
        notes: &[&str],
    ) -> (String, Option<String>, Vec<String>) {
        (
            text.to_owned(),
            info.map(str::to_owned),
            notes.iter().map(|&n| n.to_owned()).collect(),
        )
    }

    #[test]
    fn search_info_is_held_back_and_the_last_scored_line_rides_with_bestmove() {
        let seen = handed_over(
            "info depth 1 score cp 10 pv e2e4\n\
             info string using 1 thread\n\
             info depth 2 score cp 20 multipv 1 pv e2e4\n\
             info depth 2 score cp -5 multipv 2 pv d2d4\n\
             info currmove e2e4 currmovenumber 1\n\
             info nodes 5000 nps 100000\n\
             bestmove e2e4 ponder e7e5\n\
             info depth 1 score mate 3 pv h5f7\n\
             readyok\n",
            false,
        );
        assert_eq!(
            seen,
            [
                // Outside a search a note goes through at once.
                with("info string using 1 thread", None, &[]),
                with(
                    "bestmove e2e4 ponder e7e5",
                    Some("info depth 2 score cp 20 multipv 1 pv e2e4"),
                    &[]
                ),
                // A scored line after `bestmove` (a stray one) never reaches the next search
                // with a move: it goes with whatever line comes next.
                with("readyok", Some("info depth 1 score mate 3 pv h5f7"), &[]),
            ]
        );
    }

    /// Stockfish opens each search with a note; it must not cost the game a wake-up of its
    /// own, nor be lost.
    #[test]
    fn notes_of_a_search_ride_with_bestmove_and_go_through_at_once_after_it() {
        let seen = handed_over(
            "info string NNUE evaluation using nn-ad9b42354671.nnue enabled\n\
             info depth 1 seldepth 1 multipv 1 score cp -35 nodes 33 pv b8c6\n\
             info string second note\n\
             info depth 2 seldepth 2 multipv 1 score cp -19 nodes 86 pv d7d6\n\
             bestmove d7d6 ponder b1c3\n\
             info string after the search\n\
             readyok\n",
            true,
        );
        assert_eq!(
            seen,
            [
                with(
                    "bestmove d7d6 ponder b1c3",
                    Some("info depth 2 seldepth 2 multipv 1 score cp -19 nodes 86 pv d7d6"),
                    &[
                        "info string NNUE evaluation using nn-ad9b42354671.nnue enabled",
                        "info string second note"
                    ]
                ),
                with("info string after the search", None, &[]),
                with("readyok", None, &[]),
            ]
        );
    }

    #[test]
    fn an_engine_that_ends_in_search_is_heard_to_its_last_note() {
        let seen = handed_over(
            "info string Hash: cannot take 512\ninfo depth 1 score cp 3 pv e2e4\nSegmentation",
            true,
        );
        assert_eq!(
            seen,
            [
                // The last line had no newline; the note held for `bestmove` comes after it.
                with(
                    "Segmentation",
                    Some("info depth 1 score cp 3 pv e2e4"),
                    &["info string Hash: cannot take 512"]
                ),
            ]
        );
        let seen = handed_over("info string Hash: cannot take 512\n", true);
        assert_eq!(seen, [with("info string Hash: cannot take 512", None, &[])]);
    }

    #[test]
    fn lines_are_cut_wherever_the_reads_split_them() {
        let seen = handed_over_in_reads(
            &[
                "id name Sp",
                "lit\r\nid author A\n\nuci",
                "ok\n   \nreadyok",
                "\n",
            ],
            false,
        );
        assert_eq!(
            seen,
            [
                with("id name Split", None, &[]),
                with("id author A", None, &[]),
                with("uciok", None, &[]),
                with("readyok", None, &[]),
            ]
        );
    }

    #[test]
    fn an_over_long_line_is_cut_and_the_rest_skipped() {
        let long = "x".repeat(MAX_LINE + 1000);
        let first = &long[..MAX_LINE - 10];
        let rest = format!("{}\nreadyok\n", &long[MAX_LINE - 10..]);
        let seen = handed_over_in_reads(&[first, &rest[..500], &rest[500..]], false);
        assert_eq!(
            seen.len(),
            2,
            "{:?}",
            seen.iter().map(|l| l.0.len()).collect::<Vec<_>>()
        );
        assert_eq!(seen[0].0.len(), MAX_LINE);
        assert_eq!(seen[1], with("readyok", None, &[]));
        // Over several buffers, and cut at the end of the output.
        let seen = handed_over_in_reads(&[&long, &long, "\nbestmove e2e4\n", &long], false);
        let lengths: Vec<usize> = seen.iter().map(|l| l.0.len()).collect();
        assert_eq!(lengths, [MAX_LINE, "bestmove e2e4".len(), MAX_LINE]);
    }

    #[test]
    fn only_the_principal_variation_s_scored_lines_are_kept() {
        assert!(is_scored_first_line(b"info depth 3 score cp 12 pv e2e4"));
        assert!(is_scored_first_line(b"info depth 3 score mate -2 pv e2e4"));
        assert!(is_scored_first_line(
            b"info depth 3 multipv 1 score cp 12 lowerbound pv e2e4"
        ));
        assert!(!is_scored_first_line(
            b"info depth 3 multipv 2 score cp 12 pv e2e4"
        ));
        assert!(!is_scored_first_line(
            b"info depth 3 multipv 12 score cp 1 pv e2e4"
        ));
        assert!(!is_scored_first_line(b"info depth 3 nodes 100 pv e2e4"));
        assert!(!is_scored_first_line(
            b"info currmove e2e4 currmovenumber 1"
        ));
        assert!(is_scored_first_line(
            b"info depth 3 score cp 12 pv \xff\xfe"
        ));
    }

    /// A UCI engine in a few lines of shell: a real process with real pipes, answering `go`
    /// with `on_go`.
    #[cfg(unix)]
    pub(crate) fn shell_engine(on_go: &str) -> ProcessSpec {
        let script = format!(
            "while read -r line; do case \"$line\" in \
             uci) echo 'id name Shell'; echo uciok;; \
             isready) echo readyok;; \
             go*) {on_go};; \
             quit) exit 0;; \
             esac; done"
        );
        ProcessSpec {
            cmd: "/bin/sh".into(),
            args: vec!["-c".into(), script],
            ..ProcessSpec::default()
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_search_is_answered_with_its_last_scored_line_and_its_notes_kept() {
        let spec = shell_engine(
            "echo 'info string NNUE evaluation enabled'; \
             echo 'info depth 1 seldepth 1 multipv 1 score cp 5 nodes 10 pv e2e4'; \
             echo 'info depth 2 seldepth 3 multipv 1 score cp 7 nodes 30 pv e2e4 e7e5'; \
             echo 'info depth 2 seldepth 3 multipv 2 score cp 1 nodes 30 pv d2d4'; \
             echo 'bestmove e2e4 ponder e7e5'",
        );
        let mut engine = UciProcess::start(&spec, Timeouts::default()).await.unwrap();
        assert_eq!(engine.name.as_deref(), Some("Shell"));
        let limits = GoLimits {
            nodes: Some(100),
            ..GoLimits::default()
        };
        for _ in 0..2 {
            let reply = engine.go("position startpos", &limits, None).await.unwrap();
            assert_eq!(reply.bestmove, "e2e4");
            assert_eq!(reply.ponder.as_deref(), Some("e7e5"));
            let info = reply.info.expect("the last scored line");
            assert_eq!(
                (info.score, info.depth, info.nodes, info.pv),
                (
                    Some(crate::uci::Score::Cp(7)),
                    Some(2),
                    Some(30),
                    vec!["e2e4".to_owned(), "e7e5".to_owned()]
                )
            );
        }
        assert_eq!(engine.notes, ["info string NNUE evaluation enabled"; 2]);
        engine.sync().await.unwrap();
        engine.shutdown().await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn an_engine_that_dies_in_search_is_reported_with_the_note_it_left() {
        let spec = shell_engine("echo 'info string Hash: cannot take 512'; exit 3");
        let mut engine = UciProcess::start(&spec, Timeouts::default()).await.unwrap();
        let fault = engine
            .go("position startpos", &GoLimits::default(), None)
            .await
            .unwrap_err();
        let EngineFault::Died(report) = fault else {
            panic!("{fault:?}");
        };
        assert_eq!(report.status.as_deref(), Some("exit status: 3"));
        assert_eq!(report.said, ["info string Hash: cannot take 512"]);
        assert_eq!(report.during, "waiting for bestmove");
    }
}
