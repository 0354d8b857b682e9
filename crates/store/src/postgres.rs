//! The PostgreSQL backend, the system of record of distributed runs.
//!
//! PostgreSQL takes concurrent writers itself (row locks on the run's rows order them), so one
//! pool both reads and writes.

use std::sync::Arc;

use sqlx::error::DatabaseError;
use sqlx::postgres::{PgConnection, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, Postgres, Row};

use crate::error::{Result, StoreError};
use crate::migrations::{self, Source};
use crate::model::RunId;
use crate::repo::{Dialect, Repo, Schema};
use crate::run_lock::{this_process, Held, RunLock};

impl Dialect for Postgres {
    const MIGRATIONS: &'static [Source] = migrations::POSTGRES;
    // `table_name` is of the domain `sql_identifier`; the cast gives plain text to decode.
    const LIST_TABLES: &'static str = "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'";
    const BEGIN_WRITE: &'static str = "BEGIN";
    // One round trip: a simple query may hold several statements.
    const BEGIN_LEASE: &'static str = "BEGIN; SET LOCAL synchronous_commit TO OFF";
    // The statement's start, not clock_timestamp(): a stable value may bound an index scan
    // (a claim's search for lapsed leases), a volatile one only filters every row the scan
    // finds.
    const NOW_MS: &'static str = "CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS BIGINT)";
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const SKIP_LOCKED: &'static str = " FOR UPDATE OF b SKIP LOCKED";
    const ADVANCE_LOCK: &'static str = " FOR UPDATE OF t, p SKIP LOCKED FOR SHARE OF r";
    const SUBMIT_LOCK: &'static str = " FOR UPDATE OF b FOR SHARE OF r";
}

/// Connections per process; a worker or the coordinator commits from a few tasks at a time.
const CONNECTIONS: u32 = 8;

/// Connects to `url` and brings the schema up to date.
pub(crate) async fn open(url: &str, location: Arc<str>) -> Result<Repo<Postgres>> {
    let repo = connect(url, location).await?;
    if let Err(e) = repo.prepare().await {
        repo.close().await;
        return Err(e);
    }
    Ok(repo)
}

/// The pool that reads and writes, before the schema is looked at.
async fn connect(url: &str, location: Arc<str>) -> Result<Repo<Postgres>> {
    let pool = PgPoolOptions::new()
        .max_connections(CONNECTIONS)
        .connect(url)
        .await
        .map_err(|cause| StoreError::Database {
            location: location.to_string(),
            operation: "connecting".into(),
            cause,
        })?;
    Ok(Repo::new(pool.clone(), pool, location))
}

/// Connects to `url` to read an existing store: a database without arbiter's tables is
/// [`StoreError::NotArbiterDatabase`] and is left as it was; an older arbiter's schema is
/// brought up to date, as every command does.
pub(crate) async fn open_existing(url: &str, location: Arc<str>) -> Result<Repo<Postgres>> {
    let repo = connect(url, location).await?;
    let schema = match repo.check_existing().await {
        Ok(schema) => schema,
        Err(e) => {
            repo.close().await;
            return Err(e);
        }
    };
    if schema == Schema::Older {
        repo.prepare().await?;
    }
    Ok(repo)
}

/// The first key of arbiter's run locks (`pg_advisory_lock(int, int)`; the second key is the
/// run): "Arbi" in ASCII. The two-key form is a lock space apart from the one-bigint-key form
/// sqlx's migration lock uses.
const RUN_LOCK_CLASS: i32 = 0x4172_6269;

/// How long a lock attempt waits for the holder's session to end before refusing.
///
/// When a holder is killed, its socket closes at once, but the server ends the session (and
/// frees the lock) a moment later; a run restarted immediately must not be refused by that
/// moment. A run really in play is refused after this wait.
const RUN_LOCK_GRACE: &str = "SET lock_timeout = '3s'";

/// PostgreSQL's `lock_not_available`: `lock_timeout` expired.
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// The connection that holds a run's advisory lock: its own, outside the pool, so that the lock
/// lives exactly as long as the guard (a pooled connection would go back to the pool still
/// holding it) and ends with the session when the process dies.
pub(crate) struct LockSession {
    connection: Option<PgConnection>,
    key: i32,
}

impl std::fmt::Debug for LockSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pg_advisory_lock({RUN_LOCK_CLASS}, {})", self.key)
    }
}

impl Drop for LockSession {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        // A clean goodbye ends the session (and the lock) without an "unexpected EOF" in the
        // server's log; without a runtime, dropping the connection closes its socket, which
        // ends the session too.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = connection.close().await;
            });
        }
    }
}

/// Takes the run's advisory lock on a connection of its own, named after this process so that
/// a refused process can say who holds the run.
pub(crate) async fn lock_run(repo: &Repo<Postgres>, run: RunId) -> Result<RunLock> {
    repo.run(run).await?;
    let operation = || format!("locking run {run}");
    let options = repo
        .writer()
        .connect_options()
        .as_ref()
        .clone()
        .application_name(&format!("arbiter {}", this_process()));
    let mut connection = options
        .connect()
        .await
        .map_err(|e| repo.fail(operation(), e))?;
    sqlx::query(RUN_LOCK_GRACE)
        .execute(&mut connection)
        .await
        .map_err(|e| repo.fail(operation(), e))?;
    let key = run_key(run);
    let locked = sqlx::query("SELECT pg_advisory_lock($1, $2)")
        .bind(RUN_LOCK_CLASS)
        .bind(key)
        .execute(&mut connection)
        .await;
    match locked {
        Ok(_) => Ok(RunLock::new(Held::Session(LockSession {
            connection: Some(connection),
            key,
        }))),
        Err(e)
            if e.as_database_error()
                .and_then(DatabaseError::code)
                .as_deref()
                == Some(LOCK_NOT_AVAILABLE) =>
        {
            let holder = holder(&mut connection, key)
                .await
                .map_err(|e| repo.fail(operation(), e))?;
            let _ = connection.close().await;
            Err(StoreError::RunBusy {
                location: repo.location().to_owned(),
                run,
                holder,
            })
        }
        Err(e) => Err(repo.fail(operation(), e)),
    }
}

/// The run's second lock key. Run ids are sequential and stay far below 2^31; beyond, ids 2^31
/// apart share a key, which can only refuse a run spuriously, never admit two players.
fn run_key(run: RunId) -> i32 {
    (run.get() & 0x7fff_ffff) as i32
}

/// Who holds the run's lock: "pid 1234 on host x, since 2026-12-01 13:55:02 UTC" from the
/// holder's session (its application name and start).
async fn holder(connection: &mut PgConnection, key: i32) -> Result<String, sqlx::Error> {
    let row = sqlx::query(
        "SELECT a.application_name, \
         to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), a.pid \
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
         AND l.classid = $1::oid AND l.objid = $2::oid \
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .bind(RUN_LOCK_CLASS)
    .bind(key)
    .fetch_optional(connection)
    .await?;
    let Some(row) = row else {
        return Ok("it has just released it".to_owned());
    };
    let name: Option<String> = row.try_get(0)?;
    let since: Option<String> = row.try_get(1)?;
    let backend: i32 = row.try_get(2)?;
    let who = match name.as_deref().and_then(|n| n.strip_prefix("arbiter ")) {
        Some(process) => process.to_owned(),
        None => format!("PostgreSQL session {backend}"),
    };
    Ok(match since {
        Some(since) => format!("{who}, since {since}"),
        None => who,
    })
}
