//! What the end-to-end tests of the `arbiter` binary share: running it, finding the staunton
//! binary built with it, reading its output, the shipped book.

use std::path::{Path, PathBuf};
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

/// The staunton UCI binary built with the arbiter binary under test. It is another package's
/// binary, so Cargo gives these tests no path to it (`CARGO_BIN_EXE_*` names only the `arbiter`
/// package's); it is taken from the same profile's folder, where `cargo test --workspace` builds
/// it too.
pub fn staunton() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_arbiter")).parent().unwrap();
    let path = dir.join(format!("staunton{}", std::env::consts::EXE_SUFFIX));
    let build = match dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") | None => "cargo build -p staunton".to_owned(),
        Some(profile) => format!("cargo build --profile {profile} -p staunton"),
    };
    assert!(
        path.is_file(),
        "{} is missing: build it with the same profile first (`{build}`)",
        path.display()
    );
    path
}

/// Writes `content` to `path` as an executable file: the stand-in engines and wrappers the tests
/// run as `cmd=`.
pub fn write_script(path: &Path, content: impl AsRef<[u8]>) {
    std::fs::write(path, content).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
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

/// A Polyglot book's bytes from `(line, move, weight)` entries: the move (UCI) after the line's
/// moves from the standard position, keyed as the format keys positions.
pub fn polyglot_book(entries: &[(&[&str], &str, u16)]) -> Vec<u8> {
    use arbiter_rules::polyglot::{encode_move, polyglot_key, BookEntry, PolyglotBook};
    use arbiter_rules::uci::parse_uci_move;
    let entries = entries
        .iter()
        .map(|(line, mv, weight)| {
            let mut pos = arbiter_rules::Position::starting();
            for text in *line {
                let played = parse_uci_move(&pos, text).unwrap();
                pos.play_unchecked(played);
            }
            BookEntry {
                key: polyglot_key(&pos),
                raw_move: encode_move(parse_uci_move(&pos, mv).unwrap()),
                weight: *weight,
                learn: 0,
            }
        })
        .collect();
    PolyglotBook::from_entries(entries).to_bytes()
}
