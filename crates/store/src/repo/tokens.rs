//! The SQL of API tokens: creating one (its secret drawn here, only its hash stored), finding
//! the token a secret belongs to, revoking, listing, and workers bound to the token that
//! registered them.
//!
//! A secret is found by its hash with an ordinary indexed equality: the hash of a guess tells
//! nothing about the hash of the secret, so the lookup's timing leaks nothing worth a
//! constant-time comparison.

use base64::Engine;
use sqlx::migrate::Migrate;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{kind, sha256_hex, Dialect, Repo};
use crate::error::{Result, StoreError};
use crate::fleet::{WorkerId, WorkerInfo};
use crate::tokens::{ParseTokenScopeError, TokenId, TokenInfo, TokenScope};

/// What every secret starts with, so that one found in a log, a shell history or a repository
/// is recognisable as arbiter's (secret scanners key on such prefixes).
const SECRET_PREFIX: &str = "arb_";

/// The columns of a [`TokenInfo`], in [`Repo::decode_token`]'s order.
const TOKEN_COLUMNS: &str = "id, name, scope, created_at_ms, revoked_at_ms";

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
    /// Stores a new token named `name` with a fresh secret, and returns it with the secret:
    /// `arb_` and the URL-safe base64 of 32 random bytes. Only the secret's SHA-256 is stored.
    pub(crate) async fn create_token(
        &self,
        name: &str,
        scope: TokenScope,
    ) -> Result<(TokenInfo, String)> {
        let operation = || format!("creating token {name:?}");
        if name.trim().is_empty() {
            return Err(StoreError::InvalidToken {
                location: self.location.to_string(),
                name: name.to_owned(),
                reason: "a token needs a name".into(),
            });
        }
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes).map_err(|cause| StoreError::Randomness {
            location: self.location.to_string(),
            cause,
        })?;
        let secret = format!(
            "{SECRET_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        );
        let mut tx = self.begin_write(&operation).await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO tokens (name, scope, secret_hash, created_at_ms) \
             VALUES ($1, $2, $3, {}) RETURNING {TOKEN_COLUMNS}",
            DB::NOW_MS
        )))
        .bind(name)
        .bind(scope.as_str())
        .bind(sha256_hex(secret.as_bytes()))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| match kind(&e) {
            // The other unique column is the hash of 256 random bits, which never collides.
            Some(sqlx::error::ErrorKind::UniqueViolation) => StoreError::DuplicateTokenName {
                location: self.location.to_string(),
                name: name.to_owned(),
            },
            _ => self.fail(operation(), e),
        })?;
        let token = self.decode_token(&row, operation)?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok((token, secret))
    }

    /// The live token whose secret is `secret`; `None` for any other text, a revoked token's
    /// secret included.
    pub(crate) async fn authenticate(&self, secret: &str) -> Result<Option<TokenInfo>> {
        let operation = || "checking a token".to_owned();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens WHERE secret_hash = $1 AND revoked_at_ms IS NULL"
        )))
        .bind(sha256_hex(secret.as_bytes()))
        .fetch_optional(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        row.map(|row| self.decode_token(&row, operation))
            .transpose()
    }

    /// Revokes the token named `name` and returns it; a token revoked before keeps its time.
    pub(crate) async fn revoke_token(&self, name: &str) -> Result<TokenInfo> {
        let operation = || format!("revoking token {name:?}");
        let mut tx = self.begin_write(&operation).await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE tokens SET revoked_at_ms = COALESCE(revoked_at_ms, {}) WHERE name = $1 \
             RETURNING {TOKEN_COLUMNS}",
            DB::NOW_MS
        )))
        .bind(name)
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?
        .ok_or_else(|| StoreError::UnknownToken {
            location: self.location.to_string(),
            name: name.to_owned(),
        })?;
        let token = self.decode_token(&row, operation)?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(token)
    }

    /// Every token, live and revoked, by name.
    pub(crate) async fn tokens(&self) -> Result<Vec<TokenInfo>> {
        let operation = || "reading the tokens".to_owned();
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY name"
        )))
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        rows.iter()
            .map(|row| self.decode_token(row, operation))
            .collect()
    }

    /// [`Repo::register_worker`] for a worker that came through `token`: a new name is
    /// registered bound to it, a name bound to it is refreshed, and a name bound to another
    /// token or to none is left alone (`None`), in one statement, so that two tokens
    /// registering one name at once cannot both have it.
    pub(crate) async fn register_worker_for(
        &self,
        info: &WorkerInfo,
        token: TokenId,
    ) -> Result<Option<WorkerId>> {
        let operation = || format!("registering worker {:?} for token {token}", info.name);
        self.check_worker_name(info)?;
        let mut tx = self.begin_write(&operation).await?;
        let now = DB::NOW_MS;
        let id: Option<i64> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO workers (name, host, cores, version, first_contact_ms, last_contact_ms, \
             token_id) VALUES ($1, $2, $3, $4, {now}, {now}, $5) \
             ON CONFLICT (name) DO UPDATE SET host = $2, cores = $3, version = $4, \
             last_contact_ms = {now} WHERE workers.token_id = $5 RETURNING id"
        )))
        .bind(info.name.as_str())
        .bind(info.host.as_str())
        .bind(i64::from(info.cores))
        .bind(info.version.as_str())
        .bind(token.get())
        .fetch_optional(&mut *tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(id.map(WorkerId::new))
    }

    /// The token `worker` was registered through; `None` for a worker registered on the
    /// database directly.
    pub(crate) async fn worker_token(&self, worker: WorkerId) -> Result<Option<TokenId>> {
        let operation = || format!("reading the token of worker {worker}");
        let row = sqlx::query("SELECT token_id FROM workers WHERE id = $1")
            .bind(worker.get())
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?
            .ok_or_else(|| StoreError::UnknownWorker {
                location: self.location.to_string(),
                worker,
            })?;
        let token: Option<i64> = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
        Ok(token.map(TokenId::new))
    }

    fn decode_token(&self, row: &DB::Row, operation: impl Fn() -> String) -> Result<TokenInfo> {
        let read =
            || -> std::result::Result<(i64, String, String, i64, Option<i64>), sqlx::Error> {
                Ok((
                    row.try_get(0)?,
                    row.try_get(1)?,
                    row.try_get(2)?,
                    row.try_get(3)?,
                    row.try_get(4)?,
                ))
            };
        let (id, name, scope, created_at_ms, revoked_at_ms) =
            read().map_err(|e| self.fail(operation(), e))?;
        let scope = scope
            .parse()
            .map_err(|e: ParseTokenScopeError| self.corrupt("tokens.scope", e.to_string()))?;
        Ok(TokenInfo {
            id: TokenId::new(id),
            name,
            scope,
            created_at_ms,
            revoked_at_ms,
        })
    }
}
