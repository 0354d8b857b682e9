//! The embedded SQLite backend: one file, WAL journal, `synchronous = FULL`, one writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::Sqlite;

use crate::error::{Result, StoreError};
use crate::migrations::{self, Source};
use crate::model::RunId;
use crate::repo::{Dialect, Repo, Schema};
use crate::run_lock::{this_process, Attempt, Held, LockFile, RunLock};

impl Dialect for Sqlite {
    const MIGRATIONS: &'static [Source] = migrations::SQLITE;
    const LIST_TABLES: &'static str =
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    // `synchronous` is the connection's: a lease commits as durably as a pair here.
    const BEGIN_LEASE: &'static str = "BEGIN IMMEDIATE";
    const NOW_MS: &'static str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
    const FOR_UPDATE: &'static str = "";
    const SKIP_LOCKED: &'static str = "";
    const ADVANCE_LOCK: &'static str = "";
    const SUBMIT_LOCK: &'static str = "";
}

/// How long a write waits for another process (a second arbiter, a report reading while a
/// checkpoint runs) to release the file before failing with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a commit may queue for the single writer connection. Commits take milliseconds; a
/// long queue means the file is locked by another process, which `BUSY_TIMEOUT` reports first.
const WRITER_QUEUE_TIMEOUT: Duration = Duration::from_secs(120);

/// Readers never block the writer in WAL mode; a few are enough for the runner, a report and an
/// export at once.
const READERS: u32 = 4;

/// `SQLITE_NOTADB`: the file's header is not SQLite's.
const NOT_A_DATABASE: &str = "26";

/// Opens (and with `create`, creates) the database file and brings its schema up to date.
/// Returns the file's canonical path too: the base of its run lock files.
pub(crate) async fn open(path: &Path, create: bool) -> Result<(Repo<Sqlite>, PathBuf)> {
    let location = check_path(path, create)?;
    let classify = classifier(&location);

    let writer_options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(create)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true);
    // Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is
    // locked" at once, without its busy handler, when another process is doing the same or
    // recovering the WAL: processes opening one new store together retry for a while.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let writer = loop {
        let attempt = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(WRITER_QUEUE_TIMEOUT)
            .connect_with(writer_options.clone())
            .await;
        match attempt {
            Err(cause) if is_busy(&cause) && std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => break other.map_err(&classify)?,
        }
    };
    let repo_writer_only = Repo::new(writer.clone(), writer.clone(), location.clone());
    if let Err(e) = repo_writer_only.prepare().await {
        writer.close().await;
        return Err(match e {
            StoreError::Database { cause, .. } if is_not_a_database(&cause) => {
                StoreError::NotADatabase {
                    location: location.to_string(),
                }
            }
            other => other,
        });
    }

    // Opened after the migrations: a read-only connection cannot create the file or its WAL.
    let reader = readers(path).await.map_err(&classify)?;
    // Two spellings of one file (a relative path, a symbolic link) must meet at one lock file.
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    Ok((Repo::new(writer, reader, location.clone()), file))
}

/// Opens a store that exists already, creating nothing: a missing file is
/// [`StoreError::NotFound`]; an empty file (SQLite reads 0 bytes as a database without tables)
/// or another program's database is [`StoreError::NotArbiterDatabase`] and is left byte for
/// byte as it was (neither given tables nor switched to WAL). That is judged on read-only
/// connections; with `write`, or for a store of an older arbiter (which is brought up to date in
/// place, as every command does), the store is then opened as [`open`] opens it. Without
/// `write` the connections stay read-only and the store refuses every write.
pub(crate) async fn open_existing(path: &Path, write: bool) -> Result<(Repo<Sqlite>, PathBuf)> {
    let location = check_path(path, false)?;
    let reader = readers(path).await.map_err(classifier(&location))?;
    let repo = Repo::new(reader.clone(), reader, location.clone());
    let schema = repo.check_existing().await;
    let read_only = !write && matches!(schema, Ok(Schema::Current));
    if !read_only {
        repo.close().await;
    }
    match schema {
        Ok(_) if read_only => {
            let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
            Ok((repo, file))
        }
        Ok(_) => open(path, false).await,
        Err(StoreError::Database { cause, .. }) if is_not_a_database(&cause) => {
            Err(StoreError::NotADatabase {
                location: location.to_string(),
            })
        }
        Err(other) => Err(other),
    }
}

/// The file's name as errors give it, once the path is known to be a file that exists (or,
/// with `create`, one whose directory exists).
fn check_path(path: &Path, create: bool) -> Result<Arc<str>> {
    let location: Arc<str> = path.display().to_string().into();
    if path.is_dir() {
        return Err(StoreError::NotADatabase {
            location: location.to_string(),
        });
    }
    if !path.exists() {
        if !create {
            return Err(StoreError::NotFound {
                location: location.to_string(),
            });
        }
        match path.parent() {
            Some(directory) if !directory.as_os_str().is_empty() && !directory.is_dir() => {
                return Err(StoreError::NoSuchDirectory {
                    location: location.to_string(),
                    directory: directory.to_owned(),
                });
            }
            _ => {}
        }
    }
    Ok(location)
}

/// A driver's error on opening, as the store's: a file whose header is not SQLite's is
/// [`StoreError::NotADatabase`].
fn classifier(location: &Arc<str>) -> impl Fn(sqlx::Error) -> StoreError + '_ {
    move |cause: sqlx::Error| match cause.as_database_error().and_then(|e| e.code()) {
        Some(code) if code == NOT_A_DATABASE => StoreError::NotADatabase {
            location: location.to_string(),
        },
        _ => StoreError::Database {
            location: location.to_string(),
            operation: "opening the database".into(),
            cause,
        },
    }
}

/// The read-only connections: they can neither create the file nor change its journal mode.
async fn readers(path: &Path) -> std::result::Result<sqlx::SqlitePool, sqlx::Error> {
    let reader_options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true);
    SqlitePoolOptions::new()
        .max_connections(READERS)
        .connect_with(reader_options)
        .await
}

/// Takes the run's lock file, `<database file>.run-<id>.lock`, writing who holds it inside.
pub(crate) async fn lock_run(repo: &Repo<Sqlite>, file: &Path, run: RunId) -> Result<RunLock> {
    repo.run(run).await?;
    let since: String = sqlx::query_scalar("SELECT strftime('%Y-%m-%d %H:%M:%S UTC', 'now')")
        .fetch_one(repo.reader())
        .await
        .map_err(|e| repo.fail(format!("locking run {run}"), e))?;
    let mut path = file.as_os_str().to_owned();
    path.push(format!(".run-{run}.lock"));
    let path = PathBuf::from(path);
    let holder = format!("{}, since {since}", this_process());
    match LockFile::try_acquire(&path, &holder) {
        Ok(Attempt::Acquired(lock)) => Ok(RunLock::new(Held::File(lock))),
        Ok(Attempt::Busy(holder)) => Err(StoreError::RunBusy {
            location: repo.location().to_owned(),
            run,
            holder: if holder.is_empty() {
                "it has not written its name yet".to_owned()
            } else {
                holder
            },
        }),
        Err(cause) => Err(StoreError::LockFile {
            location: repo.location().to_owned(),
            run,
            path,
            cause,
        }),
    }
}

fn is_not_a_database(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|e| e.code())
        .is_some_and(|code| code == NOT_A_DATABASE)
}

/// SQLite's "database is locked" (`SQLITE_BUSY` and its extended codes).
fn is_busy(cause: &sqlx::Error) -> bool {
    cause
        .as_database_error()
        .and_then(|e| e.code())
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| code & 0xff == 5)
}
