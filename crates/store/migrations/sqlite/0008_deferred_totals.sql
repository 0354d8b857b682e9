-- A fleet's submit no longer adds to the run's totals: it commits its batch's pairs and games
-- and marks the batch done, and a second short transaction (the run's advance,
-- crates/store/src/repo/batches.rs) adds every such pair to `run_totals` and `run_pairings`,
-- gives it its place in the commit order and walks the prefix. Until then a pair has no
-- `sequence`: NULL means counted (its key is taken, its games are stored) but not yet in the
-- totals. A local commit (`commit_pair`) still numbers its pair in its own transaction.
--
-- The same change as migrations/postgres/0008_deferred_totals.sql, reached differently:
-- SQLite cannot drop a NOT NULL, so `pairs` is rebuilt, and `games`, which refers to it, with
-- it (as migration 5 did). Columns, keys and rows are unchanged; every stored pair keeps its
-- sequence.

CREATE TABLE pairs_v8 (
    run_id           INTEGER NOT NULL,
    pairing          INTEGER NOT NULL CHECK (pairing >= 0),
    pair_index       INTEGER NOT NULL CHECK (pair_index >= 0),
    sequence         INTEGER CHECK (sequence >= 1),
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

INSERT INTO pairs_v8 (run_id, pairing, pair_index, sequence, wins, draws, losses, penta,
                      committed_at_ms)
SELECT run_id, pairing, pair_index, sequence, wins, draws, losses, penta, committed_at_ms
FROM pairs;

CREATE TABLE games_v8 (
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
    FOREIGN KEY (run_id, pairing, pair_index) REFERENCES pairs_v8 (run_id, pairing, pair_index)
);

INSERT INTO games_v8 (run_id, pairing, pair_index, game_index, game_number, white, black,
                      result, termination, plies, opening_index, opening_fen, pgn, json,
                      started_at_ms, duration_ms)
SELECT run_id, pairing, pair_index, game_index, game_number, white, black, result, termination,
       plies, opening_index, opening_fen, pgn, json, started_at_ms, duration_ms
FROM games;

DROP TABLE games;
DROP TABLE pairs;
ALTER TABLE pairs_v8 RENAME TO pairs;
ALTER TABLE games_v8 RENAME TO games;

CREATE INDEX games_by_number ON games (run_id, game_number);
CREATE INDEX pairs_in_unit_order ON pairs (run_id, pair_index, pairing);
-- The pairs waiting for their run's advance (see the PostgreSQL migration).
CREATE INDEX pairs_to_total ON pairs (run_id, committed_at_ms) WHERE sequence IS NULL;

-- The leases a claim may take over, found by their expiry: the claim's search for a lapsed
-- lease otherwise walks every live lease of the run (one per worker) to find none.
CREATE INDEX batches_lapsed ON batches (run_id, lease_expires_ms) WHERE state = 'leased';

-- A worker's own lease, for its claim after a restart: only leased batches, in the order the
-- claim takes them, so that a plain index scan stops at the first (the index by worker and
-- state it replaces kept every batch the worker ever held, and a bitmap scan of it visited
-- them all).
DROP INDEX batches_by_worker;
CREATE INDEX batches_held ON batches (worker_id, run_id, sequence) WHERE state = 'leased';
