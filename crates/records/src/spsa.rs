//! The record of an SPSA tuning run's set-up, as the store keeps it (`tuning_runs.setup`, JSON)
//! and as the tuner, the report and the confirmation's lookup read it: the parameters and
//! hyper-parameters, how a value reads for people and reaches a UCI engine, and the values a
//! step stored. The algorithm that moves the values is the tuner's (`arbiter_tune::spsa`).

use arbiter_store::{TuningMethod, TuningSetup};
use serde::{Deserialize, Serialize};

/// Whether a parameter reaches the engine as an integer (rounded stochastically) or as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    Int,
    Float,
}

/// One tuned parameter, as a fishtest line gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaParam {
    pub name: String,
    pub kind: ParamKind,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// The perturbation at the last iteration.
    pub c_end: f64,
    /// The learning rate at the last iteration (`a_end = r_end·c_end²`).
    pub r_end: f64,
}

impl SpsaParam {
    /// The value an engine is given: an integer parameter's rounded (θ is fractional between
    /// steps; the stochastic rounding is only for the perturbed sides).
    pub fn engine_value(&self, value: f64) -> f64 {
        match self.kind {
            ParamKind::Int => value.round(),
            ParamKind::Float => value,
        }
    }

    /// One of staunton's piece values, which people read in pawns.
    pub fn is_piece_value(&self) -> bool {
        is_piece_value(&self.name)
    }

    /// How a value reads for people ([`shown`]).
    pub fn shown(&self, value: f64) -> String {
        shown(&self.name, self.kind, value)
    }
}

/// How a parameter's value reads for people, in progress lines, tables and charts: staunton's
/// piece values in pawns as staunton shows them, whole integers as integers, the rest with two
/// decimals.
pub fn shown(name: &str, kind: ParamKind, value: f64) -> String {
    if is_piece_value(name) {
        format!("{:.2}", value / 100.0)
    } else if kind == ParamKind::Int && value.fract() == 0.0 {
        format!("{value}")
    } else {
        format!("{value:.2}")
    }
}

fn is_piece_value(name: &str) -> bool {
    staunton::params::spec(name).is_some_and(|(_, spec)| spec.is_piece_value())
}

/// The run's hyper-parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    /// Game pairs in the whole run: fishtest's `num_iter` (its games / 2).
    pub pairs: u64,
    /// Pairs played at one perturbation, concurrently: fishtest's worker batch.
    pub pairs_per_step: u64,
    /// `A` as a fraction of the iterations (fishtest's "A ratio").
    pub a_ratio: f64,
    pub alpha: f64,
    pub gamma: f64,
}

impl Hyper {
    /// The steps of the run, the last holding the pairs left over when `pairs_per_step` does
    /// not divide `pairs`; none for a set-up without pairs per step (the tuner refuses one, so
    /// only a damaged stored set-up has it).
    pub fn steps(&self) -> Option<u64> {
        (self.pairs_per_step > 0).then(|| self.pairs.div_ceil(self.pairs_per_step))
    }
}

/// What a tuning run was created with, as the store keeps it (JSON): a resumed run is checked
/// against it, so it tunes exactly what it started with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaSetup {
    pub params: Vec<SpsaParam>,
    pub hyper: Hyper,
}

impl SpsaSetup {
    /// The steps the run plans ([`Hyper::steps`]): a report's "step 12 of 250" without the
    /// tuner's algorithm.
    pub fn steps_planned(&self) -> Option<u64> {
        self.hyper.steps()
    }

    /// The store's record of it.
    pub fn tuning_setup(&self) -> TuningSetup {
        TuningSetup {
            method: TuningMethod::Spsa,
            setup: serde_json::to_string(self).unwrap_or_default(),
        }
    }
}

/// θ as a step stored it. An older arbiter could store a NaN, which JSON keeps as `null`: that
/// is said as such, not as serde's "invalid type: null" (the run and the report both read it).
pub fn stored_theta(json: &str) -> Result<Vec<f64>, String> {
    let stored: Vec<Option<f64>> = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if stored.iter().any(Option::is_none) {
        return Err(
            "null where a value belongs (a NaN from hyper-parameters whose arithmetic \
                    overflowed, stored by an older arbiter)"
                .to_owned(),
        );
    }
    Ok(stored.into_iter().flatten().collect())
}

/// A value as `setoption` sends it: an integer parameter's as an integer (engines declare them
/// as spin options), a float's as Rust prints it (the shortest text that reads back the same).
pub fn option_value(kind: ParamKind, value: f64) -> String {
    match kind {
        ParamKind::Int => format!("{}", value.round() as i64),
        ParamKind::Float => format!("{value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(pairs: u64, pairs_per_step: u64) -> SpsaSetup {
        SpsaSetup {
            params: vec![SpsaParam {
                name: "knight_mg".into(),
                kind: ParamKind::Int,
                start: 300.0,
                min: 200.0,
                max: 400.0,
                c_end: 10.0,
                r_end: 0.002,
            }],
            hyper: Hyper {
                pairs,
                pairs_per_step,
                a_ratio: 0.1,
                alpha: 0.602,
                gamma: 0.101,
            },
        }
    }

    /// The last step holds what is left over; a damaged set-up without pairs per step plans
    /// nothing rather than dividing by zero.
    #[test]
    fn the_planned_steps_cover_every_pair() {
        assert_eq!(setup(10, 4).steps_planned(), Some(3));
        assert_eq!(setup(8, 4).steps_planned(), Some(2));
        assert_eq!(setup(1, 8).steps_planned(), Some(1));
        assert_eq!(setup(10, 0).steps_planned(), None);
    }

    /// The store's JSON reads back as the set-up it was written from.
    #[test]
    fn the_stored_set_up_reads_back() {
        let written = setup(10, 4);
        let stored = written.tuning_setup();
        assert_eq!(stored.method, TuningMethod::Spsa);
        let read: SpsaSetup = serde_json::from_str(&stored.setup).unwrap();
        assert_eq!(read, written);
    }

    /// Piece values read in pawns, whole integers as integers, the rest with two decimals.
    #[test]
    fn values_read_as_people_read_them() {
        assert_eq!(shown("knight_mg", ParamKind::Int, 325.0), "3.25");
        assert_eq!(shown("Hash", ParamKind::Int, 16.0), "16");
        assert_eq!(shown("Hash", ParamKind::Int, 16.4), "16.40");
        assert_eq!(shown("Scale", ParamKind::Float, 0.5), "0.50");
        assert_eq!(option_value(ParamKind::Int, 2.5), "3");
    }

    /// A NaN an older arbiter stored as `null` is named as such.
    #[test]
    fn stored_values_refuse_null() {
        assert_eq!(stored_theta("[1.5, -2]"), Ok(vec![1.5, -2.0]));
        let error = stored_theta("[1.5, null]").unwrap_err();
        assert!(error.starts_with("null where a value belongs"), "{error}");
    }
}
