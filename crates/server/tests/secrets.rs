//! No secret reaches a log line: with every log level on (`debug` for the server, tower-http and
//! axum), a game is created, joined, played over HTTP with `Authorization: Bearer` and over a
//! WebSocket with `?token=`, and the captured log output is searched for the tokens and invite.

use futures_util::SinkExt;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex};
use tokio_tungstenite::tungstenite::Message;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn tokens_and_invites_never_reach_the_log() {
    let logs = Captured::default();
    let sink = logs.clone();
    tracing_subscriber::fmt()
        // Everything, but the test's own HTTP and WebSocket clients (in this process too).
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            "trace,tungstenite::handshake::client=off,reqwest=off,hyper_util::client=off",
        ))
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .init();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db").to_string_lossy().into_owned();
    let srv = server::start(server::Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        db,
        node: None,
        lease_ms: None,
        clock: Default::default(),
        limits: server::limits::ServerLimits::default(),
    })
    .await
    .unwrap();
    let base = format!("http://{}", srv.addr);
    let http = reqwest::Client::new();
    let c: Value = http
        .post(format!("{base}/api/games"))
        .json(&json!({"color": "white"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = c["id"].as_str().unwrap();
    let white = c["token"].as_str().unwrap();
    let invite = c["invite"].as_str().unwrap();
    let j: Value = http
        .post(format!("{base}/api/games/{id}/join"))
        .json(&json!({"invite": invite}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let black = j["token"].as_str().unwrap();
    let r = http
        .post(format!("{base}/api/games/{id}/move"))
        .bearer_auth(white)
        .json(&json!({"move": "e2e4"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // A wrong token too: refused, and not logged either.
    let r = http
        .post(format!("{base}/api/games/{id}/move"))
        .bearer_auth("0123456789abcdef-not-a-token")
        .json(&json!({"move": "e7e5"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let (mut ws, _) = tokio_tungstenite::connect_async(format!(
        "ws://{}/api/games/{id}/ws?token={black}",
        srv.addr
    ))
    .await
    .unwrap();
    ws.send(Message::Text(r#"{"type":"move","move":"e7e5"}"#.into()))
        .await
        .unwrap();
    // Wait until the move is in.
    for _ in 0..100 {
        let g: Value = http
            .get(format!("{base}/api/games/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if g["moves"].as_array().unwrap().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(ws);
    srv.stop().await;
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(
        text.contains("/api/games/"),
        "the requests were logged: {text}"
    );
    for secret in [white, black, invite, "0123456789abcdef-not-a-token"] {
        assert!(
            !text.contains(secret),
            "a secret ({secret}) is in the log:\n{text}"
        );
    }
}
