//! The bot API, after lichess's: an account becomes a bot (`POST /api/bot/account/upgrade`, only
//! before it has played), follows its events as NDJSON (`GET /api/stream/event`: challenges, game
//! starts and finishes), accepts or declines challenges, and plays each game through its stream
//! and one-move requests (`/api/bot/game/...`). Every route takes the API token as Bearer.

use super::events::{self, UserEvent};
use super::Auth;
use crate::error::ApiError;
use crate::game::{Action, Actor, ChatRoom, MoveAction};
use crate::hub::Shared;
use crate::routes::ApiJson;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

pub async fn upgrade(State(hub): State<Shared>, auth: Auth) -> Result<Json<Value>, ApiError> {
    let me = auth.require()?;
    if !auth.by_token {
        return Err(ApiError::unauthorized(
            "upgrade with the account's API token (Authorization: Bearer)",
        ));
    }
    if me.bot {
        return Ok(Json(json!({ "username": me.username, "kind": "bot" })));
    }
    let counts = hub.store.user_counts(&me.id).await?;
    if counts.all + counts.playing > 0 {
        return Err(ApiError::conflict(
            "only an account that has not played yet can become a bot",
        ));
    }
    hub.store.user_set_kind(&me.id, "bot").await?;
    Ok(Json(json!({ "username": me.username, "kind": "bot" })))
}

/// A user event in lichess's form (`gameStart`, `challenge`, …).
pub fn lichess_form(e: &UserEvent) -> Value {
    match e {
        UserEvent::GameStart {
            game_id,
            color,
            variant,
        } => {
            json!({"type": "gameStart", "game": {"id": game_id, "gameId": game_id, "color": color, "variant": variant}})
        }
        UserEvent::GameFinish { game_id } => {
            json!({"type": "gameFinish", "game": {"id": game_id, "gameId": game_id}})
        }
        UserEvent::Challenge { challenge } => json!({"type": "challenge", "challenge": challenge}),
        UserEvent::ChallengeGone {
            reason, challenge, ..
        } => {
            let t = match reason.as_str() {
                "declined" => "challengeDeclined",
                "canceled" => "challengeCanceled",
                _ => "challengeAccepted",
            };
            json!({"type": t, "challenge": challenge})
        }
    }
}

/// `GET /api/stream/event`: the account's pending challenges and started games first, then every
/// new event; an empty line every 5 s. While open, the account counts as present (its real-time
/// seeks stay).
pub async fn event_stream(State(hub): State<Shared>, auth: Auth) -> Result<Response, ApiError> {
    let me = auth.require()?.clone();
    let rx = hub.players.bus.user(&me.id);
    let mut first: Vec<String> = Vec::new();
    for r in hub.store.challenges_of(&me.id).await? {
        if let Ok(c) = serde_json::from_str::<super::challenge::Challenge>(&r.data) {
            if c.to.eq_ignore_ascii_case(&me.username) {
                first.push(lichess_form(&UserEvent::Challenge { challenge: c }).to_string());
            }
        }
    }
    for id in hub.store.user_playing_ids(&me.id).await? {
        if let Ok(slot) = hub.slot(&id).await {
            let live = slot.live.lock().await;
            if let Some(c) = live.color_of_user(&me.id) {
                let e = UserEvent::GameStart {
                    game_id: id.clone(),
                    color: c.into(),
                    variant: live.variant().name().to_string(),
                };
                first.push(lichess_form(&e).to_string());
            }
        }
    }
    struct St {
        rx: tokio::sync::broadcast::Receiver<std::sync::Arc<str>>,
        first: std::vec::IntoIter<String>,
        shutdown: tokio::sync::watch::Receiver<bool>,
        _presence: events::Presence,
    }
    let st = St {
        rx,
        first: first.into_iter(),
        shutdown: hub.shutdown.subscribe(),
        _presence: events::enter(&hub, &me.id),
    };
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if let Some(f) = st.first.next() {
            return Some((Ok::<_, std::io::Error>(f + "\n"), st));
        }
        loop {
            if *st.shutdown.borrow() {
                return None;
            }
            let next = tokio::select! {
                r = tokio::time::timeout(Duration::from_secs(5), st.rx.recv()) => r,
                _ = st.shutdown.changed() => return None,
            };
            return match next {
                Err(_) => Some((Ok("\n".to_string()), st)),
                Ok(Ok(j)) => match serde_json::from_str::<UserEvent>(&j) {
                    Ok(e) => Some((Ok(format!("{}\n", lichess_form(&e))), st)),
                    Err(_) => continue,
                },
                Ok(Err(RecvError::Lagged(_))) => continue,
                Ok(Err(RecvError::Closed)) => None,
            };
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        axum::body::Body::from_stream(body),
    )
        .into_response())
}

/// The account's seat in a game, then the action through the hub.
async fn act(
    hub: &Shared,
    auth: &Auth,
    id: &str,
    action: Action,
) -> Result<Json<crate::game::GameState>, ApiError> {
    let slot = hub.slot(id).await?;
    let me = auth.require_seat(&*slot.live.lock().await)?;
    Ok(Json(hub.act(&slot, Actor::Player(me), &action).await?))
}

/// `POST /api/bot/game/{id}/move/{uci}`: one move (`e2e4`), or a whole turn with commas.
pub async fn play(
    State(hub): State<Shared>,
    auth: Auth,
    Path((id, mv)): Path<(String, String)>,
) -> Result<Json<crate::game::GameState>, ApiError> {
    let m = if mv.contains(',') {
        MoveAction {
            turn: Some(mv),
            ..MoveAction::default()
        }
    } else {
        MoveAction {
            mv: Some(mv),
            ..MoveAction::default()
        }
    };
    act(&hub, &auth, &id, Action::Move(m)).await
}

pub async fn resign(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<crate::game::GameState>, ApiError> {
    act(&hub, &auth, &id, Action::Resign).await
}

pub async fn abort(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<crate::game::GameState>, ApiError> {
    act(&hub, &auth, &id, Action::Abort).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatReq {
    room: ChatRoom,
    text: String,
}

/// `POST /api/bot/game/{id}/chat` (also for any player with a token or session).
pub async fn chat(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ChatReq>,
) -> Result<Json<Value>, ApiError> {
    let slot = hub.slot(&id).await?;
    let seat = auth.seat(&*slot.live.lock().await);
    let writer = super::chat::Writer {
        account: auth.account.clone(),
        seat,
        anon_key: None,
    };
    super::chat::post(&hub, &slot, &writer, req.room, &req.text).await?;
    Ok(Json(json!({ "ok": true })))
}
