//! The store's errors. Each names the database (file path or redacted URL) it happened on.
//!
//! An error wrapping a driver's error (sqlx's, the operating system's) shows the driver's text
//! in its own message and does not also return it from `source()`. A chain printer (anyhow's
//! `{:#}`, `Report`) prints every level of the `source()` chain after the message, so an error
//! that did both printed each text twice; and sqlx's errors do both themselves (`error returned
//! from database: X` whose source is `X`, `while executing migration 1: Y` whose source is `Y`),
//! which made "table runs already exists" appear four times. So the driver's chain is folded
//! into one line here, each text once ([`Cause`]), and the error ends the chain: `{}` and `{:#}`
//! print the same complete line. The driver's error itself stays in the variant's `cause` field
//! for code that wants to inspect it.

use std::fmt;
use std::path::PathBuf;

use crate::fleet::WorkerId;
use crate::model::{PairKey, RunId};

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// [`Store::open_existing`](crate::Store::open_existing) on a file that is not there.
    #[error("{location}: no such database file")]
    NotFound {
        /// The database file.
        location: String,
    },

    /// The file exists but is not an SQLite database at all (a PGN, a config, garbage).
    #[error("{location}: not a database file (is this the right path?)")]
    NotADatabase {
        /// The database file.
        location: String,
    },

    /// A real database that some other program owns: arbiter will not add its tables to it.
    #[error("{location}: not an arbiter database ({reason})")]
    NotArbiterDatabase {
        /// The database file or URL.
        location: String,
        /// What was found instead.
        reason: String,
    },

    /// Written by a newer arbiter whose schema this one does not know.
    #[error(
        "{location}: the database has schema version {found}, newer than the {supported} this \
         arbiter knows; use a newer arbiter"
    )]
    NewerSchema {
        /// The database file or URL.
        location: String,
        /// The newest migration applied to the database.
        found: i64,
        /// The newest migration this build knows.
        supported: i64,
    },

    /// A `postgres://` location given to a build without the `postgres` feature.
    #[error(
        "{location}: this arbiter was built without PostgreSQL support (cargo feature `postgres`)"
    )]
    PostgresNotEnabled {
        /// The redacted URL.
        location: String,
    },

    /// The directory that should hold a new database file is not there (a mistyped path).
    #[error("{location}: the directory {} does not exist", directory.display())]
    NoSuchDirectory {
        /// The database file.
        location: String,
        /// Its missing directory.
        directory: PathBuf,
    },

    /// Bringing the schema up to date failed.
    #[error("{location}: migrating the schema: {}", Cause(cause))]
    Migrate {
        /// The database file or URL.
        location: String,
        /// What sqlx's migrator said (shown in the message, not returned as the source).
        cause: sqlx::migrate::MigrateError,
    },

    /// The database refused or failed an operation.
    #[error("{location}: {operation}: {}", Cause(cause))]
    Database {
        /// The database file or URL.
        location: String,
        /// What the store was doing, e.g. "committing pair 12 of run 3".
        operation: String,
        /// The driver's error (shown in the message, not returned as the source).
        cause: sqlx::Error,
    },

    /// The store reached through `arbiter serve` (a worker's `--server`): the server refused
    /// the request or could not be reached. `transient` when trying again may succeed (the
    /// server restarting, the network cut, the database behind it unreachable), as for a
    /// database's own transient errors.
    #[error("{location}: {operation}: {message}")]
    Remote {
        /// The server's URL.
        location: String,
        /// What the worker was asking for, e.g. "claiming a batch".
        operation: String,
        /// The server's message (its JSON `error`), or why it could not be reached.
        message: String,
        /// The HTTP status, if the server answered.
        status: Option<u16>,
        /// Whether the worker should try again.
        transient: bool,
    },

    /// [`Store::lock_run`](crate::Store::lock_run) on a run that another process (or another
    /// guard in this one) is playing.
    #[error(
        "{location}: run {run} is being played by another process ({holder}); wait for it to \
         finish or stop it first"
    )]
    RunBusy {
        /// The database file or URL.
        location: String,
        /// The run.
        run: RunId,
        /// Who holds it, as the holder recorded itself: "pid 1234 on host x, since
        /// 2026-12-01 13:55:02 UTC".
        holder: String,
    },

    /// The lock file beside an SQLite database could not be created or locked.
    #[error("{location}: locking run {run} with {}: {}", path.display(), Cause(cause))]
    LockFile {
        /// The database file.
        location: String,
        /// The run.
        run: RunId,
        /// The lock file.
        path: PathBuf,
        /// What the operating system said (shown in the message, not returned as the source).
        cause: std::io::Error,
    },

    /// No run has this id.
    #[error("{location}: no run with id {run}")]
    UnknownRun {
        /// The database file or URL.
        location: String,
        /// The id asked for.
        run: RunId,
    },

    /// [`Store::create_run`](crate::Store::create_run) with a name that is taken.
    #[error("{location}: a run named {name:?} already exists (id {existing})")]
    DuplicateRunName {
        /// The database file or URL.
        location: String,
        /// The name asked for.
        name: String,
        /// The run that has it.
        existing: RunId,
    },

    /// A commit to, or a second finish of, a finished run.
    #[error("{location}: run {run} is finished ({verdict}); it accepts no more pairs")]
    RunFinished {
        /// The database file or URL.
        location: String,
        /// The run.
        run: RunId,
        /// Its verdict.
        verdict: crate::RunOutcome,
    },

    /// A run spec the database cannot hold (fewer than two engines, a name twice, a pairing of
    /// an engine with itself or with one the run lacks, no pairing); nothing was written.
    #[error("{location}: run {name:?} is invalid: {reason}")]
    InvalidRun {
        /// The database file or URL.
        location: String,
        /// The run's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A pair the caller built wrong; nothing was written.
    #[error("{location}: {pair} of run {run} is invalid: {reason}")]
    InvalidPair {
        /// The database file or URL.
        location: String,
        /// The run.
        run: RunId,
        /// The pair's pairing and index.
        pair: PairKey,
        /// What is wrong with it.
        reason: String,
    },

    /// A tuning step the caller built wrong, or one the run cannot take (a run that is not a
    /// tuning run, a step that skips one); nothing was written.
    #[error("{location}: step {step} of run {run} is invalid: {reason}")]
    InvalidStep {
        /// The database file or URL.
        location: String,
        /// The run.
        run: RunId,
        /// The step's number.
        step: u64,
        /// What is wrong with it.
        reason: String,
    },

    /// A value read back breaks an invariant the schema should guarantee (a negative count, an
    /// unknown state): the database was edited by hand or is damaged.
    #[error("{location}: corrupt data in {what}: {detail}")]
    Corrupt {
        /// The database file or URL.
        location: String,
        /// Where it was found.
        what: &'static str,
        /// What was found.
        detail: String,
    },

    /// A batch a worker submitted that is not what the run's queue holds (units missing, given
    /// twice or of another batch); nothing of it was counted.
    #[error("{location}: batch {sequence} of run {run} refused: {reason}")]
    InvalidBatch {
        location: String,
        run: RunId,
        sequence: u64,
        reason: String,
    },

    /// A worker that cannot be registered (no name).
    #[error("{location}: worker {name:?} refused: {reason}")]
    InvalidWorker {
        location: String,
        name: String,
        reason: String,
    },

    /// No worker has this id.
    #[error("{location}: no worker with id {worker}")]
    UnknownWorker { location: String, worker: WorkerId },

    /// [`Store::create_token`](crate::Store::create_token) with a name that is taken (by a
    /// live or a revoked token: a name is never reused, so a list always says which token a
    /// worker was registered with).
    #[error("{location}: a token named {name:?} already exists; choose another name")]
    DuplicateTokenName { location: String, name: String },

    /// No token has this name.
    #[error("{location}: no token named {name:?}")]
    UnknownToken { location: String, name: String },

    /// A token that cannot be created (no name).
    #[error("{location}: token {name:?} refused: {reason}")]
    InvalidToken {
        location: String,
        name: String,
        reason: String,
    },

    /// The operating system gave no random bytes for a token's secret.
    #[error("{location}: no random bytes for a token's secret: {cause}")]
    Randomness {
        location: String,
        /// What getrandom said (shown in the message, not returned as the source).
        cause: getrandom::Error,
    },
}

impl StoreError {
    /// Whether the same call may succeed if made again later: the database could not be
    /// reached, restarted, or was busy (a connection lost or refused, a pool that timed out,
    /// PostgreSQL's connection exceptions and shutdowns, a serialization failure or deadlock,
    /// SQLite's busy file). A worker retries these with backoff; every other error is the same
    /// the next time and is reported.
    pub fn is_transient(&self) -> bool {
        if let StoreError::Remote { transient, .. } = self {
            return *transient;
        }
        let StoreError::Database { cause, .. } = self else {
            return false;
        };
        match cause {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(e) => e.code().is_some_and(|code| {
                code.starts_with("08")
                    || matches!(
                        code.as_ref(),
                        "57P01" | "57P02" | "57P03" | "40001" | "40P01" | "53300"
                    )
                    // SQLite: SQLITE_BUSY and its extended codes.
                    || matches!(code.as_ref(), "5" | "261" | "517" | "773" | "6" | "262")
            }),
            _ => false,
        }
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A driver's error and its `source()` chain as one line, each text once: a level whose text
/// the line already holds (sqlx repeats its source inside its own message) is skipped.
pub(crate) struct Cause<'a>(pub(crate) &'a dyn std::error::Error);

impl fmt::Display for Cause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        let mut level = Some(self.0);
        while let Some(error) = level {
            let text = error.to_string();
            if !line.contains(&text) {
                if !line.is_empty() {
                    line.push_str(": ");
                }
                line.push_str(&text);
            }
            level = error.source();
        }
        f.write_str(&line)
    }
}
