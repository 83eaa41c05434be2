//! Player pages and lists: a player's ratings and game counts, their games (paged), their rating
//! history, all their games as PGN (streamed page by page), the leaderboard per variant, and an
//! account's games in progress ("your turn" first, by deadline).

use super::rating::{perfs_view, PerfView, PROVISIONAL_RD};
use super::Auth;
use crate::error::ApiError;
use crate::game::{GameState, Live, PlayerRef, Side};
use crate::hub::Shared;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use ts_rs::TS;

/// Games per page of a player's list.
pub const PAGE: i64 = 20;
/// Leaderboard: active in the last 30 days.
pub const ACTIVE_MS: i64 = 30 * 86_400_000;

async fn user_or_404(hub: &Shared, name: &str) -> Result<crate::store::players::UserRow, ApiError> {
    if name.len() > 20 {
        return Err(ApiError::not_found(format!("no player named '{name}'")));
    }
    hub.store
        .user(&name.to_ascii_lowercase())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no player named '{name}'")))
}

pub async fn user(
    State(hub): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let u = user_or_404(&hub, &name).await?;
    let perfs = perfs_view(&hub.store.perfs(&u.id).await?);
    let c = hub.store.user_counts(&u.id).await?;
    Ok(Json(json!({
        "username": u.username,
        "kind": u.kind,
        "created_at": u.created_at,
        "perfs": perfs,
        "count": {"all": c.all, "rated": c.rated, "win": c.win, "loss": c.loss, "draw": c.draw, "playing": c.playing},
    })))
}

#[derive(Deserialize)]
pub struct PageQuery {
    page: Option<i64>,
}

async fn load_games(hub: &Shared, ids: &[(i64, String)]) -> Result<Vec<Live>, ApiError> {
    let mut out = Vec::with_capacity(ids.len());
    for (_, id) in ids {
        if let Some(s) = hub.store.load(id).await? {
            match Live::from_stored(s) {
                Ok(l) => out.push(l),
                Err(e) => tracing::error!(game = %id, "cannot be rebuilt: {e}"),
            }
        }
    }
    Ok(out)
}

pub async fn games(
    State(hub): State<Shared>,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    let u = user_or_404(&hub, &name).await?;
    let page = q.page.unwrap_or(1).clamp(1, 10_000);
    let ids = hub
        .store
        .user_game_ids(&u.id, None, (page - 1) * PAGE, PAGE + 1)
        .await?;
    let more = ids.len() as i64 > PAGE;
    let ids = &ids[..ids.len().min(PAGE as usize)];
    let now = hub.now();
    let games: Vec<GameState> = load_games(&hub, ids)
        .await?
        .iter()
        .map(|l| l.summary(now))
        .collect();
    Ok(Json(json!({ "games": games, "page": page, "more": more })))
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct HistoryPoint {
    #[ts(type = "number")]
    pub at: i64,
    pub rating: i32,
    pub rd: i32,
    pub game_id: String,
}

pub async fn rating_history(
    State(hub): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<BTreeMap<String, Vec<HistoryPoint>>>, ApiError> {
    let u = user_or_404(&hub, &name).await?;
    let mut out: BTreeMap<String, Vec<HistoryPoint>> = rules::Variant::ALL
        .iter()
        .map(|v| (v.name().to_string(), Vec::new()))
        .collect();
    for h in hub.store.rating_history(&u.id).await? {
        out.entry(h.variant).or_default().push(HistoryPoint {
            at: h.at,
            rating: h.rating.round() as i32,
            rd: h.rd.round() as i32,
            game_id: h.game_id,
        });
    }
    Ok(Json(out))
}

/// `GET /api/games/user/{name}`: every finished game of the player as PGN, newest first, read and
/// sent 50 at a time.
pub async fn pgn_all(
    State(hub): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let u = user_or_404(&hub, &name).await?;
    struct St {
        hub: Shared,
        user: String,
        before: Option<(i64, String)>,
        done: bool,
    }
    let st = St {
        hub,
        user: u.id.clone(),
        before: None,
        done: false,
    };
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        let ids = match st
            .hub
            .store
            .user_game_ids(&st.user, st.before.clone(), 0, 50)
            .await
        {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!("PGN export of {}: {e}", st.user);
                return Some((
                    Err(std::io::Error::other("storage unavailable")),
                    St { done: true, ..st },
                ));
            }
        };
        if ids.is_empty() {
            return None;
        }
        st.done = ids.len() < 50;
        st.before = ids.last().cloned();
        let mut text = String::new();
        match load_games(&st.hub, &ids).await {
            Ok(games) => {
                for g in games {
                    text.push_str(&crate::export::game_pgn(&g));
                    text.push_str("\n\n");
                }
            }
            Err(_) => st.done = true,
        }
        Some((Ok::<_, std::io::Error>(text), st))
    });
    let file = format!("attachment; filename=\"doublemove_{}.pgn\"", u.id);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "application/x-chess-pgn; charset=utf-8".to_string(),
            ),
            (header::CONTENT_DISPOSITION, file),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response())
}

#[derive(Clone, Debug, Serialize, TS)]
pub struct BoardEntry {
    pub username: String,
    pub rating: i32,
    pub rd: i32,
    #[ts(type = "number")]
    pub games: i64,
}

pub async fn leaderboard(
    State(hub): State<Shared>,
    Path(variant): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let v: rules::Variant = variant
        .parse()
        .map_err(|e| ApiError::not_found(format!("{e}")))?;
    let since = hub.now() - ACTIVE_MS;
    let rows = hub
        .store
        .leaderboard(v.name(), since, PROVISIONAL_RD, 100)
        .await?;
    let players: Vec<BoardEntry> = rows
        .iter()
        .map(|(name, p)| {
            let view = PerfView::of(Some(p));
            BoardEntry {
                username: name.clone(),
                rating: view.rating,
                rd: view.rd,
                games: view.games,
            }
        })
        .collect();
    Ok(Json(json!({ "players": players })))
}

/// A game in progress of the account.
#[derive(Clone, Debug, Serialize, TS)]
pub struct Playing {
    pub id: String,
    pub variant: String,
    pub color: Side,
    pub opponent: Option<PlayerRef>,
    pub my_turn: bool,
    #[ts(type = "number | null")]
    pub deadline_ms: Option<i64>,
    pub clock: Option<crate::game::view::ClockView>,
    pub days: Option<u32>,
    pub fen: String,
}

pub async fn playing(State(hub): State<Shared>, auth: Auth) -> Result<Json<Value>, ApiError> {
    let me = auth.require()?;
    let now = hub.now();
    let mut out = Vec::new();
    for id in hub.store.user_playing_ids(&me.id).await? {
        let Ok(slot) = hub.slot(&id).await else {
            continue;
        };
        let live = slot.live.lock().await;
        let Some(c) = live.color_of_user(&me.id) else {
            continue;
        };
        let s = live.state(crate::game::StateKind::Summary, now);
        out.push(Playing {
            id: id.clone(),
            variant: s.variant,
            color: Side::from(c),
            opponent: live.meta.players[c.other().index()].clone(),
            my_turn: live.status == crate::store::Status::Started
                && live.game.position().turn() == c,
            deadline_ms: s.deadline_ms,
            clock: s.clock,
            days: s.days,
            fen: s.fen,
        });
    }
    // My turn first, then the nearest deadline.
    out.sort_by_key(|p| (!p.my_turn, p.deadline_ms.unwrap_or(i64::MAX)));
    Ok(Json(json!({ "games": out })))
}
