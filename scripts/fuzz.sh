#!/usr/bin/env bash
# Fuzzes every parser of the rules crate for a given time each (default 60 s):
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Targets: fen san descriptive uci epd pgn. Needs a nightly toolchain (rustup toolchain install nightly)
# and cargo-fuzz (installed here if missing). Crashes land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fen san descriptive uci epd pgn)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
toolchain=+nightly
rustup run nightly rustc --version >/dev/null 2>&1 || { echo "fuzz.sh: needs a nightly toolchain" >&2; exit 2; }

status=0
for target in "${targets[@]}"; do
  echo "== fuzzing $target for ${seconds}s"
  mkdir -p "fuzz/corpus/$target"
  if ! cargo $toolchain fuzz run --fuzz-dir fuzz "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 2>&1 | tail -n 12; then
    echo "!! $target found a crash: see fuzz/artifacts/$target" >&2
    status=1
  fi
done
exit $status
