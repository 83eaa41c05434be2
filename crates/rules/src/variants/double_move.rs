//! Double Move Chess: every turn is one move, except that each side may once per game play a Double
//! Move, two moves in a row (any pieces); the flag on the first half's [`Move`] activates it.

use super::Transition;
use crate::movegen::{GenRules, MoveList};
use crate::position::{Phase, Position};
use crate::types::Move;

pub(super) fn gen_rules(pos: &Position) -> GenRules {
    match pos.state.phase {
        Phase::Second => GenRules {
            en_passant: false,
            ..GenRules::LEGAL
        },
        Phase::Start | Phase::Response => GenRules::LEGAL,
    }
}

/// Adds each listed move a second time as the first half of a Double Move, if the side has its ability.
pub(super) fn add_double_starts(pos: &Position, list: &mut MoveList) {
    if !pos.state.double_move[pos.turn.index()] {
        return;
    }
    let n = list.len();
    for i in 0..n {
        let m = list.as_slice()[i];
        list.push(m.as_double_start());
    }
}

pub(super) fn transition(pos: &Position, mv: Move) -> Transition {
    let mut state = pos.state;
    if pos.state.phase == Phase::Start && mv.starts_double() {
        state.double_move[pos.turn.index()] = false;
        state.phase = Phase::Second;
        Transition {
            passes: false,
            state,
        }
    } else {
        state.phase = Phase::Start;
        Transition {
            passes: true,
            state,
        }
    }
}
