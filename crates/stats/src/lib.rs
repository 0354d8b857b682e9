//! Every statistic arbiter reports: Elo, LOS, normalized Elo and the pentanomial GSPRT.
//!
//! This crate is the "statistics" step of the data path in ARCHITECTURE.md. The match runner asks it
//! whether to stop, the reports plot what it computes, the tuner and the coordinator read their
//! verdicts from it, and the `arbiter sprt` command prints it. No other crate computes a
//! statistic of its own, so one test suite here settles every number a user sees. It does no
//! I/O: counts in, numbers out.
//!
//! Users stop trusting a tester the first time its numbers disagree with fishtest, so the
//! formulas are fishtest's (restated with their provenance in `docs/statistics.md`), including
//! its zero-count regularization and its root-finding tolerances. The public examples of that
//! document are reproduced by this crate's tests.
//!
//! # Vocabulary
//!
//! - A [`Sample`] is [`Trinomial`] (single games, W/D/L) or [`Pentanomial`] (colour-swapped game
//!   pairs, `[LL, LD, DD+WL, DW, WW]`). An *entry* is one game or one pair.
//! - Fixed-sample estimates: [`estimate::elo`] (Elo, fishtest's ± half-width, LOS),
//!   [`estimate::normalized_elo`], [`estimate::draw_ratio`] and friends.
//! - [`Sprt`] is a test design (α, β, H0 and H1 in an [`EloModel`]); [`Sprt::llr`] is the
//!   log-likelihood ratio of cumulative totals, [`Sprt::status`] the Wald verdict,
//!   [`Sprt::elo_estimate`] the SPRT-aware (median-unbiased) Elo.
//! - [`SequentialSprt`] feeds totals batch by batch and applies fishtest's overshoot correction.
//! - [`SprtCalculator`] predicts pass probability and expected games before a test is run.
//! - [`rate`] fits a rating list ([`RatingList`]) to the games of any number of engines: the
//!   maximum-likelihood Elo of each, its interval and the LOS between neighbours.
//!
//! ```
//! use arbiter_stats::{EloModel, Pentanomial, Sample, Sprt, SprtState};
//!
//! // fastchess's published test vector, with fishtest's standard STC bounds <0, 2>.
//! let sample = Sample::from(Pentanomial::from_counts([365, 16618, 36229, 16974, 390]));
//! let sprt = Sprt::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized)?;
//! let status = sprt.status(&sample)?;
//! assert_eq!(format!("{:.2}", status.llr), "2.25");
//! assert_eq!(status.state, SprtState::Continue);
//! # Ok::<(), arbiter_stats::StatsError>(())
//! ```
//!
//! # Numerics
//!
//! Every root is found by a bracketed Brent search with an iteration cap; impossible inputs
//! (elo0 >= elo1, an Elo beyond ±[`MAX_ELO`], α or β outside (0, 1), α + β >= 1, no games,
//! more than [`MAX_GAMES`] games) and samples that have no answer are a [`StatsError`], never
//! a NaN, an infinity or a panic.
//!
//! # Where arbiter departs from fishtest, and why
//!
//! - An empty sample is [`StatsError::NoGames`]; fishtest would regularize it into three
//!   epsilons and print numbers.
//! - A degenerate sample ([`Sample::is_degenerate`]: every game won, or every game lost, or
//!   every pair the same uneven score) has no finite estimate or no observed spread; fishtest
//!   prints its score clamp (1199.8 Elo), LOS 100 % and an nElo in the thousands from ten
//!   games. Its Elo, interval, LOS and nElo take BayesElo's prior of [`VIRTUAL_DRAWS`]
//!   ([`estimate::elo`]), and so does a rating list without a finite maximum ([`rate`]). The
//!   prior is added only there: anywhere else it would move fishtest's figures, and it is
//!   exactly where the counts alone answer nothing. The price is a step at the edge: ten wins
//!   read 416 Elo, ten wins and a draw (fishtest's figures) 529.
//! - The legacy BayesElo LLR regularizes zero counts like every other statistic, where
//!   cutechess-cli reports 0 until W, D and L are all positive.
//! - The SPRT-aware estimate keeps the sample's variance for every candidate Elo, as fishtest
//!   does since PR #2581; before it the estimate could be non-monotonic for large Elo.

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod bayeselo;
mod brownian;
mod calculator;
pub mod elo;
mod error;
pub mod estimate;
pub mod llr;
mod pdf;
pub mod rating;
mod results;
mod root;
mod sprt;
mod sprt_elo;

pub use calculator::{OperatingPoint, SprtCalculator, DEFAULT_DRAW_RATIO, DEFAULT_RMS_BIAS};
pub use elo::MAX_ELO;
pub use error::StatsError;
pub use estimate::{EloEstimate, NormalizedElo};
pub use rating::{rate, Anchor, Encounter, RatedEngine, RatingList};
pub use results::{
    Pentanomial, Sample, Trinomial, MAX_GAMES, REGULARIZATION_EPSILON, VIRTUAL_DRAWS,
};
pub use sprt::{
    EloModel, SequentialSprt, Sprt, SprtState, SprtStatus, UnknownEloModel, WaldBounds,
};
pub use sprt_elo::SprtElo;
