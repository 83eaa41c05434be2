//! The HTTP API (docs/api.md): the router, request bodies, and the game endpoints. Every endpoint
//! that changes a game builds an [`Action`] and hands it to the hub (`Hub::act`), as the game
//! WebSocket does.

use crate::error::ApiError;
use crate::game::{
    Action, Actor, Clock, DrawAction, EngineSeat, GameState, Live, Meta, MoveAction, Side,
    StateKind, TakebackAction,
};
use crate::hub::{Event, Shared, Slot};
use crate::players::start::ColorChoice;
use crate::players::Auth;
use crate::store::Status;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{header, StatusCode};
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
    use crate::players::{account, bot, challenge, seeks, users};
    let sessions = crate::players::session::layer(
        state.store.clone(),
        state.time.clone(),
        state.bounds.limits.secure_cookies,
    );
    // Creating games has its own, slower rate per client.
    let creating = Router::new()
        .route("/api/games", post(create))
        .layer(rates.game_creation.clone());
    // The API is rate-limited per client; the page's static files are not (a page load fetches
    // several, and players behind one address would share the budget).
    let api = Router::new()
        .merge(creating)
        .route("/api/account/signup", post(account::signup))
        .route("/api/account/login", post(account::login))
        .route("/api/account/logout", post(account::logout))
        .route("/api/account", get(account::me))
        .route("/api/account/token", post(account::token))
        .route("/api/account/playing", get(users::playing))
        .route("/api/users/{name}", get(users::user))
        .route("/api/users/{name}/games", get(users::games))
        .route(
            "/api/users/{name}/rating-history",
            get(users::rating_history),
        )
        .route("/api/games/user/{name}", get(users::pgn_all))
        .route("/api/leaderboard/{variant}", get(users::leaderboard))
        .route("/api/seeks", post(seeks::create).get(seeks::list))
        .route("/api/seeks/{id}", axum::routing::delete(seeks::cancel))
        .route("/api/seeks/{id}/accept", post(seeks::accept))
        .route("/api/lobby/ws", get(seeks::lobby_ws))
        .route("/api/challenge/{name}", post(challenge::create))
        .route("/api/challenges", get(challenge::list))
        .route("/api/challenge/{id}/accept", post(challenge::accept))
        .route("/api/challenge/{id}/decline", post(challenge::decline))
        .route("/api/challenge/{id}/cancel", post(challenge::cancel))
        .route("/api/games/{id}/rematch", post(challenge::rematch))
        .route(
            "/api/games/{id}/rematch/decline",
            post(challenge::rematch_decline),
        )
        .route("/api/games/{id}/chat", post(bot::chat))
        .route("/api/bot/account/upgrade", post(bot::upgrade))
        .route("/api/stream/event", get(bot::event_stream))
        .route("/api/bot/game/stream/{id}", get(stream))
        .route("/api/bot/game/{id}/move/{mv}", post(bot::play))
        .route("/api/bot/game/{id}/resign", post(bot::resign))
        .route("/api/bot/game/{id}/abort", post(bot::abort))
        .route("/api/bot/game/{id}/chat", post(bot::chat))
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
        .route("/api/position/move", post(crate::tools::try_move))
        .route("/api/analysis/ws", get(crate::analysis::analysis_ws))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .layer(rates.requests.clone());
    Router::new()
        .merge(api)
        .fallback(crate::web::static_file)
        .with_state(state)
        .layer(axum::middleware::from_fn(crate::players::auth::csrf))
        .layer(sessions)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(CatchPanicLayer::new())
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
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

fn new_token() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_id() -> String {
    crate::players::new_id(10)
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
    /// Correspondence: days per turn (instead of a clock).
    #[serde(default)]
    days: Option<u32>,
    #[serde(default)]
    rated: bool,
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
            "engine": {"threads": pool.threads, "workers": pool.workers, "queued": pool.queued, "running": pool.running},
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
    auth: Auth,
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
        "random" => ColorChoice::Random.pick(),
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
    if let Some(d) = req.days {
        if clock.is_some() {
            return Err(ApiError::bad_request(
                "give either \"clock\" or \"days\", not both",
            ));
        }
        if !crate::players::start::DAYS.contains(&d) {
            return Err(ApiError::bad_request(format!(
                "days per turn must be one of {:?}, not {d}",
                crate::players::start::DAYS
            )));
        }
    }
    if req.rated {
        if engine {
            return Err(ApiError::bad_request(
                "games against the engine are not rated",
            ));
        }
        auth.require()?;
        if clock.is_none() && req.days.is_none() {
            return Err(ApiError::bad_request(
                "a rated game needs a clock or days per turn",
            ));
        }
    }
    if let Some(a) = &auth.account {
        if a.bot {
            return Err(ApiError::forbidden(
                "bot accounts play through challenges and the bot API",
            ));
        }
    }
    let me = match &auth.account {
        Some(a) => Some(crate::players::rating::player_ref(&*hub.store, a, variant.name()).await?),
        None => None,
    };
    let spec = NewGame {
        start,
        engine: engine.then_some(EngineSeat {
            level,
            color: Side::from(color.other()),
        }),
        color,
        clock,
        days: req.days,
        rated: req.rated,
        public: req.public,
        me,
    };
    let (live, token) = spec.build(hub.now());
    let body = created(&hub, live, token, client).await?;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// A game one player opens: against the engine (started at once) or waiting for a second player.
struct NewGame {
    start: Position,
    engine: Option<EngineSeat>,
    /// The creator's colour.
    color: Color,
    clock: Option<Clock>,
    days: Option<u32>,
    rated: bool,
    public: bool,
    /// The creator's account, if signed in.
    me: Option<crate::game::PlayerRef>,
}

impl NewGame {
    /// The game and the creator's seat token.
    fn build(self, now: i64) -> (Live, String) {
        let token = new_token();
        let mut tokens = [None, None];
        tokens[self.color.index()] = Some(token.clone());
        let mut players = [None, None];
        players[self.color.index()] = self.me;
        let engine = self.engine.is_some();
        let meta = Meta {
            invite: (!engine).then(new_token),
            public: self.public,
            clock: self.clock,
            days: self.days,
            rated: self.rated,
            players,
            ..Meta::new(self.engine, tokens)
        };
        let status = if engine {
            Status::Started
        } else {
            Status::Waiting
        };
        let mut live = Live::new(new_id(), self.start, meta, status, now);
        if engine {
            live.begin(now);
        }
        (live, token)
    }
}

/// Stores a new game (a game against the engine counts among the client's engine games) and
/// the creation answer: id, the creator's token and colour, the invite, the state.
async fn created(
    hub: &Shared,
    live: Live,
    token: String,
    client: crate::engine_pool::ClientKey,
) -> Result<Value, ApiError> {
    // A client's live games against the engine are capped (each costs engine time).
    let guard = if live.engine().is_some() {
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
    let id = live.id.clone();
    let color = live.color_of_token(&token).map(Side::from);
    let invite = live.meta.invite.clone();
    let mut game = live.state(StateKind::GameFull, hub.now());
    game.you = color;
    hub.create(live, (client, guard)).await?;
    Ok(json!({
        "id": id,
        "token": token,
        "color": color,
        "invite": invite,
        "invite_url": invite.as_ref().map(|i| format!("/join/{id}?invite={i}")),
        "game": game,
    }))
}

/// A rematch against the engine: the same settings from the same start, colours swapped, at once.
pub async fn rematch_engine(
    hub: &Shared,
    auth: &Auth,
    old: &Live,
    me: Color,
    engine: EngineSeat,
    id: String,
) -> Result<Response, ApiError> {
    let start = Position::from_fen(old.variant(), &old.initial_fen).map_err(ApiError::internal)?;
    let clock = match &old.meta.clock {
        Some(c) => Some(
            Clock::from_seconds(c.limit_ms as f64 / 1000.0, c.increment_ms as f64 / 1000.0)
                .map_err(|e| ApiError::bad_request(e.0))?,
        ),
        None => None,
    };
    let me_ref = match &auth.account {
        Some(a) => {
            Some(crate::players::rating::player_ref(&*hub.store, a, old.variant().name()).await?)
        }
        None => None,
    };
    let color = me.other();
    let spec = NewGame {
        start,
        engine: Some(EngineSeat {
            level: engine.level,
            color: Side::from(color.other()),
        }),
        color,
        clock,
        days: old.meta.days,
        rated: false,
        public: false,
        me: me_ref,
    };
    let (mut live, token) = spec.build(hub.now());
    live.id = id;
    let client = match &auth.account {
        Some(a) => crate::engine_pool::ClientKey::account(a.id.clone()),
        None => crate::engine_pool::ClientKey::account(format!("game:{}", old.id)),
    };
    let body = created(hub, live, token, client).await?;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

#[derive(Deserialize)]
struct JoinReq {
    invite: String,
}

async fn join(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<JoinReq>,
) -> Result<Json<Value>, ApiError> {
    let slot = hub.slot(&id).await?;
    let token = new_token();
    let (seat, variant) = {
        let live = slot.live.lock().await;
        (live.free_seat(), live.variant())
    };
    let player = match &auth.account {
        Some(a) if a.bot => {
            return Err(ApiError::forbidden(
                "bot accounts play through challenges and the bot API",
            ))
        }
        Some(a) => Some(crate::players::rating::player_ref(&*hub.store, a, variant.name()).await?),
        None => None,
    };
    let action = Action::Join {
        invite: req.invite,
        token: token.clone(),
        player,
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
    let now = hub.now();
    let games: Vec<GameState> = rows
        .into_iter()
        .filter_map(|s| Live::from_stored(s).ok())
        .map(|l| l.summary(now))
        .collect();
    Ok(Json(json!({ "games": games })))
}

#[derive(Deserialize)]
struct SeatQuery {
    token: Option<String>,
}

async fn get_game(
    State(hub): State<Shared>,
    mut auth: Auth,
    Path(id): Path<String>,
    Query(q): Query<SeatQuery>,
) -> Result<Json<GameState>, ApiError> {
    if q.token.is_some() {
        auth.seat_token = q.token;
    }
    let slot = hub.slot(&id).await?;
    let live = slot.live.lock().await;
    let mut v = live.state(StateKind::GameFull, hub.now());
    v.you = auth.seat(&live).map(Side::from);
    Ok(Json(v))
}

/// The player's action: their seat by account (session or API token) or by seat token (Bearer).
async fn act(
    hub: &Shared,
    id: &str,
    auth: &Auth,
    action: Action,
) -> Result<Json<GameState>, ApiError> {
    let slot = hub.slot(id).await?;
    let color = auth.require_seat(&*slot.live.lock().await)?;
    Ok(Json(hub.act(&slot, Actor::Player(color), &action).await?))
}

async fn play(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    auth: Auth,
    ApiJson(req): ApiJson<MoveAction>,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &auth, Action::Move(req)).await
}

async fn resign(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    auth: Auth,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &auth, Action::Resign).await
}

async fn abort(
    State(hub): State<Shared>,
    Path(id): Path<String>,
    auth: Auth,
) -> Result<Json<GameState>, ApiError> {
    act(&hub, &id, &auth, Action::Abort).await
}

fn path_action<T: DeserializeOwned>(kind: &str, action: &str) -> Result<T, ApiError> {
    serde_json::from_value(Value::String(action.to_string()))
        .map_err(|_| ApiError::not_found(format!("unknown {kind} action '{action}'")))
}

async fn draw(
    State(hub): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    auth: Auth,
) -> Result<Json<GameState>, ApiError> {
    let action: DrawAction = path_action("draw", &action)?;
    act(&hub, &id, &auth, Action::Draw { action }).await
}

async fn takeback(
    State(hub): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    auth: Auth,
) -> Result<Json<GameState>, ApiError> {
    let action: TakebackAction = path_action("takeback", &action)?;
    act(&hub, &id, &auth, Action::Takeback { action }).await
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
            serde_json::to_string(&live.state(StateKind::GameFull, hub.now()))
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
        hub: Shared,
    }
    let st = St {
        rx,
        first: Some(first),
        done: over,
        slot,
        shutdown: hub.shutdown.subscribe(),
        hub: hub.clone(),
    };
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if let Some(f) = st.first.take() {
            return Some((Ok::<_, std::io::Error>(f + "\n"), st));
        }
        if st.done || *st.shutdown.borrow() {
            return None;
        }
        let next = loop {
            let r = tokio::select! {
                r = tokio::time::timeout(Duration::from_secs(5), st.rx.recv()) => r,
                _ = st.shutdown.changed() => return None,
            };
            // Chat lines go to the game sockets, not to the stream.
            if !matches!(&r, Ok(Ok(ev)) if ev.room.is_some()) {
                break r;
            }
        };
        match next {
            Err(_) => Some((Ok("\n".to_string()), st)),
            Ok(Ok(ev)) => {
                st.done = ev.over;
                Some((Ok(format!("{}\n", ev.json)), st))
            }
            Ok(Err(RecvError::Lagged(_))) => {
                let live = st.slot.live.lock().await;
                let s = serde_json::to_string(&live.state(StateKind::GameState, st.hub.now()))
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
