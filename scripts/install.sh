#!/usr/bin/env bash
# Installs the `octopus` binary from this checkout with `cargo install` (into
# ~/.cargo/bin, which rustup puts on PATH), after what it needs to build and
# run: Rust, a C compiler, and the embedding model.
#   scripts/install.sh                      a release build, for use
#   scripts/install.sh --debug --root DIR   what the test command installs into DIR/bin
# Other arguments go to `cargo install`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
source scripts/prerequisites.sh
step "prerequisites: Rust, a C compiler, the embedding model"
ensure_prerequisites
# Built where the checkout's other builds go (cargo install would otherwise
# build from nothing in a folder of its own every time).
step "the octopus binary: compiled and installed"
cargo install --locked --quiet --path crates/octopus-cli --force \
  --target-dir "${CARGO_TARGET_DIR:-$PWD/target}" "$@"
steps_report >&2
