//! The store's tests, one test binary (each file a module; a file of this folder that is not a
//! module here is not compiled, so add it below): the scenarios of `common` on SQLite and on
//! PostgreSQL, and SIGKILL at a random instant.
//!
//! Tests that re-run this binary as a child process name themselves by their full path
//! (`sqlite::...`), as libtest's `--exact` wants.

mod common;
mod crash;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;
