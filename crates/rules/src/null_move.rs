//! The null move for search: the side to move passes its whole turn. Not a legal move in any variant;
//! the engine uses it to prove that a position is good even without moving (null-move pruning).

use crate::position::{Phase, Position, TurnState};

impl Position {
    /// The position with the turn passed to the opponent, or `None` where passing is meaningless: half
    /// way through a turn, in a response move turn, or in check.
    pub fn null_move(&self) -> Option<Position> {
        if self.state.phase != Phase::Start || self.in_check() || self.king_captured().is_some() {
            return None;
        }
        let mut p = *self;
        p.turn = self.turn.other();
        p.ep_square = None;
        p.state = TurnState {
            phase: Phase::Start,
            locked: 0,
            ..self.state
        };
        p.hash = p.compute_hash();
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Position, Variant};

    #[test]
    fn passes_the_turn_and_keeps_the_hash_consistent() {
        for v in Variant::ALL {
            let p = Position::from_fen(v, &Position::start(v).fen()).unwrap();
            match p.null_move() {
                Some(n) => {
                    assert_ne!(n.turn(), p.turn());
                    assert_eq!(n.hash(), n.compute_hash());
                    assert_eq!(n.board(), p.board());
                }
                // Two Move Chess starts with a response move turn.
                None => assert_eq!(v, Variant::TwoMove),
            }
        }
    }
}
