//! Queued tuning runs, on every backend: each batch's update applied exactly once, in the
//! submit's transaction, each from the values the one before left.
//!
//! The tuner here is a stand-in whose arithmetic the test can check: θ is one number, and the
//! batch with sequence number b adds b + 1 to it. Any order of submits then ends at the sum
//! over the batches, and each step's θ is the one before plus its own batch's share, so a
//! lost update, a doubled one or two updates from the same values all show.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arbiter_store::{
    Lease, Queue, RunId, RunOutcome, RunState, Store, StoreError, Submitted, Totals, TuningMethod,
    TuningSetup, TuningStep, WorkerId, WorkerInfo,
};

use super::{spec, tuning_step, unique};

const LONG: i64 = 600_000;

async fn worker(store: &Store, name: &str) -> WorkerId {
    store
        .register_worker(&WorkerInfo {
            name: unique(name),
            host: "test-host".into(),
            cores: 2,
            version: "test".into(),
        })
        .await
        .unwrap()
}

/// A tuning run of `pairs` pairs queued in batches of `batch_units`.
async fn queued_tuning(store: &Store, name: &str, pairs: u64, batch_units: u64) -> RunId {
    let mut spec = spec(&unique(name), pairs);
    spec.engines = vec!["tuned+".into(), "tuned-".into()];
    let setup = TuningSetup {
        method: TuningMethod::Spsa,
        setup: "{\"params\":[\"x\"]}".into(),
    };
    let queue = Queue {
        priority: 0,
        worker_limit: None,
        batch_units,
        signatures: Vec::new(),
        files: Vec::new(),
    };
    let run = store.queue_tuning_run(&spec, &setup, &queue).await.unwrap();
    assert_eq!(store.tuning_setup(run).await.unwrap(), Some(setup));
    run
}

async fn claim(store: &Store, worker: WorkerId, run: RunId) -> Option<Lease> {
    let others: Vec<RunId> = store
        .queued_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|q| q.run.id)
        .filter(|&id| id != run)
        .collect();
    store.claim_batch(worker, LONG, &others).await.unwrap()
}

/// The batch's games: those of [`tuning_step`] for its units.
fn tally(lease: &Lease) -> Totals {
    tuning_step(lease.sequence, lease.units).totals
}

/// The stand-in tuner's step for `lease`: θ after the last step plus `sequence + 1`.
fn step_of(lease: &Lease, step: u64, last: Option<&str>) -> Result<TuningStep, String> {
    let theta: f64 = last.map_or(Ok(0.0), |t| {
        t.parse().map_err(|e| format!("stored θ {t:?}: {e}"))
    })?;
    Ok(TuningStep {
        step,
        iteration: lease.first_unit,
        totals: tally(lease),
        perturbation: format!("{{\"batch\":{}}}", lease.sequence),
        theta: format!("{}", theta + (lease.sequence + 1) as f64),
    })
}

async fn submit(store: &Store, lease: &Lease, calls: &AtomicU64) -> Result<Submitted, StoreError> {
    let mut make = |step: u64, last: Option<&str>| {
        calls.fetch_add(1, Ordering::SeqCst);
        step_of(lease, step, last)
    };
    store
        .submit_tuning_batch(lease, &tally(lease), "{}", &mut make)
        .await
}

/// Every step's θ is the one before plus its batch's share, and the batches counted are
/// `expected`, each once.
async fn check_chain(store: &Store, run: RunId, expected: &[u64]) {
    let steps = store.tuning_steps(run).await.unwrap();
    let mut theta = 0.0;
    let mut batches = Vec::new();
    for (n, committed) in steps.iter().enumerate() {
        let step = &committed.step;
        assert_eq!(step.step, n as u64, "steps are numbered without a gap");
        let batch: u64 = step
            .perturbation
            .trim_start_matches("{\"batch\":")
            .trim_end_matches('}')
            .parse()
            .unwrap();
        theta += (batch + 1) as f64;
        assert_eq!(
            step.theta,
            format!("{theta}"),
            "step {n} starts from step {n} - 1"
        );
        batches.push(batch);
    }
    batches.sort_unstable();
    assert_eq!(batches, expected);
}

pub async fn a_queued_tuning_run_applies_each_batch_once(store: &Store) {
    let run = queued_tuning(store, "spsa-queued", 14, 4).await;
    let (w1, w2) = (worker(store, "t1").await, worker(store, "t2").await);
    let calls = AtomicU64::new(0);

    let b0 = claim(store, w1, run).await.expect("batch 0");
    let b1 = claim(store, w2, run).await.expect("batch 1");
    assert_eq!((b0.sequence, b1.sequence), (0, 1));
    // Batch 1 first: it is step 0, from the start values.
    assert_eq!(
        submit(store, &b1, &calls).await.unwrap(),
        Submitted::Stepped {
            step: 0,
            verdict: None
        }
    );
    // A retry counts nothing and asks the tuner nothing.
    assert_eq!(
        submit(store, &b1, &calls).await.unwrap(),
        Submitted::AlreadyCounted
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        submit(store, &b0, &calls).await.unwrap(),
        Submitted::Stepped {
            step: 1,
            verdict: None
        }
    );

    let b2 = claim(store, w1, run).await.expect("batch 2");
    // A tally that is not the batch's pairs, and a tuner that refuses: nothing written.
    let mut short = tally(&b2);
    short.pairs -= 1;
    let mut make = |step: u64, last: Option<&str>| step_of(&b2, step, last);
    assert!(matches!(
        store
            .submit_tuning_batch(&b2, &short, "{}", &mut make)
            .await,
        Err(StoreError::InvalidBatch { .. })
    ));
    let mut refuse = |_: u64, _: Option<&str>| Err::<TuningStep, _>("θ is not finite".to_owned());
    match store
        .submit_tuning_batch(&b2, &tally(&b2), "{}", &mut refuse)
        .await
    {
        Err(StoreError::InvalidStep { step, reason, .. }) => {
            assert_eq!(step, 2);
            assert!(reason.contains("not finite"), "{reason}");
        }
        other => panic!("expected the tuner's refusal, got {other:?}"),
    }
    let mut wrong_step = |step: u64, last: Option<&str>| step_of(&b2, step + 1, last);
    assert!(matches!(
        store
            .submit_tuning_batch(&b2, &tally(&b2), "{}", &mut wrong_step)
            .await,
        Err(StoreError::InvalidBatch { .. })
    ));
    check_chain(store, run, &[0, 1]).await;

    // The batch is still the worker's to submit; the last one closes the run.
    assert_eq!(
        submit(store, &b2, &calls).await.unwrap(),
        Submitted::Stepped {
            step: 2,
            verdict: None
        }
    );
    let b3 = claim(store, w2, run).await.expect("batch 3");
    assert_eq!(b3.units, 14 - 12, "the last batch holds what is left");
    assert_eq!(
        submit(store, &b3, &calls).await.unwrap(),
        Submitted::Stepped {
            step: 3,
            verdict: Some(RunOutcome::Complete)
        }
    );
    assert_eq!(
        store.run(run).await.unwrap().state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    check_chain(store, run, &[0, 1, 2, 3]).await;
    assert!(claim(store, w1, run).await.is_none());

    // A match's batch is not a tuning run's; a stopped tuning run counts nothing.
    let (m_spec, queue) = (
        spec(&unique("not-tuning"), 2),
        Queue {
            priority: 0,
            worker_limit: None,
            batch_units: 2,
            signatures: Vec::new(),
            files: Vec::new(),
        },
    );
    let a_match = store.queue_run(&m_spec, &queue).await.unwrap();
    let m0 = claim(store, w1, a_match).await.expect("the match's batch");
    let mut make = |step: u64, last: Option<&str>| step_of(&m0, step, last);
    assert!(matches!(
        store.submit_tuning_batch(&m0, &tally(&m0), "{}", &mut make).await,
        Err(StoreError::InvalidBatch { reason, .. }) if reason.contains("not a tuning run")
    ));
    store
        .finish_run(a_match, RunOutcome::Stopped)
        .await
        .unwrap();

    let stopped = queued_tuning(store, "spsa-stopped", 4, 2).await;
    let s0 = claim(store, w2, stopped).await.expect("batch 0");
    store
        .finish_run(stopped, RunOutcome::Stopped)
        .await
        .unwrap();
    assert_eq!(
        submit(store, &s0, &calls).await.unwrap(),
        Submitted::RunClosed(RunOutcome::Stopped)
    );
    assert!(store.tuning_steps(stopped).await.unwrap().is_empty());
}

/// Workers claiming and submitting at once: every batch's update is applied once, each from
/// the values the one before left (no two from the same values, none lost).
pub async fn concurrent_tuning_submits_apply_every_update_once(store: Arc<Store>) {
    const BATCHES: u64 = 40;
    let run = queued_tuning(&store, "spsa-concurrent", BATCHES * 2, 2).await;
    let calls = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        let calls = calls.clone();
        workers.push(tokio::spawn(async move {
            let me = worker(&store, &format!("tc{w}")).await;
            let mut counted = 0;
            while let Some(lease) = claim(&store, me, run).await {
                // Each batch is submitted twice, as a retry after a lost answer would.
                let first = submit(&store, &lease, &calls).await.unwrap();
                assert!(matches!(first, Submitted::Stepped { .. }), "{first:?}");
                assert_eq!(
                    submit(&store, &lease, &calls).await.unwrap(),
                    Submitted::AlreadyCounted
                );
                counted += 1;
            }
            counted
        }));
    }
    let mut counted = 0;
    for w in workers {
        counted += w.await.unwrap();
    }
    assert_eq!(counted, BATCHES);
    assert_eq!(calls.load(Ordering::SeqCst), BATCHES);
    check_chain(&store, run, &(0..BATCHES).collect::<Vec<_>>()).await;
    assert_eq!(
        store.run(run).await.unwrap().state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
}
