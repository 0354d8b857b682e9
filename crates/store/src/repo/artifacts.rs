//! The SQL of engine artifacts: a binary stored once under its SHA-256, read back checked.

use sqlx::migrate::Migrate;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{now_ms, sha256_hex, Dialect, Repo};
use crate::error::Result;

impl<DB> Repo<DB>
where
    DB: Dialect,
    DB::Connection: Migrate,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    i64: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<String>: for<'q> Encode<'q, DB> + Type<DB>,
    Vec<u8>: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
{
    /// Stores `content` under its SHA-256 unless it is there already; returns the hash (hex).
    pub(crate) async fn put_artifact(&self, content: &[u8]) -> Result<String> {
        let sha256 = sha256_hex(content);
        let operation = || format!("storing artifact {sha256}");
        sqlx::query(
            "INSERT INTO artifacts (sha256, size, content, created_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (sha256) DO NOTHING",
        )
        .bind(sha256.clone())
        .bind(i64::try_from(content.len()).unwrap_or(i64::MAX))
        .bind(content.to_vec())
        .bind(now_ms())
        .execute(&self.writer)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        Ok(sha256)
    }

    /// The artifact stored under `sha256` (hex), checked against it; `None` if there is none.
    pub(crate) async fn artifact(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        let operation = || format!("reading artifact {sha256}");
        let row = sqlx::query("SELECT content FROM artifacts WHERE sha256 = $1")
            .bind(sha256)
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let content: Vec<u8> = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
        if sha256_hex(&content) != sha256 {
            return Err(self.corrupt(
                "artifacts",
                format!("artifact {sha256} does not match its hash"),
            ));
        }
        Ok(Some(content))
    }
}
