//! What the store keeps about players ([`PlayerStore`]): accounts, API tokens, login sessions,
//! ratings and their history, seeks, challenges and game chat. The SQL is the same on both
//! backends (sqlx binds `$N` on SQLite too), so one macro, [`impl_player_store!`], writes the
//! implementation for each; only the rating writes of a finished game live in the backends' game
//! transaction (`Change::ratings`).

use super::{db_err, StoreError, StoreResult};
use async_trait::async_trait;

/// An account. `id` is the username in lowercase (unique ignoring case).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRow {
    pub id: String,
    pub username: String,
    /// Argon2id PHC string.
    pub password_hash: String,
    /// `human` or `bot`.
    pub kind: String,
    pub created_at: i64,
}

/// A player's Glicko-2 rating in one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct PerfRow {
    pub user_id: String,
    pub variant: String,
    pub rating: f64,
    pub rd: f64,
    pub vol: f64,
    /// Rated games played; also the row's version.
    pub games: i64,
    pub updated_at: i64,
}

/// A rating change written with a game's result.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingWrite {
    pub perf: PerfRow,
    /// The `games` the row had when the change was computed (0: no row yet).
    pub prev_games: i64,
    pub game_id: String,
}

/// One point of a rating history.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRow {
    pub variant: String,
    pub game_id: String,
    pub at: i64,
    pub rating: f64,
    pub rd: f64,
}

/// A seek or challenge: its record as JSON (the server's types, opaque here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordRow {
    pub id: String,
    pub data: String,
}

/// A player's game counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub all: i64,
    pub rated: i64,
    pub win: i64,
    pub loss: i64,
    pub draw: i64,
    pub playing: i64,
}

/// Writes the rating rows of a finished rated game (inside the game's transaction).
pub(crate) const INSERT_PERF: &str =
    "INSERT INTO perfs (user_id, variant, rating, rd, vol, games, \
     updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (user_id, variant) DO NOTHING";
pub(crate) const UPDATE_PERF: &str =
    "UPDATE perfs SET rating = $3, rd = $4, vol = $5, games = $6, \
     updated_at = $7 WHERE user_id = $1 AND variant = $2 AND games = $8";
pub(crate) const INSERT_HISTORY: &str =
    "INSERT INTO rating_history (user_id, variant, game_id, at, \
     rating, rd) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING";

/// Writes one rating change on either backend's connection or transaction: `Conflict` when the
/// player's row moved since it was read (another game of theirs ended first).
macro_rules! write_rating {
    ($conn:expr, $w:expr) => {{
        let w: &$crate::store::players::RatingWrite = $w;
        let p = &w.perf;
        let done = if w.prev_games == 0 {
            sqlx::query($crate::store::players::INSERT_PERF)
                .bind(&p.user_id)
                .bind(&p.variant)
                .bind(p.rating)
                .bind(p.rd)
                .bind(p.vol)
                .bind(p.games)
                .bind(p.updated_at)
                .execute(&mut *$conn)
                .await
        } else {
            sqlx::query($crate::store::players::UPDATE_PERF)
                .bind(&p.user_id)
                .bind(&p.variant)
                .bind(p.rating)
                .bind(p.rd)
                .bind(p.vol)
                .bind(p.games)
                .bind(p.updated_at)
                .bind(w.prev_games)
                .execute(&mut *$conn)
                .await
        }
        .map_err($crate::store::db_err)?;
        if done.rows_affected() == 0 {
            return Err($crate::store::StoreError::Conflict);
        }
        sqlx::query($crate::store::players::INSERT_HISTORY)
            .bind(&p.user_id)
            .bind(&p.variant)
            .bind(&w.game_id)
            .bind(p.updated_at)
            .bind(p.rating)
            .bind(p.rd)
            .execute(&mut *$conn)
            .await
            .map_err($crate::store::db_err)?;
    }};
}
pub(crate) use write_rating;

/// The players' part of the store. Writes are durable when they return.
#[async_trait]
pub trait PlayerStore: Send + Sync {
    /// `Conflict` if the id (the lowercase username) is taken.
    async fn user_create(&self, u: &UserRow) -> StoreResult<()>;
    async fn user(&self, id: &str) -> StoreResult<Option<UserRow>>;
    async fn user_set_kind(&self, id: &str, kind: &str) -> StoreResult<()>;

    async fn token_create(
        &self,
        hash: &str,
        user_id: &str,
        description: &str,
        at: i64,
    ) -> StoreResult<()>;
    async fn token_count(&self, user_id: &str) -> StoreResult<i64>;
    /// The account of a token (by its hash).
    async fn token_user(&self, hash: &str) -> StoreResult<Option<String>>;

    /// `Conflict` if the session id exists.
    async fn session_create(&self, id: &str, data: &str, expires_at: i64) -> StoreResult<()>;
    async fn session_save(&self, id: &str, data: &str, expires_at: i64) -> StoreResult<()>;
    /// A session that has not expired at `now`.
    async fn session_load(&self, id: &str, now: i64) -> StoreResult<Option<String>>;
    async fn session_delete(&self, id: &str) -> StoreResult<()>;
    async fn sessions_expire(&self, now: i64) -> StoreResult<u64>;

    async fn perfs(&self, user_id: &str) -> StoreResult<Vec<PerfRow>>;
    /// Oldest first.
    async fn rating_history(&self, user_id: &str) -> StoreResult<Vec<HistoryRow>>;
    /// Usernames and ratings in `variant` with `rd <= max_rd` and a rated game since
    /// `active_since`, best first.
    async fn leaderboard(
        &self,
        variant: &str,
        active_since: i64,
        max_rd: f64,
        limit: i64,
    ) -> StoreResult<Vec<(String, PerfRow)>>;

    /// Ids of a player's finished or aborted games, most recently updated first: after the
    /// `(updated_at, id)` key `before` if given, skipping `offset`.
    async fn user_game_ids(
        &self,
        user_id: &str,
        before: Option<(i64, String)>,
        offset: i64,
        limit: i64,
    ) -> StoreResult<Vec<(i64, String)>>;
    /// Ids of a player's started games.
    async fn user_playing_ids(&self, user_id: &str) -> StoreResult<Vec<String>>;
    async fn user_counts(&self, user_id: &str) -> StoreResult<Counts>;

    async fn seek_create(
        &self,
        r: &RecordRow,
        user_id: &str,
        created_at: i64,
        expires_at: Option<i64>,
    ) -> StoreResult<()>;
    /// Seeks alive at `now`, oldest first.
    async fn seeks(&self, now: i64) -> StoreResult<Vec<RecordRow>>;
    /// Removes and returns a seek alive at `now` (one taker only).
    async fn seek_take(&self, id: &str, now: i64) -> StoreResult<Option<RecordRow>>;
    /// Removes a seek of `user_id`; whether it existed.
    async fn seek_delete(&self, id: &str, user_id: &str) -> StoreResult<bool>;
    /// Removes a player's real-time seeks; their ids.
    async fn seeks_drop_realtime(&self, user_id: &str) -> StoreResult<Vec<String>>;
    /// Keeps a player's real-time seeks alive until `until`.
    async fn seeks_touch(&self, user_id: &str, until: i64) -> StoreResult<()>;
    /// Removes the seeks that expired by `now`; their ids.
    async fn seeks_expire(&self, now: i64) -> StoreResult<Vec<String>>;

    async fn challenge_create(
        &self,
        r: &RecordRow,
        from: &str,
        to: &str,
        created_at: i64,
    ) -> StoreResult<()>;
    async fn challenge(&self, id: &str) -> StoreResult<Option<RecordRow>>;
    /// Moves a pending challenge to `status` with its new record; false if it was no longer
    /// pending (one accept only).
    async fn challenge_settle(&self, id: &str, status: &str, data: &str) -> StoreResult<bool>;
    /// A player's pending challenges, both ways, oldest first.
    async fn challenges_of(&self, user_id: &str) -> StoreResult<Vec<RecordRow>>;

    async fn chat_add(&self, game_id: &str, room: &str, at: i64, line: &str) -> StoreResult<()>;
    /// The last `limit` lines of a room, oldest first.
    async fn chat_lines(&self, game_id: &str, room: &str, limit: i64) -> StoreResult<Vec<String>>;
    async fn chat_count(&self, game_id: &str, room: &str) -> StoreResult<i64>;
}

pub(crate) fn perf_row<R>(r: &R) -> StoreResult<PerfRow>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    f64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(PerfRow {
        user_id: r.try_get("user_id").map_err(db_err)?,
        variant: r.try_get("variant").map_err(db_err)?,
        rating: r.try_get("rating").map_err(db_err)?,
        rd: r.try_get("rd").map_err(db_err)?,
        vol: r.try_get("vol").map_err(db_err)?,
        games: r.try_get("games").map_err(db_err)?,
        updated_at: r.try_get("updated_at").map_err(db_err)?,
    })
}

pub(crate) fn user_row<R>(r: &R) -> StoreResult<UserRow>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(UserRow {
        id: r.try_get("id").map_err(db_err)?,
        username: r.try_get("username").map_err(db_err)?,
        password_hash: r.try_get("password_hash").map_err(db_err)?,
        kind: r.try_get("kind").map_err(db_err)?,
        created_at: r.try_get("created_at").map_err(db_err)?,
    })
}

pub(crate) fn history_row<R>(r: &R) -> StoreResult<HistoryRow>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    f64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(HistoryRow {
        variant: r.try_get("variant").map_err(db_err)?,
        game_id: r.try_get("game_id").map_err(db_err)?,
        at: r.try_get("at").map_err(db_err)?,
        rating: r.try_get("rating").map_err(db_err)?,
        rd: r.try_get("rd").map_err(db_err)?,
    })
}

pub(crate) fn record_row<R>(r: &R) -> StoreResult<RecordRow>
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(RecordRow {
        id: r.try_get("id").map_err(db_err)?,
        data: r.try_get("data").map_err(db_err)?,
    })
}

/// `Conflict` when an insert-if-absent inserted nothing.
pub(crate) fn ok_rows(rows: u64) -> StoreResult<()> {
    if rows == 0 {
        Err(StoreError::Conflict)
    } else {
        Ok(())
    }
}

/// Implements [`PlayerStore`] for a backend type with a `pool()` method (its sqlx pool) and a
/// `written()` method (checks after a write that it is durable: SQLite's file guard).
macro_rules! impl_player_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::store::players::PlayerStore for $store {
            async fn user_create(
                &self,
                u: &$crate::store::players::UserRow,
            ) -> $crate::store::StoreResult<()> {
                let done = sqlx::query(
                    "INSERT INTO users (id, username, password_hash, kind, created_at)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                )
                .bind(&u.id)
                .bind(&u.username)
                .bind(&u.password_hash)
                .bind(&u.kind)
                .bind(u.created_at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()?;
                $crate::store::players::ok_rows(done.rows_affected())
            }

            async fn user(
                &self,
                id: &str,
            ) -> $crate::store::StoreResult<Option<$crate::store::players::UserRow>> {
                let row = sqlx::query(
                    "SELECT id, username, password_hash, kind, created_at FROM users WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                row.as_ref()
                    .map($crate::store::players::user_row)
                    .transpose()
            }

            async fn user_set_kind(&self, id: &str, kind: &str) -> $crate::store::StoreResult<()> {
                sqlx::query("UPDATE users SET kind = $2 WHERE id = $1")
                    .bind(id)
                    .bind(kind)
                    .execute(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn token_create(
                &self,
                hash: &str,
                user_id: &str,
                description: &str,
                at: i64,
            ) -> $crate::store::StoreResult<()> {
                sqlx::query(
                    "INSERT INTO tokens (hash, user_id, description, created_at)
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(hash)
                .bind(user_id)
                .bind(description)
                .bind(at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn token_count(&self, user_id: &str) -> $crate::store::StoreResult<i64> {
                sqlx::query_scalar("SELECT COUNT(*) FROM tokens WHERE user_id = $1")
                    .bind(user_id)
                    .fetch_one(self.pool())
                    .await
                    .map_err($crate::store::db_err)
            }

            async fn token_user(&self, hash: &str) -> $crate::store::StoreResult<Option<String>> {
                sqlx::query_scalar("SELECT user_id FROM tokens WHERE hash = $1")
                    .bind(hash)
                    .fetch_optional(self.pool())
                    .await
                    .map_err($crate::store::db_err)
            }

            async fn session_create(
                &self,
                id: &str,
                data: &str,
                expires_at: i64,
            ) -> $crate::store::StoreResult<()> {
                let done = sqlx::query(
                    "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3)
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(id)
                .bind(data)
                .bind(expires_at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()?;
                $crate::store::players::ok_rows(done.rows_affected())
            }

            async fn session_save(
                &self,
                id: &str,
                data: &str,
                expires_at: i64,
            ) -> $crate::store::StoreResult<()> {
                sqlx::query(
                    "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3)
                     ON CONFLICT (id) DO UPDATE SET data = excluded.data,
                     expires_at = excluded.expires_at",
                )
                .bind(id)
                .bind(data)
                .bind(expires_at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn session_load(
                &self,
                id: &str,
                now: i64,
            ) -> $crate::store::StoreResult<Option<String>> {
                sqlx::query_scalar("SELECT data FROM sessions WHERE id = $1 AND expires_at > $2")
                    .bind(id)
                    .bind(now)
                    .fetch_optional(self.pool())
                    .await
                    .map_err($crate::store::db_err)
            }

            async fn session_delete(&self, id: &str) -> $crate::store::StoreResult<()> {
                sqlx::query("DELETE FROM sessions WHERE id = $1")
                    .bind(id)
                    .execute(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn sessions_expire(&self, now: i64) -> $crate::store::StoreResult<u64> {
                let done = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
                    .bind(now)
                    .execute(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                Ok(done.rows_affected())
            }

            async fn perfs(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<Vec<$crate::store::players::PerfRow>> {
                let rows = sqlx::query(
                    "SELECT user_id, variant, rating, rd, vol, games, updated_at FROM perfs
                     WHERE user_id = $1",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter().map($crate::store::players::perf_row).collect()
            }

            async fn rating_history(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<Vec<$crate::store::players::HistoryRow>> {
                let rows = sqlx::query(
                    "SELECT variant, game_id, at, rating, rd FROM rating_history
                     WHERE user_id = $1 ORDER BY at, game_id",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter()
                    .map($crate::store::players::history_row)
                    .collect()
            }

            async fn leaderboard(
                &self,
                variant: &str,
                active_since: i64,
                max_rd: f64,
                limit: i64,
            ) -> $crate::store::StoreResult<Vec<(String, $crate::store::players::PerfRow)>> {
                use sqlx::Row;
                let rows = sqlx::query(
                    "SELECT p.user_id, p.variant, p.rating, p.rd, p.vol, p.games, p.updated_at,
                            u.username
                     FROM perfs p JOIN users u ON u.id = p.user_id
                     WHERE p.variant = $1 AND p.updated_at >= $2 AND p.rd <= $3
                     ORDER BY p.rating DESC, p.user_id LIMIT $4",
                )
                .bind(variant)
                .bind(active_since)
                .bind(max_rd)
                .bind(limit)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter()
                    .map(|r| {
                        Ok((
                            r.try_get("username").map_err($crate::store::db_err)?,
                            $crate::store::players::perf_row(r)?,
                        ))
                    })
                    .collect()
            }

            async fn user_game_ids(
                &self,
                user_id: &str,
                before: Option<(i64, String)>,
                offset: i64,
                limit: i64,
            ) -> $crate::store::StoreResult<Vec<(i64, String)>> {
                use sqlx::Row;
                // Two index ranges (one per seat) merged; `before` is a keyset cursor.
                let (b_at, b_id) = before.unwrap_or((i64::MAX, String::new()));
                let all = b_id.is_empty();
                let rows = sqlx::query(
                    "SELECT updated_at, id FROM games
                     WHERE (white_user = $1 OR black_user = $1)
                       AND status IN ('finished', 'aborted')
                       AND ($2 OR updated_at < $3 OR (updated_at = $3 AND id < $4))
                     ORDER BY updated_at DESC, id DESC LIMIT $5 OFFSET $6",
                )
                .bind(user_id)
                .bind(all)
                .bind(b_at)
                .bind(b_id)
                .bind(limit)
                .bind(offset)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter()
                    .map(|r| {
                        Ok((
                            r.try_get(0).map_err($crate::store::db_err)?,
                            r.try_get(1).map_err($crate::store::db_err)?,
                        ))
                    })
                    .collect()
            }

            async fn user_playing_ids(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<Vec<String>> {
                sqlx::query_scalar(
                    "SELECT id FROM games WHERE (white_user = $1 OR black_user = $1)
                     AND status IN ('waiting', 'started') ORDER BY updated_at DESC LIMIT 500",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)
            }

            async fn user_counts(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<$crate::store::players::Counts> {
                use sqlx::Row;
                let rows = sqlx::query(
                    "SELECT status, rated, winner,
                            CASE WHEN white_user = $1 THEN 'white' ELSE 'black' END AS seat,
                            COUNT(*) AS n
                     FROM games WHERE white_user = $1 OR black_user = $1
                     GROUP BY status, rated, winner, seat",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                let mut c = $crate::store::players::Counts::default();
                for r in &rows {
                    let status: String = r.try_get("status").map_err($crate::store::db_err)?;
                    let rated: bool = r.try_get("rated").map_err($crate::store::db_err)?;
                    let winner: Option<String> =
                        r.try_get("winner").map_err($crate::store::db_err)?;
                    let seat: String = r.try_get("seat").map_err($crate::store::db_err)?;
                    let n: i64 = r.try_get("n").map_err($crate::store::db_err)?;
                    match status.as_str() {
                        "started" => c.playing += n,
                        "finished" => {
                            c.all += n;
                            if rated {
                                c.rated += n;
                            }
                            match winner.as_deref() {
                                Some("draw") => c.draw += n,
                                Some(w) if w == seat => c.win += n,
                                Some(_) => c.loss += n,
                                None => {}
                            }
                        }
                        _ => {}
                    }
                }
                Ok(c)
            }

            async fn seek_create(
                &self,
                r: &$crate::store::players::RecordRow,
                user_id: &str,
                created_at: i64,
                expires_at: Option<i64>,
            ) -> $crate::store::StoreResult<()> {
                sqlx::query(
                    "INSERT INTO seeks (id, user_id, data, created_at, expires_at)
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&r.id)
                .bind(user_id)
                .bind(&r.data)
                .bind(created_at)
                .bind(expires_at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn seeks(
                &self,
                now: i64,
            ) -> $crate::store::StoreResult<Vec<$crate::store::players::RecordRow>> {
                let rows = sqlx::query(
                    "SELECT id, data FROM seeks WHERE expires_at IS NULL OR expires_at > $1
                     ORDER BY created_at, id LIMIT 1000",
                )
                .bind(now)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter().map($crate::store::players::record_row).collect()
            }

            async fn seek_take(
                &self,
                id: &str,
                now: i64,
            ) -> $crate::store::StoreResult<Option<$crate::store::players::RecordRow>> {
                let row = sqlx::query(
                    "DELETE FROM seeks WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)
                     RETURNING id, data",
                )
                .bind(id)
                .bind(now)
                .fetch_optional(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()?;
                row.as_ref().map($crate::store::players::record_row).transpose()
            }

            async fn seek_delete(
                &self,
                id: &str,
                user_id: &str,
            ) -> $crate::store::StoreResult<bool> {
                let done = sqlx::query("DELETE FROM seeks WHERE id = $1 AND user_id = $2")
                    .bind(id)
                    .bind(user_id)
                    .execute(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                self.written()?;
                Ok(done.rows_affected() > 0)
            }

            async fn seeks_drop_realtime(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<Vec<String>> {
                let ids = sqlx::query_scalar(
                    "DELETE FROM seeks WHERE user_id = $1 AND expires_at IS NOT NULL RETURNING id",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()?;
                Ok(ids)
            }

            async fn seeks_touch(&self, user_id: &str, until: i64) -> $crate::store::StoreResult<()> {
                sqlx::query(
                    "UPDATE seeks SET expires_at = $2 WHERE user_id = $1 AND expires_at IS NOT NULL",
                )
                .bind(user_id)
                .bind(until)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                Ok(())
            }

            async fn seeks_expire(&self, now: i64) -> $crate::store::StoreResult<Vec<String>> {
                sqlx::query_scalar("DELETE FROM seeks WHERE expires_at <= $1 RETURNING id")
                    .bind(now)
                    .fetch_all(self.pool())
                    .await
                    .map_err($crate::store::db_err)
            }

            async fn challenge_create(
                &self,
                r: &$crate::store::players::RecordRow,
                from: &str,
                to: &str,
                created_at: i64,
            ) -> $crate::store::StoreResult<()> {
                sqlx::query(
                    "INSERT INTO challenges (id, from_user, to_user, status, data, created_at)
                     VALUES ($1, $2, $3, 'pending', $4, $5)",
                )
                .bind(&r.id)
                .bind(from)
                .bind(to)
                .bind(&r.data)
                .bind(created_at)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn challenge(
                &self,
                id: &str,
            ) -> $crate::store::StoreResult<Option<$crate::store::players::RecordRow>> {
                let row = sqlx::query("SELECT id, data FROM challenges WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                row.as_ref().map($crate::store::players::record_row).transpose()
            }

            async fn challenge_settle(
                &self,
                id: &str,
                status: &str,
                data: &str,
            ) -> $crate::store::StoreResult<bool> {
                let done = sqlx::query(
                    "UPDATE challenges SET status = $2, data = $3
                     WHERE id = $1 AND status = 'pending'",
                )
                .bind(id)
                .bind(status)
                .bind(data)
                .execute(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                self.written()?;
                Ok(done.rows_affected() > 0)
            }

            async fn challenges_of(
                &self,
                user_id: &str,
            ) -> $crate::store::StoreResult<Vec<$crate::store::players::RecordRow>> {
                let rows = sqlx::query(
                    "SELECT id, data FROM challenges
                     WHERE (to_user = $1 OR from_user = $1) AND status = 'pending'
                     ORDER BY created_at, id LIMIT 200",
                )
                .bind(user_id)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                rows.iter().map($crate::store::players::record_row).collect()
            }

            async fn chat_add(
                &self,
                game_id: &str,
                room: &str,
                at: i64,
                line: &str,
            ) -> $crate::store::StoreResult<()> {
                sqlx::query("INSERT INTO chat (game_id, room, at, line) VALUES ($1, $2, $3, $4)")
                    .bind(game_id)
                    .bind(room)
                    .bind(at)
                    .bind(line)
                    .execute(self.pool())
                    .await
                    .map_err($crate::store::db_err)?;
                self.written()
            }

            async fn chat_lines(
                &self,
                game_id: &str,
                room: &str,
                limit: i64,
            ) -> $crate::store::StoreResult<Vec<String>> {
                let mut lines: Vec<String> = sqlx::query_scalar(
                    "SELECT line FROM chat WHERE game_id = $1 AND room = $2
                     ORDER BY id DESC LIMIT $3",
                )
                .bind(game_id)
                .bind(room)
                .bind(limit)
                .fetch_all(self.pool())
                .await
                .map_err($crate::store::db_err)?;
                lines.reverse();
                Ok(lines)
            }

            async fn chat_count(&self, game_id: &str, room: &str) -> $crate::store::StoreResult<i64> {
                sqlx::query_scalar("SELECT COUNT(*) FROM chat WHERE game_id = $1 AND room = $2")
                    .bind(game_id)
                    .bind(room)
                    .fetch_one(self.pool())
                    .await
                    .map_err($crate::store::db_err)
            }
        }
    };
}
pub(crate) use impl_player_store;
