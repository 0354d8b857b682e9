//! Run configurations: the TOML file users write (`configs/*.toml`), and its resolution into
//! a validated [`MatchSpec`]. The cutechess/fastchess command-line grammar is parsed into the
//! same [`RunConfig`], so both front ends mean exactly the same thing.
//!
//! ```toml
//! rounds = 200            # pairs; each opening is played twice with colours swapped
//! concurrency = 2
//! [each]                  # applies to every engine unless the engine says otherwise
//! tc = "10+0.1"           # or "inf" with nodes/depth/st
//! [[engine]]
//! name = "dev"
//! cmd = "./engine-dev"
//! options = { Hash = "16", Threads = "1" }
//! [[engine]]
//! name = "base"
//! builtin = "staunton"    # in process
//! params = { knight_mg = 300 }
//! [openings]
//! file = "openings/balanced.epd"
//! order = "random"
//! [sprt]
//! elo0 = 0
//! elo1 = 5
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arbiter_rules::{DrawApplication, InsufficientMaterial, RuleSet, StalemateRule};
use arbiter_stats::{EloModel, Sprt};
use serde::{Deserialize, Serialize};

use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::builtin::BuiltinSpec;
use crate::openings::{Book, BookSpec};
use crate::player::{PlayerKind, PlayerSpec};
use crate::process::{ProcessSpec, Timeouts};
use crate::tc::{ClockSpec, TimeControl};
use crate::tournament::MatchSpec;

/// Settings that may be given per engine or once for all (`[each]`, cutechess's `-each`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSettings {
    /// `moves/time+inc`, `min:sec`, or `inf`.
    pub tc: Option<String>,
    /// Fixed seconds per move (cutechess `st`).
    pub st: Option<f64>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// Milliseconds past zero before the flag falls.
    pub timemargin: Option<u64>,
    /// `setoption` name = value pairs.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Start a fresh process for every game.
    pub restart: Option<bool>,
    /// Hash in MB for in-process staunton (UCI engines take `options.Hash`).
    pub hash: Option<usize>,
}

/// One engine of the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    pub name: String,
    /// A UCI engine: the program (no shell is involved).
    pub cmd: Option<PathBuf>,
    #[serde(default)]
    pub args: Vec<String>,
    pub dir: Option<PathBuf>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `"staunton"`: the in-process engine.
    pub builtin: Option<String>,
    /// For `builtin = "staunton"`: a TOML parameter file, and/or single overrides.
    pub params_file: Option<PathBuf>,
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    #[serde(flatten)]
    pub settings: EngineSettings,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    #[serde(default = "default_error_rate")]
    pub alpha: f64,
    #[serde(default = "default_error_rate")]
    pub beta: f64,
    #[serde(default = "default_model")]
    pub model: String,
}

fn default_error_rate() -> f64 {
    0.05
}

fn default_model() -> String {
    "normalized".into()
}

/// Which laws the games are played under (see `arbiter_rules::RuleSet`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    /// `draw` (default) or `win` (the stalemated side wins: the old English rule).
    pub stalemate: Option<String>,
    /// `automatic` (default) or `claim`.
    pub repetition: Option<String>,
    pub fifty_moves: Option<String>,
    /// `strict` (default) or `wide`.
    pub insufficient_material: Option<String>,
}

/// A whole run as written in TOML.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Names the run in the store; defaults to a hash of the configuration, so rerunning the
    /// same command resumes the same run.
    pub name: Option<String>,
    pub seed: Option<u64>,
    /// Pairs to play.
    pub rounds: Option<u64>,
    /// Games per round: 2 (a colour-swapped pair) is the only value that keeps pairs.
    pub games: Option<u64>,
    pub concurrency: Option<usize>,
    /// The SQLite file (or `postgres://` URL) that holds the run.
    pub store: Option<String>,
    /// PGN export, rewritten from the store as pairs are committed.
    pub pgnout: Option<PathBuf>,
    /// One JSON object per finished game.
    pub jsonl: Option<PathBuf>,
    /// The final position of every game as EPD (cutechess's `-epdout`), exported from the store.
    pub epdout: Option<PathBuf>,
    /// `true`: an engine fault ends that game and the run goes on (default); `false`: stop.
    pub recover: Option<bool>,
    pub event: Option<String>,
    pub site: Option<String>,
    #[serde(default)]
    pub each: EngineSettings,
    #[serde(default, rename = "engine")]
    pub engines: Vec<EngineConfig>,
    #[serde(default)]
    pub openings: BookSpec,
    pub sprt: Option<SprtConfig>,
    #[serde(default)]
    pub adjudication: AdjudicationConfig,
    #[serde(default)]
    pub rules: RulesConfig,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdjudicationConfig {
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    pub maxmoves: Option<u32>,
}

/// A configuration that cannot run; names the file and the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: {message}")]
    Toml { path: String, message: String },
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

impl RunConfig {
    /// Reads a TOML file; syntax and unknown fields are reported with line and column.
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        RunConfig::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, origin: &str) -> Result<RunConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Toml {
            path: origin.to_owned(),
            message: e.to_string(),
        })
    }

    /// The canonical text of this configuration (stored with the run, hashed for its name).
    pub fn canonical(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The run's name: as given, or derived from the configuration so the same command finds
    /// the same run again.
    pub fn run_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            let names: Vec<&str> = self.engines.iter().map(|e| e.name.as_str()).collect();
            format!(
                "{}-{:016x}",
                names.join("-vs-"),
                fnv1a(self.canonical().as_bytes())
            )
        })
    }

    /// The seed: as given, or derived from the configuration (so a rerun plays the same pairs).
    pub fn seed(&self) -> u64 {
        self.seed
            .unwrap_or_else(|| fnv1a(self.canonical().as_bytes()))
    }

    /// Resolves names, files and defaults into a runnable match. Relative paths are taken
    /// from `base` (the config file's folder).
    pub fn resolve(&self, base: &Path, seed: u64) -> Result<MatchSpec, ConfigError> {
        if self.engines.len() != 2 {
            return Err(invalid(
                "engine",
                format!(
                    "a match needs exactly 2 engines, found {}",
                    self.engines.len()
                ),
            ));
        }
        if let Some(games) = self.games.filter(|&g| g != 2) {
            return Err(invalid(
                "games",
                format!("{games}: arbiter plays colour-swapped pairs, so games must be 2"),
            ));
        }
        let mut names: Vec<&str> = self.engines.iter().map(|e| e.name.as_str()).collect();
        names.dedup();
        if names.len() != 2 || names.iter().any(|n| n.is_empty()) {
            return Err(invalid(
                "engine.name",
                "the two engines need two different, non-empty names",
            ));
        }
        let players = [self.player(0, base)?, self.player(1, base)?];
        let time_controls = [self.time_control(0)?, self.time_control(1)?];
        let margin_ms = self
            .engines
            .iter()
            .filter_map(|e| e.settings.timemargin)
            .chain(self.each.timemargin)
            .max();
        let mut book_spec = self.openings.clone();
        book_spec.file = book_spec.file.map(|f| absolute(base, &f));
        let book = Book::load(&book_spec).map_err(|e| invalid("openings", e.to_string()))?;
        let sprt = match &self.sprt {
            None => None,
            Some(s) => {
                let model: EloModel = s
                    .model
                    .parse()
                    .map_err(|e| invalid("sprt.model", format!("{e}")))?;
                Some(
                    Sprt::new(s.alpha, s.beta, s.elo0, s.elo1, model)
                        .map_err(|e| invalid("sprt", e.to_string()))?,
                )
            }
        };
        let pairs = self
            .rounds
            .unwrap_or(if sprt.is_some() { 100_000 } else { 100 });
        if pairs == 0 {
            return Err(invalid("rounds", "must be at least 1"));
        }
        Ok(MatchSpec {
            players,
            time_controls,
            time_margin: Duration::from_millis(margin_ms.unwrap_or(50)),
            book,
            pairs,
            concurrency: self.concurrency.unwrap_or(1).max(1),
            adjudication: Adjudication {
                draw: self.adjudication.draw,
                resign: self.adjudication.resign,
                maxmoves: self.adjudication.maxmoves,
            },
            rules: self.rule_set()?,
            sprt,
            recover: self.recover.unwrap_or(true),
            seed,
            event: self.event.clone().unwrap_or_else(|| "arbiter match".into()),
            site: self.site.clone().unwrap_or_else(|| "?".into()),
        })
    }

    fn setting<T: Clone>(
        &self,
        index: usize,
        get: impl Fn(&EngineSettings) -> Option<T>,
    ) -> Option<T> {
        get(&self.engines[index].settings).or_else(|| get(&self.each))
    }

    fn time_control(&self, index: usize) -> Result<TimeControl, ConfigError> {
        let field = |f: &str| format!("engine[{}].{f} (or each.{f})", self.engines[index].name);
        let clock: Option<ClockSpec> = match self.setting(index, |s| s.tc.clone()) {
            Some(tc) => {
                TimeControl::parse_tc(&tc).map_err(|e| invalid(field("tc"), e.to_string()))?
            }
            None => None,
        };
        let movetime = match self.setting(index, |s| s.st) {
            Some(st) if st.is_finite() && st > 0.0 => Some(Duration::from_secs_f64(st)),
            Some(st) => {
                return Err(invalid(
                    field("st"),
                    format!("{st} is not a positive number of seconds"),
                ))
            }
            None => None,
        };
        let tc = TimeControl {
            clock,
            movetime,
            nodes: self.setting(index, |s| s.nodes),
            depth: self.setting(index, |s| s.depth),
        };
        if !tc.is_bounded() {
            return Err(invalid(
                field("tc"),
                "no limit: give tc, st, nodes or depth, or games never end",
            ));
        }
        Ok(tc)
    }

    fn player(&self, index: usize, base: &Path) -> Result<PlayerSpec, ConfigError> {
        let engine = &self.engines[index];
        let field = |f: &str| format!("engine[{}].{f}", engine.name);
        let mut options: Vec<(String, String)> = self.each.options.clone().into_iter().collect();
        for (name, value) in &engine.settings.options {
            options.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            options.push((name.clone(), value.clone()));
        }
        let kind = match (&engine.cmd, &engine.builtin) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    field("cmd"),
                    "give either cmd or builtin, not both",
                ))
            }
            (None, None) => {
                return Err(invalid(
                    field("cmd"),
                    "missing: the engine's program (or builtin = \"staunton\")",
                ))
            }
            (Some(cmd), None) => {
                // A bare name is looked up on PATH; a path is taken from the config's folder.
                let cmd = if cmd.components().count() > 1 {
                    absolute(base, cmd)
                } else {
                    cmd.clone()
                };
                PlayerKind::Uci(ProcessSpec {
                    cmd,
                    args: engine.args.clone(),
                    dir: engine.dir.as_ref().map(|d| absolute(base, d)),
                    env: engine.env.clone().into_iter().collect(),
                    options,
                })
            }
            (None, Some(builtin)) if builtin == "staunton" => {
                let mut params = match &engine.params_file {
                    Some(file) => staunton::Params::load(&absolute(base, file))
                        .map_err(|e| invalid(field("params_file"), e.to_string()))?,
                    None => staunton::Params::default(),
                };
                for (name, value) in &engine.params {
                    params
                        .set(name, *value)
                        .map_err(|e| invalid(field(&format!("params.{name}")), e.to_string()))?;
                }
                let hash_mb = self.setting(index, |s| s.hash).unwrap_or(1);
                PlayerKind::Builtin(Box::new(BuiltinSpec { params, hash_mb }))
            }
            (None, Some(other)) => {
                return Err(invalid(
                    field("builtin"),
                    format!("{other:?}: the only builtin engine is \"staunton\""),
                ))
            }
        };
        Ok(PlayerSpec {
            name: engine.name.clone(),
            kind,
            timeouts: Timeouts::default(),
            restart: self.setting(index, |s| s.restart).unwrap_or(false),
        })
    }

    fn rule_set(&self) -> Result<RuleSet, ConfigError> {
        let r = &self.rules;
        let application = |field: &str, value: &Option<String>| match value.as_deref() {
            None | Some("automatic") => Ok(DrawApplication::Automatic),
            Some("claim") => Ok(DrawApplication::OnClaim),
            Some(other) => Err(invalid(
                format!("rules.{field}"),
                format!("{other:?}: expected automatic or claim"),
            )),
        };
        Ok(RuleSet {
            stalemate: match r.stalemate.as_deref() {
                None | Some("draw") => StalemateRule::Draw,
                Some("win") => StalemateRule::WinForStalematedSide,
                Some(other) => {
                    return Err(invalid(
                        "rules.stalemate",
                        format!("{other:?}: expected draw or win"),
                    ))
                }
            },
            repetition: application("repetition", &r.repetition)?,
            fifty_moves: application("fifty_moves", &r.fifty_moves)?,
            insufficient_material: match r.insufficient_material.as_deref() {
                None | Some("strict") => InsufficientMaterial::Strict,
                Some("wide") => InsufficientMaterial::Wide,
                Some(other) => {
                    return Err(invalid(
                        "rules.insufficient_material",
                        format!("{other:?}: expected strict or wide"),
                    ))
                }
            },
        })
    }
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

/// FNV-1a: a stable hash (unlike `DefaultHasher`, which may change between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
        rounds = 10
        [each]
        nodes = 1000
        [[engine]]
        name = "a"
        builtin = "staunton"
        [[engine]]
        name = "b"
        cmd = "stockfish"
    "#;

    #[test]
    fn minimal_config_resolves() {
        let config = RunConfig::parse(MINIMAL, "test.toml").unwrap();
        let spec = config.resolve(Path::new("."), config.seed()).unwrap();
        assert_eq!(spec.pairs, 10);
        assert_eq!(spec.time_controls[0].nodes, Some(1000));
        assert!(matches!(spec.players[0].kind, PlayerKind::Builtin(_)));
        assert!(
            matches!(&spec.players[1].kind, PlayerKind::Uci(p) if p.cmd == Path::new("stockfish"))
        );
        assert_eq!(
            config.run_name(),
            RunConfig::parse(MINIMAL, "again").unwrap().run_name(),
            "stable name"
        );
        assert_eq!(
            config.seed(),
            RunConfig::parse(MINIMAL, "again").unwrap().seed(),
            "stable seed"
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = RunConfig::parse("rounds = \"x\"", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.toml") && err.contains("line 1"), "{err}");
        let err = RunConfig::parse("roundz = 3", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("roundz"), "{err}");
        let resolve = |text: &str| {
            let config = RunConfig::parse(text, "t").unwrap();
            config.resolve(Path::new("."), 1).unwrap_err().to_string()
        };
        assert!(resolve(&MINIMAL.replace("nodes = 1000", "")).contains("no limit"));
        assert!(resolve(&MINIMAL.replace("nodes = 1000", "tc = \"40/\"")).contains("tc"));
        assert!(resolve(&MINIMAL.replace("name = \"b\"", "name = \"a\"")).contains("different"));
        assert!(
            resolve(&MINIMAL.replace("builtin = \"staunton\"", "builtin = \"x\""))
                .contains("staunton")
        );
        let bad_param = MINIMAL.replace(
            "builtin = \"staunton\"",
            "builtin = \"staunton\"\nparams = { no_such_param = 3 }",
        );
        assert!(resolve(&bad_param).contains("no_such_param"));
        assert!(resolve(&format!("{MINIMAL}\n[sprt]\nelo0 = 5\nelo1 = 0")).contains("sprt"));
        assert!(resolve(&format!(
            "{MINIMAL}\n[openings]\nfile = \"/nonexistent.epd\""
        ))
        .contains("/nonexistent.epd"));
    }
}
