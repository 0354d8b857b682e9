//! Rating lists: maximum-likelihood Elo ratings of any number of engines from all their games,
//! as Ordo and BayesElo compute them from a PGN file and as a tournament prints its standings.
//!
//! # The model, and why this one
//!
//! Bradley-Terry on the logistic Elo scale with a draw counted as half a win and half a loss
//! (Ordo's model): engine i's expected score against j is `L(r_i - r_j)`, `L` the logistic
//! curve of [`crate::elo::score_from_elo`], and the ratings maximize
//! `Σ points_ij ln L(r_i - r_j) + (games_ij - points_ij) ln L(r_j - r_i)`.
//! At the maximum every engine's expected total score equals its actual score. For two engines
//! that makes the rating difference exactly `400 log10(s / (1 - s))` of their score `s`: the
//! match Elo [`crate::estimate::elo`] prints for the same games. The usual draw models do not
//! have that property, which is why they were not chosen:
//! - BayesElo's drawelo (`P(win) = L(Δ - drawelo)`) rates on its own, wider scale: two engines
//!   scoring 60 % with 40 % draws (40 wins, 20 losses) are 85 BayesElo apart, but 70 Elo apart on the scale of
//!   every other number arbiter, fishtest and cutechess print.
//! - Davidson's model rates two engines `400 log10(W / L)` apart, ignoring draws in the
//!   difference: 60 % with 40 % draws (40 wins, 20 losses) becomes 120.
//!
//! Draws still matter for the intervals, and are modelled there: a drawn game carries less
//! variance than the `L(1 - L)` a half-point model assumes, so the covariance is the likelihood's
//! curvature (its observed Fisher information `I`) corrected by the observed per-game variance of
//! each pairing's scores, `I⁻¹ J I⁻¹` with `J = Σ Var(points_ij)` (the "sandwich" of
//! quasi-likelihood). The variance of a pairing is that of its W/D/L counts, or of its
//! colour-swapped pairs when the games were played in pairs, exactly as the match statistics
//! take it; for two engines the interval is fishtest's trinomial or pentanomial one, stated by
//! the delta method on the Elo scale. Colours are not modelled: every arbiter, cutechess and
//! fastchess schedule gives each engine both colours equally.
//!
//! # Hard cases
//!
//! - **A perfect score.** An engine that won (or lost) every game, or a set of engines that
//!   scored every point against the rest, has no finite maximum-likelihood rating. Such a group
//!   takes BayesElo's prior, [`crate::VIRTUAL_DRAWS`] virtual draws between every two of its
//!   engines that played each other (a virtual pair of draws when they played in pairs): the
//!   maximum is then finite and the likelihood's curvature there gives an interval and LOS
//!   that say what a sweep says, near-certain superiority by an uncertain margin. Ten straight
//!   wins rate two engines 416 ± 239 apart with LOS 99.97 %, 100 of them 802 ± 241 with LOS
//!   1 - 3.4e-11, the numbers [`crate::estimate::elo`] gives the same games. fishtest's
//!   regularization of zero counts alone (0.001 of a game) would put them 1930 apart with an
//!   interval of ±4000 and a LOS of 68 %. The engine is marked [`RatedEngine::separated`]: its
//!   rating leans on the prior. A group with a pairing whose spread was never observed
//!   ([`crate::Sample::is_degenerate`]: every pair of the pairing 1½–½, say) takes the prior
//!   too, since its interval would otherwise be the regularization alone. Every other group is
//!   fitted to its counts alone, which keeps the two-engine case equal to the match Elo.
//! - **Groups that never met.** Ratings of engines in different connected components of the
//!   "played each other" graph are not comparable. Each group is rated on its own and centred
//!   on the anchor (the anchor's group on the anchor engine, the others on their mean);
//!   [`RatingList::groups`] says how many there are and LOS is not given across groups.
//! - **One engine, no games.** No games at all is [`StatsError::NoGames`]. An engine listed
//!   but without games is listed last, with no score; its `elo` is the anchor's centre and its
//!   `half_width` zero only as placeholders ([`RatedEngine::games`] is zero), which the tables
//!   print as `-`.
//!
//! # Numerics
//!
//! Newton's method on the concave log-likelihood, with one engine of each group held at zero
//! and a halving line search, from all ratings equal; dense linear algebra, so a list of `m`
//! engines costs `O(m³)` per step: 30 ms for a round robin of 100 engines, 0.3 s for 300.
//! Games enter only through the counts of each pairing, so the number of games costs nothing
//! beyond counting them.

use std::collections::BTreeMap;

use crate::elo::{normal_cdf, z_95, ELO_PER_NAT};
use crate::pdf::Pdf;
use crate::results::{Pentanomial, Sample, Trinomial, MAX_GAMES};
use crate::StatsError;

/// Newton stops when no rating moves by more than this many natural-log units (2e-8 Elo).
const NEWTON_TOLERANCE: f64 = 1e-10;

/// Newton doubles its correct digits per step near the maximum; far from it (a regularized
/// perfect score sits some 20 units out) each step gains about one unit, so this is generous.
const NEWTON_STEPS: usize = 200;

/// The results of one engine against another, from the first's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encounter {
    pub first: usize,
    pub second: usize,
    /// Wins, draws and losses of `first`: the table's counts, and the model's data when the
    /// games were not played in colour-swapped pairs.
    pub games: Trinomial,
    /// The same games as colour-swapped pairs, when they were played so: then the interval
    /// uses the pairs' variance, as the match statistics do, and opening bias cancels in it.
    pub pairs: Option<Pentanomial>,
}

impl Encounter {
    /// Single games (a PGN file, or unpaired games).
    pub fn games(first: usize, second: usize, games: Trinomial) -> Encounter {
        Encounter {
            first,
            second,
            games,
            pairs: None,
        }
    }

    /// Games played in colour-swapped pairs; `games` counts the same games one by one.
    pub fn pairs(first: usize, second: usize, games: Trinomial, pairs: Pentanomial) -> Encounter {
        Encounter {
            first,
            second,
            games,
            pairs: Some(pairs),
        }
    }

    /// The same results from the second engine's side.
    fn mirrored(&self) -> Encounter {
        Encounter {
            first: self.second,
            second: self.first,
            games: Trinomial::from_wdl(self.games.losses, self.games.draws, self.games.wins),
            pairs: self.pairs.map(|p| {
                let [ll, ld, dd, dw, ww] = p.counts();
                Pentanomial::from_counts([ww, dw, dd, ld, ll])
            }),
        }
    }
}

/// Where the scale sits: rating lists are differences, so one number has to be fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    /// The mean rating of the engines with games is zero (BayesElo's and Ordo's default), in
    /// every group of engines connected by games.
    MeanZero,
    /// Engine `engine` (an index into the names) is rated `elo`, as CCRL anchors its lists.
    Engine { engine: usize, elo: f64 },
}

/// One line of a rating list.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedEngine {
    /// Index into the names given to [`rate`].
    pub engine: usize,
    pub name: String,
    pub elo: f64,
    /// Half the width of the 95% interval of `elo`, relative to the anchor: zero for the
    /// anchor engine itself, whose rating is given, not measured.
    pub half_width: f64,
    /// Every game of this engine, from its side.
    pub results: Trinomial,
    /// Likelihood of superiority over the next engine of the list, `Φ(Δ / σ(Δ))`; `None` for
    /// the last engine of a group, since ratings of different groups do not compare.
    pub los_next: Option<f64>,
    /// Index of the engine's group (connected component of the games), 0 for the first listed.
    pub group: usize,
    /// The engine's results are perfectly separated from part of its group (it, or a set of
    /// engines including it, won every game or lost every game against the others), so its
    /// group was rated with BayesElo's prior of virtual draws and its rating leans on it.
    pub separated: bool,
}

impl RatedEngine {
    pub fn games(&self) -> u64 {
        self.results.games()
    }

    /// Points per game; `None` without games.
    pub fn score(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| self.results.points() / games as f64)
    }

    /// Draws per game; `None` without games.
    pub fn draw_ratio(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| self.results.draws as f64 / games as f64)
    }

    /// `[elo - half_width, elo + half_width]`.
    pub fn interval(&self) -> (f64, f64) {
        (self.elo - self.half_width, self.elo + self.half_width)
    }
}

/// Engines best first, within groups: the first group (the anchor's, else the largest), then
/// the others, then engines without games.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingList {
    pub engines: Vec<RatedEngine>,
    /// Groups of engines connected by games; more than one means some ratings do not compare.
    pub groups: usize,
    pub anchor: Anchor,
}

/// Maximum-likelihood ratings of `names.len()` engines from their encounters; see the module
/// documentation for the model. Encounters may repeat a pairing, in either order: they are
/// added up (a pairing of which some encounters come without pairs is read game by game).
/// Tournaments call this for their standings, `arbiter rate` for a PGN's list.
pub fn rate(
    names: &[String],
    encounters: &[Encounter],
    anchor: Anchor,
) -> Result<RatingList, StatsError> {
    let engines = names.len();
    if let Anchor::Engine { engine, elo } = anchor {
        check_engine(engine, engines)?;
        if !elo.is_finite() {
            return Err(StatsError::NotFinite {
                name: "anchor",
                value: elo,
            });
        }
    }
    let table = Crosstable::new(engines, encounters)?;
    if table.pairings.is_empty() {
        return Err(StatsError::NoGames);
    }
    let mut groups = table.groups();
    // The anchor's group first, then larger groups first, then by first engine.
    groups.sort_by_key(|g| {
        (
            !g.contains(&anchor_engine(anchor)),
            usize::MAX - g.len(),
            g[0],
        )
    });
    let center = match anchor {
        Anchor::MeanZero => 0.0,
        Anchor::Engine { elo, .. } => elo,
    };
    let mut lines = Vec::with_capacity(engines);
    for (index, members) in groups.iter().enumerate() {
        lines.extend(rate_group(&table, names, members, anchor, index)?);
    }
    // Engines without games: a group each, after the rest.
    let mut idle: Vec<usize> = (0..engines)
        .filter(|&e| table.totals[e].games() == 0)
        .collect();
    idle.sort_by(|&a, &b| names[a].cmp(&names[b]).then(a.cmp(&b)));
    for (k, engine) in idle.into_iter().enumerate() {
        lines.push(RatedEngine {
            engine,
            name: names[engine].clone(),
            elo: center,
            half_width: 0.0,
            results: Trinomial::default(),
            los_next: None,
            group: groups.len() + k,
            separated: false,
        });
    }
    Ok(RatingList {
        engines: lines,
        groups: groups.len(),
        anchor,
    })
}

fn anchor_engine(anchor: Anchor) -> usize {
    match anchor {
        Anchor::Engine { engine, .. } => engine,
        Anchor::MeanZero => usize::MAX,
    }
}

fn check_engine(index: usize, engines: usize) -> Result<(), StatsError> {
    if index >= engines {
        return Err(StatsError::UnknownEngine { index, engines });
    }
    Ok(())
}

/// One pairing's data as the model sees it: regularized counts, from engine `a`'s side.
struct Pairing {
    a: usize,
    b: usize,
    /// Raw counts from `a`'s side, for the table and the separation test.
    games: Trinomial,
    /// What the model reads: the games, or their pairs; without the prior.
    sample: Sample,
    /// Regularized entries (games or pairs) and their score distribution.
    entries: f64,
    games_per_entry: f64,
    pdf: Pdf,
}

impl Pairing {
    fn new(a: usize, b: usize, games: Trinomial, sample: Sample) -> Result<Pairing, StatsError> {
        let empirical = sample.empirical()?;
        Ok(Pairing {
            a,
            b,
            games,
            sample,
            entries: empirical.entries,
            games_per_entry: if sample.is_pentanomial() { 2.0 } else { 1.0 },
            pdf: empirical.pdf,
        })
    }

    /// The pairing with BayesElo's prior of [`crate::VIRTUAL_DRAWS`] added to its data.
    fn with_prior(&self) -> Result<Pairing, StatsError> {
        let mut p = Pairing::new(self.a, self.b, self.games, self.sample.with_virtual_draws())?;
        p.sample = self.sample;
        Ok(p)
    }

    /// Regularized games: the weight of the pairing in the likelihood.
    fn weight(&self) -> f64 {
        self.entries * self.games_per_entry
    }

    /// `a`'s regularized points.
    fn points(&self) -> f64 {
        self.weight() * self.pdf.mean()
    }

    /// The variance of `a`'s points about an expected score `e` per game: the pairing's share
    /// of the sandwich's middle term.
    fn points_variance(&self, e: f64) -> f64 {
        let spread: f64 = self
            .pdf
            .values()
            .iter()
            .zip(self.pdf.probabilities())
            .map(|(x, p)| p * (x - e).powi(2))
            .sum();
        self.entries * self.games_per_entry.powi(2) * spread
    }
}

/// Every pairing that played, added up.
struct Crosstable {
    engines: usize,
    pairings: Vec<Pairing>,
    /// Every game of each engine, from its side.
    totals: Vec<Trinomial>,
}

impl Crosstable {
    fn new(engines: usize, encounters: &[Encounter]) -> Result<Crosstable, StatsError> {
        // Keyed by (lower, higher) index, counted from the lower's side. `None` pairs once any
        // encounter of the pairing came without them: the pairing is then read game by game.
        let mut cells: BTreeMap<(usize, usize), (Trinomial, Option<Pentanomial>)> = BTreeMap::new();
        for encounter in encounters {
            check_engine(encounter.first, engines)?;
            check_engine(encounter.second, engines)?;
            if encounter.first == encounter.second {
                return Err(StatsError::SelfPairing {
                    engine: encounter.first,
                });
            }
            if let Some(pairs) = encounter.pairs {
                if pairs.games() != encounter.games.games()
                    || pairs.points() != encounter.games.points()
                {
                    return Err(StatsError::PairsDisagree {
                        first: encounter.first,
                        second: encounter.second,
                    });
                }
            }
            let e = if encounter.first < encounter.second {
                *encounter
            } else {
                encounter.mirrored()
            };
            let cell = cells
                .entry((e.first, e.second))
                .or_insert((Trinomial::default(), Some(Pentanomial::default())));
            cell.0 = add_trinomials(cell.0, e.games);
            cell.1 = match (cell.1, e.pairs) {
                (Some(sum), Some(p)) => Some(add_pentanomials(sum, p)),
                _ => None,
            };
        }
        let mut totals = vec![Trinomial::default(); engines];
        let mut total_games = vec![0u128; engines];
        let mut pairings = Vec::new();
        for ((a, b), (games, pairs)) in cells {
            if games.games() == 0 {
                continue;
            }
            let sample = match pairs {
                Some(p) => Sample::from(p),
                None => Sample::from(games),
            };
            for (engine, side) in [(a, games), (b, mirror(games))] {
                totals[engine] = add_trinomials(totals[engine], side);
                total_games[engine] += u128::from(side.games());
            }
            pairings.push(Pairing::new(a, b, games, sample)?);
        }
        if let Some(&games) = total_games.iter().find(|&&g| g > u128::from(MAX_GAMES)) {
            return Err(StatsError::TooManyGames { games });
        }
        Ok(Crosstable {
            engines,
            pairings,
            totals,
        })
    }

    /// Connected components of engines that played, each sorted by engine index.
    fn groups(&self) -> Vec<Vec<usize>> {
        let mut parent: Vec<usize> = (0..self.engines).collect();
        for p in &self.pairings {
            let (ra, rb) = (find(&mut parent, p.a), find(&mut parent, p.b));
            parent[ra.max(rb)] = ra.min(rb);
        }
        let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for engine in 0..self.engines {
            if self.totals[engine].games() > 0 {
                let root = find(&mut parent, engine);
                by_root.entry(root).or_default().push(engine);
            }
        }
        by_root.into_values().collect()
    }
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn mirror(t: Trinomial) -> Trinomial {
    Trinomial::from_wdl(t.losses, t.draws, t.wins)
}

/// Saturating: [`Sample::check`] then refuses sums that large.
fn add_trinomials(a: Trinomial, b: Trinomial) -> Trinomial {
    Trinomial::from_wdl(
        a.wins.saturating_add(b.wins),
        a.draws.saturating_add(b.draws),
        a.losses.saturating_add(b.losses),
    )
}

fn add_pentanomials(a: Pentanomial, b: Pentanomial) -> Pentanomial {
    let (x, y) = (a.counts(), b.counts());
    Pentanomial::from_counts(std::array::from_fn(|i| x[i].saturating_add(y[i])))
}

/// The fitted strengths (natural-log units) of one group and their covariance.
struct GroupFit {
    /// `theta[k]` of `members[k]`; `theta[0] = 0`.
    theta: Vec<f64>,
    /// Full `m × m` covariance, row and column 0 zero (the engine held fixed).
    covariance: Matrix,
}

/// Rates the engines of one connected group; best first.
fn rate_group(
    table: &Crosstable,
    names: &[String],
    members: &[usize],
    anchor: Anchor,
    group: usize,
) -> Result<Vec<RatedEngine>, StatsError> {
    let local: BTreeMap<usize, usize> = members.iter().enumerate().map(|(k, &e)| (e, k)).collect();
    // Each pairing as (local a, local b, pairing).
    let raw: Vec<(usize, usize, &Pairing)> = table
        .pairings
        .iter()
        .filter_map(|p| Some((*local.get(&p.a)?, *local.get(&p.b)?, p)))
        .collect();
    let separated = separated(members.len(), &raw);
    // Without a finite maximum, or with a pairing whose spread was not observed (its interval
    // would be fishtest's regularization alone), every pairing of the group takes the prior's
    // virtual draws: the pairing alone would take them as a match's statistics.
    let needs_prior =
        separated.contains(&true) || raw.iter().any(|(_, _, p)| p.sample.is_degenerate());
    let with_prior: Vec<Pairing> = if needs_prior {
        raw.iter()
            .map(|(_, _, p)| p.with_prior())
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let pairings: Vec<(usize, usize, &Pairing)> = if with_prior.is_empty() {
        raw
    } else {
        raw.iter()
            .zip(&with_prior)
            .map(|(&(a, b, _), p)| (a, b, p))
            .collect()
    };
    let fit = fit_group(members.len(), &pairings)?;
    // The centre: the anchor engine, or the mean of the group.
    let weights: Vec<f64> = match anchor {
        Anchor::Engine { engine, .. } if local.contains_key(&engine) => {
            let mut w = vec![0.0; members.len()];
            w[local[&engine]] = 1.0;
            w
        }
        _ => vec![1.0 / members.len() as f64; members.len()],
    };
    let center_elo = match anchor {
        Anchor::MeanZero => 0.0,
        Anchor::Engine { elo, .. } => elo,
    };
    let center_theta: f64 = weights.iter().zip(&fit.theta).map(|(w, t)| w * t).sum();
    let cov_w = fit.covariance.times(&weights);
    let var_center: f64 = weights.iter().zip(&cov_w).map(|(w, c)| w * c).sum();
    let z = z_95();
    let mut lines: Vec<RatedEngine> = members
        .iter()
        .enumerate()
        .map(|(k, &engine)| {
            let var = fit.covariance.get(k, k) - 2.0 * cov_w[k] + var_center;
            RatedEngine {
                engine,
                name: names[engine].clone(),
                elo: center_elo + ELO_PER_NAT * (fit.theta[k] - center_theta),
                half_width: z * ELO_PER_NAT * var.max(0.0).sqrt(),
                results: table.totals[engine],
                los_next: None,
                group,
                separated: separated[k],
            }
        })
        .collect();
    // Ranked on the strengths themselves, so that where the anchor puts the scale cannot
    // reorder engines that the data leave level.
    // Strengths equal in the data come out of the solver equal to its tolerance, not to the
    // last bit: rounded to it, they rank by name.
    let level = |k: usize| (fit.theta[k] / (10.0 * NEWTON_TOLERANCE)).round() as i64;
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&i, &j| {
        level(j)
            .cmp(&level(i))
            .then(names[members[i]].cmp(&names[members[j]]))
            .then(members[i].cmp(&members[j]))
    });
    // LOS of each engine over the next one down.
    for w in order.windows(2) {
        let (i, j) = (w[0], w[1]);
        let diff = fit.theta[i] - fit.theta[j];
        let c = &fit.covariance;
        let sd = (c.get(i, i) + c.get(j, j) - 2.0 * c.get(i, j))
            .max(0.0)
            .sqrt();
        lines[i].los_next = Some(los(diff, sd));
    }
    let mut ranked: Vec<Option<RatedEngine>> = lines.into_iter().map(Some).collect();
    Ok(order.iter().filter_map(|&k| ranked[k].take()).collect())
}

/// `Φ(diff / sd)`, with a zero deviation (identical certain ratings) made explicit.
fn los(diff: f64, sd: f64) -> f64 {
    if sd > 0.0 {
        normal_cdf(diff / sd)
    } else if diff > 0.0 {
        1.0
    } else if diff < 0.0 {
        0.0
    } else {
        0.5
    }
}

/// Newton's method for the group's strengths, then the sandwich covariance.
fn fit_group(m: usize, pairings: &[(usize, usize, &Pairing)]) -> Result<GroupFit, StatsError> {
    let mut theta = vec![0.0; m];
    if m == 1 {
        return Ok(GroupFit {
            theta,
            covariance: Matrix::zeros(1),
        });
    }
    let mut converged = false;
    for _ in 0..NEWTON_STEPS {
        let (gradient, information) = derivatives(m, pairings, &theta);
        let chol = information.reduced().cholesky().ok_or(NO_CONVERGENCE)?;
        let step = chol.solve(&gradient[1..]);
        let before = log_likelihood(pairings, &theta);
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            let trial: Vec<f64> = std::iter::once(0.0)
                .chain(theta[1..].iter().zip(&step).map(|(x, s)| x + t * s))
                .collect();
            let after = log_likelihood(pairings, &trial);
            if after.is_finite() && after >= before - 1e-12 * before.abs() {
                theta = trial;
                accepted = true;
                break;
            }
            t /= 2.0;
        }
        if !accepted {
            return Err(NO_CONVERGENCE);
        }
        if step.iter().all(|s| (t * s).abs() < NEWTON_TOLERANCE) {
            converged = true;
            break;
        }
    }
    if !converged || theta.iter().any(|t| !t.is_finite()) {
        return Err(NO_CONVERGENCE);
    }
    // Sandwich: I⁻¹ J I⁻¹ on the free strengths.
    let (_, information) = derivatives(m, pairings, &theta);
    let inverse = information
        .reduced()
        .cholesky()
        .ok_or(NO_CONVERGENCE)?
        .inverse();
    let mut middle = Matrix::zeros(m);
    for &(a, b, p) in pairings {
        let e = logistic(theta[a] - theta[b]);
        middle.add_difference(a, b, p.points_variance(e));
    }
    let reduced = inverse.product(&middle.reduced()).product(&inverse);
    let mut covariance = Matrix::zeros(m);
    for i in 1..m {
        for j in 1..m {
            covariance.set(i, j, reduced.get(i - 1, j - 1));
        }
    }
    if covariance.data.iter().any(|x| !x.is_finite()) {
        return Err(NO_CONVERGENCE);
    }
    Ok(GroupFit { theta, covariance })
}

const NO_CONVERGENCE: StatsError = StatsError::NoConvergence {
    what: "the rating list's maximum likelihood",
};

/// The log-likelihood's gradient and its negated Hessian (the Fisher information).
fn derivatives(
    m: usize,
    pairings: &[(usize, usize, &Pairing)],
    theta: &[f64],
) -> (Vec<f64>, Matrix) {
    let mut gradient = vec![0.0; m];
    let mut information = Matrix::zeros(m);
    for &(a, b, p) in pairings {
        let e = logistic(theta[a] - theta[b]);
        let residual = p.points() - p.weight() * e;
        gradient[a] += residual;
        gradient[b] -= residual;
        information.add_difference(a, b, p.weight() * e * (1.0 - e));
    }
    (gradient, information)
}

fn log_likelihood(pairings: &[(usize, usize, &Pairing)], theta: &[f64]) -> f64 {
    pairings
        .iter()
        .map(|&(a, b, p)| {
            let d = theta[a] - theta[b];
            let points = p.points();
            points * log_logistic(d) + (p.weight() - points) * log_logistic(-d)
        })
        .sum()
}

/// `1 / (1 + e^-x)` without overflow for large |x|.
fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `ln(1 / (1 + e^-x))` without overflow or cancellation.
fn log_logistic(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// Which engines' results are perfectly separated from others of their group: those outside
/// the largest strongly connected component of "scored a point against" (a draw counts), or
/// every engine of the group when no component is the largest. When the whole group is one
/// component, the likelihood has a finite maximum without any regularization (Zermelo's
/// condition, with draws as half points).
fn separated(m: usize, pairings: &[(usize, usize, &Pairing)]) -> Vec<bool> {
    let mut scored_against = vec![Vec::new(); m];
    for &(a, b, p) in pairings {
        if p.games.points() > 0.0 {
            scored_against[a].push(b);
        }
        if mirror(p.games).points() > 0.0 {
            scored_against[b].push(a);
        }
    }
    let components = strongly_connected(&scored_against);
    let mut sizes = BTreeMap::<usize, usize>::new();
    for &c in &components {
        *sizes.entry(c).or_default() += 1;
    }
    let largest = sizes.values().copied().max().unwrap_or(0);
    let mut tops = sizes.iter().filter(|&(_, &size)| size == largest);
    let main = match (tops.next(), tops.next()) {
        (Some((&c, _)), None) => Some(c),
        _ => None,
    };
    components.iter().map(|&c| Some(c) != main).collect()
}

/// Tarjan's algorithm, iterative: a component number for every vertex, numbered so that the
/// lowest vertex of a component names it.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<usize> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut component = vec![usize::MAX; n];
    let mut counter = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (vertex, next edge to follow)
        let mut calls = vec![(root, 0usize)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut next)) = calls.last_mut() {
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                let name = *members.iter().min().unwrap_or(&v);
                for w in members {
                    component[w] = name;
                }
            }
        }
    }
    component
}

/// A dense square matrix, row-major: the lists are small enough that nothing sparse pays.
#[derive(Clone, Debug)]
struct Matrix {
    n: usize,
    data: Vec<f64>,
}

impl Matrix {
    fn zeros(n: usize) -> Matrix {
        Matrix {
            n,
            data: vec![0.0; n * n],
        }
    }

    fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.n + j]
    }

    fn set(&mut self, i: usize, j: usize, x: f64) {
        self.data[i * self.n + j] = x;
    }

    /// Adds `w (e_a - e_b)(e_a - e_b)ᵀ`: a pairing's term of a Laplacian-shaped matrix.
    fn add_difference(&mut self, a: usize, b: usize, w: f64) {
        let n = self.n;
        self.data[a * n + a] += w;
        self.data[b * n + b] += w;
        self.data[a * n + b] -= w;
        self.data[b * n + a] -= w;
    }

    /// Without row and column 0: the strength held at zero.
    fn reduced(&self) -> Matrix {
        let n = self.n - 1;
        let mut r = Matrix::zeros(n);
        for i in 0..n {
            for j in 0..n {
                r.set(i, j, self.get(i + 1, j + 1));
            }
        }
        r
    }

    fn times(&self, v: &[f64]) -> Vec<f64> {
        (0..self.n)
            .map(|i| (0..self.n).map(|j| self.get(i, j) * v[j]).sum())
            .collect()
    }

    fn product(&self, other: &Matrix) -> Matrix {
        let n = self.n;
        let mut p = Matrix::zeros(n);
        for i in 0..n {
            for k in 0..n {
                let x = self.get(i, k);
                if x == 0.0 {
                    continue;
                }
                for j in 0..n {
                    p.data[i * n + j] += x * other.data[k * n + j];
                }
            }
        }
        p
    }

    /// The lower Cholesky factor; `None` unless the matrix is numerically positive definite.
    fn cholesky(&self) -> Option<Cholesky> {
        let n = self.n;
        let mut l = Matrix::zeros(n);
        for j in 0..n {
            let mut d = self.get(j, j);
            for k in 0..j {
                d -= l.get(j, k).powi(2);
            }
            if !(d > 0.0 && d.is_finite()) {
                return None;
            }
            let d = d.sqrt();
            l.set(j, j, d);
            for i in j + 1..n {
                let mut s = self.get(i, j);
                for k in 0..j {
                    s -= l.get(i, k) * l.get(j, k);
                }
                l.set(i, j, s / d);
            }
        }
        Some(Cholesky { l })
    }
}

struct Cholesky {
    l: Matrix,
}

impl Cholesky {
    /// `x` with `L Lᵀ x = b`.
    fn solve(&self, b: &[f64]) -> Vec<f64> {
        let l = &self.l;
        let n = l.n;
        let mut y = b.to_vec();
        for i in 0..n {
            for k in 0..i {
                y[i] -= l.get(i, k) * y[k];
            }
            y[i] /= l.get(i, i);
        }
        for i in (0..n).rev() {
            for k in i + 1..n {
                y[i] -= l.get(k, i) * y[k];
            }
            y[i] /= l.get(i, i);
        }
        y
    }

    fn inverse(&self) -> Matrix {
        let n = self.l.n;
        let mut inv = Matrix::zeros(n);
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            for (i, x) in self.solve(&e).into_iter().enumerate() {
                inv.set(i, j, x);
            }
        }
        inv
    }
}
