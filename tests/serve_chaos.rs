//! `arbiter serve` under chaos, on PostgreSQL: a replica killed with SIGKILL and restarted on
//! its port while workers submit through it, two replicas behind a round-robin proxy with one
//! killed, and a worker cut off from its server for longer than its lease. Workers on the
//! server retry what failed in transit, and the server's requests are the store's
//! transactions, so each ends as the fleet's own chaos tests do (`fleet_cli`): the verdict and
//! its totals are one machine's, the run's totals are the sum of its counted batches, and no
//! pair or game is stored twice.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arbiter_pgtest::{Cluster, CutProxy, RoundRobinProxy};
use arbiter_store::{QueuedRun, RunState, TokenScope, Totals};

use crate::common::{arbiter, text};
use crate::fleet_cli::{batch_sums_pg, block_on, config, one_machine, queued};
use crate::serve_cli::{serve, serve_on, token, Server};

/// The workers' lease: short, so that a lapsed one comes back within the test.
const LEASE_SECONDS: u64 = 3;

/// Rounds of the run: 30 batches of two pairs, about two seconds' play for three workers, so
/// that a kill after a few batches falls mid-run on a fast machine too.
const ROUNDS: u64 = 60;

/// A run queued on a throwaway cluster, with what one machine makes of it.
struct Fleet {
    dir: tempfile::TempDir,
    /// Dropped last: the servers and workers go first.
    _cluster: Cluster,
    db: String,
    token_file: PathBuf,
    local_totals: Totals,
    local_state: RunState,
    started: Instant,
}

impl Fleet {
    /// `rounds` of the fleet's fixed-node SPRT in batches of two pairs, and a worker's token.
    fn new(rounds: u64) -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), rounds);
        let (local_totals, local_state) = one_machine(dir.path());
        let cluster = Cluster::start().expect("a throwaway PostgreSQL cluster");
        let db = cluster.database("serve").unwrap();
        let submitted = arbiter(
            &[
                "submit",
                config.to_str().unwrap(),
                "--db",
                &db,
                "--batch-pairs",
                "2",
            ],
            dir.path(),
        );
        assert!(submitted.status.success(), "{}", text(&submitted.stderr));
        let token_file = dir.path().join("worker.token");
        std::fs::write(
            &token_file,
            format!("{}\n", token(&db, "workers", TokenScope::Worker)),
        )
        .unwrap();
        Fleet {
            dir,
            _cluster: cluster,
            db,
            token_file,
            local_totals,
            local_state,
            started: Instant::now(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `arbiter worker --server url` named `name`, its stderr in `NAME.log`.
    fn worker(&self, url: &str, name: &str) -> Child {
        let log = std::fs::File::create(self.log_path(name)).unwrap();
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args([
                "worker",
                "--server",
                url,
                "--token-file",
                &self.token_file.display().to_string(),
                "--name",
                name,
                "--concurrency",
                "1",
                "--lease",
                &LEASE_SECONDS.to_string(),
                "--exit-when-idle",
                // In the test's folder, not the user's state folder.
                "--spool",
                &self
                    .path()
                    .join(format!("spool-{name}.db"))
                    .display()
                    .to_string(),
            ])
            .current_dir(self.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a worker")
    }

    fn log_path(&self, name: &str) -> PathBuf {
        self.path().join(format!("{name}.log"))
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.log_path(name)).unwrap_or_default()
    }

    /// Every worker's log, each under its name, for assertion messages.
    fn logs(&self) -> String {
        let mut all = String::new();
        let mut entries: Vec<_> = std::fs::read_dir(self.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
            .collect();
        entries.sort();
        for path in entries {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            all.push_str(&format!("--- {}\n{text}", path.display()));
        }
        all
    }

    /// The run's row.
    fn run(&self) -> QueuedRun {
        queued(&self.db).remove(0)
    }

    /// Milliseconds since the run was queued: how the instants of kills and cuts are named.
    fn at(&self) -> u128 {
        self.started.elapsed().as_millis()
    }

    /// Polls until `done` holds, failing with `what` and the logs after `limit`.
    fn wait_for(&self, what: &str, limit: Duration, done: &mut dyn FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what} did not happen in {limit:?}:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for `workers` to exit on their own (they ride out what happened and find nothing
    /// left to play), then checks the run as the fleet's chaos tests do; `chaos` names what
    /// was done to it, for the messages.
    fn finish(&self, workers: Vec<(String, Child)>, chaos: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        for (name, mut child) in workers {
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "worker {name} did not finish after {chaos}:\n{}",
                        self.logs()
                    );
                }
                std::thread::sleep(Duration::from_millis(100));
            };
            let log = self.log(&name);
            assert!(
                status.success() && log.contains(&format!("worker {name}: nothing left to play")),
                "worker {name} after {chaos}: {status}\n{}",
                self.logs()
            );
        }
        let finished = self.run();
        let verdict = match finished.run.state {
            RunState::Finished { verdict } => verdict,
            RunState::Running => panic!(
                "the workers left a running run after {chaos}:\n{}",
                self.logs()
            ),
        };
        assert_eq!(
            RunState::Finished { verdict },
            self.local_state,
            "the verdict after {chaos}, against one machine's\n{}",
            self.logs()
        );
        assert_eq!(
            finished.prefix.totals,
            self.local_totals,
            "the verdict's totals after {chaos}, against one machine's\n{}",
            self.logs()
        );
        let (games, batches) = batch_sums_pg(&self.db);
        assert_eq!(
            batches, finished.totals,
            "after {chaos}: the counted batches' tallies are the run's totals"
        );
        assert_eq!(
            games,
            finished.totals.games(),
            "after {chaos}: every game stored once"
        );
        let (pair_rows, game_rows, pgns) = rows(&self.db);
        assert_eq!(
            pair_rows, finished.totals.pairs,
            "after {chaos}: one row per pair counted"
        );
        assert_eq!(
            (game_rows, pgns),
            (finished.totals.games(), finished.totals.games()),
            "after {chaos}: one row and one PGN per game"
        );
    }
}

/// The rows of pairs and of games stored, and the games with a PGN.
fn rows(db: &str) -> (u64, u64, u64) {
    block_on(async {
        let pool = sqlx::PgPool::connect(db).await.unwrap();
        let pairs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pairs")
            .fetch_one(&pool)
            .await
            .unwrap();
        let (games, pgns): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COUNT(*) FILTER (WHERE pgn <> '') FROM games")
                .fetch_one(&pool)
                .await
                .unwrap();
        pool.close().await;
        (pairs as u64, games as u64, pgns as u64)
    })
}

/// The batch `worker` holds a lease on, if any: its number and how often it was claimed.
fn leased_by(db: &str, worker: &str) -> Option<(u64, u64)> {
    block_on(async {
        let pool = sqlx::PgPool::connect(db).await.unwrap();
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT b.sequence, b.claims FROM batches b JOIN workers w ON w.id = b.worker_id \
             WHERE b.state = 'leased' AND w.name = $1",
        )
        .bind(worker)
        .fetch_optional(&pool)
        .await
        .unwrap();
        pool.close().await;
        row.map(|(sequence, claims)| (sequence as u64, claims as u64))
    })
}

/// Batch `sequence`'s state and claims.
fn batch(db: &str, sequence: u64) -> (String, u64) {
    block_on(async {
        let pool = sqlx::PgPool::connect(db).await.unwrap();
        let (state, claims): (String, i64) =
            sqlx::query_as("SELECT state, claims FROM batches WHERE sequence = $1")
                .bind(sequence as i64)
                .fetch_one(&pool)
                .await
                .unwrap();
        pool.close().await;
        (state, claims as u64)
    })
}

/// A small generator seeded from the clock: the kill instants differ from one run of the test
/// to the next, and the messages name them.
struct Chance(u64);

impl Chance {
    fn new() -> Chance {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Chance((0x9e37_79b9_7f4a_7c15 ^ u64::from(nanos)) | 1)
    }

    /// A number in `range`.
    fn pick(&mut self, range: std::ops::Range<u64>) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        range.start + self.0 % (range.end - range.start)
    }
}

/// Starts `arbiter serve` again on the address a killed replica listened on, trying for a
/// while: the port may take a moment to free.
fn restart(db: &str, dir: &Path, address: &str) -> Server {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match serve_on(db, dir, address) {
            Ok(server) => return server,
            Err(said) if Instant::now() < deadline => {
                eprintln!("restarting the replica on {address}: {said}; again");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(said) => panic!("the replica did not restart on {address}: {said}"),
        }
    }
}

/// SIGKILL, and the process reaped.
fn kill(server: &mut Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

/// Two replicas on one database; two workers on the first, which is killed with SIGKILL at a
/// random instant while they play and submit, and started again on its port a random moment
/// later, once both its workers have found it gone; a third worker on the second replica plays
/// on meanwhile. The first replica's workers notice it gone, retry, and finish the run through
/// it once it is back, nothing counted twice.
#[test]
fn a_replica_killed_and_restarted_while_workers_submit() {
    let fleet = Fleet::new(ROUNDS);
    let mut chance = Chance::new();
    let mut replica = serve(&fleet.db, fleet.path());
    let other = serve(&fleet.db, fleet.path());
    let address = replica.address.clone();
    let workers: Vec<(String, Child)> = [
        ("a1", &replica.url),
        ("a2", &replica.url),
        ("b1", &other.url),
    ]
    .into_iter()
    .map(|(name, url)| (name.to_owned(), fleet.worker(url, name)))
    .collect();
    // After a random number of counted batches, a random moment more.
    let after = chance.pick(1..6);
    fleet.wait_for(
        &format!("batch {after} counted"),
        Duration::from_secs(30),
        &mut || fleet.run().batches.done >= after,
    );
    std::thread::sleep(Duration::from_millis(chance.pick(0..200)));
    let at = fleet.run();
    assert_eq!(
        at.run.state,
        RunState::Running,
        "the run ended before the kill: make it longer"
    );
    kill(&mut replica);
    let killed = format!(
        "the replica killed at {} ms with {} batches counted",
        fleet.at(),
        at.batches.done
    );
    let killed_at = Instant::now();
    std::thread::sleep(Duration::from_millis(chance.pick(500..2000)));
    // Down until both its workers have met it gone: a worker in the middle of a batch needs
    // the server only to submit and to renew its lease, which a short outage can fall between.
    fleet.wait_for(
        "the killed replica's workers finding it gone",
        Duration::from_secs(30),
        &mut || {
            ["a1", "a2"]
                .iter()
                .all(|name| fleet.log(name).contains("unreachable: "))
        },
    );
    let down = killed_at.elapsed().as_millis();
    let replica = restart(&fleet.db, fleet.path(), &address);
    let chaos = format!("{killed} and restarted {down} ms later");
    fleet.finish(workers, &chaos);
    for name in ["a1", "a2"] {
        let log = fleet.log(name);
        assert!(
            log.contains("unreachable: "),
            "worker {name} never found its server gone after {chaos}:\n{log}"
        );
    }
    drop((replica, other));
}

/// Two replicas behind a round-robin proxy, three workers on the proxy; one replica killed
/// with SIGKILL at a random instant. The connections to it fail, the workers' next ones go to
/// the other replica (the proxy skips the dead one), and the run finishes there.
#[test]
fn two_replicas_behind_a_round_robin_proxy_one_killed() {
    let fleet = Fleet::new(ROUNDS);
    let mut chance = Chance::new();
    let mut first = serve(&fleet.db, fleet.path());
    let second = serve(&fleet.db, fleet.path());
    let proxy = RoundRobinProxy::start(vec![
        first.address.parse().unwrap(),
        second.address.parse().unwrap(),
    ])
    .unwrap();
    let url = format!("http://{}", proxy.addr());
    let workers: Vec<(String, Child)> = ["w1", "w2", "w3"]
        .into_iter()
        .map(|name| (name.to_owned(), fleet.worker(&url, name)))
        .collect();
    let after = chance.pick(1..6);
    fleet.wait_for(
        &format!("batch {after} counted"),
        Duration::from_secs(30),
        &mut || fleet.run().batches.done >= after,
    );
    std::thread::sleep(Duration::from_millis(chance.pick(0..200)));
    let at = fleet.run();
    assert_eq!(
        at.run.state,
        RunState::Running,
        "the run ended before the kill: make it longer"
    );
    kill(&mut first);
    let chaos = format!(
        "a replica killed at {} ms with {} batches counted",
        fleet.at(),
        at.batches.done
    );
    // Read after the kill: no connection reaches the dead replica from here on.
    let served = proxy.served();
    assert!(
        served.iter().all(|&n| n > 0),
        "both replicas served connections before {chaos}: {served:?}"
    );
    fleet.finish(workers, &chaos);
    // The workers that were on the dead replica came back through the live one.
    let after_kill = proxy.served();
    assert!(
        after_kill[1] > served[1],
        "after {chaos}: no worker reconnected to the live replica: {served:?} then \
         {after_kill:?}"
    );
    drop((proxy, second));
}

/// A worker whose connection to the server goes through a proxy, cut while it holds a lease
/// for three leases' time and then restored; a worker on the server directly takes the lapsed
/// batch. The cut-off worker's late heartbeat or submit counts nothing twice, and the run
/// finishes with one machine's verdict.
#[test]
fn a_worker_cut_off_for_longer_than_its_lease_counts_nothing_twice() {
    let fleet = Fleet::new(ROUNDS);
    let server = serve(&fleet.db, fleet.path());
    let proxy = CutProxy::start(server.address.parse().unwrap()).unwrap();
    let through_proxy = format!("http://{}", proxy.addr());
    let mut workers = vec![(
        "cut-off".to_owned(),
        fleet.worker(&through_proxy, "cut-off"),
    )];
    let (sequence, claims, cut_at) = loop {
        fleet.wait_for(
            "a lease held by the worker behind the proxy",
            Duration::from_secs(30),
            &mut || leased_by(&fleet.db, "cut-off").is_some(),
        );
        proxy.cut();
        let cut_at = fleet.at();
        // What reached the server before the cut has settled by now, and the worker can reach
        // it no more: the lease it holds now is the one it holds through the cut.
        std::thread::sleep(Duration::from_millis(300));
        if let Some((sequence, claims)) = leased_by(&fleet.db, "cut-off") {
            break (sequence, claims, cut_at);
        }
        // Its batch was submitted just before the cut: again, with its next one.
        proxy.restore();
    };
    let chaos =
        format!("the cut at {cut_at} ms, with batch {sequence} leased to the cut-off worker");
    // The other worker starts once the batch is in the cut-off worker's hands, so that it
    // cannot have taken the batch first.
    workers.push(("direct".to_owned(), fleet.worker(&server.url, "direct")));
    std::thread::sleep(Duration::from_secs(3 * LEASE_SECONDS));
    proxy.restore();
    let chaos = format!("{chaos}, restored at {} ms", fleet.at());
    fleet.finish(workers, &chaos);
    let (state, claimed) = batch(&fleet.db, sequence);
    assert_eq!(
        state, "done",
        "after {chaos}: the cut-off worker's batch was counted"
    );
    assert!(
        claimed > claims,
        "after {chaos}: the lapsed batch was claimed again ({claims} then {claimed} claims)\n{}",
        fleet.logs()
    );
    let direct = fleet.log("direct");
    assert!(
        direct.lines().any(
            |line| line.starts_with(&format!("batch {sequence} of run 1 ("))
                && line.ends_with("an earlier lease lapsed)")
        ),
        "after {chaos}: the direct worker did not take the lapsed batch:\n{direct}"
    );
    let log = fleet.log("cut-off");
    assert!(
        log.contains("unreachable: "),
        "after {chaos}: the cut-off worker never noticed the cut:\n{log}"
    );
    // The cut-off worker settled its batch after the cut: submitted (counted or not), or
    // dropped at a heartbeat that found the lease gone.
    assert!(
        log.contains(&format!("batch {sequence} of run 1: "))
            || log.contains(&format!("batch {sequence} of run 1 dropped")),
        "after {chaos}: the cut-off worker left batch {sequence} unsettled:\n{log}"
    );
    drop((proxy, server));
}
