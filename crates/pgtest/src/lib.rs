//! Test support, never published: throwaway PostgreSQL clusters and a TCP proxy that cuts
//! connections, so that every PostgreSQL test starts from nothing and depends on no server
//! already running (issue 20: "Each test starts a throwaway PostgreSQL cluster ... Nothing
//! depends on a server already running").
//!
//! - [`database`]: a fresh, empty database for one test, its URL. On the process's shared
//!   cluster ([`Cluster::shared`], `initdb` once per test binary), or on the server that
//!   `ARBITER_TEST_PG_URL` names (its user must be allowed to `CREATE DATABASE`; the databases
//!   made there are left for its owner to drop).
//! - [`Cluster`]: a cluster of one's own, for tests that stop, restart or crash the server.
//! - [`CutProxy`]: the network between a client and its server failing and coming back.
//! - [`RoundRobinProxy`]: replicas of a server behind one address, as a load balancer puts
//!   them, so that a test can kill one under its clients.
//!
//! The server programs come from Debian's `postgresql` package (`scripts/ci-setup.sh`
//! installs it); see [`Cluster`] for where the clusters live, how they end
//! and running as root.

mod cluster;
mod proxy;
mod relay;
mod round_robin;
pub mod url;

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub use cluster::{Cluster, PASSWORD, SUPERUSER};
pub use proxy::CutProxy;
pub use round_robin::RoundRobinProxy;

/// The environment variable that points the tests at an existing server instead.
pub const URL_ENV: &str = "ARBITER_TEST_PG_URL";

/// Why a cluster or a database could not be had.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) are neither on PATH nor \
         in /usr/lib/postgresql/*/bin: install Debian's `postgresql` package \
         (scripts/ci-setup.sh does)"
    )]
    NoBinaries,
    #[error(
        "running as root, which PostgreSQL refuses, and the `postgres` system user that would \
         run the server instead is missing: {0}"
    )]
    NoPostgresUser(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{what} failed ({status}): {output}")]
    Command {
        what: String,
        status: String,
        output: String,
    },
    #[error(
        "the PostgreSQL server of {} did not start ({pg_ctl}); its log {} ends:\n{tail}",
        data.display(),
        log.display()
    )]
    NotStarted {
        data: PathBuf,
        log: PathBuf,
        pg_ctl: String,
        tail: String,
    },
    #[error("the test process's shared PostgreSQL cluster did not start: {0}")]
    Shared(String),
}

impl Error {
    fn io(what: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// A new, empty database whose name starts with `name`, and its URL: on the server
/// `ARBITER_TEST_PG_URL` names if it is set, else on this process's shared cluster.
pub fn database(name: &str) -> Result<String, Error> {
    match std::env::var(URL_ENV) {
        Ok(server) => database_at(&server, name),
        Err(_) => Cluster::shared()?.database(name),
    }
}

/// [`database`] on the server of `server` (any URL of it; its user creates the database).
fn database_at(server: &str, name: &str) -> Result<String, Error> {
    let database = cluster::fresh_name(name);
    let psql = cluster::Binaries::find()?.tool("psql");
    let sql = format!("CREATE DATABASE \"{database}\"");
    let output = Command::new(&psql)
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            server,
            "-c",
            &sql,
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(format!("running {}", psql.display()), e))?;
    if !output.status.success() {
        return Err(Error::Command {
            what: format!("{sql} on the server of {URL_ENV}"),
            status: output.status.to_string(),
            output: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(url::with_database(server, &database))
}
