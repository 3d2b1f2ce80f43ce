#!/usr/bin/env bash
# Command 2: everything CI checks — formatting, lints, and every test.
# A failing check does not stop the run: every test binary runs, and the
# run ends with the list of what failed (and a non-zero exit).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh

failed_checks=()
# Runs a check; a failure is recorded and the run goes on.
check() {
  local name="$1"
  shift
  "$@" || failed_checks+=("$name")
}
source scripts/prerequisites.sh
step "prerequisites: Rust, a C compiler, the embedding model"
ensure_prerequisites
source scripts/clients.sh
step "the clients the door tests run (PyPI, npm, Debian)"
ensure_clients

step "formatting"
check "formatting (cargo fmt --all)" cargo fmt --all --check
# The tests of PostgreSQL, Qdrant and the official clients sit behind features (a bare `cargo test`
# runs without them); lints see every test, those of the release tier
# (scripts/release-tier.sh: the soak, the answer harness on a real small
# model) too, so that what this command does not run still compiles cleanly.
step "lints: every crate and test compiled with every feature"
always_features=octopus-postgres/server-tests,octopus-engine/postgres-tests,octopus-server/postgres-tests,octopus-cli/postgres-tests,octopus-cli/client-tests
check "lints (cargo clippy)" cargo clippy --workspace --all-targets --locked --features "$always_features",octopus-qdrant/server-tests,octopus-qdrant/fault-tests,octopus-server/qdrant-tests,octopus-server/qdrant-fault-tests,octopus-cli/qdrant-tests,octopus-cli/qdrant-fault-tests,octopus-cli/soak-tests,octopus-bench/small-model-tests -- -D warnings

# The encoder's vector kernels are x86-64 code behind `cfg` gates; elsewhere
# (Arm servers and laptops) its scalar loops run, the references the tests
# compare every kernel with on this host. Its library is linted for aarch64
# too, when rustup can install that target's standard library.
step "lints: the local encoder for aarch64"
aarch64_checked=""
if command -v rustup >/dev/null && rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1; then
  aarch64_checked=1
  check "the encoder for aarch64 (cargo clippy --target aarch64-unknown-linux-gnu)" \
    cargo clippy --locked -p octopus-embed --lib --no-default-features --features local \
    --target aarch64-unknown-linux-gnu -- -D warnings
fi

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
# own (Debian's PostgreSQL with pgvector built for any x86-64 CPU, once).
if [ -z "${OCTOPUS_TEST_DATABASE_URL:-}" ]; then
  test_cluster=$(mktemp -d -t octopus-test-postgres.XXXXXX)
  chmod 755 "$test_cluster"
  export OCTOPUS_TEST_DATABASE_URL
  OCTOPUS_TEST_DATABASE_URL=$(OCTOPUS_PG_CLUSTER="$test_cluster" ./scripts/postgres.sh start)
  # Read by the pgvector test, which quotes the server's log when it fails.
  export OCTOPUS_TEST_DATABASE_LOG="$test_cluster/postgres.log"
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
# pgvector on this CPU first, by itself: an extension built for another CPU
# kills the server at its first long vector, and every PostgreSQL test after
# it would fail with a lost connection; this one fails by name, with the
# server's log line.
step "tests: compiled, and pgvector checked on this CPU"
check "pgvector on this CPU (octopus-postgres: pgvector_on_this_cpu)" \
  cargo test --workspace --locked --tests --features "$features" pgvector_on_this_cpu
step "tests: run"
# --no-fail-fast: every test binary runs, whichever fails. The log is read
# at the end for the closing lines.
cargo test --workspace --locked --no-fail-fast --features "$features" 2>&1 | tee "$log" ||
  failed_checks+=("tests (cargo test: the failed tests are listed below)")

# The API against its own OpenAPI document (schemathesis, bounded in examples).
step "the API contract: the server built without test features, then checked"
check "the API contract (scripts/contract.sh)" \
  bash -c 'cargo build --locked -p octopus-cli && ./scripts/contract.sh "${CARGO_TARGET_DIR:-target}/debug/octopus" 40'

# The book: built, its links and words checked, its examples run in order
# against a real server with `octopus` installed on the PATH.
step "the book: built, checked, its examples run"
check "the book (scripts/docs.sh)" ./scripts/docs.sh
steps_report

# One closing line for the whole run: cargo prints a result per test binary, and
# the last of those (doc tests) is often empty.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
if [ -z "${OCTOPUS_TEST_QDRANT_BIN:-}" ] && [ -n "${OCTOPUS_TEST_QDRANT_URL:-}" ]; then
  echo "NOT RUN: the Qdrant fault tests (they need a server binary of their own: OCTOPUS_TEST_QDRANT_BIN)"
fi
if [ -z "$aarch64_checked" ]; then
  echo "NOT RUN: the encoder's aarch64 lint (rustup could not install the aarch64-unknown-linux-gnu target)"
fi
if [ -z "${OCTOPUS_TEST_QDRANT_URL:-}" ]; then
  echo "NOT RUN: the Qdrant suite (no Qdrant server: set OCTOPUS_TEST_QDRANT_BIN to a qdrant binary, put one on PATH, or set OCTOPUS_TEST_QDRANT_URL)"
fi
# What failed, last, where it is seen: each failed check, and each failed
# test with the binary that ran it (cargo names it before its tests).
awk '/^ *Running / { file = $NF; gsub(/[()]/, "", file); sub(/.*\//, "", file); binary = $2 " (" file ")" }
     /^ *Doc-tests / { binary = "doc tests of " $2 }
     /^test .* \.\.\. FAILED$/ { name = $0; sub(/^test /, "", name); sub(/ \.\.\. FAILED$/, "", name)
                                   print "  FAILED  " name "  in " binary }' "$log" >"$log.failed"
if [ ${#failed_checks[@]} -gt 0 ] || [ -s "$log.failed" ]; then
  echo "failed:"
  for name in "${failed_checks[@]}"; do echo "  FAILED  $name"; done
  cat "$log.failed"
  rm -f "$log.failed"
  exit 1
fi
rm -f "$log.failed"
