//! `arbiter tune spsa` end to end: a small in-process run that moves the values and writes
//! them, a run killed with SIGKILL at arbitrary instants that resumes onto exactly the
//! trajectory of an uninterrupted run, the same run over UCI (staunton's binary, its
//! parameters set with `setoption`) giving the same steps as in process, and clear errors for
//! bad configurations.
//!
//! The UCI test needs the staunton binary beside the arbiter binary (`common::staunton`). Run
//! alone:
//!
//! ```sh
//! cargo build -p staunton && cargo test -p arbiter --test e2e -- tune_spsa_cli::
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{arbiter, staunton, text, write_script, BOOK};
use arbiter_store::{Location, Store, TuningStep};

/// Parameter lines for staunton: knight and bishop from deliberately wrong values, with a
/// learning rate large enough that a few steps move them visibly.
const PARAMS: &str = "# name, type, start, min, max, c_end, r_end\n\
                      knight_mg, int, 200, 200, 500, 12, 0.05\n\
                      bishop_mg, int, 450, 200, 500, 12, 0.05\n";

/// A tuning configuration for `engine` (its `[[engine]]` lines), 16 pairs in steps of 4.
fn config(dir: &Path, engine: &str) -> PathBuf {
    std::fs::write(dir.join("tune.txt"), PARAMS).unwrap();
    let text = format!(
        "name = \"tune\"\nseed = 7\nconcurrency = 2\nstore = \"runs.db\"\n\
         [each]\ntc = \"inf\"\nnodes = 300\n\
         [adjudication]\nmaxmoves = 50\n\
         [openings]\nfile = \"{BOOK}\"\norder = \"random\"\n\
         {engine}\
         [spsa]\npairs = 16\npairs_per_step = 4\nparams_file = \"tune.txt\"\n"
    );
    let path = dir.join("tune.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const IN_PROCESS: &str = "[[engine]]\nname = \"sta\"\nbuiltin = \"staunton\"\n";

/// The steps stored for run `tune` in `dir`'s store, without their commit times.
fn stored_steps(dir: &Path) -> Vec<TuningStep> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.join("runs.db").display().to_string());
        let Ok(store) = Store::open(&location).await else {
            return Vec::new();
        };
        let Some(run) = store.find_run_by_name("tune").await.unwrap() else {
            return Vec::new();
        };
        let steps = store.tuning_steps(run.id).await.unwrap();
        store.close().await;
        steps.into_iter().map(|s| s.step).collect()
    })
}

fn tune(config: &Path, dir: &Path) -> std::process::Output {
    arbiter(
        &["tune", "spsa", "--json", &config.display().to_string()],
        dir,
    )
}

#[test]
fn an_in_process_run_moves_the_values_and_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), IN_PROCESS);
    let out = tune(&path, dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Progress in pawns for piece values, and the table of start and tuned values.
    assert!(
        stderr.contains("SPSA run 1 (tune, new run), seed 7"),
        "{stderr}"
    );
    assert!(stderr.contains("step 4/4, iteration 16: "), "{stderr}");
    assert!(stderr.contains("knight_mg "), "{stderr}");
    assert!(stderr.contains("(start 2.00)"), "{stderr}");
    assert!(
        stderr.contains("Finished SPSA run 1: 4 steps, 32 games"),
        "{stderr}"
    );

    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let params = summary["params"].as_array().unwrap();
    assert_eq!(params.len(), 2);
    let tuned_toml = std::fs::read_to_string(dir.path().join("sta-tuned.toml")).unwrap();
    let tuned = staunton::Params::from_toml(&tuned_toml).unwrap();
    let mut moved = 0;
    for p in params {
        let (start, theta) = (p["start"].as_f64().unwrap(), p["theta"].as_f64().unwrap());
        let (min, max) = (p["min"].as_f64().unwrap(), p["max"].as_f64().unwrap());
        assert!((min..=max).contains(&theta), "{p}");
        if theta != start {
            moved += 1;
        }
        // The file holds the rounded tuned value; the other parameters keep staunton's.
        let name = p["name"].as_str().unwrap();
        assert_eq!(
            f64::from(tuned.get(name).unwrap()),
            p["tuned"].as_f64().unwrap()
        );
        assert_eq!(p["tuned"].as_f64().unwrap(), theta.round());
    }
    assert!(moved > 0, "no value moved: {summary}");
    assert_eq!(tuned.rook_mg, staunton::Params::default().rook_mg);
    // The store holds every step, each with the values after it; the last is the final θ.
    let steps = stored_steps(dir.path());
    assert_eq!(steps.len(), 4);
    assert_eq!(
        steps.iter().map(|s| s.iteration).collect::<Vec<_>>(),
        [0, 4, 8, 12]
    );
    let last: Vec<f64> = serde_json::from_str(&steps[3].theta).unwrap();
    assert_eq!(
        last,
        params
            .iter()
            .map(|p| p["theta"].as_f64().unwrap())
            .collect::<Vec<_>>()
    );

    // Rerunning the finished configuration starts the next run (`tune-2`), as a match does.
    let again = tune(&path, dir.path());
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SPSA run 2 (tune-2, new run)"), "{stderr}");
}

#[test]
fn a_killed_run_resumes_onto_the_uninterrupted_trajectory() {
    let whole = tempfile::tempdir().unwrap();
    let path = config(whole.path(), IN_PROCESS);
    let started = Instant::now();
    let out = tune(&path, whole.path());
    let duration = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = stored_steps(whole.path());
    assert_eq!(expected.len(), 4);

    let killed = tempfile::tempdir().unwrap();
    let path = config(killed.path(), IN_PROCESS);
    let window = duration.as_millis().max(200) as u64;
    let mut seed = 0x2545_F491_4F6C_DD1D_u64 ^ u64::from(std::process::id());
    let mut interrupted = false;
    for _ in 0..4 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["tune", "spsa"])
            .arg(&path)
            .current_dir(killed.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Somewhere within the time a whole run takes, from start-up to the last step.
        std::thread::sleep(Duration::from_millis(seed % window));
        child.kill().unwrap(); // SIGKILL on Unix
        let status = child.wait().unwrap();
        interrupted |= !status.success();
        let so_far = stored_steps(killed.path());
        // What was committed before a kill is exactly the uninterrupted run's.
        assert_eq!(so_far[..], expected[..so_far.len()]);
    }
    assert!(interrupted, "at least one kill must cut a run short");
    let out = tune(&path, killed.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(stored_steps(killed.path()), expected);
    assert_eq!(
        std::fs::read_to_string(killed.path().join("sta-tuned.toml")).unwrap(),
        std::fs::read_to_string(whole.path().join("sta-tuned.toml")).unwrap()
    );
}

/// Over UCI the values reach staunton as `setoption` lines: at fixed nodes its games, and so
/// every step, are those of the same run in process.
#[test]
fn a_uci_engine_is_tuned_through_setoption() {
    let uci = tempfile::tempdir().unwrap();
    let engine = format!(
        "[[engine]]\nname = \"sta\"\ncmd = \"{}\"\noptions = {{ Hash = \"1\" }}\n",
        staunton().display()
    );
    let path = config(uci.path(), &engine);
    let out = tune(&path, uci.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(uci.path().join("sta-tuned.uci")).unwrap();
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: String = summary["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "setoption name {} value {}\n",
                p["name"].as_str().unwrap(),
                p["tuned"].as_f64().unwrap() as i64
            )
        })
        .collect();
    assert_eq!(lines, expected);

    let in_process = tempfile::tempdir().unwrap();
    let path = config(in_process.path(), IN_PROCESS);
    let out = tune(&path, in_process.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(stored_steps(uci.path()), stored_steps(in_process.path()));
}

/// Issue 19: over UCI the engines outlive the steps. A run of four steps, one game at a time,
/// starts the engine three times: once to read the options it declares, then the plus and the
/// minus player once each, every later step sending its values as `setoption` lines (before,
/// each step started both again: nine starts). The steps are those of the same run in process.
#[cfg(unix)]
#[test]
fn a_uci_run_starts_each_engine_once() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts.txt");
    let wrapper = dir.path().join("staunton.sh");
    write_script(
        &wrapper,
        format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{}' \"$@\"\n",
            starts.display(),
            staunton().display()
        ),
    );
    let engine = format!(
        "[[engine]]\nname = \"sta\"\ncmd = \"{}\"\noptions = {{ Hash = \"1\" }}\n",
        wrapper.display()
    );
    let one_at_a_time = |dir: &Path, engine: &str| {
        let path = config(dir, engine);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("concurrency = 2", "concurrency = 1")).unwrap();
        path
    };
    let path = one_at_a_time(dir.path(), &engine);
    let out = tune(&path, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let steps = stored_steps(dir.path());
    assert_eq!(steps.len(), 4);
    let started = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert_eq!(
        started, 3,
        "the option check, then plus and minus once each"
    );

    let in_process = tempfile::tempdir().unwrap();
    let path = one_at_a_time(in_process.path(), IN_PROCESS);
    let out = tune(&path, in_process.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(steps, stored_steps(in_process.path()));
}

/// A bad configuration is refused with exit code 2 and a message naming what is wrong; nothing
/// is created.
#[test]
fn bad_configurations_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, String, &str); 8] = [
        (
            "no-section.toml",
            IN_PROCESS.to_owned(),
            "has no [spsa] section",
        ),
        (
            "two-engines.toml",
            format!(
                "{IN_PROCESS}nodes = 100\n[[engine]]\nname = \"b\"\nbuiltin = \"staunton\"\n\
                 nodes = 100\n[spsa]\npairs = 4\nparams = [\"knight_mg\"]\n"
            ),
            "engine: a tuning run has exactly one [[engine]]",
        ),
        (
            "unknown-param.toml",
            format!("{IN_PROCESS}nodes = 100\n[spsa]\npairs = 4\nparams = [\"knight\"]\n"),
            "parameter knight: staunton has no such parameter",
        ),
        (
            "typo.toml",
            format!("{IN_PROCESS}nodes = 100\n[spsa]\npairs = 4\nparms = [\"knight_mg\"]\n"),
            "unknown field `parms`",
        ),
        (
            "bad-line.toml",
            format!("{IN_PROCESS}nodes = 100\n[spsa]\npairs = 4\nparams_file = \"bad.txt\"\n"),
            "bad.txt:2: ",
        ),
        (
            "no-limit.toml",
            format!("{IN_PROCESS}[spsa]\npairs = 4\nparams = [\"knight_mg\"]\n"),
            "engine[sta].tc (or each.tc): no limit",
        ),
        (
            "bad-confirm.toml",
            format!(
                "{IN_PROCESS}nodes = 100\n[spsa]\npairs = 4\nparams = [\"knight_mg\"]\n\
                 [spsa.confirm]\nelo0 = 5\nelo1 = 0\n"
            ),
            "spsa.confirm: sprt: elo0 (5) must be below elo1 (0)",
        ),
        (
            // Issue 18, item 9: R_k was a NaN, stored as null, and the run unreadable for ever.
            "overflow.toml",
            format!(
                "{IN_PROCESS}nodes = 100\n[spsa]\npairs = 4\nparams = [\"knight_mg\"]\n\
                 alpha = 1e300\ngamma = 1e300\n"
            ),
            "alpha = 1e300, gamma = 1e300 over 4 pairs in steps of 4: c_k at the first step of \
             knight_mg is inf, not a finite number",
        ),
    ];
    std::fs::write(
        dir.path().join("bad.txt"),
        "knight_mg, int, 300, 200, 500, 12, 0.002\nbishop_mg, int, 300\n",
    )
    .unwrap();
    for (file, config, expected) in cases {
        std::fs::write(dir.path().join(file), config).unwrap();
        let out = arbiter(&["tune", "spsa", file], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
    }
    assert!(
        !dir.path().join("arbiter.db").exists(),
        "a configuration that cannot run creates no store"
    );
    let missing = arbiter(&["tune", "spsa", "nowhere.toml"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nowhere.toml"));
}

/// Issue 18, item 8: fishtest lines a UCI engine cannot take (an option it lacks, a range
/// beyond the one it declares, a float for a spin) are refused before the first step, with
/// what the engine declares; before, the run played to the end and wrote a file the engine
/// refuses. Stockfish from /usr/games, whose `uci` answer declares `Skill Level` as a spin
/// from 0 to 20.
#[test]
fn parameters_a_uci_engine_does_not_declare_are_refused() {
    let stockfish = "/usr/games/stockfish";
    assert!(Path::new(stockfish).is_file(), "{stockfish} is needed");
    let dir = tempfile::tempdir().unwrap();
    let engine = format!("[[engine]]\nname = \"sf\"\ncmd = \"{stockfish}\"\n");
    let path = config(dir.path(), &engine);
    let cases = [
        (
            "KnightValue, int, 300, 200, 400, 10, 0.002\n",
            "KnightValue: engine sf (/usr/games/stockfish) declares no option \"KnightValue\"; \
             its spin options: Threads 1..1024, Hash 1..33554432",
        ),
        (
            "Skill Level, int, 10, 0, 30, 2, 0.002\n",
            "Skill Level: the range 0..30 goes beyond the 0..20 that engine sf \
             (/usr/games/stockfish) declares for Skill Level",
        ),
        (
            "Skill Level, float, 10, 0, 20, 2, 0.002\n",
            "Skill Level: engine sf (/usr/games/stockfish) declares Skill Level as a spin \
             option, which cannot take a fraction",
        ),
        (
            "Ponder, int, 0, 0, 1, 1, 0.002\n",
            "declares Ponder as a check option; an int parameter needs a spin",
        ),
    ];
    for (lines, expected) in cases {
        std::fs::write(dir.path().join("tune.txt"), lines).unwrap();
        let out = arbiter(&["tune", "spsa", &path.display().to_string()], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{lines}: {stderr}");
        assert!(
            stderr.contains("spsa.params_file (") && stderr.contains(expected),
            "{lines}: {stderr}"
        );
        assert!(!dir.path().join("runs.db").exists(), "nothing is stored");
    }
}

/// `[spsa.confirm]`: after tuning, the tuned values play the start values in an SPRT through
/// the match command, whose exit code is the command's (3: no decision at the pair limit).
#[test]
fn the_confirmation_sprt_plays_tuned_against_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), IN_PROCESS);
    let mut toml = std::fs::read_to_string(&path).unwrap();
    toml = toml.replace("pairs = 16\n", "pairs = 8\n");
    toml.push_str("[spsa.confirm]\nelo0 = 0\nelo1 = 10\nrounds = 3\n");
    std::fs::write(&path, toml).unwrap();
    let out = arbiter(&["tune", "spsa", "tune.toml"], dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("Confirming: an SPRT of the tuned values against the start values"));
    assert!(
        stdout.contains("Score of sta-tuned vs sta-start"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("Finished game").count(), 6, "{stdout}");
    assert!(stdout.contains("Finished match"), "{stdout}");
}

/// An unfinished tuning run is continued only with the configuration it was started with:
/// another one would mix two experiments in one trajectory.
#[test]
fn an_edited_configuration_does_not_continue_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), IN_PROCESS);
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("pairs = 16\n", "pairs = 99\n");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Store::open(&location).await.unwrap();
        let spec = arbiter_store::RunSpec::head_to_head(
            "tune".into(),
            7,
            edited,
            "sta+".into(),
            "sta-".into(),
            99,
        );
        let setup = arbiter_store::TuningSetup {
            method: arbiter_store::TuningMethod::Spsa,
            setup: "{}".into(),
        };
        store.create_tuning_run(&spec, &setup).await.unwrap();
        store.close().await;
    });
    let out = tune(&path, dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tuning run \"tune\" in ")
            && stderr.contains("was started with another configuration"),
        "{stderr}"
    );
    assert!(stderr.contains("spsa: pairs = 99"), "{stderr}");
    assert!(stored_steps(dir.path()).is_empty(), "nothing was played");
}

/// The confirmation match of the store in `dir` (the run that is not a tuning run), with its
/// committed pairs and whether it is finished.
async fn confirmation(
    store: &Store,
) -> Option<(
    arbiter_store::RunId,
    std::collections::BTreeSet<arbiter_store::PairKey>,
    bool,
)> {
    for run in store.runs().await.ok()? {
        if store.tuning_setup(run.id).await.ok()?.is_none() {
            let pairs = store.committed_pairs(run.id).await.ok()?;
            let finished = matches!(run.state, arbiter_store::RunState::Finished { .. });
            return Some((run.id, pairs, finished));
        }
    }
    None
}

/// Issue 18, item 19: killed during `[spsa.confirm]`, the rerun started a new tuning run
/// (`tune-2`) and replayed all the tuning. It continues the confirmation instead, keeping the
/// pairs it committed. The kill lands once the confirmation has committed a pair (watched in
/// the store the real binary writes).
#[test]
fn an_interrupted_confirmation_is_continued_not_tuned_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), IN_PROCESS);
    let mut toml = std::fs::read_to_string(&path).unwrap();
    toml = toml.replace("pairs = 16\n", "pairs = 8\n");
    // Wide SPRT bounds at small error rates: the confirmation runs long enough to be cut.
    toml.push_str(
        "[spsa.confirm]\nelo0 = -5\nelo1 = 5\nalpha = 0.001\nbeta = 0.001\nrounds = 40\n",
    );
    std::fs::write(&path, toml).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let location = Location::parse(&dir.path().join("runs.db").display().to_string());

    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["tune", "spsa", "tune.toml"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A guard against a hang, not a measure of speed.
    let give_up = Instant::now() + Duration::from_secs(600);
    let (id, before) = loop {
        let seen = runtime.block_on(async {
            let store = Store::open(&location).await.ok()?;
            let found = confirmation(&store).await;
            store.close().await;
            found
        });
        if let Some((id, pairs, finished)) = seen {
            assert!(
                !finished,
                "the confirmation ended before it could be cut short"
            );
            if !pairs.is_empty() {
                break (id, pairs);
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended before its confirmation committed a pair"
        );
        assert!(
            Instant::now() < give_up,
            "no confirmation pair was committed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let steps = stored_steps(dir.path());
    assert_eq!(
        steps.len(),
        2,
        "the tuning run was finished before the kill"
    );

    let out = tune(&path, dir.path());
    let stderr = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{stderr}");
    assert!(
        stderr.contains("SPSA run 1 (tune, tuning finished; continuing its confirmation)"),
        "{stderr}"
    );
    assert_eq!(stored_steps(dir.path()), steps, "no step was played again");
    runtime.block_on(async {
        let store = Store::open(&location).await.unwrap();
        assert!(store.find_run_by_name("tune-2").await.unwrap().is_none());
        assert_eq!(store.runs().await.unwrap().len(), 2, "no new run");
        let (again, after, finished) = confirmation(&store).await.unwrap();
        assert_eq!(again, id, "the same confirmation run");
        assert!(finished, "the confirmation went on to its end");
        assert!(after.is_superset(&before), "{before:?} kept in {after:?}");
        assert!(after.len() > before.len());
        store.close().await;
    });
}
