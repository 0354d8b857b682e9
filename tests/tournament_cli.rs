//! Tournaments through the real binary (issue 11): round-robins and gauntlets of any number of
//! engines, UCI and in-process mixed, each with its own limits; standings, per-pairing results
//! and the crosstable; the store's pairings; and the refusals that keep an SPRT a two-engine
//! test.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{arbiter, text, BOOK};
use arbiter_records::entries::RunSummary;
use arbiter_store::{Location, Store};
use futures_util::StreamExt;

const STOCKFISH: &str = "/usr/games/stockfish";

/// The White and Black tags of every game of the PGN file, in order.
fn players_of_games(pgn: &str) -> Vec<(String, String)> {
    let tag = |game: &str, name: &str| {
        let start = game.find(&format!("[{name} \"")).expect(name) + name.len() + 3;
        game[start..start + game[start..].find('"').unwrap()].to_owned()
    };
    pgn.split("[Event ")
        .skip(1)
        .map(|game| (tag(game, "White"), tag(game, "Black")))
        .collect()
}

/// Games per unordered pair of names.
fn games_per_pairing(games: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for (white, black) in games {
        let key = if white < black {
            (white.clone(), black.clone())
        } else {
            (black.clone(), white.clone())
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

/// The standings rows printed last: name -> games, read from the `Rank Name ...` table.
fn last_standings(stdout: &str) -> BTreeMap<String, u64> {
    let table = stdout.rsplit("Rank ").next().expect("a standings table");
    let header = stdout[..stdout.len() - table.len()]
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
        + table.lines().next().unwrap_or_default();
    let columns: Vec<&str> = header.split_whitespace().collect();
    let games_column = columns.iter().position(|c| *c == "Games").expect("Games");
    table
        .lines()
        .skip(1)
        .map_while(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let rank_ok = cells.first()?.parse::<u32>().is_ok();
            rank_ok.then(|| {
                (
                    cells[1].to_owned(),
                    cells[games_column].parse::<u64>().expect("games"),
                )
            })
        })
        .collect()
}

/// A round-robin of Stockfish over UCI and two in-process staunton engines, each with its own
/// limits and options: every pairing plays its rounds, both colours, from the same openings;
/// the standings come at the rating interval and at the end, without `Score of` lines (cutechess
/// prints those for two engines only); the store keeps each pairing's totals.
#[test]
fn a_round_robin_mixes_uci_and_in_process_engines() {
    if !Path::new(STOCKFISH).exists() {
        panic!("{STOCKFISH} is missing: run scripts/ci-setup.sh");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        &[
            "-tournament",
            "round-robin",
            "-engine",
            &format!("cmd={STOCKFISH}"),
            "name=sf",
            "nodes=150",
            "option.Hash=1",
            "option.Threads=1",
            "-engine",
            "builtin=staunton",
            "name=dev",
            "nodes=400",
            "-engine",
            "builtin=staunton",
            "name=base",
            "nodes=300",
            "param.knight_mg=250",
            "-each",
            "tc=inf",
            "hash=0",
            "-rounds",
            "2",
            "-games",
            "2",
            "-repeat",
            "-maxmoves",
            "50",
            "-concurrency",
            "2",
            "-ratinginterval",
            "4",
            "-openings",
            &format!("file={BOOK}"),
            "order=sequential",
            "-store",
            "runs.db",
            "-pgnout",
            "games.pgn",
            "-recover",
        ],
        dir.path(),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("round-robin of 3 engines (sf, dev, base), 3 pairings"),
        "{stderr}"
    );
    assert!(!stdout.contains("Score of"), "{stdout}");
    assert!(
        stdout.matches("Rank ").count() >= 2,
        "standings at the interval and at the end: {stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("Finished match"), "{stdout}");
    let standings = last_standings(&stdout);
    assert_eq!(
        standings,
        [("base", 8), ("dev", 8), ("sf", 8)]
            .map(|(n, g)| (n.to_owned(), g))
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
        "{stdout}"
    );
    // Every engine's Player / Timeouts / Crashed lines.
    for name in ["sf", "dev", "base"] {
        assert!(stdout.contains(&format!("Player: {name}\n")), "{stdout}");
    }

    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    let games = players_of_games(&pgn);
    assert_eq!(games.len(), 12);
    assert!(games_per_pairing(&games).values().all(|&n| n == 4));
    // Each engine is White in half of its games.
    for name in ["sf", "dev", "base"] {
        assert_eq!(games.iter().filter(|(w, _)| w == name).count(), 4, "{name}");
    }

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Store::open_existing(&location).await.unwrap();
        let run = store.runs().await.unwrap().pop().unwrap();
        assert_eq!(run.spec.engines, ["sf", "dev", "base"]);
        assert_eq!(run.spec.pairings.len(), 3);
        let totals = store.pairing_totals(run.id).await.unwrap();
        assert!(totals.iter().all(|t| t.pairs == 2), "{totals:?}");
        // The PGN file is the store's games in order.
        let mut from_store = String::new();
        let mut stored = store.games(run.id);
        while let Some(game) = stored.next().await {
            from_store.push_str(&game.unwrap().game.pgn);
        }
        assert_eq!(from_store, pgn);
    });
}

/// A gauntlet with two seeds from TOML: the seeds play every other engine and not each other;
/// the JSON summary carries the standings, the pairings with their pentanomial counts and the
/// crosstable.
#[test]
fn a_gauntlet_plays_its_seeds_against_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = format!(
        "tournament = \"gauntlet\"\nseeds = 2\nrounds = 2\nconcurrency = 2\nstore = \"runs.db\"\n\
         pgnout = \"games.pgn\"\n[each]\ntc = \"inf\"\nnodes = 250\nhash = 0\n\
         [adjudication]\nmaxmoves = 50\n[openings]\nfile = \"{BOOK}\"\n"
    );
    for (name, knight) in [("a", 325), ("b", 300), ("c", 275), ("d", 250)] {
        config.push_str(&format!(
            "[[engine]]\nname = \"{name}\"\nbuiltin = \"staunton\"\nparams = {{ knight_mg = {knight} }}\n"
        ));
    }
    std::fs::write(dir.path().join("gauntlet.toml"), config).unwrap();
    let out = arbiter(&["match", "--json", "--quiet", "gauntlet.toml"], dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");

    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    let per_pairing = games_per_pairing(&players_of_games(&pgn));
    let expected: BTreeMap<(String, String), usize> =
        [("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")]
            .map(|(x, y)| ((x.to_owned(), y.to_owned()), 4))
            .into_iter()
            .collect();
    assert_eq!(per_pairing, expected, "the seeds a and b never meet");

    // The summary's results are the standings and each pairing's, as the store keeps them:
    // no W/D/L or pentanomial summed over pairings that each count from their own first
    // engine's side (`W / D / L 60 / 3 / 45` was nobody's score).
    let raw: serde_json::Value = serde_json::from_str(stdout.trim()).expect(&stdout);
    for key in ["wins", "draws", "losses"] {
        assert!(raw.get(key).is_none(), "{key}: {raw}");
    }
    assert!(
        raw["pentanomial"].is_null() && raw["elo"].is_null(),
        "{raw}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pairing_totals = runtime.block_on(async {
        let location = Location::parse(&dir.path().join("runs.db").display().to_string());
        let store = Store::open_existing(&location).await.unwrap();
        let run = store.runs().await.unwrap().pop().unwrap();
        store.pairing_totals(run.id).await.unwrap()
    });
    let summary: RunSummary = serde_json::from_str(stdout.trim()).expect(&stdout);
    assert_eq!(summary.results.games, 16);
    let rows = &summary.standings.as_ref().unwrap().pairings;
    assert_eq!(rows.len(), pairing_totals.len());
    for (row, t) in rows.iter().zip(&pairing_totals) {
        assert_eq!(
            (row.wins, row.draws, row.losses, row.pentanomial),
            (t.wins, t.draws, t.losses, Some(t.pentanomial)),
            "{}-{}",
            row.first_name,
            row.second_name
        );
    }
    let standings = summary.standings.expect("standings in the summary");
    let value = serde_json::to_value(&standings).unwrap();
    let text = value.to_string();
    for name in ["a", "b", "c", "d"] {
        assert!(text.contains(&format!("\"{name}\"")), "{text}");
    }
    assert_eq!(standings.pairings.len(), 4);
    assert_eq!(standings.engines.len(), 4);
}

/// What a tournament refuses, each with a message naming the setting.
#[test]
fn tournament_settings_that_cannot_run_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let three = [
        "-engine",
        "builtin=staunton",
        "name=a",
        "-engine",
        "builtin=staunton",
        "name=b",
        "-engine",
        "builtin=staunton",
        "name=c",
        "-each",
        "tc=inf",
        "nodes=100",
        "-store",
        "runs.db",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["-sprt", "elo0=0", "elo1=5"],
            "an SPRT tests one engine against one other",
        ),
        (&["-seeds", "2"], "gauntlet seeds need tournament"),
        (&["-tournament", "gauntlet", "-seeds", "3"], "1 to 2 seeds"),
        (&["-tournament", "knockout"], "knockout and pyramid"),
    ];
    for (extra, expected) in cases {
        let args: Vec<&str> = three.iter().chain(extra.iter()).copied().collect();
        let out = arbiter(&args, dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
        assert!(!stderr.contains("Started game"), "{stderr}");
    }
    // A match is two engines.
    let config = "tournament = \"match\"\n[each]\ntc = \"inf\"\nnodes = 100\n\
                  [[engine]]\nname = \"a\"\nbuiltin = \"staunton\"\n\
                  [[engine]]\nname = \"b\"\nbuiltin = \"staunton\"\n\
                  [[engine]]\nname = \"c\"\nbuiltin = \"staunton\"\n";
    std::fs::write(dir.path().join("three.toml"), config).unwrap();
    let out = arbiter(&["match", "three.toml"], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a match needs exactly 2 engines, found 3"),
        "{stderr}"
    );
}
