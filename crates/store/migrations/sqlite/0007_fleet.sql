-- The fleet: runs queued for workers on many machines, played in batches leased to them.
--
-- A queued run is an ordinary run (its pairs and games go to `pairs` and `games`, counted
-- once by their key, as on one machine) whose `batch_units` is set: its schedule units, in the
-- runner's order (unit u is pair u / P of pairing u % P, P the run's pairings), are cut into
-- batches of that many units, numbered from 0, all created with the run. A batch is what a
-- worker leases, plays and submits whole: `open` (nobody has it), `leased` (a worker has it
-- until `lease_expires_ms`, on the database's clock), `done` (its pairs are counted; its
-- tally is kept beside them). A lease that expired is taken by the next claim; there is no
-- sweeper. `claims` counts the leases a batch has had: more than one means a worker died or
-- was cut off.
--
-- The verdict is judged on the run's prefix (`run_prefix`): the units 0 .. units-1, all
-- counted, in unit order, whatever order the workers finished them in. So the same
-- configuration and seed reach the same decision after the same games on one machine or a
-- thousand.
--
-- Workers are rows too, so that a run's page can say who played what and when each was last
-- heard from. Files a run needs that workers lack (its opening book) are stored with it.
--
-- The same tables as migrations/postgres/0007_fleet.sql.

ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN worker_limit INTEGER CHECK (worker_limit > 0);
ALTER TABLE runs ADD COLUMN batch_units INTEGER CHECK (batch_units > 0);

ALTER TABLE run_engines ADD COLUMN signature TEXT;

CREATE TABLE workers (
    id                INTEGER  PRIMARY KEY AUTOINCREMENT,
    name              TEXT    NOT NULL UNIQUE,
    host              TEXT    NOT NULL,
    cores             INTEGER  NOT NULL CHECK (cores >= 0),
    version           TEXT    NOT NULL,
    first_contact_ms  INTEGER  NOT NULL,
    last_contact_ms   INTEGER  NOT NULL
);

CREATE TABLE batches (
    run_id            INTEGER  NOT NULL REFERENCES runs (id),
    sequence          INTEGER  NOT NULL CHECK (sequence >= 0),
    first_unit        INTEGER  NOT NULL CHECK (first_unit >= 0),
    units             INTEGER  NOT NULL CHECK (units > 0),
    state             TEXT    NOT NULL CHECK (state IN ('open', 'leased', 'done')),
    worker_id         INTEGER  REFERENCES workers (id),
    lease_expires_ms  INTEGER,
    claims            INTEGER  NOT NULL DEFAULT 0 CHECK (claims >= 0),
    signatures        TEXT,
    submitted_at_ms   INTEGER,
    pairs             INTEGER  NOT NULL DEFAULT 0,
    wins              INTEGER  NOT NULL DEFAULT 0,
    draws             INTEGER  NOT NULL DEFAULT 0,
    losses            INTEGER  NOT NULL DEFAULT 0,
    penta_ll          INTEGER  NOT NULL DEFAULT 0,
    penta_ld          INTEGER  NOT NULL DEFAULT 0,
    penta_dd          INTEGER  NOT NULL DEFAULT 0,
    penta_dw          INTEGER  NOT NULL DEFAULT 0,
    penta_ww          INTEGER  NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, sequence),
    CHECK ((state = 'open' AND worker_id IS NULL AND lease_expires_ms IS NULL)
        OR (state = 'leased' AND worker_id IS NOT NULL AND lease_expires_ms IS NOT NULL)
        OR (state = 'done' AND worker_id IS NOT NULL AND submitted_at_ms IS NOT NULL))
);

CREATE INDEX batches_to_claim ON batches (state, run_id, sequence);
-- A restarted worker's own lease.
CREATE INDEX batches_by_worker ON batches (worker_id, state);
-- The prefix's walk: a run's pairs in unit order (unit = index * P + pairing).
CREATE INDEX pairs_in_unit_order ON pairs (run_id, pair_index, pairing);

CREATE TABLE run_prefix (
    run_id    INTEGER  PRIMARY KEY REFERENCES runs (id),
    units     INTEGER  NOT NULL DEFAULT 0 CHECK (units >= 0),
    pairs     INTEGER  NOT NULL DEFAULT 0,
    wins      INTEGER  NOT NULL DEFAULT 0,
    draws     INTEGER  NOT NULL DEFAULT 0,
    losses    INTEGER  NOT NULL DEFAULT 0,
    penta_ll  INTEGER  NOT NULL DEFAULT 0,
    penta_ld  INTEGER  NOT NULL DEFAULT 0,
    penta_dd  INTEGER  NOT NULL DEFAULT 0,
    penta_dw  INTEGER  NOT NULL DEFAULT 0,
    penta_ww  INTEGER  NOT NULL DEFAULT 0
);

CREATE TABLE run_files (
    run_id   INTEGER  NOT NULL REFERENCES runs (id),
    name     TEXT    NOT NULL,
    sha256   TEXT    NOT NULL,
    content  BLOB    NOT NULL,
    PRIMARY KEY (run_id, name)
);
