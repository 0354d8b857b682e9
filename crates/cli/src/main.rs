//! The `arbiter` command line: parses arguments and wires the library crates together. No
//! chess or statistics logic lives here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod perft;
mod sprt;

/// Test, tune and rank chess engines.
#[derive(Parser)]
#[command(name = "arbiter", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaves of the legal move tree (the output format of Stockfish's `go perft`).
    Perft(perft::PerftArgs),
    /// Elo, LOS, normalized Elo and the SPRT verdict from match counts; or, with --expect, the
    /// SPRT calculator.
    Sprt(sprt::SprtArgs),
}

/// Usage and configuration errors exit with 2, as DESIGN.md's exit codes require.
pub const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Sprt(args) => sprt::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
