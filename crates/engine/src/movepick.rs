//! Move ordering. The rules crate lists all the legal moves of a position at once (or only the
//! tactical ones, for quiescence), so the picker scores the list once and then hands the moves out
//! best first, stage by stage: the table's move; captures that do not lose material by SEE (most
//! valuable victim, least valuable attacker); queen promotions; the two killers; the countermove;
//! quiet moves by history; losing captures; under-promotions. Each stage is a band of scores, so a
//! move's stage is known from its score ([`Stage::of`]). No allocation per node: a picker lives in
//! each ply of a search thread's stack.

use crate::eval::PIECE_VALUE;
use crate::history::History;
use crate::see::see_ge;
use rules::{Move, MoveList, Position, Role};

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

/// What the ordering knows at a node besides the position: the table's move, the ply's killers and
/// the countermove of the previous move.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints {
    pub tt_move: Option<Move>,
    pub killers: [Option<Move>; 2],
    pub counter: Option<Move>,
}

/// The main search's ordering score of `m` (higher first; see [`Stage`]).
pub fn order_score(pos: &Position, m: Move, hints: &Hints, history: &History) -> i32 {
    if Some(m) == hints.tt_move {
        return TT_MOVE;
    }
    if is_capture(pos, m) {
        return if see_ge(pos, m, 0) {
            GOOD_CAPTURE + mvv_lva(pos, m)
        } else {
            BAD_CAPTURE + mvv_lva(pos, m)
        };
    }
    match m.promotion() {
        Some(Role::Queen) => return QUEEN_PROMOTION,
        Some(_) => return UNDER_PROMOTION,
        None => {}
    }
    if hints.killers[0] == Some(m) {
        return KILLER_1;
    }
    if hints.killers[1] == Some(m) {
        return KILLER_2;
    }
    if hints.counter == Some(m) {
        return COUNTERMOVE;
    }
    history.score(pos, m)
}

/// The moves of one node and their ordering scores.
pub struct MovePicker {
    moves: MoveList,
    scores: [i32; MoveList::CAPACITY],
    next: usize,
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
        }
    }

    /// Lists `pos`'s moves (all, or with `tactical_only` captures and promotions, ordered by most
    /// valuable victim after the table's move) with their ordering scores.
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
        for i in 0..self.moves.len() {
            let m = self.moves.as_slice()[i];
            self.scores[i] = if tactical_only && Some(m) != hints.tt_move {
                mvv_lva(pos, m) + m.promotion().map_or(0, |r| PIECE_VALUE[r.index()])
            } else {
                order_score(pos, m, hints, history)
            };
        }
        self.next = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The next move to try: the best-scored one not tried yet.
    #[inline]
    pub fn next_move(&mut self) -> Option<Move> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        let mut best = self.next;
        for i in self.next + 1..n {
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        let m = self.moves.as_slice()[best];
        if best != self.next {
            self.scores.swap(best, self.next);
            self.moves.swap(best, self.next);
        }
        self.next += 1;
        Some(m)
    }
}
