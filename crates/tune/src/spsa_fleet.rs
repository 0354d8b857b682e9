//! SPSA on the fleet: a tuning run queued for workers on many machines (`arbiter submit` of a
//! tuning configuration), and a worker's part in it ([`SpsaTuner`]).
//!
//! **A batch is a step.** Its pairs are the step's ([`Spsa::step_pairs`]), so a run is cut
//! into batches of `pairs_per_step`, and its perturbation comes from (run, batch): the flips,
//! rounding draws and gains of step b, drawn from the run's seed, around the values the run
//! has when a worker claims the batch. The update (`R_k·c_k·(W − L)` along the batch's flips)
//! is applied in the submit's transaction ([`Store::submit_tuning_batch`]) to the values the
//! run has then, exactly once, each update from the values the one before left. This is
//! fishtest's asynchronous SPSA: a worker perturbs the values it is given, and its result
//! moves the values as they are when it reports.
//!
//! With one worker the batches come in order, each from the last one's values, and the run is
//! step for step the run `arbiter tune spsa` plays on one machine (at fixed nodes, to the last
//! bit). With many, an update computed at older values moves newer ones, and the steps are
//! numbered in the order their updates were applied; the perturbation each step stores names
//! its batch (`step`) and what was played. The run is the run type `tune spsa` makes (its
//! set-up and steps in the same tables), so `arbiter report` reads either the same way.
//!
//! [`Store::submit_tuning_batch`]: arbiter_store::Store::submit_tuning_batch

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbiter_records::spsa::SpsaSetup;
use arbiter_runner::config::RunConfig;
use arbiter_runner::fleet::{MakeTunedStep, TunedBatch, Tuner, TuningPlan, TuningSubmission};
use arbiter_runner::player::PlayerSpec;
use arbiter_store::{Lease, Totals, TuningMethod, TuningSetup};
use futures_util::future::BoxFuture;

use crate::spsa::{Perturbation, Spsa};
use crate::spsa_run::{
    check_uci_options, player_at, side_names, step_record, theta_of, tuning_facts, SpsaConfig,
    SpsaRunError,
};

/// What `arbiter submit` queues for a tuning configuration read from the folder `base`: the
/// match its steps play (checked and stored by the fleet as a match is) and the tuning run's
/// own part. Checked as `arbiter tune spsa` checks it before anything is stored; a UCI
/// engine's declared options are checked by the workers that have it, not here.
pub fn tuning_submission(
    config: &SpsaConfig,
    base: &Path,
) -> Result<(RunConfig, TuningSubmission), SpsaRunError> {
    let match_config = config.match_config()?;
    let checked = match_config.check()?;
    let facts = checked.facts();
    let spec = checked.resolve(base, 0)?;
    let params = config.params(&spec.players[0], base)?;
    let spsa = Spsa::new(params, config.hyper(spec.concurrency))?;
    let submission = TuningSubmission {
        run_name: config.run_name(),
        config: config.canonical(),
        engines: side_names(config.engine_name()).to_vec(),
        setup: spsa.setup().tuning_setup(),
        facts: tuning_facts(&spsa, facts),
        step_pairs: spsa.hyper().pairs_per_step,
    };
    Ok((match_config, submission))
}

/// The worker's SPSA: what `arbiter worker` plays a queued SPSA run's batches with.
#[derive(Debug, Default)]
pub struct SpsaTuner;

impl Tuner for SpsaTuner {
    fn open(
        &self,
        config: &str,
        origin: &str,
        setup: &TuningSetup,
        seed: u64,
    ) -> Result<(RunConfig, Box<dyn TuningPlan>), String> {
        if setup.method != TuningMethod::Spsa {
            return Err(format!(
                "{origin} tunes by {}, which this worker cannot",
                setup.method.as_str()
            ));
        }
        let config = SpsaConfig::parse(config, origin).map_err(|e| e.to_string())?;
        let match_config = config.match_config().map_err(|e| e.to_string())?;
        // The parameters and hyper-parameters as the submitter resolved them (a params_file's
        // lines, staunton's start values): every worker tunes exactly those.
        let stored: SpsaSetup = serde_json::from_str(&setup.setup)
            .map_err(|e| format!("{origin}: the stored SPSA set-up cannot be read: {e}"))?;
        let spsa = Spsa::new(stored.params, stored.hyper).map_err(|e| format!("{origin}: {e}"))?;
        let plan = SpsaPlan {
            spsa: Arc::new(spsa),
            seed,
            sides: side_names(config.engine_name()),
            origin: origin.to_owned(),
            engine: config.engine_name().to_owned(),
            params_file: config.spsa.params_file.clone().unwrap_or_default(),
        };
        Ok((match_config, Box::new(plan)))
    }
}

/// A queued SPSA run on a worker.
struct SpsaPlan {
    spsa: Arc<Spsa>,
    seed: u64,
    sides: [String; 2],
    origin: String,
    /// The tuned engine, and the parameter file the submitter read (named in errors).
    engine: String,
    params_file: PathBuf,
}

/// The values `stored` holds (θ₀ before the first step).
fn values(spsa: &Spsa, stored: Option<&str>, origin: &str) -> Result<Vec<f64>, String> {
    match stored {
        None => Ok(spsa.start()),
        Some(text) => theta_of(spsa, text)
            .map_err(|reason| format!("{origin}: the stored values cannot be read: {reason}")),
    }
}

impl TuningPlan for SpsaPlan {
    fn check<'a>(&'a self, players: &'a [PlayerSpec]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some(tuned) = players.first() else {
                return Err(format!("{}: the tuning match has no players", self.origin));
            };
            // As `arbiter tune spsa` checks before it plays: the options exist, with room
            // for the parameters' ranges.
            check_uci_options(tuned, &self.engine, self.spsa.params(), &self.params_file)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn batch(
        &self,
        players: &[PlayerSpec],
        lease: &Lease,
        theta: Option<&str>,
    ) -> Result<TunedBatch, String> {
        let step = lease.sequence;
        let planned = self.spsa.step_pairs(step);
        if lease.unit_range() != planned {
            return Err(format!(
                "{}: batch {step} holds pairs {:?}, but SPSA step {step} plays pairs {planned:?}",
                self.origin,
                lease.unit_range()
            ));
        }
        let claimed = values(&self.spsa, theta, &self.origin)?;
        let p = self.spsa.perturb(&claimed, step, self.seed);
        let params = self.spsa.params();
        let [plus, minus] = &self.sides;
        let sides = [(plus, &p.plus), (minus, &p.minus)];
        let players = players
            .iter()
            .zip(sides)
            .map(|(player, (name, at))| player_at(player, name, params, at))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let played = serde_json::to_string(&p).map_err(|e| e.to_string())?;
        Ok(TunedBatch {
            players,
            step: self.update(p),
            played,
        })
    }

    fn step(&self, lease: &Lease, played: &str) -> Result<Box<MakeTunedStep>, String> {
        let step = lease.sequence;
        let p: Perturbation = serde_json::from_str(played)
            .map_err(|e| format!("the perturbation of batch {step} cannot be read: {e}"))?;
        // The flips and gains are the run's for this batch (drawn from its seed); only the
        // sides' values depend on the values the worker was given.
        let planned = self.spsa.perturb(&self.spsa.start(), step, self.seed);
        if p.step != step || p.iteration != planned.iteration {
            return Err(format!(
                "the perturbation is of step {} (pair {}), but batch {step} is step {step} \
                 (pair {})",
                p.step, p.iteration, planned.iteration
            ));
        }
        for (field, same) in [
            ("flips", p.flips == planned.flips),
            ("c", p.c == planned.c),
            ("r", p.r == planned.r),
        ] {
            if !same {
                return Err(format!(
                    "the perturbation's {field} are not this run's for step {step}"
                ));
            }
        }
        for (side, values) in [("plus", &p.plus), ("minus", &p.minus)] {
            let params = self.spsa.params();
            if values.len() != params.len() {
                return Err(format!(
                    "the perturbation's {side} side has {} values for {} parameters",
                    values.len(),
                    params.len()
                ));
            }
            if let Some((param, value)) = params
                .iter()
                .zip(values)
                .find(|(param, v)| !(param.min..=param.max).contains(*v))
            {
                return Err(format!(
                    "the perturbation's {side} side sets {} to {value}, outside {}..={}",
                    param.name, param.min, param.max
                ));
            }
        }
        Ok(self.update(p))
    }
}

impl SpsaPlan {
    /// The step a batch played at `p` makes: the update applied to the values the run has
    /// when it is submitted.
    fn update(&self, p: Perturbation) -> Box<MakeTunedStep> {
        let (spsa, origin) = (Arc::clone(&self.spsa), self.origin.clone());
        let step = p.step;
        Box::new(move |number: u64, now: Option<&str>, tally: &Totals| {
            let theta = values(&spsa, now, &origin)?;
            step_record(&spsa, number, &theta, &p, *tally)
                .map(|(record, _)| record)
                .map_err(|values| {
                    format!(
                        "batch {step} gave values that are not finite numbers ({values}): \
                         check the hyper-parameters and the parameters' c_end and r_end"
                    )
                })
        })
    }
}
