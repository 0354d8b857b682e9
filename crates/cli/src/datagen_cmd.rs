//! `arbiter datagen`: staunton's self-play, written out as labelled positions for Texel tuning.
//!
//! Wiring only (see `arbiter_tune::datagen` for the why): the configuration and flags give a
//! `DatagenConfig`; the run is found in the store by name (an unfinished one is resumed with
//! its stored seed, a finished one is followed by `NAME-2`, as `arbiter match` does), its
//! openings are generated and written beside the output, the runner plays the games into the
//! store, and the positions file is exported from the store at the end, also after a Ctrl-C.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arbiter_runner::config::RunConfig;
use arbiter_runner::lifecycle::{fresh_seed, lineage};
use arbiter_runner::play::Event;
use arbiter_runner::sinks::{run_match, Verdict};
use arbiter_store::{Location, RunFacts, RunKind, RunSpec, Store};
use arbiter_tune::datagen::{
    export_positions, generate_openings, write_book, DatagenConfig, PositionsSink,
};
use tokio::sync::{mpsc, watch};

#[derive(clap::Args)]
pub struct DatagenArgs {
    /// A TOML configuration (see configs/datagen.toml); flags override its fields.
    config: Option<PathBuf>,
    /// Games to play.
    #[arg(long)]
    games: Option<u64>,
    /// Nodes per move.
    #[arg(long)]
    nodes: Option<u64>,
    /// Random legal moves after each book line.
    #[arg(long)]
    random_plies: Option<u32>,
    /// EPD or PGN book the openings start from (default: the standard position).
    #[arg(long)]
    book: Option<PathBuf>,
    /// The positions file (`FEN [1.0]` lines); the generated book goes beside it.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// The database holding the games (default: the config's `store`, else arbiter.db).
    #[arg(long)]
    store: Option<String>,
    /// Also export the games as PGN.
    #[arg(long)]
    pgnout: Option<PathBuf>,
    /// Games at once.
    #[arg(long)]
    concurrency: Option<usize>,
    /// The run's seed (default: a fresh one for a new run, the stored one when resuming).
    #[arg(long)]
    seed: Option<u64>,
    /// The run's name in the store.
    #[arg(long)]
    name: Option<String>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
}

/// A flag, when given, overrides the configuration's value.
fn set<T: Clone>(field: &mut T, flag: &Option<T>) {
    if let Some(value) = flag {
        field.clone_from(value);
    }
}

/// How often a progress line is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

pub fn run(args: &DatagenArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(arbiter_runner::config::MAX_CONCURRENCY + 512)
        .build()
        .context("start the async runtime")?;
    runtime.block_on(run_async(args))
}

/// The configuration with its paths made relative to the working directory (a config file's
/// paths are relative to the file), then the flags on top.
fn configuration(args: &DatagenArgs) -> anyhow::Result<DatagenConfig> {
    let mut config = match &args.config {
        Some(path) => {
            let mut config = DatagenConfig::load(path)?;
            let base = path.parent().unwrap_or(Path::new(""));
            config.book = config.book.map(|b| base.join(b));
            config.output = base.join(&config.output);
            config.pgnout = config.pgnout.map(|p| base.join(p));
            config.store = config.store.map(|s| match Location::parse(&s) {
                Location::Sqlite(file) => base.join(file).display().to_string(),
                Location::Postgres(url) => url,
            });
            config
        }
        None => DatagenConfig::default(),
    };
    set(&mut config.games, &args.games);
    set(&mut config.nodes, &args.nodes);
    set(&mut config.random_plies, &args.random_plies);
    set(&mut config.output, &args.output);
    set(&mut config.concurrency, &args.concurrency);
    set(&mut config.name, &args.name);
    if args.book.is_some() {
        config.book.clone_from(&args.book);
    }
    if args.pgnout.is_some() {
        config.pgnout.clone_from(&args.pgnout);
    }
    if args.store.is_some() {
        config.store.clone_from(&args.store);
    }
    if args.seed.is_some() {
        config.seed = args.seed;
    }
    config.store.get_or_insert_with(|| "arbiter.db".to_owned());
    config.check()?;
    Ok(config)
}

async fn run_async(args: &DatagenArgs) -> anyhow::Result<ExitCode> {
    let config = configuration(args)?;
    let book = config.load_book()?;
    let location = config.store.clone().expect("set above");
    let store = Store::open(&Location::parse(&location))
        .await
        .with_context(|| format!("open the store {location}"))?;
    let store = Arc::new(store);

    // Find the run as `arbiter match` does: resume the latest unfinished run of this name, or
    // start the next one.
    let runs = lineage(&store, &config.name).await?;
    let resumed = runs.unfinished().cloned();
    let next_name = runs.next_name;
    let (name, seed, how) = match &resumed {
        Some(run) => (run.spec.name.clone(), run.spec.seed, "resumed"),
        None => (next_name, config.seed.unwrap_or_else(fresh_seed), "new run"),
    };
    if let (Some(run), Some(seed)) = (&resumed, config.seed) {
        if seed != run.spec.seed {
            bail!(
                "run {:?} in {location} was started with seed {}, not {seed}: give it another \
                 --name to start a new run, or leave the seed out to resume it",
                run.spec.name,
                run.spec.seed
            );
        }
    }
    let mut run_config: RunConfig = config.run_config(seed);
    run_config.name = Some(name.clone());
    let stored = match &resumed {
        Some(run) => Some(RunConfig::parse(
            &run.spec.config,
            &format!("run {} in {location}", run.id),
        )?),
        None => None,
    };
    // The run records which staunton plays it, as a match does: a resume by another staunton
    // would mix two engines' positions in one data set.
    let run_config = match &stored {
        Some(stored) => run_config.with_pinned_benches(stored),
        None => arbiter_runner::bench::pin_builtin(&run_config, Path::new(".")).await?,
    };
    let stored_text = format!("{}\n{}", config.defining_line(), run_config.canonical());
    if let (Some(run), Some(stored)) = (&resumed, &stored) {
        let mut differences = run_config.differences_from(stored);
        let stored_line = run.spec.config.lines().next().unwrap_or_default();
        if stored_line != config.defining_line() {
            differences.push(format!("{stored_line}\n  -> {}", config.defining_line()));
        }
        if !differences.is_empty() {
            bail!(
                "datagen run {name:?} in {location} was started with other settings, and \
                 continuing it would mix two data sets (stored -> now):\n  {}\nGive this \
                 configuration another name (--name) to start a new run, or restore the settings \
                 to continue the stored one",
                differences.join("\n  ")
            );
        }
    }

    // The openings: regenerated on every start (they are a function of the seed), so a
    // resumed run plays the book it started with even if the file was deleted.
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let openings = {
        let config = config.clone();
        tokio::task::spawn_blocking(move || generate_openings(&config, &book, seed, threads))
            .await
            .context("generate the openings")??
    };
    if let Some(dir) = config.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    write_book(&config.book_path(), &openings)?;
    let checked = run_config.check()?;
    let facts = RunFacts {
        kind: RunKind::Datagen,
        ..checked.facts()
    };
    let spec = Arc::new(checked.resolve(Path::new("."), seed)?);
    arbiter_runner::bench::verify_stated(&run_config, &spec.players)
        .await
        .map_err(|why| anyhow::anyhow!("datagen run {name:?} in {location}: {why}"))?;
    let run = match &resumed {
        Some(run) => run.id,
        None => {
            let engines: Vec<String> = spec.players.iter().map(|p| p.name.clone()).collect();
            store
                .create_run(
                    &RunSpec::head_to_head(
                        name.clone(),
                        seed,
                        stored_text,
                        engines[0].clone(),
                        engines[1].clone(),
                        spec.pairs,
                    )
                    .with_facts(facts),
                )
                .await?
        }
    };
    let _lock = store.lock_run(run).await?;
    let before = store.totals(run).await?;
    let games_before = before.games();
    info(&format!(
        "Datagen run {run} ({name}): {} games of staunton self-play at {} nodes, {} random plies \
         from {}, seed {seed}, {how}, {games_before} games in the store; openings: {} ({:.1} s)",
        spec.games,
        config.nodes,
        config.random_plies,
        config.book.as_ref().map_or_else(
            || "the standard position".to_owned(),
            |b| b.display().to_string()
        ),
        config.book_path().display(),
        started.elapsed().as_secs_f64(),
    ));

    for warning in &spec.warnings {
        info(&format!("warning: {warning}"));
    }

    let (cancel_tx, cancel_rx) = watch::channel(false);
    crate::on_stop_signals(move |_| {
        let _ = cancel_tx.send(true);
    });
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let progress = tokio::spawn(progress(
        events_rx,
        config.filter,
        games_before,
        spec.games,
        !args.quiet,
    ));
    let played = Instant::now();
    let summary = run_match(spec.clone(), store.clone(), run, events_tx, cancel_rx).await?;
    let session = progress.await.unwrap_or_default();
    let seconds = played.elapsed().as_secs_f64();

    let counts = export_positions(&store, run, &config.output, config.filter).await?;
    if let Some(path) = &config.pgnout {
        let games = arbiter_runner::outputs::export_pgn(&store, run, path).await?;
        info(&format!(
            "PGN: {} ({games} games, exported from the store)",
            path.display()
        ));
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "Games: {} (run {run}, {name}, seed {seed})",
        counts.games
    )?;
    writeln!(
        out,
        "Positions: {} written to {}",
        counts.written,
        config.output.display()
    )?;
    writeln!(
        out,
        "Dropped: {} duplicates, {} by the filter (opening plies, checks, captures and \
         promotions, mate scores), of {} positions played from",
        counts.duplicates, counts.filtered, counts.positions
    )?;
    if session.games > 0 && seconds > 0.0 {
        writeln!(
            out,
            "Speed: {:.0} positions/s kept ({} games, {} new positions in {seconds:.1} s this \
             session)",
            session.written as f64 / seconds,
            session.games,
            session.written
        )?;
    }
    drop(out);
    Ok(match summary.verdict {
        Verdict::Interrupted => {
            info(&format!(
                "Stopped: the positions file holds the {} stored games; rerun the same command \
                 to resume run {run}",
                counts.games
            ));
            ExitCode::from(130)
        }
        Verdict::Fault(reason) => {
            info(&format!("Stopped after an engine fault: {reason}"));
            ExitCode::from(3)
        }
        Verdict::Accepted(_) | Verdict::Complete => ExitCode::SUCCESS,
    })
}

/// Counts this session's games as they finish, and prints a line every few seconds: games,
/// positions kept (new, filtered and deduplicated within the session) and their rate.
async fn progress(
    mut events: mpsc::UnboundedReceiver<Event>,
    filter: arbiter_tune::positions::Filter,
    games_before: u64,
    total: u64,
    show: bool,
) -> arbiter_tune::datagen::DatagenCounts {
    let mut sink = PositionsSink::new(filter);
    let start = Instant::now();
    let mut last = start;
    let terminal = std::io::stderr().is_terminal();
    while let Some(event) = events.recv().await {
        if let Event::GameFinished { pgn, .. } = event {
            let _ = sink.add_game(&pgn);
            if show && last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                let c = sink.counts;
                let line = format!(
                    "{}/{total} games, {} positions kept, {:.0} positions/s",
                    games_before + c.games,
                    c.written,
                    c.written as f64 / start.elapsed().as_secs_f64()
                );
                if terminal {
                    let _ = write!(std::io::stderr(), "\r{line}   ");
                } else {
                    info(&line);
                }
            }
        }
    }
    if show && terminal && last != start {
        let _ = writeln!(std::io::stderr());
    }
    sink.counts
}

fn info(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
