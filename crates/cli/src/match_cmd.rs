//! `arbiter match`: a local match or SPRT, from a TOML config or the cutechess grammar.
//!
//! Wiring only: the runner plays, the store keeps, the statistics crate judges. This module
//! opens the store, finds or creates the run (the same command finds the same run, so
//! rerunning it resumes), starts the match, and routes its events to the terminal (progress
//! bar and cutechess-style lines), the JSON-lines file and the PGN export.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use arbiter_runner::config::RunConfig;
use arbiter_runner::outputs;
use arbiter_runner::tournament::{run_match, Event, MatchSpec, Verdict};
use arbiter_stats::SprtState;
use arbiter_store::{Location, RunId, RunSpec, Store};
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
    /// Print the final summary as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    quiet: bool,
}

/// Runs `arbiter match`.
pub fn run(args: &MatchArgs) -> anyhow::Result<ExitCode> {
    run_async_with(args, None)
}

/// Runs a match from an already-parsed configuration (the cutechess grammar).
pub fn run_config(config: RunConfig, json: bool) -> anyhow::Result<ExitCode> {
    let args = MatchArgs {
        config: None,
        resume: None,
        store: None,
        json,
        quiet: false,
    };
    run_async_with(&args, Some(config))
}

fn run_async_with(args: &MatchArgs, config: Option<RunConfig>) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(run_async(args, config))
}

async fn run_async(args: &MatchArgs, given: Option<RunConfig>) -> anyhow::Result<ExitCode> {
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
    let store = Arc::new(
        Store::open(&Location::parse(&location))
            .await
            .with_context(|| format!("open the store {location}"))?,
    );

    // Find the run: by --resume, else by the configuration's name (rerunning resumes).
    let (config, run, seed) = match &args.resume {
        Some(key) => {
            let found = match key.parse::<i64>() {
                Ok(id) => Some(store.run(RunId::new(id)).await?),
                Err(_) => store.find_run_by_name(key).await?,
            };
            let Some(found) = found else {
                bail!("--resume {key}: no such run in {location}")
            };
            let config = RunConfig::parse(
                &found.spec.config,
                &format!("run {} in {location}", found.id),
            )?;
            (config, found.id, found.spec.seed)
        }
        None => {
            let config = file_config.expect("a configuration");
            let name = config.run_name();
            match store.find_run_by_name(&name).await? {
                Some(found) => (config, found.id, found.spec.seed),
                None => {
                    let seed = config.seed();
                    // Resolve first: a configuration that cannot run never creates a run.
                    let pairs_planned = config.resolve(&base, seed)?.pairs;
                    let spec = RunSpec {
                        name,
                        seed,
                        config: config.canonical(),
                        first_engine: config
                            .engines
                            .first()
                            .map(|e| e.name.clone())
                            .unwrap_or_default(),
                        second_engine: config
                            .engines
                            .get(1)
                            .map(|e| e.name.clone())
                            .unwrap_or_default(),
                        pairs_planned,
                    };
                    let id = store.create_run(&spec).await?;
                    (config, id, seed)
                }
            }
        }
    };
    let spec = Arc::new(config.resolve(&base, seed)?);
    for warning in &spec.book.warnings {
        eprintln!("warning: {warning}");
    }
    let done_before = store.committed_pair_indices(run).await?.len() as u64;
    println!(
        "Run {run} ({}): {} vs {}, {} pairs, {} in the store",
        config.run_name(),
        spec.players[0].name,
        spec.players[1].name,
        spec.pairs,
        done_before
    );

    let pgn_path = config.pgnout.as_ref().map(|p| base.join(p));
    let jsonl_path = config.jsonl.as_ref().map(|p| base.join(p));
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
    });
    let show_bar = !args.quiet && std::io::stderr().is_terminal();
    let reporter = tokio::spawn(report(
        spec.clone(),
        events_rx,
        jsonl_path.clone(),
        show_bar,
        done_before,
    ));
    let summary = run_match(spec.clone(), store.clone(), run, events_tx, cancel_rx).await?;
    let _ = reporter.await;

    if let Some(path) = &pgn_path {
        let count = outputs::export_pgn(&store, run, path).await?;
        println!(
            "PGN: {} ({count} games, exported from the store)",
            path.display()
        );
    }
    if let Some(path) = config.epdout.as_ref().map(|p| base.join(p)) {
        let count = outputs::export_epd(&store, run, &path).await?;
        println!("EPD: {} ({count} final positions)", path.display());
    }
    let sprt = spec.sprt.as_ref().zip(summary.sprt);
    for line in outputs::score_lines(
        &spec.players[0].name,
        &spec.players[1].name,
        &summary.totals,
        sprt,
    ) {
        println!("{line}");
    }
    let json = outputs::summary_json(
        run,
        summary.verdict.as_str(),
        &summary.totals,
        sprt,
        pgn_path.as_deref(),
    );
    if let Some(path) = &jsonl_path {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(file, "{json}")?;
        println!("JSON: {}", path.display());
    }
    if args.json {
        println!("{json}");
    }
    let code = match &summary.verdict {
        Verdict::Accepted(SprtState::H1) => 0,
        Verdict::Accepted(SprtState::H0) => 1,
        Verdict::Accepted(SprtState::Continue) => 3,
        Verdict::Complete if spec.sprt.is_some() => 3,
        Verdict::Complete => 0,
        Verdict::Interrupted => {
            println!("Interrupted: resume with `arbiter match --resume {run} --store {location}`");
            130
        }
        Verdict::Fault(reason) => {
            println!("Stopped after an engine fault (recover is off): {reason}");
            3
        }
    };
    println!("Finished run {run}: {}", summary.verdict.as_str());
    Ok(ExitCode::from(code))
}

/// Consumes the match's events: terminal lines, progress bar, JSON lines.
async fn report(
    spec: Arc<MatchSpec>,
    mut events: mpsc::UnboundedReceiver<Event>,
    jsonl: Option<PathBuf>,
    show_bar: bool,
    done_before: u64,
) {
    let total_games = 2 * spec.pairs;
    let bar = show_bar.then(|| {
        let bar = ProgressBar::new(spec.pairs);
        bar.set_position(done_before);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} pairs {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let mut jsonl = jsonl.and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    });
    let (first, second) = (spec.players[0].name.as_str(), spec.players[1].name.as_str());
    let print = |line: String| match &bar {
        Some(bar) => bar.println(line),
        None => println!("{line}"),
    };
    while let Some(event) = events.recv().await {
        match event {
            Event::GameStarted {
                number,
                white,
                black,
                ..
            } => print(outputs::started_line(number, total_games, &white, &black)),
            Event::GameFinished {
                number,
                record,
                json,
                ..
            } => {
                print(outputs::finished_line(number, &record));
                if let Some(file) = jsonl.as_mut() {
                    let _ = writeln!(file, "{json}");
                }
            }
            Event::PairCommitted { totals, sprt, .. } => {
                let sprt = spec.sprt.as_ref().zip(sprt);
                let lines = outputs::score_lines(first, second, &totals, sprt);
                if let Some(bar) = &bar {
                    bar.set_position(totals.pairs);
                    bar.set_message(
                        lines.get(1).cloned().unwrap_or_default()
                            + " "
                            + &sprt
                                .map(|(s, st)| outputs::sprt_line(s, &st))
                                .unwrap_or_default(),
                    );
                }
                for line in lines {
                    print(line);
                }
            }
            Event::Warning(text) => print(format!("Warning: {text}")),
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
