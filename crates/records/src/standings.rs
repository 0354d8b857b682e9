//! A tournament's standings, per-pairing results and crosstable, from the totals of its
//! pairings: what a gauntlet or round robin prints at each `-ratinginterval` and at the end, and
//! what its JSON summary holds. Pure functions of plain data (engine names and each pairing's
//! [`Totals`]), so the tournament, reports and the HTTP API build the same records from the
//! store, and `arbiter rate` prints its PGN's list with the same table.
//!
//! The ratings are [`arbiter_stats::rate`]'s maximum-likelihood Elo, centred on a mean of zero:
//! nothing is fitted here. A pairing played in colour-swapped pairs enters the rating as its
//! pairs (the interval then takes the pairs' variance, as a match's statistics do); an unpaired
//! run (cutechess's `-games 1` without `-repeat`) has no meaningful pentanomial counts, so its
//! games are read one by one and its pairing lines show no `Ptnml(0-2)`.
//!
//! The table is cutechess's (`Rank Name Elo +/- Games Score Draws`, its `Tournament::results()`
//! layout) with LOS over the next engine added at the end; the pairing lines begin as cutechess's
//! `Score of A vs B` line so that scripts reading it keep working.

use arbiter_stats::{
    rate, Anchor, Encounter, Pentanomial, RatedEngine, RatingList, StatsError, Trinomial,
    VIRTUAL_DRAWS,
};
use arbiter_store::Totals;
use serde::{Deserialize, Serialize};

use crate::text::{percent, printable_name, ptnml, score_line};

/// The totals of one pairing of a tournament, from `first`'s side: its wins, draws and losses
/// against `second`, and the pentanomial counts of their colour-swapped pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairingResult {
    /// Index into the engine names.
    pub first: usize,
    /// Index into the engine names.
    pub second: usize,
    pub totals: Totals,
}

/// Everything a tournament reports about its results so far. Serialized into the run summary,
/// so field names follow `arbiter rate --json`'s engine objects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    /// `pentanomial` when the games were played in colour-swapped pairs (the intervals are the
    /// pairs'), `trinomial` when they were read one by one: the run summary's words.
    pub model: String,
    /// Best first; engines without games last.
    pub engines: Vec<StandingsRow>,
    /// In the order the pairings were given (the schedule's).
    pub pairings: Vec<PairingRow>,
    pub crosstable: Crosstable,
    /// Groups of engines connected by games; above one, ratings compare only within a group
    /// (a tournament that has not yet played every pairing may be in this state).
    pub groups: usize,
}

/// One engine's line of the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StandingsRow {
    /// 1 for the first line.
    pub rank: usize,
    /// Index into the engine names.
    pub engine: usize,
    pub name: String,
    /// Maximum-likelihood Elo, the mean of the engines with games being zero. With no games
    /// (`games` 0) there is no rating: `elo`, `half_width` and `elo_ci` are zeros, and the
    /// tables print `-`.
    pub elo: f64,
    /// Half the width of the 95% interval of `elo`.
    pub half_width: f64,
    pub elo_ci: [f64; 2],
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Points per game; `None` without games.
    pub score: Option<f64>,
    /// Draws per game; `None` without games.
    pub draw_ratio: Option<f64>,
    /// Likelihood of superiority over the next line; `None` on the last line of a group.
    pub los_next: Option<f64>,
    /// The engine's group of engines connected by games, 0 first.
    pub group: usize,
    /// The engine won or lost every game against part of its group: its group was rated with
    /// BayesElo's prior of virtual draws, on which its rating leans.
    pub separated: bool,
}

impl StandingsRow {
    /// The line of a rating list's engine at `rank`.
    fn rated(rank: usize, e: &RatedEngine) -> StandingsRow {
        let (lo, hi) = e.interval();
        StandingsRow {
            rank,
            engine: e.engine,
            name: e.name.clone(),
            elo: e.elo,
            half_width: e.half_width,
            elo_ci: [lo, hi],
            games: e.games(),
            wins: e.results.wins,
            draws: e.results.draws,
            losses: e.results.losses,
            score: e.score(),
            draw_ratio: e.draw_ratio(),
            los_next: e.los_next,
            group: e.group,
            separated: e.separated,
        }
    }
}

/// One pairing's results, from `first`'s side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingRow {
    /// Index into the engine names.
    pub first: usize,
    /// Index into the engine names.
    pub second: usize,
    pub first_name: String,
    pub second_name: String,
    /// Committed colour-swapped pairs (units of two games).
    pub pairs: u64,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// `[LL, LD, DD+WL, DW, WW]` of `first`; `None` when the games were not played in pairs.
    pub pentanomial: Option<[u64; 5]>,
}

/// Who scored what against whom: a row and a column for each engine, in standings order.
///
/// Cell `[i][j]` holds engine `names[i]`'s games against `names[j]` from `names[i]`'s side, over
/// every pairing of the two (in either order); `[j][i]` is the same games mirrored. The
/// diagonal, and engines that have not met, are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Crosstable {
    /// The rows' (and columns') engines: the standings' names, best first.
    pub names: Vec<String>,
    pub cells: Vec<Vec<Option<CrossCell>>>,
}

/// The row engine's games against the column engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossCell {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl CrossCell {
    pub fn games(&self) -> u64 {
        self.trinomial().games()
    }

    /// A win 1, a draw ½.
    pub fn points(&self) -> f64 {
        self.trinomial().points()
    }

    fn trinomial(&self) -> Trinomial {
        Trinomial::from_wdl(self.wins, self.draws, self.losses)
    }

    fn mirrored(&self) -> CrossCell {
        CrossCell {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }

    /// Saturating, as the statistics count: [`rate`] has refused totals that large already.
    fn add(&mut self, other: CrossCell) {
        self.wins = self.wins.saturating_add(other.wins);
        self.draws = self.draws.saturating_add(other.draws);
        self.losses = self.losses.saturating_add(other.losses);
    }
}

/// The standings of engines `names` from the totals of their pairings. `paired`: the games were
/// played in colour-swapped pairs, so each pairing's pentanomial counts are its data; otherwise
/// its games are. Pairings with no games yet leave their engines with zero games, never an
/// error. Fails when a pairing names an engine outside `names` or an engine against itself, or
/// when its pentanomial counts do not add up to its games.
pub fn standings(
    names: &[String],
    pairings: &[PairingResult],
    paired: bool,
) -> Result<Standings, StatsError> {
    for p in pairings {
        for engine in [p.first, p.second] {
            if engine >= names.len() {
                return Err(StatsError::UnknownEngine {
                    index: engine,
                    engines: names.len(),
                });
            }
        }
        if p.first == p.second {
            return Err(StatsError::SelfPairing { engine: p.first });
        }
    }
    let encounters: Vec<Encounter> = pairings
        .iter()
        .map(|p| {
            let t = &p.totals;
            let games = Trinomial::from_wdl(t.wins, t.draws, t.losses);
            if paired {
                Encounter::pairs(
                    p.first,
                    p.second,
                    games,
                    Pentanomial::from_counts(t.pentanomial),
                )
            } else {
                Encounter::games(p.first, p.second, games)
            }
        })
        .collect();
    let list = match rate(names, &encounters, Anchor::MeanZero) {
        Err(StatsError::NoGames) => unplayed(names),
        other => other?,
    };
    let engines = rows(&list);
    let order: Vec<usize> = engines.iter().map(|row| row.engine).collect();
    Ok(Standings {
        model: if paired { "pentanomial" } else { "trinomial" }.to_owned(),
        crosstable: crosstable(names, &order, pairings),
        pairings: pairings
            .iter()
            .map(|p| pairing_row(names, p, paired))
            .collect(),
        groups: list.groups,
        engines,
    })
}

/// Before any game: every engine at the mean with no interval, listed as a rating list lists
/// engines without games (by name), each its own group as far as the games know.
fn unplayed(names: &[String]) -> RatingList {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(&names[b]).then(a.cmp(&b)));
    RatingList {
        engines: order
            .into_iter()
            .enumerate()
            .map(|(group, engine)| RatedEngine {
                engine,
                name: names[engine].clone(),
                elo: 0.0,
                half_width: 0.0,
                results: Trinomial::default(),
                los_next: None,
                group,
                separated: false,
            })
            .collect(),
        groups: 0,
        anchor: Anchor::MeanZero,
    }
}

fn rows(list: &RatingList) -> Vec<StandingsRow> {
    list.engines
        .iter()
        .enumerate()
        .map(|(i, e)| StandingsRow::rated(i + 1, e))
        .collect()
}

fn pairing_row(names: &[String], p: &PairingResult, paired: bool) -> PairingRow {
    let t = &p.totals;
    PairingRow {
        first: p.first,
        second: p.second,
        first_name: names[p.first].clone(),
        second_name: names[p.second].clone(),
        pairs: t.pairs,
        games: t.games(),
        wins: t.wins,
        draws: t.draws,
        losses: t.losses,
        pentanomial: paired.then_some(t.pentanomial),
    }
}

/// `order`: engine indices, best first.
fn crosstable(names: &[String], order: &[usize], pairings: &[PairingResult]) -> Crosstable {
    let n = names.len();
    let mut by_engine: Vec<Vec<Option<CrossCell>>> = vec![vec![None; n]; n];
    for p in pairings {
        let t = &p.totals;
        let cell = CrossCell {
            wins: t.wins,
            draws: t.draws,
            losses: t.losses,
        };
        if cell.games() == 0 {
            continue;
        }
        for (row, column, games) in [
            (p.first, p.second, cell),
            (p.second, p.first, cell.mirrored()),
        ] {
            by_engine[row][column]
                .get_or_insert_with(CrossCell::default)
                .add(games);
        }
    }
    Crosstable {
        names: order.iter().map(|&e| names[e].clone()).collect(),
        cells: order
            .iter()
            .map(|&row| order.iter().map(|&column| by_engine[row][column]).collect())
            .collect(),
    }
}

/// The standings as cutechess prints them (`Tournament::results()`), with LOS over the next
/// engine added at the end.
pub fn standings_table(s: &Standings) -> String {
    table(&s.engines)
}

/// A rating list (`arbiter rate`) in the standings' table.
pub fn rating_table(list: &RatingList) -> String {
    table(&rows(list))
}

/// cutechess's standings (`Tournament::results()`): `Rank` right in 4, `Name` left in 25 (or
/// the longest name), then right-aligned columns of 7; Elo and +/- without decimals, Score and
/// Draws in percent with one. LOS over the next engine is added at the end.
fn table(rows: &[StandingsRow]) -> String {
    let names: Vec<_> = rows.iter().map(|r| printable_name(&r.name)).collect();
    let width = name_width(names.iter().map(|n| n.as_ref()));
    let mut out = format!(
        "{:>4} {:<width$} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
        "Rank", "Name", "Elo", "+/-", "Games", "Score", "Draws", "LOS"
    );
    let share = |x: Option<f64>| match x {
        Some(x) => format!("{:>6.1}%", 100.0 * x),
        None => format!("{:>7}", "-"),
    };
    for (row, name) in rows.iter().zip(&names) {
        // An engine without games has no rating: its numbers are placeholders.
        let (elo, half_width) = if row.games == 0 {
            ("-".to_owned(), "-".to_owned())
        } else {
            (
                format!("{:.0}", row.elo.round() + 0.0), // never "-0"
                format!("{:.0}", row.half_width),
            )
        };
        let line = format!(
            "{:>4} {:<width$} {elo:>7} {half_width:>7} {:>7} {} {} {}",
            row.rank,
            name,
            row.games,
            share(row.score),
            share(row.draw_ratio),
            row.los_next
                .map(|l| format!("{:>6}%", percent(l, 1)))
                .unwrap_or_default(),
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// What a reader of the table must not miss: groups of engines that never met (their ratings
/// do not compare), and ratings that rest on regularized zero counts. One line each, the groups
/// listed on lines of their own; none when the list is plain.
pub fn standings_notes(s: &Standings) -> Vec<String> {
    notes(&s.engines, s.groups)
}

/// [`standings_notes`] of a rating list (`arbiter rate`).
pub fn rating_notes(list: &RatingList) -> Vec<String> {
    notes(&rows(list), list.groups)
}

fn notes(rows: &[StandingsRow], groups: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if groups > 1 {
        notes.push(format!(
            "note: the engines form {groups} groups that never played each other; ratings \
             compare only within a group:"
        ));
        for group in 0..groups {
            let members: Vec<_> = rows
                .iter()
                .filter(|r| r.group == group)
                .map(|r| printable_name(&r.name))
                .collect();
            notes.push(format!("  group {}: {}", group + 1, members.join(", ")));
        }
    }
    let separated: Vec<_> = rows
        .iter()
        .filter(|r| r.separated)
        .map(|r| printable_name(&r.name))
        .collect();
    if !separated.is_empty() {
        notes.push(format!(
            "note: {} won every game or lost every game against part of the list: no finite \
             rating fits that alone, so their group is rated with BayesElo's prior of \
             {VIRTUAL_DRAWS} virtual draws between every two engines that played each other",
            separated.join(", ")
        ));
    }
    notes
}

/// cutechess's 25 characters, or the longest name.
fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0).max(25)
}

/// One line per pairing, in the schedule's order: cutechess's `Score of A vs B: W - L - D
/// [ratio] games` from the first engine's side, followed, when the games were played in pairs,
/// by the pairs' `Ptnml(0-2): [LL, LD, DD+WL, DW, WW]`.
pub fn pairing_lines(s: &Standings) -> Vec<String> {
    s.pairings
        .iter()
        .map(|p| {
            let mut line = score_line(
                &printable_name(&p.first_name),
                &printable_name(&p.second_name),
                p.wins,
                p.losses,
                p.draws,
            );
            if let Some(counts) = p.pentanomial {
                line.push_str("  ");
                line.push_str(&ptnml(counts));
            }
            line
        })
        .collect()
}

/// The crosstable as text: the standings' ranks and names down the side, the ranks across the
/// top, and in each cell the row engine's points out of its games against the column engine
/// (`7.5/12`: a win counts 1, a draw ½), `-` on the diagonal, `.` where the two have not
/// played.
pub fn crosstable_lines(s: &Standings) -> Vec<String> {
    let table = &s.crosstable;
    let names: Vec<_> = table.names.iter().map(|n| printable_name(n)).collect();
    let width = name_width(names.iter().map(|n| n.as_ref()));
    let text = |row: usize, column: usize| match table.cells[row][column] {
        _ if row == column => "-".to_owned(),
        Some(cell) => format!("{:.1}/{}", cell.points(), cell.games()),
        None => ".".to_owned(),
    };
    let n = table.names.len();
    let cell_width = (0..n)
        .flat_map(|row| (0..n).map(move |column| (row, column)))
        .map(|(row, column)| text(row, column).len())
        .max()
        .unwrap_or(0)
        .max(7);
    let mut header = format!("{:>4} {:<width$}", "Rank", "Name");
    for rank in 1..=n {
        header.push_str(&format!(" {rank:>cell_width$}"));
    }
    let mut lines = vec![header];
    for (row, name) in names.iter().enumerate() {
        let mut line = format!("{:>4} {:<width$}", row + 1, name);
        for column in 0..n {
            line.push_str(&format!(" {:>cell_width$}", text(row, column)));
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_stats::estimate;

    /// Issue 18, item 15: names read from PGN files (`arbiter rate`) reach the terminal with
    /// their escape sequences and direction marks escaped, in every text the standings print,
    /// while the records keep them as they are.
    #[test]
    fn names_with_escape_sequences_are_printed_escaped() {
        let red = "\u{1b}[31mred";
        let names = names(&[red, "b\u{202e}ved", "plain"]);
        let s = standings(
            &names,
            &[
                pairing(0, 1, [1, 4, 1], [0, 1, 1, 1, 0]),
                pairing(1, 2, [1, 4, 1], [0, 1, 1, 1, 0]),
            ],
            true,
        )
        .unwrap();
        let mut text = vec![table(&s.engines)];
        text.extend(pairing_lines(&s));
        text.extend(crosstable_lines(&s));
        let text = text.join("\n");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}[31mred"), "{text}");
        assert!(text.contains("b\\u{202e}ved"), "{text}");
        assert!(
            text.contains("Score of \\u{1b}[31mred vs b\\u{202e}ved: 1 - 1 - 4"),
            "{text}"
        );
        // The columns still line up: every table line is as wide as its header.
        let table = table(&s.engines);
        let widths: Vec<usize> = table.lines().map(|l| l.chars().count()).collect();
        assert!(widths[1..].iter().all(|&w| w <= widths[0]), "{table}");
        assert!(
            s.engines.iter().any(|e| e.name == red),
            "the record keeps the name"
        );
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    /// `first`'s wins, draws and losses, and its pairs' pentanomial counts.
    fn pairing(first: usize, second: usize, wdl: [u64; 3], pentanomial: [u64; 5]) -> PairingResult {
        let [wins, draws, losses] = wdl;
        PairingResult {
            first,
            second,
            totals: Totals {
                pairs: pentanomial.iter().sum(),
                wins,
                draws,
                losses,
                pentanomial,
            },
        }
    }

    /// A round robin of three, the second pairing given from C's side. By hand, from each
    /// engine's side:
    /// A: vs B 3W 4D 1L, vs C 3W 2D 1L (C's 1W 2D 3L mirrored): 6W 6D 2L, 9 of 14 points.
    /// B: vs A 1W 4D 3L, vs C 2W 2D 0L: 3W 6D 3L, 6 of 12.
    /// C: vs A 1W 2D 3L, vs B 0W 2D 2L: 1W 4D 5L, 3 of 10.
    fn round_robin() -> (Vec<String>, Vec<PairingResult>) {
        (
            names(&["A", "B", "C"]),
            vec![
                pairing(0, 1, [3, 4, 1], [0, 1, 1, 1, 1]),
                pairing(2, 0, [1, 2, 3], [0, 2, 1, 0, 0]),
                pairing(1, 2, [2, 2, 0], [0, 0, 0, 2, 0]),
            ],
        )
    }

    #[test]
    fn three_engine_round_robin_by_hand() {
        let (names, pairings) = round_robin();
        let s = standings(&names, &pairings, true).unwrap();
        assert_eq!(s.model, "pentanomial");
        assert_eq!(s.groups, 1);
        let by_rank: Vec<(&str, usize, u64, u64, u64, u64)> = s
            .engines
            .iter()
            .map(|r| (r.name.as_str(), r.rank, r.games, r.wins, r.draws, r.losses))
            .collect();
        assert_eq!(
            by_rank,
            [
                ("A", 1, 14, 6, 6, 2),
                ("B", 2, 12, 3, 6, 3),
                ("C", 3, 10, 1, 4, 5)
            ]
        );
        let scores: Vec<(Option<f64>, Option<f64>)> =
            s.engines.iter().map(|r| (r.score, r.draw_ratio)).collect();
        assert_eq!(
            scores,
            [
                (Some(9.0 / 14.0), Some(6.0 / 14.0)),
                (Some(0.5), Some(0.5)),
                (Some(0.3), Some(0.4))
            ]
        );
        assert!(s.engines[0].elo > s.engines[1].elo && s.engines[1].elo > s.engines[2].elo);
        assert!(s.engines[2].los_next.is_none() && s.engines[0].los_next.unwrap() > 0.5);

        // Rows and columns in standings order; each cell from the row engine's side.
        let cell = |w, d, l| {
            Some(CrossCell {
                wins: w,
                draws: d,
                losses: l,
            })
        };
        assert_eq!(s.crosstable.names, ["A", "B", "C"]);
        assert_eq!(
            s.crosstable.cells,
            [
                [None, cell(3, 4, 1), cell(3, 2, 1)],
                [cell(1, 4, 3), None, cell(2, 2, 0)],
                [cell(1, 2, 3), cell(0, 2, 2), None],
            ]
        );
        assert_eq!(
            crosstable_lines(&s),
            [
                "Rank Name                            1       2       3",
                "   1 A                               -   5.0/8   4.0/6",
                "   2 B                           3.0/8       -   3.0/4",
                "   3 C                           2.0/6   1.0/4       -",
            ]
        );
        assert_eq!(
            pairing_lines(&s),
            [
                "Score of A vs B: 3 - 1 - 4  [0.625] 8  Ptnml(0-2): [0, 1, 1, 1, 1]",
                "Score of C vs A: 1 - 3 - 2  [0.333] 6  Ptnml(0-2): [0, 2, 1, 0, 0]",
                "Score of B vs C: 2 - 0 - 2  [0.750] 4  Ptnml(0-2): [0, 0, 0, 2, 0]",
            ]
        );
        assert_eq!(
            (
                s.pairings[1].first_name.as_str(),
                s.pairings[1].second_name.as_str()
            ),
            ("C", "A")
        );
    }

    /// A pairing played over several schedule entries, in either order, adds up in its cells.
    #[test]
    fn crosstable_adds_a_pairings_entries() {
        let names = names(&["A", "B"]);
        let pairings = [
            pairing(0, 1, [2, 0, 0], [0, 0, 0, 0, 1]),
            pairing(1, 0, [1, 1, 0], [0, 0, 0, 1, 0]),
        ];
        let s = standings(&names, &pairings, true).unwrap();
        let a = s.crosstable.names.iter().position(|n| n == "A").unwrap();
        assert_eq!(
            s.crosstable.cells[a][1 - a],
            Some(CrossCell {
                wins: 2,
                draws: 1,
                losses: 1
            })
        );
        assert_eq!(s.crosstable.cells[a][1 - a].unwrap().points(), 2.5);
    }

    /// Two engines are rated exactly as far apart as the match Elo of the same totals, whichever
    /// engine the pairing names first.
    #[test]
    fn two_engines_match_the_match_elo() {
        let names = names(&["dev", "base"]);
        for paired in [true, false] {
            for forward in [true, false] {
                let p = pairing(0, 1, [30, 40, 20], [2, 7, 20, 11, 5]);
                let sample =
                    arbiter_stats::Sample::of_run(paired, p.totals.wdl(), p.totals.pentanomial);
                let match_elo = estimate::elo(&sample).unwrap().elo;
                let p = if forward {
                    p
                } else {
                    pairing(1, 0, [20, 40, 30], [5, 11, 20, 7, 2])
                };
                let s = standings(&names, &[p], paired).unwrap();
                let elo = |name: &str| s.engines.iter().find(|r| r.name == name).unwrap().elo;
                assert_eq!(s.engines[0].name, "dev");
                assert!(
                    (elo("dev") - elo("base") - match_elo).abs() < 1e-6,
                    "paired {paired}: {} vs {match_elo}",
                    elo("dev") - elo("base")
                );
            }
        }
    }

    #[test]
    fn no_games_yet_gives_rows_of_zero_games() {
        let names = names(&["Gamma", "Alpha", "Beta"]);
        let pairings = [
            pairing(0, 1, [0, 0, 0], [0; 5]),
            pairing(0, 2, [0, 0, 0], [0; 5]),
        ];
        let s = standings(&names, &pairings, true).unwrap();
        assert_eq!(s.engines.len(), 3);
        assert!(s
            .engines
            .iter()
            .all(|r| r.games == 0 && r.score.is_none() && r.los_next.is_none()));
        assert_eq!(
            standings_table(&s),
            "Rank Name                          Elo     +/-   Games   Score   Draws     LOS\n\
             \x20  1 Alpha                           -       -       0       -       -\n\
             \x20  2 Beta                            -       -       0       -       -\n\
             \x20  3 Gamma                           -       -       0       -       -\n"
        );
        assert!(s.crosstable.cells.iter().flatten().all(Option::is_none));
        assert_eq!(
            crosstable_lines(&s)[1],
            "   1 Alpha                           -       .       ."
        );
        assert_eq!(
            pairing_lines(&s)[0],
            "Score of Gamma vs Alpha: 0 - 0 - 0  [0.000] 0  Ptnml(0-2): [0, 0, 0, 0, 0]"
        );
        // No pairings at all, and no engines at all.
        assert_eq!(standings(&names, &[], false).unwrap().engines.len(), 3);
        assert!(standings(&[], &[], true).unwrap().engines.is_empty());
    }

    /// One pairing played, the other not yet: the idle engine is listed last with no games.
    #[test]
    fn an_engine_without_games_is_listed_last() {
        let names = names(&["A", "B", "C"]);
        let pairings = [
            pairing(0, 2, [0, 0, 0], [0; 5]),
            pairing(1, 2, [1, 1, 0], [0, 0, 0, 1, 0]),
        ];
        let s = standings(&names, &pairings, true).unwrap();
        let last = s.engines.last().unwrap();
        assert_eq!((last.name.as_str(), last.games), ("A", 0));
        assert_eq!(s.engines[0].name, "B");
        assert_eq!(crosstable_lines(&s)[3].split_whitespace().last(), Some("-"));
    }

    /// Unpaired totals (cutechess's -games 1 without -repeat) are read as games: their
    /// pentanomial counts, which mean nothing then, are neither checked nor shown.
    #[test]
    fn unpaired_totals_are_read_as_games() {
        let names = names(&["A", "B"]);
        let meaningless = pairing(0, 1, [4, 2, 1], [0, 0, 0, 0, 1]);
        let s = standings(&names, &[meaningless], false).unwrap();
        assert_eq!(s.model, "trinomial");
        assert_eq!(s.engines[0].games, 7);
        assert_eq!(s.pairings[0].pentanomial, None);
        assert_eq!(pairing_lines(&s), ["Score of A vs B: 4 - 1 - 2  [0.714] 7"]);
        // The same totals as pairs do not add up, and say so.
        assert_eq!(
            standings(&names, &[meaningless], true),
            Err(StatsError::PairsDisagree {
                first: 0,
                second: 1
            })
        );
    }

    #[test]
    fn bad_pairings_are_errors_not_panics() {
        let names = names(&["A", "B"]);
        assert_eq!(
            standings(&names, &[pairing(0, 2, [0, 0, 0], [0; 5])], true),
            Err(StatsError::UnknownEngine {
                index: 2,
                engines: 2
            })
        );
        assert_eq!(
            standings(&names, &[pairing(1, 1, [0, 0, 0], [0; 5])], true),
            Err(StatsError::SelfPairing { engine: 1 })
        );
    }

    /// Early in a tournament: two pairings that share no engine, one won outright. The notes say
    /// both, as `arbiter rate` says them; a plain list has none.
    #[test]
    fn notes_for_groups_and_perfect_scores() {
        let names = names(&["A", "B", "C", "D"]);
        let pairings = [
            pairing(0, 1, [2, 0, 0], [0, 0, 0, 0, 1]),
            pairing(2, 3, [1, 2, 1], [0, 0, 2, 0, 0]),
        ];
        let s = standings(&names, &pairings, true).unwrap();
        assert_eq!(s.groups, 2);
        assert_eq!(
            standings_notes(&s),
            [
                "note: the engines form 2 groups that never played each other; ratings compare \
                 only within a group:",
                "  group 1: A, B",
                "  group 2: C, D",
                "note: A, B won every game or lost every game against part of the list: no \
                 finite rating fits that alone, so their group is rated with BayesElo's prior \
                 of 2 virtual draws between every two engines that played each other",
            ]
        );
        let (names, pairings) = round_robin();
        assert!(standings_notes(&standings(&names, &pairings, true).unwrap()).is_empty());
    }

    /// Issue 18, items 1, 2 and 15: a tournament in which A won all 16 of its games against
    /// B, which played C evenly. The standings said LOS 72.8 % over B, and "mean rating 0" held only
    /// without A; an engine that has not played was listed as `0 0`.
    #[test]
    fn a_sweep_in_a_tournament() {
        let names = names(&["A", "B", "C", "D"]);
        let pairings = [
            pairing(0, 1, [16, 0, 0], [0, 0, 0, 0, 8]),
            pairing(1, 2, [5, 6, 5], [1, 1, 4, 1, 1]),
            pairing(0, 3, [0, 0, 0], [0; 5]),
        ];
        let s = standings(&names, &pairings, true).unwrap();
        let a = &s.engines[0];
        assert_eq!(a.name, "A");
        assert!(a.separated);
        let los = a.los_next.unwrap();
        assert!((0.99..1.0).contains(&los), "{los}");
        assert!(a.half_width.is_finite() && a.half_width < 400.0, "{a:?}");
        // Over the engines with games, the mean is zero to the table's rounding.
        let printed: Vec<f64> = s
            .engines
            .iter()
            .filter(|r| r.games > 0)
            .map(|r| r.elo.round())
            .collect();
        let mean = printed.iter().sum::<f64>() / printed.len() as f64;
        assert!(mean.abs() <= 0.5, "{printed:?}");
        let table = standings_table(&s);
        let line = |name: &str| {
            table
                .lines()
                .find(|l| l.split_whitespace().nth(1) == Some(name))
                .unwrap()
                .to_owned()
        };
        // Its LOS column (the last) reads as the standings' LOS, never as a certainty.
        let a_los = line("A").split_whitespace().last().unwrap().to_owned();
        assert_eq!(a_los, format!("{}%", percent(los, 1)));
        assert_ne!(a_los, "100.0%", "{table}");
        // D has not played: no rating, no interval.
        let d: Vec<String> = line("D").split_whitespace().map(str::to_owned).collect();
        assert_eq!(d, ["4", "D", "-", "-", "0", "-", "-"], "{table}");
    }

    #[test]
    fn serde_round_trip() {
        let (names, pairings) = round_robin();
        let s = standings(&names, &pairings, true).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        let back: Standings = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        // Engine rows use `arbiter rate --json`'s names.
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in [
            "rank",
            "name",
            "elo",
            "half_width",
            "games",
            "score",
            "draw_ratio",
            "los_next",
        ] {
            assert!(value["engines"][0].get(key).is_some(), "{key}");
        }
        assert!(value["crosstable"]["cells"][0][0].is_null());
    }

    /// The table: cutechess's layout to the character, the name column as wide as the longest
    /// name, no "-0", and LOS blank on the last line; `arbiter rate` prints the same table from
    /// its rating list.
    #[test]
    fn table_as_cutechess() {
        let row = |rank, name: &str, elo, half_width, games, score, los_next| StandingsRow {
            rank,
            engine: rank - 1,
            name: name.to_owned(),
            elo,
            half_width,
            elo_ci: [elo - half_width, elo + half_width],
            games,
            wins: 0,
            draws: 0,
            losses: 0,
            score,
            draw_ratio: score.map(|_| 0.25),
            los_next,
            group: 0,
            separated: false,
        };
        let rows = [
            row(1, "Alpha", 35.4, 20.6, 120, Some(0.55), Some(0.9731)),
            row(
                2,
                "Bravo Engine With A Very Long Name 1.0",
                -0.4,
                19.5,
                120,
                Some(0.5),
                Some(0.5),
            ),
            row(3, "Charlie", -35.0, 21.0, 120, Some(0.45), None),
        ];
        assert_eq!(
            table(&rows),
            "Rank Name                                       Elo     +/-   Games   Score   Draws     LOS\n\
             \x20  1 Alpha                                       35      21     120   55.0%   25.0%   97.3%\n\
             \x20  2 Bravo Engine With A Very Long Name 1.0       0      20     120   50.0%   25.0%   50.0%\n\
             \x20  3 Charlie                                    -35      21     120   45.0%   25.0%\n"
        );
        // One renderer: a rating list of the same games prints the standings' table.
        let (names, pairings) = round_robin();
        let s = standings(&names, &pairings, false).unwrap();
        let encounters: Vec<Encounter> = pairings
            .iter()
            .map(|p| {
                let t = p.totals;
                Encounter::games(
                    p.first,
                    p.second,
                    Trinomial::from_wdl(t.wins, t.draws, t.losses),
                )
            })
            .collect();
        let list = rate(&names, &encounters, Anchor::MeanZero).unwrap();
        assert_eq!(rating_table(&list), standings_table(&s));
    }
}
