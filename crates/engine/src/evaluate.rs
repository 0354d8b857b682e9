//! Static evaluation: a hand-written classical evaluation, tapered between middlegame and
//! endgame by the material left on the board.
//!
//! Every weight is a [`Params`] field. A piece-square table is not 64 numbers but the sum of a
//! rank table and a file table mirrored about the centre (ten numbers a phase beside the
//! material value), so a tuner fits 116 well-sampled weights for the six pieces instead of 768
//! thin ones. Each side's
//! terms are computed by the same function from that side's point of view, so the evaluation
//! is colour-symmetric by construction (a test checks it).
//!
//! For Texel tuning the same code also reports what a score is made of ([`Evaluator::trace`]):
//! each parameter's White-minus-Black coefficient, the phase, and the inputs of the three
//! non-linear parts (the king attack, quadratic in its weights; the drawish scale of the
//! endgame half; tempo, added after tapering). [`Enters`] says how each parameter comes in.
//! The evaluation is generic over a [`Tracer`]; the search's [`NoTrace`] records nothing and
//! compiles away (bench at depth 12: same node count, 0.7% fewer instructions under
//! cachegrind than before the trace existed). A test rebuilds the evaluation from the trace for
//! thousands of positions and random parameter sets and finds it equal to the centipawn.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use arbiter_rules::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};
use arbiter_rules::{Bitboard, Color, File, Position, Rank, Role, Square};

use arrayvec::ArrayVec;

use crate::params::{Params, PARAMS, PARAM_COUNT};

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

/// The four centre squares.
const CENTRE: Bitboard = Bitboard(0x0000_0018_1800_0000);

/// By the king's file, its flank: the files a pawnless endgame or attack is judged on
/// (a-c, a-d, a-d, c-f, c-f, e-h, e-h, f-h).
const KING_FLANK: [u64; 8] = {
    let (queen_side, centre, king_side) = (FILE_A * 0x0f, FILE_A * 0x3c, FILE_A * 0xf0);
    [
        queen_side & !(FILE_A << 3),
        queen_side,
        queen_side,
        centre,
        centre,
        king_side,
        king_side,
        king_side & !(FILE_A << 4),
    ]
};

/// By colour index, the squares whose control is space: the c- to f-files of a side's own
/// second to fourth ranks.
const SPACE_MASK: [Bitboard; 2] = [
    Bitboard(0x0000_0000_3c3c_3c00),
    Bitboard(0x003c_3c3c_0000_0000),
];

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

/// Every square a set of pawns of `color` could ever attack, advancing: their attacks from
/// where they stand and from every square in front of them.
#[inline]
fn pawn_attack_reach(color: Color, pawns: Bitboard) -> Bitboard {
    let mut fill = pawns.0;
    match color {
        Color::White => {
            fill |= fill << 8;
            fill |= fill << 16;
            fill |= fill << 32;
        }
        Color::Black => {
            fill |= fill >> 8;
            fill |= fill >> 16;
            fill |= fill >> 32;
        }
    }
    pawn_attack_span(color, Bitboard(fill))
}

/// Relative ranks four to six of `color`: where a piece stands on an outpost.
#[inline]
fn outpost_ranks(color: Color) -> Bitboard {
    Bitboard::relative_rank(color, Rank::FOURTH)
        | Bitboard::relative_rank(color, Rank::FIFTH)
        | Bitboard::relative_rank(color, Rank::SIXTH)
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

/// Where a parameter's value lives, found by name at compile time: the evaluation names its
/// weights as `params.rs` declares them, and a misspelt name is a build error, not a zero.
const fn param(name: &str) -> usize {
    let mut i = 0;
    while i < PARAMS.len() {
        if same_name(PARAMS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("evaluate.rs names a parameter that params.rs does not declare")
}

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn ends_with(name: &str, suffix: &str) -> bool {
    let (a, b) = (name.as_bytes(), suffix.as_bytes());
    if a.len() < b.len() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if a[a.len() - b.len() + i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A weight of the evaluation: the parameters holding its middlegame and endgame halves (a
/// one-phase term has one of them). Counting a weight `n` times adds `n` to each half.
#[derive(Copy, Clone, Debug)]
struct Weight {
    mg: Option<usize>,
    eg: Option<usize>,
}

const fn pair(mg: &str, eg: &str) -> Weight {
    Weight {
        mg: Some(param(mg)),
        eg: Some(param(eg)),
    }
}

const fn mg_only(mg: &str) -> Weight {
    Weight {
        mg: Some(param(mg)),
        eg: None,
    }
}

const fn eg_only(eg: &str) -> Weight {
    Weight {
        mg: None,
        eg: Some(param(eg)),
    }
}

const DOUBLED: Weight = pair("doubled_mg", "doubled_eg");
const ISOLATED: Weight = pair("isolated_mg", "isolated_eg");
const CONNECTED: Weight = pair("connected_mg", "connected_eg");
const CONNECTED_RANK: Weight = pair("connected_rank_mg", "connected_rank_eg");
const PASSED: [Weight; 8] = [
    Weight { mg: None, eg: None },
    pair("passed_r2_mg", "passed_r2_eg"),
    pair("passed_r3_mg", "passed_r3_eg"),
    pair("passed_r4_mg", "passed_r4_eg"),
    pair("passed_r5_mg", "passed_r5_eg"),
    pair("passed_r6_mg", "passed_r6_eg"),
    pair("passed_r7_mg", "passed_r7_eg"),
    Weight { mg: None, eg: None },
];
const PASSED_KING_DIST: Weight = eg_only("passed_king_dist_eg");
const PASSED_BLOCKED: Weight = eg_only("passed_blocked_eg");
const PASSED_FREE: Weight = pair("passed_free_mg", "passed_free_eg");
const BACKWARD: Weight = pair("backward_mg", "backward_eg");
const THREAT_ROOK: Weight = pair("threat_rook_mg", "threat_rook_eg");
const KNIGHT_OUTPOST: Weight = pair("knight_outpost_mg", "knight_outpost_eg");
const BISHOP_OUTPOST: Weight = pair("bishop_outpost_mg", "bishop_outpost_eg");
const PAWN_STORM: Weight = mg_only("pawn_storm_mg");
const SAFE_CHECK: Weight = pair("safe_check_mg", "safe_check_eg");
const KING_PAWN_DIST: Weight = eg_only("king_pawn_dist_eg");
const HANGING: Weight = pair("hanging_mg", "hanging_eg");
const THREAT_PUSH: Weight = pair("threat_push_mg", "threat_push_eg");
const ROOK_SEVENTH_TARGET: Weight = pair("rook_seventh_target_mg", "rook_seventh_target_eg");
const MINOR_BEHIND_PAWN: Weight = mg_only("minor_behind_pawn_mg");
const BISHOP_PAWNS: Weight = pair("bishop_pawns_mg", "bishop_pawns_eg");
const BISHOP_RAMMED: Weight = pair("bishop_rammed_mg", "bishop_rammed_eg");
const LONG_DIAGONAL: Weight = mg_only("long_diagonal_mg");
const KING_PROTECTOR: Weight = pair("king_protector_mg", "king_protector_eg");
const KNIGHT_PAWNS: Weight = pair("knight_pawns_mg", "knight_pawns_eg");
const ROOK_PAWNS: Weight = pair("rook_pawns_mg", "rook_pawns_eg");
const ROOK_QUEEN_FILE: Weight = mg_only("rook_queen_file_mg");
const PAWN_HANGING: Weight = pair("pawn_hanging_mg", "pawn_hanging_eg");
const THREAT_KING: Weight = pair("threat_king_mg", "threat_king_eg");
const SPACE: Weight = mg_only("space_mg");
const KING_FLANK_PAWNLESS: Weight = pair("king_flank_pawnless_mg", "king_flank_pawnless_eg");
const KNIGHT_MOB: Weight = pair("knight_mob_mg", "knight_mob_eg");
const BISHOP_MOB: Weight = pair("bishop_mob_mg", "bishop_mob_eg");
const ROOK_MOB: Weight = pair("rook_mob_mg", "rook_mob_eg");
const QUEEN_MOB: Weight = pair("queen_mob_mg", "queen_mob_eg");
const THREAT_MINOR: Weight = pair("threat_minor_mg", "threat_minor_eg");
const THREAT_PAWN: Weight = pair("threat_pawn_mg", "threat_pawn_eg");
const ROOK_OPEN: Weight = pair("rook_open_mg", "rook_open_eg");
const ROOK_SEMIOPEN: Weight = pair("rook_semiopen_mg", "rook_semiopen_eg");
const BISHOP_PAIR: Weight = pair("bishop_pair_mg", "bishop_pair_eg");
const SHIELD_NEAR: Weight = mg_only("shield_near_mg");
const SHIELD_FAR: Weight = mg_only("shield_far_mg");
const KING_OPEN_FILE: Weight = mg_only("king_open_file_mg");
/// Where the non-linear terms' parameters live in [`PARAMS`], for a tuner's chain rule.
pub const TEMPO: usize = param("tempo");
pub const DRAWISH_SCALE: usize = param("drawish_scale");
pub const KS_SCALE: usize = param("ks_scale");

/// The attack-unit weights, in [`KingDanger::hits`] order: king-zone squares hit by knights,
/// bishops, rooks and queens, then safe checks, then weak king-zone squares.
pub const KING_ATTACK_WEIGHTS: [usize; KING_ATTACK_KINDS] = [
    param("ks_knight"),
    param("ks_bishop"),
    param("ks_rook"),
    param("ks_queen"),
    param("ks_check"),
    param("ks_weak"),
];
/// How many kinds of hit a king attack counts.
pub const KING_ATTACK_KINDS: usize = 6;
const KS_CHECK: usize = 4;
const KS_WEAK: usize = 5;

/// The most a king attack can be worth (centipawns, middlegame).
pub const KING_DANGER_CAP: i32 = 600;

/// How a parameter enters the evaluation, which is what a tuner needs to rebuild the score from
/// a [`Trace`]: most weights linearly in one phase half, a few through the non-linear terms.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Enters {
    /// Linearly in the middlegame half: coefficient × value, tapered by the phase.
    Middlegame,
    /// Linearly in the endgame half.
    Endgame,
    /// Through the king attack: `min(units² × ks_scale / 64, KING_DANGER_CAP)` per side with
    /// two attackers or more, `units` being Σ weight × hits (middlegame half).
    KingDanger,
    /// Added after tapering, for the side to move.
    Tempo,
    /// As the endgame half's scale (of 64) in positions [`Trace::drawish`] marks.
    DrawishScale,
}

/// How each parameter enters the evaluation, in [`PARAMS`] order; `None` for the search
/// constants, which the evaluation never reads. Weights are named `_mg`/`_eg` by phase half.
pub const ENTERS: [Option<Enters>; PARAM_COUNT] = {
    let mut t = [None; PARAM_COUNT];
    let mut i = 0;
    while i < PARAM_COUNT {
        let name = PARAMS[i].name;
        t[i] = if ends_with(name, "_mg") {
            Some(Enters::Middlegame)
        } else if ends_with(name, "_eg") {
            Some(Enters::Endgame)
        } else if i == TEMPO {
            Some(Enters::Tempo)
        } else if i == DRAWISH_SCALE {
            Some(Enters::DrawishScale)
        } else if i == KS_SCALE {
            Some(Enters::KingDanger)
        } else {
            None
        };
        i += 1;
    }
    let mut k = 0;
    while k < KING_ATTACK_WEIGHTS.len() {
        t[KING_ATTACK_WEIGHTS[k]] = Some(Enters::KingDanger);
        k += 1;
    }
    t
};

/// Each role's material value, pawn to king (the king has none).
const MATERIAL: [Weight; 6] = [
    pair("pawn_mg", "pawn_eg"),
    pair("knight_mg", "knight_eg"),
    pair("bishop_mg", "bishop_eg"),
    pair("rook_mg", "rook_eg"),
    pair("queen_mg", "queen_eg"),
    Weight { mg: None, eg: None },
];

/// Where each role's piece-square table starts in [`PARAMS`], middlegame and endgame: its
/// rank entries from the piece's own side, then its entries for the b/g-, c/f- and d/e-files.
/// One rank (the fourth; the second for pawns) and the a- and h-files are 0 and have no
/// parameter, so that the material value alone holds a piece's level: with an entry for every
/// rank, adding to the material what the ranks lose would change nothing, and a tuner could
/// drift the piece values that SEE and move ordering use. A test checks the names behind every
/// offset.
const PSQ_TABLES: [[usize; 2]; 6] = [
    [param("pawn_rank3_mg"), param("pawn_rank3_eg")],
    [param("knight_rank1_mg"), param("knight_rank1_eg")],
    [param("bishop_rank1_mg"), param("bishop_rank1_eg")],
    [param("rook_rank1_mg"), param("rook_rank1_eg")],
    [param("queen_rank1_mg"), param("queen_rank1_eg")],
    [param("king_rank1_mg"), param("king_rank1_eg")],
];
const PAWN_CENTER: usize = param("pawn_center_mg");

/// The parameters (and how many times each) that make up one piece's material and
/// piece-square value on `sq`, seen from White's side. One list serves the tables the engine
/// searches with and the trace a tuner fits, so the two cannot drift apart.
fn piece_square_terms(role: Role, sq: Square) -> ArrayVec<(usize, i32), 8> {
    let rank = sq.rank().index();
    let file = sq.file().index();
    let fc = file_centrality(file) as usize;
    let mut t = ArrayVec::new();
    // The rank entry's offset in the table (none on the rank fixed at 0), and how many there are.
    let (entry, ranks) = match role {
        // Pawns never stand on the first or last rank: the table has nothing there.
        Role::Pawn if !(1..7).contains(&rank) => return t,
        Role::Pawn => (rank.checked_sub(2), 5),
        _ => (
            match rank {
                0..=2 => Some(rank),
                3 => None,
                _ => Some(rank - 1),
            },
            7,
        ),
    };
    for i in [MATERIAL[role.index()].mg, MATERIAL[role.index()].eg]
        .into_iter()
        .flatten()
    {
        t.push((i, 1));
    }
    for base in PSQ_TABLES[role.index()] {
        if let Some(entry) = entry {
            t.push((base + entry, 1));
        }
        if fc > 0 {
            t.push((base + ranks + fc - 1, 1));
        }
    }
    if role == Role::Pawn && rank >= 2 {
        t.push((PAWN_CENTER, file_centrality(file)));
    }
    t
}

/// A side's king attack: how many of its pieces hit the enemy king's zone; how many zone
/// squares pieces of each kind (knight, bishop, rook, queen) hit in all; how many safe checks
/// its pieces have; and how many zone squares it attacks that only the king defends.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct KingDanger {
    pub attackers: i32,
    pub hits: [i32; KING_ATTACK_KINDS],
}

impl KingDanger {
    /// The middlegame bonus of the attack under `params`.
    pub fn bonus(&self, params: &Params) -> i32 {
        let values = params.values();
        let units = KING_ATTACK_WEIGHTS
            .iter()
            .zip(self.hits)
            .map(|(&w, hits)| values[w] * hits)
            .sum();
        king_danger(self.attackers, units, params.ks_scale)
    }
}

/// The king attack bonus: quadratic in the attack units, so that attacks with several pieces
/// count for more than the sum of their parts; nothing below two attackers.
#[inline]
fn king_danger(attackers: i32, units: i32, scale: i32) -> i32 {
    if attackers >= 2 {
        (units * units * scale / 64).min(KING_DANGER_CAP)
    } else {
        0
    }
}

/// The endgame half of a drawish position, scaled by `scale` / 64.
#[inline]
fn scale_drawish(eg: i32, scale: i32) -> i32 {
    eg * scale / 64
}

/// The score between its middlegame and endgame halves by the phase (integer, as searched).
#[inline]
fn taper(score: S, phase: i32) -> i32 {
    (score.mg * phase + score.eg * (MAX_PHASE - phase)) / MAX_PHASE
}

/// Everything the evaluation of one position is made of, for a tuner: each parameter's
/// coefficient, the phase, and the inputs of the non-linear terms. With the parameters it
/// gives back the evaluation exactly ([`Trace::evaluate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// For each parameter (in [`PARAMS`] order), how many times White's evaluation counts it
    /// minus how many times Black's does. King-attack weights are not here (they enter
    /// through [`Trace::king_danger`]); tempo is +1 with White to move, -1 with Black.
    pub coefficients: [i32; PARAM_COUNT],
    /// Remaining material, 0 (bare kings and pawns) to [`MAX_PHASE`] (the opening).
    pub phase: i32,
    pub turn: Color,
    /// By colour index: each side's attack on the other's king.
    pub king_danger: [KingDanger; 2],
    /// The endgame half was scaled by `drawish_scale` / 64: the side ahead has no pawns and at
    /// most a minor piece more. Which positions qualify depends on the piece values, so a tuner
    /// that moves them treats this as fixed at the values it traced with.
    pub drawish: bool,
}

impl Trace {
    fn new(turn: Color) -> Trace {
        Trace {
            coefficients: [0; PARAM_COUNT],
            phase: 0,
            turn,
            king_danger: [KingDanger::default(); 2],
            drawish: false,
        }
    }

    #[inline]
    fn add(&mut self, us: Color, w: Weight, count: i32) {
        let count = match us {
            Color::White => count,
            Color::Black => -count,
        };
        for i in [w.mg, w.eg].into_iter().flatten() {
            self.coefficients[i] += count;
        }
    }

    /// The evaluation rebuilt from the trace and `params`, from the side to move's point of
    /// view: equal to [`Evaluator::evaluate`] with the same parameters, integer rounding and
    /// all (the drawish flag apart, which is the traced one).
    pub fn evaluate(&self, params: &Params) -> i32 {
        let values = params.values();
        let mut score = S::ZERO;
        for (i, (&c, v)) in self.coefficients.iter().zip(values).enumerate() {
            match ENTERS[i] {
                Some(Enters::Middlegame) => score.mg += c * v,
                Some(Enters::Endgame) => score.eg += c * v,
                _ => {}
            }
        }
        score.mg += self.king_danger[0].bonus(params) - self.king_danger[1].bonus(params);
        if self.drawish {
            score.eg = scale_drawish(score.eg, params.drawish_scale);
        }
        let white = taper(score, self.phase) + self.coefficients[TEMPO] * params.tempo;
        match self.turn {
            Color::White => white,
            Color::Black => -white,
        }
    }
}

/// Where the evaluation's terms are recorded, if anywhere. The evaluation is generic over it:
/// with [`NoTrace`] every recording call is an inlined `None` and compiles away, so the engine
/// pays nothing for the tuner's trace.
pub trait Tracer {
    fn trace(&mut self) -> Option<&mut Trace>;
}

/// The search's tracer: records nothing.
pub struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn trace(&mut self) -> Option<&mut Trace> {
        None
    }
}

impl Tracer for Trace {
    #[inline]
    fn trace(&mut self) -> Option<&mut Trace> {
        Some(self)
    }
}

/// The evaluation with its tables built from one set of parameters.
#[derive(Clone, Debug)]
pub struct Evaluator {
    p: Params,
    /// The parameter values in [`PARAMS`] order, for the weights named by index.
    w: [i32; PARAM_COUNT],
    /// Material plus piece-square bonus, by colour, role and square.
    psqt: [[[S; 64]; 6]; 2],
    /// Passed-pawn bonus by relative rank.
    passed: [S; 8],
}

/// One side's evaluation before the terms that need both sides' attacks.
struct Side {
    score: S,
    /// Every square its pawns and pieces attack (not its king).
    attacks: Bitboard,
    /// Its pieces that hit the enemy king's zone, and their attack units so far.
    attackers: i32,
    units: i32,
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
        let w = params.values();
        let value =
            |weight: Weight| S::new(weight.mg.map_or(0, |i| w[i]), weight.eg.map_or(0, |i| w[i]));
        let mut psqt = [[[S::ZERO; 64]; 6]; 2];
        for sq in Square::all() {
            for role in Role::ALL {
                let mut v = S::ZERO;
                for (i, count) in piece_square_terms(role, sq) {
                    match ENTERS[i] {
                        Some(Enters::Middlegame) => v.mg += w[i] * count,
                        _ => v.eg += w[i] * count,
                    }
                }
                psqt[Color::White.index()][role.index()][sq.index()] = v;
                psqt[Color::Black.index()][role.index()][sq.flip_vertical().index()] = v;
            }
        }
        Evaluator {
            p: params.clone(),
            w,
            psqt,
            passed: PASSED.map(value),
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
        self.evaluate_with(pos, &mut NoTrace)
    }

    /// The evaluation and what it is made of, for a tuner.
    pub fn trace(&self, pos: &Position) -> (i32, Trace) {
        let mut trace = Trace::new(pos.turn());
        let score = self.evaluate_with(pos, &mut trace);
        (score, trace)
    }

    /// Counts weight `w` `count` times for `us`.
    #[inline(always)]
    fn add<T: Tracer>(&self, s: &mut S, t: &mut T, us: Color, w: Weight, count: i32) {
        // One-phase weights touch one half only: packing a zero into the other half costs
        // instructions in the hottest function of the search.
        match (w.mg, w.eg) {
            (Some(mg), Some(eg)) => *s += S::new(self.w[mg], self.w[eg]) * count,
            (Some(mg), None) => s.mg += self.w[mg] * count,
            (None, Some(eg)) => s.eg += self.w[eg] * count,
            (None, None) => {}
        }
        if let Some(trace) = t.trace() {
            trace.add(us, w, count);
        }
    }

    fn evaluate_with<T: Tracer>(&self, pos: &Position, t: &mut T) -> i32 {
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
        let mut sides = [
            self.side(pos, Color::White, &ctx, t),
            self.side(pos, Color::Black, &ctx, t),
        ];
        // Hanging pieces and weak squares around the king need both sides' attacks, so they
        // are counted once both are known.
        let pieces =
            |c: Color| board.by_color(c) - pawns[c.index()] - Bitboard::from(kings[c.index()]);
        let king_reach = [king_attacks(kings[0]), king_attacks(kings[1])];
        let all_attacks = [
            sides[0].attacks | king_reach[0],
            sides[1].attacks | king_reach[1],
        ];
        for us in [Color::White, Color::Black] {
            let (ui, ti) = (us.index(), (!us).index());
            let undefended = !all_attacks[ti];
            let hanging = (pieces(!us) & all_attacks[ui] & undefended).count() as i32;
            let pawns_hanging = (pawns[ti] & all_attacks[ui] & undefended).count() as i32;
            let king_threats = (king_reach[ui] & board.by_color(!us) & undefended).count() as i32;
            // A king defends its zone, but a square only it defends is weak.
            let weak = (ctx.king_zones[ti] & sides[ui].attacks & !sides[ti].attacks).count();
            let side = &mut sides[ui];
            self.add(&mut side.score, t, us, HANGING, hanging);
            self.add(&mut side.score, t, us, PAWN_HANGING, pawns_hanging);
            self.add(&mut side.score, t, us, THREAT_KING, king_threats);
            let units = side.units + self.w[KING_ATTACK_WEIGHTS[KS_WEAK]] * weak as i32;
            side.score.mg += king_danger(side.attackers, units, self.p.ks_scale);
            if let Some(trace) = t.trace() {
                trace.king_danger[ui].hits[KS_WEAK] = weak as i32;
            }
        }
        let mut score = sides[0].score - sides[1].score;

        let minors = board.by_role(Role::Knight) | board.by_role(Role::Bishop);
        let phase = (minors.count() as i32
            + 2 * board.by_role(Role::Rook).count() as i32
            + 4 * board.by_role(Role::Queen).count() as i32)
            .min(MAX_PHASE);

        // A side without pawns and at most a minor piece ahead rarely wins.
        let mut drawish = false;
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
                score.eg = scale_drawish(score.eg, self.p.drawish_scale);
                drawish = true;
            }
        }

        if let Some(trace) = t.trace() {
            trace.phase = phase;
            trace.drawish = drawish;
            trace.coefficients[TEMPO] = match pos.turn() {
                Color::White => 1,
                Color::Black => -1,
            };
        }
        let tapered = taper(score, phase);
        let relative = match pos.turn() {
            Color::White => tapered,
            Color::Black => -tapered,
        };
        relative + self.p.tempo
    }

    /// Everything `us` scores from its own point of view but what needs the other side's
    /// attacks, and what those terms need of its own.
    fn side<T: Tracer>(&self, pos: &Position, us: Color, ctx: &Context, t: &mut T) -> Side {
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
                if let Some(trace) = t.trace() {
                    let white_sq = match us {
                        Color::White => sq,
                        Color::Black => sq.flip_vertical(),
                    };
                    for (i, count) in piece_square_terms(role, white_sq) {
                        let w = match ENTERS[i] {
                            Some(Enters::Middlegame) => Weight {
                                mg: Some(i),
                                eg: None,
                            },
                            _ => Weight {
                                mg: None,
                                eg: Some(i),
                            },
                        };
                        trace.add(us, w, count);
                    }
                }
            }
        }

        // Pawn structure.
        let mut nearest_pawn = i32::MAX;
        for sq in our_pawns {
            let file = sq.file().index();
            nearest_pawn = nearest_pawn.min(distance(ctx.kings[ui], sq));
            if (Bitboard(FORWARD_FILE[ui][sq.index()]) & our_pawns).any() {
                self.add(&mut s, t, us, DOUBLED, -1);
            }
            let neighbours = Bitboard(ADJACENT_FILES[file]) & our_pawns;
            if neighbours.is_empty() {
                self.add(&mut s, t, us, ISOLATED, -1);
            } else {
                let beside = neighbours & Bitboard::rank(sq.rank());
                if (pawn_attacks(them, sq) & our_pawns).any() || beside.any() {
                    self.add(&mut s, t, us, CONNECTED, 1);
                    let advanced = sq.rank().relative_to(us).index() as i32 - 1;
                    self.add(&mut s, t, us, CONNECTED_RANK, advanced);
                }
                // Backward: every neighbour is ahead of it, so no pawn can come to defend it,
                // and an enemy pawn stops it from catching up.
                let behind = Bitboard(PASSED_SPAN[ti][sq.index()]) & neighbours;
                let stop = Bitboard::from(sq).shift_forward(us);
                if beside.is_empty() && behind.is_empty() && (stop & ctx.pawn_attacks[ti]).any() {
                    self.add(&mut s, t, us, BACKWARD, -1);
                }
            }
            if (Bitboard(PASSED_SPAN[ui][sq.index()]) & their_pawns).is_empty() {
                let rank = sq.rank().relative_to(us).index();
                s += self.passed[rank];
                if let Some(trace) = t.trace() {
                    trace.add(us, PASSED[rank], 1);
                }
                let stop = Bitboard::from(sq).shift_forward(us);
                if let Some(stop) = stop.first() {
                    let dist = distance(ctx.kings[ti], stop) - distance(ctx.kings[ui], stop);
                    self.add(&mut s, t, us, PASSED_KING_DIST, dist);
                    if occupied.contains(stop) {
                        self.add(&mut s, t, us, PASSED_BLOCKED, -1);
                    }
                    if (Bitboard(FORWARD_FILE[ui][sq.index()]) & occupied).is_empty() {
                        self.add(&mut s, t, us, PASSED_FREE, 1);
                    }
                }
            }
        }
        if nearest_pawn != i32::MAX {
            self.add(&mut s, t, us, KING_PAWN_DIST, -nearest_pawn);
        }

        // Pieces: mobility over squares not held by own pieces or enemy pawns, attacks on the
        // enemy king's zone, threats against bigger pieces.
        let area = !own & !ctx.pawn_attacks[ti];
        let zone = ctx.king_zones[ti];
        let big_targets = theirs & board.line_sliders();
        let count = |bb: Bitboard| bb.count() as i32;
        // Outposts: defended by a pawn, beyond the reach of every enemy pawn.
        let outposts =
            outpost_ranks(us) & ctx.pawn_attacks[ui] & !pawn_attack_reach(them, their_pawns);
        // Checks: squares from which each kind of piece would check the enemy king, counted
        // where our piece reaches them and no enemy pawn guards them.
        let their_king = ctx.kings[ti];
        let safe = !own & !ctx.pawn_attacks[ti];
        let knight_checks = knight_attacks(their_king) & safe;
        let bishop_checks = bishop_attacks(their_king, occupied) & safe;
        let rook_checks = rook_attacks(their_king, occupied) & safe;
        let their_queens = board.by_piece(Role::Queen.of(them));
        // A rook on the seventh matters when it cuts the king off on the eighth or eats pawns.
        let seventh = Bitboard::relative_rank(us, Rank::SEVENTH);
        let rook_on_seventh_bites = Bitboard::relative_rank(us, Rank::EIGHTH).contains(their_king)
            || (seventh & their_pawns).any();
        let our_king = ctx.kings[ui];
        // Own pawns an enemy pawn blocks: fixed on their squares, bad for a bishop of that colour.
        let rammed = our_pawns & their_pawns.shift_forward(them);
        let mut attacked = ctx.pawn_attacks[ui];
        let (mut attackers, mut units, mut checks) = (0, 0, 0);
        let mut king_attack = |t: &mut T, attacks: Bitboard, kind: usize| {
            let hits = count(attacks & zone);
            if hits > 0 {
                attackers += 1;
                units += self.w[KING_ATTACK_WEIGHTS[kind]] * hits;
            }
            if let Some(trace) = t.trace() {
                trace.king_danger[ui].hits[kind] += hits;
            }
        };
        for sq in board.by_piece(Role::Knight.of(us)) {
            let a = knight_attacks(sq);
            self.add(&mut s, t, us, KNIGHT_MOB, count(a & area) - 4);
            self.add(&mut s, t, us, THREAT_MINOR, count(a & big_targets));
            self.add(
                &mut s,
                t,
                us,
                KNIGHT_OUTPOST,
                i32::from(outposts.contains(sq)),
            );
            checks += count(a & knight_checks);
            self.add(&mut s, t, us, KING_PROTECTOR, -distance(sq, our_king));
            attacked |= a;
            king_attack(t, a, 0);
        }
        for sq in board.by_piece(Role::Bishop.of(us)) {
            let a = bishop_attacks(sq, occupied);
            self.add(&mut s, t, us, BISHOP_MOB, count(a & area) - 7);
            self.add(&mut s, t, us, THREAT_MINOR, count(a & big_targets));
            self.add(
                &mut s,
                t,
                us,
                BISHOP_OUTPOST,
                i32::from(outposts.contains(sq)),
            );
            checks += count(a & bishop_checks);
            self.add(&mut s, t, us, KING_PROTECTOR, -distance(sq, our_king));
            let colour = if Bitboard::LIGHT_SQUARES.contains(sq) {
                Bitboard::LIGHT_SQUARES
            } else {
                Bitboard::DARK_SQUARES
            };
            self.add(&mut s, t, us, BISHOP_PAWNS, -count(our_pawns & colour));
            self.add(&mut s, t, us, BISHOP_RAMMED, -count(rammed & colour));
            let through_pieces = bishop_attacks(sq, our_pawns | their_pawns);
            self.add(
                &mut s,
                t,
                us,
                LONG_DIAGONAL,
                i32::from((through_pieces & CENTRE).more_than_one()),
            );
            attacked |= a;
            king_attack(t, a, 1);
        }
        for sq in board.by_piece(Role::Rook.of(us)) {
            let a = rook_attacks(sq, occupied);
            self.add(&mut s, t, us, ROOK_MOB, count(a & area) - 7);
            self.add(&mut s, t, us, THREAT_ROOK, count(a & their_queens));
            checks += count(a & rook_checks);
            let file = Bitboard::file(sq.file());
            if (file & (our_pawns | their_pawns)).is_empty() {
                self.add(&mut s, t, us, ROOK_OPEN, 1);
            } else if (file & our_pawns).is_empty() {
                self.add(&mut s, t, us, ROOK_SEMIOPEN, 1);
            }
            if rook_on_seventh_bites && seventh.contains(sq) {
                self.add(&mut s, t, us, ROOK_SEVENTH_TARGET, 1);
            }
            self.add(&mut s, t, us, ROOK_QUEEN_FILE, count(file & their_queens));
            attacked |= a;
            king_attack(t, a, 2);
        }
        for sq in board.by_piece(Role::Queen.of(us)) {
            let a = queen_attacks(sq, occupied);
            self.add(&mut s, t, us, QUEEN_MOB, count(a & area) - 14);
            checks += count(a & (bishop_checks | rook_checks));
            attacked |= a;
            king_attack(t, a, 3);
        }
        let pieces = theirs - their_pawns - board.by_role(Role::King);
        self.add(
            &mut s,
            t,
            us,
            THREAT_PAWN,
            count(ctx.pawn_attacks[ui] & pieces),
        );
        // Pawn pushes to squares no enemy pawn guards that would attack a piece not yet
        // attacked by a pawn: one or two squares, as the pawn may move.
        let empty = !occupied;
        let single = our_pawns.shift_forward(us) & empty;
        let double = (single & Bitboard::relative_rank(us, Rank::THIRD)).shift_forward(us) & empty;
        let pushes = (single | double) & !ctx.pawn_attacks[ti];
        self.add(
            &mut s,
            t,
            us,
            THREAT_PUSH,
            count(pawn_attack_span(us, pushes) & pieces & !ctx.pawn_attacks[ui]),
        );
        // Knights gain and rooks lose with the pawns on the board (Kaufman): per piece, per own
        // pawn above five, so counted once for all of a kind.
        let above_five = count(our_pawns) - 5;
        let (knights, rooks) = (
            board.by_piece(Role::Knight.of(us)),
            board.by_piece(Role::Rook.of(us)),
        );
        self.add(&mut s, t, us, KNIGHT_PAWNS, count(knights) * above_five);
        self.add(&mut s, t, us, ROOK_PAWNS, count(rooks) * above_five);
        let minors = knights | board.by_piece(Role::Bishop.of(us));
        self.add(
            &mut s,
            t,
            us,
            MINOR_BEHIND_PAWN,
            count(minors & our_pawns.shift_forward(them)),
        );

        if board.by_piece(Role::Bishop.of(us)).more_than_one() {
            self.add(&mut s, t, us, BISHOP_PAIR, 1);
        }
        // Safe checks count twice: as a linear term and as attack units.
        self.add(&mut s, t, us, SAFE_CHECK, checks);
        units += self.w[KING_ATTACK_WEIGHTS[KS_CHECK]] * checks;
        if let Some(trace) = t.trace() {
            trace.king_danger[ui].attackers = attackers;
            trace.king_danger[ui].hits[KS_CHECK] = checks;
        }

        // Our own king's pawn shelter.
        let king = ctx.kings[ui];
        let kf = king.file().index();
        let files = Bitboard(ADJACENT_FILES[kf]) | Bitboard::file(king.file());
        let front1 = Bitboard::from(king).shift_forward(us);
        let front1 = files & spread_rank(front1);
        let front2 = files & spread_rank(front1.shift_forward(us));
        self.add(&mut s, t, us, SHIELD_NEAR, count(front1 & our_pawns));
        self.add(&mut s, t, us, SHIELD_FAR, count(front2 & our_pawns));
        for f in kf.saturating_sub(1)..=(kf + 1).min(7) {
            let file = File::new(f as u32).expect("file index in range");
            if (Bitboard::file(file) & our_pawns).is_empty() {
                self.add(&mut s, t, us, KING_OPEN_FILE, -1);
            }
        }
        // Enemy pawns storming the king's files, on our third or fourth rank.
        let storm_ranks =
            Bitboard::relative_rank(us, Rank::THIRD) | Bitboard::relative_rank(us, Rank::FOURTH);
        self.add(
            &mut s,
            t,
            us,
            PAWN_STORM,
            -count(files & storm_ranks & their_pawns),
        );
        if (Bitboard(KING_FLANK[kf]) & (our_pawns | their_pawns)).is_empty() {
            self.add(&mut s, t, us, KING_FLANK_PAWNLESS, -1);
        }
        // Space: safe squares behind the front on the central files, squares behind an own
        // pawn twice.
        let safe = SPACE_MASK[ui] & !our_pawns & !ctx.pawn_attacks[ti];
        let mut behind = our_pawns;
        behind |= behind.shift_forward(them);
        behind |= behind.shift_forward(them).shift_forward(them);
        self.add(&mut s, t, us, SPACE, count(safe) + count(safe & behind));
        Side {
            score: s,
            attacks: attacked,
            attackers,
            units,
        }
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

    /// Positions the evaluation meets in games: the quick book's openings and what random
    /// play makes of them (all phases, odd material, king hunts, pawnless ends).
    pub(crate) fn sample_positions() -> Vec<Position> {
        let book = include_str!("../../../openings/quick.epd");
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Pawnless endings, where the drawish scale applies, are rare in random play, and so
        // are kings on the far rank with queens on (the last one).
        let endings = [
            "4k3/8/8/8/8/8/8/R3K1b1 w - -",
            "4k3/8/3n4/8/8/8/8/R3K3 b - -",
            "2r1k3/8/8/8/8/8/8/R1N1K3 w - -",
            "4k3/8/8/3r4/8/8/8/3QK3 w - -",
            "4k3/8/8/8/8/8/8/1B2KN2 w - -",
            "r3k3/8/2b5/8/8/8/8/R1B1K3 b - -",
            "4K3/8/8/2q5/8/8/2Q5/4k3 w - -",
        ];
        let book = book.lines().filter(|l| !l.starts_with('#')).chain(endings);
        let mut out = Vec::new();
        for line in book {
            let fen: Vec<&str> = line.split_whitespace().take(4).collect();
            let mut pos = Position::from_fen(&format!("{} 0 1", fen.join(" "))).unwrap();
            for _ in 0..120 {
                out.push(pos);
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(moves[(random() % moves.len() as u64) as usize]);
            }
        }
        out
    }

    /// Parameter sets far from the defaults: every value drawn across its whole range.
    fn random_params(seed: u64) -> Params {
        let mut state = seed;
        let mut p = Params::default();
        for spec in PARAMS {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let span = (spec.max - spec.min + 1) as u64;
            let value = i64::from(spec.min) + ((state >> 33) % span) as i64;
            p.set(spec.name, value).unwrap();
        }
        p
    }

    #[test]
    fn the_trace_rebuilds_the_evaluation_exactly() {
        let positions = sample_positions();
        assert!(positions.len() > 5000, "{}", positions.len());
        let (mut drawish, mut king_danger) = (0, 0);
        for params in [
            Params::default(),
            random_params(1),
            random_params(2),
            random_params(3),
        ] {
            let e = Evaluator::new(&params);
            for pos in &positions {
                let (score, trace) = e.trace(pos);
                assert_eq!(score, e.evaluate(pos), "{}", pos.fen());
                assert_eq!(trace.evaluate(&params), score, "{}", pos.fen());
                drawish += usize::from(trace.drawish);
                king_danger += trace
                    .king_danger
                    .iter()
                    .filter(|d| d.attackers >= 2)
                    .count();
            }
        }
        // The non-linear terms were exercised, not only the linear ones.
        assert!(drawish > 50 && king_danger > 500, "{drawish} {king_danger}");
    }

    /// The king attack's safe checks and weak squares, counted square by square from the
    /// rules crate's `attackers_to` instead of the evaluation's attack maps.
    #[test]
    fn safe_checks_and_weak_squares_match_a_square_by_square_count() {
        let (mut checks_seen, mut weak_seen) = (0, 0);
        for pos in sample_positions() {
            let board = pos.board();
            let occupied = board.occupied();
            let (_, trace) = Evaluator::new(&Params::default()).trace(&pos);
            for us in [Color::White, Color::Black] {
                let them = !us;
                let their_king = pos.king(them);
                // Attackers other than the king, which defends its zone but attacks nothing.
                let men = |sq: Square, side: Color| {
                    board.attackers_to(sq, side, occupied) - Bitboard::from(pos.king(side))
                };
                let pawn_guarded =
                    |sq: Square| (men(sq, them) & board.by_piece(Role::Pawn.of(them))).any();
                let around = king_attacks(their_king).with(their_king);
                let zone = around | around.shift_forward(them);
                let mut weak = 0;
                let mut checks = 0;
                for sq in Square::all() {
                    if zone.contains(sq) && men(sq, us).any() && men(sq, them).is_empty() {
                        weak += 1;
                    }
                    if board.by_color(us).contains(sq) || pawn_guarded(sq) {
                        continue;
                    }
                    for from in men(sq, us) {
                        let role = board.role_at(from).unwrap();
                        let (diagonal, line) = (
                            bishop_attacks(sq, occupied).contains(their_king),
                            rook_attacks(sq, occupied).contains(their_king),
                        );
                        checks += i32::from(match role {
                            Role::Knight => knight_attacks(sq).contains(their_king),
                            Role::Bishop => diagonal,
                            Role::Rook => line,
                            Role::Queen => diagonal || line,
                            _ => false,
                        });
                    }
                }
                let hits = trace.king_danger[us.index()].hits;
                assert_eq!(hits[KS_WEAK], weak, "weak squares, {:?}: {}", us, pos.fen());
                assert_eq!(
                    hits[KS_CHECK],
                    checks,
                    "safe checks, {:?}: {}",
                    us,
                    pos.fen()
                );
                weak_seen += weak;
                checks_seen += checks;
            }
        }
        assert!(
            weak_seen > 1000 && checks_seen > 1000,
            "{weak_seen} {checks_seen}"
        );
    }

    #[test]
    fn every_evaluation_weight_moves_the_evaluation_and_no_search_constant_does() {
        let positions = sample_positions();
        let base = Evaluator::new(&Params::default());
        let scores: Vec<i32> = positions.iter().map(|p| base.evaluate(p)).collect();
        for (i, spec) in PARAMS.iter().enumerate() {
            let mut params = Params::default();
            // As far as the range allows, so that a small weight's change survives rounding.
            let moved = if spec.max - spec.default >= spec.default - spec.min {
                spec.max
            } else {
                spec.min
            };
            params.set(spec.name, moved.into()).unwrap();
            let e = Evaluator::new(&params);
            let changed = positions
                .iter()
                .zip(&scores)
                .any(|(p, &s)| e.evaluate(p) != s);
            assert_eq!(changed, ENTERS[i].is_some(), "{}", spec.name);
        }
    }

    #[test]
    fn piece_square_tables_are_found_by_their_names() {
        let names = ["pawn", "knight", "bishop", "rook", "queen", "king"];
        for (role, tables) in names.iter().zip(PSQ_TABLES) {
            let ranks: Vec<u32> = if *role == "pawn" {
                (3..=7).collect()
            } else {
                [1, 2, 3, 5, 6, 7, 8].into()
            };
            for (phase, base) in ["mg", "eg"].iter().zip(tables) {
                let mut expected: Vec<String> = ranks
                    .iter()
                    .map(|n| format!("{role}_rank{n}_{phase}"))
                    .collect();
                expected.extend(["bg", "cf", "de"].map(|f| format!("{role}_file_{f}_{phase}")));
                let found: Vec<&str> = PARAMS[base..base + expected.len()]
                    .iter()
                    .map(|spec| spec.name)
                    .collect();
                assert_eq!(found, expected);
            }
        }
        // Squares are seen from White's side: a knight on g1 is on its first rank and the
        // b/g-files, one on b8 on its eighth.
        let g1 = piece_square_terms(Role::Knight, Square::G1);
        let b8 = piece_square_terms(Role::Knight, Square::B8);
        let named = |t: &ArrayVec<(usize, i32), 8>| {
            t.iter()
                .map(|&(i, n)| (PARAMS[i].name, n))
                .collect::<Vec<_>>()
        };
        assert!(named(&g1).contains(&("knight_rank1_mg", 1)));
        assert!(named(&g1).contains(&("knight_file_bg_eg", 1)));
        assert!(named(&b8).contains(&("knight_rank8_mg", 1)));
        // On its fourth rank and the a-file only the knight's material counts.
        let a4 = piece_square_terms(Role::Knight, Square::from_coords(File::A, Rank::FOURTH));
        assert_eq!(named(&a4), [("knight_mg", 1), ("knight_eg", 1)]);
    }

    #[test]
    fn passed_pawns_grow_with_rank() {
        let e = Evaluator::new(&Params::default());
        let r4 = Position::from_fen("4k3/8/8/8/4P3/8/8/4K3 w - - 0 1").unwrap();
        let r6 = Position::from_fen("4k3/8/4P3/8/8/8/8/4K3 w - - 0 1").unwrap();
        assert!(e.evaluate(&r6) > e.evaluate(&r4));
    }

    /// White's count minus Black's of the parameter `name` in `fen`'s evaluation.
    fn coefficient(fen: &str, name: &str) -> i32 {
        let pos = Position::from_fen(fen).unwrap();
        let (_, trace) = Evaluator::new(&Params::default()).trace(&pos);
        trace.coefficients[param(name)]
    }

    #[test]
    fn outposts_need_a_defending_pawn_and_no_enemy_pawn_that_can_chase() {
        // Ne5 defended by d4, no black pawn on the d- or f-file to drive it away.
        let outpost = "4k3/pp4pp/8/4N3/3P4/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(outpost, "knight_outpost_mg"), 1);
        // A black pawn on f7 can come to f6 and attack it.
        let chased = "4k3/pp3ppp/8/4N3/3P4/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(chased, "knight_outpost_mg"), 0);
        // No pawn defends it.
        let loose = "4k3/pp4pp/8/4N3/8/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(loose, "knight_outpost_mg"), 0);
        // The same for Black, mirrored: Nd4 defended by e5.
        let black = "4k3/8/8/4p3/3n4/8/PP4PP/4K3 w - - 0 1";
        assert_eq!(coefficient(black, "knight_outpost_eg"), -1);
        assert_eq!(
            coefficient("4k3/pp4pp/8/4B3/3P4/8/8/4K3 w - - 0 1", "bishop_outpost_mg"),
            1
        );
    }

    #[test]
    fn backward_pawns_are_behind_their_neighbours_and_held_by_an_enemy_pawn() {
        // d3 has its neighbours on c4 and e4 ahead of it; d4 is held by the black pawn on e5.
        let backward = "4k3/8/8/4p3/2P1P3/3P4/8/4K3 w - - 0 1";
        assert_eq!(coefficient(backward, "backward_mg"), -1);
        // Without the black pawn d3 may advance to its neighbours.
        let free = "4k3/8/8/8/2P1P3/3P4/8/4K3 w - - 0 1";
        assert_eq!(coefficient(free, "backward_mg"), 0);
    }

    #[test]
    fn safe_checks_count_squares_not_guarded_by_enemy_pawns() {
        // Against the king on e8: the rook on a1 checks from a8, the knight on e4 from d6 and
        // f6.
        let open = "4k3/8/8/8/4N3/8/8/R3K3 w - - 0 1";
        assert_eq!(coefficient(open, "safe_check_mg"), 3);
        // A pawn on e7 guards d6 and f6: only the rook's check is safe.
        let guarded = "4k3/4p3/8/8/4N3/8/8/R3K3 w - - 0 1";
        assert_eq!(coefficient(guarded, "safe_check_mg"), 1);
    }

    #[test]
    fn free_passed_pawns_and_pawn_storms() {
        let free = "3k4/8/8/4P3/8/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(free, "passed_free_eg"), 1);
        let blocked_later = "3k4/4n3/8/4P3/8/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(blocked_later, "passed_free_eg"), 0);
        // Black pawns on f3 and g4 against the white king on g1; h5 is not yet storming.
        let storm = "4k3/8/8/7p/6p1/5p2/8/6K1 w - - 0 1";
        assert_eq!(coefficient(storm, "pawn_storm_mg"), -2);
    }

    #[test]
    fn hanging_pieces_are_attacked_and_undefended() {
        // The rook on d1 attacks the knight on d5, which nothing defends.
        let hanging = "4k3/8/8/3n4/8/8/8/3RK3 w - - 0 1";
        assert_eq!(coefficient(hanging, "hanging_mg"), 1);
        // The pawn on e6 defends it.
        let defended = "4k3/8/4p3/3n4/8/8/8/3RK3 w - - 0 1";
        assert_eq!(coefficient(defended, "hanging_mg"), 0);
        // Defended by a piece, not only by pawns: the rook on d8.
        let by_rook = "3rk3/8/8/3n4/8/8/8/3RK3 w - - 0 1";
        assert_eq!(coefficient(by_rook, "hanging_mg"), 0);
        // Black's knight on c3 attacks the bishop on e2, which the king defends, and the rook
        // on a2, which nothing does.
        let black = "4k3/8/8/8/8/2n5/R3B3/4K3 w - - 0 1";
        assert_eq!(coefficient(black, "hanging_eg"), -1);
    }

    #[test]
    fn pawn_pushes_threaten_pieces_from_squares_no_pawn_guards() {
        // d2-d3 would attack the knight on c4.
        let push = "4k3/8/8/8/2n5/8/3P4/4K3 w - - 0 1";
        assert_eq!(coefficient(push, "threat_push_mg"), 1);
        // The pawn on e4 guards d3; d2-d4 attacks nothing.
        let guarded = "4k3/8/8/8/2n1p3/8/3P4/4K3 w - - 0 1";
        assert_eq!(coefficient(guarded, "threat_push_mg"), 0);
        // d2-d4 in one move would attack the knight on c5.
        let double = "4k3/8/8/2n5/8/8/3P4/4K3 w - - 0 1";
        assert_eq!(coefficient(double, "threat_push_mg"), 1);
    }

    #[test]
    fn rooks_on_the_seventh_need_a_target_and_kings_seek_their_pawns() {
        assert_eq!(
            coefficient("4k3/R7/8/8/8/8/8/4K3 w - - 0 1", "rook_seventh_target_eg"),
            1
        );
        // The king has left the eighth rank and there are no pawns on the seventh.
        assert_eq!(
            coefficient("8/R7/4k3/8/8/8/8/4K3 w - - 0 1", "rook_seventh_target_eg"),
            0
        );
        assert_eq!(
            coefficient("4k3/8/8/8/8/8/r7/4K3 w - - 0 1", "rook_seventh_target_mg"),
            -1
        );
        // The white king on e1 is four squares from its only pawn, on a2.
        assert_eq!(
            coefficient("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "king_pawn_dist_eg"),
            -4
        );
        assert_eq!(
            coefficient("4k3/8/8/8/3P4/3N4/8/4K3 w - - 0 1", "minor_behind_pawn_mg"),
            1
        );
    }

    #[test]
    fn bad_bishops_count_own_pawns_on_their_colour() {
        // Bc1 is dark-squared, as are c3 and d4 (rammed by d5); f3 is light.
        let white = "4k3/8/8/3p4/3P4/2P2P2/8/2B1K3 w - - 0 1";
        assert_eq!(coefficient(white, "bishop_pawns_eg"), -2);
        assert_eq!(coefficient(white, "bishop_rammed_eg"), -1);
        // Black's light-squared bishop with c6 and d5 on its colour, d5 rammed by d4.
        let black = "2b1k3/8/2p5/3p4/3P4/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(black, "bishop_pawns_mg"), 2);
        assert_eq!(coefficient(black, "bishop_rammed_mg"), 1);
    }

    #[test]
    fn long_diagonals_are_seen_through_pieces_but_not_pawns() {
        assert_eq!(
            coefficient("4k3/8/8/8/8/8/1B6/4K3 w - - 0 1", "long_diagonal_mg"),
            1
        );
        assert_eq!(
            coefficient("4k3/8/8/8/8/2n5/1B6/4K3 w - - 0 1", "long_diagonal_mg"),
            1
        );
        assert_eq!(
            coefficient("4k3/8/8/8/8/2P5/1B6/4K3 w - - 0 1", "long_diagonal_mg"),
            0
        );
        assert_eq!(
            coefficient("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", "long_diagonal_mg"),
            0
        );
    }

    #[test]
    fn a_king_on_a_pawnless_flank_and_knights_and_rooks_by_pawn_count() {
        // The white king's flank (a-d) has the a-pawn; the black king's (e-h) has none.
        let flank = "6k1/8/8/8/8/8/P7/1K6 w - - 0 1";
        assert_eq!(coefficient(flank, "king_flank_pawnless_eg"), 1);
        // A king on the h-file looks at f to h only: the e-pawn is not on its flank (but is
        // on the black king's, c to f).
        let edge = "4k3/8/8/8/8/8/4P3/7K w - - 0 1";
        assert_eq!(coefficient(edge, "king_flank_pawnless_mg"), -1);
        // Six white pawns: one above five for the knight and for the rook.
        let white = "4k3/8/8/8/8/8/PPPPPP2/1N2K2R w - - 0 1";
        assert_eq!(coefficient(white, "knight_pawns_mg"), 1);
        assert_eq!(coefficient(white, "rook_pawns_eg"), 1);
        // Two black pawns: three below five each.
        let black = "rn2k3/pp6/8/8/8/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(black, "knight_pawns_eg"), 3);
        assert_eq!(coefficient(black, "rook_pawns_mg"), 3);
    }

    #[test]
    fn undefended_pawns_and_pieces_next_to_the_king_are_threats() {
        // The white king on e3 attacks the pawn on d2, which nothing defends.
        let king = "4k3/8/8/8/8/4K3/3p4/8 w - - 0 1";
        assert_eq!(coefficient(king, "threat_king_eg"), 1);
        assert_eq!(coefficient(king, "pawn_hanging_eg"), 1);
        // The rook on d8 defends it.
        let defended = "3rk3/8/8/8/8/4K3/3p4/8 w - - 0 1";
        assert_eq!(coefficient(defended, "threat_king_mg"), 0);
        assert_eq!(coefficient(defended, "pawn_hanging_mg"), 0);
        // The rook on d1 attacks the loose pawn on d5 from afar.
        let rook = "4k3/8/8/3p4/8/8/8/3RK3 w - - 0 1";
        assert_eq!(coefficient(rook, "pawn_hanging_mg"), 1);
        assert_eq!(coefficient(rook, "threat_king_mg"), 0);
        assert_eq!(coefficient(rook, "rook_queen_file_mg"), 0);
        assert_eq!(
            coefficient("3qk3/8/8/8/8/8/8/3RK3 w - - 0 1", "rook_queen_file_mg"),
            1
        );
    }

    #[test]
    fn space_counts_safe_central_squares_and_those_behind_pawns_twice() {
        // With d4 and e4: White's 12 squares less the two pawns, plus d3, e3, d2 and e2
        // behind them; Black's 12 less c5 to f5, which the pawns attack.
        let centre = "4k3/8/8/8/3PP3/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(centre, "space_mg"), 14 - 8);
        assert_eq!(coefficient("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "space_mg"), 0);
        // A phalanx on the fifth: connected, three ranks beyond the second, twice.
        let phalanx = "4k3/8/8/3PP3/8/8/8/4K3 w - - 0 1";
        assert_eq!(coefficient(phalanx, "connected_mg"), 2);
        assert_eq!(coefficient(phalanx, "connected_rank_eg"), 6);
    }
}
