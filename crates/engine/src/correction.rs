//! Correction history: how far the static evaluation has been from the search's result in positions
//! with the same pawns, or the same pieces of one side, learnt as the search goes and added to later
//! static evaluations. Each search thread has its own (see `search::Worker`).
//!
//! Three tables, each kept per side to move and turn phase (half way through a turn the side moves
//! again, which the static evaluation misjudges differently from a turn's start): one by a hash of
//! the pawns, one by a hash of White's other pieces (king included), one by Black's. A position's
//! correction is the pawns' entry plus half of each side's pieces' entry.

use crate::history::{side_phase_row, SIDE_PHASE_ROWS};
use rules::{Color, Position, Role};

/// Entries per (side, phase): 2^14, the hash's top 14 bits.
const SIZE: usize = 1 << 14;
/// Entries hold centipawns × GRAIN (finer steps than a centipawn for the running average).
const GRAIN: i32 = 256;
/// The weights of the running average are out of WEIGHT_SCALE.
const WEIGHT_SCALE: i32 = 256;
/// An entry holds at most 32 centipawns (stored × GRAIN): a correction is at most 64.
const MAX: i32 = GRAIN * 32;

pub struct CorrectionHistory {
    pawns: Vec<i16>,
    /// White's pieces' table, then Black's.
    pieces: [Vec<i16>; 2],
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory::new()
    }
}

/// A hash of the pawn placement, SIZE buckets.
fn pawn_index(pos: &Position) -> usize {
    let b = pos.board();
    let pawns = b.role(Role::Pawn);
    let white = pawns & b.color(Color::White);
    let black = pawns & b.color(Color::Black);
    let h = white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let h = h ^ (h >> 29);
    // The top 14 bits: SIZE buckets.
    (h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 50) as usize
}

/// A hash of the placement of `color`'s pieces other than pawns, SIZE buckets.
fn pieces_index(pos: &Position, color: Color) -> usize {
    const MUL: [u64; 5] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0xD6E8_FEB8_6659_FD93,
        0xFF51_AFD7_ED55_8CCD,
    ];
    let b = pos.board();
    let own = b.color(color);
    let roles = [
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    let mut h = 0u64;
    for (role, mul) in roles.into_iter().zip(MUL) {
        h ^= (b.role(role) & own).wrapping_mul(mul);
        h = h.rotate_left(11);
    }
    let h = h ^ (h >> 29);
    (h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 50) as usize
}

/// Moves `e` towards `diff` centipawns beyond its value, by `weight` out of WEIGHT_SCALE.
#[inline]
fn step(e: &mut i16, weight: i32, diff: i32) {
    let target = (*e as i32) + diff.clamp(-MAX / GRAIN, MAX / GRAIN) * GRAIN;
    let v = (*e as i32 * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
    *e = v.clamp(-MAX, MAX) as i16;
}

impl CorrectionHistory {
    pub fn new() -> CorrectionHistory {
        CorrectionHistory {
            pawns: vec![0; SIDE_PHASE_ROWS * SIZE],
            pieces: [
                vec![0; SIDE_PHASE_ROWS * SIZE],
                vec![0; SIDE_PHASE_ROWS * SIZE],
            ],
        }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.pawns.iter_mut().for_each(|v| *v = 0);
        for table in &mut self.pieces {
            table.iter_mut().for_each(|v| *v = 0);
        }
    }

    /// The indices of `pos` in the pawns' table and in each side's pieces' table.
    #[inline]
    fn indices(pos: &Position) -> [usize; 3] {
        let row = side_phase_row(pos) * SIZE;
        [
            row + pawn_index(pos),
            row + pieces_index(pos, Color::White),
            row + pieces_index(pos, Color::Black),
        ]
    }

    /// `raw`, the static evaluation of `pos`, corrected.
    #[inline]
    pub fn correct(&self, pos: &Position, raw: i32) -> i32 {
        let [p, w, b] = Self::indices(pos);
        let sum = 2 * self.pawns[p] as i32 + self.pieces[0][w] as i32 + self.pieces[1][b] as i32;
        raw + sum / (2 * GRAIN)
    }

    /// A search of `depth` found `pos` worth `diff` centipawns more than its corrected static
    /// evaluation: move each table's entry towards that, the more the deeper the search. Each
    /// steps on the error left after all three (`diff`), so together they settle where the sum
    /// is right, and an entry shared with other positions learns what they have in common.
    pub fn update(&mut self, pos: &Position, depth: i32, diff: i32) {
        let [p, w, b] = Self::indices(pos);
        let weight = (depth * depth + 2 * depth + 1).min(128);
        step(&mut self.pawns[p], weight, diff);
        step(&mut self.pieces[0][w], weight, diff);
        step(&mut self.pieces[1][b], weight, diff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Phase, Variant};

    fn pos(variant: Variant, fen: &str) -> Position {
        Position::from_fen(variant, fen).unwrap()
    }

    /// Repeated findings move the correction towards them, never past the bounds, and only for
    /// positions with the same side and phase; a position sharing only the pawns or only one
    /// side's pieces shares that table's part of it.
    #[test]
    fn corrections_follow_the_search_within_bounds() {
        let mut c = CorrectionHistory::new();
        let a = pos(Variant::Chess, "4k3/pp6/8/8/8/8/PP6/4K3 w - - 0 1");
        let same_pawns = pos(Variant::Chess, "3qk3/pp6/8/8/8/8/PP6/3QK3 w - - 0 1");
        let same_white_pieces = pos(Variant::Chess, "3k4/p1p5/8/8/8/8/P1P5/4K3 w - - 0 1");
        let black_to_move = pos(Variant::Chess, "4k3/pp6/8/8/8/8/PP6/4K3 b - - 0 1");
        let nothing_shared = pos(Variant::Chess, "3k4/p1p5/8/8/8/8/P1P5/3K4 w - - 0 1");
        assert_eq!(c.correct(&a, 10), 10);
        // Feeding back what is left of the error, the sum settles at it.
        for _ in 0..100 {
            let left = 20 - (c.correct(&a, 10) - 10);
            c.update(&a, 8, left);
        }
        assert_eq!(c.correct(&a, 10) - 10, 20);
        let pawns_part = c.correct(&same_pawns, 10) - 10;
        let white_part = c.correct(&same_white_pieces, 10) - 10;
        assert!(pawns_part > 0 && pawns_part < 20, "{pawns_part}");
        assert!(white_part > 0 && white_part < pawns_part, "{white_part}");
        assert_eq!(c.correct(&black_to_move, 10), 10);
        assert_eq!(c.correct(&nothing_shared, 10), 10);
        // One finding moves it part of the way; the bounds hold however large the findings.
        let mut d = CorrectionHistory::new();
        d.update(&a, 2, 20);
        let once = d.correct(&a, 10) - 10;
        assert!(once > 0 && once < 20, "{once}");
        for _ in 0..100 {
            c.update(&a, 30, -5000);
        }
        assert_eq!(c.correct(&a, 0), -64);
        assert_eq!(c.correct(&same_pawns, 0), -32);
        c.clear();
        assert_eq!(c.correct(&a, 0), 0);
    }

    /// Half way through a Two Move turn is a row of its own.
    #[test]
    fn the_turn_phase_has_its_own_corrections() {
        let mut c = CorrectionHistory::new();
        let start = pos(
            Variant::TwoMove,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T",
        );
        let mv = *start
            .legal_moves()
            .iter()
            .find(|m| m.to_string() == "g1f3")
            .unwrap();
        let half_way = start.after(mv);
        assert_eq!(half_way.phase(), Phase::Second);
        c.update(&half_way, 10, 30);
        assert!(c.correct(&half_way, 0) > 0);
        assert_eq!(c.correct(&start, 0), 0);
    }
}
