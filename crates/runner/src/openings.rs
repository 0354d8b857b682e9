//! Opening books and the order they are played in.
//!
//! A book is read completely before the run starts, so that a malformed line stops the run
//! with its line number before any engine starts (or, when asked, is skipped with a warning),
//! and so that opening `k` is a pure function of the run seed and `k`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use arbiter_rules::epd::Epd;
use arbiter_rules::pgn::PgnReader;
use arbiter_rules::polyglot::PolyglotBook;
use arbiter_rules::{Game, Move, Odds, Position, RuleSet};

/// A start for a game pair: a position and the book moves both engines are shown before they
/// play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    pub start: Position,
    pub moves: Vec<Move>,
    /// Where it came from, for the PGN and logs: `file.epd:12`, `odds:knight`, `startpos`.
    pub source: String,
}

impl Opening {
    pub fn startpos() -> Opening {
        Opening {
            start: Position::starting(),
            moves: Vec::new(),
            source: "startpos".into(),
        }
    }

    /// The same line with the colours exchanged (see [`Position::mirrored`]): a handicap's
    /// start when its giver takes the other colour.
    pub fn mirrored(&self) -> Opening {
        let flip = |mv: &Move| Move {
            from: mv.from.flip_vertical(),
            to: mv.to.flip_vertical(),
            ..*mv
        };
        Opening {
            start: self.start.mirrored(),
            moves: self.moves.iter().map(flip).collect(),
            source: format!("{} (mirrored)", self.source),
        }
    }

    /// The position the engines start thinking from.
    pub fn position_after_book(&self) -> Position {
        let mut pos = self.start;
        for &mv in &self.moves {
            pos.play_unchecked(mv);
        }
        pos
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BookFormat {
    #[default]
    Epd,
    Pgn,
    /// A Polyglot `.bin` book, walked from the standard position (see [`read_polyglot`]).
    Polyglot,
}

/// How a walk through a Polyglot book picks each move.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BookChoice {
    /// At random in proportion to the entries' weights, as engines play their books.
    #[default]
    Random,
    /// The heaviest entry every time: the book's main line, one opening.
    Best,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BookOrder {
    #[default]
    Sequential,
    Random,
}

/// What the user asked for: cutechess's `-openings file=... format=... order=... plies=... start=...`.
/// Unknown keys are refused like everywhere else in a configuration: a misspelt `fil = "x.epd"`
/// would otherwise play every game from the standard position without a word.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BookSpec {
    #[serde(default)]
    pub file: Option<PathBuf>,
    #[serde(default)]
    pub format: Option<BookFormat>,
    #[serde(default)]
    pub order: BookOrder,
    /// For PGN books: how many plies of each game to use (all if unset); for Polyglot books
    /// how deep each walk goes ([`POLYGLOT_PLIES`] if unset).
    #[serde(default)]
    pub plies: Option<usize>,
    /// For Polyglot books: how each move of a walk is picked.
    #[serde(default)]
    pub choice: Option<BookChoice>,
    /// 1-based index of the first opening to play.
    #[serde(default)]
    pub start: Option<usize>,
    /// Skip malformed entries with a warning instead of refusing to start.
    #[serde(default)]
    pub skip_invalid: bool,
    /// A classical handicap start instead of a book: `pawn-and-move`, `knight`, ...; with a
    /// `giver`, the handicap a book of such starts gives.
    #[serde(default)]
    pub odds: Option<String>,
    /// A handicap match: the engine that gives the odds in every game (the pairs then no
    /// longer mirror each other, and the games are counted one by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub giver: Option<String>,
    /// With a giver: colours alternate game by game, the odds always on the giver's side
    /// (the start mirrored when it plays the other colour), instead of the giver always taking
    /// the side the laws give it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alternate: bool,
}

impl BookSpec {
    /// What can be judged without the file: a book and odds together, and the odds' name.
    pub fn check(&self) -> Result<(), BookError> {
        match (&self.file, &self.odds) {
            // A handicap match may take its starts from a book of that handicap.
            (Some(_), Some(_)) if self.giver.is_none() => Err(BookError::FileAndOdds),
            (None, Some(odds)) if Odds::from_name(odds).is_none() => {
                Err(BookError::Odds(odds.clone()))
            }
            (_, None) if self.giver.is_some() || self.alternate => Err(BookError::GiverWithoutOdds),
            _ => Ok(()),
        }
    }
}

/// A book entry that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    #[error("opening book {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("opening book {path}, line {line}: {reason}")]
    Entry {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("opening book {path} has no openings")]
    Empty { path: String },
    #[error("unknown odds {0:?}; expected one of pawn-and-move, pawn-and-two-moves, knight, rook, queen")]
    Odds(String),
    #[error("openings: give a book file or odds, not both (odds start every game from one handicap position; with a giver, odds names the handicap of the book's starts)")]
    FileAndOdds,
    #[error("openings: giver needs odds, the handicap the giver gives")]
    GiverWithoutOdds,
    #[error("opening {origin}: {reason} before an engine moves; remove it from the book (or set skip_invalid = true to skip such entries)")]
    Finished { origin: String, reason: String },
    #[error("opening book {path}: start={start} but the book has only {count} openings")]
    Start {
        path: String,
        start: usize,
        count: usize,
    },
}

/// The loaded book with its order.
#[derive(Clone, Debug)]
pub struct Book {
    openings: Vec<Opening>,
    /// Each opening mirrored, by the same index, for a handicap whose giver alternates
    /// colours; empty otherwise.
    mirrored: Vec<Opening>,
    order: BookOrder,
    offset: usize,
    /// Entries skipped because `skip_invalid` was set, for the log.
    pub warnings: Vec<String>,
}

impl Book {
    /// Loads what the spec names; without a file or odds, every pair starts from the standard
    /// position.
    pub fn load(spec: &BookSpec) -> Result<Book, BookError> {
        let mut warnings = Vec::new();
        spec.check()?;
        let openings = match (&spec.file, &spec.odds) {
            (None, Some(odds)) => {
                let odds = Odds::from_name(odds).ok_or_else(|| BookError::Odds(odds.clone()))?;
                let starts = odds.starts();
                let several = starts.len() > 1;
                starts
                    .into_iter()
                    .enumerate()
                    .map(|(i, start)| Opening {
                        start,
                        moves: Vec::new(),
                        source: if several {
                            format!("odds:{}:{}", odds.name(), i + 1)
                        } else {
                            format!("odds:{}", odds.name())
                        },
                    })
                    .collect()
            }
            // `check` refused a file with odds.
            (Some(path), _) => {
                let format = spec.format.unwrap_or_else(|| guess_format(path));
                match format {
                    BookFormat::Epd => read_epd(path, spec.skip_invalid, &mut warnings)?,
                    BookFormat::Pgn => {
                        read_pgn(path, spec.plies, spec.skip_invalid, &mut warnings)?
                    }
                    BookFormat::Polyglot => read_polyglot(
                        path,
                        spec.plies.unwrap_or(POLYGLOT_PLIES),
                        spec.choice.unwrap_or_default(),
                    )?,
                }
            }
            (None, None) => vec![Opening::startpos()],
        };
        let path = spec
            .file
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        if openings.is_empty() {
            return Err(BookError::Empty { path });
        }
        let offset = match spec.start {
            None | Some(0) => 0,
            Some(start) if start <= openings.len() => start - 1,
            Some(start) => {
                return Err(BookError::Start {
                    path,
                    start,
                    count: openings.len(),
                })
            }
        };
        let mirrored = if spec.alternate {
            openings.iter().map(Opening::mirrored).collect()
        } else {
            Vec::new()
        };
        Ok(Book {
            openings,
            mirrored,
            order: spec.order,
            offset,
            warnings,
        })
    }

    /// A book of `openings` in order (the book tools' own lists).
    pub fn from_openings(openings: Vec<Opening>) -> Book {
        Book {
            openings,
            mirrored: Vec::new(),
            order: BookOrder::Sequential,
            offset: 0,
            warnings: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.openings.len()
    }

    /// Removes the openings whose game is already over under `rules` once the book moves are
    /// played (mate, stalemate, a dead position, a fifty-move clock already run out): they
    /// would give games in which no engine moves. An error names the first such entry, unless
    /// `skip` (the book's `skip_invalid`) turns each into a warning.
    pub fn drop_finished(&mut self, rules: RuleSet, skip: bool) -> Result<(), BookError> {
        let mut kept = Vec::with_capacity(self.openings.len());
        for opening in std::mem::take(&mut self.openings) {
            let mut game = Game::new(opening.start, rules);
            for &mv in &opening.moves {
                game.play_unchecked(mv);
            }
            match game.outcome() {
                None => kept.push(opening),
                Some(outcome) => {
                    let reason = format!("the game is already over ({})", outcome.termination);
                    if !skip {
                        return Err(BookError::Finished {
                            origin: opening.source,
                            reason,
                        });
                    }
                    self.warnings
                        .push(format!("opening {}: {reason} (skipped)", opening.source));
                }
            }
        }
        if kept.is_empty() {
            return Err(BookError::Empty {
                path: "(every opening is a finished game)".into(),
            });
        }
        self.openings = kept;
        if !self.mirrored.is_empty() {
            self.mirrored = self.openings.iter().map(Opening::mirrored).collect();
        }
        self.offset = self.offset.min(self.openings.len() - 1);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.openings.is_empty()
    }

    /// The opening of pair `pair` in a run with `seed`: sequential from `start`, or a seeded
    /// shuffle of the whole book, reshuffled each time the book is used up.
    pub fn opening_for_pair(&self, seed: u64, pair: u64) -> &Opening {
        &self.openings[self.index_for_pair(seed, pair)]
    }

    /// The opening at `index` of the book (an index from [`Book::index_for_pair`]).
    pub fn opening(&self, index: usize) -> &Opening {
        &self.openings[index % self.openings.len()]
    }

    /// The opening at `index` with the colours exchanged, for a book loaded with
    /// `alternate`; the opening itself otherwise.
    pub fn mirrored_opening(&self, index: usize) -> &Opening {
        match self.mirrored.len() {
            0 => self.opening(index),
            n => &self.mirrored[index % n],
        }
    }

    /// The book index behind [`Book::opening_for_pair`].
    pub fn index_for_pair(&self, seed: u64, pair: u64) -> usize {
        let n = self.openings.len() as u64;
        let index = match self.order {
            BookOrder::Sequential => (self.offset as u64 + pair) % n,
            BookOrder::Random => {
                let cycle = pair / n;
                let position = (pair % n + self.offset as u64) % n;
                shuffled_index(
                    seed ^ cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    n,
                    position,
                )
            }
        };
        index as usize
    }
}

/// Entry `position` of a seeded permutation of `0..n`, computed without building the
/// permutation: a Feistel-like bijection by cycle-walking keeps memory O(1) for huge books.
fn shuffled_index(seed: u64, n: u64, position: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    // A balanced network over 2 * half bits; values >= n are walked on until they land in range.
    let bits = 64 - (n - 1).leading_zeros();
    let half = bits.div_ceil(2);
    let low_mask = (1u64 << half) - 1;
    let mask = (1u64 << (2 * half)) - 1;
    let mut x = position;
    loop {
        // Each Feistel round is a bijection, so the whole network permutes 0..2^(2 half).
        let (mut left, mut right) = (x >> half, x & low_mask);
        for round in 0..4u64 {
            let f = splitmix(seed ^ right ^ (round << 56)) & low_mask;
            let new_right = (left ^ f) & low_mask;
            left = right;
            right = new_right;
        }
        x = ((left << half) | right) & mask;
        if x < n {
            return x;
        }
    }
}

/// splitmix64's output for state `z`: the mixing behind every seeded draw of the books.
pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A book's format from its file name, when the configuration does not say.
pub(crate) fn guess_format(path: &Path) -> BookFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("pgn") => BookFormat::Pgn,
        Some(ext) if ext.eq_ignore_ascii_case("bin") => BookFormat::Polyglot,
        _ => BookFormat::Epd,
    }
}

/// How deep a walk through a Polyglot book goes when `plies` is not given: eight moves each.
pub const POLYGLOT_PLIES: usize = 16;

/// The most distinct lines taken from a Polyglot book.
pub const POLYGLOT_LINES: usize = 4096;

/// A Polyglot book as a list of openings: walks from the standard position, each move picked
/// by `choice` among the book's legal entries (weight 0 entries only when no other is left,
/// as Polyglot does), until `plies` or the book's end. Walk `i` draws from a generator seeded
/// by `i` alone, so the list (and with the run's seed, opening `k`) is the same on every
/// machine; repeated lines are dropped, up to [`POLYGLOT_LINES`] distinct ones.
pub fn read_polyglot(
    path: &Path,
    plies: usize,
    choice: BookChoice,
) -> Result<Vec<Opening>, BookError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| BookError::Io {
        path: name.clone(),
        reason: e.to_string(),
    })?;
    let book = PolyglotBook::from_bytes(&bytes).map_err(|e| BookError::Io {
        path: name.clone(),
        reason: e.to_string(),
    })?;
    let start = Position::starting();
    if book.moves(&start).is_empty() {
        return Err(BookError::Io {
            path: name,
            reason: "it has no move for the standard starting position".to_owned(),
        });
    }
    let mut seen = std::collections::HashSet::new();
    let mut openings = Vec::new();
    let mut fruitless = 0;
    for walk in 0..(8 * POLYGLOT_LINES) as u64 {
        let mut state = splitmix(walk ^ 0x706F_6C79_676C_6F74);
        let mut pos = start;
        let mut moves = Vec::new();
        while moves.len() < plies {
            let choices = book.moves(&pos);
            let Some(&(mv, _)) = (match choice {
                // The first of the heaviest: Polyglot writes them heaviest first.
                BookChoice::Best => choices.iter().rev().max_by_key(|(_, weight)| *weight),
                BookChoice::Random => {
                    state = splitmix(state);
                    weighted(&choices, state)
                }
            }) else {
                break;
            };
            pos.play_unchecked(mv);
            moves.push(mv);
        }
        if seen.insert(moves.clone()) {
            fruitless = 0;
            openings.push(Opening {
                start,
                moves,
                source: format!("{name}#{}", openings.len() + 1),
            });
            if openings.len() == POLYGLOT_LINES || choice == BookChoice::Best {
                break;
            }
        } else {
            fruitless += 1;
            // The book's lines to this depth are (nearly) all found.
            if fruitless == 512 {
                break;
            }
        }
    }
    Ok(openings)
}

/// The entry `draw` lands on with probability proportional to its weight (uniform among
/// weight-0 entries when every weight is 0).
fn weighted(choices: &[(Move, u16)], draw: u64) -> Option<&(Move, u16)> {
    let total: u64 = choices.iter().map(|(_, w)| u64::from(*w)).sum();
    if total == 0 {
        return choices.get((draw % choices.len().max(1) as u64) as usize);
    }
    let mut at = draw % total;
    choices.iter().find(|(_, w)| {
        let w = u64::from(*w);
        if at < w {
            true
        } else {
            at -= w;
            false
        }
    })
}

fn open(path: &Path) -> Result<BufReader<File>, BookError> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| BookError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
}

fn read_epd(
    path: &Path,
    skip_invalid: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Opening>, BookError> {
    let name = path.display().to_string();
    let mut openings = Vec::new();
    for (index, line) in open(path)?.split(b'\n').enumerate() {
        let number = index + 1;
        let line = line.map_err(|e| BookError::Io {
            path: name.clone(),
            reason: e.to_string(),
        })?;
        let text = String::from_utf8_lossy(&line);
        // Editors on Windows start a UTF-8 file with a byte-order mark.
        let text = text.trim().trim_start_matches('\u{feff}').trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        match Epd::parse(text) {
            Ok(epd) => openings.push(Opening {
                start: epd.position,
                moves: Vec::new(),
                source: format!("{name}:{number}"),
            }),
            Err(e) if skip_invalid => {
                warnings.push(format!("opening book {name}, line {number}: {e} (skipped)"))
            }
            Err(e) => {
                return Err(BookError::Entry {
                    path: name,
                    line: number,
                    reason: e.to_string(),
                })
            }
        }
    }
    Ok(openings)
}

fn read_pgn(
    path: &Path,
    plies: Option<usize>,
    skip_invalid: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Opening>, BookError> {
    let name = path.display().to_string();
    let mut openings = Vec::new();
    for game in PgnReader::new(open(path)?) {
        match game {
            Ok(game) => {
                let mut moves = game.moves;
                if let Some(plies) = plies {
                    moves.truncate(plies);
                }
                openings.push(Opening {
                    start: game.start,
                    moves,
                    source: format!("{name}:{}", game.line),
                });
            }
            Err(e) if skip_invalid => warnings.push(format!("opening book {name}: {e} (skipped)")),
            Err(e) => {
                return Err(BookError::Entry {
                    path: name,
                    line: e.line,
                    reason: e.to_string(),
                })
            }
        }
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn shuffle_is_a_permutation() {
        for n in [1u64, 2, 3, 7, 64, 100, 1000] {
            let seen: HashSet<u64> = (0..n).map(|i| shuffled_index(42, n, i)).collect();
            assert_eq!(seen.len() as u64, n);
            assert!(seen.iter().all(|&x| x < n));
        }
        let a: Vec<u64> = (0..100).map(|i| shuffled_index(1, 100, i)).collect();
        let b: Vec<u64> = (0..100).map(|i| shuffled_index(2, 100, i)).collect();
        assert_ne!(a, b, "different seeds give different orders");
        assert_ne!(a, (0..100).collect::<Vec<_>>(), "and not the identity");
    }
}

#[cfg(test)]
mod book_tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str, ext: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(ext).tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn spec(path: &Path) -> BookSpec {
        BookSpec {
            file: Some(path.to_owned()),
            ..BookSpec::default()
        }
    }

    const EPD: &str = "# a comment\n\
        rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n\
        rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
        \n\
        rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1\n";

    #[test]
    fn epd_books_sequential_from_start() {
        let f = file(EPD, ".epd");
        let book = Book::load(&BookSpec {
            start: Some(2),
            ..spec(f.path())
        })
        .unwrap();
        assert_eq!(book.len(), 3);
        let sources: Vec<String> = (0..4)
            .map(|k| book.opening_for_pair(1, k).source.clone())
            .collect();
        let name = f.path().display().to_string();
        assert_eq!(
            sources,
            [
                format!("{name}:3"),
                format!("{name}:5"),
                format!("{name}:2"),
                format!("{name}:3")
            ]
        );
        let random = Book::load(&BookSpec {
            order: BookOrder::Random,
            ..spec(f.path())
        })
        .unwrap();
        let first_cycle: std::collections::HashSet<usize> =
            (0..3).map(|k| random.index_for_pair(9, k)).collect();
        assert_eq!(
            first_cycle.len(),
            3,
            "every opening once before any repeats"
        );
        assert_eq!(
            random.index_for_pair(9, 1),
            random.index_for_pair(9, 1),
            "a pure function of (seed, pair)"
        );
    }

    #[test]
    fn malformed_lines_refuse_or_skip() {
        let f = file(&format!("{EPD}8/8/8 w - -\n"), ".epd");
        let err = Book::load(&spec(f.path())).unwrap_err().to_string();
        assert!(
            err.contains(", line 6:") && err.contains("FEN field 1"),
            "{err}"
        );
        let book = Book::load(&BookSpec {
            skip_invalid: true,
            ..spec(f.path())
        })
        .unwrap();
        assert_eq!(book.len(), 3);
        assert_eq!(book.warnings.len(), 1);
        assert!(book.warnings[0].contains("line 6"));
        let empty = file("# nothing\n", ".epd");
        assert!(Book::load(&spec(empty.path()))
            .unwrap_err()
            .to_string()
            .contains("no openings"));
        let start = Book::load(&BookSpec {
            start: Some(9),
            skip_invalid: true,
            ..spec(f.path())
        });
        assert!(start
            .unwrap_err()
            .to_string()
            .contains("start=9 but the book has only 3"));
    }

    #[test]
    fn pgn_books_cut_to_plies() {
        let pgn = "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n[Event \"b\"]\n\n1. d4 d5 2. c4 *\n";
        let f = file(pgn, ".pgn");
        let book = Book::load(&BookSpec {
            plies: Some(3),
            ..spec(f.path())
        })
        .unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.opening_for_pair(0, 0).moves.len(), 3);
        assert_eq!(book.opening_for_pair(0, 1).moves.len(), 3);
        let after = book.opening_for_pair(0, 0).position_after_book();
        assert_eq!(
            after.fen(),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
        );
        let bad = file("[Event \"x\"]\n\n1. e4 e4 *\n", ".pgn");
        assert!(Book::load(&spec(bad.path()))
            .unwrap_err()
            .to_string()
            .contains("line 3"));
    }

    #[test]
    fn odds_books() {
        let book = Book::load(&BookSpec {
            odds: Some("knight".into()),
            ..BookSpec::default()
        })
        .unwrap();
        assert_eq!(
            book.opening_for_pair(0, 5).start.fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1"
        );
        assert!(Book::load(&BookSpec {
            odds: Some("bishop".into()),
            ..BookSpec::default()
        })
        .is_err());
    }

    /// A byte-order mark is accepted in an EPD book as in a PGN one, even before a comment.
    #[test]
    fn a_byte_order_mark_is_accepted_in_both_formats() {
        let epd = file(&format!("\u{feff}{EPD}"), ".epd");
        assert_eq!(Book::load(&spec(epd.path())).unwrap().len(), 3);
        let pgn = file("\u{feff}[Event \"x\"]\n\n1. e4 e5 *\n", ".pgn");
        assert_eq!(Book::load(&spec(pgn.path())).unwrap().len(), 1);
    }

    fn polyglot(entries: &[(&[&str], &str, u16)]) -> tempfile::NamedTempFile {
        use arbiter_rules::polyglot::{encode_move, polyglot_key, BookEntry};
        let entries = entries
            .iter()
            .map(|(line, mv, weight)| {
                let mut pos = Position::starting();
                for text in *line {
                    let played = arbiter_rules::uci::parse_uci_move(&pos, text).unwrap();
                    pos.play_unchecked(played);
                }
                let mv = arbiter_rules::uci::parse_uci_move(&pos, mv).unwrap();
                BookEntry {
                    key: polyglot_key(&pos),
                    raw_move: encode_move(mv),
                    weight: *weight,
                    learn: 0,
                }
            })
            .collect();
        let mut f = tempfile::Builder::new().suffix(".bin").tempfile().unwrap();
        f.write_all(&PolyglotBook::from_entries(entries).to_bytes())
            .unwrap();
        f
    }

    fn lines(book: &Book) -> Vec<String> {
        let mut lines: Vec<String> = (0..book.len())
            .map(|i| {
                let opening = book.opening(i);
                let mut pos = opening.start;
                let mut text = Vec::new();
                for &mv in &opening.moves {
                    text.push(arbiter_rules::uci::move_to_uci(Some(mv)));
                    pos.play_unchecked(mv);
                }
                text.join(" ")
            })
            .collect();
        lines.sort();
        lines
    }

    /// A Polyglot book is walked into its distinct lines (weighted at random, or the main line
    /// with `best`), to `plies`; a book that is not one, or that lacks the start, is refused.
    #[test]
    fn a_polyglot_book_is_walked_into_its_lines() {
        let book = polyglot(&[
            (&[], "e2e4", 3),
            (&[], "d2d4", 1),
            (&["e2e4"], "e7e5", 2),
            (&["e2e4"], "c7c5", 2),
            (&["d2d4"], "d7d5", 1),
            (&["e2e4", "e7e5"], "g1f3", 1),
        ]);
        let spec = |plies, choice| BookSpec {
            file: Some(book.path().to_owned()),
            plies,
            choice,
            ..BookSpec::default()
        };
        let all = Book::load(&spec(None, None)).unwrap();
        assert_eq!(
            lines(&all),
            ["d2d4 d7d5", "e2e4 c7c5", "e2e4 e7e5 g1f3"],
            "every line, each to the book's end"
        );
        assert!(all.opening(0).source.ends_with(".bin#1"));
        let short = Book::load(&spec(Some(1), None)).unwrap();
        assert_eq!(lines(&short), ["d2d4", "e2e4"]);
        let best = Book::load(&spec(None, Some(BookChoice::Best))).unwrap();
        assert_eq!(
            lines(&best),
            ["e2e4 e7e5 g1f3"],
            "the heaviest, the first of equals"
        );

        let mut torn = tempfile::Builder::new().suffix(".bin").tempfile().unwrap();
        torn.write_all(&[0; 20]).unwrap();
        let err = Book::load(&BookSpec {
            file: Some(torn.path().to_owned()),
            ..BookSpec::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("20 bytes is not a whole number"), "{err}");
        let elsewhere = polyglot(&[(&["e2e4"], "e7e5", 1)]);
        let err = Book::load(&BookSpec {
            file: Some(elsewhere.path().to_owned()),
            ..BookSpec::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no move for the standard starting position"),
            "{err}"
        );
    }
}
