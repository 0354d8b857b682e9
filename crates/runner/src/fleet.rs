//! The fleet: runs queued in a database for workers on many machines, and the worker that
//! plays them.
//!
//! [`submit`] checks a configuration as `arbiter match` would (the text only: the submitting
//! machine need not have the engines), decides the run's facts, seed and batch size, and
//! stores it queued ([`Store::queue_run`]) with the files it reads (the book, staunton's
//! parameter files), so that a worker needs nothing but the engines. [`work`] is the worker:
//! it claims the next batch, plays its units with the play step ([`play_with`]) into a sink
//! that keeps the pairs, extends its lease while it plays, and submits the batch, whose
//! transaction counts it once and judges the SPRT on the run's prefix. PostgreSQL is the queue
//! and the system of record; the machines' own schedulers (systemd, Kubernetes, Slurm) start
//! and restart workers. Nothing here keeps state a restart would lose: a killed worker's batch
//! is played again by whoever claims it after its lease.
//!
//! A tuning run is queued with [`submit_tuning`] and played by a worker given a [`Tuner`]:
//! each batch is a step, its players are the tuner's perturbation of the run's values at the
//! claim, and its submit applies the tuner's update in the store's transaction.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbiter_stats::{EloModel, Sample, Sprt, SprtState, SprtStatus};
use arbiter_store::{
    sha256_hex, Heartbeat, JudgedOn, Lease, PairRecord, Pairing, Queue, QueuedRun, RunFacts,
    RunFile, RunId, RunKind, RunOutcome, RunSpec, RunState, Spool, SpooledBatch, SprtFacts, Store,
    StoreError, Submitted, Totals, TuningSetup, TuningStep, WorkerId, WorkerInfo,
};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use crate::config::{absolute, CheckedConfig, ConfigError, Program, RunConfig};
use crate::coordinator::{Coordinator, RunSetup};
use crate::lifecycle::{fresh_seed, lineage};
use crate::play::{play_with, End, Event, Flow, MatchError, PairSink, PlayedPair, Players};
use crate::player::PlayerSpec;
use crate::spec::{pairs_in, MatchSpec, PlaySpec, SprtJudge};
use crate::tc::TimeControl;
use crate::{bench, build, signature};

/// What stops a submit or a worker.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Match(#[from] MatchError),
    #[error("read {}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Refused(String),
}

/// How a run is queued, beyond its configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmitOptions {
    /// Higher first; 0 by default.
    pub priority: i64,
    /// At most this many workers on the run at once.
    pub worker_limit: Option<u32>,
    /// Pairs per batch; by default what a batch of a few minutes holds at the run's time
    /// control ([`batch_pairs`]).
    pub batch_pairs: Option<u64>,
    /// The submitting process writes the configuration's exports and report itself, from the
    /// database, as it plays the run beside the workers (`arbiter match CONFIG --db URL`).
    #[serde(default)]
    pub writes_exports: bool,
    /// Store the UCI engines' binaries as artifacts, so that workers that lack them fetch them
    /// (`--upload-engines`).
    #[serde(default)]
    pub upload_engines: bool,
}

/// A run as [`submit`] queued it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmittedRun {
    pub run: RunId,
    pub name: String,
    pub seed: u64,
    /// Schedule units (pairs, or an unpaired run's units) and how many a batch holds.
    pub units: u64,
    pub batch_units: u64,
    /// What will not happen as written (exports a worker does not write, ...).
    pub warnings: Vec<String>,
}

/// Queues `config` (read from the folder `base`) in `store` for workers: a new run under the
/// configuration's name (or the next free `NAME-2` ...), never a resumed one.
pub fn submit<'a>(
    store: &'a Store,
    config: RunConfig,
    base: &'a Path,
    options: &'a SubmitOptions,
) -> BoxFuture<'a, Result<SubmittedRun, FleetError>> {
    Box::pin(submit_body(store, config, base, options, None))
}

/// A tuning run as the tuner queues it: the match its steps play is the configuration given
/// to [`submit_tuning`]; this is the rest, which only the tuner knows. A submitter sends it to
/// `arbiter serve` with the match ([`Submission::tuning`]), made on its machine, where the
/// tuner reads the parameters' files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuningSubmission {
    /// The name the run's lineage goes by (`NAME`, then `NAME-2` ...).
    pub run_name: String,
    /// The configuration text stored with the run (the tuner's own sections included), which
    /// the worker's [`Tuner::open`] reads back.
    pub config: String,
    /// The run's engines as stored (the tuned engine at the plus and the minus side).
    pub engines: Vec<String>,
    pub setup: TuningSetup,
    pub facts: RunFacts,
    /// Pairs a step plays at one perturbation: a batch is a step.
    pub step_pairs: u64,
}

/// Queues a tuning run: `config` is the match of the tuned engine against itself that its
/// steps play (checked and stored with its files as [`submit`] does), `tuning` the rest. Its
/// batches are its steps, played by workers with a [`Tuner`].
pub fn submit_tuning<'a>(
    store: &'a Store,
    config: RunConfig,
    base: &'a Path,
    options: &'a SubmitOptions,
    tuning: &'a TuningSubmission,
) -> BoxFuture<'a, Result<SubmittedRun, FleetError>> {
    Box::pin(submit_body(store, config, base, options, Some(tuning)))
}

async fn submit_body(
    store: &Store,
    config: RunConfig,
    base: &Path,
    options: &SubmitOptions,
    tuning: Option<&TuningSubmission>,
) -> Result<SubmittedRun, FleetError> {
    let config = pinned(&config, base, tuning).await?;
    let checked = config.check()?;
    let files = stored_files(&checked, base)?;
    let signatures = signatures_here(&checked, base);
    if options.upload_engines {
        for (_, path) in engine_binaries(&checked, base)? {
            let bytes = std::fs::read(&path).map_err(|source| FleetError::File {
                path: path.clone(),
                source,
            })?;
            store.put_artifact(&bytes).await?;
        }
    }
    queue_checked(store, config, checked, files, signatures, options, tuning).await
}

/// A run as a submitter sends it to `arbiter serve`: what [`submit`] reads on the submitting
/// machine (the configuration, the files it names, its engines' signatures where that machine
/// has their binaries), so that the server, which has none of them, queues the same run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// The configuration as stored (TOML, paths relative to the stored files).
    pub config: String,
    pub files: Vec<RunFile>,
    /// One per engine, in the configuration's order.
    pub signatures: Vec<Option<String>>,
    #[serde(default)]
    pub options: SubmitOptions,
    /// A tuning run's own part (its tuner's set-up), checked by the server's tuner before it is
    /// queued; none for a match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<TuningSubmission>,
}

/// [`Submission`] of `config` (with `tuning`, a tuning run's own part), read from the folder
/// `base` on this machine; a match's in-process stauntons pinned by their bench here
/// ([`bench::pin_builtin`]), so that workers whose arbiter plays another staunton are refused.
pub async fn submission(
    config: &RunConfig,
    base: &Path,
    options: &SubmitOptions,
    tuning: Option<&TuningSubmission>,
) -> Result<Submission, FleetError> {
    let config = &pinned(config, base, tuning).await?;
    let checked = config.check()?;
    let files = stored_files(&checked, base)?;
    let signatures = signatures_here(&checked, base);
    let stored = RunConfig {
        folder: None,
        ..config.clone()
    };
    Ok(Submission {
        config: stored.canonical(),
        files,
        signatures,
        options: options.clone(),
        tuning: tuning.cloned(),
    })
}

/// `config` as a run stores it: a match records which staunton plays it; a tuning run's sides
/// play other parameters at every step, so there is no one bench to record.
async fn pinned(
    config: &RunConfig,
    base: &Path,
    tuning: Option<&TuningSubmission>,
) -> Result<RunConfig, FleetError> {
    Ok(match tuning {
        None => bench::pin_builtin(config, base).await?,
        Some(_) => config.clone(),
    })
}

/// Queues a run a submitter sent (`arbiter serve`'s `POST /runs`): its configuration checked
/// from its text as [`submit`] checks it, the files it names present (and no others), a
/// signature (or none) per engine; a tuning run's set-up opened by `tuner`, as a worker will
/// open it (a server without a tuner refuses tuning runs). A refusal is
/// [`FleetError::Refused`] naming what is wrong.
pub fn submit_remote<'a>(
    store: &'a Store,
    submission: &'a Submission,
    tuner: Option<&'a dyn Tuner>,
) -> BoxFuture<'a, Result<SubmittedRun, FleetError>> {
    Box::pin(async move {
        let config = RunConfig::parse(&submission.config, "the submitted configuration")?;
        if let Some(tuning) = &submission.tuning {
            check_tuning(tuning, tuner)?;
        }
        let checked = config.check()?;
        let named: Vec<String> = file_names(&checked)
            .iter()
            .map(|name| name.display().to_string())
            .collect();
        for name in &named {
            if !submission.files.iter().any(|file| &file.name == name) {
                return Err(FleetError::Refused(format!(
                    "files: the configuration reads {name:?}, which was not sent with it"
                )));
            }
        }
        if let Some(extra) = submission
            .files
            .iter()
            .find(|file| !named.contains(&file.name))
        {
            return Err(FleetError::Refused(format!(
                "files: {:?} was sent, but the configuration does not read it",
                extra.name
            )));
        }
        if submission.signatures.len() != checked.engines.len() {
            return Err(FleetError::Refused(format!(
                "signatures: {} given for {} engines",
                submission.signatures.len(),
                checked.engines.len()
            )));
        }
        queue_checked(
            store,
            config,
            checked,
            submission.files.clone(),
            submission.signatures.clone(),
            &SubmitOptions {
                writes_exports: false,
                ..submission.options.clone()
            },
            submission.tuning.as_ref(),
        )
        .await
    })
}

/// Whether a tuning run sent to the server is one its workers can open: its configuration and
/// set-up read by `tuner` as a worker reads them, two sides, and steps of at least one pair.
fn check_tuning(tuning: &TuningSubmission, tuner: Option<&dyn Tuner>) -> Result<(), FleetError> {
    let Some(tuner) = tuner else {
        return Err(FleetError::Refused(format!(
            "tuning: this server has no tuner for {} runs",
            tuning.setup.method.as_str()
        )));
    };
    if tuning.engines.len() != 2 {
        return Err(FleetError::Refused(format!(
            "tuning.engines: {} named, expected the tuned engine's two sides",
            tuning.engines.len()
        )));
    }
    if tuning.step_pairs == 0 {
        return Err(FleetError::Refused(
            "tuning.step_pairs: a step plays at least one pair".to_owned(),
        ));
    }
    tuner
        .open(&tuning.config, "the submitted tuning run", &tuning.setup, 0)
        .map(drop)
        .map_err(|why| FleetError::Refused(format!("tuning: {why}")))
}

/// The rest of a submit, the same wherever the files were read: the run's seed, name, batch
/// size and facts, queued with its files.
async fn queue_checked(
    store: &Store,
    config: RunConfig,
    checked: CheckedConfig,
    files: Vec<RunFile>,
    signatures: Vec<Option<String>>,
    options: &SubmitOptions,
    tuning: Option<&TuningSubmission>,
) -> Result<SubmittedRun, FleetError> {
    if checked.drawn_game_colours {
        return Err(FleetError::Refused(
            "rules.colours_after_draw: the drawn-game colour rule plays each game after the \
             one before on one machine (arbiter match), not in a fleet's batches"
                .to_owned(),
        ));
    }
    let mut warnings = checked.warnings.clone();
    for (field, set) in [
        ("pgnout", config.pgnout.is_some()),
        ("jsonl", config.jsonl.is_some()),
        ("epdout", config.epdout.is_some()),
        ("report", config.report.is_some()),
        ("log", config.log.is_some()),
    ] {
        if set && !options.writes_exports {
            warnings.push(format!(
                "{field} is not written for a queued run: its games are in the database \
                 (`arbiter report RUN --db URL`)"
            ));
        }
    }
    if checked.judge == SprtJudge::All {
        warnings.push(
            "sprt.judge = \"all\" is not how a queued run is judged: its workers' batches \
             finish in any order, and the verdict is judged on the prefix of pairs with none \
             missing"
                .to_owned(),
        );
    }
    let seed = config.seed.unwrap_or_else(fresh_seed);
    let run_name = tuning.map_or_else(|| config.run_name(), |t| t.run_name.clone());
    let name = lineage(store, &run_name).await?.next_name;
    let pairings = checked.pairings.len();
    let units = checked.pairs;
    let batch_units = match tuning {
        // A batch is a step: its pairs are played at one perturbation.
        Some(tuning) => {
            if options.batch_pairs.is_some_and(|b| b != tuning.step_pairs) {
                warnings.push(format!(
                    "--batch-pairs is not used for a tuning run: a batch is a step's {} pairs \
                     (spsa.pairs_per_step)",
                    tuning.step_pairs
                ));
            }
            tuning.step_pairs
        }
        None => options
            .batch_pairs
            .unwrap_or_else(|| batch_pairs(&checked.time_controls)),
    }
    .clamp(1, units.max(1));
    let stored = RunConfig {
        folder: None,
        ..config.clone()
    };
    let mut spec = RunSpec {
        name: name.clone(),
        seed,
        config: stored.canonical(),
        engines: checked.engines.iter().map(|e| e.name.clone()).collect(),
        pairings: (0..pairings)
            .map(|pairing| {
                let [first, second] = checked.pairings[pairing];
                Pairing {
                    first,
                    second,
                    pairs_planned: pairs_in(units, pairings, pairing),
                }
            })
            .collect(),
        facts: Some(RunFacts {
            // Whatever the configuration says: workers' batches finish in any order.
            sprt: checked.facts().sprt.map(|sprt| SprtFacts {
                judged_on: JudgedOn::Prefix,
                ..sprt
            }),
            ..checked.facts()
        }),
        confirms: None,
    };
    let queue = Queue {
        priority: options.priority,
        worker_limit: options.worker_limit,
        batch_units,
        signatures,
        files,
    };
    let run = match tuning {
        None => store.queue_run(&spec, &queue).await?,
        Some(tuning) => {
            spec.config = tuning.config.clone();
            spec.engines = tuning.engines.clone();
            spec.facts = Some(tuning.facts.clone());
            store.queue_tuning_run(&spec, &tuning.setup, &queue).await?
        }
    };
    Ok(SubmittedRun {
        run,
        name,
        seed,
        units,
        batch_units,
        warnings,
    })
}

/// Pairs per batch at these time controls: about four minutes of a pair's games, between 1
/// and 256. fishtest's lesson: tiny batches load the database with a transaction per few
/// seconds of play, huge ones waste the games in flight when the SPRT stops.
pub fn batch_pairs(time_controls: &[TimeControl]) -> u64 {
    const TARGET: f64 = 240.0;
    // A pair's two games, with each engine's moves over about 80 plies a game.
    let pair_seconds: f64 = time_controls
        .iter()
        .map(|tc| 2.0 * 40.0 * move_seconds(tc))
        .sum::<f64>()
        .max(0.001);
    (TARGET / pair_seconds).round().clamp(1.0, 256.0) as u64
}

/// Roughly the seconds an engine spends on a move under `tc`, to size batches by.
fn move_seconds(tc: &TimeControl) -> f64 {
    if let Some(clock) = &tc.clock {
        let moves = clock.moves.map_or(40.0, f64::from).max(1.0);
        return clock.base.as_secs_f64() / moves + clock.increment.as_secs_f64();
    }
    if let Some(movetime) = tc.movetime {
        return movetime.as_secs_f64();
    }
    if let Some(nodes) = tc.nodes {
        // A million nodes a second: a typical engine on one core.
        return nodes as f64 / 1.0e6;
    }
    match tc.depth {
        Some(depth) => 0.001 * 2f64.powi(depth.min(30) as i32 / 2),
        None => 1.0,
    }
}

/// The files a run reads, by the names its configuration gives them, read from `base`.
fn stored_files(checked: &CheckedConfig, base: &Path) -> Result<Vec<RunFile>, FleetError> {
    file_names(checked)
        .into_iter()
        .map(|name| {
            let path = absolute(base, name);
            let content = std::fs::read(&path).map_err(|source| FleetError::File {
                path: path.clone(),
                source,
            })?;
            Ok(RunFile {
                name: name.display().to_string(),
                content,
            })
        })
        .collect()
}

/// The files a run reads, which are stored with it: its book and staunton's parameter files.
fn file_names(checked: &CheckedConfig) -> Vec<&Path> {
    let mut names: Vec<&Path> = Vec::new();
    if let Some(book) = &checked.openings.file {
        names.push(book);
    }
    for engine in &checked.engines {
        if let Program::Staunton {
            params_file: Some(file),
            ..
        } = &engine.program
        {
            names.push(file);
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(*name));
    names
}

/// The binaries of a run's UCI engines on this machine, by engine name, to store as artifacts
/// (`--upload-engines`); an engine whose binary is not here is an error naming it.
pub fn engine_binaries(
    checked: &CheckedConfig,
    base: &Path,
) -> Result<Vec<(String, PathBuf)>, FleetError> {
    let mut binaries = Vec::new();
    for engine in &checked.engines {
        if let (Program::Uci(process), None) = (&engine.program, &engine.build) {
            let path = signature::program_path(base, &process.cmd)
                .map_err(|why| FleetError::Refused(format!("engine {}: {why}", engine.name)))?;
            if !path.is_file() {
                return Err(FleetError::Refused(format!(
                    "engine {}: {} is not a file on this machine, so it cannot be uploaded",
                    engine.name,
                    path.display()
                )));
            }
            if !binaries
                .iter()
                .any(|(_, known): &(String, PathBuf)| *known == path)
            {
                binaries.push((engine.name.clone(), path));
            }
        }
    }
    Ok(binaries)
}

/// Each engine's signature where this machine has its binary, else none: the first worker's
/// is adopted.
fn signatures_here(checked: &CheckedConfig, base: &Path) -> Vec<Option<String>> {
    checked
        .engines
        .iter()
        .map(|engine| signature::of(engine, base).ok())
        .collect()
}

/// The tuner's part of a worker. A tuning run's batch plays the tuned engine at a
/// perturbation of the run's values as the worker finds them when it claims the batch, and its
/// submit applies the update to the values the run has then (other workers' batches may have
/// moved them): both are the tuner's, and the tuner is built on the runner, so a worker that
/// tunes is given one (`arbiter worker` gives SPSA's).
pub trait Tuner: Send + Sync + std::fmt::Debug {
    /// Reads a stored tuning run: its configuration text (`origin` names it in errors), its
    /// set-up and its seed. Returns the match its steps play, which the worker resolves as it
    /// resolves a match, and the run's plan; the error says why this worker cannot tune it.
    fn open(
        &self,
        config: &str,
        origin: &str,
        setup: &TuningSetup,
        seed: u64,
    ) -> Result<(RunConfig, Box<dyn TuningPlan>), String>;
}

/// A tuning run as a [`Tuner`] opened it on a worker.
pub trait TuningPlan: Send + Sync {
    /// Whether this worker can tune the resolved match's `players` (a UCI engine declares the
    /// options tuned: one that does not would ignore them and tune nothing), checked once per
    /// run before its first batch; the error is why the worker leaves the run to others.
    fn check<'a>(&'a self, players: &'a [PlayerSpec]) -> BoxFuture<'a, Result<(), String>>;

    /// Batch `lease`'s players, made from the resolved match's `players`, at a perturbation of
    /// `theta` (the values the run's last step left, as the tuner stored them; `None` before
    /// the first step).
    fn batch(
        &self,
        players: &[PlayerSpec],
        lease: &Lease,
        theta: Option<&str>,
    ) -> Result<TunedBatch, String>;

    /// The step of `lease`'s batch from what a worker says it played ([`TunedBatch::played`]),
    /// checked against what this plan plays for that batch: how `arbiter serve`, which holds
    /// the tuner and not the worker's closure, applies a remote worker's update.
    fn step(&self, lease: &Lease, played: &str) -> Result<Box<MakeTunedStep>, String>;
}

/// The step a tuning batch's games make: given the step's number, the values the run has when
/// the batch is submitted (`None`: the start) and the games' tally from the first player's
/// side.
pub type MakeTunedStep =
    dyn Fn(u64, Option<&str>, &Totals) -> Result<TuningStep, String> + Send + Sync;

/// One batch of a tuning run, as its [`TuningPlan`] plans it.
pub struct TunedBatch {
    /// The two sides of the perturbation.
    pub players: Vec<PlayerSpec>,
    pub step: Box<MakeTunedStep>,
    /// What the batch plays, as the tuner reads it back in [`TuningPlan::step`] (SPSA's
    /// perturbation as JSON): sent to a remote coordinator, which makes the step on its side.
    pub played: String,
}

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The worker's identity in the database: a worker restarted under its name gets its
    /// unexpired lease back.
    pub name: String,
    /// Games at once (the run's own `concurrency` is the submitter's machine's).
    pub concurrency: usize,
    /// How long a claim or a heartbeat holds the batch; heartbeats come every third of it.
    pub lease: Duration,
    /// How long to wait before asking again when there is nothing to play.
    pub idle_poll: Duration,
    /// Stop when there is nothing to play, instead of waiting for work.
    pub exit_when_idle: bool,
    /// Where a run's stored files are written for its games.
    pub scratch: PathBuf,
    /// Play this run only, until it is over (`arbiter match CONFIG --db URL`, the process that
    /// queued it playing its batches beside whichever workers join); none for any run.
    pub run: Option<RunId>,
    /// What plays tuning runs' batches; a worker without one leaves tuning runs to others.
    pub tuner: Option<Arc<dyn Tuner>>,
    /// Where engines fetched as artifacts are cached, by hash.
    pub artifacts: PathBuf,
    /// Where engines built from source are built and kept, by recipe.
    pub builds: PathBuf,
    /// Where played batches wait for the fleet's confirmation ([`Spool`]), so that a worker
    /// killed while the fleet is out of reach submits them when it starts again; none to keep
    /// them in memory only.
    pub spool: Option<PathBuf>,
}

/// What a worker reports as it goes.
#[derive(Debug)]
pub enum WorkerEvent {
    Registered(WorkerId),
    /// Batches a previous run of this worker played and left in its spool, submitted now.
    Spooled {
        batches: usize,
        spool: String,
    },
    /// A batch to play: `(run name, lease)`.
    Claimed(String, Lease),
    /// The worker cannot play this run (another engine binary, a configuration it cannot
    /// resolve); it leaves it to others.
    Refused {
        run: RunId,
        reason: String,
    },
    /// A batch played and submitted, with what the database did with it.
    Submitted(Lease, Submitted),
    /// A batch given up: its lease moved on, its run closed, or the worker was stopped.
    Dropped(Lease, String),
    /// Nothing to play right now.
    Idle,
    /// The database could not be reached (or was busy); the worker tries again.
    Unreachable(String),
    /// A game event of the batch being played.
    Game(Event),
}

/// Why [`work`] returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerEnd {
    /// Nothing was left to play (with `exit_when_idle`).
    Idle,
    /// `cancel` turned true (SIGTERM, Ctrl-C): the batch in hand was released.
    Stopped,
}

/// A run prepared on this worker: resolved, its engines' signatures checked, its players kept
/// from batch to batch.
struct Prepared {
    run: RunId,
    name: String,
    spec: MatchSpec,
    signatures: String,
    players: Arc<Players>,
    /// A tuning run's plan; none for a match.
    tuning: Option<Box<dyn TuningPlan>>,
}

/// The worker: claims batches from `store` until there are none (with `exit_when_idle`) or
/// `cancel` turns true, playing each and submitting it.
pub fn work<'a>(
    store: Arc<dyn Coordinator>,
    options: &'a WorkerOptions,
    events: &'a mpsc::UnboundedSender<WorkerEvent>,
    cancel: watch::Receiver<bool>,
) -> BoxFuture<'a, Result<WorkerEnd, FleetError>> {
    Box::pin(work_body(store, options, events, cancel))
}

async fn work_body(
    store: Arc<dyn Coordinator>,
    options: &WorkerOptions,
    events: &mpsc::UnboundedSender<WorkerEvent>,
    mut cancel: watch::Receiver<bool>,
) -> Result<WorkerEnd, FleetError> {
    let host = hostname();
    let info = WorkerInfo {
        name: options.name.clone(),
        host,
        cores: u32::try_from(options.concurrency).unwrap_or(u32::MAX),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let worker = retrying("registering", events, &cancel, || store.register(&info)).await?;
    let _ = events.send(WorkerEvent::Registered(worker));
    let spool = match &options.spool {
        Some(path) => Some(Spool::open(path).await?),
        None => None,
    };
    if let Some(spool) = &spool {
        submit_spooled(&*store, spool, events, &cancel).await?;
    }
    let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
    let mut excluded: Vec<RunId> = Vec::new();
    let mut prepared: Option<Prepared> = None;
    let mut stale_checked: Option<Instant> = None;
    let end = loop {
        if *cancel.borrow() {
            break WorkerEnd::Stopped;
        }
        if let Some(run) = options.run {
            // Pinned to one run: every other queued run is left out of the claim, and the
            // worker ends when its run does.
            let queue = retrying("reading the queue", events, &cancel, || store.queue()).await?;
            match queue.iter().find(|queued| queued.run.id == run) {
                None => {
                    return Err(FleetError::Refused(format!(
                        "run {run} is not queued in {}",
                        store.location()
                    )))
                }
                Some(queued) if !matches!(queued.run.state, RunState::Running) => {
                    break WorkerEnd::Idle;
                }
                Some(_) => {}
            }
            excluded = queue
                .iter()
                .map(|queued| queued.run.id)
                .filter(|&id| id != run)
                .collect();
        }
        let claimed = retrying("claiming a batch", events, &cancel, || {
            store.claim(worker, lease_ms, &excluded)
        })
        .await;
        let claimed = match claimed {
            Ok(claimed) => claimed,
            Err(_) if *cancel.borrow() => break WorkerEnd::Stopped,
            Err(e) => return Err(e),
        };
        if stale_checked.is_none_or(|at| at.elapsed() >= STALE_AFTER) {
            stale_checked = Some(Instant::now());
            advance_stale(&*store, prepared.as_ref(), &excluded, events, &cancel).await?;
        }
        // A run queued after the queue was read: not the pinned worker's to play.
        if let Some(lease) = claimed
            .as_ref()
            .filter(|lease| options.run.is_some_and(|run| run != lease.run))
        {
            retrying("releasing a batch", events, &cancel, || {
                store.release(lease)
            })
            .await?;
            continue;
        }
        let Some(lease) = claimed else {
            let _ = events.send(WorkerEvent::Idle);
            // The pinned run's batches are all done or out with other workers: wait for them
            // (a lapsed lease comes back to be claimed) or for the run's verdict.
            if options.run.is_some() {
                tokio::select! {
                    _ = tokio::time::sleep(options.idle_poll) => continue,
                    _ = cancel.changed() => continue,
                }
            }
            // Batches leased by others may still lapse and come back: idle means none left
            // undone in any run this worker may play, not merely none open now.
            if options.exit_when_idle {
                let undone = retrying("reading the queue", events, &cancel, || store.queue())
                    .await?
                    .into_iter()
                    .any(|queued| {
                        matches!(queued.run.state, RunState::Running)
                            && !excluded.contains(&queued.run.id)
                            && queued.batches.open + queued.batches.leased + queued.batches.expired
                                > 0
                    })
                    // Counted batches waiting for an advance whose submitter may have died:
                    // stay until they are stale enough to advance here.
                    || retrying("reading the queue", events, &cancel, || {
                        store.stale_runs(Duration::ZERO)
                    })
                    .await?
                    .iter()
                    .any(|run| !excluded.contains(run));
                if !undone {
                    break WorkerEnd::Idle;
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(options.idle_poll) => continue,
                _ = cancel.changed() => continue,
            }
        };
        if prepared.as_ref().is_none_or(|p| p.run != lease.run) {
            if let Some(old) = prepared.take() {
                old.players.shutdown().await;
            }
            let ready = retrying("reading the run", events, &cancel, || {
                prepare(&*store, &lease, options)
            })
            .await?;
            let ready = match ready {
                Ok(ready) => match &ready.tuning {
                    Some(plan) => plan.check(&ready.spec.play.players).await.map(|()| ready),
                    None => Ok(ready),
                },
                Err(reason) => Err(reason),
            };
            match ready {
                Ok(ready) => prepared = Some(ready),
                Err(reason) => {
                    leave(
                        &*store,
                        &lease,
                        reason,
                        &mut excluded,
                        options,
                        events,
                        &cancel,
                    )
                    .await?;
                    continue;
                }
            }
        }
        let Some(ready) = prepared.as_ref() else {
            continue;
        };
        // A tuning run's batch is played at a perturbation of the run's values as they are
        // now.
        let tuned = match &ready.tuning {
            None => None,
            Some(plan) => {
                let theta = retrying("reading the run's values", events, &cancel, || {
                    store.tuning_theta(lease.run)
                })
                .await?;
                match plan.batch(&ready.spec.play.players, &lease, theta.as_deref()) {
                    Ok(batch) => Some(batch),
                    Err(reason) => {
                        leave(
                            &*store,
                            &lease,
                            reason,
                            &mut excluded,
                            options,
                            events,
                            &cancel,
                        )
                        .await?;
                        continue;
                    }
                }
            }
        };
        let play = match &tuned {
            None => Arc::clone(&ready.spec.play),
            Some(batch) => Arc::new(PlaySpec {
                players: batch.players.clone(),
                ..(*ready.spec.play).clone()
            }),
        };
        let _ = events.send(WorkerEvent::Claimed(ready.name.clone(), lease.clone()));
        // An engine that cannot start here (a missing library, a script that exits at once) is
        // this worker's trouble, not the run's: it gives the batch back and leaves the run to
        // others, rather than exit, be restarted by its scheduler, get its own lease back and
        // fail on it forever. The store's errors stay errors (retried where transient).
        let played =
            match play_batch(&store, ready, play, &lease, options, events, &mut cancel).await {
                Ok(played) => played,
                Err(FleetError::Match(MatchError::Store(e))) => return Err(e.into()),
                Err(FleetError::Match(e)) => BatchEnd::Fault(e.to_string()),
                Err(e) => return Err(e),
            };
        match played {
            BatchEnd::Played(pairs) => {
                let spec = &ready.spec;
                let tally = pairs.iter().fold(Totals::default(), |mut tally, pair| {
                    tally.add(pair.tally);
                    tally
                });
                let rule = RunRule::of_spec(spec);
                // A match's batch waits on disk until the fleet answers; a tuning batch's
                // update needs the values at its submit, so it is played again instead.
                let spooled = match (&spool, &tuned) {
                    (Some(spool), None) => {
                        spool
                            .keep(&store.location(), &lease, &pairs, &ready.signatures)
                            .await?;
                        Some(spool)
                    }
                    _ => None,
                };
                let submitted = retrying("submitting a batch", events, &cancel, || async {
                    match &tuned {
                        None => {
                            let mut decide = |totals: &Totals| rule.verdict(totals);
                            store
                                .submit(&lease, &pairs, &ready.signatures, &mut decide)
                                .await
                        }
                        Some(batch) => {
                            let mut make =
                                |step: u64, theta: Option<&str>| (batch.step)(step, theta, &tally);
                            store
                                .submit_tuning(
                                    &lease,
                                    &tally,
                                    &ready.signatures,
                                    &batch.played,
                                    &mut make,
                                )
                                .await
                        }
                    }
                })
                .await;
                match submitted {
                    Ok(submitted) => {
                        if let Some(spool) = spooled {
                            spool.forget(&lease).await?;
                        }
                        let _ = events.send(WorkerEvent::Submitted(lease, submitted));
                    }
                    // Stopped while the database was away: whoever claims the batch after its
                    // lease plays it again.
                    Err(_) if *cancel.borrow() => break WorkerEnd::Stopped,
                    Err(e) => return Err(e),
                }
            }
            BatchEnd::Dropped(why) => {
                let _ = events.send(WorkerEvent::Dropped(lease, why));
            }
            BatchEnd::Stopped(why) => {
                // Given back at once if the database answers; else its lease runs out.
                let _ = store.release(&lease).await;
                let _ = events.send(WorkerEvent::Dropped(lease, why));
                break WorkerEnd::Stopped;
            }
            BatchEnd::Fault(reason) => {
                // An engine that did not start, or failed under `recover = false`: this worker
                // gives the batch back and leaves the run; the next worker's engines may hold.
                let reason = format!(
                    "an engine failed on this worker ({reason}); its batch goes back to the \
                     queue for other workers"
                );
                leave(
                    &*store,
                    &lease,
                    reason,
                    &mut excluded,
                    options,
                    events,
                    &cancel,
                )
                .await?;
            }
        }
    };
    if let Some(old) = prepared.take() {
        old.players.shutdown().await;
    }
    Ok(end)
}

/// Submits the batches a killed worker left in its spool for this fleet, each judged by its
/// run's rule, and forgets each the fleet answers: counted now, counted before (the kill came
/// after the fleet had it), or its run closed meanwhile. Another fleet's batches stay for a
/// worker of that fleet.
async fn submit_spooled(
    store: &dyn Coordinator,
    spool: &Spool,
    events: &mpsc::UnboundedSender<WorkerEvent>,
    cancel: &watch::Receiver<bool>,
) -> Result<(), FleetError> {
    let fleet = store.location();
    let batches: Vec<SpooledBatch> = spool
        .batches()
        .await?
        .into_iter()
        .filter(|batch| batch.fleet == fleet)
        .collect();
    if batches.is_empty() {
        return Ok(());
    }
    let _ = events.send(WorkerEvent::Spooled {
        batches: batches.len(),
        spool: spool.location().to_owned(),
    });
    for batch in batches {
        let run = batch.lease.run;
        let setup = retrying("reading the run", events, cancel, || store.run_setup(run)).await?;
        let rule = run_rule(&setup.run).ok();
        let submitted = retrying("submitting a spooled batch", events, cancel, || async {
            let mut decide = |totals: &Totals| rule.as_ref().and_then(|rule| rule.verdict(totals));
            store
                .submit(&batch.lease, &batch.pairs, &batch.signatures, &mut decide)
                .await
        })
        .await?;
        spool.forget(&batch.lease).await?;
        let _ = events.send(WorkerEvent::Submitted(batch.lease, submitted));
    }
    Ok(())
}

/// How long a counted batch may wait for its run's advance before a worker makes it: its
/// submitter advances right after counting it, so a batch that waits this long lost its
/// submitter (killed between the two), and no later submit of the run came to add it.
const STALE_AFTER: Duration = Duration::from_secs(10);

/// Advances every run (that this worker may play) with batches counted [`STALE_AFTER`] ago
/// and not yet in its totals, judging it with the run's SPRT as a submit would; a run this
/// worker cannot read is left to one that can.
async fn advance_stale(
    store: &dyn Coordinator,
    prepared: Option<&Prepared>,
    excluded: &[RunId],
    events: &mpsc::UnboundedSender<WorkerEvent>,
    cancel: &watch::Receiver<bool>,
) -> Result<(), FleetError> {
    let stale = retrying("reading the runs to advance", events, cancel, || {
        store.stale_runs(STALE_AFTER)
    })
    .await?;
    for run in stale.into_iter().filter(|run| !excluded.contains(run)) {
        let rule = match prepared.filter(|ready| ready.run == run) {
            Some(ready) => RunRule::of_spec(&ready.spec),
            None => {
                let found =
                    retrying("reading the run", events, cancel, || store.run_setup(run)).await?;
                match run_rule(&found.run) {
                    Ok(rule) => rule,
                    Err(_) => continue,
                }
            }
        };
        retrying("advancing a run", events, cancel, || async {
            let mut decide = |totals: &Totals| rule.verdict(totals);
            store.advance(run, &mut decide).await
        })
        .await?;
    }
    Ok(())
}

/// The rule that judges a queued run on its prefix's totals: its SPRT, on pentanomial pairs or
/// on games as the run is paired or not.
#[derive(Clone, Debug)]
pub struct RunRule {
    sprt: Option<Sprt>,
    paired: bool,
}

impl RunRule {
    fn of_spec(spec: &MatchSpec) -> RunRule {
        RunRule {
            sprt: spec.sprt,
            paired: spec.paired,
        }
    }

    /// The rule a run's stored facts give: what `arbiter runs` and the dashboard show, for
    /// runs whose configuration they do not check.
    fn of_facts(facts: Option<&RunFacts>) -> RunRule {
        let sprt = facts.and_then(|f| f.sprt.as_ref()).and_then(|s| {
            let model = s.model.parse::<EloModel>().ok()?;
            Sprt::new(s.alpha, s.beta, s.elo0, s.elo1, model).ok()
        });
        RunRule {
            sprt,
            paired: facts.is_none_or(RunFacts::paired),
        }
    }

    /// The statistics' sample of `totals`: pentanomial pairs, or games when unpaired.
    fn sample(&self, totals: &Totals) -> Sample {
        Sample::of_run(self.paired, totals.wdl(), totals.pentanomial)
    }

    /// The SPRT's standing on `totals`, once a pair is in and if the run has an SPRT.
    pub fn status(&self, totals: &Totals) -> Option<SprtStatus> {
        let sprt = self.sprt.as_ref().filter(|_| totals.pairs > 0)?;
        sprt.status(&self.sample(totals)).ok()
    }

    /// The SPRT's verdict on `totals`, if it has reached one.
    pub fn verdict(&self, totals: &Totals) -> Option<RunOutcome> {
        match self.status(totals)?.state {
            SprtState::H1 => Some(RunOutcome::H1),
            SprtState::H0 => Some(RunOutcome::H0),
            SprtState::Continue => None,
        }
    }
}

/// The rule of stored `run`, from its configuration's text alone (no engine, no file): what a
/// remote coordinator judges a worker's submit by, and a worker a run it advances without
/// having played it. An error for a run that is not a match (a tuning run) or whose stored
/// text no longer checks.
pub fn run_rule(run: &arbiter_store::Run) -> Result<RunRule, String> {
    let origin = format!("run {}", run.id);
    let config = RunConfig::parse(&run.spec.config, &origin).map_err(|e| e.to_string())?;
    let checked = config.check().map_err(|e| e.to_string())?;
    Ok(RunRule {
        sprt: checked.sprt,
        paired: checked.paired,
    })
}

/// Gives `lease`'s batch back and leaves its run to other workers, saying why; a worker pinned
/// to that run has nothing else to play, and stops with the reason as its error.
async fn leave(
    store: &dyn Coordinator,
    lease: &Lease,
    reason: String,
    excluded: &mut Vec<RunId>,
    options: &WorkerOptions,
    events: &mpsc::UnboundedSender<WorkerEvent>,
    cancel: &watch::Receiver<bool>,
) -> Result<(), FleetError> {
    retrying("releasing a batch", events, cancel, || store.release(lease)).await?;
    if options.run == Some(lease.run) {
        return Err(FleetError::Refused(format!(
            "run {}: {reason}; its batch went back to the queue for other workers",
            lease.run
        )));
    }
    excluded.push(lease.run);
    let _ = events.send(WorkerEvent::Refused {
        run: lease.run,
        reason,
    });
    Ok(())
}

/// Calls `op` until it succeeds, retrying the store's transient errors (the database restarted,
/// unreachable, busy) with backoff from a quarter of a second to ten seconds and saying so in
/// `events`; any other error, or `cancel`, ends it. A worker outlives its database's restarts
/// and network cuts: what it holds is either submitted once it can be, or played again by
/// another worker after its lease.
async fn retrying<T, F, Fut>(
    what: &str,
    events: &mpsc::UnboundedSender<WorkerEvent>,
    cancel: &watch::Receiver<bool>,
    mut op: F,
) -> Result<T, FleetError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut wait = Duration::from_millis(250);
    let mut cancel = cancel.clone();
    loop {
        match op().await {
            Ok(value) => return Ok(value),
            Err(e) if e.is_transient() && !*cancel.borrow() => {
                let _ = events.send(WorkerEvent::Unreachable(format!(
                    "{what}: {e}; trying again in {:.1} s",
                    wait.as_secs_f64()
                )));
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = cancel.changed() => {}
                }
                wait = (wait * 2).min(Duration::from_secs(10));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Resolves stored run `run` on this worker: its files written under the scratch folder, its
/// configuration read with them, its engines' signatures compared with the run's. The inner
/// error is why this worker cannot play it; the outer one, the store's.
async fn prepare(
    store: &dyn Coordinator,
    lease: &Lease,
    options: &WorkerOptions,
) -> Result<Result<Prepared, String>, StoreError> {
    let run = lease.run;
    let RunSetup {
        run: found,
        tuning: setup,
        files,
        signatures,
    } = store.run_setup(run).await?;
    let origin = format!("run {run}");
    let (mut config, tuning) = match (&setup, &options.tuner) {
        (None, _) => match RunConfig::parse(&found.spec.config, &origin) {
            Ok(config) => (config, None),
            Err(e) => return Ok(Err(e.to_string())),
        },
        (Some(setup), Some(tuner)) => {
            match tuner.open(&found.spec.config, &origin, setup, found.spec.seed) {
                Ok((config, plan)) => (config, Some(plan)),
                Err(reason) => return Ok(Err(reason)),
            }
        }
        (Some(setup), None) => {
            return Ok(Err(format!(
                "run {run} is a tuning run ({}), and this worker plays matches only",
                setup.method.as_str()
            )))
        }
    };
    if let Err(reason) =
        fetch_artifacts(store, &mut config, &signatures, &options.artifacts).await?
    {
        return Ok(Err(reason));
    }
    let mut stored = match prepare_here(&found, config, files, options) {
        Ok(here) => here,
        Err(reason) => return Ok(Err(reason)),
    };
    let signatures = store.adopt_signatures(run, &stored.mine).await?;
    // Engines built from source are built (or found built) now, the batch's lease kept.
    let built = holding(store, lease, options, async {
        build::build_engines(&mut stored.checked, &options.builds).await
    })
    .await;
    if let Err(reason) = built {
        return Ok(Err(reason));
    }
    let benches: Vec<Option<u64>> = stored.checked.engines.iter().map(|e| e.bench).collect();
    let prepared = match stored.finish(&found, &signatures, options, tuning) {
        Ok(prepared) => prepared,
        Err(reason) => return Ok(Err(reason)),
    };
    // The bench signature, after the hash: the binary is the run's, and it prints the count
    // its authors stated (a worker's build of the same commit that differs is caught here).
    let benched = holding(store, lease, options, async {
        bench::verify(&prepared.spec.play.players, &benches).await
    })
    .await;
    if let Err(reason) = benched {
        prepared.players.shutdown().await;
        return Ok(Err(reason));
    }
    Ok(Ok(prepared))
}

/// Runs `work` while keeping `lease` (a heartbeat every third of it): a build or a bench may
/// take longer than a lease. A heartbeat that fails is not acted on here; the batch's play
/// finds the lease gone at its first heartbeat.
async fn holding<T>(
    store: &dyn Coordinator,
    lease: &Lease,
    options: &WorkerOptions,
    work: impl std::future::Future<Output = T>,
) -> T {
    let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            () = tokio::time::sleep(options.lease / 3) => {
                let _ = store.heartbeat(lease, lease_ms).await;
            }
        }
    }
}

/// Points each UCI engine this machine lacks at its artifact, if the fleet stores one under
/// the engine's signature (`sha256:HEX`): fetched once into `cache` (named by its hash, checked
/// against it, made executable, written whole before it is named), then played from there. An
/// engine the machine has is played as it is (its signature is compared later, as always); one
/// it lacks with no artifact stays missing, and the worker says so when it resolves the run.
async fn fetch_artifacts(
    store: &dyn Coordinator,
    config: &mut RunConfig,
    signatures: &[Option<String>],
    cache: &Path,
) -> Result<Result<(), String>, StoreError> {
    for (engine, signature) in config.engines.iter_mut().zip(signatures) {
        let Some(cmd) = &engine.cmd else {
            continue;
        };
        let Some(sha) = signature.as_deref().and_then(|s| s.strip_prefix("sha256:")) else {
            continue;
        };
        if signature::program_path(Path::new("."), cmd).is_ok_and(|path| path.is_file()) {
            continue;
        }
        let cached = cache.join(sha);
        let fresh = signature::of_binary(&cached).ok().as_deref() == signature.as_deref();
        if !fresh {
            let Some(bytes) = store.artifact(sha).await? else {
                continue;
            };
            if sha256_hex(&bytes) != sha {
                return Ok(Err(format!(
                    "engine {}: the artifact fetched for sha256:{sha} does not match that hash",
                    engine.name
                )));
            }
            if let Err(e) = write_executable(&cached, &bytes) {
                return Ok(Err(format!(
                    "engine {}: cannot cache its artifact at {}: {e}",
                    engine.name,
                    cached.display()
                )));
            }
        }
        engine.cmd = Some(cached);
    }
    Ok(Ok(()))
}

/// Writes `bytes` to `path` whole (a temporary file renamed into place, so that a worker killed
/// mid-write leaves no half binary under the hash's name) and executable.
fn write_executable(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let partial = path.with_extension(format!("part-{}", std::process::id()));
    std::fs::write(&partial, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755))?;
    }
    std::fs::rename(&partial, path)
}

/// A run's configuration resolved against its stored files, and this worker's engine
/// signatures, before they are compared with the run's.
struct Resolved {
    checked: CheckedConfig,
    mine: Vec<String>,
}

fn prepare_here(
    found: &arbiter_store::Run,
    mut config: RunConfig,
    files: Vec<RunFile>,
    options: &WorkerOptions,
) -> Result<Resolved, String> {
    let run = found.id;
    // A worker writes no exports: the games are in the database.
    config.pgnout = None;
    config.jsonl = None;
    config.epdout = None;
    config.report = None;
    config.log = None;
    let folder = options.scratch.join(format!("run-{run}"));
    let mut placed: HashMap<String, PathBuf> = HashMap::new();
    for file in files {
        let path = folder.join(safe_relative(&file.name));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, &file.content)
            .map_err(|e| format!("write {}: {e}", path.display()))?;
        placed.insert(file.name, path);
    }
    let local = |path: &Option<PathBuf>| {
        path.as_ref()
            .and_then(|p| placed.get(&p.display().to_string()).cloned())
            .or_else(|| path.clone())
    };
    config.openings.file = local(&config.openings.file);
    for engine in &mut config.engines {
        engine.params_file = local(&engine.params_file);
    }
    let checked = config.check().map_err(|e| e.to_string())?;
    let mine: Vec<String> = checked
        .engines
        .iter()
        .map(|engine| signature::of(engine, Path::new(".")))
        .collect::<Result<_, String>>()?;
    Ok(Resolved { checked, mine })
}

impl Resolved {
    /// Compared with the run's signatures `stored`, and resolved to play.
    fn finish(
        self,
        found: &arbiter_store::Run,
        stored: &[Option<String>],
        options: &WorkerOptions,
        tuning: Option<Box<dyn TuningPlan>>,
    ) -> Result<Prepared, String> {
        let Resolved { checked, mine } = self;
        let run = found.id;
        for ((engine, mine), theirs) in checked.engines.iter().zip(&mine).zip(stored) {
            if let Some(theirs) = theirs.as_ref().filter(|theirs| *theirs != mine) {
                return Err(format!(
                    "engine {} here is {mine}, but run {run} plays {theirs}",
                    engine.name
                ));
            }
        }
        let signatures = serde_json::to_string(
            &checked
                .engines
                .iter()
                .map(|e| e.name.as_str())
                .zip(&mine)
                .collect::<std::collections::BTreeMap<_, _>>(),
        )
        .unwrap_or_default();
        let mut spec = checked
            .resolve(Path::new("."), found.spec.seed)
            .map_err(|e| e.to_string())?;
        spec.concurrency = options.concurrency.max(1);
        Ok(Prepared {
            run,
            name: found.spec.name.clone(),
            spec,
            signatures,
            players: Arc::new(Players::default()),
            tuning,
        })
    }
}

/// A stored file's name as a path inside the scratch folder: no root, no `..`, so a name from
/// the database cannot write outside it.
fn safe_relative(name: &str) -> PathBuf {
    let kept: PathBuf = Path::new(name)
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    if kept.as_os_str().is_empty() {
        PathBuf::from("file")
    } else {
        kept
    }
}

enum BatchEnd {
    Played(Vec<PairRecord>),
    /// Given up; nothing to release (the lease moved on, the run closed).
    Dropped(String),
    /// Stopped from outside: release the batch.
    Stopped(String),
    /// An engine did not start on this worker, or failed under `recover = false`.
    Fault(String),
}

/// The pairs of one batch, kept until the batch is complete.
struct BatchSink<'a> {
    spec: &'a MatchSpec,
    run: RunId,
    pairs: Vec<PairRecord>,
}

impl PairSink for BatchSink<'_> {
    async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
        self.pairs.push(pair.record(self.spec, self.run));
        Ok(Flow::Continue)
    }
}

/// Plays `lease`'s units, extending the lease every third of its length; a heartbeat that
/// finds the lease gone or the run closed stops play.
async fn play_batch(
    store: &Arc<dyn Coordinator>,
    ready: &Prepared,
    spec: Arc<PlaySpec>,
    lease: &Lease,
    options: &WorkerOptions,
    events: &mpsc::UnboundedSender<WorkerEvent>,
    cancel: &mut watch::Receiver<bool>,
) -> Result<BatchEnd, FleetError> {
    let (stop_play, mut play_cancel) = watch::channel(false);
    let (why_tx, mut why_rx) = watch::channel(None::<(bool, String)>);
    let heartbeat = {
        let store = store.clone();
        let lease = lease.clone();
        let every = options.lease / 3;
        let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
        let stop_play = stop_play.clone();
        let why_tx = why_tx.clone();
        let events = events.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let why = match store.heartbeat(&lease, lease_ms).await {
                    Ok(Heartbeat::Held { .. }) => continue,
                    // A database that cannot be reached: play on, and let the next heartbeat,
                    // the submit (or the lease's expiry) settle it. Said, so that a worker cut
                    // off for longer than its lease is seen to have been.
                    Err(e) => {
                        let _ = events.send(WorkerEvent::Unreachable(format!(
                            "heartbeat: {e}; playing on"
                        )));
                        continue;
                    }
                    Ok(Heartbeat::Lost) => "its lease went to another worker".to_owned(),
                    Ok(Heartbeat::RunClosed(verdict)) => format!("the run is over ({verdict})"),
                };
                let _ = why_tx.send(Some((false, why)));
                let _ = stop_play.send(true);
                return;
            }
        })
    };
    // The outside stop, forwarded to play.
    let forward = {
        let mut cancel = cancel.clone();
        let stop_play = stop_play.clone();
        tokio::spawn(async move {
            while cancel.changed().await.is_ok() {
                if *cancel.borrow() {
                    let _ = why_tx.send(Some((true, "the worker was stopped".to_owned())));
                    let _ = stop_play.send(true);
                    return;
                }
            }
        })
    };
    let (game_tx, mut game_rx) = mpsc::unbounded_channel();
    let relay = {
        let events = events.clone();
        tokio::spawn(async move {
            while let Some(event) = game_rx.recv().await {
                let _ = events.send(WorkerEvent::Game(event));
            }
        })
    };
    let mut sink = BatchSink {
        spec: &ready.spec,
        run: ready.run,
        pairs: Vec::new(),
    };
    let ending = play_with(
        &spec,
        lease.unit_range(),
        &mut sink,
        &ready.players,
        &game_tx,
        &mut play_cancel,
    )
    .await;
    heartbeat.abort();
    forward.abort();
    drop(game_tx);
    let _ = relay.await;
    let ending = ending?;
    let why = why_rx.borrow_and_update().clone();
    Ok(match ending.end {
        End::Played => BatchEnd::Played(sink.pairs),
        End::Cancelled | End::Stopped => match why {
            Some((true, why)) => BatchEnd::Stopped(why),
            Some((false, why)) => BatchEnd::Dropped(why),
            None => BatchEnd::Stopped("play stopped".to_owned()),
        },
        End::Fault(reason) => BatchEnd::Fault(reason),
    })
}

/// This machine's name, as a worker reports it and names itself by default.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A queued run's progress as `arbiter runs` and the server's dashboard show it: the prefix's
/// games, Elo and LLR (what the verdict is judged on), from the facts stored with the run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunProgress {
    /// `queued` (no batch out yet), `running`, or the verdict.
    pub state: String,
    /// A tuning run: its games move the values, it has no Elo or LLR of its own.
    pub tuning: bool,
    /// Games played (the prefix's; a tuning run's, counted by batches) and planned.
    pub games: u64,
    pub games_planned: u64,
    /// The Elo estimate and its half-width, once a game is in.
    pub elo: Option<(f64, f64)>,
    /// The SPRT's LLR with its lower and upper bound, for a run with an SPRT.
    pub sprt: Option<SprtStatus>,
}

/// [`RunProgress`] of `queued`.
pub fn progress(queued: &QueuedRun) -> RunProgress {
    let run = &queued.run;
    let b = queued.batches;
    let state = match &run.state {
        RunState::Running if b.done == 0 && b.leased == 0 => "queued".to_owned(),
        RunState::Running => "running".to_owned(),
        RunState::Finished { verdict } => verdict.as_str().to_owned(),
    };
    let facts = run.spec.facts.as_ref();
    let games_planned = facts.map_or(2 * run.pairs_planned(), |f| f.games_planned);
    if facts.is_some_and(|f| f.kind == RunKind::Spsa) {
        return RunProgress {
            state,
            tuning: true,
            games: (2 * b.done * queued.batch_units).min(games_planned),
            games_planned,
            elo: None,
            sprt: None,
        };
    }
    let rule = RunRule::of_facts(facts);
    let totals = queued.prefix.totals;
    let elo = arbiter_stats::estimate::elo(&rule.sample(&totals))
        .ok()
        .filter(|_| totals.pairs > 0)
        .map(|e| (e.elo, e.half_width));
    let sprt = rule.status(&totals);
    RunProgress {
        state,
        tuning: false,
        games: totals.games(),
        games_planned,
        elo,
        sprt,
    }
}
