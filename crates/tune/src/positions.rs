//! Labelled positions: what Texel tuning fits the evaluation to, read from the files engine
//! authors already have.
//!
//! A labelled position is a position and how its game ended, from White's side. The formats
//! in circulation differ only in how they spell the label, so [`read_positions`] takes any of
//! them, by content rather than by file name:
//!
//! - `FEN [1.0]`: one position a line, the label 1.0, 0.5 or 0.0 (or `1-0`, `1/2-1/2`, `0-1`)
//!   in brackets. `arbiter datagen` writes this (see [`write_position`]); so does Ethereal.
//! - `FEN | score | result`: the text format of bullet and marlinflow. The score is a search's
//!   centipawns from White's side (kept as [`LabeledPosition::score`]); the result is a number
//!   (see below).
//! - EPD with the result in `c9`: `... c9 "1-0";`, as in Zurichess's `quiet-labeled.epd`.
//! - PGN: every finished game's positions, filtered by [`Filter`] (games with the result `*`
//!   have no label and are skipped). A move comment that starts with a score in pawns from the
//!   mover's side, as cutechess, fastchess and arbiter write it (`+0.31/20 0.554s`), is the
//!   position's search score. A file is PGN when its first line that is not blank
//!   starts with `[` (a tag) or a move number (`1.`).
//!
//! **Numeric labels** (`| 0.5`, `[1]`) come on two scales: White's score (1, 0.5, 0) and
//! win/draw/loss (1, 0, -1). A `0` is a loss on the first and a draw on the second, so the
//! scale is decided per file from all its labels ([`Labels`]): a `0.5` says score, a `-1` says
//! win/draw/loss, and a file holding both is refused at the first label that contradicts the
//! scale the earlier ones set (a file read on the wrong scale turns every loss into a draw, or
//! every draw into a loss, and the fit that follows is silently wrong). A file whose numbers
//! are only 1 and 0 says neither; written with a point (`1.0`, `0.0`, as bullet and marlinflow
//! write them) it is read as scores, as whole numbers it is refused, since it holds either no
//! draws or no losses and nothing tells which. PGN results (`1-0`, `1/2-1/2`, `0-1`) mean the
//! same on both scales and may stand beside numbers.
//!
//! Blank lines and lines starting with `#` are skipped in the line formats. The positions of a
//! game are those a move was played from, because the filter's questions are about that move
//! (was it a capture? what did the engine's search from there say?). A game's last position
//! has no such move; it is checkmate, stalemate or a drawn position, none of which a fit of the
//! evaluation wants.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use arbiter_rules::epd::Epd;
use arbiter_rules::pgn::{PgnError, PgnGame, PgnReader};
use arbiter_rules::{Color, Position};

/// A position and how its game ended, from White's side: 1.0, 0.5 or 0.0.
#[derive(Clone, Debug, PartialEq)]
pub struct LabeledPosition {
    pub position: Position,
    pub result: f32,
    /// What a search from this position said, in centipawns from White's side, when the file
    /// has it: a second label, denser than the result (one game's result labels all of its
    /// positions alike, a search score each on its own), which a fit may blend in.
    pub score: Option<i32>,
}

/// Which positions of a game are worth fitting (Texel wants quiet, decided-by-play positions).
///
/// The default keeps what the Texel literature keeps: it drops the first 8 plies (the opening
/// book's and the first replies to it, which the book chose rather than the evaluation), and it
/// sets all three `skip_` switches.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    /// Plies from the game's start (its FEN, or the standard position) that are dropped.
    pub skip_plies: u32,
    /// A position with the side to move in check is all tactics: the static evaluation of
    /// it means little.
    pub skip_in_check: bool,
    /// A position whose played move was a capture or a promotion is in the middle of an
    /// exchange: its static evaluation is off by the material about to change hands.
    pub skip_noisy: bool,
    /// Once an engine announces mate (a move comment `+M5/12 ...` or `-M3/20 ...`), the rest of
    /// the game is decided by search, not by evaluation: that position and all later ones are
    /// dropped.
    pub skip_mate_scores: bool,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            skip_plies: 8,
            skip_in_check: true,
            skip_noisy: true,
            skip_mate_scores: true,
        }
    }
}

impl Filter {
    /// Everything kept: for files that were filtered when they were written.
    pub fn none() -> Filter {
        Filter {
            skip_plies: 0,
            skip_in_check: false,
            skip_noisy: false,
            skip_mate_scores: false,
        }
    }
}

/// A labelled-positions file that cannot be read: which file, where, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    #[error("{file}: cannot read: {error}")]
    Io { file: String, error: io::Error },
    #[error("{file}, line {line}: {reason}")]
    Line {
        file: String,
        line: usize,
        reason: String,
    },
    /// The PGN error names the game, line and column.
    #[error("{file}: {error}")]
    Pgn { file: String, error: PgnError },
}

/// How the labels of a file were read: which scale its numbers were taken on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Labels {
    /// Every label a game result (`1-0`, `1/2-1/2`, `0-1`): PGN, EPD's `c9`, `[0-1]`.
    Results,
    /// Numbers as White's score: 1 a win, 0.5 a draw, 0 a loss.
    Score,
    /// Numbers as win/draw/loss: 1, 0, -1.
    WinDrawLoss,
}

impl std::fmt::Display for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Labels::Results => "game results (1-0, 1/2-1/2, 0-1)",
            Labels::Score => "White's score (1 win, 0.5 draw, 0 loss)",
            Labels::WinDrawLoss => "win/draw/loss (1 win, 0 draw, -1 loss)",
        })
    }
}

/// A file's labelled positions and the scale its labels were read on.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionsFile {
    pub positions: Vec<LabeledPosition>,
    pub labels: Labels,
}

/// Reads every labelled position of a file, by its content (see the module docs for the
/// formats). PGN games are filtered by `filter`; the line formats are taken as they are, since
/// whoever wrote them chose their positions already.
pub fn read_positions(
    path: &Path,
    filter: &Filter,
) -> Result<Vec<LabeledPosition>, PositionsError> {
    read_labelled(path, filter).map(|file| file.positions)
}

/// [`read_positions`], also saying which scale the labels were read on.
pub fn read_labelled(path: &Path, filter: &Filter) -> Result<PositionsFile, PositionsError> {
    let file = path.display().to_string();
    let io_error = |error| PositionsError::Io {
        file: file.clone(),
        error,
    };
    let mut input = BufReader::new(File::open(path).map_err(io_error)?);
    if is_pgn(&mut input).map_err(io_error)? {
        let mut positions = Vec::new();
        for game in PgnReader::new(input) {
            let game = game.map_err(|error| PositionsError::Pgn {
                file: file.clone(),
                error,
            })?;
            positions.extend(positions_of(&game, filter));
        }
        return Ok(PositionsFile {
            positions,
            labels: Labels::Results,
        });
    }
    let mut positions = Vec::new();
    let mut scale = ScaleEvidence::default();
    // Where the `0` labels are: their meaning waits for the whole file.
    let mut zeros = Vec::new();
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        if input.read_line(&mut line).map_err(io_error)? == 0 {
            break;
        }
        number += 1;
        let at_line = |reason| PositionsError::Line {
            file: file.clone(),
            line: number,
            reason,
        };
        let Some((position, label, score)) = parse_line(&line).map_err(at_line)? else {
            continue;
        };
        let result = match label {
            Label::Result(result) => result,
            Label::Number(value, text) => {
                scale.see(value, &text, number).map_err(at_line)?;
                match value {
                    Number::One => 1.0,
                    Number::Half => 0.5,
                    Number::MinusOne => 0.0,
                    Number::Zero => {
                        zeros.push(positions.len());
                        0.0
                    }
                }
            }
        };
        positions.push(LabeledPosition {
            position,
            result,
            score,
        });
    }
    let labels = scale.labels().map_err(|reason| PositionsError::Line {
        file: file.clone(),
        line: scale.first_zero.map_or(number, |(line, _)| line),
        reason,
    })?;
    if labels == Labels::WinDrawLoss {
        for i in zeros {
            positions[i].result = 0.5;
        }
    }
    Ok(PositionsFile { positions, labels })
}

/// The positions of one PGN game text, filtered. (Several games in the text are read in turn.)
pub fn positions_of_game(
    pgn: &str,
    filter: &Filter,
) -> Result<Vec<LabeledPosition>, PositionsError> {
    let mut positions = Vec::new();
    for game in PgnReader::new(pgn.as_bytes()) {
        let game = game.map_err(|error| PositionsError::Pgn {
            file: "PGN text".to_owned(),
            error,
        })?;
        positions.extend(positions_of(&game, filter));
    }
    Ok(positions)
}

/// The positions of a game already read, filtered; none for an unfinished game (`*`).
pub fn positions_of(game: &PgnGame, filter: &Filter) -> Vec<LabeledPosition> {
    let Some(result) = white_score(game.result) else {
        return Vec::new();
    };
    let mut positions = Vec::new();
    let mut position = game.start;
    for (ply, (&mv, comment)) in game.moves.iter().zip(&game.comments).enumerate() {
        if filter.skip_mate_scores && comment.as_deref().is_some_and(is_mate_score) {
            break;
        }
        let skipped = (ply as u64) < u64::from(filter.skip_plies)
            || (filter.skip_in_check && position.is_check())
            || (filter.skip_noisy && mv.is_tactical());
        if !skipped {
            let score = comment
                .as_deref()
                .and_then(pawns_score)
                .map(|cp| match position.turn() {
                    Color::White => cp,
                    Color::Black => -cp,
                });
            positions.push(LabeledPosition {
                position,
                result,
                score,
            });
        }
        position.play_unchecked(mv);
    }
    positions
}

/// One line of the datagen format: `FEN [1.0]`.
pub fn write_position(out: &mut impl Write, p: &LabeledPosition) -> io::Result<()> {
    writeln!(out, "{} [{:.1}]", p.position.fen(), p.result)
}

/// Positions seen before (by Zobrist key): each kept once. The key leaves out the move
/// counters, so one placement reached at different move numbers counts as one position, as a
/// fit of the evaluation (which does not see the counters) should count it.
#[derive(Clone, Debug, Default)]
pub struct Dedup {
    seen: HashSet<u64>,
}

impl Dedup {
    pub fn new() -> Dedup {
        Dedup::default()
    }

    /// Whether `pos` is new (and now remembered).
    pub fn insert(&mut self, pos: &Position) -> bool {
        self.seen.insert(pos.hash())
    }

    /// How many distinct positions were seen.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// Whether the first line that is not blank starts a PGN game, peeking without consuming.
fn is_pgn(input: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let text = buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(buf);
        let skip = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let text = &text[skip..];
        if text.is_empty() {
            // A buffer of only blank space: consume it and look further.
            let len = buf.len();
            input.consume(len);
            continue;
        }
        let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
        return Ok(text[0] == b'[' || (digits > 0 && text.get(digits) == Some(&b'.')));
    }
}

/// A numeric label's value: which of them it is decides or needs the file's scale.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Number {
    One,
    Half,
    Zero,
    MinusOne,
}

/// A label as a line spells it.
#[derive(Clone, Debug, PartialEq)]
enum Label {
    /// A game result token, the same on every scale.
    Result(f32),
    /// A number, and its text as written (for the messages).
    Number(Number, String),
}

/// What the numeric labels read so far say about the file's scale: the first label that set
/// it (line and text), and the first `0`.
#[derive(Clone, Debug, Default)]
struct ScaleEvidence {
    set_by: Option<(Labels, usize, String)>,
    first_zero: Option<(usize, String)>,
    decimal_point: bool,
    numbers: bool,
}

impl ScaleEvidence {
    /// Takes the label `text` of line `line` into account; an error if it contradicts the
    /// scale an earlier label set.
    fn see(&mut self, value: Number, text: &str, line: usize) -> Result<(), String> {
        self.numbers = true;
        self.decimal_point |= text.contains('.');
        let says = match value {
            Number::Half => Labels::Score,
            Number::MinusOne => Labels::WinDrawLoss,
            Number::Zero => {
                self.first_zero.get_or_insert((line, text.to_owned()));
                return Ok(());
            }
            Number::One => return Ok(()),
        };
        match &self.set_by {
            None => self.set_by = Some((says, line, text.to_owned())),
            Some((scale, first, first_text)) if *scale != says => {
                return Err(format!(
                    "label {text} is only on the scale {says}, but line {first}'s {first_text} \
                     set the scale {scale}: a file spells its results one way"
                ))
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// The file's scale, once every label is seen.
    fn labels(&self) -> Result<Labels, String> {
        if let Some((scale, _, _)) = &self.set_by {
            return Ok(*scale);
        }
        match &self.first_zero {
            None if !self.numbers => Ok(Labels::Results),
            // Only 1s: a win on both scales.
            None => Ok(Labels::Score),
            Some(_) if self.decimal_point => Ok(Labels::Score),
            Some((_, text)) => Err(format!(
                "label {text}: the file's numbers are only 1 and 0, which could be White's \
                 score (0 a loss, no draws) or win/draw/loss (0 a draw, no losses); write the \
                 results as 1.0/0.5/0.0 or 1/0/-1 with at least one draw or loss (or as \
                 1-0, 1/2-1/2, 0-1)"
            )),
        }
    }
}

/// One line of a line format (the position, its label, its search score if the format has
/// one); `None` for a blank or `#` line.
fn parse_line(line: &str) -> Result<Option<(Position, Label, Option<i32>)>, String> {
    let line = line.trim();
    let line = line.strip_prefix('\u{feff}').unwrap_or(line).trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let parsed = if line.contains('|') {
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let [fen, score, result] = fields[..] else {
            return Err(format!(
                "expected `FEN | score | result`, found {} fields separated by `|`",
                fields.len()
            ));
        };
        let label = number(result).ok_or_else(|| {
            format!(
                "result {result:?}: expected 1.0, 0.5 or 0.0 (White's score) or 1, 0, -1 \
                 (win/draw/loss)"
            )
        })?;
        let score = centipawns(score).ok_or_else(|| {
            format!("score {score:?}: expected centipawns from White's side (a number such as -35)")
        })?;
        (parse_fen(fen)?, label, Some(score))
    } else if line.contains(';') {
        let epd = Epd::parse(line).map_err(|e| e.to_string())?;
        let token = epd
            .comment(9)
            .ok_or("an EPD line needs the game's result as `c9 \"1-0\";`")?;
        let result = white_score(token)
            .ok_or_else(|| format!("c9 {token:?}: expected \"1-0\", \"1/2-1/2\" or \"0-1\""))?;
        (epd.position, Label::Result(result), None)
    } else if let Some(open) = line.rfind('[').filter(|_| line.ends_with(']')) {
        let label = line[open + 1..line.len() - 1].trim();
        let label = white_score(label)
            .map(Label::Result)
            .or_else(|| number(label))
            .ok_or_else(|| format!("label [{label}]: expected [1.0], [0.5] or [0.0]"))?;
        (parse_fen(&line[..open])?, label, None)
    } else {
        return Err(
            "expected a labelled position: `FEN [1.0]`, `FEN | score | result` or EPD with \
             `c9 \"1-0\";`"
                .to_owned(),
        );
    };
    Ok(Some(parsed))
}

fn parse_fen(fen: &str) -> Result<Position, String> {
    Position::from_fen(fen.trim()).map_err(|e| format!("FEN {:?}: {e}", fen.trim()))
}

/// A PGN result token as White's score; `None` for `*` and anything else.
fn white_score(token: &str) -> Option<f32> {
    match token {
        "1-0" => Some(1.0),
        "1/2-1/2" => Some(0.5),
        "0-1" => Some(0.0),
        _ => None,
    }
}

/// A numeric label: 1, 0.5, 0 or -1, with any number of decimals; nothing else is a game's
/// result on either scale.
fn number(text: &str) -> Option<Label> {
    let value: f64 = text.parse().ok()?;
    let value = [
        (1.0, Number::One),
        (0.5, Number::Half),
        (0.0, Number::Zero),
        (-1.0, Number::MinusOne),
    ]
    .into_iter()
    .find(|&(v, _)| v == value)?
    .1;
    Some(Label::Number(value, text.to_owned()))
}

/// A number of centipawns as bullet writes it (`-35`; a fraction is rounded).
fn centipawns(text: &str) -> Option<i32> {
    let value: f64 = text.parse().ok()?;
    (value.is_finite() && value.abs() < 1e6).then(|| value.round() as i32)
}

/// The centipawns of an engine's move comment that starts with a score in pawns from the
/// mover's side (`+0.31/20 0.554s`, `-1.05/12`, `0.00/1`); `None` for a mate score, a book
/// move or any other comment.
fn pawns_score(comment: &str) -> Option<i32> {
    let text = comment.trim_start();
    let end = text.find(['/', ' ', ',', '}']).unwrap_or(text.len());
    let number = &text[..end];
    // Only a signed decimal: `book`, `M5`, `1-0`, a bare `12` (a depth?) are not scores.
    let digits = number.strip_prefix(['+', '-']).unwrap_or(number);
    let (whole, fraction) = digits.split_once('.')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let pawns: f64 = number.parse().ok()?;
    (pawns.abs() < 1e4).then(|| (pawns * 100.0).round() as i32)
}

/// An engine's move comment that starts with a mate score: `+M5/12 0.250s`, `-M3`, `M2`.
fn is_mate_score(comment: &str) -> bool {
    let text = comment.trim_start();
    let text = text.strip_prefix(['+', '-']).unwrap_or(text);
    text.strip_prefix('M')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        path
    }

    #[test]
    fn datagen_lines_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let fens = [
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                1.0,
            ),
            ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 30", 0.5),
            ("8/8/4k3/8/8/3K4/8/8 b - - 12 71", 0.0),
        ];
        let mut text = Vec::new();
        let written: Vec<LabeledPosition> = fens
            .iter()
            .map(|&(fen, result)| LabeledPosition {
                position: Position::from_fen(fen).unwrap(),
                result,
                score: None,
            })
            .collect();
        for p in &written {
            write_position(&mut text, p).unwrap();
        }
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 [1.0]"
        );
        let path = write_file(dir.path(), "data.txt", &text);
        let read = read_positions(&path, &Filter::default()).unwrap();
        assert_eq!(read, written);
        assert_eq!(
            read.iter().map(|p| p.position.fen()).collect::<Vec<_>>(),
            fens.iter().map(|f| f.0).collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_line_format_spells_the_same_labels() {
        let dir = tempfile::tempdir().unwrap();
        let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        let expect = |name: &str, text: &str, results: &[f32]| {
            let path = write_file(dir.path(), name, text);
            let read = read_positions(&path, &Filter::default()).unwrap();
            let got: Vec<f32> = read.iter().map(|p| p.result).collect();
            assert_eq!(got, results, "{name}");
            assert!(read.iter().all(|p| p.position.fen() == fen), "{name}");
        };
        expect(
            "ethereal.txt",
            &format!("{fen} [1.0]\n\n# comment\n{fen} [0.5]\n{fen} [0-1]\n"),
            &[1.0, 0.5, 0.0],
        );
        expect(
            "bullet.txt",
            &format!("{fen} | 35 | 1.0\n{fen} | -12 | 0.5\n{fen} | 0 | 0.0\n"),
            &[1.0, 0.5, 0.0],
        );
        expect(
            "wdl.txt",
            &format!("{fen} | 35 | 1\n{fen} | -12 | 0\n{fen} | 0 | -1\n"),
            &[1.0, 0.5, 0.0],
        );
        expect(
            "quiet.epd",
            "4k3/8/8/8/8/8/4P3/4K3 w - - c9 \"1/2-1/2\";\n4k3/8/8/8/8/8/4P3/4K3 w - - c9 \"1-0\";\n",
            &[0.5, 1.0],
        );
    }

    /// Issue 18, item 5: a bullet file on the 1/0.5/0 scale had its losses (`0`) read as
    /// draws. The scale is the file's, whichever line tells it, before or after the zeros.
    #[test]
    fn a_files_numbers_are_read_on_the_scale_its_labels_show() {
        let dir = tempfile::tempdir().unwrap();
        let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        let read = |name: &str, labels: &[&str]| {
            let text: String = labels
                .iter()
                .map(|l| format!("{fen} | 0 | {l}\n"))
                .collect();
            read_labelled(&write_file(dir.path(), name, &text), &Filter::none())
        };
        let score = read("score.txt", &["0", "1", "0", "0.5", "1"]).unwrap();
        assert_eq!(score.labels, Labels::Score);
        let results: Vec<f32> = score.positions.iter().map(|p| p.result).collect();
        assert_eq!(
            results,
            [0.0, 1.0, 0.0, 0.5, 1.0],
            "a 0 beside 0.5 is a loss"
        );
        let wdl = read("wdl.txt", &["0", "1", "0", "-1"]).unwrap();
        assert_eq!(wdl.labels, Labels::WinDrawLoss);
        let results: Vec<f32> = wdl.positions.iter().map(|p| p.result).collect();
        assert_eq!(results, [0.5, 1.0, 0.5, 0.0], "a 0 beside -1 is a draw");
        // Bracketed numbers follow the same rule; result tokens stand beside either scale.
        let text = format!("{fen} [0]\n{fen} [1/2-1/2]\n{fen} [-1]\n{fen} [1-0]\n");
        let mixed = read_labelled(&write_file(dir.path(), "b.txt", &text), &Filter::none());
        let mixed = mixed.unwrap();
        assert_eq!(mixed.labels, Labels::WinDrawLoss);
        assert_eq!(mixed.positions[0].result, 0.5);
        // Only 1 and 0 with a point are bullet's floats; as whole numbers they say nothing.
        assert_eq!(
            read("floats.txt", &["1.0", "0.0"]).unwrap().labels,
            Labels::Score
        );
        assert_eq!(read("wins.txt", &["1", "1"]).unwrap().labels, Labels::Score);
        let err = read("ambiguous.txt", &["1", "1", "0"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ambiguous.txt, line 3: label 0: the file's numbers are only 1 and 0"),
            "{err}"
        );
        // Both scales in one file: refused at the first label that contradicts the other.
        let err = read("both.txt", &["1", "0.5", "0", "-1", "0.5"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "both.txt, line 4: label -1 is only on the scale win/draw/loss (1 win, 0 draw, \
                 -1 loss), but line 2's 0.5 set the scale White's score (1 win, 0.5 draw, 0 loss)"
            ),
            "{err}"
        );
        let epd = "4k3/8/8/8/8/8/4P3/4K3 w - - c9 \"1-0\";\n";
        let tokens = read_labelled(&write_file(dir.path(), "q.epd", epd), &Filter::none());
        assert_eq!(tokens.unwrap().labels, Labels::Results);
    }

    #[test]
    fn bad_lines_are_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        let cases = [
            (
                format!("{fen} [1.0]\n{fen} [2.0]\n"),
                "line 2: label [2.0]: expected [1.0], [0.5] or [0.0]",
            ),
            (
                format!("{fen} | 3 | 0.7\n"),
                "line 1: result \"0.7\": expected 1.0, 0.5 or 0.0",
            ),
            (
                format!("{fen} | 1.0\n"),
                "line 1: expected `FEN | score | result`, found 2 fields",
            ),
            (
                "4k3/8/8/8/8/8/4P3/4K3 w - - id \"x\";\n".to_owned(),
                "line 1: an EPD line needs the game's result",
            ),
            (format!("{fen}\n"), "line 1: expected a labelled position"),
            (
                "4k3/8/8/8/8/8/4P3/4KK2 w - - 0 1 [1.0]\n".to_owned(),
                "line 1: FEN \"4k3/8/8/8/8/8/4P3/4KK2 w - - 0 1\": FEN field 1",
            ),
        ];
        for (text, message) in cases {
            let path = write_file(dir.path(), "bad.txt", &text);
            let err = read_positions(&path, &Filter::default())
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            assert!(err.contains(message), "{err} lacks {message}");
        }
        let missing = dir.path().join("missing.txt");
        let err = read_positions(&missing, &Filter::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.txt: cannot read"), "{err}");
    }

    /// A short game with every kind of position the filter judges: book plies, a check, a
    /// capture, a promotion-free quiet stretch, and a mate score in the comments.
    const GAME: &str = r#"[Event "t"]
[Site "?"]
[Date "?"]
[Round "1"]
[White "a"]
[Black "b"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 {-0.20/8 0.01s} 4. Ng5 {+0.50/8 0.01s} d5 {-0.30/8 0.01s}
5. exd5 {+0.40/8 0.01s} Nxd5 {-0.40/8 0.01s} 6. Nxf7 {+1.00/8 0.01s} Kxf7 {-1.00/8 0.01s}
7. Qf3+ {+1.50/8 0.01s} Ke6 {-1.50/8 0.01s} 8. Nc3 {+M9/20 0.01s} Be7 {-M8/20 0.01s} 1-0
"#;

    #[test]
    fn the_filter_drops_book_checks_captures_and_mate_scores() {
        let all = positions_of_game(GAME, &Filter::none()).unwrap();
        assert_eq!(all.len(), 16, "one position per move played");
        assert!(all.iter().all(|p| p.result == 1.0));
        assert_eq!(all[0].position, Position::starting());

        let kept = positions_of_game(GAME, &Filter::default()).unwrap();
        let fullmoves: Vec<(u32, bool)> = kept
            .iter()
            .map(|p| {
                (
                    p.position.fullmove_number(),
                    p.position.turn() == Color::White,
                )
            })
            .collect();
        // Plies 8.. : 5.exd5 (capture) dropped, 5...Nxd5 dropped, 6.Nxf7 dropped, 6...Kxf7
        // dropped, 7.Qf3+ kept (the move gives check; the position before it is quiet),
        // 7...Ke6 dropped (Black in check), 8.Nc3 carries a mate score: it and the rest go.
        assert_eq!(fullmoves, vec![(7, true)]);

        let no_book = Filter {
            skip_plies: 0,
            ..Filter::default()
        };
        assert_eq!(positions_of_game(GAME, &no_book).unwrap().len(), 8 + 1);

        let keep_mates = Filter {
            skip_mate_scores: false,
            ..Filter::default()
        };
        assert_eq!(positions_of_game(GAME, &keep_mates).unwrap().len(), 3);
    }

    #[test]
    fn move_comments_give_search_scores_from_whites_side() {
        let all = positions_of_game(GAME, &Filter::none()).unwrap();
        let scores: Vec<Option<i32>> = all.iter().map(|p| p.score).collect();
        // Book moves have no comment; 3...Nf6 is Black's -0.20 (White +20); mates are no score.
        let mut want = vec![None; 5];
        want.extend([20, 50, 30, 40, 40, 100, 100, 150, 150].map(Some));
        want.extend([None, None]);
        assert_eq!(scores, want);
        assert_eq!(pawns_score("+0.31/20 0.554s"), Some(31));
        assert_eq!(pawns_score("-1.05/12"), Some(-105));
        assert_eq!(pawns_score("0.00/1 0s, White mates"), Some(0));
        for not_a_score in [
            "book", "M5/12", "+M3/20", "12/3", "1-0", "", "+.5/3", "-1./2",
        ] {
            assert_eq!(pawns_score(not_a_score), None, "{not_a_score:?}");
        }
    }

    #[test]
    fn bullet_scores_are_read_and_a_bad_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        let good = write_file(
            dir.path(),
            "bullet.txt",
            &format!(
                "{fen} | 35 | 1.0
{fen} | -12.6 | 0.5
"
            ),
        );
        let scores: Vec<Option<i32>> = read_positions(&good, &Filter::none())
            .unwrap()
            .iter()
            .map(|p| p.score)
            .collect();
        assert_eq!(scores, [Some(35), Some(-13)]);
        let bad = write_file(
            dir.path(),
            "bad.txt",
            &format!(
                "{fen} | 35 | 1.0
{fen} | +M3 | 1.0
"
            ),
        );
        let err = read_positions(&bad, &Filter::none())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("bad.txt, line 2: score \"+M3\": expected centipawns from White's side (a number such as -35)"),
            "{err}"
        );
    }

    #[test]
    fn unfinished_games_have_no_label() {
        let game = "[Result \"*\"]\n\n1. e4 e5 2. Nf3 *\n";
        assert!(positions_of_game(game, &Filter::none()).unwrap().is_empty());
        let black = "1. f3 e5 2. g4 Qh4# 0-1\n";
        let all = positions_of_game(black, &Filter::none()).unwrap();
        assert_eq!(all.len(), 4);
        assert!(all.iter().all(|p| p.result == 0.0));
    }

    #[test]
    fn pgn_files_are_known_by_their_content() {
        let dir = tempfile::tempdir().unwrap();
        let tagged = write_file(
            dir.path(),
            "games.txt",
            &format!("\u{feff}\n\n{GAME}\n{GAME}"),
        );
        assert_eq!(read_positions(&tagged, &Filter::none()).unwrap().len(), 32);
        let bare = write_file(dir.path(), "bare.pgn", "1. f3 e5 2. g4 Qh4# 0-1\n");
        assert_eq!(read_positions(&bare, &Filter::none()).unwrap().len(), 4);
        let bad = write_file(dir.path(), "bad.pgn", "1. e4 e4 1-0\n");
        let err = read_positions(&bad, &Filter::none())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&bad.display().to_string()), "{err}");
        assert!(err.contains("PGN game 1 (line 1"), "{err}");
    }

    #[test]
    fn dedup_keeps_a_position_once_whatever_its_move_counters() {
        let mut dedup = Dedup::new();
        let a = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
        let later = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 6 40").unwrap();
        let other = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1").unwrap();
        assert!(dedup.insert(&a));
        assert!(!dedup.insert(&later));
        assert!(dedup.insert(&other));
        assert_eq!(dedup.len(), 2);
    }
}
