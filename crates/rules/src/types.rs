//! Basic chess vocabulary: colours, piece roles, squares and moves, packed for speed.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    #[inline]
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
    pub const ALL: [Color; 2] = [Color::White, Color::Black];
}

impl std::ops::Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        self.other()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Pawn = 0,
    Knight = 1,
    Bishop = 2,
    Rook = 3,
    Queen = 4,
    King = 5,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    #[inline]
    pub fn from_index(i: usize) -> Role {
        Role::ALL[i]
    }
    /// Lower-case letter as in FEN for black pieces and UCI promotions.
    pub fn char(self) -> char {
        b"pnbrqk"[self as usize] as char
    }
    pub fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }
    /// Upper-case SAN letter; empty for pawns.
    pub fn san_letter(self) -> &'static str {
        ["", "N", "B", "R", "Q", "K"][self as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    pub fn new(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }
    pub fn fen_char(self) -> char {
        let c = self.role.char();
        match self.color {
            Color::White => c.to_ascii_uppercase(),
            Color::Black => c,
        }
    }
    pub fn from_fen_char(c: char) -> Option<Piece> {
        let role = Role::from_char(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }
}

/// A square, 0 = a1 … 63 = h8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    #[inline]
    pub fn new(index: u8) -> Square {
        debug_assert!(index < 64);
        Square(index)
    }
    #[inline]
    pub fn from_coords(file: u8, rank: u8) -> Square {
        Square(rank * 8 + file)
    }
    #[inline]
    pub fn file(self) -> u8 {
        self.0 & 7
    }
    #[inline]
    pub fn rank(self) -> u8 {
        self.0 >> 3
    }
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
    #[inline]
    pub fn bb(self) -> u64 {
        1u64 << self.0
    }
    /// The same square seen from the other side (rank mirrored).
    #[inline]
    pub fn flip(self) -> Square {
        Square(self.0 ^ 56)
    }
    /// Rank from `color`'s own side, 0..=7.
    #[inline]
    pub fn relative_rank(self, color: Color) -> u8 {
        match color {
            Color::White => self.rank(),
            Color::Black => 7 - self.rank(),
        }
    }
    pub fn parse(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let f = b[0].wrapping_sub(b'a');
        let r = b[1].wrapping_sub(b'1');
        if f < 8 && r < 8 {
            Some(Square::from_coords(f, r))
        } else {
            None
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}

/// What kind of move a [`Move`] is, beyond from/to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    Normal,
    DoublePush,
    EnPassant,
    Castle,
    Promotion(Role),
}

/// A chess move packed into 32 bits: from (6), to (6), kind (4), and one flag that says the move is
/// played as the first half of a Double Move (Double Move Chess only).
///
/// Castling is stored as the king's move (`e1g1`), as in UCI.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u32);

const DOUBLE_START_FLAG: u32 = 1 << 16;

const KIND_NORMAL: u32 = 0;
const KIND_DOUBLE_PUSH: u32 = 1;
const KIND_EP: u32 = 2;
const KIND_CASTLE: u32 = 3;
const KIND_PROMO_BASE: u32 = 4; // 4 + role index (knight=1 .. queen=4)

impl Move {
    #[inline]
    pub fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        let k = match kind {
            MoveKind::Normal => KIND_NORMAL,
            MoveKind::DoublePush => KIND_DOUBLE_PUSH,
            MoveKind::EnPassant => KIND_EP,
            MoveKind::Castle => KIND_CASTLE,
            MoveKind::Promotion(r) => KIND_PROMO_BASE + r as u32,
        };
        Move(from.0 as u32 | (to.0 as u32) << 6 | k << 12)
    }
    #[inline]
    pub fn normal(from: Square, to: Square) -> Move {
        Move(from.0 as u32 | (to.0 as u32) << 6)
    }
    #[inline]
    pub fn from(self) -> Square {
        Square((self.0 & 63) as u8)
    }
    #[inline]
    pub fn to(self) -> Square {
        Square(((self.0 >> 6) & 63) as u8)
    }
    #[inline]
    fn kind_bits(self) -> u32 {
        (self.0 >> 12) & 15
    }
    /// The same chess move, marked as the first half of a Double Move.
    #[inline]
    pub fn as_double_start(self) -> Move {
        Move(self.0 | DOUBLE_START_FLAG)
    }
    /// Whether this move activates the Double Move ability (its first half).
    #[inline]
    pub fn starts_double(self) -> bool {
        self.0 & DOUBLE_START_FLAG != 0
    }
    /// The plain chess move, without the Double Move flag.
    #[inline]
    pub fn chess_move(self) -> Move {
        Move(self.0 & !DOUBLE_START_FLAG)
    }
    #[inline]
    pub fn kind(self) -> MoveKind {
        match self.kind_bits() {
            KIND_NORMAL => MoveKind::Normal,
            KIND_DOUBLE_PUSH => MoveKind::DoublePush,
            KIND_EP => MoveKind::EnPassant,
            KIND_CASTLE => MoveKind::Castle,
            k => MoveKind::Promotion(Role::from_index((k - KIND_PROMO_BASE) as usize)),
        }
    }
    #[inline]
    pub fn promotion(self) -> Option<Role> {
        let k = self.kind_bits();
        if k >= KIND_PROMO_BASE {
            Some(Role::from_index((k - KIND_PROMO_BASE) as usize))
        } else {
            None
        }
    }
    #[inline]
    pub fn is_castle(self) -> bool {
        self.kind_bits() == KIND_CASTLE
    }
    #[inline]
    pub fn is_en_passant(self) -> bool {
        self.kind_bits() == KIND_EP
    }
    #[inline]
    pub fn is_double_push(self) -> bool {
        self.kind_bits() == KIND_DOUBLE_PUSH
    }
    /// UCI text: `e2e4`, `e7e8q`, castling as the king's move `e1g1`.
    pub fn uci(self) -> String {
        let mut s = format!("{}{}", self.from(), self.to());
        if let Some(r) = self.promotion() {
            s.push(r.char());
        }
        s
    }
    pub fn raw(self) -> u32 {
        self.0
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uci())
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uci())
    }
}

/// Castling rights, one bit each: white king side, white queen side, black king side, black queen side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CastlingRights(pub u8);

impl CastlingRights {
    pub const WHITE_KING: u8 = 1;
    pub const WHITE_QUEEN: u8 = 2;
    pub const BLACK_KING: u8 = 4;
    pub const BLACK_QUEEN: u8 = 8;
    pub const ALL: CastlingRights = CastlingRights(15);

    #[inline]
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    #[inline]
    pub fn king_side(color: Color) -> u8 {
        match color {
            Color::White => Self::WHITE_KING,
            Color::Black => Self::BLACK_KING,
        }
    }
    #[inline]
    pub fn queen_side(color: Color) -> u8 {
        match color {
            Color::White => Self::WHITE_QUEEN,
            Color::Black => Self::BLACK_QUEEN,
        }
    }
}
