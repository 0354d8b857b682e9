//! Run configurations: the TOML file users write (`configs/*.toml`) and the cutechess/fastchess
//! command line ([`cutechess`]) both read into one [`RunConfig`], so the two front ends mean
//! exactly the same thing.
//!
//! Two steps turn it into a runnable [`MatchSpec`]. [`RunConfig::check`] judges everything the
//! text decides and touches no file and nothing of the machine, so that a coordinator can
//! refuse a run that a worker elsewhere would play; [`CheckedConfig::resolve`] is the local
//! step (programs and files from the configuration's folder, parameter files, the book, the
//! memory the hash tables need), and takes check's results as they are: each rule is judged
//! in one place.
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
use std::sync::Arc;
use std::time::Duration;

use arbiter_rules::{DrawApplication, InsufficientMaterial, RuleSet, StalemateRule};
use arbiter_stats::{EloModel, Sprt};
use arbiter_store::{Clock, JudgedOn, RunFacts, RunKind, SampleModel, SprtFacts};
use serde::{Deserialize, Serialize};

use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::builtin::BuiltinSpec;
use crate::commlog::LogConfig;
use crate::lines;
use crate::openings::{Book, BookSpec};
use crate::player::{PlayerKind, PlayerSpec};
use crate::process::{ProcessSpec, Timeouts, DEFAULT_MOVE_TIMEOUT};
use crate::spec::{DrawnGameColours, Handicap, MatchSpec, PlaySpec, SprtJudge, TournamentKind};
use crate::tc::{ClockSpec, TimeControl};

pub mod cutechess;

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
    /// The node count the engine's `bench` prints (its authors' `Bench: N`): the engine is
    /// benched before the run's first game, on every machine that plays it, and a build
    /// that prints another count is refused (see `crate::bench`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
    /// A UCI engine built from source by each machine that plays it, instead of `cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildRecipe>,
    #[serde(flatten)]
    pub settings: EngineSettings,
}

/// How a machine builds an engine from source (`[engine.build]`): the repository cloned at
/// one commit, a shell command run in its root, and the binary it leaves. Every worker builds
/// the same source; the engine's signature is the recipe's, and its `bench`, if stated, is what
/// tells a build that plays otherwise (another compiler, another machine's instructions).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildRecipe {
    /// What `git clone` takes: a URL, or a path on the machines that build.
    pub repo: String,
    /// The full commit hash: a branch or a tag moves, and two workers would build two engines.
    pub commit: String,
    /// Run with `sh -c` in the checkout's root (`make -j EXE=engine`).
    pub command: String,
    /// The binary the command leaves, relative to the checkout's root.
    pub binary: PathBuf,
}

impl BuildRecipe {
    /// The engine's signature wherever it is built: the source, the command and the binary.
    pub fn signature(&self) -> String {
        let recipe = format!(
            "{}\0{}\0{}\0{}",
            self.repo,
            self.commit,
            self.command,
            self.binary.display()
        );
        let short = &arbiter_store::sha256_hex(recipe.as_bytes())[..16];
        format!("build:{}@{}#{short}", self.repo, self.commit)
    }

    /// What is wrong with the recipe as written, if anything: `(field, reason)`.
    fn fault(&self) -> Option<(&'static str, String)> {
        let hex = |c: char| c.is_ascii_hexdigit() && !c.is_ascii_uppercase();
        if self.repo.trim().is_empty() {
            return Some((
                "repo",
                "empty: a URL or path that git clone takes".to_owned(),
            ));
        }
        if self.repo.starts_with('-') {
            return Some((
                "repo",
                format!("{:?} would be read as a git option", self.repo),
            ));
        }
        if !matches!(self.commit.len(), 40 | 64) || !self.commit.chars().all(hex) {
            return Some((
                "commit",
                format!(
                    "{:?}: expected a full commit hash (40 lowercase hex digits): a branch or a \
                     tag moves, and two workers would build two engines",
                    self.commit
                ),
            ));
        }
        if self.command.trim().is_empty() {
            return Some(("command", "empty: the shell command that builds".to_owned()));
        }
        let inside = self
            .binary
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if self.binary.as_os_str().is_empty() || !inside {
            return Some((
                "binary",
                format!(
                    "{}: expected a path inside the checkout (no leading /, no ..)",
                    self.binary.display()
                ),
            ));
        }
        None
    }
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
    /// Which finished pairs the SPRT is judged on; `prefix` when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<SprtJudge>,
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
    /// The marked pawn odds: `white` or `black`, the side whose king's bishop's pawn is marked
    /// (its capture loses, only it may mate, it may not promote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marked_pawn: Option<String>,
    /// `kept`: the old laws' rule that after a drawn game the player who had the first move
    /// has it again (colours otherwise alternate game by game); `alternate` (default): not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colours_after_draw: Option<String>,
}

/// A whole run as written in TOML.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Names the run in the store; defaults to a hash of what defines its games, so rerunning
    /// the same command resumes the same run.
    pub name: Option<String>,
    /// The run's seed (cutechess's `-srand`): pair k's opening is a function of it and k.
    /// Without one, each new run draws its own; it is stored with the run and printed.
    pub seed: Option<u64>,
    /// Pairs to play.
    pub rounds: Option<u64>,
    /// Games per round: 2 (a colour-swapped pair) is the only value that keeps pairs.
    pub games: Option<u64>,
    /// Who plays whom: `match` (two engines, the default for two), `round-robin` (every engine
    /// against every other, the default for more) or `gauntlet` (the first `seeds` engines
    /// against all the others). `rounds` pairs are played in every pairing.
    pub tournament: Option<String>,
    /// Gauntlet seeds (cutechess's `-seeds`): how many of the first engines play the others.
    /// Default 1.
    pub seeds: Option<usize>,
    pub concurrency: Option<usize>,
    /// The SQLite file (or `postgres://` URL) that holds the run.
    pub store: Option<String>,
    /// The folder the configuration's relative paths (engines, book, outputs, report) are
    /// read from: the configuration file's, or the current one for a command line. arbiter
    /// writes it (absolute) into the configuration it stores with a run, so that `--resume`
    /// finds the same files from any folder; runs stored without it resume from the current
    /// folder, as before.
    pub folder: Option<PathBuf>,
    /// PGN export, rewritten from the store as pairs are committed.
    pub pgnout: Option<PathBuf>,
    /// One JSON object per finished game.
    pub jsonl: Option<PathBuf>,
    /// The final position of every game as EPD (cutechess's `-epdout`), exported from the store.
    pub epdout: Option<PathBuf>,
    /// `true`: an engine that crashes or stalls loses that game, is restarted and the run goes
    /// on (default); `false`: a crash or stall stops the run. An illegal move or a lost flag
    /// only loses that game either way.
    pub recover: Option<bool>,
    pub event: Option<String>,
    pub site: Option<String>,
    /// fastchess's `-ping-ms`: before each move an engine must answer `isready` within this
    /// many milliseconds, or it loses that game as a stalled connection.
    pub ping_ms: Option<u64>,
    /// Seconds a move without a clock (`nodes`, `depth`, `tc = "inf"`) may take before the
    /// engine is stalled and loses the game, for UCI engines and in-process staunton alike
    /// (its search is cut off there). Default 60; 0: no limit (a hung engine then waits for
    /// Ctrl-C). Neither cutechess nor fastchess has one: cutechess waits for ever.
    pub move_timeout: Option<f64>,
    /// How results are printed: `cutechess` (default) or `fastchess` (its result blocks).
    pub output: Option<String>,
    /// Games between rating blocks (cutechess's and fastchess's `-ratinginterval`); 0: only at
    /// the end. Default 2: after every pair.
    pub ratinginterval: Option<u64>,
    /// Games between `Score of` lines (`-scoreinterval`); 0: none. Default 1.
    pub scoreinterval: Option<u64>,
    /// Pentanomial statistics in the reports (fastchess's `-report penta=`). Default true.
    pub report_penta: Option<bool>,
    /// A folder that holds the run's report (`index.html`, `summary.md` with its SVG charts,
    /// `report.json`, as `arbiter report` writes them), refreshed while the run plays so that a
    /// long run can be watched in a browser (`-report DIR`).
    pub report: Option<PathBuf>,
    /// The run's log file (fastchess's `-log`): arbiter's messages at a level and, with
    /// `engine = true`, every line sent to and read from each engine (see [`crate::commlog`]).
    pub log: Option<LogConfig>,
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

/// The two result streams scripts are written for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// `Score of ...` after each game, `Elo difference ...` and `SPRT: ...` blocks.
    Cutechess,
    /// `Results of A vs B (...)` blocks framed by dashes, as fastchess prints them.
    Fastchess,
}

/// What the result stream shows and how often.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReportSettings {
    pub format: OutputFormat,
    /// Games (or pairs, see `rating_in_pairs`) between rating blocks; 0 prints one only at the
    /// end.
    pub rating_interval: u64,
    /// Whether `rating_interval` counts pairs: fastchess counts its `-ratinginterval` in pairs
    /// when it reports pentanomial statistics (a block on a pair's second game shows the pair
    /// whole), and in games otherwise, as cutechess always does.
    pub rating_in_pairs: bool,
    /// Games between `Score of` lines (cutechess format); 0 prints none.
    pub score_interval: u64,
    /// Pentanomial Elo and the `Ptnml(0-2)` line, or the game (trinomial) model.
    pub penta: bool,
}

impl ReportSettings {
    /// Whether a rating block is due now that the count the interval is in (games, or pairs:
    /// see `rating_in_pairs`) went from `before`, the count at the last block, to `now`: when
    /// it passed a multiple of the interval. Several games finish between two commits when
    /// they run at once, so the count may jump over the multiple itself.
    pub fn rating_block_due(&self, before: u64, now: u64) -> bool {
        let interval = self.rating_interval;
        interval > 0 && now / interval > before / interval
    }
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

/// A setting that cannot be used, named by its field (`rounds`, `engine[dev].tc`, ...), and
/// why; shared by every configuration that embeds a run's (the tuner's, datagen's).
pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ConfigError {
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

    /// The run's name: as given, or derived from what defines its games (see
    /// [`RunConfig::defining`]), so the same command finds the same run again, and so does one
    /// that only changes where the output goes or how many games run at once.
    ///
    /// How long the experiment runs (`rounds`) and what stops it early (`sprt`) are left out
    /// of the derived name: rerunning a command with another `-rounds` finds the same run and
    /// is refused with `rounds: stored -> now`, as a named run is, rather than start a second
    /// run beside the unfinished one.
    pub fn run_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            let identity = RunConfig {
                rounds: None,
                sprt: None,
                ..self.defining()
            };
            self.derived_name(&identity)
        })
    }

    /// The name arbiter derived before `rounds` and `sprt` were left out of it (hashing all
    /// of [`RunConfig::defining`]): where an unnamed run of an older store is found.
    pub fn legacy_run_name(&self) -> Option<String> {
        match self.name {
            Some(_) => None,
            None => Some(self.derived_name(&self.defining())),
        }
    }

    fn derived_name(&self, identity: &RunConfig) -> String {
        let names: Vec<&str> = self.engines.iter().map(|e| e.name.as_str()).collect();
        format!(
            "{}-{:016x}",
            names.join("-vs-"),
            fnv1a(identity.canonical().as_bytes())
        )
    }

    /// The part of the configuration that decides which games are played and how: engines,
    /// their options and parameters, limits, book, adjudication, rules, seed and the number of
    /// pairs. Output paths (the report folder too), the store, concurrency, `recover` and the
    /// PGN's event and site are cleared: changing them between a run and its resumption mixes
    /// nothing.
    pub fn defining(&self) -> RunConfig {
        RunConfig {
            name: None,
            store: None,
            folder: None,
            pgnout: None,
            jsonl: None,
            epdout: None,
            concurrency: None,
            recover: None,
            event: None,
            site: None,
            output: None,
            ratinginterval: None,
            scoreinterval: None,
            report_penta: None,
            report: None,
            log: None,
            ..self.clone()
        }
    }

    /// `self` with the benches a run stored for its in-process stauntons
    /// ([`crate::bench::pin_builtin`]) where `self` names none: the configuration as the run
    /// was started, so that rerunning it is no edit, and the resumed run is benched as stored.
    pub fn with_pinned_benches(&self, stored: &RunConfig) -> RunConfig {
        let mut config = self.clone();
        for engine in &mut config.engines {
            if engine.builtin.is_none() || engine.bench.is_some() {
                continue;
            }
            engine.bench = stored
                .engines
                .iter()
                .find(|e| e.name == engine.name && e.builtin.is_some())
                .and_then(|e| e.bench);
        }
        config
    }

    /// What differs between the games `self` defines and those of `stored` (the configuration
    /// a run was started with), one `field: old -> new` line each; empty when a run started
    /// with `stored` may be continued with `self`.
    pub fn differences_from(&self, stored: &RunConfig) -> Vec<String> {
        let as_value = |config: &RunConfig| {
            let mut defining = config.defining();
            // `judge` left out is its default: writing the default out is no change.
            if let Some(sprt) = &mut defining.sprt {
                sprt.judge = Some(sprt.judge.unwrap_or_default());
            }
            toml::Value::try_from(defining)
                .unwrap_or_else(|_| toml::Value::Table(Default::default()))
        };
        let mut lines = Vec::new();
        diff_values(
            "",
            Some(&as_value(stored)),
            Some(&as_value(self)),
            &mut lines,
        );
        lines
    }

    /// Judges everything the text alone decides: engines and their names, who plays whom,
    /// games, rounds, concurrency, reports, ping, every engine's limits, options and parameters,
    /// adjudication, rules, the SPRT and the openings settings. It reads no file and asks
    /// nothing of this machine, so a coordinator can check a run that is played elsewhere;
    /// [`CheckedConfig::resolve`] is the local step.
    pub fn check(&self) -> Result<CheckedConfig, ConfigError> {
        let pairings = self.pairings()?;
        let paired = match self.games {
            None | Some(2) => true,
            Some(1) => false,
            Some(games) => {
                return Err(invalid(
                    "games",
                    format!(
                        "{games}: expected 2 (each opening twice, colours swapped: pairs) or 1 \
                         (every game its own opening)"
                    ),
                ))
            }
        };
        for (index, engine) in self.engines.iter().enumerate() {
            let name = engine.name.as_str();
            if name.is_empty() {
                return Err(invalid(
                    "engine.name",
                    format!("engine {}: every engine needs a name", index + 1),
                ));
            }
            if self.engines[..index].iter().any(|e| e.name == name) {
                return Err(invalid(
                    "engine.name",
                    format!("{name:?} is given to two engines: each engine needs its own name"),
                ));
            }
            // A name is printed inside cutechess's result lines, PGN tags and on the terminal:
            // a line break or other control character would split or corrupt them, an escape
            // sequence would recolour or rewrite the screen, a direction override would make it
            // read as another name.
            if name.chars().any(lines::unprintable) || name.len() > MAX_NAME_LEN {
                return Err(invalid(
                    "engine.name",
                    format!(
                        "{name:?}: a name is printed in result lines, PGN tags and on the \
                         terminal, so it must be at most {MAX_NAME_LEN} bytes without line \
                         breaks, control characters (such as a terminal's escape sequences) or \
                         invisible direction and zero-width marks"
                    ),
                ));
            }
        }
        self.openings
            .check()
            .map_err(|e| invalid("openings", e.to_string()))?;
        let handicap = self.handicap()?;
        let rounds = self.rounds()?;
        // Unpaired, `rounds` counts games, played two at a time, the last alone when odd; a
        // handicap match keeps a match's count (`rounds` units of two games) but its games
        // are counted one by one, as the two of a unit do not mirror each other.
        let units = if paired || handicap.is_some() {
            rounds
        } else {
            rounds.div_ceil(2)
        };
        let paired = paired && handicap.is_none();
        let pairs = units
            .checked_mul(pairings.len() as u64)
            .filter(|&p| p <= MAX_PAIRS)
            .ok_or_else(|| {
                invalid(
                    "rounds",
                    format!(
                        "{rounds} rounds of {} pairings: at most {MAX_PAIRS} pairs in one run",
                        pairings.len()
                    ),
                )
            })?;
        let games = if paired || handicap.is_some() {
            2 * pairs
        } else {
            rounds * pairings.len() as u64
        };
        let mut warnings = Vec::new();
        let concurrency = match self.concurrency {
            None => 1,
            Some(n) if (1..=MAX_CONCURRENCY).contains(&n) => n,
            Some(n) => {
                return Err(invalid(
                    "concurrency",
                    format!("{n}: expected 1 to {MAX_CONCURRENCY} games at once"),
                ))
            }
        };
        let drawn_game_colours = self.drawn_game_colours(paired, concurrency, handicap)?;
        let report = self.report_settings()?;
        if self.ping_ms == Some(0) {
            return Err(invalid("ping_ms", "must be at least 1 millisecond"));
        }
        let move_timeout = self.move_timeout()?;
        if let Some(log) = &self.log {
            log.check().map_err(|reason| invalid("log", reason))?;
        }
        let engines = (0..self.engines.len())
            .map(|index| self.engine(index, move_timeout, &mut warnings))
            .collect::<Result<Vec<_>, _>>()?;
        let time_controls = (0..self.engines.len())
            .map(|index| self.time_control(index))
            .collect::<Result<Vec<_>, _>>()?;
        let margin_ms = self
            .engines
            .iter()
            .filter_map(|e| e.settings.timemargin)
            .chain(self.each.timemargin)
            .max();
        let rules = self.rule_set()?;
        let sprt = match &self.sprt {
            None => None,
            Some(_) if pairings.len() > 1 => {
                return Err(invalid(
                    "sprt",
                    format!(
                        "an SPRT tests one engine against one other, and this {} of {} engines \
                         has {} pairings: drop the SPRT bounds, or play a match of two engines",
                        self.tournament_kind()
                            .map_or("tournament", TournamentKind::as_str),
                        self.engines.len(),
                        pairings.len()
                    ),
                ))
            }
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
        Ok(CheckedConfig {
            engines,
            time_controls,
            time_margin: Duration::from_millis(margin_ms.unwrap_or(50)),
            openings: self.openings.clone(),
            pairs,
            games,
            pairings,
            kind: self.tournament_kind()?,
            paired,
            concurrency,
            report,
            adjudication: self.adjudication()?,
            rules,
            sprt,
            judge: self.sprt.as_ref().and_then(|s| s.judge).unwrap_or_default(),
            recover: self.recover.unwrap_or(true),
            event: self.event.clone().unwrap_or_else(|| "arbiter match".into()),
            site: self.site.clone().unwrap_or_else(|| "?".into()),
            log: self.log.clone(),
            warnings,
            handicap,
            drawn_game_colours,
        })
    }

    /// Whether the games follow the drawn-game colour rule, which needs games played one at a
    /// time and in order, each its own (`games = 1`), between two engines.
    fn drawn_game_colours(
        &self,
        paired: bool,
        concurrency: usize,
        handicap: Option<Handicap>,
    ) -> Result<bool, ConfigError> {
        let field = "rules.colours_after_draw";
        match self.rules.colours_after_draw.as_deref() {
            None | Some("alternate") => Ok(false),
            Some("kept") => {
                let why = if paired {
                    Some("games = 1: the rule decides each game's colours from the one before, and a pair's two games would swap them regardless")
                } else if concurrency != 1 {
                    Some("concurrency = 1: each game's colours depend on the result of the one before")
                } else if self.engines.len() != 2 {
                    Some("two engines: it is a rule of matches")
                } else if handicap.is_some() {
                    Some("no giver: a handicap match has its own colours")
                } else {
                    None
                };
                match why {
                    Some(why) => Err(invalid(field, format!("\"kept\" needs {why}"))),
                    None => Ok(true),
                }
            }
            Some(other) => Err(invalid(
                field,
                format!("{other:?}: expected kept (the drawn game's first player moves first again) or alternate"),
            )),
        }
    }

    /// The handicap match `[openings] giver` asks for: the giver among the two engines.
    fn handicap(&self) -> Result<Option<Handicap>, ConfigError> {
        let book = &self.openings;
        let Some(giver) = &book.giver else {
            if book.alternate {
                return Err(invalid(
                    "openings.alternate",
                    "alternate colours need a giver (the engine that gives the odds)",
                ));
            }
            return Ok(None);
        };
        let Some(odds) = book
            .odds
            .as_deref()
            .and_then(arbiter_rules::Odds::from_name)
        else {
            return Err(invalid(
                "openings.giver",
                "a giver needs odds (knight, rook ...)",
            ));
        };
        if self.engines.len() != 2 {
            return Err(invalid(
                "openings.giver",
                format!(
                    "a handicap match is between two engines, and this run has {}",
                    self.engines.len()
                ),
            ));
        }
        let names: Vec<&str> = self.engines.iter().map(|e| e.name.as_str()).collect();
        let index = names.iter().position(|name| name == giver).ok_or_else(|| {
            invalid(
                "openings.giver",
                format!(
                    "{giver:?} is not an engine of the run ({})",
                    names.join(", ")
                ),
            )
        })?;
        Ok(Some(Handicap {
            giver: index,
            odds,
            alternate: book.alternate,
        }))
    }

    /// [`RunConfig::check`], then the local step ([`CheckedConfig::resolve`]): programs and
    /// files are taken from `base` (the config file's folder), and the run must fit this
    /// machine.
    pub fn resolve(&self, base: &Path, seed: u64) -> Result<MatchSpec, ConfigError> {
        self.check()?.resolve(base, seed)
    }

    /// The kind of run: as written, or a match for two engines and a round-robin for more
    /// (cutechess's default).
    pub fn tournament_kind(&self) -> Result<TournamentKind, ConfigError> {
        match self.tournament.as_deref() {
            None if self.engines.len() > 2 => Ok(TournamentKind::RoundRobin),
            None | Some("match") => Ok(TournamentKind::Match),
            Some("round-robin" | "roundrobin") => Ok(TournamentKind::RoundRobin),
            Some("gauntlet") => Ok(TournamentKind::Gauntlet),
            Some(other) => Err(invalid(
                "tournament",
                format!(
                    "{other:?}: expected match, round-robin or gauntlet (knockout and pyramid \
                     are not supported)"
                ),
            )),
        }
    }

    /// Who plays whom, as engine indices `[first, second]`: the first is White in the first
    /// game of each pair and the totals of the pairing are counted from its side.
    pub fn pairings(&self) -> Result<Vec<[usize; 2]>, ConfigError> {
        let engines = self.engines.len();
        let kind = self.tournament_kind()?;
        if engines < 2 {
            return Err(invalid(
                "engine",
                format!("a run needs at least 2 engines, found {engines}"),
            ));
        }
        if kind == TournamentKind::Match && engines != 2 {
            return Err(invalid(
                "engine",
                format!(
                    "a match needs exactly 2 engines, found {engines}: set tournament = \
                     \"round-robin\" or \"gauntlet\" (-tournament) for more"
                ),
            ));
        }
        if kind != TournamentKind::Gauntlet && self.seeds.is_some() {
            return Err(invalid(
                "seeds",
                "gauntlet seeds need tournament = \"gauntlet\" (the random seed is `seed`, \
                 cutechess's -srand)",
            ));
        }
        let seeds = self.seeds.unwrap_or(1);
        if kind == TournamentKind::Gauntlet && !(1..engines).contains(&seeds) {
            return Err(invalid(
                "seeds",
                format!(
                    "{seeds}: a gauntlet of {engines} engines has 1 to {} seeds (the first \
                     engines, who play all the others)",
                    engines - 1
                ),
            ));
        }
        Ok(kind.pairings(engines, seeds))
    }

    /// How the results are printed, checked like everything else.
    pub fn report_settings(&self) -> Result<ReportSettings, ConfigError> {
        let format = match self.output.as_deref() {
            None | Some("cutechess") => OutputFormat::Cutechess,
            Some("fastchess") => OutputFormat::Fastchess,
            Some(other) => {
                return Err(invalid(
                    "output",
                    format!("{other:?}: expected cutechess or fastchess"),
                ))
            }
        };
        let penta = self.report_penta.unwrap_or(true);
        let rating_in_pairs = format == OutputFormat::Fastchess && penta && self.games != Some(1);
        // Unset, a block follows every pair, whichever unit counts.
        let every_pair = if rating_in_pairs { 1 } else { 2 };
        Ok(ReportSettings {
            format,
            rating_interval: self.ratinginterval.unwrap_or(every_pair),
            rating_in_pairs,
            score_interval: self.scoreinterval.unwrap_or(1),
            penta,
        })
    }

    /// Rounds per pairing: `rounds`, or a default that an SPRT will cut short. A round is a
    /// pair, or unpaired (`games = 1`) one game.
    fn rounds(&self) -> Result<u64, ConfigError> {
        Ok(match self.rounds {
            None if self.sprt.is_some() => 100_000,
            None => 100,
            Some(0) => return Err(invalid("rounds", "must be at least 1")),
            Some(n) if n > MAX_PAIRS => {
                return Err(invalid(
                    "rounds",
                    format!("{n}: at most {MAX_PAIRS} rounds in one run"),
                ))
            }
            Some(n) => n,
        })
    }

    /// The score rules, checked so that no setting ends games by itself: a streak of zero
    /// moves, or a resign threshold at or below zero, would adjudicate every game after its
    /// first scored move.
    fn adjudication(&self) -> Result<Adjudication, ConfigError> {
        let a = &self.adjudication;
        if let Some(draw) = a.draw {
            if draw.movecount == 0 {
                return Err(invalid(
                    "adjudication.draw.movecount (-draw movecount)",
                    "must be at least 1: the moves both engines' scores must stay near zero",
                ));
            }
            if draw.score < 0 {
                return Err(invalid(
                    "adjudication.draw.score (-draw score)",
                    format!("{}: expected centipawns, 0 or more", draw.score),
                ));
            }
        }
        if let Some(resign) = a.resign {
            if resign.movecount == 0 {
                return Err(invalid(
                    "adjudication.resign.movecount (-resign movecount)",
                    "must be at least 1: the moves an engine's score must stay that low",
                ));
            }
            if resign.score <= 0 {
                return Err(invalid(
                    "adjudication.resign.score (-resign score)",
                    format!(
                        "{}: expected a positive number of centipawns (an engine resigns when \
                         its score is that far below zero)",
                        resign.score
                    ),
                ));
            }
        }
        Ok(Adjudication {
            draw: a.draw,
            resign: a.resign,
            // 0 is cutechess's "no limit".
            maxmoves: a.maxmoves.filter(|&m| m > 0),
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
            Some(st) => Some(
                TimeControl::parse_movetime(&st.to_string())
                    .map_err(|e| invalid(field("st"), e.to_string()))?,
            ),
            None => None,
        };
        let positive = |name: &str, value: Option<u64>| match value {
            Some(0) => Err(invalid(
                field(name),
                "must be at least 1 (leave it out for no limit)",
            )),
            _ => Ok(value),
        };
        let tc = TimeControl {
            clock,
            movetime,
            nodes: positive("nodes", self.setting(index, |s| s.nodes))?,
            depth: positive("depth", self.setting(index, |s| s.depth).map(u64::from))?
                .map(|d| d as u32),
        };
        if !tc.is_bounded() {
            return Err(invalid(
                field("tc"),
                "no limit: give tc, st, nodes or depth, or games never end",
            ));
        }
        Ok(tc)
    }

    /// One engine as its text describes it: program or builtin, options, parameters by name
    /// and range, hash. Paths stay as written.
    fn engine(
        &self,
        index: usize,
        move_timeout: Option<Duration>,
        warnings: &mut Vec<String>,
    ) -> Result<CheckedEngine, ConfigError> {
        let engine = &self.engines[index];
        let field = |f: &str| format!("engine[{}].{f}", engine.name);
        let mut options: Vec<(String, String)> = self.each.options.clone().into_iter().collect();
        for (name, value) in &engine.settings.options {
            options.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            options.push((name.clone(), value.clone()));
        }
        if let Some(recipe) = &engine.build {
            if engine.cmd.is_some() || engine.builtin.is_some() {
                return Err(invalid(
                    field("build"),
                    "give one of cmd, builtin and build",
                ));
            }
            if let Some((part, reason)) = recipe.fault() {
                return Err(invalid(field(&format!("build.{part}")), reason));
            }
        }
        // A built engine plays as a UCI engine whose program is the recipe's binary, found in
        // the machine's build when it is built (`crate::build`).
        let cmd = engine
            .cmd
            .clone()
            .or_else(|| engine.build.as_ref().map(|recipe| recipe.binary.clone()));
        let program = match (&cmd, &engine.builtin) {
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
            (Some(cmd), None) => Program::Uci(ProcessSpec {
                cmd: cmd.clone(),
                args: engine.args.clone(),
                dir: engine.dir.clone(),
                env: engine.env.clone().into_iter().collect(),
                options,
            }),
            (None, Some(builtin)) if builtin == "staunton" => {
                // Ranges do not depend on the values a parameter file will bring: each setting
                // is tried on the defaults here and applied over the file when resolved.
                let mut trial = staunton::Params::default();
                let mut settings = Vec::new();
                let mut hash_option = None;
                for (name, value) in &options {
                    let option = format!("options.{name}");
                    match builtin_option(name, value, &mut trial)
                        .map_err(|reason| invalid(field(&option), reason))?
                    {
                        BuiltinOption::Hash(mb) => hash_option = Some(mb),
                        BuiltinOption::Param(name, value) => settings.push((name, value)),
                        BuiltinOption::Applied => {}
                        BuiltinOption::Unknown => warnings.push(format!(
                            "engine {}: option {name:?} is not one staunton declares; ignored \
                             (its options: Hash, Threads, Move Overhead and the parameters \
                             that `staunton params` lists)",
                            engine.name
                        )),
                    }
                }
                for (name, value) in &engine.params {
                    trial
                        .set(name, *value)
                        .map_err(|e| invalid(field(&format!("params.{name}")), e.to_string()))?;
                    settings.push((name.clone(), *value));
                }
                let hash_mb = self.setting(index, |s| s.hash).or(hash_option).unwrap_or(1);
                if hash_mb > MAX_BUILTIN_HASH_MB {
                    return Err(invalid(
                        field("hash"),
                        format!(
                            "{hash_mb} MB: staunton's hash is at most {MAX_BUILTIN_HASH_MB} MB \
                             (0 gives 64 KiB)"
                        ),
                    ));
                }
                Program::Staunton {
                    params_file: engine.params_file.clone(),
                    settings,
                    hash_mb,
                }
            }
            (None, Some(other)) => {
                return Err(invalid(
                    field("builtin"),
                    format!("{other:?}: the only builtin engine is \"staunton\""),
                ))
            }
        };
        Ok(CheckedEngine {
            name: engine.name.clone(),
            program,
            bench: engine.bench,
            build: engine.build.clone(),
            timeouts: Timeouts {
                ping: self.ping_ms.map(Duration::from_millis),
                unclocked_move: move_timeout,
                ..Timeouts::default()
            },
            restart: self.setting(index, |s| s.restart).unwrap_or(false),
        })
    }

    /// The limit on an unclocked move (see `move_timeout`): the default, none for 0, or the
    /// seconds given, to the millisecond.
    fn move_timeout(&self) -> Result<Option<Duration>, ConfigError> {
        let Some(seconds) = self.move_timeout else {
            return Ok(Some(DEFAULT_MOVE_TIMEOUT));
        };
        if seconds == 0.0 {
            return Ok(None);
        }
        match Duration::try_from_secs_f64(seconds) {
            Ok(limit) if limit >= Duration::from_millis(1) && seconds <= MAX_MOVE_TIMEOUT_S => {
                Ok(Some(limit))
            }
            _ => Err(invalid(
                "move_timeout",
                format!(
                    "{seconds}: expected seconds from 0.001 to {MAX_MOVE_TIMEOUT_S} for a move \
                     without a clock, or 0 for no limit"
                ),
            )),
        }
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
            marked_pawn: match r.marked_pawn.as_deref() {
                None => None,
                Some("white") => Some(arbiter_rules::Color::White),
                Some("black") => Some(arbiter_rules::Color::Black),
                Some(other) => {
                    return Err(invalid(
                        "rules.marked_pawn",
                        format!("{other:?}: expected white or black (the side whose king's bishop's pawn is marked)"),
                    ))
                }
            },
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

/// A run as its text decides it ([`RunConfig::check`]): everything but what needs this
/// machine's files and memory. Engine programs, `params_file` and the book are still as
/// written, relative to the configuration's folder.
#[derive(Clone, Debug)]
pub struct CheckedConfig {
    pub engines: Vec<CheckedEngine>,
    /// Each engine's limits, by the same index.
    pub time_controls: Vec<TimeControl>,
    pub time_margin: Duration,
    pub openings: BookSpec,
    /// Pairs over all pairings (see [`MatchSpec::pairs`]).
    pub pairs: u64,
    /// Games over all pairings (see [`MatchSpec::games`]).
    pub games: u64,
    pub pairings: Vec<[usize; 2]>,
    pub kind: TournamentKind,
    pub paired: bool,
    pub concurrency: usize,
    pub report: ReportSettings,
    pub adjudication: Adjudication,
    pub rules: RuleSet,
    pub sprt: Option<Sprt>,
    /// Which finished pairs the SPRT is judged on.
    pub judge: SprtJudge,
    pub recover: bool,
    pub event: String,
    pub site: String,
    /// The run's log, checked; opened by [`CheckedConfig::resolve`].
    pub log: Option<LogConfig>,
    /// What will not happen as written (options the in-process engine does not declare, book
    /// entries skipped).
    pub warnings: Vec<String>,
    /// A handicap match's giver and odds; such a run is unpaired.
    pub handicap: Option<Handicap>,
    /// Whether the drawn-game colour rule holds; such a run is unpaired and one game at a time.
    pub drawn_game_colours: bool,
}

/// One engine of a checked run.
#[derive(Clone, Debug)]
pub struct CheckedEngine {
    pub name: String,
    pub program: Program,
    /// The bench node count the run expects of it, if it names one.
    pub bench: Option<u64>,
    /// How it is built, for an engine built from source: its `Program::Uci` runs the recipe's
    /// binary, relative until `crate::build` builds it on this machine.
    pub build: Option<BuildRecipe>,
    pub timeouts: Timeouts,
    pub restart: bool,
}

/// What plays for an engine, before the local step.
#[derive(Clone, Debug)]
pub enum Program {
    /// A UCI engine: `cmd` and `dir` as written; `options` merged from `each` and the engine.
    Uci(ProcessSpec),
    /// The in-process staunton: parameters from `params_file` (if any), then `settings` (from
    /// `options` and `params`, in that order, names and ranges already checked).
    Staunton {
        params_file: Option<PathBuf>,
        settings: Vec<(String, i64)>,
        hash_mb: usize,
    },
}

impl CheckedConfig {
    /// The local step: UCI programs given as paths and every file are taken from `base` (the
    /// configuration's folder; a bare program name is looked up on PATH when started), the
    /// parameter files and the book are read, the log file is opened, and the in-process hash
    /// tables must fit this machine's memory.
    pub fn resolve(self, base: &Path, seed: u64) -> Result<MatchSpec, ConfigError> {
        let mut warnings = self.warnings;
        let players = self
            .engines
            .into_iter()
            .map(|engine| engine.resolve(base))
            .collect::<Result<Vec<_>, _>>()?;
        check_memory(&players, self.concurrency, self.pairs)?;
        let mut book_spec = self.openings;
        book_spec.file = book_spec.file.map(|f| absolute(base, &f));
        let mut book = Book::load(&book_spec).map_err(|e| invalid("openings", e.to_string()))?;
        book.drop_finished(self.rules, book_spec.skip_invalid)
            .map_err(|e| invalid("openings", e.to_string()))?;
        warnings.append(&mut book.warnings);
        let log = match &self.log {
            Some(log) => Some(log.open(base).map_err(|reason| invalid("log", reason))?),
            None => None,
        };
        let play = PlaySpec {
            players,
            time_controls: self.time_controls,
            time_margin: self.time_margin,
            book: Arc::new(book),
            pairs: self.pairs,
            games: self.games,
            pairings: self.pairings,
            kind: self.kind,
            paired: self.paired,
            concurrency: self.concurrency,
            adjudication: self.adjudication,
            rules: self.rules,
            recover: self.recover,
            seed,
            event: self.event,
            site: self.site,
            log,
            handicap: self.handicap,
            drawn_game_colours: self
                .drawn_game_colours
                .then(|| Arc::new(DrawnGameColours::default())),
        };
        Ok(MatchSpec {
            play: Arc::new(play),
            sprt: self.sprt,
            judge: self.judge,
            warnings,
        })
    }

    /// What a report needs of the run, decided once from the checked text and stored with the
    /// run (`arbiter_store::RunFacts`), so that a later arbiter that checks more strictly still
    /// reports it as it was played. A tuning run or self-play keeps the rest and names its own
    /// kind and plan.
    pub fn facts(&self) -> RunFacts {
        RunFacts {
            version: RunFacts::VERSION,
            kind: match self.kind {
                TournamentKind::Match => RunKind::Match,
                TournamentKind::RoundRobin => RunKind::RoundRobin,
                TournamentKind::Gauntlet => RunKind::Gauntlet,
            },
            model: if self.paired {
                SampleModel::Pentanomial
            } else {
                SampleModel::Trinomial
            },
            sprt: self.sprt.as_ref().map(|sprt| SprtFacts {
                elo0: sprt.elo0(),
                elo1: sprt.elo1(),
                alpha: sprt.alpha(),
                beta: sprt.beta(),
                model: sprt.model().name().to_owned(),
                judged_on: match self.judge {
                    SprtJudge::Prefix => JudgedOn::Prefix,
                    SprtJudge::All => JudgedOn::AllPairs,
                },
            }),
            games_planned: self.games,
            clocks: self
                .time_controls
                .iter()
                .map(|tc| {
                    tc.clock.map(|clock| Clock {
                        moves: clock.moves,
                        base_ms: clock.base.as_secs_f64() * 1000.0,
                        increment_ms: clock.increment.as_secs_f64() * 1000.0,
                        hourglass: clock.hourglass,
                    })
                })
                .collect(),
        }
    }
}

impl CheckedEngine {
    pub(crate) fn resolve(self, base: &Path) -> Result<PlayerSpec, ConfigError> {
        let field = |f: &str| format!("engine[{}].{f}", self.name);
        let kind = match self.program {
            Program::Uci(mut process) => {
                // A bare name is looked up on PATH; a path is taken from the config's folder.
                if process.cmd.components().count() > 1 {
                    process.cmd = absolute(base, &process.cmd);
                    // An engine started in its own folder would look for a relative program
                    // there (exec follows the chdir): pin it to where arbiter runs.
                    if process.dir.is_some() {
                        process.cmd = std::path::absolute(&process.cmd).unwrap_or(process.cmd);
                    }
                }
                process.dir = process.dir.map(|d| absolute(base, &d));
                PlayerKind::Uci(process)
            }
            Program::Staunton {
                params_file,
                settings,
                hash_mb,
            } => {
                let mut params = match &params_file {
                    Some(file) => staunton::Params::load(&absolute(base, file))
                        .map_err(|e| invalid(field("params_file"), e.to_string()))?,
                    None => staunton::Params::default(),
                };
                for (name, value) in &settings {
                    // Names and ranges were checked; a file cannot change either.
                    params
                        .set(name, *value)
                        .map_err(|e| invalid(field(&format!("params.{name}")), e.to_string()))?;
                }
                PlayerKind::Builtin(Box::new(BuiltinSpec { params, hash_mb }))
            }
        };
        Ok(PlayerSpec {
            name: self.name,
            kind,
            timeouts: self.timeouts,
            restart: self.restart,
        })
    }
}

/// Most games in flight at once. Each holds two engines (for UCI engines two processes, each
/// with its pipes and a stderr thread, and a thread per game; in process two hash tables): past a few thousand a
/// machine runs out of threads, descriptors or memory long before it runs out of cores.
pub const MAX_CONCURRENCY: usize = 4096;

/// Most pairs in one run: far beyond any real run, and small enough that every game number
/// (`2 * pair + 2`) fits the store's 64-bit signed integers.
pub const MAX_PAIRS: u64 = 1 << 40;

/// The in-process staunton's largest hash, the maximum its UCI `Hash` option declares.
pub const MAX_BUILTIN_HASH_MB: usize = staunton::MAX_HASH_MB;

/// The longest `move_timeout`, in seconds (a week): past that, 0 (no limit) says it.
pub const MAX_MOVE_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// Longest engine name, in bytes: names go into every result line and PGN tag.
pub const MAX_NAME_LEN: usize = 256;

/// What an in-process staunton made of one `options` entry.
enum BuiltinOption {
    Hash(usize),
    /// A parameter by its canonical name, its value in range.
    Param(String, i64),
    Applied,
    Unknown,
}

/// Reads a UCI option for the in-process staunton as its UCI loop would: `Hash` in MB,
/// `Threads` (one only), `Move Overhead`, and every parameter by name. A value it cannot take is
/// an error, as a GUI's `setoption` would be refused; an option it does not declare is reported
/// by the caller, like an undeclared option of a UCI engine.
fn builtin_option(
    name: &str,
    value: &str,
    params: &mut staunton::Params,
) -> Result<BuiltinOption, String> {
    let number = |expected: &str| {
        value
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("{value:?}: expected {expected}"))
    };
    if name.eq_ignore_ascii_case("Hash") {
        let mb = number("a whole number of megabytes")?;
        return usize::try_from(mb)
            .map(BuiltinOption::Hash)
            .map_err(|_| format!("{value:?}: expected a whole number of megabytes"));
    }
    if name.eq_ignore_ascii_case("Threads") {
        return match number("1")? {
            1 => Ok(BuiltinOption::Applied),
            n => Err(format!("{n}: staunton in process searches with 1 thread")),
        };
    }
    if name.eq_ignore_ascii_case("Move Overhead") {
        // In process there is no pipe to cover: the value is checked and has nothing to do.
        return number("milliseconds, 0 or more").and_then(|ms| {
            (ms >= 0)
                .then_some(BuiltinOption::Applied)
                .ok_or_else(|| format!("{ms}: expected milliseconds, 0 or more"))
        });
    }
    match staunton::params::spec(name) {
        Some((_, spec)) => {
            let n = number("a whole number")?;
            params.set(spec.name, n).map_err(|e| e.to_string())?;
            Ok(BuiltinOption::Param(spec.name.to_owned(), n))
        }
        None => Ok(BuiltinOption::Unknown),
    }
}

/// Refuses a run whose in-process hash tables cannot fit in this machine's memory: each engine
/// keeps one table per game in flight, and a failed allocation aborts the process.
fn check_memory(players: &[PlayerSpec], concurrency: usize, pairs: u64) -> Result<(), ConfigError> {
    let in_flight = (concurrency as u64).min(pairs.saturating_mul(2));
    let tables_mb: u64 = players
        .iter()
        .filter_map(|p| match &p.kind {
            PlayerKind::Builtin(b) => Some((b.hash_mb as u64).max(1)),
            PlayerKind::Uci(_) => None,
        })
        .map(|mb| mb.saturating_mul(in_flight))
        .sum();
    match physical_memory_mb() {
        Some(memory) if tables_mb > memory => Err(invalid(
            "hash",
            format!(
                "{tables_mb} MB of in-process hash tables ({in_flight} games at once, one table \
                 per engine each) cannot fit in this machine's {memory} MB of memory: lower \
                 hash or concurrency"
            ),
        )),
        _ => Ok(()),
    }
}

/// The machine's memory in MB (Linux `MemTotal`); `None` where /proc is not available.
fn physical_memory_mb() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// One `path: old -> new` line per leaf that differs between two TOML values. Engines (array
/// entries with a `name`) are named by it: `engine[base].params.knight_mg: 250 -> 300`.
fn diff_values(
    path: &str,
    old: Option<&toml::Value>,
    new: Option<&toml::Value>,
    out: &mut Vec<String>,
) {
    use toml::Value;
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (old, new) {
        (Some(Value::Table(a)), Some(Value::Table(b))) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                diff_values(&join(key), a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                let label = match (x.get("name"), y.get("name")) {
                    (Some(Value::String(n)), Some(Value::String(m))) if n == m => n.clone(),
                    _ => index.to_string(),
                };
                diff_values(&format!("{path}[{label}]"), Some(x), Some(y), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => {
            let show =
                |v: Option<&Value>| v.map_or_else(|| "(not set)".to_owned(), Value::to_string);
            out.push(format!("{path}: {} -> {}", show(a), show(b)));
        }
    }
}

/// A path from the configuration, taken from `base` (the configuration's folder) unless it is
/// absolute already.
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

/// The digest an unnamed run's name is derived from: FNV-1a over its canonical text, stable
/// across Rust releases (unlike `DefaultHasher`), so the same configuration finds the same run
/// with any arbiter build.
pub fn fnv1a(bytes: &[u8]) -> u64 {
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
        let spec = config.resolve(Path::new("."), 1).unwrap();
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
    }

    /// An engine with its own `dir` still starts the program its `cmd` names from the
    /// configuration's folder, even when that folder is given relative to arbiter's own.
    #[test]
    fn an_engine_in_its_own_folder_keeps_its_program() {
        let text = MINIMAL.replace(
            "cmd = \"stockfish\"",
            "cmd = \"../target/release/engine\"\ndir = \".\"",
        );
        let config = RunConfig::parse(&text, "t").unwrap();
        let spec = config.resolve(Path::new("configs"), 1).unwrap();
        let PlayerKind::Uci(process) = &spec.players[1].kind else {
            panic!("a UCI engine");
        };
        let here = std::env::current_dir().unwrap();
        assert_eq!(process.cmd, here.join("configs/../target/release/engine"));
        assert_eq!(process.dir.as_deref(), Some(Path::new("configs/.")));
    }

    /// Issue 18, item 12: the limit on an unclocked move is a setting, the same for every
    /// engine, in process or not: 60 s unless given, none for 0, refused out of range.
    #[test]
    fn the_move_timeout_is_a_setting_for_every_engine() {
        let timeouts = |line: &str| {
            let config = RunConfig::parse(&format!("{line}\n{MINIMAL}"), "t").unwrap();
            let checked = config.check().map_err(|e| e.to_string())?;
            Ok::<_, String>(
                checked
                    .engines
                    .iter()
                    .map(|e| e.timeouts.unclocked_move)
                    .collect::<Vec<_>>(),
            )
        };
        let minute = Some(Duration::from_secs(60));
        assert_eq!(timeouts(""), Ok(vec![minute, minute]));
        let half = Some(Duration::from_millis(500));
        assert_eq!(timeouts("move_timeout = 0.5"), Ok(vec![half, half]));
        assert_eq!(timeouts("move_timeout = 0"), Ok(vec![None, None]));
        for bad in ["-1", "0.0001", "1e9", "nan"] {
            let err = timeouts(&format!("move_timeout = {bad}")).unwrap_err();
            assert!(
                err.starts_with("move_timeout: ") && err.contains("or 0 for no limit"),
                "{bad}: {err}"
            );
        }
    }

    /// Issue 18, item 17: the `[log]` table is the `-log` flag's TOML equivalent, checked with
    /// the rest, and where the log goes does not define the games.
    #[test]
    fn the_log_table_is_the_log_flag() {
        let text =
            format!("{MINIMAL}\n[log]\nfile = \"engines.log\"\nlevel = \"trace\"\nengine = true\n");
        let config = RunConfig::parse(&text, "t").unwrap();
        let flags = cutechess::parse(
            &"-engine builtin=staunton name=a -engine cmd=stockfish name=b -each nodes=1000 \
              -rounds 10 -log file=engines.log level=trace engine=true"
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(config.log, flags.config.log);
        assert!(config.check().is_ok());
        assert_eq!(
            config.run_name(),
            RunConfig {
                log: None,
                ..config.clone()
            }
            .run_name()
        );
        for (bad, expected) in [
            (
                "level = \"loud\"",
                "log: level \"loud\": expected trace, info, warn, err or fatal",
            ),
            (
                "compress = true",
                "log: compress = true: the log is written as plain text only",
            ),
        ] {
            let text = format!("{MINIMAL}\n[log]\nfile = \"x.log\"\n{bad}\n");
            let err = RunConfig::parse(&text, "t").unwrap().check().unwrap_err();
            assert!(err.to_string().starts_with(expected), "{err}");
        }
    }

    /// A handicap match: the giver takes the side the laws give it in every game, or
    /// alternates with the start mirrored; the games are counted one by one; a giver that is
    /// not an engine, or without odds, or in a tournament, is refused naming the field.
    #[test]
    fn a_handicap_match_seats_the_giver() {
        let two = MINIMAL.replace("cmd = \"stockfish\"", "builtin = \"staunton\"");
        let with = |openings: &str| format!("{two}\n[openings]\n{openings}");
        let spec = |openings: &str| {
            RunConfig::parse(&with(openings), "t")
                .unwrap()
                .resolve(Path::new("."), 1)
                .unwrap()
        };
        let knight = spec("odds = \"knight\"\ngiver = \"b\"");
        assert!(!knight.paired);
        assert_eq!(knight.games, 20, "rounds are units of two games");
        for unit in 0..3 {
            assert_eq!(
                knight.seats(unit, 0),
                [1, 0],
                "the giver of a piece has White"
            );
            assert_eq!(knight.seats(unit, 1), [1, 0]);
            assert_eq!(
                knight.opening(unit, 1).start,
                arbiter_rules::Odds::Knight.position()
            );
        }
        let pawn = spec("odds = \"pawn-and-move\"\ngiver = \"a\"");
        assert_eq!(pawn.seats(0, 0), [1, 0], "the giver of a pawn has Black");
        assert_eq!(pawn.seats(0, 1), [1, 0]);
        let alternating = spec("odds = \"knight\"\ngiver = \"a\"\nalternate = true");
        assert_eq!(alternating.seats(0, 0), [0, 1]);
        assert_eq!(alternating.seats(0, 1), [1, 0]);
        assert_eq!(
            alternating.opening(0, 1).start,
            arbiter_rules::Odds::Knight.position().mirrored(),
            "the giver as Black lacks its own knight"
        );
        let refused = |openings: &str| {
            RunConfig::parse(&with(openings), "t")
                .unwrap()
                .check()
                .unwrap_err()
                .to_string()
        };
        assert!(refused("odds = \"knight\"\ngiver = \"c\"").contains("\"c\" is not an engine"));
        assert!(refused("giver = \"a\"").contains("giver needs odds"));
        assert!(refused("odds = \"knight\"\nalternate = true").contains("need a giver"));
        let three = format!(
            "{}\n[[engine]]\nname = \"c\"\nbuiltin = \"staunton\"\n[openings]\nodds = \"rook\"\ngiver = \"a\"",
            two.replace("rounds = 10", "rounds = 10\ntournament = \"round-robin\"")
        );
        let err = RunConfig::parse(&three, "t")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("between two engines"), "{err}");
    }

    /// The drawn-game colour rule needs games one at a time, each its own, between two
    /// engines; its seats follow the recorded results.
    #[test]
    fn the_drawn_game_colour_rule_is_checked_and_seats_by_results() {
        let two = MINIMAL.replace("cmd = \"stockfish\"", "builtin = \"staunton\"");
        let with = |extra: &str| format!("{extra}\n{two}\n[rules]\ncolours_after_draw = \"kept\"");
        let refused = |extra: &str| {
            RunConfig::parse(&with(extra), "t")
                .unwrap()
                .check()
                .unwrap_err()
                .to_string()
        };
        assert!(refused("").contains("needs games = 1"));
        assert!(refused("games = 1\nconcurrency = 2").contains("needs concurrency = 1"));
        let odd = format!("{two}\n[rules]\ncolours_after_draw = \"sometimes\"");
        let err = RunConfig::parse(&odd, "t")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rules.colours_after_draw") && err.contains("expected kept"),
            "{err}"
        );

        let text = with("").replace("rounds = 10", "rounds = 10\ngames = 1");
        let spec = RunConfig::parse(&text, "t")
            .unwrap()
            .resolve(Path::new("."), 1)
            .unwrap();
        let rule = spec.drawn_game_colours.clone().unwrap();
        assert_eq!(spec.seats(0, 0), [0, 1], "the first engine begins");
        rule.record(1, 0, true);
        assert_eq!(
            spec.seats(0, 1),
            [0, 1],
            "after a draw the same player begins"
        );
        rule.record(2, 0, false);
        assert_eq!(
            spec.seats(1, 0),
            [1, 0],
            "after a decisive game the other does"
        );
        rule.record(3, 1, false);
        assert_eq!(spec.seats(1, 1), [0, 1]);
    }

    /// A build recipe is checked from its text: each fault names its field; a good one plays
    /// as a UCI engine running the recipe's binary, signed by the recipe.
    #[test]
    fn a_build_recipe_is_checked_field_by_field() {
        let with = |recipe: &str| {
            MINIMAL.replace("cmd = \"stockfish\"", &format!("build = {{ {recipe} }}"))
        };
        let good = r#"repo = "https://example.org/e.git", commit = "0123456789abcdef0123456789abcdef01234567", command = "make", binary = "bin/e""#;
        let checked = RunConfig::parse(&with(good), "t").unwrap().check().unwrap();
        let engine = &checked.engines[1];
        assert!(matches!(&engine.program, Program::Uci(p) if p.cmd == Path::new("bin/e")));
        let signature = engine.build.as_ref().unwrap().signature();
        assert!(
            signature.starts_with("build:https://example.org/e.git@0123456789abcdef"),
            "{signature}"
        );
        let fault = |recipe: String| {
            RunConfig::parse(&with(&recipe), "t")
                .unwrap()
                .check()
                .unwrap_err()
                .to_string()
        };
        for (wrong, field) in [
            (
                good.replace("0123456789abcdef0123456789abcdef01234567", "main"),
                "build.commit",
            ),
            (
                good.replace("0123456789abcdef0123456789abcdef01234567", "0123456"),
                "build.commit",
            ),
            (
                good.replace("https://example.org/e.git", "--upload-pack=x"),
                "build.repo",
            ),
            (good.replace("\"make\"", "\" \""), "build.command"),
            (good.replace("bin/e", "../e"), "build.binary"),
            (good.replace("bin/e", "/usr/bin/e"), "build.binary"),
        ] {
            let err = fault(wrong.clone());
            assert!(
                err.contains(&format!("engine[b].{field}")),
                "{wrong}: {err}"
            );
        }
        let both = MINIMAL.replace(
            "cmd = \"stockfish\"",
            &format!("cmd = \"stockfish\"\nbuild = {{ {good} }}"),
        );
        let err = RunConfig::parse(&both, "t")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("give one of cmd, builtin and build"), "{err}");
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
        assert!(resolve(&MINIMAL.replace("name = \"b\"", "name = \"a\"")).contains("its own name"));
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
    /// Issue 9, items 3 and 7: both front ends resolve through here, so a value the flags
    /// refuse is refused in TOML too, and sizes that cannot be allocated are refused up front.
    #[test]
    fn values_that_change_results_or_cannot_be_allocated_are_refused() {
        let resolve = |text: &str| {
            let config = RunConfig::parse(text, "t").unwrap();
            config
                .resolve(Path::new("."), 1)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let with = |extra: &str| format!("{extra}\n{MINIMAL}");
        let section = |extra: &str| format!("{MINIMAL}\n{extra}");
        for (text, expected) in [
            (
                section("[adjudication]\nresign = { movecount = 1, score = -100 }"),
                "resign.score",
            ),
            (
                section("[adjudication]\nresign = { movecount = 0, score = 0 }"),
                "resign.movecount",
            ),
            (
                section("[adjudication]\ndraw = { movenumber = 1, movecount = 0, score = 0 }"),
                "draw.movecount",
            ),
            (with("concurrency = 0"), "concurrency"),
            (with("concurrency = 100000000"), "4096"),
            (MINIMAL.replace("nodes = 1000", "nodes = 0"), "nodes"),
            (MINIMAL.replace("nodes = 1000", "depth = 0"), "depth"),
            (
                MINIMAL.replace("rounds = 10", "rounds = 9999999999999999"),
                "rounds",
            ),
            (
                MINIMAL.replace("nodes = 1000", "nodes = 1000\nhash = 1000000000"),
                "hash",
            ),
            (
                MINIMAL
                    .replace("nodes = 1000", "nodes = 1000\nhash = 32768")
                    .replace("rounds = 10", "rounds = 10\nconcurrency = 4096"),
                "cannot fit",
            ),
            (
                MINIMAL.replace("name = \"a\"", "name = \"a\\nFinished game 1\""),
                "line breaks",
            ),
            // Issue 18, item 15: a terminal's escape sequence (here: red text), and a direction
            // override that prints `b\u{202e}ved` as "bdev", are refused with what they are.
            (
                MINIMAL.replace("name = \"a\"", "name = \"\\u001b[31ma\""),
                "\"\\u{1b}[31ma\": a name is printed in result lines, PGN tags and on the \
                 terminal, so it must be at most 256 bytes without line breaks, control \
                 characters (such as a terminal's escape sequences)",
            ),
            (
                MINIMAL.replace("name = \"a\"", "name = \"b\\u202eved\""),
                "invisible direction and zero-width marks",
            ),
            (
                MINIMAL.replace("name = \"a\"", "name = \"a\\u200b\""),
                "invisible direction and zero-width marks",
            ),
        ] {
            let err = resolve(&text);
            assert!(err.contains(expected), "{expected}: {err}\n{text}");
        }
        // What is allowed stays allowed: maxmoves 0 is cutechess's "no limit".
        let config = RunConfig::parse(&section("[adjudication]\nmaxmoves = 0"), "t").unwrap();
        let spec = config.resolve(Path::new("."), 1).unwrap();
        assert_eq!(spec.adjudication.maxmoves, None);
    }

    /// Issue 11: a run is judged from its text alone, so a coordinator can check what another
    /// machine will play. Files that do not exist here check fine and are only looked at when
    /// resolved, where the error names them; so is the memory the hash tables need.
    #[test]
    fn check_reads_no_file_and_resolve_names_the_missing_one() {
        let missing = |file: &str| {
            MINIMAL.replace(
                "name = \"b\"\n        cmd = \"stockfish\"",
                &format!(
                    "name = \"b\"\n        builtin = \"staunton\"\n        params_file = {file:?}"
                ),
            )
        };
        for (text, named) in [
            (missing("no/such/params.toml"), "params.toml"),
            (
                format!("{MINIMAL}\n[openings]\nfile = \"no/such/book.epd\""),
                "book.epd",
            ),
        ] {
            let config = RunConfig::parse(&text, "t").unwrap();
            let checked = config.check().unwrap_or_else(|e| panic!("{e}\n{text}"));
            let err = checked
                .resolve(Path::new("/nonexistent-folder"), 1)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{named}: {err}");
        }
        // A program given as a path stays as written until resolved from the config's folder.
        let uci = RunConfig::parse(&MINIMAL.replace("\"stockfish\"", "\"bin/engine\""), "t")
            .unwrap()
            .check()
            .unwrap();
        assert!(
            matches!(&uci.engines[1].program, Program::Uci(p) if p.cmd == Path::new("bin/engine"))
        );
        let spec = uci.resolve(Path::new("/runs"), 1).unwrap();
        assert!(
            matches!(&spec.players[1].kind, PlayerKind::Uci(p) if p.cmd == Path::new("/runs/bin/engine"))
        );
        // Hash tables that need more memory than any machine has: the text is fine, the
        // machine is not.
        let huge = MINIMAL
            .replace("nodes = 1000", "nodes = 1000\nhash = 32768")
            .replace("rounds = 10", "rounds = 10\nconcurrency = 4096");
        let config = RunConfig::parse(&huge, "t").unwrap();
        let checked = config.check().unwrap();
        let err = checked.resolve(Path::new("."), 1).map(|_| ()).unwrap_err();
        assert!(err.to_string().contains("cannot fit"), "{err}");
        // What the text gets wrong is found without the local step, and the same error
        // comes out of resolve.
        for text in [
            format!("{MINIMAL}\n[openings]\nfile = \"x.epd\"\nodds = \"knight\""),
            format!("{MINIMAL}\n[openings]\nodds = \"bishop\""),
            MINIMAL.replace(
                "builtin = \"staunton\"",
                "builtin = \"staunton\"\nparams = { knight_mg = 99999 }",
            ),
        ] {
            let config = RunConfig::parse(&text, "t").unwrap();
            let checked = config.check().map(|_| ()).unwrap_err().to_string();
            let resolved = config
                .resolve(Path::new("."), 1)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert_eq!(checked, resolved);
        }
    }

    /// Issue 9, item 4: a misspelt key in `[openings]` is an error naming it, as in every other
    /// section; a book file and odds together are refused instead of odds winning silently.
    #[test]
    fn openings_keys_are_checked() {
        let err = RunConfig::parse(&format!("{MINIMAL}\n[openings]\nfil = \"x.epd\""), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.toml") && err.contains("fil"), "{err}");
        let config = RunConfig::parse(
            &format!("{MINIMAL}\n[openings]\nfile = \"x.epd\"\nodds = \"knight\""),
            "t",
        )
        .unwrap();
        let err = config.resolve(Path::new("."), 1).unwrap_err().to_string();
        assert!(err.contains("not both"), "{err}");
    }

    /// A book entry whose game is already over would give games in which no engine moves.
    #[test]
    fn finished_book_positions_are_refused_or_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book.epd");
        std::fs::write(
            &book,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n\
             rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -\n\
             7k/5Q2/6K1/8/8/8/8/8 b - -\n",
        )
        .unwrap();
        let text = format!(
            "{MINIMAL}\n[openings]\nfile = {:?}",
            book.display().to_string()
        );
        let err = RunConfig::parse(&text, "t")
            .unwrap()
            .resolve(Path::new("."), 1)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("book.epd:2") && err.contains("checkmate"),
            "{err}"
        );
        let config = RunConfig::parse(&format!("{text}\nskip_invalid = true"), "t").unwrap();
        let spec = config.resolve(Path::new("."), 1).unwrap();
        assert_eq!(spec.book.len(), 1);
        assert_eq!(spec.warnings.len(), 2, "{:?}", spec.warnings);
        assert!(spec.warnings[1].contains("book.epd:3") && spec.warnings[1].contains("stalemate"));
    }

    /// `options` reach the in-process engine as its UCI loop would take them: a value it cannot
    /// take is an error, a parameter is set, an option it does not declare is a warning.
    #[test]
    fn in_process_options_are_applied_or_reported() {
        let resolve = |options: &str| {
            let text = MINIMAL.replace(
                "builtin = \"staunton\"",
                &format!("builtin = \"staunton\"\noptions = {{ {options} }}"),
            );
            RunConfig::parse(&text, "t")
                .unwrap()
                .resolve(Path::new("."), 1)
        };
        let err = resolve("Hash = \"abc\"").unwrap_err().to_string();
        assert!(err.contains("options.Hash") && err.contains("abc"), "{err}");
        let err = resolve("Threads = \"4\"").unwrap_err().to_string();
        assert!(err.contains("1 thread"), "{err}");
        let err = resolve("knight_mg = \"99999\"").unwrap_err().to_string();
        assert!(err.contains("knight_mg"), "{err}");
        let spec = resolve("Hash = \"4\", knight_mg = \"300\", SyzygyPath = \"/tb\"").unwrap();
        let PlayerKind::Builtin(builtin) = &spec.players[0].kind else {
            panic!("in process")
        };
        assert_eq!(builtin.hash_mb, 4);
        assert_eq!(builtin.params.get("knight_mg"), Some(300));
        assert_eq!(spec.warnings.len(), 1, "{:?}", spec.warnings);
        assert!(spec.warnings[0].contains("SyzygyPath"));
    }

    /// Issue 9, item 2: what defines the games is compared, output and pace are not.
    #[test]
    fn differences_name_what_defines_the_games() {
        let stored = RunConfig::parse(
            &MINIMAL.replace(
                "builtin = \"staunton\"",
                "builtin = \"staunton\"\nparams = { knight_mg = 250 }",
            ),
            "t",
        )
        .unwrap();
        let mut same_games = stored.clone();
        same_games.concurrency = Some(8);
        same_games.pgnout = Some("elsewhere.pgn".into());
        same_games.store = Some("other.db".into());
        assert!(same_games.differences_from(&stored).is_empty());
        assert_eq!(same_games.run_name(), stored.run_name());

        let mut edited = stored.clone();
        edited.each.nodes = Some(5000);
        edited.engines[0].params.insert("knight_mg".into(), 300);
        edited.engines[1]
            .settings
            .options
            .insert("Hash".into(), "64".into());
        let lines = edited.differences_from(&stored);
        assert_eq!(
            lines,
            [
                "each.nodes: 1000 -> 5000",
                "engine[a].params.knight_mg: 250 -> 300",
                "engine[b].options.Hash: (not set) -> \"64\"",
            ],
            "{lines:?}"
        );
        assert_ne!(edited.run_name(), stored.run_name());
    }

    /// Issue 12: the live report is an output; adding or moving it neither renames the run nor
    /// refuses its resumption.
    #[test]
    fn the_report_folder_does_not_define_the_games() {
        let stored = RunConfig::parse(MINIMAL, "t").unwrap();
        let with_report = RunConfig::parse(&format!("report = \"live\"\n{MINIMAL}"), "t").unwrap();
        assert_eq!(with_report.report, Some(PathBuf::from("live")));
        assert!(with_report.differences_from(&stored).is_empty());
        assert_eq!(with_report.run_name(), stored.run_name());
    }
}
