//! The bounds every part of the search agrees on: how deep a line may go and what a mate
//! scores. A leaf module: search, move picking and the transposition table all import it, and it
//! imports nothing, so no two of them need each other for a constant.

/// The deepest ply any line may reach.
pub const MAX_PLY: usize = 128;
/// The score of giving mate now; mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this are mate scores.
pub const MATE_BOUND: i32 = MATE - 2 * MAX_PLY as i32;
/// Above every score.
pub const INFINITY: i32 = MATE + 1;
/// The deepest iteration iterative deepening starts.
pub const MAX_DEPTH: u32 = MAX_PLY as u32 - 8;
