//! The typed records one part of arbiter writes and another reads, in a crate of their own so
//! that the readers need not depend on the writers: the runner writes a game's record, a pair's
//! and a run's summary ([`entries`]), and a tournament's standings ([`standings`]); the tuner
//! writes an SPSA run's set-up and the values of each step ([`spsa`]); the report, `arbiter
//! rate` and (later) the HTTP API and fleet workers read them back from the store or the
//! JSON lines without the runner's engine processes or the tuner's algorithm. The numbers and
//! names they print share one set of formats ([`text`]), so the console and a report never
//! show one figure two ways.
//!
//! Everything here is plain data and pure functions of it: serde types, versioned by
//! [`entries::SCHEMA`] (a reader refuses what it does not know), and the arithmetic of reading
//! them (standings from pairing totals, planned steps from a set-up). What a run *is* (its
//! kind, SPRT and clocks) is the store's [`arbiter_store::RunFacts`].

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod entries;
pub mod spsa;
pub mod standings;
pub mod text;
