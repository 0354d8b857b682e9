//! The UCI protocol as the runner speaks it: the messages of `arbiter-uci`, whose formatters
//! and parsers staunton shares (docs/ARCHITECTURE.md, "The crates").

pub use arbiter_uci::*;
