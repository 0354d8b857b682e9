//! Perft: counting the leaves of the legal move tree, the standard test and benchmark of a
//! move generator.

use std::ops::ControlFlow;

use crate::{Move, Position};

/// Leaf count at `depth`, counting the last ply by set sizes rather than making the moves.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        _ => {
            let mut nodes = 0;
            let _ = pos.for_each_piece_moves::<()>(|set| {
                set.for_each_move(pos, |mv| {
                    let mut next = *pos;
                    next.play_unchecked(mv);
                    nodes += perft(&next, depth - 1);
                });
                ControlFlow::Continue(())
            });
            nodes
        }
    }
}

/// Leaf count at `depth`, making every move including the last ply: measures make-move as well
/// as generation. Moves are made straight from the generator's sets, without a list. A leaf
/// is counted where it is made rather than in a call that would only return 1; `black_box`
/// keeps the compiler from dropping the make-move whose result nobody reads.
pub fn perft_full(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    let _ = pos.for_each_piece_moves::<()>(|set| {
        set.for_each_move(pos, |mv| {
            let mut next = *pos;
            next.play_unchecked(mv);
            nodes += if depth == 1 {
                std::hint::black_box(&next);
                1
            } else {
                perft_full(&next, depth - 1)
            };
        });
        ControlFlow::Continue(())
    });
    nodes
}

/// The leaf count below each legal move, in generation order: what `go perft` prints, and how
/// two generators are compared to find the move where they differ.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut next = *pos;
            next.play_unchecked(mv);
            (mv, perft(&next, depth.saturating_sub(1)))
        })
        .collect()
}
