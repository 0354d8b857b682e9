//! Kill `arbiter match` with SIGKILL at arbitrary moments, run the same command again, and
//! check the contracts: every committed pair is kept, none is counted twice, the run finishes
//! with exactly the planned pairs, and the PGN file equals what the store holds. Once for a
//! match and once for a round-robin of three engines.

use std::collections::{BTreeMap, BTreeSet};
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

    // Resuming the finished run reports it again and plays nothing. Issue 18, item 20: from
    // another folder, the stored configuration's relative paths are still the start folder's
    // (the configuration's): its exports are rewritten there, none appear here.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let pgn_before = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    std::fs::remove_file(dir.path().join("games.pgn")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--quiet",
            "--resume",
            "resume",
            "--store",
            "../runs.db",
        ])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written in the current folder: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("games.pgn")).unwrap(),
        pgn_before,
        "{stderr}"
    );
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

/// Game number -> result of each game in a PGN, EPD or JSON-lines export (uncounted games and
/// the JSON summary left out).
fn exported(export: &str, text: &str) -> BTreeMap<u64, String> {
    let quoted = |line: &str, key: &str| {
        line.split(key)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned)
    };
    match export {
        "pgn" => {
            // The Result tag precedes GameNumber: read the pairs in a second pass.
            let mut results = text.lines().filter_map(|l| quoted(l, "[Result \""));
            let numbers = text.lines().filter_map(|l| quoted(l, "[GameNumber \""));
            numbers
                .filter_map(|n| Some((n.parse().ok()?, results.next()?)))
                .collect()
        }
        "epd" => text
            .lines()
            .filter_map(|line| {
                let number = quoted(line, "id \"game ")?.parse().ok()?;
                let c0 = quoted(line, "c0 \"")?;
                Some((number, c0.split(' ').nth(3)?.to_owned()))
            })
            .collect(),
        _ => text
            .lines()
            .filter(|line| line.contains("\"type\":\"game\""))
            .filter_map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).ok()?;
                Some((
                    value["game"].as_u64()?,
                    value["result"].as_str()?.to_owned(),
                ))
            })
            .collect(),
    }
}

/// Game number -> result of every game the store holds for the run `resume`.
fn stored_games(dir: &Path) -> BTreeMap<u64, String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let Ok(store) =
            Store::open(&Location::parse(&dir.join("runs.db").display().to_string())).await
        else {
            return BTreeMap::new();
        };
        let Some(run) = store.find_run_by_name("resume").await.unwrap() else {
            return BTreeMap::new();
        };
        let mut games = store.games(run.id);
        let mut out = BTreeMap::new();
        while let Some(game) = games.next().await {
            let game = game.unwrap().game;
            out.insert(game.game_number, game.result.to_string());
        }
        out
    })
}

/// Issue 18, item 6: while a run plays, its PGN, EPD and JSON-lines exports hold the games the
/// store holds (each committed pair is appended as it commits); after a kill -9 they hold no
/// game the store lacks and lack at most the pair being committed, and the resumed run rebuilds
/// them whole.
#[test]
fn the_exports_follow_the_store_while_the_run_plays() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), 200, &[("dev", 330), ("base", 280)]);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("jsonl = ", "epdout = \"games.epd\"\njsonl = ");
    std::fs::write(&path, text).unwrap();
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["match", "--quiet"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let files = [
        ("pgn", "games.pgn"),
        ("epd", "games.epd"),
        ("jsonl", "games.jsonl"),
    ];
    let read = |export: &str, file: &str| {
        exported(
            export,
            &std::fs::read_to_string(dir.path().join(file)).unwrap_or_default(),
        )
    };
    // Checked at three points of the run, each at a moment the store did not change while the
    // files were read (a commit and its append are a few instructions apart).
    for wanted in [2, 4, 6] {
        let mut agreed = false;
        for _ in 0..2000 {
            let before = stored_games(dir.path());
            let files_now: Vec<_> = files.iter().map(|(e, f)| read(e, f)).collect();
            let after = stored_games(dir.path());
            if before.len() >= 2 * wanted
                && before == after
                && files_now.iter().all(|games| *games == before)
            {
                agreed = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            agreed,
            "the exports never held the store's {} games: store {:?}, files {:?}",
            2 * wanted,
            stored_games(dir.path()).len(),
            files
                .iter()
                .map(|(e, f)| read(e, f).len())
                .collect::<Vec<_>>()
        );
    }
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    let stored = stored_games(dir.path());
    for (export, file) in files {
        let games = read(export, file);
        assert!(
            games.iter().all(|(n, r)| stored.get(n) == Some(r)),
            "{file} holds a game the store lacks"
        );
        assert!(
            games.len() + 2 >= stored.len(),
            "{file}: {} of {}",
            games.len(),
            stored.len()
        );
    }
}

/// A child process killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
