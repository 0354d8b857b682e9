//! Where a store lives: an SQLite file or a PostgreSQL URL.

use std::convert::Infallible;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where a store lives.
///
/// Parsed from what a user types: `postgres://...` or `postgresql://...` is PostgreSQL; anything
/// else is an SQLite file path, with an optional `sqlite://` or `sqlite:` prefix. Displayed with
/// any password in a URL replaced by `***`, because locations appear in every error message.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// An embedded SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (used only with the `postgres` feature).
    Postgres(String),
}

impl Location {
    /// Reads a location as a user typed it.
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Location::Postgres(text.to_owned());
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        Location::Sqlite(PathBuf::from(path))
    }
}

impl FromStr for Location {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Location::parse(s))
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

// Debug is what `{:?}` in a log shows: it must not leak the password either.
impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Location::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&redact_password(url))
                .finish(),
        }
    }
}

/// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`; a `password=` query
/// parameter is hidden the same way.
fn redact_password(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let authority_start = scheme_end + 3;
        let authority_end = out[authority_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| authority_start + i);
        if let Some(at) = out[authority_start..authority_end].rfind('@') {
            let userinfo = &out[authority_start..authority_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = authority_start + colon + 1;
                out.replace_range(start..authority_start + at, "***");
            }
        }
    }
    if let Some(query_start) = out.find('?') {
        let (head, query) = out.split_at(query_start + 1);
        let redacted: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out = format!("{head}{}", redacted.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_and_urls() {
        assert_eq!(
            Location::parse("runs.db"),
            Location::Sqlite("runs.db".into())
        );
        assert_eq!(
            Location::parse("sqlite://a/b.db"),
            Location::Sqlite("a/b.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:b.db"),
            Location::Sqlite("b.db".into())
        );
        assert_eq!(
            Location::parse("postgresql://h/db"),
            Location::Postgres("postgresql://h/db".into())
        );
    }

    #[test]
    fn display_and_debug_hide_passwords() {
        let loc = Location::parse("postgres://arbiter:s3cret@db.example:5432/runs?sslmode=require");
        assert_eq!(
            loc.to_string(),
            "postgres://arbiter:***@db.example:5432/runs?sslmode=require"
        );
        assert!(!format!("{loc:?}").contains("s3cret"));
        let loc = Location::parse("postgres://arbiter@h/runs?password=s3cret&application_name=x");
        assert_eq!(
            loc.to_string(),
            "postgres://arbiter@h/runs?password=***&application_name=x"
        );
        // No password: unchanged.
        assert_eq!(
            Location::parse("postgres://h/db").to_string(),
            "postgres://h/db"
        );
    }
}
