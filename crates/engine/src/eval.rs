//! Static evaluation from the side to move's point of view, as a linear function of one parameter
//! vector ([`WEIGHTS`], tuned by `tune.rs`): tapered material and piece-square tables, mobility, pawn
//! structure, king safety, and the variants' own terms. One generic function lists the features; the
//! search sums them ([`evaluate`]), the tuner records their coefficients ([`trace`]).

use crate::weights::WEIGHTS;
use rules::bitboard::{squares, tables, Bitboard, FILE_A, FILE_H};
use rules::{Color, Phase, Position, Role, Square, Variant};

/// Simple values for move ordering and exchange decisions.
pub const PIECE_VALUE: [i32; 6] = [100, 320, 330, 500, 900, 20_000];

/// The game phase: 24 with all pieces on the board, 0 with only pawns and kings.
pub const PHASE_MAX: i32 = 24;
const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];

/// Score for the side to move when the enemy king is attacked at the start of our turn in Twinmove:
/// it will be captured. A fixed rule, not a tuned weight.
pub const TWINMOVE_KING_EN_PRISE: i32 = 5000;

// Parameter layout. Every parameter is a (middlegame, endgame) pair; a feature's value is blended by
// the game phase. Indices into WEIGHTS:
/// Material of pawn, knight, bishop, rook, queen.
pub const MATERIAL: usize = 0;
/// Piece-square tables: 6 roles × 64 squares, from White's side with a8 first (as printed); Black's
/// pieces use the mirrored square.
pub const PST: usize = MATERIAL + 5;
/// Mobility by the number of reachable squares (not own pieces, not attacked by enemy pawns).
pub const MOBILITY_KNIGHT: usize = PST + 6 * 64;
pub const MOBILITY_BISHOP: usize = MOBILITY_KNIGHT + 9;
pub const MOBILITY_ROOK: usize = MOBILITY_BISHOP + 14;
pub const MOBILITY_QUEEN: usize = MOBILITY_ROOK + 15;
/// Per pawn with another own pawn in front of it on its file.
pub const DOUBLED_PAWN: usize = MOBILITY_QUEEN + 28;
/// Per pawn with no own pawn on the adjacent files.
pub const ISOLATED_PAWN: usize = DOUBLED_PAWN + 1;
/// Per passed pawn, by its rank from its own side (0..7; 1..6 occur).
pub const PASSED_PAWN: usize = ISOLATED_PAWN + 1;
/// Per own pawn next to the own king.
pub const KING_SHIELD: usize = PASSED_PAWN + 8;
/// By the number of pieces attacking the enemy king's zone (capped at 7; 0 has no term).
pub const KING_ATTACKERS: usize = KING_SHIELD + 1;
pub const BISHOP_PAIR: usize = KING_ATTACKERS + 8;
/// Per rook on a file without pawns, or without own pawns only.
pub const ROOK_OPEN_FILE: usize = BISHOP_PAIR + 1;
pub const ROOK_SEMI_OPEN_FILE: usize = ROOK_OPEN_FILE + 1;
/// The side to move at the start of a turn, per variant (chess, two-move, double-move, twinmove).
pub const TEMPO: usize = ROOK_SEMI_OPEN_FILE + 1;
/// The side to move half way through its turn (one more move to make), per variant (chess unused).
pub const SECOND_MOVE: usize = TEMPO + 4;
/// Two Move Chess: the side to move has a response turn (one move only).
pub const RESPONSE_TURN: usize = SECOND_MOVE + 4;
/// Double Move Chess: per side with its Double Move unspent.
pub const DOUBLE_MOVE_ABILITY: usize = RESPONSE_TURN + 1;
pub const NUM_PARAMS: usize = DOUBLE_MOVE_ABILITY + 1;

/// A named block of parameters, for the tuner's output and its `--params` choice.
pub struct ParamGroup {
    pub name: &'static str,
    pub start: usize,
    pub len: usize,
    /// Only the variants' positions give it coefficients (moved by `--params variant`).
    pub variant: bool,
}

const fn group(name: &'static str, start: usize, len: usize, variant: bool) -> ParamGroup {
    ParamGroup {
        name,
        start,
        len,
        variant,
    }
}

pub const GROUPS: &[ParamGroup] = &[
    group(
        "material: pawn knight bishop rook queen",
        MATERIAL,
        5,
        false,
    ),
    group("pst pawn", PST, 64, false),
    group("pst knight", PST + 64, 64, false),
    group("pst bishop", PST + 2 * 64, 64, false),
    group("pst rook", PST + 3 * 64, 64, false),
    group("pst queen", PST + 4 * 64, 64, false),
    group("pst king", PST + 5 * 64, 64, false),
    group("mobility knight (0..8 squares)", MOBILITY_KNIGHT, 9, false),
    group("mobility bishop (0..13)", MOBILITY_BISHOP, 14, false),
    group("mobility rook (0..14)", MOBILITY_ROOK, 15, false),
    group("mobility queen (0..27)", MOBILITY_QUEEN, 28, false),
    group("doubled pawn", DOUBLED_PAWN, 1, false),
    group("isolated pawn", ISOLATED_PAWN, 1, false),
    group("passed pawn by relative rank", PASSED_PAWN, 8, false),
    group("king shield pawn", KING_SHIELD, 1, false),
    group("king zone attackers (0..7)", KING_ATTACKERS, 8, false),
    group("bishop pair", BISHOP_PAIR, 1, false),
    group("rook on open file", ROOK_OPEN_FILE, 1, false),
    group("rook on semi-open file", ROOK_SEMI_OPEN_FILE, 1, false),
    group("tempo: chess", TEMPO, 1, false),
    group("tempo: two-move double-move twinmove", TEMPO + 1, 3, true),
    group(
        "second move: (chess) two-move double-move twinmove",
        SECOND_MOVE,
        4,
        true,
    ),
    group("response turn (two-move)", RESPONSE_TURN, 1, true),
    group("double move ability", DOUBLE_MOVE_ABILITY, 1, true),
];

/// Receives the features of a position: the fast path adds weights, the tuner's trace counts them.
pub trait Accumulator {
    /// Feature `param` occurs `n` times for `color`.
    fn add(&mut self, color: Color, param: usize, n: i32);
    /// A piece of `color` on `sq`: its material and its piece-square entry.
    fn piece(&mut self, color: Color, role: Role, sq: Square);
}

#[inline(always)]
fn pst_index(color: Color, sq: Square) -> usize {
    // Tables are printed a8..h1; square 0 is a1.
    match color {
        Color::White => (sq.0 ^ 56) as usize,
        Color::Black => sq.0 as usize,
    }
}

fn variant_index(v: Variant) -> usize {
    match v {
        Variant::Chess => 0,
        Variant::TwoMove => 1,
        Variant::DoubleMove => 2,
        Variant::Twinmove => 3,
    }
}

#[inline(always)]
fn north_fill(mut b: Bitboard) -> Bitboard {
    b |= b << 8;
    b |= b << 16;
    b | (b << 32)
}

#[inline(always)]
fn south_fill(mut b: Bitboard) -> Bitboard {
    b |= b >> 8;
    b |= b >> 16;
    b | (b >> 32)
}

#[inline(always)]
fn east_west(b: Bitboard) -> Bitboard {
    ((b << 1) & !FILE_A) | ((b >> 1) & !FILE_H)
}

#[inline(always)]
fn pawn_attacks(color: Color, pawns: Bitboard) -> Bitboard {
    match color {
        Color::White => east_west(pawns << 8),
        Color::Black => east_west(pawns >> 8),
    }
}

/// Squares strictly in front of `pawns` (from `color`'s side) on their files.
#[inline(always)]
fn front_span(color: Color, pawns: Bitboard) -> Bitboard {
    match color {
        Color::White => north_fill(pawns << 8),
        Color::Black => south_fill(pawns >> 8),
    }
}

/// The features of one side.
#[inline(always)]
fn side_terms<A: Accumulator>(pos: &Position, us: Color, acc: &mut A) {
    let t = tables();
    let b = pos.board();
    let them = us.other();
    let occ = b.occupied();
    let own = b.color(us);
    let own_pawns = b.pieces(us, Role::Pawn);
    let their_pawns = b.pieces(them, Role::Pawn);
    let all_pawns = own_pawns | their_pawns;
    let area = !own & !pawn_attacks(them, their_pawns);
    let their_king_zone = b.king(them).map_or(0, |k| t.king(k) | k.bb());
    let mut attackers = 0;

    for sq in squares(b.pieces(us, Role::Knight)) {
        acc.piece(us, Role::Knight, sq);
        let a = t.knight(sq);
        acc.add(us, MOBILITY_KNIGHT + (a & area).count_ones() as usize, 1);
        attackers += (a & their_king_zone != 0) as usize;
    }
    for sq in squares(b.pieces(us, Role::Bishop)) {
        acc.piece(us, Role::Bishop, sq);
        let a = t.bishop(sq, occ);
        acc.add(us, MOBILITY_BISHOP + (a & area).count_ones() as usize, 1);
        attackers += (a & their_king_zone != 0) as usize;
    }
    for sq in squares(b.pieces(us, Role::Rook)) {
        acc.piece(us, Role::Rook, sq);
        let a = t.rook(sq, occ);
        acc.add(us, MOBILITY_ROOK + (a & area).count_ones() as usize, 1);
        attackers += (a & their_king_zone != 0) as usize;
        let file = FILE_A << sq.file();
        if file & all_pawns == 0 {
            acc.add(us, ROOK_OPEN_FILE, 1);
        } else if file & own_pawns == 0 {
            acc.add(us, ROOK_SEMI_OPEN_FILE, 1);
        }
    }
    for sq in squares(b.pieces(us, Role::Queen)) {
        acc.piece(us, Role::Queen, sq);
        let a = t.queen(sq, occ);
        acc.add(us, MOBILITY_QUEEN + (a & area).count_ones() as usize, 1);
        attackers += (a & their_king_zone != 0) as usize;
    }
    for sq in squares(own_pawns) {
        acc.piece(us, Role::Pawn, sq);
    }
    if let Some(k) = b.king(us) {
        acc.piece(us, Role::King, k);
        acc.add(us, KING_SHIELD, (t.king(k) & own_pawns).count_ones() as i32);
    }

    // Pawn structure from whole bitboards.
    let doubled = own_pawns & front_span(them, own_pawns);
    acc.add(us, DOUBLED_PAWN, doubled.count_ones() as i32);
    let files = north_fill(south_fill(own_pawns));
    let isolated = own_pawns & !east_west(files);
    acc.add(us, ISOLATED_PAWN, isolated.count_ones() as i32);
    let stoppers = front_span(them, their_pawns);
    let passed = own_pawns & !(stoppers | east_west(stoppers));
    for sq in squares(passed) {
        acc.add(us, PASSED_PAWN + sq.relative_rank(us) as usize, 1);
    }

    if b.pieces(us, Role::Bishop).count_ones() >= 2 {
        acc.add(us, BISHOP_PAIR, 1);
    }
    if attackers > 0 {
        acc.add(us, KING_ATTACKERS + attackers.min(7), 1);
    }
}

/// Every tuned feature of the position.
#[inline(always)]
fn features<A: Accumulator>(pos: &Position, acc: &mut A) {
    side_terms(pos, Color::White, acc);
    side_terms(pos, Color::Black, acc);
    let us = pos.turn();
    let v = variant_index(pos.variant());
    match pos.phase() {
        Phase::Start => acc.add(us, TEMPO + v, 1),
        Phase::Response => acc.add(us, RESPONSE_TURN, 1),
        Phase::Second => acc.add(us, SECOND_MOVE + v, 1),
    }
    if pos.variant() == Variant::DoubleMove {
        let st = pos.state();
        for c in Color::ALL {
            acc.add(c, DOUBLE_MOVE_ABILITY, st.double_move[c.index()] as i32);
        }
    }
}

/// The untuned part, for the side to move.
#[inline(always)]
/// The evaluation's fixed rules, added to any evaluation (the network's too): a Twinmove side whose
/// turn starts with the enemy king attacked captures it.
pub fn rule_terms(pos: &Position) -> i32 {
    if pos.variant() == Variant::Twinmove
        && pos.at_turn_start()
        && pos.board().king_attacked(pos.turn().other())
    {
        TWINMOVE_KING_EN_PRISE
    } else {
        0
    }
}

/// The game phase of the position, 0..=PHASE_MAX.
pub fn game_phase(pos: &Position) -> i32 {
    let b = pos.board();
    let p: i32 = Role::ALL
        .iter()
        .map(|r| b.role(*r).count_ones() as i32 * PHASE_WEIGHT[r.index()])
        .sum();
    p.min(PHASE_MAX)
}

/// Material plus piece-square entry per colour, role and square, folded at compile time.
static PSQ: [[[[i32; 2]; 64]; 6]; 2] = {
    let mut t = [[[[0; 2]; 64]; 6]; 2];
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut sq = 0;
            while sq < 64 {
                let i = if c == 0 { sq ^ 56 } else { sq };
                let pst = WEIGHTS[PST + r * 64 + i];
                let mat = if r < 5 { WEIGHTS[MATERIAL + r] } else { [0, 0] };
                t[c][r][sq] = [mat[0] + pst[0], mat[1] + pst[1]];
                sq += 1;
            }
            r += 1;
        }
        c += 1;
    }
    t
};

/// The fast path: (middlegame, endgame) sums per colour.
#[derive(Default)]
struct Sum {
    s: [[i32; 2]; 2],
}

impl Accumulator for Sum {
    #[inline(always)]
    fn add(&mut self, color: Color, param: usize, n: i32) {
        let w = WEIGHTS[param];
        let s = &mut self.s[color.index()];
        s[0] += w[0] * n;
        s[1] += w[1] * n;
    }
    #[inline(always)]
    fn piece(&mut self, color: Color, role: Role, sq: Square) {
        let w = PSQ[color.index()][role.index()][sq.index() & 63];
        let s = &mut self.s[color.index()];
        s[0] += w[0];
        s[1] += w[1];
    }
}

/// The evaluation in centipawns for the side to move.
pub fn evaluate(pos: &Position) -> i32 {
    let mut acc = Sum::default();
    features(pos, &mut acc);
    let mg = acc.s[0][0] - acc.s[1][0];
    let eg = acc.s[0][1] - acc.s[1][1];
    let phase = game_phase(pos);
    let white = (mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX;
    let score = match pos.turn() {
        Color::White => white,
        Color::Black => -white,
    };
    score + rule_terms(pos)
}

/// A position's evaluation as coefficients of the parameters, from White's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// (parameter, White's count minus Black's), nonzero only, by parameter.
    pub coefs: Vec<(u16, i16)>,
    /// The game phase: the middlegame weight is phase/PHASE_MAX, the endgame one the rest.
    pub phase: i32,
    /// The untuned part, from White's point of view.
    pub fixed: i32,
}

impl Trace {
    /// White's evaluation under `weights` without rounding: `evaluate` is this (for the side to
    /// move) truncated towards zero before the fixed part is added.
    pub fn eval(&self, weights: &[[f64; 2]]) -> f64 {
        let mut mg = 0.0;
        let mut eg = 0.0;
        for &(i, c) in &self.coefs {
            mg += weights[i as usize][0] * c as f64;
            eg += weights[i as usize][1] * c as f64;
        }
        let p = self.phase as f64 / PHASE_MAX as f64;
        mg * p + eg * (1.0 - p) + self.fixed as f64
    }
}

/// Counts per parameter instead of sums.
struct Counter {
    counts: Vec<i32>,
}

impl Accumulator for Counter {
    fn add(&mut self, color: Color, param: usize, n: i32) {
        self.counts[param] += if color == Color::White { n } else { -n };
    }
    fn piece(&mut self, color: Color, role: Role, sq: Square) {
        if role != Role::King {
            self.add(color, MATERIAL + role.index(), 1);
        }
        self.add(color, PST + role.index() * 64 + pst_index(color, sq), 1);
    }
}

/// The coefficients of `pos`'s evaluation (the tuner's view of [`evaluate`]).
pub fn trace(pos: &Position) -> Trace {
    let mut acc = Counter {
        counts: vec![0; NUM_PARAMS],
    };
    features(pos, &mut acc);
    let coefs = acc
        .counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 0)
        .map(|(i, &c)| (i as u16, c as i16))
        .collect();
    let fixed = rule_terms(pos);
    Trace {
        coefs,
        phase: game_phase(pos),
        fixed: if pos.turn() == Color::White {
            fixed
        } else {
            -fixed
        },
    }
}

/// The current weights as floating point, the tuner's starting point.
pub fn weights_f64() -> Vec<[f64; 2]> {
    WEIGHTS.iter().map(|w| [w[0] as f64, w[1] as f64]).collect()
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

    #[test]
    fn groups_cover_every_parameter_once() {
        let mut next = 0;
        for g in GROUPS {
            assert_eq!(g.start, next, "{}", g.name);
            next += g.len;
        }
        assert_eq!(next, NUM_PARAMS);
    }

    #[test]
    fn pawn_structure_features() {
        // White c2 c4 d5 h2 against Black a7 e6.
        let p =
            Position::from_fen(Variant::Chess, "4k3/p7/4p3/3P4/2P5/8/2P4P/4K3 w - - 0 1").unwrap();
        let t = trace(&p);
        let coef = |i: usize| {
            t.coefs
                .iter()
                .find(|(j, _)| *j as usize == i)
                .map_or(0, |(_, c)| *c)
        };
        // c2 stands behind c4.
        assert_eq!(coef(DOUBLED_PAWN), 1);
        // h2 against a7 and e6.
        assert_eq!(coef(ISOLATED_PAWN), 1 - 2);
        // Passed: c2, h2 (rank index 1), c4 (3) against a7 (1); d5 and e6 stop each other.
        assert_eq!(coef(PASSED_PAWN + 1), 2 - 1);
        assert_eq!(coef(PASSED_PAWN + 3), 1);
        assert_eq!(coef(PASSED_PAWN + 4), 0);
        assert_eq!(coef(PASSED_PAWN + 5), 0);
    }
}
