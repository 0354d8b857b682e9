//! A queued tuning run's submit: a batch's games and the update they make, counted once.
//!
//! A tuning run's batches are its steps' pairs. A worker plays a batch at a perturbation of the
//! values the run had when it claimed it, and the update is applied here, inside the submit's
//! transaction, to the values the run has now (other workers' batches may have moved them
//! since): the batch row's key makes a second submit count nothing, and the run's row, locked
//! by the submit, makes updates follow each other, each starting from the last. The tuner's
//! arithmetic stays the tuner's: the store hands it the step's number and the values it starts
//! from (JSON, verbatim) and stores what it returns.

use sqlx::migrate::Migrate;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{as_i64, with_totals};
use crate::error::{Result, StoreError};
use crate::fleet::{Lease, MakeStep, Submitted};
use crate::model::{RunOutcome, RunState, Totals};
use crate::repo::{now_ms, Dialect, Repo};

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
    /// Counts a played batch of a queued tuning run, in one transaction: the step `make`
    /// makes of it inserted under its key, the batch marked done with its tally, and the run
    /// closed when its last batch is counted.
    pub(crate) async fn submit_tuning_batch(
        &self,
        lease: &Lease,
        tally: &Totals,
        signatures: &str,
        make: &mut MakeStep<'_>,
    ) -> Result<Submitted> {
        let run = lease.run;
        let operation = || format!("submitting batch {} of tuning run {run}", lease.sequence);
        let invalid = |reason: String| StoreError::InvalidBatch {
            location: self.location.to_string(),
            run,
            sequence: lease.sequence,
            reason,
        };
        let mut tx = self.begin_write(&operation).await?;
        let for_update = DB::FOR_UPDATE;
        // The batch's own row: a second submit of the same batch waits here, then finds it done.
        let batch = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT state, units FROM batches WHERE run_id = $1 AND sequence = $2{for_update}"
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
        let units: i64 = batch.try_get(1).map_err(|e| self.fail(operation(), e))?;
        if state == "done" {
            tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
            return Ok(Submitted::AlreadyCounted);
        }
        if tally.pairs != self.non_negative(units, "batches")? {
            return Err(invalid(format!(
                "{} pairs given for a batch of {units}",
                tally.pairs
            )));
        }
        let now = now_ms();
        self.touch_worker(&mut tx, lease.worker, &operation).await?;
        // The run's row, locked until the commit: one run's updates follow each other.
        if self
            .touch_running(&mut tx, run, now, &operation)
            .await?
            .is_none()
        {
            drop(tx);
            return match self.run(run).await?.state {
                RunState::Finished { verdict } => Ok(Submitted::RunClosed(verdict)),
                RunState::Running => Err(self.corrupt(
                    "runs",
                    format!("run {run} is running but refused the update"),
                )),
            };
        }
        let Some(next) = self.next_step(&mut tx, run, &operation).await? else {
            drop(tx);
            return Err(invalid(format!("run {run} is not a tuning run")));
        };
        let last: Option<String> = match next.checked_sub(1) {
            None => None,
            Some(last) => Some(
                sqlx::query("SELECT theta FROM tuning_steps WHERE run_id = $1 AND step = $2")
                    .bind(run.get())
                    .bind(as_i64(last))
                    .fetch_optional(&mut *tx)
                    .await
                    .and_then(|row| row.map(|row| row.try_get(0)).transpose())
                    .map_err(|e| self.fail(operation(), e))?
                    .ok_or_else(|| {
                        self.corrupt(
                            "tuning_steps",
                            format!("run {run} has {next} steps but no step {last}"),
                        )
                    })?,
            ),
        };
        let record = match make(next, last.as_deref()) {
            Ok(record) => record,
            Err(reason) => {
                drop(tx);
                return Err(StoreError::InvalidStep {
                    location: self.location.to_string(),
                    run,
                    step: next,
                    reason,
                });
            }
        };
        if record.step != next || record.totals != *tally {
            drop(tx);
            return Err(invalid(format!(
                "the tuner made step {} of {} pairs where step {next} of the batch's {} pairs \
                 was due",
                record.step, record.totals.pairs, tally.pairs
            )));
        }
        let counts = self.step_counts(run, &record)?;
        if !self
            .insert_step(&mut tx, run, &record, counts, now, &operation)
            .await?
        {
            drop(tx);
            return Err(self.corrupt(
                "tuning_steps",
                format!("step {next} of run {run} is present though the run counted {next}"),
            ));
        }
        let db_now = DB::NOW_MS;
        let done = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE batches SET state = 'done', worker_id = $3, signatures = $4, \
             submitted_at_ms = {db_now}, pairs = $5, wins = $6, draws = $7, losses = $8, \
             penta_ll = $9, penta_ld = $10, penta_dd = $11, penta_dw = $12, penta_ww = $13 \
             WHERE run_id = $1 AND sequence = $2"
        )))
        .bind(run.get())
        .bind(as_i64(lease.sequence))
        .bind(lease.worker.get())
        .bind(signatures);
        with_totals(done, tally)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        let undone: i64 =
            sqlx::query("SELECT COUNT(*) FROM batches WHERE run_id = $1 AND state <> 'done'")
                .bind(run.get())
                .fetch_one(&mut *tx)
                .await
                .and_then(|row| row.try_get(0))
                .map_err(|e| self.fail(operation(), e))?;
        let verdict = (undone == 0).then_some(RunOutcome::Complete);
        if let Some(verdict) = verdict {
            sqlx::query(
                "UPDATE runs SET state = 'finished', verdict = $2, updated_at_ms = $3 \
                 WHERE id = $1 AND state = 'running'",
            )
            .bind(run.get())
            .bind(verdict.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(Submitted::Stepped {
            step: next,
            verdict,
        })
    }
}
