//! Monte-Carlo check of the SPRT's operating characteristics: simulate whole tests batch by
//! batch, exactly as the coordinator will run them, and compare what happens with what the
//! design promised.
//!
//! Pairs are drawn from an explicit model of a book with unbalanced openings: each opening shifts
//! the expected score of the game with one colour by +b and of the colour-swapped game by -b, the
//! two games are otherwise independent, and each is drawn with probability d. Its per-game
//! variance is `(1 - d)/4 - b²`, the variance the SPRT calculator assumes for draw ratio d and RMS
//! bias `elo(½ + b)`, so the calculator's expected length is a fair oracle.
//!
//! Run optimized: `cargo test -p arbiter-stats --release --test operating_characteristics`.

use arbiter_stats::elo::{elo_from_score, score_from_elo, NELO_PER_T};
use arbiter_stats::{
    EloModel, Pentanomial, Sample, SequentialSprt, Sprt, SprtCalculator, SprtState,
    DEFAULT_DRAW_RATIO,
};

/// SplitMix64: tiny, seedable, and good enough for Bernoulli draws.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Book {
    draw_ratio: f64,
    /// Opening bias b in score units.
    bias: f64,
}

impl Book {
    /// Half-points scored in one game whose expected score is `½ + shift`.
    fn game(&self, rng: &mut Rng, shift: f64) -> usize {
        let loss = (1.0 - self.draw_ratio) / 2.0 - shift;
        assert!(
            loss > 0.0 && loss + self.draw_ratio < 1.0,
            "model out of range"
        );
        let u = rng.next_f64();
        if u < loss {
            0
        } else if u < loss + self.draw_ratio {
            1
        } else {
            2
        }
    }

    /// Pentanomial bucket of one pair at true expected score `score`.
    fn pair(&self, rng: &mut Rng, score: f64) -> usize {
        let b = if rng.next_f64() < 0.5 {
            self.bias
        } else {
            -self.bias
        };
        self.game(rng, score - 0.5 + b) + self.game(rng, score - 0.5 - b)
    }
}

struct Observed {
    runs: usize,
    passes: usize,
    mean_games: f64,
}

/// Run `runs` whole SPRTs at true score `score`, updating once per batch of `batch` pairs.
fn simulate(sprt: Sprt, book: &Book, score: f64, batch: u64, runs: usize, seed: u64) -> Observed {
    let mut rng = Rng(seed);
    let (mut passes, mut games) = (0, 0u64);
    for _ in 0..runs {
        let mut test = SequentialSprt::new(sprt, batch).unwrap();
        let mut counts = [0u64; 5];
        let state = loop {
            for _ in 0..batch {
                counts[book.pair(&mut rng, score)] += 1;
            }
            let totals = Sample::from(Pentanomial::from_counts(counts));
            match test.update(&totals).unwrap().state {
                SprtState::Continue => assert!(totals.games() < 10_000_000, "test never ended"),
                decided => break decided,
            }
        };
        passes += usize::from(state == SprtState::H1);
        games += 2 * counts.iter().sum::<u64>();
    }
    Observed {
        runs,
        passes,
        mean_games: games as f64 / runs as f64,
    }
}

/// Three standard errors of a binomial proportion: the simulation's own error.
fn three_sigma(p: f64, runs: usize) -> f64 {
    3.0 * (p * (1.0 - p) / runs as f64).sqrt()
}

#[test]
fn sprt_keeps_its_error_rates_and_the_calculators_length() {
    let (alpha, beta) = (0.05, 0.05);
    // Wide normalized bounds keep each simulated test short (about 6 000 games at elo0) so that
    // two thousand tests run in about a second; the error rates do not depend on the width.
    let sprt = Sprt::new(alpha, beta, 0.0, 10.0, EloModel::Normalized).unwrap();
    // fishtest's default draw ratio with a milder opening bias than its default 191 Elo: at
    // 191 Elo the favoured colour almost never loses, and a few Elo more leave the model.
    let (draw_ratio, rms_bias) = (DEFAULT_DRAW_RATIO, 150.0);
    let book = Book {
        draw_ratio,
        bias: score_from_elo(rms_bias) - 0.5,
    };
    let calculator = SprtCalculator::new(&sprt, draw_ratio, rms_bias).unwrap();
    let sigma = ((1.0 - book.draw_ratio) / 4.0 - book.bias * book.bias).sqrt();
    // fishtest's STC batch: 16 pairs per worker report.
    let batch = 16;
    let runs = 1000;

    for (label, nelo, seed) in [
        ("elo0", sprt.elo0(), 0x5eed_0001),
        ("elo1", sprt.elo1(), 0x5eed_0002),
    ] {
        let score = 0.5 + nelo / NELO_PER_T * sigma;
        let observed = simulate(sprt, &book, score, batch, runs, seed);
        let predicted = calculator.at(elo_from_score(score)).unwrap();
        let pass_rate = observed.passes as f64 / observed.runs as f64;
        println!(
            "{label}: true nElo {nelo}, {} runs: H1 accepted {:.4} (calculator {:.4}), \
             mean games {:.0} (calculator {:.0}, ratio {:.3})",
            observed.runs,
            pass_rate,
            predicted.pass_probability,
            observed.mean_games,
            predicted.expected_games,
            observed.mean_games / predicted.expected_games,
        );
        if label == "elo0" {
            assert!(
                pass_rate <= alpha + three_sigma(alpha, runs),
                "H1 accepted {pass_rate} of the time at elo0, alpha = {alpha}"
            );
        } else {
            assert!(
                pass_rate >= 1.0 - beta - three_sigma(beta, runs),
                "H1 accepted only {pass_rate} of the time at elo1, beta = {beta}"
            );
        }
        let ratio = observed.mean_games / predicted.expected_games;
        assert!(
            (ratio - 1.0).abs() <= 0.10,
            "mean games {} vs calculator {} at {label}",
            observed.mean_games,
            predicted.expected_games
        );
    }
}
