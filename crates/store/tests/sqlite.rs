//! The store on real SQLite files in temporary directories.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arbiter_store::{Committed, Location, Store, StoreError};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Row, SqlitePool};

use crate::common;
use crate::common::*;

async fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(dir.path().join("arbiter.db")))
        .await
        .unwrap();
    (dir, store)
}

/// A plain connection to the file, behind the store's back.
async fn raw(path: &Path) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap()
}

#[tokio::test]
async fn runs_pairs_and_games_round_trip() {
    let (_dir, store) = fresh().await;
    common::runs_pairs_and_games_round_trip(&store).await;
}

#[tokio::test]
async fn duplicate_commit_changes_nothing() {
    let (_dir, store) = fresh().await;
    common::duplicate_commit_changes_nothing(&store).await;
}

#[tokio::test]
async fn resume_set_is_exact_and_per_run() {
    let (_dir, store) = fresh().await;
    common::resume_set_is_exact_and_per_run(&store).await;
}

#[tokio::test]
async fn bad_commits_write_nothing() {
    let (_dir, store) = fresh().await;
    common::bad_commits_write_nothing(&store).await;
}

#[tokio::test]
async fn one_game_units_are_kept() {
    let (_dir, store) = fresh().await;
    common::one_game_units_are_kept(&store).await;
}

#[tokio::test]
async fn n_engine_runs_round_trip() {
    let (_dir, store) = fresh().await;
    common::n_engine_runs_round_trip(&store).await;
}

#[tokio::test]
async fn pairs_read_back_in_commit_order() {
    let (_dir, store) = fresh().await;
    common::pairs_read_back_in_commit_order(&store).await;
}

#[tokio::test]
async fn bad_lineups_and_keys_are_refused() {
    let (_dir, store) = fresh().await;
    common::bad_lineups_and_keys_are_refused(&store).await;
}

#[tokio::test]
async fn run_names_are_unique() {
    let (_dir, store) = fresh().await;
    common::run_names_are_unique(&store).await;
}

#[tokio::test]
async fn older_runs_gain_facts_and_links_once() {
    let (_dir, store) = fresh().await;
    common::older_runs_gain_facts_and_links_once(&store).await;
}

#[tokio::test]
async fn tuning_steps_are_kept_exactly_once() {
    let (_dir, store) = fresh().await;
    common::tuning_steps_are_kept_exactly_once(&store).await;
}

#[tokio::test]
async fn a_run_is_played_by_one_holder_at_a_time() {
    let (dir, store) = fresh().await;
    common::a_run_is_played_by_one_holder_at_a_time(&store).await;
    assert_eq!(
        lock_files(dir.path()),
        Vec::<String>::new(),
        "released locks leave no file"
    );
}

/// The run lock files in `dir`.
fn lock_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".lock"))
        .collect();
    names.sort();
    names
}

const KILLED_HOLDER_TEST: &str = "sqlite::a_killed_holder_frees_the_run_at_once";

#[tokio::test]
async fn a_killed_holder_frees_the_run_at_once() {
    hold_lock_if_asked().await;
    let (dir, store) = fresh().await;
    let run = store.create_run(&spec("killed", 10)).await.unwrap();
    let location = dir.path().join("arbiter.db").display().to_string();
    common::a_killed_holder_frees_the_run_at_once(&store, KILLED_HOLDER_TEST, &location, run).await;
    assert_eq!(lock_files(dir.path()), Vec::<String>::new());
}

#[cfg(unix)]
#[tokio::test]
async fn two_spellings_of_one_file_share_its_run_locks() {
    let (dir, store) = fresh().await;
    let run = store.create_run(&spec("spellings", 10)).await.unwrap();
    let _lock = store.lock_run(run).await.unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(dir.path().join("arbiter.db"), &link).unwrap();
    let via_link = Store::open_existing(&Location::Sqlite(link)).await.unwrap();
    assert!(matches!(
        via_link.lock_run(run).await,
        Err(StoreError::RunBusy { .. })
    ));
    assert_eq!(lock_files(dir.path()), ["arbiter.db.run-1.lock"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_are_all_counted() {
    let (_dir, store) = fresh().await;
    let rate = common::concurrent_commits_are_all_counted(Arc::new(store), 8, 200).await;
    // With synchronous = FULL every commit is an fsync: this is the price, in the test log.
    eprintln!("sqlite: {rate:.0} commits/s (8 tasks x 200 pairs, WAL, synchronous=FULL)");
}

#[tokio::test]
async fn committed_pairs_survive_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("arbiter.db"));
    let store = Store::open(&location).await.unwrap();
    let run = store.create_run(&spec("reopen", 10)).await.unwrap();
    for k in [0, 1, 2] {
        assert_eq!(
            store.commit_pair(&pair(run, k)).await.unwrap(),
            Committed::Inserted
        );
    }
    drop(store); // no close: as a process that ends abruptly
    let store = Store::open_existing(&location).await.unwrap();
    assert_eq!(
        committed_indices(&store, run).await,
        BTreeSet::from([0, 1, 2])
    );
    let _ = store.commit_pair(&pair(run, 3)).await.unwrap();
    store.close().await;
    let store = Store::open_existing(&location).await.unwrap();
    assert_eq!(
        store.totals(run).await.unwrap(),
        expected_totals([0, 1, 2, 3])
    );
    assert_eq!(store.run(run).await.unwrap().spec.name, "reopen");
}

#[tokio::test]
async fn the_file_is_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arbiter.db");
    Store::open(&Location::Sqlite(path.clone()))
        .await
        .unwrap()
        .close()
        .await;
    let pool = raw(&path).await;
    let mode: String = sqlx::query("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap()
        .get(0);
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn open_existing_does_not_create_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.db");
    let error = Store::open_existing(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("an error");
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    assert!(error.to_string().contains("missing.db"), "{error}");
    assert!(!path.exists());
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("games.pgn");
    std::fs::write(&text, "[Event \"?\"]\n\n1. e4 e5 *\n".repeat(50)).unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(
        &garbage,
        (0..8192u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let short = dir.path().join("short.db");
    std::fs::write(&short, "not sqlite").unwrap();

    for path in [text, garbage, short] {
        let before = std::fs::read(&path).unwrap();
        let location = Location::Sqlite(path.clone());
        for opened in [
            Store::open(&location).await,
            Store::open_existing(&location).await,
        ] {
            let error = opened.err().expect("an error");
            assert!(
                matches!(error, StoreError::NotADatabase { .. }),
                "{}: {error:?}",
                path.display()
            );
            let message = error.to_string();
            assert!(
                message.contains(&path.display().to_string()) && message.contains("not a database"),
                "{message}"
            );
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{} was modified",
            path.display()
        );
    }
}

#[tokio::test]
async fn another_programs_database_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let pool = raw(&path).await;
    sqlx::query("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let error = Store::open(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("an error");
    match &error {
        StoreError::NotArbiterDatabase { reason, .. } => {
            assert!(reason.contains("customers"), "{reason}")
        }
        other => panic!("expected NotArbiterDatabase, got {other:?}"),
    }
    assert!(error.to_string().contains("other.db"), "{error}");
    let pool = raw(&path).await;
    let tables: Vec<String> = sqlx::query("SELECT name FROM sqlite_master WHERE type = 'table'")
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        tables,
        ["customers"],
        "arbiter added tables to someone else's database"
    );
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arbiter.db");
    let store = Store::open(&Location::Sqlite(path.clone())).await.unwrap();
    let run = store
        .create_run(&spec("from-the-future", 10))
        .await
        .unwrap();
    let _ = store.commit_pair(&pair(run, 0)).await.unwrap();
    store.close().await;

    // What a newer arbiter leaves behind: a migration this build has never heard of.
    let pool = raw(&path).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99, 'batches and leases', TRUE, x'00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;

    let error = Store::open(&Location::Sqlite(path))
        .await
        .err()
        .expect("an error");
    assert!(
        matches!(
            error,
            StoreError::NewerSchema {
                found: 99,
                supported: 10,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("newer"), "{error}");
}

#[tokio::test]
async fn an_empty_file_becomes_a_store() {
    // `touch runs.db` then `arbiter match --store runs.db`: an empty file is an empty database.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, "").unwrap();
    let store = Store::open(&Location::Sqlite(path)).await.unwrap();
    assert_eq!(store.runs().await.unwrap(), vec![]);
}

/// The files beside `path` that SQLite adds (`-wal`, `-shm`, `-journal`).
fn side_files(path: &Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut found: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with(&name) && *f != name)
        .collect();
    found.sort();
    found
}

/// `arbiter report --store x.db` on a 0-byte file, and `--resume` on one, made it a store (it
/// was given arbiter's tables and switched to WAL): opening what must exist already refuses
/// an empty file, naming it, and leaves it byte for byte as it was, with nothing beside it.
#[tokio::test]
async fn an_empty_file_is_no_existing_store_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, "").unwrap();
    let location = Location::Sqlite(path.clone());
    for opened in [
        Store::open_read_only(&location).await,
        Store::open_existing(&location).await,
    ] {
        let error = opened.err().expect("an error");
        assert!(
            matches!(error, StoreError::NotArbiterDatabase { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("{}: not an arbiter database (it is empty)", path.display())
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"", "the file was written");
        assert_eq!(side_files(&path), Vec::<String>::new());
    }
    let missing = dir.path().join("missing.db");
    let error = Store::open_read_only(&Location::Sqlite(missing.clone()))
        .await
        .err()
        .expect("an error");
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    assert!(!missing.exists());
}

/// Someone else's SQLite database is refused by a reader too, and keeps its bytes.
#[tokio::test]
async fn a_reader_leaves_another_programs_database_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let pool = raw(&path).await;
    sqlx::query("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let before = std::fs::read(&path).unwrap();
    let error = Store::open_read_only(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("an error");
    match &error {
        StoreError::NotArbiterDatabase { reason, .. } => {
            assert!(reason.contains("customers"), "{reason}")
        }
        other => panic!("expected NotArbiterDatabase, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(side_files(&path), Vec::<String>::new());
}

/// A store opened to read reads what was committed, refuses to write, and leaves the file's
/// bytes as they were.
#[tokio::test]
async fn a_read_only_store_reads_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arbiter.db");
    let location = Location::Sqlite(path.clone());
    let store = Store::open(&location).await.unwrap();
    let run = store.create_run(&spec("read-only", 10)).await.unwrap();
    for k in [0, 1] {
        let _ = store.commit_pair(&pair(run, k)).await.unwrap();
    }
    store.close().await;
    let before = std::fs::read(&path).unwrap();

    let reader = Store::open_read_only(&location).await.unwrap();
    assert_eq!(reader.totals(run).await.unwrap(), expected_totals([0, 1]));
    assert_eq!(reader.run(run).await.unwrap().spec.name, "read-only");
    let refused = reader.commit_pair(&pair(run, 2)).await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(reader.create_run(&spec("another", 10)).await.is_err());
    reader.close().await;
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the store was written"
    );
    let store = Store::open_existing(&location).await.unwrap();
    assert_eq!(committed_indices(&store, run).await, BTreeSet::from([0, 1]));
}

#[cfg(not(feature = "postgres"))]
#[tokio::test]
async fn postgres_urls_need_the_feature() {
    let location = Location::parse("postgres://arbiter:s3cret@localhost/arbiter");
    let error = Store::open(&location).await.err().expect("an error");
    assert!(
        matches!(error, StoreError::PostgresNotEnabled { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("postgres") && !message.contains("s3cret"),
        "{message}"
    );
}

/// Opens `path` from `openers` threads at once, each with its own runtime (as separate processes
/// would, with separate connections), and returns what each open gave.
fn open_concurrently(path: &Path, openers: usize) -> Vec<Result<(), StoreError>> {
    let barrier = Arc::new(std::sync::Barrier::new(openers));
    let threads: Vec<_> = (0..openers)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            let location = Location::Sqlite(path.to_owned());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                barrier.wait();
                runtime.block_on(async {
                    let store = Store::open(&location).await?;
                    store.runs().await?;
                    store.close().await;
                    Ok(())
                })
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

const OPENER_ENV: &str = "ARBITER_STORE_OPENER";

#[test]
fn processes_opening_a_new_file_at_once_all_succeed() {
    if let Some(path) = std::env::var_os(OPENER_ENV) {
        // The child: open, read, report.
        let results = open_concurrently(Path::new(&path), 1);
        match &results[0] {
            Ok(()) => println!("opened"),
            Err(e) => println!("failed: {e}"),
        }
        return;
    }
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arbiter.db");
        let children: Vec<_> = (0..6)
            .map(|_| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args([
                        "sqlite::processes_opening_a_new_file_at_once_all_succeed",
                        "--exact",
                        "--nocapture",
                    ])
                    .env(OPENER_ENV, &path)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && stdout.contains("opened"),
                "round {round}: {stdout}"
            );
        }
        let store = futures_block_on(Store::open_existing(&Location::Sqlite(path)));
        assert!(store.is_ok(), "round {round}: {:?}", store.err());
    }
}

fn futures_block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn concurrent_first_opens_of_a_new_file_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arbiter.db");
        let results = open_concurrently(&path, 8);
        let failures: Vec<String> = results
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert!(failures.is_empty(), "round {round}: {failures:#?}");
    }
}

/// `error` as the binary prints it (anyhow's `{:#}`: the message and its source chain): every
/// text once, the database named.
fn assert_said_once(error: StoreError, location: &Path) -> String {
    let plain = error.to_string();
    let chain = format!("{:#}", anyhow::Error::from(error));
    assert_eq!(chain, plain, "the chain adds nothing the message lacks");
    for fragment in chain.split(": ").filter(|f| f.len() >= 6) {
        assert_eq!(
            chain.matches(fragment).count(),
            1,
            "{fragment:?} repeats in: {chain}"
        );
    }
    assert!(
        chain.starts_with(&location.display().to_string()),
        "{chain}"
    );
    chain
}

#[tokio::test]
async fn error_messages_say_each_thing_once_and_name_the_database() {
    let dir = tempfile::tempdir().unwrap();

    // A migration that fails (here a view has the name of a table to create): sqlx's migrator
    // wraps sqlx's error, which wraps SQLite's, each repeating the one below.
    let path = dir.path().join("view.db");
    let pool = raw(&path).await;
    sqlx::query("CREATE VIEW runs AS SELECT 1 AS id")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let error = Store::open(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("an error");
    assert!(matches!(error, StoreError::Migrate { .. }), "{error:?}");
    let text = assert_said_once(error, &path);
    assert!(
        text.contains("migrating the schema") && text.contains("runs"),
        "{text}"
    );
    eprintln!("{text}");

    // A statement the database refuses.
    let path = dir.path().join("trigger.db");
    Store::open(&Location::Sqlite(path.clone()))
        .await
        .unwrap()
        .close()
        .await;
    let pool = raw(&path).await;
    sqlx::query(
        "CREATE TRIGGER frozen BEFORE INSERT ON runs \
         BEGIN SELECT RAISE(ABORT, 'runs are frozen'); END",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let store = Store::open(&Location::Sqlite(path.clone())).await.unwrap();
    let error = store
        .create_run(&spec("frozen", 10))
        .await
        .expect_err("refused");
    assert!(matches!(error, StoreError::Database { .. }), "{error:?}");
    let text = assert_said_once(error, &path);
    assert!(
        text.contains("creating run \"frozen\"") && text.contains("runs are frozen"),
        "{text}"
    );
    eprintln!("{text}");

    // Paths that are not database files.
    let missing_directory = dir.path().join("no-such-directory").join("arbiter.db");
    let error = Store::open(&Location::Sqlite(missing_directory.clone()))
        .await
        .err()
        .expect("an error");
    let text = assert_said_once(error, &missing_directory);
    assert!(
        text.ends_with(&format!(
            ": the directory {} does not exist",
            dir.path().join("no-such-directory").display()
        )),
        "{text}"
    );
    eprintln!("{text}");
    let error = Store::open(&Location::Sqlite(dir.path().to_owned()))
        .await
        .err()
        .expect("an error");
    let text = assert_said_once(error, dir.path());
    assert!(text.contains("not a database file"), "{text}");

    eprintln!("{text}");
}

#[tokio::test]
async fn open_existing_names_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mistyped.db");
    let error = Store::open_existing(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("an error");
    let text = assert_said_once(error, &path);
    assert_eq!(text, format!("{}: no such database file", path.display()));
    assert!(!path.exists());
}

// The fleet's scenarios (tests/common/fleet.rs): one SQLite file serves workers on one machine.

#[tokio::test]
async fn a_queued_run_is_played_in_batches_exactly_once() {
    let (_dir, store) = fresh().await;
    fleet::a_queued_run_is_played_in_batches_exactly_once(&store).await;
}

#[tokio::test]
async fn an_expired_lease_goes_to_the_next_claim() {
    let (_dir, store) = fresh().await;
    fleet::an_expired_lease_goes_to_the_next_claim(&store).await;
}

#[tokio::test]
async fn a_released_batch_is_leased_again() {
    let (_dir, store) = fresh().await;
    fleet::a_released_batch_is_leased_again(&store).await;
}

#[tokio::test]
async fn the_verdict_is_judged_on_the_prefix() {
    let (_dir, store) = fresh().await;
    fleet::the_verdict_is_judged_on_the_prefix(&store).await;
}

#[tokio::test]
async fn a_stopped_run_reaches_its_workers() {
    let (_dir, store) = fresh().await;
    fleet::a_stopped_run_reaches_its_workers(&store).await;
}

#[tokio::test]
async fn bad_batches_count_nothing() {
    let (_dir, store) = fresh().await;
    fleet::bad_batches_count_nothing(&store).await;
}

#[tokio::test]
async fn priorities_limits_and_exclusions_choose_the_batch() {
    let (_dir, store) = fresh().await;
    fleet::priorities_limits_and_exclusions_choose_the_batch(&store).await;
}

#[tokio::test]
async fn files_and_signatures_are_kept_with_the_run() {
    let (_dir, store) = fresh().await;
    fleet::files_and_signatures_are_kept_with_the_run(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_get_distinct_batches() {
    let (_dir, store) = fresh().await;
    fleet::concurrent_claims_get_distinct_batches(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submits_keep_the_commit_order_and_the_prefix() {
    let (_dir, store) = fresh().await;
    fleet::concurrent_submits_keep_the_commit_order_and_the_prefix(Arc::new(store)).await;
}

#[tokio::test]
async fn a_pair_counted_before_its_batch_counts_once() {
    let (_dir, store) = fresh().await;
    fleet::a_pair_counted_before_its_batch_counts_once(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_workers_reach_the_sequential_verdict() {
    let (_dir, store) = fresh().await;
    fleet::many_workers_reach_the_sequential_verdict(Arc::new(store)).await;
}

#[tokio::test]
async fn a_batch_whose_advance_never_ran_is_totalled_by_the_next() {
    let (_dir, store) = fresh().await;
    fleet::a_batch_whose_advance_never_ran_is_totalled_by_the_next(&store).await;
}

#[tokio::test]
async fn a_long_prefix_is_walked_page_by_page() {
    let (_dir, store) = fresh().await;
    fleet::a_long_prefix_is_walked_page_by_page(&store).await;
}

#[tokio::test]
async fn names_with_sql_metacharacters_are_plain_names() {
    let (_dir, store) = fresh().await;
    fleet::names_with_sql_metacharacters_are_plain_names(&store).await;
}

#[tokio::test]
async fn a_queued_tuning_run_applies_each_batch_once() {
    let (_dir, store) = fresh().await;
    tuning_fleet::a_queued_tuning_run_applies_each_batch_once(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_tuning_submits_apply_every_update_once() {
    let (_dir, store) = fresh().await;
    tuning_fleet::concurrent_tuning_submits_apply_every_update_once(Arc::new(store)).await;
}

// API tokens (tests/common/tokens.rs).

#[tokio::test]
async fn a_token_is_created_authenticated_and_revoked() {
    let (dir, store) = fresh().await;
    let (token, secret) = tokens::a_token_is_created_authenticated_and_revoked(&store).await;
    store.close().await;
    let pool = raw(&dir.path().join("arbiter.db")).await;
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT name, scope, secret_hash FROM tokens")
            .fetch_all(&pool)
            .await
            .unwrap();
    tokens::only_the_hash_is_stored(&rows, &token.name, &secret);
}

#[tokio::test]
async fn unknown_revoked_and_malformed_secrets_authenticate_nobody() {
    let (_dir, store) = fresh().await;
    tokens::unknown_revoked_and_malformed_secrets_authenticate_nobody(&store).await;
}

#[tokio::test]
async fn token_names_are_unique_and_known() {
    let (_dir, store) = fresh().await;
    tokens::token_names_are_unique_and_known(&store).await;
}

#[tokio::test]
async fn a_token_cannot_take_over_another_tokens_worker() {
    let (_dir, store) = fresh().await;
    tokens::a_token_cannot_take_over_another_tokens_worker(&store).await;
}

#[tokio::test]
async fn token_names_with_sql_metacharacters_are_plain_names() {
    let (_dir, store) = fresh().await;
    tokens::token_names_with_sql_metacharacters_are_plain_names(&store).await;
}

// Engine artifacts (tests/common/artifacts.rs).

#[tokio::test]
async fn an_artifact_is_stored_once_under_its_hash() {
    let (dir, store) = fresh().await;
    artifacts::an_artifact_is_stored_once_under_its_hash(&store).await;
    let sha = store.put_artifact(b"engine").await.unwrap();
    store.close().await;
    let pool = raw(&dir.path().join("arbiter.db")).await;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM artifacts")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 3, "each binary once");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{}X'00' WHERE sha256 = '{sha}'",
        artifacts::DAMAGE
    )))
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let store = Store::open(&Location::parse(
        &dir.path().join("arbiter.db").display().to_string(),
    ))
    .await
    .unwrap();
    artifacts::a_damaged_artifact_is_refused(&store, &sha).await;
}
