//! Several nodes on one PostgreSQL: real `doublemove serve` processes on loopback ports sharing a
//! fresh database on the test cluster. A game with each player on a different node and a watcher
//! on a third; two nodes racing to accept moves for one position; a node killed with SIGKILL while
//! its engine thinks (another node plays the engine's turn); a flag that falls while its node is dead.

#[path = "../../server/tests/support/mod.rs"]
mod support;

use futures_util::StreamExt;
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// A `doublemove serve` process.
struct Node {
    child: Child,
    base: String,
    addr: String,
}

impl Node {
    async fn start(db: &str, name: &str) -> Node {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_doublemove"))
            .args(["serve", "--addr", &addr, "--db", db, "--node", name])
            .args(["--job-lease-ms", "2000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("doublemove serve starts");
        let node = Node {
            child,
            base: format!("http://{addr}"),
            addr,
        };
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(format!("{}/readyz", node.base)).send().await {
                if r.status().is_success() {
                    return node;
                }
            }
            assert!(
                Instant::now() < deadline,
                "node {name} did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn kill(&mut self) {
        // SIGKILL: no graceful anything.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let r = req.send().await.expect("request");
    let s = r.status().as_u16();
    let text = r.text().await.unwrap();
    (
        s,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({s}): {text}")),
    )
}

async fn post(node: &Node, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", node.base))
        .json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    send(req).await
}

async fn get(node: &Node, path: &str) -> (u16, Value) {
    send(reqwest::Client::new().get(format!("{}{path}", node.base))).await
}

/// Waits until the game as `node` serves it satisfies `what`.
async fn wait_for(node: &Node, id: &str, secs: u64, what: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (s, g) = get(node, &format!("/api/games/{id}")).await;
        if s == 200 && what(&g) {
            return g;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting on {}: {g}",
            node.addr
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn moves(g: &Value) -> usize {
    g["moves"].as_array().map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_on_two_nodes_and_a_watcher_on_a_third() {
    let db = support::fresh_pg_db().await;
    let n1 = Node::start(&db, "n1").await;
    let n2 = Node::start(&db, "n2").await;
    let n3 = Node::start(&db, "n3").await;

    let (s, c) = post(
        &n1,
        "/api/games",
        None,
        json!({"variant": "two-move", "color": "white", "public": true}),
    )
    .await;
    assert_eq!(s, 201, "{c}");
    let id = c["id"].as_str().unwrap().to_string();
    let white = c["token"].as_str().unwrap().to_string();
    // The open game is listed on every node.
    let (_, open) = get(&n3, "/api/games?status=open").await;
    assert!(open["games"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["id"] == id.as_str()));
    let (s, j) = post(
        &n2,
        &format!("/api/games/{id}/join"),
        None,
        json!({"invite": c["invite"]}),
    )
    .await;
    assert_eq!(s, 200, "{j}");
    let black = j["token"].as_str().unwrap().to_string();

    // A watcher on the third node.
    let (mut watch, _) =
        tokio_tungstenite::connect_async(format!("ws://{}/api/games/{id}/ws", n3.addr))
            .await
            .expect("watcher connects");
    let turns: [(&Node, &str, &str); 6] = [
        (&n1, &white, "e2e4"),
        (&n2, &black, "g8f6,b8c6"),
        (&n1, &white, "g1f3,f1c4"),
        (&n2, &black, "e7e6,d7d5"),
        (&n1, &white, "e4d5"),
        (&n2, &black, "e6d5"),
    ];
    let mut expected = 0;
    for (node, token, turn) in turns {
        let (s, g) = post(
            node,
            &format!("/api/games/{id}/move"),
            Some(token),
            json!({"turn": turn}),
        )
        .await;
        assert_eq!(s, 200, "{turn} on {}: {g}", node.addr);
        expected = moves(&g);
        // The watcher on node 3 sees this move live.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let msg = tokio::time::timeout_at(deadline.into(), watch.next())
                .await
                .expect("the watcher sees the move")
                .unwrap()
                .unwrap();
            if let Message::Text(t) = msg {
                let v: Value = serde_json::from_str(&t).unwrap();
                if moves(&v) == expected {
                    break;
                }
            }
        }
    }
    // Every node serves the same game, and the same lists.
    for n in [&n1, &n2, &n3] {
        let g = wait_for(n, &id, 10, |g| moves(g) == expected).await;
        assert_eq!(g["status"], "started");
        let (_, started) = get(n, "/api/games?status=started").await;
        assert!(started["games"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == id.as_str()));
    }
    // Resign on node 3 with White's token: the archive is the same everywhere.
    let (s, _) = post(
        &n3,
        &format!("/api/games/{id}/resign"),
        Some(&white),
        json!({}),
    )
    .await;
    assert_eq!(s, 200);
    for n in [&n1, &n2] {
        let g = wait_for(n, &id, 10, |g| g["status"] == "finished").await;
        assert_eq!(g["winner"], "black");
        let (_, done) = get(n, "/api/games?status=finished").await;
        assert!(done["games"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == id.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_never_both_accept_a_move_for_one_position() {
    let db = support::fresh_pg_db().await;
    let n1 = Node::start(&db, "r1").await;
    let n2 = Node::start(&db, "r2").await;
    for round in 0..5 {
        let (_, c) = post(
            &n1,
            "/api/games",
            None,
            json!({"variant": "chess", "color": "white"}),
        )
        .await;
        let id = c["id"].as_str().unwrap().to_string();
        let white = c["token"].as_str().unwrap().to_string();
        let (_, j) = post(
            &n2,
            &format!("/api/games/{id}/join"),
            None,
            json!({"invite": c["invite"]}),
        )
        .await;
        assert!(j["token"].is_string(), "{j}");
        // Both nodes load the game, then get a different first move for it at once.
        get(&n1, &format!("/api/games/{id}")).await;
        get(&n2, &format!("/api/games/{id}")).await;
        let path = format!("/api/games/{id}/move");
        let (a, b) = tokio::join!(
            post(&n1, &path, Some(&white), json!({"move": "e2e4"})),
            post(&n2, &path, Some(&white), json!({"move": "d2d4"})),
        );
        let ok = [a.0, b.0].iter().filter(|s| **s == 200).count();
        assert_eq!(
            ok, 1,
            "round {round}: exactly one first move is accepted: {a:?} {b:?}"
        );
        let refused = if a.0 == 200 { &b } else { &a };
        assert_eq!(
            refused.0, 409,
            "the other is refused as not White's turn: {refused:?}"
        );
        for n in [&n1, &n2] {
            let g = wait_for(n, &id, 10, |g| moves(g) == 1).await;
            let accepted = if a.0 == 200 { "e2e4" } else { "d2d4" };
            assert_eq!(g["moves"][0], accepted);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_while_its_engine_thinks_and_a_flag_that_falls_while_its_node_is_dead() {
    let db = support::fresh_pg_db().await;
    let mut n1 = Node::start(&db, "k1").await;
    let n2 = Node::start(&db, "k2").await;

    // A game against the engine with the human's move acknowledged by node 1.
    let (s, c) = post(
        &n1,
        "/api/games",
        None,
        json!({"variant": "chess", "opponent": "engine", "level": 8, "color": "white",
               "clock": {"limit": 600, "increment": 5}}),
    )
    .await;
    assert_eq!(s, 201, "{c}");
    let engine_game = c["id"].as_str().unwrap().to_string();
    let me = c["token"].as_str().unwrap().to_string();
    let (s, g) = post(
        &n1,
        &format!("/api/games/{engine_game}/move"),
        Some(&me),
        json!({"move": "e2e4"}),
    )
    .await;
    assert_eq!(s, 200, "{g}");

    // A game between people with a 1 s clock, played on node 1 only, so that Black's clock runs.
    let (_, h) = post(
        &n1,
        "/api/games",
        None,
        json!({"variant": "chess", "color": "white",
        "clock": {"limit": 2, "increment": 0}}),
    )
    .await;
    let flag_game = h["id"].as_str().unwrap().to_string();
    let w = h["token"].as_str().unwrap().to_string();
    let (_, j) = post(
        &n1,
        &format!("/api/games/{flag_game}/join"),
        None,
        json!({"invite": h["invite"]}),
    )
    .await;
    let b = j["token"].as_str().unwrap().to_string();
    let path = format!("/api/games/{flag_game}/move");
    for (t, m) in [(&w, "e2e4"), (&b, "e7e5"), (&w, "g1f3")] {
        let (s, g) = post(&n1, &path, Some(t), json!({"move": m})).await;
        assert_eq!(s, 200, "{g}");
    }

    // Node 1 is killed while its engine thinks about its reply to 1.e4 (a 600+5 budget).
    n1.kill();

    // Node 2 takes over once node 1's lease runs out: the engine's reply appears, the human's
    // acknowledged move is still there.
    let g = wait_for(&n2, &engine_game, 60, |g| moves(g) >= 2).await;
    assert_eq!(g["moves"][0], "e2e4", "the acknowledged move is kept");
    assert_eq!(g["turn"], "white");
    assert_eq!(g["status"], "started");
    // Black's flag falls although no node served that game when it did.
    let g = wait_for(&n2, &flag_game, 30, |g| g["status"] == "finished").await;
    assert_eq!(g["reason"], "timeout");
    assert_eq!(g["winner"], "white");
    assert_eq!(moves(&g), 3);
}

/// A signed-in browser-like client of one node: its cookie jar and Origin.
struct Player {
    http: reqwest::Client,
    jar: std::sync::Arc<reqwest::cookie::Jar>,
    base: String,
}

impl Player {
    async fn sign_up(node: &Node, name: &str) -> Player {
        let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
        let http = reqwest::Client::builder()
            .cookie_provider(jar.clone())
            .build()
            .unwrap();
        let p = Player {
            http,
            jar,
            base: node.base.clone(),
        };
        let (s, v) = p
            .post(
                "/api/account/signup",
                json!({"username": name, "password": "secret-pw"}),
            )
            .await;
        assert_eq!(s, 201, "{v}");
        p
    }
    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        send(
            self.http
                .post(format!("{}{path}", self.base))
                .header("Origin", &self.base)
                .json(&body),
        )
        .await
    }
    /// A WebSocket to `path` on this player's node, with the session cookie.
    async fn ws(
        &self,
        path: &str,
    ) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
    {
        use reqwest::cookie::CookieStore;
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let url: reqwest::Url = self.base.parse().unwrap();
        let cookie = self.jar.cookies(&url).expect("a session cookie");
        let mut req = format!("{}{path}", self.base.replace("http://", "ws://"))
            .into_client_request()
            .unwrap();
        req.headers_mut()
            .insert("Cookie", cookie.to_str().unwrap().parse().unwrap());
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        ws
    }
}

/// Reads socket messages until one satisfies `what` (10 s at most).
async fn next_such<S>(ws: &mut S, what: impl Fn(&Value) -> bool) -> Value
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = tokio::time::timeout_at(deadline.into(), ws.next())
            .await
            .expect("the awaited message arrives")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if what(&v) {
                return v;
            }
        }
    }
}

/// The players' live channels across nodes: a seek made on one node appears in a lobby socket on
/// the other; accepted there, the seeker's lobby socket on the first node is told the game started;
/// chat lines cross nodes; the rated result is seen on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeks_chat_and_ratings_across_nodes() {
    use futures_util::SinkExt;
    let db = support::fresh_pg_db().await;
    let n1 = Node::start(&db, "n1").await;
    let n2 = Node::start(&db, "n2").await;
    let alice = Player::sign_up(&n1, "alice").await;
    let bob = Player::sign_up(&n2, "bob").await;
    let mut alice_lobby = alice.ws("/api/lobby/ws").await;
    let mut bob_lobby = bob.ws("/api/lobby/ws").await;
    next_such(&mut bob_lobby, |v| v["type"] == "seeks").await;
    let (s, seek) = alice
        .post(
            "/api/seeks",
            json!({"variant": "chess", "clock": {"limit": 300, "increment": 2}, "rated": true, "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{seek}");
    let added = next_such(&mut bob_lobby, |v| v["type"] == "seek_added").await;
    assert_eq!(added["seek"]["id"], seek["id"]);
    assert_eq!(added["seek"]["username"], "alice");
    let (s, acc) = bob
        .post(
            &format!("/api/seeks/{}/accept", seek["id"].as_str().unwrap()),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{acc}");
    let game = acc["game_id"].as_str().unwrap().to_string();
    let start = next_such(&mut alice_lobby, |v| v["type"] == "game_start").await;
    assert_eq!(start["game_id"], game.as_str());
    assert_eq!(start["color"], "white");
    next_such(&mut bob_lobby, |v| v["type"] == "seek_removed").await;
    // Chat from node 2 reaches node 1.
    let mut alice_game = alice.ws(&format!("/api/games/{game}/ws")).await;
    let mut bob_game = bob.ws(&format!("/api/games/{game}/ws")).await;
    let first = next_such(&mut alice_game, |v| v["type"] == "gameFull").await;
    assert_eq!(first["you"], "white");
    next_such(&mut bob_game, |v| v["type"] == "chat_history").await;
    next_such(&mut alice_game, |v| v["type"] == "chat_history").await;
    bob_game
        .send(Message::Text(
            json!({"type": "chat", "room": "player", "text": "hi from n2"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let line = next_such(&mut alice_game, |v| v["type"] == "chat").await;
    assert_eq!(line["line"]["user"], "bob");
    assert_eq!(line["line"]["text"], "hi from n2");
    // Both complete a turn (each on their own node), then white resigns: rated on both nodes.
    let (s, v) = alice
        .post(&format!("/api/games/{game}/move"), json!({"move": "e2e4"}))
        .await;
    assert_eq!(s, 200, "{v}");
    wait_for(&n2, &game, 10, |g| moves(g) == 1).await;
    let (s, v) = bob
        .post(&format!("/api/games/{game}/move"), json!({"move": "e7e5"}))
        .await;
    assert_eq!(s, 200, "{v}");
    wait_for(&n1, &game, 10, |g| moves(g) == 2).await;
    let (s, v) = alice
        .post(&format!("/api/games/{game}/resign"), json!({}))
        .await;
    assert_eq!(s, 200, "{v}");
    assert!(
        v["players"]["black"]["rating_diff"].as_i64().unwrap() > 0,
        "{v}"
    );
    for n in [&n1, &n2] {
        let (_, u) = get(n, "/api/users/bob").await;
        assert_eq!(u["perfs"]["chess"]["games"], 1, "{u}");
        assert!(
            u["perfs"]["chess"]["rating"].as_i64().unwrap() > 1500,
            "{u}"
        );
    }
}
