//! The cutechess-cli / fastchess command-line grammar, read into a [`RunConfig`].
//!
//! `arbiter match -engine cmd=./dev name=dev -engine cmd=./base name=base -each tc=10+0.1 ...`
//! must mean exactly what the same run written in TOML means, so this module is a pure function
//! from the argument list to the run configuration, plus a warning for every flag, key or token
//! that is accepted but not acted on. `RunConfig::check` then judges the values, and
//! `RunConfig::resolve` the files, exactly as they do for a TOML file.
//!
//! The grammar: a flag is a token starting with `-` (or `--`) and a letter; the tokens up to the
//! next flag are its values, either `key=value` (split at the first `=`, so `option.Foo=a=b`
//! sets `Foo` to `a=b`) or positional (`-games 2`, `-pgnout out.pgn`). A value that itself
//! starts with `-` and a letter is read as a flag; engine arguments go in `arg=-v`. Errors name
//! the flag, the argument's position (1-based, in the slice given to [`parse`]) and what was
//! expected. The README's "cutechess-cli and fastchess flags" section lists every flag.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::adjudication::{DrawRule, ResignRule};
use crate::commlog::{Level, LogConfig, LEVELS};
use crate::config::{EngineConfig, RunConfig, SprtConfig};
use crate::openings::{BookChoice, BookFormat, BookOrder, BookSpec};
use crate::spec::SprtJudge;
use crate::tc::TimeControl;
use arbiter_stats::EloModel;

/// A command line read into a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub config: RunConfig,
    /// One line for each flag, key or token that was accepted but will not be acted on, naming
    /// it, its position and why.
    pub warnings: Vec<String>,
}

/// A command line that does not describe a run arbiter can play.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// A value before the first flag.
    #[error("argument {position}: {token:?} follows no flag (expected a flag such as -engine)")]
    Stray { position: usize, token: String },
    #[error("argument {position}: unknown flag {flag}{}", did_you_mean(.suggestion))]
    UnknownFlag {
        flag: String,
        position: usize,
        suggestion: Option<String>,
    },
    #[error("{flag} (argument {position}): unknown key {key:?} (expected {expected}){}", did_you_mean(.suggestion))]
    UnknownKey {
        flag: String,
        position: usize,
        key: String,
        expected: String,
        suggestion: Option<String>,
    },
    #[error("{flag} (argument {position}): {token:?}: expected {expected}")]
    Invalid {
        flag: String,
        position: usize,
        token: String,
        expected: String,
    },
    #[error("{flag} (argument {position}): missing {expected}")]
    Missing {
        flag: String,
        position: usize,
        expected: String,
    },
    /// Well formed, but not something arbiter can play.
    #[error("{flag} (argument {position}): {reason}")]
    Rejected {
        flag: String,
        position: usize,
        reason: String,
    },
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map_or_else(String::new, |s| format!("; did you mean {s}?"))
}

// Only the tests ask an error for its parts; users read the message.
#[cfg(test)]
impl GrammarError {
    /// The flag the error is about (none for a value before the first flag).
    pub fn flag(&self) -> Option<&str> {
        match self {
            GrammarError::Stray { .. } => None,
            GrammarError::UnknownFlag { flag, .. }
            | GrammarError::UnknownKey { flag, .. }
            | GrammarError::Invalid { flag, .. }
            | GrammarError::Missing { flag, .. }
            | GrammarError::Rejected { flag, .. } => Some(flag),
        }
    }

    /// 1-based position of the offending argument.
    pub fn position(&self) -> usize {
        match self {
            GrammarError::Stray { position, .. }
            | GrammarError::UnknownFlag { position, .. }
            | GrammarError::UnknownKey { position, .. }
            | GrammarError::Invalid { position, .. }
            | GrammarError::Missing { position, .. }
            | GrammarError::Rejected { position, .. } => *position,
        }
    }
}

/// Reads a cutechess-cli or fastchess command line (without the program name) into a run.
pub fn parse(args: &[String]) -> Result<Parsed, GrammarError> {
    let mut parser = Parser::default();
    for group in groups(args)? {
        parser.apply(&group)?;
    }
    parser.finish()
}

/// What a flag or key does: read, accepted with a warning, or refused.
enum Action<H> {
    Read(H),
    /// Accepted, changing nothing; the warning gives this reason.
    Ignored(&'static str),
    /// Well formed but not something arbiter plays; the error gives this reason.
    Rejected(&'static str),
}

#[cfg(test)]
impl<H> Action<H> {
    /// What the action does, without its reader.
    fn kind(&self) -> Action<()> {
        match *self {
            Action::Read(_) => Action::Read(()),
            Action::Ignored(reason) => Action::Ignored(reason),
            Action::Rejected(reason) => Action::Rejected(reason),
        }
    }
}

/// Reads one flag's values into the parser.
type FlagReader = for<'a> fn(&mut Parser<'a>, &Group<'a>) -> Result<(), GrammarError>;

/// A flag of the grammar. [`FLAGS`] is the grammar's one list: dispatch, the ignored-flag
/// warnings, "did you mean" and the README test all read it.
struct Flag {
    name: &'static str,
    action: Action<FlagReader>,
}

const fn read(name: &'static str, reader: FlagReader) -> Flag {
    Flag {
        name,
        action: Action::Read(reader),
    }
}

const fn ignored(name: &'static str, reason: &'static str) -> Flag {
    Flag {
        name,
        action: Action::Ignored(reason),
    }
}

const fn rejected(name: &'static str, reason: &'static str) -> Flag {
    Flag {
        name,
        action: Action::Rejected(reason),
    }
}

/// Every flag, in the order "did you mean" prefers them.
const FLAGS: &[Flag] = &[
    read("-engine", |p, g| p.engine(g)),
    read("-each", |p, g| p.each(g)),
    read("-games", |p, g| {
        let token = g.one("the number of games per round: 1 or 2")?;
        let games = g.number(token, token.text, "1 or 2")?;
        p.games = Some((token, games));
        Ok(())
    }),
    read("-rounds", |p, g| {
        let token = g.one("the number of rounds")?;
        let expected = "a number of rounds, at least 1";
        p.rounds = Some(g.positive(token, token.text, expected)?);
        Ok(())
    }),
    read("-repeat", |p, g| p.repeat(g)),
    read("-concurrency", |p, g| {
        let token = g.one("the number of games in flight")?;
        let expected = "a number of games in flight, at least 1";
        p.config.concurrency = Some(g.positive(token, token.text, expected)?);
        Ok(())
    }),
    read("-recover", |p, g| {
        g.bare()?;
        p.config.recover = Some(true);
        Ok(())
    }),
    read("-srand", |p, g| {
        let token = g.one("the random seed")?;
        let expected = "a whole number from 0 to 2^64-1";
        p.config.seed = Some(g.number(token, token.text, expected)?);
        Ok(())
    }),
    read("-event", |p, g| {
        p.config.event = Some(text_value(g, "the event name")?);
        Ok(())
    }),
    read("-site", |p, g| {
        p.config.site = Some(text_value(g, "the site name")?);
        Ok(())
    }),
    read("-openings", |p, g| p.openings(g)),
    read("-pgnout", |p, g| p.pgnout(g)),
    read("-jsonl", |p, g| {
        let token = g.one("the JSON lines file: -jsonl FILE or -jsonl file=FILE")?;
        let file = token.text.strip_prefix("file=").unwrap_or(token.text);
        p.config.jsonl = Some(PathBuf::from(file));
        Ok(())
    }),
    read("-epdout", |p, g| {
        let token = g.one("the EPD file: -epdout FILE or -epdout file=FILE")?;
        let file = token.text.strip_prefix("file=").unwrap_or(token.text);
        p.config.epdout = Some(PathBuf::from(file));
        Ok(())
    }),
    read("-store", |p, g| {
        // Taken literally: a postgres:// URL may contain '='.
        let token = g.one("the store: a SQLite file or a postgres:// URL")?;
        p.config.store = Some(token.text.to_owned());
        Ok(())
    }),
    read("-sprt", |p, g| p.sprt(g)),
    read("-draw", |p, g| p.draw(g)),
    read("-resign", |p, g| p.resign(g)),
    read("-maxmoves", |p, g| {
        let token = g.one("the number of full moves")?;
        let moves: u32 = g.number(token, token.text, "a number of full moves")?;
        // cutechess: "This limit is not in action if set to zero."
        p.config.adjudication.maxmoves = (moves > 0).then_some(moves);
        Ok(())
    }),
    read("-tournament", |p, g| {
        let token = g.one("the tournament type")?;
        let kind = match token.text {
            "round-robin" | "roundrobin" => "round-robin",
            "gauntlet" => "gauntlet",
            "knockout" | "pyramid" => {
                return Err(g.rejected(
                    token,
                    "knockout and pyramid tournaments are not supported: use round-robin or \
                     gauntlet",
                ))
            }
            _ => return Err(g.invalid(token, "round-robin or gauntlet")),
        };
        p.config.tournament = Some(kind.to_owned());
        Ok(())
    }),
    read("-seeds", |p, g| {
        let token = g.one("the number of gauntlet seeds")?;
        let expected = "a number of seeds, at least 1";
        p.config.seeds = Some(g.positive(token, token.text, expected)?);
        Ok(())
    }),
    read("-variant", |_, g| {
        let token = g.one("the variant")?;
        if !token.text.eq_ignore_ascii_case("standard") {
            return Err(g.rejected(token, "only standard chess is supported"));
        }
        Ok(())
    }),
    read("-output", |p, g| p.output(g)),
    read("-ratinginterval", |p, g| {
        let token = g.one("the games between rating reports (0: only at the end)")?;
        let expected = "a number of games, 0 or more";
        p.config.ratinginterval = Some(g.number(token, token.text, expected)?);
        Ok(())
    }),
    read("-scoreinterval", |p, g| {
        let token = g.one("the games between score lines (0: none)")?;
        let expected = "a number of games, 0 or more";
        p.config.scoreinterval = Some(g.number(token, token.text, expected)?);
        Ok(())
    }),
    read("-ping-ms", |p, g| {
        let token = g.one("the milliseconds an engine has to answer isready")?;
        let expected = "a number of milliseconds, at least 1";
        p.config.ping_ms = Some(g.positive(token, token.text, expected)?);
        Ok(())
    }),
    // arbiter's own: neither tool limits a move without a clock (cutechess waits for ever).
    read("-move-timeout", |p, g| {
        let token = g.one("the seconds a move without a clock may take (0: no limit)")?;
        let expected = "seconds a move without a clock may take, e.g. 60 or 0.5 (0: no limit)";
        let seconds: f64 = g.number(token, token.text, expected)?;
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(g.invalid(token, expected));
        }
        p.config.move_timeout = Some(seconds);
        Ok(())
    }),
    read("-report", |p, g| p.report(g)),
    read("-log", |p, g| p.log(g)),
    rejected(
        "-noswap",
        "arbiter always swaps colours within a pair: that is what makes a pair a fair comparison",
    ),
    rejected(
        "-config",
        "fastchess JSON configurations are not read: write the run as TOML (arbiter match \
         FILE.toml)",
    ),
    rejected(
        "-quick",
        "not supported: give -engine cmd=... twice, -openings file=... and -each tc=...",
    ),
    ignored(
        "-livepgnout",
        "the -pgnout file is kept current: each pair is appended as it is committed",
    ),
    ignored(
        "-outcomeinterval",
        "the progress line shows score, Elo and LLR after every pair",
    ),
    ignored(
        "-resultformat",
        "result lines always use cutechess's format",
    ),
    ignored("-wait", "a game starts as soon as a slot is free"),
    ignored(
        "-debug",
        "engine input and output are not echoed; -log file=FILE engine=true writes them to a file",
    ),
    ignored("-tb", TABLEBASES),
    ignored("-tbpieces", TABLEBASES),
    ignored("-tbignore50", TABLEBASES),
    ignored("-tbadjudicate", TABLEBASES),
    ignored("-bookmode", "Polyglot books are not supported"),
    ignored(
        "-reverse",
        "each pair plays its opening with both colour orders anyway",
    ),
    ignored(
        "-autosaveinterval",
        "every finished pair is committed to the store",
    ),
    ignored("-use-affinity", "engines are not pinned to CPUs"),
    ignored("-show-latency", "latency is recorded with every move"),
    ignored("-force-concurrency", "-concurrency is used as given"),
    ignored("-crc32", "no checksums are computed"),
    ignored("-testEnv", "there is no test-environment mode"),
];

const TABLEBASES: &str = "tablebase adjudication is not supported; games are played out";

/// Reads one `-engine`/`-each` key into the engine.
type KeyReader = for<'a> fn(&Group<'a>, &mut EngineConfig, &Pair<'a>) -> Result<(), GrammarError>;

/// A key of `-engine` and `-each`; `NAME` in a key stands for any suffix (`option.Hash`).
struct EngineKey {
    name: &'static str,
    action: Action<KeyReader>,
}

const fn key(name: &'static str, reader: KeyReader) -> EngineKey {
    EngineKey {
        name,
        action: Action::Read(reader),
    }
}

const fn ignored_key(name: &'static str, reason: &'static str) -> EngineKey {
    EngineKey {
        name,
        action: Action::Ignored(reason),
    }
}

/// Every engine key, in the order the unknown-key error lists them.
const ENGINE_KEYS: &[EngineKey] = &[
    key("cmd", |g, e, pair| match g.value_of(pair)? {
        "" => Err(g.invalid(pair.token, "cmd=COMMAND")),
        value => {
            e.cmd = Some(PathBuf::from(value));
            Ok(())
        }
    }),
    key("name", |g, e, pair| match g.value_of(pair)? {
        "" => Err(g.invalid(pair.token, "name=NAME")),
        value => {
            e.name = value.to_owned();
            Ok(())
        }
    }),
    key("dir", |g, e, pair| {
        e.dir = Some(PathBuf::from(g.value_of(pair)?));
        Ok(())
    }),
    key("arg", |g, e, pair| {
        e.args.push(g.value_of(pair)?.to_owned());
        Ok(())
    }),
    key("args", |g, e, pair| {
        let args = split_args(g.value_of(pair)?).ok_or_else(|| {
            g.invalid(pair.token, "args=\"ARG1 ARG2\" with balanced double quotes")
        })?;
        e.args.extend(args);
        Ok(())
    }),
    key("proto", |g, _, pair| {
        if g.value_of(pair)?.eq_ignore_ascii_case("uci") {
            return Ok(());
        }
        Err(g.invalid(
            pair.token,
            "proto=uci (arbiter speaks UCI only; xboard is not supported)",
        ))
    }),
    key("tc", |g, e, pair| {
        e.settings.tc = Some(time_control(g, pair.token, g.value_of(pair)?)?);
        Ok(())
    }),
    key("st", |g, e, pair| {
        let st = TimeControl::parse_movetime(g.value_of(pair)?)
            .map_err(|err| g.rejected(pair.token, err.to_string()))?;
        e.settings.st = Some(st.as_secs_f64());
        Ok(())
    }),
    key("nodes", |g, e, pair| {
        let value = g.value_of(pair)?;
        e.settings.nodes = Some(g.positive(pair.token, value, "nodes=N, N at least 1")?);
        Ok(())
    }),
    key("depth", depth),
    key("plies", depth),
    key("timemargin", |g, e, pair| {
        e.settings.timemargin = Some(g.pair_number(pair, "timemargin=MILLISECONDS")?);
        Ok(())
    }),
    key("option.NAME", |g, e, pair| {
        let name = &pair.key["option.".len()..];
        if name.is_empty() {
            return Err(g.invalid(pair.token, "option.NAME=VALUE with a non-empty NAME"));
        }
        let value = g.value_of(pair)?;
        e.settings.options.insert(name.to_owned(), value.to_owned());
        Ok(())
    }),
    key("restart", |g, e, pair| {
        e.settings.restart = match g.value_of(pair)? {
            "on" => Some(true),
            "off" => Some(false),
            // cutechess's default: the runner restarts an engine when it has to.
            "auto" => None,
            _ => return Err(g.invalid(pair.token, "restart=on, restart=off or restart=auto")),
        };
        Ok(())
    }),
    key("builtin", |g, e, pair| {
        e.builtin = Some(g.value_of(pair)?.to_owned());
        Ok(())
    }),
    key("params", |g, e, pair| {
        e.params_file = Some(PathBuf::from(g.value_of(pair)?));
        Ok(())
    }),
    key("param.NAME", |g, e, pair| {
        let name = &pair.key["param.".len()..];
        if name.is_empty() {
            return Err(g.invalid(pair.token, "param.NAME=INTEGER with a non-empty NAME"));
        }
        let value = g.pair_number(pair, "param.NAME=INTEGER")?;
        e.params.insert(name.to_owned(), value);
        Ok(())
    }),
    // 0 is staunton's minimal 64 KiB table, for thousands of games in flight.
    key("hash", |g, e, pair| {
        e.settings.hash = Some(g.pair_number(pair, "hash=MEGABYTES (0 for 64 KiB)")?);
        Ok(())
    }),
    ignored_key("initstr", "arbiter sends engines nothing but UCI commands"),
    ignored_key("stderr", "engine stderr is not redirected to a file"),
    ignored_key(
        "trust",
        "every result is decided by arbiter's rules, not engine claims",
    ),
    ignored_key(
        "whitepov",
        "UCI scores are always from the engine's point of view",
    ),
    ignored_key("ponder", "pondering is not supported"),
    ignored_key(
        "book",
        "engine-side Polyglot books are not supported; use -openings",
    ),
    ignored_key(
        "bookdepth",
        "engine-side Polyglot books are not supported; use -openings",
    ),
    EngineKey {
        name: "conf",
        action: Action::Rejected(
            "conf=NAME reads Cute Chess's engines.json, which arbiter does not: give cmd= and \
             name= (or write the run as TOML)",
        ),
    },
];

/// `depth=N` and cutechess's `plies=N`.
fn depth<'a>(
    group: &Group<'a>,
    engine: &mut EngineConfig,
    pair: &Pair<'a>,
) -> Result<(), GrammarError> {
    let expected = format!("{}=N plies, N at least 1", pair.key);
    let value = group.value_of(pair)?;
    engine.settings.depth = Some(group.positive(pair.token, value, &expected)?);
    Ok(())
}

impl EngineKey {
    /// Whether `key` is this key: its name, or for a `NAME` key its prefix and a dot.
    fn matches(&self, key: &str) -> bool {
        match self.name.strip_suffix("NAME") {
            Some(prefix) => key.starts_with(prefix),
            None => key == self.name,
        }
    }
}

fn engine_key_names() -> Vec<&'static str> {
    ENGINE_KEYS.iter().map(|k| k.name).collect()
}

const OPENINGS_KEYS: &[&str] = &[
    "file",
    "format",
    "order",
    "plies",
    "choice",
    "start",
    "policy",
    "odds",
    "giver",
    "alternate",
    "skip_invalid",
];
/// `file` and `notation`, then fastchess's switches for extra move comments (warned about).
const PGNOUT_KEYS: &[&str] = &[
    "file",
    "notation",
    "append",
    "nodes",
    "seldepth",
    "nps",
    "hashfull",
    "tbhits",
    "pv",
    "timeleft",
    "latency",
    "min",
    "match_line",
];
const SPRT_KEYS: &[&str] = &["elo0", "elo1", "alpha", "beta", "model", "judge"];
const DRAW_KEYS: &[&str] = &["movenumber", "movecount", "score"];
const RESIGN_KEYS: &[&str] = &["movecount", "score", "twosided"];
const OUTPUT_KEYS: &[&str] = &["format"];
const REPORT_KEYS: &[&str] = &["penta"];
const LOG_KEYS: &[&str] = &["file", "level", "append", "engine", "realtime", "compress"];

/// One argument and where it stood.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    position: usize,
    text: &'a str,
}

/// A flag and the values up to the next flag.
struct Group<'a> {
    flag: Token<'a>,
    values: Vec<Token<'a>>,
}

/// A `key=value` value (or a bare `key`, for cutechess's `whitepov`, `ponder`, `trust`).
struct Pair<'a> {
    token: Token<'a>,
    key: &'a str,
    value: Option<&'a str>,
}

fn is_flag(text: &str) -> bool {
    let body = text.strip_prefix("--").or_else(|| text.strip_prefix('-'));
    body.and_then(|b| b.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic())
}

fn groups(args: &[String]) -> Result<Vec<Group<'_>>, GrammarError> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (index, text) in args.iter().enumerate() {
        let token = Token {
            position: index + 1,
            text,
        };
        if is_flag(text) {
            groups.push(Group {
                flag: token,
                values: Vec::new(),
            });
        } else if let Some(group) = groups.last_mut() {
            group.values.push(token);
        } else {
            return Err(GrammarError::Stray {
                position: token.position,
                token: text.clone(),
            });
        }
    }
    Ok(groups)
}

impl<'a> Group<'a> {
    fn name(&self) -> &'a str {
        self.flag.text
    }

    fn invalid(&self, token: Token<'_>, expected: impl Into<String>) -> GrammarError {
        GrammarError::Invalid {
            flag: self.name().to_owned(),
            position: token.position,
            token: token.text.to_owned(),
            expected: expected.into(),
        }
    }

    fn missing(&self, expected: impl Into<String>) -> GrammarError {
        GrammarError::Missing {
            flag: self.name().to_owned(),
            position: self.flag.position,
            expected: expected.into(),
        }
    }

    fn rejected(&self, token: Token<'_>, reason: impl Into<String>) -> GrammarError {
        GrammarError::Rejected {
            flag: self.name().to_owned(),
            position: token.position,
            reason: reason.into(),
        }
    }

    fn unknown_key(&self, pair: &Pair<'_>, keys: &[&str]) -> GrammarError {
        GrammarError::UnknownKey {
            flag: self.name().to_owned(),
            position: pair.token.position,
            key: pair.key.to_owned(),
            expected: keys.join(", "),
            suggestion: nearest_key(pair.key, keys),
        }
    }

    /// The warning for a value accepted but not acted on.
    fn ignored(&self, token: Token<'_>, reason: &str) -> String {
        format!(
            "{} {} (argument {}): ignored: {reason}",
            self.name(),
            token.text,
            token.position
        )
    }

    /// A flag that takes no value.
    fn bare(&self) -> Result<(), GrammarError> {
        match self.values.first() {
            Some(&token) => Err(self.invalid(token, format!("nothing after {}", self.name()))),
            None => Ok(()),
        }
    }

    /// A flag that takes exactly one value.
    fn one(&self, expected: &str) -> Result<Token<'a>, GrammarError> {
        match self.values[..] {
            [] => Err(self.missing(expected)),
            [token] => Ok(token),
            [_, extra, ..] => Err(self.invalid(extra, format!("only one value: {expected}"))),
        }
    }

    fn pairs(&self) -> Vec<Pair<'a>> {
        self.values
            .iter()
            .map(|&token| {
                let (key, value) = match token.text.split_once('=') {
                    Some((key, value)) => (key, Some(value)),
                    None => (token.text, None),
                };
                Pair { token, key, value }
            })
            .collect()
    }

    fn value_of(&self, pair: &Pair<'a>) -> Result<&'a str, GrammarError> {
        pair.value
            .ok_or_else(|| self.invalid(pair.token, format!("{}=VALUE", pair.key)))
    }

    fn number<T: FromStr>(
        &self,
        token: Token<'_>,
        text: &str,
        expected: &str,
    ) -> Result<T, GrammarError> {
        text.parse().map_err(|_| self.invalid(token, expected))
    }

    /// A number greater than zero.
    fn positive<T: FromStr + PartialOrd + Default>(
        &self,
        token: Token<'_>,
        text: &str,
        expected: &str,
    ) -> Result<T, GrammarError> {
        let n: T = self.number(token, text, expected)?;
        if n > T::default() {
            Ok(n)
        } else {
            Err(self.invalid(token, expected))
        }
    }

    fn pair_number<T: FromStr>(&self, pair: &Pair<'a>, expected: &str) -> Result<T, GrammarError> {
        self.number(pair.token, self.value_of(pair)?, expected)
    }

    fn boolean(&self, pair: &Pair<'a>) -> Result<bool, GrammarError> {
        match self.value_of(pair)? {
            "true" | "on" => Ok(true),
            "false" | "off" => Ok(false),
            _ => Err(self.invalid(
                pair.token,
                format!("{}=true or {}=false", pair.key, pair.key),
            )),
        }
    }
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// The closest candidate within two edits (and closer than half its length, so that `-x` is
/// not taken for `-tb`).
fn nearest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, c)| d <= 2 && 2 * d < c.chars().count())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

fn nearest_flag(flag: &str) -> Option<String> {
    nearest(flag, FLAGS.iter().map(|f| f.name)).map(str::to_owned)
}

/// For `opton.Hash` suggests `option.Hash`: `NAME` keys are compared by their prefix.
fn nearest_key(key: &str, keys: &[&str]) -> Option<String> {
    let (head, rest) = key.split_once('.').unwrap_or((key, ""));
    let named = keys.iter().filter_map(|k| k.strip_suffix(".NAME"));
    if let Some(prefix) =
        nearest(head, named.clone()).or_else(|| named.clone().find(|&p| p == head))
    {
        let name = if rest.is_empty() { "NAME" } else { rest };
        return Some(format!("{prefix}.{name}"));
    }
    nearest(key, keys.iter().copied().filter(|k| !k.ends_with(".NAME"))).map(str::to_owned)
}

/// fastchess's `args="--a \"b c\""`: split at spaces outside double quotes.
fn split_args(text: &str) -> Option<Vec<String>> {
    let (mut args, mut current, mut quoted, mut started) =
        (Vec::new(), String::new(), false, false);
    for c in text.chars() {
        match c {
            '"' => (quoted, started) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if started {
                    args.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            c => {
                current.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return None;
    }
    if started {
        args.push(current);
    }
    Some(args)
}

/// A `tc=` value in the runner's spelling: cutechess's `0/60+2` (zero moves per period: the
/// whole game) is `60+2`. Checked now so the error points at the argument.
fn time_control(group: &Group<'_>, token: Token<'_>, text: &str) -> Result<String, GrammarError> {
    let text = text.strip_prefix("0/").unwrap_or(text);
    TimeControl::parse_tc(text).map_err(|e| group.rejected(token, e.to_string()))?;
    Ok(text.to_owned())
}

/// Applies one `-engine`/`-each` key to `engine`.
fn engine_key<'a>(
    group: &Group<'a>,
    engine: &mut EngineConfig,
    pair: &Pair<'a>,
    warnings: &mut Vec<String>,
) -> Result<(), GrammarError> {
    let Some(key) = ENGINE_KEYS.iter().find(|k| k.matches(pair.key)) else {
        return Err(group.unknown_key(pair, &engine_key_names()));
    };
    match key.action {
        Action::Read(read) => read(group, engine, pair),
        Action::Ignored(reason) => {
            warnings.push(group.ignored(pair.token, reason));
            Ok(())
        }
        Action::Rejected(reason) => {
            group.value_of(pair)?;
            Err(group.rejected(pair.token, reason))
        }
    }
}

/// Gives `engine` what `-each` said about the program and it did not.
fn inherit(engine: &mut EngineConfig, each: &EngineConfig) {
    if engine.cmd.is_none() && engine.builtin.is_none() {
        engine.cmd.clone_from(&each.cmd);
        engine.builtin.clone_from(&each.builtin);
    }
    if engine.dir.is_none() {
        engine.dir.clone_from(&each.dir);
    }
    if engine.params_file.is_none() {
        engine.params_file.clone_from(&each.params_file);
    }
    // -each's arguments and parameters come first; the engine's own override them.
    engine.args = each.args.iter().chain(&engine.args).cloned().collect();
    for (name, value) in &each.params {
        engine.params.entry(name.clone()).or_insert(*value);
    }
}

/// The engine's name when none was given: the program's file name, or the builtin's name.
fn default_name(engine: &EngineConfig) -> String {
    let from_cmd = engine
        .cmd
        .as_deref()
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned());
    from_cmd
        .or_else(|| engine.builtin.clone())
        .unwrap_or_default()
}

#[derive(Default)]
struct Parser<'a> {
    config: RunConfig,
    warnings: Vec<String>,
    /// Everything `-each` said; its settings become `config.each`, its program, folder and
    /// arguments are given to every engine that has none at the end.
    each: EngineConfig,
    /// Where each `-engine` stood, for errors found at the end.
    engine_flags: Vec<Token<'a>>,
    games: Option<(Token<'a>, u64)>,
    rounds: Option<u64>,
    repeat: bool,
    seen: Vec<&'a str>,
}

impl<'a> Parser<'a> {
    fn apply(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let name = group.name();
        // `-report` warns per setting: its folder and fastchess's keys may come as two flags.
        let repeatable = matches!(name, "-engine" | "-each" | "-report");
        if !repeatable && self.seen.contains(&name) {
            self.warnings.push(format!(
                "{name} (argument {}) given again: the last one counts",
                group.flag.position
            ));
        }
        self.seen.push(name);
        let Some(flag) = FLAGS.iter().find(|f| f.name == name) else {
            return Err(GrammarError::UnknownFlag {
                flag: name.to_owned(),
                position: group.flag.position,
                suggestion: nearest_flag(name),
            });
        };
        match flag.action {
            Action::Read(read) => read(self, group),
            Action::Ignored(reason) => {
                let mut text = name.to_owned();
                for value in &group.values {
                    text.push(' ');
                    text.push_str(value.text);
                }
                self.warnings.push(format!(
                    "{text} (argument {}): ignored: {reason}",
                    group.flag.position
                ));
                Ok(())
            }
            Action::Rejected(reason) => Err(group.rejected(group.flag, reason)),
        }
    }

    fn engine(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut engine = EngineConfig::default();
        for pair in group.pairs() {
            engine_key(group, &mut engine, &pair, &mut self.warnings)?;
        }
        self.config.engines.push(engine);
        self.engine_flags.push(group.flag);
        Ok(())
    }

    fn each(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        for pair in group.pairs() {
            if pair.key == "name" {
                return Err(group.rejected(
                    pair.token,
                    "each engine needs a name of its own: give name= with -engine",
                ));
            }
            engine_key(group, &mut self.each, &pair, &mut self.warnings)?;
        }
        Ok(())
    }

    fn repeat(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let expected = "nothing, or 2: arbiter plays each opening exactly twice, colours swapped";
        match group.values[..] {
            [] => {}
            [token] if token.text == "2" => {}
            [token] | [_, token, ..] => return Err(group.invalid(token, expected)),
        }
        self.repeat = true;
        Ok(())
    }

    fn openings(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut book = BookSpec::default();
        for pair in group.pairs() {
            let token = pair.token;
            match pair.key {
                "file" => book.file = Some(PathBuf::from(group.value_of(&pair)?)),
                "format" => {
                    book.format = Some(match group.value_of(&pair)? {
                        "epd" => BookFormat::Epd,
                        "pgn" => BookFormat::Pgn,
                        "polyglot" => BookFormat::Polyglot,
                        _ => {
                            return Err(
                                group.invalid(token, "format=epd, format=pgn or format=polyglot")
                            )
                        }
                    })
                }
                "order" => {
                    book.order = match group.value_of(&pair)? {
                        "sequential" => BookOrder::Sequential,
                        "random" => BookOrder::Random,
                        _ => return Err(group.invalid(token, "order=sequential or order=random")),
                    }
                }
                "plies" => book.plies = Some(group.pair_number(&pair, "plies=N")?),
                "choice" => {
                    book.choice = Some(match group.value_of(&pair)? {
                        "random" => BookChoice::Random,
                        "best" => BookChoice::Best,
                        _ => return Err(group.invalid(token, "choice=random or choice=best")),
                    })
                }
                "start" => {
                    let expected = "start=N, N at least 1";
                    book.start = Some(group.positive(token, group.value_of(&pair)?, expected)?);
                }
                "policy" => self.warnings.push(group.ignored(
                    token,
                    "each opening is played by one pair, once with each colour order",
                )),
                "odds" => book.odds = Some(group.value_of(&pair)?.to_owned()),
                "giver" => book.giver = Some(group.value_of(&pair)?.to_owned()),
                "alternate" => book.alternate = group.boolean(&pair)?,
                "skip_invalid" => book.skip_invalid = group.boolean(&pair)?,
                _ => return Err(group.unknown_key(&pair, OPENINGS_KEYS)),
            }
        }
        if book.file.is_none() && book.odds.is_none() {
            return Err(group.missing("file=FILE"));
        }
        self.config.openings = book;
        Ok(())
    }

    /// fastchess's `-report penta=BOOL` and arbiter's `-report DIR`, the live report's folder.
    /// A value with `=` is one of fastchess's keys and a bare value is the folder, so the two
    /// can share one flag or come as two; only a setting given twice is warned about.
    fn report(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        if group.values.is_empty() {
            return Err(group.missing("the report's folder (-report DIR) or penta=true|false"));
        }
        for pair in group.pairs() {
            let token = pair.token;
            let again = |what: &str| {
                format!(
                    "{} {} (argument {}): {what} given again: the last one counts",
                    group.name(),
                    token.text,
                    token.position
                )
            };
            match (pair.key, pair.value) {
                ("penta", _) => {
                    let penta = group.boolean(&pair)?;
                    if self.config.report_penta.is_some() {
                        self.warnings.push(again("penta"));
                    }
                    self.config.report_penta = Some(penta);
                }
                (_, Some(_)) => {
                    return Err(GrammarError::UnknownKey {
                        flag: group.name().to_owned(),
                        position: token.position,
                        key: pair.key.to_owned(),
                        expected: "penta=true|false, or a folder without `=` for the live report"
                            .to_owned(),
                        suggestion: nearest_key(pair.key, REPORT_KEYS),
                    })
                }
                (folder, None) => {
                    if self.config.report.is_some() {
                        self.warnings.push(again("the report folder"));
                    }
                    self.config.report = Some(PathBuf::from(folder));
                }
            }
        }
        Ok(())
    }

    /// cutechess's `-pgnout FILE [min] [fi]` and fastchess's `-pgnout file=FILE notation=...`.
    fn pgnout(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut file = None;
        for pair in group.pairs() {
            let token = pair.token;
            match (pair.key, pair.value) {
                ("file", Some(value)) => file = Some(value),
                ("notation", Some("san")) => {}
                ("notation", Some(_)) => self
                    .warnings
                    .push(group.ignored(token, "moves are always written in SAN")),
                ("min", None) => self
                    .warnings
                    .push(group.ignored(token, "games are written in full, with move comments")),
                ("fi", None) => self
                    .warnings
                    .push(group.ignored(token, "only finished games are ever written")),
                (key, Some(_)) if PGNOUT_KEYS.contains(&key) => self
                    .warnings
                    .push(group.ignored(token, "move comments are arbiter's {+0.35/12 0.250s}")),
                (_, Some(_)) => return Err(group.unknown_key(&pair, PGNOUT_KEYS)),
                (_, None) if file.is_none() => file = Some(token.text),
                (_, None) => self
                    .warnings
                    .push(group.ignored(token, "an extra value after the file")),
            }
        }
        match file {
            Some(file) if !file.is_empty() => self.config.pgnout = Some(PathBuf::from(file)),
            _ => return Err(group.missing("the PGN file: -pgnout FILE or -pgnout file=FILE")),
        }
        Ok(())
    }

    fn sprt(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let (mut elo0, mut elo1) = (None, None);
        let mut sprt = SprtConfig {
            elo0: 0.0,
            elo1: 0.0,
            alpha: 0.05,
            beta: 0.05,
            // cutechess has no model key; normalized is fastchess's and arbiter's default.
            model: EloModel::Normalized.to_string(),
            judge: None,
        };
        for pair in group.pairs() {
            let expected = |key: &str| format!("{key}=NUMBER");
            match pair.key {
                "elo0" => elo0 = Some(group.pair_number(&pair, &expected("elo0"))?),
                "elo1" => elo1 = Some(group.pair_number(&pair, &expected("elo1"))?),
                "alpha" => sprt.alpha = group.pair_number(&pair, &expected("alpha"))?,
                "beta" => sprt.beta = group.pair_number(&pair, &expected("beta"))?,
                "model" => {
                    let value = group.value_of(&pair)?.to_ascii_lowercase();
                    // fastchess spells BayesElo "bayesian".
                    let value = if value == "bayesian" {
                        "bayeselo".to_owned()
                    } else {
                        value
                    };
                    let model: EloModel = value.parse().map_err(|_| {
                        group.invalid(
                            pair.token,
                            "model=normalized, logistic or bayeselo (fastchess: bayesian)",
                        )
                    })?;
                    sprt.model = model.to_string();
                }
                // arbiter's own: which finished pairs the SPRT is judged on.
                "judge" => {
                    let value = group.value_of(&pair)?.to_ascii_lowercase();
                    sprt.judge = Some(match value.as_str() {
                        "prefix" => SprtJudge::Prefix,
                        "all" => SprtJudge::All,
                        _ => return Err(group.invalid(pair.token, "judge=prefix or judge=all")),
                    });
                }
                _ => return Err(group.unknown_key(&pair, SPRT_KEYS)),
            }
        }
        sprt.elo0 = elo0.ok_or_else(|| group.missing("elo0=NUMBER"))?;
        sprt.elo1 = elo1.ok_or_else(|| group.missing("elo1=NUMBER"))?;
        self.config.sprt = Some(sprt);
        Ok(())
    }

    /// Keys left out take fastchess's defaults: movenumber 0, movecount 1, score 0.
    fn draw(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut rule = DrawRule {
            movenumber: 0,
            movecount: 1,
            score: 0,
        };
        for pair in group.pairs() {
            match pair.key {
                "movenumber" => rule.movenumber = group.pair_number(&pair, "movenumber=N")?,
                "movecount" => rule.movecount = group.pair_number(&pair, "movecount=N")?,
                "score" => rule.score = centipawns(group, &pair)?,
                _ => return Err(group.unknown_key(&pair, DRAW_KEYS)),
            }
        }
        self.config.adjudication.draw = Some(rule);
        Ok(())
    }

    /// Keys left out take fastchess's defaults: movecount 1, score 0, twosided false.
    fn resign(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut rule = ResignRule {
            movecount: 1,
            score: 0,
            twosided: false,
        };
        for pair in group.pairs() {
            match pair.key {
                "movecount" => rule.movecount = group.pair_number(&pair, "movecount=N")?,
                "score" => rule.score = centipawns(group, &pair)?,
                "twosided" => rule.twosided = group.boolean(&pair)?,
                _ => return Err(group.unknown_key(&pair, RESIGN_KEYS)),
            }
        }
        self.config.adjudication.resign = Some(rule);
        Ok(())
    }

    /// fastchess's `-log file=F level=L append=B engine=B realtime=B compress=B`.
    fn log(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        let mut log = LogConfig::default();
        for pair in group.pairs() {
            match pair.key {
                "file" => match group.value_of(&pair)? {
                    "" => return Err(group.invalid(pair.token, "file=FILE")),
                    file => log.file = PathBuf::from(file),
                },
                "level" => {
                    let level = group.value_of(&pair)?;
                    if Level::parse(level).is_none() {
                        return Err(group.invalid(pair.token, format!("level={LEVELS}")));
                    }
                    log.level = Some(level.to_owned());
                }
                "append" => log.append = Some(group.boolean(&pair)?),
                "engine" => log.engine = Some(group.boolean(&pair)?),
                "realtime" => log.realtime = Some(group.boolean(&pair)?),
                "compress" => {
                    if group.boolean(&pair)? {
                        return Err(group.rejected(
                            pair.token,
                            "the log is written as plain text only; compress it after the run \
                             (gzip FILE)",
                        ));
                    }
                    log.compress = Some(false);
                }
                _ => return Err(group.unknown_key(&pair, LOG_KEYS)),
            }
        }
        if log.file.as_os_str().is_empty() {
            return Err(group.missing("file=FILE, the log's file"));
        }
        self.config.log = Some(log);
        Ok(())
    }

    fn output(&mut self, group: &Group<'a>) -> Result<(), GrammarError> {
        for pair in group.pairs() {
            match (pair.key, pair.value) {
                ("format", Some(format @ ("cutechess" | "fastchess"))) => {
                    self.config.output = Some(format.to_owned())
                }
                ("format", _) => {
                    return Err(group.invalid(pair.token, "format=cutechess or format=fastchess"))
                }
                _ => return Err(group.unknown_key(&pair, OUTPUT_KEYS)),
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Parsed, GrammarError> {
        let each = std::mem::take(&mut self.each);
        let mut derived = vec![false; self.config.engines.len()];
        for (index, (engine, flag)) in self
            .config
            .engines
            .iter_mut()
            .zip(&self.engine_flags)
            .enumerate()
        {
            inherit(engine, &each);
            if engine.cmd.is_none() && engine.builtin.is_none() {
                return Err(GrammarError::Missing {
                    flag: "-engine".into(),
                    position: flag.position,
                    expected: "cmd=COMMAND (the engine's program), or builtin=staunton".into(),
                });
            }
            if engine.name.is_empty() {
                engine.name = default_name(engine);
                derived[index] = true;
            }
        }
        // Engines named after the same program: the second becomes `name-2`, the third
        // `name-3`, ... (a name given with name= is kept as written).
        for index in 0..self.config.engines.len() {
            if !derived[index] {
                continue;
            }
            let engines = &self.config.engines;
            let name = &engines[index].name;
            let taken = |candidate: &str| {
                engines.iter().enumerate().any(|(other, e)| {
                    other != index && e.name == candidate && (other < index || !derived[other])
                })
            };
            if taken(name) {
                let base = name.clone();
                let renamed = (2..)
                    .map(|n| format!("{base}-{n}"))
                    .find(|candidate| !taken(candidate))
                    .expect("some suffix is free");
                self.config.engines[index].name = renamed;
            }
        }
        self.config.each = each.settings;
        // In cutechess and fastchess an engine that crashes or stalls ends the match unless
        // -recover is given; the flags mean that here too (a TOML run recovers by default).
        self.config.recover.get_or_insert(false);
        self.schedule()?;
        Ok(Parsed {
            config: self.config,
            warnings: self.warnings,
        })
    }

    /// Maps `-games`, `-rounds` and `-repeat` onto pairs. fastchess's `-rounds R` (2 games a
    /// round, one opening) and cutechess's `-games 2 -rounds R -repeat` are R pairs;
    /// cutechess's `-games 1 -rounds R -repeat` (consecutive games share an opening, colours
    /// alternate) is R/2 pairs, rounded up.
    fn schedule(&mut self) -> Result<(), GrammarError> {
        let rounds = self.rounds;
        let Some((token, games)) = self.games else {
            self.config.rounds = rounds;
            return Ok(());
        };
        let rejected = |reason: String| GrammarError::Rejected {
            flag: "-games".into(),
            position: token.position,
            reason,
        };
        match games {
            2 => self.config.rounds = rounds,
            1 if self.repeat => {
                let pairs = rounds.map(|r| r.div_ceil(2));
                if let (Some(r), Some(p)) = (rounds, pairs) {
                    if r % 2 == 1 {
                        self.warnings.push(format!(
                            "-games 1 -rounds {r} -repeat is {r} games; arbiter plays whole \
                             colour-swapped pairs: {p} pairs ({} games)",
                            p.saturating_mul(2)
                        ));
                    }
                }
                self.config.rounds = pairs;
            }
            1 => {
                // cutechess's unpaired games: every game its own opening, colours alternating
                // by round, counted with trinomial statistics.
                self.config.rounds = rounds;
                self.config.games = Some(1);
                return Ok(());
            }
            n => {
                // cutechess plays one round when -rounds is not given.
                let hint = match n.checked_mul(rounds.unwrap_or(1)) {
                    Some(total) if total % 2 == 0 && total > 0 => {
                        format!("; for {total} games write -games 2 -rounds {}", total / 2)
                    }
                    // An odd number of games is no whole number of pairs: the nearest run in
                    // pairs, and the same number of single games.
                    Some(total) if total > 0 => format!(
                        "; for {total} games write -games 1 -rounds {total} (single games), or \
                         -games 2 -rounds {} for {} games in colour-swapped pairs",
                        total.div_ceil(2),
                        total + 1
                    ),
                    _ => String::new(),
                };
                return Err(rejected(format!(
                    "{n} games per round: arbiter plays colour-swapped pairs (-games 2) or single \
                     games (-games 1), so -games must be 2 or 1{hint}"
                )));
            }
        }
        self.config.games = Some(2);
        Ok(())
    }
}

/// A score threshold in centipawns: zero or more.
fn centipawns(group: &Group<'_>, pair: &Pair<'_>) -> Result<i32, GrammarError> {
    let expected = "score=CENTIPAWNS, 0 or more";
    let score: i32 = group.pair_number(pair, expected)?;
    if score < 0 {
        return Err(group.invalid(pair.token, expected));
    }
    Ok(score)
}

/// `-event` and `-site`: one shell-quoted value, or several words joined by spaces.
fn text_value(group: &Group<'_>, expected: &str) -> Result<String, GrammarError> {
    if group.values.is_empty() {
        return Err(group.missing(expected));
    }
    let words: Vec<&str> = group.values.iter().map(|t| t.text).collect();
    Ok(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineSettings;
    use crate::player::PlayerKind;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Splits like a shell without quotes; tests that need spaces inside a token build the
    /// vector themselves.
    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    fn ok(line: &str) -> Parsed {
        parse(&args(line)).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> GrammarError {
        match parse(&args(line)) {
            Ok(parsed) => panic!("{line}: parsed as {parsed:?}"),
            Err(e) => e,
        }
    }

    const TWO: &str = "-engine cmd=./a name=a -engine cmd=./b name=b";

    const ISSUE_EXAMPLE: &str = "-engine cmd=./engine-dev name=dev -engine cmd=./engine-base \
        name=base -each tc=10+0.1 option.Hash=16 -openings file=openings/x.epd format=epd \
        order=random -games 2 -rounds 500 -repeat -concurrency 2 -pgnout file=out.pgn -sprt \
        elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized -recover -draw movenumber=40 \
        movecount=8 score=10 -resign movecount=3 score=600 -maxmoves 200";

    fn issue_example_config() -> RunConfig {
        let engine = |cmd: &str, name: &str| EngineConfig {
            name: name.into(),
            cmd: Some(cmd.into()),
            ..EngineConfig::default()
        };
        RunConfig {
            rounds: Some(500),
            games: Some(2),
            concurrency: Some(2),
            pgnout: Some("out.pgn".into()),
            recover: Some(true),
            each: EngineSettings {
                tc: Some("10+0.1".into()),
                options: BTreeMap::from([("Hash".into(), "16".into())]),
                ..EngineSettings::default()
            },
            engines: vec![
                engine("./engine-dev", "dev"),
                engine("./engine-base", "base"),
            ],
            openings: BookSpec {
                file: Some("openings/x.epd".into()),
                format: Some(BookFormat::Epd),
                order: BookOrder::Random,
                ..BookSpec::default()
            },
            sprt: Some(SprtConfig {
                elo0: 0.0,
                elo1: 5.0,
                alpha: 0.05,
                beta: 0.05,
                model: "normalized".into(),
                judge: None,
            }),
            adjudication: crate::config::AdjudicationConfig {
                draw: Some(DrawRule {
                    movenumber: 40,
                    movecount: 8,
                    score: 10,
                }),
                resign: Some(ResignRule {
                    movecount: 3,
                    score: 600,
                    twosided: false,
                }),
                maxmoves: Some(200),
            },
            ..RunConfig::default()
        }
    }

    #[test]
    fn issue_example_gives_exactly_the_run() {
        let parsed = ok(ISSUE_EXAMPLE);
        assert_eq!(parsed.config, issue_example_config());
        assert_eq!(parsed.warnings, Vec::<String>::new());
    }

    #[test]
    fn issue_example_resolves_into_a_match() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("openings")).unwrap();
        std::fs::write(
            dir.path().join("openings/x.epd"),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
             rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n",
        )
        .unwrap();
        let config = ok(ISSUE_EXAMPLE).config;
        let spec = config.resolve(dir.path(), 1).unwrap();
        assert_eq!(spec.pairs, 500);
        assert_eq!(spec.concurrency, 2);
        assert_eq!(spec.book.len(), 2);
        assert!(spec.recover && spec.sprt.is_some());
        assert_eq!(spec.adjudication.maxmoves, Some(200));
        assert_eq!(spec.time_controls[0], spec.time_controls[1]);
        assert_eq!(spec.time_controls[0].to_string(), "tc=10+0.1");
        assert_eq!(
            spec.players
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["dev", "base"]
        );
        match &spec.players[0].kind {
            PlayerKind::Uci(process) => {
                assert_eq!(process.cmd, dir.path().join("./engine-dev"));
                assert_eq!(process.options, vec![("Hash".to_owned(), "16".to_owned())]);
            }
            PlayerKind::Builtin(_) => panic!("a UCI engine was asked for"),
        }
    }

    #[test]
    fn builtin_staunton_resolves_without_files() {
        let config = ok("-engine builtin=staunton name=a param.knight_mg=300 \
                         -engine builtin=staunton -each nodes=1000 hash=2 -rounds 3")
        .config;
        assert_eq!(
            config.engines[1].name, "staunton",
            "named after the builtin"
        );
        let spec = config.resolve(Path::new("."), 7).unwrap();
        assert_eq!(spec.pairs, 3);
        assert!(matches!(&spec.players[0].kind, PlayerKind::Builtin(b) if b.hash_mb == 2));
    }

    #[test]
    fn pgnout_positional_and_key_value_forms() {
        let pgnout = |line: &str| {
            let parsed = ok(&format!("{TWO} {line}"));
            (parsed.config.pgnout.unwrap(), parsed.warnings.len())
        };
        assert_eq!(pgnout("-pgnout out.pgn"), ("out.pgn".into(), 0));
        assert_eq!(pgnout("-pgnout out.pgn min fi"), ("out.pgn".into(), 2));
        assert_eq!(pgnout("-pgnout file=out.pgn"), ("out.pgn".into(), 0));
        assert_eq!(
            pgnout("-pgnout file=out.pgn notation=san"),
            ("out.pgn".into(), 0)
        );
        assert_eq!(
            pgnout("-pgnout notation=uci nodes=true file=games/sprt.pgn"),
            ("games/sprt.pgn".into(), 2)
        );
        let warnings = ok(&format!("{TWO} -pgnout out.pgn min")).warnings;
        assert!(
            warnings[0].starts_with("-pgnout min (argument 9): ignored"),
            "{warnings:?}"
        );
    }

    #[test]
    fn option_names_may_hold_spaces_and_values_equals_signs() {
        let mut line = args(TWO);
        line.extend(
            ["-each", "option.Move Overhead=100", "option.SyzygyPath=a=b"].map(String::from),
        );
        let parsed = parse(&line).unwrap();
        let options = &parsed.config.each.options;
        assert_eq!(options["Move Overhead"], "100");
        assert_eq!(options["SyzygyPath"], "a=b");
        let empty = ok(&format!("{TWO} -each option.UCI_Opponent=")).config;
        assert_eq!(empty.each.options["UCI_Opponent"], "");
    }

    #[test]
    fn each_gives_program_folder_and_arguments_to_every_engine() {
        // fastchess's README example: the command only under -each.
        let parsed = ok(
            "-engine dir=G:/sf/ name=b1 -engine dir=H:/sf/ name=b2 arg=-q \
                         -each cmd=stockfish.exe proto=uci tc=1+0.01 arg=--uci restart=on",
        );
        let [b1, b2] = &parsed.config.engines[..] else {
            panic!("two engines")
        };
        assert_eq!(b1.cmd, Some("stockfish.exe".into()));
        assert_eq!(b2.cmd, Some("stockfish.exe".into()));
        assert_eq!(b1.dir, Some("G:/sf/".into()));
        assert_eq!(b1.args, ["--uci"]);
        assert_eq!(b2.args, ["--uci", "-q"]);
        assert_eq!(parsed.config.each.restart, Some(true));
        assert_eq!(parsed.config.each.tc.as_deref(), Some("1+0.01"));
    }

    #[test]
    fn fastchess_args_are_split_outside_quotes() {
        let line = vec![
            "-engine".into(),
            "cmd=e".into(),
            "args=--threads 2 \"--book=a b.bin\"".into(),
        ];
        let parsed = parse(&line).unwrap();
        assert_eq!(
            parsed.config.engines[0].args,
            ["--threads", "2", "--book=a b.bin"]
        );
        let line = vec!["-engine".into(), "args=\"x".into()];
        assert!(matches!(
            parse(&line),
            Err(GrammarError::Invalid { position: 2, .. })
        ));
    }

    #[test]
    fn engine_limits_and_spellings() {
        let config = ok(
            "-engine cmd=a tc=40/60+0.6 timemargin=100 depth=12 -engine cmd=b \
                         st=0.5 nodes=5000 plies=7 -each tc=0/60+2",
        )
        .config;
        let [a, b] = &config.engines[..] else {
            panic!("two engines")
        };
        assert_eq!(
            (a.name.as_str(), b.name.as_str()),
            ("a", "b"),
            "named after the program"
        );
        assert_eq!(a.settings.tc.as_deref(), Some("40/60+0.6"));
        assert_eq!(
            (a.settings.timemargin, a.settings.depth),
            (Some(100), Some(12))
        );
        assert_eq!(
            (b.settings.st, b.settings.nodes, b.settings.depth),
            (Some(0.5), Some(5000), Some(7))
        );
        assert_eq!(
            config.each.tc.as_deref(),
            Some("60+2"),
            "cutechess's 0/ means the whole game"
        );
        assert_eq!(
            ok("-engine cmd=x tc=inf nodes=1").config.engines[0]
                .settings
                .tc
                .as_deref(),
            Some("inf")
        );
    }

    #[test]
    fn engines_named_after_the_same_program_get_different_names() {
        let config = ok("-engine cmd=/usr/games/stockfish -engine cmd=./stockfish").config;
        let names: Vec<&str> = config.engines.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["stockfish", "stockfish-2"]);
        let config = ok("-engine cmd=/usr/games/stockfish -engine cmd=sf name=stockfish").config;
        assert_eq!(
            config.engines[0].name, "stockfish-2",
            "the given name is kept"
        );
        let config = ok(
            "-engine cmd=sf -engine cmd=./sf -engine cmd=/x/sf name=sf-2 \
                         -engine cmd=sf",
        )
        .config;
        let names: Vec<&str> = config.engines.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["sf", "sf-3", "sf-2", "sf-4"]);
    }

    /// cutechess's tournament flags: any number of engines, the kind and the gauntlet's seeds,
    /// and the pairings they make.
    #[test]
    fn tournaments_take_any_number_of_engines() {
        let five = "-engine cmd=a -engine cmd=b -engine cmd=c -engine cmd=d -engine cmd=e";
        let config = ok(&format!("{five} -tournament gauntlet -seeds 2")).config;
        assert_eq!(config.engines.len(), 5);
        assert_eq!(config.tournament.as_deref(), Some("gauntlet"));
        assert_eq!(config.seeds, Some(2));
        assert_eq!(
            config.pairings().unwrap(),
            [[0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4]]
        );
        let config = ok(&format!("{five} -tournament round-robin")).config;
        assert_eq!(config.pairings().unwrap().len(), 10);
        // Without -tournament, more than two engines are a round-robin, as in cutechess.
        let config = ok(five).config;
        assert_eq!(config.pairings().unwrap().len(), 10);
        let config = ok("-engine cmd=a -engine cmd=b").config;
        assert_eq!(config.pairings().unwrap(), [[0, 1]]);
    }

    /// (arguments after two engines, rounds, games, warnings)
    const SCHEDULES: &[(&str, Option<u64>, Option<u64>, usize)] = &[
        ("", None, None, 0),
        ("-rounds 10", Some(10), None, 0),
        ("-rounds 10 -repeat", Some(10), None, 0),
        ("-games 2 -rounds 10 -repeat", Some(10), Some(2), 0),
        ("-repeat 2 -rounds 10 -games 2", Some(10), Some(2), 0),
        ("-games 2 -rounds 10", Some(10), Some(2), 0),
        ("-games 1 -rounds 10 -repeat", Some(5), Some(2), 0),
        ("-games 1 -rounds 7 -repeat", Some(4), Some(2), 1),
        ("-repeat -games 1", None, Some(2), 0),
        ("-games 1 -rounds 7", Some(7), Some(1), 0),
    ];

    #[test]
    fn games_rounds_and_repeat_map_onto_pairs() {
        for &(line, rounds, games, warnings) in SCHEDULES {
            let parsed = ok(&format!("{TWO} {line}"));
            assert_eq!(
                (
                    parsed.config.rounds,
                    parsed.config.games,
                    parsed.warnings.len()
                ),
                (rounds, games, warnings),
                "{line}: {:?}",
                parsed.warnings
            );
        }
        let error = err(&format!("{TWO} -games 100 -rounds 1 -repeat")).to_string();
        assert!(error.contains("-games 2 -rounds 50"), "{error}");
        // Issue 18, item 15: an odd count of games still gets the equivalent command, as the
        // README promises.
        let error = err(&format!("{TWO} -games 3")).to_string();
        assert!(
            error.contains(
                "for 3 games write -games 1 -rounds 3 (single games), or -games 2 -rounds 2 for \
                 4 games in colour-swapped pairs"
            ),
            "{error}"
        );
        let error = err(&format!("{TWO} -games 3 -rounds 5")).to_string();
        assert!(error.contains("-games 1 -rounds 15 "), "{error}");
        assert!(error.contains("-games 2 -rounds 8 for 16 games"), "{error}");
        let error = err(&format!("{TWO} -games 4")).to_string();
        assert!(
            error.contains("for 4 games write -games 2 -rounds 2"),
            "{error}"
        );
    }

    /// (arguments, flag named, position, text the message must contain)
    #[rustfmt::skip]
    const ERRORS: &[(&str, &str, usize, &str)] = &[
        ("-engine cmdd=x", "-engine", 2, "unknown key \"cmdd\" (expected cmd, name, dir"),
        ("-engine cmdd=x", "-engine", 2, "did you mean cmd?"),
        ("-engine cmd=x opton.Hash=1", "-engine", 3, "did you mean option.Hash?"),
        ("-engine cmd=x option.=1", "-engine", 3, "non-empty NAME"),
        ("-engine cmd=x param.=1", "-engine", 3, "non-empty NAME"),
        ("-engine cmd=x param.a=b", "-engine", 3, "param.NAME=INTEGER"),
        ("-engine cmd=", "-engine", 2, "cmd=COMMAND"),
        ("-engine cmd=x name=", "-engine", 3, "name=NAME"),
        ("-engine cmd", "-engine", 2, "cmd=VALUE"),
        ("-engine cmd=x proto=xboard", "-engine", 3, "proto=uci"),
        ("-engine cmd=x tc=40/", "-engine", 3, "time control \"40/\""),
        ("-engine cmd=x st=0", "-engine", 3, "st=SECONDS"),
        ("-engine cmd=x st=inf", "-engine", 3, "st=SECONDS"),
        ("-engine cmd=x nodes=-1", "-engine", 3, "nodes=N"),
        ("-engine cmd=x depth=0", "-engine", 3, "depth=N"),
        ("-engine cmd=x timemargin=soon", "-engine", 3, "timemargin=MILLISECONDS"),
        ("-engine cmd=x restart=maybe", "-engine", 3, "restart=on"),
        ("-engine cmd=x hash=-1", "-engine", 3, "hash=MEGABYTES"),
        ("-engine conf=sf", "-engine", 2, "engines.json"),
        ("-engine name=a -engine cmd=b", "-engine", 1, "missing cmd=COMMAND"),
        ("-tournament knockout", "-tournament", 2, "knockout and pyramid"),
        ("-tournament swiss", "-tournament", 2, "round-robin or gauntlet"),
        ("-seeds 0", "-seeds", 2, "at least 1"),
        ("-each name=x", "-each", 2, "name of its own"),
        ("-each tc=x", "-each", 2, "time control \"x\""),
        ("-games", "-games", 1, "missing the number of games"),
        ("-games two", "-games", 2, "expected 1 or 2"),
        ("-engine cmd=a -engine cmd=b -games 3", "-games", 6, "-games must be 2 or 1"),
        ("-rounds 0", "-rounds", 2, "at least 1"),
        ("-rounds 1 2", "-rounds", 3, "only one value"),
        ("-repeat 3", "-repeat", 2, "exactly twice"),
        ("-concurrency 0", "-concurrency", 2, "at least 1"),
        ("-recover yes", "-recover", 2, "nothing after -recover"),
        ("-srand x", "-srand", 2, "whole number"),
        ("-event", "-event", 1, "missing the event name"),
        ("-site", "-site", 1, "missing the site name"),
        ("-openings format=epd", "-openings", 1, "missing file=FILE"),
        ("-openings file=a format=xml", "-openings", 3, "format=epd, format=pgn or format=polyglot"),
        ("-openings file=a order=shuffled", "-openings", 3, "order=sequential"),
        ("-openings file=a plies=x", "-openings", 3, "plies=N"),
        ("-openings file=a start=0", "-openings", 3, "start=N"),
        ("-openings file=a skip_invalid=1", "-openings", 3, "skip_invalid=true"),
        ("-openings file=a fromat=epd", "-openings", 3, "did you mean format?"),
        ("-pgnout", "-pgnout", 1, "missing the PGN file"),
        ("-pgnout file=", "-pgnout", 1, "missing the PGN file"),
        ("-pgnout file=a.pgn notaton=san", "-pgnout", 3, "did you mean notation?"),
        ("-jsonl", "-jsonl", 1, "missing the JSON lines file"),
        ("-store a b", "-store", 3, "only one value"),
        ("-sprt elo0=0", "-sprt", 1, "missing elo1=NUMBER"),
        ("-sprt elo1=5", "-sprt", 1, "missing elo0=NUMBER"),
        ("-sprt elo0=0 elo1=x", "-sprt", 3, "elo1=NUMBER"),
        ("-sprt elo0=0 elo1=5 model=gaussian", "-sprt", 4, "model=normalized"),
        ("-sprt elo0=0 elo1=5 alpa=0.05", "-sprt", 4, "did you mean alpha?"),
        ("-draw movenumber=x", "-draw", 2, "movenumber=N"),
        ("-draw score=-5", "-draw", 2, "0 or more"),
        ("-draw moves=3", "-draw", 2, "expected movenumber, movecount, score"),
        ("-resign twosided=maybe", "-resign", 2, "twosided=true"),
        ("-resign movecount=-1", "-resign", 2, "movecount=N"),
        ("-maxmoves many", "-maxmoves", 2, "full moves"),
        ("-tournament knockout", "-tournament", 2, "round-robin or gauntlet"),
        ("-variant fischerandom", "-variant", 2, "only standard chess"),
        ("-output format=xml", "-output", 2, "format=cutechess"),
        ("-output style=x", "-output", 2, "unknown key \"style\""),
        ("-noswap", "-noswap", 1, "always swaps colours"),
        ("-config file=c.json", "-config", 1, "TOML"),
        ("-quick cmd=a cmd=b", "-quick", 1, "not supported"),
        ("-concurency 2", "-concurency", 1, "did you mean -concurrency?"),
        ("-enigne cmd=x", "-enigne", 1, "did you mean -engine?"),
        ("--rounds 2", "--rounds", 1, "did you mean -rounds?"),
        ("-zzzzzz", "-zzzzzz", 1, "unknown flag -zzzzzz"),
    ];

    #[test]
    fn every_error_names_the_flag_and_position() {
        for &(line, flag, position, text) in ERRORS {
            let error = err(line);
            let message = error.to_string();
            assert_eq!(error.flag(), Some(flag), "{line}: {message}");
            assert_eq!(error.position(), position, "{line}: {message}");
            assert!(message.contains(flag), "{line}: {message}");
            assert!(
                message.contains(&format!("argument {position}")),
                "{line}: {message}"
            );
            assert!(message.contains(text), "{line}: {message:?} lacks {text:?}");
        }
    }

    #[test]
    fn a_value_before_any_flag_is_an_error() {
        let error = err("stockfish -games 2");
        assert_eq!((error.flag(), error.position()), (None, 1));
        assert!(error.to_string().contains("\"stockfish\""), "{error}");
        assert!(
            ok(&format!("{TWO} -draw score=-0")).warnings.is_empty(),
            "-0 is a value"
        );
    }

    #[test]
    fn unknown_key_message_reads_as_documented() {
        let message = err("-engine cmdd=x").to_string();
        assert!(
            message.starts_with(
                "-engine (argument 2): unknown key \"cmdd\" (expected cmd, name, dir, arg, args, \
                 proto, tc, st, nodes, depth, plies, timemargin, option.NAME, restart,"
            ),
            "{message}"
        );
        assert!(
            err("-zzzzzz").to_string().ends_with("-zzzzzz"),
            "no suggestion when none is near"
        );
    }

    #[test]
    fn epdout_both_forms() {
        assert_eq!(
            ok(&format!("{TWO} -epdout out.epd")).config.epdout,
            Some(PathBuf::from("out.epd"))
        );
        assert_eq!(
            ok(&format!("{TWO} -epdout file=f.epd")).config.epdout,
            Some(PathBuf::from("f.epd"))
        );
    }

    #[test]
    fn ignored_flags_and_keys_warn() {
        let extras = "-wait 500 -debug -tb /tb -tbpieces 6 \
                      -resultformat per-color -reverse \
                      -each stderr=err.txt whitepov ponder -openings file=a.epd policy=round";
        let parsed = ok(&format!("{TWO} {extras}"));
        let warnings = parsed.warnings.join("\n");
        for needle in [
            "-wait 500 (argument 7): ignored",
            "-debug (argument",
            "-tb /tb",
            "-tbpieces 6",
            "-resultformat per-color",
            "-reverse",
            "-each stderr=err.txt",
            "-each whitepov",
            "-each ponder",
            "-openings policy=round",
        ] {
            assert!(warnings.contains(needle), "{needle} in\n{warnings}");
        }
        assert_eq!(parsed.warnings.len(), 10);
        let quiet = ok(&format!(
            "{TWO} -output format=cutechess -tournament gauntlet -variant standard"
        ));
        assert_eq!(quiet.warnings, Vec::<String>::new());
    }

    /// The report flags take effect (issue 10): they are read into the configuration.
    #[test]
    fn report_flags_are_read() {
        let parsed = ok(&format!(
            "{TWO} -ratinginterval 10 -scoreinterval 3 -report penta=false -output format=fastchess"
        ));
        assert_eq!(parsed.warnings, Vec::<String>::new());
        assert_eq!(parsed.config.ratinginterval, Some(10));
        assert_eq!(parsed.config.scoreinterval, Some(3));
        assert_eq!(parsed.config.report_penta, Some(false));
        assert_eq!(parsed.config.output.as_deref(), Some("fastchess"));
        let err = err(&format!("{TWO} -report pent=true")).to_string();
        assert!(err.contains("-report"), "{err}");
    }

    /// Issue 12: `-report DIR` names the live report's folder beside fastchess's
    /// `-report penta=`, in one flag or two; a setting given twice warns, two settings do not.
    #[test]
    fn report_folder_and_fastchess_keys_share_the_flag() {
        let two_flags = ok(&format!("{TWO} -report penta=false -report live"));
        assert_eq!(two_flags.warnings, Vec::<String>::new());
        assert_eq!(two_flags.config.report, Some(PathBuf::from("live")));
        assert_eq!(two_flags.config.report_penta, Some(false));

        let one_flag = ok(&format!("{TWO} -report live penta=true"));
        assert_eq!(one_flag.config.report, Some(PathBuf::from("live")));
        assert_eq!(one_flag.config.report_penta, Some(true));
        assert_eq!(one_flag.warnings, Vec::<String>::new());

        let twice = ok(&format!("{TWO} -report a -report b"));
        assert_eq!(twice.config.report, Some(PathBuf::from("b")));
        assert_eq!(
            twice.warnings,
            ["-report b (argument 10): the report folder given again: the last one counts"]
        );
        let penta_twice = ok(&format!("{TWO} -report penta=true -report penta=false"));
        assert_eq!(penta_twice.config.report_penta, Some(false));
        assert_eq!(
            penta_twice.warnings,
            ["-report penta=false (argument 10): penta given again: the last one counts"]
        );

        let bare_key = err(&format!("{TWO} -report penta")).to_string();
        assert!(bare_key.contains("penta=VALUE"), "{bare_key}");
        let nothing = err(&format!("{TWO} -report")).to_string();
        assert!(nothing.contains("missing the report's folder"), "{nothing}");
        let unknown = err(&format!("{TWO} -report dir=x")).to_string();
        assert!(unknown.contains("a folder without `=`"), "{unknown}");
    }

    #[test]
    fn a_repeated_flag_warns_and_the_last_counts() {
        let parsed = ok(&format!("{TWO} -concurrency 2 -concurrency 4"));
        assert_eq!(parsed.config.concurrency, Some(4));
        assert_eq!(
            parsed.warnings,
            ["-concurrency (argument 9) given again: the last one counts"]
        );
        assert!(
            ok(&format!("{TWO} -each tc=1 -each nodes=5"))
                .warnings
                .is_empty(),
            "-each merges"
        );
    }

    #[test]
    fn every_listed_flag_is_handled() {
        for flag in FLAGS.iter().map(|f| f.name) {
            if let Err(GrammarError::UnknownFlag { .. }) = parse(&[flag.to_string()]) {
                panic!("{flag} is listed but not handled");
            }
        }
    }

    #[test]
    fn every_listed_key_is_handled() {
        let engine_keys = engine_key_names();
        let listed: [(&str, &[&str]); 6] = [
            ("-engine", &engine_keys),
            ("-openings", OPENINGS_KEYS),
            ("-sprt", SPRT_KEYS),
            ("-draw", DRAW_KEYS),
            ("-resign", RESIGN_KEYS),
            ("-pgnout", PGNOUT_KEYS),
        ];
        for (flag, keys) in listed {
            for key in keys {
                let key = key.replace("NAME", "X");
                let result = parse(&[flag.to_owned(), format!("{key}=1")]);
                if let Err(GrammarError::UnknownKey { .. }) = result {
                    panic!("{flag} {key} is listed but not handled");
                }
            }
        }
    }

    #[test]
    fn sprt_models_and_defaults() {
        let model = |line: &str| ok(&format!("{TWO} -sprt {line}")).config.sprt.unwrap();
        let cutechess = model("elo0=0 elo1=5");
        assert_eq!(
            (cutechess.model.as_str(), cutechess.alpha, cutechess.beta),
            ("normalized", 0.05, 0.05)
        );
        assert_eq!(model("elo0=-1.5 elo1=0.5 model=logistic").elo0, -1.5);
        assert_eq!(model("elo0=0 elo1=5 model=logistic").model, "logistic");
        assert_eq!(model("elo0=0 elo1=5 model=bayesian").model, "bayeselo");
        assert_eq!(
            model("elo0=0 elo1=5 model=BayesElo alpha=0.1").model,
            "bayeselo"
        );
    }

    /// `judge=` picks the pairs the SPRT is judged on, read as the TOML's `sprt.judge` reads
    /// it; left out, it is the prefix, and writing that default out changes nothing of a run.
    #[test]
    fn sprt_judge_reads_as_the_toml_key() {
        let sprt = |line: &str| ok(&format!("{TWO} -sprt {line}")).config.sprt.unwrap();
        assert_eq!(sprt("elo0=0 elo1=5").judge, None);
        assert_eq!(sprt("elo0=0 elo1=5 judge=all").judge, Some(SprtJudge::All));
        assert_eq!(
            sprt("elo0=0 elo1=5 judge=Prefix").judge,
            Some(SprtJudge::Prefix)
        );
        let err = parse(&args(&format!("{TWO} -sprt elo0=0 elo1=5 judge=first"))).unwrap_err();
        assert!(
            err.to_string().contains("judge=prefix or judge=all"),
            "{err}"
        );

        let flags = ok(&format!(
            "{TWO} -each tc=1+0.1 -sprt elo0=0 elo1=5 judge=all"
        ))
        .config;
        let toml = RunConfig::parse(&flags.canonical(), "canonical").unwrap();
        assert!(flags.canonical().contains("judge = \"all\""));
        assert_eq!(toml.sprt.unwrap().judge, Some(SprtJudge::All));
        let checked = flags.check().unwrap();
        assert_eq!(checked.judge, SprtJudge::All);

        let unsaid = ok(&format!("{TWO} -each tc=1+0.1 -sprt elo0=0 elo1=5")).config;
        assert!(
            !unsaid.canonical().contains("judge"),
            "old stores' text stays"
        );
        assert_eq!(unsaid.check().unwrap().judge, SprtJudge::Prefix);
        let said = ok(&format!(
            "{TWO} -each tc=1+0.1 -sprt elo0=0 elo1=5 judge=prefix"
        ))
        .config;
        assert!(said.differences_from(&unsaid).is_empty());
        assert_eq!(
            flags.differences_from(&unsaid),
            ["sprt.judge: \"prefix\" -> \"all\""]
        );
    }

    #[test]
    fn adjudication_defaults_follow_fastchess() {
        let config = ok(&format!(
            "{TWO} -draw score=5 -resign score=500 twosided=true -maxmoves 0"
        ))
        .config;
        assert_eq!(
            config.adjudication.draw,
            Some(DrawRule {
                movenumber: 0,
                movecount: 1,
                score: 5
            })
        );
        assert_eq!(
            config.adjudication.resign,
            Some(ResignRule {
                movecount: 1,
                score: 500,
                twosided: true
            })
        );
        assert_eq!(
            config.adjudication.maxmoves, None,
            "cutechess: zero means no limit"
        );
    }

    #[test]
    fn run_level_flags() {
        let mut line = args(&format!(
            "{TWO} -srand 42 -jsonl file=games.jsonl -store runs.sqlite -openings file=b.pgn \
             plies=8 start=3 -tournament round-robin -event"
        ));
        line.extend([
            "Big Test".to_owned(),
            "-site".to_owned(),
            "home".to_owned(),
            "lab".to_owned(),
        ]);
        let config = parse(&line).unwrap().config;
        assert_eq!(config.seed, Some(42));
        assert_eq!(config.jsonl, Some("games.jsonl".into()));
        assert_eq!(config.store.as_deref(), Some("runs.sqlite"));
        assert_eq!(
            (config.openings.plies, config.openings.start),
            (Some(8), Some(3))
        );
        assert_eq!(
            config.openings.format, None,
            "guessed from the file name when resolved"
        );
        assert_eq!(config.event.as_deref(), Some("Big Test"));
        assert_eq!(config.site.as_deref(), Some("home lab"));
        assert_eq!(
            ok(&format!("{TWO} -jsonl g.jsonl")).config.jsonl,
            Some("g.jsonl".into())
        );
        let odds = ok(&format!("{TWO} -openings odds=knight skip_invalid=true"))
            .config
            .openings;
        assert_eq!(
            (odds.odds.as_deref(), odds.skip_invalid),
            (Some("knight"), true)
        );
    }

    fn token() -> impl Strategy<Value = String> {
        let flags: Vec<String> = FLAGS.iter().map(|f| f.name.to_owned()).collect();
        let keys: Vec<&str> = [
            &engine_key_names()[..],
            OPENINGS_KEYS,
            PGNOUT_KEYS,
            SPRT_KEYS,
            DRAW_KEYS,
            RESIGN_KEYS,
        ]
        .concat();
        let values = [
            "", "0", "1", "2", "-1", "x", "inf", "40/", "0/1", "1e400", "a=b", "\"", "uci",
            "random",
        ];
        let pairs: Vec<String> = keys
            .iter()
            .flat_map(|k| {
                values
                    .iter()
                    .map(move |v| format!("{}={v}", k.replace("NAME", "N")))
            })
            .collect();
        prop_oneof![
            prop::sample::select(flags),
            prop::sample::select(pairs),
            prop::sample::select(values.map(String::from).to_vec()),
            "-?[a-z=.0-9+/\" ]{0,8}",
            any::<String>(),
        ]
    }

    proptest! {
        #[test]
        fn arbitrary_arguments_never_panic(line in prop::collection::vec(token(), 0..24)) {
            match parse(&line) {
                Ok(parsed) => prop_assert!(parsed.config.engines.len() <= 2),
                Err(error) => prop_assert!(error.position() >= 1 && error.position() <= line.len()),
            }
        }
    }

    /// The README's flag table and list of differences are the flags' documentation: every flag
    /// and engine key the grammar reads is named in the section, every one it accepts with a
    /// warning in its "Warnings, no effect" item, every one it refuses in its "Errors" item.
    #[test]
    fn the_readme_names_every_flag_and_key() {
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"));
        let start = readme
            .find("## cutechess-cli and fastchess flags")
            .expect("the flags section");
        let section = &readme[start..];
        let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
        let item = |title: &str| {
            let start = section
                .find(&format!("- **{title}**"))
                .unwrap_or_else(|| panic!("the {title} item"));
            let item = &section[start + 2..];
            &item[..item.find("\n- ").unwrap_or(item.len())]
        };
        let (warnings, errors) = (item("Warnings, no effect"), item("Errors"));
        let names = FLAGS
            .iter()
            .map(|f| (f.name, f.action.kind()))
            .chain(ENGINE_KEYS.iter().map(|k| (k.name, k.action.kind())));
        for (name, kind) in names {
            let name = name.trim_end_matches("NAME");
            // Engine keys are written `key`, `key=` or `key.NAME`; ignored flags `-flag`.
            let named = |text: &str| {
                [
                    format!("`{name}`"),
                    format!("`{name}="),
                    format!("`{name} "),
                ]
                .iter()
                .any(|form| text.contains(form.as_str()))
                    || (name.ends_with('.') && text.contains(&format!("`{name}")))
            };
            match kind {
                Action::Read(_) => {
                    assert!(section.contains(&format!("`{name}")), "README lacks {name}")
                }
                Action::Ignored(_) => assert!(named(warnings), "README's warnings lack {name}"),
                Action::Rejected(_) => assert!(named(errors), "README's errors lack {name}"),
            }
        }
    }
}
