-- A fleet's submit no longer adds to the run's totals: it commits its batch's pairs and games
-- and marks the batch done, touching no row the run's other submits write, and a second short
-- transaction (the run's advance, crates/store/src/repo/batches.rs) adds every such pair to
-- `run_totals` and `run_pairings`, gives it its place in the commit order and walks the
-- prefix, one WAL flush for however many batches came in meanwhile. Until then a pair has no
-- `sequence`: NULL means counted (its key is taken, its games are stored) but not yet in the
-- totals. A local commit (`commit_pair`) still numbers its pair in its own transaction.
--
-- The same change as migrations/sqlite/0008_deferred_totals.sql, which rebuilds `pairs` and
-- `games` because SQLite cannot drop a NOT NULL; PostgreSQL drops it in place (no row is
-- rewritten). Rows already stored all have their sequence.

ALTER TABLE pairs ALTER COLUMN sequence DROP NOT NULL;

-- The pairs waiting for their run's advance: few at any time, found by run, and by age for
-- the worker that advances a run whose submitter died between its two transactions.
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
