//! What the end-to-end tests of the `arbiter` binary share: running it, reading its output, the
//! shipped book.

#![allow(dead_code, reason = "each test file uses part of it")]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The book the repository ships, for runs that need real openings.
pub const BOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openings/quick.epd");

/// `arbiter ARGS` run in `dir` with no input, waited for.
pub fn arbiter(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run arbiter")
}

/// Output bytes as text, whatever they hold.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `sql` on the SQLite file `db` as another program would: raw statements, outside the
/// store's code.
pub fn raw_sql(db: &Path, sql: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        use sqlx::Executor;
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        pool.execute(sqlx::AssertSqlSafe(sql.to_owned()))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        pool.close().await;
    });
}
