//! `arbiter sprt`: the statistics of a finished or running test from its counts, and the SPRT
//! calculator. Every number comes from `arbiter-stats`; this module only parses and prints, in a
//! layout that reads like fishtest's and fastchess's summaries so users can compare line by line.

use std::process::ExitCode;

use anyhow::{bail, Context};
use arbiter_runner::lines::percent;
use arbiter_stats::{
    estimate, EloModel, Pentanomial, Sample, Sprt, SprtCalculator, SprtState, StatsError,
    Trinomial, WaldBounds, DEFAULT_DRAW_RATIO, DEFAULT_RMS_BIAS,
};
use serde_json::{json, Value};

/// ARCHITECTURE.md's CI exit codes: H1 accepted exits 0 (success), H0 accepted 1, no decision yet 3.
const EXIT_H0: u8 = 1;
const EXIT_CONTINUE: u8 = 3;

#[derive(clap::Args)]
#[command(
    after_help = "Counts are from the tested engine's side: LL = pairs scoring 0, WW = pairs \
                  scoring 2.\nThe verdict uses Wald's bounds on the totals given: without the \
                  batch history, no overshoot correction.\nExit status: 0 = H1 accepted (or no \
                  bounds given), 1 = H0 accepted, 3 = continue, 2 = usage error."
)]
pub struct SprtArgs {
    /// Game-pair counts by pair score: LL,LD,DD+WL,DW,WW.
    #[arg(
        long,
        value_name = "LL,LD,DD,DW,WW",
        value_parser = parse_pentanomial,
        conflicts_with_all = ["wins", "draws", "losses"]
    )]
    penta: Option<Pentanomial>,
    /// Games won (with --draws and --losses, instead of --penta).
    #[arg(long)]
    wins: Option<u64>,
    /// Games drawn.
    #[arg(long)]
    draws: Option<u64>,
    /// Games lost.
    #[arg(long)]
    losses: Option<u64>,
    /// H0, in the model's units: a change this strong should fail.
    #[arg(long, allow_negative_numbers = true, requires = "elo1")]
    elo0: Option<f64>,
    /// H1: a change this strong should pass.
    #[arg(long, allow_negative_numbers = true, requires = "elo0")]
    elo1: Option<f64>,
    /// Probability of accepting H1 when H0 holds.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Scale of --elo0/--elo1: normalized (fishtest's default), logistic, or bayeselo (the
    /// legacy cutechess-cli SPRT, W/D/L only).
    #[arg(long, value_enum, default_value_t = Model::Normalized)]
    model: Model,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
    /// SPRT calculator: pass probability and expected games at a true Elo, instead of counts.
    #[arg(
        long,
        requires_all = ["elo", "elo0", "elo1"],
        conflicts_with_all = ["penta", "wins", "draws", "losses"]
    )]
    expect: bool,
    /// True logistic Elo difference for --expect.
    #[arg(long, allow_negative_numbers = true, requires = "expect")]
    elo: Option<f64>,
    /// Draw ratio of games for --expect [default: 0.49].
    #[arg(long, requires = "expect")]
    draw_ratio: Option<f64>,
    /// RMS opening bias in Elo for --expect [default: 191].
    #[arg(long, requires = "expect")]
    rms_bias: Option<f64>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Model {
    Normalized,
    Logistic,
    Bayeselo,
}

impl From<Model> for EloModel {
    fn from(m: Model) -> Self {
        match m {
            Model::Normalized => EloModel::Normalized,
            Model::Logistic => EloModel::Logistic,
            Model::Bayeselo => EloModel::BayesElo,
        }
    }
}

fn parse_pentanomial(text: &str) -> Result<Pentanomial, String> {
    let counts = text
        .split(',')
        .map(|c| c.trim().parse::<u64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("expected five non-negative integers LL,LD,DD,DW,WW: {e}"))?;
    let counts: [u64; 5] = counts
        .try_into()
        .map_err(|c: Vec<u64>| format!("expected five counts LL,LD,DD,DW,WW, got {}", c.len()))?;
    Ok(Pentanomial::from_counts(counts))
}

pub fn run(args: &SprtArgs) -> anyhow::Result<ExitCode> {
    if args.expect {
        return expect(args);
    }
    let sample = sample(args)?;
    let wald = WaldBounds::new(args.alpha, args.beta).map_err(naming_the_flag)?;
    let sprt = sprt(args)?;
    let report = Report::new(&sample, sprt.as_ref(), wald)?;
    if args.json {
        outln!("{}", report.to_json(args, &sample))?;
    } else {
        report.print(&sample)?;
    }
    Ok(match report.status.map(|s| s.state) {
        Some(SprtState::H0) => ExitCode::from(EXIT_H0),
        Some(SprtState::Continue) => ExitCode::from(EXIT_CONTINUE),
        Some(SprtState::H1) | None => ExitCode::SUCCESS,
    })
}

fn sample(args: &SprtArgs) -> anyhow::Result<Sample> {
    let (sample, flags) = if let Some(penta) = args.penta {
        (Sample::from(penta), "--penta")
    } else {
        if args.wins.is_none() && args.draws.is_none() && args.losses.is_none() {
            bail!("give the counts: --penta LL,LD,DD,DW,WW or --wins W --draws D --losses L (or --expect for the calculator)");
        }
        let trinomial = Trinomial::from_wdl(
            args.wins.unwrap_or(0),
            args.draws.unwrap_or(0),
            args.losses.unwrap_or(0),
        );
        (Sample::from(trinomial), "--wins/--draws/--losses")
    };
    // Before anything is printed: the totals printed must be the totals computed with.
    sample.check().context(flags)?;
    Ok(sample)
}

/// A design error as `--flag: what was wrong`, so that the message says what to change.
fn naming_the_flag(err: StatsError) -> anyhow::Error {
    let flag = match &err {
        StatsError::ErrorRate { name: "alpha", .. } => "--alpha",
        StatsError::ErrorRate { name: "beta", .. } => "--beta",
        StatsError::ErrorRatesSum { .. } => "--alpha/--beta",
        StatsError::NotFinite { name, .. } | StatsError::EloRange { name, .. } => match *name {
            "elo0" => "--elo0",
            "elo1" => "--elo1",
            _ => "--elo",
        },
        StatsError::HypothesesOrder { .. } | StatsError::ScoreOutOfRange { .. } => "--elo0/--elo1",
        StatsError::DrawRatio(_) => "--draw-ratio",
        StatsError::RmsBias(_) => "--rms-bias",
        StatsError::NoVariance { .. } => "--draw-ratio/--rms-bias",
        StatsError::BayesEloNeedsTrinomial => "--model",
        _ => "the counts",
    };
    anyhow::Error::new(err).context(flag)
}

/// The test design, if bounds were given.
fn sprt(args: &SprtArgs) -> anyhow::Result<Option<Sprt>> {
    match (args.elo0, args.elo1) {
        (Some(elo0), Some(elo1)) => Ok(Some(
            Sprt::new(args.alpha, args.beta, elo0, elo1, args.model.into())
                .map_err(naming_the_flag)?,
        )),
        _ => Ok(None),
    }
}

/// Everything printed for a sample.
struct Report {
    elo: estimate::EloEstimate,
    nelo: estimate::NormalizedElo,
    draw_ratio: f64,
    wald: WaldBounds,
    sprt: Option<Sprt>,
    status: Option<arbiter_stats::SprtStatus>,
    logistic_bounds: Option<(f64, f64)>,
    sprt_elo: Option<arbiter_stats::SprtElo>,
}

impl Report {
    fn new(sample: &Sample, sprt: Option<&Sprt>, wald: WaldBounds) -> anyhow::Result<Self> {
        let elo = estimate::elo(sample).context("the counts")?;
        let nelo = estimate::normalized_elo(sample).context("the counts")?;
        let draw_ratio = match sample {
            Sample::Trinomial(t) => estimate::draw_ratio(t)?,
            Sample::Pentanomial(p) => estimate::pair_draw_ratio(p)?,
        };
        let (status, logistic_bounds, sprt_elo) = match sprt {
            Some(sprt) => {
                let status = sprt.status(sample).with_context(|| {
                    format!(
                        "the SPRT's LLR of these counts for --elo0/--elo1 (--model {})",
                        sprt.model()
                    )
                })?;
                // The SPRT-aware estimate is extra information: if it has no answer for an
                // extreme sample, say so and still report the verdict.
                let sprt_elo = sprt
                    .elo_estimate(sample)
                    .map_err(|e| eprintln!("warning: no SPRT-aware Elo: {e}"))
                    .ok();
                (Some(status), sprt.logistic_bounds(sample).ok(), sprt_elo)
            }
            None => (None, None, None),
        };
        Ok(Report {
            elo,
            nelo,
            draw_ratio,
            wald,
            sprt: sprt.copied(),
            status,
            logistic_bounds,
            sprt_elo,
        })
    }

    fn print(&self, sample: &Sample) -> std::io::Result<()> {
        outln!(
            "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}",
            self.elo.elo,
            self.elo.half_width,
            self.nelo.nelo,
            self.nelo.half_width
        )?;
        match sample {
            Sample::Trinomial(t) => {
                outln!(
                    "LOS: {} %, DrawRatio: {:.2} %",
                    percent(self.elo.los, 2),
                    100.0 * self.draw_ratio
                )?;
                outln!(
                    "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {:.1} ({:.2} %)",
                    t.games(),
                    t.wins,
                    t.losses,
                    t.draws,
                    t.points(),
                    100.0 * t.points() / t.games() as f64
                )?;
            }
            Sample::Pentanomial(p) => {
                outln!(
                    "LOS: {} %, PairDrawRatio: {:.2} %, PairsRatio: {}",
                    percent(self.elo.los, 2),
                    100.0 * self.draw_ratio,
                    estimate::pairs_ratio(p)
                        .map_or_else(|| "n/a (no pair lost)".to_owned(), |r| format!("{r:.2}"))
                )?;
                outln!(
                    "Games: {}, Pairs: {}, Points: {:.1} ({:.2} %)",
                    p.games(),
                    p.pairs(),
                    p.points(),
                    100.0 * p.points() / p.games() as f64
                )?;
                outln!("{}", arbiter_runner::lines::ptnml(p.counts()))?;
            }
        }
        let (Some(sprt), Some(status)) = (self.sprt, self.status) else {
            return Ok(());
        };
        outln!(
            "LLR: {:.2} ({:.2}, {:.2}) {}",
            status.llr,
            status.lower_bound,
            status.upper_bound,
            bounds_text(&sprt)
        )?;
        if let (Some((e0, e1)), EloModel::Normalized | EloModel::BayesElo) =
            (self.logistic_bounds, sprt.model())
        {
            outln!("Bounds as logistic Elo: {{{e0:.2}, {e1:.2}}}")?;
        }
        if let Some(aware) = self.sprt_elo {
            outln!(
                "SPRT-aware Elo: {:.2} [{:.2}, {:.2}], LOS: {} %{}",
                aware.elo,
                aware.interval.0,
                aware.interval.1,
                percent(aware.los, 2),
                if aware.clamped { " (clamped)" } else { "" }
            )?;
        }
        outln!(
            "{}",
            match status.state {
                SprtState::H1 => "H1 accepted",
                SprtState::H0 => "H0 accepted",
                SprtState::Continue => "Continue: neither bound reached",
            }
        )
    }

    fn to_json(&self, args: &SprtArgs, sample: &Sample) -> Value {
        let pair = |(a, b): (f64, f64)| json!([a, b]);
        let (trinomial, pentanomial, pairs) = match sample {
            Sample::Trinomial(t) => (
                json!({"wins": t.wins, "draws": t.draws, "losses": t.losses}),
                Value::Null,
                Value::Null,
            ),
            Sample::Pentanomial(p) => (Value::Null, json!(p.counts()), json!(p.pairs())),
        };
        json!({
            "games": sample.games(),
            "pairs": pairs,
            "trinomial": trinomial,
            "pentanomial": pentanomial,
            "elo": self.elo.elo,
            "elo_ci": pair(self.elo.interval()),
            "los": self.elo.los,
            "draw_ratio": self.draw_ratio,
            "draw_ratio_of": if sample.is_pentanomial() { "pairs" } else { "games" },
            "nelo": self.nelo.nelo,
            "nelo_ci": pair(self.nelo.interval()),
            "model": EloModel::from(args.model).name(),
            "elo0": args.elo0,
            "elo1": args.elo1,
            "alpha": args.alpha,
            "beta": args.beta,
            "llr": self.status.map(|s| s.llr),
            "lower_bound": self.status.map_or(self.wald.lower, |s| s.lower_bound),
            "upper_bound": self.status.map_or(self.wald.upper, |s| s.upper_bound),
            "state": self.status.map(|s| s.state.as_str()),
            "logistic_bounds": self.logistic_bounds.map(pair),
            "sprt_elo": self.sprt_elo.map(|e| e.elo),
            "sprt_elo_ci": self.sprt_elo.map(|e| pair(e.interval)),
            "sprt_los": self.sprt_elo.map(|e| e.los),
        })
    }
}

/// `<0.00, 2.00>`, `{0.00, 2.00}` or `[0.00, 2.00]`: fishtest's brackets tell the model.
fn bounds_text(sprt: &Sprt) -> String {
    let (open, close) = sprt.model().brackets();
    format!("{open}{:.2}, {:.2}{close}", sprt.elo0(), sprt.elo1())
}

fn expect(args: &SprtArgs) -> anyhow::Result<ExitCode> {
    let (Some(sprt), Some(elo)) = (sprt(args)?, args.elo) else {
        bail!("--expect needs --elo, --elo0 and --elo1");
    };
    let draw_ratio = args.draw_ratio.unwrap_or(DEFAULT_DRAW_RATIO);
    let rms_bias = args.rms_bias.unwrap_or(DEFAULT_RMS_BIAS);
    let calculator = SprtCalculator::new(&sprt, draw_ratio, rms_bias).map_err(naming_the_flag)?;
    let point = calculator.at(elo).map_err(naming_the_flag)?;
    let (e0, e1) = calculator.logistic_bounds();
    if args.json {
        let out = json!({
            "elo": elo,
            "pass_probability": point.pass_probability,
            "expected_games": point.expected_games,
            "model": sprt.model().name(),
            "elo0": sprt.elo0(),
            "elo1": sprt.elo1(),
            "alpha": sprt.alpha(),
            "beta": sprt.beta(),
            "draw_ratio": draw_ratio,
            "rms_bias": rms_bias,
            "logistic_bounds": [e0, e1],
        });
        outln!("{out}")?;
    } else {
        outln!(
            "SPRT {}, alpha {}, beta {}, draw ratio {:.2} %, RMS bias {:.1} Elo",
            bounds_text(&sprt),
            sprt.alpha(),
            sprt.beta(),
            100.0 * draw_ratio,
            rms_bias
        )?;
        if sprt.model() != EloModel::Logistic {
            outln!("Bounds as logistic Elo: {{{e0:.2}, {e1:.2}}}")?;
        }
        outln!(
            "True Elo {elo:.2}: pass probability {:.2} %, expected games {:.0}",
            100.0 * point.pass_probability,
            point.expected_games
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
