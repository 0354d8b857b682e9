//! The facts of a run: what it is (its kind, statistics model, SPRT, games planned, clocks),
//! decided by the runner when the run is created and written with it (migration 6), so that a
//! report reads them as they were rather than re-deriving them from the stored configuration
//! text, which a later arbiter may check more strictly.
//!
//! One JSON document (`runs.facts`), not a column per fact: the facts are read whole, by the
//! report, and never filtered on; their shape will grow (a fleet's batches, new kinds of run),
//! and a field added to this typed struct with a serde default is readable in old rows and by
//! old builds without a migration per field (the document's `version` says which fields its
//! writer knew). The link of a confirmation SPRT to its tuning run is a column instead
//! (`runs.confirms_run`): the database checks that it points at a run, and it is searched by.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Run, RunId};

/// What a report needs of a run that its pairs and games do not say, as the runner decided it
/// when the run was created. A run stored before migration 6 has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    /// The fields its writer knew: [`RunFacts::VERSION`] when written by this build. A field
    /// added later comes with a serde default, and a reader tells "absent because older" from
    /// a real value by this number.
    pub version: u32,
    /// What kind of run it is.
    pub kind: RunKind,
    /// How its units are counted: colour-swapped pairs (pentanomial) or single games
    /// (trinomial).
    pub model: SampleModel,
    /// The SPRT it was played under; none for a fixed-length match, a tournament, a tuning run.
    #[serde(default)]
    pub sprt: Option<SprtFacts>,
    /// The games its schedule holds: twice the pairs, or unpaired the games asked for (an odd
    /// number's last round is a unit of one game).
    pub games_planned: u64,
    /// Each engine's clock, in the run's engine order; none for an engine limited by nodes,
    /// depth or time per move.
    pub clocks: Vec<Option<Clock>>,
}

impl RunFacts {
    /// The layout this build writes.
    pub const VERSION: u32 = 2;

    /// The document as stored.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the facts are plain data")
    }

    /// Reads what [`RunFacts::to_json`] wrote, by this build or another.
    pub(crate) fn from_json(text: &str) -> Result<RunFacts, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Whether the statistics are pentanomial (the run plays colour-swapped pairs).
    pub fn paired(&self) -> bool {
        self.model == SampleModel::Pentanomial
    }
}

/// What kind of run a row of `runs` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// Two engines, one pairing: the only kind an SPRT decides.
    Match,
    /// Every engine plays every other.
    RoundRobin,
    /// The seeds play every other engine, not each other.
    Gauntlet,
    /// An SPSA tuning run: its steps are in `tuning_steps`, its games are not stored.
    Spsa,
    /// Self-play for training data (`arbiter datagen`).
    Datagen,
}

impl RunKind {
    /// The name reports and records show: `match`, `round-robin`, `gauntlet`, `spsa`,
    /// `datagen`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Match => "match",
            RunKind::RoundRobin => "round-robin",
            RunKind::Gauntlet => "gauntlet",
            RunKind::Spsa => "spsa",
            RunKind::Datagen => "datagen",
        }
    }
}

/// The statistics model of a run's totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleModel {
    /// Colour-swapped pairs, counted in five buckets.
    Pentanomial,
    /// Single games: wins, draws, losses.
    Trinomial,
}

/// An SPRT's design as the run was played under it: the hypotheses in `model`'s units and the
/// error rates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtFacts {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The Elo model's name as `arbiter_stats::EloModel` parses it: `normalized`, `logistic`
    /// or `bayeselo`.
    pub model: String,
    /// Which pairs the verdict was judged on. Facts written before this field (version 1)
    /// were judged on every pair, as cutechess judges.
    #[serde(default)]
    pub judged_on: JudgedOn,
}

/// Which of a run's pairs its SPRT is judged on: the verdict a report shows must be the one
/// the run reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JudgedOn {
    /// Every pair, in the order they were committed (cutechess's rule).
    #[default]
    AllPairs,
    /// The prefix: units 0 to k - 1, all played, in schedule order, up to the unit after which
    /// the SPRT decided (the fleet's rule, and a local run's by default), so that the verdict
    /// does not depend on which games finished first.
    Prefix,
}

/// An engine's clock: what the report's time charts measure its moves against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// Moves per period; none for the whole game.
    #[serde(default)]
    pub moves: Option<u32>,
    pub base_ms: f64,
    pub increment_ms: f64,
    /// cutechess's hourglass: time used is added to the opponent's clock.
    #[serde(default)]
    pub hourglass: bool,
}

/// What runs stored by an older arbiter lack and this build supplies: the facts of a run stored
/// before migration 6 (computed from its stored configuration by the runner's lifecycle, the
/// one way a new run's are decided), and the link of a confirmation SPRT stored before
/// `confirms_run` (found by what it plays). [`crate::Store::upgrade`] writes them in place; a
/// reader that cannot write (a read-only store) reads the store through them instead, so the
/// same run reads the same either way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Upgrade {
    /// Facts of runs that have none, by run.
    pub facts: BTreeMap<RunId, RunFacts>,
    /// Confirmations without their link: the confirmation, and the tuning run it confirms.
    pub confirms: BTreeMap<RunId, RunId>,
}

impl Upgrade {
    /// Nothing to supply: every run concerned is of this build's schema already.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty() && self.confirms.is_empty()
    }

    /// The facts of `run`: those stored with it, else those supplied here.
    pub fn facts_of<'a>(&'a self, run: &'a Run) -> Option<&'a RunFacts> {
        run.spec.facts.as_ref().or_else(|| self.facts.get(&run.id))
    }

    /// The newest confirmation of tuning run `tuning` supplied here.
    pub fn confirmation_of(&self, tuning: RunId) -> Option<RunId> {
        self.confirms
            .iter()
            .filter(|(_, confirms)| **confirms == tuning)
            .map(|(confirmation, _)| *confirmation)
            .next_back()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> RunFacts {
        RunFacts {
            version: RunFacts::VERSION,
            kind: RunKind::RoundRobin,
            model: SampleModel::Trinomial,
            sprt: Some(SprtFacts {
                elo0: 0.0,
                elo1: 2.5,
                alpha: 0.05,
                beta: 0.05,
                model: "normalized".into(),
                judged_on: JudgedOn::Prefix,
            }),
            games_planned: 13,
            clocks: vec![
                Some(Clock {
                    moves: Some(40),
                    base_ms: 10_000.0,
                    increment_ms: 100.0,
                    hourglass: false,
                }),
                None,
            ],
        }
    }

    #[test]
    fn facts_read_back_as_written() {
        let f = facts();
        assert_eq!(RunFacts::from_json(&f.to_json()).unwrap(), f);
        assert!(f.to_json().contains("\"kind\":\"round-robin\""));
    }

    /// A later build's document (a field this one does not know) still reads, and one written
    /// without the fields that have defaults reads with them.
    #[test]
    fn documents_of_other_versions_read() {
        let newer = r#"{"version":2,"kind":"match","model":"pentanomial","games_planned":8,
            "clocks":[{"base_ms":1000,"increment_ms":10},null],"batches":[1,2]}"#;
        let read = RunFacts::from_json(newer).unwrap();
        assert_eq!(read.version, 2);
        assert_eq!(read.sprt, None);
        assert_eq!(read.clocks[0].unwrap().moves, None);
        assert!(read.paired());
        let broken = RunFacts::from_json(r#"{"version":1,"kind":"simul"}"#).unwrap_err();
        assert!(broken.contains("simul"), "{broken}");
    }
}
