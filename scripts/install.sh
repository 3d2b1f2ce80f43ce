#!/usr/bin/env bash
# Installs the `octopus` binary from this checkout with `cargo install` (into
# ~/.cargo/bin, which rustup puts on PATH), after what it needs to build and
# run: Rust, a C compiler, and the embedding model.
#   scripts/install.sh                      a release build, for use
#   scripts/install.sh --debug --root DIR   what the test command installs into DIR/bin
# Other arguments go to `cargo install`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prerequisites.sh
ensure_prerequisites
# With CARGO_TARGET_DIR set, cargo install builds there, so a build already
# made is reused.
cargo install --locked --quiet --path crates/octopus-cli --force "$@"
