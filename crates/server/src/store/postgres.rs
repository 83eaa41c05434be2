//! The PostgreSQL store: several server nodes on one database. Changes are guarded by the game's
//! version, jobs are leased with `FOR UPDATE SKIP LOCKED`, and every committed change is announced
//! to all nodes with `NOTIFY doublemove_games` ("id version").

use super::{
    db_err, game_row, move_row, Change, GameRow, MoveRow, Notice, Status, Store, StoreError,
    StoreResult, StoredGame,
};
use anyhow::Context;
use async_trait::async_trait;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use sqlx::query::Query;
use sqlx::{Postgres, Transaction};
use std::str::FromStr;
use std::time::Duration;
use tokio::sync::mpsc;

/// The channel of change notices.
const CHANNEL: &str = "doublemove_games";
/// The channel of published events ("topic\njson").
const EVENTS: &str = "doublemove_events";
use super::GAME_COLS;
const LIVE: &str = "status IN ('waiting', 'started')";

/// Games on a PostgreSQL database shared by several nodes.
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` (a pool of up to 16 connections) and runs the migrations (the migrator
    /// holds an advisory lock, so nodes starting together migrate once).
    pub async fn open(url: &str, node: &str) -> anyhow::Result<PgStore> {
        let opts = PgConnectOptions::from_str(url)
            .context("parsing the PostgreSQL URL")?
            .application_name(&format!("doublemove {node}"));
        let pool = PgPoolOptions::new()
            .max_connections(16)
            // An unreachable database must fail a request soon, not hang it.
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(opts)
            .await
            .context("connecting to PostgreSQL")?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .context("migrating the PostgreSQL database")?;
        Ok(PgStore { pool })
    }

    fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Writes are durable once committed.
    fn written(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn begin(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.pool.begin().await.map_err(db_err)
    }

    /// Games selected by `filter` (a condition on `games`, then an ORDER BY `tail`) with their
    /// moves, read from one snapshot. The binds, each only if given, in this order: `bind_id`,
    /// `statuses`, `limit`.
    async fn read_games(
        &self,
        filter: &str,
        tail: &str,
        bind_id: Option<&str>,
        statuses: Option<Vec<String>>,
        limit: Option<i64>,
    ) -> StoreResult<Vec<StoredGame>> {
        let mut tx = self.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
        let bind = |sql| bound(sql, bind_id, &statuses, limit);
        let sql = format!("SELECT {GAME_COLS} FROM games WHERE {filter} {tail}");
        let games = bind(&sql)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?
            .iter()
            .map(game_row)
            .collect::<StoreResult<Vec<_>>>()?;
        if games.is_empty() {
            return Ok(Vec::new());
        }
        // One index probe per selected game (the LATERAL with its ORDER BY is not flattened into
        // a join): with a large archive the planner would otherwise hash-join a scan of every
        // move, and start-up time would grow with the archive.
        let sql = format!(
            "SELECT m.game_id, m.ply, m.uci, m.clock_ms, m.at
             FROM (SELECT id FROM games WHERE {filter} {tail}) g
             CROSS JOIN LATERAL (
                 SELECT game_id, ply, uci, clock_ms, at FROM moves
                 WHERE moves.game_id = g.id ORDER BY ply) m
             ORDER BY m.game_id, m.ply"
        );
        let moves = bind(&sql)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?
            .iter()
            .map(move_row)
            .collect::<StoreResult<Vec<_>>>()?;
        tx.commit().await.map_err(db_err)?;
        Ok(super::sqlite::attach(games, moves))
    }
}

/// A query with the binds of `read_games`, in order.
fn bound<'q>(
    sql: &'q str,
    id: Option<&str>,
    statuses: &Option<Vec<String>>,
    limit: Option<i64>,
) -> Query<'q, Postgres, PgArguments> {
    let mut q = sqlx::query(sql);
    if let Some(id) = id {
        q = q.bind(id.to_string());
    }
    if let Some(s) = statuses {
        q = q.bind(s.clone());
    }
    if let Some(n) = limit {
        q = q.bind(n);
    }
    q
}

/// Inserts moves in one statement (arrays unnested), however many there are.
async fn insert_moves(
    tx: &mut Transaction<'static, Postgres>,
    id: &str,
    moves: &[MoveRow],
) -> StoreResult<()> {
    if moves.is_empty() {
        return Ok(());
    }
    let plies: Vec<i32> = moves.iter().map(|m| m.ply).collect();
    let ucis: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
    let clocks: Vec<Option<i64>> = moves.iter().map(|m| m.clock_ms).collect();
    let ats: Vec<i64> = moves.iter().map(|m| m.at).collect();
    sqlx::query(
        "INSERT INTO moves (game_id, ply, uci, clock_ms, at)
         SELECT $1, * FROM UNNEST($2::INTEGER[], $3::TEXT[], $4::BIGINT[], $5::BIGINT[])",
    )
    .bind(id)
    .bind(plies)
    .bind(ucis)
    .bind(clocks)
    .bind(ats)
    .execute(&mut **tx)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Tells every node (delivered when the transaction commits).
async fn notify(tx: &mut Transaction<'static, Postgres>, row: &GameRow) -> StoreResult<()> {
    sqlx::query("SELECT pg_notify($1, $2 || ' ' || $3::TEXT)")
        .bind(CHANNEL)
        .bind(&row.id)
        .bind(row.version)
        .execute(&mut **tx)
        .await
        .map_err(db_err)?;
    Ok(())
}

/// Reads `"id version"`.
fn parse_notice(payload: &str) -> Option<Notice> {
    let (id, version) = payload.rsplit_once(' ')?;
    Some(Notice::Changed {
        id: id.to_string(),
        version: version.parse().ok()?,
    })
}

/// Feeds `tx` from the listener until the receiver is dropped or the pool closed. A lost
/// connection means lost notices: once listening again, it sends `Resync`.
async fn listen(pool: PgPool, mut listener: PgListener, tx: mpsc::Sender<Notice>) {
    loop {
        let notice = match listener.try_recv().await {
            Ok(Some(n)) if n.channel() == EVENTS => match n.payload().split_once('\n') {
                Some((topic, json)) => Notice::Event {
                    topic: topic.to_string(),
                    json: json.to_string(),
                },
                None => continue,
            },
            Ok(Some(n)) => match parse_notice(n.payload()) {
                Some(notice) => notice,
                None => {
                    tracing::warn!("ignoring a malformed change notice {:?}", n.payload());
                    continue;
                }
            },
            // Lost and (eager reconnect) listening again.
            Ok(None) => {
                tracing::warn!("PostgreSQL notice connection lost and re-established; resync");
                Notice::Resync
            }
            Err(sqlx::Error::PoolClosed) => return,
            Err(e) => {
                // The listener may hold a dead connection: start a new one.
                tracing::warn!("PostgreSQL notice connection failed: {e}");
                drop(listener);
                let mut wait = Duration::from_millis(200);
                listener = loop {
                    if tx.is_closed() || pool.is_closed() {
                        return;
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                    match new_listener(&pool).await {
                        Ok(l) => break l,
                        Err(e) => tracing::warn!("PostgreSQL notice connection: {e}"),
                    }
                };
                tracing::info!("PostgreSQL notice connection back; resync");
                Notice::Resync
            }
        };
        if tx.send(notice).await.is_err() {
            return;
        }
    }
}

async fn new_listener(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen_all([CHANNEL, EVENTS]).await?;
    Ok(listener)
}

#[async_trait]
impl Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn create(&self, game: &StoredGame) -> StoreResult<()> {
        let r = &game.row;
        let mut tx = self.begin().await?;
        let done = super::bind_row(sqlx::query(super::INSERT_GAME), r)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Conflict);
        }
        insert_moves(&mut tx, &r.id, &game.moves).await?;
        notify(&mut tx, r).await?;
        tx.commit().await.map_err(db_err)
    }

    async fn apply(&self, change: &Change) -> StoreResult<()> {
        let r = &change.row;
        let mut tx = self.begin().await?;
        // Under READ COMMITTED a concurrent writer of the same version waits for the row lock,
        // then re-checks the version and finds it changed: exactly one of them wins.
        let done = super::bind_row(sqlx::query(super::UPDATE_GAME), r)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Conflict);
        }
        if let Some(ply) = change.truncate_to {
            sqlx::query("DELETE FROM moves WHERE game_id = $1 AND ply >= $2")
                .bind(&r.id)
                .bind(ply)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
        }
        insert_moves(&mut tx, &r.id, &change.append).await?;
        for w in &change.ratings {
            super::players::write_rating!(tx, w);
        }
        notify(&mut tx, r).await?;
        tx.commit().await.map_err(db_err)
    }

    async fn load(&self, id: &str) -> StoreResult<Option<StoredGame>> {
        Ok(self
            .read_games("id = $1", "", Some(id), None, None)
            .await?
            .into_iter()
            .next())
    }

    async fn load_live(&self) -> StoreResult<Vec<StoredGame>> {
        self.read_games(LIVE, "ORDER BY created_at, id", None, None, None)
            .await
    }

    async fn list(&self, statuses: &[Status], limit: i64) -> StoreResult<Vec<StoredGame>> {
        if statuses.is_empty() || limit <= 0 {
            return Ok(Vec::new());
        }
        let names: Vec<String> = statuses.iter().map(|s| s.as_str().to_string()).collect();
        // The newest `limit` of each status from the index (status, updated_at, id), then the
        // newest of those: `status = ANY(…) ORDER BY … LIMIT` would sort the whole archive.
        self.read_games(
            "id IN (SELECT g.id FROM UNNEST($1::TEXT[]) s (status)
                    CROSS JOIN LATERAL (
                        SELECT id, updated_at FROM games WHERE games.status = s.status
                        ORDER BY updated_at DESC, id DESC LIMIT $2) g
                    ORDER BY g.updated_at DESC, g.id DESC LIMIT $2)",
            "ORDER BY updated_at DESC, id DESC",
            None,
            Some(names),
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
        // SKIP LOCKED: nodes claiming at the same moment take disjoint games instead of waiting.
        sqlx::query_scalar(
            "UPDATE games SET lease_owner = $1, lease_until = $2
             WHERE id IN (
                 SELECT id FROM games
                 WHERE status = 'started'
                   AND ((flag_at IS NOT NULL AND flag_at <= $3) OR engine_to_move)
                   AND (lease_until IS NULL OR lease_until < $3)
                 ORDER BY CASE WHEN engine_to_move THEN updated_at ELSE flag_at END, id
                 LIMIT $4
                 FOR UPDATE SKIP LOCKED)
             RETURNING id",
        )
        .bind(node)
        .bind(lease_until)
        .bind(now)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(db_err)
    }

    async fn claim(&self, id: &str, node: &str, now: i64, lease_until: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE games SET lease_owner = $2, lease_until = $3
             WHERE id = $1 AND (lease_until IS NULL OR lease_until < $4 OR lease_owner = $2)",
        )
        .bind(id)
        .bind(node)
        .bind(lease_until)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(db_err)?;
        Ok(done.rows_affected() == 1)
    }

    async fn subscribe(&self) -> StoreResult<Option<mpsc::Receiver<Notice>>> {
        let listener = new_listener(&self.pool).await.map_err(db_err)?;
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(listen(self.pool.clone(), listener, tx));
        Ok(Some(rx))
    }

    async fn get_value(&self, key: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar("SELECT value FROM kv WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(db_err)
    }

    async fn set_value(&self, key: &str, value: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO kv (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await
        .map_err(db_err)?;
        Ok(())
    }

    async fn publish(&self, topic: &str, json: &str) -> StoreResult<()> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(EVENTS)
            .bind(format!("{topic}\n{json}"))
            .execute(&self.pool)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(db_err)?;
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

super::players::impl_player_store!(PgStore);
