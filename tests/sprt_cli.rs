//! `arbiter sprt` through the real binary: the JSON fields the issue promises, the summary
//! layout, and ARCHITECTURE.md's exit codes (H1 0, H0 1, continue 3, usage 2).

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

/// `arbiter sprt ARGS` must exit 2 with nothing on stdout and `error: FLAG: ...` on stderr,
/// the message naming `what`.
fn refused(args: &[&str], flag: &str, what: &str) {
    let out = arbiter(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
    let expected = format!("error: {flag}: ");
    assert!(err.starts_with(&expected), "{args:?}: {err}");
    assert!(err.contains(what), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn counts_whose_total_overflows_or_passes_2_to_the_52_are_refused() {
    let i64_max = i64::MAX.to_string();
    let u64_max = u64::MAX.to_string();
    // Three i64::MAX counts printed "Games: 9223372036854775805" and 150 % points.
    refused(
        &[
            "--wins", &i64_max, "--draws", &i64_max, "--losses", &i64_max,
        ],
        "--wins/--draws/--losses",
        "27670116110564327421 games are more than the 4503599627370496 (2^52)",
    );
    // One huge count alone does not overflow a u64 but is beyond what f64 counts exactly.
    refused(
        &["--wins", &i64_max, "--draws", "1", "--losses", "1"],
        "--wins/--draws/--losses",
        "(2^52)",
    );
    // Five u64::MAX pairs printed an LLR of -1.9e16 and "H0 accepted".
    let penta = [u64_max.as_str(); 5].join(",");
    refused(
        &["--penta", &penta, "--elo0", "0", "--elo1", "2"],
        "--penta",
        "184467440737095516150 games",
    );
    // 2^51 pairs are 2^52 games: the largest sample accepted.
    let half = (1u64 << 51).to_string();
    let out = arbiter(&["--penta", &format!("0,0,{half},0,0")]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Games: 4503599627370496, Pairs: 2251799813685248"),
        "{text}"
    );
}

#[test]
fn bounds_and_rates_that_make_no_sense_are_refused_naming_the_flag() {
    let calc = |extra: &[&'static str]| {
        let mut args = vec!["--expect", "--elo", "1", "--elo0", "0", "--elo1", "2"];
        args.extend_from_slice(extra);
        args
    };
    // --expect --elo1 1e6 printed NaN logistic bounds with exit 0.
    refused(
        &["--expect", "--elo", "0", "--elo0", "0", "--elo1", "1e6"],
        "--elo1",
        "elo1 = 1e6 lies outside [-1000, 1000]",
    );
    // Within the Elo range, but a score above 1 at the calculator's draw ratio and bias.
    refused(
        &["--expect", "--elo", "0", "--elo0", "0", "--elo1", "1000"],
        "--elo0/--elo1",
        "expected scores 0.5000 and 1.2333 at draw ratio 0.49 and RMS bias 191 Elo",
    );
    refused(
        &["--expect", "--elo", "1e300", "--elo0", "0", "--elo1", "2"],
        "--elo",
        "elo = 1e300 lies outside",
    );
    refused(
        &["--expect", "--elo", "nan", "--elo0", "0", "--elo1", "2"],
        "--elo",
        "not a finite number",
    );
    refused(
        &calc(&["--rms-bias=-3"]),
        "--rms-bias",
        "RMS bias -3 Elo must be",
    );
    refused(
        &calc(&["--rms-bias", "inf"]),
        "--rms-bias",
        "RMS bias inf Elo",
    );
    refused(&calc(&["--draw-ratio", "1"]), "--draw-ratio", "[0, 1)");
    refused(&calc(&["--draw-ratio", "NaN"]), "--draw-ratio", "[0, 1)");
    refused(
        &calc(&["--alpha", "0.7", "--beta", "0.3"]),
        "--alpha/--beta",
        "must be below 1",
    );
    refused(
        &calc(&["--beta", "1.5"]),
        "--beta",
        "strictly between 0 and 1",
    );
    refused(
        &["--expect", "--elo", "1", "--elo0", "3", "--elo1", "2"],
        "--elo0/--elo1",
        "elo0 (3) must be below elo1 (2)",
    );
    let counts = |extra: &[&'static str]| {
        let mut args = vec!["--wins", "10", "--draws", "10", "--losses", "10"];
        args.extend_from_slice(extra);
        args
    };
    // BayesElo bounds of 1e6 printed "LLR: -inf" and "H0 accepted".
    for model in ["bayeselo", "logistic", "normalized"] {
        refused(
            &counts(&["--elo0", "0", "--elo1", "1e6", "--model", model]),
            "--elo1",
            "outside [-1000, 1000]",
        );
    }
    refused(
        &counts(&["--elo0=-inf", "--elo1", "2"]),
        "--elo0",
        "not a finite",
    );
    refused(
        &counts(&["--alpha", "nan"]),
        "--alpha",
        "strictly between 0 and 1",
    );
    refused(
        &counts(&["--alpha", "0"]),
        "--alpha",
        "strictly between 0 and 1",
    );
}

#[test]
fn extreme_but_valid_inputs_print_no_nan_or_inf() {
    let cases: &[&[&str]] = &[
        &["--penta", "0,0,10,0,0"],
        &["--penta", "0,0,0,0,10", "--elo0", "0", "--elo1", "2"],
        &[
            "--penta",
            "10,0,0,0,0",
            "--elo0",
            "-1000",
            "--elo1",
            "1000",
            "--model",
            "logistic",
        ],
        &[
            "--wins", "10", "--elo0", "0", "--elo1", "1000", "--model", "bayeselo",
        ],
        &[
            "--losses", "1", "--alpha", "5e-324", "--beta", "5e-324", "--elo0", "0", "--elo1", "5",
        ],
        &[
            "--expect", "--elo", "-1000", "--elo0", "-1000", "--elo1", "1000", "--model",
            "logistic",
        ],
        &[
            "--expect",
            "--elo",
            "1000",
            "--elo0",
            "0",
            "--elo1",
            "2",
            "--draw-ratio",
            "0",
            "--rms-bias",
            "0",
        ],
    ];
    for args in cases {
        for json in [false, true] {
            let mut all = args.to_vec();
            if json {
                all.push("--json");
            }
            let out = arbiter(&all);
            let text = String::from_utf8(out.stdout).unwrap();
            let lower = text.to_lowercase();
            assert!(
                !lower.contains("nan") && !lower.contains("inf"),
                "{all:?}: {text}"
            );
            assert!(!text.is_empty(), "{all:?}");
            if json {
                let v: Value = serde_json::from_str(&text).unwrap();
                let nulls: Vec<_> = v
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, x)| x.is_null())
                    .map(|(k, _)| k.clone())
                    .collect();
                // Nulls only where a field does not apply (no bounds, other sample form).
                for key in &nulls {
                    assert!(
                        [
                            "pairs",
                            "trinomial",
                            "pentanomial",
                            "elo0",
                            "elo1",
                            "llr",
                            "state",
                            "logistic_bounds",
                            "sprt_elo",
                            "sprt_elo_ci",
                            "sprt_los"
                        ]
                        .contains(&key.as_str()),
                        "{all:?}: {key} is null in {text}"
                    );
                }
            }
        }
    }
}

/// Issue 18, items 1 and 15: `--wins 10` printed LOS 100.00 % and Elo 1199.83 (fishtest's
/// clamp), three pairs won twice nElo 4911 +/- 95610. A sweep takes BayesElo's prior of two
/// virtual draws: ten wins are 11 of 12 points, 400·log10(11) = 416.5 Elo, with a finite
/// interval and a LOS that is near-certain without reading as certain.
#[test]
fn a_sweep_is_near_certain_but_not_certain() {
    let out = arbiter(&["--wins", "10"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("LOS: 99.97 %"), "{text}");
    let (v, _) = json(&["--wins", "10"]);
    assert!((num(&v, "elo") - 416.5).abs() < 0.5, "{v}");
    let ci = v["elo_ci"].as_array().unwrap();
    let width = ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap();
    assert!(width > 0.0 && width < 600.0, "{v}");
    let los10 = num(&v, "los");
    assert!((0.999..1.0).contains(&los10), "{v}");
    // More wins, surer; a hundred wins still prints short of 100 %.
    let (v, _) = json(&["--wins", "100"]);
    assert!(num(&v, "los") > los10, "{v}");
    let out = arbiter(&["--wins", "100"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("LOS: 99.99 %"), "{text}");
    // One draw added: fishtest's figures (no longer degenerate), whose LOS rounds to 1 in f64;
    // it still prints short of certainty.
    let out = arbiter(&["--wins", "10", "--draws", "1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("LOS: 99.99 %"), "{text}");
    // Ten losses mirror ten wins.
    let (v, _) = json(&["--losses", "10"]);
    assert!((num(&v, "elo") + 416.5).abs() < 0.5, "{v}");
    // Three pairs won twice: nElo 425.5 +/- 481.5 by hand (crates/stats/tests/edge_cases.rs).
    let (v, _) = json(&["--penta", "0,0,0,0,3"]);
    let nelo = num(&v, "nelo");
    let ci = v["nelo_ci"].as_array().unwrap();
    let half = (ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()) / 2.0;
    assert!(
        (nelo - 425.5).abs() < 5.0 && (half - 481.5).abs() < 5.0,
        "{v}"
    );
    // Three pairs of a win and a draw printed nElo 3471.8 +/- 71549.2: the same shape now,
    // 425.5 +/- 481.5 to within the ε of the empty buckets (it prints 421.81 +/- 500.48).
    let (v, _) = json(&["--penta", "0,0,0,3,0"]);
    let nelo = num(&v, "nelo");
    let ci = v["nelo_ci"].as_array().unwrap();
    let half = (ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()) / 2.0;
    assert!(
        (nelo - 425.5).abs() < 5.0 && (half - 481.5).abs() < 25.0,
        "{v}"
    );
}

/// A reader that closes the pipe (`arbiter sprt ... | head -1`) ends the command quietly with
/// the status of a writer killed by SIGPIPE, as `arbiter match` does; `println!` panicked.
#[test]
fn a_closed_stdout_ends_quietly_with_141() {
    for args in [
        &["sprt", "--wins", "10"][..],
        &[
            "sprt", "--expect", "--elo", "1", "--elo0", "0", "--elo1", "2",
        ][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
