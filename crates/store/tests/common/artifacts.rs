//! Engine artifacts' scenarios every backend must pass: stored once by hash, read back checked.

use arbiter_store::{sha256_hex, Store};

/// A binary stored twice is one artifact under its hash; an unknown hash is none.
pub async fn an_artifact_is_stored_once_under_its_hash(store: &Store) {
    let binary: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let sha = store.put_artifact(&binary).await.unwrap();
    assert_eq!(sha, sha256_hex(&binary));
    assert_eq!(
        store.put_artifact(&binary).await.unwrap(),
        sha,
        "again: the same"
    );
    assert_eq!(store.artifact(&sha).await.unwrap(), Some(binary.clone()));
    assert_eq!(store.artifact(&"0".repeat(64)).await.unwrap(), None);
    let other = b"#!/bin/sh\necho uciok\n".to_vec();
    let other_sha = store.put_artifact(&other).await.unwrap();
    assert_ne!(other_sha, sha);
    assert_eq!(store.artifact(&other_sha).await.unwrap(), Some(other));
}

/// What a backend's raw SQL sets an artifact's content to, to damage it.
pub const DAMAGE: &str = "UPDATE artifacts SET content = ";

/// A damaged artifact (its bytes no longer its hash) is an error naming it, never served.
pub async fn a_damaged_artifact_is_refused(store: &Store, sha: &str) {
    let error = store.artifact(sha).await.unwrap_err().to_string();
    assert!(
        error.contains(sha) && error.contains("does not match its hash"),
        "{error}"
    );
}
