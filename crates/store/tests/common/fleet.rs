//! The fleet's scenarios every backend must pass: batches leased, played and submitted by
//! workers, each counted exactly once, and the verdict judged on the prefix.

use std::collections::BTreeSet;

use arbiter_store::{
    Heartbeat, Lease, PairRecord, Prefix, Queue, RunFile, RunId, RunOutcome, RunSpec, RunState,
    Store, StoreError, Submitted, Totals, WorkerId, WorkerInfo,
};

use super::{all_games, expected_games, expected_totals, pair, spec, unique};

/// A lease long enough that no test sees it expire.
const LONG: i64 = 600_000;

fn queue(batch_units: u64) -> Queue {
    Queue {
        priority: 0,
        worker_limit: None,
        batch_units,
        signatures: Vec::new(),
        files: Vec::new(),
    }
}

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

/// The pairs of a one-pairing run's batch: unit u is pair u.
fn played(lease: &Lease) -> Vec<PairRecord> {
    lease.unit_range().map(|k| pair(lease.run, k)).collect()
}

/// No verdict until the last unit.
fn never(_: &Totals) -> Option<RunOutcome> {
    None
}

async fn submit(store: &Store, lease: &Lease) -> Submitted {
    store
        .submit_batch(lease, &played(lease), "{}", &mut never)
        .await
        .unwrap()
}

async fn queued(store: &Store, name: &str, pairs: u64, q: Queue) -> (RunSpec, RunId) {
    let spec = spec(&unique(name), pairs);
    let run = store.queue_run(&spec, &q).await.unwrap();
    (spec, run)
}

/// Claims until this run's batch comes (other tests' runs may share a PostgreSQL database, so
/// claims exclude every run but this one).
async fn claim(store: &Store, worker: WorkerId, run: RunId, lease_ms: i64) -> Option<Lease> {
    let others: Vec<RunId> = store
        .queued_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|q| q.run.id)
        .filter(|&id| id != run)
        .collect();
    store.claim_batch(worker, lease_ms, &others).await.unwrap()
}

pub async fn a_queued_run_is_played_in_batches_exactly_once(store: &Store) {
    let (_, run) = queued(store, "fleet-once", 10, queue(3)).await;
    let (w1, w2) = (worker(store, "w1").await, worker(store, "w2").await);

    let b0 = claim(store, w1, run, LONG).await.expect("batch 0");
    let b1 = claim(store, w2, run, LONG).await.expect("batch 1");
    assert_eq!((b0.sequence, b0.first_unit, b0.units), (0, 0, 3));
    assert_eq!((b1.sequence, b1.first_unit, b1.units), (1, 3, 3));
    // A restarted worker gets its own unexpired lease back, not a new batch.
    let again = claim(store, w1, run, LONG).await.unwrap();
    assert_eq!((again.sequence, again.claims), (0, 1), "{again:?}");

    // Batch 1 first: counted, but the prefix waits for batch 0.
    match submit(store, &b1).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(prefix, Prefix::default());
            assert_eq!(verdict, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(3..6));
    match submit(store, &b0).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(prefix.units, 6);
            assert_eq!(prefix.totals, expected_totals(0..6));
            assert_eq!(verdict, None);
        }
        other => panic!("{other:?}"),
    }
    // A retry, from the worker or another: nothing changes.
    assert_eq!(submit(store, &b0).await, Submitted::AlreadyCounted);
    assert_eq!(submit(store, &b1).await, Submitted::AlreadyCounted);
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..6));

    let b2 = claim(store, w2, run, LONG).await.unwrap();
    let b3 = claim(store, w1, run, LONG).await.unwrap();
    assert_eq!((b2.sequence, b3.sequence, b3.units), (2, 3, 1));
    let w3 = worker(store, "w3").await;
    assert_eq!(
        claim(store, w3, run, LONG).await,
        None,
        "nothing left to lease"
    );
    submit(store, &b3).await;
    match submit(store, &b2).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(prefix.units, 10);
            assert_eq!(verdict, Some(RunOutcome::Complete));
        }
        other => panic!("{other:?}"),
    }
    let finished = store.run(run).await.unwrap();
    assert_eq!(
        finished.state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..10));
    let indices: BTreeSet<u64> = (0..10).collect();
    assert_eq!(all_games(store, run).await, expected_games(&indices));
    let listed = store.queued_runs().await.unwrap();
    let listed = listed.iter().find(|q| q.run.id == run).unwrap();
    assert_eq!(listed.batches.done, 4);
    assert_eq!(listed.prefix.totals, listed.totals);
}

pub async fn an_expired_lease_goes_to_the_next_claim(store: &Store) {
    let (_, run) = queued(store, "fleet-expired", 4, queue(4)).await;
    let (w1, w2) = (worker(store, "w1").await, worker(store, "w2").await);
    // A lease that has already run out when it is granted.
    let first = claim(store, w1, run, -1_000).await.unwrap();
    let second = claim(store, w2, run, LONG)
        .await
        .expect("the expired lease is taken");
    assert_eq!((second.sequence, second.claims), (0, 2));
    assert_eq!(
        store.heartbeat(&first, LONG).await.unwrap(),
        Heartbeat::Lost
    );
    assert!(
        matches!(
            store.heartbeat(&second, LONG).await.unwrap(),
            Heartbeat::Held { .. }
        ),
        "the new holder keeps it"
    );
    assert!(
        !store.release_batch(&first).await.unwrap(),
        "not w1's to release"
    );
    // The late worker's games are as good as any: counted once, whoever submits first.
    assert!(matches!(
        submit(store, &first).await,
        Submitted::Counted { .. }
    ));
    assert_eq!(submit(store, &second).await, Submitted::AlreadyCounted);
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..4));
}

pub async fn a_released_batch_is_leased_again(store: &Store) {
    let (_, run) = queued(store, "fleet-release", 4, queue(2)).await;
    let (w1, w2) = (worker(store, "w1").await, worker(store, "w2").await);
    let lease = claim(store, w1, run, LONG).await.unwrap();
    assert!(store.release_batch(&lease).await.unwrap());
    let next = claim(store, w2, run, LONG).await.unwrap();
    assert_eq!((next.sequence, next.claims), (0, 2));
}

pub async fn the_verdict_is_judged_on_the_prefix(store: &Store) {
    let (_, run) = queued(store, "fleet-prefix", 12, queue(3)).await;
    let w = worker(store, "w").await;
    let leases = [
        claim(store, w, run, LONG).await.unwrap(),
        claim(store, worker(store, "v").await, run, LONG)
            .await
            .unwrap(),
        claim(store, worker(store, "u").await, run, LONG)
            .await
            .unwrap(),
        claim(store, worker(store, "t").await, run, LONG)
            .await
            .unwrap(),
    ];
    // H1 once the prefix holds 4 pairs: after unit 3, inside batch 1, whatever came first.
    let submit_deciding = |lease: &Lease| {
        let pairs = played(lease);
        let lease = lease.clone();
        async move {
            let mut decide = |t: &Totals| (t.pairs >= 4).then_some(RunOutcome::H1);
            store
                .submit_batch(&lease, &pairs, "{}", &mut decide)
                .await
                .unwrap()
        }
    };
    for lease in [&leases[2], &leases[0]] {
        match submit_deciding(lease).await {
            Submitted::Counted { verdict: None, .. } => {}
            other => panic!("{other:?}"),
        }
    }
    match submit_deciding(&leases[1]).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(verdict, Some(RunOutcome::H1));
            assert_eq!(
                prefix.units, 4,
                "decided at the fourth unit, not the batch's end"
            );
            assert_eq!(prefix.totals, expected_totals(0..4));
        }
        other => panic!("{other:?}"),
    }
    // Everything counted stays counted; the verdict's evidence is the prefix.
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..9));
    assert_eq!(
        store.heartbeat(&leases[3], LONG).await.unwrap(),
        Heartbeat::RunClosed(RunOutcome::H1)
    );
    assert_eq!(
        submit_deciding(&leases[3]).await,
        Submitted::RunClosed(RunOutcome::H1)
    );
    assert_eq!(claim(store, w, run, LONG).await, None);
}

pub async fn a_stopped_run_reaches_its_workers(store: &Store) {
    let (_, run) = queued(store, "fleet-stop", 6, queue(3)).await;
    let w = worker(store, "w").await;
    let lease = claim(store, w, run, LONG).await.unwrap();
    store.finish_run(run, RunOutcome::Stopped).await.unwrap();
    assert_eq!(
        store.heartbeat(&lease, LONG).await.unwrap(),
        Heartbeat::RunClosed(RunOutcome::Stopped)
    );
    assert_eq!(
        submit(store, &lease).await,
        Submitted::RunClosed(RunOutcome::Stopped)
    );
    assert_eq!(store.totals(run).await.unwrap(), Totals::default());
    assert_eq!(claim(store, w, run, LONG).await, None);
}

pub async fn bad_batches_count_nothing(store: &Store) {
    let (_, run) = queued(store, "fleet-bad", 6, queue(3)).await;
    let (_, other) = queued(store, "fleet-bad-other", 6, queue(3)).await;
    let w = worker(store, "w").await;
    let lease = claim(store, w, run, LONG).await.unwrap();
    let pairs = played(&lease);
    let refused = |submitted: Result<Submitted, StoreError>, expected: &str| match submitted {
        Err(StoreError::InvalidBatch { reason, .. }) => {
            assert!(reason.contains(expected), "{reason:?} lacks {expected:?}")
        }
        other => panic!("{other:?}"),
    };
    refused(
        store
            .submit_batch(&lease, &pairs[..2], "{}", &mut never)
            .await,
        "schedule unit 2 is missing",
    );
    let mut twice = pairs.clone();
    twice[2] = pair(run, 1);
    refused(
        store.submit_batch(&lease, &twice, "{}", &mut never).await,
        "given twice",
    );
    let mut beyond = pairs.clone();
    beyond[2] = pair(run, 3);
    refused(
        store.submit_batch(&lease, &beyond, "{}", &mut never).await,
        "not in the batch",
    );
    let mut foreign = pairs.clone();
    foreign[0] = pair(other, 0);
    refused(
        store.submit_batch(&lease, &foreign, "{}", &mut never).await,
        "of run",
    );
    let mut lopsided = pairs.clone();
    lopsided[1].games.pop();
    assert!(matches!(
        store
            .submit_batch(&lease, &lopsided, "{}", &mut never)
            .await,
        Err(StoreError::InvalidPair { .. })
    ));
    assert_eq!(store.totals(run).await.unwrap(), Totals::default());
    assert!(all_games(store, run).await.is_empty());
    assert!(matches!(
        submit(store, &lease).await,
        Submitted::Counted { .. }
    ));
}

pub async fn priorities_limits_and_exclusions_choose_the_batch(store: &Store) {
    let low = queued(store, "fleet-low", 4, queue(1)).await.1;
    let high = queued(
        store,
        "fleet-high",
        4,
        Queue {
            priority: 5,
            worker_limit: Some(1),
            ..queue(1)
        },
    )
    .await
    .1;
    let (w1, w2) = (worker(store, "w1").await, worker(store, "w2").await);
    let others: Vec<RunId> = store
        .queued_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|q| q.run.id)
        .filter(|&id| id != low && id != high)
        .collect();
    let take = |w, extra: Option<RunId>| {
        let mut excluded = others.clone();
        excluded.extend(extra);
        async move {
            store
                .claim_batch(w, LONG, &excluded)
                .await
                .unwrap()
                .unwrap()
        }
    };
    assert_eq!(take(w1, None).await.run, high, "the higher priority first");
    assert_eq!(
        take(w2, None).await.run,
        low,
        "the high run's one worker slot is taken"
    );
    assert_eq!(
        take(w1, Some(high)).await.run,
        low,
        "an excluded run is skipped"
    );
    let listed = store.queued_runs().await.unwrap();
    let high_listed = listed.iter().find(|q| q.run.id == high).unwrap();
    assert_eq!(high_listed.batches.workers, 1);
    assert_eq!(high_listed.batches.leased, 1);
    assert_eq!(high_listed.worker_limit, Some(1));
}

pub async fn files_and_signatures_are_kept_with_the_run(store: &Store) {
    let book = RunFile {
        name: "books/../8moves.epd".into(),
        content: b"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - ; 'quoted'\n".to_vec(),
    };
    let (_, run) = queued(
        store,
        "fleet-files",
        2,
        Queue {
            signatures: vec![Some("sha256:abc".into())],
            files: vec![book.clone()],
            ..queue(2)
        },
    )
    .await;
    assert_eq!(store.run_files(run).await.unwrap(), vec![book]);
    assert_eq!(
        store.engine_signatures(run).await.unwrap(),
        vec![Some("sha256:abc".into()), None]
    );
    // The first worker sets what is unknown; what is known stays.
    assert_eq!(
        store
            .adopt_signatures(run, &["sha256:zzz".into(), "bench:123".into()])
            .await
            .unwrap(),
        vec![Some("sha256:abc".into()), Some("bench:123".into())]
    );
    let (spec, _) = queued(store, "fleet-files-twice", 2, queue(2)).await;
    let twice = Queue {
        files: vec![
            RunFile {
                name: "a".into(),
                content: vec![1],
            },
            RunFile {
                name: "a".into(),
                content: vec![2],
            },
        ],
        ..queue(2)
    };
    let renamed = RunSpec {
        name: unique("fleet-files-dup"),
        ..spec
    };
    match store.queue_run(&renamed, &twice).await {
        Err(StoreError::InvalidRun { reason, .. }) => assert!(reason.contains("twice"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(store.find_run_by_name(&renamed.name).await.unwrap(), None);
}

/// Workers claiming at once each get a batch of their own.
pub async fn concurrent_claims_get_distinct_batches(store: std::sync::Arc<Store>) {
    let (_, run) = queued(&store, "fleet-concurrent", 40, queue(1)).await;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let w = worker(&store, &format!("c{i}")).await;
            let mut mine = Vec::new();
            while let Some(lease) = claim(&store, w, run, LONG).await {
                assert!(matches!(
                    submit(&store, &lease).await,
                    Submitted::Counted { .. }
                ));
                mine.push(lease.sequence);
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort_unstable();
    assert_eq!(all, (0..40).collect::<Vec<u64>>(), "every batch once");
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..40));
    assert_eq!(
        store.run(run).await.unwrap().state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
}

/// A hole filled late lets the prefix walk over many pages of pairs at once, to the end.
pub async fn a_long_prefix_is_walked_page_by_page(store: &Store) {
    let (_, run) = queued(store, "fleet-long", 1100, queue(600)).await;
    let (w1, w2) = (worker(store, "w1").await, worker(store, "w2").await);
    let first = claim(store, w1, run, LONG).await.unwrap();
    let second = claim(store, w2, run, LONG).await.unwrap();
    match submit(store, &second).await {
        Submitted::Counted { prefix, verdict } => assert_eq!((prefix.units, verdict), (0, None)),
        other => panic!("{other:?}"),
    }
    match submit(store, &first).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(prefix.units, 1100);
            assert_eq!(prefix.totals, expected_totals(0..1100));
            assert_eq!(verdict, Some(RunOutcome::Complete));
        }
        other => panic!("{other:?}"),
    }
}

/// Names are values, never SQL: a run and a worker named like an injection are stored and read
/// back as written, and every table is still there.
pub async fn names_with_sql_metacharacters_are_plain_names(store: &Store) {
    let (spec, run) = queued(store, "fleet-'); DROP TABLE runs; --", 2, queue(1)).await;
    let name = unique("w'; DELETE FROM batches; --\\\"%_");
    let w = store
        .register_worker(&WorkerInfo {
            name: name.clone(),
            host: "h\"ost; --".into(),
            cores: 1,
            version: "test".into(),
        })
        .await
        .unwrap();
    assert!(store
        .workers()
        .await
        .unwrap()
        .iter()
        .any(|w| w.info.name == name));
    assert_eq!(store.run(run).await.unwrap().spec.name, spec.name);
    let lease = claim(store, w, run, LONG).await.unwrap();
    assert!(matches!(
        submit(store, &lease).await,
        Submitted::Counted { .. }
    ));
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..1));
}

/// Every batch of a run submitted at once, from as many workers: submits to one run queue on the
/// run's rows and write their pairs in as few statements as they can, so this is where a wrong
/// place in the commit order, a lock taken out of order or a batch left behind the prefix would
/// show. A run that
/// decides after its 100th pair must decide there, on the first 100 pairs, as a sequential run
/// does; a run that never decides must end complete with its prefix at its last unit. Either
/// way the commit order numbers the counted pairs 1 to n, each batch's in unit order, and the
/// totals are their sum.
pub async fn concurrent_submits_keep_the_commit_order_and_the_prefix(store: std::sync::Arc<Store>) {
    for decide_at in [Some(100), None] {
        let (_, run) = queued(&store, "fleet-concurrent-submits", 120, queue(3)).await;
        let mut leases = Vec::new();
        for i in 0..40 {
            let w = worker(&store, &format!("s{i}")).await;
            leases.push(claim(&store, w, run, LONG).await.unwrap());
        }
        // Latest batches first, so that most submits find the prefix's hole before them.
        leases.reverse();
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(leases.len()));
        let tasks: Vec<_> = leases
            .into_iter()
            .map(|lease| {
                let store = store.clone();
                let start = start.clone();
                tokio::spawn(async move {
                    let pairs = played(&lease);
                    let mut decide = |t: &Totals| {
                        decide_at
                            .is_some_and(|at| t.pairs >= at)
                            .then_some(RunOutcome::H1)
                    };
                    start.wait().await;
                    let submitted = store
                        .submit_batch(&lease, &pairs, "{}", &mut decide)
                        .await
                        .unwrap();
                    (lease, submitted)
                })
            })
            .collect();
        let mut counted = BTreeSet::new();
        let mut verdicts = Vec::new();
        for task in tasks {
            let (lease, submitted) = task.await.unwrap();
            match submitted {
                Submitted::Counted { prefix, verdict } => {
                    counted.extend(lease.unit_range());
                    if let Some(verdict) = verdict {
                        verdicts.push((verdict, prefix));
                    }
                }
                Submitted::RunClosed(RunOutcome::H1) if decide_at.is_some() => {}
                other => panic!("batch {}: {other:?}", lease.sequence),
            }
        }
        let (verdict, units) = match decide_at {
            Some(at) => (RunOutcome::H1, at),
            None => (RunOutcome::Complete, 120),
        };
        assert_eq!(
            verdicts,
            [(
                verdict,
                Prefix {
                    units,
                    totals: expected_totals(0..units)
                }
            )],
            "one submit closes the run, where a sequential run would"
        );
        assert!(counted.is_superset(&(0..units).collect()), "{counted:?}");
        assert_eq!(
            store.run(run).await.unwrap().state,
            RunState::Finished { verdict }
        );
        let totals = store.totals(run).await.unwrap();
        assert_eq!(totals, expected_totals(counted.iter().copied()));
        let order = super::commit_order(&store, run).await;
        assert_eq!(
            order.iter().map(|p| p.sequence).collect::<Vec<_>>(),
            (1..=totals.pairs).collect::<Vec<_>>(),
            "the commit order numbers every counted pair once, with no gap"
        );
        for batch in order.chunks(3) {
            let first = batch[0].key.index;
            assert_eq!(
                batch.iter().map(|p| p.key.index).collect::<Vec<_>>(),
                [first, first + 1, first + 2],
                "a batch's pairs are consecutive in the commit order, in unit order"
            );
        }
        let queued = store.queued_runs().await.unwrap();
        let this = queued.iter().find(|q| q.run.id == run).unwrap();
        assert_eq!(this.prefix.units, units);
    }
}

/// A pair of a batch that a local player of the run counted first stays as it was: the batch
/// counts only its other pairs, once, in the totals and the pairing's, and the commit order
/// numbers them on with no gap.
pub async fn a_pair_counted_before_its_batch_counts_once(store: &Store) {
    let (_, run) = queued(store, "fleet-overlap", 6, queue(3)).await;
    assert_eq!(
        store.commit_pair(&pair(run, 1)).await.unwrap(),
        arbiter_store::Committed::Inserted
    );
    let w = worker(store, "w").await;
    let lease = claim(store, w, run, LONG).await.unwrap();
    assert_eq!(lease.unit_range(), 0..3);
    match submit(store, &lease).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!((prefix.units, verdict), (3, None));
            assert_eq!(prefix.totals, expected_totals(0..3));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..3));
    assert_eq!(
        store.pairing_totals(run).await.unwrap(),
        [expected_totals(0..3)]
    );
    let order = super::commit_order(store, run).await;
    assert_eq!(
        order
            .iter()
            .map(|p| (p.sequence, p.key.index))
            .collect::<Vec<_>>(),
        [(1, 1), (2, 0), (3, 2)]
    );
    assert_eq!(
        all_games(store, run).await,
        expected_games(&(0..3).collect())
    );
}

/// The SPRT stand-in of [`many_workers_reach_the_sequential_verdict`]: a verdict once one
/// engine leads by `margin` wins, which the pairs of [`pair`] reach somewhere along the run.
/// None decides nothing before the run's end.
fn lead_of(margin: Option<u64>) -> impl FnMut(&Totals) -> Option<RunOutcome> + Send {
    move |t: &Totals| {
        let margin = margin?;
        if t.wins >= t.losses + margin {
            Some(RunOutcome::H1)
        } else if t.losses >= t.wins + margin {
            Some(RunOutcome::H0)
        } else {
            None
        }
    }
}

/// What one machine playing the units in order decides: the verdict and the unit count it is
/// reached after, or the whole run complete.
fn sequential(
    units: u64,
    mut decide: impl FnMut(&Totals) -> Option<RunOutcome>,
) -> (RunOutcome, u64) {
    let mut totals = Totals::default();
    for k in 0..units {
        totals.add(super::tally(k));
        if let Some(verdict) = decide(&totals) {
            return (verdict, k + 1);
        }
    }
    (RunOutcome::Complete, units)
}

/// Many workers, each claiming and submitting one-unit batches as fast as it can (the
/// coordinator bench's load, with the prefix's rule asked): submits commit side by side and
/// the run's advances take turns, so a batch's pairs may be totalled by another submit's
/// advance. Whatever the interleaving, the run closes once, with the verdict a sequential run
/// reaches after the same units, its prefix holds exactly those units, the totals are the sum
/// of every counted batch, and the commit order numbers every counted pair once with no gap
/// and no pair left waiting.
pub async fn many_workers_reach_the_sequential_verdict(store: std::sync::Arc<Store>) {
    const UNITS: u64 = 160;
    for margin in [Some(4), None] {
        let (verdict, units) = sequential(UNITS, lead_of(margin));
        assert!(
            margin.is_none() || units < UNITS,
            "the rule decides before the run's end"
        );
        let (_, run) = queued(&store, "fleet-many-workers", UNITS, queue(1)).await;
        let mut workers = Vec::new();
        for i in 0..24 {
            workers.push(worker(&store, &format!("m{i}")).await);
        }
        let others: Vec<RunId> = store
            .queued_runs()
            .await
            .unwrap()
            .into_iter()
            .map(|q| q.run.id)
            .filter(|&id| id != run)
            .collect();
        let tasks: Vec<_> = workers
            .into_iter()
            .map(|w| {
                let store = store.clone();
                let others = others.clone();
                tokio::spawn(async move {
                    let mut reported = Vec::new();
                    let mut counted = Vec::new();
                    while let Some(lease) = store.claim_batch(w, LONG, &others).await.unwrap() {
                        let mut decide = lead_of(margin);
                        match store
                            .submit_batch(&lease, &played(&lease), "{}", &mut decide)
                            .await
                            .unwrap()
                        {
                            Submitted::Counted { prefix, verdict } => {
                                counted.extend(lease.unit_range());
                                if let Some(verdict) = verdict {
                                    reported.push((verdict, prefix));
                                }
                            }
                            Submitted::RunClosed(_) => {}
                            other @ (Submitted::AlreadyCounted | Submitted::Stepped { .. }) => {
                                panic!("batch {}: {other:?}", lease.sequence)
                            }
                        }
                    }
                    (reported, counted)
                })
            })
            .collect();
        let mut reported = Vec::new();
        let mut counted = BTreeSet::new();
        for task in tasks {
            let (verdicts, units) = task.await.unwrap();
            reported.extend(verdicts);
            counted.extend(units);
        }
        let prefix = Prefix {
            units,
            totals: expected_totals(0..units),
        };
        assert_eq!(
            reported,
            [(verdict, prefix)],
            "one advance closes the run, where a sequential run would"
        );
        assert_eq!(
            store.run(run).await.unwrap().state,
            RunState::Finished { verdict }
        );
        assert!(counted.is_superset(&(0..units).collect()), "{counted:?}");
        let totals = store.totals(run).await.unwrap();
        assert_eq!(totals, expected_totals(counted.iter().copied()));
        assert_eq!(store.pairing_totals(run).await.unwrap(), [totals]);
        let order = super::commit_order(&store, run).await;
        assert_eq!(
            order.iter().map(|p| p.sequence).collect::<Vec<_>>(),
            (1..=counted.len() as u64).collect::<Vec<_>>(),
            "every counted pair has its place in the commit order, none waits"
        );
        assert_eq!(
            store.stale_runs(std::time::Duration::ZERO).await.unwrap(),
            []
        );
        let queued = store.queued_runs().await.unwrap();
        let this = queued.iter().find(|q| q.run.id == run).unwrap();
        assert_eq!(this.prefix, prefix);
    }
}

/// A submitter killed between its two transactions (counted, never advanced): its pairs are
/// counted (their keys taken, their games stored, a resume skips them) but neither in the
/// totals nor in the commit order, and its run says it waits. The next submit's advance adds
/// them; at a run's end, where no submit comes, an advance of its own (a worker's that finds
/// the run stale) adds them and closes the run.
pub async fn a_batch_whose_advance_never_ran_is_totalled_by_the_next(store: &Store) {
    // Mid-run: the next submit adds the orphan too.
    let (_, run) = queued(store, "fleet-orphan", 9, queue(3)).await;
    let w = worker(store, "w").await;
    let first = claim(store, w, run, LONG).await.unwrap();
    match store
        .count_batch(&first, &played(&first), "{}")
        .await
        .unwrap()
    {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!((prefix, verdict), (Prefix::default(), None));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.totals(run).await.unwrap(), Totals::default());
    assert_eq!(super::commit_order(store, run).await, []);
    assert_eq!(
        super::committed_indices(store, run).await,
        (0..3).collect::<BTreeSet<_>>(),
        "counted: a resume must not play them again"
    );
    assert_eq!(
        store.stale_runs(std::time::Duration::ZERO).await.unwrap(),
        [run]
    );
    assert_eq!(
        store
            .stale_runs(std::time::Duration::from_secs(3600))
            .await
            .unwrap(),
        [],
        "not stale yet: its submitter may still be advancing it"
    );
    // A second copy of the batch still counts nothing.
    assert_eq!(submit(store, &first).await, Submitted::AlreadyCounted);
    let second = claim(store, w, run, LONG).await.unwrap();
    match submit(store, &second).await {
        Submitted::Counted { prefix, verdict } => {
            assert_eq!(verdict, None);
            assert_eq!(prefix.units, 6);
            assert_eq!(prefix.totals, expected_totals(0..6));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..6));
    assert_eq!(
        super::commit_order(store, run)
            .await
            .iter()
            .map(|p| (p.sequence, p.key.index))
            .collect::<Vec<_>>(),
        [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5)]
    );
    assert_eq!(
        store.stale_runs(std::time::Duration::ZERO).await.unwrap(),
        []
    );

    // The last batch: nothing comes after it but an advance.
    let last = claim(store, w, run, LONG).await.unwrap();
    store
        .count_batch(&last, &played(&last), "{}")
        .await
        .unwrap();
    assert_eq!(store.run(run).await.unwrap().state, RunState::Running);
    let advanced = store.advance(run, &mut never).await.unwrap();
    assert_eq!(
        (
            advanced.totalled,
            advanced.verdict,
            advanced.prefix.units,
            advanced.busy
        ),
        (3, Some(RunOutcome::Complete), 9, false)
    );
    assert_eq!(
        store.run(run).await.unwrap().state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..9));
    assert_eq!(
        store.pairing_totals(run).await.unwrap(),
        [expected_totals(0..9)]
    );
    assert_eq!(super::commit_order(store, run).await.len(), 9);
    // Advancing again finds nothing to do and changes nothing.
    let again = store.advance(run, &mut never).await.unwrap();
    assert_eq!((again.totalled, again.verdict), (0, None));
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(0..9));
}
