#!/usr/bin/env bash
# Installs and starts what the test suite needs on a fresh Debian machine. Idempotent: safe to
# run again. The end-to-end tests play real UCI engines from Debian (they install to
# /usr/games), the store's PostgreSQL tests need a live server with a test database, and the
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

# PostgreSQL: start the cluster Debian created, then the role and database the tests use
# (postgres://arbiter:arbiter@localhost/arbiter_test, the default of crates/store/tests/postgres.rs).
version=$(ls /etc/postgresql | sort -n | tail -n 1)
"${sudo_cmd[@]}" pg_ctlcluster "$version" main start 2>/dev/null || true
for _ in $(seq 1 30); do
  "${sudo_cmd[@]}" runuser -u postgres -- pg_isready -q && break
  sleep 1
done
psql_as_postgres() { "${sudo_cmd[@]}" runuser -u postgres -- psql -qtAX -c "$1"; }
[ "$(psql_as_postgres "SELECT 1 FROM pg_roles WHERE rolname = 'arbiter'")" = 1 ] \
  || psql_as_postgres "CREATE ROLE arbiter LOGIN PASSWORD 'arbiter'"
[ "$(psql_as_postgres "SELECT 1 FROM pg_database WHERE datname = 'arbiter_test'")" = 1 ] \
  || psql_as_postgres "CREATE DATABASE arbiter_test OWNER arbiter"
echo "ci-setup: engines in /usr/games, PostgreSQL $version with database arbiter_test"
