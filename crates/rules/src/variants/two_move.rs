//! Two Move Chess: a response move turn (`R`), or a normal turn (`T`) whose first move either is a
//! single move (check, capture, promotion, legal en passant for the opponent) or is followed by a second
//! move of another piece (`H` + the squares of the piece(s) that moved).

use super::Transition;
use crate::bitboard::lsb;
use crate::movegen::GenRules;
use crate::position::{MoveEffects, Phase, Position, TurnState};
use crate::types::Role;

pub(super) fn gen_rules(pos: &Position) -> GenRules {
    match pos.state.phase {
        Phase::Second => GenRules {
            movable: !pos.state.locked,
            en_passant: false,
            ..GenRules::LEGAL
        },
        Phase::Start | Phase::Response => GenRules::LEGAL,
    }
}

/// Whether a first move makes a single move turn (rule 4).
pub fn is_single_move(fx: &MoveEffects) -> bool {
    fx.gives_check
        || fx.captured.is_some()
        || fx.promotion.is_some()
        || fx.ep_for_opponent.is_some()
}

pub(super) fn transition(pos: &Position, fx: &MoveEffects) -> Transition {
    let state = |phase, locked| Transition {
        passes: phase != Phase::Second,
        state: TurnState {
            phase,
            locked,
            ..TurnState::START
        },
    };
    match pos.state.phase {
        Phase::Response | Phase::Second => state(Phase::Start, 0),
        Phase::Start if is_single_move(fx) => state(Phase::Response, 0),
        Phase::Start => state(Phase::Second, fx.landed),
    }
}

pub(super) fn first_half_reset(pos: &Position) -> bool {
    pos.state.phase == Phase::Second
        && pos.state.locked != 0
        && pos.board.role_at(lsb(pos.state.locked)) == Some(Role::Pawn)
}
