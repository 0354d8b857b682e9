//! A finished game as text: its PGN (cutechess's tags and move comments) and its JSON object
//! (a [`GameEntry`]), written once per game for the events, the store and the exports.

use std::time::{SystemTime, UNIX_EPOCH};

use arbiter_rules::pgn::PgnGame;
use arbiter_rules::uci::move_to_uci;
use arbiter_rules::Game;

use crate::game::{GameRecord, MoveStats};
use crate::spec::PlaySpec;
use arbiter_records::entries::{self, book_entry, EntryKind, GameEntry, MoveTime};

impl From<&MoveStats> for MoveTime {
    fn from(stats: &MoveStats) -> MoveTime {
        MoveTime {
            ms: stats.elapsed.as_secs_f64() * 1000.0,
            engine_ms: stats.reported.map(|t| t.as_millis() as u64),
            clock_ms: stats.clock_after.map(|c| c.as_millis()),
        }
    }
}

/// The PGN of game `game_index` of schedule unit `unit`: seven-tag roster, cutechess's extra
/// tags, `{+0.35/12 0.250s}` move comments, and the reason after the last move.
pub fn game_pgn(
    spec: &PlaySpec,
    record: &GameRecord,
    unit: u64,
    game_index: usize,
    started_at: SystemTime,
) -> String {
    let number = spec.game_number(unit, game_index);
    let mut game = Game::new(record.opening.start, spec.rules);
    for &mv in &record.moves {
        game.play_unchecked(mv);
    }
    let mut pgn = PgnGame::from_game(&game, Some(&record.outcome));
    pgn.tags.clear();
    let white = spec.players.iter().position(|p| p.name == record.white);
    let tc = &spec.time_controls[white.unwrap_or(0)];
    for (name, value) in [
        ("Event", spec.event.clone()),
        ("Site", spec.site.clone()),
        ("Date", pgn_date(started_at)),
        // The game's own number is arbiter's tag.
        ("Round", spec.round_tag(unit, game_index).to_string()),
        ("White", record.white.clone()),
        ("Black", record.black.clone()),
        ("Result", record.outcome.result_token().to_owned()),
        (
            "Termination",
            record.outcome.termination.pgn_tag().to_owned(),
        ),
        ("TimeControl", tc.pgn_tag()),
        ("PlyCount", record.plies().to_string()),
        ("GameNumber", number.to_string()),
        ("BookEntry", book_entry(&record.opening.source)),
    ] {
        pgn.set_tag(name, &value);
    }
    pgn.comments = record
        .stats
        .iter()
        .map(|stats| {
            Some(
                stats
                    .as_ref()
                    .map_or_else(|| "book".to_owned(), |s| s.comment()),
            )
        })
        .collect();
    match pgn.comments.last_mut() {
        Some(Some(last)) => {
            last.push_str(", ");
            last.push_str(&record.reason_in_full());
        }
        _ => pgn.leading_comment = Some(record.reason_in_full()),
    }
    pgn.to_pgn().unwrap_or_else(|e| {
        format!(
            "[Event \"{}\"]\n\n{{unwritable game: {e}}} *\n\n",
            spec.event
        )
    })
}

/// One JSON object per game, for `jsonl` output and the store (a [`GameEntry`]).
pub fn game_json(record: &GameRecord, number: u64, pair: u64) -> String {
    let moves: Vec<String> = record
        .moves
        .iter()
        .map(|&mv| move_to_uci(Some(mv)))
        .collect();
    let times: Vec<MoveTime> = record.stats.iter().flatten().map(MoveTime::from).collect();
    let entry = GameEntry {
        schema: entries::SCHEMA,
        kind: EntryKind::Game,
        game: number,
        pair,
        white: record.white.clone(),
        black: record.black.clone(),
        result: record.outcome.result_token().to_owned(),
        termination: record.outcome.termination.pgn_tag().to_owned(),
        reason: record.reason.clone(),
        plies: record.plies(),
        // As the PGN's BookEntry names it: the book's file name and line, not the folders of
        // the machine that played it.
        opening: book_entry(&record.opening.source),
        fen: record.opening.start.fen(),
        moves: moves.join(" "),
        move_ms: times.iter().map(|t| t.ms).collect(),
        engine_ms: times.iter().map(|t| t.engine_ms).collect(),
        clock_ms: times.iter().map(|t| t.clock_ms).collect(),
        flagged_move: record.flagged_move.as_ref().map(MoveTime::from),
        duration_ms: record.duration.as_millis() as u64,
        runner_overhead_us: record.overhead.as_micros() as u64,
    };
    serde_json::to_string(&entry).unwrap_or_default()
}

/// `YYYY.MM.DD` in UTC, from the civil-from-days algorithm (no calendar crate needed).
fn pgn_date(time: SystemTime) -> String {
    let days = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn dates() {
        assert_eq!(pgn_date(UNIX_EPOCH), "1970.01.01");
        assert_eq!(
            pgn_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000.02.29"
        );
        assert_eq!(
            pgn_date(UNIX_EPOCH + Duration::from_secs(1_795_910_400)),
            "2026.11.29"
        );
    }
}
