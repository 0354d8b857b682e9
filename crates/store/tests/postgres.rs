//! The same scenarios as tests/sqlite.rs, on a live PostgreSQL.
//!
//! Built with `--features postgres` (`required-features` in Cargo.toml), which the workspace's
//! test command turns on. They use `ARBITER_TEST_PG_URL`, by default the database that
//! `scripts/ci-setup.sh` creates (`postgres://arbiter:arbiter@localhost/arbiter_test`); without
//! a server they fail, as they should. They create runs with unique names and check only
//! those, so the database may be shared with earlier runs.

mod common;

use std::sync::Arc;

use arbiter_store::{Location, Store};

const URL_ENV: &str = "ARBITER_TEST_PG_URL";
/// The database `scripts/ci-setup.sh` creates.
const DEFAULT_URL: &str = "postgres://arbiter:arbiter@localhost/arbiter_test";

async fn store() -> Store {
    let url = std::env::var(URL_ENV).unwrap_or_else(|_| DEFAULT_URL.to_owned());
    Store::open(&Location::parse(&url))
        .await
        .expect("open the PostgreSQL store")
}

#[tokio::test]
async fn runs_pairs_and_games_round_trip() {
    common::runs_pairs_and_games_round_trip(&store().await).await;
}

#[tokio::test]
async fn duplicate_commit_changes_nothing() {
    common::duplicate_commit_changes_nothing(&store().await).await;
}

#[tokio::test]
async fn resume_set_is_exact_and_per_run() {
    common::resume_set_is_exact_and_per_run(&store().await).await;
}

#[tokio::test]
async fn bad_commits_write_nothing() {
    common::bad_commits_write_nothing(&store().await).await;
}

#[tokio::test]
async fn one_game_units_are_kept() {
    common::one_game_units_are_kept(&store().await).await;
}

#[tokio::test]
async fn n_engine_runs_round_trip() {
    let store = store().await;
    common::n_engine_runs_round_trip(&store).await;
}

#[tokio::test]
async fn pairs_read_back_in_commit_order() {
    let store = store().await;
    common::pairs_read_back_in_commit_order(&store).await;
}

#[tokio::test]
async fn bad_lineups_and_keys_are_refused() {
    let store = store().await;
    common::bad_lineups_and_keys_are_refused(&store).await;
}

#[tokio::test]
async fn run_names_are_unique() {
    common::run_names_are_unique(&store().await).await;
}

#[tokio::test]
async fn older_runs_gain_facts_and_links_once() {
    common::older_runs_gain_facts_and_links_once(&store().await).await;
}

#[tokio::test]
async fn tuning_steps_are_kept_exactly_once() {
    common::tuning_steps_are_kept_exactly_once(&store().await).await;
}

#[tokio::test]
async fn a_run_is_played_by_one_holder_at_a_time() {
    common::a_run_is_played_by_one_holder_at_a_time(&store().await).await;
}

#[tokio::test]
async fn a_killed_holder_frees_the_run_at_once() {
    common::hold_lock_if_asked().await;
    let store = store().await;
    let run = store
        .create_run(&common::spec(&common::unique("killed"), 10))
        .await
        .unwrap();
    let url = std::env::var(URL_ENV).unwrap_or_else(|_| DEFAULT_URL.to_owned());
    common::a_killed_holder_frees_the_run_at_once(
        &store,
        "a_killed_holder_frees_the_run_at_once",
        &url,
        run,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_are_all_counted() {
    let rate = common::concurrent_commits_are_all_counted(Arc::new(store().await), 8, 200).await;
    eprintln!("postgres: {rate:.0} commits/s (8 tasks x 200 pairs)");
}

/// A new, empty schema of the test database, as a URL whose connections use it, and a
/// connection to drop it with.
async fn fresh_schema(name: &str) -> (String, sqlx::PgPool, String) {
    let base = std::env::var(URL_ENV).unwrap_or_else(|_| DEFAULT_URL.to_owned());
    let admin = sqlx::PgPool::connect(&base).await.expect("connect");
    let schema = common::unique(name).replace('-', "_");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&admin)
        .await
        .unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
    (url, admin, schema)
}

async fn drop_schema(admin: sqlx::PgPool, schema: &str) {
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&admin)
        .await
        .unwrap();
}

#[test]
fn concurrent_first_opens_of_an_empty_schema_all_succeed() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for round in 0..3 {
        let (url, admin, schema) = runtime.block_on(fresh_schema("concurrent_open"));
        let openers = 6;
        let barrier = Arc::new(std::sync::Barrier::new(openers));
        let threads: Vec<_> = (0..openers)
            .map(|_| {
                let barrier = Arc::clone(&barrier);
                let location = Location::parse(&url);
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
                        Ok::<_, arbiter_store::StoreError>(())
                    })
                })
            })
            .collect();
        let failures: Vec<String> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap().err().map(|e| e.to_string()))
            .collect();
        runtime.block_on(async {
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = $1 ORDER BY 1",
            )
            .bind(&schema)
            .fetch_all(&admin)
            .await
            .unwrap();
            drop_schema(admin, &schema).await;
            assert!(failures.is_empty(), "round {round}: {failures:#?}");
            assert_eq!(
                tables,
                [
                    "_sqlx_migrations",
                    "games",
                    "pairs",
                    "run_engines",
                    "run_pairings",
                    "run_totals",
                    "runs",
                    "tuning_runs",
                    "tuning_steps"
                ],
                "round {round}: the schema in {schema}"
            );
        });
    }
}

#[tokio::test]
async fn a_refused_connection_is_said_once_without_the_password() {
    let url = "postgres://arbiter:not-the-password@localhost/arbiter_test";
    let error = Store::open(&Location::parse(url))
        .await
        .err()
        .expect("a wrong password is refused");
    let chain = format!("{:#}", anyhow::Error::from(error));
    eprintln!("{chain}");
    assert!(
        chain.starts_with("postgres://arbiter:***@localhost/arbiter_test: connecting: "),
        "{chain}"
    );
    assert!(!chain.contains("not-the-password"), "{chain}");
    for fragment in chain.split(": ").filter(|f| f.len() >= 6) {
        assert_eq!(chain.matches(fragment).count(), 1, "{fragment:?}: {chain}");
    }
}

/// A report given an empty database (a new schema) must not make it a store: it is refused,
/// naming the database, and keeps no table; a store that exists is read.
#[tokio::test]
async fn an_empty_database_is_no_existing_store() {
    let (url, admin, schema) = fresh_schema("read_only").await;
    let location = Location::parse(&url);
    let refused = [
        Store::open_read_only(&location).await.err(),
        Store::open_existing(&location).await.err(),
    ];
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1",
    )
    .bind(&schema)
    .fetch_all(&admin)
    .await
    .unwrap();
    let store = Store::open(&location).await.unwrap();
    store.close().await;
    let reopened = Store::open_read_only(&location)
        .await
        .map(|s| s.location().to_owned());
    drop_schema(admin, &schema).await;
    for error in refused {
        let error = error.expect("an error");
        assert!(
            matches!(error, arbiter_store::StoreError::NotArbiterDatabase { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("it is empty"), "{error}");
    }
    assert_eq!(tables, Vec::<String>::new(), "tables were created");
    assert!(reopened.is_ok(), "{reopened:?}");
}
