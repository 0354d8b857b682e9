#!/bin/sh
# The README's odds table: staunton against itself at each handicap of the old laws, the
# giver giving the odds in every game (a handicap match, arbiter's [openings] giver), from the
# shipped odds books (openings/odds/, made by `arbiter book generate --odds NAME`).
#
#   scripts/odds-table.sh [ROUNDS] [NODES]     (defaults: 100 rounds = 200 games, 5000 nodes)
#
# Prints one line per handicap: the games, the giver's score and the handicap's measured
# worth in Elo with its 95% interval (from the giver's side: the odds cost the giver this much).
set -eu
ROUNDS=${1:-100}
NODES=${2:-5000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARBITER=${ARBITER:-$ROOT/target/release/arbiter}
[ -x "$ARBITER" ] || cargo build --release -p arbiter --manifest-path "$ROOT/Cargo.toml"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CORES=$(nproc 2>/dev/null || echo 1)
for ODDS in pawn-and-move pawn-and-two-moves knight rook queen; do
  cat > "$WORK/$ODDS.toml" <<TOML
name = "odds-$ODDS"
seed = 1851
rounds = $ROUNDS
concurrency = $CORES
store = "$WORK/odds.db"
[each]
tc = "inf"
nodes = $NODES
[[engine]]
name = "giver"
builtin = "staunton"
[[engine]]
name = "receiver"
builtin = "staunton"
[openings]
file = "$ROOT/openings/odds/$ODDS.epd"
order = "random"
odds = "$ODDS"
giver = "giver"
[adjudication]
maxmoves = 200
resign = { movecount = 4, score = 2000 }
TOML
  OUT=$("$ARBITER" match --quiet "$WORK/$ODDS.toml" 2>&1 || true)
  SCORE=$(printf '%s\n' "$OUT" | grep '^Score of' | tail -1)
  ELO=$(printf '%s\n' "$OUT" | grep '^Elo difference' | tail -1)
  printf '%-20s %s | %s\n' "$ODDS" "${SCORE#Score of giver vs receiver: }" "$ELO"
done
