# Sourced by test.sh: the clients the door tests run, installed once from the
# registries, pinned, and cached beside the build cache:
#   - in a virtualenv (OCTOPUS_TEST_CLIENTS_VENV): PyPI `mcp` and `openai`
#     (crates/octopus-cli/tests/clients/); what clients/python needs, builds
#     and is tested with; selenium, which drives the console's browser test;
#   - in a node_modules folder (OCTOPUS_TEST_NODE_MODULES): npm `openai`;
#     what clients/typescript is built and tested with;
#   - Debian's chromium and chromium-driver, for the console;
#   - Debian's wrk, the load the soak test drives the server with.
# openai 6.49.0 is the last npm release that runs on Node 20 and older
# (7.x asks for Node 22). selenium 4.51.0 is the newest whose certifi the
# registry has.

PYTHON_PINS="mcp==2.3.0 openai==3.57.0 httpx==0.28.1 pydantic==2.14.4 pytest==9.2.0 datamodel-code-generator==0.89.0 setuptools==80.9.0 selenium==4.51.0"
NPM_PINS="openai@6.49.0 typescript@5.9.3 openapi-typescript@7.13.0"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "Please install: $*" >&2; exit 1; }
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing $* with apt-get..." >&2
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "$@"
}

ensure_clients() {
  local cache="$HOME/.cache/octopus"
  local venv="${OCTOPUS_TEST_CLIENTS_VENV:-$cache/clients-venv}"
  local wanted="$PYTHON_PINS"
  if [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$wanted" ]; then
    echo "Installing the Python clients ($wanted) into $venv..." >&2
    rm -rf "$venv"
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
    # shellcheck disable=SC2086 # a list of requirements, split on purpose
    "$venv/bin/pip" install --quiet --disable-pip-version-check $wanted
    echo "$wanted" >"$venv/.pinned"
  fi
  command -v npm >/dev/null 2>&1 || apt_install nodejs npm
  local node_dir="$cache/clients-node"
  if [ "$(cat "$node_dir/.pinned" 2>/dev/null)" != "$NPM_PINS" ]; then
    echo "Installing $NPM_PINS into $node_dir..." >&2
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    # shellcheck disable=SC2086 # a list of packages, split on purpose
    (cd "$node_dir" && npm install --silent --no-audit --no-fund --no-save $NPM_PINS >/dev/null)
    echo "$NPM_PINS" >"$node_dir/.pinned"
  fi
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 ||
    apt_install chromium chromium-driver
  command -v wrk >/dev/null 2>&1 || apt_install wrk
  export OCTOPUS_TEST_CLIENTS_VENV="$venv"
  export OCTOPUS_TEST_NODE_MODULES="$node_dir/node_modules"
}
