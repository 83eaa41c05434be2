//! The game WebSocket: the state on connect, then every change; with a player token, the client's
//! [`ClientMessage`]s are dispatched as [`Action`]s through the hub like the HTTP endpoints.

use crate::engine_pool::ClientKey;
use crate::error::ApiError;
use crate::game::view::ErrorMessage;
use crate::game::{Actor, ClientMessage, StateKind};
use crate::hub::{Shared, Slot};
use crate::limits::{client_key, close_code, close_socket, origin_allowed};
use crate::players::chat::Writer;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize)]
pub struct WsQuery {
    token: Option<String>,
}

/// A game's WebSocket: events out; with `?token=`, moves and actions in. A browser page of another
/// site is refused (Origin); each client may keep a few sockets and the server a bounded number:
/// one more is closed at once with 1008 (per client) or 1013 (server full) and the reason.
pub async fn game_ws(
    State(hub): State<Shared>,
    auth: crate::players::Auth,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    if !origin_allowed(&headers, None) {
        return Err(ApiError::forbidden(
            "WebSocket from another site's page refused (Origin)",
        ));
    }
    let slot = hub.slot(&id).await?;
    let mut auth = auth;
    if let Some(t) = q.token {
        auth.seat_token = Some(t);
    }
    // A seat token that is not this game's is refused at once; an account without a seat watches.
    let color = {
        let live = slot.live.lock().await;
        if auth.seat_token.is_some() && auth.seat(&live).is_none() {
            return Err(crate::game::GameError::NotAPlayer.into());
        }
        auth.seat(&live)
    };
    let key = match peer {
        Some(Extension(addr)) => client_key(&addr),
        None => ClientKey::connection(),
    };
    let writer = crate::players::chat::Writer {
        account: auth.account.clone(),
        seat: color,
        anon_key: Some(format!("{key:?}")),
    };
    let guard = hub.bounds.counters.sockets.try_acquire(&key);
    let ws = crate::limits::limit_upgrade(small(ws), &hub.bounds.limits);
    Ok(ws.on_upgrade(move |socket| async move {
        match guard {
            Ok(_guard) => game_socket(socket, hub, slot, writer).await,
            Err(e) => close_socket(socket, close_code(&e), &format!("too many sockets: {e}")).await,
        }
    }))
}

/// The largest message a client may send (a turn or an action is a few dozen bytes); a larger one
/// closes the socket with 1009 (message too big).
pub const MAX_MESSAGE: usize = 16 * 1024;

/// A socket's buffers kept small, so that an idle socket costs a few KB: a 4 KiB read buffer
/// (default 128 KiB), writes sent at once (no 128 KiB write buffer), at most 256 KiB queued for a
/// client that does not read, and the message limit.
pub fn small(ws: WebSocketUpgrade) -> WebSocketUpgrade {
    ws.read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
}

/// Close codes (RFC 6455): the server goes away (restart); policy violation (a limit).
pub const CLOSE_RESTART: u16 = 1012;

pub fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(axum::extract::ws::CloseFrame {
        code,
        reason: reason.to_string().into(),
    }))
}

/// One client message: parsed, checked, dispatched. Errors answer the sender only.
async fn handle(
    hub: &Shared,
    slot: &Arc<Slot>,
    writer: &Writer,
    text: &str,
) -> Result<(), ApiError> {
    let msg: ClientMessage = serde_json::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("bad message: {e}")))?;
    let action = match msg {
        ClientMessage::Ping => return Ok(()),
        ClientMessage::Chat { room, text } => {
            return crate::players::chat::post(hub, slot, writer, room, &text).await
        }
        ClientMessage::Action(a) => a,
    };
    let Some(color) = writer.seat else {
        return Err(ApiError::unauthorized(
            "connect with ?token=TOKEN (or signed in to your seat) to play over this socket",
        ));
    };
    hub.act(slot, Actor::Player(color), &action).await?;
    Ok(())
}

fn state_text(live: &crate::game::Live, kind: StateKind, now: i64) -> String {
    serde_json::to_string(&live.state(kind, now)).expect("states serialise")
}

async fn game_socket(socket: WebSocket, hub: Shared, slot: Arc<Slot>, writer: Writer) {
    let (mut tx, mut rx) = socket.split();
    let mut events = slot.tx.subscribe();
    let mut shutdown = hub.shutdown.subscribe();
    let rate = crate::limits::MessageRate::game(&hub.bounds.limits);
    let first = {
        let mut s = slot.live.lock().await.state(StateKind::GameFull, hub.now());
        s.you = writer.seat.map(crate::game::Side::from);
        serde_json::to_string(&s).expect("states serialise")
    };
    if tx.send(Message::Text(first.into())).await.is_err() {
        return;
    }
    // The chat room this socket reads, and its last lines.
    let room = crate::players::chat::room_of(writer.seat);
    let history = crate::players::chat::history(&hub, &slot.id, room).await;
    let history = serde_json::to_string(&history).expect("messages serialise");
    if tx.send(Message::Text(history.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            _ = shutdown.changed() => {
                let _ = tx.send(close(CLOSE_RESTART, "the server is restarting; reconnect")).await;
                break;
            }
            ev = events.recv() => {
                let text = match ev {
                    Ok(ev) if ev.room.is_some_and(|r| r != room) => continue,
                    Ok(ev) => ev.json.to_string(),
                    Err(RecvError::Lagged(_)) => state_text(&*slot.live.lock().await, StateKind::GameState, hub.now()),
                    Err(RecvError::Closed) => break,
                };
                if tx.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            msg = rx.next() => {
                let text = match msg {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Err(e)) if crate::limits::is_too_big(&e) => {
                        let reason = format!("message too big (at most {MAX_MESSAGE} bytes)");
                        let _ = tx.send(close(crate::limits::CLOSE_TOO_BIG, &reason)).await;
                        break;
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                let r = match rate.check() {
                    Ok(()) => handle(&hub, &slot, &writer, text.as_str()).await,
                    Err(why) => Err(ApiError::new(axum::http::StatusCode::TOO_MANY_REQUESTS, why)),
                };
                if let Err(e) = r {
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
