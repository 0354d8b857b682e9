//! Plotted results and strength reports of arbiter runs: the "reports" output of the data path
//! in docs/ARCHITECTURE.md, read from the store after (or while) the runner commits pairs.
//!
//! Three steps, each over plain data so that a new chart or format is one small function:
//!
//! 1. [`RunData::load`] reads everything a report needs from the store once, streaming: the
//!    run's spec and the facts stored with it (kind, SPRT bounds, model, clocks; never a
//!    re-check of its configuration; an older run's, which the store lacks, are supplied by the
//!    caller through [`RunData::load_with`]), its pairs in commit order, the facts of
//!    each game from the typed JSON record (no PGN is parsed), and its totals.
//! 2. [`series`] turns that into the numbers a chart draws (the LLR after each committed pair,
//!    recomputed from the cumulative counts with [`arbiter_stats::Sprt::status`] exactly as the
//!    runner decides; Elo with its interval; histograms; per-opening pair results), and
//!    [`charts`] draws each series as an SVG string with plotters (SVG needs no fonts).
//! 3. [`render`] writes a self-contained HTML page, a GitHub-renderable Markdown summary with the
//!    charts as SVG files beside it, and a JSON document of the numbers and series.
//!
//! A tuning run (SPSA) has no games in the store, only its steps: [`tuning`] reports it, with
//! each parameter's path and the confirmation SPRT found beside it in the store.
//!
//! Every statistic comes from `arbiter_stats`; this crate only chooses what to draw.

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod charts;
mod data;
pub mod render;
pub mod series;
pub mod time;
pub mod tuning;

pub use data::{GameFacts, RunData};
pub use render::{Format, Report};
pub use tuning::{TuningData, TuningReport};

/// What can go wrong building a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading the store failed (an unknown run, a broken database ...).
    #[error(transparent)]
    Store(#[from] arbiter_store::StoreError),
    /// A run stored before the store kept its facts (schema 6), read without the facts its
    /// stored configuration gives (see [`RunData::load_with`]).
    #[error(
        "run {run} ({name}) was stored before arbiter kept a run's facts, and none were given \
         to read it by (`arbiter report` computes them from its stored configuration)"
    )]
    NoFacts { run: i64, name: String },
    /// A run's stored facts cannot be used (edited by hand, or damaged).
    #[error("run {run}: its stored facts: {reason}")]
    Facts { run: i64, reason: String },
    /// A statistic could not be computed from the stored counts.
    #[error("run {run}: {what}: {source}")]
    Stats {
        run: i64,
        what: String,
        #[source]
        source: arbiter_stats::StatsError,
    },
    /// A tuning run's stored set-up or values cannot be read (edited by hand, or damaged).
    #[error("run {run}: the stored tuning {what} cannot be read: {reason}")]
    Tuning {
        run: i64,
        what: &'static str,
        reason: String,
    },
    /// A chart could not be drawn.
    #[error("chart {chart}: {message}")]
    Chart {
        chart: &'static str,
        message: String,
    },
}
