//! The fleet's coordinator load: N simulated workers (no games) claim, heartbeat and submit
//! synthetic batches against one database as fast as they can. Prints claim+submit cycles a
//! second and the latency percentiles of a cycle. Run by `scripts/bench-coordinator.sh`, which
//! starts a throwaway PostgreSQL cluster for it.
//!
//! Usage: `coordinator URL WORKERS STORES SECONDS`: the workers share STORES connection pools
//! of the store's eight connections each, as that many worker processes would.

use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use arbiter_store::{
    GameResult, GameRow, Location, PairKey, PairRecord, PairTally, Queue, RunSpec, Store,
    Submitted, Totals, WorkerInfo,
};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, workers, stores, seconds] = &args[..] else {
        eprintln!("usage: coordinator URL WORKERS STORES SECONDS");
        std::process::exit(2);
    };
    let workers: usize = workers.parse().expect("WORKERS");
    let stores: usize = stores.parse::<usize>().expect("STORES").max(1);
    let seconds: f64 = seconds.parse().expect("SECONDS");
    let location = Location::parse(url);
    let mut pools = Vec::new();
    for _ in 0..stores {
        pools.push(Arc::new(
            Store::open(&location).await.expect("open the database"),
        ));
    }
    let store = pools[0].clone();
    let name = format!("coordinator-{workers}-{}", std::process::id());
    // Enough one-pair batches that nobody runs out: a batch a worker a millisecond at most.
    let pairs = 200_000;
    let spec = RunSpec::head_to_head(name, 1, String::new(), "dev".into(), "base".into(), pairs);
    let run = store
        .queue_run(
            &spec,
            &Queue {
                priority: 0,
                worker_limit: None,
                batch_units: 1,
                signatures: Vec::new(),
                files: Vec::new(),
            },
        )
        .await
        .expect("queue the run");
    let others: Vec<_> = store
        .queued_runs()
        .await
        .expect("runs")
        .into_iter()
        .map(|q| q.run.id)
        .filter(|&id| id != run)
        .collect();
    let others = Arc::new(others);
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let store = pools[w % stores].clone();
        let others = others.clone();
        tasks.push(tokio::spawn(async move {
            let id = store
                .register_worker(&WorkerInfo {
                    name: format!("sim-{w}-{}", std::process::id()),
                    host: "bench".into(),
                    cores: 8,
                    version: "bench".into(),
                })
                .await
                .expect("register");
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let start = Instant::now();
                let Some(lease) = store.claim_batch(id, 60_000, &others).await.expect("claim")
                else {
                    break;
                };
                store.heartbeat(&lease, 60_000).await.expect("heartbeat");
                let k = lease.first_unit;
                let pair = PairRecord {
                    run: lease.run,
                    key: PairKey {
                        pairing: 0,
                        index: k,
                    },
                    tally: PairTally {
                        wins: 1,
                        draws: 1,
                        losses: 0,
                        penta: 3,
                    },
                    games: (0..2).map(|g| game(k, g)).collect(),
                };
                let mut decide = |_: &Totals| None;
                let submitted = store
                    .submit_batch(&lease, &[pair], "{}", &mut decide)
                    .await
                    .expect("submit");
                assert!(
                    matches!(submitted, Submitted::Counted { .. }),
                    "{submitted:?}"
                );
                latencies.push(start.elapsed());
            }
            latencies
        }));
    }
    let started = Instant::now();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("a simulated worker"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    // A submit whose advance found another under way left its pairs to that one, which
    // stops after a bounded number of rounds: the last of them wait for this advance.
    store.advance(run, &mut |_| None).await.expect("advance");
    let totals = store.totals(run).await.expect("totals");
    assert_eq!(
        totals.pairs as usize,
        latencies.len(),
        "every cycle counted once"
    );
    println!(
        "workers {workers:>5}  connections {:>3}  cycles {:>6}  {:>7.0} cycles/s  \
         latency ms p50 {:.1} p90 {:.1} p99 {:.1} max {:.1}",
        8 * stores,
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    store
        .finish_run(run, arbiter_store::RunOutcome::Stopped)
        .await
        .ok();
}

fn game(k: u64, g: usize) -> GameRow {
    GameRow {
        game_number: 2 * k + g as u64 + 1,
        white: if g == 0 { "dev" } else { "base" }.into(),
        black: if g == 0 { "base" } else { "dev" }.into(),
        result: if g == 0 {
            GameResult::WhiteWins
        } else {
            GameResult::Draw
        },
        termination: "normal".into(),
        plies: 80,
        opening_index: k,
        opening_fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
        pgn: format!("[Round \"{k}\"]\n\n1. e4 e5 *\n"),
        json: "{}".into(),
        started_at: UNIX_EPOCH,
        duration: Duration::from_secs(1),
    }
}
