//! `arbiter report` on an SPSA tuning run, end to end: a small in-process run is tuned (with
//! and without the confirmation SPRT), then reported. Every parameter's chart holds one point
//! per stored step plus the start, the table's tuned values are the store's last values bit for
//! bit, report.json carries every step's values, and the confirmation's verdict, Elo and LLR
//! are those of its own match report.

use std::path::Path;

use crate::common::{arbiter, raw_sql, text, BOOK};
use arbiter_store::{Location, RunKind, Store};

/// Knight and bishop from deliberately wrong values, moving visibly in a few steps.
const PARAMS: &str = "# name, type, start, min, max, c_end, r_end\n\
                      knight_mg, int, 200, 200, 500, 12, 0.05\n\
                      bishop_mg, int, 450, 200, 500, 12, 0.05\n";

/// A tuning run `tune` of staunton in process: 8 pairs in 2 steps, `extra` appended.
fn tune(dir: &Path, extra: &str) -> std::process::Output {
    std::fs::write(dir.join("tune.txt"), PARAMS).unwrap();
    let text = format!(
        "name = \"tune\"\nseed = 7\nconcurrency = 2\nstore = \"runs.db\"\n\
         [each]\ntc = \"inf\"\nnodes = 300\n\
         [adjudication]\nmaxmoves = 50\n\
         [openings]\nfile = \"{BOOK}\"\norder = \"random\"\n\
         [[engine]]\nname = \"sta\"\nbuiltin = \"staunton\"\n\
         [spsa]\npairs = 8\npairs_per_step = 4\nparams_file = \"tune.txt\"\n{extra}"
    );
    std::fs::write(dir.join("tune.toml"), text).unwrap();
    arbiter(&["tune", "spsa", "tune.toml"], dir)
}

/// The stored values after each step of run `name`, and the names of the store's runs.
fn stored(dir: &Path, name: &str) -> (Vec<Vec<f64>>, Vec<String>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.join("runs.db").display().to_string());
        let store = Store::open_existing(&location).await.unwrap();
        let run = store.find_run_by_name(name).await.unwrap().unwrap();
        let steps = store.tuning_steps(run.id).await.unwrap();
        let runs = store.runs().await.unwrap();
        store.close().await;
        (
            steps
                .iter()
                .map(|s| serde_json::from_str(&s.step.theta).unwrap())
                .collect(),
            runs.into_iter().map(|r| r.spec.name).collect(),
        )
    })
}

fn report(dir: &Path, run: &str, out: &str) -> (String, String, serde_json::Value) {
    let result = arbiter(&["report", run, "--store", "runs.db", "--out", out], dir);
    assert_eq!(result.status.code(), Some(0), "{}", text(&result.stderr));
    let out = dir.join(out);
    let read = |file: &str| std::fs::read_to_string(out.join(file)).unwrap();
    let json = serde_json::from_str(&read("report.json")).unwrap();
    (read("index.html"), read("summary.md"), json)
}

/// The text of the first element of `html` opening with `start`, up to `end`.
fn element<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} is missing"));
    let len = html[from..].find(end).expect("closed");
    &html[from..from + len]
}

#[test]
fn a_tuning_run_reports_each_parameters_path_and_the_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(
        dir.path(),
        "[spsa.confirm]\nelo0 = 0\nelo1 = 10\nrounds = 3\n",
    );
    // 3: the confirmation SPRT reached its pair limit undecided.
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let (steps, runs) = stored(dir.path(), "tune");
    assert_eq!(steps.len(), 2);
    let confirmation = runs
        .iter()
        .find(|r| r.starts_with("sta-tuned-vs-sta-start-"))
        .expect("the confirmation run is stored");

    let (html, md, json) = report(dir.path(), "tune", "rep");
    assert!(html.contains("tune (SPSA tuning run 1)"), "{html}");
    assert!(
        html.contains("<p class=\"status\">finished: complete</p>"),
        "{html}"
    );
    let last = &steps[1];
    for (i, (name, start)) in [("knight_mg", "2.00"), ("bishop_mg", "4.50")]
        .into_iter()
        .enumerate()
    {
        // One point per stored step, and the start; the start as a level, in pawns.
        let figure = element(&html, &format!("<figure id=\"theta-{name}\">"), "</figure>");
        let svg = element(figure, "<svg", ">");
        assert!(
            svg.contains("data-chart=\"theta\"") && svg.contains(" data-points=\"3\""),
            "{svg}"
        );
        assert!(figure.contains(&format!("start {start}")), "{figure}");
        // The tuned value is the store's last, exactly.
        let row = element(&html, &format!("<tr data-param=\"{name}\">"), "</tr>");
        assert!(
            row.contains(&format!("data-field=\"tuned\" data-value=\"{}\"", last[i])),
            "{row} {last:?}"
        );
        assert!(
            row.contains(&format!(
                "data-field=\"start\" data-value=\"{}\"",
                start.parse::<f64>().unwrap() * 100.0
            )),
            "{row}"
        );
        assert!(md.contains(&format!("![{name} (pawns)")), "{md}");
        assert!(dir.path().join(format!("rep/theta-{name}.svg")).is_file());
        assert_eq!(json["params"][i]["tuned"].as_f64(), Some(last[i]));
    }
    // Every step's values.
    let json_steps: Vec<Vec<f64>> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| serde_json::from_value(s["theta"].clone()).unwrap())
        .collect();
    assert_eq!(json_steps, steps);
    assert_eq!(json["games"], 16);
    let wdl = ["wins", "draws", "losses"].map(|k| json[k].as_u64().unwrap());
    assert_eq!(wdl.iter().sum::<u64>(), 16);
    assert!(html.contains(&format!(
        "{} / {} / {} (the plus side)",
        wdl[0], wdl[1], wdl[2]
    )));

    // The confirmation's numbers are its own match report's.
    let (_, _, matched) = report(dir.path(), confirmation, "confirm");
    let matched = &matched["summary"];
    assert_eq!(json["confirmation"]["name"], *confirmation);
    for key in ["verdict", "games", "elo", "elo_ci", "llr", "pentanomial"] {
        assert_eq!(json["confirmation"][key], matched[key], "{key}");
    }
    let cell = element(&html, "<td data-field=\"confirmation\">", "</td>");
    let elo = matched["elo"].as_f64().unwrap();
    let [lo, hi] = [0, 1].map(|i| matched["elo_ci"][i].as_f64().unwrap());
    let llr = matched["llr"].as_f64().unwrap();
    let expected = format!(
        "{confirmation} (run 2): complete, Elo {elo:.2} +/- {:.2}, LLR {llr:.2} after 6 games",
        (hi - lo) / 2.0
    );
    assert!(cell.ends_with(&expected), "{cell}\n{expected}");
    assert!(html.contains("<section id=\"confirmation\">"));
    assert!(html.contains("<figure id=\"confirmation-llr\">"));
    assert!(md.contains("### Confirmation SPRT: "), "{md}");
    assert!(dir.path().join("rep/confirmation-llr.svg").is_file());
}

/// The facts and the link `arbiter tune spsa` stores: the tuning run is an SPSA run of 16
/// games; its confirmation is a paired match under the configured SPRT, linked to it. The
/// report finds the confirmation by that link whatever it is named, and a confirmation stored
/// before the link (none) still by its name.
#[test]
fn the_confirmation_is_found_by_its_stored_link() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(
        dir.path(),
        "[spsa.confirm]\nelo0 = 0\nelo1 = 10\nrounds = 3\n",
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let db = dir.path().join("runs.db");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runs = runtime.block_on(async {
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        let runs = store.runs().await.unwrap();
        let linked = store.confirmations(runs[0].id).await.unwrap();
        assert_eq!(linked, runs[1..], "the one confirmation, linked");
        store.close().await;
        runs
    });
    let [tuning, confirmation] = &runs[..] else {
        panic!("two runs: {runs:?}")
    };
    let facts = tuning.spec.facts.as_ref().expect("the tuning run's facts");
    assert_eq!(
        (facts.kind, facts.games_planned, &facts.sprt),
        (RunKind::Spsa, 16, &None)
    );
    assert_eq!(confirmation.spec.confirms, Some(tuning.id));
    let facts = confirmation.spec.facts.as_ref().expect("the match's facts");
    assert_eq!(facts.kind, RunKind::Match);
    assert!(facts.paired());
    assert_eq!(facts.games_planned, 6);
    let sprt = facts.sprt.as_ref().expect("the confirmation's SPRT");
    assert_eq!([sprt.elo0, sprt.elo1], [0.0, 10.0]);

    // Renamed, it is still this run's confirmation: the link, not the name, says so.
    raw_sql(&db, "UPDATE runs SET name = 'renamed' WHERE id = 2");
    let (_, _, json) = report(dir.path(), "tune", "linked");
    assert_eq!(json["confirmation"]["name"], "renamed");
    // Without the link, as a store of schema 5 holds it, the name finds it.
    raw_sql(
        &db,
        &format!(
            "UPDATE runs SET name = '{}', confirms_run = NULL WHERE id = 2",
            confirmation.spec.name
        ),
    );
    let (_, _, json) = report(dir.path(), "tune", "named");
    assert_eq!(json["confirmation"]["name"], *confirmation.spec.name);
    assert_eq!(json["confirmation"]["games"], 6);
    // ... and the report stored the link it found, so that the store says it from now on.
    let confirms = runtime.block_on(async {
        let store = Store::open_read_only(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        let linked = store.confirmations(tuning.id).await.unwrap();
        store.close().await;
        linked.iter().map(|r| r.id).collect::<Vec<_>>()
    });
    assert_eq!(
        confirms,
        [confirmation.id],
        "the link, stored by the report"
    );
}

#[test]
fn a_tuning_run_without_a_confirmation_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = tune(dir.path(), "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (html, md, json) = report(dir.path(), "1", "rep");
    assert!(
        html.contains("<td data-field=\"confirmation\">no confirmation SPRT</td>"),
        "{html}"
    );
    assert!(
        md.contains("| Confirmation | no confirmation SPRT |"),
        "{md}"
    );
    assert!(json["confirmation"].is_null());
    assert!(!html.contains("id=\"confirmation\""));
    assert_eq!(json["steps"].as_array().unwrap().len(), 2);
}

/// A tuning run whose stored set-up this build cannot read is an error naming the run and
/// what could not be read, not a panic or an empty report.
#[test]
fn an_unreadable_set_up_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Store::open(&location).await.unwrap();
        let spec = arbiter_store::RunSpec::head_to_head(
            "tune".into(),
            7,
            String::new(),
            "sta+".into(),
            "sta-".into(),
            8,
        );
        let setup = arbiter_store::TuningSetup {
            method: arbiter_store::TuningMethod::Spsa,
            setup: "{}".into(),
        };
        store.create_tuning_run(&spec, &setup).await.unwrap();
        store.close().await;
    });
    let out = arbiter(&["report", "tune", "--store", "runs.db"], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("run 1: the stored tuning set-up cannot be read: missing field `params`"),
        "{stderr}"
    );
    assert!(!dir.path().join("report-tune").exists());
}
