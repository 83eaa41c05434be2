-- Players (issue 10): accounts, sessions, API tokens, ratings, seeks, challenges, chat; and the
-- columns of `games` that find a player's games and count their results.
ALTER TABLE games ADD COLUMN white_user TEXT;
ALTER TABLE games ADD COLUMN black_user TEXT;
ALTER TABLE games ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE;
-- 'white', 'black', 'draw' once finished; NULL otherwise.
ALTER TABLE games ADD COLUMN winner TEXT;
CREATE INDEX games_white_user ON games (white_user, updated_at, id) WHERE white_user IS NOT NULL;
CREATE INDEX games_black_user ON games (black_user, updated_at, id) WHERE black_user IS NOT NULL;

-- `id` is the username in lowercase: unique ignoring case.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Personal API tokens, stored as their SHA-256 only.
CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- tower-sessions records (JSON), by session id.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- One Glicko-2 rating per player and variant; `games` doubles as the row's version.
CREATE TABLE perfs (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    variant TEXT NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    vol DOUBLE PRECISION NOT NULL,
    games BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, variant)
);
CREATE INDEX perfs_board ON perfs (variant, rating);

CREATE TABLE rating_history (
    user_id TEXT NOT NULL,
    variant TEXT NOT NULL,
    game_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (user_id, variant, game_id)
);

-- Seeks and challenges: a few searchable columns plus the record as JSON.
CREATE TABLE seeks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- Real-time seeks live while their creator is connected; NULL: correspondence.
    expires_at BIGINT
);
CREATE INDEX seeks_user ON seeks (user_id);

CREATE TABLE challenges (
    id TEXT PRIMARY KEY,
    from_user TEXT NOT NULL,
    to_user TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX challenges_to ON challenges (to_user, status);
CREATE INDEX challenges_from ON challenges (from_user, status);

CREATE TABLE chat (
    id BIGSERIAL PRIMARY KEY,
    game_id TEXT NOT NULL,
    room TEXT NOT NULL,
    at BIGINT NOT NULL,
    line TEXT NOT NULL
);
CREATE INDEX chat_game ON chat (game_id, room, id);
