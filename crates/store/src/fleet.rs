//! What the store keeps for a fleet: runs queued for workers, their batches and leases, the
//! workers, and the prefix a queued run's verdict is judged on. The SQL is in
//! `repo/batches.rs`; the crate docs ("The fleet") say how exactly-once holds.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;

use crate::model::{Run, RunId, RunOutcome, Totals, TuningStep};

/// The database id of a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WorkerId(i64);

impl WorkerId {
    pub const fn new(id: i64) -> WorkerId {
        WorkerId(id)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for WorkerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How a worker introduces itself. Its name is its identity: a worker restarted under the same
/// name is the same worker, and gets its unexpired lease back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub name: String,
    pub host: String,
    /// The games it plays at once.
    pub cores: u32,
    /// The arbiter version it runs.
    pub version: String,
}

/// A worker as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worker {
    pub id: WorkerId,
    pub info: WorkerInfo,
    /// Milliseconds since the Unix epoch on the database's clock.
    pub first_contact_ms: i64,
    pub last_contact_ms: i64,
}

/// How a run is queued for workers: [`Store::queue_run`](crate::Store::queue_run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queue {
    /// Higher goes first; equal priorities go oldest run first.
    pub priority: i64,
    /// At most this many workers hold leases of the run at once; none for no limit.
    pub worker_limit: Option<u32>,
    /// Schedule units per batch (pairs, or an unpaired run's units of one or two games).
    pub batch_units: u64,
    /// Each engine's signature, in the run's engine order, where the submitter knows it (a
    /// hash of the binary, a bench count); the first worker to play an engine without one
    /// sets it, and workers whose engine differs are refused the run.
    pub signatures: Vec<Option<String>>,
    /// Files the run needs that workers lack (its opening book), stored with it.
    pub files: Vec<RunFile>,
}

/// A file stored with a run, by the name its configuration gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFile {
    pub name: String,
    pub content: Vec<u8>,
}

/// A worker's right to play one batch until `expires_ms` (the database's clock).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub run: RunId,
    /// The batch's number in its run, from 0.
    pub sequence: u64,
    /// The run's schedule units the batch holds, in the runner's order (unit u is pair
    /// u / P of pairing u % P, for P pairings).
    pub first_unit: u64,
    pub units: u64,
    pub worker: WorkerId,
    pub expires_ms: i64,
    /// How many times the batch has been leased, this lease included: more than one means a
    /// worker died, was stopped or was cut off with it.
    pub claims: u64,
}

impl Lease {
    /// The schedule units to play.
    pub fn unit_range(&self) -> Range<u64> {
        self.first_unit..self.first_unit + self.units
    }
}

/// What a heartbeat found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Heartbeat {
    /// The lease is the worker's, now until `expires_ms`.
    Held { expires_ms: i64 },
    /// Another worker has the batch, or it is done: stop playing it.
    Lost,
    /// The run is over (decided, complete or stopped): drop the batch.
    RunClosed(RunOutcome),
}

/// The prefix of a queued run: its first `units` schedule units, all counted, and their
/// totals. The verdict is judged on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prefix {
    pub units: u64,
    pub totals: Totals,
}

/// What makes a queued tuning run's step of a batch (the tuner's update), given the step's
/// number and the values the last committed step left (its JSON; `None` before the first):
/// the step to store, or why there is none.
pub type MakeStep<'a> = dyn FnMut(u64, Option<&str>) -> Result<TuningStep, String> + Send + 'a;

/// What [`Store::submit_batch`](crate::Store::submit_batch) did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Submitted {
    /// Counted, in one transaction; `prefix` as the submit's advance left it (or found it, if
    /// another advance of the run was under way, which adds this batch), `verdict` if that
    /// advance closed the run.
    Counted {
        prefix: Prefix,
        verdict: Option<RunOutcome>,
    },
    /// A batch of a tuning run counted, in one transaction with the update it made: the
    /// run's step `step` (steps are numbered in the order their updates were applied);
    /// `verdict` if this batch was the run's last.
    Stepped {
        step: u64,
        verdict: Option<RunOutcome>,
    },
    /// The batch was counted before (a retry, or a worker whose lease had moved on): nothing
    /// changed.
    AlreadyCounted,
    /// The run is over: nothing counted.
    RunClosed(RunOutcome),
}

/// What [`Store::advance`](crate::Store::advance) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advanced {
    /// The prefix as this advance left it (or, if it was busy, as it stood).
    pub prefix: Prefix,
    /// The verdict, if this advance closed the run.
    pub verdict: Option<RunOutcome>,
    /// The submitted pairs it added to the totals.
    pub totalled: u64,
    /// Another transaction was advancing the run, and adds what this one would have.
    pub busy: bool,
}

/// How far a queued run's batches are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCounts {
    pub open: u64,
    /// Leased and not expired.
    pub leased: u64,
    /// Leased, but the lease expired: the next claim takes it.
    pub expired: u64,
    pub done: u64,
    /// Workers holding an unexpired lease of the run.
    pub workers: u64,
}

/// A queued run as `arbiter runs` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedRun {
    pub run: Run,
    pub priority: i64,
    pub worker_limit: Option<u32>,
    pub batch_units: u64,
    pub batches: BatchCounts,
    /// What the verdict is judged on.
    pub prefix: Prefix,
    /// Every counted pair its advances have totalled, the prefix's and those beyond a gap (a
    /// batch submitted a moment ago may be missing: its advance is under way).
    pub totals: Totals,
}
