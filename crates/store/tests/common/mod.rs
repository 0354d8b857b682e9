//! Deterministic runs and pairs for the store's tests, and the scenarios every backend must pass.
//!
//! Pair k's results, PGN and times are a pure function of k, so a test (or the parent of a killed
//! child process) can recompute what any committed pair must look like.

#![allow(dead_code, reason = "each test binary uses its own subset")]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use arbiter_store::{
    Clock, Committed, CommittedPair, GameResult, GameRow, Location, PairKey, PairRecord, PairTally,
    Pairing, RunFacts, RunId, RunKind, RunOutcome, RunSpec, RunState, SampleModel, Store,
    StoreError, StoredGame, Totals,
};
use futures_util::TryStreamExt;

pub mod artifacts;
pub mod fleet;
pub mod tokens;
pub mod tuning_fleet;

pub const FIRST: &str = "dev ♞";
pub const SECOND: &str = "base";

const CONFIG: &str = "[engines.dev]\ncmd = \"./dev\"\n# ünïcode and 'quotes' survive\n";

/// A match: FIRST against SECOND, one pairing.
pub fn spec(name: &str, pairs_planned: u64) -> RunSpec {
    RunSpec::head_to_head(
        name.to_owned(),
        u64::MAX - 7,
        CONFIG.to_owned(),
        FIRST.to_owned(),
        SECOND.to_owned(),
        pairs_planned,
    )
}

/// The engines of [`round_robin`].
pub const FOUR: [&str; 4] = ["dev ♞", "base", "sf-15", "ethereal"];

/// A round-robin of four engines: six pairings, pairing p planned for 3 + p pairs.
pub fn round_robin(name: &str) -> RunSpec {
    let mut pairings = Vec::new();
    for first in 0..4 {
        for second in first + 1..4 {
            pairings.push(Pairing {
                first,
                second,
                pairs_planned: 3 + pairings.len() as u64,
            });
        }
    }
    RunSpec {
        name: name.to_owned(),
        seed: 11,
        config: CONFIG.to_owned(),
        engines: FOUR.map(str::to_owned).to_vec(),
        pairings,
        facts: Some(RunFacts {
            version: RunFacts::VERSION,
            kind: RunKind::RoundRobin,
            model: SampleModel::Trinomial,
            sprt: None,
            games_planned: 99,
            clocks: vec![
                Some(Clock {
                    moves: Some(40),
                    base_ms: 2_500.5,
                    increment_ms: 0.25,
                    hourglass: false,
                }),
                None,
                None,
                None,
            ],
        }),
        confirms: None,
    }
}

/// Pair `index` of pairing 0: a match's pair.
pub fn key(index: u64) -> PairKey {
    PairKey { pairing: 0, index }
}

/// A well-mixed hash, so neighbouring pairs get unrelated results.
fn mix(k: u64) -> u64 {
    let mut x = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What decides a pair's results: its index in pairing 0 (so a match's pair k is "pair k"),
/// and other pairings' pairs apart from those.
fn draw(key: PairKey) -> u64 {
    key.index ^ (u64::from(key.pairing) << 48)
}

/// The first engine's score in half points (0 loss, 1 draw, 2 win) in game `g` of pair `k`.
pub fn score(k: u64, g: usize) -> u8 {
    ((mix(k) >> (8 * g)) % 3) as u8
}

pub fn tally(k: u64) -> PairTally {
    let scores = [score(k, 0), score(k, 1)];
    let count = |s| scores.iter().filter(|&&x| x == s).count() as u8;
    PairTally {
        wins: count(2),
        draws: count(1),
        losses: count(0),
        penta: scores[0] + scores[1],
    }
}

/// Game `g` of pair `k`: the first engine has White in game 0 and Black in game 1.
pub fn game(k: u64, g: usize, salt: &str) -> GameRow {
    let number = k.wrapping_mul(2).wrapping_add(g as u64 + 1);
    game_between(k, g, salt, [FIRST, SECOND], number)
}

/// Game `g` of the pair drawn as `k`, between `engines` (the pairing's first, then second),
/// numbered `number` in the run.
fn game_between(k: u64, g: usize, salt: &str, engines: [&str; 2], number: u64) -> GameRow {
    let [first, second] = engines;
    let (white, black) = if g == 0 {
        (first, second)
    } else {
        (second, first)
    };
    let first_white = g == 0;
    let result = match (score(k, g), first_white) {
        (1, _) => GameResult::Draw,
        (2, true) | (0, false) => GameResult::WhiteWins,
        _ => GameResult::BlackWins,
    };
    GameRow {
        game_number: number,
        white: white.to_owned(),
        black: black.to_owned(),
        result,
        termination: if result == GameResult::Draw {
            "adjudication"
        } else {
            "normal"
        }
        .to_owned(),
        plies: 40 + (mix(k) % 200) as u32,
        opening_index: mix(k) % 5000,
        opening_fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_owned(),
        pgn: format!(
            "[Event \"arbiter test{salt}\"]\n[Round \"{number}\"]\n[White \"{white}\"]\n\
             [Black \"{black}\"]\n[Result \"{result}\"]\n\n1. e4 {{+0.35/12 0.250s}} e5 {result}\n"
        ),
        json: format!("{{\"pair\":{k},\"game\":{g},\"result\":\"{result}\"{salt}}}"),
        started_at: UNIX_EPOCH
            + Duration::from_millis(1_700_000_000_000 + 1_000 * (k % 1_000_000_000)),
        duration: Duration::from_millis(250 + k % 1000),
    }
}

pub fn pair(run: RunId, k: u64) -> PairRecord {
    PairRecord {
        run,
        key: key(k),
        tally: tally(k),
        games: vec![game(k, 0, ""), game(k, 1, "")],
    }
}

/// The game number the runner would give game `g` of `key` in a six-pairing round-robin that
/// plays the pairings' pair 0 first, then their pair 1 ...: not the order of the keys.
fn round_robin_game_number(key: PairKey, g: usize) -> u64 {
    2 * (6 * key.index + u64::from(key.pairing)) + g as u64 + 1
}

/// The pair `key` of a run of `spec` (one of [`round_robin`]'s).
pub fn keyed_pair(run: RunId, spec: &RunSpec, key: PairKey) -> PairRecord {
    let pairing = spec.pairings[key.pairing as usize];
    let engines = [
        spec.engines[pairing.first].as_str(),
        spec.engines[pairing.second].as_str(),
    ];
    let k = draw(key);
    PairRecord {
        run,
        key,
        tally: tally(k),
        games: [0, 1]
            .map(|g| game_between(k, g, "", engines, round_robin_game_number(key, g)))
            .to_vec(),
    }
}

/// The totals of the pairs `keys` (of any pairings).
pub fn expected_keyed_totals<'a>(keys: impl IntoIterator<Item = &'a PairKey>) -> Totals {
    let mut totals = Totals::default();
    for &key in keys {
        totals.add(tally(draw(key)));
    }
    totals
}

/// What a run of `spec` holding the pairs `keys` reads back as games: in game-number order.
pub fn expected_keyed_games(spec: &RunSpec, keys: &BTreeSet<PairKey>) -> Vec<StoredGame> {
    let mut games: Vec<StoredGame> = keys
        .iter()
        .flat_map(|&key| {
            let record = keyed_pair(RunId::new(0), spec, key);
            record
                .games
                .into_iter()
                .enumerate()
                .map(move |(g, game)| StoredGame {
                    pairing: key.pairing,
                    pair_index: key.index,
                    game_index: g as u8,
                    game,
                })
        })
        .collect();
    games.sort_by_key(|stored| stored.game.game_number);
    games
}

/// The committed pair indices of a match (every key must be in pairing 0).
pub async fn committed_indices(store: &Store, run: RunId) -> BTreeSet<u64> {
    let keys = store.committed_pairs(run).await.unwrap();
    assert!(
        keys.iter().all(|key| key.pairing == 0),
        "a match has one pairing: {keys:?}"
    );
    keys.into_iter().map(|key| key.index).collect()
}

pub async fn commit_order(store: &Store, run: RunId) -> Vec<CommittedPair> {
    store
        .pairs_in_commit_order(run)
        .try_collect()
        .await
        .expect("pairs stream")
}

pub fn expected_totals(indices: impl IntoIterator<Item = u64>) -> Totals {
    let mut totals = Totals::default();
    for k in indices {
        totals.add(tally(k));
    }
    totals
}

pub fn expected_games(indices: &BTreeSet<u64>) -> Vec<StoredGame> {
    indices
        .iter()
        .flat_map(|&k| {
            (0..2).map(move |g| StoredGame {
                pairing: 0,
                pair_index: k,
                game_index: g as u8,
                game: game(k, g, ""),
            })
        })
        .collect()
}

pub async fn all_games(store: &Store, run: RunId) -> Vec<StoredGame> {
    store.games(run).try_collect().await.expect("games stream")
}

/// A name no other test (or earlier run against a shared PostgreSQL) uses.
pub fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

// ---------------------------------------------------------------------------------------------
// Scenarios: run on SQLite by tests/sqlite.rs and on PostgreSQL by tests/postgres.rs.

pub async fn runs_pairs_and_games_round_trip(store: &Store) {
    let spec = spec(&unique("round-trip"), 100);
    let run = store.create_run(&spec).await.unwrap();

    let found = store
        .find_run_by_name(&spec.name)
        .await
        .unwrap()
        .expect("found by name");
    assert_eq!(found.id, run);
    assert_eq!(
        found.spec, spec,
        "the spec (u64 seed, config text) is stored verbatim"
    );
    assert_eq!(found.state, RunState::Running);
    assert_eq!(store.run(run).await.unwrap(), found);
    assert!(store.runs().await.unwrap().contains(&found));
    assert_eq!(store.find_run_by_name("no such run").await.unwrap(), None);
    assert_eq!(store.totals(run).await.unwrap(), Totals::default());

    let order = [7, 3, 0, 99, 42, 1, 2, 50];
    for k in order {
        assert_eq!(
            store.commit_pair(&pair(run, k)).await.unwrap(),
            Committed::Inserted
        );
    }
    let committed: BTreeSet<u64> = order.into_iter().collect();
    assert_eq!(committed_indices(store, run).await, committed);
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(order));
    assert_eq!(
        all_games(store, run).await,
        expected_games(&committed),
        "games in (pair, game) order"
    );

    let updated = store.run(run).await.unwrap().updated_at;
    assert!(updated >= found.created_at);

    store.finish_run(run, RunOutcome::H1).await.unwrap();
    let finished = store.run(run).await.unwrap();
    assert_eq!(
        finished.state,
        RunState::Finished {
            verdict: RunOutcome::H1
        }
    );
    // A finished run is closed: no new pair, no second verdict; a retry is still recognised.
    assert!(matches!(
        store.commit_pair(&pair(run, 60)).await,
        Err(StoreError::RunFinished { verdict, .. }) if verdict == RunOutcome::H1
    ));
    assert_eq!(
        store.commit_pair(&pair(run, 7)).await.unwrap(),
        Committed::AlreadyPresent
    );
    assert!(matches!(
        store.finish_run(run, RunOutcome::H0).await,
        Err(StoreError::RunFinished { .. })
    ));
    assert_eq!(store.totals(run).await.unwrap(), expected_totals(order));
}

pub async fn duplicate_commit_changes_nothing(store: &Store) {
    let run = store
        .create_run(&spec(&unique("duplicate"), 10))
        .await
        .unwrap();
    assert_eq!(
        store.commit_pair(&pair(run, 3)).await.unwrap(),
        Committed::Inserted
    );
    assert_eq!(
        store.commit_pair(&pair(run, 4)).await.unwrap(),
        Committed::Inserted
    );
    let before = store.totals(run).await.unwrap();
    assert_eq!(before, expected_totals([3, 4]));

    assert_eq!(
        store.commit_pair(&pair(run, 3)).await.unwrap(),
        Committed::AlreadyPresent
    );
    // A replay that came out differently (a non-deterministic engine) is not counted either:
    // the first commit is the record.
    let mut different = pair(run, 3);
    different.tally = PairTally {
        wins: 2,
        draws: 0,
        losses: 0,
        penta: 4,
    };
    different.games = vec![game(3, 0, " replayed"), game(3, 1, " replayed")];
    assert_eq!(
        store.commit_pair(&different).await.unwrap(),
        Committed::AlreadyPresent
    );

    assert_eq!(store.totals(run).await.unwrap(), before);
    assert_eq!(
        all_games(store, run).await,
        expected_games(&BTreeSet::from([3, 4]))
    );
}

pub async fn resume_set_is_exact_and_per_run(store: &Store) {
    let a = store
        .create_run(&spec(&unique("resume-a"), 1000))
        .await
        .unwrap();
    let b = store
        .create_run(&spec(&unique("resume-b"), 1000))
        .await
        .unwrap();
    assert_eq!(committed_indices(store, a).await, BTreeSet::new());
    let in_a = [0, 2, 5, 998, 999];
    let in_b = [1, 2, 3];
    for k in in_a {
        let _ = store.commit_pair(&pair(a, k)).await.unwrap();
    }
    for k in in_b {
        let _ = store.commit_pair(&pair(b, k)).await.unwrap();
    }
    assert_eq!(committed_indices(store, a).await, BTreeSet::from(in_a));
    assert_eq!(committed_indices(store, b).await, BTreeSet::from(in_b));
    assert_eq!(store.totals(a).await.unwrap(), expected_totals(in_a));
    assert_eq!(store.totals(b).await.unwrap(), expected_totals(in_b));
    assert_eq!(all_games(store, b).await.len(), 6);
}

pub async fn bad_commits_write_nothing(store: &Store) {
    let too_long = spec(&unique("too-long"), u64::MAX);
    assert!(matches!(
        store.create_run(&too_long).await,
        Err(StoreError::InvalidRun { .. })
    ));
    assert_eq!(store.find_run_by_name(&too_long.name).await.unwrap(), None);

    let run = store.create_run(&spec(&unique("bad"), 10)).await.unwrap();
    let _ = store.commit_pair(&pair(run, 0)).await.unwrap();

    let mut wrong_sum = pair(run, 1);
    wrong_sum.tally = PairTally {
        wins: 1,
        draws: 0,
        losses: 0,
        penta: 2,
    };
    let mut wrong_bucket = pair(run, 1);
    wrong_bucket.tally = PairTally {
        wins: 1,
        draws: 1,
        losses: 0,
        penta: 2,
    };
    for bad in [wrong_sum, wrong_bucket, pair(run, 10), pair(run, u64::MAX)] {
        let index = bad.key.index;
        match store.commit_pair(&bad).await {
            Err(StoreError::InvalidPair { pair, .. }) => assert_eq!(pair, bad.key),
            other => panic!(
                "pair {index} with {:?}: expected InvalidPair, got {other:?}",
                bad.tally
            ),
        }
    }
    let unknown = RunId::new(run.get() + 1_000_000);
    assert!(matches!(
        store.commit_pair(&pair(unknown, 0)).await,
        Err(StoreError::UnknownRun { run, .. }) if run == unknown
    ));
    assert!(matches!(
        store.totals(unknown).await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert!(matches!(
        store.committed_pairs(unknown).await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert!(matches!(
        store.finish_run(unknown, RunOutcome::H1).await,
        Err(StoreError::UnknownRun { .. })
    ));

    assert_eq!(committed_indices(store, run).await, BTreeSet::from([0]));
    assert_eq!(store.totals(run).await.unwrap(), expected_totals([0]));
    assert_eq!(all_games(store, run).await.len(), 2);
}

/// The last round of an unpaired run of an odd number of games is a unit of one game: it is
/// committed alone, counted once and read back with its one game; a tally that does not match
/// the games given (or counts three) is refused.
pub async fn one_game_units_are_kept(store: &Store) {
    let run = store.create_run(&spec(&unique("odd"), 3)).await.unwrap();
    let _ = store.commit_pair(&pair(run, 0)).await.unwrap();
    let mut single = pair(run, 2);
    single.games.truncate(1);
    single.tally = PairTally {
        wins: 0,
        draws: 1,
        losses: 0,
        penta: 1,
    };
    let mut missing_game = single.clone();
    missing_game.tally = tally(2);
    let mut three = single.clone();
    three.tally = PairTally {
        wins: 1,
        draws: 1,
        losses: 1,
        penta: 3,
    };
    for bad in [missing_game, three] {
        assert!(
            matches!(
                store.commit_pair(&bad).await,
                Err(StoreError::InvalidPair { .. })
            ),
            "{:?} with {} game(s)",
            bad.tally,
            bad.games.len()
        );
    }
    assert_eq!(
        store.commit_pair(&single).await.unwrap(),
        Committed::Inserted
    );
    assert_eq!(
        store.commit_pair(&single).await.unwrap(),
        Committed::AlreadyPresent
    );
    let mut expected = expected_totals([0]);
    expected.add(single.tally);
    assert_eq!(store.totals(run).await.unwrap(), expected);
    assert_eq!(expected.wins + expected.draws + expected.losses, 3);
    let games = all_games(store, run).await;
    assert_eq!(games.len(), 3);
    let last = games.last().unwrap();
    assert_eq!((last.pair_index, last.game_index), (2, 0));
    assert_eq!(last.game, single.games[0]);
}

pub async fn run_names_are_unique(store: &Store) {
    let spec = spec(&unique("unique-name"), 10);
    let first = store.create_run(&spec).await.unwrap();
    match store.create_run(&spec).await {
        Err(StoreError::DuplicateRunName { existing, name, .. }) => {
            assert_eq!(existing, first);
            assert_eq!(name, spec.name);
        }
        other => panic!("expected DuplicateRunName, got {other:?}"),
    }
    let other = store
        .create_run(&self::spec(&unique("other-name"), 10))
        .await
        .unwrap();
    assert_ne!(other, first);
}

/// `tasks` tasks commit `per_task` pairs each, interleaved, plus one retry each. Returns the
/// commit rate in pairs per second.
pub async fn concurrent_commits_are_all_counted(
    store: Arc<Store>,
    tasks: u64,
    per_task: u64,
) -> f64 {
    let run = store
        .create_run(&spec(&unique("concurrent"), tasks * per_task))
        .await
        .unwrap();
    let started = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                for i in 0..per_task {
                    let k = i * tasks + t;
                    let outcome = store.commit_pair(&pair(run, k)).await;
                    assert_eq!(outcome.unwrap(), Committed::Inserted, "pair {k}");
                }
                // A retry of a pair another task committed.
                let other = (t + 1) % tasks;
                assert_eq!(
                    store.commit_pair(&pair(run, other)).await.unwrap(),
                    Committed::AlreadyPresent
                );
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("commit task");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let all: BTreeSet<u64> = (0..tasks * per_task).collect();
    assert_eq!(committed_indices(&store, run).await, all, "no pair lost");
    assert_eq!(
        store.totals(run).await.unwrap(),
        expected_totals(all.iter().copied())
    );
    assert_eq!(
        all_games(&store, run).await.len() as u64,
        2 * tasks * per_task
    );
    // Concurrent commits still number the run's pairs 1, 2, 3 ... without a gap or a repeat.
    let order = commit_order(&store, run).await;
    let sequences: Vec<u64> = order.iter().map(|pair| pair.sequence).collect();
    assert_eq!(sequences, (1..=tasks * per_task).collect::<Vec<_>>());
    (tasks * per_task + tasks) as f64 / elapsed
}

/// Four engines, six pairings: pairs committed across pairings, each pairing's totals and the
/// run's, the committed keys and the games exactly; the same index in two pairings is two pairs.
pub async fn n_engine_runs_round_trip(store: &Store) {
    let spec = round_robin(&unique("round-robin"));
    let run = store.create_run(&spec).await.unwrap();
    let found = store.run(run).await.unwrap();
    assert_eq!(found.spec, spec, "engines and pairings are stored in order");
    assert_eq!(found.pairs_planned(), 3 + 4 + 5 + 6 + 7 + 8);
    assert_eq!(
        store.pairing_totals(run).await.unwrap(),
        vec![Totals::default(); 6],
        "a pairing without pairs has zero totals"
    );

    // Pair 0 in every pairing, then some more; pairing 4 gets none.
    let mut keys = Vec::new();
    for pairing in [0, 1, 2, 3, 5] {
        keys.push(PairKey { pairing, index: 0 });
    }
    keys.extend(
        [(2, 4), (5, 7), (0, 2), (3, 1), (5, 3), (1, 3)]
            .map(|(pairing, index)| PairKey { pairing, index }),
    );
    for &key in &keys {
        let committed = store.commit_pair(&keyed_pair(run, &spec, key)).await;
        assert_eq!(committed.unwrap(), Committed::Inserted, "{key}");
    }
    // A duplicate is per (pairing, index): committing (1, 0) again changes nothing, and (4, 0),
    // the same index in a pairing without pairs, is a new pair.
    let again = keyed_pair(
        run,
        &spec,
        PairKey {
            pairing: 1,
            index: 0,
        },
    );
    assert_eq!(
        store.commit_pair(&again).await.unwrap(),
        Committed::AlreadyPresent
    );
    let new = PairKey {
        pairing: 4,
        index: 0,
    };
    assert_eq!(
        store
            .commit_pair(&keyed_pair(run, &spec, new))
            .await
            .unwrap(),
        Committed::Inserted
    );
    keys.push(new);

    let committed: BTreeSet<PairKey> = keys.iter().copied().collect();
    assert_eq!(store.committed_pairs(run).await.unwrap(), committed);
    let per_pairing = store.pairing_totals(run).await.unwrap();
    assert_eq!(per_pairing.len(), 6);
    for (p, totals) in per_pairing.iter().enumerate() {
        let in_pairing = committed.iter().filter(|key| key.pairing as usize == p);
        assert_eq!(*totals, expected_keyed_totals(in_pairing), "pairing {p}");
    }
    let run_totals = store.totals(run).await.unwrap();
    assert_eq!(run_totals, expected_keyed_totals(&committed));
    let mut sum = Totals::default();
    for totals in &per_pairing {
        sum.pairs += totals.pairs;
        sum.wins += totals.wins;
        sum.draws += totals.draws;
        sum.losses += totals.losses;
        for (bucket, count) in sum.pentanomial.iter_mut().zip(totals.pentanomial) {
            *bucket += count;
        }
    }
    assert_eq!(
        run_totals, sum,
        "the run's totals are the sum of its pairings'"
    );

    let games = all_games(store, run).await;
    assert_eq!(games, expected_keyed_games(&spec, &committed));
    let numbers: Vec<u64> = games.iter().map(|g| g.game.game_number).collect();
    assert!(
        numbers.is_sorted(),
        "games in the runner's numbering: {numbers:?}"
    );

    // The commit order is the order of the calls above, across pairings.
    let order = commit_order(store, run).await;
    assert_eq!(order.iter().map(|p| p.key).collect::<Vec<_>>(), keys);
    assert_eq!(
        order.iter().map(|p| p.sequence).collect::<Vec<_>>(),
        (1..=keys.len() as u64).collect::<Vec<_>>()
    );
}

/// Pairs committed out of index order read back in commit order, numbered 1, 2, 3 ..., each with
/// its tally; a duplicate takes no number; the tallies in that order add up to the totals.
pub async fn pairs_read_back_in_commit_order(store: &Store) {
    let run = store
        .create_run(&spec(&unique("commit-order"), 20))
        .await
        .unwrap();
    assert!(commit_order(store, run).await.is_empty());
    let before = std::time::SystemTime::now();
    let order = [5, 0, 19, 3, 7, 2];
    for k in order {
        let _ = store.commit_pair(&pair(run, k)).await.unwrap();
        if k == 19 {
            assert_eq!(
                store.commit_pair(&pair(run, 5)).await.unwrap(),
                Committed::AlreadyPresent
            );
        }
    }
    let read = commit_order(store, run).await;
    assert_eq!(
        read.iter().map(|p| p.key).collect::<Vec<_>>(),
        order.map(key)
    );
    assert_eq!(
        read.iter().map(|p| p.sequence).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let mut running = Totals::default();
    for (pair, k) in read.iter().zip(order) {
        assert_eq!(pair.tally, tally(k), "pair {k}");
        // Stored to the millisecond: allow for the truncation.
        assert!(
            pair.committed_at + Duration::from_millis(1) >= before,
            "pair {k} committed before the test began"
        );
        running.add(pair.tally);
    }
    assert_eq!(running, store.totals(run).await.unwrap());
    let times: Vec<_> = read.iter().map(|p| p.committed_at).collect();
    assert!(times.is_sorted(), "commit times follow the sequence");

    let unknown = RunId::new(run.get() + 1_000_000);
    assert!(commit_order(store, unknown).await.is_empty());
}

/// Lineups the store cannot key pairs to are refused, naming what is wrong, and write nothing;
/// so are a pairing the run lacks and an index beyond its pairing's plan.
pub async fn bad_lineups_and_keys_are_refused(store: &Store) {
    let mut refusals: Vec<(RunSpec, &str)> = Vec::new();
    let mut one_engine = spec(&unique("one-engine"), 10);
    one_engine.engines.truncate(1);
    one_engine.pairings.clear();
    refusals.push((
        one_engine,
        "a run needs at least two engines, this one has 1",
    ));
    let mut same_name = round_robin(&unique("same-name"));
    same_name.engines[3] = FOUR[1].to_owned();
    refusals.push((same_name, "engines 1 and 3 are both named \"base\""));
    let mut self_play = round_robin(&unique("self-play"));
    self_play.pairings[2].second = 0;
    refusals.push((self_play, "pairing 2 has engine 0 (\"dev ♞\") play itself"));
    let mut stranger = round_robin(&unique("stranger"));
    stranger.pairings[5].second = 4;
    refusals.push((
        stranger,
        "pairing 5 refers to engine 4, but the run has engines 0 to 3",
    ));
    let mut no_pairing = round_robin(&unique("no-pairing"));
    no_pairing.pairings.clear();
    refusals.push((
        no_pairing,
        "a run needs at least one pairing, this one has none",
    ));
    let mut clockless = round_robin(&unique("clockless"));
    if let Some(facts) = &mut clockless.facts {
        facts.clocks.pop();
    }
    refusals.push((clockless, "its facts give 3 clock(s) for 4 engines"));
    let mut empty_name = spec(&unique("empty-name"), 10);
    empty_name.engines[1].clear();
    refusals.push((empty_name, "engine 1 has an empty name"));
    for (spec, reason) in refusals {
        let error = store.create_run(&spec).await.unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidRun { .. }),
            "{}: {error:?}",
            spec.name
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{}: run {:?} is invalid: {reason}",
                store.location(),
                spec.name
            )
        );
        assert_eq!(store.find_run_by_name(&spec.name).await.unwrap(), None);
    }

    let spec = round_robin(&unique("bad-keys"));
    let run = store.create_run(&spec).await.unwrap();
    let first = PairKey {
        pairing: 2,
        index: 4,
    };
    let _ = store
        .commit_pair(&keyed_pair(run, &spec, first))
        .await
        .unwrap();
    let beyond_plan = PairKey {
        pairing: 2,
        index: 5,
    };
    let no_such_pairing = PairKey {
        pairing: 6,
        index: 0,
    };
    // Its games are pairing 2's: only the key is wrong.
    let mut stray = keyed_pair(run, &spec, first);
    stray.key = no_such_pairing;
    let bad = [
        (
            keyed_pair(run, &spec, beyond_plan),
            "pairing 2 has 5 planned pairs (indices 0 to 4)",
        ),
        (stray, "the run has 6 pairing(s) (numbers 0 to 5)"),
    ];
    for (record, reason) in bad {
        let error = store.commit_pair(&record).await.unwrap_err();
        assert!(
            matches!(&error, StoreError::InvalidPair { pair, .. } if *pair == record.key),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{}: pair {} of pairing {} of run {run} is invalid: {reason}",
                store.location(),
                record.key.index,
                record.key.pairing
            )
        );
    }
    assert_eq!(
        store.committed_pairs(run).await.unwrap(),
        BTreeSet::from([first])
    );
    assert_eq!(
        store.totals(run).await.unwrap(),
        expected_keyed_totals(&[first])
    );
    assert_eq!(commit_order(store, run).await.len(), 1);
    assert_eq!(all_games(store, run).await.len(), 2);
}

pub async fn a_run_is_played_by_one_holder_at_a_time(store: &Store) {
    // The runner holds the guard across awaits in spawned tasks.
    fn held_by_tasks<T: Send + 'static>() {}
    held_by_tasks::<arbiter_store::RunLock>();

    let run = store
        .create_run(&spec(&unique("locked"), 10))
        .await
        .unwrap();
    let other = store
        .create_run(&spec(&unique("locked-other"), 10))
        .await
        .unwrap();
    let lock = store.lock_run(run).await.expect("a free run");

    let error = store
        .lock_run(run)
        .await
        .expect_err("a second lock, same process");
    match &error {
        StoreError::RunBusy {
            run: busy, holder, ..
        } => {
            assert_eq!(*busy, run);
            let me = format!("pid {} on host ", std::process::id());
            assert!(holder.starts_with(&me), "{holder}");
            assert!(
                holder.contains(", since 20") && holder.ends_with(" UTC"),
                "{holder}"
            );
        }
        other => panic!("expected RunBusy, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.starts_with(store.location())
            && message.contains(&format!(
                "run {run} is being played by another process (pid "
            ))
            && message.ends_with("; wait for it to finish or stop it first"),
        "{message}"
    );

    // Other runs are not affected.
    let other_lock = store.lock_run(other).await.expect("another run");

    drop(lock);
    let again = store
        .lock_run(run)
        .await
        .expect("free once the guard is dropped");
    drop((again, other_lock));

    let unknown = RunId::new(other.get() + 1_000_000);
    assert!(matches!(
        store.lock_run(unknown).await,
        Err(StoreError::UnknownRun { run, .. }) if run == unknown
    ));
}

// ---------------------------------------------------------------------------------------------
// A run lock held by another process: the test binary re-run as a child.

/// Set in a child that must hold a run lock: `<run id> <location>`.
const LOCK_HOLDER_ENV: &str = "ARBITER_STORE_LOCK_HOLDER";
/// What the child prints once it holds the lock.
const HOLDING: &str = "holding the run lock";

/// A child process holding a run lock; killed with SIGKILL when dropped, should the test fail.
pub struct LockHolder {
    pub child: Child,
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts this test binary, running only `test`, as a process that takes `run`'s lock on
/// `location` and holds it until killed; returns once it holds it.
pub fn spawn_lock_holder(test: &str, location: &str, run: RunId) -> LockHolder {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(LOCK_HOLDER_ENV, format!("{run} {location}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the lock holder");
    let stdout = child.stdout.take().unwrap();
    let holder = LockHolder { child };
    let mut seen = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // With one test thread, libtest prints "test NAME ... " without a newline before the
        // test runs, so the child's line follows it.
        if line.ends_with(HOLDING) {
            return holder;
        }
        seen.push(line);
    }
    panic!("the lock holder ended without taking the lock: {seen:?}");
}

/// In a child started by [`spawn_lock_holder`]: takes the lock and holds it until killed (never
/// returns). Elsewhere: returns at once.
pub async fn hold_lock_if_asked() {
    let Ok(task) = std::env::var(LOCK_HOLDER_ENV) else {
        return;
    };
    let (run, location) = task.split_once(' ').unwrap();
    let store = Store::open_existing(&Location::parse(location))
        .await
        .unwrap();
    let _lock = store
        .lock_run(RunId::new(run.parse().unwrap()))
        .await
        .expect("the child takes the lock");
    println!("{HOLDING}");
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// A child holds `run`'s lock: this process is refused, naming the child; SIGKILL the child, and
/// the run is free at once.
pub async fn a_killed_holder_frees_the_run_at_once(
    store: &Store,
    test: &str,
    location: &str,
    run: RunId,
) {
    let mut holder = spawn_lock_holder(test, location, run);
    match store.lock_run(run).await {
        Err(StoreError::RunBusy { holder: text, .. }) => {
            let child = format!("pid {} on host ", holder.child.id());
            assert!(text.starts_with(&child), "{text}");
        }
        other => panic!("expected RunBusy while the child holds the run, got {other:?}"),
    }
    holder.child.kill().expect("SIGKILL the holder");
    let status = holder.child.wait().unwrap();
    assert!(!status.success(), "the holder was not killed: {status}");
    let lock = store
        .lock_run(run)
        .await
        .expect("the run is free as soon as its holder is dead");
    drop(lock);
}

/// Step `s` of [`tuning_steps_are_kept_exactly_once`]: `pairs` pairs whose counts are a
/// function of `s`, and JSON that names the step.
pub fn tuning_step(s: u64, pairs: u64) -> arbiter_store::TuningStep {
    let mut totals = Totals::default();
    for k in 0..pairs {
        let [a, b] = [0, 1].map(|g| score(s * 100 + k, g));
        totals.add(PairTally {
            wins: u8::from(a == 2) + u8::from(b == 2),
            draws: u8::from(a == 1) + u8::from(b == 1),
            losses: u8::from(a == 0) + u8::from(b == 0),
            penta: a + b,
        });
    }
    arbiter_store::TuningStep {
        step: s,
        iteration: s * pairs,
        totals,
        perturbation: format!("{{\"step\":{s},\"flips\":[1,-1]}}"),
        theta: format!("[{}.5,-0.25]", 300 + s),
    }
}

/// A tuning run keeps its set-up and each step exactly once: a replayed step changes nothing,
/// a step that skips one, counts that are not games, a match run and a finished run are
/// refused with nothing written.
pub async fn tuning_steps_are_kept_exactly_once(store: &Store) {
    use arbiter_store::{TuningMethod, TuningSetup};

    let mut spec = spec(&unique("spsa"), 12);
    spec.engines = vec!["tuned+".into(), "tuned-".into()];
    let setup = TuningSetup {
        method: TuningMethod::Spsa,
        setup: "{\"params\":[\"knight_mg\"],\"hyper\":{\"pairs\":12}} ünï".into(),
    };
    let run = store.create_tuning_run(&spec, &setup).await.unwrap();
    assert_eq!(store.run(run).await.unwrap().spec, spec);
    assert_eq!(store.tuning_setup(run).await.unwrap(), Some(setup.clone()));
    assert!(store.tuning_steps(run).await.unwrap().is_empty());
    // Its name is a run name like any other.
    assert!(matches!(
        store.create_tuning_run(&spec, &setup).await,
        Err(StoreError::DuplicateRunName { existing, .. }) if existing == run
    ));

    for s in 0..3 {
        let step = tuning_step(s, 4);
        assert_eq!(
            store.commit_step(run, &step).await.unwrap(),
            Committed::Inserted
        );
    }
    // A replay of step 1 with other results (a killed step played again) changes nothing.
    let mut replay = tuning_step(1, 4);
    replay.theta = "[0.0,0.0]".into();
    assert_eq!(
        store.commit_step(run, &replay).await.unwrap(),
        Committed::AlreadyPresent
    );
    let read: Vec<_> = store
        .tuning_steps(run)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.step)
        .collect();
    assert_eq!(read, (0..3).map(|s| tuning_step(s, 4)).collect::<Vec<_>>());

    let refused = |e: Result<Committed, StoreError>| match e {
        Err(StoreError::InvalidStep { reason, .. }) => reason,
        other => panic!("expected InvalidStep, got {other:?}"),
    };
    let gap = refused(store.commit_step(run, &tuning_step(4, 4)).await);
    assert!(gap.contains("the next is step 3"), "{gap}");
    let mut bad = tuning_step(3, 4);
    bad.totals.draws += 1;
    let counts = refused(store.commit_step(run, &bad).await);
    assert!(
        counts.contains("are not the 8 games of 4 pairs"),
        "{counts}"
    );
    let mut bad = tuning_step(3, 4);
    bad.totals.pentanomial[0] += 1;
    refused(store.commit_step(run, &bad).await);
    let empty = refused(store.commit_step(run, &tuning_step(3, 0)).await);
    assert!(empty.contains("at least one pair"), "{empty}");
    assert_eq!(store.tuning_steps(run).await.unwrap().len(), 3);

    // A match is not a tuning run.
    let a_match = store
        .create_run(&self::spec(&unique("match"), 4))
        .await
        .unwrap();
    assert_eq!(store.tuning_setup(a_match).await.unwrap(), None);
    let not_tuning = refused(store.commit_step(a_match, &tuning_step(0, 1)).await);
    assert!(not_tuning.contains("is not a tuning run"), "{not_tuning}");
    assert!(store.tuning_steps(a_match).await.unwrap().is_empty());

    // A finished tuning run takes no more steps; an unknown run is named as such.
    store.finish_run(run, RunOutcome::Complete).await.unwrap();
    assert!(matches!(
        store.commit_step(run, &tuning_step(3, 4)).await,
        Err(StoreError::RunFinished { .. })
    ));
    assert_eq!(store.tuning_steps(run).await.unwrap().len(), 3);
    let unknown = RunId::new(i64::MAX);
    assert!(matches!(
        store.tuning_steps(unknown).await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert!(matches!(
        store.tuning_setup(unknown).await,
        Err(StoreError::UnknownRun { .. })
    ));
}

/// Issue 19: a run stored before the store kept facts (schema 6) or confirmation links gains
/// them in place, once. What is stored already (facts decided when a run was created, a link)
/// is never overwritten, on a running or a finished run; an unknown run is an error.
pub async fn older_runs_gain_facts_and_links_once(store: &Store) {
    let older = spec(&unique("pre-6"), 4);
    assert_eq!(
        older.facts, None,
        "a head-to-head spec is stored without facts"
    );
    let run = store.create_run(&older).await.unwrap();
    let facts = round_robin("x").facts.unwrap();
    let other = RunFacts {
        games_planned: 1234,
        ..facts.clone()
    };
    assert!(store.fill_facts(run, &facts).await.unwrap());
    assert_eq!(
        store.run(run).await.unwrap().spec.facts,
        Some(facts.clone())
    );
    assert!(!store.fill_facts(run, &other).await.unwrap());
    assert_eq!(
        store.run(run).await.unwrap().spec.facts,
        Some(facts.clone())
    );

    // A run created with facts keeps them; so does a finished one.
    let current = store
        .create_run(&round_robin(&unique("current")))
        .await
        .unwrap();
    store
        .finish_run(current, RunOutcome::Complete)
        .await
        .unwrap();
    assert!(!store.fill_facts(current, &other).await.unwrap());
    assert_eq!(store.run(current).await.unwrap().spec.facts, Some(facts));
    // A finished older run is upgraded as well: reports read finished runs.
    let finished = store
        .create_run(&spec(&unique("pre-6-done"), 2))
        .await
        .unwrap();
    store
        .finish_run(finished, RunOutcome::Complete)
        .await
        .unwrap();
    assert!(store.fill_facts(finished, &other).await.unwrap());
    assert_eq!(
        store.run(finished).await.unwrap().spec.facts,
        Some(other.clone())
    );

    // A confirmation stored without its link gains it once; the link then finds it.
    let tuning = store.create_run(&spec(&unique("tuning"), 2)).await.unwrap();
    let confirmation = store
        .create_run(&spec(&unique("confirm"), 2))
        .await
        .unwrap();
    assert!(store.confirmations(tuning).await.unwrap().is_empty());
    assert!(store.link_confirmation(confirmation, tuning).await.unwrap());
    let linked: Vec<RunId> = store
        .confirmations(tuning)
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(linked, [confirmation]);
    assert!(!store.link_confirmation(confirmation, run).await.unwrap());
    assert_eq!(
        store.run(confirmation).await.unwrap().spec.confirms,
        Some(tuning)
    );
    assert!(store.confirmations(run).await.unwrap().is_empty());
    assert!(store.link_confirmation(tuning, tuning).await.is_err());

    let unknown = RunId::new(i64::MAX - 3);
    assert!(matches!(
        store.fill_facts(unknown, &other).await,
        Err(StoreError::UnknownRun { run, .. }) if run == unknown
    ));
    assert!(matches!(
        store.link_confirmation(unknown, tuning).await,
        Err(StoreError::UnknownRun { run, .. }) if run == unknown
    ));
}
