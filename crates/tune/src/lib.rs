//! Tuning engine parameters, the second job arbiter exists for.
//!
//! Two methods answer "are these the right values?" in two ways. SPSA plays games: each step
//! perturbs every parameter up or down at once, plays a few pairs of the plus side against the
//! minus side, and moves the values toward the side that won (fishtest's algorithm, so a
//! tuning run here means what it means there). Texel fits the evaluation to game results
//! offline: no games per step, only positions labelled with how their games ended. The two
//! meet in the run engine (games are played by `arbiter_runner`), in staunton's `Params`
//! (the parameters and their ranges) and in the store (a tuning run's state survives a kill).
//! An SPSA run plays on one machine (`spsa_run`) or on the fleet's workers (`spsa_fleet`),
//! as the same run type.

pub mod datagen;
pub mod positions;
pub mod spsa;
pub mod spsa_fleet;
pub mod spsa_run;
pub mod texel;
