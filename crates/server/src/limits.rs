//! The server's limits in one place (to become flags of `doublemove serve`) and the pieces that
//! enforce them: per-client counters with guards, per-IP rate-limit layers answering 429, WebSocket
//! size limits and close codes, the WebSocket Origin check and the security headers.

use crate::engine_pool::{ClientKey, EnginePool, PoolConfig};
use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower_governor::governor::{GovernorConfig, GovernorConfigBuilder};
use tower_governor::key_extractor::KeyExtractor;
use tower_governor::{GovernorError, GovernorLayer};
use tower_http::set_header::SetResponseHeaderLayer;

/// Every limit of the server. The defaults suit a small public server on a few cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// Engine worker threads shared by engine games and analysis (default: cores − 1, at least 1).
    pub engine_threads: usize,
    /// Search threads per engine job (default 1): the pool runs engine_threads / this jobs at once.
    pub engine_search_threads: usize,
    /// Jobs waiting for an engine thread, all clients together (default 256).
    pub engine_queue: usize,
    /// Transposition table per engine thread in MB (default 16).
    pub engine_hash_mb: usize,
    /// Analysis sockets open at once per client (default 2: the analysis board plus one more tab).
    pub analyses_per_client: usize,
    /// Unfinished games against the engine per client (default 5).
    pub engine_games_per_client: usize,
    /// Game creations per IP: a burst of this many (default 10) ...
    pub create_burst: u32,
    /// ... then one more per this period (default 6 s, so 10 a minute at most in the long run).
    pub create_period: Duration,
    /// Requests of any kind per IP: a burst of this many (default 60) ...
    pub request_burst: u32,
    /// ... then one more per this period (default 50 ms: 20 requests a second).
    pub request_period: Duration,
    /// Analysis requests over one socket: a burst of this many (default 30: clicking through a
    /// game's moves on the analysis board) ...
    pub analysis_request_burst: u32,
    /// ... then one more per this period (default 50 ms: 20 a second, what the web UI's evaluation
    /// graph needs at its shortest movetime of 50 ms). Each request stops and replaces a search, so
    /// a faster stream would only churn the engine.
    pub analysis_request_period: Duration,
    /// Largest WebSocket message or frame a client may send, in bytes (default 16 KiB; the largest
    /// legitimate one, an analysis request with a FEN, is well under 1 KiB).
    pub ws_max_message: usize,
    /// WebSockets open at once per client, of every kind (default 20).
    pub sockets_per_client: usize,
    /// WebSockets open at once on the whole server (default 20,000).
    pub sockets_total: usize,
    /// Session cookies only over HTTPS (`Secure`): set when the site is served over TLS (behind
    /// a TLS-terminating proxy).
    pub secure_cookies: bool,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            engine_threads: PoolConfig::default_threads(),
            engine_search_threads: 1,
            engine_queue: 256,
            engine_hash_mb: 16,
            analyses_per_client: 2,
            engine_games_per_client: 5,
            create_burst: 10,
            create_period: Duration::from_secs(6),
            request_burst: 60,
            request_period: Duration::from_millis(50),
            analysis_request_burst: 30,
            analysis_request_period: Duration::from_millis(50),
            ws_max_message: 16 * 1024,
            sockets_per_client: 20,
            sockets_total: 20_000,
            secure_cookies: false,
        }
    }
}

impl ServerLimits {
    /// The engine pool's configuration.
    pub fn pool_config(&self) -> PoolConfig {
        PoolConfig {
            threads: self.engine_threads.max(1),
            search_threads: self.engine_search_threads.max(1),
            max_queued: self.engine_queue.max(1),
            // A client's own share of the queue: its engine games plus its analyses, and some slack.
            max_queued_per_client: (self.engine_games_per_client + self.analyses_per_client).max(1)
                * 2,
            hash_mb: self.engine_hash_mb.max(1),
        }
    }

    /// The per-client counters these limits call for.
    pub fn counters(&self) -> ClientCounters {
        ClientCounters {
            analyses: ClientCounter::new(self.analyses_per_client, usize::MAX),
            engine_games: ClientCounter::new(self.engine_games_per_client, usize::MAX),
            sockets: ClientCounter::new(self.sockets_per_client, self.sockets_total),
        }
    }
}

/// What a running server keeps to bound its clients: the limits, the engine pool built from them and
/// the per-client counters. One per server (a field of its state).
pub struct Bounds {
    pub limits: ServerLimits,
    pub pool: Arc<EnginePool>,
    pub counters: ClientCounters,
}

impl Bounds {
    /// Starts the engine pool's threads.
    pub fn new(limits: ServerLimits) -> Bounds {
        Bounds {
            pool: Arc::new(EnginePool::with_config(limits.pool_config())),
            counters: limits.counters(),
            limits,
        }
    }
}

/// The counters a server keeps (one set per server, in its state).
#[derive(Clone, Debug)]
pub struct ClientCounters {
    pub analyses: ClientCounter,
    pub engine_games: ClientCounter,
    /// Every WebSocket (game and analysis).
    pub sockets: ClientCounter,
}

/// Why a [`ClientCounter`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitExceeded {
    /// This client holds `limit` already.
    PerClient { limit: usize },
    /// The server holds `limit` already.
    Total { limit: usize },
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitExceeded::PerClient { limit } => write!(f, "at most {limit} per client"),
            LimitExceeded::Total { limit } => write!(f, "the server is full ({limit})"),
        }
    }
}

impl std::error::Error for LimitExceeded {}

#[derive(Debug)]
struct CounterState {
    per_client: HashMap<ClientKey, usize>,
    total: usize,
}

#[derive(Debug)]
struct CounterInner {
    max_per_client: usize,
    max_total: usize,
    state: Mutex<CounterState>,
}

/// Counts what each client holds open (sockets, analyses, engine games) against a per-client and a
/// total cap. [`ClientCounter::try_acquire`] hands out a guard that gives its unit back when dropped,
/// so a socket task or game that ends by any path (error, panic, client gone) is uncounted.
#[derive(Clone, Debug)]
pub struct ClientCounter {
    inner: Arc<CounterInner>,
}

impl ClientCounter {
    pub fn new(max_per_client: usize, max_total: usize) -> ClientCounter {
        ClientCounter {
            inner: Arc::new(CounterInner {
                max_per_client,
                max_total,
                state: Mutex::new(CounterState {
                    per_client: HashMap::new(),
                    total: 0,
                }),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CounterState> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One more for `key`, or why not.
    pub fn try_acquire(&self, key: &ClientKey) -> Result<ClientGuard, LimitExceeded> {
        let mut st = self.lock();
        if st.total >= self.inner.max_total {
            return Err(LimitExceeded::Total {
                limit: self.inner.max_total,
            });
        }
        let n = st.per_client.get(key).copied().unwrap_or(0);
        if n >= self.inner.max_per_client {
            return Err(LimitExceeded::PerClient {
                limit: self.inner.max_per_client,
            });
        }
        st.per_client.insert(key.clone(), n + 1);
        st.total += 1;
        Ok(ClientGuard {
            counter: self.clone(),
            key: key.clone(),
        })
    }

    /// How many `key` holds now.
    pub fn count(&self, key: &ClientKey) -> usize {
        self.lock().per_client.get(key).copied().unwrap_or(0)
    }

    /// How many all clients hold now.
    pub fn total(&self) -> usize {
        self.lock().total
    }

    pub fn max_per_client(&self) -> usize {
        self.inner.max_per_client
    }

    fn release(&self, key: &ClientKey) {
        let mut st = self.lock();
        st.total -= 1;
        if let Some(n) = st.per_client.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                st.per_client.remove(key);
            }
        }
    }
}

/// One unit held in a [`ClientCounter`]; dropping it gives the unit back.
#[derive(Debug)]
#[must_use = "the unit is given back when the guard is dropped"]
pub struct ClientGuard {
    counter: ClientCounter,
    key: ClientKey,
}

impl ClientGuard {
    pub fn client(&self) -> &ClientKey {
        &self.key
    }
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.counter.release(&self.key);
    }
}

/// The client's key from the peer address that axum records when served with
/// `into_make_service_with_connect_info::<SocketAddr>()`. (Behind a reverse proxy every client has
/// the proxy's address; trusting X-Forwarded-For is left for when the server runs behind one.)
pub fn client_key(addr: &ConnectInfo<SocketAddr>) -> ClientKey {
    ClientKey::ip(addr.0.ip())
}

/// Rate-limit key: the request's [`ClientKey`] (peer IP; an IPv6 client by its /64).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientKeyExtractor;

impl KeyExtractor for ClientKeyExtractor {
    type Key = ClientKey;

    fn extract<T>(&self, req: &Request<T>) -> Result<ClientKey, GovernorError> {
        req.extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(client_key)
            .ok_or(GovernorError::UnableToExtractKey)
    }
}

/// A per-IP rate-limit layer answering 429 with `{"error": "too many requests: …, retry in N s"}`.
pub type RateLimitLayer =
    GovernorLayer<ClientKeyExtractor, governor::middleware::NoOpMiddleware, Body>;

type Limiter =
    tower_governor::governor::SharedRateLimiter<ClientKey, governor::middleware::NoOpMiddleware>;

/// The two rate limits: `requests` goes on the whole router, `game_creation` on `POST /api/games`
/// only (both apply there). The router must be served with
/// `into_make_service_with_connect_info::<SocketAddr>()`.
#[derive(Clone)]
pub struct RateLimitLayers {
    pub requests: RateLimitLayer,
    pub game_creation: RateLimitLayer,
    limiters: Vec<Limiter>,
}

impl RateLimitLayers {
    /// Forgets clients whose quota has fully refilled; without this the limiters keep one entry per
    /// address ever seen.
    pub fn forget_idle(&self) {
        for l in &self.limiters {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    /// Runs [`RateLimitLayers::forget_idle`] every `every` on the current Tokio runtime.
    pub fn spawn_cleanup(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                me.forget_idle();
            }
        })
    }
}

fn per_second(period: Duration) -> String {
    let rate = 1.0 / period.as_secs_f64().max(1e-9);
    if rate >= 1.0 {
        format!("{} per second", rate.round())
    } else {
        format!("one every {} s", period.as_secs_f64().round())
    }
}

fn governor_layer(burst: u32, period: Duration, what: String) -> (RateLimitLayer, Limiter) {
    let config: GovernorConfig<ClientKeyExtractor, _> = GovernorConfigBuilder::default()
        .key_extractor(ClientKeyExtractor)
        .period(period.max(Duration::from_nanos(1)))
        .burst_size(burst.max(1))
        .finish()
        .expect("non-zero burst and period");
    let limiter = config.limiter().clone();
    let layer = GovernorLayer::new(config).error_handler(move |e| too_many(&what, e));
    (layer, limiter)
}

fn json_response(status: StatusCode, msg: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": msg }).to_string();
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn too_many(what: &str, e: GovernorError) -> Response<Body> {
    match e {
        GovernorError::TooManyRequests { wait_time, .. } => {
            // The governor rounds the wait down to whole seconds; one more is a safe upper bound.
            let secs = wait_time + 1;
            let mut r = json_response(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("too many requests: {what}, retry in {secs} s"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            r
        }
        GovernorError::UnableToExtractKey => {
            tracing::error!("rate limit: no peer address (serve with connect info)");
            json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error: the client's address is unknown",
            )
        }
        GovernorError::Other { code, msg, .. } => {
            json_response(code, msg.as_deref().unwrap_or("request refused"))
        }
    }
}

/// A rate limit for the messages of one socket (not keyed: one per socket).
pub struct MessageRate {
    limiter: governor::DefaultDirectRateLimiter,
    burst: u32,
    period: Duration,
}

impl MessageRate {
    pub fn new(burst: u32, period: Duration) -> MessageRate {
        let burst = burst.max(1);
        let period = period.max(Duration::from_nanos(1));
        let quota = governor::Quota::with_period(period)
            .expect("non-zero period")
            .allow_burst(std::num::NonZeroU32::new(burst).expect("non-zero burst"));
        MessageRate {
            limiter: governor::RateLimiter::direct(quota),
            burst,
            period,
        }
    }

    /// The analysis socket's request rate.
    pub fn analysis(l: &ServerLimits) -> MessageRate {
        MessageRate::new(l.analysis_request_burst, l.analysis_request_period)
    }

    /// A game socket's message rate (the same numbers: a player sends a few messages a turn).
    pub fn game(l: &ServerLimits) -> MessageRate {
        MessageRate::new(l.analysis_request_burst, l.analysis_request_period)
    }

    /// Takes one message's place, or the refusal's text: `too many requests: …, retry in N s`.
    pub fn check(&self) -> Result<(), String> {
        use governor::clock::{Clock, DefaultClock};
        self.limiter.check().map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            format!(
                "too many requests: at most {} at once, then {}, per socket, retry in {} s",
                self.burst,
                per_second(self.period),
                wait.as_secs() + 1
            )
        })
    }
}

/// The rate-limit layers for these limits.
pub fn rate_limit_layers(l: &ServerLimits) -> RateLimitLayers {
    let (requests, r) = governor_layer(
        l.request_burst,
        l.request_period,
        format!(
            "at most {} requests at once, then {}, per client",
            l.request_burst,
            per_second(l.request_period)
        ),
    );
    let (game_creation, g) = governor_layer(
        l.create_burst,
        l.create_period,
        format!(
            "at most {} new games at once, then {}, per client",
            l.create_burst,
            per_second(l.create_period)
        ),
    );
    RateLimitLayers {
        requests,
        game_creation,
        limiters: vec![r, g],
    }
}

/// The Content-Security-Policy of every response: the web UI loads only its own script and style
/// sheet (its code sets a few inline `style` attributes, hence 'unsafe-inline' for styles only),
/// images as data: URLs (chessground's pieces), and opens WebSockets to its own server. No framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
     font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// Layers adding the security headers to every response that does not set them itself.
pub type SecurityHeaders = (
    SetResponseHeaderLayer<HeaderValue>,
    SetResponseHeaderLayer<HeaderValue>,
    SetResponseHeaderLayer<HeaderValue>,
    SetResponseHeaderLayer<HeaderValue>,
);

/// Content-Security-Policy ([`CONTENT_SECURITY_POLICY`]), `X-Frame-Options: DENY`,
/// `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` (game links can carry player
/// tokens). Use as `router.layer(security_headers())`.
pub fn security_headers() -> SecurityHeaders {
    let h = |name: HeaderName, v: &'static str| {
        SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(v))
    };
    (
        h(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        h(header::X_FRAME_OPTIONS, "DENY"),
        h(header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        h(header::REFERRER_POLICY, "no-referrer"),
    )
}

/// (host, port) of an authority, the port defaulting to the scheme's.
fn host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    let authority = authority.trim();
    if authority.is_empty() || authority.contains(['/', '@', ' ']) {
        return None;
    }
    // An IPv6 literal keeps its brackets: [::1]:8080.
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => {
            (&authority[..i], authority[i + 1..].parse().ok()?)
        }
        _ => (authority, default_port),
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// Whether a WebSocket upgrade may go on: no `Origin` header (a non-browser client, which could send
/// any Origin anyway), or an Origin naming the same host and port as `host` — the server's public
/// host if configured, else the request's `Host` header. This stops other sites' pages from opening
/// sockets with a visitor's browser (cross-site WebSocket hijacking) and spending our engine time.
pub fn origin_allowed(headers: &HeaderMap, host: Option<&str>) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // includes "null" (sandboxed frames, file: pages)
    };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    let host = match host {
        Some(h) => h,
        None => match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
            Some(h) => h,
            None => return false,
        },
    };
    match (
        host_port(authority, default_port),
        host_port(host, default_port),
    ) {
        (Some(o), Some(h)) => o == h,
        _ => false,
    }
}

/// Applies the message and frame size limit to a WebSocket upgrade. A bigger message closes the
/// socket with 1009 (message too big).
pub fn limit_upgrade(ws: WebSocketUpgrade, l: &ServerLimits) -> WebSocketUpgrade {
    ws.max_message_size(l.ws_max_message)
        .max_frame_size(l.ws_max_message)
}

/// Close code 1008: the client broke a rule of ours (too many sockets of its own, bad Origin).
pub const CLOSE_POLICY: u16 = 1008;
/// Close code 1009: a message was too big.
pub const CLOSE_TOO_BIG: u16 = 1009;

/// Whether a socket read failed on the message size limit (tungstenite's capacity error), which
/// is answered with a 1009 close frame rather than a dropped connection.
pub fn is_too_big(e: &axum::Error) -> bool {
    e.to_string().contains("Space limit exceeded")
}
/// Close code 1013: the server is overloaded, try again later.
pub const CLOSE_TRY_AGAIN: u16 = 1013;

/// The close code for a refusal by a counter: the client's own cap is a policy matter (1008), a
/// full server is "try again later" (1013).
pub fn close_code(e: &LimitExceeded) -> u16 {
    match e {
        LimitExceeded::PerClient { .. } => CLOSE_POLICY,
        LimitExceeded::Total { .. } => CLOSE_TRY_AGAIN,
    }
}

/// Sends a close frame with `code` and `reason` (cut to the 123 bytes a close frame allows) and
/// waits briefly for the client's reply, so the client sees the code rather than a reset.
pub async fn close_socket(mut socket: WebSocket, code: u16, reason: &str) {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code,
        reason: reason[..end].to_string().into(),
    };
    if socket.send(Message::Close(Some(frame))).await.is_err() {
        return;
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(m)) = socket.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, post};
    use axum::Router;
    use std::net::{IpAddr, Ipv4Addr};

    fn ip(n: u8) -> ClientKey {
        ClientKey::ip(IpAddr::V4(Ipv4Addr::new(192, 0, 2, n)))
    }

    #[test]
    fn defaults() {
        let l = ServerLimits::default();
        assert!(l.engine_threads >= 1);
        assert_eq!(l.analyses_per_client, 2);
        assert_eq!(l.engine_games_per_client, 5);
        assert_eq!(l.ws_max_message, 16384);
        assert_eq!((l.sockets_per_client, l.sockets_total), (20, 20_000));
        let p = l.pool_config();
        assert_eq!(p.threads, l.engine_threads);
        assert_eq!(p.max_queued_per_client, 14);
    }

    #[test]
    fn counter_guards() {
        let c = ClientCounter::new(2, 3);
        let a1 = c.try_acquire(&ip(1)).unwrap();
        let a2 = c.try_acquire(&ip(1)).unwrap();
        assert_eq!(
            c.try_acquire(&ip(1)).unwrap_err(),
            LimitExceeded::PerClient { limit: 2 }
        );
        let b1 = c.try_acquire(&ip(2)).unwrap();
        // The server is full even for a client holding nothing.
        assert_eq!(
            c.try_acquire(&ip(3)).unwrap_err(),
            LimitExceeded::Total { limit: 3 }
        );
        assert_eq!((c.count(&ip(1)), c.count(&ip(2)), c.total()), (2, 1, 3));
        drop(a1);
        assert_eq!((c.count(&ip(1)), c.total()), (1, 2));
        let a3 = c.try_acquire(&ip(1)).unwrap();
        assert_eq!(a3.client(), &ip(1));
        drop((a2, a3, b1));
        assert_eq!((c.count(&ip(1)), c.count(&ip(2)), c.total()), (0, 0, 0));
        // A clone counts into the same totals.
        let c2 = c.clone();
        let _g = c2.try_acquire(&ip(4)).unwrap();
        assert_eq!(c.total(), 1);
        assert_eq!(close_code(&LimitExceeded::PerClient { limit: 1 }), 1008);
        assert_eq!(close_code(&LimitExceeded::Total { limit: 1 }), 1013);
    }

    #[tokio::test]
    async fn guard_released_when_a_task_ends_badly() {
        let c = ClientCounter::new(1, 10);
        let g = c.try_acquire(&ip(1)).unwrap();
        let t = tokio::spawn(async move {
            let _g = g;
            panic!("the socket task fails");
        });
        assert!(t.await.is_err());
        assert_eq!(c.total(), 0);
        assert!(c.try_acquire(&ip(1)).is_ok());
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn origins() {
        let ok = |p: &[(&'static str, &'static str)]| origin_allowed(&headers(p), None);
        // Non-browser clients send no Origin.
        assert!(ok(&[("host", "example.org")]));
        assert!(ok(&[
            ("host", "example.org"),
            ("origin", "https://example.org")
        ]));
        assert!(ok(&[
            ("host", "Example.ORG"),
            ("origin", "http://example.org")
        ]));
        assert!(ok(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080")
        ]));
        assert!(ok(&[
            ("host", "example.org:443"),
            ("origin", "https://example.org")
        ]));
        assert!(ok(&[
            ("host", "[::1]:8080"),
            ("origin", "http://[::1]:8080")
        ]));
        assert!(!ok(&[
            ("host", "example.org"),
            ("origin", "https://evil.example")
        ]));
        assert!(!ok(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:9090")
        ]));
        assert!(!ok(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://localhost:8080")
        ]));
        assert!(!ok(&[("host", "example.org"), ("origin", "null")]));
        assert!(!ok(&[
            ("host", "example.org"),
            ("origin", "file://example.org")
        ]));
        assert!(!ok(&[
            ("host", "example.org"),
            ("origin", "https://example.org.evil.example")
        ]));
        assert!(!ok(&[("origin", "https://example.org")]));
        // A configured public host wins over the Host header (behind a proxy).
        let h = headers(&[
            ("host", "10.0.0.5:8080"),
            ("origin", "https://chess.example"),
        ]);
        assert!(origin_allowed(&h, Some("chess.example")));
        assert!(!origin_allowed(&h, None));
    }

    /// Serves `app` on a loopback port with peer addresses recorded; returns its base URL.
    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await
            .unwrap();
        });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn rate_limits_answer_429_with_a_message() {
        let limits = ServerLimits {
            request_burst: 5,
            request_period: Duration::from_secs(60),
            create_burst: 2,
            create_period: Duration::from_secs(30),
            ..ServerLimits::default()
        };
        let layers = rate_limit_layers(&limits);
        let app = Router::new()
            .route("/api/ping", get(|| async { "pong" }))
            .route(
                "/api/games",
                post(|| async { "created" }).layer(layers.game_creation.clone()),
            )
            .layer(layers.requests.clone());
        let base = serve(app).await;
        let client = reqwest::Client::new();
        // Two games, then the creation limit.
        for _ in 0..2 {
            let r = client
                .post(format!("{base}/api/games"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
        let r = client
            .post(format!("{base}/api/games"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
        let retry: u64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=31).contains(&retry), "{retry}");
        let body: serde_json::Value = r.json().await.unwrap();
        let msg = body["error"].as_str().unwrap();
        assert!(
            msg.starts_with("too many requests: at most 2 new games"),
            "{msg}"
        );
        assert!(msg.ends_with(&format!("retry in {retry} s")), "{msg}");
        // Three requests used of the general quota of five: two more pass, then 429.
        for _ in 0..2 {
            let r = client.get(format!("{base}/api/ping")).send().await.unwrap();
            assert_eq!(r.status(), 200);
        }
        let r = client.get(format!("{base}/api/ping")).send().await.unwrap();
        assert_eq!(r.status(), 429);
        let body: serde_json::Value = r.json().await.unwrap();
        let msg = body["error"].as_str().unwrap();
        assert!(
            msg.starts_with("too many requests: at most 5 requests at once, then one every 60 s"),
            "{msg}"
        );
        layers.forget_idle();
    }

    #[test]
    fn message_rate() {
        let r = MessageRate::new(3, Duration::from_secs(10));
        for _ in 0..3 {
            r.check().unwrap();
        }
        let e = r.check().unwrap_err();
        assert!(
            e.starts_with("too many requests: at most 3 at once, then one every 10 s"),
            "{e}"
        );
        assert!(e.ends_with("retry in 10 s"), "{e}");
        let r = MessageRate::analysis(&ServerLimits::default());
        for _ in 0..30 {
            r.check().unwrap();
        }
        assert!(r.check().unwrap_err().contains("then 20 per second"));
    }

    #[tokio::test]
    async fn rate_limit_without_connect_info_is_a_clear_500() {
        let layers = rate_limit_layers(&ServerLimits::default());
        let app = Router::new()
            .route("/", get(|| async { "hi" }))
            .layer(layers.requests);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let r = reqwest::get(format!("http://{addr}/")).await.unwrap();
        assert_eq!(r.status(), 500);
        let body: serde_json::Value = r.json().await.unwrap();
        assert!(body["error"]
            .as_str()
            .unwrap()
            .contains("address is unknown"));
    }

    #[tokio::test]
    async fn security_headers_present() {
        let app = Router::new()
            .route("/", get(|| async { "page" }))
            .route(
                "/framed",
                get(|| async { ([(header::X_FRAME_OPTIONS, "SAMEORIGIN")], "ok") }),
            )
            .layer(security_headers());
        let base = serve(app).await;
        let r = reqwest::get(format!("{base}/")).await.unwrap();
        let h = r.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'self'"));
        assert!(csp.contains("connect-src 'self' ws: wss:"));
        assert!(csp.contains("frame-ancestors 'none'"));
        assert!(!csp.contains("script-src 'self' 'unsafe-inline'"));
        assert_eq!(h["x-frame-options"], "DENY");
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["referrer-policy"], "no-referrer");
        // A response that sets a header itself keeps its own.
        let r = reqwest::get(format!("{base}/framed")).await.unwrap();
        assert_eq!(r.headers()["x-frame-options"], "SAMEORIGIN");
    }
}
