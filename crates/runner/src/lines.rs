//! Every line arbiter prints about a run: cutechess's `Started game`, `Finished game` and
//! `Score of` lines and rating block (so existing parsers keep working), fastchess's result
//! block and per-engine lines, the progress bar's note, and the number formats they share.
//! Text over the typed records (`arbiter_records`) and the store's totals; the CLI decides
//! where each goes.

use arbiter_stats::{estimate, Pentanomial, Sample, Sprt, SprtState, SprtStatus, Trinomial};
use arbiter_store::{GameResult, GameRow, Prefix, RunId, Store, StoreError, Totals};
use futures_util::StreamExt;

use crate::game::GameRecord;

/// The number formats and name escaping every output shares (the report's too): one place, the
/// records crate.
pub use arbiter_records::text::{percent, printable_name, ptnml, score_line, unprintable};

/// `Started game 3 of 400 (dev vs base)`
pub fn started_line(number: u64, total: u64, white: &str, black: &str) -> String {
    format!("Started game {number} of {total} ({white} vs {black})")
}

/// `Finished game 3 (dev vs base): 1-0 {White mates}`
pub fn finished_line(number: u64, record: &GameRecord) -> String {
    format!(
        "Finished game {number} ({} vs {}): {} {{{}}}",
        record.white,
        record.black,
        record.outcome.result_token(),
        record.reason
    )
}

/// cutechess's rating block: `Elo difference: X +/- Y, LOS: Z %, DrawRatio: R %` and, with an
/// SPRT, its line. Elo comes from the pentanomial totals (the pairs are what was played), or
/// from the games alone without `penta`.
pub fn rating_lines(totals: &Totals, sprt: Option<SprtStatus>, penta: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if totals.games() == 0 {
        return lines;
    }
    let sample = Sample::of_run(penta, totals.wdl(), totals.pentanomial);
    if let Ok(elo) = estimate::elo(&sample) {
        lines.push(format!(
            "Elo difference: {:.1} +/- {:.1}, LOS: {} %, DrawRatio: {:.1} %",
            elo.elo + 0.0, // no "-0.0"
            elo.half_width,
            percent(elo.los, 1),
            game_draw_ratio(totals) * 100.0
        ));
    }
    if let Some(status) = sprt {
        lines.push(sprt_line(&status));
    }
    lines
}

/// The progress bar's note on a match: the rating block's lines ([`rating_lines`]) on one
/// line when they fit in `width` columns, else the longest shorter form that does, dropping
/// the least needed parts first (draws, then LOS, then the SPRT's bounds, then the LLR), so the
/// bar never wraps into a second line: `Elo -26.5 +/- 29.0, LOS 3.6%  LLR -2.96 [-2.94, 2.94]`.
pub fn progress_note(
    totals: &Totals,
    sprt: Option<SprtStatus>,
    penta: bool,
    width: usize,
) -> String {
    let mut forms = vec![rating_lines(totals, sprt, penta).join("  ")];
    let sample = Sample::of_run(penta, totals.wdl(), totals.pentanomial);
    let elo = estimate::elo(&sample).ok().filter(|_| totals.games() > 0);
    let elo_part = elo.map(|e| format!("Elo {:.1} +/- {:.1}", e.elo + 0.0, e.half_width));
    let los = elo.map(|e| format!("LOS {:.1}%", e.los * 100.0));
    let draws = format!("draws {:.1}%", game_draw_ratio(totals) * 100.0);
    let llr_bounds = sprt.map(|s| {
        format!(
            "LLR {} ({:.1}%) [{}, {}]",
            significant3(s.llr),
            s.llr / s.upper_bound * 100.0,
            significant3(s.lower_bound),
            significant3(s.upper_bound)
        )
    });
    let llr = sprt.map(|s| format!("LLR {}", significant3(s.llr)));
    let join = |rating: Vec<&Option<String>>, test: &Option<String>| {
        let rating: Vec<&str> = rating.into_iter().flatten().map(String::as_str).collect();
        [rating.join(", "), test.clone().unwrap_or_default()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("  ")
    };
    let draws = Some(draws).filter(|_| elo.is_some());
    forms.push(join(vec![&elo_part, &los, &draws], &llr_bounds));
    forms.push(join(vec![&elo_part, &los], &llr_bounds));
    forms.push(join(vec![&elo_part], &llr_bounds));
    forms.push(join(vec![&elo_part], &llr));
    forms.push(join(vec![&elo_part], &None));
    forms.push(join(vec![], &llr));
    fit(forms, width)
}

/// The first of `forms` (longest first) that fits in `width` columns; nothing if none does.
pub fn fit(forms: impl IntoIterator<Item = String>, width: usize) -> String {
    forms
        .into_iter()
        .find(|form| form.chars().count() <= width)
        .unwrap_or_default()
}

fn game_draw_ratio(totals: &Totals) -> f64 {
    estimate::draw_ratio(&Trinomial::from_wdl(
        totals.wins,
        totals.draws,
        totals.losses,
    ))
    .unwrap_or(0.0)
}

/// arbiter's own summary of the totals, beyond cutechess's lines: the pentanomial counts and
/// normalized Elo (`Ptnml(0-2): [3, 10, 20, 12, 5], nElo: 12.3 +/- 20.1`).
pub fn pentanomial_line(totals: &Totals) -> String {
    let mut line = ptnml(totals.pentanomial);
    if let Ok(nelo) =
        estimate::normalized_elo(&Sample::of_run(true, totals.wdl(), totals.pentanomial))
    {
        line.push_str(&format!(
            ", nElo: {:.1} +/- {:.1}",
            nelo.nelo, nelo.half_width
        ));
    }
    line
}

/// What the SPRT line above rests on when it is not every committed pair: the verdict's prefix
/// (`sprt.judge = "prefix"`), with the pairs committed beyond it, which the rating lines and
/// the store count but the verdict does not.
pub fn judged_line(judged: &Prefix, totals: &Totals, paired: bool) -> String {
    let unit = if paired { "pairs" } else { "games" };
    let counts = &judged.totals;
    let mut line = format!(
        "SPRT judged on the verdict's prefix, the first {} {unit} of the schedule ({} wins, {} \
         losses, {} draws",
        judged.units, counts.wins, counts.losses, counts.draws
    );
    if paired {
        line.push_str(&format!(", {}", ptnml(counts.pentanomial)));
    }
    line.push_str(&format!(
        "); {} more {unit} finished beyond it are stored and in the lines above, not in the \
         verdict (sprt.judge = \"all\" judges every finished pair)",
        totals.pairs.saturating_sub(counts.pairs)
    ));
    line
}

/// `SPRT: llr 1.23 (41.8%), lbound -2.94, ubound 2.94` and, once decided, ` - H1 was accepted`:
/// cutechess's line to the character (three significant digits, the percentage of the upper
/// bound).
pub fn sprt_line(status: &SprtStatus) -> String {
    let mut line = format!(
        "SPRT: llr {} ({:.1}%), lbound {}, ubound {}",
        significant3(status.llr),
        status.llr / status.upper_bound * 100.0,
        significant3(status.lower_bound),
        significant3(status.upper_bound),
    );
    match status.state {
        SprtState::H1 => line.push_str(" - H1 was accepted"),
        SprtState::H0 => line.push_str(" - H0 was accepted"),
        SprtState::Continue => {}
    }
    line
}

/// A number with three significant digits and no trailing zeros, as C's `%.3g` (and Qt's
/// `'g', 3`, which cutechess uses) writes it: `2.94`, `-0.0452`, `123`, `1.23e+03`.
pub fn significant3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}", if x == 0.0 { 0.0 } else { x });
    }
    let exponent = x.abs().log10().floor() as i32;
    // Rounding may carry into the next power of ten (9.996 -> 10.0).
    let rounded: f64 = format!("{x:.2e}").parse().unwrap_or(x);
    let exponent = if rounded.abs() >= 10f64.powi(exponent + 1) {
        exponent + 1
    } else {
        exponent
    };
    let trim = |text: String| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    };
    if !(-4..3).contains(&exponent) {
        let text = format!("{x:.2e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_owned()), exp.abs())
    } else {
        let decimals = (2 - exponent).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    }
}

/// fastchess's result block, framed by dashes: the matchup, Elo and nElo, LOS, draw ratio,
/// games and points, the pentanomial line (with `penta`), and the LLR with its bounds and
/// hypotheses. `details` is what fastchess puts in the parentheses: `10+0.1, 1t, 16MB, book.epd`.
/// The Elo is the pentanomial one with `penta`, the games' (trinomial) otherwise. fastchess
/// adds a WL/DD ratio to the pentanomial line; the store counts a win-and-loss pair and a
/// two-draw pair in one bucket, as fishtest does, so arbiter leaves it out.
pub fn fastchess_block(
    first: &str,
    second: &str,
    details: &str,
    totals: &Totals,
    sprt: Option<(&Sprt, SprtStatus)>,
    penta: bool,
) -> Vec<String> {
    const RULE: &str = "--------------------------------------------------";
    let pentanomial = Pentanomial::from_counts(totals.pentanomial);
    let trinomial = Trinomial::from_wdl(totals.wins, totals.draws, totals.losses);
    let sample = Sample::of_run(penta, totals.wdl(), totals.pentanomial);
    let mut lines = vec![
        RULE.to_owned(),
        format!("Results of {first} vs {second} ({details}):"),
    ];
    if let (Ok(elo), Ok(nelo)) = (estimate::elo(&sample), estimate::normalized_elo(&sample)) {
        lines.push(format!(
            "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}",
            elo.elo + 0.0, // no "-0.00"
            elo.half_width,
            nelo.nelo + 0.0,
            nelo.half_width
        ));
        let draws = if penta {
            estimate::pair_draw_ratio(&pentanomial)
        } else {
            estimate::draw_ratio(&trinomial)
        };
        let mut line = format!(
            "LOS: {} %, DrawRatio: {:.2} %",
            percent(elo.los, 2),
            draws.unwrap_or(0.0) * 100.0
        );
        if penta {
            match estimate::pairs_ratio(&pentanomial) {
                Some(ratio) => line.push_str(&format!(", PairsRatio: {ratio:.2}")),
                None => line.push_str(", PairsRatio: n/a"),
            }
        }
        lines.push(line);
    }
    let games = totals.games();
    let points = totals.wins as f64 + totals.draws as f64 / 2.0;
    let percent = if games == 0 {
        0.0
    } else {
        100.0 * points / games as f64
    };
    lines.push(format!(
        "Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({percent:.2} %)",
        totals.wins, totals.losses, totals.draws
    ));
    if penta {
        lines.push(ptnml(totals.pentanomial));
    }
    if let Some((sprt, status)) = sprt {
        lines.push(format!(
            "LLR: {:.2} ({:.2}, {:.2}) [{:.2}, {:.2}]",
            status.llr,
            status.lower_bound,
            status.upper_bound,
            sprt.elo0(),
            sprt.elo1()
        ));
    }
    lines.push(RULE.to_owned());
    lines
}

/// fastchess's closing lines per engine, which scripts count crashes and time losses from:
/// `Player: dev`, `  Timeouts: 0`, `  Crashed: 1`. Counted over the run's stored games and the
/// `uncounted` ones the exports hold beside them (the game a crash stopped the run in): a time
/// forfeit is a timeout of the side that lost it, a disconnection or stall a crash.
pub async fn player_lines(
    store: &Store,
    run: RunId,
    names: &[&str],
    uncounted: &[GameRow],
) -> Result<Vec<String>, StoreError> {
    let mut counts = vec![(0u64, 0u64); names.len()];
    let mut count = |game: &GameRow| {
        let loser = match game.result {
            GameResult::WhiteWins => &game.black,
            GameResult::BlackWins => &game.white,
            GameResult::Draw => return,
        };
        let Some(engine) = names.iter().position(|name| name == loser) else {
            return;
        };
        match game.termination.as_str() {
            "time forfeit" => counts[engine].0 += 1,
            "abandoned" | "stalled connection" => counts[engine].1 += 1,
            _ => {}
        }
    };
    let mut games = store.games(run);
    while let Some(game) = games.next().await {
        count(&game?.game);
    }
    uncounted.iter().for_each(&mut count);
    Ok(names
        .iter()
        .zip(counts)
        .flat_map(|(name, (timeouts, crashes))| {
            [
                format!("Player: {name}"),
                format!("  Timeouts: {timeouts}"),
                format!("  Crashed: {crashes}"),
            ]
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18, item 15: the progress line's note fits the width it is given, keeping the
    /// most of the rating block that fits: whole in a wide terminal (the cutechess lines, as
    /// before), the Elo with the LLR in an 80-column one, never wider than asked.
    #[test]
    fn the_progress_note_fits_the_terminal() {
        // The README's quick.toml run: 181 - 216 - 63 over 230 pairs.
        let totals = Totals {
            pairs: 230,
            wins: 181,
            draws: 63,
            losses: 216,
            pentanomial: [40, 35, 80, 40, 35],
        };
        let sprt = Some(SprtStatus {
            llr: -2.96,
            lower_bound: -2.94,
            upper_bound: 2.94,
            state: SprtState::H0,
        });
        let whole = rating_lines(&totals, sprt, true).join("  ");
        assert_eq!(progress_note(&totals, sprt, true, usize::MAX), whole);
        assert!(
            whole.chars().count() > 120 - 50,
            "too short to test: {whole}"
        );
        for width in (0..=whole.chars().count()).rev() {
            let note = progress_note(&totals, sprt, true, width);
            assert!(note.chars().count() <= width, "{width}: {note}");
        }
        // The bar, `230/100000 pairs ` and the last column leave 120 - 49 = 71 and 80 - 39 = 40.
        let at_120 = progress_note(&totals, sprt, true, 71);
        assert!(
            at_120.starts_with("Elo ")
                && at_120.contains("LOS ")
                && at_120.contains("LLR -2.96 (-100.7%) [-2.94, 2.94]"),
            "{at_120}"
        );
        let at_80 = progress_note(&totals, sprt, true, 40);
        assert!(
            at_80.starts_with("Elo ") && at_80.contains("  LLR -2.96"),
            "{at_80}"
        );
        assert_eq!(progress_note(&totals, sprt, true, 9), "LLR -2.96");
        assert_eq!(progress_note(&totals, sprt, true, 5), "");
        assert_eq!(fit(["a b c".into(), "a".into()], 3), "a");
    }

    #[test]
    fn three_significant_digits_as_printf_g() {
        for (x, text) in [
            (2.944_438_979, "2.94"),
            (-2.944_438_979, "-2.94"),
            (0.078_12, "0.0781"),
            (-0.000_452_1, "-0.000452"),
            (0.000_045_21, "4.52e-05"),
            (12.345, "12.3"),
            (123.4, "123"),
            (999.6, "1e+03"),
            (9.996, "10"),
            (1234.0, "1.23e+03"),
            (1.0, "1"),
            (0.0, "0"),
            (2.5, "2.5"),
        ] {
            assert_eq!(significant3(x), text, "{x}");
        }
    }

    /// Issue 18, item 1: the console's lines for a sweep (five pairs won twice, the end of a
    /// 10-0 match) said LOS 100.0 % and nElo in the thousands. With the prior they read as
    /// near-certain with finite intervals.
    #[test]
    fn a_sweeps_console_lines_are_honest() {
        let totals = Totals {
            pairs: 5,
            wins: 10,
            draws: 0,
            losses: 0,
            pentanomial: [0, 0, 0, 0, 5],
        };
        for penta in [true, false] {
            let line = &rating_lines(&totals, None, penta)[0];
            let number = |after: &str| -> f64 {
                let rest = &line[line.find(after).unwrap() + after.len()..];
                rest.split([' ', ',']).next().unwrap().parse().unwrap()
            };
            let (elo, half_width, los) =
                (number("Elo difference: "), number("+/- "), number("LOS: "));
            // 11 of 12 points: 416 Elo.
            assert!((elo - 416.5).abs() < 1.0, "{line}");
            assert!(half_width < 400.0 && (99.0..100.0).contains(&los), "{line}");
        }
        let line = pentanomial_line(&totals);
        let nelo: f64 = line
            .split("nElo: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!((100.0..1000.0).contains(&nelo), "{line}");
        let block = fastchess_block("dev", "base", "10+0.1", &totals, None, true);
        assert!(block.iter().any(|l| l.starts_with("LOS: 99.")), "{block:?}");
    }

    #[test]
    fn sprt_line_is_cutechess_to_the_character() {
        let status = SprtStatus {
            llr: 1.234_56,
            lower_bound: -2.944_438_979,
            upper_bound: 2.944_438_979,
            state: SprtState::Continue,
        };
        assert_eq!(
            sprt_line(&status),
            "SPRT: llr 1.23 (41.9%), lbound -2.94, ubound 2.94"
        );
        let h0 = SprtStatus {
            llr: -2.95,
            state: SprtState::H0,
            ..status
        };
        assert_eq!(
            sprt_line(&h0),
            "SPRT: llr -2.95 (-100.2%), lbound -2.94, ubound 2.94 - H0 was accepted"
        );
    }
}
