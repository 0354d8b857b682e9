//! The exclusive right to play a run: one process at a time, released when the process dies.
//!
//! The design and its reasons are in the crate documentation ("One process per run"). This
//! module holds the guard, the SQLite lock file, and how a holder describes itself.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The exclusive right to play one run, until dropped.
///
/// Obtained from [`Store::lock_run`](crate::Store::lock_run). While it lives, every other
/// `lock_run` of the same run, in any process on the same database, is refused with
/// [`StoreError::RunBusy`](crate::StoreError::RunBusy). Dropping it releases the run; so does
/// the end of the process, however it ends (exit, panic, SIGKILL), because the lock is held by
/// the operating system (SQLite) or the database server (PostgreSQL) on behalf of an open file
/// or connection, not written as data that a dead process would leave behind.
pub struct RunLock {
    _held: Held,
}

pub(crate) enum Held {
    /// An exclusive OS lock on the file beside the SQLite database.
    File(LockFile),
    /// A session-level advisory lock on a connection of its own.
    #[cfg(feature = "postgres")]
    Session(crate::postgres::LockSession),
}

impl RunLock {
    pub(crate) fn new(held: Held) -> RunLock {
        RunLock { _held: held }
    }
}

impl fmt::Debug for RunLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self._held {
            Held::File(lock) => f.debug_tuple("RunLock").field(&lock.path).finish(),
            #[cfg(feature = "postgres")]
            Held::Session(session) => f.debug_tuple("RunLock").field(session).finish(),
        }
    }
}

/// This process as a refused one is told about it: `pid 1234 on host x`.
pub(crate) fn this_process() -> String {
    format!("pid {} on host {}", std::process::id(), host_name())
}

/// The machine's name, without a dependency for `gethostname`: Linux has it in `/proc`, most
/// Unix systems in `/etc/hostname`, shells export `HOSTNAME`.
fn host_name() -> String {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    read("/proc/sys/kernel/hostname")
        .or_else(|| read("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// An exclusive lock on a file, with the holder's description written inside; removed when
/// released.
pub(crate) struct LockFile {
    file: File,
    path: PathBuf,
}

/// What an attempt to take a lock file found.
pub(crate) enum Attempt {
    Acquired(LockFile),
    /// Someone holds it; their description, as they wrote it (empty if they have not yet).
    Busy(String),
}

impl LockFile {
    /// Takes the lock on `path` without waiting, and writes `holder` into the file.
    ///
    /// The lock is `flock`-style (`File::try_lock`): it belongs to this open file, so a second
    /// attempt in the same process is refused too, and the kernel drops it when the file is
    /// closed, which happens when the process ends in any way. Rust opens files close-on-exec,
    /// so engine processes started later do not inherit it and cannot outlive it.
    pub(crate) fn try_acquire(path: &Path, holder: &str) -> io::Result<Attempt> {
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    // A description that cannot be read is no reason to fail the refusal.
                    let _ = file.read_to_string(&mut text);
                    return Ok(Attempt::Busy(text.trim().to_owned()));
                }
                Err(TryLockError::Error(e)) => return Err(e),
            }
            // The previous holder removes the file when it releases it; if we opened the file
            // just before that, we hold a lock on a file no longer at `path`, which nobody else
            // would see. Start again with the file that is there now.
            if !is_at(&file, path)? {
                continue;
            }
            file.set_len(0)?;
            file.rewind()?;
            file.write_all(holder.as_bytes())?;
            file.flush()?;
            return Ok(Attempt::Acquired(LockFile {
                file,
                path: path.to_owned(),
            }));
        }
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed while still locked, so that no one can take it between the unlock and the
        // removal and then lose it to the removal (see `try_acquire`). A file left by a killed
        // process is harmless: unlocked, it is taken and reused by the next holder.
        if cfg!(unix) {
            let _ = std::fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

/// Whether `file` is the file now at `path` (not one removed or replaced since it was opened).
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(there) => Ok(open.dev() == there.dev() && open.ino() == there.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Elsewhere lock files are never removed (an open file cannot be removed on Windows), so the
/// file at the path is always the one opened.
#[cfg(not(unix))]
fn is_at(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(true)
}
