//! The same scenarios as tests/sqlite.rs, on PostgreSQL.
//!
//! Built with `--features postgres` (`required-features` in Cargo.toml), which the workspace's
//! test command turns on. Each test has a fresh database of its own on a throwaway cluster that
//! this test process starts (`arbiter_pgtest::database`: `initdb` once per test binary, in a
//! temporary directory, on a free loopback port, removed when the process ends); it needs
//! PostgreSQL's server programs, which `scripts/ci-setup.sh` installs, and no running server.
//! `ARBITER_TEST_PG_URL` points the tests at an existing server instead (its user must be
//! allowed to create databases).

use std::sync::Arc;

use crate::common;
use arbiter_store::{Location, Store};

/// A new, empty database for the test `name`, its URL.
fn database(name: &str) -> String {
    arbiter_pgtest::database(name)
        .unwrap_or_else(|e| panic!("a fresh PostgreSQL database for the test: {e}"))
}

/// The store in a new database of its own.
async fn store(name: &str) -> Store {
    Store::open(&Location::parse(&database(name)))
        .await
        .expect("open the PostgreSQL store")
}

#[tokio::test]
async fn runs_pairs_and_games_round_trip() {
    common::runs_pairs_and_games_round_trip(&store("runs_pairs_and_games_round_trip").await).await;
}

#[tokio::test]
async fn duplicate_commit_changes_nothing() {
    common::duplicate_commit_changes_nothing(&store("duplicate_commit_changes_nothing").await)
        .await;
}

#[tokio::test]
async fn resume_set_is_exact_and_per_run() {
    common::resume_set_is_exact_and_per_run(&store("resume_set_is_exact_and_per_run").await).await;
}

#[tokio::test]
async fn bad_commits_write_nothing() {
    common::bad_commits_write_nothing(&store("bad_commits_write_nothing").await).await;
}

#[tokio::test]
async fn one_game_units_are_kept() {
    common::one_game_units_are_kept(&store("one_game_units_are_kept").await).await;
}

#[tokio::test]
async fn n_engine_runs_round_trip() {
    let store = store("n_engine_runs_round_trip").await;
    common::n_engine_runs_round_trip(&store).await;
}

#[tokio::test]
async fn pairs_read_back_in_commit_order() {
    let store = store("pairs_read_back_in_commit_order").await;
    common::pairs_read_back_in_commit_order(&store).await;
}

#[tokio::test]
async fn bad_lineups_and_keys_are_refused() {
    let store = store("bad_lineups_and_keys_are_refused").await;
    common::bad_lineups_and_keys_are_refused(&store).await;
}

#[tokio::test]
async fn run_names_are_unique() {
    common::run_names_are_unique(&store("run_names_are_unique").await).await;
}

#[tokio::test]
async fn older_runs_gain_facts_and_links_once() {
    common::older_runs_gain_facts_and_links_once(
        &store("older_runs_gain_facts_and_links_once").await,
    )
    .await;
}

#[tokio::test]
async fn tuning_steps_are_kept_exactly_once() {
    common::tuning_steps_are_kept_exactly_once(&store("tuning_steps_are_kept_exactly_once").await)
        .await;
}

#[tokio::test]
async fn a_run_is_played_by_one_holder_at_a_time() {
    common::a_run_is_played_by_one_holder_at_a_time(
        &store("a_run_is_played_by_one_holder_at_a_time").await,
    )
    .await;
}

#[tokio::test]
async fn a_killed_holder_frees_the_run_at_once() {
    common::hold_lock_if_asked().await;
    let url = database("a_killed_holder_frees_the_run_at_once");
    let store = Store::open(&Location::parse(&url)).await.unwrap();
    let run = store
        .create_run(&common::spec(&common::unique("killed"), 10))
        .await
        .unwrap();
    common::a_killed_holder_frees_the_run_at_once(
        &store,
        "postgres::a_killed_holder_frees_the_run_at_once",
        &url,
        run,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_are_all_counted() {
    let rate = common::concurrent_commits_are_all_counted(
        Arc::new(store("concurrent_commits_are_all_counted").await),
        8,
        200,
    )
    .await;
    eprintln!("postgres: {rate:.0} commits/s (8 tasks x 200 pairs)");
}

#[test]
fn concurrent_first_opens_of_an_empty_database_all_succeed() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for round in 0..3 {
        let url = database("concurrent_open");
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
            let admin = sqlx::PgPool::connect(&url).await.expect("connect");
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = 'public' ORDER BY 1",
            )
            .fetch_all(&admin)
            .await
            .unwrap();
            admin.close().await;
            assert!(failures.is_empty(), "round {round}: {failures:#?}");
            assert_eq!(
                tables,
                [
                    "_sqlx_migrations",
                    "artifacts",
                    "batches",
                    "games",
                    "pairs",
                    "run_engines",
                    "run_files",
                    "run_pairings",
                    "run_prefix",
                    "run_totals",
                    "runs",
                    "tokens",
                    "tuning_runs",
                    "tuning_steps",
                    "workers"
                ],
                "round {round}: the tables of {url}"
            );
        });
    }
}

#[tokio::test]
async fn a_refused_connection_is_said_once_without_the_password() {
    let url = arbiter_pgtest::url::with_password(&database("refused"), "not-the-password");
    let error = Store::open(&Location::parse(&url))
        .await
        .err()
        .expect("a wrong password is refused");
    let chain = format!("{:#}", anyhow::Error::from(error));
    eprintln!("{chain}");
    let masked = arbiter_pgtest::url::with_password(&url, "***");
    assert!(
        chain.starts_with(&format!("{masked}: connecting: ")),
        "{chain}"
    );
    assert!(!chain.contains("not-the-password"), "{chain}");
    for fragment in chain.split(": ").filter(|f| f.len() >= 6) {
        assert_eq!(chain.matches(fragment).count(), 1, "{fragment:?}: {chain}");
    }
}

/// A report given an empty database must not make it a store: it is refused,
/// naming the database, and keeps no table; a store that exists is read.
#[tokio::test]
async fn an_empty_database_is_no_existing_store() {
    let url = database("read_only");
    let admin = sqlx::PgPool::connect(&url).await.expect("connect");
    let location = Location::parse(&url);
    let refused = [
        Store::open_read_only(&location).await.err(),
        Store::open_existing(&location).await.err(),
    ];
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_all(&admin)
    .await
    .unwrap();
    let store = Store::open(&location).await.unwrap();
    store.close().await;
    let reopened = Store::open_read_only(&location)
        .await
        .map(|s| s.location().to_owned());
    admin.close().await;
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

// The fleet's scenarios (tests/common/fleet.rs), with `FOR UPDATE SKIP LOCKED` claims.

#[tokio::test]
async fn a_queued_run_is_played_in_batches_exactly_once() {
    common::fleet::a_queued_run_is_played_in_batches_exactly_once(
        &store("a_queued_run_is_played_in_batches_exactly_once").await,
    )
    .await;
}

#[tokio::test]
async fn an_expired_lease_goes_to_the_next_claim() {
    common::fleet::an_expired_lease_goes_to_the_next_claim(
        &store("an_expired_lease_goes_to_the_next_claim").await,
    )
    .await;
}

#[tokio::test]
async fn a_released_batch_is_leased_again() {
    common::fleet::a_released_batch_is_leased_again(
        &store("a_released_batch_is_leased_again").await,
    )
    .await;
}

#[tokio::test]
async fn the_verdict_is_judged_on_the_prefix() {
    common::fleet::the_verdict_is_judged_on_the_prefix(
        &store("the_verdict_is_judged_on_the_prefix").await,
    )
    .await;
}

#[tokio::test]
async fn a_stopped_run_reaches_its_workers() {
    common::fleet::a_stopped_run_reaches_its_workers(
        &store("a_stopped_run_reaches_its_workers").await,
    )
    .await;
}

#[tokio::test]
async fn bad_batches_count_nothing() {
    common::fleet::bad_batches_count_nothing(&store("bad_batches_count_nothing").await).await;
}

#[tokio::test]
async fn priorities_limits_and_exclusions_choose_the_batch() {
    common::fleet::priorities_limits_and_exclusions_choose_the_batch(
        &store("priorities_limits_and_exclusions_choose_the_batch").await,
    )
    .await;
}

#[tokio::test]
async fn files_and_signatures_are_kept_with_the_run() {
    common::fleet::files_and_signatures_are_kept_with_the_run(
        &store("files_and_signatures_are_kept_with_the_run").await,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_get_distinct_batches() {
    common::fleet::concurrent_claims_get_distinct_batches(Arc::new(
        store("concurrent_claims_get_distinct_batches").await,
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submits_keep_the_commit_order_and_the_prefix() {
    common::fleet::concurrent_submits_keep_the_commit_order_and_the_prefix(Arc::new(
        store("concurrent_submits_keep_the_commit_order_and_the_prefix").await,
    ))
    .await;
}

#[tokio::test]
async fn a_pair_counted_before_its_batch_counts_once() {
    common::fleet::a_pair_counted_before_its_batch_counts_once(
        &store("a_pair_counted_before_its_batch_counts_once").await,
    )
    .await;
}

#[tokio::test]
async fn a_long_prefix_is_walked_page_by_page() {
    common::fleet::a_long_prefix_is_walked_page_by_page(
        &store("a_long_prefix_is_walked_page_by_page").await,
    )
    .await;
}

#[tokio::test]
async fn names_with_sql_metacharacters_are_plain_names() {
    common::fleet::names_with_sql_metacharacters_are_plain_names(
        &store("names_with_sql_metacharacters_are_plain_names").await,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_workers_reach_the_sequential_verdict() {
    common::fleet::many_workers_reach_the_sequential_verdict(Arc::new(
        store("many_workers_reach_the_sequential_verdict").await,
    ))
    .await;
}

#[tokio::test]
async fn a_batch_whose_advance_never_ran_is_totalled_by_the_next() {
    common::fleet::a_batch_whose_advance_never_ran_is_totalled_by_the_next(
        &store("a_batch_whose_advance_never_ran_is_totalled_by_the_next").await,
    )
    .await;
}

#[tokio::test]
async fn a_queued_tuning_run_applies_each_batch_once() {
    common::tuning_fleet::a_queued_tuning_run_applies_each_batch_once(
        &store("a_queued_tuning_run_applies_each_batch_once").await,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_tuning_submits_apply_every_update_once() {
    common::tuning_fleet::concurrent_tuning_submits_apply_every_update_once(Arc::new(
        store("concurrent_tuning_submits_apply_every_update_once").await,
    ))
    .await;
}

// API tokens (tests/common/tokens.rs).

#[tokio::test]
async fn a_token_is_created_authenticated_and_revoked() {
    let url = database("a_token_is_created_authenticated_and_revoked");
    let store = Store::open(&Location::parse(&url)).await.unwrap();
    let (token, secret) =
        common::tokens::a_token_is_created_authenticated_and_revoked(&store).await;
    store.close().await;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT name, scope, secret_hash FROM tokens")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    common::tokens::only_the_hash_is_stored(&rows, &token.name, &secret);
}

#[tokio::test]
async fn unknown_revoked_and_malformed_secrets_authenticate_nobody() {
    common::tokens::unknown_revoked_and_malformed_secrets_authenticate_nobody(
        &store("unknown_revoked_and_malformed_secrets_authenticate_nobody").await,
    )
    .await;
}

#[tokio::test]
async fn token_names_are_unique_and_known() {
    common::tokens::token_names_are_unique_and_known(
        &store("token_names_are_unique_and_known").await,
    )
    .await;
}

#[tokio::test]
async fn a_token_cannot_take_over_another_tokens_worker() {
    common::tokens::a_token_cannot_take_over_another_tokens_worker(
        &store("a_token_cannot_take_over_another_tokens_worker").await,
    )
    .await;
}

#[tokio::test]
async fn token_names_with_sql_metacharacters_are_plain_names() {
    common::tokens::token_names_with_sql_metacharacters_are_plain_names(
        &store("token_names_with_sql_metacharacters_are_plain_names").await,
    )
    .await;
}

#[tokio::test]
async fn an_artifact_is_stored_once_under_its_hash() {
    let url = database("an_artifact_is_stored_once_under_its_hash");
    let store = Store::open(&Location::parse(&url)).await.unwrap();
    common::artifacts::an_artifact_is_stored_once_under_its_hash(&store).await;
    let sha = store.put_artifact(b"engine").await.unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM artifacts")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 3, "each binary once");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{}'\\x00'::bytea WHERE sha256 = '{sha}'",
        common::artifacts::DAMAGE
    )))
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    common::artifacts::a_damaged_artifact_is_refused(&store, &sha).await;
}
