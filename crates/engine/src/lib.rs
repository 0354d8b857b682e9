//! staunton: arbiter's own chess engine, a classical alpha-beta searcher whose every
//! evaluation weight and search constant is a named, tunable parameter.
//!
//! It exists so that every part of arbiter can be shown end to end on an engine users can
//! change: the tuner (`tune`) perturbs its [`Params`], the match runner plays it either as a
//! UCI process (the `staunton` binary) or in process through [`Engine`], and its `bench`
//! node count is the behavioural signature the fleet checks (see ARCHITECTURE.md).
//!
//! # Playing in process
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use arbiter_rules::Position;
//! use staunton::{Engine, Limits, Params};
//!
//! let mut engine = Engine::new(Params::default(), 1); // 1 MiB hash
//! engine.new_game();
//! let history = [Position::starting()]; // the game so far; last = position to search
//! let stop = AtomicBool::new(false);
//! let result = engine.search(&history, &Limits::depth(6), &stop, &mut |_info| {});
//! assert!(result.best_move.is_some());
//! ```
//!
//! - [`Engine::new`]`(params, hash_mb)` (a size above [`MAX_HASH_MB`] or beyond the memory
//!   available is halved until it fits: [`Engine::hash_mb`] says what was obtained);
//!   [`Engine::new_game`] (what `ucinewgame` does: clears
//!   the hash table and move-ordering memory); [`Engine::set_hash`]; [`Engine::params`] /
//!   [`Engine::set_params`]; [`Engine::evaluate`] (static eval, side to move's view).
//! - [`Engine::search`]`(history, limits, stop, on_info) -> SearchResult` searches the last
//!   position of `history`; [`Engine::search_game`] takes an [`arbiter_rules::Game`].
//!   [`Limits`] combine `depth`, `nodes`, `movetime`, `clock` ([`ClockLimits`]), `infinite`,
//!   `move_overhead`, `searchmoves` and `started_at` (when the clock started, if before the
//!   call); the search stops at the first limit reached or when `stop` turns true.
//!   `on_info` receives a [`SearchInfo`] per completed iteration (and one for a first
//!   iteration cut short), so a scored line always precedes the result.
//! - [`SearchResult`] has `best_move` (`None` only with no legal move), `ponder`, `score`
//!   ([`Score::Cp`] or [`Score::Mate`] in moves), `depth`, `seldepth`, `nodes`, `elapsed`, `pv`.
//!
//! Instances share nothing mutable: any number may search at once on different threads. An
//! instance takes about 0.5 MiB besides its hash table (history tables and the PV table), and a
//! search needs about 1 MiB of thread stack at most (default Rust threads have 2 MiB). With
//! depth or node limits and after `new_game`, a search is deterministic: the same move, score
//! and node count every time. Time limits are the only source of variation.
//!
//! # Modules
//! [`params`] (the single list of parameters), [`evaluate`], [`search`], `movepick`, `see`,
//! `tt` (private: users see the engine, not its tables), [`timeman`], [`uci`] (the protocol loop
//! of the binary), [`bench`](mod@bench); the
//! bounds they share (`MAX_PLY`, mate scores) live in a leaf module that imports none of them,
//! re-exported from [`search`].

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod bench;
mod correction;
mod engine;
pub mod evaluate;
mod limits;
mod movepick;
pub mod params;
pub mod search;
mod see;
pub mod timeman;
mod tt;
pub mod uci;

pub use engine::{Engine, DEFAULT_HASH_MB};
pub use evaluate::{Enters, Evaluator, Trace};
pub use params::{ParamError, ParamSpec, Params, PARAMS};
pub use search::{Score, SearchInfo, SearchResult};
pub use timeman::{ClockLimits, Limits};
pub use tt::MAX_HASH_MB;
