//! Test helpers for the stores: a SQLite file in a temporary directory, and a fresh PostgreSQL
//! database per test on the cluster named by `DOUBLEMOVE_TEST_PG` (scripts/test starts one) or,
//! when that is unset, on a throwaway cluster this test binary starts once with scripts/pg-cluster.

#![allow(dead_code)]

use serde_json::Value;
use server::hub::TimeSource;
use server::limits::ServerLimits;
use server::{Config, Server};
use sqlx::{Connection, Executor, PgConnection};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

static PG: OnceLock<Result<String, String>> = OnceLock::new();

/// The URL of the test cluster's base database. Panics with the reason when PostgreSQL cannot be
/// had: a PostgreSQL test must never pass without PostgreSQL.
pub fn pg_url() -> String {
    match PG.get_or_init(find_or_start_pg) {
        Ok(url) => url.clone(),
        Err(why) => panic!(
            "the PostgreSQL store tests need a PostgreSQL server and none could be had: {why}\n\
             (set DOUBLEMOVE_TEST_PG=postgres://… or make scripts/pg-cluster work)"
        ),
    }
}

fn find_or_start_pg() -> Result<String, String> {
    if let Ok(url) = std::env::var("DOUBLEMOVE_TEST_PG") {
        if !url.is_empty() {
            return Ok(url);
        }
    }
    let dir = std::env::temp_dir().join(format!(
        "doublemove-pg-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    start_cluster(&dir)
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-cluster")
}

/// Starts a cluster in `dir` with scripts/pg-cluster; its URL. It is stopped (and `dir` removed)
/// once this test process has exited, if not before.
fn start_cluster(dir: &Path) -> Result<String, String> {
    let script = script();
    let out = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(dir)
        .arg("--watch")
        .arg(std::process::id().to_string())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} start failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .last()
        .filter(|l| l.starts_with("postgres://"))
        .map(str::to_string)
        .ok_or_else(|| format!("pg-cluster printed no URL: {stdout}"))
}

/// A cluster of a test's own, for a test that stops the server; stopped on drop.
pub struct OwnCluster {
    dir: PathBuf,
    pub url: String,
}

impl OwnCluster {
    /// Blocks for a few seconds (initdb): call it from `spawn_blocking`.
    pub fn start() -> OwnCluster {
        let dir = std::env::temp_dir().join(format!(
            "doublemove-pg-own-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        match start_cluster(&dir) {
            Ok(url) => OwnCluster { dir, url },
            Err(why) => panic!("this test needs a PostgreSQL cluster of its own: {why}"),
        }
    }

    /// Stops the server at once (no shutdown checkpoint) and removes the cluster.
    pub fn stop(&self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A new, empty database on the test cluster (so tests do not see each other's games); its URL.
pub async fn fresh_pg_db() -> String {
    let base = pg_url();
    let name = format!("t_{:016x}", rand::random::<u64>());
    let mut conn = PgConnection::connect(&base)
        .await
        .unwrap_or_else(|e| panic!("connecting to the test PostgreSQL at {base}: {e}"));
    conn.execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .unwrap_or_else(|e| panic!("creating database {name}: {e}"));
    let _ = conn.close().await;
    with_database(&base, &name)
}

/// `url` with its database name replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((u, q)) => (u, format!("?{q}")),
        None => (url, String::new()),
    };
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let head = match rest.find('/') {
        Some(i) => &url[..url.len() - rest.len() + i],
        None => url,
    };
    format!("{head}/{name}{query}")
}

#[test]
fn database_names_replace() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/doublemove_test", "t_1"),
        "postgres://postgres@127.0.0.1:5432/t_1"
    );
    assert_eq!(
        with_database("postgres://u@h:1/d?sslmode=disable", "t_2"),
        "postgres://u@h:1/t_2?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://u@h:1", "t_3"),
        "postgres://u@h:1/t_3"
    );
}

/// A fresh database for one test: an SQLite file in a temporary directory, or a new database on
/// the test PostgreSQL cluster.
pub struct Db {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    pub async fn postgres() -> Db {
        Db {
            url: fresh_pg_db().await,
            _dir: None,
        }
    }
    pub fn sqlite() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("games.db").to_string_lossy().into_owned();
        Db {
            url,
            _dir: Some(dir),
        }
    }
}

/// Runs each named async fn (taking a [`Db`]) as two tests, `sqlite::NAME` and `postgres::NAME`.
/// The test file brings `Db` into scope (`use support::Db;`).
#[allow(unused_macros)]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Db::sqlite()).await
            })*
        }
        mod postgres {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Db::postgres().await).await
            })*
        }
    };
}

/// A running server on a free loopback port and an HTTP client for it: what the API tests drive.
/// Each test file adds the requests of its own scenarios in its own `impl T`.
pub struct T {
    pub srv: Server,
    pub base: String,
    pub http: reqwest::Client,
}

/// Status and JSON body (Null for an empty body, e.g. 204).
pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    if text.trim().is_empty() {
        return (status, Value::Null);
    }
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("not JSON (status {status}): {text}"));
    (status, v)
}

impl T {
    /// A server on `db` (a path or URL) with these limits, clock and node name.
    pub async fn start(db: &str, limits: ServerLimits, clock: TimeSource, node: Option<&str>) -> T {
        let srv = server::start(Config {
            addr: "127.0.0.1:0".parse().unwrap(),
            db: db.to_string(),
            node: node.map(str::to_string),
            lease_ms: None,
            limits,
            clock,
        })
        .await
        .expect("server starts");
        let base = format!("http://{}", srv.addr);
        T {
            srv,
            base,
            http: reqwest::Client::new(),
        }
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
        let req = self.http.post(format!("{}{path}", self.base)).json(&body);
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        send(req).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        send(self.http.get(format!("{}{path}", self.base))).await
    }

    /// Polls the game until `what` holds (10 s at most).
    pub async fn wait_for(&self, id: &str, what: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        for _ in 0..200 {
            let (_, g) = self.get(&format!("/api/games/{id}")).await;
            if what(&g) {
                return g;
            }
            last = g;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("condition not reached for game {id}; last state: {last}");
    }

    pub fn ws_url(&self, path: &str) -> String {
        format!("{}{path}", self.base.replace("http://", "ws://"))
    }
}
