//! `doublemove loadtest`: a load benchmark of the game server (docs/load.md). N human-vs-human games
//! run at once on loopback, both players of each game on their own game WebSocket, each side sending
//! whole turns from a fixed legal sequence (chosen with the rules crate so that no game ends). For
//! every turn it measures the time from sending it on the mover's socket to the update arriving on
//! the opponent's socket; at the end it checks that every acknowledged move is stored (with `--spawn`
//! after killing the server and restarting it on the same database).

use clap::Args;
use futures_util::{SinkExt, StreamExt};
use rules::game::{legal_turns, turn_uci};
use rules::rng::SplitMix64;
use rules::{Game, Position, Variant};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Concurrent games (each: two players, two WebSockets)
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Turns per game, both sides together
    #[arg(long, default_value_t = 40)]
    moves: usize,
    /// chess, two-move, double-move or twinmove
    #[arg(long, default_value = "two-move")]
    variant: Variant,
    /// A server already running on loopback (HOST:PORT)
    #[arg(long, conflicts_with = "spawn", required_unless_present = "spawn")]
    addr: Option<String>,
    /// Start `doublemove serve` as a child process on a free loopback port, stop it at the end
    #[arg(long)]
    spawn: bool,
    /// With --spawn: the database file, kept (default: a temporary file, deleted at the end)
    #[arg(long, requires = "spawn")]
    db: Option<PathBuf>,
    /// Start no new turn after this many seconds of play
    #[arg(long, default_value_t = 600)]
    duration_limit: u64,
    /// Each player's thinking time before a turn in ms, spread uniformly over ±50%
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Games being created, joined and connected at once before the start
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

/// Creates a game (creator white), joins it and connects both players' sockets.
async fn setup(
    http: &reqwest::Client,
    addr: SocketAddr,
    variant: Variant,
    report: &mut GameReport,
) -> Result<[Player; 2], String> {
    let base = format!("http://{addr}");
    let created = post(
        http,
        format!("{base}/api/games"),
        json!({"variant": variant.name(), "opponent": "human", "color": "white"}),
    )
    .await?;
    let id = field(&created, "id")?;
    report.id = Some(id.clone());
    let white = field(&created, "token")?;
    let invite = field(&created, "invite")?;
    let joined = post(
        http,
        format!("{base}/api/games/{id}/join"),
        json!({ "invite": invite }),
    )
    .await?;
    let black = field(&joined, "token")?;
    let mut players = Vec::with_capacity(2);
    for token in [white, black] {
        let url = format!("ws://{addr}/api/games/{id}/ws?token={token}");
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
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
    let timeout = Duration::from_secs(args.turn_timeout);
    if args.think_ms > 0 {
        // Spread the first turns over one thinking time instead of starting all games at once.
        let ms = rng.next_f64() * args.think_ms as f64;
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
    for (i, turn) in seq.iter().enumerate() {
        if i > 0 && args.think_ms > 0 {
            let ms = args.think_ms as f64 * (0.5 + rng.next_f64());
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

/// The soft limit on open files, from /proc/self/limits (Linux).
fn open_files_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// User + system CPU seconds of a process, from /proc/PID/stat (Linux, 100 ticks a second).
fn cpu_seconds(pid: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// A spawned `doublemove serve`, killed when dropped.
struct ServerChild {
    child: Child,
    addr: SocketAddr,
}

impl ServerChild {
    fn start(db: &Path) -> Result<ServerChild, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
        let child = Command::new(exe)
            .arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .arg("--db")
            .arg(db)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting the server: {e}"))?;
        Ok(ServerChild { child, addr })
    }

    /// Waits (at most 60 s) until the server answers.
    async fn ready(&mut self, http: &reqwest::Client) -> Result<(), String> {
        let url = format!("http://{}/api/games?status=open&limit=1", self.addr);
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Err(format!("the server exited: {st}"));
            }
            if let Ok(r) = http.get(&url).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err("the server did not answer within 60 s".into())
    }

    /// SIGKILL: nothing is flushed on the way out, so what survives is what was committed.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

/// Every game's stored move count compared with what was acknowledged: (lost, extra, failed reads).
async fn verify(
    http: &reqwest::Client,
    addr: SocketAddr,
    games: &[(String, usize)],
) -> (Vec<String>, usize, Vec<String>) {
    let checks = futures_util::stream::iter(games.iter().cloned())
        .map(|(id, acked)| async move {
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
        .buffer_unordered(32)
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

pub fn run(args: LoadArgs) -> Result<ExitCode, String> {
    if args.games == 0 || args.moves == 0 {
        return Err("--games and --moves must be at least 1".into());
    }
    tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())?
        .block_on(run_async(Arc::new(args)))
}

async fn run_async(args: Arc<LoadArgs>) -> Result<ExitCode, String> {
    let need = 2 * args.games as u64 + 256;
    if let Some(limit) = open_files_limit().filter(|&l| l < need) {
        eprintln!(
            "warning: the open-files limit is {limit}; {} games need about {need} \
             (raise it with `ulimit -n {need}`)",
            args.games
        );
    }
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;

    // The server: spawned on a temporary (or given) database, or one already running on loopback.
    let temp_db = (args.spawn && args.db.is_none()).then(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        std::env::temp_dir().join(format!(
            "doublemove-loadtest-{}-{nanos}.db",
            std::process::id()
        ))
    });
    let db = args.db.clone().or(temp_db.clone());
    let mut child = None;
    let addr = if args.spawn {
        let db = db.as_ref().expect("a database with --spawn");
        let mut c = ServerChild::start(db)?;
        c.ready(&http).await?;
        let a = c.addr;
        println!(
            "server: spawned pid {} on {a}, database {}",
            c.child.id(),
            db.display()
        );
        child = Some(c);
        a
    } else {
        let text = args.addr.as_deref().expect("--addr or --spawn");
        let a = text
            .to_socket_addrs()
            .map_err(|e| format!("--addr {text}: {e}"))?
            .next()
            .ok_or_else(|| format!("--addr {text}: no address"))?;
        if !a.ip().is_loopback() {
            return Err(format!(
                "--addr {text} is not a loopback address; the load test only runs on loopback"
            ));
        }
        println!("server: {a}");
        a
    };

    let seqs = Arc::new(sequences(args.variant, args.moves, 16));
    let shortest = seqs.iter().map(Vec::len).min().unwrap_or(0);
    println!(
        "loadtest: {} games of {}, {} turns each (shortest sequence {shortest}), think {} ms ±50%, \
         load average {}",
        args.games,
        args.variant.name(),
        args.moves,
        args.think_ms,
        loadavg()
    );

    // Every game task sets itself up, reports ready, waits for the common start, then plays.
    let setup_slots = Arc::new(Semaphore::new(args.setup_concurrency.max(1)));
    let (ready_tx, mut ready_rx) = mpsc::channel::<bool>(args.games);
    let (start_tx, start_rx) = watch::channel::<Option<Instant>>(None);
    let setup_started = Instant::now();
    let mut tasks = Vec::with_capacity(args.games);
    for g in 0..args.games {
        let (http, args, seqs) = (http.clone(), args.clone(), seqs.clone());
        let (slots, ready_tx, mut start_rx) =
            (setup_slots.clone(), ready_tx.clone(), start_rx.clone());
        tasks.push(tokio::spawn(async move {
            let mut report = GameReport::default();
            let permit = slots.acquire().await.expect("semaphore open");
            let players = setup(&http, addr, args.variant, &mut report).await;
            drop(permit);
            let _ = ready_tx.send(players.is_ok()).await;
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
    // Each task reports once (its sender lives on while it plays, so count instead of waiting for
    // the channel to close).
    for _ in 0..args.games {
        match ready_rx.recv().await {
            Some(true) => ready += 1,
            Some(false) => failed_setup += 1,
            None => break,
        }
    }
    println!(
        "setup: {ready} games created, joined and connected ({} WebSockets), {failed_setup} failed, \
         in {:.1} s",
        2 * ready,
        setup_started.elapsed().as_secs_f64()
    );
    let server_pid = child.as_ref().map(|c| c.child.id().to_string());
    let cpu = |pid: Option<&str>| pid.and_then(cpu_seconds).unwrap_or(f64::NAN);
    let cpu_start = (cpu(server_pid.as_deref()), cpu(Some("self")));
    let started = Instant::now();
    let _ = start_tx.send(Some(started + Duration::from_secs(args.duration_limit)));
    let load_start = loadavg();
    let mut reports = Vec::with_capacity(args.games);
    for t in tasks {
        reports.push(t.await.map_err(|e| format!("a game task failed: {e}"))?);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let load_end = loadavg();
    let server_cpu = cpu(server_pid.as_deref()) - cpu_start.0;
    let client_cpu = cpu(Some("self")) - cpu_start.1;

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
    println!(
        "latency (turn sent -> update on the opponent's socket), {} turns: p50 {:.2} ms, \
         p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        lat.len(),
        percentile(&lat, 0.50),
        percentile(&lat, 0.90),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0)
    );
    let server_cpu = if server_cpu.is_nan() {
        "server not measured (not spawned)".to_string()
    } else {
        format!(
            "server {server_cpu:.1} s ({:.0}% of one core)",
            100.0 * server_cpu / elapsed
        )
    };
    println!(
        "cpu during play: {server_cpu}, this client {client_cpu:.1} s ({:.0}%)",
        100.0 * client_cpu / elapsed
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
    let games: Vec<(String, usize)> = reports
        .iter()
        .filter_map(|r| r.id.clone().map(|id| (id, r.acked)))
        .collect();
    let acked: usize = games.iter().map(|g| g.1).sum();
    let check_addr = match child.take() {
        Some(c) => {
            c.kill();
            let db = db.as_ref().expect("a database with --spawn");
            let mut c = ServerChild::start(db)?;
            c.ready(&http).await?;
            let a = c.addr;
            child = Some(c);
            println!("durability: server killed (SIGKILL) and restarted on the same database");
            a
        }
        None => {
            println!("durability: read back from the running server");
            addr
        }
    };
    let (lost, extra, failed) = verify(&http, check_addr, &games).await;
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
    if let Some(c) = child {
        c.kill();
    }
    if let Some(t) = &temp_db {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = t.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
    let ok = errors.is_empty() && lost.is_empty() && failed.is_empty();
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
