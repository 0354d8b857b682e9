//! EPD: a position's first four FEN fields followed by operations such as `bm Nf3;` or
//! `id "WAC.001";`, the format of test suites and opening books.

use std::fmt;

use crate::san::{parse_san, SanError};
use crate::setup::Setup;
use crate::{Move, Position, PositionError};

/// One EPD record: a validated position and its operations in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Epd {
    pub position: Position,
    /// `(opcode, operands)`; string operands are stored without their quotes.
    pub operations: Vec<(String, Vec<String>)>,
}

/// An EPD line that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EpdError {
    #[error("EPD needs four position fields (placement, side, castling, en passant), found {0}")]
    MissingFields(usize),
    #[error(transparent)]
    Position(#[from] PositionError),
    #[error("EPD operation {opcode:?}: {reason}")]
    Operation { opcode: String, reason: String },
    #[error("EPD operation {opcode:?}: {source}")]
    Move { opcode: String, source: SanError },
}

impl Epd {
    /// Reads one EPD line. The `hmvc` and `fmvn` operations set the move counters, and a
    /// full six-field FEN is accepted too (many opening books are written that way). A leading
    /// byte order mark is skipped, as [`crate::pgn::PgnReader`] skips one: editors on Windows
    /// write it at the start of a file, so it arrives in front of the first line.
    pub fn parse(line: &str) -> Result<Epd, EpdError> {
        let line = line.trim();
        let line = line.strip_prefix('\u{feff}').unwrap_or(line).trim_start();
        let mut fields = Vec::with_capacity(4);
        let mut rest = line;
        for _ in 0..4 {
            rest = rest.trim_start();
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if end == 0 {
                return Err(EpdError::MissingFields(fields.len()));
            }
            fields.push(&rest[..end]);
            rest = &rest[end..];
        }
        let mut setup = Setup::from_fen_fields(fields[0], fields[1], fields[2], fields[3])
            .map_err(PositionError::from)?;
        // A six-field FEN: two bare numbers before any operation.
        let mut words = rest.split_whitespace();
        if let (Some(a), Some(b)) = (words.next(), words.next()) {
            if let (Ok(half), Ok(full)) = (a.parse::<u32>(), b.parse::<u32>()) {
                setup.halfmove_clock = half;
                setup.fullmove_number = full.max(1);
                rest = rest.trim_start();
                rest = rest[a.len()..].trim_start();
                rest = &rest[b.len()..];
            }
        }
        let operations = parse_operations(rest)?;
        for (opcode, operands) in &operations {
            let number = |what: &str| -> Result<u32, EpdError> {
                operands
                    .first()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| EpdError::Operation {
                        opcode: opcode.clone(),
                        reason: format!("expected {what}"),
                    })
            };
            match opcode.as_str() {
                "hmvc" => setup.halfmove_clock = number("a halfmove count")?,
                "fmvn" => setup.fullmove_number = number("a fullmove number")?.max(1),
                _ => {}
            }
        }
        Ok(Epd {
            position: Position::from_setup(&setup)?,
            operations,
        })
    }

    /// The operands of the first operation named `opcode`.
    pub fn operation(&self, opcode: &str) -> Option<&[String]> {
        self.operations
            .iter()
            .find(|(op, _)| op == opcode)
            .map(|(_, operands)| operands.as_slice())
    }

    /// The `id` string.
    pub fn id(&self) -> Option<&str> {
        self.operation("id")
            .and_then(|ops| ops.first())
            .map(String::as_str)
    }

    /// A comment operation `c0` to `c9`.
    pub fn comment(&self, n: u8) -> Option<&str> {
        self.operation(&format!("c{n}"))
            .and_then(|ops| ops.first())
            .map(String::as_str)
    }

    /// The moves of a SAN-valued operation such as `bm` (best moves) or `am` (avoid moves).
    pub fn moves(&self, opcode: &str) -> Result<Vec<Move>, EpdError> {
        self.operation(opcode)
            .unwrap_or_default()
            .iter()
            .map(|san| {
                parse_san(&self.position, san).map_err(|source| EpdError::Move {
                    opcode: opcode.to_owned(),
                    source,
                })
            })
            .collect()
    }
}

fn parse_operations(text: &str) -> Result<Vec<(String, Vec<String>)>, EpdError> {
    let mut operations = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else { break };
        if first == ';' {
            chars.next();
            continue;
        }
        let mut opcode = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != ';') {
            opcode.push(c);
        }
        if !opcode
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            return Err(EpdError::Operation {
                opcode,
                reason: "an opcode starts with a letter".into(),
            });
        }
        let mut operands = Vec::new();
        loop {
            while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
            match chars.peek() {
                None => {
                    return Err(EpdError::Operation {
                        opcode,
                        reason: "missing ';' at the end of the operation".into(),
                    });
                }
                Some(';') => {
                    chars.next();
                    break;
                }
                Some('"') => {
                    chars.next();
                    let mut operand = String::new();
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some(c) => operand.push(c),
                            None => {
                                return Err(EpdError::Operation {
                                    opcode,
                                    reason: "unterminated string operand".into(),
                                });
                            }
                        }
                    }
                    operands.push(operand);
                }
                Some(_) => {
                    let mut operand = String::new();
                    while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != ';') {
                        operand.push(c);
                    }
                    if operand.is_empty() {
                        // A newline or other whitespace inside an operation.
                        chars.next();
                    } else {
                        operands.push(operand);
                    }
                }
            }
        }
        operations.push((opcode, operands));
    }
    Ok(operations)
}

impl fmt::Display for Epd {
    /// Writes the four position fields and the operations; operands with spaces or
    /// non-move text are quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.position.to_setup().epd_fields())?;
        for (opcode, operands) in &self.operations {
            write!(f, " {opcode}")?;
            let is_text = opcode == "id"
                || (opcode.len() == 2
                    && opcode.starts_with('c')
                    && opcode.as_bytes()[1].is_ascii_digit());
            for operand in operands {
                if is_text
                    || operand.is_empty()
                    || operand.contains(|c: char| c.is_whitespace() || c == ';' || c == '"')
                {
                    write!(f, " \"{}\"", operand.replace('"', "'"))?;
                } else {
                    write!(f, " {operand}")?;
                }
            }
            f.write_str(";")?;
        }
        Ok(())
    }
}
