//! Fast exact completion tests. A first move is legal only if the turn it begins can be completed
//! ([`super::completable`] on the position after it). Playing every first move to find out is slow, so
//! this module first proves completability cheaply from the position before the move, and falls back to
//! the exact test only where the cheap proofs fail:
//!
//! - per position, *robust witnesses*: pieces that keep a legal move whatever other first move is made
//!   (so every first move by another non-king piece is completable), found with a few table lookups;
//! - per move, a witness search on the board after the move, computed from bitboards without playing
//!   the move (no copy-make, no hash, no full generator).

use super::{completable, gen_rules, Variant};
use crate::bitboard::{squares, tables, Bitboard};
use crate::movegen::{generate, GenRules, MoveCounter, MoveList, MoveSink, PawnMoves};
use crate::position::{Phase, Position};
use crate::types::{Color, Move, MoveKind, Role, Square};

/// Squares of the side to move's pieces whose first moves (for Double Move Chess: whose moves played as
/// the first half of a Double Move) need an individual completion test; 0 when no move needs one.
pub(super) fn tested_squares(pos: &Position) -> Bitboard {
    let own = pos.board.color(pos.turn);
    match (pos.variant, pos.state.phase) {
        (Variant::Chess, _) | (_, Phase::Second) | (Variant::TwoMove, Phase::Response) => 0,
        (Variant::DoubleMove, _) if !pos.state.double_move[pos.turn.index()] => 0,
        (Variant::Twinmove, _) => {
            // Only a pawn move leaves a piece move to be made.
            if twinmove_robust(pos) {
                0
            } else {
                own & pos.board.role(Role::Pawn)
            }
        }
        (Variant::TwoMove | Variant::DoubleMove, _) => {
            let king = own & pos.board.role(Role::King);
            match robust_witnesses(pos) {
                (0, _) => own,
                (1, w) => king | w,
                _ => king,
            }
        }
    }
}

/// Whether the first move `m` (generated in `pos`, so legal as a chess move) can be completed.
#[inline]
pub(super) fn first_move_completable(pos: &Position, m: Move) -> bool {
    quick_completable(pos, m) || completable(&pos.after(m))
}

/// The number of legal moves in `pos` (as [`super::legal_moves`] lists them), counted in bulk.
#[inline]
pub(crate) fn count_legal(pos: &Position) -> u64 {
    if pos.variant == Variant::Chess {
        let mut c = MoveCounter::default();
        generate(&pos.gen_input(), &GenRules::LEGAL, &mut c);
        return c.0;
    }
    count_legal_variant(pos)
}

fn count_legal_variant(pos: &Position) -> u64 {
    if pos.variant.king_capture() && pos.king_captured().is_some() {
        return 0;
    }
    let rules = gen_rules(pos);
    let input = pos.gen_input();
    let doubles = pos.variant == Variant::DoubleMove
        && pos.state.phase != Phase::Second
        && pos.state.double_move[pos.turn.index()];
    let tested = tested_squares(pos);
    if tested == 0 {
        let mut c = MoveCounter::default();
        generate(&input, &rules, &mut c);
        return if doubles { 2 * c.0 } else { c.0 };
    }
    // One generator pass: count everything, keep the moves that need a test.
    let mut sink = CountAndKeep {
        count: 0,
        tested,
        kept: MoveList::new(),
    };
    generate(&input, &rules, &mut sink);
    let failures = sink
        .kept
        .iter()
        .filter(|&&m| {
            let m = if doubles { m.as_double_start() } else { m };
            !first_move_completable(pos, m)
        })
        .count() as u64;
    let base = if doubles { 2 * sink.count } else { sink.count };
    base - failures
}

/// Counts every move and keeps those from the squares of `tested`.
struct CountAndKeep {
    count: u64,
    tested: Bitboard,
    kept: MoveList,
}

impl MoveSink for CountAndKeep {
    #[inline]
    fn add(&mut self, m: Move) -> bool {
        self.count += 1;
        if m.from().bb() & self.tested != 0 {
            self.kept.push(m);
        }
        false
    }
    #[inline]
    fn add_targets(&mut self, from: Square, targets: Bitboard) -> bool {
        self.count += popcount(targets) as u64;
        if from.bb() & self.tested != 0 {
            for to in squares(targets) {
                self.kept.push(Move::normal(from, to));
            }
        }
        false
    }
    #[inline]
    fn add_pawn_moves(&mut self, targets: Bitboard, delta: i8, shape: PawnMoves) -> bool {
        let n = popcount(targets) as u64;
        self.count += if shape == PawnMoves::Promotions {
            4 * n
        } else {
            n
        };
        let froms = if delta > 0 {
            targets >> delta
        } else {
            targets << -delta
        };
        if froms & self.tested != 0 {
            for to in squares(targets) {
                let from = Square((to.0 as i8 - delta) as u8);
                if from.bb() & self.tested == 0 {
                    continue;
                }
                match shape {
                    PawnMoves::Plain => self.kept.push(Move::normal(from, to)),
                    PawnMoves::DoublePush => {
                        self.kept.push(Move::new(from, to, MoveKind::DoublePush))
                    }
                    PawnMoves::Promotions => {
                        for r in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                            self.kept.push(Move::new(from, to, MoveKind::Promotion(r)));
                        }
                    }
                }
            }
        }
        false
    }
}

#[inline]
fn popcount(bb: Bitboard) -> u32 {
    bb.count_ones()
}

/// Two Move and Double Move Chess: how many own non-king pieces (up to two) keep a legal move after any
/// legal first move made by another non-king piece, and the square of the first one found.
///
/// A witness must not stand between its king and an enemy slider on an empty-board line (the first move
/// cannot add enemy sliders, so such a piece can never become pinned while the king stays), and must
/// have two targets that one first move cannot both take away: two knight targets (the first move fills
/// at most one square), or two slider targets adjacent to it (the first move blocks at most one ray).
/// After a legal first move the king is not in check, so an unpinned piece's move is legal.
fn robust_witnesses(pos: &Position) -> (u32, Bitboard) {
    let b = &pos.board;
    let us = pos.turn;
    let t = tables();
    let Some(ksq) = b.king(us) else {
        return (0, 0);
    };
    let own = b.color(us);
    let their = b.color(us.other());
    let occ = own | their;
    let rq = (b.role(Role::Rook) | b.role(Role::Queen)) & their;
    let bq = (b.role(Role::Bishop) | b.role(Role::Queen)) & their;
    let mut zone = 0;
    for s in squares((t.rook(ksq, 0) & rq) | (t.bishop(ksq, 0) & bq)) {
        zone |= t.between(ksq, s);
    }
    let avail = !own & !b.role(Role::King);
    let cands = own & !zone;
    let mut n = 0;
    let mut first = 0;
    let mut found = |w: Square| {
        n += 1;
        if first == 0 {
            first = w.bb();
        }
        n >= 2
    };
    for w in squares(cands & b.role(Role::Knight)) {
        if popcount(t.knight(w) & avail) >= 2 && found(w) {
            return (n, first);
        }
    }
    let near = |w: Square, att: Bitboard| popcount(att & avail & t.king(w)) >= 2;
    for w in squares(cands & b.role(Role::Bishop)) {
        if near(w, t.bishop(w, occ)) && found(w) {
            return (n, first);
        }
    }
    for w in squares(cands & b.role(Role::Rook)) {
        if near(w, t.rook(w, occ)) && found(w) {
            return (n, first);
        }
    }
    for w in squares(cands & b.role(Role::Queen)) {
        if near(w, t.queen(w, occ)) && found(w) {
            return (n, first);
        }
    }
    (n, first)
}

/// Twinmove: whether some own piece (not a pawn) keeps a pseudo-legal move after any pawn move: two
/// king or knight targets, or two slider targets adjacent to it (a pawn move fills one square).
fn twinmove_robust(pos: &Position) -> bool {
    let b = &pos.board;
    let t = tables();
    let own = b.color(pos.turn);
    let occ = b.occupied();
    let avail = !own;
    let near = |w: Square, att: Bitboard| popcount(att & avail & t.king(w)) >= 2;
    squares(own & b.role(Role::King)).any(|w| popcount(t.king(w) & avail) >= 2)
        || squares(own & b.role(Role::Knight)).any(|w| popcount(t.knight(w) & avail) >= 2)
        || squares(own & b.role(Role::Bishop)).any(|w| near(w, t.bishop(w, occ)))
        || squares(own & b.role(Role::Rook)).any(|w| near(w, t.rook(w, occ)))
        || squares(own & b.role(Role::Queen)).any(|w| near(w, t.queen(w, occ)))
}

/// A sufficient test: true only if, on the board after `m`, a piece that did not take part in `m` has a
/// move that completes the turn. Computed from bitboards of the board after `m` without playing it.
fn quick_completable(pos: &Position, m: Move) -> bool {
    let b = &pos.board;
    let us = pos.turn;
    let them = us.other();
    let t = tables();
    let from = m.from();
    let to = m.to();
    let mut own = b.color(us);
    let mut their = b.color(them);
    let mut moved = from.bb() | to.bb();
    match m.kind() {
        MoveKind::Castle => {
            let (rf, rt) = if to.file() == 6 {
                (Square(from.0 + 3), Square(from.0 + 1))
            } else {
                (Square(from.0 - 4), Square(from.0 - 1))
            };
            moved |= rf.bb() | rt.bb();
            own ^= moved;
        }
        MoveKind::EnPassant => {
            their ^= Square::from_coords(to.file(), from.rank()).bb();
            own ^= from.bb() | to.bb();
        }
        _ => {
            their &= !to.bb();
            own ^= from.bb() | to.bb();
        }
    }
    let occ = own | their;
    let witnesses = own & !moved;
    if pos.variant == Variant::Twinmove {
        // Any piece move (kings may be captured, no king safety); pawns may not move again.
        let avail = !own;
        return squares(witnesses & b.role(Role::King)).any(|w| t.king(w) & avail != 0)
            || squares(witnesses & b.role(Role::Knight)).any(|w| t.knight(w) & avail != 0)
            || squares(witnesses & b.role(Role::Bishop)).any(|w| t.bishop(w, occ) & avail != 0)
            || squares(witnesses & b.role(Role::Rook)).any(|w| t.rook(w, occ) & avail != 0)
            || squares(witnesses & b.role(Role::Queen)).any(|w| t.queen(w, occ) & avail != 0);
    }
    // Two Move / Double Move: a legal move (own king safe, the enemy king never captured) by a piece
    // other than the one(s) that moved. The king is not in check after the legal move `m`, so a move by
    // an unpinned non-king piece is legal.
    let ksq = if b.role_at(from) == Some(Role::King) {
        to
    } else {
        match b.king(us) {
            Some(k) => k,
            None => return false,
        }
    };
    let avail = !own & !b.role(Role::King);
    let rq = (b.role(Role::Rook) | b.role(Role::Queen)) & their;
    let bq = (b.role(Role::Bishop) | b.role(Role::Queen)) & their;
    let free = |w: Square| {
        let line = t.line(ksq, w);
        if line == 0 {
            return true;
        }
        let occ2 = occ ^ w.bb();
        (t.rook(ksq, occ2) & rq & line) == 0 && (t.bishop(ksq, occ2) & bq & line) == 0
    };
    let witnesses = witnesses & !b.role(Role::King);
    if squares(witnesses & b.role(Role::Knight)).any(|w| t.knight(w) & avail != 0 && free(w))
        || squares(witnesses & b.role(Role::Bishop))
            .any(|w| t.bishop(w, occ) & avail != 0 && free(w))
        || squares(witnesses & b.role(Role::Rook)).any(|w| t.rook(w, occ) & avail != 0 && free(w))
        || squares(witnesses & b.role(Role::Queen)).any(|w| t.queen(w, occ) & avail != 0 && free(w))
    {
        return true;
    }
    let up: i8 = match us {
        Color::White => 8,
        Color::Black => -8,
    };
    squares(witnesses & b.role(Role::Pawn)).any(|w| {
        let push = Square((w.0 as i8 + up) as u8).bb() & !occ;
        let caps = t.pawn(us, w) & their & avail;
        (push | caps) != 0 && free(w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variants::double_move;

    /// The reference: every generated move played out and tested exactly.
    fn slow_legal(pos: &Position) -> Vec<Move> {
        if pos.variant.king_capture() && pos.king_captured().is_some() {
            return Vec::new();
        }
        let mut list = MoveList::new();
        generate(&pos.gen_input(), &gen_rules(pos), &mut list);
        if pos.state.phase != Phase::Second && pos.variant == Variant::DoubleMove {
            double_move::add_double_starts(pos, &mut list);
        }
        let mut v: Vec<Move> = list.iter().copied().collect();
        if pos.state.phase != Phase::Second {
            v.retain(|&m| completable(&pos.after(m)));
        }
        v
    }

    /// Random playouts in every variant from several positions: the fast legal move list and count agree
    /// with the reference at every step.
    #[test]
    fn fast_completion_matches_reference() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
            "7k/8/8/8/8/8/1r6/K7 w - - 0 1",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = crate::rng::xorshift64(state);
            state
        };
        let mut checked = 0;
        for v in [Variant::TwoMove, Variant::DoubleMove, Variant::Twinmove] {
            for fen in fens {
                let seventh = match v {
                    Variant::DoubleMove => " WB",
                    _ => " T",
                };
                let Ok(start) = Position::from_fen(v, &format!("{fen}{seventh}")) else {
                    continue;
                };
                for _ in 0..40 {
                    let mut pos = start;
                    for _ in 0..60 {
                        let mut fast = pos.legal_moves().iter().copied().collect::<Vec<_>>();
                        let mut slow = slow_legal(&pos);
                        assert_eq!(count_legal(&pos), slow.len() as u64, "{pos:?}");
                        fast.sort();
                        slow.sort();
                        assert_eq!(fast, slow, "{pos:?}");
                        checked += 1;
                        if slow.is_empty() {
                            break;
                        }
                        pos.play_unchecked(slow[(next() % slow.len() as u64) as usize]);
                    }
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }
}
