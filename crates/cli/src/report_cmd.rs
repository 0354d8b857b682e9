//! `arbiter report RUN`: plotted results of a stored run as HTML, Markdown and JSON; for a
//! tuning run, each parameter's path and the confirmation SPRT.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use arbiter_report::{Format, Report, RunData, TuningData, TuningReport};
use arbiter_runner::lifecycle;
use arbiter_store::{Location, RunId, Store, StoreError, Upgrade};

#[derive(clap::Args)]
pub struct ReportArgs {
    /// The run, by id or name (as `arbiter match --resume` takes it).
    run: String,
    /// The database holding the run (`--db`, as the fleet's commands name it, is the same).
    #[arg(long, visible_alias = "db", default_value = "arbiter.db")]
    store: String,
    /// Where to write the report (default: report-RUN/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Comma-separated formats: html (index.html), md (summary.md and the charts as SVG files),
    /// json (report.json).
    #[arg(long, default_value = "html,md,json")]
    format: String,
}

/// Runs `arbiter report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let formats = args
        .format
        .split(',')
        .map(str::parse::<Format>)
        .collect::<Result<Vec<Format>, String>>()
        .map_err(|e| anyhow::anyhow!("--format: {e}"))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("report-{}", args.run)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the runtime")?;
    let (written, markdown) = match runtime.block_on(load(args))? {
        Loaded::Match(data) => {
            let report = Report::build(&data)?;
            (report.write(&out, &formats), report.markdown())
        }
        Loaded::Tuning(data) => {
            let report = TuningReport::build(&data)?;
            (report.write(&out, &formats), report.markdown())
        }
    };
    let written = written.with_context(|| format!("write the report into {}", out.display()))?;
    // GitHub Actions shows this file on the run's page: the Markdown goes there as well.
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        let path = PathBuf::from(summary);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(markdown.as_bytes()))
            .with_context(|| format!("append to GITHUB_STEP_SUMMARY {}", path.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    for path in written {
        let _ = writeln!(stdout, "{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// A run as its report reads it: a match (or tournament) by its games, a tuning run by its steps.
enum Loaded {
    Match(RunData),
    Tuning(TuningData),
}

async fn load(args: &ReportArgs) -> anyhow::Result<Loaded> {
    let location = &args.store;
    // A report reads: a mistyped path, an empty file or another program's database must not
    // become a store, and a store is not written to.
    let store = Store::open_read_only(&Location::parse(location))
        .await
        .with_context(|| format!("open the store {location}"))?;
    let key = &args.run;
    let found = match key.parse::<i64>() {
        Ok(id) => match store.run(RunId::new(id)).await {
            Ok(run) => Some(run),
            Err(StoreError::UnknownRun { .. }) => None,
            Err(err) => return Err(err.into()),
        },
        Err(_) => store.find_run_by_name(key).await?,
    };
    let Some(found) = found else {
        bail!("run {key}: no such run in {location}")
    };
    // A run stored by an older arbiter lacks what this build reads (its facts; a tuning run's
    // link to its confirmation): computed from what it stored, written back when the store can
    // be written (opened for writing only then), else only read through.
    let upgrade = lifecycle::older_run_upgrade(&store, &found).await?;
    if !upgrade.is_empty() {
        if let Err(err) = store_upgrade(location, &upgrade).await {
            eprintln!(
                "warning: run {key} was stored by an older arbiter: reported from what it \
                 stored, without upgrading the store ({err:#})"
            );
        }
    }
    let data = match TuningData::load_with(&store, found.id, &upgrade).await? {
        Some(tuning) => Loaded::Tuning(tuning),
        None => Loaded::Match(RunData::load_with(&store, found.id, &upgrade).await?),
    };
    store.close().await;
    Ok(data)
}

/// Writes `upgrade` into the store at `location`, opened for writing for that alone.
async fn store_upgrade(location: &str, upgrade: &Upgrade) -> anyhow::Result<()> {
    let store = Store::open_existing(&Location::parse(location)).await?;
    let written = store.upgrade(upgrade).await;
    store.close().await;
    Ok(written?)
}
