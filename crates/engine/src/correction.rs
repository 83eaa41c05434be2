//! Correction history: how far the static evaluation has been from the search's result in positions
//! with the same pawns, learnt as the search goes and added to later static evaluations. Each search
//! thread has its own (see `search::Worker`).
//!
//! Kept per side to move and turn phase (half way through a turn the side moves again, which the
//! static evaluation misjudges differently from a turn's start), then by a hash of the pawns.

use crate::history::{side_phase_row, SIDE_PHASE_ROWS};
use rules::{Color, Position, Role};

/// Entries per (side, phase): 2^14, the hash's top 14 bits.
const SIZE: usize = 1 << 14;
/// Entries hold centipawns × GRAIN (finer steps than a centipawn for the running average).
const GRAIN: i32 = 256;
/// The weights of the running average are out of WEIGHT_SCALE.
const WEIGHT_SCALE: i32 = 256;
/// An entry corrects by at most 32 centipawns (stored × GRAIN).
const MAX: i32 = GRAIN * 32;

pub struct CorrectionHistory {
    table: Vec<i16>,
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

impl CorrectionHistory {
    pub fn new() -> CorrectionHistory {
        CorrectionHistory {
            table: vec![0; SIDE_PHASE_ROWS * SIZE],
        }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|v| *v = 0);
    }

    #[inline]
    fn index(pos: &Position) -> usize {
        side_phase_row(pos) * SIZE + pawn_index(pos)
    }

    /// `raw`, the static evaluation of `pos`, corrected.
    #[inline]
    pub fn correct(&self, pos: &Position, raw: i32) -> i32 {
        raw + self.table[Self::index(pos)] as i32 / GRAIN
    }

    /// A search of `depth` found `pos` worth `diff` centipawns more than its corrected static
    /// evaluation: move the entry towards that, the more the deeper the search.
    pub fn update(&mut self, pos: &Position, depth: i32, diff: i32) {
        let e = &mut self.table[Self::index(pos)];
        let weight = (depth * depth + 2 * depth + 1).min(128);
        let target = (*e as i32) + diff.clamp(-MAX / GRAIN, MAX / GRAIN) * GRAIN;
        let v = (*e as i32 * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        *e = v.clamp(-MAX, MAX) as i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Phase, Variant};

    fn pos(variant: Variant, fen: &str) -> Position {
        Position::from_fen(variant, fen).unwrap()
    }

    /// Repeated findings move the correction towards them, never past the bound, and only for
    /// positions with the same pawns, side and phase.
    #[test]
    fn corrections_follow_the_search_within_bounds() {
        let mut c = CorrectionHistory::new();
        let a = pos(Variant::Chess, "4k3/pp6/8/8/8/8/PP6/4K3 w - - 0 1");
        let same_pawns = pos(Variant::Chess, "3qk3/pp6/8/8/8/8/PP6/3QK3 w - - 0 1");
        let black_to_move = pos(Variant::Chess, "4k3/pp6/8/8/8/8/PP6/4K3 b - - 0 1");
        let other_pawns = pos(Variant::Chess, "4k3/pp6/8/8/8/8/P1P5/4K3 w - - 0 1");
        assert_eq!(c.correct(&a, 10), 10);
        c.update(&a, 8, 20);
        let once = c.correct(&a, 10) - 10;
        assert!(once > 0 && once <= 20, "{once}");
        for _ in 0..100 {
            c.update(&a, 8, 20);
        }
        let many = c.correct(&a, 10) - 10;
        assert!(many > once && many <= 32, "{many}");
        assert_eq!(c.correct(&same_pawns, 10) - 10, many);
        assert_eq!(c.correct(&black_to_move, 10), 10);
        assert_eq!(c.correct(&other_pawns, 10), 10);
        for _ in 0..100 {
            c.update(&a, 30, -5000);
        }
        assert_eq!(c.correct(&a, 0), -32);
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
