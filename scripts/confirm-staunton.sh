#!/bin/sh
# Stage two of a change to staunton's parameters, after scripts/screen-staunton.sh passed it:
# the same SPRT over UCI at a time control, both sides the release binary
# (target/release/staunton), the change set as UCI options on "dev".
#
#   scripts/confirm-staunton.sh "option.razor_depth=2 option.razor_margin=250" [TC] [ELO1] [TAG]
#
# (defaults: 4+0.04, bounds [0, 5] normalized Elo, CONCURRENCY games at once: all cores
# unless set). Prints arbiter's result lines; the run is kept in target/confirm-TAG.db and
# resumes when rerun. The clock makes this the test of a change's cost in time as well as
# its worth in nodes; the machine must be otherwise idle.
set -eu
DEV=$1
TC=${2:-4+0.04}
ELO1=${3:-5}
TAG=${4:-$(printf '%s' "$DEV" | tr -c 'A-Za-z0-9_.=-' '_')}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARBITER=${ARBITER:-$ROOT/target/release/arbiter}
STAUNTON=${STAUNTON:-$ROOT/target/release/staunton}
[ -x "$ARBITER" ] && [ -x "$STAUNTON" ] || cargo build --release -q -p arbiter -p staunton --manifest-path "$ROOT/Cargo.toml"
CORES=${CONCURRENCY:-$(nproc 2>/dev/null || echo 1)}
# shellcheck disable=SC2086 # DEV is a list of KEY=VALUE words
exec "$ARBITER" -engine cmd="$STAUNTON" name=dev $DEV -engine cmd="$STAUNTON" name=base \
  -each tc="$TC" option.Hash=16 -games 2 -rounds 20000 -repeat -concurrency "$CORES" \
  -openings file="$ROOT/openings/balanced.epd" order=random -srand 23 \
  -sprt elo0=0 elo1="$ELO1" alpha=0.05 beta=0.05 model=normalized \
  -draw movenumber=40 movecount=8 score=10 -resign movecount=3 score=600 -maxmoves 300 \
  -event "confirm $TAG" -store "$ROOT/target/confirm-$TAG.db" -ratinginterval 0
