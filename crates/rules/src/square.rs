//! Files, ranks and squares. Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63.

use std::fmt;
use std::str::FromStr;

use crate::Color;

/// A file, `a` to `h`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct File(u8);

/// A rank, `1` to `8`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rank(u8);

impl File {
    pub const A: File = File(0);
    pub const B: File = File(1);
    pub const C: File = File(2);
    pub const D: File = File(3);
    pub const E: File = File(4);
    pub const F: File = File(5);
    pub const G: File = File(6);
    pub const H: File = File(7);

    /// `None` unless `index < 8`.
    pub const fn new(index: u32) -> Option<File> {
        if index < 8 {
            Some(File(index as u8))
        } else {
            None
        }
    }
    #[inline]
    pub const fn index(self) -> usize {
        // The mask is free and tells the compiler the index is in range, so table lookups
        // need no bounds check.
        (self.0 & 7) as usize
    }
    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }
    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='h' => Some(File(c as u8 - b'a')),
            _ => None,
        }
    }
    pub fn all() -> impl DoubleEndedIterator<Item = File> + Clone {
        (0..8).map(File)
    }
}

impl Rank {
    pub const FIRST: Rank = Rank(0);
    pub const SECOND: Rank = Rank(1);
    pub const THIRD: Rank = Rank(2);
    pub const FOURTH: Rank = Rank(3);
    pub const FIFTH: Rank = Rank(4);
    pub const SIXTH: Rank = Rank(5);
    pub const SEVENTH: Rank = Rank(6);
    pub const EIGHTH: Rank = Rank(7);

    /// `None` unless `index < 8`.
    pub const fn new(index: u32) -> Option<Rank> {
        if index < 8 {
            Some(Rank(index as u8))
        } else {
            None
        }
    }
    #[inline]
    pub const fn index(self) -> usize {
        (self.0 & 7) as usize
    }
    pub const fn char(self) -> char {
        (b'1' + self.0) as char
    }
    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '1'..='8' => Some(Rank(c as u8 - b'1')),
            _ => None,
        }
    }
    /// The rank as seen from `color`'s side of the board: White's first rank is Black's eighth.
    #[inline]
    pub const fn relative_to(self, color: Color) -> Rank {
        match color {
            Color::White => self,
            Color::Black => Rank(7 - self.0),
        }
    }
    pub fn all() -> impl DoubleEndedIterator<Item = Rank> + Clone {
        (0..8).map(Rank)
    }
}

/// One of the 64 squares.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

#[rustfmt::skip]
impl Square {
    pub const A1: Square = Square(0);  pub const B1: Square = Square(1);  pub const C1: Square = Square(2);  pub const D1: Square = Square(3);
    pub const E1: Square = Square(4);  pub const F1: Square = Square(5);  pub const G1: Square = Square(6);  pub const H1: Square = Square(7);
    pub const A2: Square = Square(8);  pub const B2: Square = Square(9);  pub const C2: Square = Square(10); pub const D2: Square = Square(11);
    pub const E2: Square = Square(12); pub const F2: Square = Square(13); pub const G2: Square = Square(14); pub const H2: Square = Square(15);
    pub const A3: Square = Square(16); pub const H3: Square = Square(23); pub const E4: Square = Square(28); pub const E5: Square = Square(36);
    pub const A6: Square = Square(40); pub const H6: Square = Square(47);
    pub const A7: Square = Square(48); pub const B7: Square = Square(49); pub const C7: Square = Square(50); pub const D7: Square = Square(51);
    pub const E7: Square = Square(52); pub const F7: Square = Square(53); pub const G7: Square = Square(54); pub const H7: Square = Square(55);
    pub const A8: Square = Square(56); pub const B8: Square = Square(57); pub const C8: Square = Square(58); pub const D8: Square = Square(59);
    pub const E8: Square = Square(60); pub const F8: Square = Square(61); pub const G8: Square = Square(62); pub const H8: Square = Square(63);
}

impl Square {
    /// `None` unless `index < 64`.
    #[inline]
    pub const fn new(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// For indices known to be in range (bit scans of a non-empty bitboard).
    #[inline]
    pub(crate) const fn from_index_unchecked(index: u32) -> Square {
        debug_assert!(index < 64);
        Square(index as u8)
    }

    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 8 + file.0)
    }

    #[inline]
    pub const fn index(self) -> usize {
        // The mask is free and tells the compiler the index is in range, so table lookups
        // need no bounds check.
        (self.0 & 63) as usize
    }
    #[inline]
    pub const fn file(self) -> File {
        File(self.0 & 7)
    }
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank(self.0 >> 3)
    }

    /// The same square seen from the other side (a1 <-> a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// The square `delta` steps away in index terms, if it stays on the board.
    #[inline]
    pub const fn offset(self, delta: i32) -> Option<Square> {
        let target = self.0 as i32 + delta;
        if target >= 0 && target < 64 {
            Some(Square(target as u8))
        } else {
            None
        }
    }

    /// Light squares are those where a1 is dark: (file + rank) odd.
    #[inline]
    pub const fn is_light(self) -> bool {
        (self.file().0 + self.rank().0) % 2 == 1
    }

    pub fn all() -> impl DoubleEndedIterator<Item = Square> + ExactSizeIterator + Clone {
        (0..64).map(Square)
    }

    /// Parses `e4` from the first two bytes of `s`.
    pub fn from_ascii(s: &[u8]) -> Option<Square> {
        match s {
            [f, r] => Some(Square::from_coords(
                File::from_char(*f as char)?,
                Rank::from_char(*r as char)?,
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not a square name such as `e4`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a square such as e4, found {0:?}")]
pub struct ParseSquareError(pub String);

impl FromStr for Square {
    type Err = ParseSquareError;
    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        Square::from_ascii(s.as_bytes()).ok_or_else(|| ParseSquareError(s.to_owned()))
    }
}
