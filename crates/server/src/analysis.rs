//! The analysis WebSocket: the client sends a position, the engine's lines come back as each
//! iteration completes; a new request or `{"type":"stop"}` stops the running search.

use crate::game::view::legal_of;
use crate::game::Side;
use crate::Shared;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use engine::search::{mate_in_turns, Limits, Report, Searcher};
use engine::uci::format_line;
use futures_util::{SinkExt, StreamExt};
use rules::{Game, Position, Variant};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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

pub async fn analysis_ws(State(_state): State<Shared>, ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(analysis_socket)
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
            json!({"multipv": i + 1, "score": score, "pv": format_line(root, &l.moves)})
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

fn start_search(
    req: Request,
    out: mpsc::UnboundedSender<Value>,
) -> Result<Arc<AtomicBool>, String> {
    let variant: Variant = match req.variant.as_deref() {
        None => Variant::Chess,
        Some(v) => v.parse().map_err(|e| format!("{e}"))?,
    };
    let root = match req.fen.as_deref() {
        None => Position::start(variant),
        Some(f) => Position::from_fen(variant, f).map_err(|e| format!("bad FEN: {e}"))?,
    };
    let mut searcher = Searcher::new(32);
    let stop = searcher.stop_flag();
    let movetime = Duration::from_millis(req.movetime.unwrap_or(2000).clamp(10, 60_000));
    let limits = Limits {
        depth: req.depth.map(|d| d.clamp(1, 60)),
        soft_time: Some(movetime),
        hard_time: Some(movetime),
        multipv: req.multipv.unwrap_or(1).clamp(1, 10),
        ..Limits::default()
    };
    tokio::task::spawn_blocking(move || {
        let _ = out.send(json!({
            "type": "start",
            "variant": variant.name(),
            "fen": root.fen(),
            "turn": Side::from(root.turn()),
            "legal": legal_of(&root),
        }));
        let game = Game::new(root);
        let result = searcher.search(&game, &limits, &mut |r| {
            let _ = out.send(report_json(&root, r));
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
    });
    Ok(stop)
}

async fn analysis_socket(socket: WebSocket) {
    let (mut tx, mut rx) = socket.split();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
    let mut running: Option<Arc<AtomicBool>> = None;
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
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if let Some(s) = running.take() {
                    s.store(true, Ordering::Relaxed);
                }
                let reply = match serde_json::from_str::<Request>(&text) {
                    Err(e) => Some(json!({"type": "error", "error": format!("bad message: {e}")})),
                    Ok(r) if r.kind.as_deref() == Some("stop") => None,
                    Ok(r) => match start_search(r, out_tx.clone()) {
                        Ok(stop) => {
                            running = Some(stop);
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
    if let Some(s) = running {
        s.store(true, Ordering::Relaxed);
    }
}
