//! Why a statistic could not be computed.

/// Every failure is a value, never a NaN or a panic: the coordinator and the CLI must be able to
/// say exactly which input was impossible.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// With no games there is no empirical distribution at all; fishtest's regularization would
    /// invent one out of three epsilons, which is not a result anyone should act on.
    #[error("no games: every count is zero")]
    NoGames,
    /// Counts beyond [`crate::MAX_GAMES`] cannot be held exactly in the `f64` every statistic
    /// computes with (and their sum may not even fit a `u64`).
    #[error("{games} games are more than the {max} (2^52) the statistics can count exactly", max = crate::MAX_GAMES)]
    TooManyGames { games: u128 },
    /// The hypotheses must be ordered, or "accept H1" would mean "weaker".
    #[error("elo0 ({elo0}) must be below elo1 ({elo1})")]
    HypothesesOrder { elo0: f64, elo1: f64 },
    /// alpha and beta are error probabilities.
    #[error("{name} = {value} must lie strictly between 0 and 1")]
    ErrorRate { name: &'static str, value: f64 },
    /// With alpha + beta >= 1 the Wald bounds cross and the test decides before any game.
    #[error("alpha + beta = {sum} must be below 1")]
    ErrorRatesSum { sum: f64 },
    /// Beyond ±[`crate::MAX_ELO`] an Elo difference no longer means a score anyone can
    /// measure (a 1000 Elo stronger engine scores 99.7 %), and the logistic curve rounds to
    /// exactly 0 or 1 in `f64` soon after, which would turn every statistic into ±inf or NaN.
    #[error("{name} = {} lies outside [-{max}, {max}]", short(*value), max = crate::MAX_ELO)]
    EloRange { name: &'static str, value: f64 },
    /// An input that must be a finite number was not.
    #[error("{name} = {value} is not a finite number")]
    NotFinite { name: &'static str, value: f64 },
    /// A draw ratio is a probability.
    #[error("draw ratio {0} must lie in [0, 1)")]
    DrawRatio(f64),
    /// A root-mean-square opening bias is a finite distance in Elo.
    #[error("RMS bias {0} Elo must be a finite number >= 0")]
    RmsBias(f64),
    /// Normalized bounds become expected scores through the per-game deviation the draw ratio
    /// and bias imply (BayesElo ones through its draw model); bounds that wide ask for a score
    /// outside (0, 1), or for two scores that round to one.
    #[error(
        "the bounds {elo0} and {elo1} mean expected scores {score0:.4} and {score1:.4} at draw \
         ratio {draw_ratio} and RMS bias {rms_bias} Elo; they must differ and lie strictly \
         between 0 and 1"
    )]
    ScoreOutOfRange {
        elo0: f64,
        elo1: f64,
        score0: f64,
        score1: f64,
        draw_ratio: f64,
        rms_bias: f64,
    },
    /// The calculator's per-game variance `(1 - d)/4 - bias^2` must stay positive.
    #[error(
        "draw ratio {draw_ratio} and RMS bias {rms_bias} Elo leave no variance in a game's score"
    )]
    NoVariance { draw_ratio: f64, rms_bias: f64 },
    /// The legacy BayesElo test models single games; pairs cannot be split back into W/D/L.
    #[error(
        "the BayesElo model needs trinomial (wins/draws/losses) counts, not pentanomial pairs"
    )]
    BayesEloNeedsTrinomial,
    /// A constrained maximum-likelihood distribution exists only if the constraint can be met on
    /// the observed support: a mean outside every observed score cannot.
    #[error("no distribution on the observed scores satisfies the {constraint} constraint")]
    Unattainable { constraint: &'static str },
    /// An iteration ran out of steps or produced a non-finite value. fishtest raises here too
    /// (its asserts); extreme samples simply have no answer.
    #[error("{what} did not converge")]
    NoConvergence { what: &'static str },
    /// A rating list's encounter or anchor names an engine the list does not have.
    #[error("engine {index} does not exist: the list has {engines} engines")]
    UnknownEngine { index: usize, engines: usize },
    /// An engine's games against itself say nothing about its strength.
    #[error("engine {engine} is paired with itself")]
    SelfPairing { engine: usize },
    /// The pairs of an encounter must be its games, grouped: same games, same points.
    #[error("the pairs of engines {first} and {second} do not add up to their games")]
    PairsDisagree { first: usize, second: usize },
    /// Batches are counted in entries (games or pairs); a batch of zero means nothing.
    #[error("batch size must be at least 1")]
    BatchSize,
}

/// A number as a user would type it: `1e300`, not three hundred digits.
fn short(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}
