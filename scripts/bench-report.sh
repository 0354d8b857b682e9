#!/usr/bin/env bash
# How long `arbiter report` takes on a 100,000-game run (issue 12: "seconds, not minutes").
#
# Writes a store of one finished match with realistic records (per-move times, clocks, search
# times, PGN) straight through arbiter_store (crates/report/examples/bench_store.rs: far faster
# than playing the games, even at nodes=1), then times the report in all three formats and
# prints the seconds.
#
#   scripts/bench-report.sh [GAMES]          # default 100000, release build
#   PROFILE=dev scripts/bench-report.sh      # a debug build: quicker to build, slower to run
#
# The store goes to /dev/shm when it exists: the store commits each pair with a full fsync,
# which measures the disk rather than the report.
set -euo pipefail

games="${1:-100000}"
profile="${PROFILE:-release}"
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out_dir="$target/$([ "$profile" = dev ] && echo debug || echo "$profile")"

cd "$root"
cargo build --quiet --profile "$profile" -p arbiter --bin arbiter
cargo build --quiet --profile "$profile" -p arbiter-report --example bench_store

base="$( [ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")"
work="$(mktemp -d "$base/arbiter-bench-report.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$out_dir/examples/bench_store" "$work/bench.db" "$games"

start=$(date +%s.%N)
"$out_dir/arbiter" report bench --store "$work/bench.db" --out "$work/report" >/dev/null
end=$(date +%s.%N)

seconds=$(echo "$end - $start" | bc)
size=$(du -sh "$work/report" | cut -f1)
printf 'arbiter report on %s games (%s build): %.2f s (report: %s)\n' \
    "$games" "$profile" "$seconds" "$size"
