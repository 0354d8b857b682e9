//! The UCI protocol as the runner speaks it: the messages of `arbiter-uci`, whose formatters
//! and parsers staunton shares (docs/ARCHITECTURE.md, "The crates").

pub use arbiter_uci::*;

// The spellings the engine-process and player code call, kept while that code is reworked
// elsewhere; each is the message type's own parser or formatter.

/// [`Info::parse`].
pub fn parse_info(line: &str) -> Info {
    Info::parse(line)
}

/// [`BestMove::parse`], as the move and the ponder move.
pub fn parse_bestmove(line: &str) -> Option<(String, Option<String>)> {
    BestMove::parse(line).map(|best| (best.mv, best.ponder))
}

/// [`OptionDecl::parse`].
pub fn parse_option(line: &str) -> Option<OptionDecl> {
    OptionDecl::parse(line)
}

/// [`PositionCommand::line`].
pub fn position_command(start_fen: Option<&str>, moves: &[String]) -> String {
    PositionCommand::line(start_fen, moves)
}

/// [`GoLimits`]' `Display`.
pub fn go_command(limits: &GoLimits) -> String {
    limits.to_string()
}
