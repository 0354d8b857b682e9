//! PGN tags without the moves: who played and how each game ended, from files of any size.
//!
//! [`PgnReader`](super::PgnReader) resolves every move against the position, which is what
//! replaying or checking a game needs and costs far more than a rating list or a result count
//! can afford: they need three tags of each game, from files of 100,000 games and more.
//! [`TagReader`] reads only the tag pairs, and skips movetext by its lexical structure
//! (comments in braces, possibly over several lines; `;` comments; variations; `%` escape
//! lines), which is all it takes to find where each game begins. A tag pair that is not
//! `[Name "value"]` on one line, or a comment never closed, is an error naming the line, as the
//! full reader would say; a test checks that both readers agree on the tags they read.
//!
//! The values are bytes: PGN is specified as Latin-1 and older files are written so, so a
//! reader of names tells players apart by their bytes.

use std::collections::VecDeque;
use std::io::BufRead;

/// Who played one game and how it ended, as its tags say, and where the game began.
#[derive(Debug, Default, PartialEq)]
pub struct GameTags {
    /// The line the game's first tag (or its movetext, without tags) is on, from 1.
    pub line: usize,
    /// Tag values as bytes: a name need not be UTF-8 (PGN is specified as Latin-1).
    pub white: Option<Vec<u8>>,
    pub black: Option<Vec<u8>>,
    pub result: Option<Vec<u8>>,
    /// The last termination marker of the movetext (outside comments and variations).
    pub termination: Option<&'static str>,
}

/// A malformed line: which, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct TagError {
    pub line: usize,
    pub what: String,
}

/// Reads PGN games' `White`, `Black` and `Result` tags and skips their movetext; see the
/// module documentation.
pub struct TagReader<R> {
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
    pub fn new(input: R) -> TagReader<R> {
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

    /// The next game's tags; `None` at the end of the input.
    pub fn next_game(&mut self) -> Result<Option<GameTags>, TagError> {
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
    use crate::pgn::PgnReader;

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
}
