-- API tokens for `arbiter serve`: workers and people that reach the fleet over HTTP hold a
-- bearer token instead of the database's credentials.
--
-- A token has a name (what `arbiter admin token list` and `revoke` call it) and a scope (what
-- it may do: a worker's routes, a user's, or everything). Its secret is shown once, when it is
-- created, and only the secret's SHA-256 is kept (hex): a leaked backup of the database holds no
-- usable secret. A plain hash is enough because a secret is 256 random bits, not a password
-- that could be guessed. A revoked token keeps its row (and the time it was revoked), so that
-- the workers it registered still name it.
--
-- A worker registered through a token is bound to it (`workers.token_id`): another token cannot
-- register a worker of the same name and take over its leases. Workers registered straight on
-- the database (`arbiter worker --db`) have none.
--
-- The same tables as migrations/postgres/0009_tokens.sql.

CREATE TABLE tokens (
    id             INTEGER  PRIMARY KEY AUTOINCREMENT,
    name           TEXT     NOT NULL UNIQUE,
    scope          TEXT     NOT NULL CHECK (scope IN ('worker', 'user', 'admin')),
    secret_hash    TEXT     NOT NULL UNIQUE,
    created_at_ms  INTEGER  NOT NULL,
    revoked_at_ms  INTEGER
);

ALTER TABLE workers ADD COLUMN token_id INTEGER REFERENCES tokens (id);
