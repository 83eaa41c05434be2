//! Move ordering. The rules crate lists all the legal moves of a position at once (or only the
//! tactical ones, for quiescence), so the picker scores the list once and then hands the moves out
//! best first, stage by stage: the table's move; captures that do not lose material by SEE (most
//! valuable victim, then capture history and least valuable attacker); queen promotions; the two killers; the countermove;
//! quiet moves by history and continuation history; losing captures; under-promotions. Each stage is a band of scores, so a
//! move's stage is known from its score ([`Stage::of`]). No allocation per node: a picker lives in
//! each ply of a search thread's stack.

use crate::eval::PIECE_VALUE;
use crate::history::{Context, History};
use crate::see::see_ge;
use rules::{Move, MoveList, Position, Role, Variant};

/// The ordering stages, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    TtMove,
    GoodCapture,
    QueenPromotion,
    Killer,
    Countermove,
    Quiet,
    BadCapture,
    UnderPromotion,
}

const TT_MOVE: i32 = 30_000_000;
const GOOD_CAPTURE: i32 = 20_000_000;
const QUEEN_PROMOTION: i32 = 19_000_000;
const KILLER_1: i32 = 15_000_000;
const KILLER_2: i32 = 14_000_000;
const COUNTERMOVE: i32 = 13_000_000;
const BAD_CAPTURE: i32 = -10_000_000;
/// A plain quiet move's score until the picker reaches the quiet moves and scores them: below any
/// history score (each of its three terms is within ±16,384), above the losing captures.
const QUIET_UNSCORED: i32 = -5_000_000;
const UNDER_PROMOTION: i32 = -20_000_000;

impl Stage {
    /// The stage of a main-search ordering score.
    pub fn of(score: i32) -> Stage {
        match score {
            s if s >= TT_MOVE => Stage::TtMove,
            s if s >= GOOD_CAPTURE => Stage::GoodCapture,
            s if s >= QUEEN_PROMOTION => Stage::QueenPromotion,
            s if s >= KILLER_2 => Stage::Killer,
            s if s >= COUNTERMOVE => Stage::Countermove,
            s if s > BAD_CAPTURE + 1_000_000 => Stage::Quiet,
            s if s > UNDER_PROMOTION + 1_000_000 => Stage::BadCapture,
            _ => Stage::UnderPromotion,
        }
    }
}

pub fn is_capture(pos: &Position, m: Move) -> bool {
    m.is_en_passant() || pos.board().piece_at(m.to()).is_some()
}

/// Captures and queen promotions.
pub fn is_tactical(pos: &Position, m: Move) -> bool {
    is_capture(pos, m) || m.promotion() == Some(Role::Queen)
}

pub fn victim_value(pos: &Position, m: Move) -> i32 {
    if m.is_en_passant() {
        PIECE_VALUE[Role::Pawn.index()]
    } else {
        pos.board()
            .role_at(m.to())
            .map_or(0, |r| PIECE_VALUE[r.index()])
    }
}

/// Most valuable victim, least valuable attacker.
fn mvv_lva(pos: &Position, m: Move) -> i32 {
    let attacker = pos
        .board()
        .role_at(m.from())
        .map_or(0, |r| PIECE_VALUE[r.index()]);
    victim_value(pos, m) * 8 - attacker / 100
}

/// The order of a capture among captures: most valuable victim first, then capture history, then the
/// least valuable attacker. The history term (±512) reorders only captures of a knight and of a
/// bishop, which are worth about the same; every other step between victims is over 1024.
fn capture_order(pos: &Position, m: Move, history: &History) -> i32 {
    mvv_lva(pos, m) + history.capture_score(pos, m) / 32
}

/// What the ordering knows at a node besides the position: the table's move, the ply's killers,
/// the countermove of the previous move and the continuation-history context.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints {
    pub tt_move: Option<Move>,
    pub killers: [Option<Move>; 2],
    pub counter: Option<Move>,
    pub context: Context,
}

/// The main search's ordering score of `m` (higher first; see [`Stage`]).
pub fn order_score(pos: &Position, m: Move, hints: &Hints, history: &History) -> i32 {
    let score = order_score_before_history(pos, m, hints, history)
        .unwrap_or_else(|| history.quiet_score(pos, m, &hints.context));
    if Stage::of(score) == Stage::GoodCapture && !see_ge(pos, m, 0) {
        losing(score)
    } else {
        score
    }
}

/// The score of a capture scored as winning (`score` in the [`Stage::GoodCapture`] band) that
/// loses material by SEE: the same order among the losing captures.
fn losing(score: i32) -> i32 {
    score - GOOD_CAPTURE + BAD_CAPTURE
}

/// [`order_score`], except that every capture but the table's move is scored as winning (the
/// picker tests SEE only when one comes up, see [`MovePicker::next_move`]) and a plain quiet move
/// (not the table's move, a killer or the countermove) is `None`: it is scored by history only
/// when the picker reaches it, so a node that cuts off before its quiet moves never reads their
/// history.
fn order_score_before_history(
    pos: &Position,
    m: Move,
    hints: &Hints,
    history: &History,
) -> Option<i32> {
    if Some(m) == hints.tt_move {
        return Some(TT_MOVE);
    }
    if is_capture(pos, m) {
        return Some(GOOD_CAPTURE + capture_order(pos, m, history));
    }
    match m.promotion() {
        Some(Role::Queen) => return Some(QUEEN_PROMOTION),
        Some(_) => return Some(UNDER_PROMOTION),
        None => {}
    }
    if hints.killers[0] == Some(m) {
        return Some(KILLER_1);
    }
    if hints.killers[1] == Some(m) {
        return Some(KILLER_2);
    }
    if hints.counter == Some(m) {
        return Some(COUNTERMOVE);
    }
    None
}

/// Whether the picker scores plain quiet moves only when it reaches them and the search drops the
/// remaining quiet moves at once ([`MovePicker::skip_quiets`]) once late-move pruning stops them:
/// orthodox chess, where every move hands the turn over and a match showed the gain (docs/engine.md,
/// "Move picking speed"). The variants keep the picking they were measured with.
pub fn quick_picking(variant: Variant) -> bool {
    variant == Variant::Chess
}

/// The moves of one node and their ordering scores.
pub struct MovePicker {
    moves: MoveList,
    scores: [i32; MoveList::CAPACITY],
    next: usize,
    /// In orthodox chess plain quiet moves wait at [`QUIET_UNSCORED`] until every better move was
    /// handed out.
    unscored: bool,
    context: Context,
}

impl Default for MovePicker {
    fn default() -> Self {
        MovePicker::new()
    }
}

impl MovePicker {
    pub fn new() -> MovePicker {
        MovePicker {
            moves: MoveList::new(),
            scores: [0; MoveList::CAPACITY],
            next: 0,
            unscored: false,
            context: Context::default(),
        }
    }

    /// Lists `pos`'s moves (all, or with `tactical_only` captures and promotions, ordered by most
    /// valuable victim and capture history after the table's move) with their ordering scores.
    pub fn generate(
        &mut self,
        pos: &Position,
        hints: &Hints,
        history: &History,
        tactical_only: bool,
    ) {
        if tactical_only {
            pos.tactical_moves_into(&mut self.moves);
        } else {
            pos.legal_moves_into(&mut self.moves);
        }
        self.unscored = false;
        self.context = hints.context;
        let lazy = quick_picking(pos.variant());
        for i in 0..self.moves.len() {
            let m = self.moves.as_slice()[i];
            self.scores[i] = if tactical_only && Some(m) != hints.tt_move {
                capture_order(pos, m, history) + m.promotion().map_or(0, |r| PIECE_VALUE[r.index()])
            } else {
                match order_score_before_history(pos, m, hints, history) {
                    Some(score) => score,
                    None if lazy => {
                        self.unscored = true;
                        QUIET_UNSCORED
                    }
                    None => history.quiet_score(pos, m, &hints.context),
                }
            };
        }
        self.next = 0;
    }

    /// From now on hand out only the remaining captures (the losing ones: the table's move, the
    /// winning captures and queen promotions come before any quiet move), in their order. The
    /// search calls this in orthodox chess once late-move pruning skips every further quiet move;
    /// without it each skipped move would cost a scan of all the moves left. Calling it again
    /// changes nothing: only losing captures are left after the moves handed out.
    pub fn skip_quiets(&mut self) {
        // Keep the moves handed out and, after them, only the captures, in their current relative
        // order; the quiet moves and under-promotions among them are dropped.
        let next = self.next;
        let scores = &mut self.scores;
        let (mut i, mut kept) = (0, 0);
        self.moves.retain(|_| {
            // (Captures still scored as winning come before any quiet move, so none is left by
            // then; kept all the same, they would still be tested when they come up.)
            let keep =
                i < next || matches!(Stage::of(scores[i]), Stage::GoodCapture | Stage::BadCapture);
            if keep {
                scores[kept] = scores[i];
                kept += 1;
            }
            i += 1;
            keep
        });
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The next move to try: the best-scored one not tried yet. `history` scores the plain quiet
    /// moves when they are reached (it is the search's history at that moment).
    #[inline]
    pub fn next_move(&mut self, pos: &Position, history: &History) -> Option<Move> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        let mut best = self.best_from(self.next);
        // A capture scored as winning is tested by SEE only now that it comes up (a node that cuts
        // off earlier never pays for the test); a losing one moves down to the losing captures,
        // at the same place among them as if it had been tested when the moves were scored.
        while Stage::of(self.scores[best]) == Stage::GoodCapture {
            if see_ge(pos, self.moves.as_slice()[best], 0) {
                break;
            }
            self.scores[best] = losing(self.scores[best]);
            best = self.best_from(self.next);
        }
        if self.unscored && self.scores[best] == QUIET_UNSCORED {
            self.unscored = false;
            for i in self.next..n {
                if self.scores[i] == QUIET_UNSCORED {
                    self.scores[i] =
                        history.quiet_score(pos, self.moves.as_slice()[i], &self.context);
                }
            }
            best = self.best_from(self.next);
        }
        let m = self.moves.as_slice()[best];
        if best != self.next {
            self.scores.swap(best, self.next);
            self.moves.swap(best, self.next);
        }
        self.next += 1;
        Some(m)
    }

    /// The index of the best-scored move from `from` on (the first of equals).
    #[inline]
    fn best_from(&self, from: usize) -> usize {
        // Two passes over a slice: the maximum (a reduction the compiler vectorises), then its
        // first position. A profile put a third of the picker's time in the one-pass scan with
        // bounds checks this replaces.
        let scores = &self.scores[from..self.moves.len()];
        let max = scores.iter().fold(i32::MIN, |a, &b| a.max(b));
        from + scores.iter().position(|&s| s == max).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Position, Variant};

    /// The picker hands out every move once, stage after stage, the table's move first.
    #[test]
    fn moves_come_stage_by_stage() {
        let fens = [
            (
                Variant::Chess,
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            ),
            (Variant::Chess, "4k3/1P6/8/8/3q4/8/3R4/4K3 w - - 0 1"),
            (
                Variant::TwoMove,
                "r1bqkb1r/pp1npppp/3p1n2/1Bp5/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 2 3 T",
            ),
            (
                Variant::DoubleMove,
                "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
            ),
        ];
        let mut history = History::new(4);
        for (variant, fen) in fens {
            let pos = Position::from_fen(variant, fen).unwrap();
            let legal = pos.legal_moves();
            let quiets: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|&m| !is_capture(&pos, m) && m.promotion().is_none())
                .collect();
            history.update(&pos, quiets[3], 500);
            let hints = Hints {
                tt_move: Some(quiets[quiets.len() - 1]),
                killers: [Some(quiets[0]), Some(quiets[1])],
                counter: Some(quiets[2]),
                context: [None; 2],
            };
            let mut picker = MovePicker::new();
            picker.generate(&pos, &hints, &history, false);
            let mut picked = Vec::new();
            let mut last = Stage::TtMove;
            while let Some(m) = picker.next_move(&pos, &history) {
                let stage = Stage::of(order_score(&pos, m, &hints, &history));
                assert!(stage >= last, "{fen}: {m:?} in {stage:?} after {last:?}");
                last = stage;
                picked.push(m);
            }
            assert_eq!(picked[0], hints.tt_move.unwrap());
            assert_eq!(picked.len(), legal.len());
            let mut sorted = picked.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), legal.len());
            let stage_of = |m: Move| Stage::of(order_score(&pos, m, &hints, &history));
            assert_eq!(stage_of(quiets[0]), Stage::Killer);
            assert_eq!(stage_of(quiets[2]), Stage::Countermove);
            assert_eq!(stage_of(quiets[3]), Stage::Quiet);
        }
    }

    /// The picker hands the moves out best first by [`order_score`], which tests every capture by
    /// SEE up front: testing a capture only when it comes up changes nothing in the order.
    #[test]
    fn captures_tested_when_they_come_up_keep_the_order() {
        let fens = [
            (
                Variant::Chess,
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            ),
            (
                Variant::Chess,
                "1n2k3/P2p2p1/2p1p3/1q3b2/2N1P1n1/1Q3P2/2PR4/4K1R1 w - - 0 1",
            ),
            (
                Variant::Chess,
                "r1bq1rk1/pp3ppp/2n1pn2/2bp4/2P5/P1N1PN2/1PQ2PPP/R1B1KB1R w KQ - 0 8",
            ),
            (
                Variant::TwoMove,
                "r1bqkb1r/pp1npppp/3p1n2/1Bp5/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 2 3 T",
            ),
            (
                Variant::DoubleMove,
                "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
            ),
        ];
        let history = History::new(4);
        for (variant, fen) in fens {
            let pos = Position::from_fen(variant, fen).unwrap();
            let legal = pos.legal_moves();
            let losing = legal
                .iter()
                .filter(|&&m| is_capture(&pos, m) && !see_ge(&pos, m, 0))
                .count();
            assert!(losing > 0, "{fen}: no losing capture to test with");
            let hints = Hints::default();
            let mut picker = MovePicker::new();
            picker.generate(&pos, &hints, &history, false);
            let mut scores = Vec::new();
            while let Some(m) = picker.next_move(&pos, &history) {
                scores.push(order_score(&pos, m, &hints, &history));
            }
            assert_eq!(scores.len(), legal.len(), "{fen}");
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{fen}: {scores:?}");
        }
    }

    /// After `skip_quiets` the picker hands out exactly the losing captures not yet handed out, in
    /// the order it would have handed them out without skipping (up to ties in score).
    #[test]
    fn skipping_quiets_leaves_the_losing_captures() {
        // Each side has captures that win, lose and trade, quiet moves and under-promotions.
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "1n2k3/P2p2p1/2p1p3/1q3b2/2N1P1n1/1Q3P2/2PR4/4K1R1 w - - 0 1",
            "r1bq1rk1/pp3ppp/2n1pn2/2bp4/2P5/P1N1PN2/1PQ2PPP/R1B1KB1R w KQ - 0 8",
        ];
        let history = History::new(4);
        let hints = Hints::default();
        for fen in fens {
            let pos = Position::from_fen(Variant::Chess, fen).unwrap();
            let mut full = MovePicker::new();
            full.generate(&pos, &hints, &history, false);
            let mut order = Vec::new();
            while let Some(m) = full.next_move(&pos, &history) {
                order.push(m);
            }
            let stage_of = |m: Move| Stage::of(order_score(&pos, m, &hints, &history));
            let first_quiet = order
                .iter()
                .position(|&m| stage_of(m) == Stage::Quiet)
                .unwrap();
            let losing: Vec<Move> = order
                .iter()
                .copied()
                .filter(|&m| stage_of(m) == Stage::BadCapture)
                .collect();
            assert!(!losing.is_empty(), "{fen}: no losing capture to test with");
            let mut picker = MovePicker::new();
            picker.generate(&pos, &hints, &history, false);
            for &m in &order[..=first_quiet] {
                assert_eq!(picker.next_move(&pos, &history), Some(m), "{fen}");
            }
            picker.skip_quiets();
            let mut rest = Vec::new();
            while let Some(m) = picker.next_move(&pos, &history) {
                rest.push(m);
            }
            let score = |m: Move| order_score(&pos, m, &hints, &history);
            assert_eq!(
                rest.iter().map(|&m| score(m)).collect::<Vec<_>>(),
                losing.iter().map(|&m| score(m)).collect::<Vec<_>>(),
                "{fen}"
            );
            let (mut a, mut b) = (rest.clone(), losing.clone());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{fen}");
        }
    }
}
