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
pub(crate) const SQLITE: &[Source] = &[(
    1,
    "runs pairs games",
    include_str!("../migrations/sqlite/0001_runs_pairs_games.sql"),
)];

/// PostgreSQL migrations, oldest first: the same versions as [`SQLITE`].
#[cfg_attr(
    not(feature = "postgres"),
    allow(dead_code, reason = "used by the PostgreSQL backend only")
)]
pub(crate) const POSTGRES: &[Source] = &[(
    1,
    "runs pairs games",
    include_str!("../migrations/postgres/0001_runs_pairs_games.sql"),
)];

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
        assert_eq!(latest(SQLITE), 1);
    }
}
