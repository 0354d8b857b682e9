#!/bin/sh
# Screens a change to staunton's parameters the way its CHANGELOG's entries were screened:
# an SPRT of staunton with the change ("dev") against staunton as it is ("base"), both in
# process at fixed nodes from the balanced book, fishtest's normalized model.
#
#   scripts/screen-staunton.sh "param.razor_depth=2 param.razor_margin=250" [NODES] [ELO1] [TAG]
#
# (defaults: 6000 nodes a move, bounds [0, 5] normalized Elo, CONCURRENCY games at once: all
# cores unless set). Prints arbiter's result lines; the run is kept in target/screen-TAG.db
# (TAG defaults to the change) and resumes when rerun. Stage two is the same change over UCI
# at a time control: scripts/confirm-staunton.sh.
set -eu
DEV=$1
NODES=${2:-6000}
ELO1=${3:-5}
TAG=${4:-$(printf '%s' "$DEV" | tr -c 'A-Za-z0-9_.=-' '_')}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARBITER=${ARBITER:-$ROOT/target/release/arbiter}
[ -x "$ARBITER" ] || cargo build --release -q -p arbiter --manifest-path "$ROOT/Cargo.toml"
CORES=${CONCURRENCY:-$(nproc 2>/dev/null || echo 1)}
# shellcheck disable=SC2086 # DEV is a list of KEY=VALUE words
exec "$ARBITER" -engine builtin=staunton name=dev $DEV -engine builtin=staunton name=base \
  -each tc=inf nodes="$NODES" hash=8 -games 2 -rounds 20000 -repeat -concurrency "$CORES" \
  -openings file="$ROOT/openings/balanced.epd" order=random -srand 23 \
  -sprt elo0=0 elo1="$ELO1" alpha=0.05 beta=0.05 model=normalized \
  -draw movenumber=40 movecount=8 score=10 -resign movecount=3 score=600 -maxmoves 300 \
  -event "screen $TAG" -store "$ROOT/target/screen-$TAG.db" -ratinginterval 0
