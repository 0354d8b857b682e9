//! `arbiter rate` through the real binary: ratings found again from games of engines of known
//! strength, cutechess's standings layout, the two-engine case against `arbiter sprt`, what is
//! skipped and counted, the notes for groups and perfect scores, sweeps, names that are not
//! UTF-8, and errors that exit 2 naming the file and line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn arbiter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .output()
        .expect("run arbiter")
}

fn rate(args: &[&str]) -> Output {
    let mut all = vec!["rate"];
    all.extend_from_slice(args);
    arbiter(&all)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

fn rate_json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = rate(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

fn engine<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["engines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {list}"))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// One game in cutechess's layout, with real moves and engine comments.
fn game(white: &str, black: &str, result: &str) -> String {
    format!(
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"2024.01.01\"]\n[Round \"1\"]\n[White \"{white}\"]\n\
         [Black \"{black}\"]\n[Result \"{result}\"]\n[TimeControl \"10+0.1\"]\n\n\
         1. e4 {{+0.30/12 0.101s}} e5 {{-0.28/11 0.098s}} 2. Nf3 {{+0.35/12 0.102s}} d6\n\
         {{-0.30/11 0.097s}} 3. d4 {{+0.41/12 0.103s}} Bg4 {{-0.52/11 0.099s}} {result}\n\n"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The engines of scripts/make-rating-pgn.py, with their true ratings (mean zero).
const TRUTH: [(&str, f64); 10] = [
    ("Alpha", 310.0),
    ("Bravo", 220.0),
    ("Charlie", 150.0),
    ("Delta", 90.0),
    ("Echo", 40.0),
    ("Foxtrot", -20.0),
    ("Golf", -80.0),
    ("Hotel", -150.0),
    ("India", -240.0),
    ("Juliett", -320.0),
];

/// The generator of scripts/make-rating-pgn.py: random pairings and colours, White's expected
/// score the logistic curve of the true difference, draws min(p, 1 - p) of the games.
fn simulated_games(games: usize, seed: u64) -> String {
    let mut state = seed;
    let mut uniform = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..games {
        let w = (uniform() * 10.0) as usize;
        let b = (w + 1 + (uniform() * 9.0) as usize) % 10;
        let p = 1.0 / (1.0 + 10f64.powf(-(TRUTH[w].1 - TRUTH[b].1) / 400.0));
        let draw = p.min(1.0 - p);
        let u = uniform();
        let result = if u < p - draw / 2.0 {
            "1-0"
        } else if u < p + draw / 2.0 {
            "1/2-1/2"
        } else {
            "0-1"
        };
        text.push_str(&game(TRUTH[w].0, TRUTH[b].0, result));
    }
    text
}

#[test]
fn finds_the_true_ratings_again() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = write(dir.path(), "list.pgn", &simulated_games(20_000, 7));
    let path = pgn.to_str().unwrap();
    let list = rate_json(&[path]);
    assert_eq!(list["games"], 20_000);
    assert_eq!(list["groups"], 1);
    let names: Vec<&str> = list["engines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Best first, in the true order.
    assert_eq!(names, TRUTH.map(|(n, _)| n));
    for (name, truth) in TRUTH {
        let e = engine(&list, name);
        let (elo, hw) = (num(e, "elo"), num(e, "half_width"));
        // About 4,000 games each: a 95% half-width near 15 Elo. Within 1.5 half-widths (3 sigma).
        assert!(hw > 5.0 && hw < 30.0, "{name}: +/- {hw}");
        assert!(
            (elo - truth).abs() < 1.5 * hw,
            "{name}: {elo} vs {truth} +/- {hw}"
        );
        assert_eq!(e["separated"], false);
    }
    let mean: f64 = TRUTH
        .iter()
        .map(|(n, _)| num(engine(&list, n), "elo"))
        .sum::<f64>()
        / 10.0;
    assert!(mean.abs() < 1e-6);

    // Anchored: the same list shifted so that Echo is at 40; Echo's interval is zero.
    let anchored = rate_json(&[path, "--anchor", "Echo=40"]);
    let shift = 40.0 - num(engine(&list, "Echo"), "elo");
    for (name, _) in TRUTH {
        let (a, m) = (engine(&anchored, name), engine(&list, name));
        assert!(
            (num(a, "elo") - num(m, "elo") - shift).abs() < 1e-6,
            "{name}"
        );
    }
    assert_eq!(num(engine(&anchored, "Echo"), "half_width"), 0.0);
    assert_eq!(anchored["anchor"]["name"], "Echo");
}

#[test]
fn prints_cutechess_standings() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for _ in 0..6 {
        text.push_str(&game("Strong Engine 2.0", "Middle", "1-0"));
        text.push_str(&game("Middle", "Strong Engine 2.0", "1/2-1/2"));
        text.push_str(&game("Middle", "Weak", "1-0"));
        text.push_str(&game("Weak", "Middle", "1/2-1/2"));
        text.push_str(&game("Strong Engine 2.0", "Weak", "1/2-1/2"));
        text.push_str(&game("Weak", "Strong Engine 2.0", "0-1"));
    }
    let pgn = write(dir.path(), "t.pgn", &text);
    let out = rate(&[pgn.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "Rank Name                          Elo     +/-   Games   Score   Draws     LOS"
    );
    // Rank right in 4, name left in 25, then columns of 7: cutechess's Tournament::results().
    assert!(
        lines[1].starts_with(&format!("{:>4} {:<25} ", 1, "Strong Engine 2.0")),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("      24   75.0%   50.0%"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(&format!("{:>4} {:<25} ", 2, "Middle")),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].contains("      24   50.0%   50.0%"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with(&format!("{:>4} {:<25} ", 3, "Weak")),
        "{}",
        lines[3]
    );
    // Symmetric results: Strong and Weak equally far from Middle, at 0.
    let fields: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(fields[2], "0");
    let strong: Vec<&str> = lines[1].split_whitespace().collect();
    let weak: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(format!("-{}", strong[4]), weak[2]);
    // LOS over the next engine; none after the last.
    assert!(
        strong.last().unwrap().ends_with('%') && strong.len() == 10,
        "{strong:?}"
    );
    assert_eq!(weak.len(), 7, "{weak:?}");
    assert_eq!(lines[4], "36 games of 3 engines from 1 file");
    assert!(
        lines[5].starts_with("Maximum-likelihood Elo"),
        "{}",
        lines[5]
    );
    assert!(lines[5].contains("mean rating 0"));
    assert_eq!(lines.len(), 6, "{text}");
}

/// Two engines: the list's difference is the match Elo `arbiter sprt` prints for the same
/// counts.
#[test]
fn two_engines_are_the_match_elo() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (white, black, result, n) in [
        ("A", "B", "1-0", 40),
        ("B", "A", "0-1", 31),
        ("A", "B", "1/2-1/2", 77),
        ("B", "A", "1-0", 29),
        ("A", "B", "0-1", 23),
    ] {
        for _ in 0..n {
            text.push_str(&game(white, black, result));
        }
    }
    let pgn = write(dir.path(), "ab.pgn", &text);
    let list = rate_json(&[pgn.to_str().unwrap(), "--anchor", "B=0"]);
    let a = engine(&list, "A");
    assert_eq!(
        (
            a["wins"].as_u64(),
            a["draws"].as_u64(),
            a["losses"].as_u64()
        ),
        (Some(71), Some(77), Some(52))
    );
    let out = arbiter(&[
        "sprt", "--wins", "71", "--draws", "77", "--losses", "52", "--json",
    ]);
    let sprt: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        (num(a, "elo") - num(&sprt, "elo")).abs() < 1e-6,
        "{a} vs {sprt}"
    );
}

#[test]
fn skips_and_counts_what_cannot_be_rated_and_reads_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(
        dir.path(),
        "a.pgn",
        &[
            game("A", "B", "1-0"),
            game("A", "B", "*"),
            game("B", "A", "1/2-1/2"),
        ]
        .concat(),
    );
    let second = write(
        dir.path(),
        "b.pgn",
        &[
            game("B", "A", "0-1"),
            game("A", "A", "1-0"),
            game("A", "B", "?"),
            game("B", "A", "1-0"),
        ]
        .concat(),
    );
    let (a, b) = (first.to_str().unwrap(), second.to_str().unwrap());
    let list = rate_json(&[a, b]);
    assert_eq!(list["games"], 4);
    assert_eq!(list["skipped"]["unfinished"], 1);
    assert_eq!(list["skipped"]["other_result"], 1);
    assert_eq!(list["skipped"]["self_play"], 1);
    assert_eq!(engine(&list, "A")["games"], 4);
    assert_eq!(engine(&list, "A")["wins"], 2);
    let out = rate(&[a, b]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "4 games of 2 engines from 2 files; skipped 1 unfinished (*), 1 with no or another \
             result, 1 of an engine against itself"
        ),
        "{text}"
    );
}

#[test]
fn notes_groups_and_perfect_scores() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for _ in 0..5 {
        text.push_str(&game("A", "B", "1-0"));
        text.push_str(&game("B", "A", "1-0"));
        text.push_str(&game("C", "D", "1/2-1/2"));
        text.push_str(&game("D", "E", "1-0"));
        text.push_str(&game("E", "D", "1/2-1/2"));
        text.push_str(&game("Crusher", "A", "1-0"));
        text.push_str(&game("B", "Crusher", "0-1"));
    }
    let pgn = write(dir.path(), "g.pgn", &text);
    let out = rate(&[pgn.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("note: the engines form 2 groups that never played each other"),
        "{text}"
    );
    assert!(text.contains("  group 1: Crusher, A, B\n"), "{text}");
    // C and D drew every game: level, so by name.
    assert!(text.contains("  group 2: C, D, E\n"), "{text}");
    assert!(
        text.contains("note: Crusher won every game or lost every game against part of the list"),
        "{text}"
    );
    let list = rate_json(&[pgn.to_str().unwrap()]);
    assert_eq!(list["groups"], 2);
    assert_eq!(engine(&list, "Crusher")["separated"], true);
    assert_eq!(engine(&list, "A")["separated"], false);
    // No LOS across groups: B is the last of group 1.
    assert!(engine(&list, "B")["los_next"].is_null());
}

/// The table's line of `name`, split on whitespace.
fn table_line(text: &str, name: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .find(|l| l.get(1).map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in {text}"))
}

/// Issue 18, items 1 and 2: ten games all won by A printed `A 765 +/-4013 ... LOS 64.6%`,
/// 100 of them LOS 68.1 %; and a list with a sweep printed "mean rating 0" over ratings whose
/// mean was not 0. With BayesElo's prior a sweep is near-certain superiority with a finite
/// interval, the same figures `arbiter sprt` gives the same games, and the mean holds.
#[test]
fn a_sweep_is_near_certain_with_a_finite_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut last_los = 0.0;
    for n in [10, 30, 100] {
        let text: String = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    game("A", "B", "1-0")
                } else {
                    game("B", "A", "0-1")
                }
            })
            .collect();
        let pgn = write(dir.path(), &format!("sweep{n}.pgn"), &text);
        let path = pgn.to_str().unwrap();
        let list = rate_json(&[path]);
        let (a, b) = (engine(&list, "A"), engine(&list, "B"));
        let los = num(a, "los_next");
        assert!((0.999..1.0).contains(&los), "{n}: {a}");
        assert!(los > last_los, "{n}: LOS {los} after {last_los}");
        last_los = los;
        assert!(num(a, "half_width") < 150.0, "{n}: {a}");
        let gap = num(a, "elo") - num(b, "elo");
        assert!((num(a, "elo") + num(b, "elo")).abs() < 1e-6);
        let sprt: Value = serde_json::from_str(&stdout(&arbiter(&[
            "sprt",
            "--wins",
            &n.to_string(),
            "--json",
        ])))
        .unwrap();
        assert!((gap - num(&sprt, "elo")).abs() < 1e-6, "{a} vs {sprt}");
        assert!((num(&sprt, "los") - los).abs() < 1e-9, "{a} vs {sprt}");
        let out = stdout(&rate(&[path]));
        let line = table_line(&out, "A");
        assert_eq!(line.last().map(String::as_str), Some("99.9%"), "{out}");
        assert!(out.contains("BayesElo's prior of 2 virtual draws"), "{out}");
    }

    // A swept B; B and C played each other evenly enough. The printed ratings' mean is 0 to
    // their rounding, as the footer says.
    let mut text = String::new();
    for _ in 0..10 {
        text.push_str(&game("A", "B", "1-0"));
    }
    for result in ["1-0", "0-1", "1/2-1/2", "1-0", "1/2-1/2", "0-1", "0-1"] {
        text.push_str(&game("B", "C", result));
    }
    let pgn = write(dir.path(), "three.pgn", &text);
    let out = stdout(&rate(&[pgn.to_str().unwrap()]));
    assert!(out.contains("mean rating 0"), "{out}");
    let printed: Vec<f64> = ["A", "B", "C"]
        .iter()
        .map(|name| table_line(&out, name)[2].parse().unwrap())
        .collect();
    assert!(printed.iter().sum::<f64>().abs() <= 1.5, "{out}");
    assert!(printed.iter().all(|elo| elo.abs() < 600.0), "{out}");
}

/// Issue 18, item 14: names that are not UTF-8 (Latin-1 "Müller" and "Mäller") were both read
/// as `M\u{fffd}ller` and merged into one player. They are two, shown with the byte escaped.
#[test]
fn latin1_names_are_distinct_players_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for (white, black, result) in [
        (&b"M\xfcller"[..], &b"Other"[..], "1-0"),
        (b"Other", b"M\xfcller", "1/2-1/2"),
        (b"M\xe4ller", b"Other", "0-1"),
        (b"Other", b"M\xe4ller", "1/2-1/2"),
        (b"M\xfcller", b"M\xe4ller", "1-0"),
    ] {
        bytes.extend_from_slice(b"[Event \"?\"]\n[White \"");
        bytes.extend_from_slice(white);
        bytes.extend_from_slice(b"\"]\n[Black \"");
        bytes.extend_from_slice(black);
        bytes.extend_from_slice(
            format!("\"]\n[Result \"{result}\"]\n\n1. e4 e5 {result}\n\n").as_bytes(),
        );
    }
    assert!(std::str::from_utf8(&bytes).is_err());
    let path = dir.path().join("latin1.pgn");
    std::fs::write(&path, &bytes).unwrap();
    let path = path.to_str().unwrap();
    let list = rate_json(&[path]);
    assert_eq!(list["engines"].as_array().unwrap().len(), 3, "{list}");
    let (u, a) = (engine(&list, "M\\xfcller"), engine(&list, "M\\xe4ller"));
    assert_eq!(
        (u["games"].as_u64(), u["wins"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(
        (a["games"].as_u64(), a["losses"].as_u64()),
        (Some(3), Some(2))
    );
    let out = stdout(&rate(&[path]));
    assert!(
        out.contains("M\\xfcller") && out.contains("M\\xe4ller"),
        "{out}"
    );
    assert!(!out.contains('\u{fffd}'), "{out}");
    // --anchor takes the name as the list shows it.
    let anchored = rate_json(&[path, "--anchor", "M\\xe4ller=1000"]);
    assert_eq!(num(engine(&anchored, "M\\xe4ller"), "elo"), 1000.0);
}

#[test]
fn errors_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let check = |args: &[&str], expected: &str| {
        let out = rate(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains(expected),
            "{args:?}: {err:?} lacks {expected:?}"
        );
        assert!(!err.contains("panicked"), "{err}");
    };
    let good = write(dir.path(), "good.pgn", &game("A", "B", "1-0"));
    let good = good.to_str().unwrap();

    let bad_tag = write(
        dir.path(),
        "bad-tag.pgn",
        &format!(
            "{}[White \"C\"]\n[Black \"D]\n\n1. e4 1-0\n",
            game("A", "B", "1-0")
        ),
    );
    check(
        &[good, bad_tag.to_str().unwrap()],
        &format!(
            "error: {}:14: bad tag pair \"[Black \\\"D]\"; expected [Name \"value\"] on one line",
            bad_tag.display()
        ),
    );
    let open_comment = write(
        dir.path(),
        "comment.pgn",
        "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 {unclosed\n",
    );
    check(
        &[open_comment.to_str().unwrap()],
        &format!(
            "error: {}:5: a comment opened with {{ on this line is never closed with }}",
            open_comment.display()
        ),
    );
    let no_black = write(
        dir.path(),
        "no-black.pgn",
        &format!(
            "{}[White \"A\"]\n[Result \"1-0\"]\n\n1. e4 1-0\n",
            game("A", "B", "1-0")
        ),
    );
    check(
        &[no_black.to_str().unwrap()],
        &format!(
            "error: {}:13: the game has no Black tag; a rating needs White, Black and Result",
            no_black.display()
        ),
    );
    let missing = dir.path().join("missing.pgn");
    check(
        &[missing.to_str().unwrap()],
        &format!("error: cannot read {}", missing.display()),
    );
    check(
        &[good, "--anchor", "Nobody=3000"],
        "error: --anchor: no engine is called \"Nobody\"; the games' engines are \"A\", \"B\"",
    );
    check(
        &[good, "--anchor", "a=3000"],
        "error: --anchor: no engine is called \"a\"; did you mean \"A\"?",
    );
    check(&[good, "--anchor", "A"], "expected NAME=ELO");
    let unfinished = write(dir.path(), "unfinished.pgn", &game("A", "B", "*"));
    check(
        &[unfinished.to_str().unwrap()],
        &format!(
            "error: no games to rate in {}: skipped 1 unfinished (*)",
            unfinished.display()
        ),
    );
    let empty = write(dir.path(), "empty.pgn", "");
    check(&[empty.to_str().unwrap()], "the files hold no game");
}
