//! Everything a report draws, read from the store once.

use std::collections::BTreeMap;

use arbiter_records::entries::{book_entry, GameEntry, MoveTime};
use arbiter_rules::Termination;
use arbiter_stats::{EloModel, Sprt};
use arbiter_store::{
    CommittedPair, GameResult, JudgedOn, Run, RunId, RunKind, Store, StoredGame, Totals, Upgrade,
};
use futures_util::TryStreamExt;

use crate::time::{Budget, EngineTimes, GameTimes};
use crate::ReportError;

/// What a report needs of one game: the store's row and its typed JSON record, without the
/// PGN or the move list.
#[derive(Clone, Debug, PartialEq)]
pub struct GameFacts {
    /// Its number in the run, from 1, as the PGN's `Round` and the JSON lines give it; 0 for a
    /// game whose record lacks it.
    pub number: u64,
    /// The pairing of its pair and the pair's index within it.
    pub pairing: u32,
    pub pair_index: u64,
    /// 0 or 1 within the pair.
    pub game_index: u8,
    pub white: String,
    pub black: String,
    pub result: GameResult,
    /// PGN's `Termination`: `normal`, `adjudication`, `time forfeit` ...
    pub termination: String,
    pub plies: u32,
    /// Where the opening came from (`book.epd:12`); `#N` (its index in the book) for a game
    /// whose record lacks it.
    pub opening: String,
    /// The engines' moves and the milliseconds they took in all, from `go` to `bestmove`.
    pub engine_moves: usize,
    pub move_ms_total: f64,
    /// The lowest clock after a move of White's and of Black's; none without a clock (or a
    /// record that lacks clocks).
    pub lowest_clock_ms: [Option<i64>; 2],
    /// In a time forfeit, the engine whose flag fell (the side to move at the end).
    pub flagged: Option<String>,
    /// In a time forfeit, the move that overran the clock (records from before it was kept
    /// lack it).
    pub flagged_move: Option<MoveTime>,
}

/// A run as a report sees it.
#[derive(Clone, Debug)]
pub struct RunData {
    pub run: Run,
    /// The SPRT the run was played under; none for a fixed-length match or a tournament.
    pub sprt: Option<Sprt>,
    /// Which pairs its verdict was judged on.
    pub judged_on: JudgedOn,
    /// Played in colour-swapped pairs: the statistics are pentanomial, else trinomial.
    pub paired: bool,
    /// `match`, `round-robin` or `gauntlet`.
    pub kind: String,
    /// The games the schedule holds: twice the pairs, or unpaired the games asked for (an odd
    /// number's last round is a unit of one game).
    pub games_planned: u64,
    /// The pairs in the order they were committed (`sequence` 1, 2, 3 ...).
    pub pairs: Vec<CommittedPair>,
    /// The games in the runner's numbering.
    pub games: Vec<GameFacts>,
    pub totals: Totals,
    /// Indexed by pairing.
    pub pairing_totals: Vec<Totals>,
    /// Each engine's move times, by name, gathered as the games streamed by.
    pub times: BTreeMap<String, EngineTimes>,
    /// Each engine's clock, by name; none for engines limited by nodes, depth or time per move.
    pub budgets: BTreeMap<String, Budget>,
}

impl RunData {
    /// Reads run `run` from `store`: an unknown run is the store's `UnknownRun` error. Games
    /// are streamed and reduced to their facts as they come, so a 100,000-game run never holds
    /// its PGN in memory.
    ///
    /// What the run is (kind, model, SPRT, plan, clocks) comes from the facts stored when it
    /// was created, never from re-checking its stored configuration: a later arbiter that
    /// checks more strictly still reports every run it stored. A run created before the store
    /// kept facts (schema 6) is [`ReportError::NoFacts`] here: see [`RunData::load_with`].
    pub async fn load(store: &Store, run: RunId) -> Result<RunData, ReportError> {
        RunData::load_with(store, run, &Upgrade::default()).await
    }

    /// [`RunData::load`], with the facts of an older run that the store lacks supplied by the
    /// caller (`arbiter report` computes them from the stored configuration with
    /// `arbiter_runner::lifecycle::older_run_upgrade`, and stores them when it can write).
    /// Stored facts always win: they were decided when the run was created.
    pub async fn load_with(
        store: &Store,
        run: RunId,
        upgrade: &Upgrade,
    ) -> Result<RunData, ReportError> {
        let found = store.run(run).await?;
        let facts = upgrade
            .facts_of(&found)
            .cloned()
            .ok_or_else(|| ReportError::NoFacts {
                run: run.get(),
                name: found.spec.name.clone(),
            })?;
        let sprt = facts
            .sprt
            .as_ref()
            .map(|s| {
                let model = s
                    .model
                    .parse::<EloModel>()
                    .map_err(|e| ReportError::Facts {
                        run: run.get(),
                        reason: e.to_string(),
                    })?;
                Sprt::new(s.alpha, s.beta, s.elo0, s.elo1, model).map_err(|source| {
                    ReportError::Stats {
                        run: run.get(),
                        what: "its stored SPRT".into(),
                        source,
                    }
                })
            })
            .transpose()?;
        if facts.clocks.len() != found.spec.engines.len() {
            return Err(ReportError::Facts {
                run: run.get(),
                reason: format!(
                    "{} clock(s) for {} engines",
                    facts.clocks.len(),
                    found.spec.engines.len()
                ),
            });
        }
        let pairs: Vec<CommittedPair> = store.pairs_in_commit_order(run).try_collect().await?;
        let mut games = Vec::new();
        let mut times = BTreeMap::new();
        let mut stream = store.games(run);
        while let Some(stored) = stream.try_next().await? {
            games.push(GameFacts::from_stored(stored, &mut times));
        }
        drop(stream);
        let totals = store.totals(run).await?;
        let pairing_totals = store.pairing_totals(run).await?;
        let budgets = found
            .spec
            .engines
            .iter()
            .zip(&facts.clocks)
            .filter_map(|(name, clock)| Some((name.clone(), Budget::from((*clock)?))))
            .collect();
        Ok(RunData {
            run: found,
            sprt,
            judged_on: facts
                .sprt
                .as_ref()
                .map_or_else(JudgedOn::default, |s| s.judged_on),
            paired: facts.paired(),
            // The layout of the games: self-play and a tuning run are one pairing of two
            // engines, as their reports have always said.
            kind: match facts.kind {
                RunKind::Datagen | RunKind::Spsa => RunKind::Match,
                kind => kind,
            }
            .as_str()
            .to_owned(),
            games_planned: facts.games_planned,
            pairs,
            games,
            totals,
            pairing_totals,
            times,
            budgets,
        })
    }

    /// The run's engine names.
    pub fn engines(&self) -> &[String] {
        &self.run.spec.engines
    }

    /// More than one pairing: standings and a crosstable instead of one engine's Elo.
    pub fn is_tournament(&self) -> bool {
        self.run.spec.pairings.len() > 1
    }

    /// The names of pairing `pairing`'s engines, first (whose side the counts are from) first.
    pub fn pairing_names(&self, pairing: u32) -> Option<(&str, &str)> {
        let p = self.run.spec.pairings.get(pairing as usize)?;
        Some((
            self.run.spec.engines.get(p.first)?.as_str(),
            self.run.spec.engines.get(p.second)?.as_str(),
        ))
    }

    /// Each pair's games, by (pairing, index): what per-opening results are made of.
    pub fn games_by_pair(&self) -> BTreeMap<(u32, u64), Vec<&GameFacts>> {
        let mut by_pair: BTreeMap<(u32, u64), Vec<&GameFacts>> = BTreeMap::new();
        for game in &self.games {
            by_pair
                .entry((game.pairing, game.pair_index))
                .or_default()
                .push(game);
        }
        by_pair
    }
}

impl GameFacts {
    /// The facts of a stored game. Its JSON record is preferred for what the row lacks (the
    /// opening's name, move times); a row without a readable record (written before records were
    /// typed) still counts, with the book index as its opening. Its move times are added to
    /// `times` and not kept.
    fn from_stored(stored: StoredGame, times: &mut BTreeMap<String, EngineTimes>) -> GameFacts {
        let row = stored.game;
        let entry = serde_json::from_str::<GameEntry>(&row.json).ok();
        let game_times = entry
            .as_ref()
            .map(|e| GameTimes::gather(e, row.plies, times))
            .unwrap_or_default();
        let number = entry.as_ref().map_or(0, |e| e.game);
        let flagged_move = entry.as_ref().and_then(|e| e.flagged_move);
        let (opening, engine_moves, move_ms_total) = match entry {
            // The book line as the PGN's BookEntry names it (`quick.epd:34`), without the
            // folders of the machine that played it.
            Some(e) => (
                book_entry(&e.opening),
                e.move_ms.len(),
                e.move_ms.iter().sum(),
            ),
            None => (format!("#{}", row.opening_index), 0, 0.0),
        };
        let flagged = (row.termination == Termination::TimeForfeit.pgn_tag()).then(|| {
            match game_times.side_to_move_at_end(engine_moves) {
                0 => row.white.clone(),
                _ => row.black.clone(),
            }
        });
        GameFacts {
            number,
            pairing: stored.pairing,
            pair_index: stored.pair_index,
            game_index: stored.game_index,
            white: row.white,
            black: row.black,
            result: row.result,
            termination: row.termination,
            plies: row.plies,
            opening,
            engine_moves,
            move_ms_total,
            lowest_clock_ms: game_times.lowest_clock_ms,
            flagged,
            flagged_move,
        }
    }

    /// The points `engine` scored in this game (a win 1, a draw ½); `None` if it did not play.
    pub fn points_of(&self, engine: &str) -> Option<f64> {
        let white = match self.result {
            GameResult::WhiteWins => 1.0,
            GameResult::Draw => 0.5,
            GameResult::BlackWins => 0.0,
        };
        if self.white == engine {
            Some(white)
        } else if self.black == engine {
            Some(1.0 - white)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_store::{Clock, Location, RunFacts, RunSpec, SampleModel, SprtFacts};

    fn facts(model: &str) -> RunFacts {
        RunFacts {
            version: RunFacts::VERSION,
            kind: RunKind::Match,
            model: SampleModel::Trinomial,
            sprt: Some(SprtFacts {
                elo0: -1.0,
                elo1: 4.0,
                alpha: 0.1,
                beta: 0.05,
                model: model.into(),
                judged_on: JudgedOn::AllPairs,
            }),
            games_planned: 7,
            clocks: vec![
                Some(Clock {
                    moves: None,
                    base_ms: 8_000.0,
                    increment_ms: 80.0,
                    hourglass: false,
                }),
                None,
            ],
        }
    }

    async fn load(spec: RunSpec) -> Result<RunData, ReportError> {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Location::Sqlite(dir.path().join("runs.db")))
            .await
            .unwrap();
        let run = store.create_run(&spec).await.unwrap();
        RunData::load(&store, run).await
    }

    /// What a run is comes from its facts alone: its stored configuration text is not even read
    /// (here it is no configuration at all).
    #[tokio::test]
    async fn a_run_is_read_from_its_facts_not_its_configuration() {
        let spec = RunSpec::head_to_head(
            "r".into(),
            1,
            "not toml [".into(),
            "a".into(),
            "b".into(),
            4,
        )
        .with_facts(facts("logistic"));
        let data = load(spec).await.unwrap();
        let sprt = data.sprt.expect("the stored SPRT");
        assert_eq!(
            (sprt.elo0(), sprt.elo1(), sprt.alpha(), sprt.beta()),
            (-1.0, 4.0, 0.1, 0.05)
        );
        assert_eq!(sprt.model(), EloModel::Logistic);
        assert!(!data.paired);
        assert_eq!((data.kind.as_str(), data.games_planned), ("match", 7));
        assert_eq!(
            data.budgets.into_iter().collect::<Vec<_>>(),
            [(
                "a".to_owned(),
                Budget {
                    base_ms: 8_000.0,
                    increment_ms: 80.0,
                    moves: None
                }
            )]
        );
    }

    /// An older run's facts supplied by the caller are read as stored ones would be; facts the
    /// store holds win over supplied ones (they were decided when the run was created).
    #[tokio::test]
    async fn an_older_runs_facts_come_from_the_caller_and_stored_facts_win() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&Location::Sqlite(dir.path().join("runs.db")))
            .await
            .unwrap();
        let spec = RunSpec::head_to_head("r".into(), 1, String::new(), "a".into(), "b".into(), 4);
        let older = store.create_run(&spec).await.unwrap();
        let newer = store
            .create_run(&RunSpec {
                name: "s".into(),
                ..spec.with_facts(facts("logistic"))
            })
            .await
            .unwrap();
        let supplied = RunFacts {
            games_planned: 3,
            sprt: None,
            ..facts("normalized")
        };
        let upgrade = Upgrade {
            facts: [(older, supplied.clone()), (newer, supplied)].into(),
            ..Upgrade::default()
        };
        let data = RunData::load_with(&store, older, &upgrade).await.unwrap();
        assert_eq!((data.games_planned, data.sprt.is_none()), (3, true));
        let data = RunData::load_with(&store, newer, &upgrade).await.unwrap();
        assert_eq!(data.games_planned, 7);
        assert_eq!(data.sprt.map(|s| s.model()), Some(EloModel::Logistic));
    }

    /// Facts a report cannot use are an error naming the run and the fact; a run without facts,
    /// stored or supplied, names the run too.
    #[tokio::test]
    async fn unusable_facts_and_configurations_name_the_run() {
        let spec = RunSpec::head_to_head("r".into(), 1, String::new(), "a".into(), "b".into(), 4);
        let error = load(spec.clone().with_facts(facts("bayes")))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("run 1: its stored facts: unknown Elo model \"bayes\""),
            "{error}"
        );
        let error = load(spec).await.unwrap_err().to_string();
        assert!(
            error.starts_with(
                "run 1 (r) was stored before arbiter kept a run's facts, and none were given"
            ),
            "{error}"
        );
    }
}
