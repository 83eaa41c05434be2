//! The analysis WebSocket: the client sends a position, the engine's lines come back as each
//! iteration completes; a new request or `{"type":"stop"}` stops the running search.
//!
//! Searches run on the server's engine pool under the client's key (its IP), so they share the
//! engine threads fairly with everyone's games and analyses; a socket holds no searcher of its own.
//! A client may keep [`ServerLimits::analyses_per_client`] analysis sockets open; one more is
//! closed at once with 1008 and a reason. Messages over [`ServerLimits::ws_max_message`] close the
//! socket with 1009. Requests beyond [`ServerLimits::analysis_request_burst`] at once (then one
//! per [`ServerLimits::analysis_request_period`]) are answered with an error and ignored.
//!
//! [`ServerLimits::analyses_per_client`]: crate::limits::ServerLimits::analyses_per_client
//! [`ServerLimits::ws_max_message`]: crate::limits::ServerLimits::ws_max_message
//! [`ServerLimits::analysis_request_burst`]: crate::limits::ServerLimits::analysis_request_burst
//! [`ServerLimits::analysis_request_period`]: crate::limits::ServerLimits::analysis_request_period

use crate::engine_pool::{ClientKey, EnginePool, StopHandle, Ticket};
use crate::error::ApiError;
use crate::game::view::legal_of;
use crate::game::Side;
use crate::limits::{
    client_key, close_code, close_socket, limit_upgrade, origin_allowed, ClientGuard,
    LimitExceeded, MessageRate, CLOSE_TOO_BIG,
};
use crate::Shared;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use engine::search::{mate_in_turns, Limits, Report};
use engine::uci::format_line;
use futures_util::{SinkExt, StreamExt};
use rules::{Game, Position, Variant};
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// A search that has run this long gives its engine thread up (ending with what it found) as soon as
/// another job waits for one, so a 60-second analysis cannot hold a core while others queue.
const FAIR_SLICE: Duration = Duration::from_secs(5);

#[derive(Deserialize)]
struct Request {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    fen: Option<String>,
    #[serde(default)]
    multipv: Option<usize>,
    /// Milliseconds (default 2000, at most 60000).
    #[serde(default)]
    movetime: Option<u64>,
    #[serde(default)]
    depth: Option<i32>,
}

/// `GET /api/analysis/ws`. Refuses (403) a browser page of another site (Origin check). Serve the
/// router with `into_make_service_with_connect_info::<SocketAddr>()`: without a peer address each
/// socket counts as a client of its own (only the server-wide caps hold).
pub async fn analysis_ws(
    State(state): State<Shared>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if !origin_allowed(&headers, None) {
        return ApiError::forbidden("WebSocket from another site's page refused (Origin)")
            .into_response();
    }
    let key = match peer {
        Some(Extension(addr)) => client_key(&addr),
        None => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!("no peer addresses (serve with connect info): per-client caps off")
            });
            ClientKey::connection()
        }
    };
    // Counted before the upgrade, in the order the requests came (the guards go with the socket,
    // and are dropped with it if the upgrade fails).
    let counters = &state.bounds.counters;
    let guards = counters
        .sockets
        .try_acquire(&key)
        .and_then(|s| counters.analyses.try_acquire(&key).map(|a| [s, a]));
    limit_upgrade(crate::ws::small(ws), &state.bounds.limits)
        .on_upgrade(move |socket| admit(state, key, guards, socket))
}

/// Runs the socket if it was counted in (every socket, then analyses), else closes it with the
/// refusal's code: the client learns why, where an HTTP refusal would only show a failed upgrade.
async fn admit(
    state: Shared,
    key: ClientKey,
    guards: Result<[ClientGuard; 2], LimitExceeded>,
    socket: WebSocket,
) {
    match guards {
        Ok(guards) => {
            let pool = state.bounds.pool.clone();
            let limits = &state.bounds.limits;
            let rate = MessageRate::analysis(limits);
            let max = limits.ws_max_message;
            analysis_socket(pool, key, rate, max, guards, socket).await
        }
        Err(e) => {
            let reason = format!("too many analysis sockets: {e}; close one and try again");
            close_socket(socket, close_code(&e), &reason).await
        }
    }
}

/// A line in the variants' SAN with comma turns and move numbers (`12.Nf3,e4 Nc6 13.d4`; a line
/// that starts with Black's turn or mid-turn opens with `12...` / `12…,`).
pub fn san_line(root: &Position, moves: &[rules::Move]) -> String {
    let mut out = String::new();
    let mut pos = *root;
    for (i, &m) in moves.iter().enumerate() {
        if pos.at_turn_start() {
            if i > 0 {
                out.push(' ');
            }
            if pos.turn() == rules::Color::White {
                out.push_str(&format!("{}.", pos.fullmove()));
            } else if i == 0 {
                out.push_str(&format!("{}...", pos.fullmove()));
            }
        } else if i > 0 {
            out.push(',');
        } else {
            out.push_str(&format!("{}…,", pos.fullmove()));
        }
        out.push_str(&rules::notation::san(&pos, m));
        pos = pos.after(m);
    }
    out
}

fn report_json(root: &Position, r: &Report) -> Value {
    let lines: Vec<Value> = r
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let score = match mate_in_turns(root, l) {
                Some(m) => json!({"mate": m}),
                None => json!({"cp": l.score}),
            };
            json!({
                "multipv": i + 1,
                "score": score,
                "pv": format_line(root, &l.moves),
                "san": san_line(root, &l.moves),
            })
        })
        .collect();
    json!({
        "type": "info",
        "depth": r.depth,
        "seldepth": r.seldepth,
        "nodes": r.nodes,
        "time_ms": r.elapsed.as_millis() as u64,
        "lines": lines,
    })
}

/// Queues the search of a request on the pool; its messages come back through `out`.
fn start_search(
    pool: &EnginePool,
    key: &ClientKey,
    req: Request,
    out: mpsc::UnboundedSender<Value>,
) -> Result<Ticket<()>, String> {
    let variant: Variant = match req.variant.as_deref() {
        None => Variant::Chess,
        Some(v) => v.parse().map_err(|e| format!("{e}"))?,
    };
    let root = match req.fen.as_deref() {
        None => Position::start(variant),
        Some(f) => Position::from_fen(variant, f).map_err(|e| format!("bad FEN: {e}"))?,
    };
    let movetime = Duration::from_millis(req.movetime.unwrap_or(2000).clamp(10, 60_000));
    let limits = Limits {
        depth: req.depth.map(|d| d.clamp(1, 60)),
        soft_time: Some(movetime),
        hard_time: Some(movetime),
        multipv: req.multipv.unwrap_or(1).clamp(1, 10),
        ..Limits::default()
    };
    pool.submit(key.clone(), move |job| {
        let _ = out.send(json!({
            "type": "start",
            "variant": variant.name(),
            "fen": root.fen(),
            "turn": Side::from(root.turn()),
            "legal": legal_of(&root),
        }));
        let game = Game::new(root);
        let waiting = job.queue_probe();
        let stop = job.stop_flag().clone();
        let result = job.searcher().search(&game, &limits, &mut |r| {
            let _ = out.send(report_json(&root, r));
            if r.elapsed >= FAIR_SLICE && waiting() > 0 {
                stop.store(true, Ordering::Relaxed);
            }
        });
        let _ = out.send(match result {
            Some(r) => json!({
                "type": "bestmove",
                "turn": rules::game::turn_uci(&r.turn),
                "depth": r.depth,
                "nodes": r.nodes,
            }),
            None => json!({"type": "bestmove", "turn": null,
                "reason": "no legal move: the game is over in this position"}),
        });
    })
    .map_err(|e| e.to_string())
}

async fn analysis_socket(
    pool: Arc<EnginePool>,
    key: ClientKey,
    rate: MessageRate,
    max_message: usize,
    _guards: [ClientGuard; 2],
    socket: WebSocket,
) {
    let (mut tx, mut rx) = socket.split();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
    // The current search: kept so that it is not cancelled, and dropped (which stops it) when the
    // socket ends.
    let mut running: Option<(Ticket<()>, StopHandle)> = None;
    loop {
        tokio::select! {
            Some(v) = out_rx.recv() => {
                if tx.send(Message::Text(v.to_string().into())).await.is_err() {
                    break;
                }
            }
            msg = rx.next() => {
                let text = match msg {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Close(_))) | None => break,
                    Some(Err(e)) => {
                        // tungstenite reports an oversized message or frame as a capacity error;
                        // say so with 1009 rather than dropping the connection.
                        if crate::limits::is_too_big(&e) {
                            let frame = CloseFrame {
                                code: CLOSE_TOO_BIG,
                                reason: format!("message too big (at most {max_message} bytes)")
                                    .into(),
                            };
                            let _ = tx.send(Message::Close(Some(frame))).await;
                        }
                        break;
                    }
                    Some(Ok(_)) => continue,
                };
                // Over the rate the request is refused and the running search goes on.
                if let Err(e) = rate.check() {
                    let v = json!({"type": "error", "error": e});
                    if tx.send(Message::Text(v.to_string().into())).await.is_err() {
                        break;
                    }
                    continue;
                }
                if let Some((_, stop)) = running.take() {
                    stop.stop();
                }
                let reply = match serde_json::from_str::<Request>(&text) {
                    Err(e) => Some(json!({"type": "error", "error": format!("bad message: {e}")})),
                    Ok(r) if r.kind.as_deref() == Some("stop") => None,
                    Ok(r) => match start_search(&pool, &key, r, out_tx.clone()) {
                        Ok(ticket) => {
                            let stop = ticket.stop_handle();
                            running = Some((ticket, stop));
                            None
                        }
                        Err(e) => Some(json!({"type": "error", "error": e})),
                    },
                };
                if let Some(v) = reply {
                    if tx.send(Message::Text(v.to_string().into())).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::san_line;
    use rules::notation::parse_uci;
    use rules::{Position, Variant};

    fn line(variant: Variant, fen: Option<&str>, ucis: &[&str]) -> String {
        let root = match fen {
            Some(f) => Position::from_fen(variant, f).unwrap(),
            None => Position::start(variant),
        };
        let mut pos = root;
        let mut moves = Vec::new();
        for u in ucis {
            let m = parse_uci(&pos, u).unwrap();
            moves.push(m);
            pos = pos.after(m);
        }
        san_line(&root, &moves)
    }

    #[test]
    fn engine_lines_read_as_comma_turns_with_move_numbers() {
        assert_eq!(
            line(
                Variant::Twinmove,
                None,
                &["e2e4", "g1f3", "d7d5", "b8c6", "e4d5"]
            ),
            "1.e4,Nf3 d5,Nc6 2.exd5"
        );
        assert_eq!(line(Variant::Chess, None, &["e2e4", "e7e5"]), "1.e4 e5");
        let black = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(
            line(Variant::Chess, Some(black), &["e7e5", "g1f3"]),
            "1...e5 2.Nf3"
        );
    }
}
