//! The system of record of arbiter runs: every committed game pair, its games' PGN, and the
//! totals the statistics are computed from.
//!
//! This crate is the "store" step of the data path in ARCHITECTURE.md. A run has two or more
//! engines and a list of pairings (who plays whom, for how many pairs): a match is one pairing,
//! a round-robin of four engines has six, a gauntlet one per seed and opponent. The runner
//! creates a run, commits each finished colour-swapped pair, keyed by (pairing, index), with
//! [`Store::commit_pair`], and recomputes Elo and the LLR from [`Store::totals`] or
//! [`Store::pairing_totals`] with the statistics crate (the store only adds counts; it never
//! computes or accumulates a statistic). On `--resume` it plays exactly the pairs missing from
//! [`Store::committed_pairs`]; PGN and EPD files are exports of [`Store::games`]; reports draw
//! a run's path from [`Store::pairs_in_commit_order`]. A laptop run keeps an embedded SQLite
//! file; distributed runs will use PostgreSQL (cargo feature `postgres`), with the same queries.
//!
//! ```no_run
//! use arbiter_store::{Location, PairKey, RunSpec, Store};
//! # async fn example(pair: arbiter_store::PairRecord) -> Result<(), arbiter_store::StoreError> {
//! let store = Store::open(&Location::parse("runs.db")).await?;
//! let spec = RunSpec::head_to_head(
//!     "dev-vs-base-3f9a".into(),
//!     42,
//!     "[engines]\n...".into(),
//!     "dev".into(),
//!     "base".into(),
//!     10_000,
//! );
//! let run = match store.find_run_by_name(&spec.name).await? {
//!     Some(run) => run.id,
//!     None => store.create_run(&spec).await?,
//! };
//! let _lock = store.lock_run(run).await?;       // this process plays it, alone
//! let done = store.committed_pairs(run).await?; // skip these on resume
//! let _ = done.contains(&PairKey { pairing: 0, index: 7 });
//! let _ = store.commit_pair(&pair).await?;      // after each finished pair
//! let totals = store.totals(run).await?;        // -> arbiter_stats, for the LLR
//! # Ok(()) }
//! ```
//!
//! # Exactly once, nothing lost
//!
//! The contracts of ARCHITECTURE.md, and why they hold:
//!
//! - **One transaction per pair.** [`Store::commit_pair`] adds the pair's tally to the run's
//!   totals row and to its pairing's row, inserts the pair row and both games (with PGN and
//!   JSON; an unpaired run's odd last game is a unit of one), in one transaction. A transaction is atomic whatever happens to the process: after
//!   a SIGKILL at any instant (or a power cut) the database holds either all of it or none of
//!   it. So the totals (the run's and each pairing's) are always exactly the sums of the pairs
//!   present, and every counted pair has its games.
//! - **The primary key `(run_id, pairing, pair_index)`.** The pair insert is `ON CONFLICT DO
//!   NOTHING`; when the pair is already there, the transaction is rolled back, the totals are
//!   untouched and [`Committed::AlreadyPresent`] is returned. A retry, a replay after resume,
//!   or (later) a worker submitting a batch twice can never count a pair twice. The same index
//!   in another pairing is another pair.
//! - **Commit order.** Each pair row holds its `sequence` in the run, the run's pair count
//!   after it was added: 1, 2, 3 ... with no gap, since it is taken from the totals row in the
//!   same transaction that adds the pair to it (whose row lock orders a run's commits on
//!   PostgreSQL; SQLite has one writer). [`Store::pairs_in_commit_order`] reads them back so,
//!   and the totals after pair `n` are exactly the sum of pairs 1 to `n`: the LLR the runner
//!   saw at each step can be recomputed, never guessed from commit times. (A fleet's pair waits
//!   for its run's advance with no sequence, below; until then it is in neither.)
//! - **Commit before report.** `commit_pair` returns only after the commit is durable, and the
//!   runner reports a pair as done only after that. A resumed run replays exactly the pairs
//!   missing from [`Store::committed_pairs`] (which a crash may have cut short mid-game);
//!   with the key above that makes each pair counted once in the end.
//! - **Durability: WAL with `synchronous = FULL`.** In WAL mode a commit appends to the `-wal`
//!   file; with FULL, SQLite fsyncs it before the commit returns. Surviving SIGKILL needs no
//!   fsync at all (the kernel holds the written pages whatever the process does), so even
//!   NORMAL would keep every committed pair through kill -9. FULL is for power loss and kernel
//!   crashes: with NORMAL, WAL commits are fsynced only at checkpoints, so the last pairs the
//!   runner already printed as finished could vanish (still consistent, never double counted,
//!   but "nothing lost" would be false). A pair takes seconds of engine time and the fsync well
//!   under a millisecond on an SSD (the concurrency test in `tests/sqlite.rs` prints the commit
//!   rate: about 1,500 pairs/s on the 2-core development machine), so arbiter pays it.
//!   `journal_mode = WAL` is stored in the file; `synchronous` is set on every connection.
//! - **Finished runs are closed.** [`Store::finish_run`] records the verdict; afterwards
//!   `commit_pair` refuses new pairs ([`StoreError::RunFinished`]), so a verdict's evidence
//!   never changes under it. (A retry of a pair committed before the finish is still
//!   `AlreadyPresent`.)
//!
//! # Concurrency on SQLite
//!
//! SQLite has one writer at a time. The store keeps exactly one writing connection, so
//! concurrent `commit_pair` calls from the runner's tasks queue in the pool (in order, without
//! polling) instead of contending for the file lock; reads go through a separate pool of
//! read-only connections, which WAL lets run beside the writer, so a long PGN export never
//! stalls commits. The busy timeout (30 s) only covers other processes on the same file, and
//! write transactions start with `BEGIN IMMEDIATE` so that such contention waits under that
//! timeout rather than failing with "database is locked" when a read lock must be upgraded.
//!
//! # One process per run
//!
//! Two processes resuming one run would both play its missing pairs: the key makes the store
//! count each pair once, but half the engine time is wasted and the PGN holds whichever copy
//! came first. So a run is played under [`Store::lock_run`], and a second player is refused
//! with [`StoreError::RunBusy`], which names the holder ("pid 1234 on host x, since 2026-12-01
//! 13:55:02 UTC"). The lock must vanish with its holder, however it dies: the resume contract
//! is tested by killing the runner with SIGKILL at random instants and rerunning at once, and
//! a kill must never leave a run that cannot be resumed, nor one that can only be after a
//! timeout or a manual clean-up. Hence locks the operating system or the server holds for a
//! live process, never a row or a file's contents that a dead process would leave behind:
//!
//! - **SQLite: an OS lock on `<database file>.run-<id>.lock`** (`File::try_lock`, `flock` on
//!   Unix, `LockFileEx` on Windows), taken without waiting. It belongs to the open file, so
//!   the kernel drops it when the process ends (it is gone before the parent's `wait` returns)
//!   and a second attempt in the same process is refused as well. The holder writes its
//!   description into the file for the refusal message and removes the file, still locked,
//!   when it releases it; a file left by a killed holder is unlocked and simply reused. The
//!   path is built from the database's canonical path, so two spellings of one file (relative
//!   and absolute, a symbolic link) meet at one lock. Rejected: a lock row in the database
//!   (a killed holder leaves it; telling a dead holder from a live one needs pid liveness,
//!   which is wrong across hosts and after pid reuse, or heartbeats with a timeout, which make
//!   the rerun wait); SQLite's own locks (held only during a transaction, not for a run);
//!   POSIX record locks (`fcntl`; one process's locks never conflict with each other, and
//!   closing any descriptor of the file drops them all).
//! - **PostgreSQL: a session-level advisory lock**, `pg_advisory_lock(class, run)` on a
//!   connection of the guard's own (outside the pool, which would keep it after the guard is
//!   gone), named after the holder (`application_name`) so that a refused process can read
//!   who it is from `pg_stat_activity`. The session and its locks end when the connection
//!   closes, including when the holder's process is killed. A killed client's socket closes
//!   at once but the server ends the session a moment later, so a lock attempt waits up to
//!   three seconds (`lock_timeout`) before refusing: an immediate rerun succeeds, and a second
//!   player of a run in progress is refused after that wait. (A holder whose machine vanishes
//!   without closing its socket keeps the lock until the server's TCP keepalive notices; the
//!   distributed mode's leases, not this lock, are meant for fleets.)
//!
//! Migrations take the same care: two processes opening one new database at once both found
//! it empty and both created its tables, and the second failed with "table runs already
//! exists". The check of the schema and the migrations now run as one exclusive step on one
//! connection (see `Repo::prepare`): inside a write transaction begun with `BEGIN IMMEDIATE` on
//! SQLite, and under sqlx's migration advisory lock on PostgreSQL. Whoever comes second waits
//! for the first, then finds the schema current.
//!
//! # Errors say each thing once
//!
//! Every error names the database. An error that wraps a driver's error shows the driver's
//! text in its message, with each level of sqlx's own chain once, and returns no `source()`:
//! printed with `{}` or as an anyhow chain (`{:#}`), the line is the same and says everything
//! once (see `error.rs` for why both cannot be had with a `source()`).
//!
//! # One implementation, two dialects
//!
//! The SQL lives once, in a `Repo<DB>` generic over sqlx's `Database` and monomorphised for
//! SQLite and (with the feature) PostgreSQL; [`Store`] is an enum over the two, so callers see
//! one non-generic type. The queries use only what both dialects accept (`$n` placeholders,
//! `ON CONFLICT ... DO NOTHING`, `RETURNING`, 64-bit integers, text, times as integer
//! milliseconds). What differs is three constants per dialect (how to list tables, how to begin a
//! write) and the migrations, one directory per dialect (`migrations/sqlite`,
//! `migrations/postgres`) with the same versions, embedded in the binary. `sqlx::Any` was the
//! alternative: it would drop the typed SQLite connect options that the durability argument
//! rests on (WAL, `synchronous`, busy timeout, read-only readers), convert every value through
//! its own narrower type set, and need a global driver registry. Queries are runtime-checked
//! (`sqlx::query`), so building needs no database.
//!
//! # Schema and versions
//!
//! Migrations are sqlx's (table `_sqlx_migrations`). Opening a database checks, before changing
//! anything, that it is arbiter's or empty: a file that is not SQLite is
//! [`StoreError::NotADatabase`], someone else's database is [`StoreError::NotArbiterDatabase`],
//! and one written by a newer arbiter is [`StoreError::NewerSchema`]. Where the store must
//! exist already ([`Store::open_existing`] to resume, [`Store::open_read_only`] for reports), an
//! empty database (a 0-byte file, an empty schema) is refused too, and that check is made on
//! read-only connections, so a file that is refused keeps every byte. Migration 3 brought runs
//! of N engines (`run_engines`, `run_pairings`, the pairing in the keys of `pairs` and `games`,
//! and the commit order); a file of an older release upgrades in place when it is opened, its
//! runs becoming one-pairing runs (see the migration's header). Migration 7 brought the fleet's
//! tables (below); `pairs` keeps its key.
//!
//! # Tuning runs
//!
//! Migration 4 brought tuning runs (SPSA). A tuning run is a row of `runs` like a match, so its
//! name, seed, configuration, lock and "rerunning resumes it" work the same way; its two
//! engines are the tuned engine at the plus and at the minus side. Its set-up (parameters and
//! hyper-parameters) is written with the run in one transaction
//! ([`Store::create_tuning_run`]), and each finished step in one transaction keyed by (run,
//! step) ([`Store::commit_step`], `ON CONFLICT DO NOTHING`): the perturbation the games were
//! played at, their W/D/L and pentanomial counts, and the values after the update. A step is
//! the unit that survives a kill: one committed is never played again, one cut short is played
//! again from its start. The store keeps the tuner's JSON verbatim and never reads it.
//!
//! # Run facts
//!
//! Migration 6 gave each run its facts ([`RunFacts`], column `runs.facts`): its kind (match,
//! round-robin, gauntlet, spsa, datagen), its statistics model (pentanomial for
//! colour-swapped pairs, trinomial for single games), the SPRT it is played under (elo0,
//! elo1, alpha, beta, Elo model), the games its schedule holds and each engine's clock. The
//! runner decides them once from the checked configuration (`CheckedConfig::facts`) and they
//! are written in the transaction that creates the run ([`RunSpec::facts`]). A report reads
//! them instead of re-checking the stored configuration text, so a later arbiter whose checks
//! are stricter still reports every run it stored. They are one typed JSON document rather
//! than a column each: read whole and never searched, growing by fields with serde defaults
//! that old rows and old builds read without a migration, its `version` saying which fields
//! its writer knew. A run created before migration 6 has none (`None`), and its report falls
//! back to its configuration. The link of a confirmation SPRT to the tuning run it confirms
//! is a column instead (`runs.confirms_run`, [`RunSpec::confirms`], read back with
//! [`Store::confirmations`]): a reference the database checks, and a search.
//!
//! # The fleet
//!
//! Migration 7 lets workers on many machines play one run on one database (PostgreSQL; an
//! SQLite file serves workers on one machine the same way). [`Store::queue_run`] stores a run
//! cut into batches: runs of consecutive schedule units (unit u is pair u / P of pairing
//! u % P, the runner's order), so that a batch's pairs, openings, seats and seeds follow from
//! (run, batch) and any worker plays it identically. What makes each batch count once:
//!
//! - **Claims lease, they do not assign.** [`Store::claim_batch`] takes the first open batch,
//!   or one whose lease expired (there is no sweeper: the next claim is the reclaim), with
//!   `FOR UPDATE SKIP LOCKED` on PostgreSQL so that concurrent claims pass each other instead of
//!   queueing, and under the single writer on SQLite. A worker restarted under its name gets
//!   its unexpired lease back. Leases are timed on the database's clock, not the workers'.
//!   Claims, heartbeats and releases commit without waiting for PostgreSQL's WAL flush: a
//!   database crash may forget the last moments of leases, which costs at most a batch played
//!   twice (and counted once, below).
//! - **A submit counts in one transaction keyed by (run, batch), and its run advances in a
//!   second.** [`Store::submit_batch`] first ([`Store::count_batch`]) locks the batch row,
//!   share-locks the run's row (so that the run cannot close under it), counts its pairs with
//!   the key of [`Store::commit_pair`] (which still holds), a statement for all of them and
//!   one for all their games, and marks the batch done with its tally. It writes no row that
//!   the run's other submits write, so a run's submits commit side by side: PostgreSQL
//!   releases a row lock only after the commit's WAL flush, and a row every submit wrote (the
//!   run's totals, until migration 8) made them follow each other one flush at a time. Its
//!   pairs are counted (their keys taken, their games stored, a resume skips them) but wait,
//!   with no `sequence`, for the run's advance.
//!   A second copy of a done batch, from a retry or from a worker whose lease moved on,
//!   counts nothing ([`Submitted::AlreadyCounted`]); a submit after the run closed counts
//!   nothing either. A late worker's batch is as good as the new holder's: whichever submits
//!   first is counted. A worker killed with SIGKILL loses only its batch, which the next claim
//!   after the lease plays again.
//! - **One advance at a time per run, one flush for many batches.** Then the submitter
//!   advances the run ([`Store::advance`]): it takes the run's totals row with `FOR UPDATE
//!   SKIP LOCKED` (the row a local commit takes first too), adds every waiting pair to the
//!   run's totals and its pairing's, numbers them on in the commit order (in unit order), walks
//!   the prefix and closes the run on a verdict, in one short transaction. A submitter that
//!   finds the row taken returns at once: the holder looks for waiting pairs again after its
//!   commit, and the submitter had committed before it looked, so the holder adds them. A
//!   submitter killed between its two transactions leaves its pairs waiting for the next
//!   submit's advance, or at a run's end for a worker's: [`Store::stale_runs`] names the runs
//!   whose pairs waited longer than a few seconds. Meanwhile [`Store::totals`] and the
//!   prefix lag by the waiting pairs.
//! - **The verdict is judged on the prefix.** The prefix is the run's units 0 to k - 1, all
//!   counted and totalled, in unit order; an advance walks it forward over each such unit and
//!   asks the caller's rule (the SPRT) after each one, so a run decides after the same unit,
//!   on the same totals, whichever workers were fast, and as one machine playing the units in
//!   order would. A batch that is late holds the decision back by at most its lease. Pairs
//!   counted beyond a gap stay counted ([`Store::totals`]) but are not the verdict's evidence
//!   ([`QueuedRun::prefix`]).
//! - **Stopping is a state.** A run finished or stopped with [`Store::finish_run`] reaches its
//!   workers in their next heartbeat ([`Heartbeat::RunClosed`]).
//! - **Engines travel as artifacts.** [`Store::put_artifact`] keeps a binary once under its
//!   SHA-256, the engine's signature for a run (`sha256:HEX`); [`Store::artifact`] reads it
//!   back checked against the hash, so a damaged row is an error, never a binary that runs.
//! - **A tuning run can be queued too** ([`Store::queue_tuning_run`]): its batches are its
//!   steps, and [`Store::submit_tuning_batch`] counts one in one transaction keyed by (run,
//!   batch) with the update it makes, which the tuner computes inside that transaction from
//!   the values the run's last step left ([`MakeStep`]). The run's row, locked by the submit,
//!   makes one run's updates follow each other, each from the values the one before left; the
//!   steps are numbered in that order, and the batch row's key makes a second submit count
//!   nothing.
//! - **API tokens are stored hashed** (migration 9). Workers and people that reach the fleet
//!   through `arbiter serve`, without the database's credentials, hold bearer tokens
//!   ([`Store::create_token`], [`Store::authenticate`]), each with a scope
//!   ([`TokenScope::allows`]) and revocable at once for every server ([`Store::revoke_token`]).
//!   The store keeps a secret's SHA-256, never the secret, so a leaked database backup holds
//!   no usable secret. A plain fast hash is enough (no salt, no slow key derivation): a secret
//!   is 256 random bits, not a password, and no guessing reaches it from its hash. A worker
//!   registered through a token is bound to it ([`Store::register_worker_for`]), so that a
//!   token can never take over another's worker and its leases.

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod facts;
mod fleet;
mod location;
mod migrations;
mod model;
#[cfg(feature = "postgres")]
mod postgres;
mod repo;
mod run_lock;
mod spool;
mod sqlite;
mod tokens;

use std::collections::BTreeSet;

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;

pub use error::{Result, StoreError};
pub use facts::{Clock, JudgedOn, RunFacts, RunKind, SampleModel, SprtFacts, Upgrade};
pub use fleet::{
    Advanced, BatchCounts, Heartbeat, Lease, MakeStep, Prefix, Queue, QueuedRun, RunFile,
    Submitted, Worker, WorkerId, WorkerInfo,
};
pub use location::Location;
pub use model::{
    Committed, CommittedPair, CommittedStep, GameResult, GameRow, PairKey, PairRecord, PairTally,
    Pairing, ParseGameResultError, Run, RunId, RunOutcome, RunSpec, RunState, StoredGame, Totals,
    TuningMethod, TuningSetup, TuningStep,
};
pub use run_lock::RunLock;
pub use spool::{Spool, SpooledBatch};
pub use tokens::{ParseTokenScopeError, TokenId, TokenInfo, TokenScope};

pub use repo::sha256_hex;
use repo::Repo;

/// What every [`Store`] method returns: a boxed future, so that the store's code (generic over
/// the two SQL dialects, and sqlx's under it) is compiled once, here. An `async fn` body is
/// compiled again in every crate that awaits it, with all the generic code it reaches; with
/// about forty test binaries and the `arbiter` binary awaiting the store, that was most of the
/// test build. One allocation per database call costs nothing beside the call.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T>>;

/// A connection to one arbiter database. Cheap to share: wrap it in an `Arc` and call it from
/// any number of tasks (it needs a Tokio runtime).
pub struct Store {
    backend: Backend,
}

enum Backend {
    Sqlite {
        repo: Repo<sqlx::Sqlite>,
        /// The database file's canonical path: the base of its run lock files.
        file: std::path::PathBuf,
    },
    #[cfg(feature = "postgres")]
    Postgres(Repo<sqlx::Postgres>),
}

/// How [`Store::connect`] treats the database it finds.
#[derive(Clone, Copy)]
enum Open {
    /// Create it if need be, and bring its schema up to date.
    Create,
    /// Only an arbiter store that is there already, to write to.
    Existing,
    /// Only an arbiter store that is there already, to read.
    ReadOnly,
}

/// Runs `$body` with `$repo` bound to whichever backend the store has.
macro_rules! with_repo {
    ($store:expr, $repo:ident => $body:expr) => {
        match &$store.backend {
            Backend::Sqlite { repo: $repo, .. } => $body,
            #[cfg(feature = "postgres")]
            Backend::Postgres($repo) => $body,
        }
    };
}

impl Store {
    /// Opens the store at `location`, creating an SQLite file that does not exist yet, and
    /// brings its schema up to date.
    pub fn open(location: &Location) -> StoreFuture<'_, Store> {
        Box::pin(Store::connect(location, Open::Create))
    }

    /// Opens a store that exists already (to resume a run): a missing SQLite file is
    /// [`StoreError::NotFound`], and an empty file or database, like someone else's, is
    /// [`StoreError::NotArbiterDatabase`], left as it was rather than made a new store.
    pub fn open_existing(location: &Location) -> StoreFuture<'_, Store> {
        Box::pin(Store::connect(location, Open::Existing))
    }

    /// Opens a store that exists already to read it (reports, exports), refusing what
    /// [`Store::open_existing`] refuses and changing nothing: an SQLite store's connections
    /// are read-only. A store of an older arbiter is the exception: it is brought up to date in
    /// place first, as every command does, since this build reads only its own schema.
    pub fn open_read_only(location: &Location) -> StoreFuture<'_, Store> {
        Box::pin(Store::connect(location, Open::ReadOnly))
    }

    async fn connect(location: &Location, how: Open) -> Result<Store> {
        let backend = match location {
            Location::Sqlite(path) => {
                let (repo, file) = match how {
                    Open::Create => sqlite::open(path, true).await?,
                    Open::Existing => sqlite::open_existing(path, true).await?,
                    Open::ReadOnly => sqlite::open_existing(path, false).await?,
                };
                Backend::Sqlite { repo, file }
            }
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                let shown: std::sync::Arc<str> = location.to_string().into();
                Backend::Postgres(match how {
                    Open::Create => postgres::open(url, shown).await?,
                    Open::Existing | Open::ReadOnly => postgres::open_existing(url, shown).await?,
                })
            }
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => {
                return Err(StoreError::PostgresNotEnabled {
                    location: location.to_string(),
                });
            }
        };
        Ok(Store { backend })
    }

    /// The database as errors name it (a file path, or a URL without its password).
    pub fn location(&self) -> &str {
        with_repo!(self, repo => repo.location())
    }

    /// Stores a new run in state `running` with zero totals. A taken name is
    /// [`StoreError::DuplicateRunName`]: look it up with [`Store::find_run_by_name`] first. A
    /// lineup that makes no sense (fewer than two engines, a name twice, an empty name, no
    /// pairing, a pairing of an engine the run lacks or of an engine with itself) is
    /// [`StoreError::InvalidRun`], naming what is wrong.
    pub fn create_run<'a>(&'a self, spec: &'a RunSpec) -> StoreFuture<'a, RunId> {
        with_repo!(self, repo => Box::pin(repo.create_run(spec)))
    }

    /// The run with this name, if any.
    pub fn find_run_by_name<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<Run>> {
        with_repo!(self, repo => Box::pin(repo.find_run_by_name(name)))
    }

    /// The run with this id, or [`StoreError::UnknownRun`].
    pub fn run(&self, run: RunId) -> StoreFuture<'_, Run> {
        with_repo!(self, repo => Box::pin(repo.run(run)))
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> StoreFuture<'_, Vec<Run>> {
        with_repo!(self, repo => Box::pin(repo.runs()))
    }

    /// The runs created as confirmations of `run` (an SPSA run's SPRT of its tuned values
    /// against the start), oldest first; none for a run without one, or whose confirmation was
    /// created before migration 6 stored the link (until [`Store::link_confirmation`] adds it).
    pub fn confirmations(&self, run: RunId) -> StoreFuture<'_, Vec<Run>> {
        with_repo!(self, repo => Box::pin(repo.confirmations(run)))
    }

    /// Closes a running run with its verdict. A run
    /// that is already finished is [`StoreError::RunFinished`].
    pub fn finish_run(&self, run: RunId, verdict: RunOutcome) -> StoreFuture<'_, ()> {
        with_repo!(self, repo => Box::pin(repo.finish_run(run, verdict)))
    }

    /// Commits a finished pair, its two games (or an unpaired run's unit of one game) and its
    /// tally in one transaction.
    ///
    /// Returns [`Committed::AlreadyPresent`], having changed nothing, when the pair (the same
    /// pairing and index) was committed before. Refuses, having written nothing: an
    /// inconsistent tally, a pairing the run does not have or an index beyond its pairing's
    /// plan ([`StoreError::InvalidPair`]), an unknown run, a finished run.
    pub fn commit_pair<'a>(&'a self, pair: &'a PairRecord) -> StoreFuture<'a, Committed> {
        with_repo!(self, repo => Box::pin(repo.commit_pair(pair)))
    }

    /// The exclusive right to play `run` in this process, until the guard is dropped.
    ///
    /// Take it before reading [`Store::committed_pairs`] to resume, and hold it until
    /// the run is finished or abandoned: two processes playing one run would both play the
    /// missing pairs. Refused at once with [`StoreError::RunBusy`], naming the holder, while
    /// another guard of the run lives, in this process or any other on the same database (on
    /// PostgreSQL after a grace of three seconds, see the crate docs). The lock ends with the
    /// process, however it ends, so a run killed with SIGKILL can be resumed at once.
    pub fn lock_run(&self, run: RunId) -> StoreFuture<'_, RunLock> {
        match &self.backend {
            Backend::Sqlite { repo, file } => Box::pin(sqlite::lock_run(repo, file, run)),
            #[cfg(feature = "postgres")]
            Backend::Postgres(repo) => Box::pin(postgres::lock_run(repo, run)),
        }
    }

    /// The run's totals: the sums of its committed pairs over all pairings (for a match, its
    /// one pairing's, from the first engine's side). A queued run's are its advance's: a
    /// batch submitted a moment ago may not be in them yet ([`Store::advance`]).
    pub fn totals(&self, run: RunId) -> StoreFuture<'_, Totals> {
        with_repo!(self, repo => Box::pin(repo.totals(run)))
    }

    /// Each pairing's totals, from its first engine's side, indexed by pairing number; a
    /// pairing without committed pairs has zero totals. Kept by the same transaction that
    /// commits each pair, so they always add up to [`Store::totals`].
    pub fn pairing_totals(&self, run: RunId) -> StoreFuture<'_, Vec<Totals>> {
        with_repo!(self, repo => Box::pin(repo.pairing_totals(run)))
    }

    /// The keys of the run's committed pairs: what a resumed run must not play again.
    pub fn committed_pairs(&self, run: RunId) -> StoreFuture<'_, BTreeSet<PairKey>> {
        with_repo!(self, repo => Box::pin(repo.committed_pairs(run)))
    }

    /// The run's pairs as they were committed, streamed, with `sequence` 1, 2, 3 ...: the path
    /// the statistics took, which a report draws one point per pair. An unknown run yields no
    /// pairs.
    pub fn pairs_in_commit_order(&self, run: RunId) -> BoxStream<'_, Result<CommittedPair>> {
        with_repo!(self, repo => repo.pairs_in_commit_order(run))
    }

    /// The run's games in the order the runner numbered them (`game_number`, then pairing, pair
    /// and game), streamed (a run may hold 100k games). An unknown run yields no games.
    pub fn games(&self, run: RunId) -> BoxStream<'_, Result<StoredGame>> {
        with_repo!(self, repo => repo.games(run))
    }

    /// Stores a new tuning run: the run as [`Store::create_run`] stores it (refusing the same
    /// things) and its set-up, in one transaction, so that no run exists without what it tunes.
    pub fn create_tuning_run<'a>(
        &'a self,
        spec: &'a RunSpec,
        setup: &'a TuningSetup,
    ) -> StoreFuture<'a, RunId> {
        with_repo!(self, repo => Box::pin(repo.create_run_with(spec, Some(setup), None)))
    }

    /// The set-up a tuning run was created with; `None` for a run that is not a tuning run (a
    /// match). An unknown run is [`StoreError::UnknownRun`].
    pub fn tuning_setup(&self, run: RunId) -> StoreFuture<'_, Option<TuningSetup>> {
        with_repo!(self, repo => Box::pin(repo.tuning_setup(run)))
    }

    /// Commits a finished tuning step in one transaction, keyed by (run, step).
    ///
    /// Returns [`Committed::AlreadyPresent`], having changed nothing, for a step committed
    /// before (a replay after a kill). Refuses, having written nothing: counts that are not the
    /// games of the step's pairs, a step beyond the next one (steps follow each other with no
    /// gap, each starting from the values the one before left), a run that is not a tuning run
    /// ([`StoreError::InvalidStep`]), an unknown run, a finished run.
    pub fn commit_step<'a>(
        &'a self,
        run: RunId,
        step: &'a TuningStep,
    ) -> StoreFuture<'a, Committed> {
        with_repo!(self, repo => Box::pin(repo.commit_step(run, step)))
    }

    /// The committed steps of a tuning run, oldest first: the path the values took, and where a
    /// resumed run starts (after the last one). An unknown run is [`StoreError::UnknownRun`].
    pub fn tuning_steps(&self, run: RunId) -> StoreFuture<'_, Vec<CommittedStep>> {
        with_repo!(self, repo => Box::pin(repo.tuning_steps(run)))
    }

    /// Stores a new run queued for workers: the run as [`Store::create_run`] stores it
    /// (refusing the same things), cut into batches of `queue.batch_units` schedule units, with
    /// its files and its engines' known signatures, in one transaction. A run that is queued
    /// is played by [`Store::claim_batch`] and [`Store::submit_batch`], not by a local
    /// [`Store::commit_pair`] loop (which would not advance its prefix).
    pub fn queue_run<'a>(&'a self, spec: &'a RunSpec, queue: &'a Queue) -> StoreFuture<'a, RunId> {
        with_repo!(self, repo => Box::pin(repo.create_run_with(spec, None, Some(queue))))
    }

    /// Stores a new tuning run queued for workers: [`Store::queue_run`] with the run's
    /// set-up, as [`Store::create_tuning_run`] stores it, in one transaction. Its batches are
    /// played by [`Store::claim_batch`] and counted by [`Store::submit_tuning_batch`].
    pub fn queue_tuning_run<'a>(
        &'a self,
        spec: &'a RunSpec,
        setup: &'a TuningSetup,
        queue: &'a Queue,
    ) -> StoreFuture<'a, RunId> {
        with_repo!(self, repo => Box::pin(repo.create_run_with(spec, Some(setup), Some(queue))))
    }

    /// Registers a worker by name (a worker restarted under its name is the same worker), or
    /// updates the one of that name.
    pub fn register_worker<'a>(&'a self, info: &'a WorkerInfo) -> StoreFuture<'a, WorkerId> {
        with_repo!(self, repo => Box::pin(repo.register_worker(info)))
    }

    /// Registers a worker that reached the fleet through `token` (`arbiter serve`), as
    /// [`Store::register_worker`] does (the same name is the same worker, its contact
    /// refreshed), bound to the token. `None`, having changed nothing, when the name is a
    /// worker bound to another token or to none (one registered on the database directly): a
    /// token can never take over another's worker and its leases. Whether the token is still
    /// live is the caller's check ([`Store::authenticate`]).
    pub fn register_worker_for<'a>(
        &'a self,
        info: &'a WorkerInfo,
        token: TokenId,
    ) -> StoreFuture<'a, Option<WorkerId>> {
        with_repo!(self, repo => Box::pin(repo.register_worker_for(info, token)))
    }

    /// The token `worker` was registered through ([`Store::register_worker_for`]); `None` for
    /// a worker registered on the database directly. An unknown worker is
    /// [`StoreError::UnknownWorker`].
    pub fn worker_token(&self, worker: WorkerId) -> StoreFuture<'_, Option<TokenId>> {
        with_repo!(self, repo => Box::pin(repo.worker_token(worker)))
    }

    /// Stores an engine's binary once, under its SHA-256 (hex, returned): a run whose engine
    /// signature is `sha256:HEX` can then be played by workers that lack the binary
    /// ([`Store::artifact`]). Storing the same bytes again stores nothing.
    pub fn put_artifact<'a>(&'a self, content: &'a [u8]) -> StoreFuture<'a, String> {
        with_repo!(self, repo => Box::pin(repo.put_artifact(content)))
    }

    /// The artifact stored under `sha256` (hex), checked against its hash ([`StoreError::Corrupt`]
    /// if it does not match); `None` if there is none.
    pub fn artifact<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        with_repo!(self, repo => Box::pin(repo.artifact(sha256)))
    }

    /// Creates an API token named `name` and returns it with its secret, which is shown
    /// here once and never again: the store keeps only its SHA-256. The secret is `arb_`
    /// followed by 43 characters, the URL-safe base64 of 32 random bytes from the operating
    /// system. A taken name, a revoked token's too, is [`StoreError::DuplicateTokenName`]; an
    /// empty one [`StoreError::InvalidToken`].
    pub fn create_token<'a>(
        &'a self,
        name: &'a str,
        scope: TokenScope,
    ) -> StoreFuture<'a, (TokenInfo, String)> {
        with_repo!(self, repo => Box::pin(repo.create_token(name, scope)))
    }

    /// The live token whose secret this is; `None` for a revoked token's secret and for any
    /// other text (an unknown or malformed secret is not an error).
    pub fn authenticate<'a>(&'a self, secret: &'a str) -> StoreFuture<'a, Option<TokenInfo>> {
        with_repo!(self, repo => Box::pin(repo.authenticate(secret)))
    }

    /// Revokes the token named `name`, at once for every server on the database, and returns
    /// it. Revoking it again changes nothing (it keeps the first time); an unknown name is
    /// [`StoreError::UnknownToken`].
    pub fn revoke_token<'a>(&'a self, name: &'a str) -> StoreFuture<'a, TokenInfo> {
        with_repo!(self, repo => Box::pin(repo.revoke_token(name)))
    }

    /// Every token, live and revoked, by name.
    pub fn tokens(&self) -> StoreFuture<'_, Vec<TokenInfo>> {
        with_repo!(self, repo => Box::pin(repo.tokens()))
    }

    /// Every worker the database has heard from, by name.
    pub fn workers(&self) -> StoreFuture<'_, Vec<Worker>> {
        with_repo!(self, repo => Box::pin(repo.workers()))
    }

    /// Leases the next batch to `worker` for `lease_ms` milliseconds of the database's clock:
    /// its own unexpired lease first (a restarted worker resumes it), else the first open or
    /// expired batch of the highest-priority running queued run (oldest on a tie) not in
    /// `excluded` (runs whose engines the worker cannot provide) and below its worker limit.
    /// `None` when nothing is left to play. An expired lease is taken here: there is no
    /// sweeper.
    pub fn claim_batch<'a>(
        &'a self,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &'a [RunId],
    ) -> StoreFuture<'a, Option<Lease>> {
        with_repo!(self, repo => Box::pin(repo.claim_batch(worker, lease_ms, excluded)))
    }

    /// Extends a lease by `lease_ms` from now, or says that it moved on or that the run is
    /// over (the worker then drops the batch).
    pub fn heartbeat<'a>(&'a self, lease: &'a Lease, lease_ms: i64) -> StoreFuture<'a, Heartbeat> {
        with_repo!(self, repo => Box::pin(repo.heartbeat(lease, lease_ms)))
    }

    /// Gives a leased batch back to the queue at once; `false` if it was no longer the
    /// worker's.
    pub fn release_batch<'a>(&'a self, lease: &'a Lease) -> StoreFuture<'a, bool> {
        with_repo!(self, repo => Box::pin(repo.release_batch(lease)))
    }

    /// Counts a played batch exactly once and advances its run: its pairs and games and the
    /// batch marked done (with the engines' `signatures` it was played with) in one
    /// transaction ([`Store::count_batch`]), then [`Store::advance`] with `decide`. Refuses,
    /// having written nothing, a batch whose pairs are not exactly its units
    /// ([`StoreError::InvalidBatch`]). The prefix and verdict reported are this submit's
    /// advance's; when another advance of the run was under way, that one adds this batch, and
    /// the prefix reported is the one stored.
    pub fn submit_batch<'a>(
        &'a self,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
        decide: &'a mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
    ) -> StoreFuture<'a, Submitted> {
        with_repo!(self, repo => Box::pin(repo.submit_batch(lease, pairs, signatures, decide)))
    }

    /// The first half of [`Store::submit_batch`] alone: the batch counted, its pairs not yet
    /// in the run's totals, the prefix reported as it stands. [`Store::advance`] totals them.
    pub fn count_batch<'a>(
        &'a self,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
    ) -> StoreFuture<'a, Submitted> {
        with_repo!(self, repo => Box::pin(repo.count_batch(lease, pairs, signatures)))
    }

    /// Adds every batch of `run` counted since the last advance to the run's totals and its
    /// pairings' (giving their pairs their places in the commit order), moves the prefix over
    /// the units now counted in order, asking `decide` after each (the SPRT on the prefix's
    /// totals), and closes the run on a verdict or at its last unit. If another process is
    /// advancing the run, returns at once ([`Advanced::busy`]): that one adds these batches.
    pub fn advance<'a>(
        &'a self,
        run: RunId,
        decide: &'a mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
    ) -> StoreFuture<'a, Advanced> {
        with_repo!(self, repo => Box::pin(repo.advance(run, decide)))
    }

    /// The runs with a batch counted more than `older_than` ago whose pairs no advance has
    /// totalled: its submitter died between counting and advancing, and no later submit of
    /// the run advanced it. A worker advances them ([`Store::advance`]) with each run's rule.
    pub fn stale_runs(&self, older_than: std::time::Duration) -> StoreFuture<'_, Vec<RunId>> {
        let older_than_ms = i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
        with_repo!(self, repo => Box::pin(repo.stale_runs(older_than_ms)))
    }

    /// Counts a played batch of a queued tuning run exactly once, in one transaction: `make`
    /// is given the next step's number and the values the last committed step left (the
    /// tuner's JSON; `None` before the first step) and returns the step, whose update is then
    /// stored under its key with the batch marked done (with `tally`, its games from the plus
    /// side, and the engines' `signatures`), and the run is closed when its last batch is
    /// counted. Updates of one run follow each other, each from the values the one before
    /// left, whichever workers submit at once. A second submit of a counted batch counts
    /// nothing ([`Submitted::AlreadyCounted`]); `make`'s refusal is
    /// [`StoreError::InvalidStep`], and nothing is written.
    pub fn submit_tuning_batch<'a>(
        &'a self,
        lease: &'a Lease,
        tally: &'a Totals,
        signatures: &'a str,
        make: &'a mut MakeStep<'_>,
    ) -> StoreFuture<'a, Submitted> {
        with_repo!(self, repo => Box::pin(repo.submit_tuning_batch(lease, tally, signatures, make)))
    }

    /// The queued runs, highest priority first, with their batches' progress, prefix and
    /// totals.
    pub fn queued_runs(&self) -> StoreFuture<'_, Vec<QueuedRun>> {
        with_repo!(self, repo => Box::pin(repo.queued_runs()))
    }

    /// Each engine's signature in `run`, in engine order (`None`: not yet known).
    pub fn engine_signatures(&self, run: RunId) -> StoreFuture<'_, Vec<Option<String>>> {
        with_repo!(self, repo => Box::pin(repo.engine_signatures(run)))
    }

    /// Sets the signatures not yet known to `signatures` and returns them all as stored.
    pub fn adopt_signatures<'a>(
        &'a self,
        run: RunId,
        signatures: &'a [String],
    ) -> StoreFuture<'a, Vec<Option<String>>> {
        with_repo!(self, repo => Box::pin(repo.adopt_signatures(run, signatures)))
    }

    /// The files stored with `run` (its book), checked against their SHA-256.
    pub fn run_files(&self, run: RunId) -> StoreFuture<'_, Vec<RunFile>> {
        with_repo!(self, repo => Box::pin(repo.run_files(run)))
    }

    /// Closes the connections, letting SQLite checkpoint its WAL into the database file.
    /// Dropping a store without closing loses nothing either.
    pub fn close(self) -> BoxFuture<'static, ()> {
        Box::pin(async move { with_repo!(self, repo => repo.close().await) })
    }

    /// Stores the facts of a run created before the store kept them (schema 6), computed from
    /// its stored configuration by the runner (`arbiter_runner::lifecycle::older_run_facts`),
    /// so that every later reader finds them as a new run's. Facts already stored are never
    /// overwritten: they were decided when the run was created, by the check of that day.
    /// Returns whether it wrote them. An unknown run is [`StoreError::UnknownRun`].
    pub fn fill_facts<'a>(&'a self, run: RunId, facts: &'a RunFacts) -> StoreFuture<'a, bool> {
        with_repo!(self, repo => Box::pin(repo.fill_facts(run, facts)))
    }

    /// Links `run`, a confirmation SPRT created before the store kept the link, to the tuning
    /// run `confirms` it confirms, so that [`Store::confirmations`] finds it. A link already
    /// stored is never changed. Returns whether it wrote one; an unknown run is
    /// [`StoreError::UnknownRun`], an unknown `confirms` the database's foreign key error.
    pub fn link_confirmation(&self, run: RunId, confirms: RunId) -> StoreFuture<'_, bool> {
        with_repo!(self, repo => Box::pin(repo.link_confirmation(run, confirms)))
    }

    /// Writes what `upgrade` supplies ([`Store::fill_facts`], [`Store::link_confirmation`]),
    /// never overwriting what is stored.
    pub fn upgrade<'a>(&'a self, upgrade: &'a Upgrade) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            for (run, facts) in &upgrade.facts {
                self.fill_facts(*run, facts).await?;
            }
            for (confirmation, tuning) in &upgrade.confirms {
                self.link_confirmation(*confirmation, *tuning).await?;
            }
            Ok(())
        })
    }
}
