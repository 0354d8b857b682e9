//! SPSA on a synthetic objective with a known optimum: "engines" whose strength in Elo falls off
//! quadratically with the distance of each parameter from its best value play simulated games
//! (draws included) under the logistic Elo model. From a start far from the optimum, the run
//! must end near it; that is the whole promise of SPSA, checked without playing chess.

use arbiter_tune::spsa::{parse_lines, Hyper, Spsa, DEFAULT_ALPHA, DEFAULT_A_RATIO, DEFAULT_GAMMA};

/// The best values, and each parameter's Elo cost per unit squared of distance from it.
const OPTIMUM: [f64; 3] = [325.0, 40.0, 950.0];
const COST: [f64; 3] = [0.02, 0.05, 0.005];
const DRAW_RATE: f64 = 0.4;

fn elo(values: &[f64]) -> f64 {
    -values
        .iter()
        .zip(OPTIMUM.iter().zip(COST))
        .map(|(v, (best, cost))| cost * (v - best) * (v - best))
        .sum::<f64>()
}

/// A small deterministic generator (xorshift*), so the test needs no crate and never flakes.
struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Plays `pairs` simulated pairs of `plus` against `minus`: wins and losses of `plus`.
fn play(plus: &[f64], minus: &[f64], pairs: u64, rng: &mut Rng) -> (u64, u64) {
    let expected = 1.0 / (1.0 + 10f64.powf(-(elo(plus) - elo(minus)) / 400.0));
    let (mut wins, mut losses) = (0, 0);
    for _ in 0..2 * pairs {
        let u = rng.uniform();
        if u < DRAW_RATE {
            continue;
        }
        if (u - DRAW_RATE) / (1.0 - DRAW_RATE) < expected {
            wins += 1;
        } else {
            losses += 1;
        }
    }
    (wins, losses)
}

fn tune(seed: u64) -> Vec<f64> {
    let lines = "knight, int, 250, 100, 600, 10, 0.002\n\
                 outpost, int, 5, 0, 150, 6, 0.002\n\
                 queen, int, 800, 500, 1400, 20, 0.002\n";
    let spsa = Spsa::new(
        parse_lines(lines, "synthetic").unwrap(),
        Hyper {
            pairs: 30_000,
            pairs_per_step: 4,
            a_ratio: DEFAULT_A_RATIO,
            alpha: DEFAULT_ALPHA,
            gamma: DEFAULT_GAMMA,
        },
    )
    .unwrap();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut theta = spsa.start();
    for step in 0..spsa.steps() {
        let p = spsa.perturb(&theta, step, seed);
        let (wins, losses) = play(
            &p.plus,
            &p.minus,
            spsa.step_pairs(step).count() as u64,
            &mut rng,
        );
        theta = spsa.update(&theta, &p, wins, losses);
    }
    theta
}

#[test]
fn converges_to_a_known_optimum_from_far_away() {
    let runs: Vec<Vec<f64>> = (1..=8).map(tune).collect();
    for (seed, theta) in runs.iter().enumerate() {
        // The start costs 50 + 61 + 113 = 224 Elo; each run must end within a few Elo of the best.
        let lost = -elo(theta);
        assert!(
            lost < 5.0,
            "seed {}: theta {theta:?} still {lost:.1} Elo below the best",
            seed + 1
        );
    }
    // And without a bias: averaged over the runs, every parameter is where it should be, within
    // what one Elo of loss allows for that parameter alone.
    for (j, best) in OPTIMUM.iter().enumerate() {
        let mean = runs.iter().map(|theta| theta[j]).sum::<f64>() / runs.len() as f64;
        let tolerance = (1.0 / COST[j]).sqrt();
        assert!(
            (mean - best).abs() < tolerance,
            "parameter {j}: mean {mean:.1} over the runs, best {best}, tolerance {tolerance:.1}"
        );
    }
}
