-- A finished run's verdict is one of the outcomes arbiter writes (RunOutcome in src/model.rs),
-- and nothing else: the store reads it back as that enum. SQLite cannot add a CHECK to an
-- existing table without rebuilding it (and the tables that refer to it), so two triggers keep
-- the rule for every insert and update; files written before this version hold only H1, H0 and
-- complete, which pass.

CREATE TRIGGER runs_verdict_insert BEFORE INSERT ON runs
WHEN NEW.verdict IS NOT NULL
 AND NEW.verdict NOT IN ('H1', 'H0', 'complete', 'interrupted', 'stopped')
BEGIN
    SELECT RAISE(ABORT, 'runs.verdict must be H1, H0, complete, interrupted or stopped');
END;

CREATE TRIGGER runs_verdict_update BEFORE UPDATE OF verdict ON runs
WHEN NEW.verdict IS NOT NULL
 AND NEW.verdict NOT IN ('H1', 'H0', 'complete', 'interrupted', 'stopped')
BEGIN
    SELECT RAISE(ABORT, 'runs.verdict must be H1, H0, complete, interrupted or stopped');
END;
