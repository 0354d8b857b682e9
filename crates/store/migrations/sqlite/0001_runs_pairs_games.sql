-- Runs, their committed game pairs with both games, and each run's running totals.
--
-- Column for column the same as migrations/postgres/0001_runs_pairs_games.sql: the queries in
-- src/repo.rs are shared by both dialects. Integers are 64-bit (SQLite's INTEGER is), times are
-- milliseconds since the Unix epoch, and text is stored verbatim.

CREATE TABLE runs (
    -- AUTOINCREMENT: a run id is never reused, so `--resume 7` can never reach a different run.
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE,
    -- The run's u64 seed, stored as the i64 with the same bits.
    seed           INTEGER NOT NULL,
    config         TEXT    NOT NULL,
    first_engine   TEXT    NOT NULL,
    second_engine  TEXT    NOT NULL,
    pairs_planned  INTEGER NOT NULL CHECK (pairs_planned >= 0),
    state          TEXT    NOT NULL CHECK (state IN ('running', 'finished')),
    verdict        TEXT,
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL,
    CHECK ((state = 'running' AND verdict IS NULL) OR (state = 'finished' AND verdict IS NOT NULL))
);

-- One row per run, updated in the transaction that commits each pair. Kept apart from `runs` so
-- that the hot row is small and later columns of `runs` (leases, heartbeats) never contend with it.
CREATE TABLE run_totals (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id),
    pairs     INTEGER NOT NULL DEFAULT 0,
    wins      INTEGER NOT NULL DEFAULT 0,
    draws     INTEGER NOT NULL DEFAULT 0,
    losses    INTEGER NOT NULL DEFAULT 0,
    penta_ll  INTEGER NOT NULL DEFAULT 0,
    penta_ld  INTEGER NOT NULL DEFAULT 0,
    penta_dd  INTEGER NOT NULL DEFAULT 0,
    penta_dw  INTEGER NOT NULL DEFAULT 0,
    penta_ww  INTEGER NOT NULL DEFAULT 0
);

-- The exactly-once key: a pair index is present at most once per run.
CREATE TABLE pairs (
    run_id           INTEGER NOT NULL REFERENCES runs (id),
    pair_index       INTEGER NOT NULL CHECK (pair_index >= 0),
    wins             INTEGER NOT NULL CHECK (wins BETWEEN 0 AND 2),
    draws            INTEGER NOT NULL CHECK (draws BETWEEN 0 AND 2),
    losses           INTEGER NOT NULL CHECK (losses BETWEEN 0 AND 2),
    penta            INTEGER NOT NULL CHECK (penta BETWEEN 0 AND 4),
    committed_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (run_id, pair_index),
    CHECK (wins + draws + losses = 2 AND penta = 2 * wins + draws)
);

CREATE TABLE games (
    run_id         INTEGER NOT NULL,
    pair_index     INTEGER NOT NULL,
    game_index     INTEGER NOT NULL CHECK (game_index IN (0, 1)),
    game_number    INTEGER NOT NULL CHECK (game_number >= 0),
    white          TEXT    NOT NULL,
    black          TEXT    NOT NULL,
    result         TEXT    NOT NULL CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
    termination    TEXT    NOT NULL,
    plies          INTEGER NOT NULL CHECK (plies >= 0),
    opening_index  INTEGER NOT NULL CHECK (opening_index >= 0),
    opening_fen    TEXT    NOT NULL,
    pgn            TEXT    NOT NULL,
    json           TEXT    NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    duration_ms    INTEGER NOT NULL CHECK (duration_ms >= 0),
    PRIMARY KEY (run_id, pair_index, game_index),
    FOREIGN KEY (run_id, pair_index) REFERENCES pairs (run_id, pair_index)
);
