//! Perft speed against the two peer generators, shakmaty and cozy-chess, on the same positions
//! and depths: `cargo bench -p arbiter-rules --bench perft`.
//!
//! Two modes. "bulk" counts the last ply by the size of the move list without making the moves
//! (the usual perft trick). "full" makes every move, the last ply included, so make-move is
//! measured too. Each peer's perft is written the way its own crate writes it (shakmaty's
//! `perft` in `src/perft.rs`; cozy-chess's `examples/perft.rs`), so every library is measured at
//! its idiomatic best. All three must count the same nodes; each measurement is repeated and
//! the fastest run kept, which filters out noise from the rest of the machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use arbiter_rules::{perft, Position};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

#[path = "peers/mod.rs"]
mod peers;
use peers::{cozy_perft, cozy_perft_full, shakmaty_perft, shakmaty_perft_full};

const REPEATS: usize = 5;

#[derive(Copy, Clone, PartialEq, Eq)]
enum Mode {
    Bulk,
    Full,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Bulk => "bulk",
            Mode::Full => "full",
        }
    }
}

struct Case {
    name: &'static str,
    fen: &'static str,
    mode: Mode,
    depth: u32,
    /// The published leaf count, so a generator that is fast because it is wrong cannot win.
    nodes: u64,
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

const CASES: &[Case] = &[
    Case {
        name: "start",
        fen: START,
        mode: Mode::Bulk,
        depth: 6,
        nodes: 119_060_324,
    },
    Case {
        name: "start",
        fen: START,
        mode: Mode::Full,
        depth: 5,
        nodes: 4_865_609,
    },
    Case {
        name: "kiwipete",
        fen: KIWIPETE,
        mode: Mode::Bulk,
        depth: 5,
        nodes: 193_690_690,
    },
    Case {
        name: "kiwipete",
        fen: KIWIPETE,
        mode: Mode::Full,
        depth: 4,
        nodes: 4_085_603,
    },
];

/// Runs `count` `REPEATS` times; returns its node count (the same every time, or we panic)
/// and the fastest run.
fn best_of(what: &str, expected: u64, mut count: impl FnMut() -> u64) -> Duration {
    (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            let nodes = black_box(count());
            let elapsed = start.elapsed();
            assert_eq!(nodes, expected, "{what}: wrong node count");
            elapsed
        })
        .min()
        .expect("at least one repeat")
}

fn mnps(nodes: u64, time: Duration) -> f64 {
    nodes as f64 / time.as_secs_f64() / 1e6
}

fn build_description() -> String {
    let optimised = if cfg!(debug_assertions) {
        "debug assertions ON: numbers are meaningless, run `cargo bench`"
    } else {
        "optimised, no debug assertions (cargo bench uses [profile.bench] of the workspace \
         Cargo.toml)"
    };
    let features: Vec<&str> = [
        ("popcnt", cfg!(target_feature = "popcnt")),
        ("bmi2", cfg!(target_feature = "bmi2")),
        ("avx2", cfg!(target_feature = "avx2")),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(name, _)| *name)
    .collect();
    let features = if features.is_empty() {
        "baseline (no popcnt/bmi2/avx2; set RUSTFLAGS=-Ctarget-cpu=native to enable)".to_owned()
    } else {
        features.join(" ")
    };
    format!(
        "build: {optimised}\ntarget: {} {}, cpu features: {features}\nbest of {REPEATS} runs each",
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// The three generators count the same leaves two plies short of each benchmark depth.
fn check_agreement() {
    for case in CASES {
        let (ours, shak, cozy) = load(case.fen);
        let depth = case.depth - 2;
        let counts = match case.mode {
            Mode::Bulk => [
                perft::perft(&ours, depth),
                shakmaty_perft(&shak, depth),
                cozy_perft(&cozy, depth),
            ],
            Mode::Full => [
                perft::perft_full(&ours, depth),
                shakmaty_perft_full(&shak, depth),
                cozy_perft_full(&cozy, depth),
            ],
        };
        assert!(
            counts.iter().all(|&n| n == counts[0]),
            "{} {} depth {depth}: ours, shakmaty, cozy-chess count {counts:?}",
            case.name,
            case.mode.name()
        );
    }
    println!("perft: ours, shakmaty and cozy-chess agree; run `cargo bench` for timings");
}

fn load(fen: &str) -> (Position, Chess, cozy_chess::Board) {
    let ours = Position::from_fen(fen).expect("our FEN reader accepts the position");
    let shak = fen
        .parse::<Fen>()
        .expect("shakmaty parses the FEN")
        .into_position(CastlingMode::Standard)
        .expect("shakmaty accepts the position");
    let cozy = cozy_chess::Board::from_fen(fen, false).expect("cozy-chess parses the FEN");
    (ours, shak, cozy)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not, and gets a quick
    // agreement check instead of minutes of timing in a debug build.
    if !std::env::args().any(|arg| arg == "--bench") {
        check_agreement();
        return;
    }
    println!("{}\n", build_description());
    println!(
        "{:<9} {:<5} {:>5} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "position",
        "mode",
        "depth",
        "nodes",
        "ours Mnps",
        "shak Mnps",
        "cozy Mnps",
        "ours/shak",
        "ours/cozy"
    );
    for case in CASES {
        let (ours, shak, cozy) = load(case.fen);
        let (depth, nodes) = (case.depth, case.nodes);
        let label = |who: &str| format!("{who} {} {} depth {depth}", case.name, case.mode.name());

        let (t_ours, t_shak, t_cozy) = match case.mode {
            Mode::Bulk => (
                best_of(&label("ours"), nodes, || {
                    perft::perft(black_box(&ours), depth)
                }),
                best_of(&label("shakmaty"), nodes, || {
                    shakmaty_perft(black_box(&shak), depth)
                }),
                best_of(&label("cozy-chess"), nodes, || {
                    cozy_perft(black_box(&cozy), depth)
                }),
            ),
            Mode::Full => (
                best_of(&label("ours"), nodes, || {
                    perft::perft_full(black_box(&ours), depth)
                }),
                best_of(&label("shakmaty"), nodes, || {
                    shakmaty_perft_full(black_box(&shak), depth)
                }),
                best_of(&label("cozy-chess"), nodes, || {
                    cozy_perft_full(black_box(&cozy), depth)
                }),
            ),
        };
        let (ours_mnps, shak_mnps, cozy_mnps) = (
            mnps(nodes, t_ours),
            mnps(nodes, t_shak),
            mnps(nodes, t_cozy),
        );
        println!(
            "{:<9} {:<5} {:>5} {:>12} {:>10.1} {:>10.1} {:>10.1} {:>10.2} {:>10.2}",
            case.name,
            case.mode.name(),
            depth,
            nodes,
            ours_mnps,
            shak_mnps,
            cozy_mnps,
            ours_mnps / shak_mnps,
            ours_mnps / cozy_mnps
        );
    }
}
