//! SPSA on the fleet through the real binary, on a throwaway PostgreSQL cluster: `arbiter
//! submit` of a tuning configuration and `arbiter worker` processes.
//!
//! Two oracles. With one worker the batches come in order, each from the values the one before
//! left, so the queued run must be `arbiter tune spsa`'s run on one machine step for step, to
//! the last bit (fixed nodes make the games deterministic). With workers killed with SIGKILL
//! at random instants, every batch must be applied exactly once: the stored steps are replayed
//! here with the tuner's own arithmetic from the stored set-up (each step's update from the
//! values the one before left), and each perturbation must be the one its batch draws around
//! values the run had before that step.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arbiter_records::spsa::SpsaSetup;
use arbiter_store::{Location, RunOutcome, RunState, Store, TuningStep};
use arbiter_tune::spsa::{Perturbation, Spsa};

use crate::common::{arbiter, text, BOOK};

/// A tuning configuration of staunton in process at fixed nodes: `pairs` pairs in steps of
/// `per_step`, knight and bishop from deliberately wrong values.
pub(crate) fn config(dir: &Path, pairs: u64, per_step: u64) -> PathBuf {
    std::fs::copy(BOOK, dir.join("book.epd")).unwrap();
    std::fs::write(
        dir.join("tune.txt"),
        "# name, type, start, min, max, c_end, r_end\n\
         knight_mg, int, 200, 200, 500, 12, 0.05\n\
         bishop_mg, int, 450, 200, 500, 12, 0.05\n",
    )
    .unwrap();
    let path = dir.join("tune.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"tune\"\nseed = 7\nconcurrency = 1\nstore = \"local.db\"\n\
             [each]\ntc = \"inf\"\nnodes = 300\nhash = 1\n\
             [adjudication]\nmaxmoves = 50\n\
             [openings]\nfile = \"book.epd\"\norder = \"random\"\n\
             [[engine]]\nname = \"sta\"\nbuiltin = \"staunton\"\n\
             [spsa]\npairs = {pairs}\npairs_per_step = {per_step}\nparams_file = \"tune.txt\"\n"
        ),
    )
    .unwrap();
    path
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Run `tune`'s state, set-up and steps (without their commit times) in the store at `db`.
pub(crate) fn stored(db: &str) -> (RunState, SpsaSetup, Vec<TuningStep>) {
    block_on(async {
        let store = Store::open(&Location::parse(db)).await.unwrap();
        let run = store.find_run_by_name("tune").await.unwrap().unwrap();
        let setup = store.tuning_setup(run.id).await.unwrap().unwrap();
        let steps = store.tuning_steps(run.id).await.unwrap();
        store.close().await;
        (
            run.state,
            serde_json::from_str(&setup.setup).unwrap(),
            steps.into_iter().map(|s| s.step).collect(),
        )
    })
}

fn submit(config: &Path, db: &str, dir: &Path) {
    let submitted = arbiter(&["submit", config.to_str().unwrap(), "--db", db], dir);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        text(&submitted.stdout).contains("(SPSA: a batch is a step)"),
        "{}",
        text(&submitted.stdout)
    );
}

fn worker(db: &str, name: &str, dir: &Path, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "worker",
            "--db",
            db,
            "--name",
            name,
            "--concurrency",
            "1",
            "--lease",
            "3",
            "--exit-when-idle",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start a worker")
}

/// One worker plays the batches in order, so the fleet's run is the local run, bit for bit.
#[test]
fn one_worker_tunes_step_for_step_as_tune_spsa_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 16, 4);
    let local = arbiter(&["tune", "spsa", "tune.toml"], dir.path());
    assert!(local.status.success(), "{}", text(&local.stderr));
    let (_, _, local_steps) = stored(&dir.path().join("local.db").display().to_string());
    assert_eq!(local_steps.len(), 4);

    let cluster = arbiter_pgtest::Cluster::start().expect("a throwaway PostgreSQL cluster");
    let db = cluster.database("spsa").unwrap();
    submit(&config, &db, dir.path());
    let log = dir.path().join("worker.log");
    let status = worker(&db, "only", dir.path(), &log).wait().unwrap();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("counted as step 3; run finished: complete"),
        "{log}"
    );

    let (state, _, fleet_steps) = stored(&db);
    assert_eq!(
        state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    assert_eq!(fleet_steps, local_steps, "{log}");
    // And it moved something: the test would pass vacuously on a run that stood still.
    assert_ne!(local_steps[3].theta, "[200.0,450.0]");
}

/// Three workers, killed with SIGKILL at random instants and restarted: every batch applied
/// exactly once, each update from the values the one before left.
#[test]
fn killed_spsa_workers_apply_every_batch_once() {
    const PAIRS: u64 = 40;
    const PER_STEP: u64 = 2;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), PAIRS, PER_STEP);
    let cluster = arbiter_pgtest::Cluster::start().expect("a throwaway PostgreSQL cluster");
    let db = cluster.database("spsa").unwrap();
    submit(&config, &db, dir.path());

    let log = dir.path().join("workers.log");
    let mut workers: Vec<Child> = (0..3)
        .map(|i| worker(&db, &format!("w{i}"), dir.path(), &log))
        .collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut kills = 0;
    let mut steps_at_last_kill = 0;
    loop {
        std::thread::sleep(Duration::from_millis(50 + next() % 300));
        let (state, _, steps) = stored(&db);
        if !matches!(state, RunState::Running) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the fleet did not finish in 5 minutes:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        // A kill per two steps counted, at a random instant: kills fall all through the run.
        if steps.len() < steps_at_last_kill + 2 {
            continue;
        }
        steps_at_last_kill = steps.len();
        let victim = (next() % 3) as usize;
        workers[victim].kill().unwrap();
        workers[victim].wait().unwrap();
        kills += 1;
        workers[victim] = worker(&db, &format!("w{victim}-{kills}"), dir.path(), &log);
    }
    for mut child in workers {
        let _ = child.kill();
        let _ = child.wait();
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        kills >= 3,
        "only {kills} kills: too short to test anything\n{log}"
    );

    let (state, setup, steps) = stored(&db);
    assert_eq!(
        state,
        RunState::Finished {
            verdict: RunOutcome::Complete
        }
    );
    let spsa = Spsa::new(setup.params, setup.hyper).unwrap();
    let batches = PAIRS / PER_STEP;
    assert_eq!(steps.len() as u64, batches, "one step per batch\n{log}");
    let mut theta = spsa.start();
    // The values before each step: a batch is perturbed around values the run had when it
    // was claimed, which is before its own step.
    let mut before: Vec<Vec<f64>> = Vec::new();
    let mut applied: Vec<u64> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        assert_eq!(step.step, n as u64);
        let p: Perturbation = serde_json::from_str(&step.perturbation).unwrap();
        assert_eq!(step.iteration, p.iteration);
        assert_eq!(
            step.totals.pairs, PER_STEP,
            "batch {} holds a step's pairs",
            p.step
        );
        before.push(theta.clone());
        assert!(
            before
                .iter()
                .any(|values| spsa.perturb(values, p.step, 7) == p),
            "step {n} (batch {}) was not played around values the run had before it",
            p.step
        );
        theta = spsa.update(&theta, &p, step.totals.wins, step.totals.losses);
        let stored: Vec<f64> = serde_json::from_str(&step.theta).unwrap();
        assert_eq!(
            stored, theta,
            "step {n}: the update from step {n} - 1's values"
        );
        applied.push(p.step);
    }
    applied.sort_unstable();
    assert_eq!(
        applied,
        (0..batches).collect::<Vec<_>>(),
        "every batch applied once"
    );
}

/// A worker whose UCI engine does not declare a tuned option leaves the run before playing a
/// game (the engine would ignore the `setoption` and the run would tune nothing), saying which
/// option and what the engine declares; the run's batches stay open for other workers. The
/// submitter need not have the engine, so `arbiter submit` cannot check this; Stockfish from
/// /usr/games declares no `KnightValue`.
#[test]
fn a_worker_whose_engine_lacks_a_tuned_option_leaves_the_run() {
    let stockfish = "/usr/games/stockfish";
    assert!(Path::new(stockfish).is_file(), "{stockfish} is needed");
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 4, 2);
    let text_of = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text_of.replace(
            "[[engine]]\nname = \"sta\"\nbuiltin = \"staunton\"\n",
            &format!("[[engine]]\nname = \"sf\"\ncmd = \"{stockfish}\"\n"),
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tune.txt"),
        "KnightValue, int, 300, 200, 400, 10, 0.002\n",
    )
    .unwrap();
    let db = dir.path().join("fleet.db").display().to_string();
    submit(&config, &db, dir.path());
    let log = dir.path().join("worker.log");
    let status = worker(&db, "w", dir.path(), &log).wait().unwrap();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("run 1 refused: ")
            && log.contains("engine sf (/usr/games/stockfish) declares no option \"KnightValue\""),
        "{log}"
    );
    assert!(!log.contains("counted as step"), "{log}");
    let (state, _, steps) = stored(&db);
    assert_eq!(state, RunState::Running);
    assert!(steps.is_empty());
}
