//! Seeks and the lobby: a player asks for a game (variant, time control, rated, colour, rating
//! range), another accepts and the game starts for both at once. A seek is taken by exactly one
//! accept (the store removes it atomically). A real-time seek lives while its creator has a lobby
//! socket or bot event stream open (renewed every few seconds, dropped when the last one closes);
//! the lobby socket shows seeks appear and vanish, and tells a logged-in user their events.

use super::events::{self, LobbyEvent, UserEvent};
use super::start::{start_game, ClockSpec, ColorChoice, GameSpec};
use super::{Account, Auth};
use crate::error::ApiError;
use crate::hub::Shared;
use crate::limits::{close_code, close_socket, origin_allowed};
use crate::store::players::RecordRow;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use ts_rs::TS;

/// A real-time seek without its creator present goes after this long.
pub const PRESENCE_MS: i64 = 30_000;
/// Open seeks per player.
pub const MAX_SEEKS: usize = 5;

/// An open seek.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Seek {
    pub id: String,
    pub username: String,
    pub rating: i32,
    pub provisional: bool,
    #[serde(flatten)]
    #[ts(flatten)]
    pub spec: GameSpec,
    pub color: ColorChoice,
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
    #[ts(type = "number")]
    pub created_at: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeekReq {
    variant: String,
    #[serde(default)]
    clock: Option<ClockSpec>,
    #[serde(default)]
    days: Option<u32>,
    #[serde(default)]
    rated: bool,
    #[serde(default)]
    color: ColorChoice,
    #[serde(default)]
    rating_min: Option<i32>,
    #[serde(default)]
    rating_max: Option<i32>,
}

fn parse(r: &RecordRow) -> Option<Seek> {
    serde_json::from_str(&r.data)
        .map_err(|e| tracing::error!("a stored seek cannot be read: {e}"))
        .ok()
}

pub async fn create(
    State(hub): State<Shared>,
    auth: Auth,
    crate::routes::ApiJson(req): crate::routes::ApiJson<SeekReq>,
) -> Result<Response, ApiError> {
    let me = auth.require_human()?;
    let spec = GameSpec {
        variant: req.variant,
        clock: req.clock,
        days: req.days,
        rated: req.rated,
    };
    let (variant, _) = spec.check()?;
    if let (Some(lo), Some(hi)) = (req.rating_min, req.rating_max) {
        if lo > hi {
            return Err(ApiError::bad_request("rating_min is above rating_max"));
        }
    }
    let now = hub.now();
    let mine = hub
        .store
        .seeks(now)
        .await?
        .iter()
        .filter_map(parse)
        .filter(|s| s.username.eq_ignore_ascii_case(&me.username))
        .count();
    if mine >= MAX_SEEKS {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("at most {MAX_SEEKS} open seeks at once: cancel one first"),
        ));
    }
    let me_ref = super::rating::player_ref(&*hub.store, me, variant.name()).await?;
    let seek = Seek {
        id: super::new_id(8),
        username: me.username.clone(),
        rating: me_ref.rating.unwrap_or(1500),
        provisional: me_ref.provisional,
        spec: GameSpec {
            variant: variant.name().to_string(),
            ..spec
        },
        color: req.color,
        rating_min: req.rating_min,
        rating_max: req.rating_max,
        created_at: now,
    };
    let row = RecordRow {
        id: seek.id.clone(),
        data: serde_json::to_string(&seek).expect("seeks serialise"),
    };
    let expires = spec.realtime().then_some(now + PRESENCE_MS);
    hub.store.seek_create(&row, &me.id, now, expires).await?;
    events::to_lobby(&hub, &LobbyEvent::SeekAdded { seek: seek.clone() }).await;
    Ok((StatusCode::CREATED, Json(json!({ "id": seek.id }))).into_response())
}

pub async fn list(State(hub): State<Shared>) -> Result<Json<serde_json::Value>, ApiError> {
    let seeks: Vec<Seek> = hub
        .store
        .seeks(hub.now())
        .await?
        .iter()
        .filter_map(parse)
        .collect();
    Ok(Json(json!({ "seeks": seeks })))
}

pub async fn cancel(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let me = auth.require()?;
    if !hub.store.seek_delete(&id, &me.id).await? {
        return Err(ApiError::not_found(format!("you have no seek '{id}'")));
    }
    events::to_lobby(&hub, &LobbyEvent::SeekRemoved { id }).await;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn accept(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let me = auth.require_human()?.clone();
    let now = hub.now();
    // Checked before taking it, so that a refused accept leaves the seek open.
    let Some(seek) = hub
        .store
        .seeks(now)
        .await?
        .iter()
        .filter(|r| r.id == id)
        .find_map(parse)
    else {
        return Err(ApiError::not_found(format!("no open seek '{id}'")));
    };
    if seek.username.eq_ignore_ascii_case(&me.username) {
        return Err(ApiError::conflict("this is your own seek"));
    }
    let mine = super::rating::player_ref(&*hub.store, &me, &seek.spec.variant).await?;
    let r = mine.rating.unwrap_or(1500);
    if seek.rating_min.is_some_and(|lo| r < lo) || seek.rating_max.is_some_and(|hi| r > hi) {
        return Err(ApiError::forbidden(format!(
            "your rating {r} is outside this seek's range"
        )));
    }
    // Exactly one accept takes it.
    if hub.store.seek_take(&id, now).await?.is_none() {
        return Err(ApiError::conflict("the seek was taken or withdrawn"));
    }
    events::to_lobby(&hub, &LobbyEvent::SeekRemoved { id: id.clone() }).await;
    let Some(seeker) = hub.store.user(&seek.username.to_ascii_lowercase()).await? else {
        return Err(ApiError::not_found("the seeker's account is gone"));
    };
    let seeker = Account::of(&seeker);
    let players = match seek.color.pick() {
        rules::Color::White => [Some(&seeker), Some(&me)],
        rules::Color::Black => [Some(&me), Some(&seeker)],
    };
    let game_id = start_game(&hub, super::new_id(10), &seek.spec, players, [None, None]).await?;
    Ok(Json(json!({ "game_id": game_id })))
}

/// A player's real-time seeks go (their last lobby socket closed).
pub async fn drop_realtime(hub: &Shared, user: &str) {
    match hub.store.seeks_drop_realtime(user).await {
        Ok(ids) => {
            for id in ids {
                events::to_lobby(hub, &LobbyEvent::SeekRemoved { id }).await;
            }
        }
        Err(e) => tracing::warn!("dropping the seeks of {user}: {e}"),
    }
}

/// Keeps the present players' real-time seeks alive and removes the expired ones; expires old
/// sessions; forgets idle rate-limit keys. Runs on every node.
pub async fn upkeep(hub: Shared) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    let mut n: u64 = 0;
    loop {
        tick.tick().await;
        n += 1;
        let now = hub.now();
        for user in hub.players.bus.present_users() {
            if let Err(e) = hub.store.seeks_touch(&user, now + PRESENCE_MS).await {
                tracing::warn!("keeping the seeks of {user}: {e}");
            }
        }
        match hub.store.seeks_expire(now).await {
            Ok(ids) => {
                for id in ids {
                    events::to_lobby(&hub, &LobbyEvent::SeekRemoved { id }).await;
                }
            }
            Err(e) => tracing::warn!("expiring seeks: {e}"),
        }
        if n.is_multiple_of(60) {
            if let Err(e) = hub.store.sessions_expire(now).await {
                tracing::warn!("expiring sessions: {e}");
            }
            hub.players.retain_recent();
        }
    }
}

/// The lobby socket: the open seeks, then seeks added and removed; for a logged-in user also
/// their events (a game starts, a challenge arrives or goes).
pub async fn lobby_ws(
    State(hub): State<Shared>,
    auth: Auth,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    if !origin_allowed(&headers, None) {
        return Err(ApiError::forbidden(
            "WebSocket from another site's page refused (Origin)",
        ));
    }
    let key = match peer {
        Some(Extension(addr)) => crate::limits::client_key(&addr),
        None => crate::engine_pool::ClientKey::connection(),
    };
    let guard = hub.bounds.counters.sockets.try_acquire(&key);
    let ws = crate::limits::limit_upgrade(crate::ws::small(ws), &hub.bounds.limits);
    let account = auth.account;
    Ok(ws.on_upgrade(move |socket| async move {
        match guard {
            Ok(_guard) => lobby_socket(socket, hub, account).await,
            Err(e) => close_socket(socket, close_code(&e), &format!("too many sockets: {e}")).await,
        }
    }))
}

async fn lobby_socket(socket: WebSocket, hub: Shared, account: Option<Account>) {
    let (mut tx, mut rx) = socket.split();
    let mut lobby = hub.players.bus.lobby();
    let mut mine = account.as_ref().map(|a| hub.players.bus.user(&a.id));
    let _presence = account.as_ref().map(|a| events::enter(&hub, &a.id));
    let mut shutdown = hub.shutdown.subscribe();
    let first = match hub.store.seeks(hub.now()).await {
        Ok(rows) => LobbyEvent::Seeks {
            seeks: rows.iter().filter_map(parse).collect(),
        },
        Err(e) => {
            tracing::warn!("lobby: {e}");
            LobbyEvent::Seeks { seeks: Vec::new() }
        }
    };
    let text = serde_json::to_string(&first).expect("events serialise");
    if tx.send(Message::Text(text.into())).await.is_err() {
        return;
    }
    let rate = crate::limits::MessageRate::game(&hub.bounds.limits);
    loop {
        let out: Option<String> = tokio::select! {
            _ = shutdown.changed() => {
                let _ = tx.send(crate::ws::close(crate::ws::CLOSE_RESTART, "the server is restarting; reconnect")).await;
                break;
            }
            ev = lobby.recv() => match ev {
                Ok(j) => Some(j.to_string()),
                // Missed some: send the whole list again.
                Err(RecvError::Lagged(_)) => match hub.store.seeks(hub.now()).await {
                    Ok(rows) => Some(serde_json::to_string(&LobbyEvent::Seeks {
                        seeks: rows.iter().filter_map(parse).collect(),
                    }).expect("events serialise")),
                    Err(_) => None,
                },
                Err(RecvError::Closed) => break,
            },
            ev = async {
                match mine.as_mut() {
                    Some(r) => r.recv().await,
                    None => std::future::pending().await,
                }
            } => match ev {
                Ok(j) => Some(j.to_string()),
                Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => break,
            },
            msg = rx.next() => match msg {
                Some(Ok(Message::Text(_))) => {
                    // Only pings are expected; a flood closes the socket.
                    if rate.check().is_err() {
                        let _ = tx.send(crate::ws::close(1008, "too many messages")).await;
                        break;
                    }
                    None
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => None,
            },
        };
        if let Some(text) = out {
            if tx.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
    }
}

/// Tells a user a game of theirs ended.
pub async fn tell_finish(hub: &Shared, user: &str, game_id: &str) {
    let e = UserEvent::GameFinish {
        game_id: game_id.to_string(),
    };
    events::to_user(hub, user, &e).await;
}
