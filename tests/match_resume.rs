//! Kill `arbiter match` with SIGKILL at arbitrary moments, run the same command again, and
//! check the contracts: every committed pair is kept, none is counted twice, the run finishes
//! with exactly the planned pairs, and the PGN file equals what the store holds. Once for a
//! match and once for a round-robin of three engines.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use arbiter_store::{Location, PairKey, Store};
use futures_util::StreamExt;

/// A run of `rounds` pairs per pairing between `engines` (in-process staunton, each with its
/// own bishop value), a match for two and a round-robin for more.
fn config(dir: &Path, rounds: u64, engines: &[(&str, i64)]) -> std::path::PathBuf {
    let mut text = format!(
        "name = \"resume\"\nrounds = {rounds}\nconcurrency = 2\nstore = \"runs.db\"\npgnout = \"games.pgn\"\n\
         jsonl = \"games.jsonl\"\n\
         [each]\ntc = \"inf\"\nnodes = 1500\n\
         [adjudication]\nmaxmoves = 80\n\
         [openings]\nfile = \"{}\"\norder = \"random\"\n",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd")
    );
    for (name, bishop) in engines {
        text.push_str(&format!(
            "[[engine]]\nname = \"{name}\"\nbuiltin = \"staunton\"\nparams = {{ bishop_mg = {bishop} }}\n"
        ));
    }
    let path = dir.join("resume.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn sigkill_and_resume_loses_nothing_and_counts_nothing_twice() {
    kill_and_resume(80, &[("dev", 330), ("base", 280)]);
}

/// The same for a round-robin: every pairing's pairs exactly once, its totals the sum of
/// its pairs, and the PGN the store's games in order.
#[test]
fn a_killed_round_robin_resumes_exactly_once() {
    kill_and_resume(27, &[("dev", 330), ("base", 280), ("old", 250)]);
}

fn kill_and_resume(rounds: u64, engines: &[(&str, i64)]) {
    let pairings = (engines.len() * (engines.len() - 1) / 2) as u32;
    let planned: BTreeSet<PairKey> = (0..pairings)
        .flat_map(|pairing| (0..rounds).map(move |index| PairKey { pairing, index }))
        .collect();
    let pairs = planned.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), rounds, engines);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["match", "--quiet"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(200 + seed % 1200));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
    }
    let before = committed(dir.path());
    eprintln!(
        "{} of {pairs} pairs committed across the killed runs",
        before.len()
    );
    assert!(
        before.len() < pairs as usize,
        "the kills must interrupt the run for this test to mean anything"
    );
    let out = run_to_the_end(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{} in the store", before.len())),
        "resumed from the store: {stderr}"
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open(&Location::parse(
            &dir.path().join("runs.db").display().to_string(),
        ))
        .await
        .unwrap();
        let run = store
            .find_run_by_name("resume")
            .await
            .unwrap()
            .expect("the run")
            .id;
        assert_eq!(store.committed_pairs(run).await.unwrap(), planned);
        let totals = store.totals(run).await.unwrap();
        assert_eq!(totals.pairs, pairs);
        let per_pairing = store.pairing_totals(run).await.unwrap();
        assert_eq!(per_pairing.len(), pairings as usize);
        for pairing in &per_pairing {
            assert_eq!(pairing.pairs, rounds);
            assert_eq!(pairing.wins + pairing.draws + pairing.losses, 2 * rounds);
        }
        assert_eq!(totals.wins + totals.draws + totals.losses, 2 * pairs);
        assert_eq!(totals.pentanomial.iter().sum::<u64>(), pairs);
        // The PGN file is the store's games in order, nothing more, nothing less; so are the
        // JSON lines, with one summary after them.
        let mut from_store = String::new();
        let mut json_from_store = Vec::new();
        let mut games = store.games(run);
        while let Some(game) = games.next().await {
            let game = game.unwrap().game;
            from_store.push_str(&game.pgn);
            json_from_store.push(game.json);
        }
        let jsonl = std::fs::read_to_string(dir.path().join("games.jsonl")).unwrap();
        let lines: Vec<&str> = jsonl.lines().collect();
        assert_eq!(
            lines.len(),
            json_from_store.len() + 1,
            "games and one summary"
        );
        assert_eq!(lines[..json_from_store.len()], json_from_store[..]);
        assert!(lines.last().unwrap().contains("\"type\":\"summary\""));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("games.pgn")).unwrap(),
            from_store
        );
    });
    // Pairs committed before the kills were kept, not replayed.
    assert!(before.is_subset(&committed(dir.path())));

    // Resuming the finished run reports it again and plays nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match", "--quiet", "--resume", "resume", "--store", "runs.db",
        ])
        // A stored configuration's relative paths are taken from the current folder.
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{pairs} in the store")),
        "{stderr}"
    );
    assert!(!stdout.contains("Started game"), "{stdout}");
}

/// `arbiter match --quiet CONFIG`, waited for.
fn run_to_the_end(config: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--quiet"])
        .arg(config)
        .output()
        .unwrap()
}

fn committed(dir: &Path) -> BTreeSet<PairKey> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let Ok(store) =
            Store::open(&Location::parse(&dir.join("runs.db").display().to_string())).await
        else {
            return BTreeSet::new();
        };
        match store.find_run_by_name("resume").await.unwrap() {
            Some(run) => store.committed_pairs(run.id).await.unwrap(),
            None => BTreeSet::new(),
        }
    })
}
