//! An SPSA tuning run: the configuration (a match configuration with one engine and a `[spsa]`
//! section), the steps played through the runner, and their state in the store.
//!
//! The configuration is resolved once, as a match of the tuned engine against itself (the
//! book is loaded once, the engine's program or in-process parameters set up once); each step
//! then only swaps the two players: engine 0 at the step's `plus` values, engine 1 at its
//! `minus` values, and plays the step's pairs with the runner's in-memory tally
//! ([`tally_pairs`]). The pair indices are the step's ([`Spsa::step_pairs`]), so each step plays
//! other openings of the book, and replaying a step plays the same ones.
//!
//! **A step is the unit that survives a kill.** Its perturbation is a pure function of (seed,
//! step, θ), θ is what the last committed step left (read back bit for bit: the store keeps
//! the JSON this module writes), and the step's result and the new θ are committed in one
//! transaction keyed by (run, step). A run killed at any instant resumes after the last
//! committed step; a step cut short is played again from its start, and at fixed nodes with
//! staunton it gives the same games, so the trajectory is the one an uninterrupted run takes.
//!
//! In process, a value reaches staunton as its `Params` field; over UCI as `setoption name X
//! value Y` (an integer parameter's value formatted as an integer, since engines declare
//! them as spin options).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbiter_runner::config::{fnv1a, invalid, ConfigError, RunConfig, SprtConfig};
use arbiter_runner::play::{Event, MatchError, Players};
use arbiter_runner::player::{PlayerKind, PlayerSpec};
use arbiter_runner::sinks::tally_pairs;
use arbiter_runner::spec::{MatchSpec, PlaySpec};
use arbiter_store::{
    Committed, RunFacts, RunId, RunKind, RunOutcome, RunState, Store, StoreError, Totals,
    TuningStep,
};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::spsa::{
    parse_lines, staunton_params, Hyper, ParamKind, Perturbation, Spsa, SpsaError, SpsaParam,
    DEFAULT_ALPHA, DEFAULT_A_RATIO, DEFAULT_GAMMA,
};
use arbiter_records::spsa::{option_value, stored_theta};

/// The `[spsa]` section of a tuning configuration.
///
/// ```toml
/// [spsa]
/// pairs = 2000                 # game pairs in the whole run (fishtest's games / 2)
/// pairs_per_step = 8           # pairs played at one perturbation (default: max(concurrency, 4))
/// params = ["knight_mg", "knight_eg"]   # staunton's own, starting at the engine's values
/// # params_file = "tune.txt"   # or fishtest lines, for any UCI engine
/// [spsa.confirm]               # optional: an SPRT of the tuned values against the start
/// elo0 = 0
/// elo1 = 10
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpsaSection {
    pub pairs: u64,
    pub pairs_per_step: Option<u64>,
    pub a_ratio: Option<f64>,
    pub alpha: Option<f64>,
    pub gamma: Option<f64>,
    /// staunton's parameters by name, starting at the tuned engine's values.
    pub params: Option<Vec<String>>,
    /// fishtest's parameter lines (`name, int|float, start, min, max, c_end, r_end`), relative
    /// to the configuration's folder.
    pub params_file: Option<PathBuf>,
    pub confirm: Option<ConfirmSection>,
}

/// `[spsa.confirm]`: after tuning, an SPRT of the tuned values against the start values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmSection {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub model: Option<String>,
    /// The SPRT's pair limit (default: the match command's).
    pub rounds: Option<u64>,
}

impl ConfirmSection {
    /// The bounds as the match configuration's `[sprt]`.
    pub fn sprt(&self) -> SprtConfig {
        let default = |v: Option<f64>| v.unwrap_or(0.05);
        SprtConfig {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: default(self.alpha),
            beta: default(self.beta),
            model: self
                .model
                .clone()
                .unwrap_or_else(|| "normalized".to_owned()),
            judge: None,
        }
    }
}

/// A tuning configuration: a match configuration whose one engine is the tuned one, and the
/// `[spsa]` section.
#[derive(Clone, Debug, PartialEq)]
pub struct SpsaConfig {
    /// Everything but `[spsa]`, read by the match configuration's own code (its fields, their
    /// checks and their error messages).
    pub run: RunConfig,
    pub spsa: SpsaSection,
}

/// Wraps `[spsa]` for deserialising it alone, with the file's spans.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OnlySpsa {
    spsa: Option<SpsaSection>,
}

impl SpsaConfig {
    /// Reads a TOML file; syntax errors and unknown fields name the line and column.
    pub fn load(path: &Path) -> Result<SpsaConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        SpsaConfig::parse(&text, &path.display().to_string())
    }

    /// Parses the text: `[spsa]` is split off the document (keeping every span, so both
    /// halves report errors at their line in `origin`), the rest is a [`RunConfig`].
    pub fn parse(text: &str, origin: &str) -> Result<SpsaConfig, ConfigError> {
        let toml_error = |mut e: toml::de::Error| {
            e.set_input(Some(text));
            ConfigError::Toml {
                path: origin.to_owned(),
                message: e.to_string(),
            }
        };
        let mut document = toml::de::DeTable::parse(text).map_err(toml_error)?;
        let mut section = toml::de::DeTable::new();
        if let Some((key, value)) = document.get_mut().remove_entry("spsa") {
            section.insert(key, value);
        }
        let section = toml::Spanned::new(document.span(), section);
        let run =
            RunConfig::deserialize(toml::de::Deserializer::from(document)).map_err(toml_error)?;
        let OnlySpsa { spsa } =
            OnlySpsa::deserialize(toml::de::Deserializer::from(section)).map_err(toml_error)?;
        let spsa = spsa.ok_or_else(|| {
            invalid(
                "spsa",
                format!(
                    "{origin} has no [spsa] section: a tuning run needs at least `pairs` and \
                     `params` (or `params_file`)"
                ),
            )
        })?;
        Ok(SpsaConfig { run, spsa })
    }

    /// The canonical text (stored with the run): the match part's, then `[spsa]`.
    pub fn canonical(&self) -> String {
        #[derive(Serialize)]
        struct Spsa<'a> {
            spsa: &'a SpsaSection,
        }
        let spsa = toml::to_string(&Spsa { spsa: &self.spsa }).unwrap_or_default();
        format!("{}\n{spsa}", self.run.canonical())
    }

    /// The run's name: as given (`name`), or `spsa-ENGINE-HASH` of what defines its games
    /// and its steps, so that rerunning the same configuration finds the same run.
    pub fn run_name(&self) -> String {
        if let Some(name) = &self.run.name {
            return name.clone();
        }
        let engine = self.run.engines.first().map_or("", |e| e.name.as_str());
        let defining = SpsaConfig {
            run: self.run.defining(),
            spsa: self.spsa.clone(),
        };
        format!(
            "spsa-{engine}-{:016x}",
            fnv1a(defining.canonical().as_bytes())
        )
    }

    /// What differs between this configuration and `stored`'s (the one a run was started
    /// with), as `field: old -> new` lines: the match part's, then the section's.
    pub fn differences_from(&self, stored: &SpsaConfig) -> Vec<String> {
        let mut lines = self.run.differences_from(&stored.run);
        if self.spsa != stored.spsa {
            let show = |s: &SpsaSection| toml::to_string(s).unwrap_or_default().replace('\n', "; ");
            lines.push(format!(
                "spsa: {} -> {}",
                show(&stored.spsa),
                show(&self.spsa)
            ));
        }
        lines
    }

    /// The tuned engine's name.
    pub fn engine_name(&self) -> &str {
        self.run.engines.first().map_or("", |e| e.name.as_str())
    }

    /// Checks what the text alone decides, and returns the match configuration the steps are
    /// played from: the tuned engine twice (the second copy named `NAME-`), `rounds` = the
    /// run's pairs, colour-swapped pairs, no SPRT.
    pub fn match_config(&self) -> Result<RunConfig, ConfigError> {
        let run = &self.run;
        if run.engines.len() != 1 {
            return Err(invalid(
                "engine",
                format!(
                    "a tuning run has exactly one [[engine]], the tuned one (it plays itself at \
                     the two sides of each perturbation), found {}",
                    run.engines.len()
                ),
            ));
        }
        for (field, given) in [
            ("rounds", run.rounds.is_some()),
            ("sprt", run.sprt.is_some()),
            ("tournament", run.tournament.is_some()),
            ("seeds", run.seeds.is_some()),
        ] {
            if given {
                let why = match field {
                    "rounds" => "the run's game pairs are spsa.pairs",
                    "sprt" => "the confirmation SPRT after tuning is [spsa.confirm]",
                    _ => "a tuning run plays one engine against itself",
                };
                return Err(invalid(field, format!("not used in a tuning run: {why}")));
            }
        }
        if run.games.is_some_and(|g| g != 2) {
            return Err(invalid(
                "games",
                "SPSA plays colour-swapped pairs: leave games out (or 2)",
            ));
        }
        let s = &self.spsa;
        if s.pairs == 0 {
            return Err(invalid("spsa.pairs", "must be at least 1"));
        }
        if s.pairs_per_step == Some(0) {
            return Err(invalid(
                "spsa.pairs_per_step",
                "must be at least 1 (leave it out for max(concurrency, 4))",
            ));
        }
        match (&s.params, &s.params_file) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "spsa.params",
                    "give either params (staunton's parameters by name) or params_file \
                     (fishtest lines), not both",
                ))
            }
            (None, None) => {
                return Err(invalid(
                    "spsa.params",
                    "missing: the parameters to tune, as params = [\"knight_mg\", ...] \
                     (staunton's) or params_file = \"tune.txt\" (fishtest lines: name, \
                     int|float, start, min, max, c_end, r_end)",
                ))
            }
            (Some(names), None) if names.is_empty() => {
                return Err(invalid("spsa.params", "empty: name at least one parameter"))
            }
            _ => {}
        }
        let tuned = &run.engines[0];
        let mut second = tuned.clone();
        second.name = format!("{}-", tuned.name);
        let mut config = run.clone();
        config.engines.push(second);
        config.rounds = Some(s.pairs);
        Ok(config)
    }

    /// The hyper-parameters, with fishtest's defaults where none is given.
    pub fn hyper(&self, concurrency: usize) -> Hyper {
        let s = &self.spsa;
        Hyper {
            pairs: s.pairs,
            pairs_per_step: s
                .pairs_per_step
                .unwrap_or_else(|| (concurrency as u64).max(4)),
            a_ratio: s.a_ratio.unwrap_or(DEFAULT_A_RATIO),
            alpha: s.alpha.unwrap_or(DEFAULT_ALPHA),
            gamma: s.gamma.unwrap_or(DEFAULT_GAMMA),
        }
    }

    /// The tuned parameters of `player` (the resolved tuned engine): staunton's by name from
    /// its values, or the lines of `params_file` (relative to `base`). A staunton in process
    /// takes only its own parameters, as integers within their ranges.
    pub fn params(&self, player: &PlayerSpec, base: &Path) -> Result<Vec<SpsaParam>, SpsaRunError> {
        let params = match (&self.spsa.params, &self.spsa.params_file, &player.kind) {
            (Some(names), _, PlayerKind::Builtin(builtin)) => {
                staunton_params(names, &builtin.params)
                    .map_err(|e| invalid("spsa.params", e.to_string()))?
            }
            (Some(_), _, PlayerKind::Uci(_)) => {
                return Err(invalid(
                    "spsa.params",
                    "names staunton's own parameters, for builtin = \"staunton\"; a UCI \
                     engine's options are given as fishtest lines in params_file",
                )
                .into())
            }
            (None, Some(file), kind) => {
                let path = if file.is_absolute() {
                    file.clone()
                } else {
                    base.join(file)
                };
                let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Read {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
                let params = parse_lines(&text, &path.display().to_string())?;
                if let PlayerKind::Builtin(_) = kind {
                    check_staunton_lines(&params, &path)?;
                }
                params
            }
            (None, None, _) => return Err(invalid("spsa.params", "missing").into()),
        };
        Ok(params)
    }
}

/// A parameter file for the in-process staunton names its parameters, as integers within
/// their declared ranges (a value outside would be refused by `Params::set` mid-run).
fn check_staunton_lines(params: &[SpsaParam], path: &Path) -> Result<(), SpsaRunError> {
    for p in params {
        let at = |message: String| {
            invalid(
                format!("spsa.params_file ({})", path.display()),
                format!("{}: {message}", p.name),
            )
        };
        let Some((_, spec)) = staunton::params::spec(&p.name) else {
            return Err(
                at("staunton has no such parameter (`staunton params` lists them)".into()).into(),
            );
        };
        if p.kind != ParamKind::Int {
            return Err(at("staunton's parameters are integers: declare it int".into()).into());
        }
        if p.min < f64::from(spec.min) || p.max > f64::from(spec.max) {
            return Err(at(format!(
                "the range {}..{} goes beyond staunton's {}..{}",
                p.min, p.max, spec.min, spec.max
            ))
            .into());
        }
    }
    Ok(())
}

/// Checks fishtest lines for a UCI engine against the options it declares in its `uci`
/// answer, as [`check_staunton_lines`] does for staunton's own parameters: each must be an
/// option it declares, a `spin` for an int parameter (a float needs an option that takes a
/// fraction: not a spin, check, combo or button), and the tuned range must lie within the
/// spin's `min`..`max`. Without this a run plays every step with values the engine ignores or
/// clamps, exits 0 and writes a tuned file the engine refuses. `path` is the parameter file,
/// for the messages; the engine is started once and shut down.
pub async fn check_uci_options(
    player: &PlayerSpec,
    engine: &str,
    params: &[SpsaParam],
    path: &Path,
) -> Result<(), SpsaRunError> {
    let PlayerKind::Uci(process) = &player.kind else {
        return Ok(());
    };
    let field = format!("spsa.params_file ({})", path.display());
    let who = format!("engine {engine} ({})", process.cmd.display());
    let uci = arbiter_runner::process::UciProcess::start(process, player.timeouts)
        .await
        .map_err(|fault| {
            invalid(
                field.clone(),
                format!("{who} must answer `uci` for its options to be checked: {fault}"),
            )
        })?;
    let spins: Vec<String> = uci
        .options
        .iter()
        .filter(|o| o.kind == "spin")
        .map(|o| format!("{} {}..{}", o.name, o.min.unwrap_or(0), o.max.unwrap_or(0)))
        .collect();
    let mut problem = None;
    for p in params {
        let why = match uci.option(&p.name) {
            None => Some(format!(
                "{who} declares no option {:?}; its spin options: {}",
                p.name,
                if spins.is_empty() {
                    "none".to_owned()
                } else {
                    spins.join(", ")
                }
            )),
            Some(o) if p.kind == ParamKind::Int && o.kind != "spin" => Some(format!(
                "{who} declares {} as a {} option; an int parameter needs a spin",
                o.name, o.kind
            )),
            Some(o) if p.kind == ParamKind::Float && o.kind != "string" => Some(format!(
                "{who} declares {} as a {} option, which cannot take a fraction; declare the \
                 parameter int (or give the engine a string option for it)",
                o.name, o.kind
            )),
            Some(o) if o.kind == "spin" => {
                let (min, max) = (o.min.unwrap_or(i64::MIN), o.max.unwrap_or(i64::MAX));
                (p.min < min as f64 || p.max > max as f64).then(|| {
                    format!(
                        "the range {}..{} goes beyond the {min}..{max} that {who} declares for \
                         {}",
                        p.min, p.max, o.name
                    )
                })
            }
            Some(_) => None,
        };
        if let Some(why) = why {
            problem = Some(format!("{}: {why}", p.name));
            break;
        }
    }
    uci.shutdown().await;
    match problem {
        Some(reason) => Err(invalid(field, reason).into()),
        None => Ok(()),
    }
}

/// What can stop a tuning run.
#[derive(Debug, thiserror::Error)]
pub enum SpsaRunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Spsa(#[from] SpsaError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Match(#[from] MatchError),
    /// The store holds a tuning state this build cannot read (edited by hand, or damaged).
    #[error("run {run}: the stored {what} cannot be read: {reason}")]
    Stored {
        run: RunId,
        what: &'static str,
        reason: String,
    },
    /// A step's arithmetic left the finite numbers: nothing of it is stored (JSON would keep
    /// a NaN as `null`, which no later read accepts).
    #[error(
        "run {run}, step {step}: the step gave values that are not finite numbers ({values}); \
         nothing of it was stored: check the hyper-parameters and the parameters' c_end and r_end"
    )]
    NotFinite {
        run: RunId,
        step: u64,
        values: String,
    },
}

/// A finished step, as the driver reports it.
#[derive(Clone, Debug)]
pub struct StepDone {
    pub step: u64,
    /// The run's steps.
    pub steps: u64,
    /// Pairs played before it.
    pub iteration: u64,
    /// Its games, from the plus side.
    pub totals: Totals,
    /// The values it played at.
    pub perturbation: Perturbation,
    /// θ after it.
    pub theta: Vec<f64>,
}

/// How the tuning run stands when the driver starts.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// Steps already committed (0 for a new run).
    pub steps_done: u64,
    pub steps: u64,
    /// θ after the last committed step (θ₀ for a new run).
    pub theta: Vec<f64>,
}

/// θ as the store keeps it: JSON written with serde_json, read back bit for bit
/// (`float_roundtrip`).
fn theta_json(theta: &[f64]) -> String {
    serde_json::to_string(theta).unwrap_or_default()
}

/// The values a step stored (its JSON), read back for `spsa`: one finite number per
/// parameter.
pub fn theta_of(spsa: &Spsa, stored: &str) -> Result<Vec<f64>, String> {
    let theta = stored_theta(stored)?;
    if theta.len() != spsa.params().len() {
        return Err(format!(
            "{} values for {} parameters",
            theta.len(),
            spsa.params().len()
        ));
    }
    Ok(theta)
}

/// The record of step `step` (the run's `step`-th update): the games `totals` played at
/// perturbation `p`, applied to `theta`; with θ after it. The error lists the values that are
/// not finite numbers, which JSON could not keep.
pub fn step_record(
    spsa: &Spsa,
    step: u64,
    theta: &[f64],
    p: &Perturbation,
    totals: Totals,
) -> Result<(TuningStep, Vec<f64>), String> {
    let next = spsa.update(theta, p, totals.wins, totals.losses);
    let numbers = [&next, &p.c, &p.r, &p.plus, &p.minus];
    if !numbers.iter().all(|v| v.iter().all(|x| x.is_finite())) {
        return Err(format!("θ {next:?}, c_k {:?}, R_k {:?}", p.c, p.r));
    }
    let record = TuningStep {
        step,
        iteration: p.iteration,
        totals,
        perturbation: serde_json::to_string(p).unwrap_or_default(),
        theta: theta_json(&next),
    };
    Ok((record, next))
}

/// The tuned engine's two sides as a tuning run names them: `NAME+` plays the plus side.
pub fn side_names(engine: &str) -> [String; 2] {
    [format!("{engine}+"), format!("{engine}-")]
}

/// A tuning run's facts: the match's (its clocks, its book), as an SPSA run of `spsa`'s pairs
/// without an SPRT.
pub fn tuning_facts(spsa: &Spsa, facts: RunFacts) -> RunFacts {
    RunFacts {
        kind: RunKind::Spsa,
        games_planned: spsa.hyper().pairs.saturating_mul(2),
        sprt: None,
        ..facts
    }
}

/// θ after the last committed step of `run` (θ₀ if none), and how many steps are committed.
pub async fn resume_point(spsa: &Spsa, store: &Store, run: RunId) -> Result<Resumed, SpsaRunError> {
    let steps = store.tuning_steps(run).await?;
    let theta = match steps.last() {
        None => spsa.start(),
        Some(last) => match theta_of(spsa, &last.step.theta) {
            Ok(theta) => theta,
            Err(reason) => {
                let name = store.run(run).await?.spec.name;
                return Err(SpsaRunError::Stored {
                    run,
                    what: "values",
                    reason: format!(
                        "step {} of run {name:?}: {reason}; the run cannot be continued: \
                         start a new one under another `name`",
                        last.step.step
                    ),
                });
            }
        },
    };
    Ok(Resumed {
        steps_done: steps.len() as u64,
        steps: spsa.steps(),
        theta,
    })
}

/// The tuned player at `values` (one per parameter of `params`): staunton's fields set in
/// process, or `setoption` values over UCI (integers as integers).
pub fn player_at(
    base: &PlayerSpec,
    name: &str,
    params: &[SpsaParam],
    values: &[f64],
) -> Result<PlayerSpec, SpsaRunError> {
    let mut player = base.clone();
    player.name = name.to_owned();
    match &mut player.kind {
        PlayerKind::Builtin(builtin) => {
            for (p, &value) in params.iter().zip(values) {
                // Perturbed integer values are whole and clipped to ranges within staunton's.
                builtin
                    .params
                    .set(&p.name, value.round() as i64)
                    .map_err(|e| invalid(format!("spsa parameter {}", p.name), e.to_string()))?;
            }
        }
        PlayerKind::Uci(process) => {
            for (p, &value) in params.iter().zip(values) {
                process
                    .options
                    .retain(|(option, _)| !option.eq_ignore_ascii_case(&p.name));
                process
                    .options
                    .push((p.name.clone(), option_value(p.kind, value)));
            }
        }
    }
    Ok(player)
}

/// The games of one step: the resolved run's with its two players swapped for `players` (the
/// book and everything else shared or copied as they are).
fn step_spec(base: &PlaySpec, players: Vec<PlayerSpec>) -> PlaySpec {
    PlaySpec {
        players,
        ..base.clone()
    }
}

/// Plays the steps of `run` that the store lacks, committing each, and closes the run after
/// the last; returns θ after it. `base` is the resolved match of the tuned engine against
/// itself (its players give everything but the tuned values; its seed is the run's). Games'
/// events go to `events` (warnings, progress); `on_step` hears of each committed step.
///
/// The caller holds the run's lock ([`Store::lock_run`]).
pub async fn play_steps(
    spsa: &Spsa,
    base: &MatchSpec,
    store: &Store,
    run: RunId,
    events: &mpsc::UnboundedSender<Event>,
    mut on_step: impl FnMut(&StepDone),
) -> Result<Vec<f64>, SpsaRunError> {
    let resumed = resume_point(spsa, store, run).await?;
    let mut theta = resumed.theta;
    if let RunState::Finished { .. } = store.run(run).await?.state {
        return Ok(theta);
    }
    let params = spsa.params();
    let [plus_name, minus_name] = [0, 1].map(|i| base.players[i].name.clone());
    // The engines outlive the steps: over UCI a step sends the new values as `setoption`s to
    // the engines the previous step started, instead of starting them again.
    let engines = Arc::new(Players::default());
    let steps = async {
        for step in resumed.steps_done..spsa.steps() {
            let perturbation = spsa.perturb(&theta, step, base.seed);
            let players = vec![
                player_at(&base.players[0], &plus_name, params, &perturbation.plus)?,
                player_at(&base.players[1], &minus_name, params, &perturbation.minus)?,
            ];
            let spec = Arc::new(step_spec(base, players));
            let pairs: BTreeSet<u64> = spsa.step_pairs(step).collect();
            let totals = tally_pairs(spec, &pairs, &engines, events.clone()).await?;
            let (record, next) = step_record(spsa, step, &theta, &perturbation, totals)
                .map_err(|values| SpsaRunError::NotFinite { run, step, values })?;
            match store.commit_step(run, &record).await? {
                Committed::Inserted => theta = next,
                // Only a second player of the run could have committed it, which the run's lock
                // rules out; should it happen, the stored step is the truth.
                Committed::AlreadyPresent => {
                    theta = resume_point(spsa, store, run).await?.theta;
                }
            }
            on_step(&StepDone {
                step,
                steps: spsa.steps(),
                iteration: perturbation.iteration,
                totals,
                perturbation,
                theta: theta.clone(),
            });
        }
        Ok::<(), SpsaRunError>(())
    };
    let steps = steps.await;
    engines.shutdown().await;
    steps?;
    store.finish_run(run, RunOutcome::Complete).await?;
    Ok(theta)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENGINE: &str = "[[engine]]\nname = \"sta\"\nbuiltin = \"staunton\"\nnodes = 500\n";

    fn parse(text: &str) -> Result<SpsaConfig, ConfigError> {
        SpsaConfig::parse(text, "tune.toml")
    }

    #[test]
    fn the_spsa_section_is_split_off_and_both_halves_are_read() {
        let config = parse(&format!(
            "concurrency = 2\n{ENGINE}[spsa]\npairs = 40\nparams = [\"knight_mg\"]\n\
             [spsa.confirm]\nelo0 = 0\nelo1 = 10\n"
        ))
        .unwrap();
        assert_eq!(config.run.concurrency, Some(2));
        assert_eq!(config.spsa.pairs, 40);
        assert_eq!(config.spsa.confirm.as_ref().unwrap().elo1, 10.0);
        let hyper = config.hyper(2);
        assert_eq!((hyper.pairs_per_step, hyper.alpha), (4, DEFAULT_ALPHA));
        let matched = config.match_config().unwrap();
        assert_eq!(matched.engines.len(), 2);
        assert_eq!(matched.engines[1].name, "sta-");
        assert_eq!(matched.rounds, Some(40));
        // The stored text reads back as the same configuration.
        assert_eq!(parse(&config.canonical()).unwrap(), config);
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let unknown = parse(&format!(
            "{ENGINE}[spsa]\npairs = 4\nparams = []\nstep = 3\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            unknown.contains("tune.toml") && unknown.contains("line 8"),
            "{unknown}"
        );
        assert!(unknown.contains("unknown field `step`"), "{unknown}");
        // The match part's own errors keep their lines too.
        let match_part = parse(&format!("rouds = 3\n{ENGINE}[spsa]\npairs = 4\n"))
            .unwrap_err()
            .to_string();
        assert!(
            match_part.contains("line 1") && match_part.contains("rouds"),
            "{match_part}"
        );
        let missing = parse(ENGINE).unwrap_err().to_string();
        assert!(missing.contains("no [spsa] section"), "{missing}");
        let two = parse(&format!(
            "{ENGINE}{}[spsa]\npairs = 4\nparams = [\"knight_mg\"]\n",
            ENGINE.replace("sta", "stb")
        ))
        .unwrap()
        .match_config()
        .unwrap_err()
        .to_string();
        assert!(two.contains("exactly one [[engine]]"), "{two}");
        let none = parse(&format!("{ENGINE}[spsa]\npairs = 4\n"))
            .unwrap()
            .match_config()
            .unwrap_err()
            .to_string();
        assert!(none.starts_with("spsa.params: missing"), "{none}");
        let sprt = parse(&format!(
            "{ENGINE}[sprt]\nelo0 = 0\nelo1 = 5\n[spsa]\npairs = 4\nparams = [\"x\"]\n"
        ))
        .unwrap()
        .match_config()
        .unwrap_err()
        .to_string();
        assert!(sprt.contains("[spsa.confirm]"), "{sprt}");
    }

    /// Issue 18, item 9: a store where an older arbiter wrote a NaN (as `null`) is named with
    /// its run and step, not with serde's "invalid type: null".
    #[test]
    fn a_stored_null_is_named_with_its_run_not_a_serde_message() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let file = dir.path().join("runs.db").display().to_string();
            let store = Store::open(&arbiter_store::Location::parse(&file))
                .await
                .unwrap();
            let params = parse_lines("p, int, 5, 0, 10, 1, 0.002", "t").unwrap();
            let hyper = Hyper {
                pairs: 8,
                pairs_per_step: 4,
                a_ratio: DEFAULT_A_RATIO,
                alpha: DEFAULT_ALPHA,
                gamma: DEFAULT_GAMMA,
            };
            let spsa = Spsa::new(params, hyper).unwrap();
            let spec = arbiter_store::RunSpec::head_to_head(
                "nan-run".into(),
                1,
                String::new(),
                "e+".into(),
                "e-".into(),
                8,
            );
            let setup = spsa.setup().tuning_setup();
            let run = store.create_tuning_run(&spec, &setup).await.unwrap();
            let step = TuningStep {
                step: 0,
                iteration: 0,
                totals: Totals {
                    pairs: 4,
                    wins: 4,
                    draws: 0,
                    losses: 4,
                    pentanomial: [0, 0, 4, 0, 0],
                },
                perturbation: "{}".into(),
                theta: "[null]".into(),
            };
            assert_eq!(
                store.commit_step(run, &step).await.unwrap(),
                Committed::Inserted
            );
            let err = resume_point(&spsa, &store, run)
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("step 0 of run \"nan-run\": null where a value belongs"),
                "{err}"
            );
            assert!(!err.contains("invalid type"), "{err}");
            store.close().await;
        });
    }

    #[test]
    fn integer_options_reach_uci_engines_as_integers() {
        assert_eq!(option_value(ParamKind::Int, 327.0), "327");
        assert_eq!(option_value(ParamKind::Int, -3.0), "-3");
        assert_eq!(
            option_value(ParamKind::Float, 0.1 + 0.2),
            "0.30000000000000004"
        );
        let base = PlayerSpec {
            name: "e".into(),
            kind: PlayerKind::Uci(arbiter_runner::process::ProcessSpec {
                cmd: "e".into(),
                options: vec![
                    ("hash".into(), "8".into()),
                    ("KnightValue".into(), "1".into()),
                ],
                ..Default::default()
            }),
            timeouts: Default::default(),
            restart: false,
        };
        let param = |name: &str, kind| SpsaParam {
            name: name.into(),
            kind,
            start: 0.0,
            min: -1000.0,
            max: 1000.0,
            c_end: 1.0,
            r_end: 0.002,
        };
        let params = [
            param("knightvalue", ParamKind::Int),
            param("Scale", ParamKind::Float),
        ];
        let player = player_at(&base, "e+", &params, &[301.0, 0.25]).unwrap();
        let PlayerKind::Uci(process) = player.kind else {
            panic!()
        };
        assert_eq!(
            process.options,
            [
                ("hash".to_owned(), "8".to_owned()),
                ("knightvalue".to_owned(), "301".to_owned()),
                ("Scale".to_owned(), "0.25".to_owned())
            ]
        );
        assert_eq!(player.name, "e+");
    }
}
