//! The fleet's SQL: queueing a run in batches, claiming, heartbeats, releasing and submitting
//! a batch, and the prefix a queued run's verdict is judged on.
//!
//! Every state change is one transaction. A claim picks the next batch with `FOR UPDATE ...
//! SKIP LOCKED` on PostgreSQL (concurrent claims skip each other's rows instead of queueing on
//! them) and under SQLite's single writer otherwise. Leases are timed on the database's clock
//! ([`Dialect::NOW_MS`]); claims, heartbeats and releases commit without waiting for the WAL
//! flush on PostgreSQL ([`Dialect::BEGIN_LEASE`]). A submit is two transactions. The first
//! counts the batch with the same rows as a local commit ([`Repo::insert_pair_rows`],
//! [`Repo::insert_games`]), a statement for all its pairs and one for all its games, and marks
//! the batch done (its key makes a second submit count nothing); it writes no row the run's
//! other submits write, so they commit side by side. The second, the run's advance, adds
//! every pair counted since the last advance to the totals, numbers them in the commit order,
//! moves the prefix and closes the run on a decision: one transaction at a time per run, one
//! flush for however many batches came in meanwhile.

use sha2::{Digest, Sha256};
use sqlx::migrate::Migrate;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{kind, now_ms, Dialect, GameValues, Repo, ADD_TOTALS, TALLY_COLUMNS};
use crate::error::{Result, StoreError};
use crate::fleet::{
    Advanced, BatchCounts, Heartbeat, Lease, Prefix, Queue, QueuedRun, Submitted, Worker, WorkerId,
    WorkerInfo,
};
use crate::model::{PairKey, PairRecord, PairTally, RunId, RunOutcome, RunSpec, Totals};
use crate::RunFile;

mod tuning;

/// Why queueing a run failed inside its creating transaction.
pub(crate) enum QueueRefused {
    /// The queue makes no sense for the run (the caller names the run).
    Invalid(String),
    Store(StoreError),
}

impl From<StoreError> for QueueRefused {
    fn from(e: StoreError) -> Self {
        QueueRefused::Store(e)
    }
}

/// A run's schedule as the prefix's walk needs it: its pairings (unit u is pair u / P of
/// pairing u % P), its units in all, and whether it still runs (a closed run's prefix stays).
struct Schedule {
    pairings: u64,
    planned: u64,
    running: bool,
}

/// The rounds an advance's holder makes at most (each one transaction, checking again after
/// its commit for pairs that came in meanwhile): enough for the burst of submits that wait on
/// one flush, and a bound under a stream that never ends, which the next submit takes over.
const ROUNDS: usize = 16;

/// Pairs one statement of an advance numbers at most (three parameters each).
const NUMBERED_PER_STATEMENT: usize = 512;

/// The columns of a batch a lease is made of, in [`Repo::decode_lease`]'s order.
const LEASE_COLUMNS: &str =
    "run_id, sequence, first_unit, units, worker_id, lease_expires_ms, claims";

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
    /// Inside the transaction that creates run `run`: its queue columns, every batch (open),
    /// its prefix row, its engines' known signatures and its files.
    pub(crate) async fn insert_queue(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        spec: &RunSpec,
        queue: &Queue,
    ) -> std::result::Result<(), QueueRefused> {
        let units = spec.pairs_planned();
        if queue.batch_units == 0 {
            return Err(QueueRefused::Invalid(
                "a batch must hold at least one unit".into(),
            ));
        }
        if queue.worker_limit == Some(0) {
            return Err(QueueRefused::Invalid(
                "a worker limit must be at least 1".into(),
            ));
        }
        if queue.signatures.len() > spec.engines.len() {
            return Err(QueueRefused::Invalid(format!(
                "{} engine signatures for {} engines",
                queue.signatures.len(),
                spec.engines.len()
            )));
        }
        let batch_units = i64::try_from(queue.batch_units)
            .map_err(|_| QueueRefused::Invalid("the batch size exceeds 2^63 - 1".into()))?;
        let operation = || format!("queueing run {run}");
        sqlx::query(
            "UPDATE runs SET priority = $2, worker_limit = $3, batch_units = $4 WHERE id = $1",
        )
        .bind(run.get())
        .bind(queue.priority)
        .bind(queue.worker_limit.map(i64::from))
        .bind(batch_units)
        .execute(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        sqlx::query("INSERT INTO run_prefix (run_id) VALUES ($1)")
            .bind(run.get())
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        let mut first = 0_u64;
        let mut sequence = 0_i64;
        while first < units {
            let size = queue.batch_units.min(units - first);
            sqlx::query(
                "INSERT INTO batches (run_id, sequence, first_unit, units, state) \
                 VALUES ($1, $2, $3, $4, 'open')",
            )
            .bind(run.get())
            .bind(sequence)
            .bind(as_i64(first))
            .bind(as_i64(size))
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
            first += size;
            sequence += 1;
        }
        for (index, signature) in (0_i64..).zip(&queue.signatures) {
            if let Some(signature) = signature {
                sqlx::query(
                    "UPDATE run_engines SET signature = $3 WHERE run_id = $1 AND engine_index = $2",
                )
                .bind(run.get())
                .bind(index)
                .bind(signature.as_str())
                .execute(&mut **tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
            }
        }
        for file in &queue.files {
            if file.name.is_empty() {
                return Err(QueueRefused::Invalid(
                    "a stored file has an empty name".into(),
                ));
            }
            sqlx::query(
                "INSERT INTO run_files (run_id, name, sha256, content) VALUES ($1, $2, $3, $4)",
            )
            .bind(run.get())
            .bind(file.name.as_str())
            .bind(sha256_hex(&file.content))
            .bind(file.content.clone())
            .execute(&mut **tx)
            .await
            .map_err(|e| match kind(&e) {
                Some(sqlx::error::ErrorKind::UniqueViolation) => {
                    QueueRefused::Invalid(format!("the file {:?} is given twice", file.name))
                }
                _ => QueueRefused::Store(self.fail(operation(), e)),
            })?;
        }
        Ok(())
    }

    /// Registers a worker under its name, or updates the one of that name; returns its id.
    pub(crate) async fn register_worker(&self, info: &WorkerInfo) -> Result<WorkerId> {
        let operation = || format!("registering worker {:?}", info.name);
        self.check_worker_name(info)?;
        let mut tx = self.begin_write(&operation).await?;
        let now = DB::NOW_MS;
        let id: i64 = sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO workers (name, host, cores, version, first_contact_ms, last_contact_ms) \
             VALUES ($1, $2, $3, $4, {now}, {now}) \
             ON CONFLICT (name) DO UPDATE SET host = $2, cores = $3, version = $4, \
             last_contact_ms = {now} RETURNING id"
        )))
        .bind(info.name.as_str())
        .bind(info.host.as_str())
        .bind(i64::from(info.cores))
        .bind(info.version.as_str())
        .fetch_one(&mut *tx)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| self.fail(operation(), e))?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(WorkerId::new(id))
    }

    /// Refuses a worker without a name, which could not be told from another.
    pub(crate) fn check_worker_name(&self, info: &WorkerInfo) -> Result<()> {
        if info.name.is_empty() {
            return Err(StoreError::InvalidWorker {
                location: self.location.to_string(),
                name: info.name.clone(),
                reason: "a worker needs a name".into(),
            });
        }
        Ok(())
    }

    /// Every worker the database has heard from, by name.
    pub(crate) async fn workers(&self) -> Result<Vec<Worker>> {
        let operation = || "reading the workers".to_owned();
        let rows = sqlx::query(
            "SELECT id, name, host, cores, version, first_contact_ms, last_contact_ms \
             FROM workers ORDER BY name",
        )
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        rows.iter()
            .map(|row| -> std::result::Result<Worker, sqlx::Error> {
                let cores: i64 = row.try_get(3)?;
                Ok(Worker {
                    id: WorkerId::new(row.try_get(0)?),
                    info: WorkerInfo {
                        name: row.try_get(1)?,
                        host: row.try_get(2)?,
                        cores: u32::try_from(cores).unwrap_or(u32::MAX),
                        version: row.try_get(4)?,
                    },
                    first_contact_ms: row.try_get(5)?,
                    last_contact_ms: row.try_get(6)?,
                })
            })
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.fail(operation(), e))
    }

    /// Leases the next batch to `worker` for `lease_ms`: its own unexpired lease if it has one
    /// (a restarted worker picks up where it was), else the first open or expired batch of the
    /// highest-priority running queued run (oldest run first on a tie) that is not in
    /// `excluded` and whose worker limit is not reached. `None` when there is nothing to play.
    pub(crate) async fn claim_batch(
        &self,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &[RunId],
    ) -> Result<Option<Lease>> {
        let operation = || format!("claiming a batch for worker {worker}");
        // Run ids are integers: listing them inline cannot inject anything.
        let excluded = match excluded {
            [] => String::new(),
            ids => format!(
                " AND r.id NOT IN ({})",
                ids.iter()
                    .map(|id| id.get().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut tx = self.begin_lease(&operation).await?;
        let lease = self
            .lease_next(&mut tx, worker, lease_ms, &excluded, &operation)
            .await?;
        self.touch_worker(&mut tx, worker, &operation).await?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(lease)
    }

    /// Leases the batch a claim takes. Each step is one statement, an update of the batch a
    /// short indexed search finds and locks (never a sort of every batch of every run): the
    /// worker's own lease; else the runs that can be played, by priority, and in the first of
    /// them that has one, a lapsed lease (the prefix's hole first) or the first open batch.
    async fn lease_next(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &str,
        operation: &impl Fn() -> String,
    ) -> Result<Option<Lease>> {
        let now = DB::NOW_MS;
        let skip_locked = DB::SKIP_LOCKED;
        let own = self
            .lease_found(
                tx,
                format!(
                    "SELECT b.run_id, b.sequence FROM batches b JOIN runs r ON r.id = b.run_id \
                     WHERE b.worker_id = $1 AND b.state = 'leased' AND r.state = 'running'\
                     {excluded} ORDER BY b.run_id, b.sequence LIMIT 1{skip_locked}"
                ),
                (worker, lease_ms, None),
                operation,
            )
            .await?;
        if own.is_some() {
            return Ok(own);
        }
        // The runs a batch may come from: running, queued, not excluded, below their worker
        // limit (this worker aside). A handful, whatever the batches.
        let runs = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT r.id FROM runs r WHERE r.state = 'running' AND r.batch_units IS NOT NULL\
             {excluded} AND (r.worker_limit IS NULL OR r.worker_limit > \
                (SELECT COUNT(DISTINCT l.worker_id) FROM batches l WHERE l.state = 'leased' \
                 AND l.run_id = r.id AND l.lease_expires_ms >= {now} AND l.worker_id <> $1)) \
             ORDER BY r.priority DESC, r.id"
        )))
        .bind(worker.get())
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        for row in &runs {
            let run: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
            for candidates in [
                format!("b.state = 'leased' AND b.run_id = $3 AND b.lease_expires_ms < {now}"),
                "b.state = 'open' AND b.run_id = $3".to_owned(),
            ] {
                let leased = self
                    .lease_found(
                        tx,
                        format!(
                            "SELECT b.run_id, b.sequence FROM batches b WHERE {candidates} \
                             ORDER BY b.sequence LIMIT 1{skip_locked}"
                        ),
                        (worker, lease_ms, Some(run)),
                        operation,
                    )
                    .await?;
                if leased.is_some() {
                    return Ok(leased);
                }
            }
        }
        Ok(None)
    }

    /// Leases the batch `(run_id, sequence)` that the query `found` selects (and locks), if
    /// any, to `worker` for `lease_ms`; `found` may use `$1` (the worker) and `$3` (`run`).
    /// Taking back one's own lease is not a new claim.
    async fn lease_found(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        found: String,
        (worker, lease_ms, run): (WorkerId, i64, Option<i64>),
        operation: &impl Fn() -> String,
    ) -> Result<Option<Lease>> {
        let now = DB::NOW_MS;
        let mut query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE batches SET state = 'leased', worker_id = $1, \
             lease_expires_ms = {now} + $2, \
             claims = claims + CASE WHEN worker_id = $1 THEN 0 ELSE 1 END \
             WHERE (run_id, sequence) = ({found}) RETURNING {LEASE_COLUMNS}"
        )))
        .bind(worker.get())
        .bind(lease_ms);
        if let Some(run) = run {
            query = query.bind(run);
        }
        let row = query
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        row.map(|row| self.decode_lease(&row))
            .transpose()
            .map_err(|e| self.fail(operation(), e))
    }

    /// Extends `lease` by `lease_ms` from now if it is still the worker's and its run still
    /// runs; says why not otherwise. An expired lease that nobody took yet is extended.
    pub(crate) async fn heartbeat(&self, lease: &Lease, lease_ms: i64) -> Result<Heartbeat> {
        let operation = || {
            format!(
                "extending the lease of batch {} of run {}",
                lease.sequence, lease.run
            )
        };
        let now = DB::NOW_MS;
        let mut tx = self.begin_lease(&operation).await?;
        // The run's row is read, not locked: every worker's heartbeats would queue on it.
        let extended = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE batches SET lease_expires_ms = {now} + $4 WHERE run_id = $1 AND sequence = $2 \
             AND state = 'leased' AND worker_id = $3 \
             AND EXISTS (SELECT 1 FROM runs r WHERE r.id = $1 AND r.state = 'running') \
             RETURNING lease_expires_ms"
        )))
        .bind(lease.run.get())
        .bind(as_i64(lease.sequence))
        .bind(lease.worker.get())
        .bind(lease_ms)
        .fetch_optional(&mut *tx)
        .await
        .and_then(|row| row.map(|row| row.try_get::<i64, _>(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        self.touch_worker(&mut tx, lease.worker, &operation).await?;
        let heartbeat = match extended {
            Some(expires_ms) => Heartbeat::Held { expires_ms },
            None => match self.closed(&mut tx, lease.run, &operation).await? {
                Some(verdict) => Heartbeat::RunClosed(verdict),
                None => Heartbeat::Lost,
            },
        };
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(heartbeat)
    }

    /// Gives `lease`'s batch back to the queue at once (a worker told to stop); nothing if the
    /// lease is no longer the worker's. Returns whether it was.
    pub(crate) async fn release_batch(&self, lease: &Lease) -> Result<bool> {
        let operation = || format!("releasing batch {} of run {}", lease.sequence, lease.run);
        let mut tx = self.begin_lease(&operation).await?;
        let released = sqlx::query(
            "UPDATE batches SET state = 'open', worker_id = NULL, lease_expires_ms = NULL \
             WHERE run_id = $1 AND sequence = $2 AND state = 'leased' AND worker_id = $3 \
             RETURNING sequence",
        )
        .bind(lease.run.get())
        .bind(as_i64(lease.sequence))
        .bind(lease.worker.get())
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        self.touch_worker(&mut tx, lease.worker, &operation).await?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(released.is_some())
    }

    /// Counts a played batch and then advances its run: [`Repo::count_batch`], then
    /// [`Repo::advance`] with `decide`. The prefix and verdict reported are the advance's: if
    /// another submit's advance held the run, it adds this batch too (it checks again after
    /// its commit), and this one reports the prefix as it stood.
    pub(crate) async fn submit_batch(
        &self,
        lease: &Lease,
        pairs: &[PairRecord],
        signatures: &str,
        decide: &mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
    ) -> Result<Submitted> {
        if let Some(refused) = self.commit_batch(lease, pairs, signatures).await? {
            return Ok(refused);
        }
        let advanced = self.advance(lease.run, decide).await?;
        Ok(Submitted::Counted {
            prefix: advanced.prefix,
            verdict: advanced.verdict,
        })
    }

    /// Counts a played batch without advancing its run: what a submitter killed between its
    /// two transactions leaves behind, and what [`Repo::advance`] then finds.
    pub(crate) async fn count_batch(
        &self,
        lease: &Lease,
        pairs: &[PairRecord],
        signatures: &str,
    ) -> Result<Submitted> {
        match self.commit_batch(lease, pairs, signatures).await? {
            Some(refused) => Ok(refused),
            None => Ok(Submitted::Counted {
                prefix: self.prefix(lease.run).await?,
                verdict: None,
            }),
        }
    }

    /// Counts a played batch, in one transaction: its pairs and games (each unit of the batch
    /// exactly once), and the batch marked done with its tally and the engines' `signatures`.
    /// `None` when counted; a batch counted before is [`Submitted::AlreadyCounted`] and a
    /// closed run [`Submitted::RunClosed`], having changed nothing. The lease need not be
    /// current (a late batch is as good as any, and counts once).
    ///
    /// The transaction writes no row that the run's other submits write: its batch's row, its
    /// pairs and games (new rows), its worker's row. A row lock is held until the commit's WAL
    /// flush, so a row that every submit wrote (the run's totals, as before migration 8) made
    /// a run's submits follow each other one flush at a time; these commit side by side, and
    /// PostgreSQL flushes them together. The pairs wait for their run's advance with no place
    /// in the commit order (`sequence` NULL). The run's row is share-locked: submits do not
    /// block each other, but closing the run (an advance's verdict, a stop) waits for the
    /// submits already past the check, so that no batch is counted after its run closed.
    async fn commit_batch(
        &self,
        lease: &Lease,
        pairs: &[PairRecord],
        signatures: &str,
    ) -> Result<Option<Submitted>> {
        let run = lease.run;
        let operation = || format!("submitting batch {} of run {run}", lease.sequence);
        let invalid = |reason: String| StoreError::InvalidBatch {
            location: self.location.to_string(),
            run,
            sequence: lease.sequence,
            reason,
        };
        let games = pairs
            .iter()
            .map(|pair| self.checked_games(pair))
            .collect::<Result<Vec<_>>>()?;
        let mut tx = self.begin_write(&operation).await?;
        // The batch's own row, locked: a second submit of the same batch waits here, then finds
        // it done. The run's row, share-locked: closing the run waits for this commit.
        let lock = DB::SUBMIT_LOCK;
        let batch = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT b.state, b.first_unit, b.units, r.state, r.verdict FROM batches b \
             JOIN runs r ON r.id = b.run_id WHERE b.run_id = $1 AND b.sequence = $2{lock}"
        )))
        .bind(run.get())
        .bind(as_i64(lease.sequence))
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        let Some(batch) = batch else {
            drop(tx);
            self.run(run).await?;
            return Err(invalid("the run has no such batch".into()));
        };
        let state: String = batch.try_get(0).map_err(|e| self.fail(operation(), e))?;
        let first_unit: i64 = batch.try_get(1).map_err(|e| self.fail(operation(), e))?;
        let units: i64 = batch.try_get(2).map_err(|e| self.fail(operation(), e))?;
        if state == "done" {
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            return Ok(Some(Submitted::AlreadyCounted));
        }
        let run_state: String = batch.try_get(3).map_err(|e| self.fail(operation(), e))?;
        let verdict: Option<String> = batch.try_get(4).map_err(|e| self.fail(operation(), e))?;
        if let Some(verdict) = self.verdict_of_state(&run_state, verdict)? {
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            return Ok(Some(Submitted::RunClosed(verdict)));
        }
        let plans = self.pairing_plans(&mut tx, run, &operation).await?;
        let pairings = plans.len() as u64;
        // Exactly the batch's units, each once, each in its pairing's plan.
        let unit_of = |pair: &PairRecord| pair.key.index * pairings + u64::from(pair.key.pairing);
        let mut seen = vec![false; usize::try_from(units).unwrap_or(0)];
        for pair in pairs {
            if pair.run != run {
                return Err(invalid(format!("{} is of run {}", pair.key, pair.run)));
            }
            let planned = plans.get(pair.key.pairing as usize).copied().unwrap_or(0);
            if pair.key.index >= planned {
                drop(tx);
                return Err(self.refusal(pair).await);
            }
            let unit = unit_of(pair);
            let offset = unit
                .checked_sub(first_unit as u64)
                .filter(|&o| o < units as u64);
            match offset {
                Some(o) if !seen[o as usize] => seen[o as usize] = true,
                Some(_) => return Err(invalid(format!("{} is given twice", pair.key))),
                None => {
                    return Err(invalid(format!(
                        "{} (schedule unit {unit}) is not in the batch (units {} to {})",
                        pair.key,
                        first_unit,
                        first_unit + units - 1
                    )))
                }
            }
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(invalid(format!(
                "schedule unit {} is missing ({} of {} units given)",
                first_unit as u64 + missing as u64,
                pairs.len(),
                units
            )));
        }
        self.touch_worker(&mut tx, lease.worker, &operation).await?;

        // The pairs, without a place in the commit order yet, and their games, in as few
        // statements as the batch allows. A pair already present was counted by whoever else
        // played it (a local player of the same run): the stored copy stands, and this batch
        // counts only the others.
        let mut in_order: Vec<(&PairRecord, &[GameValues])> = pairs
            .iter()
            .zip(&games)
            .map(|(pair, games)| (pair, games.as_slice()))
            .collect();
        in_order.sort_by_key(|(pair, _)| unit_of(pair));
        let rows: Vec<(&PairRecord, Option<i64>)> =
            in_order.iter().map(|(pair, _)| (*pair, None)).collect();
        let Some(inserted) = self
            .insert_pair_rows(&mut tx, run, &rows, now_ms(), &operation)
            .await?
        else {
            drop(tx);
            return Err(self.refusal(in_order[0].0).await);
        };
        let inserted: std::collections::BTreeSet<PairKey> = inserted.into_iter().collect();
        in_order.retain(|(pair, _)| inserted.contains(&pair.key));
        self.insert_games(&mut tx, run, &in_order, &operation)
            .await?;
        let mut tally = Totals::default();
        for (pair, _) in &in_order {
            tally.add(pair.tally);
        }
        let db_now = DB::NOW_MS;
        let done = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE batches SET state = 'done', worker_id = $3, signatures = $4, \
             submitted_at_ms = {db_now}, pairs = $5, wins = $6, draws = $7, losses = $8, \
             penta_ll = $9, penta_ld = $10, penta_dd = $11, penta_dw = $12, penta_ww = $13 \
             WHERE run_id = $1 AND sequence = $2 AND state <> 'done' RETURNING sequence"
        )))
        .bind(run.get())
        .bind(as_i64(lease.sequence))
        .bind(lease.worker.get())
        .bind(signatures);
        let done = with_totals(done, &tally)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        if done.is_none() {
            // Another submit of this batch committed while this one waited: count nothing.
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            return Ok(Some(Submitted::AlreadyCounted));
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(None)
    }

    /// Brings `run`'s accounting up to its counted pairs: adds every pair counted but not yet
    /// totalled (a submitted batch's) to the run's totals and its pairing's, gives each its
    /// place in the commit order (in unit order), walks the prefix over the units now counted
    /// in order, asking `decide` after each, and closes the run on a verdict or at its last
    /// unit. A run that is closed already has its late batches totalled, and its prefix stays.
    ///
    /// One transaction at a time advances a run: it takes the run's totals row with `FOR
    /// UPDATE SKIP LOCKED` (the row a local commit takes first too), and a caller that finds
    /// it taken returns at once ([`Advanced::busy`]): the holder adds its batch. That holds
    /// because the holder looks again for waiting pairs after its commit, and whoever found it
    /// busy had committed its pairs before it looked. So however many batches come in while a
    /// run advances, they cost the run one more flush, not one each. A holder stops after
    /// [`ROUNDS`] rounds (under a sustained stream of submits the rest is the next submit's);
    /// what a submitter killed between its two transactions left is the next submit's too,
    /// or, at a run's end, the next worker's that finds it older than a few seconds
    /// ([`Repo::stale_runs`]).
    pub(crate) async fn advance(
        &self,
        run: RunId,
        decide: &mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
    ) -> Result<Advanced> {
        let mut advanced = Advanced::default();
        for round in 0..ROUNDS {
            match self.advance_once(run, decide).await? {
                Some(step) => {
                    advanced.prefix = step.prefix;
                    advanced.verdict = advanced.verdict.or(step.verdict);
                    advanced.totalled += step.totalled;
                }
                None => {
                    advanced.busy = true;
                    if round == 0 {
                        advanced.prefix = self.prefix(run).await?;
                    }
                    break;
                }
            }
            if !self.waiting(run).await? {
                break;
            }
        }
        Ok(advanced)
    }

    /// One transaction of [`Repo::advance`]; `None` when another holds the run's totals.
    async fn advance_once(
        &self,
        run: RunId,
        decide: &mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
    ) -> Result<Option<Advanced>> {
        let operation = || format!("advancing run {run}");
        let mut tx = self.begin_write(&operation).await?;
        // The run's totals and prefix rows, locked (or skipped), with what the walk needs of
        // the run, in one statement.
        let lock = DB::ADVANCE_LOCK;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT t.pairs, r.state, r.pairs_planned, \
             (SELECT COUNT(*) FROM run_pairings g WHERE g.run_id = t.run_id), \
             p.units, p.pairs, p.wins, p.draws, p.losses, p.penta_ll, p.penta_ld, p.penta_dd, \
             p.penta_dw, p.penta_ww \
             FROM run_totals t JOIN runs r ON r.id = t.run_id \
             JOIN run_prefix p ON p.run_id = t.run_id WHERE t.run_id = $1{lock}"
        )))
        .bind(run.get())
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        let Some(row) = row else {
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            // No row to lock: another transaction holds it (PostgreSQL), or the run is unknown
            // or not queued.
            let found = sqlx::query(
                "SELECT t.pairs FROM run_totals t JOIN run_prefix p ON p.run_id = t.run_id \
                 WHERE t.run_id = $1",
            )
            .bind(run.get())
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?;
            return match found {
                Some(_) => Ok(None),
                None => {
                    self.run(run).await?;
                    Err(self.corrupt(
                        "run_prefix",
                        format!("run {run} is not queued for workers (it has no prefix row)"),
                    ))
                }
            };
        };
        let get = |i: usize| {
            row.try_get::<i64, _>(i)
                .map_err(|e| self.fail(operation(), e))
        };
        let counted_before = get(0)?;
        let state: String = row.try_get(1).map_err(|e| self.fail(operation(), e))?;
        let planned = self.non_negative(get(2)?, "runs")?;
        let pairings = match self.non_negative(get(3)?, "run_pairings")? {
            0 => return Err(self.corrupt("run_pairings", format!("run {run} has no pairing"))),
            n => n,
        };
        let prefix = Prefix {
            units: self.non_negative(get(4)?, "run_prefix")?,
            totals: self
                .decode_totals(&row, 5, "run_prefix")
                .map_err(|e| self.decoded(e, operation))?,
        };
        let totalled = self
            .total_waiting(&mut tx, run, counted_before, &operation)
            .await?;
        let (prefix, verdict) = self
            .advance_prefix(
                &mut tx,
                run,
                prefix,
                Schedule {
                    pairings,
                    planned,
                    running: state == "running",
                },
                decide,
                &operation,
            )
            .await?;
        let mut closed = None;
        if let Some(verdict) = verdict {
            let now = now_ms();
            let updated = sqlx::query(
                "UPDATE runs SET state = 'finished', verdict = $2, updated_at_ms = $3 \
                 WHERE id = $1 AND state = 'running' RETURNING id",
            )
            .bind(run.get())
            .bind(verdict.as_str())
            .bind(now)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
            closed = updated.map(|_| verdict);
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(Some(Advanced {
            prefix,
            verdict: closed,
            totalled,
            busy: false,
        }))
    }

    /// Inside an advance of `run` (its totals row locked, `counted_before` pairs in it): adds
    /// every pair waiting for the advance to the totals, the run's and its pairing's, and
    /// numbers them on from `counted_before` in unit order. Returns how many. The pairs are
    /// read once, in one statement: those committed after it wait for the next round.
    async fn total_waiting(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        counted_before: i64,
        operation: &impl Fn() -> String,
    ) -> Result<u64> {
        let rows = sqlx::query(
            "SELECT pairing, pair_index, wins, draws, losses, penta FROM pairs \
             WHERE run_id = $1 AND sequence IS NULL ORDER BY pair_index, pairing",
        )
        .bind(run.get())
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if rows.is_empty() {
            return Ok(0);
        }
        let mut tally = Totals::default();
        let mut by_pairing = std::collections::BTreeMap::<i64, Totals>::new();
        let mut numbered = Vec::with_capacity(rows.len());
        for (sequence, row) in (counted_before + 1..).zip(&rows) {
            let values = (0..6)
                .map(|i| row.try_get::<i64, _>(i))
                .collect::<std::result::Result<Vec<i64>, _>>()
                .map_err(|e| self.fail(operation(), e))?;
            let small = |v: i64| u8::try_from(v).unwrap_or(u8::MAX);
            let pair = PairTally {
                wins: small(values[2]),
                draws: small(values[3]),
                losses: small(values[4]),
                penta: small(values[5]),
            };
            tally.add(pair);
            by_pairing.entry(values[0]).or_default().add(pair);
            numbered.push([values[0], values[1], sequence]);
        }
        for chunk in numbered.chunks(NUMBERED_PER_STATEMENT) {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(format!(
                "WITH numbered (of_pairing, of_index, place) AS (VALUES {}) \
                 UPDATE pairs SET sequence = numbered.place FROM numbered \
                 WHERE pairs.run_id = $1 AND pairs.pairing = numbered.of_pairing \
                 AND pairs.pair_index = numbered.of_index AND pairs.sequence IS NULL \
                 RETURNING pair_index",
                super::values_rows(chunk.len(), "", 2, 3)
            )))
            .bind(run.get());
            for values in chunk {
                for value in values {
                    query = query.bind(*value);
                }
            }
            let updated = query
                .fetch_all(&mut **tx)
                .await
                .map_err(|e| self.fail(operation(), e))?
                .len();
            if updated != chunk.len() {
                return Err(self.corrupt(
                    "pairs",
                    format!(
                        "{updated} of {} waiting pairs of run {run} took their place in the \
                         commit order",
                        chunk.len()
                    ),
                ));
            }
        }
        let update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE run_totals SET {ADD_TOTALS} WHERE run_id = $1"
        )))
        .bind(run.get());
        with_totals(update, &tally)
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        for (pairing, totals) in &by_pairing {
            let update = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE run_pairings SET {ADD_TOTALS} WHERE run_id = $1 AND pairing = $11 \
                 RETURNING pairing"
            )))
            .bind(run.get());
            let counted = with_totals(update, totals)
                .bind(*pairing)
                .fetch_optional(&mut **tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
            if counted.is_none() {
                return Err(self.corrupt(
                    "run_pairings",
                    format!("run {run} has a counted pair of pairing {pairing}, which it lacks"),
                ));
            }
        }
        Ok(rows.len() as u64)
    }

    /// Whether `run` has pairs counted and not yet totalled, read outside any transaction: an
    /// advance's holder asks after its commit.
    async fn waiting(&self, run: RunId) -> Result<bool> {
        let found =
            sqlx::query("SELECT 1 FROM pairs WHERE run_id = $1 AND sequence IS NULL LIMIT 1")
                .bind(run.get())
                .fetch_optional(&self.reader)
                .await
                .map_err(|e| self.fail(format!("reading the waiting pairs of run {run}"), e))?;
        Ok(found.is_some())
    }

    /// The runs with a pair counted more than `older_than_ms` ago (by the submitter's clock)
    /// and not yet totalled: a submitter died between its two transactions, and no submit
    /// came after it to advance the run.
    pub(crate) async fn stale_runs(&self, older_than_ms: i64) -> Result<Vec<RunId>> {
        let rows = sqlx::query(
            "SELECT DISTINCT run_id FROM pairs WHERE sequence IS NULL AND committed_at_ms < $1 \
             ORDER BY run_id",
        )
        .bind(now_ms().saturating_sub(older_than_ms))
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail("reading the runs waiting for an advance", e))?;
        rows.iter()
            .map(|row| row.try_get::<i64, _>(0).map(RunId::new))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.fail("reading the runs waiting for an advance", e))
    }

    /// `run`'s prefix as stored.
    async fn prefix(&self, run: RunId) -> Result<Prefix> {
        let operation = || format!("reading the prefix of run {run}");
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT units, {TALLY_COLUMNS} FROM run_prefix WHERE run_id = $1"
        )))
        .bind(run.get())
        .fetch_optional(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?
        .ok_or_else(|| self.corrupt("run_prefix", format!("queued run {run} has no prefix row")))?;
        let units: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
        Ok(Prefix {
            units: self.non_negative(units, "run_prefix")?,
            totals: self
                .decode_totals(&row, 1, "run_prefix")
                .map_err(|e| self.decoded(e, operation))?,
        })
    }

    /// Moves a running `run`'s `prefix` (as locked) over every unit counted and totalled in
    /// order after it,
    /// asking `decide` after each; stops at the first unit not yet totalled or at a decision.
    /// The whole run counted without a decision is [`RunOutcome::Complete`]. A closed run's
    /// prefix stays where its verdict left it.
    async fn advance_prefix(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        mut prefix: Prefix,
        schedule: Schedule,
        decide: &mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
        operation: &impl Fn() -> String,
    ) -> Result<(Prefix, Option<RunOutcome>)> {
        if !schedule.running {
            return Ok((prefix, None));
        }
        let before = prefix.units;
        let mut verdict = self
            .walk_prefix(tx, run, schedule.pairings, &mut prefix, decide, operation)
            .await?;
        if verdict.is_none() && prefix.units >= schedule.planned {
            verdict = Some(RunOutcome::Complete);
        }
        if prefix.units != before {
            let update = sqlx::query(
                "UPDATE run_prefix SET units = $2, pairs = $3, wins = $4, draws = $5, \
                 losses = $6, penta_ll = $7, penta_ld = $8, penta_dd = $9, penta_dw = $10, \
                 penta_ww = $11 WHERE run_id = $1",
            )
            .bind(run.get())
            .bind(as_i64(prefix.units));
            with_totals(update, &prefix.totals)
                .execute(&mut **tx)
                .await
                .map_err(|e| self.fail(operation(), e))?;
        }
        Ok((prefix, verdict))
    }

    /// Walks `prefix` forward over the totalled pairs in unit order after it (unit = index *
    /// P + pairing, so index then pairing is unit order, which the `pairs_in_unit_order`
    /// index serves), a page at a time, until a unit is missing or `decide` gives a verdict.
    async fn walk_prefix(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        pairings: u64,
        prefix: &mut Prefix,
        decide: &mut (dyn FnMut(&Totals) -> Option<RunOutcome> + Send),
        operation: &impl Fn() -> String,
    ) -> Result<Option<RunOutcome>> {
        const PAGE: i64 = 512;
        loop {
            let start_index = prefix.units / pairings.max(1);
            let rows = sqlx::query(
                "SELECT pairing, pair_index, wins, draws, losses, penta FROM pairs \
                 WHERE run_id = $1 AND pair_index >= $2 AND sequence IS NOT NULL \
                 ORDER BY pair_index, pairing LIMIT $3",
            )
            .bind(run.get())
            .bind(as_i64(start_index))
            .bind(PAGE)
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
            let page_full = rows.len() as i64 == PAGE;
            let mut gained = false;
            for row in &rows {
                let values = (0..6)
                    .map(|i| row.try_get::<i64, _>(i))
                    .collect::<std::result::Result<Vec<i64>, _>>()
                    .map_err(|e| self.fail(operation(), e))?;
                let unit = values[1] as u64 * pairings + values[0] as u64;
                if unit < prefix.units {
                    continue;
                }
                if unit > prefix.units {
                    return Ok(None);
                }
                let small = |v: i64| u8::try_from(v).unwrap_or(u8::MAX);
                prefix.totals.add(PairTally {
                    wins: small(values[2]),
                    draws: small(values[3]),
                    losses: small(values[4]),
                    penta: small(values[5]),
                });
                prefix.units += 1;
                gained = true;
                if let Some(verdict) = decide(&prefix.totals) {
                    return Ok(Some(verdict));
                }
            }
            if !page_full || !gained {
                return Ok(None);
            }
        }
    }

    /// The queued runs (running or finished), highest priority first, with their batches'
    /// progress and totals.
    ///
    /// Each run's record (its state) is read before its counts and prefix, in separate
    /// statements: the coordinator closes a run and moves its prefix in one transaction, so
    /// a run read as finished is always shown with its final prefix and totals. Read the
    /// other way round, a poll between the two statements saw a finished run with the prefix
    /// of the batch before (found by the fleet's kill test on PostgreSQL).
    pub(crate) async fn queued_runs(&self) -> Result<Vec<QueuedRun>> {
        let operation = || "reading the queued runs".to_owned();
        let ids: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM runs WHERE batch_units IS NOT NULL ORDER BY id")
                .fetch_all(&self.reader)
                .await
                .map_err(|e| self.fail(operation(), e))?;
        let mut records = std::collections::HashMap::with_capacity(ids.len());
        for id in ids {
            let id = RunId::new(id);
            records.insert(id, self.run(id).await?);
        }
        let now = DB::NOW_MS;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT r.id, r.priority, r.worker_limit, r.batch_units, \
             (SELECT COUNT(*) FROM batches b WHERE b.run_id = r.id AND b.state = 'open'), \
             (SELECT COUNT(*) FROM batches b WHERE b.run_id = r.id AND b.state = 'leased' \
                 AND b.lease_expires_ms >= {now}), \
             (SELECT COUNT(*) FROM batches b WHERE b.run_id = r.id AND b.state = 'leased' \
                 AND b.lease_expires_ms < {now}), \
             (SELECT COUNT(*) FROM batches b WHERE b.run_id = r.id AND b.state = 'done'), \
             (SELECT COUNT(DISTINCT b.worker_id) FROM batches b WHERE b.run_id = r.id \
                 AND b.state = 'leased' AND b.lease_expires_ms >= {now}), \
             p.units, p.pairs, p.wins, p.draws, p.losses, p.penta_ll, p.penta_ld, p.penta_dd, \
             p.penta_dw, p.penta_ww \
             FROM runs r JOIN run_prefix p ON p.run_id = r.id \
             WHERE r.batch_units IS NOT NULL ORDER BY r.priority DESC, r.id"
        )))
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        let mut queued = Vec::with_capacity(rows.len());
        for row in &rows {
            let get = |i: usize| {
                row.try_get::<i64, _>(i)
                    .map_err(|e| self.fail(operation(), e))
            };
            let limit: Option<i64> = row.try_get(2).map_err(|e| self.fail(operation(), e))?;
            let count = |i: usize| get(i).and_then(|v| self.non_negative(v, "batches"));
            let id = RunId::new(get(0)?);
            // A run queued after the first read is shown by the next one.
            let Some(run) = records.remove(&id) else {
                continue;
            };
            queued.push(QueuedRun {
                run,
                priority: get(1)?,
                worker_limit: limit.map(|l| u32::try_from(l).unwrap_or(u32::MAX)),
                batch_units: count(3)?,
                batches: BatchCounts {
                    open: count(4)?,
                    leased: count(5)?,
                    expired: count(6)?,
                    done: count(7)?,
                    workers: count(8)?,
                },
                prefix: Prefix {
                    units: count(9)?,
                    totals: self
                        .decode_totals(row, 10, "run_prefix")
                        .map_err(|e| self.decoded(e, operation))?,
                },
                totals: self.totals(id).await?,
            });
        }
        Ok(queued)
    }

    /// The signature of each of `run`'s engines, in engine order; `None` where nobody has set
    /// one yet.
    pub(crate) async fn engine_signatures(&self, run: RunId) -> Result<Vec<Option<String>>> {
        let operation = || format!("reading the engine signatures of run {run}");
        self.run(run).await?;
        let rows = sqlx::query(
            "SELECT signature FROM run_engines WHERE run_id = $1 ORDER BY engine_index",
        )
        .bind(run.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        rows.iter()
            .map(|row| row.try_get::<Option<String>, _>(0))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.fail(operation(), e))
    }

    /// Sets each engine's signature where none is set yet (the first worker's, where the
    /// submitter gave none), and returns them all as stored: a worker compares its own with
    /// these.
    pub(crate) async fn adopt_signatures(
        &self,
        run: RunId,
        signatures: &[String],
    ) -> Result<Vec<Option<String>>> {
        let operation = || format!("setting the engine signatures of run {run}");
        let mut tx = self.begin_write(&operation).await?;
        for (index, signature) in (0_i64..).zip(signatures) {
            sqlx::query(
                "UPDATE run_engines SET signature = $3 \
                 WHERE run_id = $1 AND engine_index = $2 AND signature IS NULL",
            )
            .bind(run.get())
            .bind(index)
            .bind(signature.as_str())
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        self.engine_signatures(run).await
    }

    /// The files stored with `run`, by name.
    pub(crate) async fn run_files(&self, run: RunId) -> Result<Vec<RunFile>> {
        let operation = || format!("reading the files of run {run}");
        let rows = sqlx::query(
            "SELECT name, sha256, content FROM run_files WHERE run_id = $1 ORDER BY name",
        )
        .bind(run.get())
        .fetch_all(&self.reader)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        let mut files = Vec::with_capacity(rows.len());
        for row in &rows {
            let name: String = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
            let sha256: String = row.try_get(1).map_err(|e| self.fail(operation(), e))?;
            let content: Vec<u8> = row.try_get(2).map_err(|e| self.fail(operation(), e))?;
            if sha256_hex(&content) != sha256 {
                return Err(self.corrupt(
                    "run_files",
                    format!("file {name:?} of run {run} does not match its sha256"),
                ));
            }
            files.push(RunFile { name, content });
        }
        Ok(files)
    }

    /// The verdict of `run` if it is finished, read inside `tx` without a lock: a heartbeat
    /// changes nothing of the run (every worker's heartbeats would queue on the one row).
    async fn closed(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        operation: &impl Fn() -> String,
    ) -> Result<Option<RunOutcome>> {
        let row = sqlx::query("SELECT state, verdict FROM runs WHERE id = $1")
            .bind(run.get())
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| self.fail(operation(), e))?
            .ok_or_else(|| self.unknown(run))?;
        let state: String = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
        let verdict: Option<String> = row.try_get(1).map_err(|e| self.fail(operation(), e))?;
        self.verdict_of_state(&state, verdict)
    }

    /// A run's verdict from its row's `state` and `verdict`: none while it runs.
    fn verdict_of_state(&self, state: &str, verdict: Option<String>) -> Result<Option<RunOutcome>> {
        if state == "running" {
            return Ok(None);
        }
        verdict
            .unwrap_or_default()
            .parse::<RunOutcome>()
            .map(Some)
            .map_err(|detail| self.corrupt("runs", detail))
    }

    /// Each of `run`'s pairings' planned pairs, in pairing order (a run has at least one).
    async fn pairing_plans(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: RunId,
        operation: &impl Fn() -> String,
    ) -> Result<Vec<u64>> {
        let rows = sqlx::query(
            "SELECT pairs_planned FROM run_pairings WHERE run_id = $1 ORDER BY pairing",
        )
        .bind(run.get())
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if rows.is_empty() {
            return Err(self.corrupt("run_pairings", format!("run {run} has no pairing")));
        }
        rows.iter()
            .map(|row| {
                let planned: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
                self.non_negative(planned, "run_pairings")
            })
            .collect()
    }

    async fn touch_worker(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        worker: WorkerId,
        operation: &impl Fn() -> String,
    ) -> Result<()> {
        let now = DB::NOW_MS;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE workers SET last_contact_ms = {now} WHERE id = $1"
        )))
        .bind(worker.get())
        .execute(&mut **tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        Ok(())
    }

    fn decode_lease(&self, row: &DB::Row) -> std::result::Result<Lease, sqlx::Error> {
        let unsigned = |i: usize| -> std::result::Result<u64, sqlx::Error> {
            Ok(u64::try_from(row.try_get::<i64, _>(i)?).unwrap_or(0))
        };
        Ok(Lease {
            run: RunId::new(row.try_get(0)?),
            sequence: unsigned(1)?,
            first_unit: unsigned(2)?,
            units: unsigned(3)?,
            worker: WorkerId::new(row.try_get(4)?),
            expires_ms: row.try_get(5)?,
            claims: unsigned(6)?,
        })
    }
}

/// A file's SHA-256, as lowercase hex: how a stored file is checked when it is read back, and
/// how a worker names an engine binary.
pub fn sha256_hex(content: &[u8]) -> String {
    Sha256::digest(content)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Binds the nine counts of `totals` next, in [`TALLY_COLUMNS`] order: a batch's tally and a
/// prefix's totals are stored as the run's totals are.
fn with_totals<'q, DB: sqlx::Database>(
    query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>,
    totals: &Totals,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>
where
    i64: Encode<'q, DB> + Type<DB>,
{
    [totals.pairs, totals.wins, totals.draws, totals.losses]
        .into_iter()
        .chain(totals.pentanomial)
        .fold(query, |query, count| query.bind(as_i64(count)))
}

/// A count or index as the database's signed 64-bit integer (none comes near 2^63).
fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
