//! The worker's side of the API: a [`Coordinator`] over HTTP, so that `arbiter worker
//! --server URL --token-file F` runs the same loop as `--db URL`, without database
//! credentials.
//!
//! Errors become [`StoreError::Remote`], transient when trying again may succeed: the server
//! unreachable, restarting (connection refused or reset, a 502/503/504 from the proxy in
//! front of it) or its database away (503). The worker's loop retries those with backoff, as
//! it retries a database's own transient errors, so a worker rides out server restarts and
//! network cuts; a 4xx is the worker's fault or the run's and is not retried.

use std::time::Duration;

use arbiter_runner::coordinator::{Coordinator, CoordinatorFuture, Decide, RunSetup};
use arbiter_runner::fleet::{Submission, SubmittedRun};
use arbiter_store::{
    Advanced, Heartbeat, Lease, MakeStep, PairRecord, QueuedRun, RunId, RunState, StoreError,
    Submitted, Totals, WorkerId, WorkerInfo,
};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::{
    ApiError, ClaimRequest, HeartbeatRequest, ReleaseRequest, SignaturesRequest, SubmitRequest,
    TuningSubmitRequest, PREFIX,
};

/// How long one request may take: a submit of a large batch over a slow link included. A
/// request that takes longer is retried (the server's side is idempotent).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// What a user asks of the server: to queue, list and stop runs.
impl HttpCoordinator {
    /// Queues `submission` (`POST /runs`).
    pub async fn submit_run(&self, submission: &Submission) -> Result<SubmittedRun, StoreError> {
        self.call("submitting a run", Method::POST, "/runs", Some(submission))
            .await
    }

    /// The queued runs (`GET /runs`).
    pub async fn runs(&self) -> Result<Vec<QueuedRun>, StoreError> {
        self.call("reading the runs", Method::GET, "/runs", None::<&()>)
            .await
    }

    /// Stops `run` (`POST /runs/{run}/stop`): its state after the stop.
    pub async fn stop(&self, run: RunId) -> Result<RunState, StoreError> {
        #[derive(serde::Deserialize)]
        struct Stopped {
            state: RunState,
        }
        let stopped: Stopped = self
            .call(
                "stopping a run",
                Method::POST,
                &format!("/runs/{run}/stop"),
                None::<&()>,
            )
            .await?;
        Ok(stopped.state)
    }
}

/// The fleet's server, as a worker reaches it.
#[derive(Clone, Debug)]
pub struct HttpCoordinator {
    base: String,
    token: String,
    client: reqwest::Client,
}

impl HttpCoordinator {
    /// A client of the server at `base` (`http://host:port` or `https://...`, with or without
    /// a trailing slash) with the bearer `token`.
    pub fn new(base: &str, token: &str) -> Result<HttpCoordinator, String> {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "server URL {base:?}: expected http://HOST:PORT or https://HOST"
            ));
        }
        let token = token.trim();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err("the token is empty or has spaces inside it (expected one line, as `arbiter admin token create` prints it)".to_owned());
        }
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("the HTTP client: {e}"))?;
        Ok(HttpCoordinator {
            base: base.to_owned(),
            token: token.to_owned(),
            client,
        })
    }

    /// One request: `body` as JSON if any, the answer read as `T`.
    async fn call<T: DeserializeOwned, B: Serialize + Sync + ?Sized>(
        &self,
        operation: &str,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, StoreError> {
        let body = body.map(|body| serde_json::to_vec(body).expect("a request body is plain data"));
        let (status, bytes) = self
            .send(operation, method, path, body, "application/json")
            .await?;
        serde_json::from_slice(&bytes).map_err(|e| {
            self.remote(
                operation,
                format!("the server's answer is not what this worker reads: {e}"),
                Some(status),
                false,
            )
        })
    }

    /// One request with a raw `body` of `content_type`: the status and bytes of a success, the
    /// server's refusal as an error.
    async fn send(
        &self,
        operation: &str,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        content_type: &str,
    ) -> Result<(StatusCode, Vec<u8>), StoreError> {
        let url = format!("{}{PREFIX}{path}", self.base);
        let mut request = self.client.request(method, &url).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body);
        }
        let response = request.send().await.map_err(|e| {
            // Unreachable, refused, reset, timed out: the server or the network will be back.
            self.remote(operation, error_chain(&e), None, true)
        })?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.remote(operation, error_chain(&e), Some(status), true))?;
        if status.is_success() {
            return Ok((status, bytes.to_vec()));
        }
        let message = serde_json::from_slice::<ApiError>(&bytes)
            .map(|refusal| match refusal.field {
                Some(field) => format!("{} (field {field})", refusal.error),
                None => refusal.error,
            })
            .unwrap_or_else(|_| {
                let text = String::from_utf8_lossy(&bytes);
                format!("HTTP {status}: {}", text.trim())
            });
        let transient = matches!(
            status,
            StatusCode::BAD_GATEWAY
                | StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::GATEWAY_TIMEOUT
                | StatusCode::TOO_MANY_REQUESTS
        );
        Err(self.remote(operation, message, Some(status), transient))
    }

    fn remote(
        &self,
        operation: &str,
        message: String,
        status: Option<StatusCode>,
        transient: bool,
    ) -> StoreError {
        StoreError::Remote {
            location: self.base.clone(),
            operation: operation.to_owned(),
            message,
            status: status.map(|s| s.as_u16()),
            transient,
        }
    }

    /// Stores an engine's binary as an artifact (`PUT /artifacts/{sha256}`): its hash.
    pub async fn put_artifact(&self, bytes: Vec<u8>) -> Result<String, StoreError> {
        let sha256 = arbiter_store::sha256_hex(&bytes);
        let (status, answer) = self
            .send(
                "uploading an engine",
                Method::PUT,
                &format!("/artifacts/{sha256}"),
                Some(bytes),
                "application/octet-stream",
            )
            .await?;
        serde_json::from_slice(&answer)
            .map_err(|e| self.remote("uploading an engine", e.to_string(), Some(status), false))
    }
}

/// An HTTP client's error with its causes, which reqwest keeps in `source()` ("error sending
/// request" alone says nothing).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

impl Coordinator for HttpCoordinator {
    fn location(&self) -> String {
        self.base.clone()
    }

    fn register<'a>(&'a self, info: &'a WorkerInfo) -> CoordinatorFuture<'a, WorkerId> {
        Box::pin(self.call("registering", Method::POST, "/workers", Some(info)))
    }

    fn queue(&self) -> CoordinatorFuture<'_, Vec<QueuedRun>> {
        Box::pin(self.call("reading the queue", Method::GET, "/queue", None::<&()>))
    }

    fn claim<'a>(
        &'a self,
        worker: WorkerId,
        lease_ms: i64,
        excluded: &'a [RunId],
    ) -> CoordinatorFuture<'a, Option<Lease>> {
        Box::pin(async move {
            let body = ClaimRequest {
                worker,
                lease_ms,
                excluded: excluded.to_vec(),
            };
            self.call("claiming a batch", Method::POST, "/claim", Some(&body))
                .await
        })
    }

    fn heartbeat<'a>(
        &'a self,
        lease: &'a Lease,
        lease_ms: i64,
    ) -> CoordinatorFuture<'a, Heartbeat> {
        Box::pin(async move {
            let body = HeartbeatRequest {
                lease: lease.clone(),
                lease_ms,
            };
            match self
                .call("extending a lease", Method::POST, "/heartbeat", Some(&body))
                .await
            {
                // The server refuses a lease another worker holds now.
                Err(StoreError::Remote {
                    status: Some(409), ..
                }) => Ok(Heartbeat::Lost),
                answer => answer,
            }
        })
    }

    fn release<'a>(&'a self, lease: &'a Lease) -> CoordinatorFuture<'a, bool> {
        Box::pin(async move {
            let body = ReleaseRequest {
                lease: lease.clone(),
            };
            match self
                .call("releasing a batch", Method::POST, "/release", Some(&body))
                .await
            {
                // Nothing to give back: the lease was no longer this worker's.
                Err(StoreError::Remote {
                    status: Some(409), ..
                }) => Ok(false),
                answer => answer,
            }
        })
    }

    fn run_setup(&self, run: RunId) -> CoordinatorFuture<'_, RunSetup> {
        Box::pin(async move {
            self.call(
                "reading the run",
                Method::GET,
                &format!("/runs/{run}/setup"),
                None::<&()>,
            )
            .await
        })
    }

    fn adopt_signatures<'a>(
        &'a self,
        run: RunId,
        mine: &'a [String],
    ) -> CoordinatorFuture<'a, Vec<Option<String>>> {
        Box::pin(async move {
            let body = SignaturesRequest {
                mine: mine.to_vec(),
            };
            self.call(
                "comparing engine signatures",
                Method::POST,
                &format!("/runs/{run}/signatures"),
                Some(&body),
            )
            .await
        })
    }

    fn artifact<'a>(&'a self, sha256: &'a str) -> CoordinatorFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let operation = "fetching an engine";
            match self
                .send(
                    operation,
                    Method::GET,
                    &format!("/artifacts/{sha256}"),
                    None,
                    "",
                )
                .await
            {
                Ok((_, bytes)) => Ok(Some(bytes)),
                Err(StoreError::Remote {
                    status: Some(404), ..
                }) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    fn tuning_theta(&self, run: RunId) -> CoordinatorFuture<'_, Option<String>> {
        Box::pin(async move {
            self.call(
                "reading the run's values",
                Method::GET,
                &format!("/runs/{run}/theta"),
                None::<&()>,
            )
            .await
        })
    }

    /// The server judges the run by its own rule; `decide` is not sent.
    fn submit<'a>(
        &'a self,
        lease: &'a Lease,
        pairs: &'a [PairRecord],
        signatures: &'a str,
        _decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Submitted> {
        Box::pin(async move {
            let body = SubmitRequest {
                lease: lease.clone(),
                pairs: pairs.to_vec(),
                signatures: signatures.to_owned(),
            };
            self.call("submitting a batch", Method::POST, "/submit", Some(&body))
                .await
        })
    }

    /// The server makes the step with the run's own tuner from `played`; `make` is not sent.
    fn submit_tuning<'a>(
        &'a self,
        lease: &'a Lease,
        tally: &'a Totals,
        signatures: &'a str,
        played: &'a str,
        _make: &'a mut MakeStep<'_>,
    ) -> CoordinatorFuture<'a, Submitted> {
        Box::pin(async move {
            let body = TuningSubmitRequest {
                lease: lease.clone(),
                tally: *tally,
                signatures: signatures.to_owned(),
                played: played.to_owned(),
            };
            self.call(
                "submitting a tuning batch",
                Method::POST,
                "/submit/tuning",
                Some(&body),
            )
            .await
        })
    }

    fn stale_runs(&self, older_than: Duration) -> CoordinatorFuture<'_, Vec<RunId>> {
        Box::pin(async move {
            let ms = older_than.as_millis();
            self.call(
                "reading the runs to advance",
                Method::GET,
                &format!("/stale?older_than_ms={ms}"),
                None::<&()>,
            )
            .await
        })
    }

    /// The server judges the run by its own rule; `decide` is not sent.
    fn advance<'a>(
        &'a self,
        run: RunId,
        _decide: &'a mut Decide<'_>,
    ) -> CoordinatorFuture<'a, Advanced> {
        Box::pin(async move {
            self.call(
                "advancing a run",
                Method::POST,
                &format!("/runs/{run}/advance"),
                None::<&()>,
            )
            .await
        })
    }
}
