//! `arbiter match` through the real binary: both front ends (TOML and the cutechess grammar),
//! the SPRT stopping the run with the exit codes ARCHITECTURE.md gives CI, and configuration errors.

use crate::common::{arbiter, text};

/// staunton at 1000 nodes a move against staunton at 60, with an SPRT whose H1 is easy to
/// reach, in the cutechess grammar.
fn sprt_args(first_crippled: bool, store: &str) -> Vec<String> {
    let (a, b) = if first_crippled {
        ("nodes=60", "nodes=1000")
    } else {
        ("nodes=1000", "nodes=60")
    };
    format!(
        "-engine builtin=staunton name=first {a} -engine builtin=staunton name=second {b} \
         -each tc=inf hash=0 -rounds 200 -concurrency 2 -maxmoves 120 \
         -openings file={} order=random -sprt elo0=0 elo1=100 alpha=0.05 beta=0.05 -store {store}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd")
    )
    .split_whitespace()
    .map(str::to_owned)
    .collect()
}

#[test]
fn sprt_exit_codes_gate_ci() {
    let dir = tempfile::tempdir().unwrap();
    let args = sprt_args(false, "h1.db");
    let out = arbiter(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("H1 was accepted"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "H1 accepted exits 0");

    let args = sprt_args(true, "h0.db");
    let out = arbiter(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("H0 was accepted"), "{stdout}");
    assert_eq!(out.status.code(), Some(1), "H0 accepted exits 1");
    assert!(
        stdout.contains("Finished game 1 (first vs second): "),
        "cutechess-style lines: {stdout}"
    );
}

#[test]
fn toml_run_with_json_summary_and_inconclusive_exit() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "rounds = 3\nconcurrency = 2\nstore = \"runs.db\"\npgnout = \"out.pgn\"\nepdout = \"out.epd\"\n\
         [each]\ntc = \"inf\"\nnodes = 200\nhash = 0\n\
         [adjudication]\nmaxmoves = 30\n\
         [sprt]\nelo0 = 0\nelo1 = 10\n\
         [openings]\nfile = \"{}\"\n\
         [[engine]]\nname = \"dev\"\nbuiltin = \"staunton\"\n\
         [[engine]]\nname = \"base\"\nbuiltin = \"staunton\"\n",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd")
    );
    std::fs::write(dir.path().join("run.toml"), config).unwrap();
    let out = arbiter(&["match", "--quiet", "--json", "run.toml"], dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "no verdict after 3 pairs: exit 3\n{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(stdout.lines().rev().find(|l| l.starts_with('{')).unwrap()).unwrap();
    assert_eq!(json["pairs"], 3);
    assert_eq!(json["games"], 6);
    assert_eq!(json["state"], "continue");
    assert!(json["llr"].is_number() && json["elo"].is_number() && json["elo_ci"].is_array());
    let pgn = std::fs::read_to_string(dir.path().join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 6);
    let epd = std::fs::read_to_string(dir.path().join("out.epd")).unwrap();
    assert_eq!(epd.lines().count(), 6);
    for line in epd.lines() {
        let record = arbiter_rules::epd::Epd::parse(line).unwrap();
        assert!(record.id().unwrap().starts_with("game "));
    }
}

#[test]
fn configuration_errors_exit_2_and_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "rounds = 3\n[[engine]]\nname = \"a\"\nbuiltin = \"staunton\"\n",
    )
    .unwrap();
    let out = arbiter(&["match", "bad.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 2 engines, found 1"));

    std::fs::write(dir.path().join("typo.toml"), "roundz = 3\n").unwrap();
    let out = arbiter(&["match", "typo.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("typo.toml") && err.contains("roundz"), "{err}");

    std::fs::write(
        dir.path().join("book.epd"),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a position\n",
    )
    .unwrap();
    let out = arbiter(
        &[
            "-engine",
            "builtin=staunton",
            "name=a",
            "-engine",
            "builtin=staunton",
            "name=b",
            "-each",
            "nodes=100",
            "-openings",
            "file=book.epd",
            "-rounds",
            "1",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("book.epd, line 2"),
        "a malformed book line stops the run before it starts: {err}"
    );

    let out = arbiter(&["-engine", "cmdd=x"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean cmd"));
}

/// Every engine move's record keeps what the time charts need: the time the runner measured,
/// the search time the engine reported, and the mover's clock after the move.
#[test]
fn game_records_keep_each_moves_clock_and_the_engines_own_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = arbiter(
        &[
            "-engine",
            "builtin=staunton",
            "name=a",
            "-engine",
            "builtin=staunton",
            "name=b",
            "-each",
            "tc=2+0.05",
            "hash=0",
            "-maxmoves",
            "30",
            "-rounds",
            "1",
            "-store",
            "runs.db",
            "-jsonl",
            "games.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let jsonl = std::fs::read_to_string(dir.path().join("games.jsonl")).unwrap();
    let games: Vec<arbiter_records::entries::GameEntry> = jsonl
        .lines()
        .filter(|line| line.contains("\"type\":\"game\""))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(games.len(), 2);
    for game in &games {
        let moves = game.move_ms.len();
        assert!(moves > 0);
        assert_eq!(game.engine_ms.len(), moves);
        assert_eq!(game.clock_ms.len(), moves);
        for ((&seen, reported), clock) in
            game.move_ms.iter().zip(&game.engine_ms).zip(&game.clock_ms)
        {
            let reported = reported.expect("staunton reports its search time");
            assert!(
                reported as f64 <= seen + 1.0,
                "{reported} ms searched in {seen} ms"
            );
            let clock = clock.expect("a clock");
            // 2 s base, 50 ms increment a move, never more than base + increment after a move.
            assert!(clock <= 2050, "{clock}");
        }
        // Each side's clock falls from move to move by at most the increment's gain.
        for side in 0..2 {
            let clocks: Vec<i64> = game
                .clock_ms
                .iter()
                .skip(side)
                .step_by(2)
                .flatten()
                .copied()
                .collect();
            for pair in clocks.windows(2) {
                assert!(pair[1] <= pair[0] + 50, "{clocks:?}");
            }
        }
    }
}

/// `arbiter match` benches an engine whose configuration states its bench before the first
/// game: the right count plays, another is refused with 2 naming the engine and both counts,
/// for a UCI engine and for staunton in process alike.
#[test]
fn an_engine_that_benches_otherwise_is_refused_before_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let bench = crate::fleet_cli::staunton_bench();
    crate::fleet_cli::bench_config(dir.path(), bench + 7);
    let refused = arbiter(&["match", "bench.toml"], dir.path());
    let said = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "engine a: its bench here is {bench} nodes, but the run expects {}",
            bench + 7
        )),
        "{said}"
    );
    crate::fleet_cli::bench_config(dir.path(), bench);
    let played = arbiter(&["match", "bench.toml"], dir.path());
    assert!(played.status.success(), "{}", text(&played.stderr));
    // In process: the same count (the binary is this staunton), the same refusal.
    let builtin = std::fs::read_to_string(dir.path().join("bench.toml"))
        .unwrap()
        .replace("cmd = \"./engine\"\nbench", "builtin = \"staunton\"\nbench")
        .replace(
            &format!("bench = {bench}"),
            &format!("bench = {}", bench + 1),
        )
        .replace("name = \"bench\"", "name = \"bench-builtin\"");
    std::fs::write(dir.path().join("builtin.toml"), builtin).unwrap();
    let refused = arbiter(&["match", "builtin.toml"], dir.path());
    let said = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("its bench here is {bench} nodes")),
        "{said}"
    );
}
