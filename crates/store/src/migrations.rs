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
    (
        3,
        "engines and pairings",
        include_str!("../migrations/sqlite/0003_engines_and_pairings.sql"),
    ),
    (
        4,
        "tuning runs",
        include_str!("../migrations/sqlite/0004_tuning_runs.sql"),
    ),
    (
        5,
        "one game units",
        include_str!("../migrations/sqlite/0005_one_game_units.sql"),
    ),
    (
        6,
        "run facts",
        include_str!("../migrations/sqlite/0006_run_facts.sql"),
    ),
    (
        7,
        "fleet",
        include_str!("../migrations/sqlite/0007_fleet.sql"),
    ),
    (
        8,
        "deferred totals",
        include_str!("../migrations/sqlite/0008_deferred_totals.sql"),
    ),
    (
        9,
        "tokens",
        include_str!("../migrations/sqlite/0009_tokens.sql"),
    ),
    (
        10,
        "artifacts",
        include_str!("../migrations/sqlite/0010_artifacts.sql"),
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
    (
        3,
        "engines and pairings",
        include_str!("../migrations/postgres/0003_engines_and_pairings.sql"),
    ),
    (
        4,
        "tuning runs",
        include_str!("../migrations/postgres/0004_tuning_runs.sql"),
    ),
    (
        5,
        "one game units",
        include_str!("../migrations/postgres/0005_one_game_units.sql"),
    ),
    (
        6,
        "run facts",
        include_str!("../migrations/postgres/0006_run_facts.sql"),
    ),
    (
        7,
        "fleet",
        include_str!("../migrations/postgres/0007_fleet.sql"),
    ),
    (
        8,
        "deferred totals",
        include_str!("../migrations/postgres/0008_deferred_totals.sql"),
    ),
    (
        9,
        "tokens",
        include_str!("../migrations/postgres/0009_tokens.sql"),
    ),
    (
        10,
        "artifacts",
        include_str!("../migrations/postgres/0010_artifacts.sql"),
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
        assert_eq!(latest(SQLITE), 10);
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
        assert_eq!(versions, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }

    /// Rows as the release before migration 3 wrote them (schema 2): a finished match whose
    /// pairs were committed out of index order, two of them in the same millisecond, and a
    /// running match with pairs 4 and 1.
    fn schema_2_rows() -> String {
        // (run, pair index, game scores of the first engine in half points, committed at ms)
        let pairs: [(&str, i64, [i64; 2], i64); 5] = [
            ("old-finished", 0, [2, 1], 1_000),
            ("old-finished", 1, [0, 0], 2_000),
            ("old-finished", 2, [1, 1], 1_000),
            ("old-running", 4, [2, 2], 500),
            ("old-running", 1, [2, 0], 700),
        ];
        let mut sql = String::from(
            "INSERT INTO runs (name, seed, config, first_engine, second_engine, pairs_planned, \
             state, verdict, created_at_ms, updated_at_ms) VALUES \
             ('old-finished', 7, 'cfg', 'dev', 'base', 3, 'finished', 'H1', 0, 2000), \
             ('old-running', -1, 'cfg', 'sf', 'eth', 10, 'running', NULL, 0, 700);\n\
             INSERT INTO run_totals (run_id, pairs, wins, draws, losses, penta_ll, penta_ld, \
             penta_dd, penta_dw, penta_ww) VALUES \
             ((SELECT id FROM runs WHERE name = 'old-finished'), 3, 1, 3, 2, 1, 0, 1, 1, 0), \
             ((SELECT id FROM runs WHERE name = 'old-running'), 2, 3, 0, 1, 0, 0, 1, 0, 1);\n",
        );
        for (run, k, scores, at) in pairs {
            let count = |score| scores.iter().filter(|&&s| s == score).count();
            let run_id = format!("(SELECT id FROM runs WHERE name = '{run}')");
            sql += &format!(
                "INSERT INTO pairs (run_id, pair_index, wins, draws, losses, penta, \
                 committed_at_ms) VALUES ({run_id}, {k}, {}, {}, {}, {}, {at});\n",
                count(2),
                count(1),
                count(0),
                scores[0] + scores[1]
            );
            for (g, score) in scores.into_iter().enumerate() {
                let result = match (score, g) {
                    (1, _) => "1/2-1/2",
                    (2, 0) | (0, 1) => "1-0",
                    _ => "0-1",
                };
                sql += &format!(
                    "INSERT INTO games (run_id, pair_index, game_index, game_number, white, \
                     black, result, termination, plies, opening_index, opening_fen, pgn, json, \
                     started_at_ms, duration_ms) VALUES ({run_id}, {k}, {g}, {}, 'w', 'b', \
                     '{result}', 'normal', 40, {k}, 'fen', 'pgn {run} {k} {g}', '{{}}', {at}, 5);\n",
                    2 * k + g as i64 + 1
                );
            }
        }
        sql
    }

    /// A store opened on a database of [`schema_2_rows`] reads it as one-pairing runs, with
    /// the pairs in the order they were committed, and the running run takes new pairs.
    async fn check_the_upgrade(store: &crate::Store) {
        use crate::{Committed, PairKey, PairTally, Pairing, RunOutcome, RunState, Totals};
        use futures_util::TryStreamExt;

        let key = |index| PairKey { pairing: 0, index };
        let finished = store
            .find_run_by_name("old-finished")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(finished.spec.engines, ["dev", "base"]);
        assert_eq!(
            finished.spec.pairings,
            [Pairing {
                first: 0,
                second: 1,
                pairs_planned: 3
            }]
        );
        assert_eq!(finished.spec.seed, 7);
        assert_eq!(
            finished.state,
            RunState::Finished {
                verdict: RunOutcome::H1
            }
        );
        let totals = Totals {
            pairs: 3,
            wins: 1,
            draws: 3,
            losses: 2,
            pentanomial: [1, 0, 1, 1, 0],
        };
        assert_eq!(store.totals(finished.id).await.unwrap(), totals);
        assert_eq!(store.pairing_totals(finished.id).await.unwrap(), [totals]);
        assert_eq!(
            store.committed_pairs(finished.id).await.unwrap(),
            [0, 1, 2].map(key).into()
        );
        let order: Vec<_> = store
            .pairs_in_commit_order(finished.id)
            .try_collect()
            .await
            .unwrap();
        // Pairs 0 and 2 share a millisecond: the pair index breaks the tie.
        assert_eq!(
            order
                .iter()
                .map(|p| (p.key, p.sequence))
                .collect::<Vec<_>>(),
            [(key(0), 1), (key(2), 2), (key(1), 3)]
        );
        assert_eq!(
            order[0].tally,
            PairTally {
                wins: 1,
                draws: 1,
                losses: 0,
                penta: 3
            }
        );
        let games: Vec<_> = store.games(finished.id).try_collect().await.unwrap();
        assert_eq!(
            games
                .iter()
                .map(|g| (g.pairing, g.pair_index, g.game_index, g.game.pgn.as_str()))
                .collect::<Vec<_>>(),
            [
                (0, 0, 0, "pgn old-finished 0 0"),
                (0, 0, 1, "pgn old-finished 0 1"),
                (0, 1, 0, "pgn old-finished 1 0"),
                (0, 1, 1, "pgn old-finished 1 1"),
                (0, 2, 0, "pgn old-finished 2 0"),
                (0, 2, 1, "pgn old-finished 2 1"),
            ]
        );

        let running = store
            .find_run_by_name("old-running")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(running.spec.engines, ["sf", "eth"]);
        assert_eq!(running.spec.seed, u64::MAX);
        assert_eq!(running.pairs_planned(), 10);
        assert_eq!(running.state, RunState::Running);
        assert_eq!(
            store.committed_pairs(running.id).await.unwrap(),
            [1, 4].map(key).into()
        );
        // It resumes: a new pair is counted, numbered after the old ones; an old one is a replay.
        let mut pair = crate::PairRecord {
            run: running.id,
            key: key(7),
            tally: PairTally {
                wins: 0,
                draws: 2,
                losses: 0,
                penta: 2,
            },
            games: vec![games[0].game.clone(), games[1].game.clone()],
        };
        pair.games[0].game_number = 15;
        pair.games[1].game_number = 16;
        assert_eq!(store.commit_pair(&pair).await.unwrap(), Committed::Inserted);
        pair.key = key(4);
        assert_eq!(
            store.commit_pair(&pair).await.unwrap(),
            Committed::AlreadyPresent
        );
        let order: Vec<_> = store
            .pairs_in_commit_order(running.id)
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            order
                .iter()
                .map(|p| (p.key, p.sequence))
                .collect::<Vec<_>>(),
            [(key(4), 1), (key(1), 2), (key(7), 3)]
        );
        let totals = Totals {
            pairs: 3,
            wins: 3,
            draws: 2,
            losses: 1,
            pentanomial: [0, 0, 2, 0, 1],
        };
        assert_eq!(store.totals(running.id).await.unwrap(), totals);
        assert_eq!(store.pairing_totals(running.id).await.unwrap(), [totals]);
        let games: Vec<_> = store.games(running.id).try_collect().await.unwrap();
        assert_eq!(
            games.iter().map(|g| g.game.game_number).collect::<Vec<_>>(),
            [3, 4, 9, 10, 15, 16]
        );

        // And new runs of any size are created beside the old ones.
        let spec = crate::RunSpec {
            name: "new-gauntlet".into(),
            seed: 1,
            config: String::new(),
            engines: ["a", "b", "c"].map(String::from).to_vec(),
            pairings: vec![
                Pairing {
                    first: 0,
                    second: 1,
                    pairs_planned: 2,
                },
                Pairing {
                    first: 0,
                    second: 2,
                    pairs_planned: 2,
                },
            ],
            facts: Some(crate::RunFacts {
                version: crate::RunFacts::VERSION,
                kind: crate::RunKind::Gauntlet,
                model: crate::SampleModel::Pentanomial,
                sprt: None,
                games_planned: 8,
                clocks: vec![None; 3],
            }),
            confirms: Some(finished.id),
        };
        let new = store.create_run(&spec).await.unwrap();
        assert_eq!(store.run(new).await.unwrap().spec, spec);
        // The old runs have no facts and confirm nothing; the link is found from its target.
        assert_eq!((finished.spec.facts, finished.spec.confirms), (None, None));
        let confirming: Vec<_> = store
            .confirmations(finished.id)
            .await
            .unwrap()
            .into_iter()
            .map(|run| run.id)
            .collect();
        assert_eq!(confirming, [new]);
    }

    /// A file written by the current release (schema 2: migrations 1 and 2, a finished and a
    /// running match with pairs and games) upgrades in place, also when a report opens it to
    /// read (it reads only the current schema).
    #[tokio::test]
    async fn a_file_of_schema_2_upgrades_to_runs_of_n_engines() {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
        use sqlx::Executor;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema2.db");
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true)
                    .foreign_keys(true),
            )
            .await
            .unwrap();
        migrator(&SQLITE[..2]).run(&pool).await.unwrap();
        pool.execute(sqlx::AssertSqlSafe(schema_2_rows()))
            .await
            .unwrap();
        pool.close().await;

        let location = crate::Location::parse(&path.display().to_string());
        let store = crate::Store::open_read_only(&location).await.unwrap();
        check_the_upgrade(&store).await;
        store.close().await;

        let pool = SqlitePoolOptions::new()
            .connect_with(SqliteConnectOptions::new().filename(&path))
            .await
            .unwrap();
        let versions: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(versions, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        // The rebuilt tables keep their references: the file passes SQLite's own check.
        let broken: Vec<String> =
            sqlx::query_scalar("SELECT \"table\" FROM pragma_foreign_key_check")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert!(broken.is_empty(), "{broken:?}");
        let old_columns: (String, String, i64) = sqlx::query_as(
            "SELECT first_engine, second_engine, pairs_planned FROM runs WHERE name = 'new-gauntlet'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(old_columns, ("a".into(), "b".into(), 4));
    }

    /// The same upgrade on PostgreSQL, in a database of its own (on the test process's
    /// throwaway cluster: see tests/postgres.rs, a module of the `store` test binary).
    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn a_postgres_database_of_schema_2_upgrades_to_runs_of_n_engines() {
        use sqlx::Executor;

        let url = arbiter_pgtest::database("upgrade")
            .unwrap_or_else(|e| panic!("a fresh PostgreSQL database: {e}"));
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        migrator(&POSTGRES[..2]).run(&pool).await.unwrap();
        pool.execute(sqlx::AssertSqlSafe(schema_2_rows()))
            .await
            .unwrap();
        pool.close().await;
        let store = crate::Store::open(&crate::Location::parse(&url))
            .await
            .unwrap();
        check_the_upgrade(&store).await;
        store.close().await;
    }

    /// A worker as schema 8 stored it (registered on the database directly).
    const SCHEMA_8_WORKER: &str = "INSERT INTO workers (name, host, cores, version, \
        first_contact_ms, last_contact_ms) VALUES ('old-worker', 'old-host', 4, '0.1', 1, 2)";

    /// A store of schema 8 with a worker in it, opened by this build: its worker is bound to no
    /// token, so no token can take it over, and tokens are created beside it.
    async fn check_the_token_upgrade(store: &crate::Store) {
        use crate::{TokenScope, WorkerInfo};

        let workers = store.workers().await.unwrap();
        assert_eq!(workers.len(), 1);
        let old = &workers[0];
        assert_eq!(
            (
                old.info.name.as_str(),
                old.info.host.as_str(),
                old.last_contact_ms
            ),
            ("old-worker", "old-host", 2)
        );
        assert_eq!(store.worker_token(old.id).await.unwrap(), None);
        let (token, secret) = store
            .create_token("first", TokenScope::Worker)
            .await
            .unwrap();
        assert_eq!(
            store.authenticate(&secret).await.unwrap(),
            Some(token.clone())
        );
        let claim = |name: &str| WorkerInfo {
            name: name.into(),
            host: "new-host".into(),
            cores: 1,
            version: "new".into(),
        };
        assert_eq!(
            store
                .register_worker_for(&claim("old-worker"), token.id)
                .await
                .unwrap(),
            None
        );
        assert_eq!(store.workers().await.unwrap()[0].info.host, "old-host");
        let new = store
            .register_worker_for(&claim("new-worker"), token.id)
            .await
            .unwrap()
            .expect("a new worker");
        assert_eq!(store.worker_token(new).await.unwrap(), Some(token.id));
    }

    #[tokio::test]
    async fn a_file_of_schema_8_upgrades_to_tokens() {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
        use sqlx::Executor;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema8.db");
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true)
                    .foreign_keys(true),
            )
            .await
            .unwrap();
        migrator(&SQLITE[..8]).run(&pool).await.unwrap();
        pool.execute(SCHEMA_8_WORKER).await.unwrap();
        pool.close().await;

        let store = crate::Store::open(&crate::Location::parse(&path.display().to_string()))
            .await
            .unwrap();
        check_the_token_upgrade(&store).await;
        store.close().await;

        let pool = SqlitePoolOptions::new()
            .connect_with(SqliteConnectOptions::new().filename(&path))
            .await
            .unwrap();
        let broken: Vec<String> =
            sqlx::query_scalar("SELECT \"table\" FROM pragma_foreign_key_check")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert!(broken.is_empty(), "{broken:?}");
        // The database refuses a scope arbiter never writes.
        let refused = pool
            .execute(
                "INSERT INTO tokens (name, scope, secret_hash, created_at_ms) \
                 VALUES ('x', 'root', 'h', 0)",
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("CHECK constraint failed"), "{refused}");
    }

    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn a_postgres_database_of_schema_8_upgrades_to_tokens() {
        use sqlx::Executor;

        let url = arbiter_pgtest::database("upgrade_tokens")
            .unwrap_or_else(|e| panic!("a fresh PostgreSQL database: {e}"));
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        migrator(&POSTGRES[..8]).run(&pool).await.unwrap();
        pool.execute(SCHEMA_8_WORKER).await.unwrap();
        pool.close().await;
        let store = crate::Store::open(&crate::Location::parse(&url))
            .await
            .unwrap();
        check_the_token_upgrade(&store).await;
        store.close().await;
    }
}
