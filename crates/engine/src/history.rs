//! What a search thread learns about moves as it goes: the history table, the continuation
//! history, the capture history, two killers per ply and the countermove of each move. Each search
//! thread has its own (see `search::Worker`).

use rules::{Move, Phase, Position};

/// History scores are kept within ±HISTORY_MAX (updates pull them towards the bound, not past it).
pub const HISTORY_MAX: i32 = 16_384;

/// Rows of the tables kept per side to move and turn phase.
pub const SIDE_PHASE_ROWS: usize = 6;

/// The row of `pos` in tables kept per side to move and turn phase (half way through a Two Move
/// turn the same side moves again, which is learnt apart from a turn's start).
#[inline]
pub fn side_phase_row(pos: &Position) -> usize {
    let phase = match pos.phase() {
        Phase::Start => 0,
        Phase::Response => 1,
        Phase::Second => 2,
    };
    pos.turn().index() * 3 + phase
}

/// A move as the continuation history sees it: the piece that moved and its target square. In the
/// variants the move before may be the same side's first move of its turn, which is what the table
/// then learns: which second moves go well with which first moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceTo(u16);

impl PieceTo {
    /// `m` in `pos`, before it is played (None if no piece stands on its from-square).
    #[inline]
    pub fn of(pos: &Position, m: Move) -> Option<PieceTo> {
        let p = pos.board().piece_at(m.from())?;
        let piece = p.color.index() * 6 + p.role.index();
        Some(PieceTo((piece * 64 + m.to().index()) as u16))
    }

    #[inline]
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The moves one and two plies before a node (None at the root, after a null move, or when the
/// search is not that deep): the context of the continuation history.
pub type Context = [Option<PieceTo>; 2];

/// Entries per continuation-history row: 12 pieces × 64 squares.
const PIECE_TO: usize = 12 * 64;

/// The capture-history index of capture `m` in `pos`: the moving piece, its target square and the
/// captured role (a pawn for en passant). None if `m` captures nothing.
#[inline]
fn capture_index(pos: &Position, m: Move) -> Option<usize> {
    let victim = if m.is_en_passant() {
        rules::Role::Pawn
    } else {
        pos.board().role_at(m.to())?
    };
    let to = PieceTo::of(pos, m)?;
    Some(to.index() * 6 + victim.index())
}

pub struct History {
    /// Indexed by side and turn phase (start / response / second: a good second move is a different
    /// thing from a good first move), then from and to square.
    butterfly: Vec<[[i32; 64]; 64]>,
    /// Continuation history, indexed by the earlier move's piece and target square, then by this
    /// move's: how well a quiet move followed that move (used with the moves one and two plies back).
    continuation: Vec<i16>,
    /// Capture history, indexed by the capturing piece, its target square and the captured role:
    /// how often such a capture refuted a position, beyond what the exchange's material says.
    capture: Vec<i16>,
    /// The quiet move that last refuted each previous move (indexed by its from and to squares).
    countermoves: Vec<Option<Move>>,
    /// Two killers per ply.
    killers: Vec<[Option<Move>; 2]>,
}

impl History {
    pub fn new(plies: usize) -> History {
        History {
            butterfly: vec![[[0; 64]; 64]; SIDE_PHASE_ROWS],
            continuation: vec![0; PIECE_TO * PIECE_TO],
            capture: vec![0; PIECE_TO * 6],
            countermoves: vec![None; 64 * 64],
            killers: vec![[None; 2]; plies],
        }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.butterfly.iter_mut().for_each(|h| *h = [[0; 64]; 64]);
        self.continuation.iter_mut().for_each(|v| *v = 0);
        self.capture.iter_mut().for_each(|v| *v = 0);
        self.countermoves.iter_mut().for_each(|c| *c = None);
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
    }

    /// At the start of a search: killers are forgotten, history scores halved.
    pub fn new_search(&mut self) {
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        for h in self.butterfly.iter_mut() {
            for row in h.iter_mut() {
                for v in row.iter_mut() {
                    *v /= 2;
                }
            }
        }
        self.continuation.iter_mut().for_each(|v| *v /= 2);
        self.capture.iter_mut().for_each(|v| *v /= 2);
    }

    /// The capture-history score of capture `m` in `pos` (0 for a move that captures nothing).
    #[inline]
    pub fn capture_score(&self, pos: &Position, m: Move) -> i32 {
        capture_index(pos, m).map_or(0, |i| self.capture[i] as i32)
    }

    /// A move cut off at a node of `depth`: raise its capture history if it is a capture, and
    /// lower that of the captures tried before it.
    pub fn reward_captures(&mut self, pos: &Position, best: Move, depth: i32, tried: &[Move]) {
        let bonus = (16 * depth * depth).min(1600);
        let mut moved = |m: Move, bonus: i32| {
            if let Some(i) = capture_index(pos, m) {
                self.capture[i] = gravity(self.capture[i] as i32, bonus) as i16;
            }
        };
        moved(best, bonus);
        for &c in tried {
            moved(c, -bonus);
        }
    }

    #[inline]
    fn slot(&mut self, pos: &Position, m: Move) -> &mut i32 {
        let i = side_phase_row(pos);
        &mut self.butterfly[i][m.from().index()][m.to().index()]
    }

    /// The history score of quiet move `m` in `pos`.
    #[inline]
    pub fn score(&self, pos: &Position, m: Move) -> i32 {
        let i = side_phase_row(pos);
        self.butterfly[i][m.from().index()][m.to().index()]
    }

    /// The ordering score of quiet move `m` in `pos` after the moves of `context`: its history
    /// score plus its continuation-history scores.
    #[inline]
    pub fn quiet_score(&self, pos: &Position, m: Move, context: &Context) -> i32 {
        let mut s = self.score(pos, m);
        if let Some(to) = PieceTo::of(pos, m) {
            for prev in context.iter().flatten() {
                s += self.continuation[prev.index() * PIECE_TO + to.index()] as i32;
            }
        }
        s
    }

    /// Moves a history score towards ±HISTORY_MAX by `bonus` (negative for a malus).
    #[inline]
    pub fn update(&mut self, pos: &Position, m: Move, bonus: i32) {
        let h = self.slot(pos, m);
        *h = gravity(*h, bonus);
    }

    /// Moves the continuation-history scores of quiet move `m` after the moves of `context`
    /// towards ±HISTORY_MAX by `bonus`.
    #[inline]
    fn update_continuation(&mut self, pos: &Position, m: Move, context: &Context, bonus: i32) {
        let Some(to) = PieceTo::of(pos, m) else {
            return;
        };
        for prev in context.iter().flatten() {
            let h = &mut self.continuation[prev.index() * PIECE_TO + to.index()];
            *h = gravity(*h as i32, bonus) as i16;
        }
    }

    #[inline]
    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply]
    }

    /// The quiet move that last refuted `prev` (the move played at the previous ply).
    #[inline]
    pub fn countermove(&self, prev: Option<Move>) -> Option<Move> {
        let prev = prev?;
        self.countermoves[prev.from().index() * 64 + prev.to().index()]
    }

    /// A quiet move `m` cut off at `ply` after `prev` (with continuation `context`): remember it as
    /// killer and countermove, raise its history and lower the history of the quiet moves tried
    /// before it.
    #[allow(clippy::too_many_arguments)]
    pub fn reward_quiet(
        &mut self,
        pos: &Position,
        ply: usize,
        prev: Option<Move>,
        context: &Context,
        m: Move,
        depth: i32,
        tried: &[Move],
    ) {
        let killers = &mut self.killers[ply];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        if let Some(prev) = prev {
            self.countermoves[prev.from().index() * 64 + prev.to().index()] = Some(m);
        }
        let bonus = (16 * depth * depth).min(1600);
        self.update(pos, m, bonus);
        self.update_continuation(pos, m, context, bonus);
        for &q in tried {
            self.update(pos, q, -bonus);
            self.update_continuation(pos, q, context, -bonus);
        }
    }
}

/// `h` moved by `bonus`, the step shrinking as `h` nears the bound on that side, so that it stays
/// within ±HISTORY_MAX.
#[inline]
fn gravity(h: i32, bonus: i32) -> i32 {
    h + bonus - h * bonus.abs() / HISTORY_MAX
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn find(pos: &Position, uci: &str) -> Move {
        *pos.legal_moves()
            .iter()
            .find(|m| m.to_string() == uci)
            .unwrap_or_else(|| panic!("{uci} is not legal"))
    }

    /// A cut-off raises the continuation score of the move after exactly the moves of its context,
    /// lowers that of the quiet moves tried before it, and leaves other contexts alone.
    #[test]
    fn continuation_history_is_learnt_per_context() {
        let start = Position::start(Variant::Chess);
        let e4 = find(&start, "e2e4");
        let d4 = find(&start, "d2d4");
        let after_e4 = start.after(e4);
        let after_d4 = start.after(d4);
        let nf6 = find(&after_e4, "g8f6");
        let nc6 = find(&after_e4, "b8c6");
        let mut h = History::new(4);
        let ctx_e4: Context = [PieceTo::of(&start, e4), None];
        let ctx_d4: Context = [PieceTo::of(&start, d4), None];
        h.reward_quiet(&after_e4, 1, Some(e4), &ctx_e4, nf6, 8, &[nc6]);
        let plain = h.score(&after_e4, nf6);
        assert!(plain > 0);
        assert_eq!(h.quiet_score(&after_e4, nf6, &[None; 2]), plain);
        assert_eq!(h.quiet_score(&after_e4, nf6, &ctx_e4), 2 * plain);
        // After another first move, only the plain history is shared.
        assert_eq!(h.quiet_score(&after_d4, nf6, &ctx_d4), plain);
        assert!(h.quiet_score(&after_e4, nc6, &ctx_e4) < h.score(&after_e4, nc6));
    }

    /// However often a move is rewarded, its scores stay within ±HISTORY_MAX (the continuation
    /// table is i16: it must not wrap).
    #[test]
    fn history_scores_stay_bounded() {
        let start = Position::from_fen(
            Variant::TwoMove,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T",
        )
        .unwrap();
        // A quiet first move of a normal turn: White's turn goes on.
        let e4 = find(&start, "e2e3");
        let after = start.after(e4);
        let nf3 = find(&after, "g1f3");
        let ctx: Context = [PieceTo::of(&start, e4), PieceTo::of(&start, e4)];
        let mut h = History::new(4);
        for _ in 0..1000 {
            h.reward_quiet(&after, 1, Some(e4), &ctx, nf3, 40, &[]);
        }
        let s = h.quiet_score(&after, nf3, &ctx);
        assert!((2 * HISTORY_MAX + 1..=3 * HISTORY_MAX).contains(&s), "{s}");
        for _ in 0..1000 {
            h.update_continuation(&after, nf3, &ctx, -1600);
            h.update(&after, nf3, -1600);
        }
        let s = h.quiet_score(&after, nf3, &ctx);
        assert!((-3 * HISTORY_MAX..-2 * HISTORY_MAX).contains(&s), "{s}");
    }

    /// A capture that cuts off gains capture history for its piece, square and victim; the captures
    /// tried before it lose some; quiet moves have none; the scores stay within ±HISTORY_MAX.
    #[test]
    fn capture_history_is_learnt_per_piece_square_and_victim() {
        let pos = Position::from_fen(
            Variant::Chess,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        )
        .unwrap();
        let nxf7 = find(&pos, "e5f7");
        let qxf6 = find(&pos, "f3f6");
        let bxa6 = find(&pos, "e2a6");
        let quiet = find(&pos, "a2a3");
        let mut h = History::new(4);
        assert_eq!(h.capture_score(&pos, nxf7), 0);
        h.reward_captures(&pos, nxf7, 6, &[qxf6]);
        assert!(h.capture_score(&pos, nxf7) > 0);
        assert!(h.capture_score(&pos, qxf6) < 0);
        assert_eq!(h.capture_score(&pos, bxa6), 0);
        // A quiet cut-off lowers the captures tried before it and learns nothing for itself.
        h.reward_captures(&pos, quiet, 6, &[bxa6]);
        assert!(h.capture_score(&pos, bxa6) < 0);
        assert_eq!(h.capture_score(&pos, quiet), 0);
        for _ in 0..1000 {
            h.reward_captures(&pos, nxf7, 40, &[qxf6]);
        }
        assert!((1..=HISTORY_MAX).contains(&h.capture_score(&pos, nxf7)));
        assert!((-HISTORY_MAX..0).contains(&h.capture_score(&pos, qxf6)));
        // The same piece to the same square taking another role is another entry.
        let other =
            Position::from_fen(Variant::Chess, "4k3/8/5r2/8/8/5Q2/8/4K3 w - - 0 1").unwrap();
        assert_eq!(h.capture_score(&other, find(&other, "f3f6")), 0);
    }
}
