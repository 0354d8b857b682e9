//! The UCI protocol's messages as types, each with the one formatter and the one parser that
//! both directions use: the runner formats `position` and `go` and parses what engines print
//! (`info`, `bestmove`, `option`); staunton parses what a GUI sends and formats its answers
//! with the same code, so the two can never disagree about a spelling (docs/ARCHITECTURE.md,
//! "The crates"). Every type's `Display` writes the whole line, command word included, and its
//! parser reads that line back: `parse(format(x)) == x` is a property test for each.
//!
//! The parsers are forgiving where the protocol's users need it. What engines print is read
//! as real engines print it: keywords in any order, unknown keywords, odd spacing and garbage
//! lines are skipped, never fatal and never a panic. What a GUI sends to staunton is reported
//! rather than refused: a `go` limit whose value is malformed is taken as 0, its tightest, and
//! the problem is handed back to be said as `info string`.
//!
//! Moves stay text here (`e2e4`, `e7e8q`, `0000`): what a move means depends on a position,
//! which each side checks with `arbiter-rules` (the runner as the referee, staunton against
//! its own board).

mod bestmove;
mod go;
mod info;
mod option;
mod position;
mod score;

pub use bestmove::BestMove;
pub use go::{Clocks, GoLimits, GoProblem};
pub use info::Info;
pub use option::{OptionDecl, SetOption};
pub use position::{PositionCommand, Start};
pub use score::{Bound, Score};

/// Why a command line could not be read at all; said to the GUI as `info string`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("expected `position startpos|fen <fen> [moves <move>...]`")]
    Position,
    #[error("setoption: expected `setoption name <name> [value <value>]`")]
    SetOption,
}

/// The tokens of `line` after its command word, if it starts with it; the whole line's tokens
/// if it does not (both spellings reach the parsers: a GUI's whole line, or its arguments).
fn arguments<'a>(line: &'a str, command: &str) -> std::str::SplitAsciiWhitespace<'a> {
    let mut tokens = line.split_ascii_whitespace();
    let mut rest = tokens.clone();
    if rest.next() == Some(command) {
        tokens = rest;
    }
    tokens
}
