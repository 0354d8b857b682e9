//! Finds magic multipliers for rook and bishop attacks and writes the complete lookup table as
//! Rust source, so the attack tables exist at compile time and there is no runtime init call.
//!
//! The search is deterministic (fixed-seed xorshift), so every build produces the same table.

use std::fmt::Write as _;
use std::path::PathBuf;

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn slide(sq: usize, occupied: u64, dirs: &[(i32, i32)]) -> u64 {
    let mut attacks = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
        loop {
            f += df;
            r += dr;
            if !(0..8).contains(&f) || !(0..8).contains(&r) {
                break;
            }
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
        }
    }
    attacks
}

/// The relevant-occupancy mask: the rays without the board edge they run into.
fn relevant_mask(sq: usize, dirs: &[(i32, i32)]) -> u64 {
    let mut mask = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
        loop {
            f += df;
            r += dr;
            let (nf, nr) = (f + df, r + dr);
            if !(0..8).contains(&f) || !(0..8).contains(&r) {
                break;
            }
            if !(0..8).contains(&nf) || !(0..8).contains(&nr) {
                break;
            }
            mask |= 1u64 << (r * 8 + f);
        }
    }
    mask
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

struct Found {
    mask: u64,
    factor: u64,
    shift: u32,
    offset: usize,
}

fn find_magic(sq: usize, dirs: &[(i32, i32)], rng: &mut Rng, table: &mut Vec<u64>) -> Found {
    let mask = relevant_mask(sq, dirs);
    let bits = mask.count_ones();
    let size = 1usize << bits;
    let mut occupancies = Vec::with_capacity(size);
    let mut attacks = Vec::with_capacity(size);
    let mut subset = 0u64;
    loop {
        occupancies.push(subset);
        attacks.push(slide(sq, subset, dirs));
        subset = subset.wrapping_sub(mask) & mask;
        if subset == 0 {
            break;
        }
    }
    let shift = 64 - bits;
    let mut slots = vec![0u64; size];
    let mut used = vec![0u32; size];
    let mut attempt = 0u32;
    loop {
        let factor = rng.sparse();
        if (mask.wrapping_mul(factor) >> 56).count_ones() < 6 {
            continue;
        }
        attempt += 1;
        let ok = occupancies.iter().zip(&attacks).all(|(&occ, &att)| {
            let index = (occ.wrapping_mul(factor) >> shift) as usize;
            if used[index] != attempt {
                used[index] = attempt;
                slots[index] = att;
                true
            } else {
                slots[index] == att
            }
        });
        if ok {
            let offset = table.len();
            table.extend_from_slice(&slots);
            return Found {
                mask,
                factor,
                shift,
                offset,
            };
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut table = Vec::new();
    let rook: Vec<Found> = (0..64)
        .map(|sq| find_magic(sq, &ROOK_DIRS, &mut rng, &mut table))
        .collect();
    let bishop: Vec<Found> = (0..64)
        .map(|sq| find_magic(sq, &BISHOP_DIRS, &mut rng, &mut table))
        .collect();

    let mut out = String::with_capacity(table.len() * 22 + 16_384);
    for (name, magics) in [("ROOK_MAGICS", &rook), ("BISHOP_MAGICS", &bishop)] {
        writeln!(out, "pub(crate) const {name}: [Magic; 64] = [").unwrap();
        for m in magics {
            writeln!(
                out,
                "    Magic {{ mask: {:#018x}, factor: {:#018x}, shift: {}, offset: {} }},",
                m.mask, m.factor, m.shift, m.offset
            )
            .unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    writeln!(
        out,
        "pub(crate) static SLIDER_ATTACKS: [u64; {}] = [",
        table.len()
    )
    .unwrap();
    for chunk in table.chunks(8) {
        out.push_str("   ");
        for value in chunk {
            write!(out, " {value:#x},").unwrap();
        }
        out.push('\n');
    }
    writeln!(out, "];").unwrap();

    let path = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("magics.rs");
    std::fs::write(path, out).unwrap();
}
