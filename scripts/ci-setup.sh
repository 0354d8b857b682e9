#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine. Idempotent: safe to run again.
# The end-to-end tests play real UCI engines from Debian (they install to /usr/games), the
# PostgreSQL tests start throwaway clusters of their own with PostgreSQL's server programs
# (initdb, pg_ctl: crates/pgtest; no server needs to be running, none is started here), and the
# report's browser test (tests/report_browser.rs) renders pages with headless Chromium.
set -euo pipefail

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

packages=(stockfish ethereal-chess glaurung toga2 postgresql chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci-setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
for engine in stockfish ethereal-chess glaurung toga2; do
  [ -x "/usr/games/$engine" ] || { echo "ci-setup: /usr/games/$engine is missing" >&2; exit 1; }
done
command -v chromium >/dev/null || { echo "ci-setup: chromium is missing" >&2; exit 1; }

# python-chess (PyPI; Debian has no package): the independent reading of positions that
# tests/datagen_cli.rs compares arbiter's with. Debian's own Python refuses pip without
# --break-system-packages; a machine without pip still tests, with that comparison skipped.
python3 -c 'import chess' 2>/dev/null \
  || python3 -m pip install --quiet chess 2>/dev/null \
  || python3 -m pip install --quiet --break-system-packages chess 2>/dev/null \
  || echo "ci-setup: python-chess not installed; the tests that compare with it skip" >&2

# PostgreSQL's server programs, where crates/pgtest looks for them when pg_ctl is not on PATH.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] && [ -x "$pg_bin/pg_ctl" ] \
  || { echo "ci-setup: PostgreSQL's initdb and pg_ctl are missing" >&2; exit 1; }
echo "ci-setup: engines in /usr/games, PostgreSQL's programs in $pg_bin"
