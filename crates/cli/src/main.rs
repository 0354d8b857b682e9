//! The `arbiter` command line: parses arguments and wires the library crates together. No
//! chess or statistics logic lives here.

use std::io::Write;
use std::process::ExitCode;

use arbiter_runner::config::cutechess;
use clap::{Parser, Subcommand};

/// `println!` that hands the write's error back instead of panicking, so that a reader who
/// closes the pipe (`arbiter sprt ... | head -1`) ends the command quietly (see `main`), and a
/// full disk is an error like any other.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)
    }};
}

/// `print!` as [`outln!`] is `println!`.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*)
    }};
}

mod admin_cmd;
#[cfg(test)]
mod architecture;
mod book_cmd;
mod datagen_cmd;
#[cfg(test)]
mod distributed_docs;
mod fleet_cmd;
mod match_cmd;
mod perft_cmd;
mod rate_cmd;
mod report_cmd;
mod serve_cmd;
mod sprt_cmd;
mod spsa_cmd;
mod texel_cmd;

/// Test, tune and rank chess engines.
#[derive(Parser)]
#[command(name = "arbiter", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a match (or SPRT) from a TOML configuration; rerunning resumes it.
    Match(match_cmd::MatchArgs),
    /// Count the leaves of the legal move tree (the output format of Stockfish's `go perft`).
    Perft(perft_cmd::PerftArgs),
    /// Elo, LOS, normalized Elo and the SPRT verdict from match counts; or, with --expect, the
    /// SPRT calculator.
    Sprt(sprt_cmd::SprtArgs),
    /// A rating list (maximum-likelihood Elo) from the games of PGN files.
    Rate(rate_cmd::RateArgs),
    /// Plotted results of a stored run: an HTML page, a Markdown summary and JSON.
    Report(report_cmd::ReportArgs),
    /// Labelled positions for Texel tuning from staunton's self-play; rerunning resumes it.
    Datagen(datagen_cmd::DatagenArgs),
    /// Opening books: generate one, check one, convert between EPD, PGN and Polyglot.
    Book {
        #[command(subcommand)]
        what: book_cmd::BookCommand,
    },
    /// Queue a run in a database for workers (`arbiter worker`) on any number of machines.
    Submit(fleet_cmd::SubmitArgs),
    /// List the runs queued in a database: state, games, Elo, LLR, batches, workers.
    Runs(fleet_cmd::RunsArgs),
    /// Stop a queued run; its workers drop their batches.
    Stop(fleet_cmd::StopArgs),
    /// Play queued runs' batches from a database (or a server) until stopped.
    Worker(fleet_cmd::WorkerArgs),
    /// Serve the fleet's database over HTTP, for workers without database credentials.
    Serve(serve_cmd::ServeArgs),
    /// Administer a fleet's database: the API tokens of `arbiter serve`.
    Admin {
        #[command(subcommand)]
        what: admin_cmd::AdminCommand,
    },
    /// Tune engine parameters: SPSA by games, Texel by positions.
    Tune {
        #[command(subcommand)]
        method: TuneMethod,
    },
}

/// How `arbiter tune` tunes.
#[derive(Subcommand)]
enum TuneMethod {
    /// SPSA by games (fishtest's algorithm), for staunton in process or any UCI engine;
    /// rerunning resumes a tuning run.
    Spsa(spsa_cmd::SpsaArgs),
    /// Fit staunton's evaluation weights to labelled positions (Texel's method).
    Texel(texel_cmd::TexelArgs),
}

fn run_cutechess(args: &[String]) -> ExitCode {
    let parsed = match cutechess::parse(args) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for warning in &parsed.warnings {
        let _ = writeln!(std::io::stderr(), "warning: {warning}");
    }
    match match_cmd::run_config(parsed.config, false) {
        Ok(code) => code,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Usage and configuration errors exit with 2, as ARCHITECTURE.md's exit codes require.
pub const EXIT_USAGE: u8 = 2;

/// A closed stdout (`arbiter ... | head`): 128 + SIGPIPE, what a shell reports for a writer the
/// signal killed, so that a pipeline under `set -o pipefail` does not read it as a verdict.
pub const EXIT_STDOUT_CLOSED: u8 = 141;

/// The signals that stop a run from outside, told apart because the exit status says which.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum StopSignal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM (a service manager, `kill`, a CI timeout).
    Terminate,
}

impl StopSignal {
    /// The exit status of a command it stopped, as shells report a death by the signal.
    fn exit_status(self) -> u8 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }
}

/// Calls `stop` on Ctrl-C and on SIGTERM: a run stops the same way for both (games in flight
/// abandoned uncounted, the exports rebuilt, the run left resumable). Needs a Tokio runtime.
fn on_stop_signals(stop: impl Fn(StopSignal) + Send + Sync + 'static) {
    let stop = std::sync::Arc::new(stop);
    let on_interrupt = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt(StopSignal::Interrupt);
        }
    });
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            if terminate.recv().await.is_some() {
                stop(StopSignal::Terminate);
            }
        }
    });
}

fn main() -> ExitCode {
    // `arbiter -engine cmd=... -engine ... -each tc=...`: the cutechess/fastchess grammar.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a.starts_with('-') && !a.starts_with("--") && a != "-h" && a != "-V")
    {
        return run_cutechess(&args);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Match(args) => match_cmd::run(&args),
        Command::Perft(args) => perft_cmd::run(&args),
        Command::Sprt(args) => sprt_cmd::run(&args),
        Command::Rate(args) => rate_cmd::run(&args),
        Command::Report(args) => report_cmd::run(&args),
        Command::Datagen(args) => datagen_cmd::run(&args),
        Command::Book { what } => book_cmd::run(&what),
        Command::Submit(args) => fleet_cmd::submit(&args),
        Command::Runs(args) => fleet_cmd::runs(&args),
        Command::Stop(args) => fleet_cmd::stop(&args),
        Command::Worker(args) => fleet_cmd::worker(&args),
        Command::Serve(args) => serve_cmd::run(&args),
        Command::Admin { what } => admin_cmd::run(&what),
        Command::Tune { method } => match method {
            TuneMethod::Spsa(args) => spsa_cmd::run(&args),
            TuneMethod::Texel(args) => texel_cmd::run(&args),
        },
    };
    match result {
        Ok(code) => code,
        // The reader has what it wanted (`| head`): stop quietly with the status of a writer
        // killed by SIGPIPE, as `arbiter match` does.
        Err(err) if is_closed_pipe(&err) => ExitCode::from(EXIT_STDOUT_CLOSED),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Whether `err` comes from writing to a pipe whose reader has gone.
fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
