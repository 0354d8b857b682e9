//! What the process tests share: a UCI player of the fixture engine (or any program) with the
//! timeouts a test chooses.

use arbiter_runner::player::{PlayerKind, PlayerSpec};
use arbiter_runner::process::{ProcessSpec, Timeouts};

/// The deliberately faulty engine this crate builds.
pub const FIXTURE: &str = env!("CARGO_BIN_EXE_arbiter-fixture-engine");

/// A UCI player running `cmd args...`, sent `options` at start.
pub fn uci_player(
    name: String,
    cmd: &str,
    args: &[&str],
    options: &[(&str, &str)],
    timeouts: Timeouts,
) -> PlayerSpec {
    PlayerSpec {
        name,
        kind: PlayerKind::Uci(ProcessSpec {
            cmd: cmd.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            options: options
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
            ..ProcessSpec::default()
        }),
        timeouts,
        restart: false,
    }
}
