-- A finished run's verdict is one of the outcomes arbiter writes (RunOutcome in src/model.rs),
-- and nothing else: the store reads it back as that enum. The same rule as SQLite's triggers in
-- migrations/sqlite/0002_run_outcome_check.sql.

ALTER TABLE runs ADD CONSTRAINT runs_verdict_outcome
    CHECK (verdict IS NULL OR verdict IN ('H1', 'H0', 'complete', 'interrupted', 'stopped'));
