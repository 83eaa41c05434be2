//! The analysis socket's limits on a real server: the per-client cap on analysis sockets (close 1008),
//! the message size cap (close 1009), the Origin check, and searches on the shared engine pool.

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use server::{Config, Server};
use std::net::SocketAddr;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The game server on a temporary database, served with peer addresses; returns the server and
/// the analysis socket's URL.
async fn start() -> (Server, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let srv = server::start(Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        db: dir.path().join("games.db").to_string_lossy().into_owned(),
        node: None,
        lease_ms: None,
        clock: Default::default(),
        limits: server::limits::ServerLimits::default(),
    })
    .await
    .expect("server starts");
    let url = format!("ws://{}/api/analysis/ws", srv.addr);
    (srv, dir, url)
}

async fn connect(url: &str) -> Ws {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// The close frame the server sends next (skipping other messages), within 10 s.
async fn close_frame(ws: &mut Ws) -> (CloseCode, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("a close frame in time");
        match m {
            Some(Ok(Message::Close(Some(f)))) => return (f.code, f.reason.to_string()),
            Some(Ok(Message::Close(None))) | None => panic!("closed without a code"),
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("socket error before a close frame: {e}"),
        }
    }
}

/// Sends an analysis request and waits for its bestmove.
async fn analyse(ws: &mut Ws, movetime: u64) -> Value {
    ws.send(Message::Text(
        json!({"variant": "two-move", "movetime": movetime})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    loop {
        let m = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("bestmove in time")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["type"] == "bestmove" {
                return v;
            }
        }
    }
}

#[tokio::test]
async fn more_analysis_sockets_than_the_cap_are_closed_with_1008() {
    let (srv, _dir, url) = start().await;
    let cap = srv.state.bounds.limits.analyses_per_client;
    assert_eq!(cap, 2);
    let mut open = Vec::new();
    for _ in 0..cap {
        open.push(connect(&url).await);
    }
    let mut extra = connect(&url).await;
    let (code, reason) = close_frame(&mut extra).await;
    assert_eq!(code, CloseCode::Policy);
    assert!(reason.contains("too many analysis sockets"), "{reason}");
    assert!(reason.contains("at most 2 per client"), "{reason}");
    // The admitted sockets work, on the pool.
    for ws in open.iter_mut() {
        let best = analyse(ws, 100).await;
        assert!(best["turn"].is_string(), "{best}");
    }
    // Closing one frees its place.
    let mut first = open.remove(0);
    first.close(None).await.unwrap();
    drop(first);
    let counters = &srv.state.bounds.counters;
    for _ in 0..100 {
        if counters.analyses.total() < cap {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(counters.analyses.total(), cap - 1);
    let mut again = connect(&url).await;
    let best = analyse(&mut again, 100).await;
    assert!(best["turn"].is_string(), "{best}");
    srv.stop().await;
}

#[tokio::test]
async fn an_oversized_message_closes_with_1009() {
    let (srv, _dir, url) = start().await;
    let mut ws = connect(&url).await;
    let big = format!(
        r#"{{"variant": "chess", "fen": "{}"}}"#,
        "x".repeat(20 * 1024)
    );
    ws.send(Message::Text(big.into())).await.unwrap();
    let (code, reason) = close_frame(&mut ws).await;
    assert_eq!(code, CloseCode::Size);
    assert_eq!(reason, "message too big (at most 16384 bytes)");
    // The socket's places are given back.
    let counters = &srv.state.bounds.counters;
    for _ in 0..100 {
        if counters.sockets.total() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(counters.sockets.total(), 0);
    assert_eq!(counters.analyses.total(), 0);
    srv.stop().await;
}

#[tokio::test]
async fn another_sites_page_is_refused() {
    let (srv, _dir, url) = start().await;
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        other => panic!("expected 403, got {:?}", other.map(|_| ())),
    }
    srv.stop().await;
}

#[tokio::test]
async fn a_new_request_stops_the_running_search() {
    let (srv, _dir, url) = start().await;
    let mut ws = connect(&url).await;
    ws.send(Message::Text(
        json!({"variant": "double-move", "movetime": 60000})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    // Wait until the long search runs, then replace it by a short one.
    loop {
        let m = ws.next().await.unwrap().unwrap();
        if let Message::Text(t) = m {
            if serde_json::from_str::<Value>(&t).unwrap()["type"] == "start" {
                break;
            }
        }
    }
    let t0 = std::time::Instant::now();
    // The first bestmove is the stopped search's, the second the new one's.
    let first = analyse(&mut ws, 200).await;
    assert!(first["turn"].is_string());
    let second = loop {
        let m = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("the new search ends")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["type"] == "bestmove" {
                break v;
            }
        }
    };
    assert!(second["turn"].is_string());
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    srv.stop().await;
}

#[tokio::test]
async fn a_flood_of_requests_is_refused_past_the_rate() {
    let (srv, _dir, url) = start().await;
    let burst = srv.state.bounds.limits.analysis_request_burst as usize;
    let mut ws = connect(&url).await;
    for _ in 0..burst + 10 {
        ws.send(Message::Text(
            json!({"variant": "chess", "movetime": 10})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    }
    let mut refused = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while refused < 3 {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("the refusals in time")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["type"] == "error" {
                let e = v["error"].as_str().unwrap();
                assert!(
                    e.starts_with("too many requests: at most 30 at once"),
                    "{e}"
                );
                refused += 1;
            }
        }
    }
    srv.stop().await;
}

/// An analysis socket from a given loopback address (127.0.0.0/8 is all local), so that each socket
/// is a different client.
async fn connect_from(url: &str, from: std::net::Ipv4Addr) -> Ws {
    let addr: SocketAddr = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind(SocketAddr::new(from.into(), 0)).unwrap();
    let stream = sock.connect(addr).await.unwrap();
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
    tokio_tungstenite::client_async(url, stream)
        .await
        .unwrap()
        .0
}

#[tokio::test]
async fn thirty_clients_share_the_pool_threads() {
    // The case that took 24 search threads and 563 MB: 30 analysis sockets searching at once.
    let (srv, _dir, url) = start().await;
    let pool = srv.state.bounds.pool.clone();
    let threads = pool.threads();
    let mut sockets = Vec::new();
    for i in 0..30u8 {
        let mut ws = connect_from(&url, std::net::Ipv4Addr::new(127, 0, 1, 10 + i)).await;
        ws.send(Message::Text(
            json!({"variant": "double-move", "movetime": 60000})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
        sockets.push(ws);
    }
    for _ in 0..200 {
        let s = pool.stats();
        if s.running == threads && s.queued == 30 - threads {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let s = pool.stats();
    assert_eq!(s.running, threads, "{s:?}");
    assert_eq!(s.queued, 30 - threads, "{s:?}");
    assert_eq!(s.clients, 30, "{s:?}");
    // Closing the sockets stops their searches and empties the queue.
    for mut ws in sockets {
        let _ = ws.close(None).await;
    }
    for _ in 0..500 {
        let s = pool.stats();
        if s.running + s.queued == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let s = pool.stats();
    assert_eq!((s.running, s.queued), (0, 0), "{s:?}");
    srv.stop().await;
}
