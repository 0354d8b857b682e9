//! The match runner: arbiter's heart.
//!
//! It plays many games at once between engines, from opening books, in colour-swapped pairs,
//! referees them with the rules crate, commits each finished pair to the store, and stops when
//! the SPRT decides (the "players", "game loop" and "store" steps of ARCHITECTURE.md's data path).
//!
//! The layers, bottom up: [`uci`] is the protocol as text (pure functions); [`process`] owns
//! an engine process and its timing; [`player`] puts UCI engines and in-process engines behind
//! one interface; [`tc`] and [`adjudication`] are the clocks and the score-based rules;
//! [`openings`] loads books and picks pair `k`'s opening from the seed; [`game`] plays one
//! game; [`commlog`] is the run's log of engine lines and messages. Faults of engines are ordinary outcomes at every layer, never errors that stop a run.
//! Above them, [`config`] reads a run (TOML, or cutechess/fastchess flags in
//! [`config::cutechess`]), checks it from its text alone, and resolves it on the machine that
//! plays it into a [`tournament::MatchSpec`]. [`lifecycle`] opens, resumes or creates the
//! stored run a configuration names, the same way for every command.

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod adjudication;
pub mod builtin;
pub mod commlog;
pub mod config;
pub mod game;
pub mod lifecycle;
pub mod openings;
pub mod outputs;
pub mod player;
pub mod process;
pub mod records;
pub mod standings;
pub mod tc;
pub mod tournament;
pub mod uci;
