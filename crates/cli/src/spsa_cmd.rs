//! `arbiter tune spsa CONFIG`: an SPSA tuning run, resumable, then optionally a confirmation
//! SPRT of the tuned values against the start.
//!
//! Wiring only: `arbiter_tune::spsa_run` reads the configuration and plays the steps, the
//! store keeps them. This module opens the store, finds or creates the run the way `arbiter
//! match` does (the same configuration finds the same run, so rerunning it resumes; an edited
//! one is refused; after a finished run the next is `NAME-2`, unless that run's `[spsa.confirm]`
//! was cut short: then the rerun continues the confirmation), prints progress on stderr, and
//! writes the tuned values: a staunton parameter file (`NAME-tuned.toml`) for the in-process
//! engine or `setoption` lines (`NAME-tuned.uci`) for a UCI engine, and a JSON summary
//! (`NAME-tuned.json`, and on stdout with `--json`). The confirmation SPRT is an ordinary match
//! played by `arbiter match`'s own code, and its exit code is the command's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use arbiter_records::spsa::option_value;
use arbiter_runner::config::{absolute, RunConfig};
use arbiter_runner::play::Event;
use arbiter_runner::player::{PlayerKind, PlayerSpec};
use arbiter_store::{Location, Pairing, RunId, RunSpec, RunState, Store, Totals};
use arbiter_tune::spsa::{Spsa, SpsaParam};
use arbiter_tune::spsa_run::{self, SpsaConfig, StepDone};
use tokio::sync::mpsc;

use arbiter_runner::lifecycle::{fresh_seed, lineage};

#[derive(clap::Args)]
pub struct SpsaArgs {
    /// The tuning configuration: a match configuration with one [[engine]] and an [spsa]
    /// section (see configs/spsa-piece-values.toml).
    config: PathBuf,
    /// The database holding runs (default: the config's `store`, else arbiter.db).
    #[arg(long)]
    store: Option<String>,
    /// Where the tuned values are written (default: the configuration's folder).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the final summary as JSON on stdout (and, after a confirmation SPRT, the match's
    /// summary on the next line; its cutechess lines then go to stderr).
    #[arg(long)]
    json: bool,
}

/// Runs `arbiter tune spsa`.
pub fn run(args: &SpsaArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(arbiter_runner::config::MAX_CONCURRENCY + 512)
        .build()
        .context("start the async runtime")?;
    let confirm = runtime.block_on(tune(args))?;
    drop(runtime);
    match confirm {
        // The match command builds its own runtime: it runs after this one is gone. With
        // `--json`, stdout holds the tuning summary, then the match's, one line each.
        Some((config, tuning)) => crate::match_cmd::run_confirmation(config, args.json, tuning),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// A line of arbiter's own on stderr (stdout is kept for `--json`).
fn info(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Tunes; returns the confirmation match to play, if the configuration asks for one, and the
/// tuning run it confirms.
async fn tune(args: &SpsaArgs) -> anyhow::Result<Option<(RunConfig, RunId)>> {
    let config = SpsaConfig::load(&args.config)?;
    let base = args
        .config
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    // Judged and resolved before anything is opened or created: a configuration that cannot
    // run leaves no store behind. The seed only places the openings; it is the run's, set
    // below once the run is found or created.
    let match_config = config.match_config()?;
    // A `[log]` table, opened here, logs the steps' engines as it logs a match's (each step's
    // match takes the base's log).
    let checked = match_config.check()?;
    let facts = checked.facts();
    let mut spec = checked.resolve(&base, 0)?;
    let name = config.engine_name().to_owned();
    let [plus, minus] = spsa_run::side_names(&name);
    spec.players[0].name = plus;
    spec.players[1].name = minus;
    let params = config.params(&spec.players[0], &base)?;
    if let Some(file) = &config.spsa.params_file {
        // A UCI engine is asked what it declares before anything is played or stored.
        spsa_run::check_uci_options(
            &spec.players[0],
            config.engine_name(),
            &params,
            &base.join(file),
        )
        .await?;
    }
    let spsa = Spsa::new(params, config.hyper(spec.concurrency))?;
    let setup = spsa.setup().tuning_setup();
    // The confirmation's own settings (its SPRT bounds) are judged now, not after the tuning.
    if let Some(confirm) = &config.spsa.confirm {
        confirm_config(&config, confirm, &base, "", &spsa, &spsa.start())
            .check()
            .context("spsa.confirm")?;
    }
    let location = args
        .store
        .clone()
        .or_else(|| {
            config
                .run
                .store
                .clone()
                .map(|s| base.join(s).display().to_string())
        })
        .unwrap_or_else(|| "arbiter.db".to_owned());
    let store = Store::open(&Location::parse(&location))
        .await
        .with_context(|| format!("open the store {location}"))?;

    let runs = lineage(&store, &config.run_name()).await?;
    let next_name = runs.next_name;
    let existing = match runs.latest {
        Some(run) if !matches!(run.state, RunState::Finished { .. }) => Some(run),
        // Tuned to the end, but its confirmation was cut short (or never started): the rerun
        // continues that, instead of tuning all over again as `NAME-2`.
        Some(run)
            if confirmation_pending(&store, &run, &config, &spsa, &base, &location).await? =>
        {
            Some(run)
        }
        _ => None,
    };
    let seed = match &existing {
        Some(run) => run.spec.seed,
        None => config.run.seed.unwrap_or_else(fresh_seed),
    };
    spec.seed = seed;
    for warning in &spec.warnings {
        info(&format!("warning: {warning}"));
    }

    let (run, how) = match existing {
        Some(found) => {
            let Some(stored_setup) = store.tuning_setup(found.id).await? else {
                bail!(
                    "run {:?} in {location} is a match, not a tuning run: give this                      configuration another `name` (or another store)",
                    found.spec.name
                );
            };
            let origin = format!("run {} in {location}", found.id);
            let stored = SpsaConfig::parse(&found.spec.config, &origin)?;
            let mut differences = config.differences_from(&stored);
            if stored_setup != setup {
                differences.push(format!(
                    "the parameters or hyper-parameters (a params_file edited?): {} -> {}",
                    stored_setup.setup, setup.setup
                ));
            }
            if !differences.is_empty() {
                bail!(
                    "tuning run {:?} in {location} was started with another configuration, and \
                     continuing it would mix two experiments (stored -> now):\n  {}\nTo start a \
                     new run, give this configuration another `name` (or another store); to \
                     continue the stored run, restore those settings",
                    found.spec.name,
                    differences.join("\n  ")
                );
            }
            let how = if matches!(found.state, RunState::Finished { .. }) {
                "tuning finished; continuing its confirmation"
            } else {
                "resumed"
            };
            (found.id, how)
        }
        None => {
            let run_spec = RunSpec {
                name: next_name,
                seed,
                config: config.canonical(),
                engines: spec.players.iter().map(|p| p.name.clone()).collect(),
                pairings: vec![Pairing {
                    first: 0,
                    second: 1,
                    pairs_planned: spsa.hyper().pairs,
                }],
                facts: Some(spsa_run::tuning_facts(&spsa, facts)),
                confirms: None,
            };
            (store.create_tuning_run(&run_spec, &setup).await?, "new run")
        }
    };
    // One process plays a run; the lock goes with the process however it ends, so a run
    // killed with kill -9 resumes at once.
    let _lock = store.lock_run(run).await?;
    let resumed = spsa_run::resume_point(&spsa, &store, run).await?;
    let hyper = spsa.hyper();
    info(&format!(
        "SPSA run {run} ({}, {how}), seed {seed}: {} parameter(s) of {name}, {} pairs in {} \
         steps of {} pairs, {} games at once{}",
        store.run(run).await?.spec.name,
        spsa.params().len(),
        hyper.pairs,
        spsa.steps(),
        hyper.pairs_per_step,
        spec.concurrency,
        if resumed.steps_done > 0 {
            format!("; {} step(s) done, resuming", resumed.steps_done)
        } else {
            String::new()
        }
    ));

    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let warnings = tokio::spawn(async move {
        while let Some(event) = events_rx.recv().await {
            if let Event::Warning(text) = event {
                info(&format!("warning: {text}"));
            }
        }
    });
    let interval = (spsa.steps() / 20).max(1);
    let mut since_last = Totals::default();
    let mut progress = |done: &StepDone| {
        since_last.pairs += done.totals.pairs;
        since_last.wins += done.totals.wins;
        since_last.draws += done.totals.draws;
        since_last.losses += done.totals.losses;
        let last = done.step + 1 == done.steps;
        if (done.step + 1).is_multiple_of(interval) || last {
            info(&progress_line(&spsa, done, &since_last));
            since_last = Totals::default();
        }
    };
    let theta = spsa_run::play_steps(&spsa, &spec, &store, run, &events_tx, &mut progress).await?;
    drop(events_tx);
    let _ = warnings.await;

    let steps = store.tuning_steps(run).await?;
    let mut totals = Totals::default();
    for s in &steps {
        let t = s.step.totals;
        totals.pairs += t.pairs;
        totals.wins += t.wins;
        totals.draws += t.draws;
        totals.losses += t.losses;
    }
    info(&format!(
        "Finished SPSA run {run}: {} steps, {} games (+{} ={} -{} for the plus side)",
        steps.len(),
        2 * totals.pairs,
        totals.wins,
        totals.draws,
        totals.losses
    ));
    for line in value_table(&spsa, &theta) {
        info(&line);
    }
    let out = args.out.clone().unwrap_or_else(|| base.clone());
    std::fs::create_dir_all(&out)
        .with_context(|| format!("create the output folder {}", out.display()))?;
    let tuned_file = write_tuned(&out, &name, &spec.players[0], spsa.params(), &theta)?;
    info(&format!("Tuned values: {}", tuned_file.display()));
    let summary = summary_json(run, seed, &spsa, &theta, &totals, &tuned_file);
    let json_path = out.join(format!("{name}-tuned.json"));
    std::fs::write(&json_path, format!("{summary}\n"))
        .with_context(|| format!("write {}", json_path.display()))?;
    info(&format!("Summary: {}", json_path.display()));
    if args.json {
        let _ = writeln!(std::io::stdout(), "{summary}");
    }
    store.close().await;

    Ok(match &config.spsa.confirm {
        Some(confirm) => {
            info("Confirming: an SPRT of the tuned values against the start values");
            Some((
                confirm_config(&config, confirm, &base, &location, &spsa, &theta),
                run,
            ))
        }
        None => None,
    })
}

/// Whether the finished tuning run `run` still owes this configuration its `[spsa.confirm]`:
/// it was made with this very configuration, and the confirmation match of its final values is
/// not in the store or not finished. The confirmation is found by the name its own
/// configuration derives (what `arbiter match` finds a run again by): that configuration is a
/// function of the tuning configuration and the run's stored final values, so it is the same
/// match however often the command is rerun, and `arbiter match`'s code resumes it with its
/// committed pairs.
async fn confirmation_pending(
    store: &Store,
    run: &arbiter_store::Run,
    config: &SpsaConfig,
    spsa: &Spsa,
    base: &Path,
    location: &str,
) -> anyhow::Result<bool> {
    let Some(confirm) = &config.spsa.confirm else {
        return Ok(false);
    };
    let setup = spsa.setup().tuning_setup();
    if store.tuning_setup(run.id).await? != Some(setup) {
        return Ok(false);
    }
    let same = SpsaConfig::parse(&run.spec.config, &format!("run {}", run.id))
        .is_ok_and(|stored| config.differences_from(&stored).is_empty());
    if !same {
        return Ok(false);
    }
    let theta = spsa_run::resume_point(spsa, store, run.id).await?.theta;
    let matched = confirm_config(config, confirm, base, location, spsa, &theta);
    let confirmation = lineage(store, &matched.run_name()).await?.latest;
    Ok(confirmation.is_none_or(|c| !matches!(c.state, RunState::Finished { .. })))
}

/// `step 12/50, iteration 88: +14 =52 -14 over the last 40 pairs; knight_mg 2.43 (start
/// 2.00), ...`
fn progress_line(spsa: &Spsa, done: &StepDone, since: &Totals) -> String {
    let values: Vec<String> = spsa
        .params()
        .iter()
        .zip(&done.theta)
        .map(|(p, &v)| format!("{} {} (start {})", p.name, p.shown(v), p.shown(p.start)))
        .collect();
    format!(
        "step {}/{}, iteration {}: +{} ={} -{} over the last {} pairs; {}",
        done.step + 1,
        done.steps,
        done.iteration + done.totals.pairs,
        since.wins,
        since.draws,
        since.losses,
        since.pairs,
        values.join(", ")
    )
}

/// The tuned values beside the start values, one line per parameter.
fn value_table(spsa: &Spsa, theta: &[f64]) -> Vec<String> {
    let mut lines = vec![format!(
        "{:<24} {:>10} {:>10}",
        "parameter", "start", "tuned"
    )];
    for (p, &v) in spsa.params().iter().zip(theta) {
        lines.push(format!(
            "{:<24} {:>10} {:>10}",
            p.name,
            p.shown(p.start),
            p.shown(v)
        ));
    }
    lines
}

/// Writes the tuned values as the engine takes them: a staunton parameter file (every
/// parameter, the tuned ones changed) or `setoption` lines.
fn write_tuned(
    out: &Path,
    name: &str,
    player: &PlayerSpec,
    params: &[SpsaParam],
    theta: &[f64],
) -> anyhow::Result<PathBuf> {
    let (path, text) = match &player.kind {
        PlayerKind::Builtin(builtin) => {
            let mut tuned = builtin.params.clone();
            for (p, &v) in params.iter().zip(theta) {
                tuned
                    .set(&p.name, p.engine_value(v) as i64)
                    .with_context(|| format!("tuned value of {}", p.name))?;
            }
            (out.join(format!("{name}-tuned.toml")), tuned.to_toml())
        }
        PlayerKind::Uci(_) => {
            let lines: String = params
                .iter()
                .zip(theta)
                .map(|(p, &v)| {
                    format!(
                        "setoption name {} value {}\n",
                        p.name,
                        option_value(p.kind, p.engine_value(v))
                    )
                })
                .collect();
            (out.join(format!("{name}-tuned.uci")), lines)
        }
    };
    std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}

fn summary_json(
    run: RunId,
    seed: u64,
    spsa: &Spsa,
    theta: &[f64],
    totals: &Totals,
    tuned_file: &Path,
) -> serde_json::Value {
    let params: Vec<serde_json::Value> = spsa
        .params()
        .iter()
        .zip(theta)
        .map(|(p, &v)| {
            serde_json::json!({
                "name": p.name,
                "kind": p.kind,
                "start": p.start,
                "theta": v,
                "tuned": p.engine_value(v),
                "min": p.min,
                "max": p.max,
            })
        })
        .collect();
    serde_json::json!({
        "run": run.get(),
        "seed": seed,
        "hyper": spsa.hyper(),
        "steps": spsa.steps(),
        "games": 2 * totals.pairs,
        "wins": totals.wins,
        "draws": totals.draws,
        "losses": totals.losses,
        "params": params,
        "tuned_file": tuned_file.display().to_string(),
    })
}

/// The confirmation match: the tuned engine (`NAME-tuned`) against the start values
/// (`NAME-start`), with `[spsa.confirm]`'s SPRT, on the same store, limits and book. Paths are
/// made absolute, since the match command reads a given configuration from the current folder.
fn confirm_config(
    config: &SpsaConfig,
    confirm: &spsa_run::ConfirmSection,
    base: &Path,
    location: &str,
    spsa: &Spsa,
    theta: &[f64],
) -> RunConfig {
    let from_base = |p: &Path| absolute(base, p);
    let mut run = config.run.clone();
    let mut engine = run.engines[0].clone();
    if let Some(cmd) = &engine.cmd {
        if cmd.components().count() > 1 {
            engine.cmd = Some(from_base(cmd));
        }
    }
    engine.dir = engine.dir.as_deref().map(from_base);
    engine.params_file = engine.params_file.as_deref().map(from_base);
    let at = |suffix: &str, values: &[f64]| {
        let mut e = engine.clone();
        e.name = format!("{}-{suffix}", engine.name);
        for (p, &v) in spsa.params().iter().zip(values) {
            let v = p.engine_value(v);
            if e.builtin.is_some() {
                e.params.insert(p.name.clone(), v as i64);
            } else {
                e.settings
                    .options
                    .insert(p.name.clone(), option_value(p.kind, v));
            }
        }
        e
    };
    run.engines = vec![at("tuned", theta), at("start", &spsa.start())];
    run.name = None;
    run.sprt = Some(confirm.sprt());
    run.rounds = confirm.rounds;
    run.store = Some(location.to_owned());
    run.openings.file = run.openings.file.as_deref().map(from_base);
    run.pgnout = run.pgnout.as_deref().map(from_base);
    run.jsonl = run.jsonl.as_deref().map(from_base);
    run.epdout = run.epdout.as_deref().map(from_base);
    run.report = run.report.as_deref().map(from_base);
    run
}
