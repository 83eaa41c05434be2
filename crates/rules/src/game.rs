//! A game: the start position and every move since, grouped into turns, with the results that need
//! history (repetition), claims, and turn-by-turn play that explains an illegal turn in words.

use crate::notation::{parse_move, san, why_illegal, NotationError};
use crate::outcome::{position_outcome, DrawReason, Outcome, FIFTY_CLAIM};
use crate::position::{Phase, Position};
use crate::types::{Color, Move};
use crate::variants::Variant;
use std::fmt;

/// One turn of a game: who played it, its move number and its moves (one or two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRecord {
    pub color: Color,
    pub fullmove: u32,
    pub moves: Vec<Move>,
    /// Index into [`Game::positions`] of the position the turn started from.
    pub start: usize,
}

/// An illegal turn, with where it stands in the game and why it is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnError {
    pub fullmove: u32,
    pub color: Color,
    pub text: String,
    pub reason: String,
}

impl fmt::Display for TurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "turn {} ({}) {}: {}",
            self.fullmove,
            self.color.name(),
            self.text,
            self.reason
        )
    }
}
impl std::error::Error for TurnError {}

#[derive(Clone, Debug)]
pub struct Game {
    positions: Vec<Position>,
    moves: Vec<Move>,
    /// A result decided off the board (resignation, agreement, claim, time).
    imposed: Option<Outcome>,
}

impl Game {
    pub fn new(initial: Position) -> Game {
        Game {
            positions: vec![initial],
            moves: Vec::new(),
            imposed: None,
        }
    }
    pub fn variant(&self) -> Variant {
        self.positions[0].variant()
    }
    pub fn initial(&self) -> &Position {
        &self.positions[0]
    }
    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions.last().expect("a game has a position")
    }
    /// Every position, the start first; `positions()[i + 1]` follows `moves()[i]`.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// How often the current position has occurred, counting only the positions that count for
    /// repetition ([`Position::counts_for_repetition`]: half-way positions only in Two Move Chess).
    pub fn repetitions(&self) -> usize {
        let cur = self.position();
        if !cur.counts_for_repetition() {
            return 0;
        }
        self.positions
            .iter()
            .filter(|p| p.counts_for_repetition() && same_position(p, cur))
            .count()
    }

    /// The repetition keys ([`Position::repetition_key`]) of the positions before the current one that
    /// count for repetition ([`Position::counts_for_repetition`]), oldest first: the game's history as
    /// a search needs it to recognise repetitions.
    pub fn earlier_repetition_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.positions[..self.positions.len() - 1]
            .iter()
            .filter(|p| p.counts_for_repetition())
            .map(|p| p.repetition_key())
    }

    /// The result, if the game is over: one imposed from outside, or one the rules decide automatically.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.imposed.is_some() {
            return self.imposed;
        }
        if let Some(o) = position_outcome(self.position()) {
            return Some(o);
        }
        if self.repetitions() >= 5 {
            return Some(Outcome::Draw(DrawReason::FivefoldRepetition));
        }
        None
    }

    /// A draw the player to move may claim now (threefold repetition, fifty-move/turn rule).
    pub fn claimable_draw(&self) -> Option<DrawReason> {
        if self.outcome().is_some() {
            return None;
        }
        if self.repetitions() >= 3 {
            return Some(DrawReason::ThreefoldRepetition);
        }
        let pos = self.position();
        if pos.at_turn_start() && pos.halfmove_clock() >= FIFTY_CLAIM {
            return Some(DrawReason::FiftyMoveRule);
        }
        None
    }

    /// Ends the game with a result decided off the board.
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.imposed = Some(outcome);
    }

    /// Plays one move if it is legal now.
    pub fn play(&mut self, mv: Move) -> Result<(), String> {
        if let Some(o) = self.outcome() {
            return Err(format!("the game is over: {}", o.describe(self.variant())));
        }
        if let Some(reason) = why_illegal(self.position(), mv) {
            return Err(reason);
        }
        let next = self.position().after(mv);
        self.positions.push(next);
        self.moves.push(mv);
        Ok(())
    }

    /// Takes back the last `n` moves.
    pub fn undo(&mut self, n: usize) {
        let n = n.min(self.moves.len());
        self.moves.truncate(self.moves.len() - n);
        self.positions.truncate(self.moves.len() + 1);
        self.imposed = None;
    }

    /// The moves grouped into turns (the last one may be unfinished).
    pub fn turns(&self) -> Vec<TurnRecord> {
        let mut out: Vec<TurnRecord> = Vec::new();
        let mut open = false;
        for (i, &m) in self.moves.iter().enumerate() {
            let before = &self.positions[i];
            if !open {
                out.push(TurnRecord {
                    color: before.turn(),
                    fullmove: before.fullmove(),
                    moves: Vec::new(),
                    start: i,
                });
            }
            out.last_mut().expect("a turn is open").moves.push(m);
            open = self.positions[i + 1].phase() == Phase::Second;
        }
        out
    }

    /// SAN of a turn's moves joined by commas (`Nf3,e4`).
    pub fn turn_san(&self, turn: &TurnRecord) -> String {
        let mut parts = Vec::new();
        for (k, &m) in turn.moves.iter().enumerate() {
            parts.push(san(&self.positions[turn.start + k], m));
        }
        parts.join(",")
    }

    /// Plays a whole turn. With `allow_incomplete`, a turn may stop half way (the end of a record).
    pub fn play_turn(&mut self, moves: &[Move], allow_incomplete: bool) -> Result<(), TurnError> {
        self.play_turn_inner(moves, allow_incomplete, false)
    }

    /// `unfinished`: the record says the turn goes on after these moves (a trailing comma), which in
    /// Double Move Chess makes a lone first move the first half of a Double Move.
    fn play_turn_inner(
        &mut self,
        moves: &[Move],
        allow_incomplete: bool,
        unfinished: bool,
    ) -> Result<(), TurnError> {
        let start = *self.position();
        let mut pos = start;
        let mut text: Vec<String> = Vec::new();
        let make_err = |text: &[String], reason: String| TurnError {
            fullmove: start.fullmove(),
            color: start.turn(),
            text: text.join(","),
            reason,
        };
        if moves.is_empty() {
            return Err(make_err(&[], "a turn needs at least one move".into()));
        }
        if let Some(o) = self.outcome() {
            let t: Vec<String> = moves.iter().map(|&m| san(&start, m)).collect();
            let mut reason = format!("the game is already over: {}", o.describe(self.variant()));
            if let Some(why) = why_illegal(&start, moves[0]) {
                reason += &format!("; {} is not legal: {why}", t[0]);
            }
            return Err(make_err(&t, reason));
        }
        let first_len = self.moves.len();
        for (i, &m) in moves.iter().enumerate() {
            let m = if start.variant() == Variant::DoubleMove
                && i == 0
                && (moves.len() >= 2 || unfinished)
                && start.phase() == Phase::Start
            {
                m.as_double_start()
            } else {
                m
            };
            if i > 0 && pos.phase() != Phase::Second {
                let prev = self.positions[self.positions.len() - 2];
                text.push(m.uci());
                let reason = turn_ended_reason(&prev, self.moves[self.moves.len() - 1]);
                self.undo(self.moves.len() - first_len);
                return Err(make_err(&text, reason));
            }
            text.push(san(&pos, m));
            if let Err(reason) = self.play(m) {
                self.undo(self.moves.len() - first_len);
                return Err(make_err(&text, reason));
            }
            pos = *self.position();
        }
        if pos.phase() == Phase::Second && !allow_incomplete && self.outcome().is_none() {
            let reason = incomplete_reason(
                &self.positions[self.positions.len() - 2],
                *moves.last().unwrap(),
            );
            self.undo(self.moves.len() - first_len);
            return Err(make_err(&text, reason));
        }
        Ok(())
    }

    /// Reads a turn (`Nf3,e4`, `g1f3,e2e4`, SAN or UCI per move) and plays it.
    pub fn play_turn_text(&mut self, text: &str, allow_incomplete: bool) -> Result<(), TurnError> {
        let start = *self.position();
        let fail = |reason: String| TurnError {
            fullmove: start.fullmove(),
            color: start.turn(),
            text: text.trim().to_string(),
            reason,
        };
        let mut parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let unfinished = parts.len() > 1 && parts.last() == Some(&"");
        if unfinished {
            if !allow_incomplete {
                return Err(fail(
                    "the turn is incomplete: a move must follow the comma".into(),
                ));
            }
            parts.pop();
        }
        if self.outcome().is_some() {
            // Name the result, and why the first move would not be legal anyway.
            let first = parse_move(&start, parts[0]).map_err(|NotationError(r)| fail(r))?;
            let mut e = self
                .play_turn(&[first], allow_incomplete)
                .expect_err("no turn is legal after the end");
            e.text = text.trim().to_string();
            return Err(e);
        }
        let mut pos = start;
        let mut moves = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                return Err(fail("empty move in the turn".into()));
            }
            if i > 0 {
                let prev = moves[i - 1];
                let prev = if start.variant() == Variant::DoubleMove && i == 1 {
                    Move::as_double_start(prev)
                } else {
                    prev
                };
                if let Some(reason) = why_illegal(&pos, prev) {
                    return Err(fail(reason));
                }
                let after = pos.after(prev);
                if after.phase() != Phase::Second {
                    return Err(fail(turn_ended_reason(&pos, prev)));
                }
                pos = after;
            }
            let mv = parse_move(&pos, part).map_err(|NotationError(r)| fail(r))?;
            moves.push(mv);
        }
        self.play_turn_inner(&moves, allow_incomplete, unfinished)
    }
}

/// Equal for repetition: placement, side, castling, legal en passant square and turn state.
fn same_position(a: &Position, b: &Position) -> bool {
    a.hash() == b.hash()
        && a.board() == b.board()
        && a.turn() == b.turn()
        && a.castling() == b.castling()
        && a.ep_square() == b.ep_square()
        && a.state() == b.state()
}

/// Why the turn was over after `mv` was played from `before`, when a further move was given.
fn turn_ended_reason(before: &Position, mv: Move) -> String {
    let s = san(before, mv);
    let after = before.after(mv);
    if before.variant().king_capture() && after.king_captured().is_some() {
        return format!("{s} captured the king and ended the game");
    }
    match before.variant() {
        Variant::Chess => "in orthodox chess a turn is one move".into(),
        Variant::TwoMove => match before.phase() {
            Phase::Response => "a response move turn has only one move".into(),
            Phase::Start => format!(
                "{s} {}, so it is a single move turn and ends the turn",
                single_move_reason(before, &after, mv)
            ),
            Phase::Second => "a turn has at most two moves".into(),
        },
        Variant::DoubleMove => "a turn has at most two moves".into(),
        Variant::Twinmove => match before.phase() {
            Phase::Second => "a turn has at most two moves".into(),
            _ => format!("{s} is a piece move and ends the turn; only a pawn move may be followed by a second move"),
        },
    }
}

/// Why the turn cannot stop after `mv` from `before`.
fn incomplete_reason(before: &Position, mv: Move) -> String {
    let s = san(before, mv);
    match before.variant() {
        Variant::TwoMove => format!(
            "the turn is incomplete: {s} is not a single move, so a second move by another piece must follow"
        ),
        Variant::Twinmove => format!("the turn is incomplete: after the pawn move {s} a piece move must follow"),
        _ => "the turn is incomplete: a Double Move has two moves".into(),
    }
}

/// Which of Two Move Chess's single-move criteria a first move met.
fn single_move_reason(before: &Position, after: &Position, mv: Move) -> &'static str {
    if after.board().king_attacked(before.turn().other()) {
        "gives check"
    } else if mv.is_en_passant() || before.board().piece_at(mv.to()).is_some() {
        "captures"
    } else if mv.promotion().is_some() {
        "promotes"
    } else {
        "allows an en passant capture"
    }
}

/// Every legal complete turn from `pos` (from a mid-turn position: every completion of the current
/// turn), each as its moves; a Double Move's first half carries its flag.
pub fn legal_turns(pos: &Position) -> Vec<Vec<Move>> {
    let mut out = Vec::new();
    for &m in pos.legal_moves().iter() {
        let after = pos.after(m);
        if after.phase() == Phase::Second && crate::outcome::position_outcome(&after).is_none() {
            for &s in after.legal_moves().iter() {
                out.push(vec![m, s]);
            }
        } else {
            out.push(vec![m]);
        }
    }
    out
}

/// A turn in UCI form: its moves joined by commas (`g1f3,e2e4`).
pub fn turn_uci(moves: &[Move]) -> String {
    moves.iter().map(|m| m.uci()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game from the start position (for Twinmove at move 2, so that White need not begin with a pawn).
    fn game(variant: Variant, turns: &[&str]) -> Game {
        let start = match variant {
            Variant::Twinmove => Position::from_fen(
                variant,
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2 T",
            )
            .unwrap(),
            _ => Position::start(variant),
        };
        let mut g = Game::new(start);
        for t in turns {
            g.play_turn_text(t, true)
                .unwrap_or_else(|e| panic!("{variant} {t}: {e}"));
        }
        g
    }

    /// The repetition rule (Position::counts_for_repetition): Two Move Chess counts half-way positions,
    /// Double Move and Twinmove only positions at the start of a turn; orthodox chess has no half way.
    #[test]
    fn which_positions_count_for_repetition() {
        // Two Move: the half-way position after Ng1 recurs three times, and counts each time.
        let cycle = ["Ng1,Nc3", "Ng8,Nb8", "Nb1,Nf3", "Nf6,Nc6"];
        let mut turns = vec!["Nf3", "Nf6,Nc6"];
        turns.extend(cycle);
        turns.extend(cycle);
        turns.push("Ng1,");
        let g = game(Variant::TwoMove, &turns);
        assert!(!g.position().at_turn_start());
        assert!(g.position().counts_for_repetition());
        assert_eq!(g.repetitions(), 3);
        assert_eq!(g.claimable_draw(), Some(DrawReason::ThreefoldRepetition));
        let key = g.position().repetition_key();
        assert_eq!(g.earlier_repetition_keys().filter(|&k| k == key).count(), 2);
        // Every earlier position counts in Two Move Chess.
        assert_eq!(g.earlier_repetition_keys().count(), g.positions().len() - 1);

        // Double Move and Twinmove: a half-way position never counts, and is left out of the keys.
        for (variant, turns) in [
            (Variant::DoubleMove, ["Nf3", "Nf6", "Ng1", "Ng8", "e4,"]),
            (Variant::Twinmove, ["Nf3", "Nf6", "Ng1", "Ng8", "e4,"]),
        ] {
            let g = game(variant, &turns);
            let cur = g.position();
            assert!(!cur.at_turn_start(), "{variant}");
            assert!(!cur.counts_for_repetition(), "{variant}");
            assert_eq!(g.repetitions(), 0, "{variant}");
            // The start position recurred after Ng1/Ng8 and counts; no half-way key is listed.
            let start = g.positions()[0].repetition_key();
            let keys: Vec<u64> = g.earlier_repetition_keys().collect();
            assert_eq!(keys.iter().filter(|&&k| k == start).count(), 2, "{variant}");
            assert_eq!(keys.len(), g.positions().len() - 1, "{variant}");
            let g = game(variant, &["Nf3", "Nf6", "Ng1", "Ng8", "e4,Nf3", "e5,"]);
            let half_way = g.positions().iter().filter(|p| !p.at_turn_start()).count();
            assert_eq!(half_way, 2, "{variant}");
            assert!(g
                .positions()
                .iter()
                .all(|p| p.counts_for_repetition() == p.at_turn_start()));
            assert_eq!(
                g.earlier_repetition_keys().count(),
                g.positions().len() - 1 - 1,
                "{variant}"
            );
        }

        // Orthodox chess: every position is at the start of a turn and counts.
        let g = game(
            Variant::Chess,
            &["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"],
        );
        assert!(g.positions().iter().all(Position::counts_for_repetition));
        assert_eq!(g.repetitions(), 3);
    }
}
