//! Bitboard helpers and attack tables (fancy magic bitboards for sliders), built once on first use.

use crate::types::{Color, Square};
use std::sync::OnceLock;

pub type Bitboard = u64;

pub const FILE_A: Bitboard = 0x0101_0101_0101_0101;
pub const FILE_H: Bitboard = FILE_A << 7;
pub const RANK_1: Bitboard = 0xff;
pub const RANK_2: Bitboard = RANK_1 << 8;
pub const RANK_3: Bitboard = RANK_1 << 16;
pub const RANK_4: Bitboard = RANK_1 << 24;
pub const RANK_5: Bitboard = RANK_1 << 32;
pub const RANK_6: Bitboard = RANK_1 << 40;
pub const RANK_7: Bitboard = RANK_1 << 48;
pub const RANK_8: Bitboard = RANK_1 << 56;
pub const DARK_SQUARES: Bitboard = 0xAA55_AA55_AA55_AA55;

/// Iterates over the squares of a bitboard, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub Bitboard);

impl Iterator for Squares {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let s = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Some(Square(s))
        }
    }
}

#[inline]
pub fn squares(bb: Bitboard) -> Squares {
    Squares(bb)
}

#[inline]
pub fn lsb(bb: Bitboard) -> Square {
    debug_assert!(bb != 0);
    Square(bb.trailing_zeros() as u8)
}

#[inline]
pub fn more_than_one(bb: Bitboard) -> bool {
    bb & bb.wrapping_sub(1) != 0
}

struct Magic {
    mask: Bitboard,
    magic: u64,
    shift: u32,
    offset: usize,
}

pub struct Tables {
    knight: [Bitboard; 64],
    king: [Bitboard; 64],
    pawn: [[Bitboard; 64]; 2],
    rook_magics: Vec<Magic>,
    bishop_magics: Vec<Magic>,
    slider_attacks: Vec<Bitboard>,
    /// Squares strictly between two squares on a line, else empty.
    between: Vec<Bitboard>,
    /// The whole line through two squares (edge to edge), else empty.
    line: Vec<Bitboard>,
}

static TABLES: OnceLock<Tables> = OnceLock::new();

#[inline]
pub fn tables() -> &'static Tables {
    TABLES.get_or_init(Tables::build)
}

fn step_attacks(sq: usize, deltas: &[(i8, i8)]) -> Bitboard {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut bb = 0;
    for &(df, dr) in deltas {
        let (nf, nr) = (f + df, r + dr);
        if (0..8).contains(&nf) && (0..8).contains(&nr) {
            bb |= 1u64 << (nr * 8 + nf);
        }
    }
    bb
}

const ROOK_DIRS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn slide(sq: usize, occ: Bitboard, dirs: &[(i8, i8)]) -> Bitboard {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut bb = 0;
    for &(df, dr) in dirs {
        let (mut nf, mut nr) = (f + df, r + dr);
        while (0..8).contains(&nf) && (0..8).contains(&nr) {
            let b = 1u64 << (nr * 8 + nf);
            bb |= b;
            if occ & b != 0 {
                break;
            }
            nf += df;
            nr += dr;
        }
    }
    bb
}

fn relevant_mask(sq: usize, dirs: &[(i8, i8)]) -> Bitboard {
    let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut bb = 0;
    for &(df, dr) in dirs {
        let (mut nf, mut nr) = (f + df, r + dr);
        while (0..8).contains(&(nf + df)) && (0..8).contains(&(nr + dr)) {
            bb |= 1u64 << (nr * 8 + nf);
            nf += df;
            nr += dr;
        }
    }
    bb
}

/// Magic multipliers for fancy magic bitboards, found once by a random search (xorshift64*, sparse
/// candidates) and fixed here so that start-up does no search.
const ROOK_MAGICS: [u64; 64] = [
    0x1080004008801020,
    0x0840092002c03000,
    0x1900200010400900,
    0x0880100008000480,
    0x4200100420080200,
    0x8100020100080400,
    0x0200040110886200,
    0x0200008040220411,
    0x0404800084400220,
    0x0000401000402000,
    0x0086001081220440,
    0x0408800800100280,
    0x000a001201040820,
    0x8848800200840080,
    0x4001000100040200,
    0x0442000102105084,
    0x9080010020804100,
    0x0040404000201009,
    0x0000808010002009,
    0x2200090021d00100,
    0x0008008008040080,
    0x0004004002010040,
    0x0011040008015042,
    0x00000a0001768104,
    0x0000800080204009,
    0x2010004140002001,
    0x9800200280100080,
    0x1000100080080080,
    0x0442000a00049020,
    0x2100040080020080,
    0x0800120400900148,
    0x0010040a00128541,
    0x2800804000800030,
    0x1010002000400041,
    0x4000200011004100,
    0x0610008410800800,
    0x0400802402800800,
    0xc100020080800400,
    0x0002000802000401,
    0x0182085882000401,
    0x0220204000808000,
    0x2860100040024022,
    0x0001002004110040,
    0x99101042000a0020,
    0x0004080004008080,
    0x0010040002008080,
    0x2012004881020004,
    0x8300842444820011,
    0x0088403882010200,
    0x0820400080210100,
    0x0110910040a00300,
    0x0801100280080480,
    0x0242009008200600,
    0x1002000489500200,
    0x0040800200010080,
    0x0091800041000080,
    0x0000209300488001,
    0x04c1002414824001,
    0x020020000b001041,
    0x7000100004200901,
    0x8002002004100802,
    0x30010002084c0007,
    0x0888221800813004,
    0x4000002840840112,
];

const BISHOP_MAGICS: [u64; 64] = [
    0xa010041108003100,
    0x006082020a002900,
    0x6810010619200000,
    0x08281a0520000408,
    0x0001104001000400,
    0x0018901008048400,
    0x00040a0210245280,
    0x000200210808a402,
    0x9140048410821200,
    0x0800091010820041,
    0x20504804832202c0,
    0x0100091401081000,
    0x8021011140000012,
    0x0810020804450400,
    0x208b0542109008a2,
    0x0080084a08040204,
    0x0040e2a80811244c,
    0x2505022008008108,
    0x0430220100420040,
    0x010a040420220040,
    0x1105000290400000,
    0x0093001200822120,
    0x4000a62048043004,
    0x280120048a015004,
    0x006090002a020814,
    0x44042000240800d0,
    0x01102800040a4400,
    0x1004080080220040,
    0x0001001011004024,
    0x0010044000805040,
    0x0914041200820100,
    0x0004821012821480,
    0x0024040500c05021,
    0x0088611002080200,
    0x0116080a00040020,
    0x4000020080080080,
    0x2450450140840040,
    0x0000880201484100,
    0x0222020404020092,
    0x8081110600002e00,
    0x2842101105000801,
    0x1100809008001025,
    0x00020202221c0400,
    0x0422014022009020,
    0x0210046102100c00,
    0xc004008082029102,
    0x00aa461801101200,
    0x0404080080201108,
    0x020542108c205002,
    0x0410544804100100,
    0x0040910841100000,
    0x0400200042021100,
    0x00004204850400c0,
    0x0200100410a42102,
    0x1040020801210102,
    0x0805040410420000,
    0x2884804130100200,
    0x800c262201242000,
    0x1058000194108800,
    0x0014221054420204,
    0x0104000012a02200,
    0x0200881003300100,
    0x0140400202840100,
    0x0402020801010201,
];

fn fill_magics(dirs: &[(i8, i8)], magics_in: &[u64; 64], table: &mut Vec<Bitboard>) -> Vec<Magic> {
    let mut magics = Vec::with_capacity(64);
    for (sq, &magic) in magics_in.iter().enumerate() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let shift = 64 - bits;
        let offset = table.len();
        table.resize(offset + (1usize << bits), 0);
        // Carry-Rippler enumeration of all subsets of the mask.
        let mut sub: u64 = 0;
        loop {
            let idx = (sub.wrapping_mul(magic) >> shift) as usize;
            table[offset + idx] = slide(sq, sub, dirs);
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        magics.push(Magic {
            mask,
            magic,
            shift,
            offset,
        });
    }
    magics
}

impl Tables {
    fn build() -> Tables {
        let mut knight = [0; 64];
        let mut king = [0; 64];
        let mut pawn = [[0; 64]; 2];
        for sq in 0..64 {
            knight[sq] = step_attacks(
                sq,
                &[
                    (1, 2),
                    (2, 1),
                    (2, -1),
                    (1, -2),
                    (-1, -2),
                    (-2, -1),
                    (-2, 1),
                    (-1, 2),
                ],
            );
            king[sq] = step_attacks(
                sq,
                &[
                    (1, 0),
                    (1, 1),
                    (0, 1),
                    (-1, 1),
                    (-1, 0),
                    (-1, -1),
                    (0, -1),
                    (1, -1),
                ],
            );
            pawn[0][sq] = step_attacks(sq, &[(1, 1), (-1, 1)]);
            pawn[1][sq] = step_attacks(sq, &[(1, -1), (-1, -1)]);
        }
        let mut slider_attacks = Vec::with_capacity(110_000);
        let rook_magics = fill_magics(&ROOK_DIRS, &ROOK_MAGICS, &mut slider_attacks);
        let bishop_magics = fill_magics(&BISHOP_DIRS, &BISHOP_MAGICS, &mut slider_attacks);
        let mut between = vec![0; 64 * 64];
        let mut line = vec![0; 64 * 64];
        for a in 0..64 {
            for b in 0..64 {
                if a == b {
                    continue;
                }
                let bb_b = 1u64 << b;
                for dirs in [&ROOK_DIRS, &BISHOP_DIRS] {
                    if slide(a, 0, dirs) & bb_b != 0 {
                        between[a * 64 + b] = slide(a, bb_b, dirs) & slide(b, 1u64 << a, dirs);
                        line[a * 64 + b] =
                            (slide(a, 0, dirs) & slide(b, 0, dirs)) | (1u64 << a) | bb_b;
                    }
                }
            }
        }
        Tables {
            knight,
            king,
            pawn,
            rook_magics,
            bishop_magics,
            slider_attacks,
            between,
            line,
        }
    }

    #[inline]
    pub fn knight(&self, sq: Square) -> Bitboard {
        self.knight[sq.index()]
    }
    #[inline]
    pub fn king(&self, sq: Square) -> Bitboard {
        self.king[sq.index()]
    }
    /// Squares a pawn of `color` on `sq` attacks.
    #[inline]
    pub fn pawn(&self, color: Color, sq: Square) -> Bitboard {
        self.pawn[color.index()][sq.index()]
    }
    #[inline]
    fn magic_lookup(&self, m: &Magic, occ: Bitboard) -> Bitboard {
        let idx = ((occ & m.mask).wrapping_mul(m.magic) >> m.shift) as usize;
        debug_assert!(m.offset + idx < self.slider_attacks.len());
        self.slider_attacks[m.offset + idx]
    }
    #[inline]
    pub fn rook(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.magic_lookup(&self.rook_magics[sq.index()], occ)
    }
    #[inline]
    pub fn bishop(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.magic_lookup(&self.bishop_magics[sq.index()], occ)
    }
    #[inline]
    pub fn queen(&self, sq: Square, occ: Bitboard) -> Bitboard {
        self.rook(sq, occ) | self.bishop(sq, occ)
    }
    #[inline]
    pub fn between(&self, a: Square, b: Square) -> Bitboard {
        self.between[a.index() * 64 + b.index()]
    }
    #[inline]
    pub fn line(&self, a: Square, b: Square) -> Bitboard {
        self.line[a.index() * 64 + b.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lookups_match_slow_sliding() {
        let t = tables();
        let mut state = 12345u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2000 {
            let occ = next() & next();
            for sq in 0..64u8 {
                assert_eq!(t.rook(Square(sq), occ), slide(sq as usize, occ, &ROOK_DIRS));
                assert_eq!(
                    t.bishop(Square(sq), occ),
                    slide(sq as usize, occ, &BISHOP_DIRS)
                );
            }
        }
    }

    #[test]
    fn between_and_line() {
        let t = tables();
        let a1 = Square::parse("a1").unwrap();
        let h8 = Square::parse("h8").unwrap();
        let c3 = Square::parse("c3").unwrap();
        assert_eq!(t.between(a1, h8).count_ones(), 6);
        assert!(t.line(a1, c3) & h8.bb() != 0);
        assert_eq!(t.between(a1, Square::parse("b3").unwrap()), 0);
    }
}
