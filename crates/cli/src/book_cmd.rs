//! `arbiter book generate|check|convert`: wiring for `arbiter_runner::books`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use arbiter_runner::books::{
    self, book_text, write_whole, CheckOptions, CheckReport, GenerateOptions, Window,
};
use arbiter_runner::openings::{Book, BookChoice, BookFormat, BookSpec};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(clap::Subcommand)]
pub enum BookCommand {
    /// Make a book: random legal plies from the start (or from a seed book's lines), each
    /// final position scored by staunton at fixed nodes and kept if the score lies in the
    /// window; seeded and reproducible.
    Generate(GenerateArgs),
    /// Validate a book: bad entries by line, counts, duplicates, the score spread, and with
    /// --pair the lines whose quick pair the same colour won twice.
    Check(CheckArgs),
    /// Convert a book: PGN to EPD (at --plies), EPD to PGN, Polyglot to EPD or PGN.
    Convert(ConvertArgs),
    /// Print a book's lines, one a line, in SAN or in English descriptive notation (`P-K4`),
    /// as the old handbooks write them.
    Show(ShowArgs),
}

#[derive(clap::Args)]
pub struct ShowArgs {
    /// The book: EPD, PGN or Polyglot (by extension).
    file: PathBuf,
    /// `san` or `descriptive`.
    #[arg(long, default_value = "san")]
    notation: String,
    /// PGN books: plies of each game; Polyglot books: depth of each walk.
    #[arg(long)]
    plies: Option<usize>,
}

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// The book to write: `.epd` (with `id` and the score as `c0`) or `.pgn`.
    #[arg(long, short)]
    output: PathBuf,
    /// Positions to keep.
    #[arg(long, default_value_t = 1000)]
    count: usize,
    /// Random legal moves after the start (or the seed line).
    #[arg(long, default_value_t = 8)]
    plies: u32,
    /// staunton's nodes for each candidate's score.
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// The scores kept, White's view in centipawns: `-50..50` (balanced, the default), `50`
    /// (the same), or `100..200` (White ahead by a band, "unbalanced human openings" style).
    #[arg(long, default_value = "-50..50", allow_hyphen_values = true)]
    window: String,
    /// The seed (default: a fresh one, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// A seed book (EPD, PGN or Polyglot) whose lines the random plies follow.
    #[arg(long, conflicts_with = "odds")]
    from: Option<PathBuf>,
    /// Start from a handicap instead (pawn-and-move, pawn-and-two-moves, knight, rook, queen):
    /// a book of odds games.
    #[arg(long)]
    odds: Option<String>,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The book: EPD, PGN or Polyglot (by extension, or --format).
    file: PathBuf,
    #[arg(long, value_parser = parse_format)]
    format: Option<BookFormat>,
    /// Score every entry at this many nodes and show the spread (0: no scores).
    #[arg(long, default_value_t = 2000)]
    score_nodes: u64,
    /// Play a quick in-process pair on every entry at this many nodes a move, and name the
    /// lopsided ones (the same colour won both games).
    #[arg(long)]
    pair: Option<u64>,
    /// PGN books: plies of each game; Polyglot books: depth of each walk.
    #[arg(long)]
    plies: Option<usize>,
    /// Polyglot books: random or best.
    #[arg(long, value_parser = parse_choice)]
    choice: Option<BookChoice>,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// The report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    /// The book to read: EPD, PGN or Polyglot (by extension, or --from-format).
    input: PathBuf,
    /// The book to write: `.epd` or `.pgn`.
    output: PathBuf,
    #[arg(long, value_parser = parse_format)]
    from_format: Option<BookFormat>,
    /// PGN input: the position after this many plies of each game (default: all of them);
    /// Polyglot input: the depth of each walk (default 16).
    #[arg(long)]
    plies: Option<usize>,
    /// Polyglot input: random or best.
    #[arg(long, value_parser = parse_choice)]
    choice: Option<BookChoice>,
}

fn parse_format(text: &str) -> Result<BookFormat, String> {
    match text {
        "epd" => Ok(BookFormat::Epd),
        "pgn" => Ok(BookFormat::Pgn),
        "polyglot" => Ok(BookFormat::Polyglot),
        _ => Err(format!("{text:?}: expected epd, pgn or polyglot")),
    }
}

fn parse_choice(text: &str) -> Result<BookChoice, String> {
    match text {
        "random" => Ok(BookChoice::Random),
        "best" => Ok(BookChoice::Best),
        _ => Err(format!("{text:?}: expected random or best")),
    }
}

/// The format a written book takes from its name.
fn output_format(path: &Path) -> anyhow::Result<BookFormat> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("epd") => Ok(BookFormat::Epd),
        Some(ext) if ext.eq_ignore_ascii_case("pgn") => Ok(BookFormat::Pgn),
        _ => bail!(
            "{}: name the book .epd or .pgn (the format it is written in)",
            path.display()
        ),
    }
}

fn threads(asked: Option<usize>) -> usize {
    asked
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .max(1)
}

pub fn run(command: &BookCommand) -> anyhow::Result<ExitCode> {
    match command {
        BookCommand::Generate(args) => generate(args),
        BookCommand::Check(args) => check(args),
        BookCommand::Convert(args) => convert(args),
        BookCommand::Show(args) => show(args),
    }
}

fn generate(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let format = output_format(&args.output)?;
    let window: Window = args
        .window
        .parse()
        .map_err(|e| anyhow::anyhow!("--window {e}"))?;
    if args.count == 0 {
        bail!("--count 0: a book needs at least one position");
    }
    let from = match (&args.from, &args.odds) {
        (Some(path), _) => Some(Arc::new(
            Book::load(&BookSpec {
                file: Some(path.clone()),
                ..BookSpec::default()
            })
            .with_context(|| format!("--from {}", path.display()))?,
        )),
        (None, Some(odds)) => Some(Arc::new(
            Book::load(&BookSpec {
                odds: Some(odds.clone()),
                ..BookSpec::default()
            })
            .context("--odds")?,
        )),
        (None, None) => None,
    };
    let seed = args
        .seed
        .unwrap_or_else(arbiter_runner::lifecycle::fresh_seed);
    let options = GenerateOptions {
        count: args.count,
        plies: args.plies,
        nodes: args.nodes,
        window,
        seed,
        from,
        threads: threads(args.threads),
    };
    let bar = ProgressBar::new(args.count as u64);
    if args.quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} positions {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let book = books::generate(&options, &|found, tried| {
        bar.set_position(found as u64);
        bar.set_message(format!("({tried} candidates)"));
    });
    bar.finish_and_clear();
    let book = book?;
    let seconds = started.elapsed().as_secs_f64();
    let odds = args
        .odds
        .as_ref()
        .map_or_else(String::new, |odds| format!(" --odds {odds}"));
    let made_by = format!(
        "arbiter book generate --seed {seed}{odds} --plies {} --nodes {} --window {}..{}",
        args.plies, args.nodes, window.low, window.high
    );
    write_whole(&args.output, book_text(&book, format, &made_by).as_bytes())?;
    outln!(
        "wrote {} positions to {} (seed {seed}) in {seconds:.1} s: {:.0} positions/s",
        book.len(),
        args.output.display(),
        book.len() as f64 / seconds.max(1e-9)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let options = CheckOptions {
        score_nodes: (args.score_nodes > 0).then_some(args.score_nodes),
        pair_nodes: args.pair,
        plies: args.plies,
        choice: args.choice,
        threads: threads(args.threads),
    };
    let report =
        crate::fleet_cmd::runtime()?.block_on(books::check(&args.file, args.format, &options))?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_report(&report)?;
    }
    // Like a linter: 0 for a book fit to use, 1 for one with bad or repeated entries.
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(report: &CheckReport) -> anyhow::Result<()> {
    outln!(
        "{}: {} book, {} openings, {} invalid, {} duplicates",
        report.path,
        report.format,
        report.openings,
        report.invalid.len(),
        report.duplicates.len()
    )?;
    for bad in &report.invalid {
        outln!("  invalid: {bad}")?;
    }
    for (entry, first) in &report.duplicates {
        outln!("  duplicate: {entry} is the position of {first}")?;
    }
    if let Some(spread) = &report.scores {
        outln!(
            "scores at {} nodes (White's view): mean {:+.1} cp, sd {:.1} cp, {} of {} within \
             50 cp, {} mate scores",
            spread.nodes,
            spread.mean,
            spread.stdev,
            spread.within_50,
            report.openings,
            spread.mates
        )?;
        let most = spread.buckets.iter().map(|b| b.2).max().unwrap_or(0).max(1);
        for &(low, high, count) in &spread.buckets {
            let label = match (low, high) {
                (i32::MIN, high) => format!("< {high}"),
                (low, i32::MAX) => format!(">= {low}"),
                (low, high) => format!("{low}..{high}"),
            };
            let bar = "#".repeat((count * 40).div_ceil(most));
            outln!("  {label:>10} {count:>6} {bar}")?;
        }
    }
    if let Some(lopsided) = &report.lopsided {
        outln!(
            "lopsided (one colour won both games of its pair): {} of {}",
            lopsided.len(),
            report.openings
        )?;
        for entry in lopsided {
            outln!("  lopsided: {entry}")?;
        }
    }
    Ok(())
}

fn convert(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let format = output_format(&args.output)?;
    let input = BookSpec {
        file: Some(args.input.clone()),
        format: args.from_format,
        plies: args.plies,
        choice: args.choice,
        ..BookSpec::default()
    };
    let (text, count) = books::convert(&input, format)?;
    write_whole(&args.output, text.as_bytes())?;
    outln!(
        "wrote {count} openings from {} to {}",
        args.input.display(),
        args.output.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn show(args: &ShowArgs) -> anyhow::Result<ExitCode> {
    let write: fn(&arbiter_rules::Position, arbiter_rules::Move) -> String =
        match args.notation.as_str() {
            "san" => arbiter_rules::san::san_plus,
            "descriptive" => arbiter_rules::descriptive::descriptive,
            other => bail!("--notation {other:?}: expected san or descriptive"),
        };
    let book = Book::load(&BookSpec {
        file: Some(args.file.clone()),
        plies: args.plies,
        ..BookSpec::default()
    })?;
    for i in 0..book.len() {
        let opening = book.opening(i);
        let mut pos = opening.start;
        let mut line = String::new();
        for (ply, &mv) in opening.moves.iter().enumerate() {
            let number = pos.fullmove_number();
            match pos.turn() {
                arbiter_rules::Color::White => line.push_str(&format!("{number}. ")),
                arbiter_rules::Color::Black if ply == 0 => line.push_str(&format!("{number}... ")),
                arbiter_rules::Color::Black => {}
            }
            line.push_str(&write(&pos, mv));
            line.push(' ');
            pos.play_unchecked(mv);
        }
        outln!("{}  {}", opening.source, line.trim_end())?;
    }
    Ok(ExitCode::SUCCESS)
}
