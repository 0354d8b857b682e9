//! A UCI engine as an owned child process.
//!
//! Engine output is read on its own task, line by line with the instant each line arrived, so
//! the clock stops when `bestmove` was read, not when the game loop got round to it, and a
//! silent engine is a timeout rather than a hang. Dropping a [`UciProcess`] ends the process:
//! it is asked to `stop` and `quit`, given a moment, then killed, so no code path can leak an
//! engine. An engine that dies is reported with what it was doing and its last words: how it
//! ended, the last commands it was sent, what it printed after them and the tail of its
//! stderr.

use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::timeout_at;

use crate::tc::human_duration;
use crate::uci::{self, GoLimits, Info, OptionDecl};

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
    /// For searches without a clock (nodes, depth): how long to wait for `bestmove`.
    pub unclocked_move: Duration,
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
            unclocked_move: Duration::from_secs(60),
            ping: None,
        }
    }
}

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
    TimeForfeit { elapsed: Duration },
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

/// One line of engine output and when it was read.
#[derive(Debug)]
struct Line {
    text: String,
    at: Instant,
    /// The last scored `info` line (multipv 1) read since the previous line handed over.
    info: Option<String>,
}

/// Keeps an engine's search chatter on the reader's side. Engines print many `info` lines per
/// move and the game uses only the last scored one, so the reader holds them and hands that
/// one over with the next other line (`bestmove`): one wake-up of the game per move instead of
/// one per line, which is most of the runner's own cost per move when searches are short.
#[derive(Default)]
struct InfoFilter {
    last_scored: Option<String>,
}

impl InfoFilter {
    /// The line to hand over for `text`, or `None` while it is held back.
    fn pass(&mut self, text: &str, at: Instant) -> Option<Line> {
        let line = |info| Line {
            text: text.to_owned(),
            at,
            info,
        };
        // A note goes through at once and leaves the held line for the `bestmove` after it.
        if text.starts_with("info string") {
            return Some(line(None));
        }
        if !text.starts_with("info") {
            return Some(line(self.last_scored.take()));
        }
        let scored = text.contains(" score cp ") || text.contains(" score mate ");
        if scored && (!text.contains(" multipv ") || uci::parse_info(text).multipv == Some(1)) {
            self.last_scored = Some(text.to_owned());
        }
        None
    }
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
    lines: mpsc::Receiver<Line>,
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
    /// The last commands written (printable), and when the last one was.
    sent: VecDeque<String>,
    sent_at: Instant,
    /// Lines read since the last command (printable), for an [`ExitReport`], and how many.
    said: VecDeque<String>,
    said_count: usize,
    /// The thread keeping the tail of the engine's stderr, which it returns at end of file.
    stderr_tail: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl UciProcess {
    /// Starts the process and completes the handshake: `uci`/`uciok`, options, `isready`.
    pub async fn start(spec: &ProcessSpec, timeouts: Timeouts) -> Result<UciProcess, EngineFault> {
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
        let (tx, rx) = mpsc::channel(1024);
        spawn_reader(stdout, tx).map_err(|e| EngineFault::Spawn {
            cmd: spec.cmd.display().to_string(),
            reason: e.to_string(),
        })?;
        let stderr_tail = child.stderr.take().and_then(spawn_stderr_tail);

        let mut engine = UciProcess {
            child: Some(child),
            stdin: Some(stdin),
            lines: rx,
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
            said: VecDeque::with_capacity(REPORT_LINES),
            said_count: 0,
            stderr_tail,
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
            } else if let Some(option) = uci::parse_option(text) {
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
                said: self.said.iter().cloned().collect(),
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
        let line = if value.is_empty() {
            format!("setoption name {name}")
        } else {
            format!("setoption name {name} value {value}")
        };
        self.send(&line).await
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
    /// is a time forfeit. Without a deadline the engine gets `Timeouts::unclocked_move`.
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
        // One write for both lines: one wake-up of the engine, one system call.
        self.send(&format!("{position}\n{}", uci::go_command(limits)))
            .await?;
        let started = Instant::now();
        self.searching = true;
        let flag = deadline.map(|d| started + d);
        let give_up = flag.unwrap_or(started + self.timeouts.unclocked_move);
        loop {
            let line = match self.next_line(give_up, "bestmove").await {
                Ok(line) => line,
                Err(EngineFault::Stalled { .. }) if flag.is_some() => {
                    return Err(EngineFault::TimeForfeit {
                        elapsed: started.elapsed(),
                    });
                }
                Err(fault) => return Err(fault),
            };
            if let Some((bestmove, ponder)) = uci::parse_bestmove(&line.text) {
                self.searching = false;
                let elapsed = line.at.saturating_duration_since(started);
                // The reader kept only the last scored line, parsed once here.
                return Ok(Reply {
                    bestmove,
                    ponder,
                    info: line.info.map(|text| uci::parse_info(&text)),
                    elapsed,
                });
            }
            if line.text.starts_with("info string ") {
                self.note(line.text);
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

    async fn send(&mut self, text: &str) -> Result<(), EngineFault> {
        for line in text.lines() {
            push_bounded(&mut self.sent, REPORT_LINES, printable(line));
        }
        self.said.clear();
        self.said_count = 0;
        self.sent_at = Instant::now();
        let mut bytes = Vec::with_capacity(text.len() + 1);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(b'\n');
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&bytes).await.is_ok() && stdin.flush().await.is_ok(),
            None => false,
        };
        if written {
            Ok(())
        } else {
            Err(self.died("writing to it".to_owned()).await)
        }
    }

    async fn next_line(
        &mut self,
        deadline: Instant,
        expected: &'static str,
    ) -> Result<Line, EngineFault> {
        match timeout_at(deadline.into(), self.lines.recv()).await {
            Ok(Some(line)) => {
                push_bounded(&mut self.said, REPORT_LINES, printable(&line.text));
                self.said_count += 1;
                Ok(line)
            }
            Ok(None) => Err(self.died(format!("waiting for {expected}")).await),
            Err(_) => Err(EngineFault::Stalled {
                expected,
                waited: deadline.saturating_duration_since(self.sent_at),
            }),
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
        while let Ok(Some(line)) = timeout_at(give_up.into(), self.lines.recv()).await {
            push_bounded(&mut self.said, REPORT_LINES, printable(&line.text));
            self.said_count += 1;
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
            sent: self.sent.iter().cloned().collect(),
            said: self.said.iter().cloned().collect(),
            stderr,
        }))
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

/// Starts the reader of an engine's output. On Unix it is an OS thread doing blocking reads, so
/// each line is timestamped the moment it arrives even when the async runtime is busy (PGN
/// writing, store commits): a late timestamp would charge the runner's delay to the engine's
/// clock.
#[cfg(unix)]
fn spawn_reader(
    stdout: tokio::process::ChildStdout,
    tx: mpsc::Sender<Line>,
) -> std::io::Result<()> {
    let file = std::fs::File::from(stdout.into_owned_fd()?);
    std::thread::Builder::new()
        .name("engine-output".into())
        .stack_size(256 << 10)
        .spawn(move || read_lines(std::io::BufReader::new(file), tx))?;
    Ok(())
}

/// Elsewhere the output is read on the runtime, with the timestamp taken when the task runs.
#[cfg(not(unix))]
fn spawn_reader(
    stdout: tokio::process::ChildStdout,
    tx: mpsc::Sender<Line>,
) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stdout);
        let mut buf = Vec::with_capacity(256);
        let mut filter = InfoFilter::default();
        loop {
            buf.clear();
            match (&mut reader)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut buf)
                .await
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let at = Instant::now();
            let text = String::from_utf8_lossy(&buf);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            if let Some(line) = filter.pass(text, at) {
                if tx.send(line).await.is_err() {
                    return;
                }
            }
        }
    });
    Ok(())
}

fn read_lines<R: std::io::BufRead>(mut reader: R, tx: mpsc::Sender<Line>) {
    use std::io::{BufRead, Read};
    let mut buf = Vec::with_capacity(256);
    let mut filter = InfoFilter::default();
    loop {
        buf.clear();
        let n = match (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut buf)
        {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 {
            return;
        }
        let at = Instant::now();
        if !buf.ends_with(b"\n") && n == MAX_LINE {
            // Skip the rest of an over-long line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                match (&mut reader)
                    .take(MAX_LINE as u64)
                    .read_until(b'\n', &mut rest)
                {
                    Ok(0) | Err(_) => return,
                    Ok(_) if rest.ends_with(b"\n") => break,
                    Ok(_) => {}
                }
            }
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if let Some(line) = filter.pass(text, at) {
            if tx.blocking_send(line).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
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

    /// What the game would see of `output`: each handed-over line with its attached info.
    fn handed_over(output: &[&str]) -> Vec<(String, Option<String>)> {
        let mut filter = InfoFilter::default();
        output
            .iter()
            .filter_map(|text| filter.pass(text, Instant::now()))
            .map(|line| (line.text, line.info))
            .collect()
    }

    #[test]
    fn search_info_is_held_back_and_the_last_scored_line_rides_with_bestmove() {
        let seen = handed_over(&[
            "info depth 1 score cp 10 pv e2e4",
            "info string using 1 thread",
            "info depth 2 score cp 20 multipv 1 pv e2e4",
            "info depth 2 score cp -5 multipv 2 pv d2d4",
            "info currmove e2e4 currmovenumber 1",
            "info nodes 5000 nps 100000",
            "bestmove e2e4 ponder e7e5",
            "info depth 1 score mate 3 pv h5f7",
            "readyok",
        ]);
        let with = |text: &str, info: Option<&str>| (text.to_owned(), info.map(str::to_owned));
        assert_eq!(
            seen,
            [
                with("info string using 1 thread", None),
                with(
                    "bestmove e2e4 ponder e7e5",
                    Some("info depth 2 score cp 20 multipv 1 pv e2e4")
                ),
                // A scored line after `bestmove` (a stray one) never reaches the next search
                // with a move: it goes with whatever line comes next.
                with("readyok", Some("info depth 1 score mate 3 pv h5f7")),
            ]
        );
    }
}
