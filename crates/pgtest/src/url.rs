//! Edits of `postgres://user:password@host:port/database?options` URLs: the same server under
//! another database, or reached through another address (a [`crate::CutProxy`]). Only the part
//! asked for changes, so a URL's user, password and options survive every edit.

use std::net::SocketAddr;

/// Where a URL's parts start and end: `scheme://` `userinfo@` `host:port` `/database` `?query`.
struct Parts {
    /// The first byte after `://`.
    authority: usize,
    /// The first byte of `host:port` (after the last `@` of the authority, if any).
    host: usize,
    /// The end of the authority: a `/`, a `?` or the end of the text.
    path: usize,
    /// The start of the query (`?`), or the end of the text.
    query: usize,
}

fn parts(url: &str) -> Parts {
    let authority = url.find("://").map_or(0, |i| i + 3);
    let path = url[authority..]
        .find(['/', '?'])
        .map_or(url.len(), |i| authority + i);
    let host = url[authority..path]
        .rfind('@')
        .map_or(authority, |i| authority + i + 1);
    let query = url[path..].find('?').map_or(url.len(), |i| path + i);
    Parts {
        authority,
        host,
        path,
        query,
    }
}

/// `url` naming `database` instead of its own (or none).
pub fn with_database(url: &str, database: &str) -> String {
    let p = parts(url);
    format!("{}/{database}{}", &url[..p.path], &url[p.query..])
}

/// `url` reaching its server at `address` instead of its own host and port.
pub fn with_address(url: &str, address: SocketAddr) -> String {
    let p = parts(url);
    format!("{}{address}{}", &url[..p.host], &url[p.path..])
}

/// `url` logging in with `password` instead of its own (a URL without a user is unchanged).
pub fn with_password(url: &str, password: &str) -> String {
    let p = parts(url);
    if p.host == p.authority {
        return url.to_owned();
    }
    let userinfo = &url[p.authority..p.host - 1];
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    format!(
        "{}{user}:{password}@{}",
        &url[..p.authority],
        &url[p.host..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "postgres://arbiter:s3cr@t@db.example:5432/runs?sslmode=disable&x=/y";

    #[test]
    fn the_database_is_replaced_and_the_rest_kept() {
        assert_eq!(
            with_database(FULL, "fresh_1"),
            "postgres://arbiter:s3cr@t@db.example:5432/fresh_1?sslmode=disable&x=/y"
        );
        assert_eq!(
            with_database("postgres://h:1", "d"),
            "postgres://h:1/d",
            "a URL without a database gains one"
        );
        assert_eq!(
            with_database("postgresql://u@h/old?a=b", "new"),
            "postgresql://u@h/new?a=b"
        );
        assert_eq!(with_database("postgres://h?a=b", "d"), "postgres://h/d?a=b");
    }

    #[test]
    fn the_address_is_replaced_and_the_rest_kept() {
        let proxy: SocketAddr = "127.0.0.1:40123".parse().unwrap();
        assert_eq!(
            with_address(FULL, proxy),
            "postgres://arbiter:s3cr@t@127.0.0.1:40123/runs?sslmode=disable&x=/y"
        );
        assert_eq!(
            with_address("postgres://localhost/db", proxy),
            "postgres://127.0.0.1:40123/db"
        );
    }

    #[test]
    fn the_password_is_replaced_and_the_user_kept() {
        assert_eq!(
            with_password(FULL, "wrong"),
            "postgres://arbiter:wrong@db.example:5432/runs?sslmode=disable&x=/y"
        );
        assert_eq!(with_password("postgres://u@h/d", "p"), "postgres://u:p@h/d");
        assert_eq!(with_password("postgres://h/d", "p"), "postgres://h/d");
    }

    /// The edits compose: each changes its own part only, whatever was done before.
    #[test]
    fn edits_commute() {
        let proxy: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let a = with_address(&with_database(&with_password(FULL, "p"), "d"), proxy);
        let b = with_password(&with_database(&with_address(FULL, proxy), "d"), "p");
        assert_eq!(a, b);
        assert_eq!(a, "postgres://arbiter:p@127.0.0.1:9/d?sslmode=disable&x=/y");
    }
}
