//! Live channels beyond one game: the lobby (seeks appear and vanish), each user (a game starts,
//! a challenge arrives or goes, a game ends) and each game's chat. An event is published once;
//! with several nodes it goes through the store (PostgreSQL `NOTIFY`) and every node delivers it
//! to its own sockets ([`Bus::deliver`]). Also who is present: a user with an open lobby socket
//! or bot event stream on this node keeps their real-time seeks alive.

use super::challenge::Challenge;
use super::seeks::Seek;
use crate::game::{ChatRoom, Side};
use crate::hub::{Event, Shared};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::broadcast;
use ts_rs::TS;

/// What the lobby socket tells everyone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LobbyEvent {
    /// All open seeks (on connect).
    Seeks {
        seeks: Vec<Seek>,
    },
    SeekAdded {
        seek: Seek,
    },
    SeekRemoved {
        id: String,
    },
}

/// What a user is told (on the lobby socket, and in the bot event stream in lichess's form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserEvent {
    GameStart {
        game_id: String,
        color: Side,
        variant: String,
    },
    GameFinish {
        game_id: String,
    },
    Challenge {
        challenge: Challenge,
    },
    /// A challenge was accepted, declined or canceled.
    ChallengeGone {
        id: String,
        reason: String,
        challenge: Challenge,
    },
}

/// Where an event goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topic {
    Lobby,
    User(String),
    Chat(String, ChatRoom),
}

impl Topic {
    fn encode(&self) -> String {
        match self {
            Topic::Lobby => "lobby".into(),
            Topic::User(id) => format!("user:{id}"),
            Topic::Chat(game, room) => format!("chat:{}:{game}", room.as_str()),
        }
    }
    fn decode(s: &str) -> Option<Topic> {
        if s == "lobby" {
            return Some(Topic::Lobby);
        }
        if let Some(id) = s.strip_prefix("user:") {
            return Some(Topic::User(id.to_string()));
        }
        let rest = s.strip_prefix("chat:")?;
        let (room, game) = rest.split_once(':')?;
        let room = match room {
            "player" => ChatRoom::Player,
            "spectator" => ChatRoom::Spectator,
            _ => return None,
        };
        Some(Topic::Chat(game.to_string(), room))
    }
}

/// This node's subscribers.
pub struct Bus {
    lobby: broadcast::Sender<Arc<str>>,
    users: Mutex<HashMap<String, broadcast::Sender<Arc<str>>>>,
    /// Open lobby sockets and event streams per user on this node.
    present: Mutex<HashMap<String, usize>>,
}

impl Bus {
    pub fn new() -> Bus {
        Bus {
            lobby: broadcast::channel(256).0,
            users: Mutex::new(HashMap::new()),
            present: Mutex::new(HashMap::new()),
        }
    }

    pub fn lobby(&self) -> broadcast::Receiver<Arc<str>> {
        self.lobby.subscribe()
    }

    /// A user's events (JSON of [`UserEvent`]).
    pub fn user(&self, id: &str) -> broadcast::Receiver<Arc<str>> {
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        // Channels nobody listens to any more go (keeps the map as small as the audience).
        users.retain(|_, tx| tx.receiver_count() > 0);
        users
            .entry(id.to_string())
            .or_insert_with(|| broadcast::channel(64).0)
            .subscribe()
    }

    /// Delivers an event to this node's subscribers.
    fn deliver(&self, hub: &Shared, topic: &Topic, json: Arc<str>) {
        match topic {
            Topic::Lobby => {
                let _ = self.lobby.send(json);
            }
            Topic::User(id) => {
                let users = self.users.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(tx) = users.get(id) {
                    let _ = tx.send(json);
                }
            }
            Topic::Chat(game, room) => {
                if let Some(slot) = hub.cached(game) {
                    let _ = slot.tx.send(Event {
                        json,
                        over: false,
                        room: Some(*room),
                    });
                }
            }
        }
    }

    /// Users present on this node.
    pub fn present_users(&self) -> Vec<String> {
        self.present
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new()
    }
}

/// Publishes an event to every node (through the store when it is shared).
pub async fn publish(hub: &Shared, topic: Topic, json: String) {
    if hub.shared_store {
        if let Err(e) = hub.store.publish(&topic.encode(), &json).await {
            tracing::warn!("publishing an event failed: {e}");
        }
    } else {
        hub.players.bus.deliver(hub, &topic, json.into());
    }
}

/// An event published by another node (or this one, through the store).
pub fn received(hub: &Shared, topic: &str, json: String) {
    match Topic::decode(topic) {
        Some(t) => hub.players.bus.deliver(hub, &t, json.into()),
        None => tracing::warn!("ignoring an event on unknown topic {topic:?}"),
    }
}

pub async fn to_lobby(hub: &Shared, e: &LobbyEvent) {
    let json = serde_json::to_string(e).expect("events serialise");
    publish(hub, Topic::Lobby, json).await
}

pub async fn to_user(hub: &Shared, user_id: &str, e: &UserEvent) {
    let json = serde_json::to_string(e).expect("events serialise");
    publish(hub, Topic::User(user_id.to_string()), json).await
}

/// A user's presence on this node while held (a lobby socket or event stream). When their last
/// one closes, their real-time seeks go.
pub struct Presence {
    user: String,
    hub: Weak<crate::hub::Hub>,
}

pub fn enter(hub: &Shared, user: &str) -> Presence {
    *hub.players
        .bus
        .present
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(user.to_string())
        .or_default() += 1;
    Presence {
        user: user.to_string(),
        hub: Arc::downgrade(hub),
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        let Some(hub) = self.hub.upgrade() else {
            return;
        };
        let gone = {
            let mut p = hub
                .players
                .bus
                .present
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let n = p.entry(self.user.clone()).or_default();
            *n = n.saturating_sub(1);
            let gone = *n == 0;
            if gone {
                p.remove(&self.user);
            }
            gone
        };
        if gone {
            let user = self.user.clone();
            tokio::spawn(async move { super::seeks::drop_realtime(&hub, &user).await });
        }
    }
}
