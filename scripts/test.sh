#!/usr/bin/env bash
# Command 2: everything CI checks — formatting, lints, and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prerequisites.sh
ensure_prerequisites

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
