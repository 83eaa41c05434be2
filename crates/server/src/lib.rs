//! The doublemove game server: games of every variant against people or the engine over HTTP, a
//! WebSocket and an NDJSON stream per game, server-side clocks, takebacks and offers, an SQLite
//! archive with PGN export and import, and an analysis WebSocket. See docs/api.md.

pub mod analysis;
pub mod engine_pool;
pub mod error;
pub mod limits;
pub mod model;
pub mod routes;
pub mod store;
pub mod web;

use crate::error::ApiError;
use crate::model::{Live, Play};
use crate::store::legacy::Store;
use anyhow::Result;
use engine::levels::Level;
use engine::search::{Limits, Searcher};
use engine::timeman::{allocate, Clock};
use rules::game::turn_uci;
use rules::Game;
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, Mutex};
use tokio::task::JoinHandle;

/// One message to the watchers of a game: the state JSON and whether the game is over.
#[derive(Clone)]
pub struct Event {
    pub json: Arc<String>,
    pub over: bool,
}

/// A game in memory with its watchers.
pub struct Slot {
    pub live: Mutex<Live>,
    pub tx: broadcast::Sender<Event>,
    /// The generation the engine is thinking about (u64::MAX: none).
    engine_gen: AtomicU64,
}

pub struct AppState {
    pub store: Store,
    /// Limits, the engine pool and the per-client counters.
    pub bounds: limits::Bounds,
    games: RwLock<HashMap<String, Arc<Slot>>>,
}

pub type Shared = Arc<AppState>;

impl AppState {
    pub fn slot(&self, id: &str) -> Result<Arc<Slot>, ApiError> {
        self.games
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no game with id '{id}'")))
    }

    fn all_slots(&self) -> Vec<Arc<Slot>> {
        self.games
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Adds a new game after storing it.
    pub async fn insert(self: &Arc<Self>, live: Live) -> Result<Arc<Slot>, ApiError> {
        self.store
            .save(&live.data)
            .await
            .map_err(ApiError::internal)?;
        let id = live.data.id.clone();
        let slot = new_slot(live);
        self.games
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, slot.clone());
        kick_engine(self.clone(), slot.clone()).await;
        Ok(slot)
    }
}

fn new_slot(live: Live) -> Arc<Slot> {
    let (tx, _) = broadcast::channel(64);
    Arc::new(Slot {
        live: Mutex::new(live),
        tx,
        engine_gen: AtomicU64::new(u64::MAX),
    })
}

/// Applies a change to a game: on a copy, stored, then made current and sent to the watchers. A
/// change that cannot be stored is not made. Returns the new state (or the change's error).
pub async fn mutate<F>(state: &Shared, slot: &Arc<Slot>, f: F) -> Result<Value, ApiError>
where
    F: FnOnce(&mut Live) -> Result<(), ApiError>,
{
    let mut live = slot.live.lock().await;
    let mut next = live.clone();
    let gen = next.generation;
    let r = f(&mut next);
    if next.generation != gen {
        state
            .store
            .save(&next.data)
            .await
            .map_err(ApiError::internal)?;
        *live = next;
        broadcast(slot, &live);
    }
    r?;
    let v = live.state("gameState");
    let engine = live.engine_to_move();
    drop(live);
    if engine {
        kick_engine(state.clone(), slot.clone()).await;
    }
    Ok(v)
}

fn broadcast(slot: &Slot, live: &Live) {
    let over = !matches!(
        live.data.status,
        model::Status::Started | model::Status::Waiting
    );
    let json = Arc::new(live.state("gameState").to_string());
    let _ = slot.tx.send(Event { json, over });
}

/// Starts the engine's reply on a blocking thread if it is the engine's turn. (Boxed: the engine's
/// task calls [`mutate`], which calls this again.)
fn kick_engine(
    state: Shared,
    slot: Arc<Slot>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(kick_engine_inner(state, slot))
}

async fn kick_engine_inner(state: Shared, slot: Arc<Slot>) {
    let live = slot.live.lock().await;
    if !live.engine_to_move() || live.game.outcome().is_some() {
        return;
    }
    let gen = live.generation;
    if slot.engine_gen.swap(gen, Ordering::SeqCst) == gen {
        return; // already thinking about this state
    }
    let game = live.game.clone();
    let level = live.data.engine_level.unwrap_or(8);
    let color = game.position().turn();
    let clock = live
        .clock_now()
        .zip(live.data.clock.as_ref())
        .filter(|_| live.running_clock().is_some())
        .map(|(now, c)| (now[color.index()], c.increment_ms));
    drop(live);
    tokio::spawn(async move {
        let seed = rand::random::<u64>();
        let res = tokio::task::spawn_blocking(move || engine_turn(&game, level, clock, seed)).await;
        let Ok(Some(moves)) = res else {
            tracing::warn!("the engine found no turn");
            return;
        };
        let text = turn_uci(&moves);
        let r = mutate(&state, &slot, |live| {
            if live.generation != gen {
                return Ok(()); // the game changed meanwhile (takeback, resignation, time)
            }
            live.play(color, &Play::Turn(text.clone()))
        })
        .await;
        if let Err(e) = r {
            tracing::warn!("engine turn {text} refused: {e}");
        }
    });
}

/// The engine's turn: levels 1–2 choose directly; others search within a budget from the clock (or a
/// fixed time without one), capped by the level.
pub fn engine_turn(
    game: &Game,
    level: u8,
    clock: Option<(i64, i64)>,
    seed: u64,
) -> Option<Vec<rules::Move>> {
    let lvl = Level(level.clamp(1, engine::levels::MAX_LEVEL));
    if let Some(choose) = lvl.chooser() {
        return choose(game, seed);
    }
    let mut limits = Limits {
        multipv: 1,
        ..Limits::default()
    };
    let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
    let (soft, hard) = match clock {
        Some((left, inc)) => allocate(
            &Clock {
                time: Some(ms(left)),
                increment: ms(inc),
                moves_to_go: None,
            },
            Duration::from_millis(100),
        ),
        None => (Duration::from_millis(1000), Duration::from_millis(3000)),
    };
    limits.soft_time = Some(soft.min(Duration::from_secs(10)));
    limits.hard_time = Some(hard.min(Duration::from_secs(20)));
    lvl.restrict(&mut limits);
    let mut searcher = Searcher::new(16);
    searcher.search(game, &limits, &mut |_| {}).map(|r| r.turn)
}

/// Ends games whose side to move has run out of time, even when nobody moves.
async fn flag_watch(state: Shared) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
        for slot in state.all_slots() {
            let due = {
                let live = slot.live.lock().await;
                match (live.running_clock(), live.clock_now()) {
                    (Some(c), Some(r)) => r[c.index()] <= 0,
                    _ => false,
                }
            };
            if due {
                let _ = mutate(&state, &slot, |live| {
                    live.check_flag();
                    Ok(())
                })
                .await;
            }
        }
    }
}

pub struct Config {
    pub addr: SocketAddr,
    pub db: PathBuf,
}

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    pub state: Shared,
    tasks: Vec<JoinHandle<()>>,
}

impl Server {
    /// Stops serving and closes the database.
    pub async fn stop(self) {
        for t in &self.tasks {
            t.abort();
        }
        for t in self.tasks {
            let _ = t.await;
        }
        self.state.store.close().await;
    }
}

/// Opens the database, loads every game and starts listening.
pub async fn start(cfg: Config) -> Result<Server> {
    let store = Store::open(&cfg.db).await?;
    let mut games = HashMap::new();
    for data in store.load_all().await? {
        let id = data.id.clone();
        match Live::from_data(data) {
            Ok(live) => {
                games.insert(id, new_slot(live));
            }
            Err(e) => tracing::error!("game {id} could not be loaded: {e}"),
        }
    }
    tracing::info!("loaded {} games from {}", games.len(), cfg.db.display());
    let state: Shared = Arc::new(AppState {
        store,
        bounds: limits::Bounds::new(limits::ServerLimits::default()),
        games: RwLock::new(games),
    });
    for slot in state.all_slots() {
        kick_engine(state.clone(), slot).await;
    }
    let listener = tokio::net::TcpListener::bind(cfg.addr).await?;
    let addr = listener.local_addr()?;
    let app = routes::router(state.clone());
    let serve = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("server error: {e}");
        }
    });
    let watch = tokio::spawn(flag_watch(state.clone()));
    tracing::info!("listening on http://{addr}");
    Ok(Server {
        addr,
        state,
        tasks: vec![serve, watch],
    })
}

/// Runs the server until Ctrl-C (the `doublemove serve` command).
pub async fn serve(addr: &str, db: &Path) -> Result<()> {
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
    let server = start(Config {
        addr,
        db: db.to_path_buf(),
    })
    .await?;
    tokio::signal::ctrl_c().await?;
    tracing::info!("shutting down");
    server.stop().await;
    Ok(())
}
