//! staunton always answers a legal move when one exists, whatever the position's history and
//! however tight the limits: random games (with shuffling plies that repeat positions and
//! push the fifty-move count towards 100), searched with every kind of limit down to a node,
//! a millisecond, a clock of a few milliseconds and a stop already set. A search that returns
//! no move loses the game (`bestmove 0000`), so this is a correctness property, not strength.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use arbiter_rules::{Move, Position};
use proptest::prelude::*;
use staunton::{ClockLimits, Engine, Limits, Params};

/// A game from the start: `random` random plies, then `shuffles` plies of knights going out
/// and back (repetitions, and a fifty-move count that grows), stopping at the game's end.
fn history(seed: u64, random: usize, shuffles: usize) -> Vec<Position> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let mut positions = vec![Position::starting()];
    for ply in 0..random + shuffles {
        let pos = *positions.last().unwrap();
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let quiet: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|mv| !mv.is_zeroing())
            .collect();
        let mv = if ply >= random && !quiet.is_empty() {
            quiet[next() as usize % quiet.len()]
        } else {
            legal[next() as usize % legal.len()]
        };
        positions.push(pos.play(mv).unwrap());
    }
    positions
}

fn limits(kind: u8, amount: u64, searchmoves: Vec<Move>) -> Limits {
    let ms = Duration::from_millis(amount % 4);
    let mut limits = Limits {
        searchmoves,
        ..Limits::default()
    };
    match kind % 6 {
        0 => limits.nodes = Some(amount % 64 + 1),
        1 => limits.depth = Some((amount % 3) as u32 + 1),
        2 => limits.movetime = Some(ms),
        3 => {
            limits.clock = Some(ClockLimits {
                wtime: ms + Duration::from_millis(1),
                btime: ms + Duration::from_millis(1),
                winc: Duration::ZERO,
                binc: Duration::ZERO,
                movestogo: None,
            })
        }
        4 => limits.stop_at = Some(ms),
        _ => {
            limits.nodes = Some(1);
            limits.depth = Some(1);
        }
    }
    limits
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_legal_move_is_always_answered(
        seed in any::<u64>(),
        random in 0usize..60,
        shuffles in 0usize..120,
        kind in any::<u8>(),
        amount in any::<u64>(),
        stopped in any::<bool>(),
        restrict in any::<bool>(),
        corrected in any::<bool>(),
        singular in any::<bool>(),
    ) {
        let history = history(seed, random, shuffles);
        let root = *history.last().unwrap();
        let legal = root.legal_moves();
        // `go searchmoves` with a few of the legal moves, sometimes.
        let searchmoves: Vec<Move> = if restrict {
            legal.iter().copied().step_by(3).collect()
        } else {
            Vec::new()
        };
        let limits = limits(kind, amount, searchmoves.clone());
        // The correction history shifts static evaluations, and singular extensions search
        // nodes again without their hash move; neither may cost the move.
        let params = Params {
            corr_hist_percent: if corrected { 100 } else { 0 },
            se_depth: if singular { 4 } else { 0 },
            ..Params::default()
        };
        let mut engine = Engine::new(params, 1);
        let stop = AtomicBool::new(stopped);
        let result = engine.search(&history, &limits, &stop, &mut |_| {});
        if legal.is_empty() {
            prop_assert_eq!(result.best_move, None);
        } else {
            let mv = result.best_move;
            prop_assert!(mv.is_some(), "no move in {} after {} plies ({:?})", root.fen(), history.len() - 1, limits);
            let mv = mv.unwrap();
            prop_assert!(legal.contains(&mv), "{mv:?} is not legal in {}", root.fen());
            if !searchmoves.is_empty() {
                prop_assert!(searchmoves.contains(&mv), "{mv:?} is not among searchmoves");
            }
        }
    }
}
