//! What a run leaves behind besides the store: its summary record (with the runner's own CPU
//! time and peak memory, read from /proc), and the PGN, EPD and JSON-lines files exported from
//! the store's games, appended to as pairs commit and rebuilt whole when the run ends.

use std::io::Write;
use std::path::Path;

use arbiter_rules::pgn::PgnReader;
use arbiter_store::{GameRow, RunId, Store, StoreError};
use futures_util::StreamExt;

use crate::sinks::Summary;
use crate::spec::MatchSpec;
use arbiter_records::entries::{self, EntryKind, RunResults, RunSummary};
use arbiter_records::standings::Standings;

/// The run's summary record. `model` says which statistics the Elo, nElo and LLR are:
/// `pentanomial` (pairs) or `trinomial` (unpaired games).
pub fn summary_json(
    spec: &MatchSpec,
    run: RunId,
    seed: u64,
    summary: &Summary,
    standings: Option<Standings>,
    pgn: Option<&Path>,
) -> RunSummary {
    RunSummary {
        schema: entries::SCHEMA,
        kind: EntryKind::Summary,
        run: run.get(),
        seed,
        verdict: summary.verdict.outcome(),
        results: RunResults::of(
            &summary.totals,
            spec.paired,
            spec.is_tournament(),
            summary.sprt,
        ),
        pgn: pgn.map(|p| p.display().to_string()),
        runner_cpu_ms: own_cpu_time().map(|d| d.as_millis() as u64),
        peak_rss_mb: peak_rss_mb(),
        tournament: Some(spec.kind.as_str().to_owned()),
        standings,
    }
}

/// CPU time of this process alone (engines are other processes), from /proc on Linux: what the
/// runner itself costs. `None` where /proc is not available.
pub fn own_cpu_time() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports in USER_HZ, which is 100 on every Linux architecture arbiter targets.
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// Peak resident memory of this process in MiB (Linux `VmHWM`).
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// A file exported from the store's games of one run. While the run plays, each committed
/// pair's games are appended to it ([`Export::write_game`]), in commit order; before the first
/// game and on every way a run ends it is rebuilt whole from the store ([`Export::rebuild`]),
/// in (pair, game) order, so after kills, resumes and reruns it holds exactly the committed
/// games, once each. A kill between a commit and its append leaves the file one pair behind
/// the store until the run is resumed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Export {
    /// The games' PGN (`pgnout`).
    Pgn,
    /// The final position of every game as one EPD line with its number and result
    /// (cutechess's `-epdout`), rebuilt from the stored PGN so it always agrees with the store.
    Epd,
    /// One JSON object per game (`jsonl`); the run's summary object is appended at the end.
    JsonLines,
}

/// The note on a game that was played but is not counted: its pair was not complete when run
/// `run` stopped, so the store does not hold it and resuming the run replays its pair. The
/// exports carry it (a PGN comment before the moves, an EPD `c1`, a JSON `uncounted` field),
/// and a file whose first game carries it is recognised as the run's own export.
pub fn uncounted_note(run: RunId) -> String {
    format!(
        "not counted (run {run}): the run stopped before this game's pair was complete; \
         resuming the run replays the pair"
    )
}

impl Export {
    /// Writes one stored game as this export writes it.
    pub fn write_game(self, out: &mut dyn Write, game: &GameRow) -> std::io::Result<()> {
        self.write_noted(out, game, None)
    }

    /// Writes a game that is not counted (see [`uncounted_note`]), with the note.
    pub fn write_uncounted(
        self,
        out: &mut dyn Write,
        game: &GameRow,
        run: RunId,
    ) -> std::io::Result<()> {
        self.write_noted(out, game, Some(&uncounted_note(run)))
    }

    fn write_noted(
        self,
        out: &mut dyn Write,
        game: &GameRow,
        note: Option<&str>,
    ) -> std::io::Result<()> {
        match self {
            Export::Pgn => match note {
                None => out.write_all(game.pgn.as_bytes()),
                // The note opens the movetext, after the tag pairs' blank line.
                Some(note) => {
                    let (tags, moves) = game
                        .pgn
                        .split_once("\n\n")
                        .unwrap_or((game.pgn.as_str(), ""));
                    write!(out, "{tags}\n\n{{{note}}}\n{moves}")
                }
            },
            Export::JsonLines => match note {
                None => writeln!(out, "{}", game.json),
                Some(note) => {
                    let mut value: serde_json::Value = serde_json::from_str(&game.json)
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
                    if let Some(object) = value.as_object_mut() {
                        object.insert("uncounted".to_owned(), note.into());
                    }
                    writeln!(out, "{value}")
                }
            },
            Export::Epd => {
                let Some(Ok(pgn)) = PgnReader::new(game.pgn.as_bytes()).next() else {
                    let reason = format!("game {} has unreadable PGN", game.game_number);
                    return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, reason));
                };
                let mut end = pgn.start;
                for &mv in &pgn.moves {
                    end.play_unchecked(mv);
                }
                let note = note.map_or_else(String::new, |note| format!(" c1 \"{note}\";"));
                writeln!(
                    out,
                    "{} id \"game {}\"; c0 \"{} vs {}: {} {}\";{note}",
                    end.to_setup().epd_fields(),
                    game.game_number,
                    game.white,
                    game.black,
                    game.result,
                    game.termination
                )
            }
        }
    }

    /// Streams the run's games into a file beside `path`, then renames it into place, so the
    /// export on disk is always complete: never half a store. `uncounted` (games whose pair
    /// was not complete when the run stopped) follow the stored games with their note, and
    /// `trailer` (the JSON summary) comes last. Returns the number of games written, the
    /// uncounted ones included.
    pub async fn rebuild(
        self,
        store: &Store,
        run: RunId,
        path: &Path,
        uncounted: &[GameRow],
        trailer: Option<&str>,
    ) -> Result<u64, ExportError> {
        let tmp = path.with_extension("export.tmp");
        let io = |e: std::io::Error| ExportError::Io(tmp.display().to_string(), e.to_string());
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io)?);
        let mut games = store.games(run);
        let mut count = 0;
        while let Some(game) = games.next().await {
            self.write_game(&mut out, &game?.game).map_err(io)?;
            count += 1;
        }
        for game in uncounted {
            self.write_uncounted(&mut out, game, run).map_err(io)?;
            count += 1;
        }
        if let Some(trailer) = trailer {
            writeln!(out, "{trailer}").map_err(io)?;
        }
        out.flush().map_err(io)?;
        drop(out);
        std::fs::rename(&tmp, path)
            .map_err(|e| ExportError::Io(path.display().to_string(), e.to_string()))?;
        Ok(count)
    }

    /// Whether the file at `path` may be replaced without losing anything: it is missing or
    /// empty, or it begins with one of this run's games as this export writes them (an
    /// earlier session of the same run wrote it: rebuilt in game order, then appended to in
    /// commit order, so its first game may be any stored one), with a game noted as uncounted
    /// by this run, or (JSON lines) with this run's summary. Anything else is someone's file: another run's games, or a
    /// file cutechess appended to.
    pub async fn is_replaceable(self, store: &Store, run: RunId, path: &Path) -> bool {
        let Ok(existing) = std::fs::read(path) else {
            return true;
        };
        if existing.is_empty() {
            return true;
        }
        let first_game = match self {
            // A PGN game ends at the blank line after its movetext.
            Export::Pgn => existing
                .windows(3)
                .enumerate()
                .filter(|(_, w)| w == b"\n\n[")
                .map(|(i, _)| i + 2)
                .next()
                .map_or(&existing[..], |end| &existing[..end]),
            Export::Epd | Export::JsonLines => {
                existing.split(|&b| b == b'\n').next().unwrap_or_default()
            }
        };
        // A run that ended before its first game left only its summary in the JSON lines.
        if self == Export::JsonLines {
            let summary: Option<serde_json::Value> = serde_json::from_slice(first_game).ok();
            if summary.is_some_and(|s| s["type"] == "summary" && s["run"] == run.get()) {
                return true;
            }
        }
        let note = uncounted_note(run);
        if first_game.windows(note.len()).any(|w| w == note.as_bytes()) {
            return true;
        }
        // EPD lines are rendered from PGN: only the game the line names is rendered.
        let epd_number = match self {
            Export::Epd => String::from_utf8_lossy(first_game)
                .split("id \"game ")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .and_then(|n| n.parse::<u64>().ok()),
            _ => None,
        };
        let mut games = store.games(run);
        while let Some(Ok(stored)) = games.next().await {
            if self == Export::Epd && epd_number != Some(stored.game.game_number) {
                continue;
            }
            let mut rendered = Vec::new();
            if self.write_game(&mut rendered, &stored.game).is_ok()
                && existing.starts_with(&rendered)
            {
                return true;
            }
        }
        false
    }
}

/// Writes every committed game of `run`, in (pair, game) order, to `path`.
pub async fn export_pgn(store: &Store, run: RunId, path: &Path) -> Result<u64, ExportError> {
    Export::Pgn.rebuild(store, run, path, &[], None).await
}

/// Writes the final position of every committed game of `run` as one EPD line (see
/// [`Export::Epd`]).
pub async fn export_epd(store: &Store, run: RunId, path: &Path) -> Result<u64, ExportError> {
    Export::Epd.rebuild(store, run, path, &[], None).await
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}: {1}")]
    Io(String, String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
