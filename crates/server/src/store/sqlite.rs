//! The SQLite store: one database file in WAL mode with `synchronous=FULL`. Reads use a small pool;
//! every write goes through one writer task that commits all the changes queued at that moment in
//! one transaction (group commit: one fsync per batch) and, before answering, checks that the file
//! on disk is still the one it opened.

use super::{
    db_err, game_row, move_row, Change, GameRow, MoveRow, Status, Store, StoreError, StoreResult,
    StoredGame,
};
use anyhow::{bail, Context};
use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, Executor, Row};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The first 16 bytes of every SQLite database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// At most this many changes share a transaction, so that one batch's answers are not held back
/// by an unbounded queue behind them.
const MAX_BATCH: usize = 256;
/// Writes waiting for the writer; senders wait (back-pressure) when it is full.
const QUEUE: usize = 4096;

use super::GAME_COLS;
const LIVE: &str = "status IN ('waiting', 'started')";

/// Games on an embedded SQLite file.
pub struct SqliteStore {
    read: SqlitePool,
    queue: mpsc::Sender<Job>,
    guard: Arc<Guard>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// A write for the writer task.
enum Work {
    Create(StoredGame),
    Apply(Change),
    ClaimDue {
        node: String,
        now: i64,
        lease_until: i64,
        limit: i64,
    },
    Claim {
        id: String,
        node: String,
        now: i64,
        lease_until: i64,
    },
    Set {
        key: String,
        value: String,
    },
    /// Finish the writes queued before this one, then stop.
    Close,
}

/// What a write answers.
enum Done {
    Unit,
    Ids(Vec<String>),
    Claimed(bool),
}

type Job = (Work, oneshot::Sender<StoreResult<Done>>);

impl SqliteStore {
    /// Opens (creating if missing) the database file at `path` and runs the migrations.
    pub async fn open(path: &Path) -> anyhow::Result<SqliteStore> {
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .journal_mode(SqliteJournalMode::Wal)
            // A write is acknowledged only once it is fsync'd.
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true);
        let mut conn = SqliteConnection::connect_with(&opts.clone().create_if_missing(true))
            .await
            .with_context(|| format!("opening database {}", path.display()))?;
        // A database of the first server: its one-record-per-game table is set aside, then
        // imported below.
        let legacy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pragma_table_info('games') WHERE name = 'data'",
        )
        .fetch_one(&mut conn)
        .await?;
        if legacy > 0 {
            conn.execute("DROP INDEX IF EXISTS games_status").await?;
            conn.execute("ALTER TABLE games RENAME TO legacy_games")
                .await?;
        }
        sqlx::migrate!("./migrations/sqlite")
            .run(&mut conn)
            .await
            .with_context(|| format!("migrating database {}", path.display()))?;
        let set_aside: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'legacy_games'",
        )
        .fetch_one(&mut conn)
        .await?;
        let old: Vec<String> = if set_aside > 0 {
            sqlx::query_scalar("SELECT data FROM legacy_games ORDER BY created_at")
                .fetch_all(&mut conn)
                .await?
        } else {
            Vec::new()
        };
        let guard = Arc::new(Guard::open(path)?);
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await
            .with_context(|| format!("opening database {}", path.display()))?;
        let (queue, rx) = mpsc::channel(QUEUE);
        let writer = tokio::spawn(writer(conn, rx, guard.clone()));
        let store = SqliteStore {
            read,
            queue,
            guard,
            writer: Mutex::new(Some(writer)),
        };
        if !old.is_empty() {
            store.import_legacy(&old).await?;
        }
        Ok(store)
    }

    /// Imports the first server's records (set aside as `legacy_games`); the old table goes once
    /// every record is in, and stays (with a log line per record) if one cannot be read.
    async fn import_legacy(&self, old: &[String]) -> anyhow::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut failed = 0;
        for json in old {
            match crate::game::legacy::convert(json, now) {
                Ok(game) => match self.create(&game).await {
                    Ok(()) | Err(StoreError::Conflict) => {}
                    Err(e) => anyhow::bail!("importing an old game: {e}"),
                },
                Err(e) => {
                    failed += 1;
                    tracing::error!("an old game record cannot be imported: {e}");
                }
            }
        }
        tracing::info!(
            "imported {} games of the first server's database",
            old.len() - failed
        );
        if failed == 0 {
            sqlx::query("DROP TABLE legacy_games")
                .execute(&self.read)
                .await?;
        }
        Ok(())
    }

    /// The pool for reads and for the players' small writes (which wait for the writer's lock).
    fn pool(&self) -> &SqlitePool {
        &self.read
    }

    /// A write through the pool is acknowledged only if the file is still the database.
    fn written(&self) -> StoreResult<()> {
        self.guard.check()
    }

    async fn submit(&self, work: Work) -> StoreResult<Done> {
        self.guard.broken()?;
        let (tx, rx) = oneshot::channel();
        self.queue.send((work, tx)).await.map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }
}

fn closed() -> StoreError {
    StoreError::Unavailable("the store is closed".into())
}

/// The identity of the database file as opened, to notice when the path no longer leads to it:
/// SQLite keeps writing through its open descriptor into a deleted or replaced file, and those
/// writes would be lost.
struct Guard {
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// Kept open for the store's whole life to read the header: opening and closing another
    /// descriptor of the file for each check would drop SQLite's POSIX locks on it.
    file: File,
    /// Set once, when the file is found gone or replaced: the store stays unavailable.
    broken: OnceLock<String>,
}

impl Guard {
    fn open(path: &Path) -> anyhow::Result<Guard> {
        let path = std::fs::canonicalize(path)
            .with_context(|| format!("resolving database path {}", path.display()))?;
        let file =
            File::open(&path).with_context(|| format!("opening database {}", path.display()))?;
        let meta = file.metadata()?;
        let guard = Guard {
            dev: meta.dev(),
            ino: meta.ino(),
            path,
            file,
            broken: OnceLock::new(),
        };
        if let Err(why) = guard.verify() {
            bail!("{why}");
        }
        Ok(guard)
    }

    /// `Unavailable` if the file was already found gone or replaced.
    fn broken(&self) -> StoreResult<()> {
        match self.broken.get() {
            Some(why) => Err(StoreError::Unavailable(why.clone())),
            None => Ok(()),
        }
    }

    /// Checks the file now; the first failure breaks the store for good.
    fn check(&self) -> StoreResult<()> {
        self.broken()?;
        if let Err(why) = self.verify() {
            if self.broken.set(why.clone()).is_ok() {
                tracing::error!(
                    "SQLITE DATABASE LOST: {why}; refusing every write until the server is restarted"
                );
            }
            return Err(StoreError::Unavailable(why));
        }
        Ok(())
    }

    fn verify(&self) -> Result<(), String> {
        let shown = self.path.display();
        let meta = std::fs::metadata(&self.path)
            .map_err(|e| format!("database file {shown} is gone ({e})"))?;
        if (meta.dev(), meta.ino()) != (self.dev, self.ino) {
            return Err(format!(
                "database file {shown} was replaced by another file"
            ));
        }
        let mut head = [0u8; 16];
        self.file
            .read_exact_at(&mut head, 0)
            .map_err(|e| format!("database file {shown} cannot be read ({e})"))?;
        if &head != MAGIC {
            return Err(format!(
                "database file {shown} was overwritten (no SQLite header)"
            ));
        }
        Ok(())
    }
}

/// The writer task: takes every queued write, applies them in one transaction (each in its own
/// savepoint, so a conflict or error fails only that write), commits once, checks the file, then
/// answers them all.
async fn writer(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Job>, guard: Arc<Guard>) {
    let mut batch: Vec<Job> = Vec::new();
    let mut close: Option<oneshot::Sender<StoreResult<Done>>> = None;
    while close.is_none() {
        let Some(first) = rx.recv().await else { break };
        let mut next = Some(first);
        while let Some((work, reply)) = next.take() {
            if let Work::Close = work {
                close = Some(reply);
                break;
            }
            batch.push((work, reply));
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if batch.is_empty() {
            continue;
        }
        let works: Vec<&Work> = batch.iter().map(|(w, _)| w).collect();
        let results = run_batch(&mut conn, &guard, &works).await;
        tracing::trace!("SQLite writer: committed a batch of {}", works.len());
        for ((_, reply), result) in batch.drain(..).zip(results) {
            let _ = reply.send(result);
        }
    }
    rx.close();
    if let Err(e) = conn.close().await {
        tracing::warn!("closing the SQLite writer connection: {e}");
    }
    if let Some(reply) = close {
        let _ = reply.send(Ok(Done::Unit));
    }
}

async fn run_batch(
    conn: &mut SqliteConnection,
    guard: &Guard,
    works: &[&Work],
) -> Vec<StoreResult<Done>> {
    let all_fail = |why: &str| {
        works
            .iter()
            .map(|_| Err(StoreError::Unavailable(why.to_string())))
            .collect()
    };
    // A store found broken writes nothing more.
    if let Err(StoreError::Unavailable(why)) = guard.broken() {
        return all_fail(&why);
    }
    if let Err(e) = conn.execute("BEGIN IMMEDIATE").await {
        return all_fail(&e.to_string());
    }
    let mut results = Vec::with_capacity(works.len());
    for work in works {
        let step = async {
            conn.execute("SAVEPOINT change").await?;
            let result = run_one(&mut *conn, work).await;
            if result.is_err() {
                conn.execute("ROLLBACK TO change").await?;
            }
            conn.execute("RELEASE change").await?;
            Ok::<_, sqlx::Error>(result)
        };
        match step.await {
            Ok(result) => results.push(result),
            Err(e) => {
                let _ = conn.execute("ROLLBACK").await;
                return all_fail(&e.to_string());
            }
        }
    }
    if let Err(e) = conn.execute("COMMIT").await {
        let _ = conn.execute("ROLLBACK").await;
        return all_fail(&e.to_string());
    }
    // Committed into the file we hold open; acknowledged only if that is still the database.
    if let Err(StoreError::Unavailable(why)) = guard.check() {
        return all_fail(&why);
    }
    results
}

async fn run_one(conn: &mut SqliteConnection, work: &Work) -> StoreResult<Done> {
    match work {
        Work::Create(game) => {
            let r = &game.row;
            let done = super::bind_row(sqlx::query(super::INSERT_GAME), r)
                .execute(&mut *conn)
                .await
                .map_err(db_err)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::Conflict);
            }
            insert_moves(conn, &r.id, &game.moves).await?;
            Ok(Done::Unit)
        }
        Work::Apply(change) => {
            let r = &change.row;
            let done = super::bind_row(sqlx::query(super::UPDATE_GAME), r)
                .execute(&mut *conn)
                .await
                .map_err(db_err)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::Conflict);
            }
            if let Some(ply) = change.truncate_to {
                sqlx::query("DELETE FROM moves WHERE game_id = ?1 AND ply >= ?2")
                    .bind(&r.id)
                    .bind(ply)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_err)?;
            }
            insert_moves(conn, &r.id, &change.append).await?;
            for w in &change.ratings {
                super::players::write_rating!(conn, w);
            }
            Ok(Done::Unit)
        }
        Work::ClaimDue {
            node,
            now,
            lease_until,
            limit,
        } => {
            // One writer: a plain UPDATE is already exclusive, no row locks needed.
            let rows = sqlx::query(
                "UPDATE games SET lease_owner = ?1, lease_until = ?2
                 WHERE id IN (
                     SELECT id FROM games
                     WHERE status = 'started'
                       AND ((flag_at IS NOT NULL AND flag_at <= ?3) OR engine_to_move)
                       AND (lease_until IS NULL OR lease_until < ?3)
                     ORDER BY CASE WHEN engine_to_move THEN updated_at ELSE flag_at END, id
                     LIMIT ?4)
                 RETURNING id",
            )
            .bind(node)
            .bind(lease_until)
            .bind(now)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await
            .map_err(db_err)?;
            Ok(Done::Ids(rows.iter().map(|r| r.get(0)).collect()))
        }
        Work::Claim {
            id,
            node,
            now,
            lease_until,
        } => {
            let done = sqlx::query(
                "UPDATE games SET lease_owner = ?2, lease_until = ?3
                 WHERE id = ?1 AND (lease_until IS NULL OR lease_until < ?4 OR lease_owner = ?2)",
            )
            .bind(id)
            .bind(node)
            .bind(lease_until)
            .bind(now)
            .execute(&mut *conn)
            .await
            .map_err(db_err)?;
            Ok(Done::Claimed(done.rows_affected() == 1))
        }
        Work::Set { key, value } => {
            sqlx::query(
                "INSERT INTO kv (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(key)
            .bind(value)
            .execute(&mut *conn)
            .await
            .map_err(db_err)?;
            Ok(Done::Unit)
        }
        Work::Close => Ok(Done::Unit),
    }
}

async fn insert_moves(conn: &mut SqliteConnection, id: &str, moves: &[MoveRow]) -> StoreResult<()> {
    for m in moves {
        sqlx::query(
            "INSERT INTO moves (game_id, ply, uci, clock_ms, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(id)
        .bind(m.ply)
        .bind(&m.uci)
        .bind(m.clock_ms)
        .bind(m.at)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    Ok(())
}

/// Gives each game its moves; `moves` are ordered by ply within each game. (Shared with the
/// PostgreSQL store.)
pub(super) fn attach(games: Vec<GameRow>, moves: Vec<(String, MoveRow)>) -> Vec<StoredGame> {
    let mut by_game: HashMap<String, Vec<MoveRow>> = HashMap::new();
    for (id, m) in moves {
        by_game.entry(id).or_default().push(m);
    }
    games
        .into_iter()
        .map(|row| StoredGame {
            moves: by_game.remove(&row.id).unwrap_or_default(),
            row,
        })
        .collect()
}

impl SqliteStore {
    /// Games selected by `filter` (a condition on `games` with `?` binds `args`, plus an optional
    /// ORDER BY/LIMIT `tail`) with their moves, read in one transaction so both agree.
    async fn read_games(
        &self,
        filter: &str,
        tail: &str,
        args: &[&str],
        limit: Option<i64>,
    ) -> StoreResult<Vec<StoredGame>> {
        let mut tx = self.read.begin().await.map_err(db_err)?;
        let sql = format!("SELECT {GAME_COLS} FROM games WHERE {filter} {tail}");
        let mut q = sqlx::query(&sql);
        for a in args {
            q = q.bind(*a);
        }
        if let Some(n) = limit {
            q = q.bind(n);
        }
        let games = q
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?
            .iter()
            .map(game_row)
            .collect::<StoreResult<Vec<_>>>()?;
        if games.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT game_id, ply, uci, clock_ms, at FROM moves
             WHERE game_id IN (SELECT id FROM games WHERE {filter} {tail})
             ORDER BY game_id, ply"
        );
        let mut q = sqlx::query(&sql);
        for a in args {
            q = q.bind(*a);
        }
        if let Some(n) = limit {
            q = q.bind(n);
        }
        let moves = q
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?
            .iter()
            .map(move_row)
            .collect::<StoreResult<Vec<_>>>()?;
        tx.commit().await.map_err(db_err)?;
        Ok(attach(games, moves))
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn create(&self, game: &StoredGame) -> StoreResult<()> {
        self.submit(Work::Create(game.clone())).await.map(|_| ())
    }

    async fn apply(&self, change: &Change) -> StoreResult<()> {
        self.submit(Work::Apply(change.clone())).await.map(|_| ())
    }

    async fn load(&self, id: &str) -> StoreResult<Option<StoredGame>> {
        Ok(self
            .read_games("id = ?", "", &[id], None)
            .await?
            .into_iter()
            .next())
    }

    async fn load_live(&self) -> StoreResult<Vec<StoredGame>> {
        self.read_games(LIVE, "ORDER BY created_at, id", &[], None)
            .await
    }

    async fn list(&self, statuses: &[Status], limit: i64) -> StoreResult<Vec<StoredGame>> {
        if statuses.is_empty() || limit <= 0 {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; statuses.len()].join(", ");
        let names: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        self.read_games(
            &format!("status IN ({marks})"),
            "ORDER BY updated_at DESC, id DESC LIMIT ?",
            &names,
            Some(limit),
        )
        .await
    }

    async fn claim_due(
        &self,
        node: &str,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> StoreResult<Vec<String>> {
        match self
            .submit(Work::ClaimDue {
                node: node.into(),
                now,
                lease_until,
                limit,
            })
            .await?
        {
            Done::Ids(ids) => Ok(ids),
            _ => unreachable!("claim_due answers ids"),
        }
    }

    async fn claim(&self, id: &str, node: &str, now: i64, lease_until: i64) -> StoreResult<bool> {
        match self
            .submit(Work::Claim {
                id: id.into(),
                node: node.into(),
                now,
                lease_until,
            })
            .await?
        {
            Done::Claimed(yes) => Ok(yes),
            _ => unreachable!("claim answers a bool"),
        }
    }

    async fn subscribe(&self) -> StoreResult<Option<mpsc::Receiver<super::Notice>>> {
        Ok(None)
    }

    async fn get_value(&self, key: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar("SELECT value FROM kv WHERE key = ?1")
            .bind(key)
            .fetch_optional(&self.read)
            .await
            .map_err(db_err)
    }

    async fn set_value(&self, key: &str, value: &str) -> StoreResult<()> {
        self.submit(Work::Set {
            key: key.into(),
            value: value.into(),
        })
        .await
        .map(|_| ())
    }

    async fn publish(&self, _topic: &str, _json: &str) -> StoreResult<()> {
        Ok(())
    }

    async fn ping(&self) -> StoreResult<()> {
        self.guard.check()?;
        if self.queue.is_closed() {
            return Err(closed());
        }
        sqlx::query("SELECT 1")
            .execute(&self.read)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    async fn close(&self) {
        let (tx, rx) = oneshot::channel();
        if self.queue.send((Work::Close, tx)).await.is_ok() {
            let _ = rx.await;
        }
        let writer = self.writer.lock().unwrap().take();
        if let Some(writer) = writer {
            let _ = writer.await;
        }
        self.read.close().await;
    }
}

super::players::impl_player_store!(SqliteStore);
