//! Static evaluation from the side to move's point of view: tapered material and piece-square tables,
//! mobility, pawn structure, king safety, and the variants' own terms (an unspent Double Move, the extra
//! move of a player half way through a turn, an attacked king in Twinmove).

use rules::bitboard::{squares, tables, Bitboard, FILE_A};
use rules::{Color, Phase, Position, Role, Variant};

/// Centipawn values, middlegame and endgame.
pub const MATERIAL_MG: [i32; 6] = [82, 337, 365, 477, 1025, 0];
pub const MATERIAL_EG: [i32; 6] = [94, 281, 297, 512, 936, 0];
/// Simple values for move ordering and exchange decisions.
pub const PIECE_VALUE: [i32; 6] = [100, 320, 330, 500, 900, 20_000];

const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];

// Piece-square tables, from White's side, a8 first (as printed), mirrored for Black at lookup.
#[rustfmt::skip]
const PST_MG: [[i32; 64]; 6] = [
    [  0,  0,  0,  0,  0,  0,  0,  0,
      50, 50, 50, 50, 50, 50, 50, 50,
      10, 10, 20, 30, 30, 20, 10, 10,
       5,  5, 10, 25, 25, 10,  5,  5,
       0,  0,  0, 20, 20,  0,  0,  0,
       5, -5,-10,  0,  0,-10, -5,  5,
       5, 10, 10,-20,-20, 10, 10,  5,
       0,  0,  0,  0,  0,  0,  0,  0],
    [-50,-40,-30,-30,-30,-30,-40,-50,
     -40,-20,  0,  0,  0,  0,-20,-40,
     -30,  0, 10, 15, 15, 10,  0,-30,
     -30,  5, 15, 20, 20, 15,  5,-30,
     -30,  0, 15, 20, 20, 15,  0,-30,
     -30,  5, 10, 15, 15, 10,  5,-30,
     -40,-20,  0,  5,  5,  0,-20,-40,
     -50,-40,-30,-30,-30,-30,-40,-50],
    [-20,-10,-10,-10,-10,-10,-10,-20,
     -10,  0,  0,  0,  0,  0,  0,-10,
     -10,  0,  5, 10, 10,  5,  0,-10,
     -10,  5,  5, 10, 10,  5,  5,-10,
     -10,  0, 10, 10, 10, 10,  0,-10,
     -10, 10, 10, 10, 10, 10, 10,-10,
     -10,  5,  0,  0,  0,  0,  5,-10,
     -20,-10,-10,-10,-10,-10,-10,-20],
    [  0,  0,  0,  0,  0,  0,  0,  0,
       5, 10, 10, 10, 10, 10, 10,  5,
      -5,  0,  0,  0,  0,  0,  0, -5,
      -5,  0,  0,  0,  0,  0,  0, -5,
      -5,  0,  0,  0,  0,  0,  0, -5,
      -5,  0,  0,  0,  0,  0,  0, -5,
      -5,  0,  0,  0,  0,  0,  0, -5,
       0,  0,  0,  5,  5,  0,  0,  0],
    [-20,-10,-10, -5, -5,-10,-10,-20,
     -10,  0,  0,  0,  0,  0,  0,-10,
     -10,  0,  5,  5,  5,  5,  0,-10,
      -5,  0,  5,  5,  5,  5,  0, -5,
       0,  0,  5,  5,  5,  5,  0, -5,
     -10,  5,  5,  5,  5,  5,  0,-10,
     -10,  0,  5,  0,  0,  0,  0,-10,
     -20,-10,-10, -5, -5,-10,-10,-20],
    [-30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -20,-30,-30,-40,-40,-30,-30,-20,
     -10,-20,-20,-20,-20,-20,-20,-10,
      20, 20,  0,  0,  0,  0, 20, 20,
      20, 30, 10,  0,  0, 10, 30, 20],
];

#[rustfmt::skip]
const KING_EG: [i32; 64] = [
    -50,-40,-30,-20,-20,-30,-40,-50,
    -30,-20,-10,  0,  0,-10,-20,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-30,  0,  0,  0,  0,-30,-30,
    -50,-30,-30,-30,-30,-30,-30,-50];

#[rustfmt::skip]
const PAWN_EG: [i32; 64] = [
      0,  0,  0,  0,  0,  0,  0,  0,
     90, 90, 90, 90, 90, 90, 90, 90,
     50, 50, 50, 50, 50, 50, 50, 50,
     30, 30, 30, 30, 30, 30, 30, 30,
     15, 15, 15, 15, 15, 15, 15, 15,
      5,  5,  5,  5,  5,  5,  5,  5,
      0,  0,  0,  0,  0,  0,  0,  0,
      0,  0,  0,  0,  0,  0,  0,  0];

/// Tunable weights (see docs/engine.md).
pub struct Weights {
    pub mobility: [i32; 6],
    pub doubled_pawn: i32,
    pub isolated_pawn: i32,
    pub passed_pawn: [i32; 8],
    pub king_shield: i32,
    pub king_attack: i32,
    pub bishop_pair: i32,
    /// An unspent Double Move (Double Move Chess).
    pub double_move_ability: i32,
    /// Being half way through a turn: one more move to make.
    pub second_move: i32,
    pub tempo: i32,
}

pub const WEIGHTS: Weights = Weights {
    mobility: [0, 4, 4, 2, 1, 0],
    doubled_pawn: 12,
    isolated_pawn: 10,
    passed_pawn: [0, 5, 10, 20, 35, 60, 100, 0],
    king_shield: 8,
    king_attack: 6,
    bishop_pair: 30,
    double_move_ability: 60,
    second_move: 45,
    tempo: 10,
};

#[inline]
fn pst_index(color: Color, sq: rules::Square) -> usize {
    // Tables are printed a8..h1; square 0 is a1.
    match color {
        Color::White => (sq.0 ^ 56) as usize,
        Color::Black => sq.0 as usize,
    }
}

fn file_mask(file: u8) -> Bitboard {
    FILE_A << file
}

fn adjacent_files(file: u8) -> Bitboard {
    let mut m = 0;
    if file > 0 {
        m |= file_mask(file - 1);
    }
    if file < 7 {
        m |= file_mask(file + 1);
    }
    m
}

/// Squares in front of `sq` (from `color`'s side) on its file and the adjacent files.
fn passed_span(color: Color, sq: rules::Square) -> Bitboard {
    let files = file_mask(sq.file()) | adjacent_files(sq.file());
    let ahead = match color {
        Color::White => {
            if sq.rank() == 7 {
                0
            } else {
                !0u64 << ((sq.rank() + 1) * 8)
            }
        }
        Color::Black => {
            if sq.rank() == 0 {
                0
            } else {
                !0u64 >> ((8 - sq.rank()) * 8)
            }
        }
    };
    files & ahead
}

/// Evaluation of one side: (middlegame, endgame) scores.
fn side_terms(pos: &Position, us: Color, w: &Weights) -> (i32, i32) {
    let t = tables();
    let b = pos.board();
    let them = us.other();
    let occ = b.occupied();
    let own = b.color(us);
    let (mut mg, mut eg) = (0, 0);
    let their_pawns = b.pieces(them, Role::Pawn);
    let own_pawns = b.pieces(us, Role::Pawn);
    let their_king_zone = b.king(them).map_or(0, |k| t.king(k) | k.bb());
    let mut attackers_on_king = 0;

    for role in Role::ALL {
        for sq in squares(b.pieces(us, role)) {
            let i = pst_index(us, sq);
            mg += MATERIAL_MG[role.index()] + PST_MG[role.index()][i];
            eg += MATERIAL_EG[role.index()]
                + match role {
                    Role::King => KING_EG[i],
                    Role::Pawn => PAWN_EG[i],
                    _ => PST_MG[role.index()][i],
                };
            let attacks = match role {
                Role::Knight => t.knight(sq),
                Role::Bishop => t.bishop(sq, occ),
                Role::Rook => t.rook(sq, occ),
                Role::Queen => t.queen(sq, occ),
                _ => 0,
            };
            if attacks != 0 {
                let mob = (attacks & !own).count_ones() as i32 * w.mobility[role.index()];
                mg += mob;
                eg += mob;
                if attacks & their_king_zone != 0 {
                    attackers_on_king += 1;
                }
            }
            if role == Role::Pawn {
                if own_pawns & file_mask(sq.file()) & !sq.bb() != 0 {
                    mg -= w.doubled_pawn / 2;
                    eg -= w.doubled_pawn / 2;
                }
                if own_pawns & adjacent_files(sq.file()) == 0 {
                    mg -= w.isolated_pawn;
                    eg -= w.isolated_pawn;
                }
                if passed_span(us, sq) & their_pawns == 0 {
                    let r = sq.relative_rank(us) as usize;
                    mg += w.passed_pawn[r] / 2;
                    eg += w.passed_pawn[r];
                }
            }
        }
    }
    if b.pieces(us, Role::Bishop).count_ones() >= 2 {
        mg += w.bishop_pair;
        eg += w.bishop_pair;
    }
    if let Some(k) = b.king(us) {
        let shield = t.king(k) & own_pawns;
        mg += shield.count_ones() as i32 * w.king_shield;
    }
    mg += attackers_on_king * attackers_on_king * w.king_attack;
    (mg, eg)
}

fn game_phase(pos: &Position) -> i32 {
    let b = pos.board();
    let p: i32 = Role::ALL
        .iter()
        .map(|r| b.role(*r).count_ones() as i32 * PHASE_WEIGHT[r.index()])
        .sum();
    p.min(24)
}

/// The evaluation in centipawns for the side to move.
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &WEIGHTS)
}

pub fn evaluate_with(pos: &Position, w: &Weights) -> i32 {
    let us = pos.turn();
    let (mg_us, eg_us) = side_terms(pos, us, w);
    let (mg_them, eg_them) = side_terms(pos, us.other(), w);
    let phase = game_phase(pos);
    let mg = mg_us - mg_them;
    let eg = eg_us - eg_them;
    let mut score = (mg * phase + eg * (24 - phase)) / 24;
    score += w.tempo;
    if pos.phase() == Phase::Second {
        score += w.second_move;
    }
    if pos.variant() == Variant::DoubleMove {
        let st = pos.state();
        let own = st.double_move[us.index()] as i32;
        let theirs = st.double_move[us.other().index()] as i32;
        score += (own - theirs) * w.double_move_ability;
    }
    if pos.variant() == Variant::Twinmove {
        // An attacked king at the start of the opponent's turn is captured: the attacker is winning.
        if pos.at_turn_start() && pos.board().king_attacked(us.other()) {
            score += 5000;
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_balanced_and_symmetric() {
        for v in Variant::ALL {
            let p = Position::start(v);
            let e = evaluate(&p);
            assert!(e.abs() < 80, "{v}: {e}");
        }
        let p = Position::from_fen(
            Variant::Chess,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
        )
        .unwrap();
        assert_eq!(evaluate(&p), evaluate(&Position::start(Variant::Chess)));
    }

    #[test]
    fn material_counts() {
        let up_a_queen = Position::from_fen(
            Variant::Chess,
            "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        )
        .unwrap();
        assert!(evaluate(&up_a_queen) > 700);
    }
}
