//! `arbiter match`: a local match or SPRT, from a TOML config or the cutechess grammar.
//!
//! Wiring only: the runner plays, the store keeps, the statistics crate judges, and
//! [`arbiter_runner::lifecycle`] finds, resumes or creates the run (the same command finds the
//! same run, so rerunning it resumes; an edited configuration is refused rather than mixed into
//! it) and lays out the exports. This module opens the store, starts the match, and routes its
//! events to the terminal (cutechess's stream on stdout, arbiter's own lines and the progress
//! bar on stderr) and to the exports; the live report (`report = "DIR"`, `-report DIR`) is
//! rebuilt from the store beside the games.

use std::collections::HashMap;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arbiter_records::standings::{self, PairingResult, Standings};
use arbiter_report::{Format, Report, RunData};
use arbiter_rules::Color;
use arbiter_runner::commlog::Level;
use arbiter_runner::config::{OutputFormat, ReportSettings, RunConfig};
use arbiter_runner::lifecycle;
use arbiter_runner::lines;
use arbiter_runner::outputs::{self, Export};
use arbiter_runner::play::Event;
use arbiter_runner::player::PlayerKind;
use arbiter_runner::sinks::{run_match, Summary, Verdict};
use arbiter_runner::spec::MatchSpec;
use arbiter_stats::SprtStatus;
use arbiter_store::{Location, RunId, Store, Totals};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::{mpsc, watch};

#[derive(clap::Args)]
pub struct MatchArgs {
    /// The run's TOML configuration (see configs/).
    config: Option<PathBuf>,
    /// Continue a stored run by id or name, with the configuration it was started with.
    #[arg(long)]
    resume: Option<String>,
    /// The database holding runs (default: the config's `store`, else arbiter.db).
    #[arg(long)]
    store: Option<String>,
    /// Print the final summary as JSON on stdout (cutechess's lines then go to stderr).
    #[arg(long)]
    json: bool,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    quiet: bool,
    /// Queue the run in this database (`postgres://...`; an SQLite file serves one machine) and
    /// play it here as one of its workers: `arbiter worker --db URL` on other machines joins
    /// it. Rerunning the command joins the unfinished run again.
    #[arg(long, conflicts_with_all = ["store", "resume", "json"])]
    db: Option<String>,
    /// With --db: pairs per batch (default: about four minutes of games at the run's time
    /// control).
    #[arg(long, requires = "db")]
    batch_pairs: Option<u64>,
}

/// Runs `arbiter match`.
pub fn run(args: &MatchArgs) -> anyhow::Result<ExitCode> {
    run_async_with(args, None, None)
}

/// Runs a match from an already-parsed configuration (the cutechess grammar).
pub fn run_config(config: RunConfig, json: bool) -> anyhow::Result<ExitCode> {
    run_async_with(&config_args(json), Some(config), None)
}

/// Runs the confirmation SPRT of tuning run `tuning`: a match from `config` whose run, when
/// it is created, is stored with the link to the tuning run (what its report finds it by).
pub fn run_confirmation(config: RunConfig, json: bool, tuning: RunId) -> anyhow::Result<ExitCode> {
    run_async_with(&config_args(json), Some(config), Some(tuning))
}

fn config_args(json: bool) -> MatchArgs {
    MatchArgs {
        config: None,
        resume: None,
        store: None,
        json,
        quiet: false,
        db: None,
        batch_pairs: None,
    }
}

fn run_async_with(
    args: &MatchArgs,
    config: Option<RunConfig>,
    confirms: Option<RunId>,
) -> anyhow::Result<ExitCode> {
    // A game with a UCI engine runs on a thread of the blocking pool, and a wait for an engine
    // past the runner's own-thread games takes one too (`arbiter_runner::game::play_game`):
    // one per game in flight at most, and never queued behind each other, where a late read
    // would be charged to an engine's clock.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(arbiter_runner::config::MAX_CONCURRENCY + 512)
        .build()
        .context("start the async runtime")?;
    runtime.block_on(run_async(args, config, confirms))
}

/// Why a match was stopped from outside; the exit status says which.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
enum StopReason {
    None = 0,
    /// Ctrl-C (SIGINT): 130.
    Interrupt = 130,
    /// SIGTERM (a service manager, `kill`, a CI timeout): 143.
    Terminate = 143,
    /// stdout closed (`arbiter match ... | head`): 141, as a writer killed by SIGPIPE.
    StdoutClosed = crate::EXIT_STDOUT_CLOSED,
}

/// Where the match's lines go. stdout carries cutechess's stream and nothing else, so that
/// scripts written for cutechess read it unchanged, whether or not a terminal is attached;
/// with `--json` it carries only the JSON summary, and the stream moves to stderr. arbiter's
/// own lines (the run, warnings, exports) and the progress bar are on stderr.
struct Console {
    json: bool,
    bar: Option<ProgressBar>,
    stop: Arc<Stop>,
    report: ReportSettings,
    /// What fastchess's result block shows in parentheses: time control, threads, hash, book.
    details: String,
}

/// The one stop signal of a match, with the first reason given.
struct Stop {
    cancel: watch::Sender<bool>,
    reason: AtomicU8,
    stdout_closed: AtomicBool,
}

impl Stop {
    fn request(&self, reason: StopReason) {
        let _ = self.reason.compare_exchange(
            StopReason::None as u8,
            reason as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let _ = self.cancel.send(true);
    }

    fn reason(&self) -> StopReason {
        match self.reason.load(Ordering::SeqCst) {
            130 => StopReason::Interrupt,
            143 => StopReason::Terminate,
            crate::EXIT_STDOUT_CLOSED => StopReason::StdoutClosed,
            _ => StopReason::None,
        }
    }
}

impl Console {
    /// A line of cutechess's stream.
    fn result(&self, line: &str) {
        if self.json {
            self.info(line);
        } else {
            self.stdout(line);
        }
    }

    /// A line on stdout. A closed stdout ends output quietly and stops the match: the
    /// reader is gone, and nobody would see the rest of the run.
    fn stdout(&self, line: &str) {
        if self.stop.stdout_closed.load(Ordering::SeqCst) {
            return;
        }
        let write = || {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}").and_then(|()| out.flush())
        };
        let written = match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        };
        if written.is_err() {
            self.stop.stdout_closed.store(true, Ordering::SeqCst);
            self.stop.request(StopReason::StdoutClosed);
        }
    }

    /// The rating block of the chosen format for `totals`.
    fn rating_block(&self, spec: &MatchSpec, totals: &Totals, sprt: Option<SprtStatus>) {
        let lines = match self.report.format {
            OutputFormat::Cutechess => lines::rating_lines(totals, sprt, self.report.penta),
            OutputFormat::Fastchess => lines::fastchess_block(
                &spec.players[0].name,
                &spec.players[1].name,
                &self.details,
                totals,
                spec.sprt.as_ref().zip(sprt),
                self.report.penta,
            ),
        };
        for line in &lines {
            self.result(line);
        }
    }

    /// A tournament's standings, as cutechess prints them at each rating interval and at the end.
    fn standings_block(&self, standings: &Standings) {
        for line in standings::standings_table(standings).lines() {
            self.result(line);
        }
    }

    /// One of arbiter's own lines, on stderr; a closed stderr loses them and nothing else.
    fn info(&self, line: &str) {
        let write = || {
            let _ = writeln!(std::io::stderr(), "{line}");
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

async fn run_async(
    args: &MatchArgs,
    given: Option<RunConfig>,
    confirms: Option<RunId>,
) -> anyhow::Result<ExitCode> {
    let (file_config, base) = match (&given, &args.config) {
        (Some(config), _) => (Some(config.clone()), PathBuf::from(".")),
        (None, Some(path)) => {
            let config = RunConfig::load(path)?;
            (
                Some(config),
                path.parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_owned),
            )
        }
        (None, None) if args.resume.is_some() => (None, PathBuf::from(".")),
        (None, None) => {
            bail!("give a configuration file (arbiter match CONFIG.toml) or --resume RUN")
        }
    };
    // The text is judged before anything is opened or created: a configuration that cannot
    // run leaves no store behind.
    if let Some(config) = &file_config {
        config.check()?;
        if let (None, Some(built)) = (&args.db, config.engines.iter().find(|e| e.build.is_some())) {
            bail!(
                "engine {} is built from source (build = ...), which the fleet's workers do: \
                 play it with --db FILE (this process then builds and plays it as a worker), \
                 or give its cmd",
                built.name
            );
        }
        // So is an engine whose bench differs from the count the configuration states: it is
        // another build than the run names (benched once; the check after opening is free).
        if args.db.is_none() && config.engines.iter().any(|e| e.bench.is_some()) {
            let resolved = config.resolve(&base, 0)?;
            arbiter_runner::bench::verify_stated(config, &resolved.players)
                .await
                .map_err(|why| anyhow::anyhow!("{why}"))?;
        }
    }
    if let (Some(db), Some(config)) = (&args.db, &file_config) {
        return crate::fleet_cmd::match_queued(
            config.clone(),
            base,
            db,
            args.batch_pairs,
            args.json,
        )
        .await;
    }
    let location = args
        .store
        .clone()
        .or_else(|| {
            file_config
                .as_ref()
                .and_then(|c| c.store.clone())
                .map(|s| base.join(s).display().to_string())
        })
        .unwrap_or_else(|| "arbiter.db".to_owned());
    // Resuming needs a store that exists: a mistyped path must not become an empty database.
    let store = if args.resume.is_some() {
        Store::open_existing(&Location::parse(&location)).await
    } else {
        Store::open(&Location::parse(&location)).await
    };
    let store = Arc::new(store.with_context(|| format!("open the store {location}"))?);

    // Find the run: by --resume, else by the configuration's name. Rerunning resumes an
    // unfinished run; after a finished one it starts the next (`name-2`, `name-3`, ...).
    let opened = match (&args.resume, file_config) {
        (Some(key), _) => lifecycle::resume_match(&store, key, &location).await?,
        (None, Some(config)) => {
            lifecycle::open_match(&store, config, &base, &location, confirms).await?
        }
        (None, None) => unreachable!("a configuration or --resume, checked above"),
    };
    // The lock lives as long as the match: one process plays a run.
    let lifecycle::OpenedMatch {
        run,
        seed,
        config,
        base,
        spec,
        how,
        lock: _lock,
    } = opened;
    let spec = Arc::new(spec);
    let before = store.totals(run).await?;

    let (cancel_tx, cancel_rx) = watch::channel(false);
    let stop = Arc::new(Stop {
        cancel: cancel_tx,
        reason: AtomicU8::new(StopReason::None as u8),
        stdout_closed: AtomicBool::new(false),
    });
    let show_bar = !args.quiet && std::io::stderr().is_terminal();
    let console = Arc::new(Console {
        json: args.json,
        bar: show_bar.then(|| progress_bar(spec.pairs, before.pairs)),
        stop: stop.clone(),
        report: report_settings(&config, &spec)?,
        details: matchup_details(&spec, &config),
    });
    let name = store.run(run).await?.spec.name;
    let schedule = if spec.paired {
        format!("{} pairs", spec.pairs)
    } else {
        format!(
            "{} games, unpaired (each its own opening; trinomial statistics)",
            spec.games
        )
    };
    let players = if spec.is_tournament() {
        let names: Vec<&str> = spec.players.iter().map(|p| p.name.as_str()).collect();
        format!(
            "{} of {} engines ({}), {} pairings",
            spec.kind.as_str(),
            names.len(),
            names.join(", "),
            spec.pairings.len()
        )
    } else {
        format!("{} vs {}", spec.players[0].name, spec.players[1].name)
    };
    console.info(&format!(
        "Run {run} ({name}): {players}, {schedule}, seed {seed}, {how}, {} in the store",
        before.pairs
    ));
    if let Some(handicap) = spec.handicap {
        let giver = &spec.players[handicap.giver].name;
        let colours = if handicap.alternate {
            format!("colours alternating, the odds always on {giver}'s side")
        } else {
            format!(
                "{giver} always plays {}, as the old laws have it",
                handicap.odds.giver().name()
            )
        };
        console.info(&format!(
            "Handicap: {giver} gives {} odds in every game ({colours}); the games are counted \
             one by one (trinomial), as the pairs do not mirror each other",
            handicap.odds.name()
        ));
    }
    for warning in &spec.warnings {
        console.info(&format!("warning: {warning}"));
    }

    // Every output is written once before the first game: a path that cannot be written fails
    // now, not after hours of games, and each file starts as exactly what the store holds.
    let (exports, moved) = lifecycle::prepare_exports(&store, run, &config, &base).await?;
    for warning in moved {
        console.info(&format!("warning: {warning}"));
    }
    // Each committed pair is appended to every export as it commits, so that a long run can be
    // read (and a killed one inspected) while it plays; the exports are rebuilt whole at the end.
    let appenders = exports
        .iter()
        .map(|(export, path)| {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("open {}", path.display()))?;
            Ok(Appender {
                export: *export,
                path: path.clone(),
                file,
                failed: false,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    // The live report: its folder must be writable before the first game, like the exports;
    // after that a refresh that fails is a warning, never a reason to stop the games.
    let live = match &config.report {
        Some(dir) => {
            let warn = console.clone();
            let live = Arc::new(LiveReport::new(
                store.clone(),
                run,
                base.join(dir),
                Box::new(move |line| warn.info(line)),
            ));
            std::fs::create_dir_all(&live.dir)
                .with_context(|| format!("create the report folder {}", live.dir.display()))?;
            live.refresh().await;
            Some(live)
        }
        None => None,
    };
    let (committed_tx, committed_rx) = watch::channel(before.pairs);
    let refresher = live
        .clone()
        .map(|live| tokio::spawn(live.follow(committed_rx)));

    let on_signal = stop.clone();
    crate::on_stop_signals(move |signal| {
        on_signal.request(match signal {
            crate::StopSignal::Interrupt => StopReason::Interrupt,
            crate::StopSignal::Terminate => StopReason::Terminate,
        })
    });
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let reporter = tokio::spawn(report(
        spec.clone(),
        console.clone(),
        events_rx,
        appenders,
        before,
        committed_tx,
    ));
    let played = run_match(spec.clone(), store.clone(), run, events_tx, cancel_rx).await;
    let last_block = reporter.await.unwrap_or(None);
    let summary = match played {
        Ok(summary) => summary,
        Err(err) => {
            // The run stops with an error (an engine that cannot start, the store): the
            // exports still end as the store holds the run, with the summary of a stopped run.
            let totals = store.totals(run).await?;
            let stopped = Summary {
                totals,
                sprt: None,
                judged: None,
                verdict: Verdict::Fault(err.to_string()),
                uncounted: Vec::new(),
            };
            let pgn = exports.iter().find(|(e, _)| *e == Export::Pgn);
            let record = outputs::summary_json(
                &spec,
                run,
                seed,
                &stopped,
                None,
                pgn.map(|(_, path)| path.as_path()),
            );
            let json = serde_json::to_string(&record).context("write the summary")?;
            for line in write_exports(&store, run, &exports, &[], &json).await? {
                console.info(&line);
            }
            return Err(err.into());
        }
    };
    // The last refresh shows the final totals and the verdict, whatever the pace allowed.
    if let (Some(live), Some(refresher)) = (&live, refresher) {
        refresher.abort();
        let _ = refresher.await;
        live.refresh().await;
        console.info(&format!(
            "Report: {}",
            live.dir.join("index.html").display()
        ));
    }

    // The rating block for the final totals, unless the last pair already printed it; a
    // tournament ends with its standings, the pairings' results and the crosstable.
    let standings = if spec.is_tournament() {
        let standings = tournament_standings(&spec, &store.pairing_totals(run).await?)?;
        if last_block != Some(summary.totals.pairs) {
            console.standings_block(&standings);
        }
        for line in standings::standings_notes(&standings)
            .iter()
            .chain(&standings::pairing_lines(&standings))
            .chain(&standings::crosstable_lines(&standings))
        {
            console.info(line);
        }
        Some(standings)
    } else {
        if last_block != Some(summary.totals.pairs) {
            console.rating_block(&spec, &summary.totals, summary.sprt);
        }
        None
    };
    let names: Vec<&str> = spec.players.iter().map(|p| p.name.as_str()).collect();
    for line in lines::player_lines(&store, run, &names, &summary.uncounted).await? {
        console.result(&line);
    }
    console.result("Finished match");
    if let Some(bar) = &console.bar {
        bar.finish_and_clear();
    }

    let pgn_path = exports
        .iter()
        .find(|(e, _)| *e == Export::Pgn)
        .map(|(_, p)| p.clone());
    let summary_record =
        outputs::summary_json(&spec, run, seed, &summary, standings, pgn_path.as_deref());
    let json = serde_json::to_string(&summary_record).context("write the summary")?;
    for line in write_exports(&store, run, &exports, &summary.uncounted, &json).await? {
        console.info(&line);
    }
    if spec.paired && !spec.is_tournament() {
        console.info(&lines::pentanomial_line(&summary.totals));
    }
    if let Some(judged) = &summary.judged {
        console.info(&lines::judged_line(judged, &summary.totals, spec.paired));
    }
    if args.json {
        console.stdout(&json);
    }
    let code = match &summary.verdict {
        Verdict::Interrupted => {
            let reason = match stop.reason() {
                StopReason::Terminate => "terminated",
                StopReason::StdoutClosed => "stdout was closed",
                _ => "interrupted",
            };
            console.info(&format!(
                "Stopped ({reason}): resume with `arbiter match --resume {run} --store {location}`"
            ));
            match stop.reason() {
                StopReason::None => StopReason::Interrupt as u8,
                reason => reason as u8,
            }
        }
        Verdict::Fault(reason) => {
            console.info(&format!(
                "Stopped after an engine fault (recover is off: give -recover, or recover = true, \
                 to restart the engine and go on): {reason}"
            ));
            lifecycle::exit_status(&summary.verdict, spec.sprt.is_some())
        }
        verdict => lifecycle::exit_status(verdict, spec.sprt.is_some()),
    };
    let finished = format!("Finished run {run}: {}", summary.verdict.as_str());
    console.info(&finished);
    if let Some(log) = &spec.log {
        log.message(Level::Info, &finished);
        log.flush();
    }
    Ok(ExitCode::from(code))
}

/// Rebuilds every export from the store as the run ends, however it ends: the stored games,
/// then the `uncounted` ones (played, their pair incomplete), and in the JSON lines the summary.
/// Returns a line per export for the console.
pub(crate) async fn write_exports(
    store: &Store,
    run: RunId,
    exports: &[(Export, PathBuf)],
    uncounted: &[arbiter_store::GameRow],
    summary: &str,
) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    for (export, path) in exports {
        let trailer = (*export == Export::JsonLines).then_some(summary);
        let count = export
            .rebuild(store, run, path, uncounted, trailer)
            .await
            .with_context(|| format!("write {}", path.display()))?;
        let not_counted = match uncounted.len() {
            0 => String::new(),
            n => format!(", {n} of them not counted: their pair was not complete"),
        };
        let what = match export {
            Export::Pgn => format!(
                "PGN: {} ({count} games, exported from the store{not_counted})",
                path.display()
            ),
            Export::Epd => format!(
                "EPD: {} ({count} final positions{not_counted})",
                path.display()
            ),
            Export::JsonLines => format!(
                "JSON: {} ({count} games and the summary{not_counted})",
                path.display()
            ),
        };
        lines.push(what);
    }
    Ok(lines)
}

/// The configuration's report settings; unpaired games have no pentanomial statistics to show.
fn report_settings(config: &RunConfig, spec: &MatchSpec) -> anyhow::Result<ReportSettings> {
    let settings = config.report_settings()?;
    Ok(ReportSettings {
        penta: settings.penta && spec.paired,
        rating_in_pairs: settings.rating_in_pairs && spec.paired,
        ..settings
    })
}

/// fastchess's parenthesis after `Results of A vs B`: time control, threads, hash and book,
/// each as `first - second` when the engines differ.
fn matchup_details(spec: &MatchSpec, config: &RunConfig) -> String {
    let both = |of: &dyn Fn(usize) -> String| {
        let (first, second) = (of(0), of(1));
        if first == second {
            first
        } else {
            format!("{first} - {second}")
        }
    };
    let limit = |i: usize| {
        let tc = &spec.time_controls[i];
        match (
            tc.clock.is_some() || tc.movetime.is_some(),
            tc.nodes,
            tc.depth,
        ) {
            (true, _, _) => tc.pgn_tag(),
            (false, Some(nodes), _) => format!("{nodes} nodes"),
            (false, None, Some(depth)) => format!("{depth} plies"),
            (false, None, None) => "-".to_owned(),
        }
    };
    let option = |i: usize, name: &str, unit: &str| match &spec.players[i].kind {
        PlayerKind::Uci(process) => process
            .options
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or_else(|| "NULL".to_owned(), |(_, v)| format!("{v}{unit}")),
        PlayerKind::Builtin(builtin) if name == "Hash" => format!("{}{unit}", builtin.hash_mb),
        PlayerKind::Builtin(_) => format!("1{unit}"),
    };
    let mut details = format!(
        "{}, {}, {}",
        both(&limit),
        both(&|i| option(i, "Threads", "t")),
        both(&|i| option(i, "Hash", "MB"))
    );
    if let Some(name) = config.openings.file.as_ref().and_then(|f| f.file_name()) {
        details.push_str(&format!(", {}", name.to_string_lossy()));
    }
    details
}

/// The progress bar's note in a tournament: who leads, by how much, in `width` columns.
fn leader_line(standings: &Standings, width: usize) -> String {
    standings
        .engines
        .first()
        .filter(|top| top.games > 0)
        .map_or_else(String::new, |top| {
            let name = lines::printable_name(&top.name);
            let lead = format!(
                "leader {name} {:+.0} +/- {:.0} Elo",
                top.elo, top.half_width
            );
            let forms = [
                format!("{lead} over {} games", top.games),
                lead,
                format!("leader {name}"),
            ];
            lines::fit(forms, width)
        })
}

/// The terminal's width in columns, when stderr is one.
fn terminal_width() -> Option<usize> {
    console::Term::stderr()
        .size_checked()
        .map(|(_, columns)| usize::from(columns))
}

/// The bar's own width for a terminal of `columns`: 30 cells from 120 columns, fewer below, so
/// that the numbers and the note keep room.
fn bar_cells(columns: usize) -> usize {
    (columns / 4).clamp(10, 30)
}

/// The bar's style for a terminal of `columns`.
fn bar_style(columns: usize) -> ProgressStyle {
    let cells = bar_cells(columns);
    ProgressStyle::with_template(&format!("{{bar:{cells}}} {{pos}}/{{len}} pairs {{msg}}"))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// The columns left for the note after the bar, its counts and ` pairs `, one short of the
/// terminal's width (a line that fills the last column wraps on some terminals). Read at every
/// update, and the bar resized with it, so a resized terminal gets a line that fits at the
/// next pair.
fn note_width(bar: &ProgressBar) -> usize {
    let Some(columns) = terminal_width() else {
        return usize::MAX;
    };
    bar.set_style(bar_style(columns));
    let digits = |n: u64| n.to_string().len();
    let used = bar_cells(columns)
        + 1
        + digits(bar.position())
        + 1
        + digits(bar.length().unwrap_or(0))
        + " pairs ".len();
    columns.saturating_sub(used + 1)
}

/// A tournament's standings from its pairings' stored totals (index = pairing).
fn tournament_standings(spec: &MatchSpec, totals: &[Totals]) -> anyhow::Result<Standings> {
    let names: Vec<String> = spec.players.iter().map(|p| p.name.clone()).collect();
    let results: Vec<PairingResult> = spec
        .pairings
        .iter()
        .zip(totals)
        .map(|(&[first, second], &totals)| PairingResult {
            first,
            second,
            totals,
        })
        .collect();
    Ok(standings::standings(&names, &results, spec.paired)?)
}

fn progress_bar(pairs: u64, done: u64) -> ProgressBar {
    let bar = ProgressBar::new(pairs);
    bar.set_position(done);
    bar.set_style(bar_style(terminal_width().unwrap_or(120)));
    bar
}

/// An export file that committed pairs are appended to while the run plays.
struct Appender {
    export: Export,
    path: PathBuf,
    file: File,
    /// A write failed and was warned about: the file is rebuilt at the end, the games go on.
    failed: bool,
}

impl Appender {
    fn append(&mut self, games: &[arbiter_store::GameRow], console: &Console) {
        if self.failed {
            return;
        }
        let mut text = Vec::new();
        let written = games
            .iter()
            .try_for_each(|game| self.export.write_game(&mut text, game))
            .and_then(|()| self.file.write_all(&text))
            .and_then(|()| self.file.flush());
        if let Err(err) = written {
            self.failed = true;
            console.info(&format!(
                "warning: {} is not kept current ({err}); it is rebuilt from the store when \
                 the run ends",
                self.path.display()
            ));
        }
    }
}

/// Consumes the match's events: cutechess's lines, the progress bar, the exports' games of each
/// committed pair. Returns the number of pairs behind the last rating block it printed.
async fn report(
    spec: Arc<MatchSpec>,
    console: Arc<Console>,
    mut events: mpsc::UnboundedReceiver<Event>,
    mut appenders: Vec<Appender>,
    mut committed: Totals,
    pairs_committed: watch::Sender<u64>,
) -> Option<u64> {
    let total_games = spec.games;
    let (first, second) = (spec.players[0].name.as_str(), spec.players[1].name.as_str());
    // The games finished but not yet committed with their pair, by pair: the first engine's
    // half points of each, which count in the `Score of` line (cutechess's is per game).
    let mut pending: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut last_block = None;
    let report = console.report;
    // Games finished so far, and the count (games or pairs, see `rating_in_pairs`) at the last
    // rating block: blocks come every `ratinginterval` of them, at the first commit after a
    // multiple.
    let mut games_finished = committed.games();
    let rating_count = |games: u64, totals: &Totals| match report.rating_in_pairs {
        true => totals.pairs,
        false => games,
    };
    let mut count_at_block = rating_count(games_finished, &committed);
    while let Some(event) = events.recv().await {
        match event {
            Event::GameStarted {
                number,
                white,
                black,
                ..
            } => {
                let line = lines::started_line(number, total_games, &white, &black);
                if let Some(log) = &spec.log {
                    log.message(Level::Info, &line);
                }
                console.result(&line)
            }
            Event::GameFinished {
                number,
                pair,
                record,
                ..
            } => {
                let line = lines::finished_line(number, &record);
                if let Some(log) = &spec.log {
                    log.message(Level::Info, &line);
                }
                console.result(&line);
                let first_color = if record.white == first {
                    Color::White
                } else {
                    Color::Black
                };
                pending
                    .entry(pair)
                    .or_default()
                    .push(record.half_points(first_color));
                games_finished += 1;
                // cutechess prints `Score of` lines for two engines only; a tournament's
                // results are its standings.
                let score_due = report.format == OutputFormat::Cutechess
                    && !spec.is_tournament()
                    && report.score_interval > 0
                    && games_finished.is_multiple_of(report.score_interval);
                if !score_due {
                    continue;
                }
                let (mut wins, mut losses, mut draws) =
                    (committed.wins, committed.losses, committed.draws);
                for half_points in pending.values().flatten() {
                    match half_points {
                        2 => wins += 1,
                        0 => losses += 1,
                        _ => draws += 1,
                    }
                }
                console.result(&lines::score_line(first, second, wins, losses, draws));
            }
            Event::PairCommitted {
                pair,
                record,
                totals,
                sprt,
                pairings,
                already_present,
            } => {
                committed = totals;
                pairs_committed.send_replace(totals.pairs);
                pending.remove(&pair);
                // A pair found already present was in the store, and so in the file, before.
                if !already_present {
                    for appender in &mut appenders {
                        appender.append(&record.games, &console);
                    }
                }
                let standings = pairings.and_then(|p| tournament_standings(&spec, &p).ok());
                if let Some(bar) = &console.bar {
                    bar.set_position(totals.pairs);
                    let width = note_width(bar);
                    let message = match &standings {
                        Some(standings) => leader_line(standings, width),
                        None => lines::progress_note(&totals, sprt, report.penta, width),
                    };
                    bar.set_message(message);
                }
                let count = rating_count(games_finished, &totals);
                if report.rating_block_due(count_at_block, count) {
                    match &standings {
                        Some(standings) => console.standings_block(standings),
                        None => console.rating_block(&spec, &totals, sprt),
                    }
                    count_at_block = count;
                    last_block = Some(totals.pairs);
                }
            }
            Event::Warning(text) => {
                if let Some(log) = &spec.log {
                    log.message(Level::Warn, &text);
                }
                console.info(&format!("warning: {text}"))
            }
        }
    }
    last_block
}

/// The shortest time between two refreshes of the live report.
const REPORT_INTERVAL: Duration = Duration::from_secs(5);

/// The run's report (`arbiter report`'s HTML, Markdown with SVG charts, and JSON), kept current
/// in a folder while the run plays. It is rebuilt from the store, never from the events, so it
/// shows exactly what `arbiter report` would show at that moment.
pub(crate) struct LiveReport {
    store: Arc<Store>,
    run: RunId,
    pub(crate) dir: PathBuf,
    /// Where a refresh that failed is said.
    warn: Box<dyn Fn(&str) + Send + Sync>,
    /// One writer at a time: a refresh cut short (at the end of the run) may still be writing
    /// on its blocking thread when the final one starts.
    writing: Arc<std::sync::Mutex<()>>,
    /// The last failure warned about, so that a folder that stays unwritable warns once, not
    /// at every refresh.
    last_failure: std::sync::Mutex<Option<String>>,
}

impl LiveReport {
    pub(crate) fn new(
        store: Arc<Store>,
        run: RunId,
        dir: PathBuf,
        warn: Box<dyn Fn(&str) + Send + Sync>,
    ) -> LiveReport {
        LiveReport {
            store,
            run,
            dir,
            warn,
            writing: Arc::default(),
            last_failure: std::sync::Mutex::default(),
        }
    }

    /// Refreshes the report after commits, off the game path: at most once per
    /// [`REPORT_INTERVAL`], and never more than a fifth of the time, so that a long run with a
    /// large store spends its cores on games rather than drawing. Ends when the run's events end.
    pub(crate) async fn follow(self: Arc<Self>, mut pairs_committed: watch::Receiver<u64>) {
        while pairs_committed.changed().await.is_ok() {
            let started = Instant::now();
            self.refresh().await;
            tokio::time::sleep(REPORT_INTERVAL.max(started.elapsed() * 4)).await;
        }
    }

    /// Rebuilds the report from the store; a failure is a warning.
    pub(crate) async fn refresh(&self) {
        let result = self.rebuild().await;
        let mut last = self
            .last_failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match result {
            Ok(()) => *last = None,
            Err(err) => {
                let text = format!("{err:#}");
                if last.as_deref() != Some(text.as_str()) {
                    (self.warn)(&format!(
                        "warning: the report in {} was not refreshed (the run goes on): {text}",
                        self.dir.display()
                    ));
                }
                *last = Some(text);
            }
        }
    }

    async fn rebuild(&self) -> anyhow::Result<()> {
        let data = RunData::load(&self.store, self.run).await?;
        let (dir, writing) = (self.dir.clone(), self.writing.clone());
        // Drawing the charts is CPU work: it runs on a blocking thread, not the runtime's.
        tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
            let _writer = writing
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let report = Report::build(&data)?;
            report
                .write(&dir, &Format::ALL)
                .with_context(|| format!("write into {}", dir.display()))?;
            Ok(())
        })
        .await
        .context("the report's thread")?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_records::standings::{standings, PairingResult};
    use arbiter_store::Totals;

    /// Issue 18, item 15: before any game the progress bar named a leader "+0 +/- 0 Elo over
    /// 0 games"; nobody leads then.
    #[test]
    fn no_leader_before_any_game() {
        let names = vec!["A".to_owned(), "B".to_owned()];
        let pairing = |totals| PairingResult {
            first: 0,
            second: 1,
            totals,
        };
        let none = standings(&names, &[pairing(Totals::default())], true).unwrap();
        assert_eq!(leader_line(&none, 120), "");
        let played = Totals {
            pairs: 2,
            wins: 3,
            draws: 1,
            losses: 0,
            pentanomial: [0, 0, 0, 1, 1],
        };
        let some = standings(&names, &[pairing(played)], true).unwrap();
        assert!(
            leader_line(&some, 120).starts_with("leader A +"),
            "{}",
            leader_line(&some, 120)
        );
    }
}
