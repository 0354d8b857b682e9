-- Engines as content-addressed artifacts: a submitter stores an engine's binary once, under its
-- SHA-256 (hex), and any run whose engine signature is `sha256:HEX` can be played by a worker
-- that lacks the binary: it fetches the artifact, checks its hash and caches it by hash. The
-- same binary submitted for many runs is stored once.
--
-- The same table as migrations/sqlite/0010_artifacts.sql.

CREATE TABLE artifacts (
    sha256         TEXT    NOT NULL PRIMARY KEY,
    size           BIGINT    NOT NULL,
    content        BYTEA   NOT NULL,
    created_at_ms  BIGINT    NOT NULL
);
