//! The run's spec: who plays whom, under which rules, and the arithmetic of its schedule.
//!
//! A run is a schedule of units (pairs of colour-swapped games, or in an unpaired run units of
//! one or two games), numbered from 0. Which pairing a unit belongs to, its round, its seats
//! and its opening are pure functions of (seed, unit): any machine that holds the spec plays
//! unit `u` exactly as any other would, in any order. [`crate::config`] resolves a
//! configuration into a [`MatchSpec`]; [`crate::play`] plays the units of its [`PlaySpec`].

use std::sync::Arc;
use std::time::Duration;

use arbiter_rules::RuleSet;
use arbiter_stats::{Sample, Sprt};
use arbiter_store::Totals;
use serde::{Deserialize, Serialize};

use crate::adjudication::Adjudication;
use crate::commlog::CommLog;
use crate::game::GameSpec;
use crate::openings::{Book, Opening};
use crate::player::PlayerSpec;
use crate::tc::TimeControl;

/// Who plays whom in a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TournamentKind {
    /// Two engines, one pairing: the only kind an SPRT can decide.
    Match,
    /// Every engine plays every other.
    RoundRobin,
    /// The seeds (the first engines) play every other engine, not each other.
    Gauntlet,
}

impl TournamentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TournamentKind::Match => "match",
            TournamentKind::RoundRobin => "round-robin",
            TournamentKind::Gauntlet => "gauntlet",
        }
    }

    /// The pairings of `engines` engines, in the order a round plays them (cutechess's order:
    /// the first engine's games first).
    pub fn pairings(self, engines: usize, seeds: usize) -> Vec<[usize; 2]> {
        match self {
            TournamentKind::Match | TournamentKind::RoundRobin => (0..engines)
                .flat_map(|a| (a + 1..engines).map(move |b| [a, b]))
                .collect(),
            TournamentKind::Gauntlet => (0..seeds)
                .flat_map(|seed| (seeds..engines).map(move |other| [seed, other]))
                .collect(),
        }
    }
}

/// What the play step needs to play units of a run, resolved and validated: the players, the
/// rules of their games, the schedule and how many games at once. A tuner swaps its players
/// between steps (`PlaySpec { players, ..base.clone() }`, the book shared); a fleet worker
/// holds this and nothing of the run's stop rule or console. The PGN tags and the log are here
/// because the play step writes each game's PGN once, and taps engines' lines as they play.
#[derive(Clone, Debug)]
pub struct PlaySpec {
    /// The engines of the run, in the configuration's order. In a match the first is the one
    /// under test: totals and Elo are from its point of view.
    pub players: Vec<PlayerSpec>,
    /// Each engine's limits, by the same index.
    pub time_controls: Vec<TimeControl>,
    pub time_margin: Duration,
    /// Shared: a book can hold millions of lines.
    pub book: Arc<Book>,
    /// Pairs in the schedule, over all pairings (cutechess's `-rounds` with `-games 2 -repeat`,
    /// times the pairings): units of two games, committed together.
    pub pairs: u64,
    /// Games in the schedule, over all pairings: twice `pairs`, or in an unpaired run the games
    /// asked for (cutechess's `-games 1 -rounds R`: R per pairing), whose last round is a unit
    /// of one game when R is odd.
    pub games: u64,
    /// Who plays whom, as indices into `players`: `[first, second]`, the first White in game 0
    /// of each pair and the side the pairing's totals are counted from. A match has one
    /// pairing. Unit `u` of the schedule is pair `u / P` of pairing `u % P` (P pairings): a
    /// round plays every pairing once, with the round's opening, before the next begins.
    pub pairings: Vec<[usize; 2]>,
    /// What made the pairings: a match, a round-robin or a gauntlet.
    pub kind: TournamentKind,
    /// Each opening played twice with colours swapped, counted as pentanomial pairs (the
    /// default); or, `false`, cutechess's `-games 1` without `-repeat`: every game its own
    /// opening, colours alternating by game, counted as games (trinomial statistics). The two
    /// games of a unit are then consecutive rounds, not a pair.
    pub paired: bool,
    /// Games in flight at once.
    pub concurrency: usize,
    pub adjudication: Adjudication,
    pub rules: RuleSet,
    /// Keep going after an engine crashes or stalls (restart the engine), or stop the run.
    /// Illegal moves and lost flags are results either way.
    pub recover: bool,
    pub seed: u64,
    /// PGN `Event` and `Site` tags.
    pub event: String,
    pub site: String,
    /// The run's log (`-log`, `[log]`): engines' lines and arbiter's messages. Opened by the
    /// caller, which owns the file; `None` logs nothing.
    pub log: Option<Arc<CommLog>>,
    /// A handicap match: who gives which odds, and how the colours go. Such a run is unpaired.
    pub handicap: Option<Handicap>,
    /// The old laws' colour rule for drawn games (`[rules] colours_after_draw = "kept"`),
    /// with the colours of the games played so far; such a run is unpaired and played one game
    /// at a time.
    pub drawn_game_colours: Option<Arc<DrawnGameColours>>,
}

/// "If a game be drawn, the player who began it has the first move of the following one":
/// colours alternate game by game, except after a draw. Game `n`'s colours then depend on game
/// `n - 1`'s result, so this is the one schedule that is not a pure function of the unit: the
/// games are played in order, one at a time, and each finished game is recorded here (a
/// resumed run records its stored games first).
#[derive(Debug, Default)]
pub struct DrawnGameColours {
    /// By game number: the engine that had White, and whether the game was drawn.
    games: std::sync::Mutex<std::collections::BTreeMap<u64, (usize, bool)>>,
}

impl DrawnGameColours {
    /// Records game `number`: `white` had the first move, and it was `drawn` or not.
    pub fn record(&self, number: u64, white: usize, drawn: bool) {
        if let Ok(mut games) = self.games.lock() {
            games.insert(number, (white, drawn));
        }
    }

    /// Who has White in game `number` (from 1) between `first` and `second`.
    fn white_of(&self, number: u64, first: usize, second: usize) -> usize {
        let other = |white: usize| if white == first { second } else { first };
        let previous = self
            .games
            .lock()
            .ok()
            .and_then(|games| games.get(&number.saturating_sub(1)).copied());
        match previous {
            _ if number <= 1 => first,
            Some((white, true)) => white,
            Some((white, false)) => other(white),
            // Not played yet (only when games are played out of order, which the
            // configuration refuses): plain alternation.
            None if number % 2 == 1 => first,
            None => second,
        }
    }
}

/// A handicap match (`[openings] odds = ..., giver = ...`): the giver gives the odds in every
/// game. By the old laws it takes the side the odds are set up for (a piece is given with the
/// move, White; a pawn with the move to the receiver, Black); with `alternate` the colours
/// alternate by game and the start is mirrored when the giver takes the other side, the odds
/// staying its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Handicap {
    /// The giver's index in the players.
    pub giver: usize,
    pub odds: arbiter_rules::Odds,
    pub alternate: bool,
}

impl Handicap {
    /// The giver's colour in game `game_index` of a unit.
    pub fn giver_color(&self, game_index: usize) -> arbiter_rules::Color {
        let lawful = self.odds.giver();
        if self.alternate && game_index == 1 {
            !lawful
        } else {
            lawful
        }
    }
}

/// Which finished pairs the SPRT is judged on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtJudge {
    /// The first pairs of the schedule with none missing (pairs 0 to k-1, whichever finished
    /// first): the verdict and the pairs it rests on are the same at any concurrency and in the
    /// fleet, for games that are (fixed nodes). A late pair holds the verdict back until it
    /// finishes.
    #[default]
    Prefix,
    /// Every finished pair, in the order they finished, as cutechess and fastchess judge: a
    /// verdict a little sooner, but at `concurrency` > 1 which pairs it rests on depends on
    /// which games finished first.
    All,
}

impl SprtJudge {
    pub fn as_str(self) -> &'static str {
        match self {
            SprtJudge::Prefix => "prefix",
            SprtJudge::All => "all",
        }
    }
}

/// A run as `arbiter match` plays it: the play step's spec, and what only the store's sink and
/// the console need. It reads as its [`PlaySpec`] (`spec.players`, `spec.pairs`).
#[derive(Debug)]
pub struct MatchSpec {
    pub play: Arc<PlaySpec>,
    /// The stop rule of the store's sink.
    pub sprt: Option<Sprt>,
    /// Which finished pairs the store's sink judges the SPRT on.
    pub judge: SprtJudge,
    /// What the configuration asked for that will not happen as written (skipped book entries,
    /// options an in-process engine does not declare), for the user to see before the games.
    pub warnings: Vec<String>,
}

impl MatchSpec {
    /// A run of `play` with no SPRT and nothing to warn about.
    pub fn new(play: PlaySpec) -> MatchSpec {
        MatchSpec {
            play: Arc::new(play),
            sprt: None,
            judge: SprtJudge::default(),
            warnings: Vec::new(),
        }
    }
}

impl std::ops::Deref for MatchSpec {
    type Target = PlaySpec;

    fn deref(&self) -> &PlaySpec {
        &self.play
    }
}

/// Changing a field before play starts (the CLI sets the seed and the log it opened) changes
/// this spec's own copy.
impl std::ops::DerefMut for MatchSpec {
    fn deref_mut(&mut self) -> &mut PlaySpec {
        Arc::make_mut(&mut self.play)
    }
}

/// Pairs of `pairing` when `pairs` schedule units are dealt to `pairings` pairings in turn
/// (unit u to pairing u % P): what the store plans for each pairing.
pub fn pairs_in(pairs: u64, pairings: usize, pairing: usize) -> u64 {
    let pairings = pairings.max(1) as u64;
    (pairs + pairings - 1 - pairing as u64) / pairings
}

impl PlaySpec {
    /// The players' names for White and Black when `order` gives the engines' seats.
    pub fn seat_names(&self, order: [usize; 2]) -> [&str; 2] {
        order.map(|engine| self.players[engine].name.as_str())
    }

    /// The pairing of schedule unit `unit` and the unit's index within it (its round).
    pub fn pairing_of(&self, unit: u64) -> (usize, u64) {
        let pairings = self.pairings.len().max(1) as u64;
        ((unit % pairings) as usize, unit / pairings)
    }

    /// The schedule unit of pair `index` of `pairing`.
    pub fn unit_of(&self, pairing: usize, index: u64) -> u64 {
        index * self.pairings.len().max(1) as u64 + pairing as u64
    }

    /// Pairs of `pairing` in the schedule (every pairing has the same, `rounds`).
    pub fn pairs_in(&self, pairing: usize) -> u64 {
        pairs_in(self.pairs, self.pairings.len(), pairing)
    }

    /// Games of schedule unit `unit`: a pair's two, or one in the last round of an unpaired run
    /// of an odd number of games per pairing.
    pub fn games_of(&self, unit: u64) -> usize {
        if self.paired {
            return 2;
        }
        let per_pairing = self.games / self.pairings.len().max(1) as u64;
        let round = self.pairing_of(unit).1;
        per_pairing.saturating_sub(2 * round).min(2) as usize
    }

    /// The number of game `game_index` of `unit` in the run, from 1: in schedule order, as
    /// cutechess numbers its `Finished game N` lines. A last round of single games numbers them
    /// after every earlier round's, one per pairing.
    pub fn game_number(&self, unit: u64, game_index: usize) -> u64 {
        if self.games_of(unit) == 1 {
            let pairings = self.pairings.len().max(1) as u64;
            let (pairing, round) = self.pairing_of(unit);
            2 * round * pairings + pairing as u64 + 1
        } else {
            2 * unit + game_index as u64 + 1
        }
    }

    /// The PGN `Round` of game `game_index` of `unit`, from 1: the pair's (in a tournament,
    /// the round every pairing plays once), as fastchess writes it; unpaired, every game is a
    /// round of its own, as cutechess numbers them.
    pub fn round_tag(&self, unit: u64, game_index: usize) -> u64 {
        let round = self.pairing_of(unit).1;
        if self.paired {
            round + 1
        } else {
            2 * round + game_index as u64 + 1
        }
    }

    /// The engines of game `game_index` of `unit`, White first.
    pub fn seats(&self, unit: u64, game_index: usize) -> [usize; 2] {
        let [first, second] = self.pairings[self.pairing_of(unit).0];
        if let Some(rule) = &self.drawn_game_colours {
            let white = rule.white_of(self.game_number(unit, game_index), first, second);
            return if white == first {
                [first, second]
            } else {
                [second, first]
            };
        }
        if let Some(handicap) = self.handicap {
            let other = if handicap.giver == first {
                second
            } else {
                first
            };
            return match handicap.giver_color(game_index) {
                arbiter_rules::Color::White => [handicap.giver, other],
                arbiter_rules::Color::Black => [other, handicap.giver],
            };
        }
        if game_index == 0 {
            [first, second]
        } else {
            [second, first]
        }
    }

    /// Whether this run is a tournament of several pairings rather than a match.
    pub fn is_tournament(&self) -> bool {
        self.pairings.len() > 1
    }

    /// The index of the opening of game `game_index` (0 or 1) of unit `pair` in the book's
    /// order: its round's (every pairing of a round plays the same line), or in unpaired runs
    /// the game's own.
    pub fn opening_index(&self, pair: u64, game_index: usize) -> usize {
        let round = self.pairing_of(pair).1;
        let entry = if self.paired {
            round
        } else {
            2 * round + game_index as u64
        };
        self.book.index_for_pair(self.seed, entry)
    }

    pub fn opening(&self, pair: u64, game_index: usize) -> &Opening {
        let index = self.opening_index(pair, game_index);
        match self.handicap {
            // The giver on the side other than the one the start is set up for.
            Some(h) if h.giver_color(game_index) != h.odds.giver() => {
                self.book.mirrored_opening(index)
            }
            _ => self.book.opening(index),
        }
    }

    /// The statistics' sample of `totals`: pentanomial pairs, or games when unpaired.
    pub fn sample(&self, totals: &Totals) -> Sample {
        Sample::of_run(self.paired, totals.wdl(), totals.pentanomial)
    }

    /// The game of `pair` with the engines seated by `order`.
    pub fn game_spec(&self, pair: u64, game_index: usize, order: [usize; 2]) -> GameSpec<'_> {
        GameSpec {
            opening: self.opening(pair, game_index),
            time_controls: order.map(|engine| &self.time_controls[engine]),
            time_margin: self.time_margin,
            adjudication: self.adjudication,
            rules: self.rules,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeSet;

    use crate::builtin::BuiltinSpec;
    use crate::openings::BookSpec;
    use crate::player::PlayerKind;
    use crate::process::Timeouts;

    /// A match of two in-process staunton engines at 100 nodes a move, 20 moves at most: games
    /// that are quick and the same on every machine.
    pub(crate) fn test_spec(pairs: u64) -> PlaySpec {
        let player = |name: &str| PlayerSpec {
            name: name.into(),
            kind: PlayerKind::Builtin(Box::new(BuiltinSpec {
                params: staunton::Params::default(),
                hash_mb: 0,
            })),
            timeouts: Timeouts::default(),
            restart: false,
        };
        let tc = TimeControl {
            nodes: Some(100),
            ..TimeControl::default()
        };
        PlaySpec {
            players: vec![player("dev"), player("base")],
            time_controls: vec![tc.clone(), tc],
            pairings: vec![[0, 1]],
            kind: TournamentKind::Match,
            time_margin: Duration::from_millis(50),
            book: Arc::new(Book::load(&BookSpec::default()).unwrap()),
            pairs,
            games: 2 * pairs,
            paired: true,
            concurrency: 2,
            adjudication: Adjudication {
                maxmoves: Some(20),
                ..Adjudication::default()
            },
            rules: RuleSet::default(),
            recover: true,
            seed: 1,
            event: "test".into(),
            site: "here".into(),
            log: None,
            handicap: None,
            drawn_game_colours: None,
        }
    }

    /// A round-robin's schedule: a round plays every pairing once, each pairing's first engine
    /// White in game 0, all from the round's opening; pair k of pairing p is the same unit
    /// whichever way it is reached.
    #[test]
    fn a_round_plays_every_pairing_from_its_opening() {
        let mut spec = test_spec(0);
        let tc = spec.time_controls[0].clone();
        let mut third = spec.players[1].clone();
        third.name = "old".into();
        spec.players.push(third);
        spec.time_controls.push(tc);
        spec.pairings = vec![[0, 1], [0, 2], [1, 2]];
        spec.kind = TournamentKind::RoundRobin;
        spec.pairs = 3 * 5;
        spec.book = Arc::new(
            Book::load(&BookSpec {
                file: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd").into()),
                ..BookSpec::default()
            })
            .unwrap(),
        );
        for pairing in 0..3 {
            assert_eq!(spec.pairs_in(pairing), 5);
        }
        let mut seen = BTreeSet::new();
        for unit in 0..spec.pairs {
            let (pairing, index) = spec.pairing_of(unit);
            assert_eq!(spec.unit_of(pairing, index), unit);
            assert!(seen.insert((pairing, index)));
            assert_eq!(index, unit / 3, "round by round");
            let [first, second] = spec.pairings[pairing];
            assert_eq!(spec.seats(unit, 0), [first, second]);
            assert_eq!(spec.seats(unit, 1), [second, first]);
            // Every pairing of a round plays the round's opening, both games.
            let round_opening = spec.opening_index(spec.unit_of(0, index), 0);
            assert_eq!(spec.opening_index(unit, 0), round_opening);
            assert_eq!(spec.opening_index(unit, 1), round_opening);
        }
        assert_eq!(seen.len(), 15);
        let openings: BTreeSet<usize> = (0..5).map(|k| spec.opening_index(3 * k, 0)).collect();
        assert_eq!(openings.len(), 5, "each round its own opening");
    }
}
