#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine. Idempotent: safe to run again.
# Today the rules and statistics tests need nothing beyond Rust; engines and databases are
# added here as the runner and the store land.
set -euo pipefail
echo "ci-setup: nothing to install yet"
