//! Texel tuning: fitting staunton's evaluation weights to the results of the games positions
//! came from (statistics.md section 12).
//!
//! The evaluation is linear in almost every weight, tapered between its middlegame and endgame
//! halves, so each position is traced once ([`staunton::Evaluator::trace`]) into a sparse
//! coefficient vector and never searched again: an epoch is a pass of multiply-adds over those
//! vectors. The three non-linear parts get their own chain-rule terms (Ethereal's "methods"):
//! the king attack (quadratic in its unit weights), the drawish scale of the endgame half, and
//! tempo (added after tapering).
//!
//! The loss is the mean squared error between the game result and `σ(K·q/400)` with
//! `σ(x) = 1/(1 + e^(-x))`, the form of Ethereal and of Gedas' tuner. K is fitted once, on the
//! start parameters, by Ethereal's coarse-to-fine grid (K in 0..10 by 1, then ±1 step around
//! the best with a step ten times finer, [`K_REFINEMENTS`] times), and frozen: it ties the
//! engine's centipawns to winning chances, and leaving it free would let the fit rescale every
//! weight instead of improving the evaluation. The weights are then moved by full-batch Adam
//! (β1 0.9, β2 0.999; Gedas' choice), each clipped to its range, and finally rounded to
//! integers, as staunton stores them. Adam's step is about the same whatever the size of a
//! weight's gradient, so it is given per weight in units of the weight's own SPSA step `c_end`
//! (a knight moves by 12 × rate centipawns, a king-attack weight by 0.5 × rate units), and
//! falls linearly to a tenth by the last epoch so that the values settle.
//!
//! A position's score is the quiet one: by default the quiescence search's line is played out
//! first and the position it ends in is traced (Ethereal's QSRESOLVE), so that a position in
//! the middle of an exchange is not scored as if a piece were simply up.
//!
//! Positions that carry a search score (bullet's `FEN | score | result` files, the engines'
//! move comments of a PGN) may be labelled by a blend of the game's result and the score's
//! expected result ([`Dataset::blend_scores`]): a denser label than a result shared by a whole
//! game, and a way to learn from a stronger engine's judgement. K is fitted to the results
//! alone, before any blend.

use std::fmt;

use arbiter_rules::Position;
use staunton::evaluate::{
    KingDanger, DRAWISH_SCALE, ENTERS, KING_ATTACK_KINDS, KING_ATTACK_WEIGHTS, KING_DANGER_CAP,
    KS_SCALE, MAX_PHASE,
};
use staunton::params::{PARAMS, PARAM_COUNT};
use staunton::search::MATE_BOUND;
use staunton::{Engine, Enters, Evaluator, Params};

use crate::positions::LabeledPosition;

/// How many times Ethereal's grid for K is refined tenfold after the first pass by whole steps.
pub const K_REFINEMENTS: usize = 6;

/// What to do with a position that is not quiet (a capture or an escape from check pending).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Quiet {
    /// Play out the quiescence search's line and trace the position it ends in.
    #[default]
    Resolve,
    /// Keep only positions where the quiescence search stands pat (no line, not in check).
    Skip,
    /// Trace every position as it is.
    Keep,
}

impl fmt::Display for Quiet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quiet::Resolve => "resolve",
            Quiet::Skip => "skip",
            Quiet::Keep => "keep",
        })
    }
}

impl std::str::FromStr for Quiet {
    type Err = String;
    fn from_str(s: &str) -> Result<Quiet, String> {
        match s {
            "resolve" => Ok(Quiet::Resolve),
            "skip" => Ok(Quiet::Skip),
            "keep" => Ok(Quiet::Keep),
            _ => Err(format!(
                "expected \"resolve\", \"skip\" or \"keep\", found {s:?}"
            )),
        }
    }
}

/// Why a fit cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TexelError {
    #[error("no positions to fit: {0}")]
    NoPositions(String),
    #[error("parameter {0} is not an evaluation weight (search constants cannot be fitted to positions)")]
    NotAnEvaluationWeight(String),
    #[error("{0}")]
    Setting(String),
    /// K came out at the bottom of its grid: the start evaluation's scores do not tell the
    /// results apart, and every weight fitted with such a K would be noise.
    #[error(
        "K fitted to {0:.6}: the start parameters' scores do not predict the results at all (a \
         K near 0 predicts a draw everywhere); are the labels all draws, or read on the wrong \
         scale? Give k = ... to fit with a K of your own"
    )]
    KNotFitted(f64),
}

/// The smallest K a fit accepts from [`fit_k`]: below it σ(K·q/400) is within 0.01 of ½ for
/// any score under 16 pawns, so the fit would be to draws whatever the labels say.
pub const MIN_FITTED_K: f64 = 1e-3;

/// One linear coefficient of a position: parameter index and White-minus-Black count.
#[derive(Copy, Clone, Debug)]
struct Entry {
    param: u16,
    count: i16,
}

/// The king attacks of a position where at least one side has two attackers or more: the hits
/// of each side's pieces of each kind, White's counted positive.
#[derive(Copy, Clone, Debug)]
struct Danger {
    hits: [[f32; KING_ATTACK_KINDS]; 2],
    active: [bool; 2],
}

/// A traced position, as the fit reads it.
#[derive(Copy, Clone, Debug)]
struct Sample {
    /// `entries[start..start + len]` are its coefficients.
    start: u32,
    len: u16,
    drawish: bool,
    /// Middlegame share: phase / 24.
    rho: f32,
    /// Game result from White's side: 1, ½ or 0 (or an expected score). K is fitted to it.
    result: f32,
    /// A search's score of the position, centipawns from White's side; NaN when it had none.
    score: f32,
    /// What the loss compares the evaluation with: the result, or the result blended with the
    /// search score's expected result ([`Dataset::blend_scores`]).
    target: f32,
    /// Index in `dangers`, or `u32::MAX`.
    danger: u32,
}

/// Positions traced once, ready for any number of epochs.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    entries: Vec<Entry>,
    samples: Vec<Sample>,
    dangers: Vec<Danger>,
    /// Positions dropped: mate scores (and, with [`Quiet::Skip`], positions that are not quiet).
    pub dropped: usize,
}

impl Dataset {
    /// Traces `positions` with the evaluation of `params`, making each quiet as `quiet` says,
    /// on `threads` threads.
    pub fn trace(
        positions: &[LabeledPosition],
        params: &Params,
        quiet: Quiet,
        threads: usize,
    ) -> Dataset {
        let threads = threads.clamp(1, 64);
        let chunk = positions.len().div_ceil(threads).max(1);
        let parts: Vec<Dataset> = std::thread::scope(|scope| {
            let handles: Vec<_> = positions
                .chunks(chunk)
                .map(|part| scope.spawn(move || Dataset::trace_part(part, params, quiet)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a tracing thread panicked"))
                .collect()
        });
        let mut all = Dataset::default();
        for part in parts {
            all.append(part);
        }
        all
    }

    fn trace_part(positions: &[LabeledPosition], params: &Params, quiet: Quiet) -> Dataset {
        let eval = Evaluator::new(params);
        let mut engine = Engine::new(params.clone(), 0);
        let mut out = Dataset::default();
        for LabeledPosition {
            position: pos,
            result,
            score,
        } in positions
        {
            let leaf = match quiet {
                Quiet::Keep => Some(*pos),
                Quiet::Skip | Quiet::Resolve => {
                    let (score, line) = engine.quiescence(pos);
                    if score.abs() >= MATE_BOUND
                        || (quiet == Quiet::Skip && (!line.is_empty() || pos.is_check()))
                    {
                        None
                    } else {
                        let mut leaf = *pos;
                        for mv in line {
                            leaf.play_unchecked(mv);
                        }
                        Some(leaf)
                    }
                }
            };
            match leaf {
                Some(leaf) => out.push(&eval, &leaf, *result, *score),
                None => out.dropped += 1,
            }
        }
        out
    }

    fn push(&mut self, eval: &Evaluator, pos: &Position, result: f32, score: Option<i32>) {
        let (_, trace) = eval.trace(pos);
        let start = self.entries.len() as u32;
        for (i, &count) in trace.coefficients.iter().enumerate() {
            let linear = matches!(
                ENTERS[i],
                Some(Enters::Middlegame | Enters::Endgame | Enters::Tempo)
            );
            if count != 0 && linear {
                self.entries.push(Entry {
                    param: i as u16,
                    count: count as i16,
                });
            }
        }
        let active = trace.king_danger.map(|d: KingDanger| d.attackers >= 2);
        let danger = if active.contains(&true) {
            self.dangers.push(Danger {
                hits: trace.king_danger.map(|d| d.hits.map(|h| h as f32)),
                active,
            });
            self.dangers.len() as u32 - 1
        } else {
            u32::MAX
        };
        self.samples.push(Sample {
            start,
            len: (self.entries.len() as u32 - start) as u16,
            drawish: trace.drawish,
            rho: trace.phase as f32 / MAX_PHASE as f32,
            result,
            score: score.map_or(f32::NAN, |cp| cp as f32),
            target: result,
            danger,
        });
    }

    fn append(&mut self, other: Dataset) {
        let offset = self.entries.len() as u32;
        let danger_offset = self.dangers.len() as u32;
        self.entries.extend(other.entries);
        self.dangers.extend(other.dangers);
        self.samples.extend(other.samples.into_iter().map(|mut s| {
            s.start += offset;
            if s.danger != u32::MAX {
                s.danger += danger_offset;
            }
            s
        }));
        self.dropped += other.dropped;
    }

    /// How many of the positions carry a search score.
    pub fn scored(&self) -> usize {
        self.samples.iter().filter(|s| !s.score.is_nan()).count()
    }

    /// Labels each position that has a search score with `result_weight` × its game result +
    /// (1 − `result_weight`) × σ(K·score/400), the score's expected result on the scale K ties
    /// the evaluation to; the others keep their result. This is the blend of bullet's `wdl`
    /// proportion: a game's result labels every position of it alike, right or wrong about
    /// each, while a deeper search's score speaks for each position on its own (and for
    /// distillation from a stronger engine, for that engine's judgement). With 1 the scores
    /// are ignored, as before the blend existed.
    pub fn blend_scores(&mut self, k: f64, result_weight: f64) {
        for s in &mut self.samples {
            s.target = if s.score.is_nan() || result_weight >= 1.0 {
                s.result
            } else {
                let expected = sigmoid(k, f64::from(s.score));
                (result_weight * f64::from(s.result) + (1.0 - result_weight) * expected) as f32
            };
        }
    }

    /// How many positions the fit uses.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The score (centipawns, White's view) the tapered linear form gives position `i` under
    /// parameter values `theta` (in [`PARAMS`] order): the evaluation without its integer
    /// rounding.
    pub fn score(&self, i: usize, theta: &[f64]) -> f64 {
        self.forward(&self.samples[i], theta).q
    }

    /// The parts of a position's score the gradient needs.
    #[inline]
    fn forward(&self, s: &Sample, theta: &[f64]) -> Forward {
        let (mut mg, mut eg, mut whole) = (0.0, 0.0, 0.0);
        for e in &self.entries[s.start as usize..s.start as usize + s.len as usize] {
            let v = f64::from(e.count) * theta[e.param as usize];
            match ENTERS[e.param as usize] {
                Some(Enters::Middlegame) => mg += v,
                Some(Enters::Endgame) => eg += v,
                _ => whole += v,
            }
        }
        let mut units = [0.0; 2];
        if s.danger != u32::MAX {
            let d = &self.dangers[s.danger as usize];
            let sides = units.iter_mut().zip(d.active).zip(d.hits).zip(SIGN);
            for (((units, active), hits), sign) in sides {
                if active {
                    *units = KING_ATTACK_WEIGHTS
                        .iter()
                        .zip(hits)
                        .map(|(&w, h)| theta[w] * f64::from(h))
                        .sum();
                    mg += sign * king_bonus(*units, theta[KS_SCALE]);
                }
            }
        }
        let scale = if s.drawish {
            theta[DRAWISH_SCALE] / 64.0
        } else {
            1.0
        };
        let rho = f64::from(s.rho);
        Forward {
            q: rho * mg + (1.0 - rho) * eg * scale + whole,
            eg,
            scale,
            units,
        }
    }
}

/// Parameter values as the fit moves them: real numbers, in [`PARAMS`] order.
pub fn theta_of(params: &Params) -> Vec<f64> {
    params.values().iter().map(|&v| f64::from(v)).collect()
}

const SIGN: [f64; 2] = [1.0, -1.0];
/// The king attack bonus without the engine's integer division: `min(u² · scale / 64, cap)`.
#[inline]
fn king_bonus(units: f64, scale: f64) -> f64 {
    (units * units * scale / 64.0).min(f64::from(KING_DANGER_CAP))
}

struct Forward {
    q: f64,
    eg: f64,
    scale: f64,
    units: [f64; 2],
}

#[inline]
fn sigmoid(k: f64, q: f64) -> f64 {
    1.0 / (1.0 + (-k * q / 400.0).exp())
}

/// The mean squared error of the dataset's scores `q` (per position) against its results.
fn mse_of_scores(data: &Dataset, scores: &[f64], k: f64) -> f64 {
    let sum: f64 = data
        .samples
        .iter()
        .zip(scores)
        .map(|(s, &q)| (f64::from(s.result) - sigmoid(k, q)).powi(2))
        .sum();
    sum / data.len() as f64
}

/// K minimising the loss of the scores under `params`: Ethereal's coarse-to-fine grid.
pub fn fit_k(data: &Dataset, params: &Params) -> f64 {
    let theta = &theta_of(params);
    let scores: Vec<f64> = (0..data.len()).map(|i| data.score(i, theta)).collect();
    let (mut start, mut end, mut step) = (0.0f64, 10.0f64, 1.0f64);
    let mut best = (f64::INFINITY, 1.0);
    for _ in 0..=K_REFINEMENTS {
        let mut k = start;
        while k <= end + step / 2.0 {
            if k > 0.0 {
                let loss = mse_of_scores(data, &scores, k);
                if loss < best.0 {
                    best = (loss, k);
                }
            }
            k += step;
        }
        start = best.1 - step;
        end = best.1 + step;
        step /= 10.0;
    }
    best.1
}

/// [`fit_k`], refused when K comes out at the bottom of its grid ([`MIN_FITTED_K`]).
pub fn fitted_k(data: &Dataset, params: &Params) -> Result<f64, TexelError> {
    match fit_k(data, params) {
        k if k >= MIN_FITTED_K => Ok(k),
        k => Err(TexelError::KNotFitted(k)),
    }
}

/// How a fit runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Indices (in [`PARAMS`] order) of the parameters to move; the rest stay as they start.
    pub tuned: Vec<usize>,
    pub epochs: usize,
    /// Adam's step size at the first epoch, in units of each parameter's SPSA step `c_end`
    /// (12 centipawns for a knight, 0.5 attack units for a king-attack weight): weights of
    /// every size move at a pace their range suits. It falls linearly to a tenth by the end.
    pub learning_rate: f64,
    /// K to use instead of fitting it.
    pub k: Option<f64>,
    pub threads: usize,
}

impl Settings {
    /// Every evaluation weight, no search constant: what a fit moves unless told otherwise.
    pub fn evaluation_weights() -> Vec<usize> {
        (0..PARAM_COUNT).filter(|&i| ENTERS[i].is_some()).collect()
    }

    /// Settings a fit cannot run with, named as the configuration names them.
    pub fn check(&self) -> Result<(), TexelError> {
        let positive = |name: &str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(TexelError::Setting(format!(
                    "{name}: expected a positive number, found {value}"
                )))
            }
        };
        positive("learning_rate", self.learning_rate)?;
        if let Some(k) = self.k {
            positive("k", k)?;
        }
        if self.epochs == 0 {
            return Err(TexelError::Setting(
                "epochs: expected at least 1".to_owned(),
            ));
        }
        if self.tuned.is_empty() {
            return Err(TexelError::Setting(
                "tune: empty: name at least one evaluation weight (or leave tune out for all \
                 of them)"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// The indices of parameters named in `names`; search constants and unknown names are
    /// errors.
    pub fn weights_named<S: AsRef<str>>(names: &[S]) -> Result<Vec<usize>, TexelError> {
        names
            .iter()
            .map(|name| {
                let name = name.as_ref();
                match staunton::params::spec(name) {
                    Some((i, _)) if ENTERS[i].is_some() => Ok(i),
                    Some(_) => Err(TexelError::NotAnEvaluationWeight(name.to_owned())),
                    None => Err(TexelError::Setting(format!("unknown parameter {name:?}"))),
                }
            })
            .collect()
    }
}

/// Where a fit ended.
///
/// The values kept are those of the epoch with the lowest loss, not the last epoch's: a
/// learning rate too large for the data makes Adam overshoot and the loss climb, and the
/// values it ends at are then worse than ones it passed through (or than the start).
#[derive(Clone, Debug)]
pub struct Fit {
    pub k: f64,
    /// The loss before the first epoch and after each one.
    pub loss: Vec<f64>,
    /// Which entry of `loss` is the lowest, the values kept: 0 when no epoch improved on the
    /// start.
    pub best_epoch: usize,
    /// The values kept, unrounded, in [`PARAMS`] order.
    pub theta: Vec<f64>,
    /// The values kept, rounded to staunton's integers: what is written.
    pub params: Params,
    /// The loss of `params` (after the rounding).
    pub written_loss: f64,
}

impl Fit {
    /// The loss at the start values.
    pub fn start_loss(&self) -> f64 {
        self.loss[0]
    }

    /// The tuned parameters the fit left at an end of their range that they did not start at
    /// (index, and the bound): the data pushes them beyond what staunton allows, which is worth
    /// a look (a wrong label scale, a runaway learning rate, or a weight the data cannot pin).
    pub fn at_bounds(&self, start: &Params, tuned: &[usize]) -> Vec<(usize, i32)> {
        let (before, after) = (start.values(), self.params.values());
        tuned
            .iter()
            .filter_map(|&i| {
                let spec = &PARAMS[i];
                [spec.min, spec.max]
                    .into_iter()
                    .find(|&bound| after[i] == bound && before[i] != bound)
                    .map(|bound| (i, bound))
            })
            .collect()
    }
}

/// The loss and its gradient over all parameters at `theta`.
fn loss_and_gradient(data: &Dataset, theta: &[f64], k: f64, threads: usize) -> (f64, Vec<f64>) {
    let chunk = data.samples.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<(f64, Vec<f64>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = data
            .samples
            .chunks(chunk)
            .map(|part| scope.spawn(move || partial_gradient(data, part, theta, k)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a gradient thread panicked"))
            .collect()
    });
    let n = data.len() as f64;
    let mut loss = 0.0;
    let mut grad = vec![0.0; PARAM_COUNT];
    for (l, g) in parts {
        loss += l;
        for (a, b) in grad.iter_mut().zip(g) {
            *a += b;
        }
    }
    grad.iter_mut().for_each(|g| *g /= n);
    (loss / n, grad)
}

fn partial_gradient(data: &Dataset, samples: &[Sample], theta: &[f64], k: f64) -> (f64, Vec<f64>) {
    let mut grad = vec![0.0; PARAM_COUNT];
    let mut loss = 0.0;
    for s in samples {
        let f = data.forward(s, theta);
        let sig = sigmoid(k, f.q);
        let err = sig - f64::from(s.target);
        loss += err * err;
        // dE/dq for this position (the 1/N is applied once at the end).
        let dq = 2.0 * err * sig * (1.0 - sig) * k / 400.0;
        let rho = f64::from(s.rho);
        let (d_mg, d_eg) = (dq * rho, dq * (1.0 - rho) * f.scale);
        for e in &data.entries[s.start as usize..s.start as usize + s.len as usize] {
            let c = f64::from(e.count);
            grad[e.param as usize] += c * match ENTERS[e.param as usize] {
                Some(Enters::Middlegame) => d_mg,
                Some(Enters::Endgame) => d_eg,
                _ => dq,
            };
        }
        if s.drawish {
            grad[DRAWISH_SCALE] += dq * (1.0 - rho) * f.eg / 64.0;
        }
        if s.danger != u32::MAX {
            let d = &data.dangers[s.danger as usize];
            let scale = theta[KS_SCALE];
            let sides = f.units.iter().zip(d.active).zip(d.hits).zip(SIGN);
            for (((&u, active), hits), sign) in sides {
                // Past the cap the bonus is flat: no gradient.
                if active && u * u * scale / 64.0 < f64::from(KING_DANGER_CAP) {
                    let g = d_mg * sign;
                    grad[KS_SCALE] += g * u * u / 64.0;
                    for (&w, h) in KING_ATTACK_WEIGHTS.iter().zip(hits) {
                        grad[w] += g * 2.0 * u * f64::from(h) * scale / 64.0;
                    }
                }
            }
        }
    }
    (loss, grad)
}

/// Fits the parameters in `settings.tuned` to `data`, starting from `start`. `on_epoch`
/// hears each epoch's number and the loss before it (for progress output).
pub fn fit(
    data: &Dataset,
    start: &Params,
    settings: &Settings,
    on_epoch: &mut dyn FnMut(usize, f64),
) -> Result<Fit, TexelError> {
    if data.is_empty() {
        return Err(TexelError::NoPositions(format!(
            "{} positions were dropped (mate scores or not quiet)",
            data.dropped
        )));
    }
    settings.check()?;
    let mut theta = theta_of(start);
    let k = match settings.k {
        Some(k) => k,
        None => fitted_k(data, start)?,
    };
    let mut best = (f64::INFINITY, 0, theta.clone());
    let (beta1, beta2, eps) = (0.9, 0.999, 1e-8);
    let mut m = vec![0.0; PARAM_COUNT];
    let mut v = vec![0.0; PARAM_COUNT];
    let mut losses = Vec::with_capacity(settings.epochs + 1);
    for epoch in 1..=settings.epochs {
        let (loss, grad) = loss_and_gradient(data, &theta, k, settings.threads);
        if loss < best.0 {
            best = (loss, epoch - 1, theta.clone());
        }
        losses.push(loss);
        on_epoch(epoch, loss);
        let t = epoch as i32;
        // Adam's steps stay near full size however small the gradient: a rate that shrinks
        // to a tenth by the last epoch lets the values settle instead of circling the optimum.
        let rate =
            settings.learning_rate * (1.0 - 0.9 * (epoch - 1) as f64 / settings.epochs as f64);
        for &j in &settings.tuned {
            m[j] = beta1 * m[j] + (1.0 - beta1) * grad[j];
            v[j] = beta2 * v[j] + (1.0 - beta2) * grad[j] * grad[j];
            let m_hat = m[j] / (1.0 - beta1.powi(t));
            let v_hat = v[j] / (1.0 - beta2.powi(t));
            let spec = &PARAMS[j];
            let step = rate * PARAMS[j].c_end;
            theta[j] = (theta[j] - step * m_hat / (v_hat.sqrt() + eps))
                .clamp(f64::from(spec.min), f64::from(spec.max));
        }
    }
    let last = loss_and_gradient(data, &theta, k, settings.threads).0;
    if last < best.0 {
        best = (last, settings.epochs, theta);
    }
    losses.push(last);
    let (_, best_epoch, theta) = best;
    let mut params = start.clone();
    for &j in &settings.tuned {
        params
            .set(PARAMS[j].name, theta[j].round() as i64)
            .expect("theta is clipped to the parameter's range");
    }
    let written_loss = loss_and_gradient(data, &theta_of(&params), k, settings.threads).0;
    Ok(Fit {
        k,
        loss: losses,
        best_epoch,
        theta,
        params,
        written_loss,
    })
}

#[cfg(test)]
mod tests;
