//! The sinks of the play step: what happens to each finished pair.
//!
//! [`run_match`] is the store's sink: it commits each pair with its PGN and tally in one
//! transaction, reads the totals back, recomputes the LLR from them and stops on the SPRT's
//! decision. Nothing is counted in memory, so a run killed at any instant resumes from exactly
//! what the store holds. [`tally_pairs`] is the tuner's: it counts the pairs asked for, with no
//! store, files or SPRT.

use std::collections::BTreeSet;
use std::sync::Arc;

use arbiter_stats::{SprtState, SprtStatus};
use arbiter_store::{Committed, GameRow, RunId, RunState, Store, Totals};
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, watch};

use crate::play::{play, play_with, End, Event, Flow, MatchError, PairSink, PlayedPair, Players};
use crate::spec::{MatchSpec, PlaySpec};
use arbiter_store::RunOutcome;

/// How a match ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The SPRT accepted H1 (or H0).
    Accepted(SprtState),
    /// Every pair was played without an SPRT decision (or without an SPRT).
    Complete,
    /// Stopped from outside (Ctrl-C); resumable.
    Interrupted,
    /// An engine crashed or stalled under `recover = false`; resumable.
    Fault(String),
}

impl Verdict {
    /// The verdict as the records and the store name it.
    pub fn outcome(&self) -> RunOutcome {
        match self {
            Verdict::Accepted(SprtState::H1) => RunOutcome::H1,
            Verdict::Accepted(SprtState::H0) => RunOutcome::H0,
            Verdict::Accepted(SprtState::Continue) | Verdict::Complete => RunOutcome::Complete,
            Verdict::Interrupted => RunOutcome::Interrupted,
            Verdict::Fault(_) => RunOutcome::Stopped,
        }
    }

    /// The text the store records and the summary prints.
    pub fn as_str(&self) -> &'static str {
        self.outcome().as_str()
    }
}

/// The end of a match.
#[derive(Clone, Debug)]
pub struct Summary {
    pub totals: Totals,
    pub sprt: Option<SprtStatus>,
    pub verdict: Verdict,
    /// Games played to the end whose pair was not complete when the match stopped without a
    /// verdict (a fault under `recover = false`, a stop from outside), in game order: the
    /// faulted game among them. The store counts pairs only, so it does not hold them and
    /// resuming replays their pairs; the console showed them, and the exports keep them, marked
    /// as not counted. After a verdict there are none: the result is the committed pairs.
    pub uncounted: Vec<GameRow>,
}

/// The store's sink: commits each pair with its games and tally in one transaction, reads the
/// run's totals back, recomputes the SPRT from them and stops on a decision. Each commit is
/// announced as [`Event::PairCommitted`], which is what the console's pair lines are printed
/// from. It asks nothing of where the pairs were played.
pub struct StoreSink<'a> {
    spec: &'a MatchSpec,
    store: &'a Store,
    run: RunId,
    events: &'a mpsc::UnboundedSender<Event>,
    /// The run's totals as stored after the last commit, and their SPRT status.
    pub totals: Totals,
    pub sprt: Option<SprtStatus>,
}

impl<'a> StoreSink<'a> {
    /// A sink into run `run` of `store`, whose totals are now `totals`.
    pub fn new(
        spec: &'a MatchSpec,
        store: &'a Store,
        run: RunId,
        events: &'a mpsc::UnboundedSender<Event>,
        totals: Totals,
    ) -> Result<StoreSink<'a>, MatchError> {
        Ok(StoreSink {
            sprt: sprt_status(spec, &totals)?,
            spec,
            store,
            run,
            events,
            totals,
        })
    }

    /// The SPRT's decision on the stored totals, if it made one.
    pub fn decision(&self) -> Option<SprtState> {
        self.sprt
            .map(|status| status.state)
            .filter(|&state| state != SprtState::Continue)
    }
}

impl PairSink for StoreSink<'_> {
    async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
        let record = Arc::new(pair.record(self.spec, self.run));
        let committed = self.store.commit_pair(&record).await?;
        self.totals = self.store.totals(self.run).await?;
        self.sprt = sprt_status(self.spec, &self.totals)?;
        let pairings = match self.spec.is_tournament() {
            true => Some(Arc::new(self.store.pairing_totals(self.run).await?)),
            false => None,
        };
        let _ = self.events.send(Event::PairCommitted {
            pair: pair.pair,
            record,
            totals: self.totals,
            sprt: self.sprt,
            pairings,
            already_present: committed == Committed::AlreadyPresent,
        });
        Ok(match self.decision() {
            Some(_) => Flow::Stop,
            None => Flow::Continue,
        })
    }
}

/// The tuner's sink: the pairs' totals in memory, with no store, files or SPRT.
#[derive(Debug, Default)]
pub struct TallySink {
    pub totals: Totals,
}

impl PairSink for TallySink {
    async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
        self.totals.add(pair.tally());
        Ok(Flow::Continue)
    }
}

/// Plays the pairs of `run` that the store does not hold yet, in schedule order, into the
/// [`StoreSink`]; the match stops when the SPRT decides. `cancel` turning true stops the match
/// (games in flight are abandoned uncounted; the run stays resumable).
pub fn run_match(
    spec: Arc<MatchSpec>,
    store: Arc<Store>,
    run: RunId,
    events: mpsc::UnboundedSender<Event>,
    cancel: watch::Receiver<bool>,
) -> BoxFuture<'static, Result<Summary, MatchError>> {
    Box::pin(run_match_body(spec, store, run, events, cancel))
}

async fn run_match_body(
    spec: Arc<MatchSpec>,
    store: Arc<Store>,
    run: RunId,
    events: mpsc::UnboundedSender<Event>,
    mut cancel: watch::Receiver<bool>,
) -> Result<Summary, MatchError> {
    let committed: BTreeSet<u64> = store
        .committed_pairs(run)
        .await?
        .into_iter()
        .map(|key| spec.unit_of(key.pairing as usize, key.index))
        .collect();
    let totals = store.totals(run).await?;
    let mut sink = StoreSink::new(&spec, &store, run, &events, totals)?;
    // A finished run is closed: report its verdict again rather than play on.
    if let RunState::Finished { verdict } = store.run(run).await?.state {
        let verdict = match verdict {
            RunOutcome::H1 => Verdict::Accepted(SprtState::H1),
            RunOutcome::H0 => Verdict::Accepted(SprtState::H0),
            RunOutcome::Complete | RunOutcome::Interrupted | RunOutcome::Stopped => {
                Verdict::Complete
            }
        };
        return Ok(Summary {
            totals,
            sprt: sink.sprt,
            verdict,
            uncounted: Vec::new(),
        });
    }
    if let Some(state) = sink.decision() {
        return Ok(Summary {
            totals,
            sprt: sink.sprt,
            verdict: Verdict::Accepted(state),
            uncounted: Vec::new(),
        });
    }

    let missing = (0..spec.pairs).filter(move |unit| !committed.contains(unit));
    let ending = play(&spec.play, missing, &mut sink, &events, &mut cancel).await?;
    let verdict = match ending.end {
        End::Played => Verdict::Complete,
        End::Stopped => Verdict::Accepted(sink.decision().unwrap_or(SprtState::Continue)),
        End::Cancelled => Verdict::Interrupted,
        End::Fault(reason) => Verdict::Fault(reason),
    };
    // A verdict's result is its pairs: a game of a pair the verdict cut short was shown on the
    // console but belongs to no result, and the published PGN is the verdict's. A stop without
    // a verdict keeps such games (the faulted one among them) for the user to look at.
    let decided = matches!(verdict, Verdict::Accepted(_) | Verdict::Complete);
    let uncounted = if decided {
        Vec::new()
    } else {
        ending.unfinished
    };
    if decided {
        store.finish_run(run, verdict.outcome()).await?;
    }
    Ok(Summary {
        totals: sink.totals,
        sprt: sink.sprt,
        verdict,
        uncounted,
    })
}

/// Plays `pairs` of `spec` (indices below `spec.pairs`) into a [`TallySink`] with `players`
/// (kept for the next call, see [`Players`]) and returns their totals. What a tuner needs: "play these pairs and hand me the outcomes". An engine fault
/// under `recover = false` is an error here.
pub fn tally_pairs<'a>(
    spec: Arc<PlaySpec>,
    pairs: &'a BTreeSet<u64>,
    players: &'a Arc<Players>,
    events: mpsc::UnboundedSender<Event>,
) -> BoxFuture<'a, Result<Totals, MatchError>> {
    Box::pin(tally_pairs_body(spec, pairs, players, events))
}

async fn tally_pairs_body(
    spec: Arc<PlaySpec>,
    pairs: &BTreeSet<u64>,
    players: &Arc<Players>,
    events: mpsc::UnboundedSender<Event>,
) -> Result<Totals, MatchError> {
    let mut sink = TallySink::default();
    // Nothing cancels a tally but its caller dropping it.
    let (_never, mut cancel) = watch::channel(false);
    let units: Vec<u64> = pairs.iter().copied().collect();
    let ending = play_with(&spec, units, &mut sink, players, &events, &mut cancel).await?;
    match ending.end {
        End::Fault(reason) => Err(MatchError::Fault(reason)),
        End::Played | End::Stopped | End::Cancelled => Ok(sink.totals),
    }
}

/// The SPRT verdict of the totals as stored, recomputed from scratch every time; none before
/// the first pair or without an SPRT.
pub(crate) fn sprt_status(
    spec: &MatchSpec,
    totals: &Totals,
) -> Result<Option<SprtStatus>, MatchError> {
    let Some(sprt) = spec.sprt.as_ref().filter(|_| totals.pairs > 0) else {
        return Ok(None);
    };
    Ok(Some(sprt.status(&spec.sample(totals))?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::Ordering;

    use arbiter_store::{Location, PairKey, RunSpec};
    use futures_util::StreamExt;

    use crate::play::tests::DIE_AT_PAIR;
    use crate::spec::tests::test_spec;

    /// A store in a temporary folder, with one match run of `pairs` pairs.
    async fn store_with_run(
        dir: &tempfile::TempDir,
        name: &str,
        pairs: u64,
    ) -> (Arc<Store>, RunId) {
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Arc::new(Store::open(&location).await.unwrap());
        let run = store
            .create_run(&RunSpec::head_to_head(
                name.into(),
                1,
                String::new(),
                "dev".into(),
                "base".into(),
                pairs,
            ))
            .await
            .unwrap();
        (store, run)
    }

    /// A PGN without what the clock of the machine that played it wrote: its `Date` tag and
    /// the times in its move comments (`{+0.29/2 0.006s}` reads `{+0.29/2 _s}`), with its
    /// lines joined (a time's width moves the line breaks). The moves, evaluations, depths,
    /// tags and result stay.
    fn untimed(pgn: &str) -> String {
        let text: Vec<&str> = pgn
            .lines()
            .filter(|line| !line.starts_with("[Date "))
            .flat_map(str::split_whitespace)
            .collect();
        text.iter()
            .map(|word| {
                let time = word.trim_end_matches([',', '}']);
                let seconds = time.strip_suffix('s').filter(|t| t.parse::<f64>().is_ok());
                match seconds {
                    Some(_) => word.replacen(time, "_s", 1),
                    None => (*word).to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A sink of a fleet's kind: it keeps what it is handed, in the order handed.
    #[derive(Default)]
    struct Keep {
        pairs: Vec<u64>,
        pgn: BTreeMap<u64, String>,
    }

    impl PairSink for Keep {
        async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
            self.pairs.push(pair.pair);
            for game in &pair.games {
                assert_eq!(game.pair, pair.pair);
                self.pgn.insert(game.number, game.pgn.clone());
            }
            Ok(Flow::Continue)
        }
    }

    /// Issue 19: pairs 5, 2 and 9 of a fixed-node run, played alone, in that order, through a
    /// sink of the test's own, are the very games a whole run of the same spec stored for
    /// those pairs: seats and openings are functions of (seed, pair), not of what else was
    /// played or in which order. (Only the times the clock measured differ.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pairs_played_alone_are_the_games_a_whole_run_stores() {
        let spec = Arc::new(PlaySpec {
            concurrency: 1,
            ..test_spec(10)
        });
        let mut keep = Keep::default();
        let (events, _received) = mpsc::unbounded_channel();
        let (_cancel, mut cancelled) = watch::channel(false);
        let ending = play(&spec, [5, 2, 9], &mut keep, &events, &mut cancelled)
            .await
            .unwrap();
        assert_eq!(ending.end, End::Played);
        assert!(ending.unfinished.is_empty());
        assert_eq!(
            keep.pairs,
            [5, 2, 9],
            "one game at a time: in the order asked"
        );
        assert_eq!(
            keep.pgn.keys().copied().collect::<Vec<_>>(),
            [5, 6, 11, 12, 19, 20]
        );

        let whole = Arc::new(MatchSpec::new(PlaySpec {
            concurrency: 3,
            ..test_spec(10)
        }));
        let dir = tempfile::tempdir().unwrap();
        let (store, run) = store_with_run(&dir, "whole", 10).await;
        let (_cancel, cancelled) = watch::channel(false);
        let summary = run_match(whole, store.clone(), run, events, cancelled)
            .await
            .unwrap();
        assert_eq!(summary.verdict, Verdict::Complete);
        let mut stored = BTreeMap::new();
        let mut games = store.games(run);
        while let Some(game) = games.next().await {
            let game = game.unwrap();
            if [5, 2, 9].contains(&game.pair_index) {
                stored.insert(game.game.game_number, game.game.pgn);
            }
        }
        assert_eq!(stored.len(), 6);
        // What is compared tells games apart: the two games of a pair differ.
        assert_ne!(untimed(&stored[&5]), untimed(&stored[&6]));
        for (number, pgn) in &keep.pgn {
            assert!(pgn.contains(&format!("[GameNumber \"{number}\"]")), "{pgn}");
            assert_eq!(untimed(pgn), untimed(&stored[number]), "game {number}");
        }
    }

    /// The tally sink plays exactly the pairs asked for, with the results the store sink
    /// commits for the same pairs (in-process games at a node limit are deterministic).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_tally_sink_counts_what_the_store_sink_commits() {
        let spec = Arc::new(test_spec(4));
        let tally = |pairs: &[u64]| {
            let spec = spec.clone();
            let pairs: BTreeSet<u64> = pairs.iter().copied().collect();
            async move {
                let (events, mut received) = mpsc::unbounded_channel();
                let players = Arc::new(Players::default());
                let totals = tally_pairs(spec, &pairs, &players, events).await.unwrap();
                players.shutdown().await;
                let mut played = BTreeSet::new();
                while let Ok(event) = received.try_recv() {
                    if let Event::GameFinished { pair, .. } = event {
                        played.insert(pair);
                    }
                }
                assert_eq!(played, pairs, "exactly the pairs asked for");
                totals
            }
        };
        let mut odd_and_even = tally(&[1, 3]).await;
        let even = tally(&[0, 2]).await;
        assert_eq!(odd_and_even.pairs, 2);
        for (i, count) in even.pentanomial.iter().enumerate() {
            odd_and_even.pentanomial[i] += count;
        }
        odd_and_even.pairs += even.pairs;
        odd_and_even.wins += even.wins;
        odd_and_even.draws += even.draws;
        odd_and_even.losses += even.losses;

        let dir = tempfile::tempdir().unwrap();
        let (store, run) = store_with_run(&dir, "both", 4).await;
        let (events, _received) = mpsc::unbounded_channel();
        let (_cancel, cancelled) = watch::channel(false);
        let spec = Arc::new(MatchSpec::new((*spec).clone()));
        let summary = run_match(spec, store, run, events, cancelled)
            .await
            .unwrap();
        assert_eq!(summary.totals, odd_and_even);
    }

    /// A worker that dies must not make the run complete with pairs missing: the error names the
    /// pair, the store still says running, and a rerun plays exactly what is missing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_that_dies_leaves_the_run_resumable() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Arc::new(Store::open(&location).await.unwrap());
        let run = store
            .create_run(&RunSpec::head_to_head(
                "dies".into(),
                1,
                String::new(),
                "dev".into(),
                "base".into(),
                6,
            ))
            .await
            .unwrap();
        let spec = Arc::new(MatchSpec::new(PlaySpec {
            event: crate::play::tests::DYING_EVENT.into(),
            ..test_spec(6)
        }));
        let play = |spec: Arc<MatchSpec>| {
            let store = store.clone();
            async move {
                let (events, _received) = mpsc::unbounded_channel();
                let (_cancel, cancelled) = watch::channel(false);
                run_match(spec, store, run, events, cancelled).await
            }
        };
        DIE_AT_PAIR.store(3, Ordering::SeqCst);
        let err = play(spec.clone()).await.unwrap_err();
        DIE_AT_PAIR.store(u64::MAX, Ordering::SeqCst);
        let text = err.to_string();
        assert!(
            matches!(err, MatchError::WorkerEnded { pair: 3, .. }),
            "{text}"
        );
        assert!(text.contains("panicked: test hook"), "{text}");
        assert_eq!(store.run(run).await.unwrap().state, RunState::Running);
        let committed = store.committed_pairs(run).await.unwrap();
        assert!(!committed.contains(&key(3)), "{committed:?}");

        let summary = play(spec).await.unwrap();
        assert_eq!(summary.verdict, Verdict::Complete);
        assert_eq!(summary.totals.pairs, 6);
        assert_eq!(
            store.committed_pairs(run).await.unwrap(),
            (0..6).map(key).collect::<BTreeSet<_>>()
        );
    }

    /// Pair `index` of a match: its run's one pairing.
    fn key(index: u64) -> PairKey {
        PairKey { pairing: 0, index }
    }
}
