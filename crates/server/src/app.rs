//! The server: routes, the bearer-token check, and each route as the store's one call.
//!
//! The server keeps nothing of its own between requests but a cache of the runs' rules (a
//! run's configuration never changes): every fact is in the database, so any number of
//! replicas can serve behind a round-robin proxy, and one that is killed loses nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arbiter_runner::coordinator::{Coordinator, RunSetup};
use arbiter_runner::fleet::{
    run_rule, submit_remote, FleetError, RunRule, Submission, SubmittedRun, Tuner, TuningPlan,
};
use arbiter_store::{
    Lease, RunId, Store, StoreError, TokenInfo, TokenScope, Totals, WorkerId, WorkerInfo,
};
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::Serialize;

use crate::api::{
    ApiError, ClaimRequest, HeartbeatRequest, ReleaseRequest, SignaturesRequest, StaleQuery,
    SubmitRequest, TuningSubmitRequest, MAX_ARTIFACT_BYTES, MAX_BODY_BYTES, PREFIX,
};
use crate::dashboard;

/// What every request shares: the store, the tuner that applies tuning runs' updates, and the
/// runs' rules and tuning plans read so far.
#[derive(Clone)]
pub struct AppState {
    store: Arc<Store>,
    rules: Arc<Mutex<HashMap<RunId, RunRule>>>,
    tuner: Option<Arc<dyn Tuner>>,
    plans: Arc<Mutex<HashMap<RunId, Arc<dyn TuningPlan>>>>,
    /// The dashboard's live section as the process's one watcher last published it, started
    /// by the first page that follows it.
    live: Arc<std::sync::OnceLock<tokio::sync::watch::Receiver<Arc<String>>>>,
}

impl AppState {
    /// A server on `store`; with a `tuner` it queues tuning runs and applies their workers'
    /// updates (the tuner is built on the runner, so `arbiter serve` gives SPSA's), without one
    /// it refuses them.
    pub fn new(store: Arc<Store>, tuner: Option<Arc<dyn Tuner>>) -> AppState {
        AppState {
            store,
            rules: Arc::default(),
            tuner,
            plans: Arc::default(),
            live: Arc::default(),
        }
    }

    /// The live section's updates, from a `watcher` started on the first call.
    pub(crate) fn live<F, W>(&self, watcher: W) -> tokio::sync::watch::Receiver<Arc<String>>
    where
        W: FnOnce(AppState, tokio::sync::watch::Sender<Arc<String>>) -> F,
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.live
            .get_or_init(|| {
                let (publish, updates) = tokio::sync::watch::channel(Arc::new(String::new()));
                tokio::spawn(watcher(self.clone(), publish));
                updates
            })
            .clone()
    }

    /// The fleet's database.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// `run`'s rule, read from its stored configuration once.
    async fn rule(&self, run: RunId) -> Result<RunRule, Refusal> {
        if let Some(rule) = self.rules.lock().expect("the rules' cache").get(&run) {
            return Ok(rule.clone());
        }
        let found = self.store.run(run).await?;
        let rule = run_rule(&found).map_err(|why| {
            Refusal::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("run {run} cannot be judged here: {why}"),
                None,
            )
        })?;
        self.rules
            .lock()
            .expect("the rules' cache")
            .insert(run, rule.clone());
        Ok(rule)
    }

    /// Tuning run `run`'s plan, opened by the server's tuner from its stored configuration
    /// and set-up once, as a worker opens it.
    async fn plan(&self, run: RunId) -> Result<Arc<dyn TuningPlan>, Refusal> {
        if let Some(plan) = self.plans.lock().expect("the plans' cache").get(&run) {
            return Ok(Arc::clone(plan));
        }
        let unprocessable =
            |why: String| Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, why, Some("lease.run"));
        let Some(tuner) = &self.tuner else {
            return Err(unprocessable(format!(
                "run {run} is a tuning run, and this server has no tuner"
            )));
        };
        let found = self.store.run(run).await?;
        let Some(setup) = self.store.tuning_setup(run).await? else {
            return Err(unprocessable(format!("run {run} is not a tuning run")));
        };
        let origin = format!("run {run}");
        let (_, plan) = tuner
            .open(&found.spec.config, &origin, &setup, found.spec.seed)
            .map_err(unprocessable)?;
        let plan: Arc<dyn TuningPlan> = Arc::from(plan);
        self.plans
            .lock()
            .expect("the plans' cache")
            .insert(run, Arc::clone(&plan));
        Ok(plan)
    }
}

/// The routes under [`PREFIX`], each with the scope it needs.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        // Workers.
        .route("/workers", post(register))
        .route("/queue", get(queue))
        .route("/claim", post(claim))
        .route("/heartbeat", post(heartbeat))
        .route("/release", post(release))
        .route("/submit", post(submit))
        .route("/submit/tuning", post(submit_tuning))
        .route("/stale", get(stale))
        .route("/runs/{run}/setup", get(run_setup))
        .route("/runs/{run}/signatures", post(signatures))
        .route("/runs/{run}/theta", get(theta))
        .route("/runs/{run}/advance", post(advance))
        .route(
            "/artifacts/{sha256}",
            get(artifact)
                .put(put_artifact)
                .layer(DefaultBodyLimit::max(MAX_ARTIFACT_BYTES)),
        )
        // Users.
        .route("/runs", get(runs).post(submit_run))
        .route("/runs/{run}", get(run))
        .route("/runs/{run}/stop", post(stop))
        .route("/runs/{run}/pgn", get(pgn))
        .fallback(not_found);
    Router::new()
        .route("/", get(dashboard::index))
        .route("/events", get(dashboard::events))
        .route("/runs/{run}", get(dashboard::run_page))
        .nest(PREFIX, api)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Serves `state` on `listener` until `shutdown` resolves, then finishes the requests under
/// way.
pub async fn serve(
    state: AppState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// A refusal or a failure, as the client reads it: a status and an [`ApiError`] body.
#[derive(Debug)]
pub struct Refusal {
    status: StatusCode,
    body: ApiError,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, error: String, field: Option<&str>) -> Refusal {
        Refusal {
            status,
            body: ApiError {
                error,
                field: field.map(str::to_owned),
            },
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// The store's errors by what the client should do: try again (503), fix the request (4xx),
/// or report a fault of the server's (500).
impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Refusal {
        let status = match &e {
            e if e.is_transient() => StatusCode::SERVICE_UNAVAILABLE,
            StoreError::UnknownRun { .. } | StoreError::UnknownWorker { .. } => {
                StatusCode::NOT_FOUND
            }
            StoreError::InvalidBatch { .. }
            | StoreError::InvalidPair { .. }
            | StoreError::InvalidStep { .. }
            | StoreError::InvalidWorker { .. }
            | StoreError::InvalidRun { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            StoreError::RunFinished { .. } | StoreError::DuplicateRunName { .. } => {
                StatusCode::CONFLICT
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Refusal::new(status, e.to_string(), None)
    }
}

async fn not_found() -> Refusal {
    Refusal::new(
        StatusCode::NOT_FOUND,
        format!("no such route (the API is under {PREFIX})"),
        None,
    )
}

/// A JSON body whose refusal is an [`ApiError`] naming where it went wrong (serde's path and
/// position), not axum's plain text.
pub struct Body<T>(pub T);

impl<S, T> FromRequest<S> for Body<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = Refusal;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(rejection) => {
                let status = match &rejection {
                    JsonRejection::BytesRejection(_) => StatusCode::PAYLOAD_TOO_LARGE,
                    other => other.status(),
                };
                let text = rejection.body_text();
                let field = field_of(&text);
                Err(Refusal::new(
                    status,
                    format!("request body: {text}"),
                    field.as_deref(),
                ))
            }
        }
    }
}

/// The field serde names in a deserialisation error: "missing field `lease`", or the path
/// axum puts before the error (`lease.worker: invalid type ...`).
fn field_of(text: &str) -> Option<String> {
    let detail = text
        .split_once("target type: ")
        .map_or(text, |(_, detail)| detail);
    if let Some(rest) = detail.split("field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    let (path, _) = detail.split_once(": ")?;
    (!path.is_empty() && !path.contains(' ')).then(|| path.to_owned())
}

/// A run's id in the path; anything else (`../x`, `1;DROP`) is a 400 naming it.
pub struct RunPath(pub RunId);

impl<S: Send + Sync> FromRequestParts<S> for RunPath {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<i64>::from_request_parts(parts, state).await {
            Ok(Path(id)) if id > 0 => Ok(RunPath(RunId::new(id))),
            Ok(Path(id)) => Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                format!("run id {id} is not a run's id (a positive whole number)"),
                Some("run"),
            )),
            Err(rejection) => Err(path_refusal(&rejection)),
        }
    }
}

fn path_refusal(rejection: &PathRejection) -> Refusal {
    Refusal::new(
        StatusCode::BAD_REQUEST,
        format!("the run's id in the path: {}", rejection.body_text()),
        Some("run"),
    )
}

/// The bearer token of a request, checked against the store: who is asking, with what scope.
/// A missing, malformed, unknown or revoked token is a 401; the route then checks the scope.
pub struct Caller(TokenInfo);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let unauthorised = |why: &str| {
            Refusal::new(
                StatusCode::UNAUTHORIZED,
                format!("{why} (send `Authorization: Bearer TOKEN`; `arbiter admin token create` makes one)"),
                Some("authorization"),
            )
        };
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorised("no token"))?;
        let secret = header
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|secret| !secret.is_empty())
            .ok_or_else(|| unauthorised("the Authorization header is not `Bearer TOKEN`"))?;
        match state.store.authenticate(secret).await? {
            Some(token) => Ok(Caller(token)),
            None => Err(unauthorised("unknown or revoked token")),
        }
    }
}

impl Caller {
    /// The caller, if its token's scope allows `needed`; a 403 naming both otherwise.
    fn allowed(self, needed: TokenScope) -> Result<TokenInfo, Refusal> {
        if self.0.scope.allows(needed) {
            Ok(self.0)
        } else {
            Err(Refusal::new(
                StatusCode::FORBIDDEN,
                format!(
                    "token {:?} has scope {}, and this needs {needed}",
                    self.0.name, self.0.scope
                ),
                Some("authorization"),
            ))
        }
    }
}

/// Checks that `worker` is the caller's own: a worker's token acts only for the workers it
/// registered (an admin's for any).
async fn own_worker(
    state: &AppState,
    token: &TokenInfo,
    worker: WorkerId,
    field: &str,
) -> Result<(), Refusal> {
    if token.scope == TokenScope::Admin {
        return Ok(());
    }
    match state.store.worker_token(worker).await {
        Ok(Some(owner)) if owner == token.id => Ok(()),
        Ok(_) | Err(StoreError::UnknownWorker { .. }) => Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!(
                "worker {worker} is not one that token {:?} registered",
                token.name
            ),
            Some(field),
        )),
        Err(e) => Err(e.into()),
    }
}

async fn register(
    State(state): State<AppState>,
    caller: Caller,
    Body(info): Body<WorkerInfo>,
) -> Result<Json<WorkerId>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    match state.store.register_worker_for(&info, token.id).await? {
        Some(worker) => Ok(Json(worker)),
        None => Err(Refusal::new(
            StatusCode::CONFLICT,
            format!(
                "a worker named {:?} belongs to another token; give this one another --name",
                info.name
            ),
            Some("name"),
        )),
    }
}

async fn queue(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<arbiter_store::QueuedRun>>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    Ok(Json(state.store.queued_runs().await?))
}

async fn claim(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ClaimRequest>,
) -> Result<Json<Option<Lease>>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    own_worker(&state, &token, request.worker, "worker").await?;
    let lease_ms = lease_ms(request.lease_ms)?;
    Ok(Json(
        state
            .store
            .claim_batch(request.worker, lease_ms, &request.excluded)
            .await?,
    ))
}

/// A lease's length: from a second to a day.
fn lease_ms(ms: i64) -> Result<i64, Refusal> {
    if (1_000..=86_400_000).contains(&ms) {
        Ok(ms)
    } else {
        Err(Refusal::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("a lease of {ms} ms: expected 1,000 to 86,400,000"),
            Some("lease_ms"),
        ))
    }
}

async fn heartbeat(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<HeartbeatRequest>,
) -> Result<Json<arbiter_store::Heartbeat>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    own_worker(&state, &token, request.lease.worker, "lease.worker").await?;
    let lease_ms = lease_ms(request.lease_ms)?;
    match state.store.heartbeat(&request.lease, lease_ms).await? {
        // Another worker holds the batch now: the caller's lease is refused, as the issue of
        // an expired lease asks, and the client reads the 409 as `Heartbeat::Lost`.
        arbiter_store::Heartbeat::Lost => Err(lease_lost(&request.lease)),
        answer => Ok(Json(answer)),
    }
}

/// A 409 for a lease that is no longer its worker's (it lapsed and another worker took it,
/// or the batch was given back).
fn lease_lost(lease: &Lease) -> Refusal {
    Refusal::new(
        StatusCode::CONFLICT,
        format!(
            "the lease of batch {} of run {} is no longer worker {}'s",
            lease.sequence, lease.run, lease.worker
        ),
        Some("lease"),
    )
}

async fn release(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ReleaseRequest>,
) -> Result<Json<bool>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    own_worker(&state, &token, request.lease.worker, "lease.worker").await?;
    if state.store.release_batch(&request.lease).await? {
        Ok(Json(true))
    } else {
        Err(lease_lost(&request.lease))
    }
}

async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<SubmitRequest>,
) -> Result<Json<arbiter_store::Submitted>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    let lease = &request.lease;
    own_worker(&state, &token, lease.worker, "lease.worker").await?;
    if let Some((i, pair)) = request
        .pairs
        .iter()
        .enumerate()
        .find(|(_, pair)| pair.run != lease.run)
    {
        return Err(Refusal::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "pair {i} is of run {}, but the lease is of run {}",
                pair.run, lease.run
            ),
            Some(&format!("pairs[{i}].run")),
        ));
    }
    // The run's own rule judges it, whatever the worker thinks.
    let rule = state.rule(lease.run).await?;
    let mut decide = |totals: &Totals| rule.verdict(totals);
    Ok(Json(
        state
            .store
            .submit_batch(lease, &request.pairs, &request.signatures, &mut decide)
            .await?,
    ))
}

/// `POST /submit/tuning`: a tuning run's batch, its step made here by the run's own plan from
/// what the worker says it played (checked against the plan), applied in the store's
/// transaction to the values the run has now.
async fn submit_tuning(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<TuningSubmitRequest>,
) -> Result<Json<arbiter_store::Submitted>, Refusal> {
    let token = caller.allowed(TokenScope::Worker)?;
    let lease = &request.lease;
    own_worker(&state, &token, lease.worker, "lease.worker").await?;
    let plan = state.plan(lease.run).await?;
    let step = plan
        .step(lease, &request.played)
        .map_err(|why| Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, why, Some("played")))?;
    let tally = request.tally;
    let mut make = |number: u64, theta: Option<&str>| step(number, theta, &tally);
    Ok(Json(
        state
            .store
            .submit_tuning_batch(lease, &tally, &request.signatures, &mut make)
            .await?,
    ))
}

/// An artifact's hash in the path: 64 lowercase hex digits, nothing else.
fn artifact_hash(sha256: &str) -> Result<&str, Refusal> {
    if sha256.len() == 64
        && sha256
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        Ok(sha256)
    } else {
        Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            format!("{sha256:?} is not a SHA-256 (64 lowercase hex digits)"),
            Some("sha256"),
        ))
    }
}

/// `GET /artifacts/{sha256}`: an engine's binary, for a worker that lacks it.
async fn artifact(
    State(state): State<AppState>,
    caller: Caller,
    Path(sha256): Path<String>,
) -> Result<Response, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    let sha256 = artifact_hash(&sha256)?;
    match state.store.artifact(sha256).await? {
        Some(bytes) => {
            Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
        }
        None => Err(Refusal::new(
            StatusCode::NOT_FOUND,
            format!("no artifact {sha256}"),
            Some("sha256"),
        )),
    }
}

/// `PUT /artifacts/{sha256}`: a submitter's engine binary, whose hash must be the path's.
async fn put_artifact(
    State(state): State<AppState>,
    caller: Caller,
    Path(sha256): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<String>, Refusal> {
    caller.allowed(TokenScope::User)?;
    let sha256 = artifact_hash(&sha256)?;
    let actual = arbiter_store::sha256_hex(&body);
    if actual != sha256 {
        return Err(Refusal::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body's SHA-256 is {actual}, not the path's {sha256}"),
            Some("sha256"),
        ));
    }
    Ok(Json(state.store.put_artifact(&body).await?))
}

async fn stale(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<StaleQuery>, QueryRejection>,
) -> Result<Json<Vec<RunId>>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    let Query(query) = query.map_err(|rejection| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            rejection.body_text(),
            Some("older_than_ms"),
        )
    })?;
    Ok(Json(
        state
            .store
            .stale_runs(Duration::from_millis(query.older_than_ms))
            .await?,
    ))
}

async fn run_setup(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Json<RunSetup>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    // What a worker on the database reads, read the same way.
    Ok(Json(Coordinator::run_setup(&*state.store, run).await?))
}

async fn signatures(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
    Body(request): Body<SignaturesRequest>,
) -> Result<Json<Vec<Option<String>>>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    Ok(Json(
        state.store.adopt_signatures(run, &request.mine).await?,
    ))
}

async fn theta(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Json<Option<String>>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    Ok(Json(Coordinator::tuning_theta(&*state.store, run).await?))
}

async fn advance(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Json<arbiter_store::Advanced>, Refusal> {
    caller.allowed(TokenScope::Worker)?;
    let rule = state.rule(run).await?;
    let mut decide = |totals: &Totals| rule.verdict(totals);
    Ok(Json(state.store.advance(run, &mut decide).await?))
}

/// `POST /runs`: queues a run a submitter prepared (`arbiter submit --server`): its
/// configuration is checked here from its text, as `arbiter submit --db` checks it.
async fn submit_run(
    State(state): State<AppState>,
    caller: Caller,
    Body(submission): Body<Submission>,
) -> Result<Json<SubmittedRun>, Refusal> {
    caller.allowed(TokenScope::User)?;
    match submit_remote(&state.store, &submission, state.tuner.as_deref()).await {
        Ok(queued) => Ok(Json(queued)),
        Err(FleetError::Store(e)) => Err(e.into()),
        Err(FleetError::Config(e)) => Err(Refusal::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            e.to_string(),
            Some("config"),
        )),
        Err(FleetError::Refused(why)) => {
            let field = why.split(':').next().map(str::to_owned);
            Err(Refusal::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                why,
                field.as_deref(),
            ))
        }
        Err(other) => Err(Refusal::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            other.to_string(),
            None,
        )),
    }
}

/// A run as users read it: its queue entry (state, batches, prefix, totals).
async fn runs(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<arbiter_store::QueuedRun>>, Refusal> {
    caller.allowed(TokenScope::User)?;
    Ok(Json(state.store.queued_runs().await?))
}

async fn run(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Json<arbiter_store::QueuedRun>, Refusal> {
    caller.allowed(TokenScope::User)?;
    queued(&state, run).await.map(Json)
}

async fn queued(state: &AppState, run: RunId) -> Result<arbiter_store::QueuedRun, Refusal> {
    state
        .store
        .queued_runs()
        .await?
        .into_iter()
        .find(|queued| queued.run.id == run)
        .ok_or_else(|| {
            Refusal::new(
                StatusCode::NOT_FOUND,
                format!("run {run} is not queued in this server's database"),
                Some("run"),
            )
        })
}

/// What a stop did: the run's state after it.
#[derive(Serialize)]
struct Stopped {
    run: RunId,
    state: arbiter_store::RunState,
}

async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Json<Stopped>, Refusal> {
    caller.allowed(TokenScope::User)?;
    let found = queued(&state, run).await?;
    if matches!(found.run.state, arbiter_store::RunState::Running) {
        match state
            .store
            .finish_run(run, arbiter_store::RunOutcome::Stopped)
            .await
        {
            // Closed by its verdict meanwhile: the verdict stands.
            Ok(()) | Err(StoreError::RunFinished { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Json(Stopped {
        run,
        state: state.store.run(run).await?.state,
    }))
}

/// The run's games as one PGN text, in the order the runner numbered them.
async fn pgn(
    State(state): State<AppState>,
    caller: Caller,
    RunPath(run): RunPath,
) -> Result<Response, Refusal> {
    caller.allowed(TokenScope::User)?;
    // Unknown runs are a 404 before the first byte is sent.
    state.store.run(run).await?;
    let mut text = String::new();
    let mut games = state.store.games(run);
    while let Some(game) = games.next().await {
        text.push_str(&game?.game.pgn);
        if !text.ends_with("\n\n") {
            text.push('\n');
        }
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::field_of;

    /// The field is found in the shapes of serde's and axum's messages, and not invented.
    #[test]
    fn the_field_at_fault_is_read_from_the_message() {
        let missing = "Failed to deserialize the JSON body into the target type: missing field \
                       `worker` at line 1 column 2";
        assert_eq!(field_of(missing).as_deref(), Some("worker"));
        let wrong = "Failed to deserialize the JSON body into the target type: lease.worker: \
                     invalid type: string \"x\", expected i64 at line 1 column 30";
        assert_eq!(field_of(wrong).as_deref(), Some("lease.worker"));
        let syntax = "Failed to parse the request body as JSON: expected value at line 1 column 1";
        assert_eq!(field_of(syntax), None);
    }
}
