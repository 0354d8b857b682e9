#!/usr/bin/env bash
# Measures the match runner (issue 5's figures), on this machine, in one run:
#   1. games per minute: in-process staunton vs the same games through the staunton UCI binary,
#      at node limits from 10 to 2000 a move (more pairs at the small limits)
#   2. the runner's own CPU time per move (the arbiter process only; engines are children),
#      printed for each node limit of 1 and again for the last
#   3. time losses at 1+0.01 with concurrency 2 (staunton UCI vs staunton UCI)
#   4. peak memory with 1,000 in-process games in flight
#   5. the runner's own CPU per engine move with engines that print a lot: Stockfish (when
#      installed) and the staunton binary each playing itself at nodes=2000, concurrency 2, as
#      issue 11 measured it against fastchess (224 us and 150 us then; fastchess 236 and 239)
# Usage: scripts/bench-runner.sh [PAIRS]   (default 100 pairs at 2000 nodes, PAIRS/2 for 3,
#   PAIRS/5 for 5)
#   SWEEP="10 100 2000" picks the node limits of 1 (default 10 100 500 2000);
#   ONLY_SWEEP=1 stops after 1; ONLY_CPU=1 runs 5 alone.
#   STOCKFISH=/path/to/stockfish (default: stockfish on the PATH, then /usr/games/stockfish);
#   ARBITER=/path/to/arbiter measures another build and builds nothing (target/release/staunton
#   must exist).
# Built with `cargo build --release` (lto, codegen-units=1). Needs python3 for the arithmetic.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-100}
# ARBITER=/path/to/arbiter measures that build instead (to compare two builds on one machine).
if [ -z "${ARBITER:-}" ]; then
  cargo build --release -q -p arbiter -p staunton
fi
arbiter=${ARBITER:-$PWD/target/release/arbiter}
staunton=$PWD/target/release/staunton
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
book=$PWD/openings/quick.epd

engine_lines() { # $1 = builtin | uci (the staunton binary) | the path of a UCI engine
  if [ "$1" = builtin ]; then
    printf '[[engine]]\nname = "dev"\nbuiltin = "staunton"\n[[engine]]\nname = "base"\nbuiltin = "staunton"\n'
  else
    local cmd=$1
    [ "$cmd" = uci ] && cmd=$staunton
    printf '[[engine]]\nname = "dev"\ncmd = "%s"\n[[engine]]\nname = "base"\ncmd = "%s"\n' "$cmd" "$cmd"
  fi
}

run() { # $1 = name, $2 = rounds, $3 = concurrency, $4 = [each] body, $5 = engines
  local dir=$work/$1
  mkdir -p "$dir"
  {
    printf 'name = "%s"\nrounds = %s\nconcurrency = %s\nstore = "runs.db"\njsonl = "games.jsonl"\n' "$1" "$2" "$3"
    printf '[openings]\nfile = "%s"\norder = "sequential"\n[adjudication]\nmaxmoves = 120\n' "$book"
    printf '[each]\n%s\n' "$4"
    engine_lines "$5"
  } > "$dir/run.toml"
  local start end
  start=$(date +%s.%N)
  "$arbiter" match --quiet "$dir/run.toml" > "$dir/out.txt" 2>&1 || true
  end=$(date +%s.%N)
  python3 - "$dir/games.jsonl" "$start" "$end" "$1" <<'PY'
import json, sys
path, start, end, name = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
games, moves, forfeits, summary = 0, 0, 0, {}
for line in open(path):
    d = json.loads(line)
    if d.get("type") == "summary":
        summary = d
        continue
    games += 1
    moves += len(d["move_ms"])
    forfeits += d["termination"] == "time forfeit"
wall = end - start
print(json.dumps({"name": name, "games": games, "moves": moves, "wall_s": round(wall, 2),
                  "games_per_min": round(games / wall * 60, 1), "time_forfeits": forfeits,
                  "runner_cpu_ms": summary.get("runner_cpu_ms"), "peak_rss_mb": summary.get("peak_rss_mb"),
                  "runner_cpu_us_per_move": round(1000 * summary.get("runner_cpu_ms", 0) / max(moves, 1), 1)}))
PY
}

# 5. The runner's own CPU per engine move (the arbiter process's user+system time, which
# excludes its children, the engines, divided by the moves the engines made): what reading an
# engine's output, building its commands and refereeing costs with engines that print a dozen
# `info` lines a move.
cpu_per_move() {
  local stockfish=${STOCKFISH:-$(command -v stockfish || echo /usr/games/stockfish)}
  local n=$(( pairs / 5 > 10 ? pairs / 5 : 10 ))
  local engines=uci
  [ -x "$stockfish" ] && engines="$stockfish uci"
  for engine in $engines; do
    local name=staunton
    [ "$engine" = uci ] || name=$(basename "$engine")
    local result
    result=$(run "cpu-$name" "$n" 2 'tc = "inf"
nodes = 2000
options = { Hash = "16" }' "$engine")
    python3 - "$name" "$result" <<'PY'
import json, sys
name, r = sys.argv[1], json.loads(sys.argv[2])
print(f"5. runner CPU per move, {name} against itself at nodes=2000, concurrency 2: "
      f"{r['runner_cpu_us_per_move']} us ({r['runner_cpu_ms']} ms over {r['moves']} moves, {r['games']} games)")
PY
  done
  [ -x "$stockfish" ] || echo "5. (no Stockfish found: set STOCKFISH=/path/to/stockfish for its row)"
}

echo "== arbiter runner benchmark, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${ONLY_CPU:-}" ]; then
  cpu_per_move
  exit 0
fi
# 1. The same games both ways at several node limits: the in-process path saves the protocol
# (process wake-ups, the position command, info lines), so its lead grows as searches shrink.
sweep=${SWEEP:-"10 100 500 2000"}
for nodes in $sweep; do
  # Enough games that the run, not the start-up, is measured: more pairs at small limits.
  n=$(( pairs * 2000 / nodes )); n=$(( n > pairs * 20 ? pairs * 20 : n )); n=$(( n < pairs ? pairs : n ))
  a=$(run "inprocess$nodes" "$n" 2 "tc = \"inf\"
nodes = $nodes
hash = 1" builtin)
  b=$(run "uci$nodes" "$n" 2 "tc = \"inf\"
nodes = $nodes
options = { Hash = \"1\" }" uci)
  python3 - "$nodes" "$a" "$b" <<'PY'
import json, sys
nodes, a, b = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
ratio = a['games_per_min'] / max(b['games_per_min'], 1e-9)
print(f"1. games/min at {nodes} nodes, concurrency 2: in-process {a['games_per_min']}, "
      f"UCI binary {b['games_per_min']}, ratio {ratio:.2f}x "
      f"(runner CPU per move, UCI: {b['runner_cpu_us_per_move']} us)")
PY
  last_uci=$b
done
[ -n "${ONLY_SWEEP:-}" ] && exit 0
losses=$(run timeloss $((pairs / 2)) 2 'tc = "1+0.01"
timemargin = 0
options = { Hash = "8" }' uci)
flight=$(run inflight 500 1000 'tc = "inf"
nodes = 200
hash = 0' builtin)
python3 - "$last_uci" "$losses" "$flight" <<'PY'
import json, sys
uci, losses, flight = (json.loads(a) for a in sys.argv[1:])
print(f"2. runner CPU per move (UCI run, arbiter process only): {uci['runner_cpu_us_per_move']} us "
      f"({uci['runner_cpu_ms']} ms over {uci['moves']} moves)")
print(f"3. time losses at 1+0.01, concurrency 2, margin 0 ms: {losses['time_forfeits']} of {losses['games']} games")
print(f"4. peak memory, 1000 in-process games in flight (500 pairs, 200 nodes, 64 KiB hash): {flight['peak_rss_mb']:.1f} MiB "
      f"({flight['games']} games in {flight['wall_s']} s)")
PY
cpu_per_move
