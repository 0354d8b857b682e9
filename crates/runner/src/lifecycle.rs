//! A run's life around its games, in one place for `arbiter match` (and tournaments), `tune
//! spsa` and `datagen`: find the stored run a configuration names and resume it, or start the
//! next one (`NAME`, `NAME-2`, ... each with a seed of its own, stored so that it replays);
//! refuse to continue a run with a configuration whose games would differ; hold the run's lock
//! while it plays; lay out the export files before the first game; say what a verdict means
//! as an exit status; and give a run an older arbiter stored what this one reads (its facts,
//! a confirmation's link), from what it stored. The binary parses arguments, calls these and
//! prints.
//!
//! Nothing here plays a game or prints a line: a coordinator that queues runs for a fleet opens
//! them the same way.

use std::path::{Path, PathBuf};

use arbiter_records::spsa::{option_value, stored_theta, SpsaParam, SpsaSetup};
use arbiter_stats::SprtState;
use arbiter_store::{
    Pairing, Run, RunFacts, RunId, RunLock, RunSpec, RunState, Store, StoreError, TuningMethod,
    Upgrade,
};
use futures_util::future::BoxFuture;

use crate::config::{ConfigError, EngineConfig, RunConfig};
use crate::outputs::Export;
use crate::sinks::Verdict;
use crate::spec::MatchSpec;

/// Why a run could not be opened: the store, the configuration, or the run found.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("--resume {key}: no such run in {location}")]
    NoSuchRun { key: String, location: String },
    /// Continuing would mix two experiments in one result.
    #[error(
        "run {name:?} in {location} was started with another configuration, and continuing it \
         would mix two experiments in one result (stored -> now):\n  {}\nTo start a new run, \
         give this configuration another `name` (or another store); to continue the stored run \
         as it was started, restore those settings or use `arbiter match --resume {name} \
         --store {location}`",
        differences.join("\n  ")
    )]
    Edited {
        name: String,
        location: String,
        differences: Vec<String>,
    },
    /// An engine here is not the one the run names by its bench (see `crate::bench`).
    #[error("{0}")]
    Bench(String),
    /// An engine here is not the binary (or staunton) the run was started with (see
    /// `crate::signature`).
    #[error(
        "engine {engine}: run {run} was started with {stored}, but it is {here} on this \
         machine: continuing would mix two engines in one result. Restore that build to \
         finish the run, or start a new run (another `name`)"
    )]
    OtherEngine {
        engine: String,
        run: i64,
        stored: String,
        here: String,
    },
    #[error("write {}: {source}", path.display())]
    Export {
        path: PathBuf,
        source: crate::outputs::ExportError,
    },
    #[error("{action} {}: {source}", path.display())]
    File {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A run stored before the store kept its facts (schema 6), whose stored configuration
    /// no longer parses or checks: nothing else says what the run was.
    #[error(
        "run {run} ({name}) was stored before arbiter kept a run's facts, and its stored \
         configuration no longer reads: {source}"
    )]
    OlderRun {
        run: i64,
        name: String,
        #[source]
        source: ConfigError,
    },
}

/// The runs of one configuration: the newest stored under its name (`name`, then `name-2`,
/// `name-3`, ...), and the name its next new run takes.
#[derive(Debug)]
pub struct Lineage {
    pub latest: Option<Run>,
    pub next_name: String,
}

impl Lineage {
    /// The newest run, if it is still unfinished: the one a rerun continues.
    pub fn unfinished(&self) -> Option<&Run> {
        self.latest
            .as_ref()
            .filter(|run| !matches!(run.state, RunState::Finished { .. }))
    }
}

/// The runs named after `name` in `store`.
pub async fn lineage(store: &Store, name: &str) -> Result<Lineage, StoreError> {
    let mut latest = None;
    for n in 1u64.. {
        let candidate = if n == 1 {
            name.to_owned()
        } else {
            format!("{name}-{n}")
        };
        match store.find_run_by_name(&candidate).await? {
            Some(run) => latest = Some(run),
            None => {
                return Ok(Lineage {
                    latest,
                    next_name: candidate,
                })
            }
        }
    }
    unreachable!("some name in the sequence is free")
}

/// A seed no earlier run is likely to have had: std's per-process random hash keys (seeded by
/// the operating system) over the time. Each new run draws its own unless one is given, as
/// cutechess and fastchess do; it is stored and printed so that `seed` (`-srand`) replays it.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// A match or tournament run, opened and locked, ready to play.
pub struct OpenedMatch {
    pub run: RunId,
    pub seed: u64,
    /// The configuration the run plays: the stored one when resumed by `--resume`.
    pub config: RunConfig,
    /// The folder the configuration's relative paths are taken from: the one the run was
    /// started in.
    pub base: PathBuf,
    /// The run resolved on this machine (its log opened).
    pub spec: MatchSpec,
    /// How the run was found, for the first line: `new run`, `resumed`, or a new run after a
    /// finished one of the same configuration.
    pub how: String,
    /// One process plays a run: a second one is refused, naming the holder. The lock goes with
    /// this process however it ends, so a run killed with kill -9 resumes at once.
    pub lock: RunLock,
}

/// Continues stored run `key` (its id or name) with the configuration it was started with,
/// from the folder it was started in.
pub fn resume_match<'a>(
    store: &'a Store,
    key: &'a str,
    location: &'a str,
) -> BoxFuture<'a, Result<OpenedMatch, LifecycleError>> {
    Box::pin(resume_match_body(store, key, location))
}

async fn resume_match_body(
    store: &Store,
    key: &str,
    location: &str,
) -> Result<OpenedMatch, LifecycleError> {
    let found = match key.parse::<i64>() {
        Ok(id) => Some(store.run(RunId::new(id)).await?),
        Err(_) => store.find_run_by_name(key).await?,
    };
    let Some(found) = found else {
        return Err(LifecycleError::NoSuchRun {
            key: key.to_owned(),
            location: location.to_owned(),
        });
    };
    let config = stored_config(&found, location)?;
    fill_older_facts(store, &found).await?;
    // The stored configuration's relative paths are the start folder's.
    let base = config.folder.clone().unwrap_or_else(|| PathBuf::from("."));
    locked(
        store,
        found.id,
        found.spec.seed,
        config,
        base,
        "resumed".to_owned(),
    )
    .await
}

/// Opens the run `config` (read from the folder `base`) names: the newest unfinished run of
/// its name resumes, unless the configuration was edited since (refused: its games would
/// differ); after a finished one, or none, a new run starts under the next free name with the
/// configuration's seed or a fresh one, and with `confirms`, the tuning run it is the
/// confirmation SPRT of. A configuration that cannot run on this machine never creates a run.
pub fn open_match<'a>(
    store: &'a Store,
    config: RunConfig,
    base: &'a Path,
    location: &'a str,
    confirms: Option<RunId>,
) -> BoxFuture<'a, Result<OpenedMatch, LifecycleError>> {
    Box::pin(open_match_body(store, config, base, location, confirms))
}

async fn open_match_body(
    store: &Store,
    config: RunConfig,
    base: &Path,
    location: &str,
    confirms: Option<RunId>,
) -> Result<OpenedMatch, LifecycleError> {
    // The text is judged before anything is looked up or created; what a report needs of the
    // run is decided from it now and stored with the run (see `RunFacts`).
    let checked = config.check()?;
    let facts = checked.facts();
    let mut runs = lineage(store, &config.run_name()).await?;
    // An unnamed run stored before `rounds` left its derived name is found by the old one.
    if runs.latest.is_none() {
        if let Some(legacy) = config.legacy_run_name() {
            let old = lineage(store, &legacy).await?;
            if old.unfinished().is_some() {
                runs.latest = old.latest;
            }
        }
    }
    if let Some(found) = runs.unfinished() {
        let differences = edits(found, &config, location)?;
        if !differences.is_empty() {
            return Err(LifecycleError::Edited {
                name: found.spec.name.clone(),
                location: location.to_owned(),
                differences,
            });
        }
        fill_older_facts(store, found).await?;
        let (id, seed) = (found.id, found.spec.seed);
        let config = config.with_pinned_benches(&stored_config(found, location)?);
        return locked(store, id, seed, config, base.to_owned(), "resumed".into()).await;
    }
    let how = match &runs.latest {
        Some(done) => format!(
            "new run (run {} of this configuration, {}, is finished)",
            done.id, done.spec.name
        ),
        None => "new run".to_owned(),
    };
    let seed = config.seed.unwrap_or_else(fresh_seed);
    let spec = checked.resolve(base, seed)?;
    // The run records which staunton plays it, and any stated bench is checked before it is
    // created.
    let config = crate::bench::pin_builtin(&config, base).await?;
    verify_benches(&config, &spec).await?;
    // The start folder goes with the stored configuration (see `resume_match`); `run.toml`'s
    // folder is the empty path: the current one.
    let start = match base.as_os_str().is_empty() {
        true => Path::new("."),
        false => base,
    };
    let stored = RunConfig {
        folder: Some(std::path::absolute(start).unwrap_or_else(|_| base.to_owned())),
        ..config.clone()
    };
    let run = store
        .create_run(&RunSpec {
            name: runs.next_name,
            seed,
            config: stored.canonical(),
            engines: spec.players.iter().map(|p| p.name.clone()).collect(),
            pairings: (0..spec.pairings.len())
                .map(|pairing| {
                    let [first, second] = spec.pairings[pairing];
                    Pairing {
                        first,
                        second,
                        pairs_planned: spec.pairs_in(pairing),
                    }
                })
                .collect(),
            facts: Some(facts),
            confirms,
        })
        .await?;
    let lock = store.lock_run(run).await?;
    same_engines(store, run, &stored, base).await?;
    Ok(OpenedMatch {
        run,
        seed,
        config,
        base: base.to_owned(),
        spec,
        how,
        lock,
    })
}

/// Locks an existing run, then resolves its configuration on this machine and checks that its
/// engines print the benches it names: a resume by another build of an engine is refused.
async fn locked(
    store: &Store,
    run: RunId,
    seed: u64,
    config: RunConfig,
    base: PathBuf,
    how: String,
) -> Result<OpenedMatch, LifecycleError> {
    let lock = store.lock_run(run).await?;
    same_engines(store, run, &config, &base).await?;
    let spec = config.resolve(&base, seed)?;
    verify_benches(&config, &spec).await?;
    Ok(OpenedMatch {
        run,
        seed,
        config,
        base,
        spec,
        how,
        lock,
    })
}

/// Whether the engines of `config` (read from `base`) are those `run` was started with, by
/// their signatures (`crate::signature`): the signatures are recorded the first time all are
/// known here, as a fleet's first worker records them, and each one known here must be the
/// recorded one. An engine whose program is missing here is not judged: it cannot play.
async fn same_engines(
    store: &Store,
    run: RunId,
    config: &RunConfig,
    base: &Path,
) -> Result<(), LifecycleError> {
    let checked = config.check()?;
    let here: Vec<Option<String>> = checked
        .engines
        .iter()
        .map(|engine| crate::signature::of(engine, base).ok())
        .collect();
    let mut stored = store.engine_signatures(run).await?;
    if let Some(all) = here.iter().cloned().collect::<Option<Vec<String>>>() {
        stored = store.adopt_signatures(run, &all).await?;
    }
    let engines = checked.engines.iter().zip(here).zip(stored);
    for ((engine, here), stored) in engines {
        if let (Some(here), Some(stored)) = (here, stored) {
            if here != stored {
                return Err(LifecycleError::OtherEngine {
                    engine: engine.name.clone(),
                    run: run.get(),
                    stored,
                    here,
                });
            }
        }
    }
    Ok(())
}

/// Whether each engine of `config` that names a bench prints it here (`spec` resolved from it).
async fn verify_benches(config: &RunConfig, spec: &MatchSpec) -> Result<(), LifecycleError> {
    crate::bench::verify_stated(config, &spec.players)
        .await
        .map_err(LifecycleError::Bench)
}

/// What `config` changes of the configuration `run` was stored with, one `stored -> now` line
/// per setting: a run is continued only by the configuration it was started with, whether one
/// process plays it or a fleet.
pub fn edits(run: &Run, config: &RunConfig, location: &str) -> Result<Vec<String>, ConfigError> {
    let stored = stored_config(run, location)?;
    Ok(config
        .with_pinned_benches(&stored)
        .differences_from(&stored))
}

/// The configuration `run` was stored with.
fn stored_config(run: &Run, location: &str) -> Result<RunConfig, ConfigError> {
    RunConfig::parse(&run.spec.config, &format!("run {} in {location}", run.id))
}

/// The facts of `run`, stored before the store kept them (schema 6), read from its stored
/// configuration the one way that decides them (`CheckedConfig::facts`, as a new run's are
/// written); a text that no longer reads is an error naming the run and why.
pub fn older_run_facts(run: &Run) -> Result<RunFacts, LifecycleError> {
    RunConfig::parse(&run.spec.config, &format!("run {}", run.id))
        .and_then(|config| config.check())
        .map(|checked| checked.facts())
        .map_err(|source| LifecycleError::OlderRun {
            run: run.id.get(),
            name: run.spec.name.clone(),
            source,
        })
}

/// Gives `run` its facts in the store if it was stored without them, so that a resumed older
/// run is read like a new one from then on.
async fn fill_older_facts(store: &Store, run: &Run) -> Result<(), LifecycleError> {
    if run.spec.facts.is_none() {
        store.fill_facts(run.id, &older_run_facts(run)?).await?;
    }
    Ok(())
}

/// What `run` needs from this build before it can be read as a run of today's schema: its
/// facts if it has none; for a tuning run, the link to its confirmation SPRT if the store
/// lacks one and a confirmation is found by what it plays
/// ([`confirmation_by_what_it_plays`]), and that confirmation's facts if it has none. Nothing
/// is written: [`Store::upgrade`] stores it, and a reader that cannot write reads through it.
/// A tuning run's own facts are not needed: it is read by its steps.
pub async fn older_run_upgrade(store: &Store, run: &Run) -> Result<Upgrade, LifecycleError> {
    let mut upgrade = Upgrade::default();
    let read = match store.tuning_setup(run.id).await? {
        None => Some(run.clone()),
        Some(stored) => match store.confirmations(run.id).await?.pop() {
            Some(linked) => Some(linked),
            None => {
                let found = match stored.method {
                    TuningMethod::Spsa => match serde_json::from_str::<SpsaSetup>(&stored.setup) {
                        Ok(setup) => confirmation_by_what_it_plays(store, run, &setup).await?,
                        // The report names a set-up it cannot read; nothing is found by it.
                        Err(_) => None,
                    },
                };
                if let Some(confirmation) = &found {
                    upgrade.confirms.insert(confirmation.id, run.id);
                }
                found
            }
        },
    };
    if let Some(read) = read.filter(|r| r.spec.facts.is_none()) {
        upgrade.facts.insert(read.id, older_run_facts(&read)?);
    }
    Ok(upgrade)
}

/// The latest match run in `store` that confirms tuning run `tuning`, for a confirmation
/// created before the store kept the link: named as `arbiter tune spsa` names its confirmation
/// (`ENGINE-tuned-vs-ENGINE-start-HASH`), playing the tuned engine at the values of the last
/// committed step against the start values. Matching the values, not only the name, keeps a
/// later tuning run of the same engine from claiming an earlier run's confirmation. None
/// without a committed step or with stored values that do not read.
pub async fn confirmation_by_what_it_plays(
    store: &Store,
    tuning: &Run,
    setup: &SpsaSetup,
) -> Result<Option<Run>, StoreError> {
    let Some(last) = store.tuning_steps(tuning.id).await?.pop() else {
        return Ok(None);
    };
    let Ok(theta) = stored_theta(&last.step.theta) else {
        return Ok(None);
    };
    // The tuned engine's own name: the run's two players are `NAME+` and `NAME-`.
    let engine = tuning
        .spec
        .engines
        .first()
        .map(|plus| plus.strip_suffix('+').unwrap_or(plus))
        .unwrap_or_default();
    let names = [format!("{engine}-tuned"), format!("{engine}-start")];
    let prefix = format!("{}-vs-{}-", names[0], names[1]);
    let start: Vec<f64> = setup.params.iter().map(|p| p.start).collect();
    let confirms = |run: &Run| {
        if !run.spec.name.starts_with(&prefix) || run.spec.engines != names {
            return false;
        }
        RunConfig::parse(&run.spec.config, &run.spec.name).is_ok_and(|config| {
            matches!(&config.engines[..], [tuned, started]
                if plays_at(tuned, &setup.params, &theta) && plays_at(started, &setup.params, &start))
        })
    };
    Ok(store
        .runs()
        .await?
        .into_iter()
        .rfind(|run| run.id.get() > tuning.id.get() && confirms(run)))
}

/// Whether `engine` is set to `values` of `params`, as the confirmation sets them: an in-process
/// engine's parameters, a UCI engine's options.
fn plays_at(engine: &EngineConfig, params: &[SpsaParam], values: &[f64]) -> bool {
    params.iter().zip(values).all(|(p, &v)| {
        let v = p.engine_value(v);
        if engine.builtin.is_some() {
            engine.params.get(&p.name) == Some(&(v as i64))
        } else {
            engine.settings.options.get(&p.name) == Some(&option_value(p.kind, v))
        }
    })
}

/// The export files of a run, each written once before the first game as exactly what the
/// store holds, so that a path that cannot be written fails now, not after hours of games. A
/// file that holds games of something else is moved aside first (arbiter rewrites its outputs
/// from the store, where cutechess would append); each move is returned as a warning.
pub async fn prepare_exports(
    store: &Store,
    run: RunId,
    config: &RunConfig,
    base: &Path,
) -> Result<(Vec<(Export, PathBuf)>, Vec<String>), LifecycleError> {
    let exports: Vec<(Export, PathBuf)> = [
        (Export::Pgn, &config.pgnout),
        (Export::Epd, &config.epdout),
        (Export::JsonLines, &config.jsonl),
    ]
    .into_iter()
    .filter_map(|(export, path)| path.as_ref().map(|p| (export, base.join(p))))
    .collect();
    let mut warnings = Vec::new();
    for (export, path) in &exports {
        if !export.is_replaceable(store, run, path).await {
            let kept = set_aside(path)?;
            warnings.push(format!(
                "{} holds games that are not this run's; moved to {} (arbiter rewrites its \
                 outputs from the store, where cutechess would append)",
                path.display(),
                kept.display()
            ));
        }
        export
            .rebuild(store, run, path, &[], None)
            .await
            .map_err(|source| LifecycleError::Export {
                path: path.clone(),
                source,
            })?;
    }
    Ok((exports, warnings))
}

/// Moves a file out of the way to the first free `FILE.old`, `FILE.old.1`, ... name.
fn set_aside(path: &Path) -> Result<PathBuf, LifecycleError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".old");
    let mut kept = PathBuf::from(&name);
    let mut n = 1;
    while kept.exists() {
        let mut numbered = name.clone();
        numbered.push(format!(".{n}"));
        kept = PathBuf::from(numbered);
        n += 1;
    }
    std::fs::rename(path, &kept).map_err(|source| LifecycleError::File {
        action: "move aside",
        path: path.to_owned(),
        source,
    })?;
    Ok(kept)
}

/// The exit status of a run that ended by itself (not stopped from outside): 0 when H1 is
/// accepted or a run without an SPRT completed, 1 when H0 is accepted, 3 when an SPRT ran out
/// of games undecided or an engine fault stopped the run. Scripts and CI gate on these.
pub fn exit_status(verdict: &Verdict, with_sprt: bool) -> u8 {
    match verdict {
        Verdict::Accepted(SprtState::H1) => 0,
        Verdict::Accepted(SprtState::H0) => 1,
        Verdict::Accepted(SprtState::Continue) => 3,
        Verdict::Complete if with_sprt => 3,
        Verdict::Complete => 0,
        Verdict::Interrupted => 130,
        Verdict::Fault(_) => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_store::Location;

    fn quick_config(dir: &Path, extra: &str) -> RunConfig {
        let text = format!(
            "rounds = 1\n{extra}\n[[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
             [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n[each]\nnodes = 50\nhash = 0\n"
        );
        let path = dir.join("run.toml");
        std::fs::write(&path, text).unwrap();
        RunConfig::load(&path).unwrap()
    }

    /// Rerunning resumes the unfinished run with its seed; an edited configuration is refused
    /// naming the change; after the run finishes, the same configuration starts `NAME-2` with
    /// a seed of its own; `--resume` by name finds it with its stored configuration.
    #[tokio::test]
    async fn a_configuration_resumes_its_run_refuses_edits_and_starts_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("runs.db").display().to_string();
        let store = Store::open(&Location::parse(&location)).await.unwrap();
        let config = quick_config(dir.path(), "name = \"trial\"");

        let first = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        assert_eq!(first.how, "new run");
        let (run, seed) = (first.run, first.seed);
        drop(first);
        let again = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        assert_eq!(
            (again.run, again.seed, again.how.as_str()),
            (run, seed, "resumed")
        );
        drop(again);

        let edited = quick_config(
            dir.path(),
            "name = \"trial\"\n[adjudication]\nmaxmoves = 40",
        );
        match open_match(&store, edited, dir.path(), &location, None).await {
            Err(LifecycleError::Edited {
                name, differences, ..
            }) => {
                assert_eq!(name, "trial");
                assert!(
                    differences.iter().any(|d| d.contains("maxmoves")),
                    "{differences:?}"
                );
            }
            other => panic!("expected Edited, got {:?}", other.map(|o| o.run)),
        }

        store
            .finish_run(run, arbiter_store::RunOutcome::Complete)
            .await
            .unwrap();
        let next = open_match(&store, config, dir.path(), &location, None)
            .await
            .unwrap();
        assert_ne!(next.run, run);
        assert!(next.how.contains("is finished"), "{}", next.how);
        let lineage = lineage(&store, "trial").await.unwrap();
        assert_eq!(lineage.next_name, "trial-3");
        assert_eq!(lineage.unfinished().map(|r| r.id), Some(next.run));
        let next_run = next.run;
        drop(next);

        let resumed = resume_match(&store, "trial-2", &location).await.unwrap();
        assert_eq!(resumed.run, next_run);
        assert_eq!(resumed.base, std::path::absolute(dir.path()).unwrap());
        assert!(matches!(
            resume_match(&store, "nothing", &location).await,
            Err(LifecycleError::NoSuchRun { .. })
        ));
    }

    /// A new run records each in-process staunton by the bench it prints with the run's
    /// parameters (a parameter file's values included), so that rerunning the configuration,
    /// which names no bench, resumes it as no edit; a run stored by an arbiter whose staunton
    /// printed another count is refused on resume, by `--resume` and by its configuration,
    /// naming the engine and both counts; a stated bench that is wrong creates no run.
    #[tokio::test]
    async fn a_run_pins_its_builtin_engines_by_bench_and_refuses_another_staunton() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("runs.db").display().to_string();
        let store = Store::open(&Location::parse(&location)).await.unwrap();
        std::fs::write(dir.path().join("dev.toml"), "nmp_base = 2\n").unwrap();
        let text = "name = \"pinned\"\nrounds = 1\n[[engine]]\nname = \"dev\"\n\
                    builtin = \"staunton\"\nparams_file = \"dev.toml\"\nparams = { rfp_margin = 90 }\n\
                    [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n\
                    [each]\nnodes = 50\nhash = 0\n";
        let config = RunConfig::parse(text, "run.toml").unwrap();
        let bench = |params: &staunton::Params| {
            staunton::bench::run(params, staunton::bench::DEFAULT_BENCH_DEPTH, |_, _, _| {}).nodes
        };
        let mut dev = staunton::Params::default();
        dev.set("nmp_base", 2).unwrap();
        dev.set("rfp_margin", 90).unwrap();
        let expected = [bench(&dev), bench(&staunton::Params::default())];
        assert_ne!(
            expected[0], expected[1],
            "the two sides must play differently"
        );

        let first = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        let run = first.run;
        drop(first);
        let stored =
            RunConfig::parse(&store.run(run).await.unwrap().spec.config, "stored").unwrap();
        let pinned: Vec<Option<u64>> = stored.engines.iter().map(|e| e.bench).collect();
        assert_eq!(pinned, expected.map(Some));
        let again = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        assert_eq!((again.run, again.how.as_str()), (run, "resumed"));
        drop(again);
        // The parameter file edited since: the same text, another engine.
        std::fs::write(dir.path().join("dev.toml"), "nmp_base = 4\n").unwrap();
        assert!(matches!(
            open_match(&store, config.clone(), dir.path(), &location, None).await,
            Err(LifecycleError::Bench(why)) if why.starts_with("engine dev:")
        ));
        std::fs::write(dir.path().join("dev.toml"), "nmp_base = 2\n").unwrap();

        // The same run as an arbiter whose default staunton printed another count stored it.
        let mut other = stored.clone();
        other.engines[1].bench = Some(expected[1] + 1);
        other.name = Some("other-build".into());
        let spec = RunSpec::head_to_head(
            "other-build".into(),
            5,
            other.canonical(),
            "dev".into(),
            "base".into(),
            1,
        );
        store.create_run(&spec).await.unwrap();
        let refusals = [
            resume_match(&store, "other-build", &location).await.err(),
            open_match(
                &store,
                RunConfig {
                    name: Some("other-build".into()),
                    ..config.clone()
                },
                dir.path(),
                &location,
                None,
            )
            .await
            .err(),
        ];
        for refusal in refusals {
            match refusal {
                Some(LifecycleError::Bench(why)) => {
                    let counts = format!(
                        "engine base: its bench here is {} nodes, but the run expects {} \
                         (in-process staunton of another arbiter version",
                        expected[1],
                        expected[1] + 1
                    );
                    assert!(why.starts_with(&counts), "{why}");
                }
                other => panic!("expected a bench refusal, got {other:?}"),
            }
        }

        let mut wrong = config.clone();
        wrong.name = Some("stated".into());
        wrong.engines[0].bench = Some(expected[0] + 1);
        assert!(matches!(
            open_match(&store, wrong, dir.path(), &location, None).await,
            Err(LifecycleError::Bench(_))
        ));
        assert!(store.find_run_by_name("stated").await.unwrap().is_none());
    }

    /// A run records its UCI engines' binaries by their SHA-256 when it is created (an older
    /// run, when it is first resumed); rerunning it with another binary at the same path is
    /// refused, naming the engine and both signatures, and is accepted again once the binary is
    /// restored.
    #[tokio::test]
    async fn a_run_is_resumed_only_by_the_binaries_it_was_started_with() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("runs.db").display().to_string();
        let store = Store::open(&Location::parse(&location)).await.unwrap();
        let engine = dir.path().join("engine.sh");
        let first_build = b"#!/bin/sh\nexec stockfish\n";
        std::fs::write(&engine, first_build).unwrap();
        let text = "name = \"binaries\"\nrounds = 1\n[[engine]]\nname = \"dev\"\n\
                    cmd = \"./engine.sh\"\n[[engine]]\nname = \"base\"\n\
                    builtin = \"staunton\"\n[each]\nnodes = 50\nhash = 0\n";
        let config = RunConfig::parse(text, "run.toml").unwrap();
        let sha = |bytes: &[u8]| format!("sha256:{}", arbiter_store::sha256_hex(bytes));

        let first = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        let run = first.run;
        drop(first);
        let recorded = store.engine_signatures(run).await.unwrap();
        assert_eq!(recorded[0], Some(sha(first_build)));

        let rebuilt = b"#!/bin/sh\nexec stockfish # rebuilt\n";
        std::fs::write(&engine, rebuilt).unwrap();
        match open_match(&store, config.clone(), dir.path(), &location, None).await {
            Err(LifecycleError::OtherEngine {
                engine,
                stored,
                here,
                ..
            }) => {
                assert_eq!(engine, "dev");
                assert_eq!((stored, here), (sha(first_build), sha(rebuilt)));
            }
            other => panic!("expected OtherEngine, got {:?}", other.map(|o| o.run)),
        }
        assert!(matches!(
            resume_match(&store, "binaries", &location).await,
            Err(LifecycleError::OtherEngine { .. })
        ));
        std::fs::write(&engine, first_build).unwrap();
        let resumed = resume_match(&store, "binaries", &location).await.unwrap();
        assert_eq!(resumed.run, run);
        drop(resumed);

        // A run stored before arbiter recorded a local run's engines adopts them on resume.
        let older = older_run(&store, &config, dir.path(), "older").await;
        assert_eq!(store.engine_signatures(older).await.unwrap(), [None, None]);
        drop(resume_match(&store, "older", &location).await.unwrap());
        let adopted = store.engine_signatures(older).await.unwrap();
        assert_eq!(adopted[0], Some(sha(first_build)));
    }

    /// The run `config` opens, stored as an arbiter before schema 6 stored it: without facts.
    async fn older_run(store: &Store, config: &RunConfig, dir: &Path, name: &str) -> RunId {
        let stored = RunConfig {
            folder: Some(std::path::absolute(dir).unwrap()),
            ..config.clone()
        };
        let mut spec = RunSpec::head_to_head(
            name.into(),
            5,
            stored.canonical(),
            "dev".into(),
            "base".into(),
            1,
        );
        spec.facts = None;
        store.create_run(&spec).await.unwrap()
    }

    /// Issue 19: a run stored before the store kept facts gains them when it is resumed,
    /// whichever way (rerunning its configuration, or `--resume`): the facts today's check
    /// gives its configuration, as a new run's. Facts already stored stay as they are.
    #[tokio::test]
    async fn a_resumed_older_run_gains_its_facts() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("runs.db").display().to_string();
        let store = Store::open(&Location::parse(&location)).await.unwrap();
        let config = quick_config(dir.path(), "name = \"older\"");
        let expected = config.check().unwrap().facts();

        let run = older_run(&store, &config, dir.path(), "older").await;
        let opened = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        assert_eq!((opened.run, opened.how.as_str()), (run, "resumed"));
        drop(opened);
        assert_eq!(
            store.run(run).await.unwrap().spec.facts,
            Some(expected.clone())
        );

        let other = quick_config(dir.path(), "name = \"other\"");
        let run = older_run(&store, &other, dir.path(), "other").await;
        let resumed = resume_match(&store, "other", &location).await.unwrap();
        assert_eq!(resumed.run, run);
        drop(resumed);
        let facts = store.run(run).await.unwrap().spec.facts;
        assert_eq!(facts, Some(expected));
        assert_eq!(older_run_facts(&store.run(run).await.unwrap()).ok(), facts);
    }

    /// A run whose stored configuration no longer reads has no facts to give: the error names
    /// the run, in the words the report has always used.
    #[test]
    fn an_older_run_whose_configuration_does_not_read_is_named() {
        let spec = RunSpec::head_to_head(
            "r".into(),
            1,
            "rounds = \"many\"".into(),
            "a".into(),
            "b".into(),
            4,
        );
        let run = Run {
            id: RunId::new(3),
            spec,
            state: RunState::Running,
            created_at: std::time::UNIX_EPOCH,
            updated_at: std::time::UNIX_EPOCH,
        };
        let error = older_run_facts(&run).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "run 3 (r) was stored before arbiter kept a run's facts, and its stored \
                 configuration no longer reads: "
            ),
            "{error}"
        );
    }

    /// A second holder of a run is refused while the first holds its lock.
    #[tokio::test]
    async fn an_opened_run_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("runs.db").display().to_string();
        let store = Store::open(&Location::parse(&location)).await.unwrap();
        let config = quick_config(dir.path(), "");
        let held = open_match(&store, config.clone(), dir.path(), &location, None)
            .await
            .unwrap();
        assert!(matches!(
            open_match(&store, config, dir.path(), &location, None).await,
            Err(LifecycleError::Store(_))
        ));
        drop(held);
    }

    #[test]
    fn exit_statuses_gate_on_the_verdict() {
        assert_eq!(exit_status(&Verdict::Accepted(SprtState::H1), true), 0);
        assert_eq!(exit_status(&Verdict::Accepted(SprtState::H0), true), 1);
        assert_eq!(exit_status(&Verdict::Complete, true), 3);
        assert_eq!(exit_status(&Verdict::Complete, false), 0);
        assert_eq!(exit_status(&Verdict::Fault("crash".into()), false), 3);
    }
}
