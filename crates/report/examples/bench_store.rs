//! Writes a store holding one finished match of `GAMES` games (default 100,000) with realistic
//! records (80 plies, per-move times, clocks, reported search times, a PGN) straight through
//! arbiter_store, for `scripts/bench-report.sh` to time `arbiter report` on. Playing that many
//! games, even at nodes=1, takes far longer than writing them.
//!
//! Usage: `bench_store STORE.db [GAMES]`

use std::time::{Duration, Instant, SystemTime};

use arbiter_records::entries::{EntryKind, GameEntry, SCHEMA};
use arbiter_store::{
    GameResult, GameRow, Location, PairKey, PairRecord, PairTally, RunId, RunSpec, Store,
};

const CONFIG: &str = "name = \"bench\"\nrounds = 50000\nstore = \"bench.db\"\n\
[each]\ntc = \"10+0.1\"\n[sprt]\nelo0 = 0\nelo1 = 5\n\
[[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
[[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n";

/// A small deterministic generator (splitmix64): the same store on every run.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const PLIES: usize = 80;
const BOOK: usize = 8;

fn game(
    number: u64,
    pair: u64,
    white: &str,
    black: &str,
    result: GameResult,
    mix: &mut Mix,
) -> GameRow {
    let engine_moves = PLIES - BOOK;
    let move_ms: Vec<f64> = (0..engine_moves)
        .map(|_| 50.0 + mix.below(250) as f64 + mix.below(1000) as f64 / 1000.0)
        .collect();
    let engine_ms: Vec<Option<u64>> = move_ms.iter().map(|&ms| Some((ms - 1.0) as u64)).collect();
    let mut clocks = [10_000i64, 10_000i64];
    let clock_ms: Vec<Option<i64>> = move_ms
        .iter()
        .enumerate()
        .map(|(i, &ms)| {
            let c = &mut clocks[i % 2];
            *c += 100 - ms as i64;
            Some(*c)
        })
        .collect();
    let moves = ["e2e4", "e7e5", "g1f3", "b8c6"]
        .iter()
        .cycle()
        .take(PLIES)
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let token = match result {
        GameResult::WhiteWins => "1-0",
        GameResult::BlackWins => "0-1",
        GameResult::Draw => "1/2-1/2",
    };
    let entry = GameEntry {
        schema: SCHEMA,
        kind: EntryKind::Game,
        game: number,
        pair,
        white: white.into(),
        black: black.into(),
        result: token.into(),
        termination: if mix.below(500) == 0 {
            "time forfeit"
        } else {
            "normal"
        }
        .into(),
        reason: "White mates".into(),
        plies: PLIES,
        opening: format!("UHO.epd:{}", pair % 5000),
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        moves,
        move_ms,
        engine_ms,
        clock_ms,
        flagged_move: None,
        duration_ms: 12_000,
        runner_overhead_us: 40,
    };
    let pgn = format!(
        "[Event \"bench\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{token}\"]\n\n{} {token}\n",
        "1. e4 {+0.35/12 0.250s} e5 {-0.20/12 0.240s} ".repeat(PLIES / 4)
    );
    GameRow {
        game_number: number,
        white: white.into(),
        black: black.into(),
        result,
        termination: entry.termination.clone(),
        plies: PLIES as u32,
        opening_index: pair % 5000,
        opening_fen: entry.fen.clone(),
        pgn,
        json: serde_json::to_string(&entry).expect("a record serializes"),
        started_at: SystemTime::now(),
        duration: Duration::from_secs(12),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: bench_store STORE.db [GAMES]");
    let games: u64 = args
        .get(2)
        .map_or(100_000, |g| g.parse().expect("GAMES is a number"));
    let pairs = games / 2;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let started = Instant::now();
        let store = Store::open(&Location::parse(path))
            .await
            .expect("open the store");
        let spec = RunSpec::head_to_head(
            "bench".into(),
            1,
            CONFIG.into(),
            "dev".into(),
            "base".into(),
            pairs,
        );
        let run: RunId = store.create_run(&spec).await.expect("create the run");
        let mut mix = Mix(7);
        let results = [
            GameResult::WhiteWins,
            GameResult::Draw,
            GameResult::Draw,
            GameResult::BlackWins,
        ];
        for k in 0..pairs {
            let a = results[mix.below(4) as usize];
            let b = results[mix.below(4) as usize];
            // Game 0: dev White; game 1: colours swapped. Points from dev's side.
            let dev = |r: GameResult, white: bool| match (r, white) {
                (GameResult::Draw, _) => 1u8,
                (GameResult::WhiteWins, true) | (GameResult::BlackWins, false) => 2,
                _ => 0,
            };
            let (ha, hb) = (dev(a, true), dev(b, false));
            let count = |h| u8::from(ha == h) + u8::from(hb == h);
            let tally = PairTally {
                wins: count(2),
                draws: count(1),
                losses: count(0),
                penta: ha + hb,
            };
            let record = PairRecord {
                run,
                key: PairKey {
                    pairing: 0,
                    index: k,
                },
                tally,
                games: vec![
                    game(2 * k + 1, k, "dev", "base", a, &mut mix),
                    game(2 * k + 2, k, "base", "dev", b, &mut mix),
                ],
            };
            let _ = store.commit_pair(&record).await.expect("commit a pair");
        }
        eprintln!(
            "wrote {} games ({pairs} pairs) to {path} in {:.1} s",
            2 * pairs,
            started.elapsed().as_secs_f64()
        );
        store.close().await;
    });
}
