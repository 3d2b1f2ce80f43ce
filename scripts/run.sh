#!/usr/bin/env bash
# Command 1: install what Octopus needs, build it, and serve the API on the
# embedded default (SQLite in ./octopus-data, no other server).
# Extra arguments go to `octopus serve`, e.g. ./scripts/run.sh --listen 0.0.0.0:7700
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prerequisites.sh
ensure_prerequisites

cargo build --release --locked -p octopus-cli
exec "${CARGO_TARGET_DIR:-target}/release/octopus" serve "$@"
