//! The bench signature: the node count an engine's `bench` command prints, which its authors
//! put in every commit message (`Bench: 3467381`), as Stockfish and Ethereal do. A run that
//! names an engine's bench is played only by an engine that prints that count: a worker whose
//! binary was built with another compiler, from another commit or with another network is
//! refused before it plays a game, where a SHA-256 would only say that the bytes differ.
//!
//! A UCI engine is run as `CMD ARGS... bench` (its `dir` and `env` as for play), and the count
//! is read from what it prints on stdout or stderr: `Nodes searched  : N` (Stockfish, staunton),
//! `Nodes : N` (Ethereal), or `N nodes ... nps` (the one-line summaries of others); the last
//! such line counts. In-process staunton is benched in process, with the run's parameters, as
//! `staunton bench` does. A count once measured for the same program, arguments and parameters
//! is not measured again in this process.
//!
//! In-process staunton is part of arbiter, so a new arbiter (or new defaults) changes it
//! without the user touching the configuration: a run that names no bench for it is given the
//! count this arbiter's staunton prints when it is created ([`pin_builtin`]), and a resume by
//! another arbiter whose staunton plays otherwise is refused, as a worker's other build is.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::AsyncReadExt;

use crate::config::{ConfigError, Program, RunConfig};
use crate::player::{PlayerKind, PlayerSpec};
use crate::process::ProcessSpec;

/// How long an engine's `bench` may take: Stockfish's default bench is a few seconds, a slow
/// engine's on a slow machine a minute.
pub const BENCH_TIMEOUT: Duration = Duration::from_secs(300);

/// The most output read from a `bench` (a chatty engine prints a line per position).
const MAX_OUTPUT: u64 = 4 * 1024 * 1024;

/// The node count in a bench's output: the last line that states the total (`Nodes searched:
/// N`, `Nodes: N`), else the last `N nodes` summary (an engine may print a line per position
/// in that form too, on another stream, so a stated total comes first).
pub fn nodes_in(output: &str) -> Option<u64> {
    let lines = || output.lines().rev();
    lines()
        .find_map(stated_total)
        .or_else(|| lines().find_map(summary))
}

/// `Nodes searched : N` or `Nodes: N`.
fn stated_total(line: &str) -> Option<u64> {
    let lower = line.trim().to_ascii_lowercase();
    let rest = lower.strip_prefix("nodes")?.trim_start();
    let rest = rest.strip_prefix("searched").unwrap_or(rest).trim_start();
    let digits = rest.strip_prefix(':')?.trim();
    digits.split_whitespace().next()?.parse().ok()
}

/// `... N nodes ...`.
fn summary(line: &str) -> Option<u64> {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    words
        .windows(2)
        .find(|pair| pair[1].trim_end_matches(',') == "nodes")
        .and_then(|pair| pair[0].parse().ok())
}

/// Counts measured in this process, by what was benched.
static MEASURED: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

/// What identifies a bench: the program and everything it is given, or staunton's parameters.
fn key_of(player: &PlayerSpec) -> String {
    match &player.kind {
        PlayerKind::Uci(process) => format!(
            "{}\0{:?}\0{:?}\0{:?}",
            process.cmd.display(),
            process.args,
            process.dir,
            process.env
        ),
        PlayerKind::Builtin(builtin) => format!("staunton\0{:?}", builtin.params),
    }
}

/// `player`'s bench node count, measured now (or earlier in this process).
pub fn measure(player: &PlayerSpec) -> BoxFuture<'_, Result<u64, String>> {
    Box::pin(async move {
        let key = key_of(player);
        if let Some(nodes) = MEASURED
            .lock()
            .expect("the bench counts")
            .as_ref()
            .and_then(|measured| measured.get(&key))
        {
            return Ok(*nodes);
        }
        let nodes = match &player.kind {
            PlayerKind::Uci(process) => bench_process(process).await?,
            PlayerKind::Builtin(builtin) => {
                let params = builtin.params.clone();
                tokio::task::spawn_blocking(move || {
                    staunton::bench::run(
                        &params,
                        staunton::bench::DEFAULT_BENCH_DEPTH,
                        |_, _, _| {},
                    )
                    .nodes
                })
                .await
                .map_err(|e| format!("staunton's bench failed: {e}"))?
            }
        };
        MEASURED
            .lock()
            .expect("the bench counts")
            .get_or_insert_with(HashMap::new)
            .insert(key, nodes);
        Ok(nodes)
    })
}

/// Runs `CMD ARGS... bench` and reads its count.
async fn bench_process(process: &ProcessSpec) -> Result<u64, String> {
    let shown = format!("{} bench", process.cmd.display());
    let mut command = tokio::process::Command::new(&process.cmd);
    command
        .args(&process.args)
        .arg("bench")
        .envs(process.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &process.dir {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    let (mut stdout, mut stderr) = (
        child.stdout.take().expect("piped").take(MAX_OUTPUT),
        child.stderr.take().expect("piped").take(MAX_OUTPUT),
    );
    let read = async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (a, b) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        a.and(b).map(|_| (out, err))
    };
    let (out, err) = match tokio::time::timeout(BENCH_TIMEOUT, read).await {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => return Err(format!("reading `{shown}`: {e}")),
        Err(_) => {
            let _ = child.kill().await;
            return Err(format!(
                "`{shown}` did not finish in {} s",
                BENCH_TIMEOUT.as_secs()
            ));
        }
    };
    // The pipes closed; an engine that keeps running without them is not waited for long.
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    let _ = child.kill().await;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&err)
    );
    nodes_in(&text).ok_or_else(|| {
        let last = text
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("nothing");
        format!(
            "`{shown}` printed no node count (expected a line such as \"Nodes searched: N\"; \
             its last line: {:?})",
            last.chars().take(200).collect::<String>()
        )
    })
}

/// `config` with each in-process staunton that names no bench given the count it prints here
/// with its parameters (`base` is the configuration's folder, for a `params_file`): stored with
/// a new run, it records which staunton the run is played by.
pub fn pin_builtin<'a>(
    config: &'a RunConfig,
    base: &'a Path,
) -> BoxFuture<'a, Result<RunConfig, ConfigError>> {
    Box::pin(async move {
        let mut pinned = config.clone();
        let checked = config.check()?;
        for (stated, engine) in pinned.engines.iter_mut().zip(checked.engines) {
            if stated.bench.is_some() || !matches!(engine.program, Program::Staunton { .. }) {
                continue;
            }
            let player = engine.resolve(base)?;
            let nodes = measure(&player).await.map_err(|why| {
                crate::config::invalid(format!("engine[{}].bench", stated.name), why)
            })?;
            stated.bench = Some(nodes);
        }
        Ok(pinned)
    })
}

/// Checks each engine of `config` that states a bench (`players` are its engines resolved on
/// this machine, in its order), as [`verify`] does.
pub fn verify_stated<'a>(
    config: &'a RunConfig,
    players: &'a [PlayerSpec],
) -> BoxFuture<'a, Result<(), String>> {
    Box::pin(async move {
        let benches: Vec<Option<u64>> = config.engines.iter().map(|e| e.bench).collect();
        verify(players, &benches).await
    })
}

/// Checks each player that has an expected bench (`benches[i]` for `players[i]`): the reason
/// the first that differs or cannot be benched is refused.
pub fn verify<'a>(
    players: &'a [PlayerSpec],
    benches: &'a [Option<u64>],
) -> BoxFuture<'a, Result<(), String>> {
    Box::pin(async move {
        for (player, expected) in players.iter().zip(benches) {
            let Some(expected) = *expected else {
                continue;
            };
            let measured = measure(player)
                .await
                .map_err(|why| format!("engine {}: {why}", player.name))?;
            if measured == expected {
                continue;
            }
            let why = match player.kind {
                PlayerKind::Builtin(_) => {
                    "in-process staunton of another arbiter version, or with other defaults or \
                     parameters: it plays other games than the run's, so finish the run with the \
                     arbiter that started it, or start a new run with another `name`"
                }
                PlayerKind::Uci(_) => "another build of the engine",
            };
            return Err(format!(
                "engine {}: its bench here is {measured} nodes, but the run expects \
                 {expected} ({why})",
                player.name
            ));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summaries of the engines on Debian and staunton's, as they print them.
    #[test]
    fn the_count_is_read_from_each_engines_summary() {
        let stockfish = "===========================\nTotal time (ms) : 2537\n\
                         Nodes searched  : 3467381\nNodes/second    : 1366724\n";
        assert_eq!(nodes_in(stockfish), Some(3_467_381));
        let ethereal = "Time  : 3073ms\nNodes : 5132900\nNPS   : 1670322\n";
        assert_eq!(nodes_in(ethereal), Some(5_132_900));
        let staunton = "Total time (ms): 654\nNodes searched: 1308269\nNodes/second: 1999530\n";
        assert_eq!(nodes_in(staunton), Some(1_308_269));
        let one_line = "info string bench\nOVERALL: 4210 ms 2950436 nodes 700816 nps\n";
        assert_eq!(nodes_in(one_line), Some(2_950_436));
        // A per-position line before the total: the last statement wins.
        // Per-position lines after the total (staunton's stderr read after its stdout): the
        // stated total wins.
        let both = "Nodes searched: 5000\nposition 46/46:     0 nodes  7k/7P/6K1/8/3B4/8/8/8 b\n";
        assert_eq!(nodes_in(both), Some(5000));
    }

    #[test]
    fn output_without_a_count_has_none() {
        assert_eq!(nodes_in(""), None);
        assert_eq!(nodes_in("Usage: glaurung bench <hash> <threads>\n"), None);
        assert_eq!(nodes_in("Nodes/second: 1999530\n"), None);
        assert_eq!(nodes_in("nodes searched: many\n"), None);
    }
}
