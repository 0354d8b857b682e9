//! The opening-book tools behind `arbiter book`: make a book ([`generate`]), judge one
//! ([`check`]) and turn one format into another ([`convert`]).
//!
//! A generated book is a pure function of its seed: candidate `k` is a line of the seed book
//! (or the standard position) and `plies` random legal moves drawn from `(seed, k)`, scored by
//! staunton in process at a fixed node count; candidates are scored in parallel and accepted in
//! their order, each final position once (by its Zobrist key), so the book does not depend on
//! how many threads made it. A window on the score (White's view) keeps balanced positions, or
//! White ahead by a band, as "unbalanced human openings" books do: every game of a pair then
//! has something to decide, and the pair, not the game, tells the engines apart.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbiter_rules::pgn::write_pgn;
use arbiter_rules::{Color, Game, Move, Position, RuleSet};
use futures_util::future::BoxFuture;
use staunton::{Engine, Limits, Params, Score};
use tokio::sync::{mpsc, watch};

use crate::config::{EngineConfig, EngineSettings, RunConfig};
use crate::openings::{guess_format, splitmix, Book, BookChoice, BookFormat, BookSpec, Opening};
use crate::play::{play_with, End, Flow, MatchError, PairSink, PlayedPair, Players};

/// Scores from White's side, in centipawns, both ends included.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub low: i32,
    pub high: i32,
}

impl Window {
    pub fn contains(self, score: i32) -> bool {
        (self.low..=self.high).contains(&score)
    }
}

impl std::str::FromStr for Window {
    type Err = String;

    /// `-50..50`, or `50` for `-50..50`.
    fn from_str(text: &str) -> Result<Window, String> {
        let number = |t: &str| {
            t.trim()
                .parse::<i32>()
                .map_err(|_| format!("{t:?} is not a whole number of centipawns"))
        };
        let window = match text.split_once("..") {
            Some((low, high)) => Window {
                low: number(low)?,
                high: number(high)?,
            },
            None => {
                let half = number(text)?.abs();
                Window {
                    low: -half,
                    high: half,
                }
            }
        };
        if window.low > window.high {
            return Err(format!("{text:?}: the low end is above the high end"));
        }
        Ok(window)
    }
}

/// What `arbiter book generate` makes.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Positions wanted.
    pub count: usize,
    /// Random legal moves after the seed line.
    pub plies: u32,
    /// staunton's nodes for each candidate's score.
    pub nodes: u64,
    pub window: Window,
    pub seed: u64,
    /// The lines candidates start from; the standard position if none.
    pub from: Option<Arc<Book>>,
    pub threads: usize,
}

/// A position of a generated book: the line from its start, and its score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub start: Position,
    /// The seed line's moves, then the random ones.
    pub moves: Vec<Move>,
    /// staunton's score, White's view, in centipawns.
    pub score: i32,
    /// The seed line it grew from (`startpos`, `book.epd:12`).
    pub source: String,
}

impl Generated {
    pub fn position(&self) -> Position {
        let mut pos = self.start;
        for &mv in &self.moves {
            pos.play_unchecked(mv);
        }
        pos
    }
}

/// Why a book could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum BookToolError {
    #[error(transparent)]
    Book(#[from] crate::openings::BookError),
    #[error(
        "only {found} of {count} positions scored within {low}..{high} cp after {tried} \
         candidates: widen the window, or give fewer random plies"
    )]
    TooFew {
        found: usize,
        count: usize,
        tried: u64,
        low: i32,
        high: i32,
    },
    #[error("{path}: {reason}")]
    Write { path: String, reason: String },
    #[error("{0}")]
    Play(String),
}

/// Candidates tried for each position wanted before giving up.
const TRIES_PER_POSITION: u64 = 200;

/// Makes a book as `options` says, calling `progress(found, tried)` after each chunk of
/// candidates.
pub fn generate(
    options: &GenerateOptions,
    progress: &(dyn Fn(usize, u64) + Sync),
) -> Result<Vec<Generated>, BookToolError> {
    let threads = options.threads.clamp(1, 256);
    let chunk = 32 * threads as u64;
    let limit = TRIES_PER_POSITION * options.count as u64 + 10_000;
    let mut engines: Vec<Engine> = (0..threads)
        .map(|_| Engine::new(Params::default(), 1))
        .collect();
    let mut seen = HashSet::new();
    let mut book = Vec::with_capacity(options.count);
    let mut tried = 0u64;
    while book.len() < options.count && tried < limit {
        let first = tried;
        let scored: Vec<Vec<(u64, Option<Generated>)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = engines
                .iter_mut()
                .enumerate()
                .map(|(t, engine)| {
                    scope.spawn(move || {
                        (first + t as u64..first + chunk)
                            .step_by(threads)
                            .map(|k| (k, candidate(options, k, engine)))
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a candidate's search does not panic"))
                .collect()
        });
        let mut scored: Vec<(u64, Option<Generated>)> = scored.into_iter().flatten().collect();
        scored.sort_by_key(|(k, _)| *k);
        for (_, found) in scored {
            let Some(found) = found.filter(|g| options.window.contains(g.score)) else {
                continue;
            };
            if book.len() < options.count && seen.insert(found.position().hash()) {
                book.push(found);
            }
        }
        tried += chunk;
        progress(book.len(), tried);
    }
    if book.len() < options.count {
        return Err(BookToolError::TooFew {
            found: book.len(),
            count: options.count,
            tried,
            low: options.window.low,
            high: options.window.high,
        });
    }
    Ok(book)
}

/// Candidate `k`: its line and score, or none when the line ends the game or the score is a
/// mate.
fn candidate(options: &GenerateOptions, k: u64, engine: &mut Engine) -> Option<Generated> {
    let mut draw = Draws::new(options.seed, k);
    let (start, mut moves, source) = match &options.from {
        Some(book) => {
            let line = book.opening(draw.below(book.len() as u64) as usize);
            (line.start, line.moves.clone(), line.source.clone())
        }
        None => (Position::starting(), Vec::new(), "startpos".to_owned()),
    };
    let mut game = Game::new(start, RuleSet::default());
    for &mv in &moves {
        game.play_unchecked(mv);
    }
    for _ in 0..options.plies {
        if game.outcome().is_some() {
            return None;
        }
        let legal = game.position().legal_moves();
        let mv = legal[draw.below(legal.len() as u64) as usize];
        game.play_unchecked(mv);
        moves.push(mv);
    }
    if game.outcome().is_some() {
        return None;
    }
    let score = white_score(engine, game.position(), options.nodes)?;
    Some(Generated {
        start,
        moves,
        score,
        source,
    })
}

/// staunton's score of `pos` at `nodes`, from White's side in centipawns, searched afresh (a
/// new game: no earlier search's tables); none for a mate score, which is no opening's.
fn white_score(engine: &mut Engine, pos: &Position, nodes: u64) -> Option<i32> {
    engine.new_game();
    let stop = AtomicBool::new(false);
    let result = engine.search(&[*pos], &Limits::nodes(nodes), &stop, &mut |_| {});
    let Score::Cp(cp) = result.score else {
        return None;
    };
    Some(match pos.turn() {
        Color::White => cp,
        Color::Black => -cp,
    })
}

/// A stream of draws for candidate `k` of `seed` (splitmix64).
struct Draws(u64);

impl Draws {
    fn new(seed: u64, k: u64) -> Draws {
        Draws(seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x626F_6F6B)
    }

    fn next(&mut self) -> u64 {
        let draw = splitmix(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        draw
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The written form of a book: EPD (one position a line, with `id` and the score as `c0`)
/// or PGN (each line's moves from its start).
pub fn book_text(book: &[Generated], format: BookFormat, made_by: &str) -> String {
    let mut text = String::new();
    for (n, entry) in book.iter().enumerate() {
        match format {
            BookFormat::Pgn => {
                let tags = [
                    ("Event", "arbiter book".to_owned()),
                    ("Round", (n + 1).to_string()),
                    ("Annotator", made_by.to_owned()),
                    ("Opening", entry.source.clone()),
                ];
                let mut comments = vec![None; entry.moves.len()];
                if let Some(last) = comments.last_mut() {
                    *last = Some(format!("{:+} cp", entry.score));
                }
                // The moves were played legally from the start: writing cannot fail.
                if let Ok(game) = write_pgn(&tags, &entry.start, &entry.moves, &comments, "*") {
                    text.push_str(&game);
                }
            }
            BookFormat::Epd | BookFormat::Polyglot => {
                text.push_str(&format!(
                    "{} id \"{}\"; c0 \"{:+} cp, {made_by}\";\n",
                    entry.position().fen(),
                    n + 1,
                    entry.score
                ));
            }
        }
    }
    text
}

/// Writes `text` to `path` whole: into a file beside it, renamed into place.
pub fn write_whole(path: &Path, text: &[u8]) -> Result<(), BookToolError> {
    let write = |reason: std::io::Error| BookToolError::Write {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).map_err(write)?;
    std::fs::rename(&tmp, path).map_err(write)
}

/// What `arbiter book check` found in a book.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    pub path: String,
    pub format: String,
    /// Entries that could be read and played.
    pub openings: usize,
    /// Entries that cannot be used, each naming its line and why.
    pub invalid: Vec<String>,
    /// Entries whose position another entry already has: `(entry, first)`.
    pub duplicates: Vec<(String, String)>,
    /// The scores (White's view, centipawns) by bucket, when scored.
    pub scores: Option<ScoreSpread>,
    /// Entries whose quick pair went to the same colour twice, when played.
    pub lopsided: Option<Vec<String>>,
}

impl CheckReport {
    /// Whether the book is fit to use as it is.
    pub fn is_clean(&self) -> bool {
        self.invalid.is_empty() && self.duplicates.is_empty()
    }
}

/// A book's scores: the buckets, and how many lie in a few bands.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ScoreSpread {
    pub nodes: u64,
    pub mean: f64,
    pub stdev: f64,
    /// `(low, high, count)`: 25 cp buckets from -200 to 200, and the two tails.
    pub buckets: Vec<(i32, i32, usize)>,
    pub within_50: usize,
    pub mates: usize,
}

/// What `check` does besides reading.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Score each entry at this many nodes (none: no scores).
    pub score_nodes: Option<u64>,
    /// Play a quick in-process pair on each entry at this many nodes a move (none: no pairs).
    pub pair_nodes: Option<u64>,
    pub plies: Option<usize>,
    pub choice: Option<BookChoice>,
    pub threads: usize,
}

/// Reads `path` as a book, every bad entry reported rather than the first; optionally scores
/// each entry and plays a quick pair on it.
pub fn check<'a>(
    path: &'a Path,
    format: Option<BookFormat>,
    options: &'a CheckOptions,
) -> BoxFuture<'a, Result<CheckReport, BookToolError>> {
    Box::pin(async move {
        let spec = BookSpec {
            file: Some(path.to_owned()),
            format,
            plies: options.plies,
            choice: options.choice,
            skip_invalid: true,
            ..BookSpec::default()
        };
        let mut book = Book::load(&spec).or_else(|e| match e {
            // A book with no usable entry is still a book to report on.
            crate::openings::BookError::Empty { .. } => Ok(Book::from_openings(Vec::new())),
            e => Err(e),
        })?;
        let mut invalid = std::mem::take(&mut book.warnings);
        if !book.is_empty() {
            book.drop_finished(RuleSet::default(), true)
                .or_else(|e| match e {
                    crate::openings::BookError::Empty { .. } => Ok(()),
                    e => Err(e),
                })?;
            invalid.append(&mut book.warnings);
        }
        let openings: Vec<Opening> = (0..book.len()).map(|i| book.opening(i).clone()).collect();
        let mut first: BTreeMap<u64, String> = BTreeMap::new();
        let mut duplicates = Vec::new();
        for opening in &openings {
            let key = opening.position_after_book().hash();
            match first.get(&key) {
                Some(earlier) => duplicates.push((opening.source.clone(), earlier.clone())),
                None => {
                    first.insert(key, opening.source.clone());
                }
            }
        }
        let scores = options
            .score_nodes
            .map(|nodes| spread(&openings, nodes, options.threads));
        let lopsided = match options.pair_nodes {
            Some(nodes) => Some(lopsided(&spec, openings.len(), nodes, options.threads).await?),
            None => None,
        };
        Ok(CheckReport {
            path: path.display().to_string(),
            format: format!("{:?}", spec.format.unwrap_or_else(|| guess_format(path)))
                .to_lowercase(),
            openings: openings.len(),
            invalid,
            duplicates,
            scores,
            lopsided,
        })
    })
}

/// Each opening's score at `nodes`, in parallel, gathered into buckets.
fn spread(openings: &[Opening], nodes: u64, threads: usize) -> ScoreSpread {
    let threads = threads.clamp(1, 256);
    let scores: Vec<Option<i32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut engine = Engine::new(Params::default(), 1);
                    (t..openings.len())
                        .step_by(threads)
                        .map(|i| {
                            let pos = openings[i].position_after_book();
                            (i, white_score(&mut engine, &pos, nodes))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, Option<i32>)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("a search does not panic"))
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, s)| s).collect()
    });
    let cps: Vec<i32> = scores.iter().flatten().copied().collect();
    let n = cps.len().max(1) as f64;
    let mean = cps.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
    let variance = cps
        .iter()
        .map(|&c| (f64::from(c) - mean).powi(2))
        .sum::<f64>()
        / n;
    let mut buckets = vec![(i32::MIN, -200, 0usize)];
    buckets.extend((-8..8).map(|b| (25 * b, 25 * b + 25, 0)));
    buckets.push((200, i32::MAX, 0));
    for &cp in &cps {
        let at = match cp {
            c if c < -200 => 0,
            c if c >= 200 => buckets.len() - 1,
            c => (c.div_euclid(25) + 8 + 1) as usize,
        };
        buckets[at].2 += 1;
    }
    ScoreSpread {
        nodes,
        mean,
        stdev: variance.sqrt(),
        within_50: cps.iter().filter(|c| c.abs() <= 50).count(),
        mates: scores.len() - cps.len(),
        buckets,
    }
}

/// Plays staunton at `nodes` a move against staunton at half as many again, in process, one
/// pair on each of the book's `count` openings, and names the entries whose two games the
/// same colour won.
fn lopsided<'a>(
    spec: &'a BookSpec,
    count: usize,
    nodes: u64,
    threads: usize,
) -> BoxFuture<'a, Result<Vec<String>, BookToolError>> {
    Box::pin(async move {
        if count == 0 {
            return Ok(Vec::new());
        }
        // Two identical engines would play the same game from both sides, and every decisive
        // line would look lopsided: the second searches half as much again, so that the
        // engines decide a fair line and only the position decides a lopsided one.
        let engine = |name: &str, nodes: u64| EngineConfig {
            name: name.to_owned(),
            builtin: Some("staunton".to_owned()),
            settings: EngineSettings {
                nodes: Some(nodes),
                ..EngineSettings::default()
            },
            ..EngineConfig::default()
        };
        let config = RunConfig {
            rounds: Some(count as u64),
            concurrency: Some(threads.max(1)),
            engines: vec![engine("a", nodes), engine("b", nodes + nodes / 2)],
            openings: BookSpec {
                order: crate::openings::BookOrder::Sequential,
                ..spec.clone()
            },
            each: EngineSettings {
                tc: Some("inf".to_owned()),
                nodes: Some(nodes),
                ..EngineSettings::default()
            },
            ..RunConfig::default()
        };
        // The book's path is as given, from the current folder.
        let resolved = config
            .resolve(Path::new("."), 0)
            .map_err(|e| BookToolError::Play(e.to_string()))?;
        let mut sink = Lopsided {
            book: Arc::clone(&resolved.play.book),
            found: Vec::new(),
        };
        let players = Arc::new(Players::default());
        let (events, _ignored) = mpsc::unbounded_channel();
        let (_never, mut cancel) = watch::channel(false);
        let ending = play_with(
            &resolved.play,
            0..resolved.pairs,
            &mut sink,
            &players,
            &events,
            &mut cancel,
        )
        .await
        .map_err(|e| BookToolError::Play(e.to_string()))?;
        players.shutdown().await;
        if let End::Fault(reason) = ending.end {
            return Err(BookToolError::Play(reason));
        }
        sink.found.sort();
        Ok(sink.found.into_iter().map(|(_, source)| source).collect())
    })
}

/// Keeps the openings whose pair's two games the same colour won.
struct Lopsided {
    book: Arc<Book>,
    found: Vec<(u64, String)>,
}

impl PairSink for Lopsided {
    async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
        let winners: Vec<Option<Color>> = pair
            .games
            .iter()
            .map(|game| match game.record.half_points(Color::White) {
                2 => Some(Color::White),
                0 => Some(Color::Black),
                _ => None,
            })
            .collect();
        if let [Some(a), Some(b)] = winners[..] {
            if a == b {
                let source = self.book.opening(pair.pair as usize).source.clone();
                self.found.push((pair.pair, source));
            }
        }
        Ok(Flow::Continue)
    }
}

/// `arbiter book convert`: `input` read as a book (PGN cut at `plies`, a Polyglot book walked
/// to `plies` by `choice`), written in `format`: EPD (the position after each line's moves,
/// with its origin as `id`) or PGN (each line's moves from its start, `FEN` when it is not the
/// standard position).
pub fn convert(input: &BookSpec, format: BookFormat) -> Result<(String, usize), BookToolError> {
    let book = Book::load(input)?;
    let mut text = String::new();
    for i in 0..book.len() {
        let opening = book.opening(i);
        match format {
            BookFormat::Pgn => {
                let tags = [
                    ("Event", "arbiter book"),
                    ("Opening", opening.source.as_str()),
                ];
                let comments = vec![None; opening.moves.len()];
                if let Ok(game) = write_pgn(&tags, &opening.start, &opening.moves, &comments, "*") {
                    text.push_str(&game);
                }
            }
            BookFormat::Epd | BookFormat::Polyglot => {
                text.push_str(&format!(
                    "{} id \"{}\";\n",
                    opening.position_after_book().fen(),
                    opening.source.replace('"', "'")
                ));
            }
        }
    }
    Ok((text, book.len()))
}
