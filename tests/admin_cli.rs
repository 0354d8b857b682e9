//! `arbiter admin token` through the real binary, on an SQLite file: the secret printed once
//! and alone on stdout (so that `> worker.token` writes exactly it), listed and revoked, and
//! never written to the database.

use std::path::Path;

use arbiter_store::{sha256_hex, Location, Store, TokenScope};

use crate::common::{arbiter, text};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The token the store authenticates `secret` as: (name, scope, revoked).
fn authenticated(db: &Path, secret: &str) -> Option<(String, TokenScope)> {
    block_on(async {
        let store = Store::open_existing(&Location::Sqlite(db.to_owned()))
            .await
            .unwrap();
        let found = store.authenticate(secret).await.unwrap();
        store.close().await;
        found.map(|t| (t.name, t.scope))
    })
}

/// Every byte the database left on disk: the file and whatever beside it has its name (a WAL
/// not yet checkpointed).
fn database_bytes(dir: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("fleet.db"))
        {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// `arbiter admin token create NAME --scope SCOPE --db fleet.db`: its secret.
fn create(dir: &Path, name: &str, scope: &str) -> String {
    let out = arbiter(
        &[
            "admin", "token", "create", name, "--scope", scope, "--db", "fleet.db",
        ],
        dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let secret = stdout
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("one line on stdout: {stdout:?}"));
    assert!(
        !secret.contains('\n') && secret.starts_with("arb_") && secret.len() == 47,
        "stdout must be the secret alone: {stdout:?}"
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not shown again"), "{stderr}");
    assert!(!stderr.contains(secret), "the secret went to stderr too");
    secret.to_owned()
}

/// The data rows of `arbiter admin token list`, by name: (name, the rest of the line).
fn listed(dir: &Path) -> Vec<(String, String)> {
    let out = arbiter(&["admin", "token", "list", "--db", "fleet.db"], dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    let header = lines.next().expect("a header");
    assert!(
        header.starts_with("NAME") && header.contains("SCOPE") && header.contains("REVOKED"),
        "{header}"
    );
    lines
        .map(|line| {
            let (name, rest) = line.split_once(' ').expect("a row");
            (name.to_owned(), rest.trim().to_owned())
        })
        .collect()
}

fn listed_json(dir: &Path) -> Vec<serde_json::Value> {
    let out = arbiter(
        &["admin", "token", "list", "--db", "fleet.db", "--json"],
        dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    value.as_array().expect("a JSON array").clone()
}

#[test]
fn a_token_is_created_listed_revoked_and_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.db");
    let secret = create(dir.path(), "volunteer-1", "worker");
    let other = create(dir.path(), "alice", "user");
    assert_ne!(secret, other);
    assert_eq!(
        authenticated(&db, &secret),
        Some(("volunteer-1".into(), TokenScope::Worker))
    );

    let rows = listed(dir.path());
    assert_eq!(
        rows.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["alice", "volunteer-1"]
    );
    for (_, rest) in &rows {
        assert!(rest.ends_with("UTC  -"), "a live token: {rest}");
    }
    assert!(rows[0].1.starts_with("user "), "{}", rows[0].1);
    assert!(rows[1].1.starts_with("worker "), "{}", rows[1].1);
    let json = listed_json(dir.path());
    assert_eq!(json.len(), 2);
    assert_eq!(json[1]["name"], "volunteer-1");
    assert_eq!(json[1]["scope"], "worker");
    assert!(json[1]["revoked_at_ms"].is_null(), "{}", json[1]);

    let out = arbiter(
        &[
            "admin",
            "token",
            "revoke",
            "volunteer-1",
            "--db",
            "fleet.db",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("revoked worker token \"volunteer-1\""),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(authenticated(&db, &secret), None);
    assert_eq!(
        authenticated(&db, &other),
        Some(("alice".into(), TokenScope::User))
    );

    let rows = listed(dir.path());
    assert!(
        rows[0].1.ends_with("UTC  -"),
        "alice is live: {}",
        rows[0].1
    );
    assert!(
        rows[1].1.ends_with(" UTC") && !rows[1].1.ends_with('-'),
        "volunteer-1 is revoked: {}",
        rows[1].1
    );
    let json = listed_json(dir.path());
    let revoked_at = json[1]["revoked_at_ms"]
        .as_i64()
        .expect("a revocation time");
    assert!(
        revoked_at >= json[1]["created_at_ms"].as_i64().unwrap(),
        "{}",
        json[1]
    );
    assert!(json[0]["revoked_at_ms"].is_null());

    // The database holds each secret's hash, and neither secret.
    let bytes = database_bytes(dir.path());
    assert!(
        contains(&bytes, &sha256_hex(secret.as_bytes())),
        "no hash found: wrong file?"
    );
    for secret in [&secret, &other] {
        assert!(!contains(&bytes, secret), "the secret is in the database");
        assert!(
            !contains(&bytes, &secret["arb_".len()..]),
            "the secret's body is in the database"
        );
    }
}

#[test]
fn unknown_scopes_names_and_databases_exit_2_and_print_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], said: &str| {
        let out = arbiter(args, dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{args:?} printed on stdout");
    };
    refused(
        &[
            "admin", "token", "create", "x", "--scope", "root", "--db", "fleet.db",
        ],
        "\"root\" is not a token scope (expected worker, user or admin)",
    );
    refused(
        &["admin", "token", "list", "--db", "fleet.db"],
        "no such database file",
    );
    assert!(
        !dir.path().join("fleet.db").exists(),
        "a list must not create a database"
    );

    create(dir.path(), "ci", "admin");
    refused(
        &[
            "admin", "token", "create", "ci", "--scope", "worker", "--db", "fleet.db",
        ],
        "a token named \"ci\" already exists",
    );
    refused(
        &[
            "admin", "token", "create", "", "--scope", "worker", "--db", "fleet.db",
        ],
        "a token needs a name",
    );
    refused(
        &["admin", "token", "revoke", "nobody", "--db", "fleet.db"],
        "no token named \"nobody\"",
    );
    let rows = listed(dir.path());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].1.starts_with("admin "), "{rows:?}");
}
