-- Games as a small header row plus one row per move (see src/store/mod.rs).
CREATE TABLE games (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL,
    initial_fen TEXT NOT NULL,
    meta TEXT NOT NULL,
    flag_at BIGINT,
    engine_to_move BOOLEAN NOT NULL DEFAULT FALSE,
    lease_owner TEXT,
    lease_until BIGINT
);

-- Lists: by status, most recently updated first.
CREATE INDEX games_status_updated ON games (status, updated_at, id);
-- Start-up reads only live games; a partial index keeps that independent of the archive's size.
CREATE INDEX games_live ON games (id) WHERE status IN ('waiting', 'started');
-- Due jobs: clocks that fall, and engine turns.
CREATE INDEX games_flag_due ON games (flag_at) WHERE status = 'started' AND flag_at IS NOT NULL;
CREATE INDEX games_engine_due ON games (updated_at) WHERE status = 'started' AND engine_to_move;

CREATE TABLE moves (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    ply INTEGER NOT NULL,
    uci TEXT NOT NULL,
    clock_ms BIGINT,
    at BIGINT NOT NULL,
    PRIMARY KEY (game_id, ply)
);

CREATE TABLE kv (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
