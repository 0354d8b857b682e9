//! Replays a fishtest SPSA run step by step: `scripts/spsa-fishtest-trace.py` (fishtest's
//! formulas, written independently in Python) drew the flips and each batch's results and
//! recorded c_k, R_k and θ after every batch; arbiter, given the same flips and results, must
//! reach the same numbers. Float parameters follow fishtest's arithmetic exactly, so the
//! comparison is bit for bit.

use arbiter_tune::spsa::{parse_lines, Hyper, ParamKind, Spsa};
use serde_json::Value;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn replays_a_fishtest_trace_bit_for_bit() {
    let text = include_str!("data/fishtest-spsa-trace.json");
    let trace: Value = serde_json::from_str(text).unwrap();
    let mut params = parse_lines(trace["params"].as_str().unwrap(), "trace").unwrap();
    for p in &mut params {
        p.kind = ParamKind::Float;
    }
    let spsa = Spsa::new(
        params,
        Hyper {
            pairs: trace["num_games"].as_u64().unwrap() / 2,
            pairs_per_step: trace["batch_pairs"].as_u64().unwrap(),
            a_ratio: trace["a_ratio"].as_f64().unwrap(),
            alpha: trace["alpha"].as_f64().unwrap(),
            gamma: trace["gamma"].as_f64().unwrap(),
        },
    )
    .unwrap();
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len() as u64, spsa.steps());
    let mut theta = spsa.start();
    let mut clipped = false;
    for (s, recorded) in steps.iter().enumerate() {
        let flips: Vec<i8> = recorded["flips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_i64().unwrap() as i8)
            .collect();
        let p = spsa.perturbation(&theta, s as u64, &flips, &vec![0.0; flips.len()]);
        assert_eq!(p.iteration, recorded["iteration"].as_u64().unwrap());
        assert_eq!(p.c, floats(&recorded["c"]), "c_k at step {s}");
        assert_eq!(p.r, floats(&recorded["r"]), "R_k at step {s}");
        let wins = recorded["wins"].as_u64().unwrap();
        let losses = recorded["losses"].as_u64().unwrap();
        theta = spsa.update(&theta, &p, wins, losses);
        assert_eq!(theta, floats(&recorded["theta"]), "theta after step {s}");
        clipped |= theta[3] == 3.0 || theta[3] == 0.0;
    }
    // The trace exercises the clip of theta, not only free steps.
    assert!(clipped);
}
