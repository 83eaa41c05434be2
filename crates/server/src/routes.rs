//! The HTTP API (docs/api.md): routes, request bodies, authentication by player token.

use crate::error::ApiError;
use crate::model::{color_name, now_ms, parse_color, ClockData, GameData, Live, Play, Status};
use crate::{mutate, Event, Shared, Slot};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{SinkExt, StreamExt};
use rules::pgn::{read_game, write_pgn};
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

pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/api/games", post(create).get(list))
        .route("/api/games/{id}", get(get_game))
        .route("/api/games/{id}/join", post(join))
        .route("/api/games/{id}/move", post(play))
        .route("/api/games/{id}/resign", post(resign))
        .route("/api/games/{id}/abort", post(abort))
        .route("/api/games/{id}/draw/{action}", post(draw))
        .route("/api/games/{id}/takeback/{action}", post(takeback))
        .route("/api/games/{id}/pgn", get(pgn))
        .route("/api/games/{id}/stream", get(stream))
        .route("/api/games/{id}/ws", get(game_ws))
        .route("/api/pgn/import", post(import_pgn))
        .route("/api/fen/validate", post(validate_fen))
        .route("/api/analysis/ws", get(crate::analysis::analysis_ws))
        .fallback(crate::web::static_file)
        .with_state(state)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(CatchPanicLayer::new())
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(axum::middleware::map_response(json_errors))
        .layer(TraceLayer::new_for_http())
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

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

/// The colour of the player whose token was sent.
async fn player(slot: &Slot, token: Option<String>) -> Result<Color, ApiError> {
    let Some(token) = token else {
        return Err(ApiError::unauthorized(
            "a player token is needed: send 'Authorization: Bearer TOKEN'",
        ));
    };
    slot.live
        .lock()
        .await
        .color_of_token(&token)
        .ok_or_else(|| ApiError::forbidden("this token is not a player's token in this game"))
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

fn parse_variant(v: Option<&str>) -> Result<Variant, ApiError> {
    match v {
        None => Ok(Variant::Chess),
        Some(s) => s.parse().map_err(|e| ApiError::bad_request(format!("{e}"))),
    }
}

async fn create(
    State(state): State<Shared>,
    ApiJson(req): ApiJson<CreateReq>,
) -> Result<Response, ApiError> {
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
        c => parse_color(c).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown colour '{c}' (expected white, black or random)"
            ))
        })?,
    };
    let clock = match req.clock {
        None => None,
        Some(c) => {
            if !(c.limit.is_finite() && c.increment.is_finite())
                || c.limit <= 0.0
                || c.increment < 0.0
                || c.limit > 86_400.0 * 7.0
                || c.increment > 3_600.0
            {
                return Err(ApiError::bad_request(
                    "clock: limit must be > 0 and at most a week, increment 0 to 3600 seconds",
                ));
            }
            let limit_ms = (c.limit * 1000.0) as i64;
            Some(ClockData {
                limit_ms,
                increment_ms: (c.increment * 1000.0) as i64,
                remaining_ms: [limit_ms, limit_ms],
            })
        }
    };
    let token = new_token();
    let mut tokens = [None, None];
    tokens[color.index()] = Some(token.clone());
    let now = now_ms();
    let data = GameData {
        id: new_id(),
        variant: variant.name().to_string(),
        initial_fen: start.fen(),
        moves: Vec::new(),
        status: if engine {
            Status::Started
        } else {
            Status::Waiting
        },
        imposed: None,
        engine_level: engine.then_some(level),
        engine_color: engine.then(|| color_name(color.other()).to_string()),
        tokens,
        invite: (!engine).then(new_token),
        public: req.public,
        clock,
        turn_clocks: Vec::new(),
        draw_offer: None,
        takeback_offer: None,
        takebacks: Vec::new(),
        takebacks_used: [0, 0],
        created_at: now,
        updated_at: now,
    };
    let live = Live::from_data(data).map_err(ApiError::internal)?;
    let id = live.data.id.clone();
    let invite = live.data.invite.clone();
    let game = live.state("gameFull");
    state.insert(live).await?;
    let body = json!({
        "id": id,
        "token": token,
        "color": color_name(color),
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
    State(state): State<Shared>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<JoinReq>,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let token = new_token();
    let mut seat = None;
    let game = mutate(&state, &slot, |live| {
        if live.data.status != Status::Waiting {
            return Err(ApiError::conflict("the game is not waiting for a player"));
        }
        if live.data.invite.as_deref() != Some(req.invite.as_str()) {
            return Err(ApiError::forbidden("wrong invite token"));
        }
        let c = if live.data.tokens[0].is_none() {
            Color::White
        } else {
            Color::Black
        };
        live.data.tokens[c.index()] = Some(token.clone());
        live.data.status = Status::Started;
        live.data.updated_at = now_ms();
        live.since = std::time::Instant::now();
        live.generation += 1;
        seat = Some(c);
        Ok(())
    })
    .await?;
    Ok(Json(json!({
        "id": id,
        "token": token,
        "color": seat.map(color_name),
        "game": game,
    })))
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    limit: Option<i64>,
}

async fn list(
    State(state): State<Shared>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let statuses: &[&str] = match q.status.as_deref().unwrap_or("finished") {
        "finished" => &["finished", "aborted"],
        "open" => &["waiting"],
        "started" => &["started"],
        "all" => &["waiting", "started", "finished", "aborted"],
        s => {
            return Err(ApiError::bad_request(format!(
                "unknown status '{s}' (expected finished, open, started or all)"
            )))
        }
    };
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let rows = state
        .store
        .list(statuses, limit)
        .await
        .map_err(ApiError::internal)?;
    let mut games = Vec::new();
    for data in rows {
        // The live game has the running clocks; a stored record is the fallback.
        let summary = match state.slot(&data.id) {
            Ok(slot) => slot.live.lock().await.summary(),
            Err(_) => match Live::from_data(data) {
                Ok(l) => l.summary(),
                Err(_) => continue,
            },
        };
        games.push(summary);
    }
    Ok(Json(json!({ "games": games })))
}

async fn get_game(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let v = slot.live.lock().await.state("gameFull");
    Ok(Json(v))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveReq {
    #[serde(rename = "move")]
    pub mv: Option<String>,
    #[serde(default)]
    pub double: bool,
    pub turn: Option<String>,
}

impl MoveReq {
    pub fn to_play(&self) -> Result<Play, ApiError> {
        match (&self.mv, &self.turn) {
            (Some(m), None) => Ok(Play::Move {
                uci: m.clone(),
                double: self.double,
            }),
            (None, Some(t)) if !self.double => Ok(Play::Turn(t.clone())),
            (None, Some(_)) => Err(ApiError::bad_request(
                "\"double\" goes with \"move\"; a turn of two moves is a Double Move by itself",
            )),
            _ => Err(ApiError::bad_request(
                "send either {\"move\": \"e2e4\"} or {\"turn\": \"g1f3,e2e4\"}",
            )),
        }
    }
}

async fn play(
    State(state): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<MoveReq>,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let color = player(&slot, bearer(&headers)).await?;
    let p = req.to_play()?;
    Ok(Json(mutate(&state, &slot, |l| l.play(color, &p)).await?))
}

async fn resign(
    State(state): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let color = player(&slot, bearer(&headers)).await?;
    Ok(Json(mutate(&state, &slot, |l| l.resign(color)).await?))
}

async fn abort(
    State(state): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let color = player(&slot, bearer(&headers)).await?;
    Ok(Json(mutate(&state, &slot, |l| l.abort(color)).await?))
}

async fn draw(
    State(state): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let color = player(&slot, bearer(&headers)).await?;
    Ok(Json(
        mutate(&state, &slot, |l| l.draw(color, &action)).await?,
    ))
}

async fn takeback(
    State(state): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let slot = state.slot(&id)?;
    let color = player(&slot, bearer(&headers)).await?;
    Ok(Json(
        mutate(&state, &slot, |l| l.takeback(color, &action)).await?,
    ))
}

fn clk(ms: i64) -> String {
    let s = (ms.max(0) + 999) / 1000;
    format!("[%clk {}:{:02}:{:02}]", s / 3600, s / 60 % 60, s % 60)
}

fn pgn_date(ms: i64) -> String {
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

/// The game as PGN, with clock comments per turn.
pub fn game_pgn(live: &Live) -> String {
    let name = |c: Color| match live.engine_color() {
        Some(e) if e == c => format!(
            "doublemove engine level {}",
            live.data.engine_level.unwrap_or(8)
        ),
        _ => "Anonymous".to_string(),
    };
    let tc = live.data.clock.as_ref().map_or("-".to_string(), |c| {
        if c.increment_ms > 0 {
            format!("{}+{}", c.limit_ms / 1000, c.increment_ms / 1000)
        } else {
            format!("{}", c.limit_ms / 1000)
        }
    });
    let termination = match (live.data.status, live.game.outcome()) {
        (Status::Aborted, _) => "Aborted".to_string(),
        (_, Some(o)) => o.describe(live.variant()),
        _ => "Unterminated".to_string(),
    };
    let tags: Vec<(String, String)> = vec![
        ("Event".into(), "doublemove server game".into()),
        ("Site".into(), format!("doublemove game {}", live.data.id)),
        ("Date".into(), pgn_date(live.data.created_at)),
        ("Round".into(), "-".into()),
        ("White".into(), name(Color::White)),
        ("Black".into(), name(Color::Black)),
        ("TimeControl".into(), tc),
        ("Termination".into(), termination),
    ];
    let comments: Vec<Option<String>> = live.data.turn_clocks.iter().map(|c| c.map(clk)).collect();
    write_pgn(&live.game, &tags, &comments)
}

async fn pgn(State(state): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let slot = state.slot(&id)?;
    let text = game_pgn(&*slot.live.lock().await);
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

#[derive(Deserialize)]
struct ImportReq {
    pgn: String,
    #[serde(default)]
    variant: Option<String>,
}

async fn import_pgn(ApiJson(req): ApiJson<ImportReq>) -> Result<Json<Value>, ApiError> {
    let given = match req.variant.as_deref() {
        None => None,
        Some(v) => Some(parse_variant(Some(v))?),
    };
    let (rec, game) =
        read_game(&req.pgn, given).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let turns: Vec<Value> = game
        .turns()
        .iter()
        .zip(
            rec.turns
                .iter()
                .map(|t| t.1.clone())
                .chain(std::iter::repeat(None)),
        )
        .map(|(t, comment)| {
            let end = t.start + t.moves.len();
            json!({
                "color": color_name(t.color),
                "fullmove": t.fullmove,
                "uci": t.moves.iter().map(|m| m.uci()).collect::<Vec<_>>().join(","),
                "san": game.turn_san(t),
                "fen_after": game.positions()[end].fen(),
                "comment": comment,
            })
        })
        .collect();
    let outcome = game.outcome();
    Ok(Json(json!({
        "variant": game.variant().name(),
        "initial_fen": game.initial().fen(),
        "fen": game.position().fen(),
        "tags": rec.tags.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "positions": game.positions().iter().map(|p| p.fen()).collect::<Vec<_>>(),
        "moves": game.moves().iter().map(|m| m.uci()).collect::<Vec<_>>(),
        "turns": turns,
        "result": outcome.map(|o| o.result()).or(rec.result.as_deref()),
        "reason_text": outcome.map(|o| o.describe(game.variant())),
        "legal": crate::model::legal_json(game.position()),
    })))
}

#[derive(Deserialize)]
struct FenReq {
    #[serde(default)]
    variant: Option<String>,
    fen: String,
}

async fn validate_fen(ApiJson(req): ApiJson<FenReq>) -> Result<Json<Value>, ApiError> {
    let variant = parse_variant(req.variant.as_deref())?;
    Ok(Json(match Position::from_fen(variant, &req.fen) {
        Ok(p) => json!({
            "ok": true,
            "variant": variant.name(),
            "fen": p.fen(),
            "turn": color_name(p.turn()),
            "phase": crate::model::phase_name(p.phase()),
            "legal": crate::model::legal_json(&p),
        }),
        Err(e) => json!({"ok": false, "error": e.to_string()}),
    }))
}

/// NDJSON: a full game event, then a state event per change (and an empty line every few seconds).
async fn stream(State(state): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let slot = state.slot(&id)?;
    let rx = slot.tx.subscribe();
    let (first, over) = {
        let live = slot.live.lock().await;
        (
            live.state("gameFull").to_string(),
            !matches!(live.data.status, Status::Started | Status::Waiting),
        )
    };
    struct St {
        rx: tokio::sync::broadcast::Receiver<Event>,
        first: Option<String>,
        done: bool,
        slot: Arc<Slot>,
    }
    let st = St {
        rx,
        first: Some(first),
        done: over,
        slot,
    };
    let body = futures_util::stream::unfold(st, |mut st| async move {
        if let Some(f) = st.first.take() {
            return Some((Ok::<_, std::io::Error>(f + "\n"), st));
        }
        if st.done {
            return None;
        }
        match tokio::time::timeout(Duration::from_secs(5), st.rx.recv()).await {
            Err(_) => Some((Ok("\n".to_string()), st)),
            Ok(Ok(ev)) => {
                st.done = ev.over;
                Some((Ok(format!("{}\n", ev.json)), st))
            }
            Ok(Err(RecvError::Lagged(_))) => {
                let live = st.slot.live.lock().await;
                let s = live.state("gameState").to_string();
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

#[derive(Deserialize)]
struct WsQuery {
    token: Option<String>,
}

/// A game's WebSocket: events out; with `?token=`, moves and actions in.
async fn game_ws(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let slot = state.slot(&id)?;
    let color = match q.token {
        None => None,
        Some(t) => Some(player(&slot, Some(t)).await?),
    };
    Ok(ws.on_upgrade(move |socket| game_socket(socket, state, slot, color)))
}

#[derive(Deserialize)]
struct WsIn {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "move")]
    mv: Option<String>,
    #[serde(default)]
    double: bool,
    turn: Option<String>,
    action: Option<String>,
}

async fn ws_action(
    state: &Shared,
    slot: &Arc<Slot>,
    color: Option<Color>,
    text: &str,
) -> Result<(), ApiError> {
    let msg: WsIn = serde_json::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("bad message: {e}")))?;
    if msg.kind == "ping" {
        return Ok(());
    }
    let Some(color) = color else {
        return Err(ApiError::unauthorized(
            "connect with ?token=TOKEN to play over this socket",
        ));
    };
    let action = msg.action.clone().unwrap_or_default();
    match msg.kind.as_str() {
        "move" => {
            let p = MoveReq {
                mv: msg.mv,
                double: msg.double,
                turn: msg.turn,
            }
            .to_play()?;
            mutate(state, slot, |l| l.play(color, &p)).await?;
        }
        "resign" => {
            mutate(state, slot, |l| l.resign(color)).await?;
        }
        "abort" => {
            mutate(state, slot, |l| l.abort(color)).await?;
        }
        "draw" => {
            mutate(state, slot, |l| l.draw(color, &action)).await?;
        }
        "takeback" => {
            mutate(state, slot, |l| l.takeback(color, &action)).await?;
        }
        k => return Err(ApiError::bad_request(format!("unknown message type '{k}'"))),
    }
    Ok(())
}

async fn game_socket(socket: WebSocket, state: Shared, slot: Arc<Slot>, color: Option<Color>) {
    let (mut tx, mut rx) = socket.split();
    let mut events = slot.tx.subscribe();
    let first = slot.live.lock().await.state("gameFull").to_string();
    if tx.send(Message::Text(first.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            ev = events.recv() => {
                let text = match ev {
                    Ok(ev) => ev.json.to_string(),
                    Err(RecvError::Lagged(_)) => slot.live.lock().await.state("gameState").to_string(),
                    Err(RecvError::Closed) => break,
                };
                if tx.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            msg = rx.next() => {
                let text = match msg {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if let Err(e) = ws_action(&state, &slot, color, &text).await {
                    let err = json!({"type": "error", "status": e.status.as_u16(), "error": e.message});
                    if tx.send(Message::Text(err.to_string().into())).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
}
