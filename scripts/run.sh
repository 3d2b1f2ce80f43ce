#!/usr/bin/env bash
# Command 1: install what Octopus needs, install the `octopus` binary on the
# PATH, and serve the API on the embedded default (SQLite in ./octopus-data,
# no other server). Extra arguments go to `octopus serve`, e.g.
#   ./scripts/run.sh --listen 0.0.0.0:7700
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
exec octopus serve "$@"
