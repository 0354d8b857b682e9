//! `arbiter serve`: the fleet's HTTP face, for workers that must not hold database credentials
//! (volunteers' and cloud machines) and for people watching runs.
//!
//! The server is stateless: each request is one of the store's transactions (the same ones a
//! worker on the database makes, [`arbiter_runner::coordinator::Coordinator`]) behind a
//! bearer token whose scope the route checks, so any number of replicas can run behind an
//! ordinary reverse proxy and a replica killed mid-request loses nothing a retry does not
//! recover. [`app`] is the server, [`client`] the worker's side of it, [`api`] the bodies and
//! routes both read, [`dashboard`] the read-only pages people watch runs on. A submit is judged by the run's own stored rule on the server, never by
//! the worker.

pub mod api;
pub mod app;
pub mod client;
pub mod dashboard;

pub use app::{router, serve, AppState};
pub use client::HttpCoordinator;
