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
async fn run_names_are_unique() {
    common::run_names_are_unique(&store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_are_all_counted() {
    let rate = common::concurrent_commits_are_all_counted(Arc::new(store().await), 8, 200).await;
    eprintln!("postgres: {rate:.0} commits/s (8 tasks x 200 pairs)");
}
