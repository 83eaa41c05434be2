//! Storage of games behind one trait, [`Store`], with two implementations: SQLite (the embedded
//! default, `sqlite.rs`) and PostgreSQL (several nodes on one database, `postgres.rs`). `open` picks
//! one from the `--db` argument: a path or `sqlite://…` for SQLite, `postgres://…` for PostgreSQL.
//!
//! A game is one row in `games` ([`GameRow`]: searchable columns plus the game core's record as
//! JSON in `meta`) and one row per move in `moves` ([`MoveRow`]); a change appends moves (or cuts
//! them back for a takeback) and rewrites the small header row, never the whole game. Every change
//! carries the version it was made from, so two writers (two nodes) can never both change the same
//! position: the second gets [`StoreError::Conflict`] and must re-read the game.

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;

pub mod players;
pub mod postgres;
pub mod sqlite;

pub use players::PlayerStore;

/// A database error as the store reports it: the text is for the log, never for a client.
fn db_err(e: sqlx::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// A `games` row read back, on either backend (the columns and their types are the same).
fn game_row<R>(r: &R) -> StoreResult<GameRow>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    bool: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<String>: for<'r> sqlx::Decode<'r, R::Database>,
{
    let status: String = r.try_get("status").map_err(db_err)?;
    Ok(GameRow {
        id: r.try_get("id").map_err(db_err)?,
        variant: r.try_get("variant").map_err(db_err)?,
        status: Status::parse(&status)
            .ok_or_else(|| StoreError::Unavailable(format!("unknown game status '{status}'")))?,
        created_at: r.try_get("created_at").map_err(db_err)?,
        updated_at: r.try_get("updated_at").map_err(db_err)?,
        version: r.try_get("version").map_err(db_err)?,
        initial_fen: r.try_get("initial_fen").map_err(db_err)?,
        meta: r.try_get("meta").map_err(db_err)?,
        flag_at: r.try_get("flag_at").map_err(db_err)?,
        engine_to_move: r.try_get("engine_to_move").map_err(db_err)?,
        white_user: r.try_get("white_user").map_err(db_err)?,
        black_user: r.try_get("black_user").map_err(db_err)?,
        rated: r.try_get("rated").map_err(db_err)?,
        winner: r.try_get("winner").map_err(db_err)?,
    })
}

/// A `moves` row read back with its game's id, on either backend.
fn move_row<R>(r: &R) -> StoreResult<(String, MoveRow)>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i32: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok((
        r.try_get("game_id").map_err(db_err)?,
        MoveRow {
            ply: r.try_get("ply").map_err(db_err)?,
            uci: r.try_get("uci").map_err(db_err)?,
            clock_ms: r.try_get("clock_ms").map_err(db_err)?,
            at: r.try_get("at").map_err(db_err)?,
        },
    ))
}

/// The columns of a header row, in the order [`bind_row`] binds them.
pub(crate) const GAME_COLS: &str =
    "id, variant, status, created_at, updated_at, version, initial_fen, \
     meta, flag_at, engine_to_move, white_user, black_user, rated, winner";

/// Inserts a header row (both backends: sqlx binds `$N` on SQLite too).
pub(crate) const INSERT_GAME: &str = "INSERT INTO games (id, variant, status, created_at, \
     updated_at, version, initial_fen, meta, flag_at, engine_to_move, white_user, black_user, \
     rated, winner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
     ON CONFLICT (id) DO NOTHING";

/// Replaces a header row if the stored version is the one before; releases any job lease.
pub(crate) const UPDATE_GAME: &str = "UPDATE games SET variant = $2, status = $3, \
     created_at = $4, updated_at = $5, version = $6, initial_fen = $7, meta = $8, flag_at = $9, \
     engine_to_move = $10, white_user = $11, black_user = $12, rated = $13, winner = $14, \
     lease_owner = NULL, lease_until = NULL WHERE id = $1 AND version = $6 - 1";

/// Binds a header row's columns in the order of [`GAME_COLS`] (the INSERT and UPDATE of both
/// backends).
fn bind_row<'q, DB>(
    q: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    r: &'q GameRow,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    q.bind(r.id.as_str())
        .bind(r.variant.as_str())
        .bind(r.status.as_str())
        .bind(r.created_at)
        .bind(r.updated_at)
        .bind(r.version)
        .bind(r.initial_fen.as_str())
        .bind(r.meta.as_str())
        .bind(r.flag_at)
        .bind(r.engine_to_move)
        .bind(r.white_user.as_deref())
        .bind(r.black_user.as_deref())
        .bind(r.rated)
        .bind(r.winner.as_deref())
}

/// Opens the store named by `db` and brings its schema up to date (migrations): `postgres://…` or
/// `postgresql://…` is a PostgreSQL database, `sqlite://PATH` or a plain path a SQLite file
/// (created if missing). `node` names this server process in the database's session list
/// (PostgreSQL `application_name`); it is not stored with the data.
pub async fn open(db: &str, node: &str) -> anyhow::Result<Arc<dyn Store>> {
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStore::open(db, node).await?))
    } else {
        let path = db
            .strip_prefix("sqlite://")
            .or_else(|| db.strip_prefix("sqlite:"))
            .unwrap_or(db);
        Ok(Arc::new(
            sqlite::SqliteStore::open(std::path::Path::new(path)).await?,
        ))
    }
}

/// Where a game stands. Stored by its lowercase name.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A game against a person that waits for the second player.
    Waiting,
    Started,
    Finished,
    Aborted,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Waiting,
        Status::Started,
        Status::Finished,
        Status::Aborted,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Started => "started",
            Status::Finished => "finished",
            Status::Aborted => "aborted",
        }
    }
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }
    /// Waiting or started: kept in memory by the nodes that serve it.
    pub fn is_live(self) -> bool {
        matches!(self, Status::Waiting | Status::Started)
    }
}

/// The header row of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRow {
    pub id: String,
    pub variant: String,
    pub status: Status,
    /// Epoch milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    /// 1 when created, +1 with every change.
    pub version: i64,
    pub initial_fen: String,
    /// The game core's record (players, clock, offers, takebacks, result) as JSON; opaque here.
    pub meta: String,
    /// Epoch ms at which the running clock falls, if a clock runs (a job: flag fall).
    pub flag_at: Option<i64>,
    /// The engine is to move (a job: engine turn).
    pub engine_to_move: bool,
    /// The accounts in the seats (user ids), to find a player's games.
    pub white_user: Option<String>,
    pub black_user: Option<String>,
    pub rated: bool,
    /// `white`, `black` or `draw` once finished (a player's result counts).
    pub winner: Option<String>,
}

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveRow {
    /// 0-based index of the move in the game.
    pub ply: i32,
    /// UCI; a `*` suffix marks the first half of a Double Move.
    pub uci: String,
    /// The mover's clock after this move when it ended a turn (for PGN `%clk`).
    pub clock_ms: Option<i64>,
    /// Epoch ms when it was played.
    pub at: i64,
}

/// A game as stored: its header and its moves in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    pub row: GameRow,
    pub moves: Vec<MoveRow>,
}

/// One change to one game, applied atomically: moves from ply `truncate_to` on are deleted (a
/// takeback), `append` is inserted, the header replaced. `row.version` is the new version; it
/// applies only if the stored version is `row.version - 1`.
#[derive(Clone, Debug)]
pub struct Change {
    pub row: GameRow,
    pub truncate_to: Option<i32>,
    pub append: Vec<MoveRow>,
    /// The rating changes a rated game's result makes, written in the same transaction; each
    /// applies only if the player's rating row is still at `prev_games` (else `Conflict`).
    pub ratings: Vec<players::RatingWrite>,
}

/// A change committed by some node, as told to every node (PostgreSQL `LISTEN/NOTIFY`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Game `id` now has `version`.
    Changed { id: String, version: i64 },
    /// An event published by some node (see [`Store::publish`]).
    Event { topic: String, json: String },
    /// The connection to the database was lost and is back: notices may be missing, so re-read
    /// every game this node serves.
    Resync,
}

#[derive(Debug)]
pub enum StoreError {
    /// The stored version is not the one the change was made from (another node changed the game),
    /// or a game with this id already exists on create.
    Conflict,
    /// The store cannot durably keep data now (database unreachable, file deleted or replaced):
    /// nothing may be acknowledged. The text is for the log, never for a client.
    Unavailable(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Conflict => f.write_str("the game was changed by another writer"),
            StoreError::Unavailable(e) => write!(f, "storage unavailable: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

pub type StoreResult<T> = Result<T, StoreError>;

/// The storage of games. Every method that writes returns only once the data is durable (SQLite:
/// fsync'd, PostgreSQL: committed).
#[async_trait]
pub trait Store: PlayerStore + Send + Sync + 'static {
    /// "sqlite" or "postgres" (for logs and /readyz).
    fn backend(&self) -> &'static str;

    /// Inserts a new game (version 1) with its moves. `Conflict` if the id exists.
    async fn create(&self, game: &StoredGame) -> StoreResult<()>;

    /// Applies one change (see [`Change`]). `Conflict` when the stored version differs.
    /// Any job lease on the game is released. On PostgreSQL, also notifies every node.
    async fn apply(&self, change: &Change) -> StoreResult<()>;

    /// One game with its moves.
    async fn load(&self, id: &str) -> StoreResult<Option<StoredGame>>;

    /// Every game that is waiting or started (start-up). Never reads finished games.
    async fn load_live(&self) -> StoreResult<Vec<StoredGame>>;

    /// Games with one of these statuses, most recently updated first, at most `limit`, each with
    /// its moves (one query for the moves of all of them, not one per game).
    async fn list(&self, statuses: &[Status], limit: i64) -> StoreResult<Vec<StoredGame>>;

    /// Claims up to `limit` due jobs for `node` until `lease_until`: started games whose flag time
    /// is `<= now` or whose engine is to move, and that no node holds a lease on (or whose lease ran
    /// out before `now`). Several nodes claiming at once never get the same game (PostgreSQL:
    /// `FOR UPDATE SKIP LOCKED`). Returns the ids.
    async fn claim_due(
        &self,
        node: &str,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> StoreResult<Vec<String>>;

    /// Claims the job of one game for `node` (the node that just made the engine's turn due):
    /// true if no other node holds a live lease on it.
    async fn claim(&self, id: &str, node: &str, now: i64, lease_until: i64) -> StoreResult<bool>;

    /// Receives the notices of changes made by any node (`None` on SQLite: a single node).
    async fn subscribe(&self) -> StoreResult<Option<tokio::sync::mpsc::Receiver<Notice>>>;

    /// A small key-value table for the server's own bookkeeping (e.g. the last time it was alive).
    async fn get_value(&self, key: &str) -> StoreResult<Option<String>>;
    async fn set_value(&self, key: &str, value: &str) -> StoreResult<()>;

    /// Tells every node's subscribers (PostgreSQL `NOTIFY`) an event on `topic` (a user's events,
    /// the lobby, a game's chat); on SQLite (one node) nothing: the hub delivers it itself.
    async fn publish(&self, topic: &str, json: &str) -> StoreResult<()>;

    /// Whether the store can durably accept writes now (for `/readyz`): reachable, and on SQLite the
    /// database file is still the one that was opened.
    async fn ping(&self) -> StoreResult<()>;

    /// Closes the pools after pending writes are done.
    async fn close(&self);
}
