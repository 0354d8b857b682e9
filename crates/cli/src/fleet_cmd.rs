//! `arbiter submit`, `arbiter runs`, `arbiter stop` and `arbiter worker`: runs queued in a
//! database and played by workers on many machines ([`arbiter_runner::fleet`]).
//!
//! Wiring only: the runner's fleet module queues and plays, the store leases and counts, the
//! statistics crate judges. These parse arguments, call them and print.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use arbiter_records::text;
use arbiter_runner::config::{cutechess, RunConfig};
use arbiter_runner::coordinator::Coordinator;
use arbiter_runner::fleet::{self, SubmitOptions, WorkerEnd, WorkerEvent, WorkerOptions};
use arbiter_runner::lifecycle::{self, lineage};
use arbiter_runner::lines;
use arbiter_runner::outputs::{self, Export};
use arbiter_runner::play::Event;
use arbiter_runner::sinks::{Summary, Verdict};
use arbiter_server::HttpCoordinator;
use arbiter_stats::SprtState;
use arbiter_store::{Location, QueuedRun, RunId, RunOutcome, RunState, Store, Submitted};
use arbiter_tune::spsa_fleet::{self, SpsaTuner};
use arbiter_tune::spsa_run::SpsaConfig;

use crate::match_cmd::LiveReport;
use tokio::sync::{mpsc, watch};

#[derive(clap::Args)]
pub struct SubmitArgs {
    /// The run's TOML configuration; or give cutechess flags after `--`.
    config: Option<PathBuf>,
    #[command(flatten)]
    fleet: FleetArgs,
    /// Runs of higher priority are played first.
    #[arg(long, default_value_t = 0)]
    priority: i64,
    /// At most this many workers on the run at once.
    #[arg(long)]
    workers: Option<u32>,
    /// Pairs per batch (default: about four minutes of games at the run's time control).
    #[arg(long)]
    batch_pairs: Option<u64>,
    /// Store the UCI engines' binaries with the fleet (once per binary, by its SHA-256), so
    /// that workers that lack them fetch them.
    #[arg(long)]
    upload_engines: bool,
    /// The run in cutechess's grammar: `arbiter submit --db URL -- -engine cmd=... -each ...`.
    #[arg(last = true, allow_hyphen_values = true)]
    cutechess: Vec<String>,
}

#[derive(clap::Args)]
pub struct RunsArgs {
    #[command(flatten)]
    fleet: FleetArgs,
}

#[derive(clap::Args)]
pub struct StopArgs {
    /// The run, by id or name.
    run: String,
    #[command(flatten)]
    fleet: FleetArgs,
}

/// Where a user's command reaches the fleet: its database, or its server with a user's token.
#[derive(clap::Args)]
pub struct FleetArgs {
    /// The database of the fleet (`postgres://...`; an SQLite file serves workers on one
    /// machine); or --server.
    #[arg(long, required_unless_present = "server", conflicts_with = "server")]
    db: Option<String>,
    /// The fleet's server (`arbiter serve`), with --token-file.
    #[arg(long, requires = "token_file")]
    server: Option<String>,
    /// The file holding a user's token (`arbiter admin token create NAME --scope user`).
    #[arg(long, requires = "server")]
    token_file: Option<PathBuf>,
}

/// The fleet a user's command reaches.
enum Fleet {
    Database(Store),
    Server(HttpCoordinator),
}

impl FleetArgs {
    async fn open(&self) -> anyhow::Result<Fleet> {
        match (&self.db, &self.server, &self.token_file) {
            (Some(db), _, _) => Ok(Fleet::Database(open(db).await?)),
            (None, Some(server), Some(file)) => Ok(Fleet::Server(server_client(server, file)?)),
            _ => bail!("give --db URL, or --server URL with --token-file FILE"),
        }
    }
}

/// The client of `server` with the token in `token_file`.
fn server_client(server: &str, token_file: &std::path::Path) -> anyhow::Result<HttpCoordinator> {
    let token = std::fs::read_to_string(token_file)
        .with_context(|| format!("read the token file {}", token_file.display()))?;
    HttpCoordinator::new(server, &token).map_err(|why| anyhow::anyhow!("--server {server}: {why}"))
}

impl Fleet {
    async fn queued_runs(&self) -> anyhow::Result<Vec<QueuedRun>> {
        Ok(match self {
            Fleet::Database(store) => store.queued_runs().await?,
            Fleet::Server(server) => server.runs().await?,
        })
    }

    async fn close(self) {
        if let Fleet::Database(store) = self {
            store.close().await;
        }
    }
}

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The database of the fleet (or --server).
    #[arg(long, required_unless_present = "server", conflicts_with = "server")]
    db: Option<String>,
    /// The fleet's server (`arbiter serve`), for a worker without database credentials.
    #[arg(long, requires = "token_file")]
    server: Option<String>,
    /// The file holding the worker's token (`arbiter admin token create NAME --scope worker`).
    #[arg(long, requires = "server")]
    token_file: Option<PathBuf>,
    /// Games at once (default: the machine's cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// The worker's name: its identity in the database (default: HOST-PID). A worker restarted
    /// under its name gets its batch back.
    #[arg(long)]
    name: Option<String>,
    /// Seconds a batch is leased for; a heartbeat renews it every third of that.
    #[arg(long, default_value_t = 60.0)]
    lease: f64,
    /// Stop when there is nothing to play (by default the worker waits for work).
    #[arg(long)]
    exit_when_idle: bool,
    /// Where runs' stored files (books) are written (default: a temporary folder).
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// Where engines fetched from the fleet (`arbiter submit --upload-engines`) are cached by
    /// hash (default: $XDG_CACHE_HOME/arbiter/artifacts, else ~/.cache/arbiter/artifacts).
    #[arg(long)]
    artifacts: Option<PathBuf>,
    /// Where engines built from source (`[engine.build]`) are built and kept, one folder per
    /// recipe (default: $XDG_CACHE_HOME/arbiter/builds, else ~/.cache/arbiter/builds).
    #[arg(long)]
    builds: Option<PathBuf>,
    /// The SQLite file where played batches wait until the fleet confirms them, and from which
    /// a restarted worker submits them (default with --server:
    /// $XDG_STATE_HOME/arbiter/spool-SERVER-NAME.db, else under ~/.local/state/arbiter/; with
    /// --db, none).
    #[arg(long)]
    spool: Option<PathBuf>,
}

/// The spool of a worker named `name` on `server` when none is given: in the user's state
/// folder, one file per server and worker name, so that a worker restarted under its name finds
/// its own.
fn default_spool(server: &str, name: &str) -> PathBuf {
    let folder = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("arbiter");
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let server = server.split("://").nth(1).unwrap_or(server);
    folder.join(format!(
        "spool-{}-{}.db",
        safe(server.trim_end_matches('/')),
        safe(name)
    ))
}

/// The user's cache of engines fetched as artifacts.
fn default_artifacts() -> PathBuf {
    user_cache().join("arbiter/artifacts")
}

/// The user's cache of engines built from source.
fn default_builds() -> PathBuf {
    user_cache().join("arbiter/builds")
}

/// `$XDG_CACHE_HOME`, else `~/.cache`, else the current folder.
fn user_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("."))
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(arbiter_runner::config::MAX_CONCURRENCY + 512)
        .build()
        .context("start the async runtime")
}

pub(crate) async fn open(db: &str) -> anyhow::Result<Store> {
    Store::open(&Location::parse(db))
        .await
        .with_context(|| format!("open the database {db}"))
}

pub fn submit(args: &SubmitArgs) -> anyhow::Result<ExitCode> {
    let (config, base, tuning) = match (&args.config, args.cutechess.is_empty()) {
        (Some(path), true) => {
            let base = path.parent().map(PathBuf::from).unwrap_or_default();
            if is_tuning_config(path) {
                // A tuning configuration: the match its steps play, and the run's SPSA.
                let spsa = SpsaConfig::load(path)?;
                let (config, tuning) = spsa_fleet::tuning_submission(&spsa, &base)?;
                (config, base, Some(tuning))
            } else {
                (RunConfig::load(path)?, base, None)
            }
        }
        (None, false) => {
            let parsed = cutechess::parse(&args.cutechess)?;
            for warning in &parsed.warnings {
                let _ = writeln!(std::io::stderr(), "warning: {warning}");
            }
            (parsed.config, PathBuf::new(), None)
        }
        (Some(_), false) => {
            bail!("give a configuration file or cutechess flags after --, not both")
        }
        (None, true) => bail!("give a configuration file, or cutechess flags after --"),
    };
    let options = SubmitOptions {
        priority: args.priority,
        worker_limit: args.workers,
        batch_pairs: args.batch_pairs,
        writes_exports: false,
        upload_engines: args.upload_engines,
    };
    runtime()?.block_on(async {
        let queued = match (args.fleet.open().await?, &tuning) {
            (Fleet::Database(store), None) => {
                let queued = fleet::submit(&store, config, &base, &options).await?;
                store.close().await;
                queued
            }
            (Fleet::Database(store), Some(tuning)) => {
                let queued = fleet::submit_tuning(&store, config, &base, &options, tuning).await?;
                store.close().await;
                queued
            }
            (Fleet::Server(server), tuning) => {
                let submission =
                    fleet::submission(&config, &base, &options, tuning.as_ref()).await?;
                if options.upload_engines {
                    let checked = config.check()?;
                    for (_, path) in fleet::engine_binaries(&checked, &base)? {
                        let bytes = std::fs::read(&path)
                            .with_context(|| format!("read {}", path.display()))?;
                        server.put_artifact(bytes).await?;
                    }
                }
                server.submit_run(&submission).await?
            }
        };
        for warning in &queued.warnings {
            let _ = writeln!(std::io::stderr(), "warning: {warning}");
        }
        let batches = queued.units.div_ceil(queued.batch_units);
        let kind = if tuning.is_some() {
            " (SPSA: a batch is a step)"
        } else {
            ""
        };
        outln!(
            "queued run {} ({}): {} pairs in {batches} batches of {}{kind}, seed {}",
            queued.run,
            queued.name,
            queued.units,
            queued.batch_units,
            queued.seed
        )?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Whether the TOML file at `path` is a tuning configuration (it has an `[spsa]` section).
/// A file that cannot be read or parsed is not: reading it as a match names its error.
fn is_tuning_config(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|table| table.contains_key("spsa"))
}

pub fn runs(args: &RunsArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let fleet = args.fleet.open().await?;
        let queued = fleet.queued_runs().await?;
        fleet.close().await;
        outln!(
            "{:>4}  {:<28} {:<12} {:>4} {:>13} {:>16} {:>7} {:>15} {:>7}",
            "ID",
            "NAME",
            "STATE",
            "PRIO",
            "GAMES",
            "ELO",
            "LLR",
            "BATCHES",
            "WORKERS"
        )?;
        for run in &queued {
            outln!("{}", run_row(run))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// One line of `arbiter runs`: the prefix's games, Elo and LLR (what the verdict is judged
/// on), batches done/leased/open.
fn run_row(queued: &QueuedRun) -> String {
    let run = &queued.run;
    let b = queued.batches;
    let progress = fleet::progress(queued);
    let (elo, llr) = if progress.tuning {
        // A tuning run has no Elo of its own: its games move the values (`arbiter report`).
        ("spsa".to_owned(), "-".to_owned())
    } else {
        (
            progress.elo.map_or_else(
                || "-".to_owned(),
                |(elo, half)| format!("{elo:+.1} +/- {half:.1}"),
            ),
            progress
                .sprt
                .map_or_else(|| "-".to_owned(), |sprt| format!("{:.2}", sprt.llr)),
        )
    };
    format!(
        "{:>4}  {:<28} {:<12} {:>4} {:>13} {:>16} {:>7} {:>15} {:>7}",
        run.id.get(),
        truncate(&run.spec.name, 28),
        progress.state,
        queued.priority,
        format!("{}/{}", progress.games, progress.games_planned),
        elo,
        llr,
        format!("{}/{}/{}", b.done, b.leased + b.expired, b.open),
        workers_column(queued),
    )
}

/// Workers on the run, and its limit.
fn workers_column(queued: &QueuedRun) -> String {
    match queued.worker_limit {
        Some(limit) => format!("{}/{limit}", queued.batches.workers),
        None => queued.batches.workers.to_string(),
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let kept: String = text.chars().take(width - 1).collect();
        format!("{kept}…")
    }
}

pub fn stop(args: &StopArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let fleet = args.fleet.open().await?;
        let found = match &fleet {
            Fleet::Database(store) => match args.run.parse::<i64>() {
                Ok(id) => Some(store.run(RunId::new(id)).await?),
                Err(_) => store.find_run_by_name(&args.run).await?,
            },
            Fleet::Server(server) => server
                .runs()
                .await?
                .into_iter()
                .map(|queued| queued.run)
                .find(|run| run.id.to_string() == args.run || run.spec.name == args.run),
        };
        let Some(found) = found else {
            let location = match &fleet {
                Fleet::Database(store) => store.location().to_owned(),
                Fleet::Server(server) => server.location(),
            };
            bail!("no run {:?} in {location}", args.run);
        };
        if let RunState::Finished { verdict } = found.state {
            bail!(
                "run {} ({}) is already finished: {verdict}",
                found.id,
                found.spec.name
            );
        }
        match &fleet {
            Fleet::Database(store) => store.finish_run(found.id, RunOutcome::Stopped).await?,
            Fleet::Server(server) => {
                if let RunState::Finished { verdict } = server.stop(found.id).await? {
                    if verdict != RunOutcome::Stopped {
                        bail!(
                            "run {} ({}) finished before the stop: {verdict}",
                            found.id,
                            found.spec.name
                        );
                    }
                }
            }
        }
        fleet.close().await;
        outln!(
            "stopped run {} ({}); its workers drop their batches at their next heartbeat",
            found.id,
            found.spec.name
        )?;
        Ok(ExitCode::SUCCESS)
    })
}

pub fn worker(args: &WorkerArgs) -> anyhow::Result<ExitCode> {
    if !(args.lease.is_finite() && args.lease >= 3.0) {
        bail!("--lease {}: expected at least 3 seconds", args.lease);
    }
    let concurrency = args
        .concurrency
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let scratch_dir = match &args.scratch {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("create a scratch folder")?),
    };
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-{}", fleet::hostname(), std::process::id()));
    let options = WorkerOptions {
        name: name.clone(),
        concurrency: concurrency.max(1),
        lease: Duration::from_secs_f64(args.lease),
        // A lapsed lease is worth a look soon after it lapses.
        idle_poll: Duration::from_secs_f64((args.lease / 3.0).min(5.0)),
        exit_when_idle: args.exit_when_idle,
        scratch: match (&args.scratch, &scratch_dir) {
            (Some(path), _) => path.clone(),
            (None, Some(dir)) => dir.path().to_owned(),
            (None, None) => PathBuf::from("."),
        },
        run: None,
        // On the database the tuner's update runs in the submit's transaction; on the server
        // the server's tuner makes it from what the batch played.
        tuner: Some(Arc::new(SpsaTuner) as Arc<dyn fleet::Tuner>),
        artifacts: args.artifacts.clone().unwrap_or_else(default_artifacts),
        builds: args.builds.clone().unwrap_or_else(default_builds),
        spool: match (&args.spool, &args.server) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(server)) => Some(default_spool(server, &name)),
            (None, None) => None,
        },
    };
    let code = runtime()?.block_on(async {
        let store: Arc<dyn Coordinator> = match (&args.db, &args.server, &args.token_file) {
            (Some(db), _, _) => Arc::new(open(db).await?),
            (None, Some(server), Some(file)) => Arc::new(server_client(server, file)?),
            _ => bail!("arbiter worker needs --db URL, or --server URL with --token-file FILE"),
        };
        let (stop_tx, stop_rx) = watch::channel(false);
        crate::on_stop_signals(move |_| {
            let _ = stop_tx.send(true);
        });
        let (events_tx, mut events_rx) = mpsc::unbounded_channel();
        let printer = tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                if let Some(line) = event_line(&event) {
                    let _ = writeln!(std::io::stderr(), "{line}");
                }
            }
        });
        let ended = fleet::work(store.clone(), &options, &events_tx, stop_rx).await;
        drop(events_tx);
        let _ = printer.await;
        let end = ended?;
        let _ = writeln!(
            std::io::stderr(),
            "worker {}: {}",
            options.name,
            match end {
                WorkerEnd::Idle => "nothing left to play",
                WorkerEnd::Stopped => "stopped",
            }
        );
        anyhow::Ok(match end {
            WorkerEnd::Idle => ExitCode::SUCCESS,
            // As `arbiter match` stopped by a signal: the status a service manager expects.
            WorkerEnd::Stopped => ExitCode::from(143),
        })
    })?;
    drop(scratch_dir);
    Ok(code)
}

fn event_line(event: &WorkerEvent) -> Option<String> {
    Some(match event {
        WorkerEvent::Registered(id) => format!("worker registered as {id}"),
        WorkerEvent::Spooled { batches, spool } => {
            format!("{batches} played batch(es) waiting in the spool {spool}: submitting them")
        }
        WorkerEvent::Claimed(name, lease) => format!(
            "batch {} of run {} ({name}): units {} to {}{}",
            lease.sequence,
            lease.run,
            lease.first_unit,
            lease.first_unit + lease.units - 1,
            match lease.claims {
                0 | 1 => String::new(),
                n => format!(" (claim {n}: an earlier lease lapsed)"),
            }
        ),
        WorkerEvent::Refused { run, reason } => format!("run {run} refused: {reason}"),
        WorkerEvent::Submitted(lease, submitted) => {
            let what = match submitted {
                Submitted::Counted { prefix, verdict } => format!(
                    "counted; the verdict's prefix holds {} units{}",
                    prefix.units,
                    verdict.map_or_else(String::new, |v| format!("; run finished: {v}"))
                ),
                Submitted::Stepped { step, verdict } => format!(
                    "counted as step {step}{}",
                    verdict.map_or_else(String::new, |v| format!("; run finished: {v}"))
                ),
                Submitted::AlreadyCounted => "already counted (another copy came first)".into(),
                Submitted::RunClosed(verdict) => {
                    format!("not counted: the run is over ({verdict})")
                }
            };
            format!("batch {} of run {}: {what}", lease.sequence, lease.run)
        }
        WorkerEvent::Dropped(lease, why) => {
            format!(
                "batch {} of run {} dropped: {why}",
                lease.sequence, lease.run
            )
        }
        WorkerEvent::Unreachable(what) => format!("unreachable: {what}"),
        WorkerEvent::Idle => return None,
        WorkerEvent::Game(Event::Warning(text)) => format!("warning: {text}"),
        WorkerEvent::Game(_) => return None,
    })
}

/// `arbiter match CONFIG --db URL`: the run queued in the database as `arbiter submit` queues
/// it (or its unfinished run joined again), and played here by a worker pinned to it while
/// `arbiter worker --db URL` on other machines joins it. Prints the games played here as
/// cutechess does, the rating block of the verdict's prefix after each batch counted, and at the
/// end the run's result, with `arbiter match`'s exit status.
pub async fn match_queued(
    config: RunConfig,
    base: PathBuf,
    db: &str,
    batch_pairs: Option<u64>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let checked = config.check()?;
    let games = checked.games;
    let penta = checked.report.penta;
    let concurrency = checked.concurrency;
    let store = Arc::new(open(db).await?);
    let (run, name, seed, how) = match lineage(&store, &config.run_name()).await?.unfinished() {
        Some(found) => {
            let queued = store.queued_runs().await?;
            if !queued.iter().any(|q| q.run.id == found.id) {
                bail!(
                    "run {} ({}) in {db} is a run played by one process, not queued for \
                     workers: continue it with `arbiter match CONFIG --store {db}`",
                    found.id,
                    found.spec.name
                );
            }
            let differences = lifecycle::edits(found, &config, db)?;
            if !differences.is_empty() {
                bail!(
                    "run {} ({}) in {db} was queued with another configuration (stored -> \
                     now):\n  {}\nGive the configuration another `name` to queue a new run",
                    found.id,
                    found.spec.name,
                    differences.join("\n  ")
                );
            }
            (
                found.id,
                found.spec.name.clone(),
                found.spec.seed,
                "joined again".to_owned(),
            )
        }
        None => {
            let options = SubmitOptions {
                batch_pairs,
                writes_exports: true,
                ..SubmitOptions::default()
            };
            let queued = fleet::submit(&store, config.clone(), &base, &options).await?;
            for warning in &queued.warnings {
                let _ = writeln!(std::io::stderr(), "warning: {warning}");
            }
            let how = format!(
                "queued in {} batches of {}",
                queued.units.div_ceil(queued.batch_units),
                queued.batch_units
            );
            (queued.run, queued.name, queued.seed, how)
        }
    };
    // The SPRT and its sample as the run judges them, from the checked text.
    let spec = checked.resolve(&base, seed)?;
    let _ = writeln!(
        std::io::stderr(),
        "Run {run} ({name}): {} vs {}, seed {seed}, {how}; other machines join it with \
         `arbiter worker --db URL`",
        spec.players[0].name,
        spec.players[1].name
    );
    // The exports and the report, written from the database: checked now (a path that cannot
    // be written fails before any game), the report refreshed as batches are counted, the
    // exports rebuilt whole when the run ends, with every worker's games.
    let (exports, moved) = lifecycle::prepare_exports(&store, run, &config, &base).await?;
    for warning in moved {
        let _ = writeln!(std::io::stderr(), "warning: {warning}");
    }
    let live = match &config.report {
        Some(dir) => {
            let live = Arc::new(LiveReport::new(
                store.clone(),
                run,
                base.join(dir),
                Box::new(|line| {
                    let _ = writeln!(std::io::stderr(), "{line}");
                }),
            ));
            std::fs::create_dir_all(&live.dir)
                .with_context(|| format!("create the report folder {}", live.dir.display()))?;
            live.refresh().await;
            Some(live)
        }
        None => None,
    };
    let (counted_tx, counted_rx) = watch::channel(0u64);
    let refresher = live
        .clone()
        .map(|live| tokio::spawn(live.follow(counted_rx)));
    let scratch = tempfile::tempdir().context("create a scratch folder")?;
    let options = WorkerOptions {
        name: format!("{}-match-{}", fleet::hostname(), std::process::id()),
        concurrency,
        lease: Duration::from_secs(60),
        idle_poll: Duration::from_secs(2),
        exit_when_idle: true,
        scratch: scratch.path().to_owned(),
        run: Some(run),
        tuner: None,
        // Its database is on hand: a batch not yet submitted is played again after a restart.
        spool: None,
        artifacts: default_artifacts(),
        builds: default_builds(),
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let signal = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let on_signal = signal.clone();
    crate::on_stop_signals(move |which| {
        on_signal.store(which.exit_status(), std::sync::atomic::Ordering::SeqCst);
        let _ = stop_tx.send(true);
    });
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let sprt_of = |totals: &arbiter_store::Totals| {
        arbiter_runner::sinks::sprt_status(&spec, totals)
            .ok()
            .flatten()
    };
    // The score and rating lines of the counted prefix, the sample the SPRT judges: cutechess's
    // block, printed when the prefix grows.
    let block = |prefix: &arbiter_store::Prefix| {
        let t = &prefix.totals;
        let score = (!spec.is_tournament()).then(|| {
            text::score_line(
                &spec.players[0].name,
                &spec.players[1].name,
                t.wins,
                t.losses,
                t.draws,
            )
        });
        score
            .into_iter()
            .chain(lines::rating_lines(t, sprt_of(t), penta))
            .collect::<Vec<_>>()
    };
    // The prefix's size at the last block printed: a block is not repeated, and none is printed
    // while another machine still holds the first batch (the prefix is then empty).
    let last_block = std::sync::atomic::AtomicU64::new(u64::MAX);
    let printer = async {
        while let Some(event) = events_rx.recv().await {
            match &event {
                WorkerEvent::Game(Event::GameStarted {
                    number,
                    white,
                    black,
                    ..
                }) => {
                    let _ = outln!("{}", lines::started_line(*number, games, white, black));
                }
                WorkerEvent::Game(Event::GameFinished { number, record, .. }) => {
                    let _ = outln!("{}", lines::finished_line(*number, record));
                }
                WorkerEvent::Submitted(_, Submitted::Counted { prefix, .. }) => {
                    let _ = counted_tx.send(prefix.units);
                    let printed = last_block.load(std::sync::atomic::Ordering::Relaxed);
                    if prefix.units > 0 && prefix.units != printed {
                        last_block.store(prefix.units, std::sync::atomic::Ordering::Relaxed);
                        for line in block(prefix) {
                            let _ = outln!("{line}");
                        }
                    }
                }
                _ => {}
            }
            if let Some(line) = event_line(&event) {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
        }
    };
    let worked = async {
        let ended = fleet::work(store.clone(), &options, &events_tx, stop_rx).await;
        drop(events_tx);
        ended
    };
    let (ended, ()) = tokio::join!(worked, printer);
    if let Some(refresher) = refresher {
        refresher.abort();
        let _ = refresher.await;
    }
    let end = ended?;
    let queued = store.queued_runs().await?;
    drop(scratch);
    let Some(queued) = queued.into_iter().find(|q| q.run.id == run) else {
        bail!("run {run} is gone from {db}");
    };
    let prefix = queued.prefix;
    let stopped = end == WorkerEnd::Stopped;
    if !stopped && last_block.load(std::sync::atomic::Ordering::Relaxed) != prefix.units {
        for line in block(&prefix) {
            outln!("{line}")?;
        }
    }
    // The report, the closing lines and the exports, however the run ended here: from the
    // database, with every worker's games.
    if let Some(live) = &live {
        live.refresh().await;
        let _ = writeln!(
            std::io::stderr(),
            "Report: {}",
            live.dir.join("index.html").display()
        );
    }
    let names: Vec<&str> = spec.players.iter().map(|p| p.name.as_str()).collect();
    if !stopped {
        for line in lines::player_lines(&store, run, &names, &[]).await? {
            outln!("{line}")?;
        }
        outln!("Finished match")?;
    }
    let verdict = match (stopped, queued.run.state) {
        (true, _) | (false, RunState::Running) => Verdict::Interrupted,
        (false, RunState::Finished { verdict }) => match verdict {
            RunOutcome::H1 => Verdict::Accepted(SprtState::H1),
            RunOutcome::H0 => Verdict::Accepted(SprtState::H0),
            RunOutcome::Complete => Verdict::Complete,
            RunOutcome::Interrupted => Verdict::Interrupted,
            RunOutcome::Stopped => Verdict::Fault(format!("run {run} was stopped")),
        },
    };
    let summary = Summary {
        totals: queued.totals,
        sprt: sprt_of(&prefix.totals),
        judged: (prefix.totals != queued.totals).then_some(prefix),
        verdict,
        uncounted: Vec::new(),
    };
    let pgn = exports
        .iter()
        .find(|(e, _)| *e == Export::Pgn)
        .map(|(_, p)| p.as_path());
    let record = outputs::summary_json(&spec, run, seed, &summary, None, pgn);
    let summary_json = serde_json::to_string(&record).context("write the summary")?;
    for line in crate::match_cmd::write_exports(&store, run, &exports, &[], &summary_json).await? {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    if json {
        outln!("{summary_json}")?;
    }
    if stopped {
        let code = signal.load(std::sync::atomic::Ordering::SeqCst).max(130);
        let _ = writeln!(
            std::io::stderr(),
            "Stopped: run {run} stays queued with its counted batches; rerun the command to \
             play it again here, or let `arbiter worker --db URL` finish it"
        );
        return Ok(ExitCode::from(code));
    }
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        lines::pentanomial_line(&prefix.totals)
    );
    if let Some(judged) = &summary.judged {
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            lines::judged_line(judged, &summary.totals, spec.paired)
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "Finished run {run}: {}",
        summary.verdict.as_str()
    );
    Ok(ExitCode::from(lifecycle::exit_status(
        &summary.verdict,
        spec.sprt.is_some(),
    )))
}
