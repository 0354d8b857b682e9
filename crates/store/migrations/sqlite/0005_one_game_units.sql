-- A unit of one game: an unpaired run (cutechess's `-games 1`) asked for an odd number of
-- games plays its last round as a single game, committed alone. A unit still has the games its
-- tally counts (1 or 2) and its bucket is still its score in half points; a colour-swapped
-- pair always has two (the runner decides which a run has).
--
-- The same rule as migrations/postgres/0005_one_game_units.sql, reached differently: SQLite
-- cannot change a CHECK constraint, so `pairs` is rebuilt, and `games`, which refers to it,
-- with it (dropped first, as migration 3 explains). Columns, keys and rows are unchanged.

CREATE TABLE pairs_v5 (
    run_id           INTEGER NOT NULL,
    pairing          INTEGER NOT NULL CHECK (pairing >= 0),
    pair_index       INTEGER NOT NULL CHECK (pair_index >= 0),
    sequence         INTEGER NOT NULL CHECK (sequence >= 1),
    wins             INTEGER NOT NULL CHECK (wins BETWEEN 0 AND 2),
    draws            INTEGER NOT NULL CHECK (draws BETWEEN 0 AND 2),
    losses           INTEGER NOT NULL CHECK (losses BETWEEN 0 AND 2),
    penta            INTEGER NOT NULL CHECK (penta BETWEEN 0 AND 4),
    committed_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (run_id, pairing, pair_index),
    UNIQUE (run_id, sequence),
    FOREIGN KEY (run_id, pairing) REFERENCES run_pairings (run_id, pairing),
    CHECK (wins + draws + losses IN (1, 2) AND penta = 2 * wins + draws)
);

INSERT INTO pairs_v5 (run_id, pairing, pair_index, sequence, wins, draws, losses, penta,
                      committed_at_ms)
SELECT run_id, pairing, pair_index, sequence, wins, draws, losses, penta, committed_at_ms
FROM pairs;

CREATE TABLE games_v5 (
    run_id         INTEGER NOT NULL,
    pairing        INTEGER NOT NULL,
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
    PRIMARY KEY (run_id, pairing, pair_index, game_index),
    FOREIGN KEY (run_id, pairing, pair_index) REFERENCES pairs_v5 (run_id, pairing, pair_index)
);

INSERT INTO games_v5 (run_id, pairing, pair_index, game_index, game_number, white, black,
                      result, termination, plies, opening_index, opening_fen, pgn, json,
                      started_at_ms, duration_ms)
SELECT run_id, pairing, pair_index, game_index, game_number, white, black, result, termination,
       plies, opening_index, opening_fen, pgn, json, started_at_ms, duration_ms
FROM games;

DROP TABLE games;
DROP TABLE pairs;
ALTER TABLE pairs_v5 RENAME TO pairs;
ALTER TABLE games_v5 RENAME TO games;

CREATE INDEX games_by_number ON games (run_id, game_number);
