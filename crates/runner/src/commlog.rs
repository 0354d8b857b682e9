//! The run's log file (`-log file=F`, `[log]` in TOML): arbiter's own messages at fastchess's
//! levels and, with `engine = true`, every line each engine was sent and every line it wrote,
//! the first thing to read when an engine misbehaves (cutechess's `-debug`, fastchess's
//! `-log ... engine=true`).
//!
//! One line per event, in the order written:
//!
//! ```text
//! [10:31:07.412345] game 3 sf --> position startpos moves e2e4
//! [10:31:07.412399] game 3 sf --> go depth 12
//! [10:31:07.583120] game 3 sf <-- bestmove e7e5 ponder g1f3
//! [10:31:07.590002] WARN game 3: sf (White): no bestmove within 60 s
//! ```
//!
//! The time is UTC to the microsecond, taken when the line was written to the engine or read
//! from it; `-->` goes to the engine, `<--` comes from it. The lines of an engine's handshake
//! carry the number of the game it was started for.
//!
//! Off the games' way: with no log, an engine pays one `Option` test per read and per write;
//! with one, lines go into a buffer behind a lock, written out when it fills, after every game
//! and at the end (or after every line with `realtime = true`, for `tail -f`).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The `[log]` table and the `-log` flag's keys, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    pub file: PathBuf,
    /// `trace`, `info`, `warn` (default), `err` or `fatal`: the least severe of arbiter's own
    /// messages written.
    pub level: Option<String>,
    /// Add to an existing file (default, as fastchess), or start it afresh.
    pub append: Option<bool>,
    /// Every line sent to and read from the engines (default false, as fastchess).
    pub engine: Option<bool>,
    /// Write each line out at once rather than after each game (default false).
    pub realtime: Option<bool>,
    /// fastchess's gzip output: refused, see [`LogConfig::check`].
    pub compress: Option<bool>,
}

/// How severe one of arbiter's own messages is, least first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace,
    Info,
    Warn,
    Err,
    Fatal,
}

impl Level {
    pub fn parse(text: &str) -> Option<Level> {
        match text.to_ascii_lowercase().as_str() {
            "trace" | "all" => Some(Level::Trace),
            "info" => Some(Level::Info),
            "warn" | "warning" => Some(Level::Warn),
            "err" | "error" => Some(Level::Err),
            "fatal" => Some(Level::Fatal),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Err => "ERR",
            Level::Fatal => "FATAL",
        }
    }
}

/// The levels as the errors list them.
pub const LEVELS: &str = "trace, info, warn, err or fatal";

impl LogConfig {
    /// What the text decides: the level is one of [`LEVELS`], and no compression (arbiter
    /// writes plain text; `gzip` the file after the run).
    pub fn check(&self) -> Result<Level, String> {
        if self.compress == Some(true) {
            return Err(
                "compress = true: the log is written as plain text only; compress it after \
                 the run (gzip FILE)"
                    .into(),
            );
        }
        if self.file.as_os_str().is_empty() {
            return Err("file: missing the log file's name".into());
        }
        match &self.level {
            None => Ok(Level::Warn),
            Some(text) => {
                Level::parse(text).ok_or_else(|| format!("level {text:?}: expected {LEVELS}"))
            }
        }
    }

    /// Opens the log, the file taken from `base` (the configuration's folder).
    pub fn open(&self, base: &Path) -> Result<Arc<CommLog>, String> {
        let level = self.check()?;
        let path = base.join(&self.file);
        let append = self.append.unwrap_or(true);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .map_err(|e| format!("{}: cannot open the log: {e}", path.display()))?;
        Ok(Arc::new(CommLog {
            out: Mutex::new(BufWriter::with_capacity(64 << 10, file)),
            level,
            engine: self.engine.unwrap_or(false),
            realtime: self.realtime.unwrap_or(false),
            path,
        }))
    }
}

/// An open log, shared by every game of the run.
pub struct CommLog {
    out: Mutex<BufWriter<File>>,
    level: Level,
    engine: bool,
    realtime: bool,
    path: PathBuf,
}

impl std::fmt::Debug for CommLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommLog")
            .field("path", &self.path)
            .field("level", &self.level)
            .field("engine", &self.engine)
            .finish()
    }
}

impl CommLog {
    /// Whether engines' lines are written: if not, engines are given no [`EngineTap`].
    pub fn logs_engines(&self) -> bool {
        self.engine
    }

    /// One of arbiter's own messages, if it is at least as severe as the log's level.
    pub fn message(&self, level: Level, text: &str) {
        if level < self.level {
            return;
        }
        let mut line = String::with_capacity(text.len() + 32);
        push_time(&mut line, SystemTime::now());
        let _ = write!(line, " {} {text}", level.label());
        self.write(&line);
    }

    /// Writes out what is buffered: after every game and at the end of the run.
    pub fn flush(&self) {
        let _ = self.lock().flush();
    }

    fn write(&self, line: &str) {
        let mut out = self.lock();
        // A full disk must not stop the games: the log is a diagnosis, not a result.
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        if self.realtime {
            let _ = out.flush();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BufWriter<File>> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for CommLog {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Which way a line went.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Written to the engine.
    Sent,
    /// Read from the engine.
    Received,
}

/// One engine's end of the log: its name and the game it plays now.
#[derive(Clone, Debug)]
pub struct EngineTap {
    log: Arc<CommLog>,
    engine: Arc<str>,
    game: u64,
}

impl EngineTap {
    /// A tap for `engine` in `log`, if the log takes engines' lines.
    pub fn new(log: &Arc<CommLog>, engine: &str, game: u64) -> Option<EngineTap> {
        log.engine.then(|| EngineTap {
            log: Arc::clone(log),
            engine: engine.into(),
            game,
        })
    }

    /// The game the engine's next lines belong to.
    pub fn set_game(&mut self, game: u64) {
        self.game = game;
    }

    /// One line the engine was sent or wrote (without its newline), as it was; control
    /// characters are escaped so that each stays one line of the log.
    pub fn line(&self, direction: Direction, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let mut line = String::with_capacity(text.len() + 48);
        push_time(&mut line, SystemTime::now());
        let arrow = match direction {
            Direction::Sent => "-->",
            Direction::Received => "<--",
        };
        let _ = write!(line, " game {} {} {arrow} ", self.game, self.engine);
        for c in text.trim_end_matches('\r').chars() {
            match c.is_control() {
                true => line.extend(c.escape_default()),
                false => line.push(c),
            }
        }
        self.log.write(&line);
    }
}

/// `[HH:MM:SS.micro]`, UTC.
fn push_time(line: &mut String, at: SystemTime) {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let day = since.as_secs() % 86_400;
    let _ = write!(
        line,
        "[{:02}:{:02}:{:02}.{:06}]",
        day / 3600,
        day / 60 % 60,
        day % 60,
        since.subsec_micros()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_utc_to_the_microsecond() {
        let mut line = String::new();
        // 2024-01-02 03:04:05.000006 UTC
        push_time(
            &mut line,
            UNIX_EPOCH + Duration::from_secs(1_704_164_645) + Duration::from_micros(6),
        );
        assert_eq!(line, "[03:04:05.000006]");
    }

    #[test]
    fn settings_are_checked_before_anything_is_opened() {
        let config = |level: Option<&str>, compress: Option<bool>| LogConfig {
            file: "x.log".into(),
            level: level.map(str::to_owned),
            compress,
            ..LogConfig::default()
        };
        assert_eq!(config(None, None).check(), Ok(Level::Warn));
        assert_eq!(config(Some("TRACE"), Some(false)).check(), Ok(Level::Trace));
        assert!(config(Some("loud"), None)
            .check()
            .unwrap_err()
            .contains("expected trace, info, warn, err or fatal"));
        assert!(config(None, Some(true))
            .check()
            .unwrap_err()
            .contains("plain text only"));
    }

    #[test]
    fn lines_are_filtered_by_level_and_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            file: "run.log".into(),
            level: Some("info".into()),
            engine: Some(true),
            append: Some(false),
            ..LogConfig::default()
        };
        let log = config.open(dir.path()).unwrap();
        log.message(Level::Trace, "hidden");
        log.message(Level::Err, "shown");
        let tap = EngineTap::new(&log, "sf", 7).unwrap();
        tap.line(Direction::Sent, b"go depth 3");
        tap.line(Direction::Received, b"info string \x1b[31m\r");
        drop(tap);
        drop(log);
        let text = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
        let lines: Vec<&str> = text.lines().map(|l| &l[17..]).collect();
        assert_eq!(
            lines,
            [
                " ERR shown",
                " game 7 sf --> go depth 3",
                " game 7 sf <-- info string \\u{1b}[31m"
            ]
        );
    }
}
