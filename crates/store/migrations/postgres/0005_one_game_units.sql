-- A unit of one game: an unpaired run (cutechess's `-games 1`) asked for an odd number of
-- games plays its last round as a single game, committed alone. A unit still has the games its
-- tally counts (1 or 2) and its bucket is still its score in half points; a colour-swapped
-- pair always has two (the runner decides which a run has).
--
-- The same rule as migrations/sqlite/0005_one_game_units.sql, which rebuilds the table because
-- SQLite cannot change a CHECK constraint; PostgreSQL replaces the constraint in place.

ALTER TABLE pairs DROP CONSTRAINT pairs_check;
ALTER TABLE pairs ADD CONSTRAINT pairs_check
    CHECK (wins + draws + losses IN (1, 2) AND penta = 2 * wins + draws);
