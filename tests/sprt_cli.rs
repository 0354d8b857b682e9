//! `arbiter sprt` through the real binary: the JSON fields the issue promises, the summary
//! layout, and DESIGN.md's exit codes (H1 0, H0 1, continue 3, usage 2).

use std::process::{Command, Output};

use serde_json::Value;

fn arbiter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .arg("sprt")
        .args(args)
        .output()
        .expect("run arbiter")
}

fn json(args: &[&str]) -> (Value, i32) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = arbiter(&all);
    let text = String::from_utf8(out.stdout).unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    (value, out.status.code().unwrap())
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn fixed(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

#[test]
fn pentanomial_json_has_every_field_and_passes_with_exit_0() {
    // OpenBench's published Clockwork test: Elo 2.95 +/- 2.18, LLR 2.96 against nElo [0, 3].
    let (v, code) = json(&[
        "--penta",
        "398,4112,7672,4336,430",
        "--elo0",
        "0",
        "--elo1",
        "3",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["state"], "H1");
    assert_eq!(v["games"], 33896);
    assert_eq!(v["pairs"], 16948);
    assert_eq!(fixed(num(&v, "elo"), 2), "2.95");
    let ci = v["elo_ci"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert_eq!(fixed((hi - lo) / 2.0, 2), "2.18");
    assert!((lo + hi) / 2.0 - num(&v, "elo") < 1e-12);
    assert_eq!(fixed(num(&v, "llr"), 2), "2.96");
    assert_eq!(fixed(num(&v, "lower_bound"), 6), "-2.944439");
    assert_eq!(fixed(num(&v, "upper_bound"), 6), "2.944439");
    let los = num(&v, "los");
    assert!(los > 0.99 && los < 1.0);
    // 7672 of 16948 pairs ended 1-1.
    assert_eq!(fixed(num(&v, "draw_ratio"), 6), fixed(7672.0 / 16948.0, 6));
    assert_eq!(v["draw_ratio_of"], "pairs");
    let nelo = num(&v, "nelo");
    let nci = v["nelo_ci"].as_array().unwrap();
    assert!(nci[0].as_f64().unwrap() < nelo && nelo < nci[1].as_f64().unwrap());
    let sprt_elo = num(&v, "sprt_elo");
    let sci = v["sprt_elo_ci"].as_array().unwrap();
    assert!(sci[0].as_f64().unwrap() < sprt_elo && sprt_elo < sci[1].as_f64().unwrap());
    let sprt_los = num(&v, "sprt_los");
    assert!(sprt_los > 0.5 && sprt_los < 1.0);
}

#[test]
fn issue_1737_continues_with_exit_3_and_prints_the_published_estimate() {
    // LLR 2.942 is below the plain Wald bound 2.944; only fishtest's batch-overshoot correction
    // (which needs the update history) let it pass there.
    let (v, code) = json(&[
        "--penta",
        "93,18711,58877,18739,100",
        "--elo0",
        "-1.75",
        "--elo1",
        "0.25",
    ]);
    assert_eq!(code, 3);
    assert_eq!(v["state"], "continue");
    assert_eq!(fixed(num(&v, "llr"), 3), "2.942");
    assert_eq!(fixed(num(&v, "sprt_elo"), 3), "-0.068");
    let sci = v["sprt_elo_ci"].as_array().unwrap();
    assert_eq!(fixed(sci[0].as_f64().unwrap(), 3), "-0.847");
    assert_eq!(fixed(sci[1].as_f64().unwrap(), 3), "0.660");
}

#[test]
fn trinomial_failure_exits_1() {
    // fishtest's own stat_util sample, 187 745 games scoring below 50%: against <0, 2> the LLR
    // is far below the lower bound.
    let (v, code) = json(&[
        "--wins", "65388", "--draws", "56553", "--losses", "65804", "--elo0", "0", "--elo1", "2",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["state"], "H0");
    assert_eq!(v["games"], 187745);
    assert_eq!(v["pairs"], Value::Null);
    assert_eq!(v["draw_ratio_of"], "games");
    assert!(num(&v, "llr") < num(&v, "lower_bound"));
    assert!(num(&v, "elo") < 0.0);
}

#[test]
fn fastchess_trinomial_llr_and_bayeselo_legacy() {
    let (v, code) = json(&[
        "--wins", "36433", "--losses", "36027", "--draws", "68692", "--elo0", "0", "--elo1", "2",
    ]);
    assert_eq!((code, v["state"].as_str()), (3, Some("continue")));
    assert_eq!(fixed(num(&v, "llr"), 2), "0.92");
    // The cutechess-cli SPRT on fishtest's W/D/L test data, cross-checked offline with scipy.
    let (v, _) = json(&[
        "--wins",
        "13543",
        "--draws",
        "34333",
        "--losses",
        "13624",
        "--elo0=-3",
        "--elo1",
        "1",
        "--model",
        "bayeselo",
    ]);
    assert_eq!(v["model"], "bayeselo");
    assert_eq!(fixed(num(&v, "llr"), 6), "0.732762");
}

#[test]
fn without_bounds_only_the_fixed_sample_numbers() {
    let (v, code) = json(&["--wins", "10", "--draws", "20", "--losses", "30"]);
    assert_eq!(code, 0);
    for key in ["llr", "state", "sprt_elo", "sprt_elo_ci", "sprt_los"] {
        assert_eq!(v[key], Value::Null, "{key}");
    }
    // 20 points of 60.
    assert!(num(&v, "elo") < -100.0);
}

#[test]
fn expect_prints_pass_probability_and_expected_games() {
    // fishtest's calculator defaults (d = 0.49, RMS bias 191) with STC bounds <0, 2>.
    let (v, code) = json(&["--expect", "--elo", "1", "--elo0", "0", "--elo1", "2"]);
    assert_eq!(code, 0);
    assert_eq!(fixed(num(&v, "pass_probability"), 6), "0.944470");
    assert_eq!(fixed(num(&v, "expected_games"), 0), "164151");
    // At elo0 the test passes alpha of the time, by construction.
    let (v, _) = json(&[
        "--expect",
        "--elo",
        "0",
        "--elo0",
        "0",
        "--elo1",
        "5",
        "--model",
        "logistic",
        "--draw-ratio",
        "0.6",
        "--rms-bias",
        "50",
        "--alpha",
        "0.1",
    ]);
    assert_eq!(fixed(num(&v, "pass_probability"), 9), "0.100000000");
}

#[test]
fn summary_reads_like_fishtest_and_fastchess() {
    let out = arbiter(&[
        "--penta",
        "398,4112,7672,4336,430",
        "--elo0",
        "0",
        "--elo1",
        "3",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Elo: 2.95 +/- 2.18, nElo: "), "{text}");
    assert!(
        text.contains("Ptnml(0-2): [398, 4112, 7672, 4336, 430]"),
        "{text}"
    );
    assert!(
        text.contains("LLR: 2.96 (-2.94, 2.94) <0.00, 3.00>"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("H1 accepted"), "{text}");
    let out = arbiter(&[
        "--wins", "5", "--draws", "5", "--losses", "5", "--elo0", "0", "--elo1", "5", "--model",
        "logistic",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Games: 15, Wins: 5, Losses: 5, Draws: 5"),
        "{text}"
    );
    assert!(text.contains("{0.00, 5.00}"), "{text}");
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &["--penta", "1,2,3"],
        &["--penta", "1,2,3,4,x"],
        &["--penta", "1,2,3,4,5", "--wins", "3"],
        &[],
        &["--wins", "0", "--draws", "0", "--losses", "0"],
        &["--wins", "5", "--elo0", "2", "--elo1", "1"],
        &[
            "--wins", "5", "--elo0", "0", "--elo1", "1", "--alpha", "0.6", "--beta", "0.5",
        ],
        &["--wins", "5", "--alpha", "0"],
        &[
            "--penta",
            "1,2,3,4,5",
            "--elo0",
            "0",
            "--elo1",
            "5",
            "--model",
            "bayeselo",
        ],
        &["--expect", "--elo", "1"],
        &[
            "--expect",
            "--elo",
            "1",
            "--elo0",
            "0",
            "--elo1",
            "2",
            "--draw-ratio",
            "0.95",
        ],
        &["--wins", "3", "--model", "gaussian"],
    ];
    for args in cases {
        let out = arbiter(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("error"), "{args:?}: {err}");
    }
}
