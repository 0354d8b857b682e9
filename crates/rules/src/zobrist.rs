//! Zobrist keys, generated at compile time by splitmix64 from a fixed seed.
//!
//! A position's key covers placement, side to move, castling rights and the en-passant file,
//! the last only when an en-passant capture is legal. That is exactly FIDE's identity of
//! positions for repetition, so equal keys (barring collisions) mean "the same position".

use crate::{Color, Piece, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    castling: [u64; 16],
    en_passant_file: [u64; 8],
    black_to_move: u64,
}

const fn generate() -> Keys {
    let mut keys = Keys {
        pieces: [[[0; 64]; 6]; 2],
        castling: [0; 16],
        en_passant_file: [0; 8],
        black_to_move: 0,
    };
    let mut state = 0x0A2B_17E2_C0FF_EE00;
    let mut p = 0;
    while p < 12 {
        let mut sq = 0;
        while sq < 64 {
            let (s, v) = splitmix(state);
            state = s;
            keys.pieces[p / 6][p % 6][sq] = v;
            sq += 1;
        }
        p += 1;
    }
    // Castling keys are XORs of four base keys so that rights combine independently.
    let mut base = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (s, v) = splitmix(state);
        state = s;
        base[i] = v;
        i += 1;
    }
    let mut rights = 0;
    while rights < 16 {
        let mut key = 0;
        let mut bit = 0;
        while bit < 4 {
            if rights & (1 << bit) != 0 {
                key ^= base[bit];
            }
            bit += 1;
        }
        keys.castling[rights] = key;
        rights += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (s, v) = splitmix(state);
        state = s;
        keys.en_passant_file[f] = v;
        f += 1;
    }
    keys.black_to_move = splitmix(state).1;
    keys
}

static KEYS: Keys = generate();

#[inline]
pub(crate) fn piece(piece: Piece, sq: Square) -> u64 {
    KEYS.pieces[piece.color.index()][piece.role.index()][sq.index()]
}

#[inline]
pub(crate) fn castling(bits: usize) -> u64 {
    KEYS.castling[bits]
}

#[inline]
pub(crate) fn en_passant(sq: Square) -> u64 {
    KEYS.en_passant_file[sq.file().index()]
}

#[inline]
pub(crate) fn side(turn: Color) -> u64 {
    match turn {
        Color::White => 0,
        Color::Black => KEYS.black_to_move,
    }
}
