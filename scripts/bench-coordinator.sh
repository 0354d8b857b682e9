#!/usr/bin/env bash
# The fleet's coordinator capacity on this machine, in one run: N simulated workers (no games:
# they claim, heartbeat and submit one-pair batches with two games' PGN) against one throwaway
# PostgreSQL cluster (fsync on, default settings), for N = 10, 100, 1000; and pgbench's TPC-B on
# the same cluster as the yardstick (8 clients). Prints claim+submit cycles a second and the
# latency percentiles of a cycle (claim, heartbeat and submit: three transactions).
# Usage: scripts/bench-coordinator.sh [--server] [SECONDS]   (default 20 per N)
#   WORKERS="10 100 1000" picks the N; STORES=4 the connection pools (8 connections each) the
#   simulated workers share, as that many worker processes would; BENCH=PATH runs that build of
#   the example instead of building this one (to compare two commits on alike clusters).
#   --server: through `arbiter serve` instead, two replicas in front of the database and the
#   simulated workers over HTTP (crates/server/examples/coordinator_http.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
server=false
if [ "${1:-}" = "--server" ]; then
  server=true
  shift
fi
seconds=${1:-20}
workers=${WORKERS:-"10 100 1000"}
stores=${STORES:-4}
bench=${BENCH:-}
if [ -z "$bench" ] && $server; then
  cargo build --release -q -p arbiter-server --features arbiter-store/postgres --example coordinator_http
  bench=$PWD/target/release/examples/coordinator_http
elif [ -z "$bench" ]; then
  cargo build --release -q -p arbiter-store --features postgres --example coordinator
  bench=$PWD/target/release/examples/coordinator
fi

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
bin=${bin:-$(dirname "$(command -v pg_ctl)")}
work=$(mktemp -d)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  # PostgreSQL refuses to run as root.
  chown postgres "$work"
  as_pg=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  "${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"${as_pg[@]}" "$bin/initdb" -D "$work/data" -U arbiter --auth=trust >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
"${as_pg[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U arbiter arbiter
"${as_pg[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U arbiter pgbench
url="postgres://arbiter@127.0.0.1:$port/arbiter"

echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $(nproc) cores, fsync on"
"$bin/pgbench" -h 127.0.0.1 -p "$port" -U arbiter -i -q -s 8 pgbench >/dev/null 2>&1
tps=$("$bin/pgbench" -h 127.0.0.1 -p "$port" -U arbiter -c 8 -j 2 -T "$seconds" pgbench 2>/dev/null \
  | awk '/^tps/ {print int($3)}')
echo "pgbench TPC-B, 8 clients: $tps transactions/s"
for n in $workers; do
  if $server; then
    "$bench" "$url" "$n" "$seconds"
  else
    "$bench" "$url" "$n" "$stores" "$seconds"
  fi
done
