-- Runs of any number of engines: the engines of a run, its pairings (who plays whom, how many
-- pairs, and that pairing's totals), pairs keyed by (run, pairing, pair index) and numbered in
-- commit order, games keyed likewise.
--
-- The same tables as migrations/postgres/0003_engines_and_pairings.sql, reached differently:
-- SQLite cannot change a primary key in place, so `pairs` and `games` are rebuilt (create the
-- new table, copy, drop the old, rename). sqlx's connections have foreign keys on and a
-- migration runs inside a transaction, where that pragma cannot be switched off: so `games` is
-- dropped before the `pairs` it refers to, and the new tables refer only to each other.
--
-- A file written before this version holds two-engine runs: each becomes engines 0 and 1 and
-- one pairing 0 with the run's plan and totals; its pairs are numbered in the order they were
-- committed (ties, within a millisecond, by pair index). The columns first_engine,
-- second_engine and pairs_planned of `runs` stay, filled with engines 0 and 1 and the plan of
-- all pairings, so that a reader of the old columns still reads the truth; the store reads the
-- new tables.

CREATE TABLE run_engines (
    run_id        INTEGER NOT NULL REFERENCES runs (id),
    -- The engine's place in the run's order: pairings and reports refer to it.
    engine_index  INTEGER NOT NULL CHECK (engine_index >= 0),
    name          TEXT    NOT NULL,
    PRIMARY KEY (run_id, engine_index),
    UNIQUE (run_id, name)
);

-- One row per pairing, and that pairing's totals from its first engine's side, updated in the
-- transaction that commits each of its pairs (beside run_totals, the run-wide sum).
CREATE TABLE run_pairings (
    run_id         INTEGER NOT NULL REFERENCES runs (id),
    pairing        INTEGER NOT NULL CHECK (pairing >= 0),
    first_engine   INTEGER NOT NULL,
    second_engine  INTEGER NOT NULL,
    pairs_planned  INTEGER NOT NULL CHECK (pairs_planned >= 0),
    pairs          INTEGER NOT NULL DEFAULT 0,
    wins           INTEGER NOT NULL DEFAULT 0,
    draws          INTEGER NOT NULL DEFAULT 0,
    losses         INTEGER NOT NULL DEFAULT 0,
    penta_ll       INTEGER NOT NULL DEFAULT 0,
    penta_ld       INTEGER NOT NULL DEFAULT 0,
    penta_dd       INTEGER NOT NULL DEFAULT 0,
    penta_dw       INTEGER NOT NULL DEFAULT 0,
    penta_ww       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, pairing),
    FOREIGN KEY (run_id, first_engine) REFERENCES run_engines (run_id, engine_index),
    FOREIGN KEY (run_id, second_engine) REFERENCES run_engines (run_id, engine_index),
    CHECK (first_engine <> second_engine)
);

-- Until this version the store let the two engines of a run share a name (the runner never
-- did); the second of such a pair is told apart here rather than refuse to open the file.
INSERT INTO run_engines (run_id, engine_index, name)
SELECT id, 0, first_engine FROM runs;
INSERT INTO run_engines (run_id, engine_index, name)
SELECT id, 1, CASE WHEN second_engine = first_engine THEN second_engine || ' (2)'
                   ELSE second_engine END
FROM runs;

INSERT INTO run_pairings (run_id, pairing, first_engine, second_engine, pairs_planned, pairs,
                          wins, draws, losses, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww)
SELECT r.id, 0, 0, 1, r.pairs_planned, COALESCE(t.pairs, 0), COALESCE(t.wins, 0),
       COALESCE(t.draws, 0), COALESCE(t.losses, 0), COALESCE(t.penta_ll, 0),
       COALESCE(t.penta_ld, 0), COALESCE(t.penta_dd, 0), COALESCE(t.penta_dw, 0),
       COALESCE(t.penta_ww, 0)
FROM runs r LEFT JOIN run_totals t ON t.run_id = r.id;

-- The exactly-once key is now (run, pairing, pair index); `sequence` numbers a run's pairs in
-- the order they were committed, from 1 (run_totals.pairs after the pair was added).
CREATE TABLE pairs_v3 (
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
    CHECK (wins + draws + losses = 2 AND penta = 2 * wins + draws)
);

INSERT INTO pairs_v3 (run_id, pairing, pair_index, sequence, wins, draws, losses, penta,
                      committed_at_ms)
SELECT run_id, 0, pair_index,
       ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY committed_at_ms, pair_index),
       wins, draws, losses, penta, committed_at_ms
FROM pairs;

CREATE TABLE games_v3 (
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
    FOREIGN KEY (run_id, pairing, pair_index) REFERENCES pairs_v3 (run_id, pairing, pair_index)
);

INSERT INTO games_v3 (run_id, pairing, pair_index, game_index, game_number, white, black,
                      result, termination, plies, opening_index, opening_fen, pgn, json,
                      started_at_ms, duration_ms)
SELECT run_id, 0, pair_index, game_index, game_number, white, black, result, termination,
       plies, opening_index, opening_fen, pgn, json, started_at_ms, duration_ms
FROM games;

DROP TABLE games;
DROP TABLE pairs;
-- Renaming also rewrites games_v3's reference to pairs_v3.
ALTER TABLE pairs_v3 RENAME TO pairs;
ALTER TABLE games_v3 RENAME TO games;

-- A run's games are read in the order the runner numbered them (PGN export, reports).
CREATE INDEX games_by_number ON games (run_id, game_number);
