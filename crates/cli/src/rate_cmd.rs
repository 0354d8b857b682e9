//! `arbiter rate FILE.pgn...`: a rating list from the games of any PGN files, arbiter's own or
//! other tools' (cutechess, fastchess, Ordo's and BayesElo's inputs), printed as cutechess
//! prints a tournament's standings. The ratings are `arbiter_stats::rate`'s and the table is a
//! tournament's ([`arbiter_records::standings`]); this module reads the files and prints.
//!
//! The files are read by [`arbiter_rules::pgn::TagReader`], which reads the tags a rating needs
//! and skips the moves by their lexical structure: a list is made from files of 100,000 games
//! and more, and replaying every move would cost far more than the rating. A malformed tag pair
//! or a comment never closed is an error naming the file and line.
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

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use arbiter_records::standings::{rating_notes, rating_table};
use arbiter_rules::pgn::{GameTags, TagReader};
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

#[cfg(test)]
mod tests {
    use super::*;

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
