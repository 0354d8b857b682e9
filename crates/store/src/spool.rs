//! A worker's spool: the batches it played, kept in an SQLite file on its own disk until the
//! fleet has confirmed them, so that a worker killed while its submit waits for a server or a
//! network that is away submits them when it starts again instead of losing them (another
//! worker would otherwise play them again after their leases).
//!
//! The spool is not the fleet's store: it holds only batches in flight, each under its key
//! (run, batch), written durably (`synchronous = FULL`) before the first submit and removed
//! when a submit's answer comes back, whatever it is (counted, counted before, the run closed).
//! A batch submitted twice, once before a kill and once from the spool, counts once: the
//! fleet's submit is keyed by (run, batch).

use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use sqlx::Row;

use crate::error::StoreError;
use crate::fleet::Lease;
use crate::model::PairRecord;
use crate::StoreFuture;

/// A played batch waiting for the fleet's confirmation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpooledBatch {
    /// The fleet it was leased from (the server's URL or the database's location): a spool
    /// reused against another fleet must not submit it there, where (run, batch) is another
    /// run's batch.
    pub fleet: String,
    pub lease: Lease,
    pub pairs: Vec<PairRecord>,
    /// The engines' signatures on the worker, as submitted.
    pub signatures: String,
}

/// The spool file.
pub struct Spool {
    pool: SqlitePool,
    location: String,
}

impl Spool {
    /// Opens the spool at `path`, creating it (and its folder) if it is not there.
    pub fn open(path: &Path) -> StoreFuture<'_, Spool> {
        Box::pin(async move {
            let location = path.display().to_string();
            let fail = |operation: &str, cause: sqlx::Error| StoreError::Database {
                location: location.clone(),
                operation: operation.to_owned(),
                cause,
            };
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| fail("creating the spool's folder", sqlx::Error::Io(e)))?;
            }
            let options = SqliteConnectOptions::from_str("sqlite:")
                .map_err(|e| fail("opening the spool", e))?
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full);
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect_with(options)
                .await
                .map_err(|e| fail("opening the spool", e))?;
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS spooled_batches (run_id INTEGER NOT NULL, \
                 sequence INTEGER NOT NULL, batch TEXT NOT NULL, PRIMARY KEY (run_id, sequence))",
            )
            .execute(&pool)
            .await
            .map_err(|e| fail("creating the spool's table", e))?;
            Ok(Spool { pool, location })
        })
    }

    /// Keeps the batch of `lease` played with `pairs` until [`Spool::forget`]: durable when
    /// this returns. Its parts are borrowed, written as the [`SpooledBatch`] that
    /// [`Spool::batches`] reads back, so that the worker's pairs are not copied to be kept.
    pub fn keep<'a>(
        &'a self,
        fleet: &'a str,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
    ) -> StoreFuture<'a, ()> {
        /// [`SpooledBatch`] by reference: the same JSON.
        #[derive(Serialize)]
        struct Kept<'b> {
            fleet: &'b str,
            lease: &'b Lease,
            pairs: &'b [PairRecord],
            signatures: &'b str,
        }
        Box::pin(async move {
            let batch = Kept {
                fleet,
                lease,
                pairs,
                signatures,
            };
            let text = serde_json::to_string(&batch).expect("a batch is plain data");
            sqlx::query(
                "INSERT OR REPLACE INTO spooled_batches (run_id, sequence, batch) VALUES ($1, $2, $3)",
            )
            .bind(batch.lease.run.get())
            .bind(i64::try_from(batch.lease.sequence).unwrap_or(i64::MAX))
            .bind(text)
            .execute(&self.pool)
            .await
            .map_err(|e| self.fail("keeping a played batch", e))?;
            Ok(())
        })
    }

    /// The batches waiting, oldest run and batch first. A row this build cannot read (a spool
    /// of another version, a damaged file) is an error naming it, never skipped in silence.
    pub fn batches(&self) -> StoreFuture<'_, Vec<SpooledBatch>> {
        Box::pin(async move {
            let rows = sqlx::query(
                "SELECT run_id, sequence, batch FROM spooled_batches ORDER BY run_id, sequence",
            )
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.fail("reading the spool", e))?;
            rows.iter()
                .map(|row| {
                    let run: i64 = row
                        .try_get(0)
                        .map_err(|e| self.fail("reading the spool", e))?;
                    let sequence: i64 = row
                        .try_get(1)
                        .map_err(|e| self.fail("reading the spool", e))?;
                    let text: String = row
                        .try_get(2)
                        .map_err(|e| self.fail("reading the spool", e))?;
                    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                        location: self.location.clone(),
                        what: "spooled_batches",
                        detail: format!("batch {sequence} of run {run}: {e}"),
                    })
                })
                .collect()
        })
    }

    /// Drops `lease`'s batch: the fleet has answered its submit.
    pub fn forget<'a>(&'a self, lease: &'a Lease) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query("DELETE FROM spooled_batches WHERE run_id = $1 AND sequence = $2")
                .bind(lease.run.get())
                .bind(i64::try_from(lease.sequence).unwrap_or(i64::MAX))
                .execute(&self.pool)
                .await
                .map_err(|e| self.fail("forgetting a confirmed batch", e))?;
            Ok(())
        })
    }

    /// The spool's file, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn fail(&self, operation: &str, cause: sqlx::Error) -> StoreError {
        StoreError::Database {
            location: self.location.clone(),
            operation: operation.to_owned(),
            cause,
        }
    }
}
