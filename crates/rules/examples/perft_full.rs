//! `cargo run --release -p arbiter-rules --example perft_full -- ours|shakmaty|cozy DEPTH [bulk]
//! [kiwipete]`: perft making every move (or, with `bulk`, counting the last ply) from the start
//! position (or Kiwipete), one implementation per run, so that a
//! profiler or `valgrind --tool=callgrind` (instruction counts: repeatable on a busy machine)
//! can compare make-move costs.
#[path = "../benches/peers/mod.rs"]
mod peers;

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
        ("shakmaty", false) => peers::shakmaty_perft_full(&shak_pos(fen), depth),
        ("shakmaty", true) => peers::shakmaty_perft(&shak_pos(fen), depth),
        ("cozy", false) => peers::cozy_perft_full(&fen.parse().expect("a legal FEN"), depth),
        ("cozy", true) => peers::cozy_perft(&fen.parse().expect("a legal FEN"), depth),
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
