#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine. Idempotent: safe to run again.
# The end-to-end tests play real UCI engines from Debian (they install to /usr/games).
set -euo pipefail

packages=(stockfish ethereal-chess glaurung toga2)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci-setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
for engine in stockfish ethereal-chess glaurung toga2; do
  [ -x "/usr/games/$engine" ] || { echo "ci-setup: /usr/games/$engine is missing" >&2; exit 1; }
done
echo "ci-setup: engines ready in /usr/games"
