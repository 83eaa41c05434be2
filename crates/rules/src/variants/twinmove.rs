//! Twinmove Chess (uncompelled): a turn is one piece move, or a pawn move (`T` → `P`) followed by a
//! piece move. No en passant; kings may be left attacked and are captured to win.

use super::Transition;
use crate::board::Board;
use crate::movegen::GenRules;
use crate::position::{MoveEffects, Phase, Position, TurnState};
use crate::types::{Color, Role};

const PSEUDO: GenRules = GenRules {
    king_safety: false,
    en_passant: false,
    movable: !0,
    capture_king: true,
};

/// The first turn from the standard initial position must begin with a pawn move (ruling 2).
fn is_initial_position(pos: &Position) -> bool {
    pos.turn == Color::White && pos.fullmove == 1 && pos.board == Board::standard()
}

pub(super) fn gen_rules(pos: &Position) -> GenRules {
    let pawns = pos.board.role(Role::Pawn);
    match pos.state.phase {
        Phase::Second => GenRules {
            movable: !pawns,
            ..PSEUDO
        },
        _ if is_initial_position(pos) => GenRules {
            movable: pawns,
            ..PSEUDO
        },
        _ => PSEUDO,
    }
}

pub(super) fn transition(pos: &Position, fx: &MoveEffects) -> Transition {
    let pawn_first = pos.state.phase == Phase::Start && fx.role == Role::Pawn;
    let captured_king = fx.captured == Some(Role::King);
    let phase = if pawn_first && !captured_king {
        Phase::Second
    } else {
        Phase::Start
    };
    Transition {
        passes: phase == Phase::Start,
        state: TurnState {
            phase,
            ..TurnState::START
        },
    }
}
