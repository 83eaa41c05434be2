//! The doublemove game server: games of every variant against people or the engine over HTTP, a
//! WebSocket and an NDJSON stream per game, server-side clocks, takebacks and offers, storage on
//! SQLite (one embedded file) or PostgreSQL (several nodes on one database), PGN export and import,
//! and an analysis WebSocket. See docs/api.md and docs/architecture.md.

pub mod analysis;
pub mod engine_pool;
pub mod error;
pub mod export;
pub mod game;
pub mod hub;
pub mod limits;
pub mod players;
pub mod protocol;
pub mod routes;
pub mod store;
pub mod tools;
pub mod web;
pub mod ws;

pub use hub::{Hub, Shared};

use anyhow::Result;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

pub struct Config {
    pub addr: SocketAddr,
    /// A path or `sqlite://…` (SQLite), or `postgres://…` (PostgreSQL).
    pub db: String,
    /// This node's name (default: a random one).
    pub node: Option<String>,
    /// Job lease in ms (default [`hub::LEASE_MS`]): how soon another node takes over the engine
    /// turns and flag falls of a node that died.
    pub lease_ms: Option<i64>,
    /// Every limit a client meets (engine threads, caps, rates, sockets).
    pub limits: limits::ServerLimits,
    /// The server's clock (tests move it forward).
    pub clock: hub::TimeSource,
}

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    pub state: Shared,
    tasks: Vec<JoinHandle<()>>,
}

/// The key under which nodes record when they were last alive (for the downtime a restart forgives).
const ALIVE_KEY: &str = "last_alive_ms";
/// How often a node records that it is alive.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

impl Server {
    /// Stops gracefully: no new connections, sockets closed with a reason (1012) and streams
    /// ended, requests in flight finished (their writes done), then the time is recorded and the
    /// store closed.
    pub async fn stop(mut self) {
        let _ = self.state.shutdown.send(true);
        let serve = self.tasks.remove(0);
        let abort = serve.abort_handle();
        if tokio::time::timeout(Duration::from_secs(10), serve)
            .await
            .is_err()
        {
            tracing::warn!("connections still open after 10 s: closing them");
            abort.abort();
        }
        for t in &self.tasks {
            t.abort();
        }
        for t in self.tasks {
            let _ = t.await;
        }
        self.state.close_all();
        let _ = self
            .state
            .store
            .set_value(ALIVE_KEY, &self.state.now().to_string())
            .await;
        self.state.store.close().await;
    }
}

/// Opens the store, resumes the live games (only those) and starts listening.
pub async fn start(cfg: Config) -> Result<Server> {
    let node = cfg.node.unwrap_or_else(|| {
        let n: u32 = rand::random();
        format!("node-{n:08x}")
    });
    let store = store::open(&cfg.db, &node).await?;
    let shared = store.backend() == "postgres";
    let lease = cfg.lease_ms.unwrap_or(hub::LEASE_MS).max(100);
    let hub: Shared = Arc::new(Hub::new(
        store.clone(),
        node,
        shared,
        lease,
        cfg.limits,
        cfg.clock,
    ));
    // Downtime: if no node was alive lately, running clocks are not charged for the time the
    // service was down (the time used before the stop stays charged).
    let now = hub.now();
    let last_alive = store
        .get_value(ALIVE_KEY)
        .await
        .map_err(anyhow::Error::msg)?
        .and_then(|v| v.parse::<i64>().ok());
    let down_since = last_alive.filter(|t| now - t > 3 * ALIVE_EVERY.as_millis() as i64);
    let n = hub.resume_all(down_since).await?;
    tracing::info!(
        "{} store: resumed {n} live games (downtime not charged: {} ms)",
        store.backend(),
        down_since.map_or(0, |t| now - t)
    );
    let listener = tokio::net::TcpListener::bind(cfg.addr).await?;
    let addr = listener.local_addr()?;
    let rates = limits::rate_limit_layers(&hub.bounds.limits);
    let app = routes::router(hub.clone(), &rates);
    let mut stopping = hub.shutdown.subscribe();
    let mut tasks = vec![tokio::spawn(async move {
        let svc = app.into_make_service_with_connect_info::<SocketAddr>();
        let stop = async move {
            let _ = stopping.wait_for(|s| *s).await;
        };
        if let Err(e) = axum::serve(listener, svc)
            .with_graceful_shutdown(stop)
            .await
        {
            tracing::error!("server error: {e}");
        }
    })];
    tasks.push(rates.spawn_cleanup(Duration::from_secs(60)));
    tasks.push(tokio::spawn(players::seeks::upkeep(hub.clone())));
    let alive = hub.clone();
    tasks.push(tokio::spawn(async move {
        let mut tick = tokio::time::interval(ALIVE_EVERY);
        loop {
            tick.tick().await;
            let now = alive.now().to_string();
            if let Err(e) = alive.store.set_value(ALIVE_KEY, &now).await {
                tracing::warn!("cannot record that this node is alive: {e}");
            }
        }
    }));
    if let Some(notices) = store.subscribe().await.map_err(anyhow::Error::msg)? {
        tasks.push(tokio::spawn(hub.clone().follow(notices)));
    }
    if shared {
        tasks.push(tokio::spawn(hub.clone().pick_up_jobs()));
    }
    tracing::info!("listening on http://{addr} as {}", hub.node);
    Ok(Server {
        addr,
        state: hub,
        tasks,
    })
}

/// Runs the server until Ctrl-C or SIGTERM (the `doublemove serve` command).
pub async fn serve(addr: &str, cfg: Config) -> Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=info".into()),
        )
        .try_init();
    let addr: SocketAddr = tokio::net::lookup_host(addr)
        .await?
        .next()
        .ok_or_else(|| anyhow::anyhow!("cannot resolve {addr}"))?;
    let server = start(Config { addr, ..cfg }).await?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
    server.stop().await;
    Ok(())
}
