//! What a fleet worker asks of the fleet's coordinator, whether it reaches the database itself
//! (`arbiter worker --db`: the [`Store`] is the coordinator) or through `arbiter serve`
//! (`--server`: the server crate's HTTP client, which holds no database credentials).
//!
//! The worker's loop ([`crate::fleet::work`]) is written once against this trait, so the two
//! kinds of worker claim, play, heartbeat and submit identically; only where the rule that
//! judges a run is applied differs. A worker on the database applies the run's SPRT inside the
//! store's transaction itself (`decide`); a remote coordinator ignores the worker's `decide`
//! and applies the same rule, read from the run's stored configuration, on its side
//! ([`crate::fleet::run_rule`]), so that a worker cannot judge a run by a rule of its own.

use std::time::Duration;

use arbiter_store::{
    Advanced, Heartbeat, Lease, MakeStep, PairRecord, QueuedRun, Run, RunFile, RunId, RunOutcome,
    Store, StoreError, Submitted, Totals, TuningSetup, WorkerId, WorkerInfo,
};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// A coordinator's answer: the store's errors, whose [`StoreError::is_transient`] tells the
/// worker to try again.
pub type CoordinatorFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// The rule that judges a run from its prefix's totals (the SPRT), as the store's submit and
/// advance ask it.
pub type Decide<'a> = dyn FnMut(&Totals) -> Option<RunOutcome> + Send + 'a;

/// Everything a worker reads to play a run: the run, its tuning set-up if it is a tuning run,
/// and the files stored with it (its book).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSetup {
    /// The run as stored.
    pub run: Run,
    /// Its tuner's set-up: `None` for a match.
    pub tuning: Option<TuningSetup>,
    /// The files it reads, as submitted.
    pub files: Vec<RunFile>,
    /// Its engines' signatures as the fleet knows them (`sha256:HEX` for a binary): an engine
    /// this worker lacks is fetched as the artifact of that hash, if the fleet stores one.
    #[serde(default)]
    pub signatures: Vec<Option<String>>,
}

/// The fleet's coordinator as a worker sees it. Every method is one request (one transaction
/// or read of the store's), safe to retry after a transient error: claims return a worker's
/// own lease again, submits are keyed by (run, batch).
pub trait Coordinator: Send + Sync {
    /// Where the coordinator is, for messages: the database's redacted URL or the server's.
    fn location(&self) -> String;

    /// Registers this worker (or finds it again by name): its id for claims.
    fn register<'a>(&'a self, info: &'a WorkerInfo) -> CoordinatorFuture<'a, WorkerId>;

    /// The queued runs with their progress, highest priority first.
    fn queue(&self) -> CoordinatorFuture<'_, Vec<QueuedRun>>;

    /// The next batch for `worker`, from no run in `excluded`.
    fn claim<'a>(
        &'a self,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &'a [RunId],
    ) -> CoordinatorFuture<'a, Option<Lease>>;

    /// Extends `lease`, or says why it cannot be.
    fn heartbeat<'a>(&'a self, lease: &'a Lease, lease_ms: i64)
        -> CoordinatorFuture<'a, Heartbeat>;

    /// Gives `lease`'s batch back to the queue: whether it was still this worker's.
    fn release<'a>(&'a self, lease: &'a Lease) -> CoordinatorFuture<'a, bool>;

    /// What the worker needs to play `run`.
    fn run_setup(&self, run: RunId) -> CoordinatorFuture<'_, RunSetup>;

    /// The run's engine signatures, this worker's `mine` adopted where the run had none.
    fn adopt_signatures<'a>(
        &'a self,
        run: RunId,
        mine: &'a [String],
    ) -> CoordinatorFuture<'a, Vec<Option<String>>>;

    /// The engine binary stored under `sha256` (hex), if the fleet has it.
    fn artifact<'a>(&'a self, sha256: &'a str) -> CoordinatorFuture<'a, Option<Vec<u8>>>;

    /// A tuning run's values as its last step left them (the tuner's JSON), `None` before its
    /// first step.
    fn tuning_theta(&self, run: RunId) -> CoordinatorFuture<'_, Option<String>>;

    /// Counts a played batch once and advances its run, judging it with `decide` (a remote
    /// coordinator judges with the run's own rule instead).
    fn submit<'a>(
        &'a self,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
        decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Submitted>;

    /// Counts a played batch of a tuning run once, with the update `make` computes from the
    /// values the run's last step left (a remote coordinator makes it instead from `played`,
    /// what the batch played, with the run's own tuner).
    fn submit_tuning<'a>(
        &'a self,
        lease: &'a Lease,
        tally: &'a Totals,
        signatures: &'a str,
        played: &'a str,
        make: &'a mut MakeStep<'_>,
    ) -> CoordinatorFuture<'a, Submitted>;

    /// The runs whose counted batches waited longer than `older_than` for an advance.
    fn stale_runs(&self, older_than: Duration) -> CoordinatorFuture<'_, Vec<RunId>>;

    /// Advances `run`: its counted batches totalled, its prefix walked with `decide` (a remote
    /// coordinator judges with the run's own rule instead).
    fn advance<'a>(
        &'a self,
        run: RunId,
        decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Advanced>;
}

/// A worker on the database: every request is the store's own.
impl Coordinator for Store {
    fn location(&self) -> String {
        Store::location(self).to_owned()
    }

    fn register<'a>(&'a self, info: &'a WorkerInfo) -> CoordinatorFuture<'a, WorkerId> {
        self.register_worker(info)
    }

    fn queue(&self) -> CoordinatorFuture<'_, Vec<QueuedRun>> {
        self.queued_runs()
    }

    fn claim<'a>(
        &'a self,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &'a [RunId],
    ) -> CoordinatorFuture<'a, Option<Lease>> {
        self.claim_batch(worker, lease_ms, excluded)
    }

    fn heartbeat<'a>(
        &'a self,
        lease: &'a Lease,
        lease_ms: i64,
    ) -> CoordinatorFuture<'a, Heartbeat> {
        Store::heartbeat(self, lease, lease_ms)
    }

    fn release<'a>(&'a self, lease: &'a Lease) -> CoordinatorFuture<'a, bool> {
        self.release_batch(lease)
    }

    fn run_setup(&self, run: RunId) -> CoordinatorFuture<'_, RunSetup> {
        Box::pin(async move {
            Ok(RunSetup {
                run: self.run(run).await?,
                tuning: self.tuning_setup(run).await?,
                files: self.run_files(run).await?,
                signatures: self.engine_signatures(run).await?,
            })
        })
    }

    fn adopt_signatures<'a>(
        &'a self,
        run: RunId,
        mine: &'a [String],
    ) -> CoordinatorFuture<'a, Vec<Option<String>>> {
        Store::adopt_signatures(self, run, mine)
    }

    fn artifact<'a>(&'a self, sha256: &'a str) -> CoordinatorFuture<'a, Option<Vec<u8>>> {
        Store::artifact(self, sha256)
    }

    fn tuning_theta(&self, run: RunId) -> CoordinatorFuture<'_, Option<String>> {
        Box::pin(async move {
            let steps = self.tuning_steps(run).await?;
            Ok(steps.last().map(|last| last.step.theta.clone()))
        })
    }

    fn submit<'a>(
        &'a self,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
        decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Submitted> {
        self.submit_batch(lease, pairs, signatures, decide)
    }

    fn submit_tuning<'a>(
        &'a self,
        lease: &'a Lease,
        tally: &'a Totals,
        signatures: &'a str,
        _played: &'a str,
        make: &'a mut MakeStep<'_>,
    ) -> CoordinatorFuture<'a, Submitted> {
        self.submit_tuning_batch(lease, tally, signatures, make)
    }

    fn stale_runs(&self, older_than: Duration) -> CoordinatorFuture<'_, Vec<RunId>> {
        Store::stale_runs(self, older_than)
    }

    fn advance<'a>(
        &'a self,
        run: RunId,
        decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Advanced> {
        Store::advance(self, run, decide)
    }
}
