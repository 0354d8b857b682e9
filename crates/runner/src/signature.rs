//! An engine's signature: what a run records of each engine it is played by, so that it is
//! continued only by the same engine, on a worker of the fleet or by `arbiter match` resuming
//! it. A UCI engine is signed by its binary's SHA-256 (two binaries that differ in one byte
//! play different engines), an engine built from source by its recipe (every machine builds
//! its own), in-process staunton by this arbiter's version; its bench ([`crate::bench`]) is
//! what tells a build that plays otherwise.

use std::path::{Path, PathBuf};

use arbiter_store::sha256_hex;

use crate::config::{absolute, CheckedEngine, Program};

/// `engine`'s signature on this machine (`base` is the configuration's folder), or why it has
/// none here: its program is not found or cannot be read.
pub fn of(engine: &CheckedEngine, base: &Path) -> Result<String, String> {
    match (&engine.program, &engine.build) {
        (_, Some(recipe)) => Ok(recipe.signature()),
        (Program::Uci(process), None) => {
            let path = program_path(base, &process.cmd)
                .map_err(|why| format!("engine {}: {why}", engine.name))?;
            of_binary(&path).map_err(|e| {
                format!(
                    "engine {}: cannot read {}: {e}",
                    engine.name,
                    path.display()
                )
            })
        }
        (Program::Staunton { .. }, None) => Ok(of_staunton()),
    }
}

/// The binary an engine's `cmd` runs: a bare name as the shell would find it on `PATH`, a path
/// from `base`.
pub fn program_path(base: &Path, cmd: &Path) -> Result<PathBuf, String> {
    match cmd.components().count() {
        1 => which(cmd).ok_or_else(|| format!("{} is not on this machine's PATH", cmd.display())),
        _ => Ok(absolute(base, cmd)),
    }
}

/// A program named without a folder, as the shell would find it on `PATH`.
fn which(program: &Path) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}

/// An engine binary's signature: `sha256:` and its hash.
pub fn of_binary(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(format!("sha256:{}", sha256_hex(&bytes)))
}

/// In-process staunton is this arbiter's: the same version plays the same games (a staunton
/// changed within a version is told by its bench).
fn of_staunton() -> String {
    format!("staunton@{}", env!("CARGO_PKG_VERSION"))
}
