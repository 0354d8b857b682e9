//! The CI strength gate of docs/ci.md, run as the workflow runs it: `configs/ci-regression.toml`
//! as shipped (only its time control swapped for a node limit, so the test takes seconds), in a
//! folder laid out like the workflow's arbiter checkout, against two builds of the staunton UCI
//! binary, one of them crippled through its parameters. A regression must fail the job (H0,
//! exit 1) and a real gain must pass it (H1, exit 0).
//!
//! The staunton binary is taken from beside the arbiter binary (`common::staunton`). Run alone:
//!
//! ```sh
//! cargo build --profile release-tests -p staunton
//! cargo test --profile release-tests -p arbiter --test e2e -- ci_regression::
//! ```
// The crippled build is a shell script, as a CI job's build is a Linux program.
#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use crate::common::{staunton, write_script};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The config's time control, and the node limit that replaces it here: a fixed node count keeps
/// the games deterministic (with the seed below) and fast, and the gap between the builds is
/// what decides, not the clock.
const SHIPPED_LIMIT: &str = "tc = \"1+0.01\"\n";
const TEST_LIMIT: &str = "tc = \"inf\"\nnodes = 300\n";

/// Piece values far from the truth (a pawn worth a minor piece, a rook three pawns, a queen
/// six): the crippled build gives its pieces away for pawns and loses nearly every pair. Even so
/// the SPRT needs some 370 pairs: with bounds two normalized Elo apart, each pair can move the
/// LLR by less than 0.01, however lopsided it is (docs/ci.md has the numbers).
const CRIPPLED_PARAMS: &str = "pawn_mg = 200\npawn_eg = 250\n\
                               knight_mg = 200\nknight_eg = 200\nbishop_mg = 200\nbishop_eg = 200\n\
                               rook_mg = 300\nrook_eg = 300\nqueen_mg = 600\nqueen_eg = 600\n";

/// A build of the engine as the workflow installs it at `target/ci/NAME`: the staunton binary
/// itself, or, for the crippled build, a script that starts it with the bad parameters (what a
/// build from a commit that broke the piece values would be).
fn install(checkout: &Path, name: &str, crippled: bool) {
    let ci = checkout.join("target/ci");
    fs::create_dir_all(&ci).unwrap();
    let engine = ci.join(name);
    if crippled {
        let params = ci.join(format!("{name}.params.toml"));
        fs::write(&params, CRIPPLED_PARAMS).unwrap();
        let script = format!(
            "#!/bin/sh\nexec '{}' --params '{}' \"$@\"\n",
            staunton().display(),
            params.display()
        );
        write_script(&engine, script);
    } else {
        fs::copy(staunton(), &engine).unwrap();
    }
}

/// A folder laid out like the workflow's arbiter checkout: the shipped config (node-limited, and
/// seeded so that the games are the same on every run), the shipped book, and the two builds.
fn checkout(dev_crippled: bool) -> tempfile::TempDir {
    let checkout = tempfile::tempdir().unwrap();
    let shipped = fs::read_to_string(format!("{REPO}/configs/ci-regression.toml")).unwrap();
    assert_eq!(
        shipped.matches(SHIPPED_LIMIT).count(),
        1,
        "configs/ci-regression.toml no longer says {SHIPPED_LIMIT:?}: update this test"
    );
    let config = format!("seed = 12\n{}", shipped.replace(SHIPPED_LIMIT, TEST_LIMIT));
    fs::create_dir_all(checkout.path().join("configs")).unwrap();
    fs::write(checkout.path().join("configs/ci-regression.toml"), config).unwrap();
    fs::create_dir_all(checkout.path().join("openings")).unwrap();
    fs::copy(
        format!("{REPO}/openings/quick.epd"),
        checkout.path().join("openings/quick.epd"),
    )
    .unwrap();
    install(checkout.path(), "dev", dev_crippled);
    install(checkout.path(), "base", !dev_crippled);
    checkout
}

/// The workflow's SPRT step, from the checkout's root.
fn sprt_step(checkout: &Path) -> Output {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--quiet", "configs/ci-regression.toml"])
        .current_dir(checkout)
        .output()
        .expect("run arbiter");
    eprintln!("SPRT step: {:.1} s", start.elapsed().as_secs_f64());
    out
}

/// What the workflow's later steps read: the store the report is made from and the PGN that is
/// published with it, where docs/ci.md says they are, holding every committed pair (a game of a
/// pair the verdict cut short is on stdout but never committed).
fn assert_outputs(checkout: &Path, stderr: &str) {
    assert!(checkout.join("target/ci/ci-regression.db").is_file());
    let ptnml = stderr
        .lines()
        .rfind(|l| l.starts_with("Ptnml(0-2): ["))
        .unwrap_or_else(|| panic!("no Ptnml line: {stderr}"));
    let pairs: u64 = ptnml["Ptnml(0-2): [".len()..ptnml.find(']').unwrap()]
        .split(", ")
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    let pgn = fs::read_to_string(checkout.join("target/ci/games.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Event \"arbiter CI non-regression\"]").count() as u64,
        2 * pairs,
        "every committed game is in the published PGN"
    );
}

#[test]
fn a_regression_fails_the_job() {
    let checkout = checkout(true);
    let out = sprt_step(checkout.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("H0 was accepted"), "{stdout}\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "H0 fails the job: {stderr}");
    assert!(
        stdout.contains("Score of dev vs base"),
        "dev is the engine under test: {stdout}"
    );
    assert_outputs(checkout.path(), &stderr);
}

#[test]
fn a_gain_passes_the_job() {
    let checkout = checkout(false);
    let out = sprt_step(checkout.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("H1 was accepted"), "{stdout}\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "H1 passes the job: {stderr}");
    assert_outputs(checkout.path(), &stderr);
}

/// The workflow in docs/ci.md runs the commands this test runs, on the paths it checks.
#[test]
fn the_documented_workflow_runs_these_commands() {
    let doc = fs::read_to_string(format!("{REPO}/docs/ci.md")).unwrap();
    for command in [
        "target/release/arbiter match --quiet configs/ci-regression.toml",
        "target/ci/dev",
        "target/ci/base",
        "target/release/arbiter report ci-regression --store target/ci/ci-regression.db \
         --out target/ci/report --format html,md,json",
        "arbiter/target/ci/games.pgn",
    ] {
        assert!(doc.contains(command), "docs/ci.md does not run {command:?}");
    }
}
