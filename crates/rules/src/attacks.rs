//! Attack tables. Leaper and ray tables are built by `const fn` at compile time; slider tables
//! come from the magic search in `build.rs`. Nothing is initialised at run time.

use crate::{Bitboard, Color, Role, Square};

pub(crate) struct Magic {
    mask: u64,
    factor: u64,
    shift: u32,
    offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/magics.rs"));

const fn leaper_table(steps: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < steps.len() {
            let (nf, nr) = (f + steps[i].0, r + steps[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

const KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
const KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
const PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

/// Rays between and through pairs of squares on a common line.
const fn ray_tables() -> ([[u64; 64]; 64], [[u64; 64]; 64]) {
    let mut between = [[0u64; 64]; 64];
    let mut line = [[0u64; 64]; 64];
    let dirs: [(i32, i32); 8] = [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (1, 1),
        (1, -1),
        (-1, 1),
        (-1, -1),
    ];
    let mut a = 0;
    while a < 64 {
        let (af, ar) = ((a % 8) as i32, (a / 8) as i32);
        let mut d = 0;
        while d < 8 {
            let (df, dr) = dirs[d];
            // The whole line through `a` in this direction (both ways), for `line`.
            let mut full = 1u64 << a;
            let (mut f, mut r) = (af + df, ar + dr);
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                full |= 1 << (r * 8 + f);
                f += df;
                r += dr;
            }
            let (mut f, mut r) = (af - df, ar - dr);
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                full |= 1 << (r * 8 + f);
                f -= df;
                r -= dr;
            }
            let mut path = 0u64;
            let (mut f, mut r) = (af + df, ar + dr);
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                let b = (r * 8 + f) as usize;
                between[a][b] = path;
                line[a][b] = full;
                path |= 1 << b;
                f += df;
                r += dr;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

/// Empty-board slider attacks, for the cheap "could these two squares see each other" test.
const fn empty_board_rays(dirs: [(i32, i32); 4]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 4 {
            let (df, dr) = dirs[d];
            let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                table[sq] |= 1 << (r * 8 + f);
                f += df;
                r += dr;
            }
            d += 1;
        }
        sq += 1;
    }
    table
}

const ROOK_RAYS: [u64; 64] = empty_board_rays([(1, 0), (-1, 0), (0, 1), (0, -1)]);
const BISHOP_RAYS: [u64; 64] = empty_board_rays([(1, 1), (1, -1), (-1, 1), (-1, -1)]);

const RAYS: ([[u64; 64]; 64], [[u64; 64]; 64]) = ray_tables();
static BETWEEN: [[u64; 64]; 64] = RAYS.0;
static LINE: [[u64; 64]; 64] = RAYS.1;

#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// The squares a pawn of `color` on `sq` attacks (not where it pushes).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

#[inline]
fn magic_lookup(magic: &Magic, occupied: Bitboard) -> Bitboard {
    let index = ((occupied.0 & magic.mask).wrapping_mul(magic.factor) >> magic.shift) as usize;
    Bitboard(SLIDER_ATTACKS[magic.offset + index])
}

#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index()], occupied)
}

#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index()], occupied)
}

/// Rook moves from `sq` on an empty board: the rank and file through it.
#[inline]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq.index()])
}

/// Bishop moves from `sq` on an empty board: the diagonals through it.
#[inline]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq.index()])
}

#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// What a piece on `sq` attacks given the occupancy.
#[inline]
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// The squares strictly between `a` and `b` if they share a rank, file or diagonal; else empty.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index()][b.index()])
}

/// The whole line through `a` and `b` (edge to edge) if they share one; else empty.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index()][b.index()])
}

/// Whether `c` lies on the line through `a` and `b`.
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_slide(sq: Square, occupied: Bitboard, dirs: &[(i32, i32)]) -> Bitboard {
        let mut out = Bitboard::EMPTY;
        for &(df, dr) in dirs {
            let (mut f, mut r) = (sq.file().index() as i32, sq.rank().index() as i32);
            loop {
                f += df;
                r += dr;
                if !(0..8).contains(&f) || !(0..8).contains(&r) {
                    break;
                }
                let t = Square::new((r * 8 + f) as u32).unwrap();
                out = out.with(t);
                if occupied.contains(t) {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn magic_tables_agree_with_ray_walking() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for sq in Square::all() {
            for _ in 0..200 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let occ = Bitboard(seed & seed.rotate_left(17));
                assert_eq!(
                    rook_attacks(sq, occ),
                    slow_slide(sq, occ, &[(1, 0), (-1, 0), (0, 1), (0, -1)])
                );
                assert_eq!(
                    bishop_attacks(sq, occ),
                    slow_slide(sq, occ, &[(1, 1), (1, -1), (-1, 1), (-1, -1)])
                );
            }
        }
    }

    #[test]
    fn leapers_and_rays() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(king_attacks(Square::E1).count(), 5);
        assert_eq!(
            pawn_attacks(Color::White, Square::E2),
            Bitboard::EMPTY
                .with("d3".parse().unwrap())
                .with("f3".parse().unwrap())
        );
        assert_eq!(between(Square::A1, Square::H8).count(), 6);
        assert_eq!(between(Square::A1, "b3".parse().unwrap()), Bitboard::EMPTY);
        assert!(aligned(Square::A1, Square::H8, "d4".parse().unwrap()));
        assert_eq!(line(Square::E1, Square::E8), Bitboard::file(crate::File::E));
        for sq in Square::all() {
            assert_eq!(rook_rays(sq), rook_attacks(sq, Bitboard::EMPTY));
            assert_eq!(bishop_rays(sq), bishop_attacks(sq, Bitboard::EMPTY));
        }
    }
}
