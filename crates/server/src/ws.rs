//! The game WebSocket: the state on connect, then every change; with a player token, the client's
//! [`ClientMessage`]s are dispatched as [`Action`]s through the hub like the HTTP endpoints.

use crate::error::ApiError;
use crate::game::view::ErrorMessage;
use crate::game::{Actor, ClientMessage, StateKind};
use crate::hub::{now_ms, Shared, Slot};
use crate::routes::player;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use rules::Color;
use serde::Deserialize;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize)]
pub struct WsQuery {
    token: Option<String>,
}

/// A game's WebSocket: events out; with `?token=`, moves and actions in.
pub async fn game_ws(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let slot = hub.slot(&id).await?;
    let color = match q.token {
        None => None,
        Some(t) => Some(player(&slot, Some(&t)).await?),
    };
    Ok(ws.on_upgrade(move |socket| game_socket(socket, hub, slot, color)))
}

/// One client message: parsed, checked, dispatched. Errors answer the sender only.
async fn handle(
    hub: &Shared,
    slot: &Arc<Slot>,
    color: Option<Color>,
    text: &str,
) -> Result<(), ApiError> {
    let msg: ClientMessage = serde_json::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("bad message: {e}")))?;
    let action = match msg {
        ClientMessage::Ping => return Ok(()),
        ClientMessage::Action(a) => a,
    };
    let Some(color) = color else {
        return Err(ApiError::unauthorized(
            "connect with ?token=TOKEN to play over this socket",
        ));
    };
    hub.act(slot, Actor::Player(color), &action).await?;
    Ok(())
}

fn state_text(live: &crate::game::Live, kind: StateKind) -> String {
    serde_json::to_string(&live.state(kind, now_ms())).expect("states serialise")
}

async fn game_socket(socket: WebSocket, hub: Shared, slot: Arc<Slot>, color: Option<Color>) {
    let (mut tx, mut rx) = socket.split();
    let mut events = slot.tx.subscribe();
    let first = state_text(&*slot.live.lock().await, StateKind::GameFull);
    if tx.send(Message::Text(first.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            ev = events.recv() => {
                let text = match ev {
                    Ok(ev) => ev.json.to_string(),
                    Err(RecvError::Lagged(_)) => state_text(&*slot.live.lock().await, StateKind::GameState),
                    Err(RecvError::Closed) => break,
                };
                if tx.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            msg = rx.next() => {
                let text = match msg {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if let Err(e) = handle(&hub, &slot, color, text.as_str()).await {
                    let err = ErrorMessage::new(e.status.as_u16(), e.message);
                    let text = serde_json::to_string(&err).expect("errors serialise");
                    if tx.send(Message::Text(text.into())).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
}
