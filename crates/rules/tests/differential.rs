//! Differential test against shakmaty, an independent move generator: seeded random playouts,
//! and at every position the legal moves, check/mate/stalemate, captures and FEN must agree.
//! Our Zobrist key must be a function of the position: equal FEN (counters aside), equal key;
//! a different FEN, a different key.
//!
//! Sized for `cargo test --release` (a few seconds); a debug build plays a tenth of the games.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use arbiter_rules::uci::move_to_uci;
use arbiter_rules::{Move, MoveKind, Position, Role};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

const GAMES: u64 = if cfg!(debug_assertions) { 300 } else { 3_000 };
const MAX_PLIES: usize = 200;
/// The 75-move rule ends the game here, and our FEN reader rejects larger clocks.
const MAX_HALFMOVE_CLOCK: u32 = 150;

/// Starting points for the playouts, chosen for the rules a random game from the start rarely
/// reaches: castling through and out of check, en passant (pinned, checking, discovering),
/// promotion with and without capture.
const OPENINGS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Kiwipete.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    // CPW perft 3: en passant pinned along the rank.
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    // CPW perft 4: promotions, captures into promotion, castling rights for one side.
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    // CPW perft 5.
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    // CPW perft 6.
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    // Under-promotions on both sides, with captures.
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    // En passant available and legal.
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    // En passant captures the pawn that gives check.
    "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
    // En passant would expose the king along the rank: the square is not legal, not written.
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",
    // Castling with attacked transit squares and rooks to capture.
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1",
    // Pawns racing to promote, with checks along the way.
    "8/PPP4k/8/8/8/8/4Kppp/8 w - - 0 1",
];

/// SplitMix64: a tiny, well-mixed, seedable generator, so a failure replays exactly.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The FEN without its two move counters: what identifies a position for repetition.
fn position_key(fen: &str) -> &str {
    let mut spaces = fen.match_indices(' ').map(|(i, _)| i);
    let end = spaces.nth(3).expect("a FEN has six fields");
    &fen[..end]
}

/// UCI text packed into an integer (at most five ASCII bytes), so that hundreds of thousands of
/// move lists sort and compare without allocating.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct UciKey(u64);

impl UciKey {
    fn new(text: &str) -> UciKey {
        assert!(text.len() <= 5 && text.is_ascii(), "not UCI: {text:?}");
        UciKey(text.bytes().fold(0, |key, b| key << 8 | u64::from(b)))
    }
}

impl fmt::Display for UciKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0.to_be_bytes();
        let text: String = bytes
            .iter()
            .filter(|&&b| b != 0)
            .map(|&b| b as char)
            .collect();
        f.write_str(&text)
    }
}

impl fmt::Debug for UciKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Both sides' legal moves keyed by UCI text, sorted.
fn ours_by_uci(pos: &Position) -> Vec<(UciKey, Move)> {
    let mut moves: Vec<_> = pos
        .legal_moves()
        .into_iter()
        .map(|mv| (UciKey::new(&move_to_uci(Some(mv))), mv))
        .collect();
    moves.sort_unstable_by_key(|&(key, _)| key);
    moves
}

fn theirs_by_uci(chess: &Chess) -> Vec<(UciKey, shakmaty::Move)> {
    let mut text = String::with_capacity(8);
    let mut moves: Vec<_> = chess
        .legal_moves()
        .into_iter()
        .map(|mv| {
            text.clear();
            write!(text, "{}", UciMove::from_standard(mv)).expect("writing to a String");
            (UciKey::new(&text), mv)
        })
        .collect();
    moves.sort_unstable_by_key(|&(key, _)| key);
    moves
}

fn role_char(role: Option<Role>) -> Option<char> {
    role.map(Role::char)
}

fn shakmaty_role_char(role: Option<shakmaty::Role>) -> Option<char> {
    role.map(shakmaty::Role::char)
}

/// What the two generators say about one move with the same UCI text, field by field.
fn move_fields_agree(ours: &Move, theirs: &shakmaty::Move) -> bool {
    let double_push =
        ours.role == Role::Pawn && ours.from.rank().index().abs_diff(ours.to.rank().index()) == 2;
    role_char(Some(ours.role)) == shakmaty_role_char(Some(theirs.role()))
        && role_char(ours.capture) == shakmaty_role_char(theirs.capture())
        && role_char(ours.promotion) == shakmaty_role_char(theirs.promotion())
        && ours.is_en_passant() == theirs.is_en_passant()
        && ours.is_castle() == theirs.is_castle()
        && (ours.kind == MoveKind::DoublePush) == double_push
}

/// Everything that differs between the two at one position, as readable lines; empty if they
/// agree.
fn compare(pos: &Position, chess: &Chess, ours: &[(UciKey, Move)]) -> Vec<String> {
    let mut problems = Vec::new();
    let theirs = theirs_by_uci(chess);

    let our_ucis: Vec<UciKey> = ours.iter().map(|&(uci, _)| uci).collect();
    let their_ucis: Vec<UciKey> = theirs.iter().map(|&(uci, _)| uci).collect();
    if our_ucis != their_ucis {
        let only_ours: Vec<_> = our_ucis
            .iter()
            .filter(|m| !their_ucis.contains(m))
            .collect();
        let only_theirs: Vec<_> = their_ucis
            .iter()
            .filter(|m| !our_ucis.contains(m))
            .collect();
        problems.push(format!(
            "legal moves differ: only ours {only_ours:?}, only shakmaty {only_theirs:?} \
             (ours {} moves, shakmaty {})",
            our_ucis.len(),
            their_ucis.len()
        ));
    } else {
        for ((uci, our_mv), (_, their_mv)) in ours.iter().zip(&theirs) {
            if !move_fields_agree(our_mv, their_mv) {
                problems.push(format!("{uci}: ours {our_mv:?}, shakmaty {their_mv:?}"));
            }
        }
    }
    if pos.count_legal_moves() != ours.len() {
        problems.push(format!(
            "count_legal_moves {} but legal_moves has {}",
            pos.count_legal_moves(),
            ours.len()
        ));
    }
    if pos.has_legal_moves() == ours.is_empty() {
        problems.push(format!("has_legal_moves {}", pos.has_legal_moves()));
    }

    let flags = |check, mate, stale| format!("check {check}, checkmate {mate}, stalemate {stale}");
    let our_flags = flags(pos.is_check(), pos.is_checkmate(), pos.is_stalemate());
    let their_flags = flags(chess.is_check(), chess.is_checkmate(), chess.is_stalemate());
    if our_flags != their_flags {
        problems.push(format!("ours {our_flags}; shakmaty {their_flags}"));
    }

    let our_captures = pos.capture_moves();
    let their_captures = chess.capture_moves().len();
    let expected_captures = ours.iter().filter(|(_, mv)| mv.is_capture()).count();
    if our_captures.len() != their_captures || our_captures.len() != expected_captures {
        problems.push(format!(
            "captures: ours {}, shakmaty {their_captures}, captures among our legal moves {expected_captures}",
            our_captures.len()
        ));
    }
    if let Some(mv) = our_captures
        .iter()
        .find(|mv| !mv.is_capture() || !ours.iter().any(|(_, legal)| legal == *mv))
    {
        problems.push(format!("capture_moves has {mv:?}, not a legal capture"));
    }

    let our_fen = pos.fen();
    let their_fen = Fen::from_position(chess, EnPassantMode::Legal).to_string();
    if our_fen != their_fen {
        problems.push(format!("FEN: ours {our_fen}, shakmaty {their_fen}"));
    }
    // Reading our own FEN back must give the same position, hash and checkers included:
    // the incremental make-move and the from-scratch setup agree.
    match Position::from_fen(&our_fen) {
        Ok(reread) if reread == *pos => {}
        Ok(reread) => problems.push(format!(
            "FEN read back differs: hash {:#x} incremental vs {:#x} from scratch, fen {}",
            pos.hash(),
            reread.hash(),
            reread.fen()
        )),
        Err(err) => problems.push(format!("our FEN does not read back: {err}")),
    }
    problems
}

fn load(fen: &str) -> (Position, Chess) {
    let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    let chess = fen
        .parse::<Fen>()
        .expect("shakmaty parses the FEN")
        .into_position(CastlingMode::Standard)
        .expect("shakmaty accepts the position");
    (pos, chess)
}

/// Which playout a game is: its starting FEN and whether it favours captures (which reaches
/// endgames, promotions, mates and stalemates far more often than uniform play).
fn playout_style(game: u64) -> (&'static str, bool) {
    let opening = OPENINGS[game as usize % OPENINGS.len()];
    let greedy = (game / OPENINGS.len() as u64) % 2 == 1;
    (opening, greedy)
}

#[derive(Default)]
struct Tally {
    positions: u64,
    checks: u64,
    checkmates: u64,
    stalemates: u64,
    en_passants: u64,
    promotions: u64,
    castles: u64,
}

#[test]
fn random_playouts_agree_with_shakmaty() {
    let mut hash_of_key: HashMap<String, u64> = HashMap::new();
    let mut tally = Tally::default();
    let mut failures = Vec::new();

    for game in 0..GAMES {
        let mut rng = SplitMix64(0x5eed ^ game.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let (opening, greedy) = playout_style(game);
        let (mut pos, mut chess) = load(opening);
        let mut key_of_hash: HashMap<u64, String> = HashMap::new();
        let mut line = Vec::new();

        for _ in 0..=MAX_PLIES {
            let ours = ours_by_uci(&pos);
            let mut problems = compare(&pos, &chess, &ours);

            let fen = pos.fen();
            let key = position_key(&fen);
            let hash = pos.hash();
            if let Some(&seen) = hash_of_key.get(key) {
                if seen != hash {
                    problems.push(format!("hash {hash:#x}, but {seen:#x} earlier for {key}"));
                }
            } else {
                hash_of_key.insert(key.to_owned(), hash);
            }
            match key_of_hash.get(&hash) {
                Some(other) if other != key => {
                    problems.push(format!("hash {hash:#x} also names {other} in this game"));
                }
                Some(_) => {}
                None => {
                    key_of_hash.insert(hash, key.to_owned());
                }
            }

            tally.positions += 1;
            tally.checks += u64::from(pos.is_check());
            tally.checkmates += u64::from(pos.is_checkmate());
            tally.stalemates += u64::from(pos.is_stalemate());
            tally.en_passants += ours.iter().filter(|(_, m)| m.is_en_passant()).count() as u64;
            tally.promotions += ours.iter().filter(|(_, m)| m.promotion.is_some()).count() as u64;
            tally.castles += ours.iter().filter(|(_, m)| m.is_castle()).count() as u64;

            if !problems.is_empty() {
                failures.push(format!(
                    "game {game} from {opening}\n  after {}\n  at {fen}\n    {}",
                    if line.is_empty() {
                        "-".to_owned()
                    } else {
                        line.join(" ")
                    },
                    problems.join("\n    ")
                ));
                break;
            }
            if ours.is_empty() || pos.halfmove_clock() >= MAX_HALFMOVE_CLOCK {
                break;
            }

            let captures: Vec<usize> = (0..ours.len())
                .filter(|&i| ours[i].1.is_capture())
                .collect();
            let pick = if greedy && !captures.is_empty() && rng.below(2) == 0 {
                captures[rng.below(captures.len())]
            } else {
                rng.below(ours.len())
            };
            let (uci, mv) = &ours[pick];
            let their_mv = uci
                .to_string()
                .parse::<UciMove>()
                .expect("our UCI text parses")
                .to_move(&chess)
                .expect("the move sets agree, so shakmaty knows this move");
            pos.play_unchecked(*mv);
            chess.play_unchecked(their_mv);
            line.push(uci.to_string());
        }
        if failures.len() >= 10 {
            break;
        }
    }

    println!(
        "{} positions compared in {GAMES} games ({} distinct): {} checks, {} checkmates, \
         {} stalemates; {} en-passant, {} promotion and {} castling moves offered",
        tally.positions,
        hash_of_key.len(),
        tally.checks,
        tally.checkmates,
        tally.stalemates,
        tally.en_passants,
        tally.promotions,
        tally.castles
    );
    assert!(
        failures.is_empty(),
        "{} games disagree with shakmaty (first 10 shown):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The playouts must actually reach the rules they are here to test.
    assert!(tally.checkmates > 0 && tally.stalemates > 0);
    assert!(tally.en_passants > 0 && tally.promotions > 0 && tally.castles > 0);
}

/// The comparison itself must notice a difference, or the playouts above prove nothing.
#[test]
fn compare_reports_a_difference() {
    let (pos, _) = load(OPENINGS[0]);
    let (_, after_e4) = load("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    let problems = compare(&pos, &after_e4, &ours_by_uci(&pos));
    assert!(problems.iter().any(|p| p.starts_with("legal moves differ")));
    assert!(problems.iter().any(|p| p.starts_with("FEN")));
}
