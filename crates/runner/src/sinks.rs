//! The sinks of the play step: what happens to each finished pair.
//!
//! [`run_match`] is the store's sink: it commits each pair with its PGN and tally in one
//! transaction, reads the totals back, judges the SPRT and stops on its decision. By default
//! ([`SprtJudge::Prefix`]) the SPRT is judged on the verdict's prefix, the first pairs of the
//! schedule with none missing, as the fleet judges a queued run, so that the verdict and the
//! pairs it rests on do not depend on which game finished first; `judge = "all"` judges every
//! committed pair, as cutechess and fastchess do. The prefix is a function of the stored pairs,
//! re-derived from them on resume, so a run killed at any instant resumes from exactly what the
//! store holds. [`tally_pairs`] is the tuner's: it counts the pairs asked for, with no store,
//! files or SPRT.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arbiter_stats::{SprtState, SprtStatus};
use arbiter_store::{
    Committed, GameResult, GameRow, PairTally, Prefix, RunId, RunState, Store, Totals,
};
use futures_util::future::BoxFuture;
use futures_util::TryStreamExt;
use tokio::sync::{mpsc, watch};

use crate::play::{play, play_with, End, Event, Flow, MatchError, PairSink, PlayedPair, Players};
use crate::spec::{MatchSpec, PlaySpec, SprtJudge};
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
    /// Every committed pair's.
    pub totals: Totals,
    /// The SPRT's status on the pairs it is judged on: [`Summary::judged`].
    pub sprt: Option<SprtStatus>,
    /// The pairs the SPRT was judged on, where they are not all the committed pairs: the
    /// verdict's prefix, with pairs committed beyond it (finished early at concurrency > 1,
    /// or past a gap) left out. `None` when the SPRT saw every committed pair.
    pub judged: Option<Prefix>,
    pub verdict: Verdict,
    /// Games played to the end whose pair was not complete when the match stopped without a
    /// verdict (a fault under `recover = false`, a stop from outside), in game order: the
    /// faulted game among them. The store counts pairs only, so it does not hold them and
    /// resuming replays their pairs; the console showed them, and the exports keep them, marked
    /// as not counted. After a verdict there are none: the result is the committed pairs.
    pub uncounted: Vec<GameRow>,
}

/// The verdict's prefix as pairs come in, in any order: the first schedule units with none
/// missing and their totals, walked forward as the missing unit arrives, with a decision asked
/// after each unit it gains (the store's `advance_prefix` does the same for a queued run in SQL).
/// Once decided it stops: the verdict rests on the units up to the deciding one, whatever
/// arrives after.
#[derive(Clone, Debug, Default)]
pub struct VerdictPrefix {
    pub prefix: Prefix,
    /// Units taken beyond the prefix, waiting for the gap before them to close.
    waiting: BTreeMap<u64, PairTally>,
    decided: bool,
}

impl VerdictPrefix {
    /// Takes unit `unit`'s tally (a unit taken before is ignored) and walks the prefix as far
    /// as the units taken allow, asking `decides` after each unit gained; true once it decided.
    pub fn take(
        &mut self,
        unit: u64,
        tally: PairTally,
        decides: &mut dyn FnMut(&Totals) -> Result<bool, MatchError>,
    ) -> Result<bool, MatchError> {
        if unit >= self.prefix.units {
            self.waiting.entry(unit).or_insert(tally);
        }
        while !self.decided {
            let Some(next) = self.waiting.remove(&self.prefix.units) else {
                break;
            };
            self.prefix.totals.add(next);
            self.prefix.units += 1;
            self.decided = decides(&self.prefix.totals)?;
        }
        Ok(self.decided)
    }

    /// Units taken that the prefix does not hold: past a gap, or after the decision.
    pub fn beyond(&self) -> u64 {
        self.waiting.len() as u64
    }
}

/// The store's sink: commits each pair with its games and tally in one transaction, reads the
/// run's totals back, judges the SPRT (on the verdict's prefix, or on every committed pair with
/// `judge = "all"`) and stops on a decision. Each commit is announced as
/// [`Event::PairCommitted`], which is what the console's pair lines are printed from. It asks
/// nothing of where the pairs were played.
pub struct StoreSink<'a> {
    spec: &'a MatchSpec,
    store: &'a Store,
    run: RunId,
    events: &'a mpsc::UnboundedSender<Event>,
    /// The run's totals as stored after the last commit.
    pub totals: Totals,
    /// The SPRT's status on the pairs it is judged on.
    pub sprt: Option<SprtStatus>,
    /// The verdict's prefix, under [`SprtJudge::Prefix`].
    pub prefix: Option<VerdictPrefix>,
}

impl<'a> StoreSink<'a> {
    /// A sink into run `run` of `store`, whose totals are now `totals` and whose committed
    /// pairs are `committed` (schedule unit and tally, in any order), the verdict's prefix
    /// re-derived from them.
    pub fn new(
        spec: &'a MatchSpec,
        store: &'a Store,
        run: RunId,
        events: &'a mpsc::UnboundedSender<Event>,
        totals: Totals,
        committed: impl IntoIterator<Item = (u64, PairTally)>,
    ) -> Result<StoreSink<'a>, MatchError> {
        let mut sink = StoreSink {
            sprt: None,
            prefix: None,
            spec,
            store,
            run,
            events,
            totals,
        };
        match spec.judge {
            SprtJudge::All => sink.sprt = sprt_status(spec, &totals)?,
            SprtJudge::Prefix => {
                let mut prefix = VerdictPrefix::default();
                let mut sprt = None;
                for (unit, tally) in committed {
                    prefix.take(unit, tally, &mut judging(spec, &mut sprt))?;
                }
                sink.sprt = sprt;
                sink.prefix = Some(prefix);
            }
        }
        Ok(sink)
    }

    /// The verdict's prefix where it is not every committed pair.
    pub fn judged(&self) -> Option<Prefix> {
        self.prefix
            .as_ref()
            .map(|p| p.prefix)
            .filter(|p| p.totals != self.totals)
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
        match &mut self.prefix {
            None => self.sprt = sprt_status(self.spec, &self.totals)?,
            // A pair already present was taken when the prefix was derived from the store.
            Some(prefix) => {
                prefix.take(
                    pair.pair,
                    record.tally,
                    &mut judging(self.spec, &mut self.sprt),
                )?;
            }
        }
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

/// A decision asked of the SPRT on a prefix's totals, keeping their status in `sprt`.
fn judging<'s>(
    spec: &'s MatchSpec,
    sprt: &'s mut Option<SprtStatus>,
) -> impl FnMut(&Totals) -> Result<bool, MatchError> + 's {
    move |totals| {
        *sprt = sprt_status(spec, totals)?;
        Ok(sprt.is_some_and(|s| s.state != SprtState::Continue))
    }
}

/// The committed pairs of `run`: schedule unit and tally, what the verdict's prefix is
/// re-derived from when a run resumes.
async fn stored_units(
    spec: &MatchSpec,
    store: &Store,
    run: RunId,
) -> Result<Vec<(u64, PairTally)>, MatchError> {
    Ok(store
        .pairs_in_commit_order(run)
        .map_ok(|pair| {
            let key = pair.key;
            (spec.unit_of(key.pairing as usize, key.index), pair.tally)
        })
        .try_collect()
        .await?)
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
    let stored = stored_units(&spec, &store, run).await?;
    let committed: BTreeSet<u64> = stored.iter().map(|&(unit, _)| unit).collect();
    let totals = store.totals(run).await?;
    let mut sink = StoreSink::new(&spec, &store, run, &events, totals, stored)?;
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
            judged: sink.judged(),
            verdict,
            uncounted: Vec::new(),
        });
    }
    if let Some(state) = sink.decision() {
        return Ok(Summary {
            totals,
            sprt: sink.sprt,
            judged: sink.judged(),
            verdict: Verdict::Accepted(state),
            uncounted: Vec::new(),
        });
    }

    // Under the drawn-game colour rule the next game's colours follow from the stored ones.
    if let Some(rule) = &spec.drawn_game_colours {
        let mut games = store.games(run);
        while let Some(game) = games.try_next().await? {
            let row = game.game;
            if let Some(white) = spec.players.iter().position(|p| p.name == row.white) {
                rule.record(row.game_number, white, row.result == GameResult::Draw);
            }
        }
    }
    let missing = (0..spec.pairs).filter(move |unit| !committed.contains(unit));
    let ending = play(&spec.play, missing, &mut sink, &events, &mut cancel).await?;
    let verdict = match ending.end {
        // The last pair of the schedule may be the one that decides.
        End::Played => sink.decision().map_or(Verdict::Complete, Verdict::Accepted),
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
        judged: sink.judged(),
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
pub fn sprt_status(spec: &MatchSpec, totals: &Totals) -> Result<Option<SprtStatus>, MatchError> {
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

    use arbiter_store::{Location, PairKey, PairTally, RunSpec};
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

    /// A pair's tally: `w` wins, `l` losses, the rest draws.
    fn tally(w: u8, l: u8) -> PairTally {
        PairTally {
            wins: w,
            draws: 2 - w - l,
            losses: l,
            penta: 2 + w - l,
        }
    }

    /// The prefix over pairs that finish out of order: it holds only the first units with none
    /// missing, a late unit closes the gap and carries the prefix over everything waiting
    /// behind it, a decision is asked after each unit gained and freezes the prefix at the
    /// deciding unit, and a unit taken twice counts once. The oracle is the same units summed
    /// in schedule order.
    #[test]
    fn the_prefix_holds_the_first_units_whatever_order_they_finish_in() {
        // Unit u's result: a win for units divisible by 3, a loss for 4, else a draw.
        let result = |u: u64| match u {
            u if u % 3 == 0 => tally(2, 0),
            4 => tally(0, 2),
            _ => tally(1, 1),
        };
        let in_order = |n: u64| {
            let mut totals = Totals::default();
            (0..n).for_each(|u| totals.add(result(u)));
            totals
        };
        let mut prefix = VerdictPrefix::default();
        let mut asked = Vec::new();
        let mut never = |t: &Totals| {
            asked.push(t.pairs);
            Ok(false)
        };
        for (unit, units_after) in [(2, 0), (1, 0), (4, 0), (2, 0), (0, 3), (3, 5), (6, 5)] {
            assert!(!prefix.take(unit, result(unit), &mut never).unwrap());
            assert_eq!(prefix.prefix.units, units_after, "after unit {unit}");
            assert_eq!(prefix.prefix.totals, in_order(units_after));
        }
        assert_eq!(prefix.beyond(), 1, "unit 6 waits for unit 5");
        assert_eq!(
            asked,
            [1, 2, 3, 4, 5],
            "asked once per unit gained, in order"
        );

        // Decided when the prefix holds 7 units: unit 7 waiting behind the gap at 5 is not
        // judged, nor is anything that comes after.
        let mut at_seven = |t: &Totals| Ok(t.pairs == 7);
        assert!(!prefix.take(7, result(7), &mut at_seven).unwrap());
        assert!(!prefix.take(8, result(8), &mut at_seven).unwrap());
        assert!(prefix.take(5, result(5), &mut at_seven).unwrap());
        assert_eq!(prefix.prefix.units, 7);
        assert_eq!(prefix.prefix.totals, in_order(7));
        assert!(prefix.take(9, result(9), &mut at_seven).unwrap());
        assert_eq!(prefix.prefix.units, 7, "a decided prefix does not move");
        assert_eq!(prefix.beyond(), 3, "units 7, 8 and 9 are beyond it");
    }

    /// A sink that keeps the pairs it is handed.
    #[derive(Default)]
    struct KeepPairs(Vec<PlayedPair>);

    impl PairSink for KeepPairs {
        async fn take(&mut self, pair: PlayedPair) -> Result<Flow, MatchError> {
            self.0.push(pair);
            Ok(Flow::Continue)
        }
    }

    /// The store's sink, handed real pairs out of order (1, 0, 3, 2, 5, 4, as games at
    /// concurrency > 1 may finish): by default its SPRT status after each commit is the one of
    /// the pairs 0 to k-1 it holds, computed afresh from them in schedule order, and the
    /// summary names that prefix while pairs beyond it are stored; under `judge = "all"` it is
    /// the status of every committed pair. A sink made afresh from the stored pairs (a resumed
    /// run) judges the same at every step.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_store_sink_judges_the_prefix_of_pairs_that_finish_out_of_order() {
        let play_spec = Arc::new(PlaySpec {
            concurrency: 1,
            ..test_spec(6)
        });
        let mut kept = KeepPairs::default();
        let (events, _received) = mpsc::unbounded_channel();
        let (_cancel, mut cancelled) = watch::channel(false);
        play(&play_spec, 0..6, &mut kept, &events, &mut cancelled)
            .await
            .unwrap();
        let order = [1, 0, 3, 2, 5, 4];
        for judge in [SprtJudge::Prefix, SprtJudge::All] {
            let spec = MatchSpec {
                play: play_spec.clone(),
                // Bounds wide enough that six pairs decide nothing: every commit is judged.
                sprt: Some(
                    arbiter_stats::Sprt::new(
                        0.05,
                        0.05,
                        -400.0,
                        400.0,
                        arbiter_stats::EloModel::Logistic,
                    )
                    .unwrap(),
                ),
                judge,
                warnings: Vec::new(),
            };
            let dir = tempfile::tempdir().unwrap();
            let (store, run) = store_with_run(&dir, "out-of-order", 6).await;
            let mut sink =
                StoreSink::new(&spec, &store, run, &events, Totals::default(), []).unwrap();
            let mut taken = Vec::new();
            for unit in order {
                let pair = kept.0.iter().find(|p| p.pair == unit).unwrap().clone();
                taken.push(unit);
                assert_eq!(sink.take(pair).await.unwrap(), Flow::Continue);
                let mut judged = Totals::default();
                let mut units = 0;
                for pair in &kept.0 {
                    let in_prefix = (0..=pair.pair).all(|u| taken.contains(&u));
                    if judge == SprtJudge::All && taken.contains(&pair.pair) || in_prefix {
                        judged.add(pair.tally());
                        units += 1;
                    }
                }
                assert_eq!(
                    sink.sprt,
                    sprt_status(&spec, &judged).unwrap(),
                    "{judge:?} after units {taken:?}"
                );
                let expected =
                    (judge == SprtJudge::Prefix && judged != sink.totals).then_some(Prefix {
                        units,
                        totals: judged,
                    });
                assert_eq!(sink.judged(), expected, "{judge:?} after units {taken:?}");
                // A resumed run's sink, from what the store holds, judges the same.
                let stored = stored_units(&spec, &store, run).await.unwrap();
                let totals = store.totals(run).await.unwrap();
                let resumed = StoreSink::new(&spec, &store, run, &events, totals, stored).unwrap();
                assert_eq!(resumed.sprt, sink.sprt, "resumed after units {taken:?}");
                assert_eq!(resumed.judged(), sink.judged(), "resumed after {taken:?}");
            }
            assert_eq!(sink.totals.pairs, 6);
            assert!(sink.judged().is_none(), "all six: the prefix is every pair");
        }
    }

    /// Pair `index` of a match: its run's one pairing.
    fn key(index: u64) -> PairKey {
        PairKey { pairing: 0, index }
    }
}
