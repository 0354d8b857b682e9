-- The facts of a run, written in the transaction that creates it: what a report needs that
-- the pairs and games do not say (kind, statistics model, SPRT, games planned, each engine's
-- clock), as the runner decided them from the checked configuration. A report reads these
-- rather than re-checking the stored configuration text, which a later arbiter may check more
-- strictly. One JSON document, the store's typed `RunFacts` (src/facts.rs says why); NULL for
-- a run created before this version, whose report falls back to its configuration.
--
-- And the link of a confirmation SPRT to the tuning run whose values it confirms, a reference
-- the database keeps (NULL for every other run, and for confirmations created before this
-- version, which a report still finds by their name).
--
-- The same columns as migrations/sqlite/0006_run_facts.sql.

ALTER TABLE runs ADD COLUMN facts TEXT;
ALTER TABLE runs ADD COLUMN confirms_run BIGINT REFERENCES runs (id);

CREATE INDEX runs_by_confirms_run ON runs (confirms_run);
