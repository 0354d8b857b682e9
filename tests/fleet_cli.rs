//! The fleet through the real binary: `arbiter submit`, worker processes killed with SIGKILL at
//! random instants and restarted, `arbiter stop`, SIGTERM, a worker with another engine
//! binary. The oracle is `arbiter match` playing the same configuration on one machine: the
//! fleet must reach the same verdict on the same totals, with every batch counted once.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use arbiter_store::{Location, QueuedRun, RunState, Store, Totals};

use crate::common::{arbiter, staunton, text, write_script, BOOK};

/// A fixed-node SPRT between staunton and staunton with a weaker knight: deterministic games,
/// so one machine and a fleet play the same ones.
pub(crate) fn config(dir: &Path, rounds: u64) -> PathBuf {
    config_at(dir, rounds, 300)
}

/// [`config`] at `nodes` a move.
pub(crate) fn config_at(dir: &Path, rounds: u64, nodes: u64) -> PathBuf {
    std::fs::copy(BOOK, dir.join("book.epd")).unwrap();
    let path = dir.join("sprt.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"fleet-sprt\"\nrounds = {rounds}\nseed = 11\nconcurrency = 1\n\
             [each]\ntc = \"inf\"\nnodes = {nodes}\nhash = 1\n\
             [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
             [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n\
             params = {{ knight_mg = 200, knight_eg = 200 }}\n\
             [openings]\nfile = \"book.epd\"\norder = \"random\"\n\
             [sprt]\nelo0 = 0\nelo1 = 25\nalpha = 0.05\nbeta = 0.05\nmodel = \"normalized\"\n"
        ),
    )
    .unwrap();
    path
}

/// The oracle: `arbiter match` plays the configuration of the test's folder alone, one game at a
/// time; its run's totals and state.
pub(crate) fn one_machine(dir: &Path) -> (Totals, RunState) {
    let local = arbiter(
        &["match", "sprt.toml", "--store", "local.db", "--quiet"],
        dir,
    );
    assert!(
        // H1 0, H0 1, no decision in the pairs planned 3.
        matches!(local.status.code(), Some(0 | 1 | 3)),
        "{}",
        text(&local.stderr)
    );
    block_on(async {
        let store = Store::open(&Location::parse(
            &dir.join("local.db").display().to_string(),
        ))
        .await
        .unwrap();
        let run = store.find_run_by_name("fleet-sprt").await.unwrap().unwrap();
        (store.totals(run.id).await.unwrap(), run.state)
    })
}

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The run's row in `arbiter runs`, read with the store.
pub(crate) fn queued(db: &str) -> Vec<QueuedRun> {
    block_on(async {
        let store = Store::open(&Location::parse(db)).await.unwrap();
        let runs = store.queued_runs().await.unwrap();
        store.close().await;
        runs
    })
}

fn worker(db: &str, name: &str, dir: &Path, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "worker",
            "--db",
            db,
            "--name",
            name,
            "--concurrency",
            "1",
            "--lease",
            "3",
            "--exit-when-idle",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start a worker")
}

/// The batches' tallies summed, from the store's own table (what the submits counted), and the
/// distinct game numbers stored, on SQLite.
pub(crate) fn batch_sums(db: &Path) -> (u64, Totals) {
    block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        sums_of!(pool)
    })
}

/// [`batch_sums`] on PostgreSQL.
pub(crate) fn batch_sums_pg(url: &str) -> (u64, Totals) {
    block_on(async {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sums_of!(pool)
    })
}

/// The sums' queries, the same on both databases (a macro: the pools' types differ).
macro_rules! sums_of {
    ($pool:expr) => {{
        use sqlx::Row;
        let pool = $pool;
        let row = sqlx::query(
            "SELECT COUNT(*), CAST(COALESCE(SUM(pairs), 0) AS BIGINT), CAST(COALESCE(SUM(wins), 0) AS BIGINT), CAST(COALESCE(SUM(draws), 0) AS BIGINT), CAST(COALESCE(SUM(losses), 0) AS BIGINT), CAST(COALESCE(SUM(penta_ll), 0) AS BIGINT), CAST(COALESCE(SUM(penta_ld), 0) AS BIGINT), CAST(COALESCE(SUM(penta_dd), 0) AS BIGINT), CAST(COALESCE(SUM(penta_dw), 0) AS BIGINT), CAST(COALESCE(SUM(penta_ww), 0) AS BIGINT) \
             FROM batches WHERE state = 'done'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        let get = |i: usize| row.try_get::<i64, _>(i).unwrap() as u64;
        let totals = Totals {
            pairs: get(1),
            wins: get(2),
            draws: get(3),
            losses: get(4),
            pentanomial: [get(5), get(6), get(7), get(8), get(9)],
        };
        let games: i64 = sqlx::query_scalar("SELECT COUNT(DISTINCT game_number) FROM games")
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        (games as u64, totals)
    }};
}
use sums_of;

/// Three workers, one of them killed with SIGKILL after every counted batch and
/// restarted (under its own name every other time, so it takes its lease back, else under a
/// new one, so the lease lapses and another worker takes the batch), finish the SPRT with the
/// verdict and totals that `arbiter match` reaches alone, and no batch or game counted twice.
#[test]
fn killed_workers_reach_the_verdict_one_machine_reaches() {
    killed_workers_reach_the_verdict(40, &|dir| dir.join("fleet.db").display().to_string());
}

/// The same on PostgreSQL, a throwaway cluster, with the 200 games of the issue that asked for
/// it.
#[test]
fn killed_workers_on_postgres_reach_the_verdict_one_machine_reaches() {
    let cluster = arbiter_pgtest::Cluster::start().expect("a throwaway PostgreSQL cluster");
    killed_workers_reach_the_verdict(100, &|_| cluster.database("fleet").unwrap());
}

/// The body of the kill tests, on the database `fleet_db` makes in the test's folder.
fn killed_workers_reach_the_verdict(rounds: u64, fleet_db: &dyn Fn(&Path) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), rounds);

    let (local_totals, local_state) = one_machine(dir.path());

    let db_text = fleet_db(dir.path());
    let submitted = arbiter(
        &[
            "submit",
            config.to_str().unwrap(),
            "--db",
            &db_text,
            "--batch-pairs",
            "2",
        ],
        dir.path(),
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        text(&submitted.stdout).starts_with(&format!(
            "queued run 1 (fleet-sprt): {rounds} pairs in {} batches of 2",
            rounds / 2
        )),
        "{}",
        text(&submitted.stdout)
    );

    let log = dir.path().join("workers.log");
    let mut workers: Vec<(String, Child)> = (0..3)
        .map(|i| {
            let name = format!("w{i}");
            let child = worker(&db_text, &name, dir.path(), &log);
            (name, child)
        })
        .collect();
    // A small generator of its own: the kill instants differ from run to run of the machine,
    // not of the test.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut kills = 0;
    // One kill per batch counted, at a random instant after: however fast the machine plays
    // (the coordinator counts a batch in milliseconds), the kills fall all through the run,
    // and it still makes progress, since a batch is counted between two kills.
    let mut counted_at_last_kill = 0;
    let finished = loop {
        std::thread::sleep(Duration::from_millis(50 + next() % 200));
        let runs = queued(&db_text);
        if let Some(run) = runs
            .iter()
            .find(|r| !matches!(r.run.state, RunState::Running))
        {
            break run.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the fleet did not finish in 5 minutes:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        let counted = runs.first().map_or(0, |r| r.batches.done);
        if counted < counted_at_last_kill + 1 {
            continue;
        }
        counted_at_last_kill = counted;
        let victim = (next() % 3) as usize;
        let (name, child) = &mut workers[victim];
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
        if kills % 2 == 0 {
            *name = format!("w{victim}-{kills}");
        }
        *child = worker(&db_text, name, dir.path(), &log);
    };
    for (_, mut child) in workers {
        let _ = child.kill();
        let _ = child.wait();
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();

    assert!(
        kills >= 3,
        "only {kills} kills: the run was too short to test anything\n{log}"
    );
    match &finished.run.state {
        RunState::Finished { verdict: fleet } => {
            assert_eq!(
                local_state,
                RunState::Finished { verdict: *fleet },
                "fleet {fleet} against one machine's {local_state:?}\n{log}"
            );
        }
        RunState::Running => unreachable!(),
    }
    assert_eq!(
        finished.prefix.totals, local_totals,
        "the verdict's totals differ from one machine's\n{log}"
    );
    let (games, batches) = match db_text.starts_with("postgres") {
        true => batch_sums_pg(&db_text),
        false => batch_sums(Path::new(&db_text)),
    };
    assert_eq!(
        batches, finished.totals,
        "the batches' tallies are the run's totals"
    );
    assert_eq!(games, finished.totals.games(), "every game stored once");
}

/// `arbiter submit` of a two-round run of the engine `./engine` of `dir` against itself at 200
/// nodes a move, into the store `db`.
fn submit_engine_against_itself(db: &str, dir: &Path) -> Output {
    arbiter(
        &[
            "submit",
            "--db",
            db,
            "--",
            "-engine",
            "cmd=./engine",
            "name=a",
            "-engine",
            "cmd=./engine",
            "name=b",
            "-each",
            "tc=inf",
            "nodes=200",
            "-rounds",
            "2",
        ],
        dir,
    )
}

/// A worker whose engine binary differs from the one the run was submitted with is refused
/// that run, says why, and counts nothing.
#[test]
fn a_worker_with_another_engine_binary_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let submitter = dir.path().join("submitter");
    let other = dir.path().join("other");
    for folder in [&submitter, &other] {
        std::fs::create_dir(folder).unwrap();
        std::fs::copy(staunton(), folder.join("engine")).unwrap();
    }
    // One byte more: still the same program to run, another binary to sign.
    let mut bytes = std::fs::read(other.join("engine")).unwrap();
    bytes.push(0);
    write_script(&other.join("engine"), bytes);
    let db = dir.path().join("fleet.db").display().to_string();
    let submitted = submit_engine_against_itself(&db, &submitter);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let played = until_idle(&db, "other", &other, &[]);
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains("run 1 refused: engine a here is sha256:")
            && said.contains("but run 1 plays sha256:"),
        "{said}"
    );
    let runs = queued(&db);
    assert_eq!(runs[0].totals, Totals::default());
    assert_eq!(runs[0].batches.open, 1, "the batch went back to the queue");
}

/// `arbiter stop` reaches a worker at its next heartbeat (its batch is dropped, nothing more is
/// counted), and SIGTERM makes a worker give its batch back and exit with 143.
#[test]
fn stop_and_sigterm_reach_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 2000);
    let db = dir.path().join("fleet.db").display().to_string();
    for _ in 0..2 {
        let submitted = arbiter(
            &[
                "submit",
                config.to_str().unwrap(),
                "--db",
                &db,
                "--batch-pairs",
                "1000",
            ],
            dir.path(),
        );
        assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    }
    let log = dir.path().join("worker.log");
    let mut child = worker(&db, "w", dir.path(), &log);
    let leased = |run: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while queued(&db)[run].batches.leased == 0 {
            assert!(Instant::now() < deadline, "no lease taken");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    leased(0);
    let stopped = arbiter(&["stop", "fleet-sprt", "--db", &db], dir.path());
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    assert!(text(&stopped.stdout).starts_with("stopped run 1 (fleet-sprt)"));
    // The worker drops run 1's batch and takes run 2's.
    leased(1);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("batch 0 of run 1 dropped: the run is over (stopped)"),
        "{said}"
    );
    assert_eq!(queued(&db)[0].totals, Totals::default());

    // SIGTERM: the batch in hand goes back to the queue at once.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert_eq!(
        exit.code(),
        Some(143),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    let run = &queued(&db)[1];
    assert_eq!((run.batches.leased, run.batches.open), (0, 2), "{run:?}");
}

/// On PostgreSQL, as the fleet runs it: three workers, one of them through a TCP proxy that is
/// cut for longer than a lease and then restored, and the database server itself restarted
/// under load. Nothing is lost or counted twice, and the verdict and its totals are one
/// machine's.
#[test]
fn a_restarted_database_and_a_cut_off_worker_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Games long enough that the run is still playing when the cut and the restart come.
    let config = config_at(dir.path(), 60, 1000);
    let (local_totals, local_state) = one_machine(dir.path());

    let cluster = arbiter_pgtest::Cluster::start().expect("a throwaway PostgreSQL cluster");
    let db = cluster.database("fleet").unwrap();
    let proxy = arbiter_pgtest::CutProxy::start(cluster.addr()).unwrap();
    let through_proxy = proxy.url(&db);
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

    let log = dir.path().join("workers.log");
    let mut workers = vec![
        worker(&through_proxy, "cut-off", dir.path(), &log),
        worker(&db, "direct-1", dir.path(), &log),
        worker(&db, "direct-2", dir.path(), &log),
    ];
    let progress = |db: &str| queued(db).first().map_or(0, |r| r.batches.done);
    let deadline = Instant::now() + Duration::from_secs(300);
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what} did not happen in 5 minutes:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    wait_for("a first batch", &|| progress(&db) >= 1);
    // The cut-off worker loses the database for two leases, and while it is away the server
    // restarts under the other two: their connections break in the middle of their work.
    proxy.cut();
    std::thread::sleep(Duration::from_secs(1));
    cluster.restart().expect("restart the database");
    std::thread::sleep(Duration::from_secs(5));
    proxy.restore();
    let finished = loop {
        let runs = queued(&db);
        if let Some(run) = runs
            .iter()
            .find(|r| !matches!(r.run.state, RunState::Running))
        {
            break run.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the fleet did not finish in 5 minutes:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    for child in &mut workers {
        let _ = child.kill();
        let _ = child.wait();
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        log.contains("unreachable: "),
        "no worker noticed the database go away:\n{log}"
    );
    match finished.run.state {
        RunState::Finished { verdict } => {
            assert_eq!(local_state, RunState::Finished { verdict }, "{log}")
        }
        RunState::Running => unreachable!(),
    }
    assert_eq!(finished.prefix.totals, local_totals, "{log}");
    let (games, batches) = batch_sums_pg(&db);
    assert_eq!(
        batches, finished.totals,
        "the batches' tallies are the run's totals"
    );
    assert_eq!(games, finished.totals.games(), "every game stored once");
}

/// A queued run whose stored row was edited into a configuration that no longer reads is
/// refused by the worker, with the run and the field named; its batch goes back, nothing is
/// counted, and the worker moves on.
#[test]
fn a_run_row_edited_by_hand_is_refused_and_counts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 4);
    let db = dir.path().join("fleet.db");
    let db_text = db.display().to_string();
    let submitted = arbiter(
        &["submit", config.to_str().unwrap(), "--db", &db_text],
        dir.path(),
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    crate::common::raw_sql(
        &db,
        "UPDATE runs SET config = 'rounds = \"many\"' WHERE id = 1",
    );
    let played = arbiter(
        &[
            "worker",
            "--db",
            &db_text,
            "--name",
            "w",
            "--exit-when-idle",
            "--lease",
            "5",
        ],
        dir.path(),
    );
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains("run 1 refused: run 1") && said.contains("rounds"),
        "{said}"
    );
    let runs = queued(&db_text);
    assert_eq!(runs[0].totals, Totals::default());
    assert_eq!(
        runs[0].batches.leased, 0,
        "the batch went back to the queue"
    );
}

/// A worker on which a run's engine cannot start (here a script that exits at once: the same
/// file where it was submitted and on the worker, so the signature check passes and the start
/// is what fails) gives the batch back, says why it left the run, and exits normally when
/// nothing else is left, instead of failing, being restarted and failing on its own lease again.
#[test]
fn a_worker_whose_engine_cannot_start_leaves_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let engine = dir.path().join("engine");
    write_script(
        &engine,
        "#!/bin/sh\necho 'no weights file here' >&2\nexit 1\n",
    );
    let db = dir.path().join("fleet.db").display().to_string();
    let submitted = submit_engine_against_itself(&db, dir.path());
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let played = until_idle(&db, "w", dir.path(), &[]);
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains("run 1 refused: an engine failed on this worker (engine ")
            && said.contains("its batch goes back to the queue for other workers"),
        "{said}"
    );
    assert!(said.contains("worker w: nothing left to play"), "{said}");
    let runs = queued(&db);
    assert_eq!(runs[0].run.state, RunState::Running);
    assert_eq!(runs[0].totals, Totals::default());
    assert_eq!(
        (runs[0].batches.open, runs[0].batches.leased),
        (1, 0),
        "the batch went back to the queue"
    );
}

/// `arbiter match` of the fixed-node SPRT in `dir`'s `config` at `concurrency`, into its own
/// store: its stdout, stderr and exit code, and the stored run's state and pairs (schedule unit
/// and tally, in unit order).
fn local_at(
    dir: &Path,
    concurrency: u32,
) -> (
    String,
    String,
    Option<i32>,
    RunState,
    Vec<(u64, arbiter_store::PairTally)>,
) {
    let text_of = std::fs::read_to_string(dir.join("sprt.toml")).unwrap();
    let config = format!("c{concurrency}.toml");
    std::fs::write(
        dir.join(&config),
        text_of.replace(
            "concurrency = 1\n",
            &format!("concurrency = {concurrency}\n"),
        ),
    )
    .unwrap();
    let store = format!("c{concurrency}.db");
    let played = arbiter(&["match", &config, "--store", &store], dir);
    let (state, pairs) = block_on(async {
        use futures_util::TryStreamExt;
        let store = Store::open(&Location::parse(&dir.join(&store).display().to_string()))
            .await
            .unwrap();
        let run = store.find_run_by_name("fleet-sprt").await.unwrap().unwrap();
        let mut pairs: Vec<_> = store
            .pairs_in_commit_order(run.id)
            .map_ok(|p| (p.key.index, p.tally))
            .try_collect()
            .await
            .unwrap();
        pairs.sort_by_key(|&(unit, _)| unit);
        (run.state, pairs)
    });
    (
        text(&played.stdout),
        text(&played.stderr),
        played.status.code(),
        state,
        pairs,
    )
}

/// Issue 20's reproducible verdict on one machine: the same fixed-node SPRT played one game at
/// a time and four at a time reaches the same verdict on the same pairs (the prefix of the
/// schedule the one-at-a-time run played), with the same LLR, whichever games finished first
/// at four; pairs that finished beyond the prefix are stored, and the console says the verdict
/// did not count them. (The fleet reaching one machine's verdict is
/// `killed_workers_reach_the_verdict_one_machine_reaches`.)
#[test]
fn a_verdict_at_concurrency_4_is_the_verdict_at_concurrency_1() {
    let dir = tempfile::tempdir().unwrap();
    // At 100 nodes a weaker knight alone is too close to call in 300 pairs; without its queen's
    // worth too, H1 comes after 76.
    let path = config_at(dir.path(), 300, 100);
    let text_of = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text_of.replace(
            "knight_eg = 200 }",
            "knight_eg = 200, queen_mg = 600, queen_eg = 600 }",
        ),
    )
    .unwrap();
    let (out1, err1, code1, state1, pairs1) = local_at(dir.path(), 1);
    assert!(
        matches!(state1, RunState::Finished { .. }) && matches!(code1, Some(0 | 1)),
        "the SPRT must decide for the test to say anything: {code1:?}\n{err1}"
    );
    let (out4, err4, code4, state4, pairs4) = local_at(dir.path(), 4);
    assert_eq!((code4, &state4), (code1, &state1), "{err4}");
    let n = pairs1.len();
    assert_eq!(
        pairs1.iter().map(|&(u, _)| u).collect::<Vec<_>>(),
        (0..n as u64).collect::<Vec<_>>(),
        "one game at a time plays the schedule in order"
    );
    assert!(pairs4.len() >= n, "{err4}");
    assert_eq!(
        &pairs4[..n],
        &pairs1[..],
        "four at a time: the verdict's pairs are the same pairs with the same results"
    );
    let sprt_line = |out: &str| {
        out.lines()
            .rfind(|l| l.starts_with("SPRT: "))
            .map(str::to_owned)
    };
    assert!(sprt_line(&out1).is_some(), "{out1}");
    assert_eq!(sprt_line(&out4), sprt_line(&out1), "{out4}");
    let beyond = pairs4.len() - n;
    eprintln!("the verdict after {n} pairs; {beyond} more stored at concurrency 4");
    // `arbiter report` shows the verdict's LLR, judged on the same prefix, for both stores.
    let report = |concurrency: u32| -> serde_json::Value {
        let out = format!("report-c{concurrency}");
        let store = format!("c{concurrency}.db");
        let made = arbiter(
            &[
                "report",
                "fleet-sprt",
                "--store",
                &store,
                "--format",
                "json",
                "--out",
                &out,
            ],
            dir.path(),
        );
        assert!(made.status.success(), "{}", text(&made.stderr));
        let json = std::fs::read_to_string(dir.path().join(out).join("report.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&json).unwrap()["summary"].clone()
    };
    let (report1, report4) = (report(1), report(4));
    assert_eq!(report4["llr"], report1["llr"], "{report4}");
    assert_eq!(report4["state"], report1["state"], "{report4}");
    assert_eq!(report1["sprt_judged_pairs"], serde_json::Value::Null);
    if beyond > 0 {
        assert_eq!(report4["sprt_judged_pairs"], n as u64, "{report4}");
    }
    let judged = format!("SPRT judged on the verdict's prefix, the first {n} pairs");
    if beyond > 0 {
        assert!(
            err4.contains(&judged)
                && err4.contains(&format!("{beyond} more pairs finished beyond it")),
            "{err4}"
        );
    } else {
        assert!(!err4.contains(&judged), "{err4}");
    }
}

/// `arbiter match CONFIG --db URL` on PostgreSQL queues the run and plays it as one of its
/// workers, printing the match as usual; `arbiter worker --db URL` started beside it joins the
/// run and plays batches of it. The run ends with the match's exit status and its final
/// lines, its totals are the sum of its batches, every game is stored once, and both
/// processes played.
#[test]
fn a_match_on_postgres_is_joined_by_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 40);
    // The exports and the report, which the match writes from the database with every
    // worker's games.
    let text_of = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("pgnout = \"games.pgn\"\njsonl = \"games.jsonl\"\nreport = \"report\"\n{text_of}"),
    )
    .unwrap();
    let cluster = arbiter_pgtest::Cluster::start().expect("a throwaway PostgreSQL cluster");
    let db = cluster.database("joined").unwrap();
    let out = std::fs::File::create(dir.path().join("match.out")).unwrap();
    let err = std::fs::File::create(dir.path().join("match.err")).unwrap();
    let mut local = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            config.to_str().unwrap(),
            "--db",
            &db,
            "--batch-pairs",
            "2",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while queued(&db).is_empty() {
        assert!(Instant::now() < deadline, "the run was not queued");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = dir.path().join("worker.log");
    let mut remote = worker(&db, "remote", dir.path(), &log);
    let status = loop {
        if let Some(status) = local.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline + Duration::from_secs(180),
            "the match did not finish"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let said = std::fs::read_to_string(dir.path().join("match.err")).unwrap();
    let printed = std::fs::read_to_string(dir.path().join("match.out")).unwrap();
    let worker_said = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = remote.kill();
    let _ = remote.wait();
    let runs = queued(&db);
    let run = &runs[0];
    let verdict = match run.run.state {
        RunState::Finished { verdict } => verdict,
        RunState::Running => panic!("still running\n{said}"),
    };
    let code = match verdict {
        arbiter_store::RunOutcome::H1 => 0,
        arbiter_store::RunOutcome::H0 => 1,
        _ => 3,
    };
    assert_eq!(status.code(), Some(code), "{said}");
    assert!(
        said.contains("Run 1 (fleet-sprt): dev vs base, seed 11, queued in 20 batches of 2"),
        "{said}"
    );
    assert!(
        said.contains(&format!("Finished run 1: {verdict}")),
        "{said}"
    );
    // Which batches this process plays is a race with the worker (the worker may take the
    // first), so any game of the 80 will do; a block is printed only for a counted prefix.
    assert!(
        printed
            .lines()
            .any(|l| l.starts_with("Started game ") && l.contains(" of 80 (")),
        "{printed}"
    );
    assert!(
        !printed.contains("Score of dev vs base: 0 - 0 - 0"),
        "{printed}"
    );
    assert!(printed.contains("Finished match"), "{printed}");
    assert!(printed.contains("Score of dev vs base: "), "{printed}");
    assert!(
        printed.contains("Player: dev\n  Timeouts: 0\n  Crashed: 0\nPlayer: base\n"),
        "{printed}"
    );
    assert!(!said.contains("is not written"), "{said}");
    let last_sprt = printed
        .lines()
        .rfind(|l| l.starts_with("SPRT: "))
        .unwrap_or("");
    assert!(
        code == 3 || last_sprt.ends_with(&format!(" - {verdict} was accepted")),
        "{printed}"
    );

    let (games, batches) = batch_sums_pg(&db);
    assert_eq!(
        batches, run.totals,
        "the batches' tallies are the run's totals"
    );
    assert_eq!(games, run.totals.games(), "every game stored once");
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Event ").count() as u64,
        run.totals.games(),
        "the PGN holds every worker's games"
    );
    let jsonl = std::fs::read_to_string(dir.path().join("games.jsonl")).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(jsonl.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["pairs"], run.totals.pairs);
    assert!(
        summary["verdict"]
            .as_str()
            .is_some_and(|v| v.eq_ignore_ascii_case(verdict.as_str())),
        "{summary}"
    );
    assert_eq!(jsonl.lines().count() as u64, run.totals.games() + 1);
    let report = std::fs::read_to_string(dir.path().join("report/report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["summary"]["name"], "fleet-sprt", "{report}");
    assert_eq!(report["summary"]["games"], run.totals.games(), "{report}");
    let by_worker = block_on(async {
        let pool = sqlx::PgPool::connect(&db).await.unwrap();
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT w.name, COUNT(*) FROM batches b JOIN workers w ON w.id = b.worker_id \
             WHERE b.state = 'done' GROUP BY w.name ORDER BY w.name",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        pool.close().await;
        rows
    });
    assert!(
        by_worker
            .iter()
            .any(|(name, n)| name == "remote" && *n >= 1),
        "the joining worker played no batch: {by_worker:?}\n{worker_said}"
    );
    assert!(
        by_worker
            .iter()
            .any(|(name, n)| name != "remote" && *n >= 1),
        "the match played no batch itself: {by_worker:?}\n{said}"
    );
}

/// A submitter killed between counting its batch and advancing the run leaves the batch
/// counted (its pairs and games stored, the batch done) but out of the totals, and, at the
/// run's end, no later submit to add it. Here every batch of a run is left so (counted with
/// the store's first half of a submit, as a worker killed at that instant would leave them,
/// and dated a minute back); a worker that finds nothing to claim advances the run with its
/// SPRT, which closes it complete (six pairs decide nothing), with every pair in the totals
/// and the commit order, and then it exits idle.
#[test]
fn a_run_whose_submitters_died_before_advancing_is_advanced_by_a_worker() {
    use arbiter_store::{GameResult, GameRow, PairKey, PairRecord, PairTally, RunOutcome};

    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 6);
    let db = dir.path().join("fleet.db");
    let db_text = db.display().to_string();
    let submitted = arbiter(
        &[
            "submit",
            config.to_str().unwrap(),
            "--db",
            &db_text,
            "--batch-pairs",
            "2",
        ],
        dir.path(),
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    // W+D, D+D, L+D ... from the first engine's side.
    let tally = |k: u64| match k % 3 {
        0 => PairTally {
            wins: 1,
            draws: 1,
            losses: 0,
            penta: 3,
        },
        1 => PairTally {
            wins: 0,
            draws: 2,
            losses: 0,
            penta: 2,
        },
        _ => PairTally {
            wins: 0,
            draws: 1,
            losses: 1,
            penta: 1,
        },
    };
    let game = |k: u64, g: u64| {
        let result = match (k % 3, g) {
            (0, 0) => GameResult::WhiteWins,
            (2, 0) => GameResult::BlackWins,
            _ => GameResult::Draw,
        };
        GameRow {
            game_number: 2 * k + g + 1,
            white: ["dev", "base"][g as usize].into(),
            black: ["base", "dev"][g as usize].into(),
            result,
            termination: "normal".into(),
            plies: 60,
            opening_index: k,
            opening_fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            pgn: format!("[Round \"{k}\"]\n\n1. e4 *\n"),
            json: "{}".into(),
            started_at: std::time::UNIX_EPOCH,
            duration: Duration::from_secs(1),
        }
    };
    let mut expected = Totals::default();
    let run = block_on(async {
        let store = Store::open(&Location::parse(&db_text)).await.unwrap();
        let ghost = store
            .register_worker(&arbiter_store::WorkerInfo {
                name: "killed".into(),
                host: "test".into(),
                cores: 1,
                version: "test".into(),
            })
            .await
            .unwrap();
        let mut run = None;
        while let Some(lease) = store.claim_batch(ghost, 600_000, &[]).await.unwrap() {
            let pairs: Vec<PairRecord> = lease
                .unit_range()
                .map(|k| PairRecord {
                    run: lease.run,
                    key: PairKey {
                        pairing: 0,
                        index: k,
                    },
                    tally: tally(k),
                    games: vec![game(k, 0), game(k, 1)],
                })
                .collect();
            for pair in &pairs {
                expected.add(pair.tally);
            }
            store.count_batch(&lease, &pairs, "{}").await.unwrap();
            run = Some(lease.run);
        }
        store.close().await;
        run.expect("a batch to claim")
    });
    assert_eq!(expected.pairs, 6);
    // The killed submitters' batches, a minute old.
    block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&db);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        sqlx::query("UPDATE pairs SET committed_at_ms = committed_at_ms - 60000")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
    let before = queued(&db_text);
    assert_eq!(before[0].run.state, RunState::Running);
    assert_eq!(before[0].totals, Totals::default());

    let log = dir.path().join("worker.log");
    let status = worker(&db_text, "w", dir.path(), &log).wait().unwrap();
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );

    let after = queued(&db_text);
    assert_eq!(
        after[0].run.state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    assert_eq!(after[0].totals, expected);
    assert_eq!(after[0].prefix.units, 6);
    assert_eq!(after[0].prefix.totals, expected);
    block_on(async {
        let store = Store::open(&Location::parse(&db_text)).await.unwrap();
        assert_eq!(store.stale_runs(Duration::ZERO).await.unwrap(), []);
        let order: Vec<u64> =
            futures_util::TryStreamExt::try_collect::<Vec<_>>(store.pairs_in_commit_order(run))
                .await
                .unwrap()
                .iter()
                .map(|pair| pair.sequence)
                .collect();
        assert_eq!(order, (1..=6).collect::<Vec<u64>>());
        store.close().await;
    });
}

/// `arbiter worker --db DB --name NAME --exit-when-idle --lease 5 EXTRA...` in `dir`, waited
/// for.
fn until_idle(db: &str, name: &str, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "worker",
        "--db",
        db,
        "--name",
        name,
        "--exit-when-idle",
        "--lease",
        "5",
    ];
    args.extend_from_slice(extra);
    arbiter(&args, dir)
}

/// staunton's bench node count, as its own `bench` prints it (the oracle the runner's reading
/// of the count is checked against).
pub(crate) fn staunton_bench() -> u64 {
    let out = Command::new(staunton()).arg("bench").output().unwrap();
    let said = text(&out.stdout) + &text(&out.stderr);
    said.lines()
        .find_map(|line| line.strip_prefix("Nodes searched:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {said}"))
}

/// A configuration of the UCI staunton at `./engine` against itself, the first side stating
/// `bench`.
pub(crate) fn bench_config(dir: &Path, bench: u64) -> PathBuf {
    std::fs::copy(staunton(), dir.join("engine")).unwrap();
    let path = dir.join("bench.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"bench\"\nseed = 1\nconcurrency = 1\nrounds = 2\n\
             [each]\ntc = \"inf\"\nnodes = 200\n\
             [[engine]]\nname = \"a\"\ncmd = \"./engine\"\nbench = {bench}\n\
             [[engine]]\nname = \"b\"\ncmd = \"./engine\"\n"
        ),
    )
    .unwrap();
    path
}

/// A run that states its engine's bench is refused by a worker whose build prints another
/// count (the run's batch goes back, nothing counted), and played by one whose build prints
/// it.
#[test]
fn a_worker_whose_engine_benches_otherwise_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bench = staunton_bench();
    let db = dir.path().join("fleet.db").display().to_string();
    let work = |name: &str| until_idle(&db, name, dir.path(), &[]);
    // The commit message's count is one off: another build than the one benched here.
    bench_config(dir.path(), bench + 1);
    let submitted = arbiter(&["submit", "bench.toml", "--db", &db], dir.path());
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let played = work("w1");
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "run 1 refused: engine a: its bench here is {bench} nodes, but the run expects {}",
            bench + 1
        )),
        "{said}"
    );
    let runs = queued(&db);
    assert_eq!(runs[0].totals, Totals::default());
    assert_eq!(runs[0].batches.open, 1, "the batch went back to the queue");

    // The right count: played to the end.
    bench_config(dir.path(), bench);
    let submitted = arbiter(&["submit", "bench.toml", "--db", &db], dir.path());
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let played = work("w2");
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    let runs = queued(&db);
    assert_eq!(runs[1].totals.pairs, 2, "{said}");
}

/// A git repository whose build (`sh build.sh`) copies staunton to `engine` and counts itself
/// in `count` outside the repository; its commit's hash.
fn engine_repository(dir: &Path, count: &Path) -> (PathBuf, String) {
    let repo = dir.join("engine-src");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("build.sh"),
        format!(
            "set -e\necho built >> '{}'\ncp '{}' engine\nchmod +x engine\n",
            count.display(),
            staunton().display()
        ),
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    git(&["init", "--quiet"]);
    git(&["add", "build.sh"]);
    git(&["commit", "--quiet", "-m", "an engine"]);
    let commit = git(&["rev-parse", "HEAD"]);
    (repo, commit)
}

/// A worker builds an engine from its recipe (the repository at the commit, the command, the
/// binary), benches it and plays it; a second run of the same recipe is played from the build
/// it kept. A recipe that cannot be built is refused naming the failing step, and `arbiter
/// match` without --db, and a recipe whose commit is a branch, are refused with 2.
#[test]
fn a_worker_builds_an_engine_from_its_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let (repo, commit) = engine_repository(dir.path(), &count);
    let bench = staunton_bench();
    let recipe = |commit: &str| {
        let config = bench_config(dir.path(), bench);
        let text = std::fs::read_to_string(&config).unwrap().replacen(
            "cmd = \"./engine\"\nbench",
            &format!(
                "build = {{ repo = {:?}, commit = \"{commit}\", command = \"sh build.sh\", \
                 binary = \"engine\" }}\nbench",
                repo.display().to_string()
            ),
            1,
        );
        std::fs::write(&config, text).unwrap();
    };
    let db = dir.path().join("fleet.db").display().to_string();
    let builds = dir.path().join("builds").display().to_string();
    let work = |name: &str| until_idle(&db, name, dir.path(), &["--builds", &builds]);
    recipe(&commit);
    for (run, worker) in [(0, "w1"), (1, "w2")] {
        let submitted = arbiter(&["submit", "bench.toml", "--db", &db], dir.path());
        assert!(submitted.status.success(), "{}", text(&submitted.stderr));
        let played = work(worker);
        let said = text(&played.stderr);
        assert!(played.status.success(), "{said}");
        assert_eq!(queued(&db)[run].totals.pairs, 2, "{said}");
    }
    let built = std::fs::read_to_string(&count).unwrap();
    assert_eq!(built.lines().count(), 1, "built once, then kept: {built}");

    // A commit the repository does not have: the worker says which step failed.
    recipe(&"0".repeat(40));
    let submitted = arbiter(&["submit", "bench.toml", "--db", &db], dir.path());
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let played = work("w3");
    let said = text(&played.stderr);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains("run 3 refused: engine a: building")
            && said.contains("at 000000000000: `git -c advice.detachedHead=false checkout"),
        "{said}"
    );
    assert_eq!(queued(&db)[2].totals, Totals::default());

    // On this machine alone: refused, pointing at --db.
    recipe(&commit);
    let local = arbiter(&["match", "bench.toml"], dir.path());
    assert_eq!(local.status.code(), Some(2), "{}", text(&local.stderr));
    assert!(
        text(&local.stderr).contains("engine a is built from source"),
        "{}",
        text(&local.stderr)
    );
    // A branch for a commit: refused, naming the field.
    recipe("master");
    let branch = arbiter(&["submit", "bench.toml", "--db", &db], dir.path());
    assert_eq!(branch.status.code(), Some(2), "{}", text(&branch.stderr));
    assert!(
        text(&branch.stderr).contains("engine[a].build.commit"),
        "{}",
        text(&branch.stderr)
    );
}
