//! `arbiter report` through the real binary, on a real SQLite store made by a short in-process
//! `arbiter match`: the charts, page, Markdown and JSON hold the store's data.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{raw_sql, write_script};
use arbiter_store::{Location, RunId, Store};

fn arbiter(args: &[&str], dir: &Path, env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_STEP_SUMMARY");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run arbiter")
}

const BOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd");

/// A short staunton match under an SPRT that cannot decide in 4 pairs; returns its `--json`
/// summary.
fn play_match(dir: &Path) -> serde_json::Value {
    let config = format!(
        "name = \"ci-run\"\nrounds = 4\nconcurrency = 2\nstore = \"runs.db\"\n\
         [each]\ntc = \"inf\"\nnodes = 200\nhash = 0\n\
         [adjudication]\nmaxmoves = 30\n\
         [sprt]\nelo0 = 0\nelo1 = 10\n\
         [openings]\nfile = \"{BOOK}\"\n\
         [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
         [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n"
    );
    std::fs::write(dir.join("run.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "--json", "run.toml"], dir, &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the match's JSON summary")
}

/// The store's own totals and the number of pairs it returns in commit order.
fn store_counts(db: &Path) -> (arbiter_store::Totals, usize) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use futures_util::StreamExt;
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        let totals = store.totals(RunId::new(1)).await.unwrap();
        let pairs = store.pairs_in_commit_order(RunId::new(1)).count().await;
        (totals, pairs)
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value of `attribute` on the first element that has it.
fn attribute<'a>(text: &'a str, attribute: &str) -> &'a str {
    let start = text.find(&format!("{attribute}=\"")).expect(attribute) + attribute.len() + 2;
    let len = text[start..].find('"').unwrap();
    &text[start..start + len]
}

#[test]
fn a_report_holds_the_stores_numbers_and_one_llr_point_per_pair() {
    let dir = tempfile::tempdir().unwrap();
    let summary = play_match(dir.path());
    let (totals, committed) = store_counts(&dir.path().join("runs.db"));
    assert_eq!(committed as u64, totals.pairs);
    assert!(totals.pairs >= 4);

    let step_summary = dir.path().join("step-summary.md");
    std::fs::write(&step_summary, "earlier step\n").unwrap();
    let out = arbiter(
        &["report", "1", "--store", "runs.db"],
        dir.path(),
        &[("GITHUB_STEP_SUMMARY", &step_summary)],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");

    // The LLR chart: one point per committed pair, drawn as one path, bounds the run's.
    let llr = read(&report.join("llr.svg"));
    assert_eq!(attribute(&llr, "data-points"), totals.pairs.to_string());
    let lower = summary["lower_bound"].as_f64().unwrap();
    let upper = summary["upper_bound"].as_f64().unwrap();
    assert!(llr.contains(&format!("H1 bound {upper:.2}")), "{llr}");
    assert!(llr.contains(&format!("H0 bound {lower:.2}")), "{llr}");
    let paths: Vec<usize> = llr
        .match_indices("points=\"")
        .map(|(i, _)| attribute(&llr[i..], "points").split_whitespace().count())
        .collect();
    assert!(
        paths.contains(&(totals.pairs as usize)),
        "a polyline of {} points among {paths:?}",
        totals.pairs
    );

    // The JSON: the store's totals, the run's bounds, the LLR the runner printed.
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    let s = &json["summary"];
    assert_eq!(s["pairs"], totals.pairs);
    assert_eq!(s["wins"], totals.wins);
    assert_eq!(s["draws"], totals.draws);
    assert_eq!(s["losses"], totals.losses);
    assert_eq!(s["pentanomial"], serde_json::json!(totals.pentanomial));
    assert_eq!(s["lower_bound"], summary["lower_bound"]);
    assert_eq!(s["upper_bound"], summary["upper_bound"]);
    let llr_json = s["llr"].as_f64().unwrap();
    assert!((llr_json - summary["llr"].as_f64().unwrap()).abs() < 1e-9);
    let series = json["series"]["llr"]["points"].as_array().unwrap();
    assert_eq!(series.len() as u64, totals.pairs);
    assert_eq!(series.last().unwrap()["llr"], s["llr"]);
    // Openings are named as the PGN's BookEntry names them, without the machine's folders.
    let openings = json["series"]["openings"].as_array().unwrap();
    assert!(!openings.is_empty());
    for opening in openings {
        let name = opening["opening"].as_str().unwrap();
        assert!(
            name.starts_with("quick.epd:") && !name.contains('/'),
            "{name}"
        );
    }

    // The page: self-contained, readable on a phone, every chart inline.
    let html = read(&report.join("index.html"));
    assert!(html.contains("<meta name=\"viewport\""));
    // Nothing is fetched: no script, no source or link outside the page (the SVG namespace
    // URI is a name, never loaded).
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href=\"http"));
    for chart in ["llr", "elo", "results", "games"] {
        assert!(
            html.contains(&format!("<svg data-chart=\"{chart}\"")),
            "{chart} in the page"
        );
    }
    // Openings are drawn only where one engine won both games of a pair; else the page says so.
    let lopsided = openings
        .iter()
        .filter(|o| o["lopsided"].as_u64().unwrap() > 0)
        .count();
    if lopsided > 0 {
        let drawn = read(&report.join("openings.svg"));
        assert_eq!(
            attribute(&drawn, "data-points"),
            lopsided.min(16).to_string()
        );
    } else {
        assert!(!html.contains("<svg data-chart=\"openings\""), "{html}");
        assert!(
            html.contains("No opening was lopsided: no engine won both games of a pair from"),
            "{html}"
        );
    }
    // Nodes-limited games have no clock: no time chart to draw, and none drawn empty.
    for chart in ["time", "time-trouble"] {
        assert!(
            !html.contains(&format!("<svg data-chart=\"{chart}\"")),
            "{chart}"
        );
        assert!(!report.join(format!("{chart}.svg")).exists(), "{chart}.svg");
    }
    let games = totals.wins + totals.draws + totals.losses;
    assert!(
        html.contains(&format!("<td data-field=\"games\">{games}</td>")),
        "{html}"
    );

    // The Markdown: a totals table and the charts as linked SVG files beside it.
    let md = read(&report.join("summary.md"));
    assert!(md.contains(&format!("| Games | {games} |")), "{md}");
    assert!(md.contains(&format!(
        "| W / D / L | {} / {} / {} |",
        totals.wins, totals.draws, totals.losses
    )));
    assert!(
        md.contains("(llr.svg)") && report.join("elo.svg").exists(),
        "{md}"
    );
    assert!(
        md.contains("in progress") || md.contains("finished"),
        "{md}"
    );

    // GitHub's step summary got the Markdown appended, after what was there.
    let appended = read(&step_summary);
    assert!(appended.starts_with("earlier step\n"), "{appended}");
    assert!(appended.ends_with(&md), "{appended}");

    // By name, into a chosen directory, one format only.
    let out = arbiter(
        &[
            "report",
            "ci-run",
            "--store",
            "runs.db",
            "--out",
            "only-json",
            "--format",
            "json",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("only-json/report.json").exists());
    assert!(!dir.path().join("only-json/index.html").exists());
}

/// A round-robin of three engines: standings with error bars and the crosstable heat map, whose
/// cells hold the store's pairing totals.
#[test]
fn a_tournament_report_has_standings_and_a_crosstable() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = format!(
        "tournament = \"round-robin\"\nrounds = 2\nconcurrency = 2\nstore = \"runs.db\"\n\
         [each]\ntc = \"inf\"\nnodes = 150\nhash = 0\n[adjudication]\nmaxmoves = 30\n\
         [openings]\nfile = \"{BOOK}\"\n"
    );
    for (name, knight) in [("a", 325), ("b", 250), ("c", 200)] {
        config.push_str(&format!(
            "[[engine]]\nname = \"{name}\"\nbuiltin = \"staunton\"\nparams = {{ knight_mg = {knight} }}\n"
        ));
    }
    std::fs::write(dir.path().join("rr.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "rr.toml"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");
    let standings = read(&report.join("standings.svg"));
    assert_eq!(attribute(&standings, "data-points"), "3");
    let crosstable = read(&report.join("crosstable.svg"));
    assert_eq!(attribute(&crosstable, "data-points"), "9");
    let (totals, _) = store_counts(&dir.path().join("runs.db"));
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    assert_eq!(json["summary"]["pairs"], totals.pairs);
    let engines = json["standings"]["engines"].as_array().unwrap();
    let games: u64 = engines.iter().map(|e| e["games"].as_u64().unwrap()).sum();
    assert_eq!(games, 2 * (totals.wins + totals.draws + totals.losses));
    assert!(json["series"]["llr"].is_null(), "no SPRT in a tournament");
    let html = read(&report.join("index.html"));
    for name in ["a", "b", "c"] {
        assert!(
            html.contains(&format!("<td>{name}</td>")),
            "{name} in the standings table"
        );
    }

    // No totals summed over pairings, each counted from its own first engine's side: they are
    // nobody's score. The results are the standings and each pairing's, as the store keeps it.
    let s = &json["summary"];
    for key in ["wins", "draws", "losses"] {
        assert!(s.get(key).is_none(), "{key}: {s}");
    }
    assert!(s["pentanomial"].is_null(), "{s}");
    assert!(
        !totals_table(&html).contains("data-field=\"wdl\""),
        "{html}"
    );
    assert!(
        !report.join("results.svg").exists(),
        "no summed W/D/L chart"
    );
    let pairing_totals = stored_pairing_totals(&dir.path().join("runs.db"));
    let names = [("a", "b"), ("a", "c"), ("b", "c")];
    assert_eq!(pairing_totals.len(), names.len());
    for ((first, second), t) in names.iter().zip(&pairing_totals) {
        let row = format!(
            "<td data-field=\"pairing\">{first} vs {second}</td><td data-field=\"games\">{}</td>\
             <td data-field=\"wdl\">{} / {} / {}</td>",
            t.wins + t.draws + t.losses,
            t.wins,
            t.draws,
            t.losses
        );
        assert!(html.contains(&row), "{row} in {html}");
        let [ll, ld, dd, dw, ww] = t.pentanomial;
        assert!(html.contains(&format!("[{ll}, {ld}, {dd}, {dw}, {ww}]")));
    }
    // Lopsided openings are per pairing, each scored from its own first engine's side.
    let openings = json["series"]["openings"].as_array().unwrap();
    let pairs: u64 = openings.iter().map(|o| o["pairs"].as_u64().unwrap()).sum();
    assert_eq!(pairs, totals.pairs);
    for o in openings {
        let pairing = (o["first"].as_str().unwrap(), o["second"].as_str().unwrap());
        assert!(names.contains(&pairing), "{o}");
        assert!(
            o["pairs"].as_u64().unwrap() <= 2,
            "one pairing's rounds: {o}"
        );
    }
    // The chart's axis says whose score it is: the one pairing's first engine, or each row's.
    if let Ok(chart) = std::fs::read_to_string(report.join("openings.svg")) {
        let chart = chart.replace("&apos;", "'");
        let lopsided: std::collections::BTreeSet<(&str, &str)> = openings
            .iter()
            .filter(|o| o["lopsided"].as_u64() > Some(0))
            .map(|o| (o["first"].as_str().unwrap(), o["second"].as_str().unwrap()))
            .collect();
        let axis = match lopsided.iter().collect::<Vec<_>>().as_slice() {
            [(first, second)] => format!("{first}'s score % against {second}"),
            _ => "score % of the row's first engine".to_owned(),
        };
        assert!(chart.contains(&axis), "{axis}: {chart}");
        assert!(!chart.contains("first engine's score"), "{chart}");
    }
}

/// The totals table of a report page.
fn totals_table(html: &str) -> &str {
    let start = html
        .find("<table class=\"totals\">")
        .expect("a totals table");
    let end = start + html[start..].find("</table>").unwrap();
    &html[start..end]
}

/// The store's totals of each pairing of run 1.
fn stored_pairing_totals(db: &Path) -> Vec<arbiter_store::Totals> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        store.pairing_totals(RunId::new(1)).await.unwrap()
    })
}

/// A run without colour-swapped pairs (`-games 1`, as datagen plays) is reported as games: no
/// pairs count, no pentanomial, and no lopsided openings (the store commits its games two at a
/// time, but those two are different openings, which the report used to draw as one "pair").
/// An odd number of games is planned and played as asked, the last alone.
#[test]
fn an_unpaired_run_is_reported_as_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        &[
            "-engine",
            "name=strong",
            "builtin=staunton",
            "-engine",
            "name=weak",
            "builtin=staunton",
            "param.knight_mg=200",
            "param.bishop_mg=200",
            "-each",
            "tc=inf",
            "nodes=200",
            "hash=0",
            "-games",
            "1",
            "-rounds",
            "13",
            "-maxmoves",
            "40",
            "-concurrency",
            "2",
            "-openings",
            &format!("file={BOOK}"),
            "-store",
            "runs.db",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");
    let html = read(&report.join("index.html"));
    let totals = totals_table(&html);
    assert!(
        totals.contains("<td data-field=\"games\">13 of 13</td>"),
        "{totals}"
    );
    for field in ["pairs", "pentanomial"] {
        assert!(
            !totals.contains(&format!("data-field=\"{field}\"")),
            "{field}: {totals}"
        );
    }
    let md = read(&report.join("summary.md"));
    assert!(
        md.contains("| Games | 13 of 13 |") && !md.contains("| Pairs |"),
        "{md}"
    );
    assert!(!report.join("openings.svg").exists());
    assert!(
        !html.contains("lopsided") && !html.contains("Lopsided"),
        "{html}"
    );
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    assert_eq!(json["series"]["openings"], serde_json::json!([]));
    let s = &json["summary"];
    assert!(s["pentanomial"].is_null(), "{s}");
    assert_eq!(s["games"], 13);
    assert_eq!(s["games_planned"], 13);
    assert_eq!(s["model"], "trinomial");
    let (t, _) = store_counts(&dir.path().join("runs.db"));
    assert_eq!(
        [&s["wins"], &s["draws"], &s["losses"]].map(|v| v.as_u64()),
        [t.wins, t.draws, t.losses].map(Some)
    );
    let results = read(&report.join("results.svg"));
    assert!(!results.contains("DD+WL"), "{results}");
}

/// Each stored game's JSON record, as the store returns them.
fn stored_records(db: &Path) -> Vec<serde_json::Value> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use futures_util::TryStreamExt;
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        let games: Vec<_> = store.games(RunId::new(1)).try_collect().await.unwrap();
        games
            .iter()
            .map(|g| serde_json::from_str(&g.game.json).unwrap())
            .collect()
    })
}

/// A match on a real clock: the time charts are drawn, and hold every engine move the store's
/// records hold (each move's time against its clock) and every reported search time (latency).
#[test]
fn a_match_on_the_clock_has_time_charts_holding_every_engine_move() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "rounds = 2\nconcurrency = 2\nstore = \"runs.db\"\n\
         [each]\ntc = \"1+0.05\"\nhash = 1\n[adjudication]\nmaxmoves = 16\n\
         [openings]\nfile = \"{BOOK}\"\n\
         [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
         [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n"
    );
    std::fs::write(dir.path().join("clock.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "clock.toml"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = stored_records(&dir.path().join("runs.db"));
    assert_eq!(records.len(), 4);
    let count = |field: &str, reported: bool| -> usize {
        records
            .iter()
            .flat_map(|r| r[field].as_array().unwrap())
            .filter(|v| !reported || !v.is_null())
            .count()
    };
    let moves = count("move_ms", false);
    let reported = count("engine_ms", true);
    assert!(moves > 0 && count("clock_ms", true) == moves);

    let out = arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");
    let time = read(&report.join("time.svg"));
    assert_eq!(attribute(&time, "data-points"), moves.to_string());
    assert!(time.contains("dev") && time.contains("base"), "{time}");
    let trouble = read(&report.join("time-trouble.svg"));
    assert_eq!(attribute(&trouble, "data-points"), "2");
    // staunton reports its search time with every iteration.
    assert!(reported > 0);
    let latency = read(&report.join("latency.svg"));
    assert_eq!(attribute(&latency, "data-points"), reported.to_string());
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    let lines = json["series"]["move_times"].as_array().unwrap();
    let summarized: u64 = lines.iter().map(|l| l["moves"].as_u64().unwrap()).sum();
    assert_eq!(summarized as usize, moves);
    assert_eq!(lines[0]["budget"]["base_ms"], 1000.0);
    let rows = json["series"]["time_trouble"].as_array().unwrap();
    let games: u64 = rows.iter().map(|r| r["games"].as_u64().unwrap()).sum();
    assert_eq!(games, 8, "each game counted once for each of its engines");
    let html = read(&report.join("index.html"));
    let md = read(&report.join("summary.md"));
    for chart in ["time", "time-trouble"] {
        assert!(
            html.contains(&format!("<svg data-chart=\"{chart}\"")),
            "{chart}"
        );
        assert!(md.contains(&format!("({chart}.svg)")), "{md}");
    }
}

#[test]
fn unknown_runs_stores_and_formats_exit_2_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    play_match(dir.path());
    for (args, expected) in [
        (
            vec!["report", "nosuch", "--store", "runs.db"],
            "run nosuch: no such run in runs.db",
        ),
        (
            vec!["report", "99", "--store", "runs.db"],
            "run 99: no such run in runs.db",
        ),
        (vec!["report", "1", "--store", "missing.db"], "missing.db"),
        (
            vec!["report", "1", "--store", "runs.db", "--format", "pdf"],
            "--format: \"pdf\" is not a report format (expected html, md or json)",
        ),
    ] {
        let out = arbiter(&args, dir.path(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(
        !dir.path().join("missing.db").exists(),
        "no empty store is created"
    );
}

/// A run the SPRT stops (H0 after a few pairs: bounds this wide decide fast): its report carries the SPRT-aware Elo beside the plain one, equal to
/// what the statistics compute from the store's totals, in the JSON, both tables and the chart.
/// One game at a time, so that no pair is committed after the decision and the totals are the
/// sample the verdict was reached on (the report estimates from that judged prefix).
#[test]
fn a_decided_run_reports_the_sprt_aware_elo() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "name = \"decided\"\nrounds = 60\nconcurrency = 1\nstore = \"runs.db\"\n\
         [each]\ntc = \"inf\"\nnodes = 300\nhash = 0\n\
         [adjudication]\nmaxmoves = 60\n\
         [sprt]\nelo0 = 0\nelo1 = 200\nalpha = 0.1\nbeta = 0.1\nmodel = \"logistic\"\n\
         [openings]\nfile = \"{BOOK}\"\n\
         [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
         [[engine]]\nname = \"weak\"\nbuiltin = \"staunton\"\n\
         params = {{ knight_mg = 200, bishop_mg = 200, queen_mg = 600 }}\n"
    );
    std::fs::write(dir.path().join("run.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "run.toml"], dir.path(), &[]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "decided: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (totals, _) = store_counts(&dir.path().join("runs.db"));
    let sprt =
        arbiter_stats::Sprt::new(0.1, 0.1, 0.0, 200.0, arbiter_stats::EloModel::Logistic).unwrap();
    let expected = sprt
        .elo_estimate(&arbiter_stats::Sample::of_run(
            true,
            totals.wdl(),
            totals.pentanomial,
        ))
        .unwrap();

    let out = arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    let aware = &json["summary"]["sprt_elo"];
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-9;
    assert!(
        close(&aware["elo"], expected.elo),
        "{aware} vs {expected:?}"
    );
    assert!(close(&aware["elo_ci"][0], expected.interval.0), "{aware}");
    assert!(close(&aware["elo_ci"][1], expected.interval.1), "{aware}");
    assert!(close(&aware["los"], expected.los), "{aware}");
    assert_eq!(aware["games"], totals.wins + totals.draws + totals.losses);
    // Median-unbiased: not the plain estimate, which leans toward the bound that stopped it.
    assert_ne!(json["summary"]["elo"], aware["elo"]);

    let row = format!(
        "{:.2} [{:.2}, {:.2}]",
        expected.elo, expected.interval.0, expected.interval.1
    );
    let html = read(&report.join("index.html"));
    assert!(
        html.contains(&format!(
            "<th>SPRT-aware Elo</th><td data-field=\"sprt-awareelo\">{row}"
        )),
        "{html}"
    );
    let md = read(&report.join("summary.md"));
    assert!(md.contains(&format!("| SPRT-aware Elo | {row}")), "{md}");
    let elo = read(&report.join("elo.svg"));
    let label = format!(
        "SPRT-aware {:.1} [{:.1}, {:.1}]",
        expected.elo, expected.interval.0, expected.interval.1
    );
    assert!(elo.contains(&label), "{label} in {elo}");

    // An undecided run has none.
    let dir = tempfile::tempdir().unwrap();
    play_match(dir.path());
    arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    let json: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("report-1/report.json"))).unwrap();
    assert!(json["summary"]["sprt_elo"].is_null());
}

/// A shell engine that plays its first move at once (1. e4 as White, 1... e5 as Black: legal
/// whatever White opened with) and on its second says it searched 400 ms and answers too late.
const LAGGARD: &str = "#!/bin/sh\nn=0\nwhile read -r line; do\n  case \"$line\" in\n    \
    uci) echo 'id name laggard'; echo uciok;;\n    isready) echo readyok;;\n    \
    ucinewgame) n=0;;\n    position*) pos=\"$line\";;\n    \
    go*) n=$((n+1))\n      if [ $n -eq 1 ]; then\n        \
    case \"$pos\" in *moves*) echo 'bestmove e7e5';; *) echo 'bestmove e2e4';; esac\n      \
    else\n        echo 'info depth 1 score cp 0 time 400 pv a2a3'; sleep 0.7; echo 'bestmove a2a3'\n      \
    fi;;\n    quit) exit 0;;\n  esac\ndone\n";

/// Every game is lost on time by the same move: the report keeps that move (it was never
/// played) in the time charts and lists it with the engine's reported search against the clock.
#[cfg(unix)]
#[test]
fn a_time_loss_shows_its_move_and_whose_time_ran_out() {
    let dir = tempfile::tempdir().unwrap();
    let engine = dir.path().join("laggard.sh");
    write_script(&engine, LAGGARD);
    let config = format!(
        "rounds = 2\nconcurrency = 1\nstore = \"runs.db\"\n\
         [each]\ntc = \"0.3+0\"\nhash = 1\n\
         [[engine]]\nname = \"staunton\"\nbuiltin = \"staunton\"\n\
         [[engine]]\nname = \"laggard\"\ncmd = \"{}\"\n",
        engine.display()
    );
    std::fs::write(dir.path().join("lag.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "lag.toml"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = stored_records(&dir.path().join("runs.db"));
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(r["termination"], "time forfeit", "{r}");
        let flagged = &r["flagged_move"];
        assert_eq!(flagged["engine_ms"], 400, "{r}");
        assert!(flagged["clock_ms"].as_i64().unwrap() < 0, "{r}");
        assert!(flagged["ms"].as_f64().unwrap() >= 300.0, "{r}");
    }
    let played: usize = records
        .iter()
        .map(|r| r["move_ms"].as_array().unwrap().len())
        .sum();

    let out = arbiter(&["report", "1", "--store", "runs.db"], dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report-1");
    // The time chart holds every played move and the four that overran.
    let time = read(&report.join("time.svg"));
    assert_eq!(attribute(&time, "data-points"), (played + 4).to_string());
    let json: serde_json::Value = serde_json::from_str(&read(&report.join("report.json"))).unwrap();
    let losses = json["series"]["time_losses"].as_array().unwrap();
    let games: Vec<u64> = losses.iter().map(|l| l["game"].as_u64().unwrap()).collect();
    assert_eq!(games, [1, 2, 3, 4]);
    for l in losses {
        assert_eq!(
            (&l["engine"], &l["cause"]),
            (&"laggard".into(), &"search".into()),
            "{l}"
        );
    }
    let rows = json["series"]["time_trouble"].as_array().unwrap();
    let laggard = rows.iter().find(|r| r["engine"] == "laggard").unwrap();
    assert_eq!(
        (&laggard["forfeits"], &laggard["in_trouble"]),
        (&4.into(), &4.into())
    );
    let html = read(&report.join("index.html"));
    assert!(html.contains("<caption>Time losses</caption>"), "{html}");
    assert!(
        html.contains("<td data-field=\"lostontime\">laggard</td>")
            && html.contains("<td data-field=\"searchreported\">400 ms</td>"),
        "{html}"
    );
    assert!(html.contains(
        "<td data-field=\"wherethetimewent\">its reported search alone overran the clock</td>"
    ));
    let md = read(&report.join("summary.md"));
    assert!(md.contains("**Time losses**"), "{md}");
    assert!(md.contains("| laggard | "), "{md}");
}

/// `arbiter report` on a file that is not a store (0 bytes, text, missing) turned it into one:
/// it exits 2 naming the file and what it is, and leaves it byte for byte as it was, with no
/// file beside it and no store where none was.
#[test]
fn a_report_of_what_is_not_a_store_exits_2_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.db"), "").unwrap();
    std::fs::write(dir.path().join("notes.db"), "1. e4 e5 2. Nf3 *\n").unwrap();
    let before: Vec<(String, Vec<u8>)> = ["empty.db", "notes.db"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.path().join(f)).unwrap()))
        .collect();
    for (store, expected) in [
        (
            "empty.db",
            "empty.db: not an arbiter database (it is empty)",
        ),
        (
            "notes.db",
            "notes.db: not a database file (is this the right path?)",
        ),
        ("missing.db", "missing.db: no such database file"),
    ] {
        let out = arbiter(&["report", "1", "--store", store], dir.path(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{store}: {stderr}");
        assert!(stderr.contains(expected), "{store}: {stderr}");
    }
    for (file, bytes) in &before {
        assert_eq!(
            &std::fs::read(dir.path().join(file)).unwrap(),
            bytes,
            "{file}"
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["empty.db", "notes.db"], "nothing was created");
}

/// The stored configuration of run 1 edited into a text today's `check` refuses: its SPRT's
/// hypotheses the wrong way round (a stand-in for any check a later arbiter tightens).
const REFUSED_CONFIG: &str =
    "UPDATE runs SET config = REPLACE(config, 'elo1 = 10.0', 'elo1 = -10.0') WHERE id = 1";

/// `arbiter report 1` in `dir` as JSON; its exit code and report.json's text (empty when it
/// failed), and its stderr.
fn json_report(dir: &Path) -> (Option<i32>, String, String) {
    let _ = std::fs::remove_dir_all(dir.join("report-1"));
    let out = arbiter(
        &["report", "1", "--store", "runs.db", "--format", "json"],
        dir,
        &[],
    );
    let json =
        std::fs::read_to_string(dir.join("report-1").join("report.json")).unwrap_or_default();
    (
        out.status.code(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A finished run whose stored configuration text no longer passes today's checks is reported
/// from the facts stored when it was created: the same report as before the edit, with the
/// store's games, the Elo and the SPRT bounds it was played under.
#[test]
fn a_run_whose_stored_configuration_no_longer_checks_is_reported_from_its_facts() {
    let dir = tempfile::tempdir().unwrap();
    let summary = play_match(dir.path());
    let db = dir.path().join("runs.db");
    let (totals, _) = store_counts(&db);
    let (code, before, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");

    raw_sql(&db, REFUSED_CONFIG);
    let edited = dir.path().join("edited.toml");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stored = runtime.block_on(async {
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        store.run(RunId::new(1)).await.unwrap().spec.config
    });
    std::fs::write(&edited, &stored).unwrap();
    let refused = arbiter(&["match", "edited.toml"], dir.path(), &[]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "today's check refuses the text"
    );

    let (code, after, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(after, before, "the report is the one made before the edit");
    let json: serde_json::Value = serde_json::from_str(&after).unwrap();
    let s = &json["summary"];
    assert_eq!(s["games"], 2 * totals.pairs);
    assert_eq!(s["games_planned"], 8);
    assert_eq!(s["wins"], totals.wins);
    assert_eq!(s["losses"], totals.losses);
    assert_eq!(s["elo"], summary["elo"]);
    assert_eq!(s["sprt_bounds"], serde_json::json!([0.0, 10.0]));
    assert_eq!(s["sprt_model"], "normalized");
    assert_eq!(s["llr"], summary["llr"]);
    assert_eq!(s["model"], "pentanomial");
}

/// Run 1's facts as the store holds them (none for a run stored before schema 6).
fn stored_facts(db: &Path) -> Option<arbiter_store::RunFacts> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_read_only(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        let facts = store.run(RunId::new(1)).await.unwrap().spec.facts;
        store.close().await;
        facts
    })
}

/// A store written at schema 5, before runs kept their facts: `arbiter report` upgrades it in
/// place, giving the run the facts its stored configuration says (issue 19: the upgrade is the
/// store's, not re-derived by every report), and reports it as before. When that text no
/// longer checks either, the error names the run and why, and the command exits 2.
#[test]
fn a_run_stored_before_its_facts_is_reported_from_its_configuration() {
    let dir = tempfile::tempdir().unwrap();
    play_match(dir.path());
    let db = dir.path().join("runs.db");
    let (code, current, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    let created = stored_facts(&db).expect("a new run's facts");

    // The file as schema 5 left it: no facts, no link, none of migrations 6 to 10 (the fleet's
    // tables and columns, the API's tokens, the engines' artifacts). A migration that adds a
    // table adds it here too, or this test fails on "table ... already exists".
    raw_sql(
        &db,
        "DROP TABLE run_files; DROP TABLE run_prefix; DROP TABLE batches; DROP TABLE workers; \
         DROP TABLE tokens; DROP TABLE artifacts; \
         DROP INDEX pairs_in_unit_order; ALTER TABLE run_engines DROP COLUMN signature; \
         ALTER TABLE runs DROP COLUMN priority; ALTER TABLE runs DROP COLUMN worker_limit; \
         ALTER TABLE runs DROP COLUMN batch_units; \
         DROP INDEX runs_by_confirms_run; ALTER TABLE runs DROP COLUMN facts; \
         ALTER TABLE runs DROP COLUMN confirms_run; \
         DELETE FROM _sqlx_migrations WHERE version >= 6;",
    );
    let (code, old, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(old, current, "the same report from the configuration");
    assert!(
        stderr.is_empty(),
        "a writable store is upgraded quietly: {stderr}"
    );
    assert_eq!(
        stored_facts(&db),
        Some(created),
        "the report stored the facts the run was created with"
    );

    raw_sql(&db, REFUSED_CONFIG);
    let (code, upgraded, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(upgraded, current, "the stored facts, not the edited text");

    raw_sql(&db, "UPDATE runs SET facts = NULL WHERE id = 1");
    let (code, _, stderr) = json_report(dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "run 1 (ci-run) was stored before arbiter kept a run's facts, and its stored \
             configuration no longer reads"
        ) && stderr.contains("elo0 (0) must be below elo1 (-10)"),
        "{stderr}"
    );
    assert_eq!(
        stored_facts(&db),
        None,
        "nothing stored for a text that does not read"
    );
}

/// `arbiter report` never needs to write: an older run in a store that refuses writes (here a
/// trigger, as a read-only replica or a file the user may not write would) is reported from
/// facts computed in memory, the same report, with a warning that the store was left as it was.
#[test]
fn an_older_run_in_a_store_that_cannot_be_written_is_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    play_match(dir.path());
    let db = dir.path().join("runs.db");
    let (code, current, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");

    raw_sql(
        &db,
        "UPDATE runs SET facts = NULL WHERE id = 1; \
         CREATE TRIGGER read_only BEFORE UPDATE ON runs \
         BEGIN SELECT RAISE(ABORT, 'this store is read-only'); END;",
    );
    let (code, report, stderr) = json_report(dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        report, current,
        "the same report from facts computed in memory"
    );
    assert!(
        stderr.starts_with("warning: run 1 was stored by an older arbiter")
            && stderr.contains("this store is read-only"),
        "{stderr}"
    );
    assert_eq!(stored_facts(&db), None, "the store is as it was");
}
