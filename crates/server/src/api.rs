//! The HTTP API's bodies and routes, shared by the server and its client so that both sides
//! read one definition. Responses are the store's own typed records (a [`Lease`], a
//! [`Submitted`] ...) as JSON; requests are the structs below. Every refusal is a 4xx whose
//! body is an [`ApiError`].

use arbiter_store::{Lease, PairRecord, RunId, Totals, WorkerId};
use serde::{Deserialize, Serialize};

/// The API's version prefix: a worker and a server of different major APIs refuse each other
/// with a 404 rather than misread each other's bodies.
pub const PREFIX: &str = "/api/v1";

/// The largest request body the server reads: a batch's pairs with every game's PGN and JSON
/// line (a 100-pair batch of long games is a few megabytes).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The largest engine binary the server takes (`PUT /artifacts/{sha256}`): engines with
/// embedded networks are tens of megabytes.
pub const MAX_ARTIFACT_BYTES: usize = 512 * 1024 * 1024;

/// A refusal: what was wrong, and the field of the request it was in, if one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The message, in full.
    pub error: String,
    /// The request's field at fault (`lease.worker`, `pairs[3].games`), if the fault is one
    /// field's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// `POST /claim`: the next batch for `worker`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRequest {
    pub worker: WorkerId,
    /// The lease's length in milliseconds.
    pub lease_ms: i64,
    /// Runs the worker will not play (engines it lacks, a pinned run's others).
    #[serde(default)]
    pub excluded: Vec<RunId>,
}

/// `POST /heartbeat`: extend a lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    pub lease: Lease,
    pub lease_ms: i64,
}

/// `POST /release`: give a batch back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseRequest {
    pub lease: Lease,
}

/// `POST /submit`: a played batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmitRequest {
    pub lease: Lease,
    pub pairs: Vec<PairRecord>,
    /// The engines' signatures on the worker, as JSON (the store's record per batch).
    pub signatures: String,
}

/// `POST /submit/tuning`: a played batch of a tuning run. The server makes its step with the
/// run's own tuner from what the batch played, checked against the run's plan for the batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuningSubmitRequest {
    pub lease: Lease,
    /// The batch's games from the tuned engine's plus side.
    pub tally: Totals,
    pub signatures: String,
    /// What the batch played, as the tuner wrote it (SPSA's perturbation).
    pub played: String,
}

/// `POST /runs/{run}/signatures`: the worker's engine signatures, adopted where the run has
/// none yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignaturesRequest {
    pub mine: Vec<String>,
}

/// `GET /stale?older_than_ms=N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaleQuery {
    pub older_than_ms: u64,
}
