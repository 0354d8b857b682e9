-- Tuning runs (SPSA): what a run tunes, and one row per finished step.
--
-- A tuning run is a row of `runs` like a match (its name, seed, canonical configuration and
-- the "rerunning resumes it" rule come from there), with two engines, the tuned engine at the
-- plus and at the minus side of a perturbation, and one pairing. What the games of a step
-- decide is not a pair's tally but the next parameter values, so the steps have their own
-- table; `pairs` and `run_totals` stay empty for such a run.
--
-- The same tables as migrations/postgres/0004_tuning_runs.sql.

-- The run's parameter list and hyper-parameters, written in the transaction that creates the
-- run, so that a resumed run tunes exactly what it started with.
CREATE TABLE tuning_runs (
    run_id  INTEGER PRIMARY KEY REFERENCES runs (id),
    -- The tuning method; only SPSA keeps state across games.
    method  TEXT    NOT NULL CHECK (method IN ('spsa')),
    -- JSON: the parameters (names, kinds, ranges, c_end, r_end, start values) and the
    -- hyper-parameters, as the tuner wrote them.
    setup   TEXT    NOT NULL
);

-- One row per finished step, inserted exactly once (key (run, step)) in one transaction: a
-- step killed before its commit is replayed from scratch, one committed is never replayed.
CREATE TABLE tuning_steps (
    run_id           INTEGER NOT NULL REFERENCES tuning_runs (run_id),
    step             INTEGER NOT NULL CHECK (step >= 0),
    -- Pairs played before this step: the SPSA iteration its perturbation was drawn at.
    iteration        INTEGER NOT NULL CHECK (iteration >= 0),
    -- The step's games, from the plus side (engine 0).
    pairs            INTEGER NOT NULL CHECK (pairs >= 1),
    wins             INTEGER NOT NULL CHECK (wins >= 0),
    draws            INTEGER NOT NULL CHECK (draws >= 0),
    losses           INTEGER NOT NULL CHECK (losses >= 0),
    penta_ll         INTEGER NOT NULL CHECK (penta_ll >= 0),
    penta_ld         INTEGER NOT NULL CHECK (penta_ld >= 0),
    penta_dd         INTEGER NOT NULL CHECK (penta_dd >= 0),
    penta_dw         INTEGER NOT NULL CHECK (penta_dw >= 0),
    penta_ww         INTEGER NOT NULL CHECK (penta_ww >= 0),
    -- JSON: the perturbation the games were played at (flips, c, r, plus and minus values).
    perturbation     TEXT    NOT NULL,
    -- JSON: the parameter values after this step's update.
    theta            TEXT    NOT NULL,
    committed_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (run_id, step),
    CHECK (wins + draws + losses = 2 * pairs),
    CHECK (penta_ll + penta_ld + penta_dd + penta_dw + penta_ww = pairs)
);
