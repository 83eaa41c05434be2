//! What the load test reads from the operating system (Linux `/proc`, `setrlimit`) and the
//! `doublemove serve` child processes it starts.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The soft and hard limits on open files, from /proc/self/limits (Linux).
pub fn open_files_limit() -> Option<(u64, Option<u64>)> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut f = line.split_whitespace().skip(3);
    let soft = f.next()?.parse().ok()?;
    let hard = f.next().and_then(|h| h.parse().ok());
    Some((soft, hard))
}

/// Raises this process's soft open-files limit to `need` (at most the hard limit); the spawned
/// servers inherit it. Returns the soft limit in force afterwards, and a warning when it is still
/// under `need`.
pub fn raise_open_files_limit(need: u64) -> (Option<u64>, Option<String>) {
    let Some((soft, hard)) = open_files_limit() else {
        return (None, None);
    };
    if soft >= need {
        return (Some(soft), None);
    }
    let target = hard.map_or(need, |h| need.min(h));
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to an rlimit struct.
    let ok = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && {
            lim.rlim_cur = target as libc::rlim_t;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0
        }
    };
    let now = open_files_limit().map_or(soft, |l| l.0);
    let warning = (now < need).then(|| {
        format!(
            "the open-files limit is {now} (hard limit {}{}); this run needs about {need}: \
             raise the hard limit (e.g. `ulimit -Hn {need}` as root, or in limits.conf) or run \
             fewer games or sockets",
            hard.map_or("unlimited".to_string(), |h| h.to_string()),
            if ok { "" } else { ", setrlimit failed" }
        )
    });
    (Some(now), warning)
}

/// User + system CPU seconds of a process, from /proc/PID/stat (Linux, 100 ticks a second).
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// Resident set size of a process in KiB (VmRSS in /proc/PID/status).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// `serve` flags that lift the per-client limits for the load test: every player, watcher and
/// request comes from 127.0.0.1, which the server would otherwise treat as one client (game
/// creation and request rates, sockets per client) — and the node-wide socket cap is raised above
/// 10,000 games' sockets plus idle watchers. A server given with `--target` needs the same flags.
pub const LOAD_LIMITS: [&str; 14] = [
    "--create-burst",
    "1000000",
    "--create-period-ms",
    "1",
    "--request-burst",
    "1000000",
    "--request-period-ms",
    "1",
    "--sockets-per-client",
    "1000000",
    "--sockets-total",
    "1000000",
    "--engine-games-per-client",
    "1000000",
];

/// A spawned `doublemove serve`, killed (SIGKILL) when dropped.
pub struct ServerChild {
    pub child: Child,
    pub addr: SocketAddr,
    pub started: Instant,
}

impl ServerChild {
    /// Starts `doublemove serve` (the running executable) on a free loopback port.
    pub fn start(db: &str, node: &str) -> Result<ServerChild, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
        let started = Instant::now();
        let child = Command::new(exe)
            .arg("serve")
            .arg("--addr")
            .arg(addr.to_string())
            .arg("--db")
            .arg(db)
            .arg("--node")
            .arg(node)
            .args(LOAD_LIMITS)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting the server: {e}"))?;
        Ok(ServerChild {
            child,
            addr,
            started,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (at most `limit`) until `/readyz` answers 200, polling every 10 ms. Returns the time
    /// from the spawn to that answer.
    pub async fn ready(
        &mut self,
        http: &reqwest::Client,
        limit: Duration,
    ) -> Result<Duration, String> {
        let url = format!("http://{}/readyz", self.addr);
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Err(format!("the server exited: {st}"));
            }
            if let Ok(r) = http.get(&url).send().await {
                if r.status().is_success() {
                    return Ok(self.started.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Err(format!(
            "the server on {} did not answer /readyz within {limit:?}",
            self.addr
        ))
    }

    /// SIGKILL: nothing is flushed on the way out, so what survives is what was committed.
    pub fn kill(mut self) {
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

/// The number of live games a node serves (`live_games` of its `/readyz`).
pub async fn live_games(http: &reqwest::Client, addr: SocketAddr) -> Option<u64> {
    let r = http
        .get(format!("http://{addr}/readyz"))
        .send()
        .await
        .ok()?;
    let v: serde_json::Value = r.json().await.ok()?;
    v["live_games"].as_u64()
}
