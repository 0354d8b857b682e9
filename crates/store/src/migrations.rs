//! The schema migrations of each dialect, compiled into the binary.
//!
//! sqlx's `migrate!` macro would embed them too, but it needs sqlx's macros; listing them here
//! keeps the build macro-free and lets a test check that both dialects have the same versions
//! and that no file in `migrations/` is forgotten.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::SqlSafeStr;

/// One migration: version, description, SQL.
pub(crate) type Source = (i64, &'static str, &'static str);

/// SQLite migrations, oldest first.
pub(crate) const SQLITE: &[Source] = &[
    (
        1,
        "runs pairs games",
        include_str!("../migrations/sqlite/0001_runs_pairs_games.sql"),
    ),
    (
        2,
        "run outcome check",
        include_str!("../migrations/sqlite/0002_run_outcome_check.sql"),
    ),
];

/// PostgreSQL migrations, oldest first: the same versions as [`SQLITE`].
#[cfg_attr(
    not(feature = "postgres"),
    allow(dead_code, reason = "used by the PostgreSQL backend only")
)]
pub(crate) const POSTGRES: &[Source] = &[
    (
        1,
        "runs pairs games",
        include_str!("../migrations/postgres/0001_runs_pairs_games.sql"),
    ),
    (
        2,
        "run outcome check",
        include_str!("../migrations/postgres/0002_run_outcome_check.sql"),
    ),
];

/// The newest schema version this build knows.
pub(crate) fn latest(sources: &[Source]) -> i64 {
    sources
        .iter()
        .map(|&(version, ..)| version)
        .max()
        .unwrap_or(0)
}

/// A migrator over `sources`. Each migration runs in its own transaction, under the database's
/// migration lock (an advisory lock on PostgreSQL, so coordinator replicas that start together
/// apply it once).
pub(crate) fn migrator(sources: &[Source]) -> Migrator {
    Migrator::with_migrations(
        sources
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn files_in(dialect: &str) -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(dialect);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn check(dialect: &str, sources: &[Source]) {
        let files = files_in(dialect);
        assert_eq!(
            files.len(),
            sources.len(),
            "{dialect}: files {files:?} vs the list in migrations.rs"
        );
        for (file, &(version, _, sql)) in files.iter().zip(sources) {
            assert!(
                file.starts_with(&format!("{version:04}_")),
                "{dialect}: {file} is not version {version}"
            );
            let on_disk = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("migrations")
                    .join(dialect)
                    .join(file),
            )
            .unwrap();
            assert_eq!(
                on_disk, sql,
                "{dialect}: {file} differs from what is embedded"
            );
        }
    }

    #[test]
    fn every_migration_file_is_embedded_in_order() {
        check("sqlite", SQLITE);
        check("postgres", POSTGRES);
    }

    #[test]
    fn dialects_have_the_same_versions() {
        let versions = |s: &[Source]| s.iter().map(|&(v, d, _)| (v, d)).collect::<Vec<_>>();
        assert_eq!(versions(SQLITE), versions(POSTGRES));
        assert_eq!(latest(SQLITE), 2);
    }

    /// A file written by the release before migration 2 (the schema of migration 1 only, with
    /// a finished run in it) upgrades in place when a new arbiter opens it: its run reads back
    /// with a typed verdict, and from then on the database refuses a verdict arbiter never
    /// writes.
    #[tokio::test]
    async fn a_file_of_the_previous_schema_upgrades_in_place() {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
        use sqlx::Executor;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true),
            )
            .await
            .unwrap();
        migrator(&SQLITE[..1]).run(&pool).await.unwrap();
        pool.execute(
            "INSERT INTO runs (name, seed, config, first_engine, second_engine, pairs_planned, \
             state, verdict, created_at_ms, updated_at_ms) \
             VALUES ('old', 7, '', 'dev', 'base', 10, 'finished', 'H1', 0, 0); \
             INSERT INTO run_totals (run_id, pairs, wins, draws, losses, penta_dw) \
             VALUES (1, 1, 1, 1, 0, 1);",
        )
        .await
        .unwrap();
        pool.close().await;

        let store = crate::Store::open(&crate::Location::parse(&path.display().to_string()))
            .await
            .unwrap();
        let run = store.find_run_by_name("old").await.unwrap().unwrap();
        assert_eq!(
            run.state,
            crate::RunState::Finished {
                verdict: crate::RunOutcome::H1
            }
        );
        assert_eq!(store.totals(run.id).await.unwrap().wins, 1);
        store.close().await;

        let pool = SqlitePoolOptions::new()
            .connect_with(SqliteConnectOptions::new().filename(&path))
            .await
            .unwrap();
        let refused = pool
            .execute("UPDATE runs SET verdict = 'maybe' WHERE id = 1")
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("runs.verdict must be"), "{refused}");
        let versions: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(versions, [1, 2]);
    }
}
