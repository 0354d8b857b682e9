#!/bin/sh
# Soak: thousands of fast games in which staunton must never be without a legal move (issue 23).
# staunton over UCI (the release binary) against staunton in process, at a fast clock from the
# balanced book, no adjudication (games run into repetitions and fifty-move counts), both
# colours; then counts what the runner recorded: illegal or missing moves ("bestmove 0000" or
# "(none)" with moves on the board) and time losses, by engine.
#
#   scripts/soak-staunton.sh [ROUNDS] [TC]     (defaults: 1000 rounds = 2000 games, 1+0.01)
set -eu
ROUNDS=${1:-1000}
TC=${2:-1+0.01}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARBITER=${ARBITER:-$ROOT/target/release/arbiter}
STAUNTON=${STAUNTON:-$ROOT/target/release/staunton}
[ -x "$ARBITER" ] && [ -x "$STAUNTON" ] || cargo build --release -p arbiter -p staunton --manifest-path "$ROOT/Cargo.toml"
# The configuration lives in a scratch folder: the engine's path must not be relative.
STAUNTON=$(cd "$(dirname "$STAUNTON")" && pwd)/$(basename "$STAUNTON")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/soak.toml" <<TOML
name = "soak"
rounds = $ROUNDS
concurrency = $(nproc 2>/dev/null || echo 1)
store = "$WORK/soak.db"
pgnout = "$WORK/soak.pgn"
[each]
tc = "$TC"
[[engine]]
name = "uci"
cmd = "$STAUNTON"
[[engine]]
name = "inprocess"
builtin = "staunton"
[openings]
file = "$ROOT/openings/balanced.epd"
order = "random"
TOML
START=$(date +%s)
"$ARBITER" match --quiet "$WORK/soak.toml" > "$WORK/out.txt" 2>&1 || true
END=$(date +%s)
if [ ! -s "$WORK/soak.pgn" ]; then
  echo "soak: no games were played:" >&2
  tail -5 "$WORK/out.txt" >&2
  exit 2
fi
GAMES=$(grep -c '^\[Result ' "$WORK/soak.pgn" || true)
ILLEGAL=$(grep -c 'makes an illegal move' "$WORK/soak.pgn" || true)
TIME=$(grep -c 'loses on time' "$WORK/soak.pgn" || true)
echo "soak: $GAMES games at $TC in $((END - START)) s; illegal or missing moves: $ILLEGAL; time losses: $TIME"
grep -h 'makes an illegal move\|loses on time' "$WORK/soak.pgn" | sed 's/^/  /' | sort | uniq -c | head -20
grep '^Score of\|^Elo difference' "$WORK/out.txt" | tail -2
