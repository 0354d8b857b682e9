//! How long one SPRT update takes on large totals: the coordinator recomputes the LLR from the
//! cumulative counts after every batch (never accumulating increments), so this is the cost of
//! every batch a worker reports.
//!
//! Run with `cargo bench -p arbiter-stats --bench llr` (the workspace's bench profile: release
//! with `lto = true`, `codegen-units = 1`). Prints microseconds per call, best of several rounds.

use std::hint::black_box;
use std::time::Instant;

use arbiter_stats::{
    estimate, llr, EloModel, Pentanomial, Sample, SequentialSprt, Sprt, Trinomial,
};

/// Calls per timing round, and rounds; the best round is reported to shed scheduler noise
/// (the machine is shared).
const CALLS: u32 = 20_000;
const ROUNDS: u32 = 7;

fn time_us(mut f: impl FnMut(u32)) -> f64 {
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for i in 0..CALLS {
                f(i);
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // About 1.9 million games: a long LTC test on fishtest (issue #1737's totals, times ten).
    let penta = Pentanomial::from_counts([930, 187_110, 588_770, 187_390, 1_000]);
    let tri = Trinomial::from_wdl(733_000, 1_450_000, 731_000);
    // Vary the totals a little each call so nothing is hoisted out of the loop.
    let penta_at = |i: u32| {
        let mut c = penta.counts();
        c[3] += u64::from(i % 64);
        Sample::from(Pentanomial::from_counts(c))
    };
    let tri_at = |i: u32| {
        Sample::from(Trinomial::from_wdl(
            tri.wins + u64::from(i % 64),
            tri.draws,
            tri.losses,
        ))
    };

    println!(
        "arbiter-stats LLR benchmark: {} games in pairs, {} single games; best of {ROUNDS} x {CALLS} calls",
        penta.games(),
        tri.games()
    );
    let rows: [(&str, f64); 7] = [
        (
            "LLR normalized, pentanomial",
            time_us(|i| {
                black_box(llr::normalized(&penta_at(i), black_box(-1.75), 0.25).unwrap());
            }),
        ),
        (
            "LLR logistic, pentanomial",
            time_us(|i| {
                black_box(llr::logistic(&penta_at(i), black_box(0.0), 2.0).unwrap());
            }),
        ),
        (
            "LLR normalized, trinomial",
            time_us(|i| {
                black_box(llr::normalized(&tri_at(i), black_box(0.0), 2.0).unwrap());
            }),
        ),
        (
            "LLR logistic, trinomial",
            time_us(|i| {
                black_box(llr::logistic(&tri_at(i), black_box(0.0), 2.0).unwrap());
            }),
        ),
        ("batch update (normalized LLR + overshoot), pentanomial", {
            let sprt = Sprt::new(0.05, 0.05, -1.75, 0.25, EloModel::Normalized).unwrap();
            let mut seq = SequentialSprt::new(sprt, 1).unwrap();
            time_us(|i| {
                black_box(seq.update(&penta_at(i)).unwrap());
            })
        }),
        (
            "fixed-sample Elo + nElo, pentanomial",
            time_us(|i| {
                let s = penta_at(i);
                black_box(estimate::elo(&s).unwrap());
                black_box(estimate::normalized_elo(&s).unwrap());
            }),
        ),
        ("SPRT-aware Elo estimate, pentanomial", {
            let sprt = Sprt::new(0.05, 0.05, -1.75, 0.25, EloModel::Normalized).unwrap();
            // Much slower (dozens of Brownian evaluations per root): time fewer calls.
            let start = Instant::now();
            let n = 200;
            for i in 0..n {
                black_box(sprt.elo_estimate(&penta_at(i)).unwrap());
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        }),
    ];
    for (name, us) in rows {
        println!("{name:<56} {us:>9.2} us");
    }
}
