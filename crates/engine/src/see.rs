//! Static exchange evaluation: does a move win at least `threshold` centipawns once every
//! capture on its destination square has been played out, least valuable attacker first?
//!
//! Used to order captures (winning before losing), to prune losing captures in quiescence and
//! to prune moves that hang material at shallow depth. X-ray attackers behind the pieces that
//! have captured are revealed as the exchange goes on. Pins are ignored, as in most engines:
//! the answer is a heuristic, not a proof.

use arbiter_rules::attacks::{bishop_attacks, rook_attacks};
use arbiter_rules::{Bitboard, Color, Move, Position, Role};

/// Whether `mv` wins at least `threshold` (negative: loses at most `-threshold`) by exchange,
/// with piece values `values` (pawn to king, king unused).
pub fn see_ge(pos: &Position, mv: Move, threshold: i32, values: &[i32; 6]) -> bool {
    if mv.is_castle() {
        return threshold <= 0;
    }
    let value = |role: Role| values[role.index()];
    let board = pos.board();
    let to = mv.to;

    // What we gain if the opponent does not recapture, minus the threshold.
    let mut swap = mv.capture.map_or(0, value) - threshold;
    if let Some(promotion) = mv.promotion {
        swap += value(promotion) - value(Role::Pawn);
    }
    if swap < 0 {
        return false;
    }
    // What we stand to lose if the moved piece is taken back.
    let moved = mv.promotion.unwrap_or(mv.role);
    swap = value(moved) - swap;
    if swap <= 0 {
        return true;
    }

    let mut occupied = board.occupied().without(mv.from).with(to);
    if mv.is_en_passant() {
        occupied = occupied.without(mv.capture_square());
    }
    let diagonal = board.diagonal_sliders();
    let straight = board.line_sliders();
    let mut attackers = board.attackers_to(to, Color::White, occupied)
        | board.attackers_to(to, Color::Black, occupied);
    let mut side = pos.turn();
    let mut result = true;

    loop {
        side = !side;
        attackers &= occupied;
        let ours = attackers & board.by_color(side);
        if ours.is_empty() {
            break;
        }
        result = !result;
        let Some((role, from)) = least_valuable(board, ours) else {
            break;
        };
        if role == Role::King {
            // The king may only take last: if the other side still attacks, it cannot.
            return if (attackers & board.by_color(!side)).any() {
                !result
            } else {
                result
            };
        }
        swap = value(role) - swap;
        if swap < i32::from(result) {
            break;
        }
        occupied = occupied.without(from);
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
            attackers |= bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen) {
            attackers |= rook_attacks(to, occupied) & straight;
        }
    }
    result
}

fn least_valuable(
    board: &arbiter_rules::Board,
    set: Bitboard,
) -> Option<(Role, arbiter_rules::Square)> {
    Role::ALL
        .into_iter()
        .find_map(|role| (set & board.by_role(role)).first().map(|sq| (role, sq)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_rules::uci::parse_uci_move;

    const VALUES: [i32; 6] = [100, 325, 325, 500, 950, 0];

    fn see(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos = Position::from_fen(fen).unwrap();
        let mv = parse_uci_move(&pos, uci).unwrap();
        see_ge(&pos, mv, threshold, &VALUES)
    }

    #[test]
    fn free_and_defended_captures() {
        // Rook takes an undefended pawn.
        let fen = "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1";
        assert!(see(fen, "e1e5", 100));
        assert!(!see(fen, "e1e5", 101));
        // Knight takes a pawn defended by a pawn: loses 225.
        let fen = "4k3/8/3p4/4p3/8/5N2/8/4K3 w - - 0 1";
        assert!(see(fen, "f3e5", -225));
        assert!(!see(fen, "f3e5", -224));
    }

    #[test]
    fn xrays_join_the_exchange() {
        // Qxd5 is defended by the rook behind it on the d-file; Black's bishop recaptures.
        let fen = "3rk3/8/4b3/3p4/8/8/3R4/3QK3 w - - 0 1";
        // R takes p (100), B takes R (-500), Q... the rook on d8 x-rays too.
        assert!(!see(fen, "d2d5", 1));
        assert!(see(fen, "d2d5", -400));
    }
}
