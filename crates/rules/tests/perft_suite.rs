//! Data-driven perft test: every position of `tests/data/perft-suite.epd` (published perft
//! suites, sources named in the file's header) at every depth it lists.
//!
//! Run it optimised: `cargo test -p arbiter-rules --release --test perft_suite`. The whole suite
//! is about 1.2 billion leaves; a debug build only checks the depths whose expected count is at
//! most `DEBUG_NODE_LIMIT`, unless `PERFT_SUITE_MAX_NODES` says otherwise (a number of leaves,
//! or `all`).

use std::time::Instant;

use arbiter_rules::perft::{divide, perft, perft_full};
use arbiter_rules::uci::move_to_uci;
use arbiter_rules::Position;

const SUITE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/perft-suite.epd");

/// In a debug build (two orders of magnitude slower), depth checks expecting more leaves than
/// this are skipped unless `PERFT_SUITE_MAX_NODES` is set.
const DEBUG_NODE_LIMIT: u64 = 200_000;

/// `perft_full` (make every move, including the last ply) is compared with `perft` up to this
/// depth for every position.
const FULL_MAKE_DEPTH: u32 = 3;

/// One line of the suite: a position and the published leaf count at each listed depth.
#[derive(Debug)]
struct Case {
    line: usize,
    fen: String,
    position: Position,
    /// (depth, expected leaves), depths strictly increasing.
    counts: Vec<(u32, u64)>,
}

/// Parses the suite. Blank lines and lines starting with `#` are ignored; every other line is
/// `FEN ;D<depth> <count> ;D<depth> <count> ...` with a FEN of 4 or 6 fields. Any error names
/// the line.
fn parse_suite(text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let case =
            parse_line(line, trimmed).map_err(|e| format!("line {line}: {e}: {trimmed:?}"))?;
        cases.push(case);
    }
    if cases.is_empty() {
        return Err("the suite holds no positions".to_owned());
    }
    Ok(cases)
}

fn parse_line(line: usize, text: &str) -> Result<Case, String> {
    let mut parts = text.split(';');
    let fen = parts.next().unwrap_or_default().trim();
    let field_count = fen.split_ascii_whitespace().count();
    if field_count != 4 && field_count != 6 {
        return Err(format!(
            "the FEN before the first ';' has {field_count} fields, expected 4 or 6"
        ));
    }
    let position = Position::from_fen(fen).map_err(|e| format!("bad FEN {fen:?}: {e}"))?;
    let mut counts: Vec<(u32, u64)> = Vec::new();
    for op in parts {
        let op = op.trim();
        let mut words = op.split_ascii_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!(
                "expected an operation like `D3 8902`, found {op:?}"
            ));
        };
        let depth: u32 = name
            .strip_prefix('D')
            .and_then(|d| d.parse().ok())
            .filter(|&d| d >= 1)
            .ok_or_else(|| format!("expected a depth like `D3`, found {name:?}"))?;
        let count: u64 = value
            .parse()
            .map_err(|_| format!("the count for D{depth} is not a number: {value:?}"))?;
        if let Some(&(previous, _)) = counts.last() {
            if depth <= previous {
                return Err(format!(
                    "depths must increase along the line, D{depth} follows D{previous}"
                ));
            }
        }
        counts.push((depth, count));
    }
    if counts.is_empty() {
        return Err("no `;D<depth> <count>` operations".to_owned());
    }
    Ok(Case {
        line,
        fen: fen.to_owned(),
        position,
        counts,
    })
}

/// The node limit for this run: `PERFT_SUITE_MAX_NODES` if set, else unlimited in an optimised
/// build and `DEBUG_NODE_LIMIT` in a debug one.
fn node_limit() -> u64 {
    match std::env::var("PERFT_SUITE_MAX_NODES") {
        Ok(v) if v.trim() == "all" => u64::MAX,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            panic!("PERFT_SUITE_MAX_NODES={v:?} is neither a number nor `all`")
        }),
        Err(_) if cfg!(debug_assertions) => DEBUG_NODE_LIMIT,
        Err(_) => u64::MAX,
    }
}

/// `divide` at `depth`, sorted by UCI move so it can be compared line by line with another
/// generator's output (Stockfish `go perft`, python-chess).
fn divide_report(position: &Position, depth: u32) -> String {
    let mut lines: Vec<(String, u64)> = divide(position, depth)
        .into_iter()
        .map(|(mv, n)| (move_to_uci(Some(mv)), n))
        .collect();
    lines.sort();
    let total: u64 = lines.iter().map(|(_, n)| n).sum();
    let mut out = String::new();
    for (uci, n) in &lines {
        out.push_str(&format!("    {uci}: {n}\n"));
    }
    out.push_str(&format!("    ({} moves, {total} leaves)\n", lines.len()));
    out
}

/// Per root move, the leaves below it by `perft_full` and by `perft`, sorted by UCI move, with
/// the moves where the two disagree marked.
fn full_vs_bulk_report(position: &Position, depth: u32) -> String {
    let mut lines: Vec<(String, u64, u64)> = position
        .legal_moves()
        .into_iter()
        .map(|mv| {
            let mut next = *position;
            next.play_unchecked(mv);
            let below = depth.saturating_sub(1);
            (
                move_to_uci(Some(mv)),
                perft_full(&next, below),
                perft(&next, below),
            )
        })
        .collect();
    lines.sort();
    let mut out = String::new();
    for (uci, full, bulk) in &lines {
        let mark = if full == bulk { "" } else { "   <-- differs" };
        out.push_str(&format!("    {uci}: {full} / {bulk}{mark}\n"));
    }
    out
}

#[test]
fn published_perft_suite() {
    let text = std::fs::read_to_string(SUITE_PATH)
        .unwrap_or_else(|e| panic!("cannot read {SUITE_PATH}: {e}"));
    let cases = parse_suite(&text).unwrap_or_else(|e| panic!("{SUITE_PATH}: {e}"));
    let limit = node_limit();

    let start = Instant::now();
    let mut failures: Vec<String> = Vec::new();
    let (mut checked, mut skipped, mut nodes) = (0usize, 0usize, 0u64);
    for case in &cases {
        let pos = &case.position;
        let where_ = format!("{SUITE_PATH}:{} {}", case.line, case.fen);

        // Bulk-counting perft at every listed depth; stop at the first wrong depth of a
        // position, since every deeper count is then wrong too.
        for &(depth, expected) in &case.counts {
            if expected > limit {
                skipped += 1;
                continue;
            }
            let actual = perft(pos, depth);
            checked += 1;
            nodes += actual;
            if actual != expected {
                failures.push(format!(
                    "{where_}\n  perft depth {depth}: expected {expected}, actual {actual} \
                     (difference {diff:+})\n  divide {depth}:\n{divide}",
                    diff = i128::from(actual) - i128::from(expected),
                    divide = divide_report(pos, depth),
                ));
                break;
            }
        }

        // Make-move in the leaves: perft_full, which plays every move including the last ply,
        // must agree with bulk counting at shallow depths (listed or not).
        let deepest = case.counts.last().map_or(0, |&(d, _)| d);
        for depth in 1..=deepest.min(FULL_MAKE_DEPTH) {
            let bulk = perft(pos, depth);
            let full = perft_full(pos, depth);
            if full != bulk {
                failures.push(format!(
                    "{where_}\n  depth {depth}: perft_full {full} != perft {bulk}\n  \
                     per root move (perft_full / perft):\n{report}",
                    report = full_vs_bulk_report(pos, depth),
                ));
                break;
            }
        }
    }
    let elapsed = start.elapsed();

    let skipped_note = if skipped == 0 {
        String::new()
    } else {
        format!(", {skipped} skipped as above {limit} leaves (set PERFT_SUITE_MAX_NODES=all)")
    };
    println!(
        "perft suite: {} positions, {checked} depth checks{skipped_note}, {nodes} leaves in \
         {:.2} s ({:.0} M leaves/s)",
        cases.len(),
        elapsed.as_secs_f64(),
        nodes as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6,
    );
    assert!(
        failures.is_empty(),
        "{} perft failure(s):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn malformed_lines_are_reported_with_their_line_number() {
    let good = "# comment\n\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66\n";
    let cases = parse_suite(good).expect("a well-formed suite parses");
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].line, 3);
    assert_eq!(cases[0].counts, vec![(1, 15), (2, 66)]);

    for (bad, why) in [
        ("4k3/8/8/8/8/8/8/4K2R w K ;D1 15", "3 fields"),
        ("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "no `;D"),
        ("4k3/8/8/8/8/8/8/4K2R w K - ;D1", "expected an operation"),
        ("4k3/8/8/8/8/8/8/4K2R w K - ;X1 15", "expected a depth"),
        ("4k3/8/8/8/8/8/8/4K2R w K - ;D0 1", "expected a depth"),
        ("4k3/8/8/8/8/8/8/4K2R w K - ;D1 fifteen", "not a number"),
        ("4k3/8/8/8/8/8/8/4K2R w K - ;D2 66 ;D1 15", "must increase"),
        ("4k3/8/8/8/8/8/8/4K3 w K - ;D1 15", "bad FEN"),
    ] {
        let text = format!("# header\n{bad}\n");
        let err = parse_suite(&text).expect_err(bad);
        assert!(err.starts_with("line 2: "), "{bad:?}: {err}");
        assert!(err.contains(why), "{bad:?}: expected {why:?} in {err}");
    }
}
