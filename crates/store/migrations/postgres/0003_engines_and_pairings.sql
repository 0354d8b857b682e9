-- Runs of any number of engines: the engines of a run, its pairings (who plays whom, how many
-- pairs, and that pairing's totals), pairs keyed by (run, pairing, pair index) and numbered in
-- commit order, games keyed likewise.
--
-- The same tables as migrations/sqlite/0003_engines_and_pairings.sql, which rebuilds `pairs`
-- and `games` because SQLite cannot change a primary key; PostgreSQL changes them in place
-- (the new columns come last here, which the queries, naming every column, do not mind).
--
-- A database written before this version holds two-engine runs: each becomes engines 0 and 1
-- and one pairing 0 with the run's plan and totals; its pairs are numbered in the order they
-- were committed (ties, within a millisecond, by pair index). The columns first_engine,
-- second_engine and pairs_planned of `runs` stay, filled with engines 0 and 1 and the plan of
-- all pairings, so that a reader of the old columns still reads the truth; the store reads the
-- new tables.

CREATE TABLE run_engines (
    run_id        BIGINT  NOT NULL REFERENCES runs (id),
    -- The engine's place in the run's order: pairings and reports refer to it.
    engine_index  BIGINT  NOT NULL CHECK (engine_index >= 0),
    name          TEXT    NOT NULL,
    PRIMARY KEY (run_id, engine_index),
    UNIQUE (run_id, name)
);

-- One row per pairing, and that pairing's totals from its first engine's side, updated in the
-- transaction that commits each of its pairs (beside run_totals, the run-wide sum).
CREATE TABLE run_pairings (
    run_id         BIGINT  NOT NULL REFERENCES runs (id),
    pairing        BIGINT  NOT NULL CHECK (pairing >= 0),
    first_engine   BIGINT  NOT NULL,
    second_engine  BIGINT  NOT NULL,
    pairs_planned  BIGINT  NOT NULL CHECK (pairs_planned >= 0),
    pairs          BIGINT  NOT NULL DEFAULT 0,
    wins           BIGINT  NOT NULL DEFAULT 0,
    draws          BIGINT  NOT NULL DEFAULT 0,
    losses         BIGINT  NOT NULL DEFAULT 0,
    penta_ll       BIGINT  NOT NULL DEFAULT 0,
    penta_ld       BIGINT  NOT NULL DEFAULT 0,
    penta_dd       BIGINT  NOT NULL DEFAULT 0,
    penta_dw       BIGINT  NOT NULL DEFAULT 0,
    penta_ww       BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, pairing),
    FOREIGN KEY (run_id, first_engine) REFERENCES run_engines (run_id, engine_index),
    FOREIGN KEY (run_id, second_engine) REFERENCES run_engines (run_id, engine_index),
    CHECK (first_engine <> second_engine)
);

-- Until this version the store let the two engines of a run share a name (the runner never
-- did); the second of such a pair is told apart here rather than refuse to open the database.
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
ALTER TABLE games DROP CONSTRAINT games_run_id_pair_index_fkey;
ALTER TABLE games DROP CONSTRAINT games_pkey;
ALTER TABLE pairs DROP CONSTRAINT pairs_pkey;

ALTER TABLE pairs ADD COLUMN pairing BIGINT NOT NULL DEFAULT 0 CHECK (pairing >= 0);
ALTER TABLE pairs ALTER COLUMN pairing DROP DEFAULT;
ALTER TABLE pairs ADD COLUMN sequence BIGINT CHECK (sequence >= 1);
UPDATE pairs SET sequence = numbered.sequence
FROM (SELECT run_id, pair_index,
             ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY committed_at_ms, pair_index)
                 AS sequence
      FROM pairs) AS numbered
WHERE pairs.run_id = numbered.run_id AND pairs.pair_index = numbered.pair_index;
ALTER TABLE pairs ALTER COLUMN sequence SET NOT NULL;
ALTER TABLE pairs ADD PRIMARY KEY (run_id, pairing, pair_index);
ALTER TABLE pairs ADD UNIQUE (run_id, sequence);
ALTER TABLE pairs ADD FOREIGN KEY (run_id, pairing) REFERENCES run_pairings (run_id, pairing);

ALTER TABLE games ADD COLUMN pairing BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ALTER COLUMN pairing DROP DEFAULT;
ALTER TABLE games ADD PRIMARY KEY (run_id, pairing, pair_index, game_index);
ALTER TABLE games ADD FOREIGN KEY (run_id, pairing, pair_index)
    REFERENCES pairs (run_id, pairing, pair_index);

-- A run's games are read in the order the runner numbered them (PGN export, reports).
CREATE INDEX games_by_number ON games (run_id, game_number);
