//! Orthodox chess: every move ends the turn.

use super::Transition;
use crate::position::TurnState;

pub(super) fn transition() -> Transition {
    Transition {
        passes: true,
        state: TurnState::START,
    }
}
