//! `arbiter perft`: move-generator counts in the format perft tools and `go perft` print, so
//! the output can be diffed against Stockfish's line by line.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use arbiter_rules::{perft, uci, Position, STARTING_FEN};

#[derive(clap::Args)]
pub struct PerftArgs {
    /// Position to count from (default: the starting position).
    #[arg(long, default_value = STARTING_FEN)]
    fen: String,
    /// Plies to search.
    #[arg(long)]
    depth: u32,
    /// Print the count below each legal move first.
    #[arg(long)]
    divide: bool,
    /// Also print elapsed time and speed on stderr.
    #[arg(long)]
    stats: bool,
}

pub fn run(args: &PerftArgs) -> anyhow::Result<ExitCode> {
    let pos = Position::from_fen(&args.fen).with_context(|| format!("--fen {:?}", args.fen))?;
    let start = Instant::now();
    let mut out = std::io::stdout().lock();
    let nodes = if args.divide {
        // Depth 0 is the position itself: one leaf, and no move below the root to divide by.
        let moves = if args.depth == 0 {
            Vec::new()
        } else {
            perft::divide(&pos, args.depth)
        };
        for (mv, count) in &moves {
            writeln!(out, "{}: {count}", uci::move_to_uci(Some(*mv)))?;
        }
        writeln!(out)?;
        if moves.is_empty() {
            perft::perft(&pos, args.depth)
        } else {
            moves.iter().map(|(_, count)| count).sum()
        }
    } else {
        perft::perft(&pos, args.depth)
    };
    writeln!(out, "Nodes searched: {nodes}")?;
    if args.stats {
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "time {secs:.3} s, {:.1} Mnps",
            nodes as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}
