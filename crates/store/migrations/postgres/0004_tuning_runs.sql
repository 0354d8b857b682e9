-- Tuning runs (SPSA): what a run tunes, and one row per finished step.
--
-- A tuning run is a row of `runs` like a match (its name, seed, canonical configuration and
-- the "rerunning resumes it" rule come from there), with two engines, the tuned engine at the
-- plus and at the minus side of a perturbation, and one pairing. What the games of a step
-- decide is not a pair's tally but the next parameter values, so the steps have their own
-- table; `pairs` and `run_totals` stay empty for such a run.
--
-- The same tables as migrations/sqlite/0004_tuning_runs.sql.

-- The run's parameter list and hyper-parameters, written in the transaction that creates the
-- run, so that a resumed run tunes exactly what it started with.
CREATE TABLE tuning_runs (
    run_id  BIGINT  PRIMARY KEY REFERENCES runs (id),
    -- The tuning method; only SPSA keeps state across games.
    method  TEXT    NOT NULL CHECK (method IN ('spsa')),
    -- JSON: the parameters (names, kinds, ranges, c_end, r_end, start values) and the
    -- hyper-parameters, as the tuner wrote them.
    setup   TEXT    NOT NULL
);

-- One row per finished step, inserted exactly once (key (run, step)) in one transaction: a
-- step killed before its commit is replayed from scratch, one committed is never replayed.
CREATE TABLE tuning_steps (
    run_id           BIGINT  NOT NULL REFERENCES tuning_runs (run_id),
    step             BIGINT  NOT NULL CHECK (step >= 0),
    -- Pairs played before this step: the SPSA iteration its perturbation was drawn at.
    iteration        BIGINT  NOT NULL CHECK (iteration >= 0),
    -- The step's games, from the plus side (engine 0).
    pairs            BIGINT  NOT NULL CHECK (pairs >= 1),
    wins             BIGINT  NOT NULL CHECK (wins >= 0),
    draws            BIGINT  NOT NULL CHECK (draws >= 0),
    losses           BIGINT  NOT NULL CHECK (losses >= 0),
    penta_ll         BIGINT  NOT NULL CHECK (penta_ll >= 0),
    penta_ld         BIGINT  NOT NULL CHECK (penta_ld >= 0),
    penta_dd         BIGINT  NOT NULL CHECK (penta_dd >= 0),
    penta_dw         BIGINT  NOT NULL CHECK (penta_dw >= 0),
    penta_ww         BIGINT  NOT NULL CHECK (penta_ww >= 0),
    -- JSON: the perturbation the games were played at (flips, c, r, plus and minus values).
    perturbation     TEXT    NOT NULL,
    -- JSON: the parameter values after this step's update.
    theta            TEXT    NOT NULL,
    committed_at_ms  BIGINT  NOT NULL,
    PRIMARY KEY (run_id, step),
    CHECK (wins + draws + losses = 2 * pairs),
    CHECK (penta_ll + penta_ld + penta_dd + penta_dw + penta_ww = pairs)
);
