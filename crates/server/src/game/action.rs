//! What a player can do to a game: the [`Action`]s of the wire protocol (HTTP bodies and routes and
//! the game WebSocket speak the same types), and who does it ([`Actor`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One move (`{"move": "e2e4"}`, Double Move start `{"move": "b3g8", "double": true}`) or a whole
/// turn (`{"turn": "g1f3,e2e4"}`, SAN accepted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct MoveAction {
    #[serde(rename = "move", default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mv: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub double: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DrawAction {
    Offer,
    Accept,
    Decline,
    Claim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum TakebackAction {
    Propose,
    Accept,
    Decline,
}

/// A player's action on a game, as sent over the game WebSocket (`{"type": "move", ...}`,
/// `{"type": "draw", "action": "offer"}`); the HTTP routes build the same values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Action {
    Move(MoveAction),
    Resign,
    Abort,
    Draw {
        action: DrawAction,
    },
    Takeback {
        action: TakebackAction,
    },
    /// (Server only.) The second player takes the free seat with a valid invite; `token` is their
    /// new secret.
    #[serde(skip)]
    Join {
        invite: String,
        token: String,
        /// The joiner's account, if logged in.
        player: Option<super::record::PlayerRef>,
    },
    /// (From the rematch route.) Offer a rematch after the game, or agree to the opponent's: the
    /// rematch would be game `next_id`.
    #[serde(skip)]
    Rematch {
        next_id: String,
    },
    #[serde(skip)]
    RematchDecline,
    /// (Server only.) The side to move may have run out of time: end the game if so.
    #[serde(skip)]
    Flag,
    /// (Server only.) The engine's turn (UCI turn text), computed for game version `version`.
    #[serde(skip)]
    EngineTurn {
        turn: String,
        version: i64,
    },
}

/// A message a client sends on the game WebSocket: an action, or a keep-alive ping.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, TS)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClientMessage {
    Ping,
    /// A chat line in a room of the game.
    Chat {
        room: ChatRoom,
        text: String,
    },
    #[serde(untagged)]
    Action(Action),
}

/// A game's chat rooms: the players' and the spectators'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ChatRoom {
    Player,
    Spectator,
}

impl ChatRoom {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatRoom::Player => "player",
            ChatRoom::Spectator => "spectator",
        }
    }
}

/// Who acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The holder of a player token.
    Player(rules::Color),
    /// Someone with no seat (joining with an invite).
    Guest,
    /// The server: clocks and the engine.
    Server,
}
