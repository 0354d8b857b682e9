//! The fleet's coordinator load through `arbiter serve`: two server replicas (each with its own
//! connection pool, as two processes would have) in front of one database, and N simulated
//! workers (no games) that claim, heartbeat and submit synthetic one-pair batches over HTTP
//! as fast as they can, worker i through replica i mod 2, each with its own HTTP client (its
//! own connections, as a machine would). Prints claim+submit cycles a second and the latency
//! percentiles of a cycle. Run by `scripts/bench-coordinator.sh --server`, which starts a
//! throwaway PostgreSQL cluster for it.
//!
//! Usage: `coordinator_http URL WORKERS SECONDS`.

use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use arbiter_runner::coordinator::Coordinator;
use arbiter_runner::fleet::{submit_remote, Submission, SubmitOptions};
use arbiter_server::HttpCoordinator;
use arbiter_store::{
    GameResult, GameRow, Location, PairKey, PairRecord, PairTally, Store, Submitted, TokenScope,
    Totals, WorkerInfo,
};

/// A run nobody finishes in a bench: staunton against itself, no SPRT, one pair a batch.
const CONFIG: &str = "name = \"bench-http\"\nrounds = 50000\n[each]\ntc = \"inf\"\nnodes = 100\n\
                      [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
                      [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n";

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, workers, seconds] = &args[..] else {
        eprintln!("usage: coordinator_http URL WORKERS SECONDS");
        std::process::exit(2);
    };
    let workers: usize = workers.parse().expect("WORKERS");
    let seconds: f64 = seconds.parse().expect("SECONDS");
    let location = Location::parse(url);
    let store = Store::open(&location).await.expect("open the database");
    let (_, token) = store
        .create_token(
            &format!("bench-{workers}-{}", std::process::id()),
            TokenScope::Worker,
        )
        .await
        .expect("a token");
    let queued = submit_remote(
        &store,
        &Submission {
            config: CONFIG.replace("bench-http", &format!("bench-http-{workers}")),
            files: Vec::new(),
            signatures: vec![None, None],
            options: SubmitOptions {
                batch_pairs: Some(1),
                ..SubmitOptions::default()
            },
            tuning: None,
        },
        None,
    )
    .await
    .expect("queue the run");
    let run = queued.run;
    let others: Vec<_> = store
        .queued_runs()
        .await
        .expect("runs")
        .into_iter()
        .map(|q| q.run.id)
        .filter(|&id| id != run)
        .collect();
    let others = Arc::new(others);
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let replica = Arc::new(Store::open(&location).await.expect("a replica's pool"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        replicas.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(arbiter_server::serve(
            arbiter_server::AppState::new(replica, None),
            listener,
            std::future::pending(),
        ));
    }
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let client = HttpCoordinator::new(&replicas[w % replicas.len()], &token).unwrap();
        let others = others.clone();
        tasks.push(tokio::spawn(async move {
            let id = client
                .register(&WorkerInfo {
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
                let Some(lease) = client.claim(id, 60_000, &others).await.expect("claim") else {
                    break;
                };
                client.heartbeat(&lease, 60_000).await.expect("heartbeat");
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
                let submitted = client
                    .submit(&lease, &[pair], "{}", &mut |_: &Totals| None)
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
    // The last submits' pairs may wait for an advance another submit was making.
    store.advance(run, &mut |_| None).await.expect("advance");
    let totals = store.totals(run).await.expect("totals");
    assert_eq!(
        totals.pairs as usize,
        latencies.len(),
        "every cycle counted once"
    );
    println!(
        "workers {workers:>5}  over HTTP, 2 replicas  cycles {:>6}  {:>7.0} cycles/s  \
         latency ms p50 {:.1} p90 {:.1} p99 {:.1} max {:.1}",
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
