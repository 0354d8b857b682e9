//! `arbiter datagen`: labelled positions from staunton's self-play, for Texel tuning.
//!
//! # Why the games are an ordinary stored run
//! Data generation runs for hours and gets killed. Rather than a second game loop with its own
//! checkpoint format, the self-play is a match of staunton against itself through the runner
//! and the store, exactly as `arbiter match` plays one: every finished pair of games is
//! committed in one transaction, so a run killed at any instant (kill -9 included) resumes
//! with every committed game kept and none played twice. The positions file is then an export
//! of the stored games, like `pgnout`: written at the end, rewritten whole on every resume,
//! so it always holds exactly what the store holds, in game order, whatever the interruptions.
//!
//! # Why a generated book
//! Two identical engines at fixed nodes from the same position play the same game every time
//! (staunton's search is deterministic after `ucinewgame`), so self-play from a small book
//! would repeat itself. Each game therefore gets its own opening: a line of the user's book
//! (or the standard position) followed by `random_plies` uniformly random legal moves, drawn
//! from the run seed and the game's number. A line that ends the game, or that a quick search
//! (`balance_nodes` nodes) scores beyond `balance` centipawns (one side is simply winning, and
//! every position of the game would say so), is redrawn. The lines are written as an EPD book
//! beside the output (`positions.book.epd` for `positions.txt`), the book the stored run
//! plays; they are a pure function of the seed, so a resumed run regenerates the same file.
//! The games are unpaired (`games = 1`): with identical engines a colour-swapped pair would
//! only replay its first game.
//!
//! # What is kept
//! [`crate::positions::Filter`] decides which positions of a game are written (it is Texel's
//! filter: no opening plies, no checks, no captures or promotions, nothing after a mate score),
//! and [`crate::positions::Dedup`] keeps each position once, its first occurrence in game
//! order, labelled with that game's result.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use arbiter_records::entries::book_entry;
use arbiter_rules::{Game, Position, RuleSet};
use arbiter_runner::config::{AdjudicationConfig, EngineConfig, EngineSettings, RunConfig};
use arbiter_runner::openings::{Book, BookOrder, BookSpec};
use arbiter_store::{RunId, Store};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use staunton::{Engine, Limits, Params, Score};

use crate::positions::{positions_of, Dedup, Filter, LabeledPosition};

/// A datagen run as written in TOML (`configs/datagen.toml`); every field has a default, so
/// the command-line flags alone describe a run too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatagenConfig {
    /// Names the run in the store: rerunning the same configuration resumes it.
    pub name: String,
    /// The run's seed; without one each new run draws its own (stored and printed).
    pub seed: Option<u64>,
    /// An EPD or PGN book the generated openings start from; the standard position if unset.
    pub book: Option<PathBuf>,
    /// Games to play.
    pub games: u64,
    /// Nodes per move: fast games whose evaluation decided more than their search depth.
    pub nodes: u64,
    /// Random legal moves played after each book line.
    pub random_plies: u32,
    /// A generated opening a quick search scores beyond this many centipawns is redrawn.
    pub balance: i32,
    /// The quick search's nodes.
    pub balance_nodes: u64,
    /// The positions file; the generated book goes beside it.
    pub output: PathBuf,
    /// The SQLite file (or `postgres://` URL) that holds the games.
    pub store: Option<String>,
    /// The games' PGN, exported from the store at the end (as `arbiter match`'s `pgnout`).
    pub pgnout: Option<PathBuf>,
    /// Games in flight at once.
    pub concurrency: usize,
    /// Hash per engine, in MB.
    pub hash: usize,
    /// Which positions of a game are written.
    pub filter: Filter,
    /// Adjudication shortens decided games; the label is the adjudicated result.
    pub adjudication: AdjudicationConfig,
}

impl Default for DatagenConfig {
    fn default() -> DatagenConfig {
        DatagenConfig {
            name: "datagen".to_owned(),
            seed: None,
            book: None,
            games: 1000,
            nodes: 5000,
            random_plies: 8,
            balance: 300,
            balance_nodes: 2000,
            output: PathBuf::from("positions.txt"),
            store: None,
            pgnout: None,
            concurrency: 1,
            hash: 2,
            filter: Filter::default(),
            adjudication: AdjudicationConfig::default(),
        }
    }
}

/// Why a datagen run cannot start or finish.
#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    #[error("{path}: cannot read: {error}")]
    Read { path: String, error: io::Error },
    #[error("{path}: {message}")]
    Toml { path: String, message: String },
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    /// The self-play match's own settings (concurrency, adjudication), judged by the runner.
    #[error(transparent)]
    Match(#[from] arbiter_runner::config::ConfigError),
    #[error(transparent)]
    Book(#[from] arbiter_runner::openings::BookError),
    #[error(
        "opening {index}: no line of {plies} random plies from {source_line} stays within \
         {balance} centipawns after {tries} tries; lower random_plies or raise balance"
    )]
    Unbalanced {
        index: u64,
        plies: u32,
        source_line: String,
        balance: i32,
        tries: u32,
    },
    #[error("{path}: cannot write: {error}")]
    Write { path: String, error: io::Error },
    #[error(transparent)]
    Store(#[from] arbiter_store::StoreError),
    #[error("stored game {game}: {reason}")]
    StoredGame { game: u64, reason: String },
}

impl DatagenConfig {
    pub fn load(path: &Path) -> Result<DatagenConfig, DatagenError> {
        let text = std::fs::read_to_string(path).map_err(|error| DatagenError::Read {
            path: path.display().to_string(),
            error,
        })?;
        toml::from_str(&text).map_err(|e| DatagenError::Toml {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// What the text alone decides, the match's settings included (concurrency, adjudication):
    /// nothing is opened or created for a configuration that cannot run.
    pub fn check(&self) -> Result<(), DatagenError> {
        let invalid = |field, reason: &str| {
            Err(DatagenError::Invalid {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.name.is_empty() || self.name.chars().any(arbiter_runner::lines::unprintable) {
            return invalid(
                "name",
                "expected a name without control characters or invisible marks",
            );
        }
        if self.games == 0 {
            return invalid("games", "must be at least 1");
        }
        if self.nodes == 0 {
            return invalid("nodes", "must be at least 1 (nodes per move)");
        }
        if self.balance <= 0 {
            return invalid("balance", "must be above 0 centipawns");
        }
        if self.balance_nodes == 0 {
            return invalid("balance_nodes", "must be at least 1");
        }
        if self.output.as_os_str().is_empty() {
            return invalid("output", "expected a file name for the positions");
        }
        if self.random_plies > 200 {
            return invalid("random_plies", "at most 200 random plies");
        }
        self.run_config(0).check()?;
        Ok(())
    }

    /// The games played: as many as asked for (an odd count's last is a unit of one game).
    pub fn games_played(&self) -> u64 {
        self.games
    }

    /// Where the generated openings are written: beside the output, `NAME.book.epd`.
    pub fn book_path(&self) -> PathBuf {
        self.output.with_extension("book.epd")
    }

    /// The settings that decide which openings are generated and which positions are kept,
    /// beyond those the match configuration holds: stored with the run so that a resume with
    /// other values is refused instead of mixed in.
    pub fn defining_line(&self) -> String {
        let book = self
            .book
            .as_ref()
            .map_or_else(|| "startpos".to_owned(), |b| b.display().to_string());
        let f = &self.filter;
        format!(
            "# arbiter datagen: book {book}, random_plies {}, balance {} cp at {} nodes; filter: \
             skip_plies {}, skip_in_check {}, skip_noisy {}, skip_mate_scores {}",
            self.random_plies,
            self.balance,
            self.balance_nodes,
            f.skip_plies,
            f.skip_in_check,
            f.skip_noisy,
            f.skip_mate_scores
        )
    }

    /// The self-play match: staunton against itself, unpaired, at fixed nodes, one game per
    /// line of the generated book in order.
    pub fn run_config(&self, seed: u64) -> RunConfig {
        let engine = |name: &str| EngineConfig {
            name: name.to_owned(),
            builtin: Some("staunton".to_owned()),
            ..EngineConfig::default()
        };
        RunConfig {
            name: Some(self.name.clone()),
            seed: Some(seed),
            // Unpaired, the runner's rounds are games.
            rounds: Some(self.games_played()),
            games: Some(1),
            concurrency: Some(self.concurrency),
            store: self.store.clone(),
            event: Some("arbiter datagen".to_owned()),
            each: EngineSettings {
                tc: Some("inf".to_owned()),
                nodes: Some(self.nodes),
                hash: Some(self.hash),
                ..EngineSettings::default()
            },
            engines: vec![engine("staunton-a"), engine("staunton-b")],
            openings: BookSpec {
                file: Some(self.book_path()),
                order: BookOrder::Sequential,
                ..BookSpec::default()
            },
            adjudication: self.adjudication.clone(),
            ..RunConfig::default()
        }
    }
}

impl DatagenConfig {
    /// The user's book (or the standard position), read before anything else is done, so that
    /// a missing or malformed book stops the run before a store is created.
    pub fn load_book(&self) -> Result<Book, DatagenError> {
        let mut book = Book::load(&BookSpec {
            file: self.book.clone(),
            ..BookSpec::default()
        })?;
        book.drop_finished(RuleSet::default(), false)?;
        Ok(book)
    }
}

/// One generated opening: where it came from and the position the engines start from.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedOpening {
    /// The book line it grew from (`quick.epd:12`, `startpos`).
    pub source: String,
    pub position: Position,
}

/// How many times a line is redrawn before the run is refused: a book whose lines are all
/// lopsided after a few random moves is the user's to fix, not to loop on.
const MAX_TRIES: u32 = 1000;

/// The openings of a datagen run: one line per game, line `k` a pure function of (seed, k), so a
/// resumed run regenerates the same book. Work is spread over `threads` threads, each with its
/// own engine; the result does not depend on how many.
pub fn generate_openings(
    config: &DatagenConfig,
    book: &Book,
    seed: u64,
    threads: usize,
) -> Result<Vec<GeneratedOpening>, DatagenError> {
    let count = config.games_played();
    let threads = threads.clamp(1, 64) as u64;
    let per_thread: Vec<Result<Vec<(u64, GeneratedOpening)>, DatagenError>> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        let mut engine = Engine::new(Params::default(), 1);
                        (t..count)
                            .step_by(threads as usize)
                            .map(|k| {
                                generate_one(config, book, seed, k, &mut engine).map(|o| (k, o))
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("opening generation does not panic"))
                .collect()
        });
    let mut openings = Vec::with_capacity(count as usize);
    for part in per_thread {
        openings.extend(part?);
    }
    openings.sort_by_key(|(k, _)| *k);
    Ok(openings.into_iter().map(|(_, o)| o).collect())
}

fn generate_one(
    config: &DatagenConfig,
    book: &Book,
    seed: u64,
    index: u64,
    engine: &mut Engine,
) -> Result<GeneratedOpening, DatagenError> {
    let rules = RuleSet::default();
    let stop = AtomicBool::new(false);
    let mut last_source = String::new();
    for attempt in 0..MAX_TRIES {
        let mut rng = Rng::new(seed, index, u64::from(attempt));
        let line = book.opening(rng.below(book.len() as u64) as usize);
        last_source = book_entry(&line.source);
        let mut game = Game::new(line.position_after_book(), rules);
        for _ in 0..config.random_plies {
            let moves = game.position().legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                break;
            }
            game.play_unchecked(moves[rng.below(moves.len() as u64) as usize]);
        }
        if game.outcome().is_some() {
            continue;
        }
        let position = *game.position();
        engine.new_game();
        let result = engine.search(
            &[position],
            &Limits::nodes(config.balance_nodes),
            &stop,
            &mut |_| {},
        );
        let balanced = match result.score {
            Score::Cp(cp) => cp.abs() <= config.balance,
            Score::Mate(_) => false,
        };
        if balanced {
            return Ok(GeneratedOpening {
                source: book_entry(&line.source),
                position,
            });
        }
    }
    Err(DatagenError::Unbalanced {
        index,
        plies: config.random_plies,
        source_line: last_source,
        balance: config.balance,
        tries: MAX_TRIES,
    })
}

/// Writes the openings as an EPD book (six-field FEN, then the line's origin as `id`), into a
/// file beside `path` renamed into place, so the book on disk is always whole.
pub fn write_book(path: &Path, openings: &[GeneratedOpening]) -> Result<(), DatagenError> {
    let write_error = |error| DatagenError::Write {
        path: path.display().to_string(),
        error,
    };
    let tmp = path.with_extension("epd.tmp");
    let mut out = BufWriter::new(File::create(&tmp).map_err(write_error)?);
    for opening in openings {
        writeln!(
            out,
            "{} id \"{}\";",
            opening.position.fen(),
            opening.source.replace('"', "'")
        )
        .map_err(write_error)?;
    }
    out.flush().map_err(write_error)?;
    drop(out);
    std::fs::rename(&tmp, path).map_err(write_error)
}

/// What an export wrote and what it left out.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DatagenCounts {
    /// Finished games read.
    pub games: u64,
    /// Positions a move was played from, over all games.
    pub positions: u64,
    /// Dropped by the filter (opening plies, checks, captures and promotions, mate scores).
    pub filtered: u64,
    /// Kept by the filter but seen before.
    pub duplicates: u64,
    /// Written.
    pub written: u64,
}

/// Positions of games, filtered and deduplicated, in the order the games are given: the one
/// place that decides what a datagen positions file holds, for the live progress and the
/// export alike.
pub struct PositionsSink {
    filter: Filter,
    dedup: Dedup,
    pub counts: DatagenCounts,
}

impl PositionsSink {
    pub fn new(filter: Filter) -> PositionsSink {
        PositionsSink {
            filter,
            dedup: Dedup::new(),
            counts: DatagenCounts::default(),
        }
    }

    /// The new positions of one PGN game (its first if the text holds several), counted.
    pub fn add_game(&mut self, pgn: &str) -> Result<Vec<LabeledPosition>, String> {
        let game = arbiter_rules::pgn::PgnReader::new(pgn.as_bytes())
            .next()
            .ok_or("no game in the PGN text")?
            .map_err(|e| e.to_string())?;
        let kept = positions_of(&game, &self.filter);
        let fresh: Vec<LabeledPosition> = kept
            .iter()
            .filter(|p| self.dedup.insert(&p.position))
            .cloned()
            .collect();
        let c = &mut self.counts;
        c.games += 1;
        c.positions += game.moves.len() as u64;
        c.filtered += (game.moves.len() - kept.len()) as u64;
        c.duplicates += (kept.len() - fresh.len()) as u64;
        c.written += fresh.len() as u64;
        Ok(fresh)
    }
}

/// Writes the positions of every stored game of `run`, in game order, to `path` (through a
/// file beside it renamed into place: the file on disk is always a whole export).
pub async fn export_positions(
    store: &Store,
    run: RunId,
    path: &Path,
    filter: Filter,
) -> Result<DatagenCounts, DatagenError> {
    let tmp = path.with_extension("export.tmp");
    let write_error = |error| DatagenError::Write {
        path: tmp.display().to_string(),
        error,
    };
    let mut out = BufWriter::new(File::create(&tmp).map_err(write_error)?);
    let mut sink = PositionsSink::new(filter);
    let mut games = store.games(run);
    while let Some(game) = games.next().await {
        let game = game?.game;
        let fresh = sink
            .add_game(&game.pgn)
            .map_err(|reason| DatagenError::StoredGame {
                game: game.game_number,
                reason,
            })?;
        for p in &fresh {
            crate::positions::write_position(&mut out, p).map_err(write_error)?;
        }
    }
    out.flush().map_err(write_error)?;
    drop(out);
    std::fs::rename(&tmp, path).map_err(|error| DatagenError::Write {
        path: path.display().to_string(),
        error,
    })?;
    Ok(sink.counts)
}

/// splitmix64 over (seed, opening, attempt): each opening's draws are independent of every
/// other's, so openings can be generated in any order and on any number of threads.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u64, attempt: u64) -> Rng {
        let mut rng = Rng(seed);
        rng.0 ^= rng
            .next()
            .wrapping_add(index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.0 ^= rng
            .next()
            .wrapping_add(attempt.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7));
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so that no value is favoured.
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return x % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(games: u64) -> DatagenConfig {
        DatagenConfig {
            games,
            balance_nodes: 300,
            ..DatagenConfig::default()
        }
    }

    #[test]
    fn openings_are_a_function_of_seed_and_index_only() {
        let config = small(12);
        let one = generate_openings(&config, &config.load_book().unwrap(), 7, 1).unwrap();
        let three = generate_openings(&config, &config.load_book().unwrap(), 7, 3).unwrap();
        assert_eq!(one, three, "the thread count changes nothing");
        assert_eq!(one.len(), 12);
        assert_eq!(
            generate_openings(&small(11), &config.load_book().unwrap(), 7, 1).unwrap(),
            one[..11],
            "an odd count is played exactly, each game with its own opening"
        );
        let other = generate_openings(&config, &config.load_book().unwrap(), 8, 1).unwrap();
        assert_ne!(one, other, "another seed, other openings");
        let longer =
            generate_openings(&small(20), &Book::load(&BookSpec::default()).unwrap(), 7, 2)
                .unwrap();
        assert_eq!(
            longer[..12],
            one[..],
            "opening k does not depend on the game count"
        );
    }

    #[test]
    fn openings_are_random_plies_deep_playable_and_balanced() {
        let config = small(16);
        let openings = generate_openings(&config, &config.load_book().unwrap(), 3, 2).unwrap();
        let mut engine = Engine::new(Params::default(), 1);
        let stop = AtomicBool::new(false);
        let mut distinct = std::collections::HashSet::new();
        for o in &openings {
            // From the standard position, 8 plies on: White to move at move 5.
            assert_eq!(o.position.fullmove_number(), 5, "{}", o.position.fen());
            assert!(o.position.has_legal_moves());
            engine.new_game();
            let r = engine.search(&[o.position], &Limits::nodes(300), &stop, &mut |_| {});
            assert!(
                matches!(r.score, Score::Cp(cp) if cp.abs() <= 300),
                "{:?}",
                r.score
            );
            distinct.insert(o.position.hash());
        }
        assert!(
            distinct.len() >= 15,
            "random lines rarely meet: {}",
            distinct.len()
        );
    }

    #[test]
    fn a_lopsided_book_is_refused_with_advice() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("queen-odds.epd");
        // Black has no queen: no line of two random plies brings that within 3 pawns.
        std::fs::write(
            &book,
            "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n",
        )
        .unwrap();
        let config = DatagenConfig {
            book: Some(book),
            random_plies: 2,
            balance_nodes: 50,
            games: 1,
            ..DatagenConfig::default()
        };
        let err = generate_openings(&config, &config.load_book().unwrap(), 1, 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "opening 0: no line of 2 random plies from queen-odds.epd:1 stays within 300 \
             centipawns after 1000 tries; lower random_plies or raise balance"
        );
    }

    #[test]
    fn the_book_reads_back_through_the_runner() {
        let dir = tempfile::tempdir().unwrap();
        let config = DatagenConfig {
            output: dir.path().join("positions.txt"),
            ..small(5)
        };
        let openings = generate_openings(&config, &config.load_book().unwrap(), 11, 2).unwrap();
        write_book(&config.book_path(), &openings).unwrap();
        assert!(config.book_path().ends_with("positions.book.epd"));
        let book = Book::load(&config.run_config(11).openings).unwrap();
        assert_eq!(book.len(), 5, "5 games, 5 openings");
        for (k, o) in openings.iter().enumerate() {
            assert_eq!(book.opening(k).start, o.position);
        }
        config.run_config(11).check().unwrap();
    }

    #[test]
    fn the_sink_counts_what_it_drops() {
        let game = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 6. d4 exd4 1/2-1/2\n";
        let filter = Filter {
            skip_plies: 2,
            ..Filter::default()
        };
        let mut sink = PositionsSink::new(filter);
        let first = sink.add_game(game).unwrap();
        // 12 positions; plies 0-1 are the book, 4.Bxc6, 4...dxc6 and 6...exd4 are captures.
        assert_eq!(first.len(), 12 - 2 - 3);
        let again = sink.add_game(game).unwrap();
        assert!(again.is_empty());
        assert_eq!(
            sink.counts,
            DatagenCounts {
                games: 2,
                positions: 24,
                filtered: 10,
                duplicates: 7,
                written: 7
            }
        );
        assert!(first.iter().all(|p| p.result == 0.5));
        assert!(sink.add_game("garbage").is_err());
    }

    #[test]
    fn the_shipped_configuration_runs() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/datagen.toml");
        let config = DatagenConfig::load(&path).unwrap();
        config.check().unwrap();
        assert_eq!(config.filter, Filter::default());
        config.run_config(1).check().unwrap();
    }

    #[test]
    fn the_configuration_names_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.toml");
        std::fs::write(&path, "games = 10\nnode = 5\n").unwrap();
        let err = DatagenConfig::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("d.toml") && err.contains("unknown field `node`"),
            "{err}"
        );
        let zero = DatagenConfig {
            games: 0,
            ..DatagenConfig::default()
        };
        assert_eq!(
            zero.check().unwrap_err().to_string(),
            "games: must be at least 1"
        );
        std::fs::write(&path, "games = 10\n[filter]\nskip_plies = 4\n").unwrap();
        let config = DatagenConfig::load(&path).unwrap();
        assert_eq!(config.filter.skip_plies, 4);
        assert!(
            config.filter.skip_noisy,
            "unset filter fields keep their defaults"
        );
    }
}
