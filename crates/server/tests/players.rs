//! End to end for the players feature (docs: /work/spec-players.md, issue 10): accounts, sessions
//! and API tokens, Glicko-2 ratings, seeks, challenges, correspondence, chat, the bot API,
//! rematches and the player pages. A real server on a loopback port, on a temporary SQLite file
//! and on a fresh PostgreSQL database (every scenario on both backends).

#[macro_use]
mod support;

use futures_util::{SinkExt, StreamExt};
use reqwest::cookie::{CookieStore, Jar};
use serde_json::{json, Value};
use server::hub::TimeSource;
use server::limits::ServerLimits;
use std::sync::Arc;
use std::time::Duration;
use support::{send, Db, T};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const VARIANTS: [&str; 4] = ["chess", "two-move", "double-move", "twinmove"];

// ---------------------------------------------------------------------------------------------
// The server, the databases and plain (anonymous) requests: as in api.rs.
// ---------------------------------------------------------------------------------------------

/// Limits loose enough that the scenarios' many requests from 127.0.0.1 are never refused by the
/// general request and creation rates (the login and chat limits are what is tested here).
fn loose_limits() -> ServerLimits {
    ServerLimits {
        create_burst: 100_000,
        create_period: Duration::from_millis(1),
        request_burst: 100_000,
        request_period: Duration::from_millis(1),
        sockets_per_client: 500,
        ..ServerLimits::default()
    }
}

async fn start(db: &str) -> T {
    start_clocked(db, TimeSource::default()).await
}

async fn start_clocked(db: &str, clock: TimeSource) -> T {
    start_node(db, clock, None).await
}

async fn start_node(db: &str, clock: TimeSource, node: Option<&str>) -> T {
    T::start(db, loose_limits(), clock, node).await
}

impl T {
    async fn get_bearer(&self, path: &str, token: &str) -> (u16, Value) {
        send(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(token),
        )
        .await
    }
    async fn game(&self, id: &str) -> Value {
        let (s, g) = self.get(&format!("/api/games/{id}")).await;
        assert_eq!(s, 200, "GET /api/games/{id}: {g}");
        g
    }
    /// An anonymous WebSocket (no cookie; Origin of our own site).
    async fn ws(&self, path: &str) -> Ws {
        let mut req = self.ws_url(path).into_client_request().unwrap();
        req.headers_mut()
            .insert("origin", self.base.parse().unwrap());
        let (ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .unwrap_or_else(|e| panic!("WebSocket {path}: {e}"));
        ws
    }

    /// A new account, logged in (a cookie-keeping client).
    async fn signup(&self, name: &str) -> User {
        let user = self.browser(name);
        let (s, v) = user
            .post(
                "/api/account/signup",
                json!({"username": name, "password": password(name)}),
            )
            .await;
        assert_eq!(s, 201, "signup {name}: {v}");
        assert_eq!(v["username"], name, "{v}");
        assert_eq!(v["kind"], "human", "{v}");
        user
    }

    /// A browser-like client for `name` with an empty cookie jar.
    fn browser(&self, name: &str) -> User {
        let jar = Arc::new(Jar::default());
        let http = reqwest::Client::builder()
            .cookie_provider(jar.clone())
            .build()
            .unwrap();
        User {
            name: name.to_string(),
            http,
            jar,
            base: self.base.clone(),
        }
    }

    /// A challenge from `from` to `to`, accepted: the game id and (white, black) usernames as the
    /// game says.
    async fn challenge_game(
        &self,
        from: &User,
        to: &User,
        body: Value,
    ) -> (String, String, String) {
        let (s, c) = from
            .post(&format!("/api/challenge/{}", to.name), body.clone())
            .await;
        assert_eq!(s, 201, "challenge {body}: {c}");
        assert_eq!(c["from"], from.name.as_str(), "{c}");
        assert_eq!(c["to"], to.name.as_str(), "{c}");
        assert_eq!(c["status"], "pending", "{c}");
        let cid = c["id"].as_str().expect("challenge id").to_string();
        let (s, a) = to
            .post(&format!("/api/challenge/{cid}/accept"), json!({}))
            .await;
        assert_eq!(s, 200, "accept challenge {cid}: {a}");
        let id = a["game_id"].as_str().expect("game_id").to_string();
        let g = self.game(&id).await;
        assert_eq!(g["status"], "started", "{g}");
        let w = g["players"]["white"]["username"]
            .as_str()
            .unwrap_or_else(|| panic!("{g}"));
        let b = g["players"]["black"]["username"]
            .as_str()
            .unwrap_or_else(|| panic!("{g}"));
        let mut names = [w, b];
        names.sort();
        let mut want = [from.name.as_str(), to.name.as_str()];
        want.sort();
        assert_eq!(names, want, "{g}");
        (id, w.to_string(), b.to_string())
    }

    async fn perfs(&self, name: &str) -> Value {
        let (s, u) = self.get(&format!("/api/users/{name}")).await;
        assert_eq!(s, 200, "GET /api/users/{name}: {u}");
        assert_eq!(u["username"], name, "{u}");
        u["perfs"].clone()
    }
}

fn password(name: &str) -> String {
    format!("pw-{name}-0123456789")
}

/// A logged-in (or not yet logged-in) account with its own cookie jar. Every request carries our
/// own Origin, as a browser's would.
struct User {
    name: String,
    http: reqwest::Client,
    jar: Arc<Jar>,
    base: String,
}

impl User {
    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        send(
            self.http
                .post(format!("{}{path}", self.base))
                .header("origin", &self.base)
                .json(&body),
        )
        .await
    }
    async fn post_from(&self, path: &str, origin: &str, body: Value) -> (u16, Value) {
        send(
            self.http
                .post(format!("{}{path}", self.base))
                .header("origin", origin)
                .json(&body),
        )
        .await
    }
    async fn get(&self, path: &str) -> (u16, Value) {
        send(self.http.get(format!("{}{path}", self.base))).await
    }
    async fn delete(&self, path: &str) -> (u16, Value) {
        send(
            self.http
                .delete(format!("{}{path}", self.base))
                .header("origin", &self.base),
        )
        .await
    }
    /// The `Cookie` header this client would send.
    fn cookie(&self) -> String {
        let url: reqwest::Url = self.base.parse().unwrap();
        self.jar
            .cookies(&url)
            .map(|h| h.to_str().unwrap().to_string())
            .unwrap_or_default()
    }
    async fn mv(&self, id: &str, m: &str) -> Value {
        let (s, v) = self
            .post(&format!("/api/games/{id}/move"), json!({"move": m}))
            .await;
        assert_eq!(s, 200, "{} move {m} in {id}: {v}", self.name);
        v
    }
    async fn act(&self, id: &str, what: &str) -> Value {
        let (s, v) = self
            .post(&format!("/api/games/{id}/{what}"), json!({}))
            .await;
        assert_eq!(s, 200, "{} {what} in {id}: {v}", self.name);
        v
    }
    /// A WebSocket with this account's session cookie.
    async fn ws(&self, path: &str) -> Ws {
        let url = format!("{}{path}", self.base.replace("http://", "ws://"));
        let mut req = url.into_client_request().unwrap();
        let cookie = self.cookie();
        assert!(
            cookie.contains("dm_session="),
            "{}: no session cookie",
            self.name
        );
        req.headers_mut().insert("cookie", cookie.parse().unwrap());
        req.headers_mut()
            .insert("origin", self.base.parse().unwrap());
        let (ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .unwrap_or_else(|e| panic!("{}'s WebSocket {path}: {e}", self.name));
        ws
    }
    /// The same client (cookies and all) talking to `t`, e.g. a restarted server.
    fn at(&self, t: &T) -> User {
        User {
            name: self.name.clone(),
            http: self.http.clone(),
            jar: self.jar.clone(),
            base: t.base.clone(),
        }
    }
    async fn token(&self) -> String {
        let (s, v) = self
            .post("/api/account/token", json!({"description": "tests"}))
            .await;
        assert_eq!(s, 201, "token for {}: {v}", self.name);
        let tok = v["token"].as_str().expect("token").to_string();
        assert!(tok.starts_with("dmp_"), "{tok}");
        tok
    }
}

// ---------------------------------------------------------------------------------------------
// Sockets and streams.
// ---------------------------------------------------------------------------------------------

/// The next JSON text message, within 10 s.
async fn next_json(ws: &mut Ws) -> Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s")
            .expect("socket open")
            .expect("socket ok");
        match m {
            Message::Text(s) => return serde_json::from_str(&s).unwrap(),
            Message::Close(f) => panic!("socket closed: {f:?}"),
            _ => continue,
        }
    }
}

/// Messages until one matches (returned with those before it), within 10 s.
async fn until(ws: &mut Ws, what: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let m = match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(m))) => m,
            Ok(other) => panic!("socket ended ({other:?}); seen: {seen:?}"),
            Err(_) => panic!("no matching message within 10 s; seen: {seen:?}"),
        };
        if let Message::Text(s) = m {
            let v: Value = serde_json::from_str(&s).unwrap();
            if what(&v) {
                return (v, seen);
            }
            seen.push(v);
        }
    }
}

/// Every message arriving within `d`.
async fn drain(ws: &mut Ws, d: Duration) -> Vec<Value> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + d;
    while let Ok(Some(Ok(m))) = tokio::time::timeout_at(deadline, ws.next()).await {
        if let Message::Text(s) = m {
            seen.push(serde_json::from_str(&s).unwrap());
        }
    }
    seen
}

async fn say(ws: &mut Ws, room: &str, text: &str) {
    ws.send(Message::Text(
        json!({"type": "chat", "room": room, "text": text})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
}

fn is_chat(v: &Value, room: &str, text: &str) -> bool {
    v["type"] == "chat" && v["room"] == room && v["line"]["text"] == text
}

/// An NDJSON response read line by line into a channel (empty keep-alive lines skipped).
fn ndjson(resp: reqwest::Response) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = resp.bytes_stream();
        let mut buf = Vec::new();
        while let Some(Ok(chunk)) = body.next().await {
            buf.extend_from_slice(&chunk);
            while let Some(i) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                let line = String::from_utf8_lossy(&line);
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line)
                    .unwrap_or_else(|_| panic!("NDJSON line not JSON: {line}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// Lines until one matches, within 10 s.
async fn next_line(
    rx: &mut mpsc::UnboundedReceiver<Value>,
    what: impl Fn(&Value) -> bool,
) -> Value {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(v)) if what(&v) => return v,
            Ok(Some(v)) => seen.push(v),
            Ok(None) => panic!("stream ended; seen: {seen:?}"),
            Err(_) => panic!("no matching line within 10 s; seen: {seen:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Glicko-2, written from Glickman's "Example of the Glicko-2 system".
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct G2 {
    r: f64,
    rd: f64,
    vol: f64,
}

const NEW: G2 = G2 {
    r: 1500.0,
    rd: 350.0,
    vol: 0.06,
};
const TAU: f64 = 0.75;
const SCALE: f64 = 173.7178;

/// One rating period: `me` against each (opponent, score) with system constant `tau`.
fn glicko2(me: G2, games: &[(G2, f64)], tau: f64) -> G2 {
    use std::f64::consts::PI;
    let mu = (me.r - 1500.0) / SCALE;
    let phi = me.rd / SCALE;
    let g = |phi_j: f64| 1.0 / (1.0 + 3.0 * phi_j * phi_j / (PI * PI)).sqrt();
    let mut v_inv = 0.0;
    let mut sum = 0.0;
    for (opp, s) in games {
        let mu_j = (opp.r - 1500.0) / SCALE;
        let phi_j = opp.rd / SCALE;
        let gj = g(phi_j);
        let e = 1.0 / (1.0 + (-gj * (mu - mu_j)).exp());
        v_inv += gj * gj * e * (1.0 - e);
        sum += gj * (s - e);
    }
    let v = 1.0 / v_inv;
    let delta = v * sum;
    let a = (me.vol * me.vol).ln();
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex).powi(2))
            - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };
    let mut f_a = f(big_a);
    let mut f_b = f(big_b);
    while (big_b - big_a).abs() > 0.000001 {
        let c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = c;
        f_b = f_c;
    }
    let vol = (big_a / 2.0).exp();
    let phi_star = (phi * phi + vol * vol).sqrt();
    let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu_new = mu + phi_new * phi_new * sum;
    G2 {
        r: SCALE * mu_new + 1500.0,
        rd: SCALE * phi_new,
        vol,
    }
}

/// Both sides after one game (each game is its own rating period): white's score `s`.
fn rate(white: G2, black: G2, s: f64) -> (G2, G2) {
    (
        glicko2(white, &[(black, s)], TAU),
        glicko2(black, &[(white, 1.0 - s)], TAU),
    )
}

/// The test's own Glicko-2 reproduces Glickman's worked example.
#[test]
fn glicko2_matches_glickmans_example() {
    let me = G2 {
        r: 1500.0,
        rd: 200.0,
        vol: 0.06,
    };
    let opp = |r, rd| G2 { r, rd, vol: 0.06 };
    let out = glicko2(
        me,
        &[
            (opp(1400.0, 30.0), 1.0),
            (opp(1550.0, 100.0), 0.0),
            (opp(1700.0, 300.0), 0.0),
        ],
        0.5,
    );
    assert!((out.r - 1464.06).abs() < 0.01, "{out:?}");
    assert!((out.rd - 151.52).abs() < 0.01, "{out:?}");
    assert!((out.vol - 0.05999).abs() < 0.00001, "{out:?}");
}

fn int(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_f64().map(|f| f as i64))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A served perf equals the computed one (rounded, ±1), with the number of games.
fn assert_perf(perf: &Value, want: G2, games: i64, who: &str) {
    let r = int(&perf["rating"]);
    let rd = int(&perf["rd"]);
    assert!(
        (r - want.r.round() as i64).abs() <= 1,
        "{who}: rating {r}, computed {:.3} ({perf})",
        want.r
    );
    assert!(
        (rd - want.rd.round() as i64).abs() <= 1,
        "{who}: rd {rd}, computed {:.3} ({perf})",
        want.rd
    );
    assert_eq!(perf["games"], games, "{who}: {perf}");
}

fn assert_unrated(perf: &Value, who: &str) {
    assert_eq!(perf["rating"], 1500, "{who}: {perf}");
    assert_eq!(perf["rd"], 350, "{who}: {perf}");
    assert_eq!(perf["games"], 0, "{who}: {perf}");
    assert_eq!(perf["provisional"], true, "{who}: {perf}");
}

/// Chess: White e2e4, Black e7e5 (both have completed a turn), then `loser` resigns.
async fn two_moves_then_resign(t: &T, id: &str, white: &User, black: &User, loser: &User) -> Value {
    white.mv(id, "e2e4").await;
    black.mv(id, "e7e5").await;
    let g = loser.act(id, "resign").await;
    assert_eq!(g["status"], "finished", "{g}");
    assert_eq!(g["reason"], "resignation", "{g}");
    let _ = t;
    g
}

/// Plays legal moves for `user` (the side `color`) until the turn passes: any variant.
async fn play_any_turn(t: &T, id: &str, user: &User, color: &str) {
    for _ in 0..4 {
        let g = t.game(id).await;
        if g["turn"] != color || g["status"] != "started" {
            return;
        }
        let dests = g["legal"]["dests"]
            .as_object()
            .unwrap_or_else(|| panic!("{g}"));
        let (from, to) = dests
            .iter()
            .find_map(|(f, ts)| {
                ts.as_array()
                    .and_then(|a| a.first())
                    .map(|t| (f.clone(), t.clone()))
            })
            .unwrap_or_else(|| panic!("no legal move: {g}"));
        user.mv(id, &format!("{from}{}", to.as_str().unwrap()))
            .await;
    }
    let g = t.game(id).await;
    assert!(g["turn"] != color, "the turn did not pass: {g}");
}

async fn bot_move(t: &T, bot: &str, id: &str, m: &str) {
    let (s, v) = t
        .post(
            &format!("/api/bot/game/{id}/move/{m}"),
            Some(bot),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "bot move {m}: {v}");
}

// ---------------------------------------------------------------------------------------------
// Scenarios.
// ---------------------------------------------------------------------------------------------

async fn signup_login_logout_and_username_rules(db: Db) {
    let t = start(&db.url).await;
    let alice = t.browser("alice");
    let resp = alice
        .http
        .post(format!("{}/api/account/signup", t.base))
        .header("origin", &t.base)
        .json(&json!({"username": "alice", "password": password("alice")}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    let set_cookie: Vec<String> = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|h| h.to_str().unwrap().to_string())
        .collect();
    let session = set_cookie
        .iter()
        .find(|c| c.starts_with("dm_session="))
        .unwrap_or_else(|| panic!("no dm_session cookie: {set_cookie:?}"));
    assert!(
        session.to_ascii_lowercase().contains("httponly"),
        "{session}"
    );
    assert!(
        session.to_ascii_lowercase().contains("samesite=lax"),
        "{session}"
    );
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["username"], "alice", "{v}");
    assert_eq!(v["kind"], "human", "{v}");

    let (s, a) = alice.get("/api/account").await;
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["username"], "alice");
    assert_eq!(a["kind"], "human");
    assert!(int(&a["created_at"]) > 1_700_000_000_000, "{a}");
    for v in VARIANTS {
        assert_unrated(&a["perfs"][v], v);
    }
    // The public profile: every variant present, nothing played.
    let (s, u) = t.get("/api/users/alice").await;
    assert_eq!(s, 200, "{u}");
    assert_eq!(u["kind"], "human");
    for v in VARIANTS {
        assert_unrated(&u["perfs"][v], v);
    }
    assert_eq!(u["count"]["all"], 0, "{u}");
    assert_eq!(u["count"]["playing"], 0, "{u}");
    let (s, _) = t.get("/api/users/nobody_here").await;
    assert_eq!(s, 404);

    // Logout ends the session.
    let (s, _) = alice.post("/api/account/logout", json!({})).await;
    assert_eq!(s, 204);
    let (s, _) = alice.get("/api/account").await;
    assert_eq!(s, 401);
    // Nor does an anonymous client have an account.
    let (s, _) = t.get("/api/account").await;
    assert_eq!(s, 401);

    // A wrong password: 401, and the password is never echoed.
    let wrong = "Wr0ng-Secret-Value";
    let resp = alice
        .http
        .post(format!("{}/api/account/login", t.base))
        .header("origin", &t.base)
        .json(&json!({"username": "alice", "password": wrong}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let body = resp.text().await.unwrap();
    assert!(!body.contains(wrong), "{body}");
    assert!(!body.contains(&password("alice")), "{body}");
    let (s, _) = alice.get("/api/account").await;
    assert_eq!(s, 401);
    // An unknown user: 401 too.
    let (s, _) = alice
        .post(
            "/api/account/login",
            json!({"username": "nobody_here", "password": "whatever1"}),
        )
        .await;
    assert_eq!(s, 401);
    // The right password: logged in again.
    let (s, v) = alice
        .post(
            "/api/account/login",
            json!({"username": "alice", "password": password("alice")}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["username"], "alice");
    assert_eq!(v["kind"], "human");
    let (s, a) = alice.get("/api/account").await;
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["username"], "alice");

    // Username and password rules.
    let other = t.browser("x");
    for (name, pw, want) in [
        ("a", "password1", 400),
        ("a b", "password1", 400),
        ("abc!", "password1", 400),
        ("abcdefghijklmnopqrstu", "password1", 400), // 21 characters
        ("ALICE", "password1", 409),
        ("Alice", "password1", 409),
        ("bob", "12345", 400),
        ("bob", &"x".repeat(129), 400),
    ] {
        let (s, e) = other
            .post(
                "/api/account/signup",
                json!({"username": name, "password": pw}),
            )
            .await;
        assert_eq!(s, want, "signup {name:?} / {} chars: {e}", pw.len());
        assert!(e["error"].is_string(), "{e}");
    }
    // The limits themselves are allowed.
    let (s, e) = other
        .post(
            "/api/account/signup",
            json!({"username": "b_-9", "password": "123456"}),
        )
        .await;
    assert_eq!(s, 201, "{e}");
    let (s, e) = t
        .browser("y")
        .post(
            "/api/account/signup",
            json!({"username": "abcdefghijklmnopqrst", "password": "x".repeat(128)}),
        )
        .await;
    assert_eq!(s, 201, "{e}");

    // Guessing: repeated wrong logins are eventually refused with 429 (and never echo a password).
    let guesser = t.browser("guesser");
    let mut statuses = Vec::new();
    let mut limited = false;
    for i in 0..40 {
        let pw = format!("guess-{i:03}-xyz");
        let resp = guesser
            .http
            .post(format!("{}/api/account/login", t.base))
            .header("origin", &t.base)
            .json(&json!({"username": "alice", "password": pw}))
            .send()
            .await
            .unwrap();
        let s = resp.status().as_u16();
        let body = resp.text().await.unwrap();
        assert!(!body.contains(&pw), "{body}");
        statuses.push(s);
        assert!(s == 401 || s == 429, "login attempt {i}: {s} {body}");
        if s == 429 {
            limited = true;
            break;
        }
    }
    assert!(limited, "40 wrong logins and never a 429: {statuses:?}");
    t.srv.stop().await;
}

async fn csrf_origin_and_api_tokens(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;

    // A cookie-authenticated POST from another site's page: 403, and nothing done.
    let (s, e) = alice
        .post_from(
            "/api/account/token",
            "http://evil.example",
            json!({"description": "stolen"}),
        )
        .await;
    assert_eq!(s, 403, "{e}");
    let (s, e) = alice
        .post_from("/api/account/logout", "http://evil.example", json!({}))
        .await;
    assert_eq!(s, 403, "{e}");
    let (s, a) = alice.get("/api/account").await;
    assert_eq!(s, 200, "still logged in after the refused logout: {a}");
    let (s, e) = alice
        .post_from(
            "/api/challenge/bob",
            "http://evil.example",
            json!({"variant": "chess", "rated": false, "color": "white",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 403, "{e}");
    let (_, ch) = bob.get("/api/challenges").await;
    assert_eq!(ch["in"], json!([]), "{ch}");

    // A personal token, used as a Bearer token without any cookie or Origin.
    let tok = alice.token().await;
    let (s, a) = t.get_bearer("/api/account", &tok).await;
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["username"], "alice");
    let (s, _) = t.get_bearer("/api/account", "dmp_notatoken").await;
    assert_eq!(s, 401);
    // Tokens come from a session only.
    let (s, e) = t
        .post(
            "/api/account/token",
            Some(&tok),
            json!({"description": "x"}),
        )
        .await;
    assert!(s == 401 || s == 403, "a token made with a token: {s} {e}");

    // Bob challenges Alice; Alice accepts and plays Black with her token alone (no per-game token).
    let (s, c) = bob
        .post(
            "/api/challenge/alice",
            json!({"variant": "chess", "rated": false, "color": "white",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap();
    let (s, ch) = t.get_bearer("/api/challenges", &tok).await;
    assert_eq!(s, 200, "{ch}");
    assert_eq!(ch["in"][0]["id"], cid, "{ch}");
    let (s, a) = t
        .post(
            &format!("/api/challenge/{cid}/accept"),
            Some(&tok),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let (s, g) = t.get_bearer(&format!("/api/games/{id}"), &tok).await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["you"], "black", "{g}");
    assert_eq!(g["players"]["white"]["username"], "bob", "{g}");
    assert_eq!(g["players"]["black"]["username"], "alice", "{g}");
    let (_, g) = bob.get(&format!("/api/games/{id}")).await;
    assert_eq!(g["you"], "white", "{g}");
    let (_, g) = t.get(&format!("/api/games/{id}")).await;
    assert_eq!(g["you"], Value::Null, "{g}");

    bob.mv(&id, "e2e4").await;
    let path = format!("/api/games/{id}/move");
    let (s, g) = t.post(&path, Some(&tok), json!({"move": "e7e5"})).await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["turn"], "white");
    // Alice's token cannot move White's pieces; an anonymous request cannot move at all.
    let (s, e) = t.post(&path, Some(&tok), json!({"move": "g1f3"})).await;
    assert_eq!(s, 409, "{e}");
    let (s, e) = t.post(&path, None, json!({"move": "g1f3"})).await;
    assert_eq!(s, 401, "{e}");
    bob.mv(&id, "g1f3").await;
    let (s, g) = t
        .post(&format!("/api/games/{id}/resign"), Some(&tok), json!({}))
        .await;
    assert_eq!(s, 200, "{g}");
    assert_eq!(g["status"], "finished");
    assert_eq!(g["winner"], "white");
    assert_eq!(g["reason"], "resignation");
    t.srv.stop().await;
}

async fn glicko2_ratings_for_rated_games_only(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let rated = json!({"variant": "chess", "rated": true, "color": "white",
                       "clock": {"limit": 600, "increment": 0}});
    let who = |name: &str| if name == "alice" { &alice } else { &bob };

    // Aborted before both completed a turn: nothing rated.
    let (id, w, _b) = t.challenge_game(&alice, &bob, rated.clone()).await;
    let g = t.game(&id).await;
    assert_eq!(g["rated"], true, "{g}");
    assert_eq!(g["players"]["white"]["rating"], 1500, "{g}");
    assert_eq!(g["players"]["white"]["provisional"], true, "{g}");
    assert_eq!(g["players"]["white"]["bot"], false, "{g}");
    who(&w).mv(&id, "e2e4").await;
    let g = who(&w).act(&id, "abort").await;
    assert_eq!(g["status"], "aborted", "{g}");
    for n in ["alice", "bob"] {
        let p = t.perfs(n).await;
        assert_unrated(&p["chess"], n);
    }

    // A casual game, decided: ratings untouched.
    let casual = json!({"variant": "chess", "rated": false, "color": "white",
                        "clock": {"limit": 600, "increment": 0}});
    let (id, w, b) = t.challenge_game(&alice, &bob, casual).await;
    let g = t.game(&id).await;
    assert_eq!(g["rated"], false, "{g}");
    two_moves_then_resign(&t, &id, who(&w), who(&b), who(&w)).await;
    let g = t.game(&id).await;
    assert_eq!(g["players"]["white"]["rating_diff"], Value::Null, "{g}");
    for n in ["alice", "bob"] {
        let p = t.perfs(n).await;
        assert_unrated(&p["chess"], n);
    }

    // Rated game 1: White resigns after both completed a turn.
    let (id, w, b) = t.challenge_game(&alice, &bob, rated.clone()).await;
    let g = two_moves_then_resign(&t, &id, who(&w), who(&b), who(&w)).await;
    assert_eq!(g["winner"], "black", "{g}");
    let (w1, b1) = rate(NEW, NEW, 0.0);
    assert!(w1.r < 1500.0 && b1.r > 1500.0);
    let pw = t.perfs(&w).await;
    let pb = t.perfs(&b).await;
    assert_perf(&pw["chess"], w1, 1, &w);
    assert_perf(&pb["chess"], b1, 1, &b);
    assert_eq!(pw["chess"]["provisional"], true, "{pw}");
    assert_eq!(pb["chess"]["provisional"], true, "{pb}");
    for v in ["two-move", "double-move", "twinmove"] {
        assert_unrated(&pw[v], v);
        assert_unrated(&pb[v], v);
    }
    let g = t.game(&id).await;
    let diff = |g: &Value, side: &str| int(&g["players"][side]["rating_diff"]);
    let want_w = w1.r.round() as i64 - 1500;
    let want_b = b1.r.round() as i64 - 1500;
    assert!(
        (diff(&g, "white") - want_w).abs() <= 1,
        "white diff want {want_w}: {g}"
    );
    assert!(
        (diff(&g, "black") - want_b).abs() <= 1,
        "black diff want {want_b}: {g}"
    );
    assert_eq!(
        diff(&g, "white"),
        int(&pw["chess"]["rating"]) - 1500,
        "rating_diff = new - old: {g}"
    );
    assert_eq!(diff(&g, "black"), int(&pb["chess"]["rating"]) - 1500, "{g}");

    // Rated game 2, between the same two: Black resigns this time. Chained from the full-precision
    // values above; the players' ratings at the start are the rounded current ones.
    let (alice1, bob1) = if w == "alice" { (w1, b1) } else { (b1, w1) };
    let (id2, w2, b2) = t.challenge_game(&alice, &bob, rated.clone()).await;
    let g = t.game(&id2).await;
    let (pre_w, pre_b) = if w2 == "alice" {
        (alice1, bob1)
    } else {
        (bob1, alice1)
    };
    assert!(
        (int(&g["players"]["white"]["rating"]) - pre_w.r.round() as i64).abs() <= 1,
        "rating at game start: {g}"
    );
    assert!(
        (int(&g["players"]["black"]["rating"]) - pre_b.r.round() as i64).abs() <= 1,
        "rating at game start: {g}"
    );
    let start_w = int(&g["players"]["white"]["rating"]);
    let start_b = int(&g["players"]["black"]["rating"]);
    let g = two_moves_then_resign(&t, &id2, who(&w2), who(&b2), who(&b2)).await;
    assert_eq!(g["winner"], "white", "{g}");
    let (w_new, b_new) = rate(pre_w, pre_b, 1.0);
    let pw = t.perfs(&w2).await;
    let pb = t.perfs(&b2).await;
    assert_perf(&pw["chess"], w_new, 2, &w2);
    assert_perf(&pb["chess"], b_new, 2, &b2);
    assert_eq!(pw["chess"]["provisional"], true, "{pw}");
    let g = t.game(&id2).await;
    assert_eq!(
        diff(&g, "white"),
        int(&pw["chess"]["rating"]) - start_w,
        "rating_diff = new - old: {g}"
    );
    assert_eq!(
        diff(&g, "black"),
        int(&pb["chess"]["rating"]) - start_b,
        "{g}"
    );
    assert!(diff(&g, "white") > 0 && diff(&g, "black") < 0, "{g}");

    // The rating history: two points each, oldest first, ending at the current rating.
    let (s, h) = t.get("/api/users/alice/rating-history").await;
    assert_eq!(s, 200, "{h}");
    let pts = h["chess"].as_array().unwrap_or_else(|| panic!("{h}"));
    assert_eq!(pts.len(), 2, "{h}");
    assert_eq!(pts[0]["game_id"], id.as_str(), "{h}");
    assert_eq!(pts[1]["game_id"], id2.as_str(), "{h}");
    let (s, u) = t.get("/api/users/alice").await;
    assert_eq!(s, 200);
    assert_eq!(pts[1]["rating"], u["perfs"]["chess"]["rating"], "{h} {u}");
    assert!(int(&pts[0]["at"]) <= int(&pts[1]["at"]), "{h}");
    assert_eq!(h["two-move"], json!([]), "{h}");
    t.srv.stop().await;
}

async fn a_seek_is_taken_by_exactly_one_of_two_at_once(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let carol = t.signup("carol").await;
    // A real-time seek lives while its creator has a lobby socket open.
    let mut lobby = alice.ws("/api/lobby/ws").await;
    let first = next_json(&mut lobby).await;
    assert_eq!(first["type"], "seeks", "{first}");
    let mut watcher = t.ws("/api/lobby/ws").await;
    let first = next_json(&mut watcher).await;
    assert_eq!(first["type"], "seeks", "{first}");

    let mut won = [0usize; 2];
    for round in 1..=5 {
        let (s, v) = alice
            .post(
                "/api/seeks",
                json!({"variant": "chess", "clock": {"limit": 300, "increment": 3},
                       "rated": false, "color": "random"}),
            )
            .await;
        assert_eq!(s, 201, "round {round}: {v}");
        let sid = v["id"].as_str().unwrap().to_string();
        let (added, _) = until(&mut watcher, |m| m["type"] == "seek_added").await;
        assert_eq!(added["seek"]["id"], sid.as_str(), "{added}");
        assert_eq!(added["seek"]["username"], "alice", "{added}");
        let (_, list) = t.get("/api/seeks").await;
        let seek = list["seeks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == sid.as_str())
            .unwrap_or_else(|| panic!("round {round}: seek not listed: {list}"))
            .clone();
        assert_eq!(seek["username"], "alice");
        assert_eq!(seek["rating"], 1500);
        assert_eq!(seek["provisional"], true);
        assert_eq!(seek["clock"]["limit"].as_f64(), Some(300.0), "{seek}");
        assert_eq!(seek["clock"]["increment"].as_f64(), Some(3.0), "{seek}");
        assert_eq!(seek["days"], Value::Null, "{seek}");
        let path = format!("/api/seeks/{sid}/accept");
        let ((sb, vb), (sc, vc)) =
            tokio::join!(bob.post(&path, json!({})), carol.post(&path, json!({})));
        let results = [(sb, &vb), (sc, &vc)];
        let winners: Vec<usize> = (0..2).filter(|&i| results[i].0 == 200).collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: bob {sb} {vb}, carol {sc} {vc}"
        );
        let w = winners[0];
        let l = 1 - w;
        won[w] += 1;
        assert!(
            results[l].0 == 409 || results[l].0 == 404,
            "round {round}: the loser got {} {}",
            results[l].0,
            results[l].1
        );
        let game_id = results[w].1["game_id"].as_str().unwrap().to_string();

        // Exactly one game for the seeker, the one the winner got.
        let (s, p) = alice.get("/api/account/playing").await;
        assert_eq!(s, 200, "{p}");
        let games = p["games"].as_array().unwrap();
        assert_eq!(games.len(), 1, "round {round}: {p}");
        assert_eq!(games[0]["id"], game_id.as_str(), "{p}");
        let winner = if w == 0 { &bob } else { &carol };
        let loser = if w == 0 { &carol } else { &bob };
        assert_eq!(
            games[0]["opponent"]["username"],
            winner.name.as_str(),
            "{p}"
        );
        assert_eq!(games[0]["variant"], "chess", "{p}");
        let (_, p) = loser.get("/api/account/playing").await;
        assert_eq!(
            p["games"],
            json!([]),
            "round {round}: the loser has a game: {p}"
        );
        let (_, p) = winner.get("/api/account/playing").await;
        assert_eq!(p["games"].as_array().unwrap().len(), 1, "{p}");
        // The seeker's lobby socket is told; the seek is gone for everyone.
        let (start, _) = until(&mut lobby, |m| m["type"] == "game_start").await;
        assert_eq!(start["game_id"], game_id.as_str(), "{start}");
        let (gone, _) = until(&mut watcher, |m| m["type"] == "seek_removed").await;
        assert_eq!(gone["id"], sid.as_str(), "{gone}");
        let (_, list) = t.get("/api/seeks").await;
        assert!(
            !list["seeks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == sid.as_str()),
            "{list}"
        );
        let g = t.game(&game_id).await;
        let names = [
            g["players"]["white"]["username"].clone(),
            g["players"]["black"]["username"].clone(),
        ];
        assert!(names.contains(&json!("alice")), "{g}");
        assert!(names.contains(&json!(winner.name)), "{g}");
        // Finish it so that the next round starts from no game.
        let g = alice.act(&game_id, "abort").await;
        assert_eq!(g["status"], "aborted", "{g}");
        let (_, p) = alice.get("/api/account/playing").await;
        assert_eq!(p["games"], json!([]), "{p}");
    }
    assert_eq!(won[0] + won[1], 5);

    // A seek deleted by its creator is gone; one that nobody may delete but its creator.
    let (s, v) = alice
        .post(
            "/api/seeks",
            json!({"variant": "twinmove", "days": 3, "rated": false, "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let sid = v["id"].as_str().unwrap();
    let (s, _) = bob.delete(&format!("/api/seeks/{sid}")).await;
    assert!((400..500).contains(&s), "bob deleted alice's seek: {s}");
    let (s, _) = alice.delete(&format!("/api/seeks/{sid}")).await;
    assert_eq!(s, 204);
    let (s, e) = bob
        .post(&format!("/api/seeks/{sid}/accept"), json!({}))
        .await;
    assert!(s == 404 || s == 409, "{s} {e}");
    t.srv.stop().await;
}

async fn correspondence_deadline_passes_while_the_server_is_down(db: Db) {
    let clock = TimeSource::default();
    let t = start_clocked(&db.url, clock.clone()).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let (s, c) = alice
        .post(
            "/api/challenge/bob",
            json!({"variant": "chess", "days": 1, "rated": true, "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    assert_eq!(c["days"], 1, "{c}");
    assert_eq!(c["color"], "white", "{c}");
    let cid = c["id"].as_str().unwrap();
    let (s, a) = bob
        .post(&format!("/api/challenge/{cid}/accept"), json!({}))
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let g = t.game(&id).await;
    assert_eq!(g["days"], 1, "{g}");
    assert_eq!(g["rated"], true, "{g}");
    assert_eq!(g["clock"], Value::Null, "{g}");
    // The challenger chose white.
    assert_eq!(g["players"]["white"]["username"], "alice", "{g}");
    assert_eq!(g["players"]["black"]["username"], "bob", "{g}");
    alice.mv(&id, "e2e4").await;
    let g = bob.mv(&id, "e7e5").await;
    assert_eq!(g["turn"], "white");
    let g = t.game(&id).await;
    let deadline = int(&g["deadline_ms"]);
    let now = clock.now();
    let day = 24 * 3600 * 1000;
    assert!(
        deadline > now + day - 60_000 && deadline <= now + day + 1000,
        "White's deadline a day from now ({now}): {g}"
    );
    let (_, p) = alice.get("/api/account/playing").await;
    assert_eq!(p["games"][0]["id"], id.as_str(), "{p}");
    assert_eq!(p["games"][0]["my_turn"], true, "{p}");
    assert_eq!(p["games"][0]["days"], 1, "{p}");
    assert_eq!(p["games"][0]["deadline_ms"], deadline, "{p}");
    let (_, p) = bob.get("/api/account/playing").await;
    assert_eq!(p["games"][0]["my_turn"], false, "{p}");
    t.srv.stop().await;

    // 25 hours pass with the server down: the deadline is not extended by the downtime.
    clock.advance(25 * 3600 * 1000);
    let t = start_clocked(&db.url, clock.clone()).await;
    let g = t.wait_for(&id, |g| g["status"] == "finished").await;
    assert_eq!(g["reason"], "timeout", "{g}");
    assert_eq!(g["winner"], "black", "{g}");
    assert_eq!(g["result"], "0-1", "{g}");
    // Rated, both completed a turn: rated as a loss for White.
    let (w1, b1) = rate(NEW, NEW, 0.0);
    assert_perf(&t.perfs("alice").await["chess"], w1, 1, "alice");
    assert_perf(&t.perfs("bob").await["chess"], b1, 1, "bob");
    assert!(int(&g["players"]["white"]["rating_diff"]) < 0, "{g}");
    assert!(int(&g["players"]["black"]["rating_diff"]) > 0, "{g}");
    t.srv.stop().await;
}

async fn chat_rooms_limits_and_history(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let carol = t.signup("carol").await;
    let rated = json!({"variant": "chess", "rated": true, "color": "white",
                       "clock": {"limit": 600, "increment": 0}});
    let (id, w, _) = t.challenge_game(&alice, &bob, rated).await;
    let (white, black) = if w == "alice" {
        (&alice, &bob)
    } else {
        (&bob, &alice)
    };
    let path = format!("/api/games/{id}/ws");

    let mut ws_w = white.ws(&path).await;
    let full = next_json(&mut ws_w).await;
    assert_eq!(full["type"], "gameFull", "{full}");
    assert_eq!(full["you"], "white", "{full}");
    let (h, _) = until(&mut ws_w, |m| m["type"] == "chat_history").await;
    assert_eq!(h["room"], "player", "{h}");
    assert_eq!(h["lines"], json!([]), "{h}");
    let mut ws_b = black.ws(&path).await;
    let full = next_json(&mut ws_b).await;
    assert_eq!(full["you"], "black", "{full}");
    until(&mut ws_b, |m| {
        m["type"] == "chat_history" && m["room"] == "player"
    })
    .await;
    // An anonymous spectator: the spectator room's history, never the player room's.
    let mut spec = t.ws(&path).await;
    let full = next_json(&mut spec).await;
    assert_eq!(full["type"], "gameFull", "{full}");
    assert_eq!(full["you"], Value::Null, "{full}");
    let (h, seen) = until(&mut spec, |m| m["type"] == "chat_history").await;
    assert_eq!(h["room"], "spectator", "{h} after {seen:?}");
    // A logged-in spectator.
    let mut ws_c = carol.ws(&path).await;
    next_json(&mut ws_c).await;
    let (h, _) = until(&mut ws_c, |m| m["type"] == "chat_history").await;
    assert_eq!(h["room"], "spectator", "{h}");

    // A player's line reaches the other player unchanged, as plain text.
    say(&mut ws_w, "player", "<b>hi</b>").await;
    let (line, _) = until(&mut ws_b, |m| m["type"] == "chat").await;
    assert_eq!(line["room"], "player", "{line}");
    assert_eq!(line["line"]["user"], white.name.as_str(), "{line}");
    assert_eq!(line["line"]["text"], "<b>hi</b>", "{line}");
    assert!(int(&line["line"]["at"]) > 1_700_000_000_000, "{line}");
    // 140 characters pass, 141 are refused.
    let long_ok = "x".repeat(140);
    say(&mut ws_b, "player", &long_ok).await;
    until(&mut ws_w, |m| is_chat(m, "player", &long_ok)).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let too_long = "y".repeat(141);
    say(&mut ws_w, "player", &too_long).await;
    let (err, seen) = until(&mut ws_w, |m| m["type"] == "error").await;
    assert!(
        !seen.iter().any(|m| is_chat(m, "player", &too_long)),
        "{seen:?}"
    );
    assert!(err["error"].is_string(), "{err}");
    // Anonymous spectators may not write in a rated game; a logged-in spectator may.
    say(&mut spec, "spectator", "anon here").await;
    let (err, _) = until(&mut spec, |m| m["type"] == "error").await;
    assert!(err["error"].is_string(), "{err}");
    say(&mut ws_c, "spectator", "carol watching").await;
    let (line, seen) = until(&mut spec, |m| is_chat(m, "spectator", "carol watching")).await;
    assert_eq!(line["line"]["user"], "carol", "{line}");
    assert!(
        !seen
            .iter()
            .any(|m| m["type"] == "chat" && m["room"] == "player"),
        "{seen:?}"
    );
    // A spectator cannot write in the player room.
    say(&mut ws_c, "player", "let me in").await;
    let (err, _) = until(&mut ws_c, |m| m["type"] == "error").await;
    assert!(err["error"].is_string(), "{err}");

    // A burst: 6 lines at once, some refused for the rate (1/s, burst 3).
    tokio::time::sleep(Duration::from_millis(3500)).await;
    for i in 0..6 {
        say(&mut ws_w, "player", &format!("burst {i}")).await;
    }
    let to_w = drain(&mut ws_w, Duration::from_millis(1500)).await;
    let to_b = drain(&mut ws_b, Duration::from_millis(300)).await;
    let refused = to_w
        .iter()
        .filter(|m| m["type"] == "error" && m["status"] == 429)
        .count();
    let delivered = to_b
        .iter()
        .filter(|m| {
            m["type"] == "chat"
                && m["line"]["text"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("burst "))
        })
        .count();
    assert!(refused >= 1, "no rate error for 6 lines at once: {to_w:?}");
    assert!(delivered >= 1, "no line of the burst delivered: {to_b:?}");
    assert_eq!(
        refused + delivered,
        6,
        "to white: {to_w:?}; to black: {to_b:?}"
    );
    // Nothing refused ever reached anyone; spectators never saw a player line.
    assert!(
        !to_b.iter().any(|m| is_chat(m, "player", &too_long)),
        "{to_b:?}"
    );
    let to_spec = drain(&mut spec, Duration::from_millis(300)).await;
    assert!(
        !to_spec
            .iter()
            .any(|m| m["type"] == "chat" && m["room"] == "player"),
        "{to_spec:?}"
    );
    let to_c = drain(&mut ws_c, Duration::from_millis(100)).await;
    assert!(
        !to_c
            .iter()
            .any(|m| m["type"] == "chat" && m["room"] == "player"),
        "{to_c:?}"
    );
    drop(ws_b);

    // A reconnecting player gets the player room's earlier lines, in order.
    let mut again = black.ws(&path).await;
    let (h, _) = until(&mut again, |m| {
        m["type"] == "chat_history" && m["room"] == "player"
    })
    .await;
    let lines = h["lines"].as_array().unwrap_or_else(|| panic!("{h}"));
    assert!(lines.len() >= 3, "{h}");
    assert_eq!(lines[0]["text"], "<b>hi</b>", "{h}");
    assert_eq!(lines[0]["user"], white.name.as_str(), "{h}");
    assert_eq!(lines[1]["text"], long_ok.as_str(), "{h}");
    assert!(!lines.iter().any(|l| l["text"] == too_long.as_str()), "{h}");
    assert_eq!(lines.len(), 2 + delivered, "{h}");
    // And a new spectator gets the spectator room's.
    let mut spec2 = t.ws(&path).await;
    let (h, seen) = until(&mut spec2, |m| m["type"] == "chat_history").await;
    assert_eq!(h["room"], "spectator", "{h}");
    assert_eq!(h["lines"].as_array().unwrap().len(), 1, "{h}");
    assert_eq!(h["lines"][0]["text"], "carol watching", "{h}");
    let more = drain(&mut spec2, Duration::from_millis(300)).await;
    assert!(
        !seen
            .iter()
            .chain(more.iter())
            .any(|m| m["type"] == "chat_history" && m["room"] == "player"),
        "{seen:?} {more:?}"
    );
    t.srv.stop().await;
}

async fn a_bot_accepts_a_challenge_and_mates_over_its_streams(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let robot_user = t.signup("robot").await;
    let bot = robot_user.token().await;
    let (s, v) = t
        .post("/api/bot/account/upgrade", Some(&bot), json!({}))
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["kind"], "bot", "{v}");
    let (_, a) = t.get_bearer("/api/account", &bot).await;
    assert_eq!(a["kind"], "bot", "{a}");
    let (_, u) = t.get("/api/users/robot").await;
    assert_eq!(u["kind"], "bot", "{u}");

    let resp = t
        .http
        .get(format!("{}/api/stream/event", t.base))
        .bearer_auth(&bot)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/x-ndjson"),
        "{:?}",
        resp.headers()
    );
    let mut events = ndjson(resp);
    // Give the stream a moment to be registered before the challenge is made.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let (s, c) = alice
        .post(
            "/api/challenge/robot",
            json!({"variant": "chess", "rated": false, "color": "white",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    let ev = next_line(&mut events, |e| e["type"] == "challenge").await;
    assert_eq!(ev["challenge"]["id"], cid.as_str(), "{ev}");
    assert_eq!(ev["challenge"]["from"], "alice", "{ev}");
    assert_eq!(ev["challenge"]["variant"], "chess", "{ev}");
    let (s, a) = t
        .post(
            &format!("/api/challenge/{cid}/accept"),
            Some(&bot),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let ev = next_line(&mut events, |e| e["type"] == "gameStart").await;
    assert_eq!(ev["game"]["id"], id.as_str(), "{ev}");
    assert_eq!(ev["game"]["color"], "black", "{ev}");
    assert_eq!(ev["game"]["variant"], "chess", "{ev}");
    let g = t.game(&id).await;
    assert_eq!(g["players"]["white"]["username"], "alice", "{g}");
    assert_eq!(g["players"]["black"]["username"], "robot", "{g}");
    assert_eq!(g["players"]["black"]["bot"], true, "{g}");

    // The bot follows its game stream and answers each of White's moves.
    let resp = t
        .http
        .get(format!("{}/api/bot/game/stream/{id}", t.base))
        .bearer_auth(&bot)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut game = ndjson(resp);
    let full = next_line(&mut game, |_| true).await;
    assert_eq!(full["type"], "gameFull", "{full}");
    alice.mv(&id, "f2f3").await;
    next_line(&mut game, |s| {
        s["moves"].as_array().is_some_and(|m| m.len() == 1)
    })
    .await;
    // Not the bot's move to play White's pieces.
    let (s, e) = t
        .post(
            &format!("/api/bot/game/{id}/move/e2e4"),
            Some(&bot),
            json!({}),
        )
        .await;
    assert!((400..500).contains(&s), "{s} {e}");
    bot_move(&t, &bot, &id, "e7e5").await;
    alice.mv(&id, "g2g4").await;
    next_line(&mut game, |s| {
        s["moves"].as_array().is_some_and(|m| m.len() == 3)
    })
    .await;
    bot_move(&t, &bot, &id, "d8h4").await;
    let last = next_line(&mut game, |s| s["status"] == "finished").await;
    assert_eq!(last["reason"], "checkmate", "{last}");
    assert_eq!(last["winner"], "black", "{last}");
    let g = t.game(&id).await;
    assert_eq!(g["status"], "finished");
    assert_eq!(g["reason"], "checkmate");
    assert_eq!(g["result"], "0-1");
    assert_eq!(g["moves"], json!(["f2f3", "e7e5", "g2g4", "d8h4"]));
    let ev = next_line(&mut events, |e| e["type"] == "gameFinish").await;
    assert_eq!(ev["game"]["id"], id.as_str(), "{ev}");

    // A declined challenge is told to the bot too; an account that has played cannot upgrade.
    let (s, c) = alice
        .post(
            "/api/challenge/robot",
            json!({"variant": "twinmove", "rated": false, "color": "black", "days": 2}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    next_line(&mut events, |e| {
        e["type"] == "challenge" && e["challenge"]["id"] == cid.as_str()
    })
    .await;
    let (s, _) = alice
        .post(&format!("/api/challenge/{cid}/cancel"), json!({}))
        .await;
    assert_eq!(s, 200);
    let ev = next_line(&mut events, |e| e["type"] == "challengeCanceled").await;
    assert_eq!(ev["challenge"]["id"], cid.as_str(), "{ev}");
    let alice_tok = alice.token().await;
    let (s, e) = t
        .post("/api/bot/account/upgrade", Some(&alice_tok), json!({}))
        .await;
    assert!(
        (400..500).contains(&s),
        "an account with games upgraded: {s} {e}"
    );

    // The bot declines with a reason: the challenger's lobby socket is told.
    let mut lobby = alice.ws("/api/lobby/ws").await;
    next_json(&mut lobby).await;
    let (s, c) = alice
        .post(
            "/api/challenge/robot",
            json!({"variant": "double-move", "rated": false, "color": "white",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    next_line(&mut events, |e| {
        e["type"] == "challenge" && e["challenge"]["id"] == cid.as_str()
    })
    .await;
    let (s, e) = t
        .post(
            &format!("/api/challenge/{cid}/decline"),
            Some(&bot),
            json!({"reason": "variant"}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    let (m, _) = until(&mut lobby, |m| m["type"] == "challenge_gone").await;
    assert_eq!(m["id"], cid.as_str(), "{m}");
    assert_eq!(m["reason"], "declined", "{m}");

    // Twinmove with the bot as White: a whole turn in one request, a chat line, a resignation.
    let (s, c) = alice
        .post(
            "/api/challenge/robot",
            json!({"variant": "twinmove", "rated": false, "color": "black",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    next_line(&mut events, |e| {
        e["type"] == "challenge" && e["challenge"]["id"] == cid.as_str()
    })
    .await;
    let (s, a) = t
        .post(
            &format!("/api/challenge/{cid}/accept"),
            Some(&bot),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let ev = next_line(&mut events, |e| {
        e["type"] == "gameStart" && e["game"]["id"] == id.as_str()
    })
    .await;
    assert_eq!(ev["game"]["color"], "white", "{ev}");
    assert_eq!(ev["game"]["variant"], "twinmove", "{ev}");
    let mut ws = alice.ws(&format!("/api/games/{id}/ws")).await;
    let full = next_json(&mut ws).await;
    assert_eq!(full["you"], "black", "{full}");
    // Twinmove: after a pawn move a piece move must follow.
    bot_move(&t, &bot, &id, "e2e4,d1h5").await;
    let (m, _) = until(&mut ws, |m| {
        m["moves"].as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert_eq!(m["turn"], "black", "{m}");
    assert_eq!(m["moves"], json!(["e2e4", "d1h5"]), "{m}");
    let (s, e) = t
        .post(
            &format!("/api/bot/game/{id}/chat"),
            Some(&bot),
            json!({"room": "player", "text": "good luck"}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    let (line, _) = until(&mut ws, |m| is_chat(m, "player", "good luck")).await;
    assert_eq!(line["line"]["user"], "robot", "{line}");
    let (s, g) = t
        .post(&format!("/api/bot/game/{id}/resign"), Some(&bot), json!({}))
        .await;
    assert_eq!(s, 200, "{g}");
    let g = t.game(&id).await;
    assert_eq!(g["status"], "finished", "{g}");
    assert_eq!(g["reason"], "resignation", "{g}");
    assert_eq!(g["winner"], "black", "{g}");
    let ev = next_line(&mut events, |e| e["type"] == "gameFinish").await;
    assert_eq!(ev["game"]["id"], id.as_str(), "{ev}");

    // An idle event stream gets an empty line every 5 s.
    let resp = t
        .http
        .get(format!("{}/api/stream/event", t.base))
        .bearer_auth(&bot)
        .send()
        .await
        .unwrap();
    let mut body = resp.bytes_stream();
    let mut got = Vec::new();
    let keepalive = tokio::time::timeout(Duration::from_secs(8), async {
        while let Some(Ok(chunk)) = body.next().await {
            got.extend_from_slice(&chunk);
            if got.windows(2).any(|w| w == b"\n\n") || got.first() == Some(&b'\n') {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        keepalive,
        Ok(true),
        "no empty line within 8 s: {:?}",
        String::from_utf8_lossy(&got)
    );
    t.srv.stop().await;
}

async fn rematch_between_accounts_swaps_colours(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let (s, c) = alice
        .post(
            "/api/challenge/bob",
            json!({"variant": "twinmove", "rated": false, "color": "white",
                   "clock": {"limit": 300, "increment": 2}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let (_, ch) = bob.get("/api/challenges").await;
    assert_eq!(ch["in"][0]["id"], c["id"], "{ch}");
    let (_, ch) = alice.get("/api/challenges").await;
    assert_eq!(ch["out"][0]["id"], c["id"], "{ch}");
    let (s, a) = bob
        .post(
            &format!("/api/challenge/{}/accept", c["id"].as_str().unwrap()),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let g = t.game(&id).await;
    assert_eq!(g["players"]["white"]["username"], "alice", "{g}");
    assert_eq!(g["players"]["black"]["username"], "bob", "{g}");
    assert_eq!(g["variant"], "twinmove");
    assert_eq!(g["rematch"], json!({"offer": null, "game_id": null}), "{g}");
    play_any_turn(&t, &id, &alice, "white").await;
    play_any_turn(&t, &id, &bob, "black").await;
    let g = t.game(&id).await;
    assert_eq!(g["turn"], "white", "{g}");
    let g = alice.act(&id, "resign").await;
    assert_eq!(g["winner"], "black", "{g}");

    let mut ws_b = bob.ws(&format!("/api/games/{id}/ws")).await;
    next_json(&mut ws_b).await;
    let (s, v) = alice
        .post(&format!("/api/games/{id}/rematch"), json!({}))
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v, json!({"offered": true}));
    let (m, _) = until(&mut ws_b, |m| m["rematch"]["offer"] == "white").await;
    assert_eq!(m["rematch"]["game_id"], Value::Null, "{m}");
    let g = t.game(&id).await;
    assert_eq!(g["rematch"]["offer"], "white", "{g}");
    let (s, v) = bob
        .post(&format!("/api/games/{id}/rematch"), json!({}))
        .await;
    assert_eq!(s, 200, "{v}");
    let new_id = v["game_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    assert_ne!(new_id, id);
    let g2 = t.game(&new_id).await;
    assert_eq!(g2["status"], "started", "{g2}");
    assert_eq!(g2["players"]["white"]["username"], "bob", "{g2}");
    assert_eq!(g2["players"]["black"]["username"], "alice", "{g2}");
    assert_eq!(g2["variant"], "twinmove", "{g2}");
    assert_eq!(g2["rated"], false, "{g2}");
    assert_eq!(g2["clock"]["white_ms"], 300_000, "{g2}");
    let g = t.game(&id).await;
    assert_eq!(g["rematch"]["game_id"], new_id.as_str(), "{g}");
    let (_, g2) = alice.get(&format!("/api/games/{new_id}")).await;
    assert_eq!(g2["you"], "black", "{g2}");
    // The new game is playable by the accounts at once: Bob opens as White.
    play_any_turn(&t, &new_id, &bob, "white").await;

    // A declined rematch offer: the offer is withdrawn, no game.
    let g2 = alice.act(&new_id, "resign").await;
    assert_eq!(g2["status"], "finished", "{g2}");
    let (s, v) = bob
        .post(&format!("/api/games/{new_id}/rematch"), json!({}))
        .await;
    assert_eq!((s, v), (200, json!({"offered": true})));
    let (s, _) = alice
        .post(&format!("/api/games/{new_id}/rematch/decline"), json!({}))
        .await;
    assert_eq!(s, 200);
    let g2 = t.game(&new_id).await;
    assert_eq!(
        g2["rematch"],
        json!({"offer": null, "game_id": null}),
        "{g2}"
    );
    // Only a player may ask.
    let carol = t.signup("carol").await;
    let (s, e) = carol
        .post(&format!("/api/games/{new_id}/rematch"), json!({}))
        .await;
    assert!((400..500).contains(&s), "{s} {e}");

    t.srv.stop().await;
}

/// A rematch against the engine starts at once (201, the body of POST /api/games), and the old
/// game's `rematch.game_id` then names it.
async fn rematch_against_the_engine(db: Db) {
    let t = start(&db.url).await;
    let (s, v) = t
        .post(
            "/api/games",
            None,
            json!({"variant": "chess", "opponent": "engine", "level": 1, "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let eid = v["id"].as_str().unwrap().to_string();
    let etok = v["token"].as_str().unwrap().to_string();
    let (s, g) = t
        .post(&format!("/api/games/{eid}/resign"), Some(&etok), json!({}))
        .await;
    assert_eq!(s, 200, "{g}");
    let (s, r) = t
        .post(&format!("/api/games/{eid}/rematch"), Some(&etok), json!({}))
        .await;
    assert_eq!(s, 201, "{r}");
    let rid = r["id"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert_ne!(rid, eid);
    assert!(r["token"].is_string(), "{r}");
    assert_eq!(r["game"]["variant"], "chess", "{r}");
    assert_eq!(r["game"]["id"], rid, "{r}");
    let g = t.game(&eid).await;
    assert_eq!(g["rematch"]["game_id"], rid, "{g}");
    t.srv.stop().await;
}

async fn player_page_games_pgn_and_leaderboard(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let who = |name: &str| if name == "alice" { &alice } else { &bob };
    let casual = json!({"variant": "chess", "rated": false, "color": "white",
                        "clock": {"limit": 600, "increment": 0}});
    let mut ids = Vec::new();
    let mut whites = Vec::new();
    for _ in 0..21 {
        let (id, w, b) = t.challenge_game(&alice, &bob, casual.clone()).await;
        two_moves_then_resign(&t, &id, who(&w), who(&b), &alice).await;
        ids.push(id);
        whites.push(w);
    }
    let (s, p1) = t.get("/api/users/alice/games?page=1").await;
    assert_eq!(s, 200, "{p1}");
    assert_eq!(p1["page"], 1);
    assert_eq!(p1["more"], true, "{p1}");
    let listed: Vec<&str> = p1["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    let newest: Vec<&str> = ids.iter().rev().take(20).map(String::as_str).collect();
    assert_eq!(listed, newest, "most recent first, 20 a page");
    let (_, p2) = t.get("/api/users/bob/games?page=2").await;
    assert_eq!(p2["page"], 2);
    assert_eq!(p2["more"], false, "{p2}");
    assert_eq!(p2["games"].as_array().unwrap().len(), 1, "{p2}");
    assert_eq!(p2["games"][0]["id"], ids[0].as_str(), "{p2}");
    let (s, u) = t.get("/api/users/alice").await;
    assert_eq!(s, 200);
    assert_eq!(u["count"]["all"], 21, "{u}");
    assert_eq!(u["count"]["rated"], 0, "{u}");
    assert_eq!(u["count"]["loss"], 21, "{u}");
    assert_eq!(u["count"]["win"], 0, "{u}");
    let (_, u) = t.get("/api/users/bob").await;
    assert_eq!(u["count"]["win"], 21, "{u}");
    // Someone else's page is empty.
    let _carol = t.signup("carol").await;
    let (_, p) = t.get("/api/users/carol/games?page=1").await;
    assert_eq!(p["games"], json!([]), "{p}");
    assert_eq!(p["more"], false, "{p}");

    // The PGN of all of them.
    let resp = t
        .http
        .get(format!("{}/api/games/user/alice", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/x-chess-pgn"),
        "{:?}",
        resp.headers()
    );
    let pgn = resp.text().await.unwrap();
    // Alice resigned each game: 0-1 when she had White.
    let as_white = whites.iter().filter(|w| *w == "alice").count();
    assert_eq!(pgn.matches("[Result \"0-1\"]").count(), as_white, "{pgn}");
    assert_eq!(
        pgn.matches("[Result \"1-0\"]").count(),
        21 - as_white,
        "{pgn}"
    );
    assert_eq!(pgn.matches("[White \"alice\"]").count(), as_white, "{pgn}");
    assert_eq!(
        pgn.matches("[Black \"alice\"]").count(),
        21 - as_white,
        "{pgn}"
    );
    // The moves (each followed by its clock comment).
    assert_eq!(pgn.matches("1.e4 ").count(), 21, "{pgn}");
    assert_eq!(pgn.matches(" e5 ").count(), 21, "{pgn}");
    for id in &ids {
        assert!(pgn.contains(id.as_str()), "game {id} not in the PGN: {pgn}");
    }

    // Leaderboards: nobody with a provisional rating.
    let (s, lb) = t.get("/api/leaderboard/two-move").await;
    assert_eq!(s, 200, "{lb}");
    assert_eq!(lb["players"], json!([]), "{lb}");
    let rated = json!({"variant": "two-move", "rated": true, "color": "white",
                       "clock": {"limit": 600, "increment": 0}});
    let (id, w, b) = t.challenge_game(&alice, &bob, rated).await;
    play_any_turn(&t, &id, who(&w), "white").await;
    play_any_turn(&t, &id, who(&b), "black").await;
    let g = who(&w).act(&id, "resign").await;
    assert_eq!(g["status"], "finished", "{g}");
    let perfs = t.perfs("alice").await;
    assert_eq!(perfs["two-move"]["games"], 1, "{perfs}");
    assert_eq!(perfs["two-move"]["provisional"], true, "{perfs}");
    assert_ne!(perfs["two-move"]["rating"], 1500, "{perfs}");
    let (_, lb) = t.get("/api/leaderboard/two-move").await;
    assert_eq!(lb["players"], json!([]), "provisional players listed: {lb}");

    // Rated chess games until both are established (Glicko-2 with τ 0.75: about 14 games
    // between two new players bring RD under 110); then both are on the chess leaderboard.
    let rated = json!({"variant": "chess", "rated": true, "color": "white",
                       "clock": {"limit": 600, "increment": 0}});
    let (mut ga, mut gb) = (NEW, NEW);
    let mut n = 0;
    loop {
        n += 1;
        assert!(
            n <= 40,
            "still provisional after 40 rated games: {}",
            t.perfs("alice").await
        );
        let (id, w, b) = t.challenge_game(&alice, &bob, rated.clone()).await;
        // Alternate the winner (picked by name, whatever the colours).
        let loser = if n % 2 == 0 { &alice } else { &bob };
        two_moves_then_resign(&t, &id, who(&w), who(&b), loser).await;
        let alice_score = if n % 2 == 0 { 0.0 } else { 1.0 };
        let (na, nb) = rate(ga, gb, alice_score);
        ga = na;
        gb = nb;
        let pa = t.perfs("alice").await["chess"].clone();
        let pb = t.perfs("bob").await["chess"].clone();
        assert_perf(&pa, ga, n, "alice");
        assert_perf(&pb, gb, n, "bob");
        if n < 5 {
            let (_, lb) = t.get("/api/leaderboard/chess").await;
            assert_eq!(lb["players"], json!([]), "after {n} games: {lb}");
        }
        if pa["provisional"] == false && pb["provisional"] == false {
            break;
        }
    }
    let (s, lb) = t.get("/api/leaderboard/chess").await;
    assert_eq!(s, 200, "{lb}");
    let players = lb["players"].as_array().unwrap();
    assert_eq!(players.len(), 2, "{lb}");
    let pa = t.perfs("alice").await["chess"].clone();
    let pb = t.perfs("bob").await["chess"].clone();
    let (first, second) = if int(&pa["rating"]) >= int(&pb["rating"]) {
        (("alice", &pa), ("bob", &pb))
    } else {
        (("bob", &pb), ("alice", &pa))
    };
    for (row, (name, perf)) in players.iter().zip([first, second]) {
        assert_eq!(row["username"], name, "{lb}");
        assert_eq!(row["rating"], perf["rating"], "{lb}");
        assert_eq!(row["rd"], perf["rd"], "{lb}");
        assert_eq!(row["games"], n, "{lb}");
    }
    let (_, lb) = t.get("/api/leaderboard/two-move").await;
    assert_eq!(lb["players"], json!([]), "{lb}");
    let (s, _) = t.get("/api/leaderboard/fairy").await;
    assert!(s == 400 || s == 404, "{s}");
    t.srv.stop().await;
}

async fn challenges_and_seeks_over_the_lobby_socket(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let mut la = alice.ws("/api/lobby/ws").await;
    assert_eq!(next_json(&mut la).await["type"], "seeks");
    let mut lb = bob.ws("/api/lobby/ws").await;
    assert_eq!(next_json(&mut lb).await["type"], "seeks");
    let body = json!({"variant": "double-move", "rated": false, "color": "black",
                      "clock": {"limit": 180, "increment": 2}});

    // A challenge arrives on the challenged player's lobby socket; canceled, it is gone.
    let (s, c) = alice.post("/api/challenge/bob", body.clone()).await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    assert_eq!(c["variant"], "double-move", "{c}");
    assert_eq!(c["rated"], false, "{c}");
    assert_eq!(c["color"], "black", "{c}");
    assert_eq!(c["rematch_of"], Value::Null, "{c}");
    assert_eq!(c["game_id"], Value::Null, "{c}");
    let (m, _) = until(&mut lb, |m| m["type"] == "challenge").await;
    assert_eq!(m["challenge"]["id"], cid.as_str(), "{m}");
    assert_eq!(m["challenge"]["from"], "alice", "{m}");
    let (_, ch) = bob.get("/api/challenges").await;
    assert_eq!(ch["in"].as_array().unwrap().len(), 1, "{ch}");
    assert_eq!(ch["in"][0]["id"], cid.as_str(), "{ch}");
    assert_eq!(ch["out"], json!([]), "{ch}");
    let (_, ch) = alice.get("/api/challenges").await;
    assert_eq!(ch["out"][0]["id"], cid.as_str(), "{ch}");
    // Only the challenger cancels; only the challenged accepts.
    let (s, e) = bob
        .post(&format!("/api/challenge/{cid}/cancel"), json!({}))
        .await;
    assert!(
        (400..500).contains(&s),
        "bob canceled alice's challenge: {s} {e}"
    );
    let (s, e) = alice
        .post(&format!("/api/challenge/{cid}/accept"), json!({}))
        .await;
    assert!(
        (400..500).contains(&s),
        "alice accepted her own challenge: {s} {e}"
    );
    let (s, _) = alice
        .post(&format!("/api/challenge/{cid}/cancel"), json!({}))
        .await;
    assert_eq!(s, 200);
    let (m, _) = until(&mut lb, |m| m["type"] == "challenge_gone").await;
    assert_eq!(m["id"], cid.as_str(), "{m}");
    assert_eq!(m["reason"], "canceled", "{m}");
    let (_, ch) = bob.get("/api/challenges").await;
    assert_eq!(ch["in"], json!([]), "{ch}");
    let (s, e) = bob
        .post(&format!("/api/challenge/{cid}/accept"), json!({}))
        .await;
    assert!(
        s == 404 || s == 409,
        "a canceled challenge accepted: {s} {e}"
    );

    // Declined with a reason: the challenger is told.
    let (_, c) = alice.post("/api/challenge/bob", body.clone()).await;
    let cid = c["id"].as_str().unwrap().to_string();
    let (s, e) = bob
        .post(
            &format!("/api/challenge/{cid}/decline"),
            json!({"reason": "later"}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    let (m, _) = until(&mut la, |m| m["type"] == "challenge_gone").await;
    assert_eq!(m["id"], cid.as_str(), "{m}");
    assert_eq!(m["reason"], "declined", "{m}");
    let (_, ch) = alice.get("/api/challenges").await;
    assert_eq!(ch["out"], json!([]), "{ch}");

    // Accepted: both are told the game started, with their colours (the challenger chose black).
    let (_, c) = alice.post("/api/challenge/bob", body.clone()).await;
    let cid = c["id"].as_str().unwrap().to_string();
    let (s, a) = bob
        .post(&format!("/api/challenge/{cid}/accept"), json!({}))
        .await;
    assert_eq!(s, 200, "{a}");
    let id = a["game_id"].as_str().unwrap().to_string();
    let (m, _) = until(&mut la, |m| m["type"] == "game_start").await;
    assert_eq!(m["game_id"], id.as_str(), "{m}");
    assert_eq!(m["color"], "black", "{m}");
    let (m, _) = until(&mut lb, |m| m["type"] == "game_start").await;
    assert_eq!(m["game_id"], id.as_str(), "{m}");
    assert_eq!(m["color"], "white", "{m}");
    let g = t.game(&id).await;
    assert_eq!(g["variant"], "double-move", "{g}");
    assert_eq!(g["players"]["white"]["username"], "bob", "{g}");
    assert_eq!(g["players"]["black"]["username"], "alice", "{g}");
    assert_eq!(g["rated"], false, "{g}");
    assert_eq!(g["clock"]["white_ms"], 180_000, "{g}");

    // Bad challenges.
    let (s, e) = alice.post("/api/challenge/nobody_here", body.clone()).await;
    assert_eq!(s, 404, "{e}");
    let (s, e) = alice.post("/api/challenge/alice", body.clone()).await;
    assert!((400..500).contains(&s), "a challenge to oneself: {s} {e}");
    let (s, e) = alice
        .post(
            "/api/challenge/bob",
            json!({"variant": "chess", "rated": false, "color": "white", "days": 4}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    let (s, e) = t
        .post(
            "/api/challenge/bob",
            None,
            json!({"variant": "chess", "rated": false, "color": "white", "days": 3}),
        )
        .await;
    assert_eq!(s, 401, "an anonymous challenge: {e}");
    let (s, e) = t
        .post(
            "/api/seeks",
            None,
            json!({"variant": "chess", "days": 3, "rated": false, "color": "random"}),
        )
        .await;
    assert_eq!(s, 401, "an anonymous seek: {e}");

    // A real-time seek lives while its creator's lobby socket is open; a correspondence seek stays.
    let mut watcher = t.ws("/api/lobby/ws").await;
    next_json(&mut watcher).await;
    let (s, v) = alice
        .post(
            "/api/seeks",
            json!({"variant": "two-move", "clock": {"limit": 60, "increment": 1},
                   "rated": false, "color": "random"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let live = v["id"].as_str().unwrap().to_string();
    let (s, v) = alice
        .post(
            "/api/seeks",
            json!({"variant": "two-move", "days": 2, "rated": false, "color": "random"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let corr = v["id"].as_str().unwrap().to_string();
    let (_, list) = t.get("/api/seeks").await;
    let ids: Vec<&str> = list["seeks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&live.as_str()) && ids.contains(&corr.as_str()),
        "{list}"
    );
    la.close(None).await.unwrap();
    drop(la);
    let (m, _) = until(&mut watcher, |m| m["type"] == "seek_removed").await;
    assert_eq!(m["id"], live.as_str(), "{m}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, list) = t.get("/api/seeks").await;
    let ids: Vec<&str> = list["seeks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&live.as_str()), "{list}");
    assert!(ids.contains(&corr.as_str()), "{list}");
    // A lobby socket opened now sees the correspondence seek.
    let mut late = t.ws("/api/lobby/ws").await;
    let first = next_json(&mut late).await;
    assert_eq!(first["type"], "seeks", "{first}");
    assert!(
        first["seeks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == corr.as_str() && s["days"] == 2),
        "{first}"
    );
    let (s, a) = bob
        .post(&format!("/api/seeks/{corr}/accept"), json!({}))
        .await;
    assert_eq!(s, 200, "{a}");
    let g = t.game(a["game_id"].as_str().unwrap()).await;
    assert_eq!(g["days"], 2, "{g}");
    assert_eq!(g["variant"], "two-move", "{g}");
    t.srv.stop().await;
}

async fn games_created_by_accounts_seats_and_sockets(db: Db) {
    let t = start(&db.url).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    // Rated needs an account (and a person as the opponent).
    let (s, e) = t
        .post(
            "/api/games",
            None,
            json!({"variant": "chess", "rated": true, "opponent": "human", "days": 3}),
        )
        .await;
    assert!(s == 400 || s == 401, "an anonymous rated game: {s} {e}");
    let (s, e) = alice
        .post(
            "/api/games",
            json!({"variant": "chess", "rated": true, "opponent": "engine", "level": 1}),
        )
        .await;
    assert_eq!(s, 400, "a rated game against the engine: {e}");
    for bad in [
        json!({"variant": "chess", "days": 4}),
        json!({"variant": "chess", "days": 3, "clock": {"limit": 60, "increment": 0}}),
    ] {
        let (s, e) = alice.post("/api/games", bad.clone()).await;
        assert_eq!(s, 400, "{bad}: {e}");
    }

    // A rated correspondence game: the creator's account takes the seat; only an account joins.
    let (s, v) = alice
        .post(
            "/api/games",
            json!({"variant": "chess", "rated": true, "opponent": "human", "days": 3,
                   "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    let seat_token = v["token"].as_str().map(str::to_string);
    let invite = v["invite"].as_str().unwrap().to_string();
    assert_eq!(v["game"]["players"]["white"]["username"], "alice", "{v}");
    assert_eq!(v["game"]["players"]["black"], Value::Null, "{v}");
    assert_eq!(v["game"]["rated"], true, "{v}");
    assert_eq!(v["game"]["days"], 3, "{v}");
    let join = format!("/api/games/{id}/join");
    let (s, e) = t.post(&join, None, json!({"invite": invite})).await;
    assert!(
        (400..500).contains(&s),
        "an anonymous player joined a rated game: {s} {e}"
    );
    let (s, j) = bob.post(&join, json!({"invite": invite})).await;
    assert_eq!(s, 200, "{j}");
    assert_eq!(j["color"], "black", "{j}");
    let g = t.game(&id).await;
    assert_eq!(g["status"], "started", "{g}");
    assert_eq!(g["players"]["black"]["username"], "bob", "{g}");
    assert_eq!(g["players"]["black"]["rating"], 1500, "{g}");
    assert_eq!(g["players"]["black"]["provisional"], true, "{g}");

    // The seat token still works on the socket; the session cookie plays over the socket too.
    if let Some(tok) = seat_token {
        let mut ws = t.ws(&format!("/api/games/{id}/ws?token={tok}")).await;
        let full = next_json(&mut ws).await;
        assert_eq!(full["you"], "white", "{full}");
    }
    let mut ws_a = alice.ws(&format!("/api/games/{id}/ws")).await;
    let full = next_json(&mut ws_a).await;
    assert_eq!(full["type"], "gameFull", "{full}");
    assert_eq!(full["you"], "white", "{full}");
    ws_a.send(Message::Text(
        json!({"type": "move", "move": "e2e4"}).to_string().into(),
    ))
    .await
    .unwrap();
    let (m, _) = until(&mut ws_a, |m| {
        m["moves"].as_array().is_some_and(|a| a.len() == 1)
    })
    .await;
    assert_eq!(m["turn"], "black", "{m}");
    assert!(int(&m["deadline_ms"]) > 0, "{m}");
    let mut ws_b = bob.ws(&format!("/api/games/{id}/ws")).await;
    let full = next_json(&mut ws_b).await;
    assert_eq!(full["you"], "black", "{full}");
    // Bob may not move White's pieces over his socket.
    ws_b.send(Message::Text(
        json!({"type": "move", "move": "d2d4"}).to_string().into(),
    ))
    .await
    .unwrap();
    let (err, _) = until(&mut ws_b, |m| m["type"] == "error").await;
    assert!(
        err["status"]
            .as_u64()
            .is_some_and(|s| (400..500).contains(&s)),
        "{err}"
    );
    bob.mv(&id, "e7e5").await;
    let g = t.game(&id).await;
    assert_eq!(g["moves"], json!(["e2e4", "e7e5"]), "{g}");

    // A casual game: an anonymous spectator may write in the spectator room.
    let (s, v) = alice
        .post(
            "/api/games",
            json!({"variant": "twinmove", "opponent": "human", "color": "black"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let id2 = v["id"].as_str().unwrap().to_string();
    assert_eq!(v["game"]["players"]["black"]["username"], "alice", "{v}");
    assert_eq!(v["game"]["rated"], false, "{v}");
    let (s, j) = t
        .post(
            &format!("/api/games/{id2}/join"),
            None,
            json!({"invite": v["invite"]}),
        )
        .await;
    assert_eq!(s, 200, "an anonymous player joins a casual game: {j}");
    let g = t.game(&id2).await;
    assert_eq!(g["players"]["white"], Value::Null, "{g}");
    let mut spec = t.ws(&format!("/api/games/{id2}/ws")).await;
    until(&mut spec, |m| {
        m["type"] == "chat_history" && m["room"] == "spectator"
    })
    .await;
    let mut spec2 = t.ws(&format!("/api/games/{id2}/ws")).await;
    until(&mut spec2, |m| m["type"] == "chat_history").await;
    say(&mut spec, "spectator", "anonymous hello").await;
    let (line, _) = until(&mut spec2, |m| is_chat(m, "spectator", "anonymous hello")).await;
    assert_eq!(line["line"]["user"], Value::Null, "{line}");
    t.srv.stop().await;
}

async fn correspondence_order_and_a_draw_when_the_opponent_cannot_win(db: Db) {
    let clock = TimeSource::default();
    let t = start_clocked(&db.url, clock.clone()).await;
    let alice = t.signup("alice").await;
    let bob = t.signup("bob").await;
    let game =
        |days: u32| json!({"variant": "chess", "days": days, "rated": false, "color": "white"});
    // g7: Alice to move, 7 days; g2: Alice to move, 2 days; g1: Bob to move, 1 day.
    let (g7, _, _) = t.challenge_game(&alice, &bob, game(7)).await;
    let (g2, _, _) = t.challenge_game(&alice, &bob, game(2)).await;
    let (g1, _, _) = t.challenge_game(&alice, &bob, game(1)).await;
    for id in [&g7, &g2] {
        alice.mv(id, "e2e4").await;
        bob.mv(id, "e7e5").await;
    }
    alice.mv(&g1, "d2d4").await;
    bob.mv(&g1, "d7d5").await;
    alice.mv(&g1, "c2c4").await;
    let (s, p) = alice.get("/api/account/playing").await;
    assert_eq!(s, 200, "{p}");
    let order: Vec<&str> = p["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [g2.as_str(), g7.as_str(), g1.as_str()],
        "my turn first, then by deadline: {p}"
    );
    let my_turn: Vec<&Value> = p["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["my_turn"])
        .collect();
    assert_eq!(my_turn, [&json!(true), &json!(true), &json!(false)], "{p}");
    assert_eq!(p["games"][0]["color"], "white", "{p}");
    assert_eq!(p["games"][0]["opponent"]["username"], "bob", "{p}");
    assert_eq!(p["games"][0]["days"], 2, "{p}");
    assert!(
        p["games"][0]["fen"].as_str().unwrap().contains(" w "),
        "{p}"
    );
    let g7_deadline = int(&t.game(&g7).await["deadline_ms"]);

    // White (a king and queen) against a lone king: White running out of time is a draw.
    let (s, v) = alice
        .post(
            "/api/games",
            json!({"variant": "chess", "fen": "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "days": 1,
                   "opponent": "human", "color": "white"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let gd = v["id"].as_str().unwrap().to_string();
    let (s, j) = bob
        .post(
            &format!("/api/games/{gd}/join"),
            json!({"invite": v["invite"]}),
        )
        .await;
    assert_eq!(s, 200, "{j}");
    alice.mv(&gd, "d1d2").await;
    bob.mv(&gd, "e8f8").await;
    t.srv.stop().await;

    clock.advance(25 * 3600 * 1000);
    let t = start_clocked(&db.url, clock.clone()).await;
    let g = t.wait_for(&gd, |g| g["status"] == "finished").await;
    assert_eq!(g["result"], "1/2-1/2", "{g}");
    assert_eq!(g["winner"], Value::Null, "{g}");
    assert!(
        g["reason"] == "timeout_vs_insufficient_material" || g["reason"] == "timeout",
        "{g}"
    );
    let g = t.wait_for(&g1, |g| g["status"] == "finished").await;
    assert_eq!(g["reason"], "timeout", "{g}");
    assert_eq!(g["winner"], "white", "{g}");
    // Two days per turn: 25 hours are not enough; neither for seven.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let g = t.game(&g2).await;
    assert_eq!(g["status"], "started", "{g}");
    let g = t.game(&g7).await;
    assert_eq!(g["status"], "started", "{g}");
    assert_eq!(
        int(&g["deadline_ms"]),
        g7_deadline,
        "not extended by the downtime: {g}"
    );
    // Another day: the two-day game is lost by Alice on time.
    t.srv.stop().await;
    clock.advance(24 * 3600 * 1000);
    let t = start_clocked(&db.url, clock.clone()).await;
    let g = t.wait_for(&g2, |g| g["status"] == "finished").await;
    assert_eq!(g["reason"], "timeout", "{g}");
    assert_eq!(g["winner"], "black", "{g}");
    // The session survived both restarts.
    let alice = alice.at(&t);
    let (s, p) = alice.get("/api/account/playing").await;
    assert_eq!(s, 200, "{p}");
    let ids: Vec<&str> = p["games"].as_array().map_or(vec![], |a| {
        a.iter().map(|g| g["id"].as_str().unwrap()).collect()
    });
    assert_eq!(ids, [g7.as_str()], "{p}");
    t.srv.stop().await;
}

/// PostgreSQL only: two nodes on one database. A challenge made on one node reaches the
/// challenged player's lobby socket on the other, the game starts for both, chat and seeks cross.
#[tokio::test]
async fn two_nodes_share_challenges_chat_and_seeks() {
    let db = Db::postgres().await;
    let a = start_node(&db.url, TimeSource::default(), Some("node-a")).await;
    let b = start_node(&db.url, TimeSource::default(), Some("node-b")).await;
    let alice = a.signup("alice").await;
    let bob = b.signup("bob").await;
    // Sessions live in the database: each cookie works on the other node as well.
    let (s, acc) = alice.at(&b).get("/api/account").await;
    assert_eq!(s, 200, "{acc}");
    assert_eq!(acc["username"], "alice");

    let mut la = alice.ws("/api/lobby/ws").await; // on node A
    next_json(&mut la).await;
    let mut lb = bob.ws("/api/lobby/ws").await; // on node B
    next_json(&mut lb).await;
    let (s, c) = bob
        .post(
            "/api/challenge/alice",
            json!({"variant": "chess", "rated": true, "color": "white",
                   "clock": {"limit": 300, "increment": 0}}),
        )
        .await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_string();
    let (m, _) = until(&mut la, |m| m["type"] == "challenge").await;
    assert_eq!(m["challenge"]["id"], cid.as_str(), "{m}");
    let (s, r) = alice
        .post(&format!("/api/challenge/{cid}/accept"), json!({}))
        .await;
    assert_eq!(s, 200, "{r}");
    let id = r["game_id"].as_str().unwrap().to_string();
    let (m, _) = until(&mut lb, |m| m["type"] == "game_start").await;
    assert_eq!(m["game_id"], id.as_str(), "{m}");
    assert_eq!(m["color"], "white", "{m}");

    // Chat between the nodes; moves too.
    let path = format!("/api/games/{id}/ws");
    let mut wa = alice.ws(&path).await;
    assert_eq!(next_json(&mut wa).await["you"], "black");
    let mut wb = bob.ws(&path).await;
    assert_eq!(next_json(&mut wb).await["you"], "white");
    until(&mut wa, |m| m["type"] == "chat_history").await;
    until(&mut wb, |m| m["type"] == "chat_history").await;
    say(&mut wb, "player", "hello from B").await;
    let (line, _) = until(&mut wa, |m| is_chat(m, "player", "hello from B")).await;
    assert_eq!(line["line"]["user"], "bob", "{line}");
    bob.mv(&id, "e2e4").await;
    until(&mut wa, |m| {
        m["moves"].as_array().is_some_and(|a| a.len() == 1)
    })
    .await;
    alice.mv(&id, "e7e5").await;
    let g = bob.act(&id, "resign").await;
    assert_eq!(g["winner"], "black", "{g}");
    let (w1, b1) = rate(NEW, NEW, 0.0);
    assert_perf(&a.perfs("bob").await["chess"], w1, 1, "bob");
    assert_perf(&b.perfs("alice").await["chess"], b1, 1, "alice");

    // A seek made on A (its creator's lobby socket is on A) is seen and taken on B.
    let mut watcher = b.ws("/api/lobby/ws").await;
    next_json(&mut watcher).await;
    let (s, v) = alice
        .post(
            "/api/seeks",
            json!({"variant": "chess", "clock": {"limit": 120, "increment": 1},
                   "rated": false, "color": "random"}),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let sid = v["id"].as_str().unwrap().to_string();
    let (m, _) = until(&mut watcher, |m| m["type"] == "seek_added").await;
    assert_eq!(m["seek"]["id"], sid.as_str(), "{m}");
    let (_, list) = b.get("/api/seeks").await;
    assert!(
        list["seeks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == sid.as_str()),
        "{list}"
    );
    let (s, r) = bob
        .post(&format!("/api/seeks/{sid}/accept"), json!({}))
        .await;
    assert_eq!(s, 200, "{r}");
    let gid = r["game_id"].as_str().unwrap().to_string();
    // (Alice's lobby socket was told of the first game too.)
    let (m, _) = until(&mut la, |m| {
        m["type"] == "game_start" && m["game_id"] == gid.as_str()
    })
    .await;
    assert!(m["color"] == "white" || m["color"] == "black", "{m}");
    b.srv.stop().await;
    a.srv.stop().await;
}

on_both_backends!(
    signup_login_logout_and_username_rules,
    csrf_origin_and_api_tokens,
    glicko2_ratings_for_rated_games_only,
    a_seek_is_taken_by_exactly_one_of_two_at_once,
    correspondence_deadline_passes_while_the_server_is_down,
    chat_rooms_limits_and_history,
    a_bot_accepts_a_challenge_and_mates_over_its_streams,
    rematch_between_accounts_swaps_colours,
    rematch_against_the_engine,
    player_page_games_pgn_and_leaderboard,
    challenges_and_seeks_over_the_lobby_socket,
    games_created_by_accounts_seats_and_sockets,
    correspondence_order_and_a_draw_when_the_opponent_cannot_win,
);
