#!/bin/sh
# staunton's rating on Stockfish's UCI_Elo scale: plays configs/ladder.toml (a gauntlet of
# staunton over UCI against Stockfish 15.1 at several UCI_Elo levels, Toga II 3.0, Ethereal 12
# and Glaurung 2.2), then rates every engine with `arbiter rate`, anchored on the Stockfish
# level that scored closest to even against staunton (the level staunton's rating leans on
# least by extrapolation). The other levels' measured ratings beside their nominal UCI_Elo
# say how well the scale holds at this time control.
#
#   scripts/ladder.sh [ROUNDS] [TC] [CONCURRENCY]   (defaults: the config's 10 pairs per
#                                                     opponent, 10+0.1, 1 game at a time)
#
# A rerun with the same arguments resumes an unfinished run (target/ladder*.db); after a
# finished one it plays a new run of the same configuration, another sample. Writes the
# games (target/ladder*.pgn), the report (target/ladder*-report/) and prints the rating list,
# the rating line and each engine's losses on time. Each version's games are also kept under
# target/ladder-history/TAG/BENCH-runN.pgn (staunton named by its bench, so
# runs of one version pool as one player) and, once there are two, every version
# is rated in one pool.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-10}
TC=${2:-10+0.1}
CONCURRENCY=${3:-1}
cd "$ROOT"
cargo build --release -q -p arbiter -p staunton
ARBITER=$ROOT/target/release/arbiter
# A run of other rounds or another clock is another run: its own name and files.
TAG=$(printf '%s' "ladder-$ROUNDS-$TC" | tr -c 'A-Za-z0-9.-' '-')
[ "$ROUNDS-$TC" = "10-10+0.1" ] && TAG=ladder
CONFIG=$ROOT/target/$TAG.toml
sed -e "s|^name = \"ladder\"|name = \"$TAG\"|" \
    -e "s|^rounds = .*|rounds = $ROUNDS|" \
    -e "s|^concurrency = .*|concurrency = $CONCURRENCY|" \
    -e "s|^tc = .*|tc = \"$TC\"|" \
    -e "s|target/ladder|target/$TAG|g" \
    "$ROOT/configs/ladder.toml" > "$CONFIG"
STATUS=0
"$ARBITER" match --quiet "$CONFIG" > "$ROOT/target/$TAG.log" 2>&1 || STATUS=$?
if [ "$STATUS" -ne 0 ]; then
  tail -20 "$ROOT/target/$TAG.log" >&2
  echo "ladder: arbiter match exited $STATUS (log: target/$TAG.log)" >&2
  exit "$STATUS"
fi
PGN=$ROOT/target/$TAG.pgn
"$ARBITER" rate "$PGN" --json > "$ROOT/target/$TAG-rate.json"
# The Stockfish level whose score against staunton is nearest 50%.
ANCHOR=$(python3 - "$ROOT/target/$TAG-rate.json" <<'PY'
import json, sys
rated = json.load(open(sys.argv[1]))["engines"]
levels = [e for e in rated if e["name"].startswith("sf-") and e["games"] > 0]
best = min(levels, key=lambda e: abs(e["score"] - 0.5))
print(f'{best["name"]}={best["name"][3:]}')
PY
)
"$ARBITER" rate "$PGN" --anchor "$ANCHOR"
"$ARBITER" rate "$PGN" --anchor "$ANCHOR" --json > "$ROOT/target/$TAG-rate.json"
python3 - "$ROOT/target/$TAG-rate.json" "$PGN" "$TC" <<'PY'
import json, re, sys
rated = json.load(open(sys.argv[1]))
engines = rated["engines"]
staunton = next(e for e in engines if e["name"] == "staunton")
anchor = rated["anchor"]
print()
print(f'staunton: {staunton["elo"]:.0f} +/- {staunton["half_width"]:.0f} on the Stockfish UCI_Elo '
      f'scale ({anchor["name"]} anchored at {anchor["elo"]:.0f}), {staunton["games"]} games at {sys.argv[3]}')
for e in engines:
    if e["name"].startswith("sf-") and e["name"] != anchor["name"]:
        print(f'  {e["name"]}: measured {e["elo"]:.0f} +/- {e["half_width"]:.0f} (nominal {e["name"][3:]})')
# Losses on time, by the engine that lost them.
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
losses = {}
for game in re.split(r"\n\n(?=\[Event )", text):
    tags = dict(re.findall(r'^\[(\w+) "(.*)"\]$', game, re.M))
    if tags.get("Termination") != "time forfeit":
        continue
    loser = {"1-0": "Black", "0-1": "White"}.get(tags.get("Result"))
    if loser:
        losses[tags[loser]] = losses.get(tags[loser], 0) + 1
print("losses on time: " + (", ".join(f"{n} {k}" for n, k in sorted(losses.items())) or "none"))
PY
# Every version's ladder games in one pool: each run alone rates staunton against 20 games per
# opponent, too few to pin the opponents; rated together, the versions share the opponents'
# ratings and the difference between versions is measured rather than read off two anchors.
BENCH=$("$ROOT/target/release/staunton" bench 2>&1 | sed -n 's/^Nodes searched: //p')
HISTORY=$ROOT/target/ladder-history/$TAG
mkdir -p "$HISTORY"
RUN=$(sed -n '1s/^Run \([0-9]*\) .*/\1/p' "$ROOT/target/$TAG.log")
sed "s/\"staunton\"\]/\"staunton-$BENCH\"]/" "$PGN" > "$HISTORY/$BENCH-run$RUN.pgn"
if [ "$(ls "$HISTORY"/*.pgn | wc -l)" -gt 1 ]; then
  echo
  echo "every version's games of this ladder rated together (target/ladder-history/$TAG/BENCH-runN.pgn):"
  "$ARBITER" rate "$HISTORY"/*.pgn --anchor "$ANCHOR" | grep -E "^ *Rank|staunton-"
fi
