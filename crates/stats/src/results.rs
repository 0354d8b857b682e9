//! Counted results: single games (trinomial) and colour-swapped game pairs (pentanomial).

use crate::pdf::Pdf;
use crate::StatsError;

/// fishtest replaces every zero count by this before any statistic, so that an all-draw or
/// loss-free sample still has a variance and a finite log-likelihood. Non-zero counts are left
/// alone; the regularized counts are real numbers.
pub const REGULARIZATION_EPSILON: f64 = 1e-3;

/// BayesElo's default prior: two virtual draws between every two engines that played each
/// other (one virtual pair of draws when the games were played in pairs). Arbiter adds it only
/// where the counts alone answer nothing: a score of 100 % or 0 %, where the likelihood has no
/// maximum, or every entry scoring the same uneven score, where no spread was observed (see
/// [`Sample::is_degenerate`]). 10 straight wins then read as 11 of 12 points, 416 Elo, instead
/// of the infinity no finite estimate can improve on. Everywhere else the counts are taken as
/// they are, so fishtest's figures are unchanged.
pub const VIRTUAL_DRAWS: u64 = 2;

/// The most games a sample may count: 2^52. Every statistic works on `f64`, which holds every
/// integer up to 2^53 exactly; a point total counts half points, so the games must stay below
/// 2^52 for the points too to be exact. Beyond it counts would be rounded silently (and sums of
/// `u64` counts could overflow), so [`Sample::check`] refuses such a sample. No real test comes
/// near: fishtest's largest runs are a few million games.
pub const MAX_GAMES: u64 = 1 << 52;

/// Wins, draws and losses of single games, from the tested engine's side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trinomial {
    pub losses: u64,
    pub draws: u64,
    pub wins: u64,
}

impl Trinomial {
    /// Named by the order people say it, wins first; stored low score to high.
    pub fn from_wdl(wins: u64, draws: u64, losses: u64) -> Self {
        Trinomial {
            losses,
            draws,
            wins,
        }
    }

    /// Saturates instead of overflowing; [`Sample::check`] refuses counts that large.
    pub fn games(&self) -> u64 {
        self.counts()
            .iter()
            .fold(0, |sum, &n| sum.saturating_add(n))
    }

    /// Counts ordered by score: `[L, D, W]`.
    pub fn counts(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }

    /// Points scored, a win being 1 and a draw ½.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
}

/// Game pairs (one opening played with both colours), bucketed by the pair's total score:
/// 0, ½, 1, 1½ and 2 points. A 1–1 pair may be two draws or a win and a loss; the two are
/// merged because they carry the same information about strength.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pentanomial {
    pub ll: u64,
    pub ld: u64,
    pub dd_wl: u64,
    pub dw: u64,
    pub ww: u64,
}

impl Pentanomial {
    /// The bucket of one pair, from the first engine's score in each of its two games in half
    /// points (0 loss, 1 draw, 2 win): the pair's total, so 0 = LL, 2 = DD or WL, 4 = WW.
    pub fn bucket(half_points: [u8; 2]) -> usize {
        debug_assert!(half_points.iter().all(|&h| h <= 2));
        usize::from(half_points[0] + half_points[1])
    }

    /// From `[LL, LD, DD+WL, DW, WW]`, the order fishtest and fastchess print.
    pub fn from_counts(counts: [u64; 5]) -> Self {
        let [ll, ld, dd_wl, dw, ww] = counts;
        Pentanomial {
            ll,
            ld,
            dd_wl,
            dw,
            ww,
        }
    }

    pub fn counts(&self) -> [u64; 5] {
        [self.ll, self.ld, self.dd_wl, self.dw, self.ww]
    }

    /// Saturates instead of overflowing; [`Sample::check`] refuses counts that large.
    pub fn pairs(&self) -> u64 {
        self.counts()
            .iter()
            .fold(0, |sum, &n| sum.saturating_add(n))
    }

    /// Saturates instead of overflowing; [`Sample::check`] refuses counts that large.
    pub fn games(&self) -> u64 {
        self.pairs().saturating_mul(2)
    }

    /// Points scored over all games of all pairs.
    pub fn points(&self) -> f64 {
        self.counts()
            .iter()
            .enumerate()
            .map(|(i, &n)| 0.5 * i as f64 * n as f64)
            .sum()
    }
}

/// A sample in either form. Every statistic takes one: the pentanomial form is what arbiter
/// records (ARCHITECTURE.md, "Pairs"), the trinomial form is what older tools and users have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sample {
    Trinomial(Trinomial),
    Pentanomial(Pentanomial),
}

impl From<Trinomial> for Sample {
    fn from(t: Trinomial) -> Self {
        Sample::Trinomial(t)
    }
}

impl From<Pentanomial> for Sample {
    fn from(p: Pentanomial) -> Self {
        Sample::Pentanomial(p)
    }
}

impl Sample {
    /// The sample a run's statistics are computed on, from its counts (the first engine's
    /// wins, draws and losses, and its pairs by pentanomial bucket): the pairs when the run was
    /// played in colour-swapped pairs, its games as a trinomial otherwise. An unpaired run's
    /// "pairs" are two consecutive games from different openings, whose joint score says
    /// nothing a game does not, so their buckets are not a sample.
    pub fn of_run(paired: bool, [wins, draws, losses]: [u64; 3], pentanomial: [u64; 5]) -> Sample {
        if paired {
            Sample::from(Pentanomial::from_counts(pentanomial))
        } else {
            Sample::from(Trinomial::from_wdl(wins, draws, losses))
        }
    }
}

/// The regularized counts and the empirical distribution of one entry's score.
#[derive(Clone, Debug)]
pub(crate) struct Empirical {
    /// Regularized number of entries (games or pairs): fishtest's `N`.
    pub entries: f64,
    pub pdf: Pdf,
}

impl Sample {
    /// Raw counts low score to high, and how many of the five slots are used.
    fn raw(&self) -> ([u64; 5], usize) {
        match self {
            Sample::Trinomial(t) => {
                let [l, d, w] = t.counts();
                ([l, d, w, 0, 0], 3)
            }
            Sample::Pentanomial(p) => (p.counts(), 5),
        }
    }

    /// Entries counted: games for trinomial data, pairs for pentanomial data. Saturates
    /// instead of overflowing; [`Sample::check`] refuses counts that large.
    pub fn entries(&self) -> u64 {
        let (counts, len) = self.raw();
        counts[..len]
            .iter()
            .fold(0, |sum, &n| sum.saturating_add(n))
    }

    /// Whether every statistic can be computed on this sample: at least one game and at most
    /// [`MAX_GAMES`]. Every statistic of this crate asks this first; a caller that prints the
    /// counts before any statistic should too.
    pub fn check(&self) -> Result<(), StatsError> {
        let (counts, len) = self.raw();
        let entries: u128 = counts[..len].iter().map(|&n| u128::from(n)).sum();
        let games = entries * self.games_per_entry() as u128;
        if games == 0 {
            return Err(StatsError::NoGames);
        }
        if games > u128::from(MAX_GAMES) {
            return Err(StatsError::TooManyGames { games });
        }
        Ok(())
    }

    pub fn games(&self) -> u64 {
        match self {
            Sample::Trinomial(t) => t.games(),
            Sample::Pentanomial(p) => p.games(),
        }
    }

    pub fn is_pentanomial(&self) -> bool {
        matches!(self, Sample::Pentanomial(_))
    }

    /// Games per entry: the factor between a pair's average score and a game's variance.
    pub(crate) fn games_per_entry(&self) -> f64 {
        if self.is_pentanomial() {
            2.0
        } else {
            1.0
        }
    }

    /// Every entry scored the same, and not an even score: every game won, or every game lost
    /// (a sweep), or in pairs every pair won twice, lost twice, or every pair 1½–½ the same way
    /// (three pairs of a win and a draw). Such a sample has no spread but fishtest's
    /// regularization (0.001 of a game), so its interval, LOS and nElo blow up (three pairs of
    /// a win and a draw: nElo 3472 ± 71549), and a sweep has no finite Elo either. An even
    /// score (every game drawn, every pair 1–1) leaves Elo 0 and t-value 0, which fishtest's
    /// figures state well, and an empty sample is neither.
    pub fn is_degenerate(&self) -> bool {
        let (counts, len) = self.raw();
        let used: Vec<usize> = (0..len).filter(|&i| counts[i] > 0).collect();
        matches!(used.as_slice(), [i] if 2 * *i != len - 1)
    }

    /// The sample with BayesElo's prior added: [`VIRTUAL_DRAWS`] drawn games, or half as many
    /// pairs of two draws (a pair scoring 1–1).
    pub fn with_virtual_draws(&self) -> Sample {
        match *self {
            Sample::Trinomial(t) => Sample::Trinomial(Trinomial {
                draws: t.draws.saturating_add(VIRTUAL_DRAWS),
                ..t
            }),
            Sample::Pentanomial(p) => Sample::Pentanomial(Pentanomial {
                dd_wl: p.dd_wl.saturating_add(VIRTUAL_DRAWS / 2),
                ..p
            }),
        }
    }

    /// The sample every estimate is computed on: the counts themselves, or with
    /// [`VIRTUAL_DRAWS`] when they are degenerate ([`Sample::is_degenerate`]).
    pub fn with_prior_if_degenerate(&self) -> Sample {
        if self.is_degenerate() {
            self.with_virtual_draws()
        } else {
            *self
        }
    }

    /// Counts with zeros replaced by [`REGULARIZATION_EPSILON`], low score to high.
    pub fn regularized(&self) -> Vec<f64> {
        let (counts, len) = self.raw();
        counts[..len].iter().map(|&n| regularize(n)).collect()
    }

    pub(crate) fn empirical(&self) -> Result<Empirical, StatsError> {
        self.check()?;
        let (counts, len) = self.raw();
        let mut regularized = [0.0; 5];
        for (r, &n) in regularized.iter_mut().zip(&counts[..len]) {
            *r = regularize(n);
        }
        let entries: f64 = regularized[..len].iter().sum();
        let mut probabilities = [0.0; 5];
        for (p, r) in probabilities.iter_mut().zip(&regularized[..len]) {
            *p = r / entries;
        }
        Ok(Empirical {
            entries,
            pdf: Pdf::on_even_support(&probabilities[..len]),
        })
    }
}

fn regularize(n: u64) -> f64 {
    if n == 0 {
        REGULARIZATION_EPSILON
    } else {
        n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pentanomial_counts_games_and_points() {
        let p = Pentanomial::from_counts([1, 2, 3, 4, 5]);
        assert_eq!(p.pairs(), 15);
        assert_eq!(p.games(), 30);
        // 2·0.5 + 3·1 + 4·1.5 + 5·2
        assert_eq!(p.points(), 20.0);
    }

    /// A paired run's pairs and an unpaired run's games, from the same counts: the pairs give
    /// a pair's score the pentanomial spread, the games their own W/D/L.
    #[test]
    fn a_run_is_sampled_by_its_pairs_or_its_games() {
        let (wdl, penta) = ([7, 4, 3], [1, 1, 2, 2, 1]);
        let paired = Sample::of_run(true, wdl, penta);
        assert_eq!(paired, Sample::Pentanomial(Pentanomial::from_counts(penta)));
        assert_eq!(paired.entries(), 7, "pairs");
        let games = Sample::of_run(false, wdl, penta);
        assert_eq!(games, Sample::Trinomial(Trinomial::from_wdl(7, 4, 3)));
        assert_eq!(games.entries(), 14, "games");
    }

    #[test]
    fn regularization_only_touches_zeros() {
        let s = Sample::from(Trinomial::from_wdl(0, 7, 3));
        assert_eq!(s.regularized(), vec![3.0, 7.0, REGULARIZATION_EPSILON]);
    }

    #[test]
    fn counts_beyond_max_games_are_refused_without_overflow() {
        let huge = Trinomial::from_wdl(i64::MAX as u64, i64::MAX as u64, i64::MAX as u64);
        assert_eq!(huge.games(), u64::MAX);
        let err = Sample::from(huge).check().unwrap_err();
        assert_eq!(
            err,
            StatsError::TooManyGames {
                games: 3 * u128::from(i64::MAX as u64)
            }
        );
        let pairs = Pentanomial::from_counts([u64::MAX; 5]);
        assert_eq!(pairs.games(), u64::MAX);
        assert!(matches!(
            Sample::from(pairs).empirical(),
            Err(StatsError::TooManyGames { .. })
        ));
        // The limit itself is allowed; pairs count two games each.
        assert!(Sample::from(Trinomial::from_wdl(MAX_GAMES, 0, 0))
            .check()
            .is_ok());
        let half = MAX_GAMES / 2;
        assert!(Sample::from(Pentanomial::from_counts([half, 0, 0, 0, 0]))
            .check()
            .is_ok());
        assert!(Sample::from(Pentanomial::from_counts([half, 1, 0, 0, 0]))
            .check()
            .is_err());
    }

    #[test]
    fn degenerate_samples_are_those_without_spread_at_an_uneven_score() {
        let tri = |w, d, l| Sample::from(Trinomial::from_wdl(w, d, l));
        let penta = |c| Sample::from(Pentanomial::from_counts(c));
        for s in [
            tri(10, 0, 0),
            tri(0, 0, 3),
            penta([0, 0, 0, 0, 3]),
            penta([0, 0, 0, 3, 0]),
            penta([0, 4, 0, 0, 0]),
        ] {
            assert!(s.is_degenerate(), "{s:?}");
            assert_ne!(s.with_prior_if_degenerate(), s);
        }
        for s in [
            tri(0, 5, 0),
            tri(10, 1, 0),
            tri(0, 0, 0),
            penta([0, 0, 7, 0, 0]),
            penta([0, 0, 0, 1, 2]),
        ] {
            assert!(!s.is_degenerate(), "{s:?}");
            assert_eq!(s.with_prior_if_degenerate(), s);
        }
        assert_eq!(
            penta([0, 0, 0, 3, 0]).with_virtual_draws(),
            penta([0, 0, 1, 3, 0])
        );
        assert_eq!(tri(10, 0, 0).with_virtual_draws(), tri(10, 2, 0));
    }

    #[test]
    fn empty_sample_is_an_error() {
        let s = Sample::from(Pentanomial::default());
        assert_eq!(s.empirical().unwrap_err(), StatsError::NoGames);
    }
}
