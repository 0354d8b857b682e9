//! The store's SQL, written once for every dialect.
//!
//! [`Repo`] is generic over the sqlx [`Database`]; what differs between SQLite and PostgreSQL is
//! the [`Dialect`] trait (three constants) and the migrations. The queries use only what both
//! dialects accept: `$n` placeholders (SQLite reads `$1` as parameter 1), `INSERT ... ON CONFLICT
//! ... DO NOTHING`, `RETURNING` (SQLite 3.35+, and sqlx bundles a newer one), 64-bit integers and
//! text. Times are integer milliseconds computed here, not `now()`, so no date function is needed.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use sqlx::error::ErrorKind;
use sqlx::migrate::Migrate;
use sqlx::query::Query;
use sqlx::{
    ColumnIndex, Connection, Database, Decode, Encode, Executor, IntoArguments, Pool, Row, Type,
};

use crate::error::{Result, StoreError};
use crate::facts::RunFacts;
use crate::fleet::Queue;
use crate::migrations::{self, Source};
use crate::model::{
    Committed, CommittedPair, CommittedStep, GameResult, GameRow, PairKey, PairRecord, PairTally,
    Pairing, Run, RunId, RunOutcome, RunSpec, RunState, StoredGame, Totals, TuningSetup,
    TuningStep,
};

mod artifacts;
mod batches;
mod tokens;

pub use batches::sha256_hex;
use batches::QueueRefused;

/// What differs between the SQL dialects, beyond their migrations.
pub(crate) trait Dialect: Database {
    /// The dialect's migrations, oldest first.
    const MIGRATIONS: &'static [Source];
    /// Names the tables of the database (PostgreSQL: of the current schema), one text column.
    const LIST_TABLES: &'static str;
    /// Starts a transaction that will write.
    ///
    /// SQLite's plain `BEGIN` takes the write lock only at the first write; if another process
    /// wrote in between, SQLite returns "database is locked" at once instead of waiting.
    /// `BEGIN IMMEDIATE` takes the lock up front, under the busy timeout.
    const BEGIN_WRITE: &'static str;
    /// Starts a transaction that changes only leases and workers' last contact (a claim, a
    /// heartbeat, a release): on PostgreSQL it commits without waiting for the WAL flush
    /// (`synchronous_commit = off` for that transaction alone). A lease is soft state: a
    /// database crash may forget the last fraction of a second of them, which costs at most a
    /// batch played twice and counted once (the submit, which counts, waits for the flush).
    const BEGIN_LEASE: &'static str;
    /// The database's clock in milliseconds since the Unix epoch, as an SQL expression: leases
    /// are timed by it, so that workers whose clocks disagree still agree on when one expired.
    const NOW_MS: &'static str;
    /// Locks the rows a `SELECT` returns until the transaction ends (PostgreSQL's `FOR
    /// UPDATE`; nothing on SQLite, whose write transaction has the whole file).
    const FOR_UPDATE: &'static str;
    /// [`Dialect::FOR_UPDATE`] of table alias `b`, skipping rows another transaction holds:
    /// a queue's claim (PostgreSQL's `FOR UPDATE OF b SKIP LOCKED`).
    const SKIP_LOCKED: &'static str;
    /// An advance's lock of a run's totals and prefix rows (aliases `t` and `p`), skipping
    /// them if another transaction holds them: that one advances the run; and a share lock of
    /// the run's row (alias `r`). The share lock is what makes the row's state the one current
    /// when the lock was taken: PostgreSQL rereads a locked row that changed after the
    /// statement's snapshot, but an unlocked one is read as of the snapshot, so an advance
    /// that waited out the one closing the run saw the new prefix and the old `running`, and
    /// walked the closed run's prefix on (PostgreSQL's `FOR UPDATE OF t, p SKIP LOCKED FOR
    /// SHARE OF r`; nothing on SQLite, where nobody else can hold them).
    const ADVANCE_LOCK: &'static str;
    /// A submit's locks: its batch's row (alias `b`) for update, its run's row (alias `r`)
    /// shared, so that submits pass each other but closing the run waits for them
    /// (PostgreSQL's `FOR UPDATE OF b FOR SHARE OF r`; nothing on SQLite).
    const SUBMIT_LOCK: &'static str;
}

/// What a database holds, as [`Repo::check_existing`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schema {
    /// No tables: a new file, or an empty one.
    Empty,
    /// An arbiter store that lacks this build's newest migrations.
    Older,
    /// An arbiter store of this build's schema.
    Current,
}

/// The columns of a [`Run`]'s row, in the order [`Repo::decode_run`] reads them. Its engines
/// and pairings come from their own tables ([`Repo::read_run`]).
const RUN_COLUMNS: &str = "SELECT id, name, seed, config, state, verdict, created_at_ms, \
    updated_at_ms, facts, confirms_run FROM runs";

/// The counts of [`Totals`], in the order [`Repo::decode_totals`] reads them: the columns that
/// `run_totals` and `run_pairings` share.
const TALLY_COLUMNS: &str =
    "pairs, wins, draws, losses, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww";

/// Adds one pair to the counts of [`TALLY_COLUMNS`], the same for the run's totals and its
/// pairing's: parameters `$2` to `$9`, bound by [`with_tally`].
const ADD_TALLY: &str = "pairs = pairs + 1, wins = wins + $2, draws = draws + $3, \
    losses = losses + $4, penta_ll = penta_ll + $5, penta_ld = penta_ld + $6, \
    penta_dd = penta_dd + $7, penta_dw = penta_dw + $8, penta_ww = penta_ww + $9";

/// Adds a batch's [`Totals`] to the counts of [`TALLY_COLUMNS`]: parameters `$2` to `$10`,
/// bound in that order (`batches::with_totals`).
const ADD_TOTALS: &str = "pairs = pairs + $2, wins = wins + $3, draws = draws + $4, \
    losses = losses + $5, penta_ll = penta_ll + $6, penta_ld = penta_ld + $7, \
    penta_dd = penta_dd + $8, penta_dw = penta_dw + $9, penta_ww = penta_ww + $10";

/// A store on one database: a pool that writes and a pool that reads (the same pool where the
/// database allows concurrent writers).
pub(crate) struct Repo<DB: Database> {
    writer: Pool<DB>,
    reader: Pool<DB>,
    location: Arc<str>,
}

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
    /// Wraps pools that are already connected; call [`Repo::prepare`] before anything else.
    pub(crate) fn new(writer: Pool<DB>, reader: Pool<DB>, location: Arc<str>) -> Self {
        Repo {
            writer,
            reader,
            location,
        }
    }

    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The pool that writes (the one pool, on PostgreSQL).
    #[cfg_attr(
        not(feature = "postgres"),
        allow(dead_code, reason = "used by the PostgreSQL backend only")
    )]
    pub(crate) fn writer(&self) -> &Pool<DB> {
        &self.writer
    }

    /// The pool that reads.
    pub(crate) fn reader(&self) -> &Pool<DB> {
        &self.reader
    }

    /// Checks that the database is arbiter's (or empty) and no newer than this build, then
    /// applies the migrations it lacks, as one exclusive step.
    ///
    /// Processes that open one new database at once must not both find it empty and both create
    /// its tables (the second failing with "table runs already exists"). So the check and the
    /// migrations run on one connection holding the database's write lock from before the check
    /// to after the last migration: sqlx's migration lock (a PostgreSQL advisory lock; nothing on
    /// SQLite) and a transaction begun with [`Dialect::BEGIN_WRITE`] (on SQLite `BEGIN
    /// IMMEDIATE`, which waits for other writers under the busy timeout). The others wait, then
    /// find the schema current and change nothing. Each migration runs in a savepoint inside
    /// that transaction, so a failure leaves the database as it was.
    pub(crate) async fn prepare(&self) -> Result<()> {
        let mut conn = self
            .writer
            .acquire()
            .await
            .map_err(|e| self.fail("connecting", e))?;
        conn.lock().await.map_err(|e| self.migrate_failed(e))?;
        let prepared = self.check_and_migrate(&mut conn).await;
        let unlocked = conn.unlock().await.map_err(|e| self.migrate_failed(e));
        prepared.and(unlocked)
    }

    async fn check_and_migrate(&self, conn: &mut DB::Connection) -> Result<()> {
        let operation = "checking the schema";
        // `AssertSqlSafe`: with the bare `&'static str`, rustc cannot prove this future `Send`
        // for the store's boxed futures (a higher-ranked lifetime it does not see through).
        let mut tx = conn
            .begin_with(sqlx::AssertSqlSafe(DB::BEGIN_WRITE))
            .await
            .map_err(|e| self.fail(operation, e))?;
        // An empty database is given its tables; an older arbiter's is brought up to date.
        self.schema(&mut *tx).await?;
        migrations::migrator(DB::MIGRATIONS)
            .run_direct(None, &mut *tx, false)
            .await
            .map_err(|e| self.migrate_failed(e))?;
        tx.commit().await.map_err(|e| self.fail(operation, e))
    }

    /// Checks, changing nothing, that the database is an arbiter store already (for a report,
    /// which must not turn a mistyped path, an empty file or someone else's database into a
    /// store): an empty database is [`StoreError::NotArbiterDatabase`], like a foreign one.
    pub(crate) async fn check_existing(&self) -> Result<Schema> {
        let mut conn = self
            .reader
            .acquire()
            .await
            .map_err(|e| self.fail("connecting", e))?;
        match self.schema(&mut *conn).await? {
            Schema::Empty => Err(self.not_ours("it is empty".into())),
            found => Ok(found),
        }
    }

    /// What the database holds: nothing, an arbiter schema (this build's or older), or what
    /// arbiter refuses (someone else's tables, a newer arbiter's schema) as an error.
    async fn schema(&self, conn: &mut DB::Connection) -> Result<Schema> {
        let tables: Vec<String> = sqlx::query(DB::LIST_TABLES)
            .fetch_all(&mut *conn)
            .await
            .map_err(|e| self.fail("reading the list of tables", e))?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| self.fail("reading the list of tables", e))?;
        let has = |name: &str| tables.iter().any(|t| t == name);
        let applied: Option<i64> = if has("_sqlx_migrations") {
            sqlx::query("SELECT MAX(version) FROM _sqlx_migrations")
                .fetch_one(&mut *conn)
                .await
                .and_then(|row| row.try_get(0))
                .map_err(|e| self.fail("reading the schema version", e))?
        } else {
            None
        };
        let supported = migrations::latest(DB::MIGRATIONS);
        match applied {
            None => {
                let others: Vec<&str> = tables
                    .iter()
                    .map(String::as_str)
                    .filter(|&t| t != "_sqlx_migrations")
                    .collect();
                if others.is_empty() {
                    Ok(Schema::Empty)
                } else {
                    Err(self.not_ours(format!("it already has tables: {}", others.join(", "))))
                }
            }
            Some(found) if !has("runs") => Err(self.not_ours(format!(
                "its schema (version {found}) is some other program's"
            ))),
            Some(found) if found > supported => Err(StoreError::NewerSchema {
                location: self.location.to_string(),
                found,
                supported,
            }),
            Some(found) if found < supported => Ok(Schema::Older),
            Some(_) => Ok(Schema::Current),
        }
    }

    /// Stores a new run, with zero totals, in state `running`: the run, its engines and its
    /// pairings in one transaction.
    pub(crate) async fn create_run(&self, spec: &RunSpec) -> Result<RunId> {
        self.create_run_with(spec, None, None).await
    }

    /// [`Repo::create_run`], and for a tuning run its set-up, in the same transaction.
    pub(crate) async fn create_run_with(
        &self,
        spec: &RunSpec,
        tuning: Option<&TuningSetup>,
        queue: Option<&Queue>,
    ) -> Result<RunId> {
        let invalid = |reason: String| StoreError::InvalidRun {
            location: self.location.to_string(),
            name: spec.name.clone(),
            reason,
        };
        if let Some(reason) = spec.inconsistency() {
            return Err(invalid(reason));
        }
        let planned = i64::try_from(spec.pairs_planned())
            .map_err(|_| invalid("the planned pairs exceed 2^63 - 1".into()))?;
        let now = now_ms();
        let operation = || format!("creating run {:?}", spec.name);
        let mut tx = self.begin_write(&operation).await?;
        // The old columns keep meaning what they meant for a two-engine run (the migration's
        // header says why): engines 0 and 1, and the plan of all pairings.
        let id: Option<i64> = sqlx::query(
            "INSERT INTO runs (name, seed, config, first_engine, second_engine, pairs_planned, \
             state, created_at_ms, updated_at_ms, facts, confirms_run) \
             VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $7, $8, $9) \
             ON CONFLICT (name) DO NOTHING RETURNING id",
        )
        .bind(spec.name.as_str())
        .bind(seed_to_i64(spec.seed))
        .bind(spec.config.as_str())
        .bind(spec.engines[0].as_str())
        .bind(spec.engines[1].as_str())
        .bind(planned)
        .bind(now)
        .bind(spec.facts.as_ref().map(RunFacts::to_json))
        .bind(spec.confirms.map(RunId::get))
        .fetch_optional(&mut *tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        let Some(id) = id else {
            drop(tx);
            return Err(match self.find_run_by_name(&spec.name).await? {
                Some(existing) => StoreError::DuplicateRunName {
                    location: self.location.to_string(),
                    name: spec.name.clone(),
                    existing: existing.id,
                },
                None => self.corrupt(
                    "runs",
                    format!("the name {:?} conflicts but no run has it", spec.name),
                ),
            });
        };
        sqlx::query("INSERT INTO run_totals (run_id) VALUES ($1)")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        for (index, name) in (0_i64..).zip(&spec.engines) {
            sqlx::query("INSERT INTO run_engines (run_id, engine_index, name) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(index)
                .bind(name.as_str())
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
        }
        for (number, pairing) in (0_i64..).zip(&spec.pairings) {
            // `inconsistency` has bounded every value by the engine count or the total plan.
            let as_i64 = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO run_pairings (run_id, pairing, first_engine, second_engine, \
                 pairs_planned) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id)
            .bind(number)
            .bind(as_i64(pairing.first as u64))
            .bind(as_i64(pairing.second as u64))
            .bind(as_i64(pairing.pairs_planned))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        }
        if let Some(tuning) = tuning {
            sqlx::query("INSERT INTO tuning_runs (run_id, method, setup) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(tuning.method.as_str())
                .bind(tuning.setup.as_str())
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
        }
        if let Some(queue) = queue {
            self.insert_queue(&mut tx, RunId::new(id), spec, queue)
                .await
                .map_err(|e| match e {
                    QueueRefused::Invalid(reason) => invalid(reason),
                    QueueRefused::Store(e) => e,
                })?;
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(RunId::new(id))
    }

    pub(crate) async fn tuning_setup(&self, run: RunId) -> Result<Option<TuningSetup>> {
        // An unknown run must not look like a run that is not a tuning run.
        self.run(run).await?;
        let operation = || format!("reading the tuning set-up of run {run}");
        let row = sqlx::query("SELECT method, setup FROM tuning_runs WHERE run_id = $1")
            .bind(run.get())
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        let Some(row) = row else { return Ok(None) };
        let method: String = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
        Ok(Some(TuningSetup {
            method: method
                .parse()
                .map_err(|reason: String| self.corrupt("tuning_runs", reason))?,
            setup: row.try_get(1).map_err(|e| self.fail(operation(), e))?,
        }))
    }

    /// The one transaction that makes a tuning step count.
    pub(crate) async fn commit_step(&self, run: RunId, step: &TuningStep) -> Result<Committed> {
        let operation = || format!("committing step {} of run {run}", step.step);
        let counts = self.step_counts(run, step)?;
        let now = now_ms();
        let mut tx = self.begin_write(&operation).await?;

        // 1. Only a running run takes steps (and on PostgreSQL this locks its row, so that
        //    steps and `finish_run` of one run go one at a time).
        if self
            .touch_running(&mut tx, run, now, &operation)
            .await?
            .is_none()
        {
            drop(tx);
            return Err(self.why_closed(run).await);
        }

        // 2. Steps follow each other: step s starts from the values step s - 1 left, so a gap
        //    is a tuner's bug, never a state to keep.
        let Some(next) = self.next_step(&mut tx, run, &operation).await? else {
            drop(tx);
            return Err(self.invalid_step(run, step, format!("run {run} is not a tuning run")));
        };
        if step.step > next {
            drop(tx);
            return Err(self.invalid_step(
                run,
                step,
                format!("the run has {next} committed step(s), so the next is step {next}"),
            ));
        }

        // 3. The exactly-once key. A step already present inserts nothing and changes nothing.
        let inserted = self
            .insert_step(&mut tx, run, step, counts, now, &operation)
            .await?;
        if !inserted {
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            return Ok(Committed::AlreadyPresent);
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(Committed::Inserted)
    }

    fn invalid_step(&self, run: RunId, step: &TuningStep, reason: String) -> StoreError {
        StoreError::InvalidStep {
            location: self.location.to_string(),
            run,
            step: step.step,
            reason,
        }
    }

    /// A step's counts as the database's integers, or why they cannot be a step's.
    fn step_counts(&self, run: RunId, step: &TuningStep) -> Result<[i64; 11]> {
        if let Some(reason) = step.inconsistency() {
            return Err(self.invalid_step(run, step, reason));
        }
        let t = &step.totals;
        let counts = [
            step.step,
            step.iteration,
            t.pairs,
            t.wins,
            t.draws,
            t.losses,
            t.pentanomial[0],
            t.pentanomial[1],
            t.pentanomial[2],
            t.pentanomial[3],
            t.pentanomial[4],
        ]
        .map(i64::try_from);
        if counts.iter().any(Result::is_err) {
            return Err(self.invalid_step(run, step, "a count exceeds 2^63 - 1".into()));
        }
        Ok(counts.map(|c| c.unwrap_or(i64::MAX)))
    }

    /// The number the next step of tuning run `run` takes (its committed steps), inside `tx`;
    /// `None` if `run` is not a tuning run.
    pub(crate) async fn next_step(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        operation: &impl Fn() -> String,
    ) -> Result<Option<u64>> {
        let next: Option<i64> = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM tuning_steps WHERE run_id = $1) \
             FROM tuning_runs WHERE run_id = $1",
        )
        .bind(run.get())
        .fetch_optional(&mut **tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        next.map(|n| self.non_negative(n, "tuning_steps"))
            .transpose()
    }

    /// Inserts `step` of `run` under its exactly-once key (run, step) inside `tx`; `false` if
    /// that step is present already (nothing is changed).
    pub(crate) async fn insert_step(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        step: &TuningStep,
        counts: [i64; 11],
        now: i64,
        operation: &impl Fn() -> String,
    ) -> Result<bool> {
        let inserted = sqlx::query(
            "INSERT INTO tuning_steps (run_id, step, iteration, pairs, wins, draws, losses, \
             penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, perturbation, theta, \
             committed_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
             $14, $15) ON CONFLICT (run_id, step) DO NOTHING RETURNING step",
        )
        .bind(run.get())
        .bind(counts[0])
        .bind(counts[1])
        .bind(counts[2])
        .bind(counts[3])
        .bind(counts[4])
        .bind(counts[5])
        .bind(counts[6])
        .bind(counts[7])
        .bind(counts[8])
        .bind(counts[9])
        .bind(counts[10])
        .bind(step.perturbation.as_str())
        .bind(step.theta.as_str())
        .bind(now)
        .fetch_optional(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        Ok(inserted.is_some())
    }

    pub(crate) async fn tuning_steps(&self, run: RunId) -> Result<Vec<CommittedStep>> {
        self.run(run).await?;
        let operation = || format!("reading the tuning steps of run {run}");
        let rows = sqlx::query(
            "SELECT step, iteration, pairs, wins, draws, losses, penta_ll, penta_ld, penta_dd,              penta_dw, penta_ww, perturbation, theta, committed_at_ms FROM tuning_steps              WHERE run_id = $1 ORDER BY step",
        )
        .bind(run.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        let mut steps = Vec::with_capacity(rows.len());
        for (expected, row) in (0_u64..).zip(&rows) {
            let decoded = (|| -> Result<CommittedStep, Decoded> {
                let count = |i: usize| -> Result<u64, Decoded> {
                    let value: i64 = row.try_get(i)?;
                    Ok(self.non_negative(value, "tuning_steps")?)
                };
                Ok(CommittedStep {
                    step: TuningStep {
                        step: count(0)?,
                        iteration: count(1)?,
                        totals: Totals {
                            pairs: count(2)?,
                            wins: count(3)?,
                            draws: count(4)?,
                            losses: count(5)?,
                            pentanomial: [count(6)?, count(7)?, count(8)?, count(9)?, count(10)?],
                        },
                        perturbation: row.try_get(11)?,
                        theta: row.try_get(12)?,
                    },
                    committed_at: time_from_ms(row.try_get(13)?),
                })
            })()
            .map_err(|e| self.decoded(e, operation))?;
            if decoded.step.step != expected {
                return Err(
                    self.corrupt("tuning_steps", format!("run {run} lacks step {expected}"))
                );
            }
            steps.push(decoded);
        }
        Ok(steps)
    }

    pub(crate) async fn find_run_by_name(&self, name: &str) -> Result<Option<Run>> {
        let operation = || format!("looking up run {name:?}");
        let sql = format!("{RUN_COLUMNS} WHERE name = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        match row {
            Some(row) => Ok(Some(self.read_run(&row).await?)),
            None => Ok(None),
        }
    }

    pub(crate) async fn run(&self, run: RunId) -> Result<Run> {
        let sql = format!("{RUN_COLUMNS} WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(run.get())
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(format!("reading run {run}"), e))?;
        match row {
            Some(row) => self.read_run(&row).await,
            None => Err(self.unknown(run)),
        }
    }

    pub(crate) async fn runs(&self) -> Result<Vec<Run>> {
        let sql = format!("{RUN_COLUMNS} ORDER BY id");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.reader)
            .await
            .map_err(|e| self.fail("listing runs", e))?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in &rows {
            runs.push(self.read_run(row).await?);
        }
        Ok(runs)
    }

    pub(crate) async fn confirmations(&self, run: RunId) -> Result<Vec<Run>> {
        let sql = format!("{RUN_COLUMNS} WHERE confirms_run = $1 ORDER BY id");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(run.get())
            .fetch_all(&self.reader)
            .await
            .map_err(|e| self.fail(format!("finding the confirmations of run {run}"), e))?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in &rows {
            runs.push(self.read_run(row).await?);
        }
        Ok(runs)
    }

    pub(crate) async fn finish_run(&self, run: RunId, verdict: RunOutcome) -> Result<()> {
        let operation = || format!("finishing run {run}");
        let mut tx = self.begin_write(&operation).await?;
        let finished = sqlx::query(
            "UPDATE runs SET state = 'finished', verdict = $2, updated_at_ms = $3 \
             WHERE id = $1 AND state = 'running' RETURNING id",
        )
        .bind(run.get())
        .bind(verdict.as_str())
        .bind(now_ms())
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if finished.is_none() {
            drop(tx);
            return Err(self.why_closed(run).await);
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))
    }

    /// The one transaction that makes a pair count: run totals, pair row, pairing totals, games.
    pub(crate) async fn commit_pair(&self, pair: &PairRecord) -> Result<Committed> {
        let games = self.checked_games(pair)?;
        let operation = || format!("committing {} of run {}", pair.key, pair.run);
        let mut tx = self.begin_write(&operation).await?;
        match self.insert_pair(&mut tx, pair, &games, now_ms()).await? {
            Inserted::Counted => {}
            Inserted::AlreadyPresent => {
                tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
                return Ok(Committed::AlreadyPresent);
            }
            Inserted::Refused => {
                drop(tx);
                return Err(self.refusal(pair).await);
            }
        }
        // All of it, or (rolled back on any error above, or lost to a crash before this
        // returns) none of it.
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(Committed::Inserted)
    }

    /// The checks of a pair that need no database: a consistent tally, as many games as it
    /// counts, values that fit the columns. Returns the games' values as stored.
    fn checked_games(&self, pair: &PairRecord) -> Result<Vec<GameValues>> {
        let invalid = |reason: String| StoreError::InvalidPair {
            location: self.location.to_string(),
            run: pair.run,
            pair: pair.key,
            reason,
        };
        if let Some(reason) = pair.tally.inconsistency() {
            return Err(invalid(reason));
        }
        if pair.games.len() != usize::from(pair.tally.games()) {
            return Err(invalid(format!(
                "the tally counts {} game(s) but {} are given",
                pair.tally.games(),
                pair.games.len()
            )));
        }
        if i64::try_from(pair.key.index).is_err() {
            return Err(invalid(
                "the index does not fit a 64-bit signed integer".into(),
            ));
        }
        pair.games
            .iter()
            .map(GameValues::new)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("a game number or opening index exceeds 2^63 - 1".into()))
    }

    /// Counts `pair` inside `tx`: the run's totals, the pair row, the pairing's totals and the
    /// games, in that order. On [`Inserted::AlreadyPresent`] and [`Inserted::Refused`] the
    /// caller must roll `tx` back (the run's totals were already added to). `games` are
    /// [`Repo::checked_games`] of the pair.
    pub(crate) async fn insert_pair(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        pair: &PairRecord,
        games: &[GameValues],
        now: i64,
    ) -> Result<Inserted> {
        let run = pair.run;
        let key = pair.key;
        let pair_index = i64::try_from(key.index).unwrap_or(i64::MAX);
        let operation = || format!("committing {key} of run {run}");

        // 1. The run's totals, by addition only (the caller recomputes every statistic from
        //    them). The hot row comes first: on PostgreSQL its row lock orders the run's
        //    commits, so the count it returns is this pair's place in the commit order. A
        //    duplicate below rolls the addition back.
        let sequence: Option<i64> = with_tally(
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE run_totals SET {ADD_TALLY} WHERE run_id = $1 RETURNING pairs"
            )))
            .bind(run.get()),
            pair.tally,
        )
        .fetch_optional(&mut **tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        let Some(sequence) = sequence else {
            return Ok(Inserted::Refused);
        };

        // 2. The exactly-once key. A pair already present inserts nothing and changes nothing.
        //    A pairing the run does not have breaks the key's reference to `run_pairings`.
        match self
            .insert_pair_rows(tx, run, &[(pair, Some(sequence))], now, &operation)
            .await?
        {
            None => return Ok(Inserted::Refused),
            Some(inserted) if inserted.is_empty() => return Ok(Inserted::AlreadyPresent),
            Some(_) => {}
        }

        // 3. Only a running run takes pairs. On PostgreSQL this also locks the run's row, so a
        //    concurrent `finish_run` goes strictly before or after.
        if self
            .touch_running(tx, run, now, &operation)
            .await?
            .is_none()
        {
            return Ok(Inserted::Refused);
        }

        // 4. The pairing's totals, and only for a pair its schedule has.
        let counted = with_tally(
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE run_pairings SET {ADD_TALLY} \
                 WHERE run_id = $1 AND pairing = $10 AND pairs_planned > $11 RETURNING pairing"
            )))
            .bind(run.get()),
            pair.tally,
        )
        .bind(i64::from(key.pairing))
        .bind(pair_index)
        .fetch_optional(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if counted.is_none() {
            return Ok(Inserted::Refused);
        }

        // 5. Every game, PGN and JSON included: a counted pair always has its games.
        self.insert_games(tx, run, &[(pair, games)], &operation)
            .await?;
        Ok(Inserted::Counted)
    }

    /// Inserts each of `rows` (a pair and its place in the commit order, none yet for a
    /// submitted batch's, which its run's advance numbers) unless its key is
    /// taken, in statements of up to [`PAIRS_PER_STATEMENT`] rows; returns the keys inserted.
    /// `None` when a pair's pairing is not the run's (or there is no such run): the key's
    /// reference to `run_pairings` breaks.
    pub(crate) async fn insert_pair_rows(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        rows: &[(&PairRecord, Option<i64>)],
        now: i64,
        operation: &impl Fn() -> String,
    ) -> Result<Option<Vec<PairKey>>> {
        let mut inserted = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(PAIRS_PER_STATEMENT) {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO pairs (run_id, committed_at_ms, pairing, pair_index, sequence, \
                 wins, draws, losses, penta) VALUES {} \
                 ON CONFLICT (run_id, pairing, pair_index) DO NOTHING RETURNING pairing, pair_index",
                values_rows(chunk.len(), "$1, $2", 3, 7)
            )))
            .bind(run.get())
            .bind(now);
            for (pair, sequence) in chunk {
                query = query
                    .bind(i64::from(pair.key.pairing))
                    .bind(i64::try_from(pair.key.index).unwrap_or(i64::MAX))
                    .bind(*sequence)
                    .bind(i64::from(pair.tally.wins))
                    .bind(i64::from(pair.tally.draws))
                    .bind(i64::from(pair.tally.losses))
                    .bind(i64::from(pair.tally.penta));
            }
            let returned = match query.fetch_all(&mut **tx).await {
                Ok(returned) => returned,
                Err(e) if kind(&e) == Some(ErrorKind::ForeignKeyViolation) => return Ok(None),
                Err(e) => return Err(self.fail(operation(), e)),
            };
            for row in &returned {
                inserted.push(
                    self.decode_key(row, 0)
                        .map_err(|e| self.decoded(e, operation))?,
                );
            }
        }
        Ok(Some(inserted))
    }

    /// Inserts the games of `pairs` (each with its [`Repo::checked_games`] values), PGN and
    /// JSON included, in statements of up to [`GAMES_PER_STATEMENT`] games.
    pub(crate) async fn insert_games(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        pairs: &[(&PairRecord, &[GameValues])],
        operation: &impl Fn() -> String,
    ) -> Result<()> {
        let games: Vec<_> = pairs
            .iter()
            .flat_map(|(pair, values)| {
                (0_i64..)
                    .zip(pair.games.iter().zip(values.iter()))
                    .map(move |(game_index, (game, values))| (pair.key, game_index, game, values))
            })
            .collect();
        for chunk in games.chunks(GAMES_PER_STATEMENT) {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO games (run_id, pairing, pair_index, game_index, game_number, white, \
                 black, result, termination, plies, opening_index, opening_fen, pgn, json, \
                 started_at_ms, duration_ms) VALUES {}",
                values_rows(chunk.len(), "$1", 2, 15)
            )))
            .bind(run.get());
            for (key, game_index, game, values) in chunk {
                query = query
                    .bind(i64::from(key.pairing))
                    .bind(i64::try_from(key.index).unwrap_or(i64::MAX))
                    .bind(*game_index)
                    .bind(values.game_number)
                    .bind(game.white.as_str())
                    .bind(game.black.as_str())
                    .bind(game.result.as_pgn())
                    .bind(game.termination.as_str())
                    .bind(i64::from(game.plies))
                    .bind(values.opening_index)
                    .bind(game.opening_fen.as_str())
                    .bind(game.pgn.as_str())
                    .bind(game.json.as_str())
                    .bind(values.started_at_ms)
                    .bind(values.duration_ms);
            }
            query
                .execute(&mut **tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
        }
        Ok(())
    }

    /// Why the store refused `pair`, read after its transaction was abandoned: the run is
    /// unknown or finished, or the pair is not in its schedule.
    async fn refusal(&self, pair: &PairRecord) -> StoreError {
        let run = match self.run(pair.run).await {
            Ok(run) => run,
            Err(e) => return e,
        };
        let invalid = |reason: String| StoreError::InvalidPair {
            location: self.location.to_string(),
            run: run.id,
            pair: pair.key,
            reason,
        };
        let pairings = &run.spec.pairings;
        let Some(pairing) = pairings.get(pair.key.pairing as usize) else {
            return invalid(format!(
                "the run has {} pairing(s) (numbers 0 to {})",
                pairings.len(),
                pairings.len().saturating_sub(1)
            ));
        };
        if pair.key.index >= pairing.pairs_planned {
            return invalid(format!(
                "pairing {} has {} planned pairs (indices 0 to {})",
                pair.key.pairing,
                pairing.pairs_planned,
                pairing.pairs_planned.saturating_sub(1)
            ));
        }
        match run.state {
            RunState::Finished { verdict } => StoreError::RunFinished {
                location: self.location.to_string(),
                run: run.id,
                verdict,
            },
            RunState::Running => self.corrupt(
                "run_totals",
                format!("run {} is running but refused {}", run.id, pair.key),
            ),
        }
    }

    pub(crate) async fn totals(&self, run: RunId) -> Result<Totals> {
        let operation = || format!("reading the totals of run {run}");
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {TALLY_COLUMNS} FROM run_totals WHERE run_id = $1"
        )))
        .bind(run.get())
        .fetch_optional(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?
        .ok_or_else(|| self.unknown(run))?;
        self.decode_totals(&row, 0, "run_totals")
            .map_err(|e| self.decoded(e, operation))
    }

    pub(crate) async fn pairing_totals(&self, run: RunId) -> Result<Vec<Totals>> {
        let operation = || format!("reading the pairing totals of run {run}");
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT pairing, {TALLY_COLUMNS} FROM run_pairings WHERE run_id = $1 ORDER BY pairing"
        )))
        .bind(run.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if rows.is_empty() {
            // Every run has a pairing: none means no such run.
            return Err(self.unknown(run));
        }
        let mut totals = Vec::with_capacity(rows.len());
        for (expected, row) in (0_i64..).zip(&rows) {
            let pairing: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
            if pairing != expected {
                return Err(self.corrupt(
                    "run_pairings",
                    format!("run {run} lacks pairing {expected}"),
                ));
            }
            totals.push(
                self.decode_totals(row, 1, "run_pairings")
                    .map_err(|e| self.decoded(e, operation))?,
            );
        }
        Ok(totals)
    }

    pub(crate) async fn committed_pairs(&self, run: RunId) -> Result<BTreeSet<PairKey>> {
        // An unknown run must not look like a run with nothing committed.
        self.run(run).await?;
        let operation = || format!("reading the committed pairs of run {run}");
        let mut rows = sqlx::query("SELECT pairing, pair_index FROM pairs WHERE run_id = $1")
            .bind(run.get())
            .fetch(&self.reader);
        let mut keys = BTreeSet::new();
        while let Some(row) = rows
            .try_next()
            .await
            .map_err(|e| self.fail(operation(), e))?
        {
            let key = self
                .decode_key(&row, 0)
                .map_err(|e| self.decoded(e, operation))?;
            keys.insert(key);
        }
        Ok(keys)
    }

    pub(crate) fn pairs_in_commit_order(&self, run: RunId) -> BoxStream<'_, Result<CommittedPair>> {
        sqlx::query(
            "SELECT pairing, pair_index, sequence, wins, draws, losses, penta, committed_at_ms \
             FROM pairs WHERE run_id = $1 AND sequence IS NOT NULL ORDER BY sequence",
        )
        .bind(run.get())
        .fetch(&self.reader)
        .map(move |row| {
            let operation = || format!("reading the pairs of run {run}");
            let row = row.map_err(|e| self.fail(operation(), e))?;
            self.decode_committed_pair(&row)
                .map_err(|e| self.decoded(e, operation))
        })
        .boxed()
    }

    pub(crate) fn games(&self, run: RunId) -> BoxStream<'_, Result<StoredGame>> {
        sqlx::query(
            "SELECT pairing, pair_index, game_index, game_number, white, black, result, \
             termination, plies, opening_index, opening_fen, pgn, json, started_at_ms, \
             duration_ms FROM games WHERE run_id = $1 \
             ORDER BY game_number, pairing, pair_index, game_index",
        )
        .bind(run.get())
        .fetch(&self.reader)
        .map(move |row| {
            let operation = || format!("reading the games of run {run}");
            let row = row.map_err(|e| self.fail(operation(), e))?;
            self.decode_game(&row)
                .map_err(|e| self.decoded(e, operation))
        })
        .boxed()
    }

    pub(crate) async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }

    async fn begin_write(
        &self,
        operation: &impl Fn() -> String,
    ) -> Result<sqlx::Transaction<'static, DB>> {
        self.writer
            .begin_with(DB::BEGIN_WRITE)
            .await
            .map_err(|e| self.fail(operation(), e))
    }

    /// [`Repo::begin_write`] for leases only ([`Dialect::BEGIN_LEASE`]).
    async fn begin_lease(
        &self,
        operation: &impl Fn() -> String,
    ) -> Result<sqlx::Transaction<'static, DB>> {
        self.writer
            .begin_with(DB::BEGIN_LEASE)
            .await
            .map_err(|e| self.fail(operation(), e))
    }

    /// Whether `run` is running, marking it updated at `now` inside `tx`: its planned units
    /// if so. Pairs, batches and steps are committed only to a running run, and on PostgreSQL
    /// the update locks the run's row until the commit, so a concurrent `finish_run` goes
    /// strictly before or after (it does not block the key checks of other commits' pair
    /// inserts, which lock the row only for key share).
    async fn touch_running(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        now: i64,
        operation: &impl Fn() -> String,
    ) -> Result<Option<u64>> {
        let planned: Option<i64> = sqlx::query(
            "UPDATE runs SET updated_at_ms = $2 WHERE id = $1 AND state = 'running' \
             RETURNING pairs_planned",
        )
        .bind(run.get())
        .bind(now)
        .fetch_optional(&mut **tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        planned.map(|p| self.non_negative(p, "runs")).transpose()
    }

    /// Why `run` refused a state change: it does not exist, or it is finished.
    async fn why_closed(&self, run: RunId) -> StoreError {
        match self.run(run).await {
            Ok(Run {
                state: RunState::Finished { verdict },
                ..
            }) => StoreError::RunFinished {
                location: self.location.to_string(),
                run,
                verdict,
            },
            Ok(_) => self.corrupt(
                "runs",
                format!("run {run} is running but refused the update"),
            ),
            Err(e) => e,
        }
    }

    /// A run from its row in `runs` and its lineup from `run_engines` and `run_pairings`.
    async fn read_run(&self, row: &DB::Row) -> Result<Run> {
        let mut run = self.decode_run(row)?;
        let id = run.id;
        let operation = || format!("reading the engines and pairings of run {id}");
        let engines = sqlx::query(
            "SELECT engine_index, name FROM run_engines WHERE run_id = $1 ORDER BY engine_index",
        )
        .bind(id.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        for (expected, row) in (0_i64..).zip(&engines) {
            let index: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
            if index != expected {
                return Err(
                    self.corrupt("run_engines", format!("run {id} lacks engine {expected}"))
                );
            }
            run.spec
                .engines
                .push(row.try_get(1).map_err(|e| self.fail(operation(), e))?);
        }
        let pairings = sqlx::query(
            "SELECT pairing, first_engine, second_engine, pairs_planned FROM run_pairings \
             WHERE run_id = $1 ORDER BY pairing",
        )
        .bind(id.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        for (expected, row) in (0_i64..).zip(&pairings) {
            let int =
                |i: usize| -> Result<i64> { row.try_get(i).map_err(|e| self.fail(operation(), e)) };
            if int(0)? != expected {
                return Err(
                    self.corrupt("run_pairings", format!("run {id} lacks pairing {expected}"))
                );
            }
            let engine = |i: usize| -> Result<usize> {
                usize::try_from(int(i)?)
                    .map_err(|_| self.corrupt("run_pairings", format!("run {id}: engine index")))
            };
            run.spec.pairings.push(Pairing {
                first: engine(1)?,
                second: engine(2)?,
                pairs_planned: self.non_negative(int(3)?, "run_pairings")?,
            });
        }
        Ok(run)
    }

    /// The row of `runs`, with the engines and pairings still to be read.
    fn decode_run(&self, row: &DB::Row) -> Result<Run> {
        let get_i64 =
            |i: usize| -> Result<i64> { row.try_get(i).map_err(|e| self.fail("reading a run", e)) };
        let get_text = |i: usize| -> Result<String> {
            row.try_get(i).map_err(|e| self.fail("reading a run", e))
        };
        let id = RunId::new(get_i64(0)?);
        let verdict: Option<String> = row.try_get(5).map_err(|e| self.fail("reading a run", e))?;
        let state = match (get_text(4)?.as_str(), verdict) {
            ("running", None) => RunState::Running,
            ("finished", Some(text)) => RunState::Finished {
                verdict: text.parse().map_err(|reason: String| {
                    self.corrupt("runs", format!("run {id}: {reason}"))
                })?,
            },
            (state, verdict) => {
                return Err(self.corrupt(
                    "runs",
                    format!("run {id} has state {state:?} and verdict {verdict:?}"),
                ));
            }
        };
        let facts: Option<String> = row.try_get(8).map_err(|e| self.fail("reading a run", e))?;
        let facts = facts
            .map(|text| RunFacts::from_json(&text))
            .transpose()
            .map_err(|reason| self.corrupt("runs", format!("run {id}: its facts: {reason}")))?;
        let confirms: Option<i64> = row.try_get(9).map_err(|e| self.fail("reading a run", e))?;
        Ok(Run {
            id,
            spec: RunSpec {
                name: get_text(1)?,
                seed: seed_from_i64(get_i64(2)?),
                config: get_text(3)?,
                engines: Vec::new(),
                pairings: Vec::new(),
                facts,
                confirms: confirms.map(RunId::new),
            },
            state,
            created_at: time_from_ms(get_i64(6)?),
            updated_at: time_from_ms(get_i64(7)?),
        })
    }

    /// Nine counts in [`TALLY_COLUMNS`] order, from column `first`.
    fn decode_totals(
        &self,
        row: &DB::Row,
        first: usize,
        what: &'static str,
    ) -> Result<Totals, Decoded> {
        let count = |i: usize| -> Result<u64, Decoded> {
            let value: i64 = row.try_get(first + i)?;
            Ok(self.non_negative(value, what)?)
        };
        Ok(Totals {
            pairs: count(0)?,
            wins: count(1)?,
            draws: count(2)?,
            losses: count(3)?,
            pentanomial: [count(4)?, count(5)?, count(6)?, count(7)?, count(8)?],
        })
    }

    /// A pair's key from its `pairing` and `pair_index` columns, `first` and the next.
    fn decode_key(&self, row: &DB::Row, first: usize) -> Result<PairKey, Decoded> {
        let pairing: i64 = row.try_get(first)?;
        let index: i64 = row.try_get(first + 1)?;
        Ok(PairKey {
            pairing: u32::try_from(pairing)
                .map_err(|_| self.corrupt("pairs", format!("pairing number {pairing}")))?,
            index: self.non_negative(index, "pairs")?,
        })
    }

    fn decode_committed_pair(&self, row: &DB::Row) -> Result<CommittedPair, Decoded> {
        let small = |i: usize| -> Result<u8, Decoded> {
            let value: i64 = row.try_get(i)?;
            Ok(u8::try_from(value)
                .map_err(|_| self.corrupt("pairs", format!("a tally count of {value}")))?)
        };
        let sequence: i64 = row.try_get(2)?;
        Ok(CommittedPair {
            key: self.decode_key(row, 0)?,
            sequence: self.non_negative(sequence, "pairs")?,
            tally: PairTally {
                wins: small(3)?,
                draws: small(4)?,
                losses: small(5)?,
                penta: small(6)?,
            },
            committed_at: time_from_ms(row.try_get(7)?),
        })
    }

    fn decode_game(&self, row: &DB::Row) -> Result<StoredGame, Decoded> {
        let int = |i: usize| -> Result<i64, Decoded> { Ok(row.try_get(i)?) };
        let count = |i: usize| -> Result<u64, Decoded> { Ok(self.non_negative(int(i)?, "games")?) };
        let text = |i: usize| -> Result<String, Decoded> { Ok(row.try_get(i)?) };
        let key = self.decode_key(row, 0)?;
        let result = text(6)?;
        let result: GameResult = result
            .parse()
            .map_err(|e| self.corrupt("games", format!("{e}")))?;
        let game_index = u8::try_from(int(2)?)
            .map_err(|_| self.corrupt("games", "a game index is not 0 or 1".into()))?;
        let plies = u32::try_from(int(8)?)
            .map_err(|_| self.corrupt("games", "a ply count is out of range".into()))?;
        Ok(StoredGame {
            pairing: key.pairing,
            pair_index: key.index,
            game_index,
            game: GameRow {
                game_number: count(3)?,
                white: text(4)?,
                black: text(5)?,
                result,
                termination: text(7)?,
                plies,
                opening_index: count(9)?,
                opening_fen: text(10)?,
                pgn: text(11)?,
                json: text(12)?,
                started_at: time_from_ms(int(13)?),
                duration: Duration::from_millis(count(14)?),
            },
        })
    }

    /// A decoding failure as the store's error, naming what was being read.
    fn decoded(&self, error: Decoded, operation: impl Fn() -> String) -> StoreError {
        match error {
            Decoded::Sql(e) => self.fail(operation(), e),
            Decoded::Store(e) => e,
        }
    }

    pub(crate) fn fail(&self, operation: impl Display, cause: sqlx::Error) -> StoreError {
        StoreError::Database {
            location: self.location.to_string(),
            operation: operation.to_string(),
            cause,
        }
    }

    fn migrate_failed(&self, cause: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::Migrate {
            location: self.location.to_string(),
            cause,
        }
    }

    fn unknown(&self, run: RunId) -> StoreError {
        StoreError::UnknownRun {
            location: self.location.to_string(),
            run,
        }
    }

    fn not_ours(&self, reason: String) -> StoreError {
        StoreError::NotArbiterDatabase {
            location: self.location.to_string(),
            reason,
        }
    }

    fn corrupt(&self, what: &'static str, detail: String) -> StoreError {
        StoreError::Corrupt {
            location: self.location.to_string(),
            what,
            detail,
        }
    }

    fn non_negative(&self, value: i64, what: &'static str) -> Result<u64> {
        u64::try_from(value).map_err(|_| self.corrupt(what, format!("negative count {value}")))
    }

    /// Sets column `column` of run `run`'s row to `value` where it is NULL: one statement, so
    /// two processes upgrading one run at once write it once and the second changes nothing.
    /// Whether it wrote; an unknown run is [`StoreError::UnknownRun`].
    async fn fill_if_missing(
        &self,
        run: RunId,
        column: FillableColumn,
        value: impl for<'q> Encode<'q, DB> + Type<DB> + Send,
        operation: impl Fn() -> String,
    ) -> Result<bool> {
        let sql = match column {
            FillableColumn::Facts => {
                "UPDATE runs SET facts = $2 WHERE id = $1 AND facts IS NULL RETURNING id"
            }
            FillableColumn::ConfirmsRun => {
                "UPDATE runs SET confirms_run = $2 WHERE id = $1 AND confirms_run IS NULL \
                 RETURNING id"
            }
        };
        let written = sqlx::query(sql)
            .bind(run.get())
            .bind(value)
            .fetch_optional(&self.writer)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        if written.is_none() {
            // Nothing to fill, or no such run: only the second is an error.
            self.run(run).await?;
        }
        Ok(written.is_some())
    }

    pub(crate) async fn fill_facts(&self, run: RunId, facts: &RunFacts) -> Result<bool> {
        self.fill_if_missing(run, FillableColumn::Facts, facts.to_json(), || {
            format!("storing the facts of run {run}")
        })
        .await
    }

    pub(crate) async fn link_confirmation(&self, run: RunId, confirms: RunId) -> Result<bool> {
        if run == confirms {
            return Err(self.corrupt(
                "runs",
                format!("run {run} cannot be the confirmation of itself"),
            ));
        }
        self.fill_if_missing(run, FillableColumn::ConfirmsRun, confirms.get(), || {
            format!("linking run {run} to the tuning run {confirms} it confirms")
        })
        .await
    }
}

/// The columns of `runs` that an older run lacks and a later arbiter fills in once
/// ([`Repo::fill_if_missing`]): a closed list, so no column name is ever built from text.
#[derive(Clone, Copy)]
enum FillableColumn {
    Facts,
    ConfirmsRun,
}

/// A decoding failure: the driver's, or a broken invariant.
enum Decoded {
    Sql(sqlx::Error),
    Store(StoreError),
}

impl From<sqlx::Error> for Decoded {
    fn from(e: sqlx::Error) -> Self {
        Decoded::Sql(e)
    }
}

impl From<StoreError> for Decoded {
    fn from(e: StoreError) -> Self {
        Decoded::Store(e)
    }
}

/// What [`Repo::insert_pair`] did with a pair.
pub(crate) enum Inserted {
    /// Counted: the transaction holds it.
    Counted,
    /// Its key is taken: nothing of it may be kept.
    AlreadyPresent,
    /// Not for this run (finished, unknown, not in its schedule): [`Repo::refusal`] says why.
    Refused,
}

/// A game's unsigned fields as the database's signed 64-bit integers.
pub(crate) struct GameValues {
    game_number: i64,
    opening_index: i64,
    started_at_ms: i64,
    duration_ms: i64,
}

impl GameValues {
    fn new(game: &GameRow) -> Option<GameValues> {
        Some(GameValues {
            game_number: i64::try_from(game.game_number).ok()?,
            opening_index: i64::try_from(game.opening_index).ok()?,
            started_at_ms: time_to_ms(game.started_at),
            duration_ms: i64::try_from(game.duration.as_millis()).unwrap_or(i64::MAX),
        })
    }
}

/// Pair rows one `INSERT` holds at most (seven parameters each).
const PAIRS_PER_STATEMENT: usize = 512;

/// Game rows one `INSERT` holds at most (fifteen parameters each): far below both databases'
/// limits on a statement's parameters.
const GAMES_PER_STATEMENT: usize = 256;

/// The `VALUES` list of a multi-row statement: `rows` rows, each `(shared, $first, ...)` (or
/// `($first, ...)` when `shared` is empty) with `width` parameters of its own, numbered on from
/// `first`.
fn values_rows(rows: usize, shared: &str, first: usize, width: usize) -> String {
    (0..rows)
        .map(|row| {
            let start = first + row * width;
            let own: Vec<String> = (start..start + width).map(|p| format!("${p}")).collect();
            match shared {
                "" => format!("({})", own.join(", ")),
                shared => format!("({shared}, {})", own.join(", ")),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Binds a pair's tally as [`ADD_TALLY`]'s `$2` to `$9` (after `$1`, the run).
fn with_tally<DB: Database>(
    query: Query<'_, DB, <DB as Database>::Arguments>,
    tally: PairTally,
) -> Query<'_, DB, <DB as Database>::Arguments>
where
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    let bucket = |b: u8| i64::from(tally.penta == b);
    query
        .bind(i64::from(tally.wins))
        .bind(i64::from(tally.draws))
        .bind(i64::from(tally.losses))
        .bind(bucket(0))
        .bind(bucket(1))
        .bind(bucket(2))
        .bind(bucket(3))
        .bind(bucket(4))
}

/// The kind of a database error (constraint violations), if it is one.
pub(crate) fn kind(error: &sqlx::Error) -> Option<ErrorKind> {
    error.as_database_error().map(|e| e.kind())
}

/// Seeds are `u64`; the databases have signed 64-bit integers. Same bits, both ways.
fn seed_to_i64(seed: u64) -> i64 {
    i64::from_ne_bytes(seed.to_ne_bytes())
}

fn seed_from_i64(stored: i64) -> u64 {
    u64::from_ne_bytes(stored.to_ne_bytes())
}

fn now_ms() -> i64 {
    time_to_ms(SystemTime::now())
}

fn time_to_ms(time: SystemTime) -> i64 {
    let clamp = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => clamp(after),
        Err(before) => -clamp(before.duration()),
    }
}

fn time_from_ms(ms: i64) -> SystemTime {
    let magnitude = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_keep_their_bits() {
        for seed in [0, 1, u64::MAX, 1 << 63, 0xdead_beef_cafe_f00d] {
            assert_eq!(seed_from_i64(seed_to_i64(seed)), seed);
        }
        assert_eq!(seed_to_i64(u64::MAX), -1);
    }

    #[test]
    fn times_round_trip_to_the_millisecond() {
        for ms in [0, 1, -1, 1_700_000_000_123, -86_400_000] {
            assert_eq!(time_to_ms(time_from_ms(ms)), ms);
        }
        let t = UNIX_EPOCH + Duration::from_micros(1_500_999);
        assert_eq!(time_to_ms(t), 1_500);
    }
}
