//! Storage of games. Every game is one row: its searchable columns (status, times) and the whole
//! record as JSON (moves in UCI, clocks, tokens, offers, takebacks). The SQL is plain and portable, so
//! a PostgreSQL backend is a second implementation of [`Store`] with its own pool type.

use crate::model::GameData;
use anyhow::{Context, Result};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::path::Path;
use std::str::FromStr;

/// The games table on SQLite (an embedded file).
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    variant TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    data TEXT NOT NULL
)";
const INDEX: &str = "CREATE INDEX IF NOT EXISTS games_status ON games (status, updated_at)";

impl Store {
    /// Opens (creating if needed) the database file and its table.
    pub async fn open(path: &Path) -> Result<Store> {
        let opts = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // A move is acknowledged only once it is on disk.
            .synchronous(SqliteSynchronous::Full);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await
            .with_context(|| format!("opening database {}", path.display()))?;
        sqlx::query(SCHEMA).execute(&pool).await?;
        sqlx::query(INDEX).execute(&pool).await?;
        Ok(Store { pool })
    }

    /// Inserts or replaces a game (one transaction, committed when this returns Ok).
    pub async fn save(&self, g: &GameData) -> Result<()> {
        let data = serde_json::to_string(g)?;
        sqlx::query(
            "INSERT INTO games (id, status, variant, created_at, updated_at, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(id) DO UPDATE SET status = ?2, updated_at = ?5, data = ?6",
        )
        .bind(&g.id)
        .bind(g.status.as_str())
        .bind(&g.variant)
        .bind(g.created_at)
        .bind(g.updated_at)
        .bind(data)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every stored game (for resuming at start-up).
    pub async fn load_all(&self) -> Result<Vec<GameData>> {
        let rows = sqlx::query("SELECT data FROM games ORDER BY created_at")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| decode(r.get::<String, _>(0))).collect()
    }

    /// Games with one of the given statuses, most recently changed first.
    pub async fn list(&self, statuses: &[&str], limit: i64) -> Result<Vec<GameData>> {
        let marks = vec!["?"; statuses.len()].join(",");
        let sql = format!(
            "SELECT data FROM games WHERE status IN ({marks}) ORDER BY updated_at DESC LIMIT ?"
        );
        let mut q = sqlx::query(&sql);
        for s in statuses {
            q = q.bind(*s);
        }
        let rows = q.bind(limit).fetch_all(&self.pool).await?;
        rows.iter().map(|r| decode(r.get::<String, _>(0))).collect()
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn decode(s: String) -> Result<GameData> {
    serde_json::from_str(&s).context("decoding a stored game")
}
