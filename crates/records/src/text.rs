//! The text every output of a run shares, the console's lines and the report's pages alike:
//! names made safe for a terminal, cutechess's `Score of` line, percentages that never claim a
//! certainty, and fishtest's pentanomial counts. One place, so a report and the console never
//! print one number two ways.

/// Whether a character must not reach a terminal as it is: control characters (a line break
/// splits a result line, ESC starts a sequence that recolours or rewrites the screen) and the
/// invisible marks that reorder or hide text (bidirectional overrides and isolates, zero-width
/// characters), which make one name print as another.
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// A name as the console prints it: each [`unprintable`] character escaped as Rust writes it
/// (`\u{1b}[31mred`), so that a name read from a PGN file shows what it holds and leaves the
/// terminal alone. Names a run is configured with are refused instead (`RunConfig::check`).
pub fn printable_name(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(unprintable) {
        return name.into();
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match unprintable(c) {
            true => out.extend(c.escape_unicode()),
            false => out.push(c),
        }
    }
    out.into()
}

/// `Score of dev vs base: 12 - 8 - 20  [0.550] 40`: cutechess's line after every game, from
/// the first engine's side (wins - losses - draws, points ratio, games).
pub fn score_line(first: &str, second: &str, wins: u64, losses: u64, draws: u64) -> String {
    let games = wins + losses + draws;
    let points = wins as f64 + draws as f64 / 2.0;
    let ratio = if games == 0 {
        0.0
    } else {
        points / games as f64
    };
    format!("Score of {first} vs {second}: {wins} - {losses} - {draws}  [{ratio:.3}] {games}")
}

/// A likelihood of superiority in percent with `decimals` decimals, never printed as a
/// certainty: finite games never make one engine certainly stronger, although the normal
/// tail rounds to exactly 1 in `f64` beyond about 8.3 standard deviations. LOS 0.9999996
/// prints `99.99` with two decimals, not `100.00`, and so does 1; 4e-7 and 0 print `0.01`.
/// Every LOS arbiter prints goes through here.
pub fn percent(probability: f64, decimals: usize) -> String {
    let text = format!("{:.decimals$}", 100.0 * probability);
    let step = 10f64.powi(-(decimals as i32));
    match text.parse::<f64>() {
        Ok(x) if x >= 100.0 => format!("{:.decimals$}", 100.0 - step),
        Ok(x) if x <= 0.0 => format!("{step:.decimals$}"),
        _ => text,
    }
}

/// `Ptnml(0-2): [LL, LD, DD, DW, WW]`, the pentanomial counts as fastchess and fishtest print
/// them.
pub fn ptnml(counts: [u64; 5]) -> String {
    let [ll, ld, dd, dw, ww] = counts;
    format!("Ptnml(0-2): [{ll}, {ld}, {dd}, {dw}, {ww}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_never_round_to_a_certainty() {
        for (p, decimals, text) in [
            (0.9731, 1, "97.3"),
            (0.5, 2, "50.00"),
            (0.999_999_6, 2, "99.99"),
            (0.999_96, 1, "99.9"),
            (1.0, 2, "99.99"),
            (4e-7, 2, "0.01"),
            (0.0, 1, "0.1"),
        ] {
            assert_eq!(percent(p, decimals), text, "{p}");
        }
    }

    #[test]
    fn score_line_as_cutechess() {
        assert_eq!(
            score_line("dev", "base", 12, 8, 20),
            "Score of dev vs base: 12 - 8 - 20  [0.550] 40"
        );
    }

    /// Control characters and invisible marks are escaped; everything else is kept as it is.
    #[test]
    fn names_are_escaped_only_where_a_terminal_would_be_fooled() {
        assert_eq!(printable_name("Stockfish 17"), "Stockfish 17");
        assert_eq!(printable_name("Ré\u{e9}"), "Réé");
        assert_eq!(printable_name("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable_name("a\u{202e}b"), "a\\u{202e}b");
    }
}
