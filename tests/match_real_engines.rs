//! `arbiter match` end to end with real engines from Debian (installed in /usr/games by
//! scripts/ci-setup.sh): short matches at a fast time control whose PGN must replay legally and
//! end the way the rules say.

use std::path::Path;
use std::process::Command;

use arbiter_rules::pgn::PgnReader;
use arbiter_rules::RuleSet;

fn engine(name: &str, program: &str, options: &str) -> String {
    format!("[[engine]]\nname = \"{name}\"\ncmd = \"/usr/games/{program}\"\noptions = {{ {options} }}\n")
}

/// Runs a 2-pair match between two Debian engines and checks its PGN.
fn play(dir: &Path, first: String, second: String) {
    let config = format!(
        "name = \"e2e\"\nrounds = 2\nconcurrency = 2\nstore = \"runs.db\"\npgnout = \"games.pgn\"\njsonl = \"games.jsonl\"\n\
         [each]\ntc = \"2+0.02\"\ntimemargin = 100\n\
         [openings]\nfile = \"{}\"\norder = \"random\"\n\
         [adjudication]\nmaxmoves = 150\n{first}{second}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd")
    );
    let path = dir.join("match.toml");
    std::fs::write(&path, config).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--quiet"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("Finished game").count(), 4, "{stdout}");
    assert!(stdout.contains("Score of "), "{stdout}");

    let file = std::fs::File::open(dir.join("games.pgn")).unwrap();
    let games: Vec<_> = PgnReader::new(std::io::BufReader::new(file))
        .map(|g| g.unwrap())
        .collect();
    assert_eq!(games.len(), 4);
    for game in &games {
        let replay = game.to_game(RuleSet::default()).expect("every move legal");
        let termination = game.tag("Termination").unwrap();
        assert!(
            ["normal", "adjudication", "time forfeit"].contains(&termination),
            "{termination}: engines must not crash, stall or play illegal moves here"
        );
        if termination == "normal" {
            assert_eq!(
                replay.outcome().expect("ended by the rules").result_token(),
                game.result
            );
        }
        assert!(
            game.comments
                .iter()
                .flatten()
                .any(|c| c.contains('/') && c.ends_with('s') || c.contains("s,")),
            "move comments like {{+0.35/12 0.250s}}"
        );
    }
    let lines = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.contains("\"type\":\"summary\""))
            .count(),
        1
    );
}

#[test]
fn stockfish_against_ethereal() {
    let dir = tempfile::tempdir().unwrap();
    play(
        dir.path(),
        engine("stockfish", "stockfish", "Hash = \"16\", Threads = \"1\""),
        engine(
            "ethereal",
            "ethereal-chess",
            "Hash = \"16\", Threads = \"1\"",
        ),
    );
}

#[test]
fn glaurung_against_toga() {
    // Both default to their own opening books; Glaurung also to two threads and pondering.
    let dir = tempfile::tempdir().unwrap();
    play(
        dir.path(),
        engine(
            "glaurung",
            "glaurung",
            "Hash = \"16\", Threads = \"1\", OwnBook = \"false\", Ponder = \"false\"",
        ),
        engine("toga", "toga2", "Hash = \"16\", OwnBook = \"false\""),
    );
}
