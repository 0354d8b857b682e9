//! API tokens' scenarios every backend must pass: secrets shown once and stored hashed, revoked
//! tokens authenticating nobody, and workers bound to the token that registered them.

use arbiter_store::{
    sha256_hex, Store, StoreError, TokenId, TokenInfo, TokenScope, WorkerId, WorkerInfo,
};

fn worker(name: &str, host: &str) -> WorkerInfo {
    WorkerInfo {
        name: name.to_owned(),
        host: host.to_owned(),
        cores: 2,
        version: "test".into(),
    }
}

/// The host the store holds for the worker named `name`.
async fn host_of(store: &Store, name: &str) -> String {
    store
        .workers()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.info.name == name)
        .unwrap_or_else(|| panic!("no worker {name:?}"))
        .info
        .host
}

/// Creates, authenticates, lists and revokes a token; returns the revoked token and its
/// secret, for the caller to read the table with.
pub async fn a_token_is_created_authenticated_and_revoked(store: &Store) -> (TokenInfo, String) {
    let (token, secret) = store
        .create_token("volunteer-1", TokenScope::Worker)
        .await
        .unwrap();
    assert_eq!(
        (token.name.as_str(), token.scope, token.revoked_at_ms),
        ("volunteer-1", TokenScope::Worker, None)
    );
    assert!(token.created_at_ms > 1_700_000_000_000, "{token:?}");
    let body = secret.strip_prefix("arb_").expect("an arb_ secret");
    assert_eq!(body.len(), 43, "{secret}");
    assert!(
        body.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "not URL-safe base64: {secret}"
    );
    let (other, other_secret) = store.create_token("alice", TokenScope::User).await.unwrap();
    assert_ne!(other.id, token.id);
    assert_ne!(other_secret, secret);

    assert_eq!(
        store.authenticate(&secret).await.unwrap(),
        Some(token.clone())
    );
    assert_eq!(
        store.authenticate(&other_secret).await.unwrap(),
        Some(other.clone())
    );
    assert_eq!(
        store.tokens().await.unwrap(),
        [other.clone(), token.clone()]
    );

    let revoked = store.revoke_token("volunteer-1").await.unwrap();
    let revoked_at = revoked.revoked_at_ms.expect("a revocation time");
    assert!(revoked_at >= token.created_at_ms, "{revoked:?}");
    assert_eq!(
        revoked,
        TokenInfo {
            revoked_at_ms: Some(revoked_at),
            ..token.clone()
        }
    );
    assert_eq!(store.authenticate(&secret).await.unwrap(), None);
    // Revoking one token leaves the others live.
    assert_eq!(
        store.authenticate(&other_secret).await.unwrap(),
        Some(other.clone())
    );
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(store.revoke_token("volunteer-1").await.unwrap(), revoked);
    assert_eq!(store.tokens().await.unwrap(), [other, revoked.clone()]);
    (revoked, secret)
}

/// What a table of tokens read behind the store's back must show: the secret's SHA-256 in
/// hex, and the secret nowhere. `rows` are each token's text columns (name, scope,
/// secret_hash).
pub fn only_the_hash_is_stored(rows: &[(String, String, String)], name: &str, secret: &str) {
    let (_, scope, hash) = rows
        .iter()
        .find(|(n, ..)| n == name)
        .unwrap_or_else(|| panic!("no row for {name:?} in {rows:?}"));
    assert_eq!(scope, "worker");
    assert_eq!(hash, &sha256_hex(secret.as_bytes()));
    assert_eq!(hash.len(), 64);
    let body = &secret["arb_".len()..];
    for (n, s, h) in rows {
        for column in [n, s, h] {
            assert!(!column.contains(body), "the secret is stored: {column}");
        }
    }
}

pub async fn unknown_revoked_and_malformed_secrets_authenticate_nobody(store: &Store) {
    let (live, secret) = store.create_token("ci", TokenScope::Admin).await.unwrap();
    let (_, revoked_secret) = store.create_token("old", TokenScope::Admin).await.unwrap();
    store.revoke_token("old").await.unwrap();
    let mut altered = secret.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let hash = sha256_hex(secret.as_bytes());
    let unknown = [
        String::new(),
        "arb_".into(),
        format!("arb_{}", "A".repeat(43)),
        altered,
        format!("{secret}x"),
        secret[..secret.len() - 1].to_owned(),
        format!(" {secret}"),
        secret.to_uppercase(),
        format!("Bearer {secret}"),
        // The stored hash is not a secret that works: it is only ever compared hashed.
        hash,
        "' OR '1'='1".into(),
        "x'); DELETE FROM tokens; --".into(),
        "\0\u{feff}♞".into(),
        "a".repeat(100_000),
        revoked_secret,
    ];
    for text in &unknown {
        let found = store.authenticate(text).await;
        assert!(
            matches!(found, Ok(None)),
            "{:?} authenticated: {found:?}",
            &text[..text.len().min(60)]
        );
    }
    // Nothing was changed by the texts above: the live token still authenticates.
    assert_eq!(store.authenticate(&secret).await.unwrap(), Some(live));
    assert_eq!(store.tokens().await.unwrap().len(), 2);
}

pub async fn token_names_are_unique_and_known(store: &Store) {
    let (first, secret) = store
        .create_token("shared-name", TokenScope::Worker)
        .await
        .unwrap();
    for scope in [TokenScope::Worker, TokenScope::Admin] {
        let error = store
            .create_token("shared-name", scope)
            .await
            .expect_err("a second token of the name");
        assert!(
            matches!(&error, StoreError::DuplicateTokenName { name, .. } if name == "shared-name"),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(
            text.starts_with(store.location()) && text.contains("\"shared-name\" already exists"),
            "{text}"
        );
    }
    // A revoked token's name stays taken: a list must always say which token it was.
    store.revoke_token("shared-name").await.unwrap();
    assert!(matches!(
        store.create_token("shared-name", TokenScope::User).await,
        Err(StoreError::DuplicateTokenName { .. })
    ));
    let listed = store.tokens().await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (listed[0].id, listed[0].scope),
        (first.id, TokenScope::Worker)
    );
    assert_eq!(store.authenticate(&secret).await.unwrap(), None);

    for empty in ["", "  "] {
        let error = store
            .create_token(empty, TokenScope::User)
            .await
            .expect_err("a token without a name");
        assert!(
            matches!(error, StoreError::InvalidToken { .. }),
            "{error:?}"
        );
    }
    let error = store
        .revoke_token("no-such-token")
        .await
        .expect_err("revoking an unknown token");
    assert!(
        matches!(&error, StoreError::UnknownToken { name, .. } if name == "no-such-token"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("no token named \"no-such-token\""),
        "{error}"
    );
    assert_eq!(store.tokens().await.unwrap().len(), 1);
}

pub async fn a_token_cannot_take_over_another_tokens_worker(store: &Store) {
    let (a, _) = store.create_token("a", TokenScope::Worker).await.unwrap();
    let (b, _) = store.create_token("b", TokenScope::Worker).await.unwrap();

    let w = store
        .register_worker_for(&worker("w1", "host-a"), a.id)
        .await
        .unwrap()
        .expect("a new name is registered");
    assert_eq!(store.worker_token(w).await.unwrap(), Some(a.id));
    // The same token again: the same worker, its contact refreshed.
    assert_eq!(
        store
            .register_worker_for(&worker("w1", "host-a2"), a.id)
            .await
            .unwrap(),
        Some(w)
    );
    assert_eq!(host_of(store, "w1").await, "host-a2");

    // Another token, the same name: refused, nothing changed.
    assert_eq!(
        store
            .register_worker_for(&worker("w1", "host-b"), b.id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(host_of(store, "w1").await, "host-a2");
    assert_eq!(store.worker_token(w).await.unwrap(), Some(a.id));

    // A worker of the database (no token) cannot be taken over by a token either.
    let direct = store
        .register_worker(&worker("direct", "db-host"))
        .await
        .unwrap();
    assert_eq!(store.worker_token(direct).await.unwrap(), None);
    assert_eq!(
        store
            .register_worker_for(&worker("direct", "host-b"), b.id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(host_of(store, "direct").await, "db-host");
    assert_eq!(store.worker_token(direct).await.unwrap(), None);

    // Token b registers its own.
    let wb = store
        .register_worker_for(&worker("w2", "host-b"), b.id)
        .await
        .unwrap()
        .expect("b's own worker");
    assert_ne!(wb, w);
    assert_eq!(store.worker_token(wb).await.unwrap(), Some(b.id));
    assert_eq!(store.workers().await.unwrap().len(), 3);

    let unknown = WorkerId::new(i64::MAX);
    let error = store
        .worker_token(unknown)
        .await
        .expect_err("an unknown worker");
    assert!(
        matches!(error, StoreError::UnknownWorker { worker, .. } if worker == unknown),
        "{error:?}"
    );
    // A token that does not exist registers nobody.
    let ghost = TokenId::new(i64::MAX);
    assert!(store
        .register_worker_for(&worker("w3", "h"), ghost)
        .await
        .is_err());
    assert!(store
        .register_worker_for(&worker("", "h"), a.id)
        .await
        .is_err());
    assert_eq!(store.workers().await.unwrap().len(), 3);
}

pub async fn token_names_with_sql_metacharacters_are_plain_names(store: &Store) {
    let name = "x'); DROP TABLE tokens;--";
    let (token, secret) = store.create_token(name, TokenScope::User).await.unwrap();
    assert_eq!(token.name, name);
    let (quoted, _) = store
        .create_token("\"%_\\' OR 1=1 --", TokenScope::Worker)
        .await
        .unwrap();
    let names: Vec<String> = store
        .tokens()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&name.to_owned()) && names.contains(&quoted.name));
    assert_eq!(
        store.authenticate(&secret).await.unwrap().map(|t| t.name),
        Some(name.to_owned())
    );
    let wname = "w'; UPDATE workers SET token_id = NULL; --";
    let w = store
        .register_worker_for(&worker(wname, "h"), quoted.id)
        .await
        .unwrap()
        .expect("registered");
    assert_eq!(store.worker_token(w).await.unwrap(), Some(quoted.id));
    assert_eq!(store.revoke_token(name).await.unwrap().name, name);
    assert_eq!(store.authenticate(&secret).await.unwrap(), None);
    // A LIKE pattern is not a name: nothing else was revoked.
    assert!(matches!(
        store.revoke_token("%").await,
        Err(StoreError::UnknownToken { .. })
    ));
    assert_eq!(
        store
            .tokens()
            .await
            .unwrap()
            .iter()
            .filter(|t| t.revoked_at_ms.is_none())
            .count(),
        1
    );
}
