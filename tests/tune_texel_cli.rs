//! `arbiter tune texel` end to end: positions made by a short self-play run (`arbiter
//! datagen`, both its positions file and its PGN), fitted, written, and the tuned file played
//! in a match; and configurations that are wrong, each refused with the file and what was
//! expected.

use std::path::Path;

use crate::common::{arbiter, text, BOOK};
use staunton::{Params, PARAMS};

/// Twelve fast self-play games: `out/positions.txt` (FEN [result]) and `out/games.pgn`.
fn make_positions(dir: &Path) {
    make_positions_seeded(dir, 5);
}

fn make_positions_seeded(dir: &Path, seed: u64) {
    let store = format!("dg-{seed}.db");
    let seed = seed.to_string();
    let out = arbiter(
        &[
            "datagen",
            "--games",
            "12",
            "--nodes",
            "300",
            "--concurrency",
            "2",
            "--seed",
            &seed,
            "--book",
            BOOK,
            "--output",
            "out/positions.txt",
            "--store",
            &store,
            "--pgnout",
            "out/games.pgn",
            "--quiet",
        ],
        dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn tune(dir: &Path, config: &str) -> (bool, String, String) {
    std::fs::write(dir.join("texel.toml"), config).unwrap();
    let out = arbiter(&["tune", "texel", "texel.toml"], dir);
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    }
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

const CONFIG: &str = r#"
positions = ["out/positions.txt", "out/games.pgn"]
epochs = 40
output = "out/tuned.toml"
"#;

#[test]
fn a_fit_prints_k_the_loss_and_the_values_and_writes_a_params_file_a_match_plays() {
    let dir = tempfile::tempdir().unwrap();
    make_positions(dir.path());
    let (ok, stdout, stderr) = tune(dir.path(), CONFIG);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("K = ") && stdout.contains("(fitted to the start parameters"),
        "{stdout}"
    );
    assert!(
        stdout.contains("epoch     0  loss 0.") && stdout.contains("epoch    40  loss 0."),
        "{stdout}"
    );
    // Piece values in pawns, other weights in their own units; the start is the defaults.
    let defaults = Params::default();
    let knight = format!(
        "knight_mg              {:>7.2} -> ",
        f64::from(defaults.knight_mg) / 100.0
    );
    assert!(stdout.contains(&knight), "{knight:?} in {stdout}");
    let ks_scale = format!("ks_scale               {:>7} -> ", defaults.ks_scale);
    assert!(stdout.contains(&ks_scale), "{ks_scale:?} in {stdout}");
    assert!(
        !stdout.contains("asp_delta"),
        "search constants are not fitted: {stdout}"
    );

    let tuned = Params::load(&dir.path().join("out/tuned.toml")).expect("a staunton params file");
    assert_ne!(tuned, Params::default());
    assert_eq!(tuned.asp_delta, Params::default().asp_delta);
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/tuned.loss.json")).unwrap(),
    )
    .unwrap();
    let loss: Vec<f64> = json["loss"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(loss.len(), 41);
    assert!(loss[40] < loss[0], "{loss:?}");
    for spec in PARAMS.iter().filter(|s| s.name.ends_with("_mg")) {
        assert_eq!(
            json["tuned"][spec.name],
            tuned.get(spec.name).unwrap(),
            "{}",
            spec.name
        );
    }

    // The same positions and settings give the same values.
    std::fs::rename(
        dir.path().join("out/tuned.toml"),
        dir.path().join("out/first.toml"),
    )
    .unwrap();
    assert!(tune(dir.path(), CONFIG).0);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/first.toml")).unwrap(),
        std::fs::read_to_string(dir.path().join("out/tuned.toml")).unwrap()
    );

    // The tuned file is what a match configuration takes.
    let match_config = format!(
        r#"
name = "tuned-vs-start"
rounds = 1
concurrency = 1
store = "m.db"
[each]
tc = "inf"
nodes = 200
hash = 1
[[engine]]
name = "tuned"
builtin = "staunton"
params_file = "out/tuned.toml"
[[engine]]
name = "start"
builtin = "staunton"
[openings]
file = "{BOOK}"
"#
    );
    std::fs::write(dir.path().join("match.toml"), match_config).unwrap();
    let out = arbiter(&["match", "match.toml"], dir.path());
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn wrong_configurations_name_the_file_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bad.txt"),
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1 [1.0]\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 [2.0]\n",
    )
    .unwrap();
    std::fs::write(d.join("good.txt"), "4k3/8/8/8/8/8/8/4K2R w K - 0 1 [1.0]\n").unwrap();
    let cases = [
        (
            "positions = [\"good.txt\"]\nepoch = 5\noutput = \"o.toml\"\n",
            "texel.toml: TOML parse error at line 2",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\ntune = [\"asp_delta\"]\n",
            "texel.toml: tune: parameter asp_delta is not an evaluation weight",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\ntune = [\"knihgt_mg\"]\n",
            "texel.toml: tune: unknown parameter \"knihgt_mg\"",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nquiet = \"calm\"\n",
            "texel.toml: quiet: expected \"resolve\", \"skip\" or \"keep\", found \"calm\"",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nlearning_rate = -1\n",
            "texel.toml: learning_rate: expected a positive number, found -1",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nepochs = 0\n",
            "texel.toml: epochs: expected at least 1",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nk = 0.0\n",
            "texel.toml: k: expected a positive number, found 0",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nthreads = 0\n",
            "texel.toml: threads: expected 1 to 64, found 0",
        ),
        (
            "positions = [\"nope.txt\"]\noutput = \"o.toml\"\n",
            "nope.txt: cannot read",
        ),
        (
            "positions = [\"bad.txt\"]\noutput = \"o.toml\"\n",
            "bad.txt, line 2:",
        ),
        (
            "positions = []\noutput = \"o.toml\"\n",
            "texel.toml: positions: expected at least one file",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\ntune = []\n",
            "texel.toml: tune: empty: name at least one evaluation weight",
        ),
        (
            "positions = [\"draws.txt\"]\noutput = \"o.toml\"\n",
            "texel.toml: positions: no decisive result in ",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nresult_weight = 1.5\n",
            "texel.toml: result_weight: expected a share from 0 (search scores only) to 1 (game \
             results only), found 1.5",
        ),
        (
            "positions = [\"good.txt\"]\noutput = \"o.toml\"\nresult_weight = 0.5\n",
            "texel.toml: result_weight 0.5: no position has a search score to blend in",
        ),
        (
            "positions = [\"both.txt\"]\noutput = \"o.toml\"\n",
            "both.txt, line 2: label -1 is only on the scale win/draw/loss",
        ),
    ];
    std::fs::write(
        d.join("draws.txt"),
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1 [0.5]\n4k3/8/8/8/8/8/8/4K2R b K - 0 1 [0.5]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("both.txt"),
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1 | 0 | 0.5\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 | 0 | -1\n",
    )
    .unwrap();
    for (config, expected) in cases {
        let (ok, stdout, stderr) = tune(d, config);
        assert!(!ok, "{config}: {stdout}");
        assert!(
            stderr.contains(expected),
            "{config}: expected {expected:?} in {stderr}"
        );
    }
}

/// The `K = ...` line of a fit's output.
fn k_line(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("K = "))
        .unwrap_or_else(|| panic!("no K line in {stdout}"))
}

/// Issue 18, items 5 and 10. The same positions as a bullet file (`FEN | score | result`,
/// its losses a whole `0` beside `0.5` draws) fit exactly as datagen's `FEN [result]` file:
/// same K, same values (the `0`s were read as draws: K 0.48 instead of 1.38). And a learning
/// rate far too large is said, and does not write values worse than the start.
#[test]
fn a_bullet_file_fits_as_its_datagen_original_and_a_runaway_rate_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The test needs losses beside draws. Which seed's twelve games have both depends on the
    // engine's evaluation, so the first seed that gives both is taken.
    let original = (5..20)
        .map(|seed| {
            let _ = std::fs::remove_dir_all(d.join("out"));
            make_positions_seeded(d, seed);
            std::fs::read_to_string(d.join("out/positions.txt")).unwrap()
        })
        .find(|text| text.contains(" [0.0]\n") && text.contains(" [0.5]\n"))
        .expect("a seed whose games have a loss and a draw");
    let bullet: String = original
        .lines()
        .map(|line| {
            let (fen, label) = line.rsplit_once(" [").unwrap();
            let result = match label {
                "1.0]" => "1",
                "0.5]" => "0.5",
                "0.0]" => "0",
                other => panic!("{other}"),
            };
            format!("{fen} | 0 | {result}\n")
        })
        .collect();
    assert!(bullet.contains(" | 0\n") && bullet.contains(" | 0.5\n"));
    std::fs::write(d.join("out/bullet.txt"), bullet).unwrap();
    let config = |file: &str, output: &str| {
        format!("positions = [\"out/{file}\"]\nepochs = 5\noutput = \"out/{output}\"\n")
    };
    let (ok, datagen, stderr) = tune(d, &config("positions.txt", "a.toml"));
    assert!(ok, "{datagen}{stderr}");
    let (ok, bullet, stderr) = tune(d, &config("bullet.txt", "b.toml"));
    assert!(ok, "{bullet}{stderr}");
    assert!(
        bullet.contains("labels read as White's score (1 win, 0.5 draw, 0 loss)"),
        "{bullet}"
    );
    assert_eq!(k_line(&bullet), k_line(&datagen));
    assert_eq!(
        std::fs::read_to_string(d.join("out/a.toml")).unwrap(),
        std::fs::read_to_string(d.join("out/b.toml")).unwrap()
    );

    let runaway = format!("{}learning_rate = 1e9\n", config("positions.txt", "c.toml"));
    let (ok, stdout, stderr) = tune(d, &runaway);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("Loss: start 0."), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/c.loss.json")).unwrap()).unwrap();
    let loss: Vec<f64> = json["loss"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let best = json["best_epoch"].as_u64().unwrap() as usize;
    let lowest = loss.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(loss[best], lowest, "{json}");
    // Adam at 1e9 overshoots: the last epoch is not the best, and it is said.
    assert!(loss[loss.len() - 1] > lowest, "{json}");
    assert!(
        stderr.contains(&format!("warning: the loss rose after epoch {best} (")),
        "{stderr}"
    );
    assert!(json["written_loss"].as_f64().unwrap() <= loss[0], "{json}");
    // Every weight thrown to an end of its range is named.
    let at_bounds = json["at_bounds"].as_array().unwrap();
    assert!(!at_bounds.is_empty(), "{json}");
    for name in at_bounds {
        let name = name.as_str().unwrap();
        assert!(
            stderr.contains(&format!("warning: {name} ended at the end of its range")),
            "{name}: {stderr}"
        );
    }
}

/// The engines' scores in a PGN's move comments label its positions too: a blend of results
/// and scores reads them, says how many positions it labelled so, and fits to other targets
/// than the results alone (a lower loss at the start: the scores agree with the evaluation
/// more than whole games' results do).
#[test]
fn search_scores_in_pgn_comments_are_blended_into_the_labels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    make_positions(d);
    let config = |weight: f64, output: &str| {
        format!(
            "positions = [\"out/games.pgn\"]\nepochs = 20\nresult_weight = {weight}\n\
             output = \"out/{output}\"\n"
        )
    };
    let (ok, results, stderr) = tune(d, &config(1.0, "results.toml"));
    assert!(ok, "{results}{stderr}");
    let (ok, blended, stderr) = tune(d, &config(0.25, "blended.toml"));
    assert!(ok, "{blended}{stderr}");
    let read = blended
        .lines()
        .find(|l| l.contains("games.pgn: "))
        .unwrap_or_else(|| panic!("{blended}"));
    let count = |what: &str| -> usize {
        let before = read.split(what).next().unwrap();
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (positions, scored) = (count(" positions,"), count(" with a search score"));
    assert!(scored > positions / 2 && scored <= positions, "{read}");
    assert!(!results.contains("Labels: "), "{results}");
    assert!(
        blended.contains(&format!(
            "Labels: 0.25 x result + 0.75 x the search score's expected result for {scored} of "
        )),
        "{blended}"
    );
    assert_eq!(
        k_line(&blended),
        k_line(&results),
        "K is fitted to the results alone"
    );
    let start_loss = |out: &str| -> f64 {
        let line = out.lines().find(|l| l.starts_with("Loss: start ")).unwrap();
        line["Loss: start ".len()..]
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        start_loss(&blended) < start_loss(&results),
        "{blended}{results}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/blended.loss.json")).unwrap())
            .unwrap();
    assert_eq!(json["result_weight"], 0.25);
    assert_eq!(json["scored"].as_u64(), Some(scored as u64));
}
