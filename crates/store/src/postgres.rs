//! The PostgreSQL backend, the system of record of distributed runs.
//!
//! PostgreSQL takes concurrent writers itself (row locks on the run's rows order them), so one
//! pool both reads and writes.

use std::sync::Arc;

use sqlx::postgres::PgPoolOptions;
use sqlx::Postgres;

use crate::error::{Result, StoreError};
use crate::migrations::{self, Source};
use crate::repo::{Dialect, Repo};

impl Dialect for Postgres {
    const MIGRATIONS: &'static [Source] = migrations::POSTGRES;
    // `table_name` is of the domain `sql_identifier`; the cast gives plain text to decode.
    const LIST_TABLES: &'static str = "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'";
    const BEGIN_WRITE: &'static str = "BEGIN";
}

/// Connections per process; a worker or the coordinator commits from a few tasks at a time.
const CONNECTIONS: u32 = 8;

/// Connects to `url` and brings the schema up to date.
pub(crate) async fn open(url: &str, location: Arc<str>) -> Result<Repo<Postgres>> {
    let pool = PgPoolOptions::new()
        .max_connections(CONNECTIONS)
        .connect(url)
        .await
        .map_err(|source| StoreError::Database {
            location: location.to_string(),
            operation: "connecting".into(),
            source,
        })?;
    let repo = Repo::new(pool.clone(), pool, location);
    repo.prepare().await?;
    Ok(repo)
}
