//! `doublemove loadtest`: a load benchmark of the game server (docs/load.md). N human-vs-human games
//! run at once on loopback, both players of each game on their own game WebSocket (on two different
//! nodes when there are several), each side sending whole turns from a fixed legal sequence (chosen
//! with the rules crate so that no game ends). For every turn it measures the time from sending it on
//! the mover's socket to the update arriving on the opponent's socket; it reports the RSS of the
//! spawned servers (idle, with every game live, per idle watcher socket with `--idle-sockets`), and
//! at the end it checks that every acknowledged move is stored (with spawned servers after killing
//! them and restarting one on the same database). `--seed-archive` and `--startup` measure start-up
//! on a large archive instead (loadtest/archive.rs).

mod archive;
mod sys;

use clap::Args;
use futures_util::{SinkExt, StreamExt};
use rules::game::{legal_turns, turn_uci};
use rules::rng::SplitMix64;
use rules::{Game, Position, Variant};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use sys::{cpu_seconds, loadavg, mib, rss_kib, ServerChild};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Concurrent games (each: two players, two WebSockets)
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Turns per game, both sides together (also the length of --seed-archive games)
    #[arg(long, default_value_t = 40)]
    moves: usize,
    /// chess, two-move, double-move or twinmove
    #[arg(long, default_value = "two-move")]
    variant: Variant,
    /// A server already running on loopback (HOST:PORT); give it several times for several nodes
    /// (a game's two players connect to two different ones, round robin). `--addr` is an alias.
    #[arg(long = "target", visible_alias = "addr", value_name = "HOST:PORT")]
    targets: Vec<String>,
    /// Start `doublemove serve` as a child process on a free loopback port, stop it at the end
    #[arg(long, conflicts_with = "targets")]
    spawn: bool,
    /// Start N `doublemove serve` children sharing the --db (N > 1 needs postgres://…); implies
    /// --spawn
    #[arg(long, value_name = "N", conflicts_with = "targets")]
    spawn_nodes: Option<usize>,
    /// The database of the spawned servers, --seed-archive and --startup: an SQLite path or
    /// postgres://… (default with --spawn: a temporary SQLite file per run, deleted at the end)
    #[arg(long)]
    db: Option<String>,
    /// Extra WebSockets opened to one game as watchers after the setup; the RSS growth of its node
    /// per socket is reported (then they are closed before the play starts)
    #[arg(long, default_value_t = 0, value_name = "N")]
    idle_sockets: usize,
    /// Insert N finished games (of --moves turns) into --db through the server's store, then stop
    /// (or go on with --startup)
    #[arg(long, value_name = "N", requires = "db")]
    seed_archive: Option<usize>,
    /// Spawn `doublemove serve` on --db and print the time until /readyz answers 200 and its RSS
    /// then (--runs times); plays no games
    #[arg(long, requires = "db")]
    startup: bool,
    /// Repeat the whole run K times back to back and print the spread
    #[arg(long, default_value_t = 1, value_name = "K")]
    runs: usize,
    /// Worker threads of the client's runtime (the client shares the machine with the servers)
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// Start no new turn after this many seconds of play
    #[arg(long, default_value_t = 600)]
    duration_limit: u64,
    /// Each player's thinking time before a turn in ms, spread uniformly over ±50% (or up to
    /// --think-max-ms)
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// With --think-ms T: thinking times uniform over T..MAX instead of ±50%
    #[arg(long, value_name = "MAX")]
    think_max_ms: Option<u64>,
    /// Games being created, joined and connected at once before the start (also: concurrent
    /// creates of --seed-archive ×16, reads of the durability check)
    #[arg(long, default_value_t = 32)]
    setup_concurrency: usize,
    /// Seconds to wait for one turn's update before counting an error
    #[arg(long, default_value_t = 10)]
    turn_timeout: u64,
}

/// The part of a state or error event the benchmark reads.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    moves: Vec<IgnoredAny>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// One turn of a sequence: its UCI text and the game's number of moves after it.
#[derive(Clone)]
struct Turn {
    text: String,
    moves_after: usize,
}

/// `count` different legal sequences of up to `turns` turns, none of which ends the game (every
/// candidate turn is tried from a seeded starting index until one leaves the game running).
fn sequences(variant: Variant, turns: usize, count: usize) -> Vec<Vec<Turn>> {
    (0..count)
        .map(|s| {
            let mut rng = SplitMix64::new(0x5EED_0000 + s as u64);
            let mut game = Game::new(Position::start(variant));
            let mut seq = Vec::with_capacity(turns);
            while seq.len() < turns {
                let options = legal_turns(game.position());
                if options.is_empty() {
                    break;
                }
                let first = rng.below(options.len());
                let next = (0..options.len()).find_map(|k| {
                    let t = &options[(first + k) % options.len()];
                    let mut g = game.clone();
                    (g.play_turn(t, false).is_ok() && g.outcome().is_none()).then_some((g, t))
                });
                let Some((g, t)) = next else { break };
                seq.push(Turn {
                    text: turn_uci(t),
                    moves_after: g.moves().len(),
                });
                game = g;
            }
            seq
        })
        .collect()
}

/// What one game reports.
#[derive(Default)]
struct GameReport {
    id: Option<String>,
    /// Microseconds from sending a turn to the update on the opponent's socket.
    latencies: Vec<u32>,
    turns: usize,
    moves: usize,
    /// The highest move count a socket of this game has seen (moves the server acknowledged).
    acked: usize,
    error: Option<String>,
    cut_short: bool,
    /// White's token (to resign the game at the end) and the target it was created on.
    white_token: Option<String>,
    home: Option<SocketAddr>,
}

struct Player {
    ws: Ws,
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> Result<Value, String> {
    let r = http
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = r.status();
    let v: Value = r.json().await.map_err(|e| format!("POST {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!("POST {url}: {status} {v}"));
    }
    Ok(v)
}

fn field(v: &Value, name: &str) -> Result<String, String> {
    v[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("no '{name}' in {v}"))
}

/// Reads events until one shows at least `count` moves (an error event or the end of the game or
/// connection fails). Returns the move count seen.
async fn wait_for(ws: &mut Ws, count: usize) -> Result<usize, String> {
    loop {
        match ws.next().await {
            None => return Err("connection closed".into()),
            Some(Err(e)) => return Err(format!("websocket: {e}")),
            Some(Ok(Message::Text(t))) => {
                let ev: Event =
                    serde_json::from_str(&t).map_err(|e| format!("bad event: {e}: {t}"))?;
                if ev.kind == "error" {
                    return Err(format!("refused: {}", ev.error.unwrap_or_default()));
                }
                if ev.moves.len() >= count {
                    return Ok(ev.moves.len());
                }
                if let Some(s) = ev.status.filter(|s| s != "started" && s != "waiting") {
                    return Err(format!("the game is {s}"));
                }
            }
            Some(Ok(Message::Close(_))) => return Err("closed by the server".into()),
            Some(Ok(_)) => {}
        }
    }
}

/// Creates a game (creator white) on `addrs[0]`, joins it there and connects white's socket to
/// `addrs[0]` and black's to `addrs[1]` (another node when there are several).
async fn setup(
    http: &reqwest::Client,
    addrs: [SocketAddr; 2],
    variant: Variant,
    report: &mut GameReport,
) -> Result<[Player; 2], String> {
    let base = format!("http://{}", addrs[0]);
    report.home = Some(addrs[0]);
    let created = post(
        http,
        format!("{base}/api/games"),
        json!({"variant": variant.name(), "opponent": "human", "color": "white"}),
    )
    .await?;
    let id = field(&created, "id")?;
    report.id = Some(id.clone());
    let white = field(&created, "token")?;
    report.white_token = Some(white.clone());
    let invite = field(&created, "invite")?;
    let joined = post(
        http,
        format!("{base}/api/games/{id}/join"),
        json!({ "invite": invite }),
    )
    .await?;
    let black = field(&joined, "token")?;
    let mut players = Vec::with_capacity(2);
    for (addr, token) in addrs.into_iter().zip([white, black]) {
        let url = format!("ws://{addr}/api/games/{id}/ws?token={token}");
        let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url.as_str(), None, true)
            .await
            .map_err(|e| format!("connecting {url}: {e}"))?;
        wait_for(&mut ws, 0).await?;
        players.push(Player { ws });
    }
    let black = players.pop().expect("two players");
    let white = players.pop().expect("two players");
    Ok([white, black])
}

/// Plays one game's sequence: the mover thinks, sends its turn, and both sockets wait for the update.
async fn play(
    players: &mut [Player; 2],
    seq: &[Turn],
    seed: u64,
    args: &LoadArgs,
    deadline: Instant,
    report: &mut GameReport,
) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    // Thinking time: uniform over think_ms ± 50%, or over think_ms..think_max_ms.
    let (lo, hi) = match args.think_max_ms {
        Some(max) => (args.think_ms as f64, max.max(args.think_ms) as f64),
        None => (args.think_ms as f64 * 0.5, args.think_ms as f64 * 1.5),
    };
    let timeout = Duration::from_secs(args.turn_timeout);
    if args.think_ms > 0 {
        // Spread the first turns over one thinking time instead of starting all games at once.
        let ms = rng.next_f64() * (lo + hi) / 2.0;
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
    for (i, turn) in seq.iter().enumerate() {
        if i > 0 && args.think_ms > 0 {
            let ms = lo + (hi - lo) * rng.next_f64();
            tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
        }
        if Instant::now() >= deadline {
            report.cut_short = true;
            return Ok(());
        }
        let (a, b) = players.split_at_mut(1);
        let (mover, opponent) = if i % 2 == 0 {
            (&mut a[0], &mut b[0])
        } else {
            (&mut b[0], &mut a[0])
        };
        let msg = json!({"type": "move", "turn": turn.text}).to_string();
        let sent = Instant::now();
        mover
            .ws
            .send(Message::Text(msg.into()))
            .await
            .map_err(|e| format!("sending {}: {e}", turn.text))?;
        let count = turn.moves_after;
        let seen = async {
            let r = tokio::time::timeout(timeout, wait_for(&mut opponent.ws, count)).await;
            (r, sent.elapsed())
        };
        let own = tokio::time::timeout(timeout, wait_for(&mut mover.ws, count));
        let ((seen, latency), own) = tokio::join!(seen, own);
        for r in [&seen, &own] {
            if let Ok(Ok(n)) = r {
                report.acked = report.acked.max(*n);
            }
        }
        let ctx = |who: &str| format!("turn {} ({}) on the {who}'s socket", i + 1, turn.text);
        match own {
            Err(_) => return Err(format!("{}: no answer in {timeout:?}", ctx("mover"))),
            Ok(Err(e)) => return Err(format!("{}: {e}", ctx("mover"))),
            Ok(Ok(_)) => {}
        }
        match seen {
            Err(_) => return Err(format!("{}: no update in {timeout:?}", ctx("opponent"))),
            Ok(Err(e)) => return Err(format!("{}: {e}", ctx("opponent"))),
            Ok(Ok(_)) => {}
        }
        report
            .latencies
            .push(latency.as_micros().min(u32::MAX as u128) as u32);
        report.turns += 1;
        report.moves = count;
    }
    Ok(())
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

/// Every game's stored move count (read from the given node) compared with what was acknowledged:
/// (lost, extra, failed reads).
async fn verify(
    http: &reqwest::Client,
    games: &[(String, usize, SocketAddr)],
    concurrency: usize,
) -> (Vec<String>, usize, Vec<String>) {
    let checks = futures_util::stream::iter(games.iter().cloned())
        .map(|(id, acked, addr)| async move {
            let url = format!("http://{addr}/api/games/{id}");
            let r = async {
                let r = http.get(&url).send().await.map_err(|e| e.to_string())?;
                let st = r.status();
                let text = r.text().await.map_err(|e| e.to_string())?;
                if !st.is_success() {
                    return Err(format!("{st} {text}"));
                }
                let ev: Event = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                Ok(ev.moves.len())
            }
            .await;
            (id, acked, r)
        })
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<_>>()
        .await;
    let (mut lost, mut extra, mut failed) = (Vec::new(), 0, Vec::new());
    for (id, acked, r) in checks {
        match r {
            Ok(n) if n < acked => lost.push(format!("{id}: {acked} acknowledged, {n} stored")),
            Ok(n) if n > acked => extra += 1,
            Ok(_) => {}
            Err(e) => failed.push(format!("{id}: {e}")),
        }
    }
    (lost, extra, failed)
}

/// Resigns every game (white resigns over HTTP), so that a kept database or a running server is
/// left with finished games only. Returns (resigned, failed).
async fn resign_all(
    http: &reqwest::Client,
    games: &[(String, String, SocketAddr)],
    concurrency: usize,
) -> (usize, usize) {
    let results = futures_util::stream::iter(games.iter().cloned())
        .map(|(id, token, addr)| async move {
            http.post(format!("http://{addr}/api/games/{id}/resign"))
                .bearer_auth(token)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        })
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<bool>>()
        .await;
    let ok = results.iter().filter(|&&b| b).count();
    (ok, results.len() - ok)
}

/// One run's figures, for the line per run and the spread over runs.
struct RunSummary {
    turns_per_s: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    errors: usize,
    lost: usize,
    failed_reads: usize,
    client_cpu_ms_per_turn: f64,
}

impl RunSummary {
    fn ok(&self) -> bool {
        self.errors == 0 && self.lost == 0 && self.failed_reads == 0
    }
}

fn is_postgres(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

pub fn run(args: LoadArgs) -> Result<ExitCode, String> {
    if args.games == 0 || args.moves == 0 || args.runs == 0 {
        return Err("--games, --moves and --runs must be at least 1".into());
    }
    let archive_mode = args.seed_archive.is_some() || args.startup;
    let spawn = args.spawn || args.spawn_nodes.is_some();
    if !archive_mode && !spawn && args.targets.is_empty() {
        return Err(
            "give --spawn, --spawn-nodes N or --target HOST:PORT (or --seed-archive / --startup)"
                .into(),
        );
    }
    let nodes = args.spawn_nodes.unwrap_or(1);
    if nodes == 0 {
        return Err("--spawn-nodes must be at least 1".into());
    }
    if nodes > 1 && !args.db.as_deref().is_some_and(is_postgres) {
        return Err(
            "--spawn-nodes N > 1 needs --db postgres://… (nodes share one database)".into(),
        );
    }
    if !archive_mode && !spawn && args.db.is_some() {
        return Err("--db is for spawned servers, --seed-archive and --startup".into());
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(run_async(Arc::new(args)))
}

async fn run_async(args: Arc<LoadArgs>) -> Result<ExitCode, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;

    if args.seed_archive.is_some() || args.startup {
        let db = args.db.as_deref().expect("clap requires --db");
        if let Some(n) = args.seed_archive {
            archive::seed(
                db,
                args.variant,
                args.moves,
                n,
                16 * args.setup_concurrency.max(1),
            )
            .await?;
        }
        if args.startup {
            let mut figures = Vec::new();
            for k in 0..args.runs {
                figures.push(archive::startup(&http, db, k).await?);
            }
            if figures.len() > 1 {
                let mut t: Vec<f64> = figures.iter().map(|f| f.0).collect();
                t.sort_by(f64::total_cmp);
                let mut r: Vec<u64> = figures.iter().filter_map(|f| f.1).collect();
                r.sort_unstable();
                println!(
                    "startup over {} runs: time to ready min {:.3} s, median {:.3} s, max {:.3} s; \
                     RSS min {}, max {}",
                    figures.len(),
                    t[0],
                    t[t.len() / 2],
                    t[t.len() - 1],
                    r.first().map_or("?".into(), |&k| mib(k)),
                    r.last().map_or("?".into(), |&k| mib(k)),
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }

    // Open files: this client holds 2 sockets per game plus the idle sockets; each spawned server
    // as many again (it inherits the limit raised here).
    let need = 2 * args.games as u64 + args.idle_sockets as u64 + 256;
    match sys::raise_open_files_limit(need) {
        (Some(l), None) => println!("open files: soft limit {l} (need about {need})"),
        // Spawned servers inherit the limit and would fail to accept sockets half way through.
        (_, Some(w)) if args.spawn || args.spawn_nodes.is_some() => return Err(w),
        (_, Some(w)) => {
            eprintln!("warning: {w}");
            println!("open files: WARNING: {w}");
        }
        (None, None) => println!("open files: limit unknown (no /proc/self/limits)"),
    }

    let mut summaries = Vec::new();
    for k in 1..=args.runs {
        if args.runs > 1 {
            println!("=== run {k} of {} ===", args.runs);
        }
        let s = one_run(&args, &http).await?;
        println!(
            "run {k}: {:.0} turns/s, p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms, \
             {} errors, {} games lost moves, {} unreadable, client {:.3} ms CPU per turn",
            s.turns_per_s,
            s.p50,
            s.p90,
            s.p99,
            s.max,
            s.errors,
            s.lost,
            s.failed_reads,
            s.client_cpu_ms_per_turn
        );
        summaries.push(s);
    }
    if summaries.len() > 1 {
        let spread = |f: fn(&RunSummary) -> f64| {
            let mut v: Vec<f64> = summaries.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            (v[0], v[v.len() / 2], v[v.len() - 1])
        };
        let (a, b, c) = spread(|s| s.p99);
        let (d, e, f) = spread(|s| s.max);
        let (g, h, i) = spread(|s| s.turns_per_s);
        println!(
            "spread over {} runs: p99 min {a:.2} / median {b:.2} / max {c:.2} ms; max latency \
             {d:.2} / {e:.2} / {f:.2} ms; turns/s {g:.0} / {h:.0} / {i:.0}; runs without errors \
             or lost moves: {}",
            summaries.len(),
            summaries.iter().filter(|s| s.ok()).count()
        );
    }
    Ok(if summaries.iter().all(RunSummary::ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn temp_db_path() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir()
        .join(format!(
            "doublemove-loadtest-{}-{nanos}.db",
            std::process::id()
        ))
        .to_string_lossy()
        .into_owned()
}

/// RSS of every spawned node (KiB), `None` for nodes not spawned by this command.
fn rss_all(children: &[ServerChild]) -> Vec<Option<u64>> {
    children.iter().map(|c| rss_kib(c.pid())).collect()
}

/// Opens `count` watcher sockets (no token) to game `id` on `addr`, each read up to its first
/// state. Returns the open sockets and the number that failed.
async fn open_watchers(addr: SocketAddr, id: &str, count: usize, conc: usize) -> (Vec<Ws>, usize) {
    let url = format!("ws://{addr}/api/games/{id}/ws");
    let results = futures_util::stream::iter(0..count)
        .map(|_| {
            let url = url.clone();
            async move {
                let (mut ws, _) =
                    tokio_tungstenite::connect_async_with_config(url.as_str(), None, true)
                        .await
                        .map_err(|e| e.to_string())?;
                wait_for(&mut ws, 0).await?;
                Ok::<Ws, String>(ws)
            }
        })
        .buffer_unordered(conc.max(1))
        .collect::<Vec<_>>()
        .await;
    let mut open = Vec::with_capacity(count);
    let mut failed = 0;
    for r in results {
        match r {
            Ok(ws) => open.push(ws),
            Err(e) => {
                if failed == 0 {
                    println!("idle sockets: first failure: {e}");
                }
                failed += 1;
            }
        }
    }
    (open, failed)
}

async fn one_run(args: &Arc<LoadArgs>, http: &reqwest::Client) -> Result<RunSummary, String> {
    let spawn = args.spawn || args.spawn_nodes.is_some();
    let nodes = args.spawn_nodes.unwrap_or(1);
    // The servers: spawned on the given or a temporary database, or already running on loopback.
    let temp_db = (spawn && args.db.is_none()).then(temp_db_path);
    let db = args.db.clone().or(temp_db.clone());
    let mut children: Vec<ServerChild> = Vec::new();
    let targets: Vec<SocketAddr> = if spawn {
        let db = db.as_deref().expect("a database when spawning");
        for i in 0..nodes {
            children.push(ServerChild::start(db, &format!("loadtest-{i}"))?);
        }
        for c in &mut children {
            let t = c.ready(http, Duration::from_secs(60)).await?;
            println!(
                "server: spawned pid {} on {} (ready in {:.2} s), database {db}",
                c.pid(),
                c.addr,
                t.as_secs_f64()
            );
        }
        children.iter().map(|c| c.addr).collect()
    } else {
        let mut v = Vec::new();
        for text in &args.targets {
            let a = text
                .to_socket_addrs()
                .map_err(|e| format!("--target {text}: {e}"))?
                .next()
                .ok_or_else(|| format!("--target {text}: no address"))?;
            if !a.ip().is_loopback() {
                return Err(format!(
                    "--target {text} is not a loopback address; the load test only runs on loopback"
                ));
            }
            println!("server: {a}");
            v.push(a);
        }
        v
    };
    let n = targets.len();
    let rss_idle = rss_all(&children);
    let live_idle: Vec<Option<u64>> =
        futures_util::future::join_all(targets.iter().map(|&a| sys::live_games(http, a))).await;

    let seqs = Arc::new(sequences(args.variant, args.moves, 16));
    let shortest = seqs.iter().map(Vec::len).min().unwrap_or(0);
    let think = match args.think_max_ms {
        Some(max) => format!("think {}..{max} ms", args.think_ms),
        None => format!("think {} ms ±50%", args.think_ms),
    };
    println!(
        "loadtest: {} games of {}, {} turns each (shortest sequence {shortest}), {think}, {n} \
         server(s){}, load average {}",
        args.games,
        args.variant.name(),
        args.moves,
        if n > 1 {
            " (each game's players on two different nodes)"
        } else {
            ""
        },
        loadavg()
    );

    // Every game task sets itself up, reports ready, waits for the common start, then plays.
    let setup_slots = Arc::new(Semaphore::new(args.setup_concurrency.max(1)));
    let (ready_tx, mut ready_rx) = mpsc::channel::<Option<String>>(args.games);
    let (start_tx, start_rx) = watch::channel::<Option<Instant>>(None);
    let setup_started = Instant::now();
    let mut tasks = Vec::with_capacity(args.games);
    for g in 0..args.games {
        let (http, args, seqs) = (http.clone(), args.clone(), seqs.clone());
        let (slots, ready_tx, mut start_rx) =
            (setup_slots.clone(), ready_tx.clone(), start_rx.clone());
        let addrs = [targets[g % n], targets[(g + 1) % n]];
        tasks.push(tokio::spawn(async move {
            let mut report = GameReport::default();
            let permit = slots.acquire().await.expect("semaphore open");
            let players = setup(&http, addrs, args.variant, &mut report).await;
            drop(permit);
            let _ = ready_tx
                .send(players.is_ok().then(|| report.id.clone()).flatten())
                .await;
            let mut players = match players {
                Ok(p) => p,
                Err(e) => {
                    report.error = Some(format!("setup: {e}"));
                    return report;
                }
            };
            let deadline = loop {
                if let Some(d) = *start_rx.borrow_and_update() {
                    break d;
                }
                if start_rx.changed().await.is_err() {
                    report.error = Some("never started".into());
                    return report;
                }
            };
            let seq = &seqs[g % seqs.len()];
            let seed = 0xC0FFEE ^ g as u64;
            if let Err(e) = play(&mut players, seq, seed, &args, deadline, &mut report).await {
                report.error = Some(e);
            }
            for p in &mut players {
                let _ = p.ws.close(None).await;
            }
            report
        }));
    }
    drop(ready_tx);
    let mut ready = 0;
    let mut failed_setup = 0;
    let mut first_id = None;
    // Each task reports once (its sender lives on while it plays, so count instead of waiting for
    // the channel to close).
    for _ in 0..args.games {
        match ready_rx.recv().await {
            Some(Some(id)) => {
                ready += 1;
                first_id.get_or_insert(id);
            }
            Some(None) => failed_setup += 1,
            None => break,
        }
    }
    println!(
        "setup: {ready} games created, joined and connected ({} WebSockets), {failed_setup} failed, \
         in {:.1} s",
        2 * ready,
        setup_started.elapsed().as_secs_f64()
    );

    // Memory: every node before the games and with all of them live (and both sockets open).
    let rss_live = rss_all(&children);
    let live_now: Vec<Option<u64>> =
        futures_util::future::join_all(targets.iter().map(|&a| sys::live_games(http, a))).await;
    for (i, &addr) in targets.iter().enumerate() {
        let before = rss_idle.get(i).copied().flatten();
        let after = rss_live.get(i).copied().flatten();
        let games = match (live_now[i], live_idle[i]) {
            (Some(a), Some(b)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        match (before, after) {
            (Some(b), Some(a)) => {
                let per = games.filter(|&g| g > 0).map_or("?".to_string(), |g| {
                    format!("{:.1} KiB", (a as f64 - b as f64) / g as f64)
                });
                println!(
                    "rss {addr}: {} before the games, {} with {} live games ({} sockets of \
                     players on this node): {per} per live game",
                    mib(b),
                    mib(a),
                    games.map_or("?".into(), |g| g.to_string()),
                    if n > 1 { ready } else { 2 * ready }
                );
            }
            _ => println!(
                "rss {addr}: not measured (not spawned by this command); {} live games",
                live_now[i].map_or("?".into(), |g| g.to_string())
            ),
        }
    }

    // Idle sockets: watchers of one game on the first node, RSS growth per socket.
    if args.idle_sockets > 0 {
        if let Some(id) = &first_id {
            let before = children.first().and_then(|c| rss_kib(c.pid()));
            let opened_at = Instant::now();
            let (watchers, failed) = open_watchers(
                targets[0],
                id,
                args.idle_sockets,
                args.setup_concurrency * 2,
            )
            .await;
            let open_secs = opened_at.elapsed().as_secs_f64();
            tokio::time::sleep(Duration::from_secs(2)).await;
            let after = children.first().and_then(|c| rss_kib(c.pid()));
            let growth = match (before, after) {
                (Some(b), Some(a)) if !watchers.is_empty() => {
                    let per = (a as f64 - b as f64) * 1024.0 / watchers.len() as f64;
                    format!(
                        "RSS {} -> {}: {:.1} KiB per idle socket (target <= 32 KiB: {})",
                        mib(b),
                        mib(a),
                        per / 1024.0,
                        if per <= 32.0 * 1024.0 {
                            "met"
                        } else {
                            "MISSED"
                        }
                    )
                }
                _ => "RSS not measured (server not spawned)".into(),
            };
            println!(
                "idle sockets: {} watchers of game {id} on {} open in {open_secs:.1} s ({failed} \
                 failed), after 2 s: {growth}",
                watchers.len(),
                targets[0]
            );
            // Closed before the play, so that their fan-out does not weigh on the latency.
            drop(watchers);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    let pids: Vec<String> = children.iter().map(|c| c.pid().to_string()).collect();
    let server_cpu_now = || -> f64 {
        if pids.is_empty() {
            f64::NAN
        } else {
            pids.iter()
                .map(|p| cpu_seconds(p).unwrap_or(f64::NAN))
                .sum()
        }
    };
    let cpu_start = (server_cpu_now(), cpu_seconds("self").unwrap_or(f64::NAN));
    let started = Instant::now();
    let _ = start_tx.send(Some(started + Duration::from_secs(args.duration_limit)));
    let load_start = loadavg();
    let mut reports = Vec::with_capacity(args.games);
    for t in tasks {
        reports.push(t.await.map_err(|e| format!("a game task failed: {e}"))?);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let load_end = loadavg();
    let server_cpu = server_cpu_now() - cpu_start.0;
    let client_cpu = cpu_seconds("self").unwrap_or(f64::NAN) - cpu_start.1;

    let mut lat: Vec<u32> = reports
        .iter()
        .flat_map(|r| r.latencies.iter().copied())
        .collect();
    lat.sort_unstable();
    let turns: usize = reports.iter().map(|r| r.turns).sum();
    let moves: usize = reports.iter().map(|r| r.moves).sum();
    let errors: Vec<&str> = reports.iter().filter_map(|r| r.error.as_deref()).collect();
    let cut = reports.iter().filter(|r| r.cut_short).count();
    println!(
        "played: {turns} turns ({moves} moves) in {elapsed:.1} s: {:.0} turns/s, {:.0} moves/s; \
         load average {load_start} at the start, {load_end} at the end",
        turns as f64 / elapsed,
        moves as f64 / elapsed
    );
    let summary_lat = [0.50, 0.90, 0.99, 1.0].map(|p| percentile(&lat, p));
    println!(
        "latency (turn sent -> update on the opponent's socket{}), {} turns: p50 {:.2} ms, \
         p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        if n > 1 { ", across nodes" } else { "" },
        lat.len(),
        summary_lat[0],
        summary_lat[1],
        summary_lat[2],
        summary_lat[3]
    );
    let server_cpu_text = if server_cpu.is_nan() {
        "servers not measured (not spawned)".to_string()
    } else {
        format!(
            "server{} {server_cpu:.1} s ({:.0}% of one core, {:.3} ms per turn)",
            if n > 1 { "s together" } else { "" },
            100.0 * server_cpu / elapsed,
            1000.0 * server_cpu / turns.max(1) as f64
        )
    };
    let client_ms_per_turn = 1000.0 * client_cpu / turns.max(1) as f64;
    println!(
        "cpu during play: {server_cpu_text}, this client {client_cpu:.1} s ({:.0}% of one core, \
         {client_ms_per_turn:.3} ms per turn, {} runtime worker thread(s))",
        100.0 * client_cpu / elapsed,
        args.client_threads.max(1)
    );
    if cut > 0 {
        println!(
            "duration limit: {cut} games stopped early after {} s",
            args.duration_limit
        );
    }
    println!("errors: {}", errors.len());
    for e in errors.iter().take(5) {
        println!("  {e}");
    }

    // Durability: every move a socket saw must be stored.
    let mut check_child = None;
    let check_addr = if children.is_empty() {
        println!("durability: read back from the running server(s)");
        None
    } else {
        for c in children.drain(..) {
            c.kill();
        }
        let db = db.as_deref().expect("a database when spawning");
        let mut c = ServerChild::start(db, "loadtest-check")?;
        c.ready(http, Duration::from_secs(120)).await?;
        let a = c.addr;
        check_child = Some(c);
        println!(
            "durability: {} killed (SIGKILL) and one restarted on the same database",
            if nodes > 1 {
                format!("all {nodes} servers")
            } else {
                "server".to_string()
            }
        );
        Some(a)
    };
    let games: Vec<(String, usize, SocketAddr)> = reports
        .iter()
        .filter_map(|r| {
            let addr = check_addr.or(r.home)?;
            r.id.clone().map(|id| (id, r.acked, addr))
        })
        .collect();
    let acked: usize = games.iter().map(|g| g.1).sum();
    let (lost, extra, failed) = verify(http, &games, args.setup_concurrency).await;
    println!(
        "durability: {} games, {acked} acknowledged moves: {} games lost moves, {} failed to read, \
         {extra} stored more than acknowledged",
        games.len(),
        lost.len(),
        failed.len()
    );
    for l in lost.iter().chain(failed.iter()).take(5) {
        println!("  {l}");
    }
    // A kept database or a running server is left with finished games only (a temporary one is
    // deleted anyway).
    if temp_db.is_none() {
        let to_resign: Vec<(String, String, SocketAddr)> = reports
            .iter()
            .filter_map(|r| {
                let addr = check_addr.or(r.home)?;
                Some((r.id.clone()?, r.white_token.clone()?, addr))
            })
            .collect();
        let (ok, bad) = resign_all(http, &to_resign, args.setup_concurrency).await;
        println!("cleanup: {ok} games resigned (finished), {bad} failed");
    }
    if let Some(c) = check_child {
        c.kill();
    }
    if let Some(t) = &temp_db {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{t}{suffix}"));
        }
    }
    Ok(RunSummary {
        turns_per_s: turns as f64 / elapsed,
        p50: summary_lat[0],
        p90: summary_lat[1],
        p99: summary_lat[2],
        max: summary_lat[3],
        errors: errors.len(),
        lost: lost.len(),
        failed_reads: failed.len(),
        client_cpu_ms_per_turn: client_ms_per_turn,
    })
}
