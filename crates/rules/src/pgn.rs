//! PGN: reading multi-game files one game at a time, and writing games for the match runner.
//!
//! # Why a streaming reader
//! PGN files from engine matches and opening collections run to gigabytes, and the runner
//! only ever needs one game at a time (an opening, or a game to re-check). [`PgnReader`]
//! therefore pulls bytes from any [`BufRead`] and keeps only the game being read: memory is
//! bounded by [`PgnLimits`], not by the file. It is an [`Iterator`] of
//! `Result<PgnGame, PgnError>`: a bad game yields one error naming the game number, line and
//! column, the reader skips to that game's end, and the next call returns the next game, so
//! one corrupt game never costs the rest of the file.
//!
//! # What is tolerated
//! Real files are written by many tools, so the reader accepts what is unambiguous even when
//! the standard does not: input that is not UTF-8 (comments and tag values are converted
//! lossily; moves are ASCII anyway) and a UTF-8 byte-order mark; move numbers with or without
//! a space (`12.e4`, `12...Nf6`) and not checked against the position, since they carry no
//! information the moves do not; SAN with check marks, annotation glyphs (`Nf3!?`), `e8Q`,
//! `0-0` and the lax forms [`crate::san`] reads; NAGs (`$14`) and stand-alone glyphs, which are
//! skipped; variations, nested to any depth, which are skipped with their comments; `%` escape
//! lines; a `FEN` tag without `SetUp`; a `Result` tag that disagrees with the result token (the
//! token is what [`PgnGame::result`] holds). Several comments after one move are joined with a
//! space, and whitespace inside a comment is collapsed, so that line wrapping never changes a
//! comment's text.
//!
//! # What is rejected
//! Every move must be legal in the position it is played from: the reader resolves each SAN
//! against the position, so a read game's moves are ready to replay without further checks.
//! Rejected, each with its own [`PgnErrorKind`]: an illegal or ambiguous move, or a null move
//! (`--`), which no legal game contains; a tag pair that is not `[Name "value"]` on one line;
//! a `FEN` tag that is not a legal position, or `SetUp "1"` without one; a comment or
//! variation never closed; a `)` with no `(`; any other stray character; a game that reaches
//! the end of the input or the next game's tags without a result token; and a game larger than
//! [`PgnLimits`] allows (a missing `}` otherwise turns the rest of a file into one comment).
//!
//! # Writing
//! [`write_pgn`] and [`PgnGame::to_pgn`] write export format, the strict subset every reader
//! accepts: the seven-tag roster first, SAN from the rules crate, and lines of at most
//! [`LINE_WIDTH`] columns. What they write, this reader reads back to the same start, moves,
//! comments and result; the tests check that on random games. [`PgnGame::from_game`] is the
//! match runner's entry point: a finished [`Game`] and its [`Outcome`] in, tags filled.
//!
//! # Tags only
//! [`TagReader`] reads who played and how each game ended without replaying a move, for rating
//! lists made from files of any size (`arbiter rate`); see its module.

use std::io::{self, BufRead};

use crate::san::{parse_san, san_plus, SanError};

mod tags;
use crate::{Color, Game, IllegalMove, Move, Outcome, Position, PositionError, RuleSet};
pub use tags::{GameTags, TagError, TagReader};

/// The tags every PGN game carries, in the order the standard requires them.
pub const SEVEN_TAG_ROSTER: [&str; 7] =
    ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// The four game termination markers.
pub const RESULT_TOKENS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

/// The width the writer wraps movetext to: PGN export format's limit, so the output can be
/// pasted into any tool and diffed line by line.
pub const LINE_WIDTH: usize = 80;

/// No SAN, move number or result is anywhere near this long; a longer run of symbol
/// characters is garbage, and is skipped rather than stored.
const MAX_SYMBOL_BYTES: usize = 256;

/// What a tag pair costs in memory beyond its text: two `String`s in a `Vec`.
const TAG_OVERHEAD_BYTES: usize = 64;

/// What the reader stores per game, so that malformed input cannot exhaust memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PgnLimits {
    /// Bytes of tag names, tag values and comments one game may hold. Annotated master games
    /// stay well under 1 MiB; a runaway comment reaches the limit and is reported instead.
    pub max_game_text_bytes: usize,
    /// Half-moves one game may hold. The 75-move rule ends every game within about 17,700
    /// half-moves; more is a broken or hostile file.
    pub max_plies: usize,
}

impl Default for PgnLimits {
    fn default() -> PgnLimits {
        PgnLimits {
            max_game_text_bytes: 4 << 20,
            max_plies: 20_000,
        }
    }
}

/// One game as PGN describes it: what the reader returns and what the writer takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// Tag pairs in file order (duplicates kept; [`PgnGame::tag`] finds the first).
    pub tags: Vec<(String, String)>,
    /// From the `FEN` tag, or the standard starting position.
    pub start: Position,
    /// Legal moves in order from `start`.
    pub moves: Vec<Move>,
    /// `comments[i]` follows `moves[i]`; always as long as `moves`.
    pub comments: Vec<Option<String>>,
    /// A comment before the first move.
    pub leading_comment: Option<String>,
    /// One of [`RESULT_TOKENS`].
    pub result: &'static str,
    /// The 1-based line where the game's first token stood; 0 for a game not read from text.
    pub line: usize,
}

impl PgnGame {
    /// An empty game from `start` with result `*`, to fill in and write.
    pub fn new(start: Position) -> PgnGame {
        PgnGame {
            tags: Vec::new(),
            start,
            moves: Vec::new(),
            comments: Vec::new(),
            leading_comment: None,
            result: "*",
            line: 0,
        }
    }

    /// The game the runner played: its start, its moves, and, once it is over, the `Result`
    /// and `Termination` tags. Comments (evaluations, times) are the caller's to add.
    pub fn from_game(game: &Game, outcome: Option<&Outcome>) -> PgnGame {
        let mut pgn = PgnGame::new(*game.start());
        pgn.moves = game.moves().to_vec();
        pgn.comments = vec![None; pgn.moves.len()];
        match outcome {
            Some(outcome) => pgn.set_outcome(outcome),
            None => pgn.set_tag("Result", "*"),
        }
        pgn
    }

    /// Records how the game ended in the result token and in the `Result` and `Termination`
    /// tags, spelt as cutechess and fastchess spell them so existing tools can read them.
    pub fn set_outcome(&mut self, outcome: &Outcome) {
        self.result = outcome.result_token();
        self.set_tag("Result", self.result);
        self.set_tag("Termination", outcome.termination.pgn_tag());
    }

    /// The value of the first tag called `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Replaces the first tag called `name`, or appends it.
    pub fn set_tag(&mut self, name: &str, value: &str) {
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value.to_owned(),
            None => self.tags.push((name.to_owned(), value.to_owned())),
        }
    }

    /// The game replayed under `rules`, to ask for its end position or how it ended. Checked,
    /// because the fields are public and may have been edited since the game was read.
    pub fn to_game(&self, rules: RuleSet) -> Result<Game, IllegalMove> {
        let mut game = Game::new(self.start, rules);
        for &mv in &self.moves {
            game.play(mv)?;
        }
        Ok(game)
    }

    /// The game as PGN text; see [`write_pgn`].
    pub fn to_pgn(&self) -> Result<String, IllegalMove> {
        write_game(
            &self.tags,
            &self.start,
            self.leading_comment.as_deref(),
            &self.moves,
            &self.comments,
            self.result,
        )
    }
}

/// A game that could not be read: which game of the file, where, and what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("PGN game {game} (line {line}, column {column}): {kind}")]
pub struct PgnError {
    /// 1-based, counting every game of the input, bad ones included.
    pub game: usize,
    pub line: usize,
    /// 1-based, in bytes.
    pub column: usize,
    pub kind: PgnErrorKind,
}

/// What was wrong with a game.
#[derive(Debug, thiserror::Error)]
pub enum PgnErrorKind {
    #[error("cannot read the input: {0}")]
    Io(#[source] io::Error),
    #[error("bad tag pair: {0}; expected [Name \"value\"] on one line")]
    BadTag(String),
    #[error("bad FEN tag {fen:?}: {source}")]
    BadFen {
        fen: String,
        #[source]
        source: PositionError,
    },
    #[error("SetUp \"1\" says the game starts from a FEN, but there is no FEN tag")]
    SetUpWithoutFen,
    #[error("comment opened with {{ is never closed with }}")]
    UnterminatedComment,
    #[error("variation opened with ( is never closed with ) before {0}")]
    UnterminatedVariation(&'static str),
    #[error("unexpected {0:?}")]
    UnexpectedToken(String),
    #[error("move {number}{san}: {source}")]
    Move {
        /// The move number as PGN writes it before this move: `12.` or `12...`.
        number: String,
        san: String,
        /// Boxed: the SAN error's FEN and candidates would double the size of every result.
        #[source]
        source: Box<SanError>,
    },
    #[error("the game has no result token (1-0, 0-1, 1/2-1/2 or *) before {0}")]
    MissingResult(&'static str),
    #[error("{what} would make the game hold more than {limit} bytes of text; is a closing }} or \" missing?")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the game has more than {0} half-moves")]
    TooManyMoves(usize),
    #[error("the move number passes {}", u32::MAX)]
    MoveNumberOverflow,
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Reads games one at a time from PGN text; see the module docs for what it accepts.
pub struct PgnReader<R> {
    lexer: Lexer<R>,
    limits: PgnLimits,
    /// Games begun so far, counting bad ones: the number errors report.
    game_number: usize,
    /// A `[` that ended the previous game (which lacked its result) and begins the next one.
    pending_tag: Option<Spanned>,
    /// Set after an error: the rest of that game must be skipped before the next is read.
    /// Holds whether the bad game had reached its movetext.
    resync: Option<bool>,
    /// Set after an I/O error, which would likely repeat forever.
    failed: bool,
}

impl<R: BufRead> PgnReader<R> {
    /// A reader with the default [`PgnLimits`], which no real game comes near.
    pub fn new(input: R) -> PgnReader<R> {
        PgnReader::with_limits(input, PgnLimits::default())
    }

    /// A reader with other limits: smaller for untrusted uploads, larger for odd archives.
    pub fn with_limits(input: R, limits: PgnLimits) -> PgnReader<R> {
        PgnReader {
            lexer: Lexer::new(input, limits.max_game_text_bytes),
            limits,
            game_number: 0,
            pending_tag: None,
            resync: None,
            failed: false,
        }
    }

    /// Skips to the end of a bad game: its result token, or the tags of the next game. Lexing
    /// errors no longer matter here; tag pairs are still lexed as such, so that a value such
    /// as `"1-0"` is not taken for a result.
    fn skip_bad_game(&mut self, mut in_movetext: bool) {
        let mut budget = 0;
        loop {
            let Ok(spanned) = self.lexer.next_token(&mut budget) else {
                continue;
            };
            match spanned.token {
                Token::Eof => return,
                Token::TagStart if in_movetext => {
                    self.pending_tag = Some(spanned);
                    return;
                }
                Token::TagStart => {
                    let _ = self.lexer.tag_pair(&mut budget);
                }
                Token::Symbol(text) if RESULT_TOKENS.contains(&text.as_str()) => return,
                Token::Comment(_) => {}
                _ => in_movetext = true,
            }
        }
    }

    fn read_game(&mut self) -> Option<Result<PgnGame, PgnError>> {
        let mut game = GameInProgress::new(self.limits);
        loop {
            let next = match self.pending_tag.take() {
                Some(tag) => Ok(tag),
                None => self.lexer.next_token(&mut game.budget),
            };
            let (line, column) = match &next {
                Ok(spanned) => (spanned.line, spanned.column),
                Err(error) => (error.line, error.column),
            };
            let is_eof = matches!(
                next,
                Ok(Spanned {
                    token: Token::Eof,
                    ..
                })
            );
            if game.line == 0 && !is_eof {
                self.game_number += 1;
                game.line = line;
            }
            let step = match next {
                Ok(spanned) => self.step(&mut game, spanned),
                Err(error) => Err(error.kind),
            };
            match step {
                Ok(Step::Continue) => {}
                Ok(Step::Done) => return Some(Ok(game.finish())),
                Ok(Step::End) => return None,
                Err(kind) => {
                    if let PgnErrorKind::Io(_) = kind {
                        self.failed = true;
                    } else if !is_eof && self.pending_tag.is_none() {
                        self.resync = Some(game.in_movetext);
                    }
                    return Some(Err(PgnError {
                        // An I/O error before any token belongs to the game that would follow.
                        game: self.game_number + usize::from(game.line == 0),
                        line,
                        column,
                        kind,
                    }));
                }
            }
        }
    }

    fn step(&mut self, game: &mut GameInProgress, spanned: Spanned) -> Result<Step, PgnErrorKind> {
        match spanned.token {
            Token::Eof => {
                if let Some(error) = self.lexer.io_error.take() {
                    Err(PgnErrorKind::Io(error))
                } else if game.depth > 0 {
                    Err(PgnErrorKind::UnterminatedVariation("the end of the input"))
                } else if game.in_movetext || !game.tags.is_empty() {
                    Err(PgnErrorKind::MissingResult("the end of the input"))
                } else {
                    // Only comments (or nothing) after the last game: nothing to return.
                    Ok(Step::End)
                }
            }
            Token::TagStart if game.in_movetext => {
                self.pending_tag = Some(spanned);
                Err(if game.depth > 0 {
                    PgnErrorKind::UnterminatedVariation("the next game's tags")
                } else {
                    PgnErrorKind::MissingResult("the next game's tags")
                })
            }
            Token::TagStart => {
                let (name, value) = self.lexer.tag_pair(&mut game.budget)?;
                game.add_tag(name, value)?;
                Ok(Step::Continue)
            }
            Token::Comment(text) => {
                if game.depth == 0 {
                    game.add_comment(&text);
                }
                Ok(Step::Continue)
            }
            Token::Open => {
                game.in_movetext = true;
                game.depth += 1;
                Ok(Step::Continue)
            }
            Token::Close => {
                if game.depth == 0 {
                    return Err(PgnErrorKind::UnexpectedToken(")".into()));
                }
                game.depth -= 1;
                Ok(Step::Continue)
            }
            Token::Nag => {
                game.in_movetext = true;
                Ok(Step::Continue)
            }
            Token::Symbol(text) => {
                game.in_movetext = true;
                if game.depth > 0 {
                    return Ok(Step::Continue);
                }
                game.symbol(&text)
            }
        }
    }
}

impl<R: BufRead> Iterator for PgnReader<R> {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if let Some(in_movetext) = self.resync.take() {
            self.skip_bad_game(in_movetext);
        }
        self.read_game()
    }
}

/// After the end of the input, or an I/O error, every call returns `None`.
impl<R: BufRead> std::iter::FusedIterator for PgnReader<R> {}

enum Step {
    Continue,
    /// The result token closed the game.
    Done,
    /// The input ended between games.
    End,
}

/// The game being read, before its result token.
struct GameInProgress {
    limits: PgnLimits,
    /// Bytes of text the game may still store.
    budget: usize,
    line: usize,
    tags: Vec<(String, String)>,
    /// From the first `FEN` tag, checked as soon as the tag is read.
    fen_start: Option<Position>,
    /// The position after the moves so far; `None` until the tags are over.
    position: Option<Position>,
    start: Position,
    moves: Vec<Move>,
    comments: Vec<Option<String>>,
    leading_comment: Option<String>,
    /// Past the tags: a tag pair now begins the next game.
    in_movetext: bool,
    /// Variation nesting; everything but comments and parentheses is skipped inside.
    depth: usize,
    result: &'static str,
}

impl GameInProgress {
    fn new(limits: PgnLimits) -> GameInProgress {
        GameInProgress {
            limits,
            budget: limits.max_game_text_bytes,
            line: 0,
            tags: Vec::new(),
            fen_start: None,
            position: None,
            start: Position::starting(),
            moves: Vec::new(),
            comments: Vec::new(),
            leading_comment: None,
            in_movetext: false,
            depth: 0,
            result: "*",
        }
    }

    fn add_tag(&mut self, name: String, value: String) -> Result<(), PgnErrorKind> {
        if name == "FEN" && self.fen_start.is_none() {
            let start = Position::from_fen(&value).map_err(|source| PgnErrorKind::BadFen {
                fen: value.clone(),
                source,
            })?;
            self.fen_start = Some(start);
        }
        self.tags.push((name, value));
        Ok(())
    }

    /// The start position, fixed when the first move or the result arrives.
    fn position(&mut self) -> Result<&mut Position, PgnErrorKind> {
        if self.position.is_none() {
            let set_up = self.tags.iter().any(|(n, v)| n == "SetUp" && v == "1");
            self.start = match self.fen_start {
                Some(start) => start,
                None if set_up => return Err(PgnErrorKind::SetUpWithoutFen),
                None => Position::starting(),
            };
            self.position = Some(self.start);
        }
        Ok(self.position.as_mut().expect("set above"))
    }

    /// Comments arrive with their text already charged to the game's budget by the lexer.
    fn add_comment(&mut self, text: &str) {
        let slot = match self.comments.last_mut() {
            Some(slot) => slot,
            None => &mut self.leading_comment,
        };
        match slot {
            Some(existing) => {
                let text = text.trim();
                if !text.is_empty() {
                    if !existing.is_empty() {
                        existing.push(' ');
                    }
                    existing.push_str(text);
                }
            }
            None => *slot = Some(text.trim().to_owned()),
        }
    }

    /// A move, a move number, a glyph or the result.
    fn symbol(&mut self, text: &str) -> Result<Step, PgnErrorKind> {
        if let Some(&token) = RESULT_TOKENS.iter().find(|&&t| t == text) {
            self.position()?;
            self.result = token;
            return Ok(Step::Done);
        }
        let san = strip_move_number(text);
        // Glyphs, a lone `...` after a move number, and `e.p.` written apart from its move.
        if san == "e.p." || san.bytes().all(|b| matches!(b, b'!' | b'?' | b'.')) {
            return Ok(Step::Continue);
        }
        if self.moves.len() >= self.limits.max_plies {
            return Err(PgnErrorKind::TooManyMoves(self.limits.max_plies));
        }
        let pos = self.position()?;
        let mv = parse_san(pos, san).map_err(|source| PgnErrorKind::Move {
            number: move_number(pos),
            san: san.to_owned(),
            source: Box::new(source),
        })?;
        if pos.turn() == Color::Black && pos.fullmove_number() == u32::MAX {
            return Err(PgnErrorKind::MoveNumberOverflow);
        }
        pos.play_unchecked(mv);
        self.moves.push(mv);
        self.comments.push(None);
        Ok(Step::Continue)
    }

    fn finish(self) -> PgnGame {
        PgnGame {
            tags: self.tags,
            start: self.start,
            moves: self.moves,
            comments: self.comments,
            leading_comment: self.leading_comment,
            result: self.result,
            line: self.line,
        }
    }
}

/// `e4` from `12.e4`, `` from `12...`; a bare number is a move number too. `0-0` is castling,
/// not a number, because no dot follows its digit.
fn strip_move_number(text: &str) -> &str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &text[digits..];
    let after_dots = rest.trim_start_matches('.');
    if digits > 0 && (rest.is_empty() || after_dots.len() < rest.len()) {
        after_dots
    } else {
        text
    }
}

/// `12.` before White's move, `12...` before Black's.
fn move_number(pos: &Position) -> String {
    match pos.turn() {
        Color::White => format!("{}. ", pos.fullmove_number()),
        Color::Black => format!("{}... ", pos.fullmove_number()),
    }
}

// ---------------------------------------------------------------------------------------------
// Lexing

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// `[`: the tag pair itself is read by [`Lexer::tag_pair`], because only the parser knows
    /// whether a tag may stand here or begins the next game.
    TagStart,
    /// `{...}` or `;...`, whitespace collapsed.
    Comment(String),
    Open,
    Close,
    Nag,
    /// Moves, move numbers, results and glyphs: a run of characters PGN does not reserve.
    Symbol(String),
    Eof,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Spanned {
    token: Token,
    line: usize,
    column: usize,
}

struct LexError {
    line: usize,
    column: usize,
    kind: PgnErrorKind,
}

/// Bytes to tokens. Every call consumes at least one byte or reports the end, which is what
/// guarantees the reader terminates on any input; text over budget is consumed but not kept.
struct Lexer<R> {
    input: R,
    /// Position of the next byte, 1-based.
    line: usize,
    column: usize,
    io_error: Option<io::Error>,
    /// Once an I/O error is seen, the input is treated as ended.
    broken: bool,
    /// [`PgnLimits::max_game_text_bytes`], for error messages.
    text_limit: usize,
}

impl<R: BufRead> Lexer<R> {
    fn new(mut input: R, text_limit: usize) -> Lexer<R> {
        if let Ok(buf) = input.fill_buf() {
            if buf.starts_with(b"\xEF\xBB\xBF") {
                input.consume(3);
            }
        }
        Lexer {
            input,
            line: 1,
            column: 1,
            io_error: None,
            broken: false,
            text_limit,
        }
    }

    fn peek(&mut self) -> Option<u8> {
        if self.broken {
            return None;
        }
        loop {
            match self.input.fill_buf() {
                Ok(buf) => return buf.first().copied(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.io_error = Some(e);
                    self.broken = true;
                    return None;
                }
            }
        }
    }

    fn bump(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.input.consume(1);
        if byte == b'\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(byte)
    }

    fn skip_line(&mut self) {
        while let Some(byte) = self.bump() {
            if byte == b'\n' {
                break;
            }
        }
    }

    fn next_token(&mut self, budget: &mut usize) -> Result<Spanned, LexError> {
        loop {
            let Some(byte) = self.peek() else {
                return Ok(self.spanned(Token::Eof, self.line, self.column));
            };
            if byte.is_ascii_whitespace() || byte == 0x0b {
                self.bump();
            } else if byte == b'%' && self.column == 1 {
                self.skip_line();
            } else {
                break;
            }
        }
        let (line, column) = (self.line, self.column);
        let error = |kind| Err(LexError { line, column, kind });
        let byte = self.bump().expect("peeked");
        let token = match byte {
            b'[' => Token::TagStart,
            b'(' => Token::Open,
            b')' => Token::Close,
            b'{' => match self.text_until(b'}', budget) {
                Ok((text, true)) => Token::Comment(text),
                Ok((_, false)) => return error(PgnErrorKind::UnterminatedComment),
                Err(kind) => return error(kind),
            },
            // A `;` comment may end with the input instead of a line break.
            b';' => match self.text_until(b'\n', budget) {
                Ok((text, _)) => Token::Comment(text),
                Err(kind) => return error(kind),
            },
            b'$' => {
                let mut digits = 0;
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.bump();
                    digits += 1;
                }
                if digits == 0 {
                    return error(PgnErrorKind::UnexpectedToken("$".into()));
                }
                Token::Nag
            }
            _ if is_symbol_byte(byte) => {
                let mut symbol = vec![byte];
                while let Some(b) = self.peek().filter(|&b| is_symbol_byte(b)) {
                    self.bump();
                    if symbol.len() < MAX_SYMBOL_BYTES {
                        symbol.push(b);
                    } else if symbol.len() == MAX_SYMBOL_BYTES {
                        symbol.extend_from_slice("…".as_bytes());
                    }
                }
                let text = String::from_utf8_lossy(&symbol).into_owned();
                if symbol.len() > MAX_SYMBOL_BYTES {
                    return error(PgnErrorKind::UnexpectedToken(text));
                }
                Token::Symbol(text)
            }
            _ => {
                let text = String::from_utf8_lossy(&[byte]).into_owned();
                return error(PgnErrorKind::UnexpectedToken(text));
            }
        };
        Ok(self.spanned(token, line, column))
    }

    fn spanned(&self, token: Token, line: usize, column: usize) -> Spanned {
        Spanned {
            token,
            line,
            column,
        }
    }

    /// Comment text up to `end` (consumed), whitespace collapsed, and whether `end` was found
    /// before the input ended. Over budget, the text is still consumed up to `end`, so that the
    /// reader resumes after the comment rather than inside it.
    fn text_until(&mut self, end: u8, budget: &mut usize) -> Result<(String, bool), PgnErrorKind> {
        let mut text = Vec::new();
        let mut over = false;
        let mut space = false;
        let mut closed = false;
        while let Some(byte) = self.bump() {
            if byte == end {
                closed = true;
                break;
            }
            if over {
                continue;
            }
            if byte.is_ascii_whitespace() {
                space = !text.is_empty();
                continue;
            }
            let needed = 1 + usize::from(space);
            if *budget < needed {
                over = true;
                continue;
            }
            *budget -= needed;
            if space {
                text.push(b' ');
                space = false;
            }
            text.push(byte);
        }
        if over {
            return Err(PgnErrorKind::TooLarge {
                what: "a comment",
                limit: self.text_limit,
            });
        }
        Ok((String::from_utf8_lossy(&text).into_owned(), closed))
    }

    /// The rest of a tag pair after its `[`. On error the rest of the line is skipped: tag
    /// pairs stand one to a line, and the next line is the reader's best chance to resume.
    fn tag_pair(&mut self, budget: &mut usize) -> Result<(String, String), PgnErrorKind> {
        let result = self.tag_pair_inner(budget);
        if result.is_err() && self.column != 1 {
            self.skip_line();
        }
        result
    }

    fn tag_pair_inner(&mut self, budget: &mut usize) -> Result<(String, String), PgnErrorKind> {
        let bad = |reason: &str| PgnErrorKind::BadTag(reason.to_owned());
        self.skip_blanks();
        let mut name = String::new();
        while let Some(b) = self
            .peek()
            .filter(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.bump();
            if name.len() >= MAX_SYMBOL_BYTES {
                return Err(bad("the tag name is too long"));
            }
            name.push(char::from(b));
        }
        if name.is_empty() {
            return Err(bad("missing tag name"));
        }
        self.skip_blanks();
        if self.peek() != Some(b'"') {
            return Err(bad(&format!("tag {name} has no quoted value")));
        }
        self.bump();
        let mut value = Vec::new();
        loop {
            let byte = match self.peek() {
                None | Some(b'\n' | b'\r') => {
                    return Err(bad(&format!(
                        "the value of tag {name} has no closing quote"
                    )))
                }
                Some(_) => self.bump().expect("peeked"),
            };
            let byte = match byte {
                b'"' => break,
                b'\\' if matches!(self.peek(), Some(b'"' | b'\\')) => self.bump().expect("peeked"),
                _ => byte,
            };
            if *budget == 0 {
                return Err(PgnErrorKind::TooLarge {
                    what: "a tag value",
                    limit: self.text_limit,
                });
            }
            *budget -= 1;
            value.push(byte);
        }
        self.skip_blanks();
        if self.peek() != Some(b']') {
            return Err(bad(&format!("tag {name} is not closed with ]")));
        }
        self.bump();
        // Charged per pair as well as per byte, so that many empty tags are bounded too.
        let charge = name.len() + TAG_OVERHEAD_BYTES;
        if *budget < charge {
            return Err(PgnErrorKind::TooLarge {
                what: "a tag pair",
                limit: self.text_limit,
            });
        }
        *budget -= charge;
        Ok((name, String::from_utf8_lossy(&value).into_owned()))
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.bump();
        }
    }
}

/// Characters that may appear in a move, move number, result or glyph: everything PGN does
/// not reserve for its own syntax.
fn is_symbol_byte(byte: u8) -> bool {
    !byte.is_ascii_whitespace()
        && byte != 0x0b
        && !matches!(
            byte,
            b'[' | b']' | b'{' | b'}' | b'(' | b')' | b';' | b'$' | b'"' | b'<' | b'>'
        )
        && !byte.is_ascii_control()
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Writes one game as PGN export format: the seven-tag roster (with the standard's `?`
/// defaults), `SetUp` and `FEN` when `start` is not the standard position, the other tags in
/// the order given, then the movetext in SAN with `+`/`#`, move numbers, `{comments}` and
/// the result, wrapped at [`LINE_WIDTH`] columns.
///
/// `comments[i]` follows `moves[i]` (missing entries mean no comment). The `Result` tag is
/// always `result`, and `SetUp`/`FEN` tags in `tags` are ignored: the start position and the
/// result token are the truth, so the tags cannot contradict them. PGN has no escape inside
/// comments, so a `}` in one is dropped, and whitespace is collapsed, as the reader does.
/// The text ends with a blank line, so games can simply be concatenated into a file.
///
/// Fails only if a move is not legal where it is played.
pub fn write_pgn<K: AsRef<str>, V: AsRef<str>>(
    tags: &[(K, V)],
    start: &Position,
    moves: &[Move],
    comments: &[Option<String>],
    result: &str,
) -> Result<String, IllegalMove> {
    write_game(tags, start, None, moves, comments, result)
}

fn write_game<K: AsRef<str>, V: AsRef<str>>(
    tags: &[(K, V)],
    start: &Position,
    leading_comment: Option<&str>,
    moves: &[Move],
    comments: &[Option<String>],
    result: &str,
) -> Result<String, IllegalMove> {
    let result = RESULT_TOKENS
        .iter()
        .find(|&&t| t == result)
        .copied()
        .unwrap_or("*");
    let mut out = String::new();
    write_tags(&mut out, tags, start, result);
    out.push('\n');

    let mut text = Wrapper::new(&mut out);
    if let Some(comment) = leading_comment {
        text.comment(comment);
    }
    let mut pos = *start;
    let mut needs_number = true;
    for (i, &mv) in moves.iter().enumerate() {
        let next = pos.play(mv)?;
        let san = san_plus(&pos, mv);
        match pos.turn() {
            Color::White => text.atom(&format!("{}. {san}", pos.fullmove_number())),
            Color::Black if needs_number => {
                text.atom(&format!("{}... {san}", pos.fullmove_number()))
            }
            Color::Black => text.atom(&san),
        }
        needs_number = false;
        if let Some(Some(comment)) = comments.get(i) {
            text.comment(comment);
            needs_number = true;
        }
        pos = next;
    }
    text.atom(result);
    out.push_str("\n\n");
    Ok(out)
}

fn write_tags<K: AsRef<str>, V: AsRef<str>>(
    out: &mut String,
    tags: &[(K, V)],
    start: &Position,
    result: &str,
) {
    let find = |name: &str| {
        tags.iter()
            .find(|(k, _)| k.as_ref() == name)
            .map(|(_, v)| v.as_ref())
    };
    for name in SEVEN_TAG_ROSTER {
        let value = match name {
            "Result" => result,
            "Date" => find(name).unwrap_or("????.??.??"),
            _ => find(name).unwrap_or("?"),
        };
        write_tag(out, name, value);
    }
    if *start != Position::starting() {
        write_tag(out, "SetUp", "1");
        write_tag(out, "FEN", &start.fen());
    }
    for (name, value) in tags {
        let name = name.as_ref();
        if !SEVEN_TAG_ROSTER.contains(&name) && name != "SetUp" && name != "FEN" {
            write_tag(out, name, value.as_ref());
        }
    }
}

/// A tag name PGN cannot spell has its other characters replaced by `_`, and a line break in
/// a value becomes a space: a tag pair must stay one line.
fn write_tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    if name.is_empty() {
        out.push('_');
    }
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
    out.push_str(" \"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// Joins atoms with spaces, breaking lines before an atom that would pass [`LINE_WIDTH`].
struct Wrapper<'a> {
    out: &'a mut String,
    column: usize,
}

impl<'a> Wrapper<'a> {
    fn new(out: &'a mut String) -> Wrapper<'a> {
        Wrapper { out, column: 0 }
    }

    fn atom(&mut self, atom: &str) {
        let width = atom.chars().count();
        if self.column > 0 {
            if self.column + 1 + width > LINE_WIDTH {
                self.out.push('\n');
                self.column = 0;
            } else {
                self.out.push(' ');
                self.column += 1;
            }
        }
        self.out.push_str(atom);
        self.column += width;
    }

    /// A comment may break between its words; the reader collapses the line break back into
    /// the space it was.
    fn comment(&mut self, text: &str) {
        let cleaned = text.replace('}', "");
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        match words.as_slice() {
            [] => self.atom("{}"),
            [word] => self.atom(&format!("{{{word}}}")),
            [first, middle @ .., last] => {
                self.atom(&format!("{{{first}"));
                for word in middle {
                    self.atom(word);
                }
                self.atom(&format!("{last}}}"));
            }
        }
    }
}
