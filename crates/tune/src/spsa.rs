//! SPSA as fishtest runs it (the "classic" algorithm; docs/statistics.md section 10), so that a
//! tuning run here means what it means there and its parameter lines can be pasted across.
//!
//! A run of `pairs` game pairs is cut into steps of `pairs_per_step` pairs. Every pair of a step
//! is played at one perturbation: each parameter moved by `±c_k` at once, the plus side against
//! the minus side. fishtest's worker batch is such a step, and fishtest's bookkeeping is kept
//! exactly: the iteration counts game pairs (a step at iteration `i` advances it by its pairs),
//! `c_k` and `R_k` are taken at the iteration the step was *scheduled* at, `k = i + 1`, and the
//! update is `θ ← clip(θ + R_k·c_k·(W − L)·flip)` with W and L counted from the plus side. Both the
//! perturbed values and θ are clipped to the parameter's range.
//!
//! Where fishtest is silent or loose, OpenBench's choices are taken, for integer parameters only
//! (a float parameter follows fishtest's arithmetic to the last bit, which a test replays):
//! - `c_k` is at least 0.5, and both sides round stochastically with *the same* uniform draw,
//!   `floor(v + u)`, so the two values always differ by at least one (fishtest has no floor, and
//!   late in a run both sides could round to the same integer and the pair would measure
//!   nothing; fishtest PR #1912). `R_k` is taken with the floored `c_k`, so `R_k·c_k² = a_k`
//!   still holds and the step size shrinks rather than grows.
//! - Flips and rounding draws are a pure function of (run seed, step, parameter): replaying a
//!   step after a crash perturbs exactly as the first attempt did (the determinism contract in
//!   docs/ARCHITECTURE.md), which is what fishtest's signed flip vector guarantees on its side.

use std::ops::Range;

use serde::{Deserialize, Serialize};

pub use arbiter_records::spsa::{shown, Hyper, ParamKind, SpsaParam, SpsaSetup};

/// fishtest's defaults (PR #619).
pub const DEFAULT_A_RATIO: f64 = 0.1;
pub const DEFAULT_ALPHA: f64 = 0.602;
pub const DEFAULT_GAMMA: f64 = 0.101;

/// The smallest perturbation of an integer parameter: with one shared rounding draw, the two
/// sides then differ by at least one.
const MIN_INTEGER_C: f64 = 0.5;

/// A parameter list or hyper-parameter that cannot be tuned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SpsaError {
    /// A line of a parameter file.
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: usize,
        message: String,
    },
    #[error("parameter {name}: {message}")]
    Param { name: String, message: String },
    #[error("{0}")]
    Hyper(String),
}

/// Reads fishtest's parameter lines: `name, int|float, start, min, max, c_end, r_end`
/// (OpenBench's form and `staunton params --spsa`'s), or the six-field
/// `name, start, min, max, c_end, r_end` (fishtest's form and Stockfish's `TUNE()` output),
/// which means an integer parameter. Blank lines and `#` comments are skipped.
pub fn parse_lines(text: &str, source: &str) -> Result<Vec<SpsaParam>, SpsaError> {
    let mut params: Vec<SpsaParam> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |message: String| SpsaError::Line {
            file: source.to_owned(),
            line,
            message,
        };
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        let (name, kind, numbers) = match fields.len() {
            7 => {
                let kind = match fields[1].to_ascii_lowercase().as_str() {
                    "int" => ParamKind::Int,
                    "float" => ParamKind::Float,
                    other => {
                        return Err(err(format!(
                        "expected the type `int` or `float` in the second field, found {other:?}"
                    )))
                    }
                };
                (fields[0], kind, &fields[2..])
            }
            6 => (fields[0], ParamKind::Int, &fields[1..]),
            n => {
                return Err(err(format!(
                    "expected `name, int|float, start, min, max, c_end, r_end` \
                     (or fishtest's six fields without the type), found {n} fields"
                )))
            }
        };
        if name.is_empty() {
            return Err(err("the parameter name is empty".to_owned()));
        }
        let mut values = [0.0; 5];
        for (value, (text, what)) in values.iter_mut().zip(
            numbers
                .iter()
                .zip(["start", "min", "max", "c_end", "r_end"]),
        ) {
            *value = text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| err(format!("{what}: expected a number, found {text:?}")))?;
        }
        let [start, min, max, c_end, r_end] = values;
        let param = SpsaParam {
            name: name.to_owned(),
            kind,
            start,
            min,
            max,
            c_end,
            r_end,
        };
        check_param(&param).map_err(&err)?;
        if params.iter().any(|p| p.name == param.name) {
            return Err(err(format!("{name} is listed twice")));
        }
        params.push(param);
    }
    if params.is_empty() {
        return Err(SpsaError::Line {
            file: source.to_owned(),
            line: text.lines().count().max(1),
            message: "no parameter lines".to_owned(),
        });
    }
    Ok(params)
}

/// staunton's own parameters by name (case-insensitive, as UCI names are), starting from their
/// values in `params`, with the ranges and `c_end`/`r_end` of staunton's specs.
pub fn staunton_params(
    names: &[String],
    params: &staunton::Params,
) -> Result<Vec<SpsaParam>, SpsaError> {
    let mut out: Vec<SpsaParam> = Vec::with_capacity(names.len());
    for name in names {
        let (_, spec) = staunton::params::spec(name).ok_or_else(|| SpsaError::Param {
            name: name.clone(),
            message: "staunton has no such parameter (`staunton params` lists them)".to_owned(),
        })?;
        if out.iter().any(|p| p.name == spec.name) {
            return Err(SpsaError::Param {
                name: spec.name.to_owned(),
                message: "listed twice".to_owned(),
            });
        }
        let value = params.get(spec.name).unwrap_or(spec.default);
        out.push(SpsaParam {
            name: spec.name.to_owned(),
            kind: ParamKind::Int,
            start: f64::from(value),
            min: f64::from(spec.min),
            max: f64::from(spec.max),
            c_end: spec.c_end,
            r_end: spec.r_end,
        });
    }
    Ok(out)
}

/// What makes a parameter untunable, in words.
fn check_param(p: &SpsaParam) -> Result<(), String> {
    let numbers = [p.start, p.min, p.max, p.c_end, p.r_end];
    if numbers.iter().any(|v| !v.is_finite()) {
        return Err(format!(
            "{}: every number must be finite, found {numbers:?}",
            p.name
        ));
    }
    if p.min >= p.max {
        return Err(format!(
            "{}: min {} must be below max {}",
            p.name, p.min, p.max
        ));
    }
    if p.start < p.min || p.start > p.max {
        return Err(format!(
            "{}: start {} is outside {}..={}",
            p.name, p.start, p.min, p.max
        ));
    }
    if p.kind == ParamKind::Int && (p.min.fract() != 0.0 || p.max.fract() != 0.0) {
        return Err(format!(
            "{}: an int parameter needs integer bounds, found {}..={}",
            p.name, p.min, p.max
        ));
    }
    if p.c_end <= 0.0 {
        return Err(format!(
            "{}: c_end must be above 0, found {}",
            p.name, p.c_end
        ));
    }
    if p.r_end < 0.0 {
        return Err(format!(
            "{}: r_end must be 0 or more, found {}",
            p.name, p.r_end
        ));
    }
    Ok(())
}

/// A parameter with the constants fishtest derives from it at set-up.
#[derive(Clone, Debug)]
struct Derived {
    /// `c_end · num_iter^γ`: the perturbation at iteration 1.
    c: f64,
    /// `r_end · c_end² · (A + num_iter)^α`.
    a: f64,
}

/// A tuning run's algorithm: the parameters, the hyper-parameters and what follows from them.
#[derive(Clone, Debug)]
pub struct Spsa {
    params: Vec<SpsaParam>,
    hyper: Hyper,
    /// fishtest's `A`, an integer number of iterations.
    big_a: f64,
    derived: Vec<Derived>,
}

/// One step's perturbation: what each side plays with and what the update needs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Perturbation {
    pub step: u64,
    /// Game pairs played before the step (fishtest's `iter` at the request).
    pub iteration: u64,
    /// +1 or -1 per parameter: the plus side moved up or down.
    pub flips: Vec<i8>,
    /// `c_k` per parameter (for integers, at least 0.5).
    pub c: Vec<f64>,
    /// `R_k` per parameter.
    pub r: Vec<f64>,
    /// The values engine 0 (the plus side, whose W and L drive the update) plays with: clipped,
    /// and for integer parameters rounded.
    pub plus: Vec<f64>,
    /// The values engine 1 plays with.
    pub minus: Vec<f64>,
}

impl Spsa {
    pub fn new(params: Vec<SpsaParam>, hyper: Hyper) -> Result<Spsa, SpsaError> {
        if params.is_empty() {
            return Err(SpsaError::Hyper("no parameters to tune".to_owned()));
        }
        for p in &params {
            check_param(p).map_err(|message| SpsaError::Param {
                name: p.name.clone(),
                message,
            })?;
        }
        if hyper.pairs == 0 {
            return Err(SpsaError::Hyper("pairs must be at least 1".to_owned()));
        }
        if hyper.pairs_per_step == 0 {
            return Err(SpsaError::Hyper(
                "pairs_per_step must be at least 1".to_owned(),
            ));
        }
        for (name, value) in [
            ("a_ratio", hyper.a_ratio),
            ("alpha", hyper.alpha),
            ("gamma", hyper.gamma),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(SpsaError::Hyper(format!(
                    "{name} must be a number of 0 or more, found {value}"
                )));
            }
        }
        // Each constant is computed as fishtest writes it, operation for operation, so that a
        // float parameter's trajectory is fishtest's to the last bit.
        let num_iter = hyper.pairs as f64;
        let num_games = (2 * hyper.pairs) as f64;
        let big_a = (hyper.a_ratio * num_games / 2.0).floor();
        let derived = params
            .iter()
            .map(|p| {
                let a_end = p.r_end * (p.c_end * p.c_end);
                Derived {
                    c: p.c_end * num_iter.powf(hyper.gamma),
                    a: a_end * (big_a + num_iter).powf(hyper.alpha),
                }
            })
            .collect();
        let spsa = Spsa {
            params,
            hyper,
            big_a,
            derived,
        };
        spsa.check_schedule()?;
        Ok(spsa)
    }

    /// `c_k` and `R_k` of parameter `j` at iteration `k` (1-based, fishtest's `iter + 1`).
    fn gains(&self, j: usize, k: f64) -> (f64, f64) {
        let d = &self.derived[j];
        let mut c_k = d.c / k.powf(self.hyper.gamma);
        if self.params[j].kind == ParamKind::Int {
            c_k = c_k.max(MIN_INTEGER_C);
        }
        let r_k = d.a / (self.big_a + k).powf(self.hyper.alpha) / (c_k * c_k);
        (c_k, r_k)
    }

    /// Refuses hyper-parameters whose arithmetic leaves the finite numbers anywhere in the run
    /// (`alpha = 1e300` makes `(A + k)^alpha` infinite and `R_k` a NaN, which the store could
    /// only keep as `null` and no later read would accept): `c_k` and `R_k` at the first and
    /// last step, and the largest move of θ any step can make, `R_k·c_k` times a step's pairs
    /// bounded by the largest `R_k` over the smallest `c_k`. Every power in the schedule grows
    /// with k (alpha and gamma are not negative), so between its ends each is finite too.
    fn check_schedule(&self) -> Result<(), SpsaError> {
        let last_step = self.steps() - 1;
        let [first, last] = [0, last_step].map(|s| self.step_pairs(s).start as f64 + 1.0);
        let per = self.hyper.pairs_per_step as f64;
        let h = &self.hyper;
        for (j, p) in self.params.iter().enumerate() {
            let d = &self.derived[j];
            let ((c_first, r_first), (c_last, r_last)) =
                (self.gains(j, first), self.gains(j, last));
            let largest_move = d.a / (self.big_a + 1.0).powf(h.alpha) / c_last * per;
            let figures = [
                ("c_k at the first step", c_first),
                ("R_k at the first step", r_first),
                ("c_k at the last step", c_last),
                ("R_k at the last step", r_last),
                ("the largest move of a step", largest_move),
            ];
            if let Some((what, value)) = figures.iter().find(|(_, v)| !v.is_finite()) {
                return Err(SpsaError::Hyper(format!(
                    "a_ratio = {:?}, alpha = {:?}, gamma = {:?} over {} pairs in steps of {}: \
                     {what} of {} is {value}, not a finite number (fishtest's values are a_ratio \
                     {DEFAULT_A_RATIO}, alpha {DEFAULT_ALPHA}, gamma {DEFAULT_GAMMA})",
                    h.a_ratio, h.alpha, h.gamma, h.pairs, h.pairs_per_step, p.name
                )));
            }
        }
        Ok(())
    }

    pub fn params(&self) -> &[SpsaParam] {
        &self.params
    }

    pub fn hyper(&self) -> &Hyper {
        &self.hyper
    }

    /// θ₀: every parameter at its start.
    pub fn start(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.start).collect()
    }

    /// Steps in the run; the last may hold fewer pairs.
    pub fn steps(&self) -> u64 {
        // `new` refused a set-up without pairs per step, the one that plans none.
        self.hyper.steps().unwrap_or_default()
    }

    /// The record of the set-up the store keeps and the report reads.
    pub fn setup(&self) -> SpsaSetup {
        SpsaSetup {
            params: self.params.clone(),
            hyper: self.hyper.clone(),
        }
    }

    /// The pair indices of `step`: its openings are those pairs' openings of the run's book.
    pub fn step_pairs(&self, step: u64) -> Range<u64> {
        let per = self.hyper.pairs_per_step;
        let start = step.saturating_mul(per).min(self.hyper.pairs);
        start..start.saturating_add(per).min(self.hyper.pairs)
    }

    /// The perturbation of `step` around `theta`: a pure function of (seed, step, theta).
    pub fn perturb(&self, theta: &[f64], step: u64, seed: u64) -> Perturbation {
        let flips = (0..self.params.len())
            .map(|j| {
                if draw(seed, step, j, Draw::Flip) & 1 == 0 {
                    1
                } else {
                    -1
                }
            })
            .collect::<Vec<i8>>();
        let uniforms = (0..self.params.len())
            .map(|j| unit_interval(draw(seed, step, j, Draw::Rounding)))
            .collect::<Vec<f64>>();
        self.perturbation(theta, step, &flips, &uniforms)
    }

    /// The perturbation of `step` with given flips and rounding draws (one each per parameter).
    pub fn perturbation(
        &self,
        theta: &[f64],
        step: u64,
        flips: &[i8],
        uniforms: &[f64],
    ) -> Perturbation {
        let iteration = self.step_pairs(step).start;
        let k = iteration as f64 + 1.0;
        let n = self.params.len();
        let (mut c, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut plus, mut minus) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (j, p) in self.params.iter().enumerate() {
            let (c_k, r_k) = self.gains(j, k);
            let shift = c_k * f64::from(flips[j]);
            let clip = |v: f64| v.clamp(p.min, p.max);
            let (mut up, mut down) = (clip(theta[j] + shift), clip(theta[j] - shift));
            if p.kind == ParamKind::Int {
                // One draw for both sides: floor(x + u) and floor(x - 2c + u) differ by at
                // least one when 2c >= 1, whatever u is.
                up = clip((up + uniforms[j]).floor());
                down = clip((down + uniforms[j]).floor());
            }
            c.push(c_k);
            r.push(r_k);
            plus.push(up);
            minus.push(down);
        }
        Perturbation {
            step,
            iteration,
            flips: flips.to_vec(),
            c,
            r,
            plus,
            minus,
        }
    }

    /// θ after a step whose plus side scored `wins` and `losses` (draws move nothing).
    pub fn update(&self, theta: &[f64], p: &Perturbation, wins: u64, losses: u64) -> Vec<f64> {
        let result = wins as f64 - losses as f64;
        self.params
            .iter()
            .enumerate()
            .map(|(j, param)| {
                let step = p.r[j] * p.c[j] * result * f64::from(p.flips[j]);
                (theta[j] + step).clamp(param.min, param.max)
            })
            .collect()
    }
}

/// What a random draw is for: flips and rounding draws must not share bits.
#[derive(Clone, Copy)]
enum Draw {
    Flip = 1,
    Rounding = 2,
}

/// A 64-bit draw for (seed, step, parameter, purpose): splitmix64 over the mixed inputs.
fn draw(seed: u64, step: u64, param: usize, purpose: Draw) -> u64 {
    let mut z = splitmix(seed ^ 0x5350_5341_0000_0000);
    z = splitmix(z ^ step);
    z = splitmix(z ^ param as u64);
    splitmix(z ^ purpose as u64)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) from the top 53 bits.
fn unit_interval(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hyper(pairs: u64, per: u64) -> Hyper {
        Hyper {
            pairs,
            pairs_per_step: per,
            a_ratio: DEFAULT_A_RATIO,
            alpha: DEFAULT_ALPHA,
            gamma: DEFAULT_GAMMA,
        }
    }

    #[test]
    fn parses_both_line_forms_and_names_the_bad_line() {
        let text = "# staunton\nknight_mg, int, 200, 100, 500, 12, 0.002\n\nTempo, 20, 0, 60, 2.5, 0.0020\nscale, float, 0.5, 0, 1, 0.05, 0.002\n";
        let params = parse_lines(text, "tune.txt").unwrap();
        assert_eq!(params.len(), 3);
        assert_eq!(params[0].kind, ParamKind::Int);
        assert_eq!(params[0].start, 200.0);
        assert_eq!(params[1].name, "Tempo");
        assert_eq!(params[1].kind, ParamKind::Int);
        assert_eq!(params[1].c_end, 2.5);
        assert_eq!(params[2].kind, ParamKind::Float);

        let cases = [
            ("a, 1, 0, 10, 1\n", "tune.txt:1: expected `name, int|float"),
            (
                "a, int, x, 0, 10, 1, 0.002\n",
                "tune.txt:1: start: expected a number, found \"x\"",
            ),
            (
                "\na, 1, 5, 0, 1, 0.002\n",
                "tune.txt:2: a: min 5 must be below max 0",
            ),
            (
                "a, 20, 0, 10, 1, 0.002\n",
                "tune.txt:1: a: start 20 is outside 0..=10",
            ),
            (
                "a, 2, 0, 10, 0, 0.002\n",
                "tune.txt:1: a: c_end must be above 0, found 0",
            ),
            (
                "a, double, 2, 0, 10, 1, 0.002\n",
                "tune.txt:1: expected the type `int` or `float`",
            ),
            (
                "a, 2, 0, 10, 1, 0.002\na, 3, 0, 10, 1, 0.002\n",
                "tune.txt:2: a is listed twice",
            ),
            ("a, int, 2, 0, 10.5, 1, 0.002\n", "needs integer bounds"),
            ("# nothing\n", "tune.txt:1: no parameter lines"),
        ];
        for (text, expected) in cases {
            let err = parse_lines(text, "tune.txt").unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn staunton_lines_round_trip_through_the_parser() {
        let params = staunton::Params::default();
        let from_lines = parse_lines(&params.to_spsa(), "spsa").unwrap();
        let names: Vec<String> = from_lines.iter().map(|p| p.name.clone()).collect();
        let from_specs = staunton_params(&names, &params).unwrap();
        assert_eq!(from_lines, from_specs);
        let err = staunton_params(&["knight_mgg".to_owned()], &params).unwrap_err();
        assert!(err.to_string().contains("knight_mgg"), "{err}");
    }

    #[test]
    fn derived_constants_are_fishtests() {
        // 20,000 games: num_iter 10,000, A = int(0.1 * 20000 / 2) = 1000.
        let params = parse_lines("p, float, 100, 0, 200, 10, 0.002", "t").unwrap();
        let spsa = Spsa::new(params, hyper(10_000, 1)).unwrap();
        let c = 10.0 * 10_000f64.powf(0.101);
        let a = 0.002 * 100.0 * 11_000f64.powf(0.602);
        // At the last iteration c_k = c_end and R_k = r_end, which is what "end" means.
        let last = spsa.perturbation(&[100.0], 9_999, &[1], &[0.0]);
        assert!((last.c[0] - 10.0).abs() < 1e-9, "{}", last.c[0]);
        assert!((last.r[0] - 0.002 * 11_000f64.powf(0.602) / 11_000f64.powf(0.602)).abs() < 1e-12);
        let first = spsa.perturbation(&[100.0], 0, &[-1], &[0.0]);
        assert!((first.c[0] - c).abs() < 1e-9);
        assert!((first.r[0] - a / 1001f64.powf(0.602) / (c * c)).abs() < 1e-15);
        assert_eq!(first.plus[0], 100.0 - c);
        assert_eq!(first.minus[0], 100.0 + c);
    }

    #[test]
    fn steps_cover_every_pair_once() {
        let params = parse_lines("p, 5, 0, 10, 1, 0.002", "t").unwrap();
        let spsa = Spsa::new(params, hyper(10, 4)).unwrap();
        assert_eq!(spsa.steps(), 3);
        let pairs: Vec<u64> = (0..spsa.steps()).flat_map(|s| spsa.step_pairs(s)).collect();
        assert_eq!(pairs, (0..10).collect::<Vec<_>>());
        assert_eq!(spsa.perturb(&[5.0], 2, 7).iteration, 8);
    }

    #[test]
    fn integer_sides_always_differ_and_stay_in_range() {
        // c_end 0.1 would round both sides to the same integer without the floor.
        let params = parse_lines("p, int, 3, 0, 6, 0.1, 0.002", "t").unwrap();
        let spsa = Spsa::new(params, hyper(1000, 1)).unwrap();
        for step in 0..1000 {
            for theta in [0.0, 0.3, 2.5, 3.7, 5.99, 6.0] {
                let p = spsa.perturb(&[theta], step, 42);
                assert_eq!(p.plus[0].fract(), 0.0);
                assert!((0.0..=6.0).contains(&p.plus[0]) && (0.0..=6.0).contains(&p.minus[0]));
                let inside = (0.5..=5.5).contains(&theta);
                if inside {
                    assert!((p.plus[0] - p.minus[0]).abs() >= 1.0, "{theta} {p:?}");
                }
                assert!(p.c[0] >= 0.5);
            }
        }
    }

    #[test]
    fn perturbations_are_a_function_of_seed_and_step() {
        let params = staunton_params(
            &[
                "knight_mg".to_owned(),
                "rook_eg".to_owned(),
                "pawn_mg".to_owned(),
            ],
            &staunton::Params::default(),
        )
        .unwrap();
        let spsa = Spsa::new(params, hyper(100, 2)).unwrap();
        let theta = spsa.start();
        assert_eq!(spsa.perturb(&theta, 5, 1), spsa.perturb(&theta, 5, 1));
        let distinct = (0..64)
            .map(|s| spsa.perturb(&theta, s, 1).flips)
            .collect::<std::collections::BTreeSet<_>>();
        // 64 draws of 3 flips: every one of the 8 patterns shows up.
        assert_eq!(distinct.len(), 8);
        assert_ne!(spsa.perturb(&theta, 5, 1), spsa.perturb(&theta, 5, 2));
        // About half the rounding draws go each way.
        let ups = (0..1000)
            .filter(|&s| unit_interval(draw(9, s, 0, Draw::Rounding)) < 0.5)
            .count();
        assert!((420..580).contains(&ups), "{ups}");
    }

    /// Issue 18, item 9: `alpha = 1e300, gamma = 1e300` made R_k a NaN, which reached the
    /// store as `null`. Refused before a run is created, naming the figure and the parameter.
    #[test]
    fn hyper_parameters_whose_arithmetic_overflows_are_refused() {
        let params = parse_lines("p, int, 5, 0, 10, 1, 0.002", "t").unwrap();
        let with = |alpha: f64, gamma: f64, a_ratio: f64| {
            Spsa::new(
                params.clone(),
                Hyper {
                    alpha,
                    gamma,
                    a_ratio,
                    ..hyper(100, 4)
                },
            )
        };
        let err = with(1e300, 1e300, DEFAULT_A_RATIO).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "a_ratio = 0.1, alpha = 1e300, gamma = 1e300 over 100 pairs in steps of 4: "
            ),
            "{err}"
        );
        assert!(
            err.contains(" of p is ") && err.contains("not a finite number"),
            "{err}"
        );
        assert!(with(1e300, DEFAULT_GAMMA, DEFAULT_A_RATIO).is_err());
        assert!(with(DEFAULT_ALPHA, 1e300, DEFAULT_A_RATIO).is_err());
        assert!(with(DEFAULT_ALPHA, DEFAULT_GAMMA, 1e308).is_err());
        // Large but finite arithmetic still runs: every step's values are numbers.
        let spsa = with(3.0, 2.0, 10.0).unwrap();
        for step in 0..spsa.steps() {
            let p = spsa.perturb(&[5.0], step, 1);
            let next = spsa.update(&[5.0], &p, 4, 0);
            assert!(
                p.c[0].is_finite() && p.r[0].is_finite() && next[0].is_finite(),
                "{p:?}"
            );
        }
    }

    #[test]
    fn update_clips_theta_and_ignores_draws() {
        let params = parse_lines("p, float, 9.5, 0, 10, 2, 0.5", "t").unwrap();
        let spsa = Spsa::new(params, hyper(10, 1)).unwrap();
        let p = spsa.perturbation(&[9.5], 0, &[1], &[0.0]);
        assert_eq!(spsa.update(&[9.5], &p, 5, 5), vec![9.5]);
        assert_eq!(spsa.update(&[9.5], &p, 100, 0), vec![10.0]);
        assert!(spsa.update(&[9.5], &p, 0, 1)[0] < 9.5);
    }
}
