//! What the match reports: cutechess-style text lines (so existing parsers keep working), the
//! final JSON summary, and the PGN export of the store. Pure formatting over the runner's
//! events and the store's totals; the CLI decides where each goes.

use std::io::Write;
use std::path::Path;

use arbiter_rules::pgn::PgnReader;
use arbiter_stats::{estimate, Pentanomial, Sample, Sprt, SprtState, SprtStatus, Trinomial};
use arbiter_store::{GameRow, RunId, Store, StoreError, Totals};
use futures_util::StreamExt;

use crate::game::GameRecord;

/// `Started game 3 of 400 (dev vs base)`
pub fn started_line(number: u64, total: u64, white: &str, black: &str) -> String {
    format!("Started game {number} of {total} ({white} vs {black})")
}

/// `Finished game 3 (dev vs base): 1-0 {White mates}`
pub fn finished_line(number: u64, record: &GameRecord) -> String {
    format!(
        "Finished game {number} ({} vs {}): {} {{{}}}",
        record.white,
        record.black,
        record.outcome.result_token(),
        record.reason
    )
}

/// The lines cutechess prints after results change: score, Elo, and the SPRT state.
pub fn score_lines(
    first: &str,
    second: &str,
    totals: &Totals,
    sprt: Option<(&Sprt, SprtStatus)>,
) -> Vec<String> {
    let games = totals.wins + totals.draws + totals.losses;
    if games == 0 {
        return Vec::new();
    }
    let points = totals.wins as f64 + totals.draws as f64 / 2.0;
    let mut lines = vec![format!(
        "Score of {first} vs {second}: {} - {} - {}  [{:.3}] {games}",
        totals.wins,
        totals.losses,
        totals.draws,
        points / games as f64
    )];
    let penta = Sample::from(Pentanomial::from_counts(totals.pentanomial));
    if let Ok(elo) = estimate::elo(&penta) {
        let draw_ratio = estimate::draw_ratio(&Trinomial::from_wdl(
            totals.wins,
            totals.draws,
            totals.losses,
        ))
        .unwrap_or(0.0);
        let mut line = format!(
            "Elo difference: {:.1} +/- {:.1}, LOS: {:.1} %, DrawRatio: {:.1} %",
            elo.elo,
            elo.half_width,
            elo.los * 100.0,
            draw_ratio * 100.0
        );
        if let Ok(nelo) = estimate::normalized_elo(&penta) {
            line.push_str(&format!(
                ", nElo: {:.1} +/- {:.1}",
                nelo.nelo, nelo.half_width
            ));
        }
        lines.push(line);
    }
    let [ll, ld, dd, dw, ww] = totals.pentanomial;
    lines.push(format!("Ptnml(0-2): [{ll}, {ld}, {dd}, {dw}, {ww}]"));
    if let Some((sprt, status)) = sprt {
        lines.push(sprt_line(sprt, &status));
    }
    lines
}

/// `SPRT: llr 1.23 (41.8%), lbound -2.94, ubound 2.94` and, once decided, ` - H1 was accepted`.
pub fn sprt_line(sprt: &Sprt, status: &SprtStatus) -> String {
    let percent = if status.llr >= 0.0 {
        status.llr / status.upper_bound
    } else {
        status.llr / status.lower_bound.abs()
    };
    let mut line = format!(
        "SPRT: llr {:.3} ({:.1}%), lbound {:.2}, ubound {:.2} [{} {} {}]",
        status.llr,
        percent * 100.0,
        status.lower_bound,
        status.upper_bound,
        sprt.elo0(),
        sprt.elo1(),
        sprt.model()
    );
    match status.state {
        SprtState::H1 => line.push_str(" - H1 was accepted"),
        SprtState::H0 => line.push_str(" - H0 was accepted"),
        SprtState::Continue => {}
    }
    line
}

/// The final summary as one JSON object.
pub fn summary_json(
    run: RunId,
    verdict: &str,
    totals: &Totals,
    sprt: Option<(&Sprt, SprtStatus)>,
    pgn: Option<&Path>,
) -> serde_json::Value {
    let penta = Sample::from(Pentanomial::from_counts(totals.pentanomial));
    let elo = estimate::elo(&penta).ok();
    let nelo = estimate::normalized_elo(&penta).ok();
    serde_json::json!({
        "type": "summary",
        "run": run.get(),
        "verdict": verdict,
        "pairs": totals.pairs,
        "games": totals.wins + totals.draws + totals.losses,
        "wins": totals.wins,
        "draws": totals.draws,
        "losses": totals.losses,
        "pentanomial": totals.pentanomial,
        "elo": elo.map(|e| e.elo),
        "elo_ci": elo.map(|e| [e.interval().0, e.interval().1]),
        "los": elo.map(|e| e.los),
        "nelo": nelo.map(|n| n.nelo),
        "nelo_ci": nelo.map(|n| [n.interval().0, n.interval().1]),
        "llr": sprt.map(|(_, s)| s.llr),
        "lower_bound": sprt.map(|(_, s)| s.lower_bound),
        "upper_bound": sprt.map(|(_, s)| s.upper_bound),
        "state": sprt.map(|(_, s)| s.state.as_str()),
        "pgn": pgn.map(|p| p.display().to_string()),
        "runner_cpu_ms": own_cpu_time().map(|d| d.as_millis() as u64),
        "peak_rss_mb": peak_rss_mb(),
    })
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

/// Writes every committed game of `run`, in (pair, game) order, to `path`.
pub async fn export_pgn(store: &Store, run: RunId, path: &Path) -> Result<u64, ExportError> {
    export(store, run, path, |out, game| {
        out.write_all(game.pgn.as_bytes())
    })
    .await
}

/// Writes the final position of every committed game of `run` as one EPD line, with the game's
/// number and result: cutechess's `-epdout`, rebuilt from the stored PGN so it always agrees
/// with the store.
pub async fn export_epd(store: &Store, run: RunId, path: &Path) -> Result<u64, ExportError> {
    export(store, run, path, |out, game| {
        let Some(Ok(pgn)) = PgnReader::new(game.pgn.as_bytes()).next() else {
            let reason = format!("game {} has unreadable PGN", game.game_number);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, reason));
        };
        let mut end = pgn.start;
        for &mv in &pgn.moves {
            end.play_unchecked(mv);
        }
        writeln!(
            out,
            "{} id \"game {}\"; c0 \"{} vs {}: {} {}\";",
            end.to_setup().epd_fields(),
            game.game_number,
            game.white,
            game.black,
            game.result,
            game.termination
        )
    })
    .await
}

/// Streams the run's games through `write` into a file beside `path`, then renames it into
/// place, so the export on disk is always complete: never half a store.
async fn export(
    store: &Store,
    run: RunId,
    path: &Path,
    mut write: impl FnMut(&mut dyn Write, &GameRow) -> std::io::Result<()>,
) -> Result<u64, ExportError> {
    let tmp = path.with_extension("export.tmp");
    let io = |e: std::io::Error| ExportError::Io(tmp.display().to_string(), e.to_string());
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io)?);
    let mut games = store.games(run);
    let mut count = 0;
    while let Some(game) = games.next().await {
        write(&mut out, &game?.game).map_err(io)?;
        count += 1;
    }
    out.flush().map_err(io)?;
    drop(out);
    std::fs::rename(&tmp, path)
        .map_err(|e| ExportError::Io(path.display().to_string(), e.to_string()))?;
    Ok(count)
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}: {1}")]
    Io(String, String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
