//! UCI long algebraic notation: `e2e4`, `e7e8q`, castling as the king's move `e1g1`, `0000`
//! for the null move.

use crate::{Move, Position, Role, Square};

/// A UCI move string that does not name a legal move in the position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UciMoveError {
    #[error("expected a UCI move such as e2e4 or e7e8q, found {0:?}")]
    Syntax(String),
    #[error("{uci} is not a legal move in {fen}")]
    Illegal { uci: String, fen: String },
}

/// The UCI text of a move, or `0000` for the null move (`None`).
pub fn move_to_uci(mv: Option<Move>) -> String {
    match mv {
        None => "0000".to_owned(),
        Some(mv) => {
            let mut s = format!("{}{}", mv.from, mv.to);
            if let Some(role) = mv.promotion {
                s.push(role.char());
            }
            s
        }
    }
}

/// The from, to and promotion a UCI string names, checked for syntax only. `Ok(None)` is the
/// null move `0000`.
pub fn parse_uci_squares(
    text: &str,
) -> Result<Option<(Square, Square, Option<Role>)>, UciMoveError> {
    let syntax = || UciMoveError::Syntax(text.to_owned());
    if text == "0000" {
        return Ok(None);
    }
    let bytes = text.as_bytes();
    if !(bytes.len() == 4 || bytes.len() == 5) {
        return Err(syntax());
    }
    let from = Square::from_ascii(&bytes[0..2]).ok_or_else(syntax)?;
    let to = Square::from_ascii(&bytes[2..4]).ok_or_else(syntax)?;
    let promotion = match bytes.get(4) {
        None => None,
        Some(&c) => match Role::from_char(c as char) {
            Some(role) if Role::PROMOTIONS.contains(&role) => Some(role),
            _ => return Err(syntax()),
        },
    };
    Ok(Some((from, to, promotion)))
}

/// Reads a UCI move and finds the legal move it names in `pos`. The null move is not a legal
/// move and is rejected here; engines and the runner treat `0000` separately.
pub fn parse_uci_move(pos: &Position, text: &str) -> Result<Move, UciMoveError> {
    let illegal = || UciMoveError::Illegal {
        uci: text.to_owned(),
        fen: pos.fen(),
    };
    let (from, to, promotion) = parse_uci_squares(text)?.ok_or_else(illegal)?;
    pos.legal_moves_from(from)
        .into_iter()
        .find(|mv| mv.to == to && mv.promotion == promotion)
        .ok_or_else(illegal)
}
