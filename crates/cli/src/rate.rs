//! `arbiter rate FILE.pgn...`: a rating list from the games of any PGN files, arbiter's own or
//! other tools' (cutechess, fastchess, Ordo's and BayesElo's inputs), printed as cutechess
//! prints a tournament's standings. The ratings are `arbiter_stats::rate`'s and the table is a
//! tournament's ([`arbiter_runner::standings`]); this module reads the files and prints.
//!
//! # Why the PGN is not read by the rules crate's reader
//! [`arbiter_rules::pgn::PgnReader`] resolves every move against the position, which is what
//! replaying or checking a game needs and costs far more than a rating list can afford: a
//! rating needs three tags of each game, and a list is made from files of 100,000 games and
//! more. [`TagReader`] reads only the tag pairs, and skips movetext by its lexical structure
//! (comments in braces, possibly over several lines; `;` comments; variations; `%` escape
//! lines), which is all it takes to find where each game begins. A tag pair that is not
//! `[Name "value"]` on one line, or a comment never closed, is an error naming the file and
//! line, as the full reader would say.
//!
//! Players are told apart by the bytes of their names, not by how they print: PGN is
//! specified as Latin-1 and older files are written so, and two names that are not UTF-8 are
//! two players even when they differ only in those bytes (Latin-1 "Müller" and "Mäller"). A
//! name that is not UTF-8 is shown with its other bytes escaped as `\xNN` (`M\xfcller`).
//!
//! The result is the `Result` tag's (cutechess and fastchess write the same in the tag and
//! after the moves); without the tag, the movetext's termination marker. Games still running
//! (`*`), games with any other result, and games of an engine against itself are skipped and
//! counted.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use arbiter_runner::standings::{rating_notes, rating_table};
use arbiter_stats::{rate, Anchor, Encounter, RatingList, StatsError, Trinomial};
use serde_json::{json, Value};

#[derive(clap::Args)]
#[command(
    after_help = "Ratings are maximum-likelihood Elo (Bradley-Terry on the logistic scale, a draw \
                  counting half a point), so two engines are rated exactly as far apart as their \
                  match Elo. +/- is the 95% interval; LOS is the likelihood of superiority over \
                  the next engine of the list. Engines that won or lost every game against part \
                  of the list have no finite rating: their group is rated with BayesElo's prior \
                  of 2 virtual draws between every two engines that played.\nExit status: 0 = list printed, 2 = unreadable \
                  or malformed file, unknown anchor, or no games."
)]
pub struct RateArgs {
    /// PGN files to read; games of every file are rated together.
    #[arg(required = true, value_name = "FILE.pgn")]
    files: Vec<PathBuf>,
    /// Fix one engine's rating, e.g. --anchor "Stockfish 16=3500" [default: mean rating 0].
    #[arg(long, value_name = "NAME=ELO", value_parser = parse_anchor, allow_hyphen_values = true)]
    anchor: Option<(String, f64)>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

fn parse_anchor(text: &str) -> Result<(String, f64), String> {
    let expected = "expected NAME=ELO, e.g. --anchor \"Stockfish 16=3500\"";
    let (name, elo) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("{text:?}: {expected}"))?;
    let elo: f64 = elo
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: the rating {elo:?} is not a number; {expected}"))?;
    if !elo.is_finite() {
        return Err(format!("{text:?}: the rating must be a finite number"));
    }
    if name.is_empty() {
        return Err(format!("{text:?}: the engine name is empty; {expected}"));
    }
    Ok((name.to_owned(), elo))
}

pub fn run(args: &RateArgs) -> anyhow::Result<ExitCode> {
    let mut tally = Tally::default();
    for path in &args.files {
        tally.read_file(path)?;
    }
    let anchor = match &args.anchor {
        None => Anchor::MeanZero,
        Some((name, elo)) => Anchor::Engine {
            engine: tally.engine_named(name)?,
            elo: *elo,
        },
    };
    let list = match rate(&tally.names, &tally.encounters(), anchor) {
        Err(StatsError::NoGames) => bail!(
            "no games to rate in {}: {}",
            files(&args.files),
            tally
                .skipped_text()
                .unwrap_or_else(|| "the files hold no game".into())
        ),
        other => other?,
    };
    if args.json {
        outln!("{}", to_json(&list, &tally, args))?;
    } else {
        out!("{}", rating_table(&list))?;
        out!("{}", footer(&list, &tally, args))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn files(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The results of every game read, per pairing, and what was skipped.
#[derive(Default)]
struct Tally {
    /// How each engine's name is shown: [`display_name`] of its bytes.
    names: Vec<String>,
    /// Engines by the bytes of their names.
    index: HashMap<Vec<u8>, usize>,
    /// Keyed by (lower, higher) engine index, counted from the lower's side.
    results: HashMap<(usize, usize), Trinomial>,
    rated: u64,
    unfinished: u64,
    other_result: u64,
    self_play: u64,
}

impl Tally {
    fn read_file(&mut self, path: &Path) -> anyhow::Result<()> {
        let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut reader = TagReader::new(BufReader::with_capacity(1 << 16, file));
        loop {
            let game = reader
                .next_game()
                .map_err(|e| anyhow!("{}:{}: {}", path.display(), e.line, e.what))?;
            let Some(game) = game else { return Ok(()) };
            let line = game.line;
            self.add(game)
                .map_err(|what| anyhow!("{}:{line}: {what}", path.display()))?;
        }
    }

    fn add(&mut self, game: GameTags) -> Result<(), String> {
        let missing = |tag: &str| {
            format!("the game has no {tag} tag; a rating needs White, Black and Result")
        };
        let white = game.white.as_deref().ok_or_else(|| missing("White"))?;
        let black = game.black.as_deref().ok_or_else(|| missing("Black"))?;
        let result = game
            .result
            .as_deref()
            .map(|r| std::str::from_utf8(r).unwrap_or(""))
            .or(game.termination);
        // White's score in half points.
        let white_half_points = match result {
            Some("1-0") => 2,
            Some("0-1") => 0,
            Some("1/2-1/2") => 1,
            Some("*") => {
                self.unfinished += 1;
                return Ok(());
            }
            _ => {
                self.other_result += 1;
                return Ok(());
            }
        };
        if white == black {
            self.self_play += 1;
            return Ok(());
        }
        let (w, b) = (self.engine(white), self.engine(black));
        let (key, half_points) = if w < b {
            ((w, b), white_half_points)
        } else {
            ((b, w), 2 - white_half_points)
        };
        let cell = self.results.entry(key).or_default();
        match half_points {
            2 => cell.wins += 1,
            1 => cell.draws += 1,
            _ => cell.losses += 1,
        }
        self.rated += 1;
        Ok(())
    }

    fn engine(&mut self, name: &[u8]) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(display_name(name));
        self.index.insert(name.to_owned(), i);
        i
    }

    /// The engine `--anchor` names: by its name's bytes, or as the list shows it.
    fn engine_named(&self, name: &str) -> anyhow::Result<usize> {
        if let Some(&i) = self.index.get(name.as_bytes()) {
            return Ok(i);
        }
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return Ok(i);
        }
        let near: Vec<&String> = self
            .names
            .iter()
            .filter(|n| n.eq_ignore_ascii_case(name))
            .collect();
        if let Some(n) = near.first() {
            bail!("--anchor: no engine is called {name:?}; did you mean {n:?}?");
        }
        let mut known: Vec<&str> = self.names.iter().map(String::as_str).collect();
        known.sort_unstable();
        let shown = known.len().min(20);
        let more = if known.len() > shown {
            format!(" and {} more", known.len() - shown)
        } else {
            String::new()
        };
        bail!(
            "--anchor: no engine is called {name:?}; the games' engines are {}{more}",
            known[..shown]
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    fn encounters(&self) -> Vec<Encounter> {
        self.results
            .iter()
            .map(|(&(a, b), &t)| Encounter::games(a, b, t))
            .collect()
    }

    /// What was skipped, as a clause; `None` when nothing was.
    fn skipped_text(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.unfinished, "unfinished (*)"),
            (self.other_result, "with no or another result"),
            (self.self_play, "of an engine against itself"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| format!("skipped {}", parts.join(", ")))
    }
}

/// A name as the list shows it: itself when it is UTF-8, else its valid parts with every other
/// byte escaped as `\xNN` (and a backslash as `\\`, so that two escaped names never read
/// the same).
fn display_name(bytes: &[u8]) -> String {
    if let Ok(name) = std::str::from_utf8(bytes) {
        return name.to_owned();
    }
    let mut shown = String::new();
    for chunk in bytes.utf8_chunks() {
        shown.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            shown.push_str(&format!("\\x{b:02x}"));
        }
    }
    shown
}

/// What was read, the model and the anchor, and the notes a user must not miss.
fn footer(list: &RatingList, tally: &Tally, args: &RateArgs) -> String {
    let mut out = format!(
        "{} games of {} engines from {}",
        tally.rated,
        tally.names.len(),
        match args.files.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        }
    );
    if let Some(skipped) = tally.skipped_text() {
        out.push_str(&format!("; {skipped}"));
    }
    out.push('\n');
    let anchor = match &args.anchor {
        None => "mean rating 0".to_owned(),
        Some((name, elo)) => format!("{name} anchored at {elo}"),
    };
    out.push_str(&format!(
        "Maximum-likelihood Elo (Bradley-Terry, logistic scale, draws as half points), {anchor}; \
         +/- is the 95% interval; LOS: likelihood of superiority over the next engine\n"
    ));
    for note in rating_notes(list) {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

fn to_json(list: &RatingList, tally: &Tally, args: &RateArgs) -> Value {
    let engines: Vec<Value> = list
        .engines
        .iter()
        .enumerate()
        .map(|(rank, e)| {
            let (lo, hi) = e.interval();
            json!({
                "rank": rank + 1,
                "name": e.name,
                "elo": e.elo,
                "half_width": e.half_width,
                "elo_ci": [lo, hi],
                "games": e.games(),
                "wins": e.results.wins,
                "draws": e.results.draws,
                "losses": e.results.losses,
                "score": e.score(),
                "draw_ratio": e.draw_ratio(),
                "los_next": e.los_next,
                "group": e.group,
                "separated": e.separated,
            })
        })
        .collect();
    json!({
        "model": "bradley-terry",
        "draws": "half point",
        "interval": 0.95,
        "anchor": match &args.anchor {
            None => json!({ "mean": 0.0 }),
            Some((name, elo)) => json!({ "name": name, "elo": elo }),
        },
        "files": args.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "games": tally.rated,
        "skipped": {
            "unfinished": tally.unfinished,
            "other_result": tally.other_result,
            "self_play": tally.self_play,
        },
        "groups": list.groups,
        "engines": engines,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading tags

/// The tags a rating needs from one game, and where the game began.
#[derive(Debug, Default, PartialEq)]
struct GameTags {
    line: usize,
    /// Tag values as bytes: a name need not be UTF-8.
    white: Option<Vec<u8>>,
    black: Option<Vec<u8>>,
    result: Option<Vec<u8>>,
    /// The last termination marker of the movetext (outside comments and variations).
    termination: Option<&'static str>,
}

/// A malformed line: which, and what was wrong.
#[derive(Debug)]
struct TagError {
    line: usize,
    what: String,
}

/// Reads PGN games' tag pairs and skips their movetext; see the module documentation.
struct TagReader<R> {
    input: R,
    buffer: Vec<u8>,
    line_number: usize,
    /// The game being read.
    game: Option<GameTags>,
    /// Games finished by their termination marker or by the next game's tags, in order.
    done: VecDeque<GameTags>,
    /// Past the game's tags: a tag pair now begins the next game.
    in_movetext: bool,
    /// The line of a `{` not yet closed.
    comment_since: Option<usize>,
    /// Variation nesting: termination markers inside variations do not count.
    depth: usize,
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

impl<R: BufRead> TagReader<R> {
    fn new(input: R) -> TagReader<R> {
        TagReader {
            input,
            buffer: Vec::with_capacity(256),
            line_number: 0,
            game: None,
            done: VecDeque::new(),
            in_movetext: false,
            comment_since: None,
            depth: 0,
        }
    }

    fn error(&self, line: usize, what: impl Into<String>) -> TagError {
        TagError {
            line,
            what: what.into(),
        }
    }

    fn next_game(&mut self) -> Result<Option<GameTags>, TagError> {
        loop {
            if let Some(game) = self.done.pop_front() {
                return Ok(Some(game));
            }
            self.buffer.clear();
            let read = self
                .input
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| self.error(self.line_number + 1, format!("cannot read: {e}")))?;
            if read == 0 {
                if let Some(line) = self.comment_since {
                    return Err(self.error(
                        line,
                        "a comment opened with { on this line is never closed with }",
                    ));
                }
                self.in_movetext = false;
                return Ok(self.game.take());
            }
            self.line_number += 1;
            let line = std::mem::take(&mut self.buffer);
            let read = self.line(&line);
            self.buffer = line;
            read?;
        }
    }

    /// Reads one line, queueing the games it finishes.
    fn line(&mut self, mut text: &[u8]) -> Result<(), TagError> {
        if self.line_number == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        if self.comment_since.is_some() {
            if let Some(end) = text.iter().position(|&b| b == b'}') {
                self.comment_since = None;
                self.movetext(&text[end + 1..]);
            }
            return Ok(());
        }
        if text.first() == Some(&b'%') {
            return Ok(());
        }
        let Some(start) = text.iter().position(|b| !b.is_ascii_whitespace()) else {
            return Ok(());
        };
        if text[start] == b'[' {
            // A game whose movetext had no termination marker ends at the next tags.
            if self.in_movetext {
                self.done.extend(self.game.take());
            }
            if self.game.is_none() {
                self.begin_game();
            }
            self.tags(text, start)
        } else {
            self.movetext(&text[start..]);
            Ok(())
        }
    }

    fn begin_game(&mut self) {
        self.game = Some(GameTags {
            line: self.line_number,
            ..GameTags::default()
        });
        self.in_movetext = false;
        self.depth = 0;
    }

    /// Tag pairs from `start`; anything after them on the line is movetext.
    fn tags(&mut self, text: &[u8], mut pos: usize) -> Result<(), TagError> {
        loop {
            while pos < text.len() && text[pos].is_ascii_whitespace() {
                pos += 1;
            }
            if pos == text.len() {
                return Ok(());
            }
            if text[pos] != b'[' {
                self.movetext(&text[pos..]);
                return Ok(());
            }
            let (name, value, end) = tag_pair(text, pos).ok_or_else(|| {
                let shown = String::from_utf8_lossy(text);
                let shown: String = shown.trim().chars().take(80).collect();
                self.error(
                    self.line_number,
                    format!("bad tag pair {shown:?}; expected [Name \"value\"] on one line"),
                )
            })?;
            if let Some(game) = self.game.as_mut() {
                let slot = match name {
                    b"White" => Some(&mut game.white),
                    b"Black" => Some(&mut game.black),
                    b"Result" => Some(&mut game.result),
                    _ => None,
                };
                // The first of duplicated tags counts, as in the full reader.
                if let Some(slot) = slot.filter(|s| s.is_none()) {
                    *slot = Some(value);
                }
            }
            pos = end;
        }
    }

    /// Skips movetext up to the termination marker, which ends the game; comments may run on
    /// to later lines. Movetext with no tags before it begins a game of its own.
    fn movetext(&mut self, text: &[u8]) {
        let is_break = |b: u8| b.is_ascii_whitespace() || b"{};()".contains(&b);
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                b'{' => match text[i + 1..].iter().position(|&b| b == b'}') {
                    Some(close) => i += close + 2,
                    None => {
                        self.comment_since = Some(self.line_number);
                        return;
                    }
                },
                b';' => return,
                b'(' => {
                    self.depth += 1;
                    i += 1;
                }
                b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    i += 1;
                }
                b if b.is_ascii_whitespace() => i += 1,
                _ => {
                    let start = i;
                    i += 1;
                    while i < text.len() && !is_break(text[i]) {
                        i += 1;
                    }
                    if self.game.is_none() {
                        self.begin_game();
                    }
                    self.in_movetext = true;
                    if self.depth > 0 {
                        continue;
                    }
                    let token = &text[start..i];
                    if let Some(result) = RESULTS.iter().find(|r| r.as_bytes() == token) {
                        if let Some(mut game) = self.game.take() {
                            game.termination = Some(result);
                            self.done.push_back(game);
                        }
                        self.in_movetext = false;
                    }
                }
            }
        }
    }
}

/// `[Name "value"]` at `text[pos]`: the name, the unescaped value and the index after `]`.
fn tag_pair(text: &[u8], pos: usize) -> Option<(&[u8], Vec<u8>, usize)> {
    let mut i = pos + 1;
    let skip_space = |i: &mut usize| {
        while *i < text.len() && (text[*i] == b' ' || text[*i] == b'\t') {
            *i += 1;
        }
    };
    skip_space(&mut i);
    let name_start = i;
    while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
        i += 1;
    }
    let name = &text[name_start..i];
    if name.is_empty() {
        return None;
    }
    skip_space(&mut i);
    if text.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    let mut value = Vec::new();
    loop {
        match *text.get(i)? {
            b'"' => break,
            b'\\' => {
                value.push(*text.get(i + 1)?);
                i += 2;
            }
            b'\n' | b'\r' => return None,
            b => {
                value.push(b);
                i += 1;
            }
        }
    }
    i += 1;
    skip_space(&mut i);
    if text.get(i) != Some(&b']') {
        return None;
    }
    Some((name, value, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_rules::pgn::PgnReader;

    fn read_all(text: &str) -> Result<Vec<GameTags>, TagError> {
        let mut reader = TagReader::new(text.as_bytes());
        let mut games = Vec::new();
        while let Some(game) = reader.next_game()? {
            games.push(game);
        }
        Ok(games)
    }

    /// cutechess's PGN: seven tags and its own, `{+0.30/10 0.1s}` comments, a result line.
    const CUTECHESS: &str = "[Event \"?\"]\n[Site \"?\"]\n[Date \"2024.05.01\"]\n[Round \"1\"]\n\
        [White \"Alpha 1.0\"]\n[Black \"Beta\"]\n[Result \"1-0\"]\n[GameDuration \"00:00:02\"]\n\
        [PlyCount \"5\"]\n[TimeControl \"1+0.01\"]\n\n\
        1. e4 {+0.30/10 0.1s} e5 {-0.25/9 0.1s} 2. Qh5 {+0.10/8 0.1s, White wins by adjudication}\n\
        1-0\n\n\
        [Event \"?\"]\n[White \"Beta\"]\n[Black \"Alpha 1.0\"]\n[Result \"1/2-1/2\"]\n\n\
        1. d4 {book} d5 {book, over\n[two lines] not a tag\n}\n\
        2. c4 (2. Nf3 1-0) 2... e6 1/2-1/2\n\n";

    /// fastchess's PGN: FEN/SetUp, Termination, CRLF line ends, a BOM, a `;` comment, `%`.
    const FASTCHESS: &str = "\u{feff}[Event \"Fastchess Tournament\"]\r\n\
        [White \"Gamma\"]\r\n[Black \"Alpha 1.0\"]\r\n[Result \"0-1\"]\r\n\
        [FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\"]\r\n\
        [SetUp \"1\"]\r\n[Termination \"time forfeit\"]\r\n\r\n\
        1... c5 {+0.20/12, 0.050s} ; a rest-of-line comment 1-0\r\n\
        %escaped line\r\n2. Nf3 {-0.1/1 0.01s} 0-1\r\n\r\n\
        [White \"Gamma\"][Black \"Beta\"][Result \"*\"]\r\n\r\n*\r\n";

    #[test]
    fn reads_cutechess_and_fastchess_tags() {
        let games = read_all(CUTECHESS).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].white.as_deref(), Some(&b"Alpha 1.0"[..]));
        assert_eq!(games[0].result.as_deref(), Some(&b"1-0"[..]));
        assert_eq!(games[0].termination, Some("1-0"));
        assert_eq!(games[0].line, 1);
        assert_eq!(games[1].line, 15);
        // The variation's 1-0 is not the game's.
        assert_eq!(games[1].termination, Some("1/2-1/2"));
        let games = read_all(FASTCHESS).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].white.as_deref(), Some(&b"Gamma"[..]));
        assert_eq!(games[0].result.as_deref(), Some(&b"0-1"[..]));
        // The 1-0 in the ; comment does not count.
        assert_eq!(games[0].termination, Some("0-1"));
        assert_eq!(games[1].black.as_deref(), Some(&b"Beta"[..]));
        assert_eq!(games[1].result.as_deref(), Some(&b"*"[..]));
    }

    /// The tags read agree with the rules crate's full reader on the same text.
    #[test]
    fn agrees_with_the_full_reader() {
        for text in [CUTECHESS, FASTCHESS] {
            let full: Vec<_> = PgnReader::new(text.as_bytes())
                .map(|g| g.expect("the fixture is valid PGN"))
                .collect();
            let fast = read_all(text).unwrap();
            assert_eq!(full.len(), fast.len());
            for (f, t) in full.iter().zip(&fast) {
                assert_eq!(f.tag("White").map(str::as_bytes), t.white.as_deref());
                assert_eq!(f.tag("Black").map(str::as_bytes), t.black.as_deref());
                assert_eq!(f.tag("Result").map(str::as_bytes), t.result.as_deref());
                assert_eq!(Some(f.result), t.termination);
                assert_eq!(f.line, t.line);
            }
        }
    }

    #[test]
    fn escapes_and_games_without_tags() {
        let games = read_all(
            "[White \"A \\\"quoted\\\" \\\\ name\"]\n[Black \"B\"]\n\n1. e4 *\n\n1. d4 1-0\n",
        )
        .unwrap();
        assert_eq!(
            games[0].white.as_deref(),
            Some(&b"A \"quoted\" \\ name"[..])
        );
        assert_eq!(games[1].white, None);
        assert_eq!(games[1].termination, Some("1-0"));
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let err = read_all("[White \"A\"]\n[Black \"B]\n\n1-0\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.what.contains("bad tag pair"), "{}", err.what);
        let err =
            read_all("[White \"A\"]\n[Black \"B\"]\n\n1. e4 {never closed\n1-0\n").unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.what.contains("never closed"), "{}", err.what);
        let err = read_all("[White A]\n").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn anchors_parse_at_the_last_equals_sign() {
        assert_eq!(
            parse_anchor("Engine=v2=3400").unwrap(),
            ("Engine=v2".to_owned(), 3400.0)
        );
        assert_eq!(parse_anchor("x=-12.5").unwrap(), ("x".to_owned(), -12.5));
        assert!(parse_anchor("NoRating").is_err());
        assert!(parse_anchor("=100").is_err());
        assert!(parse_anchor("A=strong").is_err());
        assert!(parse_anchor("A=inf").is_err());
    }
}
