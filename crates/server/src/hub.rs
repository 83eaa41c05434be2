//! The hub: the live games this node serves, and the one path by which anything changes a game
//! ([`Hub::act`]): apply the action on a copy, store the change (versioned, so that two nodes never
//! both change one position), make it current, tell the watchers, re-arm the game's flag timer and
//! start the engine if it is to move. Ended games leave memory; their archive stays in the store.
//! On PostgreSQL, changes made by other nodes arrive as notices and are re-read here.

use crate::engine_pool::{ClientKey, GameClock};
use crate::error::ApiError;
use crate::game::{Action, Actor, GameState, Live, StateKind};
use crate::limits::ClientGuard;
use crate::store::{Notice, Store, StoreError};
use rules::game::turn_uci;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, Mutex};
use tokio::task::AbortHandle;

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The server's clock: the system time, shifted by an offset that tests move forward to see
/// deadlines pass (clones share the offset).
#[derive(Clone, Debug, Default)]
pub struct TimeSource(Arc<AtomicI64>);

impl TimeSource {
    /// Epoch ms.
    pub fn now(&self) -> i64 {
        now_ms() + self.0.load(Ordering::Relaxed)
    }
    /// Moves this clock forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::Relaxed);
    }
}

/// One message to the watchers of a game: the state JSON and whether the game is over.
#[derive(Clone)]
pub struct Event {
    pub json: Arc<str>,
    pub over: bool,
    /// A chat line of this room (only sockets that read the room get it); `None`: a state.
    pub room: Option<crate::game::ChatRoom>,
}

/// A game in memory with its watchers.
pub struct Slot {
    pub id: String,
    pub live: Mutex<Live>,
    pub tx: broadcast::Sender<Event>,
    /// The game version the engine is thinking about on this node (0: none).
    engine_version: AtomicI64,
    /// The game's flag timer (a task sleeping until the running clock's flag time).
    timer: StdMutex<Option<AbortHandle>>,
    /// Who created it (on this node), for the engine pool's fair queue; and its place among that
    /// client's live engine games, given back when the game leaves memory.
    owner: StdMutex<Option<(ClientKey, Option<ClientGuard>)>>,
}

impl Slot {
    fn new(live: Live) -> Arc<Slot> {
        let (tx, _) = broadcast::channel(16);
        Arc::new(Slot {
            id: live.id.clone(),
            live: Mutex::new(live),
            tx,
            engine_version: AtomicI64::new(0),
            timer: StdMutex::new(None),
            owner: StdMutex::new(None),
        })
    }
}

impl Slot {
    /// This node no longer thinks about game version `version` (unless a newer think started).
    fn done_thinking(&self, version: i64) {
        let _ =
            self.engine_version
                .compare_exchange(version, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(t) = self.timer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.abort();
        }
    }
}

/// The node's shared state.
pub struct Hub {
    pub store: Arc<dyn Store>,
    /// This node's name (leases of engine turns and flag falls).
    pub node: String,
    /// Several nodes may share the store (PostgreSQL): claim jobs before doing them.
    pub shared_store: bool,
    /// How long a claimed job (engine turn, flag fall) stays this node's before another node may
    /// take it over.
    pub lease_ms: i64,
    games: RwLock<HashMap<String, Arc<Slot>>>,
    /// Set when the node shuts down: sockets close with a reason, streams end.
    pub shutdown: tokio::sync::watch::Sender<bool>,
    /// The limits, the engine pool and the per-client counters.
    pub bounds: crate::limits::Bounds,
    /// The server's clock.
    pub time: TimeSource,
    /// Accounts, seeks, challenges, chat: their limits and live channels.
    pub players: crate::players::Players,
}

pub type Shared = Arc<Hub>;

/// How long a node holds an engine turn or a flag fall before another node may take it over, by
/// default: longer than the engine's longest think.
pub const LEASE_MS: i64 = 15_000;

/// How long an ended game stays in memory after its end.
pub const ENDED_KEPT: Duration = Duration::from_secs(600);

impl Hub {
    pub fn new(
        store: Arc<dyn Store>,
        node: String,
        shared_store: bool,
        lease_ms: i64,
        limits: crate::limits::ServerLimits,
        time: TimeSource,
    ) -> Hub {
        Hub {
            time,
            players: crate::players::Players::new(),
            bounds: crate::limits::Bounds::new(limits),
            store,
            node,
            shared_store,
            lease_ms,
            games: RwLock::new(HashMap::new()),
            shutdown: tokio::sync::watch::channel(false).0,
        }
    }

    /// Now, on the server's clock (epoch ms).
    pub fn now(&self) -> i64 {
        self.time.now()
    }

    pub(crate) fn cached(&self, id: &str) -> Option<Arc<Slot>> {
        self.games
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// Number of games in memory.
    pub fn live_count(&self) -> usize {
        self.games.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn all_slots(&self) -> Vec<Arc<Slot>> {
        self.games
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Puts a live game in memory (once: a concurrent loader's slot wins).
    fn adopt(self: &Arc<Self>, live: Live) -> Arc<Slot> {
        let mut games = self.games.write().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = games.get(&live.id) {
            return s.clone();
        }
        let slot = Slot::new(live);
        games.insert(slot.id.clone(), slot.clone());
        slot
    }

    /// An ended game stays in memory a while (its players may still chat, offer a rematch),
    /// then leaves; its archive stays in the store.
    fn evict_later(self: &Arc<Self>, slot: &Arc<Slot>) {
        let hub = Arc::downgrade(self);
        let weak = Arc::downgrade(slot);
        tokio::spawn(async move {
            tokio::time::sleep(ENDED_KEPT).await;
            if let (Some(hub), Some(slot)) = (hub.upgrade(), weak.upgrade()) {
                if !slot.live.lock().await.is_live() {
                    hub.evict(&slot.id);
                }
            }
        });
    }

    fn evict(&self, id: &str) {
        self.games
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// The game `id`: from memory, else from the store (a live game is kept in memory from then
    /// on; an ended one is served from a slot of its own and dropped after).
    pub async fn slot(self: &Arc<Self>, id: &str) -> Result<Arc<Slot>, ApiError> {
        if let Some(s) = self.cached(id) {
            return Ok(s);
        }
        if id.len() > 64 {
            return Err(ApiError::not_found(format!("no game with id '{id}'")));
        }
        let stored = self.store.load(id).await?;
        let Some(stored) = stored else {
            return Err(ApiError::not_found(format!("no game with id '{id}'")));
        };
        let live = Live::from_stored(stored).map_err(ApiError::internal)?;
        if live.is_live() {
            let slot = self.adopt(live);
            self.arm_now(&slot).await;
            self.kick_engine(slot.clone()).await;
            Ok(slot)
        } else {
            Ok(Slot::new(live))
        }
    }

    /// Stores a new game and starts serving it. `owner`: the creating client (and, for a game
    /// against the engine, its place among that client's live engine games).
    pub async fn create(
        self: &Arc<Self>,
        live: Live,
        owner: (ClientKey, Option<ClientGuard>),
    ) -> Result<Arc<Slot>, ApiError> {
        self.store.create(&live.to_stored()).await?;
        let slot = self.adopt(live);
        *slot.owner.lock().unwrap_or_else(|e| e.into_inner()) = Some(owner);
        self.arm_now(&slot).await;
        self.kick_engine(slot.clone()).await;
        Ok(slot)
    }

    /// Applies `action` by `by` to the game: stored before it is made current and told to anyone.
    /// Returns the new state, or why the action was refused (a refused action may still have
    /// stored a flag fall found on the way).
    pub async fn act(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        by: Actor,
        action: &Action,
    ) -> Result<GameState, ApiError> {
        let mut live = slot.live.lock().await;
        let was_live = live.is_live();
        let mut tries = 0;
        let (result, changed) = loop {
            let now = self.now();
            let mut next = live.clone();
            let r = next.apply(by, action, now);
            if next.version == live.version {
                // Refused. With several nodes, this node's copy may be behind (the notice of
                // another node's change not here yet): judge again on the stored game if it moved.
                if r.is_err() && self.shared_store && tries < 3 {
                    if let Some(s) = self.store.load(&slot.id).await? {
                        if s.row.version > live.version {
                            *live = Live::from_stored(s).map_err(ApiError::internal)?;
                            tries += 1;
                            continue;
                        }
                    }
                }
                break (r, false);
            }
            let mut ratings = Vec::new();
            if crate::players::rating::counts(&live, &next) {
                ratings = crate::players::rating::settle(&*self.store, &mut next, now).await?;
            } else if live.is_live() && !next.is_live() {
                // Ended before both sides completed a turn: it was never rated.
                next.meta.rated = false;
            }
            let mut change = next.change_since(&live);
            change.ratings = ratings;
            match self.store.apply(&change).await {
                Ok(()) => {
                    *live = next;
                    break (r, true);
                }
                // Another node changed the game: read it again and apply the action to that.
                Err(StoreError::Conflict) if tries < 3 => {
                    tries += 1;
                    match self.store.load(&slot.id).await? {
                        Some(s) => *live = Live::from_stored(s).map_err(ApiError::internal)?,
                        None => return Err(ApiError::not_found("the game is gone")),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        };
        let state = live.state(StateKind::GameState, self.now());
        if changed || tries > 0 {
            self.after_change(slot, &live, &state);
        }
        // The players of a game that just ended are told (their event streams).
        let ended = was_live && live.status == crate::store::Status::Finished;
        let users: Vec<String> = if ended {
            live.meta.players.iter().flatten().map(|p| p.id()).collect()
        } else {
            Vec::new()
        };
        let engine = live.engine_to_move();
        let flag_at = live.flag_at();
        drop(live);
        if changed || tries > 0 {
            self.arm(slot, flag_at);
        }
        if engine {
            self.kick_engine(slot.clone()).await;
        }
        for u in &users {
            crate::players::seeks::tell_finish(self, u, &slot.id).await;
        }
        result?;
        Ok(state)
    }

    /// Tells the watchers; an ended game leaves memory (after a while).
    fn after_change(self: &Arc<Self>, slot: &Arc<Slot>, live: &Live, state: &GameState) {
        let json: Arc<str> = serde_json::to_string(state)
            .expect("states serialise")
            .into();
        let over = !live.is_live();
        let _ = slot.tx.send(Event {
            json,
            over,
            room: None,
        });
        if over {
            self.evict_later(slot);
            // The creator's place among its live engine games is free again.
            if let Some(o) = slot
                .owner
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
            {
                o.1 = None;
            }
        }
    }

    /// (Re-)arms the game's flag timer from its current state.
    async fn arm_now(self: &Arc<Self>, slot: &Arc<Slot>) {
        let flag_at = slot.live.lock().await.flag_at();
        self.arm(slot, flag_at);
    }

    /// (Re-)arms the game's flag timer: a task that sleeps until the running clock's flag time.
    fn arm(self: &Arc<Self>, slot: &Arc<Slot>, flag_at: Option<i64>) {
        let mut timer = slot.timer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = timer.take() {
            t.abort();
        }
        let Some(at) = flag_at else { return };
        let hub = Arc::downgrade(self);
        let weak = Arc::downgrade(slot);
        let wait = (at - self.now()).max(0) as u64;
        let task = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(wait + 1)).await;
            let (Some(hub), Some(slot)) = (hub.upgrade(), weak.upgrade()) else {
                return;
            };
            // Detach from the slot first: `act` re-arms (and would abort this very task).
            slot.timer.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Err(e) = hub.act(&slot, Actor::Server, &Action::Flag).await {
                tracing::warn!(game = %slot.id, "flag check failed: {e}");
            }
        });
        *timer = Some(task.abort_handle());
    }

    /// Starts the engine's reply on a blocking thread if it is the engine's turn (and, with a shared
    /// store, this node holds the job's lease).
    pub fn kick_engine(
        self: &Arc<Self>,
        slot: Arc<Slot>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let live = slot.live.lock().await;
            if !live.engine_to_move() {
                return;
            }
            let version = live.version;
            if slot.engine_version.swap(version, Ordering::SeqCst) == version {
                return; // already thinking about this state
            }
            let game = live.game.clone();
            let level = live.engine().map_or(8, |e| e.level);
            let color = game.position().turn();
            let now = self.now();
            let clock = live.meta.clock.as_ref().and_then(|c| {
                (c.running_side() == Some(color)).then(|| GameClock {
                    remaining_ms: c.remaining(now)[color.index()],
                    increment_ms: c.increment_ms,
                    base_ms: c.limit_ms,
                })
            });
            drop(live);
            if self.shared_store {
                match self
                    .store
                    .claim(&slot.id, &self.node, now, now + self.lease_ms)
                    .await
                {
                    Ok(true) => {}
                    other => {
                        if let Err(e) = other {
                            tracing::warn!(game = %slot.id, "cannot claim the engine turn: {e}");
                        }
                        // Another node thinks (or the store failed): not thinking here, so a later
                        // claim of this job may think.
                        slot.done_thinking(version);
                        return;
                    }
                }
            }
            let hub = self.clone();
            let key = slot
                .owner
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map_or_else(
                    || ClientKey::account(format!("game:{}", slot.id)),
                    |o| o.0.clone(),
                );
            tokio::spawn(async move {
                let seed = rand::random::<u64>();
                let pool = hub.bounds.pool.clone();
                let res = pool.engine_turn(key, game, level, clock, seed).await;
                match res {
                    Ok(Some(moves)) => {
                        let turn = turn_uci(&moves);
                        let action = Action::EngineTurn { turn, version };
                        if let Err(e) = hub.act(&slot, Actor::Server, &action).await {
                            tracing::warn!(game = %slot.id, "engine turn refused: {e}");
                        }
                    }
                    Ok(None) => tracing::warn!(game = %slot.id, "the engine found no turn"),
                    Err(e) => tracing::warn!(game = %slot.id, "the engine pool refused: {e:?}"),
                }
                // Done thinking about this version: a later claim of the same job may think again.
                slot.done_thinking(version);
            });
        })
    }

    /// Loads the live games at start-up and starts their timers and engine turns. `down_since`:
    /// when the service went down, if it was down; running clocks are not charged for the downtime
    /// (stored as a change of each such game).
    pub async fn resume_all(self: &Arc<Self>, down_since: Option<i64>) -> anyhow::Result<usize> {
        let now = self.now();
        let stored = self.store.load_live().await.map_err(anyhow::Error::msg)?;
        let n = stored.len();
        for s in stored {
            let id = s.row.id.clone();
            match Live::from_stored(s) {
                Ok(mut live) => {
                    if let Some(down) = down_since {
                        let before = live.clone();
                        if let Some(c) = live.meta.clock.as_mut().filter(|c| c.running.is_some()) {
                            c.skip_downtime(down, now);
                            live.version += 1;
                            if let Err(e) = self.store.apply(&live.change_since(&before)).await {
                                tracing::warn!(game = %id, "downtime not forgiven: {e}");
                                live = before;
                            }
                        }
                    }
                    self.adopt(live);
                }
                Err(e) => tracing::error!(game = %id, "could not be loaded: {e}"),
            }
        }
        for slot in self.all_slots() {
            self.arm_now(&slot).await;
            self.kick_engine(slot).await;
        }
        Ok(n)
    }

    /// Follows the changes other nodes make (PostgreSQL): a game this node serves is re-read and
    /// its watchers told; after a lost connection, every served game is re-read.
    pub async fn follow(self: Arc<Self>, mut notices: tokio::sync::mpsc::Receiver<Notice>) {
        while let Some(n) = notices.recv().await {
            match n {
                Notice::Changed { id, version } => {
                    // Each re-read on its own task: one slow game (or a slow query) must not hold
                    // up the notices of all the others. Re-reads of one game may overlap; each
                    // takes the stored state only if it is newer.
                    if let Some(slot) = self.cached(&id) {
                        let hub = self.clone();
                        tokio::spawn(async move {
                            if slot.live.lock().await.version < version {
                                hub.reload(&slot).await;
                            }
                        });
                    }
                }
                Notice::Event { topic, json } => {
                    crate::players::events::received(&self, &topic, json);
                }
                Notice::Resync => {
                    for slot in self.all_slots() {
                        self.reload(&slot).await;
                    }
                }
            }
        }
    }

    /// Re-reads a game from the store and tells its watchers if it changed.
    async fn reload(self: &Arc<Self>, slot: &Arc<Slot>) {
        let stored = match self.store.load(&slot.id).await {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(game = %slot.id, "re-reading failed: {e}");
                return;
            }
        };
        let mut live = slot.live.lock().await;
        if stored.row.version <= live.version {
            return;
        }
        match live.refreshed(stored) {
            Ok(fresh) => *live = fresh,
            Err(e) => {
                tracing::error!(game = %slot.id, "a stored game cannot be rebuilt: {e}");
                return;
            }
        }
        let state = live.state(StateKind::GameState, self.now());
        self.after_change(slot, &live, &state);
        let flag_at = live.flag_at();
        drop(live);
        self.arm(slot, flag_at);
        self.kick_engine(slot.clone()).await;
    }

    /// Picks up due jobs that no live node holds (flag falls and engine turns of games whose node
    /// died): with a shared store, every second.
    pub async fn pick_up_jobs(self: Arc<Self>) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            let now = self.now();
            let ids = match self
                .store
                .claim_due(&self.node, now, now + self.lease_ms, 64)
                .await
            {
                Ok(ids) => ids,
                Err(e) => {
                    tracing::warn!("claiming due jobs failed: {e}");
                    continue;
                }
            };
            for id in ids {
                let Ok(slot) = self.slot(&id).await else {
                    continue;
                };
                self.reload(&slot).await;
                let _ = self.act(&slot, Actor::Server, &Action::Flag).await;
                // The lease is ours: think, unless this node is thinking about it already.
                self.kick_engine(slot).await;
            }
        }
    }

    /// Closes every game's watchers (graceful shutdown): their streams end.
    pub fn close_all(&self) {
        for slot in self.all_slots() {
            if let Some(t) = slot.timer.lock().unwrap_or_else(|e| e.into_inner()).take() {
                t.abort();
            }
        }
        self.games
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
