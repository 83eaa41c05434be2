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

struct Prng(u64);
impl Prng {
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

fn find_magics(dirs: &[(i8, i8)], table: &mut Vec<Bitboard>, rng: &mut Prng) -> Vec<Magic> {
    let mut magics = Vec::with_capacity(64);
    let mut occs = Vec::with_capacity(4096);
    let mut atts = Vec::with_capacity(4096);
    let mut epoch = vec![0u32; 4096];
    let mut used = vec![0u64; 4096];
    let mut attempt = 0u32;
    for sq in 0..64 {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let shift = 64 - bits;
        occs.clear();
        atts.clear();
        // Carry-Rippler enumeration of all subsets of the mask.
        let mut sub: u64 = 0;
        loop {
            occs.push(sub);
            atts.push(slide(sq, sub, dirs));
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        let size = 1usize << bits;
        let magic = 'search: loop {
            let m = rng.sparse();
            if (mask.wrapping_mul(m) >> 56).count_ones() < 6 {
                continue;
            }
            attempt += 1;
            for (o, a) in occs.iter().zip(atts.iter()) {
                let idx = (o.wrapping_mul(m) >> shift) as usize;
                if epoch[idx] != attempt {
                    epoch[idx] = attempt;
                    used[idx] = *a;
                } else if used[idx] != *a {
                    continue 'search;
                }
            }
            break m;
        };
        let offset = table.len();
        table.resize(offset + size, 0);
        for (o, a) in occs.iter().zip(atts.iter()) {
            let idx = (o.wrapping_mul(magic) >> shift) as usize;
            table[offset + idx] = *a;
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
        let mut rng = Prng(0x9E37_79B9_7F4A_7C15);
        let mut slider_attacks = Vec::with_capacity(110_000);
        let rook_magics = find_magics(&ROOK_DIRS, &mut slider_attacks, &mut rng);
        let bishop_magics = find_magics(&BISHOP_DIRS, &mut slider_attacks, &mut rng);
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
        let mut rng = Prng(12345);
        for _ in 0..2000 {
            let occ = rng.next() & rng.next();
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
