//! The peers' perfts, each written the way its own crate writes it, shared by the perft bench
//! and the `perft_full` example (for instruction counts) so that both measure the same code.
//! A directory module, so that Cargo does not take it for a bench of its own.

use shakmaty::{Chess, Position as _};

/// shakmaty's own `perft`: clone-make `Chess`, count `legal_moves().len()` at depth 1.
pub fn shakmaty_perft(pos: &Chess, depth: u32) -> u64 {
    if depth < 1 {
        1
    } else {
        let moves = pos.legal_moves();
        if depth == 1 {
            moves.len() as u64
        } else {
            moves
                .iter()
                .map(|&m| {
                    let mut child = pos.clone();
                    child.play_unchecked(m);
                    shakmaty_perft(&child, depth - 1)
                })
                .sum()
        }
    }
}

/// The same without the depth-1 shortcut: every move is made. Our `perft_full` counts a leaf
/// where it makes it instead of in a call that returns 1; written that way (with `black_box` on
/// the child) shakmaty measured slower (68 against 75 Mnps from the start position), so the
/// peers keep this form, their faster one.
pub fn shakmaty_perft_full(pos: &Chess, depth: u32) -> u64 {
    if depth < 1 {
        1
    } else {
        pos.legal_moves()
            .iter()
            .map(|&m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                shakmaty_perft_full(&child, depth - 1)
            })
            .sum()
    }
}

/// cozy-chess's `perft_bulk` from its examples: the last ply sums `PieceMoves::len()`.
pub fn cozy_perft(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    match depth {
        0 => nodes += 1,
        1 => {
            board.generate_moves(|moves| {
                nodes += moves.len() as u64;
                false
            });
        }
        _ => {
            board.generate_moves(|moves| {
                for mv in moves {
                    let mut board = board.clone();
                    board.play_unchecked(mv);
                    nodes += cozy_perft(&board, depth - 1);
                }
                false
            });
        }
    }
    nodes
}

/// cozy-chess's `perft` from its examples: every move is made.
pub fn cozy_perft_full(board: &cozy_chess::Board, depth: u32) -> u64 {
    if depth == 0 {
        1
    } else {
        let mut nodes = 0;
        board.generate_moves(|moves| {
            for mv in moves {
                let mut board = board.clone();
                board.play_unchecked(mv);
                nodes += cozy_perft_full(&board, depth - 1);
            }
            false
        });
        nodes
    }
}
