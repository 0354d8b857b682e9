//! Static evaluation: a hand-written classical evaluation, tapered between middlegame and
//! endgame by the material left on the board.
//!
//! Every weight is a [`Params`] field. Piece-square tables are not stored as 384 numbers but
//! built from a few shape weights per piece (centralisation, advancement, seventh rank, king
//! shelter and activity), so a tuner sees a handful of meaningful knobs instead of hundreds of
//! noisy ones. Each side's terms are computed by the same function from that side's point of
//! view, so the evaluation is colour-symmetric by construction (a test checks it).

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use arbiter_rules::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};
use arbiter_rules::{Bitboard, Color, File, Position, Role, Square};

use crate::params::Params;

/// A middlegame and an endgame value, added and scaled together.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct S {
    pub mg: i32,
    pub eg: i32,
}

impl S {
    pub const ZERO: S = S { mg: 0, eg: 0 };
    pub const fn new(mg: i32, eg: i32) -> S {
        S { mg, eg }
    }
}

impl Add for S {
    type Output = S;
    #[inline]
    fn add(self, o: S) -> S {
        S::new(self.mg + o.mg, self.eg + o.eg)
    }
}
impl Sub for S {
    type Output = S;
    #[inline]
    fn sub(self, o: S) -> S {
        S::new(self.mg - o.mg, self.eg - o.eg)
    }
}
impl AddAssign for S {
    #[inline]
    fn add_assign(&mut self, o: S) {
        *self = *self + o;
    }
}
impl SubAssign for S {
    #[inline]
    fn sub_assign(&mut self, o: S) {
        *self = *self - o;
    }
}
impl Mul<i32> for S {
    type Output = S;
    #[inline]
    fn mul(self, k: i32) -> S {
        S::new(self.mg * k, self.eg * k)
    }
}
impl Neg for S {
    type Output = S;
    #[inline]
    fn neg(self) -> S {
        S::new(-self.mg, -self.eg)
    }
}

/// Game phase of the full starting material: knight and bishop 1, rook 2, queen 4.
pub const MAX_PHASE: i32 = 24;

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

/// Files next to each file.
const ADJACENT_FILES: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        if f > 0 {
            t[f] |= FILE_A << (f - 1);
        }
        if f < 7 {
            t[f] |= FILE_A << (f + 1);
        }
        f += 1;
    }
    t
};

/// Squares strictly in front of a square on its own file, from each colour's side.
const FORWARD_FILE: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = (sq % 8, sq / 8);
        let mut rr = r + 1;
        while rr < 8 {
            t[0][sq] |= 1 << (rr * 8 + f);
            rr += 1;
        }
        let mut rr = 0;
        while rr < r {
            t[1][sq] |= 1 << (rr * 8 + f);
            rr += 1;
        }
        sq += 1;
    }
    t
};

/// Squares an enemy pawn would have to stand on to stop a pawn from being passed.
const PASSED_SPAN: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let front = FORWARD_FILE[c][sq];
            t[c][sq] = front | ((front << 1) & !FILE_A) | ((front >> 1) & !FILE_H);
            sq += 1;
        }
        c += 1;
    }
    t
};

/// Every square a set of pawns of `color` attacks.
#[inline]
fn pawn_attack_span(color: Color, pawns: Bitboard) -> Bitboard {
    let p = pawns.0;
    Bitboard(match color {
        Color::White => ((p << 7) & !FILE_H) | ((p << 9) & !FILE_A),
        Color::Black => ((p >> 9) & !FILE_H) | ((p >> 7) & !FILE_A),
    })
}

#[inline]
fn distance(a: Square, b: Square) -> i32 {
    let df = (a.file().index() as i32 - b.file().index() as i32).abs();
    let dr = (a.rank().index() as i32 - b.rank().index() as i32).abs();
    df.max(dr)
}

/// 0 on the a- and h-files, 3 on the d- and e-files.
#[inline]
fn file_centrality(file: usize) -> i32 {
    file.min(7 - file) as i32
}

/// 0 in the corners, 6 on the four centre squares.
fn centrality(sq: Square) -> i32 {
    file_centrality(sq.file().index()) + file_centrality(sq.rank().index())
}

/// The evaluation with its tables built from one set of parameters.
#[derive(Clone, Debug)]
pub struct Evaluator {
    p: Params,
    /// Material plus piece-square bonus, by colour, role and square.
    psqt: [[[S; 64]; 6]; 2],
    /// Passed-pawn bonus by relative rank.
    passed: [S; 8],
}

/// What both sides' terms need to know about the position.
struct Context {
    occupied: Bitboard,
    pawns: [Bitboard; 2],
    pawn_attacks: [Bitboard; 2],
    kings: [Square; 2],
    king_zones: [Bitboard; 2],
}

impl Evaluator {
    pub fn new(params: &Params) -> Evaluator {
        let p = params;
        let mut psqt = [[[S::ZERO; 64]; 6]; 2];
        for sq in Square::all() {
            let file = sq.file().index();
            let rank = sq.rank().index() as i32;
            let fc = file_centrality(file);
            let cen = centrality(sq) - 3;
            let pawn = if (1..7).contains(&rank) {
                let center = if rank >= 2 { p.pawn_center_mg * fc } else { 0 };
                S::new(
                    p.pawn_mg + p.pawn_advance_mg * (rank - 1) + center,
                    p.pawn_eg + p.pawn_advance_eg * (rank - 1),
                )
            } else {
                S::ZERO
            };
            let knight = S::new(
                p.knight_mg + p.knight_center_mg * cen,
                p.knight_eg + p.knight_center_eg * cen,
            );
            let bishop = S::new(
                p.bishop_mg + p.bishop_center_mg * cen,
                p.bishop_eg + p.bishop_center_eg * cen,
            );
            let seventh = if rank == 6 {
                S::new(p.rook_seventh_mg, p.rook_seventh_eg)
            } else {
                S::ZERO
            };
            let rook = S::new(p.rook_mg + p.rook_center_file_mg * (fc - 1), p.rook_eg) + seventh;
            let queen = S::new(
                p.queen_mg + p.queen_center_mg * cen,
                p.queen_eg + p.queen_center_eg * cen,
            );
            let king = S::new(
                -p.king_advance_mg * rank - p.king_center_file_mg * fc,
                p.king_center_eg * cen,
            );
            let values = [pawn, knight, bishop, rook, queen, king];
            for (role, value) in values.into_iter().enumerate() {
                psqt[Color::White.index()][role][sq.index()] = value;
                psqt[Color::Black.index()][role][sq.flip_vertical().index()] = value;
            }
        }
        let passed = [
            S::ZERO,
            S::new(p.passed_r2_mg, p.passed_r2_eg),
            S::new(p.passed_r3_mg, p.passed_r3_eg),
            S::new(p.passed_r4_mg, p.passed_r4_eg),
            S::new(p.passed_r5_mg, p.passed_r5_eg),
            S::new(p.passed_r6_mg, p.passed_r6_eg),
            S::new(p.passed_r7_mg, p.passed_r7_eg),
            S::ZERO,
        ];
        Evaluator {
            p: params.clone(),
            psqt,
            passed,
        }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// Middlegame piece values, pawn to king (king 0), as SEE and move ordering use them.
    pub fn see_values(&self) -> [i32; 6] {
        let p = &self.p;
        [
            p.pawn_mg,
            p.knight_mg,
            p.bishop_mg,
            p.rook_mg,
            p.queen_mg,
            0,
        ]
    }

    /// The evaluation in centipawns from the side to move's point of view.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let board = pos.board();
        let pawns = [
            board.by_piece(Role::Pawn.of(Color::White)),
            board.by_piece(Role::Pawn.of(Color::Black)),
        ];
        let kings = [pos.king(Color::White), pos.king(Color::Black)];
        let zone = |c: Color| {
            let k = kings[c.index()];
            let around = king_attacks(k).with(k);
            around | around.shift_forward(c)
        };
        let ctx = Context {
            occupied: board.occupied(),
            pawns,
            pawn_attacks: [
                pawn_attack_span(Color::White, pawns[0]),
                pawn_attack_span(Color::Black, pawns[1]),
            ],
            kings,
            king_zones: [zone(Color::White), zone(Color::Black)],
        };
        let white = self.side(pos, Color::White, &ctx);
        let black = self.side(pos, Color::Black, &ctx);
        let mut score = white - black;

        let minors = board.by_role(Role::Knight) | board.by_role(Role::Bishop);
        let phase = (minors.count() as i32
            + 2 * board.by_role(Role::Rook).count() as i32
            + 4 * board.by_role(Role::Queen).count() as i32)
            .min(MAX_PHASE);

        // A side without pawns and at most a minor piece ahead rarely wins.
        if score.eg != 0 {
            let strong = if score.eg > 0 {
                Color::White
            } else {
                Color::Black
            };
            let npm = |c: Color| -> i32 {
                let p = &self.p;
                let count = |r: Role| board.by_piece(r.of(c)).count() as i32;
                count(Role::Knight) * p.knight_mg
                    + count(Role::Bishop) * p.bishop_mg
                    + count(Role::Rook) * p.rook_mg
                    + count(Role::Queen) * p.queen_mg
            };
            if pawns[strong.index()].is_empty() && npm(strong) - npm(!strong) <= self.p.bishop_mg {
                score.eg = score.eg * self.p.drawish_scale / 64;
            }
        }

        let tapered = (score.mg * phase + score.eg * (MAX_PHASE - phase)) / MAX_PHASE;
        let relative = match pos.turn() {
            Color::White => tapered,
            Color::Black => -tapered,
        };
        relative + self.p.tempo
    }

    /// Everything `us` scores, from its own point of view.
    fn side(&self, pos: &Position, us: Color, ctx: &Context) -> S {
        let p = &self.p;
        let board = pos.board();
        let them = !us;
        let (ui, ti) = (us.index(), them.index());
        let own = board.by_color(us);
        let theirs = board.by_color(them);
        let occupied = ctx.occupied;
        let our_pawns = ctx.pawns[ui];
        let their_pawns = ctx.pawns[ti];
        let mut s = S::ZERO;

        for role in Role::ALL {
            let table = &self.psqt[ui][role.index()];
            for sq in board.by_piece(role.of(us)) {
                s += table[sq.index()];
            }
        }

        // Pawn structure.
        let doubled = S::new(p.doubled_mg, p.doubled_eg);
        let isolated = S::new(p.isolated_mg, p.isolated_eg);
        let connected = S::new(p.connected_mg, p.connected_eg);
        for sq in our_pawns {
            let file = sq.file().index();
            if (Bitboard(FORWARD_FILE[ui][sq.index()]) & our_pawns).any() {
                s -= doubled;
            }
            let neighbours = Bitboard(ADJACENT_FILES[file]) & our_pawns;
            if neighbours.is_empty() {
                s -= isolated;
            } else if (pawn_attacks(them, sq) & our_pawns).any()
                || (neighbours & Bitboard::rank(sq.rank())).any()
            {
                s += connected;
            }
            if (Bitboard(PASSED_SPAN[ui][sq.index()]) & their_pawns).is_empty() {
                let rank = sq.rank().relative_to(us).index();
                s += self.passed[rank];
                let stop = Bitboard::from(sq).shift_forward(us);
                if let Some(stop) = stop.first() {
                    let dist = distance(ctx.kings[ti], stop) - distance(ctx.kings[ui], stop);
                    s.eg += p.passed_king_dist_eg * dist;
                    if occupied.contains(stop) {
                        s.eg -= p.passed_blocked_eg;
                    }
                }
            }
        }

        // Pieces: mobility over squares not held by own pieces or enemy pawns, attacks on the
        // enemy king's zone, threats against bigger pieces.
        let area = !own & !ctx.pawn_attacks[ti];
        let zone = ctx.king_zones[ti];
        let big_targets = theirs & board.line_sliders();
        let mut attackers = 0;
        let mut units = 0;
        let mut king_attack = |attacks: Bitboard, weight: i32| {
            let hits = (attacks & zone).count() as i32;
            if hits > 0 {
                attackers += 1;
                units += weight * hits;
            }
        };
        for sq in board.by_piece(Role::Knight.of(us)) {
            let a = knight_attacks(sq);
            s += S::new(p.knight_mob_mg, p.knight_mob_eg) * ((a & area).count() as i32 - 4);
            s += S::new(p.threat_minor_mg, p.threat_minor_eg) * (a & big_targets).count() as i32;
            king_attack(a, p.ks_knight);
        }
        for sq in board.by_piece(Role::Bishop.of(us)) {
            let a = bishop_attacks(sq, occupied);
            s += S::new(p.bishop_mob_mg, p.bishop_mob_eg) * ((a & area).count() as i32 - 7);
            s += S::new(p.threat_minor_mg, p.threat_minor_eg) * (a & big_targets).count() as i32;
            king_attack(a, p.ks_bishop);
        }
        for sq in board.by_piece(Role::Rook.of(us)) {
            let a = rook_attacks(sq, occupied);
            s += S::new(p.rook_mob_mg, p.rook_mob_eg) * ((a & area).count() as i32 - 7);
            let file = Bitboard::file(sq.file());
            if (file & (our_pawns | their_pawns)).is_empty() {
                s += S::new(p.rook_open_mg, p.rook_open_eg);
            } else if (file & our_pawns).is_empty() {
                s += S::new(p.rook_semiopen_mg, p.rook_semiopen_eg);
            }
            king_attack(a, p.ks_rook);
        }
        for sq in board.by_piece(Role::Queen.of(us)) {
            let a = queen_attacks(sq, occupied);
            s += S::new(p.queen_mob_mg, p.queen_mob_eg) * ((a & area).count() as i32 - 14);
            king_attack(a, p.ks_queen);
        }
        let pieces = theirs - their_pawns - board.by_role(Role::King);
        s += S::new(p.threat_pawn_mg, p.threat_pawn_eg)
            * (ctx.pawn_attacks[ui] & pieces).count() as i32;

        if board.by_piece(Role::Bishop.of(us)).more_than_one() {
            s += S::new(p.bishop_pair_mg, p.bishop_pair_eg);
        }
        if attackers >= 2 {
            s.mg += (units * units * p.ks_scale / 64).min(600);
        }

        // Our own king's pawn shelter.
        let king = ctx.kings[ui];
        let kf = king.file().index();
        let files = Bitboard(ADJACENT_FILES[kf]) | Bitboard::file(king.file());
        let front1 = Bitboard::from(king).shift_forward(us);
        let front1 = files & spread_rank(front1);
        let front2 = files & spread_rank(front1.shift_forward(us));
        s.mg += p.shield_near_mg * (front1 & our_pawns).count() as i32
            + p.shield_far_mg * (front2 & our_pawns).count() as i32;
        for f in kf.saturating_sub(1)..=(kf + 1).min(7) {
            let file = File::new(f as u32).expect("file index in range");
            if (Bitboard::file(file) & our_pawns).is_empty() {
                s.mg -= p.king_open_file_mg;
            }
        }
        s
    }
}

/// The whole rank of the squares in `bb` (empty stays empty).
#[inline]
fn spread_rank(bb: Bitboard) -> Bitboard {
    match bb.first() {
        Some(sq) => Bitboard::rank(sq.rank()),
        None => Bitboard::EMPTY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_balanced_but_for_tempo() {
        let e = Evaluator::new(&Params::default());
        assert_eq!(e.evaluate(&Position::starting()), Params::default().tempo);
    }

    #[test]
    fn extra_material_counts() {
        let e = Evaluator::new(&Params::default());
        // White has an extra knight.
        let pos = Position::from_fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 w - - 0 1").unwrap();
        let v = e.evaluate(&pos);
        assert!(v > 200, "{v}");
        let black_to_move =
            Position::from_fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 b - - 0 1").unwrap();
        assert!(e.evaluate(&black_to_move) < -200);
    }

    #[test]
    fn passed_pawns_grow_with_rank() {
        let e = Evaluator::new(&Params::default());
        let r4 = Position::from_fen("4k3/8/8/8/4P3/8/8/4K3 w - - 0 1").unwrap();
        let r6 = Position::from_fen("4k3/8/4P3/8/8/8/8/4K3 w - - 0 1").unwrap();
        assert!(e.evaluate(&r6) > e.evaluate(&r4));
    }
}
