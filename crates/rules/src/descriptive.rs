//! English descriptive notation, the notation of English and American chess books until the
//! 1970s: read in its short modern form (`P-K4`, `N-KB3`, `PxP`, `Q-R5ch`, `O-O`) and in the
//! long form of the nineteenth-century handbooks (`P. to K's 4th.`, `K's Kt. to B's 3d.`,
//! `Kt. takes K's P.`), and written in the short form.
//!
//! # How the notation names things
//! Files are named after the pieces that start on them: QR = a, QN (QKt) = b, QB = c, Q = d,
//! K = e, KB = f, KN (KKt) = g, KR = h. Ranks are counted from the moving side's own side, so
//! White's K4 is e4 and Black's K4 is e5. A file named without its wing (`B3`, `Kt's 5th`)
//! means either file of that kind. A move names the man that moves and the square he goes to
//! (`P-K4`), or the man he takes (`NxP`); it says no more than tells the legal moves apart.
//!
//! # Reading: the text gives constraints, legality picks the move
//! [`parse_descriptive`] turns the text into what it says (the moving man's kind and wing or
//! file, an optional origin, then either the destination as a set of squares or the taken man's
//! kind and wing or file) and keeps the legal moves that fit: exactly one is the move, none or
//! several is a [`DescriptiveError`]. A position does not remember where its pieces started,
//! so wings are decided from where the men stand now:
//! - a knight or rook is the king's (`KN`, `K's Kt.`, `KR`) when it stands on the king's side
//!   of the board (files e to h), the queen's otherwise;
//! - a bishop never changes colour, so the king's bishop is the one on the colour of its
//!   starting square (light for White's, from f1; dark for Black's, from f8), wherever it is;
//! - a pawn is named by the file it stands on: `KP` is the pawn on the king's file, `BP` one on
//!   either bishop's file, `KBP` the one on the f-file;
//! - a taken man is named the same way, as his owner would name him: after 1.e4 e5 2.Nf3 f6,
//!   `Kt. takes K's P.` takes the pawn on the king's file, e5.
//!
//! A move to a square (`-`, `to`, `at`) must not capture, and a capture (`x`, `takes`) must, as
//! the notation always wrote them. Check and mate marks are not checked, as in [`crate::san`];
//! `e.p.` is, and only fits an en-passant capture.
//!
//! # What is read
//! - men: `P K Q R B N Kt`, with a wing (`KN`, `QR`, `K's Kt.`, `Q's B.`) or, for pawns, a file
//!   (`KP`, `BP`, `QKtP`, `K's P.`, `K. B's P.`); the words `King`, `Queen` ... also serve;
//! - squares: a file (`K`, `B`, `KB`, `Q. Kt.`, `Q's B's`) and a rank as a digit or an ordinal
//!   (`4`, `4th`, `3d`, `3rd`, `2nd`, `1st`, `sq.` for the first);
//! - moves: `N-KB3`, `K's Kt. to B's 3d.`, `Q. at K. R's 5th`; captures: `NxP`, `PxQP`,
//!   `Kt. takes K's P.`, with the capture's square when needed, `NxP(Q4)`; promotions `P-Q8=Q`,
//!   `P-Q8(Q)`, `P-Q8Q`, `PxR=Q`; an origin when needed, a rank or a square in parentheses:
//!   `N(1)-Q2`, `R(QR1)-Q1`;
//! - castling: `O-O`, `O-O-O`, `0-0`, `Castles` (either side, whichever fits: both legal is
//!   ambiguous), `Castles KR`, `Castles QR`, `Castles (Q)`, `Castles on K's side`;
//! - around the move: a leading move number (`3.`, `12...`), periods and commas, `ch`, `ch.`,
//!   `check`, `, checking`, `dis ch`, `+`, `mate`, `#`, `e.p.`, `!`, `?`, and remarks in
//!   parentheses written in lower case, such as `(best.)`.
//!
//! # Writing
//! [`descriptive`] writes the short modern form with the shortest text that
//! [`parse_descriptive`] reads back as exactly that move: `P-K4`, `N-KB3` (both knights could
//! go to a bishop's third), `PxP`, `BxN`; qualifiers only when needed (`KN-B3`, `QRxP`,
//! `PxQP`, `P-KR3`), a qualified square before a qualified man, and the origin in parentheses
//! as the last resort (`R(R1)-N1`, `R(QR1)-N1`). Castling is `O-O` or `O-O-O`, a promotion
//! `=Q`, an en-passant capture ends in ` e.p.`, check is `ch` (`Q-R5ch`) and mate ` mate`.

use crate::san::San;
use crate::{CastlingSide, Color, File, Move, Position, Rank, Role, Square};
use arrayvec::ArrayVec;

/// Descriptive notation that cannot be read, or that names no single legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DescriptiveError {
    /// `found` is the unread rest of the text, quoted, or "the end of the text".
    #[error("cannot read {text:?} as descriptive notation: expected {expected}, found {found}")]
    Syntax {
        text: String,
        expected: &'static str,
        found: String,
    },
    #[error("{text:?} names no legal move in {fen}")]
    Illegal { text: String, fen: String },
    /// `candidates` lists the moves that fit, in SAN.
    #[error("{text:?} is ambiguous in {fen}: it fits {candidates}")]
    Ambiguous {
        text: String,
        fen: String,
        candidates: String,
    },
}

/// Reads descriptive notation, short or long, and finds the legal move it names in `pos`.
pub fn parse_descriptive(pos: &Position, text: &str) -> Result<Move, DescriptiveError> {
    let said = Said::parse(text)?;
    let mut fitting = pos
        .legal_moves()
        .into_iter()
        .filter(|mv| said.fits(pos.turn(), mv));
    let Some(first) = fitting.next() else {
        return Err(DescriptiveError::Illegal {
            text: text.to_owned(),
            fen: pos.fen(),
        });
    };
    let Some(second) = fitting.next() else {
        return Ok(first);
    };
    let candidates: Vec<String> = [first, second]
        .into_iter()
        .chain(fitting)
        .map(|mv| San::from_move(pos, mv).to_string())
        .collect();
    Err(DescriptiveError::Ambiguous {
        text: text.to_owned(),
        fen: pos.fen(),
        candidates: candidates.join(", "),
    })
}

/// The short descriptive form of `mv` with `ch` or ` mate` appended when it gives check or
/// mate; see the module docs. `mv` must be legal in `pos`, as for [`crate::san::san_plus`].
pub fn descriptive(pos: &Position, mv: Move) -> String {
    let mut text = shortest(pos, mv);
    if mv.is_en_passant() {
        text.push_str(" e.p.");
    }
    let mut after = *pos;
    after.play_unchecked(mv);
    if after.is_checkmate() {
        text.push_str(" mate");
    } else if after.is_check() {
        text.push_str(if text.ends_with('.') { " ch" } else { "ch" });
    }
    text
}

/// The shortest text naming `mv` that reads back to it: every combination of the qualifiers
/// the move may need, shortest first, and among equals a qualified destination or taken man
/// before a qualified moving man, and both before an origin. The last candidate names origin
/// and destination squares in full, which only one legal move fits; should no candidate read
/// back (a move not legal in `pos`), that one is returned.
fn shortest(pos: &Position, mv: Move) -> String {
    match mv.castling_side() {
        Some(CastlingSide::KingSide) => return "O-O".to_owned(),
        Some(CastlingSide::QueenSide) => return "O-O-O".to_owned(),
        None => {}
    }
    let us = pos.turn();
    let promotion = mv
        .promotion
        .map(|role| format!("={}", role.upper_char()))
        .unwrap_or_default();
    let mut candidates = Vec::new();
    for origin in origin_names(us, mv.from) {
        for man in man_names(us, mv.role, mv.from) {
            match mv.capture {
                None => {
                    for place in place_names(us, mv.to) {
                        candidates.push(format!("{man}{origin}-{place}{promotion}"));
                    }
                }
                Some(taken) => {
                    for target in man_names(!us, taken, mv.capture_square()) {
                        for at in capture_square_names(us, mv.to) {
                            candidates.push(format!("{man}{origin}x{target}{at}{promotion}"));
                        }
                    }
                }
            }
        }
    }
    candidates.sort_by_key(String::len);
    let fullest = candidates.last().cloned().unwrap_or_default();
    candidates
        .into_iter()
        .find(|text| parse_descriptive(pos, text) == Ok(mv))
        .unwrap_or(fullest)
}

/// The short and full name of each file, a to h: the short one leaves out the wing.
const FILE_NAMES: [(&str, &str); 8] = [
    ("R", "QR"),
    ("N", "QN"),
    ("B", "QB"),
    ("Q", "Q"),
    ("K", "K"),
    ("B", "KB"),
    ("N", "KN"),
    ("R", "KR"),
];

/// `names` without repeats, in order: for the king's and queen's files the short name is the
/// full one.
fn distinct(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `sq` as `mover` names it, short then full: `B3`, `KB3`.
fn place_names(mover: Color, sq: Square) -> Vec<String> {
    let (short, full) = FILE_NAMES[sq.file().index()];
    let rank = sq.rank().relative_to(mover).char();
    distinct([format!("{short}{rank}"), format!("{full}{rank}")])
}

/// What may follow a moving man to say where he stands: nothing, his rank, his square.
fn origin_names(mover: Color, from: Square) -> Vec<String> {
    let rank = format!("({})", from.rank().relative_to(mover).char());
    let squares = place_names(mover, from)
        .into_iter()
        .map(|p| format!("({p})"));
    distinct([String::new(), rank].into_iter().chain(squares))
}

/// What may follow a taken man to say where he is taken: nothing, or the square.
fn capture_square_names(mover: Color, to: Square) -> Vec<String> {
    let squares = place_names(mover, to).into_iter().map(|p| format!("({p})"));
    distinct([String::new()].into_iter().chain(squares))
}

/// A man of `owner` standing on `sq`, plain then qualified: `N`, `KN`; `P`, `BP`, `KBP`.
fn man_names(owner: Color, role: Role, sq: Square) -> Vec<String> {
    let letter = role.upper_char();
    match role {
        Role::King | Role::Queen => vec![letter.to_string()],
        Role::Knight | Role::Bishop | Role::Rook => {
            let wing = match wing_of(owner, role, sq) {
                Wing::King => 'K',
                Wing::Queen => 'Q',
            };
            vec![letter.to_string(), format!("{wing}{letter}")]
        }
        Role::Pawn => {
            let (short, full) = FILE_NAMES[sq.file().index()];
            distinct(["P".to_owned(), format!("{short}P"), format!("{full}P")])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What the text says

/// The king's side of the board (files e to h) or the queen's (a to d).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Wing {
    King,
    Queen,
}

/// The wing a man of `owner` on `sq` belongs to, as the module docs explain: a bishop's by his
/// colour, any other man's by the side of the board he stands on.
fn wing_of(owner: Color, role: Role, sq: Square) -> Wing {
    let on_kings_side = if role == Role::Bishop {
        // White's king's bishop starts on f1, a light square; Black's on f8, a dark one.
        sq.is_light() == (owner == Color::White)
    } else {
        sq.file() >= File::E
    };
    if on_kings_side {
        Wing::King
    } else {
        Wing::Queen
    }
}

/// A set of files, as a file name means: `B` is c and f, `KB` is f.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Files(u8);

impl Files {
    const ANY: Files = Files(0xff);
    const KINGS_SIDE: u8 = 0xf0;
    const QUEENS_SIDE: u8 = 0x0f;

    /// The files named after `role`'s starting files.
    fn of(role: Role) -> Option<Files> {
        match role {
            Role::Rook => Some(Files(0b1000_0001)),
            Role::Knight => Some(Files(0b0100_0010)),
            Role::Bishop => Some(Files(0b0010_0100)),
            Role::Queen => Some(Files(0b0000_1000)),
            Role::King => Some(Files(0b0001_0000)),
            Role::Pawn => None,
        }
    }

    /// A file name read as letters: `K`, `B`, `KB`, `Q's B's` (the same letters, K and Q first
    /// as wings).
    fn named(letters: &[Role]) -> Option<Files> {
        match *letters {
            [role] => Files::of(role),
            [wing @ (Role::King | Role::Queen), role @ (Role::Rook | Role::Knight | Role::Bishop)] =>
            {
                let side = if wing == Role::King {
                    Files::KINGS_SIDE
                } else {
                    Files::QUEENS_SIDE
                };
                Files::of(role).map(|files| Files(files.0 & side))
            }
            _ => None,
        }
    }

    fn contains(self, file: File) -> bool {
        self.0 & (1 << file.index()) != 0
    }
}

/// Squares as the moving side names them: `KB3` is f3 for White and f6 for Black, `B3` is
/// c3 or f3, and an origin `(1)` is the whole first rank.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Place {
    files: Files,
    /// Counted from the moving side's own side.
    rank: Rank,
}

impl Place {
    fn contains(self, mover: Color, sq: Square) -> bool {
        self.files.contains(sq.file()) && sq.rank().relative_to(mover) == self.rank
    }
}

/// A man as the text names him: his kind, and his wing (pieces) or files (pawns) if given.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Man {
    role: Role,
    wing: Option<Wing>,
    files: Files,
}

impl Man {
    /// A man read as letters: `P`, `Kt`, `KB` (king's bishop), `QR`, `KP`, `KBP`, `QKtP`.
    fn named(letters: &[Role]) -> Option<Man> {
        let man = |role, wing, files| Some(Man { role, wing, files });
        match *letters {
            [role] => man(role, None, Files::ANY),
            [wing @ (Role::King | Role::Queen), role @ (Role::Rook | Role::Knight | Role::Bishop)] =>
            {
                let wing = if wing == Role::King {
                    Wing::King
                } else {
                    Wing::Queen
                };
                man(role, Some(wing), Files::ANY)
            }
            [ref file @ .., Role::Pawn] => man(Role::Pawn, None, Files::named(file)?),
            _ => None,
        }
    }

    /// Whether a `role` of `owner` standing on `sq` is this man.
    fn fits(self, owner: Color, role: Role, sq: Square) -> bool {
        self.role == role
            && self.files.contains(sq.file())
            && self
                .wing
                .is_none_or(|wing| wing_of(owner, role, sq) == wing)
    }
}

/// What a move's text says, before it is matched against the legal moves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Said {
    /// `None` for a bare `Castles`, which fits either side.
    Castle(Option<CastlingSide>),
    Move {
        man: Man,
        origin: Option<Place>,
        action: Action,
        promotion: Option<Role>,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Action {
    /// To an empty square.
    To(Place),
    /// Taking `man`, on the square `at` if given, by en passant if `en_passant`.
    Takes {
        man: Man,
        at: Option<Place>,
        en_passant: bool,
    },
}

impl Said {
    /// Whether `mover`'s legal move `mv` is what the text says.
    fn fits(&self, mover: Color, mv: &Move) -> bool {
        match *self {
            Said::Castle(side) => mv
                .castling_side()
                .is_some_and(|played| side.is_none_or(|said| said == played)),
            Said::Move {
                man,
                origin,
                action,
                promotion,
            } => {
                let action_fits = match action {
                    Action::To(place) => !mv.is_capture() && place.contains(mover, mv.to),
                    Action::Takes {
                        man: taken,
                        at,
                        en_passant,
                    } => {
                        mv.capture
                            .is_some_and(|role| taken.fits(!mover, role, mv.capture_square()))
                            && at.is_none_or(|place| place.contains(mover, mv.to))
                            && (!en_passant || mv.is_en_passant())
                    }
                };
                !mv.is_castle()
                    && man.fits(mover, mv.role, mv.from)
                    && origin.is_none_or(|place| place.contains(mover, mv.from))
                    && mv.promotion == promotion
                    && action_fits
            }
        }
    }

    fn parse(text: &str) -> Result<Said, DescriptiveError> {
        let lexemes = lex(text)?;
        // Check, mate and e.p. marks close the move, in any order.
        let mut end = lexemes.len();
        let mut en_passant = false;
        while let Some(last) = end.checked_sub(1).map(|i| lexemes[i].token) {
            match last {
                Token::Check | Token::Mate => {}
                Token::EnPassant => en_passant = true,
                _ => break,
            }
            end -= 1;
        }
        let mut parser = Parser {
            text,
            lexemes: &lexemes,
            end,
            next: 0,
        };
        let said = match parser.peek() {
            None => return Err(parser.error("a move")),
            Some(Token::CastleMark) => parser.castle_marks()?,
            Some(Token::Castles) => parser.castles()?,
            Some(_) => parser.piece_move(en_passant)?,
        };
        if parser.next < end {
            return Err(parser.error("the end of the move"));
        }
        if en_passant
            && !matches!(
                said,
                Said::Move {
                    action: Action::Takes { .. },
                    ..
                }
            )
        {
            parser.next = end;
            return Err(parser.error("a capture before e.p."));
        }
        Ok(said)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the text

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Token {
    /// A piece's letter or name: K, Q, R, B, N, Kt, P. Whether K and Q name a man, a wing or a
    /// file is for the parser to say from where they stand.
    Letter(Role),
    /// A rank: `4`, `4th`, `3d`, `sq.`; its range is checked by the parser.
    Number(u32),
    /// `-`, `to`, `at`.
    To,
    /// `x`, `takes`, `:`.
    Takes,
    /// `=` or `/` before a promotion piece.
    Promote,
    Open,
    Close,
    /// `O` or `0`, as in O-O.
    CastleMark,
    /// The word `Castles`.
    Castles,
    /// `on` and `side`, as in "Castles on K's side".
    On,
    Side,
    Check,
    Mate,
    EnPassant,
}

/// A token and the byte offset in the text where it starts.
#[derive(Copy, Clone, Debug)]
struct Lexeme {
    token: Token,
    at: usize,
}

/// The longest sensible move text, `QRP(QR7)xKt(QKt8)=Q dis ch`, is under twenty tokens; more
/// is not a move.
const MAX_LEXEMES: usize = 32;

/// The words of the notation, matched without regard to case.
const WORDS: [(&str, Token); 28] = [
    ("to", Token::To),
    ("at", Token::To),
    ("x", Token::Takes),
    ("takes", Token::Takes),
    ("ch", Token::Check),
    ("check", Token::Check),
    ("checking", Token::Check),
    ("dis", Token::Check),
    ("disc", Token::Check),
    ("dbl", Token::Check),
    ("double", Token::Check),
    ("mate", Token::Mate),
    ("mates", Token::Mate),
    ("checkmate", Token::Mate),
    ("ep", Token::EnPassant),
    ("castles", Token::Castles),
    ("castle", Token::Castles),
    ("on", Token::On),
    ("side", Token::Side),
    ("sq", Token::Number(1)),
    ("square", Token::Number(1)),
    ("kt", Token::Letter(Role::Knight)),
    ("king", Token::Letter(Role::King)),
    ("queen", Token::Letter(Role::Queen)),
    ("rook", Token::Letter(Role::Rook)),
    ("bishop", Token::Letter(Role::Bishop)),
    ("knight", Token::Letter(Role::Knight)),
    ("pawn", Token::Letter(Role::Pawn)),
];

fn word(text: &str) -> Option<Token> {
    WORDS
        .iter()
        .find(|(word, _)| word.eq_ignore_ascii_case(text))
        .map(|&(_, token)| token)
}

/// The run of lower-case ASCII letters `text` starts with.
fn lower_run(text: &str) -> &str {
    let len = text.bytes().take_while(u8::is_ascii_lowercase).count();
    &text[..len]
}

fn syntax_error(text: &str, at: usize, expected: &'static str) -> DescriptiveError {
    let rest = text.get(at..).unwrap_or("").trim();
    DescriptiveError::Syntax {
        text: text.to_owned(),
        expected,
        found: if rest.is_empty() {
            "the end of the text".to_owned()
        } else {
            format!("{rest:?}")
        },
    }
}

/// Splits move text into tokens, dropping what carries no meaning: periods, commas, the
/// possessive `'s`, annotation marks, a leading move number and lower-case remarks in
/// parentheses.
fn lex(text: &str) -> Result<ArrayVec<Lexeme, MAX_LEXEMES>, DescriptiveError> {
    let mut lexemes = ArrayVec::new();
    let mut at = move_number_len(text);
    while let Some(c) = text[at..].chars().next() {
        let rest = &text[at..];
        let (token, len) = match c {
            c if c.is_whitespace() || matches!(c, '.' | ',' | ';' | '!' | '?') => {
                at += c.len_utf8();
                continue;
            }
            '\'' | '\u{2019}' => {
                at += c.len_utf8();
                // The possessive of "K's Kt." and "Kt.'s 5th" says nothing the letters do not.
                let after = &text[at..];
                if after.starts_with('s') && !after[1..].starts_with(|c: char| c.is_alphabetic()) {
                    at += 1;
                }
                continue;
            }
            '(' => match remark_len(rest) {
                Some(len) => {
                    at += len;
                    continue;
                }
                None => (Token::Open, 1),
            },
            ')' => (Token::Close, 1),
            '-' | '\u{2013}' | '\u{2014}' => (Token::To, c.len_utf8()),
            ':' | '\u{d7}' => (Token::Takes, c.len_utf8()),
            '=' | '/' => (Token::Promote, 1),
            '+' => (Token::Check, 1),
            '#' => (Token::Mate, 1),
            '0'..='9' => number(rest),
            'A'..='Z' => capitalised(rest).ok_or_else(|| {
                syntax_error(text, at, "a piece (K, Q, R, B, Kt, N, P) or Castles")
            })?,
            'a'..='z' => lower_case_word(rest).ok_or_else(|| {
                syntax_error(
                    text,
                    at,
                    "a word of the notation (to, takes, ch, mate, e.p.)",
                )
            })?,
            _ => return Err(syntax_error(text, at, "a piece, a square, - or x")),
        };
        lexemes
            .try_push(Lexeme { token, at })
            .map_err(|_| syntax_error(text, at, "the end of the move (the text is too long)"))?;
        at += len;
    }
    Ok(lexemes)
}

/// The length of a leading move number such as `3. ` or `12...`, which belongs to the game
/// text rather than to the move; 0 if there is none.
fn move_number_len(text: &str) -> usize {
    let start = text.len() - text.trim_start().len();
    let digits = text[start..].bytes().take_while(u8::is_ascii_digit).count();
    let dots = text[start + digits..]
        .bytes()
        .take_while(|&b| b == b'.')
        .count();
    if digits > 0 && dots > 0 {
        start + digits + dots
    } else {
        0
    }
}

/// The length of `(best.)` or any parenthesised remark without capitals or digits, which
/// therefore names no piece, square or rank; `None` for `(Q)`, `(1)` or `(QR1)`.
fn remark_len(text: &str) -> Option<usize> {
    let close = text.find(')')?;
    let inner = &text[1..close];
    let meaningful = inner
        .chars()
        .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    (!meaningful).then_some(close + 1)
}

/// A rank as a digit or an ordinal (`4`, `4th`, `3d`), or the `0` of `0-0`.
fn number(text: &str) -> (Token, usize) {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if &text[..digits] == "0" {
        return (Token::CastleMark, 1);
    }
    let value = text[..digits].parse().unwrap_or(u32::MAX);
    let suffix = lower_run(&text[digits..]);
    let suffix_len = if matches!(suffix, "st" | "nd" | "rd" | "d" | "th") {
        suffix.len()
    } else {
        0
    };
    (Token::Number(value), digits + suffix_len)
}

/// A capitalised word (`Castles`, `King`, `Kt`) or a piece letter followed by whatever comes
/// next (`Q` of `QxP`, `Kt` of `KtxP`).
fn capitalised(text: &str) -> Option<(Token, usize)> {
    let len = 1 + lower_run(&text[1..]).len();
    if let Some(token) = word(&text[..len]) {
        return Some((token, len));
    }
    if text.starts_with("Kt") {
        return Some((Token::Letter(Role::Knight), 2));
    }
    match text.as_bytes()[0] {
        b'O' => Some((Token::CastleMark, 1)),
        letter @ (b'K' | b'Q' | b'R' | b'B' | b'N' | b'P') => {
            Some((Token::Letter(Role::from_char(letter as char)?), 1))
        }
        _ => None,
    }
}

/// A lower-case word of the notation; `e.p.` and `en passant` are one token each.
fn lower_case_word(text: &str) -> Option<(Token, usize)> {
    let run = lower_run(text);
    if run == "e" && text[1..].starts_with(".p") {
        let len = if text[1..].starts_with(".p.") { 4 } else { 3 };
        return Some((Token::EnPassant, len));
    }
    if run == "en" {
        let gap = text[2..].len() - text[2..].trim_start().len();
        if gap > 0 && text[2 + gap..].starts_with("passant") {
            return Some((Token::EnPassant, 2 + gap + "passant".len()));
        }
    }
    word(run).map(|token| (token, run.len()))
}

/// Reads tokens into a [`Said`]; `end` leaves out the closing check and e.p. marks.
struct Parser<'a> {
    text: &'a str,
    lexemes: &'a [Lexeme],
    end: usize,
    next: usize,
}

impl Parser<'_> {
    fn token(&self, index: usize) -> Option<Token> {
        (index < self.end).then(|| self.lexemes[index].token)
    }

    fn peek(&self) -> Option<Token> {
        self.token(self.next)
    }

    fn eat(&mut self, token: Token) -> bool {
        let found = self.peek() == Some(token);
        if found {
            self.next += 1;
        }
        found
    }

    fn expect(&mut self, token: Token, expected: &'static str) -> Result<(), DescriptiveError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn error(&self, expected: &'static str) -> DescriptiveError {
        self.error_at(self.next, expected)
    }

    fn error_at(&self, index: usize, expected: &'static str) -> DescriptiveError {
        let at = self
            .lexemes
            .get(index)
            .map_or(self.text.len(), |lexeme| lexeme.at);
        syntax_error(self.text, at, expected)
    }

    /// The run of piece letters at the cursor (at most three: `K`, `B`, `P` of `KBP`).
    fn letters(&mut self) -> Result<ArrayVec<Role, 3>, DescriptiveError> {
        let mut letters = ArrayVec::new();
        while let Some(Token::Letter(role)) = self.peek() {
            letters
                .try_push(role)
                .map_err(|_| self.error("at most three letters naming a man or a file"))?;
            self.next += 1;
        }
        Ok(letters)
    }

    fn man(&mut self, expected: &'static str) -> Result<Man, DescriptiveError> {
        let start = self.next;
        let letters = self.letters()?;
        Man::named(&letters).ok_or_else(|| self.error_at(start, expected))
    }

    /// A square: a file name and a rank, `KB3` or `K. B's 3d`.
    fn place(&mut self) -> Result<Place, DescriptiveError> {
        const EXPECTED: &str = "a square such as K4, QB3 or K. B's 3d";
        let start = self.next;
        let files = Files::named(&self.letters()?).ok_or_else(|| self.error_at(start, EXPECTED))?;
        let rank = self.rank().ok_or_else(|| self.error_at(start, EXPECTED))?;
        Ok(Place { files, rank })
    }

    fn rank(&mut self) -> Option<Rank> {
        let Some(Token::Number(n @ 1..=8)) = self.peek() else {
            return None;
        };
        self.next += 1;
        Rank::new(n - 1)
    }

    /// Where the moving man stands, in the parentheses after him: a rank `(1)` or a square
    /// `(QR1)`.
    fn origin(&mut self) -> Result<Place, DescriptiveError> {
        match self.rank() {
            Some(rank) => Ok(Place {
                files: Files::ANY,
                rank,
            }),
            None => self.place(),
        }
    }

    /// Whether a promotion in parentheses, `(Q)`, is next.
    fn promotion_in_parentheses(&self) -> bool {
        matches!(
            (
                self.peek(),
                self.token(self.next + 1),
                self.token(self.next + 2)
            ),
            (
                Some(Token::Open),
                Some(Token::Letter(_)),
                Some(Token::Close)
            )
        )
    }

    /// Whether a bare promotion letter is next, as in `P-Q8Q`; any other letter there is a
    /// stray man, for the caller to report.
    fn promotion_letter_next(&self) -> bool {
        matches!(self.peek(), Some(Token::Letter(role)) if Role::PROMOTIONS.contains(&role))
    }

    /// `=Q`, `/Q`, `(Q)` or a bare `Q` after the square.
    fn promotion(&mut self) -> Result<Option<Role>, DescriptiveError> {
        let in_parentheses = self.promotion_in_parentheses();
        if in_parentheses {
            self.next += 1;
        } else if !self.eat(Token::Promote) && !self.promotion_letter_next() {
            return Ok(None);
        }
        let role = match self.peek() {
            Some(Token::Letter(role)) if Role::PROMOTIONS.contains(&role) => role,
            _ => return Err(self.error("a piece to promote to (Q, R, B, N or Kt)")),
        };
        self.next += 1;
        if in_parentheses {
            self.expect(Token::Close, ")")?;
        }
        Ok(Some(role))
    }

    fn piece_move(&mut self, en_passant: bool) -> Result<Said, DescriptiveError> {
        let man = self.man("a man such as P, Kt, N, K's B. or QR")?;
        let mut origin = None;
        if self.eat(Token::Open) {
            origin = Some(self.origin()?);
            self.expect(Token::Close, ")")?;
        }
        let action = if self.eat(Token::To) {
            Action::To(self.place()?)
        } else if self.eat(Token::Takes) {
            let taken = self.man("the man taken, such as P, Kt, KP or K's B.")?;
            let mut at = None;
            if self.peek() == Some(Token::Open) && !self.promotion_in_parentheses() {
                self.next += 1;
                at = Some(self.place()?);
                self.expect(Token::Close, ")")?;
            }
            Action::Takes {
                man: taken,
                at,
                en_passant,
            }
        } else {
            return Err(self.error("- or to (a move), or x or takes (a capture)"));
        };
        let promotion = self.promotion()?;
        Ok(Said::Move {
            man,
            origin,
            action,
            promotion,
        })
    }

    /// `O-O` or `O-O-O`.
    fn castle_marks(&mut self) -> Result<Said, DescriptiveError> {
        const EXPECTED: &str = "O-O or O-O-O";
        let mut marks = 0;
        loop {
            self.expect(Token::CastleMark, EXPECTED)?;
            marks += 1;
            if marks == 3 || !self.eat(Token::To) {
                break;
            }
        }
        match marks {
            2 => Ok(Said::Castle(Some(CastlingSide::KingSide))),
            3 => Ok(Said::Castle(Some(CastlingSide::QueenSide))),
            _ => Err(self.error(EXPECTED)),
        }
    }

    /// `Castles`, `Castles KR`, `Castles (Q)`, `Castles on K's side`.
    fn castles(&mut self) -> Result<Said, DescriptiveError> {
        self.next += 1;
        self.eat(Token::On);
        let parenthesised = self.eat(Token::Open);
        let start = self.next;
        let side = match self.letters()?.as_slice() {
            [] => None,
            [Role::King] | [Role::King, Role::Rook] => Some(CastlingSide::KingSide),
            [Role::Queen] | [Role::Queen, Role::Rook] => Some(CastlingSide::QueenSide),
            _ => return Err(self.error_at(start, "K, KR, Q or QR: the side castled on")),
        };
        if parenthesised {
            self.expect(Token::Close, ")")?;
        }
        self.eat(Token::Side);
        Ok(Said::Castle(side))
    }
}
