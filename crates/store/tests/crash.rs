//! SIGKILL at a random instant while pairs are being committed, then reopen and check.
//!
//! The test re-runs its own test binary as the child (selected by an environment variable), so
//! no helper binary has to ship with the crate. The child commits pairs from four tasks and
//! prints `committed K` only after `commit_pair(K)` returned; the parent kills it with SIGKILL
//! (`Child::kill`) at a random moment (sometimes while it is still opening or creating the run,
//! mostly in the middle of a stream of commits), reopens the file and checks the contracts.
//! Every round resumes the same run, as `arbiter match --resume` would, and replays a few
//! committed pairs to check they are recognised.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbiter_store::{Committed, Location, Store};
use futures_util::TryStreamExt;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::Row;

use crate::common::*;

const CHILD_ENV: &str = "ARBITER_STORE_CRASH_CHILD";
/// The test's name as libtest knows it in the `store` test binary (`--exact` wants it whole).
const THIS_TEST: &str =
    "crash::sigkill_at_any_instant_loses_no_committed_pair_and_counts_none_twice";
const RUN: &str = "crash-test";
const PLANNED: u64 = 1_000_000;
const ROUNDS: u64 = 8;
const CHILD_TASKS: u64 = 4;
/// Far beyond the few seconds the test takes.
const HANG: Duration = Duration::from_secs(300);

#[test]
fn sigkill_at_any_instant_loses_no_committed_pair_and_counts_none_twice() {
    if let Some(db) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&db));
        return;
    }
    let seed = std::env::var("ARBITER_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("crash test seed {seed} (set ARBITER_CRASH_SEED to replay the kill times)");

    // The rounds run on a thread watched from here, so that a hang (in the store, SQLite or the
    // test) fails the test with the phase it hung in instead of stalling CI.
    let phase = Arc::new(Mutex::new(String::from("starting")));
    let (done_tx, done) = mpsc::channel();
    let worker = {
        let phase = Arc::clone(&phase);
        std::thread::spawn(move || {
            all_rounds(seed, &phase);
            done_tx.send(()).unwrap();
        })
    };
    match done.recv_timeout(HANG) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "seed {seed}: no end after {HANG:?}; hung in: {}",
            phase.lock().unwrap()
        ),
    }
}

fn all_rounds(seed: u64, phase: &Mutex<String>) {
    let set_phase = |text: String| *phase.lock().unwrap() = text;
    let mut rng = seed | 1;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let (mut reported_total, mut present) = (0, 0);
    for round in 0..ROUNDS {
        set_phase(format!("round {round}: running and killing the child"));
        let reported = kill_child_at_random(&db, round, &mut rng);
        reported_total += reported.len();
        let before = present;
        set_phase(format!("round {round}: checking the database"));
        present = check(&db, round, &reported);
        eprintln!(
            "round {round}: {} pairs reported, {} new in the store ({} committed but killed \
             before reporting), {present} in all",
            reported.len(),
            present - before,
            present - before - reported.len()
        );
    }
    assert!(
        reported_total > 100,
        "the children committed only {reported_total} pairs: the test exercised little"
    );
}

/// Runs one child, kills it, and returns the pairs it reported committed.
fn kill_child_at_random(db: &Path, round: u64, rng: &mut u64) -> BTreeSet<u64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([THIS_TEST, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });

    // Rounds 0 and 4 are killed early (while opening, migrating, creating the run or replaying,
    // or at the first commits); the others after a random number of reported commits plus a
    // random delay.
    let mut seen = Vec::new();
    if round.is_multiple_of(4) {
        std::thread::sleep(Duration::from_micros(next(rng) % 100_000));
    } else {
        let wait_for = 1 + next(rng) % 400;
        let deadline = Instant::now() + Duration::from_secs(60);
        while (seen.len() as u64) < wait_for && Instant::now() < deadline {
            match lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("round {round}: the child exited early: {seen:?}")
                }
            }
        }
        std::thread::sleep(Duration::from_micros(next(rng) % 3_000));
    }
    child.kill().expect("SIGKILL the child");
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "round {round}: the child was not killed but exited: {status}"
    );
    reader.join().unwrap();
    seen.extend(lines.try_iter());

    let doubles: Vec<&String> = seen.iter().filter(|l| l.starts_with("DOUBLE")).collect();
    assert!(
        doubles.is_empty(),
        "round {round}: pairs inserted twice: {doubles:?}"
    );
    seen.iter()
        .filter_map(|line| line.strip_prefix("committed "))
        .map(|k| k.parse().unwrap())
        .collect()
}

/// Reopens the database after a kill, checks every contract, and returns how many pairs are
/// present.
fn check(db: &Path, round: u64, reported: &BTreeSet<u64>) -> usize {
    if !db.exists() {
        assert!(
            reported.is_empty(),
            "round {round}: pairs reported but no database file"
        );
        return 0;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // Integrity first, with a plain connection, before the store touches the file.
        let options = SqliteConnectOptions::new().filename(db);
        let raw = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        let integrity: String = sqlx::query("PRAGMA integrity_check")
            .fetch_one(&raw)
            .await
            .unwrap()
            .get(0);
        assert_eq!(integrity, "ok", "round {round}");

        let store = Store::open(&Location::Sqlite(db.to_path_buf()))
            .await
            .expect("the database opens cleanly");
        let Some(run) = store.find_run_by_name(RUN).await.unwrap() else {
            assert!(
                reported.is_empty(),
                "round {round}: pairs reported but no run stored"
            );
            return 0;
        };
        let present = committed_indices(&store, run.id).await;
        let lost: Vec<&u64> = reported.difference(&present).collect();
        assert!(
            lost.is_empty(),
            "round {round}: reported committed but lost: {lost:?}"
        );

        let totals = store.totals(run.id).await.unwrap();
        assert_eq!(
            totals,
            expected_totals(present.iter().copied()),
            "round {round}: totals vs present pairs"
        );
        assert_eq!(
            store.pairing_totals(run.id).await.unwrap(),
            [totals],
            "round {round}: the match's one pairing holds all of it"
        );
        // The commit order survives kills without a gap or a repeat, and ends at the totals.
        let order = commit_order(&store, run.id).await;
        assert!(
            order.iter().map(|p| p.sequence).eq(1..=totals.pairs),
            "round {round}: the commit order is not 1..={}",
            totals.pairs
        );

        // No pair twice, each with both games, and the totals row equal to the pair rows' sums.
        let row = sqlx::query(
            "SELECT COUNT(*), COUNT(DISTINCT pair_index), COALESCE(SUM(wins), 0), \
             COALESCE(SUM(draws), 0), COALESCE(SUM(losses), 0) FROM pairs WHERE run_id = $1",
        )
        .bind(run.id.get())
        .fetch_one(&raw)
        .await
        .unwrap();
        let (rows, distinct): (i64, i64) = (row.get(0), row.get(1));
        assert_eq!(rows, distinct, "round {round}: a pair is present twice");
        assert_eq!(rows as u64, totals.pairs, "round {round}");
        assert_eq!(
            (
                row.get::<i64, _>(2),
                row.get::<i64, _>(3),
                row.get::<i64, _>(4)
            ),
            (
                totals.wins as i64,
                totals.draws as i64,
                totals.losses as i64
            ),
            "round {round}"
        );

        let games: Vec<_> = store.games(run.id).try_collect().await.unwrap();
        assert_eq!(
            games,
            expected_games(&present),
            "round {round}: the PGN export equals the store"
        );
        store.close().await;
        raw.close().await;
        present.len()
    })
}

/// The child: resume the run and commit pairs until killed.
fn child(db: &Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = Arc::new(
            Store::open(&Location::Sqlite(db.to_path_buf()))
                .await
                .unwrap(),
        );
        let run = match store.find_run_by_name(RUN).await.unwrap() {
            Some(run) => run.id,
            None => store.create_run(&spec(RUN, PLANNED)).await.unwrap(),
        };
        let done = committed_indices(&store, run).await;
        // A runner unsure whether its last pairs were committed may replay them.
        for &k in done.iter().rev().take(3) {
            if store.commit_pair(&pair(run, k)).await.unwrap() != Committed::AlreadyPresent {
                report(&format!("DOUBLE {k}"));
            }
        }
        let todo: Arc<Vec<u64>> = Arc::new((0..PLANNED).filter(|k| !done.contains(k)).collect());
        let tasks: Vec<_> = (0..CHILD_TASKS as usize)
            .map(|t| {
                let (store, todo) = (Arc::clone(&store), Arc::clone(&todo));
                tokio::spawn(async move {
                    for &k in todo.iter().skip(t).step_by(CHILD_TASKS as usize) {
                        match store.commit_pair(&pair(run, k)).await.unwrap() {
                            Committed::Inserted => report(&format!("committed {k}")),
                            Committed::AlreadyPresent => report(&format!("DOUBLE {k}")),
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
}

fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .expect("write to the parent");
}

/// xorshift64: enough randomness for kill times, reproducible from the printed seed.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
