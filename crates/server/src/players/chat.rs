//! Game chat, as on lichess: the players' room (the two players) and the spectators' room
//! (everyone else; anonymous watchers of a rated game read but do not write). A line is plain
//! text of 1–140 characters (clients render it as text, never as HTML); each writer may send one
//! line a second with a burst of three; a room keeps at most [`MAX_LINES`] lines, stored with the
//! game and sent to a socket when it connects.

use crate::error::ApiError;
use crate::game::ChatRoom;
use crate::hub::{Shared, Slot};
use axum::http::StatusCode;
use rules::Color;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use ts_rs::TS;

pub const MAX_CHARS: usize = 140;
pub const MAX_LINES: i64 = 500;
/// Lines sent to a socket when it connects.
pub const HISTORY: i64 = 100;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChatLine {
    /// The writer's username (`null`: anonymous).
    pub user: Option<String>,
    pub text: String,
    #[ts(type = "number")]
    pub at: i64,
}

/// What the game socket sends about chat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatMessage {
    Chat {
        room: ChatRoom,
        line: ChatLine,
    },
    ChatHistory {
        room: ChatRoom,
        lines: Vec<ChatLine>,
    },
}

/// Who writes.
pub struct Writer {
    pub account: Option<super::Account>,
    pub seat: Option<Color>,
    /// The rate-limit key of an anonymous writer (their address).
    pub anon_key: Option<String>,
}

/// The room a socket with this seat reads: players the players' room, others the spectators'.
pub fn room_of(seat: Option<Color>) -> ChatRoom {
    if seat.is_some() {
        ChatRoom::Player
    } else {
        ChatRoom::Spectator
    }
}

/// Checks, stores and publishes one line.
pub async fn post(
    hub: &Shared,
    slot: &Arc<Slot>,
    w: &Writer,
    room: ChatRoom,
    text: &str,
) -> Result<(), ApiError> {
    let text = text.trim();
    let n = text.chars().count();
    if n == 0 || n > MAX_CHARS {
        return Err(ApiError::bad_request(format!(
            "a chat line has 1 to {MAX_CHARS} characters (this one {n})"
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "a chat line is one line of text (no control characters)",
        ));
    }
    let rated = slot.live.lock().await.meta.rated;
    match (room, w.seat) {
        (ChatRoom::Player, None) => {
            return Err(ApiError::forbidden(
                "only the players write in the players' room",
            ))
        }
        (ChatRoom::Spectator, Some(_)) => {
            return Err(ApiError::forbidden(
                "players chat in the players' room during the game",
            ))
        }
        (ChatRoom::Spectator, None) if rated && w.account.is_none() => {
            return Err(ApiError::unauthorized(
                "sign in to write in a rated game's spectator room",
            ))
        }
        _ => {}
    }
    let key = match (&w.account, &w.anon_key, w.seat) {
        (Some(a), _, _) => a.id.clone(),
        (None, Some(k), _) => format!("ip:{k}"),
        (None, None, Some(c)) => format!("seat:{}:{}", slot.id, c.name()),
        (None, None, None) => "anonymous".into(),
    };
    if hub.players.chat.check_key(&key).is_err() {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "one chat line a second (a burst of 3): wait a moment",
        ));
    }
    if hub.store.chat_count(&slot.id, room.as_str()).await? >= MAX_LINES {
        return Err(ApiError::conflict(format!(
            "this chat room is full ({MAX_LINES} lines)"
        )));
    }
    let line = ChatLine {
        user: w.account.as_ref().map(|a| a.username.clone()),
        text: text.to_string(),
        at: hub.now(),
    };
    let stored = serde_json::to_string(&line).expect("lines serialise");
    hub.store
        .chat_add(&slot.id, room.as_str(), line.at, &stored)
        .await?;
    let msg = ChatMessage::Chat { room, line };
    let json = serde_json::to_string(&msg).expect("messages serialise");
    super::events::publish(hub, super::events::Topic::Chat(slot.id.clone(), room), json).await;
    Ok(())
}

/// The room's last lines, for a socket that connects.
pub async fn history(hub: &Shared, game_id: &str, room: ChatRoom) -> ChatMessage {
    let lines = match hub.store.chat_lines(game_id, room.as_str(), HISTORY).await {
        Ok(l) => l
            .iter()
            .filter_map(|s| serde_json::from_str(s).ok())
            .collect(),
        Err(e) => {
            tracing::warn!(game = %game_id, "chat history: {e}");
            Vec::new()
        }
    };
    ChatMessage::ChatHistory { room, lines }
}
