//! The game core: what a player can do ([`action`]), what is stored ([`record`]), the live game
//! and its one `apply` ([`live`]), the clock ([`clock`]), what clients are told ([`view`]) and why
//! an action is refused ([`error`]). No I/O here: the server's hub stores and broadcasts.

pub mod action;
pub mod clock;
pub mod error;
pub mod legacy;
pub mod live;
pub mod record;
pub mod view;

#[cfg(test)]
mod tests;

pub use action::{Action, Actor, ChatRoom, ClientMessage, DrawAction, MoveAction, TakebackAction};
pub use clock::Clock;
pub use error::GameError;
pub use live::Live;
pub use record::{EngineSeat, Imposed, Meta, PlayerRef, Reason, Rematch, Side, TakebackRecord};
pub use view::{GameState, StateKind};
