#!/usr/bin/env bash
# The tier run before a release, after `scripts/test.sh` (the tier CI runs)
# has passed: the suites too slow to run on every change, each of which a
# change could still break.
#   - the soak's minute: wrk's mixed load on the real server across twenty
#     tenants, imports and forgets beside it, a `kill -9` and a restart;
#   - the answer harness against a real small model (Gemma 3 270M run by
#     llama.cpp) as the answering model and the judge;
#   - the API contract's exploratory run: new random examples for MINUTES
#     (10 unless given), each seed printed, the failed ones listed;
#   - the programs the tests run that come compiled, on a CPU without
#     AVX-512 (scripts/cpu-baseline.sh);
#   - the lints of candle's BERT, the embedding bench's comparison row.
#
#   scripts/release-tier.sh [MINUTES]
#
# Like test.sh, a failing check does not stop the run; the run ends with
# each step's time and the list of what failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
explore_minutes="${1:-10}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

failed_checks=()
check() {
  local name="$1"
  shift
  "$@" || failed_checks+=("$name")
}
source scripts/prerequisites.sh
step "prerequisites: Rust, a C compiler, the embedding model"
ensure_prerequisites
source scripts/clients.sh
step "the clients the suites run (wrk, node-llama-cpp and its model)"
ensure_clients

step "the soak: a minute of mixed load with a kill"
check "the soak (octopus-cli: soak)" \
  cargo test --locked -p octopus-cli --features soak-tests --test it soak::
step "the answer harness on a real small model"
check "the answer harness (octopus-bench: a_real_small_model)" \
  cargo test --locked -p octopus-bench --features small-model-tests --test answers a_real_small_model
step "the API contract: new random examples for $explore_minutes min"
check "the contract's exploratory run (scripts/contract.sh --explore)" \
  bash -c "cargo build --locked -p octopus-cli && ./scripts/contract.sh --explore $explore_minutes \"\$CARGO_TARGET_DIR/debug/octopus\""
step "compiled programs on a CPU without AVX-512"
check "scripts/cpu-baseline.sh" ./scripts/cpu-baseline.sh
step "lints: the embedding bench with candle's BERT"
check "lints of the candle feature (cargo clippy)" \
  cargo clippy --locked -p octopus-bench --all-targets --features candle -- -D warnings
steps_report

if [ ${#failed_checks[@]} -gt 0 ]; then
  echo "failed:"
  for name in "${failed_checks[@]}"; do echo "  FAILED  $name"; done
  exit 1
fi
echo "the release tier passed"
