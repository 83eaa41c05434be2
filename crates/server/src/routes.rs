//! The HTTP API (docs/api.md): the router, request bodies, and the game endpoints. Every endpoint
//! that changes a game builds an [`Action`] and hands it to the hub (`Hub::act`), as the game
//! WebSocket does.

use crate::error::ApiError;
use crate::game::{
    Action, Actor, Clock, DrawAction, EngineSeat, GameState, Live, Meta, MoveAction, Side,
    StateKind, TakebackAction,
};
use crate::hub::{now_ms, Event, Shared, Slot};
use crate::store::Status;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rules::{Color, Position, Variant};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

/// Request bodies larger than this are refused (413).
pub const BODY_LIMIT: usize = 64 * 1024;

pub fn router(state: Shared, rates: &crate::limits::RateLimitLayers) -> Router {
    // Creating games has its own, slower rate per client.
    let creating = Router::new()
        .route("/api/games", post(create))
        .layer(rates.game_creation.clone());
    Router::new()
        .merge(creating)
        .route("/api/games", get(list))
        .route("/api/games/{id}", get(get_game))
        .route("/api/games/{id}/join", post(join))
        .route("/api/games/{id}/move", post(play))
        .route("/api/games/{id}/resign", post(resign))
        .route("/api/games/{id}/abort", post(abort))
        .route("/api/games/{id}/draw/{action}", post(draw))
        .route("/api/games/{id}/takeback/{action}", post(takeback))
        .route("/api/games/{id}/pgn", get(pgn))
        .route("/api/games/{id}/stream", get(stream))
        .route("/api/games/{id}/ws", get(crate::ws::game_ws))
        .route("/api/pgn/import", post(crate::tools::import_pgn))
        .route("/api/fen/validate", post(crate::tools::validate_fen))
        .route("/api/analysis/ws", get(crate::analysis::analysis_ws))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .fallback(crate::web::static_file)
        .with_state(state)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(CatchPanicLayer::new())
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(rates.requests.clone())
        .layer(axum::middleware::map_response(json_errors))
        .layer(crate::limits::security_headers())
        .layer(TraceLayer::new_for_http().make_span_with(span_without_secrets))
}

/// The request's span: method and path only. The query string may carry a player token
/// (`/ws?token=…`) and headers carry `Authorization`: neither may reach a log line.
fn span_without_secrets(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
}

/// Errors from the layers (oversized body, panics, unknown method) become `{"error": ...}` too.
async fn json_errors(resp: Response) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return resp;
    }
    let msg = match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            format!("request body too large (limit {BODY_LIMIT} bytes)")
        }
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed".to_string(),
        StatusCode::NOT_FOUND => "not found".to_string(),
        s => s.canonical_reason().unwrap_or("error").to_string(),
    };
    ApiError::new(status, msg).into_response()
}

/// A JSON body whose errors (malformed, wrong type, too large) answer `{"error": ...}`.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(rej) => Err(ApiError::new(rej.status(), rej.body_text())),
        }
    }
}

pub fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

/// The colour of the player whose token was sent.
pub async fn player(slot: &Slot, token: Option<&str>) -> Result<Color, ApiError> {
    let Some(token) = token else {
        return Err(crate::game::GameError::NoToken.into());
    };
    slot.live
        .lock()
        .await
        .color_of_token(token)
        .ok_or_else(|| crate::game::GameError::NotAPlayer.into())
}

fn new_token() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    (0..10)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockReq {
    /// Seconds.
    limit: f64,
    /// Seconds added after each turn.
    #[serde(default)]
    increment: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateReq {
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    fen: Option<String>,
    /// "engine" or "human" (default).
    #[serde(default)]
    opponent: Option<String>,
    #[serde(default)]
    level: Option<u8>,
    /// The creator's colour: white, black or random (default).
    #[serde(default)]
    color: Option<String>,
    #[serde(default)]
    clock: Option<ClockReq>,
    #[serde(default)]
    public: bool,
}

/// Liveness: the process answers.
async fn healthz(State(hub): State<Shared>) -> Json<Value> {
    Json(json!({"status": "ok", "node": hub.node}))
}

/// Readiness: the store can durably accept writes now (503 otherwise, and while shutting down).
async fn readyz(State(hub): State<Shared>) -> Response {
    if *hub.shutdown.borrow() {
        let body = json!({"status": "shutting_down", "node": hub.node});
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    let pool = hub.bounds.pool.stats();
    match hub.store.ping().await {
        Ok(()) => Json(json!({
            "status": "ready",
            "node": hub.node,
            "store": hub.store.backend(),
            "live_games": hub.live_count(),
            "engine": {"threads": pool.threads, "queued": pool.queued, "running": pool.running},
        }))
        .into_response(),
        Err(e) => {
            tracing::error!("readiness: {e}");
            let body = json!({
                "status": "unavailable",
                "node": hub.node,
                "store": hub.store.backend(),
                "error": "storage unavailable",
            });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
        }
    }
}

pub fn parse_variant(v: Option<&str>) -> Result<Variant, ApiError> {
    match v {
        None => Ok(Variant::Chess),
        Some(s) => s.parse().map_err(|e| ApiError::bad_request(format!("{e}"))),
    }
}

async fn create(
    State(hub): State<Shared>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    ApiJson(req): ApiJson<CreateReq>,
) -> Result<Response, ApiError> {
    let client = match &peer {
        Some(axum::Extension(addr)) => crate::limits::client_key(addr),
        None => crate::engine_pool::ClientKey::connection(),
    };
    let variant = parse_variant(req.variant.as_deref())?;
    let start = match req.fen.as_deref() {
        None => Position::start(variant),
        Some(f) => Position::from_fen(variant, f)
            .map_err(|e| ApiError::bad_request(format!("bad FEN: {e}")))?,
    };
    if rules::outcome::position_outcome(&start).is_some() {
        return Err(ApiError::bad_request(
            "the game would be over in its start position",
        ));
    }
    let engine = match req.opponent.as_deref().unwrap_or("human") {
        "engine" => true,
        "human" => false,
        o => {
            return Err(ApiError::bad_request(format!(
                "unknown opponent '{o}' (expected engine or human)"
            )))
        }
    };
    let level = req.level.unwrap_or(3);
    if engine && !(1..=8).contains(&level) {
        return Err(ApiError::bad_request("level must be 1 to 8"));
    }
    let color = match req.color.as_deref().unwrap_or("random") {
        "random" => {
            if rand::random::<bool>() {
                Color::White
            } else {
                Color::Black
            }
        }
        c => Side::parse(c).map(Side::color).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown colour '{c}' (expected white, black or random)"
            ))
        })?,
    };
    let clock = match req.clock {
        None => None,
        Some(c) => Some(
            Clock::from_seconds(c.limit, c.increment).map_err(|e| ApiError::bad_request(e.0))?,
        ),
    };
    // A client's live games against the engine are capped (each costs engine time).
    let guard = if engine {
        let g = hub
            .bounds
            .counters
            .engine_games
            .try_acquire(&client)
            .map_err(|e| {
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!("too many games against the engine at once: {e}; finish or resign one"),
                )
            })?;
        Some(g)
    } else {
        None
    };
    let token = new_token();
    let mut tokens = [None, None];
    tokens[color.index()] = Some(token.clone());
    let meta = Meta {
        engine: engine.then_some(EngineSeat {
            level,
            color: Side::from(color.other()),
        }),
        tokens,
        invite: (!engine).then(new_token),
        public: req.public,
        clock,
        draw_offer: None,
        takeback_offer: None,
        takebacks: Vec::new(),
        takebacks_used: [0, 0],
        imposed: None,
    };
    let status = if engine {
        Status::Started
    } else {
        Status::Waiting
    };
    let now = now_ms();
    let live = Live::new(new_id(), start, meta, status, now);
    let id = live.id.clone();
    let invite = live.meta.invite.clone();
    let game = live.state(StateKind::GameFull, now);
    hub.create(live, (client, guard)).await?;
    let body = json!({
        "id": id,
        "token": token,
        "color": Side::from(color),
        "invite": invite,
        "invite_url": invite.as_ref().map(|i| format!("/join/{id}?invite={i}")),
        "game": game,
    });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

#[derive(Deserialize)]
struct JoinReq {
    invite: String,
}

async fn join(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<JoinReq>,
) -> Result<Json<Value>, ApiError> {
    let slot = hub.slot(&id).await?;
    let token = new_token();
    let seat = slot.live.lock().await.free_seat();
    let action = Action::Join {
        invite: req.invite,
        token: token.clone(),
    };
    let game = hub.act(&slot, Actor::Guest, &action).await?;
    Ok(Json(json!({
        "id": id,
        "token": token,
        "color": seat.map(Side::from),
        "game": game,
    })))
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    limit: Option<i64>,
}

async fn list(
    State(hub): State<Shared>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    use Status::*;
    let statuses: &[Status] = match q.status.as_deref().unwrap_or("finished") {
        "finished" => &[Finished, Aborted],
        "open" => &[Waiting],
        "started" => &[Started],
        "all" => &Status::ALL,
        s => {
            return Err(ApiError::bad_request(format!(
                "unknown status '{s}' (expected finished, open, started or all)"
            )))
        }
    };
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let rows = hub.store.list(statuses, limit).await?;
    let now = now_ms();
    let games: Vec<GameState> = rows
        .into_iter()
        .filter_map(|s| Live::from_stored(s).ok())
        .map(|l| l.summary(now))
        .collect();
    Ok(Json(json!({ "games": games })))
}

async fn get_game(
    State(hub): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<GameState>, ApiError> {
    let slot = hub.slot(&id).await?;
    let v = slot.live.lock().await.state(StateKind::GameFull, now_ms());
    Ok(Json(v))
}

/// The player's action through `Authorization: Bearer`.
async fn act(
    hub: &Shared,
    id: &str,
    headers: &HeaderMap,
    action: Action,
) -> Result<Json<GameState>, ApiError> {
    let slot = hub.slot(id).await?;
    let color = player(&slot, bearer(headers).as_deref()).await?;
    Ok(Json(hub.act(&slot, Actor::Player(color), &action).await?))
}

async fn play(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<MoveAction>,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &headers, Action::Move(req)).await
}

async fn resign(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &headers, Action::Resign).await
}

async fn abort(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &headers, Action::Abort).await
}

fn path_action<T: DeserializeOwned>(kind: &str, action: &str) -> Result<T, ApiError> {
    serde_json::from_value(Value::String(action.to_string()))
        .map_err(|_| ApiError::not_found(format!("unknown {kind} action '{action}'")))
}

async fn draw(
    State(hub): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    let action: DrawAction = path_action("draw", &action)?;
    act(&hub, &id, &headers, Action::Draw { action }).await
}

async fn takeback(
    State(hub): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    let action: TakebackAction = path_action("takeback", &action)?;
    act(&hub, &id, &headers, Action::Takeback { action }).await
}

async fn pgn(State(hub): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let slot = hub.slot(&id).await?;
    let live = slot.live.lock().await;
    let text = crate::export::game_pgn(&live);
    let name = format!("doublemove_{}_{}.pgn", live.variant().name(), live.id);
    drop(live);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "application/x-chess-pgn; charset=utf-8".to_string(),
            ),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        text,
    )
        .into_response())
}

/// NDJSON: a full game event, then a state event per change (and an empty line every few seconds).
async fn stream(State(hub): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let slot = hub.slot(&id).await?;
    let rx = slot.tx.subscribe();
    let (first, over) = {
        let live = slot.live.lock().await;
        (
            serde_json::to_string(&live.state(StateKind::GameFull, now_ms()))
                .expect("states serialise"),
            !live.is_live(),
        )
    };
    struct St {
        rx: tokio::sync::broadcast::Receiver<Event>,
        first: Option<String>,
        done: bool,
        slot: Arc<Slot>,
        shutdown: tokio::sync::watch::Receiver<bool>,
    }
    let st = St {
        rx,
        first: Some(first),
        done: over,
        slot,
        shutdown: hub.shutdown.subscribe(),
    };
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if let Some(f) = st.first.take() {
            return Some((Ok::<_, std::io::Error>(f + "\n"), st));
        }
        if st.done || *st.shutdown.borrow() {
            return None;
        }
        let next = tokio::select! {
            r = tokio::time::timeout(Duration::from_secs(5), st.rx.recv()) => r,
            _ = st.shutdown.changed() => return None,
        };
        match next {
            Err(_) => Some((Ok("\n".to_string()), st)),
            Ok(Ok(ev)) => {
                st.done = ev.over;
                Some((Ok(format!("{}\n", ev.json)), st))
            }
            Ok(Err(RecvError::Lagged(_))) => {
                let live = st.slot.live.lock().await;
                let s = serde_json::to_string(&live.state(StateKind::GameState, now_ms()))
                    .expect("states serialise");
                st.done = !live.is_live();
                drop(live);
                Some((Ok(s + "\n"), st))
            }
            Ok(Err(RecvError::Closed)) => None,
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        axum::body::Body::from_stream(body),
    )
        .into_response())
}
