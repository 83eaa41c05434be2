-- Lists: with the id in the index, `status IN (…) ORDER BY updated_at DESC, id DESC LIMIT n`
-- merges the index ranges instead of sorting every archived game.
DROP INDEX games_status_updated;
CREATE INDEX games_status_updated ON games (status, updated_at, id);
