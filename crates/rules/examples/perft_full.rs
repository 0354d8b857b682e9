//! `cargo run --release -p arbiter-rules --example perft_full -- ours|shakmaty|cozy DEPTH [bulk]
//! [kiwipete]`: perft making every move (or, with `bulk`, counting the last ply) from the start
//! position (or Kiwipete), one implementation per run, so that a
//! profiler or `valgrind --tool=callgrind` (instruction counts: repeatable on a busy machine)
//! can compare make-move costs.
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn main() {
    let mut args = std::env::args().skip(1);
    let who = args.next().unwrap_or_else(|| "ours".into());
    let depth: u32 = args.next().and_then(|d| d.parse().ok()).unwrap_or(4);
    let rest: Vec<String> = args.collect();
    let bulk = rest.iter().any(|a| a == "bulk");
    let fen = if rest.iter().any(|a| a == "kiwipete") {
        KIWIPETE
    } else {
        arbiter_rules::STARTING_FEN
    };
    let nodes = match (who.as_str(), bulk) {
        ("shakmaty", false) => shak(&shak_pos(fen), depth),
        ("shakmaty", true) => shakmaty::perft(&shak_pos(fen), depth),
        ("cozy", false) => cozy(&fen.parse().expect("a legal FEN"), depth),
        ("cozy", true) => cozy_bulk(&fen.parse().expect("a legal FEN"), depth),
        (_, false) => arbiter_rules::perft::perft_full(&fen.parse().expect("a legal FEN"), depth),
        (_, true) => arbiter_rules::perft::perft(&fen.parse().expect("a legal FEN"), depth),
    };
    println!("{who}: {nodes} nodes");
}

fn shak_pos(fen: &str) -> shakmaty::Chess {
    let fen: shakmaty::fen::Fen = fen.parse().expect("a FEN");
    fen.into_position(shakmaty::CastlingMode::Standard)
        .expect("a legal position")
}

fn cozy_bulk(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    match depth {
        0 => nodes = 1,
        1 => {
            board.generate_moves(|moves| {
                nodes += moves.len() as u64;
                false
            });
        }
        _ => {
            board.generate_moves(|moves| {
                for mv in moves {
                    let mut child = board.clone();
                    child.play_unchecked(mv);
                    nodes += cozy_bulk(&child, depth - 1);
                }
                false
            });
        }
    }
    nodes
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
