//! One pool of engine threads for the whole server: engine turns in games and analysis searches run
//! here, so the engine never takes more cores than configured however many clients ask. Jobs wait in a
//! bounded queue per client and are taken fairly across clients, so one client with many jobs cannot
//! starve another with one. Also the engine's turn choice for server games with a clock-aware budget.

use engine::levels::Level;
use engine::search::{Limits, Searcher};
use rules::Game;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;

/// Who a job is for: fairness and per-client caps count by this key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientKey {
    /// An anonymous client by address (see [`ClientKey::ip`]).
    Ip(IpAddr),
    /// A signed-in account (for later: several addresses, one budget).
    Account(String),
    /// One connection whose peer address is unknown (a router served without connect info): it
    /// counts alone, so that such a server does not put all its clients under one client's caps.
    Connection(u64),
}

impl ClientKey {
    /// The key of a peer address. An IPv4-mapped IPv6 address counts as the IPv4 address, and an IPv6
    /// address by its /64 network: one subscriber usually holds a whole /64, so counting single IPv6
    /// addresses would let one client take 2^64 keys.
    pub fn ip(ip: IpAddr) -> ClientKey {
        match ip {
            IpAddr::V4(_) => ClientKey::Ip(ip),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientKey::Ip(IpAddr::V4(v4)),
                None => {
                    let bits = u128::from(v6) & !((1u128 << 64) - 1);
                    ClientKey::Ip(IpAddr::V6(bits.into()))
                }
            },
        }
    }

    pub fn account(id: impl Into<String>) -> ClientKey {
        ClientKey::Account(id.into())
    }

    /// A key of its own for a connection without a known peer address.
    pub fn connection() -> ClientKey {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ClientKey::Connection(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl From<IpAddr> for ClientKey {
    fn from(ip: IpAddr) -> Self {
        ClientKey::ip(ip)
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientKey::Ip(ip) => write!(f, "{ip}"),
            ClientKey::Account(a) => write!(f, "account {a}"),
            ClientKey::Connection(n) => write!(f, "connection #{n}"),
        }
    }
}

/// Why a job gave no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The queue (all clients', or this client's share) is full: answer 429/503 and retry later.
    Busy,
    /// Stopped before it began (its handle was stopped or its future dropped).
    Cancelled,
    /// The job panicked; the worker survived and goes on with a fresh searcher.
    Panicked,
    /// The pool is shutting down.
    ShutDown,
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PoolError::Busy => "the engine is busy: too many searches are waiting, try again later",
            PoolError::Cancelled => "the search was cancelled",
            PoolError::Panicked => "the search failed",
            PoolError::ShutDown => "the server is shutting down",
        })
    }
}

impl std::error::Error for PoolError {}

/// Sizes of the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The engine-thread budget: search threads of all running jobs together.
    pub threads: usize,
    /// Search threads per job (Lazy SMP); the pool runs `threads / search_threads` jobs at once
    /// (at least one), so the budget holds whatever the split.
    pub search_threads: usize,
    /// Jobs waiting (not running) over all clients; one more is refused with [`PoolError::Busy`].
    pub max_queued: usize,
    /// Jobs waiting for one client; one more is refused with [`PoolError::Busy`].
    pub max_queued_per_client: usize,
    /// Transposition table of each worker's searcher, in MB. Searchers belong to the workers, not to
    /// sockets or games, so memory is workers × this however many clients there are.
    pub hash_mb: usize,
}

impl PoolConfig {
    /// Available cores − 1 (one is left for the HTTP side and the database), at least 1.
    pub fn default_threads() -> usize {
        std::thread::available_parallelism()
            .map(|n| n.get().saturating_sub(1))
            .unwrap_or(1)
            .max(1)
    }

    /// Jobs searched at once: the budget divided by the search threads of each (at least one).
    pub fn workers(&self) -> usize {
        (self.threads / self.search_threads.max(1)).max(1)
    }
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            threads: Self::default_threads(),
            search_threads: 1,
            max_queued: 256,
            max_queued_per_client: 16,
            hash_mb: 16,
        }
    }
}

/// What the pool is doing now (for /readyz and metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub threads: usize,
    /// Jobs that can run at once (see [`PoolConfig::workers`]).
    pub workers: usize,
    /// Jobs waiting for a worker.
    pub queued: usize,
    /// Jobs being searched.
    pub running: usize,
    /// Clients with at least one job waiting or running.
    pub clients: usize,
}

/// A worker's view handed to each job: its searcher (reused from job to job; its stop flag is the
/// job's cancel flag) and who the job is for.
pub struct Job {
    searcher: Searcher,
    stop: Arc<AtomicBool>,
    key: Option<ClientKey>,
    pool: std::sync::Weak<Inner>,
}

impl Job {
    fn new(cfg: &PoolConfig, pool: std::sync::Weak<Inner>) -> Job {
        let searcher = Searcher::with_threads(cfg.hash_mb, cfg.search_threads);
        let stop = searcher.stop_flag();
        Job {
            searcher,
            stop,
            key: None,
            pool,
        }
    }

    /// A probe of how many jobs wait for a worker now, usable inside a running search (from its
    /// info callback): a long job can end early when others wait, so one client's long analysis does
    /// not hold a core while everyone else queues.
    pub fn queue_probe(&self) -> impl Fn() -> usize + Send + 'static {
        let pool = self.pool.clone();
        move || pool.upgrade().map_or(0, |p| p.lock().queued)
    }

    /// The worker's searcher. A running search stops when the job is cancelled.
    pub fn searcher(&mut self) -> &mut Searcher {
        &mut self.searcher
    }

    /// Set when the job is cancelled; long jobs that do not search can poll it.
    pub fn stop_flag(&self) -> &Arc<AtomicBool> {
        &self.stop
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The client the job runs for.
    pub fn client(&self) -> &ClientKey {
        self.key.as_ref().expect("set while a job runs")
    }
}

type Task = Box<dyn FnOnce(&mut Job) + Send>;

struct Queued {
    id: u64,
    task: Task,
}

#[derive(Default)]
struct ClientState {
    queue: VecDeque<Queued>,
    running: usize,
    /// When a worker last took one of this client's jobs (pool tick); 0: never.
    last_served: u64,
}

#[derive(Default)]
struct State {
    clients: HashMap<ClientKey, ClientState>,
    /// Stop flags of running jobs by id (the flag of the worker that runs it).
    running: HashMap<u64, Arc<AtomicBool>>,
    queued: usize,
    next_id: u64,
    tick: u64,
    shutdown: bool,
}

impl State {
    /// The fair choice: the client with the fewest running jobs, then the one served longest ago,
    /// then the one whose oldest waiting job is oldest.
    fn pick(&mut self) -> Option<(ClientKey, Queued)> {
        let key = self
            .clients
            .iter()
            .filter_map(|(k, c)| {
                c.queue
                    .front()
                    .map(|q| ((c.running, c.last_served, q.id), k))
            })
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, k)| k.clone())?;
        self.tick += 1;
        let c = self.clients.get_mut(&key)?;
        let job = c.queue.pop_front()?;
        c.running += 1;
        c.last_served = self.tick;
        self.queued -= 1;
        Some((key, job))
    }

    fn finished(&mut self, key: &ClientKey, id: u64) {
        self.running.remove(&id);
        if let Some(c) = self.clients.get_mut(key) {
            c.running -= 1;
            if c.running == 0 && c.queue.is_empty() {
                self.clients.remove(key);
            }
        }
    }
}

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    cfg: PoolConfig,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cancels job `id` of `key`: a waiting job leaves the queue (its future then resolves to
    /// [`PoolError::Cancelled`]); a running one has its stop flag set and returns what it has.
    fn cancel(&self, key: &ClientKey, id: u64) {
        let mut st = self.lock();
        if let Some(flag) = st.running.get(&id) {
            flag.store(true, Ordering::Relaxed);
            return;
        }
        let Some(c) = st.clients.get_mut(key) else {
            return;
        };
        let Some(i) = c.queue.iter().position(|q| q.id == id) else {
            return;
        };
        let removed = c.queue.remove(i);
        if c.queue.is_empty() && c.running == 0 {
            st.clients.remove(key);
        }
        st.queued -= 1;
        drop(st);
        drop(removed); // drops the result sender outside the lock
    }

    fn worker(self: Arc<Self>) {
        let mut job = Job::new(&self.cfg, Arc::downgrade(&self));
        loop {
            let (key, queued) = {
                let mut st = self.lock();
                loop {
                    if st.shutdown {
                        return;
                    }
                    if let Some(next) = st.pick() {
                        // Reset under the lock: a cancel can only find the job running after this.
                        job.stop.store(false, Ordering::Relaxed);
                        st.running.insert(next.1.id, job.stop.clone());
                        break next;
                    }
                    st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            job.key = Some(key.clone());
            let panicked = catch_unwind(AssertUnwindSafe(|| (queued.task)(&mut job))).is_err();
            if panicked {
                // The searcher's tables may be half-updated: start afresh.
                job = Job::new(&self.cfg, Arc::downgrade(&self));
            }
            job.key = None;
            self.lock().finished(&key, queued.id);
        }
    }
}

/// The engine thread pool. Hold it in an `Arc`; dropping the last one stops the workers (running
/// searches are told to stop, waiting jobs are cancelled).
pub struct EnginePool {
    inner: Arc<Inner>,
}

impl EnginePool {
    /// A pool of `threads` workers (at least 1) with the other sizes at their defaults.
    pub fn new(threads: usize) -> EnginePool {
        EnginePool::with_config(PoolConfig {
            threads,
            ..PoolConfig::default()
        })
    }

    pub fn with_config(mut cfg: PoolConfig) -> EnginePool {
        cfg.threads = cfg.threads.max(1);
        cfg.search_threads = cfg.search_threads.clamp(1, cfg.threads);
        cfg.max_queued_per_client = cfg.max_queued_per_client.max(1);
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            cfg,
        });
        for i in 0..inner.cfg.workers() {
            let w = inner.clone();
            std::thread::Builder::new()
                .name(format!("engine-{i}"))
                .spawn(move || w.worker())
                .expect("spawn an engine worker thread");
        }
        EnginePool { inner }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.inner.cfg
    }

    pub fn threads(&self) -> usize {
        self.inner.cfg.threads
    }

    pub fn stats(&self) -> PoolStats {
        let st = self.inner.lock();
        PoolStats {
            threads: self.inner.cfg.threads,
            workers: self.inner.cfg.workers(),
            queued: st.queued,
            running: st.running.len(),
            clients: st.clients.len(),
        }
    }

    /// Queues `job` for `key` and returns its [`Ticket`] (a future of the result), or
    /// [`PoolError::Busy`] at once when the queue is full. Dropping the ticket cancels the job.
    pub fn submit<T, F>(&self, key: ClientKey, job: F) -> Result<Ticket<T>, PoolError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Job) -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let task: Task = Box::new(move |j: &mut Job| {
            let r = catch_unwind(AssertUnwindSafe(|| job(j))).map_err(|_| PoolError::Panicked);
            let _ = tx.send(r);
        });
        let mut st = self.inner.lock();
        if st.shutdown {
            return Err(PoolError::ShutDown);
        }
        let waiting = st.clients.get(&key).map_or(0, |c| c.queue.len());
        if st.queued >= self.inner.cfg.max_queued || waiting >= self.inner.cfg.max_queued_per_client
        {
            return Err(PoolError::Busy);
        }
        st.next_id += 1;
        let id = st.next_id;
        st.clients
            .entry(key.clone())
            .or_default()
            .queue
            .push_back(Queued { id, task });
        st.queued += 1;
        drop(st);
        self.inner.work.notify_one();
        Ok(Ticket {
            rx,
            stop: StopHandle {
                inner: Arc::downgrade(&self.inner),
                key,
                id,
            },
            done: false,
        })
    }

    /// Runs `job` for `key` on a worker and returns its result. Dropping the future cancels the job.
    pub async fn run<T, F>(&self, key: ClientKey, job: F) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Job) -> T + Send + 'static,
    {
        self.submit(key, job)?.await
    }

    /// The engine's turn in a server game (see [`engine_turn`]), searched on the pool for `key`.
    pub async fn engine_turn(
        &self,
        key: ClientKey,
        game: Game,
        level: u8,
        clock: Option<GameClock>,
        seed: u64,
    ) -> Result<Option<Vec<rules::Move>>, PoolError> {
        self.run(key, move |job| engine_turn(job, &game, level, clock, seed))
            .await
    }
}

impl Drop for EnginePool {
    fn drop(&mut self) {
        let dropped: Vec<Queued> = {
            let mut st = self.inner.lock();
            st.shutdown = true;
            for flag in st.running.values() {
                flag.store(true, Ordering::Relaxed);
            }
            st.queued = 0;
            st.clients
                .values_mut()
                .flat_map(|c| c.queue.drain(..))
                .collect()
        };
        drop(dropped);
        self.inner.work.notify_all();
    }
}

/// Stops one job: cancels it if it waits, sets its search's stop flag if it runs, nothing after.
#[derive(Clone)]
pub struct StopHandle {
    inner: std::sync::Weak<Inner>,
    key: ClientKey,
    id: u64,
}

impl StopHandle {
    pub fn stop(&self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.cancel(&self.key, self.id);
        }
    }
}

impl fmt::Debug for StopHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StopHandle({} #{})", self.key, self.id)
    }
}

/// A submitted job's result to come. Dropping it before the result came cancels the job.
pub struct Ticket<T> {
    rx: oneshot::Receiver<Result<T, PoolError>>,
    stop: StopHandle,
    done: bool,
}

impl<T> Ticket<T> {
    /// A handle that stops this job from elsewhere (a stopped running search still returns its best
    /// result so far).
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }
}

impl<T> Future for Ticket<T> {
    type Output = Result<T, PoolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = match Pin::new(&mut self.rx).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(r)) => r,
            // The task was dropped unrun: cancelled, or the pool shut down.
            Poll::Ready(Err(_)) => Err(match self.stop.inner.upgrade() {
                Some(i) if !i.lock().shutdown => PoolError::Cancelled,
                _ => PoolError::ShutDown,
            }),
        };
        self.done = true;
        Poll::Ready(r)
    }
}

impl<T> Drop for Ticket<T> {
    fn drop(&mut self) {
        if !self.done {
            self.stop.stop();
        }
    }
}

/// A game clock as the engine sees it when its turn begins, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameClock {
    /// The engine's time left now.
    pub remaining_ms: i64,
    pub increment_ms: i64,
    /// The game's initial time (its time control's base), which sets the pace.
    pub base_ms: i64,
}

/// Thinking time without a clock (correspondence or unlimited games): (soft, hard).
pub const UNTIMED_BUDGET: (Duration, Duration) =
    (Duration::from_millis(1000), Duration::from_millis(2000));

/// Kept back from the clock for the server's own work around a turn (storing it, broadcasting).
const OVERHEAD: Duration = Duration::from_millis(100);

/// The longest the engine thinks about one turn in any game: a core for at most this long, and well
/// inside the 15 s lease under which a node of a shared store holds an engine turn.
pub const MAX_TURN_TIME: Duration = Duration::from_secs(10);

/// The engine's thinking time for a turn as (soft, hard): do not start a new iteration after soft
/// (the search may stretch it up to about twice when its best move keeps changing), abort at hard.
///
/// It plays like a player with that clock, and never hogs a core:
/// * target = remaining/40 + increment (sudden death planned over 40 more turns);
/// * hard = min(2 × target, remaining/20, per-turn cap), the cap being base/60 (a 5-minute game
///   thinks at most 5 s a turn, a 1-minute game 1 s), at most 5 s below a 10-minute base and
///   [`MAX_TURN_TIME`] (10 s) in any game, at least 50 ms;
/// * soft = min(target, hard/2).
///
/// So 5+3 with 300 s left: soft 2.5 s, hard 5 s; 1+0 with 60 s left: soft 0.5 s, hard 1 s; 15+10 with
/// 900 s: soft 5 s, hard 10 s. Without a clock: [`UNTIMED_BUDGET`] (1 s, hard 2 s).
pub fn turn_budget(clock: Option<GameClock>) -> (Duration, Duration) {
    let Some(c) = clock else {
        return UNTIMED_BUDGET;
    };
    let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
    let left = ms(c.remaining_ms).saturating_sub(OVERHEAD);
    let base = ms(c.base_ms);
    let target = left / 40 + ms(c.increment_ms);
    let cap = (base / 60)
        .min(if base < Duration::from_secs(600) {
            Duration::from_secs(5)
        } else {
            MAX_TURN_TIME
        })
        .max(Duration::from_millis(50));
    let hard = (target * 2).min(left / 20).min(cap);
    let soft = target.min(hard / 2);
    (soft, hard)
}

/// The engine's turn in a server game: levels 1–2 choose directly; others search the job's searcher
/// within [`turn_budget`], capped by the level ([`Level::restrict`]). None when there is no legal turn.
pub fn engine_turn(
    job: &mut Job,
    game: &Game,
    level: u8,
    clock: Option<GameClock>,
    seed: u64,
) -> Option<Vec<rules::Move>> {
    let lvl = Level(level.clamp(1, engine::levels::MAX_LEVEL));
    if let Some(choose) = lvl.chooser() {
        return choose(game, seed);
    }
    let (soft, hard) = turn_budget(clock);
    let mut limits = Limits {
        multipv: 1,
        soft_time: Some(soft),
        hard_time: Some(hard),
        ..Limits::default()
    };
    lvl.restrict(&mut limits);
    job.searcher()
        .search(game, &limits, &mut |_| {})
        .map(|r| r.turn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::sync::mpsc;
    use std::time::Instant;

    fn key(n: u8) -> ClientKey {
        ClientKey::ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, n)))
    }

    fn small(threads: usize) -> EnginePool {
        EnginePool::with_config(PoolConfig {
            threads,
            search_threads: 1,
            max_queued: 64,
            max_queued_per_client: 32,
            hash_mb: 1,
        })
    }

    /// Blocks the pool's only worker until the returned sender is used (or dropped).
    fn block_worker(pool: &EnginePool) -> (mpsc::Sender<()>, Ticket<()>) {
        let (tx, rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let t = pool
            .submit(key(99), move |_| {
                started_tx.send(()).unwrap();
                let _ = rx.recv();
            })
            .unwrap();
        started_rx.recv().unwrap();
        (tx, t)
    }

    /// The stats once the workers are idle (a result is sent a moment before its worker is free).
    async fn idle_stats(pool: &EnginePool) -> PoolStats {
        for _ in 0..200 {
            let s = pool.stats();
            if s.running == 0 && s.queued == 0 {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        pool.stats()
    }

    #[tokio::test]
    async fn fair_across_clients() {
        let pool = small(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tickets = Vec::new();
        for i in 0..10 {
            let o = order.clone();
            tickets.push(
                pool.submit(key(1), move |_| {
                    std::thread::sleep(Duration::from_millis(2));
                    o.lock().unwrap().push(format!("A{i}"));
                })
                .unwrap(),
            );
        }
        let o = order.clone();
        tickets.push(
            pool.submit(key(2), move |_| o.lock().unwrap().push("B".to_string()))
                .unwrap(),
        );
        for t in tickets {
            t.await.unwrap();
        }
        let order = order.lock().unwrap();
        assert_eq!(order.len(), 11);
        assert_eq!(order[0], "A0");
        assert_eq!(order[1], "B", "{order:?}");
        assert_eq!(
            order[2..],
            (1..10).map(|i| format!("A{i}")).collect::<Vec<_>>()
        );
    }

    #[tokio::test]
    async fn round_robin_while_busy() {
        // With the worker busy, A queues 3 and B 3: they alternate, A first (its job waited longest).
        let pool = small(1);
        let (go, blocker) = block_worker(&pool);
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tickets = Vec::new();
        for (k, name) in [(1, "A"), (1, "A"), (1, "A"), (2, "B"), (2, "B"), (2, "B")] {
            let o = order.clone();
            tickets.push(
                pool.submit(key(k), move |_| o.lock().unwrap().push(name))
                    .unwrap(),
            );
        }
        assert_eq!(pool.stats().queued, 6);
        go.send(()).unwrap();
        blocker.await.unwrap();
        for t in tickets {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["A", "B", "A", "B", "A", "B"]);
    }

    #[tokio::test]
    async fn cancel_a_queued_job() {
        let pool = small(1);
        let (go, blocker) = block_worker(&pool);
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let t = pool
            .submit(key(1), move |_| r.store(true, Ordering::SeqCst))
            .unwrap();
        let s = pool.stats();
        assert_eq!((s.queued, s.running, s.clients), (1, 1, 2));
        t.stop_handle().stop();
        assert_eq!(pool.stats().queued, 0);
        assert_eq!(t.await, Err(PoolError::Cancelled));
        // A dropped future cancels too.
        let r = ran.clone();
        let t = pool
            .submit(key(1), move |_| r.store(true, Ordering::SeqCst))
            .unwrap();
        drop(t);
        assert_eq!(pool.stats().queued, 0);
        go.send(()).unwrap();
        blocker.await.unwrap();
        // The worker is free again and the cancelled jobs never ran.
        pool.run(key(1), |_| ()).await.unwrap();
        assert!(!ran.load(Ordering::SeqCst));
        let s = idle_stats(&pool).await;
        assert_eq!((s.queued, s.running, s.clients), (0, 0, 0));
    }

    #[tokio::test]
    async fn cancel_a_running_search() {
        let pool = small(1);
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let t = pool
            .submit(key(1), move |job| {
                started_tx.send(()).unwrap();
                let limits = Limits {
                    multipv: 1,
                    hard_time: Some(Duration::from_secs(60)),
                    soft_time: Some(Duration::from_secs(60)),
                    ..Limits::default()
                };
                let start = Instant::now();
                let r = job.searcher().search(
                    &Game::new(rules::Position::start(rules::Variant::DoubleMove)),
                    &limits,
                    &mut |_| {},
                );
                (r.is_some(), start.elapsed())
            })
            .unwrap();
        started_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        t.stop_handle().stop();
        let (found, took) = tokio::time::timeout(Duration::from_secs(5), t)
            .await
            .expect("the search stopped")
            .unwrap();
        assert!(found, "a stopped search still returns its best turn");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // The next job's search is not stopped by the old flag.
        let r = pool
            .run(key(1), |job| {
                let limits = Limits {
                    depth: Some(3),
                    multipv: 1,
                    ..Limits::default()
                };
                let g = Game::new(rules::Position::start(rules::Variant::Chess));
                job.searcher()
                    .search(&g, &limits, &mut |_| {})
                    .map(|r| r.depth)
            })
            .await
            .unwrap();
        assert_eq!(r, Some(3));
    }

    #[tokio::test]
    async fn dropping_the_future_stops_a_running_job() {
        let pool = small(1);
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<bool>();
        let t = pool
            .submit(key(1), move |job| {
                started_tx.send(()).unwrap();
                let start = Instant::now();
                while !job.is_stopped() && start.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                done_tx.send(job.is_stopped()).unwrap();
            })
            .unwrap();
        started_rx.recv().unwrap();
        drop(t);
        assert!(done_rx.recv_timeout(Duration::from_secs(5)).unwrap());
    }

    #[tokio::test]
    async fn a_job_sees_the_queue() {
        let pool = small(1);
        let (go, gate) = mpsc::channel::<()>();
        let (seen_tx, seen_rx) = mpsc::channel::<usize>();
        let t = pool
            .submit(key(1), move |job| {
                let probe = job.queue_probe();
                seen_tx.send(probe()).unwrap();
                gate.recv().unwrap();
                seen_tx.send(probe()).unwrap();
            })
            .unwrap();
        assert_eq!(seen_rx.recv().unwrap(), 0);
        let other = pool.submit(key(2), |_| ()).unwrap();
        go.send(()).unwrap();
        assert_eq!(seen_rx.recv().unwrap(), 1);
        t.await.unwrap();
        other.await.unwrap();
    }

    #[tokio::test]
    async fn queue_bounds() {
        let pool = EnginePool::with_config(PoolConfig {
            threads: 1,
            search_threads: 1,
            max_queued: 5,
            max_queued_per_client: 3,
            hash_mb: 1,
        });
        let (go, blocker) = block_worker(&pool);
        let mut tickets = Vec::new();
        for _ in 0..3 {
            tickets.push(pool.submit(key(1), |_| ()).unwrap());
        }
        // This client's share is full, not the queue.
        assert_eq!(pool.submit(key(1), |_| ()).err(), Some(PoolError::Busy));
        tickets.push(pool.submit(key(2), |_| ()).unwrap());
        tickets.push(pool.submit(key(3), |_| ()).unwrap());
        // Now the whole queue is full.
        assert_eq!(pool.submit(key(4), |_| ()).err(), Some(PoolError::Busy));
        assert_eq!(pool.stats().queued, 5);
        go.send(()).unwrap();
        blocker.await.unwrap();
        for t in tickets {
            t.await.unwrap();
        }
        assert!(pool.submit(key(4), |_| ()).is_ok());
    }

    #[tokio::test]
    async fn thread_count() {
        assert!(PoolConfig::default_threads() >= 1);
        assert_eq!(EnginePool::new(0).threads(), 1);
        let pool = small(3);
        assert_eq!(pool.threads(), 3);
        // Three jobs that wait for each other can only finish if three workers run them at once.
        let barrier = Arc::new(std::sync::Barrier::new(3));
        let mut tickets = Vec::new();
        for i in 0..3 {
            let b = barrier.clone();
            tickets.push(
                pool.submit(key(i), move |_| {
                    b.wait();
                    std::thread::current().name().unwrap().to_string()
                })
                .unwrap(),
            );
        }
        let mut names = Vec::new();
        for t in tickets {
            names.push(
                tokio::time::timeout(Duration::from_secs(10), t)
                    .await
                    .unwrap()
                    .unwrap(),
            );
        }
        names.sort();
        assert_eq!(names, ["engine-0", "engine-1", "engine-2"]);
        assert_eq!(pool.stats().threads, 3);
    }

    /// A budget of 5 threads with 2 per search: 2 jobs at once, each searching on 2 threads.
    #[tokio::test]
    async fn search_threads_split_the_budget() {
        let pool = EnginePool::with_config(PoolConfig {
            threads: 5,
            search_threads: 2,
            ..PoolConfig::default()
        });
        assert_eq!(pool.stats().workers, 2);
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let mut tickets = Vec::new();
        for i in 0..2 {
            let b = barrier.clone();
            tickets.push(
                pool.submit(key(i), move |job| {
                    b.wait();
                    job.searcher().threads()
                })
                .unwrap(),
            );
        }
        for t in tickets {
            let threads = tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(threads, 2);
        }
        // A third job waits while two run.
        let (tx1, t1) = block_worker(&pool);
        let (tx2, t2) = block_worker(&pool);
        let third = pool.submit(key(9), |_| ()).unwrap();
        let st = pool.stats();
        assert_eq!((st.running, st.queued), (2, 1));
        tx1.send(()).unwrap();
        tx2.send(()).unwrap();
        t1.await.unwrap();
        t2.await.unwrap();
        third.await.unwrap();
        // More search threads than the budget: one job at a time on all of it.
        let cfg = EnginePool::with_config(PoolConfig {
            threads: 3,
            search_threads: 8,
            ..PoolConfig::default()
        });
        assert_eq!((cfg.config().search_threads, cfg.stats().workers), (3, 1));
    }

    #[tokio::test]
    async fn a_panicking_job_leaves_the_worker_alive() {
        let pool = small(1);
        let r = pool.run(key(1), |_| -> u8 { panic!("boom") }).await;
        assert_eq!(r, Err(PoolError::Panicked));
        assert_eq!(pool.run(key(1), |_| 7).await, Ok(7));
    }

    #[test]
    fn client_keys() {
        let v6a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let v6c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientKey::ip(v6a), ClientKey::ip(v6b));
        assert_ne!(ClientKey::ip(v6a), ClientKey::ip(v6c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(ClientKey::ip(mapped), ClientKey::ip(v4));
        assert_eq!(ClientKey::ip(v4).to_string(), "192.0.2.7");
        assert_ne!(ClientKey::connection(), ClientKey::connection());
    }

    fn clock(remaining_s: f64, inc_s: f64, base_s: f64) -> Option<GameClock> {
        Some(GameClock {
            remaining_ms: (remaining_s * 1000.0) as i64,
            increment_ms: (inc_s * 1000.0) as i64,
            base_ms: (base_s * 1000.0) as i64,
        })
    }

    #[test]
    fn budgets() {
        let s = Duration::from_secs_f64;
        // 5+3 at the start: a blitz player's few seconds, not 7–20 s.
        let (soft, hard) = turn_budget(clock(300.0, 3.0, 300.0));
        assert_eq!(hard, s(5.0));
        assert_eq!(soft, s(2.5));
        // 1+0: well under a second typically, at most one.
        let (soft, hard) = turn_budget(clock(60.0, 0.0, 60.0));
        assert!(soft <= s(0.5) && hard <= s(1.0), "{soft:?} {hard:?}");
        // 15+10 at the start: remaining/40 + increment is 32.5 s, capped at 10 s.
        assert_eq!(turn_budget(clock(900.0, 10.0, 900.0)), (s(5.0), s(10.0)));
        // 10+0: base/60 = 10 s.
        assert_eq!(turn_budget(clock(600.0, 0.0, 600.0)), (s(5.0), s(10.0)));
        // A long game never takes more than 10 s of a core.
        assert_eq!(turn_budget(clock(7200.0, 30.0, 7200.0)).1, MAX_TURN_TIME);
        // Low on time: at most remaining/20.
        let (soft, hard) = turn_budget(clock(4.0, 3.0, 300.0));
        assert!(hard <= s(0.2) && soft <= hard, "{soft:?} {hard:?}");
        // No time at all: nearly nothing, never negative.
        let (soft, hard) = turn_budget(clock(0.0, 0.0, 60.0));
        assert_eq!((soft, hard), (Duration::ZERO, Duration::ZERO));
        // Unlimited games: the fixed budget.
        assert_eq!(turn_budget(None), (s(1.0), s(2.0)));
        // Never more than remaining/20, over a grid of clocks.
        for base in [15.0, 60.0, 180.0, 300.0, 600.0, 1800.0] {
            for inc in [0.0, 1.0, 3.0, 10.0] {
                for frac in [0.01, 0.1, 0.5, 1.0] {
                    let (soft, hard) = turn_budget(clock(base * frac, inc, base));
                    assert!(soft <= hard);
                    assert!(
                        hard <= s(base * frac / 20.0 + 0.001),
                        "{base}+{inc} at {frac}"
                    );
                    assert!(hard <= MAX_TURN_TIME);
                    if base < 600.0 {
                        assert!(hard <= s(5.0));
                    }
                }
            }
        }
    }

    #[tokio::test]
    async fn engine_turns_on_the_pool() {
        let pool = small(1);
        let game = Game::new(rules::Position::start(rules::Variant::TwoMove));
        for level in [1, 2, 3, 8] {
            let start = Instant::now();
            let t = pool
                .engine_turn(key(1), game.clone(), level, clock(60.0, 0.0, 60.0), 7)
                .await
                .unwrap()
                .expect("a turn");
            assert!(!t.is_empty());
            assert!(start.elapsed() < Duration::from_secs(3), "level {level}");
        }
    }
}
