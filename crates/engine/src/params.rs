//! Every tunable number of staunton, declared once.
//!
//! The `declare_params!` table below is the only place a parameter exists. From it come the
//! [`Params`] struct and its defaults, the [`PARAMS`] specs (name, default, range, SPSA step),
//! the UCI `option` lines, `setoption` by name, TOML load/save, the fishtest SPSA lines and the
//! JSON dump. Adding a parameter is one line in the table; a test keeps every list in sync.
//!
//! All values are integers. Evaluation weights are centipawns, split into middlegame (`_mg`)
//! and endgame (`_eg`) halves that the evaluation tapers between. Search constants say their
//! unit in their doc line. Piece values are shown in pawns (1.00, 3.25 ...) where users read
//! them ([`Params::describe`]).

use std::fmt::Write as _;
use std::path::Path;

use arbiter_uci::OptionDecl;
use serde::{Deserialize, Serialize};

/// What is known about one parameter besides its current value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    /// SPSA's final perturbation size (fishtest's `c_end`).
    pub c_end: f64,
    /// SPSA's final learning rate (fishtest's `r_end`).
    pub r_end: f64,
    pub doc: &'static str,
}

impl ParamSpec {
    /// Piece values, which users read in pawns.
    pub fn is_piece_value(&self) -> bool {
        MATERIAL
            .iter()
            .any(|(mg, eg)| *mg == self.name || *eg == self.name)
    }
}

/// A parameter name or value that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown parameter {0:?}")]
    Unknown(String),
    #[error("parameter {name}: expected an integer, found {text:?}")]
    NotANumber { name: String, text: String },
    #[error("parameter {name}: {value} is outside its range {min}..={max}")]
    OutOfRange {
        name: String,
        value: i64,
        min: i32,
        max: i32,
    },
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

macro_rules! declare_params {
    ($( $(#[doc = $doc:literal])+ $field:ident = $default:expr, $min:expr, $max:expr, $c_end:expr, $r_end:expr; )*) => {
        /// The values of every parameter; see the module docs. Field names are the parameter
        /// names used by UCI, TOML, JSON and SPSA.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct Params {
            $( $(#[doc = $doc])+ pub $field: i32, )*
        }

        impl Default for Params {
            fn default() -> Params {
                Params { $( $field: $default, )* }
            }
        }

        /// The spec of every parameter, in declaration order.
        pub const PARAMS: &[ParamSpec] = &[
            $( ParamSpec {
                name: stringify!($field),
                default: $default,
                min: $min,
                max: $max,
                c_end: $c_end,
                r_end: $r_end,
                doc: concat!($($doc),+),
            }, )*
        ];

        /// How many parameters there are.
        pub const PARAM_COUNT: usize = PARAMS.len();

        impl Params {
            /// The values in declaration order (the order of [`PARAMS`]).
            pub fn values(&self) -> [i32; PARAM_COUNT] {
                [ $( self.$field, )* ]
            }

            fn slots_mut(&mut self) -> [&mut i32; PARAM_COUNT] {
                [ $( &mut self.$field, )* ]
            }
        }
    };
}

// name = default, min, max, c_end, r_end;
declare_params! {
    // ---- Evaluation weights (centipawns unless said). All of them Texel-fitted by arbiter
    // (`arbiter tune texel configs/texel-scored.toml`: 482,681 positions of 6000 datagen games
    // at 8000 nodes, each labelled half by its result and half by staunton's search score;
    // the fourth such fit, crates/engine/CHANGELOG.md). The evaluations before it: the third
    // fit `configs/staunton-pst-fit.toml`, the second `configs/staunton-second-fit.toml`, the
    // first `configs/staunton-first-fit.toml`, the classical weights with Texel piece values
    // `configs/staunton-pieces-only.toml`, the classical piece values
    // `configs/staunton-classical.toml`.
    /// Pawn value, middlegame.
    pawn_mg = 73, 50, 200, 5.0, 0.002;
    /// Pawn value, endgame.
    pawn_eg = 90, 50, 250, 5.0, 0.002;
    /// Knight value, middlegame.
    knight_mg = 393, 200, 500, 12.0, 0.002;
    /// Knight value, endgame.
    knight_eg = 342, 200, 500, 12.0, 0.002;
    /// Bishop value, middlegame.
    bishop_mg = 443, 200, 500, 12.0, 0.002;
    /// Bishop value, endgame.
    bishop_eg = 381, 200, 500, 12.0, 0.002;
    /// Rook value, middlegame.
    rook_mg = 535, 300, 750, 18.0, 0.002;
    /// Rook value, endgame.
    rook_eg = 596, 300, 800, 18.0, 0.002;
    /// Queen value, middlegame.
    queen_mg = 1400, 600, 1400, 30.0, 0.002;
    /// Queen value, endgame.
    queen_eg = 925, 600, 1400, 30.0, 0.002;

    // ---- Piece-square tables, each the sum of a rank table (ranks counted from the piece's
    // own side) and a file table mirrored about the centre. Each table has one entry fixed
    // at 0, so that the material value holds the level: the fourth rank (the second for
    // pawns, the king's level cancels between the sides) and the a- and h-files.
    /// Pawn on its third rank, middlegame.
    pawn_rank3_mg = 1, -60, 200, 2.0, 0.002;
    /// Pawn on its fourth rank, middlegame.
    pawn_rank4_mg = -1, -60, 200, 2.0, 0.002;
    /// Pawn on its fifth rank, middlegame.
    pawn_rank5_mg = -2, -60, 200, 2.0, 0.002;
    /// Pawn on its sixth rank, middlegame.
    pawn_rank6_mg = 1, -60, 200, 2.0, 0.002;
    /// Pawn on its seventh rank, middlegame.
    pawn_rank7_mg = 16, -60, 200, 2.0, 0.002;
    /// Pawn on the b- or g-file, middlegame.
    pawn_file_bg_mg = 2, -80, 80, 2.0, 0.002;
    /// Pawn on the c- or f-file, middlegame.
    pawn_file_cf_mg = 12, -80, 80, 2.0, 0.002;
    /// Pawn on the d- or e-file, middlegame.
    pawn_file_de_mg = 12, -80, 80, 2.0, 0.002;
    /// Pawn on its third rank, endgame.
    pawn_rank3_eg = -1, -60, 200, 2.0, 0.002;
    /// Pawn on its fourth rank, endgame.
    pawn_rank4_eg = 3, -60, 200, 2.0, 0.002;
    /// Pawn on its fifth rank, endgame.
    pawn_rank5_eg = 13, -60, 200, 2.0, 0.002;
    /// Pawn on its sixth rank, endgame.
    pawn_rank6_eg = 30, -60, 200, 2.0, 0.002;
    /// Pawn on its seventh rank, endgame.
    pawn_rank7_eg = 27, -60, 200, 2.0, 0.002;
    /// Pawn on the b- or g-file, endgame.
    pawn_file_bg_eg = -8, -80, 80, 2.0, 0.002;
    /// Pawn on the c- or f-file, endgame.
    pawn_file_cf_eg = -12, -80, 80, 2.0, 0.002;
    /// Pawn on the d- or e-file, endgame.
    pawn_file_de_eg = -12, -80, 80, 2.0, 0.002;
    /// Bonus for a pawn that has left its start square, per step of file centrality (d/e = 3).
    pawn_center_mg = 0, 0, 30, 1.0, 0.002;

    /// Knight on its first rank, middlegame.
    knight_rank1_mg = -43, -150, 150, 2.0, 0.002;
    /// Knight on its second rank, middlegame.
    knight_rank2_mg = -24, -150, 150, 2.0, 0.002;
    /// Knight on its third rank, middlegame.
    knight_rank3_mg = -17, -150, 150, 2.0, 0.002;
    /// Knight on its fifth rank, middlegame.
    knight_rank5_mg = 2, -150, 150, 2.0, 0.002;
    /// Knight on its sixth rank, middlegame.
    knight_rank6_mg = -8, -150, 150, 2.0, 0.002;
    /// Knight on its seventh rank, middlegame.
    knight_rank7_mg = -23, -150, 150, 2.0, 0.002;
    /// Knight on its eighth rank, middlegame.
    knight_rank8_mg = -150, -150, 150, 2.0, 0.002;
    /// Knight on the b- or g-file, middlegame.
    knight_file_bg_mg = 11, -80, 80, 2.0, 0.002;
    /// Knight on the c- or f-file, middlegame.
    knight_file_cf_mg = 20, -80, 80, 2.0, 0.002;
    /// Knight on the d- or e-file, middlegame.
    knight_file_de_mg = 25, -80, 80, 2.0, 0.002;
    /// Knight on its first rank, endgame.
    knight_rank1_eg = -25, -150, 150, 2.0, 0.002;
    /// Knight on its second rank, endgame.
    knight_rank2_eg = -27, -150, 150, 2.0, 0.002;
    /// Knight on its third rank, endgame.
    knight_rank3_eg = -15, -150, 150, 2.0, 0.002;
    /// Knight on its fifth rank, endgame.
    knight_rank5_eg = -1, -150, 150, 2.0, 0.002;
    /// Knight on its sixth rank, endgame.
    knight_rank6_eg = 4, -150, 150, 2.0, 0.002;
    /// Knight on its seventh rank, endgame.
    knight_rank7_eg = 3, -150, 150, 2.0, 0.002;
    /// Knight on its eighth rank, endgame.
    knight_rank8_eg = 9, -150, 150, 2.0, 0.002;
    /// Knight on the b- or g-file, endgame.
    knight_file_bg_eg = 13, -80, 80, 2.0, 0.002;
    /// Knight on the c- or f-file, endgame.
    knight_file_cf_eg = 14, -80, 80, 2.0, 0.002;
    /// Knight on the d- or e-file, endgame.
    knight_file_de_eg = 27, -80, 80, 2.0, 0.002;

    /// Bishop on its first rank, middlegame.
    bishop_rank1_mg = -29, -150, 150, 2.0, 0.002;
    /// Bishop on its second rank, middlegame.
    bishop_rank2_mg = -12, -150, 150, 2.0, 0.002;
    /// Bishop on its third rank, middlegame.
    bishop_rank3_mg = -11, -150, 150, 2.0, 0.002;
    /// Bishop on its fifth rank, middlegame.
    bishop_rank5_mg = 3, -150, 150, 2.0, 0.002;
    /// Bishop on its sixth rank, middlegame.
    bishop_rank6_mg = -13, -150, 150, 2.0, 0.002;
    /// Bishop on its seventh rank, middlegame.
    bishop_rank7_mg = -47, -150, 150, 2.0, 0.002;
    /// Bishop on its eighth rank, middlegame.
    bishop_rank8_mg = -60, -150, 150, 2.0, 0.002;
    /// Bishop on the b- or g-file, middlegame.
    bishop_file_bg_mg = -5, -80, 80, 2.0, 0.002;
    /// Bishop on the c- or f-file, middlegame.
    bishop_file_cf_mg = 2, -80, 80, 2.0, 0.002;
    /// Bishop on the d- or e-file, middlegame.
    bishop_file_de_mg = 3, -80, 80, 2.0, 0.002;
    /// Bishop on its first rank, endgame.
    bishop_rank1_eg = -6, -150, 150, 2.0, 0.002;
    /// Bishop on its second rank, endgame.
    bishop_rank2_eg = -7, -150, 150, 2.0, 0.002;
    /// Bishop on its third rank, endgame.
    bishop_rank3_eg = -2, -150, 150, 2.0, 0.002;
    /// Bishop on its fifth rank, endgame.
    bishop_rank5_eg = -1, -150, 150, 2.0, 0.002;
    /// Bishop on its sixth rank, endgame.
    bishop_rank6_eg = -1, -150, 150, 2.0, 0.002;
    /// Bishop on its seventh rank, endgame.
    bishop_rank7_eg = 16, -150, 150, 2.0, 0.002;
    /// Bishop on its eighth rank, endgame.
    bishop_rank8_eg = 16, -150, 150, 2.0, 0.002;
    /// Bishop on the b- or g-file, endgame.
    bishop_file_bg_eg = 9, -80, 80, 2.0, 0.002;
    /// Bishop on the c- or f-file, endgame.
    bishop_file_cf_eg = 6, -80, 80, 2.0, 0.002;
    /// Bishop on the d- or e-file, endgame.
    bishop_file_de_eg = 8, -80, 80, 2.0, 0.002;

    /// Rook on its first rank, middlegame.
    rook_rank1_mg = 11, -150, 150, 2.0, 0.002;
    /// Rook on its second rank, middlegame.
    rook_rank2_mg = -8, -150, 150, 2.0, 0.002;
    /// Rook on its third rank, middlegame.
    rook_rank3_mg = 1, -150, 150, 2.0, 0.002;
    /// Rook on its fifth rank, middlegame.
    rook_rank5_mg = 22, -150, 150, 2.0, 0.002;
    /// Rook on its sixth rank, middlegame.
    rook_rank6_mg = 43, -150, 150, 2.0, 0.002;
    /// Rook on its seventh rank, middlegame.
    rook_rank7_mg = 42, -150, 150, 2.0, 0.002;
    /// Rook on its eighth rank, middlegame.
    rook_rank8_mg = 69, -150, 150, 2.0, 0.002;
    /// Rook on the b- or g-file, middlegame.
    rook_file_bg_mg = 5, -80, 80, 2.0, 0.002;
    /// Rook on the c- or f-file, middlegame.
    rook_file_cf_mg = 29, -80, 80, 2.0, 0.002;
    /// Rook on the d- or e-file, middlegame.
    rook_file_de_mg = 32, -80, 80, 2.0, 0.002;
    /// Rook on its first rank, endgame.
    rook_rank1_eg = -13, -150, 150, 2.0, 0.002;
    /// Rook on its second rank, endgame.
    rook_rank2_eg = -12, -150, 150, 2.0, 0.002;
    /// Rook on its third rank, endgame.
    rook_rank3_eg = -14, -150, 150, 2.0, 0.002;
    /// Rook on its fifth rank, endgame.
    rook_rank5_eg = 3, -150, 150, 2.0, 0.002;
    /// Rook on its sixth rank, endgame.
    rook_rank6_eg = -3, -150, 150, 2.0, 0.002;
    /// Rook on its seventh rank, endgame.
    rook_rank7_eg = -2, -150, 150, 2.0, 0.002;
    /// Rook on its eighth rank, endgame.
    rook_rank8_eg = -6, -150, 150, 2.0, 0.002;
    /// Rook on the b- or g-file, endgame.
    rook_file_bg_eg = 1, -80, 80, 2.0, 0.002;
    /// Rook on the c- or f-file, endgame.
    rook_file_cf_eg = -9, -80, 80, 2.0, 0.002;
    /// Rook on the d- or e-file, endgame.
    rook_file_de_eg = -11, -80, 80, 2.0, 0.002;

    /// Queen on its first rank, middlegame.
    queen_rank1_mg = 22, -150, 150, 2.0, 0.002;
    /// Queen on its second rank, middlegame.
    queen_rank2_mg = 17, -150, 150, 2.0, 0.002;
    /// Queen on its third rank, middlegame.
    queen_rank3_mg = 5, -150, 150, 2.0, 0.002;
    /// Queen on its fifth rank, middlegame.
    queen_rank5_mg = -1, -150, 150, 2.0, 0.002;
    /// Queen on its sixth rank, middlegame.
    queen_rank6_mg = -14, -150, 150, 2.0, 0.002;
    /// Queen on its seventh rank, middlegame.
    queen_rank7_mg = -35, -150, 150, 2.0, 0.002;
    /// Queen on its eighth rank, middlegame.
    queen_rank8_mg = -39, -150, 150, 2.0, 0.002;
    /// Queen on the b- or g-file, middlegame.
    queen_file_bg_mg = -6, -80, 80, 2.0, 0.002;
    /// Queen on the c- or f-file, middlegame.
    queen_file_cf_mg = -3, -80, 80, 2.0, 0.002;
    /// Queen on the d- or e-file, middlegame.
    queen_file_de_mg = 1, -80, 80, 2.0, 0.002;
    /// Queen on its first rank, endgame.
    queen_rank1_eg = -99, -150, 150, 2.0, 0.002;
    /// Queen on its second rank, endgame.
    queen_rank2_eg = -60, -150, 150, 2.0, 0.002;
    /// Queen on its third rank, endgame.
    queen_rank3_eg = -21, -150, 150, 2.0, 0.002;
    /// Queen on its fifth rank, endgame.
    queen_rank5_eg = 5, -150, 150, 2.0, 0.002;
    /// Queen on its sixth rank, endgame.
    queen_rank6_eg = 12, -150, 150, 2.0, 0.002;
    /// Queen on its seventh rank, endgame.
    queen_rank7_eg = 18, -150, 150, 2.0, 0.002;
    /// Queen on its eighth rank, endgame.
    queen_rank8_eg = 15, -150, 150, 2.0, 0.002;
    /// Queen on the b- or g-file, endgame.
    queen_file_bg_eg = 22, -80, 80, 2.0, 0.002;
    /// Queen on the c- or f-file, endgame.
    queen_file_cf_eg = 18, -80, 80, 2.0, 0.002;
    /// Queen on the d- or e-file, endgame.
    queen_file_de_eg = 22, -80, 80, 2.0, 0.002;

    /// King on its first rank, middlegame.
    king_rank1_mg = 24, -150, 150, 2.0, 0.002;
    /// King on its second rank, middlegame.
    king_rank2_mg = 7, -150, 150, 2.0, 0.002;
    /// King on its third rank, middlegame.
    king_rank3_mg = -4, -150, 150, 2.0, 0.002;
    /// King on its fifth rank, middlegame.
    king_rank5_mg = 36, -150, 150, 2.0, 0.002;
    /// King on its sixth rank, middlegame.
    king_rank6_mg = 68, -150, 150, 2.0, 0.002;
    /// King on its seventh rank, middlegame.
    king_rank7_mg = 74, -150, 150, 2.0, 0.002;
    /// King on its eighth rank, middlegame.
    king_rank8_mg = 109, -150, 150, 2.0, 0.002;
    /// King on the b- or g-file, middlegame.
    king_file_bg_mg = 25, -80, 80, 2.0, 0.002;
    /// King on the c- or f-file, middlegame.
    king_file_cf_mg = -12, -80, 80, 2.0, 0.002;
    /// King on the d- or e-file, middlegame.
    king_file_de_mg = -14, -80, 80, 2.0, 0.002;
    /// King on its first rank, endgame.
    king_rank1_eg = -8, -150, 150, 2.0, 0.002;
    /// King on its second rank, endgame.
    king_rank2_eg = 11, -150, 150, 2.0, 0.002;
    /// King on its third rank, endgame.
    king_rank3_eg = 9, -150, 150, 2.0, 0.002;
    /// King on its fifth rank, endgame.
    king_rank5_eg = 1, -150, 150, 2.0, 0.002;
    /// King on its sixth rank, endgame.
    king_rank6_eg = 17, -150, 150, 2.0, 0.002;
    /// King on its seventh rank, endgame.
    king_rank7_eg = 10, -150, 150, 2.0, 0.002;
    /// King on its eighth rank, endgame.
    king_rank8_eg = -45, -150, 150, 2.0, 0.002;
    /// King on the b- or g-file, endgame.
    king_file_bg_eg = 0, -80, 80, 2.0, 0.002;
    /// King on the c- or f-file, endgame.
    king_file_cf_eg = 15, -80, 80, 2.0, 0.002;
    /// King on the d- or e-file, endgame.
    king_file_de_eg = 16, -80, 80, 2.0, 0.002;

    // ---- Mobility: per safe square reached, relative to a typical count.
    /// Knight mobility, middlegame.
    knight_mob_mg = 7, 0, 20, 1.0, 0.002;
    /// Knight mobility, endgame.
    knight_mob_eg = 3, 0, 20, 1.0, 0.002;
    /// Bishop mobility, middlegame.
    bishop_mob_mg = 6, 0, 20, 1.0, 0.002;
    /// Bishop mobility, endgame.
    bishop_mob_eg = 3, 0, 20, 1.0, 0.002;
    /// Rook mobility, middlegame.
    rook_mob_mg = 5, 0, 20, 1.0, 0.002;
    /// Rook mobility, endgame.
    rook_mob_eg = 1, 0, 20, 1.0, 0.002;
    /// Queen mobility, middlegame.
    queen_mob_mg = 3, 0, 10, 0.5, 0.002;
    /// Queen mobility, endgame.
    queen_mob_eg = 0, 0, 10, 0.5, 0.002;

    // ---- Pawn structure (penalties are subtracted).
    /// Doubled pawn penalty, middlegame.
    doubled_mg = 1, 0, 50, 2.0, 0.002;
    /// Doubled pawn penalty, endgame.
    doubled_eg = 0, 0, 60, 2.0, 0.002;
    /// Isolated pawn penalty, middlegame.
    isolated_mg = 10, 0, 50, 2.0, 0.002;
    /// Isolated pawn penalty, endgame.
    isolated_eg = 15, 0, 50, 2.0, 0.002;
    /// Pawn defended by a pawn or standing beside one, middlegame.
    connected_mg = 8, 0, 30, 1.0, 0.002;
    /// Pawn defended by a pawn or standing beside one, endgame.
    connected_eg = 0, 0, 30, 1.0, 0.002;
    /// Connected pawn, middlegame: per rank it has advanced beyond its second, on top of
    /// `connected_mg` (a chain or phalanx near promotion is worth more than one at home).
    connected_rank_mg = 3, 0, 30, 1.0, 0.002;
    /// Connected pawn, endgame: per rank beyond the second.
    connected_rank_eg = 2, 0, 30, 1.0, 0.002;
    /// Passed pawn on its relative rank 2, middlegame.
    passed_r2_mg = 0, 0, 50, 2.0, 0.002;
    /// Passed pawn on rank 3, middlegame.
    passed_r3_mg = 2, 0, 60, 2.0, 0.002;
    /// Passed pawn on rank 4, middlegame.
    passed_r4_mg = 8, 0, 80, 3.0, 0.002;
    /// Passed pawn on rank 5, middlegame.
    passed_r5_mg = 19, 0, 100, 4.0, 0.002;
    /// Passed pawn on rank 6, middlegame.
    passed_r6_mg = 77, 0, 150, 5.0, 0.002;
    /// Passed pawn on rank 7, middlegame.
    passed_r7_mg = 170, 0, 200, 6.0, 0.002;
    /// Passed pawn on rank 2, endgame.
    passed_r2_eg = 2, 0, 50, 2.0, 0.002;
    /// Passed pawn on rank 3, endgame.
    passed_r3_eg = 10, 0, 80, 3.0, 0.002;
    /// Passed pawn on rank 4, endgame.
    passed_r4_eg = 36, 0, 120, 4.0, 0.002;
    /// Passed pawn on rank 5, endgame.
    passed_r5_eg = 64, 0, 160, 5.0, 0.002;
    /// Passed pawn on rank 6, endgame.
    passed_r6_eg = 89, 0, 220, 6.0, 0.002;
    /// Passed pawn on rank 7, endgame.
    passed_r7_eg = 132, 0, 300, 8.0, 0.002;
    /// Passed pawn, endgame: per square the enemy king is farther than ours from its stop square.
    passed_king_dist_eg = 16, 0, 30, 1.0, 0.002;
    /// Passed pawn whose stop square is occupied, endgame penalty.
    passed_blocked_eg = 29, 0, 60, 2.0, 0.002;
    /// Passed pawn with nothing on the squares to its promotion, middlegame.
    passed_free_mg = 0, 0, 100, 3.0, 0.002;
    /// Passed pawn with nothing on the squares to its promotion, endgame.
    passed_free_eg = 23, 0, 150, 4.0, 0.002;
    /// Backward pawn (no own pawn beside or behind it on the files next to it, its stop square
    /// held by an enemy pawn) penalty, middlegame.
    backward_mg = 1, 0, 50, 2.0, 0.002;
    /// Backward pawn penalty, endgame.
    backward_eg = 13, 0, 50, 2.0, 0.002;
    /// King, endgame: penalty per square between it and its nearest own pawn.
    king_pawn_dist_eg = 7, 0, 30, 1.0, 0.002;

    // ---- Pieces.
    /// Bishop pair, middlegame.
    bishop_pair_mg = 34, 0, 100, 4.0, 0.002;
    /// Bishop pair, endgame.
    bishop_pair_eg = 33, 0, 120, 4.0, 0.002;
    /// Rook on a file without pawns, middlegame.
    rook_open_mg = 38, 0, 80, 3.0, 0.002;
    /// Rook on a file without pawns, endgame.
    rook_open_eg = 0, 0, 60, 2.0, 0.002;
    /// Rook on a file without own pawns, middlegame.
    rook_semiopen_mg = 21, 0, 60, 2.0, 0.002;
    /// Rook on a file without own pawns, endgame.
    rook_semiopen_eg = 4, 0, 40, 2.0, 0.002;
    /// A pawn attacking an enemy piece, middlegame.
    threat_pawn_mg = 56, 0, 120, 4.0, 0.002;
    /// A pawn attacking an enemy piece, endgame.
    threat_pawn_eg = 8, 0, 120, 4.0, 0.002;
    /// A knight or bishop attacking an enemy rook or queen, middlegame.
    threat_minor_mg = 40, 0, 100, 3.0, 0.002;
    /// A knight or bishop attacking an enemy rook or queen, endgame.
    threat_minor_eg = 1, 0, 100, 3.0, 0.002;
    /// A rook attacking an enemy queen, middlegame.
    threat_rook_mg = 37, 0, 100, 3.0, 0.002;
    /// A rook attacking an enemy queen, endgame.
    threat_rook_eg = 0, 0, 100, 3.0, 0.002;
    /// Knight on an outpost (ranks four to six, defended by a pawn, out of reach of enemy
    /// pawns), middlegame.
    knight_outpost_mg = 18, 0, 80, 3.0, 0.002;
    /// Knight on an outpost, endgame.
    knight_outpost_eg = 3, 0, 80, 3.0, 0.002;
    /// Bishop on an outpost, middlegame.
    bishop_outpost_mg = 41, 0, 80, 3.0, 0.002;
    /// Bishop on an outpost, endgame.
    bishop_outpost_eg = 0, 0, 80, 3.0, 0.002;
    /// An enemy piece (not a pawn) we attack and they do not defend, middlegame.
    hanging_mg = 13, 0, 150, 4.0, 0.002;
    /// An undefended enemy piece under attack, endgame.
    hanging_eg = 16, 0, 150, 4.0, 0.002;
    /// An enemy piece a pawn push to a square no enemy pawn guards would attack, middlegame.
    threat_push_mg = 16, 0, 100, 3.0, 0.002;
    /// A pawn-push threat, endgame.
    threat_push_eg = 0, 0, 100, 3.0, 0.002;
    /// Rook on the seventh rank with something to do there, cutting off the king on the eighth
    /// or attacking pawns on the seventh: on top of the seventh-rank shape bonus, middlegame.
    rook_seventh_target_mg = 0, 0, 80, 3.0, 0.002;
    /// Rook on the seventh with a target, endgame.
    rook_seventh_target_eg = 17, 0, 80, 3.0, 0.002;
    /// Knight or bishop directly behind an own pawn, which shields it from the front,
    /// middlegame.
    minor_behind_pawn_mg = 7, 0, 40, 2.0, 0.002;
    /// Bishop, middlegame: penalty per own pawn on squares of its colour (the bad bishop).
    bishop_pawns_mg = 0, 0, 30, 1.0, 0.002;
    /// Bishop, endgame: penalty per own pawn on its colour.
    bishop_pawns_eg = 7, 0, 30, 1.0, 0.002;
    /// Bishop, middlegame: penalty per own pawn on its colour blocked by an enemy pawn, which
    /// will not move off it.
    bishop_rammed_mg = 1, 0, 40, 1.0, 0.002;
    /// Bishop, endgame: penalty per rammed own pawn on its colour.
    bishop_rammed_eg = 7, 0, 40, 1.0, 0.002;
    /// Bishop that sees two centre squares through everything but pawns (a long diagonal),
    /// middlegame.
    long_diagonal_mg = 11, 0, 80, 3.0, 0.002;
    /// Knight or bishop, middlegame: penalty per square of distance from its own king.
    king_protector_mg = 1, 0, 20, 1.0, 0.002;
    /// Knight or bishop, endgame: penalty per square from its own king.
    king_protector_eg = 1, 0, 20, 1.0, 0.002;
    /// Knight, middlegame: per own pawn above five (knights like closed positions).
    knight_pawns_mg = 5, -20, 20, 1.0, 0.002;
    /// Knight, endgame: per own pawn above five.
    knight_pawns_eg = 4, -20, 20, 1.0, 0.002;
    /// Rook, middlegame: per own pawn above five (rooks like open ones).
    rook_pawns_mg = -5, -20, 20, 1.0, 0.002;
    /// Rook, endgame: per own pawn above five.
    rook_pawns_eg = 10, -20, 20, 1.0, 0.002;
    /// Rook on the file of an enemy queen, middlegame.
    rook_queen_file_mg = 7, 0, 60, 2.0, 0.002;
    /// An enemy pawn we attack and nothing of theirs defends, middlegame.
    pawn_hanging_mg = 7, 0, 80, 3.0, 0.002;
    /// An undefended enemy pawn under attack, endgame.
    pawn_hanging_eg = 27, 0, 80, 3.0, 0.002;
    /// An enemy piece or pawn next to our king that nothing of theirs defends, middlegame.
    threat_king_mg = 19, 0, 80, 3.0, 0.002;
    /// An undefended enemy next to our king, endgame.
    threat_king_eg = 6, 0, 120, 3.0, 0.002;
    /// Space, middlegame: per safe square (not attacked by enemy pawns, without an own pawn)
    /// on the c- to f-files of our second to fourth ranks, and again where an own pawn
    /// stands in front of it.
    space_mg = 3, 0, 20, 1.0, 0.002;

    // ---- King safety (middlegame only).
    /// Attack units per king-zone square a knight attacks.
    ks_knight = 3, 0, 10, 0.5, 0.002;
    /// Attack units per king-zone square a bishop attacks.
    ks_bishop = 1, 0, 10, 0.5, 0.002;
    /// Attack units per king-zone square a rook attacks.
    ks_rook = 2, 0, 10, 0.5, 0.002;
    /// Attack units per king-zone square a queen attacks.
    ks_queen = 2, 0, 15, 0.5, 0.002;
    /// Attack units per safe check: a square, no enemy pawn guards, from which one of our
    /// pieces that reaches it would check the king.
    ks_check = 3, 0, 15, 0.5, 0.002;
    /// Attack units per king-zone square we attack that the enemy defends with its king alone
    /// or not at all.
    ks_weak = 1, 0, 10, 0.5, 0.002;
    /// King attack scale: with two or more attackers the bonus is units² × scale / 64.
    ks_scale = 5, 0, 60, 2.0, 0.002;
    /// Own pawn directly in front of the king (its file or a neighbour), middlegame.
    shield_near_mg = 9, 0, 50, 2.0, 0.002;
    /// Own pawn two squares in front of the king, middlegame.
    shield_far_mg = 6, 0, 40, 2.0, 0.002;
    /// File at or next to the king without own pawns, middlegame penalty.
    king_open_file_mg = 19, 0, 60, 2.0, 0.002;
    /// Enemy pawn on the king's files advanced to our third or fourth rank, middlegame penalty.
    pawn_storm_mg = 0, 0, 60, 2.0, 0.002;
    /// King on a flank (its file and the nearest others, three or four files) without pawns of
    /// either colour, middlegame penalty.
    king_flank_pawnless_mg = 0, 0, 80, 3.0, 0.002;
    /// King on a pawnless flank, endgame penalty.
    king_flank_pawnless_eg = 27, 0, 150, 4.0, 0.002;
    /// A check our piece can give on a square no enemy pawn guards, middlegame.
    safe_check_mg = 13, 0, 100, 3.0, 0.002;
    /// A safe check, endgame.
    safe_check_eg = 4, 0, 100, 3.0, 0.002;

    // ---- Whole-position terms.
    /// Bonus for the side to move (centipawns).
    tempo = 8, 0, 50, 2.0, 0.002;
    /// Endgame scale (of 64) when the stronger side has no pawns and at most a minor more.
    drawish_scale = 0, 0, 64, 3.0, 0.002;

    // ---- Search constants.
    /// Aspiration windows: shallowest iteration searched in a window around the last score.
    asp_depth = 4, 1, 10, 0.5, 0.002;
    /// Aspiration window half-width at the start of an iteration (centipawns).
    asp_delta = 15, 5, 80, 2.0, 0.002;
    /// Null move: shallowest depth at which passing is tried.
    nmp_depth = 3, 1, 6, 0.5, 0.002;
    /// Null-move reduction: base plies.
    nmp_base = 3, 1, 6, 0.5, 0.002;
    /// Null-move reduction: one more ply per this many plies of depth.
    nmp_depth_div = 4, 2, 10, 0.5, 0.002;
    /// Null-move reduction: one more ply per this many centipawns of eval above beta (max 3).
    nmp_eval_div = 200, 50, 600, 20.0, 0.002;
    /// Reverse futility pruning: deepest depth it applies at.
    rfp_depth = 8, 1, 12, 0.5, 0.002;
    /// Reverse futility pruning: margin per ply of depth (centipawns).
    rfp_margin = 75, 20, 200, 6.0, 0.002;
    /// Futility pruning: deepest depth it applies at.
    fut_depth = 6, 1, 10, 0.5, 0.002;
    /// Futility pruning: base margin (centipawns).
    fut_base = 80, 0, 300, 10.0, 0.002;
    /// Futility pruning: margin per ply of depth (centipawns).
    fut_margin = 90, 20, 250, 8.0, 0.002;
    /// Late-move pruning: deepest depth it applies at.
    lmp_depth = 8, 1, 12, 0.5, 0.002;
    /// Late-move pruning: quiet moves allowed at depth d are base + d² (halved when not improving).
    lmp_base = 3, 0, 12, 0.5, 0.002;
    /// Late-move reductions: constant term, in hundredths of a ply.
    lmr_base = 75, 0, 200, 8.0, 0.002;
    /// Late-move reductions: ln(depth) × ln(move number) is divided by this, in hundredths.
    lmr_div = 225, 100, 400, 12.0, 0.002;
    /// Late-move reductions: history points per ply of reduction removed or added.
    lmr_history_div = 8192, 2048, 32768, 512.0, 0.002;
    /// Late-move reductions: shallowest depth at which late quiet moves are reduced.
    lmr_depth = 3, 2, 6, 0.5, 0.002;
    /// SEE pruning: deepest depth at which a move losing material by exchange is skipped.
    see_depth = 8, 1, 12, 0.5, 0.002;
    /// SEE pruning of quiet moves: allowed loss per ply of depth (centipawns).
    see_quiet_margin = 60, 0, 200, 6.0, 0.002;
    /// SEE pruning of captures: allowed loss per ply² of depth (centipawns).
    see_capture_margin = 20, 0, 100, 3.0, 0.002;
    /// Quiescence delta pruning margin (centipawns).
    qs_delta_margin = 200, 0, 600, 15.0, 0.002;
    /// Internal iterative reduction: shallowest depth at which a node without a hash move is
    /// searched one ply less.
    iir_depth = 4, 2, 10, 0.5, 0.002;
    /// Razoring: deepest depth at which a node far below alpha is settled by a quiescence
    /// search (0: never).
    razor_depth = 2, 0, 4, 0.5, 0.002;
    /// Razoring: how far below alpha the evaluation must be, per ply of depth (centipawns).
    razor_margin = 250, 50, 600, 20.0, 0.002;
    /// History pruning: deepest depth at which a quiet move with a bad history is skipped
    /// (0: never).
    hist_prune_depth = 0, 0, 6, 0.5, 0.002;
    /// History pruning: how bad, in history points per ply of depth.
    hist_prune_margin = 4096, 256, 16384, 256.0, 0.002;
    /// Follow-up history: whether a quiet move is also ordered, reduced and pruned by how it
    /// fared after our own previous move (0: no, 1: yes).
    follow_up_hist = 0, 0, 1, 0.5, 0.002;
    /// Singular extension: shallowest depth at which the hash move is tested for being the
    /// only good move, and extended when it is (0: never; off until an SPRT over UCI decides
    /// it, see the CHANGELOG).
    se_depth = 0, 0, 16, 0.5, 0.002;
    /// Singular extension: how far below the hash score the other moves must stay, per ply
    /// of depth (centipawns).
    se_margin = 2, 0, 20, 0.5, 0.002;
    /// ProbCut: shallowest depth at which a capture that beats beta by `probcut_margin` in a
    /// search four plies shallower ends the node (0: never).
    probcut_depth = 0, 0, 10, 0.5, 0.002;
    /// ProbCut: how far above beta the shallow search must land (centipawns).
    probcut_margin = 200, 50, 500, 15.0, 0.002;
    /// Correction history: the share of the error learned per pawn structure that is added to
    /// the static evaluation (percent; 0: none, and nothing is learned).
    corr_hist_percent = 0, 0, 200, 10.0, 0.002;
    /// Correction history: the largest correction one pawn structure can learn (centipawns).
    corr_hist_limit = 64, 8, 256, 8.0, 0.002;
    /// History bonus for a quiet cutoff at depth d: quad × d² + lin × d, at most max (the
    /// same amount is taken from the quiet moves tried before it).
    hist_bonus_quad = 16, 0, 64, 2.0, 0.002;
    /// History bonus: the linear term's points per ply of depth.
    hist_bonus_lin = 32, 0, 128, 4.0, 0.002;
    /// History bonus: the most one cutoff adds (history points).
    hist_bonus_max = 1600, 200, 4000, 100.0, 0.002;
    /// Time management: the moves the time left is shared over when the control names none.
    tm_moves = 25, 10, 60, 2.0, 0.002;
    /// Time management: the share of the increment added to each move's time (percent).
    tm_inc_percent = 75, 0, 100, 5.0, 0.002;
    /// Time management: the hard limit, in percent of a move's time (the soft limit is 100).
    tm_hard_percent = 400, 150, 800, 25.0, 0.002;
    /// Time management: the soft limit after an iteration that changed the best move (percent).
    tm_unstable_percent = 130, 80, 200, 8.0, 0.002;
    /// Time management: the soft limit when the best move stood through one iteration (percent).
    tm_stable1_percent = 100, 50, 150, 6.0, 0.002;
    /// Time management: the soft limit when it stood through two or three (percent).
    tm_stable2_percent = 80, 40, 130, 5.0, 0.002;
    /// Time management: the soft limit when it stood through four or more (percent).
    tm_stable4_percent = 60, 20, 100, 5.0, 0.002;
    /// Time management: with one legal reply the soft limit is divided by this.
    tm_single_reply_div = 16, 1, 64, 2.0, 0.002;
}

/// The (middlegame, endgame) names of the piece values, pawn to queen.
const MATERIAL: [(&str, &str); 5] = [
    ("pawn_mg", "pawn_eg"),
    ("knight_mg", "knight_eg"),
    ("bishop_mg", "bishop_eg"),
    ("rook_mg", "rook_eg"),
    ("queen_mg", "queen_eg"),
];

/// The spec of the parameter named `name`, compared case-insensitively as UCI option names are.
pub fn spec(name: &str) -> Option<(usize, &'static ParamSpec)> {
    PARAMS
        .iter()
        .enumerate()
        .find(|(_, spec)| spec.name.eq_ignore_ascii_case(name))
}

impl Params {
    /// The value of the parameter named `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<i32> {
        spec(name).map(|(i, _)| self.values()[i])
    }

    /// Sets the parameter named `name` (case-insensitive), checking its range.
    pub fn set(&mut self, name: &str, value: i64) -> Result<(), ParamError> {
        let (i, spec) = spec(name).ok_or_else(|| ParamError::Unknown(name.to_owned()))?;
        if value < i64::from(spec.min) || value > i64::from(spec.max) {
            return Err(ParamError::OutOfRange {
                name: spec.name.to_owned(),
                value,
                min: spec.min,
                max: spec.max,
            });
        }
        *self.slots_mut()[i] = value as i32;
        Ok(())
    }

    /// Sets a parameter from text, as `setoption name X value Y` gives it.
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<(), ParamError> {
        let canonical = spec(name).map_or(name, |(_, s)| s.name);
        let value = text
            .trim()
            .parse::<i64>()
            .map_err(|_| ParamError::NotANumber {
                name: canonical.to_owned(),
                text: text.to_owned(),
            })?;
        self.set(name, value)
    }

    /// Checks every value against its range; the first violation is the error.
    pub fn validate(&self) -> Result<(), ParamError> {
        for (spec, value) in PARAMS.iter().zip(self.values()) {
            if value < spec.min || value > spec.max {
                return Err(ParamError::OutOfRange {
                    name: spec.name.to_owned(),
                    value: value.into(),
                    min: spec.min,
                    max: spec.max,
                });
            }
        }
        Ok(())
    }

    /// Reads parameters from TOML text: `name = value` lines, any subset (the rest keep their
    /// defaults); unknown names and out-of-range values are errors.
    pub fn from_toml(text: &str) -> Result<Params, ParamError> {
        let params: Params = toml::from_str(text).map_err(|e| ParamError::File {
            path: "<toml>".to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        params.validate()?;
        Ok(params)
    }

    /// Reads a TOML parameter file; errors name the file.
    pub fn load(path: &Path) -> Result<Params, ParamError> {
        let with_path = |message: String| ParamError::File {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| with_path(e.to_string()))?;
        Params::from_toml(&text).map_err(|e| match e {
            ParamError::File { message, .. } => with_path(message),
            other => with_path(other.to_string()),
        })
    }

    /// Every parameter as TOML, one `name = value` line each, in declaration order.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a struct of integers is valid TOML")
    }

    /// Writes [`Params::to_toml`] to a file.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_toml())
    }

    /// fishtest's SPSA input: one `name, int, value, min, max, c_end, r_end` line per parameter.
    pub fn to_spsa(&self) -> String {
        let mut out = String::new();
        for (spec, value) in PARAMS.iter().zip(self.values()) {
            let _ = writeln!(
                out,
                "{}, int, {}, {}, {}, {}, {}",
                spec.name, value, spec.min, spec.max, spec.c_end, spec.r_end
            );
        }
        out
    }

    /// A JSON array of every parameter with its value and spec.
    pub fn to_json(&self) -> String {
        let list: Vec<serde_json::Value> = PARAMS
            .iter()
            .zip(self.values())
            .map(|(spec, value)| {
                serde_json::json!({
                    "name": spec.name,
                    "value": value,
                    "default": spec.default,
                    "min": spec.min,
                    "max": spec.max,
                    "c_end": spec.c_end,
                    "r_end": spec.r_end,
                    "doc": spec.doc.trim(),
                })
            })
            .collect();
        serde_json::to_string_pretty(&list).expect("JSON values serialise")
    }

    /// UCI `option` lines for every parameter.
    pub fn uci_options(&self) -> Vec<String> {
        PARAMS
            .iter()
            .zip(self.values())
            .map(|(spec, value)| {
                let (default, min, max) = (value.into(), spec.min.into(), spec.max.into());
                OptionDecl::spin(spec.name, default, min, max).to_string()
            })
            .collect()
    }

    /// A table for people: name, value (piece values also in pawns), range and meaning.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<22} {:>6} {:>9} {:>13}  meaning",
            "name", "value", "pawns", "range"
        );
        for (spec, value) in PARAMS.iter().zip(self.values()) {
            let pawns = if spec.is_piece_value() {
                format!("{:.2}", f64::from(value) / 100.0)
            } else {
                String::new()
            };
            let range = format!("{}..{}", spec.min, spec.max);
            let _ = writeln!(
                out,
                "{:<22} {:>6} {:>9} {:>13}  {}",
                spec.name,
                value,
                pawns,
                range,
                spec.doc.trim()
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_in_range_and_names_unique() {
        Params::default().validate().unwrap();
        for (i, a) in PARAMS.iter().enumerate() {
            assert_eq!(a.default, Params::default().values()[i]);
            assert!(a.min < a.max, "{}", a.name);
            assert!(a.c_end > 0.0 && a.r_end > 0.0, "{}", a.name);
            for b in &PARAMS[i + 1..] {
                assert!(!a.name.eq_ignore_ascii_case(b.name), "{} twice", a.name);
            }
        }
    }

    #[test]
    fn piece_values_are_texels_and_the_classical_set_is_a_file() {
        let p = Params::default();
        assert_eq!(
            [p.pawn_mg, p.knight_mg, p.bishop_mg, p.rook_mg, p.queen_mg],
            [73, 393, 443, 535, 1400]
        );
        assert!(p.describe().contains("3.93"));
        let classical =
            Params::from_toml(include_str!("../../../configs/staunton-classical.toml")).unwrap();
        assert_eq!(
            [
                classical.pawn_mg,
                classical.knight_mg,
                classical.bishop_mg,
                classical.rook_mg,
                classical.queen_mg
            ],
            [100, 325, 325, 500, 950]
        );
        assert!(classical.describe().contains("3.25"));
        assert!(classical.describe().contains("9.50"));
    }

    #[test]
    fn every_list_names_every_parameter() {
        let p = Params::default();
        let uci = p.uci_options();
        let toml = p.to_toml();
        let spsa = p.to_spsa();
        let json: Vec<serde_json::Value> = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(uci.len(), PARAM_COUNT);
        assert_eq!(spsa.lines().count(), PARAM_COUNT);
        assert_eq!(json.len(), PARAM_COUNT);
        assert_eq!(toml.lines().count(), PARAM_COUNT);
        for (i, spec) in PARAMS.iter().enumerate() {
            assert_eq!(
                uci[i],
                format!(
                    "option name {} type spin default {} min {} max {}",
                    spec.name, spec.default, spec.min, spec.max
                )
            );
            assert_eq!(
                toml.lines().nth(i).unwrap(),
                format!("{} = {}", spec.name, spec.default)
            );
            let fields: Vec<&str> = spsa.lines().nth(i).unwrap().split(", ").collect();
            assert_eq!(fields[0], spec.name);
            assert_eq!(fields[1], "int");
            assert_eq!(fields[2].parse::<i32>().unwrap(), spec.default);
            assert_eq!(fields[3].parse::<i32>().unwrap(), spec.min);
            assert_eq!(fields[4].parse::<i32>().unwrap(), spec.max);
            assert_eq!(fields[5].parse::<f64>().unwrap(), spec.c_end);
            assert_eq!(fields[6].parse::<f64>().unwrap(), spec.r_end);
            assert_eq!(json[i]["name"], spec.name);
            assert_eq!(json[i]["value"], spec.default);
            assert_eq!(json[i]["min"], spec.min);
            assert_eq!(json[i]["max"], spec.max);
        }
    }

    #[test]
    fn toml_and_setoption_round_trip_every_parameter() {
        // Move every parameter to a different in-range value, through setoption-style text
        // with the name in another case, then through TOML and back.
        let mut p = Params::default();
        for spec in PARAMS {
            let value = if spec.default < spec.max {
                spec.default + 1
            } else {
                spec.default - 1
            };
            p.set_text(&spec.name.to_uppercase(), &value.to_string())
                .unwrap();
            assert_eq!(p.get(spec.name), Some(value));
        }
        assert_ne!(p, Params::default());
        let back = Params::from_toml(&p.to_toml()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn save_and_load_a_file() {
        let path =
            std::env::temp_dir().join(format!("staunton-params-{}.toml", std::process::id()));
        let p = Params {
            queen_eg: 1000,
            ..Params::default()
        };
        p.save(&path).unwrap();
        assert_eq!(Params::load(&path).unwrap(), p);
        std::fs::write(&path, "queen_eg = 99999\n").unwrap();
        let err = Params::load(&path).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("queen_eg"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
        let err = Params::load(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
    }

    #[test]
    fn partial_toml_keeps_defaults_and_bad_files_are_explained() {
        let p = Params::from_toml("knight_mg = 330\n").unwrap();
        assert_eq!(p.knight_mg, 330);
        assert_eq!(p.bishop_mg, Params::default().bishop_mg);
        let err = Params::from_toml("knihgt_mg = 330\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("knihgt_mg"), "{err}");
        let err = Params::from_toml("knight_mg = 5\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("knight_mg") && err.contains("200..=500"),
            "{err}"
        );
        let err = Params::from_toml("knight_mg = \"x\"\n").unwrap_err();
        assert!(matches!(err, ParamError::File { .. }));
    }

    #[test]
    fn setoption_errors_say_what_was_wrong() {
        let mut p = Params::default();
        assert_eq!(
            p.set_text("nope", "1"),
            Err(ParamError::Unknown("nope".into()))
        );
        assert!(matches!(
            p.set_text("Knight_MG", "abc"),
            Err(ParamError::NotANumber { .. })
        ));
        assert!(matches!(
            p.set("knight_mg", 10_000),
            Err(ParamError::OutOfRange { .. })
        ));
        assert_eq!(p, Params::default());
    }
}
