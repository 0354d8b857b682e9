//! What the store keeps for API tokens: who may reach the fleet over HTTP (`arbiter serve`)
//! without the database's credentials, and for what. The SQL is in `repo/tokens.rs`; the crate
//! docs ("The fleet") say why only a secret's hash is stored.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The database id of a token. Ids are never reused: a revoked token keeps its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TokenId(i64);

impl TokenId {
    pub const fn new(id: i64) -> TokenId {
        TokenId(id)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a token may do: the routes of a worker (claim, heartbeat, submit, release its own
/// leases), of a user (submit, watch and stop runs), or everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenScope {
    Worker,
    User,
    Admin,
}

impl TokenScope {
    /// Whether a token of this scope may use a route that needs `needed`: an admin token may
    /// use every route, a user token only a user's, a worker token only a worker's. The scopes
    /// are not a ladder: a user token cannot play batches, nor a worker token submit runs, so a
    /// worker's token stolen from a volunteer's machine cannot queue or stop anything.
    pub fn allows(self, needed: TokenScope) -> bool {
        self == TokenScope::Admin || self == needed
    }

    /// The scope as the database and the command line write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenScope::Worker => "worker",
            TokenScope::User => "user",
            TokenScope::Admin => "admin",
        }
    }
}

impl fmt::Display for TokenScope {
    /// Padded as asked (`{:<6}`), so that scopes line up in a table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The text is not a token scope.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a token scope (expected worker, user or admin)")]
pub struct ParseTokenScopeError(pub String);

impl FromStr for TokenScope {
    type Err = ParseTokenScopeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "worker" => Ok(TokenScope::Worker),
            "user" => Ok(TokenScope::User),
            "admin" => Ok(TokenScope::Admin),
            _ => Err(ParseTokenScopeError(s.to_owned())),
        }
    }
}

/// A token as stored: everything but its secret, which the store never has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub id: TokenId,
    /// Unique; what `arbiter admin token revoke` names it by.
    pub name: String,
    pub scope: TokenScope,
    /// Milliseconds since the Unix epoch on the database's clock.
    pub created_at_ms: i64,
    /// When it was revoked; a revoked token authenticates nobody.
    pub revoked_at_ms: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_allows_everything_and_the_others_only_themselves() {
        use TokenScope::{Admin, User, Worker};
        let allowed: Vec<(TokenScope, TokenScope)> = [Worker, User, Admin]
            .into_iter()
            .flat_map(|held| [Worker, User, Admin].map(|needed| (held, needed)))
            .filter(|&(held, needed)| held.allows(needed))
            .collect();
        assert_eq!(
            allowed,
            [
                (Worker, Worker),
                (User, User),
                (Admin, Worker),
                (Admin, User),
                (Admin, Admin)
            ]
        );
    }

    #[test]
    fn scopes_read_back_as_written() {
        for scope in [TokenScope::Worker, TokenScope::User, TokenScope::Admin] {
            assert_eq!(scope.to_string().parse::<TokenScope>(), Ok(scope));
            assert_eq!(format!("{scope:<6}|").len(), 7);
            assert_eq!(
                serde_json::to_string(&scope).unwrap(),
                format!("\"{scope}\"")
            );
        }
        assert_eq!(
            "Admin".parse::<TokenScope>(),
            Err(ParseTokenScopeError("Admin".into()))
        );
        assert!("".parse::<TokenScope>().is_err());
    }
}
