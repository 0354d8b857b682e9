//! The `staunton` binary: a UCI engine by default, plus `bench` and `params`.

use std::io::{self, BufReader};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use staunton::bench::{self, DEFAULT_BENCH_DEPTH};
use staunton::Params;

const USAGE: &str = "\
usage: staunton [--params FILE] [COMMAND]

commands:
  (none), uci        speak UCI on stdin/stdout
  bench [DEPTH]      search the bench positions to DEPTH (default 12); prints the node count
  params [--toml|--json|--spsa]
                     list every parameter: a table (default), TOML, JSON or fishtest SPSA lines

options:
  --params FILE      start from the parameters in a TOML file (any subset of names)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("staunton: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut params = Params::default();
    let mut rest = args;
    if let [flag, file, tail @ ..] = rest {
        if flag == "--params" {
            params = Params::load(Path::new(file)).map_err(|e| e.to_string())?;
            rest = tail;
        }
    }
    match rest {
        [] => uci(params),
        [cmd] if cmd == "uci" => uci(params),
        [cmd, depth @ ..] if cmd == "bench" && depth.len() <= 1 => {
            let depth = match depth.first() {
                None => DEFAULT_BENCH_DEPTH,
                Some(d) => d
                    .parse::<u32>()
                    .ok()
                    .filter(|d| (1..=64).contains(d))
                    .ok_or_else(|| format!("bench: expected a depth from 1 to 64, found {d:?}"))?,
            };
            let total = bench::BENCH_FENS.len();
            let result = bench::run(&params, depth, |i, fen, nodes| {
                eprintln!("position {:>2}/{total}: {nodes:>9} nodes  {fen}", i + 1);
            });
            println!("===========================");
            println!("Total time (ms): {}", result.elapsed.as_millis());
            println!("Nodes searched: {}", result.nodes);
            println!("Nodes/second: {}", result.nps());
            Ok(())
        }
        [cmd, format @ ..] if cmd == "params" && format.len() <= 1 => {
            let text = match format.first().map(String::as_str) {
                None => params.describe(),
                Some("--toml") => params.to_toml(),
                Some("--json") => params.to_json() + "\n",
                Some("--spsa") => params.to_spsa(),
                Some(other) => return Err(format!("params: unknown format {other:?}")),
            };
            print!("{text}");
            Ok(())
        }
        [flag] if flag == "-h" || flag == "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unexpected arguments {other:?}")),
    }
}

fn uci(params: Params) -> Result<(), String> {
    let stdin = BufReader::new(io::stdin());
    staunton::uci::run(params, stdin, Arc::new(Mutex::new(io::stdout())));
    Ok(())
}
