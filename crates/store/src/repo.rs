//! The store's SQL, written once for every dialect.
//!
//! [`Repo`] is generic over the sqlx [`Database`]; what differs between SQLite and PostgreSQL is
//! the [`Dialect`] trait (three constants) and the migrations. The queries use only what both
//! dialects accept: `$n` placeholders (SQLite reads `$1` as parameter 1), `INSERT ... ON CONFLICT
//! ... DO NOTHING`, `RETURNING` (SQLite 3.35+, and sqlx bundles a newer one), 64-bit integers and
//! text. Times are integer milliseconds computed here, not `now()`, so no date function is needed.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use sqlx::error::ErrorKind;
use sqlx::migrate::Migrate;
use sqlx::{
    ColumnIndex, Connection, Database, Decode, Encode, Executor, IntoArguments, Pool, Row, Type,
};

use crate::error::{Result, StoreError};
use crate::migrations::{self, Source};
use crate::model::{
    Committed, GameResult, GameRow, PairRecord, PairTally, Run, RunId, RunOutcome, RunSpec,
    RunState, StoredGame, Totals,
};

/// What differs between the SQL dialects, beyond their migrations.
pub(crate) trait Dialect: Database {
    /// The dialect's migrations, oldest first.
    const MIGRATIONS: &'static [Source];
    /// Names the tables of the database (PostgreSQL: of the current schema), one text column.
    const LIST_TABLES: &'static str;
    /// Starts a transaction that will write.
    ///
    /// SQLite's plain `BEGIN` takes the write lock only at the first write; if another process
    /// wrote in between, SQLite returns "database is locked" at once instead of waiting.
    /// `BEGIN IMMEDIATE` takes the lock up front, under the busy timeout.
    const BEGIN_WRITE: &'static str;
}

/// The columns of a [`Run`], in the order [`Repo::decode_run`] reads them.
const RUN_COLUMNS: &str = "SELECT id, name, seed, config, first_engine, second_engine, \
    pairs_planned, state, verdict, created_at_ms, updated_at_ms FROM runs";

/// A store on one database: a pool that writes and a pool that reads (the same pool where the
/// database allows concurrent writers).
pub(crate) struct Repo<DB: Database> {
    writer: Pool<DB>,
    reader: Pool<DB>,
    location: Arc<str>,
}

impl<DB> Repo<DB>
where
    DB: Dialect,
    DB::Connection: Migrate,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    i64: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    String: for<'q> Encode<'q, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
{
    /// Wraps pools that are already connected; call [`Repo::prepare`] before anything else.
    pub(crate) fn new(writer: Pool<DB>, reader: Pool<DB>, location: Arc<str>) -> Self {
        Repo {
            writer,
            reader,
            location,
        }
    }

    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The pool that writes (the one pool, on PostgreSQL).
    #[cfg_attr(
        not(feature = "postgres"),
        allow(dead_code, reason = "used by the PostgreSQL backend only")
    )]
    pub(crate) fn writer(&self) -> &Pool<DB> {
        &self.writer
    }

    /// The pool that reads.
    pub(crate) fn reader(&self) -> &Pool<DB> {
        &self.reader
    }

    /// Checks that the database is arbiter's (or empty) and no newer than this build, then
    /// applies the migrations it lacks, as one exclusive step.
    ///
    /// Processes that open one new database at once must not both find it empty and both create
    /// its tables (the second failing with "table runs already exists"). So the check and the
    /// migrations run on one connection holding the database's write lock from before the check
    /// to after the last migration: sqlx's migration lock (a PostgreSQL advisory lock; nothing on
    /// SQLite) and a transaction begun with [`Dialect::BEGIN_WRITE`] (on SQLite `BEGIN
    /// IMMEDIATE`, which waits for other writers under the busy timeout). The others wait, then
    /// find the schema current and change nothing. Each migration runs in a savepoint inside
    /// that transaction, so a failure leaves the database as it was.
    pub(crate) async fn prepare(&self) -> Result<()> {
        let mut conn = self
            .writer
            .acquire()
            .await
            .map_err(|e| self.fail("connecting", e))?;
        conn.lock().await.map_err(|e| self.migrate_failed(e))?;
        let prepared = self.check_and_migrate(&mut conn).await;
        let unlocked = conn.unlock().await.map_err(|e| self.migrate_failed(e));
        prepared.and(unlocked)
    }

    async fn check_and_migrate(&self, conn: &mut DB::Connection) -> Result<()> {
        let operation = "checking the schema";
        let mut tx = conn
            .begin_with(DB::BEGIN_WRITE)
            .await
            .map_err(|e| self.fail(operation, e))?;
        let tables: Vec<String> = sqlx::query(DB::LIST_TABLES)
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.fail("reading the list of tables", e))?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| self.fail("reading the list of tables", e))?;
        let has = |name: &str| tables.iter().any(|t| t == name);
        let applied: Option<i64> = if has("_sqlx_migrations") {
            sqlx::query("SELECT MAX(version) FROM _sqlx_migrations")
                .fetch_one(&mut *tx)
                .await
                .and_then(|row| row.try_get(0))
                .map_err(|e| self.fail("reading the schema version", e))?
        } else {
            None
        };
        let supported = migrations::latest(DB::MIGRATIONS);
        match applied {
            None => {
                let others: Vec<&str> = tables
                    .iter()
                    .map(String::as_str)
                    .filter(|&t| t != "_sqlx_migrations")
                    .collect();
                if !others.is_empty() {
                    return Err(
                        self.not_ours(format!("it already has tables: {}", others.join(", ")))
                    );
                }
            }
            Some(found) if !has("runs") => {
                return Err(self.not_ours(format!(
                    "its schema (version {found}) is some other program's"
                )));
            }
            Some(found) if found > supported => {
                return Err(StoreError::NewerSchema {
                    location: self.location.to_string(),
                    found,
                    supported,
                });
            }
            Some(_) => {}
        }
        migrations::migrator(DB::MIGRATIONS)
            .run_direct(None, &mut *tx, false)
            .await
            .map_err(|e| self.migrate_failed(e))?;
        tx.commit().await.map_err(|e| self.fail(operation, e))
    }

    /// Stores a new run, with zero totals, in state `running`.
    pub(crate) async fn create_run(&self, spec: &RunSpec) -> Result<RunId> {
        let planned = i64::try_from(spec.pairs_planned).map_err(|_| StoreError::InvalidRun {
            location: self.location.to_string(),
            name: spec.name.clone(),
            reason: format!("{} planned pairs exceed 2^63 - 1", spec.pairs_planned),
        })?;
        let now = now_ms();
        let operation = || format!("creating run {:?}", spec.name);
        let mut tx = self.begin_write(&operation).await?;
        let id: Option<i64> = sqlx::query(
            "INSERT INTO runs (name, seed, config, first_engine, second_engine, pairs_planned, \
             state, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $7) \
             ON CONFLICT (name) DO NOTHING RETURNING id",
        )
        .bind(spec.name.as_str())
        .bind(seed_to_i64(spec.seed))
        .bind(spec.config.as_str())
        .bind(spec.first_engine.as_str())
        .bind(spec.second_engine.as_str())
        .bind(planned)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await
        .and_then(|row| row.map(|row| row.try_get(0)).transpose())
        .map_err(|e| self.fail(operation(), e))?;
        let Some(id) = id else {
            drop(tx);
            return Err(match self.find_run_by_name(&spec.name).await? {
                Some(existing) => StoreError::DuplicateRunName {
                    location: self.location.to_string(),
                    name: spec.name.clone(),
                    existing: existing.id,
                },
                None => self.corrupt(
                    "runs",
                    format!("the name {:?} conflicts but no run has it", spec.name),
                ),
            });
        };
        sqlx::query("INSERT INTO run_totals (run_id) VALUES ($1)")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(RunId::new(id))
    }

    pub(crate) async fn find_run_by_name(&self, name: &str) -> Result<Option<Run>> {
        let operation = || format!("looking up run {name:?}");
        let sql = format!("{RUN_COLUMNS} WHERE name = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(operation(), e))?;
        row.map(|row| self.decode_run(&row)).transpose()
    }

    pub(crate) async fn run(&self, run: RunId) -> Result<Run> {
        let sql = format!("{RUN_COLUMNS} WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(run.get())
            .fetch_optional(&self.reader)
            .await
            .map_err(|e| self.fail(format!("reading run {run}"), e))?;
        match row {
            Some(row) => self.decode_run(&row),
            None => Err(self.unknown(run)),
        }
    }

    pub(crate) async fn runs(&self) -> Result<Vec<Run>> {
        let sql = format!("{RUN_COLUMNS} ORDER BY id");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.reader)
            .await
            .map_err(|e| self.fail("listing runs", e))?
            .iter()
            .map(|row| self.decode_run(row))
            .collect()
    }

    pub(crate) async fn finish_run(&self, run: RunId, verdict: RunOutcome) -> Result<()> {
        let operation = || format!("finishing run {run}");
        let mut tx = self.begin_write(&operation).await?;
        let finished = sqlx::query(
            "UPDATE runs SET state = 'finished', verdict = $2, updated_at_ms = $3 \
             WHERE id = $1 AND state = 'running' RETURNING id",
        )
        .bind(run.get())
        .bind(verdict.as_str())
        .bind(now_ms())
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if finished.is_none() {
            drop(tx);
            return Err(self.why_closed(run).await);
        }
        tx.commit().await.map_err(|e| self.fail(operation(), e))
    }

    /// The one transaction that makes a pair count: pair row, its games, the totals.
    pub(crate) async fn commit_pair(&self, pair: &PairRecord) -> Result<Committed> {
        let run = pair.run;
        let invalid = |reason: String| StoreError::InvalidPair {
            location: self.location.to_string(),
            run,
            pair_index: pair.pair_index,
            reason,
        };
        if let Some(reason) = pair.tally.inconsistency() {
            return Err(invalid(reason));
        }
        let pair_index = i64::try_from(pair.pair_index)
            .map_err(|_| invalid("the index does not fit a 64-bit signed integer".into()))?;
        let games = [
            GameValues::new(&pair.games[0]),
            GameValues::new(&pair.games[1]),
        ];
        let games = match games {
            [Some(a), Some(b)] => [a, b],
            _ => {
                return Err(invalid(
                    "a game number or opening index exceeds 2^63 - 1".into(),
                ))
            }
        };
        let operation = || format!("committing pair {} of run {run}", pair.pair_index);
        let now = now_ms();
        let PairTally {
            wins,
            draws,
            losses,
            penta,
        } = pair.tally;

        let mut tx = self.begin_write(&operation).await?;

        // 1. The exactly-once key. A pair already present inserts nothing and changes nothing.
        let inserted = sqlx::query(
            "INSERT INTO pairs (run_id, pair_index, wins, draws, losses, penta, committed_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (run_id, pair_index) DO NOTHING RETURNING pair_index",
        )
        .bind(run.get())
        .bind(pair_index)
        .bind(i64::from(wins))
        .bind(i64::from(draws))
        .bind(i64::from(losses))
        .bind(i64::from(penta))
        .bind(now)
        .fetch_optional(&mut *tx)
        .await;
        match inserted {
            Ok(Some(_)) => {}
            Ok(None) => {
                tx.rollback().await.map_err(|e| self.fail(operation(), e))?;
                return Ok(Committed::AlreadyPresent);
            }
            Err(e) if kind(&e) == Some(ErrorKind::ForeignKeyViolation) => {
                return Err(self.unknown(run));
            }
            Err(e) => return Err(self.fail(operation(), e)),
        }

        // 2. Only a running run takes pairs, and only those its schedule has. On PostgreSQL this
        //    also locks the run's row, so a concurrent `finish_run` goes strictly before or after.
        let open = sqlx::query(
            "UPDATE runs SET updated_at_ms = $2 \
             WHERE id = $1 AND state = 'running' AND pairs_planned > $3 RETURNING id",
        )
        .bind(run.get())
        .bind(now)
        .bind(pair_index)
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if open.is_none() {
            drop(tx);
            return Err(match self.run(run).await? {
                Run {
                    state: RunState::Finished { verdict },
                    ..
                } => StoreError::RunFinished {
                    location: self.location.to_string(),
                    run,
                    verdict,
                },
                Run { spec, .. } => invalid(format!(
                    "the run's schedule has {} pairs (indices 0 to {})",
                    spec.pairs_planned,
                    spec.pairs_planned.saturating_sub(1)
                )),
            });
        }

        // 3. Both games, PGN and JSON included: a counted pair always has its games.
        let mut insert_games = sqlx::query(
            "INSERT INTO games (run_id, pair_index, game_index, game_number, white, black, \
             result, termination, plies, opening_index, opening_fen, pgn, json, started_at_ms, \
             duration_ms) VALUES \
             ($1, $2, 0, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14), \
             ($1, $2, 1, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)",
        )
        .bind(run.get())
        .bind(pair_index);
        for (game, values) in pair.games.iter().zip(&games) {
            insert_games = insert_games
                .bind(values.game_number)
                .bind(game.white.as_str())
                .bind(game.black.as_str())
                .bind(game.result.as_pgn())
                .bind(game.termination.as_str())
                .bind(i64::from(game.plies))
                .bind(values.opening_index)
                .bind(game.opening_fen.as_str())
                .bind(game.pgn.as_str())
                .bind(game.json.as_str())
                .bind(values.started_at_ms)
                .bind(values.duration_ms);
        }
        insert_games
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(operation(), e))?;

        // 4. The totals, by addition only: the caller recomputes every statistic from them.
        let updated = sqlx::query(
            "UPDATE run_totals SET pairs = pairs + 1, wins = wins + $2, draws = draws + $3, \
             losses = losses + $4, penta_ll = penta_ll + $5, penta_ld = penta_ld + $6, \
             penta_dd = penta_dd + $7, penta_dw = penta_dw + $8, penta_ww = penta_ww + $9 \
             WHERE run_id = $1 RETURNING run_id",
        )
        .bind(run.get())
        .bind(i64::from(wins))
        .bind(i64::from(draws))
        .bind(i64::from(losses))
        .bind(i64::from(penta == 0))
        .bind(i64::from(penta == 1))
        .bind(i64::from(penta == 2))
        .bind(i64::from(penta == 3))
        .bind(i64::from(penta == 4))
        .fetch_optional(&mut *tx)
        .await
        .map_err(|e| self.fail(operation(), e))?;
        if updated.is_none() {
            return Err(self.corrupt("run_totals", format!("run {run} has no totals row")));
        }

        // 5. All of it, or (rolled back on any error above, or lost to a crash before this
        //    returns) none of it.
        tx.commit().await.map_err(|e| self.fail(operation(), e))?;
        Ok(Committed::Inserted)
    }

    pub(crate) async fn totals(&self, run: RunId) -> Result<Totals> {
        let row = sqlx::query(
            "SELECT pairs, wins, draws, losses, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww \
             FROM run_totals WHERE run_id = $1",
        )
        .bind(run.get())
        .fetch_optional(&self.reader)
        .await
        .map_err(|e| self.fail(format!("reading the totals of run {run}"), e))?
        .ok_or_else(|| self.unknown(run))?;
        let count = |i: usize| -> Result<u64> {
            let value: i64 = row
                .try_get(i)
                .map_err(|e| self.fail(format!("reading the totals of run {run}"), e))?;
            self.non_negative(value, "run_totals")
        };
        Ok(Totals {
            pairs: count(0)?,
            wins: count(1)?,
            draws: count(2)?,
            losses: count(3)?,
            pentanomial: [count(4)?, count(5)?, count(6)?, count(7)?, count(8)?],
        })
    }

    pub(crate) async fn committed_pair_indices(&self, run: RunId) -> Result<BTreeSet<u64>> {
        // An unknown run must not look like a run with nothing committed.
        self.run(run).await?;
        let operation = || format!("reading the committed pairs of run {run}");
        let mut rows = sqlx::query("SELECT pair_index FROM pairs WHERE run_id = $1")
            .bind(run.get())
            .fetch(&self.reader);
        let mut indices = BTreeSet::new();
        while let Some(row) = rows
            .try_next()
            .await
            .map_err(|e| self.fail(operation(), e))?
        {
            let index: i64 = row.try_get(0).map_err(|e| self.fail(operation(), e))?;
            indices.insert(self.non_negative(index, "pairs")?);
        }
        Ok(indices)
    }

    pub(crate) fn games(&self, run: RunId) -> BoxStream<'_, Result<StoredGame>> {
        sqlx::query(
            "SELECT pair_index, game_index, game_number, white, black, result, termination, \
             plies, opening_index, opening_fen, pgn, json, started_at_ms, duration_ms \
             FROM games WHERE run_id = $1 ORDER BY pair_index, game_index",
        )
        .bind(run.get())
        .fetch(&self.reader)
        .map(move |row| {
            let operation = || format!("reading the games of run {run}");
            let row = row.map_err(|e| self.fail(operation(), e))?;
            self.decode_game(&row).map_err(|e| match e {
                Decoded::Sql(e) => self.fail(operation(), e),
                Decoded::Store(e) => e,
            })
        })
        .boxed()
    }

    pub(crate) async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }

    async fn begin_write(
        &self,
        operation: &impl Fn() -> String,
    ) -> Result<sqlx::Transaction<'static, DB>> {
        self.writer
            .begin_with(DB::BEGIN_WRITE)
            .await
            .map_err(|e| self.fail(operation(), e))
    }

    /// Why `run` refused a state change: it does not exist, or it is finished.
    async fn why_closed(&self, run: RunId) -> StoreError {
        match self.run(run).await {
            Ok(Run {
                state: RunState::Finished { verdict },
                ..
            }) => StoreError::RunFinished {
                location: self.location.to_string(),
                run,
                verdict,
            },
            Ok(_) => self.corrupt(
                "runs",
                format!("run {run} is running but refused the update"),
            ),
            Err(e) => e,
        }
    }

    fn decode_run(&self, row: &DB::Row) -> Result<Run> {
        let get_i64 =
            |i: usize| -> Result<i64> { row.try_get(i).map_err(|e| self.fail("reading a run", e)) };
        let get_text = |i: usize| -> Result<String> {
            row.try_get(i).map_err(|e| self.fail("reading a run", e))
        };
        let id = RunId::new(get_i64(0)?);
        let verdict: Option<String> = row.try_get(8).map_err(|e| self.fail("reading a run", e))?;
        let state = match (get_text(7)?.as_str(), verdict) {
            ("running", None) => RunState::Running,
            ("finished", Some(text)) => RunState::Finished {
                verdict: text.parse().map_err(|reason: String| {
                    self.corrupt("runs", format!("run {id}: {reason}"))
                })?,
            },
            (state, verdict) => {
                return Err(self.corrupt(
                    "runs",
                    format!("run {id} has state {state:?} and verdict {verdict:?}"),
                ));
            }
        };
        Ok(Run {
            id,
            spec: RunSpec {
                name: get_text(1)?,
                seed: seed_from_i64(get_i64(2)?),
                config: get_text(3)?,
                first_engine: get_text(4)?,
                second_engine: get_text(5)?,
                pairs_planned: self.non_negative(get_i64(6)?, "runs")?,
            },
            state,
            created_at: time_from_ms(get_i64(9)?),
            updated_at: time_from_ms(get_i64(10)?),
        })
    }

    fn decode_game(&self, row: &DB::Row) -> Result<StoredGame, Decoded> {
        let int = |i: usize| -> Result<i64, Decoded> { Ok(row.try_get(i)?) };
        let count = |i: usize| -> Result<u64, Decoded> { Ok(self.non_negative(int(i)?, "games")?) };
        let text = |i: usize| -> Result<String, Decoded> { Ok(row.try_get(i)?) };
        let result = text(5)?;
        let result: GameResult = result
            .parse()
            .map_err(|e| self.corrupt("games", format!("{e}")))?;
        let game_index = u8::try_from(int(1)?)
            .map_err(|_| self.corrupt("games", "a game index is not 0 or 1".into()))?;
        let plies = u32::try_from(int(7)?)
            .map_err(|_| self.corrupt("games", "a ply count is out of range".into()))?;
        Ok(StoredGame {
            pair_index: count(0)?,
            game_index,
            game: GameRow {
                game_number: count(2)?,
                white: text(3)?,
                black: text(4)?,
                result,
                termination: text(6)?,
                plies,
                opening_index: count(8)?,
                opening_fen: text(9)?,
                pgn: text(10)?,
                json: text(11)?,
                started_at: time_from_ms(int(12)?),
                duration: Duration::from_millis(count(13)?),
            },
        })
    }

    pub(crate) fn fail(&self, operation: impl Display, cause: sqlx::Error) -> StoreError {
        StoreError::Database {
            location: self.location.to_string(),
            operation: operation.to_string(),
            cause,
        }
    }

    fn migrate_failed(&self, cause: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::Migrate {
            location: self.location.to_string(),
            cause,
        }
    }

    fn unknown(&self, run: RunId) -> StoreError {
        StoreError::UnknownRun {
            location: self.location.to_string(),
            run,
        }
    }

    fn not_ours(&self, reason: String) -> StoreError {
        StoreError::NotArbiterDatabase {
            location: self.location.to_string(),
            reason,
        }
    }

    fn corrupt(&self, what: &'static str, detail: String) -> StoreError {
        StoreError::Corrupt {
            location: self.location.to_string(),
            what,
            detail,
        }
    }

    fn non_negative(&self, value: i64, what: &'static str) -> Result<u64> {
        u64::try_from(value).map_err(|_| self.corrupt(what, format!("negative count {value}")))
    }
}

/// A decoding failure: the driver's, or a broken invariant.
enum Decoded {
    Sql(sqlx::Error),
    Store(StoreError),
}

impl From<sqlx::Error> for Decoded {
    fn from(e: sqlx::Error) -> Self {
        Decoded::Sql(e)
    }
}

impl From<StoreError> for Decoded {
    fn from(e: StoreError) -> Self {
        Decoded::Store(e)
    }
}

/// A game's unsigned fields as the database's signed 64-bit integers.
struct GameValues {
    game_number: i64,
    opening_index: i64,
    started_at_ms: i64,
    duration_ms: i64,
}

impl GameValues {
    fn new(game: &GameRow) -> Option<GameValues> {
        Some(GameValues {
            game_number: i64::try_from(game.game_number).ok()?,
            opening_index: i64::try_from(game.opening_index).ok()?,
            started_at_ms: time_to_ms(game.started_at),
            duration_ms: i64::try_from(game.duration.as_millis()).unwrap_or(i64::MAX),
        })
    }
}

/// The kind of a database error (constraint violations), if it is one.
pub(crate) fn kind(error: &sqlx::Error) -> Option<ErrorKind> {
    error.as_database_error().map(|e| e.kind())
}

/// Seeds are `u64`; the databases have signed 64-bit integers. Same bits, both ways.
fn seed_to_i64(seed: u64) -> i64 {
    i64::from_ne_bytes(seed.to_ne_bytes())
}

fn seed_from_i64(stored: i64) -> u64 {
    u64::from_ne_bytes(stored.to_ne_bytes())
}

fn now_ms() -> i64 {
    time_to_ms(SystemTime::now())
}

fn time_to_ms(time: SystemTime) -> i64 {
    let clamp = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => clamp(after),
        Err(before) => -clamp(before.duration()),
    }
}

fn time_from_ms(ms: i64) -> SystemTime {
    let magnitude = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_keep_their_bits() {
        for seed in [0, 1, u64::MAX, 1 << 63, 0xdead_beef_cafe_f00d] {
            assert_eq!(seed_from_i64(seed_to_i64(seed)), seed);
        }
        assert_eq!(seed_to_i64(u64::MAX), -1);
    }

    #[test]
    fn times_round_trip_to_the_millisecond() {
        for ms in [0, 1, -1, 1_700_000_000_123, -86_400_000] {
            assert_eq!(time_to_ms(time_from_ms(ms)), ms);
        }
        let t = UNIX_EPOCH + Duration::from_micros(1_500_999);
        assert_eq!(time_to_ms(t), 1_500);
    }
}
