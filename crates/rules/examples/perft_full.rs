//! `cargo run --release -p arbiter-rules --example perft_full -- ours|shakmaty|cozy DEPTH`: perft
//! making every move from the start position, one implementation per run, so that a
//! profiler or `valgrind --tool=callgrind` (instruction counts: repeatable on a busy machine)
//! can compare make-move costs.
fn main() {
    let mut args = std::env::args().skip(1);
    let who = args.next().unwrap_or_else(|| "ours".into());
    let depth: u32 = args.next().and_then(|d| d.parse().ok()).unwrap_or(4);
    let nodes = match who.as_str() {
        "shakmaty" => shak(&shakmaty::Chess::default(), depth),
        "cozy" => cozy(&cozy_chess::Board::default(), depth),
        _ => arbiter_rules::perft::perft_full(&arbiter_rules::Position::starting(), depth),
    };
    println!("{who}: {nodes} nodes");
}

fn shak(pos: &shakmaty::Chess, depth: u32) -> u64 {
    use shakmaty::Position;
    if depth == 0 {
        return 1;
    }
    pos.legal_moves()
        .iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            shak(&child, depth - 1)
        })
        .sum()
}

fn cozy(board: &cozy_chess::Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    board.generate_moves(|moves| {
        for mv in moves {
            let mut child = board.clone();
            child.play_unchecked(mv);
            nodes += cozy(&child, depth - 1);
        }
        false
    });
    nodes
}
