//! End to end: a real server on a loopback port, on a temporary SQLite file and on a fresh
//! PostgreSQL database (every test on both backends), spoken to over HTTP,
//! NDJSON and WebSocket sockets.

#[macro_use]
mod support;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use support::{send, Db, T};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

async fn start(db: &str) -> T {
    start_with(db, server::limits::ServerLimits::default()).await
}

async fn start_with(db: &str, limits: server::limits::ServerLimits) -> T {
    T::start(db, limits, Default::default(), None).await
}

impl T {
    async fn text(&self, path: &str) -> String {
        let r = self.http.get(format!("{}{path}", self.base)).send().await;
        r.unwrap().text().await.unwrap()
    }
    /// Creates a game; returns (id, creator's token, response).
    async fn create(&self, body: Value) -> (String, String, Value) {
        let (s, v) = self.post("/api/games", None, body).await;
        assert_eq!(s, 201, "{v}");
        (
            v["id"].as_str().unwrap().to_string(),
            v["token"].as_str().unwrap().to_string(),
            v,
        )
    }
    /// A game between two people: (id, white token, black token).
    async fn human_game(&self, mut body: Value) -> (String, String, String) {
        body["color"] = json!("white");
        let (id, white, v) = self.create(body).await;
        assert_eq!(v["game"]["status"], "waiting");
        let invite = v["invite"].as_str().unwrap();
        let (s, j) = self
            .post(
                &format!("/api/games/{id}/join"),
                None,
                json!({ "invite": invite }),
            )
            .await;
        assert_eq!(s, 200, "{j}");
        assert_eq!(j["color"], "black");
        assert_eq!(j["game"]["status"], "started");
        (id, white, j["token"].as_str().unwrap().to_string())
    }
    async fn mv(&self, id: &str, token: &str, body: Value) -> Value {
        let (s, v) = self
            .post(&format!("/api/games/{id}/move"), Some(token), body.clone())
            .await;
        assert_eq!(s, 200, "move {body}: {v}");
        v
    }
}

async fn chess_fools_mate_between_two_people_and_token_checks(db: Db) {
    let t = start(&db.url).await;
    let (id, w, b) = t.human_game(json!({"variant": "chess"})).await;
    let g = t.mv(&id, &w, json!({"move": "f2f3"})).await;
    assert_eq!(g["turn"], "black");
    assert_eq!(g["legal"]["dests"]["e7"], json!(["e6", "e5"]));
    // The wrong player, an unknown token, no token.
    let path = format!("/api/games/{id}/move");
    let (s, e) = t.post(&path, Some(&w), json!({"move": "e2e4"})).await;
    assert_eq!(s, 409);
    assert!(
        e["error"].as_str().unwrap().contains("not your turn"),
        "{e}"
    );
    let (s, e) = t
        .post(&path, Some("feedface"), json!({"move": "e7e5"}))
        .await;
    assert_eq!(s, 403, "{e}");
    let (s, _) = t.post(&path, None, json!({"move": "e7e5"})).await;
    assert_eq!(s, 401);
    t.mv(&id, &b, json!({"move": "e7e5"})).await;
    t.mv(&id, &w, json!({"move": "g2g4"})).await;
    let g = t.mv(&id, &b, json!({"move": "d8h4"})).await;
    assert_eq!(g["status"], "finished");
    assert_eq!(g["result"], "0-1");
    assert_eq!(g["reason"], "checkmate");
    assert_eq!(g["winner"], "black");
    assert_eq!(g["check"], true);
    let sans: Vec<&str> = g["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["san"].as_str().unwrap())
        .collect();
    assert_eq!(sans, ["f3", "e5", "g4", "Qh4#"]);
    let (s, e) = t.post(&path, Some(&w), json!({"move": "e2e4"})).await;
    assert_eq!(s, 409, "{e}");
    let pgn = t.text(&format!("/api/games/{id}/pgn")).await;
    assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
    assert!(pgn.contains("1.f3 e5 2.g4 Qh4# 0-1"), "{pgn}");
    let (_, list) = t.get("/api/games?status=finished").await;
    assert!(list["games"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["id"] == id.as_str()));
    t.srv.stop().await;
}

async fn twinmove_king_capture_over_websocket(db: Db) {
    let t = start(&db.url).await;
    let (id, w, b) = t.human_game(json!({"variant": "twinmove"})).await;
    let (mut watcher, _) =
        tokio_tungstenite::connect_async(t.ws_url(&format!("/api/games/{id}/ws")))
            .await
            .unwrap();
    let first: Value = match watcher.next().await.unwrap().unwrap() {
        Message::Text(s) => serde_json::from_str(&s).unwrap(),
        m => panic!("{m:?}"),
    };
    assert_eq!(first["type"], "gameFull");
    let (mut white, _) =
        tokio_tungstenite::connect_async(t.ws_url(&format!("/api/games/{id}/ws?token={w}")))
            .await
            .unwrap();
    white.next().await.unwrap().unwrap(); // gameFull
                                          // White plays its turn move by move over the socket; a watcher cannot move.
    watcher
        .send(Message::Text(
            json!({"type": "move", "move": "e7e5"}).to_string().into(),
        ))
        .await
        .unwrap();
    for m in ["e2e4", "d1h5"] {
        white
            .send(Message::Text(
                json!({"type": "move", "move": m}).to_string().into(),
            ))
            .await
            .unwrap();
    }
    // Black's whole turn over HTTP as a turn string, then White captures the king.
    t.wait_for(&id, |g| g["turn"] == "black").await;
    t.mv(&id, &b, json!({"turn": "f7f5,g8f6"})).await;
    white
        .send(Message::Text(
            json!({"type": "move", "move": "h5e8"}).to_string().into(),
        ))
        .await
        .unwrap();
    let mut saw_error = false;
    let mut last = Value::Null;
    while let Some(Ok(Message::Text(s))) = watcher.next().await {
        let v: Value = serde_json::from_str(&s).unwrap();
        if v["type"] == "error" {
            saw_error = true;
            assert_eq!(v["status"], 401);
            continue;
        }
        let over = v["status"] == "finished";
        last = v;
        if over {
            break;
        }
    }
    assert!(saw_error, "the watcher's move was refused");
    assert_eq!(last["reason"], "king_captured");
    assert_eq!(last["result"], "1-0");
    let kinds: Vec<&str> = last["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["double", "double", "normal"]);
    assert_eq!(last["turns"][0]["uci"], "e2e4,d1h5");
    t.srv.stop().await;
}

async fn double_move_seed_mate_against_the_engine_over_websocket(db: Db) {
    let t = start(&db.url).await;
    let fen = "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB";
    let (id, w, v) = t
        .create(
            json!({"variant": "double-move", "fen": fen, "opponent": "engine",
                       "level": 3, "color": "white"}),
        )
        .await;
    let g = &v["game"];
    assert_eq!(g["double_move"], json!({"white": true, "black": true}));
    assert!(g["legal"]["double_dests"]["b3"]
        .as_array()
        .unwrap()
        .contains(&json!("g8")));
    let (mut ws, _) =
        tokio_tungstenite::connect_async(t.ws_url(&format!("/api/games/{id}/ws?token={w}")))
            .await
            .unwrap();
    ws.next().await.unwrap().unwrap();
    chat_history(&mut ws).await;
    ws.send(Message::Text(
        json!({"type": "move", "move": "b3g8", "double": true})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let half: Value = match ws.next().await.unwrap().unwrap() {
        Message::Text(s) => serde_json::from_str(&s).unwrap(),
        m => panic!("{m:?}"),
    };
    assert_eq!(half["phase"], "second");
    assert_eq!(half["turn"], "white");
    assert_eq!(half["double_move"]["white"], false);
    assert!(half["legal"]["dests"]["g8"]
        .as_array()
        .unwrap()
        .contains(&json!("h7")));
    assert!(half["legal"].get("double_dests").is_none());
    ws.send(Message::Text(
        json!({"type": "move", "move": "g8h7"}).to_string().into(),
    ))
    .await
    .unwrap();
    let end: Value = match ws.next().await.unwrap().unwrap() {
        Message::Text(s) => serde_json::from_str(&s).unwrap(),
        m => panic!("{m:?}"),
    };
    assert_eq!(end["status"], "finished");
    assert_eq!(end["reason"], "checkmate");
    assert_eq!(end["turns"][0]["san"], "Qg8+,Qh7#");
    assert_eq!(end["turns"][0]["kind"], "double");
    let pgn = t.text(&format!("/api/games/{id}/pgn")).await;
    assert!(pgn.contains("[Variant \"Double Move Chess\"]"), "{pgn}");
    assert!(pgn.contains(&format!("[FEN \"{fen}\"]")), "{pgn}");
    t.srv.stop().await;
}

async fn two_move_checkmate_from_a_fen_and_engine_replies(db: Db) {
    let t = start(&db.url).await;
    let fen = "7k/8/8/6K1/8/8/8/R7 w - - 0 1 T";
    let (id, w, b) = t
        .human_game(json!({"variant": "two-move", "fen": fen}))
        .await;
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "g5g6"}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    assert_eq!(e["phase"], "second");
    // The same piece may not move again in a two move turn: the rules crate's reason is passed on.
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "g6g5"}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .starts_with("illegal move g6g5: "),
        "{e}"
    );
    let _ = b;
    let g = t.mv(&id, &w, json!({"move": "a1a8"})).await;
    assert_eq!(g["reason"], "checkmate");
    assert_eq!(g["turns"][0]["san"], "Kg6,Ra8#");
    assert_eq!(g["turns"][0]["kind"], "normal");

    // Against the engine from the start: the engine (white) opens with a response move turn.
    let (id, tok, _) = t
        .create(json!({"variant": "two-move", "opponent": "engine", "level": 2, "color": "black"}))
        .await;
    let g = t.wait_for(&id, |g| g["turn"] == "black").await;
    assert_eq!(g["turns"][0]["kind"], "response");
    assert_eq!(g["phase"], "start");
    let any = g["legal"]["dests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let mv = format!("{}{}", any.0, any.1[0].as_str().unwrap());
    let g = t.mv(&id, &tok, json!({"move": mv})).await;
    assert!(g["phase"] == "second" || g["turn"] == "white", "{g}");
    t.srv.stop().await;
}

async fn takebacks_against_the_engine_and_between_people(db: Db) {
    let t = start(&db.url).await;
    let (id, tok, _) = t
        .create(json!({"variant": "chess", "opponent": "engine", "level": 1, "color": "white"}))
        .await;
    t.mv(&id, &tok, json!({"move": "e2e4"})).await;
    t.wait_for(&id, |g| g["moves"].as_array().unwrap().len() == 2)
        .await;
    let (s, g) = t
        .post(
            &format!("/api/games/{id}/takeback/propose"),
            Some(&tok),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["moves"], json!([]));
    assert_eq!(g["takebacks_used"]["white"], 1);
    assert_eq!(g["takebacks"][0]["from_ply"], 2);
    assert_eq!(g["takebacks"][0]["to_ply"], 0);

    let (id, w, b) = t.human_game(json!({"variant": "chess"})).await;
    t.mv(&id, &w, json!({"move": "e2e4"})).await;
    t.mv(&id, &b, json!({"move": "e7e5"})).await;
    let tb = |a: &str| format!("/api/games/{id}/takeback/{a}");
    let (s, g) = t.post(&tb("propose"), Some(&b), json!({})).await;
    assert_eq!(s, 200);
    assert_eq!(g["offers"]["takeback"], "black");
    let (s, _) = t.post(&tb("decline"), Some(&w), json!({})).await;
    assert_eq!(s, 200);
    let (s, _) = t.post(&tb("accept"), Some(&w), json!({})).await;
    assert_eq!(s, 409);
    t.post(&tb("propose"), Some(&b), json!({})).await;
    let (s, g) = t.post(&tb("accept"), Some(&w), json!({})).await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["moves"], json!(["e2e4"]));
    assert_eq!(g["turn"], "black");
    assert_eq!(g["takebacks_used"], json!({"white": 0, "black": 1}));
    // Draw by agreement.
    let (_, g) = t
        .post(&format!("/api/games/{id}/draw/offer"), Some(&b), json!({}))
        .await;
    assert_eq!(g["offers"]["draw"], "black");
    let (_, g) = t
        .post(&format!("/api/games/{id}/draw/accept"), Some(&w), json!({}))
        .await;
    assert_eq!(g["result"], "1/2-1/2");
    assert_eq!(g["reason"], "agreement");
    t.srv.stop().await;
}

async fn flag_fall_is_seen_without_a_move_and_streamed(db: Db) {
    let t = start(&db.url).await;
    let (id, w, b) = t
        .human_game(json!({"variant": "chess", "clock": {"limit": 1, "increment": 0}}))
        .await;
    t.mv(&id, &w, json!({"move": "e2e4"})).await;
    let g = t.mv(&id, &b, json!({"move": "e7e5"})).await;
    // Each side's clock starts after its first turn: White's runs from its second turn on.
    assert_eq!(g["clock"]["running"], "white");
    let g = t.mv(&id, &w, json!({"move": "g1f3"})).await;
    assert_eq!(g["clock"]["running"], "black");
    let resp = t
        .http
        .get(format!("{}/api/games/{id}/stream", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let body = tokio::time::timeout(Duration::from_secs(10), resp.text())
        .await
        .expect("the stream ends with the game")
        .unwrap();
    let lines: Vec<Value> = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "gameFull");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "gameState");
    assert_eq!(last["reason"], "timeout");
    assert_eq!(last["winner"], "white");
    assert_eq!(last["clock"]["black_ms"], 0);
    let pgn = t.text(&format!("/api/games/{id}/pgn")).await;
    assert!(pgn.contains("[TimeControl \"1\"]"), "{pgn}");
    assert!(pgn.contains("{[%clk 0:00:01]}"), "{pgn}");
    assert!(pgn.contains("1-0"), "{pgn}");
    t.srv.stop().await;
}

async fn restart_in_the_middle_of_a_game_loses_nothing(db: Db) {
    let t = start(&db.url).await;
    let (id, w, b) = t
        .human_game(json!({"variant": "chess", "clock": {"limit": 300, "increment": 2}}))
        .await;
    t.mv(&id, &w, json!({"move": "f2f3"})).await;
    t.mv(&id, &b, json!({"move": "e7e5"})).await;
    let before = t.mv(&id, &w, json!({"move": "g2g4"})).await;
    let (_, open) = t.get("/api/games?status=started").await;
    assert_eq!(open["games"].as_array().unwrap().len(), 1);
    t.srv.stop().await;

    let t = start(&db.url).await;
    let (s, g) = t.get(&format!("/api/games/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(g["moves"], before["moves"]);
    assert_eq!(g["fen"], before["fen"]);
    assert_eq!(g["status"], "started");
    // Not charged for the downtime (within the test's few milliseconds).
    let left = g["clock"]["black_ms"].as_i64().unwrap();
    assert!(left > 299_000, "{left}");
    let g = t.mv(&id, &b, json!({"move": "d8h4"})).await;
    assert_eq!(g["reason"], "checkmate");
    let pgn = t.text(&format!("/api/games/{id}/pgn")).await;
    assert!(pgn.contains("[TimeControl \"300+2\"]"), "{pgn}");
    assert!(pgn.contains("{[%clk 0:05:00]}"), "{pgn}");
    t.srv.stop().await;
}

async fn bad_requests_get_json_errors(db: Db) {
    let t = start(&db.url).await;
    let (s, e) = t.get("/api/games/nosuchgame").await;
    assert_eq!(s, 404);
    assert!(e["error"].as_str().unwrap().contains("nosuchgame"));
    let (s, _) = t
        .post(
            "/api/games/nosuchgame/move",
            Some("x"),
            json!({"move": "e2e4"}),
        )
        .await;
    assert_eq!(s, 404);
    let malformed = t
        .http
        .post(format!("{}/api/games", t.base))
        .header("content-type", "application/json")
        .body("{\"variant\": ");
    let (s, e) = send(malformed).await;
    assert_eq!(s, 400, "{e}");
    assert!(e["error"].is_string());
    let big = format!("{{\"pgn\": \"{}\"}}", "a".repeat(70 * 1024));
    let oversized = t
        .http
        .post(format!("{}/api/pgn/import", t.base))
        .header("content-type", "application/json")
        .body(big);
    let (s, e) = send(oversized).await;
    assert_eq!(s, 413, "{e}");
    assert!(e["error"].as_str().unwrap().contains("too large"));
    let (s, e) = t
        .post("/api/games", None, json!({"variant": "fairy"}))
        .await;
    assert_eq!(s, 400);
    assert!(
        e["error"].as_str().unwrap().contains("unknown variant"),
        "{e}"
    );
    let (s, e) = t
        .post(
            "/api/games",
            None,
            json!({"variant": "chess", "fen": "8/8 w"}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().starts_with("bad FEN"), "{e}");
    let (s, _) = t.post("/api/games", None, json!({"colour": "white"})).await;
    assert_eq!(s, 422);
    let (s, _) = t.get("/api/no/such/endpoint").await;
    assert_eq!(s, 404);
    let (id, w, _) = t.human_game(json!({})).await;
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "e2e5"}),
        )
        .await;
    assert_eq!(s, 400);
    assert_eq!(
        e["error"],
        "illegal move e2e5: e5 is not a possible move of the pawn"
    );
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "zz"}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "e2e4", "double": true}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    let (s, e) = t
        .post(
            "/api/fen/validate",
            None,
            json!({"variant": "chess", "fen": "xx"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(e["ok"], false);
    assert!(e["error"].as_str().unwrap().contains("FEN"), "{e}");
    // Nothing was stored for the refused requests; the game is still there after all of them.
    let (s, g) = t.get(&format!("/api/games/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(g["moves"], json!([]));
    let home = t.text("/").await;
    assert!(home.contains("<html"), "{home}");
    t.srv.stop().await;
}

async fn pgn_import_and_analysis_socket(db: Db) {
    let t = start(&db.url).await;
    let pgn = "[Variant \"Two Move Chess\"]\n\n1.e4 Nf6,e5 2.d4,Nc3 *\n";
    let (s, v) = t.post("/api/pgn/import", None, json!({ "pgn": pgn })).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variant"], "two-move");
    let sans: Vec<&str> = v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["san"].as_str().unwrap())
        .collect();
    assert_eq!(sans, ["e4", "Nf6,e5", "d4,Nc3"]);
    assert_eq!(v["positions"].as_array().unwrap().len(), 6);
    let (s, e) = t
        .post(
            "/api/pgn/import",
            None,
            json!({"pgn": "1.e5", "variant": "chess"}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(e["error"].as_str().unwrap().contains("e5"), "{e}");

    let (mut ws, _) = tokio_tungstenite::connect_async(t.ws_url("/api/analysis/ws"))
        .await
        .unwrap();
    let fen = "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB";
    ws.send(Message::Text(
        json!({"variant": "double-move", "fen": fen, "multipv": 2, "movetime": 500})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let mut infos = Vec::new();
    let best = loop {
        let v: Value = match ws.next().await.unwrap().unwrap() {
            Message::Text(s) => serde_json::from_str(&s).unwrap(),
            _ => continue,
        };
        match v["type"].as_str().unwrap() {
            "info" => infos.push(v),
            "bestmove" => break v,
            _ => {}
        }
    };
    assert!(!infos.is_empty());
    let last = infos.last().unwrap();
    assert_eq!(last["lines"].as_array().unwrap().len(), 2);
    assert_eq!(last["lines"][0]["score"]["mate"], 1, "{last}");
    assert!(last["lines"][0]["pv"]
        .as_str()
        .unwrap()
        .starts_with("b3g8,g8h7"));
    assert_eq!(best["turn"], "b3g8,g8h7");
    t.srv.stop().await;
}

async fn abort_resign_and_open_games(db: Db) {
    let t = start(&db.url).await;
    let (id, tok, v) = t
        .create(json!({"variant": "twinmove", "color": "black", "public": true}))
        .await;
    assert_eq!(v["color"], "black");
    let (_, open) = t.get("/api/games?status=open").await;
    let listed = &open["games"][0];
    assert_eq!(listed["id"], id.as_str());
    assert_eq!(listed["invite"], v["invite"]);
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/join"),
            None,
            json!({"invite": "nope"}),
        )
        .await;
    assert_eq!(s, 403, "{e}");
    let (s, g) = t
        .post(&format!("/api/games/{id}/abort"), Some(&tok), json!({}))
        .await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["status"], "aborted");
    assert_eq!(g["reason"], "aborted");

    let (id, w, b) = t.human_game(json!({"variant": "chess"})).await;
    t.mv(&id, &w, json!({"move": "d2d4"})).await;
    t.mv(&id, &b, json!({"move": "d7d5"})).await;
    let (s, e) = t
        .post(&format!("/api/games/{id}/abort"), Some(&w), json!({}))
        .await;
    assert_eq!(s, 409, "{e}");
    let (s, g) = t
        .post(&format!("/api/games/{id}/resign"), Some(&w), json!({}))
        .await;
    assert_eq!(s, 200);
    assert_eq!(g["result"], "0-1");
    assert_eq!(g["reason"], "resignation");
    assert_eq!(g["legal"]["dests"], json!({}));
    let (_, done) = t.get("/api/games?status=finished").await;
    assert_eq!(done["games"].as_array().unwrap().len(), 2);
    t.srv.stop().await;
}

async fn restart_charges_the_time_used_and_forgives_only_the_downtime(db: Db) {
    let t = start(&db.url).await;
    let (id, w, b) = t
        .human_game(json!({"variant": "chess", "clock": {"limit": 60, "increment": 0}}))
        .await;
    t.mv(&id, &w, json!({"move": "e2e4"})).await;
    t.mv(&id, &b, json!({"move": "e7e5"})).await;
    t.mv(&id, &w, json!({"move": "g1f3"})).await;
    // Black thinks 1.5 s, then the server stops and comes straight back.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    t.srv.stop().await;
    let t = start(&db.url).await;
    let (_, g) = t.get(&format!("/api/games/{id}")).await;
    let left = g["clock"]["black_ms"].as_i64().unwrap();
    assert!(
        (55_000..=58_600).contains(&left),
        "the 1.5 s used before the restart stay charged: {left}"
    );
    assert_eq!(g["clock"]["running"], "black");
    t.srv.stop().await;

    // Down for 4 s (longer than a node's heartbeat gap): the downtime is not charged.
    tokio::time::sleep(Duration::from_millis(4000)).await;
    let t = start(&db.url).await;
    let (_, g) = t.get(&format!("/api/games/{id}")).await;
    let after = g["clock"]["black_ms"].as_i64().unwrap();
    assert!(
        after > left - 1_000 && after <= left,
        "the downtime is not charged: {left} before, {after} after"
    );
    // And that is stored: the next restart (at once) keeps it.
    t.srv.stop().await;
    let t = start(&db.url).await;
    let (_, g) = t.get(&format!("/api/games/{id}")).await;
    assert!(
        g["clock"]["black_ms"].as_i64().unwrap() > left - 3_000,
        "{g}"
    );
    t.srv.stop().await;
}

async fn time_controls_are_validated(db: Db) {
    let t = start(&db.url).await;
    for (clock, why) in [
        (
            json!({"limit": 1e-9, "increment": 0}),
            "at least one second",
        ),
        (json!({"limit": 0, "increment": 0}), "at least one second"),
        (json!({"limit": -3, "increment": 2}), "negative"),
        (json!({"limit": 10_801, "increment": 0}), "3 hours"),
        (json!({"limit": 60, "increment": 181}), "180 seconds"),
    ] {
        let (s, e) = t.post("/api/games", None, json!({"clock": clock})).await;
        assert_eq!(s, 400, "{clock}: {e}");
        assert!(e["error"].as_str().unwrap().contains(why), "{clock}: {e}");
    }
    let (s, v) = t
        .post(
            "/api/games",
            None,
            json!({"clock": {"limit": 0, "increment": 2}}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["game"]["clock"]["white_ms"], 2000);
    t.srv.stop().await;
}

async fn shutdown_closes_sockets_with_a_reason(db: Db) {
    let t = start(&db.url).await;
    let (id, _w, _b) = t.human_game(json!({"variant": "chess"})).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(t.ws_url(&format!("/api/games/{id}/ws")))
        .await
        .unwrap();
    let first = ws.next().await.unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("gameFull"));
    chat_history(&mut ws).await;
    let stop = tokio::spawn(t.srv.stop());
    let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
        .await
        .expect("closed in time")
        .unwrap()
        .unwrap();
    match msg {
        Message::Close(Some(f)) => {
            assert_eq!(u16::from(f.code), 1012);
            assert!(f.reason.contains("restarting"), "{}", f.reason);
        }
        m => panic!("expected a close frame, got {m:?}"),
    }
    stop.await.unwrap();
}

/// SQLite only: the database file deleted under the running server.
#[tokio::test]
async fn a_deleted_database_is_answered_with_503() {
    let db = Db::sqlite();
    let t = start(&db.url).await;
    let (id, w, _b) = t.human_game(json!({"variant": "chess"})).await;
    let (s, r) = t.get("/readyz").await;
    assert_eq!((s, r["status"].as_str()), (200, Some("ready")));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.url));
    }
    let (s, e) = t
        .post(
            &format!("/api/games/{id}/move"),
            Some(&w),
            json!({"move": "e2e4"}),
        )
        .await;
    assert_eq!(s, 503, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("storage unavailable"),
        "{e}"
    );
    assert!(!e["error"].as_str().unwrap().contains("SQL"), "{e}");
    let (s, r) = t.get("/readyz").await;
    assert_eq!(s, 503, "{r}");
    assert_eq!(r["status"], "unavailable");
    // Nothing was acknowledged, and nothing changes in memory either.
    let (_, g) = t.get(&format!("/api/games/{id}")).await;
    assert_eq!(g["moves"].as_array().unwrap().len(), 0);
    let (s, _) = t.get("/healthz").await;
    assert_eq!(s, 200, "alive, though not ready");
    t.srv.stop().await;
}

/// Each bound answers as documented: 429 with the reason for creation and engine-game caps, a close
/// frame 1008 with the reason for one socket too many, 1009 for an oversized message.
#[tokio::test]
async fn bounds_answer_429_and_close_codes() {
    use server::limits::ServerLimits;
    let db = Db::sqlite();
    let limits = ServerLimits {
        create_burst: 3,
        engine_games_per_client: 1,
        sockets_per_client: 2,
        ..ServerLimits::default()
    };
    let t = start_with(&db.url, limits).await;
    let (_, _, first) = t
        .create(json!({"opponent": "engine", "level": 1, "color": "white"}))
        .await;
    let (s, e) = t
        .post(
            "/api/games",
            None,
            json!({"opponent": "engine", "level": 1}),
        )
        .await;
    assert_eq!(s, 429, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("against the engine"),
        "{e}"
    );
    // A game against a person is still allowed, then the creation rate is used up.
    let (id, _, _) = t.create(json!({"color": "white"})).await;
    let (s, e) = t.post("/api/games", None, json!({})).await;
    assert_eq!(s, 429, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("too many requests"),
        "{e}"
    );
    // Resigning the engine game frees its place (the rate limit still holds: checked above).
    let engine_id = first["id"].as_str().unwrap();
    let (s, _) = t
        .post(
            &format!("/api/games/{engine_id}/resign"),
            first["token"].as_str(),
            json!({}),
        )
        .await;
    assert_eq!(s, 200);

    // Sockets: two per client; the third is closed at once with 1008 and the reason.
    let url = t.ws_url(&format!("/api/games/{id}/ws"));
    let (mut a, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let (_b, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    a.next().await.unwrap().unwrap();
    let (mut c, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    match c.next().await.unwrap().unwrap() {
        Message::Close(Some(f)) => {
            assert_eq!(u16::from(f.code), 1008);
            assert!(f.reason.contains("too many sockets"), "{}", f.reason);
        }
        m => panic!("expected a close frame, got {m:?}"),
    }
    // Messages on a socket are rate-limited: 40 at once get at least one 429 error back.
    let mut b = _b;
    b.next().await.unwrap().unwrap();
    chat_history(&mut b).await;
    for _ in 0..40 {
        b.send(Message::Text(r#"{"type":"ping"}"#.into()))
            .await
            .unwrap();
    }
    let m = tokio::time::timeout(Duration::from_secs(5), b.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["status"], 429, "{v}");
    // A message over 16 KiB closes the socket with 1009.
    a.send(Message::Text("x".repeat(20_000).into()))
        .await
        .unwrap();
    let mut closed = None;
    while let Some(Ok(m)) = a.next().await {
        if let Message::Close(f) = m {
            closed = f.map(|f| u16::from(f.code));
            break;
        }
    }
    assert_eq!(closed, Some(1009));
    // Security headers on every answer.
    let r = t
        .http
        .get(format!("{}/api/games", t.base))
        .send()
        .await
        .unwrap();
    let h = r.headers();
    assert!(h["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("frame-ancestors 'none'"));
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert!(h.contains_key("referrer-policy"));
    // A WebSocket from another site's page is refused.
    let mut req = url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    let err = tokio_tungstenite::connect_async(req).await.unwrap_err();
    assert!(err.to_string().contains("403"), "{err}");
    t.srv.stop().await;
}

/// A database of the first server (one JSON record per game) is imported when first opened.
#[tokio::test]
async fn a_first_server_database_is_imported() {
    use sqlx::{Connection, Executor};
    let db = Db::sqlite();
    {
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db.url)
            .create_if_missing(true);
        let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
        c.execute(
            "CREATE TABLE games (id TEXT PRIMARY KEY, status TEXT NOT NULL, variant TEXT NOT NULL,
             created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, data TEXT NOT NULL)",
        )
        .await
        .unwrap();
        c.execute("CREATE INDEX games_status ON games (status, updated_at)")
            .await
            .unwrap();
        let data = r#"{"id":"oldgame123","variant":"chess",
            "initial_fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "moves":["f2f3","e7e5","g2g4"],"status":"started","imposed":null,
            "engine_level":null,"engine_color":null,"tokens":["wtok","btok"],"invite":"inv",
            "public":false,"clock":null,"turn_clocks":[null,null,null],"draw_offer":null,
            "takeback_offer":null,"takebacks":[],"takebacks_used":[0,0],
            "created_at":1767225600000,"updated_at":1767225601234}"#;
        sqlx::query("INSERT INTO games VALUES ('oldgame123', 'started', 'chess', 1, 2, ?1)")
            .bind(data)
            .execute(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
    }
    let t = start(&db.url).await;
    let (s, g) = t.get("/api/games/oldgame123").await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["moves"], json!(["f2f3", "e7e5", "g2g4"]));
    let g = t.mv("oldgame123", "btok", json!({"move": "d8h4"})).await;
    assert_eq!(g["reason"], "checkmate");
    t.srv.stop().await;
    // Opened again: nothing is imported twice.
    let t = start(&db.url).await;
    let (_, all) = t.get("/api/games?status=all").await;
    assert_eq!(all["games"].as_array().unwrap().len(), 1);
    t.srv.stop().await;
}

/// A game socket's second message: the chat history of the room it reads.
async fn chat_history<S>(ws: &mut S)
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    let m = ws.next().await.unwrap().unwrap();
    let v: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
    assert_eq!(v["type"], "chat_history", "{v}");
}

/// One move tried on a position: the king attacked afterwards, the turn passed or not, refusals.
async fn a_move_tried_on_a_position(db: Db) {
    let t = start(&db.url).await;
    let (_, r) = t
        .post(
            "/api/pgn/import",
            None,
            json!({"variant": "twinmove", "pgn": "1.f3,Nh3 e5,Qh4 *"}),
        )
        .await;
    let fen = r["fen"].as_str().unwrap().to_string();
    let (s, v) = t
        .post(
            "/api/position/move",
            None,
            json!({"variant": "twinmove", "fen": fen, "move": "b1c3"}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["san"], "Nc3");
    assert_eq!(v["turn_passed"], true);
    assert_eq!(v["attacked"], json!({"white": true, "black": false}));
    let (_, v) = t
        .post(
            "/api/position/move",
            None,
            json!({"variant": "twinmove", "fen": fen, "move": "g2g3"}),
        )
        .await;
    assert_eq!(v["turn_passed"], false, "a pawn move, then a piece move");
    assert_eq!(v["attacked"]["white"], false, "g3 shields the king");
    let (s, v) = t
        .post(
            "/api/position/move",
            None,
            json!({"variant": "twinmove", "fen": fen, "move": "e1e3"}),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("illegal move e1e3"),
        "{v}"
    );
    t.srv.stop().await;
}

on_both_backends!(
    a_move_tried_on_a_position,
    restart_charges_the_time_used_and_forgives_only_the_downtime,
    time_controls_are_validated,
    shutdown_closes_sockets_with_a_reason,
    chess_fools_mate_between_two_people_and_token_checks,
    twinmove_king_capture_over_websocket,
    double_move_seed_mate_against_the_engine_over_websocket,
    two_move_checkmate_from_a_fen_and_engine_replies,
    takebacks_against_the_engine_and_between_people,
    flag_fall_is_seen_without_a_move_and_streamed,
    restart_in_the_middle_of_a_game_loses_nothing,
    bad_requests_get_json_errors,
    pgn_import_and_analysis_socket,
    abort_resign_and_open_games
);
