//! `arbiter tune texel CONFIG`: fits staunton's evaluation weights to labelled positions.
//!
//! Wiring only (the method is `arbiter_tune::texel`): the TOML names the positions files
//! (datagen's `FEN [1.0]` lines, PGN with results, or the other formats
//! `arbiter_tune::positions` reads), the weights to fit and the optimiser's settings; paths
//! are relative to the configuration file, as in a match configuration. The tuned parameters
//! are written as a staunton parameter file (`params_file` of a match engine), the loss curve
//! as JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use arbiter_tune::positions::{read_labelled, Filter};
use arbiter_tune::texel::{fit, fitted_k, Dataset, Quiet, Settings};
use serde::Deserialize;
use staunton::{Params, PARAMS};

#[derive(clap::Args)]
pub struct TexelArgs {
    /// A TOML configuration (see configs/texel.toml).
    config: PathBuf,
}

/// Which weights to fit: all of the evaluation's, or a list of names.
#[derive(Deserialize)]
#[serde(untagged)]
enum Tune {
    Preset(String),
    Names(Vec<String>),
}

/// The configuration file, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TexelConfig {
    /// Files of labelled positions.
    positions: Vec<PathBuf>,
    /// Start parameters (a staunton TOML file); staunton's defaults without it.
    params_file: Option<PathBuf>,
    #[serde(default = "default_tune")]
    tune: Tune,
    #[serde(default = "default_epochs")]
    epochs: usize,
    #[serde(default = "default_learning_rate")]
    learning_rate: f64,
    /// A fixed K instead of the one fitted to the start parameters.
    k: Option<f64>,
    /// The game result's share of each label where the position has a search score (bullet's
    /// score field, an engine's PGN move comment); the rest is the score's expected result.
    /// 1: results only.
    #[serde(default = "default_result_weight")]
    result_weight: f64,
    #[serde(default = "default_quiet")]
    quiet: String,
    #[serde(default = "default_threads")]
    threads: usize,
    /// The tuned parameters (staunton TOML).
    output: PathBuf,
    /// The loss curve (JSON); default: beside `output`, `.loss.json`.
    loss_json: Option<PathBuf>,
    /// Which positions of PGN games are used (the line formats are taken as they are).
    #[serde(default)]
    filter: Filter,
}

fn default_tune() -> Tune {
    Tune::Preset("evaluation".to_owned())
}
fn default_result_weight() -> f64 {
    1.0
}
fn default_epochs() -> usize {
    500
}
fn default_learning_rate() -> f64 {
    0.5
}
fn default_quiet() -> String {
    "resolve".to_owned()
}
fn default_threads() -> usize {
    2
}

/// How often the loss is printed: about ten lines in all.
fn print_every(epochs: usize) -> usize {
    (epochs / 10).max(1)
}

pub fn run(args: &TexelArgs) -> anyhow::Result<ExitCode> {
    let path = &args.config;
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("{file}: cannot read"))?;
    let config: TexelConfig = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{file}: {}", e.to_string().trim_end()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let resolve = |p: &Path| base.join(p);

    let tuned = match &config.tune {
        Tune::Preset(p) if p == "evaluation" => Settings::evaluation_weights(),
        Tune::Preset(other) => bail!(
            "{file}: tune: expected \"evaluation\" or a list of parameter names, found {other:?}"
        ),
        Tune::Names(names) => {
            Settings::weights_named(names).map_err(|e| anyhow::anyhow!("{file}: tune: {e}"))?
        }
    };
    let quiet: Quiet = config
        .quiet
        .parse()
        .map_err(|e| anyhow::anyhow!("{file}: quiet: {e}"))?;
    if config.positions.is_empty() {
        bail!("{file}: positions: expected at least one file of labelled positions");
    }
    if !(0.0..=1.0).contains(&config.result_weight) {
        bail!(
            "{file}: result_weight: expected a share from 0 (search scores only) to 1 (game \
             results only), found {}",
            config.result_weight
        );
    }
    if !(1..=64).contains(&config.threads) {
        bail!(
            "{file}: threads: expected 1 to 64, found {}",
            config.threads
        );
    }
    let start = match &config.params_file {
        Some(p) => {
            Params::load(&resolve(p)).map_err(|e| anyhow::anyhow!("{file}: params_file: {e}"))?
        }
        None => Params::default(),
    };
    let settings = Settings {
        tuned,
        epochs: config.epochs,
        learning_rate: config.learning_rate,
        k: config.k,
        threads: config.threads,
    };
    settings
        .check()
        .map_err(|e| anyhow::anyhow!("{file}: {e}"))?;

    let clock = Instant::now();
    let mut positions = Vec::new();
    // Files whose labels are all draws: each alone says nothing a fit can use (and is most
    // often a file read on the wrong scale), and all of them together cannot be fitted at all.
    let mut drawn_only = Vec::new();
    for p in &config.positions {
        let path = resolve(p);
        let read = read_labelled(&path, &config.filter)?;
        let decisive = read.positions.iter().filter(|p| p.result != 0.5).count();
        let scored = read.positions.iter().filter(|p| p.score.is_some()).count();
        // The fit's product is the file: a closed stdout loses only these lines.
        let _ = outln!(
            "{}: {} positions, {decisive} decisive, {scored} with a search score, labels read \
             as {}",
            path.display(),
            read.positions.len(),
            read.labels
        );
        if decisive == 0 {
            drawn_only.push(path.display().to_string());
        }
        positions.extend(read.positions);
    }
    if drawn_only.len() == config.positions.len() {
        bail!(
            "{file}: positions: no decisive result in {}: a fit needs wins and losses (every \
             label is a draw, or there are no positions)",
            drawn_only.join(", ")
        );
    }
    for path in &drawn_only {
        eprintln!("warning: {path}: no decisive result (every label is a draw, or none)");
    }
    let read = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let mut data = Dataset::trace(&positions, &start, quiet, config.threads);
    let traced = clock.elapsed().as_secs_f64();
    let _ = outln!(
        "Positions: {} read in {read:.2} s; {} traced in {traced:.2} s ({:.0} per second, quiet = {quiet}), {} dropped (mate scores or not quiet)",
        positions.len(),
        data.len(),
        positions.len() as f64 / traced.max(1e-9),
        data.dropped,
    );
    drop(positions);

    if data.is_empty() {
        bail!(
            "{file}: no positions to fit: {} read, {} dropped (mate scores or not quiet)",
            data.len() + data.dropped,
            data.dropped
        );
    }
    // K first, so that it is printed before the loss curve it scales.
    let k = match settings.k {
        Some(k) => {
            let _ = outln!("K = {k:.4} (fixed by the configuration)");
            k
        }
        None => {
            let k = fitted_k(&data, &start).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
            let _ = outln!("K = {k:.4} (fitted to the start parameters, then fixed)");
            k
        }
    };
    if config.result_weight < 1.0 {
        let scored = data.scored();
        if scored == 0 {
            bail!(
                "{file}: result_weight {}: no position has a search score to blend in (bullet's \
                 `FEN | score | result`, or PGN move comments such as `+0.31/20 0.554s`); set it \
                 to 1 to fit the results alone",
                config.result_weight
            );
        }
        data.blend_scores(k, config.result_weight);
        let _ = outln!(
            "Labels: {} x result + {} x the search score's expected result for {scored} of {} \
             positions (the rest: the result)",
            config.result_weight,
            1.0 - config.result_weight,
            data.len()
        );
    }
    let settings = Settings {
        k: Some(k),
        ..settings
    };
    let every = print_every(settings.epochs);
    let clock = Instant::now();
    let result = fit(&data, &start, &settings, &mut |epoch, loss| {
        if epoch == 1 || (epoch - 1) % every == 0 {
            let _ = outln!("epoch {:>5}  loss {loss:.7}", epoch - 1);
        }
    })
    .map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let seconds = clock.elapsed().as_secs_f64();
    let _ = outln!(
        "epoch {:>5}  loss {:.7}",
        settings.epochs,
        result.loss.last().copied().unwrap_or(f64::NAN)
    );
    let _ = outln!(
        "Fit: {} epochs in {seconds:.2} s ({:.0} positions per second per epoch, {} threads)",
        settings.epochs,
        (data.len() * settings.epochs) as f64 / seconds.max(1e-9),
        settings.threads,
    );
    let last = result.loss.last().copied().unwrap_or(f64::NAN);
    let _ = outln!(
        "Loss: start {:.7}, lowest {:.7} (epoch {}), last {last:.7}; written (rounded to \
         integers) {:.7}",
        result.start_loss(),
        result.loss[result.best_epoch],
        result.best_epoch,
        result.written_loss,
    );
    if result.best_epoch != settings.epochs {
        eprintln!(
            "warning: the loss rose after epoch {} ({:.7} -> {last:.7}{}): the values of epoch \
             {} are written; a lower learning_rate (now {}) fits more steadily",
            result.best_epoch,
            result.loss[result.best_epoch],
            if last > result.start_loss() {
                ", above the start's"
            } else {
                ""
            },
            result.best_epoch,
            settings.learning_rate
        );
    }
    if result.written_loss >= result.start_loss() {
        eprintln!(
            "warning: the fit did not lower the loss (start {:.7}, written values {:.7}): the \
             written values are no better than the start's",
            result.start_loss(),
            result.written_loss
        );
    }
    let at_bounds = result.at_bounds(&start, &settings.tuned);
    for &(i, bound) in &at_bounds {
        let spec = &PARAMS[i];
        eprintln!(
            "warning: {} ended at the end of its range ({bound}; staunton allows {}..={}): \
             the data pushes it further, which is more often a sign of wrong labels or a \
             runaway learning rate than of a real value",
            spec.name, spec.min, spec.max
        );
    }
    let _ = out!("{}", comparison(&start, &result.params, &settings.tuned));

    let output = resolve(&config.output);
    if let Some(dir) = output.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    result
        .params
        .save(&output)
        .with_context(|| format!("{}: cannot write", output.display()))?;
    let loss_path = match &config.loss_json {
        Some(p) => resolve(p),
        None => output.with_extension("loss.json"),
    };
    let json = serde_json::json!({
        "k": result.k,
        "k_fitted": config.k.is_none(),
        "result_weight": config.result_weight,
        "scored": data.scored(),
        "positions": data.len(),
        "dropped": data.dropped,
        "epochs": settings.epochs,
        "learning_rate": settings.learning_rate,
        "loss": result.loss,
        "best_epoch": result.best_epoch,
        "written_loss": result.written_loss,
        "at_bounds": at_bounds.iter().map(|&(i, _)| PARAMS[i].name).collect::<Vec<_>>(),
        "start": named(&start, &settings.tuned),
        "tuned": named(&result.params, &settings.tuned),
    });
    std::fs::write(&loss_path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("{}: cannot write", loss_path.display()))?;
    let _ = outln!(
        "Wrote {} (a staunton params_file) and {} (the loss curve)",
        output.display(),
        loss_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The tuned values beside the start values; piece values in pawns.
fn comparison(start: &Params, tuned: &Params, which: &[usize]) -> String {
    let (before, after) = (start.values(), tuned.values());
    let mut out = String::new();
    for &i in which {
        let spec = &PARAMS[i];
        let (a, b) = (before[i], after[i]);
        let _ = if spec.is_piece_value() {
            writeln!(
                out,
                "{:<22} {:>7.2} -> {:.2}",
                spec.name,
                f64::from(a) / 100.0,
                f64::from(b) / 100.0
            )
        } else {
            writeln!(out, "{:<22} {a:>7} -> {b}", spec.name)
        };
    }
    out
}

fn named(params: &Params, which: &[usize]) -> serde_json::Value {
    let values = params.values();
    which
        .iter()
        .map(|&i| {
            (
                PARAMS[i].name.to_owned(),
                serde_json::Value::from(values[i]),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}
